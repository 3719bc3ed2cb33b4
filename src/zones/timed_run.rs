//! A zone counterexample made concrete: a time for every step.
//!
//! The search finds a sequence of steps whose zones are not empty; since the automaton is
//! closed, some run with whole-number times takes them (see the module docs of
//! [`crate::zones`]). This module finds one: the run that takes each step as early as a run
//! that still breaks the property can take it. Two extra clocks do it without any backward
//! computation: `g` is never reset (the time since the start) and `h` is reset at the step
//! being placed, so in the exact zones at the end of the path (no extrapolation, no
//! symmetry) the least value of `g − h` is the earliest time of that step. With the step
//! placed there, the run so far is a point, and the next step is placed the same way.

use crate::property::Property;

use super::automaton::ZoneConfig;
use super::dbm::Dbm;
use super::discrete::Discrete;
use super::successors::ZoneStep;

/// One step of a concrete run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimedStep {
    /// When it is taken, in ticks since the run began.
    pub at: i64,
    /// The step.
    pub step: ZoneStep,
}

/// A concrete run that breaks a property.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimedRun {
    /// Its steps with their times.
    pub steps: Vec<TimedStep>,
    /// The first instant the property is broken (for mutual exclusion, the first instant two
    /// clients believe; for a storage property, the step that broke it).
    pub broken_at: i64,
}

/// The clock that is never reset, and the one reset at the step being placed.
struct Marks {
    start: usize,
    step: usize,
}

/// The earliest concrete run that takes `steps` and breaks `property` on `config`, if any.
pub(crate) fn concretize(
    config: &ZoneConfig,
    steps: &[ZoneStep],
    property: Property,
) -> Option<TimedRun> {
    let clocks = config.clock_count();
    let marks = Marks {
        start: clocks + 1,
        step: clocks + 2,
    };
    let mut state = Discrete::initial(config);
    // Every clock zero: the run's first instant, a point.
    let mut zone: Dbm = Dbm::zero(clocks + 2);
    let mut now = 0;
    let mut timed = Vec::with_capacity(steps.len());
    for (i, &step) in steps.iter().enumerate() {
        let at = ends(
            config,
            &state,
            &zone,
            &steps[i..],
            property,
            Some(marks.step),
        )
        .iter()
        .filter_map(|z| z.least_difference(marks.start, marks.step))
        .min()?;
        let mut delayed = zone.clone();
        delayed.delay_by(i32::try_from(at - now).ok()?);
        // Of the successors the step labels, one from which the rest of the run still
        // breaks the property.
        let (next_state, next_zone) = state
            .successors_by(config, &delayed, step)
            .into_iter()
            .find(|(s, z)| !ends(config, s, z, &steps[i + 1..], property, None).is_empty())?;
        state = next_state;
        zone = next_zone;
        state.forget_expired_keys(config, &mut zone);
        now = at;
        timed.push(TimedStep { at, step });
    }
    let broken_at = ends(config, &state, &zone, &[], property, None)
        .iter()
        .filter_map(|z| z.least_difference(marks.start, 0))
        .min()?;
    Some(TimedRun {
        steps: timed,
        broken_at,
    })
}

/// The exact zones where the run from `(state, zone)` (at an instant, before any delay) that
/// takes `steps` ends with `property` broken; `mark` is reset at the first step.
fn ends(
    config: &ZoneConfig,
    state: &Discrete,
    zone: &Dbm,
    steps: &[ZoneStep],
    property: Property,
    mark: Option<usize>,
) -> Vec<Dbm> {
    let mut state = *state;
    let mut zone = zone.clone();
    // What the search does with every new state.
    if !state.settle(config, &mut zone) {
        return Vec::new();
    }
    let Some((&step, rest)) = steps.split_first() else {
        return state.broken(config, &zone, property);
    };
    let mut out = Vec::new();
    for (next, mut z) in state.successors_by(config, &zone, step) {
        if let Some(m) = mark {
            z.reset(m);
        }
        out.extend(ends(config, &next, &z, rest, property, None));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;
    use crate::zones::explore::{Options, explore};

    /// Takes `run`'s steps at their times from a point, with no look-ahead: each must be
    /// enabled at its time, and `property` broken at `broken_at`.
    fn replays(config: &ZoneConfig, run: &TimedRun, property: Property) -> Result<(), String> {
        let clocks = config.clock_count();
        let mut state = Discrete::initial(config);
        let mut zone: Dbm = Dbm::zero(clocks);
        let mut now = 0;
        for timed in &run.steps {
            if timed.at < now {
                return Err(format!("{timed:?} goes back in time from {now}"));
            }
            zone.delay_by((timed.at - now) as i32);
            now = timed.at;
            if !state.within_invariants(config, &mut zone) {
                return Err(format!("an invariant fails before {timed:?}"));
            }
            let next = state.successors_by(config, &zone, timed.step);
            let Some((s, z)) = next.into_iter().next() else {
                return Err(format!("{timed:?} is not enabled"));
            };
            state = s;
            zone = z;
            state.forget_expired_keys(config, &mut zone);
        }
        zone.delay_by((run.broken_at - now) as i32);
        if state.broken(config, &zone, property).is_empty() {
            return Err(format!("{property:?} is not broken at {}", run.broken_at));
        }
        Ok(())
    }

    /// Every counterexample the zone engine finds in the catalog is a concrete run, which
    /// replays step by step at its times.
    #[test]
    fn every_catalog_counterexample_is_a_concrete_run_that_replays() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
        let mut replayed = 0;
        for entry in std::fs::read_dir(dir).expect("models/") {
            let path = entry.expect("a file").path();
            if path.extension().is_none_or(|e| e != "toml") {
                continue;
            }
            let scenario = Scenario::load(&path).expect("a catalog file");
            let Ok(config) = ZoneConfig::from_scenario(&scenario) else {
                continue;
            };
            let outcome = explore(&config, Options::default());
            for judgement in outcome
                .judgements
                .iter()
                .filter(|j| j.counterexample.is_some())
            {
                let name = &scenario.name;
                let run = judgement.run.as_ref().unwrap_or_else(|| {
                    panic!("{name}: {:?} has no concrete run", judgement.property)
                });
                let steps: Vec<ZoneStep> = run.steps.iter().map(|s| s.step).collect();
                assert_eq!(Some(&steps), judgement.counterexample.as_ref(), "{name}");
                if let Err(why) = replays(&config, run, judgement.property) {
                    panic!("{name}: {why}");
                }
                replayed += 1;
            }
        }
        assert!(replayed >= 20, "{replayed} counterexamples replayed");
    }
}
