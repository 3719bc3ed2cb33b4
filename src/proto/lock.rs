//! [`Lock`]: the whole life of one Redlock lock as a sans-IO state machine.

use std::collections::VecDeque;

use rand_core::RngCore;
use thiserror::Error;

use super::command::{Command, NodeId, NodeSet, Reply, RoundId, Token};
use super::config::{Config, ConfigError, LockParams, RetryPolicy};
use super::round::{Failure, Lease, QuorumRound, ReleaseRound, RoundOutcome, Tally};
use crate::time::Millis;

/// Something the lock wants its owner to know. Drain with [`Lock::poll_event`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Event {
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
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Phase {
    Acquiring(QuorumRound),
    BackingOff { until: Millis },
    Holding { lease: Lease, expiry_reported: bool },
    Extending { lease: Lease, round: QuorumRound },
    Releasing(ReleaseRound),
    Finished,
}

/// One lock on one resource across `N` nodes, from the first `SET` to the last release.
///
/// The lock never performs I/O and never reads a clock: every input carries `now`, the
/// *client's* clock reading, and every output is a [`Command`] for some driver to send or an
/// [`Event`] for the caller. Randomness (tokens, retry jitter) comes from the `R` you pass in —
/// a CSPRNG in production, a seeded generator in the simulator.
///
/// A driver loops: send every [`poll_command`](Lock::poll_command); feed each answer to
/// [`handle_reply`](Lock::handle_reply); when no answer comes before
/// [`poll_timeout`](Lock::poll_timeout), call [`handle_timeout`](Lock::handle_timeout); read
/// [`poll_event`](Lock::poll_event) for the outcome.
#[derive(Clone, Debug)]
pub struct Lock<R> {
    params: LockParams,
    retry: RetryPolicy,
    rng: R,
    phase: Phase,
    attempt: u32,
    round: RoundId,
    /// Nodes whose yes does not count toward the quorum of the round in flight.
    excluded: NodeSet,
    commands: VecDeque<Command>,
    events: VecDeque<Event>,
}

impl<R: RngCore> Lock<R> {
    /// Validates `config` for a lock of `ttl` and starts the first acquisition round at client
    /// time `now`.
    pub fn acquire(
        config: &Config,
        ttl: Millis,
        rng: R,
        now: Millis,
    ) -> Result<Lock<R>, ConfigError> {
        let params = config.params(ttl)?;
        let mut lock = Lock {
            params,
            retry: config.retry,
            rng,
            phase: Phase::Finished,
            attempt: 0,
            round: RoundId(0),
            excluded: NodeSet::EMPTY,
            commands: VecDeque::new(),
            events: VecDeque::new(),
        };
        lock.begin_round(now);
        Ok(lock)
    }

    /// The resolved numbers of this lock (quorum, ttl, drift, round timeout).
    pub fn params(&self) -> &LockParams {
        &self.params
    }

    /// The next command for a driver to send, if any.
    #[must_use]
    pub fn poll_command(&mut self) -> Option<Command> {
        self.commands.pop_front()
    }

