//! Progress on long runs: `check` shows states, states/s and elapsed time on stderr only when
//! stderr is a terminal, never under `--json` or into a pipe; the library's progress hook
//! reports the final state count.

use std::process::Command;
use std::sync::{Arc, Mutex};

use redlock_lab::catalog;
use redlock_lab::check::{Check, Progress};
use redlock_lab::scenario::Scenario;

const BIN: &str = env!("CARGO_BIN_EXE_redlock-lab");
const SCENARIO: &str = "gc-pause-after-acquisition";

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
    let shown = in_a_terminal(&format!("check {SCENARIO}"));
    assert!(shown.contains("states/s"), "{shown:?}");
    assert!(shown.contains(&format!("{SCENARIO}: ")), "{shown:?}");
    assert!(shown.contains("[0/1] "), "{shown:?}");
    // The bar is cleared before the table.
    assert!(shown.contains("\u{1b}[2Kscenario "), "{shown:?}");

    let json = in_a_terminal(&format!("check --json {SCENARIO}"));
    assert!(!json.contains("states/s"), "{json:?}");
    assert!(json.trim_start().starts_with('{'), "{json:?}");
}

#[test]
fn the_progress_hook_ends_with_the_reported_state_count() {
    let embedded = catalog::find(SCENARIO).unwrap();
    let scenario = Scenario::from_str(embedded.file, embedded.text).unwrap();
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = seen.clone();
    let report = Check::new(&scenario)
        .on_progress(move |p| sink.lock().unwrap().push(p))
        .run();
    let seen = seen.lock().unwrap();
    let last = seen.last().expect("at least the final report");
    assert_eq!(last.unique_states, report.unique_states);
    assert!(
        seen.windows(2)
            .all(|w| w[0].unique_states <= w[1].unique_states)
    );
    assert!(last.states_per_second() > 0.0);
    // Without a hook the same check explores the same states.
    assert_eq!(
        Check::new(&scenario).run().unique_states,
        report.unique_states
    );
}
