//! `redlock-lab check`: run the checker on scenarios and compare with `[expect]`.

use std::path::PathBuf;

use anyhow::{Result, bail};
use redlock_lab::cause;
use redlock_lab::check::{
    self, Check, Engine, PropertyReport, Report, StopReason, available_threads,
};
use redlock_lab::plural::count;
use redlock_lab::scenario::{Ingredient, Scenario, Verdict};

use crate::Outcome;
use crate::inputs;
use crate::limits::Limits;
use crate::table::{self, Paint, Table};
use crate::watch::Watch;
use crate::zone_steps;

/// Arguments of `check`.
#[derive(Debug, Default, clap::Args)]
pub(crate) struct Args {
    /// Scenario files, folders of them, or catalog names; none = the built-in catalog.
    paths: Vec<PathBuf>,
    /// Print one JSON object instead of the rows.
    #[arg(long)]
    json: bool,
    /// Print a table with every property's expected and found verdict and the sizes it is
    /// proved for, and the story of each violated property, instead of one row per scenario.
    #[arg(short, long)]
    verbose: bool,
    /// Checker threads per scenario [default: every core]. Verdicts and counterexamples do
    /// not depend on it.
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    #[command(flatten)]
    limits: Limits,
    /// For each violated property, re-check without each fault and mistake in turn and print
    /// which are necessary (always on with `--json`).
    #[arg(long)]
    why: bool,
    /// Which engine settles the verdicts: `zones` (symbolic time: any size of constants;
    /// mutual exclusion and `lock acquired`, counterexamples as step lists), `discrete`
    /// (every feature and property, stories), or `auto` [default: zones when a constant
    /// exceeds 60 ticks and the zone engine models the file, else discrete].
    #[arg(long, value_name = "ENGINE", value_parser = ["auto", "discrete", "zones"])]
    engine: Option<String>,
}

/// Checks every scenario, prints the verdicts, and says whether they all match.
pub(crate) fn run(args: &Args) -> Result<Outcome> {
    refuse_zero_limits(args)?;
    let loaded = inputs::load_labelled(&args.paths)?;
    let files: Vec<Option<String>> = loaded.iter().map(|l| l.file.clone()).collect();
    let scenarios: Vec<Scenario> = loaded.into_iter().map(|l| l.scenario).collect();
    warn_of_worlds(&scenarios);
    let paint = Paint::for_stdout();
    let reports = if args.json || args.verbose {
        check_all(args, &scenarios, |_, _| Ok(()))?
    } else {
        // One row per scenario, written as soon as it settles (stdout is line-buffered, so
        // each row reaches a pipe at once): a reader sees the run move, and `| head` stops it.
        let rows = Rows::new(&scenarios, &files, args.why);
        outln!("{}", rows.header())?;
        let reports = check_all(args, &scenarios, |index, report| {
            out!("{}", rows.row(index, report, &paint))
        })?;
        outln!("{}", summary(&reports))?;
        if let Some(hint) = story_hint(&reports) {
            outln!("{hint}")?;
        }
        reports
    };
    if args.json {
        let json = serde_json::json!({ "models": reports });
        outln!("{}", serde_json::to_string_pretty(&json)?)?;
    } else if args.verbose {
        out!("{}", render(&scenarios, &reports, &files, &paint))?;
    }
    let mismatches = reports.iter().flat_map(Report::mismatches).count();
    // A settled verdict that contradicts [expect] is news even when another is unknown.
    Ok(if mismatches > 0 {
        Outcome::Mismatch
    } else if reports.iter().any(Report::is_incomplete) {
        Outcome::Incomplete
    } else {
        Outcome::Success
    })
}

/// Refuses a limit of zero threads, states or seconds.
fn refuse_zero_limits(args: &Args) -> Result<()> {
    if args.threads == Some(0) {
        bail!("--threads must be at least 1");
    }
    args.limits.refuse_zeros()
}

/// Warns that a simulator world may be too large to check.
fn warn_of_worlds(scenarios: &[Scenario]) {
    for scenario in scenarios.iter().filter(|s| s.simulate.is_some()) {
        // A simulator world is sized for seeded runs, not for exhausting.
        errln!(
            "note: {name} is one of the simulator's worlds (it has a [simulate] table) and may be \
             far too large to check exhaustively: run `redlock-lab simulate {name}`, or bound the \
             check with --time-limit or --max-states",
            name = scenario.name
        );
    }
}

