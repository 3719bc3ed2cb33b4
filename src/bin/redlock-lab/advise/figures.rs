//! The figures: the drift allowance first, then the restart delay (or guard) and the check
//! margin with that allowance, on threads, each printed in a fixed order as it settles.

use std::fmt::Write as _;
use std::time::Instant;

use anyhow::{Result, bail};
use redlock_lab::check::available_threads;
use redlock_lab::scenario::property;

use super::args::{Args, Bound};
use super::family::{Family, Found, Limits, run_family, write_files};
use super::figure::{Figure, Kind};
use super::json;
use super::scale::{Scale, show_us};
use super::settings;
use super::texts::{Faults, crash_text, drift_text, storage_text};
use super::whole;
use super::wrap::wrap;
use crate::Outcome;
use crate::pool::{self, Task};

/// Scales the deployment, runs every search, prints the figures, writes the files.
pub(crate) fn run(args: &Args) -> Result<Outcome> {
    if args.time_limit.is_some_and(|limit| limit.is_zero()) {
        bail!("--time-limit must be more than 0");
    }
    let scale = match args.ticks {
        Some(ticks) => Scale::coarse(args.ttl, ticks)?,
        None => Scale::fine(args.ttl)?,
    };
    let faults = Faults::of(args, scale);
    let jobs = args
        .jobs
        .map_or_else(available_threads, |jobs| jobs as usize);
    let limits = Limits {
        deadline: args.time_limit.map(|limit| Instant::now() + limit),
        // The cores are shared among the searches that run at once.
        threads: (available_threads() / jobs).max(1),
        formulas: args.verbose || args.json,
    };
    // What it understood comes at once, and each figure as it settles.
    let mut advice = Advice {
        args,
        faults: &faults,
        out: header(args, &faults),
        stream: Stream {
            keep_going: args.out.is_some(),
            json: args.json,
            ..Stream::default()
        },
        figures: Vec::new(),
        whole: Vec::new(),
    };
    advice.stream.show(&advice.out)?;
    // Every other figure is checked at the drift allowance: it comes first.
    let drift = drift_figure(&faults, limits, jobs)?;
    let (unsettled, value) = (drift.unsettled().is_some(), drift.value);
    advice.add(drift)?;
    match (unsettled, value) {
        (true, _) => {
            for kind in [Kind::RestartDelay, Kind::RestartGuard, Kind::Margin] {
                let why = "it is checked at the drift allowance, which did not settle";
                advice.add(Figure::not_searched(kind, why))?;
            }
        }
        (false, None) => return advice.finish(Outcome::Mismatch),
        (false, Some(drift)) => {
            // The storage's search is the longest: started first, it keeps the cores busy to
            // the end, while the output keeps its order.
            let start: &[usize] = if jobs > 1 { &[2, 0, 1] } else { &[0, 1, 2] };
            let tasks = later_tasks(&faults, drift, limits);
            pool::in_order(tasks, start, jobs, |_, figures| {
                figures?.into_iter().try_for_each(|f| advice.add(f))
            })?;
            // The last check has the machine to itself.
            let whole = Limits {
                threads: available_threads(),
                ..limits
            };
            let outcome = advice.confirm_whole(&whole)?;
            return advice.finish(outcome);
        }
    }
    advice.finish(Outcome::Success)
}

/// The output so far and the figures behind it.
struct Advice<'a> {
    args: &'a Args,
    faults: &'a Faults,
    out: String,
    stream: Stream,
    figures: Vec<Figure>,
    /// The whole deployment's checks, once the figures settled.
    whole: Vec<whole::Checked>,
}

