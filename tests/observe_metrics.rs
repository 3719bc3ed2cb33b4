//! Feature `metrics`: the blocking client over in-memory nodes counts its acquisitions by
//! outcome and reason and its extensions, records every node's latency, and the watchdog counts
//! the leases it loses. A `metrics-util` debugging recorder takes them, and the tests read its
//! snapshot back.
#![cfg(feature = "metrics")]

use metrics_util::MetricKind;
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use redlock_lab::driver::watchdog::WatchdogConfig;
use redlock_lab::driver::{Acquisition, ManualClock, MemoryNode, Redlock, SharedNode};
use redlock_lab::proto::Config;
use redlock_lab::time::Millis;

const TTL: Millis = Millis(10_000);

type Nodes = Vec<SharedNode<MemoryNode>>;
type Client = Redlock<SharedNode<MemoryNode>, ManualClock, rand_chacha::ChaCha20Rng>;

fn world(n: usize) -> (ManualClock, Nodes) {
    let clock = ManualClock::new(Millis(0));
    let nodes = (0..n)
        .map(|_| SharedNode::new(MemoryNode::new(clock.clone())))
        .collect();
    (clock, nodes)
}

fn client(clock: &ManualClock, nodes: &Nodes, seed: u64) -> Client {
    let mut config = Config::new(nodes.len());
    config.retry.attempts = 1;
    Redlock::with_seed(nodes.clone(), config, clock.clone(), seed).unwrap()
}

/// One metric of a snapshot: its kind, name, labels (sorted) and value.
#[derive(Debug)]
struct Metric {
    kind: MetricKind,
    name: String,
    labels: Vec<(String, String)>,
    value: DebugValue,
}

fn metrics(snapshotter: &Snapshotter) -> Vec<Metric> {
    snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .map(|(key, _, _, value)| {
            let (kind, key) = key.into_parts();
            let mut labels: Vec<(String, String)> = key
                .labels()
                .map(|l| (l.key().to_owned(), l.value().to_owned()))
                .collect();
            labels.sort();
            Metric {
                kind,
                name: key.name().to_owned(),
                labels,
                value,
            }
        })
        .collect()
}

/// The counter `name` with exactly `labels`, 0 when never incremented.
fn counter(metrics: &[Metric], name: &str, labels: &[(&str, &str)]) -> u64 {
    let mut wanted: Vec<(String, String)> = labels
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    wanted.sort();
    metrics
        .iter()
        .find(|m| m.kind == MetricKind::Counter && m.name == name && m.labels == wanted)
        .map_or(0, |m| match m.value {
            DebugValue::Counter(count) => count,
            ref other => panic!("{name} is not a counter: {other:?}"),
        })
}

#[test]
fn acquisitions_are_counted_by_outcome_and_reason_and_every_node_has_a_latency() {
    let (clock, nodes) = world(3);
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, || {
        let mut holder = client(&clock, &nodes, 1);
        let mut rival = client(&clock, &nodes, 2);
        let mut guard = holder.lock("orders", TTL).unwrap().expect("free lock");
        assert!(guard.extend().unwrap());
        for _ in 0..2 {
            assert!(matches!(
                rival.try_lock("orders", TTL).unwrap(),
                Acquisition::NotAcquired(_)
            ));
        }
        nodes[0].with(|node| node.crash());
        nodes[1].with(|node| node.crash());
        assert!(matches!(
            rival.try_lock("invoices", TTL).unwrap(),
            Acquisition::Unreachable(_)
        ));
        assert!(!guard.extend().unwrap());
    });
    let seen = metrics(&snapshotter);
    let acquisitions = "redlock_acquisitions_total";
    assert_eq!(counter(&seen, acquisitions, &[("outcome", "acquired")]), 1);
    assert_eq!(
        counter(
            &seen,
            acquisitions,
            &[("outcome", "not_acquired"), ("reason", "held")]
        ),
        2
    );
    assert_eq!(
        counter(&seen, acquisitions, &[("outcome", "unreachable")]),
        1
    );
    let extensions = "redlock_extensions_total";
    assert_eq!(counter(&seen, extensions, &[("outcome", "extended")]), 1);
    assert_eq!(
        counter(&seen, extensions, &[("outcome", "not_extended")]),
        1
    );

    for node in ["n1", "n2", "n3"] {
        let latencies: usize = seen
            .iter()
            .filter(|m| {
                m.name == "redlock_node_latency_seconds"
                    && m.labels.contains(&("node".to_owned(), node.to_owned()))
            })
            .map(|m| match &m.value {
                DebugValue::Histogram(values) => values.len(),
                other => panic!("latency is not a histogram: {other:?}"),
            })
            .sum();
        assert!(latencies >= 5, "{node}: {latencies} latencies in {seen:?}");
    }
    let operations: Vec<&str> = seen
        .iter()
        .filter(|m| m.name == "redlock_node_latency_seconds")
        .flat_map(|m| m.labels.iter())
        .filter(|(k, _)| k == "operation")
        .map(|(_, v)| v.as_str())
        .collect();
    for operation in ["acquire", "extend", "release"] {
        assert!(operations.contains(&operation), "{operations:?}");
    }
}

#[test]
fn the_watchdog_counts_a_lost_lease() {
    // The watchdog counts on a thread of its own, which a thread's local recorder does not
    // reach: this test alone installs the global one.
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    recorder
        .install()
        .expect("the only global recorder of this binary");
    let (clock, nodes) = world(3);
    let mut redlock = client(&clock, &nodes, 1);
    let guard = redlock
        .lock("orders", Millis(3_000))
        .unwrap()
        .expect("free lock");
    std::thread::scope(|scope| {
        let watched = guard.watch(scope, WatchdogConfig::new());
        nodes[0].with(|node| node.crash());
        nodes[1].with(|node| node.crash());
        while !watched.is_lost() {
            clock.advance(Millis(100));
            watched.check_now();
            std::thread::yield_now();
        }
        watched.unlock();
    });
    let seen = metrics(&snapshotter);
    assert_eq!(
        counter(
            &seen,
            "redlock_leases_lost_total",
            &[("reason", "deadline_passed")]
        ),
        1
    );
}
