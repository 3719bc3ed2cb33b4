//! [`AsyncRedlock`]: the same sans-IO core driven from tokio (feature `tokio`).
//!
//! A thin driver: it sends each round's commands to all nodes at once over one multiplexed
//! connection per node, feeds the replies to [`Lock`] in the order they arrive, stops waiting
//! the moment the core has decided (the stragglers still run to the round's deadline on tasks
//! of their own, so every node gets every command), and ends the round at its deadline with a
//! tokio timer. One node's commands reach it in the order the core issued them, the
//! stragglers' included. The
//! algorithm, the quorum and the validity are the core's, exactly as in the blocking client.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use redlock_lab::driver::redis::asynchronous::AsyncRedlock;
//! use redlock_lab::proto::Config;
//! use redlock_lab::time::Millis;
//!
//! let urls = ["redis://127.0.0.1:7101", "redis://127.0.0.1:7102", "redis://127.0.0.1:7103"];
//! let mut redlock = AsyncRedlock::open(&urls, Config::new(3))?;
//! if let Some(guard) = redlock.lock("orders", Millis(10_000)).await? {
//!     // … work while guard.is_valid() …
//!     guard.unlock().await;
//! }
//! # Ok(()) }
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use ::redis::aio::MultiplexedConnection;
use ::redis::{AsyncConnectionConfig, Client, RedisError, Value};
use ::tokio::sync::oneshot;
use ::tokio::time::{Instant, sleep_until, timeout_at};
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};

use super::error::{Cause, OpenError, RedisNodeError};
use super::node::{NodeOptions, ServerInfo, build_client, connect_cause, interpret, round_cause};
use super::script;
use crate::driver::held::held_lock_view;
use crate::driver::observe::Watch;
use crate::driver::{DriverError, ErrorLog, NotAcquired, Settled, Unreachable, late_answer};
use crate::node::NodeReply;
use crate::proto::{
    self, Command, Config, Fencing, Heard, Lock, Next, Op, Tally, UsageError, validate_resource,
};
use crate::time::Millis;

/// One Redis master as the async client sees it.
struct AsyncNode {
    name: String,
    client: Client,
    options: NodeOptions,
    /// What this node's requests share, the ones still running on tasks of their own included.
    link: Arc<Mutex<Link>>,
    /// Closes when the request issued last to this node has finished or been dropped.
    tail: Option<oneshot::Receiver<()>>,
}

/// The connection to one node and what it told about the server, shared by every request to
/// the node: a straggler that connects for a decided round leaves its connection to the next
/// rounds instead of each of them dialling a connection of its own.
#[derive(Default)]
struct Link {
    connection: Option<MultiplexedConnection>,
    /// While set and in the future, the node restarted too recently to vote.
    votes_from: Option<std::time::Instant>,
}

/// What one request brought back: the node's reply to `command`.
#[derive(Debug)]
struct Arrival {
    command: Command,
    result: Result<NodeReply, RedisNodeError>,
}

impl AsyncNode {
    fn link(&self) -> MutexGuard<'_, Link> {
        lock_link(&self.link)
    }

    fn counts_toward_quorum(&self) -> bool {
        self.link()
            .votes_from
            .is_none_or(|from| std::time::Instant::now() >= from)
    }

    fn error(name: &str, cause: Cause) -> RedisNodeError {
        RedisNodeError {
            node: name.to_owned(),
            cause,
        }
    }

    /// The request as a future that owns what it needs, so a round can poll all of them at
    /// once and hand the stragglers to tasks of their own.
    ///
    /// A node's requests run one after the other, in the order they were made: each waits
    /// until the one before it to the same node has finished (or was dropped). Without that a
    /// straggler of a decided round, still connecting or not yet polled, could be overtaken by
    /// the next round's command to its node, say a release that finds no key, after which the
    /// straggling `SET` leaves the lock held there until its TTL. A round sends one command to
    /// each node, so this costs a round nothing unless the node is still busy with the last.
    fn request(
        &mut self,
        key: String,
        command: Command,
        fencing: Fencing,
        deadline: Instant,
    ) -> impl Future<Output = Arrival> + Send + use<> {
        let name = self.name.clone();
        let client = self.client.clone();
        let link = Arc::clone(&self.link);
        let connect_timeout = self.options.connect_timeout;
        let guard = self.options.restart_guard;
        let (finished, next) = oneshot::channel::<()>();
        let previous = self.tail.replace(next);
        async move {
            // Dropped with this future, however it ends: that lets the next request go.
            let _finished = finished;
            if let Some(previous) = previous {
                // Closed, never sent to: the previous request is over.
                let _ = previous.await;
            }
            let result = match linked(&link, &client, deadline, connect_timeout, guard).await {
                Ok(mut con) => run(&mut con, &key, &command.op, fencing).await,
                Err(cause) => Err(cause),
            };
            if let Err(Cause::ConnectionLost(_) | Cause::Unreachable(_)) = &result {
                lock_link(&link).connection = None;
            }
            Arrival {
                command,
                result: result.map_err(|cause| AsyncNode::error(&name, cause)),
            }
        }
    }
}

