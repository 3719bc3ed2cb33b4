//! How far a verdict reaches: for which numbers of nodes and clients it holds, and on which
//! argument.
//!
//! # The node-count argument
//!
//! It covers mutual exclusion in the safety run of a scenario whose clients unlock with
//! compare-and-delete and unique tokens, with the validity check on, the majority quorum (for
//! every client: a file whose clients count different quorums is checked at its size only), no
//! extensions, no storage and no user invariant (the *eligible* scenarios). Write `S[N]` for the scenario
//! with `N` nodes ([`Scenario::with_nodes`]) and `Q = N/2 + 1`. Three one-node scenarios
//! are its lemmas, each settled exhaustively by the checker:
//!
//! - `S₁`: one node, two clients, every fault budget as written (a jump pinned to a node is
//!   pinned to the one node, and one pinned to a client the two do not include to the first);
//! - `S₁⁰`: `S₁` without node faults (node clock jumps, crashes, failover);
//! - `L`: `S₁` with one round per client and no message loss (and `L½`: `L` with the
//!   node-fault budgets halved).
//!
//! **A violation needs nodes that both clients hold.** Take a run of `S[N]` in which clients
//! `i` and `j` believe at once, at true time `t`. Each won a round whose yes answers it
//! counted came from at least `Q` nodes, so at least `2Q − N` nodes (one for odd `N`, two for
//! even `N`) applied both clients' `SET`s. Pick one, `n`. Keep from the run only node `n`,
//! the two winning rounds (begun at the same times) and the faults of `n`, `i` and `j`: this
//! is a run of `S₁` (a client may wait before it begins, and a round with one node is
//! decided on `n`'s answer). On `n` the same keys come and go: the clients left out only
//! ever touched their own keys (compare-and-delete, unique tokens), so `n` is never less
//! free. Each client decides at `n`'s answer, no later than before, and its deadline
//! `T1 + ttl − drift` does not depend on when it decides, so both still believe at `t`.
//! Hence:
//!
//! - **If `S₁` holds, `S[N]` holds for every `N`, and any number of clients** (the run kept
//!   only `i` and `j`) — [`Argument::OneNode`].
//! - **If `S₁⁰` holds**, every node that both clients held had a node fault in that run, so
//!   a violation needs `2Q − N` nodes with node faults. A budget that reaches at most one
//!   node (one jump, or jumps pinned to one node, or one crash, or one failover) therefore
//!   **cannot break any even `N`, with any number of clients** — [`Argument::SharedNodes`]:
//!   an even number of masters tolerates one bad node that an odd number does not.
//!
//! **A violation spreads over any number of nodes.** Conversely, for scenarios whose clients
//! reach every node:
//!
//! - **If `S₁⁰` without message loss is violated, `S[N]` is violated for every `N`**: let
//!   every node repeat the one node's run (the same deliveries at the same instants, the same
//!   clock), so every round gets `N` equal answers and is decided alike, at the same time,
//!   with no fault budget spent on nodes — [`Argument::Mirror`].
//! - **If `L` is violated and rounds are decided at quorum, `S[N]` is violated for every odd
//!   `N`** (and, if `L½` is violated, for every even `N`): let `2Q − N` nodes repeat `L`'s
//!   node with its faults, and split the other `2(N − Q)` evenly between the client whose
//!   `SET` reached `n` first and the other. A node of the first client applies its `SET`
//!   when `n` did and refuses the second client's (held until the first key is there — the
//!   network may hold a request as long as it likes; the first key outlives the second `SET`,
//!   or `S₁⁰` would be violated); a node of the second client holds the first client's `SET`
//!   in flight until the second key is there. Each client counts `Q` yeses when it counted
//!   `n`'s, and deciding at quorum it does not wait for the rest — [`Argument::Spread`].
//!
//! `lemmas.rs` builds the lemmas and runs them after the verdicts ([`Check::reach`]).
//! Outside these cases a verdict is the configuration's own. The claims are cross-checked by
//! `tests/sizes.rs` on every eligible catalog scenario at `N = 3…7`, where they must agree
//! with the checker run at each size.
//!
//! The quorum half (intersection, one key per node, the budget, with the per-node lemma as an
//! axiom) is also discharged by an SMT solver for sorts of any size: `tests/proofs/quorum.smt2`,
//! run by `tests/quorum_proof.rs`.
//!
//! Two more arguments are stated where the checker uses them: two clients with phantom
//! refusals stand for any number ([`RedlockModel::with_phantom_clients`]), and one node that
//! answers anything stands for any number of nodes for the storage properties
//! ([`RedlockModel::with_chaos_nodes`]).
//!
//! [`Scenario::with_nodes`]: crate::scenario::Scenario::with_nodes
//! [`Check::reach`]: super::Check::reach
//! [`RedlockModel::with_phantom_clients`]: crate::model::RedlockModel::with_phantom_clients
//! [`RedlockModel::with_chaos_nodes`]: crate::model::RedlockModel::with_chaos_nodes

use serde::Serialize;

