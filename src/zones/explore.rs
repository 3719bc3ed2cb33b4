//! The zone graph, breadth first, with a passed list that drops a zone included in one
//! already stored for the same discrete part (or, by default, LU-simulated by one), and, by
//! default, stores the union of a new zone and a stored one when that union is a zone.
//!
//! Merging is what keeps five masters small: the keys a round sets on independent nodes
//! make one zone per order of arrival (`0 ≤ y_a ≤ y_b ≤ x` and `0 ≤ y_b ≤ y_a ≤ x`), and
//! their union is one zone. It adds no valuation ([`Dbm::convex_union`] is exact), so the
//! reachable valuations are those of the search without it, and every verdict with them; a
//! union keeps the path of one of its zones, so a counterexample that does not replay along
//! it is found again by a search that does not merge (`retrace`).
//!
//! A symbolic state is a discrete part and a zone closed under delay (`up`), mapped to a
//! symmetric image when the configuration allows. A concrete search's zones are extrapolated
//! by Extra⁺_LU with the constants of the discrete part (mutual exclusion is judged on the
//! exact zone, before extrapolation); a symbolic search's parametric zones are neither
//! extrapolated nor LU-simulated, and its states note the values of the keys for which they
//! break each property.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

use crate::property::Property;
use crate::scenario::Verdict;

use super::automaton::ZoneConfig;
use super::dbm::Dbm;
use super::discrete::Discrete;
use super::inequality::Inequality;
use super::parametric::{Affine, ParametricZone, Region};
use super::successors::ZoneStep;
use super::symmetry::Renaming;
use super::timed_run::{TimedRun, concretize};
use super::zone::Zone;

/// Limits and switches of one exploration.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Use the node and client symmetry the configuration has.
    pub symmetry: bool,
    /// Drop a zone that a stored one LU-simulates (`Z ⊆ a_LU(Z')`), not only one it includes.
    pub simulation: bool,
    /// Store the union of a new zone and a stored one of the same discrete part in their
    /// place when that union is itself a zone (a concrete search only).
    pub merging: bool,
    /// Give a key's clock no constant once its expiry decides nothing a client reads
    /// (`Discrete::deciding_keys`; a concrete search only): Extra⁺_LU then forgets when
    /// those keys expire, which otherwise splits each part into a zone per order of expiries.
    pub dead_keys: bool,
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
            merging: true,
            dead_keys: true,
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
    /// The steps to its first violation (breadth first: a short one in steps, though a
    /// merged zone on its way may make it longer than the shortest), with the
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
    /// Wall-clock seconds.
    pub seconds: f64,
    /// With symbolic parameters: for each property, the values of the keys for which a
    /// state breaks it, one system of inequalities per distinct region a breaking state
    /// stands for (exact, see [`super::parametric`]). Empty otherwise.
    pub(crate) regions: Vec<(Property, Vec<Inequality>)>,
}

impl ZoneOutcome {
    /// The steps to `property`'s first violation, if it is violated.
    #[cfg_attr(
        not(feature = "testing"),
        allow(dead_code, reason = "tests/zones.rs reads it through `testing`")
    )]
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

/// A zone a search stores: a concrete one, extrapolated and compared by LU simulation, or a
/// parametric one, which stands for every value of the free keys and is compared by
/// inclusion.
trait Stored: Zone {
    /// Every clock zero (for each value of the keys in their domain).
    fn start(config: &ZoneConfig) -> Self;
    /// Extra⁺_LU with `state`'s constants (a parametric zone has no constants: its automata
    /// make each client's one attempt, so their zone graphs are finite without it), the dead
    /// keys' untimed with `dead_keys`.
    fn extrapolate(&mut self, config: &ZoneConfig, state: &Discrete, dead_keys: bool);
    /// Whether `self` covers `small`: LU-simulates it with `bounds`, or includes it.
    fn covers(&self, small: &Self, bounds: Option<&(Vec<i32>, Vec<i32>)>) -> bool;
    /// The values of the keys the zone stands for (`None`: a concrete zone).
    fn region(&self) -> Option<&Region>;
    /// `self ∪ other` when that union is itself a zone (a parametric one: at every value of
    /// their region, as far as the region tells).
    fn union(&self, other: &Self) -> Option<Self>;
    /// Frees what a retired zone holds: a covered entry's path is read again, its zone never.
    fn retire(&mut self);
}