impl Advice<'_> {
    /// Every figure together against every declared fault, once per way to recover from a
    /// crash (`whole.rs`): `Mismatch` when one such deployment breaks a property. Skipped when
    /// a figure did not settle.
    fn confirm_whole(&mut self, limits: &Limits) -> Result<Outcome> {
        let Some(plan) = whole::Plan::of(&self.figures) else {
            return Ok(Outcome::Success);
        };
        let mut outcome = Outcome::Success;
        for recovery in whole::recoveries(&plan) {
            let checked = whole::confirm(self.faults, &plan, recovery, limits)?;
            if !checked.holds {
                outcome = Outcome::Mismatch;
            }
            checked.write(&mut self.out, self.args.verbose);
            self.whole.push(checked);
            self.stream.show(&self.out)?;
        }
        Ok(outcome)
    }

    /// Adds a settled (or stopped) figure and prints its lines.
    fn add(&mut self, figure: Figure) -> Result<()> {
        figure.write(&mut self.out, self.faults, self.args.verbose);
        self.figures.push(figure);
        self.stream.show(&self.out)
    }

    /// Writes the files, then prints the rest: what to set, what did not settle, where the
    /// files went (or the JSON document). A figure that did not settle makes it incomplete.
    fn finish(mut self, outcome: Outcome) -> Result<Outcome> {
        let (args, faults) = (self.args, self.faults);
        let unsettled: Vec<&Figure> = (self.figures.iter())
            .filter(|f| f.unsettled().is_some())
            .collect();
        let outcome = match outcome {
            Outcome::Success if !unsettled.is_empty() => Outcome::Incomplete,
            other => other,
        };
        if self.figures.first().is_some_and(|d| d.value.is_some()) {
            settings::write(&mut self.out, args, faults, &self.figures);
        }
        if !unsettled.is_empty() {
            let names: Vec<&str> = unsettled.iter().map(|f| f.kind.name()).collect();
            let timed_out = (unsettled.iter()).any(|f| {
                f.unsettled()
                    .is_some_and(|why| why.starts_with("the time limit"))
            });
            let hint = match (timed_out, names.len()) {
                (false, _) => "",
                (true, 1) => "; a longer --time-limit settles it",
                (true, _) => "; a longer --time-limit settles them",
            };
            self.out.push('\n');
            wrap(
                &mut self.out,
                "",
                0,
                &format!("Not settled: {}{hint}.", names.join(", ")),
            );
        }
        // Files first: they are what `--out` asked for, even if the reader of stdout left.
        let found = (self.figures.iter()).flat_map(|f| f.searches.iter().map(|(_, found)| found));
        let wrote = write_files(args, found)?;
        if let Some(error) = self.stream.failed {
            return Err(error);
        }
        if args.json {
            let document = json::document(args, faults, &self.figures, &self.whole, outcome);
            outln!("{}", serde_json::to_string_pretty(&document)?)?;
            errln!("{}", wrote.trim());
        } else {
            out!("{}{wrote}", &self.out[self.stream.printed..])?;
        }
        Ok(outcome)
    }
}

/// How much of the output has been printed, and the error that stopped printing, if any.
#[derive(Default)]
struct Stream {
    printed: usize,
    failed: Option<anyhow::Error>,
    /// Whether the searches go on when stdout fails: with `--out`, whose files are what was
    /// asked for; without it nobody is left to tell.
    keep_going: bool,
    /// Nothing streams under `--json`: its one document comes at the end.
    json: bool,
}

