//! When the watchdog extends, retries and gives up: pure arithmetic on client-clock readings,
//! no thread and no clock, so every rule is unit-tested on its own.

use std::fmt;

use thiserror::Error;

use super::{ExtendOutcome, Loss, LossReason};
use crate::proto::Failure;
use crate::time::Millis;

/// A watchdog setting that cannot work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum WatchdogError {
    /// A fraction of the TTL must lie strictly between 0 and 1: a period of zero would extend
    /// in a busy loop, one of a whole TTL would extend only after the deadline.
    #[error("a watchdog fraction must lie strictly between 0 and 1, got {numerator}/{denominator}")]
    FractionOutOfRange {
        /// The numerator given.
        numerator: u32,
        /// The denominator given.
        denominator: u32,
    },
}

/// A fraction of the TTL, strictly between 0 and 1.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fraction {
    numerator: u32,
    denominator: u32,
}

impl Fraction {
    /// One third: Redisson's renewal period (`lockWatchdogTimeout / 3`).
    pub const THIRD: Fraction = Fraction {
        numerator: 1,
        denominator: 3,
    };

    /// One tenth.
    pub const TENTH: Fraction = Fraction {
        numerator: 1,
        denominator: 10,
    };

    /// `numerator / denominator`, refused unless `0 < numerator < denominator`.
    pub const fn new(numerator: u32, denominator: u32) -> Result<Fraction, WatchdogError> {
        if numerator == 0 || numerator >= denominator {
            return Err(WatchdogError::FractionOutOfRange {
                numerator,
                denominator,
            });
        }
        Ok(Fraction {
            numerator,
            denominator,
        })
    }

    /// This fraction of `span`, rounded down but never below 1 ms, so a watchdog never spins.
    pub fn of(self, span: Millis) -> Millis {
        let part =
            u128::from(span.as_u64()) * u128::from(self.numerator) / u128::from(self.denominator);
        // `part < span <= u64::MAX` because the fraction is below 1.
        Millis(u64::try_from(part).unwrap_or(u64::MAX).max(1))
    }
}

impl fmt::Debug for Fraction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.numerator, self.denominator)
    }
}

/// The callback that hears about a loss.
pub(super) type OnLost = Box<dyn FnOnce(Loss) + Send>;

/// How a [`Watchdog`](super::Watchdog) paces itself, and whom it tells about a loss.
pub struct WatchdogConfig {
    period: Fraction,
    retry: Fraction,
    on_lost: Option<OnLost>,
}

impl WatchdogConfig {
    /// Extend every third of the TTL; after an inconclusive round, retry every tenth of it
    /// until the deadline; no callback.
    pub fn new() -> WatchdogConfig {
        WatchdogConfig {
            period: Fraction::THIRD,
            retry: Fraction::TENTH,
            on_lost: None,
        }
    }

    /// Extend this fraction of the TTL after the last successful extension began. Keep it well
    /// below 1: one round trip plus the drift allowance must fit before the deadline.
    pub fn period(mut self, period: Fraction) -> WatchdogConfig {
        self.period = period;
        self
    }

    /// After an inconclusive extension, retry this fraction of the TTL later (the retries stop
    /// at the deadline).
    pub fn retry(mut self, retry: Fraction) -> WatchdogConfig {
        self.retry = retry;
        self
    }

    /// Runs `on_lost` once, on the watchdog thread, when the lock is lost. It must not wait
    /// for the watchdog itself (it runs before the thread exits). Sending into a channel is the
    /// usual choice.
    pub fn on_lost(mut self, on_lost: impl FnOnce(Loss) + Send + 'static) -> WatchdogConfig {
        self.on_lost = Some(Box::new(on_lost));
        self
    }

    /// The period and retry interval in milliseconds for a lock of `ttl`.
    pub(super) fn schedule(&self, ttl: Millis) -> Schedule {
        Schedule {
            period: self.period.of(ttl),
            retry: self.retry.of(ttl),
            ttl,
        }
    }

