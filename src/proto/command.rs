//! The command vocabulary between a Redlock client and one Redis master.
//!
//! The key is deliberately absent: one [`Lock`](super::Lock) guards one resource, so the driver
//! that executes a [`Command`] knows the key, and the core (and the model checker's state) need
//! not carry a string around.

use std::fmt;

use rand_core::RngCore;

use crate::time::Millis;

/// The largest number of nodes one lock can span (a [`NodeSet`] is a 64-bit mask).
pub const MAX_NODES: usize = 64;

/// The index of a node (Redis master) among the lock's `N` nodes, from 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u8);

impl NodeId {
    /// The index as a `usize`, for indexing slices of per-node data.
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Humans count nodes from 1 (n1..nN), as the Redlock literature does.
        write!(f, "n{}", self.0 as u16 + 1)
    }
}

/// A set of nodes, as a bit mask.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeSet(u64);

impl NodeSet {
    /// The empty set.
    pub const EMPTY: NodeSet = NodeSet(0);

    /// The set `{0, 1, …, count-1}`.
    pub const fn first(count: usize) -> NodeSet {
        if count >= 64 {
            NodeSet(u64::MAX)
        } else {
            NodeSet((1u64 << count) - 1)
        }
    }

    /// The set of `node` alone.
    pub const fn single(node: NodeId) -> NodeSet {
        NodeSet::from_bits(1 << node.0)
    }

    /// The raw bit mask (bit `i` is node `i`).
    pub const fn bits(self) -> u64 {
        self.0
    }

    /// Builds a set from a raw bit mask.
    pub const fn from_bits(bits: u64) -> NodeSet {
        NodeSet(bits)
    }

    /// Whether `node` is in the set.
    pub const fn contains(self, node: NodeId) -> bool {
        self.0 & (1u64 << node.0) != 0
    }

    /// Adds `node`.
    pub fn insert(&mut self, node: NodeId) {
        self.0 |= 1u64 << node.0;
    }

    /// Removes `node`.
    pub fn remove(&mut self, node: NodeId) {
        self.0 &= !(1u64 << node.0);
    }

    /// The number of nodes in the set.
    pub const fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The union of two sets.
    pub const fn union(self, other: NodeSet) -> NodeSet {
        NodeSet(self.0 | other.0)
    }

    /// The nodes in both sets.
    pub const fn intersection(self, other: NodeSet) -> NodeSet {
        NodeSet(self.0 & other.0)
    }

    /// The nodes of `self` that are not in `other`.
    pub const fn difference(self, other: NodeSet) -> NodeSet {
        NodeSet(self.0 & !other.0)
    }

    /// The nodes in increasing order.
    pub fn iter(self) -> impl Iterator<Item = NodeId> {
        (0..64u8)
            .filter(move |i| self.0 & (1u64 << i) != 0)
            .map(NodeId)
    }
}

impl fmt::Display for NodeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        write!(f, "{{")?;
        for node in self.iter() {
            if !first {
                write!(f, ",")?;
            }
            first = false;
            write!(f, "{node}")?;
        }
        write!(f, "}}")
    }
}

/// The random value a client stores in the key: it proves ownership to compare-and-delete and
/// compare-and-extend. 128 bits, so two acquisitions never share one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Token(pub u128);

impl Token {
    /// Draws a fresh token from `rng`. Pass a CSPRNG in production; the simulator passes its
    /// seeded generator so a run replays.
    pub fn random<R: RngCore + ?Sized>(rng: &mut R) -> Token {
        let high = u128::from(rng.next_u64());
        let low = u128::from(rng.next_u64());
        Token(high << 64 | low)
    }
}

