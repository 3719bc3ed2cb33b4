//! The Redlock client as a pure state machine: no networking, no clock, no global randomness.
//!
//! This is the only place the algorithm lives. The simulator, the model checker and the Redis
//! driver all drive it; none of them re-implements quorum, validity or release.
//!
//! The algorithm, as redis.io and antirez's reference client give it:
//!
//! 1. read the client clock, `T1`, *before* the first request;
//! 2. send `SET key token NX PX ttl` to all `N` nodes (each answer, or the round deadline, ends
//!    the wait);
//! 3. read the clock again, `T2`; `validity = ttl − (T2 − T1) − drift`, with
//!    `drift = ttl · factor + 2 ms` by default;
//! 4. the lock is acquired iff at least `Q = N/2 + 1` nodes said yes and `validity > 0`; the
//!    holder may act until its clock reads `T1 + ttl − drift`;
//! 5. otherwise release on **all** `N` nodes (a timed-out `SET` may have landed) and retry
//!    after a random delay.
//!
//! Release is compare-and-delete on all nodes; extension is compare-and-pexpire, counted against
//! a majority of all `N`, and refused once the lease's own deadline has passed.
//!
//! [`QuorumRound`] and `ReleaseRound` are the rounds as plain values; `LockState` composes
//! them with retries, extension and release into a lock's whole life, as a `Copy` value with
//! pure transitions (the model checker keeps one per client in its state); [`Lock`] wraps it
//! with a random generator and the command and event queues a driver drains, and with the one
//! drain rule every driver follows ([`Next`], [`AcquireOutcome`]).

mod command;
mod config;
mod drive;
mod lock;
mod outcome;
mod round;
mod state;
#[cfg_attr(
    not(feature = "model"),
    allow(
        dead_code,
        reason = "the zone engine (feature `model`) reads most guards"
    )
)]
mod timing;

pub use command::{Command, MAX_NODES, NodeId, NodeSet, Op, Reply, RoundId, Token};
pub use config::{
    Config, ConfigError, Contact, DriftPolicy, ExtensionQuorum, FENCE_COUNTER_KEY, FailedRound,
    Fencing, LockParams, RetryPolicy, RetryToken, RoundDecision, UnlockMode, ValidityCheck, quorum,
    validate_resource,
};
pub use drive::Next;
pub use lock::Lock;
pub use outcome::{AcquireOutcome, Extension, Heard, Refusal};
pub use round::{Asking, Failure, Lease, NodeResult, QuorumRound, RoundKind, RoundOutcome, Tally};
pub use state::{Answer, LockEvent, UsageError};
#[cfg(feature = "model")]
pub(crate) use state::{Effects, Entropy, LockPhase, LockState, Request};
#[cfg(feature = "model")]
pub(crate) use timing::witness;
pub(crate) use timing::{Anchor, ClockGuard, Relation};
