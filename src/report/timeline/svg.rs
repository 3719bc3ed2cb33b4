//! A timeline drawn as one SVG: the title, the axis, a band per lane, the bars, the overlap
//! in red with the instant the property breaks, the arrows, the labels, a dot per event
//! (with its sentence as a tooltip and a link to its step) and the legend.

use std::fmt::Write;

use crate::actor::Actor;

use super::axis;
use super::facts::{Arrow, ArrowKind, Bar, BarKind, Facts, Flag, FlagKind, Timeline};
use super::layout::{LEFT, Layout, ROW, WIDTH};
use super::palette::{RED, colour};

/// The styles, inside the SVG so that it reads the same on its own and inside a page.
const STYLE: &str = "text{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:11px;fill:#222}\
.title{font-size:16px;font-weight:600}.subtitle{font-size:13px;fill:#444}\
.axis text{fill:#777;text-anchor:middle}.grid{stroke:#e4e4e4}\
.lane-name{font-size:13px;font-weight:600;text-anchor:end}\
.round{fill:none;stroke-width:1.4}.key{stroke:#fff;stroke-width:.5}\
.beyond{opacity:.4}.fault{fill:url(#hatch);stroke:#888}.guarded{fill:#eee;stroke:#aaa;stroke-dasharray:2 2}\
.request{stroke:#555;fill:none}.refused{stroke:#aaa;stroke-dasharray:3 2}.lost{stroke:#999}\
.in-flight{stroke:#aaa;stroke-dasharray:6 4}.op{stroke:#555;fill:none}\
.overlap{fill:#d7263d;fill-opacity:.22;stroke:#d7263d;stroke-width:1.5}\
.break{stroke:#d7263d;stroke-width:2}.break-label{fill:#d7263d;font-weight:700;font-size:12px}\
.event{fill:#555}.event:hover,.hl{stroke:#000;stroke-width:2}\
.flag-text{font-size:11px}.legend text{font-size:11px;fill:#333}";

/// Text made safe for HTML or XML, in content and in attribute values (quoted either way).
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('\'', "&#39;")
        .replace('"', "&quot;")
}

impl Timeline {
    /// The timeline as one SVG document, for embedding: true time across, one lane per
    /// client, node and service, with a legend.
    pub fn to_svg(&self) -> String {
        let facts = &self.facts;
        let layout = Layout::new(facts);
        let height = layout.bottom + 78.0;
        let mut svg = String::new();
        let _ = write!(
            svg,
            "<svg xmlns='http://www.w3.org/2000/svg' class='timeline' width='{WIDTH}' height='{height:.0}' viewBox='0 0 {WIDTH} {height:.0}' role='img'>\
             <title>{}</title><style>{STYLE}</style>{}",
            escape(&self.heading()),
            DEFS
        );
        self.draw_heading(&mut svg);
        let labelled = axis::draw(&mut svg, facts, &layout, self.ms_per_tick);
        draw_lanes(&mut svg, &layout);
        axis::draw_rulers(&mut svg, facts, &layout, &labelled, self.ms_per_tick);
        for bar in &facts.bars {
            draw_bar(&mut svg, bar, &layout);
        }
        draw_overlaps(&mut svg, facts, &layout);
        for arrow in &facts.arrows {
            draw_arrow(&mut svg, arrow, &layout);
        }
        for (flag, &row) in facts.flags.iter().zip(&layout.rows) {
            draw_flag(&mut svg, flag, row, &layout);
        }
        draw_break(&mut svg, facts, &layout);
        draw_marks(&mut svg, facts, &layout, &self.anchor);
        super::legend::draw(&mut svg, layout.bottom + 22.0);
        svg.push_str("</svg>");
        svg
    }

    /// `name — title`.
    pub(super) fn heading(&self) -> String {
        format!("{} — {}", self.scenario, self.title)
    }

    /// What the run shows, in one line under the heading.
    pub(super) fn verdict(&self) -> String {
        let why = self
            .chosen
            .as_deref()
            .unwrap_or("the shortest counterexample");
        let at = self
            .facts
            .broken
            .as_ref()
            .map(|b| format!(" at t={}", b.at.t))
            .unwrap_or_default();
        format!("{}: violated{at} ({why})", self.property)
    }

