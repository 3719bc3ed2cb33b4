//! [`LockState`]: a lock's whole life as a small `Copy` value with pure transitions.
//!
//! Every transition takes the lock's [`LockParams`], the client's clock reading and, where the
//! algorithm needs randomness (a fresh token, a retry delay), an [`Entropy`] source; it
//! returns the [`Effects`] to carry out: at most one request for every node and at most one
//! [`LockEvent`]. Nothing here owns a queue or a generator, so the value can live inside a
//! model checker's state and be hashed, while [`Lock`](super::Lock) wraps it with a random
//! generator and the queues a driver drains.

use thiserror::Error;

use super::command::{NodeId, NodeSet, Op, Reply, RoundId, Token};
use super::config::{FailedRound, Fencing, LockParams, RetryPolicy, RetryToken};
use super::round::{Failure, Lease, QuorumRound, ReleaseRound, RoundOutcome, Tally};
use crate::time::Millis;

/// Something the lock wants its owner to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LockEvent {
    /// A round won a majority with validity left. The caller may act until its clock reads
    /// `deadline`.
    Acquired {
        /// The value stored at the nodes.
        token: Token,
        /// Validity left when the round was decided.
        validity: Millis,
        /// `T1 + ttl − drift` on the client's clock.
        deadline: Millis,
        /// Per-node results of the winning round.
        nodes: Tally,
        /// The fencing token derived from the round ([`Fencing`](super::Fencing)), `None`
        /// with fencing off.
        fence: Option<u64>,
    },
    /// A round failed; the lock released it everywhere and will try again at `at`.
    Retrying {
        /// The round that failed, counting from 1.
        attempt: u32,
        /// Why it failed.
        failure: Failure,
        /// Client time of the next round.
        at: Millis,
    },
    /// A sequential acquisition ([`Contact::Sequential`](super::Contact::Sequential)) asks
    /// its next node, in the same round.
    Asking {
        /// The node asked now.
        node: NodeId,
        /// The node asked before it, when its own timeout passed with no answer (the round
        /// counts it as failed); `None` when it answered.
        silent: Option<NodeId>,
    },
    /// Every round failed. Not an error: somebody else holds the lock, or too few nodes answered.
    NotAcquired {
        /// Why the last round failed.
        failure: Failure,
        /// How many rounds were tried.
        attempts: u32,
        /// Per-node results of the last round.
        nodes: Tally,
    },
    /// An extension won a majority; the deadline moved.
    Extended {
        /// Validity left when the extension was decided.
        validity: Millis,
        /// The new deadline on the client's clock.
        deadline: Millis,
        /// Per-node results.
        nodes: Tally,
    },
    /// An extension failed. The old deadline still stands; after it the lock is gone.
    NotExtended {
        /// Why.
        failure: Failure,
        /// Per-node results.
        nodes: Tally,
    },
    /// The holder's clock reached the deadline: it must stop acting as the holder.
    Expired {
        /// The deadline that passed.
        deadline: Millis,
    },
    /// The release round ended (every node answered, or the round timed out).
    Released {
        /// Per-node results: `applied` are the nodes where our key was deleted.
        nodes: Tally,
    },
}

/// A call that does not fit the lock's current phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum UsageError {
    /// `extend` was called while the lock is not held (acquiring, released, or never won).
    #[error("the lock is not held, so there is nothing to extend")]
    NotHeld,
    /// `extend` was called while another extension is in flight.
    #[error("an extension is already in flight")]
    AlreadyExtending,
    /// An acquisition's outcome was asked for when none is in progress or ended (it was
    /// abandoned by a release).
    #[error("no acquisition is in progress or ended")]
    NotAcquiring,
    /// An extension's outcome was asked for when none is in progress or ended.
    #[error("no extension is in progress or ended")]
    NotExtending,
}

/// Where the lock's randomness comes from: a CSPRNG in production, a seeded generator in the
/// simulator, fixed choices in the model checker (which explores every retry delay anyway).
pub(crate) trait Entropy {
    /// A fresh token for a new acquisition round.
    fn token(&mut self) -> Token;
    /// The delay before the next round after a failed one, within `retry`'s range.
    fn backoff(&mut self, retry: &RetryPolicy) -> Millis;
}

/// One node's answer as the lock takes it: the reply, and whether a yes may count toward the
/// quorum.
///
/// A driver that knows a node restarted less than a TTL ago (antirez's delayed restart,
/// enforced by the client) passes [`Answer::guarded`]: the node may have lost a key that is
/// still live elsewhere, so its yes is kept out of the count while the node still gets the
/// round's operation and its release. A plain [`Reply`] converts to a counting answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Answer {
    /// What the node said.
    pub reply: Reply,
    /// Whether the node's yes counts toward the quorum.
    pub counts: bool,
    /// The fencing counter the node returned with a yes to `SET` (0: none).
    pub counter: u64,
}

