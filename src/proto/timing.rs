//! The lock's timing decisions as clock guards.
//!
//! Every decision the core takes on time compares one elapsed span, measured on one process's
//! clock from one anchor, against a constant of the configuration: a round is won with
//! validity left while less than `ttl − drift` has passed since its T1; a round stops waiting
//! once `round_timeout` has passed; a holder believes while less than `ttl − drift` has passed
//! since T1 (or, with the validity check off, `ttl − drift` since T2); a node's key is live while
//! less than `ttl` has passed since the `SET` on the node's clock; a restarted node serves once
//! its restart delay has passed on its clock (`NodeState::restart_delay_guard`).
//!
//! A [`ClockGuard`] is that comparison as a value: the concrete code evaluates it on a reading
//! ([`ClockGuard::holds`]), and a symbolic-time engine reads its anchor, relation and bound as a
//! clock constraint (`x < c`, `x ≥ c`) without restating the arithmetic. The tests below check,
//! on every reading in a range, that each guard agrees with the decision the core takes.

use super::config::{LockParams, ValidityCheck};
use crate::time::Millis;

/// The moment an elapsed span is measured from, and on whose clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Anchor {
    /// The round's T1, on the client's clock.
    RoundStart,
    /// The round's decision (T2), on the client's clock.
    RoundDecided,
    /// The `SET` (or `PEXPIRE`) that gave the node its key, on the node's clock.
    KeySet,
    /// The node's restart, on the node's clock.
    Restarted,
}

/// How the elapsed span compares with the bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Relation {
    /// `elapsed < bound`.
    Below,
    /// `elapsed ≥ bound`.
    AtLeast,
}

/// One timing decision: `elapsed since anchor` against `bound`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ClockGuard {
    /// What the span is measured from.
    pub anchor: Anchor,
    /// How it compares.
    pub relation: Relation,
    /// The constant.
    pub bound: Millis,
}

impl ClockGuard {
    /// Whether the guard holds after `elapsed` (a clock that stepped back before the anchor
    /// reads as zero elapsed, as the core counts it).
    pub(crate) fn holds(&self, elapsed: Millis) -> bool {
        match self.relation {
            Relation::Below => elapsed < self.bound,
            Relation::AtLeast => elapsed >= self.bound,
        }
    }

    /// Whether the guard holds at clock reading `now` for an anchor read at `anchor`.
    #[cfg(test)]
    pub(crate) fn holds_at(&self, anchor: Millis, now: Millis) -> bool {
        self.holds(now - anchor)
    }
}

/// A reading of elapsed time on which every guard of `sides` gives its answer (`true`: holds),
/// where a checker that decides with guards hands the core a concrete reading (the zone
/// engine, fed one witness on each side of each guard): the last such reading before a guard
/// changes its answer, or the first when none ever does; `None` when no reading gives every
/// answer. Every guard is a span against a bound, so the readings that give a set of answers
/// form one interval, and a core whose decisions are its guards decides alike on all of it.
#[cfg(feature = "model")]
pub(crate) fn witness(sides: &[(ClockGuard, bool)]) -> Option<Millis> {
    let mut low = 0u64;
    let mut high = u64::MAX;
    for &(guard, holds) in sides {
        let bound = guard.bound.as_u64();
        // `elapsed < bound` when the guard is below and holds, or at least and fails.
        let below = (guard.relation == Relation::Below) == holds;
        if below {
            high = high.min(bound.checked_sub(1)?);
        } else {
            low = low.max(bound);
        }
    }
    (low <= high).then_some(Millis(if high == u64::MAX { low } else { high }))
}

impl LockParams {
    /// Redlock's step 4 with the validity check: a round that won a quorum is acquired with
    /// validity left iff less than `ttl − drift` passed between T1 and T2.
    pub(crate) fn validity_guard(&self) -> ClockGuard {
        ClockGuard {
            anchor: Anchor::RoundStart,
            relation: Relation::Below,
            bound: self.max_validity(),
        }
    }

    /// A round stops waiting for answers once `round_timeout` has passed since its T1.
    pub(crate) fn round_timeout_guard(&self) -> ClockGuard {
        ClockGuard {
            anchor: Anchor::RoundStart,
            relation: Relation::AtLeast,
            bound: self.round_timeout,
        }
    }

    /// A holder may act while this holds: less than `ttl − drift` since T1 with the validity
    /// check on; with it off (the mistake), the same span timed from T2.
    pub(crate) fn belief_guard(&self) -> ClockGuard {
        ClockGuard {
            anchor: match self.validity_check {
                // An acquisition's lease; with `AcquisitionOnly` only an extension's is timed
                // from T2, and whoever reads this guard takes no extensions.
                ValidityCheck::On | ValidityCheck::AcquisitionOnly => Anchor::RoundStart,
                ValidityCheck::Off => Anchor::RoundDecided,
            },
            relation: Relation::Below,
            bound: self.max_validity(),
        }
    }

