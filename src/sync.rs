//! The synchronisation types of the crate's threaded code, and the only place that names them.
//!
//! Normal builds get `std`'s types; a build with `RUSTFLAGS="--cfg redlock_loom"` gets loom's,
//! so `tests/loom_watchdog.rs` can explore every interleaving of the watchdog thread against
//! its owner. Code that must be model-checked takes its `Arc`, `Mutex`, `Condvar`, atomics and
//! `thread::spawn` from here, never from `std` directly: a `std` type inside a loom model is
//! invisible to the checker and hides the very races it is there to find.
//!
//! The cfg is project-specific (`redlock_loom`, not `loom`) because `--cfg loom` applies to
//! every crate in the build graph and breaks dependencies that know that name.

#[cfg(redlock_loom)]
pub(crate) use loom::{
    sync::{
        Arc, Condvar, Mutex, MutexGuard,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    thread,
};

#[cfg(not(redlock_loom))]
pub(crate) use std::{
    sync::{
        Arc, Condvar, Mutex, MutexGuard,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    thread,
};
