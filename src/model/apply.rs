//! What each step does to the state, and what it tells while doing it.
//!
//! [`World::apply`] takes one enabled [`Step`] and returns the state after it. Every step
//! tells its events to a [`Listener`] from the values it used: the node that served a `SET` says
//! so from the clock reading it served on, the client that decided a round tells the core's
//! verdict, a release names the keys it deleted. The checker passes [`Silent`]; a story
//! passes a list. So a story cannot say anything the step did not do.

use crate::node::{Availability, Entry};
use crate::proto::{self, Effects, LockPhase, NodeId, Op, Reply, Request, RoundKind};
use crate::scenario::{MAX_MODEL_NODES, UNBOUNDED_EXTENSIONS};
use crate::storage::{CheckAndApply, Comparison, Protection, StorageOp, StorageReply};
use crate::time::Millis;

use super::listener::{Listener, Silent};
use super::step::{ModelEntropy, Step};
use super::vocabulary::owner_on;
use super::world::{Activity, Work, World};
use crate::actor::{Actor, Process};
use crate::event::{Event, Moment, Nodes, persistence_words, unlock_words};

/// What an unlock deleted; filled only for a listener.
#[derive(Debug, Default)]
struct Deleted {
    /// Other clients' keys, as (owner, node).
    others: Vec<(Actor, Actor)>,
    /// The nodes where the unlocking client's own key went.
    own: proto::NodeSet,
}

/// What bringing a node's state up to its clock changed.
#[derive(Clone, Copy, Debug, Default)]
struct Normalised {
    /// The key that expired.
    expired: Option<Entry>,
    /// The restart delay ended.
    serves_again: bool,
    /// The restarted-node guard ended.
    guard_ended: bool,
}

impl World {
    /// The state after `step`, or `None` when the step does not apply.
    pub(crate) fn after(&self, step: Step) -> Option<World> {
        self.apply(step, &mut Silent)
    }

    /// The state after `step`, its events told to `tell` as the step causes them; `None`
    /// (with nothing told) when the step does not apply.
    pub(crate) fn apply<T: Listener>(&self, step: Step, listener: &mut T) -> Option<World> {
        let mut w = self.clone();
        match step {
            Step::Tick => w.tick(listener),
            Step::Begin(c) => w.begin(usize::from(c), listener)?,
            Step::Deliver {
                client,
                node,
                early,
                acked,
            } => w.deliver(
                usize::from(client),
                usize::from(node),
                (early, acked),
                listener,
            )?,
            Step::Refuse { client, node } => w.refuse(usize::from(client), node, listener)?,
            Step::Lose { client, node } => w.lose(usize::from(client), node, listener),
            Step::LateRelease { client, node } => {
                w.land_late_release(usize::from(client), node, listener)?
            }
            Step::Extend(c) => w.extend(usize::from(c), listener)?,
            Step::Decide(c) => w.decide(usize::from(c), listener)?,
            Step::Release(c) => w.release_told(usize::from(c), listener),
            Step::Issue(c) => w.issue(usize::from(c), listener)?,
            Step::Apply(c) => w.land(usize::from(c), listener)?,
            Step::Pause(c) => w.pause(usize::from(c), listener),
            Step::Jump { target, ticks } => w.jump(target, ticks, listener),
            Step::Crash(n) => w.crash(usize::from(n), listener),
            Step::CrashClient(c) => w.crash_client(usize::from(c), listener),
            Step::PartitionClient(c) => w.partition_client(usize::from(c), listener),
            Step::Fsync(n) => w.fsync(usize::from(n), listener),
            Step::CrashCounter => w.crash_counter(listener),
            Step::FsyncCounter => w.fsync_counter(listener),
            Step::Replicate(r) => w.replicate(usize::from(r), listener)?,
            Step::Promote(r) => w.promote(usize::from(r), listener)?,
        }
        Some(w)
    }

    /// The moment `actor` does `event` now.
    fn moment(&self, actor: Actor, event: Event) -> Moment {
        Moment::new(self.now, actor, event)
    }

    /// True time advances one tick; keys, restart delays, guards and beliefs that end with
    /// it are told in that order.
    fn tick<T: Listener>(&mut self, listener: &mut T) {
        let shape = self.shape;
        let believed = |w: &World| {
            (0..shape.clients)
                .filter(|&c| w.believes(c))
                .fold(0u32, |mask, c| mask | 1 << c)
        };
        let believed_before = if T::LISTENS { believed(self) } else { 0 };
        self.now += 1;
        let mut ended = [Normalised::default(); MAX_MODEL_NODES];
        for (n, done) in ended.iter_mut().enumerate().take(shape.nodes) {
            *done = self.normalise_node(n);
        }
        for r in 0..shape.replica_slots() {
            let clock = self.node_clock(shape.replica_node(r));
            if let Some(replica) = &mut self.replicas[r] {
                replica.expire(clock);
            }
        }
        for slot in &mut self.clients[..shape.clients] {
            if slot.work.pending.is_some() {
                slot.work.stall = slot.work.stall.saturating_add(1);
            }
        }
        if !T::LISTENS {
            return;
        }
        let ended = &ended[..shape.nodes];
        for (n, done) in ended.iter().enumerate() {
            self.record_expiry(n, done, false, listener);
        }
        for (n, done) in ended.iter().enumerate() {
            self.record_ended(n, done, listener);
        }
        let ended_beliefs = believed_before & !believed(self);
        for c in (0..shape.clients).filter(|c| ended_beliefs & (1 << c) != 0) {
            listener.record(|| self.moment(Actor::client(c), Event::BeliefEnded));
        }
    }