use crate::plural::count;
use crate::scenario::Verdict;

/// The numbers of nodes a verdict covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NodeCounts {
    /// Only the number checked.
    Checked,
    /// Every number of nodes.
    Every,
    /// Every odd number of nodes.
    EveryOdd,
    /// Every even number of nodes.
    EveryEven,
}

/// The numbers of clients a verdict covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClientCounts {
    /// Only the number checked.
    Checked,
    /// Any number of clients (for a violation: two or more, the others never starting).
    Any,
}

/// The argument that carries a verdict past the configuration checked (see the module
/// documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Argument {
    /// None: the verdict is the configuration's own.
    None,
    /// The one-node scenario holds, and every violation projects onto one node.
    OneNode,
    /// Two majorities of an even number share two nodes, and the budget faults at most one.
    SharedNodes,
    /// A violation without node faults on one node happens on every node at once.
    Mirror,
    /// A one-node violation spread over one node (two for even `N`) and the two clients' own.
    Spread,
    /// Two clients with phantom refusals stand for any number.
    PhantomClients,
    /// One node that answers anything stands for any number (the storage properties).
    ChaosNodes,
}

/// For which sizes a verdict is proved, and by which argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Reach {
    /// The numbers of nodes.
    pub nodes: NodeCounts,
    /// The numbers of clients.
    pub clients: ClientCounts,
    /// The argument.
    pub argument: Argument,
}

impl Reach {
    /// The configuration checked, and nothing more.
    pub const CHECKED: Reach = Reach {
        nodes: NodeCounts::Checked,
        clients: ClientCounts::Checked,
        argument: Argument::None,
    };

    /// Whether the verdict covers `nodes` nodes (`checked` being the number the file has).
    pub fn covers_nodes(&self, nodes: usize, checked: usize) -> bool {
        match self.nodes {
            NodeCounts::Checked => nodes == checked,
            NodeCounts::Every => true,
            NodeCounts::EveryOdd => nodes % 2 == 1,
            NodeCounts::EveryEven => nodes.is_multiple_of(2),
        }
    }
}

impl Reach {
    /// The sizes in words, for a verdict checked with `nodes` nodes and `clients` clients:
    /// "every odd number of nodes and two or more clients", "3 nodes and 2 clients only".
    pub fn describe(&self, verdict: Verdict, nodes: usize, clients: usize) -> String {
        let node_words = match self.nodes {
            NodeCounts::Checked => count(nodes, "node", "nodes"),
            NodeCounts::Every => "every number of nodes".to_owned(),
            NodeCounts::EveryOdd => "every odd number of nodes".to_owned(),
            NodeCounts::EveryEven => "every even number of nodes".to_owned(),
        };
        let client_words = match (self.clients, verdict) {
            (ClientCounts::Checked, _) => count(clients, "client", "clients"),
            (ClientCounts::Any, Verdict::Violated) => "two or more clients".to_owned(),
            (ClientCounts::Any, _) => "any number of clients".to_owned(),
        };
        let only = if *self == Reach::CHECKED { " only" } else { "" };
        format!("{node_words} and {client_words}{only}")
    }
}

impl Reach {
    /// The sizes in a table cell, `N` nodes and `C` clients: "all N, any C", "odd N, C≥2",
    /// "N=3, C=2" (the scenario table of `docs/scenarios.md` and `check`'s "proved for" column).
    pub fn short(&self, verdict: Verdict, nodes: usize, clients: usize) -> String {
        let node_words = match self.nodes {
            NodeCounts::Checked => format!("N={nodes}"),
            NodeCounts::Every => "all N".to_owned(),
            NodeCounts::EveryOdd => "odd N".to_owned(),
            NodeCounts::EveryEven => "even N".to_owned(),
        };
        let client_words = match (self.clients, verdict) {
            (ClientCounts::Checked, _) => format!("C={clients}"),
            (ClientCounts::Any, Verdict::Violated) => "C≥2".to_owned(),
            (ClientCounts::Any, _) => "any C".to_owned(),
        };
        format!("{node_words}, {client_words}")
    }
}

impl Argument {
    /// The argument in one line, for `explain`.
    pub fn sentence(self) -> &'static str {
        match self {
            Argument::None => "no argument carries it past the configuration checked",
            Argument::OneNode => {
                "the same scenario on one node holds, and a violation on any number of nodes \
                 would be one there (on a node both clients hold)"
            }
            Argument::SharedNodes => {
                "two majorities of an even number of nodes share two nodes, each would need a \
                 node fault, and the budget reaches only one node"
            }
            Argument::Mirror => {
                "the one-node violation needs no node fault, so every node can repeat it at once"
            }
            Argument::Spread => {
                "the one-node violation repeats on the nodes two majorities share, and the \
                 others split between the two clients"
            }
            Argument::PhantomClients => {
                "two clients with phantom refusals stand for any number of clients"
            }
            Argument::ChaosNodes => "one node that answers anything stands for any number of nodes",
        }
    }
}
