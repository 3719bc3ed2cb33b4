//! Fencing on real servers: a holder paused past its validity between acquiring and writing.
//!
//! With tokens from the lock's own round (`Fencing::WriteBack`) the stale write is refused;
//! with a token taken from a separate counter after acquiring, a pause before the `INCR` lets
//! the stale write win. Lock nodes that restart without persistence can hand out a used token
//! again, and `appendfsync always` prevents it. Under contention a store that fences reads and
//! writes loses no update, and the same workload with unfenced reads does.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::Duration;

use rand_chacha::ChaCha20Rng;
use redlock_lab::driver::redis::NodeOptions;
use redlock_lab::driver::redis::fenced::{FencedStore, FencingCounter, FencingToken, Read, Write};
use redlock_lab::driver::{Guard, MonotonicClock, RedisNode, RedisRedlock};
use redlock_lab::proto::{Config, Fencing};
use redlock_lab::time::Millis;

use crate::harness::{RedisServer, ServerOptions, cluster, urls};
use crate::{client, config};

/// The test configuration with fencing tokens from the lock's round.
fn fenced_config(n: usize) -> Config {
    let mut config = config(n);
    config.fencing = Fencing::WriteBack;
    config
}

fn store(server: &RedisServer) -> FencedStore {
    FencedStore::open(&server.url(), NodeOptions::default()).unwrap()
}

/// A guard of the Redis client.
type RedisGuard<'a> = Guard<'a, RedisNode, MonotonicClock, ChaCha20Rng>;

/// The token of a guard from a client with fencing on.
fn token_of(guard: &RedisGuard<'_>) -> FencingToken {
    FencingToken(guard.fencing_token().expect("fencing is on"))
}

#[test]
fn a_holder_paused_past_its_lease_is_refused_when_tokens_come_from_the_lock_quorum() {
    let servers = cluster(3);
    let storage = RedisServer::start();
    let urls = urls(&servers);
    let mut a = client(&urls, fenced_config(3));
    let mut b = client(&urls, fenced_config(3));
    let mut store_a = store(&storage);
    let mut store_b = store(&storage);
    let ttl = Millis(400);

    // A acquires, reads, and then stops (a GC pause) past its TTL before writing.
    let guard_a = a.lock("file", ttl).unwrap().expect("free");
    let token_a = token_of(&guard_a);
    assert_eq!(store_a.read("file", token_a).unwrap(), Read::Value(None));
    thread::sleep(Duration::from_millis(600));
    assert!(
        !guard_a.is_valid(),
        "A's lease is over, but A does not look"
    );

    // B acquires with a larger token from the same kind of round, and does its whole cycle.
    let guard_b = b.lock("file", ttl).unwrap().expect("A's keys expired");
    let token_b = token_of(&guard_b);
    assert!(token_b > token_a, "{token_b:?} must exceed {token_a:?}");
    assert_eq!(store_b.read("file", token_b).unwrap(), Read::Value(None));
    assert_eq!(store_b.write("file", "B", token_b).unwrap(), Write::Applied);

    // A wakes and writes what it computed before the pause: refused, and so is a new read.
    assert_eq!(
        store_a.write("file", "A", token_a).unwrap(),
        Write::Rejected { newest: token_b }
    );
    assert_eq!(
        store_a.read("file", token_a).unwrap(),
        Read::Rejected { newest: token_b }
    );
    assert_eq!(store_b.peek("file").unwrap().as_deref(), Some("B"));
    guard_b.unlock();
    drop(guard_a);
}

#[test]
fn a_holder_paused_before_its_incr_on_a_separate_counter_wins_with_a_larger_token() {
    let servers = cluster(3);
    let counter_node = RedisServer::start();
    let storage = RedisServer::start();
    let urls = urls(&servers);
    let mut a = client(&urls, config(3));
    let mut b = client(&urls, config(3));
    let mut counter = FencingCounter::open(&counter_node.url(), NodeOptions::default()).unwrap();
    let mut store_a = store(&storage);
    let mut store_b = store(&storage);
    let ttl = Millis(400);

    // A acquires and is paused before it takes its token.
    let guard_a = a.lock("file", ttl).unwrap().expect("free");
    thread::sleep(Duration::from_millis(600));
    assert!(!guard_a.is_valid());

    // B acquires, takes its token and reads.
    let guard_b = b.lock("file", ttl).unwrap().expect("A's keys expired");
    let token_b = counter.next("file").unwrap();
    assert_eq!(store_b.read("file", token_b).unwrap(), Read::Value(None));

    // A wakes, takes its token only now, and gets a larger one than the rightful holder.
    let token_a = counter.next("file").unwrap();
    assert!(token_a > token_b, "the stale holder's token is the larger");
    assert_eq!(store_a.read("file", token_a).unwrap(), Read::Value(None));
    assert_eq!(
        store_a.write("file", "A", token_a).unwrap(),
        Write::Applied,
        "the stale write lands"
    );
    assert_eq!(
        store_b.write("file", "B", token_b).unwrap(),
        Write::Rejected { newest: token_a },
        "and the rightful holder's write is refused"
    );
    assert_eq!(store_b.peek("file").unwrap().as_deref(), Some("A"));
    guard_b.unlock();
    drop(guard_a);
}

