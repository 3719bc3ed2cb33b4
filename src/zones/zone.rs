//! What a step does to the clocks, as one interface: the step code is written once, and a
//! concrete search runs it on a [`Dbm`], a symbolic one on a
//! [`super::parametric::ParametricZone`], whose bounds are forms of the free keys.

use super::dbm::{Bound, Dbm};

/// A clock's bound: a form's index (`0`, the reference clock, when the bound
/// is a plain number) plus a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Term {
    /// The form's index, or `0`.
    pub(crate) param: usize,
    /// The constant added to it.
    pub(crate) constant: i32,
}

impl Term {
    /// A plain number.
    pub(crate) const fn number(constant: i32) -> Term {
        Term { param: 0, constant }
    }
}

/// The clock operations of the automaton's steps, on a zone of one search: a concrete one
/// ([`Dbm`]) or one whose bounds are forms of the free keys
/// ([`super::parametric::ParametricZone`]). Indices past the clocks name forms of the
/// keys (see [`super::parameters`]).
pub(crate) trait Zone: Clone {
    /// What a symmetric image is ordered by.
    type Order: Ord;
    /// A summary of the bound on `x_i − x_j` (clocks only): what a symmetric image is put in
    /// order by. Any order is sound; one that sees more puts more states alike.
    fn order(&self, i: usize, j: usize) -> Self::Order;
    /// Whether every valuation has `x_i − x_j ≤ bound` (`false` when unsure): a decision a
    /// step may take only when it is certain.
    fn entails(&self, i: usize, j: usize, bound: Bound) -> bool;
    /// Whether the zone includes `other` (`false` when unsure).
    fn includes(&self, other: &Self) -> bool;
    /// Time passes by any amount.
    fn up(&mut self);
    /// Intersects with `x_i − x_j ≺ bound`; returns whether the zone is still non-empty.
    fn constrain(&mut self, i: usize, j: usize, bound: Bound) -> bool;
    /// `x := 0`.
    fn reset(&mut self, x: usize);
    /// Forgets everything about clock `x` but `x ≥ 0`.
    fn free(&mut self, x: usize);
    /// `x := x + delta`, where `delta` is a number or a form's index plus one (a clock jump,
    /// whose size may be a free key).
    fn shift(&mut self, x: usize, delta: Term);
    /// Clock `k` of the result is clock `from[k]` of `self` (see [`Dbm::permuted`]).
    fn permuted(&self, from: &[usize]) -> Self;
}

impl Zone for Dbm {
    type Order = Bound;

    #[inline]
    fn order(&self, i: usize, j: usize) -> Bound {
        self.get(i, j)
    }

    #[inline]
    fn entails(&self, i: usize, j: usize, bound: Bound) -> bool {
        self.get(i, j) <= bound
    }

    #[inline]
    fn includes(&self, other: &Self) -> bool {
        Dbm::includes(self, other)
    }

    #[inline]
    fn up(&mut self) {
        Dbm::up(self);
    }

    #[inline]
    fn constrain(&mut self, i: usize, j: usize, bound: Bound) -> bool {
        Dbm::constrain(self, i, j, bound)
    }

    #[inline]
    fn reset(&mut self, x: usize) {
        Dbm::reset(self, x);
    }

    #[inline]
    fn free(&mut self, x: usize) {
        Dbm::free(self, x);
    }

    #[inline]
    fn shift(&mut self, x: usize, delta: Term) {
        debug_assert_eq!(delta.param, 0, "a concrete zone's jump is a number");
        Dbm::shift(self, x, delta.constant);
    }

    #[inline]
    fn permuted(&self, from: &[usize]) -> Self {
        Dbm::permuted(self, from)
    }
}
