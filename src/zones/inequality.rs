//! Linear inequalities over whole-number parameters, and the one question a synthesised
//! boundary needs of them: is one implied by others?
//!
//! Implication is decided by Fourier–Motzkin elimination in `i128`, each row divided by the
//! gcd of its coefficients with its bound rounded down, which keeps every whole-number
//! solution (and may drop rational ones). A system the elimination shows empty has no whole
//! solution, so "implied" is never claimed wrongly; the converse may miss an implication that
//! only whole numbers make (then a redundant inequality is kept, never a needed one dropped).

use std::fmt;

/// `coefficients · p ≤ bound`, over whole-number `p`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Inequality {
    /// One coefficient per parameter.
    pub coefficients: Vec<i64>,
    /// The right-hand side.
    pub bound: i64,
}

/// Past this many rows an elimination gives up (and nothing is claimed implied).
const MAX_ROWS: usize = 4_000;

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 { a.abs() } else { gcd(b, a % b) }
}

impl Inequality {
    /// The same inequality with its coefficients divided by their gcd and the bound rounded
    /// down (exact on whole numbers).
    pub fn normalized(mut self) -> Inequality {
        let g = self
            .coefficients
            .iter()
            .fold(0i128, |g, &a| gcd(g, i128::from(a)));
        if g > 1 {
            let g = i64::try_from(g).expect("a gcd of i64 values fits");
            self.coefficients.iter_mut().for_each(|a| *a /= g);
            self.bound = self.bound.div_euclid(g);
        }
        self
    }

    /// The whole-number complement: `coefficients · p ≥ bound + 1`.
    pub fn negated(&self) -> Inequality {
        Inequality {
            coefficients: self.coefficients.iter().map(|a| -a).collect(),
            bound: -self.bound - 1,
        }
    }

    /// Whether no parameter appears (then it is always true or always false).
    pub fn is_constant(&self) -> bool {
        self.coefficients.iter().all(|&a| a == 0)
    }

    /// Whether it holds at `point`.
    pub fn holds_at(&self, point: &[i64]) -> bool {
        let sum: i64 = self
            .coefficients
            .iter()
            .zip(point)
            .map(|(a, p)| a * p)
            .sum();
        sum <= self.bound
    }

    /// Written as parameter `k` alone against the rest (`drift ≥ ε_n + ε_c`, `R ≥ 10 −
    /// drift + ε_n`), when its coefficient is ±1.
    pub fn solved_for(&self, names: &[String], k: usize) -> Option<String> {
        let a = *self.coefficients.get(k)?;
        if a.abs() != 1 {
            return None;
        }
        // a = 1: p_k ≤ bound − rest; a = −1: p_k ≥ rest − bound.
        let terms: Vec<(i64, &str)> = self
            .coefficients
            .iter()
            .zip(names)
            .enumerate()
            .filter(|&(i, (c, _))| i != k && *c != 0)
            .map(|(_, (c, n))| (-a * c, n.as_str()))
            .collect();
        let constant = a * self.bound;
        // Whole numbers: `≤ e − 1` is `< e`, `≥ e + 1` is `> e`.
        let (op, constant) = match (a, constant) {
            (1, -1) if !terms.is_empty() => ("<", 0),
            (1, c) => ("≤", c),
            (_, 1) if !terms.is_empty() => (">", 0),
            (_, c) => ("≥", c),
        };
        Some(format!("{} {op} {}", names[k], signed(&terms, constant)))
    }

    /// Written with `names` for the parameters, the side with fewer terms first.
    pub fn display<'a>(&'a self, names: &'a [String]) -> impl fmt::Display + 'a {
        Written {
            inequality: self,
            names,
        }
    }
}

/// A row `a · p ≤ b` over the rationals, scaled to whole numbers.
type Row = (Vec<i128>, i128);

fn rows_of(system: &[Inequality]) -> Vec<Row> {
    system
        .iter()
        .map(|i| {
            let a = i.coefficients.iter().map(|&a| i128::from(a)).collect();
            (a, i128::from(i.bound))
        })
        .collect()
}

