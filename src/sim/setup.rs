//! [`SimConfig`]: everything a simulated run is made of besides its seed, as plain values.

use std::fmt;

use thiserror::Error;

use super::fault::{Fault, FaultPlan};
use crate::actor::Process;
use crate::node::Persistence;
use crate::proto::{
    Config, ConfigError, DriftPolicy, LockParams, NodeId, NodeSet, RetryPolicy, RoundDecision,
    UnlockMode, ValidityCheck,
};
use crate::storage::Protection;
use crate::time::Millis;

/// The most clients a world holds (one token per client per round; the belief check is
/// quadratic in the clients).
pub const MAX_CLIENTS: usize = 64;

/// The longest run, in ticks of true time: the bound of the world's main loop.
pub const MAX_DURATION: Millis = Millis(100_000_000);

/// The largest clock rate error, in parts per million (50%: beyond that a "clock" is noise).
pub const MAX_RATE_ERROR_PPM: u32 = 500_000;

/// The largest fault size, clock offset or delay, in ms (the clocks start at
/// [`CLOCK_ORIGIN`](crate::time::CLOCK_ORIGIN), so no backward jump reaches zero).
pub const MAX_SPAN: Millis = Millis(1_000_000);

/// The per-process clocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ClockConfig {
    /// `ρ`: each clock's rate error is drawn uniformly from `[−ρ, +ρ]` parts per million.
    pub rate_error_ppm_max: u32,
    /// The clients' `ρ` where it differs from the nodes' (`None`: `rate_error_ppm_max` for
    /// every clock). A scenario's node and client clock errors are separate budgets.
    pub client_rate_error_ppm_max: Option<u32>,
    /// Each clock's starting offset is drawn from `[0, offset_max]` (offsets are harmless to
    /// Redlock, which only measures intervals; they make traces honest about it).
    pub offset_max: Millis,
}

/// The network between clients and nodes, and between clients and the storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NetworkConfig {
    /// The shortest one-way delay (at least 1 ms: a message sent in one tick arrives in a
    /// later tick, so every tick ends).
    pub delay_min: Millis,
    /// The longest one-way delay. Independent delays reorder messages.
    pub delay_max: Millis,
    /// Probability, in thousandths, that a message between a client and a node is lost.
    /// Storage messages are delayed but never lost: a lost write is not a lost update.
    pub loss_per_mille: u16,
}

impl Default for NetworkConfig {
    fn default() -> Self {
        NetworkConfig {
            delay_min: Millis(1),
            delay_max: Millis(5),
            loss_per_mille: 0,
        }
    }
}

/// What a node keeps across a crash and how it comes back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CrashConfig {
    /// No persistence, `fsync=always`, or a periodic fsync.
    pub persistence: Persistence,
    /// With [`Persistence::FsyncPeriodic`]: how often the node fsyncs, on its own clock.
    pub fsync_period: Millis,
    /// After its downtime the node refuses commands until its own clock has advanced this much
    /// (antirez's delayed restart; a clock jump during the delay cuts it short).
    pub restart_delay: Millis,
    /// After its restart delay the node answers, but the clients keep its yes out of every
    /// quorum until it has served this long on its own clock (the Redis client's restarted-node
    /// guard, which reads the node's uptime with its answer); 0: no guard.
    pub client_guard: Millis,
    /// One node is a master with one asynchronously replicated replica, promoted in its place
    /// by a [`Fault::Failover`]; `None`: independent masters without replication.
    pub failover: Option<Failover>,
}

/// A master with replicas that copy the master's key asynchronously, one of which is promoted
/// in its place when the master fails (Sentinel's failover). The other nodes stay independent
/// masters, whose crashes are plain crashes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Failover {
    /// The replicated master, by index from 0 (a scenario's `[failover]` replicates n1).
    pub node: usize,
    /// Every node is such a master (`[failover] every_node`: the shards of a Redis Cluster),
    /// and a failover strikes one of those that still have their replicas, drawn from the seed.
    pub every_node: bool,
    /// The replica copies the master's key every this long on the node's clock, so a key set
    /// just before a failover may be missing on the promoted replica.
    pub replication_period: Millis,
    /// The promoted replica refuses requests for this long on the node's clock.
    pub promotion_delay: Millis,
    /// How many replicas the master has (at least 1). Each copies on its own schedule, the
    /// `r`-th one `r / replicas` of a period after the first.
    pub replicas: u8,
    /// The master answers a write only once this many replicas have the key (`WAIT k`; 0: no
    /// wait): the first `wait` replicas copy the key with every write the master applies,
    /// besides their periodic copy. The failover promotes a replica drawn from the seed, so
    /// with fewer than all counted it may be one the write need not have reached (the model's
    /// adversary may choose any).
    pub wait: u8,
}

