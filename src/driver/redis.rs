//! The Redlock client over real Redis masters (feature `redis`), through the `redis` crate's
//! blocking connections.
//!
//! [`RedisNode`] implements [`Node`](crate::node::Node): `SET key token NX PX ttl` to acquire,
//! and compare-and-delete and compare-and-pexpire as Lua scripts (`EVALSHA`, loaded once per
//! connection and again when a node lost them), the key and the token passed as `KEYS`/`ARGV`.
//! Each node has connect, read and write timeouts, and every failure is a typed
//! [`RedisNodeError`] naming the node (its URL with the password masked) and the [`Cause`].
//! The client itself is the same [`Redlock`](crate::driver::Redlock) that drives the sans-IO
//! core for every other node type; only the batch execution differs: a round's requests are
//! written to all `N` connections before any reply is read, so a round costs about one round
//! trip. [`RedisRedlockPool`] shares such clients among threads, at most a set number of
//! connection sets however many threads lock through it.
//!
//! A master that stops answering (stopped by SIGSTOP, or its host black-holed) costs a round one
//! round timeout at most, not one per connect, read or retry: every connect, write and read of
//! a round is bounded by the round's deadline in both clients, so an acquisition that wins its
//! first round and a release each return within the round timeout plus [`ROUND_OVERRUN`]
//! (`tests/live_redis/stopped.rs` measures it against a stopped `redis-server`).
//!
//! Optional extras: the restarted-node guard ([`NodeOptions::restart_guard`]), which keeps a
//! node that restarted less than a TTL ago out of the quorum (antirez's delayed restart,
//! enforced by the client); TLS (`rediss://`) through rustls, with a private CA via
//! [`NodeOptions::root_certificate_pem`]; and [`fenced`], Kleppmann's fencing tokens checked
//! by the storage itself. With feature `tokio`, `asynchronous` is the same client for async
//! code.
//!
//! ```no_run
//! use redlock_lab::driver::RedisRedlock;
//! use redlock_lab::proto::Config;
//! use redlock_lab::time::Millis;
//!
//! let urls = ["redis://127.0.0.1:7101", "redis://127.0.0.1:7102", "redis://127.0.0.1:7103"];
//! let mut redlock = RedisRedlock::open(&urls, Config::new(urls.len()))?;
//! if let Some(guard) = redlock.lock("orders", Millis(10_000))? {
//!     // Act only while `guard.is_valid()`: the lease ends at `guard.deadline()`.
//!     let released = guard.unlock();
//!     println!("released on {}", released.applied);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#[cfg(feature = "tokio")]
pub mod asynchronous;
mod client;
mod error;
pub mod fenced;
mod node;
mod script;
mod url;

pub use client::{RedisRedlock, RedisRedlockPool};
pub use error::{Cause, OpenError, RedisNodeError};
pub use node::{NodeOptions, ROUND_OVERRUN, RedisNode, read_reply};
pub use script::command;