fn lock_link(link: &Mutex<Link>) -> MutexGuard<'_, Link> {
    // A request that panicked leaves nothing half-written in a link: take it as it is.
    link.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Where a lock's decided rounds' stragglers leave their replies when they come, for the lock
/// to take in (its guard does, before each operation and when asked what each node answered).
#[derive(Clone, Debug, Default)]
struct Stragglers(Arc<Mutex<Vec<Arrival>>>);

impl Stragglers {
    fn list(&self) -> MutexGuard<'_, Vec<Arrival>> {
        // A push cannot leave the list half-written: take it as it is.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Hands every arrival so far to `lock`, which records those of its acquisition.
    fn hand_in<R: RngCore>(&self, nodes: &[AsyncNode], lock: &mut Lock<R>) {
        for arrival in self.list().drain(..) {
            let node = &nodes[arrival.command.node.index()];
            let answer = late_answer(&arrival.result, || node.counts_toward_quorum());
            lock.handle_late_reply(&arrival.command, answer);
        }
    }
}

/// The node's connection, made now (and kept in `link`, with when the node may vote again)
/// when there is none.
async fn linked(
    link: &Mutex<Link>,
    client: &Client,
    deadline: Instant,
    connect_timeout: Duration,
    guard: Option<Duration>,
) -> Result<MultiplexedConnection, Cause> {
    if let Some(con) = lock_link(link).connection.clone() {
        return Ok(con);
    }
    let wait = deadline
        .saturating_duration_since(Instant::now())
        .min(connect_timeout)
        .max(Duration::from_millis(1));
    let (con, info) = connect(client, wait, guard).await?;
    let mut link = lock_link(link);
    link.connection = Some(con.clone());
    if let (Some(info), Some(guard)) = (info, guard) {
        link.votes_from = info.votes_from(guard);
    }
    Ok(con)
}

/// Connects, and reads `INFO server` when the restart guard is on.
async fn connect(
    client: &Client,
    wait: Duration,
    guard: Option<Duration>,
) -> Result<(MultiplexedConnection, Option<ServerInfo>), Cause> {
    let config = AsyncConnectionConfig::new()
        .set_connection_timeout(Some(wait))
        // The round's deadline bounds every wait; dropped requests are discarded by the driver.
        .set_response_timeout(None);
    let mut con = client
        .get_multiplexed_async_connection_with_config(&config)
        .await
        .map_err(|e| connect_cause(e, wait))?;
    let info = match guard {
        None => None,
        Some(_) => {
            let text: String = ::redis::cmd("INFO")
                .arg("server")
                .query_async(&mut con)
                .await
                .map_err(|e| connect_cause(e, wait))?;
            Some(ServerInfo::parse(&text)?)
        }
    };
    Ok((con, info))
}

