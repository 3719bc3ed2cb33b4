//! The phantom-client cutoff (`RedlockModel::with_phantom_clients`) and the client half of a
//! verdict's reach (`check::reach`) against the real model:
//! with three clients, every verdict of mutual exclusion it settles is the real one.
//!
//! "Holds" with two clients and phantom refusals must mean "holds" with three; a violation it
//! finds without any refusal must be a violation with three, of the same length.
//!
//! On the catalog, a third real client is compared for every two-client scenario whose run
//! with three real clients settles within a state budget (29 of the 68 today, a floor the test
//! keeps); the others are named in `LEFT_TO_THE_FULL_RUN` with the reason, and only the ignored
//! full run compares them. The counts and the names left are written to the real stderr, where
//! a passing `cargo test` shows them.

mod common;

use redlock_lab::model::{RedlockModel, Step};
use redlock_lab::scenario::Scenario;
use stateright::{Checker, Model};

fn scenario(name: &str, body: &str) -> Scenario {
    let text = format!(
        "name = \"{name}\"\ntitle = \"t\"\nclaim = \"c\"\nsource = \"derived\"\nprose = \"p\"\n\
         [lock]\nnodes = 3\nclients = 3\nttl_ticks = 4\ndrift_ticks = 1\n{body}\n\
         [expect]\n\"mutual exclusion\" = \"holds\"\n"
    );
    Scenario::from_str(&format!("{name}.toml"), &text)
        .unwrap_or_else(|e| panic!("generated scenario {name}: {e}"))
}

/// Mutual exclusion's counterexample (its steps), or `None` when it holds, and the states.
fn mutual_exclusion(model: &RedlockModel) -> (Option<Vec<Step>>, usize) {
    let checker = model.clone().checker().spawn_bfs().join();
    let path = checker.discovery("mutual exclusion").map(|path| {
        path.into_vec()
            .into_iter()
            .filter_map(|(_, step)| step)
            .collect()
    });
    (path, checker.unique_state_count())
}

#[test]
fn two_clients_with_phantoms_settle_what_three_clients_do() {
    const CASES: [(&str, &str); 10] = [
        ("fault-free", ""),
        (
            "node-jump-1",
            "[faults.clock_jumps]\ntarget = \"node\"\njump_ticks = 1",
        ),
        (
            "node-jump-2",
            "[faults.clock_jumps]\ntarget = \"node\"\njump_ticks = 2",
        ),
        (
            "node-jumps-of-two-sizes",
            "[faults.clock_jumps]\ntarget = \"node\"\njump_ticks = [1, 2]",
        ),
        (
            "client-jump-back-1",
            "[faults.clock_jumps]\ntarget = \"client\"\njump_ticks = -1",
        ),
        (
            "client-jump-back-2",
            "[faults.clock_jumps]\ntarget = \"client\"\njump_ticks = -2",
        ),
        (
            "restart-delay-2",
            "[faults.crashes]\ncount = 1\npersistence = \"none\"\nrestart_delay_ticks = 2",
        ),
        (
            "restart-delay-3",
            "[faults.crashes]\ncount = 1\npersistence = \"none\"\nrestart_delay_ticks = 3",
        ),
        (
            "clock-error",
            "[clock]\nnode_error_ticks = 1\nclient_error_ticks = 1",
        ),
        (
            "message-loss",
            "[network]\nmessage_loss = 1\n[faults.clock_jumps]\ntarget = \"node\"\njump_ticks = 1",
        ),
    ];
    // Each case's two breadth-first runs are single-threaded: two threads take the cases in
    // turn, so the binary's last test does not leave a core idle.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(&(name, body)) = CASES.get(index) else {
                return done;
            };
            let real = RedlockModel::new(&scenario(name, body));
            let cut = real
                .with_phantom_clients()
                .expect("eligible: three alike clients, CAD");
            assert!(cut.has_phantom_clients());
            done.push((index, name, mutual_exclusion(&real), mutual_exclusion(&cut)));
        }
    };
    let mut runs = std::thread::scope(|scope| {
        let other = scope.spawn(work);
        let mut runs = work();
        runs.extend(other.join().expect("the other thread's cases run"));
        runs
    });
    runs.sort_by_key(|run| run.0);
    let mut settled = 0;
    for (_, name, (real_path, real_states), (cut_path, cut_states)) in runs {
        println!(
            "{name}: {real_states} states with three clients, {cut_states} with two and phantoms; \
             violated: {} / {}",
            real_path.is_some(),
            cut_path.is_some()
        );
        match (&cut_path, &real_path) {
            (None, real) => {
                assert!(
                    real.is_none(),
                    "{name}: the cutoff says holds, three clients break it"
                );
                settled += 1;
            }
            (Some(steps), real) if !steps.iter().any(|s| matches!(s, Step::Refuse { .. })) => {
                let real = real.as_ref().unwrap_or_else(|| {
                    panic!("{name}: a violation without refusals must be real: {steps:?}")
                });
                assert_eq!(steps.len(), real.len(), "{name}: not the shortest");
                settled += 1;
            }
            // A violation that needs a phantom's key settles nothing.
            (Some(_), _) => {}
        }
    }
    assert!(
        settled >= 6,
        "the cutoff settles most of the sweep, settled {settled}"
    );
}

