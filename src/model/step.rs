//! The actions of the model and their effect: the environment's (tick, delivery, loss,
//! faults) and the clients' (begin, decide, extend, release, storage ops), each a pure
//! function of the state.
//!
//! A client's life cycle is the core's [`LockState`]: every client step hands the core an
//! input (a clock reading, the answers that arrived) and carries out the [`Effects`] it
//! returns. The model adds only what the core leaves to its driver: when messages arrive,
//! when the client acts, and the holder's work on the storage.

use crate::actor::Process;
use crate::fault::FaultKind;
use crate::node::{Availability, Persistence};
use crate::proto::{
    Answer, Effects, Entropy, LockPhase, LockState, NodeId, RetryPolicy, Token, UnlockMode,
};
use crate::scenario::{Bound, JumpTarget};
use crate::time::Millis;

use super::shape::{Mode, Shape};
use super::world::{World, token_of};

/// One step of the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// True time advances one tick for every process at once.
    Tick,
    /// Client `c` reads T1 and sends `SET NX PX` to every node it can reach.
    Begin(u8),
    /// Client `c`'s request reaches node `n`; its answer reaches the client's mailbox at once.
    /// `early`: the node's clock is read `ε_n` ahead, so a key about to expire is already gone
    /// and a restart delay or the restarted-node guard about to end is already over.
    Deliver {
        /// The client.
        client: u8,
        /// The node.
        node: u8,
        /// Read the node's clock at the fast end of its error band.
        early: bool,
        /// With `[failover] wait = k`, a request to a replicated node: its replicas (bit `r`:
        /// its `r`-th replica) that have what it wrote before it answers, `k` of them, which
        /// the adversary chooses when it has more; 0 otherwise.
        acked: u8,
    },
    /// Only with phantom clients (see [`RedlockModel::with_phantom_clients`](super::RedlockModel::with_phantom_clients)):
    /// client `c`'s `SET` reaches node `n`, which has no key of the two clients modelled, and
    /// is refused as if another client's key were there.
    Refuse {
        /// The client.
        client: u8,
        /// The node.
        node: u8,
    },
    /// Only with `[lock] token = "reused"`: the release client `c` sent after a failed round
    /// reaches node `n`. The core does not wait for that release, so it may arrive after the
    /// client's next round began (over a new connection after a timeout, or through a proxy
    /// that reorders), where its token matches the new round's key.
    LateRelease {
        /// The client.
        client: u8,
        /// The node.
        node: u8,
    },
    /// Client `c`'s `SET` to node `n` is lost.
    Lose {
        /// The client.
        client: u8,
        /// The node.
        node: u8,
    },
    /// Client `c` reads T2 and decides its round, once the core says it is decided (a quorum
    /// applied with `decision = "at-quorum"`, all replies in, or a quorum out of reach; the
    /// yes of guarded nodes not counted) or its timeout passed. The step stays enabled while
    /// time passes, so a client that is slow to decide is modelled too. In a sequential round
    /// (`contact = "sequential"`) the same step hands the core the answer of the node it waits
    /// for, or that node's timeout, and mostly asks the next node rather than decide.
    Decide(u8),
    /// Client `c`, holding, starts an extension round: compare-and-pexpire to every node it
    /// reaches, timed from a fresh T1.
    Extend(u8),
    /// Client `c` releases its lease (compare-and-delete, or `DEL`, on every node it reaches).
    Release(u8),
    /// Client `c` checks its lease and sends its next storage op.
    Issue(u8),
    /// Client `c`'s storage op reaches the storage; the reply is applied at once. A storage
    /// that checks and applies in two steps takes two: the check when the op arrives, the
    /// apply later.
    Apply(u8),
    /// Client `c` is paused (GC, page fault) while its op waits: the wait may now be longer.
    Pause(u8),
    /// A process's clock steps by `ticks`.
    Jump {
        /// Which process.
        target: Process,
        /// The step: positive forward, negative backward.
        ticks: i32,
    },
    /// Node `n` crashes (and restarts, unless configured not to).
    Crash(u8),
    /// Client `c` dies for good: it stops believing and sends nothing more, not even an
    /// unlock; its keys stay until they expire, and requests already sent still arrive.
    CrashClient(u8),
    /// Client `c` is cut off from every node for good: it keeps its lock, its belief and its
    /// work on the storage, its requests not yet landed are lost with the link, and nothing
    /// it sends from now on reaches a node, its unlock included.
    PartitionClient(u8),
    /// Node `n` runs its periodic fsync: its key (and its fencing counter) becomes durable.
    Fsync(u8),
    /// `counter-after-acquire` only: the separate counter node crashes and restarts at once,
    /// keeping what its persistence keeps.
    CrashCounter,
    /// `counter-after-acquire` only: the counter node's periodic fsync.
    FsyncCounter,
    /// The master's current key reaches its replica in slot `r` (each replica copies on its
    /// own; see [`World::replicas`] for the slots).
    Replicate(u8),
    /// The master fails and its replica in slot `r` is promoted in its place (any of its
    /// replicas may be).
    Promote(u8),
}

