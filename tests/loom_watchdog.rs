//! loom models of the watchdog's thread protocol: every interleaving of the watchdog thread
//! against its owner, under the C11 memory model as loom explores it.
//!
//! Run with
//! `RUSTFLAGS="--cfg redlock_loom" CARGO_TARGET_DIR=target/loom cargo test --release --test loom_watchdog`
//! (`scripts/test` does). A failing model prints the interleaving; `LOOM_LOG=trace LOOM_LOCATION=1`
//! with the same command shows every step.
//!
//! What is proven, for the real `Watchdog` (the crate's code, built on loom's types through the
//! `sync` shim):
//! - (a) no extension is ever issued once the release has begun, whether the owner unlocks or
//!   drops the handle, and however the first extension races it;
//! - (b) a failed extension always reaches the caller: the callback runs exactly once per loss
//!   and `is_lost` is true, also when `stop` races the failure;
//! - (c) `stop` and `check_now` never deadlock with an extension in flight (loom fails a model
//!   in which every thread is blocked), and an extension in flight has ended when `stop`
//!   returns.
//!
//! And that the detectors can fail: a naive watchdog that checks a stop flag and then extends
//! (Redisson#5698), and one that swallows a failure when a stop is pending, are both caught.
//!
//! What loom cannot show: real time. loom has no clock and its `Condvar::wait_timeout` never
//! times out, so the fake clock here is a loom atomic that only the owner moves, and the
//! watchdog learns of it through `check_now` (the same path a `ManualClock` takes). The
//! timed wait of a real clock is the same condition-variable wait with a timeout.
#![cfg(redlock_loom)]

use loom::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use loom::sync::{Arc, Mutex};
use loom::thread;
use redlock_lab::driver::Clock;
use redlock_lab::driver::watchdog::{
    ExtendOutcome, Extendable, LossReason, Timer, Watchdog, WatchdogConfig,
};
use redlock_lab::proto::Failure;
use redlock_lab::time::Millis;

const SENT_AFTER_UNLOCK: &str = "an extension was sent after unlock began";
const TTL: Millis = Millis(30);
const NO_QUORUM: Failure = Failure::NoQuorum {
    applied: 1,
    quorum: 2,
};

/// A clock that only the model's owner thread moves; the watchdog waits for wake-ups.
#[derive(Clone)]
struct FakeClock(Arc<AtomicU64>);

impl FakeClock {
    fn at(reading: u64) -> FakeClock {
        FakeClock(Arc::new(AtomicU64::new(reading)))
    }

    fn set(&self, reading: u64) {
        self.0.store(reading, Ordering::SeqCst);
    }
}

impl Clock for FakeClock {
    fn now(&self) -> Millis {
        Millis(self.0.load(Ordering::SeqCst))
    }

    fn sleep_until(&self, deadline: Millis) {
        self.0.fetch_max(deadline.as_u64(), Ordering::SeqCst);
    }
}

impl Timer for FakeClock {
    fn wait_span(&self, _until: Millis) -> Option<std::time::Duration> {
        None
    }
}

/// What the fake lock saw, in loom atomics so every access is an explored step.
#[derive(Default)]
struct Log {
    extensions: AtomicUsize,
    after_release: AtomicUsize,
    releasing: AtomicBool,
    in_flight: AtomicBool,
    told: AtomicUsize,
}

#[derive(Clone, Copy)]
enum Behaviour {
    Succeed,
    Refuse,
    Inconclusive,
}

/// A lock on no nodes: extending it records the call and answers as scripted.
struct FakeLock {
    log: Arc<Log>,
    clock: FakeClock,
    deadline: Millis,
    behaviour: Behaviour,
    released: bool,
}

impl FakeLock {
    /// A lease taken at `acquired_at` (deadline one TTL minus 1 ms of drift later).
    fn new(log: &Arc<Log>, clock: &FakeClock, acquired_at: u64, behaviour: Behaviour) -> Self {
        FakeLock {
            log: Arc::clone(log),
            clock: clock.clone(),
            deadline: Millis(acquired_at) + TTL - Millis(1),
            behaviour,
            released: false,
        }
    }

