//! The model's one vocabulary of what happens: who acts ([`Actor`]), what they did
//! ([`Event`], with the numbers in it: clock readings, deadlines, what a client believes) and
//! when ([`Moment`]: true time and the actor's own clock reading).
//!
//! Steps tell these events as they run (`apply.rs`); a path's events are gathered by
//! [`narrate_path`](super::narrate_path). Every rendering of a counterexample reads them and
//! nothing else: the story's text and Mermaid (`crate::report`), the Explorer's SVG and step
//! pane, the `--json` counterexample and `trace --format json`. So one run reads the same in
//! every format.

use std::fmt;

use serde::{Serialize, Serializer};

use crate::node::Persistence;
use crate::proto::{NodeSet, Token};
use crate::storage::StorageOp;
use crate::time::Unit;

use super::world::World;
use crate::actor::Actor;

/// A set of nodes, told as `n1 n2 n3` (and serialised as `["n1", "n2", "n3"]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nodes(pub NodeSet);

impl fmt::Display for Nodes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = self
            .0
            .iter()
            .map(|n| format!("n{}", n.index() + 1))
            .collect();
        f.write_str(&names.join(" "))
    }
}

impl Nodes {
    /// Whether the set holds `node` (an [`Actor::Node`]; any other actor is not in it).
    pub fn contains(&self, node: Actor) -> bool {
        self.0.iter().any(|n| Actor::node(n.index()) == node)
    }

    /// The nodes in the set, as actors.
    pub fn actors(&self) -> impl Iterator<Item = Actor> + '_ {
        self.0.iter().map(|n| Actor::node(n.index()))
    }
}

impl Serialize for Nodes {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|n| Actor::node(n.index())))
    }
}

