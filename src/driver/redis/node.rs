//! [`RedisNode`]: one Redis master over the redis crate's blocking connection.

use std::collections::VecDeque;
use std::io;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use ::redis::{
    Client, Connection, ErrorKind, IntoConnectionInfo, RedisError, TlsCertificates, Value,
};

use super::error::{Cause, RedisNodeError};
use super::script;
use super::url::redact;
use crate::node::{Node, NodeReply};
use crate::proto::{Command, FENCE_COUNTER_KEY, Fencing, LockParams, Op, Token};
use crate::time::Millis;

/// How a [`RedisNode`] connects and how long it waits.
#[derive(Clone, Debug)]
pub struct NodeOptions {
    /// The longest a connection attempt (TCP, TLS, AUTH and the script preload) may take. It is
    /// also capped by what is left of the round, and it is how long a node that could not be
    /// reached is left alone by the blocking client (failing at once with the same cause) before
    /// it is dialled again.
    pub connect_timeout: Duration,
    /// The write and read timeouts of single commands outside a lock round. Inside a round
    /// every write and read waits until the round's deadline instead
    /// ([`Config::round_timeout`](crate::proto::Config::round_timeout)), so a round never
    /// waits on one node longer than the round ([`ROUND_OVERRUN`]).
    pub io_timeout: Duration,
    /// The restarted-node guard: when set, the node reads `run_id` and `uptime_in_seconds`
    /// (`INFO server`) on every connect, and its yes does not count toward a quorum until it
    /// has been up for this long. Set it to the largest TTL your application uses. A restart
    /// always breaks the connection, so it is always seen.
    pub restart_guard: Option<Duration>,
    /// A PEM root certificate to trust for `rediss://` (a private CA); without it the system's
    /// roots are used.
    pub root_certificate_pem: Option<Vec<u8>>,
}

impl Default for NodeOptions {
    /// 250 ms to connect, 250 ms per read or write, no restart guard, system TLS roots.
    fn default() -> Self {
        NodeOptions {
            connect_timeout: Duration::from_millis(250),
            io_timeout: Duration::from_millis(250),
            restart_guard: None,
            root_certificate_pem: None,
        }
    }
}

/// One Redis master, reached through a `redis://` or `rediss://` URL (password and ACL user in
/// the URL, as the redis crate reads them).
///
/// The connection is opened on first use and again after it breaks; each new connection loads
/// the two Lua scripts (so `EVALSHA` hits) and, with the restart guard on, reads `INFO server`,
/// all in one round trip. As a [`Node`] it sends a round's commands to every node before it
/// reads any reply.
pub struct RedisNode {
    name: String,
    client: Client,
    options: NodeOptions,
    connection: Option<Connection>,
    run_id: Option<String>,
    restarts_seen: u32,
    /// While set and in the future, the node restarted too recently to vote.
    votes_from: Option<Instant>,
    /// The node's last reply timed out: read it last, so it does not hold up the others.
    suspect: bool,
    /// The read timeout the socket has now, to skip the system call when it barely changes.
    read_timeout: Option<Duration>,
    /// The write timeout the socket has now, likewise.
    write_timeout: Option<Duration>,
    /// After a failed connect the node is not dialled again before this instant (it fails at
    /// once with the same cause), so a dead or black-holed node costs the rounds in between
    /// nothing instead of a connect timeout each.
    down_until: Option<(Instant, Cause)>,
    /// Replies sent for and no longer waited for, oldest first: read before the next wanted
    /// reply, so the connection stays in step without waiting. A decided round's straggler
    /// carries its command, so its reply, once read, goes to `late` for the lock to record.
    owed: VecDeque<Option<(Command, Fencing)>>,
    /// The stragglers' replies read since the last batch began (see
    /// [`Node::take_late_replies`]).
    late: Vec<(Command, Result<NodeReply, RedisNodeError>)>,
}

impl std::fmt::Debug for RedisNode {
    // By hand: the redis client's connection info would print the password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisNode")
            .field("name", &self.name)
            .field("connected", &self.connection.is_some())
            .field("run_id", &self.run_id)
            .field("restarts_seen", &self.restarts_seen)
            .field("votes_from", &self.votes_from)
            .field("suspect", &self.suspect)
            .finish_non_exhaustive()
    }
}

impl RedisNode {
    /// A node at `url` with the default [`NodeOptions`]. Parses the URL only; the connection
    /// is made on first use.
    pub fn open(url: &str) -> Result<RedisNode, RedisNodeError> {
        RedisNode::open_with(url, NodeOptions::default())
    }

