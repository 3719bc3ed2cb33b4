//! The discrete part of a symbolic state, and what it says about its zone: the constants
//! each clock is compared with, the keys that certainly expired, how long time may pass, and
//! whether a property breaks.

use crate::property::Property;
use crate::proto::{LockPhase, LockState, NodeSet, Tally};
use crate::storage::{Storage, StorageOp};

use super::automaton::{MAX_CLIENTS, MAX_NODES, ZoneConfig};
use super::clock_guard::Constraint;
use super::constants::{Reading, Timing};
use super::dbm::NO_CONSTANT;
use super::zone::Term;
use super::zone::Zone;

/// A holder's progress through its cycle of storage ops (the discrete model's `Work`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) struct Work {
    /// Ops of the cycle done.
    pub next: u8,
    /// An op that passed the check and has not reached the storage yet (its clock is the
    /// client's op clock).
    pub pending: Option<StorageOp>,
    /// The value the cycle's read returned.
    pub read: Option<u32>,
    /// Whether a pause stretched the pending op's wait.
    pub paused: bool,
    /// The epoch of the lease held (ghost: the ideal fencing token), from 1.
    pub epoch: u8,
}

/// One client's discrete part: its lock, and what the world holds for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct ClientSlot {
    /// The core's lock, stored without the history no transition reads
    /// ([`LockState::forgetting_history`]).
    pub lock: LockState,
    /// Nodes its `SET` has not reached yet (one bit per node).
    pub inflight: u8,
    /// The answers that reached it and that its lock has not read yet: `applied` a yes,
    /// `not_applied` a refusal (one bit per node).
    pub mailbox: Tally,
    /// Nodes whose yes in the mailbox does not count toward a quorum (young to the
    /// restarted-node guard).
    pub guarded: u8,
    /// Its storage cycle while it holds.
    pub work: Work,
}

impl ClientSlot {
    /// A client that has not begun.
    pub(crate) const IDLE: ClientSlot = ClientSlot {
        lock: LockState::new(),
        inflight: 0,
        mailbox: Tally {
            applied: NodeSet::EMPTY,
            not_applied: NodeSet::EMPTY,
            failed: NodeSet::EMPTY,
        },
        guarded: 0,
        work: Work {
            next: 0,
            pending: None,
            read: None,
            paused: false,
            epoch: 0,
        },
    };

    /// Whether it holds a lease (whether it still believes is up to its clock).
    pub(super) fn holds(&self) -> bool {
        self.lock.lease().is_some()
    }

    /// Whether its acquisition round is open.
    pub(super) fn acquiring(&self) -> bool {
        matches!(self.lock.phase(), LockPhase::Acquiring(_))
    }

    /// What the symmetric image sorts clients by: the lock's phase, its requests on their
    /// way, its mailbox (the yes that count, every answer, the yes that do not) and its
    /// storage cycle.
    pub(crate) fn order_key(&self) -> (u8, u8, u8, u8, Work, u8) {
        let (yes, answered, guarded) = self.mailbox_bits();
        (
            self.rank(),
            self.inflight,
            yes & !guarded,
            answered,
            self.work,
            guarded,
        )
    }

    /// The mailbox as node bits: every yes, every answer, the yes that do not count.
    pub(crate) fn mailbox_bits(&self) -> (u8, u8, u8) {
        (
            self.mailbox.applied.bits() as u8,
            self.mailbox.answered().bits() as u8,
            self.guarded,
        )
    }

    /// Where the lock is, as a number that orders the phases.
    fn rank(&self) -> u8 {
        match self.lock.phase() {
            LockPhase::Idle => 0,
            LockPhase::Acquiring(_) => 1,
            LockPhase::BackingOff { .. } => 2,
            LockPhase::Holding { .. } => 3,
            LockPhase::Extending { .. } => 4,
            LockPhase::Releasing(_) => 5,
            LockPhase::Finished => 6,
        }
    }
}

impl ClientSlot {
    /// The same client with its node bits moved as `move_bits` says (the symmetric image).
    /// The lock itself names no node: it reads its answers only when it decides, and forgets
    /// them once decided ([`LockState::forgetting_history`]).
    pub(crate) fn with_nodes_moved(&self, move_bits: impl Fn(u8) -> u8) -> ClientSlot {
        let moved = |set: NodeSet| NodeSet::from_bits(u64::from(move_bits(set.bits() as u8)));
        ClientSlot {
            inflight: move_bits(self.inflight),
            guarded: move_bits(self.guarded),
            mailbox: Tally {
                applied: moved(self.mailbox.applied),
                not_applied: moved(self.mailbox.not_applied),
                failed: moved(self.mailbox.failed),
            },
            ..*self
        }
    }
}

/// No key on a node.
pub(super) const NO_OWNER: u8 = u8::MAX;

