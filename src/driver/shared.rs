//! [`SharedNode`]: one node behind a mutex, shared by several clients or by a client and a test.

// `std` on purpose, not `crate::sync`: a shared node is a test and demonstration tool outside
// what the loom models check, and under loom it must keep working outside a model.
use std::sync::{Arc, Mutex};

use crate::node::{Node, NodeReply};
use crate::proto::{Fencing, Op, Token};
use crate::time::Millis;

/// A node that clones share: every clone reaches the same `N`.
///
/// A [`Guard`](super::Guard) borrows its client's nodes for as long as it lives; with shared
/// nodes a test can still crash one of them meanwhile, or give two clients the same masters.
#[derive(Debug, Default)]
pub struct SharedNode<N> {
    node: Arc<Mutex<N>>,
}

impl<N> SharedNode<N> {
    /// Shares `node`.
    pub fn new(node: N) -> SharedNode<N> {
        SharedNode {
            node: Arc::new(Mutex::new(node)),
        }
    }

    /// Runs `act` on the node, waiting for a command in flight.
    pub fn with<R>(&self, act: impl FnOnce(&mut N) -> R) -> R {
        // A panic inside `act` leaves the node as the panicking operation left it; the next
        // user sees that state, as it would on a real server.
        let mut node = self
            .node
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        act(&mut node)
    }
}

impl<N> Clone for SharedNode<N> {
    fn clone(&self) -> Self {
        SharedNode {
            node: Arc::clone(&self.node),
        }
    }
}

impl<N: Node> Node for SharedNode<N> {
    type Error = N::Error;

    fn set_nx_px(&mut self, key: &str, token: Token, ttl: Millis) -> Result<Option<u64>, N::Error> {
        self.with(|node| node.set_nx_px(key, token, ttl))
    }

    fn raise_fence(&mut self, key: &str, token: Token, to: u64) -> Result<bool, N::Error> {
        self.with(|node| node.raise_fence(key, token, to))
    }

    fn del_if_eq(&mut self, key: &str, token: Token) -> Result<bool, N::Error> {
        self.with(|node| node.del_if_eq(key, token))
    }

    fn pexpire_if_eq(&mut self, key: &str, token: Token, ttl: Millis) -> Result<bool, N::Error> {
        self.with(|node| node.pexpire_if_eq(key, token, ttl))
    }

    fn del(&mut self, key: &str) -> Result<bool, N::Error> {
        self.with(|node| node.del(key))
    }

    fn get_eq(&mut self, key: &str, token: Token) -> Result<bool, N::Error> {
        self.with(|node| node.get_eq(key, token))
    }

    fn set_nx_px_plain(&mut self, key: &str, token: Token, ttl: Millis) -> Result<bool, N::Error> {
        self.with(|node| node.set_nx_px_plain(key, token, ttl))
    }

    fn execute(&mut self, key: &str, op: &Op, fencing: Fencing) -> Result<NodeReply, N::Error> {
        // The inner node's own `execute`, in case it overrides the default.
        self.with(|node| node.execute(key, op, fencing))
    }

    fn foreign_key(error: &N::Error) -> Option<&str> {
        N::foreign_key(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::{ManualClock, MemoryNode};

    #[test]
    fn clones_reach_the_same_node() {
        let clock = ManualClock::new(Millis(0));
        let mut a = SharedNode::new(MemoryNode::new(clock));
        let b = a.clone();
        assert_eq!(a.set_nx_px("k", Token(7), Millis(10)), Ok(Some(1)));
        assert_eq!(b.with(|node| node.holder("k")), Some(Token(7)));
        b.with(|node| node.crash());
        assert!(a.del_if_eq("k", Token(7)).is_err());
    }
}
