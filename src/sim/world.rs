//! The world: true time, the processes, the network and the storage, stepped one tick
//! (one millisecond) at a time.
//!
//! Within a tick the order is fixed: scheduled faults; node housekeeping (restarts, fsync,
//! expiry); delivery of every message due, in `(arrival, send order)`; each client's step, in
//! index order; then the belief check. Every message takes at least one tick, so what a tick
//! sends is delivered in a later tick and every tick ends.

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

use super::client::{SimClient, StepContext};
use super::clock::SimClock;
use super::draw::uniform;
use super::fault::{Aim, AimedFault, Anchor, Fault, FaultBudget, FaultPlan, ScheduledFault};
use super::judge::{Believer, Checker, Violation};
use super::network::{Message, Network, Payload, Sent};
use super::run_outcome::{Outcome, Stats, SwarmRun};
use super::server::SimNode;
use super::setup::WorkloadConfig;
use super::setup::{NetworkConfig, SimConfig, SimConfigError, Swarm};
use super::trace::{TraceEntry, TraceEvent};
use crate::actor::{Actor, Process};
use crate::event::{Event, Nodes, persistence_words};
use crate::fault::CrashWhen;
use crate::node::{Availability, NodeReply, NodeState, Persistence, Unavailable};
use crate::proto::{Command, Config, Fencing, NodeId, NodeSet, Op, Reply};
use crate::storage::{Comparison, Storage, StorageOp, StorageReply};
use crate::time::Millis;

/// The generator streams of a run: one seed, separate streams, so that (say) an explicit
/// schedule that replaces a generated one does not shift the network's draws.
const SETUP_STREAM: u64 = 0;
const NETWORK_STREAM: u64 = 1;
const FAULT_STREAM: u64 = 2;
const SWARM_STREAM: u64 = 3;
/// Swarm knobs added later, on a stream of their own so that the draws of [`SWARM_STREAM`]
/// (and the runs they reach) stay as they were.
const KNOB_STREAM: u64 = 4;
/// Which replica a failover promotes, when the master has several: a stream of its own, so
/// that one-replica runs (which draw nothing here) replay as before.
const REPLICA_STREAM: u64 = 5;

fn stream(seed: u64, stream: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream);
    rng
}

/// The lock, the workload and the network as this run drew them: a swarm run draws its
/// round timeout, think time, late check, rival start, late answers, late release and message
/// delay.
fn as_drawn(
    config: &SimConfig,
    swarm: Option<&SwarmRun>,
) -> (Config, WorkloadConfig, NetworkConfig) {
    let mut lock_config = config.lock;
    let mut workload = config.workload;
    let mut network = config.network;
    if let Some(drawn) = swarm {
        lock_config.round_timeout = drawn.round_timeout;
        workload.think_max = drawn.think_max;
        workload.late_check = drawn.late_check;
        workload.rival_start = drawn.rival_start;
        workload.late_answers = drawn.late_answers;
        workload.late_release = drawn.late_release;
        network.delay_max = drawn.delay_max;
    }
    (lock_config, workload, network)
}

/// The nodes and the clients, each with its clock drawn from `setup` (nodes first, then
/// clients with their generators' seeds).
fn draw_processes(
    config: &SimConfig,
    setup: &mut ChaCha8Rng,
    swarm: bool,
    workload: &WorkloadConfig,
) -> (Vec<SimNode>, Vec<SimClient>) {
    let node_rho = u64::from(config.clocks.rate_error_ppm_max);
    let client_rho = u64::from(config.clocks.client_rate_error_ppm());
    // A swarm run puts every clock at an edge of its range half the time: the clock
    // errors that break safety are the largest.
    let extreme = swarm && uniform(setup, 0, 1) == 1;
    let clock = |setup: &mut ChaCha8Rng, rho: u64| {
        let offset = uniform(setup, 0, config.clocks.offset_max.0);
        // A rate in [−ρ, +ρ]: ρ is at most 500 000, so both casts are exact.
        let drawn = uniform(setup, 0, 2 * rho);
        let drawn = match (extreme, drawn > rho) {
            (false, _) => drawn,
            (true, true) => 2 * rho,
            (true, false) => 0,
        };
        let rate = drawn as i64 - rho as i64;
        SimClock::new(offset as i64, rate as i32)
    };
    let nodes = (0..config.nodes())
        .map(|index| SimNode::new(index, clock(setup, node_rho), config.crash))
        .collect();
    let clients: Vec<SimClient> = (0..config.clients)
        .map(|id| {
            let clock = clock(setup, client_rho).with_resolution(config.client_clock_resolution);
            SimClient::new(id, clock, setup.next_u64(), workload)
        })
        .collect();
    (nodes, clients)
}

