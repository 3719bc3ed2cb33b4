//! What can go wrong talking to one Redis node, and opening a client.

use std::time::Duration;

use thiserror::Error;

use crate::driver::DriverError;

/// A failure at one Redis node, naming the node (its URL, password masked) and the cause.
#[derive(Debug, Error)]
#[error("redis node {node}: {cause}")]
#[non_exhaustive]
pub struct RedisNodeError {
    /// The node's URL with any password replaced by `***`.
    pub node: String,
    /// What went wrong.
    pub cause: Cause,
}

impl RedisNodeError {
    /// Whether the node did not answer in time (connect or reply).
    pub fn is_timeout(&self) -> bool {
        matches!(self.cause, Cause::Timeout { .. })
    }

    /// The key whose value this client did not write, when the node said so
    /// ([`Cause::ForeignKey`]).
    pub fn foreign_key(&self) -> Option<&str> {
        match &self.cause {
            Cause::ForeignKey { key, .. } => Some(key),
            _ => None,
        }
    }
}

/// Why a Redis node failed. The variants separate what the caller can act on: fix the URL or
/// the credentials, or wait for the node.
#[derive(Clone, Debug, Error)]
#[non_exhaustive]
pub enum Cause {
    /// The URL could not be parsed, or names a scheme this build does not support.
    #[error("invalid url: {0}")]
    InvalidUrl(#[source] ::redis::RedisError),
    /// A [`NodeOptions`](super::NodeOptions) value that cannot work (a zero timeout).
    #[error("invalid options: {0}")]
    InvalidOptions(&'static str),
    /// The TLS settings were refused (a root certificate that is not valid PEM, say).
    #[error("invalid tls settings: {0}")]
    InvalidTls(#[source] ::redis::RedisError),
    /// No connection could be made: refused, unknown host, TLS handshake failed.
    #[error("unreachable: {0}")]
    Unreachable(#[source] ::redis::RedisError),
    /// The node did not answer within the time allowed.
    #[error("no answer within {waited:?}")]
    Timeout {
        /// How long the client waited.
        waited: Duration,
    },
    /// The credentials were refused (`WRONGPASS`, `NOAUTH`, `NOPERM`).
    #[error("authentication failed: {0}")]
    Auth(#[source] ::redis::RedisError),
    /// The connection broke while a command was in flight.
    #[error("connection lost: {0}")]
    ConnectionLost(#[source] ::redis::RedisError),
    /// A key of the lock (its own name, or the node's fencing counter) holds a value this
    /// client did not write: a value of another type (`WRONGTYPE`), or a counter that is not an
    /// integer. Some other program uses the same key name; no retry can fix that.
    #[error("key {key:?} holds a value this client did not write ({found})")]
    ForeignKey {
        /// The key.
        key: String,
        /// What the node said about it.
        found: String,
    },
    /// A value of another type (`WRONGTYPE`) at a key of a command sent outside a lock round
    /// ([`RedisNode::query`](super::RedisNode::query), [`RedisNode::invoke`](super::RedisNode::invoke)).
    #[error("the key holds a value of another type: {0}")]
    WrongType(#[source] ::redis::RedisError),
    /// The node answered with a reply this command cannot produce (not a Redis server, or a
    /// proxy that rewrites replies).
    #[error("unexpected reply to {command}: {reply}")]
    UnexpectedReply {
        /// The command that was sent.
        command: &'static str,
        /// The reply, as the redis crate prints it.
        reply: String,
    },
    /// Any other error reply (`READONLY`, `LOADING`, `OOM`, …).
    #[error("server error: {0}")]
    Server(#[source] ::redis::RedisError),
    /// `INFO server` did not carry `run_id` and `uptime_in_seconds`, which the restarted-node
    /// guard needs.
    #[error("INFO server lacks {field}, which the restarted-node guard needs")]
    MissingInfo {
        /// The missing field.
        field: &'static str,
    },
}

/// Why a Redis client could not be built.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum OpenError {
    /// A node's URL or TLS settings were refused.
    #[error(transparent)]
    Node(#[from] RedisNodeError),
    /// The lock configuration was refused (no nodes, a bad drift factor, …).
    #[error(transparent)]
    Config(#[from] DriverError),
}