    /// A node at `url` with `options`.
    pub fn open_with(url: &str, options: NodeOptions) -> Result<RedisNode, RedisNodeError> {
        let (name, client) = build_client(url, &options)?;
        Ok(RedisNode {
            name,
            client,
            options,
            connection: None,
            run_id: None,
            restarts_seen: 0,
            votes_from: None,
            suspect: false,
            read_timeout: None,
            write_timeout: None,
            down_until: None,
            owed: VecDeque::new(),
            late: Vec::new(),
        })
    }

    /// The node's URL with any password masked: the name used in errors.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The server's `run_id` as read at the last connect (restart guard only).
    pub fn run_id(&self) -> Option<&str> {
        self.run_id.as_deref()
    }

    /// How many times a reconnect found a different `run_id`: restarts this client noticed.
    pub fn restarts_seen(&self) -> u32 {
        self.restarts_seen
    }

    /// Whether a connection is open now.
    pub fn is_connected(&self) -> bool {
        self.connection.is_some()
    }

    /// Runs one plain command outside a lock round (the fenced-storage example uses this), with
    /// the node's timeouts and typed errors.
    pub fn query(&mut self, cmd: &::redis::Cmd) -> Result<Value, RedisNodeError> {
        let deadline = Instant::now() + self.options.io_timeout;
        let packed = cmd.get_packed_command();
        self.send_packed(&packed, deadline)?;
        let value = self.receive_value(deadline)?;
        value
            .extract_error()
            .map_err(|e| self.error(server_cause(e)))
    }

    /// Runs a Lua script outside a lock round (`EVALSHA`, and `SCRIPT LOAD` when the node does
    /// not know it yet).
    pub fn invoke(
        &mut self,
        invocation: &::redis::ScriptInvocation<'_>,
    ) -> Result<Value, RedisNodeError> {
        self.exchange(|con| invocation.invoke(con), server_cause)
    }

    /// Runs `exchange` on the connection outside a lock round, with the io timeout, an error
    /// reply's cause as `server` reads it.
    fn exchange(
        &mut self,
        exchange: impl FnOnce(&mut Connection) -> Result<Value, RedisError>,
        server: impl FnOnce(RedisError) -> Cause,
    ) -> Result<Value, RedisNodeError> {
        let io_timeout = self.options.io_timeout;
        let deadline = Instant::now() + io_timeout;
        self.connect(deadline)?;
        self.drain_owed(deadline)?;
        let con = self.connect(deadline)?;
        // The socket may still be armed with a round's last, short timeouts.
        let result = con
            .set_read_timeout(Some(io_timeout))
            .and_then(|()| con.set_write_timeout(Some(io_timeout)))
            .and_then(|()| exchange(con));
        self.read_timeout = Some(io_timeout);
        self.write_timeout = Some(io_timeout);
        match result {
            Ok(value) => Ok(value),
            Err(e) => Err(self.classify_io(e, self.options.io_timeout, server)),
        }
    }

    fn error(&self, cause: Cause) -> RedisNodeError {
        RedisNodeError {
            node: self.name.clone(),
            cause,
        }
    }

    /// The open connection, or a new one made before `deadline`.
    fn connect(&mut self, deadline: Instant) -> Result<&mut Connection, RedisNodeError> {
        if self.connection.is_none() {
            let connection = self.new_connection(deadline)?;
            self.connection = Some(connection);
            self.read_timeout = Some(self.options.io_timeout);
            self.write_timeout = Some(self.options.io_timeout);
        }
        Ok(self.connection.as_mut().expect("connected just above"))
    }

    fn new_connection(&mut self, deadline: Instant) -> Result<Connection, RedisNodeError> {
        if let Some((until, cause)) = &self.down_until
            && Instant::now() < *until
        {
            return Err(self.error(cause.clone()));
        }
        let wait = remaining(deadline).min(self.options.connect_timeout);
        if wait.is_zero() {
            // The round's budget is spent, which says nothing about the node: not remembered.
            return Err(self.error(Cause::Timeout {
                waited: Duration::ZERO,
            }));
        }
        let result = self.dial(wait);
        self.down_until = match &result {
            Ok(_) => None,
            Err(error) => Some((
                Instant::now() + self.options.connect_timeout,
                error.cause.clone(),
            )),
        };
        result
    }

