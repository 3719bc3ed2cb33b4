//! The transitions of the timed automaton: every step enabled somewhere in a zone, with the
//! zone of the states it leads to.
//!
//! The steps are the model's (`model::apply`), for the scenarios the engine accepts:
//!
//! - `Begin(c)`: client `c` reads T1 (its clock `x_c := 0`) and sends `SET NX PX ttl` to every
//!   node it reaches.
//! - `Deliver(c, n)`: the request reaches node `n`, after any delay (the model bounds no
//!   request's delay either, so no message needs a clock). The node sets the key when it has
//!   none, or when its key-live guard fails on its clock read exactly or `ε_n` fast; it
//!   refuses while the guard holds on the exact reading. A restarting node serves once its
//!   restart-delay guard holds on either reading. An applied `SET` resets the key's clock.
//! - `Refuse(c, n)`: in the two-client cutoff only, the node refuses a `SET` it would apply,
//!   as another client's key there would make it.
//! - `Decide(c)`: once the tally decides the round (a quorum applied with `at-quorum`, every
//!   node answered, or a quorum is out of reach) or the round-timeout guard holds, and at any
//!   later moment: won when a quorum applied and the validity guard holds, lost otherwise (a
//!   lost round releases at once, as the core asks, and the client is done).
//! - `Release(c)`: a holder releases at any moment, at once, on every node it reaches.
//! - `Jump(n)`, `ClientJump(c)`: a node's (a client's) clock steps by `J` (a node's forward only; a
//!   client's either way), and so does
//!   what it measures (a key's age or a restart delay; a round or a lease). Only a clock that
//!   measures something may jump: elsewhere a jump changes nothing but the budget (the model
//!   prunes those jumps for the same reason).
//! - `Fsync(n)`: with `fsync-periodic`, a node writes its key to disk at any moment after the
//!   `SET` (or not before a crash).
//! - `Crash(n)`: the node loses its key (unless it is on disk) and restarts at once, after its
//!   restart delay on its own clock, or never; until it serves, every request gets a failure.
//!   With the restarted-node guard, its yes does not count toward a quorum while it is young
//!   (less than the restart delay plus the guard since the restart, on its clock).
//! - With storage, a holder runs the storage's cycle instead of releasing: `Issue(c)` checks
//!   the core's margin guard on its clock (read up to `ε_c` late) and sends the next op (its op
//!   clock `w_c := 0`), or gives up and releases where the check fails; `Land(c)` applies the
//!   op at the storage at any moment while `w_c` is within the op's delay (an invariant), and
//!   the holder sends its next op at once (no time passes between two ops) or, after the last
//!   one or a rejection, releases; `Pause(c)` stretches a pending op's delay by the pause.

use crate::actor::Actor;
use crate::proto::LockPhase;
use crate::storage::{StorageOp, StorageReply};

use super::automaton::ZoneConfig;
use super::clock_guard::where_;
use super::constants::{Reading, Timing};
use super::dbm::Dbm;
use super::discrete::{Availability, Discrete, NO_OWNER, node_readings};
use super::symmetry::Renaming;
use super::zone::Zone;

