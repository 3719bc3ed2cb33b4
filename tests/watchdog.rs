//! The watchdog over the real blocking client and in-memory nodes.
//!
//! Most tests run on a [`ManualClock`]: the watchdog thread waits for `check_now` instead of
//! sleeping, so every step is deterministic and no test sleeps. One test runs on the real
//! monotonic clock to show the thread paces itself (with generous margins; it asserts what
//! happened, not how fast).

#![cfg(not(redlock_loom))]

use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use redlock_lab::driver::watchdog::{Fraction, Loss, LossReason, WatchdogConfig};
use redlock_lab::driver::{Clock, ManualClock, MemoryNode, MonotonicClock, Redlock, SharedNode};
use redlock_lab::node::Node;
use redlock_lab::proto::{Config, Failure, RetryPolicy, Token};
use redlock_lab::time::Millis;

const TTL: Millis = Millis(3_000);
const RESOURCE: &str = "orders";

/// What one node was asked to do, in the order all nodes were asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Asked {
    Set,
    Extend,
    Release,
}

/// A node that records every operation into a log shared by all nodes of the test.
#[derive(Clone)]
struct Recording<N> {
    node: N,
    log: Arc<Mutex<Vec<Asked>>>,
}

impl<N: Node> Node for Recording<N> {
    type Error = N::Error;

    fn set_nx_px(&mut self, key: &str, token: Token, ttl: Millis) -> Result<Option<u64>, N::Error> {
        self.log.lock().unwrap().push(Asked::Set);
        self.node.set_nx_px(key, token, ttl)
    }

    fn raise_fence(&mut self, key: &str, token: Token, to: u64) -> Result<bool, N::Error> {
        self.node.raise_fence(key, token, to)
    }

    fn del_if_eq(&mut self, key: &str, token: Token) -> Result<bool, N::Error> {
        self.log.lock().unwrap().push(Asked::Release);
        self.node.del_if_eq(key, token)
    }

    fn pexpire_if_eq(&mut self, key: &str, token: Token, ttl: Millis) -> Result<bool, N::Error> {
        self.log.lock().unwrap().push(Asked::Extend);
        self.node.pexpire_if_eq(key, token, ttl)
    }

    fn del(&mut self, key: &str) -> Result<bool, N::Error> {
        self.log.lock().unwrap().push(Asked::Release);
        self.node.del(key)
    }

    fn get_eq(&mut self, key: &str, token: Token) -> Result<bool, N::Error> {
        self.node.get_eq(key, token)
    }
}

type World = (Vec<SharedNode<MemoryNode>>, Arc<Mutex<Vec<Asked>>>);

/// Three shared in-memory nodes on `clock`, and the log of what they were asked.
fn world(clock: &ManualClock) -> World {
    let nodes = (0..3)
        .map(|_| SharedNode::new(MemoryNode::new(clock.clone())))
        .collect();
    (nodes, Arc::new(Mutex::new(Vec::new())))
}

fn client<C: Clock>(
    world: &World,
    clock: C,
    seed: u64,
) -> Redlock<Recording<SharedNode<MemoryNode>>, C, ChaCha20Rng> {
    client_logging_to(&world.0, &world.1, clock, seed)
}

fn client_logging_to<C: Clock>(
    nodes: &[SharedNode<MemoryNode>],
    log: &Arc<Mutex<Vec<Asked>>>,
    clock: C,
    seed: u64,
) -> Redlock<Recording<SharedNode<MemoryNode>>, C, ChaCha20Rng> {
    let recording = nodes
        .iter()
        .map(|node| Recording {
            node: node.clone(),
            log: Arc::clone(log),
        })
        .collect();
    // One round, no back-off: a rival's retries would sleep on (and so move) the shared clock.
    let mut config = Config::new(3);
    config.retry = RetryPolicy {
        attempts: 1,
        ..RetryPolicy::default()
    };
    Redlock::new(recording, config, clock, ChaCha20Rng::seed_from_u64(seed)).unwrap()
}

