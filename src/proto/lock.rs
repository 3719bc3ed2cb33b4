//! [`Lock`]: the whole life of one Redlock lock, with the queues and the random generator a
//! driver needs around the pure [`LockState`].

use std::collections::VecDeque;

use rand_core::RngCore;

use super::command::{Command, NodeId, RoundId, Token};
use super::config::{Config, ConfigError, LockParams, RetryPolicy};
use super::outcome::Heard;
use super::round::{Lease, RoundKind};
use super::state::{Answer, Effects, Entropy, LockEvent, LockPhase, LockState, UsageError};
use crate::time::Millis;

/// One lock on one resource across `N` nodes, from the first `SET` to the last release.
///
/// The lock never performs I/O and never reads a clock: every input carries `now`, the
/// *client's* clock reading, and every output is a [`Command`] for some driver to send or a
/// [`LockEvent`] for the caller. Randomness (tokens, retry jitter) comes from the `R` you pass
/// in — a CSPRNG in production, a seeded generator in the simulator.
///
/// A driver loops on the `poll_*` method of the operation it started
/// ([`poll_acquisition`](Lock::poll_acquisition), [`poll_extension`](Lock::poll_extension),
/// [`poll_release`](Lock::poll_release)): it sends the commands it is given, feeds each answer
/// to [`handle_reply`](Lock::handle_reply), waits when told to and then calls
/// [`handle_timeout`](Lock::handle_timeout), until the operation is done. The lower-level
/// queues ([`poll_command`](Lock::poll_command), [`poll_event`](Lock::poll_event),
/// [`poll_timeout`](Lock::poll_timeout)) are there for a driver that wants every event, as the
/// simulator does.
///
/// The life cycle itself is `LockState` (crate-internal), a `Copy` value with pure
/// transitions; this type only adds the generator and the queues, so the model checker, which
/// drives `LockState` directly, checks exactly the algorithm that ships.
#[derive(Clone, Debug)]
pub struct Lock<R> {
    pub(super) params: LockParams,
    rng: R,
    pub(super) state: LockState,
    pub(super) commands: VecDeque<Command>,
    pub(super) events: VecDeque<LockEvent>,
    /// The event that ended the operation in progress, once drained (see `drive.rs`).
    pub(super) ended: Option<LockEvent>,
    /// Every answer to the last acquisition `SET` round.
    pub(super) heard_set: Heard,
    /// Every answer to the last round of the acquisition (the `SET` round, or its fencing
    /// write-back), whose failure the outcome classifies.
    pub(super) heard_last: Heard,
}

/// A random generator as the lock's [`Entropy`]: tokens and back-off delays drawn from it.
struct Drawn<'a, R>(&'a mut R);

