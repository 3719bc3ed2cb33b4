//! [`RedlockPool`]: one client shared by many threads, as a service shares a database pool.

use std::ops::{Deref, DerefMut};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use super::blocking::Redlock;

/// Makes one more member of a pool.
type Make<N, C, R> = Box<dyn Fn() -> Redlock<N, C, R> + Send + Sync>;

/// A bounded pool of [`Redlock`] clients, each with its own connection to every node, that
/// many threads share through `&RedlockPool` (it is `Sync` when the client is `Send`).
///
/// [`get`](RedlockPool::get) checks a client out for as long as the returned [`Pooled`] lives
/// (lock, extend, unlock through it, as through a client of one's own) and puts it back when it
/// is dropped. Clients are made on demand, never more than [`max_size`](RedlockPool::max_size):
/// a thread that finds them all checked out waits for one to come back. The client used last is
/// handed out first, so a pool used by one thread at a time keeps one set of connections.
///
/// A client stays checked out while a guard borrows it, watchdog included: size the pool for the
/// locks held at once plus the threads trying to lock.
///
/// A single-threaded program keeps using [`Redlock`] directly: the pool adds one uncontended
/// mutex per checkout and nothing per round.
pub struct RedlockPool<N, C, R> {
    state: Mutex<State<N, C, R>>,
    returned: Condvar,
    max_size: usize,
    make: Make<N, C, R>,
}

/// The clients not checked out, and how many exist in all.
struct State<N, C, R> {
    idle: Vec<Redlock<N, C, R>>,
    made: usize,
}

impl<N, C, R> std::fmt::Debug for RedlockPool<N, C, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.state();
        f.debug_struct("RedlockPool")
            .field("max_size", &self.max_size)
            .field("made", &state.made)
            .field("idle", &state.idle.len())
            .finish_non_exhaustive()
    }
}

impl<N, C, R> RedlockPool<N, C, R> {
    /// A pool of at most `max_size` clients (at least one), each made by `make` when no idle one
    /// is left. `make` must not fail: check its input once before (as
    /// `RedisRedlockPool::open` does, feature `redis`, by making the first client at once).
    pub fn new(
        max_size: usize,
        make: impl Fn() -> Redlock<N, C, R> + Send + Sync + 'static,
    ) -> RedlockPool<N, C, R> {
        RedlockPool {
            state: Mutex::new(State {
                idle: Vec::new(),
                made: 0,
            }),
            returned: Condvar::new(),
            max_size: max_size.max(1),
            make: Box::new(make),
        }
    }

    /// Like [`new`](RedlockPool::new), with `first` as the pool's first idle client.
    pub fn with_first(
        max_size: usize,
        first: Redlock<N, C, R>,
        make: impl Fn() -> Redlock<N, C, R> + Send + Sync + 'static,
    ) -> RedlockPool<N, C, R> {
        let pool = RedlockPool::new(max_size, make);
        {
            let mut state = pool.state();
            state.idle.push(first);
            state.made = 1;
        }
        pool
    }

    /// The most clients (connection sets) the pool makes.
    pub fn max_size(&self) -> usize {
        self.max_size
    }

    /// How many clients the pool has made so far (idle or checked out).
    pub fn made(&self) -> usize {
        self.state().made
    }

    /// How many clients are idle now.
    pub fn idle(&self) -> usize {
        self.state().idle.len()
    }

    /// A client of the pool, for as long as the [`Pooled`] lives: an idle one, else a new one
    /// while fewer than [`max_size`](RedlockPool::max_size) exist, else the first one another
    /// thread puts back (this waits for it).
    pub fn get(&self) -> Pooled<'_, N, C, R> {
        let mut state = self.state();
        loop {
            if let Some(client) = state.idle.pop() {
                return self.pooled(client);
            }
            if state.made < self.max_size {
                state.made += 1;
                drop(state);
                return self.pooled(self.make_counted());
            }
            // Woken by a client put back; a spurious wake-up looks again.
            state = self
                .returned
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Like [`get`](RedlockPool::get), without waiting: `None` when every client is checked out
    /// and the pool is full.
    pub fn try_get(&self) -> Option<Pooled<'_, N, C, R>> {
        let mut state = self.state();
        if let Some(client) = state.idle.pop() {
            return Some(self.pooled(client));
        }
        if state.made < self.max_size {
            state.made += 1;
            drop(state);
            return Some(self.pooled(self.make_counted()));
        }
        None
    }

    /// A new client, already counted in `made`; uncounted again if `make` panics.
    fn make_counted(&self) -> Redlock<N, C, R> {
        struct Uncount<'a, N, C, R>(&'a RedlockPool<N, C, R>);
        impl<N, C, R> Drop for Uncount<'_, N, C, R> {
            fn drop(&mut self) {
                self.0.state().made -= 1;
                self.0.returned.notify_one();
            }
        }
        let uncount = Uncount(self);
        let client = (self.make)();
        std::mem::forget(uncount);
        client
    }

    fn pooled(&self, client: Redlock<N, C, R>) -> Pooled<'_, N, C, R> {
        Pooled {
            pool: self,
            client: Some(client),
        }
    }

    fn state(&self) -> MutexGuard<'_, State<N, C, R>> {
        // The state is a list and a count, whole between any two statements: a panic elsewhere
        // cannot leave it half changed.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A client checked out of a [`RedlockPool`]; use it as a [`Redlock`] (it dereferences to
/// one). Dropping it puts the client back for the next thread.
///
/// A guard borrows it as it would borrow a client of one's own, so the client goes back only
/// once the guard is gone; both may move to another thread (scoped threads), which can unlock.
pub struct Pooled<'a, N, C, R> {
    pool: &'a RedlockPool<N, C, R>,
    /// Always `Some` until the drop takes it.
    client: Option<Redlock<N, C, R>>,
}

