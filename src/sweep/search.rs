//! The smallest value of a key where a verdict turns, by binary search on the checker.

use crate::check::Report;

/// Where a monotone verdict flips in an integer range, found by [`search`] and checked on
/// both sides.
#[derive(Clone, Debug, PartialEq)]
pub enum Search {
    /// `first` is the smallest value in the range with the wanted verdict; `first − 1`, which
    /// lies in the range, does not have it. Both reports are the checker's.
    Boundary {
        /// The smallest value with the wanted verdict.
        first: i64,
        /// Its report.
        at: Box<Report>,
        /// The report of `first − 1`.
        before: Box<Report>,
    },
    /// The range's first value already has it (nothing below was searched).
    AtStart {
        /// Its report.
        at: Box<Report>,
    },
    /// Not even the range's last value has it.
    Nowhere {
        /// The last value's report.
        last: Box<Report>,
    },
}

/// Binary search over `from..=to` for the smallest value whose report satisfies `wanted`,
/// assuming `wanted` is monotone (false, then true, as the value grows). Every probe runs the
/// checker through `check`; the answer's two sides are both checked, so a non-monotone
/// `wanted` cannot yield a boundary the checker did not show. The first error `check` returns
/// ends the search (a caller may stop it so, at a deadline of its own).
pub fn search<E>(
    from: i64,
    to: i64,
    mut check: impl FnMut(i64) -> Result<Report, E>,
    wanted: impl Fn(&Report) -> bool,
) -> Result<Search, E> {
    assert!(from <= to, "search over an empty range");
    let last = check(to)?;
    if !wanted(&last) {
        return Ok(Search::Nowhere {
            last: Box::new(last),
        });
    }
    if from == to {
        return Ok(Search::AtStart { at: Box::new(last) });
    }
    let first = check(from)?;
    if wanted(&first) {
        return Ok(Search::AtStart {
            at: Box::new(first),
        });
    }
    // Invariant: `low` lacks it, `high` has it.
    let (mut low, mut low_report, mut high, mut high_report) = (from, first, to, last);
    while high - low > 1 {
        let middle = low + (high - low) / 2;
        let report = check(middle)?;
        if wanted(&report) {
            (high, high_report) = (middle, report);
        } else {
            (low, low_report) = (middle, report);
        }
    }
    Ok(Search::Boundary {
        first: high,
        at: Box::new(high_report),
        before: Box::new(low_report),
    })
}

/// [`search`], first asking the checker about `guess` (a figure read off a symbolic
/// exploration): when `guess` has the wanted verdict and `guess − 1` (in the range) lacks it,
/// that is the boundary, in two checks; otherwise the binary search runs. The flag says
/// whether the guess was confirmed.
pub fn search_guided<E>(
    (from, to): (i64, i64),
    guess: Option<i64>,
    mut check: impl FnMut(i64) -> Result<Report, E>,
    wanted: impl Fn(&Report) -> bool,
) -> Result<(Search, bool), E> {
    if let Some(guess) = guess.filter(|g| (from..=to).contains(g)) {
        let at = Box::new(check(guess)?);
        if wanted(&at) {
            if guess == from {
                return Ok((Search::AtStart { at }, true));
            }
            let before = Box::new(check(guess - 1)?);
            if !wanted(&before) {
                let first = guess;
                return Ok((Search::Boundary { first, at, before }, true));
            }
        }
    }
    Ok((search(from, to, check, wanted)?, false))
}
