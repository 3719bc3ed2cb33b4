//! The events of the nodes, the counter node, the replica and the storage, read into key
//! bars, arrows from the clients that sent the requests, and labelled instants.

use crate::actor::Actor;
use crate::fault::FaultKind;
use crate::model::Event;
use crate::report::Line;
use crate::scenario::Ingredient;
use crate::storage::StorageOp;

use super::facts::{Arrow, ArrowKind, At, BarKind, FlagKind};
use super::read::{KeyNow, Reader, index};

/// An op as a storage lane labels it: what it does and the token it carries, the one number
/// the storage compares (as the story says it), so that two equal tokens look equal.
fn op_label(op: &StorageOp) -> String {
    match op.fence() {
        0 => format!("{} tok ?", op.action()),
        fence => format!("{} tok {fence}", op.action()),
    }
}

impl Reader {
    /// A node's event: keys set, extended, expired; answers to requests; clock jumps.
    pub(super) fn node_event(&mut self, n: Actor, line: &Line, at: At) {
        let i = index(n);
        let t = i64::from(line.t);
        // A node that answers is serving: a restart delay its fast clock cut short is over.
        if !matches!(line.event, Event::NotServing { .. }) && event_client(&line.event).is_some() {
            self.end_out(n, BarKind::Restarting, at);
        }
        match &line.event {
            Event::KeySet {
                client,
                expires_at,
                fast_by,
                ..
            } => {
                self.delivered(*client, n, at, ArrowKind::Applied, line);
                if *fast_by > 0 {
                    let label = format!("clock fast +{fast_by}");
                    self.fault(
                        n,
                        at,
                        label,
                        Ingredient::Fault(FaultKind::NodeClockError),
                        line,
                    );
                }
                self.end_key(n, None, at);
                let clock = line.clock.unwrap_or(t);
                self.nodes[i].key = Some(KeyNow {
                    owner: *client,
                    from: at,
                    expiry: t + expires_at - clock,
                    step: line.step,
                });
            }
            Event::KeyExtended {
                client, expires_at, ..
            } => {
                self.delivered(*client, n, at, ArrowKind::Applied, line);
                let clock = line.clock.unwrap_or(t);
                if let Some(key) = &mut self.nodes[i].key {
                    key.expiry = t + expires_at - clock;
                }
            }
            Event::KeyExpired { owner, .. } => self.end_key(n, Some(*owner), at),
            Event::ReleaseServed {
                client, deleted, ..
            } => self.release_served(*client, *deleted, n, line, at),
            Event::ClockJumped { ticks, reads } => {
                if let Some(key) = &mut self.nodes[i].key {
                    key.expiry -= *ticks;
                }
                self.facts.offsets.push((n, at, reads - t));
                let label = format!("clock {ticks:+}");
                self.fault(n, at, label, Ingredient::Fault(FaultKind::ClockJump), line);
            }
            event => match event_client(event) {
                Some(client) => {
                    let kind = match event {
                        Event::FenceRaised { .. } | Event::YesWithoutKey { .. } => {
                            ArrowKind::Applied
                        }
                        _ => ArrowKind::Refused,
                    };
                    self.delivered(client, n, at, kind, line);
                }
                None => self.node_fault(n, line, at),
            },
        }
    }

    /// A release node `n` serves on its own (the simulator's nodes, and the model's late
    /// releases): drawn from when `client`'s unlock left, and the key ends here, not at the
    /// client's release.
    fn release_served(&mut self, client: Actor, deleted: bool, n: Actor, line: &Line, at: At) {
        let kind = if deleted {
            ArrowKind::Applied
        } else {
            ArrowKind::Refused
        };
        let sent = self.clients.get(index(client)).and_then(|c| c.unlock_sent);
        self.facts.arrows.push(Arrow {
            from: (client, sent.unwrap_or(at)),
            to: (n, at),
            kind,
            step: line.step,
            title: line.sentence.clone(),
        });
        if deleted {
            self.end_key(n, None, at);
        }
    }

