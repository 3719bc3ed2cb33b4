//! `redlock-lab run`: a distributed `flock(1)`. Take the lock on the Redis masters, run a
//! command while the watchdog keeps the lock extended, release it when the command ends, and
//! stop the command when the lock is lost.
//!
//! The loop that watches the child polls (every few milliseconds) three things in a fixed
//! order: the child's exit, a signal sent to `run`, and the watchdog's loss flag. The child's
//! exit comes first, so a command that finished before its lock was lost keeps its own exit
//! code. Nothing here decides whether the lock is held: that is the client core's deadline and
//! the watchdog's loss signal.

use std::fmt::Write as _;
use std::io::ErrorKind;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use redlock_lab::driver::redis::NodeOptions;
use redlock_lab::driver::watchdog::{Loss, LossReason, Watchdog, WatchdogConfig};
use redlock_lab::driver::{Acquisition, Clock, Guard, MonotonicClock, NotAcquired, RedisRedlock};
use redlock_lab::plural::count;
use redlock_lab::proto::{Config, DriftPolicy, Failure, Fencing};
use redlock_lab::time::Millis;
use rustix::process::{Pid, Signal, kill_process};
use serde::Deserialize;

use crate::Outcome;
use redlock_lab::scenario::parse_duration;

/// The environment variable that lists the nodes when neither `--nodes` nor `--config` does.
const NODES_ENV: &str = "REDLOCK_NODES";

/// How often the supervising loop looks at the child, the signals and the watchdog.
const POLL: Duration = Duration::from_millis(10);

/// Exit codes, as the help text documents them.
const AFTER_HELP: &str = "\
Exit codes:
  the command's own    the command ran; its exit code is passed through (128 + N if it was
                       killed by signal N)
  1 (-E, --conflict-exit-code)
                       the lock was not acquired: --nonblock and somebody holds it, --wait
                       ran out, or fewer than a majority of the nodes answered (at once,
                       unless --wait asks to wait the outage out)
  75 (--lost-exit-code)
                       the lock was lost while the command ran (an extension failed and the
                       lease ran out); the command was sent SIGTERM, then SIGKILL after
                       --kill-after
  2                    bad input: arguments, node URLs, the config file
  126, 127             the command could not be run (not executable, not found)

SIGINT, SIGTERM or SIGHUP sent to `run` is passed on to the command; once the command has
ended (SIGKILL after --kill-after) the lock is released and its exit code passed through.

The command's environment gets REDLOCK_NAME (the lock's name), REDLOCK_TTL_MS,
REDLOCK_DEADLINE_MS: the end of the first lease in Unix milliseconds, which the watchdog
keeps pushing back while the command runs, and REDLOCK_FENCING_TOKEN: a number from the
lock's own round that grows with every acquisition of the name (each node's counter, the
quorum's largest written back before the lock counts as held). Send it with every read and
write to storage that rejects a token smaller than one it has seen: that stops a command
that was paused past its lease. It needs the nodes to persist (appendfsync always).

