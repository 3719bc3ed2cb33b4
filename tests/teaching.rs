//! Teaching output: counterexample stories (pinned renderings), `trace` in every format,
//! `check`'s story blocks, `explain`, catalog lookup by alias and prefix, and the
//! `[mitigation]` of every scenario checked to flip the verdict.

mod common;

use std::collections::BTreeMap;
use std::process::Output;

use expect_test::{Expect, expect};
use redlock_lab::actor::{Actor, Process};
use redlock_lab::catalog::{self, CATALOG, LookupError};
use redlock_lab::check::{self, Check, Engine, Report};
use redlock_lab::event::Event;
use redlock_lab::scenario::{Scenario, Verdict, property};
use redlock_lab::sim::SimConfig;
use redlock_lab::time::Millis;

use common::redlock_lab;

fn scenario(name: &str) -> Scenario {
    let embedded = catalog::find(name).expect("a catalog scenario");
    Scenario::from_str(embedded.file, embedded.text).expect("catalog files are valid")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("utf-8")
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("utf-8")
}

fn check_story(name: &str, property: &str, text: Expect, mermaid: Expect) {
    let story = check::story(&scenario(name), property).expect("a counterexample");
    text.assert_eq(&story.to_text());
    mermaid.assert_eq(&story.to_mermaid());
}