    /// The name, the title (cut to the picture's width; the page's title has it whole) and
    /// the verdict, one a line.
    fn draw_heading(&self, svg: &mut String) {
        let title: String = if self.title.chars().count() > 160 {
            self.title.chars().take(159).chain(['…']).collect()
        } else {
            self.title.clone()
        };
        let _ = write!(
            svg,
            "<text x='16' y='22' class='title'>{}</text><text x='16' y='40' class='subtitle'>{}</text>             ",
            escape(&self.scenario),
            escape(&title),
        );
        // A run that is not a counterexample says what it is, in green, without the cross.
        let _ = match &self.caption {
            Some(caption) => write!(
                svg,
                "<text x='16' y='57' class='subtitle caption' style='fill:#2a9d4b;font-weight:600'>{}</text>",
                escape(caption)
            ),
            None => write!(
                svg,
                "<text x='16' y='57' class='subtitle' style='fill:{RED};font-weight:600'>✗ {}</text>",
                escape(&self.verdict())
            ),
        };
    }
}

/// Arrowheads and the hatching of faults.
const DEFS: &str = "<defs>\
<marker id='tl-head' viewBox='0 0 10 10' refX='10' refY='5' markerWidth='7' markerHeight='7' orient='auto-start-reverse'><path d='M0 0L10 5L0 10z' fill='#555'/></marker>\
<marker id='tl-head-grey' viewBox='0 0 10 10' refX='10' refY='5' markerWidth='7' markerHeight='7' orient='auto-start-reverse'><path d='M0 0L10 5L0 10z' fill='#aaa'/></marker>\
<pattern id='hatch' width='6' height='6' patternUnits='userSpaceOnUse' patternTransform='rotate(45)'><rect width='6' height='6' fill='#f1f1f1'/><line x1='0' y1='0' x2='0' y2='6' stroke='#9a9a9a' stroke-width='2'/></pattern>\
</defs>";

/// Each lane's band and name.
fn draw_lanes(svg: &mut String, layout: &Layout) {
    for (i, band) in layout.bands.iter().enumerate() {
        let fill = if i % 2 == 0 { "#fafafa" } else { "#ffffff" };
        let name_colour = match band.actor {
            Actor::Client(_) => colour(Some(band.actor)),
            _ => "#333",
        };
        let _ = write!(
            svg,
            "<g class='lane' data-actor='{actor}'><rect x='0' y='{:.1}' width='{WIDTH}' height='{:.1}' fill='{fill}'/>\
             <text x='{:.1}' y='{:.1}' class='lane-name' style='fill:{name_colour}'>{actor}</text></g>",
            band.top,
            band.height,
            LEFT - 12.0,
            band.mid + 4.0,
            actor = band.actor
        );
    }
}

/// A bar on its lane: a round's outline, a belief, a key, a fault; the part after the run's
/// end lighter, since no event told it.
fn draw_bar(svg: &mut String, bar: &Bar, layout: &Layout) {
    let Some(band) = layout.band(bar.lane) else {
        return;
    };
    // At least 3 pixels: a key set a millisecond before the run ends is still a key.
    let (x0, x1) = (
        layout.x(bar.from),
        layout.x(bar.to).max(layout.x(bar.from) + 3.0),
    );
    // Faults get a row of their own under the lane's main bar, so a belief or a key that
    // lasts through a pause or a restart stays in sight.
    let (y, h) = match bar.kind {
        BarKind::Round => (band.top + 5.0, 5.0),
        BarKind::Lease => (band.mid - 7.0, 14.0),
        BarKind::Key => (band.mid - 6.0, 12.0),
        _ => (band.mid + 9.0, 12.0),
    };
    let paint = match bar.kind {
        BarKind::Round => format!("stroke='{}'", colour(bar.owner)),
        BarKind::Lease | BarKind::Key => format!("fill='{}'", colour(bar.owner)),
        _ => String::new(),
    };
    let _ = write!(
        svg,
        "<g class='bar'><rect class='{}' data-step='{}' data-lane='{}' data-from='{}' data-to='{}'{} x='{x0:.1}' y='{y:.1}' width='{:.1}' height='{h:.1}' {paint}><title>{}</title></rect>",
        bar.kind.class(),
        bar.step,
        bar.lane,
        bar.from.t,
        bar.to.t,
        bar.owner
            .map(|o| format!(" data-owner='{o}'"))
            .unwrap_or_default(),
        x1 - x0,
        escape(&match bar.role {
            Some(role) => format!("{} ({role})", bar.title),
            None => bar.title.clone(),
        })
    );
    if let Some(end) = bar.beyond_run.filter(|end| *end < bar.to) {
        // What the last state says will happen: drawn paler over the same bar.
        let xe = layout.x(end).max(x0);
        let _ = write!(
            svg,
            "<rect class='beyond' x='{xe:.1}' y='{y:.1}' width='{:.1}' height='{h:.1}' fill='#fff'/>",
            (x1 - xe).max(0.0)
        );
    }
    draw_bar_label(svg, bar, (x0, x1), y + h / 2.0);
    svg.push_str("</g>");
}

