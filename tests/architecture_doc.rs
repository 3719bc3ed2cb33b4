//! ARCHITECTURE.md's numbers come from the commands it names: the features table's crate counts
//! are what its own `cargo tree` recipe prints (run offline, for every row), the crates `run`
//! adds on Unix are those only signal-hook and rustix bring, and every direct dependency in
//! Cargo.toml has its reason in the dependency table (and every crate there is a dependency).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(name: &str) -> String {
    std::fs::read_to_string(manifest_dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The text of ARCHITECTURE.md under `heading`, up to the next heading of its level.
fn section<'a>(doc: &'a str, heading: &str) -> &'a str {
    let start = doc
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("ARCHITECTURE.md has no {heading:?}"));
    let body = &doc[start + heading.len() + 2..];
    &body[..body.find("\n## ").unwrap_or(body.len())]
}

/// The cells of every row of the first table in `text`, header and rule left out.
fn table_rows(text: &str) -> Vec<Vec<String>> {
    let rows: Vec<Vec<String>> = text
        .lines()
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .skip(2)
        .map(|line| {
            let cells: Vec<&str> = line.split('|').collect();
            cells[1..cells.len() - 1]
                .iter()
                .map(|cell| cell.trim().to_owned())
                .collect()
        })
        .collect();
    assert!(!rows.is_empty(), "no table in:\n{text}");
    rows
}

/// The words in backticks in `text`.
fn quoted(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// Cargo as the test run has it (Cargo tells the tests its path), else the one on PATH.
fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

/// Runs the recipe as a reader would paste it, through bash with `pipefail` (so a failing
/// `cargo tree` cannot pass as a count of 0), with `FEATURES` replaced and `--offline` added.
fn run_recipe(recipe: &str, features: &str) -> usize {
    let command = recipe
        .replacen("cargo tree", "\"$CARGO_UNDER_TEST\" tree --offline", 1)
        .replace("FEATURES", features);
    let out = Command::new("bash")
        .args(["-o", "pipefail", "-c", &command])
        .env("CARGO_UNDER_TEST", cargo())
        .current_dir(manifest_dir())
        .output()
        .expect("run bash");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "`{command}` failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("`{command}` printed {stdout:?}, not a count"))
}

/// The lines `cargo tree -e normal --prefix none --no-dedupe ARGS` prints, each once.
fn tree(args: &[&str]) -> BTreeSet<String> {
    let out = Command::new(cargo())
        .args(["tree", "--offline", "-e", "normal", "--prefix", "none"])
        .arg("--no-dedupe")
        .args(args)
        .current_dir(manifest_dir())
        .output()
        .expect("run cargo tree");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_feature_tables_crate_counts_are_what_its_recipe_prints() {
    let doc = read("ARCHITECTURE.md");
    let features = section(&doc, "## Features, and what each builds");
    let recipe = quoted(features)
        .into_iter()
        .find(|q| q.starts_with("cargo tree") && q.contains("FEATURES"))
        .expect("a `cargo tree … FEATURES …` recipe");
    let mut stated = Vec::new();
    let mut printed = Vec::new();
    for row in table_rows(features) {
        // `default (`cli`)` is the recipe with no flag; every other row names its flags.
        let flags = if row[0].starts_with("default") {
            ""
        } else {
            row[0].trim_matches('`')
        };
        let count: usize = row[2]
            .parse()
            .unwrap_or_else(|_| panic!("{:?} is not a count", row[2]));
        stated.push((flags.to_owned(), count));
        printed.push((flags.to_owned(), run_recipe(recipe, flags)));
    }
    assert_eq!(stated.len(), 5, "{stated:?}");
    assert_eq!(printed, stated, "printed by `{recipe}` against stated");
}

#[test]
fn the_crates_run_adds_on_unix_are_those_only_signal_hook_and_rustix_bring() {
    let doc = read("ARCHITECTURE.md");
    let features = section(&doc, "## Features, and what each builds");
    let claim = "`run` adds signal-hook and rustix: ";
    let at = features
        .find(claim)
        .expect("the table says what `run` adds")
        + claim.len();
    let stated: usize = features[at..]
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .expect("a count of crates");
    let all = tree(&[]);
    let without = tree(&["--prune", "signal-hook", "--prune", "rustix"]);
    let only_theirs: Vec<&String> = all.difference(&without).collect();
    assert_eq!(only_theirs.len(), stated, "{only_theirs:?}");
}

/// The direct dependencies of every dependency table in Cargo.toml (normal, dev, build and
/// per-target), by name.
fn direct_dependencies(manifest: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut in_dependencies = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_dependencies = line.ends_with("dependencies]");
            continue;
        }
        if !in_dependencies || line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some((name, _)) = line.split_once('=') {
            names.insert(name.trim().to_owned());
        }
    }
    names
}

