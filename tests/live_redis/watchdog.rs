//! A live test that hangs fails by name instead of holding CI until its time limit.
//!
//! A live test blocks on sockets, on servers it stopped with SIGSTOP, and on the harness's
//! machine lock; a bug in any of them (or in the client) shows as a process at 0 % CPU that
//! never ends. Every test that starts a server or waits to run alone is watched from then
//! until its servers are gone: one that is still at it after [`HANG_LIMIT`] is named on
//! stderr, every server the binary started is resumed and killed (a stopped server would
//! outlive the test binary), and the binary exits with a failure.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::Command;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

/// Far past the slowest live test on a loaded two-core machine (about 30 s), far below CI's
/// limit.
pub const HANG_LIMIT: Duration = Duration::from_secs(300);

/// The watched tests, by thread name (libtest names a test's thread after the test).
#[derive(Default)]
struct Watched {
    /// Per test: when it began to be watched, and how many of its servers live.
    tests: BTreeMap<String, (Instant, usize)>,
    /// The process ids of every server running now.
    pids: Vec<u32>,
}

fn watched() -> std::sync::MutexGuard<'static, Watched> {
    static WATCHED: Mutex<Watched> = Mutex::new(Watched {
        tests: BTreeMap::new(),
        pids: Vec::new(),
    });
    static WATCHDOG: OnceLock<()> = OnceLock::new();
    WATCHDOG.get_or_init(|| {
        thread::Builder::new()
            .name("live-test watchdog".to_owned())
            .spawn(watch)
            .expect("start the live tests' watchdog");
    });
    WATCHED.lock().unwrap_or_else(PoisonError::into_inner)
}

fn this_test() -> String {
    thread::current().name().unwrap_or("unnamed").to_owned()
}

/// The current test began something that may block: watch it (from its first such step).
pub fn begin() {
    watched()
        .tests
        .entry(this_test())
        .or_insert_with(|| (Instant::now(), 0));
}

/// The current test no longer waits for anything of its own (its servers may still run).
pub fn end() {
    let mut w = watched();
    let name = this_test();
    if w.tests.get(&name).is_some_and(|&(_, servers)| servers == 0) {
        w.tests.remove(&name);
    }
}

/// The current test's server `pid` is running.
pub fn started(pid: u32) {
    let mut w = watched();
    w.tests
        .entry(this_test())
        .or_insert_with(|| (Instant::now(), 0))
        .1 += 1;
    w.pids.push(pid);
}

/// Server `pid` is gone; a test with no server left is no longer watched.
pub fn stopped(pid: u32) {
    let mut w = watched();
    w.pids.retain(|&p| p != pid);
    let name = this_test();
    if let Some((_, servers)) = w.tests.get_mut(&name) {
        *servers = servers.saturating_sub(1);
        if *servers == 0 {
            w.tests.remove(&name);
        }
    }
}

/// The tests watched for longer than `limit` at `now`, oldest first.
fn overdue(
    tests: &BTreeMap<String, (Instant, usize)>,
    now: Instant,
    limit: Duration,
) -> Vec<String> {
    let mut late: Vec<(&String, Instant)> = tests
        .iter()
        .filter(|(_, (since, _))| now.duration_since(*since) > limit)
        .map(|(name, (since, _))| (name, *since))
        .collect();
    late.sort_by_key(|&(_, since)| since);
    late.into_iter().map(|(name, _)| name.clone()).collect()
}

fn watch() {
    loop {
        thread::sleep(Duration::from_secs(1));
        let w = watched();
        let late = overdue(&w.tests, Instant::now(), HANG_LIMIT);
        if late.is_empty() {
            continue;
        }
        for pid in &w.pids {
            for signal in ["-CONT", "-KILL"] {
                let _ = Command::new("kill")
                    .arg(signal)
                    .arg(pid.to_string())
                    .status();
            }
        }
        // Straight to the stream: `eprintln!` from a thread a test started is captured with
        // the test's output, which is lost when the binary exits.
        let _ = writeln!(
            std::io::stderr(),
            "live test(s) still running after {} s, taken to hang: {}; \
             every redis-server stopped, the test binary exits",
            HANG_LIMIT.as_secs(),
            late.join(", ")
        );
        std::process::exit(1);
    }
}

#[test]
fn a_test_is_overdue_only_past_the_limit() {
    let start = Instant::now();
    let tests = BTreeMap::from([
        ("young".to_owned(), (start + Duration::from_secs(250), 1)),
        ("old".to_owned(), (start, 3)),
        ("older".to_owned(), (start, 0)),
    ]);
    let at = start + Duration::from_secs(301);
    assert_eq!(overdue(&tests, at, HANG_LIMIT), ["old", "older"]);
    assert!(overdue(&tests, start + HANG_LIMIT, HANG_LIMIT).is_empty());
}
