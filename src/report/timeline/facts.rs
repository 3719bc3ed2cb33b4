//! What a timeline shows: intervals, arrows and instants on lanes, in true time. `read.rs`
//! fills these from a story's events, `layout.rs` places them, `svg.rs` and `html.rs` draw them.

use crate::actor::Actor;
use crate::scenario::Ingredient;

use super::steps::Items;

/// An instant on the axis: a tick and the event's place among the events of that tick
/// (`None`: the tick's start, for an instant no event tells, such as a deadline or an expiry
/// the run ends before, or the axis's end).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct At {
    /// True time, in ticks.
    pub t: u32,
    /// The event's place in its tick, from 0.
    pub rank: Option<u32>,
}

impl At {
    /// The start of tick `t`.
    pub(super) fn tick(t: u32) -> At {
        At { t, rank: None }
    }
}

/// What an interval on a lane stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BarKind {
    /// A client's round, from T1 to its decision (acquisition, write-back or extension).
    Round,
    /// The time a client believes it holds the lock.
    Lease,
    /// A key's life on a node, from its `SET` to its expiry or deletion.
    Key,
    /// A client paused between its lease check and its op.
    Paused,
    /// A node that restarted and refuses requests for its restart delay.
    Restarting,
    /// A node that crashed for good.
    Down,
    /// A restarted node whose yes the clients' guard does not count.
    Guarded,
    /// A client that crashed for good.
    Dead,
}

impl BarKind {
    /// The class the drawing gives it (and the tests look for).
    pub(super) fn class(self) -> &'static str {
        match self {
            BarKind::Round => "round",
            BarKind::Lease => "lease",
            BarKind::Key => "key",
            BarKind::Paused => "fault paused",
            BarKind::Restarting => "fault restarting",
            BarKind::Down => "fault down",
            BarKind::Guarded => "guarded",
            BarKind::Dead => "fault dead",
        }
    }
}

/// An interval on one lane.
#[derive(Clone, Debug)]
pub(super) struct Bar {
    /// Whose lane.
    pub lane: Actor,
    /// What it stands for.
    pub kind: BarKind,
    /// The client it belongs to (a key's owner, a lease's holder), which gives its colour.
    pub owner: Option<Actor>,
    /// Where it starts.
    pub from: At,
    /// Where it ends (at most the axis's end).
    pub to: At,
    /// The instant the run ends, when the bar goes on past it: what follows is what the last
    /// state says will happen (a deadline, an expiry), not something an event told.
    pub beyond_run: Option<At>,
    /// It goes on past the axis's end.
    pub open: bool,
    /// The step that began it.
    pub step: usize,
    /// What it is, in words (a tooltip).
    pub title: String,
    /// The fault or mistake it is, for a fault.
    pub cause: Option<Ingredient>,
    /// Whether the violation needs it (`needed`, `not needed`), once the causes are known.
    pub role: Option<&'static str>,
}

/// What an arrow between lanes stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ArrowKind {
    /// A request a node applied (a `SET`, an extension, a write-back).
    Applied,
    /// A request a node refused or could not serve.
    Refused,
    /// A request lost in the network: an arrow into nothing.
    Lost,
    /// A request still travelling when the run ends: it may still apply.
    InFlight,
    /// A storage op, or the `INCR` for a token.
    Op,
}

impl ArrowKind {
    /// The class the drawing gives it.
    pub(super) fn class(self) -> &'static str {
        match self {
            ArrowKind::Applied => "request",
            ArrowKind::Refused => "request refused",
            ArrowKind::Lost => "request lost",
            ArrowKind::InFlight => "request in-flight",
            ArrowKind::Op => "op",
        }
    }
}

/// A message from one lane to another.
#[derive(Clone, Debug)]
pub(super) struct Arrow {
    /// The sender's lane and when it sent.
    pub from: (Actor, At),
    /// The receiver's lane and when it received (for a lost request, when it was lost).
    pub to: (Actor, At),
    /// What it stands for.
    pub kind: ArrowKind,
    /// The step that told its end.
    pub step: usize,
    /// What happened to it, in words.
    pub title: String,
}

/// An instant worth a label on a lane: a fault, a storage op, a lost update.
#[derive(Clone, Debug)]
pub(super) struct Flag {
    /// Whose lane.
    pub lane: Actor,
    /// When.
    pub at: At,
    /// The short label drawn.
    pub label: String,
    /// How it is drawn.
    pub kind: FlagKind,
    /// The step that told it.
    pub step: usize,
    /// The event's sentence.
    pub title: String,
    /// The fault or mistake it is, for a fault.
    pub cause: Option<Ingredient>,
}

/// How a [`Flag`] is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FlagKind {
    /// A fault at an instant (a clock jump, a crash, a failover).
    Fault,
    /// A storage op (or a token) the storage applied, with its owner's colour.
    Applied(Actor),
    /// A storage op the storage rejected.
    Rejected(Actor),
    /// A stale holder's op the storage applied: the damage.
    Stale(Actor),
    /// An update lost.
    Lost,
}

/// Every event, as a dot on its lane that links to its step.
#[derive(Clone, Debug)]
pub(super) struct Mark {
    /// Whose lane (`None`: time passing, on no lane).
    pub lane: Option<Actor>,
    /// When.
    pub at: At,
    /// The step that told it.
    pub step: usize,
    /// The event's sentence.
    pub title: String,
}

/// Two clients believing at once: mutual exclusion is broken for as long as it lasts.
#[derive(Clone, Debug)]
pub(super) struct Overlap {
    /// The two clients.
    pub clients: (Actor, Actor),
    /// From the later of the two beliefs' starts.
    pub from: At,
    /// To the earlier of their ends.
    pub to: At,
}

