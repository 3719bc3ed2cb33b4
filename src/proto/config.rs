//! What a client is configured with, and the checks that reject a configuration that cannot work.

use thiserror::Error;

use super::command::MAX_NODES;
use crate::time::Millis;

/// How much of a lock's TTL the client gives up to cover clock error between processes.
///
/// `drift = floor(ttl · factor) + floor_ms`. redis.io and antirez's reference client use a factor
/// of 0.01 plus 2 ms (the 2 ms cover Redis's 1 ms expiry granularity). The model checker uses a
/// factor of 0 and an explicit number of ticks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DriftPolicy {
    /// The share of the TTL reserved for clock-rate error, in `[0, 1)`.
    pub factor: f64,
    /// A constant added on top, for expiry granularity.
    pub floor: Millis,
}

impl DriftPolicy {
    /// A fixed drift, independent of the TTL (what the model checker uses).
    pub const fn fixed(drift: Millis) -> DriftPolicy {
        DriftPolicy {
            factor: 0.0,
            floor: drift,
        }
    }

    /// The drift allowance for a lock of this TTL.
    pub fn drift_for(&self, ttl: Millis) -> Millis {
        // `factor` is validated to lie in [0, 1), so the product fits in a u64.
        let share = (ttl.as_u64() as f64 * self.factor).floor() as u64;
        Millis(share) + self.floor
    }
}

impl Default for DriftPolicy {
    fn default() -> Self {
        DriftPolicy {
            factor: 0.01,
            floor: Millis(2),
        }
    }
}

/// How a client removes its key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum UnlockMode {
    /// Compare-and-delete: delete only a key that holds our token. The correct way.
    #[default]
    CompareAndDelete,
    /// Plain `DEL`: may delete another client's key. redis.io's warning, kept for the model.
    PlainDel,
    /// `GET`, then `DEL` on each node whose value was the client's own: the comparison and
    /// the delete are two commands, so the key may expire and another client's `SET` land
    /// between them (the seed's warning, §4.2). Only a held lock is released so: a failed
    /// round's release, which nobody waits for, cannot wait for a `GET` either, so this mode
    /// needs [`FailedRound::Keep`]. Kept for the model.
    GetThenDel,
}

impl UnlockMode {
    /// The value a scenario file writes (`unlock = "del"`), and printouts use.
    pub const fn word(self) -> &'static str {
        match self {
            UnlockMode::CompareAndDelete => "compare-and-delete",
            UnlockMode::PlainDel => "del",
            UnlockMode::GetThenDel => "get-then-del",
        }
    }
}

/// Whether the client checks the remaining validity after a round (Redlock step 3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ValidityCheck {
    /// Acquired only if `ttl − elapsed − drift > 0`, with the deadline anchored at T1. Correct.
    #[default]
    On,
    /// Acquired on any majority, with the lease timed from the last reply (T2): the mistake
    /// Martin Kleppmann's GC-pause example exploits. Kept for the model.
    Off,
    /// Acquisitions checked as with `On`, but an extension counted on any majority however
    /// long its round took, its lease timed from the last reply (T2): an extension counted
    /// after its validity ran out, against redis.io's "within the validity time". Kept for
    /// the model. (With `Off` and `On` an extension is always checked.)
    AcquisitionOnly,
}

impl ValidityCheck {
    /// The value a scenario file writes (`validity_check = false`), and printouts use.
    pub const fn word(self) -> &'static str {
        match self {
            ValidityCheck::On => "true",
            ValidityCheck::Off => "false",
            ValidityCheck::AcquisitionOnly => "\"acquisition-only\"",
        }
    }
}

