//! Faults on real processes: a node killed mid-round, a node paused with SIGSTOP, a node
//! restarted without persistence (and the restarted-node guard); the same crash with rslock.

use std::thread;
use std::time::{Duration, Instant};

use redlock_lab::driver::redis::{Cause, NodeOptions};
use redlock_lab::driver::{Acquisition, Refusal};
use redlock_lab::proto::{Failure, NodeId, NodeResult, NodeSet, RetryPolicy, RoundDecision};
use redlock_lab::time::Millis;

use crate::harness::{cluster, urls};
use crate::{client, client_with, config};

/// Locks and unlocks once, so every connection is open and every script loaded.
fn warm_up(redlock: &mut redlock_lab::driver::RedisRedlock) {
    let guard = redlock
        .lock("warm-up", Millis(1_000))
        .unwrap()
        .expect("healthy nodes");
    assert_eq!(guard.unlock().applied.len(), redlock.nodes().len());
}

#[test]
fn a_node_killed_mid_round_ends_its_wait_at_once_and_the_majority_wins() {
    let mut servers = cluster(3);
    let urls = urls(&servers);
    let mut round = config(3);
    round.round_timeout = Millis(3_000);
    let mut redlock = client(&urls, round);
    warm_up(&mut redlock);

    // Node 1 (read first) hangs with our SET in its socket, then dies while we wait for it.
    servers[0].pause();
    let pid = servers[0].pid();
    let killer = thread::spawn(move || {
        thread::sleep(Duration::from_millis(150));
        std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .expect("kill the paused node");
    });
    let started = Instant::now();
    let guard = redlock.lock("killed", Millis(10_000)).unwrap();
    let elapsed = started.elapsed();
    killer.join().unwrap();
    servers[0].kill(); // reap it

    let guard = guard.expect("the two live nodes are a quorum");
    assert!(
        elapsed >= Duration::from_millis(140),
        "the round waited for the paused node"
    );
    assert!(
        elapsed < Duration::from_millis(2_000),
        "the dropped connection ended the wait long before the 3 s round timeout: {elapsed:?}"
    );
    let errors = guard.node_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].node.index(), 0);
    assert!(
        matches!(errors[0].error.cause, Cause::ConnectionLost(_)),
        "{}",
        errors[0].error
    );
    assert_eq!(guard.unlock().applied.len(), 2);
    assert_eq!(servers[1].get("killed"), None);
    assert_eq!(servers[2].get("killed"), None);
}

/// Acquires `resource` with node 3 (read last) paused, and returns how long it took.
fn acquire_with_the_last_node_paused(decision: RoundDecision, resource: &str) -> Duration {
    let servers = cluster(3);
    let urls = urls(&servers);
    let mut round = config(3);
    round.round_timeout = Millis(1_000);
    round.decision = decision;
    let mut redlock = client(&urls, round);
    warm_up(&mut redlock);
    servers[2].pause();
    let started = Instant::now();
    let guard = redlock.lock(resource, Millis(10_000)).unwrap();
    let elapsed = started.elapsed();
    let guard = guard.expect("two of three answered");
    assert_eq!(guard.unlock().applied.len(), 2);
    servers[2].resume();
    elapsed
}

#[test]
fn a_paused_minority_node_does_not_delay_an_acquisition_decided_at_quorum() {
    let elapsed = acquire_with_the_last_node_paused(RoundDecision::AtQuorum, "early");
    assert!(
        elapsed < Duration::from_millis(500),
        "decided at quorum, not at the 1 s round deadline: {elapsed:?}"
    );
    // The detector's other side: waiting for every reply costs the whole round.
    let elapsed = acquire_with_the_last_node_paused(RoundDecision::AllReplies, "late");
    assert!(
        elapsed >= Duration::from_millis(990),
        "all-replies waits for the paused node until the deadline: {elapsed:?}"
    );
}