/// What the clients do with the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WorkloadConfig {
    /// Between locks a client idles for a time drawn from `[think_min, think_max]` on its clock.
    pub think_min: Millis,
    /// See `think_min`.
    pub think_max: Millis,
    /// Read-modify-write cycles on the storage per acquired lock (0: lock and release only).
    pub cycles_per_lock: u32,
    /// After its storage work a holder keeps the lock for a time drawn from `[0, hold_max]`
    /// on its clock before it releases (0: it releases at once). A lease that ends first ends
    /// the hold.
    pub hold_max: Millis,
    /// After this many acquisitions (each with all its rounds, won or not) a client stops
    /// for the rest of the run; `None`: it never stops. The model checker's clients acquire
    /// once, so a run built from a scenario sets 1.
    pub acquisitions_per_client: Option<u32>,
    /// A holder issues a storage operation only while at least this much validity is left on
    /// its clock (`M` of the scenario notes; 0: while it believes).
    pub op_margin: Millis,
    /// A holder gives up on a storage operation unanswered for this long (its clock) and
    /// releases; the operation may still arrive later.
    pub storage_timeout: Millis,
    /// How the storage protects itself from stale holders. The fencing token is the
    /// acquisition's epoch (acquisitions numbered in true-time order).
    pub protection: Protection,
    /// Extension rounds a holder runs per lock (the core's `Lock::extend`), each at a time
    /// drawn from `[0, ttl]` on its clock after the acquisition or the previous extension,
    /// and all before its storage work (as in the model); 0: it never extends.
    pub extensions: u32,
    /// The fencing token comes from one `INCR` on a separate counter node, taken after the
    /// lease check of the holder's first fenced op and before that op is sent (the
    /// counter-after-acquire design); the counter node crashes within the crash budget and
    /// restarts at once with the lock nodes' persistence.
    pub counter_node: bool,
    /// Every client's lock generator starts from one seed drawn per run (a hard-coded seed,
    /// or a random source seeded alike in every process), so the clients' n-th rounds all
    /// use the same token value and compare-and-delete can no longer tell their keys apart.
    pub shared_token: bool,
    /// A cap on when a storage operation lands, counted from the start of the tick of true
    /// time its check fell in (ticks of [`SimConfig::client_clock_resolution`]): an op checked
    /// in the tick that starts at `s` arrives by `s + cap`, later only by the time its client
    /// was paused between the check and the send. A storage-delay fault is cut short to keep
    /// it, and a check too late in its tick for its op to land by the cap (a step or two and
    /// the run's longest network delay) waits for the next tick and checks again there. This
    /// is how the model bounds an op's wait (an op checked in tick `k` lands within
    /// tick `k + max_delay_ticks`), which a world built from a scenario follows; `None`: no
    /// cap beyond the faults' own sizes.
    pub op_arrival_cap: Option<Millis>,
    /// The run's first holder (epoch 1) waits before each storage check until the last
    /// reading of its clock at which the check still passes, then checks by the core's rule
    /// as always. The model's holder may wait any time before a check, and the check that
    /// matters most is the last one the margin allows: an op checked then and held back by a
    /// pause and a delay lands as late as the bounds let it, when the holder's keys are gone
    /// and a rival may already be at work. A swarm run draws it
    /// ([`SwarmRun::late_check`](super::SwarmRun::late_check)).
    pub late_check: bool,
    /// When the run's first acquisition starts, every client that has not begun yet begins
    /// this long after it on its own clock, instead of after its drawn think time. The model's
    /// rival may begin at any moment, and the one that matters is when the first holder's keys
    /// are about to be gone (a TTL later, less a forward node jump); a uniform think time
    /// rarely lands there. A swarm run draws it
    /// ([`SwarmRun::rival_start`](super::SwarmRun::rival_start)).
    pub rival_start: Option<Millis>,
    /// The run's first client, once its first acquisition round is out, leaves the answers
    /// unread until another client has acquired (at most a TTL of its clock), then takes them
    /// and acquires (writing its fence back first when its nodes' counters disagree): the
    /// newer holder, with the older fence. The model's client handles a reply whenever it
    /// likes, so it may decide its round after a rival's whole acquisition; that rival, in
    /// turn, needs every one of its own messages in between, which uniform timing rarely
    /// gives it. Only worlds with [`Fencing::WriteBack`](crate::proto::Fencing::WriteBack)
    /// draw it, where the order of fences is a property, and worlds whose extensions are
    /// counted unchecked ([`ValidityCheck::AcquisitionOnly`](crate::proto::ValidityCheck)),
    /// where it is the first *extension* round whose answers wait: the model's holder, too,
    /// takes them whenever it likes, and times its new lease from them. A swarm run draws it
    /// ([`SwarmRun::late_answers`](super::SwarmRun::late_answers)).
    pub late_answers: bool,
    /// The run's first holder, once its belief ended, releases only this long later (on its
    /// clock) instead of at once. The model's holder may release at any time, also long after
    /// its keys expired: with plain `DEL` that late release deletes whatever key is there, a
    /// rival's included (redis.io's stale holder). Only worlds that unlock with `DEL` draw it:
    /// with compare-and-delete a late release can only delete the holder's own key. A swarm
    /// run draws it ([`SwarmRun::late_release`](super::SwarmRun::late_release)).
    pub late_release: Option<Millis>,
    /// The storage checks an op when it arrives and applies one it lets through a span drawn
    /// up to this long later, other ops free to run in between (`[storage] check =
    /// "two-step"`); `None`: the check and the apply are one atomic step.
    pub storage_apply_gap: Option<Millis>,
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig {
            think_min: Millis(0),
            think_max: Millis(20),
            cycles_per_lock: 2,
            hold_max: Millis(0),
            acquisitions_per_client: None,
            op_margin: Millis(0),
            storage_timeout: Millis(50),
            protection: Protection::None,
            extensions: 0,
            counter_node: false,
            shared_token: false,
            op_arrival_cap: None,
            late_check: false,
            rival_start: None,
            late_answers: false,
            late_release: None,
            storage_apply_gap: None,
        }
    }
}

