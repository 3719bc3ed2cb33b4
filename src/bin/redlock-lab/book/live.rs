//! A page's "On real Redis" section: the command that replays its counterexample to mutual
//! exclusion on real `redis-server` masters (or why the replay cannot execute it yet), and
//! under `book --replay` that replay, run while the book is written and kept beside the page.

use std::path::Path;

use anyhow::{Context, Result};
use redlock_lab::scenario::{Verdict, property};

use super::chapter::Chapter;
use super::html::escape;
use super::page::Section;
use crate::Outcome;
use crate::replay::{self, Format, Request};

/// One model tick on the real masters: the replay's own default.
const TICK_MS: u64 = 200;

/// The section for `chapter` (opened as `opened_as`). With `record`, the replay runs now and
/// its page is written to `NAME-replay.html` in that folder.
pub(super) fn section(
    chapter: &Chapter,
    opened_as: &str,
    record: Option<&Path>,
) -> Result<Section> {
    let scenario = &chapter.scenario;
    let violated = (chapter.report.property(property::MUTUAL_EXCLUSION))
        .is_some_and(|p| p.verdict == Verdict::Violated);
    if !violated {
        return Ok(Section::default());
    }
    let command = format!("redlock-lab replay {opened_as} --format html");
    let request = Request {
        patched: false,
        wanted: property::MUTUAL_EXCLUSION,
        format: Format::Html,
        tick_ms: TICK_MS,
        command: command.clone(),
    };
    let head = "<h2 id='real-redis'>On real Redis</h2>\n";
    let prepared = match replay::prepare(scenario, &chapter.text, &chapter.report, request) {
        Ok(Some(prepared)) => prepared,
        Ok(None) => return Ok(Section::default()),
        Err(why) => {
            let html = format!(
                "{head}<p class='note'>Not replayed on real masters: {}.</p>\n",
                escape(&format!("{why:#}"))
            );
            return Ok(Section {
                html,
                replayable: false,
            });
        }
    };
    let Some(folder) = record else {
        let html = format!(
            "{head}<p><code>{} &gt; {}-replay.html</code> runs this counterexample on real \
             <code>redis-server</code> masters started on loopback, one tick being {TICK_MS} ms, \
             and draws what they did beside the model's run (<code>book --replay</code> records it here).</p>\n",
            escape(&command),
            escape(&scenario.name)
        );
        return Ok(Section {
            html,
            replayable: true,
        });
    };
    let replayed = prepared.execute()?;
    let file = format!("{}-replay.html", scenario.name);
    let path = folder.join(&file);
    std::fs::write(&path, &replayed.page)
        .with_context(|| format!("cannot write {}", path.display()))?;
    let class = if replayed.outcome == Outcome::Success {
        "holds"
    } else {
        "violated"
    };
    let html = format!(
        "{head}<p>Recorded on real <code>redis-server</code> masters while this book was written \
         (one tick = {TICK_MS} ms): <span class='{class}'>{}</span>. \
         <a href='{}'>The replay, step by step</a>; <code>{}</code> runs it again.</p>\n",
        escape(&replayed.verdict),
        escape(&file),
        escape(&command)
    );
    Ok(Section {
        html,
        replayable: true,
    })
}
