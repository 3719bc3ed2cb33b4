//! `redlock-lab trace`: the counterexample the checker found for one scenario, as a timeline.

use std::path::PathBuf;

use anyhow::{Result, bail};
use redlock_lab::cause;
use redlock_lab::check::{self, Check, Engine, Report, StopReason, StoryPath};
use redlock_lab::model::RedlockModel;
use redlock_lab::report::Timeline;
use redlock_lab::scenario::{Scenario, Verdict, property};
use stateright::{Expectation, Model};

use crate::Outcome;
use crate::inputs;
use crate::limits::Limits;
use crate::watch::Watch;
use crate::zone_steps;

/// How to print the trace.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// The story: one line per event, with true time, clocks and beliefs.
    #[default]
    Text,
    /// A Mermaid `sequenceDiagram` (renders on GitHub).
    Mermaid,
    /// The Explorer's SVG sequence diagram.
    Svg,
    /// The story as a JSON object with one entry per event.
    Json,
    /// A timeline page (one self-contained HTML file): true time across, a lane per process,
    /// beliefs and keys as bars, the overlap in red, every step listed under the picture.
    Html,
    /// The timeline's picture alone, as SVG for embedding.
    TimelineSvg,
}

/// Arguments of `trace`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A scenario file or catalog name.
    path: PathBuf,
    /// The property whose counterexample to print (default: the first violated one).
    #[arg(long)]
    property: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    #[command(flatten)]
    limits: Limits,
}

/// Runs the checker, takes the counterexample it found for the property (by default the one
/// the scenario's story is about, see `check::default_property`) and tells it.
pub(crate) fn run(args: &Args) -> Result<Outcome> {
    let scenario = inputs::load_one(&args.path)?;
    let model = RedlockModel::new(&scenario);
    // The safety properties, and the liveness run's when the file asks for it: its bounded
    // counterexample is a story like theirs.
    let liveness = scenario
        .expected(property::EVENTUALLY_ACQUIRED)
        .is_some()
        .then_some(property::EVENTUALLY_ACQUIRED);
    let candidates: Vec<&'static str> = model
        .properties()
        .iter()
        .filter(|p| p.expectation == Expectation::Always)
        .map(|p| p.name)
        .chain(liveness)
        .collect();
    if let Some(wanted) = &args.property
        && !candidates.contains(&wanted.as_str())
    {
        bail!(
            "{}: no property {wanted:?} to trace (it has {})",
            scenario.name,
            candidates.join(", ")
        );
    }
    let report = checked(args, &scenario)?;
    if report.engine == Engine::Zones || report.stopped == Some(StopReason::DiscreteLimit) {
        return trace_zones(args, &scenario, &report);
    }
    let name = match args.property.as_deref() {
        Some(wanted) => Some(wanted),
        None => check::default_property(&report).filter(|name| candidates.contains(name)),
    };
    match name.and_then(|name| check::story_path(&scenario, &report, name)) {
        Some(told) => render(args.format, &told, &report),
        None => Ok(nothing_to_tell(args, &report, &candidates)),
    }
}

/// The check `trace` tells from, within the limits and watched, with each fault labelled
/// needed or not when a timeline is drawn.
fn checked(args: &Args, scenario: &Scenario) -> Result<Report> {
    args.limits.refuse_zeros()?;
    let watch = Watch::new("trace", None, true);
    let limited = args
        .limits
        .apply(Check::new(scenario), args.limits.memory());
    let check = watch.watching(limited, scenario.name.clone());
    let mut report = check.clone().run();
    if matches!(args.format, Format::Html | Format::TimelineSvg) {
        // The timeline labels each fault needed or not: one more check per ingredient.
        cause::annotate(&check, &mut report);
    }
    Ok(report)
}

/// Why there is no story: a limit stopped the check first (exit 3), or every property asked
/// for holds (exit 1).
fn nothing_to_tell(args: &Args, report: &Report, candidates: &[&str]) -> Outcome {
    let unsettled = candidates.iter().copied().find(|name| {
        report
            .property(name)
            .is_some_and(|p| p.verdict == Verdict::Incomplete)
    });
    let what = args
        .property
        .as_deref()
        .or(unsettled)
        .unwrap_or(property::MUTUAL_EXCLUSION);
    if let Some(outcome) = stopped(report, what) {
        return outcome;
    }
    errln!(
        "{}: {} holds, so there is no counterexample to trace",
        report.name,
        if args.property.is_some() {
            what
        } else {
            "every property it traces"
        }
    );
    Outcome::Mismatch
}

