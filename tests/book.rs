//! `redlock-lab book`: the whole catalog written as a site (a page per scenario, every page
//! self-contained, the index grouped by argument), `trace --format html` on every catalog
//! scenario, and pages opened in headless Chromium: lanes, key bars, the red overlap and the
//! break where the checker's events put them, both runs of a boundary pair on one axis,
//! nothing wider than a 1 280-pixel window, screenshots saved.
//!
//! The browser is `$CHROMIUM`, else the first of `chromium`, `chromium-browser`,
//! `google-chrome` on `PATH`; without one the browser test fails under CI (`CI=true`, which
//! `scripts/test` sets after installing Debian's `chromium`) and elsewhere passes with a
//! SKIPPED line on stderr that `cargo test` shows.
//!
//! `UPDATE_SCREENSHOTS=1 cargo test --test book` rewrites the pictures under `docs/`: the
//! README's timeline of Kleppmann's clock jump (`docs/clock-jump.svg`, which this test
//! otherwise holds equal to what `trace --format timeline-svg` prints now) and the
//! screenshots of the book (`docs/screenshots/`).

mod common;

use std::path::{Path, PathBuf};

use std::sync::OnceLock;
use std::time::Instant;

use redlock_lab::catalog::{self, CATALOG};
use redlock_lab::check::{self, Check};
use redlock_lab::event::Event;
use redlock_lab::scenario::{Scenario, Verdict};
use serde_json::Value;

use common::browser::{browser_for, chromium, screenshot};
use common::{redlock_lab, scratch_dir, text};

/// The scenario the README opens with.
const CLOCK_JUMP: &str = "node-clock-jump-forward-past-drift";
/// The window the pages must fit.
const WINDOW: f64 = 1280.0;

fn updating() -> bool {
    std::env::var_os("UPDATE_SCREENSHOTS").is_some()
}

