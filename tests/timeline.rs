//! The timeline (`trace --format html` and `timeline-svg`): every catalog counterexample
//! drawn, its SVG well-formed XML, one lane per actor, the red overlap exactly where two
//! clients believe at once, every key bar starting and ending at its events' ticks, nothing
//! wider than the picture, every step anchored; the command line; one picture pinned.

mod common;

use expect_test::expect_file;
use redlock_lab::catalog::{self, CATALOG};
use redlock_lab::check::{self, Check, StoryPath};
use redlock_lab::event::Event;
use redlock_lab::model::breaks;
use redlock_lab::property::Property;
use redlock_lab::scenario::{Scenario, Verdict};

use common::{redlock_lab, scratch_dir, text};

/// The picture's width: it must fit a 1 280-pixel window.
const WIDTH: f64 = 1200.0;

/// One element of an XML document: its name and attributes.
#[derive(Debug)]
struct Element {
    name: String,
    attributes: Vec<(String, String)>,
}

impl Element {
    fn get(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn number(&self, name: &str) -> Option<f64> {
        self.get(name).map(|v| v.parse().expect("a number"))
    }

    fn has_class(&self, class: &str) -> bool {
        self.get("class")
            .is_some_and(|c| c.split(' ').any(|word| word == class))
    }
}

/// Character data must not hold `<`, and every `&` must start a known entity.
fn check_text(text: &str) -> Result<(), String> {
    if text.contains('<') {
        return Err(format!("`<` in text: {text:?}"));
    }
    for (at, _) in text.match_indices('&') {
        let rest = &text[at + 1..];
        let end = rest
            .find(';')
            .ok_or_else(|| format!("`&` without `;`: {rest:?}"))?;
        let entity = &rest[..end];
        let known = ["amp", "lt", "gt", "quot", "apos"].contains(&entity)
            || entity
                .strip_prefix('#')
                .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        if !known {
            return Err(format!("unknown entity &{entity};"));
        }
    }
    Ok(())
}

/// A start tag's name and attributes (`body` is what lies between `<` and `>`).
fn start_tag(body: &str) -> Result<Element, String> {
    let body = body.trim_end_matches('/');
    let name_end = body.find(char::is_whitespace).unwrap_or(body.len());
    let name = body[..name_end].to_owned();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return Err(format!("bad element name {name:?}"));
    }
    let mut attributes: Vec<(String, String)> = Vec::new();
    let mut rest = body[name_end..].trim_start();
    while !rest.is_empty() {
        let eq = rest
            .find('=')
            .ok_or_else(|| format!("attribute without value: {rest:?}"))?;
        let key = rest[..eq].trim().to_owned();
        let quote = rest[eq + 1..]
            .chars()
            .next()
            .filter(|q| *q == '\'' || *q == '"');
        let quote = quote.ok_or_else(|| format!("unquoted attribute {key}"))?;
        let value_start = eq + 2;
        let len = rest[value_start..]
            .find(quote)
            .ok_or_else(|| format!("unterminated attribute {key}"))?;
        let value = &rest[value_start..value_start + len];
        check_text(value)?;
        if attributes.iter().any(|(k, _)| *k == key) {
            return Err(format!("attribute {key} twice in <{name}>"));
        }
        attributes.push((key, value.to_owned()));
        rest = rest[value_start + len + 1..].trim_start();
    }
    Ok(Element { name, attributes })
}

/// Parses `xml` as one well-formed element (comments, CDATA and processing instructions
/// are not expected in a timeline and refused), returning its elements in document order.
fn parse_xml(xml: &str) -> Result<Vec<Element>, String> {
    let mut open: Vec<String> = Vec::new();
    let mut elements = Vec::new();
    let mut rest = xml.trim();
    while let Some(at) = rest.find('<') {
        check_text(&rest[..at])?;
        if open.is_empty() && !elements.is_empty() {
            return Err("content after the root element".to_owned());
        }
        let end = at + rest[at..].find('>').ok_or("unterminated tag")?;
        let tag = &rest[at + 1..end];
        if let Some(name) = tag.strip_prefix('/') {
            match open.pop() {
                Some(expected) if expected == name.trim() => {}
                other => return Err(format!("</{name}> closes {other:?}")),
            }
        } else {
            let element = start_tag(tag)?;
            if !tag.ends_with('/') {
                open.push(element.name.clone());
            }
            elements.push(element);
        }
        rest = &rest[end + 1..];
    }
    check_text(rest)?;
    match (open.is_empty(), rest.trim().is_empty(), elements.is_empty()) {
        (true, true, false) => Ok(elements),
        _ => Err(format!("unclosed elements {open:?}")),
    }
}

