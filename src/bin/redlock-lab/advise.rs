//! `redlock-lab advise`: safe settings for a deployment, each found by the checker.
//!
//! The user's durations are scaled to ticks (the TTL is exactly `--ticks` ticks; every fault is
//! rounded *up* to whole ticks, so the model is at least as harsh as the deployment), and for
//! each figure a scenario family is generated whose one free parameter is the figure: the
//! drift allowance, the restart delay (or the client's restart guard), the check margin before
//! each write. `sweep::search` finds the smallest value at which the properties hold, with the
//! checker's verdicts on both sides of the boundary; the figure is that value in ticks times
//! the tick, exactly. `--out DIR` writes both sides as scenario files, so `redlock-lab check
//! DIR` proves every figure again.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use redlock_lab::check::{Check, Report};
use redlock_lab::scenario::{Scenario, Verdict, property};
use redlock_lab::sweep::{Search, SweepError, search};

use crate::Outcome;
use redlock_lab::scenario::{DurationError, parse_duration};

/// Arguments of `advise`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The lock's time to live.
    #[arg(long, value_parser = parse_duration)]
    ttl: Duration,
    /// The largest error of any clock reading, on a node or a client (rate error accumulated
    /// over a TTL, expiry granularity).
    #[arg(long, default_value = "0", value_parser = parse_duration)]
    clock_error: Duration,
    /// The largest step of a clock (a node's forward, a client's backward); 0 if clocks slew.
    #[arg(long, default_value = "0", value_parser = parse_duration)]
    max_jump: Duration,
    /// The longest pause of a lock holder between its check and its write (GC, page faults),
    /// or `unbounded`.
    #[arg(long, default_value = "0", value_parser = parse_bound)]
    max_pause: Bound,
    /// The longest a write may travel to the storage, or `unbounded`.
    #[arg(long, default_value = "0", value_parser = parse_bound)]
    network_delay: Bound,
    /// What a Redis node keeps across a crash: `none`, `fsync-always` or `fsync-periodic`.
    #[arg(long, default_value = "none", value_parser = ["none", "fsync-always", "fsync-periodic"])]
    restart_persistence: String,
    /// Ticks per TTL in the model: more is finer and slower (each check grows about as the
    /// fourth power).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(3..=12))]
    ticks: u32,
    /// Write the scenario files that prove each figure (both sides of each boundary) here.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

/// A duration or no bound at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// At most this long.
    At(Duration),
    /// No bound: the asynchronous model.
    Unbounded,
}

fn parse_bound(text: &str) -> Result<Bound, DurationError> {
    if text.trim() == "unbounded" {
        Ok(Bound::Unbounded)
    } else {
        parse_duration(text).map(Bound::At)
    }
}

/// The tick: the TTL divided into `ttl_ticks` equal parts (kept as the fraction
/// `ttl_us / ttl_ticks`, so that the TTL is exactly `ttl_ticks` ticks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Scale {
    ttl_us: u128,
    ttl_ticks: u32,
}

impl Scale {
    fn new(ttl: Duration, ticks: u32) -> Result<Scale> {
        if ttl.as_micros() < u128::from(ticks) {
            bail!("--ttl {ttl:?} is shorter than {ticks} microseconds");
        }
        Ok(Scale {
            ttl_us: ttl.as_micros(),
            ttl_ticks: ticks,
        })
    }

    /// A fault in ticks, rounded up: the model's fault is never smaller than the real one.
    fn fault(&self, duration: Duration) -> u32 {
        let ticks = (duration.as_micros() * u128::from(self.ttl_ticks)).div_ceil(self.ttl_us);
        u32::try_from(ticks).unwrap_or(u32::MAX)
    }

    fn bound(&self, bound: Bound) -> Option<u32> {
        match bound {
            Bound::At(duration) => Some(self.fault(duration)),
            Bound::Unbounded => None,
        }
    }

    /// `ticks` in microseconds, rounded up: a figure is a minimum, so up is the safe side.
    fn us(&self, ticks: u32) -> u128 {
        (u128::from(ticks) * self.ttl_us).div_ceil(u128::from(self.ttl_ticks))
    }

    /// One tick in whole milliseconds, when it is one (a TTL of 10 s in 5 ticks: 2 000).
    fn tick_ms(&self) -> Option<u128> {
        let ticks = u128::from(self.ttl_ticks);
        self.ttl_us
            .is_multiple_of(ticks * 1_000)
            .then(|| self.ttl_us / ticks / 1_000)
    }

