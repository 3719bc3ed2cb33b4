//! `redlock-lab replay`: the arguments, what the replay refuses, and what it prints.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Result, bail};
use redlock_lab::bridge::scaled_config;
use redlock_lab::check::{self, Check};
use redlock_lab::event::Event;
use redlock_lab::node::Persistence;
use redlock_lab::report::{Story, Timeline};
use redlock_lab::scenario::{Scenario, property};
use redlock_lab::time::Millis;

use super::execute::{Replay, Timing, executes};
use super::page::{Page, Row};
use crate::Outcome;
use crate::inputs;

/// The longest replay, in real time, run without a smaller `--tick`.
const LONGEST: Duration = Duration::from_secs(120);

/// Arguments of `replay`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A scenario file or catalog name.
    path: PathBuf,
    /// How long one model tick lasts on the real masters (large against scheduling jitter:
    /// half a tick separates every key's real expiry from the steps around it).
    #[arg(long, default_value = "200ms", value_parser = humantime::parse_duration)]
    tick: Duration,
    /// Run the same schedule under the scenario's mitigation patch (`[mitigation] set`), as
    /// far as the patched model takes it: the property should hold on the real masters.
    #[arg(long)]
    patched: bool,
    /// The property whose counterexample to replay: "mutual exclusion" (two clients believe
    /// at once) or "storage safety" (the fenced store accepts an op of an earlier lock after
    /// one of a later lock).
    #[arg(long, default_value = property::MUTUAL_EXCLUSION)]
    property: String,
    /// `text`: each step as it runs, with what the real masters did under it, and the verdict;
    /// `html`: one page that opens from disk, the model's run drawn as the book draws it and
    /// each step beside what the real masters did.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// How `replay` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// Lines as the replay runs.
    Text,
    /// One HTML page at the end (what the replay is doing goes to stderr).
    Html,
}

/// What is replayed and how it is shown.
struct Schedule<'a> {
    run: Run,
    /// The property whose counterexample it is.
    wanted: &'a str,
    format: Format,
    /// The model's run, drawn on the page.
    timeline: Timeline,
    /// The command that runs it again.
    command: String,
}

impl Schedule<'_> {
    /// A line of the text output, or under `--format html` a note on stderr.
    fn say(&self, line: &str) -> Result<()> {
        match self.format {
            Format::Text => outln!("{line}")?,
            Format::Html => errln!("{line}"),
        }
        Ok(())
    }
}

/// Which run is executed, for the header and the verdict.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Run {
    /// The checker's counterexample.
    Counterexample,
    /// The counterexample's schedule under the mitigation's patch.
    Patched,
}

/// Checks the scenario, takes the counterexample to mutual exclusion that `trace` prints, and
/// executes it on real masters; prints both side by side and whether reality broke as the
/// model did.
pub(crate) fn run(args: &Args) -> Result<Outcome> {
    let source = inputs::source_of_one(&args.path)?;
    let scenario = Scenario::from_str(&source.file, &source.text)?;
    // Refused before the check, which may take a while, and again by `prepare`.
    refuse_unsupported(&scenario)?;
    let tick_ms = u64::try_from(args.tick.as_millis()).unwrap_or(u64::MAX);
    if !(10..=10_000).contains(&tick_ms) {
        bail!("--tick must be between 10ms and 10s (got {tick_ms} ms)");
    }
    let wanted = args.property.as_str();
    if ![property::MUTUAL_EXCLUSION, property::STORAGE_SAFETY].contains(&wanted) {
        bail!("--property must be \"mutual exclusion\" or \"storage safety\" (got {wanted:?})");
    }
    errln!(
        "{}: checking the model for its counterexample…",
        scenario.name
    );
    let report = Check::new(&scenario).run();
    let request = Request {
        patched: args.patched,
        wanted,
        format: args.format,
        tick_ms,
        command: command_line(args, &scenario.name, tick_ms),
    };
    let Some(prepared) = prepare(&scenario, &source.text, &report, request)? else {
        outln!(
            "{}: {wanted} holds in the model, so there is no counterexample to replay",
            scenario.name
        )?;
        return Ok(Outcome::Success);
    };
    let replayed = prepared.execute()?;
    match args.format {
        Format::Text => outln!("{}", replayed.verdict)?,
        Format::Html => out!("{}", replayed.page)?,
    }
    Ok(replayed.outcome)
}

/// What to replay and how to show it.
pub(crate) struct Request<'a> {
    /// Under the scenario's mitigation patch.
    pub patched: bool,
    /// The property whose counterexample to replay.
    pub wanted: &'a str,
    /// How it is shown.
    pub format: Format,
    /// One model tick on the real masters, in milliseconds.
    pub tick_ms: u64,
    /// The command that runs it again, for the page.
    pub command: String,
}

