//! What the core tells a driver at the end of an operation: how an acquisition ended and why
//! (contention, the restarted-node guard, too slow, unreachable), and how an extension ended,
//! classified from every answer the lock was handed ([`Heard`]).

use std::fmt;

use super::command::{Command, NodeId, NodeSet, RoundId};
use super::round::{Failure, NodeResult, Tally};
use super::state::{Answer, Request};
use crate::time::Millis;

/// How an acquisition ended, as the core counted its last round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AcquireOutcome {
    /// The lock is held; [`Lock::lease`](super::Lock::lease) says until when.
    Acquired {
        /// Every answer to the winning `SET` round the lock was handed so far, also those that
        /// came after the round was decided; [`Lock::acquisition`](super::Lock::acquisition)
        /// keeps it up to date with the stragglers heard from later.
        heard: Heard,
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

/// What a lock heard from each node in one round: every answer it was handed, those that
/// came after the round was decided included, and which yes the restarted-node guard kept out.
///
/// The core decides a round as soon as the outcome is certain (at quorum, by default), so at
/// that moment some nodes may not have answered yet. Their answers still count here when a
/// driver hands them in later ([`Lock::handle_late_reply`](super::Lock::handle_late_reply)):
/// for a won acquisition, [`Lock::acquisition`](super::Lock::acquisition) therefore tells,
/// at any time, which nodes hold the key ([`NodeResult::Applied`]), refused it, failed, or
/// have not answered yet, and [`may_hold_key`](Heard::may_hold_key) which ones the key may be
/// on. The release goes to every node whatever this says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Heard {
    /// The round's request to every node (`None` before any round).
    request: Option<Request>,
    node_count: u8,
    tally: Tally,
    excluded: NodeSet,
    late: NodeSet,
}

impl Heard {
    /// A record for `request` to `node_count` nodes, with nothing heard yet.
    pub(super) fn of(request: Request, node_count: u8) -> Heard {
        Heard {
            request: Some(request),
            node_count,
            ..Heard::default()
        }
    }

    /// Notes `node`'s answer if it belongs to this record's round; `late` when the lock had
    /// already decided the round.
    pub(super) fn record(&mut self, round: RoundId, node: NodeId, answer: Answer, late: bool) {
        let Some(request) = self.request else {
            return;
        };
        if request.round != round || node.index() >= usize::from(self.node_count) {
            return;
        }
        // The first answer counts, as in the round itself.
        if late && !self.tally.answered().contains(node) {
            self.late.insert(node);
        }
        self.tally.record(node, answer.reply);
        if !answer.counts {
            self.excluded.insert(node);
        }
    }

    /// Notes a straggler's answer to `command`, read after the round was decided, if `command`
    /// is exactly this record's request (round and operation, and so the token): a driver may
    /// read a reply long after its round, on a connection every lock of the client shares, so
    /// the round alone could be another lock's. Returns whether it was new and recorded.
    /// [`Lock::handle_late_reply`](super::Lock::handle_late_reply) does this on the lock's own
    /// record; a driver calls this on a copy to show answers it has not handed in yet.
    pub fn handle_late_reply(&mut self, command: &Command, answer: Answer) -> bool {
        let ours = self
            .request
            .is_some_and(|request| request.round == command.round && request.op == command.op);
        let new = ours && !self.tally.answered().contains(command.node);
        if new {
            self.record(command.round, command.node, answer, true);
        }
        new
    }

    /// The round these answers belong to (round 0 before any).
    pub fn round(&self) -> RoundId {
        self.request
            .map(|request| request.round)
            .unwrap_or_default()
    }

    /// How many nodes the round went to.
    pub fn node_count(&self) -> usize {
        usize::from(self.node_count)
    }

    /// What `node` answered, whenever it did; [`NodeResult::NoReply`] while it has not.
    pub fn result(&self, node: NodeId) -> NodeResult {
        self.tally.result(node)
    }

    /// What `node` had answered when the lock decided the round: [`NodeResult::NoReply`] for a
    /// node whose answer came later.
    pub fn at_decision(&self, node: NodeId) -> NodeResult {
        if self.late.contains(node) {
            NodeResult::NoReply
        } else {
            self.tally.result(node)
        }
    }

    /// Every node with what it answered ([`result`](Heard::result)), in node order.
    pub fn iter(&self) -> impl Iterator<Item = (NodeId, NodeResult)> + '_ {
        NodeSet::first(self.node_count())
            .iter()
            .map(|node| (node, self.result(node)))
    }

    /// Every answer so far, by kind.
    pub fn tally(&self) -> Tally {
        self.tally
    }

    /// The answers that had come when the lock decided the round.
    pub fn decided(&self) -> Tally {
        Tally {
            applied: self.tally.applied.difference(self.late),
            not_applied: self.tally.not_applied.difference(self.late),
            failed: self.tally.failed.difference(self.late),
        }
    }

    /// The nodes whose answer came after the round was decided (the stragglers heard from).
    pub fn late(&self) -> NodeSet {
        self.late
    }

    /// The nodes that have not answered yet.
    pub fn unanswered(&self) -> NodeSet {
        NodeSet::first(self.node_count()).difference(self.tally.answered())
    }

    /// The nodes where the operation may have taken effect: those that applied it, those that
    /// failed (a timed-out `SET` may still land) and those that have not answered. For a won
    /// acquisition, the nodes that may hold the key; only a no rules a node out.
    pub fn may_hold_key(&self) -> NodeSet {
        NodeSet::first(self.node_count()).difference(self.tally.not_applied)
    }

    /// The nodes whose yes the restarted-node guard kept out of the count (they hold the key
    /// all the same, and are released with the others).
    pub fn restarted(&self) -> NodeSet {
        self.excluded
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
        let round = self.round();
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
