//! The boundary as a formula: the keys left free, read off one symbolic exploration, and the
//! condition under which a figure's properties hold for every value of them.

use std::time::Duration;

use toml::{Table, Value};

use super::error::SweepError;
use super::vary::{variant, with_key};
use crate::check::{Check, FreeKey, Synthesis};
use crate::property::Property;
use crate::scenario::Scenario;

/// The whole number at dotted `key` in `text`, if it is written there.
pub fn written_number(text: &str, key: &str) -> Option<i64> {
    let table: Table = toml::from_str(text).ok()?;
    let mut parts = key.split('.').peekable();
    let mut here = &table;
    while let Some(part) = parts.next() {
        match (here.get(part)?, parts.peek()) {
            (Value::Table(inner), Some(_)) => here = inner,
            (Value::Integer(n), None) => return Some(*n),
            _ => return None,
        }
    }
    None
}

/// The boundary as a formula: leaves `keys` of the scenario `text` free and finds, for every
/// value of them at once, where each property holds ([`Check::synthesize`], at most `max_zones`
/// symbolic states, and for at most `time_limit` when one is given). Each key must be written
/// in the file as a whole number of ticks.
pub fn synthesize_keys(
    file: &str,
    text: &str,
    keys: &[&str],
    max_zones: usize,
    time_limit: Option<Duration>,
) -> Result<Synthesis, SweepError> {
    let scenario = Scenario::from_str(file, text)?;
    let mut free = Vec::new();
    for &key in keys {
        let value = written_number(text, key).ok_or_else(|| SweepError::NotANumber {
            file: file.to_owned(),
            key: key.to_owned(),
        })?;
        let stepped = variant(file, text, key, &Value::Integer(value + 1))?;
        // One tick down, where the scenario allows it, so a bend at the value is seen.
        let lowered = (value > 0)
            .then(|| variant(file, text, key, &Value::Integer(value - 1)).ok())
            .flatten();
        free.push(FreeKey {
            key: key.to_owned(),
            value,
            stepped,
            lowered,
        });
    }
    // The scenario at any point of the keys: the synthesis builds it where a key is zero.
    let at = |point: &[i64]| {
        let mut edited = text.to_owned();
        for (key, value) in keys.iter().zip(point) {
            edited = with_key(file, &edited, key, &Value::Integer(*value)).ok()?;
        }
        Scenario::from_str(file, &edited).ok()
    };
    let mut check = Check::new(&scenario).max_states(max_zones);
    if let Some(limit) = time_limit {
        check = check.time_limit(limit);
    }
    check
        .synthesize(&free, &at)
        .map_err(|error| SweepError::Synthesis {
            file: file.to_owned(),
            error,
        })
}

/// What the symbolic exploration proved around one figure.
pub enum Formula {
    /// The properties hold whenever `condition` does, for every value of the keys.
    Proved {
        /// The condition, over the keys' symbols ([`key_symbol`]): `always` when nothing breaks.
        condition: String,
        /// The zones the exploration took.
        zones: usize,
        /// One tick below the figure is outside the condition: a run there breaks a property.
        tight: bool,
        /// The condition is the whole of where the properties hold (outside it a run breaks
        /// one of them, for every value: both sides proved), not a part of it that reads more
        /// simply.
        exact: bool,
    },
    /// The exploration ran, but does not prove the figure's own point, which the checker
    /// proved: the two disagree (a bug to report).
    NotAtThePoint,
    /// It could not run (why).
    NotDerived(String),
}

/// The name a key has in a formula (`lock.drift_ticks` is `drift`).
pub fn key_symbol(key: &str) -> &str {
    match key {
        "lock.ttl_ticks" => "ttl",
        "lock.drift_ticks" => "drift",
        "clock.node_error_ticks" => "ε_node",
        "clock.client_error_ticks" => "ε_client",
        "faults.crashes.restart_delay_ticks" => "restart_delay",
        "faults.crashes.client_guard_ticks" => "client_guard",
        "storage.check_margin_ticks" => "margin",
        "faults.clock_jumps.jump_ticks" => "jump",
        "faults.pauses.max_ticks" => "pause",
        "storage.max_delay_ticks" => "delay",
        other => other,
    }
}

/// One symbolic exploration of the scenario `text` with the `free` keys it writes left free
/// ([`synthesize_keys`], at most `max_zones` zones and `time_limit`); `None` when it writes
/// none of them (a key the file does not write, a clock error of zero, stays at its default).
pub fn synthesize_written(
    file: &str,
    text: &str,
    free: &[&str],
    max_zones: usize,
    time_limit: Option<Duration>,
) -> Option<Result<Synthesis, SweepError>> {
    let keys: Vec<&str> = free
        .iter()
        .copied()
        .filter(|key| written_number(text, key).is_some())
        .collect();
    (!keys.is_empty()).then(|| synthesize_keys(file, text, &keys, max_zones, time_limit))
}

