//! A story's events read into a timeline's bars, arrows and flags.
//!
//! Every interval starts and ends at an event, or at an instant an event names: a lease's
//! deadline from the `believes_until` its acquisition tells, a key's expiry from the
//! `expires_at` its `SET` tells, each moved by the clock jumps told since. Nothing is read
//! from the model's states, so the picture says what the story says.

use crate::actor::Actor;
use crate::fault::FaultKind;
use crate::model::{Event, RedlockModel, Step, World, path_moments, step_line};
use crate::report::story::lanes;
use crate::report::{Line, Story};
use crate::scenario::Ingredient;
use crate::time::Millis;

use super::facts::{
    Arrow, ArrowKind, At, Bar, BarKind, Break, Facts, Flag, FlagKind, Mark, Timeline,
};
use super::steps::Items;

/// What a client has under way while the events are read.
#[derive(Clone, Debug, Default)]
pub(super) struct ClientNow {
    /// The round it runs: when it began, and its step.
    pub round: Option<(At, usize)>,
    /// The belief it holds: since when, and its step.
    pub lease: Option<(At, usize)>,
    /// Its lease's deadline in true time (its clock's deadline, moved by its clock's jumps).
    pub deadline: i64,
    /// When its latest requests went out.
    pub sent: Option<At>,
    /// The nodes that have not received them yet.
    pub pending: Vec<Actor>,
    /// When its latest unlock left (the nodes that serve it tell so one by one, in the
    /// simulator and for the model's late releases).
    pub unlock_sent: Option<At>,
    /// When its storage op left (its lease check, or the end of its pause).
    pub op_sent: Option<At>,
    /// Its pause: since when, and its step.
    pub paused: Option<(At, usize)>,
}

/// A key on a node while the events are read.
#[derive(Clone, Copy, Debug)]
pub(super) struct KeyNow {
    /// Whose key.
    pub owner: Actor,
    /// Since when.
    pub from: At,
    /// Its expiry in true time (the node's clock's expiry, moved by that clock's jumps).
    pub expiry: i64,
    /// The step that set it.
    pub step: usize,
}

/// What a node has under way while the events are read.
#[derive(Clone, Debug, Default)]
pub(super) struct NodeNow {
    /// Its key.
    pub key: Option<KeyNow>,
    /// Restarting or down since when, the step, and the fault that put it there.
    pub out: Option<(BarKind, At, usize, Ingredient)>,
    /// Guarded since when, and the step.
    pub guarded: Option<(At, usize)>,
}

/// The reader: the facts so far and what each process has under way.
pub(super) struct Reader {
    /// What the timeline shows so far.
    pub facts: Facts,
    /// Each client's, by index.
    pub clients: Vec<ClientNow>,
    /// Each node's, by index.
    pub nodes: Vec<NodeNow>,
    /// Ticks a promoted replica refuses requests for.
    pub promotion_delay: u32,
}

/// The lane of an actor named as a story names it (`c1`, `n2`, `storage`); `None` for time.
fn lane_of(lanes: &[Actor], name: &str) -> Option<Actor> {
    lanes.iter().copied().find(|a| a.to_string() == name)
}

/// A client's or a node's index (0 for the services, which have no slot).
pub(super) fn index(actor: Actor) -> usize {
    match actor {
        Actor::Client(i) | Actor::Node(i) => usize::from(i),
        _ => 0,
    }
}

impl Reader {
    /// Reads every line of `story` (whose lanes are `lanes`).
    pub(super) fn read(story: &Story, lanes: Vec<Actor>, promotion_delay: u32) -> Facts {
        let clients = lanes
            .iter()
            .filter(|a| matches!(a, Actor::Client(_)))
            .count();
        let nodes = lanes.iter().filter(|a| matches!(a, Actor::Node(_))).count();
        let mut reader = Reader {
            facts: Facts {
                lanes,
                ..Facts::default()
            },
            clients: vec![ClientNow::default(); clients],
            nodes: vec![NodeNow::default(); nodes],
            promotion_delay,
        };
        for line in &story.lines {
            let at = reader.place(line.t);
            reader.close_silent_expiries(line.t);
            reader.line(line, at);
        }
        reader.finish();
        reader.facts
    }

    /// The instant of the next event at tick `t`.
    fn place(&mut self, t: u32) -> At {
        let tick = t as usize;
        if self.facts.per_tick.len() <= tick {
            self.facts.per_tick.resize(tick + 1, 0);
        }
        let rank = self.facts.per_tick[tick];
        self.facts.per_tick[tick] += 1;
        let at = At {
            t,
            rank: Some(rank),
        };
        self.facts.last = Some(at);
        at
    }

    /// One line: its dot, its break mark, and what its event starts or ends.
    fn line(&mut self, line: &Line, at: At) {
        let lane = lane_of(&self.facts.lanes, &line.actor);
        self.facts.marks.push(Mark {
            lane,
            at,
            step: line.step,
            title: line.sentence.clone(),
        });
        if let (Some(property), Some(detail)) = (&line.breaks, &line.detail) {
            self.facts.broken = Some(Break {
                at,
                property: property.clone(),
                detail: detail.clone(),
                step: line.step,
            });
        }
        match lane {
            Some(actor @ Actor::Client(_)) => self.client_event(actor, line, at),
            Some(actor @ Actor::Node(_)) => self.node_event(actor, line, at),
            Some(actor) => self.service_event(actor, line, at),
            None => {}
        }
    }

