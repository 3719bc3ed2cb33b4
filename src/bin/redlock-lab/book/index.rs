//! The book's index: every page written, grouped by the debate's arguments.

use std::fmt::Write;

use super::argument::Argument;
use super::html::{escape, page, verdict};

/// What the index says of one page.
pub(super) struct Entry {
    /// The scenario's name, its page's name.
    pub name: String,
    /// Its title.
    pub title: String,
    /// Whose claim.
    pub source: String,
    /// The claim.
    pub claim: String,
    /// Where it sits.
    pub argument: Argument,
    /// Each property's verdict, as the checker found it.
    pub verdicts: Vec<(String, String)>,
}

/// The index page of `entries`, in their order within each argument, and of the region pages
/// (`(name, title)`).
pub(super) fn render(entries: &[Entry], regions: &[(&str, &str)], seconds: f64) -> String {
    let mut body = String::from(
        "<h1>Redlock, claim by claim</h1>\n<p>Each page is one claim of the Redlock debate, settled by exhaustive model checking: \
         the claim and its source's words, the checker's verdict, the counterexample as a timeline, \
         what the violation needs, and the mitigation re-checked. Every verdict here comes from running the checker.</p>\n<ul>\n",
    );
    let present: Vec<Argument> = Argument::ALL
        .into_iter()
        .filter(|a| entries.iter().any(|e| e.argument == *a))
        .collect();
    for argument in &present {
        let count = entries.iter().filter(|e| e.argument == *argument).count();
        let _ = writeln!(
            body,
            "<li><a href='#{}'>{}</a> ({count})</li>",
            argument.anchor(),
            escape(argument.heading())
        );
    }
    if !regions.is_empty() {
        body.push_str("<li><a href='#regions'>The safe region, drawn</a></li>\n");
    }
    body.push_str("</ul>\n");
    for argument in present {
        let _ = write!(
            body,
            "<h2 id='{}'>{}</h2>\n<p class='note'>{}</p>\n<ul class='scenarios'>\n",
            argument.anchor(),
            escape(argument.heading()),
            escape(argument.summary())
        );
        for entry in entries.iter().filter(|e| e.argument == argument) {
            entry_item(&mut body, entry);
        }
        body.push_str("</ul>\n");
    }
    if !regions.is_empty() {
        body.push_str(
            "<h2 id='regions'>The safe region, drawn</h2>\n<p class='note'>Where a property holds for every value of a family's keys at once, \
             as the parameter synthesis proves it, plotted over two keys with the others adjustable.</p>\n<ul class='scenarios'>\n",
        );
        for (name, title) in regions {
            let _ = writeln!(body, "<li><a href='{name}.html'>{}</a></li>", escape(title));
        }
        body.push_str("</ul>\n");
    }
    let _ = writeln!(
        body,
        "<p class='note'>Written by <code>redlock-lab book</code>: {} pages in {seconds:.0} s.</p>",
        entries.len()
    );
    page("Redlock, claim by claim", &body)
}

/// One scenario's line: its title as a link, whose claim, the verdicts, the claim.
fn entry_item(body: &mut String, entry: &Entry) {
    let verdicts: Vec<String> = entry
        .verdicts
        .iter()
        .map(|(name, v)| format!("{}: {}", escape(name), verdict(v)))
        .collect();
    let _ = writeln!(
        body,
        "<li id='{0}'><a href='{0}.html'>{1}</a> <span class='who'>{0} · {2}</span><br>{3}<br><span class='claim'>{4}</span></li>",
        escape(&entry.name),
        escape(&entry.title),
        escape(&entry.source),
        verdicts.join(", "),
        escape(&entry.claim)
    );
}
