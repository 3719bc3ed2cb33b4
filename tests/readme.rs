//! The README and the pages it moved its details to cannot rot: every command in their shell
//! blocks is run (against the built binary) or is the test script `.ci/run` runs; the README
//! is a first hour's read, at most 200 lines; the scenario table of `docs/scenarios.md` is
//! written from the catalog and what the checker finds now; its Mermaid diagram is what
//! `trace --format mermaid` prints now; every linked scenario exists.

mod common;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use redlock_lab::catalog::{self, CATALOG};
use redlock_lab::check::{Check, Report};
use redlock_lab::scenario::{Citation, Scenario, Source};

use common::{BIN, scratch_dir};

fn readme() -> String {
    page("README.md")
}

/// A page of the repository, by its path from the crate's root.
fn page(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The pages whose shell commands are run: the README, and the docs pages that took over the
/// README's longer command lists (the commands in detail, the safety section's sweeps).
const PAGES_RUN: [&str; 3] = ["README.md", "docs/commands.md", "docs/safety.md"];

/// The page the scenario table and the Mermaid diagram live on.
const SCENARIOS: &str = "docs/scenarios.md";

/// The README is the first hour's read; everything longer has a page in `docs/`.
#[test]
fn the_readme_is_at_most_200_lines() {
    let lines = readme().lines().count();
    assert!(
        lines <= 200,
        "README.md has {lines} lines: move the details to docs/"
    );
}

/// The fenced blocks of `lang`, in order.
fn blocks(text: &str, lang: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match &mut current {
            None if line.trim_start() == format!("```{lang}") => current = Some(String::new()),
            Some(block) if line.trim_start() == "```" => {
                out.push(std::mem::take(block));
                current = None;
            }
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
            None => {}
        }
    }
    out
}

/// Splits a command line into words: whitespace separates, double quotes group, an unquoted
/// `#` starts a comment.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut started = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                started = true;
            }
            '#' if !quoted && !started => break,
            c if c.is_whitespace() && !quoted => {
                if started {
                    out.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            c => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        out.push(word);
    }
    out
}

