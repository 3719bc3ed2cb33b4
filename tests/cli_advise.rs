//! `redlock-lab advise`: its figures are the boundaries the catalog's inequalities predict
//! (found by the checker's own search, not computed from the inequalities), the scaling rounds
//! faults up, and the scenario files it writes check again with `redlock-lab check`.

use std::path::PathBuf;

mod common;

use common::{redlock_lab, scratch_dir, text};

/// The figure on the line that starts with `label`: its tick count.
fn ticks(stdout: &str, label: &str) -> u32 {
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no {label} line:\n{stdout}"));
    let open = line
        .find('(')
        .unwrap_or_else(|| panic!("no ticks on {line}"));
    line[open + 1..]
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no tick count on {line}"))
}

/// The figure on the line that starts with `label` in whole seconds (`3 s`), as advise prints
/// it with ticks of 1 s.
fn seconds(stdout: &str, label: &str) -> u32 {
    let shown = figure(stdout, label);
    shown
        .strip_suffix(" s")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no whole seconds in {label} {shown}:\n{stdout}"))
}

/// The figure on the line that starts with `label`, as printed (`100 ms`, `2.101 s`): two
/// spaces end it.
fn figure<'a>(stdout: &'a str, label: &str) -> &'a str {
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no {label} line:\n{stdout}"));
    let rest = line.trim_start()[label.len()..].trim_start();
    rest.split("  ").next().expect("a figure")
}

/// Under `--verbose`, the proof's line under the figure's: the checks on both sides.
fn proof<'a>(stdout: &'a str, label: &str) -> &'a str {
    let mut lines = stdout.lines();
    lines.find(|l| l.trim_start().starts_with(label));
    let line = lines
        .next()
        .unwrap_or_else(|| panic!("no {label} line:\n{stdout}"));
    assert!(line.starts_with("  checker "), "{line}");
    line
}

