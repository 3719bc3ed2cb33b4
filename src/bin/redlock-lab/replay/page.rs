//! `replay --format html`: a replay as one page that opens from disk. The verdict first, then
//! the model's run drawn as the book draws it, then each of its steps beside what the real
//! masters did at that moment (each step links to its place in the picture), and each
//! client's belief on real time.

use std::fmt::Write;

use redlock_lab::report::Timeline;

use super::execute::{Belief, overlap};
use crate::book::html::{escape, page};

/// The page's own style, after the book's.
const STYLE: &str = "<style>table.real{border-collapse:collapse;font-size:13px;width:100%}\
table.real td,table.real th{padding:2px 8px;border-bottom:1px solid #eee;text-align:left;vertical-align:top}\
table.real td.at{white-space:nowrap;font-family:monospace}table.real tr.parted td{color:#d7263d;font-weight:600}\
p.verdict{font-size:17px;font-weight:600}p.verdict.reproduced{color:#2a9d4b}p.verdict.parted{color:#d7263d}</style>\n";

/// The chart's width, its left margin (the lane labels) and a lane's height, in pixels.
const WIDTH: f64 = 1180.0;
const LEFT: f64 = 60.0;
const LANE: f64 = 34.0;

/// The chart's horizontal scale and its lanes.
struct Axis {
    /// The last moment drawn, in seconds of real time.
    end_s: f64,
    /// Client lanes (a steps lane follows them).
    clients: usize,
}

impl Axis {
    /// Where `s` seconds fall.
    fn x(&self, s: f64) -> f64 {
        LEFT + (s / self.end_s).clamp(0.0, 1.0) * (WIDTH - LEFT - 30.0)
    }

    /// The lanes and the axis labels under them.
    fn height(&self) -> f64 {
        LANE * (self.clients as f64 + 1.0) + 24.0
    }
}

/// One line of the model's story as the replay executed it.
pub(super) struct Row {
    /// The checker's step that told the line (from 1).
    pub step: usize,
    /// True time in the model, in ticks.
    pub t: u32,
    /// Who acts (`c1`, `n2`, `replica1`).
    pub actor: String,
    /// What the model says it does.
    pub action: String,
    /// When the replay executed it, in seconds since it started.
    pub at_s: f64,
    /// What the real masters did, or where they parted from the model.
    pub real: Result<String, String>,
}

/// What the page shows.
pub(super) struct Page<'a> {
    /// The scenario's name.
    pub name: &'a str,
    /// The servers it ran on, in words ("3 real redis-server masters").
    pub servers: &'a str,
    /// The command that runs it again.
    pub command: &'a str,
    /// The verdict line, as the text output ends.
    pub verdict: &'a str,
    /// Whether the verdict is the outcome the replay looked for (exit 0).
    pub as_expected: bool,
    /// The model's run.
    pub timeline: &'a Timeline,
    /// Every line executed, in order.
    pub rows: &'a [Row],
    /// Every client's belief on real time.
    pub beliefs: &'a [Belief],
}

