//! The `redlock-lab` binary's contract: exit codes (0 match, 1 mismatch, 2 bad input, 3 a
//! check stopped at a limit), the `--json` shape, file:line:col errors, and the embedded
//! catalog working from any folder.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use common::{BIN, redlock_lab_in, scratch_dir, text};

const SMALL: &str = r#"
name = "small"
title = "Two clients, three nodes, no faults"
claim = "fault-free Redlock keeps mutual exclusion"
source = "redis.io"
quote = "At any given moment, only one client can hold a lock."
prose = "The control case."
[lock]
nodes = 3
ttl_ticks = 4
drift_ticks = 1
[expect]
"mutual exclusion" = "EXPECTED"
"#;

/// `redlock-lab ARGS` started in `dir` with stdout and stderr piped, to be read as it runs.
fn piped(dir: &std::path::Path, args: &[&str]) -> std::process::Child {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start redlock-lab")
}

/// The main command on the whole catalog, read as `redlock-lab | less` would: a row per
/// scenario, streamed as each settles (the first long before the run ends), and a total, in at
/// most 120 lines. The test's one catalog run (about 20 s in CI) serves every assertion.
#[test]
fn check_without_arguments_streams_a_row_per_catalog_scenario_from_any_folder() {
    let dir = scratch_dir("catalog");
    let start = Instant::now();
    let mut child = piped(&dir, &[]);
    let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
    let mut lines = Vec::new();
    for _ in 0..2 {
        let mut line = String::new();
        stdout.read_line(&mut line).expect("read a line");
        lines.push(line);
    }
    let first_row = start.elapsed();
    assert!(lines[0].starts_with("scenario "), "{lines:?}");
    assert!(
        child.try_wait().expect("the child's status").is_none(),
        "the first row came only at the end: {lines:?}"
    );
    let rest: Vec<String> = stdout.lines().map(|l| l.expect("a line") + "\n").collect();
    lines.extend(rest);
    let out = child.wait_with_output().expect("wait for redlock-lab");
    let total = start.elapsed();
    let stdout = lines.concat();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    // The first row is written as soon as the first scenario settles, into a pipe too.
    assert!(
        first_row < total / 4,
        "first row after {first_row:?} of {total:?}"
    );
    assert!(lines.len() <= 120, "{} lines:\n{stdout}", lines.len());
    let rows = lines.iter().filter(|l| !l.starts_with(' ')).count();
    // The header, a row per scenario, the total and the hint where the stories are.
    assert_eq!(rows, redlock_lab::catalog::CATALOG.len() + 3, "{stdout}");
    assert!(
        stdout.contains("scenarios, ") && stdout.contains("every verdict matches [expect]"),
        "{stdout}"
    );
    let jump = lines
        .iter()
        .find(|l| l.starts_with("node-clock-jump-forward-past-drift "))
        .expect("a row per scenario");
    assert!(jump.contains("✗ mutual exclusion; 1 holds"), "{jump}");
    assert!(!stdout.contains("MISMATCH"), "{stdout}");
}

#[test]
fn a_wrong_expectation_exits_1_and_names_the_mismatch() {
    let dir = scratch_dir("mismatch");
    std::fs::write(
        dir.join("small.toml"),
        SMALL.replace("EXPECTED", "violated"),
    )
    .unwrap();
    let out = redlock_lab_in(&["check", "small.toml"], &dir);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("MISMATCH"), "{stdout}");
    assert!(stdout.contains("small: mutual exclusion"), "{stdout}");

    std::fs::write(dir.join("small.toml"), SMALL.replace("EXPECTED", "holds")).unwrap();
    assert_eq!(
        redlock_lab_in(&["check", "."], &dir).status.code(),
        Some(0),
        "a folder works too"
    );
}