/// Checks every scenario, showing that it works (a bar for a person watching, except under
/// `--json`), handing each report to `settled` (by the scenario's index) as soon as it is made.
fn check_all(
    args: &Args,
    scenarios: &[Scenario],
    mut settled: impl FnMut(usize, &Report) -> Result<()>,
) -> Result<Vec<Report>> {
    let engine: Engine = args
        .engine
        .as_deref()
        .unwrap_or("auto")
        .parse()
        .map_err(anyhow::Error::msg)?;
    let memory = args.limits.memory();
    let watch = Watch::new("check", Some(scenarios.len() as u64), !args.json);
    let mut reports = Vec::new();
    for (index, scenario) in scenarios.iter().enumerate() {
        let chosen = Check::new(scenario)
            .engine(engine)
            .map_err(|unsupported| anyhow::anyhow!("{}: {unsupported}", scenario.file))?;
        let chosen = chosen.threads(args.threads.unwrap_or_else(available_threads));
        let check = watch.watching(args.limits.apply(chosen, memory), scenario.name.clone());
        let report = if args.why || args.json {
            check.run_with_causes()
        } else {
            check.run()
        };
        watch.suspend(|| settled(index, &report))?;
        if args.json || args.verbose {
            // No row says it: a line now and then does.
            watch.step(|| {
                format!(
                    "{} of {} settled ({} in {:.1} s)",
                    index + 1,
                    scenarios.len(),
                    scenario.name,
                    report.seconds
                )
            });
        } else {
            watch.advance();
        }
        reports.push(report);
    }
    Ok(reports)
}

/// The verdict table (a line per scenario, with its file when it is not the catalog's, then
/// one per property, so it fits 100 columns), the story of each violated property and its
/// necessary causes when asked, then a summary line.
fn render(
    scenarios: &[Scenario],
    reports: &[Report],
    files: &[Option<String>],
    paint: &Paint,
) -> String {
    let mut out = verdict_table(reports, files).render_with(paint);
    out.push('\n');
    push_stopped(&mut out, scenarios, reports);
    push_stories(&mut out, scenarios, reports);
    push_summary(&mut out, reports);
    out
}

/// A line per scenario (what the search explored), with its file when it is not the
/// catalog's, then one per property (its verdict, and for which sizes it is proved).
fn verdict_table(reports: &[Report], files: &[Option<String>]) -> Table {
    let mut table = Table::new(&[
        "scenario / property",
        "expected",
        "verdict",
        "",
        "explored / proved for",
    ]);
    for (report, file) in reports.iter().zip(files) {
        let noun = match report.engine {
            Engine::Zones => "zones",
            _ => "states",
        };
        table.row(vec![
            report.name.clone(),
            String::new(),
            String::new(),
            String::new(),
            format!("{} {noun}, {:.2} s", report.unique_states, report.seconds),
        ]);
        if let Some(file) = file {
            table.note(format!("from {file}"));
        }
        for property in &report.properties {
            let expected = property.expected.map_or("-".to_owned(), |v| v.to_string());
            let mark = match property.expected {
                _ if property.verdict == Verdict::Incomplete => "",
                Some(e) if e == property.verdict => "ok",
                Some(_) => "MISMATCH",
                None => "",
            };
            let reach = match property.verdict {
                Verdict::Incomplete => String::new(),
                verdict => property.reach.short(verdict, report.nodes, report.clients),
            };
            table.row(vec![
                format!("  {}", property.name),
                expected,
                property.verdict.to_string(),
                mark.to_owned(),
                reach,
            ]);
        }
    }
    table
}

/// How far each stopped check got, so the next run can raise the right limit.
fn push_stopped(out: &mut String, scenarios: &[Scenario], reports: &[Report]) {
    for report in reports {
        if let Some(reason) = report.stopped {
            out.push_str(&stopped_line(scenarios, report, reason));
        }
    }
    if reports.iter().any(|r| r.stopped.is_some()) {
        out.push('\n');
    }
}

/// One block per violated property (its story, and its necessary causes when asked), after
/// the table so the table stays readable. The stories are rendered here, from the paths the
/// reports hold.
fn push_stories(out: &mut String, scenarios: &[Scenario], reports: &[Report]) {
    for (scenario, report, p) in scenarios
        .iter()
        .zip(reports)
        .flat_map(|(s, r)| r.properties.iter().map(move |p| (s, r, p)))
    {
        let zone_steps = report.engine == Engine::Zones && p.counterexample.is_some();
        let told = match report.engine {
            Engine::Zones => None,
            _ => check::reported_story_path(scenario, report, &p.name),
        };
        if let Some(told) = &told {
            if p.counterexample_not_shortest {
                out.push_str(
                    "(this counterexample is real but may not be the shortest: a limit stopped \
                     the search for the shortest, or it was found with fewer clients)\n",
                );
            }
            out.push_str(&told.story.to_text());
        } else if let (true, Some(steps)) = (zone_steps, &p.counterexample) {
            out.push_str(&zone_steps::text(&scenario.name, &p.name, steps));
        }
        if let Some(needs) = needs_line(scenario, p) {
            out.push_str(&needs);
            out.push('\n');
        }
        if told.is_some() || zone_steps || p.necessary.is_some() {
            out.push('\n');
        }
    }
}

