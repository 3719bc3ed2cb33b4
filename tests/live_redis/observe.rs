//! Features `metrics` and `tokio` on real servers: the blocking and the async client record the
//! same metrics, with the same names and labels, for the same locks.

use std::collections::BTreeMap;

use metrics_util::debugging::{DebugValue, DebuggingRecorder};
use redlock_lab::driver::redis::asynchronous::AsyncRedlock;
use redlock_lab::time::Millis;

use crate::harness::{cluster, urls};
use crate::{client, config};

/// Every counter's value and every histogram's sample count, by name and labels.
type Seen = BTreeMap<String, u64>;

/// Runs `act` with a debugging recorder on this thread and returns what it recorded.
fn record(act: impl FnOnce()) -> Seen {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, act);
    snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .map(|(key, _, _, value)| {
            let (_, key) = key.into_parts();
            let mut labels: Vec<String> = key
                .labels()
                .map(|l| format!("{}={}", l.key(), l.value()))
                .collect();
            labels.sort();
            let count = match value {
                DebugValue::Counter(count) => count,
                DebugValue::Histogram(samples) => samples.len() as u64,
                DebugValue::Gauge(_) => panic!("{} is a gauge", key.name()),
            };
            (format!("{}{{{}}}", key.name(), labels.join(",")), count)
        })
        .collect()
}

#[test]
fn both_clients_record_the_same_metrics_for_the_same_locks() {
    let servers = cluster(3);
    let urls = urls(&servers);
    let blocking = record(|| {
        let mut a = client(&urls, config(3));
        let mut b = client(&urls, config(3));
        let mut guard = a.lock("watched", Millis(10_000)).unwrap().expect("free");
        assert!(guard.extend().unwrap());
        assert!(b.lock("watched", Millis(10_000)).unwrap().is_none());
        guard.unlock();
    });
    let asynchronous = record(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime");
        // One thread: the runtime polls the client on this one, where the recorder is.
        runtime.block_on(async {
            let mut a = AsyncRedlock::open(&urls, config(3)).unwrap();
            let mut b = AsyncRedlock::open(&urls, config(3)).unwrap();
            let mut guard = a
                .lock("watched", Millis(10_000))
                .await
                .unwrap()
                .expect("free");
            assert!(guard.extend().await.unwrap());
            assert!(b.lock("watched", Millis(10_000)).await.unwrap().is_none());
            guard.unlock().await;
        });
    });
    let counters = |seen: &Seen| -> Seen {
        seen.iter()
            .filter(|(name, _)| name.contains("_total"))
            .map(|(name, count)| (name.clone(), *count))
            .collect()
    };
    assert_eq!(counters(&blocking), counters(&asynchronous));
    assert_eq!(
        blocking.get("redlock_acquisitions_total{outcome=acquired}"),
        Some(&1),
        "{blocking:?}"
    );
    assert_eq!(
        blocking.get("redlock_acquisitions_total{outcome=not_acquired,reason=held}"),
        Some(&1)
    );
    // A round decided at quorum may leave a straggler's answer unread, so the latency series
    // are compared by operation: both clients have each, for nodes n1 to n3 only.
    for seen in [&blocking, &asynchronous] {
        let series: Vec<&String> = seen
            .keys()
            .filter(|name| name.starts_with("redlock_node_latency_seconds"))
            .collect();
        for operation in ["acquire", "extend", "release"] {
            assert!(
                series
                    .iter()
                    .any(|name| name.contains(&format!("operation={operation}"))),
                "no {operation} latency in {series:?}"
            );
        }
        assert!(
            series.iter().all(|name| ["node=n1", "node=n2", "node=n3"]
                .iter()
                .any(|n| name.contains(n))),
            "{series:?}"
        );
    }
}
