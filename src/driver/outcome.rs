//! What an acquisition that did not win tells its caller: contention, unreachable nodes, or the
//! restarted-node guard, each with what every node answered.
//!
//! The core reports a failed round as [`Failure`] and a [`Tally`]; it cannot know *why* a node
//! failed, nor which yes the driver kept out of the count. The driver can, so it records the
//! last acquisition round here ([`RoundLog`]) and classifies the outcome for the caller.

use std::fmt;

use crate::proto::{Failure, NodeId, NodeSet, Op, Reply, RoundId, Tally, quorum};

/// A node that failed during a lock operation, and why.
#[derive(Debug)]
pub struct NodeError<E> {
    /// Which node.
    pub node: NodeId,
    /// What the node's driver reported.
    pub error: E,
}

/// Why the nodes that did answer did not give the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// Too few nodes said yes: another client holds the lock (or held it during every round).
    Held,
    /// Enough nodes said yes, but the restarted-node guard kept the yes of nodes that restarted
    /// less than a TTL ago out of the count, and the rest were no quorum. This is the guard
    /// doing its job: those nodes may have lost a key another client still relies on.
    RestartGuard {
        /// The nodes whose yes did not count.
        restarted: NodeSet,
    },
    /// A quorum said yes, but the round took so long that no validity was left.
    TooSlow,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Held => write!(f, "another client holds it"),
            Refusal::RestartGuard { restarted } => write!(
                f,
                "the restarted-node guard left no quorum ({} restarted less than a TTL ago)",
                names(*restarted)
            ),
            Refusal::TooSlow => write!(f, "the round took longer than the TTL allows"),
        }
    }
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
            "not acquired after {} {}: {}",
            self.attempts,
            plural(self.attempts as usize, "attempt", "attempts"),
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
            "no quorum of nodes reachable: {failed} {} failed, a quorum is {}",
            plural(failed, "node", "nodes"),
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

/// How a failed acquisition is reported: one of the two outcomes that are not a guard.
#[derive(Debug)]
pub(crate) enum Lost<E> {
    /// The nodes answered and did not give the lock.
    NotAcquired(NotAcquired<E>),
    /// Too few nodes answered.
    Unreachable(Unreachable<E>),
}

/// The driver's record of the acquisition round in flight: which nodes failed in it and which
/// yes the restarted-node guard kept out of the count.
#[derive(Debug, Default)]
pub(crate) struct RoundLog {
    round: Option<RoundId>,
    /// Nodes that failed (an error or the round's deadline) in this round.
    failed: NodeSet,
    /// Nodes whose answer the guard kept out of the quorum count.
    excluded: NodeSet,
    /// Indices into the caller's error list of this round's failures.
    causes: Vec<usize>,
    /// Every answer of this round, also those that came after the core had decided it.
    tally: Tally,
}

impl RoundLog {
    /// Notes one result of an acquisition `SET`; other operations are not part of the count.
    /// `error_index` is where the node's error went in the error list, if it failed.
    pub(crate) fn record(
        &mut self,
        round: RoundId,
        node: NodeId,
        op: &Op,
        reply: Reply,
        error_index: Option<usize>,
        counted: bool,
    ) {
        if !matches!(op, Op::SetNxPx { .. }) {
            return;
        }
        if self.round != Some(round) {
            *self = RoundLog {
                round: Some(round),
                ..RoundLog::default()
            };
        }
        self.tally.record(node, reply);
        if let Some(index) = error_index {
            self.failed.insert(node);
            self.causes.push(index);
        }
        if !counted {
            self.excluded.insert(node);
        }
    }

    /// The nodes whose yes the guard kept out of the last round's count.
    pub(crate) fn excluded(&self) -> NodeSet {
        self.excluded
    }

    /// What every node answered in the last round, as far as the driver heard.
    pub(crate) fn tally(&self) -> Tally {
        self.tally
    }

    /// Classifies a failed acquisition over `node_count` nodes: unreachable when the failures
    /// alone put a quorum out of reach, the guard when counting the young nodes' yes would have
    /// left it within reach, contention otherwise.
    pub(crate) fn classify<E>(
        &self,
        node_count: usize,
        failure: Failure,
        attempts: u32,
        nodes: Tally,
        errors: Vec<NodeError<E>>,
    ) -> Lost<E> {
        let quorum = quorum(node_count);
        // The core's tally stops at its decision; the driver also heard the later answers.
        let mut nodes = nodes;
        for (set, reply) in [
            (self.tally.applied, Reply::Applied),
            (self.tally.not_applied, Reply::NotApplied),
            (self.tally.failed, Reply::Failed),
        ] {
            for node in set.iter() {
                nodes.record(node, reply);
            }
        }
        let failed = self.failed.union(nodes.failed);
        if failed.len() > node_count - quorum {
            let (mut causes, errors): (Vec<_>, Vec<_>) = errors
                .into_iter()
                .enumerate()
                .partition(|(index, _)| self.causes.contains(index));
            causes.sort_by_key(|(_, cause)| cause.node);
            return Lost::Unreachable(Unreachable {
                quorum,
                attempts,
                nodes,
                causes: causes.into_iter().map(|(_, cause)| cause).collect(),
                errors: errors.into_iter().map(|(_, error)| error).collect(),
            });
        }
        let guarded = self
            .excluded
            .difference(nodes.not_applied)
            .difference(failed);
        let reason = match failure {
            Failure::ValidityExhausted { .. } => Refusal::TooSlow,
            Failure::NoQuorum { .. }
                if !guarded.is_empty()
                    && node_count - nodes.not_applied.len() - failed.len() >= quorum =>
            {
                Refusal::RestartGuard { restarted: guarded }
            }
            Failure::NoQuorum { .. } | Failure::LeaseExpired => Refusal::Held,
        };
        Lost::NotAcquired(NotAcquired {
            reason,
            failure,
            attempts,
            nodes,
            errors,
        })
    }
}

