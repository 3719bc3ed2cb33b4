//! Redlock with time and faults as a hand-written [`stateright::Model`].
//!
//! The state ([`World`]) carries discrete **true time** as a ghost, the nodes as the core's
//! [`NodeState`](crate::node::NodeState) on their own clocks, the clients as the core's
//! [`QuorumRound`](crate::proto::QuorumRound) and [`Lease`](crate::proto::Lease) values on
//! their own clocks, the guarded [`Storage`](crate::storage::Storage), the requests in flight
//! and the fault budgets. The actions ([`Step`]) are the environment's — one global `Tick`,
//! deliveries and losses, pauses, clock jumps, crashes, fsyncs, replica promotion — and the
//! clients' — begin a round (read T1, send `SET` to all), decide it (read T2, quorum and
//! validity by the core), release, and the storage ops of a read-modify-write cycle. The model
//! re-implements none of the algorithm: quorum, validity and release come from [`crate::proto`],
//! key semantics from [`crate::node`], the storage's checks from [`crate::storage`].
//!
//! **Clock error** is nondeterminism at each clock reading, not a per-process rate: a node's
//! key may vanish up to `ε_n` ticks early (a `SET` may read the node's clock `ε_n` ahead), and so
//! may everything else the node measures on that clock (its restart delay, the uptime the
//! restarted-node guard waits for), and a
//! client's belief may run up to `ε_c` ticks late (its belief test and its checks read the clock
//! `ε_c` behind). This is the discrete form of bounded rate drift (research/scenarios.md I1), and
//! far cheaper than offset variables.
//!
//! **The fingerprint** is time-shift invariant and symmetry reduced (see the `view` module), so
//! the safety run needs no horizon.
//!
//! # Properties
//!
//! | name | kind | meaning |
//! |---|---|---|
//! | `mutual exclusion` | always | no two clients *believe* at the same true time; a client believes iff it holds a lease and its clock (read up to `ε_c` late) is before `T1 + ttl − drift` |
//! | `storage safety` | always | the storage never applies an op of an older lock epoch after one of a newer epoch (fenced order); only with `[storage]` |
//! | `no lost update` | always | the counter equals the writes acknowledged; only with `[storage]` |
//! | `lock acquired` | sometimes | some client acquires: the witness that a verdict of "holds" is not vacuous |
//! | `eventually acquired` | eventually | on every run, some client (the one `[liveness] client` names, if any) acquires before the horizon |
//!
//! `eventually acquired` is judged on a separate, bounded run (`Mode::Liveness`): stateright's
//! `eventually` is incomplete on cyclic graphs, so that run hashes true time and stops at
//! `[liveness] horizon_ticks`. Its **fairness assumption**: processes and the network are
//! prompt — time passes only when no client step and no delivery is enabled — while faults stay
//! nondeterministic; with `isolated_rounds`, also assumption F of research/scenarios.md (a round
//! begins only when no other round runs, i.e. random retry delays eventually separate clients).
//! With `[liveness] client`, a holder that still believes is working rather than idle: time may
//! pass while it holds, and it releases or extends when it likes; a holder whose lease ran out
//! is prompt again.
//!
//! # Sound shortcuts
//!
//! - Replies are applied at once: a later reply would only delay the decision, and the lease
//!   is anchored at T1, so it could only shorten the belief window.
//! - Unlocks are applied at once to the serving nodes a client reaches: a late
//!   compare-and-delete only keeps a key longer; a late `DEL` is the same as a later release,
//!   which the model already allows.
//! - A client begins its next round only after its previous `SET`s arrived or were lost: a
//!   connection to a node is FIFO, so an old `SET` reaches that node before the new one.
//! - A holder computes in zero time between storage ops; time passes inside its cycle only
//!   while an op waits (network delay up to `[storage] max_delay_ticks`, stretched by a
//!   pause fault). The check before each op and the op's arrival are separate steps, so a
//!   pause "between the check and the write" is exactly a stretched wait.

mod apply;
mod explorer;
mod fence;
mod listener;
mod moments;
mod redlock;
mod shape;
mod step;
#[cfg(test)]
mod tests;
mod view;
mod vocabulary;
mod world;

pub(crate) use crate::event::{Event, Moment};
pub(crate) use explorer::QUIET_RUN;
pub(crate) use moments::{line as step_line, path_moments};
pub use redlock::{Invariant, InvariantFn, MAX_USER_INVARIANTS, RedlockModel, breaks};
pub(crate) use shape::Mode;
pub use step::Step;
pub use world::{Activity, ClientView, Replica, Work, World};
