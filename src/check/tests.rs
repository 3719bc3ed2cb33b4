use super::*;
use crate::scenario::{Scenario, Verdict, property};
use stateright::{Checker, Model};

fn load(name: &str) -> Scenario {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("models")
        .join(format!("{name}.toml"));
    Scenario::load(path).expect("a valid catalog scenario")
}

#[test]
fn a_check_stopped_at_the_state_limit_never_says_holds() {
    // 21 709 states when exhausted, and mutual exclusion holds.
    let report = Check::new(&load("redlock-fault-free-five-nodes"))
        .max_states(1000)
        .run();
    assert_eq!(report.stopped, Some(StopReason::StateLimit));
    assert!(report.unique_states >= 1000 && report.unique_states < 21_709);
    assert!(report.max_depth > 0);
    let mutex = report.property(property::MUTUAL_EXCLUSION).unwrap();
    assert_eq!(mutex.verdict, Verdict::Incomplete);
    assert!(report.is_incomplete());
    assert_eq!(report.mismatches().count(), 0, "unknown is not a mismatch");
    assert!(!report.matches_expectations());
}

#[test]
fn the_probe_changes_no_verdict_and_no_counterexample() {
    // Mutual exclusion violated, the storage properties hold (9 661 states); everything
    // holds (21 709 states). Probes that settle nothing, some or all of it.
    for name in [
        "fencing-token-survives-node-clock-jump",
        "redlock-fault-free-five-nodes",
    ] {
        let scenario = load(name);
        let reference = Check::new(&scenario)
            .strategy(Strategy::BreadthFirst)
            .threads(1)
            .run();
        for probe in [0, 100, 8_000, DEFAULT_PROBE_STATES] {
            let report = Check::new(&scenario).probe_states(probe).run();
            assert_eq!(
                report.properties, reference.properties,
                "{name}, probe {probe}"
            );
        }
    }
}

#[test]
fn a_violation_the_probe_found_stays_violated_at_the_state_limit() {
    let scenario = load("fencing-token-survives-node-clock-jump");
    // One search of the scenario's own model: the split would settle the storage
    // properties on nodes that answer anything first.
    let full = Check::new(&scenario).cutoff(false).run();
    // Breadth first reaches the jump's violation after about 5 400 of 9 661 states.
    let report = Check::new(&scenario).cutoff(false).max_states(8_000).run();
    assert_eq!(report.stopped, Some(StopReason::StateLimit));
    let mutex = report.property(property::MUTUAL_EXCLUSION).unwrap();
    assert_eq!(
        Some(mutex),
        full.property(property::MUTUAL_EXCLUSION),
        "the probe's counterexample is the shortest"
    );
    let storage = report.property(property::STORAGE_SAFETY).unwrap();
    assert_eq!(storage.verdict, Verdict::Incomplete);
}

#[test]
fn a_violation_found_before_the_stop_stays_violated() {
    // Mutual exclusion holds here and both storage properties are violated: the
    // depth-first run exhausts the state space, then the search for the shortest
    // counterexamples starts with a budget of ten states, far too few to reach them.
    // The scenario's own model only (the split's first run would spend the budget).
    let scenario = load("synchronous-bounds-margin-2");
    let full = Check::new(&scenario).threads(1).cutoff(false).run();
    let depth_first = Check::new(&scenario)
        .model()
        .checker()
        .spawn_dfs()
        .join()
        .unique_state_count();
    let report = Check::new(&scenario)
        .threads(1)
        .cutoff(false)
        .probe_states(0)
        .max_states(depth_first + 10)
        .run();
    assert!(!report.is_incomplete(), "every verdict was settled");
    for (p, reference) in report.properties.iter().zip(&full.properties) {
        assert_eq!(p.verdict, reference.verdict, "{}", p.name);
    }
    let storage = report.property(property::STORAGE_SAFETY).unwrap();
    assert_eq!(storage.verdict, Verdict::Violated);
    let steps = storage.counterexample.as_ref().expect("a counterexample");
    if report.stopped.is_some() {
        // The depth-first path: real, and no shorter than the shortest.
        assert!(storage.counterexample_not_shortest);
        let shortest = full.property(property::STORAGE_SAFETY).unwrap();
        assert!(steps.len() >= shortest.counterexample.as_ref().unwrap().len());
    } else {
        assert_eq!(report.properties, full.properties);
    }
}

