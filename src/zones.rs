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
//! key on the node's clock, or the time since a crash that lost the key while the node waits
//! out its restart delay). Every timing decision is one of the core's guards
//! ([`crate::proto::Guard`], [`crate::node::NodeState::restart_delay_guard`]) turned into a
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
//! the same factor (a test checks ×2, ×3, ×10): the zones see ratios, not units. Extra⁺_LU
//! stays sound with forward clock jumps, since the LU simulation relates valuations clock by
//! clock (`v' = v`, or `L < v' < v`, or `U < v < v'`), and adding the same `J ≥ 0` to both
//! keeps each of these.

mod clock_guard;
mod config;
mod dbm;
mod explore;
mod state;
mod successors;
mod symmetry;

pub use config::{MAX_CLIENTS, MAX_NODES, Unsupported, ZoneConfig};
pub use explore::{Options, Outcome, explore};
pub use successors::ZoneStep;
