//! Contention: eight threads, each with its own client, increment a counter on a separate
//! Redis with a plain GET then SET inside the lock. The count must be exact, and the same work
//! without the lock must lose updates (so the detector is shown to work).

use std::sync::Barrier;
use std::thread;

use redlock_lab::proto::RetryPolicy;
use redlock_lab::time::Millis;

use crate::harness::{RedisServer, cluster, urls};
use crate::{client, config};

const THREADS: usize = 8;
const SECTIONS_PER_THREAD: u64 = 1_000;

/// GET then SET v+1: deliberately not atomic.
fn increment(counter: &mut redis::Connection, key: &str) {
    let value: Option<u64> = redis::cmd("GET").arg(key).query(counter).unwrap();
    let _: () = redis::cmd("SET")
        .arg(key)
        .arg(value.unwrap_or(0) + 1)
        .query(counter)
        .unwrap();
}

fn read(counter: &RedisServer, key: &str) -> u64 {
    counter.get(key).map_or(0, |v| v.parse().unwrap())
}

#[test]
fn eight_threads_under_the_lock_lose_no_update_and_without_it_they_do() {
    let servers = cluster(3);
    let counter = RedisServer::start();
    let urls = urls(&servers);

    // Control: the same increments with no lock must lose some, or this test proves nothing.
    let barrier = Barrier::new(THREADS);
    thread::scope(|scope| {
        for _ in 0..THREADS {
            scope.spawn(|| {
                let mut con = counter.connection();
                barrier.wait();
                for _ in 0..SECTIONS_PER_THREAD {
                    increment(&mut con, "unlocked");
                }
            });
        }
    });
    let unlocked = read(&counter, "unlocked");
    let expected = THREADS as u64 * SECTIONS_PER_THREAD;
    assert!(
        unlocked < expected,
        "without a lock {THREADS} threads should lose updates, yet the count is exact"
    );

    // Under the lock: every thread does its 1000 sections, retrying until it gets the lock.
    let mut contended = config(3);
    contended.retry = RetryPolicy {
        attempts: 20,
        delay_min: Millis(0),
        delay_max: Millis(3),
    };
    let barrier = Barrier::new(THREADS);
    let retries: u64 = thread::scope(|scope| {
        let workers: Vec<_> = (0..THREADS)
            .map(|_| {
                scope.spawn(|| {
                    let mut redlock = client(&urls, contended);
                    let mut con = counter.connection();
                    let mut retries = 0;
                    barrier.wait();
                    for _ in 0..SECTIONS_PER_THREAD {
                        loop {
                            let Some(guard) = redlock.lock("counter", Millis(5_000)).unwrap()
                            else {
                                retries += 1;
                                continue;
                            };
                            increment(&mut con, "locked");
                            assert!(guard.is_valid(), "the section ran past the lease");
                            guard.unlock();
                            break;
                        }
                    }
                    retries
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).sum()
    });
    assert_eq!(
        read(&counter, "locked"),
        expected,
        "updates were lost under the lock ({retries} lock calls came back empty)"
    );
    for server in &servers {
        assert_eq!(server.get("counter"), None, "nothing left locked");
    }
}
