//! Ingredients: the faults and deliberate mistakes a scenario grants, each removable on its own.
//!
//! A violated property is explained by the ingredients it cannot do without. An ingredient is
//! one thing the file adds to the correct, fault-free algorithm: a fault budget (clock jumps,
//! node and client crashes, pauses, clock error, message loss, storage delay, a failover), a
//! mistake in the client (`unlock = "del"`, `validity_check = false`, `extension_quorum =
//! "any-node"`, `token = "shared"`, a `quorum` of half the nodes or fewer), a partition, or a
//! condition a liveness scenario teaches (rival rounds retried in lockstep, extensions without
//! a cap). [`Ingredient::remove`] turns a validated [`Scenario`] into the same scenario minus
//! that one thing (its budget set to zero, or the correct setting restored), so that
//! re-checking it answers "is this ingredient necessary?". Everything else — sizes, TTL,
//! drift, timeouts, persistence, restart delays, guards, margins — is configuration, not an
//! ingredient: removing it would not be "the same scenario without the fault".

use serde::{Serialize, Serializer};

use super::property::EVENTUALLY_ACQUIRED;
use super::{Bound, Scenario, Tokens, UNBOUNDED_EXTENSIONS};
use crate::fault::FaultKind;
use crate::proto::{Contact, ExtensionQuorum, NodeSet, UnlockMode, ValidityCheck};
use crate::storage::CheckAndApply;

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
    /// `[lock] validity_check = false`: no step-3 check, lease timed from T2.
    NoValidityCheck,
    /// `[lock] extension_quorum = "any-node"`: one node extending counts as success.
    ExtensionAnyNode,
    /// `[lock] token = "shared"`: every client draws the same token value.
    SharedToken,
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

/// The extensions a holder keeps when [`Mistake::UnboundedExtensions`] is removed: the cap
/// of the catalog's capped variant (`lock-extension-capped`).
const EXTENSION_CAP: u8 = 3;

