//! Drivers: the loops that feed the sans-IO [`Lock`](crate::proto::Lock) with real (or
//! in-memory) nodes and a clock.
//!
//! [`Redlock`] is the blocking client over any [`Node`](crate::node::Node), and
//! [`RedlockPool`] a bounded pool of them that many threads share;
//! [`MemoryNode`] is an in-process node on a [`ManualClock`], for examples and tests;
//! [`watchdog`] keeps a held lock extended on its own thread and says when it is lost.
//! [`redis`] (feature `redis`) is the real client over Redis masters.
//!
//! Both clients can be watched: feature `tracing` gives a span per acquisition, extension and
//! release with every node's answer and latency, feature `metrics` counters and a per-node
//! latency histogram through the `metrics` facade; with both features off nothing of it is
//! compiled in. The blocking and the async client emit the same names:
//!
//! ## Spans and events (feature `tracing`)
//!
//! | span | fields |
//! |---|---|
//! | `redlock.acquire` | `resource`, `ttl_ms`, then `decision` (`acquired`, `not_acquired`, `unreachable`, `collision`), `reason` (for `not_acquired`: `held`, `restart_guard`, `too_slow`), `rounds`, `validity_left_ms` |
//! | `redlock.extend` | `resource`, then `decision` (`extended`, `not_extended`), `validity_left_ms` |
//! | `redlock.release` | `resource`, then `decision` (`released`, `not_released`, `dropped`: sent from a dropped async guard, unanswered), `applied` |
//!
//! Inside each span, one `redlock.answer` event (level `DEBUG`) per node answer with `round`,
//! `node` (`n1` …), `answer` (`applied`, `not_applied`, `failed`), `counts` (false when the
//! restarted-node guard kept the yes out), `latency_us` (from the round's send) and `error`
//! when the node failed. The watchdog's loss is a `redlock.lease_lost` event (level `WARN`)
//! with `reason`, `deadline_ms` and `at_ms`.
//!
//! ## Metrics (feature `metrics`)
//!
//! | metric | kind | labels |
//! |---|---|---|
//! | `redlock_acquisitions_total` | counter | `outcome` (`acquired`, `not_acquired`, `unreachable`, `collision`), `reason` (with `not_acquired`) |
//! | `redlock_extensions_total` | counter | `outcome` (`extended`, `not_extended`) |
//! | `redlock_leases_lost_total` | counter | `reason` (`refused`, `deadline_passed`, `panicked`) |
//! | `redlock_node_latency_seconds` | histogram | `node` (`n1` …), `operation` (`acquire`, `extend`, `release`) |

mod blocking;
mod clock;
mod held;
mod memory;
mod not_acquired;
mod observe;
mod pool;
#[cfg(feature = "redis")]
pub mod redis;
mod shared;
pub mod watchdog;

/// The outcome types the core decides, re-exported where the client's users look for them.
pub use crate::proto::{Extension, Refusal};
pub use blocking::{Acquisition, AnyNodeError, DriverError, Guard, Redlock};
pub use clock::{Clock, ManualClock, MonotonicClock};
pub use memory::MemoryNode;
pub use not_acquired::{Collision, NodeError, NotAcquired, Unreachable};
#[cfg(feature = "tokio")]
pub(crate) use not_acquired::{ErrorLog, Settled, late_answer};
#[cfg(feature = "metrics")]
pub use observe::describe_metrics;
pub use pool::{Pooled, RedlockPool};
#[cfg(feature = "redis")]
pub use redis::{RedisNode, RedisRedlock, RedisRedlockPool};
pub use shared::SharedNode;
