//! Scenarios: the `models/*.toml` files, parsed and validated.
//!
//! A scenario names a claim from the Redlock controversy, teaches it in prose, configures the
//! model (nodes, clients, TTL, drift, the mistakes to make, the faults to allow) and states what
//! the literature expects of each property in `[expect]`. The expectation is only compared
//! against the checker's verdict; it never decides it. `models/README.md` documents every key,
//! its unit and its default.
//!
//! ```
//! use redlock_lab::scenario::{Scenario, Verdict};
//!
//! let scenario = Scenario::from_str("inline.toml", r#"
//!     name = "fault-free"
//!     title = "Three nodes, two clients, no faults"
//!     claim = "Redlock keeps mutual exclusion without faults"
//!     source = "redis.io"
//!     quote = "At any given moment, only one client can hold a lock."
//!     prose = "The control case."
//!     [lock]
//!     nodes = 3
//!     ttl_ticks = 4
//!     drift_ticks = 0
//!     [expect]
//!     "mutual exclusion" = "holds"
//! "#)?;
//! assert_eq!(scenario.lock.nodes(), 3);
//! assert_eq!(scenario.expect[0], ("mutual exclusion".to_owned(), Verdict::Holds));
//! # Ok::<(), redlock_lab::scenario::ScenarioError>(())
//! ```

mod duration;
mod error;
mod granted;
mod ingredient;
mod patch;
/// Property names, as `[expect]`, the CLI and the JSON report spell them: `&str` constants
/// for code that works with names (reports also carry user invariants, which have only a
/// name). Each is the name of a [`Property`](crate::property::Property), where the names are
/// defined.
pub mod property;
mod quote;
mod raw;
mod resize;
mod resolution;
mod settings;
#[cfg(test)]
mod tests;
mod validate;

pub use duration::{DriftText, DurationError, drift_text, parse_duration};
pub use error::{Location, ScenarioError};
pub use ingredient::{Ingredient, Mistake};
pub(crate) use patch::set_key;
pub use patch::{KeyPathError, PatchError, patched};
pub use quote::{QuoteError, find_quote, normalise};
pub use resize::ResizeError;
pub use settings::*;
