//! Faults as verbs: jump a clock, crash a node, pause a client, isolate a node, delay a
//! storage operation — and the schedule that says when.
//!
//! A schedule is either given explicitly (a `Vec<ScheduledFault>`, which is what proptest
//! shrinks) or generated from the run's seed and a [`FaultBudget`]. Every fault is meaningful
//! in any state: one that does not apply (crashing a node that is down) is recorded as ignored,
//! so a shrunk schedule is always a valid schedule.

use std::fmt;
use std::ops::{Index, IndexMut};

use rand_chacha::ChaCha8Rng;

use super::draw::uniform;
use crate::actor::Process;
use crate::fault::{ClientFaultAim, CrashWhen, FaultKind};
use crate::time::Millis;

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
    /// The client's next lock request to the node takes `extra` longer to arrive (a slow
    /// connection: the model leaves a request in flight for as long as it likes, so a `SET`
    /// may land just after a rival's key expired).
    DelayRequest {
        /// Which client.
        client: usize,
        /// Which node.
        node: usize,
        /// The additional delay.
        extra: Millis,
    },
    /// The replicated master ([`Failover::node`](super::Failover::node)) fails and its
    /// asynchronous replica is promoted in its place, with the key it had copied; ignored
    /// without a replica (none configured, or already promoted).
    Failover,
    /// The client's process dies for good: it sends nothing more (not even its unlock) and
    /// believes nothing more, while what it already sent still arrives and the keys it set
    /// stay on the nodes until they expire. With [`CrashWhen::Holding`] it applies only while
    /// the client believes it holds the lock (else it is ignored), as the model allows it.
    CrashClient {
        /// Which client.
        client: usize,
        /// When it may strike.
        when: CrashWhen,
    },
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Fault::ClockJump { process, by_ms } => {
                write!(f, "clock of {process} jumps {by_ms:+} ms")
            }
            Fault::Crash { node, downtime } => {
                write!(f, "{} crashes for {downtime}", Process::node(node))
            }
            Fault::Pause { client, duration } => {
                write!(f, "{} pauses for {duration}", Process::client(client))
            }
            Fault::Isolate { node, duration } => {
                write!(f, "{} is isolated for {duration}", Process::node(node))
            }
            Fault::DelayStorageOp { client, extra } => write!(
                f,
                "next storage op of {} is delayed by {extra}",
                Process::client(client)
            ),
            Fault::DelayRequest {
                client,
                node,
                extra,
            } => write!(
                f,
                "next request of {} to {} is delayed by {extra}",
                Process::client(client),
                Process::node(node)
            ),
            Fault::Failover => write!(f, "a replicated master fails over to its replica"),
            Fault::CrashClient { client, when } => {
                write!(f, "{} crashes for good", Process::client(client))?;
                match when {
                    CrashWhen::Any => Ok(()),
                    CrashWhen::Holding => f.write_str(" if it holds the lock then"),
                }
            }
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
pub struct KindBudget {
    /// Exactly this many faults of the kind, at uniformly random true times.
    pub count: u32,
    /// The smallest size.
    pub min: Millis,
    /// The largest size.
    pub max: Millis,
}

impl KindBudget {
    /// No faults of this kind.
    pub const NONE: KindBudget = KindBudget {
        count: 0,
        min: Millis(0),
        max: Millis(0),
    };

    /// `count` faults with sizes in `[min, max]`.
    pub const fn new(count: u32, min: Millis, max: Millis) -> KindBudget {
        KindBudget { count, min, max }
    }
}

impl fmt::Display for KindBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.count == 0 {
            write!(f, "none")
        } else {
            write!(f, "{} × [{}, {}]", self.count, self.min.0, self.max.0)?;
            write!(f, " ms")
        }
    }
}

