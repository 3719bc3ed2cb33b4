//! The static part of a model, resolved once from a [`Scenario`]: what every step and the
//! fingerprint need to know besides the state.

use std::sync::Mutex;

use crate::fault::ClientFaultAim;
use crate::node::Persistence;
use crate::proto::{LockParams, NodeSet};
use crate::scenario::{Bound, JumpTarget, JumpTicks, MAX_MODEL_CLIENTS, Scenario, Tokens};
use crate::storage::{CheckAndApply, OpKind, Protection, TokenSource};
use crate::time::Millis;

/// Which run of the model this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The safety run: asynchronous (time may pass between any two steps), time-shift and
    /// symmetry reduced, no horizon.
    Safety,
    /// The liveness run for `eventually acquired`: processes and messages are prompt (time
    /// passes only when no client step or delivery is enabled), true time is part of the
    /// fingerprint and the run stops at the horizon.
    Liveness,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Shape {
    pub mode: Mode,
    pub nodes: usize,
    pub clients: usize,
    /// The lock every client runs; a client's own rounds read `client_params`.
    pub params: LockParams,
    /// Per client, the lock it runs: `params` with the client's own quorum
    /// (`[lock] quorum = [3, 2]`).
    pub client_params: [LockParams; MAX_MODEL_CLIENTS],
    /// The clients' quorums differ, so no two clients are interchangeable (`view.rs`).
    pub quorums_differ: bool,
    pub attempts: u8,
    pub extensions: u8,
    pub eps_n: u32,
    pub eps_c: u32,
    pub reach: [NodeSet; MAX_MODEL_CLIENTS],
    pub message_loss: u8,
    pub storage: Option<Protection>,
    /// Whether the storage checks and applies an op in one step or two.
    pub check_and_apply: CheckAndApply,
    /// Where the fencing tokens come from (`fence.rs`).
    pub token_source: TokenSource,
    pub ops: &'static [OpKind],
    pub check_margin: u32,
    pub delay_max: Bound,
    pub pause_max: Bound,
    pub pauses: u8,
    /// The sizes a jump may take (`JumpTicks::Every(0)` without jumps).
    pub jump_ticks: JumpTicks,
    pub jumps: u8,
    pub jump_target: JumpTarget,
    pub jump_index: Option<u8>,
    pub crashes: u8,
    /// Client crashes in the whole run (`[faults.client_crashes]`).
    pub client_crashes: u8,
    /// Which client may crash, and when (`[faults.client_crashes] client`, `when`).
    pub client_crash_aim: ClientFaultAim,
    /// Clients cut off from every node in the whole run (`[faults.client_partitions]`).
    pub client_partitions: u8,
    /// Which client may be cut off, and when (`[faults.client_partitions] client`, `when`).
    pub client_partition_aim: ClientFaultAim,
    pub persistence: Persistence,
    pub restart_delay: Millis,
    pub restart: bool,
    /// The clients' restarted-node guard, on the restarted node's clock.
    pub client_guard: Millis,
    pub failover: Option<Millis>,
    /// `[failover] replicas`: how many replicas n1 has (0 without `[failover]`); with
    /// `every_node`, how many each node has (1).
    pub replicas: u8,
    /// `[failover] every_node`: every node has a replica of its own, not n1 alone.
    pub every_node: bool,
    /// `[failover] failovers`: how many nodes may fail over in one run.
    pub failovers: u8,
    /// `[failover] wait`: the master answers a write only once this many of its replicas
    /// have the key (0: no wait).
    pub failover_wait: u8,
    /// Every client draws the same token value (`[lock] token = "shared"`).
    pub shared_token: bool,
    pub symmetry: bool,
    pub horizon: u32,
    pub isolated_rounds: bool,
    /// `[liveness] client`: the one client `eventually acquired` waits for; holders then keep
    /// the lock across time while they believe.
    pub liveness_client: Option<u8>,
    /// Hash the ghost fields in full: which clients acquired, and (without storage) the lock
    /// epochs. Off by default, where the fingerprint keeps only what a property reads (see
    /// `view.rs`); on with user invariants, which may read any field of the world.
    pub exact_ghosts: bool,
    /// Two real clients stand for all of them: a `SET` may be refused as if a third client's
    /// key were there (`RedlockModel::with_phantom_clients`).
    pub phantoms: bool,
    /// The nodes answer anything: every request in flight may be answered yes, answered no or
    /// never answered, and no node keeps state (`RedlockModel::with_chaos_nodes`).
    pub chaos_nodes: bool,
    /// Only the storage properties are judged (`RedlockModel::with_chaos_nodes`), or every
    /// property but them (`RedlockModel::without_storage_properties`).
    pub judged: Judged,
    /// Leave the nodes no client can read again out of the fingerprint (`view.rs`, "Dead
    /// nodes"); on by default, off for cross-checks.
    pub dead_nodes: bool,
    /// Skip clock jumps of processes that measure nothing on their clock (`step.rs`,
    /// `World::jump_matters`); on by default, off for cross-checks.
    pub idle_jumps_pruned: bool,
    /// Cross-check mode: hash true time and stop at this horizon (no time-shift reduction).
    pub exact_time: Option<u32>,
}

