//! Scenarios: the `models/*.toml` files, parsed and validated.
//!
//! A scenario names a claim from the Redlock controversy, teaches it in prose, configures the
//! model (nodes, clients, TTL, drift, the mistakes to make, the faults to allow) and states what
//! the literature expects of each property in `[expect]`. The expectation is only compared
//! against the checker's verdict; it never decides it. `models/README.md` documents every key,
//! its unit and its default.
//!
//! ```
//! use redlock_lab::scenario::{Scenario, Verdict};
//!
//! let scenario = Scenario::from_str("inline.toml", r#"
//!     name = "fault-free"
//!     title = "Three nodes, two clients, no faults"
//!     claim = "Redlock keeps mutual exclusion without faults"
//!     source = "redis.io"
//!     prose = "The control case."
//!     [lock]
//!     nodes = 3
//!     ttl_ticks = 4
//!     drift_ticks = 0
//!     [expect]
//!     "mutual exclusion" = "holds"
//! "#)?;
//! assert_eq!(scenario.lock.nodes(), 3);
//! assert_eq!(scenario.expect[0], ("mutual exclusion".to_owned(), Verdict::Holds));
//! # Ok::<(), redlock_lab::scenario::ScenarioError>(())
//! ```

mod error;
mod ingredient;
mod patch;
mod raw;

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use toml::Spanned;

pub use error::{Location, ScenarioError};
pub use ingredient::Ingredient;
pub use patch::{PatchError, patch_text, patched};

use crate::node::Persistence;
use crate::proto::{
    Config, DriftPolicy, ExtensionQuorum, LockParams, NodeId, NodeSet, RetryPolicy, RoundDecision,
    UnlockMode, ValidityCheck,
};
use crate::storage::{Protection, TokenSource};
use crate::time::Millis;
use raw::{
    RawBound, RawDecision, RawExpectValue, RawExtensionQuorum, RawPersistence, RawProtection,
    RawScenario, RawSimFaults, RawSimulate, RawTokenSource, RawUnlock,
};

/// The most nodes a model may have (the state keeps fixed-size arrays).
pub const MAX_MODEL_NODES: usize = 5;
/// The most clients a model may have.
pub const MAX_MODEL_CLIENTS: usize = 3;

/// [`LockSettings::extensions`] for `extensions = "unbounded"`: a holder may extend as often
/// as it likes. The model does not count such extensions, so the state space stays finite.
pub const UNBOUNDED_EXTENSIONS: u8 = u8::MAX;

/// Property names, as `[expect]`, the CLI and the JSON report spell them: `&str` constants
/// for code that works with names (reports also carry user invariants, which have only a
/// name). Each is the name of a [`Property`](crate::property::Property), where the names are
/// defined.
pub mod property {
    use crate::property::Property;

    /// Always: no two clients believe they hold the lock at the same true time.
    pub const MUTUAL_EXCLUSION: &str = Property::MutualExclusion.name();
    /// Always: the storage never applies an op of an older lock epoch after a newer one.
    pub const STORAGE_SAFETY: &str = Property::StorageSafety.name();
    /// Always: the storage's counter equals the writes acknowledged to clients.
    pub const NO_LOST_UPDATE: &str = Property::NoLostUpdate.name();
    /// Sometimes: some client acquires the lock (the non-vacuity witness).
    pub const LOCK_ACQUIRED: &str = Property::LockAcquired.name();
    /// Eventually, on a bounded horizon: some client (or the one `[liveness] client` names)
    /// acquires the lock.
    pub const EVENTUALLY_ACQUIRED: &str = Property::EventuallyAcquired.name();
    /// Every built-in property.
    pub const ALL: [&str; 5] = [
        MUTUAL_EXCLUSION,
        STORAGE_SAFETY,
        NO_LOST_UPDATE,
        LOCK_ACQUIRED,
        EVENTUALLY_ACQUIRED,
    ];
}

/// Who made the claim a scenario tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Source {
    /// The seed article the project was created from (its prose cites the section).
    #[serde(rename = "seed")]
    Seed,
    /// This project's own derivation: a boundary, a variant or a design the checker settles,
    /// which none of the other sources states.
    #[serde(rename = "derived")]
    Derived,
    /// The Redlock page on redis.io (and the Redis command docs).
    #[serde(rename = "redis.io")]
    RedisIo,
    /// Martin Kleppmann, "How to do distributed locking" (2016).
    #[serde(rename = "Kleppmann")]
    Kleppmann,
    /// antirez, "Is Redlock safe?" (2016).
    #[serde(rename = "antirez")]
    Antirez,
}

/// A property's verdict: what the checker found, or what `[expect]` predicts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Always/eventually: no counterexample exists. Sometimes: a witness exists.
    Holds,
    /// Always/eventually: a counterexample exists. Sometimes: no witness exists.
    Violated,
    /// The check stopped at a limit (states, time, memory) before it could settle the
    /// property. Only the checker reports it: `[expect]` cannot ask for it, because a scenario
    /// states what is true, not how far a run got.
    #[serde(skip_deserializing)]
    Incomplete,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Verdict::Holds => "holds",
            Verdict::Violated => "violated",
            Verdict::Incomplete => "incomplete",
        })
    }
}

/// What token values the clients draw (file values `"unique"`, `"shared"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tokens {
    /// Every acquisition draws its own value, as a random source does: correct.
    Unique,
    /// Every client draws the same value (a hard-coded token, or a random source seeded alike
    /// in every process): compare-and-delete can no longer tell the clients' keys apart.
    Shared,
}

/// Which processes a clock jump may hit (file values `"node"`, `"client"`, `"any"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum JumpTarget {
    /// A node's wall clock (Redis expires keys on it).
    Node,
    /// A client's clock (it times the lease on it).
    Client,
    /// Any node or client.
    Any,
}

/// An upper bound in ticks, or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// At most this many ticks.
    Ticks(u32),
    /// No bound: the asynchronous model.
    Unbounded,
}

impl From<RawBound> for Bound {
    fn from(raw: RawBound) -> Bound {
        match raw {
            RawBound::Ticks(t) => Bound::Ticks(t),
            RawBound::Unbounded => Bound::Unbounded,
        }
    }
}

/// `[lock]`: the Redlock configuration every client uses, resolved once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockSettings {
    /// The lock every client runs, as the core resolves it at validation (one tick being one
    /// millisecond): `nodes` (1..=5; default 3), `ttl_ticks` (default 10), `drift_ticks` (a
    /// fixed allowance; default 1), `round_timeout_ticks` (default 1, capped at `ttl − drift`
    /// by the core), `attempts` (rounds per acquisition, the first included; default 1) with
    /// `retry_delay_ticks` (the least back-off; default 0, and the model lets every longer one
    /// happen too), `unlock`, `validity_check`, `decision`, `extension_quorum`, and the
    /// fencing rule that `[storage] token_source` asks for. The model runs it as it is and
    /// the simulator scales its spans; nothing resolves it again.
    pub params: LockParams,
    /// Clients contending for the lock (1..=3; default 2).
    pub clients: u8,
    /// Extension rounds a client may run while it holds the lock (default 0), or
    /// [`UNBOUNDED_EXTENSIONS`]: no cap at all.
    pub extensions: u8,
    /// What token values the clients draw (default unique per acquisition).
    pub token: Tokens,
}

