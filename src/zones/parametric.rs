//! Parametric zones: zones whose bounds are affine functions of the free keys, with the
//! values of the keys for which the zone is non-empty, so one symbolic state stands for the
//! exact zone of every value at once.
//!
//! A parametric zone is a *region* `K` (linear inequalities over the keys) and a matrix over
//! the clocks whose entry `(i, j)` is a set of affine forms `{f₁, f₂, …}` read as `x_i − x_j ≤
//! min(f₁(p), f₂(p), …)` (no form: no bound). At every value `p` in `K`, the matrix evaluated
//! at `p` is the canonical zone a search with those constants would hold, and outside `K` that
//! search would have found the zone empty. Every operation keeps this exactly:
//!
//! - delay, reset, free and shift are the usual matrix operations, entry by entry, and they
//!   commute with evaluation at `p`;
//! - intersecting with `x_i − x_j ≤ g` is empty at `p` exactly when `g(p) + f(p) < 0` for a
//!   form `f` of entry `(j, i)` (a negative cycle through the new edge of a canonical matrix),
//!   so `K` gains `g + f ≥ 0` for each such form: a conjunction, never a case split. The
//!   closure through the new edge adds the sums `(k, i) + g + (j, l)` to each entry `(k, l)`,
//!   since a minimum of sums is a sum of minima.
//!
//! A form another one of its entry bounds on all of `K` is dropped (an implication over the
//! keys, decided by [`super::inequality`]); one that cannot be compared is kept, which costs
//! space but never exactness. Inclusion of one zone in another is tested form by form and may
//! miss an inclusion (a search then keeps both), never claim a false one. A search over these
//! zones therefore reaches, for each value of the keys, the zones the search with those
//! constants reaches (up to those extra, included zones, and up to what that search forgets
//! once it is certain: an expired key, which no later step can tell from none), and a state
//! that breaks a property breaks it for exactly the values of its region. Each key being a whole number
//! and every bound non-strict, the digitization argument of [`super::zones`](crate::zones)
//! holds at each value, so the regions are exact over the whole numbers: both sides of a
//! boundary are proved for every value by one exploration.
//!
//! Two zones of one region merge when their union is a zone at every value of it
//! ([`ParametricZone::convex_union`]), which adds no valuation at any value.
//!
//! The automaton is closed: every constraint is `≤`, so a bound here carries no strictness.

use std::cell::RefCell;
use std::rc::Rc;

use ahash::AHashMap;
use smallvec::SmallVec;

use super::dbm::Bound;
use super::inequality::{Inequality, contradicts, implies, simplified};
use super::zone::{Term, Zone};

/// The most keys a parametric zone's forms may read.
pub(crate) const MAX_KEYS: usize = 8;

/// `coefficients · p + constant`, over at most [`MAX_KEYS`] keys. The coefficients are the
/// few small numbers a sum of the core's bounds gives (`ttl − drift` is `1, −1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Affine {
    coefficients: [i16; MAX_KEYS],
    constant: i32,
}

impl Affine {
    /// Zero.
    pub(crate) const ZERO: Affine = Affine {
        coefficients: [0; MAX_KEYS],
        constant: 0,
    };

    /// A plain number.
    pub(crate) fn number(constant: i32) -> Affine {
        Affine {
            constant,
            ..Affine::ZERO
        }
    }

    /// The form with these coefficients (one per key) and constant.
    ///
    /// # Panics
    ///
    /// With more than [`MAX_KEYS`] coefficients, or one past `i16`.
    pub(crate) fn of(coefficients: &[i64], constant: i32) -> Affine {
        assert!(coefficients.len() <= MAX_KEYS, "at most {MAX_KEYS} keys");
        let mut form = Affine::number(constant);
        for (slot, &a) in form.coefficients.iter_mut().zip(coefficients) {
            *slot = i16::try_from(a).expect("a form's coefficient is small");
        }
        form
    }

    fn plus(self, other: Affine) -> Affine {
        let mut sum = self;
        for (a, b) in sum.coefficients.iter_mut().zip(other.coefficients) {
            *a = a.checked_add(b).expect("a form's coefficient is small");
        }
        sum.constant = sum
            .constant
            .checked_add(other.constant)
            .expect("a sum of bounds fits");
        sum
    }

    fn negated(self) -> Affine {
        Affine {
            coefficients: self.coefficients.map(|a| -a),
            constant: -self.constant,
        }
    }

