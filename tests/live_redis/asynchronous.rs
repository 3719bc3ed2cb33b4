//! The async client (feature `tokio`) on real servers: the same core, so the same outcomes;
//! and the async driver stops waiting as soon as the core has decided.

use std::io;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use redlock_lab::driver::Refusal;
use redlock_lab::driver::redis::asynchronous::{AsyncAcquisition, AsyncRedlock};
use redlock_lab::driver::redis::{Cause, NodeOptions};
use redlock_lab::proto::{NodeId, NodeResult, NodeSet, RoundDecision};
use redlock_lab::time::Millis;

use crate::config;
use crate::harness::{RedisServer, cluster, urls};

/// Runs `future` to completion on a fresh current-thread runtime.
pub(crate) fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
        .block_on(future)
}

#[test]
fn async_b_cannot_acquire_while_a_holds_and_a_dropped_guard_is_released() {
    let servers = cluster(3);
    let urls = urls(&servers);
    block_on(async {
        let mut a = AsyncRedlock::open(&urls, config(3)).unwrap();
        let mut b = AsyncRedlock::open(&urls, config(3)).unwrap();
        let guard = a
            .lock("async", Millis(10_000))
            .await
            .unwrap()
            .expect("free");
        let token = guard.token().to_string();
        let AsyncAcquisition::NotAcquired(refused) =
            b.try_lock("async", Millis(10_000)).await.unwrap()
        else {
            panic!("B acquired a lock that A holds");
        };
        // A's round was decided at quorum, so its straggler SET may land after B's on the
        // third node: B can get that one yes, never a quorum, and its release removes it.
        assert!(refused.nodes.applied.len() < 2, "{refused:?}");
        // B's release is decided at quorum too, and a node's release waits for B's own SET
        // to that node (a node's requests arrive in the order they were issued): B's key may
        // stay there for the moment that release is still on its way, never longer.
        let foreign = |server: &&RedisServer| {
            server
                .get("async")
                .is_some_and(|value| value != token.as_str())
        };
        for _ in 0..200 {
            if !servers.iter().any(|server| foreign(&server)) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(
            !servers.iter().any(|server| foreign(&server)),
            "B's key outlived its release"
        );
        let holding = servers
            .iter()
            .filter(|server| server.get("async").is_some())
            .count();
        assert!(holding >= 2, "A's key is on a quorum of nodes");
        assert!(guard.unlock().await.applied.len() >= holding);

        let mut guard = b
            .lock("async", Millis(2_000))
            .await
            .unwrap()
            .expect("free after unlock");
        assert!(guard.is_valid());
        tokio::time::sleep(Duration::from_millis(300)).await;
        let before = guard.deadline();
        assert!(guard.extend().await.unwrap(), "a held lock extends");
        assert!(guard.deadline() > before);
        // The extension is decided once a quorum applied it (the core's default), so the last
        // node's PEXPIRE may still be on its way: count the nodes whose TTL was reset.
        let ttls: Vec<i64> = servers
            .iter()
            .map(|server| {
                redis::cmd("PTTL")
                    .arg("async")
                    .query(&mut server.connection())
                    .unwrap()
            })
            .collect();
        let extended = ttls.iter().filter(|&&ttl| ttl > 1_900).count();
        assert!(
            extended >= 2,
            "PEXPIRE reset the TTL on a quorum (about 1700 would be left otherwise): {ttls:?}"
        );
        assert!(guard.is_valid());
        drop(guard); // releases from a spawned task
        tokio::time::sleep(Duration::from_millis(200)).await;
    });
    for server in &servers {
        assert_eq!(server.get("async"), None, "the dropped guard was released");
    }
}

#[test]
fn async_a_paused_minority_node_does_not_delay_an_acquisition_decided_at_quorum() {
    let servers = cluster(3);
    let urls = urls(&servers);
    let mut round = config(3);
    round.round_timeout = Millis(1_000);
    block_on(async {
        let mut redlock = AsyncRedlock::open(&urls, round).unwrap();
        let warm = redlock
            .lock("warm", Millis(1_000))
            .await
            .unwrap()
            .expect("healthy");
        warm.unlock().await;
        // n1 is asked first: the async client does not read in order, so any node may hang.
        servers[0].pause();
        let started = Instant::now();
        let guard = redlock.lock("early", Millis(10_000)).await.unwrap();
        let elapsed = started.elapsed();
        let guard = guard.expect("two of three");
        assert!(
            elapsed < Duration::from_millis(500),
            "decided at quorum, not at the 1 s round deadline: {elapsed:?}"
        );
        assert!(guard.node_errors().is_empty(), "nobody timed out");
        guard.unlock().await;
        servers[0].resume();
    });
}

#[test]
fn async_a_paused_node_ends_the_round_at_its_deadline_with_a_named_timeout() {
    let servers = cluster(3);
    let urls = urls(&servers);
    let mut round = config(3);
    round.round_timeout = Millis(300);
    round.decision = RoundDecision::AllReplies;
    block_on(async {
        let mut redlock = AsyncRedlock::open(&urls, round).unwrap();
        let warm = redlock
            .lock("warm", Millis(1_000))
            .await
            .unwrap()
            .expect("healthy");
        warm.unlock().await;
        servers[1].pause();
        let started = Instant::now();
        let guard = redlock.lock("paused", Millis(10_000)).await.unwrap();
        let elapsed = started.elapsed();
        servers[1].resume();
        let guard = guard.expect("two of three");
        assert!(elapsed >= Duration::from_millis(290), "{elapsed:?}");
        assert!(elapsed < Duration::from_millis(800), "{elapsed:?}");
        let errors = guard.node_errors();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].node.index(), 1);
        assert!(
            matches!(errors[0].error.cause, Cause::Timeout { .. }),
            "{}",
            errors[0].error
        );
        guard.unlock().await;
    });
}

