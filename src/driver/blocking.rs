//! [`Redlock`]: the blocking client, one thread, over any [`Node`].

use std::ops::ControlFlow;

use rand_chacha::ChaCha20Rng;
use rand_core::{CryptoRng, RngCore, SeedableRng};
use thiserror::Error;

use super::clock::Clock;
use super::held::held_lock_view;
use super::not_acquired::{
    Collision, ErrorLog, NodeError, NotAcquired, Settled, Unreachable, late_answer,
};
use super::observe::Watch;
use crate::node::Node;
use crate::proto::{
    Config, ConfigError, Extension, Heard, Lock, LockParams, Next, NodeSet, Tally, UsageError,
    validate_resource,
};
use crate::time::Millis;

/// A mistake in how the client was built or called. Not getting the lock is not an error.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum DriverError {
    /// The configuration, TTL or resource name was refused.
    #[error("invalid lock configuration: {0}")]
    Config(#[from] ConfigError),
    /// A call that does not fit the lock's phase.
    #[error(transparent)]
    Usage(#[from] UsageError),
    /// Fewer than a quorum of nodes could answer a `lock` at all; `try_lock` returns the same
    /// as [`Acquisition::Unreachable`], with each node's typed error.
    #[error(transparent)]
    Unreachable(Box<Unreachable<AnyNodeError>>),
    /// A key the lock needs (its name, or a node's fencing counter) holds a value another
    /// program wrote: a name collision, which no retry fixes. `lock` and `try_lock` both
    /// return it, naming the key and the nodes that reported it.
    #[error(transparent)]
    Collision(Box<Collision<AnyNodeError>>),
}

/// A node's error with its type erased, as [`DriverError::Unreachable`] carries it.
pub type AnyNodeError = Box<dyn std::error::Error + Send + Sync>;

/// The errors with their type erased.
fn erase<E: std::error::Error + Send + Sync + 'static>(
    errors: Vec<NodeError<E>>,
) -> Vec<NodeError<AnyNodeError>> {
    errors
        .into_iter()
        .map(|e| NodeError {
            node: e.node,
            error: Box::new(e.error) as AnyNodeError,
        })
        .collect()
}

impl<E: std::error::Error + Send + Sync + 'static> From<Unreachable<E>> for DriverError {
    fn from(unreachable: Unreachable<E>) -> DriverError {
        DriverError::Unreachable(Box::new(Unreachable {
            quorum: unreachable.quorum,
            attempts: unreachable.attempts,
            nodes: unreachable.nodes,
            causes: erase(unreachable.causes),
            errors: erase(unreachable.errors),
        }))
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<Collision<E>> for DriverError {
    fn from(collision: Collision<E>) -> DriverError {
        DriverError::Collision(Box::new(Collision {
            key: collision.key,
            attempts: collision.attempts,
            nodes: collision.nodes,
            causes: erase(collision.causes),
            errors: erase(collision.errors),
        }))
    }
}

/// The outcome of [`Redlock::try_lock`] (one attempt).
#[derive(Debug)]
#[expect(
    clippy::large_enum_variant,
    reason = "the guard is the common outcome; boxing it would cost an allocation per lock"
)]
pub enum Acquisition<'a, N: Node, C: Clock, R: RngCore> {
    /// The lock is held until the guard is unlocked, dropped, or its deadline passes.
    Acquired(Guard<'a, N, C, R>),
    /// Enough nodes answered, and they did not give the lock: somebody else holds it, the
    /// restarted-node guard left no quorum, or the rounds were too slow
    /// ([`NotAcquired::reason`] says which).
    NotAcquired(NotAcquired<N::Error>),
    /// Fewer than a quorum of nodes could answer at all: nothing is known about who holds the
    /// lock. [`Unreachable::causes`] names each failed node's error.
    Unreachable(Unreachable<N::Error>),
}

/// A Redlock client over `N` nodes, a clock and a cryptographic random generator.
///
/// Each round's requests go to the nodes through [`Node::execute_all`]: one after the other by
/// default (a [`Node`] with its own timeouts bounds how long one can take), all at once for
/// `RedisNode`, which writes every request before it reads any reply and stops waiting once the
/// round is decided.
#[derive(Debug)]
pub struct Redlock<N, C, R> {
    nodes: Vec<N>,
    config: Config,
    clock: C,
    rng: R,
}

impl<N: Node, C: Clock> Redlock<N, C, ChaCha20Rng> {
    /// A client whose tokens come from ChaCha20 seeded by the operating system: what a real
    /// deployment needs, with no random-number crate to pick. See [`new`](Redlock::new) for
    /// the rest.
    pub fn with_os_rng(nodes: Vec<N>, config: Config, clock: C) -> Result<Self, DriverError> {
        Redlock::new(nodes, config, clock, ChaCha20Rng::from_os_rng())
    }

