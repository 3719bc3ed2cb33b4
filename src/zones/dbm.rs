//! Difference-bound matrices: convex sets of clock valuations ("zones") as the constraints
//! `x_i − x_j ≺ c` between every pair of clocks, with `x_0` the constant zero.
//!
//! A bound is stored as one `i32` in the encoding of UPPAAL's DBM library: `(c, ≤)` is
//! `2c + 1`, `(c, <)` is `2c`, and `i32::MAX` is "no bound". The encoding orders bounds by
//! tightness (a smaller raw value is a tighter bound), so `min` is intersection and the sum of
//! two bounds is one addition and one `&`.
//!
//! Every operation here keeps the matrix **canonical** (every entry the tightest bound the
//! others imply, computed by Floyd–Warshall), except [`Dbm::extrapolate_lu`], which closes
//! the matrix again itself. Canonical form is what makes [`Dbm::includes`] an entry-wise
//! comparison and [`Dbm::is_empty`] a look at the diagonal.

use std::fmt;

/// One bound `≺ c` of a difference `x_i − x_j`, in the encoding described in the module docs.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Bound(i32);

impl Bound {
    /// No bound at all (`< ∞`).
    pub(crate) const INFINITY: Bound = Bound(i32::MAX);
    /// `≤ 0`: the diagonal of a non-empty zone, and the bounds of the origin.
    pub(crate) const LE_ZERO: Bound = Bound(1);

    /// `≤ c`.
    pub(crate) const fn le(c: i32) -> Bound {
        Bound(2 * c + 1)
    }

    /// `< c`.
    pub(crate) const fn lt(c: i32) -> Bound {
        Bound(2 * c)
    }

    /// The constant `c` (meaningless for [`Bound::INFINITY`]).
    pub(crate) const fn constant(self) -> i32 {
        self.0 >> 1
    }

    /// Whether the bound admits equality (`≤`).
    pub(crate) const fn is_weak(self) -> bool {
        self.0 & 1 == 1
    }

    /// Whether this is [`Bound::INFINITY`].
    pub(crate) const fn is_infinite(self) -> bool {
        self.0 == i32::MAX
    }

    /// The bound on `x − z` implied by `x − y ≺ a` and `y − z ≺' b`: `a + b`, weak only when
    /// both are.
    pub(crate) const fn plus(self, other: Bound) -> Bound {
        if self.is_infinite() || other.is_infinite() {
            return Bound::INFINITY;
        }
        Bound(((self.0 & !1) + (other.0 & !1)) | (self.0 & other.0 & 1))
    }

    /// The bound of the complement: `x_i − x_j ≺ c` fails exactly when `x_j − x_i ≺' −c`,
    /// where `≺'` is `<` for `≤` and `≤` for `<` (meaningless for [`Bound::INFINITY`]).
    const fn negated(self) -> Bound {
        Bound(1 - self.0)
    }

    /// The same bound with its constant moved by `delta` (for a clock shifted by a constant).
    const fn shifted(self, delta: i32) -> Bound {
        if self.is_infinite() {
            self
        } else {
            Bound(self.0 + 2 * delta)
        }
    }
}

impl fmt::Debug for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_infinite() {
            write!(f, "<∞")
        } else if self.is_weak() {
            write!(f, "≤{}", self.constant())
        } else {
            write!(f, "<{}", self.constant())
        }
    }
}

/// A "no constant" marker for [`Dbm::extrapolate_lu`]: the clock is compared with nothing
/// (from that side) in any future, so none of its bounds matter.
pub(super) const NO_CONSTANT: i32 = i32::MIN / 4;

/// The most clocks a concrete search's zone may have, the reference clock included: an
/// automaton's clocks (at most [`MAX_CLOCKS`](super::automaton::MAX_CLOCKS)) and two more that
/// make a counterexample concrete.
pub(super) const MAX_DIM: usize = 12;