    /// Adds a bar on `lane` from `from` to `to`.
    pub(super) fn bar(
        &mut self,
        lane: Actor,
        kind: BarKind,
        owner: Option<Actor>,
        (from, step): (At, usize),
        to: At,
        title: String,
    ) {
        self.facts.bars.push(Bar {
            lane,
            kind,
            owner,
            from,
            to,
            beyond_run: None,
            open: false,
            step,
            title,
            cause: None,
            role: None,
        });
    }

    /// Marks the bar added last as the fault `cause`.
    pub(super) fn caused(&mut self, cause: Ingredient) {
        if let Some(bar) = self.facts.bars.last_mut() {
            bar.cause = Some(cause);
        }
    }

    /// Adds a flag.
    pub(super) fn flag(&mut self, lane: Actor, at: At, label: String, kind: FlagKind, line: &Line) {
        self.facts.flags.push(Flag {
            lane,
            at,
            label,
            kind,
            step: line.step,
            title: line.sentence.clone(),
            cause: None,
        });
    }

    /// Adds a flag for the fault `cause`.
    pub(super) fn fault(
        &mut self,
        lane: Actor,
        at: At,
        label: String,
        cause: Ingredient,
        line: &Line,
    ) {
        self.flag(lane, at, label, FlagKind::Fault, line);
        if let Some(flag) = self.facts.flags.last_mut() {
            flag.cause = Some(cause);
        }
    }

    /// A client's event: its rounds, its belief, its pause, its requests and ops.
    fn client_event(&mut self, c: Actor, line: &Line, at: At) {
        let i = index(c);
        let t = i64::from(line.t);
        match &line.event {
            Event::RoundBegan { to, .. } | Event::ExtensionBegan { to, .. } => {
                let now = &mut self.clients[i];
                now.round = Some((at, line.step));
                now.sent = Some(at);
                now.pending = to.actors().collect();
            }
            Event::WriteBackBegan { .. } => {
                let now = &mut self.clients[i];
                now.sent = Some(at);
                now.pending.clear();
            }
            Event::NodeAsked { node, silent, .. } => {
                self.next_node_asked(c, *node, *silent, line, at)
            }
            Event::Acquired {
                t2, believes_until, ..
            } => {
                self.end_round(c, at, "acquires");
                let now = &mut self.clients[i];
                now.deadline = t + believes_until - t2;
                now.lease = Some((at, line.step));
            }
            Event::Extended {
                t2, believes_until, ..
            }
            | Event::ExtensionFailed { t2, believes_until } => {
                self.end_round(c, at, "extension decided");
                self.clients[i].deadline = t + believes_until - t2;
            }
            Event::NotAcquired { deleted, freed, .. } | Event::Released { deleted, freed, .. } => {
                let how = match line.event {
                    Event::Released { .. } => "releases",
                    _ => "fails to acquire",
                };
                self.end_round(c, at, how);
                self.end_lease(c, at);
                self.clients[i].unlock_sent = Some(at);
                for node in freed.actors() {
                    self.end_key(node, Some(c), at);
                }
                for &(owner, node) in deleted {
                    self.end_key(node, Some(owner), at);
                }
            }
            _ => self.client_life(c, line, at),
        }
    }

    /// A client's belief ending or returning, its lease checks, pauses, jumps, crash and cut.
    fn client_life(&mut self, c: Actor, line: &Line, at: At) {
        let i = index(c);
        match &line.event {
            Event::BeliefEnded => self.end_lease(c, at),
            Event::BeliefReturned => self.clients[i].lease = Some((at, line.step)),
            Event::LeaseChecked { op: Some(_), .. } => self.clients[i].op_sent = Some(at),
            Event::Paused { .. } => self.clients[i].paused = Some((at, line.step)),
            Event::PauseEnded { .. } => {
                if let Some(since) = self.clients[i].paused.take() {
                    self.bar(c, BarKind::Paused, None, since, at, "paused".to_owned());
                    self.caused(Ingredient::Fault(FaultKind::Pause));
                }
                self.clients[i].op_sent = Some(at);
            }
            Event::ClockJumped { ticks, reads } => {
                self.clients[i].deadline -= *ticks;
                let offset = reads - i64::from(line.t);
                self.facts.offsets.push((c, at, offset));
                let label = format!("clock {ticks:+}");
                self.fault(c, at, label, Ingredient::Fault(FaultKind::ClockJump), line);
            }
            Event::ClientCrashed { .. } => {
                self.end_round(c, at, "crashes");
                self.end_lease(c, at);
                self.bar(
                    c,
                    BarKind::Dead,
                    None,
                    (at, line.step),
                    At::tick(u32::MAX),
                    "crashed for good".to_owned(),
                );
                self.caused(Ingredient::Fault(FaultKind::ClientCrash));
                self.fault(
                    c,
                    at,
                    "crash".to_owned(),
                    Ingredient::Fault(FaultKind::ClientCrash),
                    line,
                );
            }
            Event::ClientPartitioned { .. } => {
                let partition = Ingredient::Fault(FaultKind::ClientPartition);
                self.caused(partition);
                self.fault(c, at, "cut off".to_owned(), partition, line);
            }
            Event::RequestLost { node } => {
                let sent = self.clients[i].sent.unwrap_or(at);
                self.never_arrived(c, sent, *node, line, at);
            }
            _ => {}
        }
    }

