//! The split safety run (`RedlockModel::with_chaos_nodes`, `RedlockModel::with_fewer_clients`)
//! against the scenario's own model.
//!
//! Nodes that answer anything must break every storage property the real nodes let break
//! (else "holds" there would not mean "holds" here), and a check that splits must give the
//! verdicts of one that does not: on the catalog's storage scenarios given a third client
//! (where the split is taken, and the test requires that it is) and on generated three-client
//! scenarios, each small enough to check in full.

use redlock_lab::catalog::CATALOG;
use redlock_lab::check::{Check, Report};
use redlock_lab::model::RedlockModel;
use redlock_lab::property::Property;
use redlock_lab::scenario::{Scenario, Verdict};
use stateright::{Checker, Model};

const STORAGE: [Property; 2] = [Property::StorageSafety, Property::NoLostUpdate];

fn verdicts(report: &Report) -> Vec<(String, Verdict)> {
    report
        .properties
        .iter()
        .map(|p| (p.name.clone(), p.verdict))
        .collect()
}

/// The catalog scenarios the split applies to.
fn eligible() -> Vec<Scenario> {
    let scenarios: Vec<Scenario> = CATALOG
        .iter()
        .map(|entry| entry.scenario().expect("catalog scenarios parse"))
        .filter(|s| RedlockModel::new(s).with_chaos_nodes().is_some())
        .collect();
    assert!(
        scenarios.len() >= 8,
        "the split applies to the catalog's storage scenarios with ideal tokens"
    );
    scenarios
}

#[test]
fn nodes_that_answer_anything_break_every_storage_property_real_nodes_break() {
    for scenario in eligible() {
        let real = RedlockModel::new(&scenario).checker().spawn_bfs().join();
        let chaos_model = RedlockModel::new(&scenario)
            .with_chaos_nodes()
            .expect("eligible");
        let chaos = chaos_model.checker().spawn_bfs().join();
        for property in STORAGE {
            if real.discovery(property.name()).is_some() {
                assert!(
                    chaos.discovery(property.name()).is_some(),
                    "{}: {} is broken by real nodes but not by nodes that answer anything",
                    scenario.name,
                    property.name()
                );
            }
        }
    }
}

/// `scenario` with a third client that reaches what the first reaches.
fn with_three_clients(scenario: &Scenario) -> Scenario {
    let mut three = scenario.clone();
    three.lock.clients = 3;
    let first = three.network.reach[0];
    three.network.reach.resize(3, first);
    three
}

/// The most states the full check of a catalog scenario with three clients may explore here:
/// a count, not a time, so what is compared does not depend on the machine's load.
const FULL_BUDGET: usize = 300_000;

/// The catalog's storage scenarios have two clients, where the split is not taken (their own
/// model is small); with a third client it is, exactly where the storage holds on nodes that
/// answer anything (the fenced ones). There the split check must give the full check's
/// verdicts. Each scenario is resized to one and two nodes, where the full check with three
/// clients settles: at the file's three nodes it needs more than a million states.
#[test]
fn a_split_check_gives_the_full_check_s_verdicts_on_the_catalog_with_three_clients() {
    let (mut split, mut compared, mut left) = (0, 0, Vec::new());
    for two in eligible() {
        // Two clients: the scenario's own model, never split.
        assert_eq!(two.lock.clients, 2, "{}", two.name);
        for nodes in 1..=2 {
            let Ok(resized) = two.with_nodes(nodes) else {
                continue;
            };
            let scenario = with_three_clients(&resized);
            let label = format!("{} at N = {nodes}, three clients", scenario.name);
            let started = std::time::Instant::now();
            let chaos = RedlockModel::new(&scenario)
                .with_chaos_nodes()
                .expect("eligible with three clients too")
                .checker()
                .spawn_bfs()
                .join();
            let storage_holds = STORAGE.iter().all(|p| chaos.discovery(p.name()).is_none());
            let with = Check::new(&scenario).run();
            // The split is taken exactly where nodes that answer anything keep the storage
            // safe.
            assert_eq!(with.split, storage_holds, "{label}");
            if !with.split {
                println!(
                    "{label}: not split ({:.1} s)",
                    started.elapsed().as_secs_f64()
                );
                continue;
            }
            split += 1;
            let without = Check::new(&scenario)
                .cutoff(false)
                .max_states(FULL_BUDGET)
                .run();
            assert!(!without.split);
            println!(
                "{label}: split {} states, full {} states{} ({:.1} s)",
                with.unique_states,
                without.unique_states,
                if without.is_incomplete() {
                    " (not settled)"
                } else {
                    ""
                },
                started.elapsed().as_secs_f64()
            );
            if without.is_incomplete() {
                left.push(label);
                continue;
            }
            assert_eq!(verdicts(&with), verdicts(&without), "{label}");
            compared += 1;
        }
    }
    println!("split {split}, compared {compared}, left {left:?}");
    // Today: the two fenced scenarios at one and two nodes, every one split and compared.
    assert!(
        compared >= 4 && left.is_empty(),
        "{compared} split scenarios compared with the full check ({split} split, left: {left:?})"
    );
}

