//! What a step does to the clocks, as one interface: the search runs it on a zone
//! ([`Dbm`]); a replay of one path runs the very same steps on a zone and on the path's
//! exact constraints together ([`super::path_constraints::Replayed`]), so the code that takes
//! a step is also the code that says what the step asked of the clocks.

use super::dbm::{Bound, Dbm};

/// The clock operations of the automaton's steps. Every decision a step takes (is a guard
/// certain, which of two answers is larger, how to order a symmetric image) is read off the
/// search's zone ([`Zone::bound`], [`Zone::includes`]), so a replay takes the decisions the
/// search took.
pub(crate) trait Zone: Clone {
    /// The search's zone's bound on `x_i − x_j`: what the step's decisions are read from.
    fn bound(&self, i: usize, j: usize) -> Bound;
    /// Whether the search's zone includes `other`'s.
    fn includes(&self, other: &Self) -> bool;
    /// Time passes by any amount.
    fn up(&mut self);
    /// Intersects with `x_i − x_j ≺ bound`; returns whether the zone is still non-empty.
    fn constrain(&mut self, i: usize, j: usize, bound: Bound) -> bool;
    /// `x := 0`.
    fn reset(&mut self, x: usize);
    /// Forgets everything about clock `x` but `x ≥ 0`.
    fn free(&mut self, x: usize);
    /// `x := x + delta`.
    fn shift(&mut self, x: usize, delta: i32);
    /// Clock `k` of the result is clock `from[k]` of `self` (see [`Dbm::permuted`]).
    fn permuted(&self, from: &[usize]) -> Self;

    /// Intersects with `x ≤ c`; returns whether non-empty.
    fn at_most(&mut self, x: usize, c: i32) -> bool {
        self.constrain(x, 0, Bound::le(c))
    }
}

impl<const CAP: usize> Zone for Dbm<CAP> {
    #[inline]
    fn bound(&self, i: usize, j: usize) -> Bound {
        self.get(i, j)
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
    fn shift(&mut self, x: usize, delta: i32) {
        Dbm::shift(self, x, delta);
    }

    #[inline]
    fn permuted(&self, from: &[usize]) -> Self {
        Dbm::permuted(self, from)
    }

    #[inline]
    fn at_most(&mut self, x: usize, c: i32) -> bool {
        Dbm::at_most(self, x, c)
    }
}
