//! What a lock costs the masters: with fencing off (the default) one plain `SET NX PX` per node
//! and nothing left behind once released; with fencing on, the script and one counter per node,
//! however many names were locked (a hundred thousand, pipelined through the core).

use std::time::Instant;

use redlock_lab::driver::RedisNode;
use redlock_lab::driver::redis::{command, read_reply};
use redlock_lab::proto::{AcquireOutcome, Command, FENCE_COUNTER_KEY, Fencing, Lock, Next};
use redlock_lab::rand_core::RngCore;
use redlock_lab::time::Millis;

use crate::harness::{Alone, RedisServer, cluster, urls};
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
    let mut last = None;
    for i in 0..names {
        let resource = format!("order:{i}");
        let guard = redlock
            .lock(&resource, Millis(10_000))
            .unwrap()
            .unwrap_or_else(|| panic!("{resource} is free"));
        assert_eq!(guard.fencing_token().is_some(), fencing != Fencing::Off);
        // One counter for every name: each token is above every earlier name's.
        let token = guard.fencing_token();
        assert!(token > last || token.is_none(), "{token:?} after {last:?}");
        last = token;
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
fn with_fencing_on_every_name_shares_one_counter_and_the_acquisition_runs_the_script() {
    let servers = cluster(3);
    lock_many(&servers, Fencing::WriteBack, 50);
    for server in &servers {
        assert_eq!(
            key_count(server),
            1,
            "one counter for every name on {}",
            server.url()
        );
        let counter: u64 = server
            .get(redlock_lab::proto::FENCE_COUNTER_KEY)
            .expect("the shared counter")
            .parse()
            .expect("an integer");
        assert!(counter >= 50, "{counter}: one counter counted every lock");
        // Commands a script runs count too: its SET, and the counter's INCR.
        assert_eq!(server.calls("incr"), 50, "one increment per lock");
        // The counted SET and the release: two scripts per lock. On idle masters every
        // counter moves with every lock, so a quorum already returns the fence and no
        // write-back round is sent (`QuorumRound::needs_write_back`); the tests below spread
        // the counters to send one every time.
        assert_eq!(server.calls("evalsha"), 100);
    }
}

/// Clears every server's command counts (`CONFIG RESETSTAT`).
fn reset_stats(servers: &[RedisServer]) {
    for server in servers {
        let () = redis::cmd("CONFIG")
            .arg("RESETSTAT")
            .query(&mut server.connection())
            .expect("CONFIG RESETSTAT");
    }
}

/// Waits up to two seconds for every server to have run `expected` calls of each command
/// (an async round's stragglers may still be on their way), then returns what each ran.
fn settled_calls(servers: &[RedisServer], expected: &[(&str, u64)]) -> Vec<Vec<(String, u64)>> {
    let read = || -> Vec<Vec<(String, u64)>> {
        servers
            .iter()
            .map(|server| {
                expected
                    .iter()
                    .map(|(command, _)| ((*command).to_owned(), server.calls(command)))
                    .collect()
            })
            .collect()
    };
    let wanted: Vec<(String, u64)> = expected
        .iter()
        .map(|(c, n)| ((*c).to_owned(), *n))
        .collect();
    let started = std::time::Instant::now();
    loop {
        let calls = read();
        if calls.iter().all(|node| *node == wanted) || started.elapsed().as_secs() >= 2 {
            return calls;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// What `rounds` cycles of lock, extend and unlock must have sent every node: with fencing
/// off a plain SET and two scripts (extension, release); with it on four scripts (the counted
/// SET, the write-back, the extension, the release), one increment, and the test's own
/// `INCRBY` ([`spread_counters`]).
fn expected_per_node(fencing: Fencing, rounds: u64) -> Vec<(&'static str, u64)> {
    match fencing {
        Fencing::Off => vec![("set", rounds), ("evalsha", 2 * rounds), ("incr", 0)],
        _ => vec![
            ("evalsha", 4 * rounds),
            ("incr", rounds),
            ("incrby", rounds),
        ],
    }
}

/// Raises node i's fencing counter by i + 1, so that no two nodes' counters agree and every
/// acquisition with fencing on needs its write-back round (counters that a quorum agrees on
/// need none).
/// `connections` holds one per node, opened before the counts were reset, so the test's own
/// commands add no connection to them.
fn spread_counters(connections: &mut [redis::Connection]) {
    for (i, connection) in connections.iter_mut().enumerate() {
        let _: u64 = redis::cmd("INCRBY")
            .arg(redlock_lab::proto::FENCE_COUNTER_KEY)
            .arg(i + 1)
            .query(connection)
            .expect("INCRBY");
    }
}

const ROUNDS: u64 = 200;

#[test]
fn the_blocking_client_sends_every_command_of_every_round_to_every_node() {
    let servers = cluster(5);
    for fencing in [Fencing::Off, Fencing::WriteBack] {
        let mut config = config(5);
        config.fencing = fencing;
        let mut redlock = client(&urls(&servers), config);
        // Connect and use every script once first (a node that does not know a script yet
        // answers NOSCRIPT to the first EVALSHA), so the counts hold only the rounds.
        let mut warm = redlock
            .lock("warm-up", Millis(10_000))
            .unwrap()
            .expect("free");
        assert!(warm.extend().unwrap());
        warm.unlock();
        let mut counters: Vec<_> = servers.iter().map(RedisServer::connection).collect();
        reset_stats(&servers);
        for i in 0..ROUNDS {
            if fencing != Fencing::Off {
                spread_counters(&mut counters);
            }
            let mut guard = redlock
                .lock(&format!("round:{i}"), Millis(10_000))
                .unwrap()
                .expect("free");
            assert!(guard.extend().unwrap());
            guard.unlock();
        }
        let expected = expected_per_node(fencing, ROUNDS);
        let wanted: Vec<(String, u64)> = expected
            .iter()
            .map(|(c, n)| ((*c).to_owned(), *n))
            .collect();
        for (n, calls) in settled_calls(&servers, &expected).iter().enumerate() {
            assert_eq!(*calls, wanted, "n{} with {fencing:?}", n + 1);
        }
    }
}

/// How many connections `server` accepted since its stats were reset (`INFO stats`), the one
/// this reading opens included.
#[cfg(feature = "tokio")]
fn connections_received(server: &RedisServer) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("stats")
        .query(&mut server.connection())
        .expect("INFO stats");
    info.lines()
        .find_map(|line| line.strip_prefix("total_connections_received:"))
        .map(|n| n.trim().parse().expect("a connection count"))
        .expect("INFO stats counts connections")
}

/// [`ROUNDS`] cycles of lock, extend and unlock of `round:<pass>:<i>` with the async client,
/// every other one on a fresh client whose requests connect first: the round is decided by the
/// first three nodes while the others still connect, and their requests must still run, in
/// order, over one connection per node and client.
#[cfg(feature = "tokio")]
async fn async_rounds(
    urls: &[String],
    config: redlock_lab::proto::Config,
    pass: &str,
    counters: &mut [redis::Connection],
) {
    use redlock_lab::driver::redis::asynchronous::AsyncRedlock;

    let mut redlock = AsyncRedlock::open(urls, config).unwrap();
    for i in 0..ROUNDS {
        let mut fresh;
        let redlock = if i % 2 == 0 {
            fresh = AsyncRedlock::open(urls, config).unwrap();
            &mut fresh
        } else {
            &mut redlock
        };
        if config.fencing != Fencing::Off {
            spread_counters(counters);
        }
        let mut guard = redlock
            .lock(&format!("round:{pass}:{i}"), Millis(10_000))
            .await
            .unwrap()
            .expect("free");
        assert!(guard.extend().await.unwrap());
        guard.unlock().await;
    }
}

/// Waits until the runtime's tasks have all finished, once every client is dropped: the
/// decided rounds' stragglers (each bounded by its round's deadline; a straggler's command has
/// run on its node once its reply was read) and the connections' own tasks. The tasks stop
/// whenever the runtime is not driven, so a test cannot just wait beside them.
#[cfg(feature = "tokio")]
async fn stragglers_finished() {
    let metrics = tokio::runtime::Handle::current().metrics();
    let started = Instant::now();
    while metrics.num_alive_tasks() > 0 && started.elapsed().as_secs() < 5 {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(
        metrics.num_alive_tasks(),
        0,
        "stragglers outlived their rounds"
    );
}

#[cfg(feature = "tokio")]
#[test]
fn the_async_client_sends_every_command_of_every_round_to_every_node_in_order() {
    use redlock_lab::driver::redis::asynchronous::AsyncRedlock;

    let servers = cluster(5);
    let urls = urls(&servers);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    for fencing in [Fencing::Off, Fencing::WriteBack] {
        let mut config = config(5);
        config.fencing = fencing;
        // A straggler is bounded by its round's deadline, and on a loaded machine a fresh
        // connection may take longer than the usual half second.
        config.round_timeout = Millis(2_000);
        let mut counters: Vec<_> = servers.iter().map(RedisServer::connection).collect();
        if fencing != Fencing::Off {
            // So that the warm-up's acquisition runs the write-back script too.
            spread_counters(&mut counters);
        }
        runtime.block_on(async {
            // Every script once first, as above, and its stragglers landed.
            {
                let mut redlock = AsyncRedlock::open(&urls, config).unwrap();
                let mut warm = redlock.lock("warm-up", Millis(10_000)).await.unwrap();
                assert!(warm.as_mut().expect("free").extend().await.unwrap());
                warm.expect("free").unlock().await;
            }
            stragglers_finished().await;
        });
        reset_stats(&servers);
        runtime.block_on(async {
            async_rounds(&urls, config, &format!("{fencing:?}"), &mut counters).await;
            stragglers_finished().await;
        });
        let expected = expected_per_node(fencing, ROUNDS);
        let wanted: Vec<(String, u64)> = expected
            .iter()
            .map(|(c, n)| ((*c).to_owned(), *n))
            .collect();
        for (n, server) in servers.iter().enumerate() {
            let node = format!("n{} with {fencing:?}", n + 1);
            // One per client (the long-lived one's, and each fresh one's) and this reading's
            // own: a straggler's connection serves its node's next requests.
            assert_eq!(connections_received(server), ROUNDS / 2 + 2, "{node}");
            let calls: Vec<(String, u64)> = expected
                .iter()
                .map(|(command, _)| ((*command).to_owned(), server.calls(command)))
                .collect();
            assert_eq!(calls, wanted, "{node}");
            // A release that overtook its acquisition would leave the key behind.
            let counter = u64::from(fencing != Fencing::Off);
            assert_eq!(key_count(server), counter, "{node}");
        }
    }
}

/// How many names the bounded-memory test locks, with fencing off and on.
const MANY_NAMES: usize = 100_000;

/// How many of them are locked at once: one pipeline per node and step of the algorithm.
const CHUNK: usize = 10_000;

/// The random source of the pipelined test's many locks at once: SplitMix64, so each lock's
/// tokens differ without a ChaCha state per lock (they need not be secret here).
struct SplitMix(u64);

impl RngCore for SplitMix {
    fn next_u32(&mut self) -> u32 {
        self.next_u64() as u32
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        redlock_lab::rand_core::impls::fill_bytes_via_next(self, dest);
    }
}

/// Runs one operation of every lock in `locks` (lock `i` guards `names[i]`) to its end: each
/// step's commands of all locks go to each node as one pipeline, built and read exactly as the
/// clients build and read them ([`command`], [`read_reply`]), and every reply is handed to its
/// lock. Returns each lock's outcome.
fn drive_all<T>(
    nodes: &mut [redis::Connection],
    names: &[String],
    locks: &mut [Lock<SplitMix>],
    now: impl Fn() -> Millis,
    poll: impl Fn(&mut Lock<SplitMix>) -> Next<T>,
) -> Vec<T> {
    let mut done: Vec<Option<T>> = locks.iter().map(|_| None).collect();
    loop {
        let mut pipes: Vec<redis::Pipeline> = nodes.iter().map(|_| redis::pipe()).collect();
        let mut sent: Vec<Vec<(usize, Command)>> = nodes.iter().map(|_| Vec::new()).collect();
        for (i, lock) in locks.iter_mut().enumerate() {
            if done[i].is_some() {
                continue;
            }
            match poll(lock) {
                Next::Send(batch) => {
                    for sending in batch {
                        let fencing = lock.params().fencing;
                        let node = sending.node.index();
                        pipes[node].add_command(command(&names[i], &sending.op, fencing));
                        sent[node].push((i, sending));
                    }
                }
                Next::WaitUntil(due) => panic!("{} waits until {due}: all answered", names[i]),
                Next::Done(outcome) => done[i] = Some(outcome),
            }
        }
        if sent.iter().all(Vec::is_empty) {
            return done.into_iter().map(|outcome| outcome.unwrap()).collect();
        }
        // Every node's pipeline first, then the replies: the nodes work at the same time.
        for (node, pipe) in nodes.iter_mut().zip(&pipes) {
            node.send_packed_command(&pipe.get_packed_pipeline())
                .expect("the node takes the pipeline");
        }
        for (node, sent) in nodes.iter_mut().zip(sent) {
            for (i, answered) in sent {
                let reply = node.recv_response().expect("the node answers");
                let fencing = locks[i].params().fencing;
                let reply = read_reply(&names[i], &answered.op, fencing, reply)
                    .unwrap_or_else(|cause| panic!("{}: {cause}", names[i]));
                locks[i].handle_reply(answered.round, answered.node, reply, now());
            }
        }
    }
}

/// Locks and releases `names` on `servers` with `fencing`, [`CHUNK`] locks at once, through the
/// core and the clients' own commands; returns each lock's fencing token.
fn lock_pipelined(servers: &[RedisServer], fencing: Fencing, names: &[String]) -> Vec<u64> {
    // A connection of the client's own loads its scripts on every server (`EVALSHA` hits).
    for url in urls(servers) {
        let mut node = RedisNode::open(&url).unwrap();
        node.query(&redis::cmd("PING")).expect("a live node");
    }
    let mut nodes: Vec<redis::Connection> = servers.iter().map(|s| s.connection()).collect();
    let mut config = config(servers.len());
    config.fencing = fencing;
    // A step of ten thousand locks is one round of each; the lease outlives it by far.
    config.round_timeout = Millis(20_000);
    let origin = Instant::now();
    let now = || Millis(origin.elapsed().as_millis() as u64);
    let mut tokens = Vec::with_capacity(names.len());
    for (chunk, names) in names.chunks(CHUNK).enumerate() {
        let mut locks: Vec<Lock<SplitMix>> = (0..names.len())
            .map(|i| {
                let seed = (chunk * CHUNK + i) as u64;
                Lock::acquire(&config, Millis(60_000), SplitMix(seed), now()).unwrap()
            })
            .collect();
        let acquired = drive_all(&mut nodes, names, &mut locks, now, |lock| {
            lock.poll_acquisition().unwrap()
        });
        for (name, outcome) in names.iter().zip(acquired) {
            assert!(
                matches!(outcome, AcquireOutcome::Acquired { .. }),
                "{name}: {outcome:?}"
            );
        }
        tokens.extend(locks.iter().map(|lock| lock.lease().unwrap().fence));
        locks.iter_mut().for_each(|lock| lock.release(now()));
        let released = drive_all(&mut nodes, names, &mut locks, now, Lock::poll_release);
        for (name, tally) in names.iter().zip(released) {
            assert_eq!(
                tally.applied.len(),
                servers.len(),
                "{name} released everywhere"
            );
        }
    }
    tokens
}

#[test]
fn a_hundred_thousand_names_leave_no_key_with_fencing_off_and_one_counter_with_it_on() {
    // Seconds of every core: no timing-sensitive test may run beside it.
    let alone = Alone::wait();
    let servers = alone.cluster(3);
    let names: Vec<String> = (0..MANY_NAMES).map(|i| format!("order:{i}")).collect();
    for fencing in [Fencing::Off, Fencing::WriteBack] {
        let started = Instant::now();
        let tokens = lock_pipelined(&servers, fencing, &names);
        eprintln!("{MANY_NAMES} names, {fencing:?}: {:?}", started.elapsed());
        for server in &servers {
            let counter = server.get(FENCE_COUNTER_KEY);
            if fencing == Fencing::Off {
                assert_eq!(key_count(server), 0, "nothing left on {}", server.url());
                assert_eq!(counter, None, "no counter on {}", server.url());
                continue;
            }
            assert_eq!(key_count(server), 1, "only the counter on {}", server.url());
            let counter: u64 = counter.expect("the counter").parse().unwrap();
            assert_eq!(
                counter,
                MANY_NAMES as u64,
                "one count per name on {}",
                server.url()
            );
        }
        if fencing != Fencing::Off {
            // One counter for every name: each name's token is above every earlier name's.
            assert!(tokens.windows(2).all(|pair| pair[0] < pair[1]));
        }
    }
}