impl Answer {
    /// An answer from a node whose yes counts.
    pub const fn voting(reply: Reply) -> Answer {
        Answer {
            reply,
            counts: true,
            counter: 0,
        }
    }

    /// An answer from a node whose yes does not count (it restarted too recently).
    pub const fn guarded(reply: Reply) -> Answer {
        Answer {
            reply,
            counts: false,
            counter: 0,
        }
    }

    /// A node that gave no usable answer (timeout, connection error, an unexpected reply).
    pub const fn failed() -> Answer {
        Answer::voting(Reply::Failed)
    }

    /// The same answer carrying the fencing counter the node's `SET` returned.
    pub const fn with_counter(self, counter: u64) -> Answer {
        Answer { counter, ..self }
    }
}

impl From<Reply> for Answer {
    fn from(reply: Reply) -> Answer {
        Answer::voting(reply)
    }
}

/// One operation for every one of the `N` nodes (or for one of them, in a sequential
/// acquisition), tagged with the round its answers belong to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Request {
    /// The round the answers are fed back with.
    pub round: RoundId,
    /// The operation.
    pub op: Op,
    /// `Some(node)`: for that node alone, the next of a sequential acquisition (same round);
    /// `None`: for every node.
    pub only: Option<NodeId>,
}

impl Request {
    /// The nodes, of `node_count`, that this request goes to.
    pub(crate) fn to(&self, node_count: u8) -> NodeSet {
        self.only
            .map_or(NodeSet::first(usize::from(node_count)), NodeSet::single)
    }
}

/// What a transition asks its driver to do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[must_use = "a transition's request must be sent and its event reported"]
pub(crate) struct Effects {
    /// Send this to all `N` nodes.
    pub request: Option<Request>,
    /// Tell the caller this.
    pub event: Option<LockEvent>,
}

/// Where a lock is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum LockPhase {
    /// Not started: [`LockState::begin`] sends the first round.
    Idle,
    /// Waiting for the answers of an acquisition round.
    Acquiring(QuorumRound),
    /// A round failed and was released; the next begins when the client's clock reads `until`.
    BackingOff {
        /// Client time of the next round.
        until: Millis,
        /// The failed round's value, which [`RetryToken::Kept`] uses again.
        token: Token,
    },
    /// Holding a lease.
    Holding {
        /// The lease.
        lease: Lease,
        /// Whether [`LockEvent::Expired`] was reported.
        expiry_reported: bool,
    },
    /// Holding a lease while an extension round for it runs; the lease stands meanwhile.
    Extending {
        /// The lease being extended.
        lease: Lease,
        /// The extension round.
        round: QuorumRound,
    },
    /// Releasing on all nodes.
    Releasing(ReleaseRound),
    /// Released, or every round failed: nothing more to do.
    Finished,
}

/// A lock's life as a value: acquisition rounds with retries, the lease, extensions and the
/// release, with no queues and no generator.
///
/// Every method is a pure function of the value and its arguments, and the caller carries out
/// the returned [`Effects`]. [`Lock`](super::Lock) is the same life with a generator and
/// queues around it, for drivers; the model checker keeps a `LockState` per client in its
/// state and drives it directly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct LockState {
    phase: LockPhase,
    attempt: u32,
    round: RoundId,
    /// Nodes whose yes does not count toward the quorum of the round in flight.
    excluded: NodeSet,
}

impl Default for LockState {
    fn default() -> Self {
        LockState::new()
    }
}

impl LockState {
    /// A lock that has not started.
    pub(crate) const fn new() -> LockState {
        LockState {
            phase: LockPhase::Idle,
            attempt: 0,
            round: RoundId(0),
            excluded: NodeSet::EMPTY,
        }
    }

    /// Where the lock is.
    pub(crate) fn phase(&self) -> &LockPhase {
        &self.phase
    }

    /// How many acquisition rounds have started.
    pub(crate) fn attempts(&self) -> u32 {
        self.attempt
    }

    /// The round whose answers the lock takes now (older answers are ignored).
    pub(crate) fn round(&self) -> RoundId {
        self.round
    }

    /// Nodes whose yes does not count toward the quorum of the round in flight.
    #[cfg(any(test, feature = "model"))]
    pub(crate) fn excluded(&self) -> NodeSet {
        self.excluded
    }

