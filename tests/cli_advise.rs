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

/// The figure on the line that starts with `label`, as printed (`100 ms`, `2.101 s`).
fn figure<'a>(stdout: &'a str, label: &str) -> &'a str {
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no {label} line:\n{stdout}"));
    let rest = line.trim_start()[label.len()..].trim_start();
    rest[..rest.find("checker:").expect("the evidence")].trim_end()
}

/// Runs `advise ARGS --out DIR`, then `check DIR`; returns what advise printed and the folder.
fn advise_and_recheck(args: &[&str], label: &str) -> (String, PathBuf) {
    let dir = scratch_dir(&format!("advise-{label}"));
    let mut all = vec!["advise"];
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
    let (stdout, dir) = advise_and_recheck(
        &[
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
        ],
        "readme",
    );
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
        let line = stdout.lines().find(|l| l.trim_start().starts_with(label));
        let line = line.unwrap_or_else(|| panic!("no {label} line: {stdout}"));
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
        let line = stdout.lines().find(|l| l.trim_start().starts_with(label));
        assert!(
            line.is_some_and(|l| l.contains("proved for all N, any C)")),
            "{label}: {stdout}"
        );
    }
    let margin = stdout.lines().find(|l| l.starts_with("check margin"));
    assert!(
        margin.is_some_and(|l| l.contains("proved for N=3, C=2)")),
        "{stdout}"
    );
    // What to type, as the README shows it: the default drift (102 ms) covers the 100 ms.
    for setting in [
        "`Config { drift: DriftPolicy::fixed(Millis(100)), .. }`, or `redlock-lab run --drift 100ms`",
        "(the crate's default, 1% of the TTL + 2 ms = 102 ms, is safe here, so you may keep it)",
        "`NodeOptions { restart_guard: Some(Duration::from_millis(10000)), .. }`",
        "write only while `guard.remaining() >= Millis(2101)` (the lease has 2.101 s left); no fencing needed",
        "Assumed, not checked: a pause is at most 2 s and a network delay at most 100 ms; every clock reads within 50 ms of true time and never jumps;",
    ] {
        assert!(stdout.contains(setting), "no {setting}:\n{stdout}");
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
    assert!(
        stdout.contains("storage safety holds (checked)"),
        "{stdout}"
    );
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
        let drift = ticks(&stdout, "drift allowance");
        let restart = ticks(&stdout, "restart delay");
        let margin = ticks(&stdout, "check margin");
        // advise checks every figure together against every declared fault itself, too.
        for recovery in ["restart delay", "restart guard"] {
            let line =
                format!("whole deployment     holds: every figure together, with the {recovery}");
            assert!(stdout.contains(&line), "{faults:?}: no {line}:\n{stdout}");
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
            "Assumed, not checked: a pause is at most".to_owned(),
        ] {
            assert!(
                stdout.contains(&setting),
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
