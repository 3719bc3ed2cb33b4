//! Run the checker on a scenario and get verdicts: the API behind `redlock-lab check` and the
//! one to call from your own `cargo test`.
//!
//! ```
//! use redlock_lab::check::{Check, Invariant};
//! use redlock_lab::scenario::{Scenario, Verdict};
//!
//! let scenario = Scenario::from_str("jump.toml", r#"
//!     name = "node-jump"
//!     title = "A node's clock jumps forward past the drift allowance"
//!     claim = "Redlock is unsafe when a node's clock jumps"
//!     source = "Kleppmann"
//!     prose = "n2 jumps +2 with drift 1."
//!     [lock]
//!     nodes = 3
//!     ttl_ticks = 4
//!     drift_ticks = 1
//!     [faults.clock_jumps]
//!     target = "node"
//!     jump_ticks = 2
//!     [expect]
//!     "mutual exclusion" = "violated"
//! "#)?;
//! let report = Check::new(&scenario)
//!     // Your own invariant over a read-only view of the state.
//!     .invariant(Invariant::new("at most one holder", |world| {
//!         world.clients().filter(|c| c.believes).count() <= 1
//!     }))
//!     .run();
//! assert!(report.matches_expectations());
//! let mutex = report.property("mutual exclusion").unwrap();
//! assert_eq!(mutex.verdict, Verdict::Violated);
//! let steps = mutex.counterexample.as_ref().unwrap();
//! assert!(steps.iter().any(|s| s.contains("clock jumps +2")));
//! assert_eq!(report.property("at most one holder").unwrap().verdict, Verdict::Violated);
//! # Ok::<(), redlock_lab::scenario::ScenarioError>(())
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use stateright::{Checker, Expectation, Model};

use crate::model::{Mode, RedlockModel, Step, World};
use crate::report::Story;
use crate::scenario::{Ingredient, Scenario, Verdict, property};

pub use crate::model::Invariant;

impl Invariant {
    /// A named invariant from a closure over the read-only state.
    pub fn new(
        name: &'static str,
        condition: impl Fn(&World) -> bool + Send + Sync + 'static,
    ) -> Invariant {
        Invariant {
            name,
            condition: Arc::new(condition),
        }
    }
}

/// One property's outcome.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PropertyReport {
    /// The property's name.
    pub name: String,
    /// What `[expect]` predicts, if it names the property.
    pub expected: Option<Verdict>,
    /// What the checker found.
    pub verdict: Verdict,
    /// The shortest counterexample (always, eventually) as step descriptions, or `None`.
    pub counterexample: Option<Vec<String>>,
    /// The same counterexample told as a story (see [`crate::report`]); not in the JSON
    /// report, whose `counterexample` field is the contract.
    #[serde(skip)]
    pub story: Option<Story>,
    /// The same counterexample as the model's steps (for "the story contains the fault");
    /// not in the JSON report.
    #[serde(skip)]
    pub steps: Option<Vec<Step>>,
    /// For a violated property, once computed ([`Check::run_with_causes`]): the ingredients
    /// without which it holds. `None` when not computed, or when the property holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub necessary: Option<Vec<Ingredient>>,
}

/// The outcome of checking one scenario.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// The scenario's file.
    pub file: String,
    /// The scenario's name.
    pub name: String,
    /// Unique states explored (both runs, when liveness is checked).
    pub unique_states: usize,
    /// Wall-clock seconds the check took.
    pub seconds: f64,
    /// Every property checked, in a fixed order.
    pub properties: Vec<PropertyReport>,
}

impl Report {
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

    /// The properties whose verdict differs from `[expect]`.
    pub fn mismatches(&self) -> impl Iterator<Item = &PropertyReport> {
        self.properties
            .iter()
            .filter(|p| p.expected.is_some_and(|e| e != p.verdict))
    }
}

/// How far a running check has come (for progress output on long runs).
#[derive(Clone, Copy, Debug)]
pub struct Progress<'a> {
    /// The scenario's name.
    pub name: &'a str,
    /// Unique states so far (in the current run).
    pub unique_states: usize,
    /// Seconds since the run started.
    pub seconds: f64,
}

impl Progress<'_> {
    /// Unique states per second so far.
    pub fn states_per_second(&self) -> f64 {
        self.unique_states as f64 / self.seconds.max(1e-9)
    }
}

/// A progress callback.
pub type ProgressFn = Arc<dyn Fn(Progress<'_>) + Send + Sync>;

/// A check of one scenario: the safety run, and the bounded liveness run when `[expect]`
/// names `eventually acquired`.
#[derive(Clone)]
pub struct Check {
    scenario: Scenario,
    invariants: Vec<Invariant>,
    threads: usize,
    symmetry: Option<bool>,
    depth_first: bool,
    progress: Option<ProgressFn>,
    progress_interval: Duration,
}

impl std::fmt::Debug for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Check")
            .field("scenario", &self.scenario.name)
            .field("invariants", &self.invariants)
            .field("threads", &self.threads)
            .field("symmetry", &self.symmetry)
            .field("depth_first", &self.depth_first)
            .finish()
    }
}

impl Check {
    /// A check of `scenario` on one thread (so that counterexamples are shortest).
    pub fn new(scenario: &Scenario) -> Check {
        Check {
            scenario: scenario.clone(),
            invariants: Vec::new(),
            threads: 1,
            symmetry: None,
            depth_first: false,
            progress: None,
            progress_interval: Duration::from_secs(1),
        }
    }