/// The rows without variable `k`: each upper bound on it combined with each lower bound
/// (Fourier–Motzkin), the others kept; `None` when that grows past [`MAX_ROWS`].
fn eliminate(rows: Vec<Row>, k: usize) -> Option<Vec<Row>> {
    let (mut keep, mut upper, mut lower) = (Vec::new(), Vec::new(), Vec::new());
    for row in rows {
        match row.0[k].signum() {
            0 => keep.push(row),
            1 => upper.push(row),
            _ => lower.push(row),
        }
    }
    for (ua, ub) in &upper {
        for (la, lb) in &lower {
            // Scale both so `x_k` cancels: |l_k|·u + u_k·l.
            let (su, sl) = (-la[k], ua[k]);
            let a: Vec<i128> = ua.iter().zip(la).map(|(u, l)| su * u + sl * l).collect();
            let b = su * ub + sl * lb;
            let g = a.iter().fold(0, |g, &x| gcd(g, x));
            keep.push(if g > 1 {
                (a.iter().map(|x| x / g).collect(), b.div_euclid(g))
            } else {
                (a, b)
            });
        }
    }
    keep.sort();
    keep.dedup();
    (keep.len() <= MAX_ROWS).then_some(keep)
}

/// Whether `system` has no rational solution (`None`: the elimination grew too large).
fn infeasible(system: &[Inequality]) -> Option<bool> {
    let vars = system.first().map_or(0, |i| i.coefficients.len());
    let mut rows = rows_of(system);
    for k in 0..vars {
        rows = eliminate(rows, k)?;
    }
    Some(rows.iter().any(|(_, b)| *b < 0))
}

/// Whether `given` implies `claim` on every whole-number point (`false` when unsure).
pub(super) fn implies(given: &[Inequality], claim: &Inequality) -> bool {
    let mut system = given.to_vec();
    system.push(claim.negated());
    infeasible(&system) == Some(true)
}

/// Whether `system` has no whole-number solution that the rationals would not also lack
/// (`false` when unsure).
pub(super) fn contradicts(system: &[Inequality]) -> bool {
    infeasible(system) == Some(true)
}

/// `system` within `domain`, without what the domain implies; `None` when no value in the
/// domain meets it.
pub(crate) fn within_domain(
    system: Vec<Inequality>,
    domain: &[Inequality],
) -> Option<Vec<Inequality>> {
    let all: Vec<Inequality> = system.iter().chain(domain).cloned().collect();
    if contradicts(&all) {
        return None;
    }
    Some(simplified(system, domain))
}

/// `system` without every inequality the others and `domain` imply, in order.
pub(super) fn simplified(system: Vec<Inequality>, domain: &[Inequality]) -> Vec<Inequality> {
    let mut kept: Vec<Inequality> = Vec::new();
    let mut rest = system;
    rest.sort_by_key(|i| i.coefficients.iter().filter(|&&a| a != 0).count());
    rest.dedup();
    while let Some(candidate) = rest.pop() {
        let others: Vec<Inequality> = kept.iter().chain(&rest).chain(domain).cloned().collect();
        if !implies(&others, &candidate) {
            kept.push(candidate);
        }
    }
    kept.reverse();
    kept
}

/// `10 − drift + ε_n`: the constant first, then each term with its sign.
fn signed(terms: &[(i64, &str)], constant: i64) -> String {
    let mut out = if constant != 0 || terms.is_empty() {
        constant.to_string()
    } else {
        String::new()
    };
    for &(a, name) in terms {
        let magnitude = if a.abs() == 1 {
            name.to_owned()
        } else {
            format!("{}·{name}", a.abs())
        };
        match (out.is_empty(), a > 0) {
            (true, true) => out.push_str(&magnitude),
            (true, false) => out.push_str(&format!("−{magnitude}")),
            (false, true) => out.push_str(&format!(" + {magnitude}")),
            (false, false) => out.push_str(&format!(" − {magnitude}")),
        }
    }
    out
}

struct Written<'a> {
    inequality: &'a Inequality,
    names: &'a [String],
}

/// `a + 2·b`, or `0` for no terms.
fn side(terms: &[(i64, &str)], constant: i64) -> String {
    let mut out = String::new();
    for (a, name) in terms {
        if !out.is_empty() {
            out.push_str(" + ");
        }
        if *a != 1 {
            out.push_str(&format!("{a}·"));
        }
        out.push_str(name);
    }
    match (out.is_empty(), constant) {
        (true, c) => c.to_string(),
        (false, 0) => out,
        (false, c) if c > 0 => format!("{out} + {c}"),
        (false, c) => format!("{out} − {}", -c),
    }
}