/// When an acquisition or extension round stops waiting for answers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RoundDecision {
    /// As soon as `Q` nodes applied the operation (or a quorum is out of reach, or every node
    /// answered): one hung minority node costs nothing. Safe because the lease's deadline is
    /// anchored at T1, before the first request, and not at the decision: the `Q` keys the
    /// holder counts were all set after T1 with the full TTL, so each outlives `T1 + ttl` (less
    /// the drift the deadline already subtracts) however long the stragglers take. Waiting for
    /// them could only move T2 later, which shortens the reported validity and changes nothing
    /// else; a straggler's late `SET` is covered by the release, which goes to all `N` nodes.
    #[default]
    AtQuorum,
    /// Only when every node answered, a quorum is out of reach, or the round timed out: the
    /// behaviour before early decision, kept to show what a hung node costs.
    AllReplies,
}

impl RoundDecision {
    /// The value a scenario file writes (`decision = "all-replies"`), and printouts use.
    pub const fn word(self) -> &'static str {
        match self {
            RoundDecision::AtQuorum => "at-quorum",
            RoundDecision::AllReplies => "all-replies",
        }
    }
}

/// How an acquisition round reaches its `N` nodes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Contact {
    /// Every node's `SET` leaves at T1, together; the round waits at most
    /// [`round_timeout`](Config::round_timeout) for all of them. An unreachable node costs one
    /// timeout, however many there are.
    #[default]
    Multiplexed,
    /// One node at a time, in node order, the next asked once the last answered or its own
    /// timeout passed: the seed's loop over its connection pools (§3 step 2, "sequencialmente"),
    /// where [`round_timeout`](Config::round_timeout) is each request's timeout. Every
    /// unreachable node before the quorum costs a whole timeout of the lease, in turn. Only
    /// acquisition rounds are sequential; extensions, the fencing write-back and releases go to
    /// every node at once.
    Sequential,
}

impl Contact {
    /// The value a scenario file writes (`contact = "sequential"`), and printouts use.
    pub const fn word(self) -> &'static str {
        match self {
            Contact::Multiplexed => "multiplexed",
            Contact::Sequential => "sequential",
        }
    }
}

/// What a client does with the keys of an acquisition round it lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FailedRound {
    /// Redlock step 5: release on all `N` nodes, also those that said no or never answered (a
    /// timed-out `SET` may still have been applied). Correct.
    #[default]
    Release,
    /// Send nothing: the round's keys, if any were set, stay until they expire. What a
    /// single-instance client does after a refused `SET NX`; kept for the model, where it makes
    /// redis.io's stale holder (not a loser's release) the shortest story of the `DEL` mistake.
    Keep,
}

impl FailedRound {
    /// The value a scenario file writes (`release_after_failed_round = false`), and printouts
    /// use.
    pub const fn word(self) -> &'static str {
        match self {
            FailedRound::Release => "true",
            FailedRound::Keep => "false",
        }
    }
}

/// The value a retry puts in its keys.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RetryToken {
    /// A fresh value for every round, retries included. Correct: the release of a failed
    /// round, which nobody waits for, matches none of a later round's keys, however late it
    /// arrives.
    #[default]
    Fresh,
    /// The first round's value again, as a client that draws one value per lock (rather than
    /// per round) does. Kept for the model, where a failed round's late release deletes the
    /// keys the same client's next round set.
    Kept,
}

/// How an extension round is counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ExtensionQuorum {
    /// A majority of all `N` nodes must extend the key. Correct.
    #[default]
    Majority,
    /// One node extending is taken as success: the minority-accepted mistake, kept for the
    /// model (a lease "extended" on one node outlives the keys on the others).
    AnyNode,
}

/// Whether a lock hands out a fencing token derived from its own acquisition round, and how.
///
/// Every node's `SET NX PX` that creates the key also increments that node's counter (one key,
/// [`FENCE_COUNTER_KEY`], for every resource) and returns it (one script); the round's *fence*
/// is the largest counter among the nodes that applied it.
/// The largest counter of one quorum is not monotonic by itself: a node outside
/// the next holder's quorum may be far ahead of those inside it. Writing the fence back to a
/// quorum before the lock counts as acquired makes every later quorum (which intersects that
/// one) start above it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Fencing {
    /// No fencing token: one round, and the guard offers no token.
    #[default]
    Off,
    /// The largest counter of the quorum, with no write-back: not monotonic, kept for the model
    /// to show where it breaks.
    MaxOnly,
    /// The largest counter of the quorum, written back to a quorum (counter := max(counter,
    /// fence)) before the lock counts as acquired: a second round, skipped when a quorum of
    /// nodes already returned the fence itself (their counters stand there: on idle masters,
    /// whose counters move together, every acquisition). The token is monotonic while every
    /// node keeps its counter across a crash (`appendfsync always`).
    WriteBack,
}