#[test]
fn every_direct_dependency_has_its_reason_and_every_reason_a_dependency() {
    let dependencies = direct_dependencies(&read("Cargo.toml"));
    assert!(dependencies.len() >= 20, "{dependencies:?}");
    let doc = read("ARCHITECTURE.md");
    let mut explained = BTreeSet::new();
    for row in table_rows(section(&doc, "## Dependencies, and why")) {
        assert!(row[1].len() > 10, "{:?} has no reason", row[0]);
        // The first cell names crates in backticks, then says in parentheses where they are
        // used (which may quote other words: `run`, a cfg).
        let names = row[0].split(" (").next().unwrap_or_default();
        explained.extend(quoted(names).into_iter().map(str::to_owned));
    }
    let unexplained: Vec<_> = dependencies.difference(&explained).collect();
    assert!(
        unexplained.is_empty(),
        "no reason in ARCHITECTURE.md: {unexplained:?}"
    );
    let stale: Vec<_> = explained.difference(&dependencies).collect();
    assert!(stale.is_empty(), "not in Cargo.toml: {stale:?}");
}

/// The page is read line by line, one sentence or clause to a line; a line longer than this
/// is a paragraph nobody can diff or review (the longest was 3 199 characters).
#[test]
fn no_line_of_the_page_is_a_paragraph() {
    const LONGEST: usize = 1_000;
    let doc = read("ARCHITECTURE.md");
    for (number, line) in doc.lines().enumerate() {
        let length = line.chars().count();
        assert!(
            length <= LONGEST,
            "ARCHITECTURE.md:{}: {length} characters; split it at its sentences",
            number + 1
        );
    }
}

/// The lines a merge leaves where two sides of a file conflict.
fn conflict_markers(text: &str) -> Vec<usize> {
    (text.lines().enumerate())
        .filter(|(_, line)| {
            line.starts_with("<<<<<<< ") || line.starts_with(">>>>>>> ") || *line == "======="
        })
        .map(|(n, _)| n + 1)
        .collect()
}

/// Every text file of the project below `dir` (build output and hidden folders left out).
fn text_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if path.is_dir() {
            if !name.starts_with('.') && name != "target" {
                text_files(&path, out);
            }
        } else if [".rs", ".md", ".toml", ".c", ".sh"]
            .iter()
            .any(|end| name.ends_with(end))
        {
            out.push(path);
        }
    }
}

#[test]
fn no_file_keeps_a_merge_conflict() {
    let mut files = Vec::new();
    text_files(manifest_dir(), &mut files);
    let offences: Vec<String> = files
        .iter()
        .flat_map(|file| {
            let text = std::fs::read_to_string(file).unwrap_or_default();
            let shown = file
                .strip_prefix(manifest_dir())
                .unwrap_or(file)
                .display()
                .to_string();
            conflict_markers(&text)
                .into_iter()
                .map(move |line| format!("{shown}:{line}"))
        })
        .collect();
    assert!(offences.is_empty(), "conflict markers at {offences:?}");
    assert!(
        files.len() > 200,
        "the walk found only {} files",
        files.len()
    );
}

#[test]
fn the_conflict_check_fires_on_a_merge_left_behind() {
    let text = "a\n<<<<<<< HEAD\nb\n=======\nc\n>>>>>>> other\nd\n";
    assert_eq!(conflict_markers(text), [2, 4, 6]);
}