    /// A key that expired on node `n` while it serves (a node that is down or restarting
    /// shows nobody that its key is gone).
    fn record_expiry<T: Listener>(
        &self,
        n: usize,
        done: &Normalised,
        by_jump: bool,
        listener: &mut T,
    ) {
        if let Some(entry) = done.expired
            && self.nodes[n].state.availability == Availability::Up
        {
            let owner = owner_on(self, n, entry.token);
            listener.record(|| self.moment(Actor::node(n), Event::KeyExpired { owner, by_jump }));
        }
    }

    /// A restart delay or a guard that ended on node `n`.
    fn record_ended<T: Listener>(&self, n: usize, done: &Normalised, listener: &mut T) {
        if done.serves_again {
            listener.record(|| self.moment(Actor::node(n), Event::ServesAgain));
        }
        if done.guard_ended {
            listener.record(|| {
                self.moment(Actor::node(n), Event::GuardEnded)
                    .on_clock(self)
            });
        }
    }

    /// Client `c` reads T1 and sends its round: the first one, or the next once its back-off
    /// is over.
    fn begin<T: Listener>(&mut self, c: usize, listener: &mut T) -> Option<()> {
        let shape = self.shape;
        let now = self.client_clock(c);
        let lock = &mut self.clients[c].lock;
        let mut entropy = ModelEntropy::of(shape, c, lock);
        let effects = match lock.phase() {
            LockPhase::Idle => lock.begin(&shape.client_params[c], now, &mut entropy),
            _ => lock.handle_timeout(&shape.client_params[c], now, &mut entropy),
        };
        let request = effects.request?;
        listener.record(|| {
            // A sequential round names the node it asks first, reachable or not: an
            // unreachable one costs its timeout, which the story tells when it passes.
            let to = match request.only {
                Some(node) => proto::NodeSet::single(node),
                None => self.reach(c),
            };
            self.moment(
                Actor::client(c),
                Event::RoundBegan {
                    attempt: self.clients[c].lock.attempts(),
                    t1: now.since_origin(),
                    ttl: shape.params.ttl.as_u64(),
                    to: Nodes(to),
                    one_at_a_time: request.only.is_some(),
                },
            )
        });
        self.carry_out::<T>(c, effects);
        Some(())
    }

    /// Client `c`'s request reaches node `n`, read `ε_n` fast when `early`; the answer goes
    /// to the client's mailbox at once, after the replicas in `acked` (a bitmask) copied what
    /// n1 wrote.
    fn deliver<T: Listener>(
        &mut self,
        c: usize,
        n: usize,
        (early, acked): (bool, u8),
        listener: &mut T,
    ) -> Option<()> {
        let shape = self.shape;
        let request = self.clients[c].request?;
        let id = NodeId(n as u8);
        self.clients[c].inflight.remove(id);
        if shape.chaos_nodes {
            self.deliver_to_chaos_node(c, n, request, listener);
            return Some(());
        }
        let clock = self.node_clock(n);
        // `early`: the node's clock is read at the fast end of its error band, for
        // everything it measures (key expiry, restart delay, guard uptime).
        let reading = if early {
            clock + Millis(u64::from(shape.eps_n))
        } else {
            clock
        };
        // The restarted-node guard: the client learns the node's uptime with its answer (the
        // Redis client reads `INFO`), so the node answers, but while the guard covers it its
        // yes is handed to the core as not counting.
        let young = self.nodes[n]
            .guarded_until
            .is_some_and(|until| reading < until);
        let served = self.serve(n, &request.op, clock, reading);
        if served.reply == Reply::Applied && matches!(request.op, Op::SetNxPx { .. }) {
            self.nodes[n].setter = c as u8;
        }
        // The client hands the answer to the core when it decides (`Decide`), which may be
        // any later step. An answer to a round the core no longer collects would be ignored
        // by it, so it is dropped.
        let slot = &mut self.clients[c];
        let mut guarded = false;
        if slot.lock.is_collecting(request.round) {
            let first = !slot.mailbox.answered().contains(id);
            slot.mailbox.record(id, served.reply);
            guarded = young && !slot.guarded.contains(id);
            if young {
                slot.guarded.insert(id);
            }
            if first && served.reply == Reply::Applied {
                self.saw_counter(c, id, served.counter);
            }
        }
        if T::LISTENS {
            self.record_served(c, n, &request.op, &served, guarded, listener);
        }
        // `[failover] wait = k`: the master answers only once k replicas have what it wrote
        // (`WAIT k`), so the answer the client holds is never ahead of them. Copying in the
        // same step is sound: until the answer arrives the client counts nothing, and a key
        // on the master alone only refuses more. Which k is the step's (`acked`): with
        // more replicas than k the others copy later, on their own `Replicate`, or never.
        if served.reply == Reply::Applied {
            let mine = shape.replicas_of(n);
            for r in mine.clone().filter(|r| acked & 1 << (r - mine.start) != 0) {
                self.replicate(r, listener);
            }
        }
        Some(())
    }

