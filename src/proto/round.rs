//! One round of requests to all `N` nodes, and the arithmetic that decides it.
//!
//! These are plain values with no queues and no retries, small enough to live inside the model
//! checker's state; [`Lock`](super::Lock) composes them into a whole lock's life.

use super::command::{NodeId, NodeSet, Op, Reply, Token};
use super::config::{
    Contact, ExtensionQuorum, Fencing, LockParams, RoundDecision, UnlockMode, ValidityCheck,
};
use crate::time::Millis;

/// The answers a round has collected so far, one per node (the first answer counts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Tally {
    /// Nodes that applied the operation.
    pub applied: NodeSet,
    /// Nodes that answered no.
    pub not_applied: NodeSet,
    /// Nodes that failed (error, timeout, unavailable).
    pub failed: NodeSet,
}

impl Tally {
    /// Records `node`'s answer; a second answer from the same node is ignored.
    pub fn record(&mut self, node: NodeId, reply: Reply) {
        if self.answered().contains(node) {
            return;
        }
        match reply {
            Reply::Applied => self.applied.insert(node),
            Reply::NotApplied => self.not_applied.insert(node),
            Reply::Failed => self.failed.insert(node),
        }
    }

    /// Every node that answered in any way.
    pub fn answered(&self) -> NodeSet {
        self.applied.union(self.not_applied).union(self.failed)
    }

    /// The reply `node` gave, as the lock takes it again (a node that has not answered counts
    /// as failed): what a driver that kept the replies in a tally hands back.
    pub fn reply(&self, node: NodeId) -> Reply {
        match self.result(node) {
            NodeResult::Applied => Reply::Applied,
            NodeResult::NotApplied => Reply::NotApplied,
            NodeResult::Failed | NodeResult::NoReply => Reply::Failed,
        }
    }

    /// What `node` answered, or [`NodeResult::NoReply`].
    pub fn result(&self, node: NodeId) -> NodeResult {
        if self.applied.contains(node) {
            NodeResult::Applied
        } else if self.not_applied.contains(node) {
            NodeResult::NotApplied
        } else if self.failed.contains(node) {
            NodeResult::Failed
        } else {
            NodeResult::NoReply
        }
    }
}

/// What one node contributed to a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NodeResult {
    /// The operation took effect.
    Applied,
    /// The node said no.
    NotApplied,
    /// The node failed to answer usefully.
    Failed,
    /// The round ended before the node answered.
    NoReply,
}

/// Whether a [`QuorumRound`] acquires or extends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RoundKind {
    /// `SET NX PX` on every node.
    Acquire,
    /// Compare-and-pexpire on every node.
    Extend,
    /// The fencing write-back of a won acquisition ([`Fencing::WriteBack`]): raise every
    /// node's counter to the round's fence; the lock counts as acquired once a quorum did.
    Fence,
}

/// A round that needs a majority of all `N` nodes: acquisition, or extension.
///
/// `t1` is read *before* the first request is sent: the whole safety argument of Redlock rests
/// on anchoring the deadline there, so that any delay or pause during the round only shortens
/// the lease (antirez's answer to the GC-pause-during-acquisition case).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct QuorumRound {
    /// Acquire or extend.
    pub kind: RoundKind,
    /// The value written to, or compared at, every node.
    pub token: Token,
    /// The client's clock when the round began.
    pub t1: Millis,
    /// The answers so far.
    pub tally: Tally,
    /// The largest fencing counter a node returned with a yes to this acquisition (0 if none
    /// did); for a [`RoundKind::Fence`] round, the fence being written back.
    pub fence: u64,
    /// The nodes whose yes to this acquisition carried [`fence`](QuorumRound::fence) itself:
    /// their counters already stand at the fence, so a quorum of them makes the write-back a
    /// no-op ([`needs_write_back`](QuorumRound::needs_write_back)).
    pub at_fence: NodeSet,
    /// With [`Contact::Sequential`], the node the round is waiting for and since when (its
    /// own timeout runs from there); `None` when every node was asked at T1.
    pub asking: Option<Asking>,
}

