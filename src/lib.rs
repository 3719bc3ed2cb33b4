//! # redlock-lab
//!
//! Redlock (antirez's distributed lock over `N` independent Redis masters), settled claim by
//! claim with exhaustive model checking, and shipped as a client.
//!
//! The core, [`proto`], is a deterministic state machine that performs no I/O and reads no
//! clock: it is handed replies and the current time, and it emits commands. Everything else
//! drives that one core:
//!
//! | layer | module | what it is |
//! |---|---|---|
//! | time | [`time`] | integer milliseconds (model ticks); no clock reads |
//! | algorithm | [`proto`] | acquire, extend, release; quorum and validity math |
//! | faults | [`fault`] | the kinds of fault with their words, and a client fault's aim: what a scenario grants, both executors apply and every report names |
//! | one master | [`node`] | the [`Node`](node::Node) trait and [`NodeState`](node::NodeState), Redis's semantics on the node's own clock |
//! | client | [`driver`] | the blocking [`Redlock`](driver::Redlock) client over any `Node` |
//! | Redis | `driver::redis` (feature `redis`) | `RedisNode` over the redis crate: the same client on real masters |
//! | storage | [`storage`] | the guarded counter: fencing, random-token CAS, the storage properties |
//! | scenarios | [`scenario`] | the `models/*.toml` schema, validated, with `file:line:column` errors |
//! | model | [`model`] | Redlock with time and faults as a [`stateright`] model over the core |
//! | checking | [`check`] | run the checker on a scenario: verdicts, state counts, counterexamples |
//! | causes | [`cause`] | which faults and mistakes a violation needs: the checker re-run without each |
//! | simulator | [`sim`] | a seeded world of drifting clocks, lossy networks, crashes and pauses around the core |
//! | scenario → simulator | [`bridge`] | a scenario file as a simulated world (`SimConfig::from_scenario`), so the simulator reads no scenario |
//! | teaching | [`report`] | counterexamples as stories: text, Mermaid, JSON |
//! | sweeps | [`sweep`] | a scenario checked once per value of one key, and where a verdict flips |
//!
//! ## A lock over three in-memory nodes
//!
//! ```
//! use redlock_lab::driver::{ManualClock, MemoryNode, Redlock};
//! use redlock_lab::proto::Config;
//! use redlock_lab::time::Millis;
//!
//! let clock = ManualClock::new(Millis(0));
//! let nodes = (0..3).map(|_| MemoryNode::new(clock.clone())).collect();
//! // A fixed seed replays exactly; `Redlock::with_os_rng` is for real nodes.
//! let mut redlock = Redlock::with_seed(nodes, Config::new(3), clock.clone(), 7)?;
//!
//! let guard = redlock.lock("orders", Millis(10_000))?.expect("nobody else holds it");
//! // Valid until T1 + ttl − drift = 0 + 10 000 − (1% of 10 000 + 2) on the client's clock.
//! assert_eq!(guard.deadline(), Millis(9_898));
//! assert!(guard.is_valid());
//! let released = guard.unlock();
//! assert_eq!(released.applied.len(), 3);
//! # Ok::<(), redlock_lab::driver::DriverError>(())
//! ```
//!
//! The random-number crates the clients are generic over are re-exported ([`rand_core`],
//! [`rand_chacha`]), so a caller who brings a generator of its own uses the same versions.

pub mod actor;
#[cfg(feature = "model")]
pub mod bridge;
#[cfg(feature = "model")]
pub mod catalog;
#[cfg(feature = "model")]
pub mod cause;
#[cfg(feature = "model")]
pub mod check;
pub mod driver;
pub mod event;
pub mod fault;
#[cfg(feature = "redis")]
pub mod live;
#[cfg(feature = "model")]
pub mod model;
pub mod node;
pub mod plural;
pub mod property;
pub mod proto;
#[cfg(feature = "model")]
pub mod report;
#[cfg(feature = "model")]
pub mod scenario;
#[cfg(feature = "model")]
mod search;
pub mod sim;
pub mod storage;
#[cfg(feature = "model")]
pub mod sweep;
mod sync;
#[cfg(feature = "testing")]
pub mod testing;
pub mod time;
#[cfg(feature = "model")]
mod zones;

pub use rand_chacha;
pub use rand_core;

/// The README's examples, compiled and run as doctests so the README cannot rot.
#[cfg(all(doctest, feature = "cli"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The library page's examples (`docs/library.md`), run as doctests like the README's.
#[cfg(all(doctest, feature = "cli"))]
#[doc = include_str!("../docs/library.md")]
pub struct LibraryDoctests;
