//! The exact constraints one path of a symbolic exploration puts on the keys: for which
//! values of them a run takes exactly these steps.
//!
//! A zone with frozen dimensions over-approximates (see [`super::parameters`]); along one
//! path nothing needs to be approximated. Each step happens at a *moment* (a real time),
//! every clock reads `now − moment it was zero + what jumps added`, and every constraint a
//! step puts on two clocks, or on a clock and a frozen dimension, is a difference of two
//! moments bounded by an affine form of the keys: `τ_to − τ_from ≤ f(keys)`. Eliminating a
//! moment joins each constraint into it with each out of it (their bounds add), so the
//! system stays of that shape, and once every moment is gone what is left are the cycles:
//! `0 ≤ f(keys)`, linear inequalities over the keys. They hold exactly for the keys where
//! the moments can be chosen, that is, where a run takes the path (over the reals; with
//! whole-number bounds a difference system solvable over the reals is solvable over whole
//! numbers, so whole-number keys get a whole-tick run).

use std::collections::HashMap;

use super::dbm::{Bound, SymbolicDbm};
use super::inequality::Inequality;
use super::parameters::{Form, Parameters};
use super::zone::Zone;

/// Past this many constraints between moments an elimination gives up (nothing is claimed).
const MAX_EDGES: usize = 20_000;

/// What a zone dimension reads, in moments and keys.
enum Value {
    /// The reference clock.
    Zero,
    /// A clock: `now − τ_anchor + offset`.
    Clock { anchor: u32, offset: i64 },
    /// A frozen dimension: its coefficients times the keys.
    Frozen(usize),
}

/// The constraints of one path so far (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct PathConstraints {
    /// For each clock dimension (index 0, the reference clock, unused): the moment it last
    /// read zero and what jumps added since.
    clocks: Vec<(u32, i64)>,
    /// Each frozen dimension's coefficients over the keys.
    dimensions: Vec<Vec<i64>>,
    /// How many keys.
    keys: usize,
    /// The moment of the state the path is at.
    now: u32,
    /// Moments so far.
    moments: u32,
    /// `τ_to − τ_from ≤ bound`, as `(from, to, bound)`.
    edges: Vec<(u32, u32, Form)>,
    /// Constraints on the keys alone: `0 ≤ form`.
    on_keys: Vec<Form>,
    /// A strict bound was met (the automaton has none; then nothing is claimed).
    strict: bool,
}

impl PathConstraints {
    /// The start of every path: every clock zero at moment 0.
    pub(crate) fn start(parameters: &Parameters) -> PathConstraints {
        PathConstraints {
            clocks: vec![(0, 0); parameters.first],
            dimensions: parameters.dimensions.clone(),
            keys: parameters.keys.len(),
            now: 0,
            moments: 1,
            edges: Vec::new(),
            on_keys: Vec::new(),
            strict: false,
        }
    }

    fn value(&self, d: usize) -> Value {
        match d {
            0 => Value::Zero,
            d if d < self.clocks.len() => {
                let (anchor, offset) = self.clocks[d];
                Value::Clock { anchor, offset }
            }
            d => Value::Frozen(d - self.clocks.len()),
        }
    }

    /// A new moment, at or after `after` (`later`) or at or before it.
    fn moment(&mut self, after: u32, later: bool) -> u32 {
        let t = self.moments;
        self.moments += 1;
        let zero = self.form(0);
        let edge = if later {
            (t, after, zero)
        } else {
            (after, t, zero)
        };
        self.edges.push(edge);
        t
    }

    fn form(&self, constant: i64) -> Form {
        Form {
            coefficients: vec![0; self.keys],
            constant,
        }
    }

    /// Time passes: the next step is at a moment at or after this one.
    pub(crate) fn up(&mut self) {
        self.now = self.moment(self.now, true);
    }

