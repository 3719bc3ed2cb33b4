//! How states are walked and limited, apart from the questions asked of them: the shell every
//! walk of a check runs under (its limits and progress), the crate's own parallel depth-first
//! engine over a table of fingerprints every thread shares, the stop switch that lets a watcher
//! halt stateright's checkers, and the memory readings the limits take.
//!
//! It knows stateright's [`Model`](stateright::Model) and nothing of the lock: `check` hands
//! it a model and the limits, and reads back what the walk found.

mod bounded;
mod dfs;
mod os_memory;
mod shell;
mod visited;

pub(crate) use bounded::{Bounded, MAX_PROPERTIES};
pub(crate) use dfs::DepthFirst;
pub use os_memory::available_bytes;
#[cfg(test)]
pub(crate) use os_memory::resident_bytes;
pub(crate) use shell::{Limit, Limits, Shell};
