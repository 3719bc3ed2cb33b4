//! Which ingredients a scenario grants, and the same scenario without one of them: the
//! [`Ingredient`] vocabulary read against a [`Scenario`]'s settings.

use super::ingredient::{Ingredient, Mistake};
use super::property::EVENTUALLY_ACQUIRED;
use super::{Bound, Scenario, Tokens, UNBOUNDED_EXTENSIONS};
use crate::fault::FaultKind;
use crate::proto::{Contact, ExtensionQuorum, NodeSet, RetryToken, UnlockMode, ValidityCheck};
use crate::storage::CheckAndApply;

/// The extensions a holder keeps when [`Mistake::UnboundedExtensions`] is removed: the cap
/// of the catalog's capped variant (`lock-extension-capped`).
const EXTENSION_CAP: u8 = 3;

impl Mistake {
    /// Whether `scenario` makes this mistake.
    fn is_in(self, scenario: &Scenario) -> bool {
        let params = &scenario.lock.params;
        match self {
            Mistake::UnlockDel => params.unlock == UnlockMode::PlainDel,
            Mistake::UnlockGetThenDel => params.unlock == UnlockMode::GetThenDel,
            Mistake::NoValidityCheck => params.validity_check != ValidityCheck::On,
            Mistake::ExtensionAnyNode => {
                scenario.lock.extensions > 0 && params.extension_quorum == ExtensionQuorum::AnyNode
            }
            Mistake::SharedToken => scenario.lock.token == Tokens::Shared,
            // A value kept across attempts matters only to a client that retries.
            Mistake::ReusedToken => {
                params.retry_token == RetryToken::Kept && params.retry.attempts > 1
            }
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
            Mistake::UnlockDel | Mistake::UnlockGetThenDel => {
                s.lock.params.unlock = UnlockMode::CompareAndDelete;
            }
            Mistake::NoValidityCheck => s.lock.params.validity_check = ValidityCheck::On,
            Mistake::ExtensionAnyNode => s.lock.params.extension_quorum = ExtensionQuorum::Majority,
            Mistake::SharedToken => s.lock.token = Tokens::Unique,
            Mistake::ReusedToken => {
                s.lock.token = Tokens::Unique;
                s.lock.params.retry_token = RetryToken::Fresh;
            }
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
        FaultKind::ClientPartition => faults
            .client_partitions
            .as_ref()
            .is_some_and(|c| c.count > 0),
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
        FaultKind::ClientPartition => s.faults.client_partitions = None,
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
