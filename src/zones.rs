//! Symbolic time: the lock as a timed automaton, explored with **zones** (difference-bound
//! matrices) instead of discrete ticks, so the number of states does not grow with the
//! timing constants.
//!
//! The discrete checker ([`crate::check`]) stores one state per clock reading, and its state
//! count grows with the TTL roughly as `ttl³`–`ttl⁴`. A zone stores a convex set of clock
//! valuations; with Extra⁺_LU extrapolation (Behrmann, Bouyer, Larsen and Pelánek 2006) and
//! the LU-simulation test (Herbreteau, Srivathsan and Walukiewicz 2012) the zone graph is
//! finite and, from some size of the constants on, does not change at all: a TTL of 10 s in
//! milliseconds costs what a TTL of 8 ticks costs.
//!
//! The automaton ([`ZoneConfig`] for what it reads and refuses, `successors` for its steps)
//! has one clock per client (time since its T1, on its clock) and one per node (the age of its
//! key on the node's clock); with storage, one more per client (the age of its pending op, in
//! true time, bounded by an invariant: the op's delay, stretched by a pause), and with a
//! restart delay or the restarted-node guard one more per crash in the budget (the time since
//! the crashed node's restart, on its clock). Every timing decision is one of the core's guards ([`crate::proto::ClockGuard`],
//! [`crate::node::NodeState::restart_delay_guard`] and `restart_young_guard`) turned into a
//! clock constraint: the engine holds no copy of the lock's arithmetic.
//!
//! # Why its verdicts are the discrete checker's
//!
//! Every constraint is non-strict with an integer constant (a discrete test `span < k` is
//! `span ≤ k − 1`, the same on whole ticks), and clock errors and jumps move constants by
//! whole ticks, so the automaton is *closed*. By digitization (Henzinger, Manna and Pnueli
//! 1992) a closed timed automaton reaches a location with some real-valued run iff it
//! reaches it with a run whose steps all happen at integer times: exactly the runs of the
//! discrete-time model. So on every scenario both engines accept, the verdicts are equal
//! (a test checks it on the catalog), and they are invariant under scaling every constant by
//! the same factor (a test checks ×2, ×3, ×10): the zones see ratios, not units. Invariants
//! (a pending op's wait) are non-strict with integer constants too, and a holder between two
//! ops is urgent (no time passes), which keeps the automaton closed.
//!
//! Extra⁺_LU stays sound with forward clock jumps, since the LU simulation relates valuations
//! clock by clock (`v' = v`, or `L < v' < v`, or `U < v < v'`), and adding the same `J ≥ 0` to
//! both keeps each of these. A backward jump `x := x − J` turns a later guard `x ≤ c` into `x ≤
//! c + J` on the clock before it, so while `k` backward jumps are left every constant of a
//! client's clock is raised by `k·J`; and a clock stepped below zero keeps its (negative) lower
//! bound through extrapolation, since values below every constant are only ever simulated by
//! themselves. A node's clock may not step back: the node deleted a key on expiry, and a key
//! clock stepped back would bring it to life again.

// The items `testing` re-exports for the integration tests are public only in that build;
// without it they are crate-internal, and the all-features build is where the lint speaks.
#![cfg_attr(not(feature = "testing"), allow(unreachable_pub))]

mod automaton;
mod client;
mod clock_guard;
mod constants;
mod constraints;
mod dbm;
mod discrete;
mod explore;
mod inequality;
mod measure;
mod parameters;
mod parametric;
mod successors;
mod symmetry;
mod synthesis;
mod timed_run;
mod zone;

#[cfg(feature = "testing")]
pub use automaton::StorageConfig;
pub use automaton::{Unsupported, ZoneConfig};
#[cfg(feature = "testing")]
pub use explore::Judgement;
#[cfg(feature = "testing")]
pub use explore::explore;
pub(crate) use explore::explore_watched;
pub use explore::{Options, ZoneOutcome};
pub use inequality::Inequality;
pub use successors::ZoneStep;
pub(crate) use synthesis::synthesize;
pub use synthesis::{FreeKey, Synthesis, SynthesisError};
pub use timed_run::TimedRun;
#[cfg(feature = "testing")]
pub use timed_run::TimedStep;
