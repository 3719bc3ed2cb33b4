//! One simulated lock client: the core's [`Lock`] on the client's own clock, plus the work a
//! holder does on the guarded storage, plus process pauses.
//!
//! A client's life is a loop: idle for a think time, acquire (the `Lock` retries by itself),
//! do `cycles_per_lock` read-modify-write cycles on the storage while its lease has at least
//! `op_margin` left, release, and start over. A lease that expires, a storage operation that
//! times out, or one the storage rejects (fenced out) ends the work early; the client then
//! releases (after an expiry, once the operation it already checked has been answered).
//!
//! A holder *checks* its lease before a storage operation and *sends* it one tick later, so a
//! pause that strikes in between is Kleppmann's pause: the process resumes and sends the
//! operation it already decided on, without looking at the clock again.

use std::collections::VecDeque;

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

use super::clock::SimClock;
use super::draw::uniform;
use super::network::{Message, Payload};
use super::run_outcome::Stats;
use super::setup::WorkloadConfig;
use super::trace::TraceEntry;
use crate::actor::Actor;
use crate::event::{self, Nodes, unlock_words};
use crate::node::{NodeState, Persistence};
use crate::proto::{
    Config, Contact, Failure, Fencing, Lock, LockEvent, NodeId, NodeSet, Op, Tally, ValidityCheck,
};
use crate::storage::{Protection, StorageOp, StorageReply};
use crate::time::Millis;

/// What the world hands a client for one step.
pub(super) struct StepContext<'a> {
    /// True time.
    pub now: u64,
    /// The lock configuration every client runs.
    pub lock_config: &'a Config,
    /// The lock's TTL.
    pub ttl: Millis,
    /// The workload.
    pub workload: &'a WorkloadConfig,
    /// Messages to send, with any extra delay.
    pub outbox: &'a mut Vec<(Message, Millis)>,
    /// The trace.
    pub trace: &'a mut Vec<TraceEntry>,
    /// The run's counts, of acquisitions and releases among them.
    pub stats: &'a mut Stats,
    /// The next acquisition epoch (the fencing token a lock service would hand out).
    pub next_epoch: &'a mut u32,
    /// The separate counter node (`workload.counter_node`), with the persistence it keeps.
    pub counter: &'a mut (NodeState, Persistence),
    /// With `workload.shared_token`: the seed every client's lock generator starts from.
    pub shared_token_seed: Option<u64>,
    /// The length of a tick of true time for `workload.op_arrival_cap` (the clients' clock
    /// resolution).
    pub tick: Millis,
    /// The longest one-way delay a message may draw in this run.
    pub delay_max: Millis,
}

