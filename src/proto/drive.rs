//! The rule every driver follows around a [`Lock`], written once: after each `handle_*`, send
//! every queued command before anything else (so a lost round's release is never skipped),
//! then take the outcome of the operation in progress, and otherwise wait for the next
//! timeout.
//!
//! A driver starts an operation ([`Lock::acquire`], [`Lock::extend`], [`Lock::release`]) and
//! loops on its `poll_*` method ([`Lock::poll_acquisition`], [`Lock::poll_extension`],
//! [`Lock::poll_release`]) until it says [`Next::Done`]; after each answer it hands in,
//! [`Lock::is_waiting_for`] says whether the answers still owed to that round matter. The
//! outcome of a failed acquisition says why it failed, classified here from every answer the
//! lock was handed, so no driver re-counts a round.

use rand_core::RngCore;

use super::command::{Command, RoundId};
use super::lock::Lock;
use super::outcome::{AcquireOutcome, Extension};
use super::round::Tally;
use super::state::{LockEvent, LockPhase, UsageError};
use crate::time::Millis;

/// What a driver does next for the operation in progress.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use = "a driver must carry out what the lock asks for"]
pub enum Next<T> {
    /// Send every command to its node (all of them, also once the round is decided: a command
    /// that never reaches its node is not what the algorithm asked for) and hand each answer
    /// to [`Lock::handle_reply`].
    Send(Vec<Command>),
    /// Nothing to send: call [`Lock::handle_timeout`] once the client's clock reads this.
    WaitUntil(Millis),
    /// The operation ended.
    Done(T),
}

impl<R: RngCore> Lock<R> {
    /// Whether the lock still waits for answers to `round`: a driver that has sent every
    /// command of the round may stop waiting for the rest once this is `false` (the round was
    /// decided, or a newer one began), though the answers may still be handed in.
    pub fn is_waiting_for(&self, round: RoundId) -> bool {
        round == self.state.round()
            && matches!(
                self.state.phase(),
                LockPhase::Acquiring(_) | LockPhase::Extending { .. } | LockPhase::Releasing(_)
            )
    }

    /// The next step of the acquisition [`Lock::acquire`] started.
    ///
    /// This and the other `poll_*` methods of an operation drain the event queue: the events
    /// in between (a retry, say) are summed up in the outcome. Refused when the acquisition
    /// was abandoned by a release before it ended.
    pub fn poll_acquisition(&mut self) -> Result<Next<AcquireOutcome>, UsageError> {
        if let Some(batch) = self.take_batch() {
            return Ok(batch);
        }
        match self.take_ended() {
            Some(LockEvent::Acquired { .. }) => Ok(Next::Done(AcquireOutcome::Acquired {
                heard: self.heard_set,
            })),
            Some(LockEvent::NotAcquired {
                failure, attempts, ..
            }) => {
                let n = usize::from(self.params.node_count);
                let quorum = self.params.quorum();
                Ok(Next::Done(
                    self.heard_last.lost(n, quorum, failure, attempts),
                ))
            }
            _ => match self.state.phase() {
                LockPhase::Acquiring(round) => Ok(Next::WaitUntil(round.deadline(&self.params))),
                LockPhase::BackingOff { until, .. } => Ok(Next::WaitUntil(*until)),
                _ => Err(UsageError::NotAcquiring),
            },
        }
    }

    /// The next step of the extension [`Lock::extend`] started; refused when none was.
    pub fn poll_extension(&mut self) -> Result<Next<Extension>, UsageError> {
        if let Some(batch) = self.take_batch() {
            return Ok(batch);
        }
        match self.take_ended() {
            Some(LockEvent::Extended {
                deadline, nodes, ..
            }) => Ok(Next::Done(Extension::Extended { deadline, nodes })),
            Some(LockEvent::NotExtended { failure, nodes }) => {
                Ok(Next::Done(Extension::NotExtended { failure, nodes }))
            }
            _ => match self.state.phase() {
                LockPhase::Extending { round, .. } => {
                    Ok(Next::WaitUntil(round.deadline(&self.params)))
                }
                _ => Err(UsageError::NotExtending),
            },
        }
    }

    /// The next step of the release [`Lock::release`] started: done with every node's answer,
    /// or with an empty tally when there was nothing to release.
    pub fn poll_release(&mut self) -> Next<Tally> {
        if let Some(batch) = self.take_batch() {
            return batch;
        }
        match (self.take_ended(), self.state.phase()) {
            (Some(LockEvent::Released { nodes }), _) => Next::Done(nodes),
            (_, LockPhase::Releasing(release)) => Next::WaitUntil(release.deadline(&self.params)),
            _ => Next::Done(Tally::default()),
        }
    }

    /// Every queued command, as one batch to send.
    fn take_batch<T>(&mut self) -> Option<Next<T>> {
        (!self.commands.is_empty()).then(|| Next::Send(self.commands.drain(..).collect()))
    }

    /// Drains the event queue and returns the event that ended the operation in progress, if
    /// one has (kept, so that asking again gives the same answer).
    fn take_ended(&mut self) -> Option<LockEvent> {
        for event in self.events.drain(..) {
            if matches!(
                event,
                LockEvent::Acquired { .. }
                    | LockEvent::NotAcquired { .. }
                    | LockEvent::Extended { .. }
                    | LockEvent::NotExtended { .. }
                    | LockEvent::Released { .. }
            ) {
                self.ended = Some(event);
            }
        }
        self.ended
    }
}

#[cfg(test)]
mod tests {
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;

    use super::*;
    use crate::proto::{Answer, Config, NodeSet, Refusal, Reply};

