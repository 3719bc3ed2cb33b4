//! A check the zone engine settles, as a [`Report`].

use std::time::Duration;

use crate::property::Property;
use crate::scenario::Scenario;
use crate::scenario::Verdict;
use crate::search::Shell;
use crate::zones::{
    self, FreeKey, Options, Synthesis, SynthesisError, TimedRun, ZoneConfig, ZoneOutcome, ZoneStep,
};

use super::engine::Engine;
use super::options::Check;
use super::report::{PropertyReport, Report, StopReason};
use super::zone_path::model_steps;

impl Check {
    /// Explores the zone graph under this check's shell: its state and time limits, its
    /// memory limit and its progress, as the discrete engine's walks. With the cutoff on, a
    /// scenario of three or more alike clients is tried first on two clients with phantom
    /// refusals ([`ZoneConfig::with_phantom_clients`]), as the discrete engine does; what
    /// that settles nothing of is explored in full, the zones of both counted.
    pub(super) fn run_zones(&self, config: &ZoneConfig) -> Report {
        let mut shell = self.shell();
        let (mut explored, mut seconds) = (0, 0.0);
        let cut = config.with_phantom_clients().filter(|_| self.cutoff);
        if let Some(cut) = cut {
            let (outcome, stopped) = self.explore_zones(&cut, &mut shell, explored);
            if stopped.is_none() && settled_by_cutoff(&outcome) {
                return self.zone_report(outcome, None, true);
            }
            (explored, seconds) = (outcome.zones, outcome.seconds);
        }
        let (mut outcome, stopped) = self.explore_zones(config, &mut shell, explored);
        outcome.zones += explored;
        outcome.seconds += seconds;
        self.zone_report(outcome, stopped, false)
    }

    /// One zone search of `config` under `shell`, `before` zones already explored; and why
    /// it stopped short, if it did.
    fn explore_zones(
        &self,
        config: &ZoneConfig,
        shell: &mut Shell<'_>,
        before: usize,
    ) -> (ZoneOutcome, Option<StopReason>) {
        let budget = self.max_states.unwrap_or(Options::default().max_zones);
        let options = Options {
            max_zones: budget.saturating_sub(before),
            time_limit: self.time_limit.unwrap_or(Duration::MAX),
            symmetry: self.symmetry.unwrap_or(true),
            merging: self.zone_merging,
            dead_keys: self.zone_dead_keys,
            ..Options::default()
        };
        let mut stop = None;
        let outcome = zones::explore_watched(config, options, &mut |zones| {
            shell.report(before + zones);
            stop = shell
                .limit(before + zones, self.max_states)
                .map(StopReason::from);
            stop.is_some()
        });
        let reason = stop.unwrap_or(if outcome.zones >= options.max_zones {
            StopReason::StateLimit
        } else {
            StopReason::TimeLimit
        });
        let stopped = outcome.incomplete().then_some(reason);
        (outcome, stopped)
    }

    /// The report of a zone search.
    fn zone_report(
        &self,
        outcome: ZoneOutcome,
        stopped: Option<StopReason>,
        cutoff: bool,
    ) -> Report {
        Report {
            file: self.scenario.file.clone(),
            name: self.scenario.name.clone(),
            nodes: self.scenario.lock.nodes(),
            clients: usize::from(self.scenario.lock.clients),
            unique_states: outcome.zones,
            max_depth: outcome.max_depth,
            seconds: outcome.seconds,
            stopped,
            cutoff,
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

/// Whether a search with phantom refusals settles every property: mutual exclusion holds,
/// or breaks by a run that needs no phantom refusal (a run of the full automaton); `lock
/// acquired` either way (see [`ZoneConfig::with_phantom_clients`]).
fn settled_by_cutoff(outcome: &ZoneOutcome) -> bool {
    outcome
        .judgements
        .iter()
        .all(|judgement| match judgement.verdict {
            Verdict::Holds => true,
            Verdict::Violated if judgement.property == Property::LockAcquired => true,
            Verdict::Violated => judgement.run.as_ref().is_some_and(|run| {
                !run.steps
                    .iter()
                    .any(|timed| matches!(timed.step, ZoneStep::Refuse { .. }))
            }),
            _ => false,
        })
}
