//! The guarded resource: a counter that lock holders update with read-modify-write cycles.
//!
//! Lock safety is only a means; what users care about is that the storage behind the lock is not
//! corrupted. This module is the storage side of the controversy, pure and clock-free, shared
//! by the simulator and the model checker:
//!
//! - without protection, every read and write is applied (Kleppmann's "unsafe lock");
//! - with a **fencing token** (a number that grows with every acquisition) the storage rejects
//!   an operation whose token is below the largest it has seen — on every operation, or, as a
//!   variant that falls short, on writes only;
//! - with **antirez's random-token CAS**, a holder first marks the storage as its own and
//!   writes only if the mark is still its own.
//!
//! Two properties are judged here, from ghost bookkeeping that a real storage would not have:
//! *fenced order* (no operation of an older lock epoch is applied after one of a newer epoch)
//! and *no lost update* (the counter equals the number of writes acknowledged as successful).

use crate::proto::Fencing;

/// How the storage protects itself from stale lock holders.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Protection {
    /// Every operation is applied.
    #[default]
    None,
    /// Every operation carries a fencing token; one below the largest seen is rejected.
    FencingToken,
    /// Only writes are fenced (reads are not): a variant that still loses updates.
    FencingOnWritesOnly,
    /// antirez's alternative: `mark(owner := token)` before working, write only if the owner
    /// is still the writer's token.
    RandomTokenCas,
}

impl Protection {
    /// The value a scenario file writes (`protection = "fencing-token"`), and printouts use.
    pub const fn word(self) -> &'static str {
        match self {
            Protection::None => "none",
            Protection::FencingToken => "fencing-token",
            Protection::FencingOnWritesOnly => "fencing-on-writes-only",
            Protection::RandomTokenCas => "random-token-cas",
        }
    }
}

/// Whether the storage checks an op and applies it in one step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CheckAndApply {
    /// The check and the apply are one atomic step, as fencing requires. Correct.
    #[default]
    Atomic,
    /// The storage checks an op's token when it arrives and applies it in a later step, with
    /// other ops free to run in between (a check-then-act race: a read of the largest token,
    /// then a write, not one transaction). Two ops may both pass their check before either is
    /// applied, and the older one be applied last. Kept for the model.
    TwoStep,
}

impl CheckAndApply {
    /// The value a scenario file writes (`check = "two-step"`), and printouts use.
    pub const fn word(self) -> &'static str {
        match self {
            CheckAndApply::Atomic => "atomic",
            CheckAndApply::TwoStep => "two-step",
        }
    }
}

/// Where a holder's fencing token comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TokenSource {
    /// An ideal global counter: the token is the acquisition's epoch, always strictly larger
    /// than every earlier acquisition's.
    #[default]
    Ideal,
    /// One `INCR` on a separate counter node after the lock is acquired (the holder may pause
    /// before it, and the counter node may crash).
    CounterAfterAcquire,
    /// The largest per-node counter the acquisition's quorum returned with its `SET`s, with
    /// no write-back.
    LockQuorumMaxOnly,
    /// The same, written back to a quorum before the lock counts as acquired.
    ///
    /// The model checks one resource, so its node counters are that resource's alone. The
    /// Redis client keeps one counter per node for every resource (`FENCE_COUNTER_KEY`), which
    /// other resources' acquisitions raise in between; they only raise it, and the argument
    /// needs only that a node's counter never falls: a later holder's quorum meets the earlier
    /// holder's write-back quorum, where its own increment lands above the earlier token.
    /// `tests/proto_props.rs` checks it with arbitrary raises between acquisitions.
    LockQuorum,
}

impl TokenSource {
    /// The lock's fencing rule this token source needs: the lock nodes' counters are read
    /// (and written back) only when they feed the token.
    pub fn fencing(self) -> Fencing {
        match self {
            TokenSource::Ideal | TokenSource::CounterAfterAcquire => Fencing::Off,
            TokenSource::LockQuorumMaxOnly => Fencing::MaxOnly,
            TokenSource::LockQuorum => Fencing::WriteBack,
        }
    }
}

/// One kind of operation in a holder's read-modify-write cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// Claim the storage ([`Protection::RandomTokenCas`] only).
    Mark,
    /// Read the counter.
    Read,
    /// Write the value read plus one.
    Write,
}

impl OpKind {
    /// The operation of this kind for a holder of `epoch` with token `fence` whose cycle
    /// read `read` so far (a write stores the value read plus one).
    pub const fn op(self, epoch: u32, fence: u32, read: Option<u32>) -> StorageOp {
        match self {
            OpKind::Mark => StorageOp::Mark { epoch },
            OpKind::Read => StorageOp::Read { epoch, fence },
            OpKind::Write => StorageOp::Write {
                epoch,
                fence,
                value: match read {
                    Some(value) => value + 1,
                    None => 1,
                },
            },
        }
    }
}