/// A counterexample ready to run on real masters.
pub(crate) struct Prepared<'a> {
    /// The scenario it runs (patched under `--patched`).
    scenario: Scenario,
    story: Story,
    schedule: Schedule<'a>,
    tick_ms: u64,
}

/// What a replay showed.
pub(crate) struct Replayed {
    /// "reproduced on real Redis: …", or where reality parted from the model.
    pub verdict: String,
    /// Success when real Redis did what the replay looked for.
    pub outcome: Outcome,
    /// The HTML page (empty under `--format text`).
    pub page: String,
}

/// The counterexample to `request.wanted` in `report` (the check of `scenario`, whose file
/// is `text`) made ready to run, or `None` when the property holds; an error for what the
/// replay cannot execute yet (or runs longer than it may).
pub(crate) fn prepare<'a>(
    scenario: &Scenario,
    text: &str,
    report: &check::Report,
    request: Request<'a>,
) -> Result<Option<Prepared<'a>>> {
    refuse_unsupported(scenario)?;
    let fixed = request
        .patched
        .then(|| patched(scenario, text))
        .transpose()?;
    let Some(told) = check::story_path(scenario, report, request.wanted) else {
        return Ok(None);
    };
    let mut schedule = Schedule {
        run: Run::Counterexample,
        wanted: request.wanted,
        format: request.format,
        timeline: told.timeline(),
        command: request.command,
    };
    let (story, scenario) = match fixed {
        Some(fixed) => {
            let patched = crate::book::patched_run(&fixed, &told);
            schedule.say(&match &patched.refused {
                Some(step) => format!(
                    "the same schedule under the patch, {} of {} steps: the patch rules out {step}",
                    patched.steps, patched.of
                ),
                None => format!("the same {} steps under the patch", patched.steps),
            })?;
            (schedule.run, schedule.timeline) = (Run::Patched, patched.timeline);
            (patched.story, fixed)
        }
        None => (told.story, scenario.clone()),
    };
    refuse_storage(&scenario, &story)?;
    if let Some(line) = story.lines.iter().find(|line| !executes(&line.event)) {
        bail!(
            "{}: the replay cannot execute this step of its counterexample yet: {}",
            scenario.name,
            line.sentence
        );
    }
    let tick_ms = request.tick_ms;
    let last = story.lines.last().map_or(0, |line| u64::from(line.t));
    let length = Duration::from_millis((last + 1) * tick_ms);
    if length > LONGEST {
        bail!(
            "{}: the counterexample lasts {last} ticks, {:.0} s at --tick {tick_ms}ms; pass a smaller --tick",
            scenario.name,
            length.as_secs_f64()
        );
    }
    Ok(Some(Prepared {
        scenario,
        story,
        schedule,
        tick_ms,
    }))
}

/// `redlock-lab replay NAME …` with the options that shape this run.
fn command_line(args: &Args, name: &str, tick_ms: u64) -> String {
    let mut line = format!("redlock-lab replay {name} --tick {tick_ms}ms");
    if args.patched {
        line.push_str(" --patched");
    }
    if args.property != property::MUTUAL_EXCLUSION {
        line.push_str(&format!(" --property \"{}\"", args.property));
    }
    if args.format == Format::Html {
        line.push_str(" --format html");
    }
    line
}

/// A story with storage steps is replayed only on the storage the fenced store is: every op
/// fenced in one atomic step, with the token the lock's quorum derived.
fn refuse_storage(scenario: &Scenario, story: &Story) -> Result<()> {
    use redlock_lab::storage::{CheckAndApply, Protection, TokenSource};
    let has_ops = story
        .lines
        .iter()
        .any(|line| matches!(line.event, Event::OpArrived { .. }));
    let fenced_store = scenario.storage.as_ref().is_some_and(|storage| {
        storage.protection == Protection::FencingToken
            && matches!(
                storage.token_source,
                TokenSource::LockQuorum | TokenSource::LockQuorumMaxOnly
            )
            && storage.check == CheckAndApply::Atomic
    });
    if has_ops && !fenced_store {
        bail!(
            "{}: the replay executes storage ops only on a fenced store (protection \"fencing-token\", tokens from the lock's quorum, one atomic check), not on this storage yet",
            scenario.name
        );
    }
    Ok(())
}