/// Runs one simulation of `config` from `seed`. The same seed and configuration give the same
/// [`Outcome`], trace included.
pub fn run(config: &SimConfig, seed: u64) -> Result<Outcome, SimConfigError> {
    config.validate()?;
    let mut swarm = None;
    let schedule = match &config.faults {
        FaultPlan::Generated(budget) => match config.swarm {
            Some(knobs) => {
                let (timed, drawn) = draw_swarm_run(config, seed, budget, knobs);
                swarm = Some(drawn);
                timed
            }
            None => budget.generate(
                &mut stream(seed, FAULT_STREAM),
                config.duration,
                config.nodes(),
                config.clients,
            ),
        },
        FaultPlan::Explicit(schedule) => {
            let mut schedule = schedule.clone();
            schedule.sort_by_key(|fault| fault.at);
            schedule
        }
    };
    let mut world = World::new(config, seed, schedule, swarm);
    world.run();
    Ok(world.finish(seed))
}

/// A swarm run's knobs and faults, drawn from their streams of `seed`; its timed faults
/// first.
fn draw_swarm_run(
    config: &SimConfig,
    seed: u64,
    budget: &FaultBudget,
    knobs: Swarm,
) -> (Vec<ScheduledFault>, SwarmRun) {
    let mut rng = stream(seed, SWARM_STREAM);
    // A third of the runs keep the configured value (the model's own), a third take
    // the widest, a third draw one between: the rest only widen the search.
    let mut knob = |lo: Millis, hi: Millis| {
        let drawn = Millis(uniform(&mut rng, lo.0, hi.0));
        match uniform(&mut rng, 0, 2) {
            0 => lo,
            1 => hi,
            _ => drawn,
        }
    };
    let round_timeout = knob(config.lock.round_timeout, knobs.round_timeout_max);
    let think_max = knob(config.workload.think_min, knobs.think_max);
    // Half the runs have the fastest network: every message takes the shortest
    // delay, as close as the simulator comes to the model's instant messages.
    let delay_max = if uniform(&mut rng, 0, 1) == 0 {
        config.network.delay_max
    } else {
        config.network.delay_min
    };
    // Drawn after the knobs above, so that those draws stay as they were. Half the
    // runs have their first holder check as late as its margin allows, and half
    // aim the other clients' start at the moment the first holder's keys go.
    let late_check = uniform(&mut rng, 0, 1) == 1;
    let rival_start = (uniform(&mut rng, 0, 1) == 1).then(|| {
        let edge = knobs.rival_starts[uniform(&mut rng, 0, 2) as usize];
        // Half the time exactly at the edge, else a tick or two after it (a
        // message late, a crash a little later).
        let ticks = match uniform(&mut rng, 0, 1) {
            0 => 0,
            _ => uniform(&mut rng, 1, 2),
        };
        edge + Millis(config.client_clock_resolution.0 * ticks)
    });
    let faults = budget.draw_swarm(&mut stream(seed, FAULT_STREAM), swarm_aim(config));
    let (late_answers, late_release) = draw_late_knobs(config, seed, rival_start);
    let timed = faults.timed.clone();
    let drawn = SwarmRun {
        round_timeout,
        think_max,
        delay_max,
        late_check,
        rival_start,
        late_answers,
        late_release,
        faults,
    };
    (timed, drawn)
}

/// The knobs that hold a client's answers or its release back, from their own stream of
/// `seed` (`rival_start`: when the rivals begin, if aimed).
fn draw_late_knobs(
    config: &SimConfig,
    seed: u64,
    rival_start: Option<Millis>,
) -> (bool, Option<Millis>) {
    // With a fencing write-back, three in four runs whose rivals begin before the
    // first holder's keys expire (as a forward jump drops one) have the first
    // client take that round's answers only after a rival acquired. Any other
    // rival would rarely acquire in time, and the wait would only cost the first
    // client its lease.
    let mut knob_rng = stream(seed, KNOB_STREAM);
    // With extensions counted unchecked, half the runs have the first client take its first
    // extension's answers late instead (a draw only such worlds make, so others replay as
    // they were).
    let late_answers = (config.lock.fencing == crate::proto::Fencing::WriteBack
        && rival_start.is_some_and(|after| after < config.ttl)
        && uniform(&mut knob_rng, 0, 3) > 0)
        || (config.lock.validity_check == crate::proto::ValidityCheck::AcquisitionOnly
            && config.workload.extensions > 0
            && uniform(&mut knob_rng, 0, 1) == 1);
    // With plain DEL, half the runs have their first holder release up to a TTL after
    // its belief ended (drawn after `late_answers`, whose draws stay as they were).
    let late_release = (config.lock.unlock == crate::proto::UnlockMode::PlainDel
        && uniform(&mut knob_rng, 0, 1) == 1)
        .then(|| Millis(uniform(&mut knob_rng, 0, config.ttl.0)));
    (late_answers, late_release)
}

