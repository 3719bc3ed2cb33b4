//! Parameter synthesis: a scenario's timing keys left free, and, for every value of them at
//! once, where each property holds, as linear inequalities.
//!
//! One symbolic exploration ([`super::parameters`]) stands for every value of the keys; each
//! zone where a property breaks, read over the keys, is a conjunction of inequalities (a
//! *region*). The exploration over-approximates: a zone keeps `x − p ≤ c` for a clock against
//! a frozen dimension, but after time passes it cannot keep `x − y ≤ p + c` between two clocks
//! (that is not a difference constraint), so it may reach a state no run reaches. Hence:
//!
//! - outside every region the property **holds**, proved for every value (an over-approximated
//!   reachable set without a bad state has none in it either);
//! - inside a region it *may* break. Where it **breaks** is proved by runs replayed with the
//!   keys unknown ([`super::replay`], [`super::coverage`]): each gives, exactly, the values for
//!   which that run breaks it. When they cover every region, the synthesis is *exact*: both
//!   sides of the boundary are proved for every value. For the drift and restart families they
//!   do; after a pause between a lease check and a delayed write the regions over-approximate
//!   (`tests/synthesis.rs` shows it), and exact parametric zones (bounds that are linear
//!   expressions in the parameters) would be needed.
//!
//! What the result speaks for is its *domain*: every key at least zero, every guard's bound at
//! least one (as in every file that validates), a key whose zero is another automaton (a
//! restart delay or a client guard of zero is no guard) at least one, and a round timeout
//! within the validity (the core caps it there).

use std::time::Instant;

use crate::property::Property;
use crate::scenario::Scenario;

use super::config::{Unsupported, ZoneConfig};
use super::coverage::{Cover, Probe, cover};
use super::dbm::{MAX_SYMBOLIC_DIM, SymbolicDbm};
use super::explore::{Options, ZoneOutcome, explore};
use super::inequality::{Inequality, implies, within_domain};
use super::measure::Steps;
use super::parameters::Parameters;
use super::timing::Timing;

/// Why a synthesis could not run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SynthesisError {
    /// The zone engine does not model the scenario, or cannot leave this key free.
    #[error(transparent)]
    Unsupported(#[from] Unsupported),
    /// Stepping a key changed the automaton: a guard or a clock comes or goes (a delay of
    /// zero that becomes one).
    #[error(
        "stepping {key} changes the automaton (a guard or a clock comes or goes); start from a value away from zero"
    )]
    StructureChanges {
        /// The key.
        key: String,
    },
    /// The clocks and the parameters' dimensions do not fit in a zone.
    #[error(
        "the clocks and the parameters need {needed} dimensions; a zone holds {MAX_SYMBOLIC_DIM}"
    )]
    TooManyDimensions {
        /// Dimensions needed.
        needed: usize,
    },
    /// The exploration stopped at its limit.
    #[error("the symbolic exploration stopped after {zones} zones")]
    Incomplete {
        /// The limit.
        zones: usize,
    },
}

/// What one symbolic exploration proved for every value of the keys in its domain.
#[derive(Clone, Debug)]
pub struct Synthesis {
    /// The keys left free.
    pub keys: Vec<String>,
    /// Their values in the scenario.
    pub base: Vec<i64>,
    /// The values the result speaks for.
    pub domain: Vec<Inequality>,
    /// Each property judged, with the regions where it may break (each a conjunction of
    /// inequalities; none: it holds on the whole domain). Outside them it holds.
    pub may_break: Vec<(Property, Vec<Vec<Inequality>>)>,
    /// Each property judged, with regions where it breaks: for every value in one, a run
    /// breaks it (the run of one path of the exploration, whose exact constraints the region
    /// is). Each lies within the regions where it may break.
    pub breaks: Vec<(Property, Vec<Vec<Inequality>>)>,
    /// Symbolic states explored.
    pub zones: usize,
    /// Wall-clock seconds.
    pub seconds: f64,
}

impl Synthesis {
    /// The regions where `property` may break (`None`: not judged).
    pub fn regions(&self, property: Property) -> Option<&[Vec<Inequality>]> {
        self.may_break
            .iter()
            .find(|(p, _)| *p == property)
            .map(|(_, r)| r.as_slice())
    }

    /// Whether `point` (one value per key) is in a region where `property` may break
    /// (`None`: not judged).
    pub fn may_break_at(&self, property: Property, point: &[i64]) -> Option<bool> {
        let regions = self.regions(property)?;
        Some(regions.iter().any(|r| r.iter().all(|i| i.holds_at(point))))
    }

    /// Whether `property` is proved to hold at `point`: in the domain and in no region.
    pub fn proved_at(&self, property: Property, point: &[i64]) -> bool {
        self.covers(point) && self.may_break_at(property, point) == Some(false)
    }