#[test]
fn the_cutoff_refuses_what_its_argument_does_not_cover() {
    let two_clients = Scenario::from_str(
        "two.toml",
        "name = \"two\"\ntitle = \"t\"\nclaim = \"c\"\nsource = \"derived\"\nprose = \"p\"\n\
         [lock]\nclients = 2\n[expect]\n\"mutual exclusion\" = \"holds\"\n",
    )
    .unwrap();
    assert!(
        RedlockModel::new(&two_clients)
            .with_phantom_clients()
            .is_none()
    );
    let with_del = Scenario::from_str(
        "del.toml",
        "name = \"del\"\ntitle = \"t\"\nclaim = \"c\"\nsource = \"derived\"\nprose = \"p\"\n\
         [lock]\nclients = 3\nunlock = \"del\"\n[expect]\n\"mutual exclusion\" = \"holds\"\n",
    )
    .unwrap();
    assert!(
        RedlockModel::new(&with_del)
            .with_phantom_clients()
            .is_none()
    );
    let partitioned = scenario("partitioned", "[network]\nreach = [[1, 2], [2, 3], [1, 3]]");
    assert!(
        RedlockModel::new(&partitioned)
            .with_phantom_clients()
            .is_none()
    );
}

#[test]
fn check_uses_the_cutoff_and_reports_the_same_verdicts() {
    use redlock_lab::check::Check;
    for (name, body) in [
        ("fault-free", ""),
        (
            "node-jump-2",
            "[faults.clock_jumps]\ntarget = \"node\"\njump_ticks = 2",
        ),
        (
            "clock-error",
            "[clock]\nnode_error_ticks = 1\nclient_error_ticks = 1",
        ),
    ] {
        let scenario = scenario(name, body);
        let cut = Check::new(&scenario).run();
        let full = Check::new(&scenario).cutoff(false).run();
        assert!(
            cut.cutoff,
            "{name}: three alike clients are settled by the cutoff"
        );
        assert!(!full.cutoff);
        let verdicts = |r: &redlock_lab::check::Report| {
            r.properties
                .iter()
                .map(|p| (p.name.clone(), p.verdict))
                .collect::<Vec<_>>()
        };
        assert_eq!(verdicts(&cut), verdicts(&full), "{name}");
        // The state counts without the breadth-first probe, which stops as soon as every
        // property is found and so hides how much of the space each side needs.
        let cut = Check::new(&scenario).probe_states(0).run();
        let full = Check::new(&scenario).probe_states(0).cutoff(false).run();
        assert!(
            cut.unique_states * 10 < full.unique_states,
            "{name}: {} states with the cutoff, {} without",
            cut.unique_states,
            full.unique_states
        );
    }
}

/// The most states (zones for the zone engine, which cost more each) one run with three real
/// clients may explore in `cargo test`: a count, not a time, so what is compared does not
/// depend on the machine's load. A run that needs more is printed as not settled (never
/// passed silently), and the ignored test runs it in full.
const STATE_BUDGET: usize = 500_000;
const ZONE_BUDGET: usize = 20_000;