/// A zone over `clocks` clocks (plus the reference clock `x_0`), in canonical form.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(super) struct Dbm {
    dim: usize,
    /// Row-major with stride `dim`, `dim²` entries, on the heap: a search's table of
    /// entries stays small to grow, and a retired zone gives its bounds back.
    bounds: Box<[Bound]>,
}

impl Dbm {
    /// The zone where every clock is zero: the start of a run, before any delay.
    ///
    /// # Panics
    ///
    /// When `clocks + 1` exceeds [`MAX_DIM`].
    pub(super) fn zero(clocks: usize) -> Self {
        let dim = clocks + 1;
        assert!(dim <= MAX_DIM, "at most {} clocks", MAX_DIM - 1);
        Dbm {
            dim,
            bounds: vec![Bound::LE_ZERO; dim * dim].into_boxed_slice(),
        }
    }

    /// Drops the matrix of a zone that is never read again (a retired one in a search's
    /// table): what it held on the heap goes back. Reading it afterwards panics.
    pub(super) fn forget(&mut self) {
        self.bounds = Box::default();
    }

    /// The bound on `x_i − x_j` (`0` is the reference clock, clock `k` is index `k`).
    pub(super) fn get(&self, i: usize, j: usize) -> Bound {
        self.bounds[i * self.dim + j]
    }

    fn set(&mut self, i: usize, j: usize, bound: Bound) {
        self.bounds[i * self.dim + j] = bound;
    }

    /// Whether no valuation satisfies the constraints (a negative cycle on the diagonal).
    pub(super) fn is_empty(&self) -> bool {
        (0..self.dim).any(|i| self.get(i, i) < Bound::LE_ZERO)
    }

    /// Floyd–Warshall: every entry becomes the tightest bound the matrix implies. An empty
    /// zone shows a negative diagonal afterwards.
    pub(super) fn canonicalize(&mut self) {
        let dim = self.dim;
        for k in 0..dim {
            for i in 0..dim {
                let ik = self.get(i, k);
                if ik.is_infinite() {
                    continue;
                }
                for j in 0..dim {
                    let through = ik.plus(self.get(k, j));
                    if through < self.get(i, j) {
                        self.set(i, j, through);
                    }
                }
            }
            if self.get(k, k) < Bound::LE_ZERO {
                return;
            }
        }
    }

    /// Delay: time passes by any amount, every clock at rate 1 (the upper bounds go, the
    /// differences stay).
    pub(super) fn up(&mut self) {
        for i in 1..self.dim {
            self.set(i, 0, Bound::INFINITY);
        }
    }

    /// Intersects with `x_i − x_j ≺ bound`; returns whether the zone is still non-empty. The
    /// closure is the O(n²) update through the one changed entry.
    pub(super) fn constrain(&mut self, i: usize, j: usize, bound: Bound) -> bool {
        if bound >= self.get(i, j) {
            return true;
        }
        // Empty at once when the reverse bound makes a negative cycle.
        if bound.plus(self.get(j, i)) < Bound::LE_ZERO {
            self.set(0, 0, Bound::lt(0));
            return false;
        }
        self.set(i, j, bound);
        let dim = self.dim;
        for k in 0..dim {
            let ki = self.get(k, i);
            if ki.is_infinite() {
                continue;
            }
            let kij = ki.plus(bound);
            for l in 0..dim {
                let through = kij.plus(self.get(j, l));
                if through < self.get(k, l) {
                    self.set(k, l, through);
                }
            }
        }
        !self.is_empty()
    }

    /// Intersects with `x ≤ c` (`x` a clock index from 1); returns whether non-empty.
    #[cfg(test)]
    pub(super) fn at_most(&mut self, x: usize, c: i32) -> bool {
        self.constrain(x, 0, Bound::le(c))
    }

    /// Intersects with `x ≥ c`; returns whether non-empty.
    #[cfg(test)]
    pub(super) fn at_least(&mut self, x: usize, c: i32) -> bool {
        self.constrain(0, x, Bound::le(-c))
    }