/// One transition, for counterexamples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneStep {
    /// Client `c` reads T1 and sends its `SET`s.
    Begin(usize),
    /// A client's `SET` reaches a node.
    Deliver {
        /// The client.
        client: usize,
        /// The node.
        node: usize,
        /// Whether the node set the key.
        applied: bool,
        /// Whether its answer counts toward the quorum (not while the restarted-node guard
        /// covers the node).
        counts: bool,
    },
    /// A node refuses a client's `SET` it would have applied, as if another client's key
    /// were there (the two-client cutoff's phantom refusal).
    Refuse {
        /// The client.
        client: usize,
        /// The node.
        node: usize,
    },
    /// A client decides its round.
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
    /// A client's clock jumps.
    ClientJump {
        /// The client.
        client: usize,
        /// Whether forward (the configuration's jump is positive) or backward.
        forward: bool,
    },
    /// Node `n` crashes (and restarts, unless configured not to).
    Crash(usize),
    /// Node `n` writes its key to disk (`fsync-periodic`).
    Fsync(usize),
    /// A holder's check passed and it sends its next storage op.
    Issue {
        /// The holder.
        client: usize,
        /// The op.
        op: StorageOp,
    },
    /// A holder's check failed: it stops using the lock and releases.
    GiveUp(usize),
    /// A holder's pending op reaches the storage.
    Land {
        /// The holder.
        client: usize,
        /// The op.
        op: StorageOp,
        /// Whether the storage applied it (its protection may reject it).
        applied: bool,
    },
    /// A holder pauses while its op waits.
    Pause(usize),
}

impl ZoneStep {
    /// The same step with its client and node named by `names` (an image's index to the
    /// run's).
    pub(crate) fn renamed(self, names: &Renaming) -> ZoneStep {
        let client = |c: usize| usize::from(names.clients[c]);
        let node = |n: usize| usize::from(names.nodes[n]);
        match self {
            ZoneStep::Begin(c) => ZoneStep::Begin(client(c)),
            ZoneStep::Deliver {
                client: c,
                node: n,
                applied,
                counts,
            } => ZoneStep::Deliver {
                client: client(c),
                node: node(n),
                applied,
                counts,
            },
            ZoneStep::Refuse { client: c, node: n } => ZoneStep::Refuse {
                client: client(c),
                node: node(n),
            },
            ZoneStep::Decide { client: c, won } => ZoneStep::Decide {
                client: client(c),
                won,
            },
            ZoneStep::Release(c) => ZoneStep::Release(client(c)),
            ZoneStep::Jump(n) => ZoneStep::Jump(node(n)),
            ZoneStep::ClientJump { client: c, forward } => ZoneStep::ClientJump {
                client: client(c),
                forward,
            },
            ZoneStep::Crash(n) => ZoneStep::Crash(node(n)),
            ZoneStep::Fsync(n) => ZoneStep::Fsync(node(n)),
            ZoneStep::Issue { client: c, op } => ZoneStep::Issue {
                client: client(c),
                op,
            },
            ZoneStep::GiveUp(c) => ZoneStep::GiveUp(client(c)),
            ZoneStep::Land {
                client: c,
                op,
                applied,
            } => ZoneStep::Land {
                client: client(c),
                op,
                applied,
            },
            ZoneStep::Pause(c) => ZoneStep::Pause(client(c)),
        }
    }
}

/// The step in the words of the discrete checker's step list, with the actors' names.
impl std::fmt::Display for ZoneStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            ZoneStep::Begin(c) => write!(f, "{} begins a round", Actor::client(c)),
            ZoneStep::Deliver {
                client,
                node,
                applied,
                counts,
            } => {
                let answer = if applied { "sets the key" } else { "refuses" };
                let young = if counts {
                    ""
                } else {
                    " (young: its answer does not count)"
                };
                write!(
                    f,
                    "{} gets {}'s SET and {answer}{young}",
                    Actor::node(node),
                    Actor::client(client)
                )
            }
            ZoneStep::Refuse { client, node } => write!(
                f,
                "{} gets {}'s SET and refuses (another client's key, in the two-client cutoff)",
                Actor::node(node),
                Actor::client(client)
            ),
            ZoneStep::Decide { client, won: true } => {
                write!(f, "{} acquires the lock", Actor::client(client))
            }
            ZoneStep::Decide { client, won: false } => {
                write!(f, "{} fails to acquire and releases", Actor::client(client))
            }
            ZoneStep::Release(c) => write!(f, "{} releases", Actor::client(c)),
            ZoneStep::Jump(n) => write!(f, "{}'s clock jumps forward", Actor::node(n)),
            ZoneStep::ClientJump { client, forward } => {
                let way = if forward { "forward" } else { "backward" };
                write!(f, "{}'s clock jumps {way}", Actor::client(client))
            }
            ZoneStep::Crash(n) => write!(f, "{} crashes", Actor::node(n)),
            ZoneStep::Fsync(n) => write!(f, "{} writes its key to disk", Actor::node(n)),
            ZoneStep::Issue { client, op } => write!(
                f,
                "{} checks its lease and sends {op}",
                Actor::client(client)
            ),
            ZoneStep::GiveUp(c) => write!(
                f,
                "{} finds too little of its lease left and releases",
                Actor::client(c)
            ),
            ZoneStep::Land {
                client,
                op,
                applied,
            } => {
                let answer = if applied { "applies" } else { "rejects" };
                write!(f, "the storage {answer} {}'s {op}", Actor::client(client))
            }
            ZoneStep::Pause(c) => write!(f, "{} pauses", Actor::client(c)),
        }
    }
}

