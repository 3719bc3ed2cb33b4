//! The Redis client against 3 and 5 local `redis-server` processes, as a ratio to the floor
//! measured in the same run: a raw single-node `SET NX PX` + compare-and-delete (`EVALSHA`)
//! over one persistent connection, one round trip each.
//!
//! ```sh
//! cargo bench --all-features --bench redis_client   # OPS=3000 REPEATS=3 by default
//! OPS=10000 REPEATS=5 cargo bench --bench redis_client
//! ```
//!
//! Rows: `raw` (the floor), `redlock` (this crate: every round written to all nodes before any
//! reply is read; N=1 shows the client's own cost over the floor), `sequential` (the same client with the generic one-node-after-another
//! executor, to show what the all-at-once batch buys), `raw fan-out` (the two commands written
//! to all five nodes then read, with no lock logic: the physical cost of N nodes on this
//! machine), with feature `tokio` `async` (the async client on a current-thread runtime), and
//! with features `tracing` and `metrics` `watched N=5` (the N=5 client with a subscriber and a
//! recorder installed that take every span, event and sample: what watching costs; built with
//! the features off, the `redlock` rows are the zero-cost baseline). `pooled N=3` is the N=3 client
//! checked out of a `RedisRedlockPool` for every cycle, from one thread (what the pool costs
//! there). The `contended` rows are eight threads locking one resource (retrying until they get
//! it) over three nodes, `own` with a client per thread (eight connection sets), `shared` through
//! one pool of four (four sets); their acquire times include the waits for the lock, and
//! cycles/s counts all threads. Repeats are interleaved and every figure is the median over
//! repeats. `write-back N=5` is the N=5 client with `Fencing::WriteBack` (the counter script and
//! the token's write-back round); `rslock N=3`/`N=5` is the peer baseline, rslock 0.10 (a
//! dev-dependency only), driven as `rslock_cycles` says. Targets, each printed as a `RESULT` line:
//! at N=5 with fencing off, acquire p50 ≤ 1.1 × raw and cycles/s ≥ 1.5 × rslock; with
//! write-back, acquire p50 ≤ 2.2 × raw.
//!
//! Arguments after `--` that are not flags pick the rows whose names contain one of them (the
//! floor always runs): `cargo bench --bench redis_client -- contended`.

// The live tests' harness, shared with `pub` items no user reaches (see tests/live_redis/main.rs).
#[allow(unreachable_pub)]
#[path = "../tests/live_redis/harness.rs"]
mod harness;
// The harness reports to the live tests' watchdog when built as a test (clippy's and
// `cargo test --benches`' build of this file); the benchmark itself runs unwatched.
#[cfg(test)]
#[allow(unreachable_pub)]
#[path = "../tests/live_redis/watchdog.rs"]
mod watchdog;

use std::sync::Barrier;
use std::time::{Duration, Instant};

use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use redlock_lab::driver::redis::RedisNodeError;
use redlock_lab::driver::{MonotonicClock, RedisNode, RedisRedlock, RedisRedlockPool, Redlock};
use redlock_lab::node::Node;
use redlock_lab::proto::{Config, Fencing, RetryPolicy, Token};
use redlock_lab::time::Millis;

use harness::RedisServer;

const TTL: Millis = Millis(10_000);
const WARM_UP: usize = 300;

const DEL_IF_EQ: &str = r#"if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1])
else
  return 0
end"#;

/// Latencies of one run, in microseconds.
#[derive(Clone, Debug, Default)]
struct Run {
    acquire_us: Vec<f64>,
    release_us: Vec<f64>,
    seconds: f64,
}

/// The summary of one run.
#[derive(Clone, Copy, Debug)]
struct Summary {
    acquire_p50: f64,
    acquire_p99: f64,
    release_p50: f64,
    release_p99: f64,
    ops_per_s: f64,
}

fn percentile(samples: &mut [f64], p: f64) -> f64 {
    samples.sort_by(f64::total_cmp);
    let index = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[index]
}

