//! The axis along the top: true time in the file's unit (milliseconds for a file in real
//! units, else ticks), a faint line down through every lane, and, where the axis is cut,
//! a `≈` where time is left out and the whole run to scale above it; under the lane of a
//! process whose clock jumped, what its own clock reads.

use std::fmt::Write;

use super::facts::{At, Facts};
use super::layout::{LEFT, Layout};
use super::palette::RED;

/// The axis's label rows, from the lanes' top.
const LABELS: f64 = 30.0;
/// Where the grid lines begin, from the lanes' top.
const GRID: f64 = 26.0;

/// Draws the axis and returns the ticks it labelled, for the rulers.
pub(super) fn draw(svg: &mut String, facts: &Facts, layout: &Layout, ms: Option<u64>) -> Vec<u32> {
    let label = |t: u32| match ms {
        Some(ms) => format!("{} ms", u64::from(t) * ms),
        None => format!("t={t}"),
    };
    let (grid, labelled) = if layout.scale.is_cut() {
        cut_ticks(facts, layout, &label)
    } else {
        even_ticks(facts, layout, &label)
    };
    let y = layout.top - LABELS;
    svg.push_str("<g class='axis'>");
    for &t in &grid {
        let x = layout.scale.tick_x(t);
        let _ = write!(
            svg,
            "<line class='grid' data-t='{t}' x1='{x:.1}' y1='{:.1}' x2='{x:.1}' y2='{:.1}'/>",
            layout.top - GRID,
            layout.bottom
        );
    }
    for &t in &labelled {
        let x = layout.scale.tick_x(t);
        let _ = write!(svg, "<text x='{x:.1}' y='{y:.1}'>{}</text>", label(t));
    }
    for (from, to) in layout.scale.squeezed() {
        let x = (layout.scale.tick_x(from) + layout.scale.tick_x(to)) / 2.0;
        let left_out = match ms {
            Some(ms) => format!("{} ms", u64::from(to - from) * ms),
            None => format!("{} ticks", to - from),
        };
        let _ = write!(
            svg,
            "<text class='cut' x='{x:.1}' y='{:.1}' style='font-size:14px;fill:#999'>≈<title>{left_out} drawn short: nothing else happens in them</title></text>",
            y + 11.0
        );
    }
    svg.push_str("</g>");
    if layout.scale.is_cut() {
        draw_overview(svg, facts, layout, &label);
    }
    labelled
}

/// For an axis to scale: labels on round numbers at least a label's width apart, and a grid
/// line per tick while ticks are wide enough to tell apart, else only under the labels.
fn even_ticks(
    facts: &Facts,
    layout: &Layout,
    label: &dyn Fn(u32) -> String,
) -> (Vec<u32>, Vec<u32>) {
    let tick = layout.scale.tick_x(1) - layout.scale.tick_x(0);
    let widest = Layout::label_width(&label(facts.end));
    let every = round_step((widest.max(40.0) / tick).ceil().max(1.0) as u32);
    let labelled: Vec<u32> = (0..=facts.end).filter(|t| t % every == 0).collect();
    let grid = if tick >= 4.0 {
        (0..=facts.end).collect()
    } else {
        labelled.clone()
    };
    (grid, labelled)
}

/// For a cut axis: a grid line at every instant something happens, and a label at each one
/// where it fits, the break's and the overlaps' first, then the rest from the left.
fn cut_ticks(
    facts: &Facts,
    layout: &Layout,
    label: &dyn Fn(u32) -> String,
) -> (Vec<u32>, Vec<u32>) {
    let grid: Vec<u32> = layout.scale.knots().iter().map(|&(t, _)| t).collect();
    let mut wanted: Vec<u32> = facts.broken.iter().map(|b| b.at.t).collect();
    for o in &facts.overlaps {
        wanted.extend([o.from.t, o.to.t]);
    }
    wanted.extend(&grid);
    let mut taken: Vec<(f64, f64)> = Vec::new();
    let mut labelled = Vec::new();
    for t in wanted {
        let x = layout.scale.tick_x(t);
        let half = Layout::label_width(&label(t)) / 2.0;
        let clear = taken.iter().all(|&(a, b)| x + half <= a || b <= x - half);
        if clear && x - half >= LEFT - 40.0 && x + half <= layout.right() + 28.0 {
            taken.push((x - half, x + half));
            labelled.push(t);
        }
    }
    labelled.sort_unstable();
    labelled.dedup();
    (grid, labelled)
}