    /// `ticks` back in the user's units.
    fn show(&self, ticks: u32) -> String {
        show_us(self.us(ticks))
    }
}

/// Microseconds as milliseconds or seconds, with no more digits than needed.
fn show_us(us: u128) -> String {
    if us == 0 {
        return "0".to_owned();
    }
    let (value, unit) = if us >= 1_000_000 && us.is_multiple_of(1_000) {
        (us as f64 / 1e6, "s")
    } else {
        (us as f64 / 1e3, "ms")
    };
    let text = format!("{value:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} {unit}")
}

/// The deployment in ticks.
#[derive(Clone, Debug)]
struct Faults {
    scale: Scale,
    clock_error: u32,
    jump: u32,
    pause: Option<u32>,
    delay: Option<u32>,
    persistence: String,
}

/// One figure's search: the scenario text at each value, and what must hold.
struct Family<'a> {
    /// Part of the file names (`drift`, `restart-delay`, …).
    slug: &'static str,
    /// What the family's fault is, for the output.
    label: &'static str,
    /// The key in the scenario file, for the reader.
    key: &'static str,
    /// The range searched.
    from: u32,
    to: u32,
    text: Box<dyn Fn(u32) -> String + 'a>,
    /// The properties that must hold at the figure (and the first of them fails below it).
    must_hold: &'static [&'static str],
}

/// What a search found, with the scenario texts of both sides.
struct Found {
    /// The smallest safe value in ticks, if any in the range.
    value: Option<u32>,
    checks: usize,
    files: Vec<(String, String)>,
    /// One sentence on the evidence.
    evidence: String,
}

fn holds(report: &Report, properties: &[&str]) -> bool {
    properties.iter().all(|name| {
        report
            .property(name)
            .is_some_and(|p| p.verdict == Verdict::Holds)
    })
}

/// Runs one family's search and keeps both sides' texts, with `[expect]` set to what the
/// checker found.
fn run_family(family: &Family<'_>) -> Result<Found> {
    let mut checks = 0;
    let mut texts = std::collections::BTreeMap::new();
    let found = search(
        i64::from(family.from),
        i64::from(family.to),
        |value| {
            checks += 1;
            let text = (family.text)(value as u32);
            // A provisional `[expect]` (the file needs one); the written files get the
            // checker's verdicts instead.
            let mut provisional = text.clone();
            provisional.push_str("\n[expect]\n\"lock acquired\" = \"holds\"\n");
            for name in family.must_hold {
                let _ = writeln!(provisional, "{name:?} = \"holds\"");
            }
            let scenario = Scenario::from_str(&format!("{}.toml", family.slug), &provisional)
                .map_err(SweepError::Scenario)?;
            let report = Check::new(&scenario).run();
            texts.insert(value as u32, text);
            Ok(report)
        },
        |report| holds(report, family.must_hold) && acquired(report),
    )
    .with_context(|| format!("the {} scenario", family.slug))?;
    let file = |value: u32, report: &Report, side: &str| {
        // Each side gets its own scenario name, so a folder of them has no duplicates.
        let text = with_expect(&texts[&value], report).replacen(
            &format!("name = \"advise-{}\"", family.slug),
            &format!("name = \"advise-{}-{side}\"", family.slug),
            1,
        );
        (format!("advise-{}-{side}.toml", family.slug), text)
    };
    Ok(match found {
        Search::Boundary { first, at, before } => {
            let first = first as u32;
            Found {
                value: Some(first),
                checks,
                evidence: format!("{} = {} holds, {} violated", family.key, first, first - 1),
                files: vec![
                    file(first, &at, "holds"),
                    file(first - 1, &before, "violated"),
                ],
            }
        }
        Search::AtStart { at } => Found {
            value: Some(family.from),
            checks,
            evidence: format!(
                "{} = {} holds, the smallest value there is",
                family.key, family.from
            ),
            files: vec![file(family.from, &at, "holds")],
        },
        Search::Nowhere { last } => Found {
            value: None,
            checks,
            evidence: format!("even {} = {} is violated", family.key, family.to),
            files: vec![file(family.to, &last, "violated")],
        },
    })
}

fn acquired(report: &Report) -> bool {
    report
        .property(property::LOCK_ACQUIRED)
        .is_some_and(|p| p.verdict == Verdict::Holds)
}

