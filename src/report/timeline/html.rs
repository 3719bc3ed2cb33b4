//! A timeline as one self-contained page: the picture, what breaks, and every step's words
//! under it with an anchor (`#step-9`); hovering an event lights up its step and the other
//! events of that step. No network, no framework: a few lines of inline script.

use std::fmt::Write;

use super::facts::Timeline;
use super::svg::escape;

/// The style sheet of a page that shows timelines: [`Timeline::to_html`]'s, and a page that
/// embeds several [`Timeline::to_fragment`]s (the book) puts it in its own `<style>`.
pub const PAGE_STYLE: &str = "body{margin:16px auto;max-width:1220px;padding:0 10px;font-family:system-ui,-apple-system,'Segoe UI',sans-serif;color:#222}\
figure{margin:0}svg.timeline{width:100%;height:auto;display:block}\
.breaks-at{color:#d7263d;font-weight:600}\
ol.steps{font-size:13px;line-height:1.5;padding-left:3.2em}ol.steps li{padding:1px 4px;border-radius:3px}\
ol.steps li.broken{color:#d7263d;font-weight:600}\
ol.steps li:target,ol.steps li.hl{background:#fff3b0}\
a.explore{font-size:11px;margin-left:.6em;color:#1f77b4}";

/// The script of such a page: hovering an event lights up its step's marks and line, within
/// the timeline it belongs to (`section.tl`), so two timelines on one page stay apart.
pub const PAGE_SCRIPT: &str = "function tlHighlight(root,step,on){root.querySelectorAll('[data-step=\"'+step+'\"]').forEach(function(e){e.classList.toggle('hl',on);});}\
document.querySelectorAll('[data-step]').forEach(function(e){var root=e.closest('section.tl')||document;\
e.addEventListener('mouseenter',function(){tlHighlight(root,e.getAttribute('data-step'),true);});\
e.addEventListener('mouseleave',function(){tlHighlight(root,e.getAttribute('data-step'),false);});});";

impl Timeline {
    /// The timeline as one HTML page that opens from disk: the SVG, the instant the property
    /// breaks with what each party believes, and the checker's steps, each with an anchor
    /// `#step-N` that the picture's events link to.
    pub fn to_html(&self) -> String {
        format!(
            "<!DOCTYPE html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n<title>{}</title>\n<style>{PAGE_STYLE}</style>\n</head>\n<body>\n{}<script>{PAGE_SCRIPT}</script>\n</body>\n</html>\n",
            escape(&self.heading()),
            self.to_fragment()
        )
    }

    /// The picture, the instant the property breaks and the list of steps, as one
    /// `<section class='tl'>` for a page of one's own (with [`PAGE_STYLE`] and
    /// [`PAGE_SCRIPT`]); each step's anchor is `#{anchor}-N` ([`Timeline::anchor`]), and a
    /// step with a link in [`Timeline::explore`] links to that state in the Explorer.
    pub fn to_fragment(&self) -> String {
        let mut page = format!(
            "<section class='tl'>\n<figure>\n{}\n</figure>\n",
            self.to_svg()
        );
        if let Some(broken) = &self.facts.broken {
            let _ = writeln!(
                page,
                "<p class='breaks-at'>✗ {} breaks at step <a href='#{}-{step}'>{step}</a>: {}</p>",
                escape(&broken.property),
                escape(&self.anchor),
                escape(&broken.detail),
                step = broken.step
            );
        }
        self.write_steps(&mut page);
        page.push_str("</section>\n");
        page
    }

    /// The list of steps, one item each (a long quiet stretch is one, see `steps.rs`).
    fn write_steps(&self, page: &mut String) {
        page.push_str("<ol class='steps'>\n");
        let broken = self.facts.broken.as_ref().map(|b| b.step);
        for (i, words) in self.steps.iter().enumerate() {
            let step = i + 1;
            let class = if Some(step) == broken {
                " class='broken'"
            } else {
                ""
            };
            // The state after the item's last checker step, in the Explorer.
            let explore = self
                .items
                .last
                .get(i)
                .and_then(|&last| self.explore.get(last - 1))
                .map(|href| {
                    format!(
                        " <a class='explore' href='{}' title='this state in redlock-lab explore'>explore ↗</a>",
                        escape(href)
                    )
                })
                .unwrap_or_default();
            let _ = writeln!(
                page,
                "<li id='{}-{step}' value='{step}' data-step='{step}'{class}>{}{explore}</li>",
                escape(&self.anchor),
                escape(words)
            );
        }
        page.push_str("</ol>\n");
    }
}
