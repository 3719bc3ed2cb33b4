//! The two tests of the seed: mutual exclusion between two clients, and a lock that survives
//! one of three nodes being down.

use redlock_lab::driver::redis::Cause;
use redlock_lab::driver::{Acquisition, Refusal};

use crate::harness::{cluster, urls};
use crate::{client, config};
use redlock_lab::time::Millis;

#[test]
fn b_cannot_acquire_while_a_holds_and_can_right_after_a_unlocks() {
    let servers = cluster(3);
    let urls = urls(&servers);
    let mut a = client(&urls, config(3));
    let mut b = client(&urls, config(3));

    let guard_a = a
        .lock("orders", Millis(10_000))
        .unwrap()
        .expect("A gets a free lock");
    let token_a = guard_a.token().to_string();
    // The guard says what each node answered in the winning round.
    let nodes = guard_a.nodes().tally();
    assert!(nodes.applied.len() >= 2, "{:?}", guard_a.nodes());
    assert!(nodes.not_applied.is_empty());
    assert!(guard_a.restarted().is_empty());
    for server in &servers {
        assert_eq!(server.get("orders").as_deref(), Some(token_a.as_str()));
    }

    let Acquisition::NotAcquired(refused) = b.try_lock("orders", Millis(10_000)).unwrap() else {
        panic!("B acquired a lock that A holds");
    };
    assert_eq!(refused.reason, Refusal::Held, "{refused}");
    // Two noes decide a round of three: the third answer is not waited for.
    assert!(refused.nodes.not_applied.len() >= 2, "{refused:?}");
    assert!(refused.nodes.applied.is_empty(), "{refused:?}");
    assert!(
        refused.errors.is_empty(),
        "no node failed: {:?}",
        refused.errors
    );
    // B's failed rounds released only their own tokens: A's keys are intact everywhere.
    for server in &servers {
        assert_eq!(server.get("orders").as_deref(), Some(token_a.as_str()));
    }

    let released = guard_a.unlock();
    assert_eq!(released.applied.len(), 3, "A's key deleted on every node");
    let guard_b = b
        .lock("orders", Millis(10_000))
        .unwrap()
        .expect("free right after unlock");
    assert!(guard_b.is_valid());
    drop(guard_b); // dropping unlocks too
    for server in &servers {
        assert_eq!(server.get("orders"), None);
    }
}

#[test]
fn with_one_of_three_nodes_down_the_lock_is_still_acquired_and_the_node_is_named() {
    let mut servers = cluster(3);
    servers[2].kill();
    let urls = urls(&servers);
    let mut redlock = client(&urls, config(3));

    let guard = redlock
        .lock("jobs", Millis(5_000))
        .unwrap()
        .expect("2 of 3 is a quorum");
    assert!(guard.is_valid());
    let errors = guard.node_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].node.index(), 2);
    assert_eq!(errors[0].error.node, urls[2]);
    assert!(
        matches!(errors[0].error.cause, Cause::Unreachable(_)),
        "{}",
        errors[0].error
    );
    let token = guard.token().to_string();
    assert_eq!(servers[0].get("jobs"), Some(token.clone()));
    assert_eq!(servers[1].get("jobs"), Some(token));
    let released = guard.unlock();
    assert_eq!(released.applied.len(), 2);
    assert_eq!(servers[0].get("jobs"), None);
}

#[test]
fn extend_moves_the_deadline_and_the_ttl_on_every_node() {
    let servers = cluster(3);
    let urls = urls(&servers);
    let mut redlock = client(&urls, config(3));
    let mut guard = redlock
        .lock("extend-me", Millis(2_000))
        .unwrap()
        .expect("free");
    let before = guard.deadline();
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(guard.extend().unwrap(), "a held lock extends");
    assert!(guard.deadline() > before);
    for server in &servers {
        let ttl: i64 = redis::cmd("PTTL")
            .arg("extend-me")
            .query(&mut server.connection())
            .unwrap();
        assert!(
            ttl > 1_900,
            "PEXPIRE reset the TTL to 2000 ms (without it about 1700 would be left), PTTL is {ttl}"
        );
    }
    guard.unlock();
}

/// A node that lost its script cache after the client connected (`SCRIPT FLUSH`, or a restart
/// the connection did not see) answers the release's `EVALSHA` with `NOSCRIPT`: the client
/// loads the script and sends the release again, and the key goes.
#[test]
fn a_release_after_the_nodes_flushed_their_scripts_still_deletes_the_key() {
    let servers = cluster(3);
    let urls = urls(&servers);
    let mut redlock = client(&urls, config(3));
    let guard = redlock
        .lock("flushed", Millis(10_000))
        .unwrap()
        .expect("a free lock");
    for server in &servers {
        let flushed: String = redis::cmd("SCRIPT")
            .arg("FLUSH")
            .query(&mut server.connection())
            .unwrap();
        assert_eq!(flushed, "OK");
    }
    let released = guard.unlock();
    assert_eq!(released.applied.len(), 3, "{released:?}");
    for server in &servers {
        assert_eq!(server.get("flushed"), None);
    }
}