/// The words inside a bar, when they fit.
fn draw_bar_label(svg: &mut String, bar: &Bar, (x0, x1): (f64, f64), y: f64) {
    let label = match bar.kind {
        BarKind::Lease => format!("{} believes", bar.lane),
        BarKind::Key => bar.owner.map(|o| o.to_string()).unwrap_or_default(),
        BarKind::Paused => "paused".to_owned(),
        BarKind::Restarting => "restarting".to_owned(),
        BarKind::Down => "down".to_owned(),
        BarKind::Dead => "crashed".to_owned(),
        BarKind::Guarded => "guard".to_owned(),
        BarKind::Round => return,
    };
    let label = match bar.role {
        Some(role) => format!("{label} · {role}"),
        None => label,
    };
    if Layout::label_width(&label) > x1 - x0 {
        return;
    }
    let (fill, size) = match bar.kind {
        BarKind::Lease | BarKind::Key => ("#fff", 11),
        _ => ("#222", 10),
    };
    let _ = write!(
        svg,
        "<text x='{:.1}' y='{:.1}' style='fill:{fill};font-weight:600;font-size:{size}px' pointer-events='none'>{}</text>",
        x0 + 5.0,
        y + 3.5,
        escape(&label)
    );
}

/// Where two beliefs overlap: a red band across both clients' lanes.
fn draw_overlaps(svg: &mut String, facts: &Facts, layout: &Layout) {
    for overlap in &facts.overlaps {
        let (Some(a), Some(b)) = (
            layout.band(overlap.clients.0),
            layout.band(overlap.clients.1),
        ) else {
            continue;
        };
        let (top, bottom) = (
            a.top.min(b.top) + 2.0,
            (a.top + a.height).max(b.top + b.height) - 2.0,
        );
        // At least a few pixels wide: a 1 ms overlap in a 10 s run is still the point.
        let x0 = layout.x(overlap.from);
        let x1 = layout.x(overlap.to).max(x0 + 4.0);
        let _ = write!(
            svg,
            "<rect class='overlap' data-clients='{} {}' data-from='{}' data-to='{}' x='{x0:.1}' y='{top:.1}' width='{:.1}' height='{:.1}'><title>{} and {} both believe they hold the lock</title></rect>",
            overlap.clients.0,
            overlap.clients.1,
            overlap.from.t,
            overlap.to.t,
            x1 - x0,
            bottom - top,
            overlap.clients.0,
            overlap.clients.1
        );
    }
}

/// How long an arrow still in flight is drawn: a stub toward its node, not a line to the
/// axis's end across every lane.
const IN_FLIGHT: f64 = 34.0;

/// A message: from its sender's lane when it was sent to its receiver's when it arrived; a
/// lost one stops halfway, at a cross; one still in flight is a short dashed stub toward its
/// node.
fn draw_arrow(svg: &mut String, arrow: &Arrow, layout: &Layout) {
    let (Some(from), Some(to)) = (layout.band(arrow.from.0), layout.band(arrow.to.0)) else {
        return;
    };
    let (x0, y0) = (layout.x(arrow.from.1), from.mid);
    let (mut x1, mut y1) = (layout.x(arrow.to.1), to.mid);
    if arrow.kind == ArrowKind::InFlight {
        let (dx, dy) = (x1 - x0, y1 - y0);
        let length = dx.hypot(dy).max(1.0);
        let part = (IN_FLIGHT / length).min(1.0);
        (x1, y1) = (x0 + dx * part, y0 + dy * part);
    }
    let head = match arrow.kind {
        ArrowKind::Refused | ArrowKind::Lost | ArrowKind::InFlight => "tl-head-grey",
        _ => "tl-head",
    };
    if arrow.kind == ArrowKind::Lost {
        // Into nothing: halfway to the node, ending in a cross.
        y1 = (y0 + y1) / 2.0;
        x1 = x1.max(x0 + 6.0);
    }
    let marker = if arrow.kind == ArrowKind::Lost {
        String::new()
    } else {
        format!(" marker-end='url(#{head})'")
    };
    let _ = write!(
        svg,
        "<line class='{}' data-step='{}' data-from='{}' data-to='{}' x1='{x0:.1}' y1='{y0:.1}' x2='{x1:.1}' y2='{y1:.1}'{marker}><title>{}</title></line>",
        arrow.kind.class(),
        arrow.step,
        arrow.from.0,
        arrow.to.0,
        escape(&arrow.title)
    );
    if arrow.kind == ArrowKind::Lost {
        let _ = write!(
            svg,
            "<path class='lost' d='M{:.1} {:.1}l8 8m0 -8l-8 8' stroke-width='2'/>",
            x1 - 4.0,
            y1 - 4.0
        );
    }
}