/// Per-run knobs of a swarm search: each run draws its own values within these ranges from
/// its seed, and its generated faults swarm-style ([`FaultBudget::draw_swarm`]), so that
/// some runs are quiet and others pile one kind of fault on the windows that matter.
///
/// [`FaultBudget::draw_swarm`]: super::FaultBudget::draw_swarm
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Swarm {
    /// A run's round timeout lies in `[round_timeout, round_timeout_max]`: a client that waits
    /// longer for its answers (the model's client may decide whenever it likes) lets a late
    /// `SET` count.
    pub round_timeout_max: Millis,
    /// A run's longest think time lies in `[workload.think_min, think_max]`: clients that
    /// begin together race for the same nodes, a client that begins late meets a lock whose
    /// keys are about to expire.
    pub think_max: Millis,
    /// The delays after the run's first start at which a rival may begin
    /// ([`WorkloadConfig::rival_start`]), a run drawing one of them, half the time exactly and
    /// else one or two ticks of [`SimConfig::client_clock_resolution`] later: the TTL less the
    /// largest forward node jump (when a jumped node drops the first holder's key), the TTL
    /// (when its keys expire), and a tick past the restart delay (when a node that crashed
    /// right after taking the first holder's key serves again; the TTL without crashes).
    pub rival_starts: [Millis; 3],
}

/// A simulated world: nodes, clients, clocks, network, crashes, workload and faults.
///
/// Plain public fields, so the CLI and the scenario files can build one from values; call
/// [`validate`](SimConfig::validate) (the simulator does) to have a bad value refused with a
/// reason. `Display` prints every resolved option, which every run prints first.
#[derive(Clone, Debug, PartialEq)]
pub struct SimConfig {
    /// A name for reports; a scenario sets its own name, which the replay command of a
    /// simulator world then uses.
    pub name: String,
    /// The lock configuration every client runs, `N` (`lock.node_count`) included: the same
    /// [`Config`] a driver hands the core, validated by the core's own rules.
    pub lock: Config,
    /// The lock clients.
    pub clients: usize,
    /// Per client, the quorum its rounds must win, where the clients' quorums differ (a
    /// scenario's `[lock] quorum = [3, 2]`); empty: `lock`'s quorum for every client.
    pub client_quorums: Vec<usize>,
    /// The lock's TTL.
    pub ttl: Millis,
    /// How long the run lasts in true time (the bound of the main loop).
    pub duration: Millis,
    /// End the run at its first violation (saves time when searching for one).
    pub stop_on_violation: bool,
    /// Clock offsets and rates.
    pub clocks: ClockConfig,
    /// The step a client's clock reads in (1 ms: whole milliseconds, as a real client's
    /// clock). A world built from a catalog scenario sets one model tick: the model's clients
    /// read whole ticks, so a check anywhere in a tick sees the tick's start, and a boundary
    /// with zero slack (the catalog's `synchronous-bounds-margin-2`, the jumped node of
    /// `fencing-lock-quorum-node-clock-jump`) is crossed only by clients whose checks see
    /// what the model's see. Nodes keep millisecond clocks: a key that expires at a
    /// millisecond is no later than one that expires at a tick's end.
    pub client_clock_resolution: Millis,
    /// Delays and loss.
    pub network: NetworkConfig,
    /// Per client, the nodes it can reach (a partition that lasts the whole run): a message
    /// between a client and a node outside its set is lost. Empty: every client reaches every
    /// node.
    pub reach: Vec<NodeSet>,
    /// Persistence and restart.
    pub crash: CrashConfig,
    /// What the clients do.
    pub workload: WorkloadConfig,
    /// The faults.
    pub faults: FaultPlan,
    /// With a generated fault plan: draw the faults and these knobs per run, swarm-style.
    /// `None`: every run has every budgeted fault at a uniform time.
    pub swarm: Option<Swarm>,
    /// The simulator world this configuration was built as, if any (the scenario bridge
    /// sets it); [`SimConfig::world`] says whether it still is that world.
    pub provenance: Option<Provenance>,
}

/// Which simulator world a configuration was built as, so a run of it can be replayed by name
/// (`redlock-lab simulate <world> --seed <seed>`).
#[derive(Clone, Debug, PartialEq)]
pub struct Provenance {
    /// The world's name.
    pub world: String,
    /// The configuration exactly as the world built it: a configuration changed since is no
    /// longer that world.
    pub built: Box<SimConfig>,
}

impl Default for SimConfig {
    /// Three nodes, two clients, TTL 100 ms with a fixed 10 ms drift allowance, one second of
    /// true time, perfect clocks, 1–5 ms delays, no faults.
    fn default() -> Self {
        SimConfig {
            name: "custom".to_owned(),
            lock: Config {
                drift: DriftPolicy::fixed(Millis(10)),
                round_timeout: Millis(20),
                retry: RetryPolicy {
                    attempts: 3,
                    delay_min: Millis(5),
                    delay_max: Millis(20),
                },
                unlock: UnlockMode::CompareAndDelete,
                validity_check: ValidityCheck::On,
                decision: RoundDecision::AtQuorum,
                ..Config::new(3)
            },
            clients: 2,
            client_quorums: Vec::new(),
            ttl: Millis(100),
            duration: Millis(1_000),
            stop_on_violation: true,
            clocks: ClockConfig::default(),
            client_clock_resolution: Millis(1),
            network: NetworkConfig::default(),
            reach: Vec::new(),
            crash: CrashConfig::default(),
            workload: WorkloadConfig::default(),
            faults: FaultPlan::default(),
            swarm: None,
            provenance: None,
        }
    }
}

