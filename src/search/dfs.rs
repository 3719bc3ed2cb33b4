//! Depth first on every core over a table of fingerprints: the safety run's engine.
//!
//! It explores the same states, checks the same `always` and `sometimes` properties and
//! counts the same unique states as stateright's depth-first checker, with three differences
//! that matter at a few million states:
//!
//! - A pending state carries its fingerprint and depth, not the path of action indices that
//!   led to it (stateright copies that vector for every new state). A counterexample is
//!   rebuilt afterwards from the table, which keeps each state's parent: follow the parents
//!   back to an initial state, then replay the model forward, at each step taking the
//!   successor with the next fingerprint.
//! - The table takes inserts from every thread without a lock, and each thread touches all
//!   of a state's successors' slots before inserting any, so their cache misses overlap
//!   (see `visited.rs`).
//! - Threads share work only when one of them is idle: a busy thread then hands over the
//!   oldest half of its stack (the states nearest the root, which have the most below them).
//!
//! The verdicts do not depend on the number of threads, or on the order in which states are
//! met: every reachable state is visited once (unless every property is settled first), and a
//! property is discovered when a visited state breaks (`always`) or meets (`sometimes`) it.

use std::hash::Hash;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use stateright::{Expectation, Model, Path, Property};

use super::visited::{Fingerprint, Padded, Table};

/// The parent recorded for an initial state.
const ROOT: Fingerprint = 0;

/// Fixed seeds: a fingerprint must not change between runs, or a run's states could not be
/// found again by the replay that rebuilds a counterexample in another process.
fn hasher() -> ahash::RandomState {
    ahash::RandomState::with_seeds(
        0x243f_6a88_85a3_08d3,
        0x1319_8a2e_0370_7344,
        0xa409_3822_299f_31d0,
        0x082e_fa98_ec4e_6c89,
    )
}

/// The fingerprint of `state` (0 is kept for [`ROOT`] and the table's empty slots).
fn fingerprint<S: Hash>(hasher: &ahash::RandomState, state: &S) -> Fingerprint {
    hasher.hash_one(state).max(1)
}

/// A depth-first exploration running on its threads.
pub(crate) struct DepthFirst<M: Model> {
    shared: Arc<Shared<M>>,
    handles: Vec<JoinHandle<()>>,
}

/// What a finished exploration found.
pub(crate) struct Finished<M: Model> {
    shared: Arc<Shared<M>>,
    /// Unique states visited, the initial ones included.
    pub(crate) unique_states: usize,
    /// The deepest state visited (an initial state has depth 1, as in stateright).
    pub(crate) max_depth: usize,
}

/// A state waiting to be visited.
struct Job<S> {
    state: S,
    fingerprint: Fingerprint,
    depth: u32,
}

/// What the threads share.
struct Shared<M: Model> {
    model: M,
    properties: Vec<Property<M>>,
    hasher: ahash::RandomState,
    table: Table,
    threads: usize,
    /// Initial states (unique, within the boundary).
    roots: usize,
    /// Work handed over by busy threads, and the count of threads waiting for some.
    pool: Mutex<Pool<M::State>>,
    /// Signalled when work is added to the pool or the exploration ends.
    wake: Condvar,
    /// Threads waiting in [`Shared::take_work`]: a busy thread hands work over when it is > 0.
    hungry: AtomicUsize,
    /// Set when the exploration ends early (every property discovered).
    done: AtomicBool,
    /// Bit `i`: property `i` has been discovered.
    discovered: AtomicU64,
    /// Per property: the fingerprint of the first state found breaking (or meeting) it.
    discoveries: Mutex<Vec<Option<Fingerprint>>>,
    /// Per thread, padded: unique states it added, and the deepest state it visited.
    counters: Box<[Padded<Counters>]>,
}

struct Pool<S> {
    jobs: Vec<Job<S>>,
    waiting: usize,
    finished: bool,
}

