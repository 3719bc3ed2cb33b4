//! Feature `tracing`: the blocking client over in-memory nodes emits a span per acquisition,
//! extension and release, with one event per node answer inside it, and the watchdog an event
//! when it loses a lease. A layer records every span and event, fields included, and the tests
//! read them back.
#![cfg(feature = "tracing")]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use rand_chacha::ChaCha20Rng;
use redlock_lab::driver::watchdog::WatchdogConfig;
use redlock_lab::driver::{Acquisition, Clock, ManualClock, MemoryNode, Redlock, SharedNode};
use redlock_lab::proto::Config;
use redlock_lab::time::Millis;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

const TTL: Millis = Millis(10_000);

/// Field values as text, by name.
type Fields = BTreeMap<String, String>;

impl Visit for Recorded {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.fields
            .insert(field.name().to_owned(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.fields
            .insert(field.name().to_owned(), value.to_owned());
    }
}

/// A span or an event as the layer saw it: its name, its fields, and (for an event) the name
/// of the span it happened in.
#[derive(Clone, Debug, Default)]
struct Recorded {
    name: String,
    parent: Option<String>,
    fields: Fields,
}

impl Recorded {
    fn field(&self, name: &str) -> &str {
        self.fields
            .get(name)
            .unwrap_or_else(|| panic!("{} has no field {name}: {:?}", self.name, self.fields))
    }
}

/// Every span (in the order they were opened, fields recorded later included) and event.
#[derive(Clone, Default)]
struct Collector {
    spans: Arc<Mutex<Vec<(Id, Recorded)>>>,
    events: Arc<Mutex<Vec<Recorded>>>,
}

impl Collector {
    fn spans(&self) -> Vec<Recorded> {
        let spans = self.spans.lock().unwrap();
        spans.iter().map(|(_, span)| span.clone()).collect()
    }

    fn events(&self) -> Vec<Recorded> {
        self.events.lock().unwrap().clone()
    }

