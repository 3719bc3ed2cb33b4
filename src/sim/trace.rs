//! The trace: every event of a run, stamped with true time, in the order it happened.
//!
//! Two runs of the same seed and configuration produce equal traces (`Vec<TraceEntry>: Eq`),
//! which is what the replay test compares.

use std::fmt;

use super::check::Violation;
use super::fault::{Fault, ScheduledFault};
use super::network::Message;
use super::server::Lifecycle;
use crate::node::Unavailable;
use crate::proto::{Failure, Op, Token};
use crate::storage::{StorageOp, StorageReply};
use crate::time::{Millis, Unit};

/// One event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceEvent {
    /// A scheduled fault struck.
    Fault(Fault),
    /// A scheduled fault did not apply in the current state (a crash of a node that is down).
    FaultIgnored(Fault),
    /// A message was handed to the network and will arrive at `arrives`.
    Sent {
        /// The message.
        message: Message,
        /// Its arrival time.
        arrives: Millis,
    },
    /// A message was lost (random loss, or an isolated node at either end).
    Lost {
        /// The message.
        message: Message,
    },
    /// A node ran a command on its clock reading `local`.
    NodeApplied {
        /// Which node.
        node: usize,
        /// Which client sent it.
        client: usize,
        /// The operation.
        op: Op,
        /// The node's clock.
        local: Millis,
        /// Applied, not applied, or refused while down or restarting.
        result: Result<bool, Unavailable>,
    },
    /// A node crashed or restarted.
    Node {
        /// Which node.
        node: usize,
        /// What happened.
        lifecycle: Lifecycle,
    },
    /// A client started acquiring (a new `Lock`), on its clock reading `local`.
    AcquireStarted {
        /// Which client.
        client: usize,
        /// Its clock.
        local: Millis,
    },
    /// A client acquired the lock: epoch `epoch` (the fencing token), believing until its
    /// clock reads `deadline`.
    Acquired {
        /// Which client.
        client: usize,
        /// The acquisition's number in true-time order, from 1.
        epoch: u32,
        /// The token at the nodes.
        token: Token,
        /// Validity left at T2.
        validity: Millis,
        /// `T1 + ttl − drift` on the client's clock.
        deadline: Millis,
        /// The client's clock when it learned it.
        local: Millis,
    },
    /// A round failed and the client will retry.
    Retrying {
        /// Which client.
        client: usize,
        /// Why.
        failure: Failure,
    },
    /// The client gave up this acquisition.
    NotAcquired {
        /// Which client.
        client: usize,
        /// Why the last round failed.
        failure: Failure,
    },
    /// A holder asked every node to extend its lease (compare-and-pexpire).
    ExtensionStarted {
        /// Which client.
        client: usize,
        /// Its clock.
        local: Millis,
    },
    /// An extension won: the holder believes until its clock reads `deadline`.
    Extended {
        /// Which client.
        client: usize,
        /// The new deadline on its clock.
        deadline: Millis,
    },
    /// An extension failed; the old deadline stands.
    NotExtended {
        /// Which client.
        client: usize,
        /// Why.
        failure: Failure,
    },
    /// The holder ran `INCR` on the separate counter node and took its value as its token.
    TokenTaken {
        /// Which client.
        client: usize,
        /// The counter's new value.
        token: u32,
    },
    /// The separate counter node crashed and restarted at once, keeping `counter`.
    CounterCrashed {
        /// The counter after the restart.
        counter: u64,
    },
    /// The holder's clock reached its deadline.
    Expired {
        /// Which client.
        client: usize,
        /// Its epoch.
        epoch: u32,
    },
    /// The client began releasing (it stopped believing).
    ReleaseStarted {
        /// Which client.
        client: usize,
        /// Its epoch (0 if it never acquired).
        epoch: u32,
    },
    /// The release round ended.
    Released {
        /// Which client.
        client: usize,
        /// On how many nodes its key was deleted.
        deleted: usize,
    },
    /// The storage ran an operation.
    StorageApplied {
        /// Which client sent it.
        client: usize,
        /// The operation.
        op: StorageOp,
        /// The answer.
        reply: StorageReply,
    },
    /// A client stopped (a process pause) until `until`.
    Paused {
        /// Which client.
        client: usize,
        /// True time it resumes.
        until: Millis,
    },
    /// A paused client resumed.
    Resumed {
        /// Which client.
        client: usize,
    },
    /// A holder checked its lease and decided on a storage operation, which it sends at its
    /// next step (a pause in between is Kleppmann's pause).
    Checked {
        /// Which client.
        client: usize,
        /// The operation it will send.
        op: StorageOp,
        /// Its clock at the check.
        local: Millis,
    },
    /// A checked property failed.
    Violation(Violation),
}

/// An event and the true time it happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceEntry {
    /// True time.
    pub at: Millis,
    /// What happened.
    pub event: TraceEvent,
}

