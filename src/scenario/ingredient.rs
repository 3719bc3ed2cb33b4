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
use crate::proto::{ExtensionQuorum, NodeSet, UnlockMode, ValidityCheck};
use crate::storage::CheckAndApply;

/// One removable fault or mistake. The names ([`Ingredient::name`]) are part of the JSON report
/// and of the `[expect] mechanism` key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Ingredient {
    /// `[faults.clock_jumps]`: a process's clock steps.
    ClockJump,
    /// `[faults.crashes]`: a node crashes.
    Crash,
    /// `[faults.client_crashes]`: a client dies for good, without unlocking.
    ClientCrash,
    /// `[faults.pauses]`: a holder pauses between its check and its storage op.
    Pause,
    /// `[clock] node_error_ticks`: a node's key may vanish early.
    NodeClockError,
    /// `[clock] client_error_ticks`: a client's belief may run late.
    ClientClockError,
    /// `[network] message_loss`: requests may be lost.
    MessageLoss,
    /// `[storage] max_delay_ticks`: a storage op may travel.
    StorageDelay,
    /// `[failover]`: the master n1 fails and its replica is promoted.
    Failover,
    /// `[lock] unlock = "del"`: release with plain `DEL`.
    UnlockDel,
    /// `[lock] validity_check = false`: no step-3 check, lease timed from T2.
    NoValidityCheck,
    /// `[lock] extension_quorum = "any-node"`: one node extending counts as success.
    ExtensionAnyNode,
    /// `[network] reach`: some client cannot reach some node.
    Partition,
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
}

/// The extensions a holder keeps when [`Ingredient::UnboundedExtensions`] is removed: the cap
/// of the catalog's capped variant (`lock-extension-capped`).
const EXTENSION_CAP: u8 = 3;

/// An ingredient as what it is: a kind of fault (its words are the kind's), or a mistake in
/// the client with its name and its phrase.
enum Grant {
    Fault(FaultKind),
    Mistake(&'static str, &'static str),
}

impl Ingredient {
    /// Every ingredient, in the order reports list them.
    pub const ALL: [Ingredient; 18] = [
        Ingredient::ClockJump,
        Ingredient::Crash,
        Ingredient::ClientCrash,
        Ingredient::Pause,
        Ingredient::NodeClockError,
        Ingredient::ClientClockError,
        Ingredient::MessageLoss,
        Ingredient::StorageDelay,
        Ingredient::Failover,
        Ingredient::UnlockDel,
        Ingredient::NoValidityCheck,
        Ingredient::ExtensionAnyNode,
        Ingredient::Partition,
        Ingredient::SharedToken,
        Ingredient::LockstepRetries,
        Ingredient::UnboundedExtensions,
        Ingredient::MinorityQuorum,
        Ingredient::TwoStepCheck,
    ];

    /// What the ingredient is: a kind of fault, with its words in [`FaultKind`], or a mistake
    /// in the client, with its name and its phrase.
    const fn grant(self) -> Grant {
        match self {
            Ingredient::ClockJump => Grant::Fault(FaultKind::ClockJump),
            Ingredient::Crash => Grant::Fault(FaultKind::Crash),
            Ingredient::ClientCrash => Grant::Fault(FaultKind::ClientCrash),
            Ingredient::Pause => Grant::Fault(FaultKind::Pause),
            Ingredient::NodeClockError => Grant::Fault(FaultKind::NodeClockError),
            Ingredient::ClientClockError => Grant::Fault(FaultKind::ClientClockError),
            Ingredient::MessageLoss => Grant::Fault(FaultKind::MessageLoss),
            Ingredient::StorageDelay => Grant::Fault(FaultKind::StorageDelay),
            Ingredient::Failover => Grant::Fault(FaultKind::Failover),
            Ingredient::Partition => Grant::Fault(FaultKind::Partition),
            Ingredient::UnlockDel => Grant::Mistake("unlock = del", "unlocking with plain DEL"),
            Ingredient::NoValidityCheck => {
                Grant::Mistake("no validity check", "skipping the validity check")
            }
            Ingredient::ExtensionAnyNode => Grant::Mistake(
                "extension quorum = any-node",
                "counting an extension on any node",
            ),
            Ingredient::SharedToken => {
                Grant::Mistake("token = shared", "one token value shared by the clients")
            }
            // Conditions a liveness scenario teaches, not faults: naming them lets `--why` say
            // what the scenario is about instead of "no fault" or the partition that frames it.
            Ingredient::LockstepRetries => Grant::Mistake(
                "lockstep retries",
                "retrying in lockstep (no random delay between rival rounds)",
            ),
            Ingredient::UnboundedExtensions => {
                Grant::Mistake("unbounded extensions", "extending without a cap")
            }
            Ingredient::MinorityQuorum => Grant::Mistake(
                "quorum below majority",
                "counting a quorum of half the nodes or fewer",
            ),
            Ingredient::TwoStepCheck => Grant::Mistake(
                "storage check = two-step",
                "a storage that checks the token and applies the op in two steps",
            ),
        }
    }