/// No restart clock for a node.
pub(super) const NO_SLOT: u8 = u8::MAX;

/// Whether a node serves. A restarting node measures its restart delay on its restart clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum Availability {
    /// Serving.
    Up,
    /// Restarted; serves once its restart-delay guard holds on its clock.
    Restarting,
    /// Crashed for good.
    Down,
}

/// The discrete part of a symbolic state: every location and variable but the clocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct Discrete {
    /// One part per client (unused slots stay idle).
    pub clients: [ClientSlot; MAX_CLIENTS],
    /// The client whose key node `n` holds, or [`NO_OWNER`]. A key stays here after it
    /// expired (its clock says so) until a `SET` replaces it or its owner deletes it.
    pub owners: [u8; MAX_NODES],
    /// Jumps left in the budget.
    pub jumps_left: u8,
    /// Whether each node serves.
    pub availability: [Availability; MAX_NODES],
    /// Crashes left in the budget.
    pub crashes_left: u8,
    /// Nodes still young to the restarted-node guard (one bit per node; their restart clock
    /// says until when).
    pub young: u8,
    /// Which crash's restart clock each node reads ([`NO_SLOT`]: none).
    pub restart_slot: [u8; MAX_NODES],
    /// Nodes whose key is on disk (`fsync-periodic`; one bit per node): it survives a crash.
    pub durable: u8,
    /// Pauses left in the budget.
    pub pauses_left: u8,
    /// Acquisitions so far (the next lease's epoch is one more).
    pub epochs: u8,
    /// The guarded counter and its ghost bookkeeping (untouched without storage).
    pub storage: Storage,
}

/// How far ahead a node's clock may read when it serves a request: exactly, or at the fast
/// end of its error band (the model's two readings; what a reading in between decides, one
/// of the two decides too, since every node test is monotone in the reading).
pub(crate) fn node_readings(config: &ZoneConfig) -> impl Iterator<Item = Reading> {
    let moves = config
        .parameters
        .as_ref()
        .is_some_and(|p| p.moves(Reading::NodeFast));
    let fast = (config.node_error > 0 || moves).then_some(Reading::NodeFast);
    std::iter::once(Reading::Exact).chain(fast)
}

/// Raises `lower`/`upper` of clock `x` to the constant of `constraint`.
fn note(lower: &mut [i32], upper: &mut [i32], x: usize, constraint: Constraint) {
    match constraint {
        Constraint::AtMost(_) => upper[x] = upper[x].max(constraint.constant()),
        Constraint::AtLeast(_) => lower[x] = lower[x].max(constraint.constant()),
    }
}

/// Raises the constants of clock `x` to both sides of `timing`'s guard, on every reading in
/// `readings`.
fn note_guard(
    lower: &mut [i32],
    upper: &mut [i32],
    x: usize,
    (config, timing): (&ZoneConfig, Timing),
    readings: impl Iterator<Item = Reading>,
) {
    for reading in readings {
        note(lower, upper, x, config.holds(timing, reading));
        note(lower, upper, x, config.fails(timing, reading));
    }
}

impl Discrete {
    /// The start: every client idle, no keys, the whole budgets.
    pub(super) fn initial(config: &ZoneConfig) -> Discrete {
        Discrete {
            clients: [ClientSlot::IDLE; MAX_CLIENTS],
            owners: [NO_OWNER; MAX_NODES],
            jumps_left: config.jumps,
            availability: [Availability::Up; MAX_NODES],
            crashes_left: config.crashes,
            young: 0,
            restart_slot: [NO_SLOT; MAX_NODES],
            durable: 0,
            pauses_left: config.pauses,
            epochs: 0,
            storage: Storage::default(),
        }
    }

