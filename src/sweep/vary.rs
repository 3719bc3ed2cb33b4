//! A key to vary, the values to give it, and the scenario at each value.

use std::str::FromStr;

use toml::{Table, Value};

use super::error::SweepError;
use crate::scenario::{KeyPathError, Scenario, ScenarioError, set_key};

/// A key to vary and the values to give it, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Vary {
    /// The dotted key, e.g. `faults.clock_jumps.jump_ticks`.
    pub key: String,
    /// The values, in the order the sweep checks them.
    pub values: Vec<Value>,
}

/// The most values one sweep may check (each one is a full model check).
pub const MAX_VALUES: usize = 200;

impl Vary {
    /// Integer values `from..=to` of `key`.
    pub fn range(key: &str, from: i64, to: i64) -> Vary {
        Vary {
            key: key.to_owned(),
            values: (from..=to).map(Value::Integer).collect(),
        }
    }
}

impl FromStr for Vary {
    type Err = SweepError;

    /// `KEY=A..B` (integers, both ends included; `A..=B` too) or `KEY=v1,v2,…` where each value
    /// is a TOML value (`3`, `true`, `"del"`) or a bare word taken as a string (`del`).
    fn from_str(spec: &str) -> Result<Vary, SweepError> {
        let refuse = |reason: &str| SweepError::Spec {
            spec: spec.to_owned(),
            reason: reason.to_owned(),
        };
        let (key, values) = spec
            .split_once('=')
            .ok_or_else(|| refuse("expected KEY=A..B or KEY=v1,v2"))?;
        let key = key.trim();
        if key.is_empty()
            || key.split('.').any(|part| {
                part.is_empty()
                    || !part
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            })
        {
            return Err(refuse(
                "the key must be dotted words, e.g. faults.clock_jumps.jump_ticks",
            ));
        }
        let values = values.trim();
        let parsed: Vec<Value> = if let Some((from, to)) = values.split_once("..") {
            let to = to.strip_prefix('=').unwrap_or(to);
            if let Some(durations) = duration_range(from, to) {
                let durations = durations.map_err(|reason| refuse(&reason))?;
                return Ok(Vary {
                    key: key.to_owned(),
                    values: durations,
                });
            }
            let bound = |text: &str| {
                text.trim()
                    .parse::<i64>()
                    .map_err(|_| refuse("a range's ends must be integers, e.g. 1..6"))
            };
            let (from, to) = (bound(from)?, bound(to)?);
            if from > to {
                return Err(refuse(
                    "the range is empty: its first value is above its last",
                ));
            }
            if to - from >= MAX_VALUES as i64 {
                return Err(refuse(&format!(
                    "at most {MAX_VALUES} values: each one is a full model check"
                )));
            }
            (from..=to).map(Value::Integer).collect()
        } else {
            values.split(',').map(|v| value(v.trim())).collect()
        };
        if parsed.is_empty() || values.is_empty() {
            return Err(refuse("no values given"));
        }
        if parsed.len() > MAX_VALUES {
            return Err(refuse(&format!(
                "at most {MAX_VALUES} values: each one is a full model check"
            )));
        }
        Ok(Vary {
            key: key.to_owned(),
            values: parsed,
        })
    }
}

/// The units a duration range may step in, with their length in milliseconds.
const RANGE_UNITS: [(&str, i64); 5] = [
    ("ms", 1),
    ("s", 1_000),
    ("min", 60_000),
    ("m", 60_000),
    ("h", 3_600_000),
];

/// A number and a unit, `-50ms` → `(-50, "ms", 1)`.
fn number_and_unit(text: &str) -> Option<(i64, &'static str, i64)> {
    let text = text.trim();
    let split = text
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && (c == '-' || c == '+'))))
        .map(|(i, _)| i)?;
    let (number, unit) = text.split_at(split);
    let number: i64 = number.parse().ok()?;
    let &(name, ms) = RANGE_UNITS.iter().find(|(name, _)| *name == unit.trim())?;
    Some((number, name, ms))
}

