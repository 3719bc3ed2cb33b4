//! The sweep's unit tests.

use toml::Value;

use super::vary::display;
use super::*;
use crate::check::Report;
use crate::scenario::{Scenario, Verdict};

const BASE: &str = r#"
name = "x"
title = "t"
claim = "c"
source = "derived"
prose = "p"
[lock]
ttl_ticks = 4
drift_ticks = 1
[expect]
"mutual exclusion" = "holds"
"#;

#[test]
fn a_range_of_durations_steps_in_its_own_unit_or_the_given_step() {
    let strings = |v: &Vary| -> Vec<String> { v.values.iter().map(display).collect() };
    let v: Vary = "lock.drift=90ms..93ms".parse().unwrap();
    assert_eq!(v.key, "lock.drift");
    assert_eq!(strings(&v), ["90ms", "91ms", "92ms", "93ms"]);
    let v: Vary = "lock.ttl=1s..2s/250ms".parse().unwrap();
    assert_eq!(
        strings(&v),
        ["1000ms", "1250ms", "1500ms", "1750ms", "2000ms"]
    );
    let v: Vary = "faults.clock_jumps.jump=-2s..=-1s".parse().unwrap();
    assert_eq!(strings(&v), ["-2s", "-1s"]);
    for (spec, reason) in [
        ("lock.ttl=1s..1500ms", "different units"),
        ("lock.ttl=1s..2s/0ms", "the step is a positive"),
        ("lock.ttl=1s..3s/700ms", "the step must divide the range"),
        ("lock.ttl=1500ms..3s/1s", "whole numbers of the step's unit"),
        ("lock.ttl=1s..10min", "different units"),
        ("lock.drift=1ms..1s/1ms", "at most 200 values"),
        ("lock.drift=5ms..x", "both ends"),
    ] {
        let error = spec.parse::<Vary>().unwrap_err().to_string();
        assert!(error.contains(reason), "{spec}: {error}");
    }
}

#[test]
fn a_sweep_in_real_units_sets_the_duration_key() {
    let text = "name = \"s\"\ntitle = \"t\"\nclaim = \"c\"\nsource = \"derived\"\nprose = \"p\"\n[lock]\nttl = \"8s\"\ndrift = \"2s\"\n[faults.clock_jumps]\ntarget = \"node\"\njump = \"2s\"\n[expect]\n\"mutual exclusion\" = \"holds\"\n";
    let sweep = Sweep::prepare("s.toml", text, &"lock.drift=1s..3s".parse().unwrap()).unwrap();
    let ticks: Vec<(String, u64, u64)> = sweep
        .variants()
        .map(|(value, s)| {
            (
                display(value),
                s.lock.params.drift.as_u64(),
                s.resolution.unwrap().as_u64(),
            )
        })
        .collect();
    // Each variant's tick is the common divisor of its own durations.
    assert_eq!(
        ticks,
        [
            ("1s".to_owned(), 1, 1_000),
            ("2s".to_owned(), 1, 2_000),
            ("3s".to_owned(), 3, 1_000)
        ]
    );
}

#[test]
fn specs_parse_ranges_and_lists() {
    let v: Vary = "lock.ttl_ticks=2..4".parse().unwrap();
    assert_eq!(v.key, "lock.ttl_ticks");
    assert_eq!(
        v.values,
        vec![Value::Integer(2), Value::Integer(3), Value::Integer(4)]
    );
    let v: Vary = "faults.clock_jumps.jump_ticks=-2..=-1".parse().unwrap();
    assert_eq!(v.values, vec![Value::Integer(-2), Value::Integer(-1)]);
    let v: Vary = "lock.unlock=del,\"compare-and-delete\"".parse().unwrap();
    assert_eq!(
        v.values,
        vec![
            Value::String("del".into()),
            Value::String("compare-and-delete".into())
        ]
    );
    let v: Vary = "lock.validity_check=true,false".parse().unwrap();
    assert_eq!(v.values, vec![Value::Boolean(true), Value::Boolean(false)]);
    for bad in [
        "lock.ttl_ticks",
        "=1..2",
        "lock.ttl_ticks=4..2",
        "lock.ttl_ticks=a..b",
        "a..b=1",
        "x=0..1000",
    ] {
        assert!(
            matches!(bad.parse::<Vary>(), Err(SweepError::Spec { .. })),
            "{bad}"
        );
    }
}