impl Step {
    /// The kind of fault the step applies, if it is one: a jump, a crash (of a node or the
    /// counter node), a client's crash, a pause, a lost request, a failover, or a request read
    /// at the fast end of its node's clock error band.
    pub fn fault_kind(&self) -> Option<FaultKind> {
        Some(match self {
            Step::Jump { .. } => FaultKind::ClockJump,
            Step::Crash(_) | Step::CrashCounter => FaultKind::Crash,
            Step::CrashClient(_) => FaultKind::ClientCrash,
            Step::PartitionClient(_) => FaultKind::ClientPartition,
            Step::Pause(_) => FaultKind::Pause,
            Step::Lose { .. } => FaultKind::MessageLoss,
            Step::Promote(_) => FaultKind::Failover,
            Step::Deliver { early: true, .. } => FaultKind::NodeClockError,
            _ => return None,
        })
    }

    /// Client `client`'s request reaches node `node`, read on the node's clock as it is.
    #[cfg(test)]
    pub(crate) const fn deliver(client: u8, node: u8) -> Step {
        Step::Deliver {
            client,
            node,
            early: false,
            acked: 0,
        }
    }
}

/// The model's randomness: tokens that name their client and attempt, and the least retry
/// delay the configuration allows (`[lock] retry_delay_ticks`, zero by default).
///
/// With `[lock] token = "shared"` every draw of every client returns one and the same value
/// (a hard-coded token). One value for all, rather than one per attempt, keeps the fingerprint
/// sound: every key then carries that value and matches every client that acts, so who set a
/// key changes nothing a step can do (the ghost [`NodeSlot::setter`](super::NodeSlot::setter)
/// keeps it for the stories).
///
/// The least back-off loses nothing: a client that may retry then may also retry at any later
/// step, since the model lets time pass between any two steps, so every delay the real
/// generator could draw is explored.
pub(super) struct ModelEntropy {
    client: usize,
    attempts: u32,
    shared: bool,
}

impl ModelEntropy {
    pub(super) fn of(shape: &Shape, client: usize, lock: &LockState) -> ModelEntropy {
        ModelEntropy {
            client,
            attempts: lock.attempts(),
            shared: shape.shared_token,
        }
    }
}

impl Entropy for ModelEntropy {
    fn token(&mut self) -> Token {
        if self.shared {
            token_of(0, 1)
        } else {
            token_of(self.client, self.attempts + 1)
        }
    }

    fn backoff(&mut self, retry: &RetryPolicy) -> Millis {
        retry.delay_min
    }
}

impl World {
    fn allowance_left(&self, c: usize) -> bool {
        let slot = &self.clients[c];
        if !matches!(slot.lock.phase(), LockPhase::Holding { .. }) {
            return true;
        }
        let work = slot.work;
        match work.pending {
            Some(_) => match self.shape.stall_allowance(work.paused) {
                Bound::Unbounded => true,
                Bound::Ticks(t) => work.stall < t,
            },
            // Between two ops of its cycle a holder computes in zero time.
            None => work.next == 0 || usize::from(work.next) >= self.shape.ops.len(),
        }
    }

    /// The core's lock after client `c` hands it every answer in its mailbox and, if the round
    /// is still open, the timeout at its clock reading; `None` unless that decides the round.
    pub(crate) fn decided(&self, c: usize) -> Option<(LockState, Effects)> {
        let shape = &self.shape;
        let slot = &self.clients[c];
        let now = self.client_clock(c);
        let mut lock = slot.lock;
        let mut entropy = ModelEntropy::of(shape, c, &lock);
        // The nodes that returned the mailbox's largest counter are handed first: the core
        // decides at the quorum-th yes, and a client that has read every answer in the
        // mailbox knows its largest counter and who returned it (a client that decided on
        // fewer answers is the same client deciding earlier, a step the model also takes).
        let answered = slot.mailbox.answered();
        let at_fence = answered.difference(answered.difference(self.fences.at_seen[c]));
        let answers = at_fence
            .iter()
            .chain(answered.difference(at_fence).iter())
            .map(|node| {
                let answer = Answer {
                    reply: slot.mailbox.reply(node),
                    counts: !slot.guarded.contains(node),
                    counter: self.mailbox_counter(c, node),
                };
                (node, answer)
            });
        let params = &shape.client_params[c];
        let effects = lock.take_answers(params, answers, now, &mut entropy);
        // A won acquisition that still writes its fence back yields a request and no event.
        (effects.event.is_some() || effects.request.is_some()).then_some((lock, effects))
    }

