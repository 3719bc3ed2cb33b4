//! The schedule executed: each line of the checker's story at its moment (one tick = the
//! replay's tick), the clients' cores fed that moment's clock reading and what the real
//! masters answered, and reality compared with the model line by line.
//!
//! Each client is a `proto::Lock` (the shipped core) with its own connections (`RedisNode`s,
//! the shipped driver's). A request goes out when the story says the node handles it (a delay
//! holds it; a lost one is never sent), and its answer waits in the client's mailbox until the
//! story's client decides, as the model's client does. A release goes to every live master at
//! once (the model's shortcut). A node's clock jump moves its master's clock through the
//! clock shim; a crash is SIGKILL and a restart without persistence, after the restart delay.

use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use redlock_lab::driver::RedisNode;
use redlock_lab::driver::redis::NodeOptions;
use redlock_lab::event::Event;
use redlock_lab::node::{Node, NodeReply, Persistence};
use redlock_lab::proto::{
    Answer, Command, Config, Fencing, Lock, LockEvent, NodeId, Op, Reply, RoundId,
};
use redlock_lab::rand_chacha::ChaCha8Rng;
use redlock_lab::rand_core::SeedableRng;
use redlock_lab::report::Line;
use redlock_lab::time::Millis;

use super::masters::Masters;
use super::store::Store;

/// The resource every replayed lock guards.
const RESOURCE: &str = "replay";

/// One client: its core, its connections, the requests it sent that no node handled yet, and
/// the answers it has not read yet.
struct Client {
    lock: Option<Lock<ChaCha8Rng>>,
    links: Vec<RedisNode>,
    pending: Vec<Option<Command>>,
    mailbox: Vec<(RoundId, NodeId, Answer)>,
    /// The client's clock minus true time, in ticks (a clock jump moves it).
    offset_ticks: i64,
    /// The token of its last `SET`, to tell its key when reading a master back.
    last_token: Option<String>,
    /// Which lock acquired in the real run its lease is (1 for the first).
    acquisition: Option<u32>,
}

/// A client's belief on real time, in milliseconds since the replay started.
#[derive(Clone, Copy, Debug)]
pub(super) struct Belief {
    /// The client, from 0.
    pub client: usize,
    /// When its core said acquired.
    pub from_ms: i64,
    /// When its clock reaches the deadline, or it released.
    pub until_ms: i64,
    /// The deadline on the client's clock, in milliseconds.
    deadline_ms: i64,
}

/// A replay in progress.
pub(super) struct Replay {
    masters: Masters,
    configs: Vec<Config>,
    ttl: Millis,
    tick_ms: u64,
    clients: Vec<Client>,
    start: Instant,
    /// `ε_c` in milliseconds: a client's belief may run this much late (its clock error).
    client_error_ms: i64,
    /// Every client draws the same tokens (the scenario's `token = "shared"` mistake).
    shared_tokens: bool,
    /// Every belief the cores reported.
    pub beliefs: Vec<Belief>,
    /// The guarded storage, on a master of its own, when the story has storage steps.
    pub store: Option<Store>,
    /// Locks acquired so far in the real run.
    acquisitions: u32,
    /// The failover's promotion delay is not zero.
    promotion_delayed: bool,
    /// How every client connects (its restart guard).
    options: NodeOptions,
}

/// The replay's times, and how the clients draw their tokens.
pub(super) struct Timing {
    /// The lock's TTL, scaled.
    pub ttl: Millis,
    /// One tick, in milliseconds.
    pub tick_ms: u64,
    /// The scenario's `ε_c`.
    pub client_error_ticks: u32,
    /// Every client draws the same tokens.
    pub shared_tokens: bool,
    /// What a master's restart keeps (the scenario's crash persistence).
    pub persistence: Persistence,
    /// A fenced store on one more master, for the story's storage steps.
    pub storage: bool,
    /// The model's replica slots, each as the node it replicates (empty without a failover).
    pub replicas: Vec<usize>,
    /// The promoted replica serves only after a promotion delay (the model's node then says
    /// `serves again`).
    pub promotion_delayed: bool,
    /// The clients' restarted-node guard (`NodeOptions::restart_guard`), scaled, if they run
    /// one.
    pub guard: Option<Duration>,
}

/// What a node's answer must be, for the real master to agree with the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    Applied,
    /// Applied, and the client's restart guard keeps the yes out of its quorum.
    Guarded,
    NotApplied,
    Failed,
}