/// One op on one connection: a plain command, or the op's script (`EVALSHA`, loading it when
/// the node does not know it yet).
async fn run(
    con: &mut MultiplexedConnection,
    key: &str,
    op: &Op,
    fencing: Fencing,
) -> Result<NodeReply, Cause> {
    let command = script::command(key, op, fencing);
    let mut value: Result<Value, RedisError> = command.query_async(con).await;
    // This client loads no script when it connects: the first use of each answers NOSCRIPT.
    if let (Err(e), Some(script)) = (&value, script::script_of(op, fencing))
        && e.code() == Some("NOSCRIPT")
    {
        value = match script.load_async(con).await {
            Ok(_) => command.query_async(con).await,
            Err(e) => Err(e),
        };
    }
    let value = value.and_then(Value::extract_error).map_err(|e| {
        if e.is_io_error() || e.is_connection_dropped() {
            Cause::ConnectionLost(e)
        } else {
            round_cause(key, e)
        }
    })?;
    interpret(op, fencing, value)
}

/// The async Redlock client over Redis masters: the same [`Lock`] core as the blocking
/// [`Redlock`](crate::driver::Redlock), with tokens and retry jitter from ChaCha20 seeded by
/// the operating system, and tokio's monotonic clock.
///
/// A stopped master costs one round timeout, not several: a round's requests run at once, each
/// connect is capped by what is left of the round, and the round ends at its deadline whatever
/// is still in flight. An acquisition that wins its first round and a release each return
/// within [`Config::round_timeout`] plus [`ROUND_OVERRUN`](super::ROUND_OVERRUN).
pub struct AsyncRedlock {
    nodes: Vec<AsyncNode>,
    config: Config,
    rng: ChaCha20Rng,
    origin: Instant,
}

impl std::fmt::Debug for AsyncRedlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.nodes.iter().map(|n| n.name.as_str()).collect();
        f.debug_struct("AsyncRedlock")
            .field("nodes", &names)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// The outcome of [`AsyncRedlock::try_lock`] (one attempt).
#[derive(Debug)]
#[expect(
    clippy::large_enum_variant,
    reason = "the guard is the common outcome; boxing it would cost an allocation per lock"
)]
pub enum AsyncAcquisition<'a> {
    /// The lock is held until the guard is unlocked, dropped, or its deadline passes.
    Acquired(AsyncGuard<'a>),
    /// Enough nodes answered, and they did not give the lock: somebody else holds it, the
    /// restarted-node guard left no quorum, or the rounds were too slow
    /// ([`NotAcquired::reason`] says which).
    NotAcquired(NotAcquired<RedisNodeError>),
    /// Fewer than a quorum of nodes could answer at all: nothing is known about who holds the
    /// lock. [`Unreachable::causes`] names each failed node's error.
    Unreachable(Unreachable<RedisNodeError>),
}

impl AsyncRedlock {
    /// A client over the nodes at `urls` with the default [`NodeOptions`]. No connection is
    /// made yet.
    pub fn open<S: AsRef<str>>(urls: &[S], config: Config) -> Result<AsyncRedlock, OpenError> {
        AsyncRedlock::open_with(urls, &NodeOptions::default(), config)
    }

    /// Like [`open`](AsyncRedlock::open), with `options` for every node.
    pub fn open_with<S: AsRef<str>>(
        urls: &[S],
        options: &NodeOptions,
        config: Config,
    ) -> Result<AsyncRedlock, OpenError> {
        // 128-bit tokens must be unguessable by other clients: a CSPRNG seeded from the OS.
        AsyncRedlock::open_with_rng(urls, options, config, ChaCha20Rng::from_os_rng())
    }

    /// Like [`open_with`](AsyncRedlock::open_with), with tokens and retry delays from
    /// ChaCha20 seeded with `seed`, for a test that must replay. Anyone who knows the seed can
    /// forge the tokens: never in production.
    pub fn open_with_seed<S: AsRef<str>>(
        urls: &[S],
        options: &NodeOptions,
        config: Config,
        seed: u64,
    ) -> Result<AsyncRedlock, OpenError> {
        AsyncRedlock::open_with_rng(urls, options, config, ChaCha20Rng::seed_from_u64(seed))
    }

