//! The fingerprint: a canonical, time-shift invariant, symmetry-reduced view of a [`World`].
//!
//! stateright deduplicates states by the 64-bit hash of `Hash` alone, so hashing a canonical
//! view instead of the raw state is a sound quotient exactly when states with equal views
//! have equal futures (for every guard and property). The view is built so that they do:
//!
//! - **Time shift.** True time and clock offsets are left out; every timestamp is taken
//!   relative to the clock that judges it (a key's remaining life on its node's clock, a
//!   round's age and a lease's remaining validity on the client's clock). Expired keys are
//!   deleted and finished restart delays normalised to `Up` by the steps themselves, so no
//!   stale timestamp survives. The state space is finite with no horizon.
//! - **Clamps.** A round's age stops mattering once it passes both the round timeout and
//!   `ttl − drift`; a lease's remaining validity stops mattering once it is at or below
//!   `−ε_c` (the client can no longer believe or pass a check). Each clamp is widened by the
//!   remaining backward client-jump budget (with listed sizes, the largest unused backward
//!   ones, as many as jumps are left), since a backward jump moves a clamped value back
//!   into range (research/spin-anchor.md §6). Which listed sizes are used is part of the
//!   budget while a jump is left, and dead once none is.
//! - **Symmetry.** Node rows are sorted and the view is the minimum over client
//!   permutations. Static roles (which client reaches which node, a jump pinned to one
//!   process) are part of each row, so only permutations that preserve the configuration can
//!   make two views equal: symmetry stays sound with partitions and pinned faults. The
//!   fencing counters (`fence.rs`) travel with their node's or client's row through the sort
//!   and the permutation, so the minimum is taken over rows and counters together. Clients
//!   whose quorums differ (`[lock] quorum = [3, 2]`) are not interchangeable: a permutation
//!   would hand one client's count of nodes to another, so only the identity is tried then.
//!   The node rows are still sorted: a round counts how many nodes said yes, never which.
//!   A client cut off from every node (`[faults.client_partitions]`) reaches none from then
//!   on, and the per-client reach bits of the node rows say so: the cut needs no bit of its
//!   own. A client whose `[network] reach` is already empty is never cut (nothing would
//!   change), so two views that agree on every reach bit agree on which cuts happened
//!   wherever they could matter, and the cut moves with its client through a permutation.
//!   Two replicas of n1 are sorted too: each copies the master on its own `Replicate`, the
//!   failover may promote either, and a write's `WAIT` may count either (every choice is a
//!   step), so swapping them maps every path onto a path.
//! - **Ghost fields.** Whether a process has jumped is dead once the budget is spent and is
//!   left out. No step reads the `acquired` bits, and `lock acquired` and `eventually
//!   acquired` read only whether *some* client acquired, so only that one bit is hashed.
//!   Without storage the lock epochs (the fencing tokens) are read by no step and no property
//!   and are left out. Both are kept in full with user invariants, which may read any field
//!   (`RedlockModel::with_exact_ghosts`; `tests/reductions.rs` cross-checks the verdicts).
//! - **Won rounds.** Once `Q` nodes whose yes counts applied a round decided at quorum, the
//!   rest of its tally is dead: the round is decided whatever else arrives, and the core's
//!   `finish` then wins with a deadline and validity that depend only on T1 and T2 (the lease's
//!   tally, the only other thing it carries over, is read by no step, no property and no
//!   view). Such a round is shown as "won" with no per-node answers; the requests still in
//!   flight stay in the view, since they still change the nodes. Also kept in full with
//!   user invariants, which may read a round's tally.
//!   An acquisition that may still write its fencing counter back is not merged: which nodes
//!   returned the largest counter decides whether the write-back is needed.
//!   Lost rounds are not merged the same way: telling that one is lost whatever else arrives
//!   needs the core's decision replayed for every fingerprint, which cost about 8 % of a
//!   large run's time for 0.2–0.5 % fewer states (measured on 5 nodes × 2 clients, ttl 10).
//! - **Dead nodes.** A node's key (and its availability, its guard, the requests travelling to
//!   it) can influence a client only through a later request whose answer some client reads:
//!   an acquisition round the client may still begin (it has not started, backs off, or may
//!   lose the round in flight and retry), an extension it may still run, the fencing
//!   write-back a won acquisition still has to send (it reads which nodes still hold the
//!   key), or a request of the round it is collecting. Releases only write. So a node outside every client's future
//!   reads is *dead*: nothing it holds can reach a belief, the storage or a property again,
//!   and it is shown as an empty, serving node with nothing in flight. Liveness only shrinks
//!   along a path (attempts and extensions are only used up, phases only move on), so a dead
//!   node never comes back. Once every node is dead, the faults that act only on nodes
//!   (crashes, node clock jumps, message loss, failover) are dead too and their budgets are
//!   shown as spent. This is the dead-variable reduction measured in research/scale.md (R1),
//!   applied to the fingerprint rather than the state, so stories still show every key as it
//!   was. Off with user invariants (which may read any node) and in the liveness run.
//!
//! In the liveness run true time is part of the fingerprint (the run is bounded by it).

