//! A check the zone engine settles, as a [`Report`].

use std::time::Duration;

use crate::property::Property;
use crate::scenario::Scenario;
use crate::zones::{
    self, FreeKey, Options, Synthesis, SynthesisError, TimedRun, ZoneConfig, ZoneOutcome,
};

use super::engine::Engine;
use super::options::Check;
use super::report::{PropertyReport, Report, StopReason};
use super::zone_path::model_steps;

impl Check {
    /// Explores the zone graph under this check's shell: its state and time limits, its
    /// memory limit and its progress, as the discrete engine's walks.
    pub(super) fn run_zones(&self, config: &ZoneConfig) -> Report {
        let options = Options {
            max_zones: self.max_states.unwrap_or(Options::default().max_zones),
            time_limit: self.time_limit.unwrap_or(Duration::MAX),
            symmetry: self.symmetry.unwrap_or(true),
            merging: self.zone_merging,
            dead_keys: self.zone_dead_keys,
            ..Options::default()
        };
        let mut shell = self.shell();
        let mut stop = None;
        let outcome = zones::explore_watched(config, options, &mut |zones| {
            shell.report(zones);
            stop = shell.limit(zones, self.max_states).map(StopReason::from);
            stop.is_some()
        });
        let reason = stop.unwrap_or(if outcome.zones >= options.max_zones {
            StopReason::StateLimit
        } else {
            StopReason::TimeLimit
        });
        let stopped = outcome.incomplete().then_some(reason);
        Report {
            file: self.scenario.file.clone(),
            name: self.scenario.name.clone(),
            nodes: self.scenario.lock.nodes(),
            clients: usize::from(self.scenario.lock.clients),
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

    /// Leaves the `free` keys of this check's scenario free and finds, for every value of
    /// them, where each property holds (parameter synthesis: [`Synthesis`] says how), under
    /// this check's shell: its state limit as the zone budget, its time and memory limits,
    /// its progress. `at` gives the scenario at any point of the keys.
    pub fn synthesize(
        &self,
        free: &[FreeKey],
        at: &dyn Fn(&[i64]) -> Option<Scenario>,
    ) -> Result<Synthesis, SynthesisError> {
        let mut shell = self.shell();
        let mut watch = |zones| {
            shell.report(zones);
            shell.limit(zones, self.max_states).is_some()
        };
        let options = Options {
            max_zones: self.max_states.unwrap_or(Options::default().max_zones),
            merging: self.zone_merging,
            ..Options::default()
        };
        zones::synthesize(&self.scenario, free, options, &mut watch, at)
    }

    /// The properties the zone engine judges, in report order.
    fn zone_properties(&self, outcome: &ZoneOutcome) -> Vec<PropertyReport> {
        outcome
            .judgements
            .iter()
            .map(|judgement| {
                let name = judgement.property.name();
                let counterexample = match (&judgement.run, &judgement.counterexample) {
                    (Some(run), _) => Some(self.timed_steps(name, run)),
                    (None, steps) => steps
                        .as_ref()
                        .map(|steps| steps.iter().map(ToString::to_string).collect()),
                };
                // The same run through the discrete model, for its story and diagrams.
                let steps = judgement
                    .run
                    .as_ref()
                    .and_then(|run| model_steps(&self.scenario, run));
                PropertyReport {
                    counterexample,
                    steps,
                    ..PropertyReport::bare(name, self.scenario.expected(name), judgement.verdict)
                }
            })
            .collect()
    }

    /// A concrete run's steps, each with its time (in milliseconds when the file says what a
    /// tick is), and the instant `property` breaks.
    fn timed_steps(&self, property: &str, run: &TimedRun) -> Vec<String> {
        let resolution = self.scenario.resolution;
        let at = |ticks: i64| match resolution {
            Some(ms) => format!("t={} ms", ticks * ms.as_u64() as i64),
            None => format!("t={ticks}"),
        };
        let broken = if property == Property::MutualExclusion.name() {
            "two clients believe they hold the lock: mutual exclusion is broken".to_owned()
        } else {
            format!("{property} is broken")
        };
        let lines: Vec<(String, String)> = run
            .steps
            .iter()
            .map(|s| (at(s.at), s.step.to_string()))
            .chain([(at(run.broken_at), broken)])
            .collect();
        let width = lines.iter().map(|(t, _)| t.len()).max().unwrap_or(0);
        lines
            .into_iter()
            .map(|(t, what)| format!("{t:<width$}  {what}"))
            .collect()
    }
}