    /// Client steps and deliveries, in a fixed order.
    fn prompt_steps(&self, out: &mut Vec<Step>) {
        for c in 0..self.shape.clients {
            self.client_steps(c, out);
            self.delivery_steps(c, out);
        }
    }

    /// Client `c`'s own next steps, by its lock's phase.
    fn client_steps(&self, c: usize, out: &mut Vec<Step>) {
        let shape = &self.shape;
        let slot = &self.clients[c];
        let cu = c as u8;
        match *slot.lock.phase() {
            LockPhase::Idle | LockPhase::BackingOff { .. } => {
                // A connection to a node is FIFO: the next round's `SET` cannot overtake
                // the previous one, so a round begins once the last one's requests are in.
                let others_acquiring = shape.isolated_rounds
                    && (0..shape.clients).any(|o| {
                        o != c && matches!(self.clients[o].lock.phase(), LockPhase::Acquiring(_))
                    });
                let due = match *slot.lock.phase() {
                    LockPhase::BackingOff { until, .. } => self.client_clock(c) >= until,
                    _ => true,
                };
                if due && slot.inflight.is_empty() && !others_acquiring {
                    out.push(Step::Begin(cu));
                }
            }
            LockPhase::Acquiring(_) | LockPhase::Extending { .. } => {
                if self.decided(c).is_some() {
                    out.push(Step::Decide(cu));
                }
            }
            LockPhase::Holding { .. } => {
                let work = slot.work;
                // Extend only before the storage cycle starts; whether the lease still
                // allows it is the core's call.
                if slot.extensions < shape.extensions
                    && slot.inflight.is_empty()
                    && work.next == 0
                    && work.pending.is_none()
                {
                    out.push(Step::Extend(cu));
                }
                // A get-then-del holder's `GET` cannot overtake its own late `SET` on a FIFO
                // connection, and the model applies the `GET` at once (`carry_out`): so it
                // releases once its requests are in, which covers releasing earlier, as its
                // belief only ends later.
                let fifo =
                    shape.params.unlock != UnlockMode::GetThenDel || slot.inflight.is_empty();
                if shape.ops.is_empty() && fifo {
                    out.push(Step::Release(cu));
                } else if work.pending.is_some() {
                    out.push(Step::Apply(cu));
                } else {
                    out.push(Step::Issue(cu));
                }
            }
            LockPhase::Releasing(_) | LockPhase::Finished => {}
        }
    }

    /// The choices of replicas a write on node `n` waits for (see [`Step::Deliver`]'s
    /// `acked`): every set of `[failover] wait` of node `n`'s replicas while it has them, so
    /// the adversary picks which ones a `WAIT` counted; the empty set for a node without
    /// replicas, without `wait`, or after its failover.
    fn acknowledging(&self, n: usize) -> impl Iterator<Item = u8> {
        let has = if self.has_replica(n) {
            self.shape.replicas
        } else {
            0
        };
        let k = if has > 0 { self.shape.failover_wait } else { 0 };
        (0u8..1 << has).filter(move |mask| mask.count_ones() == u32::from(k))
    }

    /// The deliveries of client `c`'s requests in flight, and what else may become of them.
    fn delivery_steps(&self, c: usize, out: &mut Vec<Step>) {
        let shape = &self.shape;
        let slot = &self.clients[c];
        let cu = c as u8;
        for n in slot.inflight.iter() {
            let node = n.index();
            if shape.chaos_nodes {
                // Nodes that answer anything: yes, no, or never (see
                // `RedlockModel::with_chaos_nodes`).
                let (client, node) = (cu, node as u8);
                out.push(Step::Deliver {
                    client,
                    node,
                    early: false,
                    acked: 0,
                });
                out.push(Step::Refuse { client, node });
                out.push(Step::Lose { client, node });
                continue;
            }
            let early_matters = self.early_reading_matters(node, !slot.extending_in_flight());
            for early in [false, true].into_iter().filter(|&e| !e || early_matters) {
                for acked in self.acknowledging(node) {
                    out.push(Step::Deliver {
                        client: cu,
                        node: node as u8,
                        early,
                        acked,
                    });
                }
            }
            if shape.phantoms && !slot.extending_in_flight() {
                let clock = self.node_clock(node);
                let state = &self.nodes[node].state;
                if state.is_serving(clock) && state.live_entry(clock).is_none() {
                    out.push(Step::Refuse {
                        client: cu,
                        node: node as u8,
                    });
                }
            }
        }
        for n in slot.late.iter() {
            out.push(Step::LateRelease {
                client: cu,
                node: n.0,
            });
        }
    }

