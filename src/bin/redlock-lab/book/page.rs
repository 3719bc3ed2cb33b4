//! One scenario's page.

use std::fmt::Write;

use redlock_lab::cause;
use redlock_lab::check::{Engine, Report};
use redlock_lab::plural::count;
use redlock_lab::scenario::{Ingredient, Scenario, Source, Verdict};

use super::argument::Argument;
use super::chapter::Chapter;
use super::html::{escape, page, verdict};
use super::pair::Pair;

/// A page's section on real Redis.
#[derive(Default)]
pub(super) struct Section {
    /// The HTML, empty when mutual exclusion holds.
    pub html: String,
    /// Whether the replay executes the counterexample (`book --replay` then runs it).
    pub replayable: bool,
}

/// The page of `chapter`; `fixes` names the scenarios whose mitigation is this one, `explore`
/// is the command that serves its Explorer, and `live` the section on real Redis (HTML).
pub(super) fn render(chapter: &Chapter, fixes: &[String], explore: &str, live: &str) -> String {
    let scenario = &chapter.scenario;
    let mut body = String::new();
    head(&mut body, scenario, fixes);
    verdicts(&mut body, chapter);
    match &chapter.timeline {
        Some(timeline) => {
            let _ = write!(
                body,
                "<h2 id='timeline'>The counterexample</h2>\n<p class='note'>The checker's run, on true time. \
                 Each step's <em>explore ↗</em> opens the state after it in the Explorer, once <code>{}</code> is running.</p>\n{}",
                escape(explore),
                timeline.to_fragment()
            );
        }
        None => body.push_str(
            "<h2 id='timeline'>The counterexample</h2>\n<p>None: no safety property is violated, so there is no run to draw.</p>\n",
        ),
    }
    causes(&mut body, scenario, &chapter.report);
    if let Some(pair) = &chapter.pair {
        mitigation(&mut body, pair);
    }
    body.push_str(live);
    let _ = write!(
        body,
        "<h2 id='file'>The file</h2>\n<p class='note'><code>{}</code>, as the checker read it.</p>\n<pre class='file'>{}</pre>\n",
        escape(&scenario.file),
        escape(&chapter.text)
    );
    page(&format!("{} — {}", scenario.name, scenario.title), &body)
}

/// The way back, the title, the claim, whose it is and in their words, the prose.
fn head(body: &mut String, scenario: &Scenario, fixes: &[String]) {
    let argument = Argument::of(scenario);
    let _ = write!(
        body,
        "<nav class='crumbs'><a href='index.html'>The book</a> › <a href='index.html#{}'>{}</a></nav>\n\
         <h1>{}</h1>\n<p><code>{}</code></p>\n<p class='claim'><strong>Claim</strong> ({}): {}</p>\n",
        argument.anchor(),
        escape(argument.heading()),
        escape(&scenario.title),
        escape(&scenario.name),
        escape(&scenario.source.to_string()),
        escape(&scenario.claim)
    );
    if let Some(citation) = &scenario.citation {
        let role = if scenario.source == Source::Derived {
            "the statement it builds on"
        } else {
            "in the source's words"
        };
        let _ = writeln!(
            body,
            "<blockquote>“{}” <span class='who'>— {}, {role}</span></blockquote>",
            escape(&citation.quote),
            escape(&citation.source.to_string())
        );
    }
    let _ = writeln!(
        body,
        "<p style='white-space:pre-line'>{}</p>",
        escape(scenario.prose.trim())
    );
    for fixed in fixes {
        let _ = writeln!(
            body,
            "<p class='note'>This scenario is the mitigation of <a href='{0}.html'>{0}</a>: that file with its patch applied.</p>",
            escape(fixed)
        );
    }
}

/// Each property's verdict, compared with `[expect]`, and how much the checker explored.
fn verdicts(body: &mut String, chapter: &Chapter) {
    let report = &chapter.report;
    body.push_str("<h2 id='verdict'>What the checker finds</h2>\n<table class='verdicts'><tr><th>property</th><th>verdict</th><th>the file expects</th></tr>\n");
    for p in &report.properties {
        let expected = match p.expected {
            Some(e) if e == p.verdict => "the same".to_owned(),
            Some(e) => format!("<span class='mismatch'>{e}: a mismatch</span>"),
            None => "—".to_owned(),
        };
        let _ = writeln!(
            body,
            "<tr><td>{}</td><td>{}</td><td>{expected}</td></tr>",
            escape(&p.name),
            verdict(&p.verdict.to_string())
        );
    }
    body.push_str("</table>\n");
    let _ = writeln!(
        body,
        "<p class='note'>{}</p>",
        reach(&chapter.scenario, report, chapter.seconds)
    );
}

