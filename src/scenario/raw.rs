//! The file format as serde sees it: every table refuses unknown keys, and every value that a
//! later check may refuse keeps its byte span so the error can point at it.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::de::value::SeqAccessDeserializer;
use serde::de::{Error as _, SeqAccess, Unexpected, Visitor};
use serde_untagged::UntaggedEnumVisitor;
use serde_untagged::de::Error;
use toml::Spanned;

use super::{Bound, JumpTarget, Source, Verdict};

/// An integer key's value as a `T`, or serde's own "invalid value: integer `v`" refusal naming
/// what `expecting` wanted, whatever width toml hands the integer over in.
fn integer<T: TryFrom<i128>>(v: impl Into<i128>, expecting: &str) -> Result<T, Error> {
    let v = v.into();
    T::try_from(v)
        .map_err(|_| Error::invalid_value(Unexpected::Other(&format!("integer `{v}`")), &expecting))
}

/// A key that takes one kind of value or another: serde-untagged's visitor `one` takes the
/// single values (a bool, an integer, a string), [`OneOf::or_array`] an array, and any other kind
/// gets serde's own "invalid type" refusal naming what `one` expects.
///
/// The array and the other kinds are not left to serde-untagged: its `.seq` hands an element's
/// error on as text without the element's span (the refusal would point at the array's `[`), and
/// it calls an integer past `u64` "as u128" where serde says "as i128".
struct OneOf<'c, 'de, T, L = ()> {
    one: UntaggedEnumVisitor<'c, 'de, T>,
    array: Option<fn(Vec<L>) -> T>,
}

impl<'c, 'de, T> OneOf<'c, 'de, T> {
    fn new(one: UntaggedEnumVisitor<'c, 'de, T>) -> Self {
        OneOf { one, array: None }
    }

    /// Takes an array too, each element read as an `L` with its own span.
    fn or_array<L>(self, array: fn(Vec<L>) -> T) -> OneOf<'c, 'de, T, L> {
        OneOf {
            one: self.one,
            array: Some(array),
        }
    }
}

impl<'de, T, L: Deserialize<'de>> Visitor<'de> for OneOf<'_, 'de, T, L> {
    type Value = T;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        Visitor::expecting(&self.one, f)
    }
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<T, E> {
        self.one.visit_bool(v)
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<T, E> {
        self.one.visit_i64(v)
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<T, E> {
        self.one.visit_u64(v)
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<T, E> {
        self.one.visit_str(v)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        match self.array {
            Some(array) => Vec::deserialize(SeqAccessDeserializer::new(seq)).map(array),
            None => Err(A::Error::invalid_type(Unexpected::Seq, &self)),
        }
    }
}

/// Either a number (of ticks, or of extensions) or the word `"unbounded"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RawBound {
    Ticks(u32),
    Unbounded,
}

impl<'de> Deserialize<'de> for RawBound {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        const EXPECTING: &str = "a number or \"unbounded\"";
        let one = UntaggedEnumVisitor::new()
            .expecting(EXPECTING)
            .i64(|v| integer(v, EXPECTING).map(RawBound::Ticks))
            .u64(|v| integer(v, EXPECTING).map(RawBound::Ticks))
            .string(|v| match v {
                "unbounded" => Ok(RawBound::Unbounded),
                _ => Err(Error::invalid_value(Unexpected::Str(v), &EXPECTING)),
            });
        deserializer.deserialize_any(OneOf::new(one))
    }
}

/// `[lock] quorum`: one count for every client, or an array of one count per client, each
/// with its span.
#[derive(Debug)]
pub(crate) enum RawQuorum {
    One(u32),
    PerClient(Vec<Spanned<u32>>),
}

impl<'de> Deserialize<'de> for RawQuorum {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        const EXPECTING: &str = "a number, or an array of one number per client";
        let one = UntaggedEnumVisitor::new()
            .expecting(EXPECTING)
            .i64(|v| integer(v, EXPECTING).map(RawQuorum::One))
            .u64(|v| integer(v, EXPECTING).map(RawQuorum::One));
        deserializer.deserialize_any(OneOf::new(one).or_array(RawQuorum::PerClient))
    }
}