use std::hash::{Hash, Hasher};

use crate::node::{Availability, NodeState};
use crate::proto::{
    Fencing, LockPhase, NodeId, NodeSet, QuorumRound, RoundDecision, RoundKind, Tally, Token,
};
use crate::scenario::{Bound, JumpTarget, MAX_MODEL_CLIENTS, MAX_MODEL_NODES, MAX_REPLICAS};
use crate::storage::StorageOp;
use crate::time::Millis;

use super::fence::{ClientFence, NodeFence};
use super::shape::Mode;
use super::world::{Work, World};
use super::world::{owner_of, token_of};

/// The node rows, the first replica's, the client rows, and the second replica's last, so
/// that a world with at most one replica leaves it 0 and hashes only the rows before it
/// (`hashed`): exactly what it hashed before n1 could have two. The replicas of a third node
/// on (`[failover] every_node`) are hashed after the rows (`World::later_replica_rows`), so that
/// every other world's view stays this small.
const ROWS: usize = MAX_MODEL_NODES + 1 + MAX_MODEL_CLIENTS + 1;
/// Where the second replica's row is.
const SECOND_REPLICA: usize = ROWS - 1;

const PERMS_1: [[usize; 3]; 1] = [[0, 1, 2]];
const PERMS_2: [[usize; 3]; 2] = [[0, 1, 2], [1, 0, 2]];
const PERMS_3: [[usize; 3]; 6] = [
    [0, 1, 2],
    [0, 2, 1],
    [1, 0, 2],
    [1, 2, 0],
    [2, 0, 1],
    [2, 1, 0],
];

fn clamp8(v: i64) -> u64 {
    (v + 128).clamp(0, 255) as u64
}

/// An acquiring client's round at bits 8 to 27 of its row: its age and, in a sequential
/// round, the node it waits for and for how long (that node's timeout runs from there).
fn acquiring_bits(round: &QuorumRound, clock: Millis, age_cap: i64) -> u64 {
    let age = clock.signed_sub(round.t1).min(age_cap);
    let mut bits = clamp8(age) << 8;
    if let Some(asking) = round.asking {
        let waited = clock.signed_sub(asking.since).min(age_cap);
        bits |= (u64::from(asking.node.0) + 1) << 16 | clamp8(waited) << 20;
    }
    bits
}

/// A node's (or the replica's) row without the parts a client permutation changes, plus the
/// owner of its key and the per-client bits, so each permutation only re-assembles bits.
#[derive(Clone, Copy, Default)]
struct RowParts {
    base: u64,
    owner: Option<usize>,
    per_client: [u64; MAX_MODEL_CLIENTS],
}

