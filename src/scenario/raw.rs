//! The file format as serde sees it: every table refuses unknown keys, and every value that a
//! later check may refuse keeps its byte span so the error can point at it.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::de::value::SeqAccessDeserializer;
use serde::de::{Expected, Unexpected};
use toml::Spanned;

use super::{Bound, JumpTarget, Source, Verdict};

/// An integer key's value as a `u32`, or serde's own "invalid value: integer `v`" refusal
/// saying what `expected` wanted: the integer half of the hand-written visitors below, whatever
/// width toml hands the integer over in.
fn count<E: serde::de::Error>(v: impl Into<i128>, expected: &dyn Expected) -> Result<u32, E> {
    let v = v.into();
    u32::try_from(v)
        .map_err(|_| E::invalid_value(Unexpected::Other(&format!("integer `{v}`")), expected))
}

/// Either a number (of ticks, or of extensions) or the word `"unbounded"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RawBound {
    Ticks(u32),
    Unbounded,
}

impl<'de> Deserialize<'de> for RawBound {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = RawBound;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a number or \"unbounded\"")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<RawBound, E> {
                count(v, &self).map(RawBound::Ticks)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<RawBound, E> {
                count(v, &self).map(RawBound::Ticks)
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RawBound, E> {
                if v == "unbounded" {
                    Ok(RawBound::Unbounded)
                } else {
                    Err(E::invalid_value(Unexpected::Str(v), &self))
                }
            }
        }
        deserializer.deserialize_any(Visitor)
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
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = RawQuorum;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a number, or an array of one number per client")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<RawQuorum, E> {
                count(v, &self).map(RawQuorum::One)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<RawQuorum, E> {
                count(v, &self).map(RawQuorum::One)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                seq: A,
            ) -> Result<RawQuorum, A::Error> {
                Vec::deserialize(SeqAccessDeserializer::new(seq)).map(RawQuorum::PerClient)
            }
        }
        deserializer.deserialize_any(Visitor)
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
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = RawSteps;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a number of ticks, or an array of them")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<RawSteps, E> {
                i32::try_from(v).map(RawSteps::One).map_err(|_| {
                    E::invalid_value(Unexpected::Other(&format!("integer `{v}`")), &self)
                })
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<RawSteps, A::Error> {
                Vec::deserialize(SeqAccessDeserializer::new(seq)).map(RawSteps::List)
            }
        }
        deserializer.deserialize_any(Visitor)
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
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = RawJump;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a duration in quotes (\"50ms\"), or an array of them; a count of ticks goes in jump_ticks")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RawJump, E> {
                Ok(RawJump::One(RawDuration(v.to_owned())))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<RawJump, A::Error> {
                Vec::deserialize(SeqAccessDeserializer::new(seq)).map(RawJump::List)
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// A time key written as a duration (`"10s"`); a number here is refused with a pointer to
/// the key's `_ticks` spelling, which is where a count of ticks goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RawDuration(pub String);

impl<'de> Deserialize<'de> for RawDuration {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = RawDuration;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a duration in quotes (\"10s\", \"50ms\"); a count of ticks goes in the key ending in _ticks")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RawDuration, E> {
                Ok(RawDuration(v.to_owned()))
            }
        }
        deserializer.deserialize_any(Visitor)
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
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = RawExpectValue;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("\"holds\", \"violated\", or a list of ingredient names")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RawExpectValue, E> {
                match v {
                    "holds" => Ok(RawExpectValue::Verdict(Verdict::Holds)),
                    "violated" => Ok(RawExpectValue::Verdict(Verdict::Violated)),
                    other => Err(E::unknown_variant(other, &["holds", "violated"])),
                }
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                seq: A,
            ) -> Result<RawExpectValue, A::Error> {
                Vec::deserialize(SeqAccessDeserializer::new(seq)).map(RawExpectValue::List)
            }
        }
        deserializer.deserialize_any(Visitor)
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
    pub client_crashes: Option<RawClientCrashes>,
    /// `[faults.client_partitions]`: aimed and counted as a client crash is.
    pub client_partitions: Option<RawClientCrashes>,
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
pub(crate) struct RawClientCrashes {
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
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = RawWait;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("true, false, or a number of replicas")
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<RawWait, E> {
                Ok(RawWait::Flag(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<RawWait, E> {
                count(v, &self).map(RawWait::Count)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<RawWait, E> {
                count(v, &self).map(RawWait::Count)
            }
        }
        deserializer.deserialize_any(Visitor)
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
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = RawValidityCheck;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("true, false or \"acquisition-only\"")
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(RawValidityCheck::Flag(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                match v {
                    "acquisition-only" => Ok(RawValidityCheck::AcquisitionOnly),
                    _ => Err(E::invalid_value(Unexpected::Str(v), &self)),
                }
            }
        }
        deserializer.deserialize_any(Visitor)
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

/// When a client crash may strike (file values `"any"`, `"holding"`).
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
