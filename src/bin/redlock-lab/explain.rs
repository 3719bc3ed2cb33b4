//! `redlock-lab explain`: one scenario taught end to end — the claim and who made it, the
//! verdict the checker finds (with the reason in one paragraph), the shortest counterexample,
//! and the mitigation that flips the verdict, checked on the scenario that applies it.

use std::path::PathBuf;

use anyhow::{Context, Result};
use redlock_lab::check::{self, Check, Engine, PropertyReport, Report};
use redlock_lab::report::Story;
use redlock_lab::scenario::{Ingredient, Mitigation, Scenario, Source, Verdict, property};
use redlock_lab::{catalog, cause};

use crate::Outcome;
use crate::inputs;
use crate::limits::Limits;
use crate::watch::Watch;

/// Arguments of `explain`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A catalog name (file name, alias or unique prefix), or a scenario file.
    name: PathBuf,
    #[command(flatten)]
    limits: Limits,
}

/// A check of the command's, bounded by its limits and watched under a label.
type Bounded<'a> = dyn Fn(Check, &str) -> Check + 'a;

/// The property a scenario is about: the one its story tells (`check::default_property`:
/// the lost update of a storage scenario, else the first violated property with a
/// counterexample), else its first violated property, else mutual exclusion.
fn primary(report: &Report) -> &PropertyReport {
    let violated = |p: &&PropertyReport| p.verdict == Verdict::Violated;
    check::default_property(report)
        .and_then(|name| report.property(name))
        .or_else(|| report.properties.iter().find(violated))
        .or_else(|| report.property(property::MUTUAL_EXCLUSION))
        .unwrap_or(&report.properties[0])
}

/// What "violated" means for `name`, as the end of "… a run in which …".
fn meaning(name: &str) -> &'static str {
    match name {
        property::MUTUAL_EXCLUSION => "two clients believe they hold the lock at the same time",
        property::STORAGE_SAFETY => {
            "the storage applies an op of an earlier lock after one of a later lock (the fencing tokens did not keep the order of the acquisitions)"
        }
        property::NO_LOST_UPDATE => "an acknowledged write is lost",
        property::LOCK_ACQUIRED => "no client ever acquires the lock",
        property::EVENTUALLY_ACQUIRED => {
            "the lock is not acquired before the horizon (by any client, or by the one \
             `[liveness] client` names), although processes are prompt"
        }
        _ => "the property fails",
    }
}

/// What "holds" means for `name`, as a clause.
fn never(name: &str) -> &'static str {
    match name {
        property::MUTUAL_EXCLUSION => {
            "in none of them do two clients believe they hold the lock at the same time"
        }
        property::STORAGE_SAFETY => {
            "the storage never applies an op of an earlier lock after one of a later lock"
        }
        property::NO_LOST_UPDATE => "no acknowledged write is ever lost",
        property::EVENTUALLY_ACQUIRED => {
            "on every bounded run with prompt processes the lock is acquired (by some client, \
             or by the one `[liveness] client` names)"
        }
        _ => "the property is never broken",
    }
}

/// `a`, `a and b`, `a, b and c`.
fn join<S: AsRef<str>>(items: &[S]) -> String {
    match items {
        [] => String::new(),
        [one] => one.as_ref().to_owned(),
        [rest @ .., last] => format!(
            "{} and {}",
            rest.iter()
                .map(AsRef::as_ref)
                .collect::<Vec<_>>()
                .join(", "),
            last.as_ref()
        ),
    }
}

/// The verdict and its reason, in one paragraph.
fn reason(report: &Report, p: &PropertyReport, story: Option<&Story>) -> String {
    // The zone engine counts symbolic states: zones, each a set of clock values explored as
    // one.
    let noun = if report.engine == Engine::Zones {
        "zones"
    } else {
        "states"
    };
    let n = report.unique_states;
    let counted = format!("{n} {noun}");
    match (story, p.verdict, p.name.as_str()) {
        (Some(story), _, _) => {
            let mut events: Vec<String> = story
                .lines
                .iter()
                .filter(|l| l.fault || l.breaks.is_some())
                .map(|l| format!("at t={} {}", l.t, l.sentence))
                .collect();
            if let Some(detail) = story.lines.last().and_then(|l| l.detail.clone()) {
                events.push(format!("so {detail}"));
            }
            format!(
                "{} is violated: among {counted} the checker found a run of {} steps \
                 in which {}: {}.",
                p.name,
                story.steps,
                meaning(&p.name),
                events.join("; ")
            )
        }
        (None, Verdict::Holds, property::LOCK_ACQUIRED) => format!(
            "lock acquired holds: some client does acquire the lock, so the other verdicts \
             are not vacuous ({counted} explored)."
        ),
        (None, Verdict::Holds, _) => {
            // Nothing is violated: every property that holds is part of the answer.
            let held: Vec<&str> = report
                .properties
                .iter()
                .filter(|p| p.verdict == Verdict::Holds && p.name != property::LOCK_ACQUIRED)
                .map(|p| p.name.as_str())
                .collect();
            let clauses: Vec<&str> = held.iter().map(|name| never(name)).collect();
            format!(
                "{} {}: the checker explored all {n} reachable {noun} — every \
                 interleaving of the messages, clocks and faults the scenario allows — and {}.",
                join(&held),
                if held.len() == 1 { "holds" } else { "hold" },
                join(&clauses)
            )
        }
        (None, Verdict::Violated, name) => format!(
            "{name} is violated: among {counted} the checker found a run in which {}.",
            meaning(name)
        ),
        (None, Verdict::Incomplete, name) => format!(
            "{name} is not settled: the check stopped after {counted}, before it could \
             decide."
        ),
    }
}

