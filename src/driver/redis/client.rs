//! Building the blocking [`Redlock`] client over Redis nodes from URLs.

use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

use super::error::OpenError;
use super::node::{NodeOptions, RedisNode};
use crate::driver::{MonotonicClock, Redlock};
use crate::proto::Config;

/// The Redlock client over Redis: [`RedisNode`]s, the process's monotonic clock, and tokens
/// (and retry jitter) from ChaCha20 seeded by the operating system.
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
        let rng = ChaCha20Rng::from_os_rng();
        Ok(Redlock::new(nodes, config, MonotonicClock::new(), rng)?)
    }
}
