//! The zone graph, breadth first, with a passed list that drops a zone included in one
//! already stored for the same discrete part (or, by default, LU-simulated by one).
//!
//! A symbolic state is a discrete part and a zone closed under delay (`up`), extrapolated by
//! Extra⁺_LU with the constants of its discrete part, and mapped to a symmetric image when the
//! configuration allows. Mutual exclusion is judged on the exact zone, before extrapolation.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use crate::scenario::Verdict;

use super::config::ZoneConfig;
use super::dbm::Dbm;
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

/// What one exploration found.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Mutual exclusion.
    pub mutual_exclusion: Verdict,
    /// Some client acquires.
    pub lock_acquired: Verdict,
    /// Symbolic states expanded (each a discrete part and a zone; a zone that a larger one
    /// replaced before its turn is not counted).
    pub zones: usize,
    /// The longest path explored, in steps from the initial state.
    pub max_depth: usize,
    /// Symbolic states left in the passed list at the end.
    pub stored: usize,
    /// Distinct discrete parts among them.
    pub discrete: usize,
    /// Successor zones dropped because a stored zone included them.
    pub subsumed: usize,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// The steps to the first violation of mutual exclusion (breadth first: a shortest one in
    /// steps), with the clients and nodes named as in the run (not as in the symmetric images
    /// the search stored).
    pub counterexample: Option<Vec<ZoneStep>>,
}

struct Entry {
    /// Replaced by a larger zone of the same discrete part: not expanded, not counted.
    covered: bool,
    state: Discrete,
    zone: Dbm,
    parent: usize,
    /// The step from the parent, in the parent's names.
    step: Option<ZoneStep>,
    /// From this entry's names to the run's.
    names: Renaming,
    depth: usize,
}

/// The search's tables: every symbolic state stored, and the passed list by discrete part.
struct Search<'a> {
    config: &'a ZoneConfig,
    options: Options,
    entries: Vec<Entry>,
    passed: HashMap<Discrete, Vec<usize>>,
    waiting: VecDeque<usize>,
    subsumed: usize,
    acquired: bool,
}

/// Explores the zone graph of `config` and judges mutual exclusion and `lock acquired`.
pub fn explore(config: &ZoneConfig, options: Options) -> Outcome {
    let started = Instant::now();
    let mut search = Search {
        config,
        options,
        entries: Vec::new(),
        passed: HashMap::new(),
        waiting: VecDeque::new(),
        subsumed: 0,
        acquired: false,
    };
    search.start();
    let mut successors = Vec::new();
    let mut expanded = 0;
    let mut stopped = false;
    let mut violation = None;
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
        violation = successors
            .drain(..)
            .find_map(|(step, state, zone)| search.add(at, step, state, zone));
        if violation.is_some() {
            break;
        }
    }
    let counterexample = violation.map(|(at, last)| search.path(at, last));
    search.outcome(expanded, stopped, counterexample, started)
}

impl Search<'_> {
    /// Stores the initial state: every clock zero, then any delay.
    fn start(&mut self) {
        let config = self.config;
        let initial = Discrete::initial(config);
        let mut zone = Dbm::zero(config.clock_count());
        zone.up();
        let (lower, upper) = initial.lu_bounds(config);
        zone.extrapolate_lu(&lower, &upper);
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

    /// Adds the successor of entry `at` by `step`, unless a stored zone covers it; returns
    /// `(at, step)` when it breaks mutual exclusion.
    fn add(
        &mut self,
        at: usize,
        step: ZoneStep,
        mut state: Discrete,
        mut zone: Dbm,
    ) -> Option<(usize, ZoneStep)> {
        let config = self.config;
        zone.up();
        state.forget_expired_keys(config, &mut zone);
        if state.holders(config).next().is_some() {
            self.acquired = true;
        }
        if state.breaks_mutual_exclusion(config, &zone) {
            return Some((at, step));
        }
        let (lower, upper) = state.lu_bounds(config);
        zone.extrapolate_lu(&lower, &upper);
        let (state, zone, renaming) = if self.options.symmetry {
            state.symmetric_image(config, &zone)
        } else {
            (state, zone, Renaming::IDENTITY)
        };
        if !self.store(state, &zone) {
            self.subsumed += 1;
            return None;
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
        None
    }

    /// Whether `(state, zone)` is new: no stored zone of `state` covers it. The stored zones
    /// it covers are retired (whatever they lead to, it does).
    fn store(&mut self, state: Discrete, zone: &Dbm) -> bool {
        // The image names clocks differently: its constants, for the simulation test.
        let (lower, upper) = state.lu_bounds(self.config);
        let simulation = self.options.simulation;
        let covers = |big: &Dbm, small: &Dbm| {
            if simulation {
                small.is_lu_simulated_by(big, &lower, &upper)
            } else {
                big.includes(small)
            }
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

    fn outcome(
        &self,
        expanded: usize,
        stopped: bool,
        counterexample: Option<Vec<ZoneStep>>,
        started: Instant,
    ) -> Outcome {
        let mutual_exclusion = match (&counterexample, stopped) {
            (Some(_), _) => Verdict::Violated,
            (None, true) => Verdict::Incomplete,
            (None, false) => Verdict::Holds,
        };
        let lock_acquired = match (self.acquired, stopped || counterexample.is_some()) {
            (true, _) => Verdict::Holds,
            (false, true) => Verdict::Incomplete,
            (false, false) => Verdict::Violated,
        };
        Outcome {
            mutual_exclusion,
            lock_acquired,
            zones: expanded,
            max_depth: self.entries.iter().map(|e| e.depth).max().unwrap_or(0),
            stored: self.passed.values().map(Vec::len).sum(),
            discrete: self.passed.len(),
            subsumed: self.subsumed,
            seconds: started.elapsed().as_secs_f64(),
            counterexample,
        }
    }
}
