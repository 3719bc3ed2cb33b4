//! The figures: the drift allowance first, then the restart delay (or guard) and the check
//! margin with that allowance.

use std::fmt::Write as _;

use anyhow::Result;
use redlock_lab::check::Engine;
use redlock_lab::scenario::property;

use super::args::{Args, Bound};
use super::family::{Family, Found, run_family, write_files};
use super::scale::{Scale, show_us};
use super::settings::{self, Plan};
use super::texts::{Faults, crash_text, drift_text, storage_text};
use super::whole;
use crate::Outcome;
use redlock_lab::sweep::Formula;

/// Scales the deployment, runs every search, prints the figures, writes the files.
pub(crate) fn run(args: &Args) -> Result<Outcome> {
    let scale = match args.ticks {
        Some(ticks) => Scale::coarse(args.ttl, ticks)?,
        None => Scale::fine(args.ttl)?,
    };
    let faults = Faults::of(args, scale);
    let mut out = scaling_header(args, &faults);
    // What it understood comes at once, and each figure as it settles.
    let mut stream = Stream {
        keep_going: args.out.is_some(),
        ..Stream::default()
    };
    stream.show(&out)?;
    let (drift, mut found) = advise_drift(&faults, &mut out)?;
    stream.show(&out)?;
    let Some(drift) = drift else {
        return finish(args, &out, stream, &found, Outcome::Mismatch);
    };
    let (restart_delay, restart_guard) = advise_restart(&faults, drift, &mut out, &mut found)?;
    stream.show(&out)?;
    let margin = advise_storage(&faults, drift, &mut out, &mut found)?;
    let plan = Plan {
        drift,
        restart_delay,
        restart_guard,
        margin,
    };
    let whole = confirm_whole(&faults, &plan, &mut out)?;
    stream.show(&out)?;
    settings::write(&mut out, args, &faults, &plan);
    finish(args, &out, stream, &found, whole)
}

/// 4. Every figure together against every declared fault, once per way to recover from a
///    crash: `Mismatch` when one such deployment breaks a property.
fn confirm_whole(faults: &Faults, plan: &Plan, out: &mut String) -> Result<Outcome> {
    let mut outcome = Outcome::Success;
    for recovery in whole::recoveries(plan) {
        let (holds, line) = whole::confirm(faults, plan, recovery)?;
        let _ = writeln!(out, "{line}");
        if !holds {
            outcome = Outcome::Mismatch;
        }
    }
    Ok(outcome)
}

/// How much of the output has been printed, and the error that stopped printing, if any.
#[derive(Default)]
struct Stream {
    printed: usize,
    failed: Option<anyhow::Error>,
    /// Whether the searches go on when stdout fails: with `--out`, whose files are what was
    /// asked for; without it nobody is left to tell.
    keep_going: bool,
}

impl Stream {
    /// Prints what `out` gained since the last call; fails when stdout does, unless the
    /// searches must go on, and then the end reports the error.
    fn show(&mut self, out: &str) -> Result<()> {
        if self.failed.is_none()
            && let Err(error) = out!("{}", &out[self.printed..])
        {
            if !self.keep_going {
                return Err(error);
            }
            self.failed = Some(error);
        }
        self.printed = out.len();
        Ok(())
    }
}

/// Writes the files, then prints the rest of the figures and where the files went.
fn finish(
    args: &Args,
    out: &str,
    stream: Stream,
    found: &[Found],
    outcome: Outcome,
) -> Result<Outcome> {
    // Files first: they are what `--out` asked for, even if the reader of stdout left.
    let wrote = write_files(args, found)?;
    if let Some(error) = stream.failed {
        return Err(error);
    }
    out!("{}{wrote}", &out[stream.printed..])?;
    Ok(outcome)
}

