//! The one-node lemmas of the node-count argument (stated in [`super::reach`]), built from a
//! scenario and run after its verdicts, and each verdict's reach from theirs.

use crate::fault::FaultKind;
use crate::proto::{Contact, NodeSet, RoundDecision, UnlockMode, ValidityCheck};
use crate::scenario::{Ingredient, JumpTarget, Scenario, Tokens, Verdict, property};

use super::options::Check;
use super::reach::{Argument, ClientCounts, NodeCounts, Reach};
use super::report::Report;

impl Check {
    /// Fills each property's [`reach`](super::PropertyReport::reach) in `report`, a report of
    /// this check, running the one-node lemmas the module documentation states.
    pub(super) fn attach_reach(&self, report: &mut Report) {
        let nodes = self.scenario.lock.nodes();
        for property in &mut report.properties {
            property.reach = match (property.name.as_str(), property.verdict) {
                (property::MUTUAL_EXCLUSION, Verdict::Holds) => self.holds_reach(nodes),
                (property::MUTUAL_EXCLUSION, Verdict::Violated) => self.violated_reach(nodes),
                (property::STORAGE_SAFETY | property::NO_LOST_UPDATE, Verdict::Holds)
                    if report.split =>
                {
                    Reach {
                        nodes: NodeCounts::Every,
                        clients: ClientCounts::Checked,
                        argument: Argument::ChaosNodes,
                    }
                }
                _ => Reach::CHECKED,
            };
            if property.name == property::MUTUAL_EXCLUSION
                && report.cutoff
                && property.reach.argument == Argument::None
            {
                property.reach = Reach {
                    clients: ClientCounts::Any,
                    argument: Argument::PhantomClients,
                    ..Reach::CHECKED
                };
            }
        }
    }

    fn holds_reach(&self, nodes: usize) -> Reach {
        let Some(lemmas) = Lemmas::of(&self.scenario, !self.invariants.is_empty()) else {
            return Reach::CHECKED;
        };
        // Both lemmas keep two clients of any number: the projection drops the others.
        let any_clients = if self.scenario.lock.clients >= 2 {
            ClientCounts::Any
        } else {
            ClientCounts::Checked
        };
        if self.lemma(&lemmas.one_node) == Verdict::Holds {
            return Reach {
                nodes: NodeCounts::Every,
                clients: any_clients,
                argument: Argument::OneNode,
            };
        }
        if nodes.is_multiple_of(2)
            && faulted_nodes(&self.scenario) <= 1
            && self.lemma(&lemmas.without_node_faults) == Verdict::Holds
        {
            return Reach {
                nodes: NodeCounts::EveryEven,
                clients: any_clients,
                argument: Argument::SharedNodes,
            };
        }
        Reach::CHECKED
    }

    fn violated_reach(&self, nodes: usize) -> Reach {
        let Some(lemmas) = Lemmas::of(&self.scenario, !self.invariants.is_empty()) else {
            return Reach::CHECKED;
        };
        if !reaches_every_node(&self.scenario) {
            return Reach::CHECKED;
        }
        let every = |argument| Reach {
            nodes: NodeCounts::Every,
            clients: ClientCounts::Any,
            argument,
        };
        if self.lemma(&lemmas.mirror) == Verdict::Violated {
            return every(Argument::Mirror);
        }
        if self.scenario.lock.params.decision != RoundDecision::AtQuorum {
            return Reach::CHECKED;
        }
        // Odd `N` needs `L` (one node repeats it), even `N` needs `L½` (two nodes do).
        let (own, other, parity) = if nodes % 2 == 1 {
            (&lemmas.spread, &lemmas.spread_halved, NodeCounts::EveryOdd)
        } else {
            (&lemmas.spread_halved, &lemmas.spread, NodeCounts::EveryEven)
        };
        if self.lemma(own) != Verdict::Violated {
            return Reach::CHECKED;
        }
        if self.lemma(other) == Verdict::Violated {
            return every(Argument::Spread);
        }
        Reach {
            nodes: parity,
            clients: ClientCounts::Any,
            argument: Argument::Spread,
        }
    }

    /// Mutual exclusion's verdict on a lemma scenario, under this check's limits.
    fn lemma(&self, scenario: &Scenario) -> Verdict {
        let mut lemma = Check::new(scenario).threads(self.threads).reach(false);
        lemma.time_limit = self.time_limit;
        lemma.memory_limit = self.memory_limit;
        lemma
            .run()
            .property(property::MUTUAL_EXCLUSION)
            .map_or(Verdict::Incomplete, |p| p.verdict)
    }
}

