//! Architecture invariants that a grep can check. Crude on purpose: any use of these names is a
//! design change that must be argued, not slipped in. Comments are stripped, so prose may cite
//! redis.io or `std::sync`.
//!
//! - `time`, `proto` and `node` perform no I/O, read no clock and use no global randomness.
//! - `src/sync.rs` is the only file that names loom, and the watchdog takes its synchronisation
//!   types from it, never from `std::sync` or `std::thread::spawn`: a `std` type inside a loom
//!   model is invisible to the checker, so a slip would make `tests/loom_watchdog.rs` pass
//!   while checking nothing.
//! - No two public types share a name: the crate's public API, walked from `src/lib.rs`
//!   through `pub mod` and `pub use`, names each type once.

use std::collections::{BTreeMap, BTreeSet};
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
    "std::io",
    "std::env",
    "std::process",
    "std::thread",
    // Printing is I/O too (`print!` also catches `eprint!`, `println!` also `eprintln!`).
    "print!",
    "println!",
    "dbg!",
    // A grouped import (`use std::{fs, io}`) would hide every path above.
    "std::{",
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

/// What a client's decisions are made of in the core: a quorum and its count, a phase, a
/// release round. The engines that drive the core name none of them in code of their own.
const LOCK_LOGIC: &[&str] = &[
    "quorum",
    "count_ones",
    "enum Phase",
    "Phase::",
    "ReleaseRound",
    "finish_excluding",
    "is_decided",
];