    /// A node that answers anything said yes, and keeps nothing.
    fn deliver_to_chaos_node<T: Listener>(
        &mut self,
        c: usize,
        n: usize,
        request: Request,
        listener: &mut T,
    ) {
        let id = NodeId(n as u8);
        let slot = &mut self.clients[c];
        if slot.lock.is_collecting(request.round) {
            slot.mailbox.record(id, Reply::Applied);
        }
        listener.record(|| {
            self.moment(
                Actor::node(n),
                Event::YesWithoutKey {
                    client: Actor::client(c),
                },
            )
        });
    }

    /// What node `n` did with client `c`'s `op`: a key the fast reading found expired, the
    /// answer, and the guard's refusal to count it.
    fn record_served<T: Listener>(
        &self,
        c: usize,
        n: usize,
        op: &Op,
        served: &Served,
        guarded: bool,
        listener: &mut T,
    ) {
        let event = self.served_event(c, n, op, served);
        // A key the fast reading found expired, unless the `SET` it let in tells it.
        if let Some(old) = served.early_over
            && !matches!(event, Event::KeySet { .. })
        {
            let owner = owner_on(self, n, old.token);
            let expired = Event::KeyExpired {
                owner,
                by_jump: false,
            };
            listener.record(|| self.moment(Actor::node(n), expired).on_clock(self));
        }
        listener.record(|| {
            self.moment(Actor::node(n), event)
                .from(Actor::client(c))
                .on_clock(self)
        });
        if guarded {
            listener.record(|| {
                self.moment(
                    Actor::node(n),
                    Event::GuardRefused {
                        client: Actor::client(c),
                    },
                )
            });
        }
    }

    /// Node `n` runs `op`, serving on `reading` (its clock `clock`, or `ε_n` ahead of it).
    fn serve(&mut self, n: usize, op: &Op, clock: Millis, reading: Millis) -> Served {
        let persistence = self.shape.persistence;
        let state = &mut self.nodes[n].state;
        let before = *state;
        let mut served = Served {
            serving: state.is_serving(reading),
            restart_over: reading != clock && state.is_serving(reading) && !state.is_serving(clock),
            early_over: None,
            fast_by: (reading.as_u64() - clock.as_u64()) as u32,
            counter_before: before.counter,
            counter: 0,
            reply: Reply::Failed,
        };
        if !served.serving {
            return served;
        }
        if reading != clock {
            state.expire(reading);
            served.early_over = before.entry.filter(|_| state.entry.is_none());
            if let Availability::Restarting { .. } = state.availability {
                state.availability = Availability::Up;
            }
        }
        served.reply = match state.apply_counted(op, clock, persistence) {
            Ok(answer) if answer.applied => {
                served.counter = answer.counter;
                Reply::Applied
            }
            Ok(_) => Reply::NotApplied,
            Err(_) => Reply::Failed,
        };
        served
    }

    /// What node `n` did with client `c`'s `op`, from how it served it.
    fn served_event(&self, c: usize, n: usize, op: &Op, served: &Served) -> Event {
        let state = &self.nodes[n].state;
        let applied = served.reply == Reply::Applied;
        let who = Actor::client(c);
        if !served.serving {
            return Event::NotServing {
                client: who,
                restarting: state.availability != Availability::Down,
            };
        }
        let expires_at = || state.entry.map_or(0, |e| e.expires_at.since_origin());
        match *op {
            Op::RaiseFence { .. } if applied => Event::FenceRaised {
                client: who,
                from: served.counter_before,
                to: state.counter,
            },
            Op::RaiseFence { .. } => Event::FenceRefused { client: who },
            Op::PExpireIfEq { .. } if applied => Event::KeyExtended {
                client: who,
                node: Actor::node(n),
                expires_at: expires_at(),
            },
            Op::PExpireIfEq { .. } => Event::ExtensionRefused { client: who },
            _ if applied => Event::KeySet {
                client: who,
                node: Actor::node(n),
                expires_at: expires_at(),
                early_over: served.early_over.map(|old| owner_on(self, n, old.token)),
                fast_by: served.fast_by,
                restart_over: served.restart_over,
                counter: self.counters_matter().then_some(state.counter),
            },
            _ => Event::SetRefused {
                client: who,
                holder: state.entry.map(|e| owner_on(self, n, e.token)),
            },
        }
    }

    /// Phantom clients only: client `c`'s `SET` to `node` is refused as if a third client's
    /// key were there.
    fn refuse<T: Listener>(&mut self, c: usize, node_id: u8, listener: &mut T) -> Option<()> {
        let request = self.clients[c].request?;
        let id = NodeId(node_id);
        let slot = &mut self.clients[c];
        slot.inflight.remove(id);
        if slot.lock.is_collecting(request.round) {
            slot.mailbox.record(id, Reply::NotApplied);
        }
        let event = Event::SetRefused {
            client: Actor::client(c),
            holder: None,
        };
        listener.record(|| {
            self.moment(Actor::node(usize::from(node_id)), event)
                .from(Actor::client(c))
        });
        Some(())
    }

    /// Client `c`'s request to `node_id` is lost.
    fn lose<T: Listener>(&mut self, c: usize, node_id: u8, listener: &mut T) {
        // Nodes that answer anything may leave any request unanswered, with no budget.
        if !self.shape.chaos_nodes {
            self.budget.losses -= 1;
        }
        self.clients[c].inflight.remove(NodeId(node_id));
        let event = Event::RequestLost {
            node: Actor::node(usize::from(node_id)),
        };
        listener.record(|| self.moment(Actor::client(c), event));
    }

