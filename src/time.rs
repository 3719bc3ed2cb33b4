//! Integer time: spans and clock readings in milliseconds (or model ticks).
//!
//! Nothing in this module reads a clock. A clock reading is a [`Millis`] that somebody outside
//! the core took from *their* clock and handed in; which clock it came from (a node's wall clock,
//! a client's monotonic clock, a model's tick counter) is the caller's business. One type serves
//! for spans and readings because every reading the core sees is "milliseconds since an epoch the
//! caller chose", and the arithmetic between them is span arithmetic.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Where every clock of the model and the simulator starts (plus its offset): far enough
/// from zero that a clock stepped back by up to this much never reads below zero. Stories
/// count readings from here ([`Millis::since_origin`]), so a clock without offset or error
/// reads true time.
pub const CLOCK_ORIGIN: i64 = 1_000_000;

/// The unit a run counts time in: the model's discrete ticks, or the simulator's and the
/// client's milliseconds. Stories say amounts in it ([`Unit::amount`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Model ticks.
    Ticks,
    /// Milliseconds.
    Millis,
}

impl Unit {
    /// The unit a scenario's stories tell amounts in, from its tick (`None`: abstract
    /// ticks): milliseconds for a file whose tick is one millisecond, where an instant's tick
    /// count is its milliseconds too; ticks otherwise, so that a story's instants (`t=3`) and
    /// its amounts count in one unit.
    pub fn of_tick(tick: Option<Millis>) -> Unit {
        match tick {
            Some(Millis(1)) => Unit::Millis,
            _ => Unit::Ticks,
        }
    }

    /// `n` of this unit in words: `1 tick`, `3 ticks`, `3 ms`.
    pub fn amount(self, n: u64) -> String {
        match (self, n) {
            (Unit::Ticks, 1) => "1 tick".to_owned(),
            (Unit::Ticks, n) => format!("{n} ticks"),
            (Unit::Millis, n) => format!("{n} ms"),
        }
    }
}

/// A number of milliseconds: a span, or a reading of some clock relative to its epoch.
///
/// In the model checker and the simulator one millisecond is one tick of discrete time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Millis(pub u64);

impl Millis {
    /// Zero milliseconds.
    pub const ZERO: Millis = Millis(0);

    /// The number of milliseconds as an integer.
    pub const fn as_u64(self) -> u64 {
        self.0
    }

    /// This clock reading counted from [`CLOCK_ORIGIN`], as stories tell it.
    pub const fn since_origin(self) -> i64 {
        self.0 as i64 - CLOCK_ORIGIN
    }

    /// `self - other`, or zero when `other` is later.
    pub const fn saturating_sub(self, other: Millis) -> Millis {
        Millis(self.0.saturating_sub(other.0))
    }

    /// `self - other` as a signed number of milliseconds (negative when `other` is later).
    pub const fn signed_sub(self, other: Millis) -> i64 {
        // Readings stay far below 2^63 ms (292 million years), so the casts cannot wrap.
        self.0 as i64 - other.0 as i64
    }

    /// Converts to a [`std::time::Duration`].
    pub const fn to_duration(self) -> std::time::Duration {
        std::time::Duration::from_millis(self.0)
    }

    /// Converts from a [`std::time::Duration`], rounding down to whole milliseconds and saturating.
    pub fn from_duration(duration: std::time::Duration) -> Millis {
        Millis(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX))
    }
}

impl Add for Millis {
    type Output = Millis;
    fn add(self, rhs: Millis) -> Millis {
        Millis(self.0.saturating_add(rhs.0))
    }
}

impl AddAssign for Millis {
    fn add_assign(&mut self, rhs: Millis) {
        *self = *self + rhs;
    }
}

impl Sub for Millis {
    type Output = Millis;
    /// Saturating: a span never goes below zero.
    fn sub(self, rhs: Millis) -> Millis {
        self.saturating_sub(rhs)
    }
}

impl fmt::Display for Millis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ms", self.0)
    }
}

impl From<u64> for Millis {
    fn from(ms: u64) -> Millis {
        Millis(ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subtraction_saturates_and_signed_sub_does_not() {
        assert_eq!(Millis(3) - Millis(5), Millis::ZERO);
        assert_eq!(Millis(3).signed_sub(Millis(5)), -2);
        assert_eq!(Millis(u64::MAX) + Millis(1), Millis(u64::MAX));
    }

    #[test]
    fn duration_round_trip() {
        let d = std::time::Duration::from_micros(12_999);
        assert_eq!(Millis::from_duration(d), Millis(12));
        assert_eq!(Millis(12).to_duration().as_millis(), 12);
    }
}