/// The text with every run of white space one space: a setting may wrap across lines.
fn flat(stdout: &str) -> String {
    stdout.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Runs `advise --verbose ARGS --out DIR`, then `check DIR`; returns what advise printed and the folder.
fn advise_and_recheck(args: &[&str], label: &str) -> (String, PathBuf) {
    let dir = scratch_dir(&format!("advise-{label}"));
    let mut all = vec!["advise", "--verbose"];
    all.extend_from_slice(args);
    all.extend(["--out", dir.to_str().unwrap()]);
    let out = redlock_lab(&all);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    // The files prove every figure again: each `[expect]` is what the checker found at the
    // figure and one tick below it.
    let files: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert!(files.len() >= 6, "{} files", files.len());
    let check = redlock_lab(&["check", dir.to_str().unwrap()]);
    let check_out = text(&check.stdout);
    assert_eq!(check.status.code(), Some(0), "{check_out}");
    assert!(
        check_out.contains("every verdict matches [expect]"),
        "{check_out}"
    );
    (stdout, dir)
}

#[test]
fn the_readme_deployment_gets_figures_exact_to_the_millisecond() {
    // The README's example: ttl 10 s, clock error 50 ms, pause ≤ 2 s, delay ≤ 100 ms, no
    // persistence. Checked at 1 ms by the zone engine, each figure is the boundary the
    // catalog's inequalities give with the clock errors counted.
    let readme = [
        "--ttl",
        "10s",
        "--clock-error",
        "50ms",
        "--max-jump",
        "0",
        "--max-pause",
        "2s",
        "--network-delay",
        "100ms",
        "--restart-persistence",
        "none",
    ];
    let (stdout, dir) = advise_and_recheck(&readme, "readme");
    // Without --verbose each figure is read off an exploration with only its own key free
    // (every key of its formula is free under --verbose): the same figures.
    let plain = text(&redlock_lab(&[&["advise"][..], &readme].concat()).stdout);
    for label in [
        "drift allowance",
        "restart delay",
        "or restart guard",
        "check margin",
    ] {
        // `--verbose` adds the tick count: `10 s (10000 ticks)`.
        let verbose = figure(&stdout, label).split(" (").next();
        assert_eq!(Some(figure(&plain, label)), verbose, "{label}:\n{plain}");
    }
    assert!(stdout.contains("1 tick = 1 ms"), "{stdout}");
    // drift ≥ ε_n + ε_c: the catalog's shared clock-error budget
    // (default-config-clock-error-covered/-past).
    assert_eq!(figure(&stdout, "drift allowance"), "100 ms", "{stdout}");
    assert!(
        stdout.contains("lock.drift_ticks = 100 holds, 99 violated"),
        "{stdout}"
    );
    // A restarted node's delay covers the lease, ttl − drift, plus both clock errors: the
    // restarted node may count its delay ε_n fast and the holder believe ε_c late.
    assert_eq!(figure(&stdout, "restart delay"), "10 s", "{stdout}");
    assert_eq!(figure(&stdout, "or restart guard"), "10 s", "{stdout}");
    // P + Δ < M + drift − ε_n − ε_c: 2000 + 100 < M + 100 − 100, so M = 2101 ms.
    assert_eq!(figure(&stdout, "check margin"), "2.101 s", "{stdout}");
    // Each figure is read off the symbolic exploration, and the checker confirms it with one
    // check on each side; the line says so (a binary search says "binary search").
    for label in [
        "drift allowance",
        "restart delay",
        "or restart guard",
        "check margin",
    ] {
        let line = proof(&stdout, label);
        assert!(
            line.contains("(read off the symbolic exploration, confirmed by 2 checks,"),
            "{line}"
        );
    }
    // Each figure as a formula over its keys, proved for every value by one symbolic
    // exploration, each tight at its figure.
    let formulas: Vec<&str> = stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("for every value"))
        .collect();
    // Both sides proved: outside each condition a run breaks the property, for every value.
    // The margin's is Kleppmann's boundary with the pause and the delay as numbers: 2101 =
    // P + Δ + 1.
    let conditions = [
        "holds exactly when drift ≥ ε_node + ε_client ",
        "holds exactly when drift ≥ ε_node + ε_client and restart_delay ≥ ttl − drift + ε_node + ε_client ",
        "holds exactly when drift ≥ ε_node + ε_client and client_guard ≥ ttl − drift + ε_node + ε_client ",
        "holds exactly when margin ≥ 2101 − drift + ε_node + ε_client ",
    ];
    assert_eq!(formulas.len(), conditions.len(), "{stdout}");
    for (line, condition) in formulas.iter().zip(conditions) {
        assert!(line.contains(condition), "{line}");
        assert!(line.contains("both sides proved for every value"), "{line}");
        assert!(line.contains("; tight"), "{line}");
    }
    assert!(
        stdout.contains("storage.check_margin_ticks = 2101 holds, 2100 violated"),
        "{stdout}"
    );
    assert!(stdout.contains("zone engine"), "{stdout}");
    // Each figure says for which sizes its safe side is proved: the drift and the restart
    // delay by the sizes argument for any number of masters and workers, the margin (which
    // involves the storage) for the model's three nodes and two clients only.
    for label in ["drift allowance", "restart delay", "or restart guard"] {
        let line = proof(&stdout, label);
        assert!(line.contains("proved for all N, any C)"), "{label}: {line}");
    }
    // The margin, proved at three masters, is checked at five on both sides, and says so:
    // held here to the same files at five masters.
    let margin = proof(&stdout, "check margin");
    assert!(
        margin.contains("proved for N=3, C=2; the same boundary at N=5)"),
        "{margin}"
    );
    for (side, holds) in [("holds", true), ("violated", false)] {
        let file = dir.join(format!("advise-check-margin-{side}.toml"));
        let scenario = redlock_lab::scenario::Scenario::load(&file).expect("written");
        let five = scenario.with_nodes(5).expect("resizable");
        let report = redlock_lab::check::Check::new(&five).run();
        let verdict = report.property("storage safety").expect("judged").verdict;
        assert_eq!(
            verdict == redlock_lab::scenario::Verdict::Holds,
            holds,
            "{side}"
        );
    }
    // What to type, as the README shows it: the default drift (102 ms) covers the 100 ms.
    for setting in [
        "`Config { drift: DriftPolicy::fixed(Millis(100)), .. }`, or `redlock-lab run --drift 100ms`",
        "(the crate's default, 1% of the TTL + 2 ms = 102 ms, is safe here, so you may keep it)",
        "`NodeOptions { restart_guard: Some(Duration::from_millis(10000)), .. }`",
        "write only while `guard.remaining() >= Millis(2101)` (the lease has 2.101 s left); no fencing needed",
        "Assumed, not checked: - a pause lasts at most 2 s, and a network delay lasts at most 100 ms - every clock reads within 50 ms of true time and never jumps - this crate's client times its lease on a monotonic clock",
    ] {
        assert!(flat(&stdout).contains(setting), "no {setting}:\n{stdout}");
    }
    let holds = std::fs::read_to_string(dir.join("advise-drift-holds.toml")).unwrap();
    assert!(holds.contains("resolution = \"1ms\""), "{holds}");
    assert!(holds.contains("drift_ticks = 100"), "{holds}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn periodic_fsync_is_advised_at_the_millisecond_too() {
    let (stdout, dir) = advise_and_recheck(
        &[
            "--ttl",
            "4s",
            "--clock-error",
            "20ms",
            "--restart-persistence",
            "fsync-periodic",
        ],
        "periodic",
    );
    // The zone engine models fsync-periodic (a key survives a crash once written to disk),
    // so nothing here needs the discrete engine's coarse ticks.
    assert!(!stdout.contains("discrete engine"), "{stdout}");
    assert_eq!(figure(&stdout, "drift allowance"), "40 ms", "{stdout}");
    // A key that was not on disk yet is lost: the restart delay must cover the lease,
    // ttl − drift + ε_n + ε_c.
    assert_eq!(figure(&stdout, "restart delay"), "4 s", "{stdout}");
    assert!(
        stdout.contains("restart_delay_ticks = 4000 holds, 3999 violated"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bounded_pauses_and_delays_give_the_catalogs_boundaries() {
    // ttl 5 ticks of 1 s, no clock error, no jump, pause ≤ 2 s, delay ≤ 1 s.
    let (stdout, dir) = advise_and_recheck(
        &[
            "--ttl",
            "5s",
            "--ticks",
            "5",
            "--max-pause",
            "2s",
            "--network-delay",
            "1s",
        ],
        "bounded",
    );
    assert!(stdout.contains("1 tick = 1 s"), "{stdout}");
    // drift ≥ ε_n + ε_c = 0.
    assert_eq!(ticks(&stdout, "drift allowance"), 0, "{stdout}");
    // A restart delay (or guard) of exactly ttl − drift.
    assert_eq!(ticks(&stdout, "restart delay"), 5, "{stdout}");
    assert_eq!(ticks(&stdout, "or restart guard"), 5, "{stdout}");
    // Storage safe iff P + Δ < M + drift: 2 + 1 < M, so M = 4.
    assert_eq!(ticks(&stdout, "check margin"), 4, "{stdout}");
    assert!(
        stdout.contains("fencing              not required"),
        "{stdout}"
    );
    assert!(stdout.contains("check margin         4 s"), "{stdout}");
    let holds = std::fs::read_to_string(dir.join("advise-check-margin-holds.toml")).unwrap();
    assert!(holds.contains("check_margin_ticks = 4"), "{holds}");
    // A tick of a whole number of milliseconds is written down, so the file says what its
    // ticks are in real units.
    assert!(holds.contains("resolution = \"1000ms\""), "{holds}");
    assert!(holds.contains("\"storage safety\" = \"holds\""), "{holds}");
    let violated = std::fs::read_to_string(dir.join("advise-check-margin-violated.toml")).unwrap();
    assert!(violated.contains("check_margin_ticks = 3"), "{violated}");
    assert!(
        violated.contains("\"storage safety\" = \"violated\""),
        "{violated}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_jump_raises_the_drift_and_unbounded_pauses_require_fencing() {
    // ttl 4 ticks of 1 s; a 300 ms jump rounds up to a whole tick.
    let (stdout, dir) = advise_and_recheck(
        &[
            "--ttl",
            "4s",
            "--ticks",
            "4",
            "--max-jump",
            "300ms",
            "--max-pause",
            "unbounded",
        ],
        "jump",
    );
    assert!(stdout.contains("max jump 300 ms -> 1"), "{stdout}");
    // A jump J is absorbed iff J ≤ drift, for a node's forward and a client's backward jump.
    assert_eq!(ticks(&stdout, "drift allowance"), 1, "{stdout}");
    assert!(
        stdout.contains("a client's backward jump: lock.drift_ticks = 1 holds, 0 violated"),
        "{stdout}"
    );
    // The restarted node's clock may jump too, which cuts its delay short by J:
    // ttl − drift + J = 4.
    assert_eq!(ticks(&stdout, "restart delay"), 4, "{stdout}");
    // As formulas (in ticks): drift ≥ J for either jump (the node's forward jump is a key,
    // the client's backward one stays a number, J = 1), and a restart delay covering the
    // lease and the jump.
    let formulas: Vec<&str> = stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("for every value"))
        .collect();
    assert_eq!(formulas.len(), 4, "{stdout}");
    assert!(
        formulas[0].contains("holds exactly when drift ≥ jump "),
        "{stdout}"
    );
    assert!(
        formulas[1].contains("holds exactly when drift ≥ 1 "),
        "{stdout}"
    );
    assert!(
        formulas[2].contains("restart_delay ≥ ttl − drift + jump "),
        "{stdout}"
    );
    assert!(
        formulas.iter().all(|l| l.contains("in ticks of 1 s")),
        "{stdout}"
    );
    // No margin survives an unbounded pause; a fencing token does.
    assert!(stdout.contains("fencing              REQUIRED"), "{stdout}");
    assert!(stdout.contains("tokens do (checked)"), "{stdout}");
    let fencing = std::fs::read_to_string(dir.join("advise-fencing-holds.toml")).unwrap();
    assert!(
        fencing.contains("protection = \"fencing-token\""),
        "{fencing}"
    );
    assert!(fencing.contains("max_ticks = \"unbounded\""), "{fencing}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_clock_error_the_ttl_cannot_cover_is_said_and_exits_1() {
    // ttl 3 ticks, ε_n = ε_c = 2 ticks: drift ≥ 4 is needed, and drift must stay below 3.
    let out = redlock_lab(&[
        "advise",
        "--ttl",
        "3s",
        "--ticks",
        "3",
        "--clock-error",
        "2s",
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("drift allowance: none below the TTL keeps mutual exclusion"),
        "{stdout}"
    );
    assert!(
        stdout.contains("lock.drift_ticks = 2 is violated"),
        "{stdout}"
    );
    assert!(!stdout.contains("restart delay"), "{stdout}");
}

#[test]
fn bad_input_exits_2() {
    for (args, message) in [
        (vec!["advise"], "--ttl"),
        (vec!["advise", "--ttl", "10"], "no unit"),
        (vec!["advise", "--ttl", "10s", "--ticks", "40"], "40"),
        (
            vec![
                "advise",
                "--ttl",
                "10s",
                "--restart-persistence",
                "sometimes",
            ],
            "sometimes",
        ),
        (
            vec!["advise", "--ttl", "10s", "--time-limit", "0s"],
            "--time-limit must be more than 0",
        ),
        (vec!["advise", "--ttl", "10s", "--jobs", "0"], "--jobs"),
    ] {
        let out = redlock_lab(&args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains(message),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

/// The deployment `advise` was told, as one scenario file in its ticks: every declared fault at
/// once (clock errors, a node's forward jump, a crash that loses the keys, a pause and a delay
/// before each write), with the drift, the restart delay and the check margin given, and
/// `expect` for mutual exclusion and storage safety.
fn deployment(
    (ttl, error, jump, pause, delay): (u32, u32, u32, u32, u32),
    (drift, restart, margin): (u32, Option<u32>, u32),
    expect: &str,
) -> redlock_lab::scenario::Scenario {
    // A file that breaks without the crash breaks with it (a fault only adds runs), so the
    // checks below the figures leave it out, which keeps them fast.
    let crash = restart.map_or(String::new(), |delay| {
        format!(
            "[faults.crashes]\ncount = 1\npersistence = \"none\"\nrestart_delay_ticks = {delay}\n"
        )
    });
    let text = format!(
        "name = \"deployment\"\ntitle = \"t\"\nclaim = \"c\"\nsource = \"derived\"\nprose = \"p\"\n\
         [lock]\nnodes = 3\nclients = 2\nttl_ticks = {ttl}\ndrift_ticks = {drift}\n\
         [clock]\nnode_error_ticks = {error}\nclient_error_ticks = {error}\n\
         [faults.clock_jumps]\ntarget = \"node\"\njump_ticks = {jump}\n\
         {crash}[faults.pauses]\ncount = 1\nmax_ticks = {pause}\n\
         [storage]\nprotection = \"none\"\ncheck_margin_ticks = {margin}\nmax_delay_ticks = {delay}\n\
         [expect]\n\"mutual exclusion\" = \"holds\"\n\"storage safety\" = \"{expect}\"\n"
    );
    redlock_lab::scenario::Scenario::from_str("deployment.toml", &text).expect("a valid file")
}

/// Whether `property` holds in `scenario`, by the zone engine in milliseconds (its verdicts
/// do not change with the scale, and it settles these files in a fraction of a second).
fn holds_in(scenario: &redlock_lab::scenario::Scenario, property: &str) -> bool {
    use redlock_lab::check::{Check, Engine};
    let check = Check::new(&scenario.scaled(1000)).engine(Engine::Zones);
    let report = check.expect("the zone engine models the deployment").run();
    let verdict = report.property(property).expect("the property").verdict;
    verdict == redlock_lab::scenario::Verdict::Holds
}

#[test]
fn every_figure_holds_against_every_declared_fault_and_one_tick_less_does_not() {
    // (ttl, clock error, jump, pause, delay) in ticks of 1 s, as `--ticks` scales them.
    let deployments = [(10, 0, 1, 2, 1), (12, 1, 1, 3, 1)];
    for faults in deployments {
        let (ttl, error, jump, pause, delay) = faults;
        let secs = |t: u32| format!("{t}s");
        // Without --verbose: the same figures (the README deployment's test holds the two to
        // each other), each read off an exploration with only its own key free, ten times
        // faster than with every key of its formula free.
        let out = redlock_lab(&[
            "advise",
            "--ttl",
            &secs(ttl),
            "--ticks",
            &ttl.to_string(),
            "--clock-error",
            &secs(error),
            "--max-jump",
            &secs(jump),
            "--max-pause",
            &secs(pause),
            "--network-delay",
            &secs(delay),
        ]);
        let stdout = text(&out.stdout);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
        // Each search says what it does before it starts, and what it took.
        for label in ["clock error", "restart delay", "check margin"] {
            assert!(
                stderr.contains(&format!("advise: searching the {label}")),
                "{stderr}"
            );
        }
        assert!(
            stderr.contains("advise: the check margin took "),
            "{stderr}"
        );
        let drift = seconds(&stdout, "drift allowance");
        let restart = seconds(&stdout, "restart delay");
        let margin = seconds(&stdout, "check margin");
        // advise checks every figure together against every declared fault itself, too.
        for recovery in ["restart delay", "restart guard"] {
            let line = format!("whole deployment holds: every figure at once, the {recovery}");
            assert!(
                flat(&stdout).contains(&line),
                "{faults:?}: no {line}:\n{stdout}"
            );
        }
        // The settings to type, against the crate's default (1% of the TTL + 2 ms, far below a
        // drift of whole seconds here).
        let drift_ms = drift * 1000;
        for setting in [
            format!("`Config {{ drift: DriftPolicy::fixed(Millis({drift_ms})), .. }}`"),
            format!("`redlock-lab run --drift {drift_ms}ms`"),
            format!(
                "UNSAFE here: {} ms is below the {drift_ms} ms needed",
                ttl * 10 + 2
            ),
            format!("`guard.remaining() >= Millis({})`", margin * 1000),
            "`NodeOptions { restart_guard: Some(Duration::from_millis(".to_owned(),
            "Assumed, not checked: - a pause lasts at most".to_owned(),
        ] {
            assert!(
                flat(&stdout).contains(&setting),
                "{faults:?}: no {setting}:\n{stdout}"
            );
        }
        // The margin faces the jump too: a node's clock that steps forward by J frees the key
        // J early, so the margin is Kleppmann's P + Δ + 1 − drift + ε_n + ε_c, plus J.
        assert_eq!(
            margin + drift,
            pause + delay + 1 + 2 * error + jump,
            "{faults:?}: {stdout}"
        );
        // Re-checked on the whole deployment, apart from the files advise wrote, the crash
        // recovered by the printed restart delay.
        let at = deployment(faults, (drift, Some(restart), margin), "holds");
        assert!(
            holds_in(&at, "mutual exclusion"),
            "{faults:?} drift {drift}"
        );
        assert!(
            holds_in(&at, "storage safety"),
            "{faults:?} margin {margin}"
        );
        let below = deployment(faults, (drift, None, margin - 1), "violated");
        assert!(
            !holds_in(&below, "storage safety"),
            "{faults:?} margin {}",
            margin - 1
        );
        let short = deployment(faults, (drift - 1, None, margin + 1), "holds");
        assert!(
            !holds_in(&short, "mutual exclusion"),
            "{faults:?} drift {}",
            drift - 1
        );
    }
}

/// A deployment whose every search takes about a second: three ticks of 1 s, pauses of 1 s.
const SMALL: &[&str] = &["advise", "--ttl", "3s", "--ticks", "3", "--max-pause", "1s"];

/// Runs `SMALL` with `extra`, expects exit 0, and returns stdout and stderr.
fn small(extra: &[&str]) -> (String, String) {
    let mut args = SMALL.to_vec();
    args.extend_from_slice(extra);
    let out = redlock_lab(&args);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{args:?}: {stdout}{stderr}");
    (stdout, stderr)
}

#[test]
fn the_families_run_in_parallel_with_the_same_output_and_the_json_says_the_same() {
    // The figures, their proofs and their order do not depend on how many searches run at
    // once; each progress line names its family, since they interleave.
    let (one, _) = small(&["--verbose", "--jobs", "1"]);
    let (two, stderr) = small(&["--verbose", "--jobs", "2"]);
    assert_eq!(one, two);
    for family in [
        "clock error",
        "restart delay",
        "restart guard",
        "check margin",
    ] {
        assert!(
            stderr.contains(&format!("advise: searching the {family} (")),
            "{stderr}"
        );
        assert!(
            stderr.contains(&format!("advise: the {family} took ")),
            "{stderr}"
        );
    }
    // `--json` carries what the text says, figure by figure.
    let (json, _) = small(&["--json"]);
    let doc: serde_json::Value = serde_json::from_str(&json).expect("one JSON document");
    assert_eq!(doc["complete"], true, "{json}");
    // The whole deployment, once per recovery from a crash, as the text says it.
    let whole = doc["whole_deployment"]
        .as_array()
        .expect("whole_deployment");
    assert_eq!(whole.len(), 2, "{json}");
    for checked in whole {
        assert_eq!(checked["holds"], true, "{json}");
        let with = checked["with"].as_str().expect("with");
        let line =
            format!("whole deployment holds: every figure at once, {with}, every fault declared");
        assert!(flat(&one).contains(&line), "{line}:\n{one}");
    }
    assert_eq!(doc["deployment"]["ttl_ms"], 3000.0, "{json}");
    assert_eq!(doc["deployment"]["max_pause_ms"], 1000.0, "{json}");
    let figures = doc["figures"].as_array().expect("figures");
    let keys: Vec<&str> = figures.iter().filter_map(|f| f["key"].as_str()).collect();
    let labels = [
        "drift allowance",
        "restart delay",
        "or restart guard",
        "check margin",
    ];
    let expected = [
        "drift",
        "restart_delay",
        "restart_guard",
        "check_margin",
        "fencing",
    ];
    assert_eq!(keys, expected, "{json}");
    let flat_text = flat(&one);
    for (figure, label) in figures.iter().zip(labels) {
        let ticks = ticks(&one, label);
        assert_eq!(figure["settled"], true, "{figure}");
        assert_eq!(figure["value_ticks"], ticks, "{label}: {figure}");
        assert_eq!(figure["value_ms"], u64::from(ticks) * 1000, "{label}");
        let search = &figure["searches"][0];
        let proof = proof(&one, label);
        assert!(
            proof.contains(search["evidence"].as_str().expect("evidence")),
            "{proof} / {search}"
        );
        assert_eq!(figure["obtained"], "synthesis", "{figure}");
        let checks = format!("confirmed by {} check", figure["checks"]);
        assert!(proof.contains(&checks), "{proof} / {checks}");
        let condition = search["formula"]["condition"].as_str().expect("a formula");
        assert!(
            one.contains(&format!("holds exactly when {condition}   ")),
            "{condition}: {one}"
        );
        for setting in figure["setting"].as_array().expect("settings") {
            let setting = setting.as_str().expect("text");
            assert!(flat_text.contains(setting), "{setting}: {one}");
        }
    }
    // The default drift (1% of 3 s + 2 ms) covers the drift of 0; no restart delay does not.
    assert_eq!(figures[0]["default_ms"], 32);
    assert_eq!(figures[0]["default_unsafe"], false);
    assert_eq!(figures[1]["default_unsafe"], true);
    assert_eq!(figures[4]["required"], false);
    for assumption in doc["assumptions"].as_array().expect("assumptions") {
        let assumption = assumption.as_str().expect("text");
        assert!(flat_text.contains(assumption), "{assumption}: {one}");
    }
}

#[test]
fn a_time_limit_prints_what_settled_says_what_did_not_and_exits_3() {
    // The README's deployment with a node jump of 30 ms: its drift settles in under a second,
    // its check margin takes several seconds (7 s in a release build on two idle cores).
    let out = redlock_lab(&[
        "advise",
        "--ttl",
        "10s",
        "--clock-error",
        "50ms",
        "--max-jump",
        "30ms",
        "--max-pause",
        "2s",
        "--network-delay",
        "100ms",
        "--time-limit",
        "3s",
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}{}", text(&out.stderr));
    assert_eq!(figure(&stdout, "drift allowance"), "130 ms", "{stdout}");
    assert!(
        stdout.contains("check margin         not settled: the time limit ran out"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Not settled: ") && stdout.contains("a longer --time-limit settles"),
        "{stdout}"
    );
    // What settled is set, in plain words: no ticks, zones or proofs without --verbose, and no
    // line wider than 100 characters.
    assert!(flat(&stdout).contains("`Config { drift: DriftPolicy::fixed(Millis(130)), .. }`"));
    for word in ["tick", "zone", "ε_node", "proved for", "checker"] {
        assert!(!stdout.contains(word), "{word}: {stdout}");
    }
    assert!(stdout.lines().all(|l| l.chars().count() <= 100), "{stdout}");
}
