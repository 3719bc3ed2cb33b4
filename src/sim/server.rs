//! One simulated Redis master: the shared [`NodeState`] on the node's own [`SimClock`], with
//! crashes, delayed restarts, periodic fsync and partitions.

use rand_chacha::ChaCha8Rng;

use super::clock::SimClock;
use super::draw::uniform;
use super::setup::CrashConfig;
use crate::actor::Actor;
use crate::event::{Event, persistence_words};
use crate::node::{Availability, NodeReply, NodeState, Persistence, Unavailable};
use crate::proto::Op;
use crate::time::Millis;

/// The replicas of a failover's master, each copying first at `start` plus its share of a
/// period, so that they copy at different moments, each on its own.
fn replicas(failover: &super::setup::Failover, start: Millis) -> Vec<SimReplica> {
    let count = u64::from(failover.replicas.max(1));
    (0..count)
        .map(|r| SimReplica {
            state: NodeState::new(),
            next_replication: start + Millis(failover.replication_period.0 * r / count),
            setter: None,
        })
        .collect()
}

/// A node in the simulated world.
#[derive(Clone, Debug)]
pub(super) struct SimNode {
    /// The key and the availability, with Redis's semantics.
    pub state: NodeState,
    /// The node's wall clock (Redis expires keys against it).
    pub clock: SimClock,
    crash: CrashConfig,
    /// True time at which a crashed process starts again.
    restart_at: Option<u64>,
    /// Node-clock reading of the next periodic fsync.
    next_fsync: Millis,
    /// Messages to and from the node are lost before this true time.
    isolated_until: u64,
    /// Node-clock reading before which the clients' restarted-node guard keeps the node's
    /// yes out of a quorum.
    guarded_until: Option<Millis>,
    /// The asynchronous replicas, until one is promoted (then none: no second failover).
    replicas: Vec<SimReplica>,
    /// The client whose `SET` made the key the node holds: a ghost for the trace, since with
    /// one token for every client the key alone cannot say whose it is.
    setter: Option<Actor>,
}

/// One asynchronous replica of a simulated master, on the master's clock.
#[derive(Clone, Debug)]
struct SimReplica {
    /// What it last copied.
    state: NodeState,
    /// Node-clock reading of its next copy of the master's key.
    next_replication: Millis,
    /// The setter of the key it last copied.
    setter: Option<Actor>,
}

impl SimNode {
    /// Node `index`, up, with no key (and replicas if it is a failover's master).
    pub(super) fn new(index: usize, clock: SimClock, crash: CrashConfig) -> SimNode {
        SimNode {
            state: NodeState::new(),
            clock,
            crash,
            restart_at: None,
            next_fsync: clock.read(0) + crash.fsync_period,
            isolated_until: 0,
            guarded_until: None,
            replicas: crash
                .failover
                .filter(|failover| failover.every_node || failover.node == index)
                .map(|failover| replicas(&failover, clock.read(0)))
                .unwrap_or_default(),
            setter: None,
        }
    }

    /// The client whose key the node holds, if it holds one.
    pub(super) fn key_owner(&self) -> Option<Actor> {
        self.state.entry.and(self.setter)
    }

    /// Housekeeping at true time `now`: restart a crashed process whose downtime is over
    /// (told as [`Event::Restarted`]), fsync on schedule, expire the key (Redis's active
    /// expiry, told as [`Event::KeyExpired`]). `tell` takes each event with the node's clock
    /// reading (a callback, so the tick every node takes every millisecond builds nothing when
    /// nothing happens).
    pub(super) fn tick(&mut self, now: u64, mut record: impl FnMut(Event, Millis)) {
        let local = self.clock.read(now);
        if self.restart_at.is_some_and(|at| now >= at) {
            self.restart_at = None;
            self.guarded_until = self.state.restart_guarded(
                local,
                self.crash.restart_delay,
                self.crash.client_guard,
            );
            let restarted = Event::Restarted {
                refuses_until: (local + self.crash.restart_delay).since_origin(),
                guarded_until: self.guarded_until.map(Millis::since_origin),
            };
            record(restarted, local);
        }
        if self.crash.persistence == Persistence::FsyncPeriodic
            && self.state.availability != Availability::Down
            && local >= self.next_fsync
        {
            self.state.fsync();
            self.next_fsync = local + self.crash.fsync_period;
        }
        if self.state.availability != Availability::Down {
            let owner = self.key_owner();
            self.state.expire(local);
            if let Some(owner) = owner.filter(|_| self.state.entry.is_none()) {
                let by_jump = false;
                record(Event::KeyExpired { owner, by_jump }, local);
            }
        }
        if let Some(failover) = self.crash.failover {
            // The key and the fencing counter with it: Redis replicates the whole dataset.
            for replica in &mut self.replicas {
                if local >= replica.next_replication {
                    replica.state.entry = self.state.entry;
                    replica.state.counter = self.state.counter;
                    replica.setter = self.setter;
                    replica.next_replication = local + failover.replication_period;
                }
            }
        }
    }