impl StepContext<'_> {
    /// Client `client` did `event` now, its clock reading `local`.
    fn record(&mut self, client: usize, local: Millis, event: event::Event) {
        self.trace.push(TraceEntry::told(
            self.now,
            Actor::client(client),
            Some(local),
            event,
        ));
    }

    /// Client `client`'s `lock` begins its latest round, T1 read at `local`.
    fn record_round(&mut self, client: usize, lock: &Lock<ChaCha8Rng>, local: Millis) {
        let one_at_a_time = lock.params().contact == Contact::Sequential;
        let told = event::Event::RoundBegan {
            attempt: lock.attempts(),
            t1: local.since_origin(),
            ttl: self.ttl.0,
            // A sequential round asks n1 first.
            to: if one_at_a_time {
                Nodes(NodeSet::single(NodeId(0)))
            } else {
                self.every_node()
            },
            one_at_a_time,
        };
        self.record(client, local, told);
    }

    /// Every lock node: a client sends each round to all of them (a partition loses some).
    fn every_node(&self) -> Nodes {
        Nodes(NodeSet::first(self.lock_config.node_count))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// Waiting until the client's clock reads `until` before the next acquisition.
    Idle { until: Millis },
    /// The `Lock` is running acquisition rounds.
    Acquiring,
    /// Holding: the next storage operation to issue, or the one awaited.
    Working {
        next: Next,
        awaiting: Option<Awaiting>,
        cycles_left: u32,
    },
    /// The release round is running.
    Releasing,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    Mark,
    Read,
    Write { value: u32 },
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Awaiting {
    seq: u32,
    op: StorageOp,
    sent_at: Millis,
}

/// A lock client in the simulated world.
#[derive(Clone, Debug)]
pub(super) struct SimClient {
    id: usize,
    /// The client's clock (its monotonic clock, in Redlock's terms).
    pub clock: SimClock,
    rng: ChaCha8Rng,
    lock: Option<Lock<ChaCha8Rng>>,
    phase: Stage,
    epoch: u32,
    /// The fencing token of the lease held: the round's fence, or the epoch with fencing off.
    fence: u32,
    paused_until: Option<u64>,
    inbox: VecDeque<Payload>,
    storage_seq: u32,
    /// A storage operation checked in the last active step, sent at the next one.
    pending_send: Option<StorageOp>,
    /// A checked operation that first needs a token from the counter node (taken at the
    /// next active step; the operation goes out at the one after).
    pending_token: Option<StorageOp>,
    /// Whether this lease's token has been taken from the counter node.
    token_taken: bool,
    /// Extra delay for the next storage operation (a fault).
    storage_delay: Millis,
    /// True time by which the checked operation must land (`workload.op_arrival_cap`),
    /// moved on by any pause between its check and its send.
    arrive_by: Option<u64>,
    /// Extra delay for the next lock request to a node, by node (a fault).
    request_delays: Vec<(usize, Millis)>,
    /// Acquisitions started so far (for `acquisitions_per_client`).
    acquisitions: u32,
    /// Client-clock reading before which a holder whose work is done keeps the lock.
    hold_until: Millis,
    /// Extension rounds the holder may still run before its storage work.
    extensions_left: u32,
    /// Client-clock reading at which the holder runs its next extension.
    extend_at: Millis,
    /// An extension round is running.
    extending: bool,
    /// The holder has checked its lease for a storage operation (its work began).
    worked: bool,
    /// The process died for good ([`crash`](SimClient::crash)).
    dead: bool,
    /// The trace told the end of the current lease's belief: a clock step back that brings
    /// it back must be told too ([`step_clock`](SimClient::step_clock)).
    belief_ended: bool,
    /// Whether, and until when, the client leaves its first acquisition's answers unread
    /// ([`WorkloadConfig::late_answers`]).
    late_answers: LateAnswers,
    /// Client-clock reading at which a holder whose belief ended releases, when it releases
    /// late ([`WorkloadConfig::late_release`]).
    release_at: Option<Millis>,
}

/// Where a client with [`WorkloadConfig::late_answers`] stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LateAnswers {
    /// Not this client, or done.
    Off,
    /// Waiting for its first acquisition round (or extension round) to go out.
    Armed,
    /// That round is out: it reads nothing while the run has had `acquisitions`
    /// acquisitions and its clock reads before `until`.
    Waiting { acquisitions: u32, until: Millis },
}

impl SimClient {
    /// Client `id` with its clock and its own seeded generator (tokens, retry jitter, think
    /// times). It starts idle for a think time.
    pub(super) fn new(
        id: usize,
        clock: SimClock,
        seed: u64,
        workload: &WorkloadConfig,
    ) -> SimClient {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let think = uniform(&mut rng, workload.think_min.0, workload.think_max.0);
        SimClient {
            id,
            clock,
            phase: Stage::Idle {
                until: clock.read(0) + Millis(think),
            },
            rng,
            lock: None,
            epoch: 0,
            fence: 0,
            paused_until: None,
            inbox: VecDeque::new(),
            storage_seq: 0,
            pending_send: None,
            pending_token: None,
            belief_ended: false,
            token_taken: false,
            storage_delay: Millis::ZERO,
            arrive_by: None,
            request_delays: Vec::new(),
            acquisitions: 0,
            hold_until: Millis::ZERO,
            extensions_left: 0,
            extend_at: Millis::ZERO,
            extending: false,
            worked: false,
            dead: false,
            late_answers: LateAnswers::Off,
            release_at: None,
        }
    }

    /// The client takes its first acquisition round's answers (or its first extension's)
    /// only once another client has acquired, or a TTL later
    /// ([`WorkloadConfig::late_answers`]).
    pub(super) fn take_answers_late(&mut self) {
        self.late_answers = LateAnswers::Armed;
    }