    fn span(&self, name: &str) -> Recorded {
        let spans = self.spans();
        let mut named = spans.iter().filter(|span| span.name == name);
        let span = named
            .next()
            .unwrap_or_else(|| panic!("no {name} span in {spans:?}"));
        span.clone()
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Collector {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _ctx: Context<'_, S>) {
        let mut span = Recorded {
            name: attrs.metadata().name().to_owned(),
            ..Recorded::default()
        };
        attrs.record(&mut span);
        self.spans.lock().unwrap().push((id.clone(), span));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        let mut spans = self.spans.lock().unwrap();
        if let Some((_, span)) = spans.iter_mut().find(|(known, _)| known == id) {
            values.record(span);
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let mut recorded = Recorded {
            name: event.metadata().name().to_owned(),
            parent: ctx.event_span(event).map(|span| span.name().to_owned()),
            ..Recorded::default()
        };
        event.record(&mut recorded);
        self.events.lock().unwrap().push(recorded);
    }
}

/// The tests of this binary one at a time: tracing caches each callsite's interest across
/// every live subscriber, and a callsite first hit while another test's subscriber is being
/// installed on another thread can miss its first span (seen as a lost `redlock.acquire`).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Runs `act` with the collector as this thread's subscriber.
fn collect(act: impl FnOnce()) -> Collector {
    let collector = Collector::default();
    let subscriber = tracing_subscriber::registry().with(collector.clone());
    tracing::subscriber::with_default(subscriber, act);
    collector
}

type Nodes = Vec<SharedNode<MemoryNode>>;

fn world(n: usize) -> (ManualClock, Nodes) {
    let clock = ManualClock::new(Millis(0));
    let nodes = (0..n)
        .map(|_| SharedNode::new(MemoryNode::new(clock.clone())))
        .collect();
    (clock, nodes)
}

fn client(
    clock: &ManualClock,
    nodes: &Nodes,
    seed: u64,
) -> Redlock<SharedNode<MemoryNode>, ManualClock, ChaCha20Rng> {
    let mut config = Config::new(nodes.len());
    config.retry.attempts = 1;
    Redlock::with_seed(nodes.clone(), config, clock.clone(), seed).unwrap()
}

#[test]
fn an_acquisition_an_extension_and_a_release_are_spans_with_every_nodes_answer() {
    let _serial = one_at_a_time();
    let (clock, nodes) = world(3);
    let collector = collect(|| {
        let mut redlock = client(&clock, &nodes, 1);
        let mut guard = redlock.lock("orders", TTL).unwrap().expect("free lock");
        clock.advance(Millis(1_000));
        assert!(guard.extend().unwrap());
        guard.unlock();
    });
    let names: Vec<String> = collector.spans().into_iter().map(|s| s.name).collect();
    assert_eq!(
        names,
        ["redlock.acquire", "redlock.extend", "redlock.release"]
    );

    let acquire = collector.span("redlock.acquire");
    assert_eq!(acquire.field("resource"), "orders");
    assert_eq!(acquire.field("ttl_ms"), "10000");
    assert_eq!(acquire.field("decision"), "acquired");
    assert_eq!(acquire.field("rounds"), "1");
    let left: u64 = acquire.field("validity_left_ms").parse().unwrap();
    assert!(left > 0 && left <= TTL.0, "validity left {left}");
    assert!(!acquire.fields.contains_key("reason"));

    let extend = collector.span("redlock.extend");
    assert_eq!(extend.field("decision"), "extended");
    let left: u64 = extend.field("validity_left_ms").parse().unwrap();
    assert!(
        left > TTL.0 - 1_000 - 1_000,
        "a full TTL from the extension: {left}"
    );

    let release = collector.span("redlock.release");
    assert_eq!(release.field("decision"), "released");
    assert_eq!(release.field("applied"), "3");

    let answers: Vec<Recorded> = collector
        .events()
        .into_iter()
        .filter(|e| e.name == "redlock.answer")
        .collect();
    assert_eq!(answers.len(), 9, "three nodes answer each of three rounds");
    for (parent, chunk) in ["redlock.acquire", "redlock.extend", "redlock.release"]
        .iter()
        .zip(answers.chunks(3))
    {
        let nodes: Vec<&str> = chunk.iter().map(|e| e.field("node")).collect();
        assert_eq!(nodes, ["n1", "n2", "n3"]);
        for event in chunk {
            assert_eq!(event.parent.as_deref(), Some(*parent));
            assert_eq!(event.field("answer"), "applied");
            assert_eq!(event.field("counts"), "true");
            event.field("round").parse::<u32>().unwrap();
            event.field("latency_us").parse::<u64>().unwrap();
        }
    }
}

#[test]
fn a_refusal_says_why_and_a_failed_node_says_its_error() {
    let _serial = one_at_a_time();
    let (clock, nodes) = world(3);
    let mut holder = client(&clock, &nodes, 1);
    let _held = holder.lock("orders", TTL).unwrap().expect("free lock");
    let collector = collect(|| {
        let mut rival = client(&clock, &nodes, 2);
        assert!(matches!(
            rival.try_lock("orders", TTL).unwrap(),
            Acquisition::NotAcquired(_)
        ));
        nodes[0].with(|node| node.crash());
        nodes[1].with(|node| node.crash());
        assert!(matches!(
            rival.try_lock("invoices", TTL).unwrap(),
            Acquisition::Unreachable(_)
        ));
    });
    let spans = collector.spans();
    let acquisitions: Vec<&Recorded> = spans
        .iter()
        .filter(|s| s.name == "redlock.acquire")
        .collect();
    assert_eq!(acquisitions.len(), 2, "{spans:?}");
    assert_eq!(acquisitions[0].field("decision"), "not_acquired");
    assert_eq!(acquisitions[0].field("reason"), "held");
    assert!(!acquisitions[0].fields.contains_key("validity_left_ms"));
    assert_eq!(acquisitions[1].field("resource"), "invoices");
    assert_eq!(acquisitions[1].field("decision"), "unreachable");

    let failed: Vec<Recorded> = collector
        .events()
        .into_iter()
        .filter(|e| e.name == "redlock.answer" && e.field("answer") == "failed")
        .collect();
    assert!(!failed.is_empty());
    for event in &failed {
        assert!(["n1", "n2"].contains(&event.field("node")), "{event:?}");
        assert!(!event.field("error").is_empty());
    }
}

#[test]
fn the_watchdog_tells_a_lost_lease() {
    let _serial = one_at_a_time();
    // The watchdog runs on a thread of its own, which a thread's default subscriber does not
    // reach: this test alone installs the global one.
    let collector = Collector::default();
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(collector.clone()))
        .expect("the only global subscriber of this binary");
    let (clock, nodes) = world(3);
    let mut redlock = client(&clock, &nodes, 1);
    let guard = redlock
        .lock("orders", Millis(3_000))
        .unwrap()
        .expect("free lock");
    let deadline = guard.deadline();
    std::thread::scope(|scope| {
        let watched = guard.watch(scope, WatchdogConfig::new());
        nodes[0].with(|node| node.crash());
        nodes[1].with(|node| node.crash());
        while clock.now() < deadline {
            clock.advance(Millis(100));
            watched.check_now();
        }
        while !watched.is_lost() {
            watched.check_now();
            std::thread::yield_now();
        }
        watched.unlock();
    });
    let lost: Vec<Recorded> = collector
        .events()
        .into_iter()
        .filter(|e| e.name == "redlock.lease_lost")
        .collect();
    assert_eq!(lost.len(), 1, "{lost:?}");
    assert_eq!(lost[0].field("reason"), "deadline_passed");
    assert_eq!(lost[0].field("deadline_ms"), deadline.0.to_string());
    let extensions = collector
        .spans()
        .into_iter()
        .filter(|s| s.name == "redlock.extend" && s.fields.contains_key("decision"))
        .count();
    assert!(extensions > 0, "the watchdog's extensions are spans too");
}