impl Run {
    fn summary(mut self) -> Summary {
        let ops = self.acquire_us.len() as f64;
        Summary {
            acquire_p50: percentile(&mut self.acquire_us, 0.50),
            acquire_p99: percentile(&mut self.acquire_us, 0.99),
            release_p50: percentile(&mut self.release_us, 0.50),
            release_p99: percentile(&mut self.release_us, 0.99),
            ops_per_s: ops / self.seconds,
        }
    }
}

fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut values: Vec<f64> = values.collect();
    percentile(&mut values, 0.5)
}

fn micros(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e6
}

/// The floor: SET NX PX, then EVALSHA compare-and-delete, on one node, one connection.
fn raw(server: &RedisServer, ops: usize) -> Run {
    let mut con = server.connection();
    let script = redis::Script::new(DEL_IF_EQ);
    let _: String = script.prepare_invoke().load(&mut con).expect("SCRIPT LOAD");
    let mut rng = ChaCha20Rng::from_os_rng();
    let mut run = Run::default();
    let started = Instant::now();
    for i in 0..WARM_UP + ops {
        let key = format!("raw:{i}");
        let token = Token::random(&mut rng).to_string();
        let t = Instant::now();
        let set: Option<String> = redis::cmd("SET")
            .arg(&key)
            .arg(&token)
            .arg("NX")
            .arg("PX")
            .arg(TTL.as_u64())
            .query(&mut con)
            .expect("SET");
        let acquire = micros(t);
        assert_eq!(set.as_deref(), Some("OK"));
        let t = Instant::now();
        let deleted: i64 = redis::cmd("EVALSHA")
            .arg(script.get_hash())
            .arg(1)
            .arg(&key)
            .arg(&token)
            .query(&mut con)
            .expect("EVALSHA");
        let release = micros(t);
        assert_eq!(deleted, 1);
        if i >= WARM_UP {
            run.acquire_us.push(acquire);
            run.release_us.push(release);
        }
    }
    run.seconds = started.elapsed().as_secs_f64() * ops as f64 / (WARM_UP + ops) as f64;
    run
}

/// The physical fan-out floor: the same two commands written to every node before any reply is
/// read, on plain connections, with no lock logic at all.
fn raw_fanout(servers: &[RedisServer], ops: usize) -> Run {
    let mut cons: Vec<redis::Connection> = servers.iter().map(RedisServer::connection).collect();
    let script = redis::Script::new(DEL_IF_EQ);
    for con in &mut cons {
        let _: String = script.prepare_invoke().load(con).expect("SCRIPT LOAD");
    }
    let mut rng = ChaCha20Rng::from_os_rng();
    let mut run = Run::default();
    let started = Instant::now();
    let round = |cons: &mut [redis::Connection], cmd: &redis::Cmd| {
        let packed = cmd.get_packed_command();
        for con in cons.iter_mut() {
            con.send_packed_command(&packed).expect("send");
        }
        for con in cons.iter_mut() {
            con.recv_response().expect("reply");
        }
    };
    for i in 0..WARM_UP + ops {
        let key = format!("fanout:{i}");
        let token = Token::random(&mut rng).to_string();
        let t = Instant::now();
        round(
            &mut cons,
            redis::cmd("SET")
                .arg(&key)
                .arg(&token)
                .arg("NX")
                .arg("PX")
                .arg(TTL.as_u64()),
        );
        let acquire = micros(t);
        let t = Instant::now();
        round(
            &mut cons,
            redis::cmd("EVALSHA")
                .arg(script.get_hash())
                .arg(1)
                .arg(&key)
                .arg(&token),
        );
        let release = micros(t);
        if i >= WARM_UP {
            run.acquire_us.push(acquire);
            run.release_us.push(release);
        }
    }
    run.seconds = started.elapsed().as_secs_f64() * ops as f64 / (WARM_UP + ops) as f64;
    run
}

/// The same Redis node behind the generic, one-command-at-a-time executor.
struct Sequential(RedisNode);

impl Node for Sequential {
    type Error = RedisNodeError;

    fn set_nx_px(
        &mut self,
        key: &str,
        token: Token,
        ttl: Millis,
    ) -> Result<Option<u64>, Self::Error> {
        self.0.set_nx_px(key, token, ttl)
    }

