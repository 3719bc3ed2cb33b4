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

mod bounded;
mod dfs;
mod memory;
mod story;
mod table;
#[cfg(test)]
mod truth;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;
use stateright::{Checker, Expectation, HasDiscoveries, Model, Path};

use crate::model::{Mode, RedlockModel, Step, World};
use crate::report::Story;
use crate::scenario::{Ingredient, Scenario, Verdict, property};

use bounded::Bounded;
use dfs::DepthFirst;

pub use crate::model::Invariant;
pub use memory::available_bytes;
pub use story::{Told, default_property, story, tell};

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
    /// For a violated property whose causes were computed: the ingredients whose re-check
    /// stopped at a limit before settling it, so whether they are necessary is not known
    /// (they are in neither list of [`crate::cause::sentence`]'s verdict).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub undetermined: Vec<Ingredient>,
}

/// Why a check stopped before exploring every reachable state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// [`Check::max_states`] unique states were reached.
    StateLimit,
    /// [`Check::time_limit`] passed.
    TimeLimit,
    /// The process's resident memory passed [`Check::memory_limit`].
    MemoryLimit,
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StopReason::StateLimit => "state limit",
            StopReason::TimeLimit => "time limit",
            StopReason::MemoryLimit => "memory limit",
        })
    }
}

/// The outcome of checking one scenario.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// The scenario's file.
    pub file: String,
    /// The scenario's name.
    pub name: String,
    /// Unique states explored, summed over the runs of the check: the verdict run, the
    /// breadth-first search for the shortest counterexample when an `always` property is
    /// violated, and the liveness run when `[expect]` names `eventually acquired`.
    pub unique_states: usize,
    /// The longest path explored, in steps from the initial state, over the runs.
    pub max_depth: usize,
    /// Wall-clock seconds the check took.
    pub seconds: f64,
    /// Why the check stopped early, or `None` when it ran to completion. A stopped check
    /// reports [`Verdict::Incomplete`] for every property it could not settle.
    pub stopped: Option<StopReason>,
    /// Whether the safety run was settled by two clients standing for all of them (see
    /// [`RedlockModel::with_phantom_clients`]): its counterexamples then show two clients,
    /// while the others never start.
    pub cutoff: bool,
    /// Whether the safety run was split (see [`RedlockModel::with_chaos_nodes`]): the storage
    /// properties held on nodes that answer anything, and the others were settled by the
    /// scenario's own model, or by its first two clients alone (see
    /// [`RedlockModel::with_fewer_clients`]: its counterexamples then show two clients).
    pub split: bool,
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

/// How far a running check has come (for progress output on long runs).
#[derive(Clone, Copy, Debug)]
pub struct Progress<'a> {
    /// The scenario's name.
    pub name: &'a str,
    /// Unique states so far, over the runs of the check (as [`Report::unique_states`]).
    pub unique_states: usize,
    /// Seconds since the check started.
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

/// How the safety run explores the state space.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Strategy {
    /// First a breadth-first probe on one thread of at most [`Check::probe_states`] states,
    /// which settles a small scenario on its own and finds shallow violations of a large one;
    /// then depth first on every checker thread, keeping one 8-byte fingerprint per state
    /// (14–17 bytes per state at peak on large runs), to settle every other verdict; then, for
    /// each `always` property violated only there, a breadth-first search on one thread,
    /// bounded to the depth at which the violation was found, for the shortest
    /// counterexample. Verdicts and counterexamples are those of [`Strategy::BreadthFirst`] on
    /// one thread.
    ///
    /// It is the default by measurement (two shared cores; `cargo bench --bench scale` prints
    /// the table). Memory, not time, is what stops a breadth-first check of a user-sized
    /// scenario: breadth first queues whole states, 460–990 bytes per state at peak on the
    /// small configurations, while depth first peaks at 14–17 bytes per state once past a
    /// million states (3 × 3, ttl 8: 10.8 million states in 159 MB), so a run that breadth
    /// first could not hold in 24 GB fits in about a gigabyte. Where no `always` property is
    /// violated depth first on two threads was also 1.2–2 times faster. Where one is, this
    /// strategy pays the depth-first run up to the first violation on top of a breadth-first
    /// search that stops where plain breadth first would have: on the catalog's violated
    /// scenarios 1.5–2.5 times plain breadth first, each under two seconds (the whole
    /// catalog: 21 s against 19 s, measured before the model's dead-node reduction), while
    /// the cost that matters, the large runs, is dominated by scenarios that hold.
    #[default]
    DepthFirst,
    /// Breadth first, queueing whole states: the shortest counterexample directly, in memory
    /// proportional to the states explored. On one thread this is the reference behaviour;
    /// on more threads the counterexample may not be shortest.
    BreadthFirst,
}