    /// The deadline of the lease the client holds, on its clock (the clock's origin when it
    /// holds none, which no caller asks: it tells a lease it holds).
    fn deadline(&self) -> Millis {
        self.lock
            .as_ref()
            .and_then(Lock::lease)
            .map_or(Millis::ZERO, |lease| lease.deadline)
    }

    /// Steps the client's clock by `by_ms` at true time `now`; returns whether the step
    /// brought back a belief whose end the trace told (its clock is back before the lease's
    /// deadline), which the caller tells after the jump.
    pub(super) fn step_clock(&mut self, now: u64, by_ms: i64) -> bool {
        let before = self.belief(now);
        self.clock.jump(now, by_ms);
        let returned = self.belief_ended && before.is_none() && self.belief(now).is_some();
        if returned {
            self.belief_ended = false;
        }
        returned
    }

    /// The epoch of the lease the client believes in at true time `now`, if it believes: it
    /// holds a lease and its own clock reads before the lease's deadline.
    pub(super) fn belief(&self, now: u64) -> Option<u32> {
        let local = self.clock.read(now);
        self.lock
            .as_ref()
            .filter(|lock| lock.believes(local))
            .map(|_| self.epoch)
    }

    /// Hands the client a message; it is handled at the client's next active step (a dead
    /// client drops it).
    pub(super) fn deliver(&mut self, payload: Payload) {
        if !self.dead {
            self.inbox.push_back(payload);
        }
    }

    /// The process dies for good at true time `now`, as the model's client crash: the core
    /// abandons its round or its lease as a release does (so the client believes nothing
    /// more), but the release it asks for is never sent, and an operation checked but not
    /// yet sent is never sent either. What the client already sent still arrives. A dead
    /// client is left alone (`false`).
    pub(super) fn crash(&mut self, now: Millis) -> bool {
        if self.dead {
            return false;
        }
        self.dead = true;
        if let Some(mut lock) = self.lock.take() {
            lock.release(self.clock.read(now.0));
        }
        self.inbox.clear();
        self.pending_send = None;
        self.pending_token = None;
        self.paused_until = None;
        true
    }

    /// Pauses the client from true time `now` until `until`. A client that is already paused
    /// is left alone (`false`): pauses do not stack, so a bound on a pause's length is a
    /// bound on how long the client stops.
    /// A pause that strikes is told with the checked op it holds back, if any.
    pub(super) fn pause(&mut self, now: u64, until: u64) -> Option<event::Event> {
        if self.paused_until.is_some_and(|current| now < current) {
            return None;
        }
        self.paused_until = Some(until);
        // A pause between a check and its send is the model's pause: it stretches the wait
        // the op may still take.
        if self.pending_send.is_some() || self.pending_token.is_some() {
            self.arrive_by = self.arrive_by.map(|by| by + (until - now));
        }
        Some(event::Event::Paused {
            op: self.pending_send.or(self.pending_token),
            until: Some(u32::try_from(until).unwrap_or(u32::MAX)),
        })
    }

    /// Whether the client has started an acquisition in this run, or died.
    pub(super) fn has_begun_or_died(&self) -> bool {
        self.acquisitions > 0 || self.dead
    }

    /// The client stays idle until [`begin_after`](SimClient::begin_after) times its start.
    pub(super) fn wait_for_first(&mut self) {
        self.phase = Stage::Idle {
            until: Millis(u64::MAX),
        };
    }

    /// A client that has not begun yet (idle, alive) begins `after` from true time `now` on
    /// its own clock rather than at its drawn think time ([`WorkloadConfig::rival_start`]).
    pub(super) fn begin_after(&mut self, now: u64, after: Millis) {
        if !self.dead && self.acquisitions == 0 && matches!(self.phase, Stage::Idle { .. }) {
            self.phase = Stage::Idle {
                until: self.clock.read(now) + after,
            };
        }
    }

    /// Delays the client's next storage operation by `extra` more.
    pub(super) fn delay_next_storage_op(&mut self, extra: Millis) {
        self.storage_delay += extra;
    }

