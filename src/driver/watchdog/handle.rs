//! [`Watchdog`]: the thread, its shared state, and the stop protocol.
//!
//! One mutex guards everything the thread and its owner share: the extender, the stop flag,
//! the schedule's progress and the loss. The thread holds it from the moment it reads the stop
//! flag until its extension round has ended, so "stop" and "extend" are totally ordered: either
//! the round finished before the stop flag was set, or it never starts. The owner waits on the
//! condition variable until the thread has said it is leaving, and only then takes the
//! extender back to release it. The extender itself lives inside the mutex, so once the owner
//! has taken it the thread cannot reach it at all. Two atomics mirror what a caller may want to read without
//! waiting for a round in flight: the loss flag and the deadline.

use std::marker::PhantomData;

use super::schedule::{Next, OnLost, Progress, Schedule};
use super::{Extendable, Loss, LossReason, Timer, WatchdogConfig};
use crate::driver::observe::{self, LossKind};
use crate::sync::{Arc, AtomicBool, AtomicU64, Condvar, Mutex, MutexGuard, Ordering, thread};
use crate::time::Millis;

/// A thread that keeps a held lock extended, and the handle to stop it.
///
/// Created by [`Watchdog::spawn`] (an owned extender, a detached thread joined on stop) or
/// [`Watchdog::spawn_scoped`] (a borrowed one, such as the blocking client's
/// [`Guard`](crate::driver::Guard), through [`Guard::watch`](crate::driver::Guard::watch)).
/// Dropping the handle stops the thread, then drops the extender (a guard then releases).
/// See the [module docs](super) for an example.
///
/// `'scope` is the scope of a scoped watchdog's thread (`'static` for [`spawn`](Watchdog::spawn)).
/// It keeps the handle inside that scope: the scope joins the thread, and the thread leaves only
/// when the handle stops it, so a handle returned out of the scope would hang it. (Leaking the
/// handle with `mem::forget` hangs the scope the same way, and leaves a `spawn`ed thread running.)
///
/// ```compile_fail
/// # use rand_chacha::ChaCha20Rng;
/// # use rand_core::SeedableRng;
/// # use redlock_lab::driver::watchdog::WatchdogConfig;
/// # use redlock_lab::driver::{ManualClock, MemoryNode, Redlock};
/// # use redlock_lab::proto::Config;
/// # use redlock_lab::time::Millis;
/// # let clock = ManualClock::new(Millis(0));
/// # let nodes = (0..3).map(|_| MemoryNode::new(clock.clone())).collect();
/// # let mut redlock = Redlock::new(nodes, Config::new(3), clock.clone(), ChaCha20Rng::seed_from_u64(7)).unwrap();
/// let guard = redlock.lock("orders", Millis(3_000)).unwrap().unwrap();
/// // error: the handle cannot outlive the scope whose thread it stops
/// let escaped = std::thread::scope(|scope| guard.watch(scope, WatchdogConfig::new()));
/// ```
pub struct Watchdog<'scope, E: Extendable, T: Timer> {
    shared: Arc<Shared<E, T>>,
    thread: Option<thread::JoinHandle<()>>,
    scope: PhantomData<&'scope ()>,
}

struct Shared<E, T> {
    state: Mutex<State<E>>,
    /// Signalled on every change to `state`: stop, wake-up requests, the thread leaving.
    changed: Condvar,
    /// Set once, under `state`'s lock, before anyone is told.
    lost: AtomicBool,
    /// The deadline of the last lease the thread saw, in milliseconds.
    deadline_ms: AtomicU64,
    timer: T,
    schedule: Schedule,
}

struct State<E> {
    /// Taken back by [`Watchdog::halt`] once the thread has left.
    extender: Option<E>,
    progress: Progress,
    stop: bool,
    /// The thread has not yet left its loop; cleared on every exit path, panics included.
    running: bool,
    /// Wake-up requests made by [`Watchdog::check_now`], and how many the thread has served.
    requested: u64,
    served: u64,
    loss: Option<Loss>,
    on_lost: Option<OnLost>,
}

impl<E: Extendable, T: Timer> Watchdog<'static, E, T> {
    /// Starts watching `extender` on a new thread that reads `timer`.
    pub fn spawn(extender: E, timer: T, config: WatchdogConfig) -> Watchdog<'static, E, T>
    where
        E: Send + 'static,
        T: Send + Sync + 'static,
    {
        let shared = Shared::new(extender, timer, config);
        let thread_shared = Arc::clone(&shared);
        let thread = thread::spawn(move || run(&thread_shared));
        Watchdog {
            shared,
            thread: Some(thread),
            scope: PhantomData,
        }
    }
}

