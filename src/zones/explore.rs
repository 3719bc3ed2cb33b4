//! The zone graph, breadth first, with a passed list that drops a zone included in one
//! already stored for the same discrete part (or, by default, LU-simulated by one).
//!
//! A symbolic state is a discrete part and a zone closed under delay (`up`), extrapolated by
//! Extra⁺_LU with the constants of its discrete part, and mapped to a symmetric image when the
//! configuration allows. Mutual exclusion is judged on the exact zone, before extrapolation.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

use crate::property::Property;
use crate::scenario::Verdict;

use super::concrete::{TimedRun, concretize};
use super::config::ZoneConfig;
use super::dbm::{Dbm, MAX_DIM, MAX_SYMBOLIC_DIM, SymbolicDbm};
use super::inequality::Inequality;
use super::replay::{Link, Witness, breaking_keys};
use super::state::Discrete;
use super::successors::ZoneStep;
use super::symmetry::Renaming;

/// Limits and switches of one exploration.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Use the node and client symmetry the configuration has.
    pub symmetry: bool,
    /// Drop a zone that a stored one LU-simulates (`Z ⊆ a_LU(Z')`), not only one it includes.
    pub simulation: bool,
    /// Stop after storing this many symbolic states.
    pub max_zones: usize,
    /// Stop after this long.
    pub time_limit: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            symmetry: true,
            simulation: true,
            max_zones: 50_000_000,
            time_limit: Duration::from_secs(600),
        }
    }
}

/// One property's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judgement {
    /// The property.
    pub property: Property,
    /// What the search found.
    pub verdict: Verdict,
    /// The steps to its first violation (breadth first: a shortest one in steps), with the
    /// clients and nodes named as in the run (not as in the symmetric images the search
    /// stored).
    pub counterexample: Option<Vec<ZoneStep>>,
    /// The same steps as a concrete run: each at the earliest time a run that still breaks
    /// the property can take it.
    pub run: Option<TimedRun>,
}

/// What one exploration found.
#[derive(Clone, Debug)]
pub struct ZoneOutcome {
    /// Every property the engine judged, in report order: mutual exclusion, the storage
    /// properties when the scenario has storage, `lock acquired`.
    pub judgements: Vec<Judgement>,
    /// Symbolic states expanded (each a discrete part and a zone; a zone that a larger one
    /// replaced before its turn is not counted).
    pub zones: usize,
    /// The longest path explored, in steps from the initial state.
    pub max_depth: usize,
    /// Symbolic states left in the passed list at the end.
    #[cfg_attr(
        not(feature = "testing"),
        allow(dead_code, reason = "tests/zones.rs reads it through `testing`")
    )]
    pub stored: usize,
    /// Distinct discrete parts among them.
    #[cfg_attr(
        not(feature = "testing"),
        allow(dead_code, reason = "tests/zones.rs reads it through `testing`")
    )]
    pub discrete: usize,
    /// Successor zones dropped because a stored zone included them.
    #[cfg_attr(
        not(feature = "testing"),
        allow(dead_code, reason = "tests/zones.rs reads it through `testing`")
    )]
    pub subsumed: usize,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// With symbolic parameters: the parameter values (as zones over the frozen dimensions
    /// alone) for which each property may break, none included in another of its property:
    /// an over-approximation (see [`super::synthesis`]). Empty otherwise.
    pub(crate) regions: Vec<(Property, SymbolicDbm)>,
    /// With symbolic parameters: values of the keys for which a run breaks each property,
    /// one system per path replayed (exact, see [`super::replay`]). Empty otherwise.
    pub(crate) breaking: Vec<(Property, Vec<Inequality>)>,
}

/// How many paths that break a property a symbolic search replays, at most, per property
/// (the shortest first).
const MAX_REPLAYS: usize = 256;

impl ZoneOutcome {
    /// The verdict on `property`, if the engine judged it.
    #[cfg_attr(
        not(feature = "testing"),
        allow(dead_code, reason = "tests/zones.rs reads it through `testing`")
    )]
    pub fn verdict(&self, property: Property) -> Option<Verdict> {
        self.judgement(property).map(|j| j.verdict)
    }

    /// The steps to `property`'s first violation, if it is violated.
    pub fn counterexample(&self, property: Property) -> Option<&[ZoneStep]> {
        self.judgement(property)?.counterexample.as_deref()
    }

    fn judgement(&self, property: Property) -> Option<&Judgement> {
        self.judgements.iter().find(|j| j.property == property)
    }

    /// Whether the search stopped at a limit before it settled every property.
    pub fn incomplete(&self) -> bool {
        self.judgements
            .iter()
            .any(|j| j.verdict == Verdict::Incomplete)
    }
}