#[test]
fn the_zone_engine_decides_through_the_core() {
    let src = src();
    let mut files = vec![src.join("zones.rs")];
    rust_files(&src.join("zones"), &mut files);
    assert!(
        files.len() >= 15,
        "expected the zone engine's files, found {files:?}"
    );
    let found = check(&files, LOCK_LOGIC);
    // `LockPhase::` is the core's phase, read, never a copy of it.
    let own: Vec<&String> = found
        .iter()
        .filter(|offence| {
            let (file, line) = location(offence);
            let text = fs::read_to_string(file).expect("a zone file");
            let code = text.lines().nth(line - 1).unwrap_or_default();
            // A refusal names what the engine does not model (`per-client quorums`).
            let read = offence.ends_with("mentions `Phase::`") && code.contains("LockPhase::");
            !(read || code.contains("refuse("))
        })
        .collect();
    assert!(
        own.is_empty(),
        "the zone engine holds lock logic of its own (a tally, a phase, a release):\n{}",
        own.iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The file and line an offence names.
fn location(offence: &str) -> (&str, usize) {
    let mut parts = offence.splitn(3, ':');
    let file = parts.next().expect("a file");
    let line = parts.next().and_then(|l| l.parse().ok()).expect("a line");
    (file, line)
}

#[test]
fn the_lock_logic_check_fires_on_a_tally_of_its_own() {
    let text =
        "let by_tally = applied >= config.quorum;\nenum Phase { Idle }\n// a quorum in prose\n";
    let found = offences(Path::new("zones/successors.rs"), text, LOCK_LOGIC);
    assert_eq!(found.len(), 2, "{found:?}");
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
    // Standard input and output, the environment, other processes, printing and a grouped
    // import that would hide any of them.
    let text = "use std::io::Write;\nlet v = std::env::var(\"X\");\n\
                std::process::exit(1);\nprintln!(\"x\");\neprint!(\"x\");\n\
                let _ = dbg!(t);\nuse std::{collections::BTreeMap, fs};\n\
                // println! in prose\nlet bytes = io_len(); let environment = 1;";
    assert_eq!(
        offences(Path::new("x.rs"), text, IMPURE),
        vec![
            "x.rs:1: mentions `std::io`".to_owned(),
            "x.rs:2: mentions `std::env`".to_owned(),
            "x.rs:3: mentions `std::process`".to_owned(),
            "x.rs:4: mentions `println!`".to_owned(),
            "x.rs:5: mentions `print!`".to_owned(),
            "x.rs:6: mentions `dbg!`".to_owned(),
            "x.rs:7: mentions `std::{`".to_owned(),
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

/// The module table of ARCHITECTURE.md: each top-level module and the modules it may use.
fn module_table() -> BTreeMap<String, BTreeSet<String>> {
    let doc = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md"))
        .expect("ARCHITECTURE.md");
    let mut table = BTreeMap::new();
    let mut in_table = false;
    for line in doc.lines() {
        if line.starts_with("| module | may use |") {
            in_table = true;
            continue;
        }
        if !in_table {
            continue;
        }
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 3 || cells[1].starts_with("---") {
            continue;
        }
        let name = cells[1].trim_matches('`').to_owned();
        let uses = cells[2]
            .split(',')
            .map(|m| m.trim().trim_matches('`').to_owned())
            .filter(|m| !m.is_empty() && m != "—")
            .collect();
        table.insert(name, uses);
    }
    assert!(
        table.len() >= 10,
        "ARCHITECTURE.md has no module table (`| module | may use |`): {table:?}"
    );
    table
}

/// The top-level modules `text` names with `crate::module`, comments stripped.
fn crate_uses(text: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let mut uses = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or_default();
        for (at, _) in code.match_indices("crate::") {
            // `crate::` inside a longer path (`redlock_lab::crate::`) cannot occur; a
            // preceding `$` is a macro's `$crate`, which names this crate too.
            let rest = &code[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if modules.contains(&name) {
                uses.insert(name);
            }
        }
    }
    uses
}

/// Every `module uses other` that the table does not allow.
fn upward_uses(
    table: &BTreeMap<String, BTreeSet<String>>,
    files: &[(String, String, String)],
) -> Vec<String> {
    let modules: BTreeSet<String> = table.keys().cloned().collect();
    let mut found = Vec::new();
    for (module, file, text) in files {
        let Some(allowed) = table.get(module) else {
            found.push(format!(
                "{file}: module `{module}` is not in ARCHITECTURE.md's table"
            ));
            continue;
        };
        for used in crate_uses(text, &modules) {
            if used != *module && !allowed.contains(&used) {
                found.push(format!(
                    "{file}: `{module}` uses `{used}`, which the table does not allow"
                ));
            }
        }
    }
    found
}

/// A cycle in `graph`, if any, as the modules along it.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut found = path[at..].to_vec();
            found.push(node.to_owned());
            return Some(found);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

/// The crate's library files as (top-level module, path, text); the binary is left out (it
/// may use everything).
fn library_files() -> Vec<(String, String, String)> {
    let src = src();
    let mut paths = Vec::new();
    rust_files(&src, &mut paths);
    paths
        .into_iter()
        .filter_map(|path| {
            let relative = path.strip_prefix(&src).ok()?.to_path_buf();
            let first = relative
                .components()
                .next()?
                .as_os_str()
                .to_str()?
                .to_owned();
            if first == "bin" || first == "lib.rs" {
                return None;
            }
            let module = first.trim_end_matches(".rs").to_owned();
            let text = fs::read_to_string(&path).ok()?;
            Some((module, path.display().to_string(), text))
        })
        .collect()
}

#[test]
fn modules_use_only_what_the_architecture_table_allows() {
    let table = module_table();
    let files = library_files();
    assert!(
        files.len() > 30,
        "expected the crate's files, found {}",
        files.len()
    );
    let found = upward_uses(&table, &files);
    assert!(
        found.is_empty(),
        "imports against ARCHITECTURE.md's module table:\n{}",
        found.join("\n")
    );
    assert_eq!(cycle(&table), None, "the module table itself has a cycle");
}

/// Every `use` statement of `text` (any visibility, comments stripped), whitespace folded,
/// as its use tree: `use super::{a::B, C};` is `super::{a::B,C}`.
fn use_trees(text: &str) -> Vec<String> {
    let mut trees = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let code = line.split("//").next().unwrap_or_default().trim();
        let code = code
            .strip_prefix("pub(crate) ")
            .or(code.strip_prefix("pub(super) "));
        let code = code.or(Some(line.trim())).unwrap_or_default();
        let code = code.strip_prefix("pub ").unwrap_or(code);
        let Some(tree) = code
            .split("//")
            .next()
            .unwrap_or_default()
            .strip_prefix("use ")
        else {
            continue;
        };
        let mut statement = tree.to_owned();
        while !statement.trim_end().ends_with(';') {
            let Some(next) = lines.next() else { break };
            statement.push(' ');
            statement.push_str(next.split("//").next().unwrap_or_default());
        }
        let statement = statement.split_whitespace().collect::<Vec<_>>().join(" ");
        trees.push(
            statement
                .trim_end_matches(';')
                .replace(", ", ",")
                .replace("{ ", "{")
                .replace(" }", "}"),
        );
    }
    trees
}

/// The names a folder's top file (`face`) re-exports from its files, each with the file it
/// comes from; a glob (`pub use file::*`) brings every `pub` item `read(file)` declares.
fn face_exports(
    face: &str,
    siblings: &BTreeSet<String>,
    read: &dyn Fn(&str) -> String,
) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for (path, name) in use_trees(face).iter().flat_map(|tree| use_paths(tree)) {
        let Some(file) = path.first().filter(|first| siblings.contains(*first)) else {
            continue;
        };
        if name == "*" {
            for item in surface(&read(file)).items.into_keys() {
                names.insert(item, file.clone());
            }
        } else {
            names.insert(name, file.clone());
        }
    }
    names
}

/// The sibling files of one folder that `text` (one of them) reaches: through `super::file`,
/// and through a name the folder's top file re-exports from a file (`re_exported`, by
/// [`face_exports`]) as `super::Name` or `crate::folder::Name` (`module` is the folder's
/// path), so a loop through the top file is seen too.
fn sibling_uses(
    text: &str,
    re_exported: &BTreeMap<String, String>,
    module: &str,
    siblings: &BTreeSet<String>,
) -> BTreeSet<String> {
    let mut uses = BTreeSet::new();
    let mut reach = |rest: &str| {
        let first: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if siblings.contains(&first) {
            uses.insert(first);
        } else if let Some(file) = re_exported.get(&first) {
            uses.insert(file.clone());
        }
    };
    for tree in use_trees(text) {
        for (path, _) in use_paths(&tree) {
            reach(
                &path
                    .join("::")
                    .replacen(&format!("crate::{module}::"), "super::", 1)
                    .replacen("super::", "", 1),
            );
        }
    }
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or_default();
        if code.trim_start().starts_with("mod ") || code.contains("use ") {
            continue;
        }
        for (at, _) in code.match_indices("super::") {
            reach(&code[at + "super::".len()..]);
        }
    }
    uses
}

/// Every folder of `src/` with a top file beside it (`a/` and `a.rs`), the binary's included.
fn folders(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            if path.with_extension("rs").is_file() {
                out.push(path.clone());
            }
            folders(&path, out);
        }
    }
}

