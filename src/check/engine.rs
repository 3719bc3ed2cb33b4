//! Which engine settles a check: discrete time or zones, and when the automatic choice takes
//! which.

use serde::Serialize;

use crate::scenario::{Bound, Scenario};

/// Which exploration settles a check's verdicts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Engine {
    /// The zone engine when it models the scenario and some constant is beyond
    /// [`DISCRETE_TICKS`]; the discrete engine otherwise.
    #[default]
    Auto,
    /// Discrete time: one state per clock reading, every feature and property, stories.
    Discrete,
    /// Symbolic time (the zone engine, `src/zones/`): a state per zone, whatever the
    /// constants; mutual exclusion, `lock acquired` and the storage properties on the features
    /// the zone engine accepts (what it refuses, [`Check::engine`](crate::check::Check::engine)
    /// names as an [`Unsupported`](crate::check::Unsupported)).
    Zones,
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Engine::Auto => "auto",
            Engine::Discrete => "discrete",
            Engine::Zones => "zones",
        })
    }
}

impl std::str::FromStr for Engine {
    type Err = String;

    /// `auto`, `discrete` or `zones`.
    fn from_str(name: &str) -> Result<Engine, String> {
        [Engine::Auto, Engine::Discrete, Engine::Zones]
            .into_iter()
            .find(|e| e.to_string() == name)
            .ok_or_else(|| format!("no engine {name:?}: auto, discrete or zones"))
    }
}

impl Engine {
    /// Whether this is [`Engine::Discrete`] (the JSON report leaves that engine unnamed).
    pub fn is_discrete(&self) -> bool {
        *self == Engine::Discrete
    }
}

/// The largest constant, in ticks, the automatic choice leaves to the discrete engine: its
/// state count grows with the constants (about as `ttl⁴`), the zone engine's does not.
pub const DISCRETE_TICKS: u64 = 60;

/// The largest timing constant of `scenario`, in ticks.
pub fn largest_constant(scenario: &Scenario) -> u64 {
    let lock = &scenario.lock.params;
    let faults = &scenario.faults;
    let jump = faults
        .clock_jumps
        .as_ref()
        .map_or(0, |j| u64::from(j.jump_ticks.largest()));
    let crash = faults.crashes.as_ref().map_or(0, |c| {
        u64::from(c.restart_delay_ticks.max(c.client_guard_ticks))
    });
    let clock = u64::from(
        scenario
            .clock
            .node_error_ticks
            .max(scenario.clock.client_error_ticks),
    );
    let ticks = |bound: Bound| match bound {
        Bound::Ticks(t) => u64::from(t),
        Bound::Unbounded => 0,
    };
    let pause = faults.pauses.as_ref().map_or(0, |p| ticks(p.max));
    let storage = scenario.storage.as_ref().map_or(0, |s| {
        ticks(s.max_delay).max(u64::from(s.check_margin_ticks.unwrap_or(0)))
    });
    [
        lock.ttl.as_u64(),
        lock.drift.as_u64(),
        lock.round_timeout.as_u64(),
        jump,
        crash,
        clock,
        pause,
        storage,
    ]
    .into_iter()
    .max()
    .unwrap_or(0)
}
