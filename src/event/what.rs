//! What happened, as a typed value with the numbers in it ([`Event`]), and a set of nodes as
//! people read it ([`Nodes`]).

use std::fmt;

use crate::actor::Actor;
use crate::fault::FaultKind;
use crate::proto::{Failure, NodeSet};
use crate::storage::{Comparison, StorageOp};

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
        if names.is_empty() {
            // A client cut off from every node sends its round or its unlock to none.
            return f.write_str("no node");
        }
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

#[cfg(feature = "model")]
impl serde::Serialize for Nodes {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|n| Actor::node(n.index())))
    }
}

/// What happened. Clock readings are in the reader's own clock (`0` is where every clock
/// starts); `t` values are true time.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "model", derive(serde::Serialize))]
#[cfg_attr(feature = "model", serde(tag = "kind", rename_all = "kebab-case"))]
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
        /// The nodes it sends to (with `one_at_a_time`, the first).
        to: Nodes,
        /// A sequential round: the other nodes are asked one after another
        /// ([`NodeAsked`](Event::NodeAsked)).
        #[cfg_attr(feature = "model", serde(skip_serializing_if = "std::ops::Not::not"))]
        one_at_a_time: bool,
    },
    /// A sequential acquisition asks its next node, in the same round, once the node before
    /// answered or its own timeout passed.
    NodeAsked {
        /// The node asked now.
        node: Actor,
        /// The key's time to live.
        ttl: u64,
        /// The node before, when its timeout passed with no answer (the round counts it as
        /// failed).
        silent: Option<Actor>,
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
        #[cfg_attr(feature = "model", serde(skip_serializing_if = "std::ops::Not::not"))]
        restart_over: bool,
        /// The node's fencing counter after the `SET` bumped it, when the lock nodes'
        /// counters feed the tokens (`lock-quorum`).
        #[cfg_attr(feature = "model", serde(skip_serializing_if = "Option::is_none"))]
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
    /// A node serves a client's release (compare-and-delete, or a plain `DEL`). The model
    /// checker tells a release once, by its client ([`Released`](Event::Released)); the
    /// simulator's nodes receive it one by one.
    ReleaseServed {
        /// Whose release.
        client: Actor,
        /// Compare-and-delete (`true`) or a plain `DEL`.
        compare: bool,
        /// Whether a key was deleted.
        deleted: bool,
    },
    /// A node answers a client's `GET` (the get-then-del unlock, whose `DEL` follows only
    /// where the client read its own value).
    ValueRead {
        /// Whose `GET`.
        client: Actor,
        /// Whether the key held the client's value.
        own: bool,
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
    /// A node that may answer anything (the model checker's chaos node, which stands for
    /// every real node's answer) says yes to a request and keeps nothing.
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
        #[cfg_attr(feature = "model", serde(skip_serializing_if = "Option::is_none"))]
        fence: Option<u64>,
        /// The round decided was the fencing write-back, not the `SET`s.
        #[cfg_attr(feature = "model", serde(skip_serializing_if = "std::ops::Not::not"))]
        by_write_back: bool,
        /// The token an ideal counter hands this acquisition (one above every earlier
        /// acquisition's), when the holder's storage ops carry it: the story says where the
        /// token its ops carry comes from.
        #[cfg_attr(feature = "model", serde(skip_serializing_if = "Option::is_none"))]
        ideal_token: Option<u32>,
    },
    /// A client decides its round and did not get the lock; it unlocks every node it reaches.
    NotAcquired {
        /// T2 on the client's clock.
        t2: i64,
        /// It has no attempt left and stops trying: the step after which it never acquires.
        #[cfg_attr(feature = "model", serde(skip_serializing_if = "std::ops::Not::not"))]
        gives_up: bool,
        /// Why the round failed, told (and serialised as `reason`) in words with durations in
        /// ticks.
        #[cfg_attr(
            feature = "model",
            serde(rename = "reason", serialize_with = "failure_words")
        )]
        failure: Failure,
        /// Other clients' keys the unlock deleted, as (owner, node).
        deleted: Vec<(Actor, Actor)>,
        /// The nodes where the unlock deleted the client's own key (so a timeline ends the
        /// key there without replaying the nodes); none in the simulator, whose nodes tell
        /// each release they serve ([`ReleaseServed`](Event::ReleaseServed)).
        freed: Nodes,
        /// The unlock is on its way and reaches each node later, told there
        /// ([`ReleaseServed`](Event::ReleaseServed)): the model's client that keeps its value
        /// for the retries, whose release nobody waits for. Otherwise (and in the simulator,
        /// whose nodes tell each release they serve) it is told as done at once.
        #[cfg_attr(feature = "model", serde(skip_serializing_if = "std::ops::Not::not"))]
        unlock_travels: bool,
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
        /// key there without replaying the nodes); none in the simulator, whose nodes tell
        /// each release they serve ([`ReleaseServed`](Event::ReleaseServed)).
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
    /// A holder is paused (GC, page fault), possibly between its lease check and its op.
    Paused {
        /// The op that waits.
        op: Option<StorageOp>,
        /// True time the pause ends, when the executor fixes it in advance (the simulator;
        /// the model checker lets time pass for as long as it likes instead).
        #[cfg_attr(feature = "model", serde(skip_serializing_if = "Option::is_none"))]
        until: Option<u32>,
    },
    /// A paused client runs again (the simulator's pauses end at a fixed time).
    Resumed,
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
        /// What the storage's protection compared to apply or reject it.
        guard: Comparison,
        /// The counter afterwards.
        counter: u32,
        /// The sender no longer believes it holds the lock.
        stale: bool,
        /// Ticks the op spent in the network beyond the instant, when it was not paused.
        delayed_by: u32,
    },
    /// A storage that checks and applies in two steps (`[storage] check = "two-step"`) lets a
    /// holder's op through its check; it applies the op in a later step ([`Event::OpArrived`]
    /// with [`Comparison::CheckedEarlier`]), other ops free to run in between.
    OpChecked {
        /// Whose op.
        client: Actor,
        /// The op.
        op: StorageOp,
        /// What the storage's protection compared to let it through.
        guard: Comparison,
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
        ticks: i64,
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
        /// Ticks of true time it stays down before its process starts again: 0 in the model
        /// checker, which restarts a node at once; the simulator tells the start as
        /// [`Restarted`](Event::Restarted).
        #[cfg_attr(feature = "model", serde(skip_serializing_if = "is_zero"))]
        down_for: u64,
        /// Ticks of its clock it refuses requests for after restarting.
        restart_delay: u64,
        /// The clients' guard keeps its yes out of every quorum until its clock reads this.
        guarded_until: Option<i64>,
    },
    /// A crashed node's process starts again after its downtime.
    Restarted {
        /// It refuses requests until its clock reads this (its restart delay).
        refuses_until: i64,
        /// The clients' guard keeps its yes out of every quorum until its clock reads this.
        guarded_until: Option<i64>,
    },
    /// Every message to or from a node is lost for a while (a partition).
    Isolated {
        /// For how many ticks of true time.
        ticks: u64,
    },
    /// A client's next lock request to a node takes longer to arrive (a slow connection).
    RequestDelayed {
        /// The node.
        node: Actor,
        /// The extra delay, in ticks.
        ticks: u64,
    },
    /// A client's next storage op takes longer to arrive (Kleppmann's network-delayed write).
    StorageOpDelayed {
        /// The extra delay, in ticks.
        ticks: u64,
    },
    /// A client dies for good, without unlocking.
    ClientCrashed {
        /// Whether it believed it held the lock when it died.
        believed: bool,
        /// The nodes that hold its key, which stays until it expires.
        keys: Nodes,
    },
    /// A client is cut off from every node for good: it keeps running on what it believes,
    /// and nothing it sends reaches a node again, its unlock included.
    ClientPartitioned {
        /// Whether it believed it held the lock when it was cut off.
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
        /// The promoted replica refuses requests until its clock reads this, when the
        /// executor delays a promotion (the simulator).
        #[cfg_attr(feature = "model", serde(skip_serializing_if = "Option::is_none"))]
        refuses_until: Option<i64>,
        /// The replica promoted, when the master has several (`None`: its only one).
        #[cfg_attr(feature = "model", serde(skip_serializing_if = "Option::is_none"))]
        replica: Option<Actor>,
        /// The other replicas that had the master's key when it failed: with `lost`, where
        /// the key had reached instead of the replica promoted.
        #[cfg_attr(feature = "model", serde(skip_serializing_if = "Vec::is_empty"))]
        reached: Vec<Actor>,
    },
    /// Time passes and nothing else changes.
    TimePassed {
        /// True time afterwards.
        to: u32,
    },
}