/// The scenario under its mitigation's patch; an error when it has none.
fn patched(scenario: &Scenario, text: &str) -> Result<Scenario> {
    let Some(mitigation) = scenario.mitigation.as_ref().filter(|m| !m.set.is_empty()) else {
        bail!(
            "{}: --patched needs a [mitigation] with a patch (`set`), and it has none",
            scenario.name
        );
    };
    let fixed = redlock_lab::scenario::patched(&scenario.file, text, &mitigation.set)?;
    refuse_unsupported(&fixed)?;
    Ok(fixed)
}

/// What the replay does not execute yet, refused before any server starts.
fn refuse_unsupported(scenario: &Scenario) -> Result<()> {
    let crashes = scenario.faults.crashes.as_ref();
    let guarded = crashes.is_some_and(|crashes| crashes.client_guard_ticks > 0);
    let node_clock_off = scenario.clock.node_error_ticks > 0
        || scenario
            .faults
            .clock_jumps
            .as_ref()
            .is_some_and(|jumps| jumps.target != redlock_lab::scenario::JumpTarget::Client);
    let why = if guarded && node_clock_off {
        Some(
            "a restarted-node guard on a node whose clock is off (the model times the guard on the node's clock, the shipped client on its own)",
        )
    } else if scenario.lock.params.contact == redlock_lab::proto::Contact::Sequential {
        Some("a sequential round")
    } else if scenario
        .faults
        .client_partitions
        .as_ref()
        .is_some_and(|p| p.count > 0)
    {
        Some("a client cut off from every node ([faults.client_partitions])")
    } else if scenario.lock.params.retry_token == redlock_lab::proto::RetryToken::Kept {
        Some("a failed round's release held back until after the next round (token = \"reused\")")
    } else if scenario.lock.params.unlock == redlock_lab::proto::UnlockMode::GetThenDel {
        Some("a DEL held back after its GET (unlock = \"get-then-del\")")
    } else {
        None
    };
    match why {
        Some(why) => bail!("{}: the replay cannot execute {why} yet", scenario.name),
        None => Ok(()),
    }
}

impl Prepared<'_> {
    /// Starts the masters, executes every line at its moment, and tells whether real Redis
    /// broke as the model did (with the page under `--format html`).
    pub(crate) fn execute(&self) -> Result<Replayed> {
        let Prepared {
            scenario,
            story,
            schedule,
            tick_ms,
        } = self;
        let tick_ms = *tick_ms;
        let interrupted = Arc::new(AtomicBool::new(false));
        for signal in [
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGTERM,
            signal_hook::consts::SIGHUP,
        ] {
            signal_hook::flag::register(signal, Arc::clone(&interrupted))?;
        }
        let configs = (0..usize::from(scenario.lock.clients))
            .map(|c| scaled_config(&scenario.lock.client_params(c), tick_ms))
            .collect();
        let servers = servers(scenario);
        errln!(
            "{}: starting {servers} on the clock shim; one tick is {tick_ms} ms",
            scenario.name
        );
        let mut replay = Replay::start(
            scenario.lock.nodes(),
            configs,
            timing(scenario, story, tick_ms),
        )?;
        let what = match schedule.run {
            Run::Counterexample => format!("the model's counterexample to {}", schedule.wanted),
            Run::Patched => "the same schedule under the mitigation's patch".to_owned(),
        };
        schedule.say(&format!(
            "{}: {what}, on {servers} (one tick = {tick_ms} ms)",
            scenario.name
        ))?;
        let interrupted = || interrupted.load(Ordering::Relaxed);
        let (rows, parted) = execute_lines(&mut replay, story, &interrupted, schedule.format)?;
        let (verdict, outcome) = verdict(&replay, parted, schedule.run, schedule.wanted);
        let page = match schedule.format {
            Format::Text => String::new(),
            Format::Html => Page {
                name: &scenario.name,
                servers: &servers,
                command: &schedule.command,
                verdict: &verdict,
                as_expected: outcome == Outcome::Success,
                timeline: &schedule.timeline,
                rows: &rows,
                beliefs: &replay.beliefs,
            }
            .render(),
        };
        Ok(Replayed {
            verdict,
            outcome,
            page,
        })
    }
}

