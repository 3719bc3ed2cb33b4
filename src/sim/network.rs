//! The network: messages in flight, each with its own delay, some lost, so they reorder.
//!
//! Delivery order is `(arrival tick, send order)`, a total order that depends only on the
//! seeded draws: no hash maps, no wall clock.

use std::collections::BTreeMap;
use std::fmt;

use rand_chacha::ChaCha8Rng;

use super::draw::{chance, uniform};
use super::setup::NetworkConfig;
use crate::actor::Actor;
use crate::proto::{Command, NodeId, Reply, RoundId};
use crate::storage::{StorageOp, StorageReply};
use crate::time::Millis;

/// What a message carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Payload {
    /// A command of the Redlock core, from a client to a node.
    Command(Command),
    /// A node's answer to a command.
    Reply {
        /// The round of the command.
        round: RoundId,
        /// The answering node.
        node: NodeId,
        /// The answer.
        reply: Reply,
        /// The fencing counter a `SET` that created the key returned (0 otherwise).
        counter: u64,
        /// Whether the client may count a yes from the node: `false` while the restarted-node
        /// guard covers it.
        counts: bool,
    },
    /// A storage operation from a holder.
    StorageOp {
        /// The client's sequence number of the operation, echoed in the answer.
        seq: u32,
        /// The operation.
        op: StorageOp,
    },
    /// The storage's answer.
    StorageReply {
        /// The sequence number of the operation.
        seq: u32,
        /// The answer.
        reply: StorageReply,
    },
}

impl fmt::Display for Payload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Payload::Command(command) => {
                write!(f, "{} (round {})", command.op, command.round.0)
            }
            Payload::Reply { round, reply, .. } => write!(f, "{reply:?} (round {})", round.0),
            Payload::StorageOp { seq, op } => write!(f, "{op} (#{seq})"),
            Payload::StorageReply { seq, reply } => write!(f, "{reply:?} (#{seq})"),
        }
    }
}

/// A message between two endpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Message {
    /// The sender.
    pub from: Actor,
    /// The receiver.
    pub to: Actor,
    /// The content.
    pub payload: Payload,
}

impl Message {
    /// Whether the message travels between a client and a node (the lock service's network,
    /// which loses messages), rather than to or from the storage.
    pub fn is_lock_traffic(&self) -> bool {
        matches!(self.from, Actor::Node(_)) || matches!(self.to, Actor::Node(_))
    }

    /// The node at either end, if any.
    pub fn node(&self) -> Option<usize> {
        match (self.from, self.to) {
            (Actor::Node(n), _) | (_, Actor::Node(n)) => Some(usize::from(n)),
            _ => None,
        }
    }
}

/// What became of a message handed to the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Sent {
    /// It will arrive at this true time.
    Arrives(Millis),
    /// It is lost.
    Lost,
}

/// Messages in flight.
#[derive(Clone, Debug, Default)]
pub(super) struct Network {
    config: NetworkConfig,
    in_flight: BTreeMap<(u64, u64), Message>,
    next_seq: u64,
}

impl Network {
    /// An empty network with these delays and this loss.
    pub(super) fn new(config: NetworkConfig) -> Network {
        Network {
            config,
            in_flight: BTreeMap::new(),
            next_seq: 0,
        }
    }

    /// The delays and loss this network runs with (a swarm run's own draw included).
    pub(super) fn config(&self) -> &NetworkConfig {
        &self.config
    }

    /// Sends `message` at true time `now`: lost with the configured probability (lock traffic
    /// only), otherwise delivered after a uniformly drawn delay plus `extra`. The draws come
    /// from `rng` in a fixed order (loss, then delay) whether or not the message is lost, so
    /// one message's fate never shifts another's.
    pub(super) fn send(
        &mut self,
        now: u64,
        message: Message,
        extra: Millis,
        rng: &mut ChaCha8Rng,
    ) -> Sent {
        let lost = chance(rng, self.config.loss_per_mille);
        let delay = uniform(rng, self.config.delay_min.0, self.config.delay_max.0);
        if lost && message.is_lock_traffic() {
            return Sent::Lost;
        }
        let at = now.saturating_add(delay).saturating_add(extra.0);
        self.in_flight.insert((at, self.next_seq), message);
        self.next_seq += 1;
        Sent::Arrives(Millis(at))
    }

