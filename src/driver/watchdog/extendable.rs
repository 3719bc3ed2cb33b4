//! What the watchdog needs of a lock ([`Extendable`]), how one extension went
//! ([`ExtendOutcome`]), and why a watchdog gave a lock up ([`Loss`]).

use crate::proto::Failure;
use crate::time::Millis;

/// A held lock that a [`Watchdog`](super::Watchdog) can keep alive.
pub trait Extendable {
    /// What releasing the lock reports.
    type Released;

    /// Runs one extension round to its end (blocking) and says how it went.
    fn extend(&mut self) -> ExtendOutcome;

    /// The client-clock reading at which the lock must be considered lost.
    fn deadline(&self) -> Millis;

    /// The lock's time to live: the watchdog's period and retry interval are fractions of it.
    fn ttl(&self) -> Millis;

    /// Releases the lock. [`Watchdog::unlock`](super::Watchdog::unlock) calls it only after the watchdog thread has
    /// stopped for good.
    fn release(self) -> Self::Released;
}

/// How one extension round went, as the watchdog needs to know it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExtendOutcome {
    /// A majority applied it; [`Extendable::deadline`] has moved.
    Extended,
    /// No majority this time, but one is still possible (nodes failed or the round was slow):
    /// worth retrying while the deadline allows.
    Inconclusive {
        /// Why the round failed.
        failure: Failure,
    },
    /// No extension can ever succeed: too many nodes answered that our key is gone or not ours,
    /// or the deadline had passed.
    Refused {
        /// Why the round failed.
        failure: Failure,
    },
}

/// The lock was lost while the watchdog kept it: what the caller is told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loss {
    /// Why.
    pub reason: LossReason,
    /// The deadline of the last lease the watchdog knew of.
    pub deadline: Millis,
    /// The client-clock reading when the watchdog gave up.
    pub at: Millis,
}

/// Why the watchdog gave the lock up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LossReason {
    /// An extension was refused for good (see [`ExtendOutcome::Refused`]).
    Refused {
        /// The refused round's failure.
        failure: Failure,
    },
    /// The deadline passed before any extension won a majority.
    DeadlinePassed {
        /// Failed extension rounds since the last success.
        attempts: u32,
        /// The last of them, if any ran.
        last_failure: Option<Failure>,
    },
    /// The extender panicked; the watchdog thread is gone and the lock is in doubt.
    Panicked,
}
