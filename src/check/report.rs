//! What a check returns: verdicts per property, counts, why it stopped.

use serde::Serialize;

use crate::model::Step;
use crate::report::Story;
use crate::scenario::{Ingredient, Verdict};
use crate::search::Limit;

use super::engine::Engine;
use super::reach::Reach;

/// One property's outcome.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PropertyReport {
    /// The property's name.
    pub name: String,
    /// What `[expect]` predicts, if it names the property.
    pub expected: Option<Verdict>,
    /// What the checker found ([`Verdict::Incomplete`] when the run stopped before settling it).
    pub verdict: Verdict,
    /// The shortest counterexample (always, eventually) as step descriptions, or `None`.
    pub counterexample: Option<Vec<String>>,
    /// Set when `counterexample` is real but possibly not the shortest: a limit stopped the
    /// search for the shortest (it is then the first the verdict run found), or it was found
    /// with fewer clients than the scenario has (see [`Report::split`]). Absent from the JSON
    /// report when false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub counterexample_not_shortest: bool,
    /// The same counterexample as the model's steps, from which
    /// [`reported_story_path`](super::reported_story_path) renders its story on demand; not in the JSON report.
    #[serde(skip)]
    pub steps: Option<Vec<Step>>,
    /// The counterexample told as `trace` tells it, with the ✗ line and the state at the
    /// break (a user invariant's too), when the discrete engine found one; this report's
    /// [`Display`](std::fmt::Display) prints it. Not in the JSON report.
    #[serde(skip)]
    pub story: Option<Story>,
    /// For a violated property, once computed ([`Check::run_with_causes`](super::Check::run_with_causes)): the ingredients
    /// without which it holds. `None` when not computed, or when the property holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub necessary: Option<Vec<Ingredient>>,
    /// For a violated property whose causes were computed: the ingredients whose re-check
    /// stopped at a limit before settling it, so whether they are necessary is not known
    /// (they are in neither list of [`crate::cause::sentence`]'s verdict).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub undetermined: Vec<Ingredient>,
    /// The numbers of nodes and clients the verdict is proved for, and the argument (see
    /// [`crate::check::reach`]); [`Reach::CHECKED`] when none carries it further, or when
    /// the check was run with [`Check::reach`](super::Check::reach) off.
    pub reach: Reach,
}

impl PropertyReport {
    /// A verdict with nothing else to show: no counterexample, story or causes yet.
    pub(crate) fn bare(name: &str, expected: Option<Verdict>, verdict: Verdict) -> PropertyReport {
        PropertyReport {
            name: name.to_owned(),
            expected,
            verdict,
            counterexample: None,
            counterexample_not_shortest: false,
            steps: None,
            story: None,
            necessary: None,
            undetermined: Vec::new(),
            reach: Reach::CHECKED,
        }
    }
}

impl PropertyReport {
    /// For which sizes a settled `always` verdict is proved, in one sentence ("mutual
    /// exclusion: holds for every even number of nodes and any number of clients: two
    /// majorities …"), for a report of `nodes` nodes and `clients` clients; `None` for an
    /// unsettled verdict or a property that is not an invariant.
    pub fn reach_sentence(&self, nodes: usize, clients: usize) -> Option<String> {
        let settled = matches!(self.verdict, Verdict::Holds | Verdict::Violated);
        let invariant = crate::property::Property::from_name(&self.name)
            .is_some_and(|p| crate::property::Property::ALWAYS.contains(&p));
        if !settled || !invariant {
            return None;
        }
        let sizes = self.reach.describe(self.verdict, nodes, clients);
        let mut sentence = format!("{}: {} for {sizes}", self.name, self.verdict);
        if self.reach.argument != super::reach::Argument::None {
            sentence.push_str(": ");
            sentence.push_str(self.reach.argument.sentence());
        }
        Some(sentence)
    }
}

impl PropertyReport {
    /// Panics unless the property holds, with this report as the message: the story of its
    /// counterexample, as `trace` tells it. The assertion of a `cargo test` that checks an
    /// invariant of its own.
    #[track_caller]
    pub fn assert_holds(&self) {
        assert!(self.verdict == Verdict::Holds, "{self}");
    }
}

/// The verdict, then the counterexample's story (`trace`'s text: one line per event, ✗ on the
/// event that breaks the property and the state there), else its steps, numbered.
impl std::fmt::Display for PropertyReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(story) = &self.story {
            return f.write_str(&story.to_text());
        }
        write!(f, "{}: {}", self.name, self.verdict)?;
        if let Some(expected) = self.expected {
            write!(f, " (expected {expected})")?;
        }
        writeln!(f)?;
        for (i, step) in self.counterexample.iter().flatten().enumerate() {
            writeln!(f, "{:>4}. {step}", i + 1)?;
        }
        Ok(())
    }
}