    fn open_with_rng<S: AsRef<str>>(
        urls: &[S],
        options: &NodeOptions,
        mut config: Config,
        rng: ChaCha20Rng,
    ) -> Result<AsyncRedlock, OpenError> {
        let nodes = urls
            .iter()
            .map(|url| {
                let (name, client) = build_client(url.as_ref(), options)?;
                Ok(AsyncNode {
                    name,
                    client,
                    options: options.clone(),
                    link: Arc::default(),
                    tail: None,
                })
            })
            .collect::<Result<Vec<_>, RedisNodeError>>()?;
        config.node_count = nodes.len();
        config.validate().map_err(DriverError::from)?;
        Ok(AsyncRedlock {
            nodes,
            config,
            rng,
            origin: Instant::now(),
        })
    }

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Locks `resource` for `ttl`, retrying as [`Config::retry`] says. `Ok(None)` when the
    /// nodes answered and did not give the lock; [`DriverError::Unreachable`] when fewer than
    /// a quorum of nodes could answer at all. [`try_lock`](AsyncRedlock::try_lock) is one
    /// attempt, and says why it failed.
    pub async fn lock(
        &mut self,
        resource: &str,
        ttl: Millis,
    ) -> Result<Option<AsyncGuard<'_>>, DriverError> {
        let config = self.config;
        match self.acquire(resource, ttl, &config).await? {
            AsyncAcquisition::Acquired(guard) => Ok(Some(guard)),
            AsyncAcquisition::NotAcquired(_) => Ok(None),
            AsyncAcquisition::Unreachable(unreachable) => Err(unreachable.into()),
        }
    }

    /// One attempt to lock `resource` for `ttl` (one round, no retry, whatever
    /// [`Config::retry`] says), with the outcome told apart: acquired, refused (and why), or
    /// unreachable (and each node's error). A name collision is [`DriverError::Collision`]
    /// from both, as for the blocking client.
    pub async fn try_lock(
        &mut self,
        resource: &str,
        ttl: Millis,
    ) -> Result<AsyncAcquisition<'_>, DriverError> {
        let mut config = self.config;
        config.retry.attempts = 1;
        self.acquire(resource, ttl, &config).await
    }

    /// An acquisition under `config` (this client's, or one attempt of it).
    async fn acquire(
        &mut self,
        resource: &str,
        ttl: Millis,
        config: &Config,
    ) -> Result<AsyncAcquisition<'_>, DriverError> {
        validate_resource(resource)?;
        let origin = self.origin;
        let mut lock = Lock::acquire(config, ttl, &mut self.rng, now(origin))?;
        let mut errors = ErrorLog::default();
        let mut watch = Watch::acquiring(resource, ttl);
        let stragglers = Stragglers::default();
        let outcome = drive(
            Round {
                nodes: &mut self.nodes,
                origin,
                key: resource,
                stragglers: &stragglers,
            },
            &mut lock,
            &mut errors,
            &mut watch,
            Lock::poll_acquisition,
        )
        .await?;
        let settled = errors.settle(outcome, RedisNodeError::foreign_key);
        watch.acquisition(settled.decision(), lock.attempts(), lock.lease(), || {
            now(origin)
        });
        Ok(match settled {
            Settled::Acquired { errors } => AsyncAcquisition::Acquired(AsyncGuard {
                nodes: &mut self.nodes,
                origin,
                lock,
                resource: resource.to_owned(),
                errors,
                stragglers,
            }),
            Settled::NotAcquired(refused) => AsyncAcquisition::NotAcquired(refused),
            Settled::Unreachable(unreachable) => AsyncAcquisition::Unreachable(unreachable),
            Settled::Collision(collision) => return Err(collision.into()),
        })
    }
}

/// A held lock. Unlock it explicitly (`.await`) to see the per-node results; dropping it inside
/// a tokio runtime sends the release from a spawned task, and outside one leaves the keys to
/// expire with their TTL.
#[derive(Debug)]
#[must_use = "dropping the guard releases the lock"]
pub struct AsyncGuard<'a> {
    nodes: &'a mut [AsyncNode],
    origin: Instant,
    lock: Lock<&'a mut ChaCha20Rng>,
    resource: String,
    errors: ErrorLog<RedisNodeError>,
    /// Where the acquisition's stragglers leave their replies.
    stragglers: Stragglers,
}

impl std::fmt::Debug for AsyncNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncNode")
            .field("name", &self.name)
            .field("connected", &self.link().connection.is_some())
            .finish_non_exhaustive()
    }
}

