//! The core's [`Guard`]s as clock constraints on a zone.
//!
//! A guard compares the span a process's clock measured since an anchor with a constant. The
//! zone's clock `x` is that span in true time; the process reads it `ahead` ticks off (a
//! node's clock read up to `ε_n` fast, a client's up to `ε_c` slow), so the guard on the
//! reading `x + ahead` is a bound on `x`. Every bound is non-strict on whole ticks (`span <
//! c` is `span ≤ c − 1`), which keeps the automaton closed (see the module docs of
//! [`crate::zones`]).

use crate::proto::{Guard, Relation};

use super::config::constant;
use super::dbm::Dbm;

/// What a guard asks of a clock: at most or at least a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Constraint {
    /// `x ≤ c`.
    AtMost(i32),
    /// `x ≥ c`.
    AtLeast(i32),
}

impl Constraint {
    /// The constant, for extrapolation.
    pub(crate) fn constant(self) -> i32 {
        match self {
            Constraint::AtMost(c) | Constraint::AtLeast(c) => c,
        }
    }

    /// Restricts `zone` to the valuations where `x` meets the constraint; false when none do.
    pub(crate) fn restrict(self, zone: &mut Dbm, x: usize) -> bool {
        match self {
            Constraint::AtMost(c) => zone.at_most(x, c),
            Constraint::AtLeast(c) => zone.at_least(x, c),
        }
    }
}

/// Where `guard` holds, on a clock read `ahead` ticks off the true span.
pub(crate) fn holds(guard: Guard, ahead: i32) -> Constraint {
    let bound = constant(guard.bound) - ahead;
    match guard.relation {
        Relation::Below => Constraint::AtMost(bound - 1),
        Relation::AtLeast => Constraint::AtLeast(bound),
    }
}

/// Where `guard` fails, on a clock read `ahead` ticks off the true span.
pub(crate) fn fails(guard: Guard, ahead: i32) -> Constraint {
    let bound = constant(guard.bound) - ahead;
    match guard.relation {
        Relation::Below => Constraint::AtLeast(bound),
        Relation::AtLeast => Constraint::AtMost(bound - 1),
    }
}

/// A copy of `zone` restricted to where `constraint` holds on `x`, if anywhere.
pub(crate) fn where_(zone: &Dbm, x: usize, constraint: Constraint) -> Option<Dbm> {
    let mut restricted = zone.clone();
    constraint
        .restrict(&mut restricted, x)
        .then_some(restricted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::Anchor;
    use crate::time::Millis;

    /// On every whole reading, the constraint on the true span says what the guard says of
    /// the reading.
    #[test]
    fn a_constraint_is_the_guard_on_the_reading() {
        for relation in [Relation::Below, Relation::AtLeast] {
            for bound in 0..12u64 {
                let guard = Guard {
                    anchor: Anchor::KeySet,
                    relation,
                    bound: Millis(bound),
                };
                for ahead in -3..=3i32 {
                    for span in 0..20i32 {
                        let reading = (span + ahead).max(0) as u64;
                        let meets = |c: Constraint| match c {
                            Constraint::AtMost(k) => span <= k,
                            Constraint::AtLeast(k) => span >= k,
                        };
                        // A reading below zero is clamped by the core; the spans here stay
                        // where the reading is the span plus its error.
                        if span + ahead < 0 {
                            continue;
                        }
                        assert_eq!(meets(holds(guard, ahead)), guard.holds(Millis(reading)));
                        assert_eq!(meets(fails(guard, ahead)), !guard.holds(Millis(reading)));
                    }
                }
            }
        }
    }
}