    /// Adds a user invariant (at most [`crate::model::MAX_USER_INVARIANTS`]).
    pub fn invariant(mut self, invariant: Invariant) -> Check {
        self.invariants.push(invariant);
        self
    }

    /// Checker threads (more threads: faster, but counterexamples may not be shortest).
    pub fn threads(mut self, threads: usize) -> Check {
        self.threads = threads.max(1);
        self
    }

    /// Searches depth first: about 20 bytes per state instead of BFS's hundreds, for
    /// configurations too large for breadth first; counterexamples are then not shortest.
    pub fn depth_first(mut self) -> Check {
        self.depth_first = true;
        self
    }

    /// Calls `progress` about once a second while a run takes longer than a second (the CLI
    /// prints it on stderr), or once per [`Check::progress_interval`].
    pub fn progress(mut self, progress: impl Fn(Progress<'_>) + Send + Sync + 'static) -> Check {
        self.progress = Some(Arc::new(progress));
        self
    }

    /// How often [`Check::progress`] is called while a run lasts (default one second; the
    /// CLI's terminal display uses 100 ms).
    pub fn progress_interval(mut self, interval: Duration) -> Check {
        self.progress_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// Overrides the scenario's symmetry setting.
    pub fn symmetry(mut self, on: bool) -> Check {
        self.symmetry = Some(on);
        self
    }

    /// The scenario this check runs.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// The same check (options, invariants, progress) on another scenario: the necessary-cause
    /// re-checks keep the caller's settings.
    pub fn on(&self, scenario: &Scenario) -> Check {
        Check {
            scenario: scenario.clone(),
            ..self.clone()
        }
    }

    /// The safety model this check runs.
    pub fn model(&self) -> RedlockModel {
        self.build(Mode::Safety)
    }

    fn build(&self, mode: Mode) -> RedlockModel {
        let mut model = RedlockModel::with_mode(&self.scenario, mode);
        if let Some(on) = self.symmetry {
            model = model.with_symmetry(on);
        }
        for invariant in &self.invariants {
            model = model.with_invariant(invariant.clone());
        }
        model
    }

    /// Runs the checker (breadth first unless [`Check::depth_first`]) to completion and collects the verdicts.
    pub fn run(&self) -> Report {
        let start = Instant::now();
        let mut properties = Vec::new();
        let mut unique_states = run_one(self.build(Mode::Safety), self, &mut properties);
        if self
            .scenario
            .expected(property::EVENTUALLY_ACQUIRED)
            .is_some()
        {
            unique_states += run_one(self.build(Mode::Liveness), self, &mut properties);
        }
        Report {
            file: self.scenario.file.clone(),
            name: self.scenario.name.clone(),
            unique_states,
            seconds: start.elapsed().as_secs_f64(),
            properties,
        }
    }
}

fn run_one(model: RedlockModel, check: &Check, out: &mut Vec<PropertyReport>) -> usize {
    let scenario = &check.scenario;
    let properties = model.properties();
    let builder = model.checker().threads(check.threads);
    if check.depth_first {
        let checker = wait(builder.spawn_dfs(), check);
        collect(&checker, &properties, scenario, out);
        checker.unique_state_count()
    } else {
        let checker = wait(builder.spawn_bfs(), check);
        collect(&checker, &properties, scenario, out);
        checker.unique_state_count()
    }
}

/// Joins the checker, reporting progress once per interval while it runs.
fn wait<C: Checker<RedlockModel>>(checker: C, check: &Check) -> C {
    if let Some(progress) = &check.progress {
        let start = Instant::now();
        let mut next_report = check.progress_interval;
        while !checker.is_done() {
            // Poll finely, so that a short run is not stretched to the polling period.
            std::thread::sleep(Duration::from_millis(5).min(check.progress_interval));
            if start.elapsed() >= next_report {
                next_report += check.progress_interval;
                progress(Progress {
                    name: &check.scenario.name,
                    unique_states: checker.unique_state_count(),
                    seconds: start.elapsed().as_secs_f64(),
                });
            }
        }
    }
    checker.join()
}

fn collect(
    checker: &impl Checker<RedlockModel>,
    properties: &[stateright::Property<RedlockModel>],
    scenario: &Scenario,
    out: &mut Vec<PropertyReport>,
) {
    let model = checker.model();
    for p in properties {
        let discovery = checker.discovery(p.name);
        let (verdict, counterexample, story, actions) = match (&p.expectation, discovery) {
            (&Expectation::Sometimes, Some(_)) => (Verdict::Holds, None, None, None),
            (&Expectation::Sometimes, None) => (Verdict::Violated, None, None, None),
            (_, None) => (Verdict::Holds, None, None, None),
            (_, Some(path)) => {
                let path = path.into_vec();
                let steps = path
                    .iter()
                    .filter_map(|(state, step)| step.map(|s| model.describe(state, &s)))
                    .collect();
                let actions = path.iter().filter_map(|(_, step)| *step).collect();
                let story = Story::from_path(model, p.name, &path);
                (Verdict::Violated, Some(steps), Some(story), Some(actions))
            }
        };
        out.push(PropertyReport {
            name: p.name.to_owned(),
            expected: scenario.expected(p.name),
            verdict,
            counterexample,
            story,
            steps: actions,
            necessary: None,
        });
    }
}

/// Checks `scenario` with the default options.
pub fn check(scenario: &Scenario) -> Report {
    Check::new(scenario).run()
}
