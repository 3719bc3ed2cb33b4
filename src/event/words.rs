//! The words of every event: one renderer for the model checker's stories and the
//! simulator's traces, so both say one happening alike.

use std::fmt;

use crate::actor::Actor;
use crate::node::Persistence;
use crate::proto::UnlockMode;
use crate::storage::{Comparison, StorageOp, ordinal};
use crate::time::Unit;

use super::what::Event;

fn deleted_words(deleted: &[(Actor, Actor)]) -> String {
    if deleted.is_empty() {
        return String::new();
    }
    let victims: Vec<String> = deleted
        .iter()
        .map(|(owner, node)| format!("{owner}'s key on {node}"))
        .collect();
    format!(", deleting {}", victims.join(" and "))
}

/// An event in words with its amounts of time in a given unit: the model's ticks, or the
/// simulator's milliseconds ([`Event::in_unit`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct InUnit<'a> {
    event: &'a Event,
    unit: Unit,
}

impl fmt::Display for Event {
    /// The event in words, without its actor (`sets c1's key, …`), amounts in model ticks.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, Unit::Ticks)
    }
}

impl fmt::Display for InUnit<'_> {
    /// The event in words, without its actor, amounts in the unit.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.event.write(f, self.unit)
    }
}

impl Event {
    /// The event in words with its amounts of time (a delay, a restart delay, a clock error)
    /// told in `unit`: a simulator run counts milliseconds where the model counts ticks.
    pub(crate) fn in_unit(&self, unit: Unit) -> InUnit<'_> {
        InUnit { event: self, unit }
    }

    /// The event in words, without its actor, amounts of time in `unit`.
    fn write(&self, f: &mut fmt::Formatter<'_>, unit: Unit) -> fmt::Result {
        // One family of variants a function: each tells only the variants sent to it here.
        match self {
            Event::KeySet { .. }
            | Event::KeyExtended { .. }
            | Event::ExtensionRefused { .. }
            | Event::SetRefused { .. }
            | Event::YesWithoutKey { .. } => self.write_key_answer(f, unit),
            Event::ReleaseServed { .. } => self.write_release_answer(f),
            Event::ValueRead { .. } => self.write_release_answer(f),
            Event::FenceRaised { .. } | Event::FenceRefused { .. } => self.write_fence_answer(f),
            Event::NotServing { .. } | Event::GuardRefused { .. } | Event::RequestLost { .. } => {
                self.write_unserved(f)
            }
            Event::Isolated { .. }
            | Event::RequestDelayed { .. }
            | Event::StorageOpDelayed { .. } => self.write_delay(f, unit),
            Event::RoundBegan { .. } | Event::NodeAsked { .. } => self.write_round_sent(f),
            Event::WriteBackBegan { .. } | Event::Acquired { .. } | Event::NotAcquired { .. } => {
                self.write_acquisition(f, unit)
            }
            Event::TooLateToExtend { .. }
            | Event::ExtensionBegan { .. }
            | Event::Extended { .. }
            | Event::ExtensionFailed { .. }
            | Event::Released { .. }
            | Event::LeaseChecked { .. }
            | Event::Paused { .. }
            | Event::Resumed
            | Event::PauseEnded { .. }
            | Event::BeliefEnded
            | Event::BeliefReturned => self.write_lease(f),
            Event::OpArrived { .. }
            | Event::OpChecked { .. }
            | Event::TokenTaken { .. }
            | Event::UpdateLost { .. }
            | Event::WriteOnStaleRead { .. } => self.write_storage(f, unit),
            Event::ClockJumped { .. }
            | Event::KeyExpired { .. }
            | Event::Restarted { .. }
            | Event::ServesAgain
            | Event::GuardEnded
            | Event::TimePassed { .. } => self.write_clock(f),
            Event::Crashed { .. }
            | Event::ClientCrashed { .. }
            | Event::ClientPartitioned { .. }
            | Event::CounterCrashed { .. } => self.write_crash(f, unit),
            Event::CounterFsynced { .. }
            | Event::Fsynced { .. }
            | Event::Replicated { .. }
            | Event::Promoted { .. } => self.write_durability(f),
        }
    }
}

