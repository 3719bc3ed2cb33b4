//! What the zone engine reads from a scenario, and what it refuses by name.

use crate::node::{NodeState, Persistence};
use crate::proto::{Guard, LockParams, Relation, RoundDecision, UnlockMode, ValidityCheck};
use crate::scenario::{JumpTarget, Scenario, Tokens};
use crate::time::Millis;

use super::dbm::MAX_DIM;

/// The most nodes a configuration may have (one bit each in the discrete part's masks).
pub const MAX_NODES: usize = 7;
/// The most clients a configuration may have.
pub const MAX_CLIENTS: usize = 3;

/// A scenario the zone engine cannot represent, with what it lacks.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unsupported {
    /// A setting the engine does not model.
    #[error("the zone engine does not model {0}")]
    Feature(&'static str),
    /// More clocks than a zone holds.
    #[error(
        "the zone engine holds at most {max} clocks, and {nodes} nodes and {clients} clients need {needed}"
    )]
    TooManyClocks {
        /// Nodes in the scenario.
        nodes: usize,
        /// Clients in the scenario.
        clients: usize,
        /// Clocks they need.
        needed: usize,
        /// Clocks a zone holds.
        max: usize,
    },
}

/// The timed automaton's configuration: the lock as the core resolved it, and the faults.
///
/// Every timing decision is one of the core's [`Guard`]s, read here once; the engine turns
/// each into a clock constraint and never restates the arithmetic behind it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZoneConfig {
    /// Nodes (`N`).
    pub nodes: usize,
    /// Clients, each making one attempt.
    pub clients: usize,
    /// `N/2 + 1`, from the core.
    pub quorum: u32,
    /// A round that won a quorum keeps validity while this holds on the client's clock.
    pub validity: Guard,
    /// A round stops waiting once this holds on the client's clock.
    pub round_timeout: Guard,
    /// A holder believes while this holds on its clock (read up to `client_error` late).
    pub belief: Guard,
    /// A node's key lives while this holds on the node's clock (read up to `node_error` early).
    pub key_live: Guard,
    /// Whether a round may be decided as soon as a quorum applied.
    pub at_quorum: bool,
    /// The nodes each client reaches, one bit per node.
    pub reach: Vec<u8>,
    /// Clock jumps in the whole run.
    pub jumps: u8,
    /// The forward step of a jump, in ticks.
    pub jump_ticks: i32,
    /// Whether nodes' clocks may jump.
    pub node_jumps: bool,
    /// Whether clients' clocks may jump.
    pub client_jumps: bool,
    /// The one node that may jump, if the scenario pins it.
    pub jump_node: Option<usize>,
    /// The one client that may jump, if the scenario pins it.
    pub jump_client: Option<usize>,
    /// Node crashes in the whole run.
    pub crashes: u8,
    /// Whether a crashed node keeps its key (`fsync-always`; `none` loses it).
    pub keeps_keys: bool,
    /// Whether a crashed node comes back.
    pub restarts: bool,
    /// A restarted node serves once this holds on its clock (read up to `node_error` early).
    pub restart_delay: Guard,
    /// `ε_n`: how far ahead a node's clock may read when it serves a request, in ticks.
    pub node_error: i32,
    /// `ε_c`: how far behind a client's clock may read when it judges its belief, in ticks.
    pub client_error: i32,
}

/// Fails with `what` when `unsupported` holds.
fn refuse(unsupported: bool, what: &'static str) -> Result<(), Unsupported> {
    if unsupported {
        Err(Unsupported::Feature(what))
    } else {
        Ok(())
    }
}

/// A tick count as the zone's constant type.
fn ticks(value: impl TryInto<i32>) -> Result<i32, Unsupported> {
    value
        .try_into()
        .map_err(|_| Unsupported::Feature("constants beyond 2³¹ ticks"))
}

impl ZoneConfig {
    /// Reads a scenario, refusing by name whatever the engine does not model.
    pub fn from_scenario(scenario: &Scenario) -> Result<ZoneConfig, Unsupported> {
        Self::refuse_lock(scenario)?;
        Self::refuse_environment(scenario)?;
        let params = &scenario.lock.params;
        let nodes = scenario.lock.nodes();
        let clients = usize::from(scenario.lock.clients);
        let needed = nodes + clients + 1;
        if nodes > MAX_NODES || clients > MAX_CLIENTS || needed > MAX_DIM {
            return Err(Unsupported::TooManyClocks {
                nodes,
                clients,
                needed: needed - 1,
                max: MAX_DIM - 1,
            });
        }
        let all = ((1u16 << nodes) - 1) as u8;
        let reach = (0..clients)
            .map(|c| {
                scenario
                    .network
                    .reach
                    .get(c)
                    .map_or(all, |set| set.bits() as u8)
            })
            .collect();
        let mut config = ZoneConfig {
            nodes,
            clients,
            quorum: params.quorum() as u32,
            validity: params.validity_guard(),
            round_timeout: params.round_timeout_guard(),
            belief: params.belief_guard(),
            key_live: params.key_live_guard(),
            at_quorum: params.decision == RoundDecision::AtQuorum,
            reach,
            jumps: 0,
            jump_ticks: 0,
            node_jumps: false,
            client_jumps: false,
            jump_node: None,
            jump_client: None,
            crashes: 0,
            keeps_keys: false,
            restarts: true,
            restart_delay: NodeState::restart_delay_guard(Millis::ZERO),
            node_error: ticks(scenario.clock.node_error_ticks)?,
            client_error: ticks(scenario.clock.client_error_ticks)?,
        };
        config.read_faults(scenario)?;
        Ok(config)
    }