impl LockSettings {
    /// `N`, the number of masters.
    pub fn nodes(&self) -> usize {
        usize::from(self.params.node_count)
    }

    /// The acquisition rounds per client, the first included.
    pub fn attempts(&self) -> u8 {
        // Validation keeps it within 1..=4.
        self.params.retry.attempts as u8
    }
}

/// `[clock]`: bounded clock error, as nondeterminism at each reading.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClockSettings {
    /// `ε_n`: a node key may vanish up to this many ticks early (default 0).
    pub node_error_ticks: u32,
    /// `ε_c`: a client's belief may run up to this many ticks late (default 0).
    pub client_error_ticks: u32,
}

/// `[network]`: which client reaches which node, and message loss.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetworkSettings {
    /// Per client, the nodes it can reach (default: all). A request to an unreachable node
    /// gets no answer; the round waits for its timeout.
    pub reach: Vec<NodeSet>,
    /// How many requests (`SET` or extension) may be lost in the whole run (default 0).
    pub message_loss: u8,
}

/// `[storage]`: the guarded counter behind the lock. Absent: no storage, and the storage
/// properties are not checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StorageSettings {
    /// How the storage rejects stale holders (default none).
    pub protection: Protection,
    /// Where the fencing tokens come from (default an ideal counter).
    pub token_source: TokenSource,
    /// A holder sends an op only while `deadline − own clock ≥ margin` (default: no check).
    pub check_margin_ticks: Option<u32>,
    /// How long a storage op may travel (default 0: applied in the tick it was sent).
    pub max_delay: Bound,
}

/// `[faults.pauses]`: process pauses of a holder between its check and its op reaching storage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PauseSettings {
    /// How many pauses in the whole run (default 0).
    pub count: u8,
    /// How long one pause may last (default unbounded).
    pub max: Bound,
}

/// `[faults.clock_jumps]`: steps of a process's clock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JumpSettings {
    /// How many jumps in the whole run (default 1).
    pub count: u8,
    /// Which processes may jump (default any).
    pub target: JumpTarget,
    /// Pin the jump to one node or client (0-based here; 1-based in the file).
    pub index: Option<u8>,
    /// The size: positive forward, negative backward.
    pub jump_ticks: i32,
}

/// `[faults.crashes]`: node crashes and restarts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CrashSettings {
    /// How many crashes in the whole run (default 1 when the table is present).
    pub count: u8,
    /// What survives a crash (default none).
    pub persistence: Persistence,
    /// A restarted node refuses requests for this many ticks of its own clock (default 0).
    pub restart_delay_ticks: u32,
    /// Whether a crashed node comes back at all (default true).
    pub restart: bool,
    /// The clients' restarted-node guard: a node that has served for less than this many ticks
    /// of its own clock since its restart still answers, but its yes does not count toward a
    /// quorum (default 0, no guard).
    pub client_guard_ticks: u32,
}

/// `[faults]`: every fault budget.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultSettings {
    /// Pauses of a holder.
    pub pauses: Option<PauseSettings>,
    /// Clock jumps.
    pub clock_jumps: Option<JumpSettings>,
    /// Node crashes.
    pub crashes: Option<CrashSettings>,
    /// Client crashes.
    pub client_crashes: Option<ClientCrashSettings>,
}

/// `[faults.client_crashes]`: a client process dies for good, wherever it is in its lock's
/// life. It sends nothing more (no unlock), believes nothing more, and its keys stay on the
/// nodes until they expire; requests it sent before dying still arrive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientCrashSettings {
    /// How many client crashes in the whole run (default 1 when the table is present).
    pub count: u8,
}

/// `[failover]`: node n1 is a master with one asynchronously replicated replica that is
/// promoted when the master fails. With `nodes = 1` it is the single-master baseline; with
/// more, n1 is one Redlock node that fails over inside itself, next to independent masters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailoverSettings {
    /// The promoted replica refuses requests for this many ticks (default 0).
    pub promotion_delay_ticks: u32,
}

/// `[liveness]`: the bounded run that judges `eventually acquired`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LivenessSettings {
    /// The horizon of the run, in true ticks (default `3 · ttl`).
    pub horizon_ticks: u32,
    /// Fairness assumption F: a round begins only when no other round is running (default false).
    pub isolated_rounds: bool,
    /// `client` (1-based in the file, 0-based here): `eventually acquired` asks that this one
    /// client acquires, and a holder may keep the lock while time passes for as long as it
    /// believes (it is working), instead of releasing promptly (default none: some client,
    /// and every process prompt).
    pub client: Option<u8>,
}

/// The largest span a `[simulate]` key takes, in ms (a fault size, delay or offset).
pub const MAX_SIMULATE_SPAN_MS: u32 = 1_000_000;

/// The longest `[simulate] duration_ms`.
pub const MAX_SIMULATE_DURATION_MS: u32 = 100_000_000;

/// `[simulate]`: the simulator's own world for a scenario, which the model checker ignores.
///
/// Presence makes the simulator run a long workload instead of the model's one acquisition per
/// client: clients lock, work on the storage and release again and again for `duration_ms`,
/// with the faults listed here (and only those). Its spans are milliseconds of the simulator,
/// not ticks; `ms_per_tick` is the resolution the scenario's own tick keys are read at.
/// `SimConfig::from_scenario_at` (module `bridge`) documents the mapping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimulateSettings {
    /// Simulated ms per tick of the scenario's keys, when the file fixes it (the CLI's default).
    pub ms_per_tick: Option<u32>,
    /// How long a run lasts in true time (default 1 000 ms).
    pub duration_ms: u32,
    /// The shortest one-way message delay (default 1 ms).
    pub delay_min_ms: u32,
    /// The longest one-way message delay (default 5 ms).
    pub delay_max_ms: u32,
    /// Chance in thousandths that a lock message is lost (default 0).
    pub loss_per_mille: u32,
    /// Every clock's rate error bound in parts per million; `None`: from `[clock]`.
    pub clock_rate_error_ppm: Option<u32>,
    /// Clock offsets are drawn from `0..=clock_offset_max_ms` (default 0).
    pub clock_offset_max_ms: u32,
    /// The shortest retry delay between rounds (default 5 ms).
    pub retry_delay_min_ms: u32,
    /// The longest retry delay between rounds (default 20 ms).
    pub retry_delay_max_ms: u32,
    /// A client idles up to this long between locks (default 20 ms).
    pub think_max_ms: u32,
    /// Read-modify-write cycles per lock (default 2; 0 without `[storage]`).
    pub cycles_per_lock: u32,
    /// The faults of each run, generated from its seed or listed.
    pub faults: SimulateFaults,
    /// What the simulator's runs are expected to show, property by property: `violated` where
    /// some seed reaches a violation, `holds` where no seed may.
    pub expect: Vec<(String, Verdict)>,
}

