//! What the core tells a driver at the end of an operation: how an acquisition ended and why
//! (contention, the restarted-node guard, too slow, unreachable), and how an extension ended,
//! classified from every answer the lock was handed ([`Heard`]).

use std::fmt;

use super::command::{NodeId, NodeSet, RoundId};
use super::round::{Failure, Tally};
use super::state::Answer;
use crate::time::Millis;

/// How an acquisition ended, as the core counted its last round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AcquireOutcome {
    /// The lock is held; [`Lock::lease`](super::Lock::lease) says until when.
    Acquired {
        /// Every answer to the winning `SET` round the lock was handed, also those that came
        /// after the round was decided.
        nodes: Tally,
        /// The nodes whose yes the restarted-node guard kept out of the count (they hold our
        /// key all the same, and are released with the others).
        restarted: NodeSet,
    },
    /// Enough nodes answered, and they did not give the lock.
    NotAcquired {
        /// Why, in words a caller can act on.
        reason: Refusal,
        /// Why the last round failed, as the core counts it.
        failure: Failure,
        /// How many rounds were tried.
        attempts: u32,
        /// Every answer to the last round the lock was handed.
        nodes: Tally,
        /// The last round, whose answers these are.
        round: RoundId,
    },
    /// So many nodes failed in the last round that a quorum was out of reach whatever the
    /// others said: nothing is known about who holds the lock.
    Unreachable {
        /// How many nodes must say yes for a lock.
        quorum: usize,
        /// How many rounds were tried.
        attempts: u32,
        /// Every answer to the last round the lock was handed.
        nodes: Tally,
        /// The last round, whose failures these are.
        round: RoundId,
    },
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

/// `n1 n2`: the nodes as the literature counts them.
fn names(set: NodeSet) -> String {
    set.iter()
        .map(|node| node.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// How an extension round ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extension {
    /// A majority applied it; the deadline moved.
    Extended {
        /// The new deadline on the client's clock.
        deadline: Millis,
        /// Per-node results.
        nodes: Tally,
    },
    /// It did not win a majority in time, or the deadline had already passed; the old
    /// deadline still stands.
    NotExtended {
        /// Why.
        failure: Failure,
        /// Per-node results: `not_applied` nodes no longer hold our key.
        nodes: Tally,
    },
}

/// Every answer a lock was handed for one round, also after the core decided it (the core's
/// own tally stops at the decision), and which yes the restarted-node guard kept out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Heard {
    round: Option<RoundId>,
    pub(super) tally: Tally,
    pub(super) excluded: NodeSet,
}

impl Heard {
    /// A record for `round`, with nothing heard yet.
    pub(super) fn of(round: RoundId) -> Heard {
        Heard {
            round: Some(round),
            ..Heard::default()
        }
    }

    /// Notes `node`'s answer if it belongs to this record's round.
    pub(super) fn record(&mut self, round: RoundId, node: NodeId, answer: Answer) {
        if self.round != Some(round) {
            return;
        }
        self.tally.record(node, answer.reply);
        if !answer.counts {
            self.excluded.insert(node);
        }
    }

    /// Classifies a lost acquisition over `node_count` nodes from every answer heard:
    /// unreachable when the failures alone put a quorum out of reach; the guard when counting
    /// the young nodes' yes would have left it within reach; too slow when a quorum said yes
    /// late; contention otherwise.
    pub(super) fn lost(
        &self,
        node_count: usize,
        quorum: usize,
        failure: Failure,
        attempts: u32,
    ) -> AcquireOutcome {
        let nodes = self.tally;
        let round = self.round.unwrap_or_default();
        if nodes.failed.len() > node_count - quorum {
            return AcquireOutcome::Unreachable {
                quorum,
                attempts,
                nodes,
                round,
            };
        }
        let guarded = self
            .excluded
            .difference(nodes.not_applied)
            .difference(nodes.failed);
        let reachable = node_count - nodes.not_applied.len() - nodes.failed.len();
        let reason = match failure {
            Failure::ValidityExhausted { .. } => Refusal::TooSlow,
            Failure::NoQuorum { .. } if !guarded.is_empty() && reachable >= quorum => {
                Refusal::RestartGuard { restarted: guarded }
            }
            Failure::NoQuorum { .. } | Failure::LeaseExpired => Refusal::Held,
        };
        AcquireOutcome::NotAcquired {
            reason,
            failure,
            attempts,
            nodes,
            round,
        }
    }
}