impl Protection {
    /// The operations of one holder's cycle under this protection: read then write, with a
    /// mark first for antirez's check-and-set. Both engines of the model checker run this
    /// cycle.
    pub const fn cycle(self) -> &'static [OpKind] {
        match self {
            Protection::RandomTokenCas => &[OpKind::Mark, OpKind::Read, OpKind::Write],
            Protection::None | Protection::FencingToken | Protection::FencingOnWritesOnly => {
                &[OpKind::Read, OpKind::Write]
            }
        }
    }
}

/// What a holder asks of the storage. `epoch` is the ghost number of the acquisition the
/// operation was issued under (1 for the first lock ever acquired), which judges the
/// properties; `fence` is the fencing token the holder was given, which the storage checks
/// (equal to the epoch with an [ideal](TokenSource::Ideal) counter).
///
/// With the `model` feature it serialises as the stories' JSON does (`{"op": "write", "epoch":
/// 1, "fence": 1, "value": 1}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(
    feature = "model",
    derive(serde::Serialize),
    serde(tag = "op", rename_all = "kebab-case")
)]
pub enum StorageOp {
    /// Claim the storage for `epoch` (only meaningful under [`Protection::RandomTokenCas`]).
    Mark {
        /// The acquisition epoch, also used as the owner's token.
        epoch: u32,
    },
    /// Read the counter.
    Read {
        /// The acquisition epoch.
        epoch: u32,
        /// The fencing token.
        fence: u32,
    },
    /// Write `value` (the value read plus one).
    Write {
        /// The acquisition epoch.
        epoch: u32,
        /// The fencing token.
        fence: u32,
        /// The value to store.
        value: u32,
    },
}

impl std::fmt::Display for StorageOp {
    /// `read (token 1)`, `write counter=1 (token 1)`: the words every story, diagram and
    /// trace uses. The one number the storage compares is the *token*; the ghost epoch is
    /// told only when the token does not follow it, as which lock acquired the op belongs to
    /// (`write counter=1 (token 3, for the 2nd lock acquired)`); a token of 0 is one not taken
    /// yet (a separate counter is asked just before the op lands). A mark carries its epoch as
    /// its token.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (what, epoch) = (self.action(), self.epoch());
        let nth = ordinal(epoch);
        match self.fence() {
            0 => write!(
                f,
                "{what} (token still to take, for the {nth} lock acquired)"
            ),
            fence if fence != epoch => {
                write!(f, "{what} (token {fence}, for the {nth} lock acquired)")
            }
            fence => write!(f, "{what} (token {fence})"),
        }
    }
}

/// `1st`, `2nd`, `3rd`, `4th`, `11th`, `21st`: which lock acquired, in a sentence.
pub fn ordinal(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

impl StorageOp {
    /// What the operation does, without its token: `mark`, `read`, `write counter=1` (the
    /// value it stores, which a bare `write 1` would let a reader take for an op's number).
    pub fn action(&self) -> String {
        match *self {
            StorageOp::Mark { .. } => "mark".to_owned(),
            StorageOp::Read { .. } => "read".to_owned(),
            StorageOp::Write { value, .. } => format!("write counter={value}"),
        }
    }

    /// The epoch the operation was issued under.
    pub const fn epoch(&self) -> u32 {
        match *self {
            StorageOp::Mark { epoch }
            | StorageOp::Read { epoch, .. }
            | StorageOp::Write { epoch, .. } => epoch,
        }
    }

    /// The same operation carrying `fence` (a mark carries none).
    pub const fn with_fence(self, fence: u32) -> StorageOp {
        match self {
            StorageOp::Mark { .. } => self,
            StorageOp::Read { epoch, .. } => StorageOp::Read { epoch, fence },
            StorageOp::Write { epoch, value, .. } => StorageOp::Write {
                epoch,
                fence,
                value,
            },
        }
    }

    /// The fencing token the operation carries (the epoch for a mark, which is not fenced).
    pub const fn fence(&self) -> u32 {
        match *self {
            StorageOp::Mark { epoch } => epoch,
            StorageOp::Read { fence, .. } | StorageOp::Write { fence, .. } => fence,
        }
    }
}

/// The storage's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StorageReply {
    /// A read's value.
    Value(u32),
    /// A write or mark took effect (for a write: acknowledged to the client).
    Done,
    /// The protection refused the operation.
    Rejected,
}

