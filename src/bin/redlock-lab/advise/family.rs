//! One figure's search: a family of scenarios with one free value, checked on both sides of
//! its boundary.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use redlock_lab::check::{Check, Engine, Report, StopReason, Synthesis};
use redlock_lab::plural::count;
use redlock_lab::property::Property;
use redlock_lab::scenario::{Scenario, Verdict, property};
use redlock_lab::sweep::{
    Formula, Search, SweepError, formula, proved_figure, search_guided, synthesize_written,
};

use super::args::Args;

/// One figure's search: the scenario text at each value, and what must hold.
pub(super) struct Family<'a> {
    /// Part of the file names (`drift`, `restart-delay`, …).
    pub slug: &'static str,
    /// What the family's fault is, for the output.
    pub label: &'static str,
    /// The key in the scenario file, for the reader.
    pub key: &'static str,
    /// The range searched.
    pub from: u32,
    pub to: u32,
    /// The scenario at a value (shared by the threads of one phase: the drift's families).
    pub text: Box<dyn Fn(u32) -> String + Send + Sync + 'a>,
    /// The properties that must hold at the figure (and the first of them fails below it).
    pub must_hold: &'static [&'static str],
    /// The keys the figure's formula leaves free (none: no formula).
    pub free: &'static [&'static str],
}

/// What a search found, with the scenario texts of both sides.
pub(super) struct Found {
    /// The smallest safe value in ticks, if any in the range.
    pub value: Option<u32>,
    pub checks: usize,
    /// The value was read off the symbolic exploration and confirmed by the checker on both
    /// sides (else a binary search found it).
    pub read_off: bool,
    pub files: Vec<(String, String)>,
    /// One sentence on the evidence.
    pub evidence: String,
    /// The engine that checked it.
    pub engine: Engine,
    /// For which numbers of nodes and clients the safe side is proved (`all N, any C`), when
    /// there is a safe side.
    pub proved_for: Option<String>,
    /// The figure as a formula over the family's free keys, when it has some and a figure.
    pub formula: Option<Formula>,
    /// Why the search did not settle (a limit stopped it), when it did not: then `value` is
    /// `None` and means nothing.
    pub unsettled: Option<String>,
}

impl Found {
    /// A search the time limit stopped after `checks` checks, at `stage`.
    fn out_of_time(checks: usize, stage: &str) -> Found {
        Found::unsettled(checks, format!("the time limit ran out {stage}"))
    }

    /// A search a limit stopped after `checks` checks, and why.
    pub(super) fn unsettled(checks: usize, why: String) -> Found {
        Found {
            value: None,
            checks,
            read_off: false,
            files: Vec::new(),
            evidence: why.clone(),
            engine: Engine::Zones,
            proved_for: None,
            formula: None,
            unsettled: Some(why),
        }
    }
}

/// The time every search shares (`--time-limit`) and the threads each check may use.
#[derive(Clone, Copy, Debug)]
pub(super) struct Limits {
    /// When every search must have stopped.
    pub deadline: Option<Instant>,
    /// The checker threads of one check: the cores shared among the searches that run at once.
    pub threads: usize,
    /// Whether a synthesis leaves every key of the family's formula free, for the output that
    /// prints the formula (`--verbose`, `--json`), or only the figure's own key, which reads
    /// off the same figure several times faster (the README's check margin: 21 522 zones
    /// against 84 094).
    pub formulas: bool,
}

impl Limits {
    /// What is left of the time limit, if there is one.
    fn remaining(&self) -> Option<Duration> {
        (self.deadline).map(|d| d.saturating_duration_since(Instant::now()))
    }