impl<R: RngCore> Entropy for Drawn<'_, R> {
    fn token(&mut self) -> Token {
        Token::random(self.0)
    }

    /// A delay drawn uniformly from the retry range (the modulo bias is far below anything
    /// that matters for desynchronising clients).
    fn backoff(&mut self, retry: &RetryPolicy) -> Millis {
        let span = retry.delay_max.as_u64() - retry.delay_min.as_u64();
        let jitter = match span.checked_add(1) {
            Some(width) => self.0.next_u64() % width,
            None => self.0.next_u64(),
        };
        retry.delay_min + Millis(jitter)
    }
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
            rng,
            state: LockState::new(),
            commands: VecDeque::new(),
            events: VecDeque::new(),
            ended: None,
            heard_set: Heard::default(),
            heard_last: Heard::default(),
        };
        let effects = lock
            .state
            .begin(&lock.params, now, &mut Drawn(&mut lock.rng));
        lock.carry_out(effects);
        Ok(lock)
    }

    /// The resolved numbers of this lock (quorum, ttl, drift, round timeout, retries).
    pub fn params(&self) -> &LockParams {
        &self.params
    }

    /// The lock's life-cycle value.
    #[cfg(test)]
    pub(crate) fn state(&self) -> &LockState {
        &self.state
    }

    /// The next command for a driver to send, if any.
    #[must_use]
    pub fn poll_command(&mut self) -> Option<Command> {
        self.commands.pop_front()
    }

    /// The next event for the caller, if any.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<LockEvent> {
        self.events.pop_front()
    }

    /// The client time at which [`handle_timeout`](Lock::handle_timeout) has work to do: a
    /// round's deadline, the end of a back-off, or the lease's deadline.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Millis> {
        self.state.poll_timeout(&self.params)
    }

    /// Feeds one node's answer to a command of round `round`: a [`Reply`](super::Reply), or an
    /// [`Answer`] that says whether the node's yes counts toward the quorum (a driver passes
    /// [`Answer::guarded`] for a node that restarted less than a TTL ago). Answers to an older
    /// round are ignored: they belong to a release that nobody waits for, or arrived too late.
    pub fn handle_reply(
        &mut self,
        round: RoundId,
        node: NodeId,
        answer: impl Into<Answer>,
        now: Millis,
    ) {
        let answer = answer.into();
        // An answer to a round the lock no longer waits for is a straggler's: kept apart, so
        // the record tells what was known at the decision.
        let late = !self.is_waiting_for(round);
        self.heard_set.record(round, node, answer, late);
        self.heard_last.record(round, node, answer, late);
        let effects = self.state.handle_reply(
            &self.params,
            round,
            node,
            answer,
            now,
            &mut Drawn(&mut self.rng),
        );
        self.carry_out(effects);
    }

    /// Feeds an answer that a driver read after it had stopped waiting for its round: a
    /// straggler of a decided round, read on the node's next request or on a task of its own.
    /// `command` is the one the answer belongs to, which may be another lock's (a connection
    /// serves every lock of a client in turn): only an answer to this lock's last acquisition
    /// `SET` round (the same round and operation, so the same token) is recorded, in
    /// [`acquisition`](Lock::acquisition), and it never changes the lock's state: the round
    /// was decided without it. Returns whether it was recorded.
    pub fn handle_late_reply(&mut self, command: &Command, answer: impl Into<Answer>) -> bool {
        self.heard_set.handle_late_reply(command, answer.into())
    }

    /// What each node answered in the last acquisition `SET` round, also after it was decided
    /// (the stragglers handed in since, by [`handle_reply`](Lock::handle_reply) or
    /// [`handle_late_reply`](Lock::handle_late_reply)). For a held lock, the winning round:
    /// which nodes hold the key, refused it, failed, or have not answered yet.
    pub fn acquisition(&self) -> &Heard {
        &self.heard_set
    }

    /// Does whatever is due at client time `now`; calling it early does nothing.
    pub fn handle_timeout(&mut self, now: Millis) {
        let effects = self
            .state
            .handle_timeout(&self.params, now, &mut Drawn(&mut self.rng));
        self.carry_out(effects);
    }

    /// Asks all `N` nodes to extend the lease by a full TTL from now.
    ///
    /// Past the lease's deadline the extension is refused at once with
    /// [`LockEvent::NotExtended`] and [`Failure::LeaseExpired`](super::Failure::LeaseExpired): keys
    /// that may have expired cannot be extended back into a lock.
    pub fn extend(&mut self, now: Millis) -> Result<(), UsageError> {
        let effects = self.state.extend(&self.params, now)?;
        self.ended = None;
        self.carry_out(effects);
        Ok(())
    }

    /// Stops believing at once, then sends a release to all `N` nodes. An acquisition in
    /// progress is abandoned and released too. Releasing twice does nothing.
    pub fn release(&mut self, now: Millis) {
        let effects = self.state.release(&self.params, now);
        self.ended = None;
        self.carry_out(effects);
    }

    /// Whether a client whose clock reads `now` may act as the holder: it holds a lease and
    /// `now` is before the lease's deadline.
    pub fn believes(&self, now: Millis) -> bool {
        self.state.believes(now)
    }

    /// The current lease, while the lock is held (also during an extension).
    pub fn lease(&self) -> Option<&Lease> {
        self.state.lease()
    }

    /// Whether the lock has nothing more to do (released, or never acquired).
    pub fn is_finished(&self) -> bool {
        self.state.is_finished()
    }

    /// How many acquisition rounds have started.
    pub fn attempts(&self) -> u32 {
        self.state.attempts()
    }

    /// Queues a transition's request for every node and its event.
    fn carry_out(&mut self, effects: Effects) {
        if let Some(request) = effects.request {
            // A new acquisition round (or its write-back) starts a fresh record of answers;
            // the next node of a sequential round adds to its round's record.
            if let LockPhase::Acquiring(round) = self.state.phase()
                && request.round != self.heard_last.round()
            {
                let heard = Heard::of(request, self.params.node_count);
                if round.kind == RoundKind::Acquire {
                    self.heard_set = heard;
                }
                self.heard_last = heard;
            }
            let to = request.to(self.params.node_count);
            self.commands.extend(to.iter().map(|node| Command {
                node,
                round: request.round,
                op: request.op,
            }));
        }
        self.events.extend(effects.event);
    }
}

