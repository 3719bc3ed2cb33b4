//! `advise --json`: the deployment understood, every figure with its proof and its setting,
//! and the assumptions, as one document for scripts. Durations are in milliseconds (a bound
//! that is `null` is unbounded); a figure is rounded up to the millisecond, as in the text.

use std::time::Duration;

use serde_json::{Value, json};

use super::args::{Args, Bound};
use super::family::Found;
use super::figure::{Figure, Kind, engine, obtained};
use super::settings::{assumptions, ms, setting};
use super::texts::Faults;
use super::whole::Checked;
use crate::Outcome;
use redlock_lab::sweep::Formula;

/// The whole document.
pub(super) fn document(
    args: &Args,
    faults: &Faults,
    figures: &[Figure],
    whole: &[Checked],
    outcome: Outcome,
) -> Value {
    let millis = |d: Duration| d.as_secs_f64() * 1e3;
    let bound = |b: Bound| match b {
        Bound::At(d) => json!(millis(d)),
        Bound::Unbounded => Value::Null,
    };
    json!({
        "deployment": {
            "ttl_ms": millis(args.ttl),
            "clock_error_ms": millis(args.clock_error),
            "max_jump_ms": millis(args.max_jump),
            "max_pause_ms": bound(args.max_pause),
            "network_delay_ms": bound(args.network_delay),
            "restart_persistence": args.restart_persistence,
            "tick_ms": faults.scale.us(1) as f64 / 1e3,
            "ttl_ticks": faults.scale.ttl_ticks(),
        },
        "figures": figures.iter().map(|f| figure(args, faults, f)).collect::<Vec<_>>(),
        "assumptions": assumptions(args),
        // Every figure together against every declared fault, once per way to recover.
        "whole_deployment": whole.iter().map(|w| json!({
            "with": w.with,
            "holds": w.holds,
            "not_proved": w.broken,
            "explored": w.size,
        })).collect::<Vec<_>>(),
        // Whether every figure settled (else `--time-limit` stopped some: exit code 3).
        "complete": outcome != Outcome::Incomplete,
    })
}

/// One figure: its value, how it was obtained, and what to type.
fn figure(args: &Args, faults: &Faults, figure: &Figure) -> Value {
    let setting = setting(args, faults, figure);
    let searches: Vec<&Found> = figure.searches.iter().map(|(_, f)| f).collect();
    let by_synthesis = !searches.is_empty() && searches.iter().all(|f| f.read_off);
    let settled = figure.unsettled().is_none();
    json!({
        "key": figure.kind.key(),
        "settled": settled,
        "not_settled_because": figure.unsettled(),
        "value_ms": figure.value.filter(|_| figure.kind != Kind::Fencing).map(|v| ms(faults, v)),
        "value_ticks": figure.value,
        "required": (figure.kind == Kind::Fencing).then(|| figure.required()),
        "obtained": (settled && !searches.is_empty())
            .then_some(if by_synthesis { "synthesis" } else { "binary search" }),
        "checks": searches.iter().map(|f| f.checks).sum::<usize>(),
        "searches": figure.searches.iter().filter(|_| settled).map(|(family, f)| search(family, f)).collect::<Vec<_>>(),
        "setting": setting.type_this,
        "default_ms": setting.default_ms,
        "default_unsafe": settled && setting.default_unsafe,
    })
}

/// One search: its evidence on both sides and its formula.
fn search(family: &str, found: &Found) -> Value {
    let formula = match &found.formula {
        Some(Formula::Proved {
            condition,
            zones,
            tight,
            exact,
        }) => json!({
            "condition": condition,
            "exact": exact,
            "tight": tight,
            "zones": zones,
        }),
        Some(Formula::NotAtThePoint) => {
            json!({ "not_derived": "the symbolic exploration does not prove the figure's own point" })
        }
        Some(Formula::NotDerived(why)) => json!({ "not_derived": why }),
        None => Value::Null,
    };
    json!({
        "family": family,
        "evidence": found.evidence,
        "obtained": obtained(found),
        "checks": found.checks,
        "engine": engine(found.engine),
        "proved_for": found.proved_for,
        "formula": formula,
    })
}