    /// Holder `c` starts an extension round, timed from a fresh T1.
    fn extend<T: Listener>(&mut self, c: usize, listener: &mut T) -> Option<()> {
        let shape = self.shape;
        let now = self.client_clock(c);
        // Unbounded extensions are not counted: the count would only grow, and without it a
        // holder that keeps extending comes back to the same state, a cycle the safety run
        // handles and the liveness run cuts at its horizon.
        if shape.extensions != UNBOUNDED_EXTENSIONS {
            self.clients[c].extensions += 1;
        }
        let effects = self.clients[c]
            .lock
            .extend(&shape.client_params[c], now)
            .ok()?;
        let event = match (effects.request, self.clients[c].lock.lease()) {
            (None, Some(lease)) => Event::TooLateToExtend {
                clock: now.since_origin(),
                deadline: lease.deadline.since_origin(),
            },
            _ => Event::ExtensionBegan {
                t1: now.since_origin(),
                to: Nodes(self.reach(c)),
            },
        };
        listener.record(|| self.moment(Actor::client(c), event).on_clock(self));
        self.carry_out::<T>(c, effects);
        Some(())
    }

    /// Client `c` hands its mailbox to the core and carries out its decision; the core's
    /// verdict is what is told.
    fn decide<T: Listener>(&mut self, c: usize, listener: &mut T) -> Option<()> {
        let (lock, effects) = self.decided(c)?;
        // The round as the client saw it when it decided: its tally with the mailbox.
        let decided = self.clients[c].activity();
        // The guard's nodes answered, but their yes did not count.
        let uncounted = self.clients[c].guarded;
        let slot = &mut self.clients[c];
        slot.lock = lock;
        slot.mailbox = Default::default();
        slot.guarded = proto::NodeSet::EMPTY;
        let deleted = self.carry_out::<T>(c, effects);
        if T::LISTENS {
            let event = self.decision_event(c, &decided, uncounted, effects, deleted);
            listener.record(|| self.moment(Actor::client(c), event).on_clock(self));
        }
        Some(())
    }

    /// The event of client `c`'s decision of the round it ran in `decided`, where the yes of
    /// the `uncounted` nodes did not count; `deleted`: the keys its unlock removed.
    fn decision_event(
        &self,
        c: usize,
        decided: &Activity,
        uncounted: proto::NodeSet,
        effects: Effects,
        deleted: Deleted,
    ) -> Event {
        let t2 = self.client_clock(c).since_origin();
        let by_write_back = matches!(decided, Activity::Acquiring(r) if r.kind == RoundKind::Fence);
        match effects.event {
            Some(proto::LockEvent::Acquired {
                validity,
                deadline,
                nodes,
                fence,
                ..
            }) => Event::Acquired {
                on: Nodes(nodes.applied.difference(uncounted)),
                t2,
                validity: validity.as_u64(),
                believes_until: deadline.since_origin(),
                fence: self.counters_matter().then_some(fence.unwrap_or(0)),
                by_write_back,
                ideal_token: self.ideal_token(c),
            },
            Some(
                proto::LockEvent::Retrying { failure, .. }
                | proto::LockEvent::NotAcquired { failure, .. },
            ) => Event::NotAcquired {
                t2,
                gives_up: matches!(effects.event, Some(proto::LockEvent::NotAcquired { .. })),
                failure,
                deleted: deleted.others,
                freed: Nodes(deleted.own),
                unlock_travels: effects.request.is_some() && self.release_may_be_late(c),
            },
            Some(proto::LockEvent::Asking { node, silent }) => Event::NodeAsked {
                node: Actor::node(node.index()),
                ttl: self.shape.params.ttl.as_u64(),
                silent: silent.map(|n| Actor::node(n.index())),
            },
            Some(proto::LockEvent::Extended {
                deadline, nodes, ..
            }) => Event::Extended {
                on: Nodes(nodes.applied.difference(uncounted)),
                t2,
                believes_until: deadline.since_origin(),
            },
            _ => match decided {
                // A won acquisition that still writes its fence back: a request, no event.
                Activity::Acquiring(round) => Event::WriteBackBegan {
                    on: Nodes(round.tally.applied.difference(uncounted)),
                    t2,
                    fence: match self.clients[c].lock.phase() {
                        LockPhase::Acquiring(r) => r.fence,
                        _ => 0,
                    },
                },
                _ => Event::ExtensionFailed {
                    t2,
                    believes_until: match decided {
                        Activity::Extending { lease, .. } => lease.deadline.since_origin(),
                        _ => 0,
                    },
                },
            },
        }
    }

