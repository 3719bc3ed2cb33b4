//! True time across: to scale while every instant the picture shows stands clear of the
//! next, and otherwise cut, so that a 1 ms overlap at the end of a 10 s run is as plain as
//! the round that led to it.
//!
//! A cut axis is piecewise linear between the instants something happens (a knot each):
//! each stretch between two knots gets a width that grows with the logarithm of its length,
//! so a longer stretch is always drawn wider, and a stretch where two beliefs overlap or the
//! property breaks gets three times its share. Inside a stretch time runs linearly, so a bar
//! or an arrow still starts and ends where its events put it.

use super::facts::{At, Facts};

/// Narrower than this, in pixels, a tick is too thin to tell two instants apart: the axis
/// is cut instead.
const THINNEST_TICK: f64 = 8.0;
/// How much more room a stretch where the property breaks, or two beliefs overlap, gets.
const FOCUS: f64 = 3.0;
/// The pixels between two events of one tick, at most: they keep their order (a round's
/// messages stay apart) without leaving their instant.
const SPREAD: f64 = 10.0;
/// The share of a tick the events of that tick take, at most: an event of tick 4 is drawn
/// before 4.3, never where tick 5 is nearer.
const SHARE: f64 = 0.3;

/// Where each tick goes.
#[derive(Clone, Debug)]
pub(super) struct Scale {
    /// `(tick, x)`, ascending in both, from tick 0 to the axis's end.
    knots: Vec<(u32, f64)>,
    /// Whether the axis is cut (not to scale).
    cut: bool,
}

impl Scale {
    /// The scale of `facts` drawn from `left` to `right`.
    pub(super) fn new(facts: &Facts, left: f64, right: f64) -> Scale {
        let end = facts.end.max(1);
        let room = right - left;
        let mut instants = facts.instants();
        instants.retain(|&t| t <= end);
        instants.extend([0, end]);
        instants.sort_unstable();
        instants.dedup();
        let thinnest = instants.windows(2).map(|w| w[1] - w[0]).min().unwrap_or(1);
        if room / f64::from(end) * f64::from(thinnest) >= THINNEST_TICK {
            return Scale {
                knots: vec![(0, left), (end, right)],
                cut: false,
            };
        }
        let focus = facts.focus();
        let weights: Vec<f64> = instants
            .windows(2)
            .map(|w| {
                let length = f64::from(w[1] - w[0]);
                let inside = focus.iter().any(|&(a, b)| a < w[1] && w[0] < b.max(a + 1));
                (1.0 + length).ln() * if inside { FOCUS } else { 1.0 }
            })
            .collect();
        let total: f64 = weights.iter().sum();
        let mut x = left;
        let mut knots = vec![(instants[0], left)];
        for (w, &t) in weights.iter().zip(&instants[1..]) {
            x += room * w / total;
            knots.push((t, x));
        }
        Scale { knots, cut: true }
    }

    /// Whether the axis is cut: stretches are drawn at different scales.
    pub(super) fn is_cut(&self) -> bool {
        self.cut
    }

    /// The instants the axis is cut at (every knot), with their x; on an axis to scale, its
    /// two ends.
    pub(super) fn knots(&self) -> &[(u32, f64)] {
        &self.knots
    }

    /// The x of the start of tick `t`.
    pub(super) fn tick_x(&self, t: u32) -> f64 {
        let after = self.knots.partition_point(|&(k, _)| k <= t);
        let (t0, x0) = self.knots[after.saturating_sub(1)];
        match self.knots.get(after) {
            Some(&(t1, x1)) => x0 + (x1 - x0) * f64::from(t - t0) / f64::from(t1 - t0),
            // Past the last knot: at the scale of the last stretch.
            None => {
                let per_tick = self.pixels_per_tick(self.knots.len().saturating_sub(2));
                x0 + per_tick * f64::from(t - t0)
            }
        }
    }

    /// The x of an instant: its tick's start, and an event a little after it, in its order
    /// among the tick's `events`.
    pub(super) fn x(&self, at: At, events: u32) -> f64 {
        let start = self.tick_x(at.t);
        match at.rank {
            None => start,
            Some(rank) => {
                let width = self.tick_x(at.t + 1) - start;
                let gap = (width * SHARE / f64::from(events.max(1))).min(SPREAD);
                start + gap * (0.5 + f64::from(rank))
            }
        }
    }

