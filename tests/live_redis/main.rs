//! Live tests of the Redis client against real `redis-server` processes the harness starts
//! itself (no Docker, no mocks). Each test asserts something that fails if the client is wrong.
//!
//! Needs `redis-server` on PATH (`apt-get install redis-server`); without it every test fails
//! with that hint instead of passing silently.

// The harness's helpers are shared between this crate's modules with `pub`; no user reaches them,
// and the crate's `unreachable_pub` lint is for the library's API.
#![allow(unreachable_pub)]

#[cfg(feature = "tokio")]
mod asynchronous;
mod bad_input;
mod basics;
mod clock;
// The helpers the other test crates share (the browser, for the README's picture of a replay).
#[cfg(feature = "cli")]
#[path = "../common/mod.rs"]
mod common;
mod contention;
mod cost;
mod faults;
mod fencing;
mod harness;
#[cfg(all(feature = "tokio", feature = "metrics"))]
mod observe;
mod pool;
#[cfg(feature = "cli")]
mod replay;
#[cfg(feature = "cli")]
mod run;
mod security;
mod sequential;
mod stopped;
mod watchdog;

use redlock_lab::driver::RedisRedlock;
use redlock_lab::driver::redis::NodeOptions;
use redlock_lab::proto::{Config, RetryPolicy};
use redlock_lab::time::Millis;

/// A configuration for `n` nodes with rounds generous enough for a loaded two-core machine
/// (several test binaries and redis-servers share it), and short retry delays.
pub fn config(n: usize) -> Config {
    let mut config = Config::new(n);
    config.round_timeout = Millis(500);
    config.retry = RetryPolicy {
        attempts: 2,
        delay_min: Millis(5),
        delay_max: Millis(20),
    };
    config
}

/// A client over `urls` with `config` and the default node options.
pub fn client(urls: &[String], config: Config) -> RedisRedlock {
    client_with(urls, &NodeOptions::default(), config)
}

/// A client over `urls` with `options`.
pub fn client_with(urls: &[String], options: &NodeOptions, config: Config) -> RedisRedlock {
    RedisRedlock::open_with(urls, options, config).expect("valid urls and config")
}