    /// The next event for the caller, if any.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// The client time at which [`handle_timeout`](Lock::handle_timeout) has work to do: a
    /// round's deadline, the end of a back-off, or the lease's deadline.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Millis> {
        match &self.phase {
            Phase::Acquiring(round) => Some(round.deadline(&self.params)),
            Phase::BackingOff { until } => Some(*until),
            Phase::Holding {
                lease,
                expiry_reported: false,
            } => Some(lease.deadline),
            Phase::Holding { .. } => None,
            Phase::Extending { round, .. } => Some(round.deadline(&self.params)),
            Phase::Releasing(release) => Some(release.deadline(&self.params)),
            Phase::Finished => None,
        }
    }

    /// Feeds one node's answer to a command of round `round`. Answers to an older round are
    /// ignored: they belong to a release that nobody waits for, or arrived too late.
    pub fn handle_reply(&mut self, round: RoundId, node: NodeId, reply: Reply, now: Millis) {
        if round != self.round || node.index() >= self.params.node_count as usize {
            return;
        }
        match &mut self.phase {
            Phase::Acquiring(r) => {
                r.handle_reply(node, reply);
                if r.is_decided_excluding(&self.params, self.excluded) {
                    self.finish_acquire(now);
                }
            }
            Phase::Extending { round: r, .. } => {
                r.handle_reply(node, reply);
                if r.is_decided_excluding(&self.params, self.excluded) {
                    self.finish_extend(now);
                }
            }
            Phase::Releasing(release) => {
                release.tally.record(node, reply);
                if release.is_decided(&self.params) {
                    let nodes = release.tally;
                    self.events.push_back(Event::Released { nodes });
                    self.phase = Phase::Finished;
                }
            }
            Phase::BackingOff { .. } | Phase::Holding { .. } | Phase::Finished => {}
        }
    }

    /// Does whatever is due at client time `now`; calling it early does nothing.
    pub fn handle_timeout(&mut self, now: Millis) {
        let Some(due) = self.poll_timeout() else {
            return;
        };
        if now < due {
            return;
        }
        match &mut self.phase {
            Phase::Acquiring(_) => self.finish_acquire(now),
            Phase::BackingOff { .. } => self.begin_round(now),
            Phase::Holding {
                lease,
                expiry_reported,
            } => {
                *expiry_reported = true;
                let deadline = lease.deadline;
                self.events.push_back(Event::Expired { deadline });
            }
            Phase::Extending { .. } => self.finish_extend(now),
            Phase::Releasing(release) => {
                let nodes = release.tally;
                self.events.push_back(Event::Released { nodes });
                self.phase = Phase::Finished;
            }
            Phase::Finished => {}
        }
    }

    /// Keeps `node`'s yes out of the quorum count of the acquisition or extension round in
    /// flight; the next round counts every node again. The node still gets the round's
    /// operation and its release. A driver calls this before feeding that node's reply, for a
    /// node that restarted less than a TTL ago (antirez's delayed restart, enforced by the
    /// client rather than by the operator). Outside such a round it does nothing.
    pub fn exclude_from_quorum(&mut self, node: NodeId) {
        if matches!(self.phase, Phase::Acquiring(_) | Phase::Extending { .. }) {
            self.excluded.insert(node);
        }
    }

    /// Asks all `N` nodes to extend the lease by a full TTL from now.
    ///
    /// Past the lease's deadline the extension is refused at once with
    /// [`Event::NotExtended`] and [`Failure::LeaseExpired`]: keys that may have expired
    /// cannot be extended back into a lock.
    pub fn extend(&mut self, now: Millis) -> Result<(), UsageError> {
        let lease = match &self.phase {
            Phase::Holding { lease, .. } => *lease,
            Phase::Extending { .. } => return Err(UsageError::AlreadyExtending),
            _ => return Err(UsageError::NotHeld),
        };
        if !lease.believes(now) {
            self.events.push_back(Event::NotExtended {
                failure: Failure::LeaseExpired,
                nodes: Tally::default(),
            });
            return Ok(());
        }
        let round = QuorumRound::extend(lease.token, now);
        self.next_round_id();
        self.excluded = NodeSet::EMPTY;
        self.send_to_all(round.op(&self.params));
        self.phase = Phase::Extending { lease, round };
        Ok(())
    }

    /// Stops believing at once, then sends a release to all `N` nodes. An acquisition in
    /// progress is abandoned and released too. Releasing twice does nothing.
    pub fn release(&mut self, now: Millis) {
        let token = match &self.phase {
            Phase::Acquiring(round) => round.token,
            Phase::Holding { lease, .. } | Phase::Extending { lease, .. } => lease.token,
            // A failed round already released its keys; nothing is held while backing off.
            Phase::BackingOff { .. } => {
                self.phase = Phase::Finished;
                return;
            }
            Phase::Releasing(_) | Phase::Finished => return,
        };
        let release = ReleaseRound::new(token, now);
        self.next_round_id();
        self.send_to_all(release.op(&self.params));
        self.phase = Phase::Releasing(release);
    }

    /// Whether a client whose clock reads `now` may act as the holder: it holds a lease and
    /// `now` is before the lease's deadline.
    pub fn believes(&self, now: Millis) -> bool {
        self.lease().is_some_and(|lease| lease.believes(now))
    }

    /// The current lease, while the lock is held (also during an extension).
    pub fn lease(&self) -> Option<&Lease> {
        match &self.phase {
            Phase::Holding { lease, .. } | Phase::Extending { lease, .. } => Some(lease),
            _ => None,
        }
    }

    /// Whether the lock has nothing more to do (released, or never acquired).
    pub fn is_finished(&self) -> bool {
        self.phase == Phase::Finished
    }

    /// How many acquisition rounds have started.
    pub fn attempts(&self) -> u32 {
        self.attempt
    }

    fn next_round_id(&mut self) {
        self.round = RoundId(self.round.0.wrapping_add(1));
    }

    fn send_to_all(&mut self, op: super::command::Op) {
        let round = self.round;
        self.commands
            .extend((0..self.params.node_count).map(|node| Command {
                node: NodeId(node),
                round,
                op,
            }));
    }

    fn begin_round(&mut self, now: Millis) {
        // A fresh token per round: a late release of an earlier round must never match the
        // keys of a later one.
        let token = Token::random(&mut self.rng);
        let round = QuorumRound::acquire(token, now);
        self.attempt += 1;
        self.next_round_id();
        self.excluded = NodeSet::EMPTY;
        self.send_to_all(round.op(&self.params));
        self.phase = Phase::Acquiring(round);
    }

    fn finish_acquire(&mut self, now: Millis) {
        let Phase::Acquiring(round) = self.phase else {
            return;
        };
        match round.finish_excluding(&self.params, now, self.excluded) {
            RoundOutcome::Won(lease) => {
                self.events.push_back(Event::Acquired {
                    token: lease.token,
                    validity: lease.validity,
                    deadline: lease.deadline,
                    nodes: lease.tally,
                });
                self.phase = Phase::Holding {
                    lease,
                    expiry_reported: false,
                };
            }
            RoundOutcome::Lost(failure) => {
                // Redlock step 5: release on *all* nodes, also those that said no or did not
                // answer — a timed-out SET may still have been applied.
                let release = ReleaseRound::new(round.token, now);
                self.next_round_id();
                self.send_to_all(release.op(&self.params));
                if self.attempt < self.retry.attempts {
                    let at = now + self.backoff();
                    self.events.push_back(Event::Retrying {
                        attempt: self.attempt,
                        failure,
                        at,
                    });
                    self.phase = Phase::BackingOff { until: at };
                } else {
                    self.events.push_back(Event::NotAcquired {
                        failure,
                        attempts: self.attempt,
                        nodes: round.tally,
                    });
                    self.phase = Phase::Finished;
                }
            }
        }
    }

    fn finish_extend(&mut self, now: Millis) {
        let Phase::Extending { lease, round } = self.phase else {
            return;
        };
        let lease = match round.finish_excluding(&self.params, now, self.excluded) {
            RoundOutcome::Won(extended) => {
                self.events.push_back(Event::Extended {
                    validity: extended.validity,
                    deadline: extended.deadline,
                    nodes: extended.tally,
                });
                extended
            }
            RoundOutcome::Lost(failure) => {
                self.events.push_back(Event::NotExtended {
                    failure,
                    nodes: round.tally,
                });
                lease
            }
        };
        self.phase = Phase::Holding {
            lease,
            expiry_reported: false,
        };
    }

    /// A delay drawn uniformly from the retry range (the modulo bias is far below anything
    /// that matters for desynchronising clients).
    fn backoff(&mut self) -> Millis {
        let span = self.retry.delay_max.as_u64() - self.retry.delay_min.as_u64();
        let jitter = match span.checked_add(1) {
            Some(width) => self.rng.next_u64() % width,
            None => self.rng.next_u64(),
        };
        self.retry.delay_min + Millis(jitter)
    }
}

