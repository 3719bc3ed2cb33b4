//! A client paused past its validity: without fencing its stale write lands on top of the next
//! holder's; with the fenced store (a fencing token from INCR on a separate counter node,
//! checked and applied atomically by a Lua script) it is rejected.

use std::thread;
use std::time::Duration;

use redlock_lab::driver::redis::NodeOptions;
use redlock_lab::driver::redis::fenced::{FencedStore, FencingCounter, FencingToken, Write};
use redlock_lab::time::Millis;

use crate::harness::{RedisServer, cluster, urls};
use crate::{client, config};

#[test]
fn a_client_paused_past_its_validity_writes_stale_data_unless_the_store_is_fenced() {
    let servers = cluster(3);
    let counter_node = RedisServer::start();
    let storage = RedisServer::start();
    let urls = urls(&servers);
    let mut a = client(&urls, config(3));
    let mut b = client(&urls, config(3));
    let mut counter = FencingCounter::open(&counter_node.url(), NodeOptions::default()).unwrap();
    let mut store = FencedStore::open(&storage.url(), NodeOptions::default()).unwrap();
    let mut plain = storage.connection();
    let ttl = Millis(400);

    // A acquires, takes its token, and then stops (a GC pause, a swapped-out VM) past its TTL.
    let guard_a = a.lock("file", ttl).unwrap().expect("free");
    let token_a = counter.next("file").unwrap();
    assert!(guard_a.is_valid());
    thread::sleep(Duration::from_millis(600));
    assert!(
        !guard_a.is_valid(),
        "A's lease is over, but A has not looked"
    );

    // Meanwhile the keys expired and B took the lock, with a larger token, and wrote.
    let guard_b = b.lock("file", ttl).unwrap().expect("A's keys expired");
    let token_b = counter.next("file").unwrap();
    assert!(token_b > token_a);
    assert_eq!(store.write("fenced", "B", token_b).unwrap(), Write::Applied);
    let _: () = redis::cmd("SET")
        .arg("unfenced")
        .arg("B")
        .query(&mut plain)
        .unwrap();

    // A wakes up and writes what it computed before the pause.
    let _: () = redis::cmd("SET")
        .arg("unfenced")
        .arg("A")
        .query(&mut plain)
        .unwrap();
    assert_eq!(
        storage.get("unfenced").as_deref(),
        Some("A"),
        "without fencing the stale write lands on top of B's"
    );
    assert_eq!(
        store.write("fenced", "A", token_a).unwrap(),
        Write::Rejected { newest: token_b },
        "the fenced store refuses the older token"
    );
    assert_eq!(store.read("fenced").unwrap().as_deref(), Some("B"));

    // B may write again with its own token; the lock's holders are unaffected by all this.
    assert_eq!(
        store.write("fenced", "B2", token_b).unwrap(),
        Write::Applied
    );
    assert_eq!(
        store.write("fenced", "old", FencingToken(0)).unwrap(),
        Write::Rejected { newest: token_b }
    );
    guard_b.unlock();
    drop(guard_a);
}
