//! What a validated scenario says: the lock, clocks, network, storage, faults, failover,
//! liveness and expectations, as the model and the bridge read them.

use serde::{Deserialize, Serialize};

use crate::fault::ClientFaultAim;
use crate::node::Persistence;
use crate::proto::{LockParams, NodeSet, quorum};
use crate::sim::{FaultPlan, NetworkConfig};
use crate::storage::{CheckAndApply, Protection, TokenSource};
use crate::time::Millis;

use super::ingredient::Ingredient;

/// The most nodes a model may have (the state keeps fixed-size arrays).
pub const MAX_MODEL_NODES: usize = 7;
/// The most clients a model may have.
pub const MAX_MODEL_CLIENTS: usize = 3;

/// [`LockSettings::extensions`] for `extensions = "unbounded"`: a holder may extend as often
/// as it likes. The model does not count such extensions, so the state space stays finite.
pub const UNBOUNDED_EXTENSIONS: u8 = u8::MAX;

/// The largest count of ticks a timing key may hold: a TTL, drift, round timeout, retry delay,
/// clock jump, restart delay, guard or clock error (about 16 minutes at 1 ms a tick). The
/// discrete engine explores constants up to [`crate::check::DISCRETE_TICKS`]; the zone engine
/// (`src/zones/`) any of these.
pub const MAX_TICKS: u32 = 1_000_000;

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

/// A sentence a scenario quotes from one of its sources (`quote`, and `builds_on` for a
/// `derived` claim).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Citation {
    /// Whose sentence it is: never [`Source::Derived`].
    pub source: Source,
    /// The sentence, as the file spells it. A [`Source::Seed`] quote is checked verbatim
    /// against the seed article by `tests/sources.rs`; the other sources are not at hand
    /// offline, so only their presence is checked.
    pub quote: String,
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

/// What token values the clients draw (file values `"unique"`, `"shared"`, `"reused"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tokens {
    /// Every acquisition draws its own value, as a random source does: correct.
    Unique,
    /// Every client draws the same value (a hard-coded token, or a random source seeded alike
    /// in every process): compare-and-delete can no longer tell the clients' keys apart.
    Shared,
    /// Every client draws one value and keeps it for all its attempts (a value drawn once per
    /// lock object rather than once per round): a late release of a failed round matches the
    /// keys of the client's next round.
    Reused,
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

/// `[lock]`: the Redlock configuration every client uses, resolved once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockSettings {
    /// The lock every client runs, as the core resolves it at validation (one tick being one
    /// millisecond): `nodes` (1..=7; default 3), `ttl_ticks` (default 10), `drift_ticks` (a
    /// fixed allowance; default 1), `round_timeout_ticks` (default 1, capped at `ttl − drift`
    /// by the core), `attempts` (rounds per acquisition, the first included; default 1) with
    /// `retry_delay_ticks` (the least back-off; default 0, and the model lets every longer one
    /// happen too), `unlock`, `validity_check`, `release_after_failed_round`, `decision`, `contact`,
    /// `extension_quorum`, and the
    /// fencing rule that `[storage] token_source` asks for. The model runs it as it is and
    /// the simulator scales its spans; nothing resolves it again. With one quorum per client
    /// (`client_quorums`) its quorum is the first client's: read a client's lock with
    /// [`client_params`](LockSettings::client_params).
    pub params: LockParams,
    /// `[lock] quorum` as an array of values that differ: per client, the number of nodes its
    /// rounds must win (each already checked against `N`). Empty when one quorum, the one in
    /// `params`, applies to every client (an array of equal values is that one value).
    pub client_quorums: Vec<u8>,
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

    /// The lock client `client` (0-based) runs: `params` with that client's own quorum.
    pub fn client_params(&self, client: usize) -> LockParams {
        let mut params = self.params;
        if let Some(&q) = self.client_quorums.get(client) {
            params.quorum = (usize::from(q) != quorum(self.nodes())).then_some(q);
        }
        params
    }

    /// Whether the clients' quorums differ (`[lock] quorum = [3, 2]`): the clients are then
    /// not interchangeable, which the symmetry reduction and the cutoffs must respect.
    pub fn quorums_differ(&self) -> bool {
        !self.client_quorums.is_empty()
    }

    /// Whether some client's quorum is not the majority `N/2 + 1`.
    pub fn quorum_pinned(&self) -> bool {
        self.params.quorum.is_some() || self.quorums_differ()
    }

    /// Each client's quorum, in client order.
    pub fn quorums(&self) -> Vec<usize> {
        (0..usize::from(self.clients))
            .map(|c| self.client_params(c).quorum())
            .collect()
    }

    /// The same lock with each client's quorum (one value per client, each within `1..=N`):
    /// equal values are the one quorum of `params`, values that differ go to
    /// `client_quorums`. A quorum pinned to the majority is the default: only another value
    /// is a choice.
    pub(crate) fn with_quorums(mut self, quorums: &[usize]) -> LockSettings {
        self.set_quorums(quorums);
        self
    }

    /// [`with_quorums`](LockSettings::with_quorums) in place.
    pub(crate) fn set_quorums(&mut self, quorums: &[usize]) {
        let majority = quorum(self.nodes());
        let first = quorums.first().copied().unwrap_or(majority);
        self.params.quorum = (first != majority).then_some(first as u8);
        self.client_quorums = if quorums.iter().all(|&q| q == first) {
            Vec::new()
        } else {
            quorums.iter().map(|&q| q as u8).collect()
        };
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
    /// Whether the storage checks an op and applies it in one atomic step (the default), or
    /// in two, with other ops free to run in between.
    pub check: CheckAndApply,
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
    /// The sizes: positive forward, negative backward.
    pub jump_ticks: JumpTicks,
}