/// A clock reading as the stories print it (see [`Millis::since_origin`]).
fn reads(clock: Millis) -> i64 {
    clock.since_origin()
}

impl fmt::Display for TraceEntry {
    /// One event in the words the checker's stories use (`c1 acquires …, believes it holds
    /// the lock until its clock reads …`, `n1 sets c1's key, expiring when n1's clock reads
    /// …`, `storage applies c1's write 1 (epoch 1)`), with clock readings in ms.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:>8}  ", format!("t={}", self.at.0))?;
        match self.event {
            TraceEvent::NodeApplied {
                node,
                client,
                op,
                local,
                result,
            } => node_applied(f, node, client, op, local, result),
            TraceEvent::Node { node, lifecycle } => tell_lifecycle(f, node, lifecycle),
            TraceEvent::Fault(_)
            | TraceEvent::FaultIgnored(_)
            | TraceEvent::Sent { .. }
            | TraceEvent::Lost { .. }
            | TraceEvent::Violation(_) => self.event.tell_fault_or_message(f),
            TraceEvent::AcquireStarted { .. }
            | TraceEvent::Acquired { .. }
            | TraceEvent::TokenTaken { .. }
            | TraceEvent::CounterCrashed { .. }
            | TraceEvent::Retrying { .. }
            | TraceEvent::NotAcquired { .. } => self.event.tell_acquisition(f),
            TraceEvent::ExtensionStarted { .. }
            | TraceEvent::Extended { .. }
            | TraceEvent::NotExtended { .. }
            | TraceEvent::Expired { .. }
            | TraceEvent::ReleaseStarted { .. }
            | TraceEvent::Released { .. } => self.event.tell_lease(f),
            TraceEvent::StorageApplied { .. }
            | TraceEvent::Paused { .. }
            | TraceEvent::Resumed { .. }
            | TraceEvent::Checked { .. } => self.event.tell_storage(f),
        }
    }
}

impl TraceEvent {
    /// A fault, a message on the network, or a violation.
    fn tell_fault_or_message(self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceEvent::Fault(fault) => write!(f, "FAULT {fault}"),
            TraceEvent::FaultIgnored(fault) => write!(f, "fault ignored (does not apply): {fault}"),
            TraceEvent::Sent { message, arrives } => write!(
                f,
                "{} sends {} to {} (arrives t={})",
                message.from, message.payload, message.to, arrives.0
            ),
            TraceEvent::Lost { message } => write!(
                f,
                "{}'s {} to {} is lost in the network",
                message.from, message.payload, message.to
            ),
            TraceEvent::Violation(violation) => write!(f, "VIOLATION {violation}"),
            other => unreachable!("`TraceEntry::fmt` sends {other:?} elsewhere"),
        }
    }

    /// A client's acquisition: its attempts, its token, and how they end.
    fn tell_acquisition(self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceEvent::AcquireStarted { client, local } => {
                write!(f, "c{} begins an attempt: T1={}", client + 1, reads(local))
            }
            TraceEvent::Acquired {
                client,
                epoch,
                token,
                validity,
                deadline,
                local,
            } => write!(
                f,
                "c{} acquires epoch {epoch} (T2={}, validity {}, token {token}), believes it holds the lock until its clock reads {}",
                client + 1,
                reads(local),
                validity.0,
                reads(deadline)
            ),
            TraceEvent::TokenTaken { client, token } => write!(
                f,
                "c{} runs INCR on the counter node and takes token {token}",
                client + 1
            ),
            TraceEvent::CounterCrashed { counter } => write!(
                f,
                "the counter node crashes and restarts at once: its counter is {counter}"
            ),
            TraceEvent::Retrying { client, failure } => write!(
                f,
                "c{} fails to acquire ({}) and retries",
                client + 1,
                failure.words(Unit::Millis)
            ),
            TraceEvent::NotAcquired { client, failure } => write!(
                f,
                "c{} fails to acquire ({})",
                client + 1,
                failure.words(Unit::Millis)
            ),
            other => unreachable!("`TraceEntry::fmt` sends {other:?} elsewhere"),
        }
    }

    /// A holder's lease: its extensions, its end and its release.
    fn tell_lease(self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceEvent::ExtensionStarted { client, local } => write!(
                f,
                "c{} extends its lease on every node (clock {})",
                client + 1,
                reads(local)
            ),
            TraceEvent::Extended { client, deadline } => write!(
                f,
                "c{} extends: it believes it holds the lock until its clock reads {}",
                client + 1,
                reads(deadline)
            ),
            TraceEvent::NotExtended { client, failure } => write!(
                f,
                "c{} fails to extend ({}); its old deadline stands",
                client + 1,
                failure.words(Unit::Millis)
            ),
            TraceEvent::Expired { client, epoch } => write!(
                f,
                "c{} stops believing: its clock reached the deadline of epoch {epoch}",
                client + 1
            ),
            TraceEvent::ReleaseStarted { client, epoch } => {
                write!(f, "c{} releases (epoch {epoch})", client + 1)
            }
            TraceEvent::Released { client, deleted } => write!(
                f,
                "c{}'s release deleted its key on {deleted} nodes",
                client + 1
            ),
            other => unreachable!("`TraceEntry::fmt` sends {other:?} elsewhere"),
        }
    }

    /// A holder's work on the storage: its check, its pause and the storage's answer.
    fn tell_storage(self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceEvent::StorageApplied { client, op, reply } => match reply {
                StorageReply::Value(v) => {
                    write!(f, "storage applies c{}'s {op}: counter {v}", client + 1)
                }
                StorageReply::Done => write!(f, "storage applies c{}'s {op}", client + 1),
                StorageReply::Rejected => write!(f, "storage rejects c{}'s {op}", client + 1),
            },
            TraceEvent::Paused { client, until } => {
                write!(f, "c{} is paused (GC) until t={}", client + 1, until.0)
            }
            TraceEvent::Resumed { client } => write!(f, "c{} wakes from its pause", client + 1),
            TraceEvent::Checked { client, op, local } => write!(
                f,
                "c{} checks its lease (clock {}) and decides to send its {op}",
                client + 1,
                reads(local)
            ),
            other => unreachable!("`TraceEntry::fmt` sends {other:?} elsewhere"),
        }
    }
}

