//! Internals that the integration tests in `tests/` reach, behind the `testing` feature: not an
//! API, and free to change with the code they test. `cargo test --all-features` turns it on.
//!
//! The zone engine is the checker's symbolic-time engine; a user reaches it through
//! [`check`](crate::check) with [`Engine::Zones`](crate::check::Engine::Zones), and
//! `tests/zones.rs` drives it directly to hold its verdicts to the discrete engine's.

pub use crate::zones::{
    Judgement, Options, StorageConfig, TimedRun, TimedStep, ZoneConfig, ZoneOutcome, ZoneStep,
    explore,
};
