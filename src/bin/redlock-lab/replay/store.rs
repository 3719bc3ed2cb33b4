//! The guarded storage of a replay: Kleppmann's fenced store (`driver::redis::fenced`) on a
//! real master of its own, each client with its own connection, and the order in which it
//! accepted ops, against the order in which the real clients acquired the lock.

use anyhow::Result;
use redlock_lab::driver::redis::NodeOptions;
use redlock_lab::driver::redis::fenced::{FencedStore, FencingToken, Read, Write};
use redlock_lab::storage::{StorageOp, ordinal};

/// The key of the guarded value.
const KEY: &str = "replay-storage";

/// An op the store accepted: whose, of which acquisition (1 for the first lock acquired in
/// the real run), and in words.
struct Accepted {
    client: usize,
    acquisition: u32,
    op: String,
}

/// The store, and what it accepted so far.
pub(super) struct Store {
    connections: Vec<FencedStore>,
    accepted: Vec<Accepted>,
}

impl Store {
    /// One connection per client to the store at `url`.
    pub(super) fn open(url: &str, clients: usize) -> Result<Store> {
        let connections = (0..clients)
            .map(|_| FencedStore::open(url, NodeOptions::default()))
            .collect::<Result<_, _>>()?;
        Ok(Store {
            connections,
            accepted: Vec::new(),
        })
    }

    /// Client `c`'s op lands, with the token its core derived (`fence`), for its lock acquired
    /// `acquisition`th in the real run: whether the store applied it, and in words.
    pub(super) fn apply(
        &mut self,
        c: usize,
        op: &StorageOp,
        fence: u64,
        acquisition: u32,
    ) -> Result<(bool, String)> {
        let token = FencingToken(fence);
        let store = &mut self.connections[c];
        let (applied, told) = match *op {
            StorageOp::Write { value, .. } => match store.write(KEY, &value.to_string(), token)? {
                Write::Applied => (true, format!("write {value} with token {fence}: applied")),
                Write::Rejected { newest } => (
                    false,
                    format!("write with token {fence}: refused (newest {})", newest.0),
                ),
            },
            _ => match store.read(KEY, token)? {
                Read::Value(value) => (
                    true,
                    format!(
                        "read with token {fence}: {}",
                        value.as_deref().unwrap_or("nil")
                    ),
                ),
                Read::Rejected { newest } => (
                    false,
                    format!("read with token {fence}: refused (newest {})", newest.0),
                ),
            },
        };
        if applied {
            self.accepted.push(Accepted {
                client: c,
                acquisition,
                op: format!(
                    "{} (token {fence}, the {} lock acquired)",
                    op.action(),
                    ordinal(acquisition)
                ),
            });
        }
        Ok((applied, told))
    }

    /// The first op the store accepted after an op of a later acquisition: the fenced order
    /// broken on the real store (storage safety).
    pub(super) fn inversion(&self) -> Option<String> {
        self.accepted.iter().enumerate().find_map(|(i, later)| {
            self.accepted[..i]
                .iter()
                .find(|earlier| earlier.acquisition > later.acquisition)
                .map(|earlier| {
                    format!(
                        "the fenced store accepted c{}'s {} after c{}'s {}",
                        later.client + 1,
                        later.op,
                        earlier.client + 1,
                        earlier.op
                    )
                })
        })
    }
}