/// The faults of `[simulate]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimulateFaults {
    /// Budgets from which each run draws its faults at random times.
    Generated {
        /// Node crashes; sizes are downtimes.
        crashes: SimulateBudget,
        /// Nodes cut off from every client; sizes are durations.
        isolations: SimulateBudget,
        /// Client pauses.
        pauses: SimulateBudget,
        /// Storage operations held back.
        storage_delays: SimulateBudget,
        /// Forward jumps of node clocks.
        node_jumps_forward: SimulateBudget,
        /// Backward jumps of client clocks.
        client_jumps_backward: SimulateBudget,
    },
    /// The same faults in every run (`[[simulate.schedule]]`).
    Listed(Vec<SimulateFault>),
}

/// A `[simulate]` fault budget: `count` faults whose sizes lie in `min_ms..=max_ms`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SimulateBudget {
    /// How many per run.
    pub count: u32,
    /// The smallest size.
    pub min_ms: u32,
    /// The largest size.
    pub max_ms: u32,
}

/// One entry of `[[simulate.schedule]]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimulateFault {
    /// Node `node` crashes at `at_ms` and is down for `downtime_ms`.
    Crash {
        /// True time of the crash.
        at_ms: u32,
        /// The node.
        node: u8,
        /// How long it is down before its restart delay begins.
        downtime_ms: u32,
    },
    /// Node `node`'s clock jumps by `by_ms` (negative: backward) at `at_ms`.
    NodeClockJump {
        /// True time of the jump.
        at_ms: u32,
        /// The node.
        node: u8,
        /// The jump.
        by_ms: i32,
    },
}

/// A validated scenario: everything needed to build the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scenario {
    /// The file name (or the name given when loading from a string).
    pub file: String,
    /// Short kebab-case id.
    pub name: String,
    /// One-line title.
    pub title: String,
    /// The claim under test.
    pub claim: String,
    /// Who made the claim.
    pub source: Source,
    /// Teaching prose.
    pub prose: String,
    /// `[lock]`.
    pub lock: LockSettings,
    /// `[clock]`.
    pub clock: ClockSettings,
    /// `[network]`.
    pub network: NetworkSettings,
    /// `[storage]`, if any.
    pub storage: Option<StorageSettings>,
    /// `[faults]`.
    pub faults: FaultSettings,
    /// `[failover]`, if any.
    pub failover: Option<FailoverSettings>,
    /// `[liveness]`.
    pub liveness: LivenessSettings,
    /// `[check] symmetry`: reduce by node and client symmetry (default true).
    pub symmetry: bool,
    /// `[simulate]`, if any: ignored by the model checker.
    pub simulate: Option<SimulateSettings>,
    /// `[expect]`, in file order sorted by name; empty only in a file whose checker verdicts
    /// are unknown and whose `[simulate]` carries an expectation instead.
    pub expect: Vec<(String, Verdict)>,
    /// `[expect] mechanism`: the ingredients the scenario teaches; each must be necessary for
    /// every violated property and appear in its shortest counterexample (checked by the
    /// catalog tests, never assumed). Empty when the file declares none.
    pub mechanism: Vec<Ingredient>,
    /// Other names the CLI accepts for this scenario (top-level `aliases`, default none).
    pub aliases: Vec<String>,
    /// `[mitigation]`, if any: what flips the verdict, and the scenario that proves it.
    pub mitigation: Option<Mitigation>,
}

/// `[mitigation]`: the fix for what a scenario breaks, for `redlock-lab explain`: prose, the
/// patch that applies it, and optionally the catalog scenario it yields. Verdicts come from
/// running the checker on the patched file, never from this table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mitigation {
    /// What to do, in one sentence.
    pub text: String,
    /// The catalog scenario that is this file with the patch applied, if one is kept as the
    /// fix's proof (`tests/catalog.rs` requires it to be exactly the patched file).
    pub scenario: Option<String>,
    /// `set`: the patch, dotted keys into the scenario's own TOML with their new values written
    /// as TOML (`"lock-quorum"`, `3`), in key order. Applied by [`patched`]; empty when absent.
    pub set: Vec<(String, String)>,
}

impl Scenario {
    /// Reads and validates a scenario file.
    pub fn load(path: impl AsRef<Path>) -> Result<Scenario, ScenarioError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| ScenarioError::Read {
            file: file.clone(),
            message: e.to_string(),
        })?;
        Scenario::from_str(&file, ScenarioError::text(&file, &bytes)?)
    }

    /// Parses and validates scenario text; `file` names it in errors and reports.
    #[allow(clippy::should_implement_trait)] // two arguments: not `FromStr`
    pub fn from_str(file: &str, text: &str) -> Result<Scenario, ScenarioError> {
        let raw: RawScenario =
            toml::from_str(text).map_err(|e| ScenarioError::from_toml(file, text, &e))?;
        Validator { file, text }.scenario(raw)
    }

    /// The verdict `[expect]` predicts for `property`, if it names it.
    pub fn expected(&self, property: &str) -> Option<Verdict> {
        self.expect
            .iter()
            .find(|(name, _)| name == property)
            .map(|&(_, verdict)| verdict)
    }

    /// The quorum `N/2 + 1`.
    pub fn quorum(&self) -> usize {
        self.lock.params.quorum()
    }
}

/// Verdicts by property name, in file order.
type Expectations = Vec<(String, Verdict)>;

struct Validator<'a> {
    file: &'a str,
    text: &'a str,
}