#[test]
fn words_split_like_a_shell() {
    assert_eq!(
        words(r#"redlock-lab trace x --property "storage safety"   # why"#),
        ["redlock-lab", "trace", "x", "--property", "storage safety"]
    );
    assert_eq!(words("# only a comment"), Vec::<String>::new());
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// Starts `explore` on a free port instead of the README's, probes it, and kills it.
fn probe_explore(args: &[String]) {
    let mut args = args.to_vec();
    let port = free_port();
    match args.iter().position(|a| a == "--port") {
        Some(i) => args[i + 1] = port.to_string(),
        None => args.extend(["--port".to_owned(), port.to_string()]),
    }
    let cwd = scratch_dir("readme-explore");
    let mut server = Command::new(BIN)
        .args(&args)
        .current_dir(&cwd)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start explore");
    let start = Instant::now();
    let answer = loop {
        let attempt = TcpStream::connect(("127.0.0.1", port)).and_then(|mut s| {
            s.set_read_timeout(Some(Duration::from_secs(10)))?;
            s.write_all(b"GET /.status HTTP/1.0\r\nConnection: close\r\n\r\n")?;
            let mut body = String::new();
            s.read_to_string(&mut body)?;
            Ok(body)
        });
        match attempt {
            Ok(body) => break Some(body),
            Err(_) if start.elapsed() < Duration::from_secs(20) => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(_) => break None,
        }
    };
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&cwd);
    let body = answer.unwrap_or_else(|| panic!("`{}` did not answer", args.join(" ")));
    let status = body.lines().next().unwrap_or("");
    assert!(status.contains(" 200 "), "{body}");
    assert!(body.contains("\"unique_state_count\""), "{body}");
}

#[test]
fn every_shell_command_in_the_readme_runs() {
    let text: String = PAGES_RUN.iter().map(|p| page(p)).collect();
    let ci = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/run"))
        .expect(".ci/run");
    let mut ran = 0;
    let mut outputs = std::collections::HashMap::new();
    for block in blocks(&text, "sh") {
        for line in block.lines() {
            let words = words(line);
            let Some(first) = words.first() else { continue };
            let command = words.join(" ");
            let args: Vec<String> = match (first.as_str(), words.get(1).map(String::as_str)) {
                ("redlock-lab", _) => words[1..].to_vec(),
                ("cargo", Some("run")) => {
                    // `cargo run --release [-- ARGS]` is the binary with ARGS.
                    match words.iter().position(|w| w == "--") {
                        Some(i) => words[i + 1..].to_vec(),
                        None => Vec::new(),
                    }
                }
                ("scripts/test", _) => {
                    // The test command is CI itself: `.ci/run` must run exactly it.
                    assert!(
                        ci.lines().any(|l| l.trim() == format!("exec {command}")),
                        "`{command}` is in the README but .ci/run does not run it"
                    );
                    continue;
                }
                _ => panic!("README command `{command}` is run by neither this test nor .ci/run"),
            };
            if args.first().is_some_and(|a| a == "explore") {
                probe_explore(&args);
            } else {
                // A command the pages show twice (the whole book, say) runs once; each showing
                // is held to its output.
                let out = outputs
                    .entry(args.clone())
                    .or_insert_with(|| Command::new(BIN).args(&args).output().expect("run"));
                assert_eq!(
                    out.status.code(),
                    Some(0),
                    "README command `{command}` failed:\n{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
                assert!(!out.stdout.is_empty(), "`{command}` printed nothing");
                let stdout = String::from_utf8_lossy(&out.stdout);
                // What each command is shown for in the README is in its output, not only a
                // zero exit code.
                let expected: &[&str] = match args.first().map(String::as_str) {
                    Some("check") => &["every verdict matches [expect]"],
                    Some("trace") if args.iter().any(|a| a == "mermaid") => &["sequenceDiagram"],
                    Some("trace") => &[" violated", "✗"],
                    Some("list") => &["node-clock-jump-forward-past-drift", "redlock-fault-free"],
                    Some("simulate") => &["seed = "],
                    Some("man") => &[".TH redlock-lab"],
                    Some("completions") => &["redlock"],
                    Some("advise") => &["drift allowance", "Set this:", "Assumed, not checked:"],
                    Some("replay") => &["reproduced on real Redis: c1 and c2 both held the lock"],
                    _ => &[],
                };
                for needle in expected {
                    assert!(
                        stdout.contains(needle),
                        "README command `{command}` no longer prints {needle:?}:\n{stdout}"
                    );
                }
                // `advise` speaks plainly unless asked for its proofs: short lines, no ticks or
                // zones.
                if args.first().is_some_and(|a| a == "advise")
                    && !args.iter().any(|a| a == "--verbose")
                {
                    for line in stdout.lines() {
                        assert!(
                            line.chars().count() <= 100
                                && !line.contains("tick")
                                && !line.contains("zone"),
                            "README command `{command}` prints a line of proof detail: {line}"
                        );
                    }
                }
                // A command about a named scenario prints that name (a diagram format aside).
                if let Some(name) = args.get(1).filter(|a| {
                    matches!(
                        args[0].as_str(),
                        "trace" | "explain" | "simulate" | "sweep" | "replay"
                    ) && !a.starts_with('-')
                        && !args.iter().any(|a| a == "--format")
                }) {
                    assert!(
                        stdout.contains(name.as_str()),
                        "`{command}` does not name {name}"
                    );
                }
                // A sweep in the README is cited for a boundary: it must still show one.
                if args.first().is_some_and(|a| a == "sweep") {
                    assert!(
                        stdout.contains("\nboundary: "),
                        "README command `{command}` no longer shows a boundary"
                    );
                    let comment = line.split_once('#').map_or("", |(_, c)| c);
                    sweep_comment_states_its_boundary(&command, comment, &stdout);
                }
            }
            ran += 1;
        }
    }
    assert!(ran >= 8, "only {ran} README commands found");
}

/// A sweep's comment states the boundary the sweep prints: "V breaks" and "H holds" for its
/// `boundary: … violated at KEY = V, holds at H` line (sizes without their sign, as the comment
/// says "a step back of 2").
fn sweep_comment_states_its_boundary(command: &str, comment: &str, stdout: &str) {
    let boundary = stdout
        .lines()
        .find_map(|l| l.strip_prefix("boundary: "))
        .expect("a boundary line");
    let value = |after: &str| -> String {
        let rest = boundary.split(after).nth(1).expect("the boundary's values");
        let rest = rest.split_once(" = ").map_or(rest, |(_, v)| v);
        let number = rest.split([',', ' ']).next().unwrap_or("");
        number.trim_start_matches('-').to_owned()
    };
    let (breaks, holds) = (value("violated at "), value("holds at "));
    // The README calls every boundary it sweeps exact: one tick between the two sides.
    let number = |v: &str| -> i64 {
        v.parse()
            .unwrap_or_else(|e| panic!("`{command}`: boundary value {v:?}: {e}"))
    };
    assert_eq!(
        (number(&breaks) - number(&holds)).abs(),
        1,
        "README command `{command}`: the boundary is not one tick wide ({boundary})"
    );
    for claim in [format!("{breaks} breaks"), format!("{holds} holds")] {
        assert!(
            comment.contains(&claim),
            "README command `{command}`: its comment should say {claim:?} (boundary: {boundary})"
        );
    }
}

#[test]
fn the_readme_mermaid_diagram_is_what_trace_prints_now() {
    let text = page(SCENARIOS);
    let diagrams = blocks(&text, "mermaid");
    assert_eq!(diagrams.len(), 1, "one Mermaid diagram");
    let out = Command::new(BIN)
        .args([
            "trace",
            "node-clock-jump-forward-past-drift",
            "--format",
            "mermaid",
        ])
        .output()
        .expect("run trace");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        diagrams[0],
        String::from_utf8(out.stdout).unwrap(),
        "regenerate the README's diagram with the command above it"
    );
}

/// One row of the scenario table: the scenario and its verdicts.
struct Row {
    scenario: String,
    verdicts: Vec<(String, String)>,
}

/// Every row of the scenario table of `docs/scenarios.md`.
fn table_rows(text: &str) -> Vec<Row> {
    text.lines()
        .filter(|l| l.starts_with("| ") && l.contains("](../models/"))
        .map(|l| {
            let cells: Vec<&str> = l.split(" | ").collect();
            let scenario = cells[2]
                .split("](../models/")
                .nth(1)
                .and_then(|rest| rest.split(".toml)").next())
                .expect("a scenario link")
                .to_owned();
            let verdicts = cells[3]
                .split(", ")
                .map(|v| {
                    let (name, verdict) = v.split_once(": ").expect("property: verdict");
                    (name.to_owned(), verdict.to_owned())
                })
                .collect();
            Row { scenario, verdicts }
        })
        .collect()
}

const TABLE_BEGIN: &str = "<!-- scenario table: tests/readme.rs -->\n";
// The blank line ends the table before the marker.
const TABLE_END: &str = "\n<!-- end of scenario table -->";

/// Who made `scenario`'s claim, as its file says: the source, or "derived" with the source
/// the derivation starts from.
fn who(scenario: &Scenario) -> String {
    match (scenario.source, &scenario.citation) {
        (
            Source::Derived,
            Some(Citation {
                source: Source::Seed,
                ..
            }),
        ) => "derived from the seed".to_owned(),
        (Source::Derived, Some(citation)) => format!("derived from {}", citation.source),
        (source, _) => source.to_string(),
    }
}

/// One row of the scenario table, every cell from the file or the checker's `report`: the
/// claim, who made it, the file, each property's verdict, the sizes its mutual exclusion
/// verdict is proved for, and the file's `summary`.
fn scenario_row(file: &str, scenario: &Scenario, report: &Report) -> String {
    let summary = scenario
        .summary
        .as_deref()
        .unwrap_or_else(|| panic!("{file}: a catalog file has a `summary` for this table"));
    for cell in [scenario.claim.as_str(), summary] {
        assert!(
            !cell.contains('|'),
            "{file}: a table cell without `|`: {cell}"
        );
    }
    let verdicts: Vec<String> = report
        .properties
        .iter()
        .map(|p| format!("{}: {}", p.name, p.verdict))
        .collect();
    let mutex = report.property("mutual exclusion").expect("always judged");
    let sizes = mutex
        .reach
        .short(mutex.verdict, report.nodes, report.clients);
    format!(
        "| {} | {} | [`{}`](../{file}) | {} | {sizes} | {summary} |",
        scenario.claim,
        who(scenario),
        scenario.name,
        verdicts.join(", ")
    )
}

/// The scenario table: every catalog file, in the order the page lists them now (a file it
/// does not list yet comes last), each row from the file and the checker.
fn scenario_table(text: &str) -> String {
    let listed = table_rows(text).into_iter().map(|r| r.scenario);
    let catalog = CATALOG.iter().map(|e| {
        e.file
            .trim_start_matches("models/")
            .trim_end_matches(".toml")
            .to_owned()
    });
    let mut order: Vec<String> = Vec::new();
    for name in listed.chain(catalog) {
        if !order.contains(&name) {
            order.push(name);
        }
    }
    let mut table = String::from(
        "| claim | who | scenario | verdict | sizes (mutual exclusion) | why |\n|---|---|---|---|---|---|\n",
    );
    for name in order {
        // A file that left the catalog leaves the table.
        let Some(embedded) = catalog::find(&name) else {
            continue;
        };
        let scenario = Scenario::from_str(embedded.file, embedded.text).unwrap();
        let report = Check::new(&scenario).run();
        table.push_str(&scenario_row(embedded.file, &scenario, &report));
        table.push('\n');
    }
    table
}

/// The scenario table is written from the catalog and the checker, never by hand: each row's
/// claim, who and summary are its file's, its verdicts and sizes what `check` finds now, and
/// every catalog file has a row. `UPDATE_EXPECT=1` rewrites the table.
#[test]
fn the_scenario_table_is_the_catalog_and_todays_verdicts() {
    let text = page(SCENARIOS);
    let table = scenario_table(&text);
    if common::generated_block(SCENARIOS, (TABLE_BEGIN, TABLE_END), &table) {
        return;
    }
    assert_eq!(
        table_rows(&text).len(),
        CATALOG.len(),
        "a row per catalog file"
    );
}

#[test]
fn every_scenario_the_readme_links_exists() {
    let mut links = 0;
    for (file, prefix) in [
        ("README.md", "](models/"),
        (SCENARIOS, "](../models/"),
        ("docs/safety.md", "](../models/"),
        ("docs/advise.md", "](../models/"),
        ("docs/library.md", "](../models/"),
    ] {
        for piece in page(file).split(prefix).skip(1) {
            let target = piece.split(')').next().unwrap();
            // A link into a section names the file before its `#fragment`.
            let target = target.split('#').next().unwrap();
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("models")
                .join(target);
            assert!(
                path.exists(),
                "{file} links models/{target}, which does not exist"
            );
            links += 1;
        }
    }
    assert!(links > 40, "{links} links");
}

/// The properties a ✓ or ✗ speaks of, by the block of the safety section it stands in: the
/// pause-and-fencing condition is about the storage, the liveness paragraph about getting the
/// lock, every other block about safety (mutual exclusion and the storage).
fn marked_properties(block: &str) -> &'static [&'static str] {
    if block.starts_with("- **A pause or delay") {
        &["storage safety", "no lost update"]
    } else if block.starts_with("Liveness needs more") {
        &["eventually acquired", "lock acquired"]
    } else {
        &["mutual exclusion", "storage safety", "no lost update"]
    }
}