#[cfg(test)]
mod tests {
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;

    use super::*;
    use crate::proto::{DriftPolicy, NodeResult, NodeSet, Op, RoundDecision};

    fn config() -> Config {
        let mut config = Config::new(3);
        config.drift = DriftPolicy::fixed(Millis(1));
        config.round_timeout = Millis(5);
        config.retry = RetryPolicy {
            attempts: 2,
            delay_min: Millis(20),
            delay_max: Millis(30),
        };
        config
    }

    /// A lock of ttl 10 (drift 1) that starts acquiring at time 0.
    fn start(config: &Config) -> Lock<ChaCha8Rng> {
        Lock::acquire(config, Millis(10), ChaCha8Rng::seed_from_u64(1), Millis(0)).unwrap()
    }

    fn drain(lock: &mut Lock<ChaCha8Rng>) -> Vec<Command> {
        std::iter::from_fn(|| lock.poll_command()).collect()
    }

    /// Sends every pending command and answers each with `reply` at `now`.
    fn answer_all(lock: &mut Lock<ChaCha8Rng>, reply: Reply, now: Millis) {
        for command in drain(lock) {
            lock.handle_reply(command.round, command.node, reply, now);
        }
    }

    #[test]
    fn a_lost_round_releases_everywhere_backs_off_and_retries_with_a_fresh_token() {
        let mut lock = start(&config());
        let sets = drain(&mut lock);
        assert_eq!(sets.len(), 3);
        let Op::SetNxPx { token: first, .. } = sets[0].op else {
            panic!("expected SET, got {:?}", sets[0].op)
        };
        lock.handle_reply(sets[0].round, NodeId(0), Reply::Applied, Millis(1));
        lock.handle_reply(sets[1].round, NodeId(1), Reply::NotApplied, Millis(1));
        lock.handle_reply(sets[2].round, NodeId(2), Reply::Failed, Millis(1));

        let releases = drain(&mut lock);
        let released: NodeSet = releases.iter().fold(NodeSet::EMPTY, |mut set, c| {
            set.insert(c.node);
            set
        });
        assert_eq!(released, NodeSet::first(3), "release goes to all N nodes");
        assert!(
            releases
                .iter()
                .all(|c| c.op == Op::DelIfEq { token: first })
        );
        let Some(Event::Retrying { attempt: 1, at, .. }) = lock.poll_event() else {
            panic!("expected a retry")
        };
        assert!(
            (Millis(21)..=Millis(31)).contains(&at),
            "back-off {at} outside the range"
        );
        assert_eq!(lock.poll_timeout(), Some(at));

        lock.handle_timeout(at - Millis(1));
        assert!(
            drain(&mut lock).is_empty(),
            "nothing happens before the back-off ends"
        );
        lock.handle_timeout(at);
        let retry = drain(&mut lock);
        let Op::SetNxPx { token: second, .. } = retry[0].op else {
            panic!("expected SET, got {:?}", retry[0].op)
        };
        assert_ne!(first, second);
        // A late answer to the first round is ignored.
        lock.handle_reply(sets[1].round, NodeId(1), Reply::Applied, at);
        assert!(lock.poll_event().is_none());

        for command in &retry {
            lock.handle_reply(command.round, command.node, Reply::Applied, at + Millis(2));
        }
        assert_eq!(
            lock.poll_event(),
            Some(Event::Acquired {
                token: second,
                validity: Millis(7),
                deadline: at + Millis(9),
                nodes: lock.lease().unwrap().tally,
            })
        );
        assert!(lock.believes(at + Millis(8)));
        assert!(!lock.believes(at + Millis(9)));
    }