/// A step, the discrete part it leads to, and the zone there (before the delay that follows).
pub(crate) type Successor<Z = Dbm> = (ZoneStep, Discrete, Z);

/// What a node answers a `SET`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct NodeAnswer {
    applied: bool,
    counts: bool,
}

impl Discrete {
    /// Every transition enabled somewhere in `zone` (delay-closed), appended to `out`.
    pub(crate) fn successors<Z: Zone>(
        &self,
        config: &ZoneConfig,
        zone: &Z,
        out: &mut Vec<Successor<Z>>,
    ) {
        for c in 0..config.clients {
            let part = self.clients[c];
            match part.lock.phase() {
                LockPhase::Idle => self.begin(config, zone, c, out),
                LockPhase::Acquiring(_) => self.decide(config, zone, c, out),
                LockPhase::Holding { .. } if config.storage.is_some() => {
                    self.work(config, zone, c, out)
                }
                LockPhase::Holding { .. } => {
                    let mut next = *self;
                    let mut z = zone.clone();
                    next.release(config, &mut z, c);
                    out.push((ZoneStep::Release(c), next, z));
                }
                // Refused by the configuration (one attempt, no extension), or done.
                LockPhase::BackingOff { .. }
                | LockPhase::Extending { .. }
                | LockPhase::Releasing(_)
                | LockPhase::Finished => {}
            }
            for n in 0..config.nodes {
                if part.inflight & (1 << n) != 0 {
                    self.deliver(config, zone, c, n, out);
                }
            }
        }
        self.faults(config, zone, out);
    }

    /// The successors of `(self, zone)` by `step` alone, at the instant of the step.
    pub(crate) fn successors_by<Z: Zone>(
        &self,
        config: &ZoneConfig,
        zone: &Z,
        step: ZoneStep,
    ) -> Vec<(Discrete, Z)> {
        let mut out = Vec::new();
        self.successors(config, zone, &mut out);
        out.into_iter()
            .filter(|(s, _, _)| *s == step)
            .map(|(_, d, z)| (d, z))
            .collect()
    }

    /// The crashes, clock jumps and pauses the budgets still allow.
    fn faults<Z: Zone>(&self, config: &ZoneConfig, zone: &Z, out: &mut Vec<Successor<Z>>) {
        if self.crashes_left > 0 {
            for n in 0..config.nodes {
                if self.availability[n] != Availability::Down {
                    let mut next = *self;
                    let mut z = zone.clone();
                    next.crash(config, &mut z, n);
                    out.push((ZoneStep::Crash(n), next, z));
                }
            }
        }
        // Only a crash reads what is on disk: with none left, an fsync changes nothing.
        if config.periodic_fsync && self.crashes_left > 0 {
            for n in 0..config.nodes {
                if self.owners[n] != NO_OWNER && self.durable & (1 << n) == 0 {
                    let mut next = *self;
                    next.durable |= 1 << n;
                    out.push((ZoneStep::Fsync(n), next, zone.clone()));
                }
            }
        }
        if self.pauses_left > 0 {
            for c in self.holders(config) {
                let work = self.clients[c].work;
                if work.pending.is_some() && !work.paused {
                    let mut next = *self;
                    next.pauses_left -= 1;
                    next.clients[c].work.paused = true;
                    out.push((ZoneStep::Pause(c), next, zone.clone()));
                }
            }
        }
        if self.jumps_left > 0 {
            self.jumps(config, zone, out);
        }
    }