impl Event {
    /// Whether the event is a fault (a pause, a clock jump, a crash, a loss, a failover, a
    /// partition, a delay).
    pub fn is_fault(&self) -> bool {
        self.fault_kind().is_some() || matches!(self, Event::RequestDelayed { .. })
    }

    /// The kind of fault the event is, if it is one a scenario grants. A delayed lock request
    /// is a fault of the simulator alone (the model checker leaves a request in flight as long
    /// as it likes, at no cost), so it is a fault of no granted kind.
    pub fn fault_kind(&self) -> Option<FaultKind> {
        Some(match self {
            Event::Paused { .. } => FaultKind::Pause,
            Event::ClockJumped { .. } => FaultKind::ClockJump,
            Event::Crashed { .. } | Event::CounterCrashed { .. } => FaultKind::Crash,
            Event::ClientCrashed { .. } => FaultKind::ClientCrash,
            Event::ClientPartitioned { .. } => FaultKind::ClientPartition,
            Event::RequestLost { .. } => FaultKind::MessageLoss,
            Event::Promoted { .. } => FaultKind::Failover,
            Event::Isolated { .. } => FaultKind::Partition,
            Event::StorageOpDelayed { .. } => FaultKind::StorageDelay,
            _ => return None,
        })
    }
}

/// A round's failure in words, for serde: JSON readers get the sentence the story tells.
#[cfg(feature = "model")]
fn failure_words<S: serde::Serializer>(
    failure: &Failure,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_str(&failure.words(crate::time::Unit::Ticks))
}

/// Whether a count is zero, for serde's `skip_serializing_if`.
#[cfg(feature = "model")]
fn is_zero(n: &u64) -> bool {
    *n == 0
}
