//! From a scenario to a simulated world: [`SimConfig::from_scenario`].
//!
//! The model checker explores every interleaving of a small scenario; the simulator samples
//! runs of the same configuration with real delays, drifting clocks and randomly timed faults.
//! The mapping aims at a simulator that shows *no more* behaviour than the model (so a
//! violation the simulator finds where the checker proved a property is a contradiction worth
//! a bug report), while still reaching the model's counterexamples where the simulator can.

use crate::catalog;
use crate::node::Persistence;
use crate::proto::{Config, DriftPolicy, LockParams, NodeSet, RetryPolicy};
use crate::scenario::{Bound, JumpTarget, Scenario, SimulateSettings, StorageSettings, Tokens};
use crate::sim::{
    ClockConfig, CrashConfig, Failover, FaultBudget, FaultClass, FaultPlan, KindBudget,
    MAX_RATE_ERROR_PPM, NetworkConfig, Provenance, SimConfig, SimConfigError, Swarm,
    WorkloadConfig,
};
use crate::storage::{CheckAndApply, Protection, TokenSource};
use crate::time::Millis;

/// The longest a scenario's "unbounded" pause or storage delay lasts in the simulator, in
/// TTLs: long enough for a lease to end and a successor to acquire and write.
pub const UNBOUNDED_IN_TTLS: u64 = 3;

impl SimConfig {
    /// The simulated world of `scenario`, one tick being one millisecond (or the file's
    /// [`ms_per_tick`](Scenario::ms_per_tick)): the same as
    /// [`from_scenario_at(scenario, 1)`](SimConfig::from_scenario_at), whose docs give the
    /// mapping.
    ///
    /// At this resolution a lock message takes a whole tick where the model's take none, so
    /// with the catalog's 4-tick leases few of the model's counterexamples are reachable; the
    /// CLI simulates at 10 ms per tick by default.
    pub fn from_scenario(scenario: &Scenario) -> Result<SimConfig, SimConfigError> {
        SimConfig::from_scenario_at(scenario, scenario.ms_per_tick().unwrap_or(1))
    }