/// Executes the story's lines at their moments until reality parts from the model (the reason,
/// with the line); each as it runs under `--format text`.
fn execute_lines(
    replay: &mut Replay,
    story: &Story,
    interrupted: &dyn Fn() -> bool,
    format: Format,
) -> Result<(Vec<Row>, Option<String>)> {
    let mut rows = Vec::new();
    for line in &story.lines {
        replay.wait_for(line.t, interrupted)?;
        let at_s = replay.elapsed_ms() / 1_000.0;
        let real = replay.step(line)?;
        if format == Format::Text {
            outln!("t={:<3} {:<3} {}", line.t, line.actor, line.action)?;
            match &real {
                Ok(told) if told.is_empty() => {}
                Ok(told) => outln!("      real {at_s:7.3} s  {told}")?,
                Err(why) => outln!("      real {at_s:7.3} s  ✗ {why}")?,
            }
        }
        let parted = real
            .as_ref()
            .err()
            .map(|why| format!("{why} (at t={}: {})", line.t, line.sentence));
        rows.push(Row {
            step: line.step,
            t: line.t,
            actor: line.actor.clone(),
            action: line.action.clone(),
            at_s,
            real,
        });
        if parted.is_some() {
            return Ok((rows, parted));
        }
    }
    Ok((rows, None))
}

/// The real servers a scenario's replay starts: "3 real redis-server masters", "1 real
/// redis-server master and n1's 2 replicas", "3 real redis-server masters and a replica of
/// each".
fn servers(scenario: &Scenario) -> String {
    let nodes = scenario.lock.nodes();
    let masters = if nodes == 1 {
        "1 real redis-server master".to_owned()
    } else {
        format!("{nodes} real redis-server masters")
    };
    match scenario.failover.as_ref().map_or(0, |f| f.replicas) {
        0 => masters,
        _ if scenario.failover.as_ref().is_some_and(|f| f.every_node) => {
            format!("{masters} and a replica of each")
        }
        1 => format!("{masters} and n1's replica"),
        k => format!("{masters} and n1's {k} replicas"),
    }
}

/// The replay's times and servers, from the scenario and the story it executes.
fn timing(scenario: &Scenario, story: &Story, tick_ms: u64) -> Timing {
    let failover = scenario.failover.as_ref();
    Timing {
        ttl: Millis(scenario.lock.params.ttl.as_u64() * tick_ms),
        tick_ms,
        client_error_ticks: scenario.clock.client_error_ticks,
        shared_tokens: scenario.lock.token == redlock_lab::scenario::Tokens::Shared,
        persistence: scenario
            .faults
            .crashes
            .as_ref()
            .map_or(Persistence::None, |crashes| crashes.persistence),
        storage: story
            .lines
            .iter()
            .any(|line| matches!(line.event, Event::OpArrived { .. })),
        // The model's replica slots, each as the node it replicates.
        replicas: match failover {
            None => Vec::new(),
            Some(f) if f.every_node => (0..scenario.lock.nodes()).collect(),
            Some(f) => vec![0; usize::from(f.replicas)],
        },
        promotion_delayed: failover.is_some_and(|failover| failover.promotion_delay_ticks > 0),
        // Half a tick short, so the guard ends between two ticks (as a key's expiry does).
        guard: scenario
            .faults
            .crashes
            .as_ref()
            .filter(|crashes| crashes.client_guard_ticks > 0)
            .map(|crashes| {
                Duration::from_millis(u64::from(crashes.client_guard_ticks) * tick_ms - tick_ms / 2)
            }),
    }
}

/// "reproduced on real Redis: …" (exit 0), or "not reproduced: …" (exit 1); under the patch,
/// "the mitigation holds on real Redis" (exit 0) or the breach it let through (exit 1).
fn verdict(replay: &Replay, parted: Option<String>, run: Run, wanted: &str) -> (String, Outcome) {
    if let Some(parted) = parted {
        return (
            format!("not reproduced: reality parted from the model: {parted}"),
            Outcome::Mismatch,
        );
    }
    let breach = if wanted == property::STORAGE_SAFETY {
        replay.store.as_ref().and_then(|store| store.inversion())
    } else {
        replay.overlap().map(|(a, b, from, until)| {
            format!(
                "c{} and c{} both held the lock from {:.3} s to {:.3} s",
                a.min(b) + 1,
                a.max(b) + 1,
                from as f64 / 1_000.0,
                until as f64 / 1_000.0
            )
        })
    };
    match (breach, run) {
        (Some(breach), Run::Counterexample) => (
            format!("reproduced on real Redis: {breach}"),
            Outcome::Success,
        ),
        (Some(breach), Run::Patched) => (
            format!("the mitigation did not hold on real Redis: {breach}"),
            Outcome::Mismatch,
        ),
        (None, Run::Patched) => (
            format!(
                "the mitigation holds on real Redis: every master answered as in the patched model, and {wanted} held"
            ),
            Outcome::Success,
        ),
        (None, Run::Counterexample) => (
            format!("not reproduced: every master answered as in the model, yet {wanted} held"),
            Outcome::Mismatch,
        ),
    }
}
