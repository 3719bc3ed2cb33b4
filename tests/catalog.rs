//! The catalog: every `models/*.toml` file's `[expect]` against the checker's verdicts, pinned
//! state counts and one pinned counterexample (so an accidental change to the state space
//! fails here), and the bad-file errors with their `file:line:column`.

mod common;

use std::path::{Path, PathBuf};

use redlock_lab::actor::Process;
use redlock_lab::cause;
use redlock_lab::check::{Check, Report, Strategy, story};
use redlock_lab::event::Event;
use redlock_lab::model::{RedlockModel, Step};
use redlock_lab::scenario::{Scenario, ScenarioError, Verdict};
use stateright::{Checker, Model};

fn catalog() -> Vec<PathBuf> {
    common::catalog_files()
}

fn load(name: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("models")
        .join(format!("{name}.toml"));
    Scenario::load(path).expect("catalog files are valid")
}

fn table_row(report: &Report) -> String {
    let verdicts: Vec<String> = report
        .properties
        .iter()
        .map(|p| {
            let mark = match p.expected {
                Some(e) if e == p.verdict => "",
                Some(_) => " MISMATCH",
                None => " (no expectation)",
            };
            let necessary = p
                .necessary
                .as_ref()
                .map(|n| {
                    let names: Vec<&str> = n.iter().map(|i| i.name()).collect();
                    format!(" needs [{}]", names.join(", "))
                })
                .unwrap_or_default();
            format!("{}={}{mark}{necessary}", p.name, p.verdict)
        })
        .collect();
    format!(
        "{:<48} {:>9} {:>7.2}s  {}",
        report.name,
        report.unique_states,
        report.seconds,
        verdicts.join(", ")
    )
}