#[test]
fn the_xml_check_refuses_what_is_not_well_formed() {
    assert!(parse_xml("<svg><g a='1'/><text>a &amp; b</text></svg>").is_ok());
    for bad in [
        "<svg><g></svg>",
        "<svg><g a=1/></svg>",
        "<svg><text>a & b</text></svg>",
        "<svg><g a='1' a='2'/></svg>",
        "<svg></svg><svg></svg>",
    ] {
        assert!(parse_xml(bad).is_err(), "{bad}");
    }
}

/// The SVG inside a page.
fn svg_of(html: &str) -> &str {
    let start = html.find("<svg").expect("an <svg> in the page");
    let end = html.rfind("</svg>").expect("a </svg>") + "</svg>".len();
    &html[start..end]
}

/// Every catalog counterexample of an `always` property, as the checker tells it.
fn counterexamples() -> Vec<(String, StoryPath)> {
    let mut told = Vec::new();
    for embedded in CATALOG {
        let scenario = Scenario::from_str(embedded.file, embedded.text).expect("valid");
        let report = Check::new(&scenario).run();
        for p in &report.properties {
            if p.verdict == Verdict::Violated
                && report.engine == check::Engine::Discrete
                && let Some(one) = check::story_path(&scenario, &report, &p.name)
            {
                told.push((format!("{} ({})", scenario.name, p.name), one));
            }
        }
    }
    told
}

/// Every key bar starts at a `SET` of its owner's key on its node, at that event's tick,
/// and every key that expires ends a bar of its owner on its node at the expiry's tick.
fn check_key_bars(name: &str, told: &StoryPath, elements: &[Element]) {
    let keys: Vec<&Element> = elements.iter().filter(|e| e.has_class("key")).collect();
    let has = |node: &str, owner: &str, end: &str, t: u32| {
        keys.iter().any(|k| {
            k.get("data-lane") == Some(node)
                && k.get("data-owner") == Some(owner)
                && k.get(end) == Some(t.to_string().as_str())
        })
    };
    let mut sets = 0;
    for line in &told.story.lines {
        match &line.event {
            Event::KeySet { client, node, .. } => {
                sets += 1;
                let (node, client) = (node.to_string(), client.to_string());
                assert!(has(&node, &client, "data-from", line.t), "{name}: {line:?}");
            }
            Event::KeyExpired { owner, .. } => {
                let owner = owner.to_string();
                assert!(
                    has(&line.actor, &owner, "data-to", line.t),
                    "{name}: {line:?}"
                );
            }
            // A compare-and-delete a node serves on its own (a late release) ends its
            // client's key there.
            Event::ReleaseServed {
                client,
                compare: true,
                deleted: true,
            } => {
                let owner = client.to_string();
                assert!(
                    has(&line.actor, &owner, "data-to", line.t),
                    "{name}: {line:?}"
                );
            }
            _ => {}
        }
    }
    assert_eq!(keys.len(), sets, "{name}: one bar per key set");
}

/// Nothing is drawn past the picture's right edge.
fn check_width(name: &str, elements: &[Element]) {
    let svg = &elements[0];
    assert_eq!(svg.number("width"), Some(WIDTH), "{name}");
    for e in elements {
        for x in ["x", "x1", "x2", "cx"] {
            if let Some(value) = e.number(x) {
                let right = value + e.number("width").unwrap_or(0.0);
                assert!((0.0..=WIDTH).contains(&right), "{name}: {e:?}");
            }
        }
    }
}