/// Where the story's property first breaks.
#[derive(Clone, Debug)]
pub(super) struct Break {
    /// When.
    pub at: At,
    /// The property.
    pub property: String,
    /// What each party believes then.
    pub detail: String,
    /// The step that breaks it.
    pub step: usize,
}

/// Everything a timeline draws.
#[derive(Clone, Debug, Default)]
pub(super) struct Facts {
    /// The lanes, top to bottom: clients, nodes, then the counter, replica and storage.
    pub lanes: Vec<Actor>,
    /// The axis runs from tick 0 to this tick.
    pub end: u32,
    /// How many events each tick has, so a layout can spread them.
    pub per_tick: Vec<u32>,
    /// The last event's instant.
    pub last: Option<At>,
    /// Intervals on lanes.
    pub bars: Vec<Bar>,
    /// Messages.
    pub arrows: Vec<Arrow>,
    /// Labelled instants.
    pub flags: Vec<Flag>,
    /// One dot per event.
    pub marks: Vec<Mark>,
    /// Where two beliefs overlap.
    pub overlaps: Vec<Overlap>,
    /// Where the property breaks.
    pub broken: Option<Break>,
    /// Each clock jump: whose clock, when, and how far it reads from true time after it.
    pub offsets: Vec<(Actor, At, i64)>,
    /// The instants of another run drawn on the same axis ([`Timeline::share_axis`]).
    pub shared_instants: Vec<u32>,
    /// The stretches another run on the same axis zooms on.
    pub shared_focus: Vec<(u32, u32)>,
}

/// A counterexample as a timeline: real time across, one lane per process, beliefs, keys,
/// messages and faults as the events tell them. [`Timeline::to_svg`] draws it for embedding,
/// [`Timeline::to_html`] as a page with every step's words under the picture.
#[derive(Clone, Debug)]
pub struct Timeline {
    /// The scenario's name.
    pub scenario: String,
    /// The scenario's one-line title.
    pub title: String,
    /// The property the run breaks.
    pub property: String,
    /// Why this run was told when it is not the shortest counterexample.
    pub chosen: Option<String>,
    /// How many milliseconds a tick lasts, for a file in real units.
    pub ms_per_tick: Option<u64>,
    /// Each step of the list under the picture in one line (`t=3 c1 checks its lease …`),
    /// from step 1: a checker step, or a long stretch where only time passes.
    pub steps: Vec<String>,
    /// The list's numbering of the checker's steps.
    pub(super) items: Items,
    /// The faults and mistakes the violation needs, once known
    /// ([`Timeline::with_causes`]).
    pub necessary: Option<Vec<Ingredient>>,
    /// The prefix of every step's anchor (`step` gives `#step-9`): two timelines on one page
    /// need two.
    pub anchor: String,
    /// For each step from step 1, a link to the state after it in the Explorer
    /// (`redlock-lab explore`), or none ([`Timeline::with_explorer`]).
    pub explore: Vec<String>,
    /// The line under the title in place of the verdict, for a run that is not a
    /// counterexample ([`Timeline::with_caption`]).
    pub caption: Option<String>,
    pub(super) facts: Facts,
}

impl Timeline {
    /// Labels every fault drawn with its role: `needed` when the property holds without it
    /// (the checker re-run without that ingredient, as `check --why` does), `not needed`
    /// when it does not. `necessary` is the traced property's list of needed ingredients.
    pub fn with_causes(mut self, necessary: Vec<Ingredient>) -> Timeline {
        let role = |cause: Ingredient| {
            if necessary.contains(&cause) {
                "needed"
            } else {
                "not needed"
            }
        };
        for flag in &mut self.facts.flags {
            if let Some(cause) = flag.cause {
                flag.label = format!("{} · {}", flag.label, role(cause));
            }
        }
        for bar in &mut self.facts.bars {
            bar.role = bar.cause.map(role);
        }
        self.necessary = Some(necessary);
        self
    }

    /// Anchors each step as `#{prefix}-N` instead of `#step-N`.
    pub fn with_anchor(mut self, prefix: &str) -> Timeline {
        prefix.clone_into(&mut self.anchor);
        self
    }

    /// Links checker step `i + 1` to `links[i]`: the state after it in the Explorer (an
    /// item of several steps links to the state after its last). A path the Explorer's
    /// model cannot follow to its end gets links for the steps it can.
    pub fn with_explorer(mut self, links: Vec<String>) -> Timeline {
        self.explore = links;
        self
    }

    /// Says `caption` under the title instead of the verdict: the run drawn is not a
    /// counterexample (the same schedule replayed under a mitigation's patch).
    pub fn with_caption(mut self, caption: String) -> Timeline {
        self.caption = Some(caption);
        self
    }

    /// Puts this run and `other` on one axis, so that one drawn above the other reads at one
    /// scale: both run to the later end, and where an axis is cut, both are cut at the
    /// instants of both.
    pub fn share_axis(&mut self, other: &mut Timeline) {
        let end = self.facts.end.max(other.facts.end);
        let (mine, theirs) = (self.facts.instants(), other.facts.instants());
        self.facts.shared_instants.extend(theirs);
        other.facts.shared_instants.extend(mine);
        let (mine, theirs) = (self.facts.focus(), other.facts.focus());
        self.facts.shared_focus.extend(theirs);
        other.facts.shared_focus.extend(mine);
        self.facts.end = end;
        other.facts.end = end;
    }

    /// The step of the list under the picture (from 1) that checker step `step` falls in:
    /// the number the page shows for it.
    pub fn step_number(&self, step: usize) -> usize {
        self.items.item(step)
    }
}
