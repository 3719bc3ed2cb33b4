//! `redlock-lab replay` as a user runs it: every catalog counterexample to mutual exclusion
//! that the replay executes breaks real masters as the model says and its mitigation holds
//! there under the same schedule (`--patched`), the scenarios it leaves out are the ones
//! `docs/live-replay.md` lists (with its count of reproduced ones, which the README states
//! too), a holding
//! scenario exits 0, bad input exits 2, and no `redis-server` outlives it, also on SIGINT.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use crate::harness::Alone;

const BIN: &str = env!("CARGO_BIN_EXE_redlock-lab");

/// A tick of 100 ms: half a tick (50 ms) separates each real expiry from the steps around it,
/// far above this machine's scheduling jitter; the catalog's counterexamples last 2 to 6 ticks.
const TICK: &str = "100ms";

fn replay(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("replay")
        .args(args)
        .output()
        .expect("run redlock-lab replay")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The catalog's scenarios whose `[expect]` says mutual exclusion is violated.
fn violated_catalog() -> Vec<String> {
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    let mut names: Vec<String> = std::fs::read_dir(&models)
        .expect("models/")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .filter(|path| {
            std::fs::read_to_string(path)
                .expect("a scenario file")
                .contains("\"mutual exclusion\" = \"violated\"")
        })
        .map(|path| path.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The names `docs/live-replay.md` lists as left out (its `- \`name\`:` lines), and the
/// count its sentence "N of M … reproduced" states.
fn documented() -> (BTreeSet<String>, usize) {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/live-replay.md"))
            .expect("docs/live-replay.md");
    let left_out = doc
        .lines()
        .filter_map(|line| line.strip_prefix("- `"))
        .filter_map(|rest| rest.split_once("`:").map(|(name, _)| name.to_owned()))
        .collect();
    let count = doc
        .split_once(" counterexamples to mutual exclusion are reproduced")
        .and_then(|(before, _)| before.rsplit_once("**")?.1.split(' ').next()?.parse().ok())
        .expect("docs/live-replay.md states \"**N of M counterexamples to mutual exclusion are reproduced\"");
    (left_out, count)
}

#[test]
fn every_counterexample_the_replay_executes_breaks_real_masters_and_its_mitigation_holds() {
    let _alone = Alone::wait();
    let names = violated_catalog();
    let results = Mutex::new(Vec::new());
    // Two at a time: each replay is mostly waiting for its ticks.
    let next = Mutex::new(names.iter());
    thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                while let Some(name) = { next.lock().unwrap().next() } {
                    let out = replay(&[name, "--tick", TICK]);
                    let patched = replay(&[name, "--tick", TICK, "--patched"]);
                    results.lock().unwrap().push((name.clone(), out, patched));
                }
            });
        }
    });
    let (left_out, count) = documented();
    let mut reproduced = 0;
    for (name, out, patched) in results.into_inner().unwrap() {
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        if left_out.contains(&name) {
            assert_eq!(
                out.status.code(),
                Some(2),
                "{name} is listed as left out:\n{stdout}{stderr}"
            );
            assert!(
                stderr.contains("cannot execute") || stderr.contains("smaller --tick"),
                "{name}: {stderr}"
            );
            continue;
        }
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name} did not reproduce:\n{stdout}{stderr}"
        );
        assert!(
            stdout.contains("reproduced on real Redis: c"),
            "{name}:\n{stdout}"
        );
        // The same schedule under the scenario's mitigation: the property holds on real Redis.
        let (patched_out, patched_err) = (text(&patched.stdout), text(&patched.stderr));
        assert_eq!(
            patched.status.code(),
            Some(0),
            "{name} --patched:\n{patched_out}{patched_err}"
        );
        assert!(
            patched_out.contains("the mitigation holds on real Redis"),
            "{name} --patched:\n{patched_out}"
        );
        reproduced += 1;
    }
    assert_eq!(
        reproduced, count,
        "docs/live-replay.md states {count} reproduced"
    );
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let sentence = format!(
        "{reproduced} of the catalog's {} counterexamples to mutual exclusion reproduce on real Redis",
        names.len()
    );
    assert!(readme.contains(&sentence), "the README says \"{sentence}\"");
    assert_eq!(
        reproduced + left_out.len(),
        names.len(),
        "every violated scenario is replayed or listed as left out"
    );
}

