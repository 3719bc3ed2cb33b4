//! `redlock-lab run`, the distributed `flock(1)`, as a user runs it: the built binary against
//! real redis-server processes. Commands never overlap, `--nonblock` and `--wait` exit with
//! the conflict code, a lost lock stops the command with the lost-lock code, the command's
//! exit code passes through, and a signal to `run` releases the lock.

use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::harness::{RedisServer, cluster, urls};

const BIN: &str = env!("CARGO_BIN_EXE_redlock-lab");

/// `run --nodes URLS --name NAME EXTRA… -- COMMAND…`, not yet started.
fn run_command(servers: &[RedisServer], name: &str, extra: &[&str], command: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.arg("run")
        .arg("--nodes")
        .arg(urls(servers).join(","))
        .args(["--name", name])
        .args(extra)
        .arg("--")
        .args(command)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Waits for `child` at most `limit`; kills it and fails the test beyond that.
fn wait_at_most(mut child: Child, limit: Duration) -> Output {
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait for run").is_some() {
            return child.wait_with_output().expect("collect run's output");
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("collect run's output");
            panic!(
                "run did not end within {limit:?}:\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// Runs to the end (at most 30 s).
fn run_to_end(cmd: &mut Command) -> Output {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start run");
    wait_at_most(child, Duration::from_secs(30))
}

/// Waits (at most 10 s) until `server` holds the key `name`: the lock has been taken.
fn wait_for_key(server: &RedisServer, name: &str) {
    let start = Instant::now();
    while server.get(name).is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the lock {name} was never taken"
        );
        thread::sleep(Duration::from_millis(10));
    }
}

fn code(status: ExitStatus) -> Option<i32> {
    status.code()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn scratch(label: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("redlock-live-run-{}-{label}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create a scratch dir");
    dir
}

fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{name} {pid}");
}

#[test]
fn two_concurrent_runs_never_overlap() {
    let servers = cluster(3);
    let dir = scratch("overlap");
    let log = dir.join("intervals");
    // Each command writes its start and end (ns) after a sleep long enough for the other
    // runner to try meanwhile: without the lock the intervals would intersect.
    let script =
        "start=$(date +%s%N); sleep 0.2; end=$(date +%s%N); echo \"$start $end\" >> \"$1\"";
    let log_arg = log.to_str().unwrap().to_owned();
    let runners: Vec<_> = (0..2)
        .map(|_| {
            let mut cmds: Vec<Command> = (0..3)
                .map(|_| {
                    run_command(
                        &servers,
                        "nightly",
                        &["--ttl", "2s", "--wait", "20s"],
                        &["sh", "-c", script, "sh", &log_arg],
                    )
                })
                .collect();
            thread::spawn(move || cmds.iter_mut().map(run_to_end).collect::<Vec<Output>>())
        })
        .collect();
    for runner in runners {
        for out in runner.join().expect("a runner thread") {
            assert_eq!(code(out.status), Some(0), "{}", stderr(&out));
        }
    }
    let text = std::fs::read_to_string(&log).expect("the intervals");
    let mut intervals: Vec<(u128, u128)> = text
        .lines()
        .map(|line| {
            let (start, end) = line.split_once(' ').expect("start end");
            (start.parse().unwrap(), end.parse().unwrap())
        })
        .collect();
    assert_eq!(intervals.len(), 6, "{text}");
    intervals.sort();
    for pair in intervals.windows(2) {
        assert!(
            pair[0].1 <= pair[1].0,
            "two commands held the lock at once: {pair:?}\n{text}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn nonblock_and_wait_exit_with_the_conflict_code_and_a_signal_releases_the_lock() {
    let servers = cluster(3);
    let dir = scratch("nonblock");
    let holder = run_command(&servers, "backup", &["--ttl", "1s"], &["sleep", "30"])
        .spawn()
        .expect("start the holder");
    wait_for_key(&servers[0], "backup");

    let ran = dir.join("ran");
    let touch = ["touch", ran.to_str().unwrap()];
    let out = run_to_end(&mut run_command(
        &servers,
        "backup",
        &["--nonblock"],
        &touch,
    ));
    assert_eq!(code(out.status), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("not acquired"), "{}", stderr(&out));
    let started = Instant::now();
    let out = run_to_end(&mut run_command(
        &servers,
        "backup",
        &["--wait", "400ms", "-E", "42"],
        &touch,
    ));
    assert_eq!(code(out.status), Some(42), "{}", stderr(&out));
    assert!(
        started.elapsed() >= Duration::from_millis(400),
        "--wait 400ms gave up after {:?}",
        started.elapsed()
    );
    // While it waited it said why, once.
    let told = stderr(&out);
    assert_eq!(
        told.matches("waiting for lock backup for up to 400ms: held by another owner")
            .count(),
        1,
        "{told}"
    );
    assert!(!ran.exists(), "a command ran without the lock");

    // SIGTERM to the holder: passed on to `sleep`, which dies of it; then the lock is released.
    signal(holder.id(), "TERM");
    let out = wait_at_most(holder, Duration::from_secs(15));
    assert_eq!(code(out.status), Some(128 + 15), "{}", stderr(&out));
    for server in &servers {
        assert_eq!(server.get("backup"), None, "the lock was not released");
    }
    let out = run_to_end(&mut run_command(
        &servers,
        "backup",
        &["--nonblock"],
        &touch,
    ));
    assert_eq!(code(out.status), Some(0), "{}", stderr(&out));
    assert!(ran.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ctrl_c_passes_sigint_on_and_releases_the_lock() {
    let servers = cluster(3);
    let holder = run_command(&servers, "interactive", &["--ttl", "1s"], &["sleep", "30"])
        .spawn()
        .expect("start the holder");
    wait_for_key(&servers[0], "interactive");
    signal(holder.id(), "INT");
    let out = wait_at_most(holder, Duration::from_secs(15));
    // `sleep` dies of the SIGINT it was passed: 128 + 2, as a shell reports it.
    assert_eq!(code(out.status), Some(128 + 2), "{}", stderr(&out));
    assert!(stderr(&out).contains("got signal 2"), "{}", stderr(&out));
    for server in &servers {
        assert_eq!(
            server.get("interactive"),
            None,
            "Ctrl-C left the lock behind"
        );
    }
}

#[test]
fn a_lost_lock_stops_the_command_and_exits_with_the_lost_code() {
    let servers = cluster(3);
    let dir = scratch("lost");
    let pid_file = dir.join("pid");
    let script = "echo $$ > \"$1\"; exec sleep 30";
    let child = run_command(
        &servers,
        "report",
        &["--ttl", "1s", "--kill-after", "1s"],
        &["sh", "-c", script, "sh", pid_file.to_str().unwrap()],
    )
    .spawn()
    .expect("start run");
    wait_for_key(&servers[0], "report");
    // Two of three nodes stop for longer than the TTL: no extension can win a majority.
    servers[1].pause();
    servers[2].pause();
    let started = Instant::now();
    let out = wait_at_most(child, Duration::from_secs(15));
    let elapsed = started.elapsed();
    servers[1].resume();
    servers[2].resume();
    assert_eq!(code(out.status), Some(75), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("lock report lost"),
        "{}",
        stderr(&out)
    );
    // The message names the nodes that did not answer the extensions, and why.
    for server in &servers[1..] {
        let silent = format!("redis node {}: no answer within", server.url());
        assert!(stderr(&out).contains(&silent), "{}", stderr(&out));
    }
    assert!(
        !stderr(&out).contains(&servers[0].url()),
        "{}",
        stderr(&out)
    );
    assert!(
        elapsed < Duration::from_secs(5),
        "a 1 s lease was noticed lost only after {elapsed:?}"
    );
    // The command is gone: `kill -0` finds no such process.
    let pid = std::fs::read_to_string(&pid_file).expect("the command's pid");
    let alive = Command::new("kill")
        .args(["-0", pid.trim()])
        .stderr(Stdio::null())
        .status()
        .expect("run kill -0");
    assert!(!alive.success(), "the command outlived its lock");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two of three masters down (one killed, one stopped): `run` fails at once, naming both and
/// why, rather than waiting without a word for an outage to end.
#[test]
fn a_majority_down_fails_at_once_naming_the_nodes() {
    let mut servers = cluster(3);
    servers[1].kill();
    let _stopped = servers[2].paused();
    let started = Instant::now();
    let out = run_to_end(&mut run_command(
        &servers,
        "cron",
        &["--ttl", "3s"],
        &["echo", "ran"],
    ));
    let elapsed = started.elapsed();
    let told = stderr(&out);
    assert_eq!(code(out.status), Some(1), "{told}");
    assert!(
        elapsed < Duration::from_secs(1),
        "gave up after {elapsed:?}: {told}"
    );
    assert!(out.stdout.is_empty(), "the command ran without the lock");
    assert!(
        told.contains("lock cron not acquired: no quorum of nodes reachable"),
        "{told}"
    );
    let refused = format!("n2: redis node {}: unreachable", servers[1].url());
    let silent = format!("n3: redis node {}: no answer within", servers[2].url());
    assert!(told.contains(&refused) && told.contains(&silent), "{told}");
}

/// With `--wait`, `run` waits an outage out for that long, says so once, and with `--verbose`
/// tells every attempt.
#[test]
fn wait_keeps_trying_through_an_outage_and_verbose_tells_each_attempt() {
    let mut servers = cluster(3);
    servers[1].kill();
    servers[2].kill();
    let started = Instant::now();
    let out = run_to_end(&mut run_command(
        &servers,
        "cron",
        &["--ttl", "3s", "--wait", "600ms", "--verbose"],
        &["echo", "ran"],
    ));
    let told = stderr(&out);
    assert_eq!(code(out.status), Some(1), "{told}");
    assert!(started.elapsed() >= Duration::from_millis(600), "{told}");
    assert_eq!(
        told.matches("waiting for lock cron for up to 600ms: fewer than a majority")
            .count(),
        1,
        "{told}"
    );
    for attempt in ["attempt 1: lock cron not acquired", "attempt 2:"] {
        assert!(told.contains(attempt), "{told}");
    }
    assert!(
        told.contains("lock cron not acquired within 600ms: no quorum"),
        "{told}"
    );
    // The outage ends within --wait: the next attempt wins, and says so.
    servers[1].restart();
    let out = run_to_end(&mut run_command(
        &servers,
        "cron",
        &["--ttl", "3s", "--wait", "5s", "-v"],
        &["echo", "ran"],
    ));
    assert_eq!(code(out.status), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("lock cron acquired"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn one_node_of_three_stopped_past_the_ttl_costs_nothing() {
    let servers = cluster(3);
    let child = run_command(
        &servers,
        "majority",
        &["--ttl", "1s"],
        &["sh", "-c", "sleep 2; exit 3"],
    )
    .spawn()
    .expect("start run");
    wait_for_key(&servers[0], "majority");
    servers[2].pause();
    let out = wait_at_most(child, Duration::from_secs(15));
    servers[2].resume();
    // The other two still extend: the command ends by itself and its code passes through.
    assert_eq!(code(out.status), Some(3), "{}", stderr(&out));
}

#[test]
fn the_commands_exit_code_and_environment_pass_through() {
    let servers = cluster(3);
    let out = run_to_end(&mut run_command(
        &servers,
        "x",
        &[],
        &["sh", "-c", "exit 7"],
    ));
    assert_eq!(code(out.status), Some(7), "{}", stderr(&out));
    let out = run_to_end(&mut run_command(
        &servers,
        "x",
        &[],
        &["sh", "-c", "kill -KILL $$"],
    ));
    assert_eq!(code(out.status), Some(128 + 9), "{}", stderr(&out));
    let out = run_to_end(&mut run_command(
        &servers,
        "x",
        &["--ttl", "5s"],
        &[
            "sh",
            "-c",
            "echo $REDLOCK_NAME $REDLOCK_TTL_MS $REDLOCK_DEADLINE_MS $REDLOCK_FENCING_TOKEN",
        ],
    ));
    assert_eq!(code(out.status), Some(0), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let words: Vec<&str> = stdout.split_whitespace().collect();
    assert_eq!(words[..2], ["x", "5000"], "{stdout}");
    // Two runs before this one took the lock: the token grows with every acquisition.
    let token: u64 = words[3].parse().expect("a fencing token");
    let again = run_to_end(&mut run_command(
        &servers,
        "x",
        &[],
        &["sh", "-c", "echo $REDLOCK_FENCING_TOKEN"],
    ));
    let next: u64 = String::from_utf8_lossy(&again.stdout)
        .trim()
        .parse()
        .expect("a fencing token");
    assert!(next > token && token >= 3, "tokens {token} then {next}");
    let deadline: u128 = words[2].parse().expect("a Unix time in ms");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    assert!(
        deadline > now && deadline <= now + 5_000,
        "deadline {deadline}, now {now}"
    );
    let out = run_to_end(&mut run_command(&servers, "x", &[], &["/no/such/command"]));
    assert_eq!(code(out.status), Some(127), "{}", stderr(&out));
    // The lock was released after each: nothing is left on the nodes.
    assert_eq!(servers[0].get("x"), None);
}

#[test]
fn nodes_come_from_a_config_file_or_the_environment() {
    let servers = cluster(3);
    let dir = scratch("config");
    let config = dir.join("redlock.toml");
    let list = urls(&servers)
        .iter()
        .map(|u| format!("{u:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    std::fs::write(&config, format!("nodes = [{list}]\n")).unwrap();
    let out = run_to_end(
        Command::new(BIN)
            .args(["run", "--config", config.to_str().unwrap(), "--name", "c"])
            .args(["--", "sh", "-c", "exit 5"]),
    );
    assert_eq!(code(out.status), Some(5), "{}", stderr(&out));
    let out = run_to_end(
        Command::new(BIN)
            .env("REDLOCK_NODES", urls(&servers).join(","))
            .args(["run", "--name", "e", "--", "sh", "-c", "exit 6"]),
    );
    assert_eq!(code(out.status), Some(6), "{}", stderr(&out));

    std::fs::write(&config, "nodes = [\"redis://127.0.0.1:1\"]\nnode = 1\n").unwrap();
    let out = run_to_end(
        Command::new(BIN)
            .args(["run", "--config", config.to_str().unwrap(), "--name", "c"])
            .args(["--", "true"]),
    );
    assert_eq!(code(out.status), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("unknown field `node`"),
        "{}",
        stderr(&out)
    );
    let out = run_to_end(
        Command::new(BIN)
            .env_remove("REDLOCK_NODES")
            .args(["run", "--name", "e", "--", "true"]),
    );
    assert_eq!(code(out.status), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("no nodes"), "{}", stderr(&out));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn help_documents_the_exit_codes_and_bad_input_exits_2() {
    let out = Command::new(BIN)
        .args(["run", "--help"])
        .output()
        .expect("run --help");
    // Help is wrapped to the terminal's width, so a phrase may span lines.
    let help = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(code(out.status), Some(0));
    for needle in [
        "Exit codes:",
        "75 (--lost-exit-code)",
        "1 (-E, --conflict-exit-code)",
        "REDLOCK_DEADLINE_MS",
        "REDLOCK_FENCING_TOKEN",
    ] {
        assert!(help.contains(needle), "--help lacks {needle}:\n{help}");
    }
    for (args, message) in [
        (
            vec!["--nodes", "nota://url", "--name", "x", "--", "true"],
            "nota://url",
        ),
        (
            vec![
                "--nodes",
                "redis://127.0.0.1:1",
                "--name",
                "x",
                "--ttl",
                "30",
                "--",
                "true",
            ],
            "no unit",
        ),
        (
            vec!["--nodes", "redis://127.0.0.1:1", "--name", "x"],
            "COMMAND",
        ),
        (
            vec![
                "--nodes",
                "redis://127.0.0.1:1",
                "--name",
                "x",
                "--nonblock",
                "--wait",
                "1s",
                "--",
                "true",
            ],
            "cannot be used with",
        ),
    ] {
        let out = Command::new(BIN)
            .arg("run")
            .args(&args)
            .output()
            .expect("run");
        assert_eq!(code(out.status), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    }
}