/// `[faults.clock_jumps] jump_ticks`: the sizes a run's jumps may take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JumpTicks {
    /// `jump_ticks = 2`: every jump of the run is this size.
    Every(i32),
    /// `jump_ticks = [1, 2]`: each jump takes one of these distinct sizes, each at most once,
    /// in any order (at most three, as a run has at most three jumps).
    EachOnce(Vec<i32>),
}

impl JumpTicks {
    /// Every size a jump may take.
    pub fn sizes(&self) -> &[i32] {
        match self {
            JumpTicks::Every(size) => std::slice::from_ref(size),
            JumpTicks::EachOnce(sizes) => sizes,
        }
    }

    /// The one size of every jump, unless the file lists several.
    pub fn single(&self) -> Option<i32> {
        match self {
            JumpTicks::Every(size) => Some(*size),
            JumpTicks::EachOnce(_) => None,
        }
    }

    /// The largest step in either direction.
    pub fn largest(&self) -> u32 {
        self.sizes()
            .iter()
            .map(|s| s.unsigned_abs())
            .max()
            .unwrap_or(0)
    }
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
    pub client_crashes: Option<ClientFaultSettings>,
    /// Clients cut off from every node (`[faults.client_partitions]`), counted and aimed as
    /// client crashes are.
    pub client_partitions: Option<ClientFaultSettings>,
}

/// `[faults.client_crashes]`: a client process dies for good, wherever its aim allows in its
/// lock's life. It sends nothing more (no unlock), believes nothing more, and its keys stay on
/// the nodes until they expire; requests it sent before dying still arrive.
///
/// `[faults.client_partitions]` has the same keys and meaning of `count`, `client` and `when`,
/// but the client does not die: it is cut off from every node for good and keeps running on
/// what it believes. Its requests not yet landed are lost with the link, and everything it
/// sends from then on reaches no node, its unlock included, as a static `[network] reach` that
/// leaves every node out would.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientFaultSettings {
    /// How many of the table's faults in the whole run (default 1 when the table is present).
    pub count: u8,
    /// Which client the fault may strike (`client`, 1-based in the file) and when (`when`);
    /// by default any client at any point before it is done.
    pub aim: ClientFaultAim,
}

/// `[failover]`: node n1 is a master with one or more asynchronously replicated replicas, one
/// of which is promoted when the master fails. With `nodes = 1` it is the single-master
/// baseline; with more, n1 is one Redlock node that fails over inside itself, next to
/// independent masters. With `every_node`, every node is such a master with one replica of
/// its own: a Redlock over the shards of a Redis Cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailoverSettings {
    /// The promoted replica refuses requests for this many ticks (default 0).
    pub promotion_delay_ticks: u32,
    /// How many replicas n1 has (`1..=MAX_REPLICAS`, default 1); each copies the master's key
    /// on its own, and the failover may promote any one of them. With `every_node`, 1.
    pub replicas: u8,
    /// Every node has a replica of its own, not n1 alone (default false).
    pub every_node: bool,
    /// How many nodes may fail over in one run (default 1; more only with `every_node`, at
    /// most one per node).
    pub failovers: u8,
    /// How many replicas must have the key before the master answers a write (`WAIT k`
    /// after every write; default 0: every replica copies asynchronously). The file's
    /// `wait = true` is 1, `false` is 0.
    pub wait: u8,
}

/// The most replicas `[failover] replicas` may give n1: two already show the difference
/// between waiting for some replicas and waiting for all, and every replica is one more
/// copy of the key in every model state.
pub const MAX_REPLICAS: usize = 2;

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

