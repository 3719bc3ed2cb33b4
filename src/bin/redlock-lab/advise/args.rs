//! What `advise` reads from the command line.

use std::path::PathBuf;
use std::time::Duration;

use redlock_lab::scenario::{DurationError, parse_duration};

/// Arguments of `advise`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The lock's time to live.
    #[arg(long, value_parser = parse_duration)]
    pub ttl: Duration,
    /// The largest error of any clock reading, on a node or a client (rate error accumulated
    /// over a TTL, expiry granularity).
    #[arg(long, default_value = "0", value_parser = parse_duration)]
    pub clock_error: Duration,
    /// The largest step of a clock (a node's forward, a client's backward); 0 if clocks slew.
    #[arg(long, default_value = "0", value_parser = parse_duration)]
    pub max_jump: Duration,
    /// The longest pause of a lock holder between its check and its write (GC, page faults),
    /// or `unbounded`.
    #[arg(long, default_value = "0", value_parser = parse_bound)]
    pub max_pause: Bound,
    /// The longest a write may travel to the storage, or `unbounded`.
    #[arg(long, default_value = "0", value_parser = parse_bound)]
    pub network_delay: Bound,
    /// What a Redis node keeps across a crash: `none`, `fsync-always` or `fsync-periodic`.
    #[arg(long, default_value = "none", value_parser = ["none", "fsync-always", "fsync-periodic"])]
    pub restart_persistence: String,
    /// Scale the TTL to this many ticks instead of working at 1 ms: coarser figures, for
    /// comparing with the discrete engine's small models.
    #[arg(long, value_parser = clap::value_parser!(u32).range(3..=12))]
    pub ticks: Option<u32>,
    /// Write the scenario files that prove each figure (both sides of each boundary) here.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Stop after this long (`90s`, `5m`): print the figures that settled, say which did not
    /// and why, and exit with 3.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub time_limit: Option<Duration>,
    /// Print one JSON document instead of the text, for scripts.
    #[arg(long)]
    pub json: bool,
    /// Show each figure's proof: the checks on both sides, the formula, the ticks.
    #[arg(long, short)]
    pub verbose: bool,
    /// How many searches run at once [default: the number of cores]; the figures do not
    /// depend on it.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub jobs: Option<u32>,
}

/// A duration or no bound at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bound {
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