    pub(super) fn into_on_lost(self) -> Option<OnLost> {
        self.on_lost
    }
}

impl Default for WatchdogConfig {
    fn default() -> Self {
        WatchdogConfig::new()
    }
}

impl fmt::Debug for WatchdogConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WatchdogConfig")
            .field("period", &self.period)
            .field("retry", &self.retry)
            .field("on_lost", &self.on_lost.is_some())
            .finish()
    }
}

/// The resolved pacing of one watchdog.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Schedule {
    period: Millis,
    retry: Millis,
    ttl: Millis,
}

/// Where one watchdog stands between two wake-ups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Progress {
    /// When the next extension round is due.
    due: Millis,
    /// Failed rounds since the last success.
    failures: u32,
    last_failure: Option<Failure>,
}

/// What the watchdog must do at a given clock reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Next {
    /// Nothing before `until`.
    Wait { until: Millis },
    /// Run an extension round now.
    Extend,
    /// Give up.
    Lost(LossReason),
}

impl Schedule {
    /// The progress of a watchdog that starts watching a lease with this `deadline`. The lease
    /// began at about `deadline + drift − ttl`, so its first extension is due one period later;
    /// a lease taken long ago is extended at once.
    pub(super) fn start(&self, deadline: Millis) -> Progress {
        Progress {
            due: deadline.saturating_sub(self.ttl - self.period),
            failures: 0,
            last_failure: None,
        }
    }

    /// What to do when the clock reads `now` and the lease's deadline is `deadline`.
    pub(super) fn next(&self, progress: &Progress, deadline: Millis, now: Millis) -> Next {
        if now >= deadline {
            Next::Lost(LossReason::DeadlinePassed {
                attempts: progress.failures,
                last_failure: progress.last_failure,
            })
        } else if now >= progress.due {
            Next::Extend
        } else {
            // Wake at the deadline at the latest: the loss is reported then, not at the next
            // (too late) retry.
            Next::Wait {
                until: progress.due.min(deadline),
            }
        }
    }

