//! [`Timer`]: a [`Clock`] the watchdog thread can wait on.

use std::time::Duration;

use crate::driver::{Clock, ManualClock, MonotonicClock};
use crate::time::Millis;

/// A clock the watchdog thread can wait on.
///
/// The thread never sleeps blindly: it waits on a condition variable, so
/// [`stop`](super::Watchdog::stop) and [`check_now`](super::Watchdog::check_now) wake it at
/// once. The timer only says for how long that wait may last.
pub trait Timer: Clock {
    /// How long to wait for the clock to read `until`: `Some(span)` for a clock that moves by
    /// itself, `None` for one that moves only when told to (the thread then waits until it is
    /// woken).
    fn wait_span(&self, until: Millis) -> Option<Duration>;
}

impl Timer for MonotonicClock {
    fn wait_span(&self, until: Millis) -> Option<Duration> {
        Some((until - self.now()).to_duration())
    }
}

/// A manual clock moves only when a test moves it, so the watchdog waits for the test's
/// [`check_now`](super::Watchdog::check_now): deterministic, and no test sleeps.
impl Timer for ManualClock {
    fn wait_span(&self, _until: Millis) -> Option<Duration> {
        None
    }
}

impl<T: Timer + ?Sized> Timer for &T {
    fn wait_span(&self, until: Millis) -> Option<Duration> {
        (**self).wait_span(until)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_monotonic_clock_waits_the_span_left_and_a_manual_one_waits_to_be_woken() {
        let clock = MonotonicClock::new();
        let span = clock
            .wait_span(Millis(60_000))
            .expect("a real clock times out");
        // Generous: the test only needs the span to be counted from the clock's origin.
        assert!(span <= Duration::from_secs(60) && span > Duration::from_secs(50));
        assert_eq!(clock.wait_span(Millis(0)), Some(Duration::ZERO));

        let manual = ManualClock::new(Millis(5));
        let borrowed: &ManualClock = &manual;
        assert_eq!(Timer::wait_span(&borrowed, Millis(10)), None);
        assert_eq!(Clock::now(&borrowed), Millis(5));
    }
}
