//! A process's own clock in the simulated world: an offset, a rate error, and step jumps.
//!
//! True time is the simulator's tick counter (1 tick = 1 ms). A process never sees it; it sees
//! its clock's reading, which advances at `1 + rate_ppm / 10^6` local milliseconds per tick
//! and can be stepped forward or backward by a jump (an NTP step, an admin's `date -s`).
//! Readings are whole milliseconds (rounded down), like `Instant`/`gettimeofday` truncated to
//! ms, so even a perfect-rate clock has Redis's 1 ms granularity at its edges. A clock may
//! read coarser steps ([`SimClock::with_resolution`]): a world built from a catalog scenario
//! gives its clients clocks that read the model's whole ticks.

use crate::time::{CLOCK_ORIGIN, Millis};

const PPM: i128 = 1_000_000;

/// One process's clock.
///
/// The reading is kept exactly, in units of 10^-6 ms, so that re-anchoring at a jump never
/// loses the fractional progress of a drifting clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct SimClock {
    /// True time of the last anchor (start, or the last jump).
    anchor_true: u64,
    /// Reading at the anchor, in 10^-6 ms.
    anchor_local_micro: i128,
    /// Rate error in parts per million: +100 gains 0.1 ms per second of true time.
    rate_ppm: i32,
    /// Readings are rounded down to a multiple of this many ms (counted from
    /// [`CLOCK_ORIGIN`]); at least 1.
    resolution: u64,
}

impl SimClock {
    /// A clock that reads `CLOCK_ORIGIN + offset_ms` at true time 0 and drifts at `rate_ppm`.
    pub(super) fn new(offset_ms: i64, rate_ppm: i32) -> SimClock {
        SimClock {
            anchor_true: 0,
            anchor_local_micro: i128::from(CLOCK_ORIGIN + offset_ms) * PPM,
            rate_ppm,
            resolution: 1,
        }
    }

    /// The same clock reading in steps of `resolution` (at least 1 ms): a reading is rounded
    /// down to a multiple of it, counted from [`CLOCK_ORIGIN`], so a clock of resolution
    /// `R` reads the start of the `R`-millisecond tick its exact reading falls in.
    pub(super) fn with_resolution(self, resolution: Millis) -> SimClock {
        SimClock {
            resolution: resolution.0.max(1),
            ..self
        }
    }

    /// The step its readings advance by, in ms.
    pub(super) fn resolution(&self) -> Millis {
        Millis(self.resolution)
    }

    fn micro_at(&self, now: u64) -> i128 {
        let elapsed = i128::from(now.saturating_sub(self.anchor_true));
        self.anchor_local_micro + elapsed * (PPM + i128::from(self.rate_ppm))
    }

    /// The reading at true time `now`, in whole milliseconds rounded down to the clock's
    /// resolution (a clock stepped below zero reads zero).
    pub(super) fn read(&self, now: u64) -> Millis {
        let ms = self.micro_at(now).div_euclid(PPM);
        let step = i128::from(self.resolution);
        let epoch = i128::from(CLOCK_ORIGIN);
        let ms = epoch + (ms - epoch).div_euclid(step) * step;
        Millis(u64::try_from(ms.max(0)).unwrap_or(u64::MAX))
    }

    /// Steps the clock by `by_ms` (negative: backward) at true time `now`.
    pub(super) fn jump(&mut self, now: u64, by_ms: i64) {
        self.anchor_local_micro = self.micro_at(now) + i128::from(by_ms) * PPM;
        self.anchor_true = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_perfect_clock_counts_true_time_from_its_offset() {
        let clock = SimClock::new(5, 0);
        assert_eq!(clock.read(0), Millis(1_000_005));
        assert_eq!(clock.read(123), Millis(1_000_128));
    }

    #[test]
    fn a_fast_clock_gains_and_a_slow_clock_loses_at_its_rate() {
        // 10% fast and slow, so the effect shows within a few ticks.
        let fast = SimClock::new(0, 100_000);
        let slow = SimClock::new(0, -100_000);
        assert_eq!(fast.read(10) - fast.read(0), Millis(11));
        assert_eq!(slow.read(10) - slow.read(0), Millis(9));
        // Readings round down: 9 ticks at +10% are 9.9 ms.
        assert_eq!(fast.read(9) - fast.read(0), Millis(9));
        // 1000 ppm over 10 s of true time is 10 ms.
        let ppm = SimClock::new(0, 1_000);
        assert_eq!(ppm.read(10_000) - ppm.read(0), Millis(10_010));
    }

    #[test]
    fn jumps_step_the_reading_and_keep_the_rate_and_the_fraction() {
        let mut clock = SimClock::new(0, 500_000);
        assert_eq!(clock.read(3), Millis(1_000_004)); // 4.5 ms
        clock.jump(3, 20);
        assert_eq!(clock.read(3), Millis(1_000_024));
        // The half millisecond before the jump is kept: 4.5 + 20 + 1.5 = 26.
        assert_eq!(clock.read(4), Millis(1_000_026));
        clock.jump(4, -30);
        assert_eq!(clock.read(4), Millis(999_996));
        assert_eq!(clock.read(6), Millis(999_999));
    }

    #[test]
    fn a_coarse_clock_reads_the_start_of_its_tick() {
        let clock = SimClock::new(0, 0).with_resolution(Millis(10));
        assert_eq!(clock.resolution(), Millis(10));
        assert_eq!(clock.read(0), Millis(1_000_000));
        assert_eq!(clock.read(9), Millis(1_000_000));
        assert_eq!(clock.read(10), Millis(1_000_010));
        assert_eq!(clock.read(19), Millis(1_000_010));
        // Steps count from the epoch, also below it and with an offset.
        let mut behind = SimClock::new(3, 0).with_resolution(Millis(10));
        assert_eq!(behind.read(6), Millis(1_000_000));
        assert_eq!(behind.read(7), Millis(1_000_010));
        behind.jump(7, -25);
        assert_eq!(behind.read(7), Millis(999_980));
        // A drifting clock crosses its steps at its own pace: 10% fast, 1.1 ms per tick.
        let fast = SimClock::new(0, 100_000).with_resolution(Millis(10));
        assert_eq!(fast.read(9), Millis(1_000_000));
        assert_eq!(fast.read(10), Millis(1_000_010));
        assert_eq!(fast.read(18), Millis(1_000_010));
        assert_eq!(fast.read(19), Millis(1_000_020));
    }

    #[test]
    fn a_clock_stepped_below_zero_reads_zero() {
        let mut clock = SimClock::new(0, 0);
        clock.jump(0, -CLOCK_ORIGIN - 10);
        assert_eq!(clock.read(0), Millis(0));
        assert_eq!(clock.read(15), Millis(5));
    }
}