/// Above a cut axis, the whole run to scale: where two beliefs overlap and where the
/// property breaks, so that the zoomed axis below is read against the true proportions.
fn draw_overview(svg: &mut String, facts: &Facts, layout: &Layout, label: &dyn Fn(u32) -> String) {
    let (left, right) = (LEFT, layout.right());
    let at = |t: u32| left + (right - left) * f64::from(t) / f64::from(facts.end.max(1));
    let y = layout.top - LABELS - 24.0;
    let _ = write!(
        svg,
        "<g class='overview'><title>The whole run to scale, 0 to {}: the axis below is cut where nothing happens for long</title>\
         <text x='{:.1}' y='{:.1}' style='font-size:10px;fill:#777;text-anchor:end'>to scale</text>\
         <rect x='{left:.1}' y='{y:.1}' width='{:.1}' height='6' fill='#e6e6e6'/>",
        label(facts.end),
        LEFT - 12.0,
        y + 6.0,
        right - left
    );
    for o in &facts.overlaps {
        let x0 = at(o.from.t);
        let width = (at(o.to.t) - x0).max(2.0);
        let _ = write!(
            svg,
            "<rect x='{x0:.1}' y='{y:.1}' width='{width:.1}' height='6' fill='{RED}'/>"
        );
    }
    if let Some(broken) = &facts.broken {
        let x = at(broken.at.t);
        let _ = write!(
            svg,
            "<line x1='{x:.1}' y1='{:.1}' x2='{x:.1}' y2='{:.1}' stroke='{RED}' stroke-width='2'/>",
            y - 3.0,
            y + 9.0
        );
    }
    let _ = write!(
        svg,
        "<text x='{:.1}' y='{:.1}' style='font-size:10px;fill:#777;text-anchor:end'>{}</text></g>",
        right,
        y - 3.0,
        label(facts.end)
    );
}

/// The smallest of 1, 2, 5, 10, 20, 50, … that is at least `least`.
fn round_step(least: u32) -> u32 {
    let mut decade = 1u32;
    loop {
        for m in [1, 2, 5] {
            if decade.saturating_mul(m) >= least {
                return decade.saturating_mul(m);
            }
        }
        decade = decade.saturating_mul(10);
    }
}

/// Under the lane of a process whose clock jumped, what its own clock reads at each
/// labelled tick, in the axis's unit: after the jump the two scales part, and the gap is the jump.
pub(super) fn draw_rulers(
    svg: &mut String,
    facts: &Facts,
    layout: &Layout,
    ticks: &[u32],
    ms: Option<u64>,
) {
    for band in &layout.bands {
        let Some(y) = band.ruler else {
            continue;
        };
        let _ = write!(
            svg,
            "<g class='ruler' data-actor='{}'><text x='{:.1}' y='{y:.1}' style='font-size:9px;fill:#777;text-anchor:end'>{} reads</text>",
            band.actor,
            LEFT - 12.0,
            band.actor
        );
        for &t in ticks {
            // The offset in force at the tick's start: a jump inside the tick counts from
            // the next one.
            let offset = facts
                .offsets
                .iter()
                .filter(|(a, at, _)| *a == band.actor && *at < At::tick(t))
                .map(|(_, _, offset)| *offset)
                .next_back()
                .unwrap_or(0);
            let colour = if offset == 0 { "#999" } else { "#b4451f" };
            let _ = write!(
                svg,
                "<text x='{:.1}' y='{y:.1}' data-t='{t}' style='font-size:9px;fill:{colour};text-anchor:middle'>{}</text>",
                layout.scale.tick_x(t),
                (i64::from(t) + offset) * ms.map_or(1, |ms| ms as i64)
            );
        }
        svg.push_str("</g>");
    }
}
