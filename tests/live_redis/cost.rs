//! What a lock costs the masters: with fencing off (the default) one plain `SET NX PX` per node
//! and nothing left behind once released; with fencing on, the script and one counter per name.

use redlock_lab::proto::Fencing;
use redlock_lab::time::Millis;

use crate::harness::{RedisServer, cluster, urls};
use crate::{client, config};

/// How many keys `server` holds.
pub fn key_count(server: &RedisServer) -> u64 {
    redis::cmd("DBSIZE")
        .query(&mut server.connection())
        .expect("DBSIZE")
}

/// Locks and releases `names` distinct resources with `fencing`.
fn lock_many(servers: &[RedisServer], fencing: Fencing, names: usize) {
    let mut config = config(servers.len());
    config.fencing = fencing;
    let mut redlock = client(&urls(servers), config);
    for i in 0..names {
        let resource = format!("order:{i}");
        let guard = redlock
            .lock(&resource, Millis(10_000))
            .unwrap()
            .unwrap_or_else(|| panic!("{resource} is free"));
        assert_eq!(guard.fencing_token().is_some(), fencing != Fencing::Off);
        assert_eq!(guard.unlock().applied.len(), servers.len());
    }
}

#[test]
fn with_fencing_off_a_lock_is_one_plain_set_and_leaves_no_key_on_the_masters() {
    let servers = cluster(3);
    lock_many(&servers, Fencing::Off, 500);
    for server in &servers {
        assert_eq!(
            key_count(server),
            0,
            "no counter, no key left on {}",
            server.url()
        );
        assert_eq!(server.calls("set"), 500, "one SET per lock");
        // The releases are the only scripts, and nothing counts.
        assert_eq!(server.calls("evalsha"), 500);
        assert_eq!(server.calls("incr"), 0);
    }
}

#[test]
fn with_fencing_on_each_name_keeps_its_counter_and_the_acquisition_runs_the_script() {
    let servers = cluster(3);
    lock_many(&servers, Fencing::WriteBack, 50);
    for server in &servers {
        assert_eq!(
            key_count(server),
            50,
            "one counter per name on {}",
            server.url()
        );
        // Commands a script runs count too: its SET, and the counter's INCR.
        assert_eq!(server.calls("incr"), 50, "one increment per lock");
        // The counted SET, the write-back and the release: three scripts per lock.
        assert_eq!(server.calls("evalsha"), 150);
    }
}