/// The sentence the claim rests on, told after the prose so the reader can weigh the claim
/// against its source's own words; empty for a derivation that quotes nothing.
fn citation(scenario: &Scenario) -> String {
    let Some(citation) = &scenario.citation else {
        return String::new();
    };
    let role = if scenario.source == Source::Derived {
        "Builds on"
    } else {
        "Source"
    };
    format!("{role} ({}): “{}”\n\n", citation.source, citation.quote)
}

/// How long the checker's tick is, for a file written in real units; empty for a file that
/// counts abstract ticks. Every number the story tells is a count of these ticks.
fn resolution(scenario: &Scenario) -> String {
    let Some(tick) = scenario.resolution else {
        return String::new();
    };
    let tick = humantime::format_duration(std::time::Duration::from_millis(tick.as_u64()));
    format!(
        "Time: the file writes durations, and one tick is {tick}; the story counts in ticks.\n\n"
    )
}

/// For which sizes each settled safety verdict is proved, and by which argument.
fn sizes(report: &Report) -> String {
    let lines: Vec<String> = report
        .properties
        .iter()
        .filter_map(|p| p.reach_sentence(report.nodes, report.clients))
        .map(|sentence| format!("  {sentence}.\n"))
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "\nSizes (the arguments are in the crate's `check::reach` documentation):\n{}",
        lines.concat()
    )
}

/// Prints the explanation; exit 1 when a verdict differs from `[expect]`.
pub(crate) fn run(args: &Args) -> Result<Outcome> {
    args.limits.refuse_zeros()?;
    let scenario = inputs::load_one(&args.name)?;
    let memory = args.limits.memory();
    let watch = Watch::new("explain", None, true);
    let bounded = |check: Check, label: &str| {
        watch.watching(args.limits.apply(check, memory), label.to_owned())
    };
    let report = bounded(Check::new(&scenario), &scenario.name).run_with_causes();
    let main = primary(&report);
    // The story the checker's report tells for it (for a lost update: the stale write that
    // lands after a newer one, when the checker finds that run).
    let told = check::story_path(&scenario, &report, &main.name);
    let story = told.as_ref().map(|t| &t.story);
    let mut out = format!(
        "{} — {}\n({})\n\nThe claim ({}): {}\n\n{}\n\n",
        scenario.name,
        scenario.title,
        scenario.file,
        scenario.source,
        scenario.claim,
        scenario.prose.trim()
    );
    out.push_str(&citation(&scenario));
    out.push_str(&resolution(&scenario));
    out.push_str(&format!("Verdict: {}\n", reason(&report, main, story)));
    for p in &report.properties {
        let expected = match p.expected {
            Some(e) if e == p.verdict => "as [expect] says".to_owned(),
            Some(e) if p.verdict == Verdict::Incomplete => format!("[expect] says {e}"),
            Some(e) => format!("but [expect] says {e}"),
            None => "not in [expect]".to_owned(),
        };
        out.push_str(&format!("  {}: {} ({expected})\n", p.name, p.verdict));
    }
    out.push_str(&sizes(&report));
    out.push_str(&why_lines(&scenario, main));
    if let Some(story) = story {
        out.push_str(&format!("\n{}", story.to_text()));
    }
    out.push_str(&mitigation_lines(&scenario, main, &bounded)?);
    out.push_str(&broken_by_lines(&scenario));
    watch.suspend(|| out!("{out}"))?;
    Ok(if report.mismatches().next().is_some() {
        Outcome::Mismatch
    } else if report.is_incomplete() {
        Outcome::Incomplete
    } else {
        Outcome::Success
    })
}

