//! Building the blocking [`Redlock`] client over Redis nodes from URLs.

use rand_chacha::ChaCha20Rng;

use super::error::OpenError;
use super::node::{NodeOptions, RedisNode};
use crate::driver::{MonotonicClock, Redlock};
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
        let nodes = urls
            .iter()
            .map(|url| RedisNode::open_with(url.as_ref(), options.clone()))
            .collect::<Result<Vec<_>, _>>()?;
        // 128-bit tokens must be unguessable by other clients: a CSPRNG seeded from the OS.
        Ok(Redlock::with_os_rng(nodes, config, MonotonicClock::new())?)
    }

    /// Like [`open_with`](Redlock::open_with), with tokens and retry delays from ChaCha20
    /// seeded with `seed`, for a test that must replay. Anyone who knows the seed can forge
    /// the tokens and release or extend the lock: never in production.
    pub fn open_with_seed<S: AsRef<str>>(
        urls: &[S],
        options: &NodeOptions,
        config: Config,
        seed: u64,
    ) -> Result<RedisRedlock, OpenError> {
        let nodes = urls
            .iter()
            .map(|url| RedisNode::open_with(url.as_ref(), options.clone()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Redlock::with_seed(
            nodes,
            config,
            MonotonicClock::new(),
            seed,
        )?)
    }
}
