//! Sweeps: one scenario checked once per value of one of its keys, and the boundary where a
//! verdict flips. The library behind `redlock-lab sweep` and `redlock-lab advise`.
//!
//! A [`Vary`] names a dotted key of the scenario file (`faults.clock_jumps.jump_ticks`) and
//! the values to give it. Each value is written into the file's TOML table and the result is
//! parsed again by [`Scenario::from_str`](crate::scenario::Scenario::from_str), so every variant passes the same validation as a
//! file on disk; a key the schema does not know is refused. Each variant is then checked by
//! [`Check`](crate::check::Check): a sweep never computes a verdict itself.
//!
//! ```
//! use redlock_lab::catalog;
//! use redlock_lab::scenario::Verdict;
//! use redlock_lab::sweep::{Sweep, Vary};
//!
//! let embedded = catalog::lookup("node-clock-jump-forward-past-drift").unwrap();
//! let vary: Vary = "faults.clock_jumps.jump_ticks=1..3".parse()?;
//! let sweep = Sweep::prepare(embedded.file, embedded.text, &vary)?.run();
//! // drift is 1: a jump of 1 is absorbed, a jump of 2 or 3 is not.
//! let flip = &sweep.boundaries()[0];
//! assert_eq!(flip.property, "mutual exclusion");
//! assert_eq!((flip.below.value.as_str(), flip.below.verdict), ("1", Verdict::Holds));
//! assert_eq!((flip.above.value.as_str(), flip.above.verdict), ("2", Verdict::Violated));
//! # Ok::<(), redlock_lab::sweep::SweepError>(())
//! ```

mod error;
mod formula;
mod search;
mod table;
#[cfg(test)]
mod tests;
mod vary;

pub use error::SweepError;
pub use formula::{
    Formula, formula, key_symbol, proved_figure, synthesize_keys, synthesize_written,
    written_number,
};
pub use search::{Search, search, search_guided};
pub use table::{Boundary, Point, Row, Sweep, SweepReport};
pub use vary::{MAX_VALUES, Vary, variant};
