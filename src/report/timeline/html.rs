//! A timeline as one self-contained page: the picture, what breaks, and every step's words
//! under it with an anchor (`#step-9`); hovering an event lights up its step and the other
//! events of that step. No network, no framework: a few lines of inline script.

use std::fmt::Write;

use super::facts::Timeline;
use super::svg::escape;

const STYLE: &str = "body{margin:16px auto;max-width:1220px;padding:0 10px;font-family:system-ui,-apple-system,'Segoe UI',sans-serif;color:#222}\
figure{margin:0}svg.timeline{width:100%;height:auto;display:block}\
.breaks-at{color:#d7263d;font-weight:600}\
ol.steps{font-size:13px;line-height:1.5;padding-left:3.2em}ol.steps li{padding:1px 4px;border-radius:3px}\
ol.steps li.broken{color:#d7263d;font-weight:600}\
ol.steps li:target,ol.steps li.hl{background:#fff3b0}";

const SCRIPT: &str = "function tlHighlight(step,on){document.querySelectorAll('[data-step=\"'+step+'\"]').forEach(function(e){e.classList.toggle('hl',on);});}\
document.querySelectorAll('[data-step]').forEach(function(e){\
e.addEventListener('mouseenter',function(){tlHighlight(e.getAttribute('data-step'),true);});\
e.addEventListener('mouseleave',function(){tlHighlight(e.getAttribute('data-step'),false);});});";

impl Timeline {
    /// The timeline as one HTML page that opens from disk: the SVG, the instant the property
    /// breaks with what each party believes, and the checker's steps, each with an anchor
    /// `#step-N` that the picture's events link to.
    pub fn to_html(&self) -> String {
        let mut page = String::new();
        let _ = write!(
            page,
            "<!DOCTYPE html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<figure>\n{}\n</figure>\n",
            escape(&self.heading()),
            self.to_svg()
        );
        if let Some(broken) = &self.facts.broken {
            let _ = writeln!(
                page,
                "<p class='breaks-at'>✗ {} breaks at step <a href='#step-{step}'>{step}</a>: {}</p>",
                escape(&broken.property),
                escape(&broken.detail),
                step = broken.step
            );
        }
        page.push_str("<ol class='steps'>\n");
        let broken = self.facts.broken.as_ref().map(|b| b.step);
        let mut i = 0;
        while i < self.steps.len() {
            let step = i + 1;
            let class = if Some(step) == broken {
                " class='broken'"
            } else {
                ""
            };
            // A long stretch where nothing but time happens (a run in milliseconds) is one
            // item, numbered as its first step, so the list stays a list of what happened.
            let quiet = quiet_run(&self.steps[i..]);
            let words = if quiet >= QUIET_RUN {
                let last = &self.steps[i + quiet - 1];
                let end = last.rsplit("t=").next().unwrap_or_default();
                let first = self.steps[i].split(' ').next().unwrap_or_default();
                format!("{first} time passes to t={end} ({quiet} ticks where nothing happens)")
            } else {
                self.steps[i].clone()
            };
            let _ = writeln!(
                page,
                "<li id='step-{step}' value='{step}' data-step='{step}'{class}>{}</li>",
                escape(&words)
            );
            i += if quiet >= QUIET_RUN { quiet } else { 1 };
        }
        let _ = write!(page, "</ol>\n<script>{SCRIPT}</script>\n</body>\n</html>\n");
        page
    }
}

/// The shortest stretch of quiet ticks the step list folds into one item.
const QUIET_RUN: usize = 20;

/// How many of `steps`, from the first, are ticks where nothing happens.
fn quiet_run(steps: &[String]) -> usize {
    steps
        .iter()
        .take_while(|words| words.contains(" time passes to t=") && !words.contains(':'))
        .count()
}