/// The whole catalog as a book, written once for every test here.
fn book() -> &'static Path {
    static BOOK: OnceLock<PathBuf> = OnceLock::new();
    BOOK.get_or_init(|| {
        let dir = scratch_dir("book");
        let start = Instant::now();
        // Two pages at a time: every test that opens a browser asks for the book first, so no
        // browser runs beside the build (one starved of the cores runs past its timeout).
        let out = redlock_lab(&["book", "--out", dir.to_str().unwrap(), "--jobs", "2"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let index = dir.join("index.html");
        assert_eq!(text(&out.stdout).trim(), index.to_str().unwrap());
        eprintln!(
            "the whole catalog's book took {:.1} s",
            start.elapsed().as_secs_f64()
        );
        dir
    })
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn scenario(name: &str) -> Scenario {
    let file = catalog::find(name).expect("in the catalog");
    Scenario::from_str(file.file, file.text).expect("valid")
}

#[test]
fn the_book_has_a_page_for_every_catalog_scenario_and_an_index_by_argument() {
    let dir = book();
    let index = read(&dir.join("index.html"));
    for heading in [
        "Clocks: jumps",
        "Crashes, restarts",
        "Pauses, delays and fencing",
    ] {
        assert!(index.contains(heading), "{heading}");
    }
    for embedded in CATALOG {
        let scenario = Scenario::from_str(embedded.file, embedded.text).expect("valid");
        let name = &scenario.name;
        assert!(
            index.contains(&format!("<a href='{name}.html'>")),
            "{name} in the index"
        );
        let page = read(&dir.join(format!("{name}.html")));
        assert!(page.starts_with("<!DOCTYPE html>"), "{name}");
        assert!(page.trim_end().ends_with("</html>"), "{name}");
        // Self-contained: nothing is loaded, and the only addresses are the SVG namespace
        // and the Explorer's on the loopback interface.
        assert!(!page.contains(" src="), "{name}: nothing loaded");
        let urls = page.matches("http").count();
        let allowed = page.matches("http://www.w3.org/2000/svg").count()
            + page.matches("http://127.0.0.1:3000/#/steps/").count();
        assert_eq!(urls, allowed, "{name}: an address that is neither");
        // The file itself, the claim, and the checker's verdict for every property.
        assert!(page.contains("<h2 id='file'>"), "{name}");
        let claim = scenario
            .claim
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('\'', "&#39;")
            .replace('"', "&quot;");
        assert!(page.contains(&claim), "{name}: the claim");
        let violated_safety = embedded_violates_safety(&page);
        if violated_safety {
            assert!(page.contains("<li id='step-1'"), "{name}: step anchors");
            assert!(page.contains("explore ↗"), "{name}: links to the Explorer");
        }
        if scenario.mitigation.is_some() {
            assert!(page.contains("<h2 id='mitigation'>"), "{name}");
        }
    }
}

/// Whether a page draws a counterexample.
fn embedded_violates_safety(page: &str) -> bool {
    page.contains("<section class='tl'>")
}

/// A page's verdicts are the checker's, not the file's: a scenario whose property holds
/// says so, with the states the checker counted.
#[test]
fn a_page_shows_the_checkers_verdicts_and_the_patched_run_on_one_axis() {
    let dir = book();
    let scenario = scenario(CLOCK_JUMP);
    let report = Check::new(&scenario).run();
    let page = read(&dir.join(format!("{CLOCK_JUMP}.html")));
    for p in &report.properties {
        let row = format!(
            "<tr><td>{}</td><td><span class='{v}'>{v}</span></td>",
            p.name,
            v = p.verdict
        );
        assert!(page.contains(&row), "{row}");
    }
    assert!(page.contains(&format!(
        "explored {} reachable states",
        report.unique_states
    )));
    // The patch, its re-check, and the schedule replayed under it.
    assert!(
        page.contains("<span class='diff'>1 → 2</span>"),
        "the patch"
    );
    assert!(page.contains("mutual exclusion: <span class='holds'>holds</span>"));
    assert!(page.contains("the same 11 steps under the patch: mutual exclusion does not break"));
    assert!(page.contains("<li id='patched-step-11'"));
    // The command that runs the counterexample on real masters.
    assert!(page.contains(&format!(
        "<h2 id='real-redis'>On real Redis</h2>\n<p><code>redlock-lab replay {CLOCK_JUMP} --format html &gt; {CLOCK_JUMP}-replay.html</code>"
    )));
    // The run that holds on its scenario's own page: no counterexample, nothing to replay.
    let holds = read(&dir.join("node-clock-jump-forward-by-drift.html"));
    assert!(!embedded_violates_safety(&holds));
    assert!(holds.contains("<span class='holds'>holds</span>"));
    assert!(!holds.contains("id='real-redis'"));
    // The replay refuses a counterexample too long for real time, and the page says why.
    let long = read(&dir.join("default-config-clock-error-past.html"));
    assert!(
        long.contains("Not replayed on real masters: default-config-clock-error-past: the counterexample lasts 9947 ticks"),
        "the page says why it is not replayed"
    );
}

/// Every catalog scenario through `trace --format html`: a page when the checker finds a
/// safety counterexample, else exit 1 saying there is none (never a panic or a bad page).
#[test]
fn trace_renders_every_catalog_scenario_as_html() {
    // Two at a time: this test runs longest, and the binary's other tests end before it.
    let pages = common::on_two_threads(CATALOG, |embedded| {
        let scenario = Scenario::from_str(embedded.file, embedded.text).expect("valid");
        let out = redlock_lab(&["trace", &scenario.name, "--format", "html"]);
        match out.status.code() {
            Some(0) => {
                let html = text(&out.stdout);
                assert!(html.starts_with("<!DOCTYPE html>"), "{}", scenario.name);
                assert!(html.contains("<li id='step-1'"), "{}", scenario.name);
                true
            }
            Some(1) => {
                assert!(
                    text(&out.stderr).contains("so there is no counterexample to trace"),
                    "{}: {}",
                    scenario.name,
                    text(&out.stderr)
                );
                false
            }
            other => panic!("{}: exit {other:?}: {}", scenario.name, text(&out.stderr)),
        }
    });
    let pages = pages.into_iter().filter(|page| *page).count();
    assert!(pages >= 30, "only {pages} pages");
}

/// The README's first picture is the clock jump's timeline as `trace` draws it now.
#[test]
fn the_readme_picture_is_the_clock_jump_timeline_now() {
    let out = redlock_lab(&["trace", CLOCK_JUMP, "--format", "timeline-svg"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/clock-jump.svg");
    if updating() {
        std::fs::write(&path, &out.stdout).expect("write docs/clock-jump.svg");
    }
    assert!(
        read(&path) == text(&out.stdout),
        "docs/clock-jump.svg is not what `trace --format timeline-svg` draws now; \
         regenerate it with UPDATE_SCREENSHOTS=1 cargo test --test book"
    );
    let readme = read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"));
    let first_picture = readme.find("![").expect("a picture in the README");
    assert!(
        readme[first_picture..].starts_with("![Kleppmann's clock jump"),
        "the README's first picture is the clock jump"
    );
    assert!(readme[first_picture..].contains("(docs/clock-jump.svg)"));
}

#[test]
fn book_refuses_bad_input_cleanly() {
    let dir = scratch_dir("book-bad");
    let out = redlock_lab(&["book", "--out", dir.to_str().unwrap(), "no-such-scenario"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("no-such-scenario"),
        "{}",
        text(&out.stderr)
    );
    let file = dir.join("a-file");
    std::fs::write(&file, "").unwrap();
    let out = redlock_lab(&["book", "--out", file.to_str().unwrap(), CLOCK_JUMP]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("cannot create"),
        "{}",
        text(&out.stderr)
    );
    assert!(!text(&out.stderr).contains("panicked"));
}

/// A page without what differs from run to run: seconds, and the depth a depth-first search
/// on several threads reached.
fn without_timings(page: &str) -> String {
    let mut out = String::with_capacity(page.len());
    let mut words = page.split(' ').peekable();
    while let Some(word) = words.next() {
        let next = words.peek().copied().unwrap_or("");
        let seconds = word.parse::<f64>().is_ok() && next.starts_with('s');
        let depth = word == "(depth";
        if seconds || depth {
            out.push_str("… ");
            if depth {
                words.next();
            }
            continue;
        }
        out.push_str(word);
        out.push(' ');
    }
    out
}

/// Pages built at once are handed on in the arguments' order, and are the pages built one
/// at a time.
#[test]
fn pages_do_not_depend_on_how_many_are_built_at_once() {
    let names = [
        CLOCK_JUMP,
        "redlock-fault-free",
        "single-node-crash-no-persistence",
        "crash-delayed-restart-ttl-minus-drift",
    ];
    let book = |jobs: &str| {
        let dir = scratch_dir(&format!("book-jobs-{jobs}"));
        let mut args = vec!["book", "--out", dir.to_str().unwrap(), "--jobs", jobs];
        args.extend(names);
        let out = redlock_lab(&args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let progress: Vec<String> = (text(&out.stderr).lines())
            .filter_map(|l| Some(l.strip_prefix('[')?.split(']').next()?.to_owned()))
            .collect();
        assert_eq!(progress, ["1/4", "2/4", "3/4", "4/4"], "jobs {jobs}");
        dir
    };
    let (one, three) = (book("1"), book("3"));
    for name in names
        .iter()
        .map(|n| format!("{n}.html"))
        .chain(["index.html".into()])
    {
        let (a, b) = (read(&one.join(&name)), read(&three.join(&name)));
        assert_eq!(without_timings(&a), without_timings(&b), "{name}");
    }
}

/// Appended to a copy of a page: measures, after layout, where each mark of each timeline
/// is on the screen, and writes it as JSON into the DOM for `--dump-dom` to print.
const MEASURE: &str = "<script>(function(){\
function box(e){var r=e.getBoundingClientRect();return [r.left,r.top,r.right,r.bottom];}\
var out={width:window.innerWidth,scroll:document.documentElement.scrollWidth,figures:[]};\
document.querySelectorAll('section.tl').forEach(function(sec){\
var f={svg:box(sec.querySelector('svg')),lanes:{},grid:{},keys:[],bars:[],overlaps:[],broken:null};\
sec.querySelectorAll('g.lane').forEach(function(g){f.lanes[g.getAttribute('data-actor')]=box(g.querySelector('rect'));});\
sec.querySelectorAll('line.grid').forEach(function(l){f.grid[l.getAttribute('data-t')]=box(l)[0];});\
sec.querySelectorAll('rect.key').forEach(function(r){f.keys.push({lane:r.getAttribute('data-lane'),owner:r.getAttribute('data-owner'),from:+r.getAttribute('data-from'),box:box(r)});});\
sec.querySelectorAll('rect.lease').forEach(function(r){f.bars.push({lane:r.getAttribute('data-lane'),box:box(r)});});\
sec.querySelectorAll('rect.overlap').forEach(function(r){f.overlaps.push({clients:r.getAttribute('data-clients'),box:box(r)});});\
var b=sec.querySelector('g.broken');if(b){f.broken={t:+b.getAttribute('data-t'),x:box(b.querySelector('line'))[0]};}\
out.figures.push(f);});\
var pre=document.createElement('pre');pre.id='measured';pre.textContent=JSON.stringify(out);document.body.appendChild(pre);\
})();</script>";

/// Opens a copy of `page` with the measuring script at 1 280 × 900 and returns what it
/// measured.
fn measure(binary: &Path, page: &Path, scratch: &Path) -> Value {
    run_script(binary, page, scratch, MEASURE)
}

/// Opens a copy of `page` with `script` appended at 1 280 × 900 and returns the JSON the
/// script left in `<pre id="measured">`.
fn run_script(binary: &Path, page: &Path, scratch: &Path, script: &str) -> Value {
    let html = read(page).replace("</body>", &format!("{script}</body>"));
    let copy = scratch.join(page.file_name().expect("a file"));
    std::fs::write(&copy, html).expect("write the copy");
    let out = chromium(
        binary,
        &scratch.join("profile-dom"),
        &["--window-size=1280,900", "--dump-dom"],
        &format!("file://{}", copy.display()),
    );
    let dom = text(&out.stdout);
    let json = dom
        .split("<pre id=\"measured\">")
        .nth(1)
        .and_then(|rest| rest.split("</pre>").next())
        .unwrap_or_else(|| panic!("the page did not run its measuring script: {dom}"))
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"))
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("a number: {v}"))
}

/// The screen x of tick `t` in a figure, and how far right of it an event of that tick may
/// be drawn: 30 % of the tick, and a pixel of rounding. The axis is linear between two
/// grid lines (a cut axis has one at every instant something happens), so the x is read off
/// the two lines around the tick.
fn tick_x(figure: &Value, t: u32) -> (f64, f64) {
    let mut grid: Vec<(f64, f64)> = figure["grid"]
        .as_object()
        .expect("grid")
        .iter()
        .map(|(t, x)| (t.parse().expect("a tick"), num(x)))
        .collect();
    grid.sort_by(|a, b| a.0.total_cmp(&b.0));
    let t = f64::from(t);
    let after = grid
        .partition_point(|&(g, _)| g <= t)
        .clamp(1, grid.len() - 1);
    let ((t0, x0), (t1, x1)) = (grid[after - 1], grid[after]);
    let width = (x1 - x0) / (t1 - t0);
    (x0 + (t - t0) * width, width * 0.3 + 1.0)
}

/// Every belief, key and overlap of a figure is visible: at least a few pixels wide, inside
/// the window.
fn check_visible(name: &str, figure: &Value) {
    for kind in ["bars", "keys", "overlaps"] {
        for bar in figure[kind].as_array().expect(kind) {
            let b = &bar["box"];
            let (left, right) = (num(&b[0]), num(&b[2]));
            assert!(
                right - left >= 2.5 && left >= 0.0 && right <= WINDOW,
                "{name}: a {kind} entry is not visible: {bar}"
            );
        }
    }
}

/// Checks one counterexample's figure against the checker's events: lanes in the story's
/// order, each key bar starting in its `SET`'s tick, the break line in its tick, the red
/// overlap across both clients' lanes and through the break.
fn check_figure(name: &str, figure: &Value) {
    let scenario = scenario(name);
    let report = Check::new(&scenario).run();
    // A zone-engine report carries no story, so its first counterexample is the one drawn.
    let property = check::default_property(&report)
        .or_else(|| {
            let p = report.properties.iter();
            p.filter(|p| p.counterexample.is_some())
                .map(|p| p.name.as_str())
                .next()
        })
        .expect("a violated property");
    let told = check::story_path(&scenario, &report, property).expect("a counterexample");
    let lane = |actor: &str| -> [f64; 4] {
        let b = &figure["lanes"][actor];
        [num(&b[0]), num(&b[1]), num(&b[2]), num(&b[3])]
    };
    // Lanes top to bottom in the story's order, each as wide as the picture.
    let tops: Vec<f64> = told.story.lanes.iter().map(|a| lane(a)[1]).collect();
    assert!(
        tops.windows(2).all(|w| w[0] < w[1]),
        "{name}: lanes {tops:?}"
    );
    let keys = figure["keys"].as_array().expect("keys");
    for line in &told.story.lines {
        if let Event::KeySet { client, node, .. } = &line.event {
            let (x, width) = tick_x(figure, line.t);
            let (node, client) = (node.to_string(), client.to_string());
            let [_, top, _, bottom] = lane(&node);
            let found = keys.iter().any(|k| {
                let b = &k["box"];
                k["lane"] == node.as_str()
                    && k["owner"] == client.as_str()
                    && (x - 1.0..=x + width).contains(&num(&b[0]))
                    && num(&b[1]) >= top - 0.5
                    && num(&b[3]) <= bottom + 0.5
            });
            assert!(
                found,
                "{name}: no bar of {client}'s key on {node} from t={}",
                line.t
            );
        }
    }
    let broken = told
        .story
        .lines
        .iter()
        .find(|l| l.breaks.is_some())
        .expect("a break");
    let (x, width) = tick_x(figure, broken.t);
    let break_x = num(&figure["broken"]["x"]);
    assert!(
        (x - 1.0..=x + width).contains(&break_x),
        "{name}: the break at {break_x}"
    );
    if property == "mutual exclusion" {
        let overlap = &figure["overlaps"][0];
        let clients: Vec<&str> = overlap["clients"]
            .as_str()
            .expect("clients")
            .split(' ')
            .collect();
        let b = &overlap["box"];
        // From the first client's bar down to the second's: it starts in the one's lane and
        // ends in the other's.
        let within =
            |y: f64, [_, top, _, bottom]: [f64; 4]| (top - 1.0..=bottom + 1.0).contains(&y);
        assert!(within(num(&b[1]), lane(clients[0])), "{name}: overlap top");
        assert!(
            within(num(&b[3]), lane(clients[1])),
            "{name}: overlap bottom"
        );
        assert!(
            num(&b[0]) <= break_x + 1.0 && break_x <= num(&b[2]) + 1.0,
            "{name}: overlap"
        );
    }
}

#[test]
fn pages_render_in_chromium_where_the_events_put_them() {
    let Some(binary) = browser_for("pages_render_in_chromium_where_the_events_put_them") else {
        return;
    };
    let dir = book();
    let scratch = scratch_dir("book-browser");
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("book-screenshots");
    std::fs::create_dir_all(&shots).expect("a screenshot folder");
    for name in [
        CLOCK_JUMP,
        "crash-delayed-restart-clock-jump",
        "gc-pause-after-acquisition",
        "default-config-clock-error-past",
    ] {
        let measured = measure(&binary, &dir.join(format!("{name}.html")), &scratch);
        // Nothing overflows a 1 280-pixel window.
        assert_eq!(num(&measured["width"]), WINDOW, "{name}");
        assert!(
            num(&measured["scroll"]) <= WINDOW,
            "{name}: the page scrolls sideways"
        );
        let figures = measured["figures"].as_array().expect("figures");
        for figure in figures {
            assert!(
                num(&figure["svg"][2]) <= WINDOW,
                "{name}: a picture overflows"
            );
        }
        check_figure(name, &figures[0]);
        for figure in figures {
            check_visible(name, figure);
        }
        // The violated run and its patched replay share one axis.
        if let Some(patched) = figures.get(1) {
            assert_eq!(
                figure_ticks(&figures[0]),
                figure_ticks(patched),
                "{name}: one axis"
            );
        }
        if name == CLOCK_JUMP {
            let overlaps = figures[1]["overlaps"].as_array().expect("overlaps");
            assert!(overlaps.is_empty(), "the patch removes the overlap");
        }
        screenshot(
            &binary,
            &scratch,
            &dir.join(format!("{name}.html")),
            &shots.join(format!("{name}.png")),
            900,
        );
    }
    let index = measure(&binary, &dir.join("index.html"), &scratch);
    assert!(
        num(&index["scroll"]) <= WINDOW,
        "the index scrolls sideways"
    );
    screenshot(
        &binary,
        &scratch,
        &dir.join("index.html"),
        &shots.join("index.png"),
        900,
    );
    if updating() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/screenshots");
        std::fs::create_dir_all(&docs).expect("docs/screenshots");
        screenshot(
            &binary,
            &scratch,
            &dir.join("index.html"),
            &docs.join("book-index.png"),
            900,
        );
        screenshot(
            &binary,
            &scratch,
            &dir.join(format!("{CLOCK_JUMP}.html")),
            &docs.join("book-clock-jump.png"),
            2300,
        );
    }
    println!("screenshots in {}", shots.display());
}

/// A figure's grid: tick → screen x.
fn figure_ticks(figure: &Value) -> Vec<(String, i64)> {
    let mut ticks: Vec<(String, i64)> = figure["grid"]
        .as_object()
        .expect("grid")
        .iter()
        .map(|(t, x)| (t.clone(), num(x).round() as i64))
        .collect();
    ticks.sort();
    ticks
}

/// Appended to a copy of a region page: what its script drew, as JSON in the DOM.
const MEASURE_REGION: &str = "<script>(function(){\
var out={cells:{},points:[],scroll:document.documentElement.scrollWidth};\
document.querySelectorAll('rect.cell').forEach(function(r){var c=r.getAttribute('class').split(' ')[1];out.cells[c]=(out.cells[c]||0)+1;});\
document.querySelectorAll('a.point').forEach(function(a){var c=a.querySelector('circle');\
var x=+c.getAttribute('cx'),y=+c.getAttribute('cy'),under='';\
document.querySelectorAll('rect.cell').forEach(function(r){var rx=+r.getAttribute('x'),ry=+r.getAttribute('y');\
if(x>=rx&&x<=rx+(+r.getAttribute('width'))+1&&y>=ry&&y<=ry+(+r.getAttribute('height'))+1){under=r.getAttribute('class').split(' ')[1];}});\
out.points.push({name:a.getAttribute('data-name'),href:a.getAttribute('href'),under:under});});\
var pre=document.createElement('pre');pre.id='measured';pre.textContent=JSON.stringify(out);document.body.appendChild(pre);\
})();</script>";

/// Each region page draws, in Chromium, cells on both sides of its boundary, and its two
/// catalog files as points on the side the checker puts them: a file the checker proves
/// holding sits in a cell the synthesis proves holding, a violated one in a breaking cell.
#[test]
fn region_pages_draw_the_synthesis_with_each_file_on_its_checked_side() {
    let Some(binary) =
        browser_for("region_pages_draw_the_synthesis_with_each_file_on_its_checked_side")
    else {
        return;
    };
    let dir = book();
    let index = read(&dir.join("index.html"));
    let scratch = scratch_dir("book-regions");
    let mut drawn = 0;
    for family in ["region-drift", "region-restart", "region-margin"] {
        assert!(
            index.contains(&format!("<a href='{family}.html'>")),
            "{family} in the index"
        );
        let page = dir.join(format!("{family}.html"));
        let measured = run_script(&binary, &page, &scratch, MEASURE_REGION);
        assert!(
            num(&measured["scroll"]) <= WINDOW,
            "{family} scrolls sideways"
        );
        for side in ["holds", "breaks"] {
            assert!(
                measured["cells"][side].as_u64().unwrap_or(0) > 0,
                "{family}: no cell {side}: {measured}"
            );
        }
        let points = measured["points"].as_array().expect("points");
        assert_eq!(points.len(), 2, "{family}: {measured}");
        for point in points {
            let name = point["name"].as_str().expect("a name");
            assert!(
                dir.join(format!("{name}.html")).exists(),
                "{family}: {name}'s page"
            );
            let report = Check::new(&scenario(name)).run();
            let property = if family == "region-margin" {
                "storage safety"
            } else {
                "mutual exclusion"
            };
            let verdict = report.property(property).expect("judged").verdict;
            let side = if verdict == Verdict::Holds {
                "holds"
            } else {
                "breaks"
            };
            assert_eq!(point["under"], side, "{family}: {name} ({verdict:?})");
            drawn += 1;
        }
    }
    assert_eq!(drawn, 6);
}