/// The blocks of a section: its paragraphs, a bullet each on its own, without code blocks.
fn blocks_of(section: &str) -> Vec<String> {
    let mut blocks: Vec<String> = Vec::new();
    for paragraph in section
        .split("\n\n")
        .filter(|p| !p.trim_start().starts_with("```"))
    {
        for line in paragraph.lines().filter(|l| !l.trim().is_empty()) {
            match blocks.last_mut() {
                Some(block) if !line.starts_with("- ") && !block.is_empty() => {
                    block.push('\n');
                    block.push_str(line);
                }
                _ => blocks.push(line.to_owned()),
            }
        }
        blocks.push(String::new());
    }
    blocks.retain(|b| !b.is_empty() && !b.starts_with('#'));
    blocks
}

/// Every `✓ [name](…)` and `✗ [name](…)` of a line: the scenario and whether it is said to hold.
fn marks(line: &str) -> Vec<(String, bool)> {
    let mut found = Vec::new();
    for (mark, holds) in [("✓ [`", true), ("✗ [`", false)] {
        for piece in line.split(mark).skip(1) {
            let name = piece.split('`').next().expect("a scenario name");
            found.push((name.to_owned(), holds));
        }
    }
    found
}

/// The sentences of the safety section (and of the advise inequalities) that carry no ✓ or ✗:
/// each begins with the first words here, names the test file (`` `tests/FILE` ``), and that
/// file has the test named, which checks what the sentence says.
const NAMED_CHECKS: &[(&str, &str, &str)] = &[
    // Every ✓ and ✗ verdict is the checker's.
    (
        "What is checked is the catalog",
        "catalog.rs",
        "every_catalog_verdict_matches_its_expectation",
    ),
    // Every violated file's `mechanism` is exactly what `--why` names (and each condition has
    // a ✗, which `check_marked_block` requires of every condition).
    (
        "Each is also shown **necessary**",
        "catalog.rs",
        "every_catalog_verdict_matches_its_expectation",
    ),
    // This test: the marks, and this table.
    (
        "✓ marks a scenario",
        "readme.rs",
        "the_safety_section_and_the_advise_inequalities_are_what_the_checker_says",
    ),
    // Runs each sweep, requires its boundary line, the two sides in its comment, one tick apart.
    (
        "The sweeps below show both sides",
        "readme.rs",
        "every_shell_command_in_the_readme_runs",
    ),
    // Each reach against the checker at N = 1…7, within the budget the sentence states.
    (
        "Limitations: the model checks one configuration",
        "sizes.rs",
        "every_reach_agrees_with_the_checker_at_every_size_up_to_seven_nodes",
    ),
    // Every `[mitigation] set` applied and re-checked.
    (
        "`redlock-lab explain NAME` prints",
        "catalog.rs",
        "every_mitigation_patch_fixes_what_its_scenario_breaks",
    ),
    // "proved for all N, any C" for the drift and the restart delay.
    (
        "Each figure is proved for the model",
        "cli_advise.rs",
        "the_readme_deployment_gets_figures_exact_to_the_millisecond",
    ),
    (
        "When no drift allowance below the TTL",
        "cli_advise.rs",
        "a_clock_error_the_ttl_cannot_cover_is_said_and_exits_1",
    ),
];