    /// Connects within `wait`, loads the scripts and reads `INFO server` if the guard is on.
    ///
    /// `wait` bounds the whole of it: each reply of the preload is read with what is left, and
    /// the first that does not come ends it (the redis crate's own pipeline reading would wait
    /// the full timeout again for every reply after a timed-out one).
    fn dial(&mut self, wait: Duration) -> Result<Connection, RedisNodeError> {
        let deadline = Instant::now() + wait;
        let mut con = self
            .client
            .get_connection_with_timeout(wait)
            .map_err(|e| self.error(connect_cause(e, wait)))?;
        let setup = (|| {
            con.set_write_timeout(Some(remaining(deadline).max(MIN_WAIT)))?;
            let mut pipe = ::redis::pipe();
            for text in script::ALL {
                pipe.cmd("SCRIPT").arg("LOAD").arg(text);
            }
            if self.options.restart_guard.is_some() {
                pipe.cmd("INFO").arg("server");
            }
            con.send_packed_command(&pipe.get_packed_pipeline())?;
            // One reply at a time, so an error reply (NOAUTH, NOPERM) keeps its code for the
            // classification below, and no read outlasts the connect budget.
            let mut values = Vec::with_capacity(pipe.len());
            for _ in 0..pipe.len() {
                con.set_read_timeout(Some(remaining(deadline).max(MIN_WAIT)))?;
                values.push(con.recv_response()?.extract_error()?);
            }
            con.set_read_timeout(Some(self.options.io_timeout))?;
            con.set_write_timeout(Some(self.options.io_timeout))?;
            Ok::<_, RedisError>(values)
        })();
        let values = setup.map_err(|e| self.error(connect_cause(e, wait)))?;
        if let Some(guard) = self.options.restart_guard {
            let info = values.get(script::ALL.len()).map(text).unwrap_or_default();
            self.note_info(&info, guard)?;
        }
        Ok(con)
    }

    /// Records `run_id` and when the node may vote again, from an `INFO server` reply.
    fn note_info(&mut self, info: &str, guard: Duration) -> Result<(), RedisNodeError> {
        let server = ServerInfo::parse(info).map_err(|cause| self.error(cause))?;
        if self
            .run_id
            .as_deref()
            .is_some_and(|old| old != server.run_id)
        {
            self.restarts_seen += 1;
        }
        self.votes_from = server.votes_from(guard);
        self.run_id = Some(server.run_id);
        Ok(())
    }

    fn send(
        &mut self,
        key: &str,
        op: &Op,
        fencing: Fencing,
        deadline: Instant,
    ) -> Result<(), RedisNodeError> {
        let packed = script::command(key, op, fencing).get_packed_command();
        self.send_packed(&packed, deadline)
    }

    /// Writes `packed` before `deadline`. A write blocks only when the socket's buffer is full,
    /// as it fills with the requests a stopped node never reads; bounded by what is left of the
    /// round rather than by the io timeout, it cannot make a round overrun its deadline.
    fn send_packed(&mut self, packed: &[u8], deadline: Instant) -> Result<(), RedisNodeError> {
        let timeout = remaining(deadline).max(MIN_WAIT);
        // The same rule as reads: keep the armed timeout while it barely overshoots.
        let armed = self
            .write_timeout
            .is_some_and(|armed| armed >= timeout && armed - timeout <= TIMEOUT_SLACK);
        let con = self.connect(deadline)?;
        let result = if armed {
            con.send_packed_command(packed)
        } else {
            con.set_write_timeout(Some(timeout))
                .and_then(|()| con.send_packed_command(packed))
        };
        if !armed {
            self.write_timeout = Some(timeout);
        }
        if let Err(e) = result {
            // A partial write leaves the stream in an unknown state: start over next time.
            self.drop_connection();
            return Err(self.classify_io(e, timeout, server_cause));
        }
        Ok(())
    }

    /// Reads the reply to `op` and says whether it took effect.
    fn receive(
        &mut self,
        key: &str,
        op: &Op,
        fencing: Fencing,
        deadline: Instant,
    ) -> Result<NodeReply, RedisNodeError> {
        let value = self.receive_value(deadline)?;
        let value = match value.extract_error() {
            Ok(value) => value,
            Err(e) if e.code() == Some("NOSCRIPT") => self.eval_fallback(key, op, fencing)?,
            Err(e) => return Err(self.error(round_cause(key, e))),
        };
        interpret(op, fencing, value).map_err(|cause| self.error(cause))
    }

    /// Reads the next reply that someone waits for, the owed ones before it.
    fn receive_value(&mut self, deadline: Instant) -> Result<Value, RedisNodeError> {
        if let Err(error) = self.drain_owed(deadline) {
            if self.connection.is_some() {
                // A timeout: the reply we came for is still on its way; skip it too. Its round
                // counted it as failed, so nobody needs to read it later.
                self.owed.push_back(None);
            }
            return Err(error);
        }
        self.read_one(deadline)
    }

