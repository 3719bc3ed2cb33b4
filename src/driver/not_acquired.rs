//! What an acquisition that did not win tells its caller: contention, unreachable nodes, the
//! restarted-node guard, or a name collision, each with what every node answered.
//!
//! The core classifies a failed acquisition ([`AcquireOutcome`]); it cannot know *why* a node
//! failed. The driver can, so it keeps every node error with the round it belongs to
//! ([`ErrorLog`]) and adds to the core's outcome the errors of the round it names. One thing
//! only the node's error says changes the outcome: a key of the lock that holds another
//! program's value ([`Node::foreign_key`](crate::node::Node::foreign_key)) turns a lost
//! acquisition into a [`Collision`] naming the key.

use std::fmt;

use super::observe::{Decision, Watch};
use crate::node::NodeReply;
use crate::plural::count;
use crate::proto::{
    AcquireOutcome, Answer, Command, Failure, NodeId, NodeSet, Refusal, RoundId, Tally,
};

/// A node that failed during a lock operation, and why.
#[derive(Debug)]
pub struct NodeError<E> {
    /// Which node.
    pub node: NodeId,
    /// What the node's driver reported.
    pub error: E,
}

/// Why a `try_lock` did not get the lock although enough nodes answered, with what every node
/// said.
#[derive(Debug)]
pub struct NotAcquired<E> {
    /// Why, in words a caller can act on.
    pub reason: Refusal,
    /// Why the last round failed, as the core counts it.
    pub failure: Failure,
    /// How many rounds were tried.
    pub attempts: u32,
    /// Per-node results of the last round.
    pub nodes: Tally,
    /// Every node error seen during all rounds.
    pub errors: Vec<NodeError<E>>,
}

impl<E> fmt::Display for NotAcquired<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "not acquired after {}: {}",
            count(self.attempts, "attempt", "attempts"),
            self.reason
        )
    }
}

/// Fewer than a quorum of nodes could answer at all in the last round: the lock was not
/// acquired, and nothing is known about who holds it. `causes` names what went wrong with each.
#[derive(Debug)]
pub struct Unreachable<E> {
    /// How many nodes must answer yes for a lock.
    pub quorum: usize,
    /// How many rounds were tried.
    pub attempts: u32,
    /// Per-node results of the last round.
    pub nodes: Tally,
    /// The error of each node that failed in the last round, in node order.
    pub causes: Vec<NodeError<E>>,
    /// The node errors of earlier rounds and of releases.
    pub errors: Vec<NodeError<E>>,
}

impl<E: fmt::Display> fmt::Display for Unreachable<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let failed = self.causes.len();
        write!(
            f,
            "no quorum of nodes reachable: {} failed, a quorum is {}",
            count(failed, "node", "nodes"),
            self.quorum
        )?;
        for cause in &self.causes {
            write!(f, "; {}: {}", cause.node, cause.error)?;
        }
        Ok(())
    }
}

/// Every cause is in the message: with several nodes there is no single source to chain.
impl<E: fmt::Debug + fmt::Display> std::error::Error for Unreachable<E> {}

/// A key the lock needs holds a value this client did not write, so the acquisition failed
/// however the nodes counted: another program uses the lock's name with a value of another
/// type, or wrote the fencing counter. No retry fixes it; rename the resource or the other
/// program's key.
///
/// When it is reported, and which nodes it names: only a node's error tells another program's
/// value from another client's lock, and a node gives one only to a command that reads the
/// key: the compare-and-delete that releases a lost round, and, with fencing on, the script
/// that increments the counter. A `SET NX` at a name that holds a list answers no, as it does
/// to another holder. So a collision is reported when the foreign value cost the acquisition,
/// and it names each node whose such reply was read before the acquisition ended: at least
/// one, not always every node that holds the value (the release of a lost round is not waited
/// for). A foreign value on a minority of the nodes of a round that wins is not reported:
/// those nodes count as saying no, and the lock is acquired on the others.
#[derive(Debug)]
pub struct Collision<E> {
    /// The key, as the first node that reported it named it.
    pub key: String,
    /// How many rounds were tried.
    pub attempts: u32,
    /// Per-node results of the last round.
    pub nodes: Tally,
    /// The first error of each node that named a key, in node order.
    pub causes: Vec<NodeError<E>>,
    /// Every other node error, in the order they came.
    pub errors: Vec<NodeError<E>>,
}

impl<E: fmt::Display> fmt::Display for Collision<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let nodes: Vec<String> = self.causes.iter().map(|c| c.node.to_string()).collect();
        write!(
            f,
            "key {:?} holds a value this client did not write on {}: another program uses the \
             name, so the lock was not acquired",
            self.key,
            nodes.join(" ")
        )?;
        for cause in &self.causes {
            write!(f, "; {}: {}", cause.node, cause.error)?;
        }
        Ok(())
    }
}

