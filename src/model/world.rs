//! The model's state: true time as a ghost, nodes on their own clocks, clients that *are* the
//! core's [`LockState`], the guarded storage, and the fault budgets left.

use crate::actor::Actor;
use crate::node::{Availability, Entry, NodeState};
use crate::proto::{Lease, LockPhase, LockState, NodeSet, Op, QuorumRound, Request, Tally, Token};
use crate::storage::{Storage, StorageOp};
use crate::time::{CLOCK_ORIGIN, Millis};

use crate::scenario::MAX_REPLICAS;

use super::shape::Shape;

/// One Redis master: the core's [`NodeState`] plus the offset of its clock from true time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct NodeSlot {
    /// The key and the node's availability, exactly as the core keeps them.
    pub state: NodeState,
    /// `node clock − true time` (moved by clock jumps).
    pub offset: i64,
    /// Until when, on the node's clock, the clients' restarted-node guard keeps this node's
    /// yes out of the quorum (`None` once it has served long enough, or without a guard).
    pub guarded_until: Option<Millis>,
    /// Ghost, for stories only: the client whose `SET` created the key, which its token no
    /// longer tells when the clients share one token value (`[lock] token = "shared"`). No step
    /// and no property reads it, so the fingerprint leaves it out.
    pub setter: u8,
}

/// What a client is doing, as reports and user invariants see it: the core's `LockPhase`
/// with the holder's storage work and the lock epoch added (see [`World::activity`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activity {
    /// Not started, or backing off between attempts.
    Idle,
    /// Waiting for the replies of an acquisition round (the core's value; the tally includes
    /// the answers that reached the client and wait to be handled).
    Acquiring(QuorumRound),
    /// Won a lease (the core's value); `epoch` numbers successful acquisitions in true-time
    /// order and doubles as the fencing token.
    Holding {
        /// The lease as the core computed it.
        lease: Lease,
        /// The acquisition's epoch (1, 2, …).
        epoch: u8,
        /// Progress through the read-modify-write cycle on the storage.
        work: Work,
    },
    /// Holding a lease and running an extension round (the core's value) for it; the
    /// client keeps believing its current lease meanwhile.
    Extending {
        /// The lease being extended.
        lease: Lease,
        /// The acquisition's epoch.
        epoch: u8,
        /// The extension round (compare-and-pexpire on every node).
        round: QuorumRound,
    },
    /// Finished: released its lease, or ran out of attempts.
    Done,
}

/// A holder's progress through its storage ops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Work {
    /// How many ops of the cycle are done.
    pub next: u8,
    /// An op that passed the validity check and has not reached the storage yet.
    pub pending: Option<StorageOp>,
    /// The value the cycle's read returned.
    pub read: Option<u32>,
    /// Ticks the pending op has waited.
    pub stall: u32,
    /// Whether a pause fault stretched the pending op's wait.
    pub paused: bool,
    /// The pending op passed the storage's check and waits to be applied (`[storage] check =
    /// "two-step"` only).
    pub checked: bool,
}

/// One client: its clock offset, the core's lock, and what the network and the storage hold
/// for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ClientSlot {
    /// `client clock − true time` (moved by clock jumps).
    pub offset: i64,
    /// The lock's life, exactly as the core keeps it.
    pub lock: LockState,
    /// Answers that reached the client and wait to be handled: the client hands them all to
    /// the core when it decides, so the time between the last answer and T2 (a slow or paused
    /// client) is modelled.
    pub mailbox: Tally,
    /// Nodes in the mailbox that answered while the restarted-node guard covered them: their
    /// yes is handed to the core as not counting toward the quorum.
    pub guarded: NodeSet,
    /// The latest acquisition or extension request (the core's), still travelling to the
    /// nodes in `inflight` (it may land after the round was decided, as a real late request
    /// does).
    pub request: Option<Request>,
    /// Nodes the request has not reached yet.
    pub inflight: NodeSet,
    /// With `[lock] token = "reused"`: the release of a failed round (the core's request,
    /// which the core does not wait for), still travelling to the nodes in `late`.
    pub late_release: Option<Request>,
    /// Nodes the late release has not reached yet.
    pub late: NodeSet,
    /// Extension rounds begun.
    pub extensions: u8,
    /// The epoch of the lease held (ghost: the fencing token of the ideal counter).
    pub epoch: u8,
    /// Progress through the storage cycle while holding.
    pub work: Work,
    /// Cut off from every node for good (`[faults.client_partitions]`): it reaches none.
    pub cut_off: bool,
}