impl ClockConfig {
    /// The clients' rate error bound, in parts per million.
    pub fn client_rate_error_ppm(&self) -> u32 {
        self.client_rate_error_ppm_max
            .unwrap_or(self.rate_error_ppm_max)
    }
}

impl SimConfig {
    /// Whether client `client` reaches node `node` (see [`reach`](SimConfig::reach)).
    pub fn reaches(&self, client: usize, node: usize) -> bool {
        self.reach
            .get(client)
            .is_none_or(|set| node < 64 && set.contains(NodeId(node as u8)))
    }

    /// `N`, the Redis masters.
    pub fn nodes(&self) -> usize {
        self.lock.node_count
    }

    /// The resolved numbers of the lock (quorum, drift in ms, capped round timeout).
    pub fn lock_params(&self) -> Result<LockParams, SimConfigError> {
        Ok(self.lock.params(self.ttl)?)
    }

    /// The lock client `client` (from 0) runs: `lock` (or the run's drawn copy of it) with
    /// the client's own quorum, if [`client_quorums`](SimConfig::client_quorums) gives one.
    pub fn client_lock(&self, client: usize, lock: &Config) -> Config {
        Config {
            quorum: self.client_quorums.get(client).copied().or(lock.quorum),
            ..*lock
        }
    }

    /// The drift allowance that covers this configuration's clock rate error, per the timing
    /// condition (I1) of the scenario notes: a node clock fast by `ρ` and a client clock slow
    /// by `ρ` open a gap of about `2ρ·ttl`, and whole-millisecond readings add up to 1 ms at
    /// each end. A drift of at least this much keeps beliefs inside key lifetimes.
    pub fn drift_covering_clock_error(&self) -> Millis {
        Millis(u64::try_from(self.clock_gap_ms()).unwrap_or(u64::MAX)) + Millis(2)
    }

    /// How far a fast node clock and a slow client clock drift apart over one TTL, in ms.
    fn clock_gap_ms(&self) -> u128 {
        let rho = u128::from(self.clocks.rate_error_ppm_max)
            + u128::from(self.clocks.client_rate_error_ppm());
        (rho * u128::from(self.ttl.0)).div_ceil(1_000_000)
    }

    /// Checks every value; the first problem found is returned.
    pub fn validate(&self) -> Result<(), SimConfigError> {
        let params = self.lock_params()?;
        for client in 0..self.client_quorums.len() {
            self.client_lock(client, &self.lock).params(self.ttl)?;
        }
        self.check_processes_and_clocks()?;
        self.check_network_crash_and_workload()?;
        self.check_spans()?;
        self.check_faults()?;
        debug_assert!(params.node_count as usize == self.nodes());
        Ok(())
    }

    /// The clients, the run's length, the clocks' rate errors and who reaches whom.
    fn check_processes_and_clocks(&self) -> Result<(), SimConfigError> {
        if self.clients == 0 {
            return Err(SimConfigError::NoClients);
        }
        if self.clients > MAX_CLIENTS {
            return Err(SimConfigError::TooManyClients {
                count: self.clients,
            });
        }
        if self.duration == Millis::ZERO || self.duration > MAX_DURATION {
            return Err(SimConfigError::Duration {
                duration: self.duration,
            });
        }
        let rates = [
            self.clocks.rate_error_ppm_max,
            self.clocks.client_rate_error_ppm(),
        ];
        if let Some(&ppm) = rates.iter().find(|&&ppm| ppm > MAX_RATE_ERROR_PPM) {
            return Err(SimConfigError::RateError { ppm });
        }
        if !self.reach.is_empty() && self.reach.len() != self.clients {
            return Err(SimConfigError::Reach {
                lists: self.reach.len(),
                clients: self.clients,
            });
        }
        if !self.client_quorums.is_empty() && self.client_quorums.len() != self.clients {
            return Err(SimConfigError::Quorums {
                lists: self.client_quorums.len(),
                clients: self.clients,
            });
        }
        Ok(())
    }

    /// The network's delays and loss, the failover node, the fsync period, the think time,
    /// the storage timeout and the clients' clock resolution.
    fn check_network_crash_and_workload(&self) -> Result<(), SimConfigError> {
        let network = &self.network;
        if network.delay_min == Millis::ZERO {
            return Err(SimConfigError::ZeroDelay);
        }
        range("network delay", network.delay_min, network.delay_max)?;
        if network.loss_per_mille > 1000 {
            return Err(SimConfigError::Loss {
                per_mille: network.loss_per_mille,
            });
        }
        if let Some(failover) = self.crash.failover
            && failover.node >= self.nodes()
        {
            return Err(SimConfigError::NoSuchFailoverNode {
                node: Process::node(failover.node),
            });
        }
        if self.crash.persistence == Persistence::FsyncPeriodic
            && self.crash.fsync_period == Millis::ZERO
        {
            return Err(SimConfigError::ZeroFsyncPeriod);
        }
        let workload = &self.workload;
        range("think time", workload.think_min, workload.think_max)?;
        if workload.storage_timeout == Millis::ZERO {
            return Err(SimConfigError::ZeroStorageTimeout);
        }
        if self.client_clock_resolution == Millis::ZERO {
            return Err(SimConfigError::ZeroClockResolution);
        }
        Ok(())
    }

