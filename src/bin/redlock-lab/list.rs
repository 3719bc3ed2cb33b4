//! `redlock-lab list`: the catalog with claims, sources and expected verdicts.

use std::path::PathBuf;

use anyhow::Result;

use crate::Outcome;
use crate::inputs;
use crate::table::Table;

/// Arguments of `list`.
#[derive(Debug, Default, clap::Args)]
pub(crate) struct Args {
    /// What to list: scenario files (`.toml`), folders of them, or names from the built-in
    /// catalog (a file name without `.toml`, an alias, or a prefix naming one scenario).
    /// None = the whole built-in catalog.
    #[arg(value_name = "SCENARIO")]
    paths: Vec<PathBuf>,
}

/// Prints one row per scenario, with what the literature expects on the line under it.
pub(crate) fn run(args: &Args) -> Result<Outcome> {
    let scenarios = inputs::load_labelled(&args.paths)?;
    let mut table = Table::new(&["scenario", "source", "title"]);
    for loaded in &scenarios {
        let scenario = &loaded.scenario;
        let expected = scenario
            .expect
            .iter()
            .map(|(property, verdict)| format!("{property}: {verdict}"))
            .collect::<Vec<_>>()
            .join("; ");
        table.row(vec![
            scenario.name.clone(),
            scenario.source.to_string(),
            scenario.title.clone(),
        ]);
        table.note(format!("expects {expected}"));
        if let Some(file) = &loaded.file {
            table.note(format!("from {file}"));
        }
    }
    out!("{}", table.render())?;
    if args.paths.is_empty() {
        // The next step for a newcomer.
        outln!(
            "\n`redlock-lab explain NAME` teaches one scenario: the claim, the verdict and why,\n\
             the counterexample, the fix."
        )?;
    }
    Ok(Outcome::Success)
}