impl RowParts {
    fn assemble(&self, perm: &[usize; 3], clients: usize) -> u64 {
        let mut row = self.base;
        if let Some(owner) = self.owner {
            row |= (perm[owner] as u64 + 1) << 10;
        }
        for (c, bits) in self.per_client.iter().enumerate().take(clients) {
            row |= bits << (23 + 7 * perm[c]);
        }
        row
    }
}

/// Whether a client's round still depends on its per-node answers (see "Won rounds" above).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Settled {
    /// Not collecting, or the answers still to come can change the outcome.
    Open,
    /// Won whatever else arrives.
    Won,
}

/// What the node rows read of each client, worked out once per fingerprint.
#[derive(Clone, Copy)]
struct ClientFacts {
    /// Whether the round's per-node answers are still part of the view: collecting a round
    /// that is not settled.
    open_round: bool,
    /// The token of the latest round, when the client can still act on keys with it
    /// (collecting a round or holding a lease).
    acting_token: Option<Token>,
}

impl World {
    fn client_facts(
        &self,
        settled: &[Settled; MAX_MODEL_CLIENTS],
    ) -> [ClientFacts; MAX_MODEL_CLIENTS] {
        let mut facts = [ClientFacts {
            open_round: false,
            acting_token: None,
        }; MAX_MODEL_CLIENTS];
        for (c, f) in facts.iter_mut().enumerate().take(self.shape.clients) {
            let slot = &self.clients[c];
            let (collecting, acting) = match slot.lock.phase() {
                LockPhase::Acquiring(_) | LockPhase::Extending { .. } => (true, true),
                LockPhase::Holding { .. } => (false, true),
                // A value kept across attempts: the next round and a late release of an
                // earlier one act on every key that carries it.
                LockPhase::BackingOff { .. } => (false, self.shape.keeps_token()),
                _ => (false, !slot.late.is_empty()),
            };
            f.open_round = collecting && settled[c] == Settled::Open;
            f.acting_token = acting.then(|| {
                if self.shape.keeps_token() {
                    token_of(c, 1)
                } else {
                    slot.token()
                }
            });
        }
        facts
    }
}

impl World {
    /// Whether client `c`'s round is settled whatever else arrives.
    fn settled(&self, c: usize) -> Settled {
        let shape = &self.shape;
        if shape.exact_ghosts {
            return Settled::Open;
        }
        let slot = &self.clients[c];
        let round = match *slot.lock.phase() {
            LockPhase::Acquiring(round) | LockPhase::Extending { round, .. } => round,
            _ => return Settled::Open,
        };
        // With the write-back, which nodes returned the largest counter still decides whether
        // the won acquisition needs its second round, so its answers stay in the view.
        if self.write_back_pending(c) {
            return Settled::Open;
        }
        // A sequential round's earlier answers are the core's, and a late answer of a node
        // that timed out sits in the mailbox though the core counts it failed: not merged.
        if round.asking.is_some() {
            return Settled::Open;
        }
        let quorum = round.quorum(&shape.client_params[c]);
        let counting = slot.mailbox.applied.difference(slot.guarded).len();
        if shape.params.decision == RoundDecision::AtQuorum && counting >= quorum {
            return Settled::Won;
        }
        Settled::Open
    }

    /// Whether client `c` collects an acquisition whose win may still need the fencing
    /// write-back: the lock nodes' counters feed the token and are written back.
    fn write_back_pending(&self, c: usize) -> bool {
        self.shape.params.fencing == Fencing::WriteBack
            && matches!(
                self.clients[c].lock.phase(),
                LockPhase::Acquiring(round) if round.kind == RoundKind::Acquire
            )
    }

