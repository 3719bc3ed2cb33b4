//! Architecture invariants that a grep can check. Crude on purpose: any use of these names is a
//! design change that must be argued, not slipped in. Comments are stripped, so prose may cite
//! redis.io or `std::sync`.
//!
//! - `time`, `proto` and `node` perform no I/O, read no clock and use no global randomness.
//! - `src/sync.rs` is the only file that names loom, and the watchdog takes its synchronisation
//!   types from it, never from `std::sync` or `std::thread::spawn`: a `std` type inside a loom
//!   model is invisible to the checker, so a slip would make `tests/loom_watchdog.rs` pass
//!   while checking nothing.

use std::fs;
use std::path::{Path, PathBuf};

/// What the sans-IO core must never use.
const IMPURE: &[&str] = &[
    "Instant::now",
    "SystemTime",
    "thread_rng",
    "rand::rng",
    "from_os_rng",
    "OsRng",
    "std::net",
    "std::fs",
    "std::thread",
    "redis",
    "tokio",
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display())) {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// Offending `file:line: mentions word` lines in `text`, comments stripped.
fn offences(file: &Path, text: &str, forbidden: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or_default();
        for word in forbidden {
            if code.contains(word) {
                found.push(format!(
                    "{}:{}: mentions `{word}`",
                    file.display(),
                    number + 1
                ));
            }
        }
    }
    found
}

fn check(files: &[PathBuf], forbidden: &[&str]) -> Vec<String> {
    let mut all = Vec::new();
    for file in files {
        let text =
            fs::read_to_string(file).unwrap_or_else(|e| panic!("read {}: {e}", file.display()));
        all.extend(offences(file, &text, forbidden));
    }
    all
}

#[test]
fn the_core_does_no_io_and_reads_no_clock() {
    let src = src();
    let mut files = vec![
        src.join("time.rs"),
        src.join("proto.rs"),
        src.join("node.rs"),
    ];
    rust_files(&src.join("proto"), &mut files);
    assert!(
        files.len() >= 7,
        "expected the core's files, found {files:?}"
    );
    let found = check(&files, IMPURE);
    assert!(
        found.is_empty(),
        "the sans-IO core must stay pure:\n{}",
        found.join("\n")
    );
}

#[test]
fn only_the_shim_names_loom() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    files.retain(|file| !file.ends_with("sync.rs"));
    assert!(
        files.len() > 10,
        "expected the crate's files, found {files:?}"
    );
    let found = check(&files, &["loom::"]);
    assert!(
        found.is_empty(),
        "name loom only in src/sync.rs:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_watchdog_takes_its_sync_types_from_the_shim() {
    let root = src().join("driver");
    let mut files = vec![root.join("watchdog.rs")];
    rust_files(&root.join("watchdog"), &mut files);
    assert!(
        files.len() >= 5,
        "expected the watchdog's files, found {files:?}"
    );
    let found = check(&files, &["std::sync", "std::thread::spawn"]);
    assert!(
        found.is_empty(),
        "use crate::sync in the watchdog:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_detector_fires_on_code_and_not_on_prose() {
    let text =
        "fn f() { let t = std::time::Instant::now(); }\n/// as redis.io says\nuse redis::Client;";
    assert_eq!(
        offences(Path::new("x.rs"), text, IMPURE),
        vec![
            "x.rs:1: mentions `Instant::now`".to_owned(),
            "x.rs:3: mentions `redis`".to_owned()
        ]
    );
    let text = "use std::sync::Mutex;\n// std::sync in prose\nlet t = std::thread::spawn(f);";
    assert_eq!(
        offences(
            Path::new("x.rs"),
            text,
            &["std::sync", "std::thread::spawn"]
        ),
        vec![
            "x.rs:1: mentions `std::sync`".to_owned(),
            "x.rs:3: mentions `std::thread::spawn`".to_owned(),
        ]
    );
}
