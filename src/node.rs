//! One Redis master: the [`Node`] trait a driver implements, and [`NodeState`], the in-memory
//! semantics of the lock's key on one master, used by the simulator and the model checker.
//!
//! `NodeState` reads no clock: every operation takes `now`, the reading of *the node's own*
//! clock. That is the point — Redis stores a key's expiry as an absolute wall-clock time and
//! checks it against the wall clock, even across a restart, so a node whose clock jumps expires
//! keys early or late.

use std::ops::ControlFlow;

use thiserror::Error;

use crate::proto::{
    Anchor, Answer, ClockGuard, Command, Fencing, LockParams, Op, Relation, Reply, Token,
};
use crate::time::Millis;

/// What a node did with one [`Op`]: whether it took effect, and the fencing counter a `SET`
/// that created the key returned (0 for every other answer).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct NodeReply {
    /// The operation took effect.
    pub applied: bool,
    /// The resource's fencing counter on this node after the `SET` incremented it.
    pub counter: u64,
}

impl NodeReply {
    /// An answer with no counter.
    pub const fn plain(applied: bool) -> NodeReply {
        NodeReply {
            applied,
            counter: 0,
        }
    }
}

/// A node's answer as the core takes it; whether the node's yes counts is the driver's to say
/// (see [`Node::counts_toward_quorum`]).
impl From<NodeReply> for Answer {
    fn from(reply: NodeReply) -> Answer {
        let said = if reply.applied {
            Reply::Applied
        } else {
            Reply::NotApplied
        };
        Answer::voting(said).with_counter(reply.counter)
    }
}

/// A Redis master as the Redlock client sees it: conditional operations on one key, and a
/// fencing counter (the Redis node keeps one per node for every resource; the in-memory
/// semantics, [`NodeState`], one per key, which is the same for the one resource a lock guards).
///
/// `Ok(true)` means the operation took effect, `Ok(false)` that the node answered no; `Err` is
/// anything else (timeout, I/O, a reply of the wrong type) and counts as a failed node.
pub trait Node {
    /// What went wrong talking to this node.
    type Error: std::error::Error + Send + Sync + 'static;

    /// `SET key token NX PX ttl`, and in the same atomic step, when the key was created, `INCR`
    /// of the resource's fencing counter: `Some(counter)` after the increment, `None` when the
    /// key exists.
    fn set_nx_px(
        &mut self,
        key: &str,
        token: Token,
        ttl: Millis,
    ) -> Result<Option<u64>, Self::Error>;

    /// Plain `SET key token NX PX ttl`, with no fencing counter: what an acquisition with
    /// [`Fencing::Off`] (the default) sends, so a lock nobody fences costs one command and
    /// leaves nothing behind but its key. The default runs the counted [`set_nx_px`](Node::set_nx_px)
    /// and ignores the counter; a node whose counter costs something overrides it.
    fn set_nx_px_plain(
        &mut self,
        key: &str,
        token: Token,
        ttl: Millis,
    ) -> Result<bool, Self::Error> {
        Ok(self.set_nx_px(key, token, ttl)?.is_some())
    }

    /// Raise the resource's fencing counter to at least `to` if the key holds `token` (the
    /// fencing write-back, [`Op::RaiseFence`]).
    fn raise_fence(&mut self, key: &str, token: Token, to: u64) -> Result<bool, Self::Error>;

    /// Delete the key if it holds `token`.
    fn del_if_eq(&mut self, key: &str, token: Token) -> Result<bool, Self::Error>;

    /// Reset the key's TTL to `ttl` if it holds `token`.
    fn pexpire_if_eq(&mut self, key: &str, token: Token, ttl: Millis) -> Result<bool, Self::Error>;

    /// Plain `DEL key`, whatever it holds (the unlock mistake, for demonstrations).
    fn del(&mut self, key: &str) -> Result<bool, Self::Error>;

