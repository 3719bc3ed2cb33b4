//! The clock a driver reads and sleeps on. The core never reads one itself.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crate::time::Millis;

/// A client's clock: readings in milliseconds since an epoch of the clock's choosing.
pub trait Clock {
    /// The current reading.
    fn now(&self) -> Millis;
    /// Blocks until the clock reads at least `deadline`.
    fn sleep_until(&self, deadline: Millis);
}

/// A borrowed clock reads and sleeps like the clock itself (a watchdog thread reads its guard's
/// clock through the guard's borrow).
impl<C: Clock + ?Sized> Clock for &C {
    fn now(&self) -> Millis {
        (**self).now()
    }

    fn sleep_until(&self, deadline: Millis) {
        (**self).sleep_until(deadline);
    }
}

/// The process's monotonic clock (`std::time::Instant`): it never jumps, which is the
/// mitigation antirez proposed for clock jumps on the client side.
#[derive(Clone, Copy, Debug)]
pub struct MonotonicClock {
    origin: Instant,
}

impl MonotonicClock {
    /// A clock that reads zero now.
    pub fn new() -> MonotonicClock {
        MonotonicClock {
            origin: Instant::now(),
        }
    }
}

impl Default for MonotonicClock {
    fn default() -> Self {
        MonotonicClock::new()
    }
}

impl Clock for MonotonicClock {
    fn now(&self) -> Millis {
        Millis::from_duration(self.origin.elapsed())
    }

    fn sleep_until(&self, deadline: Millis) {
        let now = self.now();
        if deadline > now {
            std::thread::sleep((deadline - now).to_duration());
        }
    }
}

/// A clock that moves only when told to; sleeping on it advances it. Clones share one reading,
/// so a test can hand the same clock to a client and to [`MemoryNode`](super::MemoryNode)s.
#[derive(Clone, Debug, Default)]
pub struct ManualClock {
    reading: Arc<AtomicU64>,
}

impl ManualClock {
    /// A clock reading `start`.
    pub fn new(start: Millis) -> ManualClock {
        ManualClock {
            reading: Arc::new(AtomicU64::new(start.as_u64())),
        }
    }

    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: Millis) {
        self.reading.fetch_add(by.as_u64(), Ordering::SeqCst);
    }

    /// Sets the reading (it may go backwards: a clock jump).
    pub fn set(&self, reading: Millis) {
        self.reading.store(reading.as_u64(), Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Millis {
        Millis(self.reading.load(Ordering::SeqCst))
    }

    fn sleep_until(&self, deadline: Millis) {
        self.reading.fetch_max(deadline.as_u64(), Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_is_shared_and_sleeping_advances_it() {
        let clock = ManualClock::new(Millis(5));
        let other = clock.clone();
        clock.sleep_until(Millis(12));
        assert_eq!(other.now(), Millis(12));
        clock.sleep_until(Millis(3));
        assert_eq!(other.now(), Millis(12));
        other.set(Millis(1));
        assert_eq!(clock.now(), Millis(1));
    }
}