/// What happened. Clock readings are in the reader's own clock (`0` is where every clock
/// starts); `t` values are true time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Event {
    /// A client begins an acquisition round: reads T1 and sends `SET NX PX ttl` to every
    /// node it reaches.
    RoundBegan {
        /// The attempt's number, from 1.
        attempt: u32,
        /// T1 on the client's clock.
        t1: i64,
        /// The key's time to live.
        ttl: u64,
        /// The nodes it sends to.
        to: Nodes,
    },
    /// A node sets a client's key.
    KeySet {
        /// Whose key.
        client: Actor,
        /// The node (whose clock the expiry is on).
        node: Actor,
        /// When the key expires, on the node's clock.
        expires_at: i64,
        /// The node's clock was read at the fast end of its error band, so this client's
        /// earlier key was already gone.
        early_over: Option<Actor>,
        /// By how many ticks the node's clock read fast.
        fast_by: u32,
        /// The node's clock was read at the fast end of its error band, so its restart delay
        /// was already over and it served the `SET`.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        restart_over: bool,
        /// The node's fencing counter after the `SET` bumped it, when the lock nodes'
        /// counters feed the tokens (`lock-quorum`).
        #[serde(skip_serializing_if = "Option::is_none")]
        counter: Option<u64>,
    },
    /// A node takes a client's fencing write-back (`lock-quorum`): the client's key is there,
    /// so the node raises its counter to the round's fence.
    FenceRaised {
        /// Whose write-back.
        client: Actor,
        /// The node's counter before.
        from: u64,
        /// The node's counter after.
        to: u64,
    },
    /// A node refuses a client's fencing write-back: the client's key is not there.
    FenceRefused {
        /// Whose write-back.
        client: Actor,
    },
    /// A node extends a client's key (compare-and-pexpire).
    KeyExtended {
        /// Whose key.
        client: Actor,
        /// The node (whose clock the expiry is on).
        node: Actor,
        /// The new expiry, on the node's clock.
        expires_at: i64,
    },
    /// A node refuses an extension: the client's key is not there.
    ExtensionRefused {
        /// Whose extension.
        client: Actor,
    },
    /// A node refuses a `SET`.
    SetRefused {
        /// Whose `SET`.
        client: Actor,
        /// Whose live key is in the way (`None`: a third client's, in the two-client cutoff).
        holder: Option<Actor>,
    },
    /// A node that may answer anything (see
    /// [`RedlockModel::with_chaos_nodes`](super::RedlockModel::with_chaos_nodes)) says yes
    /// to a request and keeps nothing.
    YesWithoutKey {
        /// Whose request.
        client: Actor,
    },
    /// A node is down or restarting: the request fails.
    NotServing {
        /// Whose request.
        client: Actor,
        /// Restarting (it refuses requests until its restart delay is over), or down.
        restarting: bool,
    },
    /// The clients' restarted-node guard keeps a node's yes out of a quorum.
    GuardRefused {
        /// The client whose quorum it is.
        client: Actor,
    },
    /// A request is lost in the network.
    RequestLost {
        /// The node it was sent to.
        node: Actor,
    },
    /// A client wins its `SET` round but must first write the largest fencing counter its
    /// quorum returned back to every node it reaches (`lock-quorum`) before the lock counts
    /// as acquired.
    WriteBackBegan {
        /// The nodes whose yes counted.
        on: Nodes,
        /// T2 on the client's clock.
        t2: i64,
        /// The largest counter among them, the token it writes back.
        fence: u64,
    },
    /// A client decides its round and holds the lock.
    Acquired {
        /// The nodes whose yes counted.
        on: Nodes,
        /// T2 on the client's clock.
        t2: i64,
        /// Validity left at T2.
        validity: u64,
        /// The client believes it holds the lock until its clock reads this.
        believes_until: i64,
        /// The fencing token, when the lock nodes' counters give it (`lock-quorum`).
        #[serde(skip_serializing_if = "Option::is_none")]
        fence: Option<u64>,
        /// The round decided was the fencing write-back, not the `SET`s.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        by_write_back: bool,
    },
    /// A client decides its round and did not get the lock; it unlocks every node it reaches.
    NotAcquired {
        /// T2 on the client's clock.
        t2: i64,
        /// Why, in words.
        reason: String,
        /// Other clients' keys the unlock deleted, as (owner, node).
        deleted: Vec<(Actor, Actor)>,
        /// The nodes where the unlock deleted the client's own key (so a timeline ends the
        /// key there without replaying the nodes).
        freed: Nodes,
    },
    /// A holder's lease is already over when it tries to extend: the core refuses at once and
    /// sends nothing.
    TooLateToExtend {
        /// The client's clock.
        clock: i64,
        /// The lease's deadline on the client's clock.
        deadline: i64,
    },
    /// A client starts extending its lease.
    ExtensionBegan {
        /// T1 of the extension round.
        t1: i64,
        /// The nodes it sends compare-and-pexpire to.
        to: Nodes,
    },
    /// A client extended its lease.
    Extended {
        /// The nodes that extended.
        on: Nodes,
        /// T2 on the client's clock.
        t2: i64,
        /// The client believes it holds the lock until its clock reads this.
        believes_until: i64,
    },
    /// A client failed to extend; it keeps its current lease.
    ExtensionFailed {
        /// T2 on the client's clock.
        t2: i64,
        /// The client keeps believing until its clock reads this.
        believes_until: i64,
    },
    /// A client releases on every node it reaches.
    Released {
        /// `compare-and-delete` or `DEL`.
        how: &'static str,
        /// The nodes it sends the release to.
        on: Nodes,
        /// Other clients' keys the release deleted, as (owner, node).
        deleted: Vec<(Actor, Actor)>,
        /// The nodes where the release deleted the client's own key (so a timeline ends the
        /// key there without replaying the nodes).
        freed: Nodes,
    },
    /// A holder checks its lease before a storage op.
    LeaseChecked {
        /// The client's clock.
        clock: i64,
        /// The lease's deadline on the client's clock.
        deadline: i64,
        /// The op it goes ahead with, or `None`: too late, it gives up and releases.
        op: Option<StorageOp>,
    },
    /// A holder is paused (GC, page fault) between its lease check and its op.
    Paused {
        /// The op that waits.
        op: Option<StorageOp>,
    },
    /// A holder's pause ends: the op it checked earlier goes out now.
    PauseEnded {
        /// The op.
        op: StorageOp,
        /// True time of the lease check the op relies on.
        checked_at: u32,
    },
    /// The storage receives a holder's op.
    OpArrived {
        /// Whose op.
        client: Actor,
        /// The op.
        op: StorageOp,
        /// Whether the storage applied it (a fencing check may reject it).
        applied: bool,
        /// The counter afterwards.
        counter: u32,
        /// The sender no longer believes it holds the lock.
        stale: bool,
        /// Ticks the op spent in the network beyond the instant, when it was not paused.
        delayed_by: u32,
    },
    /// The separate counter node answers a holder's `INCR` with its fencing token
    /// (`counter-after-acquire`), just before the holder's first fenced op.
    TokenTaken {
        /// Whose `INCR`.
        client: Actor,
        /// The token.
        token: u64,
        /// The holder's lease is already over (it does not look before asking).
        stale: bool,
    },
    /// A stale write landed after a newer one: the newer update is lost.
    UpdateLost {
        /// The client whose stale write landed.
        stale: Actor,
        /// Its epoch.
        stale_epoch: u32,
        /// The client whose newer write it overwrote.
        overwritten: Actor,
        /// That write's epoch.
        overwritten_epoch: u32,
    },
    /// A write computed from a read taken before another client's write landed: that write
    /// is erased.
    WriteOnStaleRead {
        /// The client whose write erased the other.
        writer: Actor,
        /// Its epoch.
        writer_epoch: u32,
        /// The client whose write was erased.
        lost: Actor,
        /// That write's epoch.
        lost_epoch: u32,
    },
    /// A process's clock jumps.
    ClockJumped {
        /// By how many ticks.
        ticks: i32,
        /// The clock's reading after the jump.
        reads: i64,
    },
    /// A key expires on a node.
    KeyExpired {
        /// Whose key.
        owner: Actor,
        /// A clock jump moved the node's clock past the expiry.
        by_jump: bool,
    },
    /// A restarting node serves again: its restart delay is over.
    ServesAgain,
    /// The clients' restarted-node guard stops covering a node: its yes counts again.
    GuardEnded,
    /// A client stops believing: its clock reached the lease's deadline.
    BeliefEnded,
    /// A client believes again: its clock stepped back before its lease's deadline.
    BeliefReturned,
    /// A node crashes.
    Crashed {
        /// Its persistence.
        persistence: &'static str,
        /// The key it held, and whether it survived the crash.
        key: Option<(Actor, bool)>,
        /// Whether it restarts.
        restarts: bool,
        /// Ticks of its clock it refuses requests for after restarting.
        restart_delay: u64,
        /// The clients' guard keeps its yes out of every quorum until its clock reads this.
        guarded_until: Option<i64>,
    },
    /// A client dies for good, without unlocking.
    ClientCrashed {
        /// Whether it believed it held the lock when it died.
        believed: bool,
        /// The nodes that hold its key, which stays until it expires.
        keys: Nodes,
    },
    /// The separate counter node crashes and restarts at once, keeping what its persistence
    /// keeps.
    CounterCrashed {
        /// Its persistence.
        persistence: &'static str,
        /// Its counter before the crash.
        from: u64,
        /// Its counter after the restart.
        to: u64,
    },
    /// The separate counter node fsyncs its counter to disk.
    CounterFsynced {
        /// The counter it makes durable.
        counter: u64,
    },
    /// A node fsyncs its key to disk.
    Fsynced {
        /// Whose key.
        owner: Option<Actor>,
    },
    /// The replica receives the master's key.
    Replicated {
        /// Whose key.
        owner: Option<Actor>,
    },
    /// The master fails and its replica is promoted.
    Promoted {
        /// The key that was not replicated and is gone.
        lost: Option<Actor>,
    },
    /// Time passes and nothing else changes.
    TimePassed {
        /// True time afterwards.
        to: u32,
    },
}

