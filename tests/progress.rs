//! Progress on long runs: `check` shows states, states/s and elapsed time on stderr only when
//! stderr is a terminal, never under `--json` or into a pipe; the library's progress hook
//! reports growing counts once per interval, and stays quiet on short runs by default.

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