/// A check of one scenario: the safety run, and the bounded liveness run when `[expect]`
/// names `eventually acquired`.
#[derive(Clone)]
pub struct Check {
    scenario: Scenario,
    invariants: Vec<Invariant>,
    threads: usize,
    symmetry: Option<bool>,
    strategy: Strategy,
    max_states: Option<usize>,
    time_limit: Option<Duration>,
    memory_limit: Option<u64>,
    cutoff: bool,
    probe_states: usize,
    progress: Option<ProgressFn>,
    progress_interval: Duration,
    /// The invariants read only what the fingerprint keeps (see [`Check::view_invariants`]).
    view_invariants: bool,
}

impl std::fmt::Debug for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Check")
            .field("scenario", &self.scenario.name)
            .field("invariants", &self.invariants)
            .field("threads", &self.threads)
            .field("symmetry", &self.symmetry)
            .field("strategy", &self.strategy)
            .field("max_states", &self.max_states)
            .field("time_limit", &self.time_limit)
            .field("memory_limit", &self.memory_limit)
            .field("probe_states", &self.probe_states)
            .finish()
    }
}

/// How many states [`Strategy::DepthFirst`] first explores breadth first (see
/// [`Check::probe_states`]).
pub const DEFAULT_PROBE_STATES: usize = 100_000;

/// The number of threads the machine can run at once (one if unknown).
pub fn available_threads() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

impl Check {
    /// A check of `scenario` with the default [`Strategy`] on every core, without limits.
    pub fn new(scenario: &Scenario) -> Check {
        Check {
            scenario: scenario.clone(),
            invariants: Vec::new(),
            threads: available_threads(),
            symmetry: None,
            strategy: Strategy::default(),
            max_states: None,
            time_limit: None,
            memory_limit: None,
            cutoff: true,
            probe_states: DEFAULT_PROBE_STATES,
            progress: None,
            progress_interval: Duration::from_secs(1),
            view_invariants: false,
        }
    }

    /// Declares that the invariants read only what the fingerprint keeps of a state (the
    /// storage, each client's phase, pending op and lock epoch), so the reductions that a
    /// user invariant turns off (dead ghosts and dead nodes, `RedlockModel::with_invariant`)
    /// stay on: an invariant that is a function of the view is violated by a state exactly
    /// when it is violated by every state with the same fingerprint.
    pub(crate) fn view_invariants(mut self) -> Check {
        self.view_invariants = true;
        self
    }

    /// Adds a user invariant (at most [`crate::model::MAX_USER_INVARIANTS`]).
    pub fn invariant(mut self, invariant: Invariant) -> Check {
        self.invariants.push(invariant);
        self
    }

    /// Checker threads for the safety run (default: every core). Verdicts do not depend on
    /// it; counterexamples do not either under [`Strategy::DepthFirst`], whose search for the
    /// shortest one runs on one thread.
    pub fn threads(mut self, threads: usize) -> Check {
        self.threads = threads.max(1);
        self
    }

    /// How many states [`Strategy::DepthFirst`] explores breadth first on one thread before
    /// it goes depth first (default [`DEFAULT_PROBE_STATES`]; 0 skips the probe).
    ///
    /// Depth first can wander deep into a large state space long before it meets a violation
    /// that breadth first finds a few steps from the start. The probe settles every scenario
    /// of up to this many states on its own (breadth first on one thread: shortest
    /// counterexamples, no second run), and in a larger one it settles the properties it
    /// finds violated, with their shortest counterexamples; depth first then settles the
    /// rest. Verdicts and counterexamples do not depend on it.
    pub fn probe_states(mut self, states: usize) -> Check {
        self.probe_states = states;
        self
    }

    /// How the safety run explores (default [`Strategy::DepthFirst`]).
    pub fn strategy(mut self, strategy: Strategy) -> Check {
        self.strategy = strategy;
        self
    }

    /// Stops once `states` unique states were explored (over all runs of the check); the
    /// properties not settled by then are [`Verdict::Incomplete`]. The check may overshoot by
    /// what the threads explore in a few milliseconds.
    pub fn max_states(mut self, states: usize) -> Check {
        self.max_states = Some(states);
        self
    }

    /// Stops once `limit` has passed since [`Check::run`] began.
    pub fn time_limit(mut self, limit: Duration) -> Check {
        self.time_limit = Some(limit);
        self
    }