fn three_clients(name: &str, protection: &str, faults: &str) -> Scenario {
    let text = format!(
        "name = \"{name}\"\ntitle = \"t\"\nclaim = \"c\"\nsource = \"derived\"\nprose = \"p\"\n\
         [lock]\nnodes = 3\nclients = 3\nttl_ticks = 3\ndrift_ticks = 1\n\
         [storage]\nprotection = \"{protection}\"\n{faults}\n\
         [expect]\n\"mutual exclusion\" = \"holds\"\n"
    );
    Scenario::from_str(&format!("{name}.toml"), &text)
        .unwrap_or_else(|e| panic!("generated scenario {name}: {e}"))
}

#[test]
fn with_three_clients_two_settle_the_lock_and_chaos_settles_the_storage() {
    let pause = "[faults.pauses]\ncount = 1\nmax_ticks = \"unbounded\"";
    let crash = "[faults.crashes]\ncount = 1\npersistence = \"none\"";
    let cases = [
        // Fenced: the storage holds on nodes that answer anything; the crash breaks mutual
        // exclusion with two clients, the pause does not break it at all.
        ("fenced-crash", "fencing-token", crash.to_owned()),
        ("fenced-pause", "fencing-token", pause.to_owned()),
        // Unfenced: nodes that answer anything break the storage, so the check falls back.
        ("unfenced-pause", "none", pause.to_owned()),
    ];
    for (name, protection, faults) in cases {
        let scenario = three_clients(name, protection, &faults);
        let with = Check::new(&scenario).run();
        let without = Check::new(&scenario).cutoff(false).run();
        assert_eq!(verdicts(&with), verdicts(&without), "{name}");
        let storage_holds = with
            .properties
            .iter()
            .filter(|p| STORAGE.iter().any(|s| s.name() == p.name))
            .all(|p| p.verdict == Verdict::Holds);
        assert_eq!(with.split, storage_holds, "{name}: split when fenced");
        let lock_broken = with
            .property(Property::MutualExclusion.name())
            .is_some_and(|p| p.verdict == Verdict::Violated);
        // Where mutual exclusion holds, the lock's properties need the full model anyway.
        if with.split && lock_broken {
            assert!(
                with.unique_states < without.unique_states,
                "{name}: the split explores fewer states ({} against {})",
                with.unique_states,
                without.unique_states
            );
        }
    }
}

#[test]
fn the_large_file_settles_with_the_split() {
    let scenario = Scenario::load(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("models/large/redlock-five-nodes-all-faults.toml"),
    )
    .expect("the large file parses");
    let report = Check::new(&scenario).run();
    assert!(report.split);
    assert!(report.stopped.is_none());
    for p in &report.properties {
        assert_eq!(Some(p.verdict), p.expected, "{}", p.name);
    }
    let mutual_exclusion = report
        .property(Property::MutualExclusion.name())
        .expect("checked");
    // Found with two clients: real, maybe not the shortest with three.
    assert!(mutual_exclusion.counterexample_not_shortest);
}

#[test]
fn a_split_check_stopped_at_the_state_limit_settles_nothing_it_did_not_finish() {
    let scenario = Scenario::load(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("models/large/redlock-five-nodes-all-faults.toml"),
    )
    .expect("the large file parses");
    // Far fewer states than nodes that answer anything need: nothing about the storage is
    // known, and the lock's properties get no states left.
    let report = Check::new(&scenario).max_states(1_000).run();
    assert!(report.stopped.is_some());
    for property in [
        Property::MutualExclusion,
        Property::StorageSafety,
        Property::NoLostUpdate,
    ] {
        let p = report.property(property.name()).expect("checked");
        assert_eq!(p.verdict, Verdict::Incomplete, "{}", p.name);
    }
}
