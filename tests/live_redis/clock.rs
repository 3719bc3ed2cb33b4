//! Node clock jumps on real masters, through the clock shim (`src/live.rs`): Redis expires a
//! key on its own wall clock, so a master whose clock jumps forward drops the key early.
//!
//! Kleppmann's jump, scripted: the first holder still believes while a second one acquires.
//! Under a workload (clients taking and holding the lock to the end of their belief), jumps
//! past the drift show overlapping leases, and jumps within the drift, one node at a time,
//! show none; the overlap is measured from each client's believed validity on real time
//! (the instant its `lock` returned plus what it reported remaining).
//!
//! The same workload with rslock, the peer client in the dev-dependencies, in place of this
//! crate's shows that the controversy is about Redlock, not about one client: jumps past its
//! drift (1 % of the TTL + 2 ms) break it the same way, and jumps well within it do not.

use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use redlock_lab::proto::{Config, DriftPolicy, RetryPolicy};
use redlock_lab::time::Millis;

use crate::harness::{RedisServer, ServerOptions, shifted_cluster, urls};
use crate::{client, config};

#[test]
fn the_shim_moves_a_real_masters_clock_and_its_key_expires_early() {
    let mut server = RedisServer::start_with(ServerOptions {
        shifted_clock: true,
        ..ServerOptions::default()
    });
    let mut con = server.connection();
    let set = |con: &mut redis::Connection, value: &str| -> Option<String> {
        redis::cmd("SET")
            .arg("k")
            .arg(value)
            .arg("NX")
            .arg("PX")
            .arg(10_000)
            .query(con)
            .unwrap()
    };
    assert_eq!(set(&mut con, "v").as_deref(), Some("OK"));
    assert_eq!(set(&mut con, "w"), None, "the key lives for 10 s");
    server.set_clock_offset_ms(20_000);
    assert_eq!(server.get("k"), None, "20 s later on the node's clock");
    assert_eq!(set(&mut con, "w").as_deref(), Some("OK"));
    // A backward jump keeps the new key: it now lives longer than its 10 s on the true clock.
    server.set_clock_offset_ms(0);
    let ttl_ms: i64 = redis::cmd("PTTL").arg("k").query(&mut con).unwrap();
    assert!(
        ttl_ms > 19_000,
        "{ttl_ms} ms left after the clock went back 20 s"
    );
}

/// The test configuration with a fixed drift allowance of `drift_ms` and no retries.
fn drift_config(n: usize, drift_ms: u64) -> Config {
    let mut config = config(n);
    config.drift = DriftPolicy::fixed(Millis(drift_ms));
    config.retry = RetryPolicy {
        attempts: 1,
        delay_min: Millis(0),
        delay_max: Millis(0),
    };
    config
}

#[test]
fn a_majority_of_clocks_jumping_past_the_drift_lets_a_second_client_in_while_the_first_believes() {
    let mut servers = shifted_cluster(3);
    let urls = urls(&servers);
    let mut c1 = client(&urls, drift_config(3, 30));
    let mut c2 = client(&urls, drift_config(3, 30));
    let ttl = Millis(2_000);
    let guard1 = c1.lock("jump", ttl).unwrap().expect("free");
    let believed_until = Instant::now() + Duration::from_millis(guard1.remaining().as_u64());
    assert!(
        c2.lock("jump", ttl).unwrap().is_none(),
        "c1 holds every key"
    );

    // Two of three masters' clocks jump a whole TTL and more (NTP stepping, an operator).
    servers[0].set_clock_offset_ms(5_000);
    servers[1].set_clock_offset_ms(5_000);
    let guard2 = c2
        .lock("jump", ttl)
        .unwrap()
        .expect("c1's keys on n1 and n2 expired early, so c2 wins a majority");
    let acquired = Instant::now();
    assert!(guard1.is_valid(), "c1 still believes it holds the lock");
    let overlap = believed_until.saturating_duration_since(acquired);
    assert!(
        overlap > Duration::from_millis(1_000),
        "both believed for only {overlap:?}"
    );
    drop(guard2);
    drop(guard1);
}

/// One lease as its holder believed it, on real time.
#[derive(Clone, Copy, Debug)]
struct Lease {
    client: usize,
    from: Instant,
    until: Instant,
}

const CLIENTS: usize = 3;
const JUMP_EVERY: Duration = Duration::from_millis(60);
const RUN: Duration = Duration::from_millis(2_000);

/// One client's loop under the jumps: its id, the masters, where its leases go, and when to
/// stop.
type Holder = fn(usize, &[String], &Mutex<Vec<Lease>>, Instant);

