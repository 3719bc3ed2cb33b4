//! Parameter synthesis: a scenario's timing keys left free, and, for every value of them at
//! once, where each property holds, as linear inequalities.
//!
//! One symbolic exploration over parametric zones ([`super::parametric`]) stands for every
//! value of the keys: each state that breaks a property does so for exactly the values of its
//! region (a conjunction of inequalities over the keys). So the union of those regions is
//! where the property **breaks**, and outside it the property **holds**: both sides of the
//! boundary are proved for every value by the one exploration, with no point checked apart.
//! `tests/synthesis.rs` holds each side to the zone engine at many points.
//!
//! What the result speaks for is its *domain*: every key on its value's side of zero (a
//! backward jump is below it), every guard's bound at
//! least one (as in every file that validates), a key whose zero is another automaton (a
//! restart delay or a client guard of zero is no guard) at least one, and a round timeout
//! within the validity (the core caps it there).

use std::time::Instant;

use crate::property::Property;
use crate::scenario::Scenario;

use super::automaton::{Unsupported, ZoneConfig};
use super::constants::Timing;
use super::explore::{Options, ZoneOutcome, explore_watched};
use super::inequality::{Inequality, implies, within_domain};
use super::measure::Steps;
use super::parameters::Parameters;
use super::parametric::MAX_KEYS;

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
    /// More keys than a parametric zone's forms read.
    #[error("{keys} keys left free; a synthesis reads at most {MAX_KEYS}")]
    TooManyKeys {
        /// Keys asked for.
        keys: usize,
    },
    /// The exploration stopped at its limit (of zones or of time).
    #[error("the symbolic exploration stopped at its limit, after {zones} zones")]
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
    /// Each property judged, with the regions where it breaks (each a conjunction of
    /// inequalities; none: it holds on the whole domain). For every value in a region a run
    /// breaks it; outside them it holds.
    pub breaks: Vec<(Property, Vec<Vec<Inequality>>)>,
    /// Symbolic states explored.
    pub zones: usize,
    /// Wall-clock seconds.
    pub seconds: f64,
}

impl Synthesis {
    /// The regions where `property` breaks (`None`: not judged).
    pub fn regions(&self, property: Property) -> Option<&[Vec<Inequality>]> {
        self.breaks
            .iter()
            .find(|(p, _)| *p == property)
            .map(|(_, r)| r.as_slice())
    }

    /// Whether `point` (one value per key) is in a region where `property` breaks (`None`:
    /// not judged).
    pub fn breaks_at(&self, property: Property, point: &[i64]) -> Option<bool> {
        let regions = self.regions(property)?;
        Some(regions.iter().any(|r| r.iter().all(|i| i.holds_at(point))))
    }

    /// Whether `property` is proved to hold at `point`: in the domain and in no region.
    pub fn proved_at(&self, property: Property, point: &[i64]) -> bool {
        self.covers(point) && self.breaks_at(property, point) == Some(false)
    }

    /// Whether `property` is proved to break at `point`: in the domain and in a region.
    pub fn proved_broken_at(&self, property: Property, point: &[i64]) -> bool {
        self.covers(point) && self.breaks_at(property, point) == Some(true)
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
        .filter(|&k| base[k] != 0 && changes_at_zero(k))
        .map(|k| {
            let mut coefficients = vec![0; base.len()];
            coefficients[k] = if base[k] > 0 { -1 } else { 1 };
            Inequality {
                coefficients,
                bound: -1,
            }
        })
        .collect()
}

/// Leaves the `free` keys of `scenario` free and finds, for every value of them, where each
/// property the zone engine judges holds (see the module docs), under `options` (at most
/// their `max_zones` symbolic states; the LU simulation is off, since a form is no
/// constant). `watch` is asked, as in
/// [`explore_watched`], with the zones explored so far whether to stop (a check's shell: its
/// zone budget, time and memory limits and progress); a stopped exploration proves nothing.
/// `at` gives the scenario at any point of the keys (`None`: not a valid one): the domain
/// reads which keys' zeros are other automata with it.
pub(crate) fn synthesize(
    scenario: &Scenario,
    free: &[FreeKey],
    options: Options,
    watch: &mut dyn FnMut(usize) -> bool,
    at: &dyn Fn(&[i64]) -> Option<Scenario>,
) -> Result<Synthesis, SynthesisError> {
    let started = Instant::now();
    if free.len() > MAX_KEYS {
        return Err(SynthesisError::TooManyKeys { keys: free.len() });
    }
    let mut config = ZoneConfig::from_scenario(scenario)?;
    let mut parameters = measured(&config, free)?;
    let floors = floors(&config, &parameters.base, at);
    parameters.domain.extend(floors);
    let domain = parameters.domain.clone();
    let (keys, base) = (parameters.keys.clone(), parameters.base.clone());
    config.set_parameters(Some(parameters));
    // Symmetry may stay on (renaming nodes or clients leaves every form where it is); the
    // LU simulation reads constants, which a form is not.
    let options = Options {
        simulation: false,
        ..options
    };
    let outcome = explore_watched(&config, options, watch);
    if outcome.incomplete() {
        return Err(SynthesisError::Incomplete {
            zones: outcome.zones,
        });
    }
    let breaks = outcome
        .judgements
        .iter()
        .map(|j| j.property)
        .filter(|p| *p != Property::LockAcquired)
        .map(|property| (property, regions(&outcome, property, &domain)))
        .collect();
    Ok(Synthesis {
        keys,
        base,
        domain,
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

/// The regions where `property` breaks, within the domain, simplified, none within another.
fn regions(
    outcome: &ZoneOutcome,
    property: Property,
    domain: &[Inequality],
) -> Vec<Vec<Inequality>> {
    let systems = outcome.regions.iter().filter(|(p, _)| *p == property);
    let within = systems.filter_map(|(_, system)| within_domain(system.clone(), domain));
    distinct(within.collect(), domain)
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