/// The catalog's token inversion: a node's clock jump lets c2 acquire while c1's round is
/// still open; c1 then decides late and becomes the newer holder with the smaller token, and
/// the real fenced store accepts c2's op after c1's. The patch (drift covering the jump)
/// holds.
#[test]
fn lock_quorum_tokens_invert_on_real_masters_as_the_catalog_predicts_and_the_patch_holds() {
    let args = [
        "fencing-lock-quorum-node-clock-jump",
        "--property",
        "storage safety",
        "--tick",
        TICK,
    ];
    let out = replay(&args);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains(
            "reproduced on real Redis: the fenced store accepted c2's read (token 2, the 1st lock acquired) after c1's read (token 1, the 2nd lock acquired)"
        ),
        "{stdout}"
    );
    let out = replay(&[&args[..], &["--patched"]].concat());
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("the mitigation holds on real Redis"),
        "{stdout}"
    );
    // Storage the fenced store is not: refused before any server starts.
    let out = replay(&[
        "antirez-random-token-cas-node-clock-jump",
        "--property",
        "storage safety",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains("only on a fenced store"),
        "{}",
        text(&out.stderr)
    );
}

/// `--format html`: one page, the model's run drawn as the book draws it and every line the
/// text output runs beside what the real masters did, linked to its step in the picture; what
/// the replay is doing goes to stderr, so stdout is the page alone.
#[test]
fn the_html_page_puts_each_step_of_the_model_beside_the_real_masters() {
    // Alone, as the catalog's replays: their steps are tenths of a second apart.
    let _alone = Alone::wait();
    let name = "node-clock-jump-forward-past-drift";
    let text_run = replay(&[name, "--tick", TICK]);
    let lines = text(&text_run.stdout)
        .lines()
        .filter(|line| line.starts_with("t="))
        .count();
    let out = replay(&[name, "--tick", TICK, "--format", "html"]);
    let page = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
    assert!(page.trim_end().ends_with("</html>"), "{page}");
    assert!(page.contains("<svg"), "the model's run is drawn");
    assert!(
        page.contains("<p class='verdict reproduced'>reproduced on real Redis: c1 and c2 both held the lock from"),
        "{page}"
    );
    let rows: Vec<&str> = page
        .lines()
        .filter(|line| line.starts_with("<tr><td><a href='#step-"))
        .collect();
    assert_eq!(rows.len(), lines, "one row per line the text output runs");
    assert!(
        rows.iter()
            .any(|row| row.contains("n2&#39;s clock set to true time +200 ms")),
        "{page}"
    );
    assert!(
        text(&out.stderr).contains("starting 3 real redis-server masters"),
        "{}",
        text(&out.stderr)
    );
    // The mitigation's page says it held, under the patched run's own anchors.
    let out = replay(&[name, "--tick", TICK, "--format", "html", "--patched"]);
    let page = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        page.contains("the mitigation holds on real Redis"),
        "{page}"
    );
    assert!(page.contains("<a href='#patched-step-"), "{page}");
}

/// `book --replay`: a counterexample's page links to its replay, recorded on real masters while
/// the book was written, and the replay's page draws the real run (each client's belief, the
/// overlap, every step where it ran); a page where mutual exclusion holds has no such section.
/// `UPDATE_SCREENSHOTS=1` rewrites the README's picture of that replay, which the README's
/// controversy section opens with.
#[test]
fn book_replay_keeps_each_counterexamples_real_run_beside_its_page() {
    let _alone = Alone::wait();
    let name = "node-clock-jump-forward-past-drift";
    let dir = crate::common::scratch_dir("book-replay");
    let out = Command::new(BIN)
        .args(["book", "--replay", "--out", dir.to_str().unwrap()])
        .args([name, "redlock-fault-free"])
        .output()
        .expect("run redlock-lab book");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let read = |file: &str| std::fs::read_to_string(dir.join(file)).expect(file);
    let page = read(&format!("{name}.html"));
    assert!(
        page.contains("<span class='holds'>reproduced on real Redis: c1 and c2 both held the lock from 0.400 s to 0.600 s</span>"),
        "{page}"
    );
    assert!(
        page.contains(&format!("<a href='{name}-replay.html'>")),
        "{page}"
    );
    assert!(!read("redlock-fault-free.html").contains("id='real-redis'"));
    let replayed = read(&format!("{name}-replay.html"));
    assert!(replayed.starts_with("<!DOCTYPE html>"));
    let chart = replayed
        .split_once("<svg class='real-run'")
        .and_then(|(_, rest)| rest.split_once("</svg>"))
        .expect("the real run drawn")
        .0;
    assert_eq!(chart.matches("<rect class='belief'").count(), 2, "{chart}");
    assert_eq!(chart.matches("<rect class='overlap'").count(), 1, "{chart}");
    let steps = replayed.matches("<tr><td><a href='#step-").count();
    assert_eq!(chart.matches("<circle class='step'").count(), steps);
    readme_opens_the_controversy_with(&dir.join(format!("{name}-replay.html")), name);
}