#[test]
fn a_paused_node_costs_at_most_the_round_deadline_and_its_late_set_is_released() {
    let servers = cluster(3);
    let urls = urls(&servers);
    let mut round = config(3);
    round.round_timeout = Millis(300);
    // Waiting for every reply, so the paused node costs the whole round.
    round.decision = RoundDecision::AllReplies;
    let mut redlock = client(&urls, round);
    warm_up(&mut redlock);
    let sets_before = servers[0].calls("set");
    let scripts_before = servers[0].calls("evalsha");

    servers[0].pause();
    let started = Instant::now();
    let guard = redlock.lock("paused", Millis(10_000)).unwrap();
    let elapsed = started.elapsed();
    let guard = guard.expect("two of three answered");
    assert!(
        elapsed >= Duration::from_millis(290),
        "the core waits for every node until the round deadline: {elapsed:?}"
    );
    assert!(
        elapsed < Duration::from_millis(800),
        "the round ended at its 300 ms deadline, not later: {elapsed:?}"
    );
    // The validity accounts for the time the round took.
    assert!(guard.remaining() <= Millis(10_000 - 102 - 290));
    let errors = guard.node_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].error.is_timeout(), "{}", errors[0].error);
    assert!(errors[0].error.to_string().contains(&urls[0]));
    let token = guard.token().to_string();
    let released = guard.unlock();
    assert_eq!(
        released.applied.len(),
        2,
        "the paused node cannot answer the release"
    );

    // When the node wakes up it runs what waited in its socket, in order: our late SET
    // lands (a timed-out SET may still be applied), and the release right behind it removes it.
    servers[0].resume();
    let deadline = Instant::now() + Duration::from_secs(5);
    while servers[0].calls("evalsha") < scripts_before + 1 {
        assert!(
            Instant::now() < deadline,
            "the node never ran the queued release"
        );
        thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        servers[0].calls("set"),
        sets_before + 1,
        "the late SET was applied"
    );
    assert_eq!(
        servers[0].get("paused"),
        None,
        "and released: nothing is left locked"
    );
    assert_ne!(servers[1].get("paused"), Some(token));

    // The connection to the resumed node is still in step: the next lock uses all three.
    let guard = redlock
        .lock("paused", Millis(10_000))
        .unwrap()
        .expect("free again");
    assert_eq!(guard.node_errors().len(), 0, "{:?}", guard.node_errors());
    guard.unlock();
}