impl Replay {
    /// Starts `nodes` masters and `clients` cores over them.
    pub(super) fn start(nodes: usize, configs: Vec<Config>, timing: Timing) -> Result<Replay> {
        let Timing {
            ttl,
            tick_ms,
            client_error_ticks,
            shared_tokens,
            persistence,
            storage,
            replicas,
            promotion_delayed,
            guard,
        } = timing;
        let masters = Masters::start(nodes + usize::from(storage), persistence, &replicas)?;
        let options = NodeOptions {
            restart_guard: guard,
            ..NodeOptions::default()
        };
        if let Some(guard) = guard {
            // A node the replay just started is young too: the model's nodes are not.
            masters.wait_until_up_for(nodes, guard)?;
        }
        let store = if storage {
            Some(Store::open(&masters.url(nodes), configs.len())?)
        } else {
            None
        };
        let clients = (0..configs.len())
            .map(|_| {
                Ok(Client {
                    lock: None,
                    links: links(&masters, nodes, &options)?,
                    pending: vec![None; nodes],
                    mailbox: Vec::new(),
                    offset_ticks: 0,
                    last_token: None,
                    acquisition: None,
                })
            })
            .collect::<Result<_>>()?;
        Ok(Replay {
            masters,
            configs,
            ttl,
            tick_ms,
            clients,
            start: Instant::now(),
            client_error_ms: i64::from(client_error_ticks) * tick_ms as i64,
            shared_tokens,
            beliefs: Vec::new(),
            store,
            acquisitions: 0,
            promotion_delayed,
            options,
        })
    }

    /// Milliseconds since the replay started.
    pub(super) fn elapsed_ms(&self) -> f64 {
        self.start.elapsed().as_secs_f64() * 1_000.0
    }

    /// Waits until tick `t`'s moment (in slices, so an interrupt is seen within 10 ms).
    pub(super) fn wait_for(&self, t: u32, interrupted: &dyn Fn() -> bool) -> Result<()> {
        let at = self.start + Duration::from_millis(u64::from(t) * self.tick_ms);
        while let Some(left) = at.checked_duration_since(Instant::now()) {
            if interrupted() {
                bail!("interrupted");
            }
            thread::sleep(left.min(Duration::from_millis(10)));
        }
        Ok(())
    }

    /// Executes one line of the story; `Ok(Err(why))` when reality parted from the model.
    pub(super) fn step(&mut self, line: &Line) -> Result<Result<String, String>> {
        if let Event::OpArrived {
            client,
            op,
            applied,
            ..
        } = &line.event
        {
            return self.store_op(client_index(client)?, op, *applied);
        }
        let (kind, index) = actor(&line.actor)?;
        let t = i64::from(line.t);
        Ok(match (&line.event, kind) {
            (Event::RoundBegan { t1, .. }, 'c') => self.begin(index, *t1),
            (Event::RequestLost { node }, 'c') => {
                self.clients[index].pending[node_index(node)?] = None;
                Ok("the request is never sent".to_owned())
            }
            (Event::RequestDelayed { .. }, _) => Ok("the request is held".to_owned()),
            (Event::ClockJumped { reads, .. }, kind) => self.jump(kind, index, *reads - t)?,
            (Event::Replicated { owner }, 'r') => self.replicate(index, owner.as_ref())?,
            (Event::ExtensionBegan { .. }, 'c') => self.extend(index, t)?,
            (Event::Released { .. }, 'c') => self.release(index, t)?,
            (event, 'c') if decision(event).is_some() => self.decide(index, line, t)?,
            (event, _) if passive(event) => Ok(String::new()),
            (event, 'n') => match self.node_step(index, event)? {
                Some(real) => real,
                None => bail!("the replay cannot execute this step yet: {}", line.sentence),
            },
            _ => bail!("the replay cannot execute this step yet: {}", line.sentence),
        })
    }

