//! Symmetry: nodes that every client treats alike, and clients that reach the same nodes, are
//! interchangeable, so a symbolic state is stored as one image of its orbit.

use super::automaton::{MAX_CLIENTS, MAX_NODES, ZoneConfig};
use super::discrete::{Discrete, NO_OWNER};
use super::zone::Zone;

/// How an image renamed a state: index `i` of the image was index `clients[i]` (`nodes[i]`)
/// of the state. A counterexample found on images is told with the names of the run by
/// composing these along its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Renaming {
    pub(crate) clients: [u8; MAX_CLIENTS],
    pub(crate) nodes: [u8; MAX_NODES],
}

impl Renaming {
    /// Every index keeps its name.
    pub(crate) const IDENTITY: Renaming = Renaming {
        clients: [0, 1, 2],
        nodes: [0, 1, 2, 3, 4, 5, 6],
    };

    /// The renaming that applies `self` first, then `then` (the image of an image).
    pub(crate) fn then(&self, then: &Renaming) -> Renaming {
        let mut out = *self;
        for (i, old) in then.clients.iter().enumerate() {
            out.clients[i] = self.clients[usize::from(*old)];
        }
        for (i, old) in then.nodes.iter().enumerate() {
            out.nodes[i] = self.nodes[usize::from(*old)];
        }
        out
    }
}

/// An order whose sort changed nothing.
fn is_identity(order: &[usize]) -> bool {
    order.iter().enumerate().all(|(i, &o)| i == o)
}

impl Discrete {
    /// A symmetric image of `(self, zone)`: clients sorted, then nodes, by what they look
    /// like (ties keep their order, so two images of one orbit may still differ; the
    /// reduction is sound either way, since any image behaves like the state), and how it
    /// renamed them.
    pub(crate) fn symmetric_image<Z: Zone>(
        &self,
        config: &ZoneConfig,
        zone: &Z,
    ) -> (Discrete, Z, Renaming) {
        let mut image = (*self, zone.clone(), Renaming::IDENTITY);
        if config.clients_symmetric() && config.clients > 1 {
            image = image.0.sort_clients(config, &image.1, image.2);
        }
        if config.nodes_symmetric() && config.nodes > 1 {
            image = image.0.sort_nodes(config, &image.1, image.2);
        }
        image
    }

    fn sort_clients<Z: Zone>(
        &self,
        config: &ZoneConfig,
        zone: &Z,
        mut renaming: Renaming,
    ) -> (Discrete, Z, Renaming) {
        let key = |c: usize| {
            let x = config.client_clock(c);
            let owned = (0..config.nodes)
                .filter(|&n| self.owners[n] == c as u8)
                .count();
            let op = config.storage.as_ref().map(|_| {
                (
                    zone.order(config.op_clock(c), 0),
                    zone.order(0, config.op_clock(c)),
                )
            });
            (
                self.clients[c].order_key(),
                owned,
                zone.order(x, 0),
                zone.order(0, x),
                op,
            )
        };
        let mut order: Vec<usize> = (0..config.clients).collect();
        order.sort_by_key(|&c| key(c));
        if is_identity(&order) {
            return (*self, zone.clone(), renaming);
        }
        let mut renamed = *self;
        for (new, &old) in order.iter().enumerate() {
            renamed.clients[new] = self.clients[old];
            renaming.clients[new] = old as u8;
        }
        for n in 0..config.nodes {
            if self.owners[n] != NO_OWNER {
                let old = usize::from(self.owners[n]);
                let new = order.iter().position(|&o| o == old).expect("a client");
                renamed.owners[n] = new as u8;
            }
        }
        let mut from: Vec<usize> = (0..=config.clock_count()).collect();
        for (new, &old) in order.iter().enumerate() {
            from[config.client_clock(new)] = config.client_clock(old);
            if config.storage.is_some() {
                from[config.op_clock(new)] = config.op_clock(old);
            }
        }
        (renamed, zone.permuted(&from), renaming)
    }

    fn sort_nodes<Z: Zone>(
        &self,
        config: &ZoneConfig,
        zone: &Z,
        mut renaming: Renaming,
    ) -> (Discrete, Z, Renaming) {
        let bit = |mask: u8, n: usize| (mask >> n) & 1;
        let key = |n: usize| {
            let y = config.key_clock(n);
            let per_client: Vec<(u8, u8, u8, u8)> = (0..config.clients)
                .map(|c| {
                    let p = self.clients[c];
                    let (yes, answered, guarded) = p.mailbox_bits();
                    (
                        bit(p.inflight, n),
                        bit(yes & !guarded, n),
                        bit(answered, n),
                        bit(guarded, n),
                    )
                })
                .collect();
            let owner = self.owners[n];
            let restart = self
                .restart_clock(config, n)
                .map(|r| (zone.order(r, 0), zone.order(0, r)));
            (
                self.availability[n],
                bit(self.young, n),
                bit(self.durable, n),
                owner,
                per_client,
                zone.order(y, 0),
                zone.order(0, y),
                restart,
            )
        };
        let mut order: Vec<usize> = (0..config.nodes).collect();
        order.sort_by_key(|&n| key(n));
        if is_identity(&order) {
            return (*self, zone.clone(), renaming);
        }
        let move_bits = |mask: u8| {
            order
                .iter()
                .enumerate()
                .fold(0u8, |acc, (new, &old)| acc | (bit(mask, old) << new))
        };
        let mut renamed = *self;
        for c in 0..config.clients {
            renamed.clients[c] = self.clients[c].with_nodes_moved(move_bits);
        }
        renamed.young = move_bits(self.young);
        for (new, &old) in order.iter().enumerate() {
            renamed.restart_slot[new] = self.restart_slot[old];
        }
        renamed.durable = move_bits(self.durable);
        for (new, &old) in order.iter().enumerate() {
            renamed.owners[new] = self.owners[old];
            renamed.availability[new] = self.availability[old];
            renaming.nodes[new] = old as u8;
        }
        let mut from: Vec<usize> = (0..=config.clock_count()).collect();
        for (new, &old) in order.iter().enumerate() {
            from[config.key_clock(new)] = config.key_clock(old);
        }
        (renamed, zone.permuted(&from), renaming)
    }
}