impl fmt::Display for Written<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = self.inequality;
        let named = |sign: i64| -> Vec<(i64, &str)> {
            i.coefficients
                .iter()
                .zip(self.names)
                .filter(|(a, _)| a.signum() == sign)
                .map(|(a, n)| (a.abs(), n.as_str()))
                .collect()
        };
        // `pos ≤ neg + bound`; whole numbers make `≤ … − 1` a strict `<`. The side with
        // fewer terms goes first; on a tie, the one with the first parameter.
        let (pos, neg) = (named(1), named(-1));
        let first_negative = i
            .coefficients
            .iter()
            .find(|&&a| a != 0)
            .is_some_and(|&a| a < 0);
        let strict = i.bound == -1;
        let neg_first = !neg.is_empty()
            && (neg.len() < pos.len() || (neg.len() == pos.len() && first_negative));
        if neg_first {
            // `neg ≥ pos − bound`.
            let (op, c) = if strict { (">", 0) } else { ("≥", -i.bound) };
            write!(f, "{} {op} {}", side(&neg, 0), side(&pos, c))
        } else {
            let (op, c) = if strict { ("<", 0) } else { ("≤", i.bound) };
            write!(f, "{} {op} {}", side(&pos, 0), side(&neg, c))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ineq(coefficients: &[i64], bound: i64) -> Inequality {
        Inequality {
            coefficients: coefficients.to_vec(),
            bound,
        }
    }

    #[test]
    fn a_sum_of_two_bounds_implies_their_total() {
        // x ≤ 2, y ≤ 3 ⇒ x + y ≤ 5, and not x + y ≤ 4.
        let given = [ineq(&[1, 0], 2), ineq(&[0, 1], 3)];
        assert!(implies(&given, &ineq(&[1, 1], 5)));
        assert!(!implies(&given, &ineq(&[1, 1], 4)));
    }

    #[test]
    fn simplification_drops_what_the_rest_implies() {
        let domain = [ineq(&[-1, 0], 0), ineq(&[0, -1], 0)];
        let kept = simplified(
            vec![ineq(&[1, -1], -1), ineq(&[1, 0], 10), ineq(&[1, -1], 0)],
            &domain,
        );
        assert_eq!(kept, [ineq(&[1, 0], 10), ineq(&[1, -1], -1)]);
    }

    #[test]
    fn inequalities_read_with_the_shorter_side_first() {
        let names = ["drift".to_owned(), "ε_n".to_owned(), "ε_c".to_owned()];
        // drift − ε_n − ε_c ≤ −1: drift < ε_n + ε_c.
        let broken = ineq(&[1, -1, -1], -1);
        assert_eq!(broken.display(&names).to_string(), "drift < ε_n + ε_c");
        assert_eq!(
            broken.negated().display(&names).to_string(),
            "drift ≥ ε_n + ε_c"
        );
        assert_eq!(
            ineq(&[-1, 1, 0], 4).display(&names).to_string(),
            "drift ≥ ε_n − 4"
        );
    }

    #[test]
    fn an_inequality_solves_for_one_parameter() {
        let names = ["drift".to_owned(), "ε_n".to_owned(), "R".to_owned()];
        // drift + R ≤ ε_n + 9, negated: drift + R ≥ ε_n + 10, i.e. R ≥ 10 − drift + ε_n.
        let broken = ineq(&[1, -1, 1], 9);
        assert_eq!(
            broken.negated().solved_for(&names, 2).unwrap(),
            "R ≥ 10 − drift + ε_n"
        );
        assert_eq!(broken.solved_for(&names, 2).unwrap(), "R ≤ 9 − drift + ε_n");
        assert_eq!(
            ineq(&[-1, 1, 0], 0).solved_for(&names, 0).unwrap(),
            "drift ≥ ε_n"
        );
        assert_eq!(
            ineq(&[1, -1, 0], -1).solved_for(&names, 0).unwrap(),
            "drift < ε_n"
        );
        assert_eq!(ineq(&[2, -1, 0], 0).solved_for(&names, 0), None);
    }

    #[test]
    fn normalizing_rounds_the_bound_down() {
        assert_eq!(ineq(&[2, -4], 5).normalized(), ineq(&[1, -2], 2));
        assert_eq!(ineq(&[2, -4], -5).normalized(), ineq(&[1, -2], -3));
    }
}