    #[test]
    fn at_quorum_a_silent_minority_costs_nothing_and_still_gets_the_release() {
        let mut lock = start(&config());
        let sets = drain(&mut lock);
        lock.handle_reply(sets[0].round, NodeId(0), Reply::Applied, Millis(1));
        assert!(lock.poll_event().is_none(), "one of three is not a quorum");
        lock.handle_reply(sets[1].round, NodeId(1), Reply::Applied, Millis(2));
        // Decided at the second yes, long before the round's deadline of 5.
        let Some(Event::Acquired {
            validity, deadline, ..
        }) = lock.poll_event()
        else {
            panic!("expected the lock at quorum")
        };
        assert_eq!((validity, deadline), (Millis(7), Millis(9)));
        let lease = *lock.lease().unwrap();
        assert_eq!(lease.tally.result(NodeId(2)), NodeResult::NoReply);
        // The straggler's late yes changes nothing ...
        lock.handle_reply(sets[2].round, NodeId(2), Reply::Applied, Millis(3));
        assert!(lock.poll_event().is_none());
        assert_eq!(lock.lease(), Some(&lease));
        // ... and the release still goes to it, so its late key does not outlive the lock.
        lock.release(Millis(4));
        let releases: Vec<NodeId> = drain(&mut lock).iter().map(|c| c.node).collect();
        assert_eq!(releases, vec![NodeId(0), NodeId(1), NodeId(2)]);
    }