impl Stored for Dbm {
    fn start(config: &ZoneConfig) -> Self {
        Dbm::zero(config.clock_count())
    }

    fn extrapolate(&mut self, config: &ZoneConfig, state: &Discrete, dead_keys: bool) {
        let (lower, upper) = state.lu_bounds(config, dead_keys);
        self.extrapolate_lu(&lower, &upper);
    }

    fn covers(&self, small: &Self, bounds: Option<&(Vec<i32>, Vec<i32>)>) -> bool {
        match bounds {
            Some((lower, upper)) => small.is_lu_simulated_by(self, lower, upper),
            None => self.includes(small),
        }
    }

    fn region(&self) -> Option<&Region> {
        None
    }

    fn union(&self, other: &Self) -> Option<Self> {
        self.convex_union(other)
    }

    fn retire(&mut self) {
        self.forget();
    }
}

impl Stored for ParametricZone {
    fn start(config: &ZoneConfig) -> Self {
        let parameters = config.parameters.as_ref().expect("a symbolic search");
        let dimensions = parameters
            .dimensions
            .iter()
            .map(|coefficients| Affine::of(coefficients, 0))
            .collect();
        let keys = parameters.keys.len();
        let domain = parameters.domain.clone();
        ParametricZone::zero(config.clock_count(), dimensions, keys, domain)
    }

    fn extrapolate(&mut self, _: &ZoneConfig, _: &Discrete, _: bool) {}

    fn covers(&self, small: &Self, _: Option<&(Vec<i32>, Vec<i32>)>) -> bool {
        self.includes(small)
    }

    fn region(&self) -> Option<&Region> {
        Some(ParametricZone::region(self))
    }

    fn union(&self, other: &Self) -> Option<Self> {
        self.convex_union(other)
    }

    fn retire(&mut self) {
        self.forget();
    }
}

struct Entry<Z> {
    /// Replaced by a larger zone of the same discrete part: not expanded, not counted.
    covered: bool,
    /// Its discrete part: an index into [`Search::parts`], where each is kept once (a part is
    /// several hundred bytes, the core's lock for every client; many zones share one).
    part: u32,
    zone: Z,
    parent: usize,
    /// The step from the parent, in the parent's names.
    step: Option<ZoneStep>,
    /// From this entry's names to the run's.
    names: Renaming,
    depth: usize,
}

/// The search's tables: every symbolic state stored, and the passed list by discrete part.
struct Search<'a, Z> {
    config: &'a ZoneConfig,
    options: Options,
    entries: Vec<Entry<Z>>,
    /// Every discrete part stored, once, and its index.
    parts: Vec<Discrete>,
    part_index: HashMap<Discrete, u32>,
    /// The passed list: per part, the entries of its zones that nothing covers.
    passed: Vec<Vec<usize>>,
    waiting: VecDeque<usize>,
    acquired: bool,
    /// Each `always` property judged, with where it first broke: the entry and the step
    /// from it.
    violations: Vec<(Property, Option<(usize, ZoneStep)>)>,
    /// With symbolic parameters, where each property breaks (see [`ZoneOutcome`]).
    regions: Vec<(Property, Vec<Inequality>)>,
    /// The same, to see a region again at once.
    noted: HashSet<(Property, Vec<Inequality>)>,
}

/// Explores the zone graph of `config` and judges mutual exclusion, the storage properties
/// (with storage) and `lock acquired`; with symbolic parameters, for every value of them.
/// Unwatched: for the tests, which drive the engine directly (a check runs
/// `explore_watched` under its shell).
#[cfg(any(test, feature = "testing"))]
pub fn explore(config: &ZoneConfig, options: Options) -> ZoneOutcome {
    explore_watched(config, options, &mut |_| false)
}

