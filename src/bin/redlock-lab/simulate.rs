//! `redlock-lab simulate`: seeded simulator runs of one scenario, judged against its
//! `[expect]`.
//!
//! The scenario is mapped onto the simulator by `SimConfig::from_scenario_at` (its docs say
//! what is exact and what is approximated). A run that violates a property the scenario
//! expects to hold contradicts the model checker: that is the serious case, exit code 1. A
//! violation the scenario expects but no run reached is only a sampling result.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use redlock_lab::catalog;
use redlock_lab::check::available_threads;
use redlock_lab::plural::count;
use redlock_lab::scenario::{Scenario, Verdict, property};
use redlock_lab::sim::{self, Outcome as Run, Property, SimConfig};

use crate::Outcome;
use crate::inputs;
use crate::watch::Watch;

/// The default resolution: ten simulated milliseconds per model tick (see `--ms-per-tick`).
pub(crate) const DEFAULT_MS_PER_TICK: u64 = 10;

/// The finest and coarsest resolutions accepted.
const MS_PER_TICK_RANGE: std::ops::RangeInclusive<u64> = 1..=1_000;

/// The most runs one command makes.
const MAX_RUNS: u64 = 10_000_000;

/// How many events before a violation `--runs 1` prints.
const TRACE_TAIL: usize = 40;

/// Arguments of `simulate`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A scenario file, catalog name, or the name of one of the simulator's worlds
    /// (`models/sim/<name>.toml`: antirez-safe, antirez-safe-fsync, drift-covered,
    /// drift-too-small, node-clock-jump, client-clock-jump-backward, crash-no-persistence,
    /// pause-past-validity, pause-past-validity-fenced, pause-within-margin,
    /// validity-check-off, delayed-restart, delayed-restart-clock-jump, unlock-with-del,
    /// failover).
    path: PathBuf,
    /// The seed of the first run; run i uses seed + i.
    #[arg(long)]
    seed: u64,
    /// How many runs.
    #[arg(long, default_value_t = 1)]
    runs: u64,
    /// Simulated milliseconds per model tick. The simulator's messages take at least 1 ms
    /// where the model's take no time, so at 1 ms per tick a 4-tick lease leaves almost no
    /// room for a counterexample; at 10 the simulator reaches many more of the checker's.
    /// Default: the file's `[simulate] ms_per_tick`, else the tick of a file written in real
    /// units (`resolution`), else 10.
    #[arg(long)]
    ms_per_tick: Option<u64>,
    /// How many runs go at once [default: every core]; what the command prints does not
    /// depend on it.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    jobs: Option<u32>,
}

/// What the runs found for one `always` property.
struct Tally {
    property: Property,
    violations: u64,
    first: Option<u64>,
}

/// Runs the seeds, prints the header, a line per property and (with one run) a trace tail.
pub(crate) fn run(args: &Args) -> Result<Outcome> {
    let last_seed = check_args(args)?;
    let scenario = load(&args.path)?;
    let default_resolution = scenario.ms_per_tick().unwrap_or(DEFAULT_MS_PER_TICK);
    let ms_per_tick = args.ms_per_tick.unwrap_or(default_resolution);
    let config = SimConfig::from_scenario_at(&scenario, ms_per_tick)?;
    print_header(args, last_seed, &scenario, ms_per_tick, &config)?;
    let runs = run_seeds(args, &scenario, &config)?;
    if let Some(outcome) = &runs.single {
        print_schedule(outcome)?;
    }

    outln!()?;
    let mut contradictions = Vec::new();
    for tally in &runs.tallies {
        let replay = |seed| replay_command(&args.path, seed, ms_per_tick, default_resolution);
        print_tally(args, &scenario, tally, replay, &mut contradictions)?;
    }
    print_acquired(args, &scenario, runs.witnesses, &mut contradictions)?;
    if let Some(expected) = scenario.expected(property::EVENTUALLY_ACQUIRED) {
        outln!(
            "{} (expected {expected}): not judged by the simulator (a liveness property of the model's bounded run; `redlock-lab check` decides it)",
            property::EVENTUALLY_ACQUIRED
        )?;
    }

    if let Some(outcome) = &runs.single
        && !outcome.violations.is_empty()
    {
        outln!()?;
        out!(
            "{}",
            outcome.trace_tail(&format!("trace of seed {}", outcome.seed), TRACE_TAIL)
        )?;
    }
    if contradictions.is_empty() {
        Ok(Outcome::Success)
    } else {
        outln!()?;
        outln!("CONTRADICTION with the model checker:")?;
        for line in &contradictions {
            outln!("  {line}")?;
        }
        Ok(Outcome::Mismatch)
    }
}

