//! `redlock-lab check`: run the checker on scenarios and compare with `[expect]`.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::Result;
use redlock_lab::check::{Check, Report};
use redlock_lab::scenario::Verdict;

use crate::Outcome;
use crate::inputs;
use crate::table::Table;

/// Arguments of `check`.
#[derive(Debug, Default, clap::Args)]
pub struct Args {
    /// Scenario files, folders of them, or catalog names; none = the built-in catalog.
    paths: Vec<PathBuf>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
    /// Checker threads per scenario (more is faster; counterexamples may then not be shortest).
    #[arg(long, default_value_t = 1)]
    threads: usize,
}

/// Checks every scenario, prints the verdicts, and says whether they all match.
pub fn run(args: &Args) -> Result<Outcome> {
    let scenarios = inputs::load(&args.paths)?;
    let progress = std::io::stderr().is_terminal() && !args.json;
    let mut reports = Vec::new();
    for (i, scenario) in scenarios.iter().enumerate() {
        if progress {
            eprint!(
                "\r\x1b[2K[{}/{}] checking {} …",
                i + 1,
                scenarios.len(),
                scenario.name
            );
            let _ = std::io::stderr().flush();
        }
        reports.push(Check::new(scenario).threads(args.threads).run());
    }
    if progress {
        eprint!("\r\x1b[2K");
    }
    if args.json {
        let json = serde_json::json!({ "models": reports });
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        print!("{}", render(&reports));
    }
    let mismatches = reports.iter().flat_map(Report::mismatches).count();
    Ok(if mismatches == 0 {
        Outcome::Success
    } else {
        Outcome::Mismatch
    })
}

/// The verdict table, the story of each violated property, then a summary line.
fn render(reports: &[Report]) -> String {
    let mut table = Table::new(&[
        "scenario", "property", "expected", "verdict", "", "states", "seconds",
    ]);
    for report in reports {
        for (i, property) in report.properties.iter().enumerate() {
            let expected = property.expected.map_or("-".to_owned(), |v| v.to_string());
            let mark = match property.expected {
                Some(e) if e == property.verdict => "ok",
                Some(_) => "MISMATCH",
                None => "",
            };
            let (name, states, seconds) = if i == 0 {
                (
                    report.name.clone(),
                    report.unique_states.to_string(),
                    format!("{:.2}", report.seconds),
                )
            } else {
                Default::default()
            };
            table.row(vec![
                name,
                property.name.clone(),
                expected,
                property.verdict.to_string(),
                mark.to_owned(),
                states,
                seconds,
            ]);
        }
    }
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
    let mut out = table.render();
    out.push('\n');
    // One block per violated property, after the table so the table stays readable.
    for story in reports
        .iter()
        .flat_map(|r| &r.properties)
        .filter_map(|p| p.story.as_ref())
    {
        out.push_str(&story.to_text());
        out.push('\n');
    }
    out.push_str(&format!(
        "{} scenarios, {properties} properties ({violated} violated) in {seconds:.1} s: ",
        reports.len()
    ));
    if mismatches.is_empty() {
        out.push_str("every verdict matches [expect]\n");
    } else {
        out.push_str(&format!(
            "{} verdicts differ from [expect]: {}\n",
            mismatches.len(),
            mismatches.join(", ")
        ));
    }
    out
}