/// The node a sequential acquisition is waiting for ([`Contact::Sequential`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Asking {
    /// The node asked last.
    pub node: NodeId,
    /// The client's clock when its request left.
    pub since: Millis,
}

impl QuorumRound {
    /// Starts an acquisition round at client time `now` (this is T1).
    pub fn acquire(token: Token, now: Millis) -> QuorumRound {
        QuorumRound {
            kind: RoundKind::Acquire,
            token,
            t1: now,
            tally: Tally::default(),
            fence: 0,
            at_fence: NodeSet::EMPTY,
            asking: None,
        }
    }

    /// Starts an acquisition round at client time `now` (T1) as `params` contact the nodes:
    /// all at once, or the first node alone.
    pub fn acquire_with(params: &LockParams, token: Token, now: Millis) -> QuorumRound {
        QuorumRound {
            asking: (params.contact == Contact::Sequential).then_some(Asking {
                node: NodeId(0),
                since: now,
            }),
            ..QuorumRound::acquire(token, now)
        }
    }

    /// The write-back round that follows this won acquisition: same token, same T1 (so the
    /// lease's deadline does not move), a fresh tally.
    pub fn fence_round(&self) -> QuorumRound {
        QuorumRound {
            kind: RoundKind::Fence,
            tally: Tally::default(),
            at_fence: NodeSet::EMPTY,
            asking: None,
            ..*self
        }
    }

    /// Starts an extension round for the lease holding `token` at client time `now`.
    pub fn extend(token: Token, now: Millis) -> QuorumRound {
        QuorumRound {
            kind: RoundKind::Extend,
            ..QuorumRound::acquire(token, now)
        }
    }

    /// The operation this round sends to every node.
    pub fn op(&self, params: &LockParams) -> Op {
        match self.kind {
            RoundKind::Acquire => Op::SetNxPx {
                token: self.token,
                ttl: params.ttl,
            },
            RoundKind::Extend => Op::PExpireIfEq {
                token: self.token,
                ttl: params.ttl,
            },
            RoundKind::Fence => Op::RaiseFence {
                token: self.token,
                to: self.fence,
            },
        }
    }

    /// How many yes answers win this round: `Q = N/2 + 1`, or one for an extension counted
    /// with the any-node mistake.
    pub fn quorum(&self, params: &LockParams) -> usize {
        match (self.kind, params.extension_quorum) {
            (RoundKind::Extend, ExtensionQuorum::AnyNode) => 1,
            _ => params.quorum(),
        }
    }

    /// Records one node's answer.
    pub fn handle_reply(&mut self, node: NodeId, reply: Reply) {
        self.handle_counted_reply(node, reply, 0);
    }

    /// Records one node's answer with the fencing counter its `SET` returned (0: none). Only the
    /// first answer of a node counts, and only a yes to an acquisition raises the fence.
    pub fn handle_counted_reply(&mut self, node: NodeId, reply: Reply, counter: u64) {
        let first = !self.tally.answered().contains(node);
        self.tally.record(node, reply);
        if first && reply == Reply::Applied && self.kind == RoundKind::Acquire {
            if counter > self.fence {
                self.fence = counter;
                self.at_fence = NodeSet::EMPTY;
            }
            if counter == self.fence {
                self.at_fence.insert(node);
            }
        }
    }

    /// Whether winning this round still leaves the fencing write-back to do, with the
    /// `excluded` nodes' yes not counting (the restarted-node guard).
    ///
    /// The write-back exists so that a quorum's counters stand at the fence or above before
    /// the lock counts as acquired: every later quorum intersects that one, so its largest
    /// counter, once incremented, exceeds this fence. When a quorum of counted nodes already
    /// returned the fence itself with their yes, their counters stand there (a counter only
    /// grows, while its node persists it), so that quorum exists and the round is skipped: on
    /// idle masters, whose counters move together, fencing costs no second round.
    pub fn needs_write_back(&self, params: &LockParams, excluded: NodeSet) -> bool {
        self.kind == RoundKind::Acquire
            && params.fencing == Fencing::WriteBack
            && self.at_fence.difference(excluded).len() < params.quorum()
    }

