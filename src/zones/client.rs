//! A client of the automaton: the core's lock ([`LockState`]), driven at witness readings.
//!
//! Every decision a client takes is the core's transition, as in the discrete model. Where the
//! core reads its clock, the zone is cut along the guards that transition reads (each a
//! constraint on the client's clock), and the core is handed one witness reading of each piece
//! ([`crate::proto::witness`]): the last reading before a guard changes its answer, so a core
//! that decides otherwise than its guards say is caught at the edge. Consecutive pieces where
//! the core decides alike are joined again. The engine keeps no tally, phase or release of its
//! own: it records which answers reached the client (its mailbox, as the discrete model's) and
//! carries out the requests the core returns, a release on every node at once (the discrete
//! model's shortcut: a late compare-and-delete only keeps keys, and a late plain `DEL` is a
//! holder that released later, which the automaton lets a holder do at any moment).

use crate::proto::{
    Answer, Effects, Entropy, LockEvent, LockPhase, LockState, NodeId, Op, Reply, RetryPolicy,
    Tally, Token, witness,
};
use crate::time::Millis;

use super::automaton::ZoneConfig;
use super::clock_guard::{Constraint, where_};
use super::constants::{Reading, Timing};
use super::discrete::{Discrete, NO_OWNER, Work};
use super::successors::{Successor, ZoneStep};
use super::zone::Zone;

/// The engine's randomness: one token for every client. A node's key names the client that
/// set it ([`Discrete::owners`]), and each client makes one attempt (the engine refuses a
/// shared token), so a compare-and-delete matches exactly the keys of its own client; one
/// number in every lock keeps two states that differ only in who is called `c1` one image
/// for the symmetry reduction.
struct OneToken;

impl Entropy for OneToken {
    fn token(&mut self) -> Token {
        Token(1)
    }

    fn backoff(&mut self, retry: &RetryPolicy) -> Millis {
        // One attempt per client: the core never backs off here.
        retry.delay_min
    }
}

/// The timings the core reads when it decides a round, on the client's exact clock.
const DECISION: [Timing; 2] = [Timing::RoundTimeout, Timing::Validity];

/// One piece of a decision: which side of each [`DECISION`] guard, its witness reading, and
/// what the core did there.
struct Piece {
    sides: [bool; 2],
    at: Millis,
    lock: LockState,
    effects: Effects,
}

impl Piece {
    /// Whether two pieces lead to the same state (the numbers in the event differ with the
    /// witness; what the lock keeps and sends does not).
    fn same_decision(&self, other: &Piece) -> bool {
        self.lock.forgetting_history() == other.lock.forgetting_history()
            && self.effects.request == other.effects.request
            && won(&self.effects) == won(&other.effects)
    }
}

fn won(effects: &Effects) -> bool {
    matches!(effects.event, Some(LockEvent::Acquired { .. }))
}

impl Discrete {
    /// Client `c` begins: its clock reads T1 (the clock is reset, so the reading is zero), and
    /// its `SET`s leave for every node the request names and it reaches.
    pub(crate) fn begin<Z: Zone>(
        &self,
        config: &ZoneConfig,
        zone: &Z,
        c: usize,
        out: &mut Vec<Successor<Z>>,
    ) {
        let mut next = *self;
        let slot = &mut next.clients[c];
        let effects = slot.lock.begin(&config.params, Millis::ZERO, &mut OneToken);
        let request = effects.request.expect("a round begins with its requests");
        slot.inflight = request.to(config.nodes as u8).bits() as u8 & config.reach[c];
        slot.lock = slot.lock.forgetting_history();
        let mut z = zone.clone();
        z.reset(config.client_clock(c));
        out.push((ZoneStep::Begin(c), next, z));
    }

    /// Node `n`'s answer reaches client `c`: into its mailbox while its lock collects
    /// answers to the round, ignored otherwise (as the core ignores a late answer).
    pub(crate) fn post(&mut self, c: usize, n: usize, applied: bool, counts: bool) {
        let slot = &mut self.clients[c];
        if !slot.lock.is_collecting(slot.lock.round()) {
            return;
        }
        let reply = if applied {
            Reply::Applied
        } else {
            Reply::NotApplied
        };
        slot.mailbox.record(NodeId(n as u8), reply);
        if applied && !counts {
            slot.guarded |= 1 << n;
        }
    }