    /// The clients that hold a lease (whether they still believe is up to the clocks).
    pub(super) fn holders(&self, config: &ZoneConfig) -> impl Iterator<Item = usize> + '_ {
        (0..config.clients).filter(|&c| self.clients[c].holds())
    }

    /// The nodes whose key's expiry may still decide something a client reads (one bit per
    /// node): those a client that has not begun will send its `SET` to, and those whose
    /// answer a client with its round open still waits for. On every other node each later
    /// step that reads the key (a late `SET`'s answer to a client past its decision, a
    /// release, whose answers no client acts on) leaves every client's phase, clock and
    /// storage op as they are, whatever the key's expiry; and the set only shrinks, since the
    /// zone engine takes no retries and no extensions.
    pub(super) fn deciding_keys(&self, config: &ZoneConfig) -> u8 {
        (0..config.clients).fold(0, |nodes, c| {
            let part = &self.clients[c];
            nodes
                | match part.lock.phase() {
                    LockPhase::Idle | LockPhase::BackingOff { .. } => config.reach[c],
                    LockPhase::Acquiring(_) => part.inflight,
                    _ => 0,
                }
        })
    }

    /// The constants each clock is compared with from here on, for Extra⁺_LU: `(lower,
    /// upper)`, index 0 the reference clock. A clock that nothing reads again has none; with
    /// `dead_keys`, neither has a key's clock once its expiry decides nothing
    /// ([`Discrete::deciding_keys`]).
    pub(super) fn lu_bounds(&self, config: &ZoneConfig, dead_keys: bool) -> (Vec<i32>, Vec<i32>) {
        let dim = config.clock_count() + 1;
        let mut lower = vec![NO_CONSTANT; dim];
        let mut upper = vec![NO_CONSTANT; dim];
        lower[0] = 0;
        upper[0] = 0;
        let (l, u) = (&mut lower, &mut upper);
        for c in 0..config.clients {
            self.client_bounds(config, c, l, u);
        }
        let timed = if dead_keys {
            self.deciding_keys(config)
        } else {
            u8::MAX
        };
        for n in 0..config.nodes {
            let y = config.key_clock(n);
            if self.owners[n] != NO_OWNER && timed & (1 << n) != 0 {
                note_guard(l, u, y, (config, Timing::KeyLive), node_readings(config));
            }
            let Some(r) = self.restart_clock(config, n) else {
                continue;
            };
            if self.availability[n] == Availability::Restarting {
                note_guard(
                    l,
                    u,
                    r,
                    (config, Timing::RestartDelay),
                    node_readings(config),
                );
            }
            if config.young.is_some() && self.young & (1 << n) != 0 {
                note_guard(l, u, r, (config, Timing::Young), node_readings(config));
            }
        }
        (lower, upper)
    }

    /// The constants client `c`'s clocks are compared with from here on. A clock that a
    /// backward jump may still step back by `B` in all is compared, before the jumps, with
    /// each constant plus `B` (a guard `x ≤ c` after a step of `−J` is `x ≤ c + J` before it),
    /// which keeps Extra⁺_LU sound with backward shifts.
    fn client_bounds(&self, config: &ZoneConfig, c: usize, l: &mut [i32], u: &mut [i32]) {
        let x = config.client_clock(c);
        let part = self.clients[c];
        if part.acquiring() {
            let exact = [Reading::Exact].into_iter();
            note_guard(l, u, x, (config, Timing::Validity), exact);
            note(l, u, x, config.holds(Timing::RoundTimeout, Reading::Exact));
        } else if part.holds() {
            note_guard(l, u, x, (config, Timing::Belief), belief_reading());
            if let Some(storage) = &config.storage {
                note_guard(l, u, x, (config, Timing::Margin), belief_reading());
                // A pending op's wait is bounded by an invariant.
                let allowance = storage.allowance(part.work.paused);
                if let (Some(_), Some(a)) = (part.work.pending, allowance) {
                    note(
                        l,
                        u,
                        config.op_clock(c),
                        Constraint::AtMost(Term::number(a)),
                    );
                }
            }
        }
        if config.client_backward_jumps() {
            let back = i32::from(self.jumps_left) * config.jump_ticks.abs();
            for bound in [&mut l[x], &mut u[x]] {
                if *bound != NO_CONSTANT {
                    *bound += back;
                }
            }
        }
    }

    /// Whether some holder is between two ops of its cycle: it computes in zero time, so no
    /// time passes until it sends the next op (the discrete model's allowance).
    pub(super) fn urgent(&self, config: &ZoneConfig) -> bool {
        config.storage.is_some()
            && self.holders(config).any(|c| {
                let work = self.clients[c].work;
                work.next > 0 && work.pending.is_none()
            })
    }

    /// What follows a step: time passes (unless a holder is between two ops), the
    /// invariants cut the delay, and what no later step reads is forgotten. False when no
    /// valuation meets the invariants.
    pub(crate) fn settle<Z: Zone>(&mut self, config: &ZoneConfig, zone: &mut Z) -> bool {
        if !self.urgent(config) {
            zone.up();
        }
        if !self.within_invariants(config, zone) {
            return false;
        }
        self.forget_expired_keys(config, zone);
        true
    }

    /// Restricts `zone` to where every pending op is still within its wait: an op lands
    /// before its delay (stretched by a pause) runs out. False when nothing is left.
    pub(super) fn within_invariants<Z: Zone>(&self, config: &ZoneConfig, zone: &mut Z) -> bool {
        if config.storage.is_none() {
            return true;
        }
        self.holders(config).all(|c| {
            let work = self.clients[c].work;
            match (work.pending, config.wait(work.paused)) {
                (Some(_), Some(wait)) => wait.restrict(zone, config.op_clock(c)),
                _ => true,
            }
        })
    }

    /// Forgets what no later step reads: every key that has certainly expired in `zone` (on the exact reading, so on
    /// every reading): to every later step such a key is the same as no key, and its clock is
    /// read no more. Likewise a restarting node whose delay is certainly over is up.
    pub(super) fn forget_expired_keys<Z: Zone>(&mut self, config: &ZoneConfig, zone: &mut Z) {
        // Only a crash reads what is on disk: with none left, states that differ only in it
        // are one state.
        if self.crashes_left == 0 {
            self.durable = 0;
        }
        for n in 0..config.nodes {
            let y = config.key_clock(n);
            let expired = config
                .fails(Timing::KeyLive, Reading::Exact)
                .certain(zone, y);
            if self.owners[n] != NO_OWNER && expired {
                self.remove_key(zone, config, n);
            }
            self.forget_restart(config, zone, n);
        }
    }

    /// Node `n` has no key any more (deleted, expired, or lost in a crash): nothing reads its
    /// key clock, and nothing is left to write to disk.
    pub(crate) fn remove_key<Z: Zone>(&mut self, zone: &mut Z, config: &ZoneConfig, n: usize) {
        self.owners[n] = NO_OWNER;
        self.durable &= !(1 << n);
        zone.free(config.key_clock(n));
    }

    /// A restart delay and a young guard that are certainly over on node `n`'s exact reading
    /// (so on every reading) are over: the node serves, its yes counts, and its restart clock
    /// is read no more once neither is left.
    fn forget_restart<Z: Zone>(&mut self, config: &ZoneConfig, zone: &mut Z, n: usize) {
        let Some(r) = self.restart_clock(config, n) else {
            return;
        };
        let served = config
            .holds(Timing::RestartDelay, Reading::Exact)
            .certain(zone, r);
        if self.availability[n] == Availability::Restarting && served {
            self.availability[n] = Availability::Up;
        }
        let grown =
            config.young.is_some() && config.fails(Timing::Young, Reading::Exact).certain(zone, r);
        if grown {
            self.young &= !(1 << n);
        }
        if self.availability[n] != Availability::Restarting && self.young & (1 << n) == 0 {
            zone.free(r);
            self.restart_slot[n] = NO_SLOT;
        }
    }

    /// The restart clock node `n` reads, if it is restarting or young.
    pub(crate) fn restart_clock(&self, config: &ZoneConfig, n: usize) -> Option<usize> {
        let slot = self.restart_slot[n];
        (slot != NO_SLOT).then(|| config.restart_clock(usize::from(slot)))
    }

    /// The parts of `zone` where the state breaks `property`: where each pair of holders
    /// both believe, for mutual exclusion; all of it, for a storage property it breaks.
    pub(crate) fn broken<Z: Zone>(
        &self,
        config: &ZoneConfig,
        zone: &Z,
        property: Property,
    ) -> Vec<Z> {
        match property {
            Property::MutualExclusion => self.both_believe(config, zone),
            Property::StorageSafety if self.breaks_storage_safety() => vec![zone.clone()],
            Property::NoLostUpdate if self.breaks_no_lost_update() => vec![zone.clone()],
            _ => Vec::new(),
        }
    }

    /// Whether two clients can believe at one instant of `zone` (delay-closed).
    pub(super) fn breaks_mutual_exclusion<Z: Zone>(&self, config: &ZoneConfig, zone: &Z) -> bool {
        // Most states have fewer than two holders: no allocation for them.
        self.holders(config).nth(1).is_some() && !self.both_believe(config, zone).is_empty()
    }

    /// For each pair of holders that can believe at one instant of `zone`, the part of
    /// `zone` where they do.
    pub(crate) fn both_believe<Z: Zone>(&self, config: &ZoneConfig, zone: &Z) -> Vec<Z> {
        let holders: Vec<usize> = self.holders(config).collect();
        // A belief is a span below a bound (`ZoneConfig::from_scenario` refuses others).
        let believes = config.holds(Timing::Belief, Reading::ClientLate);
        let mut out = Vec::new();
        for (i, &a) in holders.iter().enumerate() {
            for &b in &holders[i + 1..] {
                let mut both = zone.clone();
                if believes.restrict(&mut both, config.client_clock(a))
                    && believes.restrict(&mut both, config.client_clock(b))
                {
                    out.push(both);
                }
            }
        }
        out
    }
}

impl Discrete {
    /// Whether the storage applied an op of an older epoch after one of a newer epoch.
    pub(super) fn breaks_storage_safety(&self) -> bool {
        !self.storage.fenced_order_holds()
    }

    /// Whether the counter lost an acknowledged write.
    pub(super) fn breaks_no_lost_update(&self) -> bool {
        !self.storage.no_lost_update_holds()
    }
}

/// A client judges its belief (and its check margin) on its clock read up to `ε_c` late, the
/// reading that favours believing (the model's `World::believes`).
fn belief_reading() -> impl Iterator<Item = Reading> {
    std::iter::once(Reading::ClientLate)
}