    /// Carries out what client `c`'s lock asked for, then reacts to its event; returns the
    /// keys a release deleted (told only to a listener).
    ///
    /// An acquisition or extension request starts travelling to every node the client reaches
    /// (each delivery is a step of its own). A release is applied at once to every node the
    /// client reaches that is serving, and every node's answer is handed straight back to the
    /// core; a node it cannot reach or that is down answers with a failure. Shortcut, sound
    /// for compare-and-delete: a late unlock could only keep a key longer, which no property
    /// can be hurt by. For plain `DEL` a late unlock is no different from a client that
    /// released later, and the model already lets a holder release at any time. A
    /// get-then-del `GET` is applied at once in the same way, and the `DEL` the core sends
    /// where it read the client's value travels (`release_at_once`): a later `GET` could read
    /// the value only where it already was, as the holder releases once its own requests are
    /// in (`client_steps`). The one other exception is a failed round's release under a
    /// kept value, which travels ([`release_may_be_late`](World::release_may_be_late)).
    fn carry_out<T: Listener>(&mut self, c: usize, effects: Effects) -> Deleted {
        let shape = self.shape;
        let mut deleted = Deleted::default();
        if let Some(request) = effects.request {
            match request.op {
                Op::SetNxPx { .. } | Op::PExpireIfEq { .. } | Op::RaiseFence { .. } => {
                    self.reset_fences(c, false);
                    let to = self
                        .reach(c)
                        .intersection(request.to(shape.params.node_count));
                    let slot = &mut self.clients[c];
                    slot.request = Some(request);
                    slot.inflight = to;
                    slot.mailbox = Default::default();
                    slot.guarded = proto::NodeSet::EMPTY;
                }
                Op::DelIfEq { .. } | Op::Del if self.release_may_be_late(c) => {
                    let to = self
                        .reach(c)
                        .intersection(request.to(shape.params.node_count));
                    let slot = &mut self.clients[c];
                    slot.late_release = Some(request);
                    slot.late = slot.late.union(to);
                }
                Op::DelIfEq { .. } | Op::Del | Op::GetEq { .. } => {
                    deleted = self.release_at_once::<T>(c, request);
                }
            }
        }
        if let Some(proto::LockEvent::Acquired { .. }) = effects.event {
            self.epochs += 1;
            self.acquired |= 1 << c;
            self.reset_fences(c, true);
            let slot = &mut self.clients[c];
            slot.epoch = self.epochs;
            slot.work = Work::default();
        }
        deleted
    }

    /// Whether client `c`'s release, just sent, travels like a request rather than landing at
    /// once: only a failed round's release with `[lock] token = "reused"`, whose client goes
    /// on to retry with the same value. The core does not wait for that release, so it may
    /// reach a node after the next round's `SET`, and its token matches that round's key.
    /// With a fresh value per round, or once the client stops trying, a late release could
    /// only keep a key longer (see [`carry_out`](World::carry_out)).
    fn release_may_be_late(&self, c: usize) -> bool {
        self.shape.keeps_token()
            && matches!(self.clients[c].lock.phase(), LockPhase::BackingOff { .. })
    }

    /// Client `c`'s late release reaches node `n` (see [`Step::LateRelease`]); a node that is
    /// down or restarting refuses it.
    fn land_late_release<T: Listener>(&mut self, c: usize, n: u8, listener: &mut T) -> Option<()> {
        let id = proto::NodeId(n);
        let slot = &mut self.clients[c];
        let request = slot.late_release.filter(|_| slot.late.contains(id))?;
        slot.late.remove(id);
        if slot.late.is_empty() {
            slot.late_release = None;
        }
        let n = usize::from(n);
        let clock = self.node_clock(n);
        let persistence = self.shape.persistence;
        let deleted = matches!(
            self.nodes[n].state.apply(&request.op, clock, persistence),
            Ok(true)
        );
        let compare = matches!(request.op, Op::DelIfEq { .. });
        listener.record(|| {
            let event = Event::ReleaseServed {
                client: Actor::client(c),
                compare,
                deleted,
            };
            self.moment(Actor::node(n), event)
        });
        Some(())
    }

    /// Applies client `c`'s unlock `request` to every node at once (see
    /// [`carry_out`](World::carry_out)); returns the keys it deleted.
    fn release_at_once<T: Listener>(&mut self, c: usize, request: Request) -> Deleted {
        let shape = self.shape;
        let now = self.client_clock(c);
        let mut entropy = ModelEntropy::of(shape, c, &self.clients[c].lock);
        let mut deleted = Deleted::default();
        for n in 0..shape.nodes {
            let id = NodeId(n as u8);
            let clock = self.node_clock(n);
            let owner = self.nodes[n]
                .state
                .entry
                .map(|e| self.key_owner(n, e.token));
            let reply = if self.reach(c).contains(id) {
                // A node that is down or restarting refuses: the unlock is lost, the key (if
                // it survived) expires on its own.
                match self.nodes[n]
                    .state
                    .apply(&request.op, clock, shape.persistence)
                {
                    Ok(true) => Reply::Applied,
                    Ok(false) => Reply::NotApplied,
                    Err(_) => Reply::Failed,
                }
            } else {
                Reply::Failed
            };
            if T::LISTENS
                && let Some(owner) = owner
                && self.nodes[n].state.entry.is_none()
            {
                if owner == c {
                    deleted.own.insert(id);
                } else {
                    deleted.others.push((Actor::client(owner), Actor::node(n)));
                }
            }
            let effects = self.clients[c].lock.handle_reply(
                &shape.client_params[c],
                request.round,
                id,
                reply,
                now,
                &mut entropy,
            );
            // A get-then-del `GET` that read the client's value: the core sends node `n` a
            // `DEL`, which travels (`Step::LateRelease`), so the key may expire and another
            // client's `SET` land before it. Its answer is not handed back: the client
            // believes nothing and waits for nothing any property depends on, so a release
            // the core still waits for is as done as a finished one.
            if let Some(follow) = effects.request {
                let slot = &mut self.clients[c];
                slot.late_release = Some(follow);
                slot.late.insert(id);
            }
        }
        deleted
    }

    /// Client `c` releases its lock through the core (which stops its belief at once);
    /// returns the keys the unlock deleted.
    fn release<T: Listener>(&mut self, c: usize) -> Deleted {
        let now = self.client_clock(c);
        let effects = self.clients[c]
            .lock
            .release(&self.shape.client_params[c], now);
        self.carry_out::<T>(c, effects)
    }