/// A class of the simulator's faults: what one budget of a [`FaultBudget`] draws. Finer than
/// the shared [`FaultKind`] (a clock jump's process and direction), and with the asynchrony
/// a run injects (late and stalled requests), which is no fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FaultClass {
    /// A node's clock steps forward (Kleppmann's jump: keys expire early).
    NodeJumpForward,
    /// A node's clock steps backward (keys live longer: liveness only).
    NodeJumpBackward,
    /// A client's clock steps forward (beliefs end early: liveness only).
    ClientJumpForward,
    /// A client's clock steps backward (a holder believes too long).
    ClientJumpBackward,
    /// A node crashes; the size is the downtime.
    Crash,
    /// A client pauses; the size is the pause.
    Pause,
    /// A node is cut off (a partition); the size is how long.
    Isolation,
    /// A storage operation is delayed; the size is the extra delay.
    StorageDelay,
    /// One client's next request to one node is late; the size is the extra delay.
    RequestDelay,
    /// The replicated master fails over ([`Fault::Failover`]); the size is unused.
    Failover,
    /// A client process dies for good ([`Fault::CrashClient`]); the size is unused.
    ClientCrash,
    /// One client's next request to one node is left in flight; the size is the delay (past
    /// the end of the run, the request never lands). The model leaves a request in flight as
    /// long as it likes, so a holder may win a quorum while its request to another node is
    /// still on its way when a rival takes that node. A swarm run stalls first rounds (or a
    /// holder's next request), and a focused one aims its stalls around the focused node.
    RequestStall,
}

impl FaultClass {
    /// Every class, in the order a schedule draws them: a seed replays a run only while
    /// this order stays.
    pub const ALL: [FaultClass; 12] = [
        FaultClass::NodeJumpForward,
        FaultClass::NodeJumpBackward,
        FaultClass::ClientJumpForward,
        FaultClass::ClientJumpBackward,
        FaultClass::Crash,
        FaultClass::Pause,
        FaultClass::Isolation,
        FaultClass::StorageDelay,
        FaultClass::RequestDelay,
        FaultClass::Failover,
        FaultClass::ClientCrash,
        FaultClass::RequestStall,
    ];

    /// The class's name: its word in a run's header, and the `[simulate]` key of the classes
    /// a file budgets (crashes, isolations, pauses, storage delays, forward node jumps and
    /// backward client jumps; the others come from the scenario's own fault keys).
    pub const fn key(self) -> &'static str {
        match self {
            FaultClass::NodeJumpForward => "node_jumps_forward",
            FaultClass::NodeJumpBackward => "node_jumps_backward",
            FaultClass::ClientJumpForward => "client_jumps_forward",
            FaultClass::ClientJumpBackward => "client_jumps_backward",
            FaultClass::Crash => "crashes",
            FaultClass::Pause => "pauses",
            FaultClass::Isolation => "isolations",
            FaultClass::StorageDelay => "storage_delays",
            FaultClass::RequestDelay => "request_delays",
            FaultClass::Failover => "failovers",
            FaultClass::ClientCrash => "client_crashes",
            FaultClass::RequestStall => "request_stalls",
        }
    }

    /// The kind of fault the class is, as the model and the reports know it; `None` for a
    /// late or stalled request, which is asynchrony the model allows without a budget.
    pub const fn kind(self) -> Option<FaultKind> {
        match self {
            FaultClass::NodeJumpForward
            | FaultClass::NodeJumpBackward
            | FaultClass::ClientJumpForward
            | FaultClass::ClientJumpBackward => Some(FaultKind::ClockJump),
            FaultClass::Crash => Some(FaultKind::Crash),
            FaultClass::Pause => Some(FaultKind::Pause),
            FaultClass::Isolation => Some(FaultKind::Partition),
            FaultClass::StorageDelay => Some(FaultKind::StorageDelay),
            FaultClass::Failover => Some(FaultKind::Failover),
            FaultClass::ClientCrash => Some(FaultKind::ClientCrash),
            FaultClass::RequestDelay | FaultClass::RequestStall => None,
        }
    }

    /// The fault of this class at `node` or `client` (whichever it strikes) of size `size`.
    /// A client crash strikes at any point of the client's life; aiming it is the budget's.
    pub fn make(self, node: usize, client: usize, size: Millis) -> Fault {
        let jump = |process, by_ms| Fault::ClockJump { process, by_ms };
        match self {
            FaultClass::NodeJumpForward => jump(Process::node(node), size_ms(size)),
            FaultClass::NodeJumpBackward => jump(Process::node(node), -size_ms(size)),
            FaultClass::ClientJumpForward => jump(Process::client(client), size_ms(size)),
            FaultClass::ClientJumpBackward => jump(Process::client(client), -size_ms(size)),
            FaultClass::Crash => Fault::Crash {
                node,
                downtime: size,
            },
            FaultClass::Pause => Fault::Pause {
                client,
                duration: size,
            },
            FaultClass::Isolation => Fault::Isolate {
                node,
                duration: size,
            },
            FaultClass::StorageDelay => Fault::DelayStorageOp {
                client,
                extra: size,
            },
            FaultClass::RequestDelay | FaultClass::RequestStall => Fault::DelayRequest {
                client,
                node,
                extra: size,
            },
            FaultClass::Failover => Fault::Failover,
            FaultClass::ClientCrash => Fault::CrashClient {
                client,
                when: CrashWhen::Any,
            },
        }
    }
}