    /// `x := 0`.
    pub(super) fn reset(&mut self, x: usize) {
        for j in 0..self.dim {
            self.set(x, j, self.get(0, j));
            self.set(j, x, self.get(j, 0));
        }
        self.set(x, x, Bound::LE_ZERO);
    }

    /// Forgets everything about `x` but `x ≥ 0`: the clock is inactive, so zones that differ
    /// only in it are one zone.
    pub(super) fn free(&mut self, x: usize) {
        for j in 0..self.dim {
            if j != x {
                self.set(x, j, Bound::INFINITY);
                self.set(j, x, self.get(j, 0));
            }
        }
    }

    /// `x := x + delta`: a clock that steps by a constant (a clock jump of the process whose
    /// time the clock measures). Every difference with `x` moves by `delta`; the matrix stays
    /// canonical. A negative `delta` may take `x` below zero (a client's clock stepped back
    /// before its round's T1); [`Dbm::extrapolate_lu`] keeps such a lower bound.
    pub(super) fn shift(&mut self, x: usize, delta: i32) {
        for j in 0..self.dim {
            if j != x {
                self.set(x, j, self.get(x, j).shifted(delta));
                self.set(j, x, self.get(j, x).shifted(-delta));
            }
        }
    }

    /// Every clock advances by exactly `delay` (a concrete delay, for a run made concrete).
    pub(super) fn delay_by(&mut self, delay: i32) {
        for x in 1..self.dim {
            self.shift(x, delay);
        }
    }

    /// The smallest whole value of `x_i − x_j` in the zone (`None`: unbounded below). The
    /// zones of a closed automaton have whole-number vertices, so it is attained.
    pub(super) fn least_difference(&self, i: usize, j: usize) -> Option<i64> {
        let bound = self.get(j, i);
        (!bound.is_infinite()).then(|| {
            let c = -i64::from(bound.constant());
            if bound.is_weak() { c } else { c + 1 }
        })
    }

    /// Whether every valuation of `other` is in `self` (both canonical, same clocks).
    pub(super) fn includes(&self, other: &Self) -> bool {
        debug_assert_eq!(self.dim, other.dim);
        let used = self.dim * self.dim;
        self.bounds[..used]
            .iter()
            .zip(&other.bounds[..used])
            .all(|(mine, theirs)| theirs <= mine)
    }

    /// The union of `self` and `other` when it is itself a zone, else `None` (both
    /// canonical, same clocks). The union is convex exactly when it fills the hull `H` (the
    /// entry-wise loosest bounds, canonical as both are): `H \ self` is the union, over each
    /// bound of `self` tighter than `H`'s, of the piece `H ∧ ¬bound`, and each piece must lie
    /// in `other`. No valuation is added, so a search that stores the union reaches what it
    /// reached with both.
    pub(super) fn convex_union(&self, other: &Self) -> Option<Self> {
        debug_assert_eq!(self.dim, other.dim);
        let dim = self.dim;
        let hull = |k: usize, l: usize| self.get(k, l).max(other.get(k, l));
        for i in 0..dim {
            for j in 0..dim {
                let bound = self.get(i, j);
                if i == j || bound >= other.get(i, j) {
                    continue;
                }
                // The piece adds `x_j − x_i ≺ ¬bound` to `H`; closing it through that one
                // edge gives each entry (no copy): a path uses the new edge at most once.
                let edge = bound.negated();
                if edge.plus(hull(i, j)) < Bound::LE_ZERO {
                    continue; // an empty piece
                }
                for k in 0..dim {
                    let to_edge = hull(k, j).plus(edge);
                    for l in 0..dim {
                        if hull(k, l).min(to_edge.plus(hull(i, l))) > other.get(k, l) {
                            return None;
                        }
                    }
                }
            }
        }
        let mut union = self.clone();
        let used = dim * dim;
        for (mine, theirs) in union.bounds[..used].iter_mut().zip(&other.bounds[..used]) {
            *mine = (*mine).max(*theirs);
        }
        Some(union)
    }