    /// Delays the client's next lock request to `node` by `extra` more.
    pub(super) fn delay_next_request(&mut self, node: usize, extra: Millis) {
        match self.request_delays.iter_mut().find(|(n, _)| *n == node) {
            Some((_, delay)) => *delay += extra,
            None => self.request_delays.push((node, extra)),
        }
    }

    /// One step at true time `now`; a paused client does nothing.
    pub(super) fn step(&mut self, ctx: &mut StepContext<'_>) {
        if self.dead {
            return;
        }
        if let Some(until) = self.paused_until {
            if ctx.now < until {
                return;
            }
            self.paused_until = None;
            let local = self.clock.read(ctx.now);
            ctx.record(self.id, local, event::Event::Resumed);
        }
        let local = self.clock.read(ctx.now);
        if let LateAnswers::Waiting {
            acquisitions,
            until,
        } = self.late_answers
        {
            if *ctx.next_epoch == acquisitions && local < until {
                return;
            }
            self.late_answers = LateAnswers::Off;
        }
        // An operation decided on before a pause goes out first, unchecked: the process was
        // stopped between its check and its send.
        if let Some(op) = self.pending_send.take() {
            self.send_storage_op(ctx, op, local);
        }
        // Likewise a checked operation takes its token unchecked; it goes out at the next
        // step, so a pause may also fall between the `INCR` and the send.
        if let Some(op) = self.pending_token.take() {
            let (counter, persistence) = &mut *ctx.counter;
            let token = u32::try_from(counter.incr(*persistence))
                .expect("a run's counters stay far below u32::MAX");
            self.fence = token;
            self.token_taken = true;
            let told = event::Event::TokenTaken {
                client: Actor::client(self.id),
                token: u64::from(token),
                stale: !self.lock.as_ref().is_some_and(|lock| lock.believes(local)),
            };
            let from = Actor::client(self.id);
            let entry = TraceEntry::told_from(ctx.now, Actor::Counter, from, None, told);
            ctx.trace.push(entry);
            self.pending_send = Some(with_fence(op, token));
            return;
        }
        let attempts = self.lock.as_ref().map(Lock::attempts);
        while let Some(payload) = self.inbox.pop_front() {
            self.handle(ctx, payload, local);
        }
        if let Some(lock) = &mut self.lock
            && lock.poll_timeout().is_some_and(|due| due <= local)
        {
            lock.handle_timeout(local);
        }
        self.handle_events(ctx, local);
        self.record_retry(ctx, attempts, local);
        self.act(ctx, local);
        self.drain_commands(ctx);
    }

    fn handle(&mut self, ctx: &mut StepContext<'_>, payload: Payload, local: Millis) {
        match payload {
            Payload::Reply {
                round,
                node,
                reply,
                counter,
                counts,
            } => {
                if let Some(lock) = &mut self.lock {
                    let answer = if counts {
                        crate::proto::Answer::voting(reply)
                    } else {
                        crate::proto::Answer::guarded(reply)
                    };
                    let answer = answer.with_counter(counter);
                    lock.handle_reply(round, node, answer, local);
                }
                // Events are drained after the whole inbox; a round decided by this reply
                // reports at the same tick.
            }
            Payload::StorageReply { seq, reply } => {
                self.handle_storage_reply(ctx, seq, reply, local)
            }
            Payload::Command(_) | Payload::StorageOp { .. } => {}
        }
    }

    fn handle_storage_reply(
        &mut self,
        ctx: &mut StepContext<'_>,
        seq: u32,
        reply: StorageReply,
        local: Millis,
    ) {
        let Stage::Working {
            next,
            awaiting: Some(awaiting),
            cycles_left,
        } = self.phase
        else {
            return;
        };
        if awaiting.seq != seq {
            return;
        }
        let (next, cycles_left) = match (awaiting.op, reply) {
            (_, StorageReply::Rejected) => {
                // Fenced out: our lease is stale; stop working.
                self.begin_release(ctx, local);
                return;
            }
            (StorageOp::Mark { .. }, _) => (Next::Read, cycles_left),
            (StorageOp::Read { .. }, StorageReply::Value(value)) => (
                Next::Write {
                    value: value.wrapping_add(1),
                },
                cycles_left,
            ),
            (StorageOp::Read { .. }, StorageReply::Done) => (next, cycles_left),
            (StorageOp::Write { .. }, _) => {
                let left = cycles_left.saturating_sub(1);
                (if left == 0 { Next::Done } else { Next::Read }, left)
            }
        };
        self.phase = Stage::Working {
            next,
            awaiting: None,
            cycles_left,
        };
    }