/// The one-node scenarios of the node-count argument.
struct Lemmas {
    /// `S₁`.
    one_node: Scenario,
    /// `S₁⁰`.
    without_node_faults: Scenario,
    /// `S₁⁰` without message loss, with the scenario's own clients.
    mirror: Scenario,
    /// `L`.
    spread: Scenario,
    /// `L½`.
    spread_halved: Scenario,
}

impl Lemmas {
    /// The lemmas of an eligible scenario; `None` for one the argument does not cover.
    fn of(scenario: &Scenario, user_invariants: bool) -> Option<Lemmas> {
        let params = &scenario.lock.params;
        let eligible = !user_invariants
            && params.unlock == UnlockMode::CompareAndDelete
            && scenario.lock.token == Tokens::Unique
            && params.validity_check == ValidityCheck::On
            && scenario.lock.extensions == 0
            && scenario.storage.is_none()
            // The argument rests on two quorums sharing a node: a majority, for every client.
            && !scenario.lock.quorum_pinned()
            // A sequential round asks its nodes in an order, so the shared node's place in
            // it (how late it is asked) is not the one node's; not argued, so not claimed.
            && params.contact == Contact::Multiplexed
            // A client cut off from every node mid-run changes which nodes it reaches as the
            // run goes, which the projection onto one node is not argued for: not claimed.
            && !Ingredient::Fault(FaultKind::ClientPartition).is_in(scenario);
        if !eligible {
            return None;
        }
        let one_node = on_one_node(scenario, scenario.lock.clients.min(2))?;
        let without_node_faults = without_node_faults(&one_node);
        let mut mirror = without_node_faults_in(on_one_node(scenario, scenario.lock.clients)?);
        mirror.network.message_loss = 0;
        let mut spread = one_node.clone();
        spread.network.message_loss = 0;
        spread.lock.params.retry.attempts = 1;
        let spread_halved = halve_node_faults(&spread);
        Some(Lemmas {
            one_node,
            without_node_faults,
            mirror,
            spread,
            spread_halved,
        })
    }
}

/// The scenario on one node with `clients` clients, judging mutual exclusion alone. A jump
/// pinned to a node is pinned to the one node; a jump pinned to, or a crash aimed at, a client
/// past `clients`, to the first (the projection maps that client, when it is one of the two
/// kept, there); `None` when both are, since they may be two different clients.
fn on_one_node(scenario: &Scenario, clients: u8) -> Option<Scenario> {
    let mut one = scenario.clone();
    one.network.reach = vec![NodeSet::first(scenario.lock.nodes()); usize::from(clients)];
    one.lock.clients = clients;
    let aimed = one
        .faults
        .client_crashes
        .as_ref()
        .and_then(|c| c.aim.client);
    if let Some(jumps) = &mut one.faults.clock_jumps
        && let Some(index) = jumps.index
    {
        match jumps.target {
            JumpTarget::Node => jumps.index = Some(0),
            // Two pinned clients past the two kept could be any two of them: no lemma.
            _ if index >= clients && aimed.is_some() => return None,
            _ if index >= clients => jumps.index = Some(0),
            _ => {}
        }
    }
    if let Some(crashes) = &mut one.faults.client_crashes
        && let Some(client) = crashes.aim.client
        && client >= clients
    {
        if one
            .faults
            .clock_jumps
            .as_ref()
            .is_some_and(|j| j.index.is_some() && j.target != JumpTarget::Node)
        {
            return None;
        }
        crashes.aim.client = Some(0);
    }
    if one.liveness.client.is_some_and(|c| c >= clients) {
        one.liveness.client = None;
    }
    one.expect = vec![(property::MUTUAL_EXCLUSION.to_owned(), Verdict::Holds)];
    one.mechanism.clear();
    one.with_nodes(1).ok()
}

fn without_node_faults(scenario: &Scenario) -> Scenario {
    without_node_faults_in(scenario.clone())
}

/// A fault that strikes one node as a step of its own: what the node-count argument takes out
/// of `S₁⁰`, halves in `L½` and counts in a budget's reach.
#[derive(Clone, Copy)]
enum NodeFault {
    /// A clock jump that may hit a node (its target a node, or any process).
    Jump,
    /// A node's crash.
    Crash,
    /// The failover of the replicated master.
    Failover,
}