/// `n1 n2`: the nodes as the literature counts them.
fn names(set: NodeSet) -> String {
    set.iter()
        .map(|node| node.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

fn plural<'a>(count: usize, one: &'a str, many: &'a str) -> &'a str {
    if count == 1 { one } else { many }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::Token;
    use crate::time::Millis;

    fn set(token: u128) -> Op {
        Op::SetNxPx {
            token: Token(token),
            ttl: Millis(10),
        }
    }

    fn tally(replies: &[(u8, Reply)]) -> Tally {
        let mut tally = Tally::default();
        for &(node, reply) in replies {
            tally.record(NodeId(node), reply);
        }
        tally
    }

    const NO_QUORUM: Failure = Failure::NoQuorum {
        applied: 1,
        quorum: 2,
    };

    #[test]
    fn two_failures_of_three_are_unreachable_with_their_causes_in_node_order() {
        let mut log = RoundLog::default();
        let errors = vec![
            NodeError {
                node: NodeId(9),
                error: "an older round",
            },
            NodeError {
                node: NodeId(2),
                error: "refused",
            },
            NodeError {
                node: NodeId(1),
                error: "timed out",
            },
        ];
        log.record(RoundId(3), NodeId(0), &set(1), Reply::Applied, None, true);
        log.record(RoundId(3), NodeId(2), &set(1), Reply::Failed, Some(1), true);
        log.record(RoundId(3), NodeId(1), &set(1), Reply::Failed, Some(2), true);
        let nodes = tally(&[(0, Reply::Applied), (2, Reply::Failed)]);
        let Lost::Unreachable(unreachable) = log.classify(3, NO_QUORUM, 2, nodes, errors) else {
            panic!("two of three failed");
        };
        assert_eq!(
            unreachable.to_string(),
            "no quorum of nodes reachable: 2 nodes failed, a quorum is 2; \
             n2: timed out; n3: refused"
        );
        assert_eq!(unreachable.errors.len(), 1);
    }

    #[test]
    fn a_no_with_one_failure_is_contention() {
        let mut log = RoundLog::default();
        log.record(
            RoundId(1),
            NodeId(0),
            &set(1),
            Reply::NotApplied,
            None,
            true,
        );
        log.record(RoundId(1), NodeId(1), &set(1), Reply::Failed, Some(0), true);
        let nodes = tally(&[(0, Reply::NotApplied), (1, Reply::Failed)]);
        let errors = vec![NodeError {
            node: NodeId(1),
            error: "refused",
        }];
        let Lost::NotAcquired(refused) = log.classify(3, NO_QUORUM, 1, nodes, errors) else {
            panic!("one failure of three leaves a quorum reachable");
        };
        assert_eq!(refused.reason, Refusal::Held);
        assert_eq!(
            refused.to_string(),
            "not acquired after 1 attempt: another client holds it"
        );
    }

    #[test]
    fn a_young_yes_that_would_have_won_is_the_guard() {
        let mut log = RoundLog::default();
        // A release of an older round is not part of the count.
        log.record(
            RoundId(1),
            NodeId(1),
            &Op::DelIfEq { token: Token(1) },
            Reply::Failed,
            Some(0),
            true,
        );
        log.record(RoundId(2), NodeId(0), &set(2), Reply::Applied, None, false);
        log.record(
            RoundId(2),
            NodeId(1),
            &set(2),
            Reply::NotApplied,
            None,
            true,
        );
        let nodes = tally(&[(0, Reply::Applied), (1, Reply::NotApplied)]);
        let Lost::NotAcquired(refused) = log.classify::<&str>(3, NO_QUORUM, 3, nodes, Vec::new())
        else {
            panic!("every node answered");
        };
        assert_eq!(
            refused.reason,
            Refusal::RestartGuard {
                restarted: NodeSet::from_bits(0b1)
            }
        );
        assert_eq!(
            refused.to_string(),
            "not acquired after 3 attempts: the restarted-node guard left no quorum \
             (n1 restarted less than a TTL ago)"
        );
    }

    #[test]
    fn a_young_yes_that_could_not_have_won_is_contention() {
        let mut log = RoundLog::default();
        log.record(RoundId(1), NodeId(0), &set(1), Reply::Applied, None, false);
        log.record(
            RoundId(1),
            NodeId(1),
            &set(1),
            Reply::NotApplied,
            None,
            true,
        );
        log.record(
            RoundId(1),
            NodeId(2),
            &set(1),
            Reply::NotApplied,
            None,
            true,
        );
        let nodes = tally(&[
            (0, Reply::Applied),
            (1, Reply::NotApplied),
            (2, Reply::NotApplied),
        ]);
        let Lost::NotAcquired(refused) = log.classify::<&str>(3, NO_QUORUM, 1, nodes, Vec::new())
        else {
            panic!("every node answered");
        };
        assert_eq!(refused.reason, Refusal::Held);
    }
}
