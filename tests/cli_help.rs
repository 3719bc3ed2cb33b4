//! Every command helps a newcomer: files named when they are not the catalog's, duplicate
//! names warned about, "did you mean" for a misspelled scenario, the real port of
//! `explore --port 0`, tables within 100 columns, plurals, no colour into a pipe, completions
//! and a man page from the clap definition, and a located error for a file that is not UTF-8.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

mod common;

use common::{BIN, redlock_lab_in, scratch_dir, text};

fn catalog_file(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("models/{name}.toml")),
    )
    .expect("a catalog file")
}

#[test]
fn check_of_a_folder_names_each_file_and_warns_on_duplicate_names() {
    let dir = scratch_dir("folder");
    let folder = dir.join("mine");
    std::fs::create_dir_all(&folder).unwrap();
    let baseline = catalog_file("single-node-baseline");
    std::fs::write(folder.join("a.toml"), &baseline).unwrap();
    std::fs::write(folder.join("b.toml"), &baseline).unwrap();
    let out = redlock_lab_in(&["check", "mine"], &dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("from mine/a.toml"), "{stdout}");
    assert!(stdout.contains("from mine/b.toml"), "{stdout}");
    assert!(
        !stdout.contains('\x1b'),
        "no colour into a pipe: {stdout:?}"
    );
    let stderr = text(&out.stderr);
    assert!(
        stderr
            .contains("warning: mine/a.toml and mine/b.toml are both called single-node-baseline"),
        "{stderr}"
    );

    // The built-in catalog's scenarios are named, not located.
    let catalog = redlock_lab_in(&["check", "single-node-baseline"], &dir);
    let stdout = text(&catalog.stdout);
    assert!(!stdout.contains("from "), "{stdout}");
    assert!(
        stdout.contains("1 scenario, 3 properties (0 violated)"),
        "{stdout}"
    );
}

#[test]
fn a_single_mismatch_is_counted_in_the_singular() {
    let dir = scratch_dir("mismatch");
    let baseline = catalog_file("single-node-baseline").replace(
        "\"mutual exclusion\" = \"holds\"",
        "\"mutual exclusion\" = \"violated\"",
    );
    std::fs::write(dir.join("wrong.toml"), baseline).unwrap();
    let out = redlock_lab_in(&["check", "wrong.toml"], &dir);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("1 verdict differs from [expect]: single-node-baseline: mutual exclusion"),
        "{stdout}"
    );
}

