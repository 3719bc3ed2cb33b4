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
pub(crate) struct Link<'a, const CAP: usize> {
    /// Its discrete part, as stored (a symmetric image when symmetry is on).
    pub(crate) state: &'a Discrete,
    /// Its zone, as stored.
    pub(crate) zone: &'a Dbm<CAP>,
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
/// `witness.step`, and breaks `property` there, one system for each way it breaks there:
/// exact, for every value (see [`super::path_constraints`]). `None` when nothing can be
/// claimed (no symbolic parameters, or a replay that left the search's path); an
/// elimination that grew too large drops its system.
pub(crate) fn breaking_keys<const CAP: usize>(
    config: &ZoneConfig,
    symmetry: bool,
    chain: &[Link<'_, CAP>],
    witness: Witness,
    property: Property,
) -> Option<Vec<Vec<Inequality>>> {
    let root = chain.first()?;
    let (mut state, mut zone) = start(config)?;
    if state != *root.state || !zone.zone.same_as(root.zone) {
        return None;
    }
    for link in &chain[1..] {
        // The successor the search stored: the one that, settled and imaged, is the link.
        let stored = |(mut next, mut z): (Discrete, Replayed)| {
            if !next.settle(config, &mut z) {
                return None;
            }
            let (next, z) = if symmetry {
                let (s, z, _) = next.symmetric_image(config, &z);
                (s, z)
            } else {
                (next, z)
            };
            (next == *link.state && z.zone.same_as(link.zone)).then_some((next, z))
        };
        let successors = state.successors_by(config, &zone, link.step?);
        (state, zone) = successors.into_iter().find_map(stored)?;
    }
    let mut ends = Vec::new();
    walk(config, state, zone, &[witness.step], property, &mut ends);
    // Every end is a run that breaks the property (the search's own pair among them).
    Some(ends.iter().filter_map(|z| z.path.on_the_keys()).collect())
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
    let Some((state, zone)) = start(config) else {
        return Vec::new();
    };
    let mut ends = Vec::new();
    walk(config, state, zone, steps, property, &mut ends);
    ends.iter().filter_map(|z| z.path.on_the_keys()).collect()
}

/// How many ways to its end one replayed run may branch into (one step may have several
/// successors: an answer a node gives on either reading, where neither zone includes the
/// other).
const MAX_BRANCHES: usize = 64;

/// Every end of `steps` from `(state, zone)`, each where it breaks `property`, into `ends`.
fn walk(
    config: &ZoneConfig,
    state: Discrete,
    zone: Replayed,
    steps: &[ZoneStep],
    property: Property,
    ends: &mut Vec<Replayed>,
) {
    let Some((&wanted, rest)) = steps.split_first() else {
        ends.extend(state.broken(config, &zone, property));
        return;
    };
    for (mut next, mut z) in state.successors_by(config, &zone, wanted) {
        if ends.len() >= MAX_BRANCHES {
            return;
        }
        if next.settle(config, &mut z) {
            walk(config, next, z, rest, property, ends);
        }
    }
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