    #[test]
    fn with_all_replies_a_silent_minority_costs_the_whole_round_timeout() {
        let mut config = config();
        config.decision = RoundDecision::AllReplies;
        let mut lock = start(&config);
        let sets = drain(&mut lock);
        lock.handle_reply(sets[0].round, NodeId(0), Reply::Applied, Millis(1));
        lock.handle_reply(sets[1].round, NodeId(1), Reply::Applied, Millis(2));
        assert!(lock.poll_event().is_none(), "it waits for n3");
        assert_eq!(lock.poll_timeout(), Some(Millis(5)));
        lock.handle_timeout(Millis(5));
        let Some(Event::Acquired {
            validity, deadline, ..
        }) = lock.poll_event()
        else {
            panic!("expected the lock at the deadline")
        };
        // The same deadline (anchored at T1), less validity left.
        assert_eq!((validity, deadline), (Millis(4), Millis(9)));
    }

    #[test]
    fn at_quorum_an_excluded_yes_does_not_decide_the_round() {
        let mut lock = start(&config());
        let sets = drain(&mut lock);
        lock.exclude_from_quorum(NodeId(0));
        lock.handle_reply(sets[0].round, NodeId(0), Reply::Applied, Millis(1));
        lock.handle_reply(sets[1].round, NodeId(1), Reply::Applied, Millis(1));
        assert!(
            lock.poll_event().is_none(),
            "one voter said yes, n3 may still"
        );
        lock.handle_reply(sets[2].round, NodeId(2), Reply::Applied, Millis(2));
        assert!(matches!(lock.poll_event(), Some(Event::Acquired { .. })));
    }

    #[test]
    fn the_last_lost_round_reports_not_acquired_and_finishes() {
        let mut config = config();
        config.retry.attempts = 1;
        let mut lock = start(&config);
        let sets = drain(&mut lock);
        // Nobody answers: the round deadline decides it.
        assert_eq!(lock.poll_timeout(), Some(Millis(5)));
        lock.handle_timeout(Millis(5));
        assert_eq!(
            drain(&mut lock).len(),
            3,
            "release on all nodes, even silent ones"
        );
        assert!(matches!(
            lock.poll_event(),
            Some(Event::NotAcquired {
                failure: Failure::NoQuorum {
                    applied: 0,
                    quorum: 2
                },
                attempts: 1,
                ..
            })
        ));
        assert!(lock.is_finished());
        lock.handle_reply(sets[0].round, NodeId(0), Reply::Applied, Millis(6));
        assert!(lock.poll_event().is_none());
    }

    #[test]
    fn extension_needs_a_majority_and_a_live_lease() {
        let mut lock = start(&config());
        answer_all(&mut lock, Reply::Applied, Millis(0));
        assert!(matches!(
            lock.poll_event(),
            Some(Event::Acquired {
                deadline: Millis(9),
                ..
            })
        ));

        lock.extend(Millis(4)).unwrap();
        assert_eq!(lock.extend(Millis(4)), Err(UsageError::AlreadyExtending));
        let extends = drain(&mut lock);
        lock.handle_reply(extends[0].round, NodeId(0), Reply::Applied, Millis(4));
        lock.handle_reply(extends[1].round, NodeId(1), Reply::NotApplied, Millis(4));
        lock.handle_reply(extends[2].round, NodeId(2), Reply::NotApplied, Millis(4));
        assert!(matches!(lock.poll_event(), Some(Event::NotExtended { .. })));
        assert_eq!(
            lock.lease().unwrap().deadline,
            Millis(9),
            "the old deadline stands"
        );

        lock.extend(Millis(5)).unwrap();
        answer_all(&mut lock, Reply::Applied, Millis(6));
        assert!(matches!(
            lock.poll_event(),
            Some(Event::Extended {
                deadline: Millis(14),
                ..
            })
        ));

        lock.extend(Millis(14)).unwrap();
        assert!(
            drain(&mut lock).is_empty(),
            "no extension is sent for an expired lease"
        );
        assert!(matches!(
            lock.poll_event(),
            Some(Event::NotExtended {
                failure: Failure::LeaseExpired,
                ..
            })
        ));
    }