Nodes come from --nodes, else --config, else the REDLOCK_NODES environment variable (a
comma-separated list). A config file is TOML:
  nodes = [\"redis://:password@10.0.0.1:6379\", \"rediss://10.0.0.2:6380\"]
  ca_certificate = \"/etc/redis/ca.pem\"   # optional: a private CA for rediss:// URLs";

/// Arguments of `run`.
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub(crate) struct Args {
    /// The Redis masters, comma-separated: redis://[user:password@]host:port or rediss://…
    #[arg(long, value_delimiter = ',', value_name = "URLS")]
    nodes: Vec<String>,
    /// A TOML file with `nodes = [...]` and an optional `ca_certificate` path.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The lock's name (the Redis key).
    #[arg(long)]
    name: String,
    /// The lock's time to live; the watchdog extends it every third of it.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    ttl: Duration,
    /// Wait at most this long for the lock, also through an outage (default: wait until it is
    /// free, but fail at once when fewer than a majority of the nodes answer).
    #[arg(long, value_parser = parse_duration, conflicts_with = "nonblock")]
    wait: Option<Duration>,
    /// Fail at once when the lock is held.
    #[arg(short, long)]
    nonblock: bool,
    /// The exit code when the lock is not acquired.
    #[arg(short = 'E', long, default_value_t = 1)]
    conflict_exit_code: u8,
    /// The exit code when the lock is lost while the command runs.
    #[arg(long, default_value_t = 75)]
    lost_exit_code: u8,
    /// After SIGTERM (the lock was lost, or `run` was interrupted), SIGKILL the command if it
    /// has not ended within this long.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    kill_after: Duration,
    /// A fixed clock-drift allowance (default: 1% of the TTL + 2 ms, as redis.io says).
    #[arg(long, value_parser = parse_duration)]
    drift: Option<Duration>,
    /// Say on stderr how each attempt to take the lock went.
    #[arg(short, long)]
    verbose: bool,
    /// The command and its arguments.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// The config file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    nodes: Vec<String>,
    ca_certificate: Option<PathBuf>,
}

/// Where the node list came from, and any TLS root to trust.
struct Nodes {
    urls: Vec<String>,
    ca_certificate: Option<Vec<u8>>,
}

fn nodes(args: &Args) -> Result<Nodes> {
    let (urls, ca_certificate) = if !args.nodes.is_empty() {
        (args.nodes.clone(), None)
    } else if let Some(path) = &args.config {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let file: ConfigFile =
            toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        let ca = match &file.ca_certificate {
            None => None,
            Some(ca) => {
                // Relative to the config file, as a person writing one would expect.
                let ca = path.parent().unwrap_or(Path::new(".")).join(ca);
                Some(std::fs::read(&ca).with_context(|| format!("cannot read {}", ca.display()))?)
            }
        };
        (file.nodes, ca)
    } else {
        match std::env::var(NODES_ENV) {
            Ok(list) => (list.split(',').map(str::to_owned).collect(), None),
            Err(_) => bail!("no nodes: give --nodes, --config FILE or {NODES_ENV}"),
        }
    };
    let urls: Vec<String> = urls
        .iter()
        .map(|u| u.trim().to_owned())
        .filter(|u| !u.is_empty())
        .collect();
    if urls.is_empty() {
        bail!("the node list is empty");
    }
    Ok(Nodes {
        urls,
        ca_certificate,
    })
}

/// The lock's configuration for `nodes` nodes: a fencing write-back and `--drift` if given.
/// (`try_lock` is one round: `run` paces its own retries against --wait.)
fn lock_config(args: &Args, nodes: usize) -> Result<Config> {
    let mut config = Config::new(nodes);
    // The fencing token the command gets comes from the round itself (no extra node).
    config.fencing = Fencing::WriteBack;
    if let Some(drift) = args.drift {
        config.drift = DriftPolicy::fixed(Millis(
            u64::try_from(drift.as_millis()).context("--drift is too long")?,
        ));
    }
    Ok(config)
}

/// Takes the lock, runs the command under it, and says how it ended.
pub(crate) fn run(args: &Args) -> Result<Outcome> {
    let nodes = nodes(args)?;
    let ttl = Millis(u64::try_from(args.ttl.as_millis()).context("--ttl is too long")?);
    let config = lock_config(args, nodes.urls.len())?;
    let options = NodeOptions {
        root_certificate_pem: nodes.ca_certificate,
        ..NodeOptions::default()
    };
    let mut redlock = RedisRedlock::open_with(&nodes.urls, &options, config)?;
    // Validate the TTL against the configuration before anything is sent.
    redlock
        .config()
        .params(ttl)
        .map_err(|e| anyhow::anyhow!("--ttl {}: {e}", humanize(args.ttl)))?;
    let signals = Signals::register()?;
    let started = Instant::now();
    let mut jitter = ChaCha8Rng::from_os_rng();
    let mut waiting = Waiting::default();
    loop {
        let refused = match redlock.try_lock(&args.name, ttl)? {
            Acquisition::Acquired(guard) => {
                if args.verbose {
                    errln!(
                        "redlock-lab run: attempt {}: lock {} acquired",
                        waiting.attempts + 1,
                        args.name
                    );
                }
                return Ok(Outcome::Exit(supervise(guard, args, &signals)?));
            }
            Acquisition::NotAcquired(not) => Refused::Held(not_acquired(&not)),
            Acquisition::Unreachable(unreachable) => Refused::Unreachable(unreachable.to_string()),
        };
        if let Some(signal) = signals.received() {
            errln!(
                "redlock-lab run: interrupted by signal {signal} while waiting for {}",
                args.name
            );
            return Ok(Outcome::Exit(128u8.saturating_add(signal as u8)));
        }
        let waited = started.elapsed();
        // Nobody answering is an outage, not a conflict: a job that waits for a lock does not
        // wait out an outage unless --wait says how long it may.
        let out_of_time = args.nonblock
            || args.wait.is_some_and(|wait| waited >= wait)
            || (args.wait.is_none() && matches!(refused, Refused::Unreachable(_)));
        if out_of_time {
            return Ok(give_up(args, &refused));
        }
        waiting.say(args, &refused);
        // A random pause so two waiting clients drift apart, never past --wait.
        let pause = Duration::from_millis(50 + jitter.next_u64() % 200);
        let pause = match args.wait {
            Some(wait) => pause.min(wait.saturating_sub(waited)),
            None => pause,
        };
        std::thread::sleep(pause);
    }
}

/// Says why the lock was not acquired, and exits with the conflict code.
fn give_up(args: &Args, refused: &Refused) -> Outcome {
    errln!(
        "redlock-lab run: lock {} not acquired{}: {}",
        args.name,
        match args.wait {
            Some(wait) => format!(" within {}", humanize(wait)),
            None => String::new(),
        },
        refused.why()
    );
    Outcome::Exit(args.conflict_exit_code)
}

/// Why an attempt did not get the lock.
enum Refused {
    /// The nodes answered: another owner holds it (or the round was refused otherwise).
    Held(String),
    /// Fewer than a majority of the nodes answered at all.
    Unreachable(String),
}

impl Refused {
    fn why(&self) -> &str {
        match self {
            Refused::Held(why) | Refused::Unreachable(why) => why,
        }
    }
}

/// What `run` has said while waiting: it says why it waits when it starts to, again when the
/// reason changes kind (held, then unreachable), and at every attempt with `--verbose`, so a
/// job never waits without a word.
#[derive(Default)]
struct Waiting {
    attempts: u32,
    told: Option<std::mem::Discriminant<Refused>>,
}

impl Waiting {
    fn say(&mut self, args: &Args, refused: &Refused) {
        self.attempts += 1;
        let kind = std::mem::discriminant(refused);
        if args.verbose {
            errln!(
                "redlock-lab run: attempt {}: lock {} not acquired: {}",
                self.attempts,
                args.name,
                refused.why()
            );
        }
        if self.told != Some(kind) {
            let until = match args.wait {
                Some(wait) => format!("for up to {}", humanize(wait)),
                None => "until it is free (--nonblock fails at once, --wait bounds it)".to_owned(),
            };
            let who = match refused {
                Refused::Held(_) => "held by another owner",
                Refused::Unreachable(_) => "fewer than a majority of the nodes answer",
            };
            // With --verbose the attempt's line above already says why, node by node.
            let why = if args.verbose {
                String::new()
            } else {
                format!(": {}", refused.why())
            };
            errln!(
                "redlock-lab run: waiting for lock {} {until}: {who}{why}",
                args.name
            );
        }
        self.told = Some(kind);
    }
}

/// The guard of a lock `run` holds.
type RunGuard<'a> =
    Guard<'a, redlock_lab::driver::RedisNode, MonotonicClock, rand_chacha::ChaCha20Rng>;

/// How the command ended, and why.
enum End {
    /// It exited by itself.
    Exited(ExitStatus),
    /// `run` got `signal` and passed it on; the command then ended with `status`.
    Interrupted { signal: i32, status: ExitStatus },
    /// The lock was lost; the command was stopped and ended with `status`.
    Lost { why: String, status: ExitStatus },
    /// It could not be started.
    NotStarted(std::io::Error),
}

/// Runs the command while a watchdog keeps `guard` extended, then releases the lock.
fn supervise(guard: RunGuard<'_>, args: &Args, signals: &Signals) -> Result<u8> {
    let now = guard.clock().now();
    let deadline_unix_ms = unix_ms(SystemTime::now()) + (guard.deadline() - now).as_u64();
    let mut command = Command::new(&args.command[0]);
    command
        .args(&args.command[1..])
        .env("REDLOCK_NAME", &args.name)
        .env("REDLOCK_TTL_MS", guard.params().ttl.as_u64().to_string())
        .env("REDLOCK_DEADLINE_MS", deadline_unix_ms.to_string());
    if let Some(token) = guard.fencing_token() {
        command.env("REDLOCK_FENCING_TOKEN", token.to_string());
    }
    let (lost_tx, lost_rx) = mpsc::channel();
    let config = WatchdogConfig::new().on_lost(move |loss| {
        // The supervising loop may have ended already; then nobody needs the reason.
        let _ = lost_tx.send(loss);
    });
    // The errors from here on are the extensions': the nodes a lost lock names.
    let acquired_errors = guard.node_errors().len();
    let (end, released) = guard.with_watchdog(config, |watched| match command.spawn() {
        Ok(child) => {
            let silent = || watched.with(|guard| silent_nodes(guard, acquired_errors));
            watch(child, watched, &lost_rx, silent, args, signals)
        }
        Err(error) => End::NotStarted(error),
    });
    let released = format!("released on {} node(s)", released.applied.len());
    Ok(match end {
        End::Exited(status) => exit_code(status),
        End::Interrupted { signal, status } => {
            errln!(
                "redlock-lab run: got signal {signal}, passed it on; the command {}; lock {} {released}",
                describe(status),
                args.name
            );
            exit_code(status)
        }
        End::Lost { why, status } => {
            errln!(
                "redlock-lab run: lock {} lost: {why}; the command was stopped ({}); {released}",
                args.name,
                describe(status)
            );
            args.lost_exit_code
        }
        End::NotStarted(error) => {
            errln!(
                "redlock-lab run: cannot run {:?}: {error}; lock {} {released}",
                args.command[0],
                args.name
            );
            if error.kind() == ErrorKind::NotFound {
                127
            } else {
                126
            }
        }
    })
}

/// The supervising loop: the child's exit first, then a signal to `run`, then a loss.
fn watch<E, T>(
    mut child: Child,
    watched: &Watchdog<'_, E, T>,
    lost: &mpsc::Receiver<Loss>,
    silent: impl Fn() -> String,
    args: &Args,
    signals: &Signals,
) -> End
where
    E: redlock_lab::driver::watchdog::Extendable,
    T: redlock_lab::driver::watchdog::Timer,
{
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return End::Exited(status),
            Ok(None) => {}
            // The child cannot be waited for: stop it rather than hold the lock blindly.
            Err(error) => {
                let status = stop(&mut child, Signal::TERM, args.kill_after);
                return End::Lost {
                    why: format!("cannot wait for the command: {error}"),
                    status,
                };
            }
        }
        if let Some(signal) = signals.received() {
            let status = stop(&mut child, signal_of(signal), args.kill_after);
            return End::Interrupted { signal, status };
        }
        if watched.is_lost() || !watched.is_valid() {
            // `is_valid` turns false at the deadline even while an extension round is still
            // blocked on a hung node; the watchdog's own reason comes with `is_lost`.
            let mut why = match lost.recv_timeout(POLL) {
                Ok(loss) => describe_loss(&loss),
                Err(_) => "the lease's deadline passed before an extension won a majority".into(),
            };
            why.push_str(&silent());
            let status = stop(&mut child, Signal::TERM, args.kill_after);
            return End::Lost { why, status };
        }
        std::thread::sleep(POLL);
    }
}