/// Whether `kind` strikes a node as a step of its own. No wildcard: a new kind does not build
/// until it is placed here, because a node fault the lemmas kept would let `S₁⁰` hold where the
/// argument needs it gone.
const fn node_fault(kind: FaultKind) -> Option<NodeFault> {
    match kind {
        FaultKind::ClockJump => Some(NodeFault::Jump),
        FaultKind::Crash => Some(NodeFault::Crash),
        FaultKind::Failover => Some(NodeFault::Failover),
        // A bound every node shares: the one node reads it as each node of the run did.
        FaultKind::NodeClockError => None,
        // The clients', the network's and the storage's: the projection keeps them.
        FaultKind::ClientCrash
        | FaultKind::ClientPartition
        | FaultKind::Pause
        | FaultKind::ClientClockError
        | FaultKind::MessageLoss
        | FaultKind::StorageDelay
        | FaultKind::Partition => None,
    }
}

/// The node faults, each with the kind it is.
fn node_faults() -> impl Iterator<Item = (FaultKind, NodeFault)> {
    FaultKind::ALL
        .into_iter()
        .filter_map(|kind| node_fault(kind).map(|fault| (kind, fault)))
}

/// `S₁⁰`: every node fault taken out (a jump budget that may also hit clients keeps those).
fn without_node_faults_in(mut scenario: Scenario) -> Scenario {
    for (kind, fault) in node_faults() {
        match fault {
            NodeFault::Crash | NodeFault::Failover => {
                scenario = Ingredient::Fault(kind).remove(&scenario);
            }
            NodeFault::Jump => {
                if let Some(jumps) = &scenario.faults.clock_jumps {
                    match jumps.target {
                        JumpTarget::Node => scenario.faults.clock_jumps = None,
                        JumpTarget::Any => {
                            let mut clients_only = jumps.clone();
                            clients_only.target = JumpTarget::Client;
                            scenario.faults.clock_jumps = Some(clients_only);
                        }
                        JumpTarget::Client => {}
                    }
                }
            }
        }
    }
    scenario
}

/// `L½`: every budget that may reach a node halved (n1's failover, on one node only, dropped),
/// so that two nodes can each repeat a run of it.
fn halve_node_faults(scenario: &Scenario) -> Scenario {
    let mut halved = scenario.clone();
    for (kind, fault) in node_faults() {
        match fault {
            NodeFault::Crash => {
                if let Some(crashes) = &mut halved.faults.crashes {
                    crashes.count /= 2;
                }
            }
            NodeFault::Jump => {
                if let Some(jumps) = &mut halved.faults.clock_jumps
                    && jumps.target != JumpTarget::Client
                {
                    // Jumps pinned to one node cannot happen on two, nor jumps whose listed
                    // sizes are used at most once: two nodes repeating a run would take each
                    // size twice.
                    jumps.count = if jumps.index.is_some() || jumps.jump_ticks.single().is_none() {
                        0
                    } else {
                        jumps.count / 2
                    };
                }
            }
            // n1's failover strikes one node, so two cannot repeat it; with a replica on every
            // node, failovers are a budget like crashes.
            NodeFault::Failover => match &mut halved.failover {
                Some(f) if f.every_node && f.failovers >= 2 => f.failovers /= 2,
                _ => halved = Ingredient::Fault(kind).remove(&halved),
            },
        }
    }
    halved
}

/// How many distinct nodes the node-fault budgets can reach in one run.
fn faulted_nodes(scenario: &Scenario) -> usize {
    let faults = &scenario.faults;
    node_faults()
        .map(|(_, fault)| match fault {
            NodeFault::Jump => faults
                .clock_jumps
                .as_ref()
                .filter(|j| j.target != JumpTarget::Client)
                .map_or(0, |j| {
                    if j.index.is_some() {
                        1
                    } else {
                        usize::from(j.count)
                    }
                }),
            NodeFault::Crash => faults.crashes.as_ref().map_or(0, |c| usize::from(c.count)),
            NodeFault::Failover => scenario.failover.as_ref().map_or(0, |f| {
                if f.every_node {
                    usize::from(f.failovers)
                } else {
                    1
                }
            }),
        })
        .sum()
}

fn reaches_every_node(scenario: &Scenario) -> bool {
    let all = NodeSet::first(scenario.lock.nodes());
    scenario.network.reach.iter().all(|r| *r == all)
}