#[cfg(test)]
mod tests {
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;

    use super::*;
    use crate::proto::{
        Answer, Contact, DriftPolicy, FailedRound, Failure, NodeResult, NodeSet, Op, Reply,
        RetryToken, RoundDecision, Token, UnlockMode,
    };

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
        let Some(LockEvent::Retrying { attempt: 1, at, .. }) = lock.poll_event() else {
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
            Some(LockEvent::Acquired {
                token: second,
                validity: Millis(7),
                deadline: at + Millis(9),
                nodes: lock.lease().unwrap().tally,
                fence: None,
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
        let Some(LockEvent::Acquired {
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
    fn the_record_tells_what_was_known_at_the_decision_and_takes_a_straggler_later() {
        let mut lock = start(&config());
        let sets = drain(&mut lock);
        lock.handle_reply(sets[0].round, NodeId(0), Reply::Applied, Millis(1));
        lock.handle_reply(sets[1].round, NodeId(1), Reply::Applied, Millis(2));
        let lease = *lock.lease().expect("decided at quorum");
        let heard = *lock.acquisition();
        assert_eq!(heard.round(), sets[0].round);
        assert_eq!(heard.result(NodeId(2)), NodeResult::NoReply);
        assert_eq!(heard.unanswered(), NodeSet::from_bits(0b100));
        assert_eq!(
            heard.may_hold_key(),
            NodeSet::first(3),
            "n3's SET may still land"
        );
        assert!(heard.late().is_empty());

        // The straggler's yes comes while the lock is held: recorded, apart, and the lock's
        // state does not move.
        lock.handle_reply(sets[2].round, NodeId(2), Reply::Applied, Millis(3));
        let heard = *lock.acquisition();
        assert_eq!(heard.result(NodeId(2)), NodeResult::Applied);
        assert_eq!(heard.at_decision(NodeId(2)), NodeResult::NoReply);
        assert_eq!(heard.late(), NodeSet::from_bits(0b100));
        assert_eq!(heard.tally().applied, NodeSet::first(3));
        assert_eq!(heard.decided().applied, NodeSet::from_bits(0b011));
        assert!(heard.unanswered().is_empty());
        assert_eq!(
            heard.iter().map(|(_, result)| result).collect::<Vec<_>>(),
            vec![NodeResult::Applied; 3]
        );
        assert_eq!(lock.lease(), Some(&lease));
        assert!(
            lock.poll_event()
                .is_some_and(|e| matches!(e, LockEvent::Acquired { .. }))
        );
        assert!(lock.poll_event().is_none(), "a straggler raises no event");

        // The release goes to every node whatever the record says, and its own answers are
        // not the acquisition's.
        lock.release(Millis(4));
        let releases = drain(&mut lock);
        assert_eq!(releases.len(), 3);
        for command in &releases {
            lock.handle_reply(command.round, command.node, Reply::NotApplied, Millis(5));
        }
        assert_eq!(lock.acquisition(), &heard);
    }

    #[test]
    fn a_late_reply_is_recorded_only_for_this_locks_own_set() {
        let mut lock = start(&config());
        let sets = drain(&mut lock);
        lock.handle_reply(sets[0].round, NodeId(0), Reply::Applied, Millis(1));
        lock.handle_reply(sets[1].round, NodeId(1), Reply::Applied, Millis(1));
        // Another lock of the same client counts its rounds from the same start: the same
        // round and node, another token.
        let Op::SetNxPx { ttl, .. } = sets[2].op else {
            panic!("expected SET, got {:?}", sets[2].op)
        };
        let foreign = Command {
            op: Op::SetNxPx {
                token: Token(7),
                ttl,
            },
            ..sets[2]
        };
        assert!(!lock.handle_late_reply(&foreign, Reply::Applied));
        let release = Command {
            op: Op::DelIfEq { token: Token(7) },
            ..sets[2]
        };
        assert!(!lock.handle_late_reply(&release, Reply::Applied));
        assert_eq!(lock.acquisition().result(NodeId(2)), NodeResult::NoReply);

        let young = Answer::guarded(Reply::Applied);
        assert!(lock.handle_late_reply(&sets[2], young));
        assert!(
            !lock.handle_late_reply(&sets[2], Reply::NotApplied),
            "the first answer counts"
        );
        let heard = lock.acquisition();
        assert_eq!(heard.result(NodeId(2)), NodeResult::Applied);
        assert_eq!(heard.late(), NodeSet::from_bits(0b100));
        assert_eq!(heard.restarted(), NodeSet::from_bits(0b100));
    }

    #[test]
    fn with_write_back_a_set_straggler_during_the_fence_round_is_the_acquisitions() {
        let mut config = config();
        config.fencing = crate::proto::Fencing::WriteBack;
        let mut lock = start(&config);
        let sets = drain(&mut lock);
        // Counters that differ: only n1 stands at the fence, so it is written back.
        for (command, counter) in sets[..2].iter().zip([4, 3]) {
            let answer = Answer::voting(Reply::Applied).with_counter(counter);
            lock.handle_reply(command.round, command.node, answer, Millis(1));
        }
        let fences = drain(&mut lock);
        assert!(matches!(fences[0].op, Op::RaiseFence { to: 4, .. }));
        lock.handle_reply(sets[2].round, NodeId(2), Reply::NotApplied, Millis(2));
        for command in &fences {
            lock.handle_reply(command.round, command.node, Reply::Applied, Millis(2));
        }
        assert!(matches!(
            lock.poll_event(),
            Some(LockEvent::Acquired { .. })
        ));
        let heard = lock.acquisition();
        assert_eq!(heard.round(), sets[0].round, "the SET round, not the fence");
        assert_eq!(heard.result(NodeId(2)), NodeResult::NotApplied);
        assert_eq!(heard.late(), NodeSet::from_bits(0b100));
        assert_eq!(heard.may_hold_key(), NodeSet::from_bits(0b011));
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
        let Some(LockEvent::Acquired {
            validity, deadline, ..
        }) = lock.poll_event()
        else {
            panic!("expected the lock at the deadline")
        };
        // The same deadline (anchored at T1), less validity left.
        assert_eq!((validity, deadline), (Millis(4), Millis(9)));
    }

    #[test]
    fn sequential_asks_one_node_at_a_time_and_each_dead_node_costs_its_own_timeout() {
        let mut config = config();
        config.contact = Contact::Sequential;
        config.decision = RoundDecision::AllReplies;
        let mut lock = start(&config);
        let first = drain(&mut lock);
        assert_eq!(first.len(), 1, "n1 alone is asked at T1");
        assert_eq!(first[0].node, NodeId(0));
        // n1 never answers: its own timeout, then n2.
        assert_eq!(lock.poll_timeout(), Some(Millis(5)));
        lock.handle_timeout(Millis(5));
        let second = drain(&mut lock);
        assert_eq!(
            (second.len(), second[0].node, second[0].round),
            (1, NodeId(1), first[0].round),
            "n2 is asked next, in the same round"
        );
        assert_eq!(
            lock.poll_timeout(),
            Some(Millis(10)),
            "n2's timeout runs from its request"
        );
        lock.handle_reply(second[0].round, NodeId(1), Reply::Applied, Millis(6));
        let third = drain(&mut lock);
        assert_eq!(
            third.iter().map(|c| c.node).collect::<Vec<_>>(),
            [NodeId(2)]
        );
        lock.handle_reply(third[0].round, NodeId(2), Reply::Applied, Millis(8));
        // Two of three said yes, but n1's timeout and the others' answers took 8 of the
        // lease's 9 (ttl 10 − drift 1): the validity left is 1. Each move was told.
        let events: Vec<LockEvent> = std::iter::from_fn(|| lock.poll_event()).collect();
        let [
            LockEvent::Asking {
                node: NodeId(1),
                silent: Some(NodeId(0)),
            },
            LockEvent::Asking {
                node: NodeId(2),
                silent: None,
            },
            LockEvent::Acquired { validity, .. },
        ] = events[..]
        else {
            panic!("expected two moves on and the lock, got {events:?}")
        };
        assert_eq!(validity, Millis(1));
        assert_eq!(lock.acquisition().result(NodeId(0)), NodeResult::NoReply);
        assert_eq!(lock.acquisition().result(NodeId(2)), NodeResult::Applied);
    }

    #[test]
    fn sequential_two_dead_nodes_leave_no_validity_where_a_multiplexed_round_has_some() {
        let mut config = Config::new(5);
        config.drift = DriftPolicy::fixed(Millis(1));
        config.round_timeout = Millis(3);
        config.decision = RoundDecision::AllReplies;
        config.retry.attempts = 1;
        let dead = [NodeId(0), NodeId(1)];
        let run = |config: &Config| {
            let mut lock =
                Lock::acquire(config, Millis(6), ChaCha8Rng::seed_from_u64(1), Millis(0)).unwrap();
            let mut now = Millis(0);
            loop {
                // A live node answers at once, which may ask the next node.
                while let Some(command) = lock.poll_command() {
                    if !dead.contains(&command.node) {
                        lock.handle_reply(command.round, command.node, Reply::Applied, now);
                    }
                }
                if let Some(event) = std::iter::from_fn(|| lock.poll_event())
                    .find(|event| !matches!(event, LockEvent::Asking { .. }))
                {
                    return event;
                }
                now = lock.poll_timeout().expect("a round in flight");
                lock.handle_timeout(now);
            }
        };
        let LockEvent::NotAcquired { failure, .. } = run(&Config {
            contact: Contact::Sequential,
            ..config
        }) else {
            panic!("the sequential round must fail")
        };
        assert_eq!(failure, Failure::ValidityExhausted { elapsed: Millis(6) });
        assert!(
            matches!(
                run(&config),
                LockEvent::Acquired {
                    validity: Millis(2),
                    ..
                }
            ),
            "one timeout for both dead nodes: 6 − 3 − 1 left"
        );
    }

    #[test]
    fn at_quorum_an_excluded_yes_does_not_decide_the_round() {
        let mut lock = start(&config());
        let sets = drain(&mut lock);
        lock.handle_reply(
            sets[0].round,
            NodeId(0),
            Answer::guarded(Reply::Applied),
            Millis(1),
        );
        lock.handle_reply(sets[1].round, NodeId(1), Reply::Applied, Millis(1));
        assert!(
            lock.poll_event().is_none(),
            "one voter said yes, n3 may still"
        );
        lock.handle_reply(sets[2].round, NodeId(2), Reply::Applied, Millis(2));
        assert!(matches!(
            lock.poll_event(),
            Some(LockEvent::Acquired { .. })
        ));
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
            Some(LockEvent::NotAcquired {
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
            Some(LockEvent::Acquired {
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
        assert!(matches!(
            lock.poll_event(),
            Some(LockEvent::NotExtended { .. })
        ));
        assert_eq!(
            lock.lease().unwrap().deadline,
            Millis(9),
            "the old deadline stands"
        );

        lock.extend(Millis(5)).unwrap();
        answer_all(&mut lock, Reply::Applied, Millis(6));
        assert!(matches!(
            lock.poll_event(),
            Some(LockEvent::Extended {
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
            Some(LockEvent::NotExtended {
                failure: Failure::LeaseExpired,
                ..
            })
        ));
    }

    #[test]
    fn release_stops_the_belief_before_any_node_answers() {
        let mut lock = start(&config());
        answer_all(&mut lock, Reply::Applied, Millis(0));
        assert!(matches!(
            lock.poll_event(),
            Some(LockEvent::Acquired { .. })
        ));
        assert!(lock.believes(Millis(1)));
        lock.release(Millis(1));
        assert!(!lock.believes(Millis(1)));
        let releases = drain(&mut lock);
        assert_eq!(releases.len(), 3);
        for command in releases {
            lock.handle_reply(command.round, command.node, Reply::Applied, Millis(2));
        }
        assert!(
            matches!(lock.poll_event(), Some(LockEvent::Released { nodes }) if nodes.applied.len() == 3)
        );
        assert!(lock.is_finished());
        lock.release(Millis(3));
        assert!(drain(&mut lock).is_empty(), "releasing twice does nothing");
    }

    #[test]
    fn a_get_then_del_release_deletes_only_where_its_get_read_its_own_value() {
        let mut config = config();
        config.unlock = UnlockMode::GetThenDel;
        assert!(
            config.validate().is_err(),
            "a failed round cannot wait for a GET"
        );
        config.failed_round = FailedRound::Keep;
        let mut lock = start(&config);
        answer_all(&mut lock, Reply::Applied, Millis(0));
        let Some(LockEvent::Acquired { token, .. }) = lock.poll_event() else {
            panic!("acquired")
        };
        lock.release(Millis(1));
        let gets = drain(&mut lock);
        assert!(gets.iter().all(|c| c.op == Op::GetEq { token }));
        // n1 and n2 still hold our value, n3's key is gone: only n1 and n2 get a DEL.
        for command in &gets {
            let read = if command.node == NodeId(2) {
                Reply::NotApplied
            } else {
                Reply::Applied
            };
            lock.handle_reply(command.round, command.node, read, Millis(2));
        }
        let dels = drain(&mut lock);
        let to: Vec<NodeId> = dels.iter().map(|c| c.node).collect();
        assert_eq!(to, vec![NodeId(0), NodeId(1)]);
        assert!(dels.iter().all(|c| c.op == Op::Del));
        assert!(
            lock.poll_event().is_none(),
            "the release waits for its DELs"
        );
        for command in dels {
            lock.handle_reply(command.round, command.node, Reply::Applied, Millis(3));
        }
        assert!(drain(&mut lock).is_empty(), "a DEL's yes is no GET's");
        assert!(matches!(
            lock.poll_event(),
            Some(LockEvent::Released { nodes }) if nodes.applied.len() == 2
        ));
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

        lock.handle_reply(round, NodeId(0), Answer::guarded(Reply::Applied), Millis(1));
        lock.handle_reply(round, NodeId(1), Reply::Applied, Millis(1));
        lock.handle_reply(round, NodeId(2), Reply::NotApplied, Millis(2));
        // Without the exclusion two of three would have won.
        assert!(matches!(
            lock.poll_event(),
            Some(LockEvent::Retrying {
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
        assert!(matches!(
            lock.poll_event(),
            Some(LockEvent::Acquired { .. })
        ));
    }

    #[test]
    fn a_guarded_answer_excludes_its_node_for_that_round_only() {
        let config = Config::new(3);
        let rng = ChaCha8Rng::seed_from_u64(2);
        let mut lock = Lock::acquire(&config, Millis(1_000), rng, Millis(0)).unwrap();
        let round = drain(&mut lock)[0].round;
        lock.handle_reply(round, NodeId(0), Answer::guarded(Reply::Applied), Millis(1));
        for node in 1..3 {
            lock.handle_reply(round, NodeId(node), Reply::Applied, Millis(1));
        }
        assert!(matches!(
            lock.poll_event(),
            Some(LockEvent::Acquired { .. })
        ));
        assert_eq!(lock.state().excluded(), NodeSet::from_bits(0b001));
        // The extension round counts every node again.
        lock.extend(Millis(2)).unwrap();
        assert_eq!(lock.state().excluded(), NodeSet::EMPTY);
        let round = drain(&mut lock)[0].round;
        lock.handle_reply(round, NodeId(0), Reply::Applied, Millis(3));
        lock.handle_reply(round, NodeId(1), Reply::NotApplied, Millis(3));
        lock.handle_reply(round, NodeId(2), Reply::Applied, Millis(3));
        assert!(matches!(
            lock.poll_event(),
            Some(LockEvent::Extended { .. })
        ));
        // A guarded answer to a round that is over changes nothing.
        lock.handle_reply(round, NodeId(1), Answer::guarded(Reply::Applied), Millis(4));
        assert_eq!(lock.state().excluded(), NodeSet::EMPTY);
    }

    /// The token of each of a lock's three rounds, every round lost to refusals.
    fn tokens_of_three_lost_rounds(retry_token: RetryToken) -> Vec<Token> {
        let mut config = Config::new(3);
        config.retry.attempts = 3;
        config.retry_token = retry_token;
        let rng = ChaCha8Rng::seed_from_u64(3);
        let mut lock = Lock::acquire(&config, Millis(1_000), rng, Millis(0)).unwrap();
        let mut tokens = Vec::new();
        for _ in 0..3 {
            let round = drain(&mut lock);
            let Op::SetNxPx { token, .. } = round[0].op else {
                panic!("an acquisition round sends SET: {:?}", round[0].op);
            };
            tokens.push(token);
            let now = lock.poll_timeout().unwrap_or(Millis(1));
            for command in &round {
                lock.handle_reply(command.round, command.node, Reply::NotApplied, now);
            }
            let release = drain(&mut lock);
            assert!(release.iter().all(|c| c.op == Op::DelIfEq { token }));
            if let Some(at) = lock.poll_timeout() {
                lock.handle_timeout(at);
            }
        }
        tokens
    }

    #[test]
    fn every_round_draws_a_fresh_token_unless_the_configuration_keeps_the_first() {
        let fresh = tokens_of_three_lost_rounds(RetryToken::Fresh);
        assert!(fresh[0] != fresh[1] && fresh[1] != fresh[2] && fresh[0] != fresh[2]);
        let kept = tokens_of_three_lost_rounds(RetryToken::Kept);
        assert!(kept.iter().all(|t| *t == kept[0]), "{kept:?}");
    }
}