/// The Redis verb and a short token (the first 8 of its 32 hex digits, which tell a run's
/// tokens apart), as traces print an operation.
impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let short = |token: Token| token.to_string()[..8].to_owned();
        match *self {
            Op::SetNxPx { token, ttl } => write!(f, "SET NX PX {} {}…", ttl.0, short(token)),
            Op::DelIfEq { token } => write!(f, "DEL-IF-EQ {}…", short(token)),
            Op::Del => write!(f, "DEL"),
            Op::GetEq { token } => write!(f, "GET (is it {}…?)", short(token)),
            Op::PExpireIfEq { token, ttl } => {
                write!(f, "PEXPIRE-IF-EQ {} {}…", ttl.0, short(token))
            }
            Op::RaiseFence { token, to } => write!(f, "RAISE-FENCE-IF-EQ {to} {}…", short(token)),
        }
    }
}

impl fmt::Display for Token {
    /// 32 lowercase hex digits: the value the Redis driver stores.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

/// One operation on the lock's key at one node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `SET key token NX PX ttl`: create the key unless it exists.
    SetNxPx {
        /// The value to store.
        token: Token,
        /// Time to live, on the node's clock.
        ttl: Millis,
    },
    /// Compare-and-delete: delete the key only if it holds `token` (the Lua script of redis.io).
    DelIfEq {
        /// The value the key must hold.
        token: Token,
    },
    /// Plain `DEL key`: the mistake redis.io warns about, kept so the model can show why.
    Del,
    /// `GET key`, compared by the client: applied when the key holds `token`. Only the
    /// get-then-del mistake sends it ([`UnlockMode::GetThenDel`](super::UnlockMode::GetThenDel)):
    /// the comparison and the `DEL` that follows it are two commands, and another client's
    /// `SET` may land between them.
    GetEq {
        /// The value the key must hold.
        token: Token,
    },
    /// Compare-and-pexpire: reset the key's TTL only if it holds `token`.
    PExpireIfEq {
        /// The value the key must hold.
        token: Token,
        /// The new time to live, on the node's clock.
        ttl: Millis,
    },
    /// Raise the resource's fencing counter to at least `to` (`counter := max(counter, to)`),
    /// only if the key still holds `token`: the write-back that makes a quorum's largest
    /// counter monotonic (see [`Fencing::WriteBack`](super::Fencing::WriteBack)).
    ///
    /// The condition is what makes it work: a later holder can create its key on this node
    /// only after ours is gone, so only after the raise, and its counter then starts above
    /// `to`. An unconditional raise could land after a later holder's `SET` on a node where
    /// our key never was, and count toward our quorum while helping nobody.
    RaiseFence {
        /// The value the key must hold.
        token: Token,
        /// The fencing token the acquisition round derived.
        to: u64,
    },
}

/// Which round a command belongs to, so late replies to an old round are ignored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RoundId(pub u32);

/// An operation addressed to one node, emitted by the core for a driver to execute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[must_use = "a command does nothing until a driver sends it"]
pub struct Command {
    /// The node to send it to.
    pub node: NodeId,
    /// The round it belongs to; hand it back with the reply.
    pub round: RoundId,
    /// What to do.
    pub op: Op,
}

/// A node's answer to one [`Op`], as a driver reports it to the core.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reply {
    /// The operation took effect (`SET` created the key, the script deleted or extended it).
    Applied,
    /// The node answered, and the operation did not take effect (the key exists, or holds
    /// another token, or is gone).
    NotApplied,
    /// No usable answer: timeout, connection error, a reply of the wrong type, a node that
    /// refuses commands while it restarts. The driver keeps the details.
    Failed,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_set_counts_and_iterates() {
        let mut set = NodeSet::EMPTY;
        set.insert(NodeId(0));
        set.insert(NodeId(4));
        set.insert(NodeId(4));
        assert_eq!(set.len(), 2);
        assert_eq!(set.iter().collect::<Vec<_>>(), vec![NodeId(0), NodeId(4)]);
        assert_eq!(set.to_string(), "{n1,n5}");
        assert_eq!(set.difference(NodeSet::first(1)).len(), 1);
        set.remove(NodeId(0));
        assert_eq!(set.len(), 1);
        assert_eq!(NodeSet::first(3).len(), 3);
        assert_eq!(NodeSet::first(64).len(), 64);
    }

    #[test]
    fn tokens_print_as_32_hex_digits() {
        assert_eq!(Token(255).to_string(), "000000000000000000000000000000ff");
    }
}