#[test]
fn async_unreachable_nodes_are_an_outcome_naming_each_node_and_lock_is_an_error() {
    let urls: Vec<String> = (0..3)
        .map(|_| format!("redis://127.0.0.1:{}", crate::harness::free_port()))
        .collect();
    block_on(async {
        let mut redlock = AsyncRedlock::open_with_seed(
            &urls,
            &redlock_lab::driver::redis::NodeOptions::default(),
            config(3),
            7,
        )
        .unwrap();
        let AsyncAcquisition::Unreachable(unreachable) =
            redlock.try_lock("nobody", Millis(5_000)).await.unwrap()
        else {
            panic!("no server runs, yet the outcome is not unreachable");
        };
        assert_eq!(unreachable.attempts, 1, "try_lock is one attempt");
        // Two failures decide a round of three; the third may still have been connecting.
        assert!(unreachable.causes.len() >= 2, "{unreachable}");
        for cause in &unreachable.causes {
            assert_eq!(cause.error.node, urls[cause.node.index()]);
        }
        let error = redlock
            .lock("nobody", Millis(5_000))
            .await
            .expect_err("no node can answer");
        let redlock_lab::driver::DriverError::Unreachable(retried) = &error else {
            panic!("not unreachable: {error}");
        };
        assert_eq!(
            retried.attempts, 2,
            "lock retries as the configuration says"
        );
    });
}

#[test]
fn async_fencing_tokens_come_from_the_round_and_grow_across_holders() {
    let servers = cluster(3);
    let urls = urls(&servers);
    let mut fenced = config(3);
    fenced.fencing = redlock_lab::proto::Fencing::WriteBack;
    block_on(async {
        let mut a = AsyncRedlock::open(&urls, fenced).unwrap();
        let mut b = AsyncRedlock::open(&urls, fenced).unwrap();
        let first = a
            .lock("fenced", Millis(5_000))
            .await
            .unwrap()
            .expect("free");
        let token_a = first.fencing_token().expect("fencing is on");
        first.unlock().await;
        let second = b
            .lock("fenced", Millis(5_000))
            .await
            .unwrap()
            .expect("free");
        let token_b = second.fencing_token().expect("fencing is on");
        assert!(token_b > token_a, "{token_b} after {token_a}");
        second.unlock().await;
        // Every resource shares one counter per node; A's round wrote its token back to a quorum.
        let raised = servers
            .iter()
            .filter(|server| {
                let counter = server
                    .get(redlock_lab::proto::FENCE_COUNTER_KEY)
                    .map_or(0, |c| c.parse().unwrap());
                counter >= token_a
            })
            .count();
        assert!(
            raised >= 2,
            "{raised} nodes hold a counter of at least {token_a}"
        );
        let mut plain = AsyncRedlock::open(&urls, config(3)).unwrap();
        let guard = plain.lock("plain", Millis(5_000)).await.unwrap().unwrap();
        assert_eq!(guard.fencing_token(), None, "fencing is off by default");
        guard.unlock().await;
    });
}

