//! Seeded simulator runs, judged on both sides: worlds that meet antirez's assumptions never
//! break mutual exclusion, and worlds that break one assumption (a clock jump larger than the
//! drift, a drift that does not cover the clock error, a crash without persistence, a pause
//! past the validity without fencing) are caught within a bounded number of seeds.
//!
//! The worlds are the simulator's scenario files, `models/sim/*.toml` (embedded as
//! `catalog::SIMULATOR_WORLDS`). A failure prints its replay command,
//! `redlock-lab simulate <name> --seed <seed>`; the `replay` test below prints a whole trace.

mod common;

use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, RngSeed, TestCaseError, TestRunner};
use redlock_lab::actor::{Actor, Process};
use redlock_lab::catalog::{self, SIMULATOR_WORLDS};
use redlock_lab::event::Event;
use redlock_lab::fault::CrashWhen;
use redlock_lab::node::Persistence;
use redlock_lab::proto::Op;
use redlock_lab::scenario::Verdict;
use redlock_lab::sim::{
    self, Failover, Fault, FaultBudget, FaultPlan, Outcome, Payload, Property, ScheduledFault,
    SimConfig, TraceEntry, TraceEvent,
};
use redlock_lab::storage::Protection;
use redlock_lab::time::Millis;

/// Where failing cases are kept, and tried first on every later run.
const REGRESSIONS: &str = "proptest-regressions/simulator.txt";

const ALL: [Property; 3] = [
    Property::MutualExclusion,
    Property::StorageSafety,
    Property::NoLostUpdate,
];

/// What a client did, as the trace tells it: its index and the event.
fn by_client(entry: &TraceEntry) -> Option<(usize, &Event)> {
    let TraceEvent::Moment(moment) = &entry.event else {
        return None;
    };
    match moment.actor {
        Actor::Client(c) => Some((usize::from(c), &moment.event)),
        _ => None,
    }
}

/// The client whose storage op reached the storage at this entry, if one did.
fn op_arrived(entry: &TraceEntry) -> Option<usize> {
    match entry.event.told() {
        Some(Event::OpArrived {
            client: Actor::Client(c),
            ..
        }) => Some(usize::from(*c)),
        _ => None,
    }
}

/// The world of `models/sim/<name>.toml`.
fn world(name: &str) -> SimConfig {
    let file = catalog::find_world(name).unwrap_or_else(|| panic!("no models/sim/{name}.toml"));
    let scenario = file.scenario().unwrap_or_else(|e| panic!("{e}"));
    SimConfig::from_scenario(&scenario).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Every simulator world's name, from its file.
fn world_names() -> Vec<&'static str> {
    SIMULATOR_WORLDS
        .iter()
        .map(|w| {
            w.file
                .strip_prefix("models/sim/")
                .and_then(|f| f.strip_suffix(".toml"))
                .expect("models/sim/<name>.toml")
        })
        .collect()
}

fn run(config: &SimConfig, seed: u64) -> Outcome {
    sim::run(config, seed).unwrap_or_else(|e| panic!("{} is invalid: {e}", config.name))
}

/// Runs seeds `0..seeds` and asserts that every run keeps `properties`.
fn assert_holds(config: &SimConfig, seeds: u64, properties: &[Property]) -> Vec<Outcome> {
    (0..seeds)
        .map(|seed| {
            let outcome = run(config, seed);
            for &property in properties {
                assert!(
                    outcome.holds(property),
                    "{} broke {property} with seed {seed}:\n{}",
                    config.name,
                    outcome.report(60)
                );
            }
            outcome
        })
        .collect()
}

/// Searches seeds `0..seeds` for a run that breaks `property`, prints which seed found it,
/// and returns that run; fails if none does (a detector that never fires is a defect).
fn find_violation(config: &SimConfig, seeds: u64, property: Property) -> Outcome {
    for seed in 0..seeds {
        let outcome = run(config, seed);
        if !outcome.holds(property) {
            println!(
                "{}: seed {seed} breaks {property}\n{}",
                config.name,
                outcome.report(30)
            );
            return outcome;
        }
    }
    panic!(
        "{}: no seed in 0..{seeds} breaks {property}; the detector never fired",
        config.name
    );
}

// ---------------------------------------------------------------------------------------------
// The safe side: antirez's assumptions hold.

#[test]
fn antirez_assumptions_keep_every_property_with_generated_faults() {
    // Loss, partitions, pauses of any length, delayed storage writes, 1% clock rate error
    // covered by the drift, crashes with a restart delay of one TTL (or fsync=always), and a
    // fencing token at the storage.
    for name in ["antirez-safe", "antirez-safe-fsync"] {
        let config = world(name);
        let seeds = 500;
        let outcomes = assert_holds(&config, seeds, &ALL);
        let acquisitions: u64 = outcomes
            .iter()
            .map(|o| u64::from(o.stats.acquisitions))
            .sum();
        let faults: u64 = outcomes
            .iter()
            .map(|o| u64::from(o.stats.faults_applied))
            .sum();
        // The runs must exercise the lock and the faults, or "holds" means nothing.
        assert!(
            acquisitions > seeds * 10,
            "{name}: {acquisitions} acquisitions"
        );
        assert!(faults > seeds * 5, "{name}: {faults} faults");
    }
}

#[test]
fn a_drift_that_covers_the_clock_rate_error_keeps_mutual_exclusion() {
    // 10% rate error, drift = 2ρ·ttl + 2 ms exactly: the boundary of timing condition (I1).
    let config = world("drift-covered");
    assert_eq!(
        config.lock_params().unwrap().drift,
        config.drift_covering_clock_error()
    );
    assert_holds(&config, 300, &[Property::MutualExclusion]);
}

