//! `redlock-lab trace`: the shortest counterexample of one scenario, as a timeline.

use std::path::PathBuf;

use anyhow::{Result, bail};
use redlock_lab::model::RedlockModel;
use redlock_lab::report::Story;
use redlock_lab::scenario::property;
use stateright::{Checker, Expectation, Model};

use crate::Outcome;
use crate::inputs;

/// How to print the trace.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The story: one line per event, with true time, clocks and beliefs.
    #[default]
    Text,
    /// A Mermaid `sequenceDiagram` (renders on GitHub).
    Mermaid,
    /// The Explorer's SVG sequence diagram.
    Svg,
    /// The story as a JSON object with one entry per event.
    Json,
}

/// Arguments of `trace`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A scenario file or catalog name.
    path: PathBuf,
    /// The property whose counterexample to print (default: the first violated one).
    #[arg(long)]
    property: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// Runs the checker breadth-first (one thread, so the path is shortest) and tells the path.
pub fn run(args: &Args) -> Result<Outcome> {
    let scenario = inputs::load_one(&args.path)?;
    let model = RedlockModel::new(&scenario);
    let candidates: Vec<&'static str> = model
        .properties()
        .iter()
        .filter(|p| p.expectation == Expectation::Always)
        .map(|p| p.name)
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
    let checker = model.checker().spawn_bfs().join();
    let found = candidates
        .iter()
        .filter(|name| {
            args.property
                .as_deref()
                .is_none_or(|wanted| wanted == **name)
        })
        .find_map(|name| checker.discovery(name).map(|path| (*name, path)));
    let Some((name, path)) = found else {
        let what = args
            .property
            .as_deref()
            .unwrap_or(property::MUTUAL_EXCLUSION);
        eprintln!(
            "{}: {} holds, so there is no counterexample to trace",
            scenario.name,
            if args.property.is_some() {
                what
            } else {
                "every safety property"
            }
        );
        return Ok(Outcome::Mismatch);
    };
    let model = checker.model();
    let story = Story::from_path(model, name, &path.clone().into_vec());
    match args.format {
        Format::Text => print!("{}", story.to_text()),
        Format::Mermaid => print!("{}", story.to_mermaid()),
        Format::Json => println!("{}", serde_json::to_string_pretty(&story)?),
        Format::Svg => match model.as_svg(path) {
            Some(svg) => println!("{svg}"),
            None => bail!("the model draws no diagram"),
        },
    }
    Ok(Outcome::Success)
}