/// Within a folder, the files form no cycle, whether one names another (`super::sibling`) or
/// takes a name the folder's top file re-exports from it.
#[test]
fn sibling_files_import_each_other_without_cycles() {
    let src = src();
    let mut dirs = Vec::new();
    folders(&src, &mut dirs);
    assert!(dirs.len() >= 15, "expected module folders, found {dirs:?}");
    let mut loops = Vec::new();
    for dir in dirs {
        let face = fs::read_to_string(dir.with_extension("rs")).expect("top file");
        let files: Vec<PathBuf> = fs::read_dir(&dir)
            .expect("folder")
            .map(|entry| entry.expect("entry").path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
            .collect();
        let stem = |f: &PathBuf| {
            f.file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default()
                .to_owned()
        };
        let siblings: BTreeSet<String> = files.iter().map(stem).collect();
        let relative = dir.strip_prefix(&src).expect("under src");
        let module = relative.to_string_lossy().replace('/', "::");
        let read =
            |file: &str| fs::read_to_string(dir.join(file).with_extension("rs")).expect("read");
        let re_exported = face_exports(&face, &siblings, &read);
        let mut graph = BTreeMap::new();
        for file in &files {
            let text = fs::read_to_string(file).expect("read");
            // A file's unit tests may build on any sibling: they are not the file's design.
            let text = text
                .split("\n#[cfg(test)]\nmod ")
                .next()
                .unwrap_or_default();
            let mut uses = sibling_uses(text, &re_exported, &module, &siblings);
            uses.remove(&stem(file));
            graph.insert(stem(file), uses);
        }
        if let Some(found) = cycle(&graph) {
            loops.push(format!("{}: {}", relative.display(), found.join(" -> ")));
        }
    }
    assert!(
        loops.is_empty(),
        "files import in a loop:\n{}",
        loops.join("\n")
    );
}

#[test]
fn the_sibling_check_sees_a_loop_through_the_top_file() {
    let siblings: BTreeSet<String> = ["raw", "settings"].map(str::to_owned).into();
    let face = "mod raw;\nmod settings;\npub use raw::Raw;\npub(crate) use settings::{Lock, Settings as Set};\n";
    let read = |file: &str| match file {
        "settings" => "pub struct Globbed;\n".to_owned(),
        _ => String::new(),
    };
    let names = face_exports(&format!("{face}pub use settings::*;\n"), &siblings, &read);
    let raw = "use super::{Set, other::X};\n";
    let settings = "use crate::scenario::Raw;\n";
    let uses = |text: &str| sibling_uses(text, &names, "scenario", &siblings);
    assert_eq!(uses(raw), ["settings".to_owned()].into());
    assert_eq!(uses(settings), ["raw".to_owned()].into());
    assert_eq!(
        uses("use super::Globbed;\n"),
        ["settings".to_owned()].into()
    );
    let code = "fn f() -> super::raw::Raw { todo!() } // super::settings in prose\n";
    assert_eq!(uses(code), ["raw".to_owned()].into());
}

#[test]
fn the_layering_check_fires_on_an_upward_import_and_a_cycle() {
    let table: BTreeMap<String, BTreeSet<String>> = [
        ("time", vec![]),
        ("proto", vec!["time"]),
        ("model", vec!["proto", "time"]),
    ]
    .into_iter()
    .map(|(m, uses)| (m.to_owned(), uses.into_iter().map(str::to_owned).collect()))
    .collect();
    let files = vec![
        (
            "proto".to_owned(),
            "src/proto/x.rs".to_owned(),
            "use crate::time::Millis;\nuse crate::model::World; // upward\n// crate::model in prose\n"
                .to_owned(),
        ),
        ("sim".to_owned(), "src/sim.rs".to_owned(), String::new()),
    ];
    assert_eq!(
        upward_uses(&table, &files),
        vec![
            "src/proto/x.rs: `proto` uses `model`, which the table does not allow".to_owned(),
            "src/sim.rs: module `sim` is not in ARCHITECTURE.md's table".to_owned(),
        ]
    );
    let mut cyclic = table.clone();
    cyclic.get_mut("time").unwrap().insert("model".to_owned());
    assert_eq!(
        cycle(&cyclic),
        Some(vec![
            "model".to_owned(),
            "proto".to_owned(),
            "time".to_owned(),
            "model".to_owned()
        ])
    );
    assert_eq!(cycle(&table), None);
}

/// The most lines a function may span, from its `fn` line to its closing brace.
const MAX_FUNCTION_LINES: usize = 70;

/// Functions still allowed to be longer, as (file under `src/`, function name, its length
/// today): each entry is a debt, and its length may only go down. None are left.
const LONG_FUNCTIONS_ALLOWED: &[(&str, &str, usize)] = &[];

/// Every function of `text` longer than `max` lines, as (name, first line, length). A
/// function runs from the line that opens with `fn` (after any visibility, `const`, `async`
/// or `unsafe`) to the first line that is its indentation and `}`; a declaration without a
/// body and a body on one line are skipped. Crude like the greps above: it reads the
/// formatting `cargo fmt` gives.
fn long_functions(text: &str, max: usize) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        let code = line.trim_start();
        let indent = &line[..line.len() - code.len()];
        let mut rest = code;
        for prefix in [
            "pub(crate) ",
            "pub(super) ",
            "pub ",
            "const ",
            "async ",
            "unsafe ",
        ] {
            rest = rest.strip_prefix(prefix).unwrap_or(rest);
        }
        let Some(signature) = rest.strip_prefix("fn ") else {
            continue;
        };
        let name: String = signature
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let closing = format!("{indent}}}");
        let mut opened = false;
        let mut end = None;
        for (at, line) in lines.iter().enumerate().skip(start) {
            if at > start && line.trim_end() == closing {
                end = Some(at);
                break;
            }
            opened |= line.contains('{');
            let trimmed = line.trim_end();
            if (!opened && trimmed.ends_with(';')) || (at == start && trimmed.ends_with('}')) {
                break;
            }
        }
        if let Some(end) = end {
            let length = end - start + 1;
            if length > max {
                found.push((name, start + 1, length));
            }
        }
    }
    found
}