impl Event {
    /// What a node answers to a client's SET or extension.
    fn write_key_answer(&self, f: &mut fmt::Formatter<'_>, unit: Unit) -> fmt::Result {
        match self {
            Event::KeySet {
                client,
                node,
                expires_at,
                early_over,
                fast_by,
                restart_over,
                counter,
            } => {
                if *restart_over {
                    write!(
                        f,
                        "its clock reads up to {} fast, so its restart delay is already over; ",
                        unit.amount(u64::from(*fast_by))
                    )?;
                }
                if let Some(old) = early_over {
                    write!(
                        f,
                        "its clock reads up to {} fast, so {old}'s key is already gone; ",
                        unit.amount(u64::from(*fast_by))
                    )?;
                }
                write!(
                    f,
                    "sets {client}'s key, expiring when {node}'s clock reads {expires_at}"
                )?;
                if let Some(counter) = counter {
                    write!(f, ", and its fencing counter becomes {counter}")?;
                }
                Ok(())
            }
            Event::KeyExtended {
                client,
                node,
                expires_at,
            } => write!(
                f,
                "extends {client}'s key, now expiring when {node}'s clock reads {expires_at}"
            ),
            Event::ExtensionRefused { client } => {
                write!(f, "refuses {client}'s extension: its key is not there")
            }
            Event::SetRefused { client, holder } => match holder {
                Some(holder) => write!(f, "refuses {client}'s SET: {holder}'s key is live"),
                None => write!(f, "refuses {client}'s SET: a third client's key is there"),
            },
            Event::YesWithoutKey { client } => {
                write!(f, "answers yes to {client}'s request and keeps nothing")
            }
            other => unreachable!("`fmt` sends {other:?} elsewhere"),
        }
    }

    /// A partition, or a message that takes longer to arrive.
    fn write_delay(&self, f: &mut fmt::Formatter<'_>, unit: Unit) -> fmt::Result {
        match self {
            Event::Isolated { ticks } => write!(
                f,
                "is cut off for {}: every message to or from it is lost",
                unit.amount(*ticks)
            ),
            Event::RequestDelayed { node, ticks } => write!(
                f,
                "its next request to {node} is delayed {} in the network",
                unit.amount(*ticks)
            ),
            Event::StorageOpDelayed { ticks } => write!(
                f,
                "its next storage op is delayed {} in the network",
                unit.amount(*ticks)
            ),
            other => unreachable!("`fmt` sends {other:?} elsewhere"),
        }
    }