    /// The clock jumps: of a node whose clock measures something, of a client measuring its
    /// round or its lease.
    fn jumps<Z: Zone>(&self, config: &ZoneConfig, zone: &Z, out: &mut Vec<Successor<Z>>) {
        for n in (0..config.nodes).filter(|_| config.node_jumps) {
            // A jump matters where the node's clock measures something: a key's age, a
            // restart delay, or the young guard.
            let measures = self.owners[n] != NO_OWNER
                || self.availability[n] == Availability::Restarting
                || self.young & (1 << n) != 0;
            if measures && config.jump_node.is_none_or(|j| j == n) {
                out.push(self.node_jumped(config, zone, n));
            }
        }
        for c in (0..config.clients).filter(|_| config.client_jumps) {
            // A client's clock measures its round or its lease.
            let slot = &self.clients[c];
            let measures = slot.acquiring() || slot.holds();
            if measures && config.jump_client.is_none_or(|j| j == c) {
                let mut next = *self;
                next.jumps_left -= 1;
                let mut z = zone.clone();
                z.shift(config.client_clock(c), config.jump());
                let step = ZoneStep::ClientJump {
                    client: c,
                    forward: config.jump_ticks > 0,
                };
                out.push((step, next, z));
            }
        }
    }

    /// Node `n`'s clock steps forward by the jump, and so does everything it measures.
    fn node_jumped<Z: Zone>(&self, config: &ZoneConfig, zone: &Z, n: usize) -> Successor<Z> {
        let mut next = *self;
        next.jumps_left -= 1;
        let mut z = zone.clone();
        z.shift(config.key_clock(n), config.jump());
        if let Some(r) = self.restart_clock(config, n) {
            z.shift(r, config.jump());
        }
        (ZoneStep::Jump(n), next, z)
    }

    /// Node `n` crashes: the key survives with `fsync-always`, or with `fsync-periodic` once
    /// it is on disk; the node comes back at once, after its restart delay, or never, and is
    /// young to the guard for a while.
    fn crash<Z: Zone>(&mut self, config: &ZoneConfig, zone: &mut Z, n: usize) {
        // This crash's restart clock: one per crash in the budget.
        let slot = config.crashes - self.crashes_left;
        self.crashes_left -= 1;
        let on_disk = config.keeps_keys || (config.periodic_fsync && self.durable & (1 << n) != 0);
        // A key on a node that never serves again is the same as no key.
        if !on_disk || !config.restarts {
            self.remove_key(zone, config, n);
        }
        if config.times_restarts() {
            if let Some(old) = self.restart_clock(config, n) {
                zone.free(old);
            }
            self.restart_slot[n] = slot;
            zone.reset(config.restart_clock(usize::from(slot)));
        }
        if config.restarts && config.young.is_some() {
            self.young |= 1 << n;
        }
        self.availability[n] = if !config.restarts {
            Availability::Down
        } else if config.delays_restarts() {
            Availability::Restarting
        } else {
            Availability::Up
        };
    }