    /// The pixels a tick takes in the stretch after knot `i`.
    fn pixels_per_tick(&self, i: usize) -> f64 {
        match (self.knots.get(i), self.knots.get(i + 1)) {
            (Some(&(t0, x0)), Some(&(t1, x1))) if t1 > t0 => (x1 - x0) / f64::from(t1 - t0),
            _ => 0.0,
        }
    }

    /// Each stretch between two knots drawn at less than a quarter of the finest stretch's
    /// scale: where the axis leaves time out, as `(from, to)` ticks.
    pub(super) fn squeezed(&self) -> Vec<(u32, u32)> {
        if !self.cut {
            return Vec::new();
        }
        let scales: Vec<f64> = (0..self.knots.len() - 1)
            .map(|i| self.pixels_per_tick(i))
            .collect();
        let finest = scales.iter().copied().fold(0.0, f64::max);
        self.knots
            .windows(2)
            .zip(&scales)
            .filter(|&(_, &s)| s < finest / 4.0)
            .map(|(w, _)| (w[0].0, w[1].0))
            .collect()
    }
}

impl Facts {
    /// Every tick something starts, ends or happens at.
    pub(super) fn instants(&self) -> Vec<u32> {
        let facts = self;
        let mut all: Vec<u32> = Vec::new();
        for bar in &facts.bars {
            all.extend([bar.from.t, bar.to.t]);
            all.extend(bar.beyond_run.map(|a| a.t));
        }
        for arrow in &facts.arrows {
            all.extend([arrow.from.1.t, arrow.to.1.t]);
        }
        all.extend(facts.flags.iter().map(|f| f.at.t));
        all.extend(facts.marks.iter().map(|m| m.at.t));
        for o in &facts.overlaps {
            all.extend([o.from.t, o.to.t]);
        }
        all.extend(facts.broken.iter().map(|b| b.at.t));
        all.extend(facts.offsets.iter().map(|(_, at, _)| at.t));
        all.extend(&facts.shared_instants);
        all
    }

    /// The stretches that matter most: where two beliefs overlap, and the tick the property
    /// breaks in (and those of another run on the same axis).
    pub(super) fn focus(&self) -> Vec<(u32, u32)> {
        let mut focus: Vec<(u32, u32)> = self.overlaps.iter().map(|o| (o.from.t, o.to.t)).collect();
        focus.extend(self.broken.iter().map(|b| (b.at.t, b.at.t + 1)));
        focus.extend(&self.shared_focus);
        focus
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(end: u32, ticks: &[u32]) -> Facts {
        Facts {
            end,
            shared_instants: ticks.to_vec(),
            ..Facts::default()
        }
    }

    #[test]
    fn a_short_run_is_to_scale() {
        let scale = Scale::new(&facts(10, &[3, 4]), 100.0, 1100.0);
        assert!(!scale.is_cut());
        assert!((scale.tick_x(5) - 600.0).abs() < 1e-9);
        assert!(scale.squeezed().is_empty());
    }

    #[test]
    fn a_long_quiet_stretch_is_cut_and_order_is_kept() {
        let scale = Scale::new(&facts(10_000, &[1, 2, 50, 9_947, 9_948]), 100.0, 1100.0);
        assert!(scale.is_cut());
        let xs: Vec<f64> = (0..=10_000).map(|t| scale.tick_x(t)).collect();
        assert!(xs.windows(2).all(|w| w[0] < w[1]), "strictly increasing");
        assert!((xs[0] - 100.0).abs() < 1e-9 && (xs[10_000] - 1100.0).abs() < 1e-6);
        // The one-tick stretch at the end is many pixels wide, the long quiet one squeezed.
        assert!(xs[9_948] - xs[9_947] > 20.0, "{}", xs[9_948] - xs[9_947]);
        assert!(scale.squeezed().contains(&(50, 9_947)));
        // A longer stretch is never drawn narrower than a shorter one.
        assert!(xs[50] - xs[2] < xs[9_947] - xs[50]);
    }

    #[test]
    fn the_events_of_one_tick_stay_at_its_instant() {
        let scale = Scale::new(&facts(10, &[]), 100.0, 1100.0);
        let last = scale.x(
            At {
                t: 4,
                rank: Some(9),
            },
            10,
        );
        assert!(last > scale.tick_x(4) && last - scale.tick_x(4) <= SHARE * 100.0);
    }
}
