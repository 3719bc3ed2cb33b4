//! Drivers: the loops that feed the sans-IO [`Lock`](crate::proto::Lock) with real (or
//! in-memory) nodes and a clock.
//!
//! [`Redlock`] is the blocking client over any [`Node`](crate::node::Node);
//! [`MemoryNode`] is an in-process node on a [`ManualClock`], for examples and tests;
//! [`watchdog`] keeps a held lock extended on its own thread and says when it is lost.
//! [`redis`] (feature `redis`) is the real client over Redis masters.

mod blocking;
mod clock;
mod memory;
mod outcome;
#[cfg(feature = "redis")]
pub mod redis;
mod shared;
pub mod watchdog;

/// The outcome types the core decides, re-exported where the client's users look for them.
pub use crate::proto::{Extension, Refusal};
pub use blocking::{Acquisition, AnyNodeError, DriverError, Guard, Redlock};
pub use clock::{Clock, ManualClock, MonotonicClock};
pub use memory::MemoryNode;
pub use outcome::{Collision, NodeError, NotAcquired, Unreachable};
#[cfg(feature = "tokio")]
pub(crate) use outcome::{ErrorLog, Settled};
#[cfg(feature = "redis")]
pub use redis::{RedisNode, RedisRedlock};
pub use shared::SharedNode;