    /// Whether every valuation of `self` is LU-simulated by one of `other`, i.e. `self ⊆
    /// a_LU(other)` (Herbreteau, Srivathsan and Walukiewicz 2012), without computing the
    /// abstraction: `self` escapes it exactly when for two clocks `x`, `y` the lower bound of
    /// `x` in `self` is at most `U(x)`, `other` bounds `y − x` tighter than `self` does, and by
    /// more than `L(y)` allows. Constants as in [`Dbm::extrapolate_lu`]; both zones canonical.
    pub(super) fn is_lu_simulated_by(&self, other: &Self, lower: &[i32], upper: &[i32]) -> bool {
        let dim = self.dim;
        let l = |i: usize| if i == 0 { 0 } else { lower[i] };
        let u = |i: usize| if i == 0 { 0 } else { upper[i] };
        for x in 0..dim {
            // A clock compared with nothing from above never tells two valuations apart.
            if u(x) == NO_CONSTANT || self.get(0, x) < Bound::le(-u(x)) {
                continue;
            }
            for y in 0..dim {
                if x == y || l(y) == NO_CONSTANT {
                    continue;
                }
                let theirs = other.get(y, x);
                if theirs < self.get(y, x) && theirs.plus(Bound::lt(-l(y))) < self.get(0, x) {
                    return false;
                }
            }
        }
        true
    }

    /// Extra⁺_LU (Behrmann, Bouyer, Larsen and Pelánek 2006): widens the zone with every
    /// valuation that the LU-simulation says behaves like one of its own, given that clock
    /// `x` is compared with at most `lower[x]` in guards `x ≥ c` / `x > c` and at most
    /// `upper[x]` in guards `x ≤ c` / `x < c` from here on ([`NO_CONSTANT`] where it is never
    /// compared). This is what makes the zone graph finite. Index 0 of both slices is the
    /// reference clock and is ignored. The result is closed again.
    pub(super) fn extrapolate_lu(&mut self, lower: &[i32], upper: &[i32]) {
        let dim = self.dim;
        debug_assert!(lower.len() == dim && upper.len() == dim);
        let l = |i: usize| if i == 0 { 0 } else { lower[i] };
        let u = |i: usize| if i == 0 { 0 } else { upper[i] };
        // The lower bound of clock k is −c_0k; read every one before anything changes.
        let lower_bound: Vec<Bound> = (0..dim).map(|k| self.get(0, k)).collect();
        // The tests compare constants only, as UPPAAL's implementation does: `c > m` for an
        // upper bound (c, ≺), `−c > m` for a lower bound read from row 0.
        let exceeds_below = |b: Bound, m: i32| -b.constant() > m;
        let exceeds_above = |b: Bound, m: i32| b.is_infinite() || b.constant() > m;
        let mut changed = false;
        for i in 0..dim {
            for j in 0..dim {
                if i == j {
                    continue;
                }
                let b = self.get(i, j);
                // Row 0 holds lower bounds, `−c_0j`; with clocks that only grow that
                // entry is at most 0 and the first test never fires there. A clock stepped
                // back below zero (a backward jump) keeps its negative lower bound: values
                // below every constant are told apart exactly by the LU simulation.
                let widened = if i != 0
                    && (exceeds_above(b, l(i))
                        || exceeds_below(lower_bound[i], l(i))
                        || exceeds_below(lower_bound[j], u(j)))
                {
                    Bound::INFINITY
                } else if i == 0 && exceeds_below(lower_bound[j], u(j)) {
                    // x_j > U: all that is left is that it is above every upper guard (and,
                    // for a clock no guard reads, that it is a clock: x_j ≥ 0).
                    if u(j) < 0 {
                        Bound::LE_ZERO
                    } else {
                        Bound::lt(-u(j))
                    }
                } else {
                    b
                };
                if widened != b {
                    self.set(i, j, widened);
                    changed = true;
                }
            }
        }
        if changed {
            self.canonicalize();
        }
    }