    /// Reads the replies nobody waits for any more (see `owed`), keeping the stragglers'.
    fn drain_owed(&mut self, deadline: Instant) -> Result<(), RedisNodeError> {
        while let Some(owed) = self.owed.pop_front() {
            // On a timeout the redis crate itself skips this reply when it comes.
            let value = self.read_one(deadline)?;
            if let Some((command, fencing)) = owed {
                let reply = value
                    .extract_error()
                    .map_err(server_cause)
                    .and_then(|value| interpret(&command.op, fencing, value))
                    .map_err(|cause| self.error(cause));
                self.late.push((command, reply));
            }
        }
        Ok(())
    }

    fn read_one(&mut self, deadline: Instant) -> Result<Value, RedisNodeError> {
        // Whatever is left of the round, but never zero: a reply that is already in the socket
        // buffer is still taken after the deadline.
        let timeout = remaining(deadline).max(MIN_WAIT);
        let Some(con) = self.connection.as_mut() else {
            let gone = io::Error::new(io::ErrorKind::NotConnected, "connection closed earlier");
            return Err(self.error(Cause::ConnectionLost(gone.into())));
        };
        // Within a round the remaining time shrinks by microseconds per read; re-arming the
        // socket each time would cost a system call per reply. Keep the armed timeout while it
        // overshoots the wanted one by at most `TIMEOUT_SLACK`, and never when it is shorter.
        let armed = self
            .read_timeout
            .is_some_and(|armed| armed >= timeout && armed - timeout <= TIMEOUT_SLACK);
        let result = if armed {
            con.recv_response()
        } else {
            self.read_timeout = Some(timeout);
            con.set_read_timeout(Some(timeout))
                .and_then(|()| con.recv_response())
        };
        match result {
            Ok(value) => {
                self.suspect = false;
                Ok(value)
            }
            Err(e) if e.is_timeout() => {
                // The redis crate remembers to skip this reply when it arrives; the connection
                // stays usable and in step.
                self.suspect = true;
                Err(self.error(Cause::Timeout { waited: timeout }))
            }
            Err(e) => {
                self.drop_connection();
                Err(self.classify_io(e, timeout, server_cause))
            }
        }
    }

    fn drop_connection(&mut self) {
        self.connection = None;
        self.owed.clear();
    }

    /// Loads `op`'s script and sends its command again, when `EVALSHA` met an empty script
    /// cache (`SCRIPT FLUSH`, or a restart between connect and command).
    fn eval_fallback(
        &mut self,
        key: &str,
        op: &Op,
        fencing: Fencing,
    ) -> Result<Value, RedisNodeError> {
        let Some(script) = script::script_of(op, fencing) else {
            return Err(self.error(Cause::UnexpectedReply {
                command: script::command_name(op),
                reply: "NOSCRIPT for a command that runs no script".to_owned(),
            }));
        };
        let command = script::command(key, op, fencing);
        self.exchange(
            |con| {
                script.load(con)?;
                command.query::<Value>(con).and_then(Value::extract_error)
            },
            |e| round_cause(key, e),
        )
    }

    /// The cause of a failed write or read: a timeout, a lost connection, or an error reply as
    /// `server` reads it.
    fn classify_io(
        &self,
        e: RedisError,
        waited: Duration,
        server: impl FnOnce(RedisError) -> Cause,
    ) -> RedisNodeError {
        let cause = if e.is_timeout() {
            Cause::Timeout { waited }
        } else if e.is_io_error() || e.is_connection_dropped() {
            Cause::ConnectionLost(e)
        } else {
            server(e)
        };
        self.error(cause)
    }

    fn run(&mut self, key: &str, op: Op, fencing: Fencing) -> Result<NodeReply, RedisNodeError> {
        let deadline = Instant::now() + self.options.io_timeout;
        self.send(key, &op, fencing, deadline)?;
        self.receive(key, &op, fencing, deadline)
    }
}