    /// The kind of fault this ingredient is, or `None` for a mistake in the client.
    pub const fn fault(self) -> Option<FaultKind> {
        match self.grant() {
            Grant::Fault(kind) => Some(kind),
            Grant::Mistake(..) => None,
        }
    }

    /// The stable name, as JSON and `[expect] mechanism` spell it.
    pub const fn name(self) -> &'static str {
        match self.grant() {
            Grant::Fault(kind) => kind.name(),
            Grant::Mistake(name, _) => name,
        }
    }

    /// The ingredient spelled `name`, if any.
    pub fn from_name(name: &str) -> Option<Ingredient> {
        Ingredient::ALL.into_iter().find(|i| i.name() == name)
    }

    /// The ingredient in words, for sentences ("the clock jump", "unlocking with plain DEL").
    pub const fn phrase(self) -> &'static str {
        match self.grant() {
            Grant::Fault(kind) => kind.phrase(),
            Grant::Mistake(_, phrase) => phrase,
        }
    }

    /// Whether `scenario` grants this ingredient (a budget above zero, or the mistake made).
    pub fn is_in(self, scenario: &Scenario) -> bool {
        let faults = &scenario.faults;
        match self {
            Ingredient::ClockJump => faults.clock_jumps.as_ref().is_some_and(|j| j.count > 0),
            Ingredient::Crash => faults.crashes.as_ref().is_some_and(|c| c.count > 0),
            Ingredient::ClientCrash => faults.client_crashes.as_ref().is_some_and(|c| c.count > 0),
            Ingredient::Pause => faults.pauses.as_ref().is_some_and(|p| p.count > 0),
            Ingredient::NodeClockError => scenario.clock.node_error_ticks > 0,
            Ingredient::ClientClockError => scenario.clock.client_error_ticks > 0,
            Ingredient::MessageLoss => scenario.network.message_loss > 0,
            Ingredient::StorageDelay => scenario
                .storage
                .as_ref()
                .is_some_and(|s| s.max_delay != Bound::Ticks(0)),
            Ingredient::Failover => scenario.failover.is_some(),
            Ingredient::UnlockDel => scenario.lock.params.unlock == UnlockMode::PlainDel,
            Ingredient::NoValidityCheck => {
                scenario.lock.params.validity_check == ValidityCheck::Off
            }
            Ingredient::ExtensionAnyNode => {
                scenario.lock.extensions > 0
                    && scenario.lock.params.extension_quorum == ExtensionQuorum::AnyNode
            }
            Ingredient::Partition => {
                let all = NodeSet::first(scenario.lock.nodes());
                scenario.network.reach.iter().any(|&reach| reach != all)
            }
            Ingredient::SharedToken => scenario.lock.token == Tokens::Shared,
            // Only a liveness check with rivals can suffer from rounds that start together.
            Ingredient::LockstepRetries => {
                scenario.expected(EVENTUALLY_ACQUIRED).is_some()
                    && scenario.lock.clients > 1
                    && !scenario.liveness.isolated_rounds
            }
            Ingredient::UnboundedExtensions => scenario.lock.extensions == UNBOUNDED_EXTENSIONS,
            Ingredient::MinorityQuorum => {
                2 * scenario.lock.params.quorum() <= scenario.lock.nodes()
            }
            Ingredient::TwoStepCheck => scenario
                .storage
                .as_ref()
                .is_some_and(|s| s.check == CheckAndApply::TwoStep),
        }
    }

    /// The ingredients `scenario` grants, in [`Ingredient::ALL`] order.
    pub fn present(scenario: &Scenario) -> Vec<Ingredient> {
        Ingredient::ALL
            .into_iter()
            .filter(|i| i.is_in(scenario))
            .collect()
    }

    /// `scenario` minus this ingredient: its budget set to zero, or the correct setting
    /// restored; everything else, `[expect]` included, stays as the file states it.
    pub fn remove(self, scenario: &Scenario) -> Scenario {
        let mut s = scenario.clone();
        match self {
            Ingredient::ClockJump => s.faults.clock_jumps = None,
            // The guard only acts on restarted nodes, so no crash leaves nothing for it to do.
            Ingredient::Crash => s.faults.crashes = None,
            Ingredient::ClientCrash => s.faults.client_crashes = None,
            Ingredient::Pause => s.faults.pauses = None,
            Ingredient::NodeClockError => s.clock.node_error_ticks = 0,
            Ingredient::ClientClockError => s.clock.client_error_ticks = 0,
            Ingredient::MessageLoss => s.network.message_loss = 0,
            Ingredient::StorageDelay => {
                if let Some(storage) = &mut s.storage {
                    storage.max_delay = Bound::Ticks(0);
                }
            }
            // n1 is a master that never fails, like the other nodes.
            Ingredient::Failover => s.failover = None,
            Ingredient::UnlockDel => s.lock.params.unlock = UnlockMode::CompareAndDelete,
            Ingredient::NoValidityCheck => s.lock.params.validity_check = ValidityCheck::On,
            Ingredient::ExtensionAnyNode => {
                s.lock.params.extension_quorum = ExtensionQuorum::Majority
            }
            Ingredient::Partition => {
                let all = NodeSet::first(s.lock.nodes());
                s.network.reach = vec![all; s.lock.clients as usize];
            }
            Ingredient::SharedToken => s.lock.token = Tokens::Unique,
            Ingredient::LockstepRetries => s.liveness.isolated_rounds = true,
            Ingredient::UnboundedExtensions => s.lock.extensions = EXTENSION_CAP,
            Ingredient::MinorityQuorum => s.lock.params.quorum = None,
            Ingredient::TwoStepCheck => {
                if let Some(storage) = &mut s.storage {
                    storage.check = CheckAndApply::Atomic;
                }
            }
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
        for i in Ingredient::ALL {
            assert_eq!(Ingredient::from_name(i.name()), Some(i));
        }
        assert_eq!(Ingredient::from_name("jump"), None);
    }

    #[test]
    fn every_fault_kind_is_an_ingredient_with_its_words() {
        for kind in FaultKind::ALL {
            let ingredient = Ingredient::ALL
                .into_iter()
                .find(|i| i.fault() == Some(kind))
                .unwrap_or_else(|| panic!("{kind} is no ingredient"));
            assert_eq!(
                (ingredient.name(), ingredient.phrase()),
                (kind.name(), kind.phrase())
            );
        }
    }

    #[test]
    fn a_fault_free_correct_scenario_has_no_ingredient() {
        assert_eq!(Ingredient::present(&parse("")), vec![]);
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
                Ingredient::ClockJump,
                Ingredient::Crash,
                Ingredient::NodeClockError,
                Ingredient::UnlockDel,
                Ingredient::NoValidityCheck,
                Ingredient::Partition,
                Ingredient::MinorityQuorum,
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
