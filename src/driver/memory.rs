//! An in-process Redis master over [`NodeState`], for examples, tests and demonstrations.

use std::collections::BTreeMap;

use super::clock::{Clock, ManualClock};
use crate::node::{Node, NodeReply, NodeState, Persistence, Unavailable};
use crate::proto::{Fencing, Op, Token};
use crate::time::Millis;

/// A node that keeps its keys in memory and reads its own [`ManualClock`].
///
/// Share the clock with the client for a world without clock error, or give it its own clock
/// and move that to show a clock jump. [`crash`](MemoryNode::crash) and
/// [`restart`](MemoryNode::restart) act on every key.
#[derive(Clone, Debug)]
pub struct MemoryNode {
    clock: ManualClock,
    persistence: Persistence,
    keys: BTreeMap<String, NodeState>,
    down: bool,
    ready_at: Millis,
}

impl MemoryNode {
    /// An empty node without persistence, reading `clock`.
    pub fn new(clock: ManualClock) -> MemoryNode {
        MemoryNode {
            clock,
            persistence: Persistence::None,
            keys: BTreeMap::new(),
            down: false,
            ready_at: Millis::ZERO,
        }
    }

    /// The same node with another persistence mode.
    pub fn with_persistence(mut self, persistence: Persistence) -> MemoryNode {
        self.persistence = persistence;
        self
    }

    /// The token that holds `key` now, if any.
    pub fn holder(&self, key: &str) -> Option<Token> {
        let now = self.clock.now();
        self.keys.get(key)?.live_entry(now).map(|entry| entry.token)
    }

    /// The process dies; keys survive as the persistence mode says.
    pub fn crash(&mut self) {
        self.down = true;
        for state in self.keys.values_mut() {
            state.crash(self.persistence);
        }
    }

    /// The process comes back and refuses commands for `delay`.
    pub fn restart(&mut self, delay: Millis) {
        let now = self.clock.now();
        self.down = false;
        self.ready_at = now + delay;
        for state in self.keys.values_mut() {
            state.restart(now, delay);
        }
    }

    fn run(&mut self, key: &str, op: Op) -> Result<NodeReply, Unavailable> {
        let now = self.clock.now();
        if self.down || now < self.ready_at {
            return Err(Unavailable);
        }
        let state = self.keys.entry(key.to_owned()).or_default();
        let reply = state.apply_counted(&op, now, self.persistence)?;
        if state.entry.is_none() && state.counter == 0 {
            // Keep the map as small as the live keyspace (and the fencing counters).
            self.keys.remove(key);
        }
        Ok(reply)
    }
}

impl Node for MemoryNode {
    type Error = Unavailable;

    fn set_nx_px(
        &mut self,
        key: &str,
        token: Token,
        ttl: Millis,
    ) -> Result<Option<u64>, Unavailable> {
        let reply = self.run(key, Op::SetNxPx { token, ttl })?;
        Ok(reply.applied.then_some(reply.counter))
    }

    fn raise_fence(&mut self, key: &str, token: Token, to: u64) -> Result<bool, Unavailable> {
        self.run(key, Op::RaiseFence { token, to })
            .map(|r| r.applied)
    }

    fn del_if_eq(&mut self, key: &str, token: Token) -> Result<bool, Unavailable> {
        self.run(key, Op::DelIfEq { token }).map(|r| r.applied)
    }

    fn pexpire_if_eq(&mut self, key: &str, token: Token, ttl: Millis) -> Result<bool, Unavailable> {
        self.run(key, Op::PExpireIfEq { token, ttl })
            .map(|r| r.applied)
    }

    fn del(&mut self, key: &str) -> Result<bool, Unavailable> {
        self.run(key, Op::Del).map(|r| r.applied)
    }

    fn get_eq(&mut self, key: &str, token: Token) -> Result<bool, Unavailable> {
        self.run(key, Op::GetEq { token }).map(|r| r.applied)
    }

    /// Every acquisition counts, fencing or not: the in-memory counter costs nothing, and it
    /// keeps this node's semantics those of [`NodeState`], which the model checks.
    fn execute(&mut self, key: &str, op: &Op, _fencing: Fencing) -> Result<NodeReply, Unavailable> {
        self.run(key, *op)
    }
}