    /// Puts `message` back in flight to arrive at `at`, without a new draw (a held request).
    pub(super) fn hold(&mut self, at: u64, message: Message) {
        self.in_flight.insert((at, self.next_seq), message);
        self.next_seq += 1;
    }

    /// Removes and returns the earliest message due at or before `now`.
    pub(super) fn pop_due(&mut self, now: u64) -> Option<Message> {
        let entry = self.in_flight.first_entry()?;
        if entry.key().0 > now {
            return None;
        }
        Some(entry.remove())
    }

    /// Whether nothing is in flight.
    #[cfg(test)]
    pub(super) fn is_empty(&self) -> bool {
        self.in_flight.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;

    fn ping(i: u32) -> Message {
        Message {
            from: Actor::Client(0),
            to: Actor::Storage,
            payload: Payload::StorageOp {
                seq: i,
                op: StorageOp::Read { epoch: 1, fence: 1 },
            },
        }
    }

    fn to_node(i: u32) -> Message {
        Message {
            to: Actor::Node(0),
            ..ping(i)
        }
    }

    fn seqs(network: &mut Network, until: u64) -> Vec<u32> {
        let mut out = Vec::new();
        for now in 0..=until {
            while let Some(message) = network.pop_due(now) {
                if let Payload::StorageOp { seq, .. } = message.payload {
                    out.push(seq);
                }
            }
        }
        out
    }

    #[test]
    fn delays_reorder_messages_and_replay_from_the_seed() {
        let config = NetworkConfig {
            delay_min: Millis(1),
            delay_max: Millis(50),
            loss_per_mille: 0,
        };
        let run = |seed| {
            let mut network = Network::new(config);
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            for i in 0..20 {
                network.send(0, ping(i), Millis::ZERO, &mut rng);
            }
            seqs(&mut network, 60)
        };
        let order = run(3);
        assert_eq!(order.len(), 20);
        assert_ne!(
            order,
            (0..20).collect::<Vec<_>>(),
            "independent delays reorder"
        );
        assert_eq!(run(3), order, "the same seed gives the same order");
        assert_ne!(run(4), order);
    }

    #[test]
    fn a_message_arrives_within_its_delay_plus_the_extra() {
        let config = NetworkConfig {
            delay_min: Millis(2),
            delay_max: Millis(4),
            loss_per_mille: 0,
        };
        let mut network = Network::new(config);
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        for _ in 0..100 {
            match network.send(10, ping(0), Millis(100), &mut rng) {
                Sent::Arrives(at) => assert!((112..=114).contains(&at.0)),
                Sent::Lost => panic!("no loss configured"),
            }
        }
        assert!(network.pop_due(111).is_none());
        assert_eq!(seqs(&mut network, 114).len(), 100);
        assert!(network.is_empty());
    }

    #[test]
    fn loss_hits_lock_traffic_only_and_draws_the_same_either_way() {
        let config = NetworkConfig {
            delay_min: Millis(1),
            delay_max: Millis(1),
            loss_per_mille: 500,
        };
        let mut network = Network::new(config);
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let lost = (0..1000)
            .filter(|&i| network.send(0, to_node(i), Millis::ZERO, &mut rng) == Sent::Lost)
            .count();
        assert!((400..600).contains(&lost), "{lost} of 1000 lost at 50%");
        assert!(
            (0..1000).all(|i| network.send(0, ping(i), Millis::ZERO, &mut rng) != Sent::Lost),
            "storage messages are never lost"
        );
        // The draws do not depend on the fate: after the same number of sends, two generators
        // agree whatever was sent.
        let mut a = ChaCha8Rng::seed_from_u64(1);
        let mut b = ChaCha8Rng::seed_from_u64(1);
        let mut network = Network::new(config);
        network.send(0, to_node(0), Millis::ZERO, &mut a);
        network.send(0, ping(0), Millis::ZERO, &mut b);
        assert_eq!(a.get_word_pos(), b.get_word_pos());
    }
}