/// `[simulate]`: the simulator's own world for a scenario, which the model checker ignores.
///
/// Presence makes the simulator run a long workload instead of the model's one acquisition per
/// client: clients lock, work on the storage and release again and again for `duration_ms`,
/// with the faults listed here (and only those). Its spans are milliseconds of the simulator,
/// not ticks, read into the simulator's own types; `ms_per_tick` is the resolution the
/// scenario's own tick keys are read at. `SimConfig::from_scenario_at` (module `bridge`)
/// documents the mapping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimulateSettings {
    /// Simulated ms per tick of the scenario's keys, when the file fixes it (the CLI's default).
    pub ms_per_tick: Option<u32>,
    /// How long a run lasts in true time (`duration_ms`, default 1 000 ms).
    pub duration: Millis,
    /// `delay_min_ms` (default 1 ms), `delay_max_ms` (default 5 ms) and `loss_per_mille`, the
    /// chance that a lock message is lost (default 0).
    pub network: NetworkConfig,
    /// Every clock's rate error bound in parts per million; `None`: from `[clock]`.
    pub clock_rate_error_ppm: Option<u32>,
    /// Clock offsets are drawn from `0..=clock_offset_max_ms` (default 0).
    pub clock_offset_max: Millis,
    /// The shortest retry delay between rounds (`retry_delay_min_ms`, default 5 ms).
    pub retry_delay_min: Millis,
    /// The longest retry delay between rounds (`retry_delay_max_ms`, default 20 ms).
    pub retry_delay_max: Millis,
    /// A client idles up to this long between locks (`think_max_ms`, default 20 ms).
    pub think_max: Millis,
    /// Read-modify-write cycles per lock (default 2; 0 without `[storage]`).
    pub cycles_per_lock: u32,
    /// The faults of each run: budgets drawn from its seed ([`FaultPlan::Generated`], only the
    /// six classes a file may budget), or `[[simulate.schedule]]` ([`FaultPlan::Explicit`]).
    pub faults: FaultPlan,
    /// What the simulator's runs are expected to show, property by property: `violated` where
    /// some seed reaches a violation, `holds` where no seed may.
    pub expect: Vec<(String, Verdict)>,
}

/// A validated scenario: everything needed to build the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scenario {
    /// The file name (or the name given when loading from a string).
    pub file: String,
    /// Short kebab-case id (a file without `name` is named after its file: `my-deploy`).
    pub name: String,
    /// One-line title (empty when the file has none: only the catalog must have one).
    pub title: String,
    /// The claim under test (empty when the file states none).
    pub claim: String,
    /// Who made the claim ([`Source::Derived`] when the file names no source).
    pub source: Source,
    /// The sentence the claim rests on and whose it is: the source's own for a claim it makes,
    /// the statement a `derived` claim builds on, or `None` for a derivation that builds on no
    /// stated sentence.
    pub citation: Option<Citation>,
    /// Teaching prose (empty when the file has none).
    pub prose: String,
    /// One line for the scenario table of `docs/scenarios.md` (`tests/readme.rs` writes it): what the
    /// checker's run shows, the gist of the shortest counterexample or why the property holds.
    pub summary: Option<String>,
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
    /// How long one tick lasts, when the file writes its time keys as durations or sets
    /// `resolution` (`models/README.md` states the rule); `None`: abstract ticks.
    pub resolution: Option<Millis>,
    /// `[simulate]`, if any: ignored by the model checker.
    pub simulate: Option<SimulateSettings>,
    /// `[expect]`, in file order sorted by name; empty only in a file whose checker verdicts
    /// are unknown and whose `[simulate]` carries an expectation instead.
    pub expect: Vec<(String, Verdict)>,
    /// `[expect] mechanism`: the ingredients the scenario teaches, exactly those some violated
    /// property needs, each in the shortest counterexample of a property that needs it
    /// ([`crate::cause::mechanism_problems`], checked by the catalog tests, never assumed).
    /// Empty when the file declares none.
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
    /// as TOML (`"lock-quorum"`, `3`), in key order. Applied by [`patched`](crate::scenario::patched); empty when absent.
    pub set: Vec<(String, String)>,
}

impl Scenario {
    /// The verdict `[expect]` predicts for `property`, if it names it.
    pub fn expected(&self, property: &str) -> Option<Verdict> {
        self.expect
            .iter()
            .find(|(name, _)| name == property)
            .map(|&(_, verdict)| verdict)
    }

    /// The first client's quorum: `N/2 + 1` unless `[lock] quorum` pins another.
    pub fn quorum(&self) -> usize {
        self.lock.params.quorum()
    }

    /// The milliseconds one tick lasts when the file says: `[simulate] ms_per_tick`, else the
    /// length of a tick of a file written in real units (so such a file simulates at its own
    /// scale), else `None`.
    pub fn ms_per_tick(&self) -> Option<u64> {
        let simulate = self.simulate.as_ref().and_then(|s| s.ms_per_tick);
        simulate
            .map(u64::from)
            .or(self.resolution.map(Millis::as_u64))
    }
}

/// Verdicts by property name, in file order.
pub(super) type Expectations = Vec<(String, Verdict)>;

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
