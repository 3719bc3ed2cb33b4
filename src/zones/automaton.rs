//! What the zone engine reads from a scenario, and what it refuses by name.

use crate::fault::FaultKind;
use crate::node::{NodeState, Persistence};
use crate::proto::{ClockGuard, Contact, LockParams, Relation, UnlockMode, ValidityCheck};
use crate::scenario::{Bound, Ingredient, JumpTarget, Scenario, StorageSettings, Tokens};
use crate::storage::{CheckAndApply, OpKind, Protection, TokenSource};
use crate::time::Millis;

use super::constants::Constraints;
use super::parameters::Parameters;

/// The most nodes a configuration may have (one bit each in the discrete part's masks).
pub(super) const MAX_NODES: usize = 7;
/// The most clients a configuration may have.
pub(super) const MAX_CLIENTS: usize = 3;
/// The most clocks an automaton may have (the zones hold two more, to make a counterexample
/// concrete).
pub(super) const MAX_CLOCKS: usize = 9;

/// The kinds of fault the engine models (within the limits the checks below name); a scenario
/// that grants any other kind is refused by that kind's name, so a kind added to the crate is
/// refused here until the engine learns it.
const MODELLED_FAULTS: [FaultKind; 7] = [
    FaultKind::ClockJump,
    FaultKind::Crash,
    FaultKind::Pause,
    FaultKind::NodeClockError,
    FaultKind::ClientClockError,
    FaultKind::StorageDelay,
    FaultKind::Partition,
];

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
/// Every timing decision is one of the core's `ClockGuard`s, read here once; the engine turns
/// each into a clock constraint and never restates the arithmetic behind it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZoneConfig {
    /// Nodes (`N`).
    pub nodes: usize,
    /// Clients, each making one attempt.
    pub clients: usize,
    /// The lock as the core resolved it: every client decision is the core's transition on
    /// these parameters.
    pub(crate) params: LockParams,
    /// A round that won a quorum keeps validity while this holds on the client's clock.
    pub(crate) validity: ClockGuard,
    /// A round stops waiting once this holds on the client's clock.
    pub(crate) round_timeout: ClockGuard,
    /// A holder believes while this holds on its clock (read up to `client_error` late).
    pub(crate) belief: ClockGuard,
    /// A node's key lives while this holds on the node's clock (read up to `node_error` early).
    pub(crate) key_live: ClockGuard,
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
    /// Whether a crashed node keeps its key only once it wrote it to disk (`fsync-periodic`:
    /// an fsync may come at any moment after the `SET`, or never before the crash).
    pub periodic_fsync: bool,
    /// Whether a crashed node comes back.
    pub restarts: bool,
    /// A restarted node serves once this holds on its clock (read up to `node_error` early).
    pub(crate) restart_delay: ClockGuard,
    /// The clients' restarted-node guard: a restarted node's yes is kept out of a quorum
    /// while this holds on its clock (`None`: no guard).
    pub(crate) young: Option<ClockGuard>,
    /// The guarded storage and the holders' cycle, if the scenario has one.
    pub storage: Option<StorageConfig>,
    /// Pauses of a holder in the whole run (each stretches one pending op's wait).
    pub pauses: u8,
    /// `ε_n`: how far ahead a node's clock may read when it serves a request, in ticks.
    pub node_error: i32,
    /// `ε_c`: how far behind a client's clock may read when it judges its belief, in ticks.
    pub client_error: i32,
    /// The timing constants left free, for a symbolic exploration (`None`: every constant is
    /// the number the scenario gives).
    pub(crate) parameters: Option<Parameters>,
    /// Every guard's constraints, worked out once (see [`Constraints`]).
    pub(crate) constraints: Constraints,
    /// Whether a node may refuse a `SET` it would apply, as if another client's key were
    /// there: the two-client cutoff ([`ZoneConfig::with_phantom_clients`]).
    pub(crate) phantoms: bool,
}