#[test]
fn the_node_clock_jump_story_is_pinned() {
    check_story(
        "node-clock-jump-forward-past-drift",
        property::MUTUAL_EXCLUSION,
        expect![[r#"
            node-clock-jump-forward-past-drift: mutual exclusion violated (shortest counterexample: 11 steps)
            t=0  client c1  begins attempt 1: T1=0, sends SET NX PX 4 to n1 n2
            t=0  node n1    sets c1's key, expiring when n1's clock reads 4
            t=0  node n2    sets c1's key, expiring when n2's clock reads 4
            t=0  client c1  acquires n1 n2 (T2=0, validity 3), believes it holds the lock until its clock reads 3
            t=0  client c2  begins attempt 1: T1=0, sends SET NX PX 4 to n2 n3
            t=0  node n3    sets c2's key, expiring when n3's clock reads 4
            t=2  node n2    clock jumps +2 (it now reads 4)
            t=2  node n2    c1's key expires at once: the jump moved its clock past the expiry
            t=2  node n2    gets c2's SET after 2 ticks in the network and sets c2's key, expiring when n2's clock reads 8 [n2's clock reads 4]
            t=2  client c2  acquires n2 n3 (T2=2, validity 1), believes it holds the lock until its clock reads 3  ✗ mutual exclusion
                            at t=2 c1 believes it holds the lock until its clock reads 3 (it reads 2), and c2 believes it holds the lock until its clock reads 3 (it reads 2)
        "#]],
        expect![[r#"
            sequenceDiagram
                participant c1
                participant c2
                participant n1
                participant n2
                participant n3
                Note over c1: t=0 begins attempt 1: T1=0, sends SET NX PX 4 to n1 n2
                c1->>n1: t=0 sets c1's key, expiring when n1's clock reads 4
                c1->>n2: t=0 sets c1's key, expiring when n2's clock reads 4
                Note over c1: t=0 acquires n1 n2 (T2=0, validity 3), believes it holds the lock until its clock reads 3
                Note over c2: t=0 begins attempt 1: T1=0, sends SET NX PX 4 to n2 n3
                c2->>n3: t=0 sets c2's key, expiring when n3's clock reads 4
                Note over n2: t=2 ⚡ clock jumps +2 (it now reads 4)
                Note over n2: t=2 c1's key expires at once: the jump moved its clock past the expiry
                c2->>n2: t=2 gets c2's SET after 2 ticks in the network and sets c2's key, expiring when n2's clock reads 8 [n2's clock: 4]
                Note over c2: t=2 acquires n2 n3 (T2=2, validity 1), believes it holds the lock until its clock reads 3
                Note over c1,n3: ✗ mutual exclusion: at t=2 c1 believes it holds the lock until its clock reads 3 (it reads 2), and c2 believes it holds the lock until its clock reads 3 (it reads 2)
        "#]],
    );
}

/// The damage Kleppmann draws: c1 is paused between its lease check and its write, c2
/// acquires, reads and writes, then c1's stale write lands on top and c2's update is lost.
#[test]
fn the_gc_pause_story_is_pinned() {
    check_story(
        "gc-pause-after-acquisition",
        property::NO_LOST_UPDATE,
        expect![[r#"
            gc-pause-after-acquisition: no lost update violated (the shortest run where a stale write lands after a newer one: 21 steps)
            t=0  client c1  begins attempt 1: T1=0, sends SET NX PX 4 to n1 n2 n3
            t=0  node n1    sets c1's key, expiring when n1's clock reads 4
            t=0  node n2    sets c1's key, expiring when n2's clock reads 4
            t=0  client c1  acquires n1 n2 (T2=0, validity 3), believes it holds the lock until its clock reads 3, token 1 (from an ideal counter: one above every earlier lock's)
            t=0  client c1  checks its lease (clock 0, deadline 3): still valid, goes ahead with its read (token 1)
            t=0  storage    applies c1's read (token 1): the storage checks no token; the counter reads 0
            t=0  client c1  checks its lease (clock 0, deadline 3): still valid, goes ahead with its write counter=1 (token 1)
            t=0  client c1  is paused (GC) after its lease check, before its write counter=1 (token 1) leaves
            t=2  client c2  begins attempt 1: T1=2, sends SET NX PX 4 to n1 n2 n3
            t=2  node n3    sets c2's key, expiring when n3's clock reads 6
            t=3  client c1  stops believing: its clock reached the lease's deadline
            t=4  node n1    c1's key expires
            t=4  node n2    c1's key expires
            t=4  node n1    gets c2's SET after 2 ticks in the network and sets c2's key, expiring when n1's clock reads 8
            t=4  client c2  acquires n1 n3 (T2=4, validity 1), believes it holds the lock until its clock reads 5, token 2 (from an ideal counter: one above every earlier lock's)
            t=4  client c2  checks its lease (clock 4, deadline 5): still valid, goes ahead with its read (token 2)
            t=4  storage    applies c2's read (token 2): the storage checks no token; the counter reads 0
            t=4  client c2  checks its lease (clock 4, deadline 5): still valid, goes ahead with its write counter=1 (token 2)
            t=4  storage    applies c2's write counter=1 (token 2): the storage checks no token; the counter is now 1
            t=4  client c2  releases with compare-and-delete on n1 n2 n3
            t=4  client c1  wakes from its pause and sends its write counter=1 (token 1), checked at t=0, without checking again
            t=4  storage    applies c1's write counter=1 (token 1), a stale holder's op: the storage checks no token; the counter is now 1
            t=4  storage    c1's write (for the 1st lock acquired) lands after c2's (for the 2nd): c2's update is lost  ✗ no lost update
                            the counter reads 1 but 2 writes were acknowledged: an update is lost
            t=4  client c1  releases with compare-and-delete on n1 n2 n3
        "#]],
        expect![[r#"
            sequenceDiagram
                participant c1
                participant c2
                participant n1
                participant n2
                participant n3
                participant storage
                Note over c1: t=0 begins attempt 1: T1=0, sends SET NX PX 4 to n1 n2 n3
                c1->>n1: t=0 sets c1's key, expiring when n1's clock reads 4
                c1->>n2: t=0 sets c1's key, expiring when n2's clock reads 4
                Note over c1: t=0 acquires n1 n2 (T2=0, validity 3), believes it holds the lock until its clock reads 3, token 1 (from an ideal counter: one above every earlier lock's)
                Note over c1: t=0 checks its lease (clock 0, deadline 3): still valid, goes ahead with its read (token 1)
                c1->>storage: t=0 applies c1's read (token 1): the storage checks no token, the counter reads 0
                Note over c1: t=0 checks its lease (clock 0, deadline 3): still valid, goes ahead with its write counter=1 (token 1)
                Note over c1: t=0 ⚡ is paused (GC) after its lease check, before its write counter=1 (token 1) leaves
                Note over c2: t=2 begins attempt 1: T1=2, sends SET NX PX 4 to n1 n2 n3
                c2->>n3: t=2 sets c2's key, expiring when n3's clock reads 6
                Note over c1: t=3 stops believing: its clock reached the lease's deadline
                Note over n1: t=4 c1's key expires
                Note over n2: t=4 c1's key expires
                c2->>n1: t=4 gets c2's SET after 2 ticks in the network and sets c2's key, expiring when n1's clock reads 8
                Note over c2: t=4 acquires n1 n3 (T2=4, validity 1), believes it holds the lock until its clock reads 5, token 2 (from an ideal counter: one above every earlier lock's)
                Note over c2: t=4 checks its lease (clock 4, deadline 5): still valid, goes ahead with its read (token 2)
                c2->>storage: t=4 applies c2's read (token 2): the storage checks no token, the counter reads 0
                Note over c2: t=4 checks its lease (clock 4, deadline 5): still valid, goes ahead with its write counter=1 (token 2)
                c2->>storage: t=4 applies c2's write counter=1 (token 2): the storage checks no token, the counter is now 1
                Note over c2: t=4 releases with compare-and-delete on n1 n2 n3
                Note over c1: t=4 wakes from its pause and sends its write counter=1 (token 1), checked at t=0, without checking again
                c1->>storage: t=4 applies c1's write counter=1 (token 1), a stale holder's op: the storage checks no token, the counter is now 1
                Note over storage: t=4 c1's write (for the 1st lock acquired) lands after c2's (for the 2nd): c2's update is lost
                Note over c1,storage: ✗ no lost update: the counter reads 1 but 2 writes were acknowledged: an update is lost
                Note over c1: t=4 releases with compare-and-delete on n1 n2 n3
        "#]],
    );
}

/// A storage scenario's default story is its lost update told in the order of the seed
/// ("A overwrites B"); a delayed write says it was delayed; the pause says when it ends.
#[test]
fn storage_stories_show_the_damage() {
    for name in [
        "gc-pause-after-acquisition",
        "network-delayed-write",
        "synchronous-bounds-margin-2",
    ] {
        let out = redlock_lab(&["trace", name]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let text = stdout(&out);
        assert!(text.contains(": no lost update violated"), "{text}");
        let last = text
            .lines()
            .find(|l| l.contains('✗'))
            .expect("a breaking line");
        assert!(
            last.contains(
                "c1's write (for the 1st lock acquired) lands after c2's (for the 2nd): \
                 c2's update is lost"
            ),
            "{text}"
        );
        let check = text.find("checks its lease").expect("a lease check");
        let lands = text
            .find("applies c1's write counter=1 (token 1)")
            .expect("the stale write");
        assert!(check < lands, "{text}");
    }
    // With fencing on writes only the stale write cannot land after a newer write (it is
    // fenced), so the story is the other order, and it says whose update the newer write erased.
    let fenced = stdout(&redlock_lab(&["trace", "fencing-on-writes-only"]));
    assert!(
        fenced.contains(
            "c2's write (for the 2nd lock acquired) comes from a read taken before c1's write \
             (for the 1st) landed: \
             c1's update is lost  ✗ no lost update"
        ),
        "{fenced}"
    );
    let delayed = stdout(&redlock_lab(&["trace", "network-delayed-write"]));
    assert!(
        delayed.contains("delayed 4 ticks in the network"),
        "{delayed}"
    );
    let paused = stdout(&redlock_lab(&["trace", "gc-pause-after-acquisition"]));
    let pause = paused
        .find("is paused (GC) after its lease check")
        .expect("the pause");
    let wakes = paused
        .find("wakes from its pause")
        .expect("the pause's end");
    let newer = paused.find("applies c2's write").expect("c2's write");
    assert!(pause < newer && newer < wakes, "{paused}");
}

/// A guard that runs out one tick too early is shown running out.
#[test]
fn the_guard_story_shows_the_guard() {
    let story = check::story(
        &scenario("crash-restart-client-guard-one-tick-short"),
        property::MUTUAL_EXCLUSION,
    )
    .expect("violated");
    let text = story.to_text();
    let crash = text
        .find("the clients' guard keeps its yes out")
        .expect("guard set");
    let ends = text
        .find("the clients' guard counts its yes again")
        .expect("guard ends");
    let counted = text
        .find("sets c2's key, expiring when n1's clock")
        .expect("the vote");
    assert!(crash < ends && ends < counted, "{text}");
}

#[test]
fn a_property_that_holds_has_no_story() {
    let fixed = scenario("node-clock-jump-forward-by-drift");
    assert!(check::story(&fixed, property::MUTUAL_EXCLUSION).is_none());
    // Not an `always` property: nothing to tell either.
    let broken = scenario("node-clock-jump-forward-past-drift");
    assert!(check::story(&broken, property::LOCK_ACQUIRED).is_none());
}

/// Every catalog scenario, checked once (the whole catalog takes seconds).
fn reports() -> BTreeMap<String, (Scenario, Report)> {
    CATALOG
        .iter()
        .map(|embedded| {
            let scenario = Scenario::from_str(embedded.file, embedded.text).expect("valid");
            let report = Check::new(&scenario).run();
            (scenario.name.clone(), (scenario, report))
        })
        .collect()
}

#[test]
fn stories_break_exactly_once_in_their_last_step_and_mitigations_flip_the_verdict() {
    let reports = reports();
    let mut stories = 0;
    for (name, (scenario, report)) in &reports {
        for p in &report.properties {
            let told = redlock_lab::check::reported_story_path(scenario, report, &p.name);
            match (told.as_ref().map(|t| &t.story), p.verdict) {
                (Some(story), Verdict::Violated) if report.engine == Engine::Discrete => {
                    stories += 1;
                    let breaking: Vec<_> =
                        story.lines.iter().filter(|l| l.breaks.is_some()).collect();
                    assert_eq!(breaking.len(), 1, "{name}: {}", story.to_text());
                    // The story ends with the step that breaks the property: the mark is on
                    // the event that breaks it, and only that step's consequences (a release
                    // after the op) follow, at the same instant.
                    let at = story
                        .lines
                        .iter()
                        .position(|l| l.breaks.as_deref() == Some(p.name.as_str()))
                        .expect("the breaking line names the property");
                    // A liveness run breaks where the last client that counts gives up for
                    // good; what follows until the run stops is no one trying again.
                    let consequences = &story.lines[at + 1..];
                    let after_giving_up = |l: &redlock_lab::report::Line| {
                        p.name == property::EVENTUALLY_ACQUIRED
                            && !matches!(
                                l.event,
                                Event::RoundBegan { .. }
                                    | Event::NotAcquired { .. }
                                    | Event::Acquired { .. }
                            )
                    };
                    assert!(
                        consequences.iter().all(|l| after_giving_up(l)
                            || l.t == story.lines[at].t
                                && matches!(l.event, Event::Released { .. })),
                        "{name}: the story must end where {} breaks:\n{}",
                        p.name,
                        story.to_text()
                    );
                    assert_eq!(
                        story.steps,
                        p.counterexample.as_ref().map_or(0, Vec::len),
                        "{name}"
                    );
                }
                // A zone engine's run is told as its own numbered steps (tests/zones.rs).
                (Some(_), Verdict::Violated) => {}
                (Some(_), Verdict::Holds | Verdict::Incomplete) => {
                    panic!("{name}: a story for {} that is {}", p.name, p.verdict)
                }
                (None, _) => {}
            }
        }
        // Every scenario whose verdict breaks a property says how to fix it, and the fix is
        // proven by running the checker on the scenario it names: the verdict flips.
        let violated: Vec<&str> = report
            .properties
            .iter()
            .filter(|p| p.verdict == Verdict::Violated && p.name != property::LOCK_ACQUIRED)
            .map(|p| p.name.as_str())
            .collect();
        // (The patch itself is re-checked in `tests/catalog.rs`.)
        match (&scenario.mitigation, violated.first()) {
            (Some(mitigation), Some(first)) => {
                if let Some(proof) = &mitigation.scenario {
                    let (_, fixed) = reports
                        .get(proof)
                        .unwrap_or_else(|| panic!("{name}: mitigation names {proof}"));
                    assert_eq!(
                        fixed.property(first).map(|p| p.verdict),
                        Some(Verdict::Holds),
                        "{name}: {first} must hold in {proof}"
                    );
                }
            }
            (None, Some(first)) => panic!("{name}: {first} is violated but no [mitigation]"),
            (Some(_), None) => panic!("{name}: a [mitigation] but nothing is violated"),
            (None, None) => {}
        }
    }
    assert!(stories >= 20, "only {stories} stories");
}

#[test]
fn names_aliases_and_prefixes_resolve_to_one_scenario() {
    let mut names = BTreeMap::new();
    for embedded in CATALOG {
        let scenario = Scenario::from_str(embedded.file, embedded.text).unwrap();
        for name in std::iter::once(&scenario.name).chain(&scenario.aliases) {
            if let Some(other) = names.insert(name.clone(), scenario.name.clone()) {
                panic!("{name} names both {other} and {}", scenario.name);
            }
        }
    }
    let found = |name: &str| catalog::lookup(name).map(|e| e.file);
    assert_eq!(
        found("node-clock-jump-forward"),
        Ok("models/node-clock-jump-forward-past-drift.toml")
    );
    assert_eq!(
        found("node-clock-jump-forward-by-drift"),
        Ok("models/node-clock-jump-forward-by-drift.toml")
    );
    assert_eq!(
        found("fencing-on"),
        Ok("models/fencing-on-writes-only.toml")
    );
    assert_eq!(found("failover"), Ok("models/master-replica-failover.toml"));
    match catalog::lookup("crash-delayed") {
        Err(LookupError::Ambiguous { candidates, .. }) => assert_eq!(
            candidates,
            [
                "crash-delayed-restart-clock-jump",
                "crash-delayed-restart-covers-node-clock-error",
                "crash-delayed-restart-full-ttl-clock-jump",
                "crash-delayed-restart-node-clock-error",
                "crash-delayed-restart-one-tick-short",
                "crash-delayed-restart-ttl-minus-drift"
            ]
        ),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        catalog::lookup("no-such-thing"),
        Err(LookupError::NotFound { .. })
    ));
}

#[test]
fn trace_prints_every_format() {
    let name = "node-clock-jump-forward-past-drift";
    let story = check::story(&scenario(name), property::MUTUAL_EXCLUSION).unwrap();

    let text = redlock_lab(&["trace", name]);
    assert_eq!(text.status.code(), Some(0), "{}", stderr(&text));
    assert_eq!(stdout(&text), story.to_text());

    let mermaid = redlock_lab(&["trace", name, "--format", "mermaid"]);
    assert_eq!(mermaid.status.code(), Some(0));
    assert_eq!(stdout(&mermaid), story.to_mermaid());

    let json = redlock_lab(&["trace", name, "--format", "json"]);
    assert_eq!(json.status.code(), Some(0));
    let value: serde_json::Value = serde_json::from_str(&stdout(&json)).expect("json");
    assert_eq!(value, serde_json::to_value(&story).unwrap());
    assert_eq!(value["property"], "mutual exclusion");
    assert_eq!(value["lines"].as_array().unwrap().len(), story.lines.len());

    let svg = redlock_lab(&["trace", name, "--format", "svg"]);
    assert_eq!(svg.status.code(), Some(0));
    let svg = stdout(&svg);
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("n2's clock jumps +2"));

    // One narration: every event of the story is told in the same words by the SVG and by
    // `check --json`'s counterexample.
    let json = redlock_lab(&["check", name, "--json"]);
    let value: serde_json::Value = serde_json::from_str(&stdout(&json)).expect("json");
    let steps: Vec<&str> = value["models"][0]["properties"][0]["counterexample"]
        .as_array()
        .expect("a counterexample")
        .iter()
        .map(|step| step.as_str().expect("a string"))
        .collect();
    let steps = steps.join("\n");
    for line in &story.lines {
        assert!(steps.contains(&line.action), "{:?} in {steps}", line.action);
        assert!(svg.contains(&line.action), "{:?} in the SVG", line.action);
    }

    // The same scenario with the jump inside the drift allowance: nothing to trace.
    let holds = redlock_lab(&["trace", "node-clock-jump-forward-by-drift"]);
    assert_eq!(holds.status.code(), Some(1));
    assert!(stderr(&holds).contains("holds"), "{}", stderr(&holds));

    let unknown = redlock_lab(&["trace", name, "--property", "storage safety"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(stderr(&unknown).contains("mutual exclusion"));
}

#[test]
fn check_verbose_prints_the_story_of_each_violated_property_after_the_table() {
    let out = redlock_lab(&[
        "check",
        "--verbose",
        "node-clock-jump-forward-past-drift",
        "node-clock-jump-forward-by-drift",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("scenario "), "{text}");
    let table_end = text.find("\n\n").expect("a blank line after the table");
    let story = text
        .find("node-clock-jump-forward-past-drift: mutual exclusion violated (shortest")
        .expect("the story of the violated property");
    assert!(story > table_end, "{text}");
    assert!(text.contains("✗ mutual exclusion"));
    assert!(!text.contains("node-clock-jump-forward-by-drift: mutual exclusion violated"));
    assert!(
        text.trim_end().ends_with("every verdict matches [expect]"),
        "{text}"
    );

    // `--json` stays one JSON object, with no stories mixed in.
    let json = redlock_lab(&["check", "--json", "node-clock-jump-forward-past-drift"]);
    let value: serde_json::Value = serde_json::from_str(&stdout(&json)).expect("json");
    assert!(value["models"][0]["properties"][0].get("story").is_none());
    // …with the necessary causes of each violated property, computed by re-checking.
    assert_eq!(
        value["models"][0]["properties"][0]["necessary"],
        serde_json::json!(["clock jump"])
    );
    assert!(
        value["models"][0]["properties"][1]
            .get("necessary")
            .is_none()
    );

    // `--why` prints them under the stories, in words.
    let why = redlock_lab(&["check", "--why", "crash-delayed-restart-clock-jump"]);
    assert_eq!(why.status.code(), Some(0), "{}", stderr(&why));
    assert!(
        stdout(&why).contains(
            "crash-delayed-restart-clock-jump: mutual exclusion needs [clock jump, crash]: \
             both the clock jump and the crash are needed; either alone is harmless."
        ),
        "{}",
        stdout(&why)
    );
}

#[test]
fn explain_tells_claim_verdict_story_and_mitigation() {
    let out = redlock_lab(&["explain", "node-clock-jump-forward"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    for needle in [
        "node-clock-jump-forward-past-drift — n2's clock jumps +2 with drift 1",
        "(models/node-clock-jump-forward-past-drift.toml)",
        "The claim (Kleppmann): A forward jump of a node's clock past the drift allowance breaks Redlock",
        "Source (Kleppmann): “The clock on node C jumps forward, causing the lock to expire.”",
        "Verdict: mutual exclusion is violated: among ",
        "at t=2 n2's clock jumps +2",
        "  mutual exclusion: violated (as [expect] says)",
        "✗ mutual exclusion",
        "Mitigation: Keep every jump of a node's clock within the drift allowance",
        "Patch:\n  lock.drift_ticks = 2\nRe-checked with the patch (",
        "  mutual exclusion: holds",
        "Why: The clock jump is needed; the partition is not (without it the property is still violated).",
        "(the checker re-ran the scenario without each of its 2 faults and mistakes; necessary: [clock jump])",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }

    // A scenario that holds: the reason is the exhaustive search, and no story.
    let out = redlock_lab(&["explain", "node-clock-jump-forward-by-drift"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(text.contains("Verdict: mutual exclusion holds: the checker explored all"));
    assert!(!text.contains('✗'), "{text}");
    // A proof scenario points back at the scenarios whose patched file it is.
    let out = redlock_lab(&["explain", "crash-restart-aof-always"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    let broken_by = text
        .split("Without the safeguard this scenario keeps:\n")
        .nth(1)
        .expect("the scenarios it is the fix for");
    assert!(
        broken_by.contains("  redlock-lab explain crash-restart-aof-everysec"),
        "{text}"
    );

    // The necessary causes, in words: Kleppmann's restart delay cut short by a jump.
    let out = redlock_lab(&["explain", "crash-delayed-restart-clock-jump"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(
        text.contains(
            "Why: Both the clock jump and the crash are needed; either alone is harmless."
        ),
        "{text}"
    );
    assert!(text.contains("at t=2 n1's clock jumps +1"), "{text}");
    assert!(text.contains("at t=0 n1 crashes"), "{text}");

    // Several properties that hold are all part of the reason.
    let out = redlock_lab(&["explain", "fencing-token-rescues-gc-pause"]);
    let text = stdout(&out);
    assert!(
        text.contains("Verdict: mutual exclusion, storage safety and no lost update hold:"),
        "{text}"
    );
}

#[test]
fn explain_says_how_long_a_tick_of_a_file_in_real_units_is() {
    let dir = common::scratch_dir("explain-durations");
    let file = dir.join("jump.toml");
    std::fs::write(
        &file,
        "name = \"jump-in-seconds\"\ntitle = \"t\"\nclaim = \"c\"\nsource = \"derived\"\nprose = \"p\"\n[lock]\nttl = \"8s\"\ndrift = \"2s\"\n[faults.clock_jumps]\ntarget = \"node\"\njump = \"4s\"\n[expect]\n\"mutual exclusion\" = \"violated\"\n",
    )
    .unwrap();
    let output = common::redlock_lab(&["explain", file.to_str().unwrap()]);
    let out = common::text(&output.stdout);
    assert!(
        out.contains(
            "Time: the file writes durations, and one tick is 2s; the story counts in ticks."
        ),
        "{out}"
    );
    assert_eq!(output.status.code(), Some(0), "{out}");
}

#[test]
fn explain_lists_candidates_for_an_unknown_or_ambiguous_name() {
    let out = redlock_lab(&["explain", "crash-delayed"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("could mean crash-delayed-restart-clock-jump, crash-delayed-restart-covers-node-clock-error, crash-delayed-restart-full-ttl-clock-jump, crash-delayed-restart-node-clock-error, crash-delayed-restart-one-tick-short, crash-delayed-restart-ttl-minus-drift"), "{err}");

    let out = redlock_lab(&["explain", "no-such-scenario"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("redlock-lab list"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn aliases_and_mitigations_are_validated_with_their_location() {
    let file = |extra: &str| {
        format!(
            "name = \"x\"\ntitle = \"t\"\nclaim = \"c\"\nsource = \"derived\"\nprose = \"p\"\n{extra}\n[expect]\n\"mutual exclusion\" = \"holds\"\n"
        )
    };
    let ok = Scenario::from_str(
        "ok.toml",
        &file("aliases = [\"why\"]\n[mitigation]\ntext = \"do it\"\nscenario = \"y\""),
    )
    .expect("valid");
    assert_eq!(ok.aliases, ["why"]);
    let mitigation = ok.mitigation.expect("a mitigation");
    assert_eq!(
        (mitigation.text.as_str(), mitigation.scenario.as_deref()),
        ("do it", Some("y"))
    );
    assert!(
        Scenario::from_str("none.toml", &file(""))
            .unwrap()
            .mitigation
            .is_none()
    );

    let bad_alias = Scenario::from_str("a.toml", &file("aliases = [\"Not Kebab\"]")).unwrap_err();
    assert!(
        bad_alias.to_string().starts_with("a.toml:6:"),
        "{bad_alias}"
    );
    assert!(
        bad_alias.to_string().contains("alias \"Not Kebab\""),
        "{bad_alias}"
    );

    let bad_target = Scenario::from_str(
        "m.toml",
        &file("[mitigation]\ntext = \"t\"\nscenario = \"Nope!\""),
    )
    .unwrap_err();
    assert!(
        bad_target.to_string().starts_with("m.toml:8:"),
        "{bad_target}"
    );

    let unknown = Scenario::from_str(
        "u.toml",
        &file("[mitigation]\ntext = \"t\"\nscenario = \"y\"\nproof = \"z\""),
    )
    .unwrap_err();
    assert!(unknown.to_string().contains("proof"), "{unknown}");
}

/// redis.io's stale holder, the shortest story once a failed round sends nothing: the holder
/// outlives its lease, the successor acquires, the stale holder's DEL deletes the successor's
/// key, and a third client acquires while the successor still believes.
#[test]
fn the_stale_holder_del_story_is_redis_io_s() {
    let story = check::story(
        &scenario("single-node-stale-holder-del"),
        property::MUTUAL_EXCLUSION,
    )
    .expect("violated")
    .to_text();
    expect![[r#"
        single-node-stale-holder-del: mutual exclusion violated (shortest counterexample: 13 steps)
        t=0  client c1  begins attempt 1: T1=0, sends SET NX PX 3 to n1
        t=0  node n1    sets c1's key, expiring when n1's clock reads 3
        t=0  client c1  acquires n1 (T2=0, validity 3), believes it holds the lock until its clock reads 3
        t=1  client c2  begins attempt 1: T1=1, sends SET NX PX 3 to n1
        t=1  client c3  begins attempt 1: T1=1, sends SET NX PX 3 to n1
        t=3  node n1    c1's key expires
        t=3  client c1  stops believing: its clock reached the lease's deadline
        t=3  node n1    gets c2's SET after 2 ticks in the network and sets c2's key, expiring when n1's clock reads 6
        t=3  client c1  releases with DEL on n1, deleting c2's key on n1
        t=3  client c2  acquires n1 (T2=3, validity 1), believes it holds the lock until its clock reads 4
        t=3  node n1    gets c3's SET after 2 ticks in the network and sets c3's key, expiring when n1's clock reads 6
        t=3  client c3  acquires n1 (T2=3, validity 1), believes it holds the lock until its clock reads 4  ✗ mutual exclusion
                        at t=3 c2 believes it holds the lock until its clock reads 4 (it reads 3), and c3 believes it holds the lock until its clock reads 4 (it reads 3)
    "#]].assert_eq(&story);
    // The key sentences, in the order redis.io tells them.
    let mut rest = story.as_str();
    for sentence in [
        "client c1  acquires n1",
        "client c1  stops believing",
        "sets c2's key",
        "client c1  releases with DEL on n1, deleting c2's key on n1",
        "client c3  acquires n1",
        "c2 believes it holds the lock",
    ] {
        let at = rest
            .find(sentence)
            .unwrap_or_else(|| panic!("{sentence:?} after the sentences before it: {story}"));
        rest = &rest[at + sentence.len()..];
    }
}

/// A storage that checks and applies in two steps: the stale op passes its check before the
/// newer one is applied, and is applied after it, and the story says so.
#[test]
fn the_two_step_storage_story_shows_both_checks_before_the_stale_apply() {
    let story = check::story(
        &scenario("fencing-token-two-step-check"),
        property::STORAGE_SAFETY,
    )
    .expect("violated")
    .to_text();
    let mut rest = story.as_str();
    for sentence in [
        "storage    checks c1's read (token 1): token 1 is the first the storage checks; it applies the op in a later step",
        "client c2  acquires",
        "storage    checks c2's read (token 2)",
        "storage    applies c2's read (token 2)",
        "storage    applies c1's read (token 1), a stale holder's op: it passed the storage's check when it arrived, and is not checked again",
    ] {
        let at = rest
            .find(sentence)
            .unwrap_or_else(|| panic!("{sentence:?} after the sentences before it: {story}"));
        rest = &rest[at + sentence.len()..];
    }
}

/// Counts are said with their plurals, and a count is not read as a need: a one-node lock's
/// failed round is "0 nodes said yes, it needs 1", not "0 of the 1 nodes it needs".
#[test]
fn counts_are_told_with_their_plurals() {
    let story = check::story(
        &scenario("single-node-unlock-with-del"),
        property::MUTUAL_EXCLUSION,
    )
    .expect("violated")
    .to_text();
    assert!(
        story.contains("(T2=0: 0 nodes said yes, it needs 1)"),
        "{story}"
    );
    let livelock = check::story(
        &scenario("contention-livelock"),
        property::EVENTUALLY_ACQUIRED,
    )
    .expect("violated")
    .to_text();
    assert!(
        livelock.contains("(T2=1: 1 node said yes, it needs 2)"),
        "{livelock}"
    );
    for text in [&story, &livelock] {
        assert!(
            !text.contains("of the 1 nodes") && !text.contains(" 1 ticks"),
            "{text}"
        );
    }
    // The book's page says the size of a one-node lock with its plurals too.
    let dir = std::env::temp_dir().join(format!("redlock-lab-plurals-{}", std::process::id()));
    let out = redlock_lab(&[
        "book",
        "--out",
        dir.to_str().expect("a utf-8 path"),
        "lock-extension-unbounded",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let page = std::fs::read_to_string(dir.join("lock-extension-unbounded.html")).expect("a page");
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        page.contains("1 node × 2 clients, TTL 3 ticks and drift 1 tick."),
        "{page}"
    );
}

/// A fencing write-back to the node whose own `SET` gave the largest counter changes
/// nothing, and the story says so instead of "its counter goes from 1 to 1".
#[test]
fn a_write_back_that_changes_nothing_says_so() {
    let story = check::story(
        &scenario("fencing-lock-quorum-node-clock-jump"),
        property::STORAGE_SAFETY,
    )
    .expect("violated")
    .to_text();
    assert!(
        story.contains("node n1    takes c2's fencing write-back: its counter is already 2"),
        "{story}"
    );
    assert!(
        story.contains("node n3    takes c2's fencing write-back: its counter goes from 1 to 2"),
        "{story}"
    );
    assert!(
        story.contains("client c2  completes its write-back on n1 n3 (T2=2"),
        "{story}"
    );
}

/// A liveness run breaks where the last client gives up for good, not on whatever line
/// happens to end the run (a restart delay running out after the client stopped trying).
#[test]
fn the_liveness_mark_sits_on_the_round_that_gives_up() {
    let story = check::story(
        &scenario("majority-crash-delayed-restart-gives-up"),
        property::EVENTUALLY_ACQUIRED,
    )
    .expect("violated")
    .to_text();
    let marked = story
        .lines()
        .find(|l| l.contains('✗'))
        .expect("a breaking line");
    assert!(
        marked.contains("client c1  fails to acquire (T2=2: 1 node said yes, it needs 2)")
            && marked.ends_with("it has no attempt left and gives up  ✗ eventually acquired"),
        "{story}"
    );
    assert!(
        story
            .trim_end()
            .ends_with("node n3    serves again: its restart delay is over"),
        "{story}"
    );
    // A client that still tries when time runs out: the mark is where time reaches the
    // horizon, not on the key its last round set.
    let timeout = story_text("long-connection-timeout", property::EVENTUALLY_ACQUIRED);
    assert!(
        timeout.trim_end().ends_with(
            "t=14  time       time passes to t=14  ✗ eventually acquired\n                 \
             the run ends at t=14 and no client ever acquired the lock"
        ),
        "{timeout}"
    );
    let crash = story_text("client-crash-while-holding", property::EVENTUALLY_ACQUIRED);
    let marked = crash.lines().find(|l| l.contains('✗')).expect("a mark");
    assert!(
        marked.starts_with("t=3  client c2  fails to acquire")
            && marked.contains("it has no attempt left and gives up"),
        "{crash}"
    );
}

/// The text of `name`'s story of `property`.
fn story_text(name: &str, property: &str) -> String {
    check::story(&scenario(name), property)
        .expect("violated")
        .to_text()
}

/// The storage stories a newcomer reads to learn about fencing.
const STORAGE_STORIES: [(&str, &str); 6] = [
    ("gc-pause-after-acquisition", property::NO_LOST_UPDATE),
    ("network-delayed-write", property::NO_LOST_UPDATE),
    (
        "fencing-counter-after-acquire-pause",
        property::STORAGE_SAFETY,
    ),
    ("fencing-lock-quorum-counter-lost", property::NO_LOST_UPDATE),
    ("fencing-on-writes-only", property::NO_LOST_UPDATE),
    ("antirez-random-token-cas", property::STORAGE_SAFETY),
];

/// One word, *token*, for the number the storage compares, and the story says where it came
/// from: an ideal counter, the counter node's `INCR`, or the lock nodes' counters. The ghost
/// epoch is never named; when a token does not follow the order of the acquisitions, the op
/// says which lock it belongs to.
#[test]
fn the_token_the_storage_compares_has_one_word_and_an_origin() {
    for (name, property) in STORAGE_STORIES {
        let text = story_text(name, property);
        assert!(!text.contains("epoch"), "{name}:\n{text}");
    }
    let ideal = story_text("gc-pause-after-acquisition", property::NO_LOST_UPDATE);
    assert!(
        ideal.contains(
            "believes it holds the lock until its clock reads 3, token 1 (from an ideal counter: \
             one above every earlier lock's)"
        ),
        "{ideal}"
    );
    let counter = story_text(
        "fencing-counter-after-acquire-pause",
        property::STORAGE_SAFETY,
    );
    assert!(
        counter.contains("counter    INCR for c1: token 2"),
        "{counter}"
    );
    assert!(
        counter
            .contains("goes ahead with its read (token still to take, for the 1st lock acquired)")
            && counter.contains("applies c1's read (token 2, for the 1st lock acquired)"),
        "{counter}"
    );
    assert!(
        counter.contains(
            "the storage applied an op of an earlier lock after one of the 2nd lock acquired"
        ),
        "{counter}"
    );
    // Counters that agree need no write-back: the token is the counter the quorum returned.
    let quorum = story_text("fencing-lock-quorum-counter-lost", property::NO_LOST_UPDATE);
    assert!(
        quorum.contains("client c1  acquires n1 n2 (T2=0, validity 3), believes it holds the lock until its clock reads 3, fencing token 1\n"),
        "{quorum}"
    );
    let written_back = story_text(
        "fencing-lock-quorum-node-clock-jump",
        property::STORAGE_SAFETY,
    );
    assert!(
        written_back.contains("the largest fencing counter among them is 2")
            && written_back.contains("fencing token 2\n"),
        "{written_back}"
    );
}

/// A write says the value it stores, so "write 1" is not read as an op's number.
#[test]
fn a_write_says_the_value_it_stores() {
    for (name, property) in STORAGE_STORIES {
        let text = story_text(name, property);
        assert!(!text.contains("write 1"), "{name}:\n{text}");
    }
    let text = story_text("gc-pause-after-acquisition", property::NO_LOST_UPDATE);
    assert!(
        text.contains(
            "storage    applies c2's write counter=1 (token 2): the storage checks no token; \
             the counter is now 1"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "applies c1's read (token 1): the storage checks no token; the counter reads 0"
        ),
        "{text}"
    );
}

/// The lease check lets the op go ahead, the pause falls before the op leaves, and the op
/// leaves when the pause ends, unchecked: no op is "sent" before the pause that holds it.
#[test]
fn the_pause_is_told_before_the_op_leaves() {
    let text = story_text("gc-pause-after-acquisition", property::NO_LOST_UPDATE);
    assert!(
        !text.contains("sends write") && !text.contains("sends read"),
        "{text}"
    );
    let ahead = text
        .find("still valid, goes ahead with its write counter=1 (token 1)")
        .expect("the check");
    let paused = text
        .find(
            "client c1  is paused (GC) after its lease check, before its write counter=1 \
             (token 1) leaves",
        )
        .expect("the pause");
    let sent = text
        .find(
            "client c1  wakes from its pause and sends its write counter=1 (token 1), checked \
             at t=0, without checking again",
        )
        .expect("the send");
    assert!(ahead < paused && paused < sent, "{text}");
}

/// A storage that applies a stale holder's op says why: the comparison its protection made
/// (tokens side by side, a mark, or no check at all); a refused op says what it was below.
#[test]
fn the_storage_says_why_it_applied_or_refused_an_op() {
    let counter = story_text(
        "fencing-counter-after-acquire-pause",
        property::STORAGE_SAFETY,
    );
    assert!(
        counter.contains(
            "applies c1's read (token 2, for the 1st lock acquired), a stale holder's op: token 2 \
             is not below 1, the largest the storage has accepted; the counter reads 0  ✗ storage safety"
        ),
        "{counter}"
    );
    let quorum = story_text("fencing-lock-quorum-counter-lost", property::NO_LOST_UPDATE);
    assert!(
        quorum.contains(
            "applies c1's write counter=1 (token 1), a stale holder's op: token 1 is not below 1, \
             the largest the storage has accepted; the counter is now 1"
        ),
        "{quorum}"
    );
    let writes_only = story_text("fencing-on-writes-only", property::NO_LOST_UPDATE);
    assert!(
        writes_only.contains("the storage does not check a read")
            && writes_only.contains(
                "applies c1's write counter=1 (token 1), delayed 4 ticks in the network, a stale \
                 holder's op: token 1 is the first the storage checks; the counter is now 1"
            ),
        "{writes_only}"
    );
    let cas = story_text("antirez-random-token-cas", property::STORAGE_SAFETY);
    assert!(
        cas.contains(
            "a stale holder's op: the storage does not check a mark; the storage's mark is now token 1"
        ),
        "{cas}"
    );
    // A fenced storage refuses a stale op in the simulator's fenced pause: it names the token
    // the op fell below.
    let file = catalog::find_world("pause-past-validity-fenced").expect("a simulator world");
    let config = redlock_lab::sim::SimConfig::from_scenario(&file.scenario().expect("valid"))
        .expect("a simulator world");
    let refusals: Vec<String> = (0..20)
        .flat_map(|seed| redlock_lab::sim::run(&config, seed).expect("valid").trace)
        .filter_map(|entry| match entry.event {
            redlock_lab::sim::TraceEvent::Moment(moment) => match moment.event {
                Event::OpArrived { applied: false, .. } => Some(moment.words()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert!(!refusals.is_empty(), "no refusal in 20 seeds");
    for words in &refusals {
        assert!(
            words.starts_with("rejects c")
                && words.contains(", the largest the storage has accepted")
                && words.contains(" is below "),
            "{words}"
        );
    }
}

/// `--why` names what a liveness scenario teaches: rounds retried in lockstep split the votes
/// (not only the partition that frames them), and a holder that extends without a cap starves
/// the others (not "no fault").
#[test]
fn why_names_the_mistake_a_liveness_scenario_teaches() {
    let livelock = redlock_lab(&["check", "--why", "contention-livelock"]);
    assert_eq!(livelock.status.code(), Some(0), "{}", stderr(&livelock));
    assert!(
        stdout(&livelock).contains(
            "contention-livelock: eventually acquired needs [partition, lockstep retries]: both \
             the partition and retrying in lockstep (no random delay between rival rounds) are \
             needed; either alone is harmless."
        ),
        "{}",
        stdout(&livelock)
    );
    let unbounded = redlock_lab(&["check", "--why", "lock-extension-unbounded"]);
    assert_eq!(unbounded.status.code(), Some(0), "{}", stderr(&unbounded));
    let text = stdout(&unbounded);
    assert!(
        text.contains(
            "lock-extension-unbounded: eventually acquired needs [unbounded extensions]: \
             extending without a cap is needed"
        ),
        "{text}"
    );
    assert!(!text.contains("no fault or mistake is needed"), "{text}");
}

/// A clock step back that brings a belief back is told, right after the jump, by both
/// executors: the checker's story and the simulator's trace.
#[test]
fn a_belief_a_clock_step_brings_back_is_told() {
    let story = story_text(
        "client-clock-jump-backward-past-drift",
        property::MUTUAL_EXCLUSION,
    );
    assert!(
        story.contains(
            "client c1  clock jumps -2 (it now reads 2)\nt=4  client c1  believes it holds the \
             lock again: its clock is back before the lease's deadline  ✗ mutual exclusion"
        ),
        "{story}"
    );
    // The simulator: a holder whose op is still on its way when its belief ends keeps its
    // lease; a step of its clock back, scheduled just after, brings the belief back.
    use redlock_lab::sim::{Fault, FaultPlan, ScheduledFault, TraceEvent};
    let world = catalog::find_world("pause-past-validity").expect("a simulator world");
    let config = SimConfig::from_scenario(&world.scenario().expect("valid")).expect("valid");
    let mut returned = 0;
    for seed in 0..30 {
        let first = redlock_lab::sim::run(&config, seed).expect("valid");
        let Some((at, client)) = first.trace.iter().find_map(|entry| match &entry.event {
            TraceEvent::Moment(m) if m.event == Event::BeliefEnded => Some((entry.at, m.actor)),
            _ => None,
        }) else {
            continue;
        };
        let Actor::Client(c) = client else { continue };
        let mut schedule = first.schedule.clone();
        schedule.push(ScheduledFault {
            at: Millis(at.0 + 1),
            fault: Fault::ClockJump {
                process: Process::client(usize::from(c)),
                by_ms: -40,
            },
        });
        let mut stepped = config.clone();
        stepped.faults = FaultPlan::Explicit(schedule);
        let told: Vec<_> = redlock_lab::sim::run(&stepped, seed)
            .expect("valid")
            .trace
            .into_iter()
            .filter_map(|entry| match entry.event {
                TraceEvent::Moment(moment) => Some((entry.at, moment)),
                _ => None,
            })
            .collect();
        for (i, (at, moment)) in told.iter().enumerate() {
            if moment.event != Event::BeliefReturned {
                continue;
            }
            returned += 1;
            let (jumped_at, jump) = &told[i - 1];
            assert!(
                jumped_at == at
                    && jump.actor == moment.actor
                    && matches!(jump.event, Event::ClockJumped { ticks, .. } if ticks < 0),
                "seed {seed}: {} follows {}",
                moment.sentence(),
                jump.sentence()
            );
        }
    }
    assert!(returned > 0, "no belief came back in 30 seeds");
}

/// The quorum arithmetic with a holder that locked every node: c1 (quorum 3) wins all three
/// nodes, two crashes without persistence take two of its keys, and c2 (quorum 2) wins the two
/// restarted nodes while c1 still believes. With one crash the same file holds.
#[test]
fn a_holder_with_all_three_keys_loses_the_lock_to_two_crashes_not_one() {
    let text = story_text("holder-all-nodes-two-crashes", property::MUTUAL_EXCLUSION);
    let lines = [
        "client c1  acquires n1 n2 n3 (T2=0, validity 3), believes it holds the lock",
        "node n1    crashes (no persistence), losing c1's key and restarts at once",
        "node n1    sets c2's key",
        "node n2    crashes (no persistence), losing c1's key and restarts at once",
        "node n2    sets c2's key",
        "client c2  acquires n1 n2 (T2=0, validity 3), believes it holds the lock until its clock reads 3  ✗ mutual exclusion",
    ];
    let mut rest = text.as_str();
    for line in lines {
        let at = rest
            .find(line)
            .unwrap_or_else(|| panic!("{line:?} missing or out of order in:\n{text}"));
        rest = &rest[at + line.len()..];
    }
    let one = Check::new(&scenario("holder-all-nodes-one-crash")).run();
    assert_eq!(
        one.property(property::MUTUAL_EXCLUSION).map(|p| p.verdict),
        Some(Verdict::Holds)
    );
}

/// The seed's sequential `SET`s: the story says the round asks one node at a time, names
/// each unreachable node whose timeout passed before the next is asked, measures each SET's
/// trip from its own request (not from T1), and ends with the round that took the whole lease.
#[test]
fn the_sequential_set_story_tells_each_timeout_in_turn() {
    let text = story_text(
        "seed-sequential-set-two-nodes-down",
        property::EVENTUALLY_ACQUIRED,
    );
    for line in [
        "sends SET NX PX 6 to n1 (one node at a time, the next once it answers or times out)",
        "hears nothing from n1 before its timeout, counts it as failed, and sends SET NX PX 6 to n2",
        "hears nothing from n2 before its timeout, counts it as failed, and sends SET NX PX 6 to n3",
        "sends SET NX PX 6 to n4, the next node",
        "the round took 6 ticks, no validity left",
    ] {
        assert!(text.contains(line), "missing {line:?} in:\n{text}");
    }
    assert!(
        !text.contains("after 6 ticks in the network"),
        "a SET's trip is timed from its own request:\n{text}"
    );
}
