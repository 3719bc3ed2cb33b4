//! The seed's sequential `SET`s on real servers: with `Contact::Sequential` both clients ask
//! one node after another, so two stopped masters cost two round timeouts in turn, where a
//! multiplexed round pays one; every live node still gets exactly one `SET`.

use std::time::{Duration, Instant};

use redlock_lab::driver::RedisRedlock;
use redlock_lab::proto::{Config, Contact, NodeId, NodeResult};
use redlock_lab::time::Millis;

use crate::harness::{RedisServer, cluster, urls};
use crate::{client, config};

const TIMEOUT: Millis = Millis(300);

/// Five masters, each request bounded by [`TIMEOUT`], asking as `contact` says.
fn five(contact: Contact) -> Config {
    let mut round = config(5);
    round.round_timeout = TIMEOUT;
    round.contact = contact;
    round
}

/// Locks `resource` once to open every connection, then stops n1 and n2 (the first two a
/// sequential round asks), locks `resource` again and returns how long that took, with each
/// node's count of `SET`s in between.
fn lock_with_two_stopped(
    servers: &[RedisServer],
    redlock: &mut RedisRedlock,
    resource: &str,
) -> (Duration, Vec<u64>) {
    let warm = redlock
        .lock("warm", Millis(1_000))
        .unwrap()
        .expect("healthy");
    warm.unlock();
    let before: Vec<u64> = servers.iter().map(|s| s.calls("set")).collect();
    let (_n1, _n2) = (servers[0].paused(), servers[1].paused());
    let started = Instant::now();
    let guard = redlock.lock(resource, Millis(10_000)).unwrap();
    let elapsed = started.elapsed();
    let guard = guard.expect("three of five answered");
    assert_eq!(guard.nodes().result(NodeId(0)), NodeResult::Failed);
    assert_eq!(guard.nodes().result(NodeId(2)), NodeResult::Applied);
    guard.unlock();
    let sets = servers[2..]
        .iter()
        .zip(&before[2..])
        .map(|(s, b)| s.calls("set") - b)
        .collect();
    (elapsed, sets)
}

#[test]
fn sequential_sets_pay_each_stopped_masters_timeout_in_turn() {
    let servers = cluster(5);
    let mut redlock = client(&urls(&servers), five(Contact::Sequential));
    let (elapsed, sets) = lock_with_two_stopped(&servers, &mut redlock, "sequential");
    assert!(
        elapsed >= Duration::from_millis(590),
        "n1's and n2's timeouts, one after the other: {elapsed:?}"
    );
    assert_eq!(sets, [1, 1, 1], "one SET to each live node");

    // The detector's other side: the same client, multiplexed, pays one timeout at most.
    let servers = cluster(5);
    let mut redlock = client(&urls(&servers), five(Contact::Multiplexed));
    let (elapsed, sets) = lock_with_two_stopped(&servers, &mut redlock, "multiplexed");
    assert!(
        elapsed < Duration::from_millis(500),
        "decided at quorum by n3, n4 and n5, with no timeout in turn: {elapsed:?}"
    );
    assert_eq!(sets, [1, 1, 1]);
}

#[cfg(feature = "tokio")]
#[test]
fn async_sequential_sets_pay_each_stopped_masters_timeout_in_turn() {
    use redlock_lab::driver::redis::asynchronous::AsyncRedlock;
    let servers = cluster(5);
    crate::asynchronous::block_on(async {
        let mut redlock = AsyncRedlock::open(&urls(&servers), five(Contact::Sequential)).unwrap();
        let warm = redlock
            .lock("warm", Millis(1_000))
            .await
            .unwrap()
            .expect("healthy");
        warm.unlock().await;
        let before: Vec<u64> = servers.iter().map(|s| s.calls("set")).collect();
        let (_n1, _n2) = (servers[0].paused(), servers[1].paused());
        let started = Instant::now();
        let guard = redlock
            .lock("async-sequential", Millis(10_000))
            .await
            .unwrap();
        let elapsed = started.elapsed();
        let guard = guard.expect("three of five answered");
        assert!(
            elapsed >= Duration::from_millis(590),
            "n1's and n2's timeouts, one after the other: {elapsed:?}"
        );
        guard.unlock().await;
        for (server, before) in servers[2..].iter().zip(&before[2..]) {
            assert_eq!(server.calls("set") - before, 1, "one SET to each live node");
        }
    });
}