impl ClientSlot {
    /// A client that has not started.
    pub(crate) const fn new() -> ClientSlot {
        ClientSlot {
            offset: CLOCK_ORIGIN,
            lock: LockState::new(),
            mailbox: Tally {
                applied: NodeSet::EMPTY,
                not_applied: NodeSet::EMPTY,
                failed: NodeSet::EMPTY,
            },
            guarded: NodeSet::EMPTY,
            request: None,
            inflight: NodeSet::EMPTY,
            late_release: None,
            late: NodeSet::EMPTY,
            extensions: 0,
            epoch: 0,
            work: Work {
                next: 0,
                pending: None,
                read: None,
                stall: 0,
                paused: false,
                checked: false,
            },
            cut_off: false,
        }
    }

    /// Whether the requests in flight are extensions (compare-and-pexpire).
    pub(crate) fn extending_in_flight(&self) -> bool {
        !self.inflight.is_empty()
            && matches!(
                self.request,
                Some(Request {
                    op: Op::PExpireIfEq { .. },
                    ..
                })
            )
    }

    /// The token of the latest round (acquisition or, while held, the lease's).
    pub(crate) fn token(&self) -> Token {
        match self.lock.phase() {
            LockPhase::Acquiring(round) => round.token,
            LockPhase::Holding { lease, .. } | LockPhase::Extending { lease, .. } => lease.token,
            LockPhase::Releasing(release) => release.token,
            _ => match self.request.map(|r| r.op) {
                Some(Op::SetNxPx { token, .. } | Op::PExpireIfEq { token, .. }) => token,
                _ => Token(0),
            },
        }
    }

    /// The client's activity as reports see it (see [`Activity`]).
    pub(crate) fn activity(&self) -> Activity {
        let with_mailbox = |mut round: QuorumRound| {
            for node in self.mailbox.answered().iter() {
                round.tally.record(node, self.mailbox.reply(node));
            }
            round
        };
        match *self.lock.phase() {
            LockPhase::Idle | LockPhase::BackingOff { .. } => Activity::Idle,
            LockPhase::Acquiring(round) => Activity::Acquiring(with_mailbox(round)),
            LockPhase::Holding { lease, .. } => Activity::Holding {
                lease,
                epoch: self.epoch,
                work: self.work,
            },
            LockPhase::Extending { lease, round } => Activity::Extending {
                lease,
                epoch: self.epoch,
                round: with_mailbox(round),
            },
            LockPhase::Releasing(_) | LockPhase::Finished => Activity::Done,
        }
    }
}

/// The token of `client`'s acquisition round number `attempt` (from 1): unique per client and
/// attempt, and the client is recoverable from it ([`owner_of`]).
pub(crate) fn token_of(client: usize, attempt: u32) -> Token {
    Token(((client as u128 + 1) << 4) | u128::from(attempt))
}

/// The client a token belongs to.
pub(crate) fn owner_of(token: Token) -> usize {
    (token.0 >> 4) as usize - 1
}

/// The model's fencing state besides the lock nodes' counters (which live in their
/// [`NodeState`]); what it means is in `fence.rs`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Fences {
    /// The separate counter node of `counter-after-acquire` (its `counter` field is the
    /// counter; it holds no key).
    pub counter_node: NodeState,
    /// Per client: the largest counter a node returned with a yes now waiting in its mailbox.
    pub seen: [u64; crate::scenario::MAX_MODEL_CLIENTS],
    /// Per client: the nodes whose yes in its mailbox carried that largest counter (the core
    /// skips the write-back when they are a quorum).
    pub at_seen: [crate::proto::NodeSet; crate::scenario::MAX_MODEL_CLIENTS],
    /// Per client: the token taken from the counter node for the lease it holds (0: not yet).
    pub taken: [u64; crate::scenario::MAX_MODEL_CLIENTS],
}

/// Fault budgets left.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct FaultsLeft {
    /// Clock jumps left.
    pub jumps: u8,
    /// With `jump_ticks = [..]`, bit `i` says the `i`-th listed size is used (0 otherwise).
    pub jump_sizes_used: u8,
    /// Node crashes left.
    pub crashes: u8,
    /// Client crashes left.
    pub client_crashes: u8,
    /// Client partitions left.
    pub client_partitions: u8,
    /// Pauses left.
    pub pauses: u8,
    /// Message losses left.
    pub losses: u8,
    /// Failovers left (`[failover] failovers`; 0 without `[failover]`).
    pub failovers: u8,
}

/// An asynchronous replica: what it copied from its master, the key and the fencing counter
/// (Redis replicates the whole dataset). It neither crashes nor serves until it is promoted,
/// so it carries no availability, and every world pays for its slots: this is all it holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Replica {
    /// The master's key as last copied, expired on the master's clock.
    pub entry: Option<Entry>,
    /// The master's fencing counter as last copied.
    pub counter: u64,
}