/// Whether a second client could take the lock now (it releases at once if it did). Its
/// commands go to a log of its own: the world's log is the holder's.
fn rival_gets_it(world: &World, clock: &ManualClock) -> bool {
    let own_log = Arc::new(Mutex::new(Vec::new()));
    let mut rival = client_logging_to(&world.0, &own_log, clock.clone(), 99);
    rival.lock(RESOURCE, TTL).unwrap().is_some()
}

fn count(log: &Mutex<Vec<Asked>>, asked: Asked) -> usize {
    log.lock().unwrap().iter().filter(|&&a| a == asked).count()
}

/// A config whose callback forwards losses into a channel.
fn told() -> (WatchdogConfig, mpsc::Receiver<Loss>) {
    let (tx, rx) = mpsc::channel();
    let config = WatchdogConfig::new().on_lost(move |loss| tx.send(loss).unwrap());
    (config, rx)
}

#[test]
fn the_watchdog_keeps_a_lock_alive_past_several_ttls() {
    let clock = ManualClock::new(Millis(0));
    let world = world(&clock);
    let mut holder = client(&world, clock.clone(), 1);
    let guard = holder.lock(RESOURCE, TTL).unwrap().expect("free");
    let token = guard.token();
    let (config, losses) = told();
    std::thread::scope(|scope| {
        let watched = guard.watch(scope, config);
        // Ten TTLs in steps of 100 ms.
        for _ in 0..300 {
            clock.advance(Millis(100));
            watched.check_now();
            assert!(watched.is_valid(), "lost at {:?}", clock.now());
        }
        assert!(!rival_gets_it(&world, &clock));
        for node in &world.0 {
            assert_eq!(node.with(|node| node.holder(RESOURCE)), Some(token));
        }
        // One extension per third of the TTL, on each of the three nodes.
        assert_eq!(count(&world.1, Asked::Extend), 30 * 3);
        assert!(watched.deadline() > clock.now());
        watched.unlock();
    });
    assert!(losses.try_recv().is_err(), "nothing was lost");
    assert!(rival_gets_it(&world, &clock));
}

#[test]
fn without_the_watchdog_the_same_lock_lapses_after_one_ttl() {
    // The control for the test above: the rival detects a lapsed lock.
    let clock = ManualClock::new(Millis(0));
    let world = world(&clock);
    let mut holder = client(&world, clock.clone(), 1);
    let guard = holder.lock(RESOURCE, TTL).unwrap().expect("free");
    assert!(!rival_gets_it(&world, &clock));
    clock.advance(TTL);
    assert!(!guard.is_valid());
    assert!(rival_gets_it(&world, &clock));
}

#[test]
fn a_majority_down_is_told_at_the_deadline() {
    let clock = ManualClock::new(Millis(0));
    let world = world(&clock);
    let mut holder = client(&world, clock.clone(), 1);
    let guard = holder.lock(RESOURCE, TTL).unwrap().expect("free");
    let (config, losses) = told();
    std::thread::scope(|scope| {
        let watched = guard.watch(scope, config);
        clock.advance(Millis(1_000));
        watched.check_now();
        let deadline = watched.deadline();
        assert_eq!(deadline, Millis(1_000) + TTL - Millis(32));

        world.0[0].with(|node| node.crash());
        world.0[1].with(|node| node.crash());
        // Retries every 300 ms fail; until the deadline the caller may still act.
        while clock.now() + Millis(100) < deadline {
            clock.advance(Millis(100));
            watched.check_now();
            assert!(!watched.is_lost() && watched.is_valid());
            assert!(losses.try_recv().is_err());
        }
        clock.set(deadline);
        watched.check_now();
        assert!(watched.is_lost() && !watched.is_valid());
        let loss = losses.try_recv().expect("the caller is told");
        assert_eq!(watched.lost(), Some(loss));
        assert_eq!((loss.at, loss.deadline), (deadline, deadline));
        let LossReason::DeadlinePassed {
            attempts,
            last_failure,
        } = loss.reason
        else {
            panic!("expected the deadline to pass, got {loss:?}");
        };
        // Extensions at 2 000, then every 300 ms: 2 000, 2 300, …, 3 800.
        assert_eq!(attempts, 7);
        // The round is decided as soon as a majority is out of reach: after the two crashed
        // nodes failed, before the third answered.
        assert_eq!(
            last_failure,
            Some(Failure::NoQuorum {
                applied: 0,
                quorum: 2
            })
        );
        // Told once; the thread has left and extends no more.
        let extends = count(&world.1, Asked::Extend);
        clock.advance(Millis(100));
        watched.check_now();
        assert_eq!(count(&world.1, Asked::Extend), extends);
        assert!(losses.try_recv().is_err());
        let released = watched.unlock();
        assert_eq!(released.applied.len(), 1);
    });
}