    /// Stops once this process's resident memory exceeds `bytes`, sampled every 50 ms from
    /// `/proc/self/status` (Linux; elsewhere the guard is off). The guard watches the whole
    /// process, so it also counts memory that other threads of the caller hold.
    pub fn memory_limit(mut self, bytes: u64) -> Check {
        self.memory_limit = Some(bytes);
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

    /// Whether a scenario may be settled by smaller models first (default on): two clients
    /// and phantom refusals for three or more alike clients
    /// ([`RedlockModel::with_phantom_clients`]), and the storage properties on nodes that
    /// answer anything ([`RedlockModel::with_chaos_nodes`], see [`Report::split`]). Off for
    /// cross-checks: the verdicts must be the same.
    pub fn cutoff(mut self, on: bool) -> Check {
        self.cutoff = on;
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
        if self.view_invariants && mode == Mode::Safety {
            model = model.with_exact_ghosts(false);
        }
        model
    }

    /// Runs the checker until every property is settled or a limit is reached, and collects
    /// the verdicts.
    pub fn run(&self) -> Report {
        let start = Instant::now();
        let mut run = Run {
            check: self,
            start,
            next_report: self.progress_interval,
            deadline: self.time_limit.map(|limit| start + limit),
            unique_states: 0,
            max_depth: 0,
            stopped: None,
        };
        let (mut properties, cutoff, split) = match run.cut_safety() {
            Some(settled) => (settled, true, false),
            None => match run.split_safety() {
                Some(settled) => (settled, false, true),
                None => (run.safety(self.build(Mode::Safety)), false, false),
            },
        };
        if self
            .scenario
            .expected(property::EVENTUALLY_ACQUIRED)
            .is_some()
        {
            properties.extend(run.liveness());
        }
        Report {
            file: self.scenario.file.clone(),
            name: self.scenario.name.clone(),
            unique_states: run.unique_states,
            max_depth: run.max_depth,
            seconds: start.elapsed().as_secs_f64(),
            stopped: run.stopped,
            properties,
            cutoff,
            split,
        }
    }
}

/// One [`Check::run`]: the budgets left and what the runs so far explored.
struct Run<'a> {
    check: &'a Check,
    start: Instant,
    /// When, counted from `start`, progress is next reported.
    next_report: Duration,
    deadline: Option<Instant>,
    unique_states: usize,
    max_depth: usize,
    stopped: Option<StopReason>,
}

/// What one checker run found, with the paths already rebuilt (so the checker and its
/// fingerprint table can be dropped before the next run starts).
struct Explored {
    /// The model the paths belong to (descriptions and stories read its shape).
    model: RedlockModel,
    discoveries: Vec<(&'static str, Path<World, Step>)>,
    stopped: Option<StopReason>,
    /// Whether the run was cut at its state budget (`Search::Probe`).
    cut: bool,
}

impl Explored {
    fn discovery(&self, name: &str) -> Option<&Path<World, Step>> {
        self.discoveries
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, path)| path)
    }
}