/// How often and how long to wait before trying again after a failed round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RetryPolicy {
    /// Total rounds, the first one included (at least 1).
    pub attempts: u32,
    /// The smallest delay before the next round.
    pub delay_min: Millis,
    /// The largest delay; the delay is drawn uniformly from `[delay_min, delay_max]` so that
    /// contending clients drift apart instead of colliding forever.
    pub delay_max: Millis,
}

impl Default for RetryPolicy {
    /// antirez's reference client: 3 tries, 200 ms plus up to 50 ms of jitter.
    fn default() -> Self {
        RetryPolicy {
            attempts: 3,
            delay_min: Millis(200),
            delay_max: Millis(250),
        }
    }
}

/// Everything a Redlock client needs besides its nodes, its clock and its randomness.
///
/// Build one with [`Config::new`] and adjust the public fields; every consumer calls
/// [`Config::validate`] before use, so a bad value is refused with a reason instead of
/// misbehaving.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    /// `N`, the number of independent Redis masters.
    pub node_count: usize,
    /// Clock-error allowance.
    pub drift: DriftPolicy,
    /// The longest a round (acquire, extend, release) waits for answers before it decides
    /// with what it has. It is capped at `ttl − drift` per lock: a round that takes longer can
    /// only fail. Keep it small compared with the TTL so one slow node does not eat the lease.
    pub round_timeout: Millis,
    /// Retries after a failed acquisition round.
    pub retry: RetryPolicy,
    /// Compare-and-delete, or the plain-`DEL` mistake.
    pub unlock: UnlockMode,
    /// The step-3 validity check, or the mistake of skipping it.
    pub validity_check: ValidityCheck,
    /// Whether a round is decided at quorum or waits for every answer.
    pub decision: RoundDecision,
    /// Whether an acquisition asks every node at once or one after another.
    pub contact: Contact,
    /// A majority for extensions, or the any-node mistake.
    pub extension_quorum: ExtensionQuorum,
    /// Release a lost round on every node (Redlock step 5), or send nothing.
    pub failed_round: FailedRound,
    /// A fresh value for every round, or the first round's value kept for the retries.
    pub retry_token: RetryToken,
    /// Whether acquisition derives a fencing token from the round (and writes it back).
    pub fencing: Fencing,
    /// How many nodes a client must lock: `None` is the majority `N/2 + 1`. `Some(q)` pins
    /// it to any `q` in `1..=N`; a `q` of `N/2` or fewer is the wrong-quorum mistake, kept for
    /// the model to show where it breaks (two disjoint sets of `q` nodes let two clients hold
    /// the lock at once).
    pub quorum: Option<usize>,
}

impl Config {
    /// The defaults of redis.io and antirez's reference client for `node_count` masters.
    pub fn new(node_count: usize) -> Config {
        Config {
            node_count,
            drift: DriftPolicy::default(),
            round_timeout: Millis(50),
            retry: RetryPolicy::default(),
            unlock: UnlockMode::default(),
            validity_check: ValidityCheck::default(),
            decision: RoundDecision::default(),
            contact: Contact::default(),
            extension_quorum: ExtensionQuorum::default(),
            failed_round: FailedRound::default(),
            retry_token: RetryToken::default(),
            fencing: Fencing::default(),
            quorum: None,
        }
    }

    /// `Q`, the number of nodes a client must lock: `N/2 + 1` unless [`Config::quorum`] pins
    /// another.
    pub fn quorum(&self) -> usize {
        self.quorum.unwrap_or(quorum(self.node_count))
    }

