//! Durations in a scenario file, and the one rule that turns them into the model's ticks.
//!
//! Every time key has two spellings: a count of ticks (`ttl_ticks = 5`), which the catalog
//! uses, and a duration (`ttl = "10s"`, `jump = "-50ms"`, `drift = "1% + 2ms"`). The rule:
//!
//! * a file that sets `resolution = "…"` counts one tick as that long; each duration must be
//!   a whole number of ticks, and tick keys count ticks of that length;
//! * otherwise a file that writes durations counts one tick as their greatest common divisor
//!   (the coarsest tick that represents each of them exactly, so the fewest states), and
//!   writes no tick keys, whose meaning would change with every duration;
//! * a file without durations counts in abstract ticks, as before.
//!
//! A file that writes its TTL as a duration and no drift gets the client's default drift,
//! `1% + 2ms`; every other key left out takes its default in ticks of the file's resolution. This pass runs before
//! every other check, writing each duration into its tick key at the duration's own span, so
//! the later range checks point at what the user wrote.

use toml::Spanned;

use super::duration::{DriftText, drift_text, exact_millis, signed_millis};
use super::error::Location;
use super::error::ScenarioError;
use super::raw::{RawBound, RawDuration, RawFaults, RawJump, RawLock, RawScenario, RawSteps};
use crate::proto::DriftPolicy;
use crate::time::Millis;

/// How long one tick of a scenario lasts, and which keys the file wrote as durations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Resolution {
    /// One tick, when the file writes durations or sets `resolution`.
    pub tick: Option<Millis>,
    /// Each key written as a duration: the name of its tick key, and the text written.
    pub written: Vec<(&'static str, String)>,
}

impl Resolution {
    /// The duration text written for `tick_key`, if it was written as one.
    pub(super) fn written(&self, tick_key: &str) -> Option<&str> {
        self.written
            .iter()
            .find(|(key, _)| *key == tick_key)
            .map(|(_, text)| text.as_str())
    }
}

/// Where a key's tick count goes.
enum Ticks<'r> {
    /// A count of ticks.
    Count(&'r mut Option<Spanned<u32>>),
    /// A signed step of ticks (a clock jump), or a list of them.
    Step(&'r mut Option<Spanned<RawSteps>>),
    /// A count of ticks, or `"unbounded"`.
    Bound(&'r mut Option<RawBound>),
    /// A count of ticks without a span (`[failover]`'s delay).
    Plain(&'r mut Option<u32>),
}

impl Ticks<'_> {
    fn is_written(&self) -> bool {
        match self {
            Ticks::Count(t) => t.is_some(),
            Ticks::Step(t) => t.is_some(),
            Ticks::Bound(t) => t.is_some(),
            Ticks::Plain(t) => t.is_some(),
        }
    }
}

/// One time key: its duration spelling (taken out of the file), and its tick key.
struct Slot<'r> {
    key: &'static str,
    tick_key: &'static str,
    duration: Option<Spanned<String>>,
    /// `jump = ["10ms", "-20ms"]`: each listed duration with its span (`duration` is then
    /// the list's text, at the list).
    listed: Vec<Spanned<String>>,
    ticks: Ticks<'r>,
    /// Where the tick key is, when it is written with a span.
    tick_span: Option<std::ops::Range<usize>>,
}

/// What one duration says, in milliseconds.
#[derive(Clone)]
enum Value {
    Millis(i64),
    Unbounded,
    /// The milliseconds of each listed duration.
    Listed(Vec<i64>),
}

fn slot<'r>(
    key: &'static str,
    tick_key: &'static str,
    duration: &mut Option<Spanned<RawDuration>>,
    ticks: Ticks<'r>,
) -> Slot<'r> {
    let tick_span = match &ticks {
        Ticks::Count(Some(t)) => Some(t.span()),
        Ticks::Step(Some(t)) => Some(t.span()),
        _ => None,
    };
    Slot {
        key,
        tick_key,
        duration: duration.take().map(as_text),
        listed: Vec::new(),
        ticks,
        tick_span,
    }
}