/// `text` with an `[expect]` table of every property the checker reported.
fn with_expect(text: &str, report: &Report) -> String {
    let mut out = text.to_owned();
    out.push_str("\n[expect]\n");
    for p in &report.properties {
        let _ = writeln!(out, "{:?} = \"{}\"", p.name, p.verdict);
    }
    out
}

/// The header and `[lock]`/`[clock]` shared by every family.
fn base(faults: &Faults, name: &str, title: &str, prose: &str, drift: u32) -> String {
    let mut text = format!(
        "name = \"{name}\"\ntitle = \"{title}\"\n\
         claim = \"redlock-lab advise: the smallest safe value, and one tick less\"\n\
         source = \"derived\"\nprose = \"\"\"\n{prose}\n{}\n\"\"\"\n{}\n\
         [lock]\nnodes = 3\nclients = 2\nttl_ticks = {}\ndrift_ticks = {drift}\n",
        scaling_note(faults),
        resolution_line(faults),
        faults.scale.ttl_ticks
    );
    if faults.clock_error > 0 {
        let _ = write!(
            text,
            "\n[clock]\nnode_error_ticks = {0}\nclient_error_ticks = {0}\n",
            faults.clock_error
        );
    }
    text
}

/// `resolution = "…"` when a tick is a whole number of milliseconds, so the written files
/// say in real units what their ticks are (`explain` tells it; `simulate` runs at that scale).
fn resolution_line(faults: &Faults) -> String {
    faults
        .scale
        .tick_ms()
        .map(|ms| format!("resolution = \"{ms}ms\"\n"))
        .unwrap_or_default()
}

fn scaling_note(faults: &Faults) -> String {
    format!(
        "Scaled by redlock-lab advise: 1 tick = {} (the TTL is {} ticks); faults rounded up to whole ticks.",
        faults.scale.show(1),
        faults.scale.ttl_ticks
    )
}

/// Ticks to the user's units for a figure, or why there is none.
fn figure(faults: &Faults, value: Option<u32>) -> String {
    match value {
        Some(ticks) => format!(
            "{} ({ticks} tick{})",
            faults.scale.show(ticks),
            if ticks == 1 { "" } else { "s" }
        ),
        None => "none in range".to_owned(),
    }
}

/// Scales the deployment, runs every search, prints the figures, writes the files.
pub fn run(args: &Args) -> Result<Outcome> {
    let faults = Faults::of(args, Scale::new(args.ttl, args.ticks)?);
    let mut out = scaling_header(args, &faults);
    let (drift, mut found) = advise_drift(&faults, &mut out)?;
    let Some(drift) = drift else {
        return finish(args, &out, &found, Outcome::Mismatch);
    };
    advise_restart(&faults, drift, &mut out, &mut found)?;
    advise_storage(&faults, drift, &mut out, &mut found)?;
    finish(args, &out, &found, Outcome::Success)
}

/// Writes the files, then prints the figures and where the files went.
fn finish(args: &Args, out: &str, found: &[Found], outcome: Outcome) -> Result<Outcome> {
    // Files first: they are what `--out` asked for, even if the reader of stdout left.
    let wrote = write_files(args, found)?;
    out!("{out}{wrote}")?;
    Ok(outcome)
}

impl Faults {
    /// The deployment's faults in ticks of `scale`.
    fn of(args: &Args, scale: Scale) -> Faults {
        Faults {
            scale,
            clock_error: scale.fault(args.clock_error),
            jump: scale.fault(args.max_jump),
            pause: scale.bound(args.max_pause),
            delay: scale.bound(args.network_delay),
            persistence: args.restart_persistence.clone(),
        }
    }
}

/// The lines that say what a tick is and what every fault became in ticks.
fn scaling_header(args: &Args, faults: &Faults) -> String {
    let scale = faults.scale;
    let t = scale.ttl_ticks;
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
    let _ = writeln!(
        out,
        "  clock error {} -> {} tick(s) on every node and client reading; max jump {} -> {}; max pause {} -> {}; network delay {} -> {}.",
        show_us(args.clock_error.as_micros()),
        faults.clock_error,
        show_us(args.max_jump.as_micros()),
        faults.jump,
        bound_text(args.max_pause),
        faults
            .pause
            .map_or("unbounded".to_owned(), |p| p.to_string()),
        bound_text(args.network_delay),
        faults
            .delay
            .map_or("unbounded".to_owned(), |d| d.to_string()),
    );
    let _ = writeln!(
        out,
        "Each figure is the smallest whole number of ticks at which the checker proves the property, converted back and rounded up to the microsecond (figures are minimums); use it or more.\n"
    );
    out
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
            .map(|(f, family)| format!("{}: {} ({} checks)", family.label, f.evidence, f.checks))
            .collect::<Vec<_>>()
            .join("; ")
    );
    Ok((Some(drift), found))
}

