//! One figure's search: a family of scenarios with one free value, checked on both sides of
//! its boundary.

use std::fmt::Write as _;

use anyhow::{Context, Result};
use redlock_lab::check::{Check, Engine, Report};
use redlock_lab::property::Property;
use redlock_lab::scenario::{Scenario, Verdict, property};
use redlock_lab::sweep::{Formula, Search, SweepError, formula, search};

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
    pub text: Box<dyn Fn(u32) -> String + 'a>,
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
fn check(scenario: &Scenario) -> Report {
    Check::new(scenario)
        .engine(Engine::Zones)
        .unwrap_or_else(|_| Check::new(scenario))
        .run()
}

/// Runs one family's search and keeps both sides' texts, with `[expect]` set to what the
/// checker found.
pub(super) fn run_family(family: &Family<'_>) -> Result<Found> {
    // Each figure takes from a fraction of a second to minutes: say which one is searched.
    errln!(
        "advise: searching the {} ({} from {} to {} ticks)...",
        family.label,
        family.key,
        family.from,
        family.to
    );
    let started = std::time::Instant::now();
    let mut checks = 0;
    let mut engine = Engine::Discrete;
    let mut texts = std::collections::BTreeMap::new();
    let found = search(
        i64::from(family.from),
        i64::from(family.to),
        |value| {
            checks += 1;
            let text = (family.text)(value as u32);
            // A provisional `[expect]` (the file needs one); the written files get the
            // checker's verdicts instead.
            let mut provisional = text.clone();
            provisional.push_str("\n[expect]\n\"lock acquired\" = \"holds\"\n");
            for name in family.must_hold {
                let _ = writeln!(provisional, "{name:?} = \"holds\"");
            }
            let scenario = Scenario::from_str(&format!("{}.toml", family.slug), &provisional)
                .map_err(SweepError::Scenario)?;
            let report = check(&scenario);
            engine = report.engine;
            texts.insert(value as u32, text);
            Ok(report)
        },
        |report| holds(report, family.must_hold) && acquired(report),
    )
    .with_context(|| format!("the {} scenario", family.slug))?;
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
    errln!(
        "advise: the {} took {checks} checks in {:.1} s",
        family.label,
        started.elapsed().as_secs_f64()
    );
    // The safe side's file (with its `[expect]`), which a figure always has.
    let safe_side = files.iter().find(|(name, _)| name.ends_with("-holds.toml"));
    let formula = value
        .zip(safe_side)
        .and_then(|(v, (_, text))| family_formula(family, v, text));
    Ok(Found {
        value,
        checks,
        files,
        evidence,
        engine,
        proved_for: proved,
        formula,
    })
}

/// The figure `value` of `family` as a formula, from its safe side's file `text`.
fn family_formula(family: &Family<'_>, value: u32, text: &str) -> Option<Formula> {
    let must_hold: Vec<Property> = (family.must_hold.iter())
        .filter_map(|n| Property::from_name(n))
        .collect();
    let file = format!("advise-{}.toml", family.slug);
    let key = (family.key, value);
    formula(&file, text, family.free, key, &must_hold, MAX_ZONES)
}

/// The most symbolic states one formula may take (under a minute): past it the figure is
/// printed without one, and says so.
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
pub(super) fn write_files(args: &Args, found: &[Found]) -> Result<String> {
    let Some(dir) = &args.out else {
        return Ok(String::new());
    };
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut written = 0;
    for (name, text) in found.iter().flat_map(|f| &f.files) {
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