/// What the storage's protection compared before it applied or refused an op: the reason a
/// story gives for either (a stale op that a fenced storage still applies is the lesson of
/// several scenarios, and it is only understood with the two tokens side by side).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "model",
    derive(serde::Serialize),
    serde(tag = "check", rename_all = "kebab-case")
)]
pub enum Comparison {
    /// The storage has no protection: it checks nothing.
    Unprotected,
    /// The protection lets this kind of op through unchecked (a read when only writes are
    /// fenced; a mark or a read under antirez's check-and-set).
    Unchecked,
    /// The op's token was compared with the largest token the storage had accepted in a
    /// checked op ([`Storage::max_fence`]).
    Token {
        /// The largest token accepted before this op (0: none yet).
        largest: u32,
    },
    /// antirez's check-and-set: the write's token was compared with the storage's mark.
    Owner {
        /// The token the storage was marked with (0: never marked).
        mark: u32,
    },
    /// [`CheckAndApply::TwoStep`]: the op passed its check when it arrived, and is applied
    /// now without a second look.
    CheckedEarlier,
}

impl Comparison {
    /// The check `protection` makes on `op`, given the largest token seen and the mark.
    const fn of(op: StorageOp, protection: Protection, largest: u32, mark: u32) -> Comparison {
        match (protection, op) {
            (Protection::None, _) => Comparison::Unprotected,
            (Protection::FencingToken, _)
            | (Protection::FencingOnWritesOnly, StorageOp::Write { .. }) => {
                Comparison::Token { largest }
            }
            (Protection::RandomTokenCas, StorageOp::Write { .. }) => Comparison::Owner { mark },
            (Protection::FencingOnWritesOnly | Protection::RandomTokenCas, _) => {
                Comparison::Unchecked
            }
        }
    }

    /// Whether the check lets `op` through.
    pub const fn allows(self, op: StorageOp) -> bool {
        match self {
            Comparison::Unprotected | Comparison::Unchecked | Comparison::CheckedEarlier => true,
            Comparison::Token { largest } => op.fence() >= largest,
            Comparison::Owner { mark } => mark == op.epoch(),
        }
    }
}

/// The counter, its protection state, and the ghost bookkeeping of the two properties.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Storage {
    /// The counter.
    pub value: u32,
    /// The largest fencing token seen ([`Protection::FencingToken`] and
    /// [`Protection::FencingOnWritesOnly`]).
    pub max_fence: u32,
    /// The current owner mark ([`Protection::RandomTokenCas`]).
    pub owner: u32,
    /// Ghost: the largest epoch of any operation applied so far.
    pub max_epoch_applied: u32,
    /// Ghost: an operation of an older epoch was applied after one of a newer epoch.
    pub order_violated: bool,
    /// Ghost: writes acknowledged as successful.
    pub acknowledged_writes: u32,
}

impl Storage {
    /// Applies one operation atomically (the check and the apply are one step, as fencing
    /// requires).
    pub fn apply(&mut self, op: StorageOp, protection: Protection) -> StorageReply {
        self.apply_guarded(op, protection).0
    }

    /// [`apply`](Storage::apply), with the check that decided it: a story tells why the
    /// storage took or refused the op from the very comparison that decided.
    pub fn apply_guarded(
        &mut self,
        op: StorageOp,
        protection: Protection,
    ) -> (StorageReply, Comparison) {
        let guard = Comparison::of(op, protection, self.max_fence, self.owner);
        if !guard.allows(op) {
            return (StorageReply::Rejected, guard);
        }
        (self.take(op, protection), guard)
    }

    /// [`CheckAndApply::TwoStep`]'s first step: the check the protection makes on `op` now,
    /// changing nothing. An op it allows is applied later with
    /// [`apply_checked`](Storage::apply_checked); one it refuses is refused by
    /// [`apply_guarded`](Storage::apply_guarded) with the same guard.
    pub const fn check(&self, op: StorageOp, protection: Protection) -> Comparison {
        Comparison::of(op, protection, self.max_fence, self.owner)
    }

    /// [`CheckAndApply::TwoStep`]'s second step: applies `op`, which passed its
    /// [`check`](Storage::check) earlier, without looking again.
    pub fn apply_checked(&mut self, op: StorageOp, protection: Protection) -> StorageReply {
        self.take(op, protection)
    }

    /// Applies `op`, which the protection let through.
    fn take(&mut self, op: StorageOp, protection: Protection) -> StorageReply {
        let epoch = op.epoch();
        let fence = op.fence();
        let fenced_op = match protection {
            Protection::FencingToken => true,
            Protection::FencingOnWritesOnly => matches!(op, StorageOp::Write { .. }),
            Protection::None | Protection::RandomTokenCas => false,
        };
        if fenced_op {
            self.max_fence = self.max_fence.max(fence);
        }
        if epoch < self.max_epoch_applied {
            self.order_violated = true;
        }
        self.max_epoch_applied = self.max_epoch_applied.max(epoch);
        match op {
            StorageOp::Mark { epoch } => {
                self.owner = epoch;
                StorageReply::Done
            }
            StorageOp::Read { .. } => StorageReply::Value(self.value),
            StorageOp::Write { value, .. } => {
                self.value = value;
                self.acknowledged_writes += 1;
                StorageReply::Done
            }
        }
    }

