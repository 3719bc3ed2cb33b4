//! Sweeps: one scenario checked once per value of one of its keys, and the boundary where a
//! verdict flips. The library behind `redlock-lab sweep` and `redlock-lab advise`.
//!
//! A [`Vary`] names a dotted key of the scenario file (`faults.clock_jumps.jump_ticks`) and
//! the values to give it. Each value is written into the file's TOML table and the result is
//! parsed again by [`Scenario::from_str`], so every variant passes the same validation as a
//! file on disk; a key the schema does not know is refused. Each variant is then checked by
//! [`Check`]: a sweep never computes a verdict itself.
//!
//! ```
//! use redlock_lab::catalog;
//! use redlock_lab::scenario::Verdict;
//! use redlock_lab::sweep::{Sweep, Vary};
//!
//! let embedded = catalog::lookup("node-clock-jump-forward-past-drift").unwrap();
//! let vary: Vary = "faults.clock_jumps.jump_ticks=1..3".parse()?;
//! let sweep = Sweep::prepare(embedded.file, embedded.text, &vary)?.run();
//! // drift is 1: a jump of 1 is absorbed, a jump of 2 or 3 is not.
//! let flip = &sweep.boundaries()[0];
//! assert_eq!(flip.property, "mutual exclusion");
//! assert_eq!((flip.below.value.as_str(), flip.below.verdict), ("1", Verdict::Holds));
//! assert_eq!((flip.above.value.as_str(), flip.above.verdict), ("2", Verdict::Violated));
//! # Ok::<(), redlock_lab::sweep::SweepError>(())
//! ```

use std::str::FromStr;

use serde::Serialize;
use thiserror::Error;
use toml::{Table, Value};

use crate::check::{Check, FreeKey, Report, Synthesis, SynthesisError, synthesize};
use crate::scenario::{Scenario, ScenarioError, Verdict};

/// Why a sweep cannot run. Every variant is bad input: nothing was checked.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SweepError {
    /// The `--vary` text is not `KEY=A..B` or `KEY=v1,v2,…`.
    #[error("--vary {spec:?}: {reason}")]
    Spec {
        /// The text given.
        spec: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The scenario itself is invalid (before any value was set).
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// The key does not exist in the scenario schema, or crosses a value that is not a table.
    #[error("{file}: {key} is not a scenario key: {reason}")]
    UnknownKey {
        /// The scenario file.
        file: String,
        /// The dotted key.
        key: String,
        /// The schema's complaint, or the value in the way.
        reason: String,
    },
    /// The scenario refuses one of the values (a jump of 0, a TTL not above the drift, …).
    #[error("{file}: {key} = {value} is refused: {reason}")]
    Value {
        /// The scenario file.
        file: String,
        /// The dotted key.
        key: String,
        /// The value, as TOML.
        value: String,
        /// The validation's message.
        reason: String,
    },
    /// A key to leave free is not a whole number written in the file.
    #[error("{file}: {key} is not a whole number in the file; write it out to leave it free")]
    NotANumber {
        /// The scenario file.
        file: String,
        /// The dotted key.
        key: String,
    },
    /// The symbolic exploration could not run.
    #[error("{file}: {error}")]
    Synthesis {
        /// The scenario file.
        file: String,
        /// Why.
        error: SynthesisError,
    },
}

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
fn display(value: &Value) -> String {
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
fn with_key(file: &str, text: &str, key: &str, value: &Value) -> Result<String, SweepError> {
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
    let parts: Vec<&str> = key.split('.').collect();
    let (last, path) = parts.split_last().expect("split yields one part at least");
    let mut here = &mut table;
    for (depth, part) in path.iter().enumerate() {
        let entry = here
            .entry((*part).to_owned())
            .or_insert_with(|| Value::Table(Table::new()));
        here = match entry {
            Value::Table(inner) => inner,
            other => {
                return Err(unknown(format!(
                    "{} is {}, not a table",
                    parts[..=depth].join("."),
                    other.type_str()
                )));
            }
        };
    }
    if matches!(here.get(*last), Some(Value::Table(_))) {
        return Err(unknown(format!("{key} is a table, not a value")));
    }
    here.insert((*last).to_owned(), value.clone());
    toml::to_string(&table).map_err(|e| unknown(e.to_string()))
}

/// Every variant of a sweep, validated, ready to check.
#[derive(Clone, Debug)]
pub struct Sweep {
    file: String,
    name: String,
    key: String,
    variants: Vec<(Value, Scenario)>,
}

impl Sweep {
    /// Validates the scenario and every variant before anything is checked: a bad value
    /// never produces a partial sweep.
    pub fn prepare(file: &str, text: &str, vary: &Vary) -> Result<Sweep, SweepError> {
        let base = Scenario::from_str(file, text)?;
        let variants = vary
            .values
            .iter()
            .map(|v| Ok((v.clone(), variant(file, text, &vary.key, v)?)))
            .collect::<Result<Vec<_>, SweepError>>()?;
        Ok(Sweep {
            file: file.to_owned(),
            name: base.name,
            key: vary.key.clone(),
            variants,
        })
    }

    /// The variants, in order.
    pub fn variants(&self) -> impl Iterator<Item = (&Value, &Scenario)> {
        self.variants.iter().map(|(v, s)| (v, s))
    }

    /// Checks every variant with the default [`Check`].
    pub fn run(&self) -> SweepReport {
        self.run_with(|scenario| Check::new(scenario).run())
    }

    /// Checks every variant with `check` (a `Check` with other options, progress, …).
    pub fn run_with(&self, mut check: impl FnMut(&Scenario) -> Report) -> SweepReport {
        let rows = self
            .variants
            .iter()
            .map(|(value, scenario)| Row {
                value: display(value),
                report: check(scenario),
            })
            .collect();
        SweepReport {
            file: self.file.clone(),
            scenario: self.name.clone(),
            key: self.key.clone(),
            rows,
        }
    }
}

/// One checked value.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// The value, as printed (strings without quotes).
    pub value: String,
    /// The checker's report for the scenario with that value.
    pub report: Report,
}