/// `[faults.clock_jumps] jump_ticks`: one size for every jump, or a list of sizes, each with
/// its span.
#[derive(Debug)]
pub(crate) enum RawSteps {
    One(i32),
    List(Vec<Spanned<i32>>),
}

impl<'de> Deserialize<'de> for RawSteps {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        const EXPECTING: &str = "a number of ticks, or an array of them";
        let one = UntaggedEnumVisitor::new()
            .expecting(EXPECTING)
            .i64(|v| integer(v, EXPECTING).map(RawSteps::One));
        deserializer.deserialize_any(OneOf::new(one).or_array(RawSteps::List))
    }
}

/// `[faults.clock_jumps] jump`: one duration, or a list of them, each with its span.
#[derive(Debug)]
pub(crate) enum RawJump {
    One(RawDuration),
    List(Vec<Spanned<RawDuration>>),
}

impl<'de> Deserialize<'de> for RawJump {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        const EXPECTING: &str = "a duration in quotes (\"50ms\"), or an array of them; a count of ticks goes in jump_ticks";
        let one = UntaggedEnumVisitor::new()
            .expecting(EXPECTING)
            .string(|v| Ok(RawJump::One(RawDuration(v.to_owned()))));
        deserializer.deserialize_any(OneOf::new(one).or_array(RawJump::List))
    }
}

/// A time key written as a duration (`"10s"`); a number here is refused with a pointer to
/// the key's `_ticks` spelling, which is where a count of ticks goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RawDuration(pub String);

impl<'de> Deserialize<'de> for RawDuration {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        const EXPECTING: &str = "a duration in quotes (\"10s\", \"50ms\"); a count of ticks goes in the key ending in _ticks";
        let one = UntaggedEnumVisitor::new()
            .expecting(EXPECTING)
            .string(|v| Ok(RawDuration(v.to_owned())));
        deserializer.deserialize_any(OneOf::new(one))
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawScenario {
    // A user's own file needs only what it checks: these five are optional here, and the
    // catalog's own test (`tests/catalog.rs`) requires them of `models/*.toml`.
    pub name: Option<Spanned<String>>,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub claim: String,
    pub source: Option<Spanned<Source>>,
    /// The sentence the claim rests on, in the words of the source that makes it.
    pub quote: Option<Spanned<String>>,
    /// For a `derived` claim: the source whose statement the derivation starts from.
    pub builds_on: Option<Spanned<Source>>,
    #[serde(default)]
    pub prose: String,
    /// One line for the scenario table of `docs/scenarios.md`: what the checker's run shows.
    pub summary: Option<String>,
    /// The length of one tick (`"2ms"`), when the file fixes it.
    pub resolution: Option<Spanned<RawDuration>>,
    #[serde(default)]
    pub lock: RawLock,
    #[serde(default)]
    pub clock: RawClock,
    #[serde(default)]
    pub network: RawNetwork,
    pub storage: Option<Spanned<RawStorage>>,
    #[serde(default)]
    pub faults: RawFaults,
    pub failover: Option<Spanned<RawFailover>>,
    #[serde(default)]
    pub liveness: RawLiveness,
    #[serde(default)]
    pub check: RawCheck,
    #[serde(default)]
    pub aliases: Vec<Spanned<String>>,
    pub mitigation: Option<RawMitigation>,
    pub simulate: Option<Spanned<RawSimulate>>,
    pub expect: Option<Spanned<BTreeMap<Spanned<String>, RawExpectValue>>>,
}

/// `[simulate]`: the simulator's own world, which the model checker ignores.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSimulate {
    pub ms_per_tick: Option<Spanned<u32>>,
    pub duration_ms: Option<Spanned<u32>>,
    pub delay_min_ms: Option<Spanned<u32>>,
    pub delay_max_ms: Option<Spanned<u32>>,
    pub loss_per_mille: Option<Spanned<u32>>,
    pub clock_rate_error_ppm: Option<Spanned<u32>>,
    pub clock_offset_max_ms: Option<Spanned<u32>>,
    pub retry_delay_min_ms: Option<Spanned<u32>>,
    pub retry_delay_max_ms: Option<Spanned<u32>>,
    pub think_max_ms: Option<Spanned<u32>>,
    pub cycles_per_lock: Option<Spanned<u32>>,
    pub crashes: Option<Spanned<RawSimFaults>>,
    pub isolations: Option<Spanned<RawSimFaults>>,
    pub pauses: Option<Spanned<RawSimFaults>>,
    pub storage_delays: Option<Spanned<RawSimFaults>>,
    pub node_jumps_forward: Option<Spanned<RawSimFaults>>,
    pub client_jumps_backward: Option<Spanned<RawSimFaults>>,
    pub schedule: Option<Spanned<Vec<Spanned<RawScheduled>>>>,
    pub expect: Option<Spanned<BTreeMap<Spanned<String>, RawExpectValue>>>,
}

