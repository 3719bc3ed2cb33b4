//! The kinds of fault, written once with their words, below every module that grants, applies,
//! refuses or tells one.
//!
//! A scenario grants fault kinds (`[faults.*]`, `[clock]`, `[network]`, `[storage]`,
//! `[failover]`); the model checker and the simulator each apply them in a step of their own;
//! the zone engine refuses the kinds it does not model; a story, `explain`, `check --why` and a
//! simulator's schedule name them. Each of those reads the kind and its words here
//! ([`FaultKind::name`], [`FaultKind::phrase`], [`FaultKind::plural`]) instead of spelling it
//! again, so a new kind is added here, in the schema that grants it and in the step of each
//! executor that applies it.
//!
//! Where a fault may strike is shared too when both executors aim it the same way: a client
//! fault (a crash or a partition) aimed at one client, while it holds the lock
//! ([`ClientFaultAim`]).

use std::fmt;

/// A kind of fault: something the world does to the lock that the correct, fault-free
/// algorithm does not choose.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum FaultKind {
    /// A process's clock steps forward or backward.
    ClockJump,
    /// A node crashes (and may restart, keeping what its persistence keeps).
    Crash,
    /// A client dies for good, without unlocking.
    ClientCrash,
    /// A client is cut off from every node for good: it keeps running and believing, and
    /// nothing it sends arrives (its unlock neither).
    ClientPartition,
    /// A holder pauses (GC, page fault) between its lease check and its storage op.
    Pause,
    /// A node's clock runs fast, so its keys may vanish early.
    NodeClockError,
    /// A client's clock runs slow, so its belief may run late.
    ClientClockError,
    /// A lock request is lost in the network.
    MessageLoss,
    /// A storage op travels in the network for a while.
    StorageDelay,
    /// The master n1 fails and its asynchronous replica is promoted.
    Failover,
    /// Some client cannot reach some node.
    Partition,
}

impl FaultKind {
    /// Every kind, in the order reports list them.
    pub const ALL: [FaultKind; 11] = [
        FaultKind::ClockJump,
        FaultKind::Crash,
        FaultKind::ClientCrash,
        FaultKind::ClientPartition,
        FaultKind::Pause,
        FaultKind::NodeClockError,
        FaultKind::ClientClockError,
        FaultKind::MessageLoss,
        FaultKind::StorageDelay,
        FaultKind::Failover,
        FaultKind::Partition,
    ];

    /// The stable name (`"client crash"`), as JSON and `[expect] mechanism` spell it.
    pub const fn name(self) -> &'static str {
        match self {
            FaultKind::ClockJump => "clock jump",
            FaultKind::Crash => "crash",
            FaultKind::ClientCrash => "client crash",
            FaultKind::ClientPartition => "client partition",
            FaultKind::Pause => "pause",
            FaultKind::NodeClockError => "node clock error",
            FaultKind::ClientClockError => "client clock error",
            FaultKind::MessageLoss => "message loss",
            FaultKind::StorageDelay => "storage delay",
            FaultKind::Failover => "failover",
            FaultKind::Partition => "partition",
        }
    }

    /// The kind in a sentence (`"the client crash"`), for `explain` and `check --why`.
    pub const fn phrase(self) -> &'static str {
        match self {
            FaultKind::ClockJump => "the clock jump",
            FaultKind::Crash => "the crash",
            FaultKind::ClientCrash => "the client crash",
            FaultKind::ClientPartition => "the client partition",
            FaultKind::Pause => "the pause",
            FaultKind::NodeClockError => "the node clock error",
            FaultKind::ClientClockError => "the client clock error",
            FaultKind::MessageLoss => "the message loss",
            FaultKind::StorageDelay => "the storage delay",
            FaultKind::Failover => "the failover",
            FaultKind::Partition => "the partition",
        }
    }

    /// The kind as a budget or a refusal names it (`"client crashes"`: "does not model client
    /// crashes", "1 client crashes left").
    pub const fn plural(self) -> &'static str {
        match self {
            FaultKind::ClockJump => "clock jumps",
            FaultKind::Crash => "crashes",
            FaultKind::ClientCrash => "client crashes",
            FaultKind::ClientPartition => "client partitions",
            FaultKind::Pause => "pauses",
            FaultKind::NodeClockError => "node clock error",
            FaultKind::ClientClockError => "client clock error",
            FaultKind::MessageLoss => "message loss",
            FaultKind::StorageDelay => "storage delays",
            FaultKind::Failover => "failover",
            FaultKind::Partition => "partitions",
        }
    }

    /// Whether the fault strikes at a moment, as a step of its own that a counterexample can
    /// show (a jump, a crash, a pause, a lost request, a failover, a read at the fast end of a
    /// node's error band), rather than a condition the whole run is under (a partition is an
    /// absence; a client's clock error and a storage delay change how a step turns out, not
    /// which steps exist).
    pub const fn strikes(self) -> bool {
        !matches!(
            self,
            FaultKind::ClientClockError | FaultKind::StorageDelay | FaultKind::Partition
        )
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// When a client fault (a crash or a partition) may strike, in the client's lock's life.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CrashWhen {
    /// At any point before the client is done: while it acquires, holds, extends or backs off.
    #[default]
    Any,
    /// Only while the client believes it holds the lock (it holds a lease and its clock is
    /// before the lease's deadline): the holder dies, or is cut off, with its keys set.
    Holding,
}

impl CrashWhen {
    /// The word a scenario file and a printout use (`"any"`, `"holding"`).
    pub const fn word(self) -> &'static str {
        match self {
            CrashWhen::Any => "any",
            CrashWhen::Holding => "holding",
        }
    }
}

/// Where a client fault is aimed, a crash (`[faults.client_crashes]`) or a partition
/// (`[faults.client_partitions]`) alike: which client, and when in its lock's life.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ClientFaultAim {
    /// The one client (0-based) the fault may strike; `None`: any client.
    pub client: Option<u8>,
    /// When it may strike.
    pub when: CrashWhen,
}

impl ClientFaultAim {
    /// Any client, at any point of its lock's life.
    pub const ANY: ClientFaultAim = ClientFaultAim {
        client: None,
        when: CrashWhen::Any,
    };

    /// Whether the aim allows the fault to strike client `client` now, given whether it
    /// believes it holds the lock.
    pub fn allows(self, client: usize, believes: bool) -> bool {
        self.client.is_none_or(|c| usize::from(c) == client)
            && (self.when == CrashWhen::Any || believes)
    }
}

impl fmt::Display for ClientFaultAim {
    /// `c1 while holding`, `any client`, `c2`, `any client while holding`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.client {
            Some(c) => write!(f, "c{}", u32::from(c) + 1)?,
            None => f.write_str("any client")?,
        }
        if self.when == CrashWhen::Holding {
            f.write_str(" while holding")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        for (i, a) in FaultKind::ALL.iter().enumerate() {
            for b in &FaultKind::ALL[i + 1..] {
                assert_ne!(a.name(), b.name());
                assert_ne!(a.plural(), b.plural());
            }
        }
    }

    #[test]
    fn an_aim_allows_only_its_client_and_timing() {
        let aim = ClientFaultAim {
            client: Some(0),
            when: CrashWhen::Holding,
        };
        assert!(aim.allows(0, true));
        assert!(!aim.allows(0, false));
        assert!(!aim.allows(1, true));
        assert!(ClientFaultAim::ANY.allows(1, false));
        assert_eq!(aim.to_string(), "c1 while holding");
        assert_eq!(ClientFaultAim::ANY.to_string(), "any client");
    }
}