impl Event {
    /// Whether the event is a fault (a pause, a clock jump, a crash, a loss, a failover).
    pub fn is_fault(&self) -> bool {
        matches!(
            self,
            Event::Paused { .. }
                | Event::ClockJumped { .. }
                | Event::Crashed { .. }
                | Event::ClientCrashed { .. }
                | Event::CounterCrashed { .. }
                | Event::RequestLost { .. }
                | Event::Promoted { .. }
        )
    }
}

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

impl fmt::Display for Event {
    /// The event in words, without its actor (`sets c1's key, …`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // One family of variants a function: each tells only the variants sent to it here.
        match self {
            Event::KeySet { .. }
            | Event::KeyExtended { .. }
            | Event::ExtensionRefused { .. }
            | Event::SetRefused { .. }
            | Event::YesWithoutKey { .. } => self.tell_key_answer(f),
            Event::FenceRaised { .. } | Event::FenceRefused { .. } => self.tell_fence_answer(f),
            Event::NotServing { .. } | Event::GuardRefused { .. } | Event::RequestLost { .. } => {
                self.tell_unserved(f)
            }
            Event::RoundBegan { .. }
            | Event::WriteBackBegan { .. }
            | Event::Acquired { .. }
            | Event::NotAcquired { .. } => self.tell_acquisition(f),
            Event::TooLateToExtend { .. }
            | Event::ExtensionBegan { .. }
            | Event::Extended { .. }
            | Event::ExtensionFailed { .. }
            | Event::Released { .. }
            | Event::LeaseChecked { .. }
            | Event::Paused { .. }
            | Event::PauseEnded { .. }
            | Event::BeliefEnded
            | Event::BeliefReturned => self.tell_lease(f),
            Event::OpArrived { .. }
            | Event::TokenTaken { .. }
            | Event::UpdateLost { .. }
            | Event::WriteOnStaleRead { .. } => self.tell_storage(f),
            Event::ClockJumped { .. }
            | Event::KeyExpired { .. }
            | Event::ServesAgain
            | Event::GuardEnded
            | Event::TimePassed { .. } => self.tell_clock(f),
            Event::Crashed { .. } | Event::ClientCrashed { .. } | Event::CounterCrashed { .. } => {
                self.tell_crash(f)
            }
            Event::CounterFsynced { .. }
            | Event::Fsynced { .. }
            | Event::Replicated { .. }
            | Event::Promoted { .. } => self.tell_durability(f),
        }
    }
}