    /// What a node does with a client's release.
    fn write_release_answer(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::ReleaseServed {
                client,
                compare: true,
                deleted,
            } => match deleted {
                true => write!(
                    f,
                    "gets {client}'s compare-and-delete and deletes {client}'s key"
                ),
                false => write!(
                    f,
                    "gets {client}'s compare-and-delete and deletes nothing: no key of {client}'s"
                ),
            },
            Event::ReleaseServed {
                client,
                compare: false,
                deleted,
            } => {
                let what = if *deleted {
                    "the key is deleted"
                } else {
                    "no key"
                };
                write!(f, "runs {client}'s DEL: {what}")
            }
            Event::ValueRead { client, own: true } => {
                write!(f, "answers {client}'s GET with {client}'s value")
            }
            Event::ValueRead { client, own: false } => {
                write!(f, "answers {client}'s GET with no value of {client}'s")
            }
            other => unreachable!("`fmt` sends {other:?} elsewhere"),
        }
    }

    /// What a node answers to a client's fencing write-back.
    fn write_fence_answer(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // A write-back only raises: from the node whose own `SET` gave the largest
            // counter it changes nothing, and "from 1 to 1" would read as a bump.
            Event::FenceRaised { client, from, to } if from == to => write!(
                f,
                "takes {client}'s fencing write-back: its counter is already {to}"
            ),
            Event::FenceRaised { client, from, to } => write!(
                f,
                "takes {client}'s fencing write-back: its counter goes from {from} to {to}"
            ),
            Event::FenceRefused { client } => write!(
                f,
                "refuses {client}'s fencing write-back: {client}'s key is not there"
            ),
            other => unreachable!("`fmt` sends {other:?} elsewhere"),
        }
    }

    /// A request that no node serves: the node is down or guarded, or the request is lost.
    fn write_unserved(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::NotServing { client, restarting } => {
                let what = if *restarting {
                    "is restarting"
                } else {
                    "is down"
                };
                write!(f, "{what}: {client}'s request fails")
            }
            Event::GuardRefused { client } => write!(
                f,
                "restarted too recently: the clients' guard keeps this yes out of {client}'s quorum"
            ),
            Event::RequestLost { node } => {
                write!(f, "its request to {node} is lost in the network")
            }
            other => unreachable!("`fmt` sends {other:?} elsewhere"),
        }
    }

    /// A client's acquisition round sends its SETs: to every node, or to the next one.
    fn write_round_sent(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::RoundBegan {
                attempt,
                t1,
                ttl,
                to,
                one_at_a_time,
            } => {
                write!(
                    f,
                    "begins attempt {attempt}: T1={t1}, sends SET NX PX {ttl} to {to}"
                )?;
                if *one_at_a_time {
                    f.write_str(" (one node at a time, the next once it answers or times out)")?;
                }
                Ok(())
            }
            Event::NodeAsked {
                node,
                ttl,
                silent: Some(silent),
            } => write!(
                f,
                "hears nothing from {silent} before its timeout, counts it as failed, and sends SET NX PX {ttl} to {node}"
            ),
            Event::NodeAsked {
                node,
                ttl,
                silent: None,
            } => write!(f, "sends SET NX PX {ttl} to {node}, the next node"),
            other => unreachable!("`fmt` sends {other:?} elsewhere"),
        }
    }

    /// A client's acquisition round, from its answers to its verdict.
    fn write_acquisition(&self, f: &mut fmt::Formatter<'_>, unit: Unit) -> fmt::Result {
        match self {
            Event::WriteBackBegan { on, t2, fence } => write!(
                f,
                "wins {on} (T2={t2}); the largest fencing counter among them is {fence}, and it writes {fence} back to every node it reaches before it counts as acquired"
            ),
            Event::Acquired {
                on,
                t2,
                validity,
                believes_until,
                fence,
                by_write_back,
                ideal_token,
            } => {
                let how = if *by_write_back {
                    "completes its write-back on"
                } else {
                    "acquires"
                };
                write!(
                    f,
                    "{how} {on} (T2={t2}, validity {validity}), believes it holds the lock until its clock reads {believes_until}"
                )?;
                if let Some(fence) = fence {
                    write!(f, ", fencing token {fence}")?;
                }
                if let Some(token) = ideal_token {
                    write!(
                        f,
                        ", token {token} (from an ideal counter: one above every earlier lock's)"
                    )?;
                }
                Ok(())
            }
            Event::NotAcquired {
                t2,
                gives_up,
                failure,
                deleted,
                unlock_travels,
                ..
            } => {
                let unlock = if *unlock_travels {
                    "sends its unlock to every node it reaches, without waiting for the answers"
                } else {
                    "unlocks every node it reaches"
                };
                write!(
                    f,
                    "fails to acquire (T2={t2}: {}) and {unlock}{}",
                    failure.words(unit),
                    deleted_words(deleted)
                )?;
                if *gives_up {
                    f.write_str("; it has no attempt left and gives up")?;
                }
                Ok(())
            }
            other => unreachable!("`fmt` sends {other:?} elsewhere"),
        }
    }

    /// A client's lease after it acquired: extending, checking, pausing, releasing, believing.
    fn write_lease(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::TooLateToExtend { clock, deadline } => write!(
                f,
                "does not extend: its clock reads {clock}, past its lease's deadline {deadline}"
            ),
            Event::ExtensionBegan { t1, to } => write!(
                f,
                "starts extending its lease: T1={t1}, compare-and-pexpire to {to}"
            ),
            Event::Extended {
                on,
                t2,
                believes_until,
            } => write!(
                f,
                "extends its lease on {on} (T2={t2}), believes it holds the lock until its clock reads {believes_until}"
            ),
            Event::ExtensionFailed { t2, believes_until } => write!(
                f,
                "fails to extend (T2={t2}); keeps believing until its clock reads {believes_until}"
            ),
            Event::Released {
                how, on, deleted, ..
            } => {
                write!(f, "releases with {how} on {on}{}", deleted_words(deleted))
            }
            Event::LeaseChecked {
                clock,
                deadline,
                op,
            } => match op {
                // The op leaves only after the check: a pause may still fall in between.
                Some(op) => write!(
                    f,
                    "checks its lease (clock {clock}, deadline {deadline}): still valid, goes ahead with its {op}"
                ),
                None => write!(
                    f,
                    "checks its lease (clock {clock}, deadline {deadline}): too late, gives up"
                ),
            },
            Event::Paused { op, until } => {
                f.write_str("is paused (GC)")?;
                if let Some(until) = until {
                    write!(f, " until t={until}")?;
                }
                match op {
                    Some(op) => write!(f, " after its lease check, before its {op} leaves"),
                    None => Ok(()),
                }
            }
            Event::Resumed => f.write_str("wakes from its pause"),
            Event::PauseEnded { op, checked_at } => write!(
                f,
                "wakes from its pause and sends its {op}, checked at t={checked_at}, without checking again"
            ),
            Event::BeliefEnded => {
                f.write_str("stops believing: its clock reached the lease's deadline")
            }
            Event::BeliefReturned => f.write_str(
                "believes it holds the lock again: its clock is back before the lease's deadline",
            ),
            other => unreachable!("`fmt` sends {other:?} elsewhere"),
        }
    }

    /// What the protected storage does with the holders' writes.
    fn write_storage(&self, f: &mut fmt::Formatter<'_>, unit: Unit) -> fmt::Result {
        match self {
            Event::OpArrived {
                client,
                op,
                applied,
                guard,
                counter,
                stale,
                delayed_by,
            } => {
                let verb = if *applied { "applies" } else { "rejects" };
                write_op_at_storage(f, verb, *client, op, *stale, (*delayed_by, unit), *guard)?;
                match (applied, op) {
                    (false, _) => Ok(()),
                    (true, StorageOp::Write { .. }) => write!(f, "; the counter is now {counter}"),
                    (true, StorageOp::Mark { epoch }) => {
                        write!(f, "; the storage's mark is now token {epoch}")
                    }
                    (true, StorageOp::Read { .. }) => write!(f, "; the counter reads {counter}"),
                }
            }
            Event::OpChecked {
                client,
                op,
                guard,
                stale,
                delayed_by,
            } => {
                let delay = (*delayed_by, unit);
                write_op_at_storage(f, "checks", *client, op, *stale, delay, *guard)?;
                f.write_str("; it applies the op in a later step")
            }
            Event::TokenTaken {
                client,
                token,
                stale,
            } => {
                write!(f, "INCR for {client}: token {token}")?;
                if *stale {
                    f.write_str(" (its lease is over, but it does not look)")?;
                }
                Ok(())
            }
            Event::UpdateLost {
                stale,
                stale_epoch,
                overwritten,
                overwritten_epoch,
            } => write!(
                f,
                "{stale}'s write (for the {} lock acquired) lands after {overwritten}'s (for the {}): {overwritten}'s update is lost",
                ordinal(*stale_epoch),
                ordinal(*overwritten_epoch)
            ),
            Event::WriteOnStaleRead {
                writer,
                writer_epoch,
                lost,
                lost_epoch,
            } => write!(
                f,
                "{writer}'s write (for the {} lock acquired) comes from a read taken before {lost}'s write (for the {}) landed: {lost}'s update is lost",
                ordinal(*writer_epoch),
                ordinal(*lost_epoch)
            ),
            other => unreachable!("`fmt` sends {other:?} elsewhere"),
        }
    }

    /// Clocks, expiry, the ends of a restart's delay and guard, and the passing of time.
    fn write_clock(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::ClockJumped { ticks, reads } => {
                write!(f, "clock jumps {ticks:+} (it now reads {reads})")
            }
            Event::KeyExpired { owner, by_jump } => {
                write!(f, "{owner}'s key expires")?;
                if *by_jump {
                    f.write_str(" at once: the jump moved its clock past the expiry")?;
                }
                Ok(())
            }
            Event::Restarted {
                refuses_until,
                guarded_until,
            } => {
                write!(
                    f,
                    "restarts, refusing requests until its clock reads {refuses_until}"
                )?;
                if let Some(until) = guarded_until {
                    write!(
                        f,
                        "; the clients' guard keeps its yes out of every quorum until its clock reads {until}"
                    )?;
                }
                Ok(())
            }
            Event::ServesAgain => f.write_str("serves again: its restart delay is over"),
            Event::GuardEnded => {
                f.write_str("has served long enough: the clients' guard counts its yes again")
            }
            Event::TimePassed { to } => write!(f, "time passes to t={to}"),
            other => unreachable!("`fmt` sends {other:?} elsewhere"),
        }
    }

    /// A node, a client or the counter crashes.
    fn write_crash(&self, f: &mut fmt::Formatter<'_>, unit: Unit) -> fmt::Result {
        match self {
            Event::Crashed {
                persistence,
                down_for,
                key,
                restarts,
                restart_delay,
                guarded_until,
            } => {
                write!(f, "crashes ({persistence})")?;
                match key {
                    Some((owner, false)) => write!(f, ", losing {owner}'s key")?,
                    Some((owner, true)) => write!(f, ", keeping {owner}'s key")?,
                    None => {}
                }
                match (restarts, down_for, restart_delay) {
                    (false, _, _) => f.write_str(" and stays down")?,
                    (true, 0, 0) => f.write_str(" and restarts at once")?,
                    (true, 0, delay) => write!(
                        f,
                        " and restarts, refusing requests for {} of its clock",
                        unit.amount(*delay)
                    )?,
                    (true, down, _) => write!(f, " and is down for {}", unit.amount(*down))?,
                }
                if let Some(until) = guarded_until {
                    write!(
                        f,
                        "; the clients' guard keeps its yes out of every quorum until its clock reads {until}"
                    )?;
                }
                Ok(())
            }
            Event::ClientCrashed { believed, keys } => {
                f.write_str("crashes for good")?;
                if *believed {
                    f.write_str(" while it believes it holds the lock")?;
                }
                f.write_str(": it sends no unlock")?;
                if !keys.0.is_empty() {
                    write!(f, ", and its key stays on {keys} until it expires")?;
                }
                Ok(())
            }
            Event::ClientPartitioned { believed, keys } => {
                f.write_str("is cut off from every node for good")?;
                if *believed {
                    f.write_str(" while it believes it holds the lock")?;
                }
                f.write_str(
                    ": it keeps running, and nothing it sends arrives, its unlock neither",
                )?;
                if !keys.0.is_empty() {
                    write!(f, "; its key stays on {keys} until it expires")?;
                }
                Ok(())
            }
            Event::CounterCrashed {
                persistence,
                from,
                to,
            } => write!(
                f,
                "crashes ({persistence}) and restarts at once: its counter goes from {from} to {to}"
            ),
            other => unreachable!("`fmt` sends {other:?} elsewhere"),
        }
    }

    /// What survives a crash: fsyncs, replication and a replica's promotion.
    fn write_durability(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::CounterFsynced { counter } => {
                write!(f, "fsyncs its counter ({counter}) to disk")
            }
            Event::Fsynced { owner } => match owner {
                Some(owner) => write!(f, "fsyncs {owner}'s key to disk"),
                None => f.write_str("fsyncs its key to disk"),
            },
            Event::Replicated { owner } => match owner {
                Some(owner) => write!(f, "receives {owner}'s key from n1"),
                None => f.write_str("receives no key from n1"),
            },
            Event::Promoted {
                lost,
                refuses_until,
                replica,
                reached,
            } => write_promoted(f, *lost, *refuses_until, *replica, reached),
            other => unreachable!("`fmt` sends {other:?} elsewhere"),
        }
    }
}