    /// `GET key`, compared with `token` by the client: whether the key holds it. Only the
    /// get-then-del unlock mistake reads a key so ([`Op::GetEq`]).
    fn get_eq(&mut self, key: &str, token: Token) -> Result<bool, Self::Error>;

    /// Runs one [`Op`] from the core for a lock with `fencing`: with [`Fencing::Off`] an
    /// acquisition is the plain [`set_nx_px_plain`](Node::set_nx_px_plain), otherwise the
    /// counted [`set_nx_px`](Node::set_nx_px).
    fn execute(&mut self, key: &str, op: &Op, fencing: Fencing) -> Result<NodeReply, Self::Error> {
        match *op {
            Op::SetNxPx { token, ttl } if fencing == Fencing::Off => {
                self.set_nx_px_plain(key, token, ttl).map(NodeReply::plain)
            }
            Op::SetNxPx { token, ttl } => Ok(match self.set_nx_px(key, token, ttl)? {
                Some(counter) => NodeReply {
                    applied: true,
                    counter,
                },
                None => NodeReply::plain(false),
            }),
            Op::DelIfEq { token } => self.del_if_eq(key, token).map(NodeReply::plain),
            Op::PExpireIfEq { token, ttl } => {
                self.pexpire_if_eq(key, token, ttl).map(NodeReply::plain)
            }
            Op::Del => self.del(key).map(NodeReply::plain),
            Op::GetEq { token } => self.get_eq(key, token).map(NodeReply::plain),
            Op::RaiseFence { token, to } => self.raise_fence(key, token, to).map(NodeReply::plain),
        }
    }

    /// Whether this node's yes may count toward a quorum now. A node that restarted less than
    /// the largest TTL ago may have lost keys that are still live on other nodes (antirez's
    /// "delayed restart"); a driver that can tell answers `false`, and the client then keeps the
    /// node out of the quorum count while still sending it the operation and the release.
    fn counts_toward_quorum(&self) -> bool {
        true
    }

    /// The key that `error` says holds a value the client did not write: another program's
    /// key of another type at the lock's name, or a fencing counter that is not an integer.
    /// An acquisition that failed with such an error is a name collision, which no retry can
    /// fix, and the driver reports it as one, naming the key, rather than as a refusal or as
    /// unreachable nodes. The default, for nodes that cannot tell, is `None`.
    fn foreign_key(error: &Self::Error) -> Option<&str> {
        let _ = error;
        None
    }

    /// Runs one batch of `commands` (at most a few per node, in order per node) on `nodes` and
    /// hands every result to `on_reply`, with the node it came from, as it arrives.
    ///
    /// `params` are the lock's: its round timeout is how long the caller is prepared to wait for
    /// the batch. `on_reply` returns
    /// [`ControlFlow::Break`] once the round is decided: an executor that has already sent every
    /// command may then stop waiting for the rest (it must still keep its connections in step).
    ///
    /// The default runs the commands one after the other and ignores both hints, so each command
    /// is bounded only by the node's own timeouts. A networked node overrides this to send the
    /// whole batch at once and then read the replies, so a round costs about one round trip.
    fn execute_all<F>(
        nodes: &mut [Self],
        key: &str,
        commands: &[Command],
        params: &LockParams,
        on_reply: F,
    ) where
        Self: Sized,
        F: FnMut(&Self, Command, Result<NodeReply, Self::Error>) -> ControlFlow<()>,
    {
        let mut on_reply = on_reply;
        for &command in commands {
            let node = &mut nodes[command.node.index()];
            let result = node.execute(key, &command.op, params.fencing);
            // Run every command even after a Break: in a plain loop the rest have not been sent
            // yet, and a node that never saw the round is not what the caller asked for.
            let _ = on_reply(node, command, result);
        }
    }

