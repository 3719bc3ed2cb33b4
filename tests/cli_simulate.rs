//! `redlock-lab simulate`, run as a user runs it: the header, the per-property lines, the
//! replay command (and that running it reproduces the violation), the same output on any number
//! of threads, the contradiction exit code and bad input.

use std::path::PathBuf;
use std::process::Output;

mod common;

use common::{redlock_lab, scratch_dir};

fn simulate(args: &[&str]) -> Output {
    redlock_lab(&[&["simulate"], args].concat())
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Asserts the exit code, and that nothing panicked.
fn assert_exit(output: &Output, code: i32) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "stdout:\n{}\nstderr:\n{}",
        stdout(output),
        stderr(output)
    );
    assert!(!stderr(output).contains("panicked"), "{}", stderr(output));
}

#[test]
fn a_safe_scenario_prints_its_header_and_clean_properties() {
    let output = simulate(&["redlock-fault-free", "--seed", "3", "--runs", "200"]);
    assert_exit(&output, 0);
    let text = stdout(&output);
    // The seed and every resolved option come first.
    assert!(text.starts_with("seed = 3\n"), "{text}");
    for line in [
        "runs = 200 (seeds 3..=202)",
        "scenario = redlock-fault-free (models/redlock-fault-free.toml)",
        "ms_per_tick = 10",
        "ttl = 40 ms",
        "drift = 10 ms",
        "network = delay [1 ms, 5 ms], loss 100‰",
        "mutual exclusion (expected holds): 200 runs, 0 violations",
    ] {
        assert!(text.contains(line), "missing {line:?} in\n{text}");
    }
    assert!(text.contains("lock acquired (expected holds): acquired in "));
    assert!(!text.contains("replay:"), "nothing to replay:\n{text}");
    // Progress goes to stderr only on a terminal; here stderr is a pipe.
    assert_eq!(stderr(&output), "");
}

#[test]
fn a_found_violation_prints_a_replay_command_that_reproduces_it() {
    let name = "node-clock-jump-forward-past-drift";
    let output = simulate(&[name, "--seed", "0", "--runs", "3000"]);
    // The scenario expects the violation: finding it is not a failure.
    assert_exit(&output, 0);
    let text = stdout(&output);
    let line = text
        .lines()
        .find(|l| l.starts_with("mutual exclusion (expected violated): 3000 runs, "))
        .unwrap_or_else(|| panic!("no mutual exclusion line in\n{text}"));
    assert!(line.contains(" violations, first with seed "), "{line}");
    let seed: u64 = line.rsplit(' ').next().unwrap().parse().unwrap();
    let replay = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("replay: "))
        .unwrap_or_else(|| panic!("no replay command in\n{text}"));
    assert_eq!(replay, format!("redlock-lab simulate {name} --seed {seed}"));

    // Run the printed command as printed.
    let words: Vec<&str> = replay.split(' ').collect();
    assert_eq!(words[..2], ["redlock-lab", "simulate"]);
    let replayed = simulate(&words[2..]);
    assert_exit(&replayed, 0);
    let again = stdout(&replayed);
    assert!(again.starts_with(&format!("seed = {seed}\n")), "{again}");
    assert!(
        again.contains(&format!(
            "mutual exclusion (expected violated): 1 run, 1 violation, first with seed {seed}"
        )),
        "{again}"
    );
    // With one run, the trace tail of the violating run, ending in the violation.
    assert!(again.contains(&format!("trace of seed {seed}")), "{again}");
    // A fault is marked and told in the shared words of the checker's stories.
    assert!(
        again.contains("⚡ n2's clock jumps +20 (it now reads "),
        "{again}"
    );
    // In the words of the checker's stories, with clock readings counted from where every
    // clock starts (as the model's are), not the simulator's internal epoch.
    assert!(
        again.contains("believes it holds the lock until its clock reads "),
        "{again}"
    );
    assert!(again.contains("sets c1's key, expiring when n"), "{again}");
    assert!(!again.contains("reads 1000"), "{again}");
    assert!(
        again.contains("VIOLATION mutual exclusion: at t="),
        "{again}"
    );
    // And it is the same run every time.
    assert_eq!(stdout(&simulate(&words[2..])), again);

    // The runs go on several threads; what is printed does not depend on how many.
    for jobs in ["1", "3"] {
        let alone = simulate(&[name, "--seed", "0", "--runs", "3000", "--jobs", jobs]);
        assert_exit(&alone, 0);
        assert_eq!(stdout(&alone), text, "--jobs {jobs}");
    }
}

