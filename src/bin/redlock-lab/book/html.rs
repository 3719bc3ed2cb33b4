//! The few HTML helpers the book's pages share (and `replay --format html`'s page).

pub(crate) use redlock_lab::report::escape;
use redlock_lab::report::{PAGE_SCRIPT, PAGE_STYLE};

/// The book's own style, after the timeline's.
const BOOK_STYLE: &str = "h1{font-size:24px;margin:8px 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:3px}\
h3{font-size:15px;margin:18px 0 6px}nav.crumbs{font-size:13px}blockquote{margin:8px 0;padding:4px 12px;border-left:3px solid #bbb;color:#444}\
table.verdicts{border-collapse:collapse;font-size:14px}table.verdicts td,table.verdicts th{padding:3px 10px;border-bottom:1px solid #eee;text-align:left}\
.violated{color:#d7263d;font-weight:600}.holds{color:#2a9d4b;font-weight:600}.incomplete{color:#b7791f;font-weight:600}\
.mismatch{color:#d7263d}pre.file{background:#f6f6f6;padding:10px;overflow-x:auto;font-size:12px;max-width:100%}\
.diff{background:#fff3b0;padding:1px 4px;border-radius:3px;font-family:monospace}\
ul.scenarios{list-style:none;padding-left:0}ul.scenarios li{margin:6px 0}.who{color:#666;font-size:13px}\
.claim{color:#444;font-size:14px}.note{color:#555;font-size:13px}";

/// A whole page around `body`: one file, its style and script inline, nothing fetched.
pub(crate) fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n\
         <meta name='viewport' content='width=device-width, initial-scale=1'>\n<title>{}</title>\n\
         <style>{PAGE_STYLE}{BOOK_STYLE}</style>\n</head>\n<body>\n{body}<script>{PAGE_SCRIPT}</script>\n</body>\n</html>\n",
        escape(title)
    )
}

/// A verdict word with its colour class.
pub(super) fn verdict(word: &str) -> String {
    format!("<span class='{word}'>{word}</span>")
}