impl<'a> AsyncGuard<'a> {
    held_lock_view!(RedisNodeError, |guard| now(guard.origin));

    /// What each node answered in the round that won the lock, as
    /// [`Guard::nodes`](crate::driver::Guard::nodes) tells it: here a straggler's answer is
    /// read on a task of its own as soon as it comes within the round's deadline, and shows
    /// from then on.
    pub fn nodes(&self) -> Heard {
        let mut heard = *self.lock.acquisition();
        // Not handed to the lock yet (that needs `&mut`): the core's rule, on a copy.
        for arrival in self.stragglers.list().iter() {
            let node = &self.nodes[arrival.command.node.index()];
            let answer = late_answer(&arrival.result, || node.counts_toward_quorum());
            heard.handle_late_reply(&arrival.command, answer);
        }
        heard
    }

    /// What the guard's next operation runs on, with the stragglers heard from so far handed
    /// to the lock first.
    fn parts(&mut self) -> Parts<'_, 'a> {
        self.stragglers.hand_in(self.nodes, &mut self.lock);
        let round = Round {
            nodes: self.nodes,
            origin: self.origin,
            key: &self.resource,
            stragglers: &self.stragglers,
        };
        (round, &mut self.lock, &mut self.errors)
    }

    /// Extends the lease by a full TTL on a majority of all nodes; `Ok(false)` when that failed
    /// (the old deadline still stands).
    pub async fn extend(&mut self) -> Result<bool, DriverError> {
        self.lock.extend(now(self.origin))?;
        let mut watch = Watch::extending(&self.resource);
        let (round, lock, errors) = self.parts();
        let extension = drive(round, lock, errors, &mut watch, Lock::poll_extension).await?;
        watch.extension(&extension, self.deadline(), || now(self.origin));
        Ok(matches!(extension, proto::Extension::Extended { .. }))
    }

    /// Releases the lock on all nodes and reports which nodes deleted our key.
    pub async fn unlock(mut self) -> Tally {
        self.lock.release(now(self.origin));
        let mut watch = Watch::releasing(&self.resource);
        let (round, lock, errors) = self.parts();
        let released = drive(round, lock, errors, &mut watch, |lock| {
            Ok(lock.poll_release())
        })
        .await;
        // A release has no usage error to report: `poll_release` always answers.
        let released = released.unwrap_or_default();
        watch.release(Some(&released));
        released
    }
}

impl Drop for AsyncGuard<'_> {
    fn drop(&mut self) {
        if self.lock.is_finished() {
            return;
        }
        self.lock.release(now(self.origin));
        let Ok(runtime) = ::tokio::runtime::Handle::try_current() else {
            // No runtime to send from: the keys expire with their TTL.
            return;
        };
        let deadline = Instant::now() + self.lock.params().round_timeout.to_duration();
        while let Some(command) = self.lock.poll_command() {
            let node = &mut self.nodes[command.node.index()];
            let fencing = self.lock.params().fencing;
            let request = node.request(self.resource.clone(), command, fencing, deadline);
            // Bounded like a round: a hung node must not hold up its later requests for ever.
            runtime.spawn(timeout_at(deadline, request));
        }
        // Nobody waits for these answers: the span says the release was only sent.
        Watch::releasing(&self.resource).release(None);
    }
}

/// The client's clock: milliseconds since the client was built, on tokio's monotonic clock.
fn now(origin: Instant) -> Millis {
    Millis::from_duration(origin.elapsed())
}

/// A guard's round, lock and error log, borrowed at once for one operation.
type Parts<'g, 'a> = (
    Round<'g>,
    &'g mut Lock<&'a mut ChaCha20Rng>,
    &'g mut ErrorLog<RedisNodeError>,
);

/// What a lock's rounds run on: the nodes, the client's clock origin, the key, and where the
/// rounds' stragglers leave their replies.
struct Round<'a> {
    nodes: &'a mut [AsyncNode],
    origin: Instant,
    key: &'a str,
    stragglers: &'a Stragglers,
}