    /// Every span under [`MAX_SPAN`], and the swarm's ranges not empty.
    fn check_spans(&self) -> Result<(), SimConfigError> {
        let (network, workload) = (&self.network, &self.workload);
        let spans = [
            ("clock offset", self.clocks.offset_max),
            ("network delay", network.delay_max),
            ("fsync period", self.crash.fsync_period),
            ("restart delay", self.crash.restart_delay),
            ("think time", workload.think_max),
            ("storage timeout", workload.storage_timeout),
            ("op margin", workload.op_margin),
            ("hold time", workload.hold_max),
            ("client clock resolution", self.client_clock_resolution),
            (
                "op arrival cap",
                workload.op_arrival_cap.unwrap_or(Millis::ZERO),
            ),
        ];
        let swarm_spans = self.swarm.map_or([Millis::ZERO; 5], |swarm| {
            [
                swarm.round_timeout_max,
                swarm.think_max,
                swarm.rival_starts[0],
                swarm.rival_starts[1],
                swarm.rival_starts[2],
            ]
        });
        if let Some(swarm) = self.swarm {
            range(
                "round timeout",
                self.lock.round_timeout,
                swarm.round_timeout_max,
            )?;
            range("think time", workload.think_min, swarm.think_max)?;
        }
        let spans = spans.into_iter().chain([
            ("round timeout", swarm_spans[0]),
            ("think time", swarm_spans[1]),
            ("rival start", swarm_spans[2]),
            ("rival start", swarm_spans[3]),
            ("rival start", swarm_spans[4]),
        ]);
        for (what, span) in spans {
            if span > MAX_SPAN {
                return Err(SimConfigError::SpanTooLarge { what, span });
            }
        }
        Ok(())
    }

    /// The fault budgets' ranges and pinned processes, or every listed fault.
    fn check_faults(&self) -> Result<(), SimConfigError> {
        match &self.faults {
            FaultPlan::Generated(budget) => {
                let pinned = [
                    budget.pinned_node.map(Process::node),
                    budget.pinned_client.map(Process::client),
                ];
                for target in pinned.into_iter().flatten() {
                    if !self.has(target) {
                        return Err(SimConfigError::NoSuchPinnedProcess { target });
                    }
                }
                for (class, budget) in budget.kinds() {
                    let what = class.key();
                    range(what, budget.min, budget.max)?;
                    if budget.max > MAX_SPAN {
                        return Err(SimConfigError::SpanTooLarge {
                            what,
                            span: budget.max,
                        });
                    }
                }
            }
            FaultPlan::Explicit(schedule) => {
                for (index, scheduled) in schedule.iter().enumerate() {
                    self.check_fault(index, &scheduled.fault)?;
                }
            }
        }
        Ok(())
    }

    fn check_fault(&self, index: usize, fault: &Fault) -> Result<(), SimConfigError> {
        let (target, size) = match *fault {
            Fault::ClockJump { process, by_ms } => (process, Millis(by_ms.unsigned_abs())),
            Fault::Crash { node, downtime } => (Process::node(node), downtime),
            Fault::Isolate { node, duration } => (Process::node(node), duration),
            Fault::Pause { client, duration } => (Process::client(client), duration),
            Fault::CrashClient { client, .. } => (Process::client(client), Millis::ZERO),
            // Aimed at whichever node is replicated; without one it is ignored when it strikes.
            Fault::Failover => return Ok(()),
            Fault::DelayStorageOp { client, extra } => (Process::client(client), extra),
            Fault::DelayRequest {
                client,
                node,
                extra,
            } => {
                if !self.has(Process::node(node)) {
                    return Err(SimConfigError::NoSuchProcess {
                        index,
                        target: Process::node(node),
                    });
                }
                (Process::client(client), extra)
            }
        };
        if !self.has(target) {
            return Err(SimConfigError::NoSuchProcess { index, target });
        }
        if size > MAX_SPAN {
            return Err(SimConfigError::SpanTooLarge {
                what: "fault size",
                span: size,
            });
        }
        Ok(())
    }
}

impl SimConfig {
    fn has(&self, target: Process) -> bool {
        match target {
            Process::Node(node) => usize::from(node) < self.nodes(),
            Process::Client(client) => usize::from(client) < self.clients,
        }
    }
}

fn range(what: &'static str, min: Millis, max: Millis) -> Result<(), SimConfigError> {
    if min > max {
        Err(SimConfigError::EmptyRange { what, min, max })
    } else {
        Ok(())
    }
}

impl SimConfig {
    /// The simulator world this configuration is, unchanged since it was built, if any.
    pub fn world(&self) -> Option<&str> {
        let provenance = self.provenance.as_ref()?;
        let unmarked = SimConfig {
            provenance: None,
            ..self.clone()
        };
        (*provenance.built == unmarked).then_some(provenance.world.as_str())
    }
}