    /// A line of node `n`: a request it handles, a crash, a restart, an expiry, a failover;
    /// `None` for an event the replay does not execute.
    fn node_step(&mut self, n: usize, event: &Event) -> Result<Option<Result<String, String>>> {
        Ok(Some(match event {
            Event::KeySet {
                client,
                fast_by,
                restart_over,
                ..
            } => {
                if *restart_over && !self.masters.is_up(n) {
                    // On the node's fast clock its restart delay is already over.
                    self.masters.restart(n)?;
                    self.reconnect(n)?;
                }
                self.deliver(client_index(client)?, n, Expect::Applied, *fast_by)?
            }
            Event::FenceRaised { client, .. } | Event::KeyExtended { client, .. } => {
                self.deliver(client_index(client)?, n, Expect::Applied, 0)?
            }
            Event::SetRefused { client, .. }
            | Event::FenceRefused { client }
            | Event::ExtensionRefused { client } => {
                self.deliver(client_index(client)?, n, Expect::NotApplied, 0)?
            }
            Event::GuardRefused { client } => self.guard_refused(client_index(client)?, n),
            Event::NotServing { client, .. } => {
                self.deliver(client_index(client)?, n, Expect::Failed, 0)?
            }
            Event::Crashed {
                restarts,
                restart_delay,
                ..
            } => self.crash(n, *restarts && *restart_delay == 0)?,
            Event::ServesAgain => {
                let done = self.masters.restart(n)?;
                self.reconnect(n)?;
                Ok(done.to_owned())
            }
            Event::KeyExpired { owner, .. } => self.read_back(n, owner)?,
            Event::Fsynced { .. } => Ok(self.masters.fsync(n)?),
            Event::Promoted { lost, replica, .. } => {
                let r = match replica {
                    Some(replica) => replica_index(&replica.to_string())?,
                    // The node's only replica.
                    None => self.masters.first_replica_of(n)?,
                };
                self.fail_over(r, lost.as_ref())?
            }
            _ => return Ok(None),
        }))
    }

    /// A client reads T1 and its core starts a round (the first) or the next one (a retry).
    fn begin(&mut self, c: usize, t1: i64) -> Result<String, String> {
        let now = self.ms(t1);
        let client = &mut self.clients[c];
        match &mut client.lock {
            Some(lock) if !lock.is_finished() => lock.handle_timeout(now),
            _ => {
                // Seeded, so a replay draws the same tokens every time; one seed for all when
                // the scenario's clients share their tokens.
                let seed = if self.shared_tokens { 0 } else { c as u64 };
                let rng = ChaCha8Rng::seed_from_u64(seed);
                let lock = Lock::acquire(&self.configs[c], self.ttl, rng, now)
                    .map_err(|e| format!("the core refused the configuration: {e}"))?;
                client.lock = Some(lock);
            }
        }
        self.drain(c)?;
        Ok(format!(
            "core sends SET NX PX {} ms",
            self.px(self.ttl).as_u64()
        ))
    }

    /// Node `n` handles client `c`'s request now: sent to the real master, its answer compared
    /// with the model's and left in the client's mailbox. A node clock read `fast_by` ticks
    /// fast (the model's clock error) is that much ahead while it handles the request.
    fn deliver(
        &mut self,
        c: usize,
        n: usize,
        expect: Expect,
        fast_by: u32,
    ) -> Result<Result<String, String>> {
        let Some(command) = self.clients[c].pending[n].take() else {
            return Ok(Err(format!(
                "c{} has no request for n{} to handle",
                c + 1,
                n + 1
            )));
        };
        let base = self.masters.offset_ms(n);
        let fast = i64::from(fast_by) * self.tick_ms as i64;
        if fast != 0 {
            self.masters.set_offset_ms(n, base + fast)?;
        }
        let (answer, told) = self.execute(c, &command);
        if fast != 0 {
            self.masters.set_offset_ms(n, base)?;
        }
        // A guarded yes is the model's key set too: its next line says the guard kept it out
        // (`guard_refused`), and the core's decision shows a guard that acted where it did not.
        let said = match answer_expect(answer) {
            Expect::Guarded => Expect::Applied,
            said => said,
        };
        self.clients[c]
            .mailbox
            .push((command.round, command.node, answer));
        if said == expect {
            Ok(Ok(told))
        } else {
            Ok(Err(format!(
                "n{} {told}, where the model's node {}",
                n + 1,
                model_word(expect)
            )))
        }
    }

    /// The model's guard kept node `n`'s yes out of client `c`'s quorum: so must the client's
    /// real guard have, on the answer it just got.
    fn guard_refused(&self, c: usize, n: usize) -> Result<String, String> {
        match self.clients[c]
            .mailbox
            .iter()
            .rfind(|entry| entry.1.index() == n)
        {
            Some((_, _, answer)) if answer_expect(*answer) == Expect::Guarded => {
                Ok("the client's restart guard kept the yes out".to_owned())
            }
            _ => Err(format!(
                "n{}'s yes counted for c{}, where the model's guard kept it out",
                n + 1,
                c + 1
            )),
        }
    }

