//! A deterministic simulator: Redlock in a seeded world of drifting clocks, lossy networks,
//! crashing nodes and pausing clients.
//!
//! One `u64` seed and a [`SimConfig`] reproduce a run exactly: every random choice comes from
//! [`ChaCha8Rng`](rand_chacha::ChaCha8Rng) streams of that seed, nothing reads a real clock, and
//! the world steps in discrete true time (one tick is one millisecond). [`run`] returns an
//! [`Outcome`] with the trace and the violations; [`Outcome::report`] prints the seed and every
//! resolved option first and ends with the command that replays the run. The trace tells what
//! nodes, clients, the storage and faults do with the model checker's events
//! ([`crate::event`]): the same actors, the same words.
//!
//! ```
//! use redlock_lab::catalog;
//! use redlock_lab::scenario::Scenario;
//! use redlock_lab::sim::{self, Property, SimConfig};
//!
//! // A world of the simulator's own, `models/sim/antirez-safe.toml`, embedded in the crate.
//! let file = catalog::find_world("antirez-safe").expect("a simulator world");
//! let config = SimConfig::from_scenario(&Scenario::from_str(file.file, file.text)?)?;
//! let outcome = sim::run(&config, 7)?;
//! assert!(outcome.holds(Property::MutualExclusion), "{}", outcome.report(40));
//! assert!(outcome.stats.acquisitions > 0);
//! // The same seed replays the same run, event for event.
//! assert_eq!(sim::run(&config, 7)?.trace, outcome.trace);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## What the simulator models
//!
//! - **Clocks**: every node and every client has its own clock with an offset, a rate error of
//!   up to `±ρ` parts per million, and step jumps forward or backward. Readings are whole
//!   milliseconds. Nodes expire keys on their clock; clients time their leases on theirs.
//! - **Nodes**: the shared [`NodeState`](crate::node::NodeState) (Redis's `SET NX PX`,
//!   compare-and-delete, lazy and active expiry) on the node's clock; crashes with no
//!   persistence, `fsync=always` or a periodic fsync; a restart after a downtime, followed by
//!   a delayed restart measured on the node's own clock (a jump during it cuts it short),
//!   and optionally the clients' restarted-node guard (a young node's yes does not count); and,
//!   with a [`Failover`], one master whose asynchronous replica is promoted when it fails.
//! - **Clients**: the core's [`Lock`](crate::proto::Lock), unchanged, on the client's clock:
//!   acquisition with retries, extensions before the work, read-modify-write cycles on the
//!   storage while the lease has validity left, release; process pauses during which a client
//!   handles nothing, and crashes after which it does nothing at all (its keys expire on their
//!   own); optionally one token value for every client.
//! - **Network**: per-message delay (so messages reorder), loss on the lock traffic, node
//!   partitions, and extra delay for a chosen storage operation.
//! - **Storage**: the shared [`Storage`](crate::storage::Storage) counter with no protection,
//!   a fencing token (the acquisition's epoch, the lock nodes' counters, or one `INCR` on a
//!   separate counter node after acquiring), fencing on writes only, or random-token CAS.
//! - **Checks**, at every tick: mutual exclusion as *belief* (two clients whose clocks are
//!   before their leases' deadlines at the same true time), fenced order and lost updates at
//!   the storage ([`Property`]).
//!
//! ## What it does not model
//!
//! - Redis's sampled active expiry (expiry here is exact against the node clock).
//! - Byzantine behaviour, message duplication or corruption; a lost message is simply gone.
//! - Time finer than a millisecond: events within one tick happen in a fixed order (faults,
//!   nodes, deliveries, clients by index), which is one interleaving, not all of them. The
//!   model checker explores the interleavings; the simulator samples large configurations.
//! - The storage's own network is delayed but never loses messages, and the storage never
//!   fails.
//!
//! ## Scenarios
//!
//! [`SimConfig::from_scenario`] (module [`bridge`](crate::bridge), which reads the scenario so
//! that this module does not) maps a `models/*.toml` scenario onto a world (one tick is one
//! millisecond) and documents what is exact, what is approximated and what is refused;
//! `redlock-lab simulate` runs it. A bridged world is a swarm search ([`SimConfig::swarm`]):
//! each run draws from its seed which fault kinds are on, its round timeout, think time and
//! network speed, whether its first holder checks its lease as late as its margin allows
//! ([`WorkloadConfig::late_check`]) and whether its other clients begin when the first
//! holder's keys go ([`WorkloadConfig::rival_start`]) and whether its first client takes its
//! fencing write-back's answers only after a rival acquired ([`WorkloadConfig::late_answers`]),
//! and aims most faults at an event of
//! the run ([`Anchor`]: a key set, a lease check) rather than a uniform time, since the
//! windows where a fault breaks safety are a few milliseconds wide.
//!
//! A scenario with a `[simulate]` table describes a world of the simulator's own instead: a long
//! workload under the faults the table lists. The simulator's worlds in `models/sim/`
//! ([`catalog::SIMULATOR_WORLDS`](crate::catalog::SIMULATOR_WORLDS)) pair each claim of the
//! controversy with such a world, and their `[simulate.expect]` says whether it should keep
//! or break it. A clean run is evidence, not proof: it samples schedules.

mod client;
mod clock;
mod draw;
mod fault;
mod judge;
mod network;
mod run_outcome;
mod server;
mod setup;
mod trace;
mod world;

pub use fault::{
    Aim, AimedFault, Anchor, Fault, FaultBudget, FaultClass, FaultPlan, KindBudget, ScheduledFault,
    SwarmFaults,
};
pub use judge::{Believer, Property, Violation};
pub use network::{Message, Payload};
pub use run_outcome::{Outcome, Stats, SwarmRun};
pub use setup::{
    ClockConfig, CrashConfig, Failover, MAX_CLIENTS, MAX_DURATION, MAX_RATE_ERROR_PPM, MAX_SPAN,
    NetworkConfig, Provenance, SimConfig, SimConfigError, Swarm, WorkloadConfig,
};
pub use trace::{TraceEntry, TraceEvent};
pub use world::run;