    /// Applies a renaming of the clocks: clock `k` of the result is clock `from[k]` of `self`
    /// (`from[0] = 0`; a clock past `from` keeps its place). Used to put a state in its
    /// symmetry-canonical order.
    pub(super) fn permuted(&self, from: &[usize]) -> Self {
        let dim = self.dim;
        let at = |k: usize| from.get(k).copied().unwrap_or(k);
        let mut out = self.clone();
        for i in 0..dim {
            for j in 0..dim {
                out.set(i, j, self.get(at(i), at(j)));
            }
        }
        out
    }
}

impl fmt::Debug for Dbm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        write!(f, "{{")?;
        for i in 0..self.dim {
            for j in 0..self.dim {
                let b = self.get(i, j);
                if i == j || b.is_infinite() {
                    continue;
                }
                // Skip the trivial lower bounds x ≥ 0.
                if i == 0 && b == Bound::LE_ZERO {
                    continue;
                }
                if !first {
                    write!(f, ", ")?;
                }
                first = false;
                let name = |k: usize| {
                    if k == 0 {
                        "0".to_string()
                    } else {
                        format!("x{k}")
                    }
                };
                write!(f, "{}-{}{:?}", name(i), name(j), b)?;
            }
        }
        write!(f, "}}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delayed(clocks: usize) -> Dbm {
        let mut z: Dbm = Dbm::zero(clocks);
        z.up();
        z
    }

    #[test]
    fn bounds_order_by_tightness_and_add() {
        assert!(Bound::lt(3) < Bound::le(3));
        assert!(Bound::le(3) < Bound::lt(4));
        assert!(Bound::le(10) < Bound::INFINITY);
        assert_eq!(Bound::le(2).plus(Bound::le(3)), Bound::le(5));
        assert_eq!(Bound::le(2).plus(Bound::lt(3)), Bound::lt(5));
        assert_eq!(Bound::lt(-2).plus(Bound::lt(3)), Bound::lt(1));
        assert_eq!(Bound::le(-2).plus(Bound::INFINITY), Bound::INFINITY);
        assert_eq!(Bound::le(-4).constant(), -4);
    }

    #[test]
    fn delay_keeps_clocks_equal() {
        let z = delayed(2);
        // x1 − x2 = 0 still, but no upper bound.
        assert_eq!(z.get(1, 2), Bound::LE_ZERO);
        assert_eq!(z.get(2, 1), Bound::LE_ZERO);
        assert!(z.get(1, 0).is_infinite());
        assert!(!z.is_empty());
    }

    #[test]
    fn guards_intersect_and_detect_emptiness() {
        let mut z = delayed(2);
        assert!(z.at_least(1, 3));
        // x2 = x1 ≥ 3, so x2 ≤ 2 is empty.
        let mut w = z.clone();
        assert!(!w.at_most(2, 2));
        assert!(w.is_empty());
        assert!(z.at_most(2, 3));
        // Now x1 = x2 = 3 exactly.
        assert_eq!(z.get(1, 0), Bound::le(3));
        assert_eq!(z.get(0, 1), Bound::le(-3));
    }

    #[test]
    fn canonicalize_agrees_with_constrain() {
        let mut fast = delayed(3);
        fast.reset(2);
        fast.up();
        assert!(fast.at_least(1, 2));
        assert!(fast.at_most(3, 5));
        let mut slow = fast.clone();
        // Loosen one derived entry and let Floyd–Warshall put it back.
        slow.set(1, 0, Bound::INFINITY);
        slow.canonicalize();
        assert_eq!(slow, fast);
    }

    #[test]
    fn reset_makes_a_clock_start_again() {
        let mut z = delayed(2);
        assert!(z.at_least(1, 4));
        z.reset(2);
        // x1 ≥ 4, x2 = 0, so x1 − x2 ≥ 4.
        assert_eq!(z.get(2, 1), Bound::le(-4));
        assert_eq!(z.get(2, 0), Bound::LE_ZERO);
        z.up();
        let mut late = z.clone();
        assert!(late.at_least(2, 10));
        assert_eq!(late.get(0, 1), Bound::le(-14));
    }

    #[test]
    fn free_forgets_one_clock() {
        let mut z = delayed(2);
        assert!(z.at_most(1, 3));
        z.free(2);
        assert!(z.get(2, 0).is_infinite());
        assert!(z.get(2, 1).is_infinite());
        assert_eq!(z.get(1, 0), Bound::le(3));
        let mut big = z.clone();
        assert!(big.at_least(2, 100));
    }

    #[test]
    fn shift_moves_one_clock_ahead() {
        let mut z = delayed(2);
        assert!(z.at_most(1, 3));
        z.shift(2, 2);
        // x2 = x1 + 2, x2 ∈ [2, 5].
        assert_eq!(z.get(2, 1), Bound::le(2));
        assert_eq!(z.get(1, 2), Bound::le(-2));
        assert_eq!(z.get(2, 0), Bound::le(5));
        assert_eq!(z.get(0, 2), Bound::le(-2));
        let mut check = z.clone();
        check.canonicalize();
        assert_eq!(check, z, "shift keeps the matrix canonical");
    }

    #[test]
    fn inclusion_is_entrywise() {
        let big = delayed(2);
        let mut small = big.clone();
        assert!(small.at_least(1, 1));
        assert!(big.includes(&small));
        assert!(!small.includes(&big));
        assert!(big.includes(&big));
    }

    #[test]
    fn extrapolation_bounds_the_constants() {
        // Two clocks that differ by 7, where only constants up to 3 matter.
        let mut z: Dbm = Dbm::zero(2);
        z.up();
        assert!(z.at_least(1, 7));
        z.reset(2);
        z.up();
        let mut wider = z.clone();
        wider.extrapolate_lu(&[0, 3, 3], &[0, 3, 3]);
        assert!(wider.includes(&z));
        // x1 > 3 is all that is left of x1 ≥ 7 …
        assert_eq!(wider.get(0, 1), Bound::lt(-3));
        // … and a zone with x1 ≥ 9 extrapolates to the same.
        let mut further: Dbm = Dbm::zero(2);
        further.up();
        assert!(further.at_least(1, 9));
        further.reset(2);
        further.up();
        further.extrapolate_lu(&[0, 3, 3], &[0, 3, 3]);
        assert_eq!(further, wider);
    }

    #[test]
    fn extrapolation_keeps_what_guards_can_see() {
        let mut z: Dbm = Dbm::zero(1);
        z.up();
        assert!(z.at_most(1, 2));
        let before = z.clone();
        z.extrapolate_lu(&[0, 3], &[0, 3]);
        assert_eq!(z, before);
    }

    #[test]
    fn a_clock_compared_with_nothing_is_forgotten() {
        let mut z: Dbm = Dbm::zero(2);
        z.up();
        assert!(z.at_most(1, 2));
        z.extrapolate_lu(&[0, NO_CONSTANT, 5], &[0, NO_CONSTANT, 5]);
        assert!(z.get(1, 0).is_infinite());
        assert!(z.get(1, 2).is_infinite());
    }

    #[test]
    fn lu_simulation_is_coarser_than_inclusion() {
        let lu = [0, 3, 3];
        // x1 ≥ 5 and x1 ≥ 7 behave alike when no guard reads x1 above 3 …
        let at_least = |c: i32| {
            let mut z = delayed(2);
            assert!(z.at_least(1, c));
            z.reset(2);
            z.up();
            z
        };
        let (five, seven) = (at_least(5), at_least(7));
        assert!(!five.includes(&seven) || !seven.includes(&five));
        assert!(five.is_lu_simulated_by(&seven, &lu, &lu));
        assert!(seven.is_lu_simulated_by(&five, &lu, &lu));
        // … but not when a guard may ask whether x1 ≤ 6.
        let wide = [0, 6, 6];
        assert!(!five.is_lu_simulated_by(&seven, &wide, &wide));
        // Inclusion implies simulation.
        let mut small = delayed(2);
        assert!(small.at_most(1, 1));
        assert!(small.is_lu_simulated_by(&delayed(2), &wide, &wide));
        assert!(!delayed(2).is_lu_simulated_by(&small, &wide, &wide));
    }

    /// Every valuation of two clocks `x ≥ 0`, `y ≥ 0`, cut by `cuts` (`(i, j, c)`: `x_i − x_j ≤
    /// c`); `None` when empty.
    fn quadrant_cut(cuts: &[(usize, usize, i32)]) -> Option<Dbm> {
        let mut z = delayed(2);
        z.free(1);
        z.free(2);
        cuts.iter()
            .all(|&(i, j, c)| i == j || z.constrain(i, j, Bound::le(c)))
            .then_some(z)
    }

    /// Whether the point `(x, y) / 4` lies in `z` (every bound compared exactly, in quarters).
    fn holds_quarter(z: &Dbm, point: [i64; 3]) -> bool {
        (0..3).all(|i| {
            (0..3).all(|j| {
                let b = z.get(i, j);
                let d = point[i] - point[j];
                let c = 4 * i64::from(b.constant());
                b.is_infinite() || d < c || (b.is_weak() && d == c)
            })
        })
    }

    #[test]
    fn two_orders_of_two_resets_are_one_zone() {
        // x reset before y, and y before x: together, both below the time since the start.
        let order = |first: usize, second: usize| {
            let mut z = delayed(3);
            z.reset(first);
            z.up();
            z.reset(second);
            z.up();
            z
        };
        let union = order(1, 2).convex_union(&order(2, 1)).expect("convex");
        let mut both = delayed(3);
        both.reset(1);
        both.reset(2);
        both.up();
        assert!(!both.includes(&union));
        assert!(union.includes(&order(1, 2)) && union.includes(&order(2, 1)));
        // Two boxes with a gap between them are not one zone.
        let below = quadrant_cut(&[(1, 0, 1)]).unwrap();
        let above = quadrant_cut(&[(0, 1, -3)]).unwrap();
        assert!(below.convex_union(&above).is_none());
    }

    proptest::proptest! {
        /// `convex_union` is exact: where it answers, its zone holds a point (on a grid of
        /// quarters, fine enough for every region of two clocks) exactly when one of the two
        /// does; where it refuses, the hull holds a point neither does.
        #[test]
        fn the_union_is_a_zone_exactly_when_it_fills_the_hull(
            a in proptest::collection::vec((0..3usize, 0..3usize, -6..7i32), 1..4),
            b in proptest::collection::vec((0..3usize, 0..3usize, -6..7i32), 1..4),
        ) {
            let (Some(a), Some(b)) = (quadrant_cut(&a), quadrant_cut(&b)) else {
                return Ok(());
            };
            let mut hull = a.clone();
            for i in 0..3 {
                for j in 0..3 {
                    hull.set(i, j, a.get(i, j).max(b.get(i, j)));
                }
            }
            let union = a.convex_union(&b);
            let mut gap = false;
            for x in 0..=120 {
                for y in 0..=120 {
                    let point = [0, x, y];
                    let inside = holds_quarter(&a, point) || holds_quarter(&b, point);
                    gap |= holds_quarter(&hull, point) && !inside;
                    if let Some(union) = &union {
                        proptest::prop_assert_eq!(holds_quarter(union, point), inside);
                    }
                }
            }
            proptest::prop_assert_eq!(union.is_none(), gap);
        }
    }

    #[test]
    fn permutation_swaps_clocks() {
        let mut z = delayed(2);
        assert!(z.at_least(1, 2));
        z.reset(2);
        let swapped = z.permuted(&[0, 2, 1]);
        assert_eq!(swapped.get(0, 2), Bound::le(-2));
        assert_eq!(swapped.get(1, 0), Bound::LE_ZERO);
        assert_eq!(swapped.permuted(&[0, 2, 1]), z);
    }
}