    /// Sends `command` on client `c`'s connection: the answer for the core, and in words.
    fn execute(&mut self, c: usize, command: &Command) -> (Answer, String) {
        let n = command.node.index();
        let op = self.real_op(command.op);
        let fencing = self.configs[c].fencing;
        let link = &mut self.clients[c].links[n];
        match link.execute(RESOURCE, &op, fencing) {
            // The shipped client's guard: a young node's yes does not count.
            Ok(reply) if !link.counts_toward_quorum() => (
                Answer {
                    counts: false,
                    ..Answer::from(reply)
                },
                format!(
                    "{} (a young node: the guard keeps its yes out)",
                    said(&op, reply, fencing)
                ),
            ),
            Ok(reply) => (Answer::from(reply), said(&op, reply, fencing)),
            Err(e) => (Answer::from(Reply::Failed), format!("failed: {e}")),
        }
    }

    /// The op as the real master gets it: a key lives half a tick less than its scaled TTL.
    /// The model drops a key when the node's clock reaches its expiry, Redis once its clock is
    /// past it; the half tick puts the real expiry between the ticks, where no line happens,
    /// so scheduling jitter below half a tick cannot move an expiry across a line.
    fn real_op(&self, op: Op) -> Op {
        match op {
            Op::SetNxPx { token, ttl } => Op::SetNxPx {
                token,
                ttl: self.px(ttl),
            },
            Op::PExpireIfEq { token, ttl } => Op::PExpireIfEq {
                token,
                ttl: self.px(ttl),
            },
            other => other,
        }
    }

    fn px(&self, ttl: Millis) -> Millis {
        ttl - Millis(self.tick_ms / 2)
    }

    /// A clock jump: a node's master through the shim, a client's in the readings its core
    /// gets from now on (and the real end of its belief).
    fn jump(&mut self, kind: char, i: usize, offset_ticks: i64) -> Result<Result<String, String>> {
        let offset_ms = offset_ticks * self.tick_ms as i64;
        if kind == 'n' {
            self.masters.set_offset_ms(i, offset_ms)?;
            return Ok(Ok(format!(
                "n{}'s clock set to true time {offset_ms:+} ms",
                i + 1
            )));
        }
        self.clients[i].offset_ticks = offset_ticks;
        for belief in self.beliefs.iter_mut().filter(|b| b.client == i) {
            if belief.until_ms > belief.from_ms {
                belief.until_ms = belief.deadline_ms - offset_ms + self.client_error_ms;
            }
        }
        Ok(Ok(format!(
            "c{}'s core reads true time {offset_ms:+} ms",
            i + 1
        )))
    }

    /// SIGKILL to node `n`'s master; restarted at once (empty, or replaying its log) when the
    /// model restarts it at once, else at its `serves again` line.
    fn crash(&mut self, n: usize, restart_now: bool) -> Result<Result<String, String>> {
        let done = self.masters.lose_power(n)?;
        if !restart_now {
            return Ok(Ok(done));
        }
        self.masters.restart(n)?;
        self.reconnect(n)?;
        Ok(Ok(format!("{done}; restarted")))
    }

    /// New connections to node `n` for every client (the old ones died with the process),
    /// made at once under a restart guard: the guard counts from the connection that saw the
    /// restart, as a client's connection breaks and redials when its node restarts.
    fn reconnect(&mut self, n: usize) -> Result<()> {
        let url = self.masters.url(n);
        for client in &mut self.clients {
            client.links[n] = RedisNode::open_with(&url, self.options.clone())?;
            if self.options.restart_guard.is_some() {
                client.links[n].query(&redis::cmd("PING"))?;
            }
        }
        Ok(())
    }

    /// The model says `owner`'s key expired on node `n`: read the key back from the master.
    fn read_back(
        &mut self,
        n: usize,
        owner: &redlock_lab::actor::Actor,
    ) -> Result<Result<String, String>> {
        if !self.masters.is_up(n) {
            return Ok(Ok("down".to_owned()));
        }
        let value = Self::value_at(&self.masters.url(n))?;
        let token = &self.clients[client_index(owner)?].last_token;
        Ok(match value {
            Some(value) if Some(&value) == token.as_ref() => {
                Err(format!("n{} still holds {owner}'s key", n + 1))
            }
            Some(value) => Ok(format!("GET {RESOURCE} = {value}")),
            None => Ok(format!("GET {RESOURCE} = nil")),
        })
    }
}