    /// The regions where `property` is proved to break (`None`: not judged).
    pub fn breaking_regions(&self, property: Property) -> Option<&[Vec<Inequality>]> {
        self.breaks
            .iter()
            .find(|(p, _)| *p == property)
            .map(|(_, r)| r.as_slice())
    }

    /// Whether `property` is proved to break at `point`: in the domain and in a region where
    /// it breaks.
    pub fn proved_broken_at(&self, property: Property, point: &[i64]) -> bool {
        self.covers(point)
            && self
                .breaking_regions(property)
                .is_some_and(|r| r.iter().any(|r| r.iter().all(|i| i.holds_at(point))))
    }

    /// Whether both sides of `property`'s boundary are proved: every region where it may
    /// break lies within one where it breaks, so on the whole domain it holds exactly
    /// outside the regions.
    pub fn exact(&self, property: Property) -> bool {
        let (Some(may), Some(does)) = (self.regions(property), self.breaking_regions(property))
        else {
            return false;
        };
        may.iter()
            .all(|region| cover(region, does, &self.domain) == Cover::Covered)
    }

    /// Whether `point` is in the domain.
    pub fn covers(&self, point: &[i64]) -> bool {
        self.domain.iter().all(|i| i.holds_at(point))
    }
}

/// A key left free: its name, its value in the scenario, and the scenario with it one tick
/// larger and smaller (from which the forms are measured).
#[derive(Clone, Debug)]
pub struct FreeKey {
    /// The dotted key.
    pub key: String,
    /// Its value in the scenario.
    pub value: i64,
    /// The scenario with the key at `value + 1`.
    pub stepped: Scenario,
    /// The scenario with the key at `value − 1`, if it is one.
    pub lowered: Option<Scenario>,
}

/// What an automaton is made of, apart from its constants: which guards it tests, whether a
/// restart is delayed or timed, and its clocks. A free key must not change it.
fn structure(config: &ZoneConfig) -> (Vec<bool>, bool, bool, usize) {
    (
        Timing::ALL.map(|t| config.guard(t).is_some()).to_vec(),
        config.delays_restarts(),
        config.times_restarts(),
        config.clock_count(),
    )
}

/// `key ≥ 1` for each key whose value zero changes the automaton (a restart delay or a
/// client guard of zero is no guard at all) or makes no valid scenario: the forms were
/// measured one tick around the file's values, so the result must not speak for a value
/// where the automaton is another one.
fn floors(
    config: &ZoneConfig,
    base: &[i64],
    at: &dyn Fn(&[i64]) -> Option<Scenario>,
) -> Vec<Inequality> {
    let changes_at_zero = |k: usize| {
        let mut point = base.to_vec();
        point[k] = 0;
        let there = at(&point).and_then(|s| ZoneConfig::from_scenario(&s).ok());
        there.is_none_or(|c| structure(&c) != structure(config))
    };
    (0..base.len())
        .filter(|&k| base[k] > 0 && changes_at_zero(k))
        .map(|k| {
            let mut coefficients = vec![0; base.len()];
            coefficients[k] = -1;
            Inequality {
                coefficients,
                bound: -1,
            }
        })
        .collect()
}

