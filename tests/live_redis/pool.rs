//! One client shared by many threads: eight threads lock one resource through a
//! `RedisRedlockPool` of three clients against three masters. No two are ever inside the
//! section at once, and each master sees the pool's connections, not one per thread.

use std::sync::Barrier;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::thread;

use redlock_lab::driver::RedisRedlockPool;
use redlock_lab::proto::RetryPolicy;
use redlock_lab::time::Millis;

use crate::config;
use crate::harness::{RedisServer, cluster, urls};

const THREADS: usize = 8;
const POOL_SIZE: usize = 3;
const SECTIONS_PER_THREAD: u64 = 200;

/// A numeric field of `INFO section`, read on a connection of the test's own.
fn info(server: &RedisServer, section: &str, field: &str) -> u64 {
    let text: String = redis::cmd("INFO")
        .arg(section)
        .query(&mut server.connection())
        .unwrap_or_else(|e| panic!("INFO {section}: {e}"));
    let prefix = format!("{field}:");
    text.lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .map(|value| value.trim().parse().expect("a number"))
        .unwrap_or_else(|| panic!("INFO {section} has no {field}"))
}

#[test]
fn eight_threads_share_a_pool_of_three_without_overlap_or_a_connection_each() {
    let servers = cluster(3);
    let mut contended = config(3);
    contended.retry = RetryPolicy {
        attempts: 20,
        delay_min: Millis(0),
        delay_max: Millis(3),
    };
    let pool = RedisRedlockPool::open(&urls(&servers), contended, POOL_SIZE).expect("valid");
    let received_before: Vec<u64> = servers
        .iter()
        .map(|s| info(s, "stats", "total_connections_received"))
        .collect();
    let inside = AtomicUsize::new(0);
    let overlaps = AtomicU64::new(0);
    let sections = AtomicU64::new(0);
    let barrier = Barrier::new(THREADS);
    thread::scope(|scope| {
        for _ in 0..THREADS {
            scope.spawn(|| {
                barrier.wait();
                for _ in 0..SECTIONS_PER_THREAD {
                    // Retry until this thread's section is done; each try checks a client out.
                    loop {
                        let mut redlock = pool.get();
                        let Some(guard) = redlock.lock("shared", Millis(5_000)).unwrap() else {
                            continue;
                        };
                        if inside.fetch_add(1, Ordering::SeqCst) != 0 {
                            overlaps.fetch_add(1, Ordering::SeqCst);
                        }
                        sections.fetch_add(1, Ordering::Relaxed);
                        thread::yield_now();
                        inside.fetch_sub(1, Ordering::SeqCst);
                        assert!(guard.is_valid(), "the section ran past the lease");
                        guard.unlock();
                        break;
                    }
                }
            });
        }
    });
    assert_eq!(
        overlaps.load(Ordering::SeqCst),
        0,
        "two threads held the lock at once"
    );
    assert_eq!(
        sections.load(Ordering::Relaxed),
        THREADS as u64 * SECTIONS_PER_THREAD
    );
    assert!(pool.made() <= POOL_SIZE, "{pool:?}");
    for (server, before) in servers.iter().zip(received_before) {
        // The pool's connections, and the one this reading opens; not one per thread.
        let received = info(server, "stats", "total_connections_received") - before;
        let connected = info(server, "clients", "connected_clients");
        assert!(
            received <= POOL_SIZE as u64 + 1 && connected <= POOL_SIZE as u64 + 1,
            "{} took {received} new connections ({connected} open) from {THREADS} threads \
             sharing a pool of {POOL_SIZE}",
            server.url()
        );
        assert_eq!(server.get("shared"), None, "nothing left locked");
    }
}

#[test]
fn a_guard_taken_on_one_thread_is_released_on_another() {
    let servers = cluster(3);
    let pool = RedisRedlockPool::open(&urls(&servers), config(3), 2).expect("valid");
    let mut redlock = pool.get();
    thread::scope(|scope| {
        let guard = scope
            .spawn(|| {
                redlock
                    .lock("handed", Millis(5_000))
                    .unwrap()
                    .expect("free")
            })
            .join()
            .unwrap();
        let released = scope.spawn(move || guard.unlock()).join().unwrap();
        assert_eq!(released.applied.len(), 3, "{released:?}");
    });
    drop(redlock);
    for server in &servers {
        assert_eq!(server.get("handed"), None, "released on every master");
    }
    assert_eq!(
        (pool.made(), pool.idle()),
        (1, 1),
        "the one client went back"
    );
}
