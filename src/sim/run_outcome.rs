//! What a run returns: the seed, the resolved configuration and schedule, the trace, the
//! violations, and the text that replays it.

use std::fmt::{self, Write as _};

use super::fault::{ScheduledFault, SwarmFaults};
use super::judge::{Property, Violation};
use super::setup::SimConfig;
use super::trace::{TraceEntry, TraceEvent, counted, schedule_text};
use crate::plural::count;
use crate::time::Millis;

/// Counts over a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Stats {
    /// Successful acquisitions (epochs handed out).
    pub acquisitions: u32,
    /// Acquisitions that gave up after all their rounds.
    pub not_acquired: u32,
    /// Release rounds that ended.
    pub releases: u32,
    /// Storage writes acknowledged.
    pub acknowledged_writes: u32,
    /// Messages handed to the network.
    pub messages_sent: u64,
    /// Messages lost (random loss or isolation).
    pub messages_lost: u64,
    /// Faults that struck.
    pub faults_applied: u32,
    /// Faults that did not apply in the state they met.
    pub faults_ignored: u32,
}

/// The result of one run.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The seed.
    pub seed: u64,
    /// The configuration, as run.
    pub config: SimConfig,
    /// The faults, resolved (drawn from the seed, or as given), in time order.
    pub schedule: Vec<ScheduledFault>,
    /// Every event, in order.
    pub trace: Vec<TraceEntry>,
    /// The violations found, in order.
    pub violations: Vec<Violation>,
    /// Counts.
    pub stats: Stats,
    /// The last tick that ran (earlier than the duration if the run stopped at a violation).
    pub ended_at: Millis,
    /// What a swarm run drew ([`SimConfig::swarm`]); `None` otherwise.
    pub swarm: Option<SwarmRun>,
}

/// The knobs and faults one swarm run drew from its seed.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SwarmRun {
    /// This run's round timeout.
    pub round_timeout: Millis,
    /// This run's longest think time.
    pub think_max: Millis,
    /// This run's longest network delay.
    pub delay_max: Millis,
    /// Whether this run's first holder checks its lease as late as its margin allows
    /// ([`WorkloadConfig::late_check`](super::WorkloadConfig::late_check)).
    pub late_check: bool,
    /// How long after the run's first start the other clients begin, if this run aims them
    /// ([`WorkloadConfig::rival_start`](super::WorkloadConfig::rival_start)).
    pub rival_start: Option<Millis>,
    /// Whether this run's first client takes its write-back round's answers only once
    /// another client has acquired
    /// ([`WorkloadConfig::late_answers`](super::WorkloadConfig::late_answers)).
    pub late_answers: bool,
    /// How long after its belief ended this run's first holder releases, if it releases late
    /// ([`WorkloadConfig::late_release`](super::WorkloadConfig::late_release)).
    pub late_release: Option<Millis>,
    /// The fault kinds it enabled and its faults, timed and aimed.
    pub faults: SwarmFaults,
}

impl fmt::Display for SwarmRun {
    /// The knobs, the enabled kinds and the aimed faults, one per line (the timed ones are in
    /// the schedule).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "this run: round_timeout = {}, think_max = {}, delay_max = {}, late_check = {}, rival_start = {}, late_answers = {}, late_release = {}, fault kinds = {}",
            self.round_timeout,
            self.think_max,
            self.delay_max,
            self.late_check,
            self.rival_start
                .map_or_else(|| "none".to_owned(), |after| after.to_string()),
            self.late_answers,
            self.late_release
                .map_or_else(|| "none".to_owned(), |after| after.to_string()),
            if self.faults.enabled.is_empty() {
                "none".to_owned()
            } else {
                let keys: Vec<&str> = self.faults.enabled.iter().map(|c| c.key()).collect();
                keys.join(", ")
            }
        )?;
        for aimed in counted(&self.faults.aimed) {
            writeln!(f, "  aimed: {aimed}")?;
        }
        Ok(())
    }
}