impl Replica {
    /// The replica as a node that is up: what it serves once promoted.
    pub fn node_state(self) -> NodeState {
        NodeState {
            entry: self.entry,
            counter: self.counter,
            ..NodeState::new()
        }
    }

    /// Deletes the copied key once `clock` (its master's) reaches its expiry.
    pub(crate) fn expire(&mut self, clock: Millis) {
        if self.entry.is_some_and(|entry| clock >= entry.expires_at) {
            self.entry = None;
        }
    }
}

/// A world's replica slots: n1's two inline, and the rest (a replica on every node of three
/// or more) behind a box, so that every other world copies no more than it did before
/// `[failover] every_node` (a `SmallVec`, whose clone is a loop, cost 5 % of a large run).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Replicas {
    inline: [Option<Replica>; MAX_REPLICAS],
    more: Option<Box<[Option<Replica>]>>,
    len: u8,
}

impl Replicas {
    /// `len` slots, each with an empty replica.
    pub(crate) fn new(len: usize) -> Replicas {
        let mut slots = Replicas {
            len: len as u8,
            more: (len > MAX_REPLICAS).then(|| vec![None; len - MAX_REPLICAS].into()),
            ..Replicas::default()
        };
        slots.fill(Some(Replica::default()));
        slots
    }

    /// How many slots the world has.
    pub(crate) fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// Slot `r`, if the world has it.
    pub(crate) fn get(&self, r: usize) -> Option<&Option<Replica>> {
        match r.checked_sub(MAX_REPLICAS) {
            _ if r >= self.len() => None,
            None => self.inline.get(r),
            Some(later) => self.more.as_ref()?.get(later),
        }
    }

    /// Slot `r`, if the world has it, to change.
    pub(crate) fn get_mut(&mut self, r: usize) -> Option<&mut Option<Replica>> {
        match r.checked_sub(MAX_REPLICAS) {
            _ if r >= self.len() => None,
            None => self.inline.get_mut(r),
            Some(later) => self.more.as_mut()?.get_mut(later),
        }
    }

    /// Every slot, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Option<Replica>> {
        let inline = &self.inline[..self.len().min(MAX_REPLICAS)];
        inline
            .iter()
            .chain(self.more.iter().flat_map(|more| more.iter()))
    }

    /// Sets every slot to `slot`.
    pub(crate) fn fill(&mut self, slot: Option<Replica>) {
        for r in 0..self.len() {
            self[r] = slot;
        }
    }
}

impl std::ops::Index<usize> for Replicas {
    type Output = Option<Replica>;
    fn index(&self, r: usize) -> &Option<Replica> {
        self.get(r).expect("a replica slot the world has")
    }
}

impl std::ops::IndexMut<usize> for Replicas {
    fn index_mut(&mut self, r: usize) -> &mut Option<Replica> {
        self.get_mut(r).expect("a replica slot the world has")
    }
}