/// One generated fault kind of `[simulate]`: how many, and their sizes in ms.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSimFaults {
    pub count: Spanned<u32>,
    pub min_ms: Option<Spanned<u32>>,
    pub max_ms: Spanned<u32>,
}

/// One entry of `[[simulate.schedule]]`: a crash of node `crash`, a forward or backward jump
/// of node `jump_node`'s clock by `by_ms`, or the failover of node `failover` (the replicated
/// master of `[failover]`, node 0).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawScheduled {
    pub at_ms: Spanned<u32>,
    pub crash: Option<Spanned<u32>>,
    pub downtime_ms: Option<Spanned<u32>>,
    pub jump_node: Option<Spanned<u32>>,
    pub by_ms: Option<Spanned<i32>>,
    pub failover: Option<Spanned<u32>>,
}

/// A value in `[expect]`: a verdict for a property, or the list of ingredient names under
/// `mechanism`. Hand-written rather than `untagged`, so that a bad verdict still gets serde's
/// "unknown variant" message at the value's own span.
#[derive(Debug)]
pub(crate) enum RawExpectValue {
    Verdict(Verdict),
    List(Vec<String>),
}

impl<'de> Deserialize<'de> for RawExpectValue {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        const EXPECTING: &str = "\"holds\", \"violated\", or a list of ingredient names";
        let one = UntaggedEnumVisitor::new()
            .expecting(EXPECTING)
            .string(|v| match v {
                "holds" => Ok(RawExpectValue::Verdict(Verdict::Holds)),
                "violated" => Ok(RawExpectValue::Verdict(Verdict::Violated)),
                other => Err(Error::unknown_variant(other, &["holds", "violated"])),
            });
        deserializer.deserialize_any(OneOf::new(one).or_array(RawExpectValue::List))
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawMitigation {
    pub text: String,
    pub scenario: Option<Spanned<String>>,
    #[serde(default)]
    pub set: toml::Table,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawLock {
    pub nodes: Option<Spanned<u32>>,
    pub quorum: Option<Spanned<RawQuorum>>,
    pub clients: Option<Spanned<u32>>,
    pub ttl_ticks: Option<Spanned<u32>>,
    pub ttl: Option<Spanned<RawDuration>>,
    pub drift_ticks: Option<Spanned<u32>>,
    pub drift: Option<Spanned<RawDuration>>,
    pub round_timeout_ticks: Option<Spanned<u32>>,
    pub round_timeout: Option<Spanned<RawDuration>>,
    pub attempts: Option<Spanned<u32>>,
    pub retry_delay_ticks: Option<Spanned<u32>>,
    pub retry_delay: Option<Spanned<RawDuration>>,
    pub unlock: Option<RawUnlock>,
    pub validity_check: Option<RawValidityCheck>,
    pub release_after_failed_round: Option<bool>,
    pub decision: Option<RawDecision>,
    pub contact: Option<RawContact>,
    pub extensions: Option<Spanned<RawBound>>,
    pub extension_quorum: Option<RawExtensionQuorum>,
    pub token: Option<Spanned<super::Tokens>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawClock {
    pub node_error_ticks: Option<Spanned<u32>>,
    pub node_error: Option<Spanned<RawDuration>>,
    pub client_error_ticks: Option<Spanned<u32>>,
    pub client_error: Option<Spanned<RawDuration>>,
}

/// One client's reachable nodes, 1-based, each with its span.
pub(crate) type ReachList = Spanned<Vec<Spanned<u32>>>;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawNetwork {
    pub reach: Option<Spanned<Vec<ReachList>>>,
    pub message_loss: Option<Spanned<u32>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawStorage {
    pub protection: Option<RawProtection>,
    pub token_source: Option<Spanned<RawTokenSource>>,
    pub check_margin_ticks: Option<Spanned<u32>>,
    pub check_margin: Option<Spanned<RawDuration>>,
    pub max_delay_ticks: Option<RawBound>,
    pub max_delay: Option<Spanned<RawDuration>>,
    pub check: Option<RawCheckAndApply>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawFaults {
    pub pauses: Option<RawPauses>,
    pub clock_jumps: Option<RawJumps>,
    pub crashes: Option<RawCrashes>,
    pub client_crashes: Option<RawClientFaults>,
    /// `[faults.client_partitions]`: aimed and counted as a client crash is.
    pub client_partitions: Option<RawClientFaults>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPauses {
    pub count: Option<Spanned<u32>>,
    pub max_ticks: Option<RawBound>,
    pub max: Option<Spanned<RawDuration>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawJumps {
    pub count: Option<Spanned<u32>>,
    pub target: Option<JumpTarget>,
    pub index: Option<Spanned<u32>>,
    pub jump_ticks: Option<Spanned<RawSteps>>,
    pub jump: Option<Spanned<RawJump>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCrashes {
    pub count: Option<Spanned<u32>>,
    pub persistence: Option<RawPersistence>,
    pub restart_delay_ticks: Option<Spanned<u32>>,
    pub restart_delay: Option<Spanned<RawDuration>>,
    pub restart: Option<bool>,
    pub client_guard_ticks: Option<Spanned<u32>>,
    pub client_guard: Option<Spanned<RawDuration>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawClientFaults {
    pub count: Option<Spanned<u32>>,
    pub client: Option<Spanned<u32>>,
    pub when: Option<RawCrashWhen>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawFailover {
    pub promotion_delay_ticks: Option<u32>,
    pub promotion_delay: Option<Spanned<RawDuration>>,
    pub replicas: Option<Spanned<u32>>,
    pub wait: Option<Spanned<RawWait>>,
    pub every_node: Option<Spanned<bool>>,
    pub failovers: Option<Spanned<u32>>,
}

/// `[failover] wait`: `true` or `false` (the first spelling, `WAIT 1` or no wait), or the
/// number of replicas the master waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RawWait {
    Flag(bool),
    Count(u32),
}

impl<'de> Deserialize<'de> for RawWait {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        const EXPECTING: &str = "true, false, or a number of replicas";
        let one = UntaggedEnumVisitor::new()
            .expecting(EXPECTING)
            .bool(|v| Ok(RawWait::Flag(v)))
            .i64(|v| integer(v, EXPECTING).map(RawWait::Count))
            .u64(|v| integer(v, EXPECTING).map(RawWait::Count));
        deserializer.deserialize_any(OneOf::new(one))
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawLiveness {
    pub horizon_ticks: Option<Spanned<u32>>,
    pub horizon: Option<Spanned<RawDuration>>,
    pub isolated_rounds: Option<bool>,
    pub client: Option<Spanned<u32>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCheck {
    pub symmetry: Option<bool>,
}

/// Whether clients check the validity a round left (file values `true`, `false`,
/// `"acquisition-only"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RawValidityCheck {
    /// `true`: every round checked (correct); `false`: acquisitions unchecked.
    Flag(bool),
    /// `"acquisition-only"`: extensions unchecked.
    AcquisitionOnly,
}

impl<'de> Deserialize<'de> for RawValidityCheck {
    /// A bool or the one word, with an error that names the three values.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        const EXPECTING: &str = "true, false or \"acquisition-only\"";
        let one = UntaggedEnumVisitor::new()
            .expecting(EXPECTING)
            .bool(|v| Ok(RawValidityCheck::Flag(v)))
            .string(|v| match v {
                "acquisition-only" => Ok(RawValidityCheck::AcquisitionOnly),
                _ => Err(Error::invalid_value(Unexpected::Str(v), &EXPECTING)),
            });
        deserializer.deserialize_any(OneOf::new(one))
    }
}

/// How clients remove their key (file values `"compare-and-delete"`, `"del"`,
/// `"get-then-del"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum RawUnlock {
    /// Compare-and-delete (the Lua script): correct.
    CompareAndDelete,
    /// Plain `DEL`: the mistake redis.io warns against.
    Del,
    /// `GET`, then `DEL` in a second command: the mistake the seed warns against (§4.2).
    GetThenDel,
}

/// When a round stops waiting for answers (file values `"at-quorum"`, `"all-replies"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum RawDecision {
    /// As soon as a quorum applied, as the core decides by default.
    AtQuorum,
    /// Only once every node answered, a quorum is out of reach, or the round timed out.
    AllReplies,
}

/// How an acquisition reaches its nodes (file values `"multiplexed"`, `"sequential"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum RawContact {
    /// Every node at once.
    Multiplexed,
    /// One after another, the seed's loop.
    Sequential,
}

/// How the storage protects itself from stale holders (file values `"none"`, `"fencing-token"`,
/// `"fencing-on-writes-only"`, `"random-token-cas"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum RawProtection {
    /// Every op is applied.
    None,
    /// Kleppmann's fencing token, checked on every op.
    FencingToken,
    /// Fencing checked on writes only (reads unfenced).
    FencingOnWritesOnly,
    /// antirez's alternative: mark the storage with the token, write only if still marked.
    RandomTokenCas,
}

/// Whether the storage checks and applies an op in one step (file values `"atomic"`,
/// `"two-step"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum RawCheckAndApply {
    /// One atomic step.
    Atomic,
    /// A check, then an apply in a later step.
    TwoStep,
}

/// Where fencing tokens come from (file values `"ideal"`, `"counter-after-acquire"`,
/// `"lock-quorum-max-only"`, `"lock-quorum"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum RawTokenSource {
    /// An ideal global counter (the acquisition epoch).
    Ideal,
    /// `INCR` on a separate counter node after acquiring.
    CounterAfterAcquire,
    /// The largest per-node counter of the acquisition's quorum, not written back.
    LockQuorumMaxOnly,
    /// The largest per-node counter of the quorum, written back to a quorum first.
    LockQuorum,
}

/// When a client fault (a crash or a partition) may strike (file values `"any"`, `"holding"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum RawCrashWhen {
    /// At any point before the client is done.
    Any,
    /// Only while the client believes it holds the lock.
    Holding,
}

/// What a node keeps across a crash (file values `"none"`, `"fsync-always"`, `"fsync-periodic"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum RawPersistence {
    /// No AOF: the keyspace is lost.
    None,
    /// `appendfsync always`: every acknowledged key survives.
    FsyncAlways,
    /// `appendfsync everysec`: keys survive only once an fsync ran after them (the model
    /// lets the fsync happen at any moment, or not before the crash).
    FsyncPeriodic,
}

/// How a client counts an extension round (file values `"majority"`, `"any-node"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum RawExtensionQuorum {
    /// A majority of all `N` nodes must extend: correct.
    Majority,
    /// One node extending is taken as success: the minority-accepted mistake.
    AnyNode,
}

impl From<RawBound> for Bound {
    fn from(raw: RawBound) -> Bound {
        match raw {
            RawBound::Ticks(t) => Bound::Ticks(t),
            RawBound::Unbounded => Bound::Unbounded,
        }
    }
}