    /// Client `c`'s sequential round asks `node` at `at`; the `silent` node before it, when its
    /// timeout passed, gets its request drawn as one that never arrived.
    fn next_node_asked(
        &mut self,
        c: Actor,
        node: Actor,
        silent: Option<Actor>,
        line: &Line,
        at: At,
    ) {
        let sent = self.clients[index(c)].sent.replace(at).unwrap_or(at);
        if let Some(silent) = silent {
            self.never_arrived(c, sent, silent, line, at);
        }
        self.clients[index(c)].pending.push(node);
    }

    /// Client `c`'s request to `node`, sent at `sent`, is drawn as one that never arrived
    /// (lost, or given up at `at`), and is no longer in flight.
    fn never_arrived(&mut self, c: Actor, sent: At, node: Actor, line: &Line, at: At) {
        self.clients[index(c)].pending.retain(|n| *n != node);
        self.facts.arrows.push(Arrow {
            from: (c, sent),
            to: (node, at),
            kind: ArrowKind::Lost,
            step: line.step,
            title: line.sentence.clone(),
        });
    }

    /// Ends client `c`'s round at `at`, if it runs one.
    pub(super) fn end_round(&mut self, c: Actor, at: At, how: &str) {
        if let Some(since) = self.clients[index(c)].round.take() {
            let title = format!("{c}'s round, from T1 until it {how}");
            self.bar(c, BarKind::Round, Some(c), since, at, title);
        }
    }

    /// Ends client `c`'s belief at `at`, if it believes.
    pub(super) fn end_lease(&mut self, c: Actor, at: At) {
        if let Some(since) = self.clients[index(c)].lease.take() {
            let title = format!("{c} believes it holds the lock");
            self.bar(c, BarKind::Lease, Some(c), since, at, title);
        }
    }

    /// Ends the key on `node` at `at`, if it is `owner`'s (any owner's for `None`).
    pub(super) fn end_key(&mut self, node: Actor, owner: Option<Actor>, at: At) {
        let Some(slot) = self.nodes.get_mut(index(node)) else {
            return;
        };
        let Some(key) = slot.key.filter(|k| owner.is_none_or(|o| o == k.owner)) else {
            return;
        };
        slot.key = None;
        let title = format!("{}'s key on {node}", key.owner);
        self.bar(
            node,
            BarKind::Key,
            Some(key.owner),
            (key.from, key.step),
            at,
            title,
        );
    }

    /// Ends the keys that expired on a node that told nobody (it was restarting or down), at
    /// their expiry, once the events have passed it.
    fn close_silent_expiries(&mut self, t: u32) {
        for n in 0..self.nodes.len() {
            if let Some(key) = self.nodes[n].key
                && key.expiry < i64::from(t)
            {
                let at = At::tick(key.expiry.max(0) as u32);
                self.end_key(Actor::node(n), None, at);
            }
        }
    }
}

impl Timeline {
    /// The timeline of `story`, the story of `path` in `model`
    /// ([`Story::from_path`]); the path gives each step's words for the list under the
    /// picture.
    pub fn new(model: &RedlockModel, story: &Story, path: &[(World, Option<Step>)]) -> Timeline {
        let scenario = model.scenario();
        let unit = model.unit();
        let steps = path
            .iter()
            .filter_map(|(w, step)| step.map(|s| (w.now, s)))
            .zip(path_moments(path))
            .map(|((t, step), moments)| {
                let quiet = (step == Step::Tick && moments.is_empty()).then_some(t + 1);
                (step_line(t, &step, &moments, unit), quiet)
            })
            .collect();
        let (steps, items) = Items::fold(steps, unit);
        // The picture counts the list's items, not the checker's steps.
        let mut story = story.clone();
        for line in &mut story.lines {
            line.step = items.item(line.step);
        }
        let promotion_delay = scenario
            .failover
            .as_ref()
            .map_or(0, |f| f.promotion_delay_ticks);
        let lanes = lanes(scenario, path);
        Timeline {
            scenario: scenario.name.clone(),
            title: scenario.title.clone(),
            property: story.property.clone(),
            chosen: story.chosen.clone(),
            ms_per_tick: scenario.resolution.map(Millis::as_u64),
            steps,
            items,
            necessary: None,
            anchor: "step".to_owned(),
            explore: Vec::new(),
            caption: None,
            facts: Reader::read(&story, lanes, promotion_delay),
        }
    }
}
