//! Who acts in a run: the one vocabulary of actors that the model checker, the simulator and
//! every story share.
//!
//! People count from 1, as the Redlock literature does, so node 0 is told `n1` and client 0
//! `c1` in every format (text, Mermaid, SVG, JSON) and by both executors.

use std::fmt;

/// Who acts in an event, or sends and receives a message.
///
/// The variant order is the order the simulator's network breaks ties in (nodes, then
/// clients, then the storage), so it is part of what one seed reproduces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Actor {
    /// A Redis master, from 0 (`n1`).
    Node(u8),
    /// A lock client, from 0 (`c1`).
    Client(u8),
    /// An asynchronous replica of `n1`: 0 when `n1` has one (told `replica`), else its
    /// number from 1 (told `replica1`, `replica2`). A plain number rather than an
    /// `Option<u8>`: with the nested option, the optimised build of the stories stored a
    /// wrong `u32` beside the actor in a `Vec<(Actor, u32)>` (the travel times in
    /// `model/moments.rs`), which the debug build did not; a one-byte payload, like every other
    /// variant's, does not.
    Replica(u8),
    /// Node `n`'s asynchronous replica, from 0, when every node has one (`[failover]
    /// every_node`, a Redlock over the shards of a Redis Cluster): told `n1_replica`.
    ReplicaOf(u8),
    /// The separate counter node that hands out fencing tokens (`counter-after-acquire`).
    Counter,
    /// The guarded storage.
    Storage,
    /// Nobody: time passes.
    Time,
}

impl Actor {
    /// A node by its index.
    ///
    /// # Panics
    /// If `index` does not fit a `u8` (a lock spans at most [`MAX_NODES`](crate::proto::MAX_NODES)).
    pub fn node(index: usize) -> Actor {
        Actor::Node(narrow(index))
    }

    /// A client by its index.
    ///
    /// # Panics
    /// If `index` does not fit a `u8` (the model and the simulator hold a few clients).
    pub fn client(index: usize) -> Actor {
        Actor::Client(narrow(index))
    }
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Actor::Node(n) => write!(f, "n{}", u16::from(n) + 1),
            Actor::Client(c) => write!(f, "c{}", u16::from(c) + 1),
            Actor::Replica(0) => f.write_str("replica"),
            Actor::Replica(r) => write!(f, "replica{r}"),
            Actor::ReplicaOf(n) => write!(f, "n{}_replica", u16::from(n) + 1),
            Actor::Counter => f.write_str("counter"),
            Actor::Storage => f.write_str("storage"),
            Actor::Time => f.write_str("time"),
        }
    }
}

#[cfg(feature = "model")]
impl serde::Serialize for Actor {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// An actor that owns a clock a fault can step: a node or a client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Process {
    /// A Redis master, from 0 (`n1`).
    Node(u8),
    /// A lock client, from 0 (`c1`).
    Client(u8),
}

impl Process {
    /// A node by its index; panics as [`Actor::node`] does.
    pub fn node(index: usize) -> Process {
        Process::Node(narrow(index))
    }

    /// A client by its index; panics as [`Actor::client`] does.
    pub fn client(index: usize) -> Process {
        Process::Client(narrow(index))
    }

    /// The node's or the client's index, for indexing per-process data.
    pub fn index(self) -> usize {
        match self {
            Process::Node(i) | Process::Client(i) => usize::from(i),
        }
    }
}

impl From<Process> for Actor {
    fn from(process: Process) -> Actor {
        match process {
            Process::Node(n) => Actor::Node(n),
            Process::Client(c) => Actor::Client(c),
        }
    }
}

impl fmt::Display for Process {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Actor::from(*self).fmt(f)
    }
}

/// An index as the `u8` every actor carries. Node and client counts are validated far below
/// 256 before any actor is named, so a larger index is a bug in the caller.
fn narrow(index: usize) -> u8 {
    u8::try_from(index).expect("an actor index is below 256 (counts are validated first)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actors_are_told_counting_from_one() {
        assert_eq!(Actor::node(0).to_string(), "n1");
        assert_eq!(Actor::Client(254).to_string(), "c255");
        assert_eq!(Process::client(2).to_string(), "c3");
        assert_eq!(Actor::Storage.to_string(), "storage");
    }

    #[test]
    fn a_process_is_the_actor_of_the_same_index() {
        assert_eq!(Actor::from(Process::node(4)), Actor::Node(4));
        assert_eq!(Process::client(7).index(), 7);
        // The simulator's network breaks ties in this order.
        assert!(Actor::Node(9) < Actor::Client(0) && Actor::Client(9) < Actor::Storage);
    }
}
