//! Which counterexample a scenario's story tells, asked of the checker.
//!
//! `trace`, `explain` and the library's stories do not search on their own: they run a
//! [`Check`] and tell a path its report returned, replayed through the model so that every
//! rendering (text, Mermaid, SVG, JSON) reads the same states and events.
//!
//! One rule chooses the story of a storage scenario. Its shortest lost update is usually a
//! stale write landing *between* a newer holder's read and write, so the newer write erases
//! the stale one. The damage Kleppmann draws is the other order: the stale write lands *after*
//! the newer write and erases it. [`story`] tells that one for `no lost update` whenever the
//! checker finds it, and [`default_property`] makes `no lost update` the story a storage
//! scenario tells first.

use super::engine::Engine;
use crate::model::{Activity, Event, Mode, RedlockModel, Step, World, breaks, path_moments};
use crate::property::Property;
use crate::report::{Story, Timeline};
use crate::scenario::{Scenario, Verdict, property};
use crate::storage::StorageOp;

use super::{Check, Invariant, Report};

/// A story and the path it tells (states with the step taken from each; the last step is
/// `None`), for renderings that draw the path itself (the SVG).
#[derive(Clone, Debug)]
pub struct StoryPath {
    /// The story.
    pub story: Story,
    /// The model the path belongs to.
    pub model: RedlockModel,
    /// The path.
    pub path: Vec<(World, Option<Step>)>,
}

impl StoryPath {
    /// The story as a timeline (`trace --format html`).
    pub fn timeline(&self) -> Timeline {
        Timeline::new(&self.model, &self.story, &self.path)
    }
}

/// The name of the helper invariant that finds a stale write about to land on a newer one.
const STALE_WRITE_WAITS: &str = "no stale write waits behind a newer one";

/// The property a scenario's story is about, from a report of it: `no lost update` when it
/// is violated (the damage a storage scenario exists to show), else the first violated
/// property that has a counterexample, else `None`.
pub fn default_property(report: &Report) -> Option<&str> {
    let violated = |name: &str| {
        report
            .property(name)
            .is_some_and(|p| p.verdict == Verdict::Violated && has_story(report, p))
    };
    if violated(property::NO_LOST_UPDATE) {
        return Some(property::NO_LOST_UPDATE);
    }
    report
        .properties
        .iter()
        .find(|p| p.verdict == Verdict::Violated && has_story(report, p))
        .map(|p| p.name.as_str())
}

/// Whether the discrete engine found `p`'s counterexample (a zone engine's run is told as
/// its own numbered steps first).
fn has_story(report: &Report, p: &super::PropertyReport) -> bool {
    report.engine == Engine::Discrete && p.steps.is_some()
}

/// Checks `scenario` and tells the counterexample of `property`, or `None` when the checker
/// finds none (the property holds, or it is a `sometimes` property).
pub fn story(scenario: &Scenario, property: &str) -> Option<Story> {
    let report = Check::new(scenario).run();
    story_path(scenario, &report, property).map(|told| told.story)
}

/// Tells the counterexample of `property` that `report` (a check of `scenario`) found: for
/// `no lost update`, the run where a stale write lands after a newer one, when the checker
/// finds one; otherwise the report's own shortest counterexample ([`reported_story_path`]).
pub fn story_path(scenario: &Scenario, report: &Report, property: &str) -> Option<StoryPath> {
    let p = report.property(property)?;
    if p.verdict != Verdict::Violated {
        return None;
    }
    if property == property::NO_LOST_UPDATE
        && let Some(told) = overwrite(scenario)
    {
        return Some(told);
    }
    reported_story_path(scenario, report, property)
}

/// Tells exactly the counterexample of `property` that `report` returned, replayed through the
/// model that found it: a report holds verdicts and paths, and its stories are rendered here,
/// on demand.
pub fn reported_story_path(
    scenario: &Scenario,
    report: &Report,
    property: &str,
) -> Option<StoryPath> {
    let p = report.property(property)?;
    if p.verdict != Verdict::Violated {
        return None;
    }
    let mode = if property == property::EVENTUALLY_ACQUIRED {
        Mode::Liveness
    } else {
        Mode::Safety
    };
    let mut model = RedlockModel::with_mode(scenario, mode);
    let fewer_clients = report.split && p.counterexample_not_shortest;
    if mode == Mode::Safety && report.cutoff {
        // The verdict was settled by two clients standing for all: replay it there.
        model = model.with_phantom_clients().unwrap_or(model);
    } else if mode == Mode::Safety && fewer_clients {
        // The split found it with the first two clients alone (`Report::split`).
        let lock = model.without_storage_properties();
        model = lock.with_fewer_clients(2).unwrap_or(lock);
    }
    let path = replay(&model, p.steps.as_deref()?)?;
    let mut story = Story::from_path(&model, property, &path);
    if report.engine == Engine::Zones {
        story.chosen = Some(
            "the zone engine's path, breadth first, each step at the earliest time it can take"
                .to_owned(),
        );
    } else if p.counterexample_not_shortest && !fewer_clients {
        story.chosen = Some("a counterexample, maybe not the shortest".to_owned());
    }
    Some(StoryPath { story, model, path })
}