/// The `always` properties the engine judges on `config`, in report order.
fn invariants(config: &ZoneConfig) -> Vec<Property> {
    let mut properties = vec![Property::MutualExclusion];
    if config.storage.is_some() {
        properties.extend([Property::StorageSafety, Property::NoLostUpdate]);
    }
    properties
}

struct Entry<const CAP: usize> {
    /// Replaced by a larger zone of the same discrete part: not expanded, not counted.
    covered: bool,
    state: Discrete,
    zone: Dbm<CAP>,
    parent: usize,
    /// The step from the parent, in the parent's names.
    step: Option<ZoneStep>,
    /// From this entry's names to the run's.
    names: Renaming,
    depth: usize,
}

/// The search's tables: every symbolic state stored, and the passed list by discrete part.
struct Search<'a, const CAP: usize> {
    config: &'a ZoneConfig,
    options: Options,
    entries: Vec<Entry<CAP>>,
    passed: HashMap<Discrete, Vec<usize>>,
    waiting: VecDeque<usize>,
    subsumed: usize,
    acquired: bool,
    /// Each `always` property judged, with where it first broke: the entry and the step
    /// from it.
    violations: Vec<(Property, Option<(usize, ZoneStep)>)>,
    /// With symbolic parameters, where each property may break (see [`ZoneOutcome`]).
    regions: Vec<(Property, SymbolicDbm)>,
    /// With symbolic parameters, for each distinct region a state broke a property in, the
    /// first path there (the shortest): the paths to replay.
    witnesses: Vec<(Property, Witness)>,
    /// The regions of `witnesses`.
    witnessed: HashSet<(Property, SymbolicDbm)>,
}

/// Explores the zone graph of `config` and judges mutual exclusion, the storage properties
/// (with storage) and `lock acquired`.
pub fn explore(config: &ZoneConfig, options: Options) -> ZoneOutcome {
    // A symbolic search's zones hold the parameters' forms too: a larger matrix, which the
    // concrete search does not pay for.
    if config.parameters.is_some() {
        search::<{ MAX_SYMBOLIC_DIM * MAX_SYMBOLIC_DIM }>(config, options)
    } else {
        search::<{ MAX_DIM * MAX_DIM }>(config, options)
    }
}

fn search<const CAP: usize>(config: &ZoneConfig, options: Options) -> ZoneOutcome {
    let started = Instant::now();
    let mut search = Search::<CAP> {
        config,
        options,
        entries: Vec::new(),
        passed: HashMap::new(),
        waiting: VecDeque::new(),
        subsumed: 0,
        acquired: false,
        violations: invariants(config).into_iter().map(|p| (p, None)).collect(),
        regions: Vec::new(),
        witnesses: Vec::new(),
        witnessed: HashSet::new(),
    };
    search.start();
    let mut successors = Vec::new();
    let mut expanded = 0;
    let mut stopped = false;
    while let Some(at) = search.waiting.pop_front() {
        if search.entries[at].covered {
            continue;
        }
        if expanded >= options.max_zones || started.elapsed() >= options.time_limit {
            stopped = true;
            break;
        }
        expanded += 1;
        successors.clear();
        let entry = &search.entries[at];
        entry.state.successors(config, &entry.zone, &mut successors);
        for (step, state, zone) in successors.drain(..) {
            search.add(at, step, state, zone);
            if search.all_violated() {
                break;
            }
        }
        if search.all_violated() {
            break;
        }
    }
    search.outcome(expanded, stopped, started)
}