/// Every time key of the file. The drift comes second, after the TTL it may be a share of.
fn slots(raw: &mut RawScenario) -> Vec<Slot<'_>> {
    let mut out = lock_slots(&mut raw.lock);
    let c = &mut raw.clock;
    out.extend([
        slot(
            "node_error",
            "node_error_ticks",
            &mut c.node_error,
            Ticks::Count(&mut c.node_error_ticks),
        ),
        slot(
            "client_error",
            "client_error_ticks",
            &mut c.client_error,
            Ticks::Count(&mut c.client_error_ticks),
        ),
        slot(
            "horizon",
            "horizon_ticks",
            &mut raw.liveness.horizon,
            Ticks::Count(&mut raw.liveness.horizon_ticks),
        ),
    ]);
    if let Some(s) = raw.storage.as_mut().map(Spanned::get_mut) {
        out.push(slot(
            "check_margin",
            "check_margin_ticks",
            &mut s.check_margin,
            Ticks::Count(&mut s.check_margin_ticks),
        ));
        out.push(slot(
            "max_delay",
            "max_delay_ticks",
            &mut s.max_delay,
            Ticks::Bound(&mut s.max_delay_ticks),
        ));
    }
    push_fault_slots(&mut out, &mut raw.faults);
    if let Some(f) = raw.failover.as_mut().map(Spanned::get_mut) {
        out.push(slot(
            "promotion_delay",
            "promotion_delay_ticks",
            &mut f.promotion_delay,
            Ticks::Plain(&mut f.promotion_delay_ticks),
        ));
    }
    out
}

/// The time keys of `[lock]`, the TTL first.
fn lock_slots(l: &mut RawLock) -> Vec<Slot<'_>> {
    vec![
        slot(
            "ttl",
            "ttl_ticks",
            &mut l.ttl,
            Ticks::Count(&mut l.ttl_ticks),
        ),
        slot(
            "drift",
            "drift_ticks",
            &mut l.drift,
            Ticks::Count(&mut l.drift_ticks),
        ),
        slot(
            "round_timeout",
            "round_timeout_ticks",
            &mut l.round_timeout,
            Ticks::Count(&mut l.round_timeout_ticks),
        ),
        slot(
            "retry_delay",
            "retry_delay_ticks",
            &mut l.retry_delay,
            Ticks::Count(&mut l.retry_delay_ticks),
        ),
    ]
}

/// The time keys of `[faults]`.
fn push_fault_slots<'a>(out: &mut Vec<Slot<'a>>, f: &'a mut RawFaults) {
    if let Some(p) = f.pauses.as_mut() {
        out.push(slot(
            "max",
            "max_ticks",
            &mut p.max,
            Ticks::Bound(&mut p.max_ticks),
        ));
    }
    if let Some(j) = f.clock_jumps.as_mut() {
        let mut one = None;
        let mut listed = Vec::new();
        if let Some(jump) = j.jump.take() {
            let span = jump.span();
            match jump.into_inner() {
                RawJump::One(text) => one = Some(Spanned::new(span, text)),
                RawJump::List(items) => {
                    let texts: Vec<String> = items
                        .iter()
                        .map(|i| format!("{:?}", i.get_ref().0))
                        .collect();
                    one = Some(Spanned::new(
                        span,
                        RawDuration(format!("[{}]", texts.join(", "))),
                    ));
                    listed = items.into_iter().map(as_text).collect();
                }
            }
        }
        let mut jump = slot(
            "jump",
            "jump_ticks",
            &mut one,
            Ticks::Step(&mut j.jump_ticks),
        );
        jump.listed = listed;
        out.push(jump);
    }
    if let Some(c) = f.crashes.as_mut() {
        out.push(slot(
            "restart_delay",
            "restart_delay_ticks",
            &mut c.restart_delay,
            Ticks::Count(&mut c.restart_delay_ticks),
        ));
        out.push(slot(
            "client_guard",
            "client_guard_ticks",
            &mut c.client_guard,
            Ticks::Count(&mut c.client_guard_ticks),
        ));
    }
}

/// Applies the resolution rule (module docs) to the file `file` with text `text`: every
/// duration becomes a tick count in its tick key, at its own span.
pub(super) fn resolve(
    file: &str,
    text: &str,
    raw: &mut RawScenario,
) -> Result<Resolution, ScenarioError> {
    Resolver { file, text }.resolve(raw)
}

/// Where errors are located: the file and its text.
struct Resolver<'a> {
    file: &'a str,
    text: &'a str,
}

