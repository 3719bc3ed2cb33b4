//! One scenario's chapter: everything its page shows, each piece from a run of the checker.

use std::time::Instant;

use anyhow::Result;
use redlock_lab::cause;
use redlock_lab::check::{self, Check, Report, StoryPath};
use redlock_lab::model::{RedlockModel, Step, World};
use redlock_lab::report::Timeline;
use redlock_lab::scenario::{Scenario, property};
use stateright::Model;

use super::pair::{self, Pair};

/// What a scenario's page shows.
pub(super) struct Chapter {
    /// The scenario.
    pub scenario: Scenario,
    /// The file's text, as the checker read it.
    pub text: String,
    /// The check, with the necessary causes of every violated property.
    pub report: Report,
    /// The counterexample the page draws, if some safety property is violated.
    pub timeline: Option<Timeline>,
    /// The mitigation re-checked, and the run beside the violated one.
    pub pair: Option<Pair>,
    /// Seconds the chapter took to compute, every re-check included.
    pub seconds: f64,
}

impl Chapter {
    /// Checks `scenario` (its text is `text`) and everything its page shows; `explorer` is
    /// the Explorer's address (`http://127.0.0.1:3000`).
    pub(super) fn new(scenario: Scenario, text: String, explorer: &str) -> Result<Chapter> {
        let start = Instant::now();
        let mut report = Check::new(&scenario).run();
        // Each fault drawn says whether the violation needs it: one re-check per ingredient.
        cause::annotate(&Check::new(&scenario), &mut report);
        let told = traced(&scenario, &report);
        let timeline = told.as_ref().map(|told| {
            let necessary = report
                .property(&told.story.property)
                .and_then(|p| p.necessary.clone());
            let timeline = told
                .timeline()
                .with_explorer(explorer_links(&scenario, &told.path, explorer));
            match necessary {
                Some(necessary) => timeline.with_causes(necessary),
                None => timeline,
            }
        });
        let pair = pair::Pair::new(&scenario, &text, told.as_ref())?;
        let (timeline, pair) = pair::align(timeline, pair);
        Ok(Chapter {
            scenario,
            text,
            report,
            timeline,
            pair,
            seconds: start.elapsed().as_secs_f64(),
        })
    }
}

/// The counterexample `trace` would draw: the story's property (a lost update first), a
/// safety property only; for a zone-engine report, whose properties carry no story, the
/// first violated one with a counterexample, replayed through the discrete model as `trace`
/// does.
fn traced(scenario: &Scenario, report: &Report) -> Option<StoryPath> {
    let safety = |name: &&str| *name != property::EVENTUALLY_ACQUIRED;
    let with_counterexample = |name: &&str| {
        report
            .property(name)
            .is_some_and(|p| p.counterexample.is_some())
    };
    let name = check::default_property(report).filter(safety).or_else(|| {
        [property::NO_LOST_UPDATE]
            .into_iter()
            .chain(report.properties.iter().map(|p| p.name.as_str()))
            .filter(safety)
            .find(with_counterexample)
    })?;
    check::story_path(scenario, report, name)
}

/// For each step of `path` from step 1, the address of the state after it in
/// `redlock-lab explore` (whose URL names a state by the index of each step among the steps
/// enabled before it, after the index of the initial state). The indices come from the
/// Explorer's own model replaying the path's steps, so a link opens the state the page
/// shows; a path that model cannot follow (told with two clients standing for three, say)
/// gets links only as far as it can.
pub(super) fn explorer_links(
    scenario: &Scenario,
    path: &[(World, Option<Step>)],
    explorer: &str,
) -> Vec<String> {
    let model = RedlockModel::new(scenario);
    let Some(mut state) = model.init_states().into_iter().next() else {
        return Vec::new();
    };
    let mut indices = String::from("0");
    let mut links = Vec::new();
    for step in path.iter().filter_map(|(_, step)| *step) {
        let mut actions = Vec::new();
        model.actions(&state, &mut actions);
        let Some(index) = actions.iter().position(|a| *a == step) else {
            break;
        };
        let Some(next) = model.next_state(&state, step) else {
            break;
        };
        indices.push_str(&format!("/{index}"));
        links.push(format!("{explorer}/#/steps/{indices}"));
        state = next;
    }
    links
}