/// A fault that antirez's assumptions allow: partitions, pauses, crashes with a long enough
/// restart delay, delayed storage writes, and the clock jumps that only cost liveness (a node
/// clock stepping back, a client clock stepping forward).
fn allowed_fault(nodes: usize, clients: usize) -> impl Strategy<Value = ScheduledFault> {
    let fault = prop_oneof![
        (0..nodes, 1..300u64).prop_map(|(node, ms)| Fault::Isolate {
            node,
            duration: Millis(ms)
        }),
        (0..clients, 1..400u64).prop_map(|(client, ms)| Fault::Pause {
            client,
            duration: Millis(ms)
        }),
        (0..nodes, 0..100u64).prop_map(|(node, ms)| Fault::Crash {
            node,
            downtime: Millis(ms)
        }),
        (0..clients, 1..300u64).prop_map(|(client, ms)| Fault::DelayStorageOp {
            client,
            extra: Millis(ms)
        }),
        (0..nodes, 1..200i64).prop_map(|(node, ms)| Fault::ClockJump {
            process: Process::node(node),
            by_ms: -ms
        }),
        (0..clients, 1..200i64).prop_map(|(client, ms)| Fault::ClockJump {
            process: Process::client(client),
            by_ms: ms
        }),
    ];
    (0..2_000u64, fault).prop_map(|(at, fault)| ScheduledFault {
        at: Millis(at),
        fault,
    })
}

proptest! {
    #![proptest_config(common::cases(256, REGRESSIONS))]

    #[test]
    fn explicit_schedules_within_antirez_assumptions_keep_every_property(
        seed in any::<u64>(),
        schedule in prop::collection::vec(allowed_fault(5, 3), 0..24),
    ) {
        let mut config = world("antirez-safe");
        config.name = "antirez-safe-explicit".to_owned();
        config.faults = FaultPlan::Explicit(schedule);
        let outcome = run(&config, seed);
        prop_assert!(outcome.is_clean(), "{}", outcome.report(60));
    }
}

// ---------------------------------------------------------------------------------------------
// The unsafe side: one assumption broken, and the detector fires.

/// One forward jump of `by_ms` every 250 ms, on the nodes in turn: no key lives through two
/// jumps, so the jump size alone decides.
fn spaced_node_jumps(config: &SimConfig, by_ms: i64) -> Vec<ScheduledFault> {
    (0..config.duration.0 / 250)
        .map(|i| ScheduledFault {
            at: Millis(100 + 250 * i),
            fault: Fault::ClockJump {
                process: Process::node(i as usize % config.nodes()),
                by_ms,
            },
        })
        .collect()
}

#[test]
fn node_clock_jumps_break_mutual_exclusion_only_beyond_the_drift() {
    let mut config = world("node-clock-jump");
    let drift = config.lock_params().unwrap().drift.0 as i64;
    // The drift also covers the 1% rate error; what is left over absorbs a jump.
    let slack = drift - config.drift_covering_clock_error().0 as i64;
    assert!(slack > 0);

    config.name = "node-clock-jump-within-slack".to_owned();
    config.faults = FaultPlan::Explicit(spaced_node_jumps(&config, slack));
    let outcomes = assert_holds(&config, 200, &[Property::MutualExclusion]);
    assert!(outcomes.iter().all(|o| o.stats.faults_applied >= 7));

    config.name = "node-clock-jump-beyond-drift".to_owned();
    config.faults = FaultPlan::Explicit(spaced_node_jumps(&config, drift + 40));
    find_violation(&config, 200, Property::MutualExclusion);
}

#[test]
fn a_node_clock_jump_larger_than_the_drift_is_found_with_generated_faults() {
    let config = world("node-clock-jump");
    let outcome = find_violation(&config, 100, Property::MutualExclusion);
    // The violation follows a forward jump of a node clock: the only fault in this world.
    let violation = outcome.first_violation(Property::MutualExclusion).unwrap();
    assert!(outcome.schedule.iter().any(|f| f.at <= violation.at()
        && matches!(f.fault, Fault::ClockJump { process: Process::Node(_), by_ms } if by_ms > 10)));
    // Without the jumps, the same seeds keep mutual exclusion.
    let mut calm = config.clone();
    calm.name = "node-clock-jump-without-jumps".to_owned();
    calm.faults = FaultPlan::Generated(FaultBudget::NONE);
    assert_holds(&calm, outcome.seed + 1, &[Property::MutualExclusion]);
}

#[test]
fn a_backward_jump_of_a_holders_clock_is_found() {
    let mut config = world("client-clock-jump-backward");
    // Holders work until their deadline, so a holder's extended belief meets the next holder.
    config.workload.cycles_per_lock = 1_000;
    config.name = "client-clock-jump-backward-long-holds".to_owned();
    find_violation(&config, 100, Property::MutualExclusion);
}

#[test]
fn a_drift_that_does_not_cover_the_clock_rate_error_is_found() {
    let config = world("drift-too-small");
    assert!(config.lock_params().unwrap().drift < config.drift_covering_clock_error());
    find_violation(&config, 100, Property::MutualExclusion);
}

#[test]
fn crashes_without_persistence_or_with_periodic_fsync_are_found_and_a_delayed_restart_or_fsync_always_prevents_them()
 {
    let config = world("crash-no-persistence");
    let outcome = find_violation(&config, 100, Property::MutualExclusion);
    let mut delayed = config.clone();
    delayed.name = "crash-delayed-restart".to_owned();
    delayed.crash.restart_delay = delayed.ttl;
    assert_holds(&delayed, outcome.seed + 100, &[Property::MutualExclusion]);
    let mut fsync = config.clone();
    fsync.name = "crash-fsync-always".to_owned();
    fsync.crash.persistence = Persistence::FsyncAlways;
    assert_holds(&fsync, outcome.seed + 100, &[Property::MutualExclusion]);
    // appendfsync everysec: a key set since the last fsync is lost like without persistence.
    let mut everysec = config;
    everysec.name = "crash-fsync-everysec".to_owned();
    everysec.crash.persistence = Persistence::FsyncPeriodic;
    everysec.crash.fsync_period = Millis(1_000);
    find_violation(&everysec, 100, Property::MutualExclusion);
}

#[test]
fn unlock_with_plain_del_is_found_and_compare_and_delete_is_not() {
    let config = world("unlock-with-del");
    let outcome = find_violation(&config, 20, Property::MutualExclusion);
    let mut cad = config;
    cad.name = "unlock-with-compare-and-delete".to_owned();
    cad.lock.unlock = redlock_lab::proto::UnlockMode::CompareAndDelete;
    assert_holds(&cad, outcome.seed + 50, &[Property::MutualExclusion]);
}