    #[test]
    fn release_stops_the_belief_before_any_node_answers() {
        let mut lock = start(&config());
        answer_all(&mut lock, Reply::Applied, Millis(0));
        assert!(matches!(lock.poll_event(), Some(Event::Acquired { .. })));
        assert!(lock.believes(Millis(1)));
        lock.release(Millis(1));
        assert!(!lock.believes(Millis(1)));
        let releases = drain(&mut lock);
        assert_eq!(releases.len(), 3);
        for command in releases {
            lock.handle_reply(command.round, command.node, Reply::Applied, Millis(2));
        }
        assert!(
            matches!(lock.poll_event(), Some(Event::Released { nodes }) if nodes.applied.len() == 3)
        );
        assert!(lock.is_finished());
        lock.release(Millis(3));
        assert!(drain(&mut lock).is_empty(), "releasing twice does nothing");
    }

    #[test]
    fn an_excluded_node_gets_the_set_and_the_release_but_no_vote() {
        let mut config = Config::new(3);
        config.retry.attempts = 2;
        let rng = ChaCha8Rng::seed_from_u64(1);
        let mut lock = Lock::acquire(&config, Millis(1_000), rng, Millis(0)).unwrap();
        let first = drain(&mut lock);
        assert_eq!(first.len(), 3);
        let round = first[0].round;

        lock.exclude_from_quorum(NodeId(0));
        lock.handle_reply(round, NodeId(0), Reply::Applied, Millis(1));
        lock.handle_reply(round, NodeId(1), Reply::Applied, Millis(1));
        lock.handle_reply(round, NodeId(2), Reply::NotApplied, Millis(2));
        // Without the exclusion two of three would have won.
        assert!(matches!(
            lock.poll_event(),
            Some(Event::Retrying {
                failure: Failure::NoQuorum {
                    applied: 1,
                    quorum: 2
                },
                ..
            })
        ));
        let release = drain(&mut lock);
        assert_eq!(release.len(), 3, "the release goes to every node");
        assert!(release.iter().all(|c| matches!(c.op, Op::DelIfEq { .. })));

        // The next round counts every node again.
        let at = lock.poll_timeout().unwrap();
        lock.handle_timeout(at);
        let second = drain(&mut lock);
        let round = second[0].round;
        lock.handle_reply(round, NodeId(0), Reply::Applied, at);
        lock.handle_reply(round, NodeId(1), Reply::Applied, at);
        lock.handle_reply(round, NodeId(2), Reply::NotApplied, at);
        assert!(matches!(lock.poll_event(), Some(Event::Acquired { .. })));
    }

    #[test]
    fn exclusion_outside_a_round_does_nothing() {
        let config = Config::new(3);
        let rng = ChaCha8Rng::seed_from_u64(2);
        let mut lock = Lock::acquire(&config, Millis(1_000), rng, Millis(0)).unwrap();
        let round = drain(&mut lock)[0].round;
        for node in 0..3 {
            lock.handle_reply(round, NodeId(node), Reply::Applied, Millis(1));
        }
        assert!(matches!(lock.poll_event(), Some(Event::Acquired { .. })));
        lock.exclude_from_quorum(NodeId(1));
        lock.extend(Millis(2)).unwrap();
        let round = drain(&mut lock)[0].round;
        lock.handle_reply(round, NodeId(0), Reply::Applied, Millis(3));
        lock.handle_reply(round, NodeId(1), Reply::Applied, Millis(3));
        lock.handle_reply(round, NodeId(2), Reply::NotApplied, Millis(3));
        assert!(matches!(lock.poll_event(), Some(Event::Extended { .. })));
    }
}