/// The two-client catalog scenarios the budgeted run leaves to the full run (48 of 80 today):
/// with three real clients and the cutoff off, each needs more than [`STATE_BUDGET`] states
/// (or [`ZONE_BUDGET`] zones). A third real client multiplies the states of every round, so
/// that even the fault-free lock at three nodes needs more; crashes with a restart delay or a
/// client guard, client crashes (which turn symmetry off), storage, fencing counters and
/// failover multiply them again. Only the ignored full run compares them, which takes hours;
/// the budgeted run fails if it leaves any other scenario unsettled. It does not run the listed
/// ones at all (each took its whole budget to settle nothing); the ignored full run does.
/// `token-reused-across-retries` is the one exception: its late releases keep the cutoff off,
/// so the check of three clients with the cutoff on explores all 6.9 million states too.
const LEFT_TO_THE_FULL_RUN: &[&str] = &[
    "antirez-random-token-cas",
    "antirez-ten-percent-rate-error-default-drift",
    "client-clock-jump-backward-by-drift",
    "client-crash-retry-outlasts-ttl",
    "client-crash-while-holding",
    "clock-error-budget-covered",
    "crash-delayed-restart-clock-jump",
    "crash-delayed-restart-covers-node-clock-error",
    "crash-delayed-restart-full-ttl-clock-jump",
    "crash-delayed-restart-node-clock-error",
    "crash-delayed-restart-one-tick-short",
    "crash-delayed-restart-ttl-minus-drift",
    "crash-restart-aof-always-node-clock-jump",
    "crash-restart-client-guard-one-tick-short",
    "crash-restart-client-guard-ttl-minus-drift",
    "default-config-clock-error-covered",
    "fencing-counter-after-acquire-pause",
    "fencing-counter-after-acquire-restarts-empty",
    "fencing-lock-quorum-counter-lost",
    "fencing-lock-quorum-fsync-always",
    "fencing-lock-quorum-max-only",
    "fencing-lock-quorum-node-clock-jump",
    "fencing-lock-quorum",
    "fencing-on-writes-only",
    "fencing-token-rescues-gc-pause",
    "fencing-token-two-step-check",
    "four-nodes-one-crash-no-persistence",
    "gc-pause-after-acquisition",
    "holder-all-nodes-one-crash",
    "holder-all-nodes-two-crashes",
    "lock-extension-capped",
    "network-delayed-write",
    "node-clock-jumps-share-drift",
    "redlock-cluster-shards-promotion-delay",
    "redlock-cluster-shards",
    "redlock-fault-free-five-nodes",
    "redlock-fault-free",
    "redlock-replicated-node-failover-promotion-delay",
    "redlock-replicated-node-failover",
    "redlock-unlock-cad-on-failed-acquire",
    "seed-fenced-update-unfenced-read",
    "synchronous-bounds-margin-2",
    "synchronous-bounds-margin-3",
    "synchronous-bounds-node-clock-error-margin-2",
    "synchronous-bounds-node-clock-error-margin-3",
    "synchronous-bounds-node-clock-jump-margin-2",
    "synchronous-bounds-node-clock-jump-margin-3",
    "token-fresh-per-retry",
    "token-reused-across-retries",
    "watchdog-extension-through-pause",
];

/// Today's counts: two-client scenarios compared with three real clients within the budget,
/// and of those, settled by the cutoff.
const COMPARED_AT_LEAST: usize = 32;
const BY_CUTOFF_AT_LEAST: usize = 23;

/// Every catalog scenario with two clients whose clients reach every node and whose run with
/// three real clients settles within the budget (all but [`LEFT_TO_THE_FULL_RUN`]): the
/// verdict the cutoff settles (two clients and phantom refusals) and the verdict a reach of
/// "any number of clients" predicts must both be the real one.
#[test]
fn a_third_real_client_agrees_with_the_cutoff_and_the_reach_wherever_it_settles_in_budget() {
    third_client(true);
}

/// The same without budgets: every scenario settled with three real clients.
#[test]
#[ignore = "runs every two-client catalog scenario with three real clients in full; run with --ignored"]
fn every_catalog_scenario_with_a_third_real_client_in_full() {
    third_client(false);
}