    fn handle_events(&mut self, ctx: &mut StepContext<'_>, local: Millis) {
        let client = self.id;
        // Each event is produced by a handler call above; the queue is finite.
        while let Some(event) = self.lock.as_mut().and_then(Lock::poll_event) {
            match event {
                LockEvent::Acquired {
                    validity,
                    deadline,
                    nodes,
                    fence,
                    ..
                } => self.on_acquired(ctx, local, (validity, deadline, nodes), fence),
                LockEvent::Retrying { failure, .. } => {
                    ctx.record(client, local, not_acquired(local, failure, false));
                }
                LockEvent::NotAcquired { failure, .. } => {
                    ctx.stats.not_acquired += 1;
                    // The simulator's client thinks and starts a new acquisition: it gives up
                    // this one, not the lock.
                    ctx.record(client, local, not_acquired(local, failure, false));
                    self.go_idle(ctx, local);
                }
                LockEvent::Expired { .. } => self.on_expired(ctx, local),
                LockEvent::Released { .. } => {
                    ctx.stats.releases += 1;
                    self.go_idle(ctx, local);
                }
                LockEvent::Asking { node, silent } => {
                    let told = event::Event::NodeAsked {
                        node: Actor::node(node.index()),
                        ttl: ctx.ttl.0,
                        silent: silent.map(|n| Actor::node(n.index())),
                    };
                    ctx.record(client, local, told);
                }
                LockEvent::Extended {
                    deadline, nodes, ..
                } => {
                    let told = event::Event::Extended {
                        on: Nodes(nodes.applied),
                        t2: local.since_origin(),
                        believes_until: deadline.since_origin(),
                    };
                    ctx.record(client, local, told);
                    self.extension_done(ctx, local);
                }
                LockEvent::NotExtended { .. } => {
                    let told = event::Event::ExtensionFailed {
                        t2: local.since_origin(),
                        believes_until: self.deadline().since_origin(),
                    };
                    ctx.record(client, local, told);
                    self.extension_done(ctx, local);
                }
            }
        }
    }

    /// The lock was acquired (`lease`: its validity, deadline and the nodes that applied):
    /// a new epoch, a drawn hold, and the storage work to do.
    fn on_acquired(
        &mut self,
        ctx: &mut StepContext<'_>,
        local: Millis,
        lease: (Millis, Millis, Tally),
        fence: Option<u64>,
    ) {
        let (validity, deadline, nodes) = lease;
        self.belief_ended = false;
        *ctx.next_epoch += 1;
        ctx.stats.acquisitions += 1;
        self.epoch = *ctx.next_epoch;
        self.fence = fence.map_or(self.epoch, |f| {
            u32::try_from(f).expect("a run's counters stay far below u32::MAX")
        });
        let told = event::Event::Acquired {
            on: Nodes(nodes.applied),
            t2: local.since_origin(),
            validity: validity.0,
            believes_until: deadline.since_origin(),
            fence,
            by_write_back: ctx.lock_config.fencing == Fencing::WriteBack,
            // With no counter on the lock nodes nor a counter node, the token is the epoch, an
            // ideal counter's.
            ideal_token: (fence.is_none() && !ctx.workload.counter_node).then_some(self.fence),
        };
        ctx.record(self.id, local, told);
        let first = match ctx.workload.protection {
            Protection::RandomTokenCas => Next::Mark,
            _ => Next::Read,
        };
        let hold = uniform(&mut self.rng, 0, ctx.workload.hold_max.0);
        self.hold_until = local + Millis(hold);
        self.extensions_left = ctx.workload.extensions;
        self.extending = false;
        self.worked = false;
        self.token_taken = false;
        if self.extensions_left > 0 {
            self.extend_at = local + Millis(uniform(&mut self.rng, 0, ctx.ttl.0));
        }
        let cycles = ctx.workload.cycles_per_lock;
        self.phase = Stage::Working {
            next: if cycles == 0 { Next::Done } else { first },
            awaiting: None,
            cycles_left: cycles,
        };
    }

