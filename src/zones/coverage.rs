//! The violated side of a synthesis: regions where a run breaks a property for every value,
//! grown until they cover every region where it may break.
//!
//! The search's own paths come first (for each distinct region, the first path there,
//! replayed exactly: [`super::replay`]). The search drops a zone that a stored one includes,
//! so the paths that break a property for other values may never be stored. Where the
//! replayed regions leave part of a region uncovered, a whole-number point of that part is
//! checked on its own (the zone engine at those values), and its counterexample, replayed
//! symbolically, breaks the property on a region around the point. A point where the
//! property holds shows that the region over-approximates there: that side stays unproved.

use crate::property::Property;
use crate::scenario::Scenario;

use super::config::ZoneConfig;
use super::explore::{Options, explore};
use super::inequality::{Inequality, a_point, contradicts, within_domain};
use super::replay::keys_breaking_along;

/// How many cases [`cover`] may split one question into before it answers "unknown".
const MAX_CASES: usize = 20_000;

/// How many single points one property's violated side may check.
const MAX_PROBES: usize = 16;

/// The most symbolic states one point's check may explore (a point past it proves nothing).
const PROBE_ZONES: usize = 1_000_000;

/// Whether the parts cover a region.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Cover {
    /// Every value of the domain in the region is in a part.
    Covered,
    /// This piece of the region (not shown empty within the domain) is in no part.
    Uncovered(Vec<Inequality>),
    /// Too many cases to tell.
    Unknown,
}

/// Whether every value of the domain in `region` is in one of `parts`: the piece of
/// `region` outside the first part (one negated inequality of it at a time) must be in the
/// rest. Emptiness is decided by elimination that keeps every whole-number solution
/// ([`contradicts`]), so "covered" is a proof; an uncovered piece may still hold no whole
/// number.
pub(crate) fn cover(
    region: &[Inequality],
    parts: &[Vec<Inequality>],
    domain: &[Inequality],
) -> Cover {
    let mut budget = MAX_CASES;
    cover_within(region, parts, domain, &mut budget)
}

fn cover_within(
    region: &[Inequality],
    parts: &[Vec<Inequality>],
    domain: &[Inequality],
    budget: &mut usize,
) -> Cover {
    if *budget == 0 {
        return Cover::Unknown;
    }
    *budget -= 1;
    let given: Vec<Inequality> = region.iter().chain(domain).cloned().collect();
    if contradicts(&given) {
        return Cover::Covered;
    }
    let Some((first, rest)) = parts.split_first() else {
        return Cover::Uncovered(region.to_vec());
    };
    let meets: Vec<Inequality> = given.iter().chain(first).cloned().collect();
    if contradicts(&meets) {
        return cover_within(region, rest, domain, budget);
    }
    for i in first {
        let outside: Vec<Inequality> = region.iter().cloned().chain([i.negated()]).collect();
        match cover_within(&outside, rest, domain, budget) {
            Cover::Covered => {}
            other => return other,
        }
    }
    Cover::Covered
}

/// What a synthesis checks single points with.
pub(crate) struct Probe<'a> {
    /// The symbolic automaton (parameters set): counterexamples are replayed on it.
    pub(crate) config: &'a ZoneConfig,
    /// The values the synthesis speaks for.
    pub(crate) domain: &'a [Inequality],
    /// Where points are looked for first: the scenario's own values.
    pub(crate) near: &'a [i64],
    /// The scenario at a point of the keys (`None`: not a valid scenario).
    pub(crate) at: &'a dyn Fn(&[i64]) -> Option<Scenario>,
}

impl Probe<'_> {
    /// Adds to `breaking` regions where `property` breaks, point by point, until they cover
    /// every region of `may`; whether they do.
    pub(crate) fn complete(
        &self,
        property: Property,
        may: &[Vec<Inequality>],
        breaking: &mut Vec<Vec<Inequality>>,
    ) -> bool {
        if self.first_uncovered(may, breaking) == Cover::Covered {
            return true;
        }
        // First the file's neighbours one tick below each key, where a boundary the file sits
        // on breaks: a region around them proves that side even where the rest stays open.
        // Only a neighbour that may break and is not proved broken yet is checked.
        for k in 0..self.near.len() {
            let mut below = self.near.to_vec();
            below[k] -= 1;
            let holds_in = |r: &Vec<Inequality>| r.iter().all(|i| i.holds_at(&below));
            let in_domain = self.domain.iter().all(|i| i.holds_at(&below));
            if in_domain && may.iter().any(holds_in) && !breaking.iter().any(holds_in) {
                breaking.extend(self.around(&below, property));
            }
        }
        for _ in 0..MAX_PROBES {
            let piece = match self.first_uncovered(may, breaking) {
                Cover::Covered => return true,
                Cover::Unknown => return false,
                Cover::Uncovered(piece) => piece,
            };
            let system: Vec<Inequality> = piece.iter().chain(self.domain).cloned().collect();
            let Some(point) = a_point(&system, self.near) else {
                return false;
            };
            let around = self.around(&point, property);
            // Nothing around the point: it holds there, or its run took a branch the
            // symbolic automaton keeps elsewhere. Either way this side stays open.
            if around.is_empty() {
                return false;
            }
            breaking.extend(around);
        }
        matches!(self.first_uncovered(may, breaking), Cover::Covered)
    }

    /// The regions around `point` where its counterexample breaks `property`.
    fn around(&self, point: &[i64], property: Property) -> Vec<Vec<Inequality>> {
        self.breaking_at(point, property)
            .into_iter()
            .filter(|r| r.iter().all(|i| i.holds_at(point)))
            .filter_map(|r| within_domain(r, self.domain))
            .collect()
    }

    fn first_uncovered(&self, may: &[Vec<Inequality>], breaking: &[Vec<Inequality>]) -> Cover {
        for region in may {
            match cover(region, breaking, self.domain) {
                Cover::Covered => {}
                other => return other,
            }
        }
        Cover::Covered
    }

    /// The regions where the counterexample at `point` (the zone engine's, at those values)
    /// breaks `property`, replayed symbolically; none when it holds there.
    fn breaking_at(&self, point: &[i64], property: Property) -> Vec<Vec<Inequality>> {
        let Some(scenario) = (self.at)(point) else {
            return Vec::new();
        };
        let Ok(config) = ZoneConfig::from_scenario(&scenario) else {
            return Vec::new();
        };
        let options = Options {
            max_zones: PROBE_ZONES,
            ..Options::default()
        };
        let outcome = explore(&config, options);
        let Some(steps) = outcome.counterexample(property) else {
            return Vec::new();
        };
        keys_breaking_along(self.config, steps, property)
    }
}