fn third_client(budgeted: bool) {
    use redlock_lab::check::Check;
    use redlock_lab::check::reach::ClientCounts;
    use redlock_lab::proto::NodeSet;
    use redlock_lab::scenario::Verdict;

    let mutex = |report: &redlock_lab::check::Report| {
        let p = report.property("mutual exclusion").expect("judged");
        (p.verdict, p.reach)
    };
    let scenarios: Vec<_> = redlock_lab::catalog::scenarios()
        .unwrap()
        .into_iter()
        .filter(|scenario| {
            let all = NodeSet::first(scenario.lock.nodes());
            scenario.lock.clients == 2 && scenario.network.reach.iter().all(|r| *r == all)
        })
        .collect();
    let eligible = scenarios.len();
    // Per scenario: whether the run with three real clients settled, and whether the cutoff
    // settled it too. Two scenarios at a time, each budgeted run on one checker thread.
    let outcomes = common::on_two_threads(&scenarios, |scenario| {
        // A listed scenario would explore its whole budget to settle nothing: the budgeted
        // run leaves it to the full run at once (it is still counted and named as left).
        if budgeted && LEFT_TO_THE_FULL_RUN.contains(&scenario.name.as_str()) {
            return None;
        }
        let all = NodeSet::first(scenario.lock.nodes());
        let (verdict, reach) = mutex(&Check::new(scenario).threads(1).run());
        let mut three = scenario.clone();
        three.lock.clients = 3;
        three.network.reach = vec![all; 3];
        let mut real = Check::new(&three).cutoff(false).reach(false).threads(1);
        if budgeted {
            real = match real.chosen_engine() {
                redlock_lab::check::Engine::Zones => real.max_states(ZONE_BUDGET),
                _ => real.max_states(STATE_BUDGET),
            };
        }
        let (real, _) = mutex(&real.run());
        if real == Verdict::Incomplete {
            return None;
        }
        if reach.clients == ClientCounts::Any {
            assert_eq!(
                real, verdict,
                "{}: the reach says any number of clients",
                scenario.name
            );
        }
        let cut = Check::new(&three).reach(false).threads(1).run();
        if cut.cutoff {
            assert_eq!(
                mutex(&cut).0,
                real,
                "{}: the cutoff's verdict",
                scenario.name
            );
        }
        Some(cut.cutoff)
    });
    let compared = outcomes.iter().flatten().count();
    let by_cutoff = outcomes.iter().flatten().filter(|cut| **cut).count();
    let unsettled: Vec<String> = scenarios
        .iter()
        .zip(&outcomes)
        .filter(|(_, outcome)| outcome.is_none())
        .map(|(scenario, _)| scenario.name.clone())
        .collect();
    // Reported where a passing run shows it (the print macros are captured).
    common::tell(&format!(
        "cutoff: {compared} of {eligible} two-client scenarios compared with three real clients \
         ({by_cutoff} settled by the cutoff); {} left to the ignored full run{}{}",
        unsettled.len(),
        if budgeted {
            format!(" (more than {STATE_BUDGET} states or {ZONE_BUDGET} zones)")
        } else {
            String::new()
        },
        if unsettled.is_empty() {
            String::new()
        } else {
            format!(": {}", unsettled.join(", "))
        }
    ));
    if budgeted {
        // ARCHITECTURE.md says how much of the catalog this compares, in these numbers.
        let claim = format!(
            "{COMPARED_AT_LEAST} of {eligible} two-client scenarios that settle within its budget, \
             the other {} named",
            eligible - COMPARED_AT_LEAST
        );
        let architecture =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/ARCHITECTURE.md"))
                .expect("ARCHITECTURE.md");
        assert!(
            architecture.contains(&claim),
            "ARCHITECTURE.md should say {claim:?}"
        );
        let undocumented: Vec<&String> = unsettled
            .iter()
            .filter(|name| !LEFT_TO_THE_FULL_RUN.contains(&name.as_str()))
            .collect();
        assert!(
            undocumented.is_empty(),
            "left unsettled but not in LEFT_TO_THE_FULL_RUN: {undocumented:?}"
        );
    }
    assert!(
        compared >= COMPARED_AT_LEAST && by_cutoff >= BY_CUTOFF_AT_LEAST,
        "{compared} compared (today {COMPARED_AT_LEAST}), {by_cutoff} by the cutoff (today \
         {BY_CUTOFF_AT_LEAST})"
    );
}