/// The entry of [`NAMED_CHECKS`] a sentence without marks begins with, after checking that
/// the sentence names its file and that the file has that test.
fn named_check(line: &str) -> &'static (&'static str, &'static str, &'static str) {
    let entry = NAMED_CHECKS
        .iter()
        .find(|(start, _, _)| line.starts_with(start))
        .unwrap_or_else(|| {
            panic!(
                "a sentence the checker does not back: give it a ✓/✗ scenario, or name the test \
                 that checks it and add it to NAMED_CHECKS:\n{line}"
            )
        });
    let (_, file, test) = entry;
    assert!(
        line.contains(&format!("`tests/{file}`")),
        "the sentence should name `tests/{file}`, whose {test} checks it:\n{line}"
    );
    assert!(
        has_test(file, test),
        "tests/{file} has no test {test} (NAMED_CHECKS)"
    );
    entry
}

/// Whether `tests/FILE` defines the test `name` (a `#[test]` attribute, maybe others, then
/// the function).
fn has_test(file: &str, name: &str) -> bool {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    lines.iter().enumerate().any(|(at, line)| {
        line.starts_with(&format!("fn {name}()"))
            && lines[..at]
                .iter()
                .rev()
                .take_while(|l| l.starts_with("#["))
                .any(|l| *l == "#[test]")
    })
}

