//! Redlock with node clock jumps and crashes as a network of timed automata, flattened into
//! one discrete part ([`Discrete`]) and one DBM clock per timer: one per client (time since its
//! T1, on its clock) and one per node (the age of its key on the node's clock, or the time
//! since a crash that lost the key, while the node waits out its restart delay).
//!
//! The semantics are the project model's (`src/model/step.rs`), restricted to the scenarios
//! [`Config::from_scenario`] accepts: one attempt per client, compare-and-delete, the validity
//! check on, no clock error, no storage; the faults are forward node clock jumps and node
//! crashes (see [`Availability`]).
//!
//! - `Begin(c)`: client `c` reads T1 (its clock `x_c := 0`) and sends `SET NX PX ttl` to every
//!   node it reaches.
//! - `Deliver(c, n)`: the request reaches node `n`, after any delay (the project model bounds
//!   no request's delay either, so no message needs a clock). The key is applied when the node
//!   has none, or when its key has expired on the node's clock (`y_n ≥ ttl`); it is refused
//!   while that key lives (`y_n ≤ ttl − 1`). An applied `SET` resets the key's clock `y_n`.
//!   The answer counts only while the client still collects answers.
//! - `Decide(c)`: as soon as the tally decides the round (a quorum applied with
//!   `decision = "at-quorum"`, every node answered, or a quorum is out of reach), or once the
//!   round timed out (`x_c ≥ R`), and at any later moment: won when a quorum applied and
//!   `x_c ≤ ttl − drift − 1` (the validity check `ttl − (T2 − T1) − drift > 0` on whole ticks),
//!   lost otherwise. A lost round releases at once (compare-and-delete on every node the
//!   client reaches, as the core asks) and the client is done.
//! - `Release(c)`: a holder releases at any moment, at once, on every node it reaches.
//! - `Jump(n)`: node `n`'s clock steps forward by `J`, so its key's age (or the time since its
//!   crash) does too (`y_n += J`). Only a node whose clock measures something may jump:
//!   elsewhere a jump changes nothing but the budget (the project model prunes those jumps for
//!   the same reason).
//! - `Crash(n)`: the node loses its key (unless `fsync-always`) and restarts at once, after its
//!   restart delay on its own clock, or never; until it serves, every request gets a failure.
//!
//! A client **believes** while it holds and `x_c ≤ ttl − drift − 1`; mutual exclusion fails
//! when two clients believe at the same instant.
//!
//! Every guard is non-strict with an integer constant (a strict discrete test `x < k` is
//! written `x ≤ k − 1`, which is the same on whole ticks), so the automaton is *closed* and,
//! by digitization (Henzinger, Manna and Pnueli 1992), reaches exactly the integer states the
//! discrete-time model reaches: the two checkers must agree on every verdict.

use redlock_lab::node::Persistence;
use redlock_lab::proto::{RoundDecision, UnlockMode, ValidityCheck};
use redlock_lab::scenario::{JumpTarget, Scenario, Tokens};

use crate::dbm::{Bound, Dbm, NO_CONSTANT};

/// The most nodes a configuration may have (the catalog's limit).
pub const MAX_NODES: usize = 5;
/// The most clients a configuration may have (the catalog's limit).
pub const MAX_CLIENTS: usize = 3;

/// A scenario the prototype cannot represent, with what it lacks.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unsupported {
    /// A setting the prototype does not model.
    #[error("the zone prototype does not model {0}")]
    Feature(&'static str),
}

/// The configuration of one automaton, read from a scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Nodes (`N`); the quorum is `N/2 + 1`.
    pub nodes: usize,
    /// Clients, each making one attempt.
    pub clients: usize,
    /// The keys' time to live, in ticks.
    pub ttl: i32,
    /// The drift allowance, in ticks.
    pub drift: i32,
    /// How long a round waits for missing answers (already capped at `ttl − drift`).
    pub round_timeout: i32,
    /// Whether a round may be decided as soon as a quorum applied.
    pub at_quorum: bool,
    /// The nodes each client reaches, one bit per node.
    pub reach: Vec<u8>,
    /// Node clock jumps in the whole run.
    pub jumps: u8,
    /// The forward step of a jump, in ticks.
    pub jump_ticks: i32,
    /// The one node that may jump, if the scenario pins it.
    pub jump_node: Option<usize>,
    /// Node crashes in the whole run.
    pub crashes: u8,
    /// Whether a crashed node keeps its key (`fsync-always`; `none` loses it).
    pub keeps_keys: bool,
    /// Whether a crashed node comes back.
    pub restarts: bool,
    /// How long a restarted node refuses requests, on its own clock.
    pub restart_delay: i32,
}

