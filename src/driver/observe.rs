//! What the clients tell an observer: a span per lock operation (feature `tracing`) and
//! counters and a per-node latency histogram (feature `metrics`, through the `metrics`
//! facade).
//!
//! Every feature gate of the clients' telemetry is in this file. The blocking and the async
//! client call one function per event (an operation starts, a round is sent, a node answers,
//! the operation is decided, the watchdog loses a lease); with both features off [`Watch`] is
//! an empty struct and every function an empty body, so nothing is compiled in, not even a
//! clock reading.
//!
//! The names it emits are listed in the [`driver`](super) module's documentation.

#[cfg(feature = "tracing")]
use tracing::field::Empty;

#[cfg(any(feature = "tracing", feature = "metrics"))]
use std::time::Instant;

#[cfg(feature = "metrics")]
use crate::proto::NodeId;
#[cfg(feature = "tracing")]
use crate::proto::Reply;

// Only the core's types: every driver file calls this one, so it calls none of them.
use crate::proto::{Answer, Command, Extension, Lease, Refusal, Tally};
use crate::time::Millis;

/// How an acquisition ended, as an observer names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    Acquired,
    NotAcquired(Refusal),
    Unreachable,
    Collision,
}

/// Why the watchdog gave a lease up, as an observer names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LossKind {
    Refused,
    DeadlinePassed,
    Panicked,
}

/// Which lock operation a [`Watch`] follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Operation {
    Acquire,
    Extend,
    Release,
}

impl Operation {
    /// The `operation` label of the latency histogram.
    #[cfg(feature = "metrics")]
    fn name(self) -> &'static str {
        match self {
            Operation::Acquire => "acquire",
            Operation::Extend => "extend",
            Operation::Release => "release",
        }
    }
}

/// One lock operation as an observer sees it: its span, and when the current round was sent.
#[derive(Debug)]
pub(crate) struct Watch {
    #[cfg(feature = "metrics")]
    operation: Operation,
    #[cfg(feature = "tracing")]
    span: tracing::Span,
    #[cfg(any(feature = "tracing", feature = "metrics"))]
    sent: Instant,
}

impl Watch {
    /// An acquisition of `resource` for `ttl` begins.
    #[inline]
    pub(crate) fn acquiring(resource: &str, ttl: Millis) -> Watch {
        Watch::start(Operation::Acquire, resource, ttl)
    }

    /// An extension of the lock on `resource` begins.
    #[inline]
    pub(crate) fn extending(resource: &str) -> Watch {
        Watch::start(Operation::Extend, resource, Millis::ZERO)
    }

    /// A release of the lock on `resource` begins.
    #[inline]
    pub(crate) fn releasing(resource: &str) -> Watch {
        Watch::start(Operation::Release, resource, Millis::ZERO)
    }

    #[inline]
    #[cfg_attr(
        not(feature = "tracing"),
        expect(unused_variables, reason = "only the span reads some of them")
    )]
    fn start(operation: Operation, resource: &str, ttl: Millis) -> Watch {
        Watch {
            #[cfg(feature = "metrics")]
            operation,
            #[cfg(feature = "tracing")]
            span: span(operation, resource, ttl),
            #[cfg(any(feature = "tracing", feature = "metrics"))]
            sent: Instant::now(),
        }
    }

    /// A round's commands are about to be sent: latencies are measured from here.
    #[inline]
    pub(crate) fn round_sent(&mut self) {
        #[cfg(any(feature = "tracing", feature = "metrics"))]
        {
            self.sent = Instant::now();
        }
    }

    /// A node answered `command` (or failed with `error`).
    #[inline]
    #[cfg_attr(
        not(feature = "tracing"),
        expect(unused_variables, reason = "only the span reads some of them")
    )]
    pub(crate) fn answer(
        &self,
        command: &Command,
        answer: &Answer,
        error: Option<&dyn std::fmt::Display>,
    ) {
        #[cfg(any(feature = "tracing", feature = "metrics"))]
        let latency = self.sent.elapsed();
        #[cfg(feature = "tracing")]
        {
            let latency_us = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
            let reply = reply_name(answer.reply);
            match error {
                Some(error) => tracing::debug!(
                    name: "redlock.answer", parent: &self.span,
                    round = command.round.0, node = %command.node, answer = reply,
                    counts = answer.counts, latency_us, error = %error,
                ),
                None => tracing::debug!(
                    name: "redlock.answer", parent: &self.span,
                    round = command.round.0, node = %command.node, answer = reply,
                    counts = answer.counts, latency_us,
                ),
            }
        }
        #[cfg(feature = "metrics")]
        metrics::histogram!(
            "redlock_node_latency_seconds",
            "node" => node_label(command.node),
            "operation" => self.operation.name(),
        )
        .record(latency.as_secs_f64());
    }

    /// An acquisition ended with `decision` after `attempts` rounds; `lease` is the lock's
    /// lease if it won, and `now` reads the client's clock (only when something observes it).
    #[inline]
    #[cfg_attr(
        not(feature = "tracing"),
        expect(unused_variables, reason = "only the span reads some of them")
    )]
    pub(crate) fn acquisition(
        &self,
        decision: Decision,
        attempts: u32,
        lease: Option<&Lease>,
        now: impl FnOnce() -> Millis,
    ) {
        #[cfg(any(feature = "tracing", feature = "metrics"))]
        let (outcome, reason) = match decision {
            Decision::Acquired => ("acquired", None),
            Decision::NotAcquired(reason) => ("not_acquired", Some(reason_name(reason))),
            Decision::Unreachable => ("unreachable", None),
            Decision::Collision => ("collision", None),
        };
        #[cfg(feature = "tracing")]
        {
            self.span.record("decision", outcome);
            self.span.record("rounds", attempts);
            if let Some(reason) = reason {
                self.span.record("reason", reason);
            }
            if let Some(lease) = lease {
                self.span
                    .record("validity_left_ms", (lease.deadline - now()).0);
            }
        }
        #[cfg(feature = "metrics")]
        match reason {
            Some(reason) => metrics::counter!(
                "redlock_acquisitions_total", "outcome" => outcome, "reason" => reason
            )
            .increment(1),
            None => {
                metrics::counter!("redlock_acquisitions_total", "outcome" => outcome).increment(1)
            }
        }
    }

    /// An extension ended; `deadline` is the lease's deadline after it, `now` reads the clock.
    #[inline]
    #[cfg_attr(
        not(feature = "tracing"),
        expect(unused_variables, reason = "only the span reads some of them")
    )]
    pub(crate) fn extension(
        &self,
        extension: &Extension,
        deadline: Millis,
        now: impl FnOnce() -> Millis,
    ) {
        #[cfg(any(feature = "tracing", feature = "metrics"))]
        let outcome = match extension {
            Extension::Extended { .. } => "extended",
            Extension::NotExtended { .. } => "not_extended",
        };
        #[cfg(feature = "tracing")]
        {
            self.span.record("decision", outcome);
            self.span.record("validity_left_ms", (deadline - now()).0);
        }
        #[cfg(feature = "metrics")]
        metrics::counter!("redlock_extensions_total", "outcome" => outcome).increment(1);
    }

    /// A release ended with `released` (`None`: sent from a dropped guard, not awaited).
    #[inline]
    #[cfg_attr(
        not(feature = "tracing"),
        expect(unused_variables, reason = "only the span records a release")
    )]
    pub(crate) fn release(&self, released: Option<&Tally>) {
        #[cfg(feature = "tracing")]
        match released {
            Some(tally) => {
                let decision = if tally.applied.is_empty() {
                    "not_released"
                } else {
                    "released"
                };
                self.span.record("decision", decision);
                self.span.record("applied", tally.applied.len());
            }
            None => {
                self.span.record("decision", "dropped");
            }
        }
    }
}