    fn minus(self, other: Affine) -> Affine {
        self.plus(other.negated())
    }

    fn is_number(&self) -> bool {
        self.coefficients.iter().all(|&a| a == 0)
    }

    /// The value at `point` (one value per key).
    #[cfg(test)]
    fn at(&self, point: &[i64]) -> i64 {
        self.coefficients
            .iter()
            .zip(point)
            .map(|(&a, &p)| i64::from(a) * p)
            .sum::<i64>()
            + i64::from(self.constant)
    }

    /// `self ≤ 0` over `keys` keys.
    fn at_most_zero(&self, keys: usize) -> Inequality {
        Inequality {
            coefficients: self.coefficients[..keys]
                .iter()
                .map(|&a| i64::from(a))
                .collect(),
            bound: -i64::from(self.constant),
        }
        .normalized()
    }
}

/// Values of the keys, as a conjunction of linear inequalities, interned by [`Regions`].
#[derive(Debug)]
pub(crate) struct Region {
    /// Its place in its [`Regions`].
    id: usize,
    keys: usize,
    /// Normalized, tightest per left-hand side, without what the rest implies, sorted.
    system: Vec<Inequality>,
    /// Whether the system implies `f ≤ 0`, by `f`: the same few forms are compared again and
    /// again.
    memo: RefCell<AHashMap<Affine, bool>>,
}

impl Region {
    /// Its inequalities.
    pub(crate) fn system(&self) -> &[Inequality] {
        &self.system
    }

    /// Whether `f ≤ 0` at every value (`false` when unsure).
    fn implies_at_most_zero(&self, f: Affine) -> bool {
        if f.is_number() {
            return f.constant <= 0;
        }
        let mut memo = self.memo.borrow_mut();
        *memo
            .entry(f)
            .or_insert_with(|| implies(&self.system, &f.at_most_zero(self.keys)))
    }

    /// Whether `f ≥ 0` at every value (`false` when unsure).
    fn implies_at_least_zero(&self, f: Affine) -> bool {
        self.implies_at_most_zero(f.negated())
    }
}

/// The regions of one search, each system once, so that the zones of a region share what
/// is known of it (which forms it orders, which regions it lies within): a search meets a
/// few hundred regions in hundreds of thousands of zones.
#[derive(Debug, Default)]
pub(crate) struct Regions {
    by_system: RefCell<AHashMap<Vec<Inequality>, Rc<Region>>>,
    /// Whether region `a` lies within region `b`, by `(a, b)`.
    within: RefCell<AHashMap<(usize, usize), bool>>,
}

impl Regions {
    /// The region of `system` over `keys` keys.
    pub(crate) fn region(&self, keys: usize, system: Vec<Inequality>) -> Rc<Region> {
        let mut by_system = self.by_system.borrow_mut();
        if let Some(region) = by_system.get(&system) {
            return Rc::clone(region);
        }
        // Without what the rest implies (which also keeps each elimination small), in one
        // order: the same values are one region however they were reached.
        let mut simplified = simplified(tightest(system.clone()), &[]);
        simplified.sort_by(|a, b| (&a.coefficients, a.bound).cmp(&(&b.coefficients, b.bound)));
        let region = match by_system.get(&simplified) {
            Some(region) => Rc::clone(region),
            None => {
                let region = Rc::new(Region {
                    id: by_system.len(),
                    keys,
                    system: simplified.clone(),
                    memo: RefCell::new(AHashMap::new()),
                });
                by_system.insert(simplified, Rc::clone(&region));
                region
            }
        };
        by_system.insert(system, Rc::clone(&region));
        region
    }

    /// `region` where also each form is at least zero; `None` when no value is left.
    fn refined(&self, region: &Region, at_least_zero: &[Affine]) -> Option<Rc<Region>> {
        let mut system = region.system.clone();
        system.extend(
            at_least_zero
                .iter()
                .map(|f| f.negated().at_most_zero(region.keys)),
        );
        (!contradicts(&system)).then(|| self.region(region.keys, system))
    }

    /// Whether every value of `small` is one of `big` (`false` when unsure).
    fn within(&self, small: &Region, big: &Region) -> bool {
        if small.id == big.id {
            return true;
        }
        let mut within = self.within.borrow_mut();
        *within.entry((small.id, big.id)).or_insert_with(|| {
            big.system
                .iter()
                .all(|i| small.system.contains(i) || implies(&small.system, i))
        })
    }
}

