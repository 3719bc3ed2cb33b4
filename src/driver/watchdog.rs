//! Auto-extension with a loss signal: a [`Watchdog`] thread that keeps a held lock extended and
//! says, never silently, when it could not.
//!
//! A holder whose critical section may outlast the TTL has two bad options: a TTL long enough
//! for the worst case (a crashed holder then blocks everyone for that long), or extending by
//! hand. The watchdog extends for it, on its own thread, every [`WatchdogConfig::period`] of
//! the TTL (a third by default, as Redisson does).
//!
//! What the peers get wrong, and what this one does instead:
//!
//! - **A failed renewal is only logged** (Redisson#4698, RedLock.net#92): the holder goes on
//!   believing. Here an extension that cannot win a majority before the lease's deadline marks
//!   the watchdog **lost**: [`Watchdog::is_lost`] turns true, [`Watchdog::lost`] says why, and
//!   the [`WatchdogConfig::on_lost`] callback runs once (send it into a channel, or cancel the
//!   work). [`Watchdog::is_valid`] also reads the clock, so it turns false at the deadline even
//!   when the watchdog thread is starved (Redisson#2665).
//! - **It retries forever**: a renewal that is merely inconclusive (nodes unreachable, a slow
//!   round) is retried every [`WatchdogConfig::retry`] of the TTL, but the retries count
//!   against the deadline, and a renewal that can never succeed (a majority answered that our
//!   key is gone or not ours) is a loss at once.
//! - **An extension is sent after unlock** (Redisson#5698, #7272): [`Watchdog::unlock`] and
//!   [`Watchdog::stop`] set the stop flag under the same mutex the watchdog holds across the
//!   whole "check the flag, then extend" step, wait for the thread to leave, and only then
//!   release. No extension is sent once unlock has started, and an extension in flight when
//!   unlock is called finishes first. `tests/loom_watchdog.rs` proves both with loom, over
//!   every interleaving, and shows that the naive check-then-act version is caught.
//!
//! The watchdog is generic over [`Extendable`] (one blocking extension round, the deadline and
//! the TTL) and over a [`Timer`] (how to read and wait for time), so it depends on no network
//! code. The blocking client's [`Guard`](super::Guard) is `Extendable`:
//! [`Guard::watch`](super::Guard::watch) hands it to a watchdog on a scoped thread, and
//! [`Guard::with_watchdog`](super::Guard::with_watchdog) runs a closure under one and unlocks
//! after it. With a
//! [`ManualClock`](super::ManualClock) the watchdog waits for explicit wake-ups
//! ([`Watchdog::check_now`]) instead of sleeping, which makes its tests deterministic.
//!
//! # Example
//!
//! A scoped watchdog over a blocking guard; three nodes in memory, two of which die while the
//! lock is held.
//!
//! ```
//! use std::sync::mpsc;
//! use rand_chacha::ChaCha20Rng;
//! use rand_core::SeedableRng;
//! use redlock_lab::driver::watchdog::{LossReason, WatchdogConfig};
//! use redlock_lab::driver::{Clock, ManualClock, MemoryNode, Redlock, SharedNode};
//! use redlock_lab::proto::Config;
//! use redlock_lab::time::Millis;
//!
//! let clock = ManualClock::new(Millis(0));
//! let nodes: Vec<_> = (0..3).map(|_| SharedNode::new(MemoryNode::new(clock.clone()))).collect();
//! let mut redlock = Redlock::new(nodes.clone(), Config::new(3), clock.clone(), ChaCha20Rng::seed_from_u64(7))?;
//! let guard = redlock.lock("orders", Millis(3_000))?.expect("nobody else holds it");
//!
//! let (lost_tx, lost_rx) = mpsc::channel();
//! std::thread::scope(|scope| {
//!     let config = WatchdogConfig::new().on_lost(move |loss| drop(lost_tx.send(loss)));
//!     let watched = guard.watch(scope, config);
//!
//!     // Ten TTLs later the lock is still held: the watchdog extended it every second.
//!     for _ in 0..30 {
//!         clock.advance(Millis(1_000));
//!         watched.check_now(); // a ManualClock moves only when told; wake the watchdog
//!     }
//!     assert!(watched.is_valid());
//!
//!     // A majority of the nodes dies: the next extensions fail, and at the deadline the
//!     // caller is told.
//!     nodes[0].with(|node| node.crash());
//!     nodes[1].with(|node| node.crash());
//!     let deadline = watched.deadline();
//!     while clock.now() < deadline {
//!         clock.advance(Millis(100));
//!         watched.check_now();
//!     }
//!     let loss = lost_rx.try_recv().expect("the caller is told");
//!     assert!(matches!(loss.reason, LossReason::DeadlinePassed { .. }));
//!     assert!(watched.is_lost() && !watched.is_valid());
//!
//!     // Unlock stops the watchdog first, then releases on every node that still answers.
//!     let released = watched.unlock();
//!     assert_eq!(released.applied.len(), 1);
//! });
//! # Ok::<(), redlock_lab::driver::DriverError>(())
//! ```
//!
//! # What it cannot do
//!
//! The loss signal is a promise about the *client's* clock, like the lease itself: a paused
//! process, or a node whose clock jumps, can still lose the lock before the client's deadline
//! (see the model catalog). A critical section that must not run past the lock needs fencing,
//! not a watchdog.

mod extendable;
mod guard;
mod handle;
mod schedule;
mod timer;

pub use extendable::{ExtendOutcome, Extendable, Loss, LossReason};
pub use handle::Watchdog;
pub use schedule::{Fraction, WatchdogConfig, WatchdogError};
pub use timer::Timer;