#[test]
fn no_function_is_longer_than_seventy_lines() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    assert!(
        files.len() > 10,
        "expected the crate's files, found {files:?}"
    );
    let mut offences = Vec::new();
    let mut still_long = BTreeSet::new();
    for file in &files {
        let text =
            fs::read_to_string(file).unwrap_or_else(|e| panic!("read {}: {e}", file.display()));
        let relative = file.strip_prefix(src()).expect("a file under src/");
        let relative = relative.to_string_lossy().replace('\\', "/");
        for (name, line, length) in long_functions(&text, MAX_FUNCTION_LINES) {
            let allowed = LONG_FUNCTIONS_ALLOWED
                .iter()
                .find(|(f, n, _)| *f == relative && *n == name);
            match allowed {
                Some(&(_, _, max)) if length <= max => {
                    still_long.insert((relative.clone(), name));
                }
                Some(&(_, _, max)) => offences.push(format!(
                    "src/{relative}:{line}: `{name}` grew to {length} lines (allowed {max})"
                )),
                None => offences.push(format!(
                    "src/{relative}:{line}: `{name}` is {length} lines; split it into named steps \
                     (at most {MAX_FUNCTION_LINES})"
                )),
            }
        }
    }
    // An allowance nobody needs any more is removed, so the list only shrinks.
    for (file, name, _) in LONG_FUNCTIONS_ALLOWED {
        if !still_long.contains(&((*file).to_owned(), (*name).to_owned())) {
            offences.push(format!(
                "src/{file}: `{name}` is no longer over {MAX_FUNCTION_LINES} lines (or gone): \
                 remove it from LONG_FUNCTIONS_ALLOWED"
            ));
        }
    }
    assert!(offences.is_empty(), "{}", offences.join("\n"));
}