impl Validator<'_> {
    fn at<T>(&self, spanned: &Spanned<T>) -> Location {
        Location::of_offset(self.file, self.text, spanned.span().start)
    }

    fn range(
        &self,
        value: &Spanned<u32>,
        min: u32,
        max: u32,
        what: &str,
    ) -> Result<u32, ScenarioError> {
        let v = *value.get_ref();
        if v < min || v > max {
            return Err(ScenarioError::OutOfRange {
                at: self.at(value),
                message: format!("{what} is {v}, but must lie in {min}..={max}"),
            });
        }
        Ok(v)
    }

    /// `[expect]` (or `[simulate.expect]`, where `mechanism` is refused): the verdicts and
    /// the declared mechanism.
    fn expect(
        &self,
        table: &BTreeMap<Spanned<String>, RawExpectValue>,
        has_storage: bool,
        allow_mechanism: bool,
    ) -> Result<(Expectations, Vec<Ingredient>), ScenarioError> {
        let mut expect = Vec::new();
        let mut mechanism = Vec::new();
        for (key, value) in table {
            let property = key.get_ref().as_str();
            let verdict = match (property, value) {
                ("mechanism", RawExpectValue::List(names)) if allow_mechanism => {
                    mechanism = self.mechanism(key, names)?;
                    continue;
                }
                ("mechanism", RawExpectValue::List(_)) => {
                    return Err(ScenarioError::Mechanism {
                        at: self.at(key),
                        message: "the simulator's expectation names properties only; a mechanism belongs in [expect]".to_owned(),
                    });
                }
                ("mechanism", RawExpectValue::Verdict(_)) => {
                    return Err(ScenarioError::Mechanism {
                        at: self.at(key),
                        message: "mechanism is a list of ingredient names, e.g. [\"crash\", \"clock jump\"]".to_owned(),
                    });
                }
                (_, RawExpectValue::Verdict(verdict)) => verdict,
                (_, RawExpectValue::List(_)) => {
                    return Err(ScenarioError::WrongType {
                        at: self.at(key),
                        message: format!(
                            "{property:?} takes \"holds\" or \"violated\", not a list"
                        ),
                    });
                }
            };
            if !property::ALL.contains(&property) {
                return Err(ScenarioError::UnknownProperty {
                    at: self.at(key),
                    name: property.to_owned(),
                    reason: format!("known: {}", property::ALL.join(", ")),
                });
            }
            let needs_storage =
                property == property::STORAGE_SAFETY || property == property::NO_LOST_UPDATE;
            if needs_storage && !has_storage {
                return Err(ScenarioError::UnknownProperty {
                    at: self.at(key),
                    name: property.to_owned(),
                    reason: "a storage property needs a [storage] table".to_owned(),
                });
            }
            expect.push((property.to_owned(), *verdict));
        }
        Ok((expect, mechanism))
    }

    /// `[simulate]`, every value range-checked here so a bad one points at its key.
    fn simulate(
        &self,
        table: &Spanned<RawSimulate>,
        lock: &LockSettings,
        has_storage: bool,
    ) -> Result<SimulateSettings, ScenarioError> {
        let raw = table.get_ref();
        let span = MAX_SIMULATE_SPAN_MS;
        let ms_per_tick = match &raw.ms_per_tick {
            Some(r) => Some(self.range(r, 1, 1_000, "ms_per_tick")?),
            None => None,
        };
        let delay_min_ms = self.opt_range(&raw.delay_min_ms, 1, 1, span, "delay_min_ms")?;
        let delay_max_ms = self.opt_range(
            &raw.delay_max_ms,
            5.max(delay_min_ms),
            delay_min_ms,
            span,
            "delay_max_ms",
        )?;
        let retry_delay_min_ms =
            self.opt_range(&raw.retry_delay_min_ms, 5, 0, span, "retry_delay_min_ms")?;
        let retry_delay_max_ms = self.opt_range(
            &raw.retry_delay_max_ms,
            20.max(retry_delay_min_ms),
            retry_delay_min_ms,
            span,
            "retry_delay_max_ms",
        )?;
        let budget = |b: &Option<Spanned<RawSimFaults>>, what: &str| match b {
            None => Ok(SimulateBudget::default()),
            Some(b) => {
                let b = b.get_ref();
                let count = self.range(&b.count, 0, 1_000, &format!("{what}.count"))?;
                let min_ms = self.opt_range(&b.min_ms, 0, 0, span, &format!("{what}.min_ms"))?;
                let max_ms = self.range(&b.max_ms, min_ms, span, &format!("{what}.max_ms"))?;
                Ok(SimulateBudget {
                    count,
                    min_ms,
                    max_ms,
                })
            }
        };
        let generated = [
            &raw.crashes,
            &raw.isolations,
            &raw.pauses,
            &raw.storage_delays,
            &raw.node_jumps_forward,
            &raw.client_jumps_backward,
        ];
        let faults = match &raw.schedule {
            Some(schedule) => {
                if let Some(budget) = generated.iter().find_map(|b| b.as_ref()) {
                    return Err(ScenarioError::WrongType {
                        at: self.at(budget),
                        message:
                            "[simulate] lists its faults in schedule or budgets them, not both"
                                .to_owned(),
                    });
                }
                let nodes = u32::from(lock.params.node_count);
                let mut listed = Vec::new();
                for entry in schedule.get_ref() {
                    let e = entry.get_ref();
                    let at_ms = self.range(&e.at_ms, 0, MAX_SIMULATE_DURATION_MS, "at_ms")?;
                    let fault = match (&e.crash, &e.jump_node, &e.by_ms, &e.downtime_ms) {
                        (Some(node), None, None, downtime) => SimulateFault::Crash {
                            at_ms,
                            node: self.range(node, 0, nodes - 1, "crash (a node index)")? as u8,
                            downtime_ms: self.opt_range(downtime, 0, 0, span, "downtime_ms")?,
                        },
                        (None, Some(node), Some(by), None) => {
                            let v = *by.get_ref();
                            if v == 0 || v.unsigned_abs() > span {
                                return Err(ScenarioError::OutOfRange {
                                    at: self.at(by),
                                    message: format!(
                                        "by_ms is {v}, but must be nonzero and lie in -{span}..={span}"
                                    ),
                                });
                            }
                            SimulateFault::NodeClockJump {
                                at_ms,
                                node: self.range(node, 0, nodes - 1, "jump_node (a node index)")?
                                    as u8,
                                by_ms: v,
                            }
                        }
                        _ => {
                            return Err(ScenarioError::WrongType {
                                at: self.at(entry),
                                message: "a schedule entry is either crash = <node> (with an optional downtime_ms) or jump_node = <node> with by_ms".to_owned(),
                            });
                        }
                    };
                    listed.push(fault);
                }
                SimulateFaults::Listed(listed)
            }
            None => SimulateFaults::Generated {
                crashes: budget(&raw.crashes, "crashes")?,
                isolations: budget(&raw.isolations, "isolations")?,
                pauses: budget(&raw.pauses, "pauses")?,
                storage_delays: budget(&raw.storage_delays, "storage_delays")?,
                node_jumps_forward: budget(&raw.node_jumps_forward, "node_jumps_forward")?,
                client_jumps_backward: budget(&raw.client_jumps_backward, "client_jumps_backward")?,
            },
        };
        let expect = match &raw.expect {
            Some(table) => self.expect(table.get_ref(), has_storage, false)?.0,
            None => Vec::new(),
        };
        Ok(SimulateSettings {
            ms_per_tick,
            duration_ms: self.opt_range(
                &raw.duration_ms,
                1_000,
                1,
                MAX_SIMULATE_DURATION_MS,
                "duration_ms",
            )?,
            delay_min_ms,
            delay_max_ms,
            loss_per_mille: self.opt_range(&raw.loss_per_mille, 0, 0, 1_000, "loss_per_mille")?,
            clock_rate_error_ppm: match &raw.clock_rate_error_ppm {
                Some(ppm) => Some(self.range(ppm, 0, 500_000, "clock_rate_error_ppm")?),
                None => None,
            },
            clock_offset_max_ms: self.opt_range(
                &raw.clock_offset_max_ms,
                0,
                0,
                span,
                "clock_offset_max_ms",
            )?,
            retry_delay_min_ms,
            retry_delay_max_ms,
            think_max_ms: self.opt_range(&raw.think_max_ms, 20, 0, span, "think_max_ms")?,
            cycles_per_lock: self.opt_range(
                &raw.cycles_per_lock,
                if has_storage { 2 } else { 0 },
                0,
                if has_storage { 100_000 } else { 0 },
                "cycles_per_lock (storage cycles need a [storage] table)",
            )?,
            faults,
            expect,
        })
    }

    fn opt_range(
        &self,
        value: &Option<Spanned<u32>>,
        default: u32,
        min: u32,
        max: u32,
        what: &str,
    ) -> Result<u32, ScenarioError> {
        match value {
            Some(v) => self.range(v, min, max, what),
            None => Ok(default),
        }
    }

    fn kebab(&self, value: &Spanned<String>, what: &str) -> Result<String, ScenarioError> {
        let name = value.get_ref().clone();
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return Err(ScenarioError::OutOfRange {
                at: self.at(value),
                message: format!("{what} {name:?} must be kebab-case: a-z, 0-9 and '-'"),
            });
        }
        Ok(name)
    }

    fn scenario(&self, raw: RawScenario) -> Result<Scenario, ScenarioError> {
        let name = self.kebab(&raw.name, "name")?;
        let aliases = raw
            .aliases
            .iter()
            .map(|alias| self.kebab(alias, "alias"))
            .collect::<Result<Vec<_>, _>>()?;
        let mitigation = match &raw.mitigation {
            Some(m) => Some(Mitigation {
                text: m.text.clone(),
                scenario: m
                    .scenario
                    .as_ref()
                    .map(|name| self.kebab(name, "mitigation scenario"))
                    .transpose()?,
                set: m
                    .set
                    .iter()
                    .map(|(key, value)| (key.clone(), value.to_string()))
                    .collect(),
            }),
            None => None,
        };
        let failover = raw.failover.as_ref().map(|f| FailoverSettings {
            promotion_delay_ticks: f.get_ref().promotion_delay_ticks.unwrap_or(0),
        });
        let mut lock = self.lock(&raw, failover.is_some())?;
        let clock = ClockSettings {
            node_error_ticks: self.opt_range(
                &raw.clock.node_error_ticks,
                0,
                0,
                8,
                "node_error_ticks",
            )?,
            client_error_ticks: self.opt_range(
                &raw.clock.client_error_ticks,
                0,
                0,
                8,
                "client_error_ticks",
            )?,
        };
        let network = self.network(&raw, &lock)?;
        let storage = match &raw.storage {
            None => None,
            Some(s) => {
                let inner = s.get_ref();
                let check_margin_ticks = match &inner.check_margin_ticks {
                    Some(m) => {
                        Some(self.range(m, 1, lock.params.ttl.0 as u32, "check_margin_ticks")?)
                    }
                    None => None,
                };
                let max_delay = inner.max_delay_ticks.map_or(Bound::Ticks(0), Bound::from);
                let protection = match inner.protection.unwrap_or(RawProtection::None) {
                    RawProtection::None => Protection::None,
                    RawProtection::FencingToken => Protection::FencingToken,
                    RawProtection::FencingOnWritesOnly => Protection::FencingOnWritesOnly,
                    RawProtection::RandomTokenCas => Protection::RandomTokenCas,
                };
                let token_source = match inner.token_source.as_ref().map(|t| *t.get_ref()) {
                    None | Some(RawTokenSource::Ideal) => TokenSource::Ideal,
                    Some(RawTokenSource::CounterAfterAcquire) => TokenSource::CounterAfterAcquire,
                    Some(RawTokenSource::LockQuorumMaxOnly) => TokenSource::LockQuorumMaxOnly,
                    Some(RawTokenSource::LockQuorum) => TokenSource::LockQuorum,
                };
                let fenced = matches!(
                    protection,
                    Protection::FencingToken | Protection::FencingOnWritesOnly
                );
                if let Some(source) = &inner.token_source
                    && token_source != TokenSource::Ideal
                    && !fenced
                {
                    return Err(ScenarioError::WrongType {
                        at: self.at(source),
                        message: "token_source needs protection = \"fencing-token\" or \"fencing-on-writes-only\": nothing else reads the token".to_owned(),
                    });
                }
                Some(StorageSettings {
                    protection,
                    token_source,
                    check_margin_ticks,
                    max_delay,
                })
            }
        };
        // The fencing rule is the lock's, but `[storage]` says which token the storage reads.
        lock.params.fencing = storage
            .as_ref()
            .map_or(TokenSource::Ideal, |s| s.token_source)
            .fencing();
        let faults = self.faults(&raw, &lock)?;
        let liveness = LivenessSettings {
            horizon_ticks: self.opt_range(
                &raw.liveness.horizon_ticks,
                3 * lock.params.ttl.0 as u32,
                1,
                200,
                "horizon_ticks",
            )?,
            isolated_rounds: raw.liveness.isolated_rounds.unwrap_or(false),
            client: match &raw.liveness.client {
                Some(c) => Some(
                    self.range(c, 1, u32::from(lock.clients), "liveness client (1-based)")? as u8
                        - 1,
                ),
                None => None,
            },
        };
        let simulate = match &raw.simulate {
            Some(table) => Some(self.simulate(table, &lock, storage.is_some())?),
            None => None,
        };
        let empty = BTreeMap::new();
        let table = raw.expect.as_ref().map_or(&empty, |t| t.get_ref());
        let (expect, mechanism) = self.expect(table, storage.is_some(), true)?;
        if expect.is_empty() && simulate.as_ref().is_none_or(|s| s.expect.is_empty()) {
            let at = match &raw.expect {
                Some(table) => self.at(table),
                None => Location::of_offset(self.file, self.text, 0),
            };
            return Err(ScenarioError::MissingKey {
                at,
                message: "[expect] names no property; add e.g. \"mutual exclusion\" = \"holds\""
                    .to_owned(),
            });
        }
        let scenario = Scenario {
            file: self.file.to_owned(),
            name,
            title: raw.title,
            claim: raw.claim,
            source: raw.source,
            prose: raw.prose,
            lock,
            clock,
            network,
            storage,
            faults,
            failover,
            liveness,
            symmetry: raw.check.symmetry.unwrap_or(true),
            simulate,
            expect,
            mechanism,
            aliases,
            mitigation,
        };
        // A declared ingredient the file does not grant could never be necessary.
        if let Some(absent) = scenario.mechanism.iter().find(|i| !i.is_in(&scenario)) {
            let key = raw
                .expect
                .as_ref()
                .expect("a mechanism was declared in [expect]")
                .get_ref()
                .keys()
                .find(|k| k.get_ref() == "mechanism")
                .expect("a mechanism was declared");
            return Err(ScenarioError::Mechanism {
                at: self.at(key),
                message: format!(
                    "{:?} is not in this scenario (it grants: {})",
                    absent.name(),
                    names_or_none(&Ingredient::present(&scenario))
                ),
            });
        }
        Ok(scenario)
    }

    fn mechanism(
        &self,
        key: &Spanned<String>,
        names: &[String],
    ) -> Result<Vec<Ingredient>, ScenarioError> {
        let mut out = Vec::new();
        for name in names {
            let Some(ingredient) = Ingredient::from_name(name) else {
                let known: Vec<&str> = Ingredient::ALL.iter().map(|i| i.name()).collect();
                return Err(ScenarioError::Mechanism {
                    at: self.at(key),
                    message: format!("unknown ingredient {name:?} (known: {})", known.join(", ")),
                });
            };
            if out.contains(&ingredient) {
                return Err(ScenarioError::Mechanism {
                    at: self.at(key),
                    message: format!("{name:?} is listed twice"),
                });
            }
            out.push(ingredient);
        }
        if out.is_empty() {
            return Err(ScenarioError::Mechanism {
                at: self.at(key),
                message: "the list is empty; leave mechanism out instead".to_owned(),
            });
        }
        Ok(out)
    }

    /// `failover`: whether the file has `[failover]` (which a shared token cannot join).
    fn lock(&self, raw: &RawScenario, failover: bool) -> Result<LockSettings, ScenarioError> {
        let l = &raw.lock;
        let nodes = self.opt_range(&l.nodes, 3, 1, MAX_MODEL_NODES as u32, "nodes")?;
        let clients = self.opt_range(&l.clients, 2, 1, MAX_MODEL_CLIENTS as u32, "clients")?;
        let ttl_ticks = self.opt_range(&l.ttl_ticks, 10, 1, 60, "ttl_ticks")?;
        let drift_ticks = self.opt_range(&l.drift_ticks, 1, 0, 60, "drift_ticks")?;
        if ttl_ticks <= drift_ticks {
            let at = match (&l.ttl_ticks, &l.drift_ticks) {
                (Some(t), _) => self.at(t),
                (None, Some(d)) => self.at(d),
                (None, None) => self.at(&raw.name),
            };
            return Err(ScenarioError::TtlNotAboveDrift {
                at,
                ttl_ticks,
                drift_ticks,
            });
        }
        let round_timeout_ticks =
            self.opt_range(&l.round_timeout_ticks, 1, 1, 60, "round_timeout_ticks")?;
        let attempts = self.opt_range(&l.attempts, 1, 1, 4, "attempts")?;
        let retry_delay_ticks =
            self.opt_range(&l.retry_delay_ticks, 0, 0, 60, "retry_delay_ticks")?;
        let extensions = match &l.extensions {
            None => 0,
            Some(e) => match *e.get_ref() {
                RawBound::Unbounded => UNBOUNDED_EXTENSIONS,
                RawBound::Ticks(n) if n > 3 => {
                    return Err(ScenarioError::OutOfRange {
                        at: self.at(e),
                        message: format!(
                            "extensions is {n}, but must lie in 0..=3, or be \"unbounded\""
                        ),
                    });
                }
                RawBound::Ticks(n) => n as u8,
            },
        };
        let token = l.token.as_ref().map_or(Tokens::Unique, |t| *t.get_ref());
        if let Some(at) = l
            .token
            .as_ref()
            .filter(|_| failover && token == Tokens::Shared)
        {
            // The replica's key is told by its token alone, which a shared value no longer
            // ties to one client.
            return Err(ScenarioError::OutOfRange {
                at: self.at(at),
                message: "token = \"shared\" cannot be combined with [failover]".to_owned(),
            });
        }
        let config = Config {
            drift: DriftPolicy::fixed(Millis(u64::from(drift_ticks))),
            round_timeout: Millis(u64::from(round_timeout_ticks)),
            // The least back-off: the model lets time pass between any two steps, which
            // covers every longer delay (the simulator draws its own).
            retry: RetryPolicy {
                attempts,
                delay_min: Millis(u64::from(retry_delay_ticks)),
                delay_max: Millis(u64::from(retry_delay_ticks)),
            },
            unlock: match l.unlock.unwrap_or(RawUnlock::CompareAndDelete) {
                RawUnlock::CompareAndDelete => UnlockMode::CompareAndDelete,
                RawUnlock::Del => UnlockMode::PlainDel,
            },
            validity_check: if l.validity_check.unwrap_or(true) {
                ValidityCheck::On
            } else {
                ValidityCheck::Off
            },
            decision: match l.decision.unwrap_or(RawDecision::AtQuorum) {
                RawDecision::AtQuorum => RoundDecision::AtQuorum,
                RawDecision::AllReplies => RoundDecision::AllReplies,
            },
            extension_quorum: match l.extension_quorum.unwrap_or(RawExtensionQuorum::Majority) {
                RawExtensionQuorum::Majority => ExtensionQuorum::Majority,
                RawExtensionQuorum::AnyNode => ExtensionQuorum::AnyNode,
            },
            ..Config::new(nodes as usize)
        };
        // The one resolution of the lock configuration, by the core's own rules.
        let params = config
            .params(Millis(u64::from(ttl_ticks)))
            .map_err(|reason| ScenarioError::Lock {
                at: self.at(&raw.name),
                reason: reason.to_string(),
            })?;
        Ok(LockSettings {
            params,
            clients: clients as u8,
            extensions,
            token,
        })
    }

    fn network(
        &self,
        raw: &RawScenario,
        lock: &LockSettings,
    ) -> Result<NetworkSettings, ScenarioError> {
        let all = NodeSet::first(lock.nodes());
        let mut reach = vec![all; lock.clients as usize];
        if let Some(spanned) = &raw.network.reach {
            let lists = spanned.get_ref();
            if lists.len() != lock.clients as usize {
                return Err(ScenarioError::TooManyFaults {
                    at: self.at(spanned),
                    message: format!(
                        "reach lists {} clients, but there are {}: give one list of nodes per client",
                        lists.len(),
                        lock.clients
                    ),
                });
            }
            for (client, list) in lists.iter().enumerate() {
                let mut set = NodeSet::EMPTY;
                for node in list.get_ref() {
                    let n = self.range(
                        node,
                        1,
                        u32::from(lock.params.node_count),
                        "a node in reach (1-based)",
                    )?;
                    set.insert(NodeId(n as u8 - 1));
                }
                reach[client] = set;
            }
        }
        let message_loss = self.opt_range(&raw.network.message_loss, 0, 0, 4, "message_loss")?;
        Ok(NetworkSettings {
            reach,
            message_loss: message_loss as u8,
        })
    }

    fn faults(
        &self,
        raw: &RawScenario,
        lock: &LockSettings,
    ) -> Result<FaultSettings, ScenarioError> {
        let f = &raw.faults;
        let pauses = match &f.pauses {
            None => None,
            Some(p) => Some(PauseSettings {
                count: self.opt_range(&p.count, 1, 0, 3, "pauses.count")? as u8,
                max: p.max_ticks.map_or(Bound::Unbounded, Bound::from),
            }),
        };
        let clock_jumps = match &f.clock_jumps {
            None => None,
            Some(j) => {
                let count = self.opt_range(&j.count, 1, 0, 3, "clock_jumps.count")?;
                let target = j.target.unwrap_or(JumpTarget::Any);
                let size = *j.jump_ticks.get_ref();
                if size == 0 || size.unsigned_abs() > 60 {
                    return Err(ScenarioError::OutOfRange {
                        at: self.at(&j.jump_ticks),
                        message: format!(
                            "jump_ticks is {size}, but must be nonzero and within ±60"
                        ),
                    });
                }
                let index = match (&j.index, target) {
                    (None, _) => None,
                    (Some(i), JumpTarget::Node) => Some(
                        self.range(
                            i,
                            1,
                            u32::from(lock.params.node_count),
                            "clock_jumps.index (a node, 1-based)",
                        )? as u8
                            - 1,
                    ),
                    (Some(i), JumpTarget::Client) => Some(
                        self.range(
                            i,
                            1,
                            lock.clients as u32,
                            "clock_jumps.index (a client, 1-based)",
                        )? as u8
                            - 1,
                    ),
                    (Some(i), JumpTarget::Any) => {
                        return Err(ScenarioError::TooManyFaults {
                            at: self.at(i),
                            message: "clock_jumps.index pins a jump to one process; set target = \"node\" or \"client\" with it".to_owned(),
                        });
                    }
                };
                Some(JumpSettings {
                    count: count as u8,
                    target,
                    index,
                    jump_ticks: size,
                })
            }
        };
        let crashes = match &f.crashes {
            None => None,
            Some(c) => {
                let count = self.opt_range(&c.count, 1, 0, 3, "crashes.count")?;
                if count > u32::from(lock.params.node_count) {
                    return Err(ScenarioError::TooManyFaults {
                        at: self.at(c.count.as_ref().expect("a count above 1 was written")),
                        message: format!("{count} crashes is more than the {} nodes", lock.nodes()),
                    });
                }
                Some(CrashSettings {
                    count: count as u8,
                    persistence: match c.persistence.unwrap_or(RawPersistence::None) {
                        RawPersistence::None => Persistence::None,
                        RawPersistence::FsyncAlways => Persistence::FsyncAlways,
                        RawPersistence::FsyncPeriodic => Persistence::FsyncPeriodic,
                    },
                    restart_delay_ticks: self.opt_range(
                        &c.restart_delay_ticks,
                        0,
                        0,
                        60,
                        "restart_delay_ticks",
                    )?,
                    restart: c.restart.unwrap_or(true),
                    client_guard_ticks: self.opt_range(
                        &c.client_guard_ticks,
                        0,
                        0,
                        60,
                        "client_guard_ticks",
                    )?,
                })
            }
        };
        let client_crashes = match &f.client_crashes {
            None => None,
            Some(c) => {
                let count = self.opt_range(&c.count, 1, 0, 3, "client_crashes.count")?;
                if count > u32::from(lock.clients) {
                    return Err(ScenarioError::TooManyFaults {
                        at: self.at(c.count.as_ref().expect("a count above 1 was written")),
                        message: format!(
                            "{count} client crashes is more than the {} clients",
                            lock.clients
                        ),
                    });
                }
                Some(ClientCrashSettings { count: count as u8 })
            }
        };
        Ok(FaultSettings {
            pauses,
            clock_jumps,
            crashes,
            client_crashes,
        })
    }
}