#[test]
fn async_a_foreign_value_at_the_lock_or_the_counter_is_a_collision_naming_the_key() {
    use redlock_lab::driver::DriverError;
    use redlock_lab::proto::{FENCE_COUNTER_KEY, Fencing};
    let servers = cluster(3);
    let urls = urls(&servers);
    for server in &servers {
        let () = redis::cmd("SET")
            .arg(FENCE_COUNTER_KEY)
            .arg("not a number")
            .query(&mut server.connection())
            .unwrap();
        let () = redis::cmd("RPUSH")
            .arg("queue")
            .arg("someone else's list")
            .query(&mut server.connection())
            .unwrap();
    }
    let mut fenced = config(3);
    fenced.fencing = Fencing::WriteBack;
    block_on(async {
        let mut redlock = AsyncRedlock::open(&urls, fenced).unwrap();
        for (resource, key) in [("orders", FENCE_COUNTER_KEY), ("queue", "queue")] {
            let error = redlock
                .try_lock(resource, Millis(5_000))
                .await
                .expect_err("a foreign key");
            let DriverError::Collision(collision) = &error else {
                panic!("{resource}: not a collision: {error}");
            };
            assert_eq!(collision.key, key, "{error}");
            assert!(error.to_string().contains(&format!("{key:?}")), "{error}");
        }
    });
}

#[test]
fn async_nodes_that_all_restarted_just_now_are_kept_out_by_the_guard_on_every_attempt() {
    // As the blocking client's test in `faults`: fresh servers are younger than the guard.
    // The async client learns a node's uptime on whichever request connects first, a decided
    // round's straggler included, and every later request shares that connection, so the
    // second attempt is refused too, with no error.
    let servers = cluster(3);
    let urls = urls(&servers);
    let options = NodeOptions {
        restart_guard: Some(Duration::from_secs(3)),
        ..NodeOptions::default()
    };
    block_on(async {
        let mut guarded = AsyncRedlock::open_with(&urls, &options, config(3)).unwrap();
        for attempt in 1..=2 {
            let AsyncAcquisition::NotAcquired(refused) =
                guarded.try_lock("young", Millis(3_000)).await.unwrap()
            else {
                panic!("attempt {attempt}: young nodes gave a lock, or were unreachable");
            };
            let Refusal::RestartGuard { restarted } = refused.reason else {
                panic!("attempt {attempt}: not blamed on the guard: {refused}");
            };
            assert!(restarted.len() >= 2, "attempt {attempt}: {refused}");
            assert!(refused.errors.is_empty(), "{:?}", refused.errors);
        }
        // The releases of the refused rounds run on this runtime.
        tokio::time::sleep(Duration::from_millis(200)).await;
    });
    for server in &servers {
        assert_eq!(server.get("young"), None, "every young node was released");
    }
}

/// A loopback proxy in front of `upstream` that holds back what the client sends on its first
/// connection for `delay`, as a slow first connect would, and forwards the later connections
/// at once. It stops accepting when dropped.
struct SlowFirstConnection {
    port: u16,
    stop: Arc<AtomicBool>,
}