    /// Whether the round stops waiting: every node answered, or so many said no or failed that
    /// a quorum is out of reach, or (with [`RoundDecision::AtQuorum`], the default) `Q` nodes
    /// applied the operation.
    ///
    /// Deciding at quorum is safe because the outcome no longer depends on the stragglers:
    /// [`finish`](QuorumRound::finish) counts only yes answers, and the lease's deadline is
    /// `T1 + ttl − drift` whatever T2 is, so a later answer could only make T2 later, which
    /// turns a win into `ValidityExhausted` at worst and never extends a belief. (With the
    /// validity check off, the mistake, the deadline is timed from T2, so deciding earlier
    /// only ends the belief earlier.)
    pub fn is_decided(&self, params: &LockParams) -> bool {
        self.is_decided_excluding(params, NodeSet::EMPTY)
    }

    /// [`is_decided`](QuorumRound::is_decided) when the yes of the `excluded` nodes does not
    /// count toward the quorum (see [`finish_excluding`](QuorumRound::finish_excluding)).
    pub fn is_decided_excluding(&self, params: &LockParams, excluded: NodeSet) -> bool {
        let n = params.node_count as usize;
        let answered = self.tally.answered();
        let unanswered_voters = NodeSet::first(n).difference(answered).difference(excluded);
        let quorum = self.quorum(params);
        let still_possible =
            self.tally.applied.difference(excluded).len() + unanswered_voters.len();
        let won = match params.decision {
            RoundDecision::AtQuorum => self.tally.applied.difference(excluded).len() >= quorum,
            RoundDecision::AllReplies => false,
        };
        won || answered.len() == n || still_possible < quorum
    }

    /// The client time at which the round stops waiting for answers: from T1, or, in a
    /// sequential round, from the request to the node it waits for.
    pub fn deadline(&self, params: &LockParams) -> Millis {
        self.asking.map_or(self.t1, |asking| asking.since) + params.round_timeout
    }

    /// In a sequential round that is not decided, moves on to the node after the one it waits
    /// for, once `answered` is that node (its answer came) or `None` (its timeout passed, which
    /// counts as a failure, as the seed's `lockInstance` returns false). Returns the node to
    /// ask now, at client time `now`.
    pub fn ask_next(
        &mut self,
        params: &LockParams,
        answered: Option<NodeId>,
        now: Millis,
    ) -> Option<NodeId> {
        let asking = self.asking?;
        match answered {
            Some(node) if node != asking.node => return None,
            Some(_) => {}
            None => self.tally.record(asking.node, Reply::Failed),
        }
        let next = NodeId(asking.node.0 + 1);
        if next.index() >= usize::from(params.node_count) {
            return None;
        }
        self.asking = Some(Asking {
            node: next,
            since: now,
        });
        Some(next)
    }

    /// Decides the round at client time `now` (this is T2): a majority of all `N` and, with
    /// the validity check on, `ttl − (T2 − T1) − drift > 0`.
    pub fn finish(&self, params: &LockParams, now: Millis) -> RoundOutcome {
        self.finish_excluding(params, now, NodeSet::EMPTY)
    }