/// The guarded storage as the engine reads it: the holders' cycle of ops, the check before
/// each, and how long an op may wait.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StorageConfig {
    /// How the storage rejects stale holders.
    pub protection: Protection,
    /// The ops of one holder's cycle.
    pub ops: &'static [OpKind],
    /// A holder sends its next op only while this holds on its clock (read up to
    /// `client_error` late): the core's check margin.
    pub(crate) margin: ClockGuard,
    /// How long an op may travel, in ticks (`None`: unbounded).
    pub delay: Option<i32>,
    /// How much longer a pause lets it wait (`None`: unbounded).
    pub pause: Option<i32>,
}

impl StorageConfig {
    /// How long a pending op may wait in all, given whether a pause stretched it (`None`:
    /// unbounded), as the discrete model's stall allowance.
    pub fn allowance(&self, paused: bool) -> Option<i32> {
        match (self.delay, paused) {
            (Some(delay), false) => Some(delay),
            (Some(delay), true) => self.pause.map(|pause| delay + pause),
            (None, _) => None,
        }
    }
}

/// A scenario bound in ticks (`None`: unbounded).
fn bound(bound: Bound) -> Result<Option<i32>, Unsupported> {
    match bound {
        Bound::Ticks(t) => ticks(t).map(Some),
        Bound::Unbounded => Ok(None),
    }
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
            params: *params,
            validity: params.validity_guard(),
            round_timeout: params.round_timeout_guard(),
            belief: params.belief_guard(),
            key_live: params.key_live_guard(),
            reach,
            jumps: 0,
            jump_ticks: 0,
            node_jumps: false,
            client_jumps: false,
            jump_node: None,
            jump_client: None,
            crashes: 0,
            keeps_keys: false,
            periodic_fsync: false,
            restarts: true,
            restart_delay: NodeState::restart_delay_guard(Millis::ZERO),
            young: None,
            storage: None,
            pauses: 0,
            node_error: ticks(scenario.clock.node_error_ticks)?,
            client_error: ticks(scenario.clock.client_error_ticks)?,
            parameters: None,
            constraints: Constraints::NONE,
            phantoms: false,
        };
        if nodes > MAX_NODES || clients > MAX_CLIENTS {
            return Err(config.too_many_clocks());
        }
        config.read_faults(scenario)?;
        if let Some(storage) = &scenario.storage {
            let pauses = scenario.faults.pauses.as_ref().filter(|p| p.count > 0);
            let mut read = Self::read_storage(params, storage)?;
            read.pause = match pauses {
                Some(p) => bound(p.max)?,
                None => Some(0),
            };
            config.storage = Some(read);
            config.pauses = pauses.map_or(0, |p| p.count);
        }
        if config.clock_count() > MAX_CLOCKS {
            return Err(config.too_many_clocks());
        }
        config.constraints = Constraints::of(&config);
        Ok(config)
    }

    fn too_many_clocks(&self) -> Unsupported {
        Unsupported::TooManyClocks {
            nodes: self.nodes,
            clients: self.clients,
            needed: self.clock_count(),
            max: MAX_CLOCKS,
        }
    }

    /// The storage and the holders' cycle: the ideal token source only (the lock nodes' and
    /// a separate node's counters would need their own state).
    fn read_storage(
        params: &LockParams,
        storage: &StorageSettings,
    ) -> Result<StorageConfig, Unsupported> {
        refuse(
            storage.token_source != TokenSource::Ideal,
            "fencing tokens from a counter (only the ideal token source)",
        )?;
        refuse(
            storage.check != CheckAndApply::Atomic,
            "a storage that checks and applies in two steps (check = two-step)",
        )?;
        // The model's default margin is 1: the check is then the belief itself.
        let margin = storage.check_margin_ticks.unwrap_or(1);
        Ok(StorageConfig {
            protection: storage.protection,
            ops: storage.protection.cycle(),
            margin: params.margin_guard(Millis(u64::from(margin))),
            delay: bound(storage.max_delay)?,
            pause: None,
        })
    }

    /// The lock settings the engine does not model.
    fn refuse_lock(scenario: &Scenario) -> Result<(), Unsupported> {
        let lock = &scenario.lock;
        let params: &LockParams = &lock.params;
        refuse(lock.attempts() != 1, "more than one attempt")?;
        // A lost round's release and a holder's unlock are the core's requests, carried out by
        // the engine whatever they are (compare-and-delete, a plain `DEL`, or none at all).
        refuse(
            params.validity_check != ValidityCheck::On,
            "validity_check = false or \"acquisition-only\"",
        )?;
        refuse(lock.extensions != 0, "extensions")?;
        // Mutual exclusion is judged on upper bounds of the holders' clocks.
        refuse(
            params.belief_guard().relation != Relation::Below,
            "a belief that is not a span below a bound",
        )?;
        refuse(lock.token != Tokens::Unique, "token = shared or reused")?;
        // The engine applies a release at once; a get-then-del `DEL` travels after its `GET`.
        refuse(
            params.unlock == UnlockMode::GetThenDel,
            "unlock = \"get-then-del\"",
        )?;
        // The automaton sends a round to every node at T1.
        refuse(
            params.contact != Contact::Multiplexed,
            "contact = sequential",
        )?;
        // The automaton counts one quorum for every client.
        refuse(lock.quorums_differ(), "per-client quorums")?;
        Ok(())
    }

    /// The environment the engine does not model: every kind of fault the scenario grants
    /// that is not in [`MODELLED_FAULTS`], by its name, then liveness.
    fn refuse_environment(scenario: &Scenario) -> Result<(), Unsupported> {
        // Named before the failover they belong to, which the loop below refuses too.
        refuse(
            scenario.failover.as_ref().is_some_and(|f| f.replicas > 1),
            "a master with several replicas ([failover] replicas)",
        )?;
        refuse(
            scenario.failover.as_ref().is_some_and(|f| f.wait > 0),
            "a master that waits for its replica ([failover] wait)",
        )?;
        refuse(
            scenario.failover.as_ref().is_some_and(|f| f.every_node),
            "a replica on every node ([failover] every_node)",
        )?;
        for kind in Ingredient::present(scenario)
            .into_iter()
            .filter_map(Ingredient::fault)
        {
            refuse(!MODELLED_FAULTS.contains(&kind), kind.plural())?;
        }
        refuse(
            scenario
                .expected(crate::scenario::property::EVENTUALLY_ACQUIRED)
                .is_some(),
            "liveness (`eventually acquired`)",
        )?;
        // Pauses act only between a lease check and a storage op.
        refuse(
            scenario.storage.is_none()
                && scenario.faults.pauses.as_ref().is_some_and(|p| p.count > 0),
            "pauses without storage",
        )?;
        Ok(())
    }

    /// The crash and clock-jump budgets.
    fn read_faults(&mut self, scenario: &Scenario) -> Result<(), Unsupported> {
        let faults = &scenario.faults;
        if let Some(c) = faults.crashes.as_ref().filter(|c| c.count > 0) {
            self.keeps_keys = c.persistence == Persistence::FsyncAlways;
            self.periodic_fsync = c.persistence == Persistence::FsyncPeriodic;
            self.crashes = c.count;
            self.restarts = c.restart;
            ticks(c.restart_delay_ticks)?;
            ticks(c.client_guard_ticks)?;
            let delay = Millis(u64::from(c.restart_delay_ticks));
            let guard = Millis(u64::from(c.client_guard_ticks));
            self.restart_delay = NodeState::restart_delay_guard(delay);
            self.young = (c.restart && guard > Millis::ZERO)
                .then(|| NodeState::restart_young_guard(delay, guard));
        }
        if let Some(j) = faults.clock_jumps.as_ref().filter(|j| j.count > 0) {
            // A backward step of a node's clock could bring back a key the node already
            // deleted on expiry, which a key clock cannot tell; a client's clock keeps no
            // such state (see the module docs for the extrapolation).
            // Each size of a list at most once is a budget per size, which the zone
            // engine's one jump counter does not keep.
            let Some(size) = j.jump_ticks.single() else {
                return Err(Unsupported::Feature("clock jumps of different sizes"));
            };
            refuse(
                size < 0 && j.target != JumpTarget::Client,
                "backward clock jumps of nodes",
            )?;
            self.jumps = j.count;
            self.jump_ticks = size;
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

    /// The same automaton with two clients standing for all of them and phantom refusals
    /// (every `SET` a node would apply may be refused instead): the discrete engine's cutoff
    /// for mutual exclusion, whose argument
    /// ([`RedlockModel::with_phantom_clients`](crate::model::RedlockModel::with_phantom_clients))
    /// holds here step for step, since this automaton's client is the core's and its nodes
    /// are the model's. `None` where it does not apply: fewer than three clients, storage
    /// (its properties read every client's writes), an unlock other than compare-and-delete
    /// (a plain `DEL` lets another client delete a key that is not its own), clients that
    /// reach different nodes, or a clock jump pinned to one client. (The engine already
    /// refuses shared tokens and per-client quorums.)
    ///
    /// A violation found here that uses no phantom refusal is a run of the full automaton in
    /// which the other clients never begin; one that needs a refusal settles nothing. An
    /// acquisition found here is one of the full automaton's either way: let the client that
    /// acquires run alone, its steps at the same instants; every `SET` of its that was
    /// refused (a phantom's or the other client's key) now applies, and more yeses at the
    /// same instants never turn a won round into a lost one.
    pub fn with_phantom_clients(&self) -> Option<ZoneConfig> {
        let eligible = self.clients >= 3
            && self.storage.is_none()
            && self.parameters.is_none()
            && self.params.unlock == UnlockMode::CompareAndDelete
            && self.reach.windows(2).all(|w| w[0] == w[1])
            && self.jump_client.is_none();
        if !eligible {
            return None;
        }
        let mut cut = self.clone();
        cut.clients = 2;
        cut.reach.truncate(2);
        cut.phantoms = true;
        cut.constraints = Constraints::of(&cut);
        Some(cut)
    }

    /// The clock of client `c` (DBM index).
    pub fn client_clock(&self, c: usize) -> usize {
        1 + c
    }

    /// The clock of node `n`'s key (DBM index).
    pub fn key_clock(&self, n: usize) -> usize {
        1 + self.clients + n
    }

    /// The clock of client `c`'s pending storage op: the time since it was sent (DBM index;
    /// only with storage).
    pub fn op_clock(&self, c: usize) -> usize {
        1 + self.clients + self.nodes + c
    }

    /// The clock of the `slot`-th crash's restart: the time since the crashed node restarted,
    /// on its clock (DBM index; only when a restart delay or the guard reads it). A clock per
    /// crash in the budget rather than per node: only a node that crashed measures it.
    pub fn restart_clock(&self, slot: usize) -> usize {
        let ops = if self.storage.is_some() {
            self.clients
        } else {
            0
        };
        1 + self.clients + self.nodes + ops + slot
    }

    /// Whether a restarted node waits before it serves.
    pub fn delays_restarts(&self) -> bool {
        self.restart_delay.bound > Millis::ZERO
    }

    /// Whether a node measures the time since its restart: a restart delay or the
    /// restarted-node guard reads it.
    pub fn times_restarts(&self) -> bool {
        self.crashes > 0 && self.restarts && (self.delays_restarts() || self.young.is_some())
    }

    /// Whether clients' clocks may step back.
    pub fn client_backward_jumps(&self) -> bool {
        self.client_jumps && self.jump_ticks < 0
    }

    /// Clocks, without the reference clock.
    pub fn clock_count(&self) -> usize {
        let ops = if self.storage.is_some() {
            self.clients
        } else {
            0
        };
        let restarts = if self.times_restarts() {
            usize::from(self.crashes)
        } else {
            0
        };
        self.clients + self.nodes + ops + restarts
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