    /// `x_i − x_j ≤ bound`, at the current moment.
    pub(crate) fn constrain(&mut self, i: usize, j: usize, bound: Bound) {
        if bound.is_infinite() || i == j {
            return;
        }
        self.strict |= !bound.is_weak();
        // `v_i − v_j` as moments with signs, plus a linear part over the keys and a number.
        let mut moments: Vec<(u32, i64)> = Vec::new();
        let mut linear = vec![0i64; self.keys];
        let mut number = 0i64;
        for (d, sign) in [(i, 1i64), (j, -1i64)] {
            match self.value(d) {
                Value::Zero => {}
                Value::Clock { anchor, offset } => {
                    moments.push((self.now, sign));
                    moments.push((anchor, -sign));
                    number += sign * offset;
                }
                Value::Frozen(k) => {
                    for (l, a) in linear.iter_mut().zip(&self.dimensions[k]) {
                        *l += sign * a;
                    }
                }
            }
        }
        let mut net: Vec<(u32, i64)> = Vec::new();
        for (m, a) in moments {
            match net.iter_mut().find(|(n, _)| *n == m) {
                Some(entry) => entry.1 += a,
                None => net.push((m, a)),
            }
        }
        net.retain(|(_, a)| *a != 0);
        // `moments + linear + number ≤ c`: the moments' difference is at most `c − number −
        // linear`.
        let bound = Form {
            coefficients: linear.iter().map(|a| -a).collect(),
            constant: i64::from(bound.constant()) - number,
        };
        match net.as_slice() {
            [] => self.on_keys.push(bound),
            [(a, 1), (b, -1)] => self.edges.push((*b, *a, bound)),
            [(b, -1), (a, 1)] => self.edges.push((*b, *a, bound)),
            other => unreachable!("a difference of two clocks has one moment each way: {other:?}"),
        }
    }

    /// `x := 0`.
    pub(crate) fn reset(&mut self, x: usize) {
        self.clocks[x] = (self.now, 0);
    }

    /// `x` takes any value at least zero: it was zero at some moment up to now.
    pub(crate) fn free(&mut self, x: usize) {
        let anchor = self.moment(self.now, false);
        self.clocks[x] = (anchor, 0);
    }

    /// `x := x + delta`.
    pub(crate) fn shift(&mut self, x: usize, delta: i32) {
        self.clocks[x].1 += i64::from(delta);
    }

    /// The clocks renamed as [`Dbm::permuted`] renames them.
    pub(crate) fn permuted(&self, from: &[usize]) -> PathConstraints {
        let mut out = self.clone();
        for (k, clock) in out.clocks.iter_mut().enumerate() {
            *clock = self.clocks[from.get(k).copied().unwrap_or(k)];
        }
        out
    }

    /// The keys for which the moments can be chosen (see the module docs), or `None` when a
    /// strict bound was met or the elimination grew too large.
    pub(crate) fn on_the_keys(&self) -> Option<Vec<Inequality>> {
        if self.strict {
            return None;
        }
        let mut on_keys = self.on_keys.clone();
        let mut edges: HashMap<(u32, u32, Vec<i64>), i64> = HashMap::new();
        let add = |edges: &mut HashMap<_, i64>,
                   on_keys: &mut Vec<Form>,
                   (from, to, f): (u32, u32, Form)| {
            if from == to {
                on_keys.push(f);
                return;
            }
            let best = edges.entry((from, to, f.coefficients)).or_insert(i64::MAX);
            *best = (*best).min(f.constant);
        };
        for edge in &self.edges {
            add(&mut edges, &mut on_keys, edge.clone());
        }
        let mut alive: Vec<u32> = (0..self.moments).collect();
        while !alive.is_empty() {
            // The moment with the fewest joins next.
            let degree = |m: u32| {
                let ins = edges.keys().filter(|k| k.1 == m).count();
                let outs = edges.keys().filter(|k| k.0 == m).count();
                ins * outs
            };
            let at = (0..alive.len()).min_by_key(|&i| degree(alive[i]))?;
            let m = alive.swap_remove(at);
            let (ins, outs): (Vec<_>, Vec<_>) = edges
                .iter()
                .filter(|(k, _)| k.0 == m || k.1 == m)
                .map(|(k, c)| (k.clone(), *c))
                .partition(|(k, _)| k.1 == m);
            for (k, _) in ins.iter().chain(&outs) {
                edges.remove(k);
            }
            for ((from, _, a), ca) in &ins {
                for ((_, to, b), cb) in &outs {
                    let joined = Form {
                        coefficients: a.iter().zip(b).map(|(x, y)| x + y).collect(),
                        constant: ca + cb,
                    };
                    add(&mut edges, &mut on_keys, (*from, *to, joined));
                }
            }
            if edges.len() > MAX_EDGES {
                return None;
            }
        }
        // `0 ≤ f·keys + c` is `−f·keys ≤ c`.
        let mut out: Vec<Inequality> = on_keys
            .into_iter()
            .map(|f| {
                Inequality {
                    coefficients: f.coefficients.iter().map(|a| -a).collect(),
                    bound: f.constant,
                }
                .normalized()
            })
            .filter(|i| !i.is_constant() || i.bound < 0)
            .collect();
        out.sort_by(|a, b| (&a.coefficients, a.bound).cmp(&(&b.coefficients, b.bound)));
        out.dedup();
        Some(out)
    }
}

