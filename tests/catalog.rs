//! The catalog: every `models/*.toml` file's `[expect]` against the checker's verdicts, pinned
//! state counts and one pinned counterexample (so an accidental change to the state space
//! fails here), and the bad-file errors with their `file:line:column`.

use std::path::{Path, PathBuf};

use redlock_lab::check::{Check, Report};
use redlock_lab::model::{Process, RedlockModel, Step};
use redlock_lab::scenario::{Scenario, ScenarioError};
use stateright::{Checker, Model};

fn catalog() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("models/ exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

fn load(name: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("models")
        .join(format!("{name}.toml"));
    Scenario::load(path).expect("catalog files are valid")
}

fn table_row(report: &Report) -> String {
    let verdicts: Vec<String> = report
        .properties
        .iter()
        .map(|p| {
            let mark = match p.expected {
                Some(e) if e == p.verdict => "",
                Some(_) => " MISMATCH",
                None => " (no expectation)",
            };
            format!("{}={}{mark}", p.name, p.verdict)
        })
        .collect();
    format!(
        "{:<48} {:>9} {:>7.2}s  {}",
        report.name,
        report.unique_states,
        report.seconds,
        verdicts.join(", ")
    )
}

#[test]
fn every_catalog_verdict_matches_its_expectation() {
    let files = catalog();
    assert!(
        files.len() >= 30,
        "the catalog covers research/scenarios.md"
    );
    let mut mismatches = Vec::new();
    for file in files {
        let scenario = Scenario::load(&file).unwrap_or_else(|e| panic!("{e}"));
        let report = Check::new(&scenario).run();
        println!("{}", table_row(&report));
        for p in report.mismatches() {
            mismatches.push(format!(
                "{}: {} expected {} but the checker says {}{}",
                file.display(),
                p.name,
                p.expected.expect("a mismatch has an expectation"),
                p.verdict,
                p.counterexample
                    .as_ref()
                    .map(|steps| format!("\n    {}", steps.join("\n    ")))
                    .unwrap_or_default()
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