#[test]
fn a_violation_of_a_property_expected_to_hold_is_a_contradiction() {
    // The node-jump scenario with a wrong expectation: the simulator finds a run that breaks
    // what the file says holds, which is exit code 1.
    let dir = scratch_dir("simulate-contradiction");
    let original = redlock_lab::catalog::find("node-clock-jump-forward-past-drift")
        .unwrap()
        .text;
    let wrong = original.replace(
        "\"mutual exclusion\" = \"violated\"",
        "\"mutual exclusion\" = \"holds\"",
    );
    assert_ne!(wrong, original);
    let file = dir.join("wrong.toml");
    std::fs::write(&file, wrong).unwrap();
    let output = simulate(&[file.to_str().unwrap(), "--seed", "0", "--runs", "3000"]);
    assert_exit(&output, 1);
    let text = stdout(&output);
    assert!(
        text.contains("CONTRADICTION with the model checker"),
        "{text}"
    );
    assert!(
        text.contains("mutual exclusion: the checker expects it to hold, and seed "),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn an_expected_violation_that_no_run_reaches_is_reported_not_failed() {
    // A catalog violation the simulator does not reach (see tests/simulate_catalog.rs).
    let output = simulate(&["synchronous-bounds-margin-2", "--seed", "0"]);
    assert_exit(&output, 0);
    let text = stdout(&output);
    assert!(text.contains("runs = 1 (seed 0)\n"), "{text}");
    assert!(
        text.contains(
            "storage safety (expected violated): 1 run, 0 violations: not reached in 1 run"
        ),
        "{text}"
    );
}

#[test]
fn a_failover_scenario_is_simulated() {
    // The master's replica is promoted without the key it had not copied yet.
    let output = simulate(&["master-replica-failover", "--seed", "1", "--runs", "2000"]);
    assert_exit(&output, 0);
    let text = stdout(&output);
    let line = text
        .lines()
        .find(|l| l.starts_with("mutual exclusion (expected violated): 2000 runs, "))
        .unwrap_or_else(|| panic!("no mutual exclusion line: {text}"));
    assert!(!line.contains(" 0 violations"), "{line}");
}

#[test]
fn the_model_checkers_own_features_are_simulated_too() {
    // A shared token: the failed client's compare-and-delete removes the holder's keys.
    let output = simulate(&["shared-token", "--seed", "1", "--runs", "200"]);
    assert_exit(&output, 0);
    let text = stdout(&output);
    assert!(
        text.contains("one token value shared by every client"),
        "{text}"
    );
    assert!(
        !text.contains("mutual exclusion (expected violated): 200 runs, 0 violations"),
        "{text}"
    );
    // A client that dies for good never breaks mutual exclusion.
    let output = simulate(&["client-crash-while-holding", "--seed", "1", "--runs", "200"]);
    assert_exit(&output, 0);
    let text = stdout(&output);
    assert!(text.contains("client_crashes 1 × [0, 0] ms"), "{text}");
    assert!(
        text.contains("mutual exclusion (expected holds): 200 runs, 0 violations"),
        "{text}"
    );
}

#[test]
fn bad_input_exits_with_2_and_a_clear_message() {
    let dir = scratch_dir("simulate-bad");
    let broken = dir.join("broken.toml");
    std::fs::write(&broken, "name = \"x\"\n[lock]\nnodez = 3\n").unwrap();
    let cases: [(&[&str], &str); 7] = [
        (&["no-such-scenario", "--seed", "1"], "no such file"),
        (&[broken.to_str().unwrap(), "--seed", "1"], "broken.toml:"),
        (&["redlock-fault-free"], "--seed"),
        (&["redlock-fault-free", "--seed", "x"], "invalid value"),
        (
            &["redlock-fault-free", "--seed", "1", "--runs", "0"],
            "--runs must lie in",
        ),
        (
            &[
                "redlock-fault-free",
                "--seed",
                "18446744073709551615",
                "--runs",
                "2",
            ],
            "runs past the largest seed",
        ),
        (
            &["redlock-fault-free", "--seed", "1", "--jobs", "0"],
            "--jobs <N>",
        ),
    ];
    for (args, needle) in cases {
        let output = simulate(args);
        assert_exit(&output, 2);
        assert!(
            stderr(&output).contains(needle),
            "{args:?}: {needle:?} not in {}",
            stderr(&output)
        );
    }
    let output = simulate(&["redlock-fault-free", "--seed", "1", "--ms-per-tick", "0"]);
    assert_exit(&output, 2);
    assert!(stderr(&output).contains("--ms-per-tick must lie in"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_simulator_world_runs_by_name_at_its_own_resolution_and_replays() {
    // `models/sim/drift-too-small.toml`: not a checker scenario, found by its name.
    let output = simulate(&["drift-too-small", "--seed", "0", "--runs", "50"]);
    assert_exit(&output, 0);
    let text = stdout(&output);
    for line in [
        "scenario = drift-too-small (models/sim/drift-too-small.toml)",
        "ms_per_tick = 2",
        "ttl = 100 ms",
        "drift = 2 ms",
        "mutual exclusion (expected violated): 50 runs, ",
    ] {
        assert!(text.contains(line), "missing {line:?}:\n{text}");
    }
    // The replay command names the world and no resolution (the file's is the default).
    let replay = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("replay: redlock-lab simulate "))
        .unwrap_or_else(|| panic!("a replay command:\n{text}"));
    let args: Vec<&str> = replay.split_whitespace().collect();
    assert_eq!(args[..2], ["drift-too-small", "--seed"], "{replay}");
    let again = simulate(&args);
    assert_exit(&again, 0);
    assert!(
        stdout(&again).contains("mutual exclusion (expected violated): 1 run, 1 violation"),
        "{}",
        stdout(&again)
    );
    // A world whose seeds must keep every property is judged against [simulate.expect].
    let safe = simulate(&["antirez-safe", "--seed", "0", "--runs", "5"]);
    assert_exit(&safe, 0);
    assert!(
        stdout(&safe).contains("no lost update (expected holds): 5 runs, 0 violations"),
        "{}",
        stdout(&safe)
    );
}

#[test]
fn the_help_names_every_simulator_world() {
    let output = simulate(&["--help"]);
    assert_exit(&output, 0);
    let help = stdout(&output);
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models/sim");
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).expect("models/sim exists") {
        let path = entry.expect("an entry").path();
        let name = path
            .file_stem()
            .expect("a name")
            .to_string_lossy()
            .into_owned();
        assert!(
            help.contains(&name),
            "simulate --help does not name {name}:\n{help}"
        );
        count += 1;
    }
    assert_eq!(count, 15);
}

/// A file written in milliseconds at a 10 ms tick: every amount of time a run tells is in
/// milliseconds (the simulator's unit, never "ticks"), and faults that read alike are told
/// once with their count. Sixty seeds of one run each (about a second).
#[test]
fn times_are_told_in_milliseconds_and_each_fault_once() {
    let dir = scratch_dir("simulate-units");
    let file = dir.join("pause.toml");
    std::fs::write(
        &file,
        r#"name = "pause"
title = "A pause of up to 250 ms, written in milliseconds"
claim = "-"
source = "derived"
prose = "-"
resolution = "10ms"

[lock]
nodes = 3
clients = 2
ttl = "1s"
drift = "20ms"

[storage]
protection = "none"

[faults.pauses]
count = 1
max = "250ms"

[faults.crashes]
count = 1
persistence = "none"
restart_delay = "250ms"

[expect]
"mutual exclusion" = "holds"
"#,
    )
    .unwrap();
    let (mut delays_told, mut counted) = (0, 0);
    for seed in 1..=60 {
        let output = simulate(&[file.to_str().unwrap(), "--seed", &seed.to_string()]);
        let text = stdout(&output);
        assert!(text.contains("ms_per_tick = 10"), "{text}");
        let trace = text
            .lines()
            .filter(|line| line.trim_start().starts_with("t="));
        for line in trace {
            assert!(!line.contains("tick"), "seed {seed}: {line}");
            delays_told += usize::from(line.contains(" ms in the network"));
        }
        let faults: Vec<&str> = text
            .lines()
            .filter(|line| line.starts_with("  aimed: ") || line.starts_with("  at "))
            .collect();
        for (i, line) in faults.iter().enumerate() {
            assert!(
                !faults[..i].contains(line),
                "seed {seed} told twice: {line}\n{text}"
            );
            counted += usize::from(line.ends_with("(×2)") || line.ends_with("(×3)"));
        }
    }
    assert!(delays_told > 0, "no seed told a delay in the network");
    assert!(counted > 0, "no seed drew two faults alike");
    let _ = std::fs::remove_dir_all(&dir);
}
