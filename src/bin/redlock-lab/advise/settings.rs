//! What to type: each figure as the setting that applies it in this crate's client and in
//! `redlock-lab run`, against the crate's default, and the assumptions the figures rest on.

use std::fmt::Write as _;

use redlock_lab::proto::DriftPolicy;
use redlock_lab::time::Millis;

use super::args::{Args, Bound};
use super::figure::{Figure, Kind};
use super::scale::show_us;
use super::texts::Faults;
use super::wrap::wrap;

/// One figure as what to type, and the crate's default beside it.
#[derive(Clone, Debug, Default)]
pub(super) struct Setting {
    /// Each a sentence or a code span to type, in order.
    pub type_this: Vec<String>,
    /// The crate's default for the figure in milliseconds, when it has one in milliseconds.
    pub default_ms: Option<u64>,
    /// Whether the crate's default is unsafe for this deployment.
    pub default_unsafe: bool,
}

/// A figure in whole milliseconds, rounded up (every setting it names counts milliseconds).
pub(super) fn ms(faults: &Faults, ticks: u32) -> u64 {
    u64::try_from(faults.scale.us(ticks).div_ceil(1_000)).unwrap_or(u64::MAX)
}

/// The setting of a settled figure (nothing to type for one that did not settle).
pub(super) fn setting(args: &Args, faults: &Faults, figure: &Figure) -> Setting {
    if figure.kind == Kind::Fencing && figure.required() {
        return fencing();
    }
    let Some(value) = figure.value.filter(|_| figure.unsettled().is_none()) else {
        return Setting::default();
    };
    let need = ms(faults, value);
    let always = args.restart_persistence == "fsync-always";
    let (type_this, default_ms) = match figure.kind {
        Kind::Drift => return drift(args, need),
        Kind::RestartDelay if always => (
            vec!["nothing: with `appendfsync always` a restarted master keeps its keys".to_owned()],
            Some(0),
        ),
        Kind::RestartDelay => (
            vec![format!(
                "start a crashed master again only {} after it went down (a start-up delay: `ExecStartPre=/bin/sleep {}` in its systemd unit, or your orchestrator's restart delay)",
                show_us(u128::from(need) * 1_000),
                need.div_ceil(1_000)
            )],
            Some(0),
        ),
        Kind::RestartGuard if always => (Vec::new(), None),
        Kind::RestartGuard => (
            vec![format!(
                "or, on every client, `NodeOptions {{ restart_guard: Some(Duration::from_millis({need})), .. }}`: a master up for less than that does not count toward a quorum"
            )],
            Some(0),
        ),
        Kind::Margin => (
            vec![format!(
                "write only while `guard.remaining() >= Millis({need})` (the lease has {} left); no fencing needed",
                show_us(u128::from(need) * 1_000)
            )],
            Some(0),
        ),
        Kind::Fencing => return Setting::default(),
    };
    Setting {
        type_this,
        default_ms,
        // No restart delay, no guard and no margin by default: unsafe as soon as one is needed.
        default_unsafe: default_ms.is_some_and(|d| d < need),
    }
}

/// The drift: the client's `Config`, `run --drift`, and the crate's default beside it.
fn drift(args: &Args, need: u64) -> Setting {
    let ttl = Millis(u64::try_from(args.ttl.as_millis()).unwrap_or(u64::MAX));
    let default = DriftPolicy::default().drift_for(ttl).as_u64();
    let verdict = if default >= need {
        "safe here, so you may keep it".to_owned()
    } else {
        format!("UNSAFE here: {default} ms is below the {need} ms needed")
    };
    Setting {
        type_this: vec![
            format!(
                "`Config {{ drift: DriftPolicy::fixed(Millis({need})), .. }}`, or `redlock-lab run --drift {need}ms`"
            ),
            format!("(the crate's default, 1% of the TTL + 2 ms = {default} ms, is {verdict})"),
        ],
        default_ms: Some(default),
        default_unsafe: default < need,
    }
}

/// Fencing, when no margin will do.
fn fencing() -> Setting {
    Setting {
        type_this: vec!["fencing: `Config { fencing: Fencing::WriteBack, .. }` with `appendfsync always` on every master, send `guard.fencing_token()` with every write, and have the storage refuse a token below the largest it has seen".to_owned()],
        default_ms: None,
        // The crate's default is no fencing token.
        default_unsafe: true,
    }
}

/// The "set this" block: the settled figures' settings, each under the head of its line.
pub(super) fn write(out: &mut String, args: &Args, faults: &Faults, figures: &[Figure]) {
    let _ = writeln!(out, "\nSet this:");
    let mut last = "";
    for figure in figures {
        let head = match figure.kind {
            Kind::Drift => "drift",
            Kind::RestartDelay | Kind::RestartGuard => "after a crash",
            Kind::Margin | Kind::Fencing => "before each write",
        };
        for text in setting(args, faults, figure).type_this {
            // A head is written once, over the settings that share it.
            let shown = if head == last { "" } else { head };
            wrap(out, &format!("  {shown}"), 21, text.as_str());
            last = head;
        }
    }
    let _ = writeln!(out, "Assumed, not checked:");
    for assumption in assumptions(args) {
        wrap(out, "  -", 4, &assumption);
    }
}

/// What the figures take on trust, one assumption each.
pub(super) fn assumptions(args: &Args) -> Vec<String> {
    let bound = |b: Bound, what: &str| match b {
        Bound::At(d) if d.is_zero() => format!("no {what} happens"),
        Bound::At(d) => format!("a {what} lasts at most {}", show_us(d.as_micros())),
        Bound::Unbounded => format!("a {what} may last any time"),
    };
    let error = match args.clock_error.as_micros() {
        0 => "reads true time".to_owned(),
        us => format!("reads within {} of true time", show_us(us)),
    };
    let jump = match args.max_jump.as_micros() {
        0 => "never jumps".to_owned(),
        us => format!("jumps by at most {}", show_us(us)),
    };
    let mut monotonic = "this crate's client times its lease on a monotonic clock, so a wall-clock step of the client's machine does not reach it".to_owned();
    if args.max_jump > std::time::Duration::ZERO {
        monotonic.push_str(" (the client-jump figure is for clients that read wall time)");
    }
    vec![
        format!(
            "{}, and {}",
            bound(args.max_pause, "pause"),
            bound(args.network_delay, "network delay")
        ),
        format!("every clock {error} and {jump}"),
        monotonic,
    ]
}
