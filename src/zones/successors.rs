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
//! - `Decide(c)`: once the tally decides the round (a quorum applied with `at-quorum`, every
//!   node answered, or a quorum is out of reach) or the round-timeout guard holds, and at any
//!   later moment: won when a quorum applied and the validity guard holds, lost otherwise (a
//!   lost round releases at once, as the core asks, and the client is done).
//! - `Release(c)`: a holder releases at any moment, at once, on every node it reaches.
//! - `Jump(n)`, `ClientJump(c)`: a node's (a client's) clock steps forward by `J`, and so does
//!   what it measures (a key's age or a restart delay; a round or a lease). Only a clock that
//!   measures something may jump: elsewhere a jump changes nothing but the budget (the model
//!   prunes those jumps for the same reason).
//! - `Crash(n)`: the node loses its key (unless `fsync-always`) and restarts at once, after its
//!   restart delay on its own clock, or never; until it serves, every request gets a failure.

use crate::actor::Actor;

use super::clock_guard::{self, where_};
use super::config::ZoneConfig;
use super::dbm::Dbm;
use super::state::{Availability, ClientPart, Discrete, NO_OWNER, Phase};
use super::symmetry::Renaming;

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
    /// Client `c`'s clock jumps forward.
    ClientJump(usize),
    /// Node `n` crashes (and restarts, unless configured not to).
    Crash(usize),
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
            } => ZoneStep::Deliver {
                client: client(c),
                node: node(n),
                applied,
            },
            ZoneStep::Decide { client: c, won } => ZoneStep::Decide {
                client: client(c),
                won,
            },
            ZoneStep::Release(c) => ZoneStep::Release(client(c)),
            ZoneStep::Jump(n) => ZoneStep::Jump(node(n)),
            ZoneStep::ClientJump(c) => ZoneStep::ClientJump(client(c)),
            ZoneStep::Crash(n) => ZoneStep::Crash(node(n)),
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
            } => {
                let answer = if applied { "sets the key" } else { "refuses" };
                write!(
                    f,
                    "{} gets {}'s SET and {answer}",
                    Actor::node(node),
                    Actor::client(client)
                )
            }
            ZoneStep::Decide { client, won: true } => {
                write!(f, "{} acquires the lock", Actor::client(client))
            }
            ZoneStep::Decide { client, won: false } => {
                write!(f, "{} fails to acquire and releases", Actor::client(client))
            }
            ZoneStep::Release(c) => write!(f, "{} releases", Actor::client(c)),
            ZoneStep::Jump(n) => write!(f, "{}'s clock jumps forward", Actor::node(n)),
            ZoneStep::ClientJump(c) => write!(f, "{}'s clock jumps forward", Actor::client(c)),
            ZoneStep::Crash(n) => write!(f, "{} crashes", Actor::node(n)),
        }
    }
}

/// A step, the discrete part it leads to, and the zone there (before the delay that follows).
pub(crate) type Successor = (ZoneStep, Discrete, Dbm);

impl Discrete {
    /// Every transition enabled somewhere in `zone` (delay-closed), appended to `out`.
    pub(crate) fn successors(&self, config: &ZoneConfig, zone: &Dbm, out: &mut Vec<Successor>) {
        for c in 0..config.clients {
            let part = self.clients[c];
            match part.phase {
                Phase::Idle => {
                    let mut next = *self;
                    next.clients[c] = ClientPart::new(Phase::Acquiring, config.reach[c]);
                    let mut z = zone.clone();
                    z.reset(config.client_clock(c));
                    out.push((ZoneStep::Begin(c), next, z));
                }
                Phase::Acquiring => self.decide(config, zone, c, out),
                Phase::Holding => {
                    let mut next = *self;
                    let mut z = zone.clone();
                    next.release(config, &mut z, c);
                    out.push((ZoneStep::Release(c), next, z));
                }
                Phase::Finished => {}
            }
            for n in 0..config.nodes {
                if part.inflight & (1 << n) != 0 {
                    self.deliver(config, zone, c, n, out);
                }
            }
        }
        self.faults(config, zone, out);
    }

    /// The crashes and clock jumps the budgets still allow.
    fn faults(&self, config: &ZoneConfig, zone: &Dbm, out: &mut Vec<Successor>) {
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
        if self.jumps_left == 0 {
            return;
        }
        for n in (0..config.nodes).filter(|_| config.node_jumps) {
            // A jump matters where the node's clock measures something: a key's age or a
            // restart delay.
            let measures =
                self.owners[n] != NO_OWNER || self.availability[n] == Availability::Restarting;
            if measures && config.jump_node.is_none_or(|j| j == n) {
                out.push(self.jumped(config, zone, config.key_clock(n), ZoneStep::Jump(n)));
            }
        }
        for c in (0..config.clients).filter(|_| config.client_jumps) {
            // A client's clock measures its round or its lease.
            let phase = self.clients[c].phase;
            let measures = matches!(phase, Phase::Acquiring | Phase::Holding);
            if measures && config.jump_client.is_none_or(|j| j == c) {
                let step = ZoneStep::ClientJump(c);
                out.push(self.jumped(config, zone, config.client_clock(c), step));
            }
        }
    }