impl Run<'_> {
    /// The safety run with two clients and phantom refusals, when the cutoff applies and
    /// settles every property: an `always` property that holds, or whose shortest
    /// counterexample needs no refusal; `lock acquired` never reached (then no client can
    /// reach it), or reached and confirmed by a witness in the full model (a breadth-first
    /// search that stops at the first one). Anything else falls back to the full model
    /// (`None`); the states explored either way are counted.
    fn cut_safety(&mut self) -> Option<Vec<PropertyReport>> {
        let check = self.check;
        if !check.cutoff {
            return None;
        }
        let cut = check.build(Mode::Safety).with_phantom_clients()?;
        let reports = self.safety(cut);
        let settled = reports.iter().all(|r| {
            r.verdict != Verdict::Incomplete
                && !r.counterexample_not_shortest
                && !r
                    .steps
                    .as_ref()
                    .is_some_and(|steps| steps.iter().any(|s| matches!(s, Step::Refuse { .. })))
        });
        if !settled {
            return None;
        }
        let acquired = reports
            .iter()
            .any(|r| r.name == property::LOCK_ACQUIRED && r.verdict == Verdict::Holds);
        if acquired {
            let names = BTreeSet::from([property::LOCK_ACQUIRED]);
            let search = Search::Shortest {
                names,
                max_depth: 10_000,
            };
            let witness = self.explore(check.build(Mode::Safety), 1, search);
            witness.discovery(property::LOCK_ACQUIRED)?;
        }
        Some(reports)
    }

    /// The safety run of a scenario with three or more clients (which make the full model
    /// explode) split in two, when the storage properties hold on nodes that answer anything
    /// ([`RedlockModel::with_chaos_nodes`]): then they hold, and the other properties are
    /// settled without them, so that the search may stop as soon as those are, first on two
    /// clients ([`RedlockModel::with_fewer_clients`]), which settles a violation or a
    /// witness. `None` when the split does not apply or the storage properties do not
    /// hold there; the states explored are counted either way.
    fn split_safety(&mut self) -> Option<Vec<PropertyReport>> {
        let check = self.check;
        if !check.cutoff {
            return None;
        }
        let model = check.build(Mode::Safety);
        // With two clients the scenario's own model stays small, and its count stays the one
        // the Explorer shows.
        if model.client_count() < 3 {
            return None;
        }
        let chaos = model.with_chaos_nodes()?;
        let storage = self.safety(chaos);
        if storage.iter().any(|r| r.verdict != Verdict::Holds) {
            return None;
        }
        let lock = model.without_storage_properties();
        let mut others = None;
        if let Some(two) = lock.with_fewer_clients(2) {
            let reports = self.safety(two);
            // Only violations and witnesses carry over to more clients.
            let settled = reports.iter().all(|r| {
                let always = r.name != property::LOCK_ACQUIRED;
                (always && r.verdict == Verdict::Violated)
                    || (!always && r.verdict == Verdict::Holds)
            });
            if settled {
                // A run with more clients might break it in fewer steps.
                others = Some(
                    reports
                        .into_iter()
                        .map(|mut r| {
                            r.counterexample_not_shortest |= r.verdict == Verdict::Violated;
                            r
                        })
                        .collect(),
                );
            }
        }
        let others = match others {
            Some(others) => others,
            None => self.safety(lock),
        };
        let mut reports: Vec<PropertyReport> = others.into_iter().chain(storage).collect();
        let order: Vec<&str> = model.properties().iter().map(|p| p.name).collect();
        reports.sort_by_key(|r| order.iter().position(|name| *name == r.name));
        Some(reports)
    }

    fn safety(&mut self, model: RedlockModel) -> Vec<PropertyReport> {
        let check = self.check;
        let properties = model.properties();
        let always: BTreeSet<&'static str> = properties
            .iter()
            .filter(|p| p.expectation == Expectation::Always)
            .map(|p| p.name)
            .collect();
        let mut probe = None;
        if check.strategy == Strategy::DepthFirst && check.probe_states > 0 {
            let budget = check
                .max_states
                .map_or(check.probe_states, |max| max.min(check.probe_states));
            let mut explored = self.explore(model.fresh(), 1, Search::Probe { max_states: budget });
            let all_found = properties
                .iter()
                .all(|p| explored.discovery(p.name).is_some());
            if explored.cut && check.max_states.is_some_and(|max| max <= budget) {
                // The probe used the whole state limit: depth first would stop at once.
                explored.stopped = Some(StopReason::StateLimit);
                self.stopped = self.stopped.or(explored.stopped);
            }
            // Exhausted within the budget, stopped by a limit, or every property already
            // found: breadth first on one thread has settled everything it can.
            if !explored.cut || explored.stopped.is_some() || all_found {
                return self.reports(&properties, &explored, Some(&explored));
            }
            probe = Some(explored);
        }
        let verdicts = match check.strategy {
            Strategy::BreadthFirst => self.explore(model, check.threads, Search::BreadthFirst),
            Strategy::DepthFirst => self.explore(model, check.threads, Search::DepthFirst),
        };
        let mut shortest = probe;
        let violated: BTreeSet<&'static str> = always
            .iter()
            .copied()
            .filter(|name| verdicts.discovery(name).is_some())
            .filter(|name| {
                shortest
                    .as_ref()
                    .is_none_or(|probe| probe.discovery(name).is_none())
            })
            .collect();
        if check.strategy == Strategy::DepthFirst && !violated.is_empty() {
            // Depth first found a violation but maybe not the shortest: breadth first on one
            // thread finds the same counterexample plain breadth first would (the model's
            // `always` conditions keep the first violating state, and one thread visits states
            // in the same order), and the depth-first path bounds how deep it has to go.
            let depth = violated
                .iter()
                .filter_map(|name| verdicts.discovery(name))
                .map(|path| path.clone().into_actions().len())
                .max()
                .unwrap_or(0);
            // stateright counts the initial state as depth 1 and skips states at the target.
            let search = Search::Shortest {
                names: violated.clone(),
                max_depth: depth + 2,
            };
            let found = self.explore(verdicts.model.fresh(), 1, search);
            // Keep the probe's counterexamples, add the new ones.
            shortest = Some(match shortest {
                Some(mut probe) => {
                    probe.discoveries.extend(
                        found
                            .discoveries
                            .into_iter()
                            .filter(|(name, _)| violated.contains(name)),
                    );
                    probe
                }
                None => found,
            });
        } else if check.strategy == Strategy::BreadthFirst {
            // Plain breadth first: its own paths are the shortest.
            return self.reports(&properties, &verdicts, Some(&verdicts));
        }
        self.reports(&properties, &verdicts, shortest.as_ref())
    }

    /// The reports for `properties` from the run that settled them (`verdicts`) and the
    /// breadth-first run that holds their shortest counterexamples, if any.
    fn reports(
        &self,
        properties: &[stateright::Property<RedlockModel>],
        verdicts: &Explored,
        shortest: Option<&Explored>,
    ) -> Vec<PropertyReport> {
        let mut reports = Vec::new();
        for p in properties {
            // A property the probe settled stays settled when depth first stops at a limit.
            let discovered = verdicts
                .discovery(p.name)
                .or_else(|| shortest.and_then(|s| s.discovery(p.name)));
            let report = match (&p.expectation, discovered) {
                (Expectation::Sometimes, Some(_)) => self.settled(p.name, Verdict::Holds),
                (_, None) if verdicts.stopped.is_some() => {
                    self.settled(p.name, Verdict::Incomplete)
                }
                (Expectation::Sometimes, None) => self.settled(p.name, Verdict::Violated),
                (_, None) => self.settled(p.name, Verdict::Holds),
                (_, Some(path)) => match shortest.and_then(|s| s.discovery(p.name)) {
                    Some(short) => self.violated(&verdicts.model, p.name, short, false),
                    // The search for the shortest was stopped by a limit.
                    None => self.violated(&verdicts.model, p.name, path, true),
                },
            };
            reports.push(report);
        }
        reports
    }

    fn liveness(&mut self) -> Vec<PropertyReport> {
        // Breadth first on one thread, as it always was: the run is bounded by the horizon
        // and small, and stateright's `eventually` is judged at terminal states, which depth
        // first on several threads would reach in a different order.
        let model = self.check.build(Mode::Liveness);
        let properties = model.properties();
        let explored = self.explore(model, 1, Search::BreadthFirst);
        properties
            .iter()
            .map(|p| match explored.discovery(p.name) {
                Some(path) => self.violated(&explored.model, p.name, path, false),
                None if explored.stopped.is_some() => self.settled(p.name, Verdict::Incomplete),
                None => self.settled(p.name, Verdict::Holds),
            })
            .collect()
    }

    fn settled(&self, name: &str, verdict: Verdict) -> PropertyReport {
        PropertyReport {
            name: name.to_owned(),
            expected: self.check.scenario.expected(name),
            verdict,
            counterexample: None,
            counterexample_not_shortest: false,
            story: None,
            steps: None,
            necessary: None,
            undetermined: Vec::new(),
        }
    }

    fn violated(
        &self,
        model: &RedlockModel,
        name: &str,
        path: &Path<World, Step>,
        not_shortest: bool,
    ) -> PropertyReport {
        let path = path.clone().into_vec();
        let steps = model.describe_path(&path);
        let actions = path.iter().filter_map(|(_, step)| *step).collect();
        let mut story = Story::from_path(model, name, &path);
        if not_shortest {
            story.chosen = Some("a counterexample, maybe not the shortest".to_owned());
        }
        PropertyReport {
            steps: Some(actions),
            counterexample: Some(steps),
            counterexample_not_shortest: not_shortest,
            story: Some(story),
            ..self.settled(name, Verdict::Violated)
        }
    }

    /// Runs one checker over `model` under the check's limits, and collects its discoveries.
    fn explore(&mut self, model: RedlockModel, threads: usize, search: Search) -> Explored {
        let stop = Arc::new(AtomicBool::new(false));
        let model = Bounded::new(model, stop.clone());
        let builder = match search {
            // Depth first is the crate's own engine; the rest are stateright's.
            Search::DepthFirst => {
                let explored = self.watch(DepthFirst::spawn(model, threads), &stop, None);
                return self.stopped_by(explored);
            }
            _ => model.checker().threads(threads),
        };
        let explored = match search {
            Search::DepthFirst => unreachable!("started above"),
            Search::BreadthFirst => self.watch(builder.spawn_bfs(), &stop, None),
            // Not stateright's `target_state_count`, which counts generated successors, not
            // unique states.
            Search::Probe { max_states } => {
                self.watch(builder.spawn_bfs(), &stop, Some(max_states))
            }
            Search::Shortest { names, max_depth } => self.watch(
                builder
                    .finish_when(HasDiscoveries::AllOf(names))
                    .target_max_depth(max_depth)
                    .spawn_bfs(),
                &stop,
                None,
            ),
        };
        self.stopped_by(explored)
    }

    /// Records why `explored` stopped, if it did, as the check's reason.
    fn stopped_by(&mut self, explored: Explored) -> Explored {
        self.stopped = self.stopped.or(explored.stopped);
        explored
    }

    /// Joins `checker`, reporting progress and enforcing the limits while it runs; with
    /// `cut_at`, the run is also cut (not stopped: nothing is incomplete because of it) once it
    /// has that many unique states.
    fn watch<R: Running>(
        &mut self,
        checker: R,
        stop: &AtomicBool,
        cut_at: Option<usize>,
    ) -> Explored {
        let check = self.check;
        let start = Instant::now();
        let budget = check
            .max_states
            .map(|max| max.saturating_sub(self.unique_states));
        let mut cut = false;
        let watching = check.progress.is_some()
            || cut_at.is_some()
            || budget.is_some()
            || self.deadline.is_some()
            || check.memory_limit.is_some();
        let mut stopped = None;
        // Eventually discoveries taken before the stop: after it, states whose successors were
        // cut off look terminal, and stateright would report false `eventually` violations.
        let mut before_stop: Option<Vec<(&'static str, Path<World, Step>)>> = None;
        if watching {
            let poll = Duration::from_millis(5).min(check.progress_interval);
            let mut next_memory_sample = Duration::ZERO;
            while !checker.is_done() {
                // Poll finely, so that a short run is not stretched to the polling period.
                std::thread::sleep(poll);
                let elapsed = start.elapsed();
                // The cadence runs from the check's start, not this run's: a check made of
                // several short runs is still reported once per interval.
                if let Some(progress) = &check.progress
                    && self.start.elapsed() >= self.next_report
                {
                    self.next_report += check.progress_interval;
                    progress(Progress {
                        name: &check.scenario.name,
                        unique_states: self.unique_states + checker.unique_state_count(),
                        seconds: self.start.elapsed().as_secs_f64(),
                    });
                }
                if stopped.is_some() || cut {
                    continue;
                }
                if cut_at.is_some_and(|at| checker.unique_state_count() >= at) {
                    cut = true;
                    stop.store(true, Ordering::Relaxed);
                    continue;
                }
                if budget.is_some_and(|b| checker.unique_state_count() >= b) {
                    stopped = Some(StopReason::StateLimit);
                } else if self.deadline.is_some_and(|d| Instant::now() >= d) {
                    stopped = Some(StopReason::TimeLimit);
                } else if let Some(limit) = check.memory_limit
                    && elapsed >= next_memory_sample
                {
                    next_memory_sample = elapsed + Duration::from_millis(50);
                    if memory::resident_bytes().is_some_and(|rss| rss > limit) {
                        stopped = Some(StopReason::MemoryLimit);
                    }
                }
                if stopped.is_some() {
                    before_stop = Some(checker.eventually_discovered());
                    // From now on no state has successors: the threads drain what they hold
                    // (checking it, so those verdicts stay sound) and finish.
                    stop.store(true, Ordering::Relaxed);
                }
            }
        }
        let ran = checker.finish(stop);
        self.unique_states += ran.unique_states;
        self.max_depth = self.max_depth.max(ran.max_depth.saturating_sub(1));
        let mut discoveries = ran.discoveries;
        if before_stop.is_some() {
            discoveries.retain(|(name, _)| !ran.eventually.contains(name));
        }
        discoveries.extend(before_stop.unwrap_or_default());
        Explored {
            model: ran.model,
            discoveries,
            stopped,
            cut,
        }
    }
}