impl fmt::Display for SimConfig {
    /// Every resolved option, one per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fmt_lock(f)?;
        self.fmt_clocks_and_network(f)?;
        self.fmt_crash(f)?;
        self.fmt_workload(f)?;
        self.fmt_swarm(f)?;
        self.fmt_faults(f)
    }
}

impl SimConfig {
    /// The processes, the lock's resolved parameters, and whether the drift covers the clocks.
    fn fmt_lock(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "name = {}", self.name)?;
        writeln!(f, "nodes = {}", self.nodes())?;
        writeln!(f, "clients = {}", self.clients)?;
        writeln!(f, "ttl = {}", self.ttl)?;
        match self.lock_params() {
            Ok(params) => {
                writeln!(f, "quorum = {}", params.quorum())?;
                if !self.client_quorums.is_empty() {
                    let each: Vec<String> =
                        self.client_quorums.iter().map(usize::to_string).collect();
                    writeln!(f, "client_quorums = {}", each.join(", "))?;
                }
                writeln!(
                    f,
                    "drift = {} (factor {} + floor {})",
                    params.drift, self.lock.drift.factor, self.lock.drift.floor
                )?;
                writeln!(
                    f,
                    "round_timeout = {} (as configured: {})",
                    params.round_timeout, self.lock.round_timeout
                )?;
            }
            Err(error) => writeln!(f, "lock = invalid: {error}")?,
        }
        // The gap a lease can meet between a fast node and a slow client, compared with the
        // drift allowance in the same unit: the scenario's `ε_n + ε_c` against `drift_ticks`.
        let gap = Millis(u64::try_from(self.clock_gap_ms()).unwrap_or(u64::MAX));
        let covered = match self.lock_params() {
            Ok(params) if params.drift >= gap => "the drift allowance covers it",
            Ok(_) => "the drift allowance does NOT cover it",
            Err(_) => "",
        };
        writeln!(
            f,
            "clock_error = up to {gap} between a node and a client over one ttl: {covered}"
        )?;
        writeln!(
            f,
            "retry = {} attempts, delay [{}, {}]",
            self.lock.retry.attempts, self.lock.retry.delay_min, self.lock.retry.delay_max
        )?;
        writeln!(f, "unlock = {}", self.lock.unlock.word())?;
        writeln!(f, "validity_check = {}", self.lock.validity_check.word())?;
        writeln!(f, "decision = {}", self.lock.decision.word())?;
        writeln!(f, "contact = {}", self.lock.contact.word())?;
        Ok(())
    }

    /// The run's length, the clocks and the network.
    fn fmt_clocks_and_network(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "duration = {}", self.duration)?;
        writeln!(f, "stop_on_violation = {}", self.stop_on_violation)?;
        writeln!(
            f,
            "clocks = rate error ±{} ppm on nodes, ±{} ppm on clients, offset [0, {}]",
            self.clocks.rate_error_ppm_max,
            self.clocks.client_rate_error_ppm(),
            self.clocks.offset_max
        )?;
        writeln!(
            f,
            "client_clock_resolution = {} (a client's clock reads in steps of this)",
            self.client_clock_resolution
        )?;
        writeln!(
            f,
            "network = delay [{}, {}], loss {}‰ (node messages only)",
            self.network.delay_min, self.network.delay_max, self.network.loss_per_mille
        )?;
        if self.reach.is_empty() {
            writeln!(f, "reach = every client reaches every node")?;
        } else {
            let lists: Vec<String> = self
                .reach
                .iter()
                .enumerate()
                .map(|(client, set)| format!("c{}: {set}", client + 1))
                .collect();
            writeln!(f, "reach = {}", lists.join(", "))?;
        }
        Ok(())
    }

    /// What a crashed node keeps, and how long it stays away.
    fn fmt_crash(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "crash = persistence {}, fsync period {}, restart delay {} (node clock)",
            self.crash.persistence.word(),
            self.crash.fsync_period,
            self.crash.restart_delay
        )?;
        if self.crash.client_guard > Millis::ZERO {
            write!(f, ", client guard {} (node clock)", self.crash.client_guard)?;
        }
        if let Some(failover) = self.crash.failover {
            let master = if failover.every_node {
                "every node".to_owned()
            } else {
                Process::node(failover.node).to_string()
            };
            write!(
                f,
                ", {master} fails over to a replica that copies every {}, promotion delay {} (node clock)",
                failover.replication_period, failover.promotion_delay
            )?;
            if failover.replicas > 1 {
                write!(f, ", {} replicas", failover.replicas)?;
            }
            if failover.wait > 0 {
                write!(f, ", each write waits for {}", failover.wait)?;
            }
        }
        writeln!(f)?;
        Ok(())
    }

    /// What each client does with the lock.
    fn fmt_workload(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let w = &self.workload;
        writeln!(
            f,
            "workload = think [{}, {}], {} cycles per lock, hold [0, {}], {} acquisitions per client, op margin {}, storage timeout {}, protection {}, {} extensions per lock{}{}",
            w.think_min,
            w.think_max,
            w.cycles_per_lock,
            w.hold_max,
            w.acquisitions_per_client
                .map_or_else(|| "unlimited".to_owned(), |n| n.to_string()),
            w.op_margin,
            w.storage_timeout,
            w.protection.word(),
            w.extensions,
            if w.counter_node {
                ", token from a separate counter node after acquiring"
            } else {
                ""
            },
            if w.shared_token {
                ", one token value shared by every client"
            } else {
                ""
            }
        )?;
        if let Some(gap) = w.storage_apply_gap {
            writeln!(
                f,
                "storage check = two-step: the storage checks an op when it arrives and applies it up to {gap} later"
            )?;
        }
        if let Some(cap) = w.op_arrival_cap {
            writeln!(
                f,
                "op_arrival_cap = a storage op lands within {cap} of the start of its check's tick, plus any pause before its send"
            )?;
        }
        Ok(())
    }

    /// What a swarm run draws, if the world is searched by swarm.
    fn fmt_swarm(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(swarm) = self.swarm {
            // The three edges coincide in some worlds (no jump, no restart delay): each once.
            let mut starts: Vec<String> = Vec::new();
            for start in swarm.rival_starts {
                let start = start.to_string();
                if !starts.contains(&start) {
                    starts.push(start);
                }
            }
            let starts = match starts.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
                _ => starts.concat(),
            };
            // Only worlds that unlock with DEL draw a late release.
            let late_release = if self.lock.unlock == crate::proto::UnlockMode::PlainDel {
                " whether the first holder releases up to a TTL after its belief ended,"
            } else {
                ""
            };
            writeln!(
                f,
                "swarm = each run draws its fault kinds, aims most faults at a window, and draws round_timeout in [{}, {}], think_max in [{}, {}], whether the first holder checks late, whether the first client takes its acquisition's answers only after a rival acquired,{late_release} and a rival start after {starts} (plus up to two ticks) or none",
                self.lock.round_timeout,
                swarm.round_timeout_max,
                self.workload.think_min,
                swarm.think_max,
            )?;
        }
        Ok(())
    }

    /// The faults, drawn from budgets or listed.
    fn fmt_faults(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.faults {
            FaultPlan::Generated(budget) => writeln!(f, "faults = generated: {budget}"),
            FaultPlan::Explicit(schedule) => {
                writeln!(f, "faults = explicit, {} events", schedule.len())?;
                for fault in schedule {
                    writeln!(f, "  {fault}")?;
                }
                Ok(())
            }
        }
    }
}