    /// The successor where clock `x` stepped forward by the jump, one jump less to spend.
    fn jumped(&self, config: &ZoneConfig, zone: &Dbm, x: usize, step: ZoneStep) -> Successor {
        let mut next = *self;
        next.jumps_left -= 1;
        let mut z = zone.clone();
        z.shift(x, config.jump_ticks);
        (step, next, z)
    }

    /// Node `n` crashes: the key survives only with `fsync-always`; the node comes back at
    /// once, after its restart delay, or never.
    fn crash(&mut self, config: &ZoneConfig, zone: &mut Dbm, n: usize) {
        let y = config.key_clock(n);
        self.crashes_left -= 1;
        if !config.keeps_keys || !config.restarts {
            // A key on a node that never serves again is the same as no key.
            self.owners[n] = NO_OWNER;
            zone.free(y);
        }
        self.availability[n] = if !config.restarts {
            Availability::Down
        } else if config.delays_restarts() {
            zone.reset(y);
            Availability::Restarting
        } else {
            Availability::Up
        };
    }

    /// Client `c`'s `SET` reaches node `n`: each answer the node may give, where it gives it.
    fn deliver(
        &self,
        config: &ZoneConfig,
        zone: &Dbm,
        c: usize,
        n: usize,
        out: &mut Vec<Successor>,
    ) {
        let y = config.key_clock(n);
        // What a node measures is still running on the exact reading, and over on a reading
        // up to `ε_n` fast: each outcome where some reading gives it.
        let fast = config.node_error;
        let (refused, applied) = match self.availability[n] {
            // Unavailable: the answer is a failure, which counts as answered.
            Availability::Down => (Some(zone.clone()), None),
            // Serving again, with no key (the crash lost it), once the delay is over.
            Availability::Restarting => (
                where_(zone, y, clock_guard::fails(config.restart_delay, 0)),
                where_(zone, y, clock_guard::holds(config.restart_delay, fast)),
            ),
            Availability::Up if self.owners[n] == NO_OWNER => (None, Some(zone.clone())),
            // SET NX is refused while the key lives, and sets a new key once it expired.
            Availability::Up => (
                where_(zone, y, clock_guard::holds(config.key_live, 0)),
                where_(zone, y, clock_guard::fails(config.key_live, fast)),
            ),
        };
        if let Some(z) = refused {
            out.push(self.arrive(config, c, n, false, z));
        }
        if let Some(z) = applied {
            out.push(self.arrive(config, c, n, true, z));
        }
    }

    /// The successor where node `n` answered client `c`'s `SET` with `applied`.
    fn arrive(&self, config: &ZoneConfig, c: usize, n: usize, applied: bool, z: Dbm) -> Successor {
        let mut next = *self;
        let mut z = z;
        if applied {
            // A restarting node that serves is up from now on.
            next.availability[n] = Availability::Up;
            next.owners[n] = c as u8;
            z.reset(config.key_clock(n));
        }
        let part = &mut next.clients[c];
        part.inflight &= !(1 << n);
        // The answer counts only while the client still collects answers.
        if part.phase == Phase::Acquiring {
            part.answered |= 1 << n;
            if applied {
                part.applied |= 1 << n;
            }
        }
        let step = ZoneStep::Deliver {
            client: c,
            node: n,
            applied,
        };
        (step, next, z)
    }

    /// Client `c` decides its open round, where the tally or the round timeout lets it.
    fn decide(&self, config: &ZoneConfig, zone: &Dbm, c: usize, out: &mut Vec<Successor>) {
        let part = self.clients[c];
        let x = config.client_clock(c);
        let n = config.nodes as u32;
        let applied = part.applied.count_ones();
        let answered = part.answered.count_ones();
        let quorum = config.quorum;
        let by_tally = (config.at_quorum && applied >= quorum)
            || answered == n
            || applied + (n - answered) < quorum;
        let open = if by_tally {
            zone.clone()
        } else {
            match where_(zone, x, clock_guard::holds(config.round_timeout, 0)) {
                Some(open) => open,
                None => return,
            }
        };
        let mut lost = Some(open.clone());
        if applied >= quorum {
            if let Some(won) = where_(&open, x, clock_guard::holds(config.validity, 0)) {
                let mut next = *self;
                next.clients[c] = ClientPart::new(Phase::Holding, part.inflight);
                let step = ZoneStep::Decide {
                    client: c,
                    won: true,
                };
                out.push((step, next, won));
            }
            // A quorum is lost only where its validity ran out.
            lost = where_(&open, x, clock_guard::fails(config.validity, 0));
        }
        if let Some(mut z) = lost {
            let mut next = *self;
            next.release(config, &mut z, c);
            let step = ZoneStep::Decide {
                client: c,
                won: false,
            };
            out.push((step, next, z));
        }
    }

    /// Compare-and-delete on every node client `c` reaches, then done: its keys (live or
    /// expired, which is the same thing to everyone) are gone and its clock is read no more.
    fn release(&mut self, config: &ZoneConfig, zone: &mut Dbm, c: usize) {
        for n in 0..config.nodes {
            if config.reach[c] & (1 << n) != 0 && self.owners[n] == c as u8 {
                self.owners[n] = NO_OWNER;
                zone.free(config.key_clock(n));
            }
        }
        let part = &mut self.clients[c];
        *part = ClientPart::new(Phase::Finished, part.inflight);
        zone.free(config.client_clock(c));
    }
}
