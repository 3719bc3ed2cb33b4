//! A check the zone engine settles, as a [`Report`].

use std::time::Duration;

use crate::zones::{self, Options, Outcome, ZoneConfig};

use super::engine::Engine;
use super::options::Check;
use super::report::{PropertyReport, Report, StopReason};

impl Check {
    /// Explores the zone graph under this check's state and time limits (the memory limit
    /// is the discrete engine's: a zone search of the catalog's sizes stays far below it).
    pub(super) fn run_zones(&self, config: &ZoneConfig) -> Report {
        let options = Options {
            max_zones: self.max_states.unwrap_or(Options::default().max_zones),
            time_limit: self.time_limit.unwrap_or(Duration::MAX),
            symmetry: self.symmetry.unwrap_or(true),
            ..Options::default()
        };
        let outcome = zones::explore(config, options);
        let reason = if outcome.zones >= options.max_zones {
            StopReason::StateLimit
        } else {
            StopReason::TimeLimit
        };
        let stopped = outcome.incomplete().then_some(reason);
        Report {
            file: self.scenario.file.clone(),
            name: self.scenario.name.clone(),
            unique_states: outcome.zones,
            max_depth: outcome.max_depth,
            seconds: outcome.seconds,
            stopped,
            cutoff: false,
            split: false,
            properties: self.zone_properties(&outcome),
            engine: Engine::Zones,
        }
    }

    /// The properties the zone engine judges, in report order.
    fn zone_properties(&self, outcome: &Outcome) -> Vec<PropertyReport> {
        outcome
            .judgements
            .iter()
            .map(|judgement| {
                let name = judgement.property.name();
                let counterexample = judgement
                    .counterexample
                    .as_ref()
                    .map(|steps| steps.iter().map(ToString::to_string).collect());
                PropertyReport {
                    counterexample,
                    ..PropertyReport::bare(name, self.scenario.expected(name), judgement.verdict)
                }
            })
            .collect()
    }
}