    /// Client `c`'s `SET` reaches node `n`: each answer the node may give, where it gives it.
    /// The node reads its clock exactly or up to `ε_n` fast, the same reading for everything
    /// it measures (key, restart delay, young guard); an answer that both readings give is
    /// kept once, on the larger zone.
    fn deliver<Z: Zone>(
        &self,
        config: &ZoneConfig,
        zone: &Z,
        c: usize,
        n: usize,
        out: &mut Vec<Successor<Z>>,
    ) {
        let mut answers: Vec<(NodeAnswer, Z)> = Vec::new();
        for reading in node_readings(config) {
            for (answer, z) in self.answers_at(config, zone, n, reading) {
                keep_largest(&mut answers, answer, z);
            }
        }
        for (answer, z) in answers {
            // After the real answer: of two runs as short, the search keeps the one without.
            let phantom = (config.phantoms && answer.applied).then(|| z.clone());
            out.push(self.arrive(config, c, n, answer, z));
            if let Some(z) = phantom {
                out.push(self.phantom_refusal(c, n, z));
            }
        }
    }

    /// Node `n` refuses client `c`'s `SET` where it would apply it, as a third client's key
    /// there would make it (see [`ZoneConfig::with_phantom_clients`]).
    fn phantom_refusal<Z: Zone>(&self, c: usize, n: usize, z: Z) -> Successor<Z> {
        let mut next = *self;
        next.clients[c].inflight &= !(1 << n);
        next.post(c, n, false, true);
        (ZoneStep::Refuse { client: c, node: n }, next, z)
    }

    /// Node `n`'s answers to a `SET` on its clock read on `reading`, each where it gives it.
    fn answers_at<Z: Zone>(
        &self,
        config: &ZoneConfig,
        zone: &Z,
        n: usize,
        reading: Reading,
    ) -> Vec<(NodeAnswer, Z)> {
        let refused = NodeAnswer {
            applied: false,
            counts: true,
        };
        let (serving, failing) = match self.availability[n] {
            // Unavailable: the answer is a failure, which counts as answered.
            Availability::Down => (None, Some(zone.clone())),
            Availability::Restarting => {
                let r = self
                    .restart_clock(config, n)
                    .expect("a restarting node is timed");
                (
                    where_(zone, r, config.holds(Timing::RestartDelay, reading)),
                    where_(zone, r, config.fails(Timing::RestartDelay, reading)),
                )
            }
            Availability::Up => (Some(zone.clone()), None),
        };
        let mut out: Vec<(NodeAnswer, Z)> = failing.map(|z| (refused, z)).into_iter().collect();
        let Some(serving) = serving else {
            return out;
        };
        // SET NX is refused while the key lives, and sets a new key once it expired.
        let (live, dead) = if self.owners[n] == NO_OWNER {
            (None, Some(serving))
        } else {
            let y = config.key_clock(n);
            (
                where_(&serving, y, config.holds(Timing::KeyLive, reading)),
                where_(&serving, y, config.fails(Timing::KeyLive, reading)),
            )
        };
        out.extend(live.map(|z| (refused, z)));
        if let Some(applied) = dead {
            self.applied_answers(config, applied, n, reading, &mut out);
        }
        out
    }

    /// Node `n` sets the key where `zone` says: a yes that counts, or, while the
    /// restarted-node guard covers the node on its clock read on `reading`, one that does
    /// not.
    fn applied_answers<Z: Zone>(
        &self,
        config: &ZoneConfig,
        zone: Z,
        n: usize,
        reading: Reading,
        out: &mut Vec<(NodeAnswer, Z)>,
    ) {
        if config.young.is_none() || self.young & (1 << n) == 0 {
            let answer = NodeAnswer {
                applied: true,
                counts: true,
            };
            out.push((answer, zone));
            return;
        }
        let r = self
            .restart_clock(config, n)
            .expect("a young node is timed");
        for (counts, constraint) in [
            (false, config.holds(Timing::Young, reading)),
            (true, config.fails(Timing::Young, reading)),
        ] {
            if let Some(z) = where_(&zone, r, constraint) {
                let answer = NodeAnswer {
                    applied: true,
                    counts,
                };
                out.push((answer, z));
            }
        }
    }