/// Every cause is in the message: with several nodes there is no single source to chain.
impl<E: fmt::Debug + fmt::Display> std::error::Error for Collision<E> {}

/// How an acquisition ended, with the node errors added: what a driver turns into its public
/// outcome.
#[derive(Debug)]
pub(crate) enum Settled<E> {
    /// The lock is held; the lock itself keeps what each node answered
    /// ([`Lock::acquisition`](crate::proto::Lock::acquisition)).
    Acquired {
        /// The node errors so far, for the guard to keep.
        errors: ErrorLog<E>,
    },
    /// The nodes answered and did not give the lock.
    NotAcquired(NotAcquired<E>),
    /// Too few nodes answered.
    Unreachable(Unreachable<E>),
    /// A node said a key of the lock holds another program's value.
    Collision(Collision<E>),
}

impl<E> Settled<E> {
    /// The outcome as an observer names it.
    pub(crate) fn decision(&self) -> Decision {
        match self {
            Settled::Acquired { .. } => Decision::Acquired,
            Settled::NotAcquired(refused) => Decision::NotAcquired(refused.reason),
            Settled::Unreachable(_) => Decision::Unreachable,
            Settled::Collision(_) => Decision::Collision,
        }
    }
}

/// The answer the core is handed for a straggler's `result`, read after its round was decided:
/// like [`ErrorLog::answer`]'s, but its error is not kept (the operation it belonged to is over,
/// and it may not even be this lock's) and no observer is told (its span has ended).
pub(crate) fn late_answer<E>(
    result: &Result<NodeReply, E>,
    counts: impl FnOnce() -> bool,
) -> Answer {
    match result {
        Ok(reply) => Answer {
            counts: counts(),
            ..Answer::from(*reply)
        },
        Err(_) => Answer::failed(),
    }
}

/// Every node error of one lock operation, each with the round it belongs to.
#[derive(Debug)]
pub(crate) struct ErrorLog<E> {
    errors: Vec<NodeError<E>>,
    rounds: Vec<RoundId>,
}

impl<E> Default for ErrorLog<E> {
    fn default() -> Self {
        ErrorLog {
            errors: Vec::new(),
            rounds: Vec::new(),
        }
    }
}

impl<E> ErrorLog<E> {
    /// Keeps `error`, the answer to `command`.
    pub(crate) fn push(&mut self, command: &Command, error: E) {
        self.errors.push(NodeError {
            node: command.node,
            error,
        });
        self.rounds.push(command.round);
    }

    /// The answer the core is handed for a node's `result` to `command`: a reply whose yes
    /// counts only when `counts` says so (a node that restarted too recently still answers,
    /// but its yes must not count), or a failure, whose error is kept.
    /// `watch` is told every answer: this is the one place both clients hand one over.
    pub(crate) fn answer(
        &mut self,
        command: &Command,
        result: Result<NodeReply, E>,
        counts: impl FnOnce() -> bool,
        watch: &Watch,
    ) -> Answer
    where
        E: fmt::Display,
    {
        match result {
            Ok(reply) => {
                let answer = Answer {
                    counts: counts(),
                    ..Answer::from(reply)
                };
                watch.answer(command, &answer, None);
                answer
            }
            Err(error) => {
                let answer = Answer::failed();
                watch.answer(command, &answer, Some(&error));
                self.push(command, error);
                answer
            }
        }
    }

    /// Every error so far, in the order they came.
    pub(crate) fn as_slice(&self) -> &[NodeError<E>] {
        &self.errors
    }

    /// The errors of `round` (in node order) and the others (in the order they came).
    fn split(self, round: RoundId) -> (Vec<NodeError<E>>, Vec<NodeError<E>>) {
        let (mut of_round, others): (Vec<_>, Vec<_>) = self
            .errors
            .into_iter()
            .zip(self.rounds)
            .partition(|(_, r)| *r == round);
        of_round.sort_by_key(|(error, _)| error.node);
        let strip = |list: Vec<(NodeError<E>, _)>| list.into_iter().map(|(e, _)| e).collect();
        (strip(of_round), strip(others))
    }