    /// The nodes whose key some client may still read (see "Dead nodes" above).
    pub(crate) fn live_nodes(&self) -> NodeSet {
        let shape = &self.shape;
        if !shape.dead_nodes || shape.exact_ghosts || shape.mode == Mode::Liveness {
            return NodeSet::first(shape.nodes);
        }
        let mut live = NodeSet::EMPTY;
        for c in 0..shape.clients {
            let slot = &self.clients[c];
            let may_begin = slot.lock.attempts() < shape.params.retry.attempts;
            let may_extend = slot.extensions < shape.extensions;
            let reads = match slot.lock.phase() {
                LockPhase::Idle | LockPhase::BackingOff { .. } => self.reach(c),
                LockPhase::Acquiring(_) if may_begin || may_extend => self.reach(c),
                // A won acquisition that writes its fence back sends the write-back round to
                // the nodes it reaches and reads which of them still hold its key: until that
                // round has begun, every node it reaches may still be read.
                LockPhase::Acquiring(round)
                    if round.kind == RoundKind::Acquire
                        && shape.params.fencing == Fencing::WriteBack =>
                {
                    self.reach(c)
                }
                // A sequential round will still ask the nodes after the one it waits for.
                LockPhase::Acquiring(round) if round.asking.is_some() => self.reach(c),
                LockPhase::Acquiring(_) => slot.inflight,
                LockPhase::Holding { .. } | LockPhase::Extending { .. } if may_extend => {
                    self.reach(c)
                }
                LockPhase::Extending { .. } => slot.inflight,
                LockPhase::Holding { .. } | LockPhase::Releasing(_) | LockPhase::Finished => {
                    NodeSet::EMPTY
                }
            };
            live = live.union(reads);
        }
        live
    }

    fn key_parts(
        &self,
        state: &NodeState,
        clock: Millis,
        facts: &[ClientFacts; MAX_MODEL_CLIENTS],
    ) -> RowParts {
        let mut parts = RowParts::default();
        match state.availability {
            Availability::Up => {}
            Availability::Down => parts.base |= 1,
            Availability::Restarting { ready_at } => {
                parts.base |= 2 | clamp8(ready_at.signed_sub(clock)) << 2;
            }
        }
        if let Some(entry) = state.entry {
            // Who owns a key matters only while the owner can still act on it: compare-and-
            // delete or extend it with the same token, which only a client in a round or
            // holding its lease does. Any other key (a stale token, or an owner that is idle
            // or done) behaves the same whoever set it, so it is shown ownerless.
            // With one token value shared by every client, a key matches whichever client
            // acts on it, so who set it never matters: it is shown ownerless (the client
            // rows already say who is acting).
            let owner = owner_of(entry.token);
            if !self.shape.shared_token && facts[owner].acting_token == Some(entry.token) {
                parts.owner = Some(owner);
            }
            parts.base |= 1 << 12;
            parts.base |= u64::from(entry.durable) << 13;
            parts.base |= clamp8(entry.expires_at.signed_sub(clock)) << 14;
        }
        parts
    }