#[test]
fn every_catalog_verdict_matches_its_expectation() {
    let files = catalog();
    assert!(
        files.len() >= 30,
        "the catalog covers research/scenarios.md"
    );
    let mut mismatches = Vec::new();
    for file in files {
        let scenario = Scenario::load(&file).unwrap_or_else(|e| panic!("{e}"));
        // With the necessary causes: every violated property lists them, and every declared
        // `[expect] mechanism` is checked against them and against the shortest story.
        let report = Check::new(&scenario).run_with_causes();
        println!("{}", table_row(&report));
        for p in &report.properties {
            let listed = p.necessary.is_some();
            assert_eq!(
                listed,
                p.verdict == Verdict::Violated,
                "{}: {}: necessary causes are listed exactly for violated properties",
                scenario.name,
                p.name
            );
        }
        mismatches.extend(expectation_problems(&scenario, &report));
        // A catalog file that breaks something says what breaks it, and that is held to the
        // checker below (a file without a declaration would not be).
        if scenario.mechanism.is_empty()
            && report
                .properties
                .iter()
                .any(|p| p.verdict == Verdict::Violated)
        {
            mismatches.push(format!(
                "{}: violates a property but declares no `[expect] mechanism`",
                file.display()
            ));
        }
        mismatches.extend(
            cause::mechanism_problems(&scenario, &report)
                .into_iter()
                .map(|problem| format!("{}: {problem}", file.display())),
        );
        for p in report.mismatches() {
            mismatches.push(format!(
                "{}: {} expected {} but the checker says {}{}",
                file.display(),
                p.name,
                p.expected.expect("a mismatch has an expectation"),
                p.verdict,
                p.counterexample
                    .as_ref()
                    .map(|steps| format!("\n    {}", steps.join("\n    ")))
                    .unwrap_or_default()
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// What `report` leaves of `scenario`'s `[expect]` unsettled: a property it names that the
/// report does not judge, and a property the check could not settle (`incomplete`), which
/// [`Report::mismatches`] passes over because it differs from nothing.
fn expectation_problems(scenario: &Scenario, report: &Report) -> Vec<String> {
    let mut problems = Vec::new();
    for (name, expected) in &scenario.expect {
        match report.property(name) {
            None => problems.push(format!(
                "{}: {name} is expected {expected} but the report does not judge it",
                scenario.name
            )),
            Some(p) if p.verdict == Verdict::Incomplete => problems.push(format!(
                "{}: {name} is expected {expected} but the check did not settle it ({:?})",
                scenario.name, report.stopped
            )),
            Some(_) => {}
        }
    }
    for p in &report.properties {
        if p.verdict == Verdict::Incomplete && scenario.expected(&p.name).is_none() {
            problems.push(format!(
                "{}: {} is incomplete ({:?})",
                scenario.name, p.name, report.stopped
            ));
        }
    }
    problems
}

/// An expected property the report leaves out, and one it leaves incomplete, are failures of
/// the catalog test, not silent passes.
#[test]
fn an_unsettled_or_unjudged_expectation_fails_the_catalog_test() {
    let scenario = load("single-node-baseline");
    let report = Check::new(&scenario).run();
    assert_eq!(
        expectation_problems(&scenario, &report),
        Vec::<String>::new()
    );
    // A limit far below the file's 361 states: mutual exclusion, which holds, is not settled.
    let stopped = Check::new(&scenario).max_states(10).probe_states(0).run();
    let incomplete: Vec<&str> = stopped
        .properties
        .iter()
        .filter(|p| p.verdict == Verdict::Incomplete)
        .map(|p| p.name.as_str())
        .collect();
    assert!(incomplete.contains(&"mutual exclusion"), "{incomplete:?}");
    assert_eq!(
        stopped.mismatches().count(),
        0,
        "mismatches() passes it over"
    );
    let problems = expectation_problems(&scenario, &stopped);
    assert_eq!(problems.len(), incomplete.len(), "{problems:?}");
    assert!(
        problems
            .iter()
            .all(|p| p.contains("but the check did not settle it")),
        "{problems:?}"
    );
    // A property `[expect]` names that the report does not carry.
    let mut missing = report.clone();
    let dropped = missing.properties.remove(0).name;
    let problems = expectation_problems(&scenario, &missing);
    assert_eq!(
        problems,
        [format!(
            "{}: {dropped} is expected {} but the report does not judge it",
            scenario.name,
            scenario.expected(&dropped).unwrap()
        )]
    );
}

/// The state counts of a few scenarios, pinned: a change to the state space (the canonical
/// view, the steps, the core's semantics) shows up here first. Update deliberately.
#[test]
fn unique_state_counts_are_pinned() {
    for (name, expected) in [
        ("single-node-baseline", 361),
        ("redlock-partitioned-clients", 563),
        ("node-clock-jump-forward-by-drift", 967),
        ("crash-delayed-restart-ttl-minus-drift", 15401),
    ] {
        let report = Check::new(&load(name)).run();
        assert_eq!(report.unique_states, expected, "{name}");
    }
}

/// A probe cut short hands over to depth first, which explores its states again: the count
/// is depth first's, whatever the probe's size and wherever its threads saw the stop, so one
/// file gives one count in every run.
#[test]
fn a_cut_probe_does_not_change_the_state_count() {
    let scenario = load("crash-delayed-restart-ttl-minus-drift");
    for probe in [0, 500, 5_000] {
        for threads in [1, 2] {
            let report = Check::new(&scenario)
                .threads(threads)
                .probe_states(probe)
                .run();
            assert_eq!(
                report.unique_states, 15401,
                "probe {probe}, {threads} threads"
            );
        }
    }
}

/// The default strategy (depth-first verdicts on two threads, then breadth first on one for
/// each violated property) gives exactly the verdicts and counterexamples of plain breadth
/// first on one thread, and, where nothing is violated, the same state count (both exhaust
/// the same reachable set).
#[test]
fn depth_first_verdicts_and_counterexamples_are_breadth_firsts() {
    for name in [
        "single-node-baseline",
        "node-clock-jump-forward-past-drift",
        "node-clock-jump-forward-by-drift",
        // Two violated properties, with different shortest counterexamples.
        "synchronous-bounds-margin-2",
        "crash-restart-aof-everysec",
        "contention-livelock",
        "master-replica-failover",
    ] {
        let scenario = load(name);
        let default = Check::new(&scenario).threads(2).run();
        let reference = Check::new(&scenario)
            .strategy(Strategy::BreadthFirst)
            .threads(1)
            .run();
        assert_eq!(default.properties, reference.properties, "{name}");
        if !default
            .properties
            .iter()
            .any(|p| p.counterexample.is_some())
        {
            assert_eq!(default.unique_states, reference.unique_states, "{name}");
        }
    }
}

/// The shortest counterexample of Kleppmann's clock jump, pinned step by step (stateright's
/// `assert_discovery` style).
#[test]
fn the_node_jump_counterexample_is_pinned() {
    let model = RedlockModel::new(&load("node-clock-jump-forward-past-drift"));
    let checker = model.checker().spawn_bfs().join();
    let path = checker.assert_any_discovery("mutual exclusion");
    let actions = path.clone().into_actions();
    println!("{actions:?}");
    let steps: Vec<String> = path
        .into_vec()
        .into_iter()
        .filter_map(|(s, a)| a.map(|a| checker.model().describe(&s, &a)))
        .collect();
    println!("{}", steps.join("\n"));
    let set = |client, node| Step::Deliver {
        client,
        node,
        early: false,
        acked: 0,
    };
    let expected = vec![
        Step::Begin(0),
        set(0, 0),
        set(0, 1),
        // n1 and n2 are a quorum: c1 decides at once (the core's default, `at-quorum`).
        Step::Decide(0),
        Step::Begin(1),
        set(1, 2),
        Step::Tick,
        Step::Tick,
        Step::Jump {
            target: Process::Node(1),
            ticks: 2,
        },
        set(1, 1),
        Step::Decide(1),
    ];
    assert_eq!(actions, expected);
    checker.assert_discovery("mutual exclusion", expected);
    assert_eq!(
        steps.last().map(String::as_str),
        Some(
            "t=2 c2 acquires n2 n3 (T2=2, validity 1), believes it holds the lock until its clock reads 3"
        )
    );
}

/// `client-crash-while-holding` aims its crash at c1 while it holds the lock: the shortest
/// run in which c2 never acquires has c1 acquire, then die believing it holds the lock with its
/// keys on the nodes, and c2's second attempt meet those keys.
#[test]
fn the_aimed_client_crash_strikes_the_holder_while_it_holds() {
    let scenario = load("client-crash-while-holding");
    let story = story(&scenario, "eventually acquired").expect("a counterexample");
    let events: Vec<(&str, &Event)> = story
        .lines
        .iter()
        .map(|l| (l.actor.as_str(), &l.event))
        .collect();
    let crash = events
        .iter()
        .position(|(_, e)| matches!(e, Event::ClientCrashed { .. }))
        .expect("the counterexample has the client crash");
    let (actor, Event::ClientCrashed { believed, keys }) = events[crash] else {
        panic!("found above");
    };
    assert_eq!(actor, "c1", "the crash is aimed at c1");
    assert!(believed, "c1 dies while it believes it holds the lock");
    assert_eq!(keys.0.len(), 3, "its keys stay on every node");
    assert!(
        events[..crash]
            .iter()
            .any(|(a, e)| *a == "c1" && matches!(e, Event::Acquired { .. })),
        "c1 acquired before it died"
    );
    assert!(
        events[crash..]
            .iter()
            .any(|(a, e)| *a == "c2" && matches!(e, Event::RoundBegan { attempt: 2, .. })),
        "c2 tries again after the crash"
    );
    assert!(
        !events
            .iter()
            .any(|(a, e)| *a == "c2" && matches!(e, Event::Acquired { .. })),
        "c2 never acquires"
    );
}

fn bad(body: &str) -> ScenarioError {
    let text = format!(
        "name = \"bad\"\ntitle = \"t\"\nclaim = \"c\"\nsource = \"derived\"\nprose = \"p\"\n{body}"
    );
    Scenario::from_str("bad.toml", &text).expect_err("the file is invalid")
}

fn assert_error(error: ScenarioError, line: usize, column: usize, fragment: &str) {
    let message = error.to_string();
    let at = format!("bad.toml:{line}:{column}: ");
    assert!(
        message.starts_with(&at),
        "{message} does not start with {at}"
    );
    assert!(message.contains(fragment), "{message} lacks {fragment:?}");
}

#[test]
fn bad_files_fail_with_file_line_and_column() {
    const EXPECT: &str = "[expect]\n\"mutual exclusion\" = \"holds\"\n";
    // Syntax: an unterminated string.
    let e = bad("[lock]\nnodes = \"3\n");
    assert!(matches!(e, ScenarioError::Syntax { .. }), "{e}");
    assert_error(e, 7, 11, "invalid toml");
    // Wrong type: a string for a number.
    let e = bad(&format!("[lock]\nnodes = \"three\"\n{EXPECT}"));
    assert!(matches!(e, ScenarioError::WrongType { .. }), "{e}");
    assert_error(e, 7, 9, "invalid type");
    // Unknown key, at the key.
    let e = bad(&format!("[lock]\nnodes = 3\nttl_tick = 4\n{EXPECT}"));
    assert!(matches!(e, ScenarioError::UnknownKey { .. }), "{e}");
    assert_error(e, 8, 1, "unknown field `ttl_tick`");
    // A number where a duration goes, with the way to a count of ticks.
    let e = bad(&format!("[lock]\nttl = 4\n{EXPECT}"));
    assert!(matches!(e, ScenarioError::WrongType { .. }), "{e}");
    assert_error(e, 7, 7, "a count of ticks goes in the key ending in _ticks");
    // Unknown mode value.
    let e = bad(&format!("[lock]\nunlock = \"delete\"\n{EXPECT}"));
    assert!(matches!(e, ScenarioError::WrongType { .. }), "{e}");
    assert_error(e, 7, 10, "unknown variant");
    // ttl ≤ drift, at ttl_ticks.
    let e = bad(&format!("[lock]\nttl_ticks = 3\ndrift_ticks = 3\n{EXPECT}"));
    assert!(matches!(e, ScenarioError::TtlNotAboveDrift { .. }), "{e}");
    assert_error(e, 7, 13, "must be larger than drift_ticks 3");
    // More crashes than nodes, at the count.
    let e = bad(&format!(
        "[lock]\nnodes = 1\n[faults.crashes]\ncount = 2\n{EXPECT}"
    ));
    assert!(matches!(e, ScenarioError::TooManyFaults { .. }), "{e}");
    assert_error(e, 9, 9, "2 crashes is more than the 1 nodes");
    // A jump pinned to a node that does not exist.
    let e = bad(&format!(
        "[faults.clock_jumps]\ntarget = \"node\"\nindex = 4\njump_ticks = 2\n{EXPECT}"
    ));
    assert!(matches!(e, ScenarioError::OutOfRange { .. }), "{e}");
    assert_error(e, 8, 9, "1..=3");
    // An unknown property in [expect], at its name.
    let e = bad("[expect]\n\"mutual exclusoin\" = \"holds\"\n");
    assert!(matches!(e, ScenarioError::UnknownProperty { .. }), "{e}");
    assert_error(e, 7, 1, "known: mutual exclusion");
    // A storage property without [storage].
    let e = bad("[expect]\n\"no lost update\" = \"holds\"\n");
    assert!(matches!(e, ScenarioError::UnknownProperty { .. }), "{e}");
    assert_error(e, 7, 1, "needs a [storage] table");
    // A verdict that is neither holds nor violated.
    let e = bad("[expect]\n\"mutual exclusion\" = \"safe\"\n");
    assert!(matches!(e, ScenarioError::WrongType { .. }), "{e}");
    assert_error(e, 7, 22, "unknown variant `safe`");
    // Reach naming a node that does not exist.
    let e = bad(&format!("[network]\nreach = [[1, 2], [2, 7]]\n{EXPECT}"));
    assert!(matches!(e, ScenarioError::OutOfRange { .. }), "{e}");
    assert_error(e, 7, 22, "a node in reach");
    // A mechanism naming an unknown ingredient, at the key.
    let e = bad("[expect]\n\"mutual exclusion\" = \"violated\"\nmechanism = [\"jump\"]\n");
    assert!(matches!(e, ScenarioError::Mechanism { .. }), "{e}");
    assert_error(
        e,
        8,
        1,
        "unknown ingredient \"jump\" (known: clock jump, crash",
    );
    // A mechanism naming an ingredient the scenario does not grant.
    let e = bad("[expect]\n\"mutual exclusion\" = \"violated\"\nmechanism = [\"crash\"]\n");
    assert!(matches!(e, ScenarioError::Mechanism { .. }), "{e}");
    assert_error(
        e,
        8,
        1,
        "\"crash\" is not in this scenario (it grants: none)",
    );
    // A verdict where a list belongs, and a list where a verdict belongs.
    let e = bad("[expect]\n\"mutual exclusion\" = \"violated\"\nmechanism = \"holds\"\n");
    assert!(matches!(e, ScenarioError::Mechanism { .. }), "{e}");
    assert_error(e, 8, 1, "a list of ingredient names");
    let e = bad("[expect]\n\"mutual exclusion\" = [\"crash\"]\n");
    assert!(matches!(e, ScenarioError::WrongType { .. }), "{e}");
    assert_error(e, 7, 1, "not a list");
    // A missing required key.
    let e = Scenario::from_str("bad.toml", "name = \"x\"\n[expect]\n").unwrap_err();
    assert!(matches!(e, ScenarioError::MissingKey { .. }), "{e}");
    // An unreadable file names the path.
    let e = Scenario::load("/nonexistent/x.toml").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("/nonexistent/x.toml: cannot read"),
        "{e}"
    );
}

#[test]
fn the_json_report_has_the_cli_shape() {
    let report = Check::new(&load("single-node-unlock-with-del")).run();
    let json = serde_json::to_value(&report).expect("serialisable");
    for key in ["file", "name", "unique_states", "seconds", "properties"] {
        assert!(json.get(key).is_some(), "{key} missing in {json}");
    }
    let mutex = &json["properties"][0];
    assert_eq!(mutex["name"], "mutual exclusion");
    assert_eq!(mutex["expected"], "violated");
    assert_eq!(mutex["verdict"], "violated");
    assert!(
        mutex["counterexample"]
            .as_array()
            .is_some_and(|s| !s.is_empty())
    );
    let acquired = report.property("lock acquired").expect("checked");
    assert!(acquired.counterexample.is_none());
}

#[test]
fn the_embedded_catalog_is_the_models_folder() {
    let on_disk: Vec<String> = catalog()
        .iter()
        .map(|p| format!("models/{}", p.file_name().unwrap().to_string_lossy()))
        .collect();
    let embedded: Vec<String> = redlock_lab::catalog::CATALOG
        .iter()
        .map(|scenario| scenario.file.to_owned())
        .collect();
    assert_eq!(
        embedded, on_disk,
        "build.rs embeds every models/*.toml, sorted"
    );
    for (scenario, path) in redlock_lab::catalog::CATALOG.iter().zip(catalog()) {
        assert_eq!(
            scenario.text,
            std::fs::read_to_string(&path).unwrap(),
            "{}",
            scenario.file
        );
    }
    assert_eq!(
        redlock_lab::catalog::scenarios().unwrap().len(),
        on_disk.len()
    );
}

fn inline(body: &str) -> Scenario {
    let text = format!(
        "name = \"inline\"\ntitle = \"t\"\nclaim = \"c\"\nsource = \"derived\"\nprose = \"p\"\n{body}"
    );
    Scenario::from_str("inline.toml", &text).expect("a valid scenario")
}

/// A declared mechanism is a claim the checker can refute: an ingredient that is not needed,
/// or one the shortest story never shows, fails the catalog test.
#[test]
fn a_false_mechanism_is_refuted_by_the_checker() {
    // The old framing of the restart-delay scenario: a +3 jump breaks the lock on its own, so
    // the crash is not necessary.
    let scenario = inline(
        "[lock]\nttl_ticks = 4\n[faults.crashes]\nrestart_delay_ticks = 4\n\
         [faults.clock_jumps]\ntarget = \"node\"\njump_ticks = 3\n\
         [expect]\n\"mutual exclusion\" = \"violated\"\nmechanism = [\"crash\", \"clock jump\"]\n",
    );
    let report = Check::new(&scenario).run_with_causes();
    let mutex = report.property("mutual exclusion").unwrap();
    assert_eq!(
        mutex.necessary.as_deref(),
        Some(
            &[redlock_lab::scenario::Ingredient::Fault(
                redlock_lab::fault::FaultKind::ClockJump
            )][..]
        )
    );
    let problems = cause::mechanism_problems(&scenario, &report);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains("\"crash\" is declared but not necessary"),
        "{problems:?}"
    );

    // A minority-accepted extension with a loss budget it does not need: the loss is neither
    // necessary nor in the shortest story (the request to n2 is merely late).
    let scenario = inline(
        "[lock]\nttl_ticks = 4\nextensions = 1\nextension_quorum = \"any-node\"\n\
         [network]\nreach = [[1, 2], [2, 3]]\nmessage_loss = 1\n\
         [expect]\n\"mutual exclusion\" = \"violated\"\nmechanism = [\"message loss\"]\n",
    );
    let report = Check::new(&scenario).run_with_causes();
    let problems = cause::mechanism_problems(&scenario, &report);
    assert!(
        problems
            .iter()
            .any(|p| p.contains("\"message loss\" is declared but not necessary")),
        "{problems:?}"
    );

    // The other direction: an ingredient the violation needs must be declared. Both clock
    // errors are needed here (`clock-drift-uncovered`); one alone is half the mechanism.
    let scenario = inline(
        "[lock]\nttl_ticks = 5\ndrift_ticks = 1\n[clock]\nnode_error_ticks = 1\n\
         client_error_ticks = 1\n\
         [expect]\n\"mutual exclusion\" = \"violated\"\nmechanism = [\"node clock error\"]\n",
    );
    let report = Check::new(&scenario).run_with_causes();
    assert_eq!(
        cause::mechanism_problems(&scenario, &report),
        ["inline: \"client clock error\" is necessary (mutual exclusion) but not declared"]
    );
}

/// A violation with two properties needing different ingredients declares their union: the
/// counter node's crash is needed for the lost update only, the pause for both.
#[test]
fn a_mechanism_is_the_union_of_what_the_violated_properties_need() {
    let scenario = load("fencing-counter-after-acquire-restarts-empty");
    let report = Check::new(&scenario).run_with_causes();
    let needs = |name: &str| -> Vec<&str> {
        let p = report.property(name).unwrap();
        p.necessary
            .as_ref()
            .unwrap()
            .iter()
            .map(|i| i.name())
            .collect()
    };
    assert_eq!(needs("storage safety"), ["pause"]);
    assert_eq!(needs("no lost update"), ["crash", "pause"]);
    let declared: Vec<&str> = scenario.mechanism.iter().map(|i| i.name()).collect();
    assert_eq!(declared, ["crash", "pause"]);
    assert_eq!(
        cause::mechanism_problems(&scenario, &report),
        Vec::<String>::new()
    );
}

/// A claim attributed to the seed article names the section that makes it.
#[test]
fn seed_claims_cite_the_seed_section() {
    let mut seed = 0;
    for file in catalog() {
        let scenario = Scenario::load(&file).unwrap();
        if scenario.source == redlock_lab::scenario::Source::Seed {
            seed += 1;
            assert!(
                scenario.prose.contains("§"),
                "{}: a seed claim cites the section, e.g. \"§8\"",
                scenario.name
            );
        }
    }
    assert!(seed >= 1);
}

/// No two files share a claim sentence: the two sides of a boundary pair each say what their
/// own side shows, so the book's index and the README's table, which print a file's claim
/// beside its verdicts, never print the holding side's claim under "violated" (where it would
/// read as refuted). The pairs are the files a `[mitigation] scenario` links; the test needs no
/// checker run.
#[test]
fn every_file_claims_its_own_sentence() {
    let scenarios: Vec<Scenario> = catalog()
        .iter()
        .map(|f| Scenario::load(f).unwrap())
        .collect();
    let mut seen: std::collections::BTreeMap<&str, &str> = std::collections::BTreeMap::new();
    for scenario in &scenarios {
        if let Some(other) = seen.insert(scenario.claim.as_str(), scenario.name.as_str()) {
            panic!(
                "{} and {other} share the claim {:?}: give each side its own",
                scenario.name, scenario.claim
            );
        }
    }
    let pairs = scenarios
        .iter()
        .filter(|s| s.mitigation.as_ref().is_some_and(|m| m.scenario.is_some()))
        .count();
    assert!(pairs >= 10, "{pairs} boundary pairs");
}

/// Every scenario with a violation names a patch (`[mitigation] set`), and the patch really
/// fixes it: applied to the scenario's own TOML and re-checked by the checker with the catalog's
/// settings, every property the scenario expects violated holds, and no other property is lost
/// on the way (a fix that traded liveness for safety would have to say so).
#[test]
fn every_mitigation_patch_fixes_what_its_scenario_breaks() {
    let mut problems = Vec::new();
    for file in catalog() {
        let text = std::fs::read_to_string(&file).expect("readable");
        let label = file.display().to_string();
        let scenario = Scenario::from_str(&label, &text).unwrap_or_else(|e| panic!("{e}"));
        let broken: Vec<&str> = scenario
            .expect
            .iter()
            .filter(|(_, v)| *v == Verdict::Violated)
            .map(|(name, _)| name.as_str())
            .collect();
        if broken.is_empty() {
            continue;
        }
        let Some(mitigation) = scenario.mitigation.as_ref().filter(|m| !m.set.is_empty()) else {
            problems.push(format!(
                "{label}: violates {broken:?} but names no [mitigation] set"
            ));
            continue;
        };
        let fixed = redlock_lab::scenario::patched(&label, &text, &mitigation.set)
            .unwrap_or_else(|e| panic!("{e}"));
        let report = Check::new(&fixed).run();
        println!("{}", table_row(&report));
        for p in &report.properties {
            let was = if broken.contains(&p.name.as_str()) {
                "still"
            } else {
                "now"
            };
            if p.verdict != Verdict::Holds {
                problems.push(format!(
                    "{label}: after the patch {} is {was} {}",
                    p.name, p.verdict
                ));
            }
        }
        for name in &broken {
            if report.property(name).is_none() {
                problems.push(format!("{label}: the patched file does not check {name}"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A patch goes through the loader: a value the schema refuses fails as a bad file would, at
/// the `set` entry of the file itself.
#[test]
fn a_bad_patch_value_fails_validation() {
    let file = catalog()
        .into_iter()
        .find(|f| f.ends_with("synchronous-bounds-margin-2.toml"))
        .expect("in the catalog");
    let text = std::fs::read_to_string(&file).expect("readable");
    let line = 1 + text
        .lines()
        .position(|l| l.starts_with("set = "))
        .expect("a set");
    let set = vec![(
        "storage.check_margin_ticks".to_string(),
        "\"3\"".to_string(),
    )];
    let error = redlock_lab::scenario::patched("f.toml", &text, &set).expect_err("not a number");
    assert!(
        error.to_string().starts_with(&format!(
            "f.toml:{line}:9: [mitigation] set: `storage.check_margin_ticks`: the patched \
             scenario is refused: wrong value"
        )),
        "{error}"
    );
}

/// What an operator controls, and so what a mitigation may change. The faults themselves (how
/// far a clock jumps, how long a pause or a delay lasts, how many nodes crash, the clocks'
/// errors) are the environment: a patch that shrank one would "fix" a scenario by assuming
/// the problem away. `liveness.isolated_rounds` stands for a random retry back-off, which the
/// model states as rounds that do not overlap.
const DEPLOYMENT_SETTINGS: &[&str] = &[
    "lock.nodes",
    "lock.quorum",
    "lock.ttl_ticks",
    "lock.ttl",
    "lock.drift_ticks",
    "lock.drift",
    "lock.round_timeout_ticks",
    "lock.round_timeout",
    "lock.attempts",
    "lock.retry_delay_ticks",
    "lock.retry_delay",
    "lock.unlock",
    "lock.validity_check",
    "lock.release_after_failed_round",
    "lock.extensions",
    "lock.extension_quorum",
    "lock.contact",
    "lock.token",
    "storage.protection",
    "storage.token_source",
    "storage.check_margin_ticks",
    "storage.check",
    "storage.check_margin",
    "faults.crashes.persistence",
    "faults.crashes.restart_delay_ticks",
    "faults.crashes.restart_delay",
    "faults.crashes.client_guard_ticks",
    "faults.crashes.client_guard",
    "failover.promotion_delay_ticks",
    "failover.promotion_delay",
    "failover.wait",
    "failover.replicas",
    "liveness.isolated_rounds",
];

/// Every patch changes only settings an operator controls, never the fault it answers.
#[test]
fn every_mitigation_patch_changes_a_deployment_setting_not_the_fault() {
    let mut problems = Vec::new();
    for file in catalog() {
        let text = std::fs::read_to_string(&file).expect("readable");
        let label = file.display().to_string();
        let scenario = Scenario::from_str(&label, &text).unwrap_or_else(|e| panic!("{e}"));
        for (key, _) in scenario.mitigation.iter().flat_map(|m| &m.set) {
            if !DEPLOYMENT_SETTINGS.contains(&key.as_str()) {
                problems.push(format!(
                    "{label}: the patch changes `{key}`, not a deployment setting"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A mitigation that names a catalog scenario as its proof names exactly the patched file: the
/// same lock, clocks, network, storage, faults, failover and liveness, so the proof `explain`
/// prints is the patch, not a neighbour that differs in something else.
#[test]
fn a_mitigations_proof_scenario_is_its_patched_file() {
    let by_name: std::collections::BTreeMap<String, Scenario> = catalog()
        .iter()
        .map(|file| {
            let text = std::fs::read_to_string(file).expect("readable");
            let scenario = Scenario::from_str(&file.display().to_string(), &text)
                .unwrap_or_else(|e| panic!("{e}"));
            (scenario.name.clone(), scenario)
        })
        .collect();
    let mut problems = Vec::new();
    let mut proofs = 0;
    for file in catalog() {
        let text = std::fs::read_to_string(&file).expect("readable");
        let label = file.display().to_string();
        let scenario = &by_name[&Scenario::from_str(&label, &text).expect("valid").name];
        let Some(mitigation) = &scenario.mitigation else {
            continue;
        };
        let Some(proof) = &mitigation.scenario else {
            continue;
        };
        let patched = redlock_lab::scenario::patched(&label, &text, &mitigation.set)
            .unwrap_or_else(|e| panic!("{e}"));
        let named = by_name
            .get(proof)
            .unwrap_or_else(|| panic!("{label}: no catalog scenario {proof}"));
        proofs += 1;
        let same = named.lock == patched.lock
            && named.clock == patched.clock
            && named.network == patched.network
            && named.storage == patched.storage
            && named.faults == patched.faults
            && named.failover == patched.failover
            && named.liveness == patched.liveness;
        if !same {
            problems.push(format!(
                "{label}: `{proof}` is not this file with its patch"
            ));
        }
    }
    assert!(proofs >= 15, "only {proofs} proof scenarios");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every catalog file rewritten in real units (`resolution = "7ms"`, each `*_ticks = n` as
/// `* = "7n ms"`) resolves to exactly the settings the model reads from the file in ticks, so
/// a deployment written in milliseconds is checked as its tick twin is.
#[test]
fn every_catalog_file_in_milliseconds_is_its_tick_twin() {
    const TICK_MS: i64 = 7;
    let mut converted_keys = 0;
    let settings = |s: &Scenario| {
        format!(
            "{:?} {:?} {:?} {:?} {:?} {:?}",
            s.lock, s.clock, s.storage, s.faults, s.failover, s.liveness
        )
    };
    for path in catalog() {
        let text = std::fs::read_to_string(&path).unwrap();
        if text.lines().any(|line| line.starts_with("resolution = ")) {
            // Already in real units: there is no tick twin to compare with.
            continue;
        }
        let mut durations = format!("resolution = \"{TICK_MS}ms\"\n");
        let mut drift_written = false;
        for line in text.lines() {
            let converted = line.split_once(" = ").and_then(|(key, value)| {
                let key = key.strip_suffix("_ticks")?;
                let ticks: i64 = value.trim().parse().ok()?;
                Some(format!("{key} = \"{}ms\"", ticks * TICK_MS))
            });
            drift_written |= line.starts_with("drift_ticks");
            converted_keys += usize::from(converted.is_some());
            durations.push_str(converted.as_deref().unwrap_or(line));
            durations.push('\n');
            if line == "[lock]" && !text.contains("drift_ticks") {
                // The tick default (one tick), written out: a TTL in real units without a
                // drift would get the client's `1% + 2ms` instead.
                durations.push_str(&format!("drift = \"{TICK_MS}ms\"\n"));
                drift_written = true;
            }
        }
        let name = path.display().to_string();
        let in_ticks = Scenario::load(&path).unwrap();
        if !drift_written {
            // No [lock] table: the whole lock is the defaults, in ticks.
            assert!(!durations.contains("ttl = "), "{name}");
        }
        let in_millis = Scenario::from_str(&name, &durations)
            .unwrap_or_else(|e| panic!("{name} in milliseconds: {e}\n{durations}"));
        assert_eq!(
            in_millis.resolution,
            Some(redlock_lab::time::Millis(TICK_MS as u64))
        );
        assert_eq!(settings(&in_millis), settings(&in_ticks), "{name}");
    }
    assert!(
        converted_keys > 100,
        "only {converted_keys} tick keys rewritten"
    );
}

/// A user's own file needs only what it checks; the catalog's files, which teach, keep the
/// fuller schema: every one names itself, its title, its claim, who made it, and its prose.
#[test]
fn catalog_files_carry_the_full_schema_and_a_users_file_need_not() {
    for path in catalog() {
        let text = std::fs::read_to_string(&path).unwrap();
        let table: toml::Table = text.parse().unwrap();
        for key in ["name", "title", "claim", "source", "prose"] {
            let given = table.get(key).and_then(toml::Value::as_str);
            assert!(
                given.is_some_and(|value| !value.trim().is_empty()),
                "{}: the catalog's files must give {key}",
                path.display()
            );
        }
    }
    let own = Scenario::from_str(
        "My Deployment.toml",
        "[lock]\nnodes = 3\nttl = \"10s\"\n[expect]\n\"mutual exclusion\" = \"holds\"\n",
    )
    .expect("a file with only what it checks");
    assert_eq!(own.name, "my-deployment");
    assert!(own.title.is_empty() && own.prose.is_empty());
}

/// The figures a mitigation's sentence states, "(the patch: 2 ticks of drift for the 2-tick
/// jump)", are the patch's and the file's own: the number is a value the patch sets (the patch
/// is what the checker re-checks), the jump is the file's jump, and "one more than ttl − drift"
/// and "the drift allowance here is 0" are the file's lock.
#[test]
fn every_figure_a_mitigation_states_is_its_patch_and_its_file() {
    let first_number = |text: &str| -> Option<u64> {
        let start = text.find(|c: char| c.is_ascii_digit())?;
        let digits: String = text[start..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    };
    let mut stated = 0;
    for path in catalog() {
        let scenario = Scenario::load(&path).expect("a catalog file");
        let Some(mitigation) = &scenario.mitigation else {
            continue;
        };
        let Some((_, rest)) = mitigation.text.split_once("(the patch: ") else {
            continue;
        };
        let said = rest.split_once(')').map_or(rest, |(said, _)| said);
        let name = &scenario.name;
        let figure = first_number(said).unwrap_or_else(|| panic!("{name}: no figure in {said:?}"));
        assert!(
            mitigation
                .set
                .iter()
                .any(|(_, value)| value == &figure.to_string()),
            "{name}: the text says {figure}, the patch sets {:?}",
            mitigation.set
        );
        if let Some((_, jump)) = said.split_once("for the ") {
            let jumps = scenario.faults.clock_jumps.as_ref().expect("a jump");
            assert_eq!(
                first_number(jump),
                Some(u64::from(jumps.jump_ticks.largest())),
                "{name}: {said:?}"
            );
        }
        let params = &scenario.lock.params;
        if said.contains("one more than ttl − drift") {
            assert_eq!(
                figure,
                (params.ttl - params.drift).0 + 1,
                "{name}: {said:?}"
            );
        }
        if said.contains("the drift allowance here is 0") {
            assert_eq!(params.drift.0, 0, "{name}: {said:?}");
        }
        stated += 1;
    }
    assert!(stated >= 9, "only {stated} mitigations state their patch");
}