#[test]
fn a_variant_is_validated_like_a_file() {
    let s = variant("x.toml", BASE, "lock.ttl_ticks", &Value::Integer(6)).unwrap();
    assert_eq!(s.lock.params.ttl.0, 6);
    // A table the file lacks is created.
    let s = variant(
        "x.toml",
        BASE,
        "faults.crashes.restart_delay_ticks",
        &Value::Integer(2),
    )
    .unwrap();
    assert_eq!(s.faults.crashes.unwrap().restart_delay_ticks, 2);
    let e = variant("x.toml", BASE, "lock.ttl_tick", &Value::Integer(6)).unwrap_err();
    assert!(matches!(e, SweepError::UnknownKey { .. }), "{e}");
    assert!(e.to_string().contains("ttl_tick"), "{e}");
    let e = variant("x.toml", BASE, "lock.ttl_ticks.x", &Value::Integer(6)).unwrap_err();
    assert!(matches!(e, SweepError::UnknownKey { .. }), "{e}");
    let e = variant("x.toml", BASE, "lock", &Value::Integer(6)).unwrap_err();
    assert!(matches!(e, SweepError::UnknownKey { .. }), "{e}");
    let e = variant("x.toml", BASE, "lock.ttl_ticks", &Value::Integer(1)).unwrap_err();
    assert!(matches!(e, SweepError::Value { .. }), "{e}");
    assert!(
        e.to_string()
            .starts_with("x.toml: lock.ttl_ticks = 1 is refused: ttl_ticks 1"),
        "{e}"
    );
    // One size over a list of sizes would change how many jumps a run has; a list may go there.
    let listed = format!("{BASE}[faults.clock_jumps]\njump_ticks = [1, 2]\n");
    let key = "faults.clock_jumps.jump_ticks";
    let e = variant("x.toml", &listed, key, &Value::Integer(2)).unwrap_err();
    assert!(matches!(e, SweepError::Value { .. }), "{e}");
    assert!(e.to_string().contains("lists jump sizes"), "{e}");
    let sizes = Value::Array(vec![Value::Integer(1), Value::Integer(3)]);
    let s = variant("x.toml", &listed, key, &sizes).unwrap();
    assert_eq!(s.faults.clock_jumps.unwrap().jump_ticks.sizes(), [1, 3]);
}

/// A checked report of `BASE` whose first property is made to hold or not, for the searches.
fn report_for() -> impl Fn(bool) -> Report {
    let base = Scenario::from_str("x.toml", BASE).unwrap();
    let report = crate::check::Check::new(&base).run();
    move |holds| {
        let mut report = report.clone();
        report.properties[0].verdict = if holds {
            Verdict::Holds
        } else {
            Verdict::Violated
        };
        report
    }
}

#[test]
fn search_finds_the_first_value_and_checks_both_sides() {
    let report_for = report_for();
    let mut probes = Vec::new();
    let found = search(
        0,
        10,
        |v| {
            probes.push(v);
            Ok::<_, SweepError>(report_for(v >= 7))
        },
        |r| r.properties[0].verdict == Verdict::Holds,
    )
    .unwrap();
    assert!(
        matches!(found, Search::Boundary { first: 7, .. }),
        "{found:?}"
    );
    assert!(probes.contains(&6) && probes.contains(&7), "{probes:?}");
    assert!(probes.len() <= 6, "binary, not linear: {probes:?}");
    let found = search(
        0,
        3,
        |_| Ok::<_, SweepError>(report_for(true)),
        |r| r.properties[0].verdict == Verdict::Holds,
    )
    .unwrap();
    assert!(matches!(found, Search::AtStart { .. }));
    let found = search(
        0,
        3,
        |_| Ok::<_, SweepError>(report_for(false)),
        |r| r.properties[0].verdict == Verdict::Holds,
    )
    .unwrap();
    assert!(matches!(found, Search::Nowhere { .. }));
}

#[test]
fn a_guess_is_taken_only_when_the_checker_confirms_both_sides() {
    let report_for = report_for();
    let wanted = |r: &Report| r.properties[0].verdict == Verdict::Holds;
    let run = |guess: Option<i64>| {
        let mut probes = Vec::new();
        let (found, confirmed) = search_guided(
            (0, 10),
            guess,
            |v| {
                probes.push(v);
                Ok::<_, SweepError>(report_for(v >= 7))
            },
            wanted,
        )
        .unwrap();
        let first = match found {
            Search::Boundary { first, .. } => first,
            other => panic!("{other:?}"),
        };
        (first, confirmed, probes)
    };
    // The right guess: two checks, one on each side.
    assert_eq!(run(Some(7)), (7, true, vec![7, 6]));
    // A guess too high or too low, or none, falls back to the binary search's answer.
    for guess in [Some(8), Some(5), Some(42), None] {
        let (first, confirmed, _) = run(guess);
        assert_eq!((first, confirmed), (7, false), "guess {guess:?}");
    }
}
