//! Measuring the forms: how each timing the automaton tests moves when one key moves, read
//! off the core's own guards (never restated here).

use super::automaton::{Unsupported, ZoneConfig};
use super::clock_guard::constant;
use super::constants::{READINGS, Reading, Timing};
use super::parameters::{Form, Parameters};

/// The configuration a key was stepped to: one tick up, and one tick down when the scenario
/// allows it.
pub(crate) struct Steps {
    /// The key one tick larger.
    pub(crate) up: ZoneConfig,
    /// The key one tick smaller (`None`: zero, or a value the scenario refuses).
    pub(crate) down: Option<ZoneConfig>,
}

/// Where the core's arithmetic bends (a saturating subtraction, a cap): a form measured there
/// would be wrong on one side, so a base at a bend is refused.
fn bends(base: &ZoneConfig) -> Result<(), Unsupported> {
    let bound = |t: Timing| base.guard(t).map(|g| constant(g.bound));
    // `ttl − drift` and `(ttl − drift + 1) − margin` saturate at zero; the round timeout is
    // capped at `ttl − drift`.
    if bound(Timing::Validity) == Some(0) || bound(Timing::Margin) == Some(0) {
        return Err(Unsupported::Feature(
            "a free key where a lease or a margin is clamped at zero",
        ));
    }
    if bound(Timing::RoundTimeout) >= bound(Timing::Validity) {
        return Err(Unsupported::Feature(
            "a free key where the round timeout is capped at the validity",
        ));
    }
    Ok(())
}

/// The form of `value` around `base`, over the keys at `values`: its step in each key's
/// direction, which must be the same one tick up and one tick down.
fn slope(
    base: &ZoneConfig,
    steps: &[Steps],
    values: &[i64],
    value: &dyn Fn(&ZoneConfig) -> Option<i64>,
) -> Result<Form, Unsupported> {
    let at_base = value(base).expect("measured only where the base has it");
    let coefficients = steps
        .iter()
        .map(|s| {
            let up = value(&s.up).map(|v| v - at_base);
            let down = s.down.as_ref().map(|d| value(d).map(|v| at_base - v));
            match (up, down) {
                (None, _) | (_, Some(None)) => Err(Unsupported::Feature(
                    "a parameter that adds or removes a guard",
                )),
                (Some(up), Some(Some(down))) if up != down => Err(Unsupported::Feature(
                    "a free key at a bend of the core's arithmetic",
                )),
                (Some(up), _) => Ok(up),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let moved: i64 = coefficients.iter().zip(values).map(|(a, p)| a * p).sum();
    Ok(Form {
        coefficients,
        constant: at_base - moved,
    })
}

impl Parameters {
    /// Measures the forms: `base` is the configuration at `values`, and `steps[i]` the ones
    /// with parameter `i` one tick larger and smaller. The slope below must be the slope
    /// above: a form is affine around the base or not measured at all.
    pub(crate) fn measure(
        keys: Vec<String>,
        values: Vec<i64>,
        base: &ZoneConfig,
        steps: &[Steps],
    ) -> Result<Parameters, Unsupported> {
        bends(base)?;
        let slope = |value: &dyn Fn(&ZoneConfig) -> Option<i64>| slope(base, steps, &values, value);
        let jump = slope(&|c: &ZoneConfig| Some(i64::from(c.jump_ticks)))?;
        let mut bounds = Vec::new();
        for timing in Timing::ALL {
            if base.guard(timing).is_some() {
                let bound = |c: &ZoneConfig| c.guard(timing).map(|g| i64::from(constant(g.bound)));
                bounds.push((timing, slope(&bound)?));
            }
        }
        let mut readings = Vec::new();
        for reading in [Reading::Exact, Reading::NodeFast, Reading::ClientLate] {
            let ahead = |c: &ZoneConfig| Some(i64::from(c.ahead(reading)));
            readings.push((reading, slope(&ahead)?));
        }
        let mut allowances = [None, None];
        for (paused, slot) in allowances.iter_mut().enumerate() {
            let allowance = |c: &ZoneConfig| {
                let storage = c.storage.as_ref()?;
                storage.allowance(paused == 1).map(i64::from)
            };
            if allowance(base).is_some() {
                *slot = Some(slope(&allowance)?);
            }
        }
        let mut parameters = Parameters {
            keys,
            base: values,
            bounds,
            readings,
            allowances,
            jump,
            dimensions: Vec::new(),
            first: 1 + base.clock_count(),
            domain: Vec::new(),
        };
        parameters.dimensions = parameters.distinct_forms();
        parameters.domain = parameters.base_domain();
        Ok(parameters)
    }

    /// The coefficients of each distinct form a guard or a wait is tested against, but the
    /// constant ones: one index each.
    fn distinct_forms(&self) -> Vec<Vec<i64>> {
        let guards = READINGS
            .iter()
            .filter_map(|&(timing, reading)| self.form(timing, reading));
        let mut distinct: Vec<Vec<i64>> = Vec::new();
        let waits = self.allowances.iter().flatten().cloned();
        for form in guards.chain(waits).chain([self.jump.clone()]) {
            if !form.is_constant() && !distinct.contains(&form.coefficients) {
                distinct.push(form.coefficients);
            }
        }
        distinct
    }
}