/// A labelled instant: a fault's tag on its lane, or an op's box on the storage lane.
fn draw_flag(svg: &mut String, flag: &Flag, row: usize, layout: &Layout) {
    let Some(band) = layout.band(flag.lane) else {
        return;
    };
    let x = layout.x(flag.at);
    let width = Layout::label_width(&flag.label);
    let services = !matches!(flag.lane, Actor::Client(_) | Actor::Node(_));
    let y = if services {
        band.top + 4.0 + row as f64 * (ROW + 4.0)
    } else {
        band.labels - 11.0 + row as f64 * ROW
    };
    let (class, fill, stroke, text) = match flag.kind {
        FlagKind::Fault => ("flag fault-tag", "#fff", "#777", "#333"),
        FlagKind::Applied(c) => ("flag op-applied", colour(Some(c)), colour(Some(c)), "#fff"),
        FlagKind::Rejected(c) => ("flag op-rejected", "#fff", colour(Some(c)), "#777"),
        FlagKind::Stale(c) => ("flag op-stale", colour(Some(c)), RED, "#fff"),
        FlagKind::Lost => ("flag update-lost", RED, RED, "#fff"),
    };
    let mark = match flag.kind {
        FlagKind::Fault => "⚡ ",
        FlagKind::Rejected(_) => "✗ ",
        FlagKind::Stale(_) | FlagKind::Lost => "! ",
        FlagKind::Applied(_) => "",
    };
    let width = width + if mark.is_empty() { 0.0 } else { 12.0 };
    // A label that would leave the picture hangs left of its instant.
    let left = if x + width > WIDTH - 2.0 {
        x - width
    } else {
        x
    };
    let stroke_width = if matches!(flag.kind, FlagKind::Stale(_)) {
        2.5
    } else {
        1.0
    };
    let _ = write!(
        svg,
        "<g class='{class}' data-step='{}' data-lane='{}' data-t='{}'><title>{}</title>\
         <line x1='{x:.1}' y1='{:.1}' x2='{x:.1}' y2='{y:.1}' stroke='{stroke}' stroke-width='1'/>\
         <rect x='{left:.1}' y='{y:.1}' width='{width:.1}' height='14' rx='3' fill='{fill}' stroke='{stroke}' stroke-width='{stroke_width}'/>\
         <text class='flag-text' x='{:.1}' y='{:.1}' style='fill:{text}'>{mark}{}</text></g>",
        flag.step,
        flag.lane,
        flag.at.t,
        escape(&flag.title),
        band.mid,
        left + 4.0,
        y + 11.0,
        escape(&flag.label)
    );
}

/// The instant the property breaks: a red line through every lane, and its name.
fn draw_break(svg: &mut String, facts: &Facts, layout: &Layout) {
    let Some(broken) = &facts.broken else {
        return;
    };
    let x = layout.x(broken.at);
    let label = format!("✗ {} breaks", broken.property);
    // The label runs left of the line when it would leave the picture.
    let (anchor, lx) = if x + Layout::label_width(&label) > WIDTH - 8.0 {
        ("end", x - 4.0)
    } else {
        ("start", x + 4.0)
    };
    let _ = write!(
        svg,
        "<g class='broken' data-t='{}' data-step='{}'><title>{}</title>\
         <line class='break' x1='{x:.1}' y1='{:.1}' x2='{x:.1}' y2='{:.1}'/>\
         <text class='break-label' x='{lx:.1}' y='{:.1}' text-anchor='{anchor}'>{}</text></g>",
        broken.at.t,
        broken.step,
        escape(&broken.detail),
        layout.top - 12.0,
        layout.bottom,
        layout.top - 4.0,
        escape(&label)
    );
}

/// A dot per event at the top of its lane: its sentence on hover, a link to its step.
fn draw_marks(svg: &mut String, facts: &Facts, layout: &Layout, anchor: &str) {
    for mark in &facts.marks {
        let Some(band) = mark.lane.and_then(|lane| layout.band(lane)) else {
            continue;
        };
        let _ = write!(
            svg,
            "<a href='#{}-{step}'><circle class='event' data-step='{step}' cx='{:.1}' cy='{:.1}' r='2.5'><title>step {step}: {}</title></circle></a>",
            escape(anchor),
            layout.x(mark.at),
            band.top + 3.0,
            escape(&mark.title),
            step = mark.step
        );
    }
}