/// What a failover tells: the replica promoted (named when the master has several), the key
/// it did not have (and which other replicas it had reached), and its promotion delay.
fn write_promoted(
    f: &mut fmt::Formatter<'_>,
    lost: Option<Actor>,
    refuses_until: Option<i64>,
    replica: Option<Actor>,
    reached: &[Actor],
) -> fmt::Result {
    let Some(replica) = replica else {
        f.write_str("fails; its asynchronous replica is promoted in its place")?;
        if let Some(owner) = lost {
            write!(f, ": {owner}'s key was not replicated and is gone")?;
        }
        return write_promotion_delay(f, refuses_until);
    };
    write!(
        f,
        "fails; {replica}, one of its asynchronous replicas, is promoted in its place"
    )?;
    match (lost, reached) {
        (None, _) => {}
        (Some(owner), []) => write!(f, ": {owner}'s key had reached none of them and is gone")?,
        (Some(owner), others) => {
            let others: Vec<String> = others.iter().map(Actor::to_string).collect();
            write!(
                f,
                ": {owner}'s key had reached {} but not {replica}, and is gone",
                others.join(" and ")
            )?;
        }
    }
    write_promotion_delay(f, refuses_until)
}

/// `; it refuses requests until …`, when an executor delays a promotion.
fn write_promotion_delay(f: &mut fmt::Formatter<'_>, refuses_until: Option<i64>) -> fmt::Result {
    if let Some(until) = refuses_until {
        write!(f, "; it refuses requests until its clock reads {until}")?;
    }
    Ok(())
}