    /// The simulated world of `scenario` with one tick lasting `R = ms_per_tick` milliseconds
    /// (at least 1).
    ///
    /// Every span of the scenario (ttl, drift, round timeout, jumps, restart delay, margins,
    /// delays, pauses) is multiplied by `R`, while a lock message travels 1 to `max(1, R/2)`
    /// ms: the finer the resolution, the closer the simulator comes to the model's
    /// instantaneous messages and the more of its counterexamples it can reach. The timing
    /// conditions the catalog's boundaries rest on (a jump of at most the drift, a restart
    /// delay of at least `ttl − drift`, a drift of at least `ε_n + ε_c`) compare spans with
    /// spans and hold at any resolution.
    ///
    /// ```
    /// use redlock_lab::catalog;
    /// use redlock_lab::scenario::Scenario;
    /// use redlock_lab::sim::{self, Property, SimConfig};
    /// use redlock_lab::time::Millis;
    ///
    /// // n2's clock jumps two ticks forward; the drift allowance is one tick.
    /// let file = catalog::find("node-clock-jump-forward-past-drift").expect("in the catalog");
    /// let scenario = Scenario::from_str(file.file, file.text)?;
    /// let config = SimConfig::from_scenario_at(&scenario, 10)?;
    /// assert_eq!((config.ttl, config.lock_params()?.drift), (Millis(40), Millis(10)));
    /// // The checker's counterexample, found by sampling seeds.
    /// let seed = (0..5_000)
    ///     .find(|&seed| !sim::run(&config, seed).unwrap().holds(Property::MutualExclusion));
    /// assert!(seed.is_some());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Exact
    ///
    /// - `[lock]`: nodes, clients, `ttl_ticks`, `drift_ticks` (a fixed drift), unlock mode,
    ///   validity check and `release_after_failed_round` (the core's); `attempts` becomes the rounds of the client's one acquisition, and
    ///   every client acquires once per run (`acquisitions_per_client = 1`), as in the model.
    /// - `[lock] extensions`, `extension_quorum`: each holder runs up to `extensions`
    ///   extension rounds of the core (`Lock::extend`, counted by the scenario's extension
    ///   quorum) before its storage work, each at a time drawn within a TTL; the model's
    ///   holder extends whenever it likes before its work. A swarm run may hold back the
    ///   request after an acquisition (an extension's or a release's) as it holds back a
    ///   `SET`.
    /// - `[network] reach`: a partition for the whole run ([`SimConfig::reach`]).
    /// - `[lock] quorum = [3, 2]`: each client runs the lock with its own quorum
    ///   ([`SimConfig::client_quorums`]), as the model's clients do.
    /// - `[faults.clock_jumps]`: `count` jumps of exactly `jump_ticks` (one size) on the target's
    ///   processes, pinned to `index` when given ([`FaultBudget::pinned_node`]).
    /// - `[faults.crashes]`: `count` crashes, persistence none or `fsync=always`, restart at
    ///   once followed by the restart delay on the node's own clock; `restart = false` becomes
    ///   a downtime longer than the run. `client_guard_ticks`: a restarted node answers, but
    ///   while it has served for less than the guard on its own clock its reply tells the
    ///   client so and the client hands it to the core as
    ///   [`Answer::guarded`](crate::proto::Answer::guarded), as the Redis client does after
    ///   reading `INFO`.
    /// - `[failover]`: n1 has `replicas` asynchronous replicas, each copying its key every TTL
    ///   on the node's clock at its own phase ([`Failover`]), and any other nodes are
    ///   independent masters; the one failover is a fault of its own ([`Fault::Failover`](crate::sim::Fault::Failover),
    ///   apart from the crash budget, as in the model), aimed at a key n1 set like a crash,
    ///   and promotes a replica the seed draws, with what it had copied, refusing requests for the
    ///   promotion delay. With `wait = k` the first k replicas copy with every write. The
    ///   model's replicas may copy at any moment, its `WAIT` may count any k and its failover
    ///   promote any replica: the simulator's choices are a subset of the model's. A
    ///   simulator world with `[failover]` has the same replicated master, and its schedule
    ///   names the failover (`failover = 0`). With `every_node`, every node has its replica,
    ///   and each of the `failovers` strikes a node that still has one, drawn from the seed
    ///   (aimed, like n1's, at a key n1 set).
    /// - `[faults.client_crashes]`: `count` clients die for good ([`Fault::CrashClient`](crate::sim::Fault::CrashClient)),
    ///   each aimed within a TTL of the client's start or acquisition: the core abandons its
    ///   round or lease as a release does, but nothing more is sent (no unlock), its keys stay
    ///   until they expire, and what it sent before still arrives.
    /// - `[lock] token = "shared"`: every client's lock generator starts from one seed drawn
    ///   per run ([`WorkloadConfig::shared_token`]), so the clients' n-th rounds use one token
    ///   value. The model's clients share one value across all rounds; each client acquires
    ///   once here, so the collision that matters (two clients' rounds with one value) is the
    ///   same.
    /// - `[storage] protection`; one read-modify-write cycle per lock, as in the model.
    ///   `check = "two-step"`: the storage checks an op when it arrives and applies one it lets
    ///   through up to the longest storage delay later
    ///   ([`WorkloadConfig::storage_apply_gap`]), as the model's checked op waits at most as
    ///   long as an op may travel.
    /// - `[storage] token_source`: the lock-quorum sources run with the same per-node counters
    ///   as the model (the core's fence and write-back); `counter-after-acquire` is a separate
    ///   counter node ([`WorkloadConfig::counter_node`]): the holder checks its lease, runs
    ///   `INCR` at its next step and sends the op at the one after, so a pause may fall on
    ///   either side of the `INCR`; the counter node is one more target of the crash budget
    ///   and restarts at once with the lock nodes' persistence, as in the model.
    ///
    /// # Approximated
    ///
    /// - **Rounds**: the model applies a reply in the instant its request arrives; here a
    ///   round trip takes up to `2·max(1, R/2)` ms, so `round_timeout = max(round_timeout_ticks
    ///   · R, 2·max(1, R/2))`. A round that waits longer only loses validity: this touches
    ///   liveness, not safety. The model's client decides a round whenever it likes, so a
    ///   swarm run ([`SimConfig::swarm`]) may wait up to `ttl − drift`.
    /// - **Late requests**: the model leaves a request in flight as long as it likes. Up to
    ///   `N` requests per run arrive up to a TTL late, and a late request that finds its node
    ///   down, restarting or holding a key waits there (at most one TTL more): it lands just
    ///   after the key expired or the restart delay ended, as the checker's counterexamples
    ///   deliver it. Up to `N` more never arrive within the run
    ///   ([`FaultClass::RequestStall`]): a holder that won a quorum without one node keeps
    ///   that node's fencing counter from counting it.
    /// - **Asynchrony**: in the model time may pass between any two steps. Here a holder
    ///   keeps the lock for `[0, 2·ttl]` after its work (a lease that ends first ends the
    ///   hold), clients begin after `[0, ttl]` (a swarm run draws `[0, 0]` to `[0, 2·ttl + d]`, `d`
    ///   the restart delay, so a rival may begin once a crashed node serves again),
    ///   a swarm run may send every message with the shortest delay, and without `[storage]` the run has one
    ///   pause per client of 1 to `2·ttl` at a random time (during a round, a hold, before a
    ///   begin: all moves the model has). With `[storage]` only the scenario's own pauses run, since a
    ///   pause between a check and its op is a budgeted fault there. Half the swarm runs have
    ///   their first holder wait before each check until the last clock reading at which it
    ///   still passes ([`WorkloadConfig::late_check`]), and half have every other client begin
    ///   an edge after the first client's start ([`WorkloadConfig::rival_start`]: the TTL less
    ///   a forward node jump, the TTL, or a tick past the restart delay, then exactly or a tick
    ///   or two later), the first client being the one a focused run aims its client faults
    ///   at: the model's holder may wait before any check and its rival begin at any moment,
    ///   and these are the moments a zero-slack boundary is crossed at. With a fencing
    ///   write-back, three in four runs whose rivals begin before the first holder's keys
    ///   expire have the first client leave its first acquisition's answers unread until a
    ///   rival acquired ([`WorkloadConfig::late_answers`]): the model's client takes a reply
    ///   whenever it likes, so it may become the newer holder with the older fence.
    /// - **Clock error** `ε_n`, `ε_c` becomes a rate error `ρ_n = ε_n / ttl_ticks` on every node
    ///   clock and `ρ_c = ε_c / ttl_ticks` on every client clock: a fast node and a slow client
    ///   drift apart by `(ρ_n + ρ_c)·ttl = ε_n + ε_c` over a lease, and a node's error alone
    ///   shortens its restart delay as the model's does. Whole-millisecond readings add up to 2 ms more at the edges, which the
    ///   simulator's own message delays on the path from an expiry to a rival's belief (at
    ///   least 2 ms) take back. Capped at [`MAX_RATE_ERROR_PPM`].
    /// - **Retry delay**: `[lock] retry_delay_ticks` is the least back-off, and the model lets
    ///   any longer one happen; here each back-off is drawn from `[max(1, d · R), max(ttl,
    ///   d · R)]`.
    /// - **Message loss**: a count of lost requests becomes a 10% loss rate on all lock
    ///   traffic (a lost reply is a late one in the model, a lost unlock a late unlock).
    /// - **Jump target `"any"`**: the count is split, `⌈k/2⌉` node jumps and `⌊k/2⌋` client
    ///   jumps (the simulator draws the two kinds from separate budgets): a subset of the
    ///   model's choices.
    /// - **`fsync-periodic`**: the model may fsync at any moment; here nodes fsync every `ttl`
    ///   on their own clock.
    /// - **Storage latency**: the clients' clocks read whole ticks
    ///   ([`SimConfig::client_clock_resolution`] is `R`), as the model's do, so a margin check
    ///   anywhere in a tick passes or fails as the model's check in that tick. The model lets
    ///   an op checked in tick `k` land in any instant of tick `k + max_delay_ticks`, so here
    ///   it lands by the end of that tick, counted from the start of the check's tick of true
    ///   time ([`WorkloadConfig::op_arrival_cap`], stretched by a pause between the check and
    ///   the send). An op takes up to `L = 1 + d` ms (sent at the holder's next step, then the
    ///   network, `d` the run's longest delay, at most `max(1, R/2)`; one step more with a
    ///   counter node), so a check in the last `L` ms before the cap defers to the start of
    ///   the next tick of true time and checks again there with its clock then: every such
    ///   check is one the model's holder can make (it may wait), and its op lands in the tick
    ///   the model lets it land in. The margin stays the model's; only where even a check at
    ///   the start of a tick cannot land in time (`L > max_delay · R + R − 1`, as at 1 ms per
    ///   tick) does it grow by whole ticks. Longer delays come from one storage-delay fault per client, cut short
    ///   at the cap (unbounded: [`UNBOUNDED_IN_TTLS`] TTLs, no cap).
    /// - **Pauses**: `count` pauses of 1 to `max_ticks · R` ms at random times (unbounded:
    ///   [`UNBOUNDED_IN_TTLS`] TTLs); only those that strike between a check and its send are
    ///   the model's pause, the rest are asynchrony.
    /// - **Fault timing**: a swarm run enables each fault kind with probability 1/2, spends
    ///   1 to `count` faults of it, and aims three in four at a window
    ///   ([`FaultBudget::draw_swarm`]): a node fault while a key is live, a client jump
    ///   while it believes, a pause or storage delay between a check and its send; the rest
    ///   strike at uniform times of a run just long enough for every client's acquisition and
    ///   hold. Half the runs put every clock at an edge of its rate range. The simulator finds
    ///   a counterexample by sampling, if at all: `tests/simulate_catalog.rs` pins that it
    ///   reaches the catalog's within 10 000 runs.
    ///
    /// # A `[simulate]` table
    ///
    /// A scenario with `[simulate]` describes a simulator world of its own (the model checker
    /// ignores the table), and none of the above applies: its clients lock, work and release
    /// again and again until `duration_ms`, as a real workload does, against exactly the
    /// faults the table lists. From the scenario keys (scaled by `R`) come the nodes, clients,
    /// TTL, fixed drift, round timeout, attempts, unlock mode, validity check and release after
    /// a failed round of `[lock]`;
    /// the persistence, restart delay and client guard of `[faults.crashes]` (whose `count` is
    /// the checker's: the simulator's crashes are `[simulate] crashes`); and the protection,
    /// token source, check margin (`op_margin = check_margin_ticks · R`, default 0) and check
    /// (a two-step storage applies a checked op up to `delay_max_ms` later) of `[storage]`.
    /// From `[simulate]`, in simulated milliseconds: the run's duration, message
    /// delays and loss, clock rate errors (else `[clock]` as above) and offsets, retry delays,
    /// think time, storage cycles per lock, and the faults: budgets drawn at uniform times
    /// ([`FaultPlan::Generated`]) or a schedule ([`FaultPlan::Explicit`]). A run stops at its
    /// first violation and draws no swarm knobs. Its clients' clocks read milliseconds, as a
    /// real client's do: such a world is a workload of its own, not the model's semantics.
    ///
    /// # Not judged
    ///
    /// Every catalog feature is simulated but two, each refused by name
    /// ([`SimConfigError::Unsupported`]): `jump_ticks = [1, 2]`, each size at most once, as the
    /// simulator's jump budgets draw sizes from a range, with repeats, which would be other
    /// jumps than the file's; and `[faults.client_partitions]`, as the simulator's isolations
    /// cut one node off from every client for a while, while a client cut off from every node
    /// for good, the others still served, has no faithful mapping onto them.
    /// The liveness property `eventually acquired` and its `[liveness]` table are not judged
    /// by the simulator; the CLI says so.
    pub fn from_scenario_at(
        scenario: &Scenario,
        ms_per_tick: u64,
    ) -> Result<SimConfig, SimConfigError> {
        let scale = ms_per_tick.max(1);
        if let Some(simulate) = &scenario.simulate {
            return SimConfig::workload(scenario, simulate, scale).map(with_provenance);
        }
        refuse_unmapped(scenario)?;
        let m = CatalogMapping::new(scenario, scale);
        let lock = &scenario.lock;
        let resolved = scaled_config(&lock.params, scale);
        let ttl = m.ttl;
        let attempts = resolved.retry.attempts;
        let round_timeout = resolved.round_timeout.max(Millis(2 * m.delay_max.0));
        let hold_max = Millis(2 * ttl.0);
        // The model's client decides a round whenever it likes, so it may wait for a late
        // answer until the lease could not be valid anyway; and it may begin at any time.
        let drift = resolved.drift.drift_for(ttl);
        let swarm = m.swarm(round_timeout, drift);
        // Long enough for every client's one acquisition (think, every round and its retry
        // delay, a hold, a release), short enough that faults strike while the lock is in use.
        // `[lock] retry_delay_ticks` is the least back-off; the model lets time pass between
        // any two steps, so every longer one happens there too: here up to a TTL (or the
        // least, if longer), drawn by the core as a driver's generator draws it.
        let retry_delay_min = resolved.retry.delay_min.max(Millis(1));
        let retry_delay_max = ttl.max(retry_delay_min);
        let duration = swarm.think_max
            + Millis(u64::from(attempts) * (swarm.round_timeout_max.0 + retry_delay_max.0))
            + hold_max
            + Millis(4 * m.delay_max.0);
        let mut budget = m.jump_budget();
        m.add_in_flight_budgets(&mut budget, resolved.node_count, duration);
        let crash = crash_config(scenario, ttl, |ticks| m.span(ticks));
        m.add_crash_budgets(&mut budget, duration);
        let workload = m.workload(&mut budget, hold_max, duration);
        let config = SimConfig {
            name: scenario.name.clone(),
            // The scenario's resolved configuration with its spans scaled to milliseconds.
            lock: Config {
                drift: DriftPolicy::fixed(drift),
                round_timeout,
                retry: RetryPolicy {
                    attempts,
                    delay_min: retry_delay_min,
                    delay_max: retry_delay_max,
                },
                ..resolved
            },
            clients: m.clients,
            client_quorums: client_quorums(scenario),
            ttl,
            duration,
            // Runs are short; running on after a violation lets one of a property the
            // scenario expects to break not hide a later one of a property it expects to hold.
            stop_on_violation: false,
            clocks: m.clocks(),
            // The model's clients read whole ticks (see `SimConfig::client_clock_resolution`).
            client_clock_resolution: Millis(scale),
            network: m.network(),
            reach: scenario.network.reach.clone(),
            crash,
            workload,
            faults: FaultPlan::Generated(budget),
            swarm: Some(swarm),
            provenance: None,
        };
        config.validate()?;
        Ok(config)
    }

