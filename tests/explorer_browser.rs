//! The Explorer end to end: `redlock-lab explore` on a free port, its HTTP API probed
//! directly, and the page opened in headless Chromium on a counterexample path, with a
//! screenshot and assertions on what the page shows.
//!
//! The browser is `$CHROMIUM` when set, else the first of `chromium`, `chromium-browser`,
//! `google-chrome` on `PATH`. The browser test fails, never skips, when none can start
//! (`scripts/test` installs Debian's `chromium`). Every process started here is killed on drop, also when an
//! assertion fails: the server, and the browser's whole process group.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

mod common;

const SCENARIO: &str = "node-clock-jump-forward-past-drift";
const INSTALL_HINT: &str = "the browser test needs Chromium: set CHROMIUM=/path/to/chromium, \
     or on Debian: apt-get install -y --no-install-recommends chromium (scripts/test does this)";

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "redlock-lab-{tag}-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create a temp dir");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A child process in its own process group; the whole group is killed on drop.
struct Group(Child);

impl Group {
    fn spawn(command: &mut Command) -> std::io::Result<Group> {
        command.process_group(0).spawn().map(Group)
    }

    fn kill(&mut self) {
        // The browser forks helpers (zygote, renderer, GPU); they share its process group.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.0.id())])
            .stderr(Stdio::null())
            .status();
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `redlock-lab explore` on a free port, from an empty working directory (a `ui/` folder in
/// the working directory would shadow the Explorer's page).
struct Explorer {
    port: u16,
    /// Where the timelines of its paths are served.
    timeline_port: u16,
    _server: Group,
    _cwd: TempDir,
}

impl Explorer {
    fn start(scenario: &str) -> Explorer {
        let free = || {
            TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("a free port")
                .port()
        };
        let (port, timeline_port) = (free(), free());
        let cwd = TempDir::new("explore");
        let mut server = Group::spawn(
            Command::new(env!("CARGO_BIN_EXE_redlock-lab"))
                .args(["explore", scenario, "--port", &port.to_string()])
                .args(["--timeline-port", &timeline_port.to_string()])
                .current_dir(&cwd.0)
                .stdout(Stdio::piped())
                .stderr(Stdio::null()),
        )
        .expect("start redlock-lab explore");
        // The address comes alone on stdout, once the page with its landing view is in place.
        let mut line = String::new();
        BufReader::new(server.0.stdout.take().expect("piped"))
            .read_line(&mut line)
            .expect("explore's stdout");
        assert_eq!(
            line,
            format!("http://127.0.0.1:{port}/\n"),
            "explore's first line"
        );
        let explorer = Explorer {
            port,
            timeline_port,
            _server: server,
            _cwd: cwd,
        };
        let start = Instant::now();
        while explorer.try_request("GET", "/.status").is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "the Explorer did not answer on port {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        explorer
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// One HTTP/1.0 request; the status code and the body.
    fn try_request(&self, method: &str, path: &str) -> std::io::Result<(u16, String)> {
        request(self.port, method, path)
    }

    /// A GET of the timeline server.
    fn timeline(&self, path: &str) -> (u16, String) {
        request(self.timeline_port, "GET", path).unwrap_or_else(|e| panic!("GET {path}: {e}"))
    }
}

/// One HTTP/1.0 request to a loopback port; the status code and the body.
fn request(port: u16, method: &str, path: &str) -> std::io::Result<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(
        stream,
        "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let (head, body) = response
        .split_once("\r\n\r\n")
        .ok_or_else(|| std::io::Error::other("no header end"))?;
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| std::io::Error::other("no status code"))?;
    Ok((code, body.to_owned()))
}

impl Explorer {
    fn get(&self, path: &str) -> (u16, String) {
        self.try_request("GET", path)
            .unwrap_or_else(|e| panic!("GET {path}: {e}"))
    }

    fn json(&self, path: &str) -> Value {
        let (code, body) = self.get(path);
        assert_eq!(code, 200, "GET {path}: {body}");
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("GET {path}: {e}: {body}"))
    }

    /// Runs the checker to completion and returns `/.status` once it is done.
    fn run_to_completion(&self) -> Value {
        let (code, _) = self
            .try_request("POST", "/.runtocompletion")
            .expect("POST /.runtocompletion");
        assert_eq!(code, 200);
        let start = Instant::now();
        loop {
            let status = self.json("/.status");
            if status["done"] == Value::Bool(true) {
                return status;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the checker did not finish: {status}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Runs the checker to completion and returns the encoded path of the `property`
    /// counterexample from `/.status`.
    fn counterexample(&self, property: &str) -> String {
        let status = self.run_to_completion();
        let found = status["properties"]
            .as_array()
            .expect("properties")
            .iter()
            .find(|p| p[1] == property)
            .unwrap_or_else(|| panic!("no property {property} in {status}"));
        found[2]
            .as_str()
            .unwrap_or_else(|| panic!("no counterexample for {property}: {status}"))
            .to_owned()
    }

    /// The step at the end of `path` as `/.states` serves it (`state`, `outcome`, `svg`).
    fn step_at(&self, path: &str) -> Value {
        let (prefix, last) = path.rsplit_once('/').unwrap_or(("", path));
        let steps = self.json(&format!("/.states/{prefix}"));
        let index: u64 = last.parse().expect("an action index");
        steps
            .as_array()
            .expect("a list of steps")
            .iter()
            .find(|s| s["actionIndex"].as_u64() == Some(index))
            .unwrap_or_else(|| panic!("no action {index} after {prefix}: {steps}"))
            .clone()
    }
}

/// Headless Chromium on `url`; without one the test fails (it is never skipped).
fn chromium(profile: &Path, extra: &[&str], url: &str) -> Output {
    let binary = common::browser::browser().unwrap_or_else(|| {
        panic!("no chromium, chromium-browser or google-chrome on PATH; {INSTALL_HINT}")
    });
    common::browser::chromium(&binary, profile, extra, url)
}

fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

#[test]
fn the_http_api_serves_status_states_and_the_diagram() {
    let explorer = Explorer::start(SCENARIO);

    let (code, page) = explorer.get("/");
    assert_eq!(code, 200);
    assert!(page.contains("Stateright Explorer"), "{page}");

    let status = explorer.json("/.status");
    // The Explorer names the model by its defining path: the scenario's `RedlockModel`
    // wrapped by the binary only to link each diagram to its timeline.
    let model = status["model"].as_str().unwrap();
    assert_eq!(model, "redlock_lab::explore::linked::Linked");
    let names: Vec<&str> = status["properties"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p[1].as_str().unwrap())
        .collect();
    assert_eq!(names, ["mutual exclusion", "lock acquired"]);

    // The initial state, in the readable form of the state pane.
    let init = explorer.json("/.states");
    let init = init.as_array().unwrap();
    assert_eq!(init.len(), 1);
    let state = init[0]["state"].as_str().unwrap();
    assert!(state.starts_with("true time t=0\n"), "{state}");
    assert!(state.contains("n1  clock 0  no key"), "{state}");
    assert!(state.contains("c2  clock 0  idle"), "{state}");
    assert!(
        !state.contains("Shape"),
        "the static configuration leaks: {state}"
    );

    let path = explorer.counterexample("mutual exclusion");
    let end = explorer.step_at(&path);
    let state = end["state"].as_str().unwrap();
    // The state at the end of the counterexample: both clients believe.
    assert_eq!(count(state, "BELIEVES"), 2, "{state}");
    let outcome = end["outcome"].as_str().unwrap();
    assert!(outcome.contains("acquires"), "{outcome}");
    let svg = end["svg"].as_str().expect("an svg field");
    assert!(svg.starts_with("<svg"), "{svg}");
    assert!(svg.contains("n2's clock jumps +2"), "{svg}");
    for lane in ["c1", "c2", "n1", "n2", "n3"] {
        assert!(
            svg.contains(&format!(">{lane}</text>")),
            "no lane {lane}: {svg}"
        );
    }

    // A path that does not exist is a 404, not a crash.
    let (code, _) = explorer.get("/.states/99");
    assert_eq!(code, 404);
    // And the server still answers.
    assert_eq!(explorer.get("/.status").0, 200);
}

/// The Explorer, `check --json` and `explain` count the same reachable states: one model,
/// one quotient, whichever command shows it.
#[test]
fn the_explorer_counts_the_states_check_and_explain_count() {
    for scenario in [
        "node-clock-jump-forward-by-drift",
        "crash-delayed-restart-ttl-minus-drift",
        "storage-without-faults",
    ] {
        let explorer = Explorer::start(scenario);
        let status = explorer.run_to_completion();
        let explored = status["unique_state_count"].as_u64().expect("a count");

        let check = Command::new(env!("CARGO_BIN_EXE_redlock-lab"))
            .args(["check", "--json", scenario])
            .output()
            .expect("redlock-lab check runs");
        let report: Value = serde_json::from_slice(&check.stdout).expect("the JSON report");
        let checked = report["models"][0]["unique_states"]
            .as_u64()
            .expect("unique_states");
        assert_eq!(explored, checked, "{scenario}: the Explorer and check");

        let explain = Command::new(env!("CARGO_BIN_EXE_redlock-lab"))
            .args(["explain", scenario])
            .output()
            .expect("redlock-lab explain runs");
        let text = String::from_utf8(explain.stdout).expect("utf-8");
        let said = format!("explored all {explored} reachable states");
        assert!(
            text.contains(&said),
            "{scenario}: explain does not say {said:?}: {text}"
        );
    }
}

#[test]
fn a_newcomer_lands_on_the_scenario_and_one_click_opens_the_breaking_step() {
    let explorer = Explorer::start(SCENARIO);
    let (code, page) = explorer.get("/");
    assert_eq!(code, 200);
    // The landing view names the scenario, its claim and what to do.
    let scenario = (redlock_lab::catalog::find(SCENARIO).expect("in the catalog"))
        .scenario()
        .expect("a valid file");
    // (An apostrophe is written as HTML's `&#39;`.)
    let html = |text: &str| text.replace('\'', "&#39;");
    for said in [
        html(&scenario.name),
        html(&scenario.title),
        html(&scenario.claim),
        "Show the shortest counterexample to mutual exclusion".to_owned(),
        "Next Action Choices".to_owned(),
    ] {
        assert!(
            page.contains(&said),
            "the landing view lacks {said:?}:\n{page}"
        );
    }
    // The one click, as the URL asks for it, at 1 280 pixels: the search runs to completion
    // and the path opens with the breaking step marked and the believers named.
    let profile = TempDir::new("chromium-landing");
    let url = explorer.url("/#/steps?shortest");
    let dom = chromium(&profile.0, &["--window-size=1280,900", "--dump-dom"], &url);
    let dom = String::from_utf8(dom.stdout).expect("utf-8 DOM");
    assert!(dom.contains("Shown below: mutual exclusion"), "{dom}");
    assert_eq!(count(&dom, "class=\"breaks-why\""), 1, "{dom}");
    assert!(
        dom.contains("✗ mutual exclusion breaks here: c1 and c2 each believe they hold the lock"),
        "{dom}"
    );
    assert_eq!(
        count(&dom, "font-code is-selected-state breaks"),
        1,
        "{dom}"
    );
    // Nothing wider than the window: the diagram shrinks to fit.
    assert!(dom.contains("data-fits=\"true\""), "{dom}");
}

#[test]
fn headless_chromium_shows_the_counterexample_state_and_diagram() {
    let explorer = Explorer::start(SCENARIO);
    let path = explorer.counterexample("mutual exclusion");
    let url = explorer.url(&format!("/#/steps/{path}"));

    let profile = TempDir::new("chromium-dom");
    let dom = chromium(&profile.0, &["--dump-dom"], &url);
    let dom = String::from_utf8(dom.stdout).expect("utf-8 DOM");
    // The page ran its scripts: the checker's status and the verdict are shown.
    assert!(dom.contains("Counterexample found"), "{dom}");
    assert!(dom.contains("mutual exclusion"), "{dom}");
    // The sequence diagram of the path, inlined as SVG, with the fault on n2's lane.
    assert!(dom.contains("<svg"), "{dom}");
    assert!(dom.contains("n2's clock jumps +2"), "{dom}");
    // The state pane: the last step, then the state where both clients believe.
    assert!(dom.contains("c2 acquires n2 n3 (T2=2"), "{dom}");
    assert_eq!(count(&dom, "BELIEVES"), 2, "{dom}");

    let shots = TempDir::new("chromium-shot");
    let png = shots.0.join("explorer.png");
    chromium(
        &shots.0.join("profile"),
        &[
            "--window-size=1600,1600",
            &format!("--screenshot={}", png.display()),
        ],
        &url,
    );
    let bytes = std::fs::read(&png).expect("the screenshot was written");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    assert_eq!((width, height), (1600, 1600));
    // A blank page compresses to a few kilobytes; the rendered Explorer does not.
    assert!(bytes.len() > 30_000, "screenshot of {} bytes", bytes.len());
    if let Some(dir) = std::env::var_os("REDLOCK_LAB_SCREENSHOT_DIR") {
        std::fs::copy(&png, Path::new(&dir).join("explorer.png")).expect("keep the screenshot");
    }
}

/// The Explorer links each path to its timeline, the timeline links each step back to its
/// state in the Explorer, and a book page's step opens the state it shows.
#[test]
fn the_explorer_and_the_timeline_link_both_ways() {
    let explorer = Explorer::start(SCENARIO);
    let path = explorer.counterexample("mutual exclusion");
    // From the Explorer's state to the timeline: a link under the diagram.
    let end = explorer.step_at(&path);
    let svg = end["svg"].as_str().expect("an svg field");
    let link = format!(
        "http://127.0.0.1:{}/timeline/{path}",
        explorer.timeline_port
    );
    assert!(svg.contains(&format!("href='{link}'")), "{svg}");
    let (code, html) = explorer.timeline(&format!("/timeline/{path}"));
    assert_eq!(code, 200, "{html}");
    assert!(html.contains("mutual exclusion breaks"), "{html}");
    // From the timeline back: its last step opens the state at the end of the path.
    let back = format!("http://127.0.0.1:{}/#/steps/{path}", explorer.port);
    assert!(html.contains(&format!("href='{back}'")), "{html}");
    // A path that does not exist is a 404 that says why, and the server goes on.
    let (code, why) = explorer.timeline("/timeline/0/99");
    assert_eq!(code, 404);
    assert!(why.contains("no enabled step 99"), "{why}");
    assert_eq!(explorer.timeline("/elsewhere").0, 404);
    assert_eq!(explorer.timeline(&format!("/timeline/{path}")).0, 200);

    // From a book page's step to the Explorer: the state it names is the one the page shows.
    let book = TempDir::new("book");
    let out = Command::new(env!("CARGO_BIN_EXE_redlock-lab"))
        .args(["book", "--out", book.0.to_str().unwrap(), SCENARIO])
        .args(["--explorer-port", &explorer.port.to_string()])
        .output()
        .expect("redlock-lab book runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(book.0.join(format!("{SCENARIO}.html"))).expect("the page");
    let prefix = format!("href='http://127.0.0.1:{}/#/steps/", explorer.port);
    let last = page
        .lines()
        .filter(|l| l.contains("<li id='step-"))
        .filter_map(|l| l.split(&prefix).nth(1))
        .filter_map(|rest| rest.split('\'').next())
        .next_back()
        .expect("the steps link to the Explorer");
    let state = explorer.step_at(last);
    assert_eq!(
        count(state["state"].as_str().unwrap(), "BELIEVES"),
        2,
        "{state}"
    );
}