    /// Whether an answer to `round` would be counted: it is the acquisition or extension
    /// round in flight.
    pub(crate) fn is_collecting(&self, round: RoundId) -> bool {
        round == self.round
            && matches!(
                self.phase,
                LockPhase::Acquiring(_) | LockPhase::Extending { .. }
            )
    }

    /// The current lease, while the lock is held (also during an extension).
    pub(crate) fn lease(&self) -> Option<&Lease> {
        match &self.phase {
            LockPhase::Holding { lease, .. } | LockPhase::Extending { lease, .. } => Some(lease),
            _ => None,
        }
    }

    /// Whether a client whose clock reads `now` may act as the holder: it holds a lease and
    /// `now` is before the lease's deadline.
    pub(crate) fn believes(&self, now: Millis) -> bool {
        self.lease().is_some_and(|lease| lease.believes(now))
    }

    /// The same lock with what no later transition reads forgotten: the excluded nodes while
    /// no round collects answers, and a lease's tally and validity (told in its events, read
    /// by no transition). A checker stores this form, so that two locks whose every future is
    /// the same are one state.
    #[cfg(feature = "model")]
    pub(crate) fn forgetting_history(mut self) -> LockState {
        if !self.is_collecting(self.round) {
            self.excluded = NodeSet::EMPTY;
        }
        if let LockPhase::Holding { lease, .. } | LockPhase::Extending { lease, .. } =
            &mut self.phase
        {
            lease.tally = Tally::default();
            lease.validity = Millis::ZERO;
        }
        self
    }

    /// Whether the lock has nothing more to do (released, or never acquired).
    pub(crate) fn is_finished(&self) -> bool {
        self.phase == LockPhase::Finished
    }

    /// Starts the first acquisition round at client time `now` (this is T1). Does nothing
    /// unless the lock is [`LockPhase::Idle`].
    pub(crate) fn begin(
        &mut self,
        params: &LockParams,
        now: Millis,
        entropy: &mut impl Entropy,
    ) -> Effects {
        if self.phase != LockPhase::Idle {
            return Effects::default();
        }
        self.begin_round(params, now, entropy)
    }

    /// The client time at which [`handle_timeout`](LockState::handle_timeout) has work to do:
    /// a round's deadline, the end of a back-off, or the lease's deadline.
    pub(crate) fn poll_timeout(&self, params: &LockParams) -> Option<Millis> {
        match &self.phase {
            LockPhase::Acquiring(round) => Some(round.deadline(params)),
            LockPhase::BackingOff { until, .. } => Some(*until),
            LockPhase::Holding {
                lease,
                expiry_reported: false,
            } => Some(lease.deadline),
            LockPhase::Extending { round, .. } => Some(round.deadline(params)),
            LockPhase::Releasing(release) => Some(release.deadline(params)),
            LockPhase::Holding { .. } | LockPhase::Idle | LockPhase::Finished => None,
        }
    }

    /// Feeds one node's answer to a command of round `round`. Answers to an older round are
    /// ignored: they belong to a release that nobody waits for, or arrived too late.
    pub(crate) fn handle_reply(
        &mut self,
        params: &LockParams,
        round: RoundId,
        node: NodeId,
        answer: impl Into<Answer>,
        now: Millis,
        entropy: &mut impl Entropy,
    ) -> Effects {
        let Answer {
            reply,
            counts,
            counter,
        } = answer.into();
        if round != self.round || node.index() >= params.node_count as usize {
            return Effects::default();
        }
        if !counts && self.is_collecting(round) {
            self.excluded.insert(node);
        }
        let excluded = self.excluded;
        match &mut self.phase {
            LockPhase::Acquiring(r) => {
                r.handle_counted_reply(node, reply, counter);
                if r.is_decided_excluding(params, excluded) {
                    return self.finish_acquire(params, now, entropy);
                }
                if let Some(next) = r.ask_next(params, Some(node), now) {
                    let op = r.op(params);
                    return self.ask(next, None, op);
                }
            }
            LockPhase::Extending { round: r, .. } => {
                r.handle_reply(node, reply);
                if r.is_decided_excluding(params, excluded) {
                    return self.finish_extend(params, now);
                }
            }
            LockPhase::Releasing(release) => {
                if release.read_own_value(params, node, reply) {
                    return self.ask(node, None, Op::Del).only_request();
                }
                release.tally.record(node, reply);
                if release.is_decided(params) {
                    let nodes = release.tally;
                    self.phase = LockPhase::Finished;
                    return event(LockEvent::Released { nodes });
                }
            }
            LockPhase::Idle
            | LockPhase::BackingOff { .. }
            | LockPhase::Holding { .. }
            | LockPhase::Finished => {}
        }
        Effects::default()
    }

