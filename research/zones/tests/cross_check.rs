//! The prototype's verdicts against `redlock-lab`'s checker on the same scenario files.
//!
//! By digitization the closed timed automaton and the discrete-time model reach the same
//! integer states, so every verdict must be equal; a mismatch is a bug in one of the two
//! encodings.

use redlock_lab::check::Check;
use redlock_lab::scenario::{Scenario, Verdict as Project};
use redlock_zones::automaton::{Config, Step};
use redlock_zones::{Options, Verdict, crash_scenario_text, explore, scenario_text};

fn project(verdict: Project) -> Verdict {
    match verdict {
        Project::Holds => Verdict::Holds,
        Project::Violated => Verdict::Violated,
        _ => Verdict::Incomplete,
    }
}

/// Checks `text` with both checkers and returns the common mutual-exclusion verdict; with
/// `plain_too`, also without the symmetry reduction.
fn agree(text: &str, plain_too: bool) -> Verdict {
    let scenario = Scenario::from_str("cross-check.toml", text).expect("a valid scenario");
    let config = Config::from_scenario(&scenario).expect("a supported scenario");
    let zones = explore(&config, Options::default());
    let report = Check::new(&scenario).threads(1).run();
    let mutual_exclusion = report
        .property("mutual exclusion")
        .expect("always checked")
        .verdict;
    assert_eq!(
        zones.mutual_exclusion,
        project(mutual_exclusion),
        "{}: zones {zones:?}, project {} states",
        scenario.name,
        report.unique_states
    );
    let acquired = report
        .property("lock acquired")
        .map_or(Verdict::Holds, |p| project(p.verdict));
    assert_eq!(zones.lock_acquired, acquired, "{}", scenario.name);
    if zones.mutual_exclusion == Verdict::Violated {
        assert!(zones.counterexample.is_some());
    }
    if !plain_too {
        return zones.mutual_exclusion;
    }
    // The symmetry reduction must not change the verdict either.
    let plain = explore(
        &config,
        Options {
            symmetry: false,
            ..Options::default()
        },
    );
    assert_eq!(plain.mutual_exclusion, zones.mutual_exclusion);
    // Nor may the simulation test (inclusion alone is the reference).
    let included = explore(
        &config,
        Options {
            simulation: false,
            ..Options::default()
        },
    );
    assert_eq!(included.mutual_exclusion, zones.mutual_exclusion);
    assert!(zones.zones <= included.zones);
    zones.mutual_exclusion
}

#[test]
fn a_node_jump_by_the_drift_holds_and_one_past_it_breaks_at_every_ttl() {
    for ttl in [4, 6, 8] {
        assert_eq!(
            agree(&scenario_text(3, 2, ttl, 1), true),
            Verdict::Holds,
            "ttl {ttl}"
        );
        assert_eq!(
            agree(&scenario_text(3, 2, ttl, 2), true),
            Verdict::Violated,
            "ttl {ttl}"
        );
    }
}

#[test]
fn a_restart_delay_of_ttl_minus_drift_holds_and_one_tick_less_breaks_at_every_ttl() {
    for ttl in [4, 6, 8] {
        assert_eq!(
            agree(&crash_scenario_text(3, 2, ttl, ttl - 1), true),
            Verdict::Holds,
            "ttl {ttl}"
        );
        assert_eq!(
            agree(&crash_scenario_text(3, 2, ttl, ttl - 2), true),
            Verdict::Violated,
            "ttl {ttl}"
        );
    }
}

#[test]
fn every_catalog_scenario_the_prototype_models_agrees() {
    let models = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models");
    let mut files: Vec<_> = std::fs::read_dir(models)
        .expect("the catalog")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    let mut checked = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("catalog file");
        let scenario = Scenario::from_str("catalog.toml", &text).expect("a valid scenario");
        if Config::from_scenario(&scenario).is_ok() {
            // Without symmetry, five nodes and two clients take minutes.
            agree(&text, scenario.lock.nodes <= 3);
            checked.push(scenario.name);
        }
    }
    // The boundary pairs of the node clock jump and of the restart delay are among them, so
    // the test cannot pass empty.
    for name in [
        "node-clock-jump-forward-by-drift",
        "node-clock-jump-forward-past-drift",
        "crash-delayed-restart-ttl-minus-drift",
        "crash-delayed-restart-one-tick-short",
    ] {
        assert!(
            checked.iter().any(|c| c == name),
            "{name} checked: {checked:?}"
        );
    }
}

#[test]
fn the_counterexample_past_the_drift_contains_the_jump_and_two_acquisitions() {
    let scenario = Scenario::from_str("t.toml", &scenario_text(3, 2, 4, 2)).unwrap();
    let outcome = explore(
        &Config::from_scenario(&scenario).unwrap(),
        Options::default(),
    );
    let steps = outcome.counterexample.expect("violated");
    assert!(
        steps.iter().any(|s| matches!(s, Step::Jump(_))),
        "{steps:?}"
    );
    let wins = steps
        .iter()
        .filter(|s| matches!(s, Step::Decide { won: true, .. }))
        .count();
    assert_eq!(wins, 2, "{steps:?}");
}

#[test]
fn the_zone_count_does_not_grow_with_the_ttl() {
    let count = |ttl| {
        let scenario = Scenario::from_str("t.toml", &scenario_text(3, 2, ttl, 1)).unwrap();
        explore(
            &Config::from_scenario(&scenario).unwrap(),
            Options::default(),
        )
        .zones
    };
    let (small, large) = (count(8), count(16));
    assert_eq!(small, large, "zones at ttl 8 and 16");
}

#[test]
fn unsupported_scenarios_are_refused_by_name() {
    let models = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/");
    let text =
        std::fs::read_to_string(format!("{models}clock-drift-covered.toml")).expect("catalog file");
    let scenario = Scenario::from_str("drift.toml", &text).unwrap();
    let error = Config::from_scenario(&scenario).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the zone prototype does not model clock error"
    );
}
