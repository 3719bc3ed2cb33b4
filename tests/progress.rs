//! Progress on long runs: `check`, `trace` and `sweep` show states, states/s and elapsed time
//! on stderr when it is a terminal (`check` not under `--json`); into a pipe a short run says
//! nothing but its result, and a long one writes a line every ten seconds. The library's
//! progress hook reports growing counts once per interval, and stays quiet on short runs by
//! default. `trace`, `sweep` and `explain` take `check`'s limits, and say when one stopped
//! them.

mod common;

use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use redlock_lab::catalog;
use redlock_lab::check::{Check, Progress};
use redlock_lab::scenario::Scenario;

use common::BIN;

const SCENARIO: &str = "gc-pause-after-acquisition";
/// A scenario that takes long enough (about a second, optimised) for the 100 ms display to be
/// drawn with its states and rate; the small ones now finish before the first message.
const SLOW: &str = "redlock-unlock-cad-on-failed-acquire";

#[test]
fn piped_output_has_no_progress_noise() {
    for args in [vec!["check", SCENARIO], vec!["check", "--json", SCENARIO]] {
        let out = Command::new(BIN).args(&args).output().expect("run");
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(
            out.stderr.is_empty(),
            "{args:?}: stderr is a pipe, yet: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(!stdout.contains("states/s"), "{stdout}");
        assert!(!stdout.contains('\r'), "{stdout:?}");
    }
}

/// Runs `redlock-lab ARGS` with a terminal for stdin, stdout and stderr (util-linux `script`).
fn in_a_terminal(args: &str) -> String {
    let out = Command::new("script")
        .args(["-qec", &format!("{BIN} {args}"), "/dev/null"])
        .output()
        .expect("run `script` (util-linux) to get a terminal");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_terminal_shows_states_rate_and_elapsed_time_except_under_json() {
    // Two scenarios, one of them long enough for the 100 ms display to be drawn.
    let shown = in_a_terminal(&format!("check {SCENARIO} {SLOW}"));
    assert!(shown.contains("states/s"), "{shown:?}");
    assert!(shown.contains(&format!("{SLOW}: ")), "{shown:?}");
    assert!(shown.contains("[0/2] "), "{shown:?}");
    // The bar steps aside for each row as its scenario settles, and for the total.
    assert!(shown.contains(&format!("\u{1b}[2K{SLOW} ")), "{shown:?}");
    assert!(shown.contains("\u{1b}[2K2 scenarios, "), "{shown:?}");
    // The verbose table comes once the bar is cleared.
    let table = in_a_terminal(&format!("check --verbose {SCENARIO} {SLOW}"));
    assert!(table.contains("\u{1b}[2Kscenario "), "{table:?}");

    let json = in_a_terminal(&format!("check --json {SCENARIO}"));
    assert!(!json.contains("states/s"), "{json:?}");
    assert!(json.trim_start().starts_with('{'), "{json:?}");
}

#[test]
fn the_progress_hook_reports_growing_counts_per_interval() {
    let load = |name: &str| {
        let embedded = catalog::find(name).unwrap();
        Scenario::from_str(embedded.file, embedded.text).unwrap()
    };
    let scenario = load(SCENARIO);
    let seen: Arc<Mutex<Vec<(String, usize, f64)>>> = Arc::default();
    let sink = seen.clone();
    // One thread: the scenario violates a property, and where several depth-first threads
    // stop after the violation depends on their race, so only one thread's count is exact.
    let report = Check::new(&scenario)
        .threads(1)
        .progress_interval(Duration::from_millis(1))
        .progress(move |p: Progress<'_>| {
            let rate = p.unique_states as f64 / p.seconds.max(1e-9);
            assert!((p.states_per_second() - rate).abs() <= rate * 1e-9);
            sink.lock()
                .unwrap()
                .push((p.name.to_owned(), p.unique_states, p.seconds))
        })
        .run();
    let seen = seen.lock().unwrap();
    assert!(
        !seen.is_empty(),
        "a run of {} s was never reported",
        report.seconds
    );
    assert!(seen.iter().all(|(name, ..)| name == SCENARIO));
    assert!(
        seen.windows(2)
            .all(|w| w[0].1 <= w[1].1 && w[0].2 <= w[1].2)
    );
    assert!(seen.last().unwrap().1 <= report.unique_states);
    // The hook only watches: the same check without it explores the same states.
    assert_eq!(
        Check::new(&scenario).threads(1).run().unique_states,
        report.unique_states
    );

    // With the default interval (one second), a short run stays quiet.
    let quiet: Arc<Mutex<usize>> = Arc::default();
    let count = quiet.clone();
    let small = load("single-node-baseline");
    let run = Check::new(&small)
        .progress(move |_| *count.lock().unwrap() += 1)
        .run();
    assert!(
        run.seconds < 1.0,
        "the small scenario took {} s",
        run.seconds
    );
    assert_eq!(*quiet.lock().unwrap(), 0);
}

/// A scenario whose check takes long (minutes at five nodes), bounded below by a limit.
const LONG: &str = "redlock-cluster-shards-promotion-delay";

#[test]
fn a_long_run_into_a_pipe_says_every_ten_seconds_how_far_it_got() {
    let out = Command::new(BIN)
        .args([
            "sweep",
            LONG,
            "--vary",
            "lock.nodes=5",
            "--time-limit",
            "12",
        ])
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Stopped by its limit: incomplete, exit 3, and the line written at ten seconds.
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    let line = "sweep: lock.nodes = 5 (1 of 1): ";
    assert!(stderr.starts_with(line), "{stderr}");
    assert!(stderr.contains(" states/s, "), "{stderr}");
    assert!(stderr.ends_with(" s so far\n"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let row = stdout
        .lines()
        .find(|l| l.starts_with("5 "))
        .map(str::split_whitespace);
    assert_eq!(
        row.and_then(|mut cells| cells.nth(1)),
        Some("incomplete"),
        "{stdout}"
    );
}

#[test]
fn trace_sweep_and_explain_take_the_limits_of_check_and_say_when_one_stopped_them() {
    let run = |args: &[&str]| Command::new(BIN).args(args).output().expect("run");
    let trace = run(&["trace", LONG, "--max-states", "1000"]);
    let said = String::from_utf8_lossy(&trace.stderr);
    assert_eq!(trace.status.code(), Some(3), "{said}");
    assert!(
        said.starts_with(&format!(
            "{LONG}: mutual exclusion did not settle: the check stopped at the state limit after "
        )),
        "{said}"
    );
    assert!(trace.stdout.is_empty());
    // Asked for a property by name, the same.
    let named = run(&[
        "trace",
        LONG,
        "--property",
        "mutual exclusion",
        "--max-states",
        "1000",
    ]);
    assert_eq!(named.status.code(), Some(3));

    let sweep = run(&[
        "sweep",
        LONG,
        "--vary",
        "lock.ttl_ticks=3,4",
        "--max-states",
        "1000",
    ]);
    assert_eq!(sweep.status.code(), Some(3));
    let table = String::from_utf8(sweep.stdout).unwrap();
    let row = |value: &str| {
        table
            .lines()
            .find(|l| l.starts_with(&format!("{value} ")))
            .map(str::split_whitespace)
    };
    for value in ["3", "4"] {
        assert_eq!(
            row(value).and_then(|mut cells| cells.nth(1)),
            Some("incomplete"),
            "{table}"
        );
    }
    // A short sweep into a pipe says nothing besides its table.
    assert!(
        sweep.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&sweep.stderr)
    );

    // explain tells what it settled, and says the rest is not.
    let explain = run(&["explain", LONG, "--max-states", "1000"]);
    assert_eq!(explain.status.code(), Some(3));
    let told = String::from_utf8(explain.stdout).unwrap();
    assert!(
        told.contains("Verdict: mutual exclusion is not settled: the check stopped after "),
        "{told}"
    );
    assert!(
        told.contains("  mutual exclusion: incomplete ([expect] says holds)\n"),
        "{told}"
    );

    for (command, limit) in [("trace", "--max-states"), ("sweep", "--time-limit")] {
        let mut args = vec![command, LONG, limit, "0"];
        if command == "sweep" {
            args.extend(["--vary", "lock.nodes=3"]);
        }
        let refused = run(&args);
        assert_eq!(refused.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&refused.stderr)
                .contains(&format!("{limit} must be at least 1")),
            "{args:?}"
        );
    }
}