fn names_or_none(ingredients: &[Ingredient]) -> String {
    if ingredients.is_empty() {
        return "none".to_owned();
    }
    let names: Vec<&str> = ingredients.iter().map(|i| i.name()).collect();
    names.join(", ")
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Source::Seed => "seed",
            Source::Derived => "derived",
            Source::RedisIo => "redis.io",
            Source::Kleppmann => "Kleppmann",
            Source::Antirez => "antirez",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str =
        "name = \"x\"\ntitle = \"t\"\nclaim = \"c\"\nsource = \"seed\"\nprose = \"p\"\n";

    fn parse(body: &str) -> Result<Scenario, ScenarioError> {
        Scenario::from_str("s.toml", &format!("{HEADER}{body}"))
    }

    #[test]
    fn defaults_follow_the_catalog_conventions() {
        let s = parse("[expect]\n\"mutual exclusion\" = \"holds\"\n").unwrap();
        assert_eq!(
            (
                s.lock.nodes(),
                s.lock.clients,
                s.lock.params.ttl,
                s.lock.params.drift
            ),
            (3, 2, Millis(10), Millis(1))
        );
        assert_eq!(s.network.reach, vec![NodeSet::first(3); 2]);
        assert_eq!(s.liveness.horizon_ticks, 30);
        assert!(s.symmetry && s.storage.is_none() && s.faults == FaultSettings::default());
    }

    #[test]
    fn the_lock_settings_resolve_once_into_the_cores_configuration() {
        let s = parse(
            "[lock]\nnodes = 5\nttl_ticks = 6\ndrift_ticks = 2\nround_timeout_ticks = 9\nattempts = 3\nunlock = \"del\"\nvalidity_check = false\ndecision = \"all-replies\"\nextensions = 1\nextension_quorum = \"any-node\"\n[expect]\n\"mutual exclusion\" = \"holds\"\n",
        )
        .unwrap();
        let params = s.lock.params;
        assert_eq!(params.node_count, 5);
        assert_eq!(params.retry.attempts, 3);
        assert_eq!(
            params.retry.delay_max,
            Millis::ZERO,
            "the model explores every delay"
        );
        assert_eq!(params.unlock, UnlockMode::PlainDel);
        assert_eq!(params.validity_check, ValidityCheck::Off);
        assert_eq!(params.decision, RoundDecision::AllReplies);
        assert_eq!(params.extension_quorum, ExtensionQuorum::AnyNode);
        assert_eq!(params.fencing, crate::proto::Fencing::Off, "no [storage]");
        // The core caps the round timeout at ttl − drift.
        assert_eq!(
            (params.ttl, params.drift, params.round_timeout),
            (Millis(6), Millis(2), Millis(4))
        );
        assert_eq!(params.quorum(), 3);
    }

    #[test]
    fn the_decision_and_the_client_guard_are_read_and_checked() {
        let s = parse("[expect]\n\"mutual exclusion\" = \"holds\"\n").unwrap();
        assert_eq!(
            s.lock.params.decision,
            RoundDecision::AtQuorum,
            "the core's default"
        );
        let s = parse(
            "[lock]\ndecision = \"all-replies\"\n[faults.crashes]\nclient_guard_ticks = 3\n\
             [expect]\n\"mutual exclusion\" = \"holds\"\n",
        )
        .unwrap();
        assert_eq!(s.lock.params.decision, RoundDecision::AllReplies);
        assert_eq!(s.faults.crashes.unwrap().client_guard_ticks, 3);
        assert!(
            parse("[lock]\ndecision = \"later\"\n[expect]\n\"mutual exclusion\" = \"holds\"\n")
                .is_err()
        );
        let e = parse(
            "[faults.crashes]\nclient_guard_ticks = 61\n[expect]\n\"mutual exclusion\" = \"holds\"\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("client_guard_ticks"), "{e}");
    }

    #[test]
    fn tokens_client_crashes_and_retry_delays_are_read_and_checked() {
        let s = parse("[expect]\n\"mutual exclusion\" = \"holds\"\n").unwrap();
        assert_eq!(
            (
                s.lock.token,
                s.faults.client_crashes,
                s.lock.params.retry.delay_min
            ),
            (Tokens::Unique, None, Millis::ZERO)
        );
        let s = parse(
            "[lock]\ntoken = \"shared\"\nretry_delay_ticks = 3\n[faults.client_crashes]\n\
             [expect]\n\"mutual exclusion\" = \"holds\"\n",
        )
        .unwrap();
        assert_eq!(s.lock.token, Tokens::Shared);
        assert_eq!(
            s.faults.client_crashes,
            Some(ClientCrashSettings { count: 1 })
        );
        assert_eq!(s.lock.params.retry.delay_min, Millis(3));
        let e = parse(
            "[lock]\nclients = 2\n[faults.client_crashes]\ncount = 3\n\
             [expect]\n\"mutual exclusion\" = \"holds\"\n",
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("s.toml:9:9: "), "{e}");
        assert!(e.to_string().contains("more than the 2 clients"), "{e}");
        let e = parse(
            "[lock]\nnodes = 1\ntoken = \"shared\"\n[failover]\n\
             [expect]\n\"mutual exclusion\" = \"holds\"\n",
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("s.toml:8:9: "), "{e}");
        let e = parse("[lock]\ntoken = \"random\"\n[expect]\n\"mutual exclusion\" = \"holds\"\n")
            .unwrap_err();
        assert!(e.to_string().contains("s.toml:7:"), "{e}");
        let e =
            parse("[lock]\nretry_delay_ticks = 61\n[expect]\n\"mutual exclusion\" = \"holds\"\n")
                .unwrap_err();
        assert!(e.to_string().contains("retry_delay_ticks"), "{e}");
    }

    #[test]
    fn unbounded_extensions_and_the_liveness_client_are_read_and_checked() {
        let s = parse(
            "[lock]\nextensions = \"unbounded\"\n[liveness]\nclient = 2\n\
             [expect]\n\"mutual exclusion\" = \"holds\"\n",
        )
        .unwrap();
        assert_eq!(s.lock.extensions, UNBOUNDED_EXTENSIONS);
        assert_eq!(s.liveness.client, Some(1));
        let e = parse("[lock]\nextensions = 4\n[expect]\n\"mutual exclusion\" = \"holds\"\n")
            .unwrap_err();
        assert!(e.to_string().starts_with("s.toml:7:14: "), "{e}");
        assert!(e.to_string().contains("\"unbounded\""), "{e}");
        let e = parse("[liveness]\nclient = 3\n[expect]\n\"mutual exclusion\" = \"holds\"\n")
            .unwrap_err();
        assert!(e.to_string().starts_with("s.toml:7:10: "), "{e}");
    }

    #[test]
    fn failover_may_replicate_one_of_several_nodes() {
        let s = parse(
            "[lock]\nnodes = 3\n[failover]\npromotion_delay_ticks = 3\n\
             [expect]\n\"mutual exclusion\" = \"holds\"\n",
        )
        .unwrap();
        assert_eq!(
            (s.lock.nodes(), s.failover.map(|f| f.promotion_delay_ticks)),
            (3, Some(3))
        );
    }

    #[test]
    fn errors_point_at_the_offending_text() {
        let e = parse(
            "[lock]\nttl_ticks = 2\ndrift_ticks = 2\n[expect]\n\"mutual exclusion\" = \"holds\"\n",
        )
        .unwrap_err();
        assert!(matches!(e, ScenarioError::TtlNotAboveDrift { .. }), "{e}");
        assert_eq!(e.location().unwrap().line, 7);
        let e =
            parse("[lock]\nnodez = 3\n[expect]\n\"mutual exclusion\" = \"holds\"\n").unwrap_err();
        assert!(matches!(e, ScenarioError::UnknownKey { .. }), "{e}");
        assert!(e.to_string().starts_with("s.toml:7:1: unknown key"), "{e}");
    }

    #[test]
    fn a_simulate_table_is_parsed_and_may_stand_in_for_expect() {
        let s = parse(
            "[lock]\nnodes = 3\n[simulate]\nms_per_tick = 2\nduration_ms = 500\nloss_per_mille = 100\npauses = { count = 2, min_ms = 1, max_ms = 60 }\n[simulate.expect]\n\"mutual exclusion\" = \"holds\"\n",
        )
        .unwrap();
        assert!(s.expect.is_empty());
        let simulate = s.simulate.unwrap();
        assert_eq!(simulate.ms_per_tick, Some(2));
        assert_eq!((simulate.duration_ms, simulate.loss_per_mille), (500, 100));
        let SimulateFaults::Generated {
            pauses, crashes, ..
        } = simulate.faults
        else {
            panic!("budgets, not a schedule");
        };
        assert_eq!(
            (pauses, crashes),
            (
                SimulateBudget {
                    count: 2,
                    min_ms: 1,
                    max_ms: 60
                },
                SimulateBudget::default()
            )
        );
        assert_eq!(
            simulate.expect,
            vec![("mutual exclusion".to_owned(), Verdict::Holds)]
        );
        // Without either expectation the file is refused.
        let e = parse("[simulate]\nduration_ms = 500\n").unwrap_err();
        assert!(e.to_string().starts_with("s.toml:1:1:"), "{e}");
    }

    #[test]
    fn bad_simulate_values_point_at_their_key() {
        let e = parse("[simulate]\ndelay_mn_ms = 1\n[expect]\n\"mutual exclusion\" = \"holds\"\n")
            .unwrap_err();
        assert!(e.to_string().starts_with("s.toml:7:1: unknown key"), "{e}");
        let e = parse(
            "[simulate]\nloss_per_mille = 1001\n[expect]\n\"mutual exclusion\" = \"holds\"\n",
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("s.toml:7:18:"), "{e}");
        assert!(e.to_string().contains("loss_per_mille is 1001"), "{e}");
        let e = parse("[lock]\nnodes = 3\n[simulate]\n[[simulate.schedule]]\nat_ms = 5\ncrash = 3\n[expect]\n\"mutual exclusion\" = \"holds\"\n")
            .unwrap_err();
        assert!(e.to_string().starts_with("s.toml:11:9:"), "{e}");
        let e = parse("[simulate]\npauses = { count = 1, max_ms = 5 }\n[[simulate.schedule]]\nat_ms = 5\ncrash = 0\n[expect]\n\"mutual exclusion\" = \"holds\"\n")
            .unwrap_err();
        assert!(e.to_string().contains("not both"), "{e}");
        let e = parse("[simulate.expect]\n\"no lost update\" = \"holds\"\n").unwrap_err();
        assert!(e.to_string().contains("[storage]"), "{e}");
    }
}
