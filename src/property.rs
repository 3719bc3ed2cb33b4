//! The properties every part of the crate speaks of, each named once.
//!
//! The model checker judges them over its states (`model::breaks` states each `always`
//! predicate), the simulator over its runs (`sim::Violation`), the stories tell the run that
//! breaks one, and a scenario's `[expect]` table names them. All of them take the name, the
//! kind and the meaning from here, so a report, a file and a story cannot disagree on what
//! "no lost update" is called or whether it is judged on every state.
//!
//! ```
//! use redlock_lab::property::{Kind, Property};
//!
//! let p: Property = "mutual exclusion".parse().unwrap();
//! assert_eq!(p, Property::MutualExclusion);
//! assert_eq!(p.kind(), Kind::Always);
//! assert_eq!(Property::LockAcquired.to_string(), "lock acquired");
//! ```

use std::fmt;
use std::str::FromStr;

/// How a property is judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// On every reachable state: one state that breaks it is a counterexample.
    Always,
    /// On some reachable state: it holds when one state meets it (a non-vacuity witness).
    Sometimes,
    /// On every path within the horizon: a path that never meets it is a counterexample.
    Eventually,
}

/// A built-in property.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Property {
    /// Always: no two clients believe they hold the lock at the same true time.
    MutualExclusion,
    /// Always: the storage never applies an op of an older lock epoch after a newer one.
    StorageSafety,
    /// Always: the storage's counter equals the writes acknowledged to clients.
    NoLostUpdate,
    /// Sometimes: some client acquires the lock (the model is not vacuous).
    LockAcquired,
    /// Eventually, on a bounded horizon: some client acquires the lock.
    EventuallyAcquired,
}

impl Property {
    /// Every built-in property, in report order.
    pub const ALL: [Property; 5] = [
        Property::MutualExclusion,
        Property::StorageSafety,
        Property::NoLostUpdate,
        Property::LockAcquired,
        Property::EventuallyAcquired,
    ];

    /// The `always` properties: the ones a counterexample breaks, and the simulator checks.
    pub const ALWAYS: [Property; 3] = [
        Property::MutualExclusion,
        Property::StorageSafety,
        Property::NoLostUpdate,
    ];

    /// The name in reports, `[expect]` tables, `--property` and JSON.
    pub const fn name(self) -> &'static str {
        match self {
            Property::MutualExclusion => "mutual exclusion",
            Property::StorageSafety => "storage safety",
            Property::NoLostUpdate => "no lost update",
            Property::LockAcquired => "lock acquired",
            Property::EventuallyAcquired => "eventually acquired",
        }
    }

    /// How the property is judged.
    pub const fn kind(self) -> Kind {
        match self {
            Property::MutualExclusion | Property::StorageSafety | Property::NoLostUpdate => {
                Kind::Always
            }
            Property::LockAcquired => Kind::Sometimes,
            Property::EventuallyAcquired => Kind::Eventually,
        }
    }

    /// Whether the property is about the guarded storage (checked only when a scenario has
    /// one).
    pub const fn needs_storage(self) -> bool {
        matches!(self, Property::StorageSafety | Property::NoLostUpdate)
    }

    /// The property with this name, if it is a built-in one.
    pub fn from_name(name: &str) -> Option<Property> {
        Property::ALL.into_iter().find(|p| p.name() == name)
    }
}

impl fmt::Display for Property {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not a built-in property's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a built-in property (known: mutual exclusion, storage safety, no lost update, lock acquired, eventually acquired)"
)]
pub struct UnknownProperty(pub String);

impl FromStr for Property {
    type Err = UnknownProperty;

    fn from_str(name: &str) -> Result<Property, UnknownProperty> {
        Property::from_name(name).ok_or_else(|| UnknownProperty(name.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_as_its_property() {
        for p in Property::ALL {
            assert_eq!(p.name().parse::<Property>(), Ok(p));
        }
        assert!("mutual-exclusion".parse::<Property>().is_err());
    }

    #[test]
    fn the_always_properties_are_the_always_kind() {
        let always: Vec<_> = Property::ALL
            .into_iter()
            .filter(|p| p.kind() == Kind::Always)
            .collect();
        assert_eq!(always, Property::ALWAYS);
    }
}
