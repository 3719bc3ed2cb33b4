//! A client you can watch: the blocking client over three in-memory nodes with features
//! `tracing` and `metrics` on, printing every span as it closes and the metrics at the end.
//! `cargo run --example watch --no-default-features --features tracing,metrics` (the default
//! feature is the command line, whose dependencies this example does not need;
//! `scripts/test` checks that it builds so)
//!
//! A service would install its own subscriber (with a filter, `RUST_LOG` style) and its own
//! exporter (a Prometheus endpoint, say) instead; the client emits the same names into them.

use metrics_util::debugging::DebuggingRecorder;
use redlock_lab::driver::{ManualClock, MemoryNode, Redlock, SharedNode, describe_metrics};
use redlock_lab::proto::Config;
use redlock_lab::time::Millis;
use tracing_subscriber::fmt::format::FmtSpan;

fn main() -> Result<(), redlock_lab::driver::DriverError> {
    // Every span's fields once it closes, and the answer events (level DEBUG) inside them.
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_span_events(FmtSpan::CLOSE)
        .init();
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    recorder.install().expect("the only recorder");
    describe_metrics();

    let clock = ManualClock::new(Millis(0));
    let nodes: Vec<_> = (0..3)
        .map(|_| SharedNode::new(MemoryNode::new(clock.clone())))
        .collect();
    let mut holder = Redlock::with_seed(nodes.clone(), Config::new(3), clock.clone(), 1)?;
    let mut rival = Redlock::with_seed(nodes.clone(), Config::new(3), clock.clone(), 2)?;

    let mut guard = holder
        .lock("orders", Millis(10_000))?
        .expect("nobody holds it");
    clock.advance(Millis(2_000));
    guard.extend()?;
    // The rival is refused: one `redlock.acquire` span with `decision=not_acquired reason=held`.
    assert!(rival.lock("orders", Millis(10_000))?.is_none());
    guard.unlock();

    println!("\nmetrics:");
    for (key, _, _, value) in snapshotter.snapshot().into_vec() {
        let (_, key) = key.into_parts();
        let labels: Vec<String> = key
            .labels()
            .map(|l| format!("{}={}", l.key(), l.value()))
            .collect();
        println!("  {}{{{}}} {value:?}", key.name(), labels.join(","));
    }
    Ok(())
}