impl Stream {
    /// Prints what `out` gained since the last call; fails when stdout does, unless the
    /// searches must go on, and then the end reports the error.
    fn show(&mut self, out: &str) -> Result<()> {
        if self.json {
            return Ok(());
        }
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

/// The deployment as understood, in plain words, and under `--verbose` what a tick is and
/// what every fault became in ticks.
fn header(args: &Args, faults: &Faults) -> String {
    let mut out = String::new();
    let bounded = |bound: Bound, what: &str| match bound {
        Bound::At(d) if d.is_zero() => format!("no {what}s"),
        Bound::At(d) => format!("{what}s up to {}", show_us(d.as_micros())),
        Bound::Unbounded => format!("{what}s of any length"),
    };
    let clocks = match (args.clock_error.as_micros(), args.max_jump.as_micros()) {
        (0, 0) => "every clock exact".to_owned(),
        (0, jump) => format!("every clock exact but jumping by up to {}", show_us(jump)),
        (error, 0) => format!("every clock within {} of true time", show_us(error)),
        (error, jump) => format!(
            "every clock within {} of true time, jumping by up to {}",
            show_us(error),
            show_us(jump)
        ),
    };
    let text = format!(
        "Deployment: a TTL of {}; {clocks}; {}; {}; a crashed master restarts with persistence {}.",
        show_us(args.ttl.as_micros()),
        bounded(args.max_pause, "pause"),
        bounded(args.network_delay, "network delay"),
        args.restart_persistence
    );
    wrap(&mut out, "", 0, &text);
    let precision = if faults.scale.is_millisecond() {
        "Checked at 1 ms, so each figure is exact to the millisecond".to_owned()
    } else {
        format!(
            "Checked in steps of {} (faults rounded up), so each figure is a whole number of steps",
            faults.scale.show(1)
        )
    };
    let proofs = if args.verbose {
        ""
    } else {
        "; --verbose shows each proof"
    };
    wrap(&mut out, "", 0, &format!("{precision}{proofs}."));
    if args.verbose {
        out.push_str(&scaling_header(args, faults));
    } else {
        out.push('\n');
    }
    out
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

/// The drift allowance: the largest of its families' figures (one per kind of jump, on
/// threads), `None` if one has none.
fn drift_figure(faults: &Faults, limits: Limits, jobs: usize) -> Result<Figure> {
    let families = drift_families(faults);
    let tasks: Vec<Task<'_, Result<Found>>> = (families.iter())
        .map(|family| -> Task<'_, Result<Found>> { Box::new(move || run_family(family, &limits)) })
        .collect();
    let start: Vec<usize> = (0..tasks.len()).collect();
    let mut searches = Vec::new();
    pool::in_order(tasks, &start, jobs, |index, found| {
        searches.push((families[index].label, found?));
        Ok(())
    })?;
    Ok(Figure::new(Kind::Drift, searches))
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

/// The searches after the drift allowance, in the order of their lines: the restart delay,
/// the restart guard, the check margin (and fencing, when no margin will do).
fn later_tasks(faults: &Faults, drift: u32, limits: Limits) -> Vec<Task<'_, Result<Vec<Figure>>>> {
    vec![
        Box::new(move || {
            Ok(vec![restart_figure(
                faults,
                drift,
                limits,
                Kind::RestartDelay,
            )?])
        }),
        Box::new(move || {
            Ok(vec![restart_figure(
                faults,
                drift,
                limits,
                Kind::RestartGuard,
            )?])
        }),
        Box::new(move || storage_figures(faults, drift, limits)),
    ]
}

/// The keys a restart delay's formula leaves free.
const RESTART_DELAY_KEYS: &[&str] = &[
    "lock.ttl_ticks",
    "lock.drift_ticks",
    "clock.node_error_ticks",
    "clock.client_error_ticks",
    "faults.clock_jumps.jump_ticks",
    "faults.crashes.restart_delay_ticks",
];

/// The same with the client's guard instead.
const RESTART_GUARD_KEYS: &[&str] = &[
    "lock.ttl_ticks",
    "lock.drift_ticks",
    "clock.node_error_ticks",
    "clock.client_error_ticks",
    "faults.clock_jumps.jump_ticks",
    "faults.crashes.client_guard_ticks",
];

/// After a crash: the restart delay, or the client's guard, with the drift above.
fn restart_figure(faults: &Faults, drift: u32, limits: Limits, kind: Kind) -> Result<Figure> {
    let delay = kind == Kind::RestartDelay;
    let (slug, key) = if delay {
        ("restart-delay", "faults.crashes.restart_delay_ticks")
    } else {
        ("restart-guard", "faults.crashes.client_guard_ticks")
    };
    let label = if delay {
        "restart delay"
    } else {
        "restart guard"
    };
    let found = run_family(
        &Family {
            slug,
            label,
            key,
            from: 0,
            to: 2 * faults.scale.ttl_ticks(),
            text: Box::new(move |value| {
                let name = format!("advise-{slug}");
                let (delay, guard) = if delay { (value, 0) } else { (0, value) };
                crash_text(faults, drift, &name, delay, guard)
            }),
            must_hold: &[property::MUTUAL_EXCLUSION],
            free: if delay {
                RESTART_DELAY_KEYS
            } else {
                RESTART_GUARD_KEYS
            },
        },
        &limits,
    )?;
    Ok(Figure::new(kind, vec![(label, found)]))
}

/// Before each write: the check margin, and fencing, required when no margin will do.
fn storage_figures(faults: &Faults, drift: u32, limits: Limits) -> Result<Vec<Figure>> {
    let margin = run_family(
        &Family {
            slug: "check-margin",
            label: "check margin",
            key: "storage.check_margin_ticks",
            from: 1,
            // A margin above the longest lease (ttl − drift) forbids every write, which would
            // make storage safety hold vacuously: the search stops where writes are still
            // possible.
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
        },
        &limits,
    )?;
    let (settled, needed) = (margin.unsettled.is_none(), margin.value.is_none());
    let margin = Figure::new(Kind::Margin, vec![("check margin", margin)]);
    if !settled {
        return Ok(vec![margin]);
    }
    if !needed {
        return Ok(vec![margin, Figure::new(Kind::Fencing, Vec::new())]);
    }
    let fencing = run_family(
        &Family {
            slug: "fencing",
            label: "fencing",
            key: "storage.protection = fencing-token, check_margin_ticks",
            from: 1,
            to: 1,
            text: Box::new(|margin| storage_text(faults, drift, margin, "fencing-token")),
            must_hold: &[property::STORAGE_SAFETY, property::NO_LOST_UPDATE],
            free: &[],
        },
        &limits,
    )?;
    Ok(vec![
        margin,
        Figure::new(Kind::Fencing, vec![("fencing", fencing)]),
    ])
}