/// Sends `signal`, waits up to `kill_after` for the child to end, then SIGKILLs it.
fn stop(child: &mut Child, signal: Signal, kill_after: Duration) -> ExitStatus {
    let pid = Pid::from_child(child);
    // The child may have exited just now: a failed kill is then harmless, and `wait` below
    // collects it either way.
    let _ = kill_process(pid, signal);
    let until = Instant::now() + kill_after;
    while Instant::now() < until {
        if let Ok(Some(status)) = child.try_wait() {
            return status;
        }
        std::thread::sleep(POLL);
    }
    let _ = child.kill();
    // A child that cannot be waited for is reported as SIGKILLed (raw wait status 9).
    child.wait().unwrap_or_else(|_| ExitStatus::from_raw(9))
}

fn signal_of(number: i32) -> Signal {
    match number {
        signal_hook::consts::SIGINT => Signal::INT,
        signal_hook::consts::SIGHUP => Signal::HUP,
        _ => Signal::TERM,
    }
}

/// Exit code for a status: its code, or 128 + the signal that killed it.
fn exit_code(status: ExitStatus) -> u8 {
    match (status.code(), status.signal()) {
        (Some(code), _) => code as u8,
        (None, Some(signal)) => 128u8.saturating_add(signal as u8),
        (None, None) => 1,
    }
}