impl<'scope, E: Extendable, T: Timer> Watchdog<'scope, E, T> {
    /// Starts watching a borrowed `extender` on a thread of `scope`. The scope joins the thread;
    /// [`stop`](Watchdog::stop) still waits until it has left its loop.
    ///
    /// Not available under `--cfg redlock_loom`: loom has no scoped threads. The loop and the
    /// stop protocol are the same code as [`spawn`](Watchdog::spawn)'s.
    #[cfg(not(redlock_loom))]
    pub fn spawn_scoped(
        scope: &'scope thread::Scope<'scope, '_>,
        extender: E,
        timer: T,
        config: WatchdogConfig,
    ) -> Watchdog<'scope, E, T>
    where
        E: Send + 'scope,
        T: Send + Sync + 'scope,
    {
        let shared = Shared::new(extender, timer, config);
        let thread_shared = Arc::clone(&shared);
        scope.spawn(move || run(&thread_shared));
        Watchdog {
            shared,
            thread: None,
            scope: PhantomData,
        }
    }

    /// Whether the watchdog has given the lock up (see [`lost`](Watchdog::lost) for why).
    /// Never blocks.
    pub fn is_lost(&self) -> bool {
        self.shared.lost.load(Ordering::SeqCst)
    }

    /// Whether the caller may still act as the holder: not lost, and the clock is before the
    /// last known deadline. Turns false at the deadline even if the watchdog thread is late.
    /// Never blocks.
    pub fn is_valid(&self) -> bool {
        !self.is_lost() && self.shared.timer.now() < self.deadline()
    }

    /// The deadline of the last lease the watchdog saw. Never blocks.
    pub fn deadline(&self) -> Millis {
        Millis(self.shared.deadline_ms.load(Ordering::SeqCst))
    }

    /// Why the lock was lost, if it was. Waits for an extension round in flight.
    pub fn lost(&self) -> Option<Loss> {
        self.shared.lock().loss
    }

    /// Lends the extender (the guard, say) to `inspect`. Waits for an extension round in
    /// flight, and holds the watchdog up while `inspect` runs.
    pub fn with<R>(&self, inspect: impl FnOnce(&E) -> R) -> R {
        let state = self.shared.lock();
        // Present until `halt`, which consumes or drops the handle.
        inspect(
            state
                .extender
                .as_ref()
                .expect("the extender is present until stop"),
        )
    }

    /// Makes the watchdog act on the timer's current reading, and returns once it has (or has
    /// left). With a [`ManualClock`](crate::driver::ManualClock), which never wakes it by
    /// itself, this is how a test moves it; with a real clock it is a prompt check.
    pub fn check_now(&self) {
        let mut state = self.shared.lock();
        state.requested += 1;
        let ticket = state.requested;
        self.shared.changed.notify_all();
        while state.running && state.served < ticket {
            state = self.shared.wait(state);
        }
    }

    /// Stops the watchdog and hands the extender back. When this returns, the thread has left
    /// and will never extend again; a round in flight when it was called has finished.
    pub fn stop(mut self) -> E {
        // `halt` returns `None` only when called twice, and `self` is consumed here; `Drop`
        // then finds the extender gone and has nothing left to do.
        self.halt().expect("the extender is taken only once")
    }

    /// Stops the watchdog, then releases the lock: no extension is ever sent after the
    /// release begins.
    pub fn unlock(self) -> E::Released {
        self.stop().release()
    }

    /// The stop protocol: raise the flag under the lock, wait for the thread to leave, take the
    /// extender back, join.
    fn halt(&mut self) -> Option<E> {
        let mut state = self.shared.lock();
        state.stop = true;
        self.shared.changed.notify_all();
        while state.running {
            state = self.shared.wait(state);
        }
        let extender = state.extender.take();
        drop(state);
        if let Some(thread) = self.thread.take() {
            // A panic on the thread was already reported as a loss by its exit guard.
            let _ = thread.join();
        }
        extender
    }
}

impl<E: Extendable, T: Timer> Drop for Watchdog<'_, E, T> {
    fn drop(&mut self) {
        // Stop first, then let the extender go: a guard releases on drop, and that release
        // must not race an extension.
        drop(self.halt());
    }
}

impl<E: Extendable, T: Timer> std::fmt::Debug for Watchdog<'_, E, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watchdog")
            .field("lost", &self.is_lost())
            .field("deadline", &self.deadline())
            .finish_non_exhaustive()
    }
}

impl<E: Extendable, T: Timer> Shared<E, T> {
    fn new(extender: E, timer: T, config: WatchdogConfig) -> Arc<Shared<E, T>> {
        let schedule = config.schedule(extender.ttl());
        let deadline = extender.deadline();
        Arc::new(Shared {
            state: Mutex::new(State {
                progress: schedule.start(deadline),
                extender: Some(extender),
                stop: false,
                running: true,
                requested: 0,
                served: 0,
                loss: None,
                on_lost: config.into_on_lost(),
            }),
            changed: Condvar::new(),
            lost: AtomicBool::new(false),
            deadline_ms: AtomicU64::new(deadline.as_u64()),
            timer,
            schedule,
        })
    }

