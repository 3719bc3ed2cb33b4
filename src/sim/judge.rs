//! The properties a run is judged by, checked at every instant of true time.
//!
//! - **mutual exclusion**, as *belief*: a client believes iff its lock holds a lease and its own
//!   clock reads before the lease's deadline `T1 + ttl − drift`; two believers at one true
//!   instant are a violation. (Checking "holds a lease" alone would flag correct Redlock: a
//!   holder that never releases overlaps the next holder once its keys expire.)
//! - **storage safety** (fenced order): the storage never applies an operation of an older
//!   acquisition epoch after one of a newer epoch;
//! - **no lost update**: the counter equals the writes acknowledged as successful.
//!
//! The storage properties are judged by [`Storage`]'s own ghost bookkeeping.

use std::collections::BTreeSet;
use std::fmt;

use crate::storage::{Storage, ordinal};
use crate::time::Millis;

pub use crate::property::Property;

/// A client that believes it holds the lock, with the epoch of its lease.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Believer {
    /// Which client.
    pub client: usize,
    /// The acquisition epoch of its lease.
    pub epoch: u32,
}

/// A property that failed, and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Violation {
    /// Two clients believed at the same true time.
    MutualExclusion {
        /// The first true instant of the overlap.
        at: Millis,
        /// The believer of the older epoch.
        first: Believer,
        /// The believer of the newer epoch.
        second: Believer,
    },
    /// The storage applied an operation of an older epoch after one of a newer epoch.
    StorageSafety {
        /// When.
        at: Millis,
        /// The client whose stale operation was applied.
        client: usize,
        /// The stale operation's epoch.
        epoch: u32,
    },
    /// The counter no longer equals the acknowledged writes.
    LostUpdate {
        /// When.
        at: Millis,
        /// The counter.
        value: u32,
        /// Writes acknowledged as successful.
        acknowledged_writes: u32,
    },
}

impl Violation {
    /// The property that failed.
    pub const fn property(&self) -> Property {
        match self {
            Violation::MutualExclusion { .. } => Property::MutualExclusion,
            Violation::StorageSafety { .. } => Property::StorageSafety,
            Violation::LostUpdate { .. } => Property::NoLostUpdate,
        }
    }

    /// The true time it was detected.
    pub const fn at(&self) -> Millis {
        match *self {
            Violation::MutualExclusion { at, .. }
            | Violation::StorageSafety { at, .. }
            | Violation::LostUpdate { at, .. } => at,
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Violation::MutualExclusion { at, first, second } => write!(
                f,
                "{}: at t={} both c{} (holding the {} lock acquired) and c{} (the {}) believe they hold the lock",
                self.property(),
                at.0,
                first.client + 1,
                ordinal(first.epoch),
                second.client + 1,
                ordinal(second.epoch)
            ),
            Violation::StorageSafety { at, client, epoch } => write!(
                f,
                "{}: at t={} the storage applied an op of c{} for the {} lock acquired after an op of a later lock",
                self.property(),
                at.0,
                client + 1,
                ordinal(epoch)
            ),
            Violation::LostUpdate {
                at,
                value,
                acknowledged_writes,
            } => write!(
                f,
                "{}: at t={} the counter is {value} after {acknowledged_writes} acknowledged writes",
                self.property(),
                at.0
            ),
        }
    }
}

/// Keeps each violation to one report: a belief overlap once per pair of epochs, each storage
/// property once (its ghost flags are sticky).
#[derive(Clone, Debug, Default)]
pub(super) struct Checker {
    overlaps: BTreeSet<(u32, u32)>,
    storage_order_reported: bool,
    lost_update_reported: bool,
}

impl Checker {
    /// Checks mutual exclusion at true time `now` among `believers` (sorted by client).
    pub(super) fn check_beliefs(&mut self, now: Millis, believers: &[Believer]) -> Vec<Violation> {
        let mut found = Vec::new();
        for (i, a) in believers.iter().enumerate() {
            for b in &believers[i + 1..] {
                let (first, second) = if a.epoch <= b.epoch {
                    (*a, *b)
                } else {
                    (*b, *a)
                };
                if self.overlaps.insert((first.epoch, second.epoch)) {
                    found.push(Violation::MutualExclusion {
                        at: now,
                        first,
                        second,
                    });
                }
            }
        }
        found
    }

    /// Checks the storage properties after `client` had an operation of `epoch` applied.
    pub(super) fn check_storage(
        &mut self,
        now: Millis,
        storage: &Storage,
        client: usize,
        epoch: u32,
    ) -> Vec<Violation> {
        let mut found = Vec::new();
        if !storage.fenced_order_holds() && !self.storage_order_reported {
            self.storage_order_reported = true;
            found.push(Violation::StorageSafety {
                at: now,
                client,
                epoch,
            });
        }
        if !storage.no_lost_update_holds() && !self.lost_update_reported {
            self.lost_update_reported = true;
            found.push(Violation::LostUpdate {
                at: now,
                value: storage.value,
                acknowledged_writes: storage.acknowledged_writes,
            });
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{Protection, StorageOp};

    fn believer(client: usize, epoch: u32) -> Believer {
        Believer { client, epoch }
    }

    #[test]
    fn one_believer_is_fine_and_two_are_reported_once_per_pair() {
        let mut checker = Checker::default();
        assert!(
            checker
                .check_beliefs(Millis(1), &[believer(0, 1)])
                .is_empty()
        );
        let two = [believer(0, 2), believer(1, 1)];
        let found = checker.check_beliefs(Millis(2), &two);
        assert_eq!(
            found,
            vec![Violation::MutualExclusion {
                at: Millis(2),
                first: believer(1, 1),
                second: believer(0, 2)
            }]
        );
        assert!(checker.check_beliefs(Millis(3), &two).is_empty());
        let three = [believer(0, 2), believer(1, 1), believer(2, 3)];
        assert_eq!(checker.check_beliefs(Millis(4), &three).len(), 2);
        assert_eq!(
            found[0].to_string(),
            "mutual exclusion: at t=2 both c2 (holding the 1st lock acquired) and c1 (the 2nd) believe they hold the lock"
        );
    }

    #[test]
    fn storage_violations_are_reported_once_each() {
        let mut checker = Checker::default();
        let mut storage = Storage::default();
        let p = Protection::None;
        storage.apply(StorageOp::Read { epoch: 1, fence: 1 }, p);
        assert!(checker.check_storage(Millis(1), &storage, 0, 1).is_empty());
        storage.apply(StorageOp::Read { epoch: 2, fence: 2 }, p);
        storage.apply(
            StorageOp::Write {
                epoch: 2,
                fence: 2,
                value: 1,
            },
            p,
        );
        storage.apply(
            StorageOp::Write {
                epoch: 1,
                fence: 1,
                value: 1,
            },
            p,
        );
        let found = checker.check_storage(Millis(5), &storage, 0, 1);
        let properties: Vec<_> = found.iter().map(Violation::property).collect();
        assert_eq!(
            properties,
            vec![Property::StorageSafety, Property::NoLostUpdate]
        );
        assert!(checker.check_storage(Millis(6), &storage, 0, 1).is_empty());
    }
}