fn describe(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        (None, None) => "ended".to_owned(),
    }
}

fn describe_failure(failure: Failure) -> String {
    match failure {
        Failure::NoQuorum { applied, quorum } => {
            format!("{applied} node(s) said yes, {quorum} needed for a majority")
        }
        Failure::ValidityExhausted { elapsed } => {
            format!("the round took {elapsed:?}, which left no validity")
        }
        Failure::LeaseExpired => "the lease had already expired".to_owned(),
    }
}

fn describe_loss(loss: &Loss) -> String {
    match loss.reason {
        LossReason::Refused { failure } => format!(
            "an extension was refused for good ({}): the key is gone or not ours on too many nodes",
            describe_failure(failure)
        ),
        LossReason::DeadlinePassed {
            attempts,
            last_failure,
        } => {
            let mut why = format!(
                "the lease ran out after {}",
                count(attempts, "failed extension", "failed extensions")
            );
            if let Some(failure) = last_failure {
                let _ = write!(why, " (last: {})", describe_failure(failure));
            }
            why
        }
        LossReason::Panicked => "the watchdog's extension panicked".to_owned(),
        _ => format!("{:?}", loss.reason),
    }
}

/// `; no answer from n2 (why), n3 (why)`: each node that failed an extension, with its last
/// error (the guard's errors past the first `from` are the extensions').
fn silent_nodes(guard: &RunGuard<'_>, from: usize) -> String {
    let mut last = std::collections::BTreeMap::new();
    for error in guard.node_errors().iter().skip(from) {
        last.insert(error.node, &error.error);
    }
    if last.is_empty() {
        return String::new();
    }
    let nodes: Vec<String> = last
        .iter()
        .map(|(node, error)| format!("{node} ({error})"))
        .collect();
    format!("; no answer from {}", nodes.join(", "))
}

