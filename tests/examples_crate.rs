//! The examples compile for a user: every Rust block of the README, of the library's page
//! (`docs/library.md`) and the crate guide's example become binaries of a scratch crate that depends on `redlock-lab` alone (by path,
//! default features), built offline with cargo.
//!
//! Doctests cannot catch this: they see this crate's dev-dependencies, so an example that
//! names `rand_core` compiles there and fails in a user's project, where `cargo add` picks
//! whatever version is newest.

use std::path::{Path, PathBuf};
use std::process::Command;

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The code of every fenced Rust block in `markdown`, with rustdoc's hidden-line marker
/// (`# `) removed. Blocks marked `ignore` are not meant to compile and are left out. In doc
/// comments a bare fence is Rust too (`bare_is_rust`).
fn rust_blocks(markdown: &str, bare_is_rust: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        let trimmed = line.trim_start();
        match &mut current {
            None => {
                if let Some(info) = trimmed.strip_prefix("```")
                    && (info == "rust"
                        || info.starts_with("rust,")
                        || bare_is_rust && info.is_empty())
                    && !info.contains("ignore")
                {
                    current = Some(String::new());
                }
            }
            Some(block) if trimmed == "```" => {
                out.push(std::mem::take(block));
                current = None;
            }
            Some(block) => {
                let code = match trimmed.strip_prefix("# ") {
                    Some(hidden) => hidden,
                    None if trimmed == "#" => "",
                    None => line,
                };
                block.push_str(code);
                block.push('\n');
            }
        }
    }
    out
}

/// The crate guide's examples: the fenced blocks of `src/lib.rs`'s `//!` lines.
fn guide_blocks() -> Vec<String> {
    let lib = std::fs::read_to_string(manifest_dir().join("src/lib.rs")).expect("src/lib.rs");
    let docs: String = lib
        .lines()
        .filter_map(|line| line.strip_prefix("//!"))
        .map(|line| format!("{}\n", line.strip_prefix(' ').unwrap_or(line)))
        .collect();
    rust_blocks(&docs, true)
}

/// A block as a `main`: the body runs in a closure, so a block that ends in
/// `Ok::<(), E>(())` may use `?`, as in a doctest.
fn as_binary(block: &str) -> String {
    let (uses, body): (Vec<&str>, Vec<&str>) = block
        .lines()
        .partition(|line| line.starts_with("use ") || line.starts_with("extern crate "));
    format!(
        "#![allow(unused, clippy::all)]\n{}\n\nfn main() {{\n    let _ = (|| {{\n{}\n    }})();\n}}\n",
        uses.join("\n"),
        body.join("\n")
    )
}

/// Writes the scratch crate and returns its directory.
fn write_crate(examples: &[String]) -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("examples-crate");
    let bin = root.join("src/bin");
    let _ = std::fs::remove_dir_all(&bin);
    std::fs::create_dir_all(&bin).expect("create the scratch crate");
    let manifest = format!(
        "[package]\nname = \"redlock-lab-examples\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\nredlock-lab = {{ path = {:?} }}\n\n[workspace]\n",
        manifest_dir().display().to_string()
    );
    std::fs::write(root.join("Cargo.toml"), manifest).expect("write Cargo.toml");
    // The same versions as this crate's own build, so the offline build finds them all.
    std::fs::copy(manifest_dir().join("Cargo.lock"), root.join("Cargo.lock"))
        .expect("copy Cargo.lock");
    for (index, example) in examples.iter().enumerate() {
        std::fs::write(bin.join(format!("example{index}.rs")), as_binary(example))
            .expect("write an example");
    }
    root
}

#[test]
fn hidden_lines_are_kept_and_ignored_blocks_are_not() {
    let markdown = "```rust,no_run\nlet a = 1;\n# let b = a;\n```\n```rust,ignore\nnope\n```\n";
    assert_eq!(rust_blocks(markdown, false), ["let a = 1;\nlet b = a;\n"]);
    assert!(rust_blocks("```\nlet a = 1;\n```\n", false).is_empty());
    assert_eq!(rust_blocks("```\nlet a = 1;\n```\n", true).len(), 1);
    let binary = as_binary("use x::y;\nlet z = y()?;\nOk::<(), E>(())\n");
    assert!(binary.contains("use x::y;\n\nfn main()"), "{binary}");
}