/// Raises every node's counter with `rounds` acquisitions, restarts two of the three nodes one
/// at a time with no lock held (mutual exclusion is not at stake), kills the third, and
/// returns the tokens before and after: the last acquisition's quorum is the two restarted
/// nodes.
fn tokens_across_restarts(options: &ServerOptions, rounds: usize) -> (u64, u64) {
    let mut servers: Vec<RedisServer> = (0..3)
        .map(|_| RedisServer::start_with(options.clone()))
        .collect();
    let urls = urls(&servers);
    let mut before = 0;
    for _ in 0..rounds {
        let mut redlock = client(&urls, fenced_config(3));
        let guard = redlock.lock("file", Millis(5_000)).unwrap().expect("free");
        before = guard.fencing_token().expect("fencing is on");
        guard.unlock();
    }
    servers[0].restart();
    servers[1].restart();
    servers[2].kill();
    let mut redlock = client(&urls, fenced_config(3));
    let guard = redlock
        .lock("file", Millis(5_000))
        .unwrap()
        .expect("two of three nodes are up");
    let after = guard.fencing_token().expect("fencing is on");
    guard.unlock();
    (before, after)
}

#[test]
fn lock_nodes_restarted_without_persistence_reuse_tokens_and_fsync_always_prevents_it() {
    let (before, after) = tokens_across_restarts(&ServerOptions::default(), 3);
    assert!(
        after <= before,
        "without persistence the restarted quorum starts its counters from zero: {after} after {before}"
    );
    let aof = ServerOptions {
        args: ["--appendonly", "yes", "--appendfsync", "always"]
            .map(String::from)
            .to_vec(),
        ..ServerOptions::default()
    };
    let (before, after) = tokens_across_restarts(&aof, 3);
    assert!(
        after > before,
        "with appendfsync always the counters survive: {after} after {before}"
    );
}

/// Many holders increment one counter in the store; every third is paused past its lease
/// between its read and its write. Returns (acknowledged writes, final value).
fn contend(fenced_reads: bool) -> (u64, u64) {
    const THREADS: usize = 4;
    const SECTIONS: usize = 9;
    let servers = cluster(3);
    let storage = Arc::new(RedisServer::start());
    let urls = Arc::new(urls(&servers));
    let acknowledged = Arc::new(AtomicU64::new(0));
    let ttl = Millis(300);
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let (urls, storage, acknowledged) =
                (urls.clone(), storage.clone(), acknowledged.clone());
            thread::spawn(move || {
                let mut redlock: RedisRedlock = client(&urls, fenced_config(3));
                let mut store = store(&storage);
                for i in 0..SECTIONS {
                    let guard = loop {
                        if let Some(guard) = redlock.lock("counter", ttl).unwrap() {
                            break guard;
                        }
                        thread::sleep(Duration::from_millis(5));
                    };
                    let token = token_of(&guard);
                    let value = if fenced_reads {
                        match store.read("counter", token).unwrap() {
                            Read::Value(value) => value,
                            // A newer holder read first: this holder is stale, it stops.
                            Read::Rejected { .. } => continue,
                        }
                    } else {
                        store.peek("counter").unwrap()
                    };
                    let value: u64 = value.map_or(0, |v| v.parse().unwrap());
                    // A holder computes for a while; every third one is paused past its lease.
                    let pause = if (t + i) % 3 == 0 { 450 } else { 200 };
                    thread::sleep(Duration::from_millis(pause));
                    if store
                        .write("counter", &(value + 1).to_string(), token)
                        .unwrap()
                        == Write::Applied
                    {
                        acknowledged.fetch_add(1, Ordering::SeqCst);
                    }
                    drop(guard);
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let value = store(&storage)
        .peek("counter")
        .unwrap()
        .map_or(0, |v| v.parse().unwrap());
    (acknowledged.load(Ordering::SeqCst), value)
}

#[test]
fn under_contention_with_paused_holders_fenced_reads_lose_no_update_and_unfenced_reads_do() {
    let (acknowledged, value) = contend(true);
    assert!(acknowledged > 0);
    assert_eq!(
        value, acknowledged,
        "every acknowledged increment is in the counter"
    );
    // The detector: the same run with unfenced reads loses updates (a stale write lands
    // between the next holder's read and its write).
    let (acknowledged, value) = contend(false);
    assert!(
        value < acknowledged,
        "unfenced reads lost no update ({value} of {acknowledged}): the detector did not work"
    );
}