    /// [`finish`](QuorumRound::finish) with the `excluded` nodes' yes not counting toward the
    /// quorum of `Q` out of all `N`: antirez's delayed restart enforced by the client, which
    /// excludes a node that restarted less than a TTL ago (it may have lost a key that is still
    /// live elsewhere). Excluded nodes still get the operation and the release, and the lease's
    /// tally still shows what they answered.
    pub fn finish_excluding(
        &self,
        params: &LockParams,
        now: Millis,
        excluded: NodeSet,
    ) -> RoundOutcome {
        let applied = self.tally.applied.difference(excluded).len();
        let quorum = self.quorum(params);
        if applied < quorum {
            return RoundOutcome::Lost(Failure::NoQuorum { applied, quorum });
        }
        // A clock that stepped back during the round gives a negative elapsed time; counting
        // it as zero keeps the validity at most `ttl − drift`.
        let elapsed = now - self.t1;
        let check = match (self.kind, params.validity_check) {
            (RoundKind::Extend, ValidityCheck::AcquisitionOnly) => ValidityCheck::Off,
            // Otherwise an extension always checks: `Off` concerns acquisition only.
            (RoundKind::Extend, _) | (_, ValidityCheck::AcquisitionOnly) => ValidityCheck::On,
            (RoundKind::Acquire | RoundKind::Fence, check) => check,
        };
        match check {
            ValidityCheck::On | ValidityCheck::AcquisitionOnly => {
                let budget = params.max_validity();
                if !params.validity_guard().holds(elapsed) {
                    return RoundOutcome::Lost(Failure::ValidityExhausted { elapsed });
                }
                RoundOutcome::Won(Lease {
                    token: self.token,
                    t1: self.t1,
                    validity: budget - elapsed,
                    deadline: self.t1 + budget,
                    tally: self.tally,
                    fence: self.fence,
                })
            }
            // The mistake: trust any majority, timed from the last answer.
            ValidityCheck::Off => RoundOutcome::Won(Lease {
                token: self.token,
                t1: self.t1,
                validity: params.max_validity(),
                deadline: now + params.max_validity(),
                tally: self.tally,
                fence: self.fence,
            }),
        }
    }
}

/// How a [`QuorumRound`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RoundOutcome {
    /// A majority applied the operation in time.
    Won(Lease),
    /// It did not; the client must release on all nodes.
    Lost(Failure),
}

/// Why a round did not win.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Failure {
    /// Fewer than `Q` nodes applied the operation.
    NoQuorum {
        /// How many did.
        applied: usize,
        /// How many were needed.
        quorum: usize,
    },
    /// A majority did, but the round took so long that no validity is left.
    ValidityExhausted {
        /// `T2 − T1` on the client's clock.
        elapsed: Millis,
    },
    /// The lease's own deadline had passed before the extension started.
    LeaseExpired,
}

impl Failure {
    /// Why the round failed, in the words every story uses, with durations in `unit`
    /// (`1 node said yes, it needs 2`, `the round took 4 ticks, no validity left`).
    pub fn words(self, unit: crate::time::Unit) -> String {
        match self {
            // "of the 1 nodes" would misread a one-node lock: the count and the need are told
            // apart, each with its own plural.
            Failure::NoQuorum { applied, quorum } => {
                format!("{} said yes, it needs {quorum}", nodes_amount(applied))
            }
            Failure::ValidityExhausted { elapsed } => format!(
                "the round took {}, no validity left",
                unit.amount(elapsed.as_u64())
            ),
            Failure::LeaseExpired => "its lease had expired".to_owned(),
        }
    }
}

/// `1 node`, `2 nodes`.
fn nodes_amount(n: usize) -> String {
    match n {
        1 => "1 node".to_owned(),
        n => format!("{n} nodes"),
    }
}

/// A lease won by a round: what the client may believe, and until when.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Lease {
    /// The value stored at the nodes.
    pub token: Token,
    /// The client time the winning round began.
    pub t1: Millis,
    /// How long the lease was still valid when the round was decided.
    pub validity: Millis,
    /// The client time at which the client must stop believing: `T1 + ttl − drift`.
    pub deadline: Millis,
    /// Which nodes applied it.
    pub tally: Tally,
    /// The fencing token derived from the acquisition round (see
    /// [`Fencing`](super::Fencing)); 0 when no node returned a counter.
    pub fence: u64,
}

impl Lease {
    /// Whether a client whose clock reads `now` may act as the holder.
    pub fn believes(&self, now: Millis) -> bool {
        now < self.deadline
    }

    /// Whether a holder whose clock reads `now` still has at least `margin` of its lease left:
    /// the check before each use of the guarded resource (Kleppmann's synchronous model, a
    /// margin for the longest pause and delay after the check). A clock that stepped back
    /// before T1 has more than the whole lease left.
    pub fn has_left(&self, now: Millis, margin: Millis) -> bool {
        self.deadline.signed_sub(now) >= margin.as_u64() as i64
    }
}