/// A node's command, what came of it, and the node's clock.
fn node_applied(
    f: &mut fmt::Formatter<'_>,
    node: usize,
    client: usize,
    op: Op,
    local: Millis,
    result: Result<bool, Unavailable>,
) -> fmt::Result {
    let (n, c) = (node + 1, client + 1);
    match (op, result) {
        (_, Err(_)) => write!(f, "n{n} is not serving: c{c}'s {op} fails"),
        (Op::SetNxPx { ttl, .. }, Ok(true)) => write!(
            f,
            "n{n} sets c{c}'s key, expiring when n{n}'s clock reads {}",
            reads(local) + ttl.0 as i64
        ),
        (Op::SetNxPx { .. }, Ok(false)) => {
            write!(f, "n{n} refuses c{c}'s SET: another key is live")
        }
        (Op::PExpireIfEq { ttl, .. }, Ok(true)) => write!(
            f,
            "n{n} extends c{c}'s key, now expiring when n{n}'s clock reads {}",
            reads(local) + ttl.0 as i64
        ),
        (Op::PExpireIfEq { .. }, Ok(false)) => {
            write!(f, "n{n} refuses c{c}'s extension: its key is not there")
        }
        (Op::RaiseFence { to, .. }, Ok(true)) => write!(
            f,
            "n{n} takes c{c}'s fencing write-back: its counter is now at least {to}"
        ),
        (Op::RaiseFence { .. }, Ok(false)) => write!(
            f,
            "n{n} refuses c{c}'s fencing write-back: c{c}'s key is not there"
        ),
        (Op::DelIfEq { .. }, Ok(true)) => {
            write!(f, "n{n} deletes c{c}'s key (compare-and-delete)")
        }
        (Op::DelIfEq { .. }, Ok(false)) => {
            write!(
                f,
                "n{n} keeps its key: it is not c{c}'s (compare-and-delete)"
            )
        }
        (Op::Del, Ok(applied)) => write!(
            f,
            "n{n} runs c{c}'s DEL: {}",
            if applied {
                "the key is deleted"
            } else {
                "no key"
            }
        ),
    }?;
    write!(f, " [n{n}'s clock reads {}]", reads(local))
}

/// A node crashes, restarts or fails over.
fn tell_lifecycle(f: &mut fmt::Formatter<'_>, node: usize, lifecycle: Lifecycle) -> fmt::Result {
    match lifecycle {
        Lifecycle::Crashed { kept_key } => write!(
            f,
            "n{} crashes, {}",
            node + 1,
            if kept_key {
                "keeping its key on disk"
            } else {
                "losing its key"
            }
        ),
        Lifecycle::Restarted { ready_at } => write!(
            f,
            "n{} restarts, refusing requests until its clock reads {}",
            node + 1,
            reads(ready_at)
        ),
        Lifecycle::Promoted { kept_key, ready_at } => write!(
            f,
            "n{} fails over: its replica is promoted {}, refusing requests until its clock reads {}",
            node + 1,
            if kept_key {
                "with the key"
            } else {
                "without the key, which had not replicated yet"
            },
            reads(ready_at)
        ),
    }
}

/// Prints a schedule, one fault per line (for reports).
pub(crate) fn schedule_text(schedule: &[ScheduledFault]) -> String {
    if schedule.is_empty() {
        return "  (none)\n".to_owned();
    }
    schedule
        .iter()
        .map(|fault| format!("  {fault}\n"))
        .collect()
}