#[test]
fn the_length_count_runs_from_fn_to_its_closing_brace() {
    let body = "    x += 1;\n".repeat(5);
    let text = format!(
        "pub fn long(x: u32) {{\n{body}}}\n\nimpl A {{\n    pub(crate) fn method(\n        &self,\n    ) -> u32 {{\n{body}        1\n    }}\n}}\n\ntrait T {{\n    fn declared(&self)\n        -> u32;\n}}\nfn one_line() {{}}\n"
    );
    assert_eq!(
        long_functions(&text, 5),
        vec![("long".to_owned(), 1, 7), ("method".to_owned(), 10, 10)]
    );
    assert!(long_functions(&text, 10).is_empty());
}

/// The kinds of item that name a type: two public ones of one name are a collision.
const TYPE_KINDS: &[&str] = &["struct", "enum", "trait", "type", "union"];

/// Every kind of item a `pub` declaration can open with.
const ITEM_KINDS: &[&str] = &[
    "struct", "enum", "trait", "type", "union", "fn", "const", "static", "macro",
];

/// One module file's surface, as its top-level lines declare it: its `pub` items (name →
/// kind), its child modules (name → whether `pub`) and what its `pub use` lines re-export
/// (path, the name it gets). `pub(crate)` and `pub(super)` declarations are not `pub`.
#[derive(Debug, Default)]
struct Surface {
    items: BTreeMap<String, String>,
    children: BTreeMap<String, bool>,
    uses: Vec<(Vec<String>, String)>,
}

/// What a name a module exports stands for: an item (its kind, and where it is declared: the
/// same item re-exported twice is one item), a module, or something from another crate.
#[derive(Clone, Debug, PartialEq)]
enum Export {
    Item { kind: String, origin: String },
    Module(Vec<String>),
    External,
}

/// The surface of one module file. Crude like the greps above: it reads the formatting
/// `cargo fmt` gives, where an item at the top level starts in column 0. A declaration after
/// `#[cfg(test)]` or a doctest-only `cfg` is no API; an inline `pub mod name { … }` is refused,
/// since its contents would escape this reading.
fn surface(text: &str) -> Surface {
    let mut surface = Surface::default();
    let mut test_only = false;
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let code = line.split("//").next().unwrap_or_default().trim_end();
        if code.starts_with("#[") {
            test_only |= code.contains("cfg(test)") || code.contains("doctest");
            continue;
        }
        if code.is_empty() || code.starts_with(' ') || code.starts_with(')') {
            continue;
        }
        let skip = std::mem::take(&mut test_only);
        if skip {
            continue;
        }
        // A `pub(crate)` module is read too: a `pub use` may re-export its `pub` items.
        let declared = ["pub(crate) ", "pub(super) "]
            .iter()
            .find_map(|visibility| code.strip_prefix(visibility))
            .unwrap_or(code);
        if let Some(module) = declared
            .strip_prefix("mod ")
            .or(declared.strip_prefix("pub mod "))
        {
            let name = module
                .strip_suffix(';')
                .unwrap_or_else(|| panic!("`{code}`: an inline module; give it a file of its own"));
            surface
                .children
                .insert(name.to_owned(), declared.starts_with("pub "));
        } else if let Some(tree) = code.strip_prefix("pub use ") {
            let mut statement = tree.to_owned();
            while !statement.ends_with(';') {
                let next = lines.next().expect("a `pub use` ends with `;`");
                statement.push(' ');
                statement.push_str(next.split("//").next().unwrap_or_default());
            }
            let statement = statement.split_whitespace().collect::<Vec<_>>().join(" ");
            let statement = statement
                .trim_end_matches(';')
                .replace(", ", ",")
                .replace("{ ", "{")
                .replace(" }", "}");
            surface.uses.extend(use_paths(&statement));
        } else if let Some(declaration) = code.strip_prefix("pub ") {
            let (kind, name) = item(declaration);
            surface.items.insert(name, kind);
        }
    }
    surface
}

/// The kind and name a `pub` declaration (after `pub `) declares: `const fn` is a function,
/// `async`, `unsafe` and `extern "C"` qualify one.
fn item(declaration: &str) -> (String, String) {
    let words: Vec<&str> = declaration
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|word| !word.is_empty())
        .collect();
    let at = words
        .iter()
        .position(|word| ITEM_KINDS.contains(word))
        .unwrap_or_else(|| panic!("`pub {declaration}`: no item kind this check knows"));
    let at = if words[at] == "const" && words.get(at + 1) == Some(&"fn") {
        at + 1
    } else {
        at
    };
    let name = words.get(at + 1).expect("an item has a name");
    (words[at].to_owned(), (*name).to_owned())
}

