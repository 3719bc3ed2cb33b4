//! What to check and how: the search strategy, limits, threads and progress.

use std::sync::Arc;
use std::time::Duration;

use super::engine::{DISCRETE_TICKS, Engine, largest_constant};

use crate::model::{Invariant, Mode, RedlockModel, World};
use crate::scenario::Scenario;
use crate::search::{Limits, Shell};
use crate::zones::{Unsupported, ZoneConfig};

/// How far a running check has come (for progress output on long runs).
#[derive(Clone, Copy, Debug)]
pub struct Progress<'a> {
    /// The scenario's name.
    pub name: &'a str,
    /// Unique states so far, over the runs of the check (as
    /// [`Report::unique_states`](super::Report::unique_states)).
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

/// A check of one scenario: the safety run, and the bounded liveness run when `[expect]`
/// names `eventually acquired`.
#[derive(Clone)]
pub struct Check {
    pub(super) scenario: Scenario,
    pub(super) invariants: Vec<Invariant>,
    pub(super) threads: usize,
    pub(super) symmetry: Option<bool>,
    pub(super) strategy: Strategy,
    pub(super) max_states: Option<usize>,
    pub(super) time_limit: Option<Duration>,
    pub(super) memory_limit: Option<u64>,
    pub(super) cutoff: bool,
    /// Whether the zone engine stores the union of two zones that is a zone (see
    /// [`Check::zone_merging`]).
    pub(super) zone_merging: bool,
    /// Whether the zone engine leaves untimed the keys whose expiry decides nothing (see
    /// [`Check::zone_dead_keys`]).
    pub(super) zone_dead_keys: bool,
    pub(super) probe_states: usize,
    pub(super) progress: Option<ProgressFn>,
    pub(super) progress_interval: Duration,
    /// The invariants read only what the fingerprint keeps (see [`Check::view_invariants`]).
    pub(super) view_invariants: bool,
    /// The zone engine's automaton when it settles this check (see [`Check::engine`]).
    pub(super) zones: Option<ZoneConfig>,
    /// Whether [`Check::run`] also settles each verdict's reach (see [`Check::reach`]).
    pub(super) reach: bool,
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
            zone_merging: true,
            zone_dead_keys: true,
            probe_states: DEFAULT_PROBE_STATES,
            progress: None,
            progress_interval: Duration::from_secs(1),
            view_invariants: false,
            zones: None,
            reach: true,
        }
        .with_automatic_engine()
    }

    /// The zone engine for a scenario whose constants the discrete engine should not face.
    fn with_automatic_engine(mut self) -> Check {
        if largest_constant(&self.scenario) > DISCRETE_TICKS {
            self.zones = ZoneConfig::from_scenario(&self.scenario).ok();
        }
        self
    }

    /// Chooses the engine (default [`Engine::Auto`]). [`Engine::Zones`] fails, naming what it
    /// lacks, on a scenario it does not model or a check with custom invariants (they read
    /// the discrete model's states).
    pub fn engine(mut self, engine: Engine) -> Result<Check, Unsupported> {
        self.zones = None;
        match engine {
            Engine::Auto if self.invariants.is_empty() => return Ok(self.with_automatic_engine()),
            Engine::Auto | Engine::Discrete => return Ok(self),
            Engine::Zones if !self.invariants.is_empty() => {
                return Err(Unsupported::Feature("custom invariants"));
            }
            Engine::Zones => self.zones = Some(ZoneConfig::from_scenario(&self.scenario)?),
        }
        Ok(self)
    }

    /// The engine [`Check::run`] will use: never [`Engine::Auto`].
    pub fn chosen_engine(&self) -> Engine {
        if self.zones.is_some() {
            Engine::Zones
        } else {
            Engine::Discrete
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

    /// Adds a user invariant (at most [`crate::model::MAX_USER_INVARIANTS`]). An invariant
    /// reads the discrete model's states, so the check runs the discrete engine.
    pub fn invariant(mut self, invariant: Invariant) -> Check {
        self.invariants.push(invariant);
        self.zones = None;
        self
    }

    /// Whether to settle each verdict's [`Reach`](super::reach::Reach) too (default on): the
    /// numbers of nodes and clients it is proved for, from one-node lemmas the checker runs
    /// after the verdicts (see [`crate::check::reach`](super::reach)). Off, every reach is
    /// [`Reach::CHECKED`](super::reach::Reach::CHECKED).
    pub fn reach(mut self, on: bool) -> Check {
        self.reach = on;
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
    /// properties not settled by then are [`Verdict::Incomplete`](crate::scenario::Verdict::Incomplete). The check may overshoot by
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
    /// answer anything ([`RedlockModel::with_chaos_nodes`], see
    /// [`Report::split`](super::Report::split)). Off for cross-checks: the verdicts must be
    /// the same.
    pub fn cutoff(mut self, on: bool) -> Check {
        self.cutoff = on;
        self
    }

    /// Whether the zone engine stores the union of a new zone and a stored one of the same
    /// discrete part in their place when that union is itself a zone, in a check and in a
    /// synthesis (default on; it adds no valuation, so no verdict and no region changes). Off
    /// for cross-checks and the baseline of a benchmark.
    pub fn zone_merging(mut self, on: bool) -> Check {
        self.zone_merging = on;
        self
    }

    /// Whether the zone engine gives a key's clock no constant once the key's expiry decides
    /// nothing a client reads: no client is still to begin, and every open round has all its
    /// answers (default on; no property reads a key, so no verdict changes, and a
    /// counterexample that such a zone does not replay is found again with it off). Off for
    /// cross-checks and the baseline of a benchmark.
    pub fn zone_dead_keys(mut self, on: bool) -> Check {
        self.zone_dead_keys = on;
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
        let zones = self
            .zones
            .as_ref()
            .and_then(|_| ZoneConfig::from_scenario(scenario).ok());
        Check {
            scenario: scenario.clone(),
            zones,
            ..self.clone()
        }
    }

    /// The safety model this check runs.
    pub fn model(&self) -> RedlockModel {
        self.build(Mode::Safety)
    }

    /// The shell every walk of this check runs under: its limits, and its progress told as
    /// [`Progress`].
    pub(super) fn shell(&self) -> Shell<'_> {
        let limits = Limits {
            max_states: self.max_states,
            time: self.time_limit,
            memory: self.memory_limit,
            progress_interval: self.progress_interval,
        };
        let progress = self.progress.as_ref().map(|progress| {
            Box::new(move |unique_states, seconds| {
                progress(Progress {
                    name: &self.scenario.name,
                    unique_states,
                    seconds,
                });
            }) as Box<dyn Fn(usize, f64) + '_>
        });
        Shell::new(limits, progress)
    }

    pub(super) fn build(&self, mode: Mode) -> RedlockModel {
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
}
