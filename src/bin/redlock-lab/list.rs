//! `redlock-lab list`: the catalog with claims, sources and expected verdicts.

use std::path::PathBuf;

use anyhow::Result;

use crate::Outcome;
use crate::inputs;
use crate::table::Table;

/// Arguments of `list`.
#[derive(Debug, Default, clap::Args)]
pub struct Args {
    /// Scenario files or folders; none = the built-in catalog.
    paths: Vec<PathBuf>,
}

/// Prints one row per scenario.
pub fn run(args: &Args) -> Result<Outcome> {
    let scenarios = inputs::load(&args.paths)?;
    let mut table = Table::new(&["scenario", "source", "expected", "title"]);
    for scenario in &scenarios {
        let expected = scenario
            .expect
            .iter()
            .map(|(property, verdict)| format!("{property}: {verdict}"))
            .collect::<Vec<_>>()
            .join("; ");
        table.row(vec![
            scenario.name.clone(),
            scenario.source.to_string(),
            expected,
            scenario.title.clone(),
        ]);
    }
    print!("{}", table.render());
    if args.paths.is_empty() {
        // The next step for a newcomer.
        println!(
            "\n`redlock-lab explain NAME` teaches one scenario: the claim, the verdict and why, the counterexample, the fix."
        );
    }
    Ok(Outcome::Success)
}
