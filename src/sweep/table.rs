//! A sweep: every value of one key checked, and where each property's verdict flips.

use serde::Serialize;
use toml::Value;

use super::error::SweepError;
use super::vary::{Vary, display, variant};
use crate::check::{Check, Report};
use crate::scenario::{Scenario, Verdict};

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

    /// Checks every variant with the default [`Check`], one after another.
    pub fn run(&self) -> SweepReport {
        let reports = self
            .labelled()
            .map(|(_, scenario)| Check::new(scenario).run())
            .collect();
        self.report(reports)
    }

    /// Every variant with the value as the report prints it (`1`, `"fsync-always"` without
    /// quotes), in order.
    pub fn labelled(&self) -> impl Iterator<Item = (String, &Scenario)> {
        self.variants()
            .map(|(value, scenario)| (display(value), scenario))
    }

    /// The sweep's report from `reports`, one per variant in order, made elsewhere (on
    /// threads, with limits, …).
    pub fn report(&self, reports: Vec<Report>) -> SweepReport {
        let rows = self
            .labelled()
            .zip(reports)
            .map(|((value, _), report)| Row { value, report })
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