/// Which of the safety run's properties a model judges.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Judged {
    /// Every property.
    All,
    /// The storage properties only.
    Storage,
    /// Every property but the storage ones.
    Lock,
}

impl Shape {
    pub(crate) fn new(scenario: &Scenario, mode: Mode) -> Shape {
        let lock = &scenario.lock;
        let failover = scenario.failover.as_ref();
        // Resolved once by the scenario, the fencing rule included.
        let token_source = scenario
            .storage
            .as_ref()
            .map_or(TokenSource::Ideal, |s| s.token_source);
        let storage = scenario.storage.as_ref();
        let protection = storage.map(|s| s.protection);
        let ops = protection.map_or(&[][..], Protection::cycle);
        let pauses = scenario.faults.pauses.as_ref();
        let jumps = scenario.faults.clock_jumps.as_ref();
        let crashes = scenario.faults.crashes.as_ref();
        let client_crashes = scenario.faults.client_crashes.as_ref();
        let client_partitions = scenario.faults.client_partitions.as_ref();
        Shape {
            mode,
            nodes: lock.nodes(),
            clients: lock.clients as usize,
            params: lock.params,
            client_params: std::array::from_fn(|c| lock.client_params(c)),
            quorums_differ: lock.quorums_differ(),
            attempts: lock.attempts(),
            extensions: lock.extensions,
            eps_n: scenario.clock.node_error_ticks,
            eps_c: scenario.clock.client_error_ticks,
            reach: reach(scenario),
            message_loss: scenario.network.message_loss,
            storage: protection,
            check_and_apply: storage.map_or(CheckAndApply::Atomic, |s| s.check),
            token_source,
            ops,
            check_margin: storage.and_then(|s| s.check_margin_ticks).unwrap_or(1),
            delay_max: storage.map_or(Bound::Ticks(0), |s| s.max_delay),
            pause_max: pauses.map_or(Bound::Ticks(0), |p| p.max),
            pauses: pauses.map_or(0, |p| p.count),
            jump_ticks: jumps.map_or(JumpTicks::Every(0), |j| j.jump_ticks.clone()),
            jumps: jumps.map_or(0, |j| j.count),
            jump_target: jumps.map_or(JumpTarget::Any, |j| j.target),
            jump_index: jumps.and_then(|j| j.index),
            crashes: crashes.map_or(0, |c| c.count),
            client_crashes: client_crashes.map_or(0, |c| c.count),
            client_crash_aim: client_crashes.map_or(ClientFaultAim::ANY, |c| c.aim),
            client_partitions: client_partitions.map_or(0, |c| c.count),
            client_partition_aim: client_partitions.map_or(ClientFaultAim::ANY, |c| c.aim),
            persistence: crashes.map_or(Persistence::None, |c| c.persistence),
            restart_delay: Millis(crashes.map_or(0, |c| u64::from(c.restart_delay_ticks))),
            restart: crashes.is_none_or(|c| c.restart),
            client_guard: Millis(crashes.map_or(0, |c| u64::from(c.client_guard_ticks))),
            failover: failover.map(|f| Millis(u64::from(f.promotion_delay_ticks))),
            replicas: failover.map_or(0, |f| f.replicas),
            every_node: failover.is_some_and(|f| f.every_node),
            failovers: failover.map_or(0, |f| f.failovers),
            failover_wait: failover.map_or(0, |f| f.wait),
            shared_token: lock.token == Tokens::Shared,
            symmetry: symmetric(scenario, mode),
            horizon: scenario.liveness.horizon_ticks,
            isolated_rounds: scenario.liveness.isolated_rounds,
            liveness_client: scenario.liveness.client,
            // Which client acquired is then what the property reads: hash every client's bit.
            exact_ghosts: mode == Mode::Liveness && scenario.liveness.client.is_some(),
            dead_nodes: true,
            idle_jumps_pruned: true,
            phantoms: false,
            chaos_nodes: false,
            judged: Judged::All,
            exact_time: None,
        }
    }

    /// Whether each client keeps its first round's value for its retries (`[lock] token =
    /// "reused"`), so that a failed round's release may arrive after the next round's `SET`
    /// (see [`Step::LateRelease`](super::Step::LateRelease)).
    pub(crate) fn keeps_token(&self) -> bool {
        self.params.retry_token == crate::proto::RetryToken::Kept
    }

    /// How many replica slots the world uses ([`World::replicas`](super::World::replicas)):
    /// n1's replicas, or one a node with `every_node`.
    pub(crate) fn replica_slots(&self) -> usize {
        if self.every_node {
            self.nodes
        } else {
            usize::from(self.replicas)
        }
    }

    /// The node whose replica slot `r` is.
    pub(crate) fn replica_node(&self, r: usize) -> usize {
        if self.every_node { r } else { 0 }
    }