impl fmt::Display for FaultClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// The budgets of a generated schedule, one per [`FaultClass`]: `budget[class]` reads or sets
/// one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FaultBudget {
    /// Each class's budget, at the class's place in [`FaultClass::ALL`].
    classes: [KindBudget; FaultClass::ALL.len()],
    /// Which client a client crash is aimed at, and when it may strike (over
    /// [`pinned_client`](FaultBudget::pinned_client): the scenario's aim is what the model
    /// allows).
    pub client_crash_aim: ClientFaultAim,
    /// Aim every node fault (jump, crash, isolation) at this node instead of a drawn one.
    pub pinned_node: Option<usize>,
    /// Aim every client fault (jump, pause, storage delay) at this client instead of a drawn
    /// one.
    pub pinned_client: Option<usize>,
}

impl Index<FaultClass> for FaultBudget {
    type Output = KindBudget;

    fn index(&self, class: FaultClass) -> &KindBudget {
        &self.classes[class as usize]
    }
}

impl IndexMut<FaultClass> for FaultBudget {
    fn index_mut(&mut self, class: FaultClass) -> &mut KindBudget {
        &mut self.classes[class as usize]
    }
}

impl FaultBudget {
    /// No faults at all.
    pub const NONE: FaultBudget = FaultBudget {
        classes: [KindBudget::NONE; FaultClass::ALL.len()],
        client_crash_aim: ClientFaultAim::ANY,
        pinned_node: None,
        pinned_client: None,
    };

    /// Every class with its budget, in [`FaultClass::ALL`] order.
    pub fn kinds(&self) -> impl Iterator<Item = (FaultClass, KindBudget)> + '_ {
        FaultClass::ALL
            .into_iter()
            .map(|class| (class, self[class]))
    }

    /// Draws the schedule: for each class in [`FaultClass::ALL`] order,
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
        let mut schedule = Vec::new();
        let last_tick = duration.0.saturating_sub(1);
        for (class, budget) in self.kinds() {
            for _ in 0..budget.count {
                let at = Millis(uniform(rng, 0, last_tick));
                let fault = self.draw_fault(rng, budget, class, nodes, clients);
                schedule.push(ScheduledFault { at, fault });
            }
        }
        schedule.sort_by_key(|f| f.at);
        schedule
    }

    /// One fault of a kind: its size and its target drawn, or the pinned target.
    fn draw_fault(
        &self,
        rng: &mut ChaCha8Rng,
        budget: KindBudget,
        class: FaultClass,
        nodes: usize,
        clients: usize,
    ) -> Fault {
        let size = Millis(uniform(rng, budget.min.0, budget.max.0));
        self.make_fault(rng, size, class, nodes, clients)
    }

    /// One fault of size `size`, its target drawn or pinned.
    fn make_fault(
        &self,
        rng: &mut ChaCha8Rng,
        size: Millis,
        class: FaultClass,
        nodes: usize,
        clients: usize,
    ) -> Fault {
        // Drawn even when pinned, so that pinning never shifts later draws.
        let node = uniform(rng, 0, nodes.saturating_sub(1) as u64) as usize;
        let client = uniform(rng, 0, clients.saturating_sub(1) as u64) as usize;
        let node = self.pinned_node.unwrap_or(node);
        let client = self.pinned_client.unwrap_or(client);
        self.aim_client_crash(class.make(node, client, size))
    }

    /// A client crash aimed as the scenario aims it: at its client, when it allows.
    fn aim_client_crash(&self, fault: Fault) -> Fault {
        match fault {
            Fault::CrashClient { client, .. } => Fault::CrashClient {
                client: self.client_crash_aim.client.map_or(client, usize::from),
                when: self.client_crash_aim.when,
            },
            other => other,
        }
    }
}