/// `{verb} c1's read (token 1)`, how late it came, whether its holder is stale, and the
/// comparison the storage made: the start of what the storage says of an op.
fn write_op_at_storage(
    f: &mut fmt::Formatter<'_>,
    verb: &str,
    client: Actor,
    op: &StorageOp,
    stale: bool,
    (delayed_by, unit): (u32, Unit),
    guard: Comparison,
) -> fmt::Result {
    write!(f, "{verb} {client}'s {op}")?;
    if delayed_by > 0 {
        let amount = unit.amount(u64::from(delayed_by));
        write!(f, ", delayed {amount} in the network")?;
    }
    if stale {
        f.write_str(", a stale holder's op")?;
    }
    write!(f, ": {}", guard_words(guard, op))
}

/// Why the storage took or refused `op`: the comparison its protection made ([`Comparison`]).
fn guard_words(guard: Comparison, op: &StorageOp) -> String {
    let token = op.fence();
    let applied = guard.allows(*op);
    match guard {
        Comparison::Unprotected => "the storage checks no token".to_owned(),
        Comparison::Unchecked => format!("the storage does not check a {}", op.action()),
        Comparison::Token { largest: 0 } => {
            format!("token {token} is the first the storage checks")
        }
        Comparison::Token { largest } if applied => {
            format!("token {token} is not below {largest}, the largest the storage has accepted")
        }
        Comparison::Token { largest } => {
            format!("token {token} is below {largest}, the largest the storage has accepted")
        }
        Comparison::Owner { mark } if applied => {
            format!("the storage's mark is still its token {mark}")
        }
        Comparison::Owner { mark: 0 } => "the storage was never marked".to_owned(),
        Comparison::CheckedEarlier => {
            "it passed the storage's check when it arrived, and is not checked again".to_owned()
        }
        Comparison::Owner { mark } => {
            format!("the storage's mark is token {mark}, not its {}", op.epoch())
        }
    }
}

/// A node's persistence as a story says it.
pub(crate) fn persistence_words(persistence: Persistence) -> &'static str {
    match persistence {
        Persistence::None => "no persistence",
        Persistence::FsyncAlways => "AOF, fsync always",
        Persistence::FsyncPeriodic => "AOF, fsync every second",
    }
}

/// How a client releases, as a story says it.
pub(crate) fn unlock_words(unlock: UnlockMode) -> &'static str {
    match unlock {
        UnlockMode::CompareAndDelete => "compare-and-delete",
        UnlockMode::PlainDel => "DEL",
        UnlockMode::GetThenDel => "GET then DEL",
    }
}