/// The whole model state.
///
/// `now` (true time) and the clock offsets are ghosts: they are shown by `Debug` and used to
/// read clocks, but the fingerprint ([`Hash`]) sees only times relative to their own clock,
/// so two states that differ by a shift of time are one state (see `view.rs`).
///
/// `Debug` prints one line per process with its own clock reading (what the Explorer's state
/// pane shows), leaving out the static configuration.
#[derive(Clone)]
pub struct World {
    pub(crate) shape: &'static Shape,
    /// True time in ticks since the start.
    pub now: u32,
    pub(crate) nodes: [NodeSlot; crate::scenario::MAX_MODEL_NODES],
    /// The asynchronous replicas (only with `[failover]`), each on its master's clock: the
    /// first `[failover] replicas` slots are n1's, or with `every_node` slot `n` is node
    /// `n`'s. A failover takes its node's replicas: the one promoted becomes the node, and
    /// the others, which would follow it, are gone. Once no failover is left, no replica
    /// matters and all are gone.
    pub(crate) replicas: Replicas,
    pub(crate) clients: [ClientSlot; crate::scenario::MAX_MODEL_CLIENTS],
    /// The guarded counter (the core's value).
    pub storage: Storage,
    /// Fault budgets left.
    pub(crate) budget: FaultsLeft,
    /// Successful acquisitions so far.
    pub epochs: u8,
    /// Bit `c`: client `c` has acquired at least once.
    pub acquired: u8,
    /// Where the fencing tokens come from, besides the lock nodes' counters (`fence.rs`).
    pub(crate) fences: Fences,
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let owner = |n: usize, token: Token| format!("c{}", self.key_owner(n, token) + 1);
        writeln!(f, "true time t={}", self.now)?;
        for n in 0..self.shape.nodes {
            self.fmt_node(f, n)?;
            writeln!(f)?;
        }
        if self.shape.token_source == crate::storage::TokenSource::CounterAfterAcquire {
            writeln!(
                f,
                "counter node  counter {}",
                self.fences.counter_node.counter
            )?;
        }
        for (r, replica) in self.replicas.iter().enumerate() {
            let Some(replica) = replica else { continue };
            let name = self.replica_actor(r);
            let n = self.shape.replica_node(r);
            match replica.entry {
                Some(e) => writeln!(f, "{name} of n{}  key of {}", n + 1, owner(n, e.token))?,
                None => writeln!(f, "{name} of n{}  no key", n + 1)?,
            }
        }
        for c in 0..self.shape.clients {
            self.fmt_client(f, c)?;
            writeln!(f)?;
        }
        if self.shape.storage.is_some() {
            writeln!(
                f,
                "storage  counter {}, {} writes acknowledged, newest token applied {}",
                self.storage.value,
                self.storage.acknowledged_writes,
                self.storage.max_epoch_applied
            )?;
        }
        let b = &self.budget;
        write!(
            f,
            "faults left: {} jumps, {} crashes, {} pauses, {} losses",
            b.jumps, b.crashes, b.pauses, b.losses
        )?;
        if self.shape.client_crashes > 0 {
            write!(f, ", {} client crashes", b.client_crashes)?;
        }
        if self.shape.client_partitions > 0 {
            write!(f, ", {} client partitions", b.client_partitions)?;
        }
        Ok(())
    }
}

impl World {
    /// Node `n`'s clock, availability, key and (when they matter) fencing counter.
    fn fmt_node(&self, f: &mut std::fmt::Formatter<'_>, n: usize) -> std::fmt::Result {
        let state = self.nodes[n].state;
        write!(f, "n{}  clock {}", n + 1, self.node_clock(n).since_origin())?;
        match state.availability {
            Availability::Up => {}
            Availability::Down => write!(f, "  DOWN")?,
            Availability::Restarting { ready_at } => write!(
                f,
                "  restarting until its clock reads {}",
                ready_at.since_origin()
            )?,
        }
        match state.entry {
            Some(e) => write!(
                f,
                "  key of c{} until {}{}",
                self.key_owner(n, e.token) + 1,
                e.expires_at.since_origin(),
                if e.durable { " (on disk)" } else { "" }
            )?,
            None => write!(f, "  no key")?,
        }
        if self.counters_matter() {
            write!(f, "  fencing counter {}", state.counter)?;
        }
        Ok(())
    }

    /// Client `c`'s clock and phase, with its lease and what it believes.
    fn fmt_client(&self, f: &mut std::fmt::Formatter<'_>, c: usize) -> std::fmt::Result {
        let slot = &self.clients[c];
        write!(
            f,
            "c{}  clock {}  ",
            c + 1,
            self.client_clock(c).since_origin()
        )?;
        match slot.activity() {
            Activity::Idle => write!(f, "idle")?,
            Activity::Acquiring(round) => write!(
                f,
                "acquiring (attempt {}, T1={}, applied on {})",
                slot.lock.attempts(),
                round.t1.since_origin(),
                round.tally.applied
            )?,
            Activity::Holding { lease, epoch, work } => {
                write!(
                    f,
                    "holding (epoch {epoch}, T1={}, validity {}, deadline {}){}",
                    lease.t1.since_origin(),
                    lease.validity.as_u64(),
                    lease.deadline.since_origin(),
                    if self.believes(c) {
                        ", BELIEVES"
                    } else {
                        ", no longer believes"
                    }
                )?;
                if let Some(op) = work.pending {
                    write!(
                        f,
                        ", {op:?} on its way{}",
                        if work.paused { " (paused)" } else { "" }
                    )?;
                }
            }
            Activity::Extending {
                lease,
                epoch,
                round,
            } => write!(
                f,
                "extending (epoch {epoch}, deadline {}, extension T1={}, applied on {}){}",
                lease.deadline.since_origin(),
                round.t1.since_origin(),
                round.tally.applied,
                if self.believes(c) {
                    ", BELIEVES"
                } else {
                    ", no longer believes"
                }
            )?,
            Activity::Done => write!(f, "done")?,
        }
        if slot.cut_off {
            write!(f, ", CUT OFF from every node")?;
        }
        Ok(())
    }
}