/// An event of a run that an aimed fault waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Anchor {
    /// The node set a key: a clock jump, crash or isolation after it strikes while a key is
    /// live. For the separate counter node (one index past the lock nodes), it handed out a
    /// token.
    KeySet {
        /// Which node.
        node: usize,
    },
    /// The client started an acquisition (T1).
    Started {
        /// Which client.
        client: usize,
    },
    /// The client acquired: a jump of its clock after it strikes while it believes, and a
    /// delayed request after it is its extension's or its release's.
    Acquired {
        /// Which client.
        client: usize,
    },
    /// The client checked its lease before a storage operation, which it sends one tick later:
    /// a pause or a storage delay one tick after the check strikes between the check and the
    /// send, Kleppmann's window.
    Checked {
        /// Which client.
        client: usize,
    },
}

impl fmt::Display for Anchor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Anchor::KeySet { node } => write!(f, "{} sets a key", Process::node(node)),
            Anchor::Started { client } => write!(f, "{} starts acquiring", Process::client(client)),
            Anchor::Acquired { client } => write!(f, "{} acquires", Process::client(client)),
            Anchor::Checked { client } => {
                write!(f, "{} checks its lease", Process::client(client))
            }
        }
    }
}

/// A fault that strikes `after` the `nth` occurrence of its anchor (counted from 1), instead
/// of at a time drawn before the run: the windows that matter (a key's lifetime, the gap
/// between a lease check and the storage operation) are short, so uniform times rarely hit
/// them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AimedFault {
    /// The event it waits for.
    pub anchor: Anchor,
    /// Which occurrence of the event, from 1.
    pub nth: u32,
    /// How long after the event it strikes (at least 1 ms: it strikes at a later tick).
    pub after: Millis,
    /// What happens.
    pub fault: Fault,
}

impl fmt::Display for AimedFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} after {} (time {}): {}",
            self.after, self.anchor, self.nth, self.fault
        )
    }
}

/// What one run of a swarm search drew: which fault kinds it enabled, and the faults it aims
/// at windows (the rest of its faults strike at drawn times, listed in the schedule).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct SwarmFaults {
    /// The classes this run enabled.
    pub enabled: Vec<FaultClass>,
    /// The faults at drawn times.
    pub timed: Vec<ScheduledFault>,
    /// The faults waiting for an event.
    pub aimed: Vec<AimedFault>,
    /// In a focused run, the client every client fault is aimed at (else `None`): a run
    /// that aims its clients' starts ([`WorkloadConfig::rival_start`]) lets it begin first, so
    /// that the holder is the client its faults wait for.
    ///
    /// [`WorkloadConfig::rival_start`]: super::WorkloadConfig::rival_start
    pub focused_client: Option<usize>,
}

/// The facts a swarm draw aims with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Aim {
    /// The run's length; timed faults strike in `[0, duration)`.
    pub duration: Millis,
    /// Nodes in the world.
    pub nodes: usize,
    /// Clients in the world.
    pub clients: usize,
    /// The lock's TTL: a fault aimed at a key or a lease strikes within one TTL of it.
    pub ttl: Millis,
    /// How many times a holder checks its lease per lock, one check per storage operation
    /// (0 without storage work): a fault aimed at a check picks one of them.
    pub checks: u32,
    /// The replicated master, if any: a failover strikes within one TTL of a key it set.
    pub failover_node: Option<usize>,
}

