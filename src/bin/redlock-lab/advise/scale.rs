//! The tick: what one unit of the model is in the deployment's time.

use std::time::Duration;

use anyhow::{Result, bail};
use redlock_lab::scenario::MAX_TICKS;

use super::args::Bound;

/// The tick: the TTL divided into `ttl_ticks` equal parts (kept as the fraction `ttl_us /
/// ttl_ticks`, so that the TTL is exactly `ttl_ticks` ticks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Scale {
    ttl_us: u128,
    ttl_ticks: u32,
}

impl Scale {
    /// The TTL in `ticks` equal parts, for the discrete engine.
    pub(super) fn coarse(ttl: Duration, ticks: u32) -> Result<Scale> {
        if ttl.as_micros() < u128::from(ticks) {
            bail!("--ttl {ttl:?} is shorter than {ticks} microseconds");
        }
        Ok(Scale {
            ttl_us: ttl.as_micros(),
            ttl_ticks: ticks,
        })
    }

    /// A tick of 1 ms (the finest resolution a scenario file takes); an input with a finer
    /// part is rounded up to whole milliseconds, as every fault is.
    pub(super) fn fine(ttl: Duration) -> Result<Scale> {
        let ttl_us = ttl.as_micros();
        let ttl_ticks = ttl_us / 1_000;
        if ttl_ticks > u128::from(MAX_TICKS) {
            bail!(
                "--ttl {} is more than {MAX_TICKS} ticks of 1 ms; pass --ticks N to scale it down",
                show_us(ttl_us)
            );
        }
        if ttl_ticks < 3 || !ttl_us.is_multiple_of(1_000) {
            bail!(
                "--ttl {} is not a whole number of milliseconds of at least 3 ms; pass --ticks N to scale it",
                show_us(ttl_us)
            );
        }
        Ok(Scale {
            ttl_us,
            ttl_ticks: ttl_ticks as u32,
        })
    }

    /// The TTL in ticks.
    pub(super) fn ttl_ticks(&self) -> u32 {
        self.ttl_ticks
    }

    /// A fault in ticks, rounded up: the model's fault is never smaller than the real one.
    pub(super) fn fault(&self, duration: Duration) -> u32 {
        let ticks = (duration.as_micros() * u128::from(self.ttl_ticks)).div_ceil(self.ttl_us);
        u32::try_from(ticks).unwrap_or(u32::MAX)
    }

    /// A bound in ticks (`None`: unbounded).
    pub(super) fn bound(&self, bound: Bound) -> Option<u32> {
        match bound {
            Bound::At(duration) => Some(self.fault(duration)),
            Bound::Unbounded => None,
        }
    }

    /// `ticks` in microseconds, rounded up: a figure is a minimum, so up is the safe side.
    pub(super) fn us(&self, ticks: u32) -> u128 {
        (u128::from(ticks) * self.ttl_us).div_ceil(u128::from(self.ttl_ticks))
    }

    /// Whether a tick is a whole number of microseconds (then figures are exact).
    fn exact(&self) -> bool {
        self.ttl_us.is_multiple_of(u128::from(self.ttl_ticks))
    }

    /// One tick as a scenario file's `resolution`, when it is a whole number of
    /// milliseconds (`"1ms"`, `"2000ms"`).
    pub(super) fn resolution(&self) -> Option<String> {
        let tick = self.ttl_us / u128::from(self.ttl_ticks);
        (self.exact() && tick.is_multiple_of(1_000)).then(|| format!("{}ms", tick / 1_000))
    }

    /// Whether one tick is exactly one millisecond.
    pub(super) fn is_millisecond(&self) -> bool {
        self.exact() && self.ttl_us / u128::from(self.ttl_ticks) == 1_000
    }

    /// `ticks` back in the user's units.
    pub(super) fn show(&self, ticks: u32) -> String {
        show_us(self.us(ticks))
    }
}

/// Microseconds as milliseconds or seconds, with no more digits than needed.
pub(super) fn show_us(us: u128) -> String {
    if us == 0 {
        return "0".to_owned();
    }
    let (value, unit) = if us >= 1_000_000 && us.is_multiple_of(1_000) {
        (us as f64 / 1e6, "s")
    } else {
        (us as f64 / 1e3, "ms")
    };
    let text = format!("{value:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} {unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_round_up_and_figures_convert_back_exactly() {
        let scale = Scale::coarse(Duration::from_secs(10), 5).unwrap();
        assert_eq!(scale.us(1), 2_000_000);
        assert_eq!(scale.fault(Duration::from_millis(50)), 1);
        assert_eq!(scale.fault(Duration::from_secs(2)), 1);
        assert_eq!(scale.fault(Duration::from_millis(2_001)), 2);
        assert_eq!(scale.fault(Duration::ZERO), 0);
        assert_eq!(scale.show(3), "6 s");
        let scale = Scale::coarse(Duration::from_millis(45), 6).unwrap();
        assert_eq!(scale.show(1), "7.5 ms");
        // 10 s in 6 ticks: a tick is 1.666… s, shown rounded up; a fault of exactly one
        // tick's worth rounds to 1, a microsecond more to 2.
        let scale = Scale::coarse(Duration::from_secs(10), 6).unwrap();
        assert_eq!(scale.us(1), 1_666_667);
        assert_eq!(scale.fault(Duration::from_micros(1_666_666)), 1);
        assert_eq!(scale.fault(Duration::from_micros(1_666_667)), 2);
        assert_eq!(scale.us(6), 10_000_000);
        assert_eq!(scale.resolution(), None);
        assert!(Scale::coarse(Duration::from_micros(5), 6).is_err());
    }

    #[test]
    fn the_fine_tick_is_a_millisecond() {
        let ms = Duration::from_millis;
        let scale = Scale::fine(ms(10_000)).unwrap();
        assert_eq!(scale.ttl_ticks(), 10_000);
        assert!(scale.is_millisecond());
        assert_eq!(scale.resolution().as_deref(), Some("1ms"));
        assert_eq!(scale.fault(ms(50)), 50);
        // A finer part rounds up: the model is at least as harsh as the deployment.
        assert_eq!(scale.fault(Duration::from_micros(1_500)), 2);
        assert!(Scale::fine(Duration::from_secs(2_000)).is_err());
        assert!(Scale::fine(Duration::from_micros(10_500)).is_err());
    }
}