/// `system` with one inequality per left-hand side, the tightest.
fn tightest(mut system: Vec<Inequality>) -> Vec<Inequality> {
    system.sort_by(|a, b| (&a.coefficients, a.bound).cmp(&(&b.coefficients, b.bound)));
    system.dedup_by(|later, kept| later.coefficients == kept.coefficients);
    system
}

/// An entry: the minimum of its forms (none: no bound).
type Entry = SmallVec<[Affine; 1]>;

/// Whether `entry` is at most `a` everywhere, as far as numbers tell: yes when one of its
/// forms is `a` minus a number, no when each of them is `a` plus a positive number (or it
/// has none), `None` when only the region can tell.
fn at_most(entry: &Entry, a: Affine) -> Option<bool> {
    let mut numbers = true;
    for &b in entry {
        let difference = b.minus(a);
        if !difference.is_number() {
            numbers = false;
        } else if difference.constant <= 0 {
            return Some(true);
        }
    }
    numbers.then_some(false)
}

/// A zone whose bounds are forms of the keys, exact for each value in its region (see the
/// module docs). Indices past the clocks name the forms of
/// [`super::parameters::Parameters`], each standing for its form of the keys: the step code
/// asks for `x − p ≤ c` and gets `x ≤ p + c`.
#[derive(Clone, Debug)]
pub(crate) struct ParametricZone {
    /// The reference clock and the clocks.
    dim: usize,
    /// The form of each index past the clocks, in order.
    dimensions: Rc<[Affine]>,
    /// The search's regions.
    regions: Rc<Regions>,
    region: Rc<Region>,
    /// Row-major with stride `dim`.
    entries: Vec<Entry>,
}

impl ParametricZone {
    /// Every clock zero, for each value of `keys` keys that meets `domain`; `dimensions`
    /// are the forms of the indices past the clocks.
    pub(crate) fn zero(
        clocks: usize,
        dimensions: Rc<[Affine]>,
        keys: usize,
        domain: Vec<Inequality>,
    ) -> Self {
        let dim = clocks + 1;
        let regions = Rc::new(Regions::default());
        ParametricZone {
            dim,
            dimensions,
            region: regions.region(keys, domain),
            regions,
            entries: vec![SmallVec::from_elem(Affine::ZERO, 1); dim * dim],
        }
    }

    /// Drops the bounds of a zone that is never read again (a retired one in a search's
    /// table): what they held on the heap goes back. Reading them afterwards panics.
    pub(crate) fn forget(&mut self) {
        self.entries = Vec::new();
    }

    /// The values of the keys for which the zone is non-empty.
    pub(crate) fn region(&self) -> &Region {
        &self.region
    }

    fn get(&self, i: usize, j: usize) -> &Entry {
        &self.entries[i * self.dim + j]
    }

    fn set(&mut self, i: usize, j: usize, entry: Entry) {
        self.entries[i * self.dim + j] = entry;
    }

    /// Index `i` as a clock and an offset: a clock is itself, an index past them is the
    /// reference clock plus its form.
    fn resolve(&self, i: usize) -> (usize, Affine) {
        if i < self.dim {
            (i, Affine::ZERO)
        } else {
            (0, self.dimensions[i - self.dim])
        }
    }

    /// `x_i − x_j ≤ c` on indices that may name forms, as `x_ci − x_cj ≤ g`.
    fn on_clocks(&self, i: usize, j: usize, c: i32) -> (usize, usize, Affine) {
        let ((ci, fi), (cj, fj)) = (self.resolve(i), self.resolve(j));
        (ci, cj, Affine::number(c).minus(fi).plus(fj))
    }

    /// Adds `candidate` to entry `(k, l)`, unless a form there is at most it on the whole
    /// region; drops the forms it is at most.
    fn insert(&mut self, k: usize, l: usize, candidate: Affine) {
        let region = &self.region;
        let entry = &mut self.entries[k * self.dim + l];
        if entry
            .iter()
            .any(|&e| region.implies_at_most_zero(e.minus(candidate)))
        {
            return;
        }
        entry.retain(|e| !region.implies_at_most_zero(candidate.minus(*e)));
        let at = entry.partition_point(|e| *e < candidate);
        entry.insert(at, candidate);
    }