    /// Runs a command of the first client at true time `now` on the node's clock.
    #[cfg(test)]
    pub(super) fn apply(&mut self, op: &Op, now: u64) -> Result<bool, Unavailable> {
        self.apply_counted(op, now, Actor::client(0))
            .map(|reply| reply.applied)
    }

    /// Runs `client`'s command at true time `now` on the node's clock; the answer carries the
    /// fencing counter a `SET` returned.
    pub(super) fn apply_counted(
        &mut self,
        op: &Op,
        now: u64,
        client: Actor,
    ) -> Result<NodeReply, Unavailable> {
        let local = self.clock.read(now);
        let reply = self.state.apply_counted(op, local, self.crash.persistence);
        if matches!(op, Op::SetNxPx { .. }) && reply.is_ok_and(|reply| reply.applied) {
            self.setter = Some(client);
        }
        // `WAIT k`: the answer leaves only once k replicas have what the master wrote.
        let wait = self.crash.failover.map_or(0, |f| usize::from(f.wait));
        if reply.is_ok_and(|reply| reply.applied) {
            for replica in self.replicas.iter_mut().take(wait) {
                replica.state.entry = self.state.entry;
                replica.state.counter = self.state.counter;
                replica.setter = self.setter;
            }
        }
        reply
    }

    /// Whether a client may count this node's yes at true time `now`: `false` while the
    /// restarted-node guard covers it (the client learns the node's uptime with the answer).
    pub(super) fn counts_toward_quorum(&self, now: u64) -> bool {
        self.guarded_until
            .is_none_or(|until| self.clock.read(now) >= until)
    }

    /// Kills the process at true time `now`; it starts again `downtime` later. A node that is
    /// already down is left alone (`None`).
    pub(super) fn crash(&mut self, now: u64, downtime: Millis) -> Option<Event> {
        if self.state.availability == Availability::Down {
            return None;
        }
        let owner = self.key_owner();
        self.state.crash(self.crash.persistence);
        self.restart_at = Some(now.saturating_add(downtime.0));
        Some(Event::Crashed {
            persistence: persistence_words(self.crash.persistence),
            key: owner.map(|owner| (owner, self.state.entry.is_some())),
            restarts: true,
            down_for: downtime.0,
            restart_delay: self.crash.restart_delay.0,
            // Told when the process starts again, which is when the guard is set.
            guarded_until: None,
        })
    }

    /// Whether the node still has a replica to fail over to.
    pub(super) fn has_replica(&self) -> bool {
        !self.replicas.is_empty()
    }