    fn set_nx_px_plain(
        &mut self,
        key: &str,
        token: Token,
        ttl: Millis,
    ) -> Result<bool, Self::Error> {
        self.0.set_nx_px_plain(key, token, ttl)
    }

    fn raise_fence(&mut self, key: &str, token: Token, to: u64) -> Result<bool, Self::Error> {
        self.0.raise_fence(key, token, to)
    }

    fn del_if_eq(&mut self, key: &str, token: Token) -> Result<bool, Self::Error> {
        self.0.del_if_eq(key, token)
    }

    fn pexpire_if_eq(&mut self, key: &str, token: Token, ttl: Millis) -> Result<bool, Self::Error> {
        self.0.pexpire_if_eq(key, token, ttl)
    }

    fn del(&mut self, key: &str) -> Result<bool, Self::Error> {
        self.0.del(key)
    }

    fn get_eq(&mut self, key: &str, token: Token) -> Result<bool, Self::Error> {
        self.0.get_eq(key, token)
    }
}

/// `ops` measured cycles after [`WARM_UP`] unmeasured ones: `cycle(i)` runs cycle `i` and
/// returns its acquire and release times in microseconds. Every single-thread row times its
/// cycles through this one loop, so they warm up and count seconds alike.
fn timed_cycles(ops: usize, mut cycle: impl FnMut(usize) -> (f64, f64)) -> Run {
    let mut run = Run::default();
    let started = Instant::now();
    for i in 0..WARM_UP + ops {
        let (acquire, release) = cycle(i);
        if i >= WARM_UP {
            run.acquire_us.push(acquire);
            run.release_us.push(release);
        }
    }
    run.seconds = started.elapsed().as_secs_f64() * ops as f64 / (WARM_UP + ops) as f64;
    run
}

/// `ops` lock + unlock cycles on distinct resources.
fn cycles<N: Node>(redlock: &mut Redlock<N, MonotonicClock, ChaCha20Rng>, ops: usize) -> Run {
    timed_cycles(ops, |i| {
        let resource = format!("bench:{i}");
        let t = Instant::now();
        let guard = redlock.lock(&resource, TTL).expect("valid input");
        let acquire = micros(t);
        let guard = guard.unwrap_or_else(|| panic!("lock {resource} on idle local nodes"));
        let t = Instant::now();
        let released = guard.unlock();
        let release = micros(t);
        assert_eq!(released.applied.len(), redlock.nodes().len());
        (acquire, release)
    })
}

/// The N=5 cycles with every span, event and sample taken: a subscriber on the registry (which
/// enables every level) and a debugging recorder, both on this thread.
#[cfg(all(feature = "tracing", feature = "metrics"))]
fn watched_cycles(redlock: &mut RedisRedlock, ops: usize) -> Run {
    use tracing_subscriber::layer::SubscriberExt;
    let recorder = metrics_util::debugging::DebuggingRecorder::new();
    let subscriber =
        tracing_subscriber::registry().with(tracing_subscriber::layer::Identity::new());
    tracing::subscriber::with_default(subscriber, || {
        metrics::with_local_recorder(&recorder, || cycles(redlock, ops))
    })
}

/// The async client on a current-thread runtime, called as a user would call it.
#[cfg(feature = "tokio")]
fn async_cycles(servers: &[RedisServer], ops: usize) -> Run {
    use redlock_lab::driver::redis::asynchronous::AsyncRedlock;
    let urls: Vec<String> = servers.iter().map(RedisServer::url).collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async {
        let mut redlock = AsyncRedlock::open(&urls, Config::new(urls.len())).expect("valid urls");
        let mut run = Run::default();
        let started = Instant::now();
        for i in 0..WARM_UP + ops {
            let resource = format!("bench:{i}");
            let t = Instant::now();
            let guard = redlock.lock(&resource, TTL).await.expect("valid input");
            let acquire = micros(t);
            let guard = guard.unwrap_or_else(|| panic!("lock {resource} on idle local nodes"));
            let t = Instant::now();
            let released = guard.unlock().await;
            let release = micros(t);
            // The release is decided at quorum like the acquisition: the other nodes' deletions
            // still happen, on tasks of their own, but only a quorum of them is reported.
            assert!(released.applied.len() > urls.len() / 2, "{released:?}");
            if i >= WARM_UP {
                run.acquire_us.push(acquire);
                run.release_us.push(release);
            }
        }
        run.seconds = started.elapsed().as_secs_f64() * ops as f64 / (WARM_UP + ops) as f64;
        run
    })
}