    /// Hands the lock `answers` to the round in flight, in order, then, unless they decided
    /// it, the timeout at `now`: what a driver that reads a batch of replies at one clock
    /// reading does (both model checkers' clients). The effects of all of them together: a
    /// decision yields at most one request and one event, and later answers none.
    #[cfg(feature = "model")]
    pub(crate) fn take_answers(
        &mut self,
        params: &LockParams,
        answers: impl IntoIterator<Item = (NodeId, Answer)>,
        now: Millis,
        entropy: &mut impl Entropy,
    ) -> Effects {
        let round = self.round;
        let merge = |first: Effects, then: Effects| Effects {
            request: then.request.or(first.request),
            event: then.event.or(first.event),
        };
        let mut effects = Effects::default();
        for (node, answer) in answers {
            let then = self.handle_reply(params, round, node, answer, now, entropy);
            effects = merge(effects, then);
        }
        if effects.event.is_none() {
            effects = merge(effects, self.handle_timeout(params, now, entropy));
        }
        effects
    }

    /// Does whatever is due at client time `now`; calling it early does nothing.
    pub(crate) fn handle_timeout(
        &mut self,
        params: &LockParams,
        now: Millis,
        entropy: &mut impl Entropy,
    ) -> Effects {
        if self.poll_timeout(params).is_none_or(|due| now < due) {
            return Effects::default();
        }
        let excluded = self.excluded;
        match &mut self.phase {
            LockPhase::Acquiring(r) => {
                let silent = r.asking.map(|asking| asking.node);
                match r.ask_next(params, None, now) {
                    Some(next) if !r.is_decided_excluding(params, excluded) => {
                        let op = r.op(params);
                        self.ask(next, silent, op)
                    }
                    _ => self.finish_acquire(params, now, entropy),
                }
            }
            LockPhase::BackingOff { .. } => self.begin_round(params, now, entropy),
            LockPhase::Holding {
                lease,
                expiry_reported,
            } => {
                *expiry_reported = true;
                event(LockEvent::Expired {
                    deadline: lease.deadline,
                })
            }
            LockPhase::Extending { .. } => self.finish_extend(params, now),
            LockPhase::Releasing(release) => {
                let nodes = release.tally;
                self.phase = LockPhase::Finished;
                event(LockEvent::Released { nodes })
            }
            LockPhase::Idle | LockPhase::Finished => Effects::default(),
        }
    }

    /// Asks all `N` nodes to extend the lease by a full TTL from now.
    ///
    /// Past the lease's deadline the extension is refused at once with
    /// [`LockEvent::NotExtended`] and [`Failure::LeaseExpired`]: keys that may have expired
    /// cannot be extended back into a lock.
    pub(crate) fn extend(
        &mut self,
        params: &LockParams,
        now: Millis,
    ) -> Result<Effects, UsageError> {
        let lease = match &self.phase {
            LockPhase::Holding { lease, .. } => *lease,
            LockPhase::Extending { .. } => return Err(UsageError::AlreadyExtending),
            _ => return Err(UsageError::NotHeld),
        };
        if !lease.believes(now) {
            return Ok(event(LockEvent::NotExtended {
                failure: Failure::LeaseExpired,
                nodes: Tally::default(),
            }));
        }
        let round = QuorumRound {
            fence: lease.fence,
            ..QuorumRound::extend(lease.token, now)
        };
        self.excluded = NodeSet::EMPTY;
        self.phase = LockPhase::Extending { lease, round };
        Ok(self.request(round.op(params)))
    }

    /// Stops believing at once, then sends a release to all `N` nodes. An acquisition in
    /// progress is abandoned and released too. Releasing twice does nothing.
    pub(crate) fn release(&mut self, params: &LockParams, now: Millis) -> Effects {
        let token = match &self.phase {
            LockPhase::Acquiring(round) => round.token,
            LockPhase::Holding { lease, .. } | LockPhase::Extending { lease, .. } => lease.token,
            // A failed round already released its keys; nothing is held while backing off.
            LockPhase::Idle | LockPhase::BackingOff { .. } => {
                self.phase = LockPhase::Finished;
                return Effects::default();
            }
            LockPhase::Releasing(_) | LockPhase::Finished => return Effects::default(),
        };
        let release = ReleaseRound::new(token, now);
        self.phase = LockPhase::Releasing(release);
        self.request(release.op(params))
    }