    /// The lease's deadline passed on the client's clock.
    fn on_expired(&mut self, ctx: &mut StepContext<'_>, local: Millis) {
        ctx.record(self.id, local, event::Event::BeliefEnded);
        self.belief_ended = true;
        // A holder with an op between its check and its landing releases once
        // that op has landed, as the model's holder, whose only move with an op
        // pending is to apply it: an unlock sent first could let a rival acquire
        // and reach the storage before the op the holder still has on its way.
        let in_flight = self.pending_send.is_some()
            || self.pending_token.is_some()
            || matches!(
                self.phase,
                Stage::Working {
                    awaiting: Some(_),
                    ..
                }
            );
        if matches!(self.phase, Stage::Working { .. }) && !in_flight {
            match ctx.workload.late_release {
                // The run's first holder releases late: see `WorkloadConfig::late_release`.
                Some(span) if self.epoch == 1 => self.release_at = Some(local + span),
                _ => self.begin_release(ctx, local),
            }
        }
    }

    /// An extension round ended: the next one, if any, comes within a TTL.
    fn extension_done(&mut self, ctx: &mut StepContext<'_>, local: Millis) {
        self.extending = false;
        if self.extensions_left > 0 {
            self.extend_at = local + Millis(uniform(&mut self.rng, 0, ctx.ttl.0));
        }
    }

    /// Whether the holder extends (or waits to) before anything else: as in the model, a
    /// holder extends only before its storage work starts.
    fn extends_first(&self) -> bool {
        self.extending || (self.extensions_left > 0 && !self.worked)
    }

    fn act(&mut self, ctx: &mut StepContext<'_>, local: Millis) {
        if let Some(at) = self.release_at
            && matches!(self.phase, Stage::Working { .. })
        {
            if local >= at {
                self.release_at = None;
                self.begin_release(ctx, local);
            }
            return;
        }
        if matches!(self.phase, Stage::Working { .. })
            && self.extends_first()
            && self.extension_takes_the_step(ctx, local)
        {
            return;
        }
        match self.phase {
            Stage::Idle { until }
                if local >= until
                    && ctx
                        .workload
                        .acquisitions_per_client
                        .is_none_or(|limit| self.acquisitions < limit) =>
            {
                self.begin_acquiring(ctx, local);
            }
            Stage::Working {
                awaiting: Some(awaiting),
                ..
            } if local >= awaiting.sent_at + ctx.workload.storage_timeout => {
                self.begin_release(ctx, local);
            }
            Stage::Working {
                next: Next::Done,
                awaiting: None,
                ..
            } if local < self.hold_until => {}
            Stage::Working {
                next,
                awaiting: None,
                ..
            } if self.pending_send.is_none() && self.pending_token.is_none() => {
                self.check_and_send(ctx, local, next);
            }
            _ => {}
        }
    }

    /// Begins an extension when it is time; whether extending (or waiting for the hold to
    /// end) takes this step.
    fn extension_takes_the_step(&mut self, ctx: &mut StepContext<'_>, local: Millis) -> bool {
        if !self.extending && local >= self.extend_at {
            // Past its deadline the core refuses at once with `NotExtended`; a usage error
            // (not holding) cannot happen in the working phase.
            if let Some(lock) = &mut self.lock
                && lock.extend(local).is_ok()
            {
                self.extensions_left -= 1;
                self.extending = true;
                let told = event::Event::ExtensionBegan {
                    t1: local.since_origin(),
                    to: ctx.every_node(),
                };
                ctx.record(self.id, local, told);
            }
        }
        // A hold without storage work may still end the lock meanwhile.
        let idle_hold = matches!(
            self.phase,
            Stage::Working {
                next: Next::Done,
                ..
            }
        );
        !idle_hold || self.extending || local < self.hold_until
    }

