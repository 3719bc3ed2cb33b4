//! Faults as verbs: jump a clock, crash a node, pause a client, isolate a node, delay a
//! storage operation — and the schedule that says when.
//!
//! A schedule is either given explicitly (a `Vec<ScheduledFault>`, which is what proptest
//! shrinks) or generated from the run's seed and a [`FaultBudget`]. Every fault is meaningful
//! in any state: one that does not apply (crashing a node that is down) is recorded as ignored,
//! so a shrunk schedule is always a valid schedule.

use std::fmt;

use rand_chacha::ChaCha8Rng;

use super::draw::uniform;
use crate::time::Millis;

/// A process of the simulated world that owns a clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Process {
    /// A Redis master, by index from 0.
    Node(usize),
    /// A lock client, by index from 0.
    Client(usize),
}

impl fmt::Display for Process {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // People count from 1, as the Redlock literature does (n1..nN, c1..cM).
        match self {
            Process::Node(i) => write!(f, "n{}", i + 1),
            Process::Client(i) => write!(f, "c{}", i + 1),
        }
    }
}

/// One fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fault {
    /// The process's clock steps by `by_ms` (negative: backward).
    ClockJump {
        /// Whose clock.
        process: Process,
        /// The step, in milliseconds.
        by_ms: i64,
    },
    /// The node's process dies; it comes back after `downtime` of true time and then refuses
    /// commands for the configured restart delay, measured on its own clock.
    Crash {
        /// Which node.
        node: usize,
        /// True time until the process starts again.
        downtime: Millis,
    },
    /// The client stops handling anything for `duration` of true time (a GC pause, a page
    /// fault, SIGSTOP). Messages for it wait; its clock keeps running. A client that is
    /// already paused ignores it (pauses do not stack).
    Pause {
        /// Which client.
        client: usize,
        /// How long.
        duration: Millis,
    },
    /// Every message to or from the node is lost for `duration` of true time (a partition).
    Isolate {
        /// Which node.
        node: usize,
        /// How long.
        duration: Millis,
    },
    /// The client's next storage operation takes `extra` longer to arrive (Kleppmann's
    /// network-delayed write).
    DelayStorageOp {
        /// Which client.
        client: usize,
        /// The additional delay.
        extra: Millis,
    },
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Fault::ClockJump { process, by_ms } => {
                write!(f, "clock of {process} jumps {by_ms:+} ms")
            }
            Fault::Crash { node, downtime } => {
                write!(f, "{} crashes for {downtime}", Process::Node(node))
            }
            Fault::Pause { client, duration } => {
                write!(f, "{} pauses for {duration}", Process::Client(client))
            }
            Fault::Isolate { node, duration } => {
                write!(f, "{} is isolated for {duration}", Process::Node(node))
            }
            Fault::DelayStorageOp { client, extra } => write!(
                f,
                "next storage op of {} is delayed by {extra}",
                Process::Client(client)
            ),
        }
    }
}

/// A fault and the true time at which it strikes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScheduledFault {
    /// True time (ms since the start of the run).
    pub at: Millis,
    /// What happens.
    pub fault: Fault,
}

impl fmt::Display for ScheduledFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at {}: {}", self.at, self.fault)
    }
}

/// How many faults of one kind a generated schedule has, and the range of their size (a jump's
/// step, a crash's downtime, a pause's length, …).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Budget {
    /// Exactly this many faults of the kind, at uniformly random true times.
    pub count: u32,
    /// The smallest size.
    pub min: Millis,
    /// The largest size.
    pub max: Millis,
}

impl Budget {
    /// No faults of this kind.
    pub const NONE: Budget = Budget {
        count: 0,
        min: Millis(0),
        max: Millis(0),
    };

    /// `count` faults with sizes in `[min, max]`.
    pub const fn new(count: u32, min: Millis, max: Millis) -> Budget {
        Budget { count, min, max }
    }
}

impl fmt::Display for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.count == 0 {
            write!(f, "none")
        } else {
            write!(f, "{} × [{}, {}]", self.count, self.min.0, self.max.0)?;
            write!(f, " ms")
        }
    }
}

/// The budgets of a generated schedule, one per kind of fault.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FaultBudget {
    /// Forward jumps of node clocks (Kleppmann's jump: keys expire early).
    pub node_jumps_forward: Budget,
    /// Backward jumps of node clocks (keys live longer: liveness only).
    pub node_jumps_backward: Budget,
    /// Forward jumps of client clocks (beliefs end early: liveness only).
    pub client_jumps_forward: Budget,
    /// Backward jumps of client clocks (a holder believes too long).
    pub client_jumps_backward: Budget,
    /// Node crashes; the size is the downtime.
    pub crashes: Budget,
    /// Client pauses; the size is the pause.
    pub pauses: Budget,
    /// Node isolations (partitions); the size is their length.
    pub isolations: Budget,
    /// Delayed storage operations; the size is the extra delay.
    pub storage_delays: Budget,
    /// Aim every node fault (jump, crash, isolation) at this node instead of a drawn one.
    pub pinned_node: Option<usize>,
    /// Aim every client fault (jump, pause, storage delay) at this client instead of a drawn
    /// one.
    pub pinned_client: Option<usize>,
}

impl FaultBudget {
    /// No faults at all.
    pub const NONE: FaultBudget = FaultBudget {
        node_jumps_forward: Budget::NONE,
        node_jumps_backward: Budget::NONE,
        client_jumps_forward: Budget::NONE,
        client_jumps_backward: Budget::NONE,
        crashes: Budget::NONE,
        pauses: Budget::NONE,
        isolations: Budget::NONE,
        storage_delays: Budget::NONE,
        pinned_node: None,
        pinned_client: None,
    };