    /// Records a round that began at `started` and ended at `finished`; a loss if it was
    /// refused for good.
    pub(super) fn record(
        &self,
        progress: &mut Progress,
        outcome: ExtendOutcome,
        started: Millis,
        finished: Millis,
    ) -> Option<LossReason> {
        match outcome {
            ExtendOutcome::Extended => {
                // Anchored on the round's start, like the lease's own validity, and never on
                // the deadline: a drift allowance larger than the period cannot make the next
                // round due at once.
                *progress = Progress {
                    due: started + self.period,
                    failures: 0,
                    last_failure: None,
                };
                None
            }
            ExtendOutcome::Inconclusive { failure } => {
                progress.failures = progress.failures.saturating_add(1);
                progress.last_failure = Some(failure);
                progress.due = finished + self.retry;
                None
            }
            ExtendOutcome::Refused { failure } => Some(LossReason::Refused { failure }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schedule() -> Schedule {
        // TTL 3 000: period 1 000, retry 300.
        WatchdogConfig::new().schedule(Millis(3_000))
    }

    const NO_QUORUM: Failure = Failure::NoQuorum {
        applied: 1,
        quorum: 2,
    };

    #[test]
    fn fractions_must_lie_strictly_between_zero_and_one() {
        for (n, d) in [(0, 3), (3, 3), (4, 3), (1, 0), (0, 0)] {
            assert_eq!(
                Fraction::new(n, d),
                Err(WatchdogError::FractionOutOfRange {
                    numerator: n,
                    denominator: d
                })
            );
        }
        assert_eq!(Fraction::new(2, 3).map(|f| f.of(Millis(9))), Ok(Millis(6)));
        assert_eq!(
            WatchdogError::FractionOutOfRange {
                numerator: 3,
                denominator: 3
            }
            .to_string(),
            "a watchdog fraction must lie strictly between 0 and 1, got 3/3"
        );
    }

    #[test]
    fn a_fraction_is_never_below_one_millisecond_nor_overflows() {
        assert_eq!(Fraction::THIRD.of(Millis(1)), Millis(1));
        assert_eq!(Fraction::THIRD.of(Millis(0)), Millis(1));
        assert_eq!(Fraction::THIRD.of(Millis(u64::MAX)), Millis(u64::MAX / 3));
    }

    #[test]
    fn the_first_extension_is_due_one_period_after_the_lease_began() {
        let s = schedule();
        // Deadline 2 968 = T1 0 + ttl 3 000 − drift 32.
        let progress = s.start(Millis(2_968));
        assert_eq!(
            s.next(&progress, Millis(2_968), Millis(0)),
            Next::Wait { until: Millis(968) }
        );
        assert_eq!(s.next(&progress, Millis(2_968), Millis(968)), Next::Extend);
    }

    #[test]
    fn a_success_is_followed_one_period_after_it_began() {
        let s = schedule();
        let mut progress = s.start(Millis(2_968));
        let lost = s.record(
            &mut progress,
            ExtendOutcome::Extended,
            Millis(1_000),
            Millis(1_040),
        );
        assert_eq!(lost, None);
        assert_eq!(
            s.next(&progress, Millis(3_968), Millis(1_040)),
            Next::Wait {
                until: Millis(2_000)
            }
        );
    }

    #[test]
    fn a_drift_larger_than_the_period_does_not_spin() {
        // Period 1 ms, deadline far below T1 + ttl: the next round still waits a period.
        let s = WatchdogConfig::new()
            .period(Fraction::new(1, 3_000).unwrap())
            .schedule(Millis(3_000));
        let mut progress = s.start(Millis(1_000));
        s.record(
            &mut progress,
            ExtendOutcome::Extended,
            Millis(10),
            Millis(10),
        );
        assert_eq!(
            s.next(&progress, Millis(1_010), Millis(10)),
            Next::Wait { until: Millis(11) }
        );
    }

    #[test]
    fn inconclusive_rounds_are_retried_until_the_deadline_then_lost() {
        let s = schedule();
        let mut progress = s.start(Millis(2_968));
        let outcome = ExtendOutcome::Inconclusive { failure: NO_QUORUM };
        assert_eq!(
            s.record(&mut progress, outcome, Millis(2_500), Millis(2_510)),
            None
        );
        assert_eq!(
            s.next(&progress, Millis(2_968), Millis(2_510)),
            Next::Wait {
                until: Millis(2_810)
            }
        );
        assert_eq!(
            s.record(&mut progress, outcome, Millis(2_810), Millis(2_820)),
            None
        );
        // The next retry (3 120) would come after the deadline: wake at the deadline instead.
        assert_eq!(
            s.next(&progress, Millis(2_968), Millis(2_820)),
            Next::Wait {
                until: Millis(2_968)
            }
        );
        assert_eq!(
            s.next(&progress, Millis(2_968), Millis(2_968)),
            Next::Lost(LossReason::DeadlinePassed {
                attempts: 2,
                last_failure: Some(NO_QUORUM)
            })
        );
    }

    #[test]
    fn a_refused_round_is_a_loss_at_once_and_a_success_clears_failures() {
        let s = schedule();
        let mut progress = s.start(Millis(2_968));
        let inconclusive = ExtendOutcome::Inconclusive { failure: NO_QUORUM };
        s.record(&mut progress, inconclusive, Millis(968), Millis(970));
        s.record(
            &mut progress,
            ExtendOutcome::Extended,
            Millis(1_270),
            Millis(1_271),
        );
        assert_eq!(
            s.next(&progress, Millis(4_238), Millis(4_238)),
            Next::Lost(LossReason::DeadlinePassed {
                attempts: 0,
                last_failure: None
            })
        );
        let refused = ExtendOutcome::Refused {
            failure: Failure::LeaseExpired,
        };
        assert_eq!(
            s.record(&mut progress, refused, Millis(2_270), Millis(2_271)),
            Some(LossReason::Refused {
                failure: Failure::LeaseExpired
            })
        );
    }
}