    /// The master fails at true time `now` and one of its replicas, drawn from `rng` when
    /// there are several, takes its place at once with what it had copied, refusing requests
    /// for the promotion delay (on the node's clock, which the replica shares, as in the
    /// model). A `WAIT` counts the first replicas, so the draw may promote one a write had to
    /// reach or one it need not have reached: both relations the model's adversary chooses
    /// between. A node without a replica (none configured, or already promoted) is left
    /// alone (`None`).
    pub(super) fn fail_over(&mut self, now: u64, rng: &mut ChaCha8Rng) -> Option<Event> {
        let failover = self.crash.failover?;
        let several = self.replicas.len() > 1;
        let last = self.replicas.len().checked_sub(1)?;
        // A one-replica master draws nothing, so its runs replay as before.
        let promoted_index = if several {
            uniform(rng, 0, last as u64) as usize
        } else {
            0
        };
        let replicas = std::mem::take(&mut self.replicas);
        let token = |state: &NodeState| state.entry.map(|entry| entry.token);
        let key = token(&self.state).filter(|_| self.key_owner().is_some());
        let name = |r: usize| Actor::Replica(if several { r as u8 + 1 } else { 0 });
        let reached = (0..replicas.len())
            .filter(|&r| r != promoted_index && key.is_some() && token(&replicas[r].state) == key)
            .map(name)
            .collect();
        let SimReplica {
            state: mut promoted,
            setter,
            ..
        } = replicas[promoted_index].clone();
        let local = self.clock.read(now);
        promoted.restart(local, failover.promotion_delay);
        let lost = self
            .key_owner()
            .filter(|_| token(&promoted) != token(&self.state));
        self.state = promoted;
        self.setter = setter;
        // A master that was down stays replaced: the promoted replica serves in its place.
        self.restart_at = None;
        Some(Event::Promoted {
            lost,
            refuses_until: Some((local + failover.promotion_delay).since_origin()),
            replica: several.then(|| name(promoted_index)),
            reached,
        })
    }

    /// Cuts the node off until true time `now + duration` (extends a running isolation).
    pub(super) fn isolate(&mut self, now: u64, duration: Millis) {
        self.isolated_until = self.isolated_until.max(now.saturating_add(duration.0));
    }

