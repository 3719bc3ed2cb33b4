//! The model checker and the simulator, on the same configurations: seeded simulator runs
//! never violate a property the checker proved, and they do reach some of the violations the
//! checker found.
//!
//! Every catalog scenario the bridge accepts (`SimConfig::from_scenario_at`) is checked
//! exhaustively; for each `always` property the checker proves, proptest searches seeds (with
//! the faults the seed draws) and explicit fault schedules (which it shrinks) at several
//! resolutions, and any violation fails the test with its replay command. The other side: the
//! simulator finds the checker's counterexample for a node clock jump past the drift, a client
//! clock jump backward past it, unlocking with `DEL`, a crash without persistence and a
//! network-delayed write, within a bounded number of seeds. A simulator that found nothing
//! would pass the first half vacuously; the second half and the acquisition counts keep it
//! honest.
//!
//! `PROPTEST_CASES` overrides the number of cases per scenario and resolution.

mod common;

use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use proptest::test_runner::{TestCaseError, TestRunner};
use redlock_lab::catalog::CATALOG;
use redlock_lab::check::{Check, Report};
use redlock_lab::scenario::{Scenario, Verdict, property};
use redlock_lab::sim::{self, Fault, FaultPlan, Property, ScheduledFault, SimConfig};
use redlock_lab::storage::TokenSource;
use redlock_lab::time::Millis;

/// Where failing cases are kept, and tried first on every later run.
const REGRESSIONS: &str = "proptest-regressions/model_vs_sim.txt";

/// The resolutions every proof is tested at, in ms per tick: the brief's ticks = ms, the
/// CLI's default, and a finer one.
const RESOLUTIONS: [u64; 3] = [1, 10, 20];

const ALWAYS: [Property; 3] = [
    Property::MutualExclusion,
    Property::StorageSafety,
    Property::NoLostUpdate,
];

/// Whether the bridge refuses the catalog scenario `name` ([`common::SIMULATOR_REFUSED`]).
fn refused(name: &str) -> bool {
    common::SIMULATOR_REFUSED
        .iter()
        .any(|&(listed, _)| listed == name)
}

/// Every catalog scenario the bridge accepts with the checker's safety verdicts, computed
/// once for all tests (the bounded liveness run is left out: the simulator does not judge
/// `eventually acquired`).
fn catalog() -> &'static [(Scenario, Report)] {
    static CHECKED: OnceLock<Vec<(Scenario, Report)>> = OnceLock::new();
    CHECKED.get_or_init(|| {
        CATALOG
            .iter()
            .map(|embedded| {
                Scenario::from_str(embedded.file, embedded.text)
                    .unwrap_or_else(|e| panic!("{}: {e}", embedded.file))
            })
            .filter(|scenario| !refused(&scenario.name))
            .map(|scenario| {
                let mut safety = scenario.clone();
                safety
                    .expect
                    .retain(|(name, _)| name != property::EVENTUALLY_ACQUIRED);
                // Verdicts only: two threads are faster, and shortest paths are not needed.
                let report = Check::new(&safety).threads(2).run();
                (scenario, report)
            })
            .collect()
    })
}

fn proven(report: &Report) -> Vec<Property> {
    ALWAYS
        .into_iter()
        .filter(|p| {
            report
                .property(p.name())
                .is_some_and(|r| r.verdict == Verdict::Holds)
        })
        .collect()
}

/// Whether acquisitions write their fencing token back (a second round trip).
fn write_back(scenario: &Scenario) -> bool {
    scenario
        .storage
        .as_ref()
        .is_some_and(|s| s.token_source == TokenSource::LockQuorum)
}

/// The resolutions a scenario is simulated at: its own, when the file is written in real
/// units (a tick then *is* its resolution), else [`RESOLUTIONS`].
fn resolutions(scenario: &Scenario) -> Vec<u64> {
    match scenario.resolution {
        Some(tick) => vec![tick.as_u64()],
        None => RESOLUTIONS.to_vec(),
    }
}

fn bridge(scenario: &Scenario, ms_per_tick: u64) -> SimConfig {
    SimConfig::from_scenario_at(scenario, ms_per_tick)
        .unwrap_or_else(|e| panic!("{}: the bridge refused it: {e}", scenario.name))
}