/// Refuses a count of runs or a resolution out of range, and returns the last run's seed.
fn check_args(args: &Args) -> Result<u64> {
    if args.runs == 0 || args.runs > MAX_RUNS {
        bail!("--runs must lie in 1..={MAX_RUNS}, not {}", args.runs);
    }
    if let Some(ms_per_tick) = args.ms_per_tick
        && !MS_PER_TICK_RANGE.contains(&ms_per_tick)
    {
        bail!(
            "--ms-per-tick must lie in {}..={}, not {ms_per_tick}",
            MS_PER_TICK_RANGE.start(),
            MS_PER_TICK_RANGE.end(),
        );
    }
    args.seed.checked_add(args.runs - 1).with_context(|| {
        format!(
            "--seed {} with --runs {} runs past the largest seed",
            args.seed, args.runs
        )
    })
}

/// The seeds, the scenario, the resolution and the simulated world.
fn print_header(
    args: &Args,
    last_seed: u64,
    scenario: &Scenario,
    ms_per_tick: u64,
    config: &SimConfig,
) -> Result<()> {
    outln!("seed = {}", args.seed)?;
    if args.runs == 1 {
        outln!("runs = 1 (seed {})", args.seed)?;
    } else {
        outln!("runs = {} (seeds {}..={last_seed})", args.runs, args.seed)?;
    }
    outln!("scenario = {} ({})", scenario.name, scenario.file)?;
    outln!("ms_per_tick = {ms_per_tick}")?;
    out!("{config}")?;
    Ok(())
}

/// What every run found, and the one run itself when there is only one.
struct Runs {
    tallies: Vec<Tally>,
    /// How many runs acquired the lock at least once.
    witnesses: u64,
    single: Option<Run>,
}

impl Runs {
    /// Nothing found yet, for `properties`.
    fn new(properties: &[Property]) -> Runs {
        let tally = |&property| Tally {
            property,
            violations: 0,
            first: None,
        };
        Runs {
            tallies: properties.iter().map(tally).collect(),
            witnesses: 0,
            single: None,
        }
    }

    /// Counts one run; whether it violated a property.
    fn add(&mut self, outcome: &Run) -> bool {
        self.witnesses += u64::from(outcome.stats.acquisitions > 0);
        let mut violated = false;
        for tally in &mut self.tallies {
            if !outcome.holds(tally.property) {
                tally.violations += 1;
                tally.first = Some(tally.first.map_or(outcome.seed, |s| s.min(outcome.seed)));
                violated = true;
            }
        }
        violated
    }

    /// What another set of runs found, added: counts add up and the first seed is the least,
    /// so the sum does not depend on which thread ran which seed.
    fn merge(mut self, other: Runs) -> Runs {
        self.witnesses += other.witnesses;
        for (mine, theirs) in self.tallies.iter_mut().zip(other.tallies) {
            mine.violations += theirs.violations;
            mine.first = match (mine.first, theirs.first) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        self
    }
}

/// Runs every seed on `--jobs` threads, each taking the next seed not yet taken, and tallies
/// each property's violations; what it prints does not depend on the number of threads.
fn run_seeds(args: &Args, scenario: &Scenario, config: &SimConfig) -> Result<Runs> {
    let properties = properties(scenario);
    if args.runs == 1 {
        let outcome = sim::run(config, args.seed)?;
        let mut runs = Runs::new(&properties);
        runs.add(&outcome);
        runs.single = Some(outcome);
        return Ok(runs);
    }
    let watch = Watch::new("simulate", Some(args.runs), true);
    watch.say(format!("simulating {}", scenario.name));
    let jobs = args
        .jobs
        .map_or_else(available_threads, |jobs| jobs as usize);
    let (next, done, violating) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
    let work = || -> Result<Runs> {
        let mut runs = Runs::new(&properties);
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= args.runs {
                return Ok(runs);
            }
            let outcome = sim::run(config, args.seed + i).inspect_err(|_| {
                // The others stop at their next seed.
                next.store(args.runs, Ordering::Relaxed);
            })?;
            violating.fetch_add(u64::from(runs.add(&outcome)), Ordering::Relaxed);
            done.fetch_add(1, Ordering::Relaxed);
        }
    };
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..jobs.min(args.runs as usize))
            .map(|_| scope.spawn(work))
            .collect();
        while !threads.iter().all(|t| t.is_finished()) {
            std::thread::sleep(Duration::from_millis(100));
            let done = done.load(Ordering::Relaxed);
            watch.at(done, || {
                let violating = violating.load(Ordering::Relaxed);
                let name = &scenario.name;
                format!(
                    "{done} of {} runs of {name}, {violating} with a violation so far",
                    args.runs
                )
            });
        }
        let mut all = Runs::new(&properties);
        for thread in threads {
            all = all.merge(thread.join().expect("a simulation thread panicked")?);
        }
        Ok(all)
    })
}