    /// Whether reading node `node`'s clock `ε_n` ahead could change what a request finds: a
    /// key about to expire (for a `SET`), or the end of a restart delay or of the
    /// restarted-node guard (for any request). Everything a node measures runs on its one
    /// clock, so its error shortens all of them alike.
    fn early_reading_matters(&self, node: usize, set: bool) -> bool {
        let eps = Millis(u64::from(self.shape.eps_n));
        if eps == Millis::ZERO {
            return false;
        }
        let clock = self.node_clock(node);
        let soon = |at: Millis| at > clock && at <= clock + eps;
        let slot = &self.nodes[node];
        (set && slot.state.entry.is_some_and(|e| soon(e.expires_at)))
            || matches!(slot.state.availability, Availability::Restarting { ready_at } if soon(ready_at))
            || slot.guarded_until.is_some_and(soon)
    }

    /// Whether a clock jump of `target` can change anything but the jump budget: whether the
    /// process measures something on its clock right now (a key, a restart delay or the
    /// restarted-node guard on a node the clients may still read; a round, a lease or a
    /// back-off on a client).
    ///
    /// Why skipping the others is sound: the fingerprint sees every timestamp relative to
    /// its own clock and no clock offset (see `view.rs`), so a jump of a clock that measures
    /// nothing leads to the same state with one jump less to spend, and a state with more
    /// budget can do everything the other can (it may simply not jump). Every state the
    /// pruned step leads to, and every violation after it, is reached without it, and a
    /// counterexample with such a jump is never the shortest. Whether a later key lives on a
    /// jumped clock does not matter either: its life is measured from when it is set. Kept
    /// with exact ghosts, where a user invariant may read the clock readings themselves.
    fn jump_matters(&self, target: Process) -> bool {
        let shape = &self.shape;
        if !shape.idle_jumps_pruned || shape.exact_ghosts {
            return true;
        }
        match target {
            Process::Node(n) => {
                let n = usize::from(n);
                let slot = &self.nodes[n];
                let measures = slot.state.entry.is_some()
                    || matches!(slot.state.availability, Availability::Restarting { .. })
                    || slot.guarded_until.is_some()
                    || self
                        .shape
                        .replicas_of(n)
                        .any(|r| self.replicas[r].is_some_and(|replica| replica.entry.is_some()));
                measures && self.live_nodes().contains(NodeId(n as u8))
            }
            Process::Client(c) => !matches!(
                self.clients[usize::from(c)].lock.phase(),
                LockPhase::Idle | LockPhase::Releasing(_) | LockPhase::Finished
            ),
        }
    }

    fn fault_steps(&self, out: &mut Vec<Step>) {
        let shape = &self.shape;
        let b = &self.budget;
        if shape.chaos_nodes {
            // The nodes keep nothing and every request may go unanswered anyway: only the
            // clients' own faults are left.
            self.client_fault_steps(out);
            return;
        }
        if b.losses > 0 {
            for c in 0..shape.clients {
                for n in self.clients[c].inflight.iter() {
                    out.push(Step::Lose {
                        client: c as u8,
                        node: n.0,
                    });
                }
            }
        }
        self.pause_steps(out);
        self.jump_steps(true, out);
        if b.crashes > 0 {
            for n in 0..shape.nodes {
                if self.nodes[n].state.availability != Availability::Down {
                    out.push(Step::Crash(n as u8));
                }
            }
        }
        self.client_crash_steps(out);
        if b.crashes > 0 && self.counter_node_in_play() {
            out.push(Step::CrashCounter);
        }
        if shape.persistence == Persistence::FsyncPeriodic {
            for n in 0..shape.nodes {
                if self.node_unsynced(n) {
                    out.push(Step::Fsync(n as u8));
                }
            }
            if self.counter_node_in_play() && self.fences.counter_node.has_unsynced_writes() {
                out.push(Step::FsyncCounter);
            }
        }
        for (r, replica) in self.replicas.iter().enumerate() {
            let Some(replica) = replica else { continue };
            if replica.entry != self.nodes[shape.replica_node(r)].state.entry {
                out.push(Step::Replicate(r as u8));
            }
            if b.failovers > 0 {
                out.push(Step::Promote(r as u8));
            }
        }
    }