impl Outcome {
    /// Whether `property` held throughout the run.
    pub fn holds(&self, property: Property) -> bool {
        self.violations.iter().all(|v| v.property() != property)
    }

    /// The first violation of `property`, if any.
    pub fn first_violation(&self, property: Property) -> Option<&Violation> {
        self.violations.iter().find(|v| v.property() == property)
    }

    /// Whether every property held.
    pub fn is_clean(&self) -> bool {
        self.violations.is_empty()
    }

    /// The seed and every resolved option, which a run prints first.
    pub fn header(&self) -> String {
        format!(
            "seed = {}\n{}{}{}",
            self.seed,
            self.config,
            self.swarm
                .as_ref()
                .map_or_else(String::new, ToString::to_string),
            self.schedule_text()
        )
    }

    /// `schedule (n faults):` and a line per fault, faults alike told once with their count.
    pub fn schedule_text(&self) -> String {
        format!(
            "schedule ({}):\n{}",
            count(self.schedule.len(), "fault", "faults"),
            schedule_text(&self.schedule)
        )
    }

    /// The exact command that replays this run.
    ///
    /// A run of a simulator world (`models/sim/<name>.toml`, unchanged) is replayed by
    /// `redlock-lab simulate <name> --seed <seed>`. Any other configuration cannot be named on a
    /// command line here; the command then says so and the header printed above it has every
    /// option.
    pub fn replay_command(&self) -> String {
        match self.config.world() {
            Some(world) => format!("redlock-lab simulate {world} --seed {}", self.seed),
            None => format!(
                "seed {} of the custom configuration printed above (`sim::run(&config, {})`)",
                self.seed, self.seed
            ),
        }
    }

    /// The whole trace, one event per line.
    pub fn trace_text(&self) -> String {
        self.trace.iter().fold(String::new(), |mut text, entry| {
            let _ = writeln!(text, "{entry}");
            text
        })
    }

    /// Counts, violations and the replay command, without the header or the trace.
    pub fn summary(&self) -> String {
        let mut text = String::new();
        let s = &self.stats;
        let _ = writeln!(
            text,
            "ran to t={}: {} acquisitions, {} not acquired, {} releases, {} acknowledged writes, {} messages ({} lost), {} faults ({} ignored)",
            self.ended_at.0,
            s.acquisitions,
            s.not_acquired,
            s.releases,
            s.acknowledged_writes,
            s.messages_sent,
            s.messages_lost,
            s.faults_applied,
            s.faults_ignored
        );
        if self.violations.is_empty() {
            let _ = writeln!(text, "no violations");
        } else {
            let _ = writeln!(text, "violations:");
            for violation in &self.violations {
                let _ = writeln!(text, "  {violation}");
            }
        }
        let _ = writeln!(text, "replay: {}", self.replay_command());
        text
    }

    /// A report for humans: the header, the last `tail` events up to the first violation (if
    /// any), and the [summary](Outcome::summary) ending in the replay command.
    pub fn report(&self, tail: usize) -> String {
        let mut text = self.header();
        if !self.violations.is_empty() {
            text.push_str(&self.trace_tail("trace", tail));
        }
        text.push_str(&self.summary());
        text
    }

    /// The last `tail` events up to and including the first violation (the whole trace's last
    /// events when there is none), under a heading `title (events a..b of n):`. The one place a
    /// trace is cut at its violation, for [`report`](Outcome::report) and the CLI alike.
    pub fn trace_tail(&self, title: &str, tail: usize) -> String {
        let end = self
            .trace
            .iter()
            .position(|entry| matches!(entry.event, TraceEvent::Violation(_)))
            .map_or(self.trace.len(), |i| i + 1);
        let start = end.saturating_sub(tail);
        let mut text = format!("{title} (events {start}..{end} of {}):\n", self.trace.len());
        for entry in &self.trace[start..end] {
            let _ = writeln!(text, "  {entry}");
        }
        text
    }
}