impl Replay {
    /// The resource's value on the server at `url` (a master, or a replica: it serves reads).
    fn value_at(url: &str) -> Result<Option<String>> {
        Ok(redis::cmd("GET")
            .arg(RESOURCE)
            .query(&mut redis::Client::open(url)?.get_connection()?)?)
    }

    /// Whose key `value` is, in words, with the owner the model names.
    fn owner_of(&self, value: Option<&String>) -> String {
        let Some(value) = value else {
            return "no key".to_owned();
        };
        self.clients
            .iter()
            .position(|client| client.last_token.as_ref() == Some(value))
            .map_or_else(|| format!("key {value}"), |c| format!("c{}'s key", c + 1))
    }

    /// The model's replica `r` receives its master's key: the link delivers what the master
    /// sent it so far, and the replica's key, read back once it has applied the stream (the
    /// master's own, within a second), must be `owner`'s.
    fn replicate(
        &mut self,
        r: usize,
        owner: Option<&redlock_lab::actor::Actor>,
    ) -> Result<Result<String, String>> {
        let on_master = Self::value_at(&self.masters.url(self.masters.replica_node(r)?))?;
        let replica = self.masters.replica_url(r)?;
        let deadline = Instant::now() + Duration::from_secs(1);
        // n1 may still be sending what it wrote (it answers the client before its replication
        // stream is out): deliver again until the replica has n1's key, nothing being written
        // meanwhile.
        self.masters.replicate(r)?;
        let mut on_replica = Self::value_at(&replica)?;
        while on_replica != on_master && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(2));
            self.masters.replicate(r)?;
            on_replica = Self::value_at(&replica)?;
        }
        let expected = match owner {
            Some(owner) => self.clients[client_index(owner)?].last_token.clone(),
            None => None,
        };
        let told = format!(
            "the replication stream delivered; the replica has {}",
            self.owner_of(on_replica.as_ref())
        );
        Ok(if on_replica == expected {
            Ok(told)
        } else {
            Err(format!(
                "{told}, where the model's replica has {}",
                self.owner_of(expected.as_ref())
            ))
        })
    }

    /// A master fails over to replica `r`: SIGKILL to the master with its replication links
    /// cut, the replica promoted (`REPLICAOF NO ONE`, or once the promotion delay ends), every
    /// client reconnected to it. Whether a key was lost must be the model's `lost`.
    fn fail_over(
        &mut self,
        r: usize,
        lost: Option<&redlock_lab::actor::Actor>,
    ) -> Result<Result<String, String>> {
        let node = self.masters.replica_node(r)?;
        let on_master = Self::value_at(&self.masters.url(node))?;
        self.masters.fail_over(r, !self.promotion_delayed)?;
        self.reconnect(node)?;
        let on_replica = Self::value_at(&self.masters.url(node))?;
        let real_lost = on_master.is_some() && on_replica != on_master;
        let name = format!("n{}", node + 1);
        let promoted = if self.promotion_delayed {
            format!(
                "SIGKILL; its replica takes {name}'s place, still a replica until the promotion delay ends"
            )
        } else {
            format!("SIGKILL; its replica takes {name}'s place: REPLICAOF NO ONE")
        };
        let told = format!(
            "{promoted}; {name} had {}, the replica has {}",
            self.owner_of(on_master.as_ref()),
            self.owner_of(on_replica.as_ref())
        );
        Ok(if real_lost == lost.is_some() {
            Ok(told)
        } else if real_lost {
            Err(format!(
                "{told}: a key was lost, where the model's replica had it"
            ))
        } else {
            Err(format!(
                "{told}: no key was lost, where the model's replica lost one"
            ))
        })
    }

    /// The client's clock reading at true time `t`, in milliseconds, as its core gets it.
    fn client_ms(&self, c: usize, t: i64) -> Millis {
        self.ms(t + self.clients[c].offset_ticks)
    }

    /// `ticks` as the core's milliseconds (a reading before 0 reads 0).
    fn ms(&self, ticks: i64) -> Millis {
        Millis(u64::try_from(ticks).unwrap_or(0) * self.tick_ms)
    }

    /// The client decides: its core reads the answers in its mailbox and its clock, and must
    /// decide as the model's client did (acquired, the fencing write-back, not acquired).
    fn decide(&mut self, c: usize, line: &Line, t: i64) -> Result<Result<String, String>> {
        // T2 as the model's client read it (its clock error included), else its clock now.
        let now = match line.event {
            Event::Acquired { t2, .. }
            | Event::NotAcquired { t2, .. }
            | Event::WriteBackBegan { t2, .. }
            | Event::Extended { t2, .. }
            | Event::ExtensionFailed { t2, .. } => self.ms(t2),
            _ => self.client_ms(c, t),
        };
        let client = &mut self.clients[c];
        let Some(lock) = client.lock.as_mut() else {
            return Ok(Err(format!("c{} has no lock to decide", c + 1)));
        };
        for (round, node, answer) in client.mailbox.drain(..) {
            lock.handle_reply(round, node, answer, now);
        }
        lock.handle_timeout(now);
        let mut told = Vec::new();
        let (mut acquired, mut fence) = (None, None);
        while let Some(event) = lock.poll_event() {
            told.push(core_word(&event));
            match event {
                LockEvent::Acquired {
                    deadline,
                    fence: token,
                    ..
                } => {
                    (acquired, fence) = (Some(deadline), token);
                    self.acquisitions += 1;
                    client.acquisition = Some(self.acquisitions);
                }
                LockEvent::Extended { deadline, .. } => acquired = Some(deadline),
                _ => {}
            }
        }
        if let Some(deadline) = acquired {
            self.believe(c, t, deadline);
        }
        let rest = self.drain(c);
        let told = if told.is_empty() {
            "no lease yet".to_owned()
        } else {
            told.join(", ")
        };
        // A fencing token from the lock's quorum is the real masters' counters: it must be the
        // model's.
        let model_fence = match line.event {
            Event::Acquired { fence, .. } => fence,
            _ => None,
        };
        let agreed = match decision(&line.event) {
            Some(true) => acquired.is_some() && (model_fence.is_none() || model_fence == fence),
            Some(false) => acquired.is_none(),
            None => false,
        };
        Ok(match (agreed, rest) {
            (true, Ok(())) => Ok(format!("core: {told}")),
            (_, Err(why)) => Err(why),
            (false, _) => Err(format!(
                "c{}'s core: {told}, where the model's client {}",
                c + 1,
                line.action
            )),
        })
    }

    /// Records that client `c` believes from true time `t` until its clock reads `deadline`.
    fn believe(&mut self, c: usize, t: i64, deadline: Millis) {
        let deadline_ms = deadline.as_u64() as i64;
        let offset_ms = self.clients[c].offset_ticks * self.tick_ms as i64;
        let t_ms = t * self.tick_ms as i64;
        // An extension moves the deadline of the belief that still runs.
        if let Some(open) = self
            .beliefs
            .iter_mut()
            .rfind(|b| b.client == c && b.until_ms > t_ms)
        {
            open.deadline_ms = deadline_ms;
            open.until_ms = deadline_ms - offset_ms + self.client_error_ms;
            return;
        }
        self.beliefs.push(Belief {
            client: c,
            from_ms: t_ms,
            until_ms: deadline_ms - offset_ms + self.client_error_ms,
            deadline_ms,
        });
    }

    /// Client `c` starts an extension round.
    fn extend(&mut self, c: usize, t: i64) -> Result<Result<String, String>> {
        let now = self.client_ms(c, t);
        let Some(lock) = self.clients[c].lock.as_mut() else {
            return Ok(Err(format!("c{} has no lock to extend", c + 1)));
        };
        if let Err(e) = lock.extend(now) {
            return Ok(Err(format!("c{}'s core refused to extend: {e}", c + 1)));
        }
        Ok(self
            .drain(c)
            .map(|()| "core sends compare-and-pexpire".to_owned()))
    }

    /// Client `c` releases: its belief ends now, and the release reaches every live master.
    fn release(&mut self, c: usize, t: i64) -> Result<Result<String, String>> {
        let now = self.client_ms(c, t);
        if let Some(lock) = self.clients[c].lock.as_mut() {
            lock.release(now);
        }
        let t_ms = t * self.tick_ms as i64;
        for belief in self.beliefs.iter_mut().filter(|b| b.client == c) {
            belief.until_ms = belief.until_ms.min(t_ms);
        }
        Ok(self
            .drain(c)
            .map(|()| "core releases on every live master".to_owned()))
    }

    /// Takes the commands client `c`'s core queued: a release goes to every live master at
    /// once (the model applies an unlock at once), anything else waits for its node's line.
    fn drain(&mut self, c: usize) -> Result<(), String> {
        let client = &mut self.clients[c];
        let Some(lock) = client.lock.as_mut() else {
            return Ok(());
        };
        let mut now = Vec::new();
        while let Some(command) = lock.poll_command() {
            match command.op {
                Op::DelIfEq { .. } | Op::Del => now.push(command),
                Op::SetNxPx { token, .. } => {
                    client.last_token = Some(token.to_string());
                    client.pending[command.node.index()] = Some(command);
                }
                _ => client.pending[command.node.index()] = Some(command),
            }
        }
        for command in now {
            if self.masters.is_up(command.node.index()) {
                let _ = self.execute(c, &command);
            }
        }
        Ok(())
    }

    /// The beliefs of two clients that overlap on real time: `(a, b, from_ms, until_ms)`.
    pub(super) fn overlap(&self) -> Option<(usize, usize, i64, i64)> {
        overlap(&self.beliefs)
    }
}