    fn extend_now(&mut self) -> ExtendOutcome {
        let log = &self.log;
        if log.releasing.load(Ordering::SeqCst) {
            log.after_release.fetch_add(1, Ordering::SeqCst);
            panic!("{SENT_AFTER_UNLOCK}");
        }
        log.in_flight.store(true, Ordering::SeqCst);
        log.extensions.fetch_add(1, Ordering::SeqCst);
        // The round takes time: let the owner act in the middle of it.
        thread::yield_now();
        log.in_flight.store(false, Ordering::SeqCst);
        match self.behaviour {
            Behaviour::Succeed => {
                self.deadline = self.clock.now() + TTL - Millis(1);
                ExtendOutcome::Extended
            }
            Behaviour::Refuse => ExtendOutcome::Refused { failure: NO_QUORUM },
            Behaviour::Inconclusive => ExtendOutcome::Inconclusive { failure: NO_QUORUM },
        }
    }

    fn release_now(&mut self) {
        if !self.released {
            self.released = true;
            self.log.releasing.store(true, Ordering::SeqCst);
        }
    }
}

impl Extendable for FakeLock {
    type Released = ();

    fn extend(&mut self) -> ExtendOutcome {
        self.extend_now()
    }

    fn deadline(&self) -> Millis {
        self.deadline
    }

    fn ttl(&self) -> Millis {
        TTL
    }

    fn release(mut self) {
        self.release_now();
    }
}

/// Like the blocking guard, dropping the fake releases it.
impl Drop for FakeLock {
    fn drop(&mut self) {
        self.release_now();
    }
}

/// A config whose callback counts the losses it hears of.
fn counting(log: &Arc<Log>) -> WatchdogConfig {
    let log = Arc::clone(log);
    WatchdogConfig::new().on_lost(move |_| {
        log.told.fetch_add(1, Ordering::SeqCst);
    })
}

/// Checks `f` in every interleaving loom can produce and returns how many it ran.
///
/// No preemption bound: the models are small enough to explore exhaustively (all of them
/// together take well under a second in release). Every model starts its clock at 10 with a
/// lease taken at 0 (period 10), so the first extension is due at once and races whatever the
/// owner does first. Each test pins the count, as stateright tests pin state counts: a change
/// to the protocol that alters the explored space shows up, and a count of 1 would mean that
/// nothing raced.
fn explore(f: impl Fn() + Sync + Send + 'static) -> usize {
    let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&runs);
    loom::model::Builder::new().check(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        f();
    });
    runs.load(std::sync::atomic::Ordering::Relaxed)
}

// --- (a) no extension after unlock -------------------------------------------------------

#[test]
fn unlock_never_races_an_extension() {
    let runs = explore(|| {
        let clock = FakeClock::at(10);
        let log = Arc::new(Log::default());
        let lock = FakeLock::new(&log, &clock, 0, Behaviour::Succeed);
        let watchdog = Watchdog::spawn(lock, clock.clone(), WatchdogConfig::new());
        watchdog.unlock();
        assert!(log.releasing.load(Ordering::SeqCst));
        assert_eq!(log.after_release.load(Ordering::SeqCst), 0);
    });
    assert_eq!(runs, 10, "interleavings explored");
}

#[test]
fn dropping_the_handle_stops_before_the_drop_releases() {
    let runs = explore(|| {
        let clock = FakeClock::at(10);
        let log = Arc::new(Log::default());
        let lock = FakeLock::new(&log, &clock, 0, Behaviour::Succeed);
        drop(Watchdog::spawn(lock, clock.clone(), WatchdogConfig::new()));
        assert!(log.releasing.load(Ordering::SeqCst));
        assert_eq!(log.after_release.load(Ordering::SeqCst), 0);
    });
    assert_eq!(runs, 10, "interleavings explored");
}