    /// The lock settings the engine does not model.
    fn refuse_lock(scenario: &Scenario) -> Result<(), Unsupported> {
        let lock = &scenario.lock;
        let params: &LockParams = &lock.params;
        refuse(lock.attempts() != 1, "more than one attempt")?;
        refuse(
            params.unlock != UnlockMode::CompareAndDelete,
            "unlock = del",
        )?;
        refuse(
            params.validity_check != ValidityCheck::On,
            "validity_check = false",
        )?;
        refuse(lock.extensions != 0, "extensions")?;
        // Mutual exclusion is judged on upper bounds of the holders' clocks.
        refuse(
            params.belief_guard().relation != Relation::Below,
            "a belief that is not a span below a bound",
        )?;
        refuse(lock.token != Tokens::Unique, "token = shared")?;
        Ok(())
    }

    /// The environment the engine does not model.
    fn refuse_environment(scenario: &Scenario) -> Result<(), Unsupported> {
        refuse(scenario.network.message_loss != 0, "message loss")?;
        refuse(scenario.storage.is_some(), "storage")?;
        refuse(scenario.failover.is_some(), "failover")?;
        refuse(
            scenario
                .expected(crate::scenario::property::EVENTUALLY_ACQUIRED)
                .is_some(),
            "liveness (`eventually acquired`)",
        )?;
        let faults = &scenario.faults;
        refuse(
            faults.client_crashes.as_ref().is_some_and(|c| c.count > 0),
            "client crashes",
        )?;
        // Pauses act only between a lease check and a storage op, and there is no storage.
        refuse(
            faults.pauses.as_ref().is_some_and(|p| p.count > 0),
            "pauses",
        )?;
        Ok(())
    }

    /// The crash and clock-jump budgets.
    fn read_faults(&mut self, scenario: &Scenario) -> Result<(), Unsupported> {
        let faults = &scenario.faults;
        if let Some(c) = faults.crashes.as_ref().filter(|c| c.count > 0) {
            refuse(
                c.persistence == Persistence::FsyncPeriodic,
                "persistence = fsync-periodic",
            )?;
            refuse(c.client_guard_ticks > 0, "the restarted-node guard")?;
            self.keeps_keys = c.persistence == Persistence::FsyncAlways;
            // The restart delay runs on the key's clock, free because the key was lost.
            refuse(
                self.keeps_keys && c.restart && c.restart_delay_ticks > 0,
                "a restart delay with fsync-always persistence",
            )?;
            self.crashes = c.count;
            self.restarts = c.restart;
            ticks(c.restart_delay_ticks)?;
            self.restart_delay =
                NodeState::restart_delay_guard(Millis(u64::from(c.restart_delay_ticks)));
        }
        if let Some(j) = faults.clock_jumps.as_ref().filter(|j| j.count > 0) {
            // Extra⁺_LU is argued sound for forward shifts only (see the module docs).
            refuse(j.jump_ticks < 0, "backward clock jumps")?;
            self.jumps = j.count;
            self.jump_ticks = j.jump_ticks;
            self.node_jumps = j.target != JumpTarget::Client;
            self.client_jumps = j.target != JumpTarget::Node;
            let pinned = j.index.map(usize::from);
            match j.target {
                JumpTarget::Node => self.jump_node = pinned,
                JumpTarget::Client => self.jump_client = pinned,
                JumpTarget::Any => refuse(pinned.is_some(), "a pinned jump of either kind")?,
            }
        }
        Ok(())
    }

    /// The clock of client `c` (DBM index).
    pub fn client_clock(&self, c: usize) -> usize {
        1 + c
    }

    /// The clock of node `n`'s key (DBM index).
    pub fn key_clock(&self, n: usize) -> usize {
        1 + self.clients + n
    }

    /// Whether a restarted node waits before it serves.
    pub fn delays_restarts(&self) -> bool {
        self.restart_delay.bound > Millis::ZERO
    }

    /// Clocks, without the reference clock.
    pub fn clock_count(&self) -> usize {
        self.clients + self.nodes
    }

    /// Every node, one bit each.
    pub fn all_nodes(&self) -> u8 {
        ((1u16 << self.nodes) - 1) as u8
    }

    /// Whether renaming nodes maps the automaton onto itself: every client reaches every node
    /// or none, and no jump is pinned.
    pub fn nodes_symmetric(&self) -> bool {
        let all = self.all_nodes();
        self.jump_node.is_none() && self.reach.iter().all(|&r| r == all || r == 0)
    }

    /// Whether renaming clients maps the automaton onto itself: they all reach the same nodes,
    /// and no jump is pinned.
    pub fn clients_symmetric(&self) -> bool {
        self.jump_client.is_none() && self.reach.windows(2).all(|w| w[0] == w[1])
    }
}

/// A guard's constant as a zone constant (tick counts fit: validation bounds them).
pub(crate) fn constant(bound: Millis) -> i32 {
    i32::try_from(bound.as_u64()).unwrap_or(i32::MAX / 4)
}