/// Runs the operation in progress on `lock` against `round`'s nodes until `poll` says it is
/// done, in the order the core gives ([`Next`]); the I/O of one batch is [`send`]'s.
async fn drive<R: RngCore, T>(
    mut round: Round<'_>,
    lock: &mut Lock<R>,
    errors: &mut ErrorLog<RedisNodeError>,
    watch: &mut Watch,
    poll: impl Fn(&mut Lock<R>) -> Result<Next<T>, UsageError>,
) -> Result<T, UsageError> {
    let origin = round.origin;
    loop {
        match poll(lock)? {
            Next::Send(batch) => {
                watch.round_sent();
                send(&mut round, lock, errors, watch, &batch).await;
            }
            Next::WaitUntil(due) => {
                sleep_until(origin + due.to_duration()).await;
                lock.handle_timeout(now(origin));
            }
            Next::Done(outcome) => return Ok(outcome),
        }
    }
}

/// Sends one batch to all its nodes at once and feeds the replies as they arrive, until the
/// core stops waiting for the round or the round's deadline, where every command still
/// unanswered counts as a failed node. Either way the requests still in flight are finished
/// on their own tasks, so every command of the round is written.
async fn send<R: RngCore>(
    round: &mut Round<'_>,
    lock: &mut Lock<R>,
    errors: &mut ErrorLog<RedisNodeError>,
    watch: &Watch,
    batch: &[Command],
) {
    let (nodes, origin, key) = (&mut *round.nodes, round.origin, round.key);
    let budget = lock.params().round_timeout.to_duration();
    let fencing = lock.params().fencing;
    let deadline = Instant::now() + budget;
    let mut unanswered = batch.to_vec();
    let mut pending: FuturesUnordered<_> = batch
        .iter()
        .map(|&command| {
            // Boxed so that the stragglers can be taken out again and spawned.
            Box::pin(nodes[command.node.index()].request(
                key.to_owned(),
                command,
                fencing,
                deadline,
            ))
        })
        .collect();
    loop {
        match timeout_at(deadline, pending.next()).await {
            Ok(Some(arrival)) => {
                let command = arrival.command;
                unanswered.retain(|c| *c != command);
                let node = &nodes[command.node.index()];
                let answer = errors.answer(
                    &command,
                    arrival.result,
                    || node.counts_toward_quorum(),
                    watch,
                );
                lock.handle_reply(command.round, command.node, answer, now(origin));
                if !lock.is_waiting_for(command.round) {
                    finish_in_background(pending, deadline, round.stragglers);
                    return;
                }
            }
            Ok(None) => return,
            Err(_elapsed) => {
                for command in unanswered.drain(..) {
                    let name = &nodes[command.node.index()].name;
                    let error = AsyncNode::error(name, Cause::Timeout { waited: budget });
                    let answer = errors.answer(&command, Err(error), || false, watch);
                    lock.handle_reply(command.round, command.node, answer, now(origin));
                }
                finish_in_background(pending, deadline, round.stragglers);
                return;
            }
        }
    }
}

/// Hands the requests of a decided round to tokio, each bounded by the round's deadline: a
/// request that was never polled has not written its command yet (a multiplexed connection
/// queues it when first polled, and tokio's cooperative budget may defer even that), and the
/// algorithm asks for every command of a round to reach every node.
///
/// Their replies are still read, by the tasks, and left with `stragglers` for the lock (a
/// straggling `SET`'s yes says the key is on that node too). Nothing would go out of step if
/// they were not read: a multiplexed connection pairs replies with requests in its own task, in
/// the order written, and throws away the reply of a request whose future is gone. Reading
/// them is what lets the node's next request go (see [`AsyncNode::request`]), and a
/// connection lost on the way is forgotten before that request runs. A request still
/// unanswered at the deadline leaves nothing: the node has not said anything yet.
fn finish_in_background<F>(
    pending: FuturesUnordered<Pin<Box<F>>>,
    deadline: Instant,
    stragglers: &Stragglers,
) where
    F: Future<Output = Arrival> + Send + 'static,
{
    for request in pending {
        let stragglers = stragglers.clone();
        ::tokio::spawn(async move {
            if let Ok(arrival) = timeout_at(deadline, request).await {
                stragglers.list().push(arrival);
            }
        });
    }
}