/// The first two beliefs of different clients that overlap: `(a, b, from_ms, until_ms)`.
pub(super) fn overlap(beliefs: &[Belief]) -> Option<(usize, usize, i64, i64)> {
    beliefs.iter().enumerate().find_map(|(i, a)| {
        beliefs[i + 1..].iter().find_map(|b| {
            let (from, until) = (a.from_ms.max(b.from_ms), a.until_ms.min(b.until_ms));
            (a.client != b.client && from < until).then_some((a.client, b.client, from, until))
        })
    })
}

/// One connection per node, for one client.
fn links(masters: &Masters, nodes: usize, options: &NodeOptions) -> Result<Vec<RedisNode>> {
    (0..nodes)
        .map(|n| Ok(RedisNode::open_with(&masters.url(n), options.clone())?))
        .collect()
}

/// `c2` → (`c`, 1); n1's replicas, `replica` or `replica2`, → (`r`, 0) or (`r`, 1); with a
/// replica on every node, `n2_replica` → (`r`, 1), its slot being its node's.
fn actor(name: &str) -> Result<(char, usize)> {
    if name.starts_with(REPLICA) {
        return Ok(('r', replica_index(name)?));
    }
    if let Some(node) = name.strip_suffix("_replica") {
        return match actor(node)? {
            ('n', n) => Ok(('r', n)),
            _ => bail!("the replay cannot execute a step of {name}"),
        };
    }
    let mut chars = name.chars();
    let kind = chars.next().unwrap_or(' ');
    match chars.as_str().parse::<usize>() {
        Ok(number) if number >= 1 && matches!(kind, 'c' | 'n') => Ok((kind, number - 1)),
        _ => bail!("the replay cannot execute a step of {name}"),
    }
}