/// When a limit stopped the check before `wanted` settled, says so (there is no
/// counterexample to tell yet, and the property is not known to hold): exit 3.
fn stopped(report: &Report, wanted: &str) -> Option<Outcome> {
    let reason = report.stopped?;
    let settled = report
        .property(wanted)
        .is_some_and(|p| p.verdict != Verdict::Incomplete);
    (!settled).then(|| {
        errln!(
            "{}: {wanted} did not settle: the check stopped at the {reason} after {} states, \
             {:.1} s; raise the limit to trace it",
            report.name,
            report.unique_states,
            report.seconds
        );
        Outcome::Incomplete
    })
}

/// Prints `told` in `format`.
fn render(format: Format, told: &StoryPath, report: &Report) -> Result<Outcome> {
    let story = &told.story;
    match format {
        Format::Text => out!("{}", story.to_text())?,
        Format::Mermaid => out!("{}", story.to_mermaid())?,
        Format::Json => outln!("{}", serde_json::to_string_pretty(story)?)?,
        Format::Svg => outln!("{}", told.model.sequence_diagram(&told.path))?,
        Format::Html => out!("{}", timeline(told, report).to_html())?,
        Format::TimelineSvg => outln!("{}", timeline(told, report).to_svg())?,
    }
    Ok(Outcome::Success)
}

/// The told story as a timeline, each fault labelled with whether the violation needs it
/// (from `report`'s necessary causes, when it has them).
fn timeline(told: &StoryPath, report: &Report) -> Timeline {
    let timeline = told.timeline();
    let necessary = report
        .property(&told.story.property)
        .and_then(|p| p.necessary.clone());
    match necessary {
        Some(necessary) => timeline.with_causes(necessary),
        None => timeline,
    }
}

/// A file only the zone engine takes: its counterexample is the zone engine's concrete run,
/// told through the discrete model like any other (the model's states do not depend on the
/// constants; only its search does), or, if the model could not replay it, the zone
/// engine's timed steps.
fn trace_zones(args: &Args, scenario: &Scenario, report: &Report) -> Result<Outcome> {
    // As the discrete engine's trace: the property asked for, else the first one violated
    // (a lost update first, the storage story a reader most needs), else mutual exclusion.
    let violated = |name: &str| {
        report
            .property(name)
            .is_some_and(|p| p.counterexample.is_some())
    };
    let first_violated = [property::NO_LOST_UPDATE]
        .into_iter()
        .chain(report.properties.iter().map(|p| p.name.as_str()))
        .find(|name| violated(name));
    let wanted = args
        .property
        .as_deref()
        .or(first_violated)
        .unwrap_or(property::MUTUAL_EXCLUSION);
    let Some(p) = report
        .property(wanted)
        .filter(|_| report.engine == Engine::Zones)
    else {
        let why = Check::new(scenario)
            .engine(Engine::Zones)
            .err()
            .map_or_else(String::new, |unsupported| format!(", and {unsupported}"));
        bail!(
            "{}: a constant exceeds the {}{why}: nothing can be traced",
            scenario.name,
            StopReason::DiscreteLimit
        );
    };
    let Some(steps) = &p.counterexample else {
        if let Some(outcome) = stopped(report, wanted) {
            return Ok(outcome);
        }
        errln!(
            "{}: {wanted} holds, so there is no counterexample to trace",
            scenario.name
        );
        return Ok(Outcome::Mismatch);
    };
    // The zone engine's concrete run, replayed through the discrete model: a story like any
    // other.
    if let Some(told) = check::story_path(scenario, report, wanted) {
        return render(args.format, &told, report);
    }
    if !matches!(args.format, Format::Text) {
        bail!(
            "{}: its constants are beyond the discrete engine, which tells stories and draws \
             diagrams; the zone engine's counterexample is a list of steps (--format text)",
            scenario.name
        );
    }
    out!("{}", zone_steps::text(&scenario.name, wanted, steps))?;
    Ok(Outcome::Success)
}
