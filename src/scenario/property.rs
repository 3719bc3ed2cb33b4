use crate::property::Property;

/// Always: no two clients believe they hold the lock at the same true time.
pub const MUTUAL_EXCLUSION: &str = Property::MutualExclusion.name();
/// Always: the storage never applies an op of an older lock epoch after a newer one.
pub const STORAGE_SAFETY: &str = Property::StorageSafety.name();
/// Always: the storage's counter equals the writes acknowledged to clients.
pub const NO_LOST_UPDATE: &str = Property::NoLostUpdate.name();
/// Sometimes: some client acquires the lock (the non-vacuity witness).
pub const LOCK_ACQUIRED: &str = Property::LockAcquired.name();
/// Eventually, on a bounded horizon: some client (or the one `[liveness] client` names)
/// acquires the lock.
pub const EVENTUALLY_ACQUIRED: &str = Property::EventuallyAcquired.name();
/// Every built-in property.
pub const ALL: [&str; 5] = [
    MUTUAL_EXCLUSION,
    STORAGE_SAFETY,
    NO_LOST_UPDATE,
    LOCK_ACQUIRED,
    EVENTUALLY_ACQUIRED,
];