/// Three clients (each running `holder`) take the lock with a TTL of 300 ms and hold it until
/// 10 ms before their belief ends, for two seconds, while every 60 ms one of five masters, in
/// turn, jumps `jump_ms` forward. Returns every lease and how many pairs overlapped.
fn leases_under_jumps(jump_ms: i64, holder: Holder) -> (Vec<Lease>, usize) {
    let mut servers = shifted_cluster(5);
    let urls = urls(&servers);
    let leases = Mutex::new(Vec::new());
    let start = Instant::now();
    thread::scope(|scope| {
        for id in 0..CLIENTS {
            let (urls, leases) = (&urls, &leases);
            scope.spawn(move || holder(id, urls, leases, start + RUN));
        }
        let mut offsets = [0_i64; 5];
        let mut next = 0;
        while start.elapsed() < RUN {
            thread::sleep(JUMP_EVERY);
            offsets[next] += jump_ms;
            servers[next].set_clock_offset_ms(offsets[next]);
            next = (next + 1) % servers.len();
        }
    });
    let leases = leases.into_inner().unwrap();
    let overlaps = leases
        .iter()
        .enumerate()
        .flat_map(|(i, a)| leases[i + 1..].iter().map(move |b| (a, b)))
        .filter(|(a, b)| a.client != b.client && a.from < b.until && b.from < a.until)
        .count();
    (leases, overlaps)
}

/// This crate's client, with a drift of 30 ms: lock, hold to 10 ms before the believed end,
/// unlock, until `end`.
fn hold_until_the_end(id: usize, urls: &[String], leases: &Mutex<Vec<Lease>>, end: Instant) {
    let mut redlock = client(urls, drift_config(urls.len(), 30));
    while Instant::now() < end {
        let Some(guard) = redlock.lock("jumping", Millis(300)).unwrap() else {
            thread::sleep(Duration::from_millis(1));
            continue;
        };
        let from = Instant::now();
        hold(
            id,
            leases,
            from,
            Duration::from_millis(guard.remaining().as_u64()),
        );
        guard.unlock();
    }
}

/// Holds a lease taken at `from` for `validity` until 10 ms before its end, and records it.
fn hold(id: usize, leases: &Mutex<Vec<Lease>>, from: Instant, validity: Duration) {
    let believed = from + validity;
    thread::sleep(believed.saturating_duration_since(Instant::now() + Duration::from_millis(10)));
    let until = Instant::now().min(believed);
    leases.lock().unwrap().push(Lease {
        client: id,
        from,
        until,
    });
}

/// rslock's client, as its users drive it from blocking code (a current-thread runtime), with
/// one attempt per `lock` as this crate's test client makes: lock, hold, release, until `end`.
fn rslock_holds_until_the_end(
    id: usize,
    urls: &[String],
    leases: &Mutex<Vec<Lease>>,
    end: Instant,
) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut manager = rslock::LockManager::new(urls.to_vec());
    manager.set_retry(1, Duration::from_millis(1));
    while Instant::now() < end {
        let Ok(lock) = runtime.block_on(manager.lock("jumping", Duration::from_millis(300))) else {
            thread::sleep(Duration::from_millis(1));
            continue;
        };
        let from = Instant::now();
        hold(
            id,
            leases,
            from,
            Duration::from_millis(lock.validity_time as u64),
        );
        runtime.block_on(lock.release());
    }
}

/// Leases of `holder` (`who`) under jumps of `jump_ms` overlap at least twice.
fn assert_overlaps(jump_ms: i64, holder: Holder, who: &str) {
    let (leases, overlaps) = leases_under_jumps(jump_ms, holder);
    assert!(
        overlaps >= 2,
        "{overlaps} overlapping pairs among {} {who} leases",
        leases.len()
    );
}

/// Leases of `holder` (`who`) under jumps of `jump_ms` never overlap, and there are enough
/// of them to say so.
fn assert_no_overlap(jump_ms: i64, holder: Holder, who: &str) {
    let (leases, overlaps) = leases_under_jumps(jump_ms, holder);
    assert!(
        leases.len() >= 4,
        "only {} {who} leases in two seconds",
        leases.len()
    );
    assert_eq!(overlaps, 0, "{leases:?}");
}

#[test]
fn jumps_past_the_drift_show_overlapping_leases() {
    // Each jump is two TTLs: the jumping master's key is gone at once.
    assert_overlaps(600, hold_until_the_end, "this client's");
}

#[test]
fn jumps_within_the_drift_one_at_a_time_show_none() {
    // 10 ms, a third of the 30 ms drift: a key lives at least as long as its holder believes.
    assert_no_overlap(10, hold_until_the_end, "this client's");
}

#[test]
fn rslock_breaks_the_same_way_under_jumps_past_its_drift() {
    assert_overlaps(600, rslock_holds_until_the_end, "rslock");
}

#[test]
fn rslock_shows_none_under_jumps_well_within_its_drift() {
    // 1 ms, a fifth of rslock's 5 ms drift for a TTL of 300 ms.
    assert_no_overlap(1, rslock_holds_until_the_end, "rslock");
}