    /// A client whose tokens and retry delays come from ChaCha20 seeded with `seed`, so a test
    /// or an example replays exactly. Anyone who knows the seed can forge the tokens: use
    /// [`with_os_rng`](Redlock::with_os_rng) against real nodes.
    pub fn with_seed(
        nodes: Vec<N>,
        config: Config,
        clock: C,
        seed: u64,
    ) -> Result<Self, DriverError> {
        Redlock::new(nodes, config, clock, ChaCha20Rng::seed_from_u64(seed))
    }
}

impl<N: Node, C: Clock, R: RngCore + CryptoRng> Redlock<N, C, R> {
    /// A client over `nodes`. `config.node_count` is set to `nodes.len()`; the rest of the
    /// configuration is validated now. `rng` draws the tokens, so it must be a CSPRNG; it is
    /// generic over [`rand_core`](crate::rand_core)'s traits (re-exported, so its version is
    /// this crate's). [`with_seed`](Redlock::with_seed) and
    /// [`with_os_rng`](Redlock::with_os_rng) need no random-number crate at all.
    pub fn new(nodes: Vec<N>, mut config: Config, clock: C, rng: R) -> Result<Self, DriverError> {
        config.node_count = nodes.len();
        config.validate()?;
        Ok(Redlock {
            nodes,
            config,
            clock,
            rng,
        })
    }

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The nodes, to inspect them.
    pub fn nodes(&self) -> &[N] {
        &self.nodes
    }

    /// The nodes, to act on them (crash one in a test, say).
    pub fn nodes_mut(&mut self) -> &mut [N] {
        &mut self.nodes
    }

    /// The client's clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// Locks `resource` for `ttl`, retrying as [`Config::retry`] says (three attempts by
    /// default, a random pause between them). `Ok(None)` when the nodes answered and did not
    /// give the lock (somebody else holds it); [`DriverError::Unreachable`] when fewer than a
    /// quorum of nodes could answer at all. [`try_lock`](Redlock::try_lock) is one attempt,
    /// and says why it failed.
    pub fn lock(
        &mut self,
        resource: &str,
        ttl: Millis,
    ) -> Result<Option<Guard<'_, N, C, R>>, DriverError> {
        let config = self.config;
        match self.acquire(resource, ttl, &config)? {
            Acquisition::Acquired(guard) => Ok(Some(guard)),
            Acquisition::NotAcquired(_) => Ok(None),
            Acquisition::Unreachable(unreachable) => Err(unreachable.into()),
        }
    }

    /// One attempt to lock `resource` for `ttl`: one round to every node, no retry, whatever
    /// [`Config::retry`] says (a loop of `try_lock`s paces its own retries, as
    /// `redlock-lab run` does). The outcome is told apart: acquired, refused (and why), or
    /// unreachable (and each node's error). A name collision (a key of the lock holds another
    /// program's value) is [`DriverError::Collision`] from both, when a node said so: see
    /// [`Collision`] for when that is.
    pub fn try_lock(
        &mut self,
        resource: &str,
        ttl: Millis,
    ) -> Result<Acquisition<'_, N, C, R>, DriverError> {
        let mut config = self.config;
        config.retry.attempts = 1;
        self.acquire(resource, ttl, &config)
    }

    /// An acquisition under `config` (this client's, or one attempt of it).
    fn acquire(
        &mut self,
        resource: &str,
        ttl: Millis,
        config: &Config,
    ) -> Result<Acquisition<'_, N, C, R>, DriverError> {
        validate_resource(resource)?;
        let mut lock = Lock::acquire(config, ttl, &mut self.rng, self.clock.now())?;
        let mut errors = ErrorLog::default();
        let mut watch = Watch::acquiring(resource, ttl);
        let outcome = drive(
            &mut self.nodes,
            &self.clock,
            resource,
            &mut lock,
            &mut errors,
            &mut watch,
            Lock::poll_acquisition,
        )?;
        let settled = errors.settle(outcome, N::foreign_key);
        watch.acquisition(settled.decision(), lock.attempts(), lock.lease(), || {
            self.clock.now()
        });
        Ok(match settled {
            Settled::Acquired { errors } => Acquisition::Acquired(Guard {
                nodes: &mut self.nodes,
                clock: &self.clock,
                lock,
                resource: resource.to_owned(),
                errors,
            }),
            Settled::Unreachable(unreachable) => Acquisition::Unreachable(unreachable),
            Settled::NotAcquired(refused) => Acquisition::NotAcquired(refused),
            Settled::Collision(collision) => return Err(collision.into()),
        })
    }
}

/// A held lock. Unlock it explicitly to see the per-node results; dropping it unlocks too.
#[derive(Debug)]
pub struct Guard<'a, N: Node, C: Clock, R: RngCore> {
    nodes: &'a mut [N],
    clock: &'a C,
    lock: Lock<&'a mut R>,
    resource: String,
    errors: ErrorLog<N::Error>,
}

