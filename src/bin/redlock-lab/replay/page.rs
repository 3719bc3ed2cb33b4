//! `replay --format html`: a replay as one page that opens from disk. The verdict first, then
//! the model's run drawn as the book draws it, then each of its steps beside what the real
//! masters did at that moment (each step links to its place in the picture), and each
//! client's belief on real time.

use std::fmt::Write;

use redlock_lab::report::Timeline;

use super::execute::Belief;
use crate::book::html::{escape, page};

/// The page's own style, after the book's.
const STYLE: &str = "<style>table.real{border-collapse:collapse;font-size:13px;width:100%}\
table.real td,table.real th{padding:2px 8px;border-bottom:1px solid #eee;text-align:left;vertical-align:top}\
table.real td.at{white-space:nowrap;font-family:monospace}table.real tr.parted td{color:#d7263d;font-weight:600}\
p.verdict{font-size:17px;font-weight:600}p.verdict.reproduced{color:#2a9d4b}p.verdict.parted{color:#d7263d}</style>\n";

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
             <h2>The model's run</h2>\n{}",
            escape(self.name),
            escape(self.verdict),
            escape(self.servers),
            escape(self.command),
            self.timeline.to_fragment()
        );
        self.write_rows(&mut body);
        self.write_beliefs(&mut body);
        page(&format!("{} on real Redis", self.name), &body)
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