/// What a finished checker run found, its paths rebuilt.
struct Ran {
    model: RedlockModel,
    unique_states: usize,
    /// stateright's count: an initial state has depth 1.
    max_depth: usize,
    discoveries: Vec<(&'static str, Path<World, Step>)>,
    /// The names of the model's `eventually` properties.
    eventually: Vec<&'static str>,
}

/// A checker run in progress, as [`Run::watch`] sees it: stateright's checkers, and the
/// crate's own depth-first engine.
trait Running {
    fn is_done(&self) -> bool;
    fn unique_state_count(&self) -> usize;
    /// The `eventually` properties found so far, with their paths.
    fn eventually_discovered(&self) -> Vec<(&'static str, Path<World, Step>)>;
    /// Waits for the run's threads, turns `stop` off again (paths are rebuilt by replaying the
    /// model's actions, which the switch would hide) and collects what the run found.
    fn finish(self, stop: &AtomicBool) -> Ran;
}

impl<C: Checker<Bounded>> Running for C {
    fn is_done(&self) -> bool {
        Checker::is_done(self)
    }

    fn unique_state_count(&self) -> usize {
        Checker::unique_state_count(self)
    }

    fn eventually_discovered(&self) -> Vec<(&'static str, Path<World, Step>)> {
        self.model()
            .properties()
            .iter()
            .filter(|p| p.expectation == Expectation::Eventually)
            .filter_map(|p| self.discovery(p.name).map(|path| (p.name, path)))
            .collect()
    }