/// The release of one token on all `N` nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ReleaseRound {
    /// The token whose keys are deleted.
    pub token: Token,
    /// The client time the release began.
    pub started: Millis,
    /// The answers so far (to the `DEL`, on a node that got one).
    pub tally: Tally,
    /// [`UnlockMode::GetThenDel`]: the nodes whose `GET` read our value, each sent a `DEL`.
    pub deleting: NodeSet,
}

impl ReleaseRound {
    /// Starts releasing `token` at client time `now`.
    pub(crate) fn new(token: Token, now: Millis) -> ReleaseRound {
        ReleaseRound {
            token,
            started: now,
            tally: Tally::default(),
            deleting: NodeSet::EMPTY,
        }
    }

    /// The operation sent to every node: compare-and-delete, the plain-`DEL` mistake, or the
    /// `GET` of the get-then-del mistake.
    pub(crate) fn op(&self, params: &LockParams) -> Op {
        match params.unlock {
            UnlockMode::CompareAndDelete => Op::DelIfEq { token: self.token },
            UnlockMode::PlainDel => Op::Del,
            UnlockMode::GetThenDel => Op::GetEq { token: self.token },
        }
    }

    /// Whether `node`'s answer is a get-then-del `GET` that read our value, so that a `DEL`
    /// to `node` follows (and `node`'s next answer is that `DEL`'s).
    pub(crate) fn read_own_value(
        &mut self,
        params: &LockParams,
        node: NodeId,
        reply: Reply,
    ) -> bool {
        let read = params.unlock == UnlockMode::GetThenDel
            && reply == Reply::Applied
            && !self.deleting.contains(node);
        if read {
            self.deleting.insert(node);
        }
        read
    }

    /// Whether every node has answered.
    pub(crate) fn is_decided(&self, params: &LockParams) -> bool {
        self.tally.answered().len() == params.node_count as usize
    }

