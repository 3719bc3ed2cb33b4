//! Where a holder's fencing token comes from (`[storage] token_source`), and what the model
//! keeps for it.
//!
//! - **ideal**: the acquisition's epoch, a counter no fault can touch (the model's default, and
//!   Kleppmann's assumption).
//! - **counter-after-acquire**: one `INCR` on a separate counter node once the lock is held, as
//!   a client with a stand-alone counter does it: it checks its lease, takes the token, then
//!   sends its first storage op, and a pause may fall before or after the `INCR`. The counter
//!   node crashes (spending the `[faults.crashes]` budget) with the same persistence as the lock
//!   nodes and restarts at once: a restart delay protects leases, not counters.
//! - **lock-quorum** (and **lock-quorum-max-only**): every lock node's `SET` that creates the key
//!   also increments that node's counter and returns it ([`NodeState::apply_counted`]); the core
//!   takes the largest counter among the yes answers ([`QuorumRound::fence`]) and, unless
//!   max-only, writes it back to a quorum before the lock counts as acquired
//!   ([`Fencing::WriteBack`]), unless a quorum returned it already. The model only carries
//!   the answers' counters to the core (the largest in a mailbox, and which nodes returned
//!   it); the token is the core's [`Lease::fence`].
//!
//! The model's state grows by the counters: each lock node's counter lives in its
//! [`NodeState`], the counter node is one more `NodeState`, and per client the largest counter
//! in its mailbox and the token it took from the counter node ([`Fences`](super::Fences)). The
//! fingerprint adds them only when the token source is not ideal, so existing scenarios keep
//! their state counts: a lock node's counter as part of its node row ([`NodeFence`]), a client's
//! counters and token as part of its client row ([`ClientFence`]), so the symmetry reduction
//! permutes them with the rows they belong to (`view.rs`), and the counter node on its own.
//!
//! [`QuorumRound::fence`]: crate::proto::QuorumRound::fence
//! [`Lease::fence`]: crate::proto::Lease::fence
//! [`Fencing::WriteBack`]: crate::proto::Fencing::WriteBack
//! [`NodeState`]: crate::node::NodeState
//! [`NodeState::apply_counted`]: crate::node::NodeState::apply_counted

use std::hash::{Hash, Hasher};

use crate::node::Persistence;
use crate::proto::{LockPhase, NodeId, NodeSet, Op, Request, RoundKind};
use crate::storage::{Protection, StorageOp, TokenSource};
use crate::time::Millis;

use super::world::World;

/// Whether the lock nodes' counters feed the token.
pub(crate) fn from_lock(source: TokenSource) -> bool {
    matches!(
        source,
        TokenSource::LockQuorum | TokenSource::LockQuorumMaxOnly
    )
}

fn token(value: u64) -> u32 {
    u32::try_from(value).expect("the model's counters stay far below u32::MAX")
}

impl World {
    fn token_source(&self) -> TokenSource {
        self.shape.token_source
    }

    /// Whether the lock nodes' counters feed the tokens (stories then tell them).
    pub(crate) fn counters_matter(&self) -> bool {
        from_lock(self.token_source())
    }

    /// Client `c`'s `SET` to `node` was applied and returned `counter`: it waits in the mailbox.
    pub(crate) fn saw_counter(&mut self, c: usize, node: NodeId, counter: u64) {
        if from_lock(self.token_source()) {
            let fences = &mut self.fences;
            if counter > fences.seen[c] {
                fences.seen[c] = counter;
                fences.at_seen[c] = NodeSet::EMPTY;
            }
            if counter == fences.seen[c] {
                fences.at_seen[c].insert(node);
            }
        }
    }

    /// The counter handed to the core with `node`'s yes from client `c`'s mailbox. The model
    /// keeps only the largest one per mailbox and the nodes that returned it; the core keeps
    /// only the largest counter it is handed and the nodes that returned that one, so handing
    /// the largest with those nodes' yes and 0 with the others gives the core the same fence
    /// and the same nodes at it.
    pub(crate) fn mailbox_counter(&self, c: usize, node: NodeId) -> u64 {
        if self.fences.at_seen[c].contains(node) {
            self.fences.seen[c]
        } else {
            0
        }
    }

    /// A new request of client `c` started travelling, or it acquired: what its mailbox held,
    /// or the token of its previous lease, is gone.
    pub(crate) fn reset_fences(&mut self, c: usize, acquired: bool) {
        self.fences.seen[c] = 0;
        self.fences.at_seen[c] = NodeSet::EMPTY;
        if acquired {
            self.fences.taken[c] = 0;
        }
    }

    /// The fencing token client `c` puts on its next storage op.
    pub(crate) fn fence_of(&self, c: usize) -> u32 {
        let slot = &self.clients[c];
        match self.token_source() {
            TokenSource::Ideal => u32::from(slot.epoch),
            TokenSource::CounterAfterAcquire => token(self.fences.taken[c]),
            TokenSource::LockQuorum | TokenSource::LockQuorumMaxOnly => {
                token(slot.lock.lease().map_or(0, |lease| lease.fence))
            }
        }
    }