#[test]
fn every_readme_and_guide_example_builds_in_a_crate_that_depends_only_on_redlock_lab() {
    let readme = std::fs::read_to_string(manifest_dir().join("README.md")).expect("README.md");
    let mut examples = rust_blocks(&readme, false);
    let from_readme = examples.len();
    let library =
        std::fs::read_to_string(manifest_dir().join("docs/library.md")).expect("docs/library.md");
    let from_library = rust_blocks(&library, false);
    assert!(
        !from_library.is_empty(),
        "docs/library.md's Rust example was not found"
    );
    examples.extend(from_library);
    assert!(
        from_readme >= 2,
        "the README's Rust examples were not found"
    );
    let before_guide = examples.len();
    examples.extend(guide_blocks());
    assert!(
        examples.len() > before_guide,
        "the guide's example in src/lib.rs was not found"
    );
    let root = write_crate(&examples);
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .args(["build", "--offline", "--bins", "--quiet"])
        .current_dir(&root)
        // Its own target dir: this test's cargo holds the lock on the one it was built in.
        .env("CARGO_TARGET_DIR", root.join("target"))
        .env_remove("RUSTFLAGS")
        .output()
        .expect("run cargo");
    assert!(
        output.status.success(),
        "an example does not compile in a crate that depends only on redlock-lab \
         (sources in {}):\n{}",
        root.join("src/bin").display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A user's crate that checks an invariant of its own in `cargo test`, as the README shows:
/// the invariant that holds passes, and the one that breaks fails with the counterexample told
/// as `trace` tells it, ✗ line and state included. It shares the examples crate's target dir,
/// so only its own test binary is built (a few seconds, plus the unoptimized checks).
#[test]
fn a_users_crate_asserts_its_own_invariant_and_a_violation_fails_with_the_story() {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("invariant-crate");
    let tests = root.join("tests");
    let _ = std::fs::remove_dir_all(&tests);
    std::fs::create_dir_all(root.join("src")).expect("create the scratch crate");
    std::fs::create_dir_all(&tests).expect("create its tests");
    let manifest = format!(
        "[package]\nname = \"redlock-lab-invariant\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dev-dependencies]\nredlock-lab = {{ path = {:?} }}\n\n[workspace]\n",
        manifest_dir().display().to_string()
    );
    std::fs::write(root.join("Cargo.toml"), manifest).expect("write Cargo.toml");
    std::fs::write(root.join("src/lib.rs"), "").expect("write src/lib.rs");
    std::fs::copy(manifest_dir().join("Cargo.lock"), root.join("Cargo.lock"))
        .expect("copy Cargo.lock");
    std::fs::write(tests.join("invariant.rs"), USER_TEST).expect("write the user's test");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .args(["test", "--offline", "--quiet", "--", "--test-threads=1"])
        .current_dir(&root)
        .env(
            "CARGO_TARGET_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("examples-crate/target"),
        )
        .env_remove("RUSTFLAGS")
        .output()
        .expect("run cargo");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success(),
        "the violated invariant passed:\n{stdout}{stderr}"
    );
    for needle in [
        "1 passed; 1 failed",
        "node-clock-jump-forward-past-drift: a believer's key is on a majority violated",
        "node n2    clock jumps +2",
        "the jump moved its clock past the expiry  ✗ a believer's key is on a majority",
        "at t=2: c1 believes it holds the lock until its clock reads 3 (it reads 2), c2 holds no \
         lease; n1 holds c1's key, n2 holds no key, n3 holds no key",
    ] {
        assert!(
            stdout.contains(needle),
            "no {needle:?} in:\n{stdout}{stderr}"
        );
    }
}

/// The user's test file: the README's invariant, once where it holds and once where a node's
/// clock jump breaks it.
const USER_TEST: &str = r#"
use redlock_lab::catalog;
use redlock_lab::check::{Check, Invariant, Report};

fn check(name: &str) -> Report {
    let scenario = catalog::find(name).expect("in the catalog").scenario().unwrap();
    Check::new(&scenario)
        .invariant(Invariant::new("a believer's key is on a majority", |world| {
            let nodes = world.nodes().count();
            world.clients().filter(|c| c.believes).all(|c| {
                (0..nodes).filter(|&n| world.holder(n) == Some(c.index)).count() > nodes / 2
            })
        }))
        .run()
}

#[test]
fn holds() {
    check("redlock-fault-free").assert_holds("a believer's key is on a majority");
}

#[test]
fn breaks() {
    check("node-clock-jump-forward-past-drift").assert_holds("a believer's key is on a majority");
}
"#;