    /// Intersects with `x_i − x_j ≤ g` on two clocks; false when it is empty for every value.
    fn tighten(&mut self, i: usize, j: usize, g: Affine) -> bool {
        let region = Rc::clone(&self.region);
        if i == j {
            return self.keep_where(&[g]);
        }
        if self
            .get(i, j)
            .iter()
            .any(|&e| region.implies_at_most_zero(e.minus(g)))
        {
            return true;
        }
        let cycles: SmallVec<[Affine; 4]> = self.get(j, i).iter().map(|&f| g.plus(f)).collect();
        if !self.keep_where(&cycles) {
            return false;
        }
        let n = self.dim;
        let column: Vec<Entry> = (0..n).map(|k| self.get(k, i).clone()).collect();
        let row: Vec<Entry> = (0..n).map(|l| self.get(j, l).clone()).collect();
        for (k, before) in column.iter().enumerate() {
            for (l, after) in row.iter().enumerate() {
                if k == l {
                    continue;
                }
                for &a in before {
                    for &b in after {
                        self.insert(k, l, a.plus(g).plus(b));
                    }
                }
            }
        }
        true
    }

    /// Restricts the region to where every form is at least zero; false when nothing is
    /// left.
    fn keep_where(&mut self, at_least_zero: &[Affine]) -> bool {
        let needed: SmallVec<[Affine; 4]> = at_least_zero
            .iter()
            .copied()
            .filter(|&f| !self.region.implies_at_least_zero(f))
            .collect();
        if needed.is_empty() {
            return true;
        }
        match self.regions.refined(&self.region, &needed) {
            Some(region) => {
                self.region = region;
                true
            }
            None => false,
        }
    }

    /// Whether entry `small` is at most entry `big` at every value of the region (`false`
    /// when unsure): each form of `big` has one of `small` at most it.
    fn entry_at_most(&self, small: &Entry, big: &Entry) -> bool {
        small == big
            || big.iter().all(|&b| {
                at_most(small, b).unwrap_or_else(|| {
                    small
                        .iter()
                        .any(|&a| self.region.implies_at_most_zero(a.minus(b)))
                })
            })
    }

    /// The union of `self` and `other` when it is a zone at every value of their one region,
    /// else `None` (also when unsure). [`Dbm::convex_union`](super::dbm::Dbm) at each value:
    /// the hull takes, entry by entry, the form set that is the larger on the whole region,
    /// and each piece `hull ∧ x_j − x_i < −s` outside `self` (`s` its one form at `(i, j)`)
    /// must lie in `other`. A bound here is weak and the piece's edge strict, so an entry of
    /// the piece, `min(h, t)` with the path `t` through the edge, lies within `other`'s `o`
    /// exactly when `h ≤ o` or `t ≤ o`.
    pub(crate) fn convex_union(&self, other: &Self) -> Option<Self> {
        if self.region.id != other.region.id {
            return None;
        }
        let dim = self.dim;
        let mut hull = Vec::with_capacity(dim * dim);
        for (mine, theirs) in self.entries.iter().zip(&other.entries) {
            if self.entry_at_most(mine, theirs) {
                hull.push(theirs.clone());
            } else if self.entry_at_most(theirs, mine) {
                hull.push(mine.clone());
            } else {
                return None;
            }
        }
        for i in 0..dim {
            for j in (0..dim).filter(|&j| j != i) {
                let (mine, theirs) = (self.get(i, j), other.get(i, j));
                if self.entry_at_most(theirs, mine) {
                    continue;
                }
                let [edge] = mine.as_slice() else {
                    return None; // the complement of a minimum is no zone of ours
                };
                let edge = edge.negated();
                for k in 0..dim {
                    for l in 0..dim {
                        let through: Entry = (hull[k * dim + j].iter())
                            .flat_map(|&a| {
                                hull[i * dim + l].iter().map(move |&b| a.plus(edge).plus(b))
                            })
                            .collect();
                        let bound = other.get(k, l);
                        let within = |forms: &Entry| self.entry_at_most(forms, bound);
                        if !within(&hull[k * dim + l]) && !within(&through) {
                            return None;
                        }
                    }
                }
            }
        }
        Some(ParametricZone {
            dim,
            dimensions: Rc::clone(&self.dimensions),
            regions: Rc::clone(&self.regions),
            region: Rc::clone(&self.region),
            entries: hull,
        })
    }

