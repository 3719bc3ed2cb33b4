//! Symbolic parameters: timing constants left free, so one exploration answers for every
//! value of them at once.
//!
//! A parameter is a scenario key (`lock.drift_ticks`, `clock.node_error_ticks`, …). Each
//! timing the automaton tests ([`Timing`] on a [`Reading`]) is an affine function of the
//! parameters: its [`Form`]. The forms are *measured*, not restated: the core builds the
//! guards of the scenario and of the scenario with each key one tick larger, and the
//! differences are the coefficients (`tests/synthesis.rs` checks on many points that the
//! measured form is the core's bound). The engine never learns what `ttl − drift` means.
//!
//! Each distinct non-constant form gets an index of its own past the clocks (the step code
//! asks for `x − p ≤ c` with `p` that index, which the zone reads as `x ≤ form + c`), and a
//! pending write's wait and a clock jump have forms too. A symbolic exploration's zones
//! ([`super::parametric`]) hold those forms in their bounds, exactly.

use super::clock_guard::Constraint;
use super::constants::{Reading, Timing};
use super::inequality::Inequality;
use super::zone::Term;

/// An affine function of the parameters: `coefficients · p + constant`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Form {
    /// One coefficient per parameter.
    pub coefficients: Vec<i64>,
    /// The constant term.
    pub constant: i64,
}

impl Form {
    /// The value at `point` (one value per parameter).
    pub(crate) fn at(&self, point: &[i64]) -> i64 {
        self.coefficients
            .iter()
            .zip(point)
            .map(|(a, p)| a * p)
            .sum::<i64>()
            + self.constant
    }

    /// `self − other`.
    pub(crate) fn minus(&self, other: &Form) -> Form {
        Form {
            coefficients: self
                .coefficients
                .iter()
                .zip(&other.coefficients)
                .map(|(a, b)| a - b)
                .collect(),
            constant: self.constant - other.constant,
        }
    }

    /// Whether no parameter moves it.
    pub(crate) fn is_constant(&self) -> bool {
        self.coefficients.iter().all(|&a| a == 0)
    }
}

/// The free parameters of one configuration, the forms of its timings, and the zone
/// index of each distinct form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Parameters {
    /// The scenario keys, in order: the variables of every form.
    pub keys: Vec<String>,
    /// Their values in the scenario the forms were measured around.
    pub base: Vec<i64>,
    /// Each timing's bound.
    pub(crate) bounds: Vec<(Timing, Form)>,
    /// How far ahead each reading is.
    pub(crate) readings: Vec<(Reading, Form)>,
    /// How long a pending op may wait, unpaused and paused (`None`: unbounded): the storage's
    /// delay, and the delay and a pause.
    pub(crate) allowances: [Option<Form>; 2],
    /// How far a clock jump moves a clock.
    pub(crate) jump: Form,
    /// The coefficients of each form with an index of its own, in index order.
    pub dimensions: Vec<Vec<i64>>,
    /// The first form's index (after the reference clock and the clocks).
    pub first: usize,
    /// The values of the keys a symbolic exploration starts from (see
    /// [`Parameters::base_domain`]; a synthesis may narrow it).
    pub(crate) domain: Vec<Inequality>,
}

impl Parameters {
    /// The bound `timing` is tested against on `reading`: its guard's bound minus how far
    /// ahead the reading is (`None` when the configuration has no such guard).
    pub(crate) fn form(&self, timing: Timing, reading: Reading) -> Option<Form> {
        let bound = self.bounds.iter().find(|(t, _)| *t == timing)?;
        let ahead = self.readings.iter().find(|(r, _)| *r == reading)?;
        Some(bound.1.minus(&ahead.1))
    }

    /// Whether `reading` depends on a parameter (then a symbolic exploration tests it even
    /// where the base value is zero).
    pub(crate) fn moves(&self, reading: Reading) -> bool {
        self.readings
            .iter()
            .any(|(r, form)| *r == reading && !form.is_constant())
    }

    /// `number`, the constraint the guard of `timing` on `reading` gives at the base values,
    /// as a constraint on the form's index.
    pub(crate) fn symbolic(
        &self,
        number: Constraint,
        timing: Timing,
        reading: Reading,
    ) -> Constraint {
        let form = self
            .form(timing, reading)
            .expect("a guard the configuration has");
        if form.is_constant() {
            return number;
        }
        // What the relation added to the bound (`x < c` is `x ≤ c − 1`), kept as it is.
        let relation = i64::from(number.term().constant) - form.at(&self.base);
        let term = self.term(&form, relation);
        match number {
            Constraint::AtMost(_) => Constraint::AtMost(term),
            Constraint::AtLeast(_) => Constraint::AtLeast(term),
        }
    }

    /// A pending op's wait, `x ≤ number` at the base values (`paused`: stretched by a pause),
    /// as a constraint on its form's index.
    pub(crate) fn allowance(&self, paused: bool, number: i32) -> Constraint {
        match &self.allowances[usize::from(paused)] {
            Some(form) if !form.is_constant() => Constraint::AtMost(self.term(form, 0)),
            _ => Constraint::AtMost(Term::number(number)),
        }
    }

    /// A clock jump of `number` ticks at the base values, as its form's index plus a number.
    pub(crate) fn jump(&self, number: i32) -> Term {
        if self.jump.is_constant() {
            Term::number(number)
        } else {
            self.term(&self.jump, 0)
        }
    }

    /// `form + extra` as its index plus a number.
    fn term(&self, form: &Form, extra: i64) -> Term {
        let param = self.first
            + self
                .dimensions
                .iter()
                .position(|d| *d == form.coefficients)
                .expect("every tested form has an index");
        let constant = i32::try_from(form.constant + extra).expect("tick counts fit");
        Term { param, constant }
    }

    /// The values a synthesis speaks for: every key on its value's side of zero (at most zero
    /// for a backward jump, at least zero for the rest), and every guard's bound
    /// at least one, as in every file that validates (a TTL above the drift, a check margin
    /// within the lease, a restart delay or guard that is there at all). At zero a reading
    /// from before the anchor, which the core counts as zero elapsed, would meet the guard
    /// where the form's constraint says it does not.
    pub(crate) fn base_domain(&self) -> Vec<Inequality> {
        let keys = self.keys.len();
        // A key is on the side of zero its value is (a backward jump is below it).
        let at_least_zero = (0..keys).map(|k| {
            let mut coefficients = vec![0; keys];
            coefficients[k] = if self.base[k] < 0 { 1 } else { -1 };
            Inequality {
                coefficients,
                bound: 0,
            }
        });
        let bounds = self.bounds.iter().map(|(_, form)| Inequality {
            coefficients: form.coefficients.iter().map(|a| -a).collect(),
            bound: form.constant - 1,
        });
        // The core caps the round timeout at the validity (`ttl − drift`).
        let form = |t: Timing| self.bounds.iter().find(|(b, _)| *b == t).map(|(_, f)| f);
        let capped = match (form(Timing::RoundTimeout), form(Timing::Validity)) {
            (Some(timeout), Some(validity)) => Some(timeout.minus(validity)).map(|f| Inequality {
                coefficients: f.coefficients,
                bound: -f.constant,
            }),
            _ => None,
        };
        at_least_zero
            .chain(bounds)
            .chain(capped)
            .filter(|i| !i.is_constant())
            .map(Inequality::normalized)
            .collect()
    }
}
