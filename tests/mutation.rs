//! The checker's verdicts are about the algorithm that ships: a bug planted in the core's life
//! cycle (`src/proto/state.rs`) flips a catalog verdict.
//!
//! Each mutant is a copy of this crate with one line of the core changed, whose checker is
//! run on the catalog scenario that teaches the rule the mutant breaks: the copy must miss that
//! scenario's `[expect]`, while this crate (the test's own, unmutated library) meets it.
//! A mutation whose text is no longer found in the core fails the test, so it cannot rot into
//! a test that checks nothing.

use std::path::{Path, PathBuf};
use std::process::Command;

use redlock_lab::check::Check;

struct Mutant {
    /// What the mutant breaks.
    name: &'static str,
    /// The exact text in `src/proto/state.rs`, and what it becomes.
    from: &'static str,
    to: &'static str,
    /// The catalog scenario whose verdict must flip.
    scenario: &'static str,
}

const MUTANTS: [Mutant; 2] = [
    Mutant {
        name: "no-release-after-a-lost-round",
        from: "let mut effects = match params.failed_round {",
        to: "let mut effects = match FailedRound::Keep {",
        scenario: "redlock-unlock-del-on-failed-acquire",
    },
    Mutant {
        name: "a-guarded-answer-counts",
        from: "if !counts && self.is_collecting(round) {",
        to: "if false && !counts && self.is_collecting(round) {",
        scenario: "crash-restart-client-guard-ttl-minus-drift",
    },
];

/// The example each mutant runs: the scenario's verdicts against its `[expect]`, exit 1 on a
/// mismatch (what `redlock-lab check` does, without the command line's dependencies).
const VERDICTS: &str = r#"//! One catalog scenario's verdicts against its `[expect]`.
fn main() {
    let name = std::env::args().nth(1).expect("a scenario name");
    let entry = redlock_lab::catalog::find(&name).expect("a catalog scenario");
    let report = redlock_lab::check::Check::new(&entry.scenario().expect("valid")).run();
    for property in report.mismatches() {
        println!("MISMATCH {}: {}", property.name, property.verdict);
    }
    std::process::exit(if report.matches_expectations() { 0 } else { 1 });
}
"#;

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A copy of the crate with `mutant` applied, under the test's scratch directory.
fn mutated_crate(mutant: &Mutant) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let copy = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("mutant-{}", mutant.name));
    let _ = std::fs::remove_dir_all(&copy);
    for dir in ["src", "models"] {
        copy_tree(&root.join(dir), &copy.join(dir));
    }
    std::fs::remove_dir_all(copy.join("src/bin")).unwrap();
    for file in ["Cargo.toml", "Cargo.lock", "build.rs", "README.md"] {
        std::fs::copy(root.join(file), copy.join(file)).unwrap();
    }
    // The copy is a library of its own: its binary, tests, benches and examples are left behind, and one example
    // checks a catalog scenario with the model alone (no command line, no Redis client).
    let manifest = std::fs::read_to_string(copy.join("Cargo.toml")).unwrap();
    let mut kept = String::new();
    let mut skipping = false;
    for line in manifest.lines() {
        if line.starts_with('[') {
            skipping = matches!(line, "[[test]]" | "[[bench]]" | "[[bin]]" | "[[example]]");
        }
        if !skipping {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    std::fs::write(copy.join("Cargo.toml"), kept).unwrap();
    std::fs::create_dir_all(copy.join("examples")).unwrap();
    std::fs::write(copy.join("examples/verdicts.rs"), VERDICTS).unwrap();
    let core = copy.join("src/proto/state.rs");
    let text = std::fs::read_to_string(&core).unwrap();
    assert_eq!(
        text.matches(mutant.from).count(),
        1,
        "mutant {}: its text must occur exactly once in src/proto/state.rs",
        mutant.name
    );
    std::fs::write(&core, text.replace(mutant.from, mutant.to)).unwrap();
    copy
}

#[test]
fn a_bug_in_the_core_life_cycle_flips_a_catalog_verdict() {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mutant-target");
    for mutant in &MUTANTS {
        // The unmutated core gets every verdict of the scenario right ...
        let entry = redlock_lab::catalog::find(mutant.scenario).expect("a catalog scenario");
        let scenario = entry.scenario().unwrap();
        assert!(
            Check::new(&scenario).run().matches_expectations(),
            "{}",
            mutant.scenario
        );
        // ... and the mutant gets one wrong.
        let copy = mutated_crate(mutant);
        // The dev profile at opt-level 1 without debug info: the scenarios are small, and
        // its incremental build recompiles only what the next mutant's line touches, where a
        // release build recompiles the whole crate for each mutant.
        let output = Command::new(env!("CARGO"))
            .args(["run", "--quiet", "--offline", "--no-default-features"])
            .env("CARGO_PROFILE_DEV_OPT_LEVEL", "1")
            .env("CARGO_PROFILE_DEV_DEBUG", "0")
            .args(["--features", "model", "--example", "verdicts"])
            .args(["--", mutant.scenario])
            .current_dir(&copy)
            .env("CARGO_TARGET_DIR", &target)
            .output()
            .expect("cargo runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            output.status.code(),
            Some(1),
            "mutant {} should make {} miss its expectations\nstdout:\n{stdout}\nstderr:\n{stderr}",
            mutant.name,
            mutant.scenario
        );
        assert!(stdout.contains("MISMATCH"), "{}: {stdout}", mutant.name);
    }
}