    /// A node's crash, restart, guard and failover.
    fn node_fault(&mut self, n: Actor, line: &Line, at: At) {
        let i = index(n);
        match &line.event {
            Event::Crashed {
                key,
                restarts,
                restart_delay,
                guarded_until,
                ..
            } => {
                if let Some((owner, false)) = key {
                    self.end_key(n, Some(*owner), at);
                }
                self.fault(
                    n,
                    at,
                    "crash".to_owned(),
                    Ingredient::Fault(FaultKind::Crash),
                    line,
                );
                let out = match (restarts, restart_delay) {
                    (false, _) => Some(BarKind::Down),
                    (true, 0) => None,
                    (true, _) => Some(BarKind::Restarting),
                };
                self.nodes[i].out =
                    out.map(|kind| (kind, at, line.step, Ingredient::Fault(FaultKind::Crash)));
                if guarded_until.is_some() {
                    self.nodes[i].guarded = Some((at, line.step));
                }
            }
            Event::ServesAgain => self.end_out(n, BarKind::Restarting, at),
            Event::GuardEnded => {
                if let Some(since) = self.nodes[i].guarded.take() {
                    let title = format!("the clients' guard does not count {n}'s yes");
                    self.bar(n, BarKind::Guarded, None, since, at, title);
                }
            }
            Event::Promoted { lost, .. } => {
                if let Some(owner) = lost {
                    self.end_key(n, Some(*owner), at);
                }
                self.fault(
                    n,
                    at,
                    "failover".to_owned(),
                    Ingredient::Fault(FaultKind::Failover),
                    line,
                );
                if self.promotion_delay > 0 {
                    let out = (
                        BarKind::Restarting,
                        at,
                        line.step,
                        Ingredient::Fault(FaultKind::Failover),
                    );
                    self.nodes[i].out = Some(out);
                }
            }
            _ => {}
        }
    }

    /// Ends node `n`'s restart delay (or its being down, for `kind` down) at `at`.
    pub(super) fn end_out(&mut self, n: Actor, kind: BarKind, at: At) {
        let slot = &mut self.nodes[index(n)];
        if let Some((was, since, step, cause)) = slot.out
            && was == kind
        {
            slot.out = None;
            let title = match kind {
                BarKind::Down => format!("{n} is down"),
                _ => format!("{n} restarted and refuses requests"),
            };
            self.bar(n, kind, None, (since, step), at, title);
            self.caused(cause);
        }
    }

    /// Client `client`'s request reached `node` at `at`: an arrow from when it was sent.
    fn delivered(&mut self, client: Actor, node: Actor, at: At, kind: ArrowKind, line: &Line) {
        let Some(now) = self.clients.get_mut(index(client)) else {
            return;
        };
        now.pending.retain(|n| *n != node);
        let sent = now.sent.unwrap_or(at);
        self.facts.arrows.push(Arrow {
            from: (client, sent),
            to: (node, at),
            kind,
            step: line.step,
            title: line.sentence.clone(),
        });
    }

    /// An event of the counter node, the replica or the storage.
    pub(super) fn service_event(&mut self, lane: Actor, line: &Line, at: At) {
        let (client, label, kind) = match &line.event {
            Event::TokenTaken {
                client,
                token,
                stale,
            } => {
                let kind = if *stale {
                    FlagKind::Stale(*client)
                } else {
                    FlagKind::Applied(*client)
                };
                (*client, format!("token {token}"), kind)
            }
            Event::OpArrived {
                client,
                op,
                applied,
                stale,
                ..
            } => {
                let kind = match (applied, stale) {
                    (false, _) => FlagKind::Rejected(*client),
                    (true, true) => FlagKind::Stale(*client),
                    (true, false) => FlagKind::Applied(*client),
                };
                (*client, op_label(op), kind)
            }
            Event::UpdateLost { overwritten, .. } => {
                let label = format!("{overwritten}'s update lost");
                return self.flag(lane, at, label, FlagKind::Lost, line);
            }
            Event::WriteOnStaleRead { lost, .. } => {
                let label = format!("{lost}'s update lost");
                return self.flag(lane, at, label, FlagKind::Lost, line);
            }
            Event::CounterCrashed { .. } => {
                return self.fault(
                    lane,
                    at,
                    "crash".to_owned(),
                    Ingredient::Fault(FaultKind::Crash),
                    line,
                );
            }
            _ => return,
        };
        let sent = self
            .clients
            .get(index(client))
            .and_then(|c| c.op_sent)
            .unwrap_or(at);
        self.facts.arrows.push(Arrow {
            from: (client, sent),
            to: (lane, at),
            kind: ArrowKind::Op,
            step: line.step,
            title: line.sentence.clone(),
        });
        self.flag(lane, at, label, kind, line);
    }
}

/// The client whose request a node's event answers, if it answers one.
fn event_client(event: &Event) -> Option<Actor> {
    match event {
        Event::KeySet { client, .. }
        | Event::KeyExtended { client, .. }
        | Event::FenceRaised { client, .. }
        | Event::FenceRefused { client }
        | Event::YesWithoutKey { client }
        | Event::SetRefused { client, .. }
        | Event::ExtensionRefused { client }
        | Event::NotServing { client, .. } => Some(*client),
        _ => None,
    }
}