impl FaultBudget {
    /// Draws a swarm run: each kind with a budget is enabled with probability 1/2 and then
    /// has 1 to `count` faults (never more than the budget, so never more than the model
    /// allows); three faults in four are aimed at a window ([`Anchor`]), the rest strike at
    /// uniform times. Every draw comes from `rng`, so the seed replays the run.
    pub fn draw_swarm(&self, rng: &mut ChaCha8Rng, aim: Aim) -> SwarmFaults {
        let mut drawn = SwarmFaults::default();
        let mut this = *self;
        let focus = Focus::draw(rng, &aim);
        if focus.focused {
            this.pinned_node.get_or_insert(focus.node);
            drawn.focused_client = Some(*this.pinned_client.get_or_insert(focus.client));
        }
        for (class, budget) in this.kinds() {
            if budget.count == 0 || uniform(rng, 0, 1) == 0 {
                continue;
            }
            drawn.enabled.push(class);
            // A late request is asynchrony rather than a fault: it stays unfocused, so one
            // client's request to one node and another's to another can both be late.
            let this = if class.kind().is_none() { *self } else { this };
            // Half the enabled kinds spend their whole budget: faults that share a budget
            // (two jumps within one drift) break safety only together.
            let spent = uniform(rng, 1, u64::from(budget.count));
            let count = if uniform(rng, 0, 1) == 0 {
                u64::from(budget.count)
            } else {
                spent
            };
            // Half the time a late request is one client's whole round: each request waits
            // while its node is busy, so the client takes every node that frees up in time.
            if class == FaultClass::RequestDelay && uniform(rng, 0, 1) == 1 {
                drawn.delay_one_round(rng, &aim);
            }
            for step in 0..count as usize {
                let size = draw_size(rng, budget);
                let mut fault = this.make_fault(rng, size, class, aim.nodes, aim.clients);
                if class == FaultClass::RequestStall && focus.focused {
                    focus.aim_stall(&mut fault, &this, step, &aim);
                }
                let shot = Shot::draw(rng, fault, &aim);
                drawn.place(rng, shot, class, &aim, &focus);
            }
        }
        drawn.timed.sort_by_key(|f| f.at);
        drawn
    }
}

/// A fault's size: boundaries are where the verdicts flip, so a quarter of the sizes are the
/// smallest, a quarter the largest.
fn draw_size(rng: &mut ChaCha8Rng, budget: KindBudget) -> Millis {
    match uniform(rng, 0, 3) {
        0 => budget.min,
        1 => budget.max,
        _ => Millis(uniform(rng, budget.min.0, budget.max.0)),
    }
}

/// Where a swarm run focuses its faults, drawn whether or not the run is focused.
struct Focus {
    node: usize,
    client: usize,
    /// Whether this run focuses at all.
    focused: bool,
    /// The check every fault aimed at a check waits for.
    check: u32,
}

impl Focus {
    fn draw(rng: &mut ChaCha8Rng, aim: &Aim) -> Focus {
        // Half the runs focus every node fault on one node and every client fault on one
        // client, so that faults that only break safety together (two jumps, a crash and a
        // jump) meet on the same process.
        let node = uniform(rng, 0, aim.nodes.saturating_sub(1) as u64) as usize;
        let client = uniform(rng, 0, aim.clients.saturating_sub(1) as u64) as usize;
        let focused = uniform(rng, 0, 1) == 1;
        // A focused run aims every fault at a check on the same check, so that a pause and a
        // storage delay meet on one op (the write, say, which a late checker sends last).
        let check = uniform(rng, 1, u64::from(aim.checks.max(1))) as u32;
        Focus {
            node,
            client,
            focused,
            check,
        }
    }

    /// In a focused run the stalls are aimed around the focus: the focused client's
    /// request to the node after the focused one, the next client's to the node
    /// after that, and so on. The focused client then wins the focused node and
    /// another without the first, and when the focused node fails its rival wins
    /// it and that first node without the other: two quorums that share only the
    /// node whose memory a crash or a failover took.
    fn aim_stall(&self, fault: &mut Fault, budget: &FaultBudget, step: usize, aim: &Aim) {
        if let Fault::DelayRequest { client, node, .. } = fault {
            let (clients, nodes) = (aim.clients.max(1), aim.nodes.max(1));
            let focus_node = budget.pinned_node.unwrap_or(self.node);
            let focus_client = budget.pinned_client.unwrap_or(self.client);
            *client = (focus_client + step) % clients;
            // Never the focused node itself: both quorums need it.
            *node = (focus_node + 1 + step % nodes.saturating_sub(1).max(1)) % nodes;
        }
    }
}

/// One drawn fault with where it may be aimed.
struct Shot {
    fault: Fault,
    /// Whether it waits for its window (three in four), rather than striking at a time.
    aimed: bool,
    /// Its window and how long after it the fault strikes, if its kind has one.
    anchor: Option<(Anchor, u64)>,
    /// Which key a node sets, for a fault aimed at a key.
    nth: u32,
}