    /// Entry `(i, j)` at `point` (`None`: no bound); for tests against a concrete zone.
    #[cfg(test)]
    fn at(&self, i: usize, j: usize, point: &[i64]) -> Option<i64> {
        self.get(i, j).iter().map(|f| f.at(point)).min()
    }
}

impl Zone for ParametricZone {
    type Order = Entry;

    fn order(&self, i: usize, j: usize) -> Entry {
        self.get(i, j).clone()
    }

    fn entails(&self, i: usize, j: usize, bound: Bound) -> bool {
        debug_assert!(bound.is_weak(), "the automaton is closed");
        let (ci, cj, g) = self.on_clocks(i, j, bound.constant());
        if ci == cj {
            return self.region.implies_at_least_zero(g);
        }
        self.get(ci, cj)
            .iter()
            .any(|&e| self.region.implies_at_most_zero(e.minus(g)))
    }

    fn includes(&self, other: &Self) -> bool {
        let theirs = &other.region;
        if !self.regions.within(theirs, &self.region) {
            return false;
        }
        // A difference of two forms that is a number settles most comparisons; the region
        // settles the rest.
        let pairs = self.entries.iter().zip(&other.entries);
        pairs
            .filter(|(mine, small)| mine != small)
            .all(|(mine, small)| {
                mine.iter().all(|&a| {
                    at_most(small, a).unwrap_or_else(|| {
                        small
                            .iter()
                            .any(|&b| theirs.implies_at_most_zero(b.minus(a)))
                    })
                })
            })
    }

    fn up(&mut self) {
        for i in 1..self.dim {
            self.set(i, 0, SmallVec::new());
        }
    }

    fn constrain(&mut self, i: usize, j: usize, bound: Bound) -> bool {
        debug_assert!(bound.is_weak(), "the automaton is closed");
        let (ci, cj, g) = self.on_clocks(i, j, bound.constant());
        self.tighten(ci, cj, g)
    }

    fn reset(&mut self, x: usize) {
        for j in 0..self.dim {
            let (from, to) = (self.get(0, j).clone(), self.get(j, 0).clone());
            self.set(x, j, from);
            self.set(j, x, to);
        }
        self.set(x, x, SmallVec::from_elem(Affine::ZERO, 1));
    }

    fn free(&mut self, x: usize) {
        for j in (0..self.dim).filter(|&j| j != x) {
            self.set(x, j, SmallVec::new());
            let to = self.get(j, 0).clone();
            self.set(j, x, to);
        }
    }

    fn shift(&mut self, x: usize, delta: Term) {
        let by = self
            .resolve(delta.param)
            .1
            .plus(Affine::number(delta.constant));
        for j in (0..self.dim).filter(|&j| j != x) {
            for e in &mut self.entries[x * self.dim + j] {
                *e = e.plus(by);
            }
            for e in &mut self.entries[j * self.dim + x] {
                *e = e.minus(by);
            }
        }
    }

    fn permuted(&self, from: &[usize]) -> Self {
        let at = |k: usize| from.get(k).copied().unwrap_or(k);
        let mut out = self.clone();
        for i in 0..self.dim {
            for j in 0..self.dim {
                out.set(i, j, self.get(at(i), at(j)).clone());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zones::dbm::Dbm;

    /// A small generator, so the test needs no crate and one seed replays it.
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 33) % n
        }
    }

    #[derive(Clone, Copy, Debug)]
    enum Op {
        Up,
        Constrain(usize, usize, i32),
        Reset(usize),
        Free(usize),
        Shift(usize, i32),
        Swap(usize, usize),
    }

    const CLOCKS: usize = 3;
    /// Two keys, `a` and `b`; the forms past the clocks are `a`, `b` and `a − b`.
    const KEYS: usize = 2;

    fn dimensions() -> Rc<[Affine]> {
        Rc::from(vec![
            Affine::of(&[1, 0], 0),
            Affine::of(&[0, 1], 0),
            Affine::of(&[1, -1], 0),
        ])
    }

    /// The domain `a ≥ 0, b ≥ 0`.
    fn every_key_at_least_zero() -> Vec<Inequality> {
        (0..KEYS)
            .map(|k| {
                let mut coefficients = vec![0; KEYS];
                coefficients[k] = -1;
                Inequality {
                    coefficients,
                    bound: 0,
                }
            })
            .collect()
    }