/// What a violated property needs, when `--why` found it: the ingredients by name, then in
/// words.
fn needs_line(scenario: &Scenario, property: &PropertyReport) -> Option<String> {
    let necessary = property.necessary.as_ref()?;
    let names: Vec<&str> = necessary.iter().map(|i| i.name()).collect();
    Some(format!(
        "{}: {} needs [{}]: {}.",
        scenario.name,
        property.name,
        names.join(", "),
        cause::sentence(
            &Ingredient::present(scenario),
            necessary,
            &property.undetermined
        )
    ))
}

/// The summary line, after the table or the rows.
fn push_summary(out: &mut String, reports: &[Report]) {
    out.push_str(&summary(reports));
    out.push('\n');
}

/// The counts, and whether every verdict matches `[expect]`.
fn summary(reports: &[Report]) -> String {
    let mut out = String::new();
    let properties: usize = reports.iter().map(|r| r.properties.len()).sum();
    let violated = reports
        .iter()
        .flat_map(|r| &r.properties)
        .filter(|p| p.verdict == Verdict::Violated)
        .count();
    let mismatches: Vec<String> = reports
        .iter()
        .flat_map(|r| {
            r.mismatches()
                .map(move |p| format!("{}: {}", r.name, p.name))
        })
        .collect();
    let seconds: f64 = reports.iter().map(|r| r.seconds).sum();
    let incomplete = reports
        .iter()
        .flat_map(|r| &r.properties)
        .filter(|p| p.verdict == Verdict::Incomplete)
        .count();
    let incomplete_text = if incomplete > 0 {
        format!(", {incomplete} incomplete")
    } else {
        String::new()
    };
    out.push_str(&format!(
        "{}, {} ({violated} violated{incomplete_text}) in {seconds:.1} s: ",
        count(reports.len(), "scenario", "scenarios"),
        count(properties, "property", "properties"),
    ));
    // A file beyond both engines is not settled by any limit: its line above says why.
    let raisable = reports
        .iter()
        .any(|r| r.is_incomplete() && r.stopped != Some(StopReason::DiscreteLimit));
    if mismatches.is_empty() && incomplete > 0 {
        out.push_str("every settled verdict matches [expect]");
        if raisable {
            out.push_str("; raise --max-states, --time-limit or --max-memory to settle the rest");
        }
    } else if mismatches.is_empty() {
        out.push_str("every verdict matches [expect]");
    } else {
        out.push_str(&format!(
            "{} from [expect]: {}",
            count(mismatches.len(), "verdict differs", "verdicts differ"),
            mismatches.join(", ")
        ));
    }
    out
}

/// The default view: a row per scenario, its name, its time and its verdicts in a few words,
/// aligned on the longest name so the rows can be written one by one as they settle; under a
/// row, what the verbose table says beside it (the file, why the check stopped, what `--why`
/// found).
struct Rows<'a> {
    scenarios: &'a [Scenario],
    files: &'a [Option<String>],
    why: bool,
    /// The name column's width.
    width: usize,
}

impl<'a> Rows<'a> {
    fn new(scenarios: &'a [Scenario], files: &'a [Option<String>], why: bool) -> Rows<'a> {
        let width = scenarios
            .iter()
            .map(|s| s.name.chars().count())
            .chain(["scenario".len()])
            .max()
            .unwrap_or(0);
        Rows {
            scenarios,
            files,
            why,
            width,
        }
    }

    /// The column heads, with the marks' legend.
    fn header(&self) -> String {
        format!(
            "{:<width$}  {:>7}  verdicts (✗ violated; the rest hold)",
            "scenario",
            "time",
            width = self.width
        )
    }

    /// The row of the scenario at `index`, with its notes, each line ending in a newline.
    fn row(&self, index: usize, report: &Report, paint: &Paint) -> String {
        let mut out = format!(
            "{:<width$}  {:>5.2} s  ",
            report.name,
            report.seconds,
            width = self.width
        );
        // The verdicts wrap within the table's width, under their own column.
        let indent = out.chars().count();
        let parts = verdicts_in_words(report);
        let mut lines = wrap_parts(&parts, table::WIDTH.saturating_sub(indent).max(24)).into_iter();
        let first = lines.next().unwrap_or_default();
        out.push_str(&match first.strip_prefix("MISMATCH") {
            Some(rest) => format!("{}{rest}", paint.cell("MISMATCH")),
            None => first,
        });
        out.push('\n');
        for more in lines {
            out.push_str(&format!("{:indent$}{more}\n", ""));
        }
        let mut notes: Vec<String> = Vec::new();
        if let Some(file) = &self.files[index] {
            notes.push(format!("from {file}"));
        }
        if let Some(reason) = report.stopped {
            notes.push(
                stopped_line(self.scenarios, report, reason)
                    .trim_end()
                    .to_owned(),
            );
        }
        if self.why {
            let scenario = &self.scenarios[index];
            notes.extend(
                report
                    .properties
                    .iter()
                    .filter_map(|p| needs_line(scenario, p)),
            );
        }
        for note in notes {
            out.push_str(&format!("  {note}\n"));
        }
        out
    }
}