/// The lines that say what a tick is and what every fault became in ticks.
fn scaling_header(args: &Args, faults: &Faults) -> String {
    let scale = faults.scale;
    let t = scale.ttl_ticks();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Scaling: 1 tick = {} (the TTL, {}, is exactly {t} ticks).",
        scale.show(1),
        show_us(args.ttl.as_micros())
    );
    let _ = writeln!(
        out,
        "Every fault is rounded up to whole ticks, so the model is at least as harsh as the deployment:"
    );
    let ticks = |t: Option<u32>| t.map_or("unbounded".to_owned(), |t| t.to_string());
    let _ = writeln!(
        out,
        "  clock error {} -> {} tick(s) on every node and client reading; max jump {} -> {}; max pause {} -> {}; network delay {} -> {}.",
        show_us(args.clock_error.as_micros()),
        faults.clock_error,
        show_us(args.max_jump.as_micros()),
        faults.jump,
        bound_text(args.max_pause),
        ticks(faults.pause),
        bound_text(args.network_delay),
        ticks(faults.delay),
    );
    let _ = writeln!(
        out,
        "Each figure is the smallest whole number of ticks at which the checker proves the property, converted back and rounded up to the microsecond (figures are minimums); use it or more.\n"
    );
    out
}

fn bound_text(bound: Bound) -> String {
    match bound {
        Bound::At(d) => show_us(d.as_micros()),
        Bound::Unbounded => "unbounded".to_owned(),
    }
}

/// Ticks to the user's units for a figure (with the tick count unless a tick is 1 ms), or
/// why there is none.
fn figure(faults: &Faults, value: Option<u32>) -> String {
    match value {
        Some(ticks) if faults.scale.is_millisecond() => faults.scale.show(ticks),
        Some(ticks) => format!(
            "{} ({ticks} tick{})",
            faults.scale.show(ticks),
            if ticks == 1 { "" } else { "s" }
        ),
        None => "none in range".to_owned(),
    }
}

/// The evidence of a search, with how many checks it took and which engine made them.
fn evidence(found: &Found) -> String {
    let engine = if found.engine == Engine::Zones {
        "zone engine"
    } else {
        "discrete engine"
    };
    let plural = if found.checks == 1 { "" } else { "s" };
    let proved = found
        .proved_for
        .as_deref()
        .map(|sizes| format!(", proved for {sizes}"))
        .unwrap_or_default();
    let how = if found.read_off {
        "read off the symbolic exploration, confirmed by"
    } else {
        "binary search,"
    };
    format!(
        "{} ({how} {} check{plural}, {engine}{proved})",
        found.evidence, found.checks
    )
}

/// The line under a figure that says what holds for every value of its keys (nothing when
/// the figure has no formula).
fn formula_line(out: &mut String, faults: &Faults, found: &Found, label: Option<&str>) {
    let Some(formula) = &found.formula else {
        return;
    };
    let unit = if faults.scale.is_millisecond() {
        "in ms".to_owned()
    } else {
        format!("in ticks of {}", faults.scale.show(1))
    };
    let label = label.map(|l| format!("{l}; ")).unwrap_or_default();
    let text = match formula {
        Formula::Proved {
            condition,
            zones,
            tight,
            exact: true,
        } => format!(
            "holds exactly when {condition}   ({label}{unit}; both sides proved for every value at N=3, C=2: one symbolic exploration, {zones} zones{})",
            if *tight { "; tight" } else { "" }
        ),
        Formula::Proved {
            condition,
            zones,
            tight,
            exact: false,
        } => format!(
            "holds whenever {condition}   ({label}{unit}; proved for every value by one symbolic exploration at N=3, C=2, {zones} zones{})",
            if *tight {
                "; tight: one tick less is outside it"
            } else {
                ""
            }
        ),
        Formula::NotAtThePoint => format!(
            "not derived ({label}the symbolic exploration does not prove the figure's own point: please report it)"
        ),
        Formula::NotDerived(why) => format!("not derived ({label}{why})"),
    };
    let _ = writeln!(out, "  for every value    {text}");
}