#[test]
fn a_sentence_is_backed_only_by_a_test_that_exists_in_the_file_it_names() {
    assert!(has_test(
        "catalog.rs",
        "every_catalog_verdict_matches_its_expectation"
    ));
    // A helper is not a test, and a test is not in another file.
    assert!(!has_test("catalog.rs", "table_row"));
    assert!(!has_test(
        "sizes.rs",
        "every_catalog_verdict_matches_its_expectation"
    ));
    // A sentence that merely says "sweep" or names a test file is backed by nothing.
    for line in [
        "Together, the conditions below are sufficient (`tests/catalog.rs` checks it).",
        "Each boundary has a sweep.",
    ] {
        assert!(
            std::panic::catch_unwind(|| named_check(line)).is_err(),
            "{line}"
        );
    }
    // The right test in the wrong file is refused too.
    let wrong = "`redlock-lab explain NAME` prints the patch (`tests/readme.rs` re-checks it).";
    assert!(std::panic::catch_unwind(|| named_check(wrong)).is_err());
}

/// Checks one block's marks against the table's verdicts (which the table test holds to the
/// checker), and that each of its other lines names the test that checks it ([`NAMED_CHECKS`]);
/// the named ones are added to `named`. A condition (a bullet) has a ✗: it is shown necessary.
fn check_marked_block(
    block: &str,
    verdicts: &BTreeMap<String, Vec<(String, String)>>,
    named: &mut Vec<&'static str>,
) -> usize {
    let properties = marked_properties(block);
    if block.starts_with("- **") {
        assert!(
            marks(block).iter().any(|(_, holds)| !holds),
            "a condition no ✗ scenario breaks:\n{block}"
        );
    }
    let mut checked = 0;
    for line in block.lines() {
        let headline = line.starts_with("- **") && line.ends_with("**");
        let found = marks(line);
        if !headline && found.is_empty() {
            named.push(named_check(line).0);
        }
        assert_eq!(
            found.len(),
            line.matches("](../models/").count(),
            "every scenario linked here carries ✓ or ✗:\n{line}"
        );
        for (name, holds) in found {
            let row = verdicts
                .get(&name)
                .unwrap_or_else(|| panic!("{name} is marked but not in the scenario table"));
            let judged: Vec<&str> = row
                .iter()
                .filter(|(p, _)| properties.contains(&p.as_str()))
                .map(|(_, v)| v.as_str())
                .collect();
            let ok = if holds {
                !judged.is_empty() && judged.iter().all(|v| *v == "holds")
            } else {
                judged.contains(&"violated")
            };
            let mark = if holds { "✓" } else { "✗" };
            assert!(
                ok,
                "{mark} {name}: its verdicts are {row:?} (properties {properties:?})\n{line}"
            );
            checked += 1;
        }
    }
    checked
}

