//! The limits of every command that runs the checker on a file (`check`, `trace`, `sweep`):
//! one set of flags, read the same way, so a large file can be bounded in any of them.

use std::time::Duration;

use anyhow::{Result, bail};
use redlock_lab::check::{Check, available_bytes};

/// The share of available memory the default guard lets a check use: enough for any check
/// that can finish, while a first big file leaves the machine usable.
const DEFAULT_MEMORY_SHARE: f64 = 0.8;

/// Where a check stops before it settles: its verdicts are then incomplete, and the command
/// exits with 3.
#[derive(Clone, Debug, Default, clap::Args)]
pub(crate) struct Limits {
    /// Stop a check after N unique states (zones for the zone engine); unsettled properties
    /// are reported as incomplete, and the exit code is 3.
    #[arg(long, value_name = "N")]
    max_states: Option<usize>,
    /// Stop a check after SECS seconds (incomplete, exit code 3).
    #[arg(long, value_name = "SECS")]
    time_limit: Option<u64>,
    /// Stop a check when this process holds more than MB megabytes (incomplete, exit code 3)
    /// [default: 80 % of the memory available when the command starts; 0 turns the guard
    /// off].
    #[arg(long, value_name = "MB")]
    max_memory: Option<u64>,
    /// Explore the first N unique states breadth first on one thread before going depth
    /// first [default: 100000; 0 skips it]. A larger probe finds shallow violations of a big
    /// scenario sooner, at about 350 bytes per state; verdicts do not depend on it.
    #[arg(long, value_name = "N")]
    probe_states: Option<usize>,
}

impl Limits {
    /// Refuses a limit of zero states or seconds, which would stop every check at once.
    pub(crate) fn refuse_zeros(&self) -> Result<()> {
        if self.max_states == Some(0) {
            bail!("--max-states must be at least 1");
        }
        if self.time_limit == Some(0) {
            bail!("--time-limit must be at least 1 second");
        }
        Ok(())
    }

    /// `check` bounded by these limits; `memory` is [`Limits::memory`], read once per command
    /// so that every check of it has the same guard.
    pub(crate) fn apply(&self, mut check: Check, memory: Option<u64>) -> Check {
        if let Some(states) = self.max_states {
            check = check.max_states(states);
        }
        if let Some(states) = self.probe_states {
            check = check.probe_states(states);
        }
        if let Some(seconds) = self.time_limit {
            check = check.time_limit(Duration::from_secs(seconds));
        }
        if let Some(bytes) = memory {
            check = check.memory_limit(bytes);
        }
        check
    }

    /// The memory guard in bytes, or `None` when it is off (or `/proc/meminfo` is unreadable).
    pub(crate) fn memory(&self) -> Option<u64> {
        match self.max_memory {
            Some(0) => None,
            Some(megabytes) => Some(megabytes.saturating_mul(1 << 20)),
            None => available_bytes().map(|bytes| (bytes as f64 * DEFAULT_MEMORY_SHARE) as u64),
        }
    }
}