#[derive(Default)]
struct Counters {
    unique: AtomicUsize,
    max_depth: AtomicUsize,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking thread leaves plain data behind; its panic is re-raised by `join`.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<M> DepthFirst<M>
where
    M: Model + Send + Sync + 'static,
    M::State: Hash + Clone + PartialEq + Send,
    M::Action: Clone + PartialEq,
{
    /// Starts exploring `model` from its initial states on `threads` threads.
    ///
    /// # Panics
    /// If the model has an `eventually` property (judged at terminal states, which this
    /// engine does not track) or more than 64 properties.
    pub(crate) fn spawn(model: M, threads: usize) -> DepthFirst<M> {
        let properties = model.properties();
        assert!(properties.len() <= 64, "at most 64 properties");
        assert!(
            properties
                .iter()
                .all(|p| p.expectation != Expectation::Eventually),
            "depth first checks `always` and `sometimes` properties only"
        );
        let threads = threads.max(1);
        let hasher = hasher();
        let table = Table::new(threads);
        let mut roots = Vec::new();
        let mut handle = table.handle(0);
        handle.enter(&table);
        for state in model.init_states() {
            if !model.within_boundary(&state) {
                continue;
            }
            let fingerprint = fingerprint(&hasher, &state);
            if handle.insert(&table, fingerprint, ROOT) {
                roots.push(Job {
                    state,
                    fingerprint,
                    depth: 1,
                });
            }
        }
        handle.leave(&table);
        let counters: Box<[Padded<Counters>]> = (0..threads).map(|_| Padded::default()).collect();
        let shared = Arc::new(Shared {
            roots: roots.len(),
            discoveries: Mutex::new(vec![None; properties.len()]),
            model,
            properties,
            hasher,
            table,
            threads,
            pool: Mutex::new(Pool {
                jobs: roots,
                waiting: 0,
                finished: false,
            }),
            wake: Condvar::new(),
            hungry: AtomicUsize::new(0),
            done: AtomicBool::new(false),
            discovered: AtomicU64::new(0),
            counters,
        });
        let handles = (0..threads)
            .map(|index| {
                let shared = Arc::clone(&shared);
                std::thread::Builder::new()
                    .name(format!("checker-{index}"))
                    .spawn(move || shared.work(index))
                    .expect("the checker can start its threads")
            })
            .collect();
        DepthFirst { shared, handles }
    }

    /// Whether every thread has finished.
    pub(crate) fn is_done(&self) -> bool {
        self.handles.iter().all(JoinHandle::is_finished)
    }

    /// Unique states so far.
    pub(crate) fn unique_state_count(&self) -> usize {
        self.shared.unique_state_count()
    }

    /// Waits for the threads (re-raising a thread's panic) and returns what they found.
    pub(crate) fn join(self) -> Finished<M> {
        for handle in self.handles {
            if let Err(panic) = handle.join() {
                std::panic::resume_unwind(panic);
            }
        }
        let shared = self.shared;
        Finished {
            unique_states: shared.unique_state_count(),
            max_depth: shared
                .counters
                .iter()
                .map(|c| c.0.max_depth.load(Ordering::Relaxed))
                .max()
                .unwrap_or(0),
            shared,
        }
    }
}

impl<M> Finished<M>
where
    M: Model + Send + Sync + 'static,
    M::State: Hash + Clone + PartialEq + Send,
    M::Action: Clone + PartialEq,
{
    /// The model explored.
    pub(crate) fn model(&self) -> &M {
        &self.shared.model
    }

    /// The path to the first state found breaking (`always`) or meeting (`sometimes`) the
    /// property `name`, if one was found.
    pub(crate) fn discovery(&self, name: &str) -> Option<Path<M::State, M::Action>> {
        let shared = &self.shared;
        let index = shared.properties.iter().position(|p| p.name == name)?;
        let target = lock(&shared.discoveries)[index]?;
        Some(shared.path_to(target))
    }
}

impl<M> Shared<M>
where
    M: Model + Send + Sync + 'static,
    M::State: Hash + Clone + PartialEq + Send,
    M::Action: Clone + PartialEq,
{
    fn unique_state_count(&self) -> usize {
        self.roots
            + self
                .counters
                .iter()
                .map(|c| c.0.unique.load(Ordering::Relaxed))
                .sum::<usize>()
    }

    /// One thread's loop: visit states from its own stack, take work from the pool when the
    /// stack is empty, and hand the oldest half over when another thread is hungry.
    fn work(&self, index: usize) {
        let counters = &self.counters[index].0;
        let all = if self.properties.len() == 64 {
            u64::MAX
        } else {
            (1 << self.properties.len()) - 1
        };
        let mut stack: Vec<Job<M::State>> = Vec::new();
        let mut actions = Vec::new();
        let mut successors: Vec<Job<M::State>> = Vec::new();
        let mut known: Vec<bool> = Vec::new();
        let mut handle = self.table.handle(index);
        let mut unique = 0;
        let mut max_depth = 0;
        loop {
            let Some(job) = stack.pop() else {
                counters.unique.store(unique, Ordering::Relaxed);
                match self.take_work() {
                    Some(jobs) => {
                        stack = jobs;
                        continue;
                    }
                    None => break,
                }
            };
            if job.depth as usize > max_depth {
                max_depth = job.depth as usize;
                counters.max_depth.store(max_depth, Ordering::Relaxed);
            }
            self.check_properties(&job);
            if self.discovered.load(Ordering::Relaxed) == all {
                // Every property settled: nothing left to learn.
                self.finish();
                break;
            }
            self.expand(&job, &mut actions, &mut successors);
            // Touch every successor's slot before inserting any: the cache misses overlap.
            handle.enter(&self.table);
            known.clear();
            known.extend(successors.iter().map(|s| handle.touch(s.fingerprint)));
            for (next, known) in successors.drain(..).zip(&known) {
                if !known && handle.insert(&self.table, next.fingerprint, job.fingerprint) {
                    unique += 1;
                    stack.push(next);
                }
            }
            handle.leave(&self.table);
            if unique % 1024 == 0 {
                counters.unique.store(unique, Ordering::Relaxed);
            }
            if stack.len() >= 2 && self.hungry.load(Ordering::Relaxed) > 0 {
                self.share(&mut stack);
            }
        }
        counters.unique.store(unique, Ordering::Relaxed);
    }

    /// Checks every property not yet discovered against `job`'s state.
    fn check_properties(&self, job: &Job<M::State>) {
        let discovered = self.discovered.load(Ordering::Relaxed);
        for (i, property) in self.properties.iter().enumerate() {
            if discovered & (1 << i) != 0 {
                continue;
            }
            let holds = (property.condition)(&self.model, &job.state);
            let found = match property.expectation {
                Expectation::Always => !holds,
                Expectation::Sometimes => holds,
                Expectation::Eventually => unreachable!("refused by `spawn`"),
            };
            if found {
                self.discover(i, job.fingerprint);
            }
        }
    }

    /// `job`'s successors within the boundary, fingerprinted, onto `successors` (`actions` is
    /// scratch space).
    fn expand(
        &self,
        job: &Job<M::State>,
        actions: &mut Vec<M::Action>,
        successors: &mut Vec<Job<M::State>>,
    ) {
        self.model.actions(&job.state, actions);
        for action in actions.drain(..) {
            let Some(next) = self.model.next_state(&job.state, action) else {
                continue;
            };
            if !self.model.within_boundary(&next) {
                continue;
            }
            successors.push(Job {
                fingerprint: fingerprint(&self.hasher, &next),
                state: next,
                depth: job.depth + 1,
            });
        }
    }

    fn discover(&self, property: usize, state: Fingerprint) {
        let mut discoveries = lock(&self.discoveries);
        // Races other threads: the first one wins, any one is a real counterexample.
        if discoveries[property].is_none() {
            discoveries[property] = Some(state);
            self.discovered.fetch_or(1 << property, Ordering::Relaxed);
        }
    }

    /// Hands the oldest half of `stack` to the pool and wakes the hungry threads.
    fn share(&self, stack: &mut Vec<Job<M::State>>) {
        let half = stack.len() / 2;
        let mut pool = lock(&self.pool);
        pool.jobs.extend(stack.drain(..half));
        drop(pool);
        self.wake.notify_all();
    }

    /// Work from the pool, waiting while it is empty; `None` once every thread is waiting
    /// (nothing is left anywhere) or the exploration has finished.
    fn take_work(&self) -> Option<Vec<Job<M::State>>> {
        let mut pool = lock(&self.pool);
        loop {
            if pool.finished || self.done.load(Ordering::Relaxed) {
                return None;
            }
            if !pool.jobs.is_empty() {
                // Leave some for the other waiting threads.
                let keep = pool.jobs.len() * pool.waiting / (pool.waiting + 1);
                return Some(pool.jobs.split_off(keep));
            }
            pool.waiting += 1;
            if pool.waiting == self.threads {
                // Every thread is here and the pool is empty: the exploration is over.
                pool.finished = true;
                drop(pool);
                self.wake.notify_all();
                return None;
            }
            self.hungry.fetch_add(1, Ordering::Relaxed);
            pool = self.wake.wait(pool).unwrap_or_else(PoisonError::into_inner);
            self.hungry.fetch_sub(1, Ordering::Relaxed);
            pool.waiting -= 1;
        }
    }

    fn finish(&self) {
        self.done.store(true, Ordering::Relaxed);
        let mut pool = lock(&self.pool);
        pool.finished = true;
        drop(pool);
        self.wake.notify_all();
    }

    /// The path from an initial state to the state with fingerprint `target`: the parents
    /// from the table, then a replay that picks, at each step, the successor with the next
    /// fingerprint (any state with a fingerprint has successors with every fingerprint its
    /// first-found representative had, since the fingerprint is of the canonical view).
    fn path_to(&self, target: Fingerprint) -> Path<M::State, M::Action> {
        let mut chain = vec![target];
        let mut at = target;
        loop {
            let parent = self
                .table
                .parent(at)
                .expect("every discovered state is in the table");
            if parent == ROOT {
                break;
            }
            chain.push(parent);
            at = parent;
        }
        chain.reverse();
        let model = &self.model;
        let init = model
            .init_states()
            .into_iter()
            .find(|s| fingerprint(&self.hasher, s) == chain[0])
            .expect("the chain starts at an initial state");
        let mut state = init.clone();
        let mut steps = Vec::with_capacity(chain.len());
        for &next in &chain[1..] {
            let (action, successor) = model
                .next_steps(&state)
                .into_iter()
                .find(|(_, s)| model.within_boundary(s) && fingerprint(&self.hasher, s) == next)
                .expect("a state has a successor with each fingerprint its representative had");
            steps.push(action);
            state = successor;
        }
        Path::from_actions(model, init, &steps).expect("the replayed steps are the model's")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A grid walk: from (0, 0), step right or up while below `size`; `always` x + y < limit,
    /// `sometimes` x == y == size.
    struct Grid {
        size: u16,
        limit: u16,
    }

    impl Model for Grid {
        type State = (u16, u16);
        type Action = bool;

        fn init_states(&self) -> Vec<(u16, u16)> {
            vec![(0, 0)]
        }

        fn actions(&self, state: &(u16, u16), actions: &mut Vec<bool>) {
            if state.0 < self.size {
                actions.push(true);
            }
            if state.1 < self.size {
                actions.push(false);
            }
        }

        fn next_state(&self, &(x, y): &(u16, u16), right: bool) -> Option<(u16, u16)> {
            Some(if right { (x + 1, y) } else { (x, y + 1) })
        }

        fn properties(&self) -> Vec<Property<Self>> {
            vec![
                Property::always("below the limit", |m: &Grid, s: &(u16, u16)| {
                    s.0 + s.1 < m.limit
                }),
                Property::sometimes("the far corner", |m: &Grid, s: &(u16, u16)| {
                    s.0 == m.size && s.1 == m.size
                }),
            ]
        }
    }

    #[test]
    fn every_state_is_visited_once_on_any_number_of_threads() {
        for threads in [1, 2, 4] {
            let run = DepthFirst::spawn(
                Grid {
                    size: 300,
                    limit: u16::MAX,
                },
                threads,
            )
            .join();
            assert_eq!(run.unique_states, 301 * 301, "{threads} threads");
            assert_eq!(run.max_depth, 601);
            assert!(run.discovery("below the limit").is_none());
            let corner = run.discovery("the far corner").expect("reached");
            assert_eq!(corner.last_state(), &(300, 300));
            assert_eq!(corner.into_actions().len(), 600);
        }
    }

    #[test]
    fn a_violation_comes_with_a_path_the_model_can_replay() {
        for threads in [1, 2] {
            let run = DepthFirst::spawn(
                Grid {
                    size: 50,
                    limit: 30,
                },
                threads,
            )
            .join();
            let path = run.discovery("below the limit").expect("violated");
            let (x, y) = *path.last_state();
            assert_eq!(x + y, 30);
            assert_eq!(path.into_actions().len(), 30);
        }
    }
}