    /// A holder may still use the guarded resource while at least `margin` of its lease is left
    /// ([`Lease::has_left`](super::Lease::has_left)): less than `ttl − drift − margin + 1` since
    /// the belief's anchor. A margin is at most the lease (`ttl − drift`, as scenario files
    /// are validated), so the bound is at least 1 and a reading before the anchor, which
    /// [`ClockGuard::holds`] counts as zero elapsed, passes here as it passes `has_left`.
    pub(crate) fn margin_guard(&self, margin: Millis) -> ClockGuard {
        let belief = self.belief_guard();
        ClockGuard {
            bound: (belief.bound + Millis(1)) - margin,
            ..belief
        }
    }

    /// A node's key is live while less than `ttl` has passed since it was set, on the node's
    /// clock (Redis's `PX ttl`).
    pub(crate) fn key_live_guard(&self) -> ClockGuard {
        ClockGuard {
            anchor: Anchor::KeySet,
            relation: Relation::Below,
            bound: self.ttl,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{
        Answer, Config, DriftPolicy, Entropy, LockPhase, LockState, NodeId, Reply, RetryPolicy,
        RoundDecision, Token,
    };

    /// Every configuration of small constants, with the validity check on and off.
    pub(crate) fn configurations() -> impl Iterator<Item = LockParams> {
        (1..=9u64).flat_map(|ttl| {
            (0..ttl).flat_map(move |drift| {
                (1..=ttl).flat_map(move |timeout| {
                    [ValidityCheck::On, ValidityCheck::Off]
                        .into_iter()
                        .map(move |check| {
                            let config = Config {
                                drift: DriftPolicy::fixed(Millis(drift)),
                                round_timeout: Millis(timeout),
                                validity_check: check,
                                decision: RoundDecision::AtQuorum,
                                ..Config::new(3)
                            };
                            config.params(Millis(ttl)).expect("a valid configuration")
                        })
                })
            })
        })
    }

    struct Fixed;

    impl Entropy for Fixed {
        fn token(&mut self) -> Token {
            Token(7)
        }
        fn backoff(&mut self, retry: &RetryPolicy) -> Millis {
            retry.delay_min
        }
    }

    /// A lock begun at `t1` whose quorum answers at `t2`.
    fn decided(params: &LockParams, t1: Millis, t2: Millis) -> LockState {
        let mut lock = LockState::new();
        let _ = lock.begin(params, t1, &mut Fixed);
        let round = lock.round();
        for node in [0, 1] {
            let yes = Answer::voting(Reply::Applied);
            let _ = lock.handle_reply(params, round, NodeId(node), yes, t2, &mut Fixed);
        }
        lock
    }

    #[test]
    fn the_validity_and_belief_guards_are_the_cores_decisions() {
        let t1 = Millis(100);
        for params in configurations() {
            let limit = params.ttl.as_u64() + 3;
            for t2 in (97..=100 + limit).map(Millis) {
                let lock = decided(&params, t1, t2);
                let won = matches!(lock.phase(), LockPhase::Holding { .. });
                let expected = params.validity_check == ValidityCheck::Off
                    || params.validity_guard().holds_at(t1, t2);
                assert_eq!(won, expected, "{params:?} T2 = {t2:?}");
                if !won {
                    continue;
                }
                let anchor = match params.belief_guard().anchor {
                    Anchor::RoundStart => t1,
                    Anchor::RoundDecided | Anchor::KeySet | Anchor::Restarted => t2,
                };
                for now in (t2.as_u64()..=t2.as_u64() + limit).map(Millis) {
                    assert_eq!(
                        lock.believes(now),
                        params.belief_guard().holds_at(anchor, now),
                        "{params:?} T2 = {t2:?}, now = {now:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_margin_guard_is_the_holders_check_before_each_use() {
        let t1 = Millis(100);
        for params in configurations() {
            let limit = params.ttl.as_u64() + 3;
            // Decided at T1, so the belief's anchor is T1 with the validity check on or off.
            let lock = decided(&params, t1, t1);
            let Some(lease) = lock.lease() else { continue };
            let anchor = t1;
            // Every margin within the lease, on readings from before T1 (a clock that
            // stepped back) to past the TTL.
            for margin in (0..=params.max_validity().as_u64()).map(Millis) {
                for now in (100 - 3..=100 + limit).map(Millis) {
                    assert_eq!(
                        lease.has_left(now, margin),
                        params.margin_guard(margin).holds_at(anchor, now),
                        "{params:?} margin = {margin:?}, now = {now:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_round_timeout_guard_is_when_the_core_stops_waiting() {
        let t1 = Millis(100);
        for params in configurations() {
            for now in (100..=100 + params.ttl.as_u64() + 2).map(Millis) {
                let mut lock = LockState::new();
                let _ = lock.begin(&params, t1, &mut Fixed);
                let _ = lock.handle_timeout(&params, now, &mut Fixed);
                let stopped = !matches!(lock.phase(), LockPhase::Acquiring(_));
                assert_eq!(
                    stopped,
                    params.round_timeout_guard().holds_at(t1, now),
                    "{params:?} now = {now:?}"
                );
            }
        }
    }
}