#[test]
fn a_stopped_liveness_run_is_incomplete_never_a_false_violation() {
    // States whose successors a stop cut off look terminal to stateright, which would
    // report `eventually` violated there; the check must not.
    let scenario = load("redlock-fault-free-liveness");
    let full = Check::new(&scenario).run();
    let eventually = full.property(property::EVENTUALLY_ACQUIRED).unwrap();
    assert_eq!(eventually.verdict, Verdict::Holds);
    let safety = Check::new(&scenario).model().checker().spawn_dfs().join();
    let liveness_states = full.unique_states - safety.unique_state_count();
    for budget in [1, liveness_states / 4, liveness_states / 2] {
        let report = Check::new(&scenario)
            .max_states(safety.unique_state_count() + budget)
            .run();
        let p = report.property(property::EVENTUALLY_ACQUIRED).unwrap();
        assert_ne!(p.verdict, Verdict::Violated, "budget {budget}");
        if report.stopped.is_some() {
            assert_eq!(p.verdict, Verdict::Incomplete, "budget {budget}");
        }
        let mutex = report.property(property::MUTUAL_EXCLUSION).unwrap();
        assert_eq!(
            mutex.verdict,
            Verdict::Holds,
            "the safety run finished first"
        );
    }
}

#[test]
fn a_memory_limit_below_the_process_stops_the_check() {
    let report = Check::new(&load("redlock-fault-free-five-nodes"))
        .memory_limit(1)
        .run();
    if crate::search::resident_bytes().is_some() {
        assert_eq!(report.stopped, Some(StopReason::MemoryLimit));
        assert!(report.is_incomplete());
    }
}

#[test]
fn a_zone_search_runs_under_the_same_shell() {
    // The five-node file in milliseconds: 95 384 zones when exhausted, so the shell is asked
    // many times before the end.
    let scenario = load("redlock-fault-free-five-nodes").scaled(1000);
    let zones = || {
        Check::new(&scenario)
            .engine(Engine::Zones)
            .expect("modelled")
    };
    let report = zones().memory_limit(1).run();
    if crate::search::resident_bytes().is_some() {
        assert_eq!(report.engine, Engine::Zones);
        assert_eq!(report.stopped, Some(StopReason::MemoryLimit));
        assert!(report.is_incomplete());
    }
    let report = zones().max_states(1000).run();
    assert_eq!(report.stopped, Some(StopReason::StateLimit));
    assert!(report.unique_states >= 1000 && report.unique_states < 95_384);
    // Progress is reported from the zone search as from a discrete walk.
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&seen);
    let report = zones()
        .max_states(3000)
        .progress_interval(std::time::Duration::ZERO)
        .progress(move |p| {
            counted.fetch_max(p.unique_states, std::sync::atomic::Ordering::Relaxed);
        })
        .run();
    let seen = seen.load(std::sync::atomic::Ordering::Relaxed);
    assert!(seen > 0 && seen <= report.unique_states, "{seen}");
}

#[test]
fn verdicts_do_not_depend_on_threads() {
    let scenario = load("synchronous-bounds-margin-2");
    let one = Check::new(&scenario).threads(1).run();
    let two = Check::new(&scenario).threads(2).run();
    assert_eq!(one.properties, two.properties);
    assert!(
        one.properties
            .iter()
            .filter(|p| p.verdict == Verdict::Violated)
            .all(|p| !p.counterexample_not_shortest)
    );
}

#[test]
fn the_depth_first_engine_gets_stateright_s_verdicts_and_counts_on_the_catalog() {
    use crate::model::RedlockModel;
    use crate::search::DepthFirst;
    // Scenarios explored to the end (nothing settles every property early), with and
    // without storage, symmetry, crashes, pauses and fencing counters. On one thread the
    // two engines visit states in the same order, so even where a dead node's hidden
    // contents make the reached fingerprints depend on that order, the counts agree.
    for name in [
        "redlock-fault-free-five-nodes",
        "crash-delayed-restart-ttl-minus-drift",
        "storage-without-faults",
        "fencing-token-rescues-gc-pause",
        "fencing-lock-quorum",
        "lock-extension",
    ] {
        let scenario = load(name);
        let theirs = RedlockModel::new(&scenario).checker().spawn_dfs().join();
        let names: Vec<_> = theirs.model().properties().iter().map(|p| p.name).collect();
        for threads in [1, 2] {
            let ours = DepthFirst::spawn(RedlockModel::new(&scenario), threads).join();
            for name in &names {
                assert_eq!(
                    ours.discovery(name).is_some(),
                    theirs.discovery(name).is_some(),
                    "{name}"
                );
            }
            if threads == 1 {
                assert_eq!(ours.unique_states, theirs.unique_state_count(), "{name}");
            }
        }
    }
}