    fn node_parts(
        &self,
        n: usize,
        live: bool,
        facts: &[ClientFacts; MAX_MODEL_CLIENTS],
    ) -> RowParts {
        let shape = &self.shape;
        // A dead node is shown as an empty, serving node with nothing in flight.
        let mut parts = if live {
            self.key_parts(&self.nodes[n].state, self.node_clock(n), facts)
        } else {
            RowParts::default()
        };
        let pinned = shape.jump_target == JumpTarget::Node && shape.jump_index == Some(n as u8);
        parts.base |= u64::from(pinned) << 22;
        // The restarted-node guard's remaining time on the node's clock (an expired guard is
        // cleared by the steps). Bits 23..43 hold the per-client bits.
        if let Some(until) = self.nodes[n].guarded_until.filter(|_| live) {
            parts.base |= 1 << 44 | clamp8(until.signed_sub(self.node_clock(n))) << 45;
        }
        let node = NodeId(n as u8);
        for (c, bits) in parts.per_client.iter_mut().enumerate().take(shape.clients) {
            let reach = self.reach(c).contains(node);
            let inflight = live && self.clients[c].inflight.contains(node);
            let late = live && self.clients[c].late.contains(node);
            // Whether the guard kept this node's yes out matters only while the round runs.
            let slot = &self.clients[c];
            let (tally, excluded) = if facts[c].open_round {
                // The answers the core already has (a sequential round hands them over one
                // by one; any other round has none before it is decided), then the mailbox's.
                let handed = match slot.lock.phase() {
                    LockPhase::Acquiring(round) | LockPhase::Extending { round, .. } => round.tally,
                    _ => Tally::default(),
                };
                let result = match handed.result(node) {
                    crate::proto::NodeResult::NoReply => slot.mailbox.result(node),
                    handed => handed,
                };
                let tally = match result {
                    crate::proto::NodeResult::NoReply => 0,
                    crate::proto::NodeResult::Applied => 1,
                    crate::proto::NodeResult::NotApplied => 2,
                    crate::proto::NodeResult::Failed => 3,
                };
                let excluded = slot.guarded.union(slot.lock.excluded());
                (tally, excluded.contains(node))
            } else {
                (0, false)
            };
            // Whether this node's yes carried the mailbox's largest counter decides whether a
            // won acquisition still writes its fence back (`QuorumRound::needs_write_back`).
            let at_fence = facts[c].open_round
                && self.write_back_pending(c)
                && self.fences.at_seen[c].contains(node);
            *bits = u64::from(reach)
                | u64::from(inflight) << 1
                | tally << 2
                | u64::from(excluded) << 4
                | u64::from(at_fence) << 5
                | u64::from(late) << 6;
        }
        parts
    }

    fn client_row(&self, c: usize, settled: Settled) -> u64 {
        let shape = &self.shape;
        let slot = &self.clients[c];
        let back = shape.client_backward_budget(self.budget.jumps, self.budget.jump_sizes_used);
        let clock = self.client_clock(c);
        let pinned = shape.jump_target == JumpTarget::Client && shape.jump_index == Some(c as u8);
        // A round's age matters up to the later of its timeout and `ttl − drift`; a lease's
        // remaining validity matters down to `−ε_c`. Both widened by the backward budget.
        let age_cap = self.round_age_cap() + back;
        let left_floor = -i64::from(shape.eps_c) - back;
        // What requests are in flight matters only while some are.
        let inflight_extend = slot.extending_in_flight();
        let acquired = if shape.exact_ghosts {
            self.acquired >> c & 1 != 0
        } else {
            self.acquired != 0
        };
        // The epoch of a held lease: the fencing token, dead without storage.
        let epoch_of = |epoch: u8| {
            if shape.exact_ghosts || shape.storage.is_some() {
                u64::from(epoch)
            } else {
                0
            }
        };
        let mut row = u64::from(pinned)
            | u64::from(acquired) << 4
            | u64::from(inflight_extend) << 55
            | u64::from(settled == Settled::Won) << 56;
        let finished = matches!(
            slot.lock.phase(),
            LockPhase::Releasing(_) | LockPhase::Finished
        );
        if !finished {
            // A finished client never begins or extends again: its counters are dead.
            row |= u64::from(slot.lock.attempts()) << 1 | u64::from(slot.extensions) << 53;
        }
        let epoch = slot.epoch;
        let work = slot.work;
        match *slot.lock.phase() {
            // Never started: as if its back-off ended long ago.
            LockPhase::Idle => row |= clamp8(-back) << 8,
            // Backing off: when the next round may begin matters until it is due, and again
            // only as far as the backward budget can move the clock back.
            LockPhase::BackingOff { until, .. } => {
                row |= clamp8(until.signed_sub(clock).max(-back)) << 8;
            }
            LockPhase::Releasing(_) | LockPhase::Finished => row |= 1 << 5,
            LockPhase::Acquiring(round) => row |= 2 << 5 | acquiring_bits(&round, clock, age_cap),
            LockPhase::Extending { lease, round } => {
                let left = lease.deadline.signed_sub(clock).max(left_floor);
                let age = clock.signed_sub(round.t1).min(age_cap);
                row |= 4 << 5 | clamp8(left) << 8 | epoch_of(epoch) << 16 | clamp8(age) << 45;
            }
            LockPhase::Holding { lease, .. } => {
                let left = lease.deadline.signed_sub(clock).max(left_floor);
                row |= 3 << 5 | clamp8(left) << 8;
                row |= epoch_of(epoch) << 16;
                row |= self.work_bits(work);
            }
        }
        row
    }