#[test]
fn json_has_the_documented_shape() {
    let dir = scratch_dir("json");
    let out = redlock_lab_in(
        &[
            "check",
            "--json",
            // One thread: a violated scenario's count under several threads depends on where
            // their race stops, and this test pins it.
            "--threads",
            "1",
            "node-clock-jump-forward-past-drift",
            "single-node-baseline",
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        out.stderr.is_empty(),
        "no progress noise when piped: {}",
        text(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    let models = json["models"].as_array().expect("models array");
    assert_eq!(models.len(), 2);
    let jump = &models[0];
    for key in ["file", "name", "unique_states", "seconds", "properties"] {
        assert!(jump.get(key).is_some(), "missing {key}: {jump}");
    }
    assert_eq!(jump["name"], "node-clock-jump-forward-past-drift");
    // The counts are the library's: the same check run in-process explores the same states,
    // and the safe scenario's count is the one pinned in tests/catalog.rs.
    let in_process = |name: &str| {
        let embedded = redlock_lab::catalog::find(name).unwrap();
        redlock_lab::check::Check::new(&embedded.scenario().unwrap())
            .threads(1)
            .run()
            .unique_states as u64
    };
    assert_eq!(
        jump["unique_states"].as_u64(),
        Some(in_process("node-clock-jump-forward-past-drift"))
    );
    assert_eq!(models[1]["unique_states"].as_u64(), Some(361));
    let mutex = jump["properties"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "mutual exclusion")
        .expect("mutual exclusion reported");
    assert_eq!(mutex["expected"], "violated");
    assert_eq!(mutex["verdict"], "violated");
    let steps = mutex["counterexample"]
        .as_array()
        .expect("a counterexample");
    assert!(steps.iter().all(serde_json::Value::is_string) && !steps.is_empty());
    let acquired = jump["properties"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "lock acquired")
        .unwrap();
    assert!(acquired["counterexample"].is_null());
    // Each verdict says how far it reaches: the pinned topology of the jump scenario carries
    // nowhere, the fault-free single node holds at every size.
    let reach = |model: &serde_json::Value| property(model, "mutual exclusion")["reach"].clone();
    assert_eq!(
        reach(jump),
        serde_json::json!({"nodes": "checked", "clients": "checked", "argument": "none"})
    );
    assert_eq!(
        reach(&models[1]),
        serde_json::json!({"nodes": "every", "clients": "any", "argument": "one-node"})
    );
    assert_eq!(
        (jump["nodes"].as_u64(), jump["clients"].as_u64()),
        (Some(3), Some(2))
    );
}

/// One restart without persistence: the table says odd `N` break and even `N` hold, and
/// `explain` names the argument.
#[test]
fn check_and_explain_say_for_which_sizes_a_verdict_is_proved() {
    let dir = scratch_dir("reach");
    let out = redlock_lab_in(
        &[
            "check",
            "--verbose",
            "crash-immediate-restart-no-persistence",
            "four-nodes-one-crash-no-persistence",
        ],
        &dir,
    );
    let table = text(&out.stdout);
    assert!(table.contains("proved for"), "{table}");
    let row = |name: &str| {
        let scenario = table.find(name).unwrap();
        let line = table[scenario..]
            .lines()
            .find(|l| l.contains("mutual exclusion"))
            .unwrap();
        line.to_owned()
    };
    assert!(row("crash-immediate").ends_with("odd N, C≥2"), "{table}");
    assert!(
        row("four-nodes-one-crash").ends_with("even N, any C"),
        "{table}"
    );
    let out = redlock_lab_in(&["explain", "four-nodes-one-crash-no-persistence"], &dir);
    let explained = text(&out.stdout);
    assert!(
        explained.contains(
            "mutual exclusion: holds for every even number of nodes and any number of clients: \
             two majorities of an even number of nodes share two nodes"
        ),
        "{explained}"
    );
}

#[test]
fn bad_input_exits_2_with_file_line_and_column() {
    let dir = scratch_dir("bad");
    std::fs::write(dir.join("bad.toml"), "name = \"x\"\nbogus = 1\n").unwrap();
    let out = redlock_lab_in(&["check", "bad.toml"], &dir);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("bad.toml:2:1"), "{stderr}");
    assert!(
        out.stdout.is_empty(),
        "nothing is reported as checked: {}",
        text(&out.stdout)
    );
    assert!(!stderr.contains("panicked"), "{stderr}");

    let missing = redlock_lab_in(&["check", "no-such-scenario"], &dir);
    assert_eq!(missing.status.code(), Some(2));
    assert!(text(&missing.stderr).contains("no such file, folder or catalog scenario"));

    let usage = redlock_lab_in(&["check", "--no-such-flag"], &dir);
    assert_eq!(usage.status.code(), Some(2));
}

#[test]
fn list_shows_the_catalog_and_trace_prints_the_shortest_counterexample() {
    let dir = scratch_dir("list");
    let list = redlock_lab_in(&["list"], &dir);
    assert_eq!(list.status.code(), Some(0));
    assert!(text(&list.stdout).contains("gc-pause-after-acquisition"));

    let trace = redlock_lab_in(&["trace", "node-clock-jump-forward-past-drift"], &dir);
    let stdout = text(&trace.stdout);
    assert_eq!(trace.status.code(), Some(0), "{}", text(&trace.stderr));
    assert!(stdout.contains("clock jumps +2"), "{stdout}");

    let holds = redlock_lab_in(&["trace", "redlock-fault-free"], &dir);
    assert_eq!(
        holds.status.code(),
        Some(1),
        "nothing to trace in a safe scenario"
    );
}

/// A file in milliseconds is checked and traced by the zone engine; asking for zones on a file
/// they do not model, or for a diagram of a zone counterexample, is refused by name.
#[test]
fn a_file_in_milliseconds_gets_the_zone_engine_in_check_and_trace() {
    let dir = scratch_dir("zones");
    let check = redlock_lab_in(
        &["check", "--json", "default-config-clock-error-past"],
        &dir,
    );
    assert_eq!(check.status.code(), Some(0), "{}", text(&check.stderr));
    let json: serde_json::Value = serde_json::from_slice(&check.stdout).expect("JSON");
    assert_eq!(json["models"][0]["engine"], "zones");

    let trace = redlock_lab_in(&["trace", "default-config-clock-error-past"], &dir);
    let stdout = text(&trace.stdout);
    assert_eq!(trace.status.code(), Some(0), "{}", text(&trace.stderr));
    // The zone engine's concrete run, told as a story of the discrete model: c1 believes
    // until 10 000 − 102 ms on its clock, read up to 50 ms late, and n1's key, set at 0, goes
    // on a reading up to 53 ms fast, so both believe at 9 947 ms.
    assert!(
        stdout.contains("the zone engine's path, breadth first"),
        "{stdout}"
    );
    assert!(stdout.contains("(T2=9947, validity 1)"), "{stdout}");
    assert!(stdout.contains("✗ mutual exclusion"), "{stdout}");
    // A file whose tick is one millisecond tells its amounts of time in milliseconds.
    assert!(stdout.contains("after 9897 ms in the network"), "{stdout}");
    assert!(stdout.contains("may read up to 50 ms late"), "{stdout}");
    let story = stdout.lines().skip(1).collect::<Vec<_>>().join("\n");
    assert!(!story.contains(" tick"), "{story}");
    let steps = redlock_lab_in(
        &["check", "--verbose", "default-config-clock-error-past"],
        &dir,
    );
    let stdout = text(&steps.stdout);
    assert!(stdout.contains("(zone engine;"), "{stdout}");
    assert!(
        stdout.contains("t=9947 ms  two clients believe they hold the lock"),
        "{stdout}"
    );

    let svg = redlock_lab_in(
        &[
            "trace",
            "--format",
            "svg",
            "default-config-clock-error-past",
        ],
        &dir,
    );
    // The zone engine's run, replayed through the discrete model, is drawn like any other.
    assert_eq!(svg.status.code(), Some(0), "{}", text(&svg.stderr));
    assert!(
        text(&svg.stdout).starts_with("<svg"),
        "{}",
        text(&svg.stdout)
    );
    let html = redlock_lab_in(
        &[
            "trace",
            "--format",
            "html",
            "default-config-clock-error-past",
        ],
        &dir,
    );
    assert_eq!(html.status.code(), Some(0), "{}", text(&html.stderr));
    let html = text(&html.stdout);
    // The quiet stretch is one item, and the page numbers items, not the checker's steps
    // (9 955, one per quiet tick): the list, the picture and the break count alike.
    assert!(
        html.contains(
            "value='7' data-step='7'>t=50 time passes to t=9947 (9897 ms where nothing happens)"
        ),
        "{html}"
    );
    assert!(
        html.contains("breaks at step <a href='#step-10'>10</a>"),
        "{html}"
    );
    assert!(!html.contains("value='11'"), "{html}");
    assert!(!html.contains("data-step='9955'"), "{html}");

    // Past the discrete engine's 60 ticks with a feature the zone engine lacks: not checked,
    // the reason named, exit 3.
    let file = dir.join("loss-in-ms.toml");
    let contents = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("models/default-config-clock-error-covered.toml"),
    )
    .unwrap()
    .replace("[expect]", "[network]\nmessage_loss = 1\n\n[expect]");
    std::fs::write(&file, contents).unwrap();
    let beyond = redlock_lab_in(&["check", file.to_str().unwrap()], &dir);
    assert_eq!(beyond.status.code(), Some(3), "{}", text(&beyond.stderr));
    assert!(
        text(&beyond.stdout).contains("not checked: a constant exceeds the discrete engine's limit of 60 ticks, and the zone engine does not model message loss"),
        "{}",
        text(&beyond.stdout)
    );
    // No limit would settle it, so the total does not suggest raising one.
    assert!(
        text(&beyond.stdout).contains("every settled verdict matches [expect]\n"),
        "{}",
        text(&beyond.stdout)
    );

    let storage = redlock_lab_in(&["check", "--engine", "zones", "fencing-lock-quorum"], &dir);
    assert_eq!(storage.status.code(), Some(2));
    assert!(
        text(&storage.stderr)
            .contains("the zone engine does not model fencing tokens from a counter"),
        "{}",
        text(&storage.stderr)
    );
}

#[test]
fn explore_refuses_a_busy_port_cleanly() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let out = redlock_lab_in(
        &["explore", "single-node-baseline", "--port", &port],
        &scratch_dir("explore"),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("cannot listen on 127.0.0.1"),
        "{}",
        text(&out.stderr)
    );
}