impl Event {
    /// What a node answers to a client's SET or extension.
    fn tell_key_answer(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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
                        Unit::Ticks.amount(u64::from(*fast_by))
                    )?;
                }
                if let Some(old) = early_over {
                    write!(
                        f,
                        "its clock reads up to {} fast, so {old}'s key is already gone; ",
                        Unit::Ticks.amount(u64::from(*fast_by))
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

    /// What a node answers to a client's fencing write-back.
    fn tell_fence_answer(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
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
    fn tell_unserved(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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

    /// A client's acquisition round, from its first SET to its verdict.
    fn tell_acquisition(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::RoundBegan {
                attempt,
                t1,
                ttl,
                to,
            } => write!(
                f,
                "begins attempt {attempt}: T1={t1}, sends SET NX PX {ttl} to {to}"
            ),
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
            } => {
                let how = if *by_write_back {
                    "the write-back reached"
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
                Ok(())
            }
            Event::NotAcquired {
                t2,
                reason,
                deleted,
                ..
            } => write!(
                f,
                "fails to acquire (T2={t2}: {reason}) and unlocks every node it reaches{}",
                deleted_words(deleted)
            ),
            other => unreachable!("`fmt` sends {other:?} elsewhere"),
        }
    }

    /// A client's lease after it acquired: extending, checking, pausing, releasing, believing.
    fn tell_lease(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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
                Some(op) => write!(
                    f,
                    "checks its lease (clock {clock}, deadline {deadline}): still valid, sends {op}"
                ),
                None => write!(
                    f,
                    "checks its lease (clock {clock}, deadline {deadline}): too late, gives up"
                ),
            },
            Event::Paused { op } => match op {
                Some(op) => write!(
                    f,
                    "is paused (GC) between its lease check and its {op}, which has not reached the storage"
                ),
                None => f.write_str("is paused (GC)"),
            },
            Event::PauseEnded { op, checked_at } => write!(
                f,
                "wakes from its pause: its {op}, checked at t={checked_at}, reaches the storage now"
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
    fn tell_storage(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::OpArrived {
                client,
                op,
                applied,
                counter,
                stale,
                delayed_by,
            } => {
                let verb = if *applied { "applies" } else { "rejects" };
                write!(f, "{verb} {client}'s {op}")?;
                match delayed_by {
                    0 => {}
                    1 => f.write_str(", delayed 1 tick in the network")?,
                    n => write!(f, ", delayed {n} ticks in the network")?,
                }
                if *stale {
                    f.write_str(", a stale holder's op")?;
                }
                if *applied {
                    write!(f, ": counter {counter}")?;
                }
                Ok(())
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
                "{stale}'s write (epoch {stale_epoch}) lands after {overwritten}'s (epoch {overwritten_epoch}): {overwritten}'s update is lost"
            ),
            Event::WriteOnStaleRead {
                writer,
                writer_epoch,
                lost,
                lost_epoch,
            } => write!(
                f,
                "{writer}'s write (epoch {writer_epoch}) comes from a read taken before {lost}'s write (epoch {lost_epoch}) landed: {lost}'s update is lost"
            ),
            other => unreachable!("`fmt` sends {other:?} elsewhere"),
        }
    }

    /// Clocks, expiry, the ends of a restart's delay and guard, and the passing of time.
    fn tell_clock(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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
            Event::ServesAgain => f.write_str("serves again: its restart delay is over"),
            Event::GuardEnded => {
                f.write_str("has served long enough: the clients' guard counts its yes again")
            }
            Event::TimePassed { to } => write!(f, "time passes to t={to}"),
            other => unreachable!("`fmt` sends {other:?} elsewhere"),
        }
    }

    /// A node, a client or the counter crashes.
    fn tell_crash(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Crashed {
                persistence,
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
                match (restarts, restart_delay) {
                    (false, _) => f.write_str(" and stays down")?,
                    (true, 0) => f.write_str(" and restarts at once")?,
                    (true, delay) => write!(
                        f,
                        " and restarts, refusing requests for {delay} ticks of its clock"
                    )?,
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
    fn tell_durability(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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
            Event::Promoted { lost } => {
                f.write_str("fails; its asynchronous replica is promoted in its place")?;
                if let Some(owner) = lost {
                    write!(f, ": {owner}'s key was not replicated and is gone")?;
                }
                Ok(())
            }
            other => unreachable!("`fmt` sends {other:?} elsewhere"),
        }
    }
}

/// One event with who, when and on which clock.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Moment {
    /// True time, in ticks.
    pub t: u32,
    /// Who acts.
    pub actor: Actor,
    /// Who sent the message the actor handles, if any (an arrow in diagrams).
    pub from: Option<Actor>,
    /// The actor's own clock reading, when it differs from true time.
    pub clock: Option<i64>,
    /// What happened.
    pub event: Event,
    /// Ticks the request a node handles spent in the network since the client sent it, when
    /// more than none (only the whole path knows: see [`narrate_path`](super::narrate_path)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delayed: Option<u32>,
}

impl Moment {
    pub(super) fn new(t: u32, actor: Actor, event: Event) -> Moment {
        Moment {
            t,
            actor,
            from: None,
            clock: None,
            event,
            delayed: None,
        }
    }

    /// The event in words without its actor, with the request's delay in the network when
    /// it had one (`gets c2's SET after 2 ticks in the network and sets c2's key, …`).
    pub fn words(&self) -> String {
        match (self.delayed, self.from) {
            (Some(ticks), Some(from)) => {
                let request = match self.event {
                    Event::KeyExtended { .. } | Event::ExtensionRefused { .. } => "extension",
                    Event::FenceRaised { .. } | Event::FenceRefused { .. } => "fencing write-back",
                    _ => "SET",
                };
                let unit = if ticks == 1 { "tick" } else { "ticks" };
                format!(
                    "gets {from}'s {request} after {ticks} {unit} in the network and {}",
                    self.event
                )
            }
            _ => self.event.to_string(),
        }
    }

    pub(super) fn from(mut self, from: Actor) -> Moment {
        self.from = Some(from);
        self
    }

    pub(super) fn on_clock(mut self, w: &World) -> Moment {
        self.clock = own_clock(w, self.actor);
        self
    }

    /// Whether the event is a fault.
    pub fn is_fault(&self) -> bool {
        self.event.is_fault()
    }

    /// The event as one sentence with its actor (`n1 sets c1's key, …`).
    pub fn sentence(&self) -> String {
        let clock = self
            .clock
            .map(|c| format!(" [{}'s clock reads {c}]", self.actor))
            .unwrap_or_default();
        match self.event {
            Event::KeyExpired { .. } => format!("{}: {}{clock}", self.actor, self.event),
            Event::ClockJumped { .. } => format!("{}'s {}", self.actor, self.event),
            Event::RequestLost { .. } => {
                let words = self.event.to_string();
                let words = words.strip_prefix("its ").unwrap_or(&words);
                format!("{}'s {words}", self.actor)
            }
            Event::UpdateLost { .. }
            | Event::WriteOnStaleRead { .. }
            | Event::TimePassed { .. } => format!("{}", self.event),
            _ => format!("{} {}{clock}", self.actor, self.words()),
        }
    }
}

/// The client whose key on node `n` of `w` carries `token` (see [`World::key_owner`]).
pub(super) fn owner_on(w: &World, n: usize, token: Token) -> Actor {
    Actor::client(w.key_owner(n, token))
}

/// The clock reading of `actor` in `w`, if it differs from true time.
fn own_clock(w: &World, actor: Actor) -> Option<i64> {
    let clock = match actor {
        Actor::Client(c) => (w.client_clock(usize::from(c))).since_origin(),
        Actor::Node(n) => (w.node_clock(usize::from(n))).since_origin(),
        _ => return None,
    };
    (clock != i64::from(w.now)).then_some(clock)
}

pub(super) fn persistence_words(persistence: Persistence) -> &'static str {
    match persistence {
        Persistence::None => "no persistence",
        Persistence::FsyncAlways => "AOF, fsync always",
        Persistence::FsyncPeriodic => "AOF, fsync every second",
    }
}