    fn pause_steps(&self, out: &mut Vec<Step>) {
        let shape = &self.shape;
        let b = &self.budget;
        if b.pauses > 0 {
            for c in 0..shape.clients {
                let slot = &self.clients[c];
                // An op a two-step storage has checked is at the storage already.
                if matches!(slot.lock.phase(), LockPhase::Holding { .. })
                    && slot.work.pending.is_some()
                    && !slot.work.paused
                    && !slot.work.checked
                {
                    out.push(Step::Pause(c as u8));
                }
            }
        }
    }

    /// Clock jumps, of the nodes too when `nodes`.
    fn jump_steps(&self, nodes: bool, out: &mut Vec<Step>) {
        let shape = &self.shape;
        let b = &self.budget;
        if b.jumps == 0 {
            return;
        }
        for (ticks, _) in shape.jump_sizes_left(b.jump_sizes_used) {
            if nodes && shape.node_jumps() {
                for n in 0..shape.nodes {
                    if (shape.jump_target == JumpTarget::Any
                        || shape.jump_index.is_none_or(|i| usize::from(i) == n))
                        && self.jump_matters(Process::node(n))
                    {
                        out.push(Step::Jump {
                            target: Process::node(n),
                            ticks,
                        });
                    }
                }
            }
            if shape.client_jumps() {
                for c in 0..shape.clients {
                    if (shape.jump_target == JumpTarget::Any
                        || shape.jump_index.is_none_or(|i| usize::from(i) == c))
                        && self.jump_matters(Process::client(c))
                    {
                        out.push(Step::Jump {
                            target: Process::client(c),
                            ticks,
                        });
                    }
                }
            }
        }
    }

    /// Client crashes, then client partitions, each from its own budget and aim.
    fn client_crash_steps(&self, out: &mut Vec<Step>) {
        let shape = &self.shape;
        let b = &self.budget;
        if b.client_crashes == 0 && b.client_partitions == 0 {
            return;
        }
        for c in 0..shape.clients {
            // A client that is done has nothing left to lose. Not while one of its storage
            // ops is on its way: that op still lands after the crash (or the partition, which
            // cuts the lock's nodes, not the storage), so the run is the same as one where it
            // lands first and the fault strikes then. Only the client the fault is aimed at,
            // and only when its aim allows (while it believes it holds the lock, with `when =
            // "holding"`); a partition only while the client still reaches a node.
            let slot = &self.clients[c];
            if matches!(
                slot.lock.phase(),
                LockPhase::Releasing(_) | LockPhase::Finished
            ) || slot.work.pending.is_some()
            {
                continue;
            }
            let believes = self.believes(c);
            if b.client_crashes > 0 && shape.client_crash_aim.allows(c, believes) {
                out.push(Step::CrashClient(c as u8));
            }
            if b.client_partitions > 0
                && !self.reach(c).is_empty()
                && shape.client_partition_aim.allows(c, believes)
            {
                out.push(Step::PartitionClient(c as u8));
            }
        }
    }

    /// The clients' own faults (with nodes that answer anything, the only faults left).
    fn client_fault_steps(&self, out: &mut Vec<Step>) {
        self.pause_steps(out);
        self.jump_steps(false, out);
        self.client_crash_steps(out);
    }

    /// Every enabled step, in a deterministic order (stateright rebuilds paths by index):
    /// client steps and deliveries, then the tick, then faults.
    pub(crate) fn steps(&self, out: &mut Vec<Step>) {
        let before = out.len();
        self.prompt_steps(out);
        // With `[liveness] client`, a holder that still believes is working: it may release or
        // extend whenever it likes, and time passes meanwhile.
        let working = |step: &Step| match *step {
            Step::Release(c) | Step::Extend(c) => {
                self.shape.liveness_client.is_some() && self.believes(usize::from(c))
            }
            _ => false,
        };
        let nobody_can_act = out[before..].iter().all(working);
        let tick_allowed = (0..self.shape.clients).all(|c| self.allowance_left(c))
            && match self.shape.mode {
                Mode::Safety => self.shape.exact_time.is_none_or(|h| self.now < h),
                // Prompt processes: time passes only when nobody can act.
                Mode::Liveness => nobody_can_act && self.now < self.shape.horizon,
            };
        if tick_allowed {
            out.push(Step::Tick);
        }
        self.fault_steps(out);
    }
}