impl Config {
    /// Reads a scenario, refusing whatever the prototype does not model.
    pub fn from_scenario(scenario: &Scenario) -> Result<Config, Unsupported> {
        let lock = &scenario.lock;
        let refuse = |cond: bool, what: &'static str| {
            if cond {
                Err(Unsupported::Feature(what))
            } else {
                Ok(())
            }
        };
        refuse(lock.attempts != 1, "more than one attempt")?;
        refuse(lock.unlock != UnlockMode::CompareAndDelete, "unlock = del")?;
        refuse(
            lock.validity_check != ValidityCheck::On,
            "validity_check = false",
        )?;
        refuse(lock.extensions != 0, "extensions")?;
        refuse(lock.token != Tokens::Unique, "token = shared")?;
        refuse(
            scenario.clock.node_error_ticks != 0 || scenario.clock.client_error_ticks != 0,
            "clock error",
        )?;
        refuse(scenario.network.message_loss != 0, "message loss")?;
        refuse(scenario.storage.is_some(), "storage")?;
        refuse(scenario.failover.is_some(), "failover")?;
        let faults = &scenario.faults;
        let (crashes, keeps_keys, restarts, restart_delay) = match &faults.crashes {
            Some(c) if c.count > 0 => {
                refuse(
                    c.persistence == Persistence::FsyncPeriodic,
                    "persistence = fsync-periodic",
                )?;
                refuse(c.client_guard_ticks > 0, "the restarted-node guard")?;
                let keeps = c.persistence == Persistence::FsyncAlways;
                // The restart delay runs on the key's clock, free because the key was lost.
                refuse(
                    keeps && c.restart && c.restart_delay_ticks > 0,
                    "a restart delay with fsync-always persistence",
                )?;
                (c.count, keeps, c.restart, c.restart_delay_ticks as i32)
            }
            _ => (0, false, true, 0),
        };
        refuse(
            faults.client_crashes.as_ref().is_some_and(|c| c.count > 0),
            "client crashes",
        )?;
        // Pauses act only between a lease check and a storage op, and there is no storage.
        let (jumps, jump_ticks, jump_node) = match &faults.clock_jumps {
            Some(j) if j.count > 0 => {
                refuse(j.target != JumpTarget::Node, "client clock jumps")?;
                refuse(j.jump_ticks < 0, "backward clock jumps")?;
                (j.count, j.jump_ticks, j.index.map(usize::from))
            }
            _ => (0, 0, None),
        };
        let nodes = usize::from(lock.nodes);
        let clients = usize::from(lock.clients);
        let ttl = i32::try_from(lock.ttl_ticks).map_err(|_| Unsupported::Feature("huge ttl"))?;
        let drift = lock.drift_ticks as i32;
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
        Ok(Config {
            nodes,
            clients,
            ttl,
            drift,
            round_timeout: (lock.round_timeout_ticks as i32).min(ttl - drift),
            at_quorum: lock.decision == RoundDecision::AtQuorum,
            reach,
            jumps,
            jump_ticks,
            jump_node,
            crashes,
            keeps_keys,
            restarts,
            restart_delay,
        })
    }

    /// `N/2 + 1`.
    pub fn quorum(&self) -> u32 {
        (self.nodes / 2 + 1) as u32
    }

    /// The lease's length on the client's clock: `ttl − drift`.
    pub fn validity(&self) -> i32 {
        self.ttl - self.drift
    }

    /// The clock of client `c` (DBM index).
    pub fn client_clock(&self, c: usize) -> usize {
        1 + c
    }

    /// The clock of node `n`'s key (DBM index).
    pub fn key_clock(&self, n: usize) -> usize {
        1 + self.clients + n
    }

    /// Clocks, without the reference clock.
    pub fn clock_count(&self) -> usize {
        self.clients + self.nodes
    }

    /// Whether renaming nodes maps the automaton onto itself: every client reaches every node
    /// or none, and no jump is pinned.
    pub fn nodes_symmetric(&self) -> bool {
        let all = ((1u16 << self.nodes) - 1) as u8;
        self.jump_node.is_none() && self.reach.iter().all(|&r| r == all || r == 0)
    }

    /// Whether renaming clients maps the automaton onto itself: they all reach the same nodes.
    pub fn clients_symmetric(&self) -> bool {
        self.reach.windows(2).all(|w| w[0] == w[1])
    }
}