    /// Client `c` decides its open round: the core is handed the mailbox's answers, and the
    /// round's timeout, at a witness reading of each piece of the zone that the round-timeout
    /// and validity guards cut; where it decides, the decision and its requests are carried out.
    pub(crate) fn decide<Z: Zone>(
        &self,
        config: &ZoneConfig,
        zone: &Z,
        c: usize,
        out: &mut Vec<Successor<Z>>,
    ) {
        let x = config.client_clock(c);
        let mut pieces: Vec<Piece> = Vec::new();
        for sides in [[false, true], [true, true], [true, false], [false, false]] {
            let guards = [0, 1].map(|i| (config.guard(DECISION[i]).expect("a guard"), sides[i]));
            // A piece no reading reaches has no valuation either (the guards are the same
            // numbers, or forms that keep their order over the domain of a synthesis).
            let Some(at) = witness(&guards) else { continue };
            if self.piece(config, zone, x, sides).is_none() {
                continue;
            }
            if let Some((lock, effects)) = self.decided(config, c, at) {
                pieces.push(Piece {
                    sides,
                    at,
                    lock,
                    effects,
                });
            }
        }
        pieces.sort_by_key(|p| p.at);
        let mut start = 0;
        while start < pieces.len() {
            let mut end = start + 1;
            while end < pieces.len() && pieces[end].same_decision(&pieces[start]) {
                end += 1;
            }
            let run = &pieces[start..end];
            if let Some(z) = self.run_zone(config, zone, x, run) {
                out.push(self.carry_out_decision(config, z, c, &run[0]));
            }
            start = end;
        }
    }

    /// The part of `zone` where client clock `x` is on `sides` of the decision's guards.
    fn piece<Z: Zone>(
        &self,
        config: &ZoneConfig,
        zone: &Z,
        x: usize,
        sides: [bool; 2],
    ) -> Option<Z> {
        let mut z = zone.clone();
        for (timing, holds) in DECISION.into_iter().zip(sides) {
            z = where_(&z, x, side(config, timing, holds))?;
        }
        Some(z)
    }

    /// The part of `zone` that a run of consecutive pieces covers: above the tightest lower
    /// bound of its first piece and below the tightest upper bound of its last (on the
    /// configuration's numbers), so that a run no guard splits is not cut by it.
    fn run_zone<Z: Zone>(
        &self,
        config: &ZoneConfig,
        zone: &Z,
        x: usize,
        run: &[Piece],
    ) -> Option<Z> {
        let first = run.first().expect("a run has a piece");
        let last = run.last().expect("a run has a piece");
        let bounds = |piece: &Piece, lower: bool| {
            DECISION
                .into_iter()
                .zip(piece.sides)
                .filter_map(move |(timing, holds)| {
                    let constraint = side(config, timing, holds);
                    let guard = config.guard(timing).expect("a guard");
                    (matches!(constraint, Constraint::AtLeast(_)) == lower)
                        .then_some((guard.bound, constraint))
                })
        };
        let lower = bounds(first, true).max_by_key(|(bound, _)| *bound);
        let upper = bounds(last, false).min_by_key(|(bound, _)| *bound);
        let mut z = zone.clone();
        for (_, constraint) in lower.into_iter().chain(upper) {
            z = where_(&z, x, constraint)?;
        }
        Some(z)
    }

    /// The core's lock of client `c` after it is handed every answer in the mailbox and, if
    /// the round is still open, the timeout, at clock reading `at`; `None` unless that
    /// decides the round.
    fn decided(&self, config: &ZoneConfig, c: usize, at: Millis) -> Option<(LockState, Effects)> {
        let slot = &self.clients[c];
        let mut lock = slot.lock;
        let answers = slot.mailbox.answered().iter().map(|node| {
            let answer = Answer {
                reply: slot.mailbox.reply(node),
                counts: slot.guarded & (1 << node.0) == 0,
                counter: 0,
            };
            (node, answer)
        });
        let effects = lock.take_answers(&config.params, answers, at, &mut OneToken);
        effects.event.is_some().then_some((lock, effects))
    }