/// The README's controversy section opens with the picture of `replay` (its page, in
/// Chromium) and the command that made it; `UPDATE_SCREENSHOTS=1` takes the picture anew.
fn readme_opens_the_controversy_with(replay: &Path, name: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let png = root.join("docs/screenshots/replay-clock-jump.png");
    if std::env::var_os("UPDATE_SCREENSHOTS").is_some() {
        let binary = crate::common::browser::browser().expect("Chromium, to take the picture");
        let scratch = crate::common::scratch_dir("replay-screenshot");
        crate::common::browser::screenshot(&binary, &scratch, replay, &png, 1000);
    }
    let bytes = std::fs::read(&png).expect("docs/screenshots/replay-clock-jump.png");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let section = readme
        .split_once("\n## Learning the controversy")
        .expect("the controversy section")
        .1;
    let first = section
        .lines()
        .skip(1)
        .find(|line| !line.trim().is_empty())
        .unwrap_or_default();
    assert!(
        first.starts_with("![") && first.contains("(docs/screenshots/replay-clock-jump.png)"),
        "the section opens with the picture: {first}"
    );
    assert!(section.contains(&format!("redlock-lab replay {name} --format html")));
}

#[test]
fn a_scenario_that_holds_says_so_and_exits_0_and_bad_input_exits_2() {
    let out = replay(&["redlock-fault-free"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("mutual exclusion holds in the model"),
        "{}",
        text(&out.stdout)
    );
    let out = replay(&["no-such-scenario"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no-such-scenario"),
        "{}",
        text(&out.stderr)
    );
    let out = replay(&["node-clock-jump-forward-past-drift", "--tick", "1ms"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--tick must be between"),
        "{}",
        text(&out.stderr)
    );
    let out = replay(&["crash-restart-aof-always", "--patched"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--patched needs a [mitigation] with a patch"),
        "{}",
        text(&out.stderr)
    );
    let out = replay(&["seed-sequential-set-two-nodes-down"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("cannot execute a sequential round yet"),
        "{}",
        text(&out.stderr)
    );
}

/// The processes that mapped the clock shim from the replay's folder of process `pid` (not
/// their command line or environment: Redis writes its process title over both).
fn servers_of(pid: u32) -> Vec<String> {
    let mark = format!("redlock-replay-{pid}/");
    std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let maps = std::fs::read(path.join("maps")).ok()?;
            text(&maps)
                .contains(&mark)
                .then(|| path.display().to_string())
        })
        .collect()
}

#[test]
fn no_redis_server_outlives_a_replay_also_on_sigint() {
    // A one-second tick: the replay is still waiting for its second step when SIGINT comes.
    let child = Command::new(BIN)
        .args([
            "replay",
            "node-clock-jump-forward-past-drift",
            "--tick",
            "1s",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start replay");
    let pid = child.id();
    let started = Instant::now();
    while servers_of(pid).len() < 3 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the masters never started"
        );
        thread::sleep(Duration::from_millis(20));
    }
    thread::sleep(Duration::from_millis(300));
    let status = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().expect("replay ends");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("interrupted"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(servers_of(pid), Vec::<String>::new(), "servers left behind");
    assert!(
        !std::env::temp_dir()
            .join(format!("redlock-replay-{pid}"))
            .exists()
    );

    // And after a whole run.
    let child = Command::new(BIN)
        .args([
            "replay",
            "crash-immediate-restart-no-persistence",
            "--tick",
            TICK,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start replay");
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert_eq!(servers_of(pid), Vec::<String>::new(), "servers left behind");
}
