//! Building the blocking [`Redlock`] client over Redis nodes from URLs, alone or pooled.

use rand_chacha::ChaCha20Rng;

use super::error::OpenError;
use super::node::{NodeOptions, RedisNode};
use crate::driver::{MonotonicClock, Redlock, RedlockPool};
use crate::proto::Config;

/// The Redlock client over Redis: [`RedisNode`]s, the process's monotonic clock, and tokens
/// (and retry jitter) from ChaCha20 seeded by the operating system.
///
/// A stopped master costs one round timeout, not several: every connect, write and read of a
/// round waits at most until the round's deadline, the first connects to all nodes run at once,
/// and a node that timed out is read last from then on. An acquisition that wins its first
/// round and a release each return within
/// [`Config::round_timeout`](crate::proto::Config::round_timeout) plus
/// [`ROUND_OVERRUN`](super::ROUND_OVERRUN), which says what the overrun is made of.
pub type RedisRedlock = Redlock<RedisNode, MonotonicClock, ChaCha20Rng>;

/// [`RedisRedlock`]s that many threads share, as a service shares a database pool: at most
/// `max_size` connection sets however many threads lock through it (see [`RedlockPool`]).
///
/// ```no_run
/// use redlock_lab::driver::RedisRedlockPool;
/// use redlock_lab::proto::Config;
/// use redlock_lab::time::Millis;
///
/// let urls = ["redis://127.0.0.1:7101", "redis://127.0.0.1:7102", "redis://127.0.0.1:7103"];
/// let pool = RedisRedlockPool::open(&urls, Config::new(urls.len()), 4)?;
/// std::thread::scope(|scope| {
///     for _ in 0..16 {
///         scope.spawn(|| {
///             let mut redlock = pool.get();
///             if let Ok(Some(guard)) = redlock.lock("orders", Millis(10_000)) {
///                 guard.unlock();
///             }
///         });
///     }
/// });
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub type RedisRedlockPool = RedlockPool<RedisNode, MonotonicClock, ChaCha20Rng>;

impl RedlockPool<RedisNode, MonotonicClock, ChaCha20Rng> {
    /// A pool of at most `max_size` clients over the nodes at `urls`, with the default
    /// [`NodeOptions`]. The first client is made now, so a bad URL or configuration is refused
    /// here; no connection is made until a client is used.
    pub fn open<S: AsRef<str>>(
        urls: &[S],
        config: Config,
        max_size: usize,
    ) -> Result<RedisRedlockPool, OpenError> {
        RedlockPool::open_with(urls, &NodeOptions::default(), config, max_size)
    }

    /// Like [`open`](RedlockPool::open), with `options` for every node. Each client draws its
    /// tokens from its own ChaCha20 seeded by the operating system; all read one clock.
    pub fn open_with<S: AsRef<str>>(
        urls: &[S],
        options: &NodeOptions,
        config: Config,
        max_size: usize,
    ) -> Result<RedisRedlockPool, OpenError> {
        let urls: Vec<String> = urls.iter().map(|url| url.as_ref().to_owned()).collect();
        let options = options.clone();
        let clock = MonotonicClock::new();
        let open = move || -> Result<RedisRedlock, OpenError> {
            Ok(Redlock::with_os_rng(
                nodes(&urls, &options)?,
                config,
                clock,
            )?)
        };
        let first = open()?;
        Ok(RedlockPool::with_first(max_size, first, move || {
            // The same URLs, options and configuration made the first client.
            open().expect("accepted when the pool was opened")
        }))
    }
}

impl Redlock<RedisNode, MonotonicClock, ChaCha20Rng> {
    /// A client over the nodes at `urls`, with the default [`NodeOptions`]. No connection is
    /// made yet; a URL that cannot be parsed is refused now, naming the node.
    pub fn open<S: AsRef<str>>(urls: &[S], config: Config) -> Result<RedisRedlock, OpenError> {
        Redlock::open_with(urls, &NodeOptions::default(), config)
    }

    /// Like [`open`](Redlock::open), with `options` for every node.
    pub fn open_with<S: AsRef<str>>(
        urls: &[S],
        options: &NodeOptions,
        config: Config,
    ) -> Result<RedisRedlock, OpenError> {
        let nodes = nodes(urls, options)?;
        // 128-bit tokens must be unguessable by other clients: a CSPRNG seeded from the OS.
        Ok(Redlock::with_os_rng(nodes, config, MonotonicClock::new())?)
    }
}

/// A node for each of `urls`, not connected yet.
fn nodes<S: AsRef<str>>(urls: &[S], options: &NodeOptions) -> Result<Vec<RedisNode>, OpenError> {
    Ok(urls
        .iter()
        .map(|url| RedisNode::open_with(url.as_ref(), options.clone()))
        .collect::<Result<Vec<_>, _>>()?)
}