/// The point of `synthesis`'s keys at their base values, with `key` at `value` when it is free.
fn point(synthesis: &Synthesis, key: &str, value: i64) -> (Vec<i64>, Option<usize>) {
    let mut at = synthesis.base.clone();
    let figure = synthesis.keys.iter().position(|k| k == key);
    if let Some(k) = figure {
        at[k] = value;
    }
    (at, figure)
}

/// The smallest value of `key` in `from..=to` from which every property of `must_hold` is
/// proved to hold at every value up to `to`, the other keys at their base values: the figure
/// as `synthesis` reads it, for the checker to confirm on both sides. `None` when `key` is
/// not free or `to` itself is not proved.
pub fn proved_figure(
    synthesis: &Synthesis,
    key: &str,
    must_hold: &[Property],
    (from, to): (i64, i64),
) -> Option<i64> {
    synthesis.keys.iter().position(|k| k == key)?;
    let proved = |value: i64| {
        let (at, _) = point(synthesis, key, value);
        must_hold.iter().all(|&p| synthesis.proved_at(p, &at))
    };
    // A scan, not a bisection: the inequalities cost nothing to evaluate, and the figure is
    // the bottom of the proved run that ends at `to`, whatever lies below it.
    let mut lowest = None;
    for value in (from..=to).rev() {
        if !proved(value) {
            break;
        }
        lowest = Some(value);
    }
    lowest
}

/// The figure `value` of `key` as a formula over `synthesis`'s keys: the condition under which
/// every property of `must_hold` holds for every value of them.
pub fn formula(
    synthesis: &Synthesis,
    (key, value): (&str, u32),
    must_hold: &[Property],
) -> Formula {
    let (at, figure) = point(synthesis, key, i64::from(value));
    if !must_hold.iter().all(|&p| synthesis.proved_at(p, &at)) {
        return Formula::NotAtThePoint;
    }
    let tight = figure.is_some_and(|k| {
        let mut below = at.clone();
        below[k] = i64::from(value) - 1;
        must_hold
            .iter()
            .any(|&p| synthesis.proved_broken_at(p, &below))
    });
    let (condition, narrowed) = condition(synthesis, must_hold, figure);
    Formula::Proved {
        condition,
        zones: synthesis.zones,
        tight,
        exact: !narrowed,
    }
}

/// The condition that proves every property: for each region, the negation of what it adds
/// to the regions' common part (dropping the common part only narrows the condition, so it
/// stays proved), each written for the figure's key when it appears; and whether a common
/// part was dropped (then the condition is narrower than the regions' complement).
fn condition(
    synthesis: &Synthesis,
    properties: &[Property],
    figure: Option<usize>,
) -> (String, bool) {
    let names: Vec<String> = synthesis
        .keys
        .iter()
        .map(|k| key_symbol(k).to_owned())
        .collect();
    // Two properties often break in the same region: it is one part of the condition.
    let mut regions: Vec<_> = Vec::new();
    for region in properties
        .iter()
        .flat_map(|&p| synthesis.regions(p).unwrap_or_default())
    {
        if !regions.contains(&region) {
            regions.push(region);
        }
    }
    let common: Vec<_> = regions
        .first()
        .map(|first| {
            first
                .iter()
                .filter(|i| regions.iter().all(|r| r.contains(i)))
                .collect()
        })
        .unwrap_or_default();
    let mut parts: Vec<String> = Vec::new();
    for region in &regions {
        let own: Vec<_> = region.iter().filter(|i| !common.contains(i)).collect();
        let own = if own.is_empty() {
            region.iter().collect()
        } else {
            own
        };
        let negated: Vec<String> = own
            .iter()
            .map(|i| {
                // For the figure's key when it appears, else for the first key that can be.
                let not = i.negated();
                figure
                    .into_iter()
                    .chain(0..names.len())
                    .find_map(|k| not.solved_for(&names, k))
                    .unwrap_or_else(|| not.display(&names).to_string())
            })
            .collect();
        let part = match negated.as_slice() {
            [one] => one.clone(),
            many => format!("({})", many.join(" or ")),
        };
        if !parts.contains(&part) {
            parts.push(part);
        }
    }
    let narrowed = regions.len() > 1 && !common.is_empty();
    let condition = if parts.is_empty() {
        "always".to_owned()
    } else {
        parts.join(" and ")
    };
    (condition, narrowed)
}