/// The `run` section's sentence on what `REDLOCK_FENCING_TOKEN` rests on marks each
/// assumption with the scenario that keeps it (✓, storage safety holds) and the one that
/// breaks it (✗, storage safety violated): persistence and the clocks both.
#[test]
fn the_run_sections_fencing_token_sentence_states_its_assumptions() {
    let text = page("docs/library.md");
    let verdicts: BTreeMap<String, Vec<(String, String)>> = table_rows(&page(SCENARIOS))
        .into_iter()
        .map(|row| (row.scenario, row.verdicts))
        .collect();
    let line = text
        .lines()
        .find(|l| l.starts_with("The token is only as good as the lock it comes from"))
        .expect("the run section's sentence on the fencing token");
    for words in [
        "appendfsync always",
        "clock error and jump",
        "drift allowance",
    ] {
        assert!(line.contains(words), "the sentence names {words:?}");
    }
    let found = marks(line);
    assert!(found.iter().any(|(name, _)| name.contains("clock-jump")));
    assert!(found.iter().any(|(_, holds)| *holds) && found.iter().any(|(_, holds)| !holds));
    for (name, holds) in found {
        let storage = verdicts[&name]
            .iter()
            .find(|(p, _)| p == "storage safety")
            .map(|(_, v)| v.as_str());
        let expected = if holds { "holds" } else { "violated" };
        assert_eq!(storage, Some(expected), "{name}");
    }
}