/// The facts a swarm run's faults are aimed with.
fn swarm_aim(config: &SimConfig) -> Aim {
    Aim {
        duration: config.duration,
        // The separate counter node is one more target for node faults.
        nodes: config.nodes() + usize::from(config.workload.counter_node),
        clients: config.clients,
        ttl: config.ttl,
        // A check per storage op: a read and a write per cycle, and a mark
        // first under compare-and-set.
        checks: 2 * config.workload.cycles_per_lock
            + u32::from(
                config.workload.cycles_per_lock > 0
                    && config.workload.protection == crate::storage::Protection::RandomTokenCas,
            ),
        failover_node: config.crash.failover.map(|f| f.node),
    }
}

struct World<'a> {
    config: &'a SimConfig,
    lock_config: Config,
    /// The workload as this run drew it (a swarm run draws its think time).
    workload: WorkloadConfig,
    /// What a swarm run drew, and its aimed faults not yet armed.
    swarm: Option<SwarmRun>,
    waiting: Vec<AimedFault>,
    /// How often each anchor has occurred, to arm the `nth`.
    anchors_seen: Vec<(Anchor, u32)>,
    /// The first trace entry not yet looked at for anchors.
    anchor_cursor: usize,
    /// Delayed lock requests not yet delivered: (client, node, true time the hold ends). Such
    /// a request that arrives while its node is not serving or holds a live key waits, tick by
    /// tick, until the node serves with no key or the hold ends, so it lands right after a
    /// key expired early or a restart delay ended: the window a late `SET` needs.
    holds: Vec<(usize, usize, u64)>,
    network_rng: ChaCha8Rng,
    /// Draws the replica a failover promotes ([`REPLICA_STREAM`]).
    replica_rng: ChaCha8Rng,
    nodes: Vec<SimNode>,
    clients: Vec<SimClient>,
    network: Network,
    storage: Storage,
    schedule: Vec<ScheduledFault>,
    next_fault: usize,
    trace: Vec<TraceEntry>,
    checker: Checker,
    violations: Vec<Violation>,
    next_epoch: u32,
    /// The separate counter node of `workload.counter_node`, with its persistence.
    counter: (NodeState, Persistence),
    /// With `workload.shared_token`, the one seed every client's lock generator starts from.
    shared_token_seed: Option<u64>,
    outbox: Vec<(Message, Millis)>,
    /// With `workload.storage_apply_gap`: ops the storage has checked and not yet applied, as
    /// (true time it applies the op, the op's message, its sequence number, the op).
    checked_ops: Vec<(u64, Message, u32, StorageOp)>,
    believers: Vec<Believer>,
    /// With `workload.rival_start`: the client that begins first (the focused client of a
    /// focused run, else c1), the others waiting for it.
    first_client: usize,
    /// With `workload.rival_start`: the clients not yet begun have been timed from the first
    /// start.
    rivals_timed: bool,
    stats: Stats,
    now: u64,
}