    /// Checks everything that does not depend on a particular lock's TTL.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.node_count == 0 {
            return Err(ConfigError::NoNodes);
        }
        if self.node_count > MAX_NODES {
            return Err(ConfigError::TooManyNodes {
                count: self.node_count,
            });
        }
        let factor = self.drift.factor;
        if !(0.0..1.0).contains(&factor) {
            return Err(ConfigError::DriftFactor { factor });
        }
        if let Some(q) = self.quorum
            && !(1..=self.node_count).contains(&q)
        {
            return Err(ConfigError::QuorumOutOfRange {
                quorum: q,
                nodes: self.node_count,
            });
        }
        if self.round_timeout == Millis::ZERO {
            return Err(ConfigError::ZeroRoundTimeout);
        }
        if self.retry.attempts == 0 {
            return Err(ConfigError::NoAttempts);
        }
        if self.retry.delay_min > self.retry.delay_max {
            return Err(ConfigError::RetryDelayRange {
                min: self.retry.delay_min,
                max: self.retry.delay_max,
            });
        }
        if self.unlock == UnlockMode::GetThenDel && self.failed_round == FailedRound::Release {
            return Err(ConfigError::GetThenDelAfterFailedRound);
        }
        Ok(())
    }

    /// Validates the configuration for a lock of this TTL and resolves the numbers a round uses.
    pub fn params(&self, ttl: Millis) -> Result<LockParams, ConfigError> {
        self.validate()?;
        if ttl == Millis::ZERO {
            return Err(ConfigError::ZeroTtl);
        }
        let drift = self.drift.drift_for(ttl);
        if ttl <= drift {
            return Err(ConfigError::TtlNotAboveDrift { ttl, drift });
        }
        Ok(LockParams {
            node_count: self.node_count as u8,
            ttl,
            drift,
            round_timeout: self.round_timeout.min(ttl - drift),
            unlock: self.unlock,
            validity_check: self.validity_check,
            decision: self.decision,
            contact: self.contact,
            extension_quorum: self.extension_quorum,
            failed_round: self.failed_round,
            retry_token: self.retry_token,
            fencing: self.fencing,
            retry: self.retry,
            quorum: self.quorum.map(|q| q as u8),
        })
    }
}

/// `Q = ⌊N/2⌋ + 1`.
pub const fn quorum(node_count: usize) -> usize {
    node_count / 2 + 1
}

/// The resolved numbers of one lock: a [`Config`] applied to a TTL. Small and `Copy`, so the
/// model checker can keep it out of its state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LockParams {
    /// `N`.
    pub node_count: u8,
    /// The key's time to live.
    pub ttl: Millis,
    /// The clock-error allowance subtracted from the validity.
    pub drift: Millis,
    /// How long a round waits for answers (already capped at `ttl − drift`).
    pub round_timeout: Millis,
    /// Compare-and-delete, or plain `DEL`.
    pub unlock: UnlockMode,
    /// Step-3 check on or off.
    pub validity_check: ValidityCheck,
    /// Decide at quorum, or wait for every answer.
    pub decision: RoundDecision,
    /// Every node at once, or one after another (then `round_timeout` is each node's).
    pub contact: Contact,
    /// A majority for extensions, or the any-node mistake.
    pub extension_quorum: ExtensionQuorum,
    /// Release a lost round on every node, or send nothing.
    pub failed_round: FailedRound,
    /// A fresh value for every round, or the first one kept.
    pub retry_token: RetryToken,
    /// The fencing token's derivation.
    pub fencing: Fencing,
    /// Retries after a failed acquisition round.
    pub retry: RetryPolicy,
    /// A quorum pinned by [`Config::quorum`] (already checked against `N`), or `None` for the
    /// majority.
    pub quorum: Option<u8>,
}

impl LockParams {
    /// `Q`: the pinned quorum, or `N/2 + 1`.
    pub const fn quorum(&self) -> usize {
        match self.quorum {
            Some(q) => q as usize,
            None => quorum(self.node_count as usize),
        }
    }