/// A scenario's verdicts in a few words: the violated properties after ✗, those that hold
/// against `[expect]` after ✓, the unsettled ones after ?, and how many others hold; a
/// verdict that differs from `[expect]` says what was expected, and the row starts with
/// MISMATCH. Each part is a group of properties, which the row keeps on one line.
fn verdicts_in_words(report: &Report) -> Vec<String> {
    let differs = |p: &&PropertyReport| {
        p.verdict != Verdict::Incomplete && p.expected.is_some_and(|e| e != p.verdict)
    };
    let names = |verdict: Verdict, expected: &str| -> Vec<String> {
        report
            .properties
            .iter()
            .filter(|p| p.verdict == verdict && (verdict != Verdict::Holds || differs(p)))
            .map(|p| match differs(&p) {
                true => format!("{} (expected {expected})", p.name),
                false => p.name.clone(),
            })
            .collect()
    };
    let mut parts = Vec::new();
    for (mark, verdict, expected, after) in [
        ("✗", Verdict::Violated, "to hold", ""),
        ("✓", Verdict::Holds, "violated", ""),
        ("?", Verdict::Incomplete, "", " unsettled"),
    ] {
        let named = names(verdict, expected);
        if !named.is_empty() {
            parts.push(format!("{mark} {}{after}", named.join(", ")));
        }
    }
    let others = report
        .properties
        .iter()
        .filter(|p| p.verdict == Verdict::Holds && !differs(p))
        .count();
    let total = report.properties.len();
    match (parts.is_empty(), others) {
        (true, 1) if total == 1 => parts.push("its one property holds".to_owned()),
        (true, _) => parts.push(format!("all {others} hold")),
        (false, 0) => {}
        (false, n) => parts.push(count(n, "holds", "hold")),
    }
    if report.mismatches().next().is_some() {
        parts[0].insert_str(0, "MISMATCH ");
    }
    parts
}

/// `parts` joined by "; " in lines of at most `width` characters, each part kept whole on one
/// line unless it is longer than a line by itself ("2 hold" is never split).
fn wrap_parts(parts: &[String], width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let piece = match i + 1 == parts.len() {
            true => part.clone(),
            false => format!("{part};"),
        };
        match lines.last_mut() {
            Some(line) if line.chars().count() + 1 + piece.chars().count() <= width => {
                line.push(' ');
                line.push_str(&piece);
            }
            _ => lines.extend(table::wrap(&piece, width)),
        }
    }
    lines
}

/// Where a violation's story is, when the rows left the stories out.
fn story_hint(reports: &[Report]) -> Option<&'static str> {
    reports
        .iter()
        .flat_map(|r| &r.properties)
        .any(|p| p.verdict == Verdict::Violated)
        .then_some("`redlock-lab trace NAME` tells a violation's story; --verbose prints them all")
}

/// How far a stopped check got, or, past the discrete engine's limit, why the zone engine
/// could not take the file.
fn stopped_line(scenarios: &[Scenario], report: &Report, reason: StopReason) -> String {
    if reason == StopReason::DiscreteLimit {
        let scenario = scenarios.iter().find(|s| s.name == report.name);
        let why = scenario
            .and_then(|s| Check::new(s).engine(Engine::Zones).err())
            .map_or_else(String::new, |unsupported| format!(", and {unsupported}"));
        return format!(
            "{}: not checked: a constant exceeds the {reason}{why}\n",
            report.name
        );
    }
    format!(
        "{}: stopped at the {reason} after {} states, paths up to {} steps, {:.1} s\n",
        report.name, report.unique_states, report.max_depth, report.seconds
    )
}