/// The one run's swarm knobs and fault schedule.
fn print_schedule(outcome: &Run) -> Result<()> {
    if let Some(swarm) = &outcome.swarm {
        out!("{swarm}")?;
    }
    out!("{}", outcome.schedule_text())?;
    Ok(())
}

/// One `always` property's line: its violations, the first seed's replay command, and a
/// contradiction when the checker expects it to hold.
fn print_tally(
    args: &Args,
    scenario: &Scenario,
    tally: &Tally,
    replay: impl Fn(u64) -> String,
    contradictions: &mut Vec<String>,
) -> Result<()> {
    let name = tally.property.name();
    let expected = expected(scenario, name);
    out!(
        "{name} (expected {}): {}, ",
        expected_text(expected),
        count(args.runs, "run", "runs")
    )?;
    match tally.first {
        None => match expected {
            Some(Verdict::Violated) => outln!(
                "0 violations: not reached in {}",
                count(args.runs, "run", "runs")
            )?,
            _ => outln!("0 violations")?,
        },
        Some(seed) => {
            outln!(
                "{}, first with seed {seed}",
                count(tally.violations, "violation", "violations")
            )?;
            outln!("  replay: {}", replay(seed))?;
            if expected == Some(Verdict::Holds) {
                contradictions.push(format!(
                    "{name}: the checker expects it to hold, and seed {seed} violates it"
                ));
            }
        }
    }
    Ok(())
}

/// The `lock acquired` line: in how many runs, and a contradiction when the checker expects
/// none to.
fn print_acquired(
    args: &Args,
    scenario: &Scenario,
    witnesses: u64,
    contradictions: &mut Vec<String>,
) -> Result<()> {
    let acquired = expected(scenario, property::LOCK_ACQUIRED);
    out!(
        "{} (expected {}): acquired in {witnesses} of {}",
        property::LOCK_ACQUIRED,
        expected_text(acquired),
        count(args.runs, "run", "runs")
    )?;
    match (acquired, witnesses) {
        (Some(Verdict::Holds), 0) => {
            outln!(": not witnessed in {}", count(args.runs, "run", "runs"))?
        }
        (Some(Verdict::Violated), n) if n > 0 => {
            outln!()?;
            contradictions.push(format!(
                "{}: the checker expects no run to acquire, and {} did",
                property::LOCK_ACQUIRED,
                count(n, "run", "runs")
            ));
        }
        _ => outln!()?,
    }
    Ok(())
}

/// The scenario named by `path`: a file, a catalog name, or one of the simulator's worlds
/// (`models/sim/<name>.toml`, embedded; a file or catalog scenario of that name wins).
fn load(path: &Path) -> Result<Scenario> {
    let name = path.to_string_lossy();
    if !path.exists()
        && catalog::find(&name).is_none()
        && let Some(world) = catalog::find_world(&name)
    {
        return Ok(world.scenario()?);
    }
    inputs::load_one(path)
}

/// What a run should show for `property`: the simulator's own expectation where the scenario
/// has a `[simulate]` world, else the checker's `[expect]`.
fn expected(scenario: &Scenario, property: &str) -> Option<Verdict> {
    let own = scenario.simulate.as_ref().and_then(|s| {
        s.expect
            .iter()
            .find(|(name, _)| name == property)
            .map(|&(_, verdict)| verdict)
    });
    own.or_else(|| scenario.expected(property))
}

/// The `always` properties the simulator judges for this scenario.
fn properties(scenario: &Scenario) -> Vec<Property> {
    let mut properties = vec![Property::MutualExclusion];
    if scenario.storage.is_some() {
        properties.push(Property::StorageSafety);
        properties.push(Property::NoLostUpdate);
    }
    properties
}

fn expected_text(expected: Option<Verdict>) -> String {
    expected.map_or_else(|| "nothing".to_owned(), |v| v.to_string())
}

/// The command that replays one seed, with the path as the user gave it (`--ms-per-tick` only
/// where it differs from the scenario's `default`).
fn replay_command(path: &Path, seed: u64, ms_per_tick: u64, default: u64) -> String {
    let mut command = format!(
        "redlock-lab simulate {} --seed {seed}",
        shell_word(&path.to_string_lossy())
    );
    if ms_per_tick != default {
        let _ = write!(command, " --ms-per-tick {ms_per_tick}");
    }
    command
}

/// `word` quoted for a POSIX shell when it needs it.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=+,".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_commands_quote_what_a_shell_would_split() {
        assert_eq!(
            replay_command(Path::new("models/a.toml"), 7, 10, DEFAULT_MS_PER_TICK),
            "redlock-lab simulate models/a.toml --seed 7"
        );
        assert_eq!(
            replay_command(Path::new("my dir/it's.toml"), 7, 1, DEFAULT_MS_PER_TICK),
            r"redlock-lab simulate 'my dir/it'\''s.toml' --seed 7 --ms-per-tick 1"
        );
    }
}