/// The threads of a `contended` row.
const THREADS: usize = 8;
/// The clients of the `contended shared` row's pool.
const SHARED_POOL: usize = 4;

/// Retries with short delays, as a service that waits for a busy lock would set them.
fn contended_config() -> Config {
    let mut config = Config::new(3);
    config.retry = RetryPolicy {
        attempts: 20,
        delay_min: Millis(0),
        delay_max: Millis(3),
    };
    config
}

/// One try at the contended lock through `redlock`: on success the cycle's times (the acquire
/// time since `began`, the first try) go to `run` and it answers true.
fn contended_cycle(redlock: &mut RedisRedlock, began: Instant, run: &mut Run) -> bool {
    let Some(guard) = redlock.lock("bench:contended", TTL).expect("valid input") else {
        return false;
    };
    let acquire = micros(began);
    let t = Instant::now();
    guard.unlock();
    run.acquire_us.push(acquire);
    run.release_us.push(micros(t));
    true
}

/// One thread of a contended run: `ops` cycles, each retried until it gets the lock, through a
/// client of its own when `shared` is `None`, else through one checked out for every try.
fn contended_thread(
    urls: &[String],
    shared: Option<&RedisRedlockPool>,
    ops: usize,
    barrier: &Barrier,
) -> Run {
    let mut own = shared
        .is_none()
        .then(|| RedisRedlock::open(urls, contended_config()).expect("valid urls"));
    let mut run = Run::default();
    barrier.wait();
    for _ in 0..ops {
        let began = Instant::now();
        loop {
            let acquired = match (own.as_mut(), shared) {
                (Some(own), _) => contended_cycle(own, began, &mut run),
                (None, Some(pool)) => contended_cycle(&mut pool.get(), began, &mut run),
                (None, None) => unreachable!("an own client when there is no pool"),
            };
            if acquired {
                break;
            }
        }
    }
    run
}

/// `ops` cycles in all by `THREADS` threads on one resource, each thread through a client of
/// its own (`shared` `None`) or through clients checked out of `shared` for every try.
fn contended(servers: &[RedisServer], ops: usize, shared: Option<&RedisRedlockPool>) -> Run {
    let urls: Vec<String> = servers.iter().map(RedisServer::url).collect();
    let barrier = Barrier::new(THREADS);
    let started = Instant::now();
    let runs: Vec<Run> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..THREADS)
            .map(|_| scope.spawn(|| contended_thread(&urls, shared, ops / THREADS, &barrier)))
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().expect("a bench thread"))
            .collect()
    });
    let mut all = Run {
        seconds: started.elapsed().as_secs_f64(),
        ..Run::default()
    };
    for run in runs {
        all.acquire_us.extend(run.acquire_us);
        all.release_us.extend(run.release_us);
    }
    all
}

/// `ops` cycles from one thread, the client checked out of `pool` for each.
fn pooled_cycles(pool: &RedisRedlockPool, ops: usize) -> Run {
    timed_cycles(ops, |i| {
        let resource = format!("bench:{i}");
        let mut redlock = pool.get();
        let t = Instant::now();
        let guard = redlock.lock(&resource, TTL).expect("valid input");
        let acquire = micros(t);
        let guard = guard.unwrap_or_else(|| panic!("lock {resource} on idle local nodes"));
        let t = Instant::now();
        guard.unlock();
        (acquire, micros(t))
    })
}

fn redlock(servers: &[RedisServer]) -> RedisRedlock {
    redlock_with(servers, Fencing::Off)
}