    /// Client `c` releases (it is done, gave up, or chose to), and says so.
    fn release_told<T: Listener>(&mut self, c: usize, listener: &mut T) {
        let deleted = self.release::<T>(c);
        let how = unlock_words(self.shape.params.unlock);
        let event = Event::Released {
            how,
            on: Nodes(self.reach(c)),
            deleted: deleted.others,
            freed: Nodes(deleted.own),
        };
        listener.record(|| self.moment(Actor::client(c), event));
    }

    /// Holder `c` checks its lease and sends its next storage op, or gives up and releases.
    fn issue<T: Listener>(&mut self, c: usize, listener: &mut T) -> Option<()> {
        let shape = self.shape;
        let lease = *self.clients[c].lock.lease()?;
        let deadline = lease.deadline;
        let work = self.clients[c].work;
        let clock = self.client_clock(c);
        let checked = |op: Option<StorageOp>| Event::LeaseChecked {
            clock: clock.since_origin(),
            deadline: deadline.since_origin(),
            op,
        };
        // The check before every op, the core's: `deadline − clock ≥ margin`, with the clock
        // read up to ε_c late (the error that favours going ahead).
        let reading = clock - Millis(u64::from(shape.eps_c));
        if !lease.has_left(reading, Millis(u64::from(shape.check_margin))) {
            listener.record(|| self.moment(Actor::client(c), checked(None)).on_clock(self));
            self.release_told(c, listener);
            return Some(());
        }
        let epoch = u32::from(self.clients[c].epoch);
        let fence = self.fence_of(c);
        let op = shape.ops[usize::from(work.next)].op(epoch, fence, work.read);
        listener.record(|| {
            self.moment(Actor::client(c), checked(Some(op)))
                .on_clock(self)
        });
        self.clients[c].work = Work {
            pending: Some(op),
            stall: 0,
            paused: false,
            ..work
        };
        Some(())
    }

    /// Holder `c`'s pending storage op reaches the storage (or, `counter-after-acquire`,
    /// first takes its token from the counter node); the reply is applied at once.
    fn land<T: Listener>(&mut self, c: usize, listener: &mut T) -> Option<()> {
        let shape = self.shape;
        let mut work = self.clients[c].work;
        let op = work.pending.take()?;
        let protection = shape.storage?;
        let stale = !self.believes(c);
        if self.needs_counter(c, &op) {
            // The op stays pending: a pause may still fall before it lands.
            self.take_counter(c);
            let event = Event::TokenTaken {
                client: Actor::client(c),
                token: self.fences.taken[c],
                stale,
            };
            listener.record(|| self.moment(Actor::Counter, event).from(Actor::client(c)));
            return Some(());
        }
        let op = op.with_fence(self.fence_of(c));
        let waited = work.stall;
        if work.paused && !work.checked {
            let checked_at = self.now.saturating_sub(waited);
            listener.record(|| self.moment(Actor::client(c), Event::PauseEnded { op, checked_at }));
        }
        if self.checks_first(c, op, protection, listener) {
            return Some(());
        }
        // Shortcut, sound: the storage's reply reaches the client at once; the client's next
        // op is checked against its clock anyway.
        let (reply, guard) = if work.checked {
            let reply = self.storage.apply_checked(op, protection);
            (reply, Comparison::CheckedEarlier)
        } else {
            self.storage.apply_guarded(op, protection)
        };
        let arrived = Event::OpArrived {
            client: Actor::client(c),
            op,
            applied: reply != StorageReply::Rejected,
            guard,
            counter: self.storage.value,
            stale,
            // A checked op's delay was told at its check.
            delayed_by: if work.paused || work.checked {
                0
            } else {
                waited
            },
        };
        listener.record(|| self.moment(Actor::Storage, arrived).from(Actor::client(c)));
        work.stall = 0;
        work.paused = false;
        work.checked = false;
        match reply {
            StorageReply::Rejected => {
                self.clients[c].work = work;
                self.release_told(c, listener);
                return Some(());
            }
            StorageReply::Value(v) => work.read = Some(v),
            StorageReply::Done => {}
        }
        work.next += 1;
        self.clients[c].work = work;
        if usize::from(work.next) >= shape.ops.len() {
            self.release_told(c, listener);
        }
        Some(())
    }

    /// With `[storage] check = "two-step"`, the first of holder `c`'s two steps at the
    /// storage: an `op` not checked yet that its protection lets through is marked checked
    /// and stays pending, to be applied by a later step (`true`). An op the check refuses is
    /// refused at once, as the atomic storage refuses it (`false`, like every op of an atomic
    /// storage and every op already checked).
    fn checks_first<T: Listener>(
        &mut self,
        c: usize,
        op: StorageOp,
        protection: Protection,
        listener: &mut T,
    ) -> bool {
        let work = self.clients[c].work;
        if self.shape.check_and_apply != CheckAndApply::TwoStep || work.checked {
            return false;
        }
        let guard = self.storage.check(op, protection);
        if !guard.allows(op) {
            return false;
        }
        self.clients[c].work = Work {
            pending: Some(op),
            checked: true,
            ..work
        };
        let checked = Event::OpChecked {
            client: Actor::client(c),
            op,
            guard,
            stale: !self.believes(c),
            delayed_by: if work.paused { 0 } else { work.stall },
        };
        listener.record(|| self.moment(Actor::Storage, checked).from(Actor::client(c)));
        true
    }