/// `A..B` or `A..B/STEP` where the ends are durations (`90ms..110ms`, `1s..3s/500ms`), as
/// the duration strings a scenario file's time keys take; `None` when the ends are plain
/// integers (a range of a tick key). Without a step the range counts in the ends' own unit.
fn duration_range(from: &str, to: &str) -> Option<Result<Vec<Value>, String>> {
    let (to, step) = match to.split_once('/') {
        Some((to, step)) => (to, Some(step)),
        None => (to, None),
    };
    let (a, unit_a, ms_a) = number_and_unit(from)?;
    let bad = |reason: &str| Some(Err(reason.to_owned()));
    let Some((b, unit_b, ms_b)) = number_and_unit(to) else {
        return bad(
            "both ends of a duration range are a whole number and a unit, e.g. 90ms..110ms",
        );
    };
    let (start, end, step, unit) = match step {
        None if unit_a != unit_b => {
            return bad(
                "the ends are in different units: write both in one, or give a step (1s..1500ms/100ms)",
            );
        }
        None => (a, b, 1, unit_a),
        Some(step) => {
            let Some((step, unit, unit_ms)) = number_and_unit(step).filter(|s| s.0 > 0) else {
                return bad("the step is a positive whole number and a unit, e.g. /5ms");
            };
            let in_unit = |n: i64, ms: i64| (n * ms % unit_ms == 0).then_some(n * ms / unit_ms);
            let (Some(start), Some(end)) = (in_unit(a, ms_a), in_unit(b, ms_b)) else {
                return bad("the ends must be whole numbers of the step's unit");
            };
            (start, end, step, unit)
        }
    };
    if start > end {
        return bad("the range is empty: its first value is above its last");
    }
    if (end - start) % step != 0 {
        return bad("the step must divide the range, so both ends are checked");
    }
    if (end - start) / step >= MAX_VALUES as i64 {
        return Some(Err(format!(
            "at most {MAX_VALUES} values: each one is a full model check (give a coarser step, e.g. /10{unit})"
        )));
    }
    let values = (start..=end)
        .step_by(usize::try_from(step).expect("a positive step"))
        .map(|n| Value::String(format!("{n}{unit}")))
        .collect();
    Some(Ok(values))
}

/// One value as TOML (`3`, `true`, `"del"`), or a bare word as a string.
fn value(text: &str) -> Value {
    toml::from_str::<Table>(&format!("v = {text}"))
        .ok()
        .and_then(|mut table| table.remove("v"))
        .unwrap_or_else(|| Value::String(text.to_owned()))
}

/// A value as the sweep prints it: TOML, except that strings lose their quotes.
pub(super) fn display(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `text` (a scenario file) with the dotted `key` set to `value`, parsed and validated.
///
/// Missing tables on the way are created (`faults.crashes.count` in a file without crashes
/// adds the table); a key the schema does not know is [`SweepError::UnknownKey`], a value it
/// refuses [`SweepError::Value`].
pub fn variant(file: &str, text: &str, key: &str, value: &Value) -> Result<Scenario, SweepError> {
    let edited = with_key(file, text, key, value)?;
    Scenario::from_str(file, &edited).map_err(|error| {
        // The location points into the re-serialised text, which the user never saw: keep the
        // message, name the key and value instead.
        let message = error.to_string();
        let reason = match error.location() {
            Some(at) => message
                .strip_prefix(&format!("{at}: "))
                .unwrap_or(&message)
                .to_owned(),
            None => message,
        };
        match error {
            ScenarioError::UnknownKey { .. } => SweepError::UnknownKey {
                file: file.to_owned(),
                key: key.to_owned(),
                reason,
            },
            _ => SweepError::Value {
                file: file.to_owned(),
                key: key.to_owned(),
                value: value.to_string(),
                reason,
            },
        }
    })
}

/// `text` with the dotted `key` set to `value` (tables on the way created), re-serialised.
pub(super) fn with_key(
    file: &str,
    text: &str,
    key: &str,
    value: &Value,
) -> Result<String, SweepError> {
    let unknown = |reason: String| SweepError::UnknownKey {
        file: file.to_owned(),
        key: key.to_owned(),
        reason,
    };
    let mut table: Table = toml::from_str(text).map_err(|e| {
        SweepError::Scenario(Scenario::from_str(file, text).err().unwrap_or_else(|| {
            ScenarioError::Read {
                file: file.to_owned(),
                message: e.to_string(),
            }
        }))
    })?;
    set_key(&mut table, key, value.clone()).map_err(|e| match e {
        // The key exists: it is this value that cannot stand in the list's place.
        KeyPathError::ListOfSizes(_) => SweepError::Value {
            file: file.to_owned(),
            key: key.to_owned(),
            value: value.to_string(),
            reason: e.to_string(),
        },
        _ => unknown(e.to_string()),
    })?;
    toml::to_string(&table).map_err(|e| unknown(e.to_string()))
}