/// Why the main property fails: the faults and mistakes the checker found necessary, when
/// it looked.
fn why_lines(scenario: &Scenario, main: &PropertyReport) -> String {
    let Some(necessary) = &main.necessary else {
        return String::new();
    };
    let mut out = String::new();
    // The checker re-run without each fault and mistake the file grants.
    let present = Ingredient::present(scenario);
    out.push_str(&format!(
        "\nWhy: {}.\n",
        capitalise(&cause::sentence(&present, necessary, &main.undetermined))
    ));
    if !present.is_empty() {
        let names: Vec<&str> = necessary.iter().map(|i| i.name()).collect();
        let what = match present.len() {
            1 => "its one fault or mistake".to_owned(),
            n => format!("each of its {n} faults and mistakes"),
        };
        out.push_str(&format!(
            "  (the checker re-ran the scenario without {what}; necessary: [{}])\n",
            names.join(", ")
        ));
    }
    out
}

/// The scenario's mitigation, its patch and the scenario that proves it, or that it names
/// none.
fn mitigation_lines(
    scenario: &Scenario,
    main: &PropertyReport,
    bounded: &Bounded<'_>,
) -> Result<String> {
    let mut out = String::new();
    match &scenario.mitigation {
        Some(mitigation) => {
            out.push_str(&format!("\nMitigation: {}.\n", mitigation.text));
            out.push_str(&patch_lines(scenario, mitigation, bounded)?);
            if let Some(proof) = &mitigation.scenario {
                out.push_str(&proof_line(proof, &main.name, bounded)?);
            }
        }
        None => {
            if main.verdict == Verdict::Violated {
                out.push_str("\nThis scenario names no mitigation.\n");
            }
        }
    }
    Ok(out)
}

/// The scenarios that name this one as their fix.
fn broken_by_lines(scenario: &Scenario) -> String {
    // The other direction: scenarios that name this one as their fix show what breaks it.
    let broken_by: Vec<String> = catalog::CATALOG
        .iter()
        .filter_map(|e| Scenario::from_str(e.file, e.text).ok())
        .filter(|s| {
            s.mitigation
                .as_ref()
                .is_some_and(|m| m.scenario.as_deref() == Some(scenario.name.as_str()))
        })
        .map(|s| format!("  redlock-lab explain {}   # {}\n", s.name, s.title))
        .collect();
    if broken_by.is_empty() {
        return String::new();
    }
    let mut out = "\nWithout the safeguard this scenario keeps:\n".to_owned();
    out.extend(broken_by);
    out
}

/// The mitigation's patch and what the checker says of the patched scenario: every property,
/// re-checked (never read from the file).
fn patch_lines(
    scenario: &Scenario,
    mitigation: &Mitigation,
    bounded: &Bounded<'_>,
) -> Result<String> {
    if mitigation.set.is_empty() {
        return Ok(String::new());
    }
    let text = match catalog::lookup(&scenario.name) {
        Ok(embedded) if embedded.file == scenario.file => embedded.text.to_owned(),
        _ => std::fs::read_to_string(&scenario.file)
            .with_context(|| format!("reading {}", scenario.file))?,
    };
    let fixed = redlock_lab::scenario::patched(&scenario.file, &text, &mitigation.set)?;
    let report = bounded(Check::new(&fixed), &format!("{} patched", fixed.name)).run();
    let mut out = String::from("Patch:\n");
    for (key, value) in &mitigation.set {
        out.push_str(&format!("  {key} = {value}\n"));
    }
    out.push_str(&format!(
        "Re-checked with the patch ({} states):\n",
        report.unique_states
    ));
    for p in &report.properties {
        out.push_str(&format!("  {}: {}\n", p.name, p.verdict));
    }
    Ok(out)
}

/// The catalog scenario the patch yields, re-checked: its verdict on `property`.
fn proof_line(proof: &str, property: &str, bounded: &Bounded<'_>) -> Result<String> {
    let fixed = load_catalog(proof)?;
    let report = bounded(Check::new(&fixed), &fixed.name).run();
    let verdict = report
        .property(property)
        .map_or("not checked".to_owned(), |p| p.verdict.to_string());
    Ok(format!(
        "Proof: `redlock-lab explain {}` — {}: {property} {verdict} there ({} states).\n",
        fixed.name, fixed.title, report.unique_states
    ))
}

/// The sentence with its first letter in upper case.
fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn load_catalog(name: &str) -> Result<Scenario> {
    let embedded = catalog::lookup(name).with_context(|| "the mitigation's scenario")?;
    Ok(Scenario::from_str(embedded.file, embedded.text)?)
}