/// Where a client is in its one attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Phase {
    /// Not started.
    Idle,
    /// Its round is open: `SET`s travel, answers come in.
    Acquiring,
    /// It won a lease (it believes while its clock is below the deadline).
    Holding,
    /// It released, or lost its round; it does nothing more (its late `SET`s may still land).
    Finished,
}

/// One client's discrete part.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClientPart {
    /// Where it is.
    pub phase: Phase,
    /// Nodes its `SET` has not reached yet (one bit per node).
    pub inflight: u8,
    /// Nodes whose answer is in and said yes.
    pub applied: u8,
    /// Nodes whose answer is in.
    pub answered: u8,
}

/// No key on a node.
pub const NO_OWNER: u8 = u8::MAX;

/// The discrete part of a symbolic state: every location and variable but the clocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Discrete {
    /// One part per client (unused slots stay idle).
    pub clients: [ClientPart; MAX_CLIENTS],
    /// The client whose key node `n` holds, or [`NO_OWNER`]. A key stays here after it
    /// expired (its clock says so) until a `SET` replaces it or its owner deletes it.
    pub owners: [u8; MAX_NODES],
    /// Jumps left in the budget.
    pub jumps_left: u8,
    /// Whether each node serves.
    pub availability: [Availability; MAX_NODES],
    /// Crashes left in the budget.
    pub crashes_left: u8,
}

/// Whether a node serves. A restarting node measures its restart delay on its key's clock,
/// which is free because the crash lost the key (with `fsync-always` the prototype allows no
/// restart delay).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Availability {
    /// Serving.
    Up,
    /// Restarted; serves once its clock has run `restart_delay` since the crash.
    Restarting,
    /// Crashed for good.
    Down,
}

/// One transition, for counterexamples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Client `c` reads T1 and sends its `SET`s.
    Begin(usize),
    /// Client `c`'s `SET` reaches node `n`.
    Deliver {
        /// The client.
        client: usize,
        /// The node.
        node: usize,
        /// Whether the node set the key.
        applied: bool,
    },
    /// Client `c` decides its round.
    Decide {
        /// The client.
        client: usize,
        /// Whether it won a lease.
        won: bool,
    },
    /// Client `c` releases its lease.
    Release(usize),
    /// Node `n`'s clock jumps forward.
    Jump(usize),
    /// Node `n` crashes (and restarts, unless configured not to).
    Crash(usize),
}

impl Discrete {
    /// The start: every client idle, no keys, the whole jump budget.
    pub fn initial(config: &Config) -> Discrete {
        Discrete {
            clients: [ClientPart {
                phase: Phase::Idle,
                inflight: 0,
                applied: 0,
                answered: 0,
            }; MAX_CLIENTS],
            owners: [NO_OWNER; MAX_NODES],
            jumps_left: config.jumps,
            availability: [Availability::Up; MAX_NODES],
            crashes_left: config.crashes,
        }
    }

