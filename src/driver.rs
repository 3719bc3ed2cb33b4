//! Drivers: the loops that feed the sans-IO [`Lock`](crate::proto::Lock) with real (or
//! in-memory) nodes and a clock.
//!
//! [`Redlock`] is the blocking client over any [`Node`](crate::node::Node);
//! [`MemoryNode`] is an in-process node on a [`ManualClock`], for examples and tests;
//! [`redis`] (feature `redis`) is the real client over Redis masters.

mod blocking;
mod clock;
mod memory;
#[cfg(feature = "redis")]
pub mod redis;

pub use blocking::{Acquisition, DriverError, Guard, NodeError, NotAcquired, Redlock};
pub use clock::{Clock, ManualClock, MonotonicClock};
pub use memory::MemoryNode;
#[cfg(feature = "redis")]
pub use redis::{RedisNode, RedisRedlock};
