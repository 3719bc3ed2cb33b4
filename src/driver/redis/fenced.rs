//! Kleppmann's fencing tokens, checked by the storage itself, on Redis.
//!
//! A lock alone cannot stop a client that was paused past its lease from acting: it wakes up
//! still believing it holds the lock. Kleppmann's fix is a number that grows with every grant,
//! sent with every operation on the guarded resource, and a resource that refuses an operation
//! carrying a smaller number than one it has already seen — in SQL, `UPDATE t SET value = ?,
//! last_token = ? WHERE last_token <= ?`.
//!
//! **Where the token comes from.** Use [`Guard::fencing_token`](crate::driver::Guard::fencing_token)
//! with [`Fencing::WriteBack`](crate::proto::Fencing::WriteBack): every lock node's `SET` also
//! increments the node's one fencing counter (shared by every resource) in the same script, the
//! client takes the largest counter of its quorum and writes it back to a quorum (on the nodes
//! that still hold its key) before the lock counts as acquired, so every later holder's quorum
//! starts above it. No extra node is involved.
//! It needs what mutual exclusion needs, and one thing more: every lock node keeps its
//! counter across a crash (`appendfsync always`); a node that restarts with an empty counter
//! can hand out a token that was already used (the catalog's
//! `fencing-lock-quorum-counter-lost` shows it).
//!
//! [`FencingCounter`] is the older design, kept to show its failure: one `INCR` on a separate
//! node *after* the lock is acquired. A holder paused between acquiring and `INCR` wakes after
//! its lease, takes a *larger* token than the rightful holder, and its stale operations win
//! while the rightful holder's are refused; and the counter node is a single point of failure
//! whose restart without persistence hands out small tokens again. The catalog's
//! `fencing-counter-after-acquire-*` scenarios show both.
//!
//! **Fence the whole read-modify-write.** A [`FencedStore`] checks the token on reads too
//! ([`FencedStore::read`]): an unfenced read lets a stale holder's write land between the next
//! holder's read and write, and that holder's update is lost (the catalog's
//! `fencing-on-writes-only`). Each check and its operation run as one Lua script.
//!
//! ```no_run
//! use redlock_lab::driver::RedisRedlock;
//! use redlock_lab::driver::redis::fenced::{FencedStore, FencingToken, Read, Write};
//! use redlock_lab::proto::{Config, Fencing};
//! use redlock_lab::time::Millis;
//!
//! let urls = ["redis://127.0.0.1:7101", "redis://127.0.0.1:7102", "redis://127.0.0.1:7103"];
//! let mut config = Config::new(3);
//! config.fencing = Fencing::WriteBack;
//! let mut redlock = RedisRedlock::open(&urls, config)?;
//! let mut store = FencedStore::open("redis://127.0.0.1:7199", Default::default())?;
//! if let Some(guard) = redlock.lock("report", Millis(5_000))? {
//!     let token = FencingToken(guard.fencing_token().expect("fencing is on"));
//!     // … a long pause anywhere here is harmless: a later holder's token is larger …
//!     if let Read::Value(old) = store.read("report", token)? {
//!         let new = format!("{}+1", old.unwrap_or_default());
//!         match store.write("report", &new, token)? {
//!             Write::Applied => {}
//!             Write::Rejected { newest } => eprintln!("stale holder: {token:?} < {newest:?}"),
//!         }
//!     }
//!     guard.unlock();
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use ::redis::{Script, Value};

use super::error::{Cause, RedisNodeError};
use super::node::{NodeOptions, RedisNode};

/// A fencing token: larger means granted later.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FencingToken(pub u64);

/// Issues fencing tokens with `INCR` on one separate Redis node, after the lock is acquired.
///
/// **This design is broken; it is kept to show how.** A holder paused between acquiring the
/// lock and [`next`](FencingCounter::next) wakes after its lease and takes a token *larger*
/// than the rightful holder's, so its stale operations win and the rightful holder's are
/// refused; and the counter node is a single point of failure: restarted without persistence
/// it hands out small tokens again. Use [`Guard::fencing_token`](crate::driver::Guard::fencing_token)
/// with [`Fencing::WriteBack`](crate::proto::Fencing::WriteBack) instead.
#[derive(Debug)]
pub struct FencingCounter {
    node: RedisNode,
}

impl FencingCounter {
    /// A counter on the node at `url`.
    pub fn open(url: &str, options: NodeOptions) -> Result<FencingCounter, RedisNodeError> {
        Ok(FencingCounter {
            node: RedisNode::open_with(url, options)?,
        })
    }

    /// The next token for `resource` (`INCR <resource>:fencing`). A later holder gets a larger
    /// one only if this call happened before that holder acquired, which a pause can undo.
    pub fn next(&mut self, resource: &str) -> Result<FencingToken, RedisNodeError> {
        let value = self
            .node
            .query(::redis::cmd("INCR").arg(format!("{resource}:fencing")))?;
        match value {
            Value::Int(n) if n > 0 => Ok(FencingToken(n as u64)),
            other => Err(unexpected(&self.node, "INCR", &other)),
        }
    }
}