impl<'a> World<'a> {
    fn new(
        config: &'a SimConfig,
        seed: u64,
        schedule: Vec<ScheduledFault>,
        swarm: Option<SwarmRun>,
    ) -> World<'a> {
        let mut setup = stream(seed, SETUP_STREAM);
        let (lock_config, workload, network) = as_drawn(config, swarm.as_ref());
        let (nodes, mut clients) = draw_processes(config, &mut setup, swarm.is_some(), &workload);
        let first_client = swarm
            .as_ref()
            .and_then(|drawn| drawn.faults.focused_client)
            .unwrap_or(0);
        if workload.late_answers {
            clients[first_client].take_answers_late();
        }
        if workload.rival_start.is_some() {
            for (id, client) in clients.iter_mut().enumerate() {
                if id != first_client {
                    client.wait_for_first();
                }
            }
        }
        // Drawn after everything else, so that worlds with unique tokens draw as before.
        let shared_token_seed = workload.shared_token.then(|| setup.next_u64());
        World {
            config,
            lock_config,
            workload,
            waiting: swarm
                .as_ref()
                .map_or_else(Vec::new, |drawn| drawn.faults.aimed.clone()),
            swarm,
            anchors_seen: Vec::new(),
            anchor_cursor: 0,
            holds: Vec::new(),
            network_rng: stream(seed, NETWORK_STREAM),
            replica_rng: stream(seed, REPLICA_STREAM),
            nodes,
            clients,
            network: Network::new(network),
            storage: Storage::default(),
            schedule,
            next_fault: 0,
            trace: Vec::new(),
            checker: Checker::default(),
            violations: Vec::new(),
            next_epoch: 0,
            counter: (NodeState::new(), config.crash.persistence),
            shared_token_seed,
            outbox: Vec::new(),
            checked_ops: Vec::new(),
            believers: Vec::new(),
            first_client,
            rivals_timed: false,
            stats: Stats::default(),
            now: 0,
        }
    }

    fn record(&mut self, event: TraceEvent) {
        self.trace.push(TraceEntry {
            at: Millis(self.now),
            event,
        });
    }

    /// `actor` did `event` now, reading `clock`.
    fn record_moment(&mut self, actor: Actor, clock: Option<Millis>, event: Event) {
        self.trace
            .push(TraceEntry::told(self.now, actor, clock, event));
    }

    /// Node `node` did `event` now, on its own clock.
    fn record_node(&mut self, node: usize, event: Event) {
        let clock = self.nodes[node].clock.read(self.now);
        self.record_moment(Actor::node(node), Some(clock), event);
    }

    /// Client `client` did `event` now, on its own clock.
    fn record_client(&mut self, client: usize, event: Event) {
        let clock = self.clients[client].clock.read(self.now);
        self.record_moment(Actor::client(client), Some(clock), event);
    }

    /// The main loop, bounded by the configured duration.
    fn run(&mut self) {
        for now in 0..self.config.duration.0 {
            self.now = now;
            self.apply_faults();
            self.tick_nodes();
            self.apply_checked_ops();
            self.deliver();
            self.step_clients();
            self.check_beliefs();
            self.arm_aimed_faults();
            if self.config.stop_on_violation && !self.violations.is_empty() {
                break;
            }
        }
    }

    /// Looks at this tick's events for the anchors of aimed faults, and schedules each fault
    /// whose anchor occurred for the `nth` time, `after` it (a later tick, so it never
    /// interrupts the step that raised the anchor).
    fn arm_aimed_faults(&mut self) {
        if self.waiting.is_empty() {
            self.anchor_cursor = self.trace.len();
            return;
        }
        let from = self.anchor_cursor;
        self.anchor_cursor = self.trace.len();
        for index in from..self.trace.len() {
            let TraceEvent::Moment(moment) = &self.trace[index].event else {
                continue;
            };
            let anchor = match (moment.actor, &moment.event) {
                (Actor::Node(node), Event::KeySet { .. }) => Anchor::KeySet {
                    node: usize::from(node),
                },
                // The separate counter node's state is its counter: a fault aimed at it
                // strikes after it handed out a token.
                (_, Event::TokenTaken { .. }) => Anchor::KeySet {
                    node: self.nodes.len(),
                },
                (Actor::Client(client), event) => match event {
                    // An acquisition starts; a retry's round is not an anchor.
                    Event::RoundBegan { attempt: 1, .. } => Anchor::Started {
                        client: usize::from(client),
                    },
                    Event::Acquired { .. } => Anchor::Acquired {
                        client: usize::from(client),
                    },
                    Event::LeaseChecked { op: Some(_), .. } => Anchor::Checked {
                        client: usize::from(client),
                    },
                    _ => continue,
                },
                _ => continue,
            };
            let seen = match self.anchors_seen.iter_mut().find(|(a, _)| *a == anchor) {
                Some((_, count)) => {
                    *count += 1;
                    *count
                }
                None => {
                    self.anchors_seen.push((anchor, 1));
                    1
                }
            };
            let now = self.now;
            let mut armed = Vec::new();
            self.waiting.retain(|aimed| {
                let due = aimed.anchor == anchor && aimed.nth == seen;
                if due {
                    armed.push(ScheduledFault {
                        at: Millis(now + aimed.after.0.max(1)),
                        fault: aimed.fault,
                    });
                }
                !due
            });
            for fault in armed {
                // After every fault already due at that time, so ties keep the arming order.
                let pending = &self.schedule[self.next_fault..];
                let at = self.next_fault + pending.partition_point(|f| f.at <= fault.at);
                self.schedule.insert(at, fault);
            }
        }
    }

    fn apply_faults(&mut self) {
        while let Some(scheduled) = self.schedule.get(self.next_fault) {
            if scheduled.at.0 > self.now {
                break;
            }
            self.next_fault += 1;
            let fault = scheduled.fault;
            let applied = self.apply_fault(fault);
            if applied {
                self.stats.faults_applied += 1;
            } else {
                self.stats.faults_ignored += 1;
                self.record(TraceEvent::FaultIgnored(fault));
            }
        }
    }

    /// Applies one fault and tells it; `false` when it does not apply in the current state.
    fn apply_fault(&mut self, fault: Fault) -> bool {
        let now = self.now;
        match fault {
            Fault::ClockJump { process, by_ms } => self.jump_clock(process, by_ms),
            // One index past the lock nodes is the separate counter node: it restarts at once
            // and keeps what its persistence keeps (a restart delay protects leases, not
            // counters).
            Fault::Crash { node, .. } if node == self.nodes.len() && self.workload.counter_node => {
                self.crash_counter()
            }
            Fault::Crash { node, downtime } => self.crash_node(node, downtime),
            Fault::Failover => self.fail_over(),
            Fault::CrashClient { client, when } => self.crash_client(client, when),
            Fault::Pause { client, duration } => self.pause(client, duration),
            Fault::Isolate { node, duration } => {
                let isolated = self.nodes.get_mut(node).map(|n| n.isolate(now, duration));
                if isolated.is_some() {
                    let ticks = duration.0;
                    self.record_node(node, Event::Isolated { ticks });
                }
                isolated.is_some()
            }
            Fault::DelayStorageOp { client, extra } => {
                let delayed = self
                    .clients
                    .get_mut(client)
                    .map(|c| c.delay_next_storage_op(extra));
                if delayed.is_some() {
                    self.record_client(client, Event::StorageOpDelayed { ticks: extra.0 });
                }
                delayed.is_some()
            }
            Fault::DelayRequest {
                client,
                node,
                extra,
            } => self.delay_request(client, node, extra),
        }
    }

    /// Client `client`'s next request to node `node` is delayed by `extra`.
    fn delay_request(&mut self, client: usize, node: usize, extra: Millis) -> bool {
        let delayed = node < self.nodes.len()
            && self
                .clients
                .get_mut(client)
                .map(|c| c.delay_next_request(node, extra))
                .is_some();
        if delayed {
            let node = Actor::node(node);
            self.record_client(
                client,
                Event::RequestDelayed {
                    node,
                    ticks: extra.0,
                },
            );
        }
        delayed
    }

    /// Client `client` dies for good; its keys stay on the nodes until they expire. A crash
    /// aimed at a holder does not apply while the client does not believe it holds the lock.
    fn crash_client(&mut self, client: usize, when: CrashWhen) -> bool {
        let now = self.now;
        let Some(believed) = self.clients.get(client).map(|c| c.belief(now).is_some()) else {
            return false;
        };
        if (when == CrashWhen::Holding && !believed) || !self.clients[client].crash(Millis(now)) {
            return false;
        }
        let owner = Some(Actor::client(client));
        let mut keys = NodeSet::EMPTY;
        for (n, node) in self.nodes.iter().enumerate() {
            if node.key_owner() == owner && node.state.live_entry(node.clock.read(now)).is_some() {
                keys.insert(NodeId(n as u8));
            }
        }
        let keys = Nodes(keys);
        self.record_client(client, Event::ClientCrashed { believed, keys });
        true
    }

    /// A step of a node's or a client's clock; a client's step back may bring back a belief
    /// that had ended, which is told after the jump.
    fn jump_clock(&mut self, process: Process, by_ms: i64) -> bool {
        let now = self.now;
        let (reads, returned) = match process {
            Process::Node(n) => {
                let Some(node) = self.nodes.get_mut(usize::from(n)) else {
                    return false;
                };
                node.clock.jump(now, by_ms);
                (node.clock.read(now), false)
            }
            Process::Client(c) => {
                let Some(client) = self.clients.get_mut(usize::from(c)) else {
                    return false;
                };
                let returned = client.step_clock(now, by_ms);
                (client.clock.read(now), returned)
            }
        };
        let event = Event::ClockJumped {
            ticks: by_ms,
            reads: reads.since_origin(),
        };
        self.record_moment(Actor::from(process), None, event);
        if returned {
            self.record_moment(Actor::from(process), Some(reads), Event::BeliefReturned);
        }
        true
    }

    /// The separate counter node crashes and restarts.
    fn crash_counter(&mut self) -> bool {
        let (counter, persistence) = &mut self.counter;
        let from = counter.counter;
        counter.crash(*persistence);
        counter.restart(Millis::ZERO, Millis::ZERO);
        let event = Event::CounterCrashed {
            persistence: persistence_words(*persistence),
            from,
            to: counter.counter,
        };
        self.record_moment(Actor::Counter, None, event);
        true
    }

    /// Lock node `node` crashes, down for `downtime`.
    fn crash_node(&mut self, node: usize, downtime: Millis) -> bool {
        let now = self.now;
        let crashed = self
            .nodes
            .get_mut(node)
            .and_then(|n| n.crash(now, downtime));
        let applied = crashed.is_some();
        if let Some(event) = crashed {
            self.record_node(node, event);
        }
        applied
    }

    /// The replicated master fails over to its replica; with a replica on every node, one of
    /// the nodes that still have theirs, drawn from the replica stream (so that a world with
    /// one replicated master draws nothing more and replays as before).
    fn fail_over(&mut self) -> bool {
        let now = self.now;
        let rng = &mut self.replica_rng;
        let promoted = self.config.crash.failover.and_then(|failover| {
            let node = if failover.every_node {
                let replicated: Vec<usize> = (0..self.nodes.len())
                    .filter(|&n| self.nodes[n].has_replica())
                    .collect();
                let last = replicated.len().checked_sub(1)?;
                replicated[uniform(rng, 0, last as u64) as usize]
            } else {
                failover.node
            };
            let event = self.nodes.get_mut(node)?.fail_over(now, rng)?;
            Some((node, event))
        });
        let applied = promoted.is_some();
        if let Some((node, event)) = promoted {
            self.record_node(node, event);
        }
        applied
    }

    /// Client `client` pauses for `duration`.
    fn pause(&mut self, client: usize, duration: Millis) -> bool {
        let now = self.now;
        let until = now.saturating_add(duration.0);
        let paused = self
            .clients
            .get_mut(client)
            .and_then(|c| c.pause(now, until));
        let applied = paused.is_some();
        if let Some(event) = paused {
            self.record_client(client, event);
        }
        applied
    }

    fn tick_nodes(&mut self) {
        let (now, trace) = (self.now, &mut self.trace);
        for (n, node) in self.nodes.iter_mut().enumerate() {
            node.tick(now, |event, clock| {
                trace.push(TraceEntry::told(now, Actor::node(n), Some(clock), event));
            });
        }
    }

    /// Delivers every message due now. Bounded: everything sent during delivery arrives at
    /// least one tick later, so the queue of due messages only shrinks.
    fn deliver(&mut self) {
        while let Some(message) = self.network.pop_due(self.now) {
            if message
                .node()
                .is_some_and(|n| self.nodes[n].is_isolated(self.now))
            {
                self.stats.messages_lost += 1;
                self.record(TraceEvent::Lost { message });
                continue;
            }
            match (message.to, message.payload) {
                (Actor::Node(node), Payload::Command(command)) => {
                    self.deliver_command(message, node, command)
                }
                (Actor::Storage, Payload::StorageOp { seq, op }) => {
                    self.deliver_storage_op(message, seq, op)
                }
                (Actor::Client(client), payload) => {
                    self.clients[usize::from(client)].deliver(payload)
                }
                // No other pairing is ever sent.
                _ => {}
            }
        }
    }

    /// A lock command reaches its node, which applies it and answers.
    fn deliver_command(&mut self, message: Message, node: u8, command: Command) {
        let (client, node) = match message.from {
            Actor::Client(c) => (usize::from(c), usize::from(node)),
            _ => return,
        };
        if self.held(message, client, node) {
            return;
        }
        // The guard is judged when the node answers, as the Redis client reads the
        // node's uptime with its reply.
        let counts = self.nodes[node].counts_toward_quorum(self.now);
        let before = (self.nodes[node].key_owner(), self.nodes[node].state.counter);
        let from = Actor::client(client);
        let counted = self.nodes[node].apply_counted(&command.op, self.now, from);
        let counter = counted.map_or(0, |reply| reply.counter);
        let result = counted.map(|reply| reply.applied);
        let event = self.served(node, from, command.op, counted, before);
        let clock = self.nodes[node].clock.read(self.now);
        self.trace.push(TraceEntry::told_from(
            self.now,
            Actor::node(node),
            from,
            Some(clock),
            event,
        ));
        let reply = match result {
            Ok(true) => Reply::Applied,
            Ok(false) => Reply::NotApplied,
            // A node that is down or restarting refuses the connection.
            Err(_) => Reply::Failed,
        };
        self.send(
            Message {
                from: message.to,
                to: message.from,
                payload: Payload::Reply {
                    round: command.round,
                    node: NodeId(node as u8),
                    reply,
                    counter,
                    counts,
                },
            },
            Millis::ZERO,
        );
    }

    /// What node `node` did with `client`'s `op`, in the model's words: `counted` is its
    /// answer, `before` whose key it held and its fencing counter before the op.
    fn served(
        &self,
        node: usize,
        client: Actor,
        op: Op,
        counted: Result<NodeReply, Unavailable>,
        before: (Option<Actor>, u64),
    ) -> Event {
        let (holder, counter_before) = before;
        let node_state = &self.nodes[node].state;
        let reads = self.nodes[node].clock.read(self.now).since_origin();
        let Ok(reply) = counted else {
            let restarting = node_state.availability != Availability::Down;
            return Event::NotServing { client, restarting };
        };
        let fencing = self.lock_config.fencing != Fencing::Off;
        match (op, reply.applied) {
            (Op::SetNxPx { ttl, .. }, true) => Event::KeySet {
                client,
                node: Actor::node(node),
                expires_at: reads + ttl.0 as i64,
                early_over: None,
                fast_by: 0,
                restart_over: false,
                counter: fencing.then_some(reply.counter),
            },
            (Op::SetNxPx { .. }, false) => Event::SetRefused { client, holder },
            (Op::PExpireIfEq { ttl, .. }, true) => Event::KeyExtended {
                client,
                node: Actor::node(node),
                expires_at: reads + ttl.0 as i64,
            },
            (Op::PExpireIfEq { .. }, false) => Event::ExtensionRefused { client },
            (Op::RaiseFence { .. }, true) => Event::FenceRaised {
                client,
                from: counter_before,
                to: node_state.counter,
            },
            (Op::RaiseFence { .. }, false) => Event::FenceRefused { client },
            (Op::DelIfEq { .. }, deleted) => Event::ReleaseServed {
                client,
                compare: true,
                deleted,
            },
            (Op::Del, deleted) => Event::ReleaseServed {
                client,
                compare: false,
                deleted,
            },
            (Op::GetEq { .. }, own) => Event::ValueRead { client, own },
        }
    }

    /// Whether a delayed request waits another tick: its node is busy (not serving, guarded,
    /// or holding a live key) and its hold has not ended. A request whose hold ends is
    /// delivered and its hold dropped.
    fn held(&mut self, message: Message, client: usize, node: usize) -> bool {
        if let Some(index) = self
            .holds
            .iter()
            .position(|&(c, n, _)| c == client && n == node)
        {
            let until = self.holds[index].2;
            let target = &self.nodes[node];
            let local = target.clock.read(self.now);
            let busy = !target.state.is_serving(local)
                || !target.counts_toward_quorum(self.now)
                || target.state.live_entry(local).is_some();
            if busy && self.now < until {
                self.network.hold(self.now + 1, message);
                return true;
            }
            self.holds.swap_remove(index);
        }
        false
    }

    /// A storage op reaches the storage, which applies it, is checked, and answers. With
    /// `workload.storage_apply_gap` the storage only checks an op it lets through, and applies
    /// it a drawn span later ([`apply_checked_ops`](World::apply_checked_ops)).
    fn deliver_storage_op(&mut self, message: Message, seq: u32, op: StorageOp) {
        let client = match message.from {
            Actor::Client(c) => usize::from(c),
            _ => return,
        };
        let protection = self.config.workload.protection;
        let guard = self.storage.check(op, protection);
        if let Some(gap) = self.workload.storage_apply_gap
            && guard.allows(op)
        {
            let event = Event::OpChecked {
                client: Actor::client(client),
                op,
                guard,
                stale: self.clients[client].belief(self.now).is_none(),
                delayed_by: 0,
            };
            self.record_storage(client, event);
            let due = self.now + uniform(&mut self.network_rng, 0, gap.0);
            self.checked_ops.push((due, message, seq, op));
            return;
        }
        let (reply, guard) = self.storage.apply_guarded(op, protection);
        self.answer_storage_op(message, seq, op, reply, guard);
    }

    /// Applies every op the storage checked earlier whose time has come, in the order checked.
    fn apply_checked_ops(&mut self) {
        let now = self.now;
        let (due, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.checked_ops)
            .into_iter()
            .partition(|&(at, ..)| at <= now);
        self.checked_ops = later;
        for (_, message, seq, op) in due {
            let reply = self
                .storage
                .apply_checked(op, self.config.workload.protection);
            self.answer_storage_op(message, seq, op, reply, Comparison::CheckedEarlier);
        }
    }

    /// Puts the storage's `event` about `client`'s op in the trace.
    fn record_storage(&mut self, client: usize, event: Event) {
        self.trace.push(TraceEntry::told_from(
            self.now,
            Actor::Storage,
            Actor::client(client),
            None,
            event,
        ));
    }

    /// Tells what the storage did with `op`, judges the storage, and answers.
    fn answer_storage_op(
        &mut self,
        message: Message,
        seq: u32,
        op: StorageOp,
        reply: StorageReply,
        guard: Comparison,
    ) {
        let Actor::Client(c) = message.from else {
            return;
        };
        let client = usize::from(c);
        let event = Event::OpArrived {
            client: Actor::client(client),
            op,
            applied: reply != StorageReply::Rejected,
            guard,
            counter: self.storage.value,
            stale: self.clients[client].belief(self.now).is_none(),
            delayed_by: 0,
        };
        self.record_storage(client, event);
        let found = self
            .checker
            .check_storage(Millis(self.now), &self.storage, client, op.epoch());
        self.report(found);
        self.send(
            Message {
                from: Actor::Storage,
                to: message.from,
                payload: Payload::StorageReply { seq, reply },
            },
            Millis::ZERO,
        );
    }

    fn step_clients(&mut self) {
        let mut outbox = std::mem::take(&mut self.outbox);
        for (id, client) in self.clients.iter_mut().enumerate() {
            // Each client runs the drawn lock with its own quorum.
            let lock_config = self.config.client_lock(id, &self.lock_config);
            let mut ctx = StepContext {
                now: self.now,
                lock_config: &lock_config,
                ttl: self.config.ttl,
                workload: &self.workload,
                outbox: &mut outbox,
                trace: &mut self.trace,
                stats: &mut self.stats,
                next_epoch: &mut self.next_epoch,
                counter: &mut self.counter,
                shared_token_seed: self.shared_token_seed,
                tick: self.config.client_clock_resolution,
                delay_max: self.network.config().delay_max,
            };
            client.step(&mut ctx);
        }
        for (message, extra) in outbox.drain(..) {
            self.send(message, extra);
        }
        self.outbox = outbox;
        // Once the first client has begun (or died before), the others are timed from it
        // (once per run).
        if let Some(after) = self.workload.rival_start
            && !self.rivals_timed
            && self.clients[self.first_client].has_begun_or_died()
        {
            self.rivals_timed = true;
            for client in &mut self.clients {
                client.begin_after(self.now, after);
            }
        }
    }

    /// Whether `message` runs between a node and a client outside that client's reach.
    fn crosses_partition(&self, message: &Message) -> bool {
        match (message.from, message.to) {
            (Actor::Client(c), Actor::Node(n)) | (Actor::Node(n), Actor::Client(c)) => {
                !self.config.reaches(usize::from(c), usize::from(n))
            }
            _ => false,
        }
    }

    fn send(&mut self, message: Message, extra: Millis) {
        self.stats.messages_sent += 1;
        if let (Actor::Client(client), Actor::Node(node), Payload::Command(_)) =
            (message.from, message.to, message.payload)
            && extra > Millis::ZERO
        {
            let (client, node) = (usize::from(client), usize::from(node));
            // Held at most one TTL beyond its delay, so every hold ends.
            let until = self.now + extra.0 + self.config.ttl.0;
            self.holds.retain(|&(c, n, _)| (c, n) != (client, node));
            self.holds.push((client, node, until));
        }
        if self.crosses_partition(&message)
            || message
                .node()
                .is_some_and(|n| self.nodes[n].is_isolated(self.now))
        {
            self.stats.messages_lost += 1;
            self.record(TraceEvent::Lost { message });
            return;
        }
        match self
            .network
            .send(self.now, message, extra, &mut self.network_rng)
        {
            Sent::Arrives(arrives) => self.record(TraceEvent::Sent { message, arrives }),
            Sent::Lost => {
                self.stats.messages_lost += 1;
                self.record(TraceEvent::Lost { message });
            }
        }
    }

    fn check_beliefs(&mut self) {
        self.believers.clear();
        for (client, c) in self.clients.iter().enumerate() {
            if let Some(epoch) = c.belief(self.now) {
                self.believers.push(Believer { client, epoch });
            }
        }
        if self.believers.len() > 1 {
            let found = self
                .checker
                .check_beliefs(Millis(self.now), &self.believers);
            self.report(found);
        }
    }

    fn report(&mut self, found: Vec<Violation>) {
        for violation in found {
            self.record(TraceEvent::Violation(violation));
            self.violations.push(violation);
        }
    }

    fn finish(self, seed: u64) -> Outcome {
        let mut stats = self.stats;
        stats.acknowledged_writes = self.storage.acknowledged_writes;
        Outcome {
            seed,
            config: self.config.clone(),
            schedule: self.schedule,
            trace: self.trace,
            violations: self.violations,
            stats,
            ended_at: Millis(self.now),
            swarm: self.swarm,
        }
    }
}