    /// Moves to a new round and asks for `op` on every node (or, when the round is
    /// sequential, on its first node).
    fn request(&mut self, op: Op) -> Effects {
        self.round = RoundId(self.round.0.wrapping_add(1));
        let only = match &self.phase {
            LockPhase::Acquiring(round) => round.asking.map(|asking| asking.node),
            _ => None,
        };
        Effects {
            request: Some(Request {
                round: self.round,
                op,
                only,
            }),
            event: None,
        }
    }

    /// Asks `node` alone for `op` in the round in flight: the next node of a sequential
    /// acquisition, after the `silent` one timed out (or after an answer).
    fn ask(&mut self, node: NodeId, silent: Option<NodeId>, op: Op) -> Effects {
        Effects {
            request: Some(Request {
                round: self.round,
                op,
                only: Some(node),
            }),
            event: Some(LockEvent::Asking { node, silent }),
        }
    }

    fn begin_round(
        &mut self,
        params: &LockParams,
        now: Millis,
        entropy: &mut impl Entropy,
    ) -> Effects {
        // A fresh token per round: a late release of an earlier round must never match the
        // keys of a later one (unless the configuration asks for the mistake).
        let token = match self.phase {
            LockPhase::BackingOff { token, .. } if params.retry_token == RetryToken::Kept => token,
            _ => entropy.token(),
        };
        let round = QuorumRound::acquire_with(params, token, now);
        self.attempt += 1;
        self.excluded = NodeSet::EMPTY;
        self.phase = LockPhase::Acquiring(round);
        self.request(round.op(params))
    }

    fn finish_acquire(
        &mut self,
        params: &LockParams,
        now: Millis,
        entropy: &mut impl Entropy,
    ) -> Effects {
        let LockPhase::Acquiring(round) = self.phase else {
            return Effects::default();
        };
        match round.finish_excluding(params, now, self.excluded) {
            RoundOutcome::Won(_) if round.needs_write_back(params, self.excluded) => {
                // The fence is written back to a quorum before the lock counts as acquired,
                // so every later quorum, which intersects this one, starts above it. The
                // deadline stays anchored at this round's T1.
                let fence = round.fence_round();
                self.excluded = NodeSet::EMPTY;
                self.phase = LockPhase::Acquiring(fence);
                self.request(fence.op(params))
            }
            RoundOutcome::Won(lease) => {
                self.phase = LockPhase::Holding {
                    lease,
                    expiry_reported: false,
                };
                event(LockEvent::Acquired {
                    token: lease.token,
                    validity: lease.validity,
                    deadline: lease.deadline,
                    nodes: lease.tally,
                    fence: (params.fencing != Fencing::Off).then_some(lease.fence),
                })
            }
            RoundOutcome::Lost(failure) => {
                // Redlock step 5: release on *all* nodes, also those that said no or did not
                // answer — a timed-out SET may still have been applied. With
                // `FailedRound::Keep` nothing is sent and the keys expire on their own.
                let mut effects = match params.failed_round {
                    FailedRound::Release => {
                        let release = ReleaseRound::new(round.token, now);
                        self.request(release.op(params))
                    }
                    FailedRound::Keep => Effects::default(),
                };
                if self.attempt < params.retry.attempts {
                    let at = now + entropy.backoff(&params.retry);
                    self.phase = LockPhase::BackingOff {
                        until: at,
                        token: round.token,
                    };
                    effects.event = Some(LockEvent::Retrying {
                        attempt: self.attempt,
                        failure,
                        at,
                    });
                } else {
                    self.phase = LockPhase::Finished;
                    effects.event = Some(LockEvent::NotAcquired {
                        failure,
                        attempts: self.attempt,
                        nodes: round.tally,
                    });
                }
                effects
            }
        }
    }

    fn finish_extend(&mut self, params: &LockParams, now: Millis) -> Effects {
        let LockPhase::Extending { lease, round } = self.phase else {
            return Effects::default();
        };
        let (lease, outcome) = match round.finish_excluding(params, now, self.excluded) {
            RoundOutcome::Won(extended) => (
                extended,
                LockEvent::Extended {
                    validity: extended.validity,
                    deadline: extended.deadline,
                    nodes: extended.tally,
                },
            ),
            RoundOutcome::Lost(failure) => (
                lease,
                LockEvent::NotExtended {
                    failure,
                    nodes: round.tally,
                },
            ),
        };
        self.phase = LockPhase::Holding {
            lease,
            expiry_reported: false,
        };
        event(outcome)
    }
}

impl Effects {
    /// The request alone, without the event.
    fn only_request(self) -> Effects {
        Effects {
            event: None,
            ..self
        }
    }
}

fn event(event: LockEvent) -> Effects {
    Effects {
        request: None,
        event: Some(event),
    }
}