impl<'a, N: Node, C: Clock, R: RngCore> Guard<'a, N, C, R> {
    /// The client's clock, borrowed for as long as the guard borrows the client (a watchdog
    /// thread reads it).
    pub fn clock(&self) -> &'a C {
        self.clock
    }
}

impl<N: Node, C: Clock, R: RngCore> Guard<'_, N, C, R> {
    held_lock_view!(N::Error, |guard| guard.clock.now());

    /// What each node answered in the round that won the lock, as the core recorded it: who
    /// holds our key, who said no, who failed, and who had not answered when the round was
    /// decided ([`Heard::at_decision`]). A straggler's answer is recorded when the client
    /// reads it, which for a Redis node is on the node's next request (an extension, the
    /// release); [`Heard::may_hold_key`] then says where the key may be. The release goes to
    /// every node regardless.
    pub fn nodes(&self) -> Heard {
        *self.lock.acquisition()
    }

    /// The nodes whose yes the restarted-node guard did not count in the winning round (they
    /// hold our key all the same, and are released with the others).
    pub fn restarted(&self) -> NodeSet {
        self.lock.acquisition().restarted()
    }

    /// Extends the lease by a full TTL from now on a majority of all nodes. `Ok(false)` when
    /// the extension did not win a majority in time or the deadline had already passed; the old
    /// deadline then still stands.
    pub fn extend(&mut self) -> Result<bool, DriverError> {
        Ok(matches!(self.try_extend()?, Extension::Extended { .. }))
    }

    /// Like [`extend`](Guard::extend), with why it failed and what every node said.
    pub fn try_extend(&mut self) -> Result<Extension, DriverError> {
        self.lock.extend(self.clock.now())?;
        let mut watch = Watch::extending(&self.resource);
        let extension = drive(
            self.nodes,
            self.clock,
            &self.resource,
            &mut self.lock,
            &mut self.errors,
            &mut watch,
            Lock::poll_extension,
        )?;
        watch.extension(&extension, self.deadline(), || self.clock.now());
        Ok(extension)
    }

    /// The lock's resolved numbers: quorum, TTL, drift, round timeout.
    pub fn params(&self) -> &LockParams {
        self.lock.params()
    }

    /// Releases the lock on all nodes and reports which nodes deleted our key.
    pub fn unlock(mut self) -> Tally {
        self.release()
    }

    fn release(&mut self) -> Tally {
        self.lock.release(self.clock.now());
        let mut watch = Watch::releasing(&self.resource);
        let released = drive(
            self.nodes,
            self.clock,
            &self.resource,
            &mut self.lock,
            &mut self.errors,
            &mut watch,
            |lock| Ok(lock.poll_release()),
        );
        // A release has no usage error to report: `poll_release` always answers.
        let released = released.unwrap_or_default();
        watch.release(Some(&released));
        released
    }
}

impl<N: Node, C: Clock, R: RngCore> Drop for Guard<'_, N, C, R> {
    fn drop(&mut self) {
        if !self.lock.is_finished() {
            self.release();
        }
    }
}

/// Runs the operation in progress on `lock` against `nodes` until `poll` says it is done: each
/// batch goes to [`Node::execute_all`] (in order for most nodes, all at once for Redis), every
/// answer is fed with the clock reading taken when it arrived, and every error is kept with its
/// round (and shown to `watch`). The order of things is the core's ([`Next`]).
fn drive<N: Node, C: Clock, R: RngCore, T>(
    nodes: &mut [N],
    clock: &C,
    key: &str,
    lock: &mut Lock<R>,
    errors: &mut ErrorLog<N::Error>,
    watch: &mut Watch,
    poll: impl Fn(&mut Lock<R>) -> Result<Next<T>, UsageError>,
) -> Result<T, UsageError> {
    loop {
        match poll(lock)? {
            Next::Send(batch) => {
                let params = *lock.params();
                watch.round_sent();
                let watch = &*watch;
                N::execute_all(nodes, key, &batch, &params, |node, command, result| {
                    let answer =
                        errors.answer(&command, result, || node.counts_toward_quorum(), watch);
                    lock.handle_reply(command.round, command.node, answer, clock.now());
                    // Once the round is decided a hung minority costs nothing more.
                    if lock.is_waiting_for(command.round) {
                        ControlFlow::Continue(())
                    } else {
                        ControlFlow::Break(())
                    }
                });
                // Stragglers of earlier rounds the nodes read on the way: the core keeps
                // those of this lock's acquisition, so the guard knows where the key may be.
                for node in nodes.iter_mut() {
                    for (command, result) in node.take_late_replies() {
                        let answer = late_answer(&result, || node.counts_toward_quorum());
                        lock.handle_late_reply(&command, answer);
                    }
                }
            }
            Next::WaitUntil(due) => {
                clock.sleep_until(due);
                lock.handle_timeout(clock.now());
            }
            Next::Done(outcome) => return Ok(outcome),
        }
    }
}