#[test]
fn a_node_restarted_without_persistence_loses_the_key_and_the_guard_keeps_it_out() {
    let mut servers = cluster(3);
    let urls = urls(&servers);
    let ttl = Millis(3_000);
    let guard_window = Duration::from_secs(3); // the largest TTL in use
    // The guard compares uptimes with a whole-second resolution: let the fresh servers age.
    thread::sleep(Duration::from_millis(3_100));

    // A's lock lands on nodes 1 and 2 only: node 3 still holds a stranger's short key.
    let mut stranger = servers[2].connection();
    let _: () = redis::cmd("SET")
        .arg("report")
        .arg("stranger")
        .arg("PX")
        .arg(300)
        .query(&mut stranger)
        .unwrap();
    let mut a = client(&urls, config(3));
    let guard_a = a.lock("report", ttl).unwrap().expect("2 of 3");
    assert_eq!(guard_a.node_errors().len(), 0);
    let token_a = guard_a.token().to_string();
    assert_eq!(servers[0].get("report"), Some(token_a.clone()));

    // Node 1 crashes and restarts with an empty dataset: A's key there is gone.
    servers[0].restart();
    assert_eq!(servers[0].get("report"), None, "the lost key is observable");
    assert_eq!(servers[1].get("report"), Some(token_a));
    thread::sleep(Duration::from_millis(350)); // the stranger's key on node 3 expires

    // With the guard, node 1 is too young to vote: B's yes from nodes 1 and 3 counts once.
    let options = NodeOptions {
        restart_guard: Some(guard_window),
        ..NodeOptions::default()
    };
    let mut once = config(3);
    once.retry = RetryPolicy {
        attempts: 1,
        ..once.retry
    };
    let mut guarded = client_with(&urls, &options, once);
    let Acquisition::NotAcquired(refused) = guarded.try_lock("report", ttl).unwrap() else {
        panic!("the guard let a young node vote");
    };
    // Without the guard node 1's yes would have won: the refusal says it was the guard.
    assert_eq!(
        refused.reason,
        Refusal::RestartGuard {
            restarted: NodeSet::from_bits(0b001)
        },
        "{refused}"
    );
    // Node 1's yes does not count and node 2 (A's) says no, so a quorum is already out of
    // reach: at most node 3's yes counts.
    assert!(
        matches!(refused.failure, Failure::NoQuorum { quorum: 2, applied } if applied <= 1),
        "{:?}",
        refused.failure
    );
    assert!(
        refused.nodes.applied.contains(NodeId(0)),
        "the young node applied the SET"
    );
    assert!(guarded.nodes()[0].run_id().is_some());
    assert_eq!(
        servers[0].get("report"),
        None,
        "the failed round released node 1"
    );
    assert_eq!(
        servers[2].get("report"),
        None,
        "the failed round released node 3"
    );
    assert!(guard_a.is_valid(), "A still believes it holds the lock");

    // Without the guard the same request wins: two clients believe at once.
    let mut unguarded = client(&urls, once);
    let guard_c = unguarded
        .lock("report", ttl)
        .unwrap()
        .expect("nodes 1 and 3 make a majority without the guard");
    assert!(
        guard_a.is_valid() && guard_c.is_valid(),
        "mutual exclusion is violated"
    );
    drop(guard_c);
    drop(guard_a);

    // A's own connection to node 1 broke with the restart; reconnecting notices the new run.
    let mut guarded_a = client_with(&urls, &options, config(3));
    let _ = guarded_a.lock("other", ttl).unwrap();
    let first_run = guarded_a.nodes()[0].run_id().map(str::to_owned);
    servers[0].restart();
    let _ = guarded_a.lock("other", ttl).unwrap(); // the dead connection fails this round
    let _ = guarded_a.lock("other", ttl).unwrap(); // and this one reconnects
    assert_eq!(guarded_a.nodes()[0].restarts_seen(), 1);
    assert_ne!(guarded_a.nodes()[0].run_id().map(str::to_owned), first_run);
}

#[test]
fn with_fsync_always_aof_a_restarted_node_keeps_the_key() {
    use crate::harness::{RedisServer, ServerOptions};
    let aof = ServerOptions {
        args: ["--appendonly", "yes", "--appendfsync", "always"]
            .map(str::to_owned)
            .to_vec(),
        ..ServerOptions::default()
    };
    let mut durable = RedisServer::start_with(aof);
    let mut volatile = RedisServer::start();
    let urls = [durable.url(), volatile.url()];
    let mut one_each = config(1);
    one_each.retry.attempts = 1;
    let mut on_durable = client(&urls[..1], one_each);
    let mut on_volatile = client(&urls[1..], one_each);
    let guard_durable = on_durable
        .lock("kept", Millis(10_000))
        .unwrap()
        .expect("free");
    let guard_volatile = on_volatile
        .lock("kept", Millis(10_000))
        .unwrap()
        .expect("free");
    let token = guard_durable.token().to_string();

    durable.restart();
    volatile.restart();
    assert_eq!(durable.get("kept"), Some(token), "the AOF replayed the key");
    assert_eq!(
        volatile.get("kept"),
        None,
        "without persistence the key is gone"
    );
    // And so a second client is kept out only where the key survived.
    let mut other = client(&urls[..1], one_each);
    assert!(other.lock("kept", Millis(10_000)).unwrap().is_none());
    let mut other = client(&urls[1..], one_each);
    assert!(other.lock("kept", Millis(10_000)).unwrap().is_some());
    drop(guard_durable);
    drop(guard_volatile);
}