/// Connects every node of `commands` that has no connection yet, all at once, before `deadline`.
///
/// One after the other, a stopped node's dial (the kernel accepts, the process never answers)
/// would spend the whole round before the next node is even dialled, and the round would fail
/// for want of the healthy nodes: a fresh client would pay a round timeout, a back-off and
/// another round. A failed dial is remembered by its node and reported when the round sends to
/// it; a single dial needs no thread, the send makes it.
fn dial_at_once(nodes: &mut [RedisNode], commands: &[Command], deadline: Instant) {
    let mut wanted = vec![false; nodes.len()];
    for command in commands {
        wanted[command.node.index()] = true;
    }
    let now = Instant::now();
    let dialling: Vec<&mut RedisNode> = nodes
        .iter_mut()
        .zip(wanted)
        .filter(|(node, wanted)| {
            let down = matches!(&node.down_until, Some((until, _)) if now < *until);
            *wanted && !node.is_connected() && !down
        })
        .map(|(node, _)| node)
        .collect();
    if dialling.len() < 2 {
        return;
    }
    std::thread::scope(|scope| {
        for node in dialling {
            scope.spawn(move || {
                // The outcome stays with the node: a connection, or the remembered failure.
                let _ = node.connect(deadline);
            });
        }
    });
}

/// A redis client for `url` with `options`, and the node's name for messages (password masked).
pub(super) fn build_client(
    url: &str,
    options: &NodeOptions,
) -> Result<(String, Client), RedisNodeError> {
    let name = redact(url);
    let fail = |cause| RedisNodeError {
        node: name.clone(),
        cause,
    };
    if options.connect_timeout.is_zero() || options.io_timeout.is_zero() {
        return Err(fail(Cause::InvalidOptions(
            "connect and io timeouts must be positive",
        )));
    }
    let info = url
        .into_connection_info()
        .map_err(|e| fail(Cause::InvalidUrl(e)))?;
    // A lock round is a handful of tiny writes: never let Nagle hold one back.
    let tcp = info.tcp_settings().clone().set_nodelay(true);
    // No `CLIENT SETINFO` on connect: its two replies are read one after the other with the
    // same socket timeout, so a stopped node cost twice the connect budget; the name it sets
    // only shows in `CLIENT LIST`.
    let redis = info.redis_settings().clone().set_skip_set_lib_name();
    let info = info.set_tcp_settings(tcp).set_redis_settings(redis);
    let client = match &options.root_certificate_pem {
        None => Client::open(info).map_err(|e| fail(Cause::InvalidUrl(e)))?,
        Some(pem) => Client::build_with_tls(
            info,
            TlsCertificates {
                client_tls: None,
                root_cert: Some(pem.clone()),
            },
        )
        .map_err(|e| fail(Cause::InvalidTls(e)))?,
    };
    Ok((name, client))
}

/// What the restarted-node guard reads from `INFO server`.
pub(super) struct ServerInfo {
    pub(super) run_id: String,
    uptime: Duration,
}

impl ServerInfo {
    pub(super) fn parse(info: &str) -> Result<ServerInfo, Cause> {
        let field = |name: &str| {
            info.lines()
                .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
                .map(str::trim)
        };
        let run_id = field("run_id").ok_or(Cause::MissingInfo { field: "run_id" })?;
        let uptime = field("uptime_in_seconds")
            .and_then(|s| s.parse::<u64>().ok())
            .ok_or(Cause::MissingInfo {
                field: "uptime_in_seconds",
            })?;
        Ok(ServerInfo {
            run_id: run_id.to_owned(),
            uptime: Duration::from_secs(uptime),
        })
    }

    /// When the node may vote again, if not now. The server rounds its uptime down to whole
    /// seconds, so the true uptime is at least `uptime` now and at least `guard` from
    /// `now + guard − uptime` on: the node never votes early.
    pub(super) fn votes_from(&self, guard: Duration) -> Option<Instant> {
        guard
            .checked_sub(self.uptime)
            .filter(|wait| !wait.is_zero())
            .map(|wait| Instant::now() + wait)
    }
}

/// How much longer than its round timeout
/// ([`Config::round_timeout`](crate::proto::Config::round_timeout)) one round of either Redis
/// client may take when nodes do not answer: a stopped master (SIGSTOP, where the kernel still
/// accepts and buffers and the process never answers), a black-holed host.
///
/// Every connect (TCP, TLS, AUTH, the script preload), write and read of a round is bounded by
/// the round's deadline, and a client's first connects to all nodes run at once. What may come
/// after the deadline: the kernel rounds a socket timeout up to its timer tick (up to 10 ms), a
/// read armed a millisecond long may overshoot by that much, and a last read of a millisecond
/// for a node still owed a reply may add one more tick. Hence, with one master stopped (or any
/// minority of them), an acquisition that wins its first round and a release each return
/// within `round_timeout + ROUND_OVERRUN` in both clients, connected or connecting for the
/// first time, plus whatever time the machine takes to run the client itself. An acquisition
/// that loses a round (somebody holds the lock) pays for each round and back-off it retries,
/// and with [`RoundDecision::AllReplies`](crate::proto::RoundDecision::AllReplies) every round
/// waits for the stopped node, so the two rounds of a
/// [`Fencing::WriteBack`](crate::proto::Fencing::WriteBack) acquisition take up to two. (A node
/// that could not be dialled is dialled again once its connect timeout has passed, and that
/// dial may take what is left of its round, once per connect timeout.) One exception: a blocking client's first connect to a URL with both a password and a
/// database number may take twice what is left of the round, as the redis crate reads the
/// replies to `AUTH` and `SELECT` one after the other, each with the whole budget.
pub const ROUND_OVERRUN: Duration = Duration::from_millis(25);