    /// Tells the round a retry began in this step, after the failed round it follows
    /// (`attempts`: how many rounds the lock had begun before the step).
    fn record_retry(&self, ctx: &mut StepContext<'_>, attempts: Option<u32>, local: Millis) {
        let Some(lock) = &self.lock else {
            return;
        };
        if attempts.is_some_and(|before| lock.attempts() > before) {
            ctx.record_round(self.id, lock, local);
        }
    }

    /// An idle client's next acquisition.
    fn begin_acquiring(&mut self, ctx: &mut StepContext<'_>, local: Millis) {
        // The configuration was validated before the run, so this cannot fail; a
        // failure would leave the client idle rather than panic.
        // With a shared token every client starts its generator from the same seed
        // (a random source seeded alike in every process), so their n-th rounds draw
        // one token value. Its own draw is made anyway, so later draws do not shift.
        let own = self.rng.next_u64();
        let lock_rng = ChaCha8Rng::seed_from_u64(ctx.shared_token_seed.unwrap_or(own));
        if let Ok(lock) = Lock::acquire(ctx.lock_config, ctx.ttl, lock_rng, local) {
            ctx.record_round(self.id, &lock, local);
            self.lock = Some(lock);
            self.phase = Stage::Acquiring;
            self.acquisitions += 1;
        }
    }

    /// The storage op that `next` names, if any.
    fn storage_op(&self, next: Next) -> Option<StorageOp> {
        match next {
            Next::Done => None,
            Next::Mark => Some(StorageOp::Mark { epoch: self.epoch }),
            Next::Read => Some(StorageOp::Read {
                epoch: self.epoch,
                fence: self.fence,
            }),
            Next::Write { value } => Some(StorageOp::Write {
                epoch: self.epoch,
                fence: self.fence,
                value,
            }),
        }
    }

    /// The holder's next storage op: it checks its lease (or waits to), then sends the op, or
    /// releases when the check fails or there is nothing left to do.
    fn check_and_send(&mut self, ctx: &mut StepContext<'_>, local: Millis, next: Next) {
        let op = self.storage_op(next);
        let passes = |at: Millis| {
            self.lock
                .as_ref()
                .and_then(Lock::lease)
                .is_some_and(|lease| {
                    lease.believes(at) && lease.deadline - at >= ctx.workload.op_margin
                })
        };
        // A late checker waits while the clock's next reading would still pass: the
        // check itself is the core's rule, so waiting never makes one pass that the
        // rule refuses.
        let next_reading = local + self.clock.resolution();
        if op.is_some() && ctx.workload.late_check && self.epoch == 1 && passes(next_reading) {
            return;
        }
        // The op first takes a token from the counter node: one step more.
        let needs_token = ctx.workload.counter_node
            && !self.token_taken
            && !matches!(op, Some(StorageOp::Mark { .. }));
        // A check whose op might not land by the cap defers to the start of the next
        // tick of true time, where it checks again with the clock then: the model's
        // holder may wait before any check, and an op checked early enough in its tick
        // lands in the tick the model lets it land in. A cap that no check fits (the
        // bridge grows the margin so that one at the start of a tick does) defers
        // nothing.
        if op.is_some()
            && let Some(cap) = ctx.workload.op_arrival_cap
        {
            let latency = if needs_token { 2 } else { 1 } + ctx.delay_max.0;
            let tick = ctx.tick.0.max(1);
            let offset = ctx.now % tick;
            if latency <= cap.0 && offset + latency > cap.0 {
                return;
            }
        }
        let margin_left = passes(local);
        match op {
            Some(op) if margin_left => {
                let told = event::Event::LeaseChecked {
                    clock: local.since_origin(),
                    deadline: self.deadline().since_origin(),
                    op: Some(op),
                };
                ctx.record(self.id, local, told);
                // The op lands by the cap, counted from the start of the check's tick.
                self.arrive_by = ctx.workload.op_arrival_cap.map(|cap| {
                    let tick = ctx.tick.0.max(1);
                    ctx.now / tick * tick + cap.0
                });
                if needs_token {
                    self.pending_token = Some(op);
                } else {
                    self.pending_send = Some(op);
                }
                self.worked = true;
            }
            _ => self.begin_release(ctx, local),
        }
    }