    /// The later of the round timeout and `ttl − drift`: how old a round can get and still
    /// matter, before the backward budget widens it.
    fn round_age_cap(&self) -> i64 {
        let params = &self.shape.params;
        params.round_timeout.max(params.ttl - params.drift).as_u64() as i64
    }

    /// A holder's storage work, at bits 21 to 45 of its row: the next op, the one on its
    /// way, the value read, the stall, the pause, and whether a two-step storage has checked
    /// the op (bit 45 is the extension round's age only in an extending row).
    fn work_bits(&self, work: Work) -> u64 {
        let pending = match work.pending {
            None => 0,
            Some(StorageOp::Mark { .. }) => 1,
            Some(StorageOp::Read { .. }) => 2,
            Some(StorageOp::Write { value, .. }) => 3 | u64::from(value.min(31)) << 2,
        };
        let stall = match self.shape.stall_allowance(work.paused) {
            Bound::Unbounded => 0,
            Bound::Ticks(_) => u64::from(work.stall),
        };
        u64::from(work.next) << 21
            | pending << 23
            | work.read.map_or(0, |v| 1 | u64::from(v.min(31)) << 1) << 30
            | stall.min(255) << 36
            | u64::from(work.paused) << 44
            | u64::from(work.checked) << 45
    }

    /// What every permutation re-assembles: the node rows' parts, the replica's, the client
    /// rows, and the permutations the symmetry reduction tries, with `live` the nodes some
    /// client may still read.
    fn row_parts(&self, live: NodeSet) -> Parts {
        let shape = &self.shape;
        let settled = self.settled_clients();
        let perms: &'static [[usize; 3]] = match (shape.symmetry, shape.clients) {
            (false, _) | (_, 1) => &PERMS_1,
            _ if shape.quorums_differ => &PERMS_1,
            (true, 2) => &PERMS_2,
            (true, _) => &PERMS_3,
        };
        let facts = self.client_facts(&settled);
        let mut nodes = [RowParts::default(); MAX_MODEL_NODES];
        for (n, parts) in nodes.iter_mut().enumerate().take(shape.nodes) {
            *parts = self.node_parts(n, live.contains(NodeId(n as u8)), &facts);
        }
        // A replica is read only through its node, once promoted.
        let mut replicas = [None; MAX_REPLICAS];
        for (r, parts) in replicas.iter_mut().enumerate().take(shape.replica_slots()) {
            *parts = self.replica_parts(r, live, &facts);
        }
        let mut clients = [0u64; MAX_MODEL_CLIENTS];
        for (c, row) in clients.iter_mut().enumerate().take(shape.clients) {
            *row = self.client_row(c, settled[c]);
        }
        Parts {
            perms,
            nodes,
            replicas,
            clients,
        }
    }

    /// The canonical rows: node rows (sorted), the replica row, client rows (permuted), with
    /// `live` the nodes some client may still read.
    fn canonical_rows(&self, live: NodeSet) -> [u64; ROWS] {
        let shape = &self.shape;
        let parts = self.row_parts(live);
        let mut best = [u64::MAX; ROWS];
        let mut rows = [0u64; ROWS];
        for perm in parts.perms {
            parts.fill(perm, shape, &mut rows);
            if shape.symmetry {
                rows[..shape.nodes].sort_unstable();
            }
            if rows < best {
                best = rows;
            }
        }
        best
    }

    /// [`canonical_rows`](World::canonical_rows) with the fencing counters (`fence.rs`): each
    /// travels with its node's or client's row through the sort and the permutation, so the
    /// minimum is over rows and counters together, and two states that differ only in which
    /// node holds which counter stay apart unless a symmetry maps one onto the other. A
    /// separate loop, so that scenarios without counters pay nothing for them.
    fn canonical_fenced(&self, live: NodeSet) -> Fenced {
        let shape = &self.shape;
        let parts = self.row_parts(live);
        let mut node_fences = [NodeFence::default(); MAX_MODEL_NODES];
        for (n, fence) in node_fences.iter_mut().enumerate().take(shape.nodes) {
            *fence = self.node_fence(n, live.contains(NodeId(n as u8)));
        }
        let mut client_fences = [ClientFence::default(); MAX_MODEL_CLIENTS];
        for (c, fence) in client_fences.iter_mut().enumerate().take(shape.clients) {
            *fence = self.client_fence(c, live);
        }
        let mut best: Option<Fenced> = None;
        let mut view = Fenced::default();
        for perm in parts.perms {
            parts.fill(perm, shape, &mut view.rows);
            let mut paired = [(0u64, NodeFence::default()); MAX_MODEL_NODES];
            for (pair, (&row, &fence)) in paired
                .iter_mut()
                .zip(view.rows.iter().zip(&node_fences))
                .take(shape.nodes)
            {
                *pair = (row, fence);
            }
            if shape.symmetry {
                paired[..shape.nodes].sort_unstable();
            }
            for (n, &(row, fence)) in paired.iter().enumerate().take(shape.nodes) {
                view.rows[n] = row;
                view.node_fences[n] = fence;
            }
            for (c, fence) in client_fences.iter().enumerate().take(shape.clients) {
                view.client_fences[perm[c]] = *fence;
            }
            if best.is_none_or(|best| view < best) {
                best = Some(view);
            }
        }
        best.expect("at least the identity permutation")
    }
}