impl Shot {
    fn draw(rng: &mut ChaCha8Rng, fault: Fault, aim: &Aim) -> Shot {
        let ttl = aim.ttl.0.max(1);
        let aimed = uniform(rng, 0, 3) > 0;
        // Half the aimed faults strike early in a key's or a lease's life, a quarter
        // of them at once.
        let when = match uniform(rng, 0, 3) {
            0 => 1,
            1 => uniform(rng, 1, ttl.div_ceil(4)),
            _ => uniform(rng, 1, ttl),
        };
        // Mostly the first key a node sets: the holder's, whose early end matters.
        let nth = match uniform(rng, 0, 3) {
            0 => uniform(rng, 1, aim.clients.max(1) as u64) as u32,
            _ => 1,
        };
        let which = uniform(rng, 0, 2);
        Shot {
            fault,
            aimed,
            anchor: window(fault, aim, when, which),
            nth,
        }
    }
}

/// The window a fault of this kind is aimed at, and how long after it it strikes; `which`
/// (0 to 2) picks between a kind's windows.
fn window(fault: Fault, aim: &Aim, when: u64, which: u64) -> Option<(Anchor, u64)> {
    match fault {
        Fault::ClockJump {
            process: Process::Node(node),
            ..
        } => Some((
            Anchor::KeySet {
                node: usize::from(node),
            },
            when,
        )),
        Fault::Crash { node, .. } | Fault::Isolate { node, .. } => {
            Some((Anchor::KeySet { node }, when))
        }
        Fault::Failover => aim
            .failover_node
            .map(|node| (Anchor::KeySet { node }, when)),
        // A client dies while acquiring (its SETs out, its round undecided) or
        // while it holds the lock; only the latter when it is aimed at a holder.
        Fault::CrashClient {
            client,
            when: CrashWhen::Holding,
        } => Some((Anchor::Acquired { client }, when)),
        Fault::CrashClient { client, .. } => Some(match which {
            0 | 1 => (Anchor::Started { client }, when),
            _ => (Anchor::Acquired { client }, when),
        }),
        Fault::ClockJump {
            process: Process::Client(client),
            ..
        } => Some((
            Anchor::Acquired {
                client: usize::from(client),
            },
            when,
        )),
        Fault::Pause { client, .. } => Some(match which {
            0 | 1 if aim.checks > 0 => (Anchor::Checked { client }, 1),
            0 | 1 => (Anchor::Started { client }, when),
            _ => (Anchor::Acquired { client }, when),
        }),
        Fault::DelayStorageOp { client, .. } => Some((Anchor::Checked { client }, 1)),
        // The next request is the first round's when the delay strikes at once;
        // a third of the time it waits for the client to acquire, so the late
        // request is its extension's or its release's (the model leaves any
        // request in flight as long as it likes).
        Fault::DelayRequest { client, .. } if which == 2 => Some((Anchor::Acquired { client }, 1)),
        Fault::DelayRequest { .. } => None,
    }
}

impl SwarmFaults {
    /// One client's whole round one tick late: the hold, not the delay, decides when each
    /// request lands, and a request to a free node goes through at once.
    fn delay_one_round(&mut self, rng: &mut ChaCha8Rng, aim: &Aim) {
        let client = uniform(rng, 0, aim.clients.saturating_sub(1) as u64) as usize;
        for node in 0..aim.nodes {
            self.timed.push(ScheduledFault {
                at: Millis::ZERO,
                fault: Fault::DelayRequest {
                    client,
                    node,
                    extra: Millis(1),
                },
            });
        }
    }

    /// Adds `shot` to the aimed faults, or to the timed ones.
    fn place(
        &mut self,
        rng: &mut ChaCha8Rng,
        shot: Shot,
        class: FaultClass,
        aim: &Aim,
        focus: &Focus,
    ) {
        let Shot {
            fault,
            aimed,
            anchor,
            nth,
        } = shot;
        match anchor {
            Some((anchor, after)) if aimed => self.aimed.push(AimedFault {
                anchor,
                // One of the checks of the client's lock.
                nth: if matches!(anchor, Anchor::Checked { .. }) {
                    let drawn = uniform(rng, 1, u64::from(aim.checks.max(1))) as u32;
                    if focus.focused { focus.check } else { drawn }
                } else if matches!(anchor, Anchor::KeySet { .. }) {
                    nth
                } else {
                    1
                },
                after: Millis(after),
                fault,
            }),
            None if aimed => self.timed.push(ScheduledFault {
                at: Millis::ZERO,
                fault,
            }),
            // A stall at a drawn time would mostly stall a request nobody waits
            // for; unaimed, it stalls the client's first round.
            _ if class == FaultClass::RequestStall => self.timed.push(ScheduledFault {
                at: Millis::ZERO,
                fault,
            }),
            _ => self.timed.push(ScheduledFault {
                at: Millis(uniform(rng, 0, aim.duration.0.saturating_sub(1))),
                fault,
            }),
        }
    }
}