/// How many zones the search expands between two questions to its watcher.
const WATCH_EVERY: usize = 256;

/// [`explore`], asking `watch` every [`WATCH_EVERY`] zones expanded, with the count so far,
/// whether to stop (a check's shell: its progress and its memory and time limits); a search
/// it stops is cut short like one past [`Options`]'s limits.
pub(crate) fn explore_watched(
    config: &ZoneConfig,
    options: Options,
    watch: &mut dyn FnMut(usize) -> bool,
) -> ZoneOutcome {
    let judged = invariants(config);
    if config.parameters.is_some() {
        return search::<ParametricZone>(config, options, &judged, watch);
    }
    let mut outcome = search::<Dbm>(config, options, &judged, watch);
    if options.merging || options.dead_keys {
        retrace(config, options, &mut outcome, watch);
    }
    outcome
}

/// A merged zone keeps the path of one of the zones it joined, so a violation found in it may
/// lie off that path, and a zone whose dead keys went untimed may let one expire when no run
/// can: its counterexample then does not replay (no `run`). Those counterexamples are found
/// again by a search that does neither, stopped once it has them.
fn retrace(
    config: &ZoneConfig,
    options: Options,
    outcome: &mut ZoneOutcome,
    watch: &mut dyn FnMut(usize) -> bool,
) {
    let lost: Vec<Property> = (outcome.judgements.iter())
        .filter(|j| j.counterexample.is_some() && j.run.is_none())
        .map(|j| j.property)
        .collect();
    if lost.is_empty() {
        return;
    }
    let exact = Options {
        merging: false,
        dead_keys: false,
        ..options
    };
    let again = search::<Dbm>(config, exact, &lost, watch);
    outcome.zones += again.zones;
    for judgement in &mut outcome.judgements {
        if let Some(found) = lost
            .contains(&judgement.property)
            .then(|| again.judgement(judgement.property))
            .flatten()
        {
            judgement.counterexample.clone_from(&found.counterexample);
            judgement.run.clone_from(&found.run);
        }
    }
}