impl Row {
    /// The verdict of `property` at this value, if it was checked.
    pub fn verdict(&self, property: &str) -> Option<Verdict> {
        self.report.property(property).map(|p| p.verdict)
    }
}

/// Every value's report, in order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SweepReport {
    /// The scenario's file.
    pub file: String,
    /// The scenario's name.
    pub scenario: String,
    /// The dotted key varied.
    pub key: String,
    /// One row per value.
    pub rows: Vec<Row>,
}

/// A value and the verdict found there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Point {
    /// The value, as printed.
    pub value: String,
    /// The verdict there.
    pub verdict: Verdict,
}

/// Two consecutive values of a sweep where a property's verdict flips.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Boundary {
    /// The property.
    pub property: String,
    /// The last value before the flip.
    pub below: Point,
    /// The first value after it.
    pub above: Point,
}

impl SweepReport {
    /// The names of the properties checked, in the report's order.
    pub fn properties(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for row in &self.rows {
            for p in &row.report.properties {
                if !names.contains(&p.name) {
                    names.push(p.name.clone());
                }
            }
        }
        names
    }

    /// Every flip: for each property, each pair of consecutive values whose verdicts differ.
    pub fn boundaries(&self) -> Vec<Boundary> {
        let mut out = Vec::new();
        for property in self.properties() {
            for pair in self.rows.windows(2) {
                let (Some(below), Some(above)) =
                    (pair[0].verdict(&property), pair[1].verdict(&property))
                else {
                    continue;
                };
                if below != above {
                    out.push(Boundary {
                        property: property.clone(),
                        below: Point {
                            value: pair[0].value.clone(),
                            verdict: below,
                        },
                        above: Point {
                            value: pair[1].value.clone(),
                            verdict: above,
                        },
                    });
                }
            }
        }
        out
    }
}

/// Where a monotone verdict flips in an integer range, found by [`search`] and checked on
/// both sides.
#[derive(Clone, Debug, PartialEq)]
pub enum Search {
    /// `first` is the smallest value in the range with the wanted verdict; `first − 1`, which
    /// lies in the range, does not have it. Both reports are the checker's.
    Boundary {
        /// The smallest value with the wanted verdict.
        first: i64,
        /// Its report.
        at: Box<Report>,
        /// The report of `first − 1`.
        before: Box<Report>,
    },
    /// The range's first value already has it (nothing below was searched).
    AtStart {
        /// Its report.
        at: Box<Report>,
    },
    /// Not even the range's last value has it.
    Nowhere {
        /// The last value's report.
        last: Box<Report>,
    },
}

/// Binary search over `from..=to` for the smallest value whose report satisfies `wanted`,
/// assuming `wanted` is monotone (false, then true, as the value grows). Every probe runs the
/// checker through `check`; the answer's two sides are both checked, so a non-monotone
/// `wanted` cannot yield a boundary the checker did not show.
pub fn search(
    from: i64,
    to: i64,
    mut check: impl FnMut(i64) -> Result<Report, SweepError>,
    wanted: impl Fn(&Report) -> bool,
) -> Result<Search, SweepError> {
    assert!(from <= to, "search over an empty range");
    let last = check(to)?;
    if !wanted(&last) {
        return Ok(Search::Nowhere {
            last: Box::new(last),
        });
    }
    if from == to {
        return Ok(Search::AtStart { at: Box::new(last) });
    }
    let first = check(from)?;
    if wanted(&first) {
        return Ok(Search::AtStart {
            at: Box::new(first),
        });
    }
    // Invariant: `low` lacks it, `high` has it.
    let (mut low, mut low_report, mut high, mut high_report) = (from, first, to, last);
    while high - low > 1 {
        let middle = low + (high - low) / 2;
        let report = check(middle)?;
        if wanted(&report) {
            (high, high_report) = (middle, report);
        } else {
            (low, low_report) = (middle, report);
        }
    }
    Ok(Search::Boundary {
        first: high,
        at: Box::new(high_report),
        before: Box::new(low_report),
    })
}

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
/// value of them at once, where each property holds ([`synthesize`], at most `max_zones`
/// symbolic states). Each key must be written in the file as a whole number of ticks.
pub fn synthesize_keys(
    file: &str,
    text: &str,
    keys: &[&str],
    max_zones: usize,
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
    synthesize(&scenario, &free, max_zones, &at).map_err(|error| SweepError::Synthesis {
        file: file.to_owned(),
        error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }

    #[test]
    fn search_finds_the_first_value_and_checks_both_sides() {
        let base = Scenario::from_str("x.toml", BASE).unwrap();
        let report_for = |holds: bool| {
            let mut report = crate::check::check(&base);
            report.properties[0].verdict = if holds {
                Verdict::Holds
            } else {
                Verdict::Violated
            };
            report
        };
        let mut probes = Vec::new();
        let found = search(
            0,
            10,
            |v| {
                probes.push(v);
                Ok(report_for(v >= 7))
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
            |_| Ok(report_for(true)),
            |r| r.properties[0].verdict == Verdict::Holds,
        )
        .unwrap();
        assert!(matches!(found, Search::AtStart { .. }));
        let found = search(
            0,
            3,
            |_| Ok(report_for(false)),
            |r| r.properties[0].verdict == Verdict::Holds,
        )
        .unwrap();
        assert!(matches!(found, Search::Nowhere { .. }));
    }
}
