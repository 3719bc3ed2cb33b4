//! Bad input: unreachable and garbage URLs, too few live nodes, a zero TTL, the reserved
//! counter's name, keys that another program wrote (at the lock's name, at the fencing counter),
//! and a "server" that answers with the wrong reply type. Each gives a typed error that names
//! the node (and the key), nothing panics, and nothing is left locked.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::thread;

use redlock_lab::driver::redis::{Cause, OpenError};
use redlock_lab::driver::{Acquisition, DriverError, RedisRedlock};
use redlock_lab::proto::{ConfigError, FENCE_COUNTER_KEY, Fencing, RoundDecision};
use redlock_lab::time::Millis;

use crate::harness::{RedisServer, cluster, free_port, urls};
use crate::{client, config};

#[test]
fn garbage_urls_are_refused_when_the_client_is_built_naming_the_node_without_its_password() {
    for url in [
        "not a url",
        "http://127.0.0.1:6379",
        "redis://:pw@127.0.0.1:notaport",
    ] {
        let error = RedisRedlock::open(&[url], config(1)).expect_err(url);
        let OpenError::Node(error) = &error else {
            panic!("{url}: expected a node error, got {error}");
        };
        assert!(
            matches!(error.cause, Cause::InvalidUrl(_)),
            "{url}: {error}"
        );
        assert!(
            !error.to_string().contains(":pw@"),
            "password leaked: {error}"
        );
    }
    let none: [&str; 0] = [];
    let error = RedisRedlock::open(&none, config(0)).expect_err("no nodes");
    assert!(
        matches!(
            error,
            OpenError::Config(DriverError::Config(ConfigError::NoNodes))
        ),
        "{error}"
    );
}

#[test]
fn unreachable_nodes_are_told_apart_from_contention_and_a_lone_live_node_is_released() {
    let servers = cluster(1);
    let dead = [free_port(), free_port()].map(|port| format!("redis://127.0.0.1:{port}"));
    let urls = vec![servers[0].url(), dead[0].clone(), dead[1].clone()];
    let mut redlock = client(&urls, config(3));

    let Acquisition::Unreachable(unreachable) = redlock.try_lock("lonely", Millis(5_000)).unwrap()
    else {
        panic!("two dead nodes of three were not reported as unreachable");
    };
    assert_eq!(unreachable.quorum, 2);
    assert_eq!(unreachable.attempts, 1, "try_lock is one attempt");
    // The round's causes, one per dead node, in node order; the rest are its releases.
    let causes: Vec<usize> = unreachable.causes.iter().map(|c| c.node.index()).collect();
    assert_eq!(causes, [1, 2], "{unreachable:?}");
    assert_eq!(unreachable.errors.len(), 2, "{:?}", unreachable.errors);
    // `lock` retries (two attempts in this binary's configuration): the last round's causes,
    // then the first round's SETs and both rounds' releases.
    let Err(DriverError::Unreachable(retried)) = redlock.lock("lonely", Millis(5_000)) else {
        panic!("lock reports two dead nodes of three as an error");
    };
    assert_eq!(retried.attempts, 2);
    assert_eq!(retried.errors.len(), 6, "{:?}", retried.errors);
    for error in unreachable.causes.iter().chain(&unreachable.errors) {
        assert!(
            matches!(error.error.cause, Cause::Unreachable(_)),
            "{}",
            error.error
        );
        assert_eq!(error.error.node, urls[error.node.index()]);
    }
    let message = unreachable.to_string();
    assert!(
        message.starts_with("no quorum of nodes reachable: 2 nodes failed, a quorum is 2; n2: "),
        "{message}"
    );
    assert!(
        message.contains(&dead[0]) && message.contains(&dead[1]),
        "{message}"
    );
    assert_eq!(
        servers[0].get("lonely"),
        None,
        "the failed round released the live node"
    );
}

#[test]
fn with_no_server_running_lock_is_an_error_naming_every_node_not_a_quiet_none() {
    let urls: Vec<String> = (0..3)
        .map(|_| format!("redis://127.0.0.1:{}", free_port()))
        .collect();
    let mut redlock = client(&urls, config(3));
    let error = redlock
        .lock("orders", Millis(10_000))
        .expect_err("no node can answer");
    let DriverError::Unreachable(unreachable) = &error else {
        panic!("not reported as unreachable: {error}");
    };
    assert_eq!(unreachable.causes.len(), 3, "{error}");
    let message = error.to_string();
    for (index, url) in urls.iter().enumerate() {
        assert!(
            message.contains(&format!("n{}: redis node {url}: unreachable", index + 1)),
            "{url} is not named: {message}"
        );
    }
}