/// The watchdog gave up the lease whose deadline was `deadline`, at `at` (client clock).
#[inline]
#[cfg_attr(
    not(feature = "tracing"),
    expect(unused_variables, reason = "only the event reads some of them")
)]
pub(crate) fn lease_lost(kind: LossKind, deadline: Millis, at: Millis) {
    #[cfg(any(feature = "tracing", feature = "metrics"))]
    let reason = match kind {
        LossKind::Refused => "refused",
        LossKind::DeadlinePassed => "deadline_passed",
        LossKind::Panicked => "panicked",
    };
    #[cfg(feature = "tracing")]
    tracing::warn!(
        name: "redlock.lease_lost",
        reason, deadline_ms = deadline.0, at_ms = at.0,
    );
    #[cfg(feature = "metrics")]
    metrics::counter!("redlock_leases_lost_total", "reason" => reason).increment(1);
}

/// Registers a description and unit for every metric the clients record, so an exporter can
/// print them (`# HELP` lines in Prometheus). Call it once after installing a recorder.
#[cfg(feature = "metrics")]
pub fn describe_metrics() {
    use metrics::{Unit, describe_counter, describe_histogram};
    describe_counter!(
        "redlock_acquisitions_total",
        Unit::Count,
        "Lock acquisitions by outcome (acquired, not_acquired with a reason, unreachable, collision)"
    );
    describe_counter!(
        "redlock_extensions_total",
        Unit::Count,
        "Lease extensions by outcome (extended, not_extended)"
    );
    describe_counter!(
        "redlock_leases_lost_total",
        Unit::Count,
        "Leases the watchdog gave up, by reason"
    );
    describe_histogram!(
        "redlock_node_latency_seconds",
        Unit::Seconds,
        "Time from sending a round to each node's answer, per node and operation"
    );
}

/// The operation's span, with the fields its decision fills in left empty.
#[cfg(feature = "tracing")]
fn span(operation: Operation, resource: &str, ttl: Millis) -> tracing::Span {
    match operation {
        Operation::Acquire => tracing::info_span!(
            "redlock.acquire",
            resource,
            ttl_ms = ttl.0,
            decision = Empty,
            reason = Empty,
            rounds = Empty,
            validity_left_ms = Empty,
        ),
        Operation::Extend => tracing::info_span!(
            "redlock.extend",
            resource,
            decision = Empty,
            validity_left_ms = Empty,
        ),
        Operation::Release => tracing::info_span!(
            "redlock.release",
            resource,
            decision = Empty,
            applied = Empty,
        ),
    }
}

#[cfg(feature = "tracing")]
fn reply_name(reply: Reply) -> &'static str {
    match reply {
        Reply::Applied => "applied",
        Reply::NotApplied => "not_applied",
        Reply::Failed => "failed",
    }
}

#[cfg(any(feature = "tracing", feature = "metrics"))]
fn reason_name(reason: Refusal) -> &'static str {
    match reason {
        Refusal::Held => "held",
        Refusal::RestartGuard { .. } => "restart_guard",
        Refusal::TooSlow => "too_slow",
    }
}

/// `n1` …: a static label for the nodes a lock can have, so recording allocates nothing.
#[cfg(feature = "metrics")]
fn node_label(node: NodeId) -> metrics::SharedString {
    const NAMES: [&str; 16] = [
        "n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9", "n10", "n11", "n12", "n13", "n14",
        "n15", "n16",
    ];
    match NAMES.get(node.index()) {
        Some(name) => metrics::SharedString::const_str(name),
        None => metrics::SharedString::from(node.to_string()),
    }
}
