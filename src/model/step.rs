//! The actions of the model and their effect: the environment's (tick, delivery, loss,
//! faults) and the clients' (begin, decide, release, storage ops), each a pure function of
//! the state that calls into the core.

use crate::node::{Availability, Persistence};
use crate::proto::{NodeId, NodeSet, Op, QuorumRound, ReleaseRound, Reply, RoundOutcome, Token};
use crate::scenario::{Bound, JumpTarget};
use crate::storage::{StorageOp, StorageReply};
use crate::time::Millis;

use super::shape::{Mode, OpKind};
use super::world::{Phase, Work, World};

/// A process a clock jump hits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Process {
    /// Node `n` (0-based).
    Node(u8),
    /// Client `c` (0-based).
    Client(u8),
}

/// One step of the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// True time advances one tick for every process at once.
    Tick,
    /// Client `c` reads T1 and sends `SET NX PX` to every node it can reach.
    Begin(u8),
    /// Client `c`'s `SET` reaches node `n`; the reply is applied at once. `early`: the node's
    /// clock is read `ε_n` ahead, so a key about to expire is already gone.
    Deliver {
        /// The client.
        client: u8,
        /// The node.
        node: u8,
        /// Read the node's clock at the fast end of its error band.
        early: bool,
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
    /// time passes, so a client that is slow to decide is modelled too.
    Decide(u8),
    /// Client `c`, holding, starts an extension round: compare-and-pexpire to every node it
    /// reaches, timed from a fresh T1.
    Extend(u8),
    /// Client `c` releases its lease (compare-and-delete, or `DEL`, on every node it reaches).
    Release(u8),
    /// Client `c` checks its lease and sends its next storage op.
    Issue(u8),
    /// Client `c`'s storage op reaches the storage; the reply is applied at once.
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
    /// Node `n` runs its periodic fsync: its key becomes durable.
    Fsync(u8),
    /// The master's current key reaches its replica.
    Replicate,
    /// The master fails and its replica is promoted in its place.
    Promote,
}

fn token_of(client: usize, attempt: u8) -> Token {
    // Unique per (client, attempt), and the client is recoverable from the token.
    Token(((client as u128 + 1) << 4) | u128::from(attempt))
}

/// The client a token belongs to.
pub(crate) fn owner_of(token: Token) -> usize {
    (token.0 >> 4) as usize - 1
}

impl World {
    fn allowance_left(&self, c: usize) -> bool {
        match self.clients[c].phase {
            Phase::Holding { work, .. } => match work.pending {
                Some(_) => match self.shape.stall_allowance(work.paused) {
                    Bound::Unbounded => true,
                    Bound::Ticks(t) => u32::from(work.stall) < t,
                },
                // Between two ops of its cycle a holder computes in zero time.
                None => work.next == 0 || usize::from(work.next) >= self.shape.ops.len(),
            },
            _ => true,
        }
    }

    /// Client steps and deliveries, in a fixed order.
    fn prompt_steps(&self, out: &mut Vec<Step>) {
        let shape = &self.shape;
        for c in 0..shape.clients {
            let slot = &self.clients[c];
            let cu = c as u8;
            match slot.phase {
                Phase::Idle => {
                    let others_acquiring = shape.isolated_rounds
                        && (0..shape.clients).any(|o| {
                            o != c && matches!(self.clients[o].phase, Phase::Acquiring(_))
                        });
                    if slot.attempts < shape.attempts
                        && slot.inflight.is_empty()
                        && !others_acquiring
                    {
                        out.push(Step::Begin(cu));
                    }
                }
                Phase::Acquiring(round) | Phase::Extending { round, .. } => {
                    let clock = self.client_clock(c);
                    if round.is_decided_excluding(&shape.params, slot.excluded)
                        || clock >= round.deadline(&shape.params)
                    {
                        out.push(Step::Decide(cu));
                    }
                }
                Phase::Holding { lease, work, .. } => {
                    // Extend only before the storage cycle starts, while the lease is still
                    // believed (the core refuses to extend an expired lease).
                    if slot.extensions < shape.extensions
                        && slot.inflight.is_empty()
                        && work.next == 0
                        && work.pending.is_none()
                        && lease.believes(self.client_clock(c))
                    {
                        out.push(Step::Extend(cu));
                    }
                    if shape.ops.is_empty() {
                        out.push(Step::Release(cu));
                    } else if work.pending.is_some() {
                        out.push(Step::Apply(cu));
                    } else {
                        out.push(Step::Issue(cu));
                    }
                }
                Phase::Done => {}
            }
            for n in slot.inflight.iter() {
                let node = n.index();
                out.push(Step::Deliver {
                    client: cu,
                    node: node as u8,
                    early: false,
                });
                if !slot.inflight_extend && self.early_expiry_matters(node) {
                    out.push(Step::Deliver {
                        client: cu,
                        node: node as u8,
                        early: true,
                    });
                }
            }
        }
    }