/// Explicit schedules within the bridge's fault budget: up to `count` faults of each kind, at
/// any time of the run, of any size in the kind's range, aimed at any (or the pinned) process.
fn schedules(config: &SimConfig) -> BoxedStrategy<Vec<ScheduledFault>> {
    let FaultPlan::Generated(budget) = &config.faults else {
        panic!("the bridge draws its faults from a budget");
    };
    let (duration, nodes, clients) = (config.duration.0, config.nodes(), config.clients);
    let (pinned_node, pinned_client) = (budget.pinned_node, budget.pinned_client);
    let crash_aim = budget.client_crash_aim;
    let mut kinds: Vec<BoxedStrategy<Vec<ScheduledFault>>> = Vec::new();
    for (class, kind) in budget.kinds() {
        if kind.count == 0 {
            continue;
        }
        let one = (0..duration, kind.min.0..=kind.max.0, 0..nodes, 0..clients).prop_map(
            move |(at, size, node, client)| {
                let node = pinned_node.unwrap_or(node);
                let client = pinned_client.unwrap_or(client);
                let fault = match class.make(node, client, Millis(size)) {
                    Fault::CrashClient { client, .. } => Fault::CrashClient {
                        client: crash_aim.client.map_or(client, usize::from),
                        when: crash_aim.when,
                    },
                    fault => fault,
                };
                ScheduledFault {
                    at: Millis(at),
                    fault,
                }
            },
        );
        kinds.push(proptest::collection::vec(one, 0..=kind.count as usize).boxed());
    }
    kinds
        .prop_map(|lists| {
            let mut schedule: Vec<ScheduledFault> = lists.into_iter().flatten().collect();
            schedule.sort_by_key(|fault| fault.at);
            schedule
        })
        .boxed()
}

fn check_run(
    config: &SimConfig,
    seed: u64,
    properties: &[Property],
    replay: impl Fn() -> String,
) -> Result<(), TestCaseError> {
    let outcome = sim::run(config, seed).map_err(|e| TestCaseError::fail(e.to_string()))?;
    for &property in properties {
        if !outcome.holds(property) {
            return Err(TestCaseError::fail(format!(
                "{}: the checker proves {property}, the simulator violates it\nreplay: {}\n{}",
                config.name,
                replay(),
                outcome.report(60)
            )));
        }
    }
    Ok(())
}

#[test]
fn the_simulator_never_violates_what_the_checker_proves() {
    let mut compared = 0;
    for (scenario, report) in catalog() {
        let properties = proven(report);
        if properties.is_empty() {
            continue;
        }
        compared += 1;
        for ms_per_tick in resolutions(scenario) {
            let config = bridge(scenario, ms_per_tick);
            let name = scenario.name.clone();
            let mut runner = TestRunner::new(common::cases(2_000, REGRESSIONS));
            runner
                .run(&any::<u64>(), |seed| {
                    check_run(&config, seed, &properties, || {
                        format!(
                            "redlock-lab simulate {name} --seed {seed} --ms-per-tick {ms_per_tick}"
                        )
                    })
                })
                .unwrap_or_else(|e| panic!("{e}"));
            let mut runner = TestRunner::new(common::cases(500, REGRESSIONS));
            runner
                .run(&(any::<u64>(), schedules(&config)), |(seed, schedule)| {
                    let mut explicit = config.clone();
                    explicit.faults = FaultPlan::Explicit(schedule.clone());
                    check_run(&explicit, seed, &properties, || {
                        format!(
                            "sim::run(&config, {seed}) of {name} at {ms_per_tick} ms per tick with the schedule {schedule:?}"
                        )
                    })
                })
                .unwrap_or_else(|e| panic!("{e}"));
        }
    }
    // Every accepted scenario but the 11 whose every `always` property is violated.
    assert!(compared >= 25, "only {compared} scenarios compared");
}

/// A scenario whose checker counterexample the simulator reaches, and the seeds it may take.
struct Reached {
    scenario: &'static str,
    property: Property,
    ms_per_tick: u64,
    seeds: u64,
}

const REACHED: [Reached; 6] = [
    Reached {
        scenario: "node-clock-jump-forward-past-drift",
        property: Property::MutualExclusion,
        ms_per_tick: 10,
        seeds: 10_000,
    },
    Reached {
        scenario: "client-clock-jump-backward-past-drift",
        property: Property::MutualExclusion,
        ms_per_tick: 10,
        seeds: 10_000,
    },
    Reached {
        scenario: "single-node-unlock-with-del",
        property: Property::MutualExclusion,
        ms_per_tick: 1,
        seeds: 1_000,
    },
    Reached {
        scenario: "single-node-crash-no-persistence",
        property: Property::MutualExclusion,
        ms_per_tick: 10,
        seeds: 1_000,
    },
    Reached {
        scenario: "redlock-unlock-del-on-failed-acquire",
        property: Property::MutualExclusion,
        ms_per_tick: 10,
        seeds: 2_000,
    },
    Reached {
        scenario: "network-delayed-write",
        property: Property::StorageSafety,
        ms_per_tick: 10,
        seeds: 2_000,
    },
];