#[test]
fn a_zero_ttl_and_an_empty_resource_are_refused_before_anything_is_sent() {
    let servers = cluster(3);
    let mut redlock = client(&urls(&servers), config(3));
    let error = redlock.lock("zero", Millis(0)).expect_err("zero ttl");
    assert!(
        matches!(error, DriverError::Config(ConfigError::ZeroTtl)),
        "{error}"
    );
    let error = redlock.lock("", Millis(1_000)).expect_err("empty resource");
    assert!(
        matches!(error, DriverError::Config(ConfigError::EmptyResource)),
        "{error}"
    );
    let error = redlock
        .lock(FENCE_COUNTER_KEY, Millis(1_000))
        .expect_err("the counter's name");
    assert!(
        matches!(error, DriverError::Config(ConfigError::ReservedResource)),
        "{error}"
    );
    assert!(error.to_string().contains(FENCE_COUNTER_KEY), "{error}");
    for server in &servers {
        assert_eq!(server.calls("set"), 0, "nothing was sent");
    }
}

/// Writes `value` at `key` on `servers` as another program would: a string, or a list when
/// `list` is set.
fn foreign_key(servers: &[RedisServer], key: &str, value: &str, list: bool) {
    for server in servers {
        let command = if list { "RPUSH" } else { "SET" };
        let () = redis::cmd(command)
            .arg(key)
            .arg(value)
            .query(&mut server.connection())
            .unwrap();
    }
}

/// The collision `error` must be: `key`, named by `nodes` (node indexes) in the error, its
/// message and each cause, each cause naming its node's URL.
fn assert_collision(error: &DriverError, key: &str, nodes: &[usize], urls: &[String]) {
    let DriverError::Collision(collision) = error else {
        panic!("not reported as a collision: {error}");
    };
    assert_eq!(collision.key, key, "{error}");
    let message = error.to_string();
    assert!(
        message.starts_with(&format!(
            "key {key:?} holds a value this client did not write on n"
        )),
        "{message}"
    );
    assert!(!collision.causes.is_empty(), "{error}");
    for cause in &collision.causes {
        assert!(nodes.contains(&cause.node.index()), "{error}");
        assert!(message.contains(&urls[cause.node.index()]), "{message}");
        let text = cause.error.to_string();
        assert!(text.contains(&format!("{key:?}")), "{text}");
    }
}