impl<N: std::fmt::Debug, C: std::fmt::Debug, R: std::fmt::Debug> std::fmt::Debug
    for Pooled<'_, N, C, R>
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Pooled").field(&self.client).finish()
    }
}

impl<N, C, R> Deref for Pooled<'_, N, C, R> {
    type Target = Redlock<N, C, R>;

    fn deref(&self) -> &Redlock<N, C, R> {
        self.client.as_ref().expect("present until dropped")
    }
}

impl<N, C, R> DerefMut for Pooled<'_, N, C, R> {
    fn deref_mut(&mut self) -> &mut Redlock<N, C, R> {
        self.client.as_mut().expect("present until dropped")
    }
}

impl<N, C, R> Drop for Pooled<'_, N, C, R> {
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            self.pool.state().idle.push(client);
            self.pool.returned.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Barrier;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::thread;

    use super::*;
    use crate::driver::{ManualClock, MemoryNode, SharedNode};
    use crate::proto::Config;
    use crate::time::Millis;

    type Client = Redlock<SharedNode<MemoryNode>, ManualClock, rand_chacha::ChaCha20Rng>;

    /// A pool of at most `max_size` clients over the same three in-memory nodes.
    fn memory_pool(
        max_size: usize,
    ) -> RedlockPool<SharedNode<MemoryNode>, ManualClock, rand_chacha::ChaCha20Rng> {
        let clock = ManualClock::new(Millis(0));
        let nodes: Vec<_> = (0..3)
            .map(|_| SharedNode::new(MemoryNode::new(clock.clone())))
            .collect();
        let seeds = AtomicUsize::new(0);
        RedlockPool::new(max_size, move || -> Client {
            let seed = seeds.fetch_add(1, Ordering::Relaxed) as u64;
            Redlock::with_seed(nodes.clone(), Config::new(3), clock.clone(), seed)
                .expect("a valid config")
        })
    }

    #[test]
    fn clients_are_made_lazily_up_to_the_bound_and_reused() {
        let pool = memory_pool(2);
        assert_eq!(
            (pool.made(), pool.idle()),
            (0, 0),
            "nothing made before use"
        );
        let a = pool.get();
        let b = pool.get();
        assert_eq!(pool.made(), 2);
        assert!(
            pool.try_get().is_none(),
            "full and every client checked out"
        );
        drop(a);
        assert_eq!(pool.idle(), 1);
        let c = pool.try_get().expect("the client put back");
        assert_eq!((pool.made(), pool.idle()), (2, 0), "reused, not made");
        drop((b, c));
        // One thread at a time: the same client over and over, nothing more made.
        let one = memory_pool(4);
        for _ in 0..10 {
            let mut client = one.get();
            client
                .lock("r", Millis(1_000))
                .unwrap()
                .expect("free")
                .unlock();
        }
        assert_eq!((one.made(), one.max_size()), (1, 4));
    }

    #[test]
    fn a_client_that_could_not_be_made_is_not_counted() {
        let made = memory_pool(1).make;
        let fail_once = AtomicBool::new(true);
        let pool = RedlockPool::new(1, move || {
            assert!(
                !fail_once.swap(false, Ordering::SeqCst),
                "the first make fails"
            );
            made()
        });
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pool.get()));
        assert!(panicked.is_err());
        assert_eq!(pool.made(), 0, "the failed make gave its place back");
        assert!(pool.try_get().is_some(), "and the next one took it");
    }

    #[test]
    fn a_thread_waits_for_a_client_to_come_back_when_the_pool_is_full() {
        let pool = memory_pool(1);
        let held = pool.get();
        let barrier = Barrier::new(2);
        let put_back = AtomicBool::new(false);
        thread::scope(|scope| {
            let waiter = scope.spawn(|| {
                barrier.wait();
                let mut client = pool.get();
                assert!(
                    put_back.load(Ordering::SeqCst),
                    "handed out a checked-out client"
                );
                client.lock("r", Millis(1_000)).unwrap().is_some()
            });
            barrier.wait();
            thread::sleep(std::time::Duration::from_millis(20));
            put_back.store(true, Ordering::SeqCst);
            drop(held);
            assert!(waiter.join().unwrap(), "got the client back and the lock");
        });
        assert_eq!(pool.made(), 1);
    }

    #[test]
    fn threads_sharing_a_pool_never_hold_the_lock_together() {
        let pool = memory_pool(3);
        let inside = AtomicUsize::new(0);
        let sections = AtomicUsize::new(0);
        thread::scope(|scope| {
            for _ in 0..6 {
                scope.spawn(|| {
                    for _ in 0..50 {
                        let mut client = pool.get();
                        if let Some(guard) = client.lock("r", Millis(1_000)).unwrap() {
                            assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0, "overlap");
                            sections.fetch_add(1, Ordering::Relaxed);
                            inside.fetch_sub(1, Ordering::SeqCst);
                            guard.unlock();
                        }
                    }
                });
            }
        });
        assert!(pool.made() <= 3);
        assert!(sections.load(Ordering::Relaxed) > 0);
    }

    #[test]
    fn a_guard_is_released_from_another_thread() {
        let pool = memory_pool(2);
        let mut client = pool.get();
        thread::scope(|scope| {
            let guard = scope
                .spawn(|| client.lock("r", Millis(1_000)).unwrap().expect("free"))
                .join()
                .unwrap();
            let released = scope.spawn(move || guard.unlock()).join().unwrap();
            assert_eq!(released.applied.len(), 3);
        });
        drop(client);
        assert!(pool.get().lock("r", Millis(1_000)).unwrap().is_some());
    }
}