#[test]
fn a_pause_past_the_validity_loses_updates_without_fencing_and_none_with_it() {
    let unfenced = world("pause-past-validity");
    let fenced = world("pause-past-validity-fenced");
    // Mutual exclusion (belief) holds throughout: the paused holder's clock tells it the
    // lease is over. The damage is at the storage.
    let mut lost_update_seed = None;
    for seed in 0..200 {
        let outcome = run(&unfenced, seed);
        assert!(
            outcome.holds(Property::MutualExclusion),
            "{}",
            outcome.report(60)
        );
        if !outcome.holds(Property::NoLostUpdate) {
            println!(
                "pause-past-validity: seed {seed} loses an update\n{}",
                outcome.report(30)
            );
            lost_update_seed = Some(seed);
            break;
        }
    }
    let seed = lost_update_seed.expect("a pause past the validity must lose an update");
    // The same seed, and every seed up to it and beyond, with fencing: nothing is lost.
    let fenced_outcome = run(&fenced, seed);
    assert_eq!(
        fenced_outcome.schedule,
        run(&unfenced, seed).schedule,
        "same faults"
    );
    assert_holds(&fenced, seed + 100, &ALL);
}

#[test]
fn pauses_within_the_margin_keep_the_storage_safe_without_fencing_and_beyond_it_do_not() {
    // Timing condition (I6): a holder that stops issuing storage operations M before its
    // deadline is safe without fencing while pause + delivery delay stay below M + drift.
    let config = world("pause-within-margin");
    assert_eq!(config.workload.protection, Protection::None);
    assert_holds(&config, 300, &ALL);
    let mut no_margin = config;
    no_margin.name = "pause-without-margin".to_owned();
    no_margin.workload.op_margin = Millis(0);
    find_violation(&no_margin, 300, Property::NoLostUpdate);
}

#[test]
fn skipping_the_validity_check_is_found_and_the_check_prevents_it() {
    // Kleppmann's GC pause during acquisition breaks a client that skips step 3; antirez's
    // answer is the check anchored at T1.
    let config = world("validity-check-off");
    find_violation(&config, 100, Property::MutualExclusion);
    let mut checked = config;
    checked.name = "validity-check-on".to_owned();
    checked.lock.validity_check = redlock_lab::proto::ValidityCheck::On;
    assert_holds(&checked, 300, &[Property::MutualExclusion]);
}

#[test]
fn a_delayed_restart_of_one_ttl_holds_until_the_clock_jumps_during_the_delay() {
    // antirez: restart after more than a TTL. Kleppmann: the delay is measured on a clock.
    assert_holds(&world("delayed-restart"), 300, &[Property::MutualExclusion]);
    find_violation(
        &world("delayed-restart-clock-jump"),
        100,
        Property::MutualExclusion,
    );
}

#[test]
fn a_world_with_failover_has_the_replicated_master_and_fails_over_when_its_schedule_says() {
    // Before the schedule could name a failover, a world ignored `[failover]`: its master had
    // no replica and nothing promoted one.
    let config = world("failover");
    let failover = config
        .crash
        .failover
        .expect("the world's master is replicated");
    assert_eq!((failover.node, failover.replicas, failover.wait), (0, 1, 0));
    let FaultPlan::Explicit(schedule) = &config.faults else {
        panic!("the world lists its faults");
    };
    assert!(
        schedule
            .iter()
            .any(|f| f.fault == Fault::Failover && f.at == Millis(550)),
        "{schedule:?}"
    );
    let outcome = find_violation(&config, 100, Property::MutualExclusion);
    assert!(
        outcome
            .trace
            .iter()
            .any(|entry| matches!(&entry.event, TraceEvent::Moment(m) if matches!(m.event, Event::Promoted { .. }))),
        "the failover struck"
    );
    // With the master waiting for its replica, no seed finds two holders.
    let mut wait = config;
    wait.name = "failover-wait".to_owned();
    wait.crash.failover = Some(Failover {
        wait: 1,
        ..failover
    });
    assert_holds(&wait, outcome.seed + 100, &[Property::MutualExclusion]);
}

#[test]
fn random_token_cas_keeps_updates_but_not_the_fenced_order() {
    // antirez's alternative to fencing: no lost update, but a stale holder may still act after
    // a newer one (scenario `antirez-random-token-cas`).
    let mut config = world("pause-past-validity");
    config.name = "pause-past-validity-cas".to_owned();
    config.workload.protection = Protection::RandomTokenCas;
    let outcomes = assert_holds(&config, 300, &[Property::NoLostUpdate]);
    assert!(
        outcomes.iter().any(|o| !o.holds(Property::StorageSafety)),
        "a stale holder marking after a newer one must show in 300 seeds"
    );
}

#[test]
fn fencing_reads_as_well_as_writes_matters() {
    // Fencing on writes only: a stale read followed by a fresh write loses an update.
    let mut config = world("pause-past-validity");
    config.name = "pause-past-validity-writes-fenced".to_owned();
    config.workload.protection = Protection::FencingOnWritesOnly;
    config.stop_on_violation = false;
    let mut budget = FaultBudget::NONE;
    budget[sim::FaultClass::StorageDelay] = sim::KindBudget::new(8, Millis(20), Millis(300));
    config.faults = FaultPlan::Generated(budget);
    find_violation(&config, 300, Property::NoLostUpdate);
}

// ---------------------------------------------------------------------------------------------
// Shrinking: proptest reduces a failing schedule to the fault that matters.

