//! The end of a run: what is still under way when the events stop (a belief, a key, a
//! pause, a request in flight) is drawn to the instant its own event named, and the overlaps
//! of beliefs are found.

use crate::actor::Actor;
use crate::fault::FaultKind;
use crate::scenario::Ingredient;

use super::facts::{Arrow, ArrowKind, At, Bar, BarKind, Overlap};
use super::read::Reader;

/// The tick an instant in true time falls on, on the axis (never before 0).
fn tick(t: i64) -> u32 {
    u32::try_from(t.max(0)).unwrap_or(u32::MAX)
}

impl Reader {
    /// Draws what is still under way to where it ends, and finds the overlaps.
    pub(super) fn finish(&mut self) {
        let last = self.facts.last.unwrap_or(At::tick(0));
        // Room for the beliefs still held to reach their deadlines, and a tick more for the
        // keys that outlive them.
        let deadlines = self
            .clients
            .iter()
            .filter(|c| c.lease.is_some())
            .map(|c| tick(c.deadline));
        let end = deadlines.fold(last.t + 1, u32::max) + 1;
        self.facts.end = end;
        // A client that still believes when the run ends believes at least to the end of
        // that tick, and on to its deadline.
        let after_run = At::tick(last.t + 1);
        for i in 0..self.clients.len() {
            let c = Actor::client(i);
            if let Some(since) = self.clients[i].lease.take() {
                let to = At::tick(tick(self.clients[i].deadline).min(end)).max(after_run);
                let title = format!("{c} believes it holds the lock (still, when the run ends)");
                self.run_on(c, BarKind::Lease, Some(c), since, to, title);
            }
            if let Some(since) = self.clients[i].round.take() {
                let title = format!("{c}'s round, undecided when the run ends");
                self.run_on(c, BarKind::Round, Some(c), since, At::tick(end), title);
            }
            if let Some(since) = self.clients[i].paused.take() {
                let title = format!("{c} is paused when the run ends");
                self.run_on(c, BarKind::Paused, None, since, At::tick(end), title);
                self.caused(Ingredient::Fault(FaultKind::Pause));
            }
            let sent = self.clients[i].sent.unwrap_or(last);
            for node in std::mem::take(&mut self.clients[i].pending) {
                self.facts.arrows.push(Arrow {
                    from: (c, sent),
                    to: (node, At::tick(end)),
                    kind: ArrowKind::InFlight,
                    step: 0,
                    title: format!(
                        "{c}'s request to {node} is still in flight: it may still apply"
                    ),
                });
            }
        }
        self.finish_nodes(last, end);
        for bar in &mut self.facts.bars {
            if bar.to > At::tick(end) {
                bar.to = At::tick(end);
                bar.open = true;
            }
        }
        self.facts.overlaps = overlaps(&self.facts.bars);
    }

    /// The keys, restart delays and guards still under way when the run ends.
    fn finish_nodes(&mut self, last: At, end: u32) {
        for n in 0..self.nodes.len() {
            let node = Actor::node(n);
            if let Some(key) = self.nodes[n].key.take() {
                let to = At::tick(tick(key.expiry)).max(At::tick(last.t + 1));
                let title = format!("{}'s key on {node} (live when the run ends)", key.owner);
                let since = (key.from, key.step);
                self.run_on(node, BarKind::Key, Some(key.owner), since, to, title);
            }
            if let Some((kind, since, step, cause)) = self.nodes[n].out.take() {
                let title = format!("{node} refuses requests when the run ends");
                self.run_on(node, kind, None, (since, step), At::tick(end), title);
                self.caused(cause);
            }
            if let Some(since) = self.nodes[n].guarded.take() {
                let title = format!("the clients' guard does not count {node}'s yes");
                let to = At::tick(end);
                self.run_on(node, BarKind::Guarded, None, since, to, title);
            }
        }
    }

    /// A bar still under way when the run ends, drawn on to `to`.
    fn run_on(
        &mut self,
        lane: Actor,
        kind: BarKind,
        owner: Option<Actor>,
        since: (At, usize),
        to: At,
        title: String,
    ) {
        self.bar(lane, kind, owner, since, to, title);
        let last = self.facts.last;
        if let Some(bar) = self.facts.bars.last_mut() {
            bar.beyond_run = last;
        }
    }
}

/// Where two clients' beliefs overlap: mutual exclusion is broken there.
fn overlaps(bars: &[Bar]) -> Vec<Overlap> {
    let leases: Vec<&Bar> = bars.iter().filter(|b| b.kind == BarKind::Lease).collect();
    let mut found = Vec::new();
    for (i, a) in leases.iter().enumerate() {
        for b in &leases[i + 1..] {
            let (from, to) = (a.from.max(b.from), a.to.min(b.to));
            if a.lane != b.lane && from < to {
                let clients = if a.lane < b.lane {
                    (a.lane, b.lane)
                } else {
                    (b.lane, a.lane)
                };
                found.push(Overlap { clients, from, to });
            }
        }
    }
    found
}