impl<const CAP: usize> Search<'_, CAP> {
    /// Stores the initial state: every clock zero, then any delay.
    fn start(&mut self) {
        let config = self.config;
        let initial = Discrete::initial(config);
        let mut zone = match &config.parameters {
            Some(parameters) => parameters.initial_zone(config.clock_count()),
            None => Dbm::zero(config.clock_count()),
        };
        zone.up();
        initial.within_invariants(config, &mut zone);
        self.extrapolate(&initial, &mut zone);
        self.entries.push(Entry {
            covered: false,
            state: initial,
            zone,
            parent: usize::MAX,
            step: None,
            names: Renaming::IDENTITY,
            depth: 0,
        });
        self.passed.insert(initial, vec![0]);
        self.waiting.push_back(0);
    }

    /// Extra⁺_LU with the constants of `state`'s discrete part. Not with symbolic
    /// parameters: a bound there is a dimension, not a constant, and the automata it explores
    /// make each client's one attempt, so their zone graphs are finite without it.
    fn extrapolate(&self, state: &Discrete, zone: &mut Dbm<CAP>) {
        if self.config.parameters.is_none() {
            let (lower, upper) = state.lu_bounds(self.config);
            zone.extrapolate_lu(&lower, &upper);
        }
    }

    /// Notes the parameter values for which `zone`, reached from entry `at` by `step`,
    /// breaks each property, unless a region of that property already noted includes them.
    fn note_regions(&mut self, at: usize, step: ZoneStep, state: &Discrete, zone: &Dbm<CAP>) {
        let broken: Vec<(Property, Dbm<CAP>, Witness)> = invariants(self.config)
            .into_iter()
            .flat_map(|property| {
                let parts = state.broken(self.config, zone, property).into_iter();
                parts
                    .enumerate()
                    .map(move |(pair, part)| (property, part, Witness { at, step, pair }))
            })
            .collect();
        for (property, zone, witness) in broken {
            let region = zone.parameter_part();
            if self.witnessed.insert((property, region.clone())) {
                self.witnesses.push((property, witness));
            }
            let same = |p: &Property| *p == property;
            if self
                .regions
                .iter()
                .any(|(p, r)| same(p) && r.includes(&region))
            {
                continue;
            }
            self.regions
                .retain(|(p, r)| !(same(p) && region.includes(r)));
            self.regions.push((property, region));
        }
    }

    /// The stored states from the start to entry `at`.
    fn chain(&self, mut at: usize) -> Vec<Link<'_, CAP>> {
        let mut links = Vec::new();
        loop {
            let entry = &self.entries[at];
            links.push(Link {
                state: &entry.state,
                zone: &entry.zone,
                step: entry.step,
            });
            if entry.step.is_none() {
                break;
            }
            at = entry.parent;
        }
        links.reverse();
        links
    }

    /// For the first [`MAX_REPLAYS`] witnesses of each property, the keys for which a run
    /// of that path breaks it.
    fn breaking(&self) -> Vec<(Property, Vec<Inequality>)> {
        let mut replayed: HashMap<Property, usize> = HashMap::new();
        let mut out = Vec::new();
        for &(property, witness) in &self.witnesses {
            let count = replayed.entry(property).or_default();
            if *count == MAX_REPLAYS {
                continue;
            }
            *count += 1;
            let chain = self.chain(witness.at);
            let symmetry = self.options.symmetry;
            let systems = breaking_keys(self.config, symmetry, &chain, witness, property);
            out.extend(systems.into_iter().flatten().map(|keys| (property, keys)));
        }
        out
    }

    /// Whether every `always` property judged is already violated (nothing is left to find).
    fn all_violated(&self) -> bool {
        self.violations.iter().all(|(_, v)| v.is_some())
    }

    /// Notes each property that `(state, zone)` breaks for the first time, reached from
    /// entry `at` by `step`.
    fn judge(&mut self, at: usize, step: ZoneStep, state: &Discrete, zone: &Dbm<CAP>) {
        let config = self.config;
        if config.parameters.is_some() {
            // Every region is wanted, not the first: the search goes on everywhere.
            self.note_regions(at, step, state, zone);
            return;
        }
        for (property, violation) in &mut self.violations {
            if violation.is_some() {
                continue;
            }
            let breaks = match property {
                Property::MutualExclusion => state.breaks_mutual_exclusion(config, zone),
                Property::StorageSafety => state.breaks_storage_safety(),
                Property::NoLostUpdate => state.breaks_no_lost_update(),
                Property::LockAcquired | Property::EventuallyAcquired => false,
            };
            if breaks {
                *violation = Some((at, step));
            }
        }
    }

    /// Adds the successor of entry `at` by `step`, unless a stored zone covers it (or no
    /// valuation of it meets the invariants), noting the properties it breaks.
    fn add(&mut self, at: usize, step: ZoneStep, mut state: Discrete, mut zone: Dbm<CAP>) {
        let config = self.config;
        if !state.settle(config, &mut zone) {
            return;
        }
        if state.holders(config).next().is_some() {
            self.acquired = true;
        }
        self.judge(at, step, &state, &zone);
        if self.all_violated() {
            return;
        }
        self.extrapolate(&state, &mut zone);
        let (state, zone, renaming) = if self.options.symmetry {
            state.symmetric_image(config, &zone)
        } else {
            (state, zone, Renaming::IDENTITY)
        };
        if !self.store(state, &zone) {
            self.subsumed += 1;
            return;
        }
        let parent = &self.entries[at];
        let entry = Entry {
            covered: false,
            state,
            zone,
            parent: at,
            step: Some(step),
            names: parent.names.then(&renaming),
            depth: parent.depth + 1,
        };
        self.passed
            .entry(state)
            .or_default()
            .push(self.entries.len());
        self.waiting.push_back(self.entries.len());
        self.entries.push(entry);
    }

    /// Whether `(state, zone)` is new: no stored zone of `state` covers it. The stored zones
    /// it covers are retired (whatever they lead to, it does).
    fn store(&mut self, state: Discrete, zone: &Dbm<CAP>) -> bool {
        // The image names clocks differently: its constants, for the simulation test.
        let simulation = self.options.simulation && self.config.parameters.is_none();
        let bounds = simulation.then(|| state.lu_bounds(self.config));
        let covers = |big: &Dbm<CAP>, small: &Dbm<CAP>| match &bounds {
            Some((lower, upper)) => small.is_lu_simulated_by(big, lower, upper),
            None => big.includes(small),
        };
        let entries = &mut self.entries;
        let stored = self.passed.entry(state).or_default();
        if stored.iter().any(|&i| covers(&entries[i].zone, zone)) {
            return false;
        }
        stored.retain(|&i| {
            let smaller = covers(zone, &entries[i].zone);
            if smaller {
                entries[i].covered = true;
            }
            !smaller
        });
        true
    }

    /// The steps from the start to entry `at`, then `last`, in the run's names.
    fn path(&self, mut at: usize, last: ZoneStep) -> Vec<ZoneStep> {
        let mut steps = vec![last.renamed(&self.entries[at].names)];
        while let Some(step) = self.entries[at].step {
            at = self.entries[at].parent;
            steps.push(step.renamed(&self.entries[at].names));
        }
        steps.reverse();
        steps
    }

    fn outcome(&self, expanded: usize, stopped: bool, started: Instant) -> ZoneOutcome {
        // The search may have ended early because every invariant broke; then `lock
        // acquired` was not searched to the end.
        let cut_short = stopped || self.all_violated();
        let mut judgements: Vec<Judgement> = self
            .violations
            .iter()
            .map(|&(property, violation)| {
                let counterexample = violation.map(|(at, last)| self.path(at, last));
                let run = counterexample
                    .as_ref()
                    .and_then(|steps| concretize(self.config, steps, property));
                // With symbolic parameters: broken for some of their values.
                let somewhere = self.regions.iter().any(|(p, _)| *p == property);
                Judgement {
                    property,
                    verdict: match (violation, stopped) {
                        (Some(_), _) => Verdict::Violated,
                        // A symbolic search cut short may have more regions to find.
                        (None, true) => Verdict::Incomplete,
                        (None, false) if somewhere => Verdict::Violated,
                        (None, false) => Verdict::Holds,
                    },
                    counterexample,
                    run,
                }
            })
            .collect();
        judgements.push(Judgement {
            property: Property::LockAcquired,
            verdict: match (self.acquired, cut_short) {
                (true, _) => Verdict::Holds,
                (false, true) => Verdict::Incomplete,
                (false, false) => Verdict::Violated,
            },
            counterexample: None,
            run: None,
        });
        ZoneOutcome {
            judgements,
            zones: expanded,
            max_depth: self.entries.iter().map(|e| e.depth).max().unwrap_or(0),
            stored: self.passed.values().map(Vec::len).sum(),
            discrete: self.passed.len(),
            subsumed: self.subsumed,
            seconds: started.elapsed().as_secs_f64(),
            regions: self.regions.clone(),
            breaking: self.breaking(),
        }
    }
}