#[test]
fn a_failing_schedule_shrinks_to_a_forward_node_jump_beyond_the_drift() {
    let mut config = world("node-clock-jump");
    config.name = "node-clock-jump-explicit".to_owned();
    let drift = config.lock_params().unwrap().drift.0 as i64;
    let fault = prop_oneof![
        (0..3usize, 1..120i64).prop_map(|(node, ms)| Fault::ClockJump {
            process: Process::node(node),
            by_ms: ms
        }),
        (0..3usize, 1..300u64).prop_map(|(node, ms)| Fault::Isolate {
            node,
            duration: Millis(ms)
        }),
        (0..3usize, 1..300u64).prop_map(|(client, ms)| Fault::Pause {
            client,
            duration: Millis(ms)
        }),
    ];
    let schedule = prop::collection::vec(
        (0..2_000u64, fault).prop_map(|(at, fault)| ScheduledFault {
            at: Millis(at),
            fault,
        }),
        0..30,
    );
    let mut runner = TestRunner::new(ProptestConfig {
        cases: 256,
        rng_seed: RngSeed::Fixed(1),
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let result = runner.run(&(0..4u64, schedule), |(seed, schedule)| {
        let mut config = config.clone();
        config.faults = FaultPlan::Explicit(schedule);
        let outcome = run(&config, seed);
        if outcome.holds(Property::MutualExclusion) {
            Ok(())
        } else {
            Err(TestCaseError::fail(format!("{:?}", config.faults)))
        }
    });
    let Err(proptest::test_runner::TestError::Fail(_, (seed, minimal))) = result else {
        panic!("no schedule broke mutual exclusion: {result:?}");
    };
    println!("minimal schedule (seed {seed}): {minimal:#?}");
    assert!(
        minimal.iter().any(|f| matches!(
            f.fault,
            Fault::ClockJump { process: Process::Node(_), by_ms } if by_ms > drift
        )),
        "the minimal schedule keeps a node jump beyond the drift: {minimal:?}"
    );
    assert!(minimal.len() <= 3, "shrunk to a few faults: {minimal:?}");
}

// ---------------------------------------------------------------------------------------------
// Determinism and reports.

/// What the trace says of the keys so far: per node, whose key it holds (`Unknown` after a
/// failover, whose replica may hold an older key), and per client, the nodes that applied
/// its `SET` or write-back since its current round began.
struct Keys {
    owners: Vec<Option<Option<Actor>>>,
    applied: Vec<Vec<Actor>>,
}

impl Keys {
    /// Checks one told event of `actor` against what the trace said before it, then records
    /// it; `Err` says what the event got wrong.
    fn record(&mut self, actor: Actor, event: &Event) -> Result<(), String> {
        match (actor, event) {
            (Actor::Node(n), event) => self.node(usize::from(n), actor, event),
            (Actor::Client(c), Event::RoundBegan { .. } | Event::NotAcquired { .. }) => {
                self.applied[usize::from(c)].clear();
                Ok(())
            }
            (Actor::Client(c), Event::Acquired { on, .. }) => {
                let applied = &self.applied[usize::from(c)];
                match on
                    .0
                    .iter()
                    .map(|n| Actor::node(n.index()))
                    .find(|n| !applied.contains(n))
                {
                    Some(n) => Err(format!(
                        "{actor} acquires on {n}, which applied nothing of its round"
                    )),
                    None => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }

    /// A node's event: its key's owner before it must be what the event says.
    fn node(&mut self, n: usize, node: Actor, event: &Event) -> Result<(), String> {
        let owner = &mut self.owners[n];
        let claims = |said: Option<Actor>, owner: Option<Option<Actor>>| match owner {
            Some(known) if known != said => Err(format!(
                "{node} says the key is {said:?}'s where the trace left {known:?}'s: {event:?}"
            )),
            _ => Ok(()),
        };
        match *event {
            Event::KeySet { client, .. } => {
                *owner = Some(Some(client));
                self.applied[client_index(client)].push(node);
            }
            Event::FenceRaised { client, .. } => self.applied[client_index(client)].push(node),
            Event::SetRefused { holder, .. } => claims(holder, *owner)?,
            Event::KeyExpired { owner: expired, .. } => {
                claims(Some(expired), *owner)?;
                *owner = Some(None);
            }
            Event::ReleaseServed { deleted: true, .. } => *owner = Some(None),
            Event::Crashed { key, .. } => {
                claims(key.map(|(held, _)| held), *owner)?;
                if key.is_some_and(|(_, kept)| !kept) {
                    *owner = Some(None);
                }
            }
            Event::Promoted { .. } => *owner = None,
            _ => {}
        }
        Ok(())
    }
}

fn client_index(client: Actor) -> usize {
    match client {
        Actor::Client(c) => usize::from(c),
        other => panic!("{other} is not a client"),
    }
}

/// The simulator's counterpart of the checker's story test: every node event says of the key
/// what the events before it left there (a refusal names the client whose `SET` the node
/// applied last, an expiry or a crash names the key it held), and an acquisition names only
/// nodes that applied the client's `SET` (or write-back) in its round.
#[test]
fn every_told_event_agrees_with_the_keys_the_trace_left() {
    let worlds = world_names().into_iter().map(world);
    let bridged = catalog::CATALOG.iter().filter_map(|file| {
        let scenario = redlock_lab::scenario::Scenario::from_str(file.file, file.text).ok()?;
        SimConfig::from_scenario(&scenario).ok()
    });
    let mut told = 0;
    for config in worlds.chain(bridged) {
        for seed in 0..10 {
            let outcome = run(&config, seed);
            let mut keys = Keys {
                owners: vec![Some(None); config.lock.node_count],
                applied: vec![Vec::new(); config.clients],
            };
            for entry in &outcome.trace {
                if let TraceEvent::Moment(moment) = &entry.event {
                    told += 1;
                    if let Err(wrong) = keys.record(moment.actor, &moment.event) {
                        panic!(
                            "{} seed {seed} at {}: {wrong}\n{}",
                            config.name,
                            entry.at,
                            outcome.report(40)
                        );
                    }
                }
            }
        }
    }
    assert!(told > 10_000, "only {told} events told");
}

#[test]
fn replaying_a_seed_reproduces_the_identical_trace() {
    for name in world_names() {
        let config = world(name);
        let first = run(&config, 42);
        let again = run(&config, 42);
        assert!(!first.trace.is_empty());
        assert_eq!(first.trace, again.trace, "{name}: the trace replays");
        assert_eq!(first.violations, again.violations);
        assert_eq!(first.stats, again.stats);
        // The comparison can fail: another seed gives another trace.
        assert_ne!(first.trace, run(&config, 43).trace, "{name}: seeds matter");
    }
}

#[test]
fn a_run_prints_the_seed_and_every_option_first_and_a_failure_its_replay_command() {
    let config = world("unlock-with-del");
    let outcome = find_violation(&config, 20, Property::MutualExclusion);
    let report = outcome.report(20);
    assert!(report.starts_with(&format!(
        "seed = {}\nname = unlock-with-del\n",
        outcome.seed
    )));
    for option in [
        "nodes = 3",
        "ttl = 100 ms",
        "unlock = del",
        "schedule (0 faults)",
    ] {
        assert!(report.contains(option), "missing {option:?}:\n{report}");
    }
    let command = format!(
        "redlock-lab simulate unlock-with-del --seed {}",
        outcome.seed
    );
    assert!(report.contains(&command), "{report}");
    // A changed world is no longer the file's: the command must not pretend to replay it.
    let mut custom = config;
    custom.lock.node_count = 5;
    assert!(
        !run(&custom, 0)
            .replay_command()
            .contains("redlock-lab simulate")
    );
}

#[test]
fn a_bad_configuration_is_refused_with_a_typed_error() {
    let mut config = world("antirez-safe");
    config.faults = FaultPlan::Explicit(vec![ScheduledFault {
        at: Millis(0),
        fault: Fault::Pause {
            client: 9,
            duration: Millis(1),
        },
    }]);
    let error = sim::run(&config, 0).unwrap_err();
    assert!(matches!(
        error,
        sim::SimConfigError::NoSuchProcess { index: 0, .. }
    ));
    assert_eq!(
        error.to_string(),
        "fault #0 targets c10, which this configuration does not have"
    );
}

#[test]
fn faults_that_do_not_apply_are_ignored_not_fatal() {
    let mut config = world("antirez-safe");
    let crash = Fault::Crash {
        node: 0,
        downtime: Millis(500),
    };
    config.faults = FaultPlan::Explicit(vec![
        ScheduledFault {
            at: Millis(10),
            fault: crash,
        },
        ScheduledFault {
            at: Millis(20),
            fault: crash,
        },
    ]);
    let outcome = run(&config, 1);
    assert_eq!(outcome.stats.faults_applied, 1);
    assert_eq!(outcome.stats.faults_ignored, 1);
    assert!(outcome.is_clean(), "{}", outcome.report(40));
}

/// Replays one run: `REDLOCK_SIM_WORLD=<name> REDLOCK_SIM_SEED=<seed> cargo test --test
/// simulator -- --exact replay --nocapture` prints its header (the seed and every option), its
/// whole trace and its summary (`redlock-lab simulate <name> --seed <seed>` prints the tail).
/// Without the variables it replays `antirez-safe` with seed 0. It fails if the replay is not
/// identical to a second run, or if the variables name no world or no seed.
#[test]
fn replay() {
    let name = std::env::var("REDLOCK_SIM_WORLD").unwrap_or_else(|_| "antirez-safe".to_owned());
    let seed = match std::env::var("REDLOCK_SIM_SEED") {
        Ok(text) => text
            .trim()
            .parse::<u64>()
            .unwrap_or_else(|_| panic!("REDLOCK_SIM_SEED={text:?} is not a u64")),
        Err(_) => 0,
    };
    assert!(
        catalog::find_world(&name).is_some(),
        "REDLOCK_SIM_WORLD={name:?} names no world; worlds: {:?}",
        world_names()
    );
    let config = world(&name);
    let outcome = run(&config, seed);
    println!("{}", outcome.header());
    println!("{}", outcome.trace_text());
    println!("{}", outcome.summary());
    assert_eq!(
        outcome.trace,
        run(&config, seed).trace,
        "the replay is exact"
    );
}

// ---------------------------------------------------------------------------------------------
// The worlds' files.

#[test]
fn every_world_is_valid_named_after_its_file_and_outside_the_checkers_catalog() {
    let names = world_names();
    assert_eq!(names.len(), 15, "{names:?}");
    for name in names {
        let config = world(name);
        config.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(config.name, name);
        assert!(
            catalog::find(name).is_none(),
            "{name} is not a checker scenario"
        );
        let scenario = catalog::find_world(name).unwrap().scenario().unwrap();
        let simulate = scenario.simulate.expect("a world has [simulate]");
        assert!(!simulate.expect.is_empty(), "{name}: [simulate.expect]");
    }
}

#[test]
fn the_safe_worlds_cover_their_clock_error_and_drift_too_small_does_not() {
    for name in [
        "antirez-safe",
        "antirez-safe-fsync",
        "drift-covered",
        "delayed-restart",
    ] {
        let config = world(name);
        assert!(config.lock_params().unwrap().drift >= config.drift_covering_clock_error());
        let crashes = match &config.faults {
            FaultPlan::Generated(budget) => budget[sim::FaultClass::Crash].count > 0,
            FaultPlan::Explicit(schedule) => !schedule.is_empty(),
        };
        assert!(
            !crashes
                || config.crash.persistence == Persistence::FsyncAlways
                || config.crash.restart_delay >= config.ttl,
            "{name}"
        );
    }
    let config = world("drift-too-small");
    assert!(config.lock_params().unwrap().drift < config.drift_covering_clock_error());
}

#[test]
fn every_worlds_expectation_is_what_its_seeds_show() {
    // `[simulate.expect]` is the simulator's own verdict: a property expected violated is
    // violated within a few hundred seeds, one expected to hold is kept by the first 50.
    for file in SIMULATOR_WORLDS {
        let scenario = file.scenario().unwrap();
        let config = SimConfig::from_scenario(&scenario).unwrap();
        for (name, verdict) in &scenario.simulate.as_ref().unwrap().expect {
            let property = ALL
                .into_iter()
                .find(|p| p.name() == name)
                .unwrap_or_else(|| panic!("{}: {name} is not judged by the simulator", file.file));
            match verdict {
                Verdict::Violated => {
                    find_violation(&config, 300, property);
                }
                Verdict::Holds => {
                    assert_holds(&config, 50, &[property]);
                }
                other => panic!("{}: {name} = {other} is not an expectation", file.file),
            }
        }
    }
}

/// The first acquisition of a fault-free run of `config` from `seed`: (client, true time of
/// its T1, true time it acquired).
fn first_acquisition(config: &SimConfig, seed: u64) -> (usize, Millis, Millis) {
    let outcome = run(config, seed);
    let (client, acquired) = outcome
        .trace
        .iter()
        .find_map(|e| match by_client(e) {
            Some((client, Event::Acquired { .. })) => Some((client, e.at)),
            _ => None,
        })
        .unwrap_or_else(|| panic!("seed {seed} acquires: {}", outcome.report(40)));
    let started = outcome
        .trace
        .iter()
        .filter(|e| e.at <= acquired)
        .filter_map(|e| match by_client(e) {
            Some((c, Event::RoundBegan { .. })) if c == client => Some(e.at),
            _ => None,
        })
        .next_back()
        .expect("an acquisition starts before it succeeds");
    (client, started, acquired)
}

#[test]
fn a_crashed_client_sends_nothing_more_and_its_keys_hold_the_lock_until_they_expire() {
    let mut config = SimConfig {
        clients: 2,
        ..SimConfig::default()
    };
    config.workload.cycles_per_lock = 0;
    config.workload.hold_max = Millis(50);
    let seed = 3;
    let (dead, started, acquired) = first_acquisition(&config, seed);
    // The same seed with the holder dying just after it acquired: the faults have their own
    // stream, so the run is the same up to the crash.
    let crash_at = acquired + Millis(1);
    config.faults = FaultPlan::Explicit(vec![ScheduledFault {
        at: crash_at,
        fault: Fault::CrashClient {
            client: dead,
            when: CrashWhen::Any,
        },
    }]);
    let outcome = run(&config, seed);
    assert!(outcome.is_clean(), "{}", outcome.report(60));
    assert_eq!(outcome.stats.faults_applied, 1);
    for entry in outcome.trace.iter().filter(|e| e.at >= crash_at) {
        if let TraceEvent::Sent { message, .. } | TraceEvent::Lost { message } = &entry.event {
            assert_ne!(
                message.from,
                Actor::client(dead),
                "the dead client sent at {}",
                entry.at
            );
        }
        match by_client(entry) {
            Some((client, Event::Released { .. } | Event::RoundBegan { .. })) => {
                assert_ne!(client, dead, "the dead client acted at {}", entry.at)
            }
            // Its keys were set no earlier than its T1 and live a TTL on perfect clocks.
            Some((client, Event::Acquired { .. })) => {
                assert_ne!(client, dead);
                assert!(
                    entry.at >= started + config.ttl,
                    "the survivor acquired at {}, before the dead client's keys expired",
                    entry.at
                );
            }
            _ => {}
        }
    }
    let survivor_acquired = outcome
        .trace
        .iter()
        .any(|e| e.at >= crash_at && matches!(by_client(e), Some((_, Event::Acquired { .. }))));
    assert!(survivor_acquired, "{}", outcome.report(60));
    // A dead client cannot die again.
    config.faults = FaultPlan::Explicit(vec![
        ScheduledFault {
            at: crash_at,
            fault: Fault::CrashClient {
                client: dead,
                when: CrashWhen::Any,
            },
        },
        ScheduledFault {
            at: crash_at + Millis(5),
            fault: Fault::CrashClient {
                client: dead,
                when: CrashWhen::Any,
            },
        },
    ]);
    assert_eq!(run(&config, seed).stats.faults_ignored, 1);
}

/// A crash aimed at a holder (`CrashWhen::Holding`, what `[faults.client_crashes] when =
/// "holding"` becomes) applies only while the client believes it holds the lock: before its
/// acquisition it is ignored, just after it the client dies believing.
#[test]
fn a_crash_aimed_at_a_holder_strikes_only_while_it_holds() {
    let mut config = SimConfig {
        clients: 2,
        ..SimConfig::default()
    };
    config.workload.cycles_per_lock = 0;
    config.workload.hold_max = Millis(50);
    let seed = 3;
    let (holder, started, acquired) = first_acquisition(&config, seed);
    let aimed = |at| ScheduledFault {
        at,
        fault: Fault::CrashClient {
            client: holder,
            when: CrashWhen::Holding,
        },
    };
    config.faults = FaultPlan::Explicit(vec![aimed(started)]);
    let early = run(&config, seed);
    assert_eq!(
        (early.stats.faults_applied, early.stats.faults_ignored),
        (0, 1),
        "{}",
        early.report(60)
    );
    config.faults = FaultPlan::Explicit(vec![aimed(acquired + Millis(1))]);
    let holding = run(&config, seed);
    assert_eq!(holding.stats.faults_applied, 1, "{}", holding.report(60));
    let believed = holding.trace.iter().any(|e| {
        matches!(
            by_client(e),
            Some((c, Event::ClientCrashed { believed: true, .. })) if c == holder
        )
    });
    assert!(believed, "{}", holding.report(60));
}

#[test]
fn a_failover_replicates_one_node_and_promotes_it_once() {
    let mut config = SimConfig::default();
    config.crash.failover = Some(Failover {
        node: 1,
        every_node: false,
        replication_period: Millis(1_000),
        promotion_delay: Millis(0),
        replicas: 1,
        wait: 0,
    });
    let at = |ms: u64, fault: Fault| ScheduledFault {
        at: Millis(ms),
        fault,
    };
    config.faults = FaultPlan::Explicit(vec![
        at(100, Fault::Failover),
        at(200, Fault::Failover),
        at(
            300,
            Fault::Crash {
                node: 1,
                downtime: Millis(10),
            },
        ),
    ]);
    let outcome = run(&config, 0);
    let lifecycles: Vec<(Actor, &Event)> = outcome
        .trace
        .iter()
        .filter_map(|e| match &e.event {
            TraceEvent::Moment(moment) => Some((moment.actor, &moment.event)),
            _ => None,
        })
        .filter(|(actor, event)| {
            matches!(actor, Actor::Node(_))
                && matches!(
                    event,
                    Event::Promoted { .. } | Event::Crashed { .. } | Event::Restarted { .. }
                )
        })
        .collect();
    // n2 is promoted once (its replica is spent), and a later crash of it is a plain crash.
    assert!(
        matches!(
            lifecycles.as_slice(),
            [
                (Actor::Node(1), Event::Promoted { .. }),
                (Actor::Node(1), Event::Crashed { .. }),
                (Actor::Node(1), Event::Restarted { .. })
            ]
        ),
        "{lifecycles:?}"
    );
    assert_eq!(
        (outcome.stats.faults_applied, outcome.stats.faults_ignored),
        (2, 1)
    );
    // Without a replicated node a failover does not apply; one outside the world is refused.
    config.crash.failover = None;
    assert_eq!(run(&config, 0).stats.faults_ignored, 2);
    config.crash.failover = Some(Failover {
        node: 3,
        every_node: false,
        replication_period: Millis(1_000),
        promotion_delay: Millis(0),
        replicas: 1,
        wait: 0,
    });
    assert_eq!(
        sim::run(&config, 0).unwrap_err().to_string(),
        "the failover replicates n4, which this configuration does not have"
    );
}

#[test]
fn a_shared_token_gives_every_clients_first_round_one_value() {
    // The tokens of each client's first SETs.
    let first_tokens = |shared: bool| {
        let mut config = SimConfig {
            clients: 3,
            ..SimConfig::default()
        };
        config.workload.acquisitions_per_client = Some(1);
        config.workload.shared_token = shared;
        let outcome = run(&config, 5);
        let mut tokens = [None; 3];
        for entry in &outcome.trace {
            if let TraceEvent::Sent { message, .. } = &entry.event
                && let (Actor::Client(c), Payload::Command(command)) =
                    (message.from, message.payload)
                && let Op::SetNxPx { token, .. } = command.op
            {
                tokens[usize::from(c)].get_or_insert(token);
            }
        }
        tokens.map(|t| t.expect("every client sends a SET"))
    };
    let shared = first_tokens(true);
    assert!(shared.iter().all(|&t| t == shared[0]), "{shared:?}");
    let unique = first_tokens(false);
    assert!(
        unique[0] != unique[1] && unique[1] != unique[2] && unique[0] != unique[2],
        "{unique:?}"
    );
}

/// A world bridged from a catalog scenario runs the model's semantics: its clients' clocks
/// read whole ticks, and a storage op lands by the end of the tick `max_delay_ticks` after its
/// check's tick (with no pause in between), however the run draws its delays; the storage
/// delays do reach into that last tick. A simulator world keeps millisecond clocks.
#[test]
fn a_bridged_storage_op_lands_within_the_models_ticks() {
    let file = catalog::find("synchronous-bounds-margin-3").expect("in the catalog");
    let scenario = redlock_lab::scenario::Scenario::from_str(file.file, file.text).unwrap();
    let mut config = SimConfig::from_scenario_at(&scenario, 10).unwrap();
    assert_eq!(config.client_clock_resolution, Millis(10));
    // max_delay_ticks = 1: from the start of the check's tick to the end of the next one.
    assert_eq!(config.workload.op_arrival_cap, Some(Millis(19)));
    // Without pauses, so that the cap is never stretched.
    if let FaultPlan::Generated(budget) = &mut config.faults {
        budget[sim::FaultClass::Pause] = sim::KindBudget::NONE;
    }
    let mut latest = 0;
    for seed in 0..300 {
        let outcome = run(&config, seed);
        let mut checked: Vec<Option<u64>> = vec![None; config.clients];
        for entry in &outcome.trace {
            if let Some((client, Event::LeaseChecked { clock, .. })) = by_client(entry) {
                // Whole ticks, counted from where every clock starts.
                assert_eq!(clock % 10, 0, "seed {seed}");
                checked[client] = Some(entry.at.0);
            }
            if let Some(client) = op_arrived(entry) {
                let at = checked[client].take().expect("an op is checked first");
                let late = entry.at.0 - at / 10 * 10;
                assert!(
                    late <= 19,
                    "seed {seed}: an op lands {late} ms into its tick"
                );
                latest = latest.max(late);
            }
        }
    }
    assert!(latest > 10, "no op reached the next tick: {latest} ms");
    assert_eq!(world("antirez-safe").client_clock_resolution, Millis(1));
}

/// A swarm run's two timing knobs do what its header says: with `late_check` the first holder
/// checks at the last reading of its clock at which its margin still passes (one tick later
/// it would not), and without it at once; with `rival_start` every other client begins that
/// long after the first client's start, on clocks that read alike here (no clock error).
#[test]
fn a_late_checker_checks_at_its_margins_last_reading_and_rivals_begin_at_the_drawn_edge() {
    let file = catalog::find("synchronous-bounds-margin-2").expect("in the catalog");
    let scenario = redlock_lab::scenario::Scenario::from_str(file.file, file.text).unwrap();
    let config = SimConfig::from_scenario_at(&scenario, 10).unwrap();
    let margin = config.workload.op_margin;
    let mut seen = [0; 4];
    for seed in 0..200 {
        let outcome = run(&config, seed);
        let drawn = outcome
            .swarm
            .clone()
            .expect("a bridged world is a swarm search");
        assert!(
            outcome.header().contains(&format!(
                "late_check = {}, rival_start = {}",
                drawn.late_check,
                drawn
                    .rival_start
                    .map_or_else(|| "none".to_owned(), |after| after.to_string())
            )),
            "seed {seed}: the header prints the knobs"
        );
        let mut holder = None;
        let mut first_acquired = false;
        let mut starts = Vec::new();
        for entry in &outcome.trace {
            // Clock readings, counted from where every clock starts.
            let margin = margin.0 as i64;
            match by_client(entry) {
                Some((client, &Event::RoundBegan { t1, .. })) => starts.push((client, t1)),
                // The run's first acquisition, epoch 1.
                Some((
                    client,
                    &Event::Acquired {
                        t2, believes_until, ..
                    },
                )) if !first_acquired => {
                    first_acquired = true;
                    holder = Some((client, believes_until, t2));
                }
                Some((client, &Event::LeaseChecked { clock, .. }))
                    if holder.is_some_and(|(c, ..)| c == client) =>
                {
                    let (_, deadline, acquired) = holder.take().unwrap();
                    assert!(deadline - clock >= margin, "seed {seed}: the check passes");
                    if drawn.late_check {
                        assert!(
                            deadline - (clock + 10) < margin,
                            "seed {seed}: a late checker checks at the last passing reading"
                        );
                        seen[usize::from(clock > acquired)] += 1;
                    } else {
                        assert_eq!(clock, acquired, "seed {seed}: checks at once");
                    }
                }
                _ => {}
            }
        }
        if let (Some(after), Some(&(first, at))) = (drawn.rival_start, starts.first()) {
            assert_eq!(
                Some(first),
                drawn.faults.focused_client.or(Some(0)),
                "seed {seed}: the focused client begins first"
            );
            for &(client, t1) in &starts[1..] {
                assert_eq!(
                    t1,
                    at + after.0 as i64,
                    "seed {seed}: c{} begins",
                    client + 1
                );
            }
            seen[2 + usize::from(starts.len() > 1)] += 1;
        }
    }
    assert!(seen[1] > 0, "a late checker waited in some run: {seen:?}");
    assert!(seen[3] > 0, "a rival was timed in some run: {seen:?}");
}

/// A bridged holder checks against the model's margin when its op lands in its check's tick
/// (`max_delay_ticks` 0): a check in the last milliseconds of a tick of true time, too late
/// for a step and the run's longest delay, waits for the next tick, so every op lands in the
/// tick of its check however the run draws its delays.
#[test]
fn a_check_too_late_in_its_tick_waits_for_the_next_and_its_op_lands_in_that_tick() {
    let file = catalog::find("fencing-lock-quorum-node-clock-jump").expect("in the catalog");
    let scenario = redlock_lab::scenario::Scenario::from_str(file.file, file.text).unwrap();
    let mut config = SimConfig::from_scenario_at(&scenario, 10).unwrap();
    assert_eq!(config.workload.op_margin, Millis(10), "the model's margin");
    assert_eq!(config.workload.op_arrival_cap, Some(Millis(9)));
    // Without pauses, so that the cap is never stretched.
    if let FaultPlan::Generated(budget) = &mut config.faults {
        budget[sim::FaultClass::Pause] = sim::KindBudget::NONE;
    }
    let mut checks = 0;
    for seed in 0..500 {
        let outcome = run(&config, seed);
        let delay_max = outcome.swarm.as_ref().unwrap().delay_max.0;
        let mut checked: Vec<Option<u64>> = vec![None; config.clients];
        for entry in &outcome.trace {
            if let Some((client, Event::LeaseChecked { .. })) = by_client(entry) {
                let into = entry.at.0 % 10;
                assert!(
                    into + 1 + delay_max <= 9,
                    "seed {seed}: a check {into} ms into its tick with delays up to {delay_max} ms"
                );
                checked[client] = Some(entry.at.0);
                checks += 1;
            }
            if let Some(client) = op_arrived(entry) {
                let at = checked[client].take().expect("an op is checked first");
                assert_eq!(
                    entry.at.0 / 10,
                    at / 10,
                    "seed {seed}: an op checked at {at} ms lands at {} ms",
                    entry.at.0
                );
            }
        }
    }
    assert!(checks > 100, "only {checks} checks");
}

/// With `late_answers` the run's first client, once its fencing write-back round is out,
/// reads nothing until another client has acquired or a TTL has passed: it then acquires as
/// the newer holder, which is how `fencing-lock-quorum-node-clock-jump`'s counterexample
/// orders its two acquisitions.
#[test]
fn a_late_answering_client_takes_its_acquisition_answers_after_a_rival_acquired() {
    let file = catalog::find("fencing-lock-quorum-node-clock-jump").expect("in the catalog");
    let scenario = redlock_lab::scenario::Scenario::from_str(file.file, file.text).unwrap();
    let config = SimConfig::from_scenario_at(&scenario, 10).unwrap();
    let mut after_rival = 0;
    let mut late = 0;
    for seed in 0..2_000 {
        let outcome = run(&config, seed);
        let drawn = outcome.swarm.clone().unwrap();
        assert!(
            outcome
                .header()
                .contains(&format!("late_answers = {}", drawn.late_answers)),
            "seed {seed}: the header prints the knob"
        );
        if !drawn.late_answers {
            continue;
        }
        late += 1;
        assert!(
            drawn.rival_start.is_some_and(|after| after < config.ttl),
            "seed {seed}: only with a rival aimed before the keys expire"
        );
        let first = drawn.faults.focused_client.unwrap_or(0);
        let mut sent = None;
        let mut rival_acquired = false;
        for entry in &outcome.trace {
            if let TraceEvent::Sent { message, .. } = &entry.event
                && message.from == Actor::client(first)
                && sent.is_none()
                && matches!(
                    message.payload,
                    Payload::Command(command) if matches!(command.op, Op::SetNxPx { .. })
                )
            {
                sent = Some(entry.at.0);
            }
            match by_client(entry) {
                Some((client, Event::Acquired { .. })) if client != first => rival_acquired = true,
                Some((_, Event::Acquired { .. })) => {
                    let sent = sent.expect("an acquisition round comes first");
                    if rival_acquired {
                        after_rival += 1;
                    } else {
                        assert!(
                            entry.at.0 >= sent + config.ttl.0,
                            "seed {seed}: c{} acquires at {} ms, its SETs sent at {sent} ms, before any rival",
                            first + 1,
                            entry.at.0
                        );
                    }
                    break;
                }
                _ => {}
            }
        }
    }
    assert!(
        late > 0 && after_rival > 0,
        "{late} runs, {after_rival} after a rival"
    );
}
