//! Building a [`Story`] from a checker path, and its text form.

use serde::Serialize;

use crate::actor::Actor;
use crate::model::{Activity, Event, Moment, RedlockModel, Step, World, breaks, path_moments};
use crate::property::Property;
use crate::scenario::{Scenario, property};
use crate::storage::ordinal;
use crate::time::Unit;

/// A counterexample told as a story.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Story {
    /// The scenario's name.
    pub scenario: String,
    /// The property the story breaks.
    pub property: String,
    /// The checker's steps in the path (ticks included), for "shortest: N steps".
    pub steps: usize,
    /// Why this run was told, when it is not the property's shortest counterexample (set by
    /// the caller that chose it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chosen: Option<String>,
    /// The lane names, clients first (`c1`, `n1`, `storage`, …), for diagrams.
    pub lanes: Vec<String>,
    /// One line per event; ticks that change nothing are left out.
    pub lines: Vec<Line>,
}

/// One event of a [`Story`]: the model's [`Event`] with the words every format prints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Line {
    /// True time, in ticks.
    pub t: u32,
    /// Who acts: `c1`, `n2`, `storage`, `replica`, `counter`.
    pub actor: String,
    /// Who sent the message the actor handles, if any (draws an arrow in diagrams).
    pub from: Option<String>,
    /// What happens, in words (the event's `Display`).
    pub action: String,
    /// The event as one sentence with its actor (`c1's request to n3 is lost in the network`),
    /// as the Explorer and `check --json` print it.
    pub sentence: String,
    /// The actor's own clock reading, when it differs from true time.
    pub clock: Option<i64>,
    /// Whether the event is a fault (a pause, a clock jump, a crash, a loss, a failover).
    pub fault: bool,
    /// The property this event breaks, on the line where it first breaks.
    pub breaks: Option<String>,
    /// What each party believes when the property breaks (on the breaking line only).
    pub detail: Option<String>,
    /// The event itself, typed (`kind` names it).
    pub event: Event,
    /// Ticks the request the actor handles spent in the network, when more than none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delayed: Option<u32>,
    /// The checker's step that told it, from 1 (the `#step-N` anchor of the HTML timeline).
    pub step: usize,
}

impl Line {
    /// The moment with amounts of time in `unit`.
    fn told_in(m: Moment, unit: Unit) -> Line {
        Line {
            t: m.t,
            actor: m.actor.to_string(),
            from: m.from.map(|a| a.to_string()),
            action: m.words_in(unit),
            sentence: m.sentence_in(unit),
            delayed: m.delayed,
            clock: m.clock,
            fault: m.event.is_fault(),
            breaks: None,
            detail: None,
            event: m.event,
            step: 0,
        }
    }
}

fn client(c: usize) -> String {
    Actor::client(c).to_string()
}

/// Whether `event` is one that can break `property`: a belief that starts, lengthens or
/// returns breaks mutual exclusion; a storage op that lands, or the loss it causes, breaks a
/// storage property. A step's other events (a release after the op) are its consequences.
fn can_break(property: &str, event: &Event) -> bool {
    match Property::from_name(property) {
        Some(Property::MutualExclusion) => matches!(
            event,
            Event::Acquired { .. } | Event::Extended { .. } | Event::BeliefReturned
        ),
        Some(Property::StorageSafety) => matches!(event, Event::OpArrived { applied: true, .. }),
        Some(Property::NoLostUpdate) => matches!(
            event,
            Event::OpArrived { applied: true, .. }
                | Event::UpdateLost { .. }
                | Event::WriteOnStaleRead { .. }
        ),
        _ => false,
    }
}

/// What the parties believe when `property` breaks in `state`.
fn detail(property: &str, state: &World, unit: Unit) -> String {
    match property {
        property::MUTUAL_EXCLUSION => {
            let beliefs: Vec<String> = state
                .clients()
                .filter(|c| c.believes)
                .map(|c| {
                    let deadline = match c.activity {
                        Activity::Holding { lease, .. } | Activity::Extending { lease, .. } => lease.deadline.since_origin(),
                        _ => 0,
                    };
                    let late = match state.shape.eps_c {
                        0 => String::new(),
                        eps => format!(
                            ", and may read up to {} late",
                            unit.amount(u64::from(eps))
                        ),
                    };
                    format!(
                        "{} believes it holds the lock until its clock reads {deadline} (it reads {}{late})",
                        client(c.index),
                        c.clock.since_origin()
                    )
                })
                .collect();
            format!("at t={} {}", state.now, beliefs.join(", and "))
        }
        property::STORAGE_SAFETY if state.counters_matter() || state.counter_node_in_play() => {
            format!(
                "the storage applied an op of an earlier lock after one of the {} lock acquired: the tokens did not follow the order of the acquisitions",
                ordinal(state.storage.max_epoch_applied)
            )
        }
        property::STORAGE_SAFETY => format!(
            "the storage applied an op of an earlier lock after one of the {} lock acquired",
            ordinal(state.storage.max_epoch_applied)
        ),
        property::NO_LOST_UPDATE => format!(
            "the counter reads {} but {} writes were acknowledged: an update is lost",
            state.storage.value, state.storage.acknowledged_writes
        ),
        _ => String::new(),
    }
}