/// The paths of one use tree (no spaces but around `as`), each with the name it gets:
/// `a::{b, c::{d as e, self}}` is `a::b` as `b`, `a::c::d` as `e`, `a::c` as `c`.
fn use_paths(tree: &str) -> Vec<(Vec<String>, String)> {
    let Some(open) = tree.find('{') else {
        let (path, alias) = match tree.split_once(" as ") {
            Some((path, alias)) => (path, Some(alias)),
            None => (tree, None),
        };
        let mut segments: Vec<String> = path.split("::").map(str::to_owned).collect();
        if segments.last().is_some_and(|last| last == "self") {
            segments.pop();
        }
        let name = alias.map_or_else(
            || segments.last().cloned().unwrap_or_default(),
            str::to_owned,
        );
        return vec![(segments, name)];
    };
    let (head, inner) = (&tree[..open], &tree[open + 1..tree.len() - 1]);
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (at, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|part| !part.is_empty())
        .flat_map(|part| use_paths(&format!("{head}{part}")))
        .collect()
}

/// Every module file of the crate, by module path, read through `read` (a path under `src/`:
/// `lib.rs`, `a.rs`, `a/b.rs` or `a/b/mod.rs`), from the root down through every `mod`.
fn module_tree(read: &dyn Fn(&str) -> Option<String>) -> BTreeMap<Vec<String>, Surface> {
    let mut tree = BTreeMap::new();
    let mut pending = vec![Vec::<String>::new()];
    while let Some(module) = pending.pop() {
        let text = if module.is_empty() {
            read("lib.rs")
        } else {
            let base = module.join("/");
            read(&format!("{base}.rs")).or_else(|| read(&format!("{base}/mod.rs")))
        };
        let text = text.unwrap_or_else(|| panic!("no file for module {module:?}"));
        let surface = surface(&text);
        for child in surface.children.keys() {
            pending.push([module.clone(), vec![child.clone()]].concat());
        }
        tree.insert(module, surface);
    }
    tree
}

/// Every name `module` exports (its `pub` items, its `pub mod`s and its `pub use`s), resolved
/// to what it stands for.
fn exports(tree: &BTreeMap<Vec<String>, Surface>, module: &[String]) -> BTreeMap<String, Export> {
    let surface = &tree[module];
    let origin = |name: &str| {
        format!(
            "{}::{name}",
            [&["crate".to_owned()], module].concat().join("::")
        )
    };
    let mut out: BTreeMap<String, Export> = surface
        .items
        .iter()
        .map(|(name, kind)| {
            (
                name.clone(),
                Export::Item {
                    kind: kind.clone(),
                    origin: origin(name),
                },
            )
        })
        .collect();
    for (child, public) in &surface.children {
        if *public {
            out.insert(
                child.clone(),
                Export::Module([module, std::slice::from_ref(child)].concat()),
            );
        }
    }
    for (path, name) in &surface.uses {
        let first = [module, &path[..1]].concat();
        if !matches!(path[0].as_str(), "crate" | "self" | "super") && !tree.contains_key(&first) {
            out.insert(name.clone(), Export::External);
            continue;
        }
        let target = resolve(module, &path[..path.len() - 1]);
        let last = &path[path.len() - 1];
        if last == "*" {
            for (glob, export) in exports(tree, &target) {
                out.entry(glob).or_insert(export);
            }
            continue;
        }
        let child = [target.clone(), vec![last.clone()]].concat();
        let export = if tree.contains_key(&child) {
            Export::Module(child)
        } else {
            exports(tree, &target).remove(last).unwrap_or_else(|| {
                panic!(
                    "`pub use {}` in {module:?}: no such public item",
                    path.join("::")
                )
            })
        };
        out.insert(name.clone(), export);
    }
    out
}

/// The module that a path of this crate's modules names from `module`.
fn resolve(module: &[String], segments: &[String]) -> Vec<String> {
    let mut at = module.to_vec();
    for segment in segments {
        match segment.as_str() {
            "crate" => at.clear(),
            "self" => {}
            "super" => {
                at.pop();
            }
            name => at.push(name.to_owned()),
        }
    }
    at
}