    /// The token an ideal counter handed client `c`'s acquisition (its epoch), when its
    /// storage ops carry it: there is a storage and the tokens come from no real counter.
    /// antirez's check-and-set draws a random token instead, which the epoch only stands for.
    pub(crate) fn ideal_token(&self, c: usize) -> Option<u32> {
        let counted = matches!(self.shape.storage, Some(p) if p != Protection::RandomTokenCas);
        (counted && self.token_source() == TokenSource::Ideal)
            .then(|| u32::from(self.clients[c].epoch))
    }

    /// `counter-after-acquire`: whether client `c`'s pending op must first take a token from
    /// the counter node (its first fenced op of the lease).
    pub(crate) fn needs_counter(&self, c: usize, op: &StorageOp) -> bool {
        self.token_source() == TokenSource::CounterAfterAcquire
            && self.fences.taken[c] == 0
            && !matches!(op, StorageOp::Mark { .. })
    }

    /// `INCR` on the counter node for client `c`.
    pub(crate) fn take_counter(&mut self, c: usize) {
        let persistence = self.shape.persistence;
        self.fences.taken[c] = self.fences.counter_node.incr(persistence);
    }

    /// The counter node crashes and restarts at once, keeping what its persistence keeps.
    pub(crate) fn crash_counter_node(&mut self) {
        let node = &mut self.fences.counter_node;
        node.crash(self.shape.persistence);
        node.restart(Millis::ZERO, Millis::ZERO);
    }

    /// Whether the counter node can crash or fsync to any effect.
    pub(crate) fn counter_node_in_play(&self) -> bool {
        self.token_source() == TokenSource::CounterAfterAcquire
    }

    /// Whether a periodic fsync of lock node `n` would change what survives a crash.
    pub(crate) fn node_unsynced(&self, n: usize) -> bool {
        let state = &self.nodes[n].state;
        if from_lock(self.token_source()) {
            state.has_unsynced_writes()
        } else {
            state.entry.is_some_and(|entry| !entry.durable)
        }
    }

    /// Whether the view carries fencing counters (every token source but the ideal one).
    pub(crate) fn fenced_view(&self) -> bool {
        self.token_source() != TokenSource::Ideal
    }

    /// Lock node `n`'s part of the fencing view: its counter (and what of it is on disk, when a
    /// periodic fsync can still lose some). A dead node's counter is read by nobody again: a
    /// counter is read only through the answer to a `SET`, which is exactly what makes a node
    /// live (`view.rs`, "Dead nodes").
    pub(crate) fn node_fence(&self, n: usize, live: bool) -> NodeFence {
        if !from_lock(self.token_source()) {
            return NodeFence::default();
        }
        if !live {
            return NodeFence {
                counter: u64::MAX,
                on_disk: 0,
            };
        }
        let node = &self.nodes[n].state;
        NodeFence {
            counter: node.counter,
            on_disk: if self.shape.persistence == Persistence::FsyncPeriodic {
                node.counter_on_disk
            } else {
                0
            },
        }
    }

    /// Client `c`'s part of the fencing view, with `live` the nodes some client may still read.
    pub(crate) fn client_fence(&self, c: usize, live: NodeSet) -> ClientFence {
        let slot = &self.clients[c];
        // A write-back still travelling changes nodes differently from a `SET` (and only
        // nodes some client may still read).
        let raising = !slot
            .inflight
            .difference(slot.inflight.difference(live))
            .is_empty()
            && matches!(
                slot.request,
                Some(Request {
                    op: Op::RaiseFence { .. },
                    ..
                })
            );
        // The counters a client has seen and taken are read only while it acquires or
        // holds: a client that is releasing or done never turns them into a token again.
        // (Hashing them anyway let a dead node's hidden straggler answer split states that
        // have the same future.)
        let finished = matches!(
            slot.lock.phase(),
            LockPhase::Releasing(_) | LockPhase::Finished
        );
        let (seen, taken) = if self.shape.exact_ghosts || !finished {
            (self.fences.seen[c], self.fences.taken[c])
        } else {
            (0, 0)
        };
        // The lease's token, or whether the round in flight is the write-back (and of which
        // fence).
        let fence = match slot.lock.phase() {
            LockPhase::Holding { lease, .. } | LockPhase::Extending { lease, .. } => {
                (1, lease.fence)
            }
            LockPhase::Acquiring(round) if round.kind == RoundKind::Fence => (2, round.fence),
            _ => (0, 0),
        };
        ClientFence {
            raising,
            seen,
            taken,
            fence,
        }
    }

    /// The fencing part of the fingerprint that belongs to no node and no client: the counter
    /// node of `counter-after-acquire`.
    pub(crate) fn hash_counter_node<H: Hasher>(&self, state: &mut H) {
        if self.token_source() == TokenSource::CounterAfterAcquire {
            self.fences.counter_node.counter.hash(state);
            self.fences.counter_node.counter_on_disk.hash(state);
        }
    }
}

/// A lock node's counter as the view shows it (zero unless the lock nodes' counters feed the
/// tokens). It is permuted with the node's row by the symmetry reduction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct NodeFence {
    counter: u64,
    on_disk: u64,
}

/// What a client holds of the fencing counters, as the view shows it. It is permuted with the
/// client's row by the symmetry reduction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct ClientFence {
    raising: bool,
    seen: u64,
    taken: u64,
    fence: (u8, u64),
}