#[test]
fn a_misspelled_scenario_gets_did_you_mean() {
    let out = redlock_lab_in(
        &["explain", "node-clock-jump-forwrd-past-drift"],
        &scratch_dir("typo"),
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("did you mean node-clock-jump-forward-past-drift?"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn every_line_of_list_and_check_fits_100_columns() {
    let dir = scratch_dir("width");
    let list = redlock_lab_in(&["list"], &dir);
    assert_eq!(list.status.code(), Some(0));
    let scenarios = [
        "crash-restart-client-guard-one-tick-short",
        "gc-pause-after-acquisition",
        // The longest name, with four verdicts to say.
        "redlock-replicated-node-failover-promotion-delay",
        "long-connection-timeout",
    ];
    let rows = redlock_lab_in(&[&["check"], &scenarios[..]].concat(), &dir);
    let check = redlock_lab_in(&[&["check", "--verbose"], &scenarios[..]].concat(), &dir);
    // The check table, not the stories after it (their lines are events, not columns).
    let table: String = text(&check.stdout).split("\n\n").next().unwrap().to_owned();
    let rows = text(&rows.stdout);
    assert!(rows.lines().count() < 10, "a row per scenario: {rows}");
    for line in text(&list.stdout)
        .lines()
        .chain(table.lines())
        .chain(rows.lines())
    {
        assert!(
            line.chars().count() <= 100,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    assert!(text(&list.stdout).contains("expects lock acquired: holds"));
}

#[test]
fn list_help_says_what_it_accepts() {
    let out = redlock_lab_in(&["list", "--help"], &scratch_dir("list-help"));
    assert_eq!(out.status.code(), Some(0));
    // Help is wrapped to the terminal's width, so a phrase may span lines.
    let stdout = text(&out.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for accepted in [
        "scenario files",
        "folders",
        "built-in catalog",
        "alias",
        "prefix",
    ] {
        assert!(stdout.contains(accepted), "{accepted}: {stdout}");
    }
}

#[test]
fn completions_and_the_man_page_come_from_the_clap_definition() {
    let dir = scratch_dir("completions");
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = redlock_lab_in(&["completions", shell], &dir);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let script = text(&out.stdout);
        assert!(script.contains("redlock-lab"), "{shell}: {script}");
        assert!(
            script.contains("simulate"),
            "{shell} completes the commands"
        );
    }
    let bad = redlock_lab_in(&["completions", "cmd.exe"], &dir);
    assert_eq!(bad.status.code(), Some(2));

    let man = redlock_lab_in(&["man"], &dir);
    assert_eq!(man.status.code(), Some(0));
    let page = text(&man.stdout);
    assert!(page.contains(".TH redlock-lab 1"), "{page}");
    // A section per command, with its flags.
    assert!(page.contains(".SH \"REDLOCK\\-LAB SIMULATE\""), "{page}");
    assert!(page.contains("\\fB\\-\\-threads\\fR"), "{page}");
    assert!(
        !page.contains("redlock\\-lab\\-check(1)"),
        "no page of its own"
    );
}

#[test]
fn a_model_file_that_is_not_utf8_gets_a_line_and_column() {
    let dir = scratch_dir("utf8");
    std::fs::write(
        dir.join("latin1.toml"),
        b"name = \"x\"\ntitle = \"caf\xe9\"\n",
    )
    .unwrap();
    let out = redlock_lab_in(&["check", "latin1.toml"], &dir);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("latin1.toml:2:13: not UTF-8 text: invalid byte 0xe9"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// Kills the child on drop, also when an assertion fails.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn explore_on_port_0_prints_the_port_it_listens_on() {
    let dir = scratch_dir("port0");
    let mut child = Killed(
        Command::new(BIN)
            .args(["explore", "single-node-baseline", "--port", "0"])
            .current_dir(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start explore"),
    );
    let mut line = String::new();
    BufReader::new(child.0.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port: u16 = line
        .split("http://127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|port| port.parse().ok())
        .unwrap_or_else(|| panic!("no port in {line:?}"));
    assert_ne!(port, 0, "{line}");
    // The printed port answers (the server may need a moment to bind after the message).
    let mut answer = String::new();
    for _ in 0..100 {
        if let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) {
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            stream
                .write_all(b"GET /.status HTTP/1.0\r\nConnection: close\r\n\r\n")
                .unwrap();
            stream.read_to_string(&mut answer).unwrap();
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(answer.contains(" 200 "), "{line}: {answer}");
}

/// `--help` is wrapped to the terminal's width (here `COLUMNS`, which clap reads when stdout
/// is no terminal), for the program and each command: no description runs off the right edge.
#[test]
fn help_is_wrapped_to_the_terminal_width() {
    let dir = scratch_dir("help-width");
    let mut commands = vec![
        "", "check", "list", "trace", "explain", "explore", "book", "simulate", "sweep", "advise",
    ];
    // `run` and `replay` are Unix's.
    if cfg!(unix) {
        commands.extend(["run", "replay"]);
    }
    for command in commands {
        let args: Vec<&str> = [command, "--help"]
            .into_iter()
            .filter(|a| !a.is_empty())
            .collect();
        let out = Command::new(BIN)
            .args(&args)
            .current_dir(&dir)
            .env("COLUMNS", "60")
            .output()
            .expect("run redlock-lab");
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let help = text(&out.stdout);
        assert!(help.lines().count() > 3, "{args:?}: {help}");
        // The usage line is clap's one unwrapped line.
        for line in help.lines().filter(|l| !l.starts_with("Usage:")) {
            assert!(line.chars().count() <= 60, "{args:?}: {line}");
        }
    }
}