/// Leaves the `free` keys of `scenario` free and finds, for every value of them, where each
/// property the zone engine judges holds (see the module docs), exploring at most `max_zones`
/// symbolic states. `at` gives the scenario at any point of the keys (`None`: not a valid
/// one): the violated side checks single points with it.
pub fn synthesize(
    scenario: &Scenario,
    free: &[FreeKey],
    max_zones: usize,
    at: &dyn Fn(&[i64]) -> Option<Scenario>,
) -> Result<Synthesis, SynthesisError> {
    let started = Instant::now();
    let mut config = ZoneConfig::from_scenario(scenario)?;
    let parameters = measured(&config, free)?;
    let needed = parameters.first + parameters.dimensions.len();
    if needed > MAX_SYMBOLIC_DIM {
        return Err(SynthesisError::TooManyDimensions { needed });
    }
    let mut domain = parameters.domain();
    domain.extend(floors(&config, &parameters.base, at));
    config.set_parameters(Some(parameters));
    // Symmetry stays on (renaming nodes or clients leaves every form where it is); the
    // LU simulation reads constants, which a frozen dimension is not.
    let options = Options {
        simulation: false,
        max_zones,
        ..Options::default()
    };
    let outcome = explore(&config, options);
    if outcome.incomplete() {
        return Err(SynthesisError::Incomplete { zones: max_zones });
    }
    let parameters = config.parameters.as_ref().expect("set above");
    let judged = outcome
        .judgements
        .iter()
        .map(|j| j.property)
        .filter(|p| *p != Property::LockAcquired);
    let probe = Probe {
        config: &config,
        domain: &domain,
        near: &parameters.base,
        at,
    };
    let (may_break, breaks) = judged
        .map(|property| {
            let (may, does) = sides(&outcome, &probe, property);
            ((property, may), (property, does))
        })
        .unzip();
    Ok(Synthesis {
        keys: parameters.keys.clone(),
        base: parameters.base.clone(),
        domain,
        may_break,
        breaks,
        zones: outcome.zones,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The parameters of `free`, their forms measured one tick up and down from `config`: the
/// automaton must be the same there (no guard or clock comes or goes).
fn measured(config: &ZoneConfig, free: &[FreeKey]) -> Result<Parameters, SynthesisError> {
    let mut steps = Vec::new();
    for key in free {
        let up = ZoneConfig::from_scenario(&key.stepped)?;
        let down = key
            .lowered
            .as_ref()
            .map(ZoneConfig::from_scenario)
            .transpose()?;
        let same = |c: &ZoneConfig| structure(c) == structure(config);
        if !same(&up) || !down.as_ref().is_none_or(same) {
            return Err(SynthesisError::StructureChanges {
                key: key.key.clone(),
            });
        }
        steps.push(Steps { up, down });
    }
    let names = free.iter().map(|k| k.key.clone()).collect();
    let values = free.iter().map(|k| k.value).collect();
    Ok(Parameters::measure(names, values, config, &steps)?)
}

/// Both sides of `property`'s boundary: the regions where it may break (over the keys), and
/// those where runs are proved to break it (the search's replayed paths, then points probed
/// until they cover the first, or cannot).
fn sides(
    outcome: &ZoneOutcome,
    probe: &Probe<'_>,
    property: Property,
) -> (Vec<Vec<Inequality>>, Vec<Vec<Inequality>>) {
    let parameters = probe.config.parameters.as_ref().expect("a symbolic search");
    let domain = probe.domain;
    let zones = outcome.regions.iter().filter(|(p, _)| *p == property);
    let may = zones.filter_map(|(_, zone)| over_keys(parameters, zone, domain));
    let may = distinct(may.collect(), domain);
    let paths = outcome.breaking.iter().filter(|(p, _)| *p == property);
    // Many paths give one system: each is simplified once.
    let mut seen = std::collections::HashSet::new();
    let mut does: Vec<Vec<Inequality>> = paths
        .filter(|(_, keys)| seen.insert(keys))
        .filter_map(|(_, keys)| within_domain(keys.clone(), domain))
        .collect();
    probe.complete(property, &may, &mut does);
    (may, distinct(does, domain))
}

/// A region (a zone over the frozen dimensions) as inequalities over the keys, without the
/// ones the rest and the domain imply; `None` when no value of the keys in the domain is in it.
fn over_keys(
    parameters: &Parameters,
    region: &SymbolicDbm,
    domain: &[Inequality],
) -> Option<Vec<Inequality>> {
    let keys = parameters.keys.len();
    let coefficients = |d: usize| -> Vec<i64> {
        if d == 0 {
            vec![0; keys]
        } else {
            parameters.dimensions[d - 1].clone()
        }
    };
    let dim = 1 + parameters.dimensions.len();
    let mut system = Vec::new();
    for i in 0..dim {
        for j in (0..dim).filter(|&j| j != i) {
            let bound = region.get(i, j);
            if bound.is_infinite() {
                continue;
            }
            // Whole numbers: `< c` is `≤ c − 1`.
            let c = i64::from(bound.constant()) - i64::from(!bound.is_weak());
            let (a, b) = (coefficients(i), coefficients(j));
            let inequality = Inequality {
                coefficients: a.iter().zip(&b).map(|(x, y)| x - y).collect(),
                bound: c,
            }
            .normalized();
            if !inequality.is_constant() {
                system.push(inequality);
            }
        }
    }
    within_domain(system, domain)
}

/// Whether every value of the domain in `small` is in `big`.
fn within(small: &[Inequality], big: &[Inequality], domain: &[Inequality]) -> bool {
    let given: Vec<Inequality> = small.iter().chain(domain).cloned().collect();
    big.iter().all(|i| implies(&given, i))
}

/// `regions` without one that another includes (given the domain), in order.
fn distinct(regions: Vec<Vec<Inequality>>, domain: &[Inequality]) -> Vec<Vec<Inequality>> {
    let mut kept: Vec<Vec<Inequality>> = Vec::new();
    for region in regions {
        if kept.iter().any(|k| within(&region, k, domain)) {
            continue;
        }
        kept.retain(|k| !within(k, &region, domain));
        kept.push(region);
    }
    kept
}