impl Mistake {
    /// Every mistake, in the order reports list them.
    pub const ALL: [Mistake; 9] = [
        Mistake::UnlockDel,
        Mistake::NoValidityCheck,
        Mistake::ExtensionAnyNode,
        Mistake::SharedToken,
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
            Mistake::NoValidityCheck => "no validity check",
            Mistake::ExtensionAnyNode => "extension quorum = any-node",
            Mistake::SharedToken => "token = shared",
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
            Mistake::NoValidityCheck => "skipping the validity check",
            Mistake::ExtensionAnyNode => "counting an extension on any node",
            Mistake::SharedToken => "one token value shared by the clients",
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

    /// Whether `scenario` makes this mistake.
    fn is_in(self, scenario: &Scenario) -> bool {
        let params = &scenario.lock.params;
        match self {
            Mistake::UnlockDel => params.unlock == UnlockMode::PlainDel,
            Mistake::NoValidityCheck => params.validity_check == ValidityCheck::Off,
            Mistake::ExtensionAnyNode => {
                scenario.lock.extensions > 0 && params.extension_quorum == ExtensionQuorum::AnyNode
            }
            Mistake::SharedToken => scenario.lock.token == Tokens::Shared,
            // Only a liveness check with rivals can suffer from rounds that start together.
            Mistake::LockstepRetries => {
                scenario.expected(EVENTUALLY_ACQUIRED).is_some()
                    && scenario.lock.clients > 1
                    && !scenario.liveness.isolated_rounds
            }
            Mistake::UnboundedExtensions => scenario.lock.extensions == UNBOUNDED_EXTENSIONS,
            Mistake::MinorityQuorum => {
                let nodes = scenario.lock.nodes();
                scenario.lock.quorums().iter().any(|&q| 2 * q <= nodes)
            }
            Mistake::TwoStepCheck => scenario
                .storage
                .as_ref()
                .is_some_and(|s| s.check == CheckAndApply::TwoStep),
            Mistake::SequentialContact => params.contact == Contact::Sequential,
        }
    }

    /// Restores the correct setting in `s`.
    fn correct(self, s: &mut Scenario) {
        match self {
            Mistake::UnlockDel => s.lock.params.unlock = UnlockMode::CompareAndDelete,
            Mistake::NoValidityCheck => s.lock.params.validity_check = ValidityCheck::On,
            Mistake::ExtensionAnyNode => s.lock.params.extension_quorum = ExtensionQuorum::Majority,
            Mistake::SharedToken => s.lock.token = Tokens::Unique,
            Mistake::LockstepRetries => s.liveness.isolated_rounds = true,
            Mistake::UnboundedExtensions => s.lock.extensions = EXTENSION_CAP,
            // Every client counting half the nodes or fewer counts the majority instead.
            Mistake::MinorityQuorum => {
                let nodes = s.lock.nodes();
                let quorums: Vec<usize> = (s.lock.quorums().into_iter())
                    .map(|q| if 2 * q <= nodes { nodes / 2 + 1 } else { q })
                    .collect();
                s.lock.set_quorums(&quorums);
            }
            Mistake::TwoStepCheck => {
                if let Some(storage) = &mut s.storage {
                    storage.check = CheckAndApply::Atomic;
                }
            }
            Mistake::SequentialContact => s.lock.params.contact = Contact::Multiplexed,
        }
    }
}

/// Whether `scenario` grants fault `kind` (a budget above zero, a clock error, a reach that
/// leaves a node out, …).
fn grants(scenario: &Scenario, kind: FaultKind) -> bool {
    let faults = &scenario.faults;
    match kind {
        FaultKind::ClockJump => faults.clock_jumps.as_ref().is_some_and(|j| j.count > 0),
        FaultKind::Crash => faults.crashes.as_ref().is_some_and(|c| c.count > 0),
        FaultKind::ClientCrash => faults.client_crashes.as_ref().is_some_and(|c| c.count > 0),
        FaultKind::Pause => faults.pauses.as_ref().is_some_and(|p| p.count > 0),
        FaultKind::NodeClockError => scenario.clock.node_error_ticks > 0,
        FaultKind::ClientClockError => scenario.clock.client_error_ticks > 0,
        FaultKind::MessageLoss => scenario.network.message_loss > 0,
        FaultKind::StorageDelay => scenario
            .storage
            .as_ref()
            .is_some_and(|s| s.max_delay != Bound::Ticks(0)),
        FaultKind::Failover => scenario.failover.is_some(),
        FaultKind::Partition => {
            let all = NodeSet::first(scenario.lock.nodes());
            scenario.network.reach.iter().any(|&reach| reach != all)
        }
    }
}

/// Takes fault `kind` out of `s`: its budget set to zero, or the world without it.
fn withhold(s: &mut Scenario, kind: FaultKind) {
    match kind {
        FaultKind::ClockJump => s.faults.clock_jumps = None,
        // The guard only acts on restarted nodes, so no crash leaves nothing for it to do.
        FaultKind::Crash => s.faults.crashes = None,
        FaultKind::ClientCrash => s.faults.client_crashes = None,
        FaultKind::Pause => s.faults.pauses = None,
        FaultKind::NodeClockError => s.clock.node_error_ticks = 0,
        FaultKind::ClientClockError => s.clock.client_error_ticks = 0,
        FaultKind::MessageLoss => s.network.message_loss = 0,
        FaultKind::StorageDelay => {
            if let Some(storage) = &mut s.storage {
                storage.max_delay = Bound::Ticks(0);
            }
        }
        // n1 is a master that never fails, like the other nodes.
        FaultKind::Failover => s.failover = None,
        FaultKind::Partition => {
            let all = NodeSet::first(s.lock.nodes());
            s.network.reach = vec![all; s.lock.clients as usize];
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

    /// Whether `scenario` grants this ingredient (a budget above zero, or the mistake made).
    pub fn is_in(self, scenario: &Scenario) -> bool {
        match self {
            Ingredient::Fault(kind) => grants(scenario, kind),
            Ingredient::Mistake(mistake) => mistake.is_in(scenario),
        }
    }

    /// The ingredients `scenario` grants, in [`Ingredient::all`] order.
    pub fn present(scenario: &Scenario) -> Vec<Ingredient> {
        Ingredient::all().filter(|i| i.is_in(scenario)).collect()
    }

    /// `scenario` minus this ingredient: its budget set to zero, or the correct setting
    /// restored; everything else, `[expect]` included, stays as the file states it.
    pub fn remove(self, scenario: &Scenario) -> Scenario {
        let mut s = scenario.clone();
        match self {
            Ingredient::Fault(kind) => withhold(&mut s, kind),
            Ingredient::Mistake(mistake) => mistake.correct(&mut s),
        }
        s
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(body: &str) -> Scenario {
        let text = format!(
            "name = \"x\"\ntitle = \"t\"\nclaim = \"c\"\nsource = \"derived\"\nprose = \"p\"\n{body}\
             [expect]\n\"mutual exclusion\" = \"violated\"\n"
        );
        Scenario::from_str("s.toml", &text).unwrap()
    }

    #[test]
    fn names_round_trip_and_are_unique() {
        let names: std::collections::BTreeSet<&str> = Ingredient::all().map(|i| i.name()).collect();
        assert_eq!(names.len(), Ingredient::all().count());
        for i in Ingredient::all() {
            assert_eq!(Ingredient::from_name(i.name()), Some(i));
        }
        assert_eq!(Ingredient::from_name("jump"), None);
    }

    #[test]
    fn a_fault_free_correct_scenario_has_no_ingredient() {
        assert_eq!(Ingredient::present(&parse("")), vec![]);
    }

    #[test]
    fn a_minority_quorum_of_one_client_is_the_mistake_and_its_removal_keeps_the_others() {
        let minority = |s: &Scenario| {
            Ingredient::present(s).contains(&Ingredient::Mistake(Mistake::MinorityQuorum))
        };
        // All nodes for c1, the majority for c2: no mistake, a stricter count is not one.
        assert!(!minority(&parse("[lock]\nnodes = 3\nquorum = [3, 2]\n")));
        let s = parse("[lock]\nnodes = 3\nclients = 3\nquorum = [3, 1, 2]\n");
        assert!(minority(&s));
        let without = Ingredient::Mistake(Mistake::MinorityQuorum).remove(&s);
        assert_eq!(without.lock.quorums(), [3, 2, 2]);
        assert!(!minority(&without));
    }

    #[test]
    fn removing_an_ingredient_removes_exactly_it() {
        let s = parse(
            "[lock]\nnodes = 4\nquorum = 2\nunlock = \"del\"\nvalidity_check = false\n\
             [clock]\nnode_error_ticks = 1\n[network]\nreach = [[1, 2], [2, 3]]\n\
             [faults.clock_jumps]\njump_ticks = 2\n[faults.crashes]\nrestart_delay_ticks = 3\n",
        );
        let present = Ingredient::present(&s);
        assert_eq!(
            present,
            vec![
                Ingredient::Fault(FaultKind::ClockJump),
                Ingredient::Fault(FaultKind::Crash),
                Ingredient::Fault(FaultKind::NodeClockError),
                Ingredient::Fault(FaultKind::Partition),
                Ingredient::Mistake(Mistake::UnlockDel),
                Ingredient::Mistake(Mistake::NoValidityCheck),
                Ingredient::Mistake(Mistake::MinorityQuorum),
            ]
        );
        for i in present.iter().copied() {
            let without = i.remove(&s);
            let left: Vec<Ingredient> = present.iter().copied().filter(|&j| j != i).collect();
            assert_eq!(Ingredient::present(&without), left, "{i}");
            assert_eq!(
                (without.expect.clone(), without.lock.params.ttl),
                (s.expect.clone(), s.lock.params.ttl)
            );
        }
    }
}
