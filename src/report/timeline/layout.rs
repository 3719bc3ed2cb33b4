//! Where everything goes: true time across at a fixed width (see `scale.rs`), one band per
//! lane, and labels stacked in rows so that none covers another.

use crate::actor::Actor;

use super::facts::{At, Facts};
use super::scale::Scale;

/// The picture's width, in pixels: it fits a 1 280-pixel window without scrolling.
pub(super) const WIDTH: f64 = 1200.0;
/// The lane names' column.
pub(super) const LEFT: f64 = 96.0;
const RIGHT: f64 = 28.0;
/// Where the lanes begin, under the title and the axis.
const TOP: f64 = 108.0;
/// The room the overview of a cut axis takes above it.
const OVERVIEW: f64 = 18.0;
/// Pixels per character of an 11-pixel label, with some slack.
const CHAR: f64 = 6.4;
/// The height of one row of labels.
pub(super) const ROW: f64 = 15.0;

/// One lane's band.
#[derive(Clone, Debug)]
pub(super) struct Band {
    /// Whose lane.
    pub actor: Actor,
    /// Its top edge.
    pub top: f64,
    /// Its height.
    pub height: f64,
    /// The middle of its main bar, where arrows start and end.
    pub mid: f64,
    /// The baseline of its first row of labels.
    pub labels: f64,
    /// The baseline of its own clock's readings, for a process whose clock jumped.
    pub ruler: Option<f64>,
}

/// The positions of a timeline's parts.
#[derive(Clone, Debug)]
pub(super) struct Layout {
    /// Where each tick goes.
    pub scale: Scale,
    /// How many events each tick has.
    per_tick: Vec<u32>,
    /// The lanes, top to bottom.
    pub bands: Vec<Band>,
    /// The row of each flag's label, in the order of `Facts::flags`.
    pub rows: Vec<usize>,
    /// Where the lanes begin: under the title, the overview of a cut axis and the axis.
    pub top: f64,
    /// Below the last lane.
    pub bottom: f64,
}

impl Layout {
    /// Lays out `facts`.
    pub(super) fn new(facts: &Facts) -> Layout {
        let scale = Scale::new(facts, LEFT, WIDTH - RIGHT);
        let top = TOP + if scale.is_cut() { OVERVIEW } else { 0.0 };
        let mut layout = Layout {
            scale,
            per_tick: facts.per_tick.clone(),
            bands: Vec::new(),
            rows: Vec::new(),
            top,
            bottom: top,
        };
        layout.rows = layout.label_rows(facts);
        let mut top = layout.top;
        let mut previous = None;
        for &actor in &facts.lanes {
            let rows = facts
                .flags
                .iter()
                .zip(&layout.rows)
                .filter(|(f, _)| f.lane == actor)
                .map(|(_, &r)| r + 1)
                .max()
                .unwrap_or(0);
            // A small gap between the clients, the nodes and the services.
            if previous.is_some_and(|p| group(p) != group(actor)) {
                top += 10.0;
            }
            let mut band = band(actor, top, rows);
            if facts.offsets.iter().any(|(a, _, _)| *a == actor) {
                band.ruler = Some(top + band.height + 8.0);
                band.height += 13.0;
            }
            top += band.height;
            layout.bands.push(band);
            previous = Some(actor);
        }
        layout.bottom = top;
        layout
    }

    /// The x of an instant.
    pub(super) fn x(&self, at: At) -> f64 {
        let events = self.per_tick.get(at.t as usize).copied().unwrap_or(1);
        self.scale.x(at, events)
    }

    /// The right edge of the axis.
    pub(super) fn right(&self) -> f64 {
        WIDTH - RIGHT
    }

    /// The band of `actor`'s lane.
    pub(super) fn band(&self, actor: Actor) -> Option<&Band> {
        self.bands.iter().find(|b| b.actor == actor)
    }

    /// The width a label takes.
    pub(super) fn label_width(label: &str) -> f64 {
        label.chars().count() as f64 * CHAR + 10.0
    }

    /// Each flag's row: labels that would cover one another go down a row each, in the
    /// order of their events, so a crowded instant reads top to bottom; a label clear of
    /// every earlier one goes back to the first row.
    fn label_rows(&self, facts: &Facts) -> Vec<usize> {
        let mut order: Vec<usize> = (0..facts.flags.len()).collect();
        order.sort_by_key(|&i| facts.flags[i].at);
        let mut rows = vec![0; facts.flags.len()];
        // Per lane, where each row's last label ends, and the row used last.
        let mut ends: Vec<(Actor, Vec<f64>, usize)> = Vec::new();
        for i in order {
            let flag = &facts.flags[i];
            let x = self.x(flag.at);
            let lane = match ends.iter().position(|(a, _, _)| *a == flag.lane) {
                Some(at) => at,
                None => {
                    ends.push((flag.lane, Vec::new(), 0));
                    ends.len() - 1
                }
            };
            let (_, row_ends, last) = &mut ends[lane];
            let free = |row: usize| row_ends.get(row).is_none_or(|&end| end + 3.0 <= x);
            let row = if row_ends.iter().all(|&end| end + 3.0 <= x) {
                0
            } else {
                (*last + 1..=row_ends.len())
                    .chain(0..*last)
                    .find(|&row| free(row))
                    .unwrap_or(row_ends.len())
            };
            let end = x + Layout::label_width(&flag.label);
            match row_ends.get_mut(row) {
                Some(slot) => *slot = end,
                None => row_ends.push(end),
            }
            *last = row;
            rows[i] = row;
        }
        rows
    }
}

/// Which group a lane is in: clients, nodes, or the rest.
fn group(actor: Actor) -> u8 {
    match actor {
        Actor::Client(_) => 0,
        Actor::Node(_) => 1,
        _ => 2,
    }
}

/// The band of `actor`'s lane from `top`, with `rows` rows of labels.
fn band(actor: Actor, top: f64, rows: usize) -> Band {
    let rows = rows as f64;
    // (height, middle of the main bar, first label baseline), from the band's top.
    let (height, mid, labels) = match actor {
        // A round's thin bar, the belief's thick one, a row for a pause or a crash, then
        // the labels.
        Actor::Client(_) => (46.0 + rows * ROW, 19.0, 55.0),
        // The key's bar, a row for a restart or an outage, then the labels.
        Actor::Node(_) => (36.0 + rows * ROW, 13.0, 45.0),
        // The ops are the labels, on the lane itself.
        _ => (10.0 + rows.max(1.0) * (ROW + 4.0), 14.0, 18.0),
    };
    Band {
        actor,
        top,
        height,
        mid: top + mid,
        labels: top + labels,
        ruler: None,
    }
}
