//! `redlock-lab sweep`: a row per value, the boundary where a verdict flips (pinned against
//! the catalog's inequalities), `--json`, the same table with values checked at once, and bad
//! input with exit code 2.

mod common;

use redlock_lab::catalog;
use redlock_lab::scenario::Verdict;
use redlock_lab::sweep::{Boundary, Point, Sweep, Vary};

use common::{redlock_lab, scratch_dir, text};

fn boundary(property: &str, below: (&str, Verdict), above: (&str, Verdict)) -> Boundary {
    Boundary {
        property: property.to_owned(),
        below: Point {
            value: below.0.to_owned(),
            verdict: below.1,
        },
        above: Point {
            value: above.0.to_owned(),
            verdict: above.1,
        },
    }
}

/// The sweep of `key` over `values` on the catalog scenario `name`, with `base` (a dotted key
/// and value) set first.
fn sweep(name: &str, base: Option<(&str, i64)>, vary: &str) -> Vec<Boundary> {
    let embedded = catalog::lookup(name).unwrap();
    let mut text = embedded.text.to_owned();
    if let Some((key, value)) = base {
        let mut table: toml::Table = toml::from_str(&text).unwrap();
        let (section, leaf) = key.split_once('.').unwrap();
        table[section].as_table_mut().unwrap()[leaf] = toml::Value::Integer(value);
        text = toml::to_string(&table).unwrap();
    }
    let vary: Vary = vary.parse().unwrap();
    Sweep::prepare(embedded.file, &text, &vary)
        .unwrap()
        .run()
        .boundaries()
}

#[test]
fn a_node_jump_breaks_mutual_exclusion_exactly_when_it_exceeds_the_drift() {
    use Verdict::{Holds, Violated};
    // drift 1: J = 1 holds, J = 2 is violated, and nothing else flips up to 4.
    assert_eq!(
        sweep(
            "node-clock-jump-forward-past-drift",
            None,
            "faults.clock_jumps.jump_ticks=1..4"
        ),
        [boundary("mutual exclusion", ("1", Holds), ("2", Violated))]
    );
    // drift 2 (ttl 4): the boundary moves with it.
    assert_eq!(
        sweep(
            "node-clock-jump-forward-past-drift",
            Some(("lock.drift_ticks", 2)),
            "faults.clock_jumps.jump_ticks=1..3"
        ),
        [boundary("mutual exclusion", ("2", Holds), ("3", Violated))]
    );
}

#[test]
fn a_delayed_restart_is_safe_exactly_from_ttl_minus_drift() {
    use Verdict::{Holds, Violated};
    // ttl 4, drift 1: D = 2 is violated, D = 3 holds.
    assert_eq!(
        sweep(
            "crash-delayed-restart-ttl-minus-drift",
            None,
            "faults.crashes.restart_delay_ticks=1..4"
        ),
        [boundary("mutual exclusion", ("2", Violated), ("3", Holds))]
    );
}

#[test]
fn the_cli_prints_a_row_per_value_and_the_boundary() {
    let out = redlock_lab(&[
        "sweep",
        "node-clock-jump-forward-past-drift",
        "--vary",
        "faults.clock_jumps.jump_ticks=1..3",
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert_eq!(rows.len(), 3, "{stdout}");
    assert!(
        rows[0].starts_with("1 ") && rows[0].contains("holds"),
        "{stdout}"
    );
    assert!(
        rows[1].starts_with("2 ") && rows[1].contains("violated"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "boundary: mutual exclusion holds at faults.clock_jumps.jump_ticks = 1, violated at 2"
        ),
        "{stdout}"
    );
}

#[test]
fn json_has_a_row_per_value_and_the_boundaries() {
    let out = redlock_lab(&[
        "sweep",
        "clock-drift-covered",
        "--vary",
        "lock.drift_ticks=1,2",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(json["scenario"], "clock-drift-covered");
    assert_eq!(json["key"], "lock.drift_ticks");
    let rows = json["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["value"], "1");
    assert!(rows[0]["unique_states"].as_u64().unwrap() > 0);
    let mutex = |row: &serde_json::Value| {
        row["properties"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "mutual exclusion")
            .unwrap()["verdict"]
            .clone()
    };
    assert_eq!(mutex(&rows[0]), "violated");
    assert_eq!(mutex(&rows[1]), "holds");
    assert_eq!(
        json["boundaries"],
        serde_json::json!([{
            "property": "mutual exclusion",
            "below": {"value": "1", "verdict": "violated"},
            "above": {"value": "2", "verdict": "holds"},
        }])
    );
}

/// Values are checked at once (`--jobs`); the rows, their states and the boundaries are the
/// same on any number of them, and come in the values' order.
#[test]
fn values_checked_at_once_give_the_same_table() {
    let table = |jobs: &str| {
        let out = redlock_lab(&[
            "sweep",
            "redlock-cluster-shards-promotion-delay",
            "--vary",
            "failover.promotion_delay_ticks=0..3",
            "--jobs",
            jobs,
            "--json",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let mut json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        // Only the time differs from run to run.
        for row in json["rows"].as_array_mut().unwrap() {
            row["seconds"] = serde_json::Value::Null;
        }
        json
    };
    let alone = table("1");
    let values: Vec<&str> = alone["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["value"].as_str().unwrap())
        .collect();
    assert_eq!(values, ["0", "1", "2", "3"]);
    assert_eq!(table("4"), alone);
}

#[test]
fn bad_input_exits_2_with_a_clear_message_and_checks_nothing() {
    let cases: [(&[&str], &str); 5] = [
        (
            &[
                "sweep",
                "node-clock-jump-forward-past-drift",
                "--vary",
                "faults.clock_jumps.jump_tick=1..2",
            ],
            "faults.clock_jumps.jump_tick is not a scenario key",
        ),
        (
            &[
                "sweep",
                "node-clock-jump-forward-past-drift",
                "--vary",
                "faults.clock_jumps.jump_ticks=-1..1",
            ],
            "faults.clock_jumps.jump_ticks = 0 is refused: jump_ticks is 0",
        ),
        (
            &[
                "sweep",
                "node-clock-jump-forward-past-drift",
                "--vary",
                "lock.ttl_ticks",
            ],
            "expected KEY=A..B",
        ),
        (
            &[
                "sweep",
                "node-clock-jump-forward-past-drift",
                "--vary",
                "lock.ttl_ticks=9..3",
            ],
            "the range is empty",
        ),
        (
            &["sweep", "no-such-scenario", "--vary", "lock.ttl_ticks=3..4"],
            "no such file, folder or catalog scenario",
        ),
    ];
    for (args, message) in cases {
        let out = redlock_lab(args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(
            out.stdout.is_empty(),
            "{args:?} printed rows: {}",
            text(&out.stdout)
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn a_bad_scenario_file_is_reported_with_its_line_and_column() {
    let dir = scratch_dir("sweep-bad-file");
    let file = dir.join("bad.toml");
    std::fs::write(
        &file,
        "name = \"bad\"\ntitle = \"t\"\nclaim = \"c\"\nsource = \"derived\"\nprose = \"p\"\n\
         [lock]\nttl_tick = 4\n[expect]\n\"mutual exclusion\" = \"holds\"\n",
    )
    .unwrap();
    let out = redlock_lab(&[
        "sweep",
        file.to_str().unwrap(),
        "--vary",
        "lock.drift_ticks=0..1",
    ]);
    let stderr = text(&out.stderr);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("bad.toml:7:1: unknown key"), "{stderr}");
}
