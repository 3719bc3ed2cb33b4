//! The boundary pair: the violated run beside the run that holds.
//!
//! A scenario whose mitigation holds has no counterexample to draw, so "the run that holds"
//! is not a second search result. What the page can show honestly is the same schedule
//! under the patch: each step of the violated run, in order, taken by the patched model
//! while it allows it. Where the whole schedule replays, the two pictures differ only by
//! the patch, and the red overlap is gone from the second; where the patch forbids a step
//! (a smaller jump, a longer restart delay), the replay stops there and the page says which
//! step. Either way the verdict beside it is the checker's re-check of the patched
//! scenario, not the replay.

use anyhow::{Context, Result};
use redlock_lab::check::{Check, Report, StoryPath};
use redlock_lab::model::{RedlockModel, Step, World};
use redlock_lab::report::{Story, Timeline};
use redlock_lab::scenario::{self, Scenario};
use stateright::Model;

/// One key the patch changes.
pub(super) struct Change {
    /// The dotted key.
    pub key: String,
    /// Its value in the file, or `None` when the file leaves it to its default.
    pub before: Option<String>,
    /// The patch's value.
    pub after: String,
}

/// The violated run's schedule replayed under the patch.
pub(crate) struct Replay {
    /// The replayed run.
    pub timeline: Timeline,
    /// Steps replayed, of the violated run's, as its page numbers them.
    pub steps: usize,
    /// The violated run's steps.
    pub of: usize,
    /// The first step the patched model does not take, in the violated run's words.
    pub refused: Option<String>,
    /// Whether the traced property breaks in the replayed run.
    pub breaks: bool,
    /// The replayed run's story (what `replay --patched` executes on real masters).
    pub story: Story,
}

/// A scenario's mitigation, re-checked.
pub(super) struct Pair {
    /// What to do, in one sentence.
    pub text: String,
    /// The catalog scenario that is the patched file, if the file names one.
    pub proof: Option<String>,
    /// The patch, key by key.
    pub changes: Vec<Change>,
    /// The checker's report on the patched scenario (none without a patch).
    pub report: Option<Report>,
    /// The violated run's schedule under the patch.
    pub replay: Option<Replay>,
}

impl Pair {
    /// The mitigation of `scenario` (whose file reads `text`), its patch re-checked and the
    /// run `told` replayed under it; `None` for a scenario with no mitigation.
    pub(super) fn new(
        scenario: &Scenario,
        text: &str,
        told: Option<&StoryPath>,
    ) -> Result<Option<Pair>> {
        let Some(mitigation) = &scenario.mitigation else {
            return Ok(None);
        };
        let mut pair = Pair {
            text: mitigation.text.clone(),
            proof: mitigation.scenario.clone(),
            changes: changes(text, &mitigation.set),
            report: None,
            replay: None,
        };
        if mitigation.set.is_empty() {
            return Ok(Some(pair));
        }
        let fixed = scenario::patched(&scenario.file, text, &mitigation.set)
            .with_context(|| format!("{}: the mitigation's patch", scenario.name))?;
        pair.report = Some(Check::new(&fixed).run());
        pair.replay = told.map(|told| replay(&fixed, told));
        Ok(Some(pair))
    }
}

/// Each key of `set` with the value the file gives it.
fn changes(text: &str, set: &[(String, String)]) -> Vec<Change> {
    let document: Option<toml::Table> = toml::from_str(text).ok();
    set.iter()
        .map(|(key, after)| {
            let mut value = document.as_ref().map(|d| d as &toml::Table);
            let mut found = None;
            for (i, part) in key.split('.').enumerate() {
                let last = i + 1 == key.split('.').count();
                match value.and_then(|table| table.get(part)) {
                    Some(v) if last => found = Some(v.to_string()),
                    Some(v) => value = v.as_table(),
                    None => value = None,
                }
            }
            Change {
                key: key.clone(),
                before: found,
                after: after.clone(),
            }
        })
        .collect()
}

/// `told`'s steps, in order, as far as the patched model takes them.
pub(crate) fn replay(fixed: &Scenario, told: &StoryPath) -> Replay {
    let model = RedlockModel::new(fixed);
    let words = model.describe_path(&told.path);
    // Steps are named as the violated run's page numbers them.
    let shown = told.timeline();
    let number = |step: usize| shown.step_number(step);
    let steps: Vec<Step> = told.path.iter().filter_map(|(_, s)| *s).collect();
    let mut path: Vec<(World, Option<Step>)> = Vec::new();
    let mut state = model.init_states().remove(0);
    let mut refused = None;
    for (i, &step) in steps.iter().enumerate() {
        let mut enabled = Vec::new();
        model.actions(&state, &mut enabled);
        let next = enabled
            .contains(&step)
            .then(|| model.next_state(&state, step))
            .flatten();
        let Some(next) = next else {
            refused = Some(format!(
                "step {}: {}",
                number(i + 1),
                words.get(i).cloned().unwrap_or_default()
            ));
            break;
        };
        path.push((state, Some(step)));
        state = next;
    }
    path.push((state, None));
    let property = told.story.property.clone();
    let story = Story::from_path(&model, &property, &path);
    let breaks = story.lines.iter().any(|l| l.breaks.is_some());
    let replayed = path.len() - 1;
    let caption = match (&refused, breaks) {
        (_, true) => format!("the same schedule under the patch: {property} still breaks"),
        (None, false) => format!(
            "the same {} steps under the patch: {property} does not break in this run",
            number(replayed)
        ),
        (Some(_), false) => format!(
            "the same schedule under the patch, {} of {} steps: the patch rules out step {}",
            number(replayed + 1) - 1,
            number(steps.len()),
            number(replayed + 1)
        ),
    };
    Replay {
        timeline: Timeline::new(&model, &story, &path)
            .with_anchor("patched-step")
            .with_caption(caption),
        steps: number(replayed + 1) - 1,
        of: number(steps.len()),
        refused,
        breaks,
        story,
    }
}

/// Both runs on one axis: the longer one's.
pub(super) fn align(
    timeline: Option<Timeline>,
    mut pair: Option<Pair>,
) -> (Option<Timeline>, Option<Pair>) {
    let replay = pair.as_mut().and_then(|p| p.replay.as_mut());
    match (timeline, replay) {
        (Some(mut timeline), Some(replay)) => {
            timeline.share_axis(&mut replay.timeline);
            (Some(timeline), pair)
        }
        (timeline, _) => (timeline, pair),
    }
}