/// Every public type of the crate, as (the public path it is reached by, where it is
/// declared), walking from the root through `pub mod`s.
fn public_types(tree: &BTreeMap<Vec<String>, Surface>) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut pending = vec![Vec::<String>::new()];
    while let Some(module) = pending.pop() {
        for (name, export) in exports(tree, &module) {
            match export {
                Export::Module(child) if child == [module.clone(), vec![name.clone()]].concat() => {
                    pending.push(child);
                }
                Export::Item { kind, origin } if TYPE_KINDS.contains(&kind.as_str()) => {
                    let path = [&["crate".to_owned()], &module[..], &[name]].concat();
                    found.push((path.join("::"), origin));
                }
                _ => {}
            }
        }
    }
    found
}

/// Each name that two distinct public types share, with where each is declared.
fn colliding_names(tree: &BTreeMap<Vec<String>, Surface>) -> Vec<String> {
    let mut by_name: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (path, origin) in public_types(tree) {
        let name = path.rsplit("::").next().expect("a path").to_owned();
        by_name.entry(name).or_default().insert(origin);
    }
    by_name
        .into_iter()
        .filter(|(_, origins)| origins.len() > 1)
        .map(|(name, origins)| format!("`{name}`: {}", Vec::from_iter(origins).join(", ")))
        .collect()
}

#[test]
fn no_two_public_types_share_a_name() {
    let src = src();
    let tree = module_tree(&|path| fs::read_to_string(src.join(path)).ok());
    let types = public_types(&tree);
    assert!(
        types.len() > 100,
        "expected the crate's public types, found {types:?}"
    );
    let collisions = colliding_names(&tree);
    assert!(
        collisions.is_empty(),
        "public types of one name (rename one, or make it `pub(crate)`):\n{}",
        collisions.join("\n")
    );
}

#[test]
fn the_name_check_fires_on_two_public_types_of_one_name() {
    let files: BTreeMap<&str, &str> = [
        (
            "lib.rs",
            "//! A crate.\npub mod a;\nmod b;\npub use a::Outcome;\npub use b::{Thing, self as c};\n#[cfg(test)]\nmod tests;\n#[cfg(doctest)]\npub struct Readme;\npub use rand_core;\n",
        ),
        (
            "a.rs",
            "mod inner;\npub(crate) mod deep;\npub use inner::{\n    Outcome, Same,\n};\npub use super::b::Outcome as Other;\npub use deep::Same as Twin;\npub struct Thing;\npub(crate) struct Readme;\n",
        ),
        ("a/deep.rs", "pub struct Same;\n"),
        (
            "a/inner.rs",
            "pub struct Outcome;\npub enum Same {}\npub(crate) struct Hidden;\npub const fn Thing() {}\n",
        ),
        (
            "b.rs",
            "pub struct Thing;\npub struct Outcome; // reached only as `a::Other`\npub struct Same;\n",
        ),
    ]
    .into_iter()
    .collect();
    let tree = module_tree(&|path| files.get(path).map(|text| (*text).to_owned()));
    assert_eq!(
        public_types(&tree).len(),
        7,
        "a::{{Other, Outcome, Same, Thing, Twin}}, Outcome and Thing: {:?}",
        public_types(&tree)
    );
    assert_eq!(
        colliding_names(&tree),
        vec!["`Thing`: crate::a::Thing, crate::b::Thing".to_owned()]
    );
}

