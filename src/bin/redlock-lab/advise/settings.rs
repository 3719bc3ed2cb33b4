//! What to type: each figure as the setting that applies it in this crate's client and in
//! `redlock-lab run`, against the crate's default, and the assumptions the figures rest on.

use std::fmt::Write as _;

use redlock_lab::proto::DriftPolicy;
use redlock_lab::time::Millis;

use super::args::{Args, Bound};
use super::scale::show_us;
use super::texts::Faults;

/// The figures `advise` found, in ticks of its scale.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Plan {
    /// The drift allowance.
    pub drift: u32,
    /// The restart delay, and the client's restart guard, when found.
    pub restart_delay: Option<u32>,
    pub restart_guard: Option<u32>,
    /// The check margin before each write, or `None` when no margin will do (fencing).
    pub margin: Option<u32>,
}

/// A figure in whole milliseconds, rounded up (every setting it names counts milliseconds).
fn ms(faults: &Faults, ticks: u32) -> u64 {
    u64::try_from(faults.scale.us(ticks).div_ceil(1_000)).unwrap_or(u64::MAX)
}

/// The "set this" block: one line per setting, each with where it goes.
pub(super) fn write(out: &mut String, args: &Args, faults: &Faults, plan: &Plan) {
    let _ = writeln!(out, "\nSet this:");
    drift_lines(out, args, faults, plan.drift);
    restart_lines(out, args, faults, plan);
    match plan.margin {
        Some(margin) => {
            let m = ms(faults, margin);
            let _ = writeln!(
                out,
                "  before each write  write only while `guard.remaining() >= Millis({m})` (the lease has {} left); no fencing needed",
                show_us(u128::from(m) * 1_000)
            );
        }
        None => {
            let _ = writeln!(
                out,
                "  before each write  fencing: `Config {{ fencing: Fencing::WriteBack, .. }}` with `appendfsync always` on every master, send `guard.fencing_token()` with every write, and have the storage refuse a token below the largest it has seen"
            );
        }
    }
    assumptions(out, args);
}

/// The drift: the client's `Config`, `run --drift`, and the crate's default beside it.
fn drift_lines(out: &mut String, args: &Args, faults: &Faults, drift: u32) {
    let need = ms(faults, drift);
    let ttl = Millis(u64::try_from(args.ttl.as_millis()).unwrap_or(u64::MAX));
    let default = DriftPolicy::default().drift_for(ttl).as_u64();
    let _ = writeln!(
        out,
        "  drift              `Config {{ drift: DriftPolicy::fixed(Millis({need})), .. }}`, or `redlock-lab run --drift {need}ms`"
    );
    let verdict = if default >= need {
        "safe here, so you may keep it".to_owned()
    } else {
        format!("UNSAFE here: {default} ms is below the {need} ms needed")
    };
    let _ = writeln!(
        out,
        "                     (the crate's default, 1% of the TTL + 2 ms = {default} ms, is {verdict})"
    );
}

/// The restart: nothing with `appendfsync always`, else a start-up delay of the master or the
/// clients' restart guard.
fn restart_lines(out: &mut String, args: &Args, faults: &Faults, plan: &Plan) {
    if args.restart_persistence == "fsync-always" {
        let _ = writeln!(
            out,
            "  after a crash      nothing: with `appendfsync always` a restarted master keeps its keys"
        );
        return;
    }
    if let Some(delay) = plan.restart_delay {
        let secs = ms(faults, delay).div_ceil(1_000);
        let _ = writeln!(
            out,
            "  after a crash      start a crashed master again only {} after it went down (a start-up delay: `ExecStartPre=/bin/sleep {secs}` in its systemd unit, or your orchestrator's restart delay)",
            show_us(u128::from(ms(faults, delay)) * 1_000)
        );
    }
    if let Some(guard) = plan.restart_guard {
        let _ = writeln!(
            out,
            "                     or, on every client, `NodeOptions {{ restart_guard: Some(Duration::from_millis({})), .. }}`: a master up for less than that does not count toward a quorum",
            ms(faults, guard)
        );
    }
}

/// What the figures take on trust.
fn assumptions(out: &mut String, args: &Args) {
    let bound = |b: Bound| match b {
        Bound::At(d) => format!("at most {}", show_us(d.as_micros())),
        Bound::Unbounded => "unbounded".to_owned(),
    };
    let error = match args.clock_error.as_micros() {
        0 => "reads true time".to_owned(),
        us => format!("reads within {} of true time", show_us(us)),
    };
    let jump = match args.max_jump.as_micros() {
        0 => "never jumps".to_owned(),
        us => format!("jumps by at most {}", show_us(us)),
    };
    let _ = writeln!(
        out,
        "Assumed, not checked: a pause is {} and a network delay {}; every clock {error} and {jump}; this crate's client times its lease on a monotonic clock, so a wall-clock step of the client's machine does not reach it (the client-jump figure is for clients that read wall time).",
        bound(args.max_pause),
        bound(args.network_delay),
    );
}
