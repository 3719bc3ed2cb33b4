//! The discrete part of a symbolic state, and what it says about its zone: the constants
//! each clock is compared with, the keys that certainly expired, and whether two clients
//! believe at once.

use crate::proto::Guard;

use super::clock_guard::{self, Constraint};
use super::config::{MAX_CLIENTS, MAX_NODES, ZoneConfig};
use super::dbm::{Bound, Dbm, NO_CONSTANT};

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

impl ClientPart {
    /// A client in `phase` with its `SET`s to `inflight` still travelling and no answers.
    pub fn new(phase: Phase, inflight: u8) -> ClientPart {
        ClientPart {
            phase,
            inflight,
            applied: 0,
            answered: 0,
        }
    }
}

/// No key on a node.
pub const NO_OWNER: u8 = u8::MAX;

/// Whether a node serves. A restarting node measures its restart delay on its key's clock,
/// which is free because the crash lost the key (with `fsync-always` the engine allows no
/// restart delay).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Availability {
    /// Serving.
    Up,
    /// Restarted; serves once its restart-delay guard holds on its clock.
    Restarting,
    /// Crashed for good.
    Down,
}

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

/// How far ahead a node's clock may read when it serves a request: exactly, or at the fast
/// end of its error band (the model's two readings; what a reading in between decides, one
/// of the two decides too, since every node test is monotone in the reading).
pub(crate) fn node_readings(config: &ZoneConfig) -> impl Iterator<Item = i32> {
    let fast = (config.node_error > 0).then_some(config.node_error);
    std::iter::once(0).chain(fast)
}

/// Raises `lower`/`upper` of clock `x` to the constant of `constraint`.
fn note(lower: &mut [i32], upper: &mut [i32], x: usize, constraint: Constraint) {
    match constraint {
        Constraint::AtMost(c) => upper[x] = upper[x].max(c),
        Constraint::AtLeast(c) => lower[x] = lower[x].max(c),
    }
}

/// Raises the constants of clock `x` to both sides of `guard`, on every reading in `aheads`.
fn note_guard(
    lower: &mut [i32],
    upper: &mut [i32],
    x: usize,
    guard: Guard,
    aheads: impl Iterator<Item = i32>,
) {
    for ahead in aheads {
        note(lower, upper, x, clock_guard::holds(guard, ahead));
        note(lower, upper, x, clock_guard::fails(guard, ahead));
    }
}

impl Discrete {
    /// The start: every client idle, no keys, the whole budgets.
    pub fn initial(config: &ZoneConfig) -> Discrete {
        Discrete {
            clients: [ClientPart::new(Phase::Idle, 0); MAX_CLIENTS],
            owners: [NO_OWNER; MAX_NODES],
            jumps_left: config.jumps,
            availability: [Availability::Up; MAX_NODES],
            crashes_left: config.crashes,
        }
    }

    /// The clients that hold a lease (whether they still believe is up to the clocks).
    pub fn holders(&self, config: &ZoneConfig) -> impl Iterator<Item = usize> + '_ {
        (0..config.clients).filter(|&c| self.clients[c].phase == Phase::Holding)
    }

    /// The constants each clock is compared with from here on, for Extra⁺_LU: `(lower,
    /// upper)`, index 0 the reference clock. A clock that nothing reads again has none.
    pub fn lu_bounds(&self, config: &ZoneConfig) -> (Vec<i32>, Vec<i32>) {
        let dim = config.clock_count() + 1;
        let mut lower = vec![NO_CONSTANT; dim];
        let mut upper = vec![NO_CONSTANT; dim];
        lower[0] = 0;
        upper[0] = 0;
        let (l, u) = (&mut lower, &mut upper);
        for c in 0..config.clients {
            let x = config.client_clock(c);
            match self.clients[c].phase {
                Phase::Acquiring => {
                    note_guard(l, u, x, config.validity, std::iter::once(0));
                    note(l, u, x, clock_guard::holds(config.round_timeout, 0));
                }
                // Only the belief reads a holder's clock.
                Phase::Holding => note_guard(l, u, x, config.belief, belief_reading(config)),
                Phase::Idle | Phase::Finished => {}
            }
        }
        for n in 0..config.nodes {
            let y = config.key_clock(n);
            if self.owners[n] != NO_OWNER {
                note_guard(l, u, y, config.key_live, node_readings(config));
            } else if self.availability[n] == Availability::Restarting {
                note_guard(l, u, y, config.restart_delay, node_readings(config));
            }
        }
        (lower, upper)
    }

    /// Forgets every key that has certainly expired in `zone` (on the exact reading, so on
    /// every reading): to every later step such a key is the same as no key, and its clock is
    /// read no more. Likewise a restarting node whose delay is certainly over is up.
    pub fn forget_expired_keys(&mut self, config: &ZoneConfig, zone: &mut Dbm) {
        let certainly = |zone: &Dbm, y: usize, guard: Guard| match clock_guard::fails(guard, 0) {
            Constraint::AtLeast(c) => zone.get(0, y) <= Bound::le(-c),
            Constraint::AtMost(_) => false,
        };
        for n in 0..config.nodes {
            let y = config.key_clock(n);
            if self.owners[n] != NO_OWNER && certainly(zone, y, config.key_live) {
                self.owners[n] = NO_OWNER;
                zone.free(y);
            }
            let over = match clock_guard::holds(config.restart_delay, 0) {
                Constraint::AtLeast(c) => zone.get(0, y) <= Bound::le(-c),
                Constraint::AtMost(_) => false,
            };
            if self.availability[n] == Availability::Restarting && over {
                self.availability[n] = Availability::Up;
                zone.free(y);
            }
        }
    }

    /// Whether two clients can believe at one instant of `zone` (delay-closed).
    pub fn breaks_mutual_exclusion(&self, config: &ZoneConfig, zone: &Dbm) -> bool {
        let holders: Vec<usize> = self.holders(config).collect();
        // A belief is a span below a bound (`ZoneConfig::from_scenario` refuses others).
        let last = clock_guard::holds(config.belief, -config.client_error).constant();
        holders.iter().enumerate().any(|(i, &a)| {
            holders[i + 1..].iter().any(|&b| {
                zone.meets_upper_bounds(&[
                    (config.client_clock(a), last),
                    (config.client_clock(b), last),
                ])
            })
        })
    }
}

/// A client judges its belief on its clock read up to `ε_c` late, the reading that favours
/// believing (the model's `World::believes`).
fn belief_reading(config: &ZoneConfig) -> impl Iterator<Item = i32> {
    std::iter::once(-config.client_error)
}