    /// Every budget with its name, for printing and validation.
    pub fn kinds(&self) -> [(&'static str, Budget); 8] {
        [
            ("node_jumps_forward", self.node_jumps_forward),
            ("node_jumps_backward", self.node_jumps_backward),
            ("client_jumps_forward", self.client_jumps_forward),
            ("client_jumps_backward", self.client_jumps_backward),
            ("crashes", self.crashes),
            ("pauses", self.pauses),
            ("isolations", self.isolations),
            ("storage_delays", self.storage_delays),
        ]
    }

    /// Draws the schedule: for each kind in the order of [`kinds`](FaultBudget::kinds),
    /// `count` faults at uniform true times in `[0, duration)`, each aimed at a uniformly drawn
    /// node or client. Sorted by time (stable, so ties keep the draw order).
    pub fn generate(
        &self,
        rng: &mut ChaCha8Rng,
        duration: Millis,
        nodes: usize,
        clients: usize,
    ) -> Vec<ScheduledFault> {
        // Each kind turns (node, client, size) into a fault; all are drawn alike so that adding
        // a kind to a budget never shifts the draws of the kinds before it.
        type Make = fn(usize, usize, Millis) -> Fault;
        let makers: [(Budget, Make); 8] = [
            (self.node_jumps_forward, |node, _, size| Fault::ClockJump {
                process: Process::Node(node),
                by_ms: size_ms(size),
            }),
            (self.node_jumps_backward, |node, _, size| Fault::ClockJump {
                process: Process::Node(node),
                by_ms: -size_ms(size),
            }),
            (self.client_jumps_forward, |_, client, size| {
                Fault::ClockJump {
                    process: Process::Client(client),
                    by_ms: size_ms(size),
                }
            }),
            (self.client_jumps_backward, |_, client, size| {
                Fault::ClockJump {
                    process: Process::Client(client),
                    by_ms: -size_ms(size),
                }
            }),
            (self.crashes, |node, _, downtime| Fault::Crash {
                node,
                downtime,
            }),
            (self.pauses, |_, client, duration| Fault::Pause {
                client,
                duration,
            }),
            (self.isolations, |node, _, duration| Fault::Isolate {
                node,
                duration,
            }),
            (self.storage_delays, |_, client, extra| {
                Fault::DelayStorageOp { client, extra }
            }),
        ];
        let mut schedule = Vec::new();
        let last_tick = duration.0.saturating_sub(1);
        for (budget, make) in makers {
            for _ in 0..budget.count {
                let at = Millis(uniform(rng, 0, last_tick));
                let size = Millis(uniform(rng, budget.min.0, budget.max.0));
                // Drawn even when pinned, so that pinning never shifts later draws.
                let node = uniform(rng, 0, nodes.saturating_sub(1) as u64) as usize;
                let client = uniform(rng, 0, clients.saturating_sub(1) as u64) as usize;
                let node = self.pinned_node.unwrap_or(node);
                let client = self.pinned_client.unwrap_or(client);
                schedule.push(ScheduledFault {
                    at,
                    fault: make(node, client, size),
                });
            }
        }
        schedule.sort_by_key(|f| f.at);
        schedule
    }
}

impl fmt::Display for FaultBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (name, budget) in self.kinds() {
            if budget.count == 0 {
                continue;
            }
            if !first {
                write!(f, ", ")?;
            }
            first = false;
            write!(f, "{name} {budget}")?;
        }
        if first {
            write!(f, "none")?;
        }
        if let Some(node) = self.pinned_node {
            write!(f, "; node faults pinned to {}", Process::Node(node))?;
        }
        if let Some(client) = self.pinned_client {
            write!(f, "; client faults pinned to {}", Process::Client(client))?;
        }
        Ok(())
    }
}

/// A jump size as a signed step (sizes are validated far below `i64::MAX`).
fn size_ms(size: Millis) -> i64 {
    i64::try_from(size.0).unwrap_or(i64::MAX)
}

/// Where a run's faults come from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FaultPlan {
    /// Drawn from the seed within these budgets.
    Generated(FaultBudget),
    /// Exactly these faults (sorted by time before the run; ties keep their order).
    Explicit(Vec<ScheduledFault>),
}

impl Default for FaultPlan {
    fn default() -> Self {
        FaultPlan::Generated(FaultBudget::NONE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;

    #[test]
    fn a_generated_schedule_respects_the_budget_and_replays() {
        let budget = FaultBudget {
            node_jumps_forward: Budget::new(3, Millis(5), Millis(9)),
            pauses: Budget::new(2, Millis(100), Millis(100)),
            ..FaultBudget::NONE
        };
        let draw = |seed| budget.generate(&mut ChaCha8Rng::seed_from_u64(seed), Millis(1000), 3, 2);
        let schedule = draw(7);
        assert_eq!(schedule.len(), 5);
        assert!(schedule.windows(2).all(|w| w[0].at <= w[1].at));
        for fault in &schedule {
            assert!(fault.at < Millis(1000));
            match fault.fault {
                Fault::ClockJump {
                    process: Process::Node(n),
                    by_ms,
                } => assert!(n < 3 && (5..=9).contains(&by_ms)),
                Fault::Pause { client, duration } => {
                    assert!(client < 2 && duration == Millis(100))
                }
                other => panic!("unexpected fault {other:?}"),
            }
        }
        assert_eq!(draw(7), schedule);
        assert_ne!(draw(8), schedule);
    }

    #[test]
    fn faults_print_as_sentences() {
        let fault = ScheduledFault {
            at: Millis(40),
            fault: Fault::ClockJump {
                process: Process::Node(0),
                by_ms: -7,
            },
        };
        assert_eq!(fault.to_string(), "at 40 ms: clock of n1 jumps -7 ms");
        assert_eq!(FaultBudget::NONE.to_string(), "none");
    }
}