impl fmt::Display for FaultBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (class, budget) in self.kinds() {
            if budget.count == 0 {
                continue;
            }
            if !first {
                write!(f, ", ")?;
            }
            first = false;
            write!(f, "{class} {budget}")?;
        }
        if first {
            write!(f, "none")?;
        }
        if let Some(node) = self.pinned_node {
            write!(f, "; node faults pinned to {}", Process::node(node))?;
        }
        if let Some(client) = self.pinned_client {
            write!(f, "; client faults pinned to {}", Process::client(client))?;
        }
        if self[FaultClass::ClientCrash].count > 0 && self.client_crash_aim != ClientFaultAim::ANY {
            write!(f, "; client crashes aimed at {}", self.client_crash_aim)?;
        }
        Ok(())
    }
}

/// A jump size as a signed step (sizes are validated far below `i64::MAX`).
fn size_ms(size: Millis) -> i64 {
    i64::try_from(size.0).unwrap_or(i64::MAX)
}

/// Where a run's faults come from.
// One plan per configuration, built once and cloned rarely: boxing the budget would only make
// every struct literal noisier.
#[allow(clippy::large_enum_variant)]
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
        let mut budget = FaultBudget::NONE;
        budget[FaultClass::NodeJumpForward] = KindBudget::new(3, Millis(5), Millis(9));
        budget[FaultClass::Pause] = KindBudget::new(2, Millis(100), Millis(100));
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
    fn a_swarm_draw_stays_within_the_budget_and_replays() {
        let mut budget = FaultBudget::NONE;
        budget[FaultClass::NodeJumpForward] = KindBudget::new(2, Millis(10), Millis(10));
        budget[FaultClass::Crash] = KindBudget::new(1, Millis(0), Millis(0));
        budget[FaultClass::Pause] = KindBudget::new(1, Millis(1), Millis(30));
        budget[FaultClass::RequestDelay] = KindBudget::new(3, Millis(0), Millis(40));
        let aim = Aim {
            duration: Millis(300),
            nodes: 3,
            clients: 2,
            ttl: Millis(40),
            checks: 2,
            failover_node: None,
        };
        let draw = |seed| budget.draw_swarm(&mut ChaCha8Rng::seed_from_u64(seed), aim);
        let mut kinds_seen = std::collections::BTreeSet::new();
        let mut aimed_seen = 0;
        for seed in 0..200 {
            let drawn = draw(seed);
            assert_eq!(draw(seed), drawn, "seed {seed} replays");
            kinds_seen.extend(drawn.enabled.iter().copied());
            aimed_seen += drawn.aimed.len();
            let faults = drawn
                .timed
                .iter()
                .map(|f| f.fault)
                .chain(drawn.aimed.iter().map(|a| a.fault));
            let (mut jumps, mut crashes, mut pauses) = (0, 0, 0);
            for fault in faults {
                match fault {
                    Fault::ClockJump { by_ms, .. } => {
                        jumps += 1;
                        assert_eq!(by_ms, 10);
                    }
                    Fault::Crash { .. } => crashes += 1,
                    Fault::Pause { duration, .. } => {
                        pauses += 1;
                        assert!((1..=30).contains(&duration.0));
                    }
                    Fault::DelayRequest { node, client, .. } => assert!(node < 3 && client < 2),
                    other => panic!("a kind without a budget: {other:?}"),
                }
            }
            // Never more than the budget (the model's bound); a whole-round request delay
            // is asynchrony, not a budgeted fault.
            assert!(
                jumps <= 2 && crashes <= 1 && pauses <= 1,
                "seed {seed}: {drawn:?}"
            );
            for aimed in &drawn.aimed {
                assert!(aimed.after >= Millis(1) && aimed.after <= Millis(40));
                assert!(aimed.nth >= 1);
            }
        }
        // Every kind is on in some runs, and most faults are aimed.
        assert_eq!(kinds_seen.len(), 4, "{kinds_seen:?}");
        assert!(aimed_seen > 100, "{aimed_seen} aimed faults in 200 draws");
    }

    #[test]
    fn stalls_stall_a_first_round_or_a_holders_next_request() {
        let mut budget = FaultBudget::NONE;
        budget[FaultClass::RequestStall] = KindBudget::new(2, Millis(500), Millis(500));
        let aim = Aim {
            duration: Millis(500),
            nodes: 3,
            clients: 2,
            ttl: Millis(40),
            checks: 0,
            failover_node: None,
        };
        let mut crossed = 0;
        for seed in 0..200 {
            let drawn = budget.draw_swarm(&mut ChaCha8Rng::seed_from_u64(seed), aim);
            // Never at a drawn time: a stalled request nobody waits for is no fault.
            assert!(
                drawn.timed.iter().all(|f| f.at == Millis::ZERO),
                "{drawn:?}"
            );
            assert!(
                drawn
                    .aimed
                    .iter()
                    .all(|a| matches!(a.anchor, Anchor::Acquired { .. })),
                "{drawn:?}"
            );
            let stalls: Vec<(usize, usize)> = drawn
                .timed
                .iter()
                .filter_map(|f| match f.fault {
                    Fault::DelayRequest { client, node, .. } => Some((client, node)),
                    _ => None,
                })
                .collect();
            if let [(c1, n1), (c2, n2)] = stalls[..]
                && c1 != c2
                && n1 != n2
            {
                crossed += 1;
            }
        }
        // Focused runs stall two clients' requests to two different nodes.
        assert!(crossed > 20, "{crossed} crossed pairs in 200 draws");
    }

    #[test]
    fn a_focused_run_aims_its_faults_at_one_check_and_stalls_around_the_focused_node() {
        let mut budget = FaultBudget::NONE;
        budget[FaultClass::Crash] = KindBudget::new(1, Millis(0), Millis(0));
        budget[FaultClass::Pause] = KindBudget::new(1, Millis(1), Millis(30));
        budget[FaultClass::StorageDelay] = KindBudget::new(2, Millis(0), Millis(13));
        budget[FaultClass::RequestStall] = KindBudget::new(3, Millis(500), Millis(500));
        let aim = Aim {
            duration: Millis(500),
            nodes: 3,
            clients: 2,
            ttl: Millis(40),
            checks: 2,
            failover_node: None,
        };
        let (mut focused, mut met) = (0, 0);
        for seed in 0..400 {
            let drawn = budget.draw_swarm(&mut ChaCha8Rng::seed_from_u64(seed), aim);
            let checks: Vec<u32> = drawn
                .aimed
                .iter()
                .filter(|a| matches!(a.anchor, Anchor::Checked { .. }))
                .map(|a| a.nth)
                .collect();
            // Only the checks a lock has.
            assert!(checks.iter().all(|nth| (1..=2).contains(nth)), "{drawn:?}");
            let Some(client) = drawn.focused_client else {
                continue;
            };
            focused += 1;
            // One check, one client: a pause and a storage delay meet on one op.
            assert!(checks.windows(2).all(|w| w[0] == w[1]), "{drawn:?}");
            met += usize::from(checks.len() > 1);
            let crashed = drawn
                .aimed
                .iter()
                .map(|a| a.fault)
                .chain(drawn.timed.iter().map(|f| f.fault))
                .find_map(|fault| match fault {
                    // A focused run pins its node faults to the focused node.
                    Fault::Crash { node, .. } => Some(node),
                    _ => None,
                });
            for fault in drawn.timed.iter().map(|f| f.fault) {
                if let Fault::DelayRequest { node, .. } = fault {
                    assert_ne!(Some(node), crashed, "seed {seed}: {drawn:?}");
                }
            }
            for aimed in &drawn.aimed {
                if let Fault::Pause { client: c, .. } | Fault::DelayStorageOp { client: c, .. } =
                    aimed.fault
                {
                    assert_eq!(c, client, "seed {seed}");
                }
            }
        }
        assert!(focused > 100 && met > 10, "{focused} focused, {met} met");
    }

    #[test]
    fn faults_print_as_sentences() {
        let fault = ScheduledFault {
            at: Millis(40),
            fault: Fault::ClockJump {
                process: Process::node(0),
                by_ms: -7,
            },
        };
        assert_eq!(fault.to_string(), "at 40 ms: clock of n1 jumps -7 ms");
        assert_eq!(FaultBudget::NONE.to_string(), "none");
    }
}