fn not_acquired(not: &NotAcquired<redlock_lab::driver::redis::RedisNodeError>) -> String {
    let mut why = describe_failure(not.failure);
    if !not.nodes.not_applied.is_empty() {
        let _ = write!(
            why,
            "; {} node(s) hold the key for somebody else",
            not.nodes.not_applied.len()
        );
    }
    for error in &not.errors {
        let _ = write!(why, "; {}", error.error);
    }
    why
}

fn unix_ms(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn humanize(duration: Duration) -> String {
    format!("{duration:?}")
}

/// The termination signals `run` catches so that it can pass them on and release the lock.
struct Signals {
    last: Arc<AtomicUsize>,
}

impl Signals {
    fn register() -> Result<Signals> {
        let last = Arc::new(AtomicUsize::new(0));
        for signal in [
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGTERM,
            signal_hook::consts::SIGHUP,
        ] {
            signal_hook::flag::register_usize(signal, Arc::clone(&last), signal as usize)
                .with_context(|| format!("cannot catch signal {signal}"))?;
        }
        Ok(Signals { last })
    }

    /// The last signal caught, if any.
    fn received(&self) -> Option<i32> {
        match self.last.load(Ordering::SeqCst) {
            0 => None,
            signal => Some(signal as i32),
        }
    }
}
