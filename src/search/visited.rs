//! The depth-first engine's visited set: fingerprint → parent, shared by every thread
//! without a lock on the way in.
//!
//! At a few million states the table is far larger than the caches, so each lookup is a
//! cache miss; what matters is how many of them a thread waits for and what else it drags
//! between the cores. Hence:
//!
//! - **No lock per insert.** A slot is two words (fingerprint, parent); a thread claims an
//!   empty slot with one compare-and-swap on the fingerprint word. A shard lock, even one per
//!   shard and padded, is one more cache line that moves between the cores on most inserts.
//! - **Misses in parallel.** [`Handle::touch`] loads the first slot a fingerprint probes
//!   without using it: the engine touches every successor's slot before inserting any, so the
//!   core waits for their misses together instead of one after another.
//! - **Growth stops the world, briefly.** The table is split into shards that double
//!   separately (so a doubling copies a small part of the table, and memory stays at 20–40
//!   bytes per state plus one shard's old copy). A thread may touch the slots only between
//!   [`Handle::enter`] and [`Handle::leave`], with its `busy` flag set; a thread that grows
//!   a shard marks the table as growing, waits until no other thread is busy, swaps in the
//!   doubled shard, and lets them go on. Growths are few (each shard doubles a dozen times in
//!   a run of millions of states) and a thread is busy for one state's successors at a time,
//!   so the waits are short. The flag and the mark are a Dekker pair in sequentially
//!   consistent order: a thread that saw no mark is seen busy by the grower.
//!
//! A shard's fill count is kept per thread and added to the shard every [`FLUSH`] inserts, so
//! threads do not share a counter either; the load limit leaves room for what is not added
//! yet.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, RwLock};

/// A 64-bit fingerprint; 0 marks an empty slot (the engine never makes a 0 fingerprint).
pub(super) type Fingerprint = u64;

/// Shards: enough that a doubling copies a small part of the table.
const SHARD_BITS: u32 = 6;

/// Inserts a thread counts on its own before adding them to a shard's fill.
const FLUSH: usize = 16;

/// A shard grows when its known fill reaches this many tenths of its slots.
const LOAD_TENTHS: usize = 7;

/// A value alone on its cache line, so threads updating neighbours do not contend.
#[repr(align(128))]
#[derive(Default)]
pub(super) struct Padded<T>(pub(super) T);

/// The shards' slots, and the handshake that lets one thread replace a shard.
pub(super) struct Table {
    shards: Box<[Padded<Shard>]>,
    /// Twice the number of growths so far, plus one while a thread is growing a shard.
    epoch: Padded<AtomicU64>,
    /// Per thread: set while the thread may touch the slots.
    busy: Box<[Padded<AtomicBool>]>,
    /// Where threads wait for a growth to end.
    resumed: Mutex<()>,
    resume: Condvar,
}

struct Shard {
    /// Pairs of words: (fingerprint, parent). Replaced only while no other thread is busy.
    slots: RwLock<Arc<[AtomicU64]>>,
    /// Inserts added by the threads so far (each thread holds back fewer than [`FLUSH`]).
    filled: AtomicUsize,
}

/// One thread's access to the table: its copy of the shards' current arrays and its fill
/// counts not yet added.
pub(super) struct Handle {
    thread: usize,
    epoch: u64,
    slots: Vec<Arc<[AtomicU64]>>,
    unflushed: Vec<usize>,
}

fn slots_of(len: usize) -> Arc<[AtomicU64]> {
    (0..2 * len).map(|_| AtomicU64::new(0)).collect()
}

impl Table {
    /// An empty table for `threads` threads.
    pub(super) fn new(threads: usize) -> Table {
        // Each thread may hold back FLUSH - 1 inserts per shard: the first size leaves room
        // for all of them above the load limit.
        let first = (threads * FLUSH * 8).next_power_of_two().max(1024);
        Table {
            shards: (0..1 << SHARD_BITS)
                .map(|_| {
                    Padded(Shard {
                        slots: RwLock::new(slots_of(first)),
                        filled: AtomicUsize::new(0),
                    })
                })
                .collect(),
            epoch: Padded::default(),
            busy: (0..threads).map(|_| Padded::default()).collect(),
            resumed: Mutex::new(()),
            resume: Condvar::new(),
        }
    }