/// The search itself, judging `judged` (the `always` properties it looks for violations of).
fn search<Z: Stored>(
    config: &ZoneConfig,
    options: Options,
    judged: &[Property],
    watch: &mut dyn FnMut(usize) -> bool,
) -> ZoneOutcome {
    let started = Instant::now();
    let mut search = Search::<Z> {
        config,
        options,
        entries: Vec::new(),
        parts: Vec::new(),
        part_index: HashMap::new(),
        passed: Vec::new(),
        waiting: VecDeque::new(),
        acquired: false,
        violations: judged.iter().map(|&p| (p, None)).collect(),
        regions: Vec::new(),
        noted: HashSet::new(),
    };
    search.start();
    let mut successors = Vec::new();
    let mut expanded = 0;
    let mut stopped = false;
    while let Some(at) = search.waiting.pop_front() {
        if search.entries[at].covered {
            continue;
        }
        let asked = expanded % WATCH_EVERY == 0 && watch(expanded);
        if asked || expanded >= options.max_zones || started.elapsed() >= options.time_limit {
            stopped = true;
            break;
        }
        expanded += 1;
        successors.clear();
        let entry = &search.entries[at];
        let state = search.parts[entry.part as usize];
        state.successors(config, &entry.zone, &mut successors);
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

impl<Z: Stored> Search<'_, Z> {
    /// Stores the initial state: every clock zero, then any delay.
    fn start(&mut self) {
        let config = self.config;
        let initial = Discrete::initial(config);
        let mut zone = Z::start(config);
        zone.up();
        initial.within_invariants(config, &mut zone);
        zone.extrapolate(config, &initial, self.options.dead_keys);
        let part = self.part(initial);
        self.entries.push(Entry {
            covered: false,
            part,
            zone,
            parent: usize::MAX,
            step: None,
            names: Renaming::IDENTITY,
            depth: 0,
        });
        self.passed[part as usize].push(0);
        self.waiting.push_back(0);
    }

    /// Notes the values of the keys for which `zone` breaks each property.
    fn note_regions(&mut self, state: &Discrete, zone: &Z) {
        for property in invariants(self.config) {
            for part in state.broken(self.config, zone, property) {
                let region = part.region().expect("a symbolic search").system().to_vec();
                if self.noted.insert((property, region.clone())) {
                    self.regions.push((property, region));
                }
            }
        }
    }

    /// Whether every `always` property judged is already violated (nothing is left to find).
    fn all_violated(&self) -> bool {
        self.violations.iter().all(|(_, v)| v.is_some())
    }

    /// Notes each property that `(state, zone)` breaks for the first time, reached from
    /// entry `at` by `step`.
    fn judge(&mut self, at: usize, step: ZoneStep, state: &Discrete, zone: &Z) {
        let config = self.config;
        if zone.region().is_some() {
            // Every region is wanted, not the first: the search goes on everywhere.
            self.note_regions(state, zone);
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
    fn add(&mut self, at: usize, step: ZoneStep, mut state: Discrete, mut zone: Z) {
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
        zone.extrapolate(config, &state, self.options.dead_keys);
        let (state, zone, renaming) = if self.options.symmetry {
            state.symmetric_image(config, &zone)
        } else {
            (state, zone, Renaming::IDENTITY)
        };
        let part = self.part(state);
        let Some(zone) = self.store(part, state, zone) else {
            return;
        };
        let parent = &self.entries[at];
        let entry = Entry {
            covered: false,
            part,
            zone,
            parent: at,
            step: Some(step),
            names: parent.names.then(&renaming),
            depth: parent.depth + 1,
        };
        self.passed[part as usize].push(self.entries.len());
        self.waiting.push_back(self.entries.len());
        self.entries.push(entry);
    }

    /// The index of discrete part `state`, stored once.
    fn part(&mut self, state: Discrete) -> u32 {
        if let Some(&part) = self.part_index.get(&state) {
            return part;
        }
        let part = u32::try_from(self.parts.len()).expect("fewer than 2³² discrete parts");
        self.parts.push(state);
        self.passed.push(Vec::new());
        self.part_index.insert(state, part);
        part
    }

    /// The zone to store for `(state, zone)`, or `None` when a stored zone of `state` covers
    /// it. The stored zones it covers are retired (whatever they lead to, it does); with
    /// merging, so is each stored zone whose union with it is a zone, and the union is what
    /// is stored (it is expanded anew: a retired zone's successors are covered by its own).
    fn store(&mut self, part: u32, state: Discrete, mut zone: Z) -> Option<Z> {
        // The image names clocks differently: its constants, for the simulation test.
        let simulation = self.options.simulation && self.config.parameters.is_none();
        let bounds = simulation.then(|| state.lu_bounds(self.config, self.options.dead_keys));
        let covers = |big: &Z, small: &Z| big.covers(small, bounds.as_ref());
        let entries = &mut self.entries;
        let stored = &mut self.passed[part as usize];
        if stored.iter().any(|&i| covers(&entries[i].zone, &zone)) {
            return None;
        }
        loop {
            stored.retain(|&i| {
                let smaller = covers(&zone, &entries[i].zone);
                if smaller {
                    entries[i].covered = true;
                    entries[i].zone.retire();
                }
                !smaller
            });
            if !self.options.merging {
                return Some(zone);
            }
            let union = stored
                .iter()
                .enumerate()
                .find_map(|(k, &i)| Some((k, zone.union(&entries[i].zone)?)));
            let Some((k, union)) = union else {
                return Some(zone);
            };
            let retired = &mut entries[stored.swap_remove(k)];
            retired.covered = true;
            retired.zone.retire();
            zone = union;
        }
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
            seconds: started.elapsed().as_secs_f64(),
            regions: self.regions.clone(),
        }
    }
}