impl Page<'_> {
    /// The whole page.
    pub(super) fn render(&self) -> String {
        let class = if self.as_expected {
            "reproduced"
        } else {
            "parted"
        };
        let mut body = format!(
            "{STYLE}<h1>{} on real Redis</h1>\n<p class='verdict {class}'>{}</p>\n\
             <p class='note'>On {}; <code>{}</code> runs it again.</p>\n\
             <h2>On real time</h2>\n{}<h2>The model's run</h2>\n{}",
            escape(self.name),
            escape(self.verdict),
            escape(self.servers),
            escape(self.command),
            self.chart(),
            self.timeline.to_fragment()
        );
        self.write_rows(&mut body);
        self.write_beliefs(&mut body);
        page(&format!("{} on real Redis", self.name), &body)
    }

    /// The real run drawn on real time: a lane per client with the time it believed it held
    /// the lock, the overlap of two beliefs in red, and a lane with each executed step where
    /// the replay ran it (red where reality parted from the model).
    fn chart(&self) -> String {
        let clients = self.beliefs.iter().map(|b| b.client + 1).max().unwrap_or(0);
        let end_s = (self.rows.iter().map(|r| r.at_s))
            .chain(self.beliefs.iter().map(|b| b.until_ms as f64 / 1_000.0))
            .fold(0.1_f64, f64::max);
        let axis = Axis { end_s, clients };
        let height = axis.height();
        let mut svg = format!(
            "<svg class='real-run' width='{WIDTH}' height='{height}' viewBox='0 0 {WIDTH} {height}' \
             xmlns='http://www.w3.org/2000/svg' font-family='system-ui,sans-serif' font-size='11'>\n"
        );
        let lanes = (1..=clients)
            .map(|c| format!("c{c}"))
            .chain(["steps".to_owned()]);
        for (lane, label) in lanes.enumerate() {
            let y = LANE * lane as f64;
            let fill = if lane % 2 == 0 { "#fafafa" } else { "#fff" };
            let _ = writeln!(
                svg,
                "<rect x='0' y='{y}' width='{WIDTH}' height='{LANE}' fill='{fill}'/><text x='6' y='{:.1}'>{label}</text>",
                y + LANE / 2.0 + 4.0
            );
        }
        self.draw_beliefs(&mut svg, &axis);
        self.draw_steps(&mut svg, &axis);
        for tenth in 0..=((end_s * 10.0) as u32) {
            let s = f64::from(tenth) / 10.0;
            let _ = writeln!(
                svg,
                "<text x='{:.1}' y='{:.1}' text-anchor='middle' style='fill:#777'>{s:.1} s</text>",
                axis.x(s),
                height - 6.0
            );
        }
        svg.push_str("</svg>\n");
        svg
    }

    /// The first overlap as a red band, and each client's belief as a bar in its lane over it.
    fn draw_beliefs(&self, svg: &mut String, axis: &Axis) {
        if let Some((_, _, from, until)) = overlap(self.beliefs) {
            let (from, until) = (from as f64 / 1e3, until as f64 / 1e3);
            let _ = writeln!(
                svg,
                "<rect class='overlap' x='{:.1}' y='2' width='{:.1}' height='{:.1}' fill='#d7263d' \
                 fill-opacity='.25' stroke='#d7263d'><title>both believed from {from:.3} s to {until:.3} s</title></rect>",
                axis.x(from),
                (axis.x(until) - axis.x(from)).max(2.0),
                LANE * axis.clients as f64 - 4.0
            );
        }
        for belief in self.beliefs {
            let (from, until) = (belief.from_ms as f64 / 1e3, belief.until_ms as f64 / 1e3);
            let _ = writeln!(
                svg,
                "<rect class='belief' x='{:.1}' y='{:.1}' width='{:.1}' height='{:.1}' fill='#3b6fb6'>\
                 <title>c{c} believed it held the lock from {from:.3} s to {until:.3} s</title></rect>\
                 <text x='{:.1}' y='{:.1}' style='fill:#fff' font-weight='600'>c{c} believes</text>",
                axis.x(from),
                LANE * belief.client as f64 + 8.0,
                (axis.x(until) - axis.x(from)).max(1.0),
                LANE - 16.0,
                axis.x(from) + 4.0,
                LANE * belief.client as f64 + LANE / 2.0 + 4.0,
                c = belief.client + 1
            );
        }
    }

    /// A dot per executed step, where the replay ran it, numbered as in the model's picture.
    fn draw_steps(&self, svg: &mut String, axis: &Axis) {
        let y = LANE * axis.clients as f64 + LANE / 2.0;
        for row in self.rows {
            let colour = if row.real.is_ok() { "#555" } else { "#d7263d" };
            let _ = writeln!(
                svg,
                "<circle class='step' cx='{:.1}' cy='{y:.1}' r='4' fill='{colour}'><title>{}: {} {} at {:.3} s</title></circle>",
                axis.x(row.at_s),
                self.timeline.step_number(row.step),
                escape(&row.actor),
                escape(&row.action),
                row.at_s
            );
        }
    }

    /// Each executed line: the model's step (linked to the picture) and what reality did.
    fn write_rows(&self, body: &mut String) {
        body.push_str(
            "<h2>On the real masters</h2>\n<table class='real'>\n<tr><th>step</th><th>t</th>\
             <th>who</th><th>in the model</th><th>real time</th><th>on the real masters</th></tr>\n",
        );
        for row in self.rows {
            let number = self.timeline.step_number(row.step);
            let (class, real) = match &row.real {
                Ok(told) => ("", escape(told)),
                Err(why) => (" class='parted'", format!("✗ {}", escape(why))),
            };
            let _ = writeln!(
                body,
                "<tr{class}><td><a href='#{}-{number}'>{number}</a></td><td>{}</td><td>{}</td>\
                 <td>{}</td><td class='at'>{:.3} s</td><td>{real}</td></tr>",
                escape(&self.timeline.anchor),
                row.t,
                escape(&row.actor),
                escape(&row.action),
                row.at_s
            );
        }
        body.push_str("</table>\n");
    }

    /// When each client believed it held the lock, on real time.
    fn write_beliefs(&self, body: &mut String) {
        body.push_str("<h2>Beliefs on real time</h2>\n<ul>\n");
        if self.beliefs.is_empty() {
            body.push_str("<li>no client believed it held the lock</li>\n");
        }
        for belief in self.beliefs {
            let _ = writeln!(
                body,
                "<li>c{} believed it held the lock from {:.3} s to {:.3} s</li>",
                belief.client + 1,
                belief.from_ms as f64 / 1_000.0,
                belief.until_ms as f64 / 1_000.0
            );
        }
        body.push_str("</ul>\n");
    }
}