/// The state at the break of a user invariant, which may read anything: at `t`, what each
/// client believes, and whose key each node holds.
fn state_words(state: &World) -> String {
    let clients: Vec<String> = state
        .clients()
        .map(|c| match c.lease() {
            Some(lease) if c.believes => format!(
                "{} believes it holds the lock until its clock reads {} (it reads {})",
                client(c.index),
                lease.deadline.since_origin(),
                c.clock.since_origin()
            ),
            Some(_) => format!("{} holds a lease it no longer believes in", client(c.index)),
            None => format!("{} holds no lease", client(c.index)),
        })
        .collect();
    let nodes: Vec<String> = (0..state.nodes().count())
        .map(|n| match state.holder(n) {
            Some(c) => format!("n{} holds {}'s key", n + 1, client(c)),
            None => format!("n{} holds no key", n + 1),
        })
        .collect();
    format!(
        "at t={}: {}; {}",
        state.now,
        clients.join(", "),
        nodes.join(", ")
    )
}

/// Marks where an `eventually acquired` counterexample breaks, in a run that ends at `end`
/// with nobody (or `client`, when the scenario names one) ever acquiring: on the round after
/// which no client that counts tries again, the one that gives up for good; else, when a
/// client still tries until the run stops, where time reaches the horizon (a line of its own
/// when the last event came earlier, so the mark does not sit on a key set or expired then).
/// Marks where `property` breaks in one step's lines: on the event that breaks it, else the
/// step's last (a line that says time passed, for a step that told nothing), with what each
/// party believes then (`detail`).
fn mark_break(told: &mut Vec<Line>, can: &[bool], (property, detail): (&str, String), now: u32) {
    if told.is_empty() {
        let moment = Moment {
            t: now,
            actor: Actor::Time,
            from: None,
            clock: None,
            event: Event::TimePassed { to: now },
            delayed: None,
        };
        // No amount of time in it: the unit does not matter.
        told.push(Line::told_in(moment, Unit::Ticks));
    }
    let at = can.iter().rposition(|&b| b).unwrap_or(told.len() - 1);
    let line = &mut told[at];
    line.breaks = Some(property.to_owned());
    line.detail = Some(detail);
}

fn mark_never_acquired(lines: &mut Vec<Line>, client: Option<u8>, end: u32) {
    let counts =
        |l: &Line| client.is_none_or(|c| l.actor == Actor::client(usize::from(c)).to_string());
    let tries = |l: &Line| {
        counts(l)
            && matches!(
                l.event,
                Event::RoundBegan { .. } | Event::NotAcquired { .. }
            )
    };
    let gave_up = lines
        .iter()
        .rposition(|l| counts(l) && matches!(l.event, Event::NotAcquired { gives_up: true, .. }));
    let at = match gave_up {
        Some(i) if !lines[i + 1..].iter().any(tries) => i,
        _ => {
            let Some(last) = lines.last() else { return };
            if last.t < end {
                let step = last.step;
                let mut horizon = Line::told_in(
                    Moment {
                        t: end,
                        actor: Actor::Time,
                        from: None,
                        clock: None,
                        event: Event::TimePassed { to: end },
                        delayed: None,
                    },
                    Unit::Ticks,
                );
                horizon.step = step;
                lines.push(horizon);
            }
            lines.len() - 1
        }
    };
    let who = match client {
        Some(c) => format!("c{} never acquired the lock", c + 1),
        None => "no client ever acquired the lock".to_owned(),
    };
    lines[at].breaks = Some(property::EVENTUALLY_ACQUIRED.to_owned());
    lines[at].detail = Some(format!("the run ends at t={end} and {who}"));
}