/// Why a check stopped before exploring every reachable state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// [`Check::max_states`](super::Check::max_states) unique states were reached.
    StateLimit,
    /// [`Check::time_limit`](super::Check::time_limit) passed.
    TimeLimit,
    /// The process's resident memory passed [`Check::memory_limit`](super::Check::memory_limit).
    MemoryLimit,
    /// Nothing was explored: a constant exceeds [`DISCRETE_TICKS`](super::DISCRETE_TICKS), the
    /// discrete engine's limit, and the zone engine does not model the scenario (or custom
    /// invariants keep it out; [`Check::engine`](super::Check::engine) says why).
    DiscreteLimit,
}

impl From<Limit> for StopReason {
    fn from(limit: Limit) -> StopReason {
        match limit {
            Limit::States => StopReason::StateLimit,
            Limit::Time => StopReason::TimeLimit,
            Limit::Memory => StopReason::MemoryLimit,
        }
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopReason::StateLimit => f.write_str("state limit"),
            StopReason::TimeLimit => f.write_str("time limit"),
            StopReason::MemoryLimit => f.write_str("memory limit"),
            StopReason::DiscreteLimit => write!(
                f,
                "discrete engine's limit of {} ticks",
                super::DISCRETE_TICKS
            ),
        }
    }
}

/// The outcome of checking one scenario.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// The scenario's file.
    pub file: String,
    /// The scenario's name.
    pub name: String,
    /// The number of nodes checked.
    pub nodes: usize,
    /// The number of clients checked.
    pub clients: usize,
    /// Unique states explored, summed over the runs of the check: the verdict run, the
    /// breadth-first search for the shortest counterexample when an `always` property is
    /// violated, and the liveness run when `[expect]` names `eventually acquired`. A
    /// breadth-first probe that hands over to depth first is not counted: depth first
    /// explores its states again, and where the probe stops depends on timing.
    pub unique_states: usize,
    /// The longest path explored, in steps from the initial state, over the runs.
    pub max_depth: usize,
    /// Wall-clock seconds the check took.
    pub seconds: f64,
    /// Why the check stopped early, or `None` when it ran to completion. A stopped check
    /// reports [`Verdict::Incomplete`] for every property it could not settle.
    pub stopped: Option<StopReason>,
    /// Whether the safety run was settled by two clients standing for all of them (see
    /// [`RedlockModel::with_phantom_clients`](crate::model::RedlockModel::with_phantom_clients)): its counterexamples then show two clients,
    /// while the others never start.
    pub cutoff: bool,
    /// Whether the safety run was split (see [`RedlockModel::with_chaos_nodes`](crate::model::RedlockModel::with_chaos_nodes)): the storage
    /// properties held on nodes that answer anything, and the others were settled by the
    /// scenario's own model, or by its first two clients alone (see
    /// [`RedlockModel::with_fewer_clients`](crate::model::RedlockModel::with_fewer_clients): its counterexamples then show two clients).
    pub split: bool,
    /// Every property checked, in a fixed order.
    pub properties: Vec<PropertyReport>,
    /// The engine that settled the verdicts ([`Engine::Discrete`] or [`Engine::Zones`]; the
    /// JSON report names only the zone engine). With zones, `unique_states` counts symbolic
    /// states and a counterexample has no story yet.
    #[serde(skip_serializing_if = "Engine::is_discrete")]
    pub engine: Engine,
}

impl Report {
    /// Panics unless the property `name` was checked and holds, with its story as the
    /// message (see [`PropertyReport::assert_holds`]).
    #[track_caller]
    pub fn assert_holds(&self, name: &str) {
        match self.property(name) {
            Some(p) => p.assert_holds(),
            None => {
                let names: Vec<&str> = self.properties.iter().map(|p| p.name.as_str()).collect();
                panic!(
                    "{}: no property {name:?} (it has {})",
                    self.name,
                    names.join(", ")
                )
            }
        }
    }

    /// The report of `name`, if it was checked.
    pub fn property(&self, name: &str) -> Option<&PropertyReport> {
        self.properties.iter().find(|p| p.name == name)
    }

    /// Whether every property that `[expect]` names got the expected verdict.
    pub fn matches_expectations(&self) -> bool {
        self.properties
            .iter()
            .all(|p| p.expected.is_none_or(|e| e == p.verdict))
    }

    /// The properties whose settled verdict differs from `[expect]` (an incomplete verdict
    /// differs from nothing: it is not known yet).
    pub fn mismatches(&self) -> impl Iterator<Item = &PropertyReport> {
        self.properties.iter().filter(|p| {
            p.verdict != Verdict::Incomplete && p.expected.is_some_and(|e| e != p.verdict)
        })
    }

    /// Whether some property could not be settled because the check stopped at a limit.
    pub fn is_incomplete(&self) -> bool {
        self.properties
            .iter()
            .any(|p| p.verdict == Verdict::Incomplete)
    }
}
