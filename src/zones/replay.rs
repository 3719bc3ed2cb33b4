//! A path of a symbolic exploration, taken again with its exact constraints: for which
//! values of the keys a run breaks a property along it.
//!
//! The replay runs the search's own steps ([`Discrete::successors`], [`Discrete::settle`],
//! the symmetric image) on a [`Replayed`] zone, which takes every decision off the search's
//! zone and records what each step asked of the clocks. It checks at every step that it is
//! where the search was (the same discrete part and the same zone); if not, it claims
//! nothing.

use crate::property::Property;

use super::config::ZoneConfig;
use super::dbm::Dbm;
use super::inequality::Inequality;
use super::path_constraints::{PathConstraints, Replayed};
use super::state::Discrete;
use super::successors::ZoneStep;
use super::zone::Zone;

/// One stored state of a path: the symbolic state, and the step that led to it.
pub(crate) struct Link<'a> {
    /// Its discrete part, as stored (a symmetric image when symmetry is on).
    pub(crate) state: &'a Discrete,
    /// Its zone, as stored.
    pub(crate) zone: &'a Dbm,
    /// The step from the previous link (`None` for the first).
    pub(crate) step: Option<ZoneStep>,
}

/// Where a property broke: after the stored state at `at`, by `step`; for mutual exclusion,
/// `pair` is which pair of holders (in [`Discrete::both_believe`]'s order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Witness {
    pub(crate) at: usize,
    pub(crate) step: ZoneStep,
    pub(crate) pair: usize,
}

/// The values of the keys for which a run takes `chain` (from the initial state), then
/// `witness.step`, and breaks `property` there: exact, for every value (see
/// [`super::path_constraints`]). `None` when nothing can be claimed (no symbolic parameters,
/// a replay that left the search's path, or an elimination that grew too large).
pub(crate) fn breaking_keys(
    config: &ZoneConfig,
    symmetry: bool,
    chain: &[Link<'_>],
    witness: Witness,
    property: Property,
) -> Option<Vec<Inequality>> {
    let root = chain.first()?;
    let (mut state, mut zone) = start(config)?;
    if state != *root.state || zone.zone != *root.zone {
        return None;
    }
    for link in &chain[1..] {
        let (next, z) = step(config, &state, &zone, link.step?)?;
        let (next, z) = if symmetry {
            let (s, z, _) = next.symmetric_image(config, &z);
            (s, z)
        } else {
            (next, z)
        };
        if next != *link.state || z.zone != *link.zone {
            return None;
        }
        (state, zone) = (next, z);
    }
    let (last, z) = step(config, &state, &zone, witness.step)?;
    let broken = last
        .broken(config, &z, property)
        .into_iter()
        .nth(witness.pair)?;
    broken.path.on_the_keys()
}

/// The values of the keys for which a run of `steps` (a counterexample, in the run's names,
/// from the initial state) breaks `property` at its end, one system for each way it breaks
/// there (each pair of holders, for mutual exclusion); none when the steps are not a path
/// of `config`'s symbolic automaton.
pub(crate) fn keys_breaking_along(
    config: &ZoneConfig,
    steps: &[ZoneStep],
    property: Property,
) -> Vec<Vec<Inequality>> {
    let walk = || {
        let (mut state, mut zone) = start(config)?;
        for &wanted in steps {
            (state, zone) = step(config, &state, &zone, wanted)?;
        }
        Some(state.broken(config, &zone, property))
    };
    walk()
        .unwrap_or_default()
        .iter()
        .filter_map(|z| z.path.on_the_keys())
        .collect()
}

/// The initial symbolic state, with the constraints of an empty path (`None` without
/// symbolic parameters).
fn start(config: &ZoneConfig) -> Option<(Discrete, Replayed)> {
    let parameters = config.parameters.as_ref()?;
    let state = Discrete::initial(config);
    let mut zone = Replayed {
        zone: parameters.initial_zone(config.clock_count()),
        path: PathConstraints::start(parameters),
    };
    zone.up();
    state.within_invariants(config, &mut zone);
    Some((state, zone))
}

/// The successor of `(state, zone)` by `wanted`, settled as the search settles it.
fn step(
    config: &ZoneConfig,
    state: &Discrete,
    zone: &Replayed,
    wanted: ZoneStep,
) -> Option<(Discrete, Replayed)> {
    let (mut next, mut z) = state
        .successors_by(config, zone, wanted)
        .into_iter()
        .next()?;
    next.settle(config, &mut z).then_some((next, z))
}