    /// Takes out the replies this node read to commands of earlier batches after the caller had
    /// stopped waiting for them ([`execute_all`](Node::execute_all)'s `Break`), oldest first:
    /// a decided round's stragglers, which a networked node reads on its next request. They
    /// may belong to any lock of the client (the caller matches them to its own); a node that
    /// never leaves a reply unread, like the default, has none.
    fn take_late_replies(&mut self) -> Vec<(Command, Result<NodeReply, Self::Error>)> {
        Vec::new()
    }
}

/// The lock's key on one node: who holds it and when it expires on the node's clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Entry {
    /// The holder's token.
    pub token: Token,
    /// The node-clock reading at which the key is gone.
    pub expires_at: Millis,
    /// Whether the key has reached disk (it survives a crash under AOF).
    pub durable: bool,
}

/// How a node keeps keys across a crash.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Persistence {
    /// No persistence: a crash loses every key.
    #[default]
    None,
    /// `appendfsync always`: a write is on disk before the reply, so keys survive a crash.
    FsyncAlways,
    /// `appendfsync everysec`: only keys that a periodic fsync ([`NodeState::fsync`]) reached
    /// survive.
    FsyncPeriodic,
}

impl Persistence {
    /// The value a scenario file writes (`persistence = "fsync-always"`), and printouts use.
    pub const fn word(self) -> &'static str {
        match self {
            Persistence::None => "none",
            Persistence::FsyncAlways => "fsync-always",
            Persistence::FsyncPeriodic => "fsync-periodic",
        }
    }
}

/// Whether a node answers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Availability {
    /// Serving commands.
    #[default]
    Up,
    /// Crashed; refuses everything until restarted.
    Down,
    /// Restarted, but refusing commands until its clock reads `ready_at` (antirez's delayed
    /// restart: stay away for longer than the largest TTL).
    Restarting {
        /// The node-clock reading from which it serves again.
        ready_at: Millis,
    },
}

/// A command that reached a node that does not serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("node is not serving (crashed, or inside its restart delay)")]
pub struct Unavailable;

/// One Redis master's view of the lock's key, on the master's own clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct NodeState {
    /// The key, if one was set and has not been deleted or expired *and cleaned up*. A present
    /// entry may already be expired: expiry is lazy, as in Redis; use [`NodeState::live_entry`].
    pub entry: Option<Entry>,
    /// Up, down, or restarting.
    pub availability: Availability,
    /// The resource's fencing counter, incremented by every `SET` that creates the key.
    pub counter: u64,
    /// The counter as the disk has it (what a crash with periodic fsync keeps).
    pub counter_on_disk: u64,
}

impl NodeState {
    /// A node that is up with no key.
    pub const fn new() -> NodeState {
        NodeState {
            entry: None,
            availability: Availability::Up,
            counter: 0,
            counter_on_disk: 0,
        }
    }

    /// Runs one operation like [`apply`](NodeState::apply) and returns, for a `SET` that
    /// created the key, the fencing counter after its increment.
    pub fn apply_counted(
        &mut self,
        op: &Op,
        now: Millis,
        persistence: Persistence,
    ) -> Result<NodeReply, Unavailable> {
        let applied = self.apply(op, now, persistence)?;
        let counter = match op {
            Op::SetNxPx { .. } if applied => self.counter,
            _ => 0,
        };
        Ok(NodeReply { applied, counter })
    }