impl PartialEq for World {
    fn eq(&self, other: &World) -> bool {
        self.now == other.now
            && self.nodes == other.nodes
            && self.replicas == other.replicas
            && self.clients == other.clients
            && self.storage == other.storage
            && self.budget == other.budget
            && self.epochs == other.epochs
            && self.acquired == other.acquired
            && self.fences == other.fences
    }
}

impl Eq for World {}

/// A read-only look at one client, for user invariants and reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientView {
    /// 0-based client index (`c1` is 0).
    pub index: usize,
    /// The client's clock reading.
    pub clock: Millis,
    /// What it is doing.
    pub activity: Activity,
    /// Whether it may act as the holder: holding, and its clock (read up to `ε_c` late)
    /// before its deadline.
    pub believes: bool,
}

impl ClientView {
    /// The lease the client holds (its token, its deadline on the client's clock, its
    /// validity), while it holds or extends one.
    pub fn lease(&self) -> Option<Lease> {
        match self.activity {
            Activity::Holding { lease, .. } | Activity::Extending { lease, .. } => Some(lease),
            Activity::Idle | Activity::Acquiring(_) | Activity::Done => None,
        }
    }
}

impl World {
    /// Replica slot `r` as an actor: n1's is told `replica` when n1 has one, `replica1`,
    /// `replica2` when it has several; with `every_node`, node `n`'s is told `n2_replica`.
    pub(crate) fn replica_actor(&self, r: usize) -> Actor {
        if self.shape.every_node {
            Actor::ReplicaOf(r as u8)
        } else if self.shape.replicas > 1 {
            Actor::Replica(r as u8 + 1)
        } else {
            Actor::Replica(0)
        }
    }

    /// The replica slots, in order (see the field's doc): `None` where a replica is gone.
    pub fn replicas(&self) -> impl Iterator<Item = &Option<Replica>> {
        self.replicas.iter()
    }

    /// Whether node `n` still has a replica (it has until its failover, or until no failover
    /// is left).
    pub fn has_replica(&self, n: usize) -> bool {
        self.shape
            .replicas_of(n)
            .any(|r| self.replicas[r].is_some())
    }

    /// The client that set node `n`'s key, whose token is `token`: the token names it, unless
    /// the clients share one token value, when the ghost [`NodeSlot::setter`] does.
    pub(crate) fn key_owner(&self, n: usize, token: Token) -> usize {
        if self.shape.shared_token {
            usize::from(self.nodes[n].setter)
        } else {
            owner_of(token)
        }
    }

    /// Client `c`'s activity as reports see it.
    pub fn activity(&self, client: usize) -> Activity {
        self.clients[client].activity()
    }

    pub(crate) fn node_clock(&self, node: usize) -> Millis {
        Millis((i64::from(self.now) + self.nodes[node].offset) as u64)
    }

    pub(crate) fn client_clock(&self, client: usize) -> Millis {
        Millis((i64::from(self.now) + self.clients[client].offset) as u64)
    }

    /// The nodes client `c` reaches: the scenario's `[network] reach`, or none once it is cut
    /// off (`[faults.client_partitions]`).
    pub(crate) fn reach(&self, c: usize) -> NodeSet {
        if self.clients[c].cut_off {
            NodeSet::EMPTY
        } else {
            self.shape.reach[c]
        }
    }

    /// Whether client `c` may believe it holds the lock: it holds a lease and its clock, read
    /// up to `ε_c` late, is still before the lease's deadline `T1 + ttl − drift`.
    pub fn believes(&self, client: usize) -> bool {
        let late = Millis(u64::from(self.shape.eps_c));
        self.clients[client]
            .lock
            .believes(self.client_clock(client) - late)
    }

    /// The clients, read-only.
    pub fn clients(&self) -> impl Iterator<Item = ClientView> + '_ {
        (0..self.shape.clients).map(|c| ClientView {
            index: c,
            clock: self.client_clock(c),
            activity: self.clients[c].activity(),
            believes: self.believes(c),
        })
    }

    /// The nodes' states and clock readings, read-only.
    pub fn nodes(&self) -> impl Iterator<Item = (NodeState, Millis)> + '_ {
        (0..self.shape.nodes).map(|n| (self.nodes[n].state, self.node_clock(n)))
    }

    /// The client whose key node `node` (0-based: `n1` is 0) holds now, if it holds a live
    /// one.
    pub fn holder(&self, node: usize) -> Option<usize> {
        let entry = self.nodes[node].state.live_entry(self.node_clock(node))?;
        Some(self.key_owner(node, entry.token))
    }

    /// How many clients believe they hold the lock now.
    pub fn believers(&self) -> usize {
        (0..self.shape.clients)
            .filter(|&c| self.believes(c))
            .count()
    }
}