/// The story's lanes: the clients, the nodes, and the counter node, the replica and the
/// storage when the path has them.
pub(super) fn lanes(scenario: &Scenario, path: &[(World, Option<Step>)]) -> Vec<Actor> {
    let mut lanes: Vec<Actor> = (0..usize::from(scenario.lock.clients))
        .map(Actor::client)
        .collect();
    lanes.extend((0..scenario.lock.params.node_count).map(Actor::Node));
    if path.first().is_some_and(|(w, _)| w.counter_node_in_play()) {
        lanes.push(Actor::Counter);
    }
    if let Some((w, _)) = path.first() {
        let replicas = w.replicas().enumerate().filter(|(_, r)| r.is_some());
        lanes.extend(replicas.map(|(r, _)| w.replica_actor(r)));
    }
    if scenario.storage.is_some() {
        lanes.push(Actor::Storage);
    }
    lanes
}

impl Story {
    /// Tells `path` (states with the step taken from each; the last step is `None`), marking
    /// the first state where `property` breaks. The lines are the model's events
    /// (`model::path_moments`), so the story says what every other rendering of the path says.
    pub fn from_path(
        model: &RedlockModel,
        property: &str,
        path: &[(World, Option<Step>)],
    ) -> Story {
        let scenario = model.scenario();
        let unit = model.unit();
        let lanes = lanes(scenario, path).iter().map(Actor::to_string).collect();
        let mut lines = Vec::new();
        let mut steps = 0;
        let mut broke = false;
        // A user invariant breaks where its condition first fails; a built-in property where
        // the model's own test says so.
        let invariant = model.invariants().iter().find(|i| i.name == property);
        let breaks_at = |state: &World| match invariant {
            Some(invariant) => !(invariant.condition)(state),
            None => Property::from_name(property).is_some_and(|p| breaks(p, state)),
        };
        for (moments, pair) in path_moments(path).into_iter().zip(path.windows(2)) {
            let after = &pair[1].0;
            steps += 1;
            let moments_break: Vec<bool> = moments
                .iter()
                .map(|m| can_break(property, &m.event))
                .collect();
            let mut told: Vec<Line> = moments
                .into_iter()
                .map(|m| Line::told_in(m, unit))
                .collect();
            if !broke && breaks_at(after) {
                broke = true;
                let detail = match invariant {
                    Some(_) => state_words(after),
                    None => detail(property, after, unit),
                };
                mark_break(&mut told, &moments_break, (property, detail), after.now);
            }
            for line in &mut told {
                line.step = steps;
            }
            lines.extend(told);
        }
        if !broke
            && property == property::EVENTUALLY_ACQUIRED
            && let Some((end, _)) = path.last()
        {
            mark_never_acquired(&mut lines, scenario.liveness.client, end.now);
        }
        Story {
            scenario: scenario.name.clone(),
            property: property.to_owned(),
            steps,
            chosen: None,
            lanes,
            lines,
        }
    }

    /// The story as aligned text: a header line, then one line per event.
    pub fn to_text(&self) -> String {
        // `c1` is a client and `n1` a node; `counter` (the separate counter node) is itself.
        let numbered = |l: &Line| l.actor[1..].starts_with(|c: char| c.is_ascii_digit());
        let who = |l: &Line| match l.actor.chars().next() {
            Some('c') if numbered(l) => format!("client {}", l.actor),
            Some('n') if numbered(l) => format!("node {}", l.actor),
            _ => l.actor.clone(),
        };
        let t_width = self
            .lines
            .iter()
            .map(|l| format!("t={}", l.t).len())
            .max()
            .unwrap_or(3);
        let who_width = self
            .lines
            .iter()
            .map(|l| who(l).chars().count())
            .max()
            .unwrap_or(0);
        let why = self.chosen.as_deref().unwrap_or("shortest counterexample");
        let mut out = format!(
            "{}: {} violated ({why}: {} steps)\n",
            self.scenario, self.property, self.steps
        );
        for l in &self.lines {
            let mut text = format!(
                "{:t_width$}  {:who_width$}  {}",
                format!("t={}", l.t),
                who(l),
                l.action
            );
            if let Some(clock) = l.clock {
                text.push_str(&format!(" [{}'s clock reads {clock}]", l.actor));
            }
            if let Some(property) = &l.breaks {
                text.push_str(&format!("  ✗ {property}"));
            }
            out.push_str(text.trim_end());
            out.push('\n');
            if let Some(detail) = &l.detail {
                out.push_str(&format!(
                    "{:width$}{detail}\n",
                    "",
                    width = t_width + 2 + who_width + 2
                ));
            }
        }
        out
    }
}