/// 1. The drift allowance: clock error on both sides and the jump, on a node (forward) and
///    on a client (backward). The allowance is the largest of the families' figures, `None`
///    if one has none; its line (or why there is none) goes to `out`.
fn advise_drift(faults: &Faults, out: &mut String) -> Result<(Option<u32>, Vec<Found>)> {
    let drift_families = drift_families(faults);
    let mut found = Vec::new();
    for family in &drift_families {
        found.push(run_family(family)?);
    }
    let drift = found
        .iter()
        .map(|f| f.value)
        .try_fold(0, |max, v| v.map(|v| v.max(max)));
    let Some(drift) = drift else {
        let _ = writeln!(
            out,
            "drift allowance: none below the TTL keeps mutual exclusion ({}).\nLengthen the TTL, or bound the clocks better; nothing else can be advised.",
            found
                .iter()
                .map(|f| f.evidence.clone())
                .collect::<Vec<_>>()
                .join("; ")
        );
        return Ok((None, found));
    };
    let _ = writeln!(
        out,
        "drift allowance      {}   checker: {}",
        figure(faults, Some(drift)),
        found
            .iter()
            .zip(&drift_families)
            .map(|(f, family)| format!("{}: {}", family.label, evidence(f)))
            .collect::<Vec<_>>()
            .join("; ")
    );
    for (f, family) in found.iter().zip(&drift_families) {
        formula_line(
            out,
            faults,
            f,
            (drift_families.len() > 1).then_some(family.label),
        );
    }
    Ok((Some(drift), found))
}

/// The keys a drift figure's formula leaves free against a client's backward jump: the TTL,
/// the allowance and both clock errors (the jump, below zero, stays the deployment's number).
const DRIFT_KEYS: &[&str] = &[
    "lock.ttl_ticks",
    "lock.drift_ticks",
    "clock.node_error_ticks",
    "clock.client_error_ticks",
];

/// The same and a node's forward jump, when there is one.
const NODE_DRIFT_KEYS: &[&str] = &[
    "lock.ttl_ticks",
    "lock.drift_ticks",
    "clock.node_error_ticks",
    "clock.client_error_ticks",
    "faults.clock_jumps.jump_ticks",
];

/// The drift families: a node's forward jump always (with clock error alone when there is no
/// jump), and a client's backward jump when there is one.
fn drift_families(faults: &Faults) -> Vec<Family<'_>> {
    let t = faults.scale.ttl_ticks();
    let mut families = vec![Family {
        slug: "drift",
        label: if faults.jump > 0 {
            "clock error and a node's forward jump"
        } else {
            "clock error"
        },
        key: "lock.drift_ticks",
        from: 0,
        to: t - 1,
        text: Box::new(|drift| drift_text(faults, drift, "node")),
        must_hold: &[property::MUTUAL_EXCLUSION],
        free: NODE_DRIFT_KEYS,
    }];
    if faults.jump > 0 {
        families.push(Family {
            slug: "drift-client-jump",
            label: "clock error and a client's backward jump",
            key: "lock.drift_ticks",
            from: 0,
            to: t - 1,
            text: Box::new(|drift| drift_text(faults, drift, "client")),
            must_hold: &[property::MUTUAL_EXCLUSION],
            free: DRIFT_KEYS,
        });
    }
    families
}