    /// The successor where node `n` answered client `c`'s `SET` with `answer`.
    fn arrive<Z: Zone>(
        &self,
        config: &ZoneConfig,
        c: usize,
        n: usize,
        answer: NodeAnswer,
        z: Z,
    ) -> Successor<Z> {
        let mut next = *self;
        let mut z = z;
        if answer.applied {
            // A restarting node that serves is up from now on; the new key is not on disk.
            next.availability[n] = Availability::Up;
            next.owners[n] = c as u8;
            next.durable &= !(1 << n);
            z.reset(config.key_clock(n));
        }
        next.clients[c].inflight &= !(1 << n);
        next.post(c, n, answer.applied, answer.counts);
        let step = ZoneStep::Deliver {
            client: c,
            node: n,
            applied: answer.applied,
            counts: answer.counts,
        };
        (step, next, z)
    }

    /// Holder `c`'s next step in its storage cycle: land its pending op, or check its lease
    /// and send the next one (or give up where the check fails).
    fn work<Z: Zone>(&self, config: &ZoneConfig, zone: &Z, c: usize, out: &mut Vec<Successor<Z>>) {
        let storage = config
            .storage
            .as_ref()
            .expect("a holder works only with storage");
        let work = self.clients[c].work;
        if let Some(op) = work.pending {
            out.push(self.land(config, zone, c, op));
            return;
        }
        let x = config.client_clock(c);
        let late = Reading::ClientLate;
        if let Some(mut z) = where_(zone, x, config.holds(Timing::Margin, late)) {
            let epoch = u32::from(work.epoch);
            // The ideal token source: the fencing token is the lease's epoch.
            let op = storage.ops[usize::from(work.next)].op(epoch, epoch, work.read);
            let mut next = *self;
            next.clients[c].work.pending = Some(op);
            next.clients[c].work.paused = false;
            z.reset(config.op_clock(c));
            out.push((ZoneStep::Issue { client: c, op }, next, z));
        }
        if let Some(mut z) = where_(zone, x, config.fails(Timing::Margin, late)) {
            let mut next = *self;
            next.release(config, &mut z, c);
            out.push((ZoneStep::GiveUp(c), next, z));
        }
    }

    /// Holder `c`'s pending `op` reaches the storage; the reply is applied at once (the
    /// discrete model's shortcut), and after a rejection or the cycle's last op it releases.
    fn land<Z: Zone>(
        &self,
        config: &ZoneConfig,
        zone: &Z,
        c: usize,
        op: StorageOp,
    ) -> Successor<Z> {
        let storage = config.storage.as_ref().expect("storage");
        let mut next = *self;
        let mut z = zone.clone();
        z.free(config.op_clock(c));
        let reply = next.storage.apply(op, storage.protection);
        let work = &mut next.clients[c].work;
        work.pending = None;
        work.paused = false;
        let applied = reply != StorageReply::Rejected;
        if let StorageReply::Value(value) = reply {
            work.read = Some(value);
        }
        if applied {
            work.next += 1;
        }
        if !applied || usize::from(work.next) >= storage.ops.len() {
            next.release(config, &mut z, c);
        }
        let step = ZoneStep::Land {
            client: c,
            op,
            applied,
        };
        (step, next, z)
    }
}

/// Adds `(answer, zone)` to `answers`, unless the same answer is there on a zone that includes
/// it; a zone of the same answer that it includes is replaced.
fn keep_largest<Z: Zone>(answers: &mut Vec<(NodeAnswer, Z)>, answer: NodeAnswer, zone: Z) {
    for (kept, kept_zone) in answers.iter_mut() {
        if *kept != answer {
            continue;
        }
        if kept_zone.includes(&zone) {
            return;
        }
        if zone.includes(kept_zone) {
            *kept_zone = zone;
            return;
        }
    }
    answers.push((answer, zone));
}