#[test]
fn a_node_that_cannot_be_reached_is_not_dialled_again_until_its_connect_timeout_passed() {
    let servers = cluster(3);
    let urls = urls(&servers);
    let options = NodeOptions {
        connect_timeout: Duration::from_millis(250),
        ..NodeOptions::default()
    };
    let mut round = config(3);
    round.round_timeout = Millis(400);
    let mut redlock = client_with(&urls, &options, round);
    // Paused before the first connect: the kernel completes the TCP handshake, the server
    // never answers the script preload.
    servers[0].pause();
    let started = Instant::now();
    let first = redlock
        .lock("dial", Millis(5_000))
        .unwrap()
        .expect("two of three");
    let first_took = started.elapsed();
    assert!(first_took >= Duration::from_millis(240), "{first_took:?}");
    assert!(first.node_errors()[0].error.is_timeout());
    first.unlock();

    // Within the next 250 ms the node fails at once with the remembered cause.
    let started = Instant::now();
    let second = redlock
        .lock("dial", Millis(5_000))
        .unwrap()
        .expect("two of three");
    let second_took = started.elapsed();
    assert!(
        second_took < Duration::from_millis(200),
        "the dead node was dialled again: {second_took:?}"
    );
    assert!(second.node_errors()[0].error.is_timeout());
    second.unlock();
    servers[0].resume();
}

#[test]
fn nodes_that_all_restarted_just_now_stop_every_lock_and_the_refusal_names_the_guard() {
    // Fresh servers have been up for less than a second: with a guard of three seconds no
    // node may vote yet, as with nodes that keep restarting. The guard stops all progress,
    // correctly, and says so rather than looking like contention.
    let servers = cluster(3);
    let urls = urls(&servers);
    let options = NodeOptions {
        restart_guard: Some(Duration::from_secs(3)),
        ..NodeOptions::default()
    };
    let mut guarded = client_with(&urls, &options, config(3));
    let Acquisition::NotAcquired(refused) = guarded.try_lock("young", Millis(3_000)).unwrap()
    else {
        panic!("young nodes gave a lock, or were reported unreachable");
    };
    let Refusal::RestartGuard { restarted } = refused.reason else {
        panic!("not blamed on the guard: {refused}");
    };
    // Two young yeses already put a quorum out of reach; the third may not be in yet.
    assert!(restarted.len() >= 2, "{refused}");
    assert!(refused.errors.is_empty(), "{:?}", refused.errors);
    assert!(
        refused
            .to_string()
            .contains("the restarted-node guard left no quorum"),
        "{refused}"
    );
    assert!(guarded.lock("young", Millis(3_000)).unwrap().is_none());
    for server in &servers {
        assert_eq!(server.get("young"), None, "every young node was released");
    }
}