    /// The world of a scenario with a `[simulate]` table at `scale` ms per tick (see
    /// [`from_scenario_at`](SimConfig::from_scenario_at)).
    fn workload(
        scenario: &Scenario,
        simulate: &SimulateSettings,
        scale: u64,
    ) -> Result<SimConfig, SimConfigError> {
        let lock = &scenario.lock;
        let resolved = scaled_config(&lock.params, scale);
        let ttl = Millis(lock.params.ttl.0 * scale);
        let config = SimConfig {
            name: scenario.name.clone(),
            lock: Config {
                retry: RetryPolicy {
                    delay_min: simulate.retry_delay_min,
                    delay_max: simulate.retry_delay_max,
                    ..resolved.retry
                },
                ..resolved
            },
            clients: usize::from(lock.clients),
            client_quorums: client_quorums(scenario),
            ttl,
            duration: simulate.duration,
            clocks: world_clocks(scenario, simulate, scale),
            // A simulator world is a real workload in milliseconds (its delays, durations and
            // faults are given in ms, and the checker never explores it), so its clients read
            // milliseconds as a real client does; whole-tick clocks are how a catalog scenario
            // keeps the model's semantics, which such a world does not claim.
            client_clock_resolution: Millis(1),
            network: simulate.network,
            // A scenario lists every client's reach; "every node for everyone" is no partition.
            reach: world_reach(scenario),
            crash: crash_config(scenario, ttl, |ticks| Millis(u64::from(ticks) * scale)),
            workload: world_workload(scenario, simulate, scale),
            faults: simulate.faults.clone(),
            ..SimConfig::default()
        };
        config.validate()?;
        Ok(config)
    }
}

/// A `[simulate]` world's clocks: its own rate error, else `[clock]`'s scaled as a catalog
/// scenario's are.
fn world_clocks(scenario: &Scenario, simulate: &SimulateSettings, scale: u64) -> ClockConfig {
    let offset_max = simulate.clock_offset_max;
    match simulate.clock_rate_error_ppm {
        Some(ppm) => ClockConfig {
            rate_error_ppm_max: ppm,
            client_rate_error_ppm_max: None,
            offset_max,
        },
        None => ClockConfig {
            offset_max,
            ..CatalogMapping::new(scenario, scale).clocks()
        },
    }
}