/// What a face file (`src/x.rs` beside a folder `src/x/`) holds besides declarations: every
/// statement that is not a `mod` or a `use`, by its first words. Comments and attributes are
/// left out; a face file says what its folder has and lets the children hold the code.
fn face_offences(text: &str) -> Vec<String> {
    let code: String = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut plain = String::new();
    let mut depth = 0usize;
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        let opens = c == '#' && matches!(chars.peek(), Some('[' | '!'));
        if opens || (depth > 0 && c == '[') {
            depth += 1;
            if c == '#' && chars.peek() == Some(&'!') {
                chars.next();
            }
            if c == '#' {
                chars.next();
            }
        } else if depth > 0 && c == ']' {
            depth -= 1;
        } else if depth == 0 {
            plain.push(c);
        }
    }
    plain
        .split(';')
        .map(str::trim)
        // A block's closing brace is left over after its inner statements: the block's
        // opening statement is the offence.
        .filter(|statement| !statement.is_empty() && *statement != "}")
        .filter(|statement| {
            let words = statement
                .trim_start_matches("pub(crate) ")
                .trim_start_matches("pub ");
            !(words.starts_with("mod ") || words.starts_with("use "))
        })
        .map(|statement| statement.lines().next().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn face_files_only_declare_and_re_export() {
    let src = src();
    let mut paths = Vec::new();
    rust_files(&src, &mut paths);
    let mut offences = Vec::new();
    for path in paths {
        if !path.with_extension("").is_dir() {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap();
        for statement in face_offences(&text) {
            offences.push(format!("{}: `{statement}`", path.display()));
        }
    }
    assert!(
        offences.is_empty(),
        "face files hold code; move it into a child module:\n{}",
        offences.join("\n")
    );
}

#[test]
fn the_face_check_fires_on_code_and_not_on_declarations() {
    let face = "//! Docs; with a semicolon.\n#![allow(x, reason = \"a [b]; c\")]\n\
                mod a;\n#[cfg(feature = \"m\")]\npub mod b;\npub use a::{X, Y};\n\
                pub(crate) use b::Z;\n";
    assert_eq!(face_offences(face), Vec::<String>::new());
    let code = format!("{face}pub const N: usize = 3;\npub trait T {{\n    fn f();\n}}\n");
    assert_eq!(
        face_offences(&code),
        ["pub const N: usize = 3", "pub trait T {"]
    );
}

/// The variants `text` names as `Event::Name`, in order of first appearance.
fn event_variants(text: &str) -> BTreeSet<String> {
    text.match_indices("Event::")
        .map(|(at, prefix)| {
            let rest = &text[at + prefix.len()..];
            let end = rest
                .find(|c: char| !c.is_ascii_alphanumeric())
                .unwrap_or(rest.len());
            rest[..end].to_owned()
        })
        .filter(|name| name.starts_with(|c: char| c.is_ascii_uppercase()))
        .collect()
}

/// Where `Event::tell` (in `words`, the text of `event/words.rs`) sends a variant to a
/// family method whose match does not tell it, or a family method tells a variant the
/// dispatch sends elsewhere: each names the method and the variants. A family method ends in
/// `unreachable!` for the variants it is not sent, so a mismatch is a panic in a story.
fn family_mismatches(words: &str) -> Vec<String> {
    let dispatch_start = words
        .find("fn write(&self")
        .expect("Event's words, by family");
    let dispatch_end = dispatch_start + words[dispatch_start..].find("\n}\n").expect("its end");
    let dispatch = &words[dispatch_start..dispatch_end];
    let mut sent: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    // Each arm is its patterns, then `=>` and a call `self.tell_…(f)` (bare or in a block):
    // the patterns of a call are what lies between the call before it and this one.
    let mut arm_start = dispatch.find("match self {").expect("the dispatch match");
    while let Some(call) = dispatch[arm_start..].find("self.write_") {
        let call = arm_start + call;
        let name_start = call + "self.".len();
        let name_end = name_start + dispatch[name_start..].find('(').expect("a call");
        let method = dispatch[name_start..name_end].to_owned();
        let variants = event_variants(&dispatch[arm_start..call]);
        sent.entry(method).or_default().extend(variants);
        arm_start = name_end;
    }
    // A family method nothing is sent to tells its variants to nobody.
    for (at, _) in words.match_indices("fn write_") {
        let name_end = at + words[at..].find('(').expect("a signature");
        let method = &words[at + "fn ".len()..name_end];
        if words[name_end..].starts_with("(&self") {
            sent.entry(method.to_owned()).or_default();
        }
    }
    let mut problems = Vec::new();
    for (method, sent_here) in &sent {
        let header = format!("fn {method}(&self");
        let Some(start) = words.find(&header) else {
            problems.push(format!("`{method}` is called but not defined"));
            continue;
        };
        let end = start + words[start..].find("\n    }\n").expect("the method's end");
        let told = event_variants(&words[start..end]);
        let untold: Vec<_> = sent_here.difference(&told).collect();
        let unsent: Vec<_> = told.difference(sent_here).collect();
        if !untold.is_empty() || !unsent.is_empty() {
            problems.push(format!(
                "`{method}` is sent {untold:?} that it does not write, and writes {unsent:?} that it is not sent"
            ));
        }
    }
    problems
}

/// Every variant `Event`'s `Display` sends to a family method is one that method tells, and
/// no other: the `unreachable!` at the end of each family is unreachable by this check, not
/// by reading (the dispatch's own match is exhaustive, so every variant is sent somewhere).
#[test]
fn every_event_family_tells_exactly_the_variants_sent_to_it() {
    let words = std::fs::read_to_string(src().join("event/words.rs")).unwrap();
    let problems = family_mismatches(&words);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_family_check_fires_on_a_variant_sent_to_the_wrong_family() {
    let words = std::fs::read_to_string(src().join("event/words.rs")).unwrap();
    let planted = words.replacen(
        "Event::ReleaseServed { .. } => self.write_release_answer(f),",
        "Event::ReleaseServed { .. } => self.write_delay(f),",
        1,
    );
    assert_ne!(planted, words, "the planted line must exist");
    let problems = family_mismatches(&planted);
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems
            .iter()
            .any(|p| p.contains("`write_delay` is sent [\"ReleaseServed\"]"))
    );
}
