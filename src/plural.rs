//! Counts in words, with the noun in the number the count takes: `1 node`, `3 nodes`.

use std::fmt::Display;

/// `n` and `one` when `n` is one, `n` and `many` otherwise: `count(1, "property", "properties")`
/// is `1 property`, `count(0, "run", "runs")` is `0 runs`.
pub fn count<N: Display + PartialEq + From<u8>>(n: N, one: &str, many: &str) -> String {
    let noun = if n == N::from(1) { one } else { many };
    format!("{n} {noun}")
}

#[cfg(test)]
mod tests {
    use super::count;

    #[test]
    fn counts_of_one_are_singular() {
        assert_eq!(count(1_u64, "run", "runs"), "1 run");
        assert_eq!(count(0_usize, "run", "runs"), "0 runs");
        assert_eq!(
            count(2_000_u32, "property", "properties"),
            "2000 properties"
        );
    }
}
