//! Parameter synthesis: the boundary over every value of a scenario's timing keys, held to
//! the zone engine's verdict at each point.

use redlock_lab::check::{Check, Engine};
use redlock_lab::property::Property;
use redlock_lab::scenario::{Scenario, Verdict};
use redlock_lab::sweep::synthesize_keys;

/// The drift scenario `advise` writes, small.
const DRIFT: &str = r#"
name = "drift"
title = "drift"
claim = "drift"
source = "derived"
prose = "drift"

[lock]
nodes = 3
clients = 2
ttl_ticks = 10
drift_ticks = 2

[clock]
node_error_ticks = 1
client_error_ticks = 1

[expect]
"mutual exclusion" = "holds"
"#;

const DRIFT_KEYS: [&str; 4] = [
    "lock.ttl_ticks",
    "lock.drift_ticks",
    "clock.node_error_ticks",
    "clock.client_error_ticks",
];

/// The zone engine's verdict on `text` with `keys` set to `point`.
fn verdict_at(text: &str, keys: &[&str], point: &[i64]) -> Verdict {
    let mut text = text.to_owned();
    for (key, value) in keys.iter().zip(point) {
        text = set(&text, key, *value);
    }
    let scenario = Scenario::from_str("point", &text).unwrap();
    let report = Check::new(&scenario)
        .engine(Engine::Zones)
        .unwrap()
        .reach(false)
        .run();
    report.property("mutual exclusion").unwrap().verdict
}

/// `text` with the dotted `key` set to `value`.
fn set(text: &str, key: &str, value: i64) -> String {
    let mut table: toml::Table = toml::from_str(text).unwrap();
    let parts: Vec<&str> = key.split('.').collect();
    let mut here = &mut table;
    for part in &parts[..parts.len() - 1] {
        here = here
            .entry((*part).to_owned())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            .as_table_mut()
            .unwrap();
    }
    here.insert(
        parts[parts.len() - 1].to_owned(),
        toml::Value::Integer(value),
    );
    toml::to_string(&table).unwrap()
}

#[test]
fn the_drift_boundary_holds_for_every_value() {
    let synthesis = synthesize_keys("drift", DRIFT, &DRIFT_KEYS).unwrap();
    let names: Vec<String> = ["ttl", "drift", "ε_n", "ε_c"].map(String::from).to_vec();
    for region in synthesis.regions(Property::MutualExclusion).unwrap() {
        let text: Vec<String> = region
            .iter()
            .map(|i| i.display(&names).to_string())
            .collect();
        println!("breaks when {}", text.join(" and "));
    }
    println!("{} zones in {:.2} s", synthesis.zones, synthesis.seconds);
    let mut checked = 0;
    for ttl in [3, 5, 8] {
        for drift in 0..ttl {
            for en in 0..3 {
                for ec in 0..3 {
                    let point = [ttl, drift, en, ec];
                    if !synthesis.covers(&point) {
                        continue;
                    }
                    let breaks = synthesis
                        .breaks_at(Property::MutualExclusion, &point)
                        .unwrap();
                    let verdict = verdict_at(DRIFT, &DRIFT_KEYS, &point);
                    assert_eq!(breaks, verdict == Verdict::Violated, "at {point:?}");
                    checked += 1;
                }
            }
        }
    }
    println!("{checked} points agree");
}
