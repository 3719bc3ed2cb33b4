//! Run the checker on a scenario and get verdicts: the API behind `redlock-lab check` and the
//! one to call from your own `cargo test`.
//!
//! ```
//! use redlock_lab::check::{Check, Invariant};
//! use redlock_lab::scenario::{Scenario, Verdict};
//!
//! let scenario = Scenario::from_str("jump.toml", r#"
//!     name = "node-jump"
//!     title = "A node's clock jumps forward past the drift allowance"
//!     claim = "Redlock is unsafe when a node's clock jumps"
//!     source = "Kleppmann"
//!     quote = "The clock on node C jumps forward, causing the lock to expire."
//!     prose = "n2 jumps +2 with drift 1."
//!     [lock]
//!     nodes = 3
//!     ttl_ticks = 4
//!     drift_ticks = 1
//!     [faults.clock_jumps]
//!     target = "node"
//!     jump_ticks = 2
//!     [expect]
//!     "mutual exclusion" = "violated"
//! "#)?;
//! let report = Check::new(&scenario)
//!     // Your own invariant over a read-only view of the state.
//!     .invariant(Invariant::new("at most one holder", |world| {
//!         world.clients().filter(|c| c.believes).count() <= 1
//!     }))
//!     .run();
//! assert!(report.matches_expectations());
//! let mutex = report.property("mutual exclusion").unwrap();
//! assert_eq!(mutex.verdict, Verdict::Violated);
//! let steps = mutex.counterexample.as_ref().unwrap();
//! assert!(steps.iter().any(|s| s.contains("clock jumps +2")));
//! assert_eq!(report.property("at most one holder").unwrap().verdict, Verdict::Violated);
//! # Ok::<(), redlock_lab::scenario::ScenarioError>(())
//! ```

mod engine;
mod lemmas;
mod options;
pub mod reach;
mod report;
mod run;
mod story_path;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod truth;
mod zone_path;
mod zoned;

pub use crate::model::Invariant;
pub use crate::search::available_bytes;
pub use crate::zones::{FreeKey, Inequality, Synthesis, SynthesisError, Unsupported};
pub use engine::{DISCRETE_TICKS, Engine, largest_constant};
pub use options::{Check, DEFAULT_PROBE_STATES, Progress, ProgressFn, Strategy, available_threads};
pub use report::{PropertyReport, Report, StopReason};
pub use story_path::{StoryPath, default_property, reported_story_path, story, story_path};
