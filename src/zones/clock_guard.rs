//! The core's [`ClockGuard`]s as clock constraints on a zone.
//!
//! A guard compares the span a process's clock measured since an anchor with a constant. The
//! zone's clock `x` is that span in true time; the process reads it `ahead` ticks off (a
//! node's clock read up to `ε_n` fast, a client's up to `ε_c` slow), so the guard on the
//! reading `x + ahead` is a bound on `x`. Every bound is non-strict on whole ticks (`span <
//! c` is `span ≤ c − 1`), which keeps the automaton closed (see the module docs of
//! [`crate::zones`]).
//!
//! With symbolic parameters ([`super::parameters`]) the constant of a bound is a form of the
//! keys plus a number: `x ≤ p + c` is asked as `x − p ≤ c`, with `p` the form's index, which a
//! parametric zone reads as a bound that is a form ([`super::parametric`]).

use crate::proto::{ClockGuard, Relation};
use crate::time::Millis;

use super::dbm::Bound;
use super::zone::{Term, Zone};

/// What a guard asks of a clock: at most or at least a bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Constraint {
    /// `x ≤ bound`.
    AtMost(Term),
    /// `x ≥ bound`.
    AtLeast(Term),
}

impl Constraint {
    /// The bound.
    pub(crate) fn term(self) -> Term {
        match self {
            Constraint::AtMost(t) | Constraint::AtLeast(t) => t,
        }
    }

    /// The constant, for extrapolation (which only plain numbers meet: a symbolic
    /// exploration does not extrapolate).
    pub(crate) fn constant(self) -> i32 {
        debug_assert_eq!(
            self.term().param,
            0,
            "a symbolic bound has no single constant"
        );
        self.term().constant
    }

    /// Restricts `zone` to the valuations where `x` meets the constraint; false when none do.
    pub(crate) fn restrict<Z: Zone>(self, zone: &mut Z, x: usize) -> bool {
        match self {
            Constraint::AtMost(t) => zone.constrain(x, t.param, Bound::le(t.constant)),
            Constraint::AtLeast(t) => zone.constrain(t.param, x, Bound::le(-t.constant)),
        }
    }

    /// Whether every valuation of `zone` meets it on `x` (false for an upper bound: time may
    /// always pass beyond it).
    pub(crate) fn certain<Z: Zone>(self, zone: &Z, x: usize) -> bool {
        match self {
            Constraint::AtLeast(t) => zone.entails(t.param, x, Bound::le(-t.constant)),
            Constraint::AtMost(_) => false,
        }
    }
}

/// A guard's constant as a zone constant (tick counts fit: validation bounds them).
pub(crate) fn constant(bound: Millis) -> i32 {
    i32::try_from(bound.as_u64()).unwrap_or(i32::MAX / 4)
}

/// Where `guard` holds, on a clock read `ahead` ticks off the true span.
pub(crate) fn holds(guard: ClockGuard, ahead: i32) -> Constraint {
    let bound = constant(guard.bound) - ahead;
    match guard.relation {
        Relation::Below => Constraint::AtMost(Term::number(bound - 1)),
        Relation::AtLeast => Constraint::AtLeast(Term::number(bound)),
    }
}

/// Where `guard` fails, on a clock read `ahead` ticks off the true span.
pub(crate) fn fails(guard: ClockGuard, ahead: i32) -> Constraint {
    let bound = constant(guard.bound) - ahead;
    match guard.relation {
        Relation::Below => Constraint::AtLeast(Term::number(bound)),
        Relation::AtLeast => Constraint::AtMost(Term::number(bound - 1)),
    }
}

/// A copy of `zone` restricted to where `constraint` holds on `x`, if anywhere.
pub(crate) fn where_<Z: Zone>(zone: &Z, x: usize, constraint: Constraint) -> Option<Z> {
    let mut restricted = zone.clone();
    constraint
        .restrict(&mut restricted, x)
        .then_some(restricted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::Anchor;

    /// On every whole reading, the constraint on the true span says what the guard says of
    /// the reading, also a reading from before the anchor (which the core counts as zero
    /// elapsed). Every guard the automaton tests has a bound of at least 1: a zero restart
    /// delay is no guard, and a check margin stays within the lease.
    #[test]
    fn a_constraint_is_the_guard_on_the_reading() {
        for relation in [Relation::Below, Relation::AtLeast] {
            for bound in 1..12u64 {
                let guard = ClockGuard {
                    anchor: Anchor::KeySet,
                    relation,
                    bound: Millis(bound),
                };
                for ahead in -3..=3i32 {
                    for span in 0..20i32 {
                        let reading = (span + ahead).max(0) as u64;
                        let meets = |c: Constraint| match c {
                            Constraint::AtMost(k) => span <= k.constant,
                            Constraint::AtLeast(k) => span >= k.constant,
                        };
                        assert_eq!(meets(holds(guard, ahead)), guard.holds(Millis(reading)));
                        assert_eq!(meets(fails(guard, ahead)), !guard.holds(Millis(reading)));
                    }
                }
            }
        }
    }
}