    fn lock(n: usize) -> Lock<ChaCha8Rng> {
        let mut config = Config::new(n);
        config.retry.attempts = 1;
        Lock::acquire(
            &config,
            Millis(1_000),
            ChaCha8Rng::seed_from_u64(3),
            Millis(0),
        )
        .unwrap()
    }

    fn send(lock: &mut Lock<ChaCha8Rng>) -> Vec<Command> {
        match lock.poll_acquisition().unwrap() {
            Next::Send(batch) => batch,
            other => panic!("expected a batch, got {other:?}"),
        }
    }

    /// Answers the batch with `answers[i]` for node `i`.
    fn answer(lock: &mut Lock<ChaCha8Rng>, batch: &[Command], answers: &[Answer]) {
        for (command, &answer) in batch.iter().zip(answers) {
            lock.handle_reply(command.round, command.node, answer, Millis(1));
        }
    }

    #[test]
    fn a_lost_round_is_released_before_its_outcome_and_late_answers_count_toward_it() {
        let mut lock = lock(3);
        let sets = send(&mut lock);
        let no = Answer::voting(Reply::NotApplied);
        answer(&mut lock, &sets[..2], &[no, no]);
        assert!(
            !lock.is_waiting_for(sets[0].round),
            "two no of three decide"
        );
        // The third answer comes after the decision, with the rest of the batch.
        answer(&mut lock, &sets[2..], &[no]);
        let releases = send(&mut lock);
        assert_eq!(releases.len(), 3, "the release goes out before the outcome");
        let Next::Done(AcquireOutcome::NotAcquired { reason, nodes, .. }) =
            lock.poll_acquisition().unwrap()
        else {
            panic!("expected a refusal")
        };
        assert_eq!(reason, Refusal::Held);
        assert_eq!(nodes.not_applied.len(), 3, "the late answer is part of it");
    }

    #[test]
    fn a_lost_round_kept_sends_no_release() {
        let mut config = Config::new(1);
        config.retry.attempts = 1;
        config.failed_round = crate::proto::FailedRound::Keep;
        let rng = ChaCha8Rng::seed_from_u64(3);
        let mut lock = Lock::acquire(&config, Millis(1_000), rng, Millis(0)).unwrap();
        let sets = send(&mut lock);
        answer(&mut lock, &sets, &[Answer::voting(Reply::NotApplied)]);
        let outcome = lock.poll_acquisition().unwrap();
        assert!(
            matches!(outcome, Next::Done(AcquireOutcome::NotAcquired { .. })),
            "no release batch before the outcome: {outcome:?}"
        );
    }

    #[test]
    fn failures_that_put_a_quorum_out_of_reach_are_unreachable() {
        let mut lock = lock(3);
        let sets = send(&mut lock);
        answer(
            &mut lock,
            &sets,
            &[
                Answer::voting(Reply::Applied),
                Answer::failed(),
                Answer::failed(),
            ],
        );
        let _releases = send(&mut lock);
        let outcome = lock.poll_acquisition().unwrap();
        let Next::Done(AcquireOutcome::Unreachable {
            quorum,
            nodes,
            round,
            ..
        }) = outcome
        else {
            panic!("expected unreachable, got {outcome:?}")
        };
        assert_eq!((quorum, nodes.failed.len(), round), (2, 2, sets[0].round));
    }

    #[test]
    fn a_young_yes_that_would_have_won_is_the_guard_and_one_that_could_not_is_contention() {
        let young = Answer::guarded(Reply::Applied);
        let yes = Answer::voting(Reply::Applied);
        let no = Answer::voting(Reply::NotApplied);
        for (answers, expected) in [
            (
                [young, yes, no],
                Refusal::RestartGuard {
                    restarted: NodeSet::from_bits(0b001),
                },
            ),
            ([young, no, no], Refusal::Held),
        ] {
            let mut lock = lock(3);
            let sets = send(&mut lock);
            answer(&mut lock, &sets, &answers);
            let _releases = send(&mut lock);
            let Ok(Next::Done(AcquireOutcome::NotAcquired { reason, .. })) =
                lock.poll_acquisition()
            else {
                panic!("every node answered")
            };
            assert_eq!(reason, expected, "{answers:?}");
        }
    }

    #[test]
    fn a_won_lock_tells_every_answer_and_a_silent_round_waits_for_its_deadline() {
        let mut lock = lock(3);
        let sets = send(&mut lock);
        assert_eq!(lock.poll_acquisition(), Ok(Next::WaitUntil(Millis(50))));
        let yes = Answer::voting(Reply::Applied);
        answer(
            &mut lock,
            &sets,
            &[yes, Answer::guarded(Reply::Applied), yes],
        );
        let outcome = lock.poll_acquisition().unwrap();
        let Next::Done(AcquireOutcome::Acquired { heard }) = outcome else {
            panic!("expected the lock, got {outcome:?}");
        };
        assert_eq!(
            heard.tally(),
            Tally {
                applied: NodeSet::first(3),
                ..Tally::default()
            }
        );
        assert_eq!(heard.restarted(), NodeSet::from_bits(0b010));
        // n3's yes decided it: nobody answered after the decision.
        assert!(heard.late().is_empty(), "{heard:?}");
        assert_eq!(&heard, lock.acquisition());
        assert_eq!(lock.poll_extension(), Err(UsageError::NotExtending));
        lock.release(Millis(2));
        let releases = match lock.poll_release() {
            Next::Send(batch) => batch,
            other => panic!("expected the release, got {other:?}"),
        };
        assert_eq!(lock.poll_acquisition(), Err(UsageError::NotAcquiring));
        answer(&mut lock, &releases, &[yes, yes, yes]);
        assert!(matches!(lock.poll_release(), Next::Done(nodes) if nodes.applied.len() == 3));
        lock.release(Millis(3));
        assert_eq!(lock.poll_release(), Next::Done(Tally::default()));
    }
}