    fn early_expiry_matters(&self, node: usize) -> bool {
        let eps = u64::from(self.shape.eps_n);
        eps > 0
            && self.nodes[node].state.entry.is_some_and(|e| {
                let clock = self.node_clock(node);
                e.expires_at > clock && e.expires_at <= clock + Millis(eps)
            })
    }

    fn fault_steps(&self, out: &mut Vec<Step>) {
        let shape = &self.shape;
        let b = &self.budget;
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
        if b.pauses > 0 {
            for c in 0..shape.clients {
                if let Phase::Holding { work, .. } = self.clients[c].phase
                    && work.pending.is_some()
                    && !work.paused
                {
                    out.push(Step::Pause(c as u8));
                }
            }
        }
        if b.jumps > 0 {
            let ticks = shape.jump_ticks;
            if shape.node_jumps() {
                for n in 0..shape.nodes {
                    if shape.jump_target == JumpTarget::Any
                        || shape.jump_index.is_none_or(|i| usize::from(i) == n)
                    {
                        out.push(Step::Jump {
                            target: Process::Node(n as u8),
                            ticks,
                        });
                    }
                }
            }
            if shape.client_jumps() {
                for c in 0..shape.clients {
                    if shape.jump_target == JumpTarget::Any
                        || shape.jump_index.is_none_or(|i| usize::from(i) == c)
                    {
                        out.push(Step::Jump {
                            target: Process::Client(c as u8),
                            ticks,
                        });
                    }
                }
            }
        }
        if b.crashes > 0 {
            for n in 0..shape.nodes {
                if self.nodes[n].state.availability != Availability::Down {
                    out.push(Step::Crash(n as u8));
                }
            }
        }
        if shape.persistence == Persistence::FsyncPeriodic {
            for n in 0..shape.nodes {
                if self.nodes[n].state.entry.is_some_and(|e| !e.durable) {
                    out.push(Step::Fsync(n as u8));
                }
            }
        }
        if let Some(replica) = self.replica {
            if replica.entry != self.nodes[0].state.entry {
                out.push(Step::Replicate);
            }
            if b.failover {
                out.push(Step::Promote);
            }
        }
    }