#[test]
fn keys_lost_on_a_majority_are_told_at_once() {
    let clock = ManualClock::new(Millis(0));
    let world = world(&clock);
    let mut holder = client(&world, clock.clone(), 1);
    let guard = holder.lock(RESOURCE, TTL).unwrap().expect("free");
    let (config, losses) = told();
    std::thread::scope(|scope| {
        let watched = guard.watch(scope, config);
        // Two nodes restart without persistence: our keys are gone there.
        for node in &world.0[..2] {
            node.with(|node| {
                node.crash();
                node.restart(Millis::ZERO);
            });
        }
        clock.advance(Millis(1_000));
        watched.check_now();
        let loss = losses.try_recv().expect("the caller is told");
        assert_eq!(
            loss.reason,
            LossReason::Refused {
                failure: Failure::NoQuorum {
                    applied: 0,
                    quorum: 2
                }
            }
        );
        assert!(loss.at < loss.deadline, "told before the deadline");
        assert!(watched.is_lost() && !watched.is_valid());
        // A rival can take the lock on the two restarted nodes: the loss was real.
        assert!(rival_gets_it(&world, &clock));
        watched.unlock();
    });
}

#[test]
fn unlock_stops_the_watchdog_before_releasing() {
    let clock = ManualClock::new(Millis(0));
    let world = world(&clock);
    let mut holder = client(&world, clock.clone(), 1);
    let guard = holder.lock(RESOURCE, TTL).unwrap().expect("free");
    std::thread::scope(|scope| {
        let watched = guard.watch(scope, WatchdogConfig::new());
        for _ in 0..5 {
            clock.advance(Millis(1_000));
            watched.check_now();
        }
        // The next extension is due, but the thread has not been woken: the wake-up from
        // `unlock` finds the stop flag before the due extension.
        clock.advance(Millis(1_000));
        let released = watched.unlock();
        assert_eq!(released.applied.len(), 3);
    });
    let log = world.1.lock().unwrap().clone();
    let first_release = log.iter().position(|&a| a == Asked::Release).unwrap();
    assert!(
        log[first_release..].iter().all(|&a| a == Asked::Release),
        "{log:?}"
    );
    assert_eq!(count(&world.1, Asked::Extend), 5 * 3);
}

#[test]
fn dropping_the_watchdog_stops_it_and_the_guard_releases() {
    let clock = ManualClock::new(Millis(0));
    let world = world(&clock);
    let mut holder = client(&world, clock.clone(), 1);
    let guard = holder.lock(RESOURCE, TTL).unwrap().expect("free");
    std::thread::scope(|scope| {
        let watched = guard.watch(scope, WatchdogConfig::new());
        clock.advance(Millis(1_000));
        watched.check_now();
        assert!(!rival_gets_it(&world, &clock));
        drop(watched);
        assert!(rival_gets_it(&world, &clock));
    });
    let log = world.1.lock().unwrap().clone();
    let first_release = log.iter().position(|&a| a == Asked::Release).unwrap();
    assert!(!log[first_release..].contains(&Asked::Extend), "{log:?}");
}

