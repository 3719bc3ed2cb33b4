//! `redlock-lab sweep`: one scenario checked once per value of one key, a row per value, and
//! the boundary where a verdict flips.

use std::path::PathBuf;

use anyhow::Result;
use redlock_lab::check::{Check, Report, available_threads};
use redlock_lab::sweep::{Boundary, Sweep, SweepReport, Vary};

use crate::Outcome;
use crate::inputs;
use crate::limits::Limits;
use crate::pool::{self, Task};
use crate::table::Table;
use crate::watch::Watch;

/// Arguments of `sweep`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A scenario file or catalog name.
    path: PathBuf,
    /// The dotted key to vary and its values: `KEY=A..B` (integers, both ends included),
    /// `KEY=A..B` of durations for a key in real units (`lock.drift=90ms..110ms`, in the ends'
    /// unit, or `lock.ttl=1s..2s/250ms` with a step), or `KEY=v1,v2,…` (TOML values; bare words
    /// are strings), e.g. `faults.clock_jumps.jump_ticks=1..6`.
    #[arg(long, value_name = "KEY=VALUES")]
    vary: String,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
    /// Checker threads per value: more is faster, and verdicts and counterexamples do not
    /// depend on it; with one, a violated value's state count repeats from run to run.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    threads: u32,
    /// How many values are checked at once [default: the cores, divided by --threads]; the
    /// table does not depend on it.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    jobs: Option<u32>,
    #[command(flatten)]
    limits: Limits,
}

/// Validates every variant, checks each, and prints the rows and the boundaries.
pub(crate) fn run(args: &Args) -> Result<Outcome> {
    args.limits.refuse_zeros()?;
    let vary: Vary = args.vary.parse()?;
    let source = inputs::source_of_one(&args.path)?;
    let sweep = Sweep::prepare(&source.file, &source.text, &vary)?;
    let report = check_each(args, &sweep, &vary.key)?;
    if args.json {
        let json = serde_json::json!({
            "file": report.file,
            "scenario": report.scenario,
            "key": report.key,
            "rows": report.rows.iter().map(|row| serde_json::json!({
                "value": row.value,
                "unique_states": row.report.unique_states,
                "seconds": row.report.seconds,
                "properties": row.report.properties,
            })).collect::<Vec<_>>(),
            "boundaries": report.boundaries(),
        });
        outln!("{}", serde_json::to_string_pretty(&json)?)?;
    } else {
        out!("{}", render(&report))?;
    }
    let incomplete = report.rows.iter().any(|row| row.report.is_incomplete());
    Ok(if incomplete {
        Outcome::Incomplete
    } else {
        Outcome::Success
    })
}

/// Checks every value within the limits, `--jobs` at once, saying which ones it is on while
/// it works; the reports come back in the values' order.
fn check_each(args: &Args, sweep: &Sweep, key: &str) -> Result<SweepReport> {
    let memory = args.limits.memory();
    let (labels, scenarios): (Vec<String>, Vec<_>) = sweep.labelled().unzip();
    let values = labels.len();
    let watch = Watch::new("sweep", Some(values as u64), !args.json);
    let threads = args.threads as usize;
    let jobs = args
        .jobs
        .map_or_else(|| (available_threads() / threads).max(1), |j| j as usize);
    let tasks: Vec<Task<'_, Report>> = labels
        .iter()
        .zip(scenarios)
        .enumerate()
        .map(|(index, (value, scenario))| -> Task<'_, Report> {
            let label = format!("{key} = {value} ({} of {values})", index + 1);
            let check = args
                .limits
                .apply(Check::new(scenario).threads(threads), memory);
            let check = watch.watching(check, label);
            Box::new(move || check.run())
        })
        .collect();
    let mut reports = Vec::with_capacity(values);
    let order: Vec<usize> = (0..values).collect();
    pool::in_order(tasks, &order, jobs, |index, report| {
        let seconds = report.seconds;
        reports.push(report);
        watch.step(|| {
            let value = &labels[index];
            format!(
                "{key} = {value} settled in {seconds:.1} s ({} of {values})",
                index + 1
            )
        });
        Ok(())
    })?;
    Ok(sweep.report(reports))
}

/// The table (a column per property), then one line per boundary.
fn render(report: &SweepReport) -> String {
    let properties = report.properties();
    let short_key = report.key.rsplit('.').next().unwrap_or(&report.key);
    let mut header = vec![short_key];
    header.extend(properties.iter().map(String::as_str));
    header.extend(["states", "seconds"]);
    let mut table = Table::new(&header);
    for row in &report.rows {
        let mut cells = vec![row.value.clone()];
        cells.extend(properties.iter().map(|p| {
            row.verdict(p)
                .map_or_else(|| "-".to_owned(), |v| v.to_string())
        }));
        cells.push(row.report.unique_states.to_string());
        cells.push(format!("{:.2}", row.report.seconds));
        table.row(cells);
    }
    let mut out = format!(
        "{} ({}), varying {}\n\n",
        report.scenario, report.file, report.key
    );
    out.push_str(&table.render());
    out.push('\n');
    let boundaries = report.boundaries();
    if boundaries.is_empty() {
        let (first, last) = (
            report.rows.first().map_or("", |r| r.value.as_str()),
            report.rows.last().map_or("", |r| r.value.as_str()),
        );
        out.push_str(&format!(
            "no verdict flips between {} = {first} and {last}\n",
            report.key
        ));
    }
    for Boundary {
        property,
        below,
        above,
    } in &boundaries
    {
        out.push_str(&format!(
            "boundary: {property} {} at {} = {}, {} at {}\n",
            below.verdict, report.key, below.value, above.verdict, above.value
        ));
    }
    out
}