    /// *Fenced order*: no operation of an older epoch was applied after one of a newer epoch.
    pub fn fenced_order_holds(&self) -> bool {
        !self.order_violated
    }

    /// *No lost update*: the counter equals the writes acknowledged as successful.
    pub fn no_lost_update_holds(&self) -> bool {
        self.value == self.acknowledged_writes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kleppmann's pause: A (epoch 1) reads 0, B (epoch 2) reads 0 and writes 1, A writes 1.
    fn paused_writer(protection: Protection) -> Storage {
        let mut storage = Storage::default();
        storage.apply(StorageOp::Mark { epoch: 1 }, protection);
        storage.apply(StorageOp::Read { epoch: 1, fence: 1 }, protection);
        storage.apply(StorageOp::Mark { epoch: 2 }, protection);
        storage.apply(StorageOp::Read { epoch: 2, fence: 2 }, protection);
        storage.apply(
            StorageOp::Write {
                epoch: 2,
                fence: 2,
                value: 1,
            },
            protection,
        );
        storage.apply(
            StorageOp::Write {
                epoch: 1,
                fence: 1,
                value: 1,
            },
            protection,
        );
        storage
    }

    #[test]
    fn an_unprotected_storage_loses_the_update_and_the_order() {
        let storage = paused_writer(Protection::None);
        assert!(!storage.no_lost_update_holds());
        assert!(!storage.fenced_order_holds());
    }

    #[test]
    fn a_fencing_token_rejects_the_stale_write() {
        let storage = paused_writer(Protection::FencingToken);
        assert!(storage.no_lost_update_holds());
        assert!(storage.fenced_order_holds());
    }

    #[test]
    fn random_token_cas_rejects_the_stale_write() {
        let storage = paused_writer(Protection::RandomTokenCas);
        assert!(storage.no_lost_update_holds());
        assert!(storage.fenced_order_holds());
    }

    #[test]
    fn random_token_cas_lets_a_stale_holder_preempt_the_current_one() {
        // antirez's scheme keeps updates but not order: A, paused before marking, marks after B.
        let p = Protection::RandomTokenCas;
        let mut storage = Storage::default();
        storage.apply(StorageOp::Mark { epoch: 2 }, p);
        storage.apply(StorageOp::Read { epoch: 2, fence: 2 }, p);
        storage.apply(StorageOp::Mark { epoch: 1 }, p);
        storage.apply(StorageOp::Read { epoch: 1, fence: 1 }, p);
        assert_eq!(
            storage.apply(
                StorageOp::Write {
                    epoch: 1,
                    fence: 1,
                    value: 1
                },
                p
            ),
            StorageReply::Done
        );
        assert_eq!(
            storage.apply(
                StorageOp::Write {
                    epoch: 2,
                    fence: 2,
                    value: 1
                },
                p
            ),
            StorageReply::Rejected
        );
        assert!(storage.no_lost_update_holds());
        assert!(!storage.fenced_order_holds());
    }

    #[test]
    fn a_two_step_check_lets_both_ops_pass_and_the_older_land_last() {
        let p = Protection::FencingToken;
        let mut storage = Storage::default();
        let older = StorageOp::Read { epoch: 1, fence: 1 };
        let newer = StorageOp::Read { epoch: 2, fence: 2 };
        assert!(storage.check(older, p).allows(older));
        assert!(storage.check(newer, p).allows(newer));
        storage.apply_checked(newer, p);
        storage.apply_checked(older, p);
        assert!(!storage.fenced_order_holds());
        // The atomic storage refuses the older op once the newer one is applied.
        let mut atomic = Storage::default();
        atomic.apply(newer, p);
        assert_eq!(atomic.apply(older, p), StorageReply::Rejected);
        assert!(atomic.fenced_order_holds());
    }

    #[test]
    fn fencing_writes_only_keeps_order_but_loses_updates() {
        let p = Protection::FencingOnWritesOnly;
        let mut storage = Storage::default();
        storage.apply(StorageOp::Read { epoch: 1, fence: 1 }, p);
        storage.apply(StorageOp::Read { epoch: 2, fence: 2 }, p);
        storage.apply(
            StorageOp::Write {
                epoch: 1,
                fence: 1,
                value: 1,
            },
            p,
        );
        storage.apply(
            StorageOp::Write {
                epoch: 2,
                fence: 2,
                value: 1,
            },
            p,
        );
        assert!(!storage.no_lost_update_holds());
    }
}