/// 2. After a crash: the restart delay, or the client's guard, with the drift above; both
///    figures are returned.
fn advise_restart(
    faults: &Faults,
    drift: u32,
    out: &mut String,
    found: &mut Vec<Found>,
) -> Result<(Option<u32>, Option<u32>)> {
    let restart_to = 2 * faults.scale.ttl_ticks();
    let delay = run_family(&Family {
        slug: "restart-delay",
        label: "restart delay",
        key: "faults.crashes.restart_delay_ticks",
        from: 0,
        to: restart_to,
        text: Box::new(|delay| crash_text(faults, drift, "advise-restart-delay", delay, 0)),
        must_hold: &[property::MUTUAL_EXCLUSION],
        free: &[
            "lock.ttl_ticks",
            "lock.drift_ticks",
            "clock.node_error_ticks",
            "clock.client_error_ticks",
            "faults.clock_jumps.jump_ticks",
            "faults.crashes.restart_delay_ticks",
        ],
    })?;
    let guard = run_family(&Family {
        slug: "restart-guard",
        label: "restart guard",
        key: "faults.crashes.client_guard_ticks",
        from: 0,
        to: restart_to,
        text: Box::new(|guard| crash_text(faults, drift, "advise-restart-guard", 0, guard)),
        must_hold: &[property::MUTUAL_EXCLUSION],
        free: &[
            "lock.ttl_ticks",
            "lock.drift_ticks",
            "clock.node_error_ticks",
            "clock.client_error_ticks",
            "faults.clock_jumps.jump_ticks",
            "faults.crashes.client_guard_ticks",
        ],
    })?;
    let _ = writeln!(
        out,
        "restart delay        {}   checker: {}",
        figure(faults, delay.value),
        evidence(&delay)
    );
    formula_line(out, faults, &delay, None);
    let _ = writeln!(
        out,
        "  or restart guard   {}   checker: {}",
        figure(faults, guard.value),
        evidence(&guard)
    );
    formula_line(out, faults, &guard, None);
    let figures = (delay.value, guard.value);
    found.push(delay);
    found.push(guard);
    Ok(figures)
}

/// 3. Before each write: the check margin, or fencing when no margin will do (`None`).
fn advise_storage(
    faults: &Faults,
    drift: u32,
    out: &mut String,
    found: &mut Vec<Found>,
) -> Result<Option<u32>> {
    let margin = run_family(&Family {
        slug: "check-margin",
        label: "check margin",
        key: "storage.check_margin_ticks",
        from: 1,
        // A margin above the longest lease (ttl − drift) forbids every write, which would
        // make storage safety hold vacuously: the search stops where writes are still possible.
        to: faults.scale.ttl_ticks() - drift,
        text: Box::new(|margin| storage_text(faults, drift, margin, "none")),
        must_hold: &[property::STORAGE_SAFETY, property::NO_LOST_UPDATE],
        // The TTL stays the deployment's: left free, it adds the corners of a lease shorter
        // than a pause, which triple the exploration and say nothing about this one.
        free: &[
            "lock.drift_ticks",
            "clock.node_error_ticks",
            "clock.client_error_ticks",
            "storage.check_margin_ticks",
        ],
    })?;
    let _ = writeln!(
        out,
        "check margin         {}   checker: {}",
        figure(faults, margin.value),
        evidence(&margin)
    );
    formula_line(out, faults, &margin, None);
    if let Some(m) = margin.value {
        let _ = writeln!(
            out,
            "  write only while the lease has at least {} left (Guard::remaining() >= margin).",
            faults.scale.show(m)
        );
        let _ = writeln!(
            out,
            "fencing              not required with that margin, for pauses and delays within the bounds given"
        );
        found.push(margin);
        return Ok(Some(m));
    }
    let fencing = run_family(&Family {
        slug: "fencing",
        label: "fencing",
        key: "storage.protection = fencing-token, check_margin_ticks",
        from: 1,
        to: 1,
        text: Box::new(|margin| storage_text(faults, drift, margin, "fencing-token")),
        must_hold: &[property::STORAGE_SAFETY, property::NO_LOST_UPDATE],
        free: &[],
    })?;
    let _ = writeln!(
        out,
        "fencing              REQUIRED: no margin that still lets a holder write survives these pauses and delays; with a fencing token checked by the storage: {}",
        if fencing.value.is_some() {
            "storage safety holds (checked)"
        } else {
            "still violated (see the files)"
        }
    );
    found.push(margin);
    found.push(fencing);
    Ok(None)
}