/// How the story names n1's replicas: `replica` (its only one), `replica1`, `replica2`.
const REPLICA: &str = "replica";

/// `replica` and `replica1` → 0, `replica2` → 1.
fn replica_index(name: &str) -> Result<usize> {
    match name.strip_prefix(REPLICA) {
        Some("") => Ok(0),
        Some(number) => match number.parse::<usize>() {
            Ok(number) if number >= 1 => Ok(number - 1),
            _ => bail!("the replay cannot execute a step of {name}"),
        },
        None => bail!("{name} is not a replica"),
    }
}

fn client_index(actor_: &redlock_lab::actor::Actor) -> Result<usize> {
    match actor(&actor_.to_string())? {
        ('c', i) => Ok(i),
        _ => bail!("{actor_} is not a client"),
    }
}

fn node_index(actor_: &redlock_lab::actor::Actor) -> Result<usize> {
    match actor(&actor_.to_string())? {
        ('n', i) => Ok(i),
        _ => bail!("{actor_} is not a node"),
    }
}

/// For a client's deciding event: whether the model's client acquired (`Some(true)`), did
/// not (`Some(false)`; the fencing write-back's start counts as not yet).
fn decision(event: &Event) -> Option<bool> {
    match event {
        Event::Acquired { .. } | Event::Extended { .. } => Some(true),
        Event::NotAcquired { .. } | Event::WriteBackBegan { .. } => Some(false),
        Event::ExtensionFailed { .. } => Some(false),
        _ => None,
    }
}