impl World {
    /// The rows the fingerprint hashes: the second replica's only when the world has one
    /// (see [`ROWS`]).
    fn hashed<'a>(&self, rows: &'a [u64; ROWS]) -> &'a [u64] {
        if self.shape.replica_slots() > 1 {
            rows
        } else {
            &rows[..SECOND_REPLICA]
        }
    }

    /// Each client's settled state, which its row and every node row read.
    fn settled_clients(&self) -> [Settled; MAX_MODEL_CLIENTS] {
        let mut settled = [Settled::Open; MAX_MODEL_CLIENTS];
        for (c, s) in settled.iter_mut().enumerate().take(self.shape.clients) {
            *s = self.settled(c);
        }
        settled
    }

    /// The rows of the replicas past the second (see [`ROWS`]). Only `[failover] every_node`
    /// on three nodes or more has them, and symmetry is off there (`shape.rs`): the identity
    /// is the only permutation, so they need no place among the permuted rows.
    fn later_replica_rows(&self, live: NodeSet) -> Vec<u64> {
        debug_assert!(!self.shape.symmetry);
        let facts = self.client_facts(&self.settled_clients());
        (MAX_REPLICAS..self.shape.replica_slots())
            .map(|r| {
                self.replica_parts(r, live, &facts)
                    .map_or(0, |p| 1 << 63 | p.assemble(&PERMS_1[0], self.shape.clients))
            })
            .collect()
    }

    /// Replica slot `r`'s row parts: read only through its node once promoted, so a dead
    /// node's replica shows nothing.
    fn replica_parts(
        &self,
        r: usize,
        live: NodeSet,
        facts: &[ClientFacts; MAX_MODEL_CLIENTS],
    ) -> Option<RowParts> {
        let n = self.shape.replica_node(r);
        self.replicas[r].map(|replica| {
            if live.contains(NodeId(n as u8)) {
                self.key_parts(&replica.node_state(), self.node_clock(n), facts)
            } else {
                RowParts::default()
            }
        })
    }
}