    /// Holder `c` is paused while its op waits.
    fn pause<T: Listener>(&mut self, c: usize, listener: &mut T) {
        self.budget.pauses -= 1;
        let op = self.clients[c].work.pending;
        self.clients[c].work.paused = true;
        listener.record(|| self.moment(Actor::client(c), Event::Paused { op, until: None }));
    }

    /// `target`'s clock steps by `ticks`: on a node, whatever it measures may end at once; on
    /// a client, its belief may end, or come back.
    fn jump<T: Listener>(&mut self, target: Process, ticks: i32, listener: &mut T) {
        self.budget.jumps -= 1;
        if let Some((_, bit)) = self
            .shape
            .jump_sizes_left(self.budget.jump_sizes_used)
            .find(|&(size, _)| size == ticks)
        {
            self.budget.jump_sizes_used |= bit;
        }
        match target {
            Process::Node(n) => {
                let n = usize::from(n);
                self.nodes[n].offset += i64::from(ticks);
                let done = self.normalise_node(n);
                let reads = self.node_clock(n).since_origin();
                listener.record(|| {
                    self.moment(
                        Actor::node(n),
                        Event::ClockJumped {
                            ticks: ticks.into(),
                            reads,
                        },
                    )
                });
                self.record_expiry(n, &done, true, listener);
                self.record_ended(n, &done, listener);
            }
            Process::Client(c) => {
                let c = usize::from(c);
                let believed = self.believes(c);
                self.clients[c].offset += i64::from(ticks);
                let reads = self.client_clock(c).since_origin();
                listener.record(|| {
                    self.moment(
                        Actor::client(c),
                        Event::ClockJumped {
                            ticks: ticks.into(),
                            reads,
                        },
                    )
                });
                match (believed, self.believes(c)) {
                    (true, false) => {
                        listener.record(|| self.moment(Actor::client(c), Event::BeliefEnded))
                    }
                    (false, true) => {
                        listener.record(|| self.moment(Actor::client(c), Event::BeliefReturned))
                    }
                    _ => {}
                }
            }
        }
    }

    /// Node `n` crashes, and restarts unless configured not to.
    fn crash<T: Listener>(&mut self, n: usize, listener: &mut T) {
        let shape = self.shape;
        self.budget.crashes -= 1;
        let clock = self.node_clock(n);
        let held = self.nodes[n]
            .state
            .entry
            .map(|e| owner_on(self, n, e.token));
        let state = &mut self.nodes[n].state;
        state.crash(shape.persistence);
        if shape.restart {
            // The process reboots at once; the restart delay is measured on the node's own
            // clock, so a clock jump can shorten it (Kleppmann's point).
            self.nodes[n].guarded_until =
                state.restart_guarded(clock, shape.restart_delay, shape.client_guard);
        }
        self.normalise_node(n);
        let survived = self.nodes[n].state.entry.is_some();
        let event = Event::Crashed {
            persistence: persistence_words(shape.persistence),
            key: held.map(|owner| (owner, survived)),
            restarts: shape.restart,
            down_for: 0,
            restart_delay: shape.restart_delay.as_u64(),
            guarded_until: self.nodes[n]
                .guarded_until
                .filter(|_| shape.restart)
                .map(Millis::since_origin),
        };
        listener.record(|| self.moment(Actor::node(n), event));
    }

    /// The nodes that hold a key of client `c`.
    fn keys_of(&self, c: usize) -> proto::NodeSet {
        let mut keys = proto::NodeSet::EMPTY;
        for n in 0..self.shape.nodes {
            if self.nodes[n]
                .state
                .entry
                .is_some_and(|e| self.key_owner(n, e.token) == c)
            {
                keys.insert(NodeId(n as u8));
            }
        }
        keys
    }

    /// Client `c` is cut off from every node for good (see [`Step::PartitionClient`]). It is
    /// the static `[network] reach` leaving every node out from now on: the requests it has in
    /// flight are lost with the link (a request that landed before the cut was answered
    /// before it, as every delivery is), and what it sends later reaches nobody, which the
    /// core hears as failures or a round's timeout. The core's lock is left as it is: the
    /// client goes on believing until its lease's deadline, as a live process does.
    fn partition_client<T: Listener>(&mut self, c: usize, listener: &mut T) {
        self.budget.client_partitions -= 1;
        let believed = self.believes(c);
        let keys = self.keys_of(c);
        let slot = &mut self.clients[c];
        slot.cut_off = true;
        slot.inflight = proto::NodeSet::EMPTY;
        slot.late = proto::NodeSet::EMPTY;
        slot.late_release = None;
        let event = Event::ClientPartitioned {
            believed,
            keys: Nodes(keys),
        };
        listener.record(|| self.moment(Actor::client(c), event));
    }

    /// Client `c` dies for good.
    fn crash_client<T: Listener>(&mut self, c: usize, listener: &mut T) {
        let shape = self.shape;
        self.budget.client_crashes -= 1;
        let believed = self.believes(c);
        let keys = self.keys_of(c);
        // The core stops the belief and abandons any round, as a release does; the release
        // it asks for is never sent, because the process is gone. The client stays in the
        // core's releasing phase, where it takes no step again.
        let now = self.client_clock(c);
        let _unsent = self.clients[c].lock.release(&shape.client_params[c], now);
        let slot = &mut self.clients[c];
        slot.mailbox = Default::default();
        slot.guarded = proto::NodeSet::EMPTY;
        slot.work = Work::default();
        let event = Event::ClientCrashed {
            believed,
            keys: Nodes(keys),
        };
        listener.record(|| self.moment(Actor::client(c), event));
    }