    /// The clients that hold a lease (whether they still believe is up to the clocks).
    pub fn holders(&self, config: &Config) -> impl Iterator<Item = usize> + '_ {
        (0..config.clients).filter(|&c| self.clients[c].phase == Phase::Holding)
    }

    /// The constants each clock is compared with from here on, for Extra⁺_LU: `(lower,
    /// upper)`, index 0 the reference clock. A clock that nothing reads again has none.
    pub fn lu_bounds(&self, config: &Config) -> (Vec<i32>, Vec<i32>) {
        let dim = config.clock_count() + 1;
        let mut lower = vec![NO_CONSTANT; dim];
        let mut upper = vec![NO_CONSTANT; dim];
        lower[0] = 0;
        upper[0] = 0;
        let v = config.validity();
        for c in 0..config.clients {
            let x = config.client_clock(c);
            match self.clients[c].phase {
                Phase::Acquiring => {
                    lower[x] = config.round_timeout.max(v);
                    upper[x] = v - 1;
                }
                // Only the belief reads a holder's clock.
                Phase::Holding => upper[x] = v - 1,
                Phase::Idle | Phase::Finished => {}
            }
        }
        for n in 0..config.nodes {
            let y = config.key_clock(n);
            if self.owners[n] != NO_OWNER {
                lower[y] = config.ttl;
                upper[y] = config.ttl - 1;
            } else if self.availability[n] == Availability::Restarting {
                lower[y] = config.restart_delay;
                upper[y] = config.restart_delay - 1;
            }
        }
        (lower, upper)
    }

    /// Every transition enabled somewhere in `zone` (delay-closed), with the zone of the
    /// states it leads to (before the delay that follows).
    pub fn successors(&self, config: &Config, zone: &Dbm, out: &mut Vec<(Step, Discrete, Dbm)>) {
        for c in 0..config.clients {
            let part = self.clients[c];
            let x = config.client_clock(c);
            match part.phase {
                Phase::Idle => {
                    let mut next = *self;
                    next.clients[c] = ClientPart {
                        phase: Phase::Acquiring,
                        inflight: config.reach[c],
                        applied: 0,
                        answered: 0,
                    };
                    let mut z = zone.clone();
                    z.reset(x);
                    out.push((Step::Begin(c), next, z));
                }
                Phase::Acquiring => self.decide(config, zone, c, out),
                Phase::Holding => {
                    let mut next = *self;
                    let mut z = zone.clone();
                    next.release(config, &mut z, c);
                    out.push((Step::Release(c), next, z));
                }
                Phase::Finished => {}
            }
            for n in 0..config.nodes {
                if part.inflight & (1 << n) != 0 {
                    self.deliver(config, zone, c, n, out);
                }
            }
        }
        if self.crashes_left > 0 {
            for n in 0..config.nodes {
                if self.availability[n] != Availability::Down {
                    let mut next = *self;
                    let mut z = zone.clone();
                    next.crash(config, &mut z, n);
                    out.push((Step::Crash(n), next, z));
                }
            }
        }
        if self.jumps_left > 0 {
            for n in 0..config.nodes {
                // A jump matters where the node's clock measures something: a key's age or a
                // restart delay.
                let measures =
                    self.owners[n] != NO_OWNER || self.availability[n] == Availability::Restarting;
                if measures && config.jump_node.is_none_or(|j| j == n) {
                    let mut next = *self;
                    next.jumps_left -= 1;
                    let mut z = zone.clone();
                    z.shift(config.key_clock(n), config.jump_ticks);
                    out.push((Step::Jump(n), next, z));
                }
            }
        }
    }

    /// Node `n` crashes: the key survives only with `fsync-always`; the node comes back at
    /// once, after its restart delay, or never.
    fn crash(&mut self, config: &Config, zone: &mut Dbm, n: usize) {
        let y = config.key_clock(n);
        self.crashes_left -= 1;
        if !config.keeps_keys || !config.restarts {
            // A key on a node that never serves again is the same as no key.
            self.owners[n] = NO_OWNER;
            zone.free(y);
        }
        self.availability[n] = if !config.restarts {
            Availability::Down
        } else if config.restart_delay > 0 {
            zone.reset(y);
            Availability::Restarting
        } else {
            Availability::Up
        };
    }

    fn deliver(
        &self,
        config: &Config,
        zone: &Dbm,
        c: usize,
        n: usize,
        out: &mut Vec<(Step, Discrete, Dbm)>,
    ) {
        let y = config.key_clock(n);
        let mut arrive = |applied: bool, z: Dbm| {
            let mut next = *self;
            if applied {
                // A restarting node that serves is up from now on.
                next.availability[n] = Availability::Up;
            }
            let part = &mut next.clients[c];
            part.inflight &= !(1 << n);
            if part.phase == Phase::Acquiring {
                part.answered |= 1 << n;
                if applied {
                    part.applied |= 1 << n;
                }
            }
            let mut z = z;
            if applied {
                next.owners[n] = c as u8;
                z.reset(y);
            }
            out.push((
                Step::Deliver {
                    client: c,
                    node: n,
                    applied,
                },
                next,
                z,
            ));
        };
        match self.availability[n] {
            // Unavailable: the answer is a failure, which counts as answered.
            Availability::Down => {
                arrive(false, zone.clone());
                return;
            }
            Availability::Restarting => {
                let mut waiting = zone.clone();
                if waiting.at_most(y, config.restart_delay - 1) {
                    arrive(false, waiting);
                }
                // Serving again, with no key (the crash lost it).
                let mut serving = zone.clone();
                if serving.at_least(y, config.restart_delay) {
                    arrive(true, serving);
                }
                return;
            }
            Availability::Up => {}
        }
        if self.owners[n] == NO_OWNER {
            arrive(true, zone.clone());
            return;
        }
        // The key lives: SET NX is refused.
        let mut live = zone.clone();
        if live.at_most(y, config.ttl - 1) {
            arrive(false, live);
        }
        // The key has expired on the node's clock: the SET sets a new one.
        let mut expired = zone.clone();
        if expired.at_least(y, config.ttl) {
            arrive(true, expired);
        }
    }

    fn decide(&self, config: &Config, zone: &Dbm, c: usize, out: &mut Vec<(Step, Discrete, Dbm)>) {
        let part = self.clients[c];
        let x = config.client_clock(c);
        let n = config.nodes as u32;
        let applied = part.applied.count_ones();
        let answered = part.answered.count_ones();
        let quorum = config.quorum();
        let by_tally = (config.at_quorum && applied >= quorum)
            || answered == n
            || applied + (n - answered) < quorum;
        let mut open = zone.clone();
        if !by_tally && !open.at_least(x, config.round_timeout) {
            return;
        }
        if applied >= quorum {
            let mut won = open.clone();
            if won.at_most(x, config.validity() - 1) {
                let mut next = *self;
                next.clients[c] = ClientPart {
                    phase: Phase::Holding,
                    inflight: part.inflight,
                    applied: 0,
                    answered: 0,
                };
                out.push((
                    Step::Decide {
                        client: c,
                        won: true,
                    },
                    next,
                    won,
                ));
            }
            // Validity exhausted: lost.
            if !open.at_least(x, config.validity()) {
                return;
            }
        }
        let mut next = *self;
        next.release(config, &mut open, c);
        out.push((
            Step::Decide {
                client: c,
                won: false,
            },
            next,
            open,
        ));
    }

    /// Compare-and-delete on every node client `c` reaches, then done: its keys (live or
    /// expired, which is the same thing to everyone) are gone and its clock is read no more.
    fn release(&mut self, config: &Config, zone: &mut Dbm, c: usize) {
        for n in 0..config.nodes {
            if config.reach[c] & (1 << n) != 0 && self.owners[n] == c as u8 {
                self.owners[n] = NO_OWNER;
                zone.free(config.key_clock(n));
            }
        }
        let part = &mut self.clients[c];
        *part = ClientPart {
            phase: Phase::Finished,
            inflight: part.inflight,
            applied: 0,
            answered: 0,
        };
        zone.free(config.client_clock(c));
    }

    /// Forgets every key that has certainly expired in `zone` (its age is at least the TTL
    /// in every valuation): to every later step such a key is the same as no key, and its
    /// clock is read no more.
    ///
    /// Likewise a restarting node whose delay is certainly over is up.
    pub fn forget_expired_keys(&mut self, config: &Config, zone: &mut Dbm) {
        for n in 0..config.nodes {
            let y = config.key_clock(n);
            if self.owners[n] != NO_OWNER && zone.get(0, y) <= Bound::le(-config.ttl) {
                self.owners[n] = NO_OWNER;
                zone.free(y);
            }
            if self.availability[n] == Availability::Restarting
                && zone.get(0, y) <= Bound::le(-config.restart_delay)
            {
                self.availability[n] = Availability::Up;
                zone.free(y);
            }
        }
    }

    /// Whether two clients can believe at one instant of `zone` (delay-closed).
    pub fn breaks_mutual_exclusion(&self, config: &Config, zone: &Dbm) -> bool {
        let holders: Vec<usize> = self.holders(config).collect();
        let last = config.validity() - 1;
        holders.iter().enumerate().any(|(i, &a)| {
            holders[i + 1..].iter().any(|&b| {
                zone.meets_upper_bounds(&[
                    (config.client_clock(a), last),
                    (config.client_clock(b), last),
                ])
            })
        })
    }

    /// A symmetric image of `(self, zone)`: clients sorted, then nodes, by what they look
    /// like (ties keep their order, so two images of one orbit may still differ; the
    /// reduction is sound either way, since any image behaves like the state).
    pub fn symmetric_image(&self, config: &Config, zone: &Dbm) -> (Discrete, Dbm) {
        let mut state = *self;
        let mut zone_out = zone.clone();
        if config.clients_symmetric() && config.clients > 1 {
            let mut order: Vec<usize> = (0..config.clients).collect();
            let key = |c: usize| {
                let x = config.client_clock(c);
                let owned = (0..config.nodes)
                    .filter(|&n| state.owners[n] == c as u8)
                    .count();
                (
                    state.clients[c],
                    owned,
                    zone_out.get(x, 0),
                    zone_out.get(0, x),
                )
            };
            order.sort_by_key(|&c| key(c));
            if order.iter().enumerate().any(|(i, &c)| i != c) {
                let mut renamed = state;
                for (new, &old) in order.iter().enumerate() {
                    renamed.clients[new] = state.clients[old];
                }
                for n in 0..config.nodes {
                    if state.owners[n] != NO_OWNER {
                        let old = usize::from(state.owners[n]);
                        let new = order.iter().position(|&o| o == old).expect("a client");
                        renamed.owners[n] = new as u8;
                    }
                }
                let mut from: Vec<usize> = (0..=config.clock_count()).collect();
                for (new, &old) in order.iter().enumerate() {
                    from[config.client_clock(new)] = config.client_clock(old);
                }
                zone_out = zone_out.permuted(&from);
                state = renamed;
            }
        }
        if config.nodes_symmetric() && config.nodes > 1 {
            let bit = |mask: u8, n: usize| (mask >> n) & 1;
            let key = |n: usize| {
                let y = config.key_clock(n);
                let per_client: Vec<(u8, u8, u8)> = (0..config.clients)
                    .map(|c| {
                        let p = state.clients[c];
                        (bit(p.inflight, n), bit(p.applied, n), bit(p.answered, n))
                    })
                    .collect();
                (
                    state.availability[n],
                    state.owners[n],
                    per_client,
                    zone_out.get(y, 0),
                    zone_out.get(0, y),
                )
            };
            let mut order: Vec<usize> = (0..config.nodes).collect();
            order.sort_by_key(|&n| key(n));
            if order.iter().enumerate().any(|(i, &n)| i != n) {
                let move_bits = |mask: u8| {
                    order
                        .iter()
                        .enumerate()
                        .fold(0u8, |acc, (new, &old)| acc | (bit(mask, old) << new))
                };
                let mut renamed = state;
                for c in 0..config.clients {
                    let p = state.clients[c];
                    renamed.clients[c] = ClientPart {
                        phase: p.phase,
                        inflight: move_bits(p.inflight),
                        applied: move_bits(p.applied),
                        answered: move_bits(p.answered),
                    };
                }
                for (new, &old) in order.iter().enumerate() {
                    renamed.owners[new] = state.owners[old];
                    renamed.availability[new] = state.availability[old];
                }
                let mut from: Vec<usize> = (0..=config.clock_count()).collect();
                for (new, &old) in order.iter().enumerate() {
                    from[config.key_clock(new)] = config.key_clock(old);
                }
                zone_out = zone_out.permuted(&from);
                state = renamed;
            }
        }
        (state, zone_out)
    }
}
