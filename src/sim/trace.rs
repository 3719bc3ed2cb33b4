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
use crate::time::Millis;

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

impl fmt::Display for TraceEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:>8}  ", format!("t={}", self.at.0))?;
        match self.event {
            TraceEvent::Fault(fault) => write!(f, "FAULT {fault}"),
            TraceEvent::FaultIgnored(fault) => write!(f, "fault ignored (does not apply): {fault}"),
            TraceEvent::Sent { message, arrives } => write!(
                f,
                "{} → {}  {}  (arrives t={})",
                message.from, message.to, message.payload, arrives.0
            ),
            TraceEvent::Lost { message } => write!(
                f,
                "{} → {}  {}  LOST",
                message.from, message.to, message.payload
            ),
            TraceEvent::NodeApplied {
                node,
                client,
                op,
                local,
                result,
            } => {
                let result = match result {
                    Ok(true) => "applied",
                    Ok(false) => "not applied",
                    Err(_) => "refused (not serving)",
                };
                write!(
                    f,
                    "n{} runs {} from c{} at its clock {}: {result}",
                    node + 1,
                    op,
                    client + 1,
                    local.0
                )
            }
            TraceEvent::Node { node, lifecycle } => match lifecycle {
                Lifecycle::Crashed { kept_key } => write!(
                    f,
                    "n{} crashed ({})",
                    node + 1,
                    if kept_key {
                        "key kept on disk"
                    } else {
                        "key lost"
                    }
                ),
                Lifecycle::Restarted { ready_at } => write!(
                    f,
                    "n{} restarted, serving from its clock {}",
                    node + 1,
                    ready_at.0
                ),
            },
            TraceEvent::AcquireStarted { client, local } => {
                write!(
                    f,
                    "c{} starts acquiring at its clock {} (T1)",
                    client + 1,
                    local.0
                )
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
                "c{} ACQUIRED epoch {epoch} (token {token}) at its clock {}, validity {validity}, believes until its clock reads {}",
                client + 1,
                local.0,
                deadline.0
            ),
            TraceEvent::Retrying { client, failure } => {
                write!(f, "c{} round failed ({failure:?}), retrying", client + 1)
            }
            TraceEvent::NotAcquired { client, failure } => {
                write!(f, "c{} not acquired ({failure:?})", client + 1)
            }
            TraceEvent::Expired { client, epoch } => {
                write!(
                    f,
                    "c{} lease of epoch {epoch} expired on its clock",
                    client + 1
                )
            }
            TraceEvent::ReleaseStarted { client, epoch } => {
                write!(f, "c{} releases (epoch {epoch})", client + 1)
            }
            TraceEvent::Released { client, deleted } => {
                write!(
                    f,
                    "c{} released: key deleted on {deleted} nodes",
                    client + 1
                )
            }
            TraceEvent::StorageApplied { client, op, reply } => {
                write!(f, "storage runs {op:?} from c{}: {reply:?}", client + 1)
            }
            TraceEvent::Paused { client, until } => {
                write!(f, "c{} paused until t={}", client + 1, until.0)
            }
            TraceEvent::Resumed { client } => write!(f, "c{} resumed", client + 1),
            TraceEvent::Checked { client, op, local } => write!(
                f,
                "c{} checks its lease at its clock {} and will send {op:?}",
                client + 1,
                local.0
            ),
            TraceEvent::Violation(violation) => write!(f, "VIOLATION {violation}"),
        }
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