    /// Node `n`'s periodic fsync.
    fn fsync<T: Listener>(&mut self, n: usize, listener: &mut T) {
        let owner = self.nodes[n]
            .state
            .entry
            .map(|e| owner_on(self, n, e.token));
        self.nodes[n].state.fsync();
        listener.record(|| self.moment(Actor::node(n), Event::Fsynced { owner }));
    }

    /// The separate counter node crashes and restarts at once.
    fn crash_counter<T: Listener>(&mut self, listener: &mut T) {
        self.budget.crashes -= 1;
        let from = self.fences.counter_node.counter;
        self.crash_counter_node();
        let event = Event::CounterCrashed {
            persistence: persistence_words(self.shape.persistence),
            from,
            to: self.fences.counter_node.counter,
        };
        listener.record(|| self.moment(Actor::Counter, event));
    }

    /// The counter node's periodic fsync.
    fn fsync_counter<T: Listener>(&mut self, listener: &mut T) {
        let counter = self.fences.counter_node.counter;
        self.fences.counter_node.fsync();
        listener.record(|| self.moment(Actor::Counter, Event::CounterFsynced { counter }));
    }

    /// The master's current key, and its fencing counter with it, reach its replica in slot
    /// `r`: Redis replicates the whole dataset, and a script's writes (the `SET` and the
    /// `INCR` of a fenced acquisition) travel together.
    fn replicate<T: Listener>(&mut self, r: usize, listener: &mut T) -> Option<()> {
        let n = self.shape.replica_node(r);
        let (entry, counter) = (self.nodes[n].state.entry, self.nodes[n].state.counter);
        let replica = self.replicas.get_mut(r)?.as_mut()?;
        (replica.entry, replica.counter) = (entry, counter);
        let owner = entry.map(|e| owner_on(self, n, e.token));
        listener.record(|| {
            self.moment(self.replica_actor(r), Event::Replicated { owner })
                .from(Actor::node(n))
        });
        Some(())
    }

    /// The master fails and its replica in slot `r` takes its place. The master's other
    /// replicas go with the failover, and every replica once no failover is left (see
    /// [`World::replicas`]); the event names the master's replicas that had its key.
    fn promote<T: Listener>(&mut self, r: usize, listener: &mut T) -> Option<()> {
        let mut promoted = self.replicas.get_mut(r)?.take()?.node_state();
        let n = self.shape.replica_node(r);
        let key = self.nodes[n].state.entry.map(|e| e.token);
        let held = key.map(|token| owner_on(self, n, token));
        let reached: Vec<Actor> = self
            .shape
            .replicas_of(n)
            .filter(|&o| T::LISTENS && key.is_some() && o != r)
            .filter(|&o| self.replicas[o].is_some_and(|s| s.entry.map(|e| e.token) == key))
            .map(|o| self.replica_actor(o))
            .collect();
        let promoted_actor = (self.shape.replicas > 1).then(|| self.replica_actor(r));
        for o in self.shape.replicas_of(n) {
            self.replicas[o] = None;
        }
        self.budget.failovers -= 1;
        if self.budget.failovers == 0 {
            self.replicas.fill(None);
        }
        let clock = self.node_clock(n);
        promoted.restart(clock, self.shape.failover.unwrap_or(Millis::ZERO));
        self.nodes[n].state = promoted;
        self.normalise_node(n);
        // Lost: the master held a key the promoted replica does not (it has none, or an
        // older one it copied before).
        let lost = held.filter(|_| self.nodes[n].state.entry.map(|e| e.token) != key);
        listener.record(|| {
            self.moment(
                Actor::node(n),
                Event::Promoted {
                    lost,
                    refuses_until: None,
                    replica: promoted_actor,
                    reached,
                },
            )
        });
        Some(())
    }

    /// Brings node `n`'s state up to its clock: a guard or restart delay that ran out ends,
    /// an expired key goes (so no stale timestamp survives, see `view.rs`).
    fn normalise_node(&mut self, n: usize) -> Normalised {
        let clock = self.node_clock(n);
        let slot = &mut self.nodes[n];
        let mut done = Normalised::default();
        if slot.guarded_until.is_some_and(|until| clock >= until) {
            slot.guarded_until = None;
            done.guard_ended = true;
        }
        let state = &mut slot.state;
        let entry = state.entry;
        state.expire(clock);
        done.expired = entry.filter(|_| state.entry.is_none());
        if let Availability::Restarting { ready_at } = state.availability
            && clock >= ready_at
        {
            state.availability = Availability::Up;
            done.serves_again = true;
        }
        done
    }
}

/// How a node served one request.
#[derive(Clone, Copy, Debug)]
struct Served {
    /// It served at the reading (not down, restart delay over).
    serving: bool,
    /// It served only because the reading was `ε_n` fast: its restart delay was over.
    restart_over: bool,
    /// The key the fast reading found expired.
    early_over: Option<Entry>,
    /// By how many ticks the reading was ahead of the node's clock.
    fast_by: u32,
    /// Its fencing counter before the request.
    counter_before: u64,
    /// The counter a `SET` that applied returned.
    counter: u64,
    /// What it answered.
    reply: Reply,
}