    fn send_storage_op(&mut self, ctx: &mut StepContext<'_>, op: StorageOp, local: Millis) {
        self.storage_seq = self.storage_seq.wrapping_add(1);
        let seq = self.storage_seq;
        let mut extra = std::mem::take(&mut self.storage_delay);
        // A storage-delay fault is cut short so that even the longest network delay lands
        // the op by its cap; the cap leaves room for the natural latency (the bridge's margin).
        if let Some(by) = self.arrive_by.take() {
            let room = by.saturating_sub(ctx.now + ctx.delay_max.0);
            extra = extra.min(Millis(room));
        }
        ctx.outbox.push((
            Message {
                from: Actor::client(self.id),
                to: Actor::Storage,
                payload: Payload::StorageOp { seq, op },
            },
            extra,
        ));
        if let Stage::Working { awaiting, .. } = &mut self.phase {
            *awaiting = Some(Awaiting {
                seq,
                op,
                sent_at: local,
            });
        }
    }

    fn begin_release(&mut self, ctx: &mut StepContext<'_>, local: Millis) {
        if let Some(lock) = &mut self.lock {
            lock.release(local);
            let told = event::Event::Released {
                how: unlock_words(ctx.lock_config.unlock),
                on: ctx.every_node(),
                deleted: Vec::new(),
                freed: Nodes(NodeSet::EMPTY),
            };
            ctx.record(self.id, local, told);
        }
        self.phase = Stage::Releasing;
    }

    fn go_idle(&mut self, ctx: &mut StepContext<'_>, local: Millis) {
        let workload = ctx.workload;
        let think = uniform(&mut self.rng, workload.think_min.0, workload.think_max.0);
        // A failed acquisition queues its release to all N nodes together with the event that
        // ends it: send those before dropping the lock.
        self.drain_commands(ctx);
        self.lock = None;
        self.phase = Stage::Idle {
            until: local + Millis(think),
        };
    }

    fn drain_commands(&mut self, ctx: &mut StepContext<'_>) {
        let Some(lock) = &mut self.lock else {
            return;
        };
        while let Some(command) = lock.poll_command() {
            // The round whose answers wait: the first acquisition, or with extensions
            // counted unchecked the first extension (see `WorkloadConfig::late_answers`).
            let late_round = if ctx.lock_config.validity_check == ValidityCheck::AcquisitionOnly {
                matches!(command.op, Op::PExpireIfEq { .. })
            } else {
                matches!(command.op, Op::SetNxPx { .. })
            };
            if self.late_answers == LateAnswers::Armed && late_round {
                self.late_answers = LateAnswers::Waiting {
                    acquisitions: *ctx.next_epoch,
                    until: self.clock.read(ctx.now) + ctx.ttl,
                };
            }
            let node = command.node.index();
            let extra = match self.request_delays.iter().position(|(n, _)| *n == node) {
                Some(index) => self.request_delays.swap_remove(index).1,
                None => Millis::ZERO,
            };
            ctx.outbox.push((
                Message {
                    from: Actor::client(self.id),
                    to: Actor::node(node),
                    payload: Payload::Command(command),
                },
                extra,
            ));
        }
    }
}

/// `op` carrying the token `fence` (taken from the counter node after the op was checked).
fn with_fence(op: StorageOp, fence: u32) -> StorageOp {
    match op {
        StorageOp::Read { epoch, .. } => StorageOp::Read { epoch, fence },
        StorageOp::Write { epoch, value, .. } => StorageOp::Write {
            epoch,
            fence,
            value,
        },
        StorageOp::Mark { .. } => op,
    }
}
/// A round that failed, told as the model checker tells it: the core unlocks every node it
/// reaches whether or not it retries; `gives_up`: it never tries again.
fn not_acquired(local: Millis, failure: Failure, gives_up: bool) -> event::Event {
    event::Event::NotAcquired {
        t2: local.since_origin(),
        gives_up,
        failure,
        deleted: Vec::new(),
        freed: Nodes(NodeSet::EMPTY),
        unlock_travels: false,
    }
}