/// A zone and the exact constraints of the path to it, stepped together: the zone takes
/// every decision (as it did in the search), the constraints record what the steps asked.
#[derive(Clone, Debug)]
pub(crate) struct Replayed {
    /// The search's zone.
    pub(crate) zone: SymbolicDbm,
    /// The path's constraints.
    pub(crate) path: PathConstraints,
}

impl Zone for Replayed {
    fn bound(&self, i: usize, j: usize) -> Bound {
        self.zone.get(i, j)
    }

    fn includes(&self, other: &Self) -> bool {
        self.zone.includes(&other.zone)
    }

    fn up(&mut self) {
        self.zone.up();
        self.path.up();
    }

    fn constrain(&mut self, i: usize, j: usize, bound: Bound) -> bool {
        self.path.constrain(i, j, bound);
        self.zone.constrain(i, j, bound)
    }

    fn reset(&mut self, x: usize) {
        self.zone.reset(x);
        self.path.reset(x);
    }

    fn free(&mut self, x: usize) {
        self.zone.free(x);
        self.path.free(x);
    }

    fn shift(&mut self, x: usize, delta: i32) {
        self.zone.shift(x, delta);
        self.path.shift(x, delta);
    }

    fn permuted(&self, from: &[usize]) -> Replayed {
        Replayed {
            zone: self.zone.permuted(from),
            path: self.path.permuted(from),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two clocks and three keys `a`, `b`, `c`, each a frozen dimension of its own.
    fn start() -> PathConstraints {
        let parameters = Parameters {
            keys: vec!["a".into(), "b".into(), "c".into()],
            base: vec![0, 0, 0],
            bounds: Vec::new(),
            readings: Vec::new(),
            dimensions: vec![vec![1, 0, 0], vec![0, 1, 0], vec![0, 0, 1]],
            first: 3,
        };
        PathConstraints::start(&parameters)
    }

    const X: usize = 1;
    const Y: usize = 2;
    const A: usize = 3;
    const B: usize = 4;
    const C: usize = 5;

    /// The relation a zone with frozen dimensions loses: `x ≥ a` when `y` is reset, then
    /// `y ≥ c` and `x ≤ b` later, is a run exactly when `a + c ≤ b`.
    #[test]
    fn a_path_keeps_the_sum_a_zone_forgets() {
        let mut path = start();
        path.up();
        path.constrain(A, X, Bound::le(0));
        path.reset(Y);
        path.up();
        path.constrain(C, Y, Bound::le(0));
        path.constrain(X, B, Bound::le(0));
        let keys = path.on_the_keys().unwrap();
        let sum = Inequality {
            coefficients: vec![1, -1, 1],
            bound: 0,
        };
        assert!(keys.contains(&sum), "{keys:?}");
        // The rest follow from it on keys at least zero.
        let holds = |point: &[i64]| keys.iter().all(|i| i.holds_at(point));
        assert!(holds(&[1, 2, 1]) && holds(&[0, 0, 0]));
        assert!(!holds(&[1, 1, 1]) && !holds(&[2, 3, 2]));
    }

    /// A jump adds to what a clock reads; freeing a clock forgets it; a constraint between
    /// two frozen dimensions is one on the keys alone; a strict bound claims nothing.
    #[test]
    fn jumps_frees_and_key_constraints_are_kept() {
        let mut path = start();
        path.up();
        path.shift(X, 3);
        // x = elapsed + 3 ≤ a, and elapsed ≥ 0: a ≥ 3.
        path.constrain(X, A, Bound::le(0));
        path.free(Y);
        path.constrain(Y, B, Bound::le(0));
        // a − c ≤ 1.
        path.constrain(A, C, Bound::le(1));
        let keys = path.on_the_keys().unwrap();
        let ineq = |coefficients: Vec<i64>, bound| Inequality {
            coefficients,
            bound,
        };
        assert!(keys.contains(&ineq(vec![-1, 0, 0], -3)), "{keys:?}");
        assert!(keys.contains(&ineq(vec![1, 0, -1], 1)), "{keys:?}");
        assert!(keys.contains(&ineq(vec![0, -1, 0], 0)), "{keys:?}");
        path.constrain(X, 0, Bound::lt(9));
        assert_eq!(path.on_the_keys(), None);
    }
}