    /// The client time at which the release stops waiting.
    pub(crate) fn deadline(&self, params: &LockParams) -> Millis {
        self.started + params.round_timeout
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{Config, DriftPolicy};

    fn params(n: usize, ttl: u64, drift: u64) -> LockParams {
        let mut config = Config::new(n);
        config.drift = DriftPolicy::fixed(Millis(drift));
        config.round_timeout = Millis(ttl);
        config.params(Millis(ttl)).unwrap()
    }

    fn round_with(applied: &[u8], failed: &[u8]) -> QuorumRound {
        let mut round = QuorumRound::acquire(Token(1), Millis(100));
        for &n in applied {
            round.handle_reply(NodeId(n), Reply::Applied);
        }
        for &n in failed {
            round.handle_reply(NodeId(n), Reply::NotApplied);
        }
        round
    }

    #[test]
    fn a_majority_in_time_wins_with_the_deadline_anchored_at_t1() {
        let p = params(5, 10, 1);
        let round = round_with(&[0, 1, 2], &[3, 4]);
        match round.finish(&p, Millis(103)) {
            RoundOutcome::Won(lease) => {
                assert_eq!(lease.validity, Millis(6));
                assert_eq!(lease.deadline, Millis(109));
                assert!(lease.believes(Millis(108)));
                assert!(!lease.believes(Millis(109)));
            }
            lost => panic!("expected a win, got {lost:?}"),
        }
    }

    #[test]
    fn a_minority_loses_and_a_slow_majority_loses() {
        let p = params(5, 10, 1);
        assert_eq!(
            round_with(&[0, 1], &[2, 3, 4]).finish(&p, Millis(100)),
            RoundOutcome::Lost(Failure::NoQuorum {
                applied: 2,
                quorum: 3
            })
        );
        assert_eq!(
            round_with(&[0, 1, 2], &[]).finish(&p, Millis(109)),
            RoundOutcome::Lost(Failure::ValidityExhausted { elapsed: Millis(9) })
        );
    }

    #[test]
    fn without_the_validity_check_a_slow_majority_wins_a_late_lease() {
        let mut p = params(5, 10, 1);
        p.validity_check = ValidityCheck::Off;
        match round_with(&[0, 1, 2], &[]).finish(&p, Millis(112)) {
            RoundOutcome::Won(lease) => assert_eq!(lease.deadline, Millis(121)),
            lost => panic!("expected the buggy win, got {lost:?}"),
        }
    }

    #[test]
    fn acquisition_only_checks_acquisitions_but_times_a_late_extension_from_its_last_answer() {
        let mut p = params(5, 10, 1);
        p.validity_check = ValidityCheck::AcquisitionOnly;
        // An acquisition is checked as with the check on: a slow one is lost.
        assert!(matches!(
            round_with(&[0, 1, 2], &[]).finish(&p, Millis(112)),
            RoundOutcome::Lost(Failure::ValidityExhausted { .. })
        ));
        let mut extension = QuorumRound::extend(Token(1), Millis(100));
        for n in 0..3 {
            extension.handle_reply(NodeId(n), Reply::Applied);
        }
        // An extension answered after its validity ran out still wins, timed from T2.
        match extension.finish(&p, Millis(112)) {
            RoundOutcome::Won(lease) => assert_eq!(lease.deadline, Millis(121)),
            lost => panic!("expected the late extension to count, got {lost:?}"),
        }
        // With the check on (or off, which concerns acquisitions), it is lost.
        for check in [ValidityCheck::On, ValidityCheck::Off] {
            p.validity_check = check;
            assert!(matches!(
                extension.finish(&p, Millis(112)),
                RoundOutcome::Lost(Failure::ValidityExhausted { .. })
            ));
        }
    }

    #[test]
    fn a_round_is_decided_when_quorum_is_out_of_reach() {
        let p = params(5, 10, 1);
        assert!(!round_with(&[0], &[1]).is_decided(&p));
        assert!(round_with(&[0], &[1, 2, 3]).is_decided(&p));
        assert!(round_with(&[0, 1, 2, 3, 4], &[]).is_decided(&p));
    }

    #[test]
    fn at_quorum_a_round_is_decided_by_q_yes_answers_and_all_replies_waits() {
        let at_quorum = params(5, 10, 1);
        let mut all_replies = at_quorum;
        all_replies.decision = RoundDecision::AllReplies;
        let three_yes = round_with(&[0, 1, 2], &[]);
        assert!(three_yes.is_decided(&at_quorum));
        assert!(!three_yes.is_decided(&all_replies));
        // Two yes and one no: a quorum is still possible, neither mode decides.
        let open = round_with(&[0, 1], &[2]);
        assert!(!open.is_decided(&at_quorum));
        assert!(!open.is_decided(&all_replies));
        // Both modes decide a lost round and a fully answered one.
        assert!(round_with(&[0], &[1, 2, 3]).is_decided(&all_replies));
        assert!(round_with(&[0, 1, 2], &[3, 4]).is_decided(&all_replies));
        // An excluded yes does not count toward the early decision.
        let young = NodeSet::from_bits(0b001);
        assert!(!three_yes.is_decided_excluding(&at_quorum, young));
        let four_yes = round_with(&[0, 1, 2, 3], &[]);
        assert!(four_yes.is_decided_excluding(&at_quorum, young));
        // Deciding early or late, the deadline is the same: only the validity differs.
        let (RoundOutcome::Won(early), RoundOutcome::Won(late)) = (
            three_yes.finish(&at_quorum, Millis(101)),
            three_yes.finish(&all_replies, Millis(105)),
        ) else {
            panic!("a quorum in time wins")
        };
        assert_eq!(early.deadline, late.deadline);
        assert!(early.validity > late.validity);
    }

    #[test]
    fn excluded_nodes_do_not_count_toward_the_quorum() {
        let p = params(3, 10, 1);
        let round = round_with(&[0, 1], &[]);
        let young = NodeSet::from_bits(0b001);
        // Two of three said yes, but n1 restarted too recently to vote.
        assert!(matches!(
            round.finish(&p, Millis(101)),
            RoundOutcome::Won(_)
        ));
        assert_eq!(
            round.finish_excluding(&p, Millis(101), young),
            RoundOutcome::Lost(Failure::NoQuorum {
                applied: 1,
                quorum: 2
            })
        );
        // n3 may still answer yes, so the round is open; once it says no, it is decided.
        assert!(!round.is_decided_excluding(&p, young));
        let mut all_answered = round;
        all_answered.handle_reply(NodeId(2), Reply::NotApplied);
        assert!(all_answered.is_decided_excluding(&p, young));
        // With two of three excluded, a quorum is out of reach before anyone answers.
        let fresh = QuorumRound::acquire(Token(2), Millis(0));
        assert!(fresh.is_decided_excluding(&p, NodeSet::from_bits(0b011)));
        assert!(!fresh.is_decided(&p));
        // A winning round keeps the excluded node's yes in its tally (it must be released).
        match round_with(&[0, 1, 2], &[]).finish_excluding(&p, Millis(101), young) {
            RoundOutcome::Won(lease) => assert_eq!(lease.tally.applied.len(), 3),
            lost => panic!("two voters said yes, got {lost:?}"),
        }
    }

    #[test]
    fn the_fence_is_the_largest_counter_of_the_yes_answers_and_the_write_back_carries_it() {
        let mut p = params(3, 10, 1);
        let mut round = QuorumRound::acquire(Token(9), Millis(100));
        round.handle_counted_reply(NodeId(0), Reply::Applied, 4);
        // A second answer of the same node, and a no, do not move the fence.
        round.handle_counted_reply(NodeId(0), Reply::Applied, 40);
        round.handle_counted_reply(NodeId(1), Reply::NotApplied, 50);
        round.handle_counted_reply(NodeId(2), Reply::Applied, 7);
        assert_eq!(round.fence, 7);
        assert_eq!(round.at_fence, NodeSet::from_bits(0b100));
        assert!(!round.needs_write_back(&p, NodeSet::EMPTY));
        p.fencing = Fencing::WriteBack;
        assert!(round.needs_write_back(&p, NodeSet::EMPTY));
        let write_back = round.fence_round();
        assert_eq!(write_back.kind, RoundKind::Fence);
        assert_eq!(
            write_back.t1, round.t1,
            "the lease stays anchored at the SET round's T1"
        );
        assert_eq!(write_back.tally, Tally::default());
        assert_eq!(
            write_back.op(&p),
            Op::RaiseFence {
                token: Token(9),
                to: 7
            }
        );
        assert!(!write_back.needs_write_back(&p, NodeSet::EMPTY));
        match round.finish(&p, Millis(101)) {
            RoundOutcome::Won(lease) => assert_eq!(lease.fence, 7),
            lost => panic!("two of three said yes, got {lost:?}"),
        }
    }

    #[test]
    fn a_quorum_that_returned_the_fence_itself_needs_no_write_back() {
        let mut p = params(3, 10, 1);
        p.fencing = Fencing::WriteBack;
        let mut round = QuorumRound::acquire(Token(9), Millis(100));
        round.handle_counted_reply(NodeId(0), Reply::Applied, 5);
        round.handle_counted_reply(NodeId(1), Reply::Applied, 5);
        assert_eq!(round.fence, 5);
        assert!(!round.needs_write_back(&p, NodeSet::EMPTY));
        // A node the guard keeps out does not count toward that quorum.
        assert!(round.needs_write_back(&p, NodeSet::from_bits(0b010)));
        // A larger counter from a third node: only that node stands at the fence now.
        round.handle_counted_reply(NodeId(2), Reply::Applied, 6);
        assert_eq!(round.at_fence, NodeSet::from_bits(0b100));
        assert!(round.needs_write_back(&p, NodeSet::EMPTY));
    }

    #[test]
    fn the_first_answer_of_a_node_counts() {
        let mut tally = Tally::default();
        tally.record(NodeId(0), Reply::NotApplied);
        tally.record(NodeId(0), Reply::Applied);
        assert_eq!(tally.result(NodeId(0)), NodeResult::NotApplied);
        assert_eq!(tally.result(NodeId(1)), NodeResult::NoReply);
    }
}