impl Resolver<'_> {
    fn resolve(&self, raw: &mut RawScenario) -> Result<Resolution, ScenarioError> {
        let explicit = raw.resolution.take().map(as_text);
        let mut slots = slots(raw);
        if explicit.is_none() && slots.iter().all(|s| s.duration.is_none()) {
            return Ok(Resolution::default());
        }
        default_drift(&mut slots);
        let values = self.values(&slots)?;
        let tick = match &explicit {
            Some(text) => self.explicit_tick(text)?,
            None => {
                self.no_tick_keys(&slots)?;
                common_tick(&values)
            }
        };
        let mut written = Vec::new();
        for (slot, value) in slots.iter_mut().zip(values) {
            let (Some(duration), Some(value)) = (slot.duration.clone(), value) else {
                continue;
            };
            self.store(slot, duration.span(), value, tick, explicit.is_some())?;
            written.push((slot.tick_key, duration.into_inner()));
        }
        Ok(Resolution {
            tick: Some(Millis(tick)),
            written,
        })
    }

    /// Each written duration in milliseconds (the drift resolved against the TTL), refusing
    /// a duration written beside its tick key.
    fn values(&self, slots: &[Slot<'_>]) -> Result<Vec<Option<Value>>, ScenarioError> {
        let mut values: Vec<Option<Value>> = Vec::with_capacity(slots.len());
        for slot in slots {
            let Some(duration) = &slot.duration else {
                values.push(None);
                continue;
            };
            if slot.ticks.is_written() {
                return Err(self.duration_error(
                    duration,
                    format!(
                        "{} and {} are the same setting: write one of them",
                        slot.key, slot.tick_key
                    ),
                ));
            }
            let text = duration.get_ref();
            let bad = |e: super::duration::DurationError| {
                self.duration_error(duration, format!("{} = {text:?}: {e}", slot.key))
            };
            let value = match slot.ticks {
                _ if slot.key == "drift" => {
                    let ttl = match values.first() {
                        Some(Some(Value::Millis(ms))) => Some(*ms),
                        _ => None,
                    };
                    self.drift(duration, drift_text(text).map_err(bad)?, ttl)?
                }
                Ticks::Bound(_) if text.trim() == "unbounded" => Value::Unbounded,
                Ticks::Step(_) if !slot.listed.is_empty() => self.listed(slot)?,
                Ticks::Step(_) => Value::Millis(signed_millis(text).map_err(bad)?),
                _ => Value::Millis(as_i64(exact_millis(text).map_err(bad)?)),
            };
            values.push(Some(value));
        }
        Ok(values)
    }

    /// Each listed duration of `slot` in milliseconds, an error at the one refused.
    fn listed(&self, slot: &Slot<'_>) -> Result<Value, ScenarioError> {
        let mut out = Vec::with_capacity(slot.listed.len());
        for item in &slot.listed {
            let text = item.get_ref();
            let millis = signed_millis(text).map_err(|e| {
                self.duration_error(item, format!("{} = [.., {text:?}, ..]: {e}", slot.key))
            })?;
            out.push(millis);
        }
        Ok(Value::Listed(out))
    }

    /// The drift in milliseconds, by the core's own policy arithmetic.
    fn drift(
        &self,
        at: &Spanned<String>,
        drift: DriftText,
        ttl_ms: Option<i64>,
    ) -> Result<Value, ScenarioError> {
        if drift.factor == 0.0 {
            return Ok(Value::Millis(as_i64(drift.floor_ms)));
        }
        let Some(ttl_ms) = ttl_ms else {
            return Err(self.duration_error(
                at,
                "a drift written as a share of the TTL needs the TTL written as a duration too (ttl = \"10s\")".to_owned(),
            ));
        };
        let policy = DriftPolicy {
            factor: drift.factor,
            floor: Millis(drift.floor_ms),
        };
        let ttl = Millis(ttl_ms.unsigned_abs());
        Ok(Value::Millis(as_i64(policy.drift_for(ttl).as_u64())))
    }

    fn explicit_tick(&self, text: &Spanned<String>) -> Result<u64, ScenarioError> {
        match exact_millis(text.get_ref()) {
            Ok(0) => Err(self.duration_error(text, "resolution must be longer than 0".to_owned())),
            Ok(ms) => Ok(ms),
            Err(e) => Err(self.duration_error(text, format!("resolution: {e}"))),
        }
    }

    /// Without `resolution`, the tick is the durations' common divisor, which a tick count
    /// written beside them would silently depend on.
    fn no_tick_keys(&self, slots: &[Slot<'_>]) -> Result<(), ScenarioError> {
        let Some(slot) = slots.iter().find(|s| s.ticks.is_written()) else {
            return Ok(());
        };
        let message = format!(
            "this file writes durations, so one tick is their greatest common divisor, and {} would change meaning with every duration: write {} as a duration too, or set resolution = \"…\" to fix the tick",
            slot.tick_key, slot.key
        );
        let offset = slot.tick_span.as_ref().map_or(0, |s| s.start);
        Err(ScenarioError::Duration {
            at: Location::of_offset(self.file, self.text, offset),
            message,
        })
    }

    /// Writes one duration into its tick key.
    fn store(
        &self,
        slot: &mut Slot<'_>,
        span: std::ops::Range<usize>,
        value: Value,
        tick: u64,
        explicit: bool,
    ) -> Result<(), ScenarioError> {
        let duration = slot
            .duration
            .as_ref()
            .expect("only written durations are stored");
        let ticks = match value {
            Value::Listed(list) => return self.store_listed(slot, span, &list, tick),
            Value::Unbounded => None,
            Value::Millis(ms) if ms.unsigned_abs() % tick != 0 => {
                debug_assert!(explicit, "the common divisor divides every duration");
                return Err(self.duration_error(
                    duration,
                    format!(
                        "{} = {:?} is not a whole number of ticks of {tick} ms (the file's resolution)",
                        slot.key,
                        duration.get_ref()
                    ),
                ));
            }
            Value::Millis(ms) => Some(ms / tick as i64),
        };
        let too_many = || {
            self.duration_error(
                duration,
                format!("{} = {:?} is too many ticks", slot.key, duration.get_ref()),
            )
        };
        let count = |t: i64| u32::try_from(t).map_err(|_| too_many());
        match (&mut slot.ticks, ticks) {
            (Ticks::Bound(t), None) => **t = Some(RawBound::Unbounded),
            (Ticks::Bound(t), Some(n)) => **t = Some(RawBound::Ticks(count(n)?)),
            (Ticks::Count(t), Some(n)) => **t = Some(Spanned::new(span, count(n)?)),
            (Ticks::Plain(t), Some(n)) => **t = Some(count(n)?),
            (Ticks::Step(t), Some(n)) => {
                **t = Some(Spanned::new(
                    span,
                    RawSteps::One(i32::try_from(n).map_err(|_| too_many())?),
                ))
            }
            (_, None) => {
                return Err(
                    self.duration_error(duration, format!("{} cannot be \"unbounded\"", slot.key))
                );
            }
        }
        Ok(())
    }

    /// Writes each listed duration into the list of its tick key, at its own span.
    fn store_listed(
        &self,
        slot: &mut Slot<'_>,
        span: std::ops::Range<usize>,
        list: &[i64],
        tick: u64,
    ) -> Result<(), ScenarioError> {
        let mut steps = Vec::with_capacity(list.len());
        for (item, &ms) in slot.listed.iter().zip(list) {
            let text = item.get_ref();
            let ticks = (ms.unsigned_abs() % tick == 0)
                .then(|| i32::try_from(ms / tick as i64).ok())
                .flatten()
                .ok_or_else(|| {
                    self.duration_error(
                        item,
                        format!("{} = [.., {text:?}, ..] is not a whole number of ticks of {tick} ms (the file's resolution)", slot.key),
                    )
                })?;
            steps.push(Spanned::new(item.span(), ticks));
        }
        if let Ticks::Step(t) = &mut slot.ticks {
            **t = Some(Spanned::new(span, RawSteps::List(steps)));
        }
        Ok(())
    }

    fn duration_error(&self, at: &Spanned<String>, message: String) -> ScenarioError {
        ScenarioError::Duration {
            at: Location::of_offset(self.file, self.text, at.span().start),
            message,
        }
    }
}

/// The client's own default drift (`Config`'s `1% + 2ms`) for a file that writes its TTL as
/// a duration and no drift: a deployment written in real units gets the allowance the
/// crate's client would give it, not one tick of whatever the durations' divisor is.
fn default_drift(slots: &mut [Slot<'_>]) {
    let [ttl, drift, ..] = slots else {
        unreachable!("slots() lists the TTL and the drift first")
    };
    if drift.duration.is_none()
        && !drift.ticks.is_written()
        && let Some(ttl) = &ttl.duration
    {
        let policy = DriftPolicy::default();
        let text = format!("{}% + {}ms", policy.factor * 100.0, policy.floor.as_u64());
        drift.duration = Some(Spanned::new(ttl.span(), text));
    }
}

/// The greatest common divisor of the written durations (1 ms when every one is zero).
fn common_tick(values: &[Option<Value>]) -> u64 {
    let gcd = values
        .iter()
        .flat_map(|v| match v {
            Some(Value::Millis(ms)) => vec![ms.unsigned_abs()],
            Some(Value::Listed(list)) => list.iter().map(|ms| ms.unsigned_abs()).collect(),
            _ => Vec::new(),
        })
        .fold(0, gcd);
    gcd.max(1)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

fn as_text(duration: Spanned<RawDuration>) -> Spanned<String> {
    let span = duration.span();
    Spanned::new(span, duration.into_inner().0)
}

fn as_i64(ms: u64) -> i64 {
    i64::try_from(ms).expect("a parsed duration is at most MAX_MILLIS")
}