/// A simulator configuration that cannot run, with the reason.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum SimConfigError {
    /// The lock configuration itself is refused.
    #[error("invalid lock configuration: {0}")]
    Lock(#[from] ConfigError),
    /// No clients.
    #[error("a simulation needs at least one client")]
    NoClients,
    /// More than [`MAX_CLIENTS`] clients.
    #[error("{count} clients is more than the {MAX_CLIENTS} a simulation holds")]
    TooManyClients {
        /// The number given.
        count: usize,
    },
    /// A zero duration, or one above [`MAX_DURATION`].
    #[error("duration {duration} is outside (0, {MAX_DURATION}]")]
    Duration {
        /// The duration given.
        duration: Millis,
    },
    /// A rate error above [`MAX_RATE_ERROR_PPM`].
    #[error("clock rate error {ppm} ppm is above the {MAX_RATE_ERROR_PPM} ppm a clock can have")]
    RateError {
        /// The rate error given.
        ppm: u32,
    },
    /// A zero network delay.
    #[error("network delay must be at least 1 ms: a message needs time, and a tick must end")]
    ZeroDelay,
    /// A loss probability above 1000‰.
    #[error("message loss {per_mille}‰ is above 1000‰")]
    Loss {
        /// The probability given.
        per_mille: u16,
    },
    /// A reach list that does not give one set per client.
    #[error(
        "reach lists {lists} clients, but there are {clients}: give one set of nodes per client"
    )]
    Reach {
        /// The sets given.
        lists: usize,
        /// The clients configured.
        clients: usize,
    },
    /// Per-client quorums that do not give one quorum per client.
    #[error(
        "client_quorums lists {lists} clients, but there are {clients}: give one quorum per client"
    )]
    Quorums {
        /// The quorums given.
        lists: usize,
        /// The clients configured.
        clients: usize,
    },
    /// A scenario asks for something the simulator does not model.
    #[error("scenario {scenario}: the simulator does not model {feature}: {reason}")]
    Unsupported {
        /// The scenario's name.
        scenario: String,
        /// The feature, as the scenario file names it.
        feature: &'static str,
        /// Why it cannot be mapped.
        reason: &'static str,
    },
    /// A periodic fsync with a zero period.
    #[error("fsync period must be positive with periodic fsync")]
    ZeroFsyncPeriod,
    /// A zero storage timeout.
    #[error("storage timeout must be positive: a holder must stop waiting at some point")]
    ZeroStorageTimeout,
    /// A client clock that reads in steps of zero ms.
    #[error("client clock resolution must be at least 1 ms")]
    ZeroClockResolution,
    /// A range whose minimum is above its maximum.
    #[error("{what} range is empty: min {min} is above max {max}")]
    EmptyRange {
        /// Which range.
        what: &'static str,
        /// The lower bound given.
        min: Millis,
        /// The upper bound given.
        max: Millis,
    },
    /// A span above [`MAX_SPAN`].
    #[error("{what} {span} is above the largest span the simulator takes, {MAX_SPAN}")]
    SpanTooLarge {
        /// Which value.
        what: &'static str,
        /// The value given.
        span: Millis,
    },
    /// An explicit fault aimed at a node or client that does not exist.
    #[error("fault #{index} targets {target}, which this configuration does not have")]
    NoSuchProcess {
        /// Its position in the schedule.
        index: usize,
        /// The process it names.
        target: Process,
    },
    /// A failover of a node that does not exist.
    #[error("the failover replicates {node}, which this configuration does not have")]
    NoSuchFailoverNode {
        /// The node it names.
        node: Process,
    },
    /// A fault budget pinned to a node or client that does not exist.
    #[error("the fault budget is pinned to {target}, which this configuration does not have")]
    NoSuchPinnedProcess {
        /// The process it names.
        target: Process,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{FaultBudget, FaultClass, KindBudget, ScheduledFault};

    #[test]
    fn each_client_runs_its_own_quorum_one_per_client_within_the_nodes() {
        let mut config = SimConfig {
            client_quorums: vec![3, 2],
            ..SimConfig::default()
        };
        config.validate().unwrap();
        assert_eq!(config.client_lock(0, &config.lock).quorum(), 3);
        assert_eq!(config.client_lock(1, &config.lock).quorum(), 2);
        assert!(config.to_string().contains("client_quorums = 3, 2"));
        config.client_quorums = vec![3];
        assert_eq!(
            config.validate(),
            Err(SimConfigError::Quorums {
                lists: 1,
                clients: 2
            })
        );
        config.client_quorums = vec![3, 4];
        assert!(matches!(config.validate(), Err(SimConfigError::Lock(_))));
    }

    #[test]
    fn the_default_is_valid_and_prints_every_option() {
        let config = SimConfig::default();
        config.validate().unwrap();
        let text = config.to_string();
        for key in [
            "nodes = 3",
            "quorum = 2",
            "drift = 10 ms",
            "round_timeout = 20 ms",
            "duration = 1000 ms",
            "network = delay [1 ms, 5 ms], loss 0‰",
            "protection none",
            "faults = generated: none",
        ] {
            assert!(text.contains(key), "missing {key:?} in\n{text}");
        }
    }

    #[test]
    fn the_swarm_line_names_each_rival_start_once() {
        let swarm = |starts: [u64; 3]| {
            let config = SimConfig {
                swarm: Some(Swarm {
                    round_timeout_max: Millis(30),
                    think_max: Millis(80),
                    rival_starts: starts.map(Millis),
                }),
                ..SimConfig::default()
            };
            let text = config.to_string();
            let line = text.lines().find(|l| l.starts_with("swarm = ")).unwrap();
            line.to_owned()
        };
        assert!(swarm([20, 40, 50]).contains("after 20 ms, 40 ms or 50 ms (plus"));
        assert!(swarm([20, 40, 40]).contains("after 20 ms or 40 ms (plus"));
        assert!(swarm([40, 40, 40]).contains("after 40 ms (plus"));
    }

    #[test]
    fn bad_values_are_refused_with_a_reason() {
        let refuse = |edit: fn(&mut SimConfig)| {
            let mut config = SimConfig::default();
            edit(&mut config);
            config.validate().unwrap_err().to_string()
        };
        assert!(refuse(|c| c.lock.node_count = 0).contains("at least one node"));
        assert!(refuse(|c| c.ttl = Millis(10)).contains("not larger than the clock drift"));
        assert!(refuse(|c| c.clients = 0).contains("at least one client"));
        assert!(refuse(|c| c.duration = Millis(0)).contains("duration"));
        assert!(refuse(|c| c.network.delay_min = Millis(0)).contains("at least 1 ms"));
        assert!(refuse(|c| c.network.delay_max = Millis(0)).contains("range is empty"));
        assert!(refuse(|c| c.network.loss_per_mille = 1001).contains("1001‰"));
        assert!(refuse(|c| c.clocks.rate_error_ppm_max = 600_000).contains("ppm"));
        assert!(
            refuse(|c| {
                c.crash.persistence = Persistence::FsyncPeriodic;
                c.crash.fsync_period = Millis(0);
            })
            .contains("fsync period")
        );
        assert!(
            refuse(|c| {
                let mut budget = FaultBudget::NONE;
                budget[FaultClass::Pause] = KindBudget::new(1, Millis(5), Millis(4));
                c.faults = FaultPlan::Generated(budget);
            })
            .contains("pauses range is empty")
        );
        assert!(
            refuse(|c| {
                c.faults = FaultPlan::Explicit(vec![ScheduledFault {
                    at: Millis(1),
                    fault: Fault::Crash {
                        node: 3,
                        downtime: Millis(1),
                    },
                }])
            })
            .contains("targets n4")
        );
        assert!(
            refuse(|c| {
                let mut budget = FaultBudget::NONE;
                budget.pinned_client = Some(2);
                c.faults = FaultPlan::Generated(budget);
            })
            .contains("pinned to c3")
        );
        assert!(refuse(|c| c.reach = vec![NodeSet::first(3)]).contains("reach lists 1 clients"));
    }

    #[test]
    fn the_covering_drift_follows_the_rate_error() {
        let mut config = SimConfig::default();
        assert_eq!(config.drift_covering_clock_error(), Millis(2));
        config.clocks.rate_error_ppm_max = 10_000; // 1%
        config.ttl = Millis(1_000);
        assert_eq!(config.drift_covering_clock_error(), Millis(22));
    }
}