    /// The state, also after a panic on the watchdog thread poisoned the mutex: every field
    /// is consistent between statements, and the exit guard reports the panic as a loss.
    fn lock(&self) -> MutexGuard<'_, State<E>> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn wait<'a>(&self, state: MutexGuard<'a, State<E>>) -> MutexGuard<'a, State<E>> {
        self.changed
            .wait(state)
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Waits until notified, or until the timer says `until` has come.
    fn wait_until<'a>(
        &self,
        state: MutexGuard<'a, State<E>>,
        until: Millis,
    ) -> MutexGuard<'a, State<E>> {
        match self.timer.wait_span(until) {
            Some(span) => match self.changed.wait_timeout(state, span) {
                Ok((state, _)) => state,
                Err(poisoned) => poisoned.into_inner().0,
            },
            None => self.wait(state),
        }
    }

    /// Records the loss and raises the flag; returns the callback for the caller to run once
    /// the lock is released.
    fn mark_lost(
        &self,
        state: &mut State<E>,
        reason: LossReason,
        at: Millis,
    ) -> Option<LossNotice> {
        let loss = Loss {
            reason,
            deadline: Millis(self.deadline_ms.load(Ordering::SeqCst)),
            at,
        };
        state.loss = Some(loss);
        self.lost.store(true, Ordering::SeqCst);
        // Here, not in `LossNotice`: a loss is counted whether or not the caller set a callback.
        let kind = match reason {
            LossReason::Refused { .. } => LossKind::Refused,
            LossReason::DeadlinePassed { .. } => LossKind::DeadlinePassed,
            LossReason::Panicked => LossKind::Panicked,
        };
        observe::lease_lost(kind, loss.deadline, at);
        state
            .on_lost
            .take()
            .map(|on_lost| LossNotice { on_lost, loss })
    }
}

/// A loss to pass to the caller's callback, outside the lock.
struct LossNotice {
    on_lost: OnLost,
    loss: Loss,
}

impl LossNotice {
    fn deliver(self) {
        (self.on_lost)(self.loss);
    }
}

/// The watchdog thread's loop.
fn run<E: Extendable, T: Timer>(shared: &Shared<E, T>) {
    let exit = Exit { shared };
    let mut state = shared.lock();
    let notice = loop {
        // From here to the end of the round the lock is held: a stop cannot slip in between
        // the check and the extension.
        if state.stop {
            break None;
        }
        let ticket = state.requested;
        let now = shared.timer.now();
        let state_ref = &mut *state;
        let Some(extender) = state_ref.extender.as_mut() else {
            break None;
        };
        match shared
            .schedule
            .next(&state_ref.progress, extender.deadline(), now)
        {
            Next::Wait { until } => {
                state.served = ticket;
                shared.changed.notify_all();
                state = shared.wait_until(state, until);
            }
            Next::Extend => {
                let outcome = extender.extend();
                let finished = shared.timer.now();
                shared
                    .deadline_ms
                    .store(extender.deadline().as_u64(), Ordering::SeqCst);
                let reason =
                    shared
                        .schedule
                        .record(&mut state_ref.progress, outcome, now, finished);
                if let Some(reason) = reason {
                    break shared.mark_lost(state_ref, reason, finished);
                }
            }
            Next::Lost(reason) => break shared.mark_lost(state_ref, reason, now),
        }
    };
    // Callers of `check_now` now wait for `running` to clear, which happens after the callback:
    // when `check_now` returns, the caller has been told.
    drop(state);
    // The callback runs without the lock, so it may read the watchdog; the loss is already
    // visible to `is_lost` and `lost`, and `stop` still waits for it to return.
    if let Some(notice) = notice {
        notice.deliver();
    }
    drop(exit);
}

/// Clears `running` when the thread leaves, however it leaves. On a panic (the extender's),
/// it reports the lock as lost first: a watchdog must not die silently.
struct Exit<'a, E: Extendable, T: Timer> {
    shared: &'a Shared<E, T>,
}

impl<E: Extendable, T: Timer> Drop for Exit<'_, E, T> {
    fn drop(&mut self) {
        let shared = self.shared;
        if std::thread::panicking() {
            let mut state = shared.lock();
            let notice = if state.loss.is_none() {
                let at = shared.timer.now();
                shared.mark_lost(&mut state, LossReason::Panicked, at)
            } else {
                None
            };
            drop(state);
            // As on the normal path: the caller is told before `running` clears, so a
            // `check_now` that returns has seen the callback run.
            if let Some(notice) = notice {
                notice.deliver();
            }
        }
        let mut state = shared.lock();
        state.running = false;
        shared.changed.notify_all();
    }
}