/// The drift families: a node's forward jump always (with clock error alone when there is no
/// jump), and a client's backward jump when there is one.
fn drift_families(faults: &Faults) -> Vec<Family<'_>> {
    let t = faults.scale.ttl_ticks;
    let mut drift_families = vec![Family {
        slug: "drift",
        label: if faults.jump > 0 {
            "clock error and a node's forward jump"
        } else {
            "clock error"
        },
        key: "lock.drift_ticks",
        from: 0,
        to: t - 1,
        text: Box::new(|drift| {
            let mut text = base(
                faults,
                "advise-drift",
                "The drift allowance against the clock error and a node's forward jump",
                "Mutual exclusion against bounded clock error on every node and client and one forward step of a node's clock.",
                drift,
            );
            if faults.jump > 0 {
                let _ = write!(
                    text,
                    "\n[faults.clock_jumps]\ntarget = \"node\"\njump_ticks = {}\n",
                    faults.jump
                );
            }
            text
        }),
        must_hold: &[property::MUTUAL_EXCLUSION],
    }];
    if faults.jump > 0 {
        drift_families.push(Family {
            slug: "drift-client-jump",
            label: "clock error and a client's backward jump",
            key: "lock.drift_ticks",
            from: 0,
            to: t - 1,
            text: Box::new(|drift| {
                let mut text = base(
                    faults,
                    "advise-drift-client-jump",
                    "The drift allowance against the clock error and a client's backward jump",
                    "Mutual exclusion against bounded clock error and one backward step of a holder's clock.",
                    drift,
                );
                let _ = write!(
                    text,
                    "\n[faults.clock_jumps]\ntarget = \"client\"\njump_ticks = -{}\n",
                    faults.jump
                );
                text
            }),
            must_hold: &[property::MUTUAL_EXCLUSION],
        });
    }
    drift_families
}

/// 2. After a crash: the restart delay, or the client's guard, with the drift above.
fn advise_restart(
    faults: &Faults,
    drift: u32,
    out: &mut String,
    found: &mut Vec<Found>,
) -> Result<()> {
    let restart_to = (2 * faults.scale.ttl_ticks).min(60);
    let delay = run_family(&Family {
        slug: "restart-delay",
        label: "restart delay",
        key: "faults.crashes.restart_delay_ticks",
        from: 0,
        to: restart_to,
        text: Box::new(|delay| crash_text(faults, drift, "advise-restart-delay", delay, 0)),
        must_hold: &[property::MUTUAL_EXCLUSION],
    })?;
    let guard = run_family(&Family {
        slug: "restart-guard",
        label: "restart guard",
        key: "faults.crashes.client_guard_ticks",
        from: 0,
        to: restart_to,
        text: Box::new(|guard| crash_text(faults, drift, "advise-restart-guard", 0, guard)),
        must_hold: &[property::MUTUAL_EXCLUSION],
    })?;
    let _ = writeln!(
        out,
        "restart delay        {}   checker: {} ({} checks)",
        figure(faults, delay.value),
        delay.evidence,
        delay.checks
    );
    let _ = writeln!(
        out,
        "  or restart guard   {}   checker: {} ({} checks)",
        figure(faults, guard.value),
        guard.evidence,
        guard.checks
    );
    found.push(delay);
    found.push(guard);
    Ok(())
}

/// The crash family's scenario: one crash, with a restart delay or a client guard.
fn crash_text(faults: &Faults, drift: u32, name: &str, delay: u32, guard: u32) -> String {
    let mut text = base(
        faults,
        name,
        "A node crashes and restarts",
        "Mutual exclusion when one node crashes, with the advised drift allowance.",
        drift,
    );
    let _ = write!(
        text,
        "\n[faults.crashes]\ncount = 1\npersistence = \"{}\"\nrestart_delay_ticks = {delay}\nclient_guard_ticks = {guard}\n",
        faults.persistence
    );
    if faults.jump > 0 {
        let _ = write!(
            text,
            "\n[faults.clock_jumps]\ntarget = \"node\"\njump_ticks = {}\n",
            faults.jump
        );
    }
    text
}

