//! The checkers' verdicts are about the algorithm that ships: a bug planted in the core
//! (`src/proto/`) flips a catalog verdict in the discrete engine **and** in the zone engine,
//! which decides every round and release through the same core.
//!
//! Each mutant is a copy of this crate with one line of the core changed. The copy checks the
//! catalog scenario that teaches the rule the mutant breaks twice: with the discrete engine as
//! the file stands, and with the zone engine on the same file in milliseconds (every constant
//! ×1000, which the zone engine answers in one exploration of a few hundred zones). The
//! engines run without their cutoff, whose proof that two clients stand for more assumes the
//! shipped core (a mutant that deletes other clients' keys escapes it). Both must
//! miss the scenario's `[expect]`, while this crate (the test's own, unmutated library) meets
//! it with both. A mutation whose text is no longer found in the core fails the test, so it
//! cannot rot into a test that checks nothing.

use std::path::{Path, PathBuf};
use std::process::Command;

use redlock_lab::check::{Check, Engine};

struct Mutant {
    /// What the mutant breaks.
    name: &'static str,
    /// The core file it changes, below `src/proto/`.
    file: &'static str,
    /// The exact text in that file, and what it becomes.
    from: &'static str,
    to: &'static str,
    /// The catalog scenario whose verdict must flip in both engines.
    scenario: &'static str,
}

const MUTANTS: [Mutant; 5] = [
    Mutant {
        name: "a-round-wins-one-yes-short-of-a-quorum",
        file: "round.rs",
        from: "if applied < quorum {",
        to: "if applied + 1 < quorum {",
        scenario: "clock-drift-covered",
    },
    Mutant {
        name: "the-drift-is-not-subtracted",
        file: "config.rs",
        from: "self.ttl - self.drift\n",
        to: "self.ttl\n",
        scenario: "clock-drift-covered",
    },
    Mutant {
        name: "a-guarded-answer-counts",
        file: "state.rs",
        from: "if !counts && self.is_collecting(round) {",
        to: "if false && !counts && self.is_collecting(round) {",
        scenario: "crash-restart-client-guard-ttl-minus-drift",
    },
    Mutant {
        name: "a-lost-round-deletes-every-key",
        file: "state.rs",
        from: "let release = ReleaseRound::new(round.token, now);\n                        self.request(release.op(params))",
        to: "self.request(Op::Del)",
        scenario: "single-node-unlock-with-cad",
    },
    Mutant {
        name: "a-release-deletes-every-key",
        file: "round.rs",
        from: "UnlockMode::CompareAndDelete => Op::DelIfEq { token: self.token },",
        to: "UnlockMode::CompareAndDelete => Op::Del,",
        scenario: "single-node-unlock-with-cad",
    },
];

/// How many times larger the zone engine's copy of a scenario is: ticks become milliseconds.
const MILLISECONDS: u32 = 1000;

/// The example each mutant runs: the scenario's verdicts against its `[expect]` in each
/// engine, one line each (what `redlock-lab check` does, without the command line's
/// dependencies).
const VERDICTS: &str = r#"//! One catalog scenario's verdicts against its `[expect]`, in both engines.
use redlock_lab::check::{Check, Engine};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let entry = redlock_lab::catalog::find(&args[1]).expect("a catalog scenario");
    let scenario = entry.scenario().expect("valid");
    let scale: u32 = args[2].parse().expect("a scale");
    let discrete = Check::new(&scenario).cutoff(false).engine(Engine::Discrete).expect("discrete").run();
    let zones = Check::new(&scenario.scaled(scale))
        .cutoff(false)
        .engine(Engine::Zones)
        .expect("the zone engine models the scenario")
        .run();
    for (engine, report) in [("discrete", discrete), ("zones", zones)] {
        for property in report.mismatches() {
            println!("MISMATCH {engine} {}: {}", property.name, property.verdict);
        }
        println!("{engine} {}", if report.matches_expectations() { "matches" } else { "misses" });
    }
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
    let core = copy.join("src/proto").join(mutant.file);
    let text = std::fs::read_to_string(&core).unwrap();
    assert_eq!(
        text.matches(mutant.from).count(),
        1,
        "mutant {}: its text must occur exactly once in src/proto/{}",
        mutant.name,
        mutant.file
    );
    std::fs::write(&core, text.replace(mutant.from, mutant.to)).unwrap();
    copy
}

#[test]
fn a_bug_in_the_core_flips_a_verdict_in_both_engines() {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mutant-target");
    for mutant in &MUTANTS {
        // The unmutated core gets every verdict of the scenario right, in both engines ...
        let entry = redlock_lab::catalog::find(mutant.scenario).expect("a catalog scenario");
        let scenario = entry.scenario().unwrap();
        let discrete = Check::new(&scenario).cutoff(false).engine(Engine::Discrete);
        assert!(
            discrete.unwrap().run().matches_expectations(),
            "{}",
            mutant.scenario
        );
        let zones = Check::new(&scenario.scaled(MILLISECONDS)).engine(Engine::Zones);
        let zones = zones.unwrap().run();
        assert!(zones.matches_expectations(), "{} (zones)", mutant.scenario);
        // ... and the mutant gets one wrong in each.
        let copy = mutated_crate(mutant);
        // The dev profile unoptimised and without debug info: the scenarios take well under a
        // second even so, the dependencies build in half the time of opt-level 1 (58 s against
        // 116 s here, most of this test on a fresh machine), and the incremental build
        // recompiles only what the next mutant's line touches, where a release build
        // recompiles the whole crate for each mutant.
        let output = Command::new(env!("CARGO"))
            .args(["run", "--quiet", "--offline", "--no-default-features"])
            .env("CARGO_PROFILE_DEV_OPT_LEVEL", "0")
            .env("CARGO_PROFILE_DEV_DEBUG", "0")
            .env("CARGO_INCREMENTAL", "1")
            .args(["--features", "model", "--example", "verdicts"])
            .args(["--", mutant.scenario, &MILLISECONDS.to_string()])
            .current_dir(&copy)
            .env("CARGO_TARGET_DIR", &target)
            .output()
            .expect("cargo runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let context = format!(
            "mutant {} on {}\nstdout:\n{stdout}\nstderr:\n{stderr}",
            mutant.name, mutant.scenario
        );
        assert!(output.status.success(), "{context}");
        for engine in ["discrete", "zones"] {
            assert!(
                stdout.lines().any(|l| l == format!("{engine} misses")),
                "the {engine} engine should miss the expectations: {context}"
            );
        }
    }
}