#[test]
fn unlock_after_woken_extensions_never_races_the_next() {
    let runs = explore(|| {
        let clock = FakeClock::at(10);
        let log = Arc::new(Log::default());
        let lock = FakeLock::new(&log, &clock, 0, Behaviour::Succeed);
        let watchdog = Watchdog::spawn(lock, clock.clone(), WatchdogConfig::new());
        // The first extension (due at once) has run when `check_now` returns.
        watchdog.check_now();
        assert_eq!(log.extensions.load(Ordering::SeqCst), 1);
        assert!(watchdog.is_valid());
        // The next one is due at 20; move there, then unlock without waking the thread: the
        // wake-up from `stop` and the due extension race.
        clock.set(20);
        watchdog.unlock();
        assert_eq!(log.after_release.load(Ordering::SeqCst), 0);
        // A stop that wakes the thread is read before the extension that is due by then.
        assert_eq!(log.extensions.load(Ordering::SeqCst), 1);
    });
    assert_eq!(runs, 28, "interleavings explored");
}

// --- (b) a failure always reaches the caller ------------------------------------------------

#[test]
fn a_refused_extension_is_always_told() {
    let runs = explore(|| {
        let clock = FakeClock::at(10);
        let log = Arc::new(Log::default());
        let lock = FakeLock::new(&log, &clock, 0, Behaviour::Refuse);
        let watchdog = Watchdog::spawn(lock, clock.clone(), counting(&log));
        watchdog.check_now();
        // `check_now` returns only once the thread has acted, callback included.
        assert!(watchdog.is_lost());
        assert!(!watchdog.is_valid());
        assert_eq!(log.told.load(Ordering::SeqCst), 1);
        let loss = watchdog.lost().expect("the loss is recorded");
        assert_eq!(loss.reason, LossReason::Refused { failure: NO_QUORUM });
        watchdog.unlock();
        assert_eq!(log.told.load(Ordering::SeqCst), 1);
    });
    assert_eq!(runs, 7, "interleavings explored");
}

#[test]
fn a_failure_racing_stop_is_still_told() {
    let runs = explore(|| {
        let clock = FakeClock::at(10);
        let log = Arc::new(Log::default());
        let lock = FakeLock::new(&log, &clock, 0, Behaviour::Refuse);
        let watchdog = Watchdog::spawn(lock, clock.clone(), counting(&log));
        watchdog.unlock();
        // Either stop came first and nothing failed, or the failure was told, exactly once,
        // before `unlock` returned.
        assert_eq!(
            log.told.load(Ordering::SeqCst),
            log.extensions.load(Ordering::SeqCst)
        );
    });
    assert_eq!(runs, 10, "interleavings explored");
}

#[test]
fn inconclusive_extensions_are_told_at_the_deadline() {
    let runs = explore(|| {
        let clock = FakeClock::at(10);
        let log = Arc::new(Log::default());
        let lock = FakeLock::new(&log, &clock, 0, Behaviour::Inconclusive);
        let watchdog = Watchdog::spawn(lock, clock.clone(), counting(&log));
        watchdog.check_now();
        assert!(!watchdog.is_lost(), "an inconclusive round is retried");
        clock.set(29);
        watchdog.check_now();
        assert!(watchdog.is_lost());
        assert_eq!(log.told.load(Ordering::SeqCst), 1);
        assert_eq!(
            watchdog.lost().map(|loss| loss.reason),
            Some(LossReason::DeadlinePassed {
                attempts: 1,
                last_failure: Some(NO_QUORUM)
            })
        );
        watchdog.unlock();
    });
    assert_eq!(runs, 28, "interleavings explored");
}

// --- (c) no deadlock with an extension in flight ---------------------------------------------

#[test]
fn stop_waits_for_the_extension_in_flight() {
    let runs = explore(|| {
        let clock = FakeClock::at(10);
        let log = Arc::new(Log::default());
        let lock = FakeLock::new(&log, &clock, 0, Behaviour::Succeed);
        let watchdog = Watchdog::spawn(lock, clock.clone(), WatchdogConfig::new());
        // loom fails the model if `stop` and the thread ever block each other for good.
        let lock = watchdog.stop();
        assert!(!log.in_flight.load(Ordering::SeqCst));
        assert!(!log.releasing.load(Ordering::SeqCst));
        drop(lock);
        assert!(log.releasing.load(Ordering::SeqCst));
    });
    assert_eq!(runs, 10, "interleavings explored");
}

