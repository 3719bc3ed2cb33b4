//! Kleppmann's fencing tokens, checked by the storage itself, on Redis.
//!
//! A lock alone cannot stop a client that was paused past its lease from writing: it wakes up
//! still believing it holds the lock. Kleppmann's fix is a number that grows with every grant,
//! sent with every write, and a storage that refuses a write carrying a smaller number than
//! one it has already accepted — in SQL, `UPDATE t SET value = ?, last_token = ? WHERE
//! last_token <= ?`. Redlock issues no such number, so here a [`FencingCounter`] takes one
//! from `INCR` on a separate Redis node right after the lock is acquired, and a
//! [`FencedStore`] applies the check and the write atomically in one Lua script.
//!
//! ```no_run
//! use redlock_lab::driver::RedisRedlock;
//! use redlock_lab::driver::redis::fenced::{FencedStore, FencingCounter, Write};
//! use redlock_lab::proto::Config;
//! use redlock_lab::time::Millis;
//!
//! let urls = ["redis://127.0.0.1:7101", "redis://127.0.0.1:7102", "redis://127.0.0.1:7103"];
//! let mut redlock = RedisRedlock::open(&urls, Config::new(3))?;
//! let mut counter = FencingCounter::open("redis://127.0.0.1:7198", Default::default())?;
//! let mut store = FencedStore::open("redis://127.0.0.1:7199", Default::default())?;
//! if let Some(guard) = redlock.lock("report", Millis(5_000))? {
//!     let token = counter.next("report")?;
//!     // … a long pause here is harmless: a later holder's token is larger …
//!     match store.write("report", "v2", token)? {
//!         Write::Applied => {}
//!         Write::Rejected { newest } => eprintln!("stale holder: {token:?} < {newest:?}"),
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

/// Issues fencing tokens with `INCR` on one Redis node (use one that is not a lock node, and
/// persist it: a counter that restarts from zero would hand out small tokens again).
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

    /// The next token for `resource` (`INCR <resource>:fencing`). Call it while holding the
    /// lock, so every later holder gets a larger one.
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

/// Values on one Redis node that only accept writes carrying a current fencing token.
#[derive(Debug)]
pub struct FencedStore {
    node: RedisNode,
    script: Script,
}

impl FencedStore {
    /// A store on the node at `url`.
    pub fn open(url: &str, options: NodeOptions) -> Result<FencedStore, RedisNodeError> {
        Ok(FencedStore {
            node: RedisNode::open_with(url, options)?,
            script: Script::new(FENCED_WRITE),
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

    /// The value under `key`, if any.
    pub fn read(&mut self, key: &str) -> Result<Option<String>, RedisNodeError> {
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
