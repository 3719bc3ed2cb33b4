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

/// [`verdicts`] depth first on two threads, for the large unreduced runs (the test binary's
/// other tests finish long before the catalog's, which would otherwise leave a core idle).
/// The count is `None` when the run stopped early because every property was discovered:
/// then it depends on the order in which the threads met the states.
fn verdicts_on_two_threads(model: RedlockModel) -> (Vec<(&'static str, bool)>, Option<usize>) {
    let properties = model.properties();
    let checker = model.checker().threads(2).spawn_dfs().join();
    let verdicts: Vec<_> = properties
        .iter()
        .map(|p| (p.name, checker.discovery(p.name).is_some()))
        .collect();
    let complete = verdicts.iter().any(|&(_, found)| !found);
    (verdicts, complete.then(|| checker.unique_state_count()))
}

const SMALL: [&str; 16] = [
    "single-node-unlock-with-del",
    "single-node-unlock-with-cad",
    "master-replica-failover",
    // Two replicas, whose rows the symmetry reduction sorts.
    "master-replicas-failover-wait-one",
    "master-replicas-failover-wait-all",
    "redlock-partitioned-clients",
    "node-clock-jump-forward-by-drift",
    "node-clock-jump-forward-past-drift",
    "node-clock-jump-backward",
    "client-clock-jump-backward-by-drift",
    "client-clock-jump-backward-past-drift",
    "clock-drift-covered",
    "clock-drift-uncovered",
    "crash-immediate-restart-no-persistence",
    // Clients whose quorums differ: the client permutation is off, the node sort stays.
    "holder-all-nodes-one-crash",
    "holder-all-nodes-two-crashes",
];

/// Scenarios whose fencing tokens come from counters (on the lock nodes or a counter node),
/// which the symmetry reduction permutes with their node's and client's rows.
const FENCED: [&str; 4] = [
    "fencing-lock-quorum",
    "fencing-lock-quorum-fsync-always",
    "fencing-counter-after-acquire-pause",
    "fencing-counter-after-acquire-restarts-empty",
];

#[test]
fn symmetry_changes_counts_but_not_verdicts() {
    for name in SMALL.iter().chain(&FENCED) {
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
        let horizon = 2 * scenario.lock.params.ttl.0 as u32 + 4;
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

/// A scenario from its configuration tables (the expectation is not read here).
fn generated(name: &str, body: &str) -> Scenario {
    let text = format!(
        "name = \"{name}\"\ntitle = \"t\"\nclaim = \"c\"\nsource = \"derived\"\nprose = \"p\"\n\
         {body}\n[expect]\n\"mutual exclusion\" = \"holds\"\n"
    );
    Scenario::from_str(&format!("{name}.toml"), &text)
        .unwrap_or_else(|e| panic!("generated scenario {name}: {e}"))
}

fn mutual_exclusion_violated(verdicts: &[(&'static str, bool)]) -> bool {
    verdicts
        .iter()
        .find(|(name, _)| *name == "mutual exclusion")
        .expect("every safety run checks mutual exclusion")
        .1
}

/// The model with the reductions that only the full catalog and the boundary sweep
/// cross-check switched off: dead-node elimination, the pruning of idle clock jumps, and the
/// settled-round and ghost reductions (exact ghosts).
fn unreduced(scenario: &Scenario) -> RedlockModel {
    RedlockModel::new(scenario)
        .with_dead_node_elimination(false)
        .with_idle_jump_pruning(false)
        .with_exact_ghosts(true)
}

/// The catalog files [`reductions_change_counts_but_not_verdicts_on_the_catalog`] leaves to
/// the ignored full run, with the reason.
const LEFT_TO_THE_FULL_CATALOG_RUN: [(&str, &str); 1] = [(
    "contention-livelock-three-clients",
    "19 million states without the reductions, two thirds of the whole sweep's time; its \
     twin with isolated rounds (1.9 million) keeps the three contending clients in the sweep",
)];

/// Dead-node elimination, idle-jump pruning and the settled-round reductions must keep every
/// verdict of the catalog (but the files in [`LEFT_TO_THE_FULL_CATALOG_RUN`], named on stderr).
#[test]
fn reductions_change_counts_but_not_verdicts_on_the_catalog() {
    for (name, why) in LEFT_TO_THE_FULL_CATALOG_RUN {
        assert!(
            redlock_lab::catalog::find(name).is_some(),
            "{name} is no catalog file"
        );
        eprintln!("reductions: {name} is left to the full run (--ignored): {why}");
    }
    reductions_keep_the_catalogs_verdicts(|name| {
        LEFT_TO_THE_FULL_CATALOG_RUN
            .iter()
            .all(|&(left, _)| left != name)
    });
}

/// [`reductions_change_counts_but_not_verdicts_on_the_catalog`] on every file.
#[test]
#[ignore = "runs the whole catalog without the reductions, 19 million states for one file; run with --ignored"]
fn reductions_change_counts_but_not_verdicts_on_the_whole_catalog() {
    reductions_keep_the_catalogs_verdicts(|_| true);
}

fn reductions_keep_the_catalogs_verdicts(included: impl Fn(&str) -> bool) {
    let mut merged = 0;
    for entry in redlock_lab::catalog::CATALOG {
        let scenario = entry.scenario().expect("catalog files are valid");
        if !included(&scenario.name) {
            continue;
        }
        let (reduced, reduced_states) = verdicts_on_two_threads(RedlockModel::new(&scenario));
        let (full, full_states) = verdicts_on_two_threads(unreduced(&scenario));
        assert_eq!(reduced, full, "{}", scenario.name);
        if let (Some(reduced_states), Some(full_states)) = (reduced_states, full_states) {
            assert!(
                reduced_states <= full_states,
                "{}: {reduced_states} > {full_states}",
                scenario.name
            );
            merged += full_states - reduced_states;
        }
    }
    assert!(merged > 0, "the reduction merges some states");
}

/// A sweep across the boundaries the catalog teaches, with every reduction on and with the
/// reductions of [`unreduced`] off: the verdicts agree, and each sits on the side of its boundary
/// that the safety inequality says.
#[test]
fn boundary_sweeps_agree_with_and_without_the_reductions() {
    let mut cases: Vec<(String, String, bool)> = Vec::new();
    for (ttl, jumps) in [(6, 1..=4), (8, 1..=3)] {
        for jump in jumps {
            cases.push((
                format!("node-jump-ttl{ttl}-j{jump}"),
                format!(
                    "[lock]\nttl_ticks = {ttl}\ndrift_ticks = 1\n[network]\nreach = [[1, 2], [2, 3]]\n\
                     [faults.clock_jumps]\ntarget = \"node\"\nindex = 2\njump_ticks = {jump}"
                ),
                jump > 1,
            ));
        }
    }
    for jump in 1..=3 {
        cases.push((
            format!("node-jump-five-nodes-j{jump}"),
            format!(
                "[lock]\nnodes = 5\nttl_ticks = 6\ndrift_ticks = 1\n\
                 [network]\nreach = [[1, 2, 3], [3, 4, 5]]\n\
                 [faults.clock_jumps]\ntarget = \"node\"\nindex = 3\njump_ticks = {jump}"
            ),
            jump > 1,
        ));
    }
    for back in 1..=3 {
        cases.push((
            format!("client-jump-back-{back}"),
            format!(
                "[lock]\nttl_ticks = 6\ndrift_ticks = 1\n\
                 [faults.clock_jumps]\ntarget = \"client\"\njump_ticks = -{back}"
            ),
            back > 1,
        ));
    }
    for delay in 3..=6 {
        cases.push((
            format!("restart-delay-{delay}"),
            format!(
                "[lock]\nttl_ticks = 6\ndrift_ticks = 1\n\
                 [faults.crashes]\ncount = 1\npersistence = \"none\"\nrestart_delay_ticks = {delay}"
            ),
            delay < 5,
        ));
    }
    for (node_error, client_error, drift) in [(1, 0, 1), (0, 1, 1), (1, 1, 1), (1, 1, 2), (2, 1, 2)]
    {
        cases.push((
            format!("clock-error-n{node_error}-c{client_error}-d{drift}"),
            format!(
                "[lock]\nttl_ticks = 6\ndrift_ticks = {drift}\n\
                 [clock]\nnode_error_ticks = {node_error}\nclient_error_ticks = {client_error}"
            ),
            node_error + client_error > drift,
        ));
    }
    for (name, body, violated) in cases {
        let scenario = generated(&name, &body);
        let (reduced, reduced_states) = verdicts(RedlockModel::new(&scenario));
        let (full, full_states) = verdicts(unreduced(&scenario));
        println!("{name}: {reduced_states} states reduced, {full_states} without");
        assert_eq!(reduced, full, "{name}");
        assert_eq!(mutual_exclusion_violated(&reduced), violated, "{name}");
    }
}

/// The fingerprint is a sound quotient when states that share one have the same futures: the
/// same set of successor fingerprints (a step that leads back to the shared fingerprint aside,
/// since a self-loop reaches nothing new). Breadth first over the model, keeping the first
/// state met for each fingerprint; every later state with that fingerprint must have the same
/// successors as the first. (Faults spent on a node no client reads again are not covered:
/// they only lead to states with less budget, which the state that keeps its budget
/// simulates; the scenarios here have none left once a node is dead.)
#[test]
fn states_with_one_fingerprint_have_the_same_futures() {
    use std::collections::{BTreeSet, HashMap, VecDeque};
    use std::hash::BuildHasher;

    for name in [
        // Lock-quorum fencing tokens written back: the write-back round reads nodes again.
        "fencing-lock-quorum",
        // A counter node's token taken after the lease check, under a pause.
        "fencing-counter-after-acquire-pause",
        "gc-pause-after-acquisition",
        "crash-delayed-restart-ttl-minus-drift",
        "crash-restart-client-guard-ttl-minus-drift",
        "redlock-fault-free-five-nodes",
        "node-clock-jump-forward-five-nodes",
        "master-replica-failover-promotion-delay",
        "redlock-replicated-node-failover-promotion-delay",
        "master-replicas-failover-wait-all",
        "client-crash-while-holding",
        "shared-token-unlock-on-failed-acquire",
        "lock-extension-capped",
    ] {
        let model = RedlockModel::new(&load(name));
        let hasher = std::hash::RandomState::new();
        let successors = |state: &redlock_lab::model::World| -> BTreeSet<u64> {
            model
                .next_steps(state)
                .into_iter()
                .map(|(_, next)| hasher.hash_one(&next))
                .collect()
        };
        let mut first = HashMap::new();
        let mut queue: VecDeque<_> = model.init_states().into();
        while let Some(state) = queue.pop_front() {
            for (step, next) in model.next_steps(&state) {
                let fingerprint = hasher.hash_one(&next);
                let Some(seen) = first.get(&fingerprint) else {
                    first.insert(fingerprint, next.clone());
                    queue.push_back(next);
                    continue;
                };
                if *seen == next {
                    continue;
                }
                let mut theirs = successors(seen);
                let mut ours = successors(&next);
                theirs.remove(&fingerprint);
                ours.remove(&fingerprint);
                assert_eq!(
                    theirs, ours,
                    "{name}: two states share a fingerprint but not their futures \
                     (the second reached by {step:?}):\n{seen:?}\n{next:?}"
                );
            }
        }
    }
}

/// Clients whose quorums differ (`[lock] quorum = [3, 2]`) are not interchangeable: the
/// symmetry reduction permutes no clients then, the phantom-client cutoff does not apply, and
/// a check with the cutoff and the split on agrees with the plain model, every reduction off.
#[test]
fn per_client_quorums_keep_their_verdicts_with_every_reduction_off() {
    for name in ["holder-all-nodes-one-crash", "holder-all-nodes-two-crashes"] {
        let scenario = load(name);
        let (reduced, _) = verdicts(RedlockModel::new(&scenario));
        let (plain, _) = verdicts(unreduced(&scenario).with_symmetry(false));
        assert_eq!(reduced, plain, "{name}");
    }
    // Three clients, two of them locking every node: two clients of the three would not
    // stand for every pair (c1 and c2 alone survive two crashes, c1 and c3 do not), so no
    // cutoff; the check's verdicts are the plain model's.
    for (name, crashes) in [
        ("three-clients-one-crash", 1),
        ("three-clients-two-crashes", 2),
    ] {
        let scenario = generated(
            name,
            &format!(
                "[lock]\nnodes = 3\nclients = 3\nquorum = [3, 3, 2]\nttl_ticks = 3\ndrift_ticks = 1\n\
                 [faults.crashes]\ncount = {crashes}\npersistence = \"none\""
            ),
        );
        let model = RedlockModel::new(&scenario);
        assert!(model.with_phantom_clients().is_none(), "{name}");
        // Every reduction but the node sort off (the client permutation is off already, the
        // quorums differing): the node sort with per-client quorums is cross-checked on the
        // two files above, and the other reductions on the catalog. Without the node sort too,
        // the run that holds takes two minutes of this binary's four.
        let (plain, _) = verdicts_on_two_threads(unreduced(&scenario));
        let report = redlock_lab::check::Check::new(&scenario).run();
        let checked = report
            .property("mutual exclusion")
            .expect("mutual exclusion is checked");
        assert!(!report.cutoff, "{name}");
        assert_eq!(
            checked.verdict == redlock_lab::scenario::Verdict::Violated,
            mutual_exclusion_violated(&plain),
            "{name}"
        );
        assert_eq!(mutual_exclusion_violated(&plain), crashes == 2, "{name}");
    }
}
