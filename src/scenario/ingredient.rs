//! Ingredients: the faults and deliberate mistakes a scenario grants, each removable on its own.
//!
//! A violated property is explained by the ingredients it cannot do without. An ingredient is
//! one thing the file adds to the correct, fault-free algorithm: a fault budget (clock jumps,
//! node and client crashes, pauses, clock error, message loss, storage delay, a failover), a
//! mistake in the client (`unlock = "del"`, `validity_check = false`, `extension_quorum =
//! "any-node"`, `token = "shared"`, a `quorum` of half the nodes or fewer), a partition, or a
//! condition a liveness scenario teaches (rival rounds retried in lockstep, extensions without
//! a cap). [`Ingredient::remove`] (in `granted.rs`) turns a validated [`Scenario`] into the same scenario minus
//! that one thing (its budget set to zero, or the correct setting restored), so that
//! re-checking it answers "is this ingredient necessary?". Everything else — sizes, TTL,
//! drift, timeouts, persistence, restart delays, guards, margins — is configuration, not an
//! ingredient: removing it would not be "the same scenario without the fault".

use serde::{Serialize, Serializer};

use crate::fault::FaultKind;

/// One removable fault or mistake. The names ([`Ingredient::name`]) are part of the JSON report
/// and of the `[expect] mechanism` key.
///
/// A fault is one of the [`FaultKind`]s, whose list and words live with the kinds: a new kind
/// is an ingredient with no change here beyond saying how a file grants and removes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Ingredient {
    /// A fault budget or a condition of the world (`[faults.*]`, `[clock]`, `[network]`,
    /// `[storage] max_delay`, `[failover]`).
    Fault(FaultKind),
    /// A mistake in the client, or a condition a liveness scenario teaches.
    Mistake(Mistake),
}

/// A deliberate mistake in the client, or a condition a liveness scenario teaches: what a
/// file sets against the correct algorithm that is not a fault of the world.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Mistake {
    /// `[lock] unlock = "del"`: release with plain `DEL`.
    UnlockDel,
    /// `[lock] unlock = "get-then-del"`: compare with `GET`, delete with `DEL`, two commands.
    UnlockGetThenDel,
    /// `[lock] validity_check = false`: no step-3 check, lease timed from T2.
    NoValidityCheck,
    /// `[lock] extension_quorum = "any-node"`: one node extending counts as success.
    ExtensionAnyNode,
    /// `[lock] token = "shared"`: every client draws the same token value.
    SharedToken,
    /// `[lock] token = "reused"`: a client keeps one token value for all its attempts.
    ReusedToken,
    /// `[liveness] isolated_rounds = false` with rival clients: their rounds may start
    /// together again and again (no random retry delay), so they may split the votes forever.
    LockstepRetries,
    /// `[lock] extensions = "unbounded"`: a holder may extend for as long as it likes.
    UnboundedExtensions,
    /// `[lock] quorum` of `N/2` or fewer: two disjoint sets of nodes can each be a quorum.
    MinorityQuorum,
    /// `[storage] check = "two-step"`: the storage checks an op's token, then applies it in a
    /// later step.
    TwoStepCheck,
    /// `[lock] contact = "sequential"`: an acquisition asks one node after another, so the
    /// unreachable nodes' timeouts add up.
    SequentialContact,
}

impl Mistake {
    /// Every mistake, in the order reports list them.
    pub const ALL: [Mistake; 11] = [
        Mistake::UnlockDel,
        Mistake::UnlockGetThenDel,
        Mistake::NoValidityCheck,
        Mistake::ExtensionAnyNode,
        Mistake::SharedToken,
        Mistake::ReusedToken,
        Mistake::LockstepRetries,
        Mistake::UnboundedExtensions,
        Mistake::MinorityQuorum,
        Mistake::TwoStepCheck,
        Mistake::SequentialContact,
    ];

    /// The stable name (`"unlock = del"`), as JSON and `[expect] mechanism` spell it.
    pub const fn name(self) -> &'static str {
        match self {
            Mistake::UnlockDel => "unlock = del",
            Mistake::UnlockGetThenDel => "unlock = get-then-del",
            Mistake::NoValidityCheck => "no validity check",
            Mistake::ExtensionAnyNode => "extension quorum = any-node",
            Mistake::SharedToken => "token = shared",
            Mistake::ReusedToken => "token = reused",
            // Conditions a liveness scenario teaches, not faults: naming them lets `--why`
            // say what the scenario is about instead of "no fault" or the partition that
            // frames it.
            Mistake::LockstepRetries => "lockstep retries",
            Mistake::UnboundedExtensions => "unbounded extensions",
            Mistake::MinorityQuorum => "quorum below majority",
            Mistake::TwoStepCheck => "storage check = two-step",
            Mistake::SequentialContact => "contact = sequential",
        }
    }

    /// The mistake in a sentence (`"unlocking with plain DEL"`).
    pub const fn phrase(self) -> &'static str {
        match self {
            Mistake::UnlockDel => "unlocking with plain DEL",
            Mistake::UnlockGetThenDel => "unlocking with GET, then DEL in a second command",
            Mistake::NoValidityCheck => "skipping the validity check",
            Mistake::ExtensionAnyNode => "counting an extension on any node",
            Mistake::SharedToken => "one token value shared by the clients",
            Mistake::ReusedToken => "one token value reused across a client's retries",
            Mistake::LockstepRetries => {
                "retrying in lockstep (no random delay between rival rounds)"
            }
            Mistake::UnboundedExtensions => "extending without a cap",
            Mistake::MinorityQuorum => "counting a quorum of half the nodes or fewer",
            Mistake::TwoStepCheck => {
                "a storage that checks the token and applies the op in two steps"
            }
            Mistake::SequentialContact => "asking the nodes one after another",
        }
    }
}

impl Ingredient {
    /// Every ingredient, in the order reports list them: the faults, then the mistakes.
    pub fn all() -> impl Iterator<Item = Ingredient> {
        FaultKind::ALL
            .into_iter()
            .map(Ingredient::Fault)
            .chain(Mistake::ALL.into_iter().map(Ingredient::Mistake))
    }

    /// The kind of fault this ingredient is, or `None` for a mistake in the client.
    pub const fn fault(self) -> Option<FaultKind> {
        match self {
            Ingredient::Fault(kind) => Some(kind),
            Ingredient::Mistake(_) => None,
        }
    }

    /// The stable name, as JSON and `[expect] mechanism` spell it.
    pub const fn name(self) -> &'static str {
        match self {
            Ingredient::Fault(kind) => kind.name(),
            Ingredient::Mistake(mistake) => mistake.name(),
        }
    }

    /// The ingredient spelled `name`, if any.
    pub fn from_name(name: &str) -> Option<Ingredient> {
        Ingredient::all().find(|i| i.name() == name)
    }

    /// The ingredient in words, for sentences ("the clock jump", "unlocking with plain DEL").
    pub const fn phrase(self) -> &'static str {
        match self {
            Ingredient::Fault(kind) => kind.phrase(),
            Ingredient::Mistake(mistake) => mistake.phrase(),
        }
    }
}

impl std::fmt::Display for Ingredient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Ingredient {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}