/// The states `steps` visit from the initial state, or `None` if one is not enabled.
fn replay(model: &RedlockModel, steps: &[Step]) -> Option<Vec<(World, Option<Step>)>> {
    let mut path = Vec::with_capacity(steps.len() + 1);
    let mut state = model.initial();
    for step in steps {
        let next = state.after(*step)?;
        path.push((state, Some(*step)));
        state = next;
    }
    path.push((state, None));
    Some(path)
}

/// The client whose write, checked under an older epoch than the storage has already seen,
/// still waits to land while some write was acknowledged.
fn stale_writer(w: &World) -> Option<usize> {
    if w.storage.acknowledged_writes == 0 {
        return None;
    }
    w.clients().find_map(|c| match c.activity {
        Activity::Holding { work, .. } => match work.pending {
            Some(StorageOp::Write { epoch, .. }) if epoch < w.storage.max_epoch_applied => {
                Some(c.index)
            }
            _ => None,
        },
        _ => None,
    })
}

/// The shortest run the checker finds to a stale write waiting behind a newer epoch, with
/// that write landing; kept only when its events show the write overwrote a newer one and
/// `no lost update` breaks.
fn overwrite(scenario: &Scenario) -> Option<StoryPath> {
    // The invariant reads the storage and the holders' pending writes and epochs, all in
    // the fingerprint: the reductions stay on.
    let check = Check::new(scenario)
        .invariant(Invariant::new(STALE_WRITE_WAITS, |w| {
            stale_writer(w).is_none()
        }))
        .view_invariants();
    let report = check.run();
    let steps = report.property(STALE_WRITE_WAITS)?.steps.clone()?;
    let model = RedlockModel::new(scenario);
    let mut path = replay(&model, &steps)?;
    let (last, _) = path.pop()?;
    let writer = stale_writer(&last)?;
    let step = Step::Apply(writer as u8);
    let landed = last.after(step)?;
    path.push((last, Some(step)));
    path.push((landed, None));
    let overwrote = path_moments(&path)
        .iter()
        .flatten()
        .any(|m| matches!(m.event, Event::UpdateLost { .. }));
    let end = &path.last()?.0;
    if !overwrote || !breaks(Property::NoLostUpdate, end) {
        return None;
    }
    let mut story = Story::from_path(&model, property::NO_LOST_UPDATE, &path);
    story.chosen = Some("the shortest run where a stale write lands after a newer one".to_owned());
    Some(StoryPath { story, model, path })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The search for a stale write keeps the reductions on (`Check::view_invariants`): it
    /// finds the same verdict and a path of the same length as with every ghost hashed.
    #[test]
    fn the_stale_write_search_finds_what_it_finds_without_the_reductions() {
        for name in [
            "gc-pause-after-acquisition",
            "network-delayed-write",
            "fencing-on-writes-only",
            "synchronous-bounds-margin-2",
            "fencing-counter-after-acquire-restarts-empty",
        ] {
            let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("models")
                .join(format!("{name}.toml"));
            let scenario = Scenario::load(file).expect("a catalog scenario");
            let invariant = || Invariant::new(STALE_WRITE_WAITS, |w| stale_writer(w).is_none());
            let exact = Check::new(&scenario).invariant(invariant()).run();
            let reduced = Check::new(&scenario)
                .invariant(invariant())
                .view_invariants()
                .run();
            let found = |report: &Report| {
                let p = report.property(STALE_WRITE_WAITS).expect("checked");
                (p.verdict, p.steps.as_ref().map(Vec::len))
            };
            assert_eq!(found(&reduced), found(&exact), "{name}");
            assert!(reduced.unique_states <= exact.unique_states, "{name}");
        }
    }
}