#[test]
fn a_key_of_another_type_at_the_locks_name_is_a_collision_naming_it() {
    let servers = cluster(3);
    let urls = urls(&servers);
    foreign_key(&servers[..2], "queue", "someone else's list", true);
    for fencing in [Fencing::Off, Fencing::WriteBack] {
        let mut fenced = config(3);
        fenced.fencing = fencing;
        let mut redlock = client(&urls, fenced);
        // SET NX says no on a list; the release's compare-and-delete reads it: WRONGTYPE.
        let error = redlock
            .try_lock("queue", Millis(5_000))
            .expect_err("a list is not a lock");
        assert_collision(&error, "queue", &[0, 1], &urls);
        let error = redlock.lock("queue", Millis(5_000)).expect_err("lock too");
        assert_collision(&error, "queue", &[0, 1], &urls);
    }
    // The release is decided at quorum: its DEL to the third node is written before `lock`
    // returns, but that node may run it a moment after this test's own connection asks.
    let started = std::time::Instant::now();
    while servers[2].get("queue").is_some() && started.elapsed().as_secs() < 2 {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(servers[2].get("queue"), None, "the third node was released");
    let kind: String = redis::cmd("TYPE")
        .arg("queue")
        .query(&mut servers[0].connection())
        .unwrap();
    assert_eq!(kind, "list", "the stranger's list is untouched");
}

/// As `Collision`'s documentation says: a foreign value on a minority of the nodes of a round
/// that wins is not seen by the acquisition (`SET NX` answers no, as to another holder).
#[test]
fn a_foreign_value_on_a_minority_of_a_won_round_is_not_a_collision() {
    let servers = cluster(3);
    let urls = urls(&servers);
    foreign_key(&servers[2..], "queue", "someone else's list", true);
    let mut redlock = client(&urls, config(3));
    let Acquisition::Acquired(guard) = redlock.try_lock("queue", Millis(5_000)).unwrap() else {
        panic!("two free nodes of three are a quorum");
    };
    assert!(guard.node_errors().is_empty(), "{:?}", guard.node_errors());
    guard.unlock();
    let kind: String = redis::cmd("TYPE")
        .arg("queue")
        .query(&mut servers[2].connection())
        .unwrap();
    assert_eq!(kind, "list", "the stranger's list is untouched");
}

#[test]
fn a_foreign_value_at_the_fencing_counter_is_a_collision_naming_the_counter() {
    let servers = cluster(3);
    let urls = urls(&servers);
    for list in [false, true] {
        foreign_key(&servers, FENCE_COUNTER_KEY, "not a number", list);
        let mut fenced = config(3);
        fenced.fencing = Fencing::WriteBack;
        let mut redlock = client(&urls, fenced);
        let error = redlock
            .lock("orders", Millis(5_000))
            .expect_err("no counter to count with");
        assert_collision(&error, FENCE_COUNTER_KEY, &[0, 1, 2], &urls);
        for server in &servers {
            assert_eq!(server.get("orders"), None, "the SET was undone");
        }
        // With fencing off nothing reads the counter, so the name is free.
        let mut plain = client(&urls, config(3));
        let guard = plain.lock("orders", Millis(5_000)).unwrap();
        assert_eq!(guard.expect("free").unlock().applied.len(), 3);
        for server in &servers {
            let () = redis::cmd("DEL")
                .arg(FENCE_COUNTER_KEY)
                .query(&mut server.connection())
                .unwrap();
        }
    }
}

#[test]
fn names_that_once_collided_with_a_counter_no_longer_do() {
    let servers = cluster(3);
    let mut fenced = config(3);
    fenced.fencing = Fencing::WriteBack;
    let mut redlock = client(&urls(&servers), fenced);
    let mut holder = client(&urls(&servers), fenced);
    // `a` then `a:fence`: the second answered "another client holds it" forever.
    let a = redlock
        .lock("a", Millis(5_000))
        .unwrap()
        .expect("a is free");
    assert_eq!(a.unlock().applied.len(), 3);
    let a_fence = redlock.lock("a:fence", Millis(5_000)).unwrap();
    assert!(a_fence.is_some(), "a:fence is its own resource");
    drop(a_fence);
    // Holding `b:fence`, then `b`: the second was a "no quorum" of non-integer counters.
    let b_fence = holder.lock("b:fence", Millis(5_000)).unwrap();
    assert!(b_fence.is_some(), "b:fence is free");
    assert!(
        redlock.lock("b", Millis(5_000)).unwrap().is_some(),
        "b is free"
    );
    // An application's list at `c:fence`: locking `c` was a WRONGTYPE "no quorum".
    foreign_key(&servers, "c:fence", "an application's list", true);
    assert!(
        redlock.lock("c", Millis(5_000)).unwrap().is_some(),
        "c is free"
    );
    drop(b_fence);
    for server in &servers {
        let kind: String = redis::cmd("TYPE")
            .arg("c:fence")
            .query(&mut server.connection())
            .unwrap();
        assert_eq!(kind, "list", "the application's list is untouched");
    }
}

/// A TCP server that answers every RESP command with the integer 42.
fn forty_two_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            thread::spawn(move || {
                let mut writer = stream.try_clone().unwrap();
                let mut reader = BufReader::new(stream);
                let mut line = String::new();
                // Each command is an array header `*n` followed by n bulk strings `$len` + data.
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                    let count: usize = line.trim_start_matches('*').trim().parse().unwrap_or(0);
                    for _ in 0..count {
                        line.clear();
                        if reader.read_line(&mut line).is_err() {
                            return;
                        }
                        let len: usize = line.trim_start_matches('$').trim().parse().unwrap_or(0);
                        let mut data = vec![0; len + 2];
                        if reader.read_exact(&mut data).is_err() {
                            return;
                        }
                    }
                    line.clear();
                    if writer.write_all(b":42\r\n").is_err() {
                        return;
                    }
                }
            });
        }
    });
    port
}

#[test]
fn a_server_that_answers_with_the_wrong_reply_type_is_a_named_error_not_a_panic() {
    let servers = cluster(2);
    let fake = format!("redis://127.0.0.1:{}", forty_two_server());
    let urls = vec![servers[0].url(), servers[1].url(), fake.clone()];
    // Wait for every reply: decided at quorum, the client would never read the fake's.
    let mut all_replies = config(3);
    all_replies.decision = RoundDecision::AllReplies;
    let mut redlock = client(&urls, all_replies);
    let guard = redlock
        .lock("typed", Millis(5_000))
        .unwrap()
        .expect("two real nodes");
    let errors = guard.node_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].error.node, fake);
    let Cause::UnexpectedReply { command, reply } = &errors[0].error.cause else {
        panic!(
            "expected an unexpected-reply error, got {}",
            errors[0].error
        );
    };
    assert_eq!(*command, "SET NX PX");
    assert!(reply.contains("42"), "{reply}");
    guard.unlock();
    for server in &servers {
        assert_eq!(server.get("typed"), None);
    }
}