#[test]
fn the_simulator_reaches_violations_the_checker_found() {
    for reached in REACHED {
        let (scenario, report) = catalog()
            .iter()
            .find(|(s, _)| s.name == reached.scenario)
            .unwrap_or_else(|| panic!("no catalog scenario {}", reached.scenario));
        assert_eq!(
            report.property(reached.property.name()).map(|p| p.verdict),
            Some(Verdict::Violated),
            "{}: the checker must find the violation first",
            scenario.name
        );
        let config = bridge(scenario, reached.ms_per_tick);
        let found = (0..reached.seeds).find(|&seed| {
            !sim::run(&config, seed)
                .expect("a bridged configuration is valid")
                .holds(reached.property)
        });
        let Some(seed) = found else {
            panic!(
                "{}: no seed in 0..{} violates {} at {} ms per tick",
                scenario.name, reached.seeds, reached.property, reached.ms_per_tick
            );
        };
        // The seed is the whole run: replaying it violates the property again, identically.
        let first = sim::run(&config, seed).unwrap();
        let again = sim::run(&config, seed).unwrap();
        assert_eq!(first.trace, again.trace);
        assert!(!again.holds(reached.property));
        println!(
            "{}: {} violated with seed {seed}: redlock-lab simulate {} --seed {seed} --ms-per-tick {}",
            scenario.name, reached.property, scenario.name, reached.ms_per_tick
        );
    }
}

#[test]
fn the_simulator_acquires_exactly_where_the_checker_says_some_client_can() {
    // "Never violated" means something only if the runs use the lock: the simulator acquires
    // in some of 200 runs iff the checker finds a witness for `lock acquired`.
    for (scenario, report) in catalog() {
        let witness = report
            .property(property::LOCK_ACQUIRED)
            .map(|p| p.verdict == Verdict::Holds)
            .expect("`lock acquired` is always checked");
        for ms_per_tick in resolutions(scenario) {
            // At 1 ms per tick every hop takes at least a tick, where the model's deliveries
            // take none: the fencing write-back's second round trip makes 4 ticks of a TTL of
            // 4, so no acquisition keeps validity. Coarser resolutions have sub-tick delays.
            if ms_per_tick == 1 && write_back(scenario) {
                continue;
            }
            let config = bridge(scenario, ms_per_tick);
            let acquiring = (0..200)
                .filter(|&seed| sim::run(&config, seed).unwrap().stats.acquisitions > 0)
                .count();
            // A round trip takes at least 2 ms (a `SET` and its reply, 1 ms each) where the
            // model's takes none: a lease whose `ttl − drift` is no longer ends before it
            // begins, unless a slow client clock under-measures the round.
            let lease = (scenario.lock.params.ttl - scenario.lock.params.drift).0;
            if lease * ms_per_tick <= 2 && scenario.clock.client_error_ticks == 0 {
                assert_eq!(
                    acquiring, 0,
                    "{} at {ms_per_tick} ms per tick: a lease of {lease} ms cannot outlast a round trip",
                    scenario.name
                );
                continue;
            }
            assert_eq!(
                acquiring > 0,
                witness,
                "{} at {ms_per_tick} ms per tick: {acquiring} of 200 runs acquired, the checker says `lock acquired` {}",
                scenario.name,
                if witness { "holds" } else { "is violated" }
            );
        }
    }
}

#[test]
fn the_bridge_accepts_every_catalog_scenario_but_the_listed_ones() {
    // The restarted-node guard, extensions, the separate counter node, failover (of the single
    // master or of one node among several), client crashes, a least retry delay and a shared
    // token are simulated: every scenario but the listed ones is bridged with its own numbers,
    // and each listed one is refused.
    for embedded in CATALOG {
        let scenario = Scenario::from_str(embedded.file, embedded.text).unwrap();
        let bridged = SimConfig::from_scenario(&scenario);
        if refused(&scenario.name) {
            assert!(bridged.is_err(), "{} is listed as refused", scenario.name);
            continue;
        }
        let config =
            bridged.unwrap_or_else(|e| panic!("{}: the bridge refused it: {e}", scenario.name));
        assert_eq!(config.name, scenario.name);
        assert_eq!(config.nodes(), scenario.lock.nodes());
        assert_eq!(config.ttl, scenario.lock.params.ttl);
    }
}
