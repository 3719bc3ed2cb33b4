//! The debate's arguments, as the index groups the scenarios.
//!
//! A scenario file carries no group of its own; what breaks in it, and what it grants, say
//! which argument it takes part in: liveness alone when only liveness is in question (no
//! safety property breaks), else a storage behind the lock, a crash or a failover, a clock
//! fault, a mistake in the client. The first of these that a file has decides, in that
//! order, so a file with a crash and a clock jump (a restart delay measured on a jumping
//! clock) sits with the restarts, where its boundary pair sits, and a single node whose
//! crash lets two clients in sits with the restarts although it also checks liveness.

use redlock_lab::fault::FaultKind;
use redlock_lab::scenario::{Ingredient, Scenario, Verdict, property};

/// One argument of the debate, a section of the index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Argument {
    /// Nothing fails and nobody errs.
    Baseline,
    /// Clocks that jump or run at the wrong rate.
    Clocks,
    /// Nodes that crash, restart or fail over.
    Restarts,
    /// The algorithm's own steps: validity check, release, extension, tokens, pauses.
    Algorithm,
    /// Pauses, delays and fencing between the lock and the storage.
    Storage,
    /// Whether a client gets the lock at all.
    Liveness,
}

impl Argument {
    /// Every argument, in the index's order.
    pub(super) const ALL: [Argument; 6] = [
        Argument::Baseline,
        Argument::Clocks,
        Argument::Restarts,
        Argument::Algorithm,
        Argument::Storage,
        Argument::Liveness,
    ];

    /// The argument `scenario` takes part in.
    pub(super) fn of(scenario: &Scenario) -> Argument {
        let present = Ingredient::present(scenario);
        let has = |list: &[Ingredient]| list.iter().any(|i| present.contains(i));
        let safety_breaks = [
            property::MUTUAL_EXCLUSION,
            property::STORAGE_SAFETY,
            property::NO_LOST_UPDATE,
        ]
        .iter()
        .any(|p| scenario.expected(p) == Some(Verdict::Violated));
        if scenario.expected(property::EVENTUALLY_ACQUIRED).is_some() && !safety_breaks {
            Argument::Liveness
        } else if scenario.storage.is_some() {
            Argument::Storage
        } else if has(&[
            Ingredient::Fault(FaultKind::Crash),
            Ingredient::Fault(FaultKind::Failover),
        ]) {
            Argument::Restarts
        } else if has(&[
            Ingredient::Fault(FaultKind::ClockJump),
            Ingredient::Fault(FaultKind::NodeClockError),
            Ingredient::Fault(FaultKind::ClientClockError),
        ]) {
            Argument::Clocks
        } else if !present.is_empty()
            || scenario.lock.extensions > 0
            || scenario.faults.pauses.is_some()
        {
            Argument::Algorithm
        } else {
            Argument::Baseline
        }
    }

    /// The section's anchor in the index.
    pub(super) fn anchor(self) -> &'static str {
        match self {
            Argument::Baseline => "baseline",
            Argument::Clocks => "clocks",
            Argument::Restarts => "restarts",
            Argument::Algorithm => "algorithm",
            Argument::Storage => "storage",
            Argument::Liveness => "liveness",
        }
    }

    /// The section's heading.
    pub(super) fn heading(self) -> &'static str {
        match self {
            Argument::Baseline => "Redlock when nothing fails",
            Argument::Clocks => "Clocks: jumps, drift and the drift allowance",
            Argument::Restarts => "Crashes, restarts and failover",
            Argument::Algorithm => "The algorithm as specified, and its mistakes",
            Argument::Storage => "Pauses, delays and fencing: what the storage sees",
            Argument::Liveness => "Liveness: does anyone get the lock",
        }
    }

    /// What the section is about, in one sentence.
    pub(super) fn summary(self) -> &'static str {
        match self {
            Argument::Baseline => {
                "The control cases: no fault, no mistake, only the interleavings of messages and clients."
            }
            Argument::Clocks => {
                "Nodes expire keys on their own clocks and clients time leases on theirs; every clock error a lease meets draws on one drift allowance."
            }
            Argument::Restarts => {
                "A node that loses a key while a lease depends on it gives a second client a majority; persistence, a restart delay or the client's guard decide."
            }
            Argument::Algorithm => {
                "The validity check, compare-and-delete, a majority quorum, majority extensions and unique tokens, each shown by the scenario that leaves it out."
            }
            Argument::Storage => {
                "No lease lock stops a paused holder's late write; a fencing token checked by the storage does, if the token is right."
            }
            Argument::Liveness => {
                "Checked on bounded runs: who eventually acquires, under crashes, contention and timeouts."
            }
        }
    }
}