    /// Every enabled step, in a deterministic order (stateright rebuilds paths by index):
    /// client steps and deliveries, then the tick, then faults.
    pub(crate) fn steps(&self, out: &mut Vec<Step>) {
        let before = out.len();
        self.prompt_steps(out);
        let nobody_can_act = out.len() == before;
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

    /// Applies the core's release op of `token` at once to every node `client` reaches
    /// that is serving.
    ///
    /// Shortcut, sound for compare-and-delete: a late unlock could only keep a key longer,
    /// which no property can be hurt by. For plain `DEL` a late unlock is no different from
    /// a client that released later, and the model already lets a holder release at any time.
    fn release_everywhere(&mut self, client: usize, token: Token) {
        let shape = self.shape.clone();
        let round = ReleaseRound::new(token, self.client_clock(client));
        let op = round.op(&shape.params);
        for n in shape.reach[client].iter() {
            let node = n.index();
            let clock = self.node_clock(node);
            // A node that is down or restarting refuses: the unlock is lost, the key (if it
            // survived) expires on its own.
            let _ = self.nodes[node].state.apply(&op, clock, shape.persistence);
        }
    }

    fn finish_client(&mut self, c: usize, success: bool) {
        let slot = &mut self.clients[c];
        slot.phase = if !success && slot.attempts < self.shape.attempts {
            Phase::Idle
        } else {
            Phase::Done
        };
    }

    fn normalise_node(&mut self, node: usize) {
        let clock = self.node_clock(node);
        // A guard that has run out is gone, so no stale timestamp survives (view.rs).
        if self.nodes[node]
            .guarded_until
            .is_some_and(|until| clock >= until)
        {
            self.nodes[node].guarded_until = None;
        }
        let state = &mut self.nodes[node].state;
        state.expire(clock);
        if let Availability::Restarting { ready_at } = state.availability
            && clock >= ready_at
        {
            state.availability = Availability::Up;
        }
    }

    /// The state after `step`, or `None` when the step does not apply.
    pub(crate) fn after(&self, step: Step) -> Option<World> {
        let mut w = self.clone();
        let shape = self.shape.clone();
        match step {
            Step::Tick => {
                w.now += 1;
                for n in 0..shape.nodes {
                    w.normalise_node(n);
                }
                if let Some(replica) = &mut w.replica {
                    replica.expire(Millis((i64::from(w.now) + w.nodes[0].offset) as u64));
                }
                for slot in &mut w.clients[..shape.clients] {
                    if let Phase::Holding { work, .. } = &mut slot.phase
                        && work.pending.is_some()
                    {
                        work.stall = work.stall.saturating_add(1);
                    }
                }
            }
            Step::Begin(c) => {
                let c = usize::from(c);
                let slot = &mut w.clients[c];
                slot.attempts += 1;
                slot.token = token_of(c, slot.attempts);
                slot.inflight = shape.reach[c];
                slot.inflight_extend = false;
                slot.excluded = NodeSet::EMPTY;
                let t1 = w.client_clock(c);
                w.clients[c].phase = Phase::Acquiring(QuorumRound::acquire(w.clients[c].token, t1));
            }
            Step::Deliver {
                client,
                node,
                early,
            } => {
                let (c, n) = (usize::from(client), usize::from(node));
                w.clients[c].inflight.remove(NodeId(node));
                let clock = w.node_clock(n);
                // The restarted-node guard: the client learns the node's uptime with its
                // answer (the Redis client reads `INFO`), so the node answers, but while the
                // guard covers it its yes is kept out of the quorum by the core.
                let young = w.nodes[n].guarded_until.is_some_and(|until| clock < until);
                let state = &mut w.nodes[n].state;
                let reply = if state.is_serving(clock) {
                    if early {
                        state.expire(clock + Millis(u64::from(shape.eps_n)));
                    }
                    let token = w.clients[c].token;
                    let ttl = shape.params.ttl;
                    let op = if w.clients[c].inflight_extend {
                        Op::PExpireIfEq { token, ttl }
                    } else {
                        Op::SetNxPx { token, ttl }
                    };
                    match state.apply(&op, clock, shape.persistence) {
                        Ok(true) => Reply::Applied,
                        Ok(false) => Reply::NotApplied,
                        Err(_) => Reply::Failed,
                    }
                } else {
                    Reply::Failed
                };
                // Shortcut, sound: the reply reaches the client at once. A later reply would
                // only make the client decide later, and the deadline is anchored at T1, so
                // a late reply only shortens the belief window. A reply to a round already
                // decided is ignored, as the core ignores it.
                match &mut w.clients[c].phase {
                    Phase::Acquiring(round) | Phase::Extending { round, .. } => {
                        if young {
                            w.clients[c].excluded.insert(NodeId(node));
                        }
                        round.handle_reply(NodeId(node), reply);
                    }
                    _ => {}
                }
            }
            Step::Lose { client, node } => {
                w.budget.losses -= 1;
                w.clients[usize::from(client)].inflight.remove(NodeId(node));
            }
            Step::Extend(c) => {
                let c = usize::from(c);
                let Phase::Holding { lease, epoch, .. } = w.clients[c].phase else {
                    return None;
                };
                let t1 = w.client_clock(c);
                let slot = &mut w.clients[c];
                slot.extensions += 1;
                slot.inflight = shape.reach[c];
                slot.inflight_extend = true;
                slot.excluded = NodeSet::EMPTY;
                slot.phase = Phase::Extending {
                    lease,
                    epoch,
                    round: QuorumRound::extend(lease.token, t1),
                };
            }
            Step::Decide(c)
                if matches!(w.clients[usize::from(c)].phase, Phase::Extending { .. }) =>
            {
                let c = usize::from(c);
                let Phase::Extending {
                    lease,
                    epoch,
                    round,
                } = w.clients[c].phase
                else {
                    return None;
                };
                // Decided by the core; with the minority-accepted mistake, with N = 1.
                let excluded = w.clients[c].excluded;
                let lease =
                    match round.finish_excluding(&shape.extend_params, w.client_clock(c), excluded)
                    {
                        RoundOutcome::Won(extended) => extended,
                        // A failed extension leaves the current lease as it was.
                        RoundOutcome::Lost(_) => lease,
                    };
                w.clients[c].phase = Phase::Holding {
                    lease,
                    epoch,
                    work: Work::default(),
                };
            }
            Step::Decide(c) => {
                let c = usize::from(c);
                let Phase::Acquiring(round) = w.clients[c].phase else {
                    return None;
                };
                let excluded = w.clients[c].excluded;
                match round.finish_excluding(&shape.params, w.client_clock(c), excluded) {
                    RoundOutcome::Won(lease) => {
                        w.epochs += 1;
                        w.acquired |= 1 << c;
                        w.clients[c].phase = Phase::Holding {
                            lease,
                            epoch: w.epochs,
                            work: Work::default(),
                        };
                    }
                    RoundOutcome::Lost(_) => {
                        // Redlock step 5: unlock on all nodes, even those that said no.
                        w.release_everywhere(c, round.token);
                        w.finish_client(c, false);
                    }
                }
            }
            Step::Release(c) => {
                let c = usize::from(c);
                let Phase::Holding { lease, .. } = w.clients[c].phase else {
                    return None;
                };
                w.release_everywhere(c, lease.token);
                w.finish_client(c, true);
            }
            Step::Issue(c) => {
                let c = usize::from(c);
                let Phase::Holding { lease, epoch, work } = w.clients[c].phase else {
                    return None;
                };
                // The check before every op: `deadline − clock ≥ margin`, with the clock read
                // up to ε_c late (the error that favours going ahead).
                let reading = w.client_clock(c) - Millis(u64::from(shape.eps_c));
                let left = lease.deadline.signed_sub(reading);
                if left < i64::from(shape.check_margin) {
                    w.release_everywhere(c, lease.token);
                    w.finish_client(c, true);
                    return Some(w);
                }
                let epoch32 = u32::from(epoch);
                let op = match shape.ops[usize::from(work.next)] {
                    OpKind::Mark => StorageOp::Mark { epoch: epoch32 },
                    OpKind::Read => StorageOp::Read { epoch: epoch32 },
                    OpKind::Write => StorageOp::Write {
                        epoch: epoch32,
                        value: work.read.unwrap_or(0) + 1,
                    },
                };
                w.clients[c].phase = Phase::Holding {
                    lease,
                    epoch,
                    work: Work {
                        pending: Some(op),
                        stall: 0,
                        paused: false,
                        ..work
                    },
                };
            }
            Step::Apply(c) => {
                let c = usize::from(c);
                let Phase::Holding {
                    lease,
                    epoch,
                    mut work,
                } = w.clients[c].phase
                else {
                    return None;
                };
                let op = work.pending.take()?;
                let protection = shape.storage?;
                // Shortcut, sound: the storage's reply reaches the client at once; the
                // client's next op is checked against its clock anyway.
                let reply = w.storage.apply(op, protection);
                work.stall = 0;
                work.paused = false;
                match reply {
                    StorageReply::Rejected => {
                        w.release_everywhere(c, lease.token);
                        w.finish_client(c, true);
                        return Some(w);
                    }
                    StorageReply::Value(v) => work.read = Some(v),
                    StorageReply::Done => {}
                }
                work.next += 1;
                if usize::from(work.next) >= shape.ops.len() {
                    w.release_everywhere(c, lease.token);
                    w.finish_client(c, true);
                } else {
                    w.clients[c].phase = Phase::Holding { lease, epoch, work };
                }
            }
            Step::Pause(c) => {
                w.budget.pauses -= 1;
                if let Phase::Holding { work, .. } = &mut w.clients[usize::from(c)].phase {
                    work.paused = true;
                }
            }
            Step::Jump { target, ticks } => {
                w.budget.jumps -= 1;
                match target {
                    Process::Node(n) => {
                        w.nodes[usize::from(n)].offset += i64::from(ticks);
                        w.normalise_node(usize::from(n));
                    }
                    Process::Client(c) => w.clients[usize::from(c)].offset += i64::from(ticks),
                }
            }
            Step::Crash(n) => {
                let n = usize::from(n);
                w.budget.crashes -= 1;
                let clock = w.node_clock(n);
                let state = &mut w.nodes[n].state;
                state.crash(shape.persistence);
                if shape.restart {
                    // The process reboots at once; the restart delay is measured on the
                    // node's own clock, so a clock jump can shorten it (Kleppmann's point).
                    state.restart(clock, shape.restart_delay);
                    // The guard counts the node's uptime, which starts when it serves again.
                    if shape.client_guard > Millis::ZERO {
                        w.nodes[n].guarded_until =
                            Some(clock + shape.restart_delay + shape.client_guard);
                    }
                }
                w.normalise_node(n);
            }
            Step::Fsync(n) => w.nodes[usize::from(n)].state.fsync(),
            Step::Replicate => {
                let replica = w.replica.as_mut()?;
                replica.entry = w.nodes[0].state.entry;
            }
            Step::Promote => {
                let replica = w.replica.take()?;
                w.budget.failover = false;
                let clock = w.node_clock(0);
                let mut promoted = replica;
                promoted.restart(clock, shape.failover.unwrap_or(Millis::ZERO));
                w.nodes[0].state = promoted;
                w.normalise_node(0);
            }
        }
        Some(w)
    }
}
