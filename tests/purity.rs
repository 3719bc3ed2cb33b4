//! Architecture invariant: `time`, `proto` and `node` perform no I/O, read no clock and use no
//! global randomness. A grep over their code (comments stripped, so prose may cite redis.io) is
//! crude, and that is the point: any use of these names is a design change that must be argued,
//! not slipped in.

use std::fs;
use std::path::{Path, PathBuf};

const FORBIDDEN: &[&str] = &[
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

fn pure_sources() -> Vec<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![
        src.join("time.rs"),
        src.join("proto.rs"),
        src.join("node.rs"),
    ];
    rust_files(&src.join("proto"), &mut files);
    files
}

/// Offending `(file, line number, word)` triples in `text`.
fn offences(file: &Path, text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or_default();
        for word in FORBIDDEN {
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

#[test]
fn the_core_does_no_io_and_reads_no_clock() {
    let files = pure_sources();
    assert!(
        files.len() >= 7,
        "expected the core's files, found {files:?}"
    );
    let mut all = Vec::new();
    for file in &files {
        let text =
            fs::read_to_string(file).unwrap_or_else(|e| panic!("read {}: {e}", file.display()));
        all.extend(offences(file, &text));
    }
    assert!(
        all.is_empty(),
        "the sans-IO core must stay pure:\n{}",
        all.join("\n")
    );
}

#[test]
fn the_detector_fires_on_impure_code_and_not_on_prose() {
    let text =
        "fn f() { let t = std::time::Instant::now(); }\n/// as redis.io says\nuse redis::Client;";
    let found = offences(Path::new("x.rs"), text);
    assert_eq!(
        found,
        vec![
            "x.rs:1: mentions `Instant::now`".to_owned(),
            "x.rs:3: mentions `redis`".to_owned(),
        ]
    );
}
