//! The zone graph, breadth first, with a passed list that drops a zone included in one
//! already stored for the same discrete part (or, by default, LU-simulated by one).
//!
//! A symbolic state is a discrete part and a zone closed under delay (`up`), extrapolated by
//! Extra⁺_LU with the constants of its discrete part, and mapped to a symmetric image when the
//! configuration allows. Mutual exclusion is judged on the exact zone, before extrapolation.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use crate::automaton::{Config, Discrete, Step};
use crate::dbm::Dbm;

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

/// A verdict of the prototype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every reachable symbolic state was explored and none breaks the property (for `lock
    /// acquired`: a witness was found).
    Holds,
    /// A counterexample was found (for `lock acquired`: every state explored, no witness).
    Violated,
    /// A limit stopped the exploration first.
    Incomplete,
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
    /// Symbolic states left in the passed list at the end.
    pub stored: usize,
    /// Distinct discrete parts among them.
    pub discrete: usize,
    /// Successor zones dropped because a stored zone included them.
    pub subsumed: usize,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// The steps to the first violation of mutual exclusion (breadth first: a shortest one in
    /// steps), with clients and nodes named as in the symmetric images along the way.
    pub counterexample: Option<Vec<Step>>,
}

struct Entry {
    /// Replaced by a larger zone of the same discrete part: not expanded, not counted.
    covered: bool,
    state: Discrete,
    zone: Dbm,
    parent: usize,
    step: Option<Step>,
}

/// Explores the zone graph of `config` and judges mutual exclusion and `lock acquired`.
pub fn explore(config: &Config, options: Options) -> Outcome {
    let started = Instant::now();
    let mut entries: Vec<Entry> = Vec::new();
    let mut passed: HashMap<Discrete, Vec<usize>> = HashMap::new();
    let mut waiting: VecDeque<usize> = VecDeque::new();
    let mut subsumed = 0;
    let mut acquired = false;
    let mut violation: Option<(usize, Step)> = None;
    let mut stopped = false;

    let initial = Discrete::initial(config);
    let mut zone = Dbm::zero(config.clock_count());
    zone.up();
    let (lower, upper) = initial.lu_bounds(config);
    zone.extrapolate_lu(&lower, &upper);
    entries.push(Entry {
        covered: false,
        state: initial,
        zone,
        parent: usize::MAX,
        step: None,
    });
    passed.insert(initial, vec![0]);
    waiting.push_back(0);

    let mut successors = Vec::new();
    let mut expanded = 0;
    'search: while let Some(at) = waiting.pop_front() {
        if entries[at].covered {
            continue;
        }
        if expanded >= options.max_zones || started.elapsed() >= options.time_limit {
            stopped = true;
            break;
        }
        expanded += 1;
        successors.clear();
        entries[at]
            .state
            .successors(config, &entries[at].zone, &mut successors);
        for (step, mut state, mut zone) in successors.drain(..) {
            zone.up();
            state.forget_expired_keys(config, &mut zone);
            if state.holders(config).next().is_some() {
                acquired = true;
            }
            if state.breaks_mutual_exclusion(config, &zone) {
                violation = Some((at, step));
                break 'search;
            }
            let (lower, upper) = state.lu_bounds(config);
            zone.extrapolate_lu(&lower, &upper);
            let (state, zone) = if options.symmetry {
                state.symmetric_image(config, &zone)
            } else {
                (state, zone)
            };
            // The image names clocks differently: its constants, for the simulation test.
            let (lower, upper) = state.lu_bounds(config);
            let covers = |big: &Dbm, small: &Dbm| {
                if options.simulation {
                    small.is_lu_simulated_by(big, &lower, &upper)
                } else {
                    big.includes(small)
                }
            };
            let stored = passed.entry(state).or_default();
            if stored.iter().any(|&i| covers(&entries[i].zone, &zone)) {
                subsumed += 1;
                continue;
            }
            // Stored zones the new one covers are dropped: whatever they lead to, it does.
            stored.retain(|&i| {
                let smaller = covers(&zone, &entries[i].zone);
                if smaller {
                    entries[i].covered = true;
                }
                !smaller
            });
            stored.push(entries.len());
            waiting.push_back(entries.len());
            entries.push(Entry {
                covered: false,
                state,
                zone,
                parent: at,
                step: Some(step),
            });
        }
    }

    let counterexample = violation.map(|(mut at, last)| {
        let mut steps = vec![last];
        while let Some(step) = entries[at].step {
            steps.push(step);
            at = entries[at].parent;
        }
        steps.reverse();
        steps
    });
    let mutual_exclusion = match (&counterexample, stopped) {
        (Some(_), _) => Verdict::Violated,
        (None, true) => Verdict::Incomplete,
        (None, false) => Verdict::Holds,
    };
    let lock_acquired = match (acquired, stopped || counterexample.is_some()) {
        (true, _) => Verdict::Holds,
        (false, true) => Verdict::Incomplete,
        (false, false) => Verdict::Violated,
    };
    Outcome {
        mutual_exclusion,
        lock_acquired,
        zones: expanded,
        stored: passed.values().map(Vec::len).sum(),
        discrete: passed.len(),
        subsumed,
        seconds: started.elapsed().as_secs_f64(),
        counterexample,
    }
}