#[test]
fn with_watchdog_runs_the_work_then_stops_and_releases() {
    let clock = ManualClock::new(Millis(0));
    let world = world(&clock);
    let mut holder = client(&world, clock.clone(), 1);
    let guard = holder.lock(RESOURCE, TTL).unwrap().expect("free");
    let (steps, released) = guard.with_watchdog(WatchdogConfig::new(), |watched| {
        let mut steps = 0;
        while watched.is_valid() && steps < 100 {
            clock.advance(Millis(100));
            watched.check_now();
            steps += 1;
        }
        steps
    });
    assert_eq!(
        steps, 100,
        "ten seconds, more than three TTLs, without a loss"
    );
    assert_eq!(released.applied.len(), 3);
    assert_eq!(count(&world.1, Asked::Extend), 10 * 3);
    let log = world.1.lock().unwrap().clone();
    let first_release = log.iter().position(|&a| a == Asked::Release).unwrap();
    assert!(!log[first_release..].contains(&Asked::Extend), "{log:?}");
    assert!(rival_gets_it(&world, &clock));
}

#[test]
fn a_custom_period_paces_the_extensions() {
    let clock = ManualClock::new(Millis(0));
    let world = world(&clock);
    let mut holder = client(&world, clock.clone(), 1);
    let guard = holder.lock(RESOURCE, TTL).unwrap().expect("free");
    std::thread::scope(|scope| {
        let config = WatchdogConfig::new().period(Fraction::new(1, 2).unwrap());
        let watched = guard.watch(scope, config);
        for _ in 0..60 {
            clock.advance(Millis(100));
            watched.check_now();
        }
        // Due at 1 468 (deadline 2 968 − 1 500), then every 1 500 ms: 1 500, 3 000, 4 500,
        // 6 000.
        assert_eq!(count(&world.1, Asked::Extend), 4 * 3);
        watched.unlock();
    });
}

#[test]
fn on_a_real_clock_the_thread_paces_itself_and_stop_wakes_it() {
    let manual = ManualClock::new(Millis(0));
    let world = world(&manual);
    // The nodes keep the manual clock (it never moves, so keys never expire there); the
    // client and its watchdog read the real one.
    let clock = MonotonicClock::new();
    let mut holder = client(&world, clock, 1);
    let guard = holder.lock(RESOURCE, Millis(1_200)).unwrap().expect("free");
    std::thread::scope(|scope| {
        let watched = guard.watch(scope, WatchdogConfig::new());
        // 2 s is 1.7 TTLs; extensions are due every 400 ms. The asserts allow the thread to be
        // starved for most of a second on a loaded machine.
        std::thread::sleep(std::time::Duration::from_millis(2_000));
        let extends = count(&world.1, Asked::Extend);
        assert!(extends >= 2 * 3, "only {extends} extension commands");
        assert!(watched.is_valid() && !watched.is_lost());
        let released = watched.unlock();
        assert_eq!(released.applied.len(), 3);
    });

    // A long period: `unlock` wakes the sleeping thread instead of waiting 20 s for it.
    let mut holder = client(&world, clock, 2);
    let guard = holder
        .lock(RESOURCE, Millis(60_000))
        .unwrap()
        .expect("free");
    let started = std::time::Instant::now();
    std::thread::scope(|scope| {
        let watched = guard.watch(scope, WatchdogConfig::new());
        watched.check_now();
        watched.unlock();
    });
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn a_panicking_extender_is_reported_lost() {
    use redlock_lab::driver::watchdog::{ExtendOutcome, Extendable, Watchdog};

    struct Exploding {
        deadline: Millis,
    }
    impl Extendable for Exploding {
        type Released = ();
        fn extend(&mut self) -> ExtendOutcome {
            panic!("the extender exploded");
        }
        fn deadline(&self) -> Millis {
            self.deadline
        }
        fn ttl(&self) -> Millis {
            TTL
        }
        fn release(self) {}
    }

    let clock = ManualClock::new(Millis(1_000));
    let (config, losses) = told();
    let watchdog = Watchdog::spawn(Exploding { deadline: TTL }, clock.clone(), config);
    watchdog.check_now();
    assert!(watchdog.is_lost());
    assert_eq!(
        losses.try_recv().map(|loss| loss.reason),
        Ok(LossReason::Panicked)
    );
    watchdog.stop();
}