/// Every read waits at least this long, so the socket timeout is never zero (which the redis
/// crate refuses, and which the OS would read as "forever").
const MIN_WAIT: Duration = Duration::from_millis(1);

/// How far a read may overrun the round's deadline so that the socket's timeout need not be
/// re-armed for every reply.
const TIMEOUT_SLACK: Duration = Duration::from_millis(1);

pub(super) fn remaining(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now())
}

/// The text of a bulk or verbatim string reply (INFO), empty for anything else.
fn text(value: &Value) -> String {
    match value {
        Value::BulkString(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        Value::VerbatimString { text, .. } => text.clone(),
        Value::SimpleString(text) => text.clone(),
        _ => String::new(),
    }
}

/// How both clients read a node's reply to [`command`](super::command)`(key, op, fencing)`:
/// whether it took effect and the fencing counter a counted `SET` returned, or why not, with a
/// value another program wrote at one of the lock's keys as [`Cause::ForeignKey`].
pub fn read_reply(key: &str, op: &Op, fencing: Fencing, reply: Value) -> Result<NodeReply, Cause> {
    match reply.extract_error() {
        Ok(value) => interpret(op, fencing, value),
        Err(e) => Err(round_cause(key, e)),
    }
}

/// Whether `value` says `op` took effect (and, for a counted `SET`, the fencing counter it
/// returned); anything the command sent for a lock with `fencing` cannot return is an error.
pub(super) fn interpret(op: &Op, fencing: Fencing, value: Value) -> Result<NodeReply, Cause> {
    let plain = |applied| Ok(NodeReply::plain(applied));
    match (op, &value) {
        (Op::SetNxPx { .. }, Value::Okay) if fencing == Fencing::Off => plain(true),
        (Op::SetNxPx { .. }, Value::Array(items)) if fencing != Fencing::Off => {
            match items.as_slice() {
                [Value::Int(counter)] if *counter > 0 => Ok(NodeReply {
                    applied: true,
                    counter: *counter as u64,
                }),
                _ => Err(Cause::UnexpectedReply {
                    command: script::command_name(op),
                    reply: format!("{value:?}"),
                }),
            }
        }
        (Op::SetNxPx { .. }, Value::Nil) => plain(false),
        (Op::DelIfEq { .. } | Op::PExpireIfEq { .. }, Value::Int(1)) => plain(true),
        (Op::DelIfEq { .. } | Op::PExpireIfEq { .. }, Value::Int(0)) => plain(false),
        (Op::RaiseFence { .. }, Value::Int(1)) => plain(true),
        (Op::RaiseFence { .. }, Value::Int(0)) => plain(false),
        (Op::Del, Value::Int(n)) if *n >= 0 => plain(*n > 0),
        (Op::GetEq { token }, Value::BulkString(read)) => {
            plain(read.as_slice() == token.to_string().as_bytes())
        }
        (Op::GetEq { .. }, Value::Nil) => plain(false),
        _ => Err(Cause::UnexpectedReply {
            command: script::command_name(op),
            reply: format!("{value:?}"),
        }),
    }
}

fn is_auth_error(e: &RedisError) -> bool {
    e.kind() == ErrorKind::AuthenticationFailed
        || matches!(e.code(), Some("NOAUTH" | "WRONGPASS" | "NOPERM"))
}

/// The cause of an error reply.
pub(super) fn server_cause(e: RedisError) -> Cause {
    if is_auth_error(&e) {
        Cause::Auth(e)
    } else if e.code() == Some("WRONGTYPE") {
        Cause::WrongType(e)
    } else {
        Cause::Server(e)
    }
}

/// The cause of an error reply to a lock round's command on `key`, the one place such a reply
/// is read: a value this client did not write at the lock's own key (`WRONGTYPE`: the scripts
/// read no other key unguarded) or at the fencing counter (the scripts'
/// [`FOREIGN_COUNTER`](script::FOREIGN_COUNTER)) is a [`Cause::ForeignKey`] naming that key;
/// anything else is what [`server_cause`] says.
pub(super) fn round_cause(key: &str, e: RedisError) -> Cause {
    let detail = || e.detail().unwrap_or_default().trim().to_owned();
    match e.code() {
        Some("WRONGTYPE") => Cause::ForeignKey {
            key: key.to_owned(),
            found: format!("WRONGTYPE {}", detail()),
        },
        Some(script::FOREIGN_COUNTER) => Cause::ForeignKey {
            key: FENCE_COUNTER_KEY.to_owned(),
            found: detail(),
        },
        _ => server_cause(e),
    }
}

/// The cause of a failed connect (including AUTH and the script preload).
pub(super) fn connect_cause(e: RedisError, waited: Duration) -> Cause {
    if is_auth_error(&e) {
        Cause::Auth(e)
    } else if e.is_timeout() {
        Cause::Timeout { waited }
    } else if e.code().is_some() {
        server_cause(e)
    } else {
        Cause::Unreachable(e)
    }
}

impl Node for RedisNode {
    type Error = RedisNodeError;

    fn set_nx_px(
        &mut self,
        key: &str,
        token: Token,
        ttl: Millis,
    ) -> Result<Option<u64>, RedisNodeError> {
        // The counted SET, as the trait promises; any fencing mode but off sends it.
        let reply = self.run(key, Op::SetNxPx { token, ttl }, Fencing::WriteBack)?;
        Ok(reply.applied.then_some(reply.counter))
    }

    fn set_nx_px_plain(
        &mut self,
        key: &str,
        token: Token,
        ttl: Millis,
    ) -> Result<bool, RedisNodeError> {
        let reply = self.run(key, Op::SetNxPx { token, ttl }, Fencing::Off)?;
        Ok(reply.applied)
    }

    fn raise_fence(&mut self, key: &str, token: Token, to: u64) -> Result<bool, RedisNodeError> {
        self.run(key, Op::RaiseFence { token, to }, Fencing::WriteBack)
            .map(|r| r.applied)
    }

    fn del_if_eq(&mut self, key: &str, token: Token) -> Result<bool, RedisNodeError> {
        self.run(key, Op::DelIfEq { token }, Fencing::Off)
            .map(|r| r.applied)
    }

    fn pexpire_if_eq(
        &mut self,
        key: &str,
        token: Token,
        ttl: Millis,
    ) -> Result<bool, RedisNodeError> {
        self.run(key, Op::PExpireIfEq { token, ttl }, Fencing::Off)
            .map(|r| r.applied)
    }

    fn del(&mut self, key: &str) -> Result<bool, RedisNodeError> {
        self.run(key, Op::Del, Fencing::Off).map(|r| r.applied)
    }

    fn get_eq(&mut self, key: &str, token: Token) -> Result<bool, RedisNodeError> {
        self.run(key, Op::GetEq { token }, Fencing::Off)
            .map(|r| r.applied)
    }

    fn execute(
        &mut self,
        key: &str,
        op: &Op,
        fencing: Fencing,
    ) -> Result<NodeReply, RedisNodeError> {
        self.run(key, *op, fencing)
    }

    fn counts_toward_quorum(&self) -> bool {
        self.votes_from.is_none_or(|from| Instant::now() >= from)
    }

    fn foreign_key(error: &RedisNodeError) -> Option<&str> {
        error.foreign_key()
    }

    fn take_late_replies(&mut self) -> Vec<(Command, Result<NodeReply, RedisNodeError>)> {
        std::mem::take(&mut self.late)
    }

    /// Writes every command first (nodes with an open connection before those that must
    /// connect), then reads the replies, so a round costs about one round trip to the slowest
    /// node rather than the sum over all nodes.
    fn execute_all<F>(
        nodes: &mut [Self],
        key: &str,
        commands: &[Command],
        params: &LockParams,
        mut on_reply: F,
    ) where
        F: FnMut(&Self, Command, Result<NodeReply, RedisNodeError>) -> ControlFlow<()>,
    {
        let deadline = Instant::now() + params.round_timeout.to_duration();
        for node in nodes.iter_mut() {
            // Whoever needed the last batch's stragglers has taken them; the rest are stale.
            node.late.clear();
        }
        dial_at_once(nodes, commands, deadline);
        let mut order = commands.to_vec();
        order.sort_by_key(|command| !nodes[command.node.index()].is_connected());
        let mut sent = Vec::with_capacity(order.len());
        let mut decided = false;
        // A round sends one op to every node: encode it once.
        let mut packed: Option<(Op, Vec<u8>)> = None;
        for command in order {
            let bytes = match &packed {
                Some((op, bytes)) if *op == command.op => bytes,
                _ => {
                    let bytes =
                        script::command(key, &command.op, params.fencing).get_packed_command();
                    &packed.insert((command.op, bytes)).1
                }
            };
            let node = &mut nodes[command.node.index()];
            match node.send_packed(bytes, deadline) {
                Ok(()) => sent.push(command),
                Err(error) => decided |= on_reply(node, command, Err(error)).is_break(),
            }
        }
        // A node that timed out last time is read last: the others' replies are not held up
        // behind it. The sort is stable, so one node's replies stay in the order sent.
        sent.sort_by_key(|command| nodes[command.node.index()].suspect);
        for command in sent {
            let node = &mut nodes[command.node.index()];
            if decided {
                // Nobody waits for this reply any more. Waiting even a moment would cost a
                // scheduler tick (8 ms here) on a socket timeout; the node reads it later
                // instead, before its next reply, and keeps it for the lock to record.
                node.owed.push_back(Some((command, params.fencing)));
                continue;
            }
            let result = node.receive(key, &command.op, params.fencing, deadline);
            decided |= on_reply(node, command, result).is_break();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_read_by_what_the_command_can_return() {
        let set = Op::SetNxPx {
            token: Token(1),
            ttl: Millis(10),
        };
        let cad = Op::DelIfEq { token: Token(1) };
        let fenced = Fencing::WriteBack;
        let off = Fencing::Off;
        assert_eq!(
            interpret(&set, fenced, Value::Array(vec![Value::Int(7)])).unwrap(),
            NodeReply {
                applied: true,
                counter: 7
            }
        );
        assert_eq!(
            interpret(&set, off, Value::Okay).unwrap(),
            NodeReply::plain(true)
        );
        assert!(!interpret(&set, fenced, Value::Nil).unwrap().applied);
        assert!(!interpret(&set, off, Value::Nil).unwrap().applied);
        assert!(interpret(&cad, off, Value::Int(1)).unwrap().applied);
        assert!(!interpret(&cad, off, Value::Int(0)).unwrap().applied);
        assert!(!interpret(&Op::Del, off, Value::Int(0)).unwrap().applied);
        for (op, fencing, wrong) in [
            (set, fenced, Value::Int(1)),
            (set, fenced, Value::Okay),
            (set, off, Value::Array(vec![Value::Int(7)])),
            (cad, off, Value::Okay),
            (cad, off, Value::Int(7)),
        ] {
            let Err(Cause::UnexpectedReply { command, .. }) = interpret(&op, fencing, wrong) else {
                panic!("{op:?} accepted a reply it cannot produce");
            };
            assert_eq!(command, script::command_name(&op));
        }
    }

    #[test]
    fn the_restart_guard_reads_info_and_keeps_a_young_node_from_voting() {
        let mut node = RedisNode::open("redis://:pw@127.0.0.1:1").unwrap();
        assert_eq!(node.name(), "redis://:***@127.0.0.1:1");
        assert!(!format!("{node:?}").contains("pw"));
        let guard = Duration::from_secs(30);
        let info = |run_id: &str, uptime: u64| {
            format!(
                "# Server\r\nredis_version:7.0.15\r\nrun_id:{run_id}\r\nuptime_in_seconds:{uptime}\r\n"
            )
        };
        node.note_info(&info("aaa", 100), guard).unwrap();
        assert!(node.counts_toward_quorum(), "up for longer than the guard");
        assert_eq!(node.restarts_seen(), 0);
        node.note_info(&info("bbb", 2), guard).unwrap();
        assert!(!node.counts_toward_quorum(), "restarted two seconds ago");
        assert_eq!(node.restarts_seen(), 1);
        assert_eq!(node.run_id(), Some("bbb"));
        node.note_info(&info("bbb", 30), guard).unwrap();
        assert!(node.counts_toward_quorum(), "up for exactly the guard");
        let Err(error) = node.note_info("run_id:ccc\r\n", guard) else {
            panic!("INFO without an uptime was accepted");
        };
        assert!(matches!(
            error.cause,
            Cause::MissingInfo {
                field: "uptime_in_seconds"
            }
        ));
    }
}