    /// The core's outcome of an acquisition with the errors added: the failed round's as the
    /// causes of an unreachable outcome. A lost acquisition in which some error names a key
    /// that holds another program's value (`foreign` says which, as
    /// [`Node::foreign_key`](crate::node::Node::foreign_key) does) is a [`Collision`] instead.
    pub(crate) fn settle(
        self,
        outcome: AcquireOutcome,
        foreign: impl Fn(&E) -> Option<&str>,
    ) -> Settled<E> {
        match outcome {
            AcquireOutcome::Acquired { .. } => Settled::Acquired { errors: self },
            AcquireOutcome::Unreachable {
                attempts, nodes, ..
            }
            | AcquireOutcome::NotAcquired {
                attempts, nodes, ..
            } if self.errors.iter().any(|e| foreign(&e.error).is_some()) => {
                Settled::Collision(self.collision(attempts, nodes, foreign))
            }
            AcquireOutcome::Unreachable {
                quorum,
                attempts,
                nodes,
                round,
            } => {
                let (causes, errors) = self.split(round);
                Settled::Unreachable(Unreachable {
                    quorum,
                    attempts,
                    nodes,
                    causes,
                    errors,
                })
            }
            AcquireOutcome::NotAcquired {
                reason,
                failure,
                attempts,
                nodes,
                ..
            } => Settled::NotAcquired(NotAcquired {
                reason,
                failure,
                attempts,
                nodes,
                errors: self.errors,
            }),
        }
    }

    /// The errors as a collision: each node's first error that names a key is a cause.
    fn collision(
        self,
        attempts: u32,
        nodes: Tally,
        foreign: impl Fn(&E) -> Option<&str>,
    ) -> Collision<E> {
        let mut named = NodeSet::default();
        let (mut causes, errors): (Vec<_>, Vec<_>) = self.errors.into_iter().partition(|e| {
            let first = foreign(&e.error).is_some() && !named.contains(e.node);
            if first {
                named.insert(e.node);
            }
            first
        });
        causes.sort_by_key(|cause| cause.node);
        let key = causes
            .first()
            .and_then(|cause| foreign(&cause.error))
            .unwrap_or_default()
            .to_owned();
        Collision {
            key,
            attempts,
            nodes,
            causes,
            errors,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::Op;
    use crate::time::Millis;

    fn command(node: u8, round: u32) -> Command {
        Command {
            node: NodeId(node),
            round: RoundId(round),
            op: Op::SetNxPx {
                token: crate::proto::Token(1),
                ttl: Millis(10),
            },
        }
    }

    #[test]
    fn the_causes_are_the_failed_rounds_errors_in_node_order() {
        let mut log = ErrorLog::default();
        log.push(&command(9, 1), "an older round");
        log.push(&command(2, 3), "refused");
        log.push(&command(1, 3), "timed out");
        let outcome = AcquireOutcome::Unreachable {
            quorum: 2,
            attempts: 2,
            nodes: Tally::default(),
            round: RoundId(3),
        };
        let Settled::Unreachable(unreachable) = log.settle(outcome, |_| None) else {
            panic!("the core said unreachable");
        };
        assert_eq!(
            unreachable.to_string(),
            "no quorum of nodes reachable: 2 nodes failed, a quorum is 2; \
             n2: timed out; n3: refused"
        );
        assert_eq!(unreachable.errors.len(), 1);
    }

    #[test]
    fn an_error_that_names_a_foreign_key_makes_a_lost_acquisition_a_collision() {
        fn foreign<'b>(error: &'b &str) -> Option<&'b str> {
            error.strip_prefix("foreign ")
        }
        let lost = [
            AcquireOutcome::Unreachable {
                quorum: 2,
                attempts: 1,
                nodes: Tally::default(),
                round: RoundId(1),
            },
            AcquireOutcome::NotAcquired {
                reason: Refusal::Held,
                failure: Failure::LeaseExpired,
                attempts: 1,
                nodes: Tally::default(),
                round: RoundId(1),
            },
        ];
        for outcome in lost {
            let mut log = ErrorLog::default();
            log.push(&command(3, 1), "foreign queue");
            log.push(&command(1, 1), "timed out");
            log.push(&command(1, 1), "foreign queue");
            log.push(&command(1, 2), "foreign queue");
            let Settled::Collision(collision) = log.settle(outcome, foreign) else {
                panic!("{outcome:?} with a foreign key is not a collision");
            };
            assert_eq!(collision.key, "queue");
            assert_eq!(
                collision.to_string(),
                "key \"queue\" holds a value this client did not write on n2 n4: another \
                 program uses the name, so the lock was not acquired; \
                 n2: foreign queue; n4: foreign queue"
            );
            assert_eq!(
                collision.errors.len(),
                2,
                "a node's second report is not a cause"
            );
        }
        let mut log = ErrorLog::default();
        log.push(&command(0, 1), "foreign queue");
        let acquired = AcquireOutcome::Acquired {
            heard: crate::proto::Heard::default(),
        };
        assert!(
            matches!(log.settle(acquired, foreign), Settled::Acquired { .. }),
            "a minority's foreign key does not undo a won lock"
        );
    }
}