/// What a fenced write did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Write {
    /// The token was not smaller than any seen before: the value is stored.
    Applied,
    /// A write with a larger token already happened; this one was refused.
    Rejected {
        /// The largest token the store has accepted.
        newest: FencingToken,
    },
}

/// Check-and-write in one step. KEYS[1] holds the value, KEYS[2] the largest token accepted so
/// far; ARGV[1] is the writer's token, ARGV[2] the value. The same token may write again (one
/// holder, several writes); a smaller one is refused.
const FENCED_WRITE: &str = r#"local newest = tonumber(redis.call("GET", KEYS[2]) or "0")
local token = tonumber(ARGV[1])
if token < newest then
  return {0, newest}
end
redis.call("SET", KEYS[2], ARGV[1])
redis.call("SET", KEYS[1], ARGV[2])
return {1, token}"#;

/// What a fenced read returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Read {
    /// The token was not smaller than any seen before: the value (if any), and the token is now
    /// the newest seen, so an older holder's write after this read is refused.
    Value(Option<String>),
    /// An operation with a larger token already happened; this read was refused.
    Rejected {
        /// The largest token the store has seen.
        newest: FencingToken,
    },
}

/// Check-and-read in one step: KEYS[1] holds the value, KEYS[2] the largest token seen; ARGV[1]
/// is the reader's token. A read raises the newest token like a write does: that is what keeps
/// an older holder's write from landing between this read and its holder's write.
const FENCED_READ: &str = r#"local newest = tonumber(redis.call("GET", KEYS[2]) or "0")
local token = tonumber(ARGV[1])
if token < newest then
  return {0, newest}
end
redis.call("SET", KEYS[2], ARGV[1])
local value = redis.call("GET", KEYS[1])
if value then
  return {1, token, value}
end
return {1, token}"#;

/// Values on one Redis node that only accept reads and writes carrying a current fencing token.
#[derive(Debug)]
pub struct FencedStore {
    node: RedisNode,
    script: Script,
    read_script: Script,
}

impl FencedStore {
    /// A store on the node at `url`.
    pub fn open(url: &str, options: NodeOptions) -> Result<FencedStore, RedisNodeError> {
        Ok(FencedStore {
            node: RedisNode::open_with(url, options)?,
            script: Script::new(FENCED_WRITE),
            read_script: Script::new(FENCED_READ),
        })
    }

    /// Writes `value` under `key` unless a larger token has written before.
    pub fn write(
        &mut self,
        key: &str,
        value: &str,
        token: FencingToken,
    ) -> Result<Write, RedisNodeError> {
        let mut invocation = self.script.key(key);
        invocation
            .key(format!("{key}:last-token"))
            .arg(token.0)
            .arg(value);
        let reply = self.node.invoke(&invocation)?;
        match &reply {
            Value::Array(items) => match items.as_slice() {
                [Value::Int(1), Value::Int(_)] => Ok(Write::Applied),
                [Value::Int(0), Value::Int(newest)] if *newest >= 0 => Ok(Write::Rejected {
                    newest: FencingToken(*newest as u64),
                }),
                _ => Err(unexpected(&self.node, "fenced write", &reply)),
            },
            _ => Err(unexpected(&self.node, "fenced write", &reply)),
        }
    }

    /// Reads `key` unless a larger token has read or written before; the read raises the
    /// newest token to `token`. Use this for the read of a read-modify-write.
    pub fn read(&mut self, key: &str, token: FencingToken) -> Result<Read, RedisNodeError> {
        let mut invocation = self.read_script.key(key);
        invocation.key(format!("{key}:last-token")).arg(token.0);
        let reply = self.node.invoke(&invocation)?;
        let bad = || unexpected(&self.node, "fenced read", &reply);
        let Value::Array(items) = &reply else {
            return Err(bad());
        };
        match items.as_slice() {
            [Value::Int(1), Value::Int(_)] => Ok(Read::Value(None)),
            [Value::Int(1), Value::Int(_), Value::BulkString(bytes)] => Ok(Read::Value(Some(
                String::from_utf8_lossy(bytes).into_owned(),
            ))),
            [Value::Int(0), Value::Int(newest)] if *newest >= 0 => Ok(Read::Rejected {
                newest: FencingToken(*newest as u64),
            }),
            _ => Err(bad()),
        }
    }

    /// The value under `key`, if any, read without a token: for inspection only. A
    /// read-modify-write built on it is not fenced, and loses updates to stale holders.
    pub fn peek(&mut self, key: &str) -> Result<Option<String>, RedisNodeError> {
        match self.node.query(::redis::cmd("GET").arg(key))? {
            Value::Nil => Ok(None),
            Value::BulkString(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
            other => Err(unexpected(&self.node, "GET", &other)),
        }
    }
}

fn unexpected(node: &RedisNode, command: &'static str, reply: &Value) -> RedisNodeError {
    RedisNodeError {
        node: node.name().to_owned(),
        cause: Cause::UnexpectedReply {
            command,
            reply: format!("{reply:?}"),
        },
    }
}