    fn op(rng: &mut Lcg) -> Op {
        let clock = |rng: &mut Lcg| 1 + rng.below(CLOCKS as u64) as usize;
        let index = |rng: &mut Lcg| rng.below((CLOCKS + 4) as u64) as usize;
        match rng.below(10) {
            0 | 1 => Op::Up,
            2..=5 => Op::Constrain(index(rng), index(rng), rng.below(9) as i32 - 4),
            6 => Op::Reset(clock(rng)),
            7 => Op::Free(clock(rng)),
            8 => Op::Shift(clock(rng), rng.below(5) as i32 - 2),
            _ => Op::Swap(clock(rng), clock(rng)),
        }
    }

    /// Takes `op` on `zone`, a guard through `constrain`.
    fn step<Z: Zone>(
        zone: &mut Z,
        op: Op,
        constrain: impl FnOnce(&mut Z, usize, usize, i32) -> bool,
    ) -> bool {
        match op {
            Op::Up => zone.up(),
            Op::Constrain(i, j, c) => return constrain(zone, i, j, c),
            Op::Reset(x) => zone.reset(x),
            Op::Free(x) => zone.free(x),
            Op::Shift(x, d) => zone.shift(x, Term::number(d)),
            Op::Swap(x, y) => {
                let mut from: Vec<usize> = (0..=CLOCKS).collect();
                from.swap(x, y);
                *zone = zone.permuted(&from);
            }
        }
        true
    }

    /// The same step on the concrete zone at `point`: a form's index is its value.
    fn concrete(zone: &mut Dbm, op: Op, point: &[i64]) -> bool {
        let dims = dimensions();
        let resolve = |i: usize| -> (usize, i64) {
            if i <= CLOCKS {
                (i, 0)
            } else {
                (0, dims[i - CLOCKS - 1].at(point))
            }
        };
        step(zone, op, |zone, i, j, c| {
            let ((ci, fi), (cj, fj)) = (resolve(i), resolve(j));
            let g = i32::try_from(i64::from(c) - fi + fj).expect("small");
            if ci == cj {
                return g >= 0;
            }
            zone.constrain(ci, cj, Bound::le(g))
        })
    }

    fn parametric(zone: &mut ParametricZone, op: Op) -> bool {
        step(zone, op, |zone, i, j, c| zone.constrain(i, j, Bound::le(c)))
    }

    /// On random runs of steps, the parametric zone is, at each value of the keys in a
    /// box, exactly the concrete zone a search with those values holds: non-empty at the
    /// values of its region, and equal entry by entry there.
    #[test]
    fn a_parametric_zone_is_the_concrete_zone_at_every_value() {
        let points: Vec<[i64; KEYS]> = (0..6).flat_map(|a| (0..6).map(move |b| [a, b])).collect();
        let mut rng = Lcg(7);
        for _ in 0..400 {
            let mut zone =
                ParametricZone::zero(CLOCKS, dimensions(), KEYS, every_key_at_least_zero());
            let mut concretes: Vec<Option<Dbm>> =
                points.iter().map(|_| Some(Dbm::zero(CLOCKS))).collect();
            for _ in 0..12 {
                let step = op(&mut rng);
                let alive = parametric(&mut zone, step);
                for (point, slot) in points.iter().zip(&mut concretes) {
                    if let Some(concrete_zone) = slot
                        && !concrete(concrete_zone, step, point)
                    {
                        *slot = None;
                    }
                }
                for (point, slot) in points.iter().zip(&concretes) {
                    let inside = alive && zone.region().system().iter().all(|i| i.holds_at(point));
                    assert_eq!(inside, slot.is_some(), "{step:?} at {point:?}: {zone:?}");
                    let Some(concrete_zone) = slot else { continue };
                    for i in 0..=CLOCKS {
                        for j in 0..=CLOCKS {
                            let bound = concrete_zone.get(i, j);
                            let expected =
                                (!bound.is_infinite()).then(|| i64::from(bound.constant()));
                            assert_eq!(zone.at(i, j, point), expected, "({i}, {j}) at {point:?}");
                        }
                    }
                }
                if !alive {
                    break;
                }
            }
        }
    }

