//! The long commands as a user runs them, each timed as a whole process beside its baseline in
//! the same run:
//!
//! - `advise` on the README's deployment and on a deployment with every fault at cloud sizes,
//!   each beside its `--verbose` run. `--verbose` leaves every key of each figure's formula
//!   free in its symbolic exploration, which is what every run did before a figure was read
//!   off an exploration with only its own key free: the ratio is the default's gain over that
//!   baseline.
//! - `book` of the whole catalog, its pages built on every core beside one page at a time
//!   (`--jobs 1`, what it did before).
//! - `simulate` of one of the simulator's own worlds, its runs on every core beside one run at
//!   a time (`--jobs 1`, what it did before).
//! - `sweep` of the safety page's promotion-delay boundary, its values checked at once beside
//!   one value at a time (`--jobs 1`, what it did before).
//!
//! `cargo bench --bench commands`. Seconds are wall time; the peak is the child's resident
//! high-water mark (`VmHWM`), read every 10 ms while it runs (Linux; elsewhere 0).

use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// Each deployment: its label and its `advise` arguments.
const DEPLOYMENTS: [(&str, &[&str]); 2] = [
    (
        "README example",
        &[
            "--ttl=10s",
            "--clock-error=50ms",
            "--max-jump=0",
            "--max-pause=2s",
            "--network-delay=100ms",
            "--restart-persistence=none",
        ],
    ),
    (
        "cloud, every fault",
        &[
            "--ttl=30s",
            "--clock-error=200ms",
            "--max-jump=1s",
            "--max-pause=5s",
            "--network-delay=500ms",
            "--restart-persistence=fsync-periodic",
        ],
    ),
];

fn main() {
    let exe = env!("CARGO_BIN_EXE_redlock-lab");
    println!(
        "{:<20} {:>9} {:>9} | {:>10} {:>9} {:>6}",
        "advise", "seconds", "peak MB", "--verbose", "peak MB", "ratio"
    );
    for (label, args) in DEPLOYMENTS {
        let advise = |verbose: bool| {
            let mut all = vec!["advise"];
            all.extend(args);
            all.extend(verbose.then_some("--verbose"));
            measure(exe, &all)
        };
        row(label, advise(false), advise(true));
    }
    println!();
    println!(
        "{:<20} {:>9} {:>9} | {:>10} {:>9} {:>6}",
        "book", "seconds", "peak MB", "--jobs 1", "peak MB", "ratio"
    );
    let out = std::env::temp_dir().join(format!("redlock-lab-bench-book-{}", std::process::id()));
    let out = out.to_str().expect("a UTF-8 temporary folder");
    let book = |jobs: &str| measure(exe, &["book", "--out", out, "--jobs", jobs]);
    let cores = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .to_string();
    row("the catalog", book(&cores), book("1"));
    std::fs::remove_dir_all(out).ok();
    println!();
    println!(
        "{:<20} {:>9} {:>9} | {:>10} {:>9} {:>6}",
        "simulate", "seconds", "peak MB", "--jobs 1", "peak MB", "ratio"
    );
    let simulate = |jobs: &str| {
        let args = ["--seed", "1", "--runs", "2000", "--jobs", jobs];
        measure(exe, &[&["simulate", "antirez-safe"], &args[..]].concat())
    };
    row("antirez-safe, 2000", simulate(&cores), simulate("1"));
    println!();
    println!(
        "{:<20} {:>9} {:>9} | {:>10} {:>9} {:>6}",
        "sweep", "seconds", "peak MB", "--jobs 1", "peak MB", "ratio"
    );
    let sweep = |jobs: &str| {
        let vary = "failover.promotion_delay_ticks=0..3";
        let args = ["redlock-cluster-shards-promotion-delay", "--vary", vary];
        measure(exe, &[&["sweep"], &args[..], &["--jobs", jobs]].concat())
    };
    row("promotion delay 0-3", sweep(&cores), sweep("1"));
}

/// One row: the command's seconds and peak beside its baseline's, and the ratio of seconds.
fn row(label: &str, (seconds, peak): (f64, u64), (baseline, baseline_peak): (f64, u64)) {
    println!(
        "{label:<20} {seconds:>9.2} {:>9.0} | {baseline:>10.2} {:>9.0} {:>6.1}",
        megabytes(peak),
        megabytes(baseline_peak),
        baseline / seconds.max(0.001)
    );
}

/// Wall seconds and peak resident bytes of one run of the binary with `args`.
fn measure(exe: &str, args: &[&str]) -> (f64, u64) {
    let started = Instant::now();
    let mut child = Command::new(exe)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start redlock-lab");
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for redlock-lab") {
            break status;
        }
        peak = peak.max(high_water_mark(&status_file));
        sleep(Duration::from_millis(10));
    };
    assert!(status.success(), "redlock-lab {args:?} failed: {status}");
    (started.elapsed().as_secs_f64(), peak)
}

/// `VmHWM` of a running process, in bytes (0 when it cannot be read).
fn high_water_mark(status_file: &str) -> u64 {
    let status = std::fs::read_to_string(status_file).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn megabytes(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 20) as f64
}