impl SlowFirstConnection {
    fn start(upstream: u16, delay: Duration) -> SlowFirstConnection {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let port = listener.local_addr().expect("proxy address").port();
        listener
            .set_nonblocking(true)
            .expect("a non-blocking listener");
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        thread::spawn(move || {
            let mut first = true;
            while !stopped.load(Ordering::Relaxed) {
                let Ok((client, _)) = listener.accept() else {
                    thread::sleep(Duration::from_millis(2));
                    continue;
                };
                let hold = if first { delay } else { Duration::ZERO };
                first = false;
                client.set_nonblocking(false).expect("a blocking stream");
                let server = TcpStream::connect(("127.0.0.1", upstream)).expect("upstream");
                let (mut from_client, mut to_client) = (client.try_clone().unwrap(), client);
                let (mut to_server, mut from_server) = (server.try_clone().unwrap(), server);
                thread::spawn(move || {
                    thread::sleep(hold);
                    let _ = io::copy(&mut from_client, &mut to_server);
                    let _ = to_server.shutdown(Shutdown::Write);
                });
                thread::spawn(move || {
                    let _ = io::copy(&mut from_server, &mut to_client);
                    let _ = to_client.shutdown(Shutdown::Write);
                });
            }
        });
        SlowFirstConnection { port, stop }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }
}

impl Drop for SlowFirstConnection {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

#[test]
fn async_a_straggling_set_is_never_overtaken_by_its_own_release() {
    // n3's first connection is slow: the acquisition is decided by n1 and n2 while n3's SET is
    // still held back, and the extension and the release go out before it lands. Sent over
    // connections of their own, they would reach n3 first, and the late SET would leave the
    // lock held there for its whole TTL after the unlock.
    let servers = cluster(3);
    let proxy = SlowFirstConnection::start(servers[2].port(), Duration::from_millis(300));
    let urls = [servers[0].url(), servers[1].url(), proxy.url()];
    let mut round = config(3);
    round.round_timeout = Millis(1_000);
    let options = NodeOptions {
        connect_timeout: Duration::from_secs(2),
        ..NodeOptions::default()
    };
    block_on(async {
        let mut redlock = AsyncRedlock::open_with(&urls, &options, round).unwrap();
        let mut guard = redlock
            .lock("overtaken", Millis(10_000))
            .await
            .unwrap()
            .expect("two of three");
        assert!(guard.extend().await.unwrap());
        guard.unlock().await;
        drop(redlock);
        // The stragglers run on this runtime, each within its round's second.
        tokio::time::sleep(Duration::from_millis(1_200)).await;
    });
    for server in &servers {
        assert_eq!(
            server.get("overtaken"),
            None,
            "released on {}",
            server.url()
        );
    }
}

#[test]
fn async_the_guard_records_a_straggling_set_that_answers_within_the_round() {
    let servers = cluster(3);
    let urls = urls(&servers);
    let mut round = config(3);
    round.round_timeout = Millis(2_000);
    block_on(async {
        let mut redlock = AsyncRedlock::open(&urls, round).unwrap();
        let warm = redlock
            .lock("warm", Millis(1_000))
            .await
            .unwrap()
            .expect("healthy");
        warm.unlock().await;
        let stopped = servers[2].paused();
        let guard = redlock
            .lock("straggler", Millis(10_000))
            .await
            .unwrap()
            .expect("two of three");
        let nodes = guard.nodes();
        assert_eq!(nodes.result(NodeId(2)), NodeResult::NoReply, "{nodes:?}");
        assert_eq!(nodes.unanswered(), NodeSet::from_bits(0b100));
        // Woken within the round's two seconds, n3 answers its SET on the straggler's task.
        drop(stopped);
        for _ in 0..400 {
            if guard.nodes().unanswered().is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let nodes = guard.nodes();
        assert_eq!(nodes.result(NodeId(2)), NodeResult::Applied, "{nodes:?}");
        assert_eq!(nodes.at_decision(NodeId(2)), NodeResult::NoReply);
        assert_eq!(nodes.late(), NodeSet::from_bits(0b100));
        let released = guard.unlock().await;
        assert_eq!(
            released.applied,
            NodeSet::first(3),
            "the key was on every node"
        );
    });
    for server in &servers {
        assert_eq!(server.get("straggler"), None);
    }
}