    /// Two zones of one region from a common start, each the concrete zones at every value
    /// beside it (`None` where a step emptied it).
    fn twins(rng: &mut Lcg, points: &[[i64; KEYS]]) -> Option<[(ParametricZone, Vec<Dbm>); 2]> {
        let mut zone = ParametricZone::zero(CLOCKS, dimensions(), KEYS, every_key_at_least_zero());
        let mut concretes: Vec<Dbm> = points.iter().map(|_| Dbm::zero(CLOCKS)).collect();
        let walk = |rng: &mut Lcg, zone: &mut ParametricZone, concretes: &mut Vec<Dbm>, steps| {
            for _ in 0..steps {
                let step = op(rng);
                if !parametric(zone, step) {
                    return false;
                }
                for (point, concrete_zone) in points.iter().zip(concretes.iter_mut()) {
                    concrete(concrete_zone, step, point);
                }
            }
            true
        };
        let steps = 2 + rng.below(6);
        if !walk(rng, &mut zone, &mut concretes, steps) {
            return None;
        }
        let (mut a, mut b) = ((zone.clone(), concretes.clone()), (zone, concretes));
        if rng.below(2) == 0 {
            // Two resets in either order, as two messages land on two masters.
            let (x, y) = (
                1 + rng.below(CLOCKS as u64) as usize,
                1 + rng.below(CLOCKS as u64) as usize,
            );
            for (zone, (first, second)) in [(&mut a, (x, y)), (&mut b, (y, x))] {
                for step in [Op::Reset(first), Op::Up, Op::Reset(second), Op::Up] {
                    parametric(&mut zone.0, step);
                    for (point, concrete_zone) in points.iter().zip(zone.1.iter_mut()) {
                        concrete(concrete_zone, step, point);
                    }
                }
            }
        }
        let (left, right) = (rng.below(3), rng.below(3));
        (walk(rng, &mut a.0, &mut a.1, left) && walk(rng, &mut b.0, &mut b.1, right))
            .then_some([a, b])
    }

    /// Where the parametric union answers, it is at every value of the region the union
    /// [`Dbm::convex_union`] finds there, entry by entry; and it answers on some pairs that
    /// differ (the test would pass vacuously otherwise).
    #[test]
    fn a_parametric_union_is_the_concrete_union_at_every_value() {
        let points: Vec<[i64; KEYS]> = (0..6).flat_map(|a| (0..6).map(move |b| [a, b])).collect();
        let mut rng = Lcg(11);
        let mut merged = 0;
        for _ in 0..3000 {
            let Some([(a, at_a), (b, at_b)]) = twins(&mut rng, &points) else {
                continue;
            };
            let Some(union) = a.convex_union(&b) else {
                continue;
            };
            merged += usize::from(!a.includes(&b) && !b.includes(&a));
            for (k, point) in points.iter().enumerate() {
                if !union.region().system().iter().all(|i| i.holds_at(point)) {
                    continue;
                }
                let concrete_union = at_a[k].convex_union(&at_b[k]);
                let concrete_union =
                    concrete_union.unwrap_or_else(|| panic!("the union is no zone at {point:?}"));
                for i in 0..=CLOCKS {
                    for j in 0..=CLOCKS {
                        let bound = concrete_union.get(i, j);
                        let expected = (!bound.is_infinite()).then(|| i64::from(bound.constant()));
                        assert_eq!(union.at(i, j, point), expected, "({i}, {j}) at {point:?}");
                    }
                }
            }
        }
        assert!(
            merged > 20,
            "only {merged} unions of two zones neither of which includes the other"
        );
    }

    /// A zone includes another exactly where it should: each one includes itself, a delayed
    /// zone includes the zone it came from, and not the other way round.
    #[test]
    fn inclusion_is_read_form_by_form() {
        let domain = vec![Inequality {
            coefficients: vec![-1, 0],
            bound: -1,
        }];
        let mut zone = ParametricZone::zero(CLOCKS, dimensions(), KEYS, domain);
        zone.up();
        assert!(zone.constrain(1, CLOCKS + 1, Bound::le(2)));
        let mut later = zone.clone();
        later.up();
        assert!(zone.includes(&zone));
        assert!(later.includes(&zone));
        assert!(!zone.includes(&later));
        assert!(zone.entails(1, CLOCKS + 1, Bound::le(2)));
        assert!(!later.entails(1, CLOCKS + 1, Bound::le(2)));
    }
}
