//! `advise` as an engineer runs it, timed as a whole process: the README's deployment and a
//! deployment with every fault at cloud sizes, each beside its `--verbose` run in the same run.
//! `--verbose` leaves every key of each figure's formula free in its symbolic exploration,
//! which is what every run did before a figure was read off an exploration with only its own
//! key free: the ratio is the default's gain over that baseline.
//!
//! `cargo bench --bench advise`. Seconds are wall time; the peak is the child's resident
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
        "deployment", "seconds", "peak MB", "--verbose", "peak MB", "ratio"
    );
    for (label, args) in DEPLOYMENTS {
        let default = measure(exe, args, false);
        let verbose = measure(exe, args, true);
        println!(
            "{label:<20} {:>9.2} {:>9.0} | {:>10.2} {:>9.0} {:>6.1}",
            default.0,
            megabytes(default.1),
            verbose.0,
            megabytes(verbose.1),
            verbose.0 / default.0.max(0.001)
        );
    }
}

/// Wall seconds and peak resident bytes of one `advise` run.
fn measure(exe: &str, args: &[&str], verbose: bool) -> (f64, u64) {
    let started = Instant::now();
    let mut child = Command::new(exe)
        .arg("advise")
        .args(args)
        .args(verbose.then_some("--verbose"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start advise");
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for advise") {
            break status;
        }
        peak = peak.max(high_water_mark(&status_file));
        sleep(Duration::from_millis(10));
    };
    assert!(status.success(), "advise {args:?} failed: {status}");
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