#[test]
fn every_catalog_counterexample_draws_as_a_timeline() {
    let all = counterexamples();
    assert!(all.len() >= 25, "only {} counterexamples", all.len());
    let mut overlaps = 0;
    for (name, told) in &all {
        let html = told.timeline().to_html();
        let elements = parse_xml(svg_of(&html)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(elements[0].name, "svg", "{name}");
        let lanes: Vec<&str> = elements
            .iter()
            .filter(|e| e.has_class("lane"))
            .filter_map(|e| e.get("data-actor"))
            .collect();
        assert_eq!(lanes, told.story.lanes, "{name}: one lane per actor");
        // The red overlap is drawn exactly when two clients believe at once in the run.
        let believed_at_once = told
            .path
            .iter()
            .any(|(w, _)| breaks(Property::MutualExclusion, w));
        let drawn = elements.iter().any(|e| e.has_class("overlap"));
        assert_eq!(drawn, believed_at_once, "{name}: the overlap");
        if told.story.property == "mutual exclusion" {
            assert!(drawn, "{name}: mutual exclusion breaks, so beliefs overlap");
        }
        overlaps += usize::from(drawn);
        check_key_bars(name, told, &elements);
        check_width(name, &elements);
        let broken = told.story.lines.iter().find(|l| l.breaks.is_some());
        let mark = elements.iter().find(|e| e.has_class("broken"));
        assert_eq!(
            mark.and_then(|m| m.get("data-t")),
            broken.map(|l| l.t.to_string()).as_deref(),
            "{name}: the break"
        );
        for step in 1..=told.story.steps {
            assert!(
                html.contains(&format!("<li id='step-{step}'")),
                "{name}: {step}"
            );
        }
    }
    assert!(overlaps >= 15, "only {overlaps} overlaps");
}

#[test]
fn trace_prints_the_timeline_as_a_page_and_as_svg() {
    let name = "node-clock-jump-forward-past-drift";
    let html = redlock_lab(&["trace", name, "--format", "html"]);
    assert_eq!(html.status.code(), Some(0), "{}", text(&html.stderr));
    let html = text(&html.stdout);
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(html.trim_end().ends_with("</html>"));
    // Self-contained: nothing is fetched, the only URL is the SVG namespace.
    let urls = html.matches("http").count();
    assert_eq!(urls, html.matches("http://www.w3.org/2000/svg").count());
    assert!(!html.contains(" src="), "nothing loaded");
    assert!(html.contains("<li id='step-11' value='11' data-step='11' class='broken'>"));
    let svg = redlock_lab(&["trace", name, "--format", "timeline-svg"]);
    assert_eq!(svg.status.code(), Some(0));
    assert_eq!(text(&svg.stdout).trim_end(), svg_of(&html));
    // A file in real units labels its ticks with their milliseconds.
    let dir = scratch_dir("timeline");
    let file = catalog::find(name).expect("in the catalog");
    let in_ms = file
        .text
        .replace("[lock]", "resolution = \"250ms\"\n\n[lock]")
        .replace("aliases = ", "# aliases = ");
    let path = dir.join("in-ms.toml");
    std::fs::write(&path, in_ms).expect("write the file");
    let ms = redlock_lab(&["trace", path.to_str().unwrap(), "--format", "timeline-svg"]);
    assert_eq!(ms.status.code(), Some(0), "{}", text(&ms.stderr));
    assert!(
        text(&ms.stdout).contains(">750 ms<"),
        "{}",
        text(&ms.stdout)
    );
    assert!(
        !svg_of(&html).contains(" ms<"),
        "ticks without units have no milliseconds"
    );
    let holds = redlock_lab(&[
        "trace",
        "node-clock-jump-forward-by-drift",
        "--format",
        "html",
    ]);
    assert_eq!(holds.status.code(), Some(1));
    assert!(holds.stdout.is_empty());
}

/// Kleppmann's clock jump, pinned one element a line (regenerate with `UPDATE_EXPECT=1`).
#[test]
fn the_node_clock_jump_timeline_is_pinned() {
    let file = catalog::find("node-clock-jump-forward-past-drift").expect("in the catalog");
    let scenario = Scenario::from_str(file.file, file.text).expect("valid");
    let report = Check::new(&scenario).run();
    let told = check::story_path(&scenario, &report, "mutual exclusion").expect("violated");
    let svg = told.timeline().to_svg().replace("><", ">\n<");
    expect_file!["data/timeline/node-clock-jump-forward-past-drift.svg"].assert_eq(&svg);
}

/// Each fault is labelled with its role: the checker re-run without it decides.
#[test]
fn faults_say_whether_the_violation_needs_them() {
    let out = redlock_lab(&[
        "trace",
        "crash-delayed-restart-clock-jump",
        "--format",
        "timeline-svg",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let svg = text(&out.stdout);
    for label in ["crash · needed", "clock +1 · needed", "restarting · needed"] {
        assert!(svg.contains(label), "{label} in {svg}");
    }
    // StoryPath that nothing is needed, the same faults say so.
    let file = catalog::find("crash-delayed-restart-clock-jump").expect("in the catalog");
    let scenario = Scenario::from_str(file.file, file.text).expect("valid");
    let report = Check::new(&scenario).run();
    let told = check::story_path(&scenario, &report, "mutual exclusion").expect("violated");
    let svg = told.timeline().with_causes(Vec::new()).to_svg();
    assert!(svg.contains("crash · not needed"), "{svg}");
    assert!(
        !told.timeline().to_svg().contains("needed"),
        "no role before it is known"
    );
}