    /// Whether messages to and from the node are lost at true time `now`.
    pub(super) fn is_isolated(&self, now: u64) -> bool {
        now < self.isolated_until
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::Token;

    const SET: Op = Op::SetNxPx {
        token: Token(1),
        ttl: Millis(100),
    };
    const SET_OTHER: Op = Op::SetNxPx {
        token: Token(2),
        ttl: Millis(100),
    };

    fn node(persistence: Persistence, restart_delay: u64) -> SimNode {
        let crash = CrashConfig {
            persistence,
            fsync_period: Millis(10),
            restart_delay: Millis(restart_delay),
            client_guard: Millis(0),
            failover: None,
        };
        SimNode::new(0, SimClock::new(0, 0), crash)
    }

    /// Ticks the node from `from` to `to` inclusive, collecting what it tells.
    fn run(node: &mut SimNode, from: u64, to: u64) -> Vec<(u64, Event)> {
        let mut told = Vec::new();
        for now in from..=to {
            node.tick(now, |event, _| told.push((now, event)));
        }
        told
    }

    #[test]
    fn a_crash_without_persistence_loses_the_key_and_an_immediate_restart_serves_at_once() {
        let mut n = node(Persistence::None, 0);
        assert_eq!(n.apply(&SET, 0), Ok(true));
        assert!(
            matches!(
                n.crash(5, Millis(3)),
                Some(Event::Crashed {
                    key: Some((Actor::Client(0), false)),
                    down_for: 3,
                    ..
                })
            ),
            "c1's key is lost"
        );
        assert_eq!(n.crash(6, Millis(3)), None, "already down");
        assert_eq!(n.apply(&SET_OTHER, 7), Err(Unavailable));
        let events = run(&mut n, 6, 8);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].0, 8);
        assert_eq!(n.apply(&SET_OTHER, 8), Ok(true), "the lock is free again");
    }

    #[test]
    fn a_delayed_restart_waits_on_the_node_clock_and_a_jump_cuts_it_short() {
        let mut n = node(Persistence::None, 100);
        n.apply(&SET, 0).unwrap();
        n.crash(1, Millis(0));
        run(&mut n, 1, 1);
        assert_eq!(n.apply(&SET_OTHER, 50), Err(Unavailable));
        assert_eq!(n.apply(&SET_OTHER, 101), Ok(true));

        let mut jumped = node(Persistence::None, 100);
        jumped.apply(&SET, 0).unwrap();
        jumped.crash(1, Millis(0));
        run(&mut jumped, 1, 1);
        jumped.clock.jump(10, 95);
        assert_eq!(
            jumped.apply(&SET_OTHER, 10),
            Ok(true),
            "Kleppmann: the delay is measured on a clock that jumped"
        );
    }

    #[test]
    fn fsync_always_keeps_the_key_and_periodic_fsync_keeps_only_synced_keys() {
        let mut always = node(Persistence::FsyncAlways, 0);
        always.apply(&SET, 0).unwrap();
        always.crash(1, Millis(5));
        run(&mut always, 1, 6);
        assert_eq!(always.apply(&SET_OTHER, 6), Ok(false), "the key survived");

        let mut periodic = node(Persistence::FsyncPeriodic, 0);
        periodic.apply(&SET, 0).unwrap();
        run(&mut periodic, 0, 9);
        periodic.crash(9, Millis(1));
        run(&mut periodic, 10, 10);
        assert_eq!(
            periodic.apply(&SET_OTHER, 10),
            Ok(true),
            "lost before fsync"
        );

        let mut synced = node(Persistence::FsyncPeriodic, 0);
        synced.apply(&SET, 0).unwrap();
        run(&mut synced, 0, 10);
        synced.crash(11, Millis(1));
        run(&mut synced, 11, 12);
        assert_eq!(synced.apply(&SET_OTHER, 12), Ok(false), "fsynced at 10");
    }

    #[test]
    fn the_client_guard_starts_after_the_restart_delay_and_runs_on_the_node_clock() {
        let mut node = node(Persistence::None, 10);
        node.crash.client_guard = Millis(20);
        assert!(node.counts_toward_quorum(0), "a node never restarted votes");
        node.crash(5, Millis(0));
        node.tick(5, |_, _| {});
        // Restarting until its clock reads 15, guarded until 35.
        assert!(!node.counts_toward_quorum(20));
        assert!(!node.counts_toward_quorum(34));
        assert!(node.counts_toward_quorum(35));
        // A forward jump cuts the guard short, as it cuts the restart delay short.
        node.crash(40, Millis(0));
        node.tick(40, |_, _| {});
        node.clock.jump(41, 30);
        assert!(node.counts_toward_quorum(41));
    }

    #[test]
    fn isolation_ends_and_extends() {
        let mut n = node(Persistence::None, 0);
        n.isolate(10, Millis(5));
        assert!(n.is_isolated(14));
        assert!(!n.is_isolated(15));
        n.isolate(12, Millis(10));
        n.isolate(13, Millis(1));
        assert!(n.is_isolated(21));
        assert!(!n.is_isolated(22));
    }

    /// A master with two replicas that waits for one (`WAIT 1`): the key reaches replica1
    /// before the yes leaves, and the failover's draw promotes either replica, so some seeds
    /// keep the key and some lose it, as the model's adversary may choose.
    #[test]
    fn with_two_replicas_and_wait_one_the_draw_promotes_either_replica() {
        use rand_core::SeedableRng;
        let failover = super::super::setup::Failover {
            node: 0,
            every_node: false,
            replicas: 2,
            wait: 1,
            replication_period: Millis(1_000),
            promotion_delay: Millis(0),
        };
        let crash = CrashConfig {
            persistence: Persistence::None,
            fsync_period: Millis(10),
            restart_delay: Millis(0),
            client_guard: Millis(0),
            failover: Some(failover),
        };
        let mut promoted = std::collections::BTreeSet::new();
        for seed in 0..16 {
            let mut n = SimNode::new(0, SimClock::new(0, 0), crash);
            assert_eq!(
                n.apply_counted(&SET, 0, Actor::Client(0))
                    .map(|r| r.applied),
                Ok(true)
            );
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let Some(Event::Promoted { replica, lost, .. }) = n.fail_over(1, &mut rng) else {
                panic!("a failover")
            };
            // replica1 was counted by WAIT 1 and keeps c1's key; replica2 loses it.
            assert_eq!(lost.is_some(), replica == Some(Actor::Replica(2)));
            promoted.insert(replica);
        }
        assert_eq!(promoted.len(), 2, "both replicas are promoted by some seed");
    }
}