fn redlock_with(servers: &[RedisServer], fencing: Fencing) -> RedisRedlock {
    let urls: Vec<String> = servers.iter().map(RedisServer::url).collect();
    let mut config = Config::new(urls.len());
    config.fencing = fencing;
    RedisRedlock::open(&urls, config).expect("valid urls")
}

/// The peer baseline: rslock 0.10 on a current-thread runtime (as its users drive it from
/// blocking code), one `LockManager` with its multiplexed connection per node, its default retry
/// policy. Same resources, TTL and warm-up as the `redlock` rows.
fn rslock_cycles(servers: &[RedisServer], ops: usize) -> Run {
    let urls: Vec<String> = servers.iter().map(RedisServer::url).collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let manager = rslock::LockManager::new(urls);
    let ttl = Duration::from_millis(TTL.as_u64());
    timed_cycles(ops, |i| {
        let resource = format!("rslock:{i}");
        let t = Instant::now();
        let lock = runtime
            .block_on(manager.lock(resource.as_bytes(), ttl))
            .unwrap_or_else(|e| panic!("rslock {resource} on idle local nodes: {e}"));
        let acquire = micros(t);
        let t = Instant::now();
        runtime.block_on(lock.release());
        (acquire, micros(t))
    })
}

fn sequential(servers: &[RedisServer]) -> Redlock<Sequential, MonotonicClock, ChaCha20Rng> {
    let nodes = servers
        .iter()
        .map(|s| {
            RedisNode::open(&s.url())
                .map(Sequential)
                .expect("valid url")
        })
        .collect();
    let config = Config::new(servers.len());
    Redlock::new(
        nodes,
        config,
        MonotonicClock::new(),
        ChaCha20Rng::from_os_rng(),
    )
    .expect("valid config")
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One row: its name and how to run it once for `ops` cycles.
type Row<'a> = (&'static str, Box<dyn FnMut(usize) -> Run + 'a>);

fn row<'a>(name: &'static str, run: impl FnMut(usize) -> Run + 'a) -> Row<'a> {
    (name, Box::new(run))
}

/// Every row, the floor first.
fn rows(servers: &[RedisServer]) -> Vec<Row<'_>> {
    let mut clients1 = redlock(&servers[..1]);
    let mut clients3 = redlock(&servers[..3]);
    let mut clients5 = redlock(&servers[..5]);
    let mut write_back5 = redlock_with(&servers[..5], Fencing::WriteBack);
    let mut sequential3 = sequential(&servers[..3]);
    let mut sequential5 = sequential(&servers[..5]);
    let urls3: Vec<String> = servers[..3].iter().map(RedisServer::url).collect();
    let pool3 = RedisRedlockPool::open(&urls3, Config::new(3), 1).expect("valid urls");
    let shared = RedisRedlockPool::open(&urls3, contended_config(), SHARED_POOL).expect("valid");
    #[cfg_attr(not(feature = "tokio"), allow(unused_mut))]
    let mut rows = vec![
        row("raw", |ops| raw(&servers[0], ops)),
        row("redlock N=1", move |ops| cycles(&mut clients1, ops)),
        row("redlock N=3", move |ops| cycles(&mut clients3, ops)),
        row("redlock N=5", move |ops| cycles(&mut clients5, ops)),
        row("write-back N=5", move |ops| cycles(&mut write_back5, ops)),
        row("rslock N=3", |ops| rslock_cycles(&servers[..3], ops)),
        row("rslock N=5", |ops| rslock_cycles(&servers[..5], ops)),
        row("pooled N=3", move |ops| pooled_cycles(&pool3, ops)),
        row("sequential N=3", move |ops| cycles(&mut sequential3, ops)),
        row("sequential N=5", move |ops| cycles(&mut sequential5, ops)),
        row("raw fan-out N=5", |ops| raw_fanout(&servers[..5], ops)),
        row("contended own x8", |ops| {
            contended(&servers[..3], ops, None)
        }),
        row("contended shared x8", move |ops| {
            contended(&servers[..3], ops, Some(&shared))
        }),
    ];
    #[cfg(feature = "tokio")]
    {
        rows.push(row("async N=3", |ops| async_cycles(&servers[..3], ops)));
        rows.push(row("async N=5", |ops| async_cycles(&servers[..5], ops)));
    }
    #[cfg(all(feature = "tracing", feature = "metrics"))]
    {
        let mut watched = redlock(&servers[..5]);
        rows.push(row("watched N=5", move |ops| {
            watched_cycles(&mut watched, ops)
        }));
    }
    rows
}