#[test]
fn the_safety_section_and_the_advise_inequalities_are_what_the_checker_says() {
    let verdicts: BTreeMap<String, Vec<(String, String)>> = table_rows(&page(SCENARIOS))
        .into_iter()
        .map(|row| (row.scenario, row.verdicts))
        .collect();
    let safety = page("docs/safety.md");
    let safety = safety
        .split("# Safety assumptions\n")
        .nth(1)
        .expect("the safety page's heading");
    let advise = page("docs/advise.md");
    let advise = advise
        .split("\nThe catalog's scenarios show each boundary at a point")
        .nth(1)
        .expect("the advise boundaries' scenarios")
        .split("\n\n")
        .next()
        .unwrap();
    let (mut checked, mut named) = (0, Vec::new());
    for block in blocks_of(safety).iter().chain(&[format!(
        "The catalog's scenarios show each boundary at a point{advise}"
    )]) {
        checked += check_marked_block(block, &verdicts, &mut named);
    }
    assert!(checked > 50, "only {checked} marks");
    // Every entry of the table backs a sentence, once.
    named.sort_unstable();
    let mut table: Vec<&str> = NAMED_CHECKS.iter().map(|(start, _, _)| *start).collect();
    table.sort_unstable();
    assert_eq!(named, table, "NAMED_CHECKS and the sentences without marks");
}

/// GitHub's anchor for a heading: lower case, spaces to `-`, other punctuation dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The README and the pages it sends readers to may not point into the void: every relative
/// link names a file that exists, and a `#fragment` into a Markdown file names one of its
/// headings.
#[test]
fn every_relative_link_of_the_readme_and_the_docs_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).expect("docs/") {
        let path = entry.expect("an entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    let mut links = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).expect("a page");
        for piece in text.split("](").skip(1) {
            let target = piece.split(')').next().unwrap();
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, fragment) = target.split_once('#').unwrap_or((target, ""));
            let resolved = if file.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(file)
            };
            assert!(
                resolved.exists(),
                "{}: the link {target} names nothing",
                page.display()
            );
            if !fragment.is_empty() && resolved.extension().is_some_and(|e| e == "md") {
                let linked = std::fs::read_to_string(&resolved).unwrap();
                let found = linked
                    .lines()
                    .filter_map(|l| l.strip_prefix('#'))
                    .any(|h| anchor(h.trim_start_matches('#')) == fragment);
                assert!(
                    found,
                    "{}: the link {target} names no heading of {}",
                    page.display(),
                    resolved.display()
                );
            }
            links += 1;
        }
    }
    assert!(links > 100, "{links} links");
}

/// The client example shows a failure in words: its errors go through `Display`, never an
/// `.expect` on an acquisition, whose panic would print the error's `Debug` dump.
#[test]
fn the_client_example_prints_errors_in_words() {
    let text = readme();
    let example = blocks(&text, "rust,no_run")
        .into_iter()
        .find(|block| block.contains(".try_lock("))
        .expect("the README's client example");
    for line in example.lines().filter(|line| line.contains("lock(")) {
        assert!(!line.contains(".expect("), "{line}");
    }
    assert!(
        example.contains("Err(error) => eprintln!(\"{error}\")"),
        "{example}"
    );
}