    /// When a node restarted with `delay` serves again: once `delay` has passed since the
    /// restart on its own clock (what [`is_serving`](NodeState::is_serving) decides).
    #[cfg_attr(
        not(feature = "model"),
        allow(dead_code, reason = "the zone engine (feature `model`) reads it")
    )]
    pub(crate) fn restart_delay_guard(delay: Millis) -> ClockGuard {
        ClockGuard {
            anchor: Anchor::Restarted,
            relation: Relation::AtLeast,
            bound: delay,
        }
    }

    /// While a node restarted with `delay` is young to the clients' restarted-node guard of
    /// `guard`: less than `delay + guard` since the restart on its own clock (the end
    /// [`restart_guarded`](NodeState::restart_guarded) returns).
    #[cfg_attr(
        not(feature = "model"),
        allow(dead_code, reason = "the zone engine (feature `model`) reads it")
    )]
    pub(crate) fn restart_young_guard(delay: Millis, guard: Millis) -> ClockGuard {
        ClockGuard {
            anchor: Anchor::Restarted,
            relation: Relation::Below,
            bound: delay + guard,
        }
    }

    /// Whether the node serves commands when its clock reads `now`.
    pub fn is_serving(&self, now: Millis) -> bool {
        match self.availability {
            Availability::Up => true,
            Availability::Down => false,
            Availability::Restarting { ready_at } => now >= ready_at,
        }
    }

    /// The key if it is still live at node time `now`.
    pub fn live_entry(&self, now: Millis) -> Option<Entry> {
        self.entry.filter(|entry| now < entry.expires_at)
    }

    /// Runs one operation at node time `now`, with Redis's semantics and lazy expiry.
    /// `persistence` decides whether a write is durable at once.
    pub fn apply(
        &mut self,
        op: &Op,
        now: Millis,
        persistence: Persistence,
    ) -> Result<bool, Unavailable> {
        if !self.is_serving(now) {
            return Err(Unavailable);
        }
        self.availability = Availability::Up;
        self.expire(now);
        let durable = persistence == Persistence::FsyncAlways;
        let applied = match *op {
            Op::SetNxPx { token, ttl } => {
                if self.entry.is_some() {
                    false
                } else {
                    self.entry = Some(Entry {
                        token,
                        expires_at: now + ttl,
                        durable,
                    });
                    // The same script increments the resource's fencing counter.
                    self.counter += 1;
                    true
                }
            }
            Op::RaiseFence { token, to } => match self.entry {
                Some(entry) if entry.token == token => {
                    self.counter = self.counter.max(to);
                    true
                }
                _ => false,
            },
            Op::DelIfEq { token } => self.entry.take_if(|entry| entry.token == token).is_some(),
            Op::Del => self.entry.take().is_some(),
            Op::GetEq { token } => self.entry.is_some_and(|entry| entry.token == token),
            Op::PExpireIfEq { token, ttl } => match &mut self.entry {
                Some(entry) if entry.token == token => {
                    entry.expires_at = now + ttl;
                    entry.durable = durable;
                    true
                }
                _ => false,
            },
        };
        if durable {
            self.counter_on_disk = self.counter;
        }
        Ok(applied)
    }

    /// Active expiry: drops the key if it is expired at node time `now`.
    pub fn expire(&mut self, now: Millis) {
        if self.entry.is_some_and(|entry| now >= entry.expires_at) {
            self.entry = None;
        }
    }

    /// A periodic fsync: the current key (and its expiry) and the fencing counter reach disk.
    pub fn fsync(&mut self) {
        if let Some(entry) = &mut self.entry {
            entry.durable = true;
        }
        self.counter_on_disk = self.counter;
    }

    /// `INCR` of the fencing counter alone, as a stand-alone counter node runs it: the new
    /// value (durable at once with `appendfsync always`).
    pub fn incr(&mut self, persistence: Persistence) -> u64 {
        self.counter += 1;
        if persistence == Persistence::FsyncAlways {
            self.counter_on_disk = self.counter;
        }
        self.counter
    }

    /// Whether a periodic fsync would change what survives a crash.
    pub fn has_unsynced_writes(&self) -> bool {
        self.entry.is_some_and(|entry| !entry.durable) || self.counter != self.counter_on_disk
    }

    /// The process dies. What survives depends on `persistence`: nothing, everything, or what
    /// the last fsync reached.
    pub fn crash(&mut self, persistence: Persistence) {
        self.availability = Availability::Down;
        self.entry = match persistence {
            Persistence::None => None,
            Persistence::FsyncAlways | Persistence::FsyncPeriodic => {
                self.entry.filter(|entry| entry.durable)
            }
        };
        // The counter restarts from what the disk has: nothing without persistence.
        self.counter = match persistence {
            Persistence::None => 0,
            Persistence::FsyncAlways | Persistence::FsyncPeriodic => self.counter_on_disk,
        };
        self.counter_on_disk = self.counter;
    }

    /// [`restart`](NodeState::restart), and until when the clients' restarted-node guard of
    /// `guard` keeps this node's yes out of a quorum (`None` without a guard). The guard counts
    /// the node's uptime, which starts when it serves again, on the node's own clock, so a
    /// clock jump cuts it short. The model and the simulator both restart through here.
    pub fn restart_guarded(&mut self, now: Millis, delay: Millis, guard: Millis) -> Option<Millis> {
        self.restart(now, delay);
        (guard > Millis::ZERO).then(|| now + delay + guard)
    }

    /// The process starts again at node time `now` and refuses commands for `delay` (zero:
    /// serve at once). Reloaded keys keep their absolute expiry, so they may load expired.
    pub fn restart(&mut self, now: Millis, delay: Millis) {
        self.availability = if delay == Millis::ZERO {
            Availability::Up
        } else {
            Availability::Restarting {
                ready_at: now + delay,
            }
        };
        self.expire(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Token = Token(0xa);
    const B: Token = Token(0xb);

    fn set(token: Token, ttl: u64) -> Op {
        Op::SetNxPx {
            token,
            ttl: Millis(ttl),
        }
    }

    /// The core's guard for a live key (`proto`'s timing guards) is what a node decides, on
    /// every reading around the TTL.
    #[test]
    fn the_key_live_guard_is_when_a_node_refuses_a_rival() {
        for ttl in 1..=9u64 {
            let config = crate::proto::Config {
                drift: crate::proto::DriftPolicy::fixed(Millis::ZERO),
                ..crate::proto::Config::new(3)
            };
            let params = config.params(Millis(ttl)).expect("a valid configuration");
            for now in (50..=52 + ttl).map(Millis) {
                let mut node = NodeState::new();
                assert_eq!(
                    node.apply(&set(A, ttl), Millis(50), Persistence::None),
                    Ok(true)
                );
                let refused = node.apply(&set(B, ttl), now, Persistence::None) == Ok(false);
                assert_eq!(
                    refused,
                    params.key_live_guard().holds_at(Millis(50), now),
                    "ttl {ttl}, now {now:?}"
                );
            }
        }
    }

    #[test]
    fn set_nx_px_refuses_a_live_key_and_takes_an_expired_one() {
        let mut node = NodeState::new();
        let p = Persistence::None;
        assert_eq!(node.apply(&set(A, 10), Millis(0), p), Ok(true));
        assert_eq!(node.apply(&set(B, 10), Millis(9), p), Ok(false));
        assert_eq!(node.apply(&set(B, 10), Millis(10), p), Ok(true));
        assert_eq!(node.live_entry(Millis(10)).map(|e| e.token), Some(B));
    }

    /// The restart-delay guard is when a restarted node serves again, on every reading.
    #[test]
    fn the_restart_delay_guard_is_when_a_restarted_node_serves() {
        for delay in 1..=9u64 {
            let guard = NodeState::restart_delay_guard(Millis(delay));
            for now in (40..=52 + delay).map(Millis) {
                let mut node = NodeState::new();
                node.crash(Persistence::None);
                node.restart(Millis(40), Millis(delay));
                assert_eq!(
                    node.is_serving(now),
                    now >= Millis(40) && guard.holds_at(Millis(40), now),
                    "delay {delay}, now {now:?}"
                );
            }
        }
    }

    /// The young guard is the restarted-node guard's end, on every reading: the model and
    /// the simulator keep a node's yes out of a quorum while the reading is before the end
    /// `restart_guarded` returns.
    #[test]
    fn the_young_guard_is_the_restarted_node_guards_end() {
        for delay in 0..=5u64 {
            for guard_ticks in 1..=6u64 {
                let young = NodeState::restart_young_guard(Millis(delay), Millis(guard_ticks));
                let mut node = NodeState::new();
                node.crash(Persistence::None);
                let until = node
                    .restart_guarded(Millis(40), Millis(delay), Millis(guard_ticks))
                    .expect("a guard");
                for now in (40..=52 + delay + guard_ticks).map(Millis) {
                    assert_eq!(
                        now < until,
                        young.holds_at(Millis(40), now),
                        "delay {delay}, guard {guard_ticks}, now {now:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn compare_and_delete_spares_a_foreign_key_and_del_does_not() {
        let mut node = NodeState::new();
        let p = Persistence::None;
        node.apply(&set(B, 10), Millis(0), p).unwrap();
        assert_eq!(
            node.apply(&Op::DelIfEq { token: A }, Millis(1), p),
            Ok(false)
        );
        assert!(node.entry.is_some());
        assert_eq!(node.apply(&Op::Del, Millis(1), p), Ok(true));
        assert!(node.entry.is_none());
    }

    #[test]
    fn compare_and_pexpire_extends_only_its_own_live_key() {
        let mut node = NodeState::new();
        let p = Persistence::None;
        node.apply(&set(A, 10), Millis(0), p).unwrap();
        let extend = |token| Op::PExpireIfEq {
            token,
            ttl: Millis(10),
        };
        assert_eq!(node.apply(&extend(B), Millis(5), p), Ok(false));
        assert_eq!(node.apply(&extend(A), Millis(5), p), Ok(true));
        assert_eq!(node.live_entry(Millis(14)).map(|e| e.token), Some(A));
        assert_eq!(node.apply(&extend(A), Millis(15), p), Ok(false));
    }

    #[test]
    fn a_crash_keeps_what_persistence_keeps() {
        let mut none = NodeState::new();
        none.apply(&set(A, 10), Millis(0), Persistence::None)
            .unwrap();
        none.crash(Persistence::None);
        none.restart(Millis(1), Millis::ZERO);
        assert_eq!(none.entry, None);

        let mut always = NodeState::new();
        always
            .apply(&set(A, 10), Millis(0), Persistence::FsyncAlways)
            .unwrap();
        always.crash(Persistence::FsyncAlways);
        always.restart(Millis(1), Millis::ZERO);
        assert_eq!(always.live_entry(Millis(1)).map(|e| e.token), Some(A));

        let mut periodic = NodeState::new();
        periodic
            .apply(&set(A, 10), Millis(0), Persistence::FsyncPeriodic)
            .unwrap();
        periodic.crash(Persistence::FsyncPeriodic);
        assert_eq!(periodic.entry, None, "an unsynced key is lost");
    }

    #[test]
    fn a_key_reloaded_after_the_clock_jumped_forward_loads_expired() {
        let mut node = NodeState::new();
        node.apply(&set(A, 10), Millis(0), Persistence::FsyncAlways)
            .unwrap();
        node.crash(Persistence::FsyncAlways);
        node.restart(Millis(50), Millis::ZERO);
        assert_eq!(node.entry, None);
    }

    #[test]
    fn a_delayed_restart_refuses_commands_until_its_clock_says_so() {
        let mut node = NodeState::new();
        node.crash(Persistence::None);
        assert_eq!(
            node.apply(&set(A, 10), Millis(0), Persistence::None),
            Err(Unavailable)
        );
        node.restart(Millis(1), Millis(9));
        assert_eq!(
            node.apply(&set(A, 10), Millis(9), Persistence::None),
            Err(Unavailable)
        );
        assert_eq!(
            node.apply(&set(A, 10), Millis(10), Persistence::None),
            Ok(true)
        );
        assert_eq!(node.availability, Availability::Up);
    }
}
