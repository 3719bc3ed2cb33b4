//! The reductions in the fingerprint must not change a verdict: symmetry off, and true time
//! hashed with a horizon (the plain encoding), agree with the reduced run.

use std::path::Path;

use redlock_lab::model::RedlockModel;
use redlock_lab::scenario::Scenario;
use stateright::{Checker, Model};

fn load(name: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("models")
        .join(format!("{name}.toml"));
    Scenario::load(path).expect("catalog files are valid")
}

/// (property, violated?) for every safety property of a model, and its unique state count.
fn verdicts(model: RedlockModel) -> (Vec<(&'static str, bool)>, usize) {
    let properties = model.properties();
    let checker = model.checker().spawn_bfs().join();
    let verdicts = properties
        .iter()
        .map(|p| (p.name, checker.discovery(p.name).is_some()))
        .collect();
    (verdicts, checker.unique_state_count())
}

const SMALL: [&str; 12] = [
    "single-node-unlock-with-del",
    "single-node-unlock-with-cad",
    "master-replica-failover",
    "redlock-partitioned-clients",
    "node-clock-jump-forward-by-drift",
    "node-clock-jump-forward-past-drift",
    "node-clock-jump-backward",
    "client-clock-jump-backward-by-drift",
    "client-clock-jump-backward-past-drift",
    "clock-drift-covered",
    "clock-drift-uncovered",
    "crash-immediate-restart-no-persistence",
];

#[test]
fn symmetry_changes_counts_but_not_verdicts() {
    for name in SMALL {
        let scenario = load(name);
        let (reduced, reduced_states) = verdicts(RedlockModel::new(&scenario));
        let (plain, plain_states) = verdicts(RedlockModel::new(&scenario).with_symmetry(false));
        assert_eq!(reduced, plain, "{name}");
        assert!(
            reduced_states <= plain_states,
            "{name}: {reduced_states} > {plain_states}"
        );
    }
}

#[test]
fn time_shift_changes_counts_but_not_verdicts() {
    for name in SMALL {
        let scenario = load(name);
        // Every counterexample in the catalog fits in two TTLs plus a few ticks.
        let horizon = 2 * scenario.lock.ttl_ticks + 4;
        let (reduced, _) = verdicts(RedlockModel::new(&scenario));
        let start = std::time::Instant::now();
        // Symmetry stays on here: the test above checks it on its own.
        let (exact, n) = verdicts(RedlockModel::new(&scenario).with_exact_time(horizon));
        println!("{name}: {n} states, {:?}", start.elapsed());
        assert_eq!(reduced, exact, "{name} (horizon {horizon})");
    }
}

#[test]
fn dead_fields_change_counts_but_not_verdicts() {
    // Ghost fields no property reads, and the rest of a tally once the round is won at quorum
    // (five nodes, where most of a tally can be dead).
    let mut merged = 0;
    for name in SMALL.iter().chain(&[
        "crash-restart-client-guard-one-tick-short",
        "crash-restart-client-guard-ttl-minus-drift",
        "redlock-unlock-del-on-failed-acquire",
        "fencing-token-rescues-gc-pause",
        "contention-livelock-isolated-rounds",
        "node-clock-jump-forward-five-nodes",
    ]) {
        let scenario = load(name);
        let (reduced, reduced_states) = verdicts(RedlockModel::new(&scenario));
        let (exact, exact_states) = verdicts(RedlockModel::new(&scenario).with_exact_ghosts(true));
        assert_eq!(reduced, exact, "{name}");
        assert!(
            reduced_states <= exact_states,
            "{name}: {reduced_states} > {exact_states}"
        );
        merged += exact_states - reduced_states;
    }
    assert!(merged > 0, "the reduction merges some states");
}