    /// The most validity an acquisition can ever report: `ttl − drift`.
    pub fn max_validity(&self) -> Millis {
        self.ttl - self.drift
    }

    /// A [`Config`] that resolves to these numbers for this TTL: the fixed drift, the
    /// (capped) timeout, and every choice of algorithm as it is. Whoever rescales a lock (the
    /// simulator's bridge) starts here, so a choice added to the core travels with it.
    pub fn to_config(&self) -> Config {
        // Every field named, so a new one does not compile until it is carried over.
        let LockParams {
            node_count,
            ttl: _,
            drift,
            round_timeout,
            unlock,
            validity_check,
            decision,
            contact,
            extension_quorum,
            failed_round,
            retry_token,
            fencing,
            retry,
            quorum,
        } = *self;
        Config {
            node_count: usize::from(node_count),
            drift: DriftPolicy::fixed(drift),
            round_timeout,
            retry,
            unlock,
            validity_check,
            decision,
            contact,
            extension_quorum,
            failed_round,
            retry_token,
            fencing,
            quorum: quorum.map(usize::from),
        }
    }
}

/// A configuration the client refuses, with the reason.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// `N = 0`.
    #[error("a lock needs at least one node, and none were given")]
    NoNodes,
    /// `N` is larger than [`MAX_NODES`].
    #[error("{count} nodes is more than the {MAX_NODES} one lock can span")]
    TooManyNodes {
        /// The number given.
        count: usize,
    },
    /// The drift factor is negative, NaN, or 1 or more (the whole TTL).
    #[error(
        "drift factor {factor} is outside [0, 1): it is the share of the TTL kept for clock error"
    )]
    DriftFactor {
        /// The factor given.
        factor: f64,
    },
    /// A zero TTL.
    #[error("ttl must be positive: a zero ttl expires the key as it is set")]
    ZeroTtl,
    /// `ttl ≤ drift`: no acquisition could ever have positive validity.
    #[error(
        "ttl {ttl} is not larger than the clock drift allowance {drift}: the lock could never be valid"
    )]
    TtlNotAboveDrift {
        /// The TTL given.
        ttl: Millis,
        /// The drift it resolves to.
        drift: Millis,
    },
    /// A pinned quorum of no node, or of more nodes than the lock has.
    #[error(
        "quorum {quorum} is outside 1..={nodes}: a client must lock at least one of the {nodes} nodes and cannot lock more"
    )]
    QuorumOutOfRange {
        /// The quorum given.
        quorum: usize,
        /// `N`.
        nodes: usize,
    },
    /// A zero round timeout.
    #[error("round timeout must be positive: a round that waits for nothing never gets a quorum")]
    ZeroRoundTimeout,
    /// `retry.attempts == 0`.
    #[error("retry attempts must be at least 1 (the first round counts)")]
    NoAttempts,
    /// `retry.delay_min > retry.delay_max`.
    #[error("retry delay range is empty: min {min} is above max {max}")]
    RetryDelayRange {
        /// The lower bound given.
        min: Millis,
        /// The upper bound given.
        max: Millis,
    },
    /// [`UnlockMode::GetThenDel`] with [`FailedRound::Release`].
    #[error(
        "a get-then-del unlock cannot release a failed round: nobody waits for that release, so no DEL could follow its GET (keep the failed round's keys)"
    )]
    GetThenDelAfterFailedRound,
    /// An empty resource (key) name.
    #[error("resource name is empty: the lock's key needs a name")]
    EmptyResource,
    /// The resource name is the lock nodes' fencing counter's key.
    #[error(
        "resource name {FENCE_COUNTER_KEY:?} is reserved: it is the lock nodes' fencing counter"
    )]
    ReservedResource,
}