fn main() {
    // `cargo test --benches` runs this binary with `--bench` absent; keep that quick.
    let benching = std::env::args().any(|a| a == "--bench");
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let ops = env("OPS", if benching { 3_000 } else { 50 });
    let repeats = env("REPEATS", if benching { 3 } else { 1 });
    let servers: Vec<RedisServer> = (0..5).map(|_| RedisServer::start()).collect();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "redis_client bench: {ops} cycles x {repeats} repeats, ttl {TTL}, load {}",
        load.split_whitespace().next().unwrap_or("?")
    );
    let mut rows: Vec<Row<'_>> = rows(&servers)
        .into_iter()
        .enumerate()
        .filter(|(i, (name, _))| {
            *i == 0 || filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()))
        })
        .map(|(_, row)| row)
        .collect();
    let mut results: Vec<Vec<Summary>> = vec![Vec::new(); rows.len()];
    for _ in 0..repeats {
        for ((_, run), results) in rows.iter_mut().zip(&mut results) {
            results.push(run(ops).summary());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let names: Vec<&str> = rows.iter().map(|(name, _)| *name).collect();
    report(&names, &results);
}

/// Prints each row's medians over the repeats, and the target's verdict when its rows ran.
fn report(names: &[&str], results: &[Vec<Summary>]) {
    let medians: Vec<Summary> = results
        .iter()
        .map(|runs| Summary {
            acquire_p50: median(runs.iter().map(|s| s.acquire_p50)),
            acquire_p99: median(runs.iter().map(|s| s.acquire_p99)),
            release_p50: median(runs.iter().map(|s| s.release_p50)),
            release_p99: median(runs.iter().map(|s| s.release_p99)),
            ops_per_s: median(runs.iter().map(|s| s.ops_per_s)),
        })
        .collect();
    let floor = medians[0];
    println!(
        "{:<20} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10}",
        "row", "acq p50", "acq p99", "rel p50", "rel p99", "cycles/s", "acq/floor", "rel/floor"
    );
    for (row, m) in names.iter().zip(&medians) {
        println!(
            "{row:<20} {:>7.0}us {:>7.0}us {:>7.0}us {:>7.0}us {:>9.0} {:>9.2}x {:>9.2}x",
            m.acquire_p50,
            m.acquire_p99,
            m.release_p50,
            m.release_p99,
            m.ops_per_s,
            m.acquire_p50 / floor.acquire_p50,
            m.release_p50 / floor.release_p50,
        );
    }
    let find = |name: &str| names.iter().position(|n| *n == name).map(|i| medians[i]);
    let verdict = |met: bool| if met { "met" } else { "missed" };
    if let Some(n5) = find("redlock N=5") {
        let ratio = n5.acquire_p50 / floor.acquire_p50;
        println!(
            "RESULT acquire_p50_n5_over_raw={ratio:.2} target<=1.10 {}",
            verdict(ratio <= 1.10)
        );
        if let Some(rslock) = find("rslock N=5") {
            let ratio = n5.ops_per_s / rslock.ops_per_s;
            println!(
                "RESULT ops_per_s_n5_over_rslock={ratio:.2} target>=1.50 {}",
                verdict(ratio >= 1.50)
            );
        }
        if let Some(fanout) = find("raw fan-out N=5") {
            println!(
                "RESULT acquire_p50_n5_over_raw_fanout={:.2}",
                n5.acquire_p50 / fanout.acquire_p50
            );
        }
    }
    if let Some(write_back) = find("write-back N=5") {
        let ratio = write_back.acquire_p50 / floor.acquire_p50;
        println!(
            "RESULT acquire_p50_write_back_n5_over_raw={ratio:.2} target<=2.20 {}",
            verdict(ratio <= 2.20)
        );
    }
}