    fn finish(self, stop: &AtomicBool) -> Ran {
        let checker = self.join();
        stop.store(false, Ordering::Relaxed);
        let properties = checker.model().properties();
        Ran {
            model: checker.model().inner().clone(),
            unique_states: checker.unique_state_count(),
            max_depth: checker.max_depth(),
            discoveries: properties
                .iter()
                .filter_map(|p| checker.discovery(p.name).map(|path| (p.name, path)))
                .collect(),
            eventually: properties
                .iter()
                .filter(|p| p.expectation == Expectation::Eventually)
                .map(|p| p.name)
                .collect(),
        }
    }
}

impl Running for DepthFirst<Bounded> {
    fn is_done(&self) -> bool {
        DepthFirst::is_done(self)
    }

    fn unique_state_count(&self) -> usize {
        DepthFirst::unique_state_count(self)
    }

    fn eventually_discovered(&self) -> Vec<(&'static str, Path<World, Step>)> {
        // The engine refuses `eventually` properties.
        Vec::new()
    }

    fn finish(self, stop: &AtomicBool) -> Ran {
        let finished = self.join();
        stop.store(false, Ordering::Relaxed);
        let properties = finished.model().properties();
        Ran {
            model: finished.model().inner().clone(),
            unique_states: finished.unique_states,
            max_depth: finished.max_depth,
            discoveries: properties
                .iter()
                .filter_map(|p| finished.discovery(p.name).map(|path| (p.name, path)))
                .collect(),
            eventually: Vec::new(),
        }
    }
}

/// Which stateright checker one run uses.
enum Search {
    DepthFirst,
    BreadthFirst,
    /// Breadth first on one thread until every property has a discovery or `max_states`
    /// states are explored.
    Probe {
        max_states: usize,
    },
    /// Breadth first on one thread until every named property has a counterexample, never
    /// deeper than `max_depth` (stateright's count: the initial state is depth 1).
    Shortest {
        names: BTreeSet<&'static str>,
        max_depth: usize,
    },
}

/// Checks `scenario` with the default options.
pub fn check(scenario: &Scenario) -> Report {
    Check::new(scenario).run()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(name: &str) -> Scenario {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("models")
            .join(format!("{name}.toml"));
        Scenario::load(path).expect("a valid catalog scenario")
    }

    #[test]
    fn a_check_stopped_at_the_state_limit_never_says_holds() {
        // 21 709 states when exhausted, and mutual exclusion holds.
        let report = Check::new(&load("redlock-fault-free-five-nodes"))
            .max_states(1000)
            .run();
        assert_eq!(report.stopped, Some(StopReason::StateLimit));
        assert!(report.unique_states >= 1000 && report.unique_states < 21_709);
        assert!(report.max_depth > 0);
        let mutex = report.property(property::MUTUAL_EXCLUSION).unwrap();
        assert_eq!(mutex.verdict, Verdict::Incomplete);
        assert!(report.is_incomplete());
        assert_eq!(report.mismatches().count(), 0, "unknown is not a mismatch");
        assert!(!report.matches_expectations());
    }

    #[test]
    fn the_probe_changes_no_verdict_and_no_counterexample() {
        // Mutual exclusion violated, the storage properties hold (9 661 states); everything
        // holds (21 709 states). Probes that settle nothing, some or all of it.
        for name in [
            "fencing-token-survives-node-clock-jump",
            "redlock-fault-free-five-nodes",
        ] {
            let scenario = load(name);
            let reference = Check::new(&scenario)
                .strategy(Strategy::BreadthFirst)
                .threads(1)
                .run();
            for probe in [0, 100, 8_000, DEFAULT_PROBE_STATES] {
                let report = Check::new(&scenario).probe_states(probe).run();
                assert_eq!(
                    report.properties, reference.properties,
                    "{name}, probe {probe}"
                );
            }
        }
    }

    #[test]
    fn a_violation_the_probe_found_stays_violated_at_the_state_limit() {
        let scenario = load("fencing-token-survives-node-clock-jump");
        // One search of the scenario's own model: the split would settle the storage
        // properties on nodes that answer anything first.
        let full = Check::new(&scenario).cutoff(false).run();
        // Breadth first reaches the jump's violation after about 5 400 of 9 661 states.
        let report = Check::new(&scenario).cutoff(false).max_states(8_000).run();
        assert_eq!(report.stopped, Some(StopReason::StateLimit));
        let mutex = report.property(property::MUTUAL_EXCLUSION).unwrap();
        assert_eq!(
            Some(mutex),
            full.property(property::MUTUAL_EXCLUSION),
            "the probe's counterexample is the shortest"
        );
        let storage = report.property(property::STORAGE_SAFETY).unwrap();
        assert_eq!(storage.verdict, Verdict::Incomplete);
    }

    #[test]
    fn a_violation_found_before_the_stop_stays_violated() {
        // Mutual exclusion holds here and both storage properties are violated: the
        // depth-first run exhausts the state space, then the search for the shortest
        // counterexamples starts with a budget of ten states, far too few to reach them.
        // The scenario's own model only (the split's first run would spend the budget).
        let scenario = load("synchronous-bounds-margin-2");
        let full = Check::new(&scenario).threads(1).cutoff(false).run();
        let depth_first = Check::new(&scenario)
            .model()
            .checker()
            .spawn_dfs()
            .join()
            .unique_state_count();
        let report = Check::new(&scenario)
            .threads(1)
            .cutoff(false)
            .probe_states(0)
            .max_states(depth_first + 10)
            .run();
        assert!(!report.is_incomplete(), "every verdict was settled");
        for (p, reference) in report.properties.iter().zip(&full.properties) {
            assert_eq!(p.verdict, reference.verdict, "{}", p.name);
        }
        let storage = report.property(property::STORAGE_SAFETY).unwrap();
        assert_eq!(storage.verdict, Verdict::Violated);
        let steps = storage.counterexample.as_ref().expect("a counterexample");
        if report.stopped.is_some() {
            // The depth-first path: real, and no shorter than the shortest.
            assert!(storage.counterexample_not_shortest);
            let shortest = full.property(property::STORAGE_SAFETY).unwrap();
            assert!(steps.len() >= shortest.counterexample.as_ref().unwrap().len());
        } else {
            assert_eq!(report.properties, full.properties);
        }
    }

    #[test]
    fn a_stopped_liveness_run_is_incomplete_never_a_false_violation() {
        // States whose successors a stop cut off look terminal to stateright, which would
        // report `eventually` violated there; the check must not.
        let scenario = load("redlock-fault-free-liveness");
        let full = Check::new(&scenario).run();
        let eventually = full.property(property::EVENTUALLY_ACQUIRED).unwrap();
        assert_eq!(eventually.verdict, Verdict::Holds);
        let safety = Check::new(&scenario).model().checker().spawn_dfs().join();
        let liveness_states = full.unique_states - safety.unique_state_count();
        for budget in [1, liveness_states / 4, liveness_states / 2] {
            let report = Check::new(&scenario)
                .max_states(safety.unique_state_count() + budget)
                .run();
            let p = report.property(property::EVENTUALLY_ACQUIRED).unwrap();
            assert_ne!(p.verdict, Verdict::Violated, "budget {budget}");
            if report.stopped.is_some() {
                assert_eq!(p.verdict, Verdict::Incomplete, "budget {budget}");
            }
            let mutex = report.property(property::MUTUAL_EXCLUSION).unwrap();
            assert_eq!(
                mutex.verdict,
                Verdict::Holds,
                "the safety run finished first"
            );
        }
    }

    #[test]
    fn a_memory_limit_below_the_process_stops_the_check() {
        let report = Check::new(&load("redlock-fault-free-five-nodes"))
            .memory_limit(1)
            .run();
        if memory::resident_bytes().is_some() {
            assert_eq!(report.stopped, Some(StopReason::MemoryLimit));
            assert!(report.is_incomplete());
        }
    }

    #[test]
    fn verdicts_do_not_depend_on_threads() {
        let scenario = load("synchronous-bounds-margin-2");
        let one = Check::new(&scenario).threads(1).run();
        let two = Check::new(&scenario).threads(2).run();
        assert_eq!(one.properties, two.properties);
        assert!(
            one.properties
                .iter()
                .filter(|p| p.verdict == Verdict::Violated)
                .all(|p| !p.counterexample_not_shortest)
        );
    }
}
