//! Helpers shared by the integration tests: running the binary as a user does, reading what it
//! printed, scratch folders, and proptest's configuration. A test file says `mod common;`.

// Every test file is its own crate and uses only some of these.
#![allow(dead_code)]

pub(crate) mod browser;

use std::path::PathBuf;
#[cfg(feature = "cli")]
use std::process::{Command, Output};

use proptest::test_runner::{Config as ProptestConfig, FileFailurePersistence};

/// The `redlock-lab` binary Cargo built for this test run (it needs the `cli` feature).
#[cfg(feature = "cli")]
pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_redlock-lab");

/// Runs `redlock-lab ARGS` in the test's working directory and waits for it.
#[cfg(feature = "cli")]
pub(crate) fn redlock_lab(args: &[&str]) -> Output {
    command(args).output().expect("run redlock-lab")
}

/// Runs `redlock-lab ARGS` in `dir`: the binary must not need the repository around it.
#[cfg(feature = "cli")]
pub(crate) fn redlock_lab_in(args: &[&str], dir: &std::path::Path) -> Output {
    command(args)
        .current_dir(dir)
        .output()
        .expect("run redlock-lab")
}

/// The command with `NO_COLOR` removed, so that a test sees what a user without it sees (and a
/// test that no colour goes into a pipe does not pass because of the developer's environment).
#[cfg(feature = "cli")]
fn command(args: &[&str]) -> Command {
    let mut command = Command::new(BIN);
    command.args(args).env_remove("NO_COLOR");
    command
}

/// Output bytes as text (lossy: a test about non-UTF-8 input may echo its bytes).
pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A fresh, empty folder under the system's temporary folder, named after `label` and this
/// test process (test files run as separate processes, so labels need only differ in a file).
pub(crate) fn scratch_dir(label: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("redlock-lab-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create a scratch folder");
    dir
}

/// proptest's configuration with `default` cases unless `PROPTEST_CASES` says otherwise,
/// keeping failing cases in `regressions` (a path from the crate's root), so that every
/// failure found once is tried first on every later run.
pub(crate) fn cases(default: u32, regressions: &'static str) -> ProptestConfig {
    let mut config = ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(regressions))),
        ..ProptestConfig::default()
    };
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = default;
    }
    config
}

/// Every `models/*.toml` file of the catalog, sorted by name.
pub(crate) fn catalog_files() -> Vec<PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("models/ exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

/// Whether this is a CI run (`CI=true`, which `scripts/test` sets): there a missing program is
/// a failure, never a skip.
pub(crate) fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// A program `test` needs is missing (`why` names it and how to get it). Under CI (`ci`) that
/// fails the test; elsewhere a `SKIPPED` line goes straight to the process's stderr, which
/// `cargo test` shows even when the test passes (its capture takes only the print macros, as
/// the live tests' watchdog relies on too).
pub(crate) fn missing_program(test: &str, why: &str, ci: bool) {
    assert!(
        !ci,
        "{test}: {why} (CI=true: a missing program fails the run, it is never skipped)"
    );
    tell(&format!("SKIPPED {test}: {why}"));
}

/// Writes `line` straight to the process's stderr, which `cargo test` shows even for a passing
/// test: its capture takes only the print macros (the live tests' watchdog writes the same way).
pub(crate) fn tell(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// `work` on every item, on two threads that take the items in turn, the results in the items'
/// order. With each run on one checker thread, a run stopped at a state budget stops where it
/// would alone, so what a budgeted test compares does not depend on the machine's timing.
pub(crate) fn on_two_threads<T: Sync, R: Send>(
    items: &[T],
    work: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let run = || {
        let mut done = Vec::new();
        loop {
            let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(item) = items.get(index) else {
                return done;
            };
            done.push((index, work(item)));
        }
    };
    let mut all = std::thread::scope(|scope| {
        let other = scope.spawn(run);
        let mut mine = run();
        mine.extend(other.join().expect("the other thread's items run"));
        mine
    });
    all.sort_by_key(|(index, _)| *index);
    all.into_iter().map(|(_, result)| result).collect()
}

/// Holds the block of the project's file `doc` between the markers `begin` and `end` to
/// `generated`, which a test wrote from the checker's results; with `UPDATE_EXPECT=1` it
/// rewrites the block instead. Returns whether it rewrote it.
pub(crate) fn generated_block(doc: &str, (begin, end): (&str, &str), generated: &str) -> bool {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(doc);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{doc}: {e}"));
    let start = text
        .find(begin)
        .unwrap_or_else(|| panic!("{doc}: no {begin:?}"))
        + begin.len();
    let stop = text
        .find(end)
        .unwrap_or_else(|| panic!("{doc}: no {end:?}"));
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        let updated = format!("{}{generated}{}", &text[..start], &text[stop..]);
        std::fs::write(&path, updated).unwrap_or_else(|e| panic!("{doc}: {e}"));
        return true;
    }
    assert_eq!(
        text[start..stop],
        *generated,
        "{doc}'s block after {begin:?} is stale: run with UPDATE_EXPECT=1"
    );
    false
}

/// The catalog scenarios the simulator's bridge refuses and the feature it names, in name
/// order (`tests/simulate_catalog.rs` and `tests/model_vs_sim.rs` hold the bridge to it): the two with a
/// client cut off from every node, which the simulator's isolations (a node cut off from every
/// client for a while) do not map, and the pair with jumps of different sizes, each at most
/// once, which the simulator's jump budgets (sizes drawn from a range, with repeats) would turn
/// into other jumps than the file's. Every other feature of the catalog is simulated (client
/// crashes, a least retry delay, a shared token and a replicated node among several included),
/// and a feature the bridge comes to refuse shows up here by name rather than passing silently.
pub(crate) const SIMULATOR_REFUSED: [(&str, &str); 4] = [
    (
        "client-partitioned-while-holding",
        "client partitions ([faults.client_partitions])",
    ),
    (
        "client-partitioned-while-holding-no-ttl",
        "client partitions ([faults.client_partitions])",
    ),
    ("node-clock-jumps-of-two-sizes", "jump_ticks = [...]"),
    (
        "node-clock-jumps-of-two-sizes-covered",
        "jump_ticks = [...]",
    ),
];