    /// The successor where client `c` decided as `piece` says, on `zone`.
    fn carry_out_decision<Z: Zone>(
        &self,
        config: &ZoneConfig,
        mut zone: Z,
        c: usize,
        piece: &Piece,
    ) -> Successor<Z> {
        let mut next = *self;
        let slot = &mut next.clients[c];
        slot.lock = piece.lock;
        slot.mailbox = Tally::default();
        slot.guarded = 0;
        slot.work = Work::default();
        let won = won(&piece.effects);
        // The epoch is the storage's ghost; without storage nothing reads it, and counting it
        // would tell apart states that are the same.
        if won && config.storage.is_some() {
            next.epochs += 1;
            next.clients[c].work.epoch = next.epochs;
        }
        next.carry_out(config, &mut zone, c, piece.effects, piece.at);
        (ZoneStep::Decide { client: c, won }, next, zone)
    }

    /// Client `c` releases its lease (or gives up its storage cycle): the core's release, at
    /// any reading of its clock (the release reads none), carried out at once.
    pub(crate) fn release<Z: Zone>(&mut self, config: &ZoneConfig, zone: &mut Z, c: usize) {
        let slot = &mut self.clients[c];
        let effects = slot.lock.release(&config.params, Millis::ZERO);
        self.carry_out(config, zone, c, effects, Millis::ZERO);
    }

    /// Carries out what client `c`'s lock asked: a release reaches every node the client
    /// reaches at once and its answers go back to the lock, which ends the round at its
    /// deadline for the nodes that never answer; a lock with nothing left to do reads its
    /// clocks no more.
    fn carry_out<Z: Zone>(
        &mut self,
        config: &ZoneConfig,
        zone: &mut Z,
        c: usize,
        effects: Effects,
        at: Millis,
    ) {
        let params = &config.params;
        if let Some(request) = effects.request {
            let to = request.to(config.nodes as u8).bits() as u8 & config.reach[c];
            for n in (0..config.nodes).filter(|n| to & (1 << n) != 0) {
                let applied = self.apply(config, zone, c, n, request.op);
                let reply = if applied {
                    Reply::Applied
                } else {
                    Reply::NotApplied
                };
                let node = NodeId(n as u8);
                let lock = &mut self.clients[c].lock;
                let _ = lock.handle_reply(params, request.round, node, reply, at, &mut OneToken);
            }
            let lock = &mut self.clients[c].lock;
            if let LockPhase::Releasing(round) = lock.phase() {
                let deadline = round.deadline(params);
                let _ = lock.handle_timeout(params, deadline, &mut OneToken);
            }
        }
        let slot = &mut self.clients[c];
        slot.lock = slot.lock.forgetting_history();
        if slot.lock.is_finished() {
            slot.work = Work::default();
            zone.free(config.client_clock(c));
            if config.storage.is_some() {
                zone.free(config.op_clock(c));
            }
        }
    }

    /// Node `n` applies client `c`'s `op` at once; whether it took effect. A compare-and-delete
    /// deletes the key when the client set it (its token, the only one it holds); a plain
    /// `DEL` deletes any key.
    fn apply<Z: Zone>(
        &mut self,
        config: &ZoneConfig,
        zone: &mut Z,
        c: usize,
        n: usize,
        op: Op,
    ) -> bool {
        let deletes = match op {
            Op::DelIfEq { .. } => self.owners[n] == c as u8,
            Op::Del => self.owners[n] != NO_OWNER,
            Op::SetNxPx { .. }
            | Op::PExpireIfEq { .. }
            | Op::RaiseFence { .. }
            | Op::GetEq { .. } => {
                unreachable!("the engine sends {op:?} through its own steps or refuses it")
            }
        };
        if deletes {
            self.remove_key(zone, config, n);
        }
        deletes
    }
}

/// Where `timing`'s guard holds (`holds`) or fails, on the client's exact clock.
fn side(config: &ZoneConfig, timing: Timing, holds: bool) -> Constraint {
    if holds {
        config.holds(timing, Reading::Exact)
    } else {
        config.fails(timing, Reading::Exact)
    }
}