/// The first file a new user writes: five nodes, two clients, the documented defaults and a
/// node clock jump of +1. It has tens of millions of states.
const USER_SIZED: &str = r#"
name = "user-sized"
title = "Five nodes, two clients, a node jump of +1"
claim = "Redlock keeps mutual exclusion when a node's clock jumps by the drift allowance"
source = "derived"
prose = "The size users write."
[lock]
nodes = 5
clients = 2
ttl_ticks = 10
drift_ticks = 1
[faults.clock_jumps]
target = "node"
jump_ticks = 1
[expect]
"mutual exclusion" = "holds"
"#;

fn property<'a>(model: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    model["properties"]
        .as_array()
        .expect("properties")
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("{name} reported: {model}"))
}

#[test]
fn a_check_stopped_at_the_state_limit_is_incomplete_and_exits_3() {
    let dir = scratch_dir("max-states");
    // 21 709 states when exhausted: 1000 cannot settle mutual exclusion.
    let out = redlock_lab_in(
        &[
            "check",
            "--max-states",
            "1000",
            "redlock-fault-free-five-nodes",
        ],
        &dir,
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("incomplete"), "{stdout}");
    assert!(
        !stdout.contains("MISMATCH"),
        "unknown is not wrong: {stdout}"
    );
    assert!(
        stdout.contains("redlock-fault-free-five-nodes: stopped at the state limit after"),
        "{stdout}"
    );
    assert!(!stdout.contains("panicked"));

    let out = redlock_lab_in(
        &[
            "check",
            "--json",
            "--max-states",
            "1000",
            "redlock-fault-free-five-nodes",
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    let model = &json["models"][0];
    assert_eq!(model["stopped"], "state-limit", "{model}");
    let states = model["unique_states"].as_u64().unwrap();
    assert!((1000..21_709).contains(&states), "{states}");
    assert!(model["max_depth"].as_u64().unwrap() > 0, "{model}");
    let mutex = property(model, "mutual exclusion");
    assert_eq!(mutex["verdict"], "incomplete", "never holds: {mutex}");
    assert_eq!(mutex["expected"], "holds");
    assert!(mutex["counterexample"].is_null());

    // A check that finishes within its limits is complete and exits 0.
    let out = redlock_lab_in(
        &[
            "check",
            "--json",
            "--max-states",
            "1000000",
            "--time-limit",
            "600",
            "single-node-baseline",
            "node-clock-jump-forward-past-drift",
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    for model in json["models"].as_array().unwrap() {
        assert!(model["stopped"].is_null(), "{model}");
        for p in model["properties"].as_array().unwrap() {
            assert_ne!(p["verdict"], "incomplete", "{model}");
        }
    }
    let jump = property(&json["models"][1], "mutual exclusion");
    assert_eq!(jump["verdict"], "violated");
}

#[test]
fn time_and_memory_limits_stop_a_user_sized_check_with_exit_3() {
    let dir = scratch_dir("limits");
    std::fs::write(dir.join("user-sized.toml"), USER_SIZED).unwrap();
    for (flag, value, reason) in [
        ("--time-limit", "1", "time-limit"),
        // One megabyte: the guard trips at its first sample.
        ("--max-memory", "1", "memory-limit"),
    ] {
        let out = redlock_lab_in(&["check", "--json", flag, value, "user-sized.toml"], &dir);
        assert_eq!(out.status.code(), Some(3), "{flag}: {}", text(&out.stderr));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
        let model = &json["models"][0];
        assert_eq!(model["stopped"], reason, "{model}");
        assert_eq!(
            property(model, "mutual exclusion")["verdict"],
            "incomplete",
            "{model}"
        );
    }
}

#[test]
fn limits_must_be_positive_and_the_exit_codes_are_documented() {
    let dir = scratch_dir("limit-usage");
    for flag in ["--max-states", "--time-limit", "--threads"] {
        let out = redlock_lab_in(&["check", flag, "0", "single-node-baseline"], &dir);
        assert_eq!(out.status.code(), Some(2), "{flag} 0");
        assert!(text(&out.stderr).contains("at least 1"), "{flag}");
    }
    let help = redlock_lab_in(&["--help"], &dir);
    assert_eq!(help.status.code(), Some(0));
    // Help is wrapped to the terminal's width, so a sentence may span lines.
    let unwrapped = |bytes: &[u8]| text(bytes).split_whitespace().collect::<Vec<_>>().join(" ");
    let help = unwrapped(&help.stdout);
    assert!(help.contains("3 `check` stopped at a limit"), "{help}");
    let check_help = unwrapped(&redlock_lab_in(&["check", "--help"], &dir).stdout);
    for flag in ["--max-states", "--time-limit", "--max-memory", "--threads"] {
        assert!(check_help.contains(flag), "{flag} in {check_help}");
    }
    assert!(
        check_help.contains("3 a limit stopped a check"),
        "{check_help}"
    );
}

#[test]
fn checking_a_simulator_world_says_it_is_one_and_stops_at_the_limit() {
    let dir = scratch_dir("world");
    let world = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/sim/drift-too-small.toml");
    let out = redlock_lab_in(
        &["check", "--max-states", "2000", world.to_str().unwrap()],
        &dir,
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("drift-too-small is one of the simulator's worlds")
            && stderr.contains("redlock-lab simulate drift-too-small"),
        "{stderr}"
    );
    // A catalog scenario gets no such note.
    let out = redlock_lab_in(&["check", "redlock-fault-free"], &dir);
    assert!(!text(&out.stderr).contains("simulator's worlds"));
}

/// Runs `redlock-lab ARGS` with a stdout whose reader left before the command started: the
/// strictest `| head -1`, where every write fails with a broken pipe.
fn with_stdout_closed(args: &[&str], dir: &Path) -> Output {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .stdout(writer)
        .output()
        .expect("run redlock-lab")
}

#[test]
fn every_command_exits_quietly_when_its_reader_leaves() {
    let dir = scratch_dir("closed-pipe");
    let commands: &[&[&str]] = &[
        &["check", "node-clock-jump-forward-past-drift"],
        &["check", "--json", "redlock-fault-free"],
        &["list"],
        &["trace", "node-clock-jump-forward-past-drift"],
        &[
            "trace",
            "node-clock-jump-forward-past-drift",
            "--format",
            "json",
        ],
        &["explain", "node-clock-jump-forward"],
        &[
            "advise",
            "--ttl",
            "3s",
            "--ticks",
            "3",
            "--clock-error",
            "2s",
        ],
        &[
            "sweep",
            "node-clock-jump-forward-past-drift",
            "--vary",
            "faults.clock_jumps.jump_ticks=1..2",
        ],
        &["simulate", "antirez-safe", "--seed", "1"],
        &["completions", "bash"],
        &["man"],
    ];
    for args in commands {
        let out = with_stdout_closed(args, &dir);
        // 128 + SIGPIPE, what a shell shows for `cat` in the same place; never a panic's 101.
        assert_eq!(
            out.status.code(),
            Some(141),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(out.stderr.is_empty(), "{args:?}: {}", text(&out.stderr));
    }
    // `--help` is clap's: it ignores the failed write and succeeds, also quietly.
    let help = with_stdout_closed(&["--help"], &dir);
    assert_eq!(help.status.code(), Some(0), "{}", text(&help.stderr));
    assert!(help.stderr.is_empty(), "{}", text(&help.stderr));
}

/// `redlock-lab check A B C | head -2`: the reader leaves after the first row, and the check
/// stops at its next row, quietly, instead of checking the rest.
#[test]
fn check_stops_quietly_when_its_reader_leaves_after_the_first_row() {
    let dir = scratch_dir("head");
    let mut child = piped(
        &dir,
        &[
            "check",
            "single-node-baseline",
            "node-clock-jump-forward-past-drift",
            "redlock-fault-free",
        ],
    );
    let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
    let mut head = String::new();
    for _ in 0..2 {
        stdout.read_line(&mut head).expect("read a line");
    }
    assert!(head.contains("\nsingle-node-baseline "), "{head}");
    drop(stdout);
    let out = child.wait_with_output().expect("wait for redlock-lab");
    assert_eq!(out.status.code(), Some(141), "{}", text(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
}

/// A liveness counterexample is traced like a safety one: the story, and the timeline whose
/// sequential round draws the request to each silent node as one that never arrived.
#[test]
fn trace_tells_and_draws_a_liveness_counterexample() {
    let dir = scratch_dir("trace-liveness");
    let story = redlock_lab_in(&["trace", "long-connection-timeout"], &dir);
    assert_eq!(story.status.code(), Some(0), "{}", text(&story.stderr));
    assert!(
        text(&story.stdout).contains("eventually acquired violated"),
        "{}",
        text(&story.stdout)
    );
    let svg = redlock_lab_in(
        &[
            "trace",
            "seed-sequential-set-two-nodes-down",
            "--property",
            "eventually acquired",
            "--format",
            "timeline-svg",
        ],
        &dir,
    );
    assert_eq!(svg.status.code(), Some(0), "{}", text(&svg.stderr));
    let svg = text(&svg.stdout);
    // The arrow's title is the step's sentence alone (a step's dot says "step N: …").
    assert!(
        svg.contains("<title>c2 hears nothing from n1 before its timeout"),
        "the silent node's request is drawn with the step that gave up on it"
    );
}