#[test]
fn check_now_from_another_thread_never_deadlocks() {
    let runs = explore(|| {
        let clock = FakeClock::at(10);
        let log = Arc::new(Log::default());
        let lock = FakeLock::new(&log, &clock, 0, Behaviour::Succeed);
        let watchdog = Arc::new(Watchdog::spawn(lock, clock.clone(), WatchdogConfig::new()));
        let prodder = {
            let watchdog = Arc::clone(&watchdog);
            thread::spawn(move || watchdog.check_now())
        };
        watchdog.check_now();
        prodder.join().expect("the prodding thread");
        assert_eq!(log.extensions.load(Ordering::SeqCst), 1);
        // The last handle goes here: `Drop` stops, then the fake releases.
        drop(watchdog);
        assert_eq!(log.after_release.load(Ordering::SeqCst), 0);
    });
    assert_eq!(runs, 11228, "interleavings explored");
}

// --- the detectors can fail --------------------------------------------------------------

/// The naive watchdog of Redisson#5698: the thread checks a stop flag, then extends under the
/// lock's own mutex; unlock raises the flag, releases, and only then joins. The check and the
/// extension are not one step, so a release can fall between them.
struct CheckThenAct {
    stop: Arc<AtomicBool>,
    lock: Arc<Mutex<FakeLock>>,
    thread: thread::JoinHandle<()>,
}

impl CheckThenAct {
    fn spawn(lock: FakeLock) -> CheckThenAct {
        let stop = Arc::new(AtomicBool::new(false));
        let lock = Arc::new(Mutex::new(lock));
        let thread = {
            let stop = Arc::clone(&stop);
            let lock = Arc::clone(&lock);
            thread::spawn(move || {
                if !stop.load(Ordering::SeqCst) {
                    lock.lock().unwrap().extend_now();
                }
            })
        };
        CheckThenAct { stop, lock, thread }
    }

    fn unlock(self) {
        self.stop.store(true, Ordering::SeqCst);
        self.lock.lock().unwrap().release_now();
        self.thread.join().unwrap();
    }
}

#[test]
#[should_panic(expected = "an extension was sent after unlock began")]
fn the_detector_catches_check_then_act() {
    explore(|| {
        let clock = FakeClock::at(10);
        let log = Arc::new(Log::default());
        let naive = CheckThenAct::spawn(FakeLock::new(&log, &clock, 0, Behaviour::Succeed));
        naive.unlock();
    });
}

/// A watchdog that, after a failed round, leaves quietly when a stop is pending ("the owner is
/// unlocking anyway"): the failure is swallowed in the interleaving where the stop lands
/// during the round.
struct QuietOnStop {
    stop: Arc<AtomicBool>,
    thread: thread::JoinHandle<()>,
}

impl QuietOnStop {
    fn spawn(mut lock: FakeLock, log: &Arc<Log>) -> QuietOnStop {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = Arc::clone(&stop);
            let log = Arc::clone(log);
            thread::spawn(move || {
                let lock_stop = stop.load(Ordering::SeqCst);
                if lock_stop {
                    return;
                }
                let outcome = lock.extend_now();
                if matches!(outcome, ExtendOutcome::Refused { .. }) && !stop.load(Ordering::SeqCst)
                {
                    log.told.fetch_add(1, Ordering::SeqCst);
                }
            })
        };
        QuietOnStop { stop, thread }
    }

    fn stop(self) {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.join().unwrap();
    }
}

#[test]
#[should_panic(expected = "a failed extension was not told")]
fn the_detector_catches_a_swallowed_failure() {
    explore(|| {
        let clock = FakeClock::at(10);
        let log = Arc::new(Log::default());
        let naive = QuietOnStop::spawn(FakeLock::new(&log, &clock, 0, Behaviour::Refuse), &log);
        naive.stop();
        assert_eq!(
            log.told.load(Ordering::SeqCst),
            log.extensions.load(Ordering::SeqCst),
            "a failed extension was not told"
        );
    });
}