/// The configuration's size, what the search covered, and for which sizes each verdict is
/// proved.
fn reach(scenario: &Scenario, report: &Report, seconds: f64) -> String {
    let params = &scenario.lock.params;
    let noun = if report.engine == Engine::Zones {
        "zones"
    } else {
        "states"
    };
    // A span in the file's unit: milliseconds for a file in real units.
    let span = |ticks: u64| match scenario.resolution {
        Some(tick) => format!("{} ms", ticks * tick.as_u64()),
        None => count(ticks, "tick", "ticks"),
    };
    let mut words = format!(
        "{} × {}, TTL {} and drift {}. The {} engine explored {} reachable {noun} \
         (depth {}) in {:.1} s; this page took {seconds:.1} s with every re-check.",
        count(u64::from(params.node_count), "node", "nodes"),
        count(u64::from(scenario.lock.clients), "client", "clients"),
        span(params.ttl.as_u64()),
        span(params.drift.as_u64()),
        report.engine,
        report.unique_states,
        report.max_depth,
        report.seconds
    );
    if report.cutoff {
        words.push_str(" Two clients with phantom refusals stood for all of them (the cutoff).");
    }
    if report.split {
        words.push_str(" The storage properties were checked apart (the split).");
    }
    if let Some(stopped) = &report.stopped {
        let _ = write!(words, " The check stopped early: {stopped}.");
    }
    for p in &report.properties {
        if let Some(sentence) = p.reach_sentence(report.nodes, report.clients) {
            let _ = write!(words, " Proved for sizes: {sentence}.");
        }
    }
    escape(&words)
}

/// For each violated property, the faults and mistakes it needs: each re-checked without it.
fn causes(body: &mut String, scenario: &Scenario, report: &Report) {
    let present = Ingredient::present(scenario);
    let violated: Vec<_> = report
        .properties
        .iter()
        .filter(|p| p.verdict == Verdict::Violated)
        .collect();
    if violated.is_empty() {
        return;
    }
    body.push_str("<h2 id='causes'>What the violation needs</h2>\n<p class='note'>The checker re-ran once without each fault or mistake the file grants (as <code>check --why</code> does); one is needed when the property then holds.</p>\n<ul>\n");
    for p in violated {
        let sentence = match &p.necessary {
            Some(necessary) => cause::sentence(&present, necessary, &p.undetermined),
            None => "not computed".to_owned(),
        };
        let _ = writeln!(
            body,
            "<li><strong>{}</strong>: {}</li>",
            escape(&p.name),
            escape(&sentence)
        );
    }
    body.push_str("</ul>\n");
}

/// The mitigation: what to do, the patch key by key, the checker's re-check, and the
/// violated run's schedule under the patch.
fn mitigation(body: &mut String, pair: &Pair) {
    let _ = writeln!(
        body,
        "<h2 id='mitigation'>The mitigation, re-checked</h2>\n<p>{}.</p>",
        escape(&pair.text)
    );
    if !pair.changes.is_empty() {
        body.push_str(if pair.replay.is_some() {
            "<p>The patch, the one difference between the two runs drawn here:</p>\n<ul>\n"
        } else {
            "<p>The patch:</p>\n<ul>\n"
        });
        for change in &pair.changes {
            let before = change.before.as_deref().unwrap_or("its default");
            let _ = writeln!(
                body,
                "<li><code>{}</code>: <span class='diff'>{} → {}</span></li>",
                escape(&change.key),
                escape(before),
                escape(&change.after)
            );
        }
        body.push_str("</ul>\n");
    }
    if let Some(report) = &pair.report {
        let verdicts: Vec<String> = report
            .properties
            .iter()
            .map(|p| format!("{}: {}", escape(&p.name), verdict(&p.verdict.to_string())))
            .collect();
        let _ = writeln!(
            body,
            "<p>The checker on the patched file ({} {}): {}.</p>",
            report.unique_states,
            if report.engine == Engine::Zones {
                "zones"
            } else {
                "states"
            },
            verdicts.join(", ")
        );
    }
    if let Some(proof) = &pair.proof {
        let _ = writeln!(
            body,
            "<p>The catalog keeps the patched file as <a href='{0}.html'>{0}</a>.</p>",
            escape(proof)
        );
    }
    replay(body, pair);
}

/// The violated run's schedule under the patch, on the counterexample's axis.
fn replay(body: &mut String, pair: &Pair) {
    let Some(replay) = &pair.replay else {
        return;
    };
    body.push_str("<h3 id='patched'>The same schedule under the patch</h3>\n<p class='note'>A property that holds has no counterexample, so there is no second checker run to show. \
        This is the run above replayed step by step by the patched model, on the same axis: the difference between the two pictures is the patch. \
        The verdict above is the checker's, over every run; this picture is one run.</p>\n");
    if let Some(refused) = &replay.refused {
        let _ = writeln!(
            body,
            "<p class='note'>The patched model takes {} of the {} steps; it does not allow {}.</p>",
            replay.steps,
            replay.of,
            escape(refused)
        );
    }
    if replay.breaks {
        body.push_str("<p class='note'>The replayed run still breaks the property: the patch does not change this run.</p>\n");
    }
    body.push_str(&replay.timeline.to_fragment());
}