    /// A handle for thread `thread` (below the `threads` given to [`Table::new`]).
    pub(super) fn handle(&self, thread: usize) -> Handle {
        Handle {
            thread,
            epoch: u64::MAX,
            slots: Vec::new(),
            unflushed: vec![0; self.shards.len()],
        }
    }

    fn shard_of(fingerprint: Fingerprint) -> usize {
        (fingerprint >> (64 - SHARD_BITS)) as usize
    }

    /// The parent recorded for `fingerprint`; call only when no thread is busy.
    pub(super) fn parent(&self, fingerprint: Fingerprint) -> Option<Fingerprint> {
        let slots = Arc::clone(&read(&self.shards[Self::shard_of(fingerprint)].0.slots));
        let mask = slots.len() / 2 - 1;
        let mut i = fingerprint as usize & mask;
        loop {
            match slots[2 * i].load(Ordering::Relaxed) {
                0 => return None,
                f if f == fingerprint => return Some(slots[2 * i + 1].load(Ordering::Relaxed)),
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// Doubles shard `s` if it is still over the load limit, once no other thread is busy;
    /// false when another thread is growing a shard (the caller enters, waits, and retries).
    fn grow(&self, s: usize, thread: usize) -> bool {
        let epoch = self.epoch.0.load(Ordering::SeqCst);
        if epoch & 1 == 1
            || self
                .epoch
                .0
                .compare_exchange(epoch, epoch + 1, Ordering::SeqCst, Ordering::SeqCst)
                .is_err()
        {
            return false;
        }
        for (other, busy) in self.busy.iter().enumerate() {
            while other != thread && busy.0.load(Ordering::SeqCst) {
                std::thread::yield_now();
            }
        }
        let shard = &self.shards[s].0;
        let mut slots = shard.slots.write().unwrap_or_else(PoisonError::into_inner);
        let len = slots.len() / 2;
        if shard.filled.load(Ordering::Relaxed) * 10 >= len * LOAD_TENTHS {
            let doubled = slots_of(2 * len);
            let mask = 2 * len - 1;
            for pair in slots.chunks_exact(2) {
                let fingerprint = pair[0].load(Ordering::Relaxed);
                if fingerprint == 0 {
                    continue;
                }
                let mut i = fingerprint as usize & mask;
                while doubled[2 * i].load(Ordering::Relaxed) != 0 {
                    i = (i + 1) & mask;
                }
                doubled[2 * i].store(fingerprint, Ordering::Relaxed);
                doubled[2 * i + 1].store(pair[1].load(Ordering::Relaxed), Ordering::Relaxed);
            }
            *slots = doubled;
        }
        drop(slots);
        let _resumed = self.resumed.lock().unwrap_or_else(PoisonError::into_inner);
        self.epoch.0.store(epoch + 2, Ordering::SeqCst);
        self.resume.notify_all();
        true
    }
}

fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(PoisonError::into_inner)
}

impl Handle {
    /// Marks this thread busy, first waiting out a growth and taking the shards' current
    /// arrays if one happened since the last time.
    pub(super) fn enter(&mut self, table: &Table) {
        let busy = &table.busy[self.thread].0;
        loop {
            busy.store(true, Ordering::SeqCst);
            let epoch = table.epoch.0.load(Ordering::SeqCst);
            if epoch & 1 == 0 {
                if epoch != self.epoch {
                    self.slots = table
                        .shards
                        .iter()
                        .map(|s| Arc::clone(&read(&s.0.slots)))
                        .collect();
                    self.epoch = epoch;
                }
                return;
            }
            busy.store(false, Ordering::SeqCst);
            let mut resumed = table.resumed.lock().unwrap_or_else(PoisonError::into_inner);
            while table.epoch.0.load(Ordering::SeqCst) == epoch {
                resumed = table
                    .resume
                    .wait(resumed)
                    .unwrap_or_else(PoisonError::into_inner);
            }
        }
    }

    /// Lets a growing thread go on.
    pub(super) fn leave(&mut self, table: &Table) {
        table.busy[self.thread].0.store(false, Ordering::SeqCst);
    }

    /// Loads the first slot `fingerprint` probes, so that its cache miss overlaps others.
    /// Returns whether it already holds the fingerprint (an insert would then return false).
    pub(super) fn touch(&self, fingerprint: Fingerprint) -> bool {
        let slots = &self.slots[Table::shard_of(fingerprint)];
        let mask = slots.len() / 2 - 1;
        slots[2 * (fingerprint as usize & mask)].load(Ordering::Relaxed) == fingerprint
    }

    /// Records `fingerprint` with its parent; false when it was already there. Must be
    /// between [`Handle::enter`] and [`Handle::leave`]; may wait for or run a growth.
    pub(super) fn insert(
        &mut self,
        table: &Table,
        fingerprint: Fingerprint,
        parent: Fingerprint,
    ) -> bool {
        let s = Table::shard_of(fingerprint);
        let inserted = {
            let slots = &self.slots[s];
            let mask = slots.len() / 2 - 1;
            let mut i = fingerprint as usize & mask;
            loop {
                let word = &slots[2 * i];
                match word.compare_exchange(0, fingerprint, Ordering::Relaxed, Ordering::Relaxed) {
                    Ok(_) => {
                        slots[2 * i + 1].store(parent, Ordering::Relaxed);
                        break true;
                    }
                    Err(found) if found == fingerprint => break false,
                    Err(_) => i = (i + 1) & mask,
                }
            }
        };
        if inserted {
            self.unflushed[s] += 1;
            if self.unflushed[s] == FLUSH {
                self.unflushed[s] = 0;
                let shard = &table.shards[s].0;
                let filled = shard.filled.fetch_add(FLUSH, Ordering::Relaxed) + FLUSH;
                if filled * 10 >= self.slots[s].len() / 2 * LOAD_TENTHS {
                    self.grow(table, s);
                }
            }
        }
        inserted
    }

    /// Doubles shard `s` (or lets the thread already growing one finish first), then takes
    /// the new arrays.
    fn grow(&mut self, table: &Table, s: usize) {
        loop {
            self.leave(table);
            let grown = table.grow(s, self.thread);
            self.enter(table);
            let len = self.slots[s].len() / 2;
            if grown || table.shards[s].0.filled.load(Ordering::Relaxed) * 10 < len * LOAD_TENTHS {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fingerprint(i: u64) -> Fingerprint {
        i.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1
    }

    #[test]
    fn the_table_finds_what_it_holds_after_growing() {
        let table = Table::new(1);
        let mut handle = table.handle(0);
        handle.enter(&table);
        let n = 200_000u64;
        for i in 1..=n {
            assert!(handle.insert(&table, fingerprint(i), i));
        }
        for i in 1..=n {
            assert!(!handle.insert(&table, fingerprint(i), 0));
        }
        handle.leave(&table);
        for i in 1..=n {
            assert_eq!(table.parent(fingerprint(i)), Some(i));
        }
        assert_eq!(table.parent(2), None);
    }

    #[test]
    fn threads_inserting_together_insert_each_fingerprint_once() {
        let threads = 4;
        let table = Table::new(threads);
        let n = 100_000u64;
        let won: Vec<u64> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let table = &table;
                    scope.spawn(move || {
                        let mut handle = table.handle(t);
                        let mut won = 0;
                        // Every thread inserts every fingerprint, each in its own order,
                        // entering and leaving often so that growths interleave.
                        for chunk in 0..n / 100 {
                            handle.enter(table);
                            for k in 0..100 {
                                let i = (chunk * 100 + k + t as u64 * 7919) % n + 1;
                                if handle.insert(table, fingerprint(i), i) {
                                    won += 1;
                                }
                            }
                            handle.leave(table);
                        }
                        won
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(won.iter().sum::<u64>(), n);
        for i in 1..=n {
            assert_eq!(table.parent(fingerprint(i)), Some(i));
        }
    }
}