/// See [`World::row_parts`].
struct Parts {
    perms: &'static [[usize; 3]],
    nodes: [RowParts; MAX_MODEL_NODES],
    replicas: [Option<RowParts>; MAX_REPLICAS],
    clients: [u64; MAX_MODEL_CLIENTS],
}

impl Parts {
    /// The rows under the client permutation `perm`, node rows not yet sorted.
    fn fill(&self, perm: &[usize; 3], shape: &super::shape::Shape, rows: &mut [u64; ROWS]) {
        rows.fill(0);
        for (row, parts) in rows.iter_mut().zip(&self.nodes).take(shape.nodes) {
            *row = parts.assemble(perm, shape.clients);
        }
        let mut replicas = self
            .replicas
            .map(|r| r.map_or(0, |r| 1 << 63 | r.assemble(perm, shape.clients)));
        // With symmetry both replicas are n1's (every node's have it off when there are
        // several nodes, see `shape.rs`), and interchangeable (each copies on its own, any may
        // be promoted, a `WAIT` may count any of them), so their rows are sorted.
        if shape.symmetry {
            replicas[..shape.replica_slots().min(MAX_REPLICAS)].sort_unstable();
        }
        rows[MAX_MODEL_NODES] = replicas[0];
        rows[SECOND_REPLICA] = replicas[1];
        for c in 0..shape.clients {
            rows[MAX_MODEL_NODES + 1 + perm[c]] = self.clients[c];
        }
    }
}

/// The canonical view of a fenced world's rows (see [`World::canonical_fenced`]).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Fenced {
    rows: [u64; ROWS],
    node_fences: [NodeFence; MAX_MODEL_NODES],
    client_fences: [ClientFence; MAX_MODEL_CLIENTS],
}

impl Default for Fenced {
    fn default() -> Self {
        Fenced {
            rows: [0; ROWS],
            node_fences: [NodeFence::default(); MAX_MODEL_NODES],
            client_fences: [ClientFence::default(); MAX_MODEL_CLIENTS],
        }
    }
}

impl Hash for World {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let live = self.live_nodes();
        let fenced = self.fenced_view().then(|| self.canonical_fenced(live));
        match &fenced {
            Some(view) => self.hashed(&view.rows).hash(state),
            None => self.hashed(&self.canonical_rows(live)).hash(state),
        }
        // Only where they exist, so that every other world hashes what it did before.
        if self.shape.replica_slots() > MAX_REPLICAS {
            self.later_replica_rows(live).hash(state);
        }
        self.storage.hash(state);
        let mut budget = self.budget;
        if live.is_empty() {
            // No node can influence anything again: faults that act only on nodes are dead
            // (a crash of the counter node of `counter-after-acquire` still can).
            if !self.counter_node_in_play() {
                budget.crashes = 0;
            }
            budget.losses = 0;
            budget.failovers = 0;
            if !self.shape.client_jumps() {
                budget.jumps = 0;
            }
        }
        // Which sizes are used matters only while a jump is left.
        if budget.jumps == 0 {
            budget.jump_sizes_used = 0;
        }
        budget.hash(state);
        if self.shape.exact_ghosts || self.shape.storage.is_some() {
            self.epochs.hash(state);
        }
        if let Some(view) = &fenced {
            view.node_fences[..self.shape.nodes].hash(state);
            view.client_fences[..self.shape.clients].hash(state);
            self.hash_counter_node(state);
        }
        if self.shape.mode == Mode::Liveness || self.shape.exact_time.is_some() {
            self.now.hash(state);
        }
    }
}