/// The one key at which every lock node keeps its fencing counter, shared by every resource.
///
/// One key, not one per resource, so a node's memory does not grow with the names ever
/// locked; a token drawn from a counter that only grows is larger than every earlier token of
/// every resource, so the storage's per-resource comparison still holds. Since
/// [`validate_resource`] refuses this name, no lock key can be the counter.
pub const FENCE_COUNTER_KEY: &str = "redlock-lab:fencing-counter";

/// Checks a resource (key) name. Redis accepts any binary string, so only emptiness and the
/// counter's own name ([`FENCE_COUNTER_KEY`]) are refused.
pub fn validate_resource(resource: &str) -> Result<(), ConfigError> {
    if resource.is_empty() {
        Err(ConfigError::EmptyResource)
    } else if resource == FENCE_COUNTER_KEY {
        Err(ConfigError::ReservedResource)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_reference_client() {
        let params = Config::new(5).params(Millis(10_000)).unwrap();
        assert_eq!(params.drift, Millis(102));
        assert_eq!(params.quorum(), 3);
        assert_eq!(params.round_timeout, Millis(50));
    }

    #[test]
    fn a_pinned_quorum_reaches_the_lock_params() {
        let mut config = Config::new(4);
        assert_eq!(config.params(Millis(100)).unwrap().quorum(), 3);
        config.quorum = Some(2);
        assert_eq!(config.quorum(), 2);
        assert_eq!(config.params(Millis(100)).unwrap().quorum(), 2);
    }

    #[test]
    fn params_give_back_a_config_that_resolves_to_them() {
        let mut config = Config::new(5);
        config.drift = DriftPolicy::fixed(Millis(7));
        config.contact = Contact::Sequential;
        config.decision = RoundDecision::AllReplies;
        config.failed_round = FailedRound::Keep;
        config.fencing = Fencing::WriteBack;
        config.quorum = Some(4);
        let params = config.params(Millis(100)).unwrap();
        assert_eq!(params.to_config().params(Millis(100)), Ok(params));
    }

    #[test]
    fn round_timeout_is_capped_by_the_validity() {
        let mut config = Config::new(3);
        config.drift = DriftPolicy::fixed(Millis(1));
        config.round_timeout = Millis(100);
        assert_eq!(config.params(Millis(10)).unwrap().round_timeout, Millis(9));
    }

    #[test]
    fn bad_configurations_are_refused_with_a_reason() {
        let check = |config: Config, ttl: u64| config.params(Millis(ttl)).unwrap_err().to_string();
        assert!(check(Config::new(0), 100).contains("at least one node"));
        assert!(check(Config::new(65), 100).contains("65 nodes"));
        let mut bad_factor = Config::new(3);
        bad_factor.drift.factor = 1.0;
        assert!(check(bad_factor, 100).contains("outside [0, 1)"));
        bad_factor.drift.factor = f64::NAN;
        assert!(check(bad_factor, 100).contains("outside [0, 1)"));
        assert!(check(Config::new(3), 0).contains("ttl must be positive"));
        assert!(check(Config::new(3), 2).contains("not larger than the clock drift"));
        let mut no_timeout = Config::new(3);
        no_timeout.round_timeout = Millis::ZERO;
        assert!(check(no_timeout, 100).contains("round timeout"));
        let mut no_attempts = Config::new(3);
        no_attempts.retry.attempts = 0;
        assert!(check(no_attempts, 100).contains("attempts"));
        let mut inverted = Config::new(3);
        inverted.retry.delay_min = Millis(5);
        inverted.retry.delay_max = Millis(4);
        assert!(check(inverted, 100).contains("delay range"));
        for q in [0, 4] {
            let mut pinned = Config::new(3);
            pinned.quorum = Some(q);
            assert!(check(pinned, 100).contains(&format!("quorum {q} is outside 1..=3")));
        }
        assert!(validate_resource("").is_err());
        assert!(validate_resource("orders").is_ok());
        assert!(validate_resource("orders:fence").is_ok());
        assert_eq!(
            validate_resource(FENCE_COUNTER_KEY),
            Err(ConfigError::ReservedResource)
        );
    }
}