/// Who reaches whom in a `[simulate]` world.
fn world_reach(scenario: &Scenario) -> Vec<NodeSet> {
    let lock = &scenario.lock;
    if scenario
        .network
        .reach
        .iter()
        .all(|&set| set == NodeSet::first(lock.nodes()))
    {
        Vec::new()
    } else {
        scenario.network.reach.clone()
    }
}

/// A `[simulate]` world's clients: think time, storage cycles and margin, besides what the
/// scenario says in any world ([`scenario_workload`]).
fn world_workload(scenario: &Scenario, simulate: &SimulateSettings, scale: u64) -> WorkloadConfig {
    let storage = scenario.storage.as_ref();
    WorkloadConfig {
        think_max: simulate.think_max,
        cycles_per_lock: simulate.cycles_per_lock,
        op_margin: storage
            .and_then(|s| s.check_margin_ticks)
            .map_or(Millis::ZERO, |ticks| Millis(u64::from(ticks) * scale)),
        // A two-step storage applies a checked op within one of the world's message delays.
        storage_apply_gap: storage
            .filter(|s| s.check == CheckAndApply::TwoStep)
            .map(|_| simulate.network.delay_max),
        ..scenario_workload(scenario)
    }
}

/// What `[lock]` and `[storage]` say of every client's work in any world built from the
/// scenario: extensions, shared token values, the storage's protection and where its fencing
/// token comes from; the rest is [`WorkloadConfig::default`].
fn scenario_workload(scenario: &Scenario) -> WorkloadConfig {
    let storage = scenario.storage.as_ref();
    WorkloadConfig {
        protection: storage.map_or(Protection::None, |s| s.protection),
        extensions: u32::from(scenario.lock.extensions),
        counter_node: storage.is_some_and(|s| s.token_source == TokenSource::CounterAfterAcquire),
        shared_token: scenario.lock.token == Tokens::Shared,
        ..WorkloadConfig::default()
    }
}

/// A catalog scenario (one without `[simulate]`) on its way to a simulator world at `scale`
/// ms per tick: the spans every step of [`SimConfig::from_scenario_at`] reads.
struct CatalogMapping<'a> {
    scenario: &'a Scenario,
    scale: u64,
    ttl: Millis,
    /// How long an "unbounded" pause or storage delay lasts.
    unbounded: Millis,
    /// The longest a lock message travels.
    delay_max: Millis,
    clients: usize,
}