    /// Node `n`'s replica slots.
    pub(crate) fn replicas_of(&self, n: usize) -> std::ops::Range<usize> {
        match (self.every_node, n) {
            (true, _) => n..n + 1,
            (false, 0) => 0..usize::from(self.replicas),
            (false, _) => 0..0,
        }
    }

    /// Whether clock jumps may hit clients.
    pub(crate) fn client_jumps(&self) -> bool {
        self.jumps > 0 && self.jump_target != JumpTarget::Node
    }

    /// Whether jumps may hit nodes.
    pub(crate) fn node_jumps(&self) -> bool {
        self.jumps > 0 && self.jump_target != JumpTarget::Client
    }

    /// The sizes a jump may still take, with the bit each sets in
    /// [`FaultsLeft::jump_sizes_used`](super::world::FaultsLeft::jump_sizes_used): one size
    /// is never used up (bit 0 is not set), a listed size is used once.
    pub(crate) fn jump_sizes_left(&self, used: u8) -> impl Iterator<Item = (i32, u8)> + '_ {
        let once = matches!(self.jump_ticks, JumpTicks::EachOnce(_));
        self.jump_ticks
            .sizes()
            .iter()
            .enumerate()
            .map(move |(i, &size)| (size, if once { 1 << i } else { 0 }))
            .filter(move |&(_, bit)| used & bit == 0)
    }

    /// How far the remaining backward client jumps can still move a client's clock back:
    /// the `jumps` largest backward sizes still unused.
    pub(crate) fn client_backward_budget(&self, jumps: u8, used: u8) -> i64 {
        match &self.jump_ticks {
            _ if !self.client_jumps() => 0,
            JumpTicks::Every(size) if *size < 0 => {
                i64::from(jumps) * i64::from(size.unsigned_abs())
            }
            JumpTicks::Every(_) => 0,
            JumpTicks::EachOnce(_) => {
                let mut back: Vec<i64> = self
                    .jump_sizes_left(used)
                    .filter(|&(size, _)| size < 0)
                    .map(|(size, _)| i64::from(size.unsigned_abs()))
                    .collect();
                back.sort_unstable_by(|a, b| b.cmp(a));
                back.iter().take(usize::from(jumps)).sum()
            }
        }
    }

    /// How long a pending storage op may still wait, given whether a pause stretched it.
    pub(crate) fn stall_allowance(&self, paused: bool) -> Bound {
        match (self.delay_max, paused, self.pause_max) {
            (Bound::Unbounded, _, _) | (_, true, Bound::Unbounded) => Bound::Unbounded,
            (Bound::Ticks(d), true, Bound::Ticks(p)) => Bound::Ticks(d + p),
            (Bound::Ticks(d), false, _) => Bound::Ticks(d),
        }
    }
}

/// Each client's reachable nodes, every slot past the scenario's clients empty.
fn reach(scenario: &Scenario) -> [NodeSet; MAX_MODEL_CLIENTS] {
    let mut reach = [NodeSet::EMPTY; MAX_MODEL_CLIENTS];
    reach[..scenario.network.reach.len()].copy_from_slice(&scenario.network.reach);
    reach
}

/// Whether the view may sort rows (symmetry reduction).
fn symmetric(scenario: &Scenario, mode: Mode) -> bool {
    // The fencing counters are part of their node's and client's rows in the view
    // (`fence.rs`), so they are permuted with them. With
    // `[failover]` on several nodes only n1 has a replica, and sorting the node rows
    // would forget which row is n1's: no symmetry reduction then (nor with a sequential
    // contact, below). Nor in a liveness run
    // that waits for one named client, which permuting the clients would swap, nor with a
    // client fault (a crash or a partition) aimed at one client, whose role permuting would
    // hand to another.
    let faults = &scenario.faults;
    let client_fault_aimed = [&faults.client_crashes, &faults.client_partitions]
        .into_iter()
        .flatten()
        .any(|c| c.aim.client.is_some());
    // A sequential round asks n1 first, then n2, …: sorting the node rows would forget
    // which node comes next.
    scenario.symmetry
        && (scenario.failover.is_none() || scenario.lock.nodes() == 1)
        && scenario.lock.params.contact == crate::proto::Contact::Multiplexed
        && !(mode == Mode::Liveness && scenario.liveness.client.is_some())
        && !client_fault_aimed
}

/// The one shared copy of `shape`, made once per distinct shape and kept for the life of the
/// process.
///
/// Every state holds its shape. A reference count there would be touched by every step of
/// every checker thread (each successor is a clone, each duplicate is dropped), and both
/// threads fighting over that one cache line cost more than the steps themselves; a plain
/// `&'static` costs nothing. Interning bounds what is kept to the distinct configurations a
/// process checks (a few hundred bytes each), however many checks it runs.
pub(super) fn intern(shape: Shape) -> &'static Shape {
    static SHAPES: Mutex<Vec<&'static Shape>> = Mutex::new(Vec::new());
    let mut shapes = SHAPES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(known) = shapes.iter().find(|known| ***known == shape) {
        return known;
    }
    let leaked: &'static Shape = Box::leak(Box::new(shape));
    shapes.push(leaked);
    leaked
}