#[test]
fn the_guard_tells_which_nodes_had_not_answered_and_records_a_straggler_read_later() {
    let servers = cluster(3);
    let urls = urls(&servers);
    let mut round = config(3);
    round.round_timeout = Millis(300);
    let mut redlock = client(&urls, round);
    warm_up(&mut redlock);

    // n3 is read last: n1 and n2 decide the round before anyone waits for n3.
    let stopped = servers[2].paused();
    let mut guard = redlock
        .lock("straggler", Millis(10_000))
        .unwrap()
        .expect("two of three");
    let nodes = guard.nodes();
    assert_eq!(
        nodes.decided().applied,
        NodeSet::from_bits(0b011),
        "{nodes:?}"
    );
    assert_eq!(nodes.result(NodeId(2)), NodeResult::NoReply);
    assert_eq!(nodes.unanswered(), NodeSet::from_bits(0b100));
    assert_eq!(nodes.may_hold_key(), NodeSet::first(3));
    assert!(guard.node_errors().is_empty(), "nobody waited for n3");

    // Woken, n3 runs the SET that waited in its socket: the key is there too.
    drop(stopped);
    let token = guard.token().to_string();
    assert_eq!(servers[2].get("straggler"), Some(token));

    // The extension reads n3's SET reply before its own: the guard records it as late. (n1,
    // stopped now, makes the extension read n3 before the round is decided.)
    let stopped = servers[0].paused();
    assert!(guard.extend().unwrap(), "n2 and n3 extend it");
    drop(stopped);
    let nodes = guard.nodes();
    assert_eq!(nodes.result(NodeId(2)), NodeResult::Applied, "{nodes:?}");
    assert_eq!(nodes.at_decision(NodeId(2)), NodeResult::NoReply);
    assert_eq!(nodes.late(), NodeSet::from_bits(0b100));
    assert_eq!(nodes.tally().applied, NodeSet::first(3));
    assert!(nodes.unanswered().is_empty());

    let released = guard.unlock();
    assert_eq!(
        released.applied,
        NodeSet::first(3),
        "the key was on every node"
    );
    for server in &servers {
        assert_eq!(server.get("straggler"), None);
    }
}

/// rslock, the peer client in the dev-dependencies, under the same crash as above: a master
/// restarted without persistence forgets the first holder's key, and a second client wins
/// there while the first still believes. The controversy is about Redlock, not about one
/// client.
#[test]
fn rslock_loses_a_restarted_masters_key_the_same_way() {
    let mut servers = cluster(3);
    let urls = urls(&servers);
    let ttl = Duration::from_millis(3_000);
    // The first lock lands on masters 1 and 2 only: master 3 holds a stranger's short key.
    let _: () = redis::cmd("SET")
        .arg("report")
        .arg("stranger")
        .arg("PX")
        .arg(300)
        .query(&mut servers[2].connection())
        .unwrap();
    let runtime = current_thread();
    let first = runtime
        .block_on(rslock_manager(&urls).lock("report", ttl))
        .expect("masters 1 and 2");
    let believed_until = Instant::now() + Duration::from_millis(first.validity_time as u64);
    servers[0].restart();
    assert_eq!(servers[0].get("report"), None, "the restart lost the key");
    thread::sleep(Duration::from_millis(350)); // the stranger's key on master 3 expires
    let second = runtime
        .block_on(rslock_manager(&urls).lock("report", ttl))
        .expect("masters 1 and 3 make a majority");
    assert!(
        Instant::now() < believed_until,
        "both rslock clients believe they hold the lock"
    );
    runtime.block_on(second.release());
}

/// rslock under Kleppmann's pause: a holder paused past its validity comes back to a lock that
/// another rslock client has taken, with nothing in its hand that says so.
#[test]
fn rslock_holder_paused_past_its_validity_shares_the_lock_unaware() {
    let servers = cluster(3);
    let urls = urls(&servers);
    let runtime = current_thread();
    let ttl = Duration::from_millis(300);
    let first = runtime
        .block_on(rslock_manager(&urls).lock("pause", ttl))
        .expect("a free lock");
    thread::sleep(Duration::from_millis(400)); // the pause: every key expires
    let second = runtime
        .block_on(rslock_manager(&urls).lock("pause", ttl))
        .expect("the keys expired during the pause");
    // The paused holder still has its `Lock`, with the validity `lock` reported then: rslock
    // offers nothing to ask whether it still holds (this crate's guard has `remaining`).
    drop(first);
    runtime.block_on(second.release());
}

/// A runtime as rslock's users drive it from blocking code.
fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A fresh rslock manager (new connections) with one attempt per `lock`.
fn rslock_manager(urls: &[String]) -> rslock::LockManager {
    let mut manager = rslock::LockManager::new(urls.to_vec());
    manager.set_retry(1, Duration::from_millis(1));
    manager
}