impl<'a> CatalogMapping<'a> {
    fn new(scenario: &'a Scenario, scale: u64) -> CatalogMapping<'a> {
        let ttl = Millis(scenario.lock.params.ttl.0 * scale);
        CatalogMapping {
            scenario,
            scale,
            ttl,
            unbounded: Millis(ttl.0 * UNBOUNDED_IN_TTLS),
            // A lock message travels at most half a tick, so a round of one tick can complete.
            delay_max: Millis((scale / 2).max(1)),
            clients: usize::from(scenario.lock.clients),
        }
    }

    /// `ticks` in milliseconds.
    fn span(&self, ticks: u32) -> Millis {
        Millis(u64::from(ticks) * self.scale)
    }

    /// A bound in milliseconds, "unbounded" being [`UNBOUNDED_IN_TTLS`] TTLs.
    fn bound(&self, bound: Bound) -> Millis {
        match bound {
            Bound::Ticks(t) => self.span(t),
            Bound::Unbounded => self.unbounded,
        }
    }

    /// The clocks' rate errors.
    fn clocks(&self) -> ClockConfig {
        // ρ_n·ttl = ε_n and ρ_c·ttl = ε_c, both sides in ms: the rates do not depend on the
        // resolution, and each side keeps its own budget (a node's error alone shortens a
        // restart delay as much as the model lets it).
        let rate = |ticks: u32| {
            (self.span(ticks).0 * 1_000_000 / self.ttl.0).min(u64::from(MAX_RATE_ERROR_PPM)) as u32
        };
        ClockConfig {
            rate_error_ppm_max: rate(self.scenario.clock.node_error_ticks),
            client_rate_error_ppm_max: Some(rate(self.scenario.clock.client_error_ticks)),
            offset_max: Millis(0),
        }
    }

    /// The lock traffic's delays and loss.
    fn network(&self) -> NetworkConfig {
        NetworkConfig {
            delay_min: Millis(1),
            delay_max: self.delay_max,
            loss_per_mille: if self.scenario.network.message_loss > 0 {
                100
            } else {
                0
            },
        }
    }

    /// The fault budget of `[faults.clock_jumps]`, and nothing else yet.
    fn jump_budget(&self) -> FaultBudget {
        let mut budget = FaultBudget::NONE;
        let Some(jumps) = &self.scenario.faults.clock_jumps else {
            return budget;
        };
        let count = u32::from(jumps.count);
        let ticks = jumps.jump_ticks.single().expect("refuse_jump_sizes passed");
        let size = self.span(ticks.unsigned_abs());
        let (node_count, client_count) = match jumps.target {
            JumpTarget::Node => (count, 0),
            JumpTarget::Client => (0, count),
            JumpTarget::Any => (count.div_ceil(2), count / 2),
        };
        let node = KindBudget::new(node_count, size, size);
        let client = KindBudget::new(client_count, size, size);
        if ticks > 0 {
            budget[FaultClass::NodeJumpForward] = node;
            budget[FaultClass::ClientJumpForward] = client;
        } else {
            budget[FaultClass::NodeJumpBackward] = node;
            budget[FaultClass::ClientJumpBackward] = client;
        }
        match (jumps.target, jumps.index) {
            (JumpTarget::Node, Some(index)) => budget.pinned_node = Some(usize::from(index)),
            (JumpTarget::Client, Some(index)) => budget.pinned_client = Some(usize::from(index)),
            _ => {}
        }
        budget
    }

    /// The swarm's knobs: how long a round may wait, how long a client may think, and when a
    /// rival may begin.
    fn swarm(&self, round_timeout: Millis, drift: Millis) -> Swarm {
        let (scenario, ttl) = (self.scenario, self.ttl);
        // A rival that begins once a crashed node serves again is the model's too.
        let restart_delay = scenario
            .faults
            .crashes
            .as_ref()
            .map_or(Millis::ZERO, |c| self.span(c.restart_delay_ticks));
        // A rival aimed at the first holder's keys begins when a forward jump of a node's
        // clock may have dropped one of them, when they expire, or when a node that crashed
        // with one of them serves again.
        let forward_jump = scenario
            .faults
            .clock_jumps
            .as_ref()
            .filter(|jumps| jumps.target != JumpTarget::Client)
            .and_then(|jumps| jumps.jump_ticks.single())
            .filter(|&ticks| ticks > 0)
            .map_or(Millis::ZERO, |ticks| self.span(ticks.unsigned_abs()));
        Swarm {
            round_timeout_max: round_timeout.max(ttl.saturating_sub(drift)),
            think_max: Millis(2 * ttl.0) + restart_delay,
            rival_starts: [
                ttl.saturating_sub(forward_jump),
                ttl,
                if scenario.faults.crashes.is_some() {
                    restart_delay + Millis(self.scale)
                } else {
                    ttl
                },
            ],
        }
    }

    /// The requests the model leaves in flight, for a while or for good.
    fn add_in_flight_budgets(&self, budget: &mut FaultBudget, nodes: usize, duration: Millis) {
        // The model leaves a request in flight as long as it likes: up to one request per
        // node arrives up to a TTL late.
        budget[FaultClass::RequestDelay] = KindBudget::new(nodes as u32, Millis(0), self.ttl);
        // And it may leave one in flight for good: a holder's request to the node it did not
        // win, still on its way when a rival takes that node after a crash or a jump, keeps
        // that node's fencing counter from counting the holder.
        budget[FaultClass::RequestStall] = KindBudget::new(nodes as u32, duration, duration);
    }

    /// The crashes of nodes and clients, and the failover (its replicated master is in
    /// `crash` already, see [`crash_config`]).
    fn add_crash_budgets(&self, budget: &mut FaultBudget, duration: Millis) {
        let scenario = self.scenario;
        if let Some(crashes) = &scenario.faults.crashes {
            // The model reboots a crashed node at once; one that never restarts is down for
            // longer than the run.
            let downtime = if crashes.restart { Millis(0) } else { duration };
            budget[FaultClass::Crash] =
                KindBudget::new(u32::from(crashes.count), downtime, downtime);
        }
        if let Some(failover) = &scenario.failover {
            // The failovers are their own fault, apart from the crash budget, as in the model.
            let count = u32::from(failover.failovers);
            budget[FaultClass::Failover] = KindBudget::new(count, Millis(0), Millis(0));
        }
        if let Some(crashes) = &scenario.faults.client_crashes {
            budget[FaultClass::ClientCrash] =
                KindBudget::new(u32::from(crashes.count), Millis(0), Millis(0));
            budget.client_crash_aim = crashes.aim;
        }
    }

    /// Each client's one acquisition and hold, with the storage's op, margin and pauses when
    /// the scenario has `[storage]`.
    fn workload(
        &self,
        budget: &mut FaultBudget,
        hold_max: Millis,
        duration: Millis,
    ) -> WorkloadConfig {
        let scenario = self.scenario;
        let mut workload = WorkloadConfig {
            think_max: self.ttl,
            cycles_per_lock: 0,
            hold_max,
            acquisitions_per_client: Some(1),
            storage_timeout: duration,
            ..scenario_workload(scenario)
        };
        let pauses = scenario.faults.pauses.as_ref();
        match &scenario.storage {
            Some(storage) => {
                workload.cycles_per_lock = 1;
                let (margin, cap, extra_max) = self.storage_timing(storage, workload.counter_node);
                workload.op_arrival_cap = cap;
                workload.op_margin = margin;
                if extra_max > Millis::ZERO {
                    budget[FaultClass::StorageDelay] =
                        KindBudget::new(self.clients as u32, Millis(0), extra_max);
                }
                // The model's checked op waits at the storage as long as an op may travel.
                workload.storage_apply_gap =
                    (storage.check == CheckAndApply::TwoStep).then_some(extra_max);
                if let Some(p) = pauses.filter(|p| p.count > 0) {
                    budget[FaultClass::Pause] =
                        KindBudget::new(u32::from(p.count), Millis(1), self.bound(p.max));
                }
            }
            None => {
                // Without storage every client pause is the model's asynchrony; a scenario's
                // own pauses (which need a storage op to strike) add to the count.
                let own = pauses.map_or(0, |p| u32::from(p.count));
                budget[FaultClass::Pause] =
                    KindBudget::new(self.clients as u32 + own, Millis(1), Millis(2 * self.ttl.0));
            }
        }
        workload
    }

    /// The storage op's check margin, its arrival cap and the longest extra delay of its
    /// storage-delay faults.
    fn storage_timing(
        &self,
        storage: &StorageSettings,
        counter_node: bool,
    ) -> (Millis, Option<Millis>, Millis) {
        let scale = self.scale;
        // A check passes while `deadline − clock ≥ margin`, on a client clock that
        // reads whole ticks, so a check anywhere in a tick passes as the model's check
        // in that tick. The model's op lands within the tick `t` ticks later; the
        // simulator's takes a step (two with a counter node) plus a network delay. A
        // check too late in its tick for that defers to the next tick (the client's
        // `op_arrival_cap` rule), and only where even a check at the start of a tick
        // cannot land in time does the margin grow, by whole ticks, until it can.
        let margin = self.span(storage.check_margin_ticks.unwrap_or(1));
        let steps = if counter_node { 2 } else { 1 };
        let latency = Millis(steps) + self.delay_max;
        match storage.max_delay {
            Bound::Ticks(t) => {
                // From the start of the check's tick to the end of the tick the op
                // must land in, that many ticks later once the margin has grown.
                let window = self.span(t) + Millis(scale - 1);
                let grow = latency.saturating_sub(window).0.div_ceil(scale);
                let cap = window + Millis(grow * scale);
                (
                    margin + Millis(grow * scale),
                    Some(cap),
                    cap.saturating_sub(latency),
                )
            }
            Bound::Unbounded => (margin, None, self.unbounded),
        }
    }
}

/// What a catalog scenario may grant that the simulator has no faithful mapping for (see
/// "Not judged" on [`SimConfig::from_scenario_at`]).
fn refuse_unmapped(scenario: &Scenario) -> Result<(), SimConfigError> {
    let faults = &scenario.faults;
    let unsupported = |feature, reason| SimConfigError::Unsupported {
        scenario: scenario.name.clone(),
        feature,
        reason,
    };
    if faults
        .client_partitions
        .as_ref()
        .is_some_and(|p| p.count > 0)
    {
        return Err(unsupported(
            "client partitions ([faults.client_partitions])",
            "its isolations cut one node off from every client for a while, not one client off from every node for good",
        ));
    }
    if faults
        .clock_jumps
        .as_ref()
        .is_some_and(|j| j.jump_ticks.single().is_none())
    {
        return Err(unsupported(
            "jump_ticks = [...]",
            "the simulator draws jump sizes from a range with repeats, not each listed size at most once",
        ));
    }
    Ok(())
}

/// The scenario's resolved lock as the core's configuration, every span scaled from ticks to
/// `scale` ms: the simulator runs the very lock the model runs, only at its own resolution.
/// `config` marked as the simulator world of its name when it is exactly what that catalog
/// world builds at its own resolution, so a run of it is replayed by name.
fn with_provenance(config: SimConfig) -> SimConfig {
    let built = catalog::find_world(&config.name)
        .and_then(|file| file.scenario().ok())
        .and_then(|world| {
            let simulate = world.simulate.as_ref()?;
            let scale = simulate.ms_per_tick.map_or(1, u64::from);
            SimConfig::workload(&world, simulate, scale).ok()
        });
    match built {
        Some(built) if built == config => {
            let provenance = Provenance {
                world: config.name.clone(),
                built: Box::new(built),
            };
            SimConfig {
                provenance: Some(provenance),
                ..config
            }
        }
        _ => config,
    }
}

/// The clients' own quorums where they differ (`[lock] quorum = [3, 2]`), else none: every
/// client then runs the scenario's one quorum.
fn client_quorums(scenario: &Scenario) -> Vec<usize> {
    if scenario.lock.quorums_differ() {
        scenario.lock.quorums()
    } else {
        Vec::new()
    }
}

/// The client configuration of `params` with every span (drift, round timeout, retry delays)
/// `scale` times longer: a scenario's lock with one tick as `scale` milliseconds.
pub fn scaled_config(params: &LockParams, scale: u64) -> Config {
    let span = |m: Millis| Millis(m.0 * scale);
    Config {
        drift: DriftPolicy::fixed(span(params.drift)),
        round_timeout: span(params.round_timeout),
        retry: RetryPolicy {
            attempts: params.retry.attempts,
            delay_min: span(params.retry.delay_min),
            delay_max: span(params.retry.delay_max),
        },
        ..params.to_config()
    }
}

/// What a node keeps and how long it stays down after a crash, from `[faults.crashes]`, with
/// ticks scaled by `span` (a periodic fsync runs once per TTL).
fn crash_config(scenario: &Scenario, ttl: Millis, span: impl Fn(u32) -> Millis) -> CrashConfig {
    let mut crash = CrashConfig::default();
    if let Some(crashes) = &scenario.faults.crashes {
        crash.persistence = crashes.persistence;
        if crashes.persistence == Persistence::FsyncPeriodic {
            crash.fsync_period = ttl;
        }
        crash.restart_delay = span(crashes.restart_delay_ticks);
        crash.client_guard = span(crashes.client_guard_ticks);
    }
    if let Some(failover) = &scenario.failover {
        // The model's replicas copy the key whenever they like, or not before the promotion;
        // here each copies every TTL, so a key set within a TTL before the failover may be
        // missing on the promoted replica. n1 is the replicated master (with `every_node`,
        // every node is one); the other nodes stay independent. A simulator world with `[failover]` has it too, and its schedule says
        // when the failover strikes (`failover = 0`).
        crash.failover = Some(Failover {
            node: 0,
            every_node: failover.every_node,
            replication_period: ttl,
            promotion_delay: span(failover.promotion_delay_ticks),
            replicas: failover.replicas,
            wait: failover.wait,
        });
    }
    crash
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{NodeId, UnlockMode, ValidityCheck};
    use crate::storage::Protection;

    fn scenario(body: &str) -> Scenario {
        let text = format!(
            "name = \"s\"\ntitle = \"t\"\nclaim = \"c\"\nsource = \"derived\"\nprose = \"p\"\n{body}\n[expect]\n\"mutual exclusion\" = \"holds\"\n"
        );
        Scenario::from_str("s.toml", &text).unwrap()
    }

    fn budget(config: &SimConfig) -> FaultBudget {
        match &config.faults {
            FaultPlan::Generated(budget) => *budget,
            FaultPlan::Explicit(_) => panic!("the bridge draws faults from a budget"),
        }
    }

    #[test]
    fn the_lock_maps_one_tick_to_ms_per_tick_milliseconds() {
        let s = scenario(
            "[lock]\nnodes = 5\nclients = 3\nttl_ticks = 6\ndrift_ticks = 2\nround_timeout_ticks = 3\nattempts = 2\nunlock = \"del\"\nvalidity_check = false",
        );
        let exact = SimConfig::from_scenario(&s).unwrap();
        assert_eq!((exact.nodes(), exact.clients), (5, 3));
        assert_eq!(exact.ttl, Millis(6));
        assert_eq!(exact.lock.drift, DriftPolicy::fixed(Millis(2)));
        assert_eq!(exact.lock.round_timeout, Millis(3));
        assert_eq!(exact.lock.retry.attempts, 2);
        assert_eq!(exact.lock.unlock, UnlockMode::PlainDel);
        assert_eq!(exact.lock.validity_check, ValidityCheck::Off);
        assert_eq!(exact.workload.acquisitions_per_client, Some(1));
        assert_eq!(exact.network.delay_min, Millis(1));
        assert_eq!(exact.network.delay_max, Millis(1));

        let fine = SimConfig::from_scenario_at(&s, 10).unwrap();
        assert_eq!(fine.ttl, Millis(60));
        assert_eq!(fine.lock.drift, DriftPolicy::fixed(Millis(20)));
        assert_eq!(fine.lock.round_timeout, Millis(30));
        assert_eq!(fine.network.delay_max, Millis(5));
        // A one-tick round still fits a round trip.
        let short = scenario("[lock]\nround_timeout_ticks = 1");
        assert_eq!(
            SimConfig::from_scenario(&short).unwrap().lock.round_timeout,
            Millis(2)
        );
        assert_eq!(
            SimConfig::from_scenario_at(&short, 10)
                .unwrap()
                .lock
                .round_timeout,
            Millis(10)
        );
    }

    /// The `[simulate]` keys a file budgets with are the classes' own names: a header that
    /// prints `FaultClass::key` prints what the file wrote.
    #[test]
    fn a_simulate_budget_key_is_its_fault_class_s_name() {
        let budgeted = [
            FaultClass::Crash,
            FaultClass::Isolation,
            FaultClass::Pause,
            FaultClass::StorageDelay,
            FaultClass::NodeJumpForward,
            FaultClass::ClientJumpBackward,
        ];
        for class in budgeted {
            let s = scenario(&format!(
                "[simulate]\n{} = {{ count = 2, min_ms = 1, max_ms = 7 }}",
                class.key()
            ));
            let b = budget(&SimConfig::from_scenario(&s).unwrap());
            for (other, its) in b.kinds() {
                let expected = if other == class { 2 } else { 0 };
                assert_eq!(
                    its.count, expected,
                    "{class} in the file, {other} in the budget"
                );
            }
            assert_eq!((b[class].min, b[class].max), (Millis(1), Millis(7)));
        }
    }

    #[test]
    fn partitions_and_pinned_jumps_are_exact() {
        let s = scenario(
            "[network]\nreach = [[1, 2], [2, 3]]\n[faults.clock_jumps]\ntarget = \"node\"\nindex = 2\njump_ticks = 2",
        );
        let config = SimConfig::from_scenario_at(&s, 10).unwrap();
        let set = |nodes: &[u8]| {
            let mut set = NodeSet::EMPTY;
            nodes.iter().for_each(|&n| set.insert(NodeId(n)));
            set
        };
        assert_eq!(config.reach, vec![set(&[0, 1]), set(&[1, 2])]);
        assert!(config.reaches(0, 1) && !config.reaches(0, 2));
        let b = budget(&config);
        assert_eq!(
            b[FaultClass::NodeJumpForward],
            KindBudget::new(1, Millis(20), Millis(20))
        );
        assert_eq!(b.pinned_node, Some(1));
        assert_eq!(
            b[FaultClass::ClientJumpForward].count + b[FaultClass::ClientJumpBackward].count,
            0
        );

        let back =
            scenario("[faults.clock_jumps]\ntarget = \"client\"\ncount = 2\njump_ticks = -3");
        let b = budget(&SimConfig::from_scenario(&back).unwrap());
        assert_eq!(
            b[FaultClass::ClientJumpBackward],
            KindBudget::new(2, Millis(3), Millis(3))
        );
        assert_eq!(b.pinned_client, None);

        let any = scenario("[faults.clock_jumps]\ntarget = \"any\"\ncount = 3\njump_ticks = 1");
        let b = budget(&SimConfig::from_scenario(&any).unwrap());
        assert_eq!(
            (
                b[FaultClass::NodeJumpForward].count,
                b[FaultClass::ClientJumpForward].count
            ),
            (2, 1)
        );
    }

    #[test]
    fn clock_error_becomes_a_rate_error_spread_over_a_lease() {
        let s = scenario(
            "[lock]\nttl_ticks = 5\n[clock]\nnode_error_ticks = 1\nclient_error_ticks = 1",
        );
        let config = SimConfig::from_scenario(&s).unwrap();
        // ρ_n·ttl = ε_n and ρ_c·ttl = ε_c: ρ = 1 / 5 on each side.
        assert_eq!(config.clocks.rate_error_ppm_max, 200_000);
        assert_eq!(config.clocks.client_rate_error_ppm(), 200_000);
        // Scale-free: the same ρ at any resolution.
        assert_eq!(
            SimConfig::from_scenario_at(&s, 10)
                .unwrap()
                .clocks
                .rate_error_ppm_max,
            200_000
        );
        let capped =
            scenario("[lock]\nttl_ticks = 2\ndrift_ticks = 1\n[clock]\nnode_error_ticks = 8");
        assert_eq!(
            SimConfig::from_scenario(&capped)
                .unwrap()
                .clocks
                .rate_error_ppm_max,
            MAX_RATE_ERROR_PPM
        );
        assert_eq!(
            SimConfig::from_scenario(&scenario(""))
                .unwrap()
                .clocks
                .rate_error_ppm_max,
            0
        );
    }

    #[test]
    fn crashes_keep_persistence_and_the_restart_delay_on_the_node_clock() {
        let s = scenario(
            "[faults.crashes]\ncount = 2\npersistence = \"fsync-periodic\"\nrestart_delay_ticks = 3",
        );
        let config = SimConfig::from_scenario_at(&s, 10).unwrap();
        assert_eq!(config.crash.persistence, Persistence::FsyncPeriodic);
        assert_eq!(config.crash.fsync_period, config.ttl);
        assert_eq!(config.crash.restart_delay, Millis(30));
        assert_eq!(
            budget(&config)[FaultClass::Crash],
            KindBudget::new(2, Millis(0), Millis(0))
        );
        // The clients' guard is a span of the node's clock, scaled like the restart delay.
        let guarded = scenario("[faults.crashes]\nrestart_delay_ticks = 1\nclient_guard_ticks = 3");
        let config = SimConfig::from_scenario_at(&guarded, 10).unwrap();
        assert_eq!(
            (config.crash.restart_delay, config.crash.client_guard),
            (Millis(10), Millis(30))
        );
        // A node that never restarts is down for longer than the run.
        let gone = scenario("[faults.crashes]\nrestart = false");
        let config = SimConfig::from_scenario(&gone).unwrap();
        assert!(budget(&config)[FaultClass::Crash].min >= config.duration);
    }

    #[test]
    fn the_storage_margin_and_cap_follow_the_models_ticks() {
        // Model: an op checked with 2 ticks left may land in the tick after its check's.
        // Simulator at 10 ms per tick: a step plus up to 5 ms of delay, 6 ms, of which
        // 10 + 9 ms are allowed: no extra margin, and storage delays of up to 13 ms more.
        let s = scenario(
            "[lock]\nttl_ticks = 6\n[storage]\nprotection = \"none\"\ncheck_margin_ticks = 2\nmax_delay_ticks = 1\n[faults.pauses]\ncount = 1\nmax_ticks = 2",
        );
        let config = SimConfig::from_scenario_at(&s, 10).unwrap();
        assert_eq!(config.workload.op_margin, Millis(20));
        // The clients read whole ticks, and an op lands by the end of the tick after its
        // check's: 19 ms from the start of the check's tick.
        assert_eq!(config.client_clock_resolution, Millis(10));
        assert_eq!(config.workload.op_arrival_cap, Some(Millis(19)));
        assert_eq!(
            budget(&config)[FaultClass::StorageDelay],
            KindBudget::new(2, Millis(0), Millis(13))
        );
        assert_eq!(
            budget(&config)[FaultClass::Pause],
            KindBudget::new(1, Millis(1), Millis(20))
        );
        assert_eq!(config.workload.cycles_per_lock, 1);
        assert_eq!(config.workload.protection, Protection::None);
        // The catalog's usual storage, at 10 ms per tick: the model's op lands in its check's
        // tick, and the simulator's 6 ms fit what is left of a tick after a check in its
        // first 4 ms (a later one waits for the next tick): the model's margin, and storage
        // delays of up to 3 ms more.
        let same_tick = scenario(
            "[lock]\nttl_ticks = 4\n[storage]\nprotection = \"fencing-token\"\n[faults.pauses]\ncount = 1",
        );
        let config = SimConfig::from_scenario_at(&same_tick, 10).unwrap();
        assert_eq!(config.workload.op_margin, Millis(10));
        assert_eq!(config.workload.op_arrival_cap, Some(Millis(9)));
        assert_eq!(
            budget(&config)[FaultClass::StorageDelay],
            KindBudget::new(2, Millis(0), Millis(3))
        );
        // At 1 ms per tick the simulator needs 2 ms where the model allows 1: the margin
        // grows by the difference, and no extra delay is left.
        let exact = SimConfig::from_scenario(&s).unwrap();
        assert_eq!(exact.workload.op_margin, Millis(3));
        assert_eq!(exact.workload.op_arrival_cap, Some(Millis(2)));
        assert_eq!(budget(&exact)[FaultClass::StorageDelay].count, 0);
        // Unbounded delays and pauses last up to three TTLs; the margin is the model's.
        let unbounded = scenario(
            "[storage]\nprotection = \"fencing-token\"\nmax_delay_ticks = \"unbounded\"\n[faults.pauses]\ncount = 1",
        );
        let config = SimConfig::from_scenario(&unbounded).unwrap();
        assert_eq!(config.workload.op_margin, Millis(1));
        assert_eq!(budget(&config)[FaultClass::StorageDelay].max, Millis(30));
        assert_eq!(config.workload.op_arrival_cap, None);
        assert_eq!(budget(&config)[FaultClass::Pause].max, Millis(30));
    }

    #[test]
    fn without_storage_every_client_gets_asynchrony_pauses() {
        let config = SimConfig::from_scenario(&scenario("[lock]\nclients = 3")).unwrap();
        assert_eq!(
            budget(&config)[FaultClass::Pause],
            KindBudget::new(3, Millis(1), Millis(20))
        );
        assert_eq!(config.workload.cycles_per_lock, 0);
        assert_eq!(config.workload.hold_max, Millis(20));
    }

    #[test]
    fn failover_and_extensions_are_simulated() {
        let failover = scenario("[lock]\nnodes = 1\n[failover]\npromotion_delay_ticks = 3");
        let config = SimConfig::from_scenario_at(&failover, 10).unwrap();
        // The replica copies every TTL (10 ticks by default).
        assert_eq!(
            config.crash.failover,
            Some(Failover {
                node: 0,
                every_node: false,
                replication_period: Millis(100),
                promotion_delay: Millis(30),
                replicas: 1,
                wait: 0,
            })
        );
        let b = budget(&config);
        assert_eq!(
            (b[FaultClass::Failover].count, b[FaultClass::Crash].count),
            (1, 0),
            "one failover"
        );
        // On several nodes n1 alone is replicated; the failover is still one fault.
        let one_of_three = scenario("[lock]\nnodes = 3\n[failover]\n[faults.crashes]\ncount = 1");
        let config = SimConfig::from_scenario_at(&one_of_three, 10).unwrap();
        assert_eq!(config.crash.failover.map(|f| f.node), Some(0));
        let b = budget(&config);
        assert_eq!(
            (b[FaultClass::Failover].count, b[FaultClass::Crash].count),
            (1, 1)
        );
        // Extensions are simulated: the holder calls the core's `extend`.
        let extension = scenario("[lock]\nextensions = 2");
        assert_eq!(
            SimConfig::from_scenario(&extension)
                .unwrap()
                .workload
                .extensions,
            2
        );
    }

    #[test]
    fn a_request_may_stay_in_flight_for_the_rest_of_the_run() {
        let s = scenario("[lock]\nnodes = 3\n[faults.crashes]\nrestart_delay_ticks = 4");
        let config = SimConfig::from_scenario_at(&s, 10).unwrap();
        let b = budget(&config);
        assert_eq!(
            b[FaultClass::RequestDelay],
            KindBudget::new(3, Millis(0), config.ttl)
        );
        assert_eq!(
            b[FaultClass::RequestStall],
            KindBudget::new(3, config.duration, config.duration)
        );
        // A rival may begin once the crashed node serves again, and later.
        let swarm = config.swarm.unwrap();
        assert_eq!(swarm.think_max, Millis(2 * 100 + 40));
        // A rival aimed at the first holder's keys begins as they expire, or a tick after
        // the restart delay of a node that crashed with one of them.
        assert_eq!(swarm.rival_starts, [Millis(100), Millis(100), Millis(50)]);
        // Or as a node whose clock jumped forward drops one.
        let jump = scenario("[faults.clock_jumps]\ntarget = \"node\"\njump_ticks = 2");
        let swarm = SimConfig::from_scenario_at(&jump, 10)
            .unwrap()
            .swarm
            .unwrap();
        assert_eq!(swarm.rival_starts, [Millis(80), Millis(100), Millis(100)]);
    }

    #[test]
    fn client_crashes_least_retry_delays_and_shared_tokens_are_simulated() {
        let s = scenario(
            "[lock]\nttl_ticks = 3\nattempts = 2\nretry_delay_ticks = 2\ntoken = \"shared\"\n[faults.client_crashes]\ncount = 1",
        );
        let config = SimConfig::from_scenario_at(&s, 10).unwrap();
        assert_eq!(budget(&config)[FaultClass::ClientCrash].count, 1);
        // The least back-off is the scenario's; longer ones are drawn up to a TTL.
        assert_eq!(
            (config.lock.retry.delay_min, config.lock.retry.delay_max),
            (Millis(20), Millis(30))
        );
        assert!(config.workload.shared_token);
        // A least back-off longer than a TTL is drawn exactly.
        let long = scenario("[lock]\nttl_ticks = 3\nretry_delay_ticks = 5");
        let config = SimConfig::from_scenario_at(&long, 10).unwrap();
        assert_eq!(
            (config.lock.retry.delay_min, config.lock.retry.delay_max),
            (Millis(50), Millis(50))
        );
        assert!(!config.workload.shared_token);
        assert_eq!(budget(&config)[FaultClass::ClientCrash].count, 0);
    }

    #[test]
    fn a_simulate_table_builds_a_long_workload_with_its_own_faults() {
        let text = "name = \"w\"\ntitle = \"t\"\nclaim = \"c\"\nsource = \"derived\"\nprose = \"p\"\n[lock]\nnodes = 3\nclients = 2\nttl_ticks = 50\ndrift_ticks = 5\n[storage]\nprotection = \"none\"\ncheck_margin_ticks = 10\n[faults.crashes]\ncount = 1\nrestart_delay_ticks = 50\n[simulate]\nms_per_tick = 2\nduration_ms = 700\ndelay_max_ms = 8\nloss_per_mille = 100\nclock_rate_error_ppm = 10000\nisolations = { count = 4, min_ms = 10, max_ms = 200 }\n[simulate.expect]\n\"mutual exclusion\" = \"holds\"\n";
        let s = Scenario::from_str("w.toml", text).unwrap();
        let config = SimConfig::from_scenario(&s).unwrap();
        // Scenario ticks at the file's 2 ms per tick; [simulate] spans in ms.
        assert_eq!(
            (config.ttl, config.lock_params().unwrap().drift),
            (Millis(100), Millis(10))
        );
        assert_eq!(config.crash.restart_delay, Millis(100));
        assert_eq!(config.workload.op_margin, Millis(20));
        assert_eq!(config.duration, Millis(700));
        assert_eq!(
            (config.network.delay_max, config.network.loss_per_mille),
            (Millis(8), 100)
        );
        assert_eq!(config.clocks.client_rate_error_ppm(), 10_000);
        // A workload: no one-acquisition limit, no swarm, and only the table's faults.
        assert_eq!(config.workload.acquisitions_per_client, None);
        assert_eq!(config.swarm, None);
        assert!(config.reach.is_empty());
        let b = budget(&config);
        assert_eq!(
            b[FaultClass::Isolation],
            KindBudget::new(4, Millis(10), Millis(200))
        );
        assert_eq!(
            (
                b[FaultClass::Crash].count,
                b[FaultClass::Pause].count,
                b[FaultClass::RequestDelay].count
            ),
            (0, 0, 0)
        );
        // Another resolution scales the scenario's ticks, not the table's milliseconds.
        let coarse = SimConfig::from_scenario_at(&s, 4).unwrap();
        assert_eq!((coarse.ttl, coarse.duration), (Millis(200), Millis(700)));
    }
}