/// 3. Before each write: the check margin, or fencing when no margin will do.
fn advise_storage(
    faults: &Faults,
    drift: u32,
    out: &mut String,
    found: &mut Vec<Found>,
) -> Result<()> {
    let margin = run_family(&Family {
        slug: "check-margin",
        label: "check margin",
        key: "storage.check_margin_ticks",
        from: 1,
        // A margin above the longest lease (ttl − drift) forbids every write, which would
        // make storage safety hold vacuously: the search stops where writes are still possible.
        to: faults.scale.ttl_ticks - drift,
        text: Box::new(|margin| storage_text(faults, drift, margin, "none")),
        must_hold: &[property::STORAGE_SAFETY, property::NO_LOST_UPDATE],
    })?;
    let _ = writeln!(
        out,
        "check margin         {}   checker: {} ({} checks)",
        figure(faults, margin.value),
        margin.evidence,
        margin.checks
    );
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
        return Ok(());
    }
    let fencing = run_family(&Family {
        slug: "fencing",
        label: "fencing",
        key: "storage.protection = fencing-token, check_margin_ticks",
        from: 1,
        to: 1,
        text: Box::new(|margin| storage_text(faults, drift, margin, "fencing-token")),
        must_hold: &[property::STORAGE_SAFETY, property::NO_LOST_UPDATE],
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
    Ok(())
}

/// The storage family's scenario: a holder that may pause between its check and its write,
/// and a write that may be delayed, with a check margin and a protection.
fn storage_text(faults: &Faults, drift: u32, margin: u32, protection: &str) -> String {
    let mut text = base(
        faults,
        &format!(
            "advise-{}",
            if protection == "none" {
                "check-margin"
            } else {
                "fencing"
            }
        ),
        "A holder checks its lease before each write to the storage",
        "Storage safety when a holder may pause between its check and its write and the write may be delayed.",
        drift,
    );
    let delay = faults
        .delay
        .map_or("\"unbounded\"".to_owned(), |d| d.to_string());
    let _ = write!(
        text,
        "\n[storage]\nprotection = \"{protection}\"\ncheck_margin_ticks = {margin}\nmax_delay_ticks = {delay}\n"
    );
    match faults.pause {
        Some(0) => {}
        Some(pause) => {
            let _ = write!(text, "\n[faults.pauses]\ncount = 1\nmax_ticks = {pause}\n");
        }
        None => text.push_str("\n[faults.pauses]\ncount = 1\nmax_ticks = \"unbounded\"\n"),
    }
    text
}

fn bound_text(bound: Bound) -> String {
    match bound {
        Bound::At(d) => show_us(d.as_micros()),
        Bound::Unbounded => "unbounded".to_owned(),
    }
}

/// Writes every scenario file under `--out`, and returns the line that says where (empty
/// without `--out`).
fn write_files(args: &Args, found: &[Found]) -> Result<String> {
    let Some(dir) = &args.out else {
        return Ok(String::new());
    };
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut written = 0;
    for (name, text) in found.iter().flat_map(|f| &f.files) {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        written += 1;
    }
    Ok(format!(
        "\nwrote {written} scenario files to {}; `redlock-lab check {}` proves every figure again\n",
        dir.display(),
        dir.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_round_up_and_figures_convert_back_exactly() {
        let scale = Scale::new(Duration::from_secs(10), 5).unwrap();
        assert_eq!(scale.us(1), 2_000_000);
        assert_eq!(scale.fault(Duration::from_millis(50)), 1);
        assert_eq!(scale.fault(Duration::from_secs(2)), 1);
        assert_eq!(scale.fault(Duration::from_millis(2_001)), 2);
        assert_eq!(scale.fault(Duration::ZERO), 0);
        assert_eq!(scale.show(3), "6 s");
        let scale = Scale::new(Duration::from_millis(45), 6).unwrap();
        assert_eq!(scale.show(1), "7.5 ms");
        // 10 s in 6 ticks: a tick is 1.666… s, shown rounded up; a fault of exactly one
        // tick's worth rounds to 1, a microsecond more to 2.
        let scale = Scale::new(Duration::from_secs(10), 6).unwrap();
        assert_eq!(scale.us(1), 1_666_667);
        assert_eq!(scale.fault(Duration::from_micros(1_666_666)), 1);
        assert_eq!(scale.fault(Duration::from_micros(1_666_667)), 2);
        assert_eq!(scale.us(6), 10_000_000);
        assert!(Scale::new(Duration::from_micros(5), 6).is_err());
    }
}