    fn out_of_time(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}

/// Why a probe of the search ended it: bad input, or a limit that stopped the check.
enum Probe {
    Sweep(SweepError),
    Stopped(StopReason),
}

/// The sizes the safe side's properties are proved for: the narrowest when they differ (a
/// figure is safe only where every property it guards holds).
fn proved_for(report: &Report, properties: &[&str]) -> String {
    let mut reaches: Vec<String> = properties
        .iter()
        .filter_map(|name| report.property(name))
        .map(|p| p.reach.short(p.verdict, report.nodes, report.clients))
        .collect();
    reaches.dedup();
    if reaches.len() == 1 {
        reaches.remove(0)
    } else {
        format!("N={}, C={}", report.nodes, report.clients)
    }
}

fn holds(report: &Report, properties: &[&str]) -> bool {
    properties.iter().all(|name| {
        report
            .property(name)
            .is_some_and(|p| p.verdict == Verdict::Holds)
    })
}

fn acquired(report: &Report) -> bool {
    holds(report, &[property::LOCK_ACQUIRED])
}

/// The check of one family member: the zone engine where it models the file (its cost does
/// not grow with the constants), the discrete engine otherwise.
/// Each check gets what is left of the time limit.
pub(super) fn check(scenario: &Scenario, limits: &Limits) -> Report {
    let mut check = Check::new(scenario).threads(limits.threads);
    if let Some(remaining) = limits.remaining() {
        check = check.time_limit(remaining);
    }
    check.clone().engine(Engine::Zones).unwrap_or(check).run()
}

/// The family's text at `value` with a provisional `[expect]` (a file needs one); the
/// written files get the checker's verdicts instead.
fn provisional(family: &Family<'_>, value: u32) -> String {
    let mut text = (family.text)(value);
    text.push_str("\n[expect]\n\"lock acquired\" = \"holds\"\n");
    for name in family.must_hold {
        let _ = writeln!(text, "{name:?} = \"holds\"");
    }
    text
}

/// The properties the family's figure must keep.
fn must_hold(family: &Family<'_>) -> Vec<Property> {
    (family.must_hold.iter())
        .filter_map(|n| Property::from_name(n))
        .collect()
}

/// Runs one family's search and keeps both sides' texts, with `[expect]` set to what the
/// checker found. The figure is read off one symbolic exploration with the family's keys free
/// and confirmed by a check on each side; where the exploration refuses, or the checker does
/// not confirm it, a binary search of checks finds it. A limit that stops the exploration or a
/// check leaves the figure unsettled, and says so.
pub(super) fn run_family(family: &Family<'_>, limits: &Limits) -> Result<Found> {
    // Each figure takes from a fraction of a second to minutes: say which one is searched.
    errln!(
        "advise: searching the {} ({} from {} to {} ticks)...",
        family.label,
        family.key,
        family.from,
        family.to
    );
    let started = std::time::Instant::now();
    let found = search_family(family, limits)?;
    match &found.unsettled {
        None => errln!(
            "advise: the {} took {} in {:.1} s",
            family.label,
            count(found.checks, "check", "checks"),
            started.elapsed().as_secs_f64()
        ),
        Some(why) => errln!(
            "advise: the {} did not settle after {:.1} s: {why}",
            family.label,
            started.elapsed().as_secs_f64()
        ),
    }
    Ok(found)
}

/// [`run_family`]'s search, without its progress lines.
fn search_family(family: &Family<'_>, limits: &Limits) -> Result<Found> {
    if limits.out_of_time() {
        return Ok(Found::out_of_time(0, "before its search began"));
    }
    let file = format!("advise-{}.toml", family.slug);
    // Explored from the middle of the range, where a key one tick up or down is still a
    // valid file (the regions do not depend on where the exploration starts).
    let middle = family.from + (family.to - family.from) / 2;
    let free: Vec<&str> = (family.free.iter().copied())
        .filter(|&key| limits.formulas || key == family.key)
        .collect();
    let synthesis = synthesize_written(
        &file,
        &provisional(family, middle),
        &free,
        MAX_ZONES,
        limits.remaining(),
    );
    if limits.out_of_time() {
        return Ok(Found::out_of_time(0, "during its symbolic exploration"));
    }
    let range = (i64::from(family.from), i64::from(family.to));
    let guess = (synthesis.as_ref())
        .and_then(|s| s.as_ref().ok())
        .and_then(|s| proved_figure(s, family.key, &must_hold(family), range));
    let (mut checks, mut engine) = (0, Engine::Discrete);
    let mut texts = BTreeMap::new();
    let searched = search_guided(
        range,
        guess,
        |value| {
            checks += 1;
            let text = provisional(family, value as u32);
            let scenario = Scenario::from_str(&file, &text)
                .map_err(|e| Probe::Sweep(SweepError::Scenario(e)))?;
            let report = check(&scenario, limits);
            if let Some(reason) = report.stopped {
                return Err(Probe::Stopped(reason));
            }
            engine = report.engine;
            texts.insert(value as u32, (family.text)(value as u32));
            Ok(report)
        },
        |report| holds(report, family.must_hold) && acquired(report),
    );
    let (found, read_off) = match searched {
        Ok(searched) => searched,
        Err(Probe::Sweep(error)) => {
            return Err(error).with_context(|| format!("the {} scenario", family.slug));
        }
        Err(Probe::Stopped(StopReason::TimeLimit)) => {
            let stage = format!("after {checks} checks");
            return Ok(Found::out_of_time(checks, &stage));
        }
        Err(Probe::Stopped(reason)) => {
            let why = format!("check {checks} stopped at the {reason}");
            return Ok(Found::unsettled(checks, why));
        }
    };
    let narrow = !proof_reaches_five_masters(&found, family);
    let found = settled(
        family,
        (found, read_off),
        synthesis,
        &texts,
        (checks, engine),
    );
    Ok(checked_at_five_masters(found, narrow, family, limits))
}

/// `found`, checked again at five masters (the deployment Redlock recommends) on both sides
/// when its proof does not reach them (`narrow`); not advised if it is not safe there.
fn checked_at_five_masters(
    mut found: Found,
    narrow: bool,
    family: &Family<'_>,
    limits: &Limits,
) -> Found {
    let Some(value) = found.value.filter(|_| narrow) else {
        return found;
    };
    // Not counted among the checks that found and confirmed the figure: the note says them.
    match at_five_masters(family, value, limits) {
        Ok(note) => found.proved_for = found.proved_for.map(|p| p + &note),
        Err(why) => return Found::unsettled(found.checks, why),
    }
    found
}

/// Whether the proof of a search's safe side reaches five masters (a search with no safe side
/// has nothing to carry).
fn proof_reaches_five_masters(found: &Search, family: &Family<'_>) -> bool {
    match found {
        Search::Boundary { at, .. } | Search::AtStart { at } => {
            reaches_five_masters(at, family.must_hold)
        }
        Search::Nowhere { .. } => true,
    }
}

/// The masters Redlock recommends.
const FIVE_MASTERS: usize = 5;

/// Whether the checker proved every property `must_hold` names at five masters too.
fn reaches_five_masters(report: &Report, must_hold: &[&str]) -> bool {
    must_hold.iter().all(|name| {
        (report.property(name)).is_some_and(|p| p.reach.covers_nodes(FIVE_MASTERS, report.nodes))
    })
}

/// The figure `value` checked at five masters on both sides, where its proof covers only the
/// file's node count: a note for the sizes it is proved for, or why it is not safe there (then
/// the figure is not advised).
fn at_five_masters(family: &Family<'_>, value: u32, limits: &Limits) -> Result<String, String> {
    let safe_at = |value: u32| {
        let text = provisional(family, value);
        let scenario = Scenario::from_str("advise-five-masters.toml", &text).ok()?;
        let report = check(&scenario.with_nodes(FIVE_MASTERS).ok()?, limits);
        report
            .stopped
            .is_none()
            .then(|| holds(&report, family.must_hold) && acquired(&report))
    };
    let below = (value > family.from).then(|| safe_at(value - 1)).flatten();
    match (safe_at(value), below) {
        (None, _) => Ok(String::new()),
        (Some(false), _) => Err(format!(
            "{} = {value} holds at three masters but not at {FIVE_MASTERS}",
            family.key
        )),
        (Some(true), Some(false)) => Ok(format!("; the same boundary at N={FIVE_MASTERS}")),
        (Some(true), _) => Ok(format!("; safe at N={FIVE_MASTERS} too")),
    }
}

/// A settled search as a [`Found`]: the files of both sides, with `[expect]` set to what the
/// checker found, and the formula at the figure.
fn settled(
    family: &Family<'_>,
    (found, read_off): (Search, bool),
    synthesis: Option<Result<Synthesis, SweepError>>,
    texts: &BTreeMap<u32, String>,
    (checks, engine): (usize, Engine),
) -> Found {
    let file = |value: u32, report: &Report, side: &str| {
        // Each side gets its own scenario name, so a folder of them has no duplicates.
        let text = with_expect(&texts[&value], report).replacen(
            &format!("name = \"advise-{}\"", family.slug),
            &format!("name = \"advise-{}-{side}\"", family.slug),
            1,
        );
        (format!("advise-{}-{side}.toml", family.slug), text)
    };
    let (value, evidence, files, proved) = sides(found, family, file);
    let formula = value.zip(synthesis).map(|(v, synthesis)| match synthesis {
        Ok(synthesis) => formula(&synthesis, (family.key, v), &must_hold(family)),
        Err(e) => Formula::NotDerived(e.to_string()),
    });
    Found {
        value,
        checks,
        read_off,
        files,
        evidence,
        engine,
        proved_for: proved,
        formula,
        unsettled: None,
    }
}

/// The most symbolic states one formula may take (under a minute): past it the figure is
/// found by a binary search and printed without a formula, and says so.
const MAX_ZONES: usize = 500_000;

/// What a family's search found, side by side: the safe value, the evidence in words, the
/// files of both sides (`file` writes one), and the sizes the safe side is proved for.
type Sides = (Option<u32>, String, Vec<(String, String)>, Option<String>);

fn sides(
    found: Search,
    family: &Family<'_>,
    file: impl Fn(u32, &Report, &str) -> (String, String),
) -> Sides {
    match found {
        Search::Boundary { first, at, before } => {
            let first = first as u32;
            (
                Some(first),
                format!("{} = {} holds, {} violated", family.key, first, first - 1),
                vec![
                    file(first, &at, "holds"),
                    file(first - 1, &before, "violated"),
                ],
                Some(proved_for(&at, family.must_hold)),
            )
        }
        Search::AtStart { at } => (
            Some(family.from),
            format!(
                "{} = {} holds, the smallest value there is",
                family.key, family.from
            ),
            vec![file(family.from, &at, "holds")],
            Some(proved_for(&at, family.must_hold)),
        ),
        Search::Nowhere { last } => (
            None,
            format!("even {} = {} is violated", family.key, family.to),
            vec![file(family.to, &last, "violated")],
            None,
        ),
    }
}

/// `text` with an `[expect]` table of every property the checker reported.
fn with_expect(text: &str, report: &Report) -> String {
    let mut out = text.to_owned();
    out.push_str("\n[expect]\n");
    for p in &report.properties {
        let _ = writeln!(out, "{:?} = \"{}\"", p.name, p.verdict);
    }
    out
}

/// Writes every scenario file under `--out`, and returns the line that says where (empty
/// without `--out`).
pub(super) fn write_files<'a>(
    args: &Args,
    found: impl IntoIterator<Item = &'a Found>,
) -> Result<String> {
    let Some(dir) = &args.out else {
        return Ok(String::new());
    };
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut written = 0;
    for (name, text) in found.into_iter().flat_map(|f| &f.files) {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        written += 1;
    }
    Ok(format!(
        "\nwrote {written} scenario files to {}; `redlock-lab check {}` proves every figure again\n",
        dir.display(),
        dir.display()
    ))
}