impl Replay {
    /// Client `c`'s storage op lands on the fenced store, with the token its core derived;
    /// whether the store applied it must be the model's `applied`.
    fn store_op(
        &mut self,
        c: usize,
        op: &redlock_lab::storage::StorageOp,
        applied: bool,
    ) -> Result<Result<String, String>> {
        let client = &self.clients[c];
        let fence = client
            .lock
            .as_ref()
            .and_then(|lock| lock.lease())
            .map_or(0, |lease| lease.fence);
        let acquisition = client.acquisition.unwrap_or(0);
        let Some(store) = self.store.as_mut() else {
            bail!("the replay has no storage for c{}'s {op}", c + 1);
        };
        let (real, told) = store.apply(c, op, fence, acquisition)?;
        Ok(if real == applied {
            Ok(told)
        } else {
            let model = if applied { "applied" } else { "refused" };
            Err(format!(
                "the store: {told}, where the model's storage {model} it"
            ))
        })
    }
}

/// Whether the replay executes `event` (a step, or one it only tells): what the story of a
/// scenario must consist of for the replay to start its masters.
pub(super) fn executes(event: &Event) -> bool {
    passive(event)
        || decision(event).is_some()
        || matches!(
            event,
            Event::RoundBegan { .. }
                | Event::KeySet { .. }
                | Event::FenceRaised { .. }
                | Event::KeyExtended { .. }
                | Event::SetRefused { .. }
                | Event::FenceRefused { .. }
                | Event::ExtensionRefused { .. }
                | Event::NotServing { .. }
                | Event::GuardRefused { .. }
                | Event::RequestLost { .. }
                | Event::RequestDelayed { .. }
                | Event::ClockJumped { .. }
                | Event::Crashed { .. }
                | Event::ServesAgain
                | Event::KeyExpired { .. }
                | Event::ExtensionBegan { .. }
                | Event::Released { .. }
                | Event::OpArrived { .. }
                | Event::Replicated { .. }
                | Event::Promoted { .. }
                | Event::Fsynced { .. }
        )
}

/// Events the replay only tells: the model's bookkeeping, or a client doing nothing.
fn passive(event: &Event) -> bool {
    matches!(
        event,
        Event::Paused { .. }
            | Event::LeaseChecked { .. }
            | Event::Resumed
            | Event::PauseEnded { .. }
            | Event::TimePassed { .. }
            | Event::BeliefEnded
            | Event::BeliefReturned
            | Event::GuardEnded
    )
}

fn answer_expect(answer: Answer) -> Expect {
    match answer.reply {
        Reply::Applied if !answer.counts => Expect::Guarded,
        Reply::Applied => Expect::Applied,
        Reply::NotApplied => Expect::NotApplied,
        Reply::Failed => Expect::Failed,
    }
}

fn model_word(expect: Expect) -> &'static str {
    match expect {
        Expect::Applied => "applied it",
        Expect::Guarded => "applied it, its yes kept out by the guard",
        Expect::NotApplied => "refused it",
        Expect::Failed => "was not serving",
    }
}

/// What a real master answered, in words.
fn said(op: &Op, reply: NodeReply, fencing: Fencing) -> String {
    let verb = match op {
        Op::SetNxPx { ttl, .. } => format!("SET NX PX {}", ttl.as_u64()),
        Op::PExpireIfEq { ttl, .. } => format!("compare-and-pexpire {}", ttl.as_u64()),
        Op::RaiseFence { to, .. } => format!("fencing write-back to {to}"),
        Op::DelIfEq { .. } => "compare-and-delete".to_owned(),
        Op::Del => "DEL".to_owned(),
        Op::GetEq { .. } => "GET".to_owned(),
    };
    let counter = if fencing == Fencing::Off || !matches!(op, Op::SetNxPx { .. }) {
        String::new()
    } else {
        format!(", counter {}", reply.counter)
    };
    let answer = if reply.applied { "applied" } else { "refused" };
    format!("{verb}: {answer}{counter}")
}

/// A core event in words.
fn core_word(event: &LockEvent) -> String {
    match event {
        LockEvent::Acquired {
            deadline, fence, ..
        } => match fence {
            Some(fence) => format!(
                "acquired until its clock reads {} ms, token {fence}",
                deadline.as_u64()
            ),
            None => format!("acquired until its clock reads {} ms", deadline.as_u64()),
        },
        LockEvent::NotAcquired { .. } => "not acquired".to_owned(),
        LockEvent::Extended { deadline, .. } => {
            format!("extended until its clock reads {} ms", deadline.as_u64())
        }
        LockEvent::NotExtended { .. } => "not extended".to_owned(),
        LockEvent::Retrying { .. } => "round failed, retrying".to_owned(),
        other => format!("{other:?}"),
    }
}
