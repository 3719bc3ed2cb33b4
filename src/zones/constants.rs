//! The timing constants the automaton reads, by name: which of the core's guards, read on
//! which clock reading. Naming them (rather than passing their numbers around) is what lets a
//! symbolic exploration ([`super::parameters`]) read each one as a parameter's term.

use super::clock_guard::Constraint;

/// One of the core's guards the automaton tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Timing {
    /// A won round keeps validity while this holds (`ttl − drift` since T1).
    Validity,
    /// A round stops waiting once this holds.
    RoundTimeout,
    /// A holder believes while this holds.
    Belief,
    /// A node's key lives while this holds (`ttl` since the `SET`).
    KeyLive,
    /// A restarted node serves once this holds.
    RestartDelay,
    /// A restarted node's yes is kept out of a quorum while this holds.
    Young,
    /// A holder sends its next storage op while this holds.
    Margin,
}

impl Timing {
    /// Every timing, in a fixed order.
    pub(crate) const ALL: [Timing; 7] = [
        Timing::Validity,
        Timing::RoundTimeout,
        Timing::Belief,
        Timing::KeyLive,
        Timing::RestartDelay,
        Timing::Young,
        Timing::Margin,
    ];
}

/// How a process reads its clock when it tests a guard.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Reading {
    /// The true span.
    Exact,
    /// A node's clock at the fast end of its error band (`ε_n` ahead).
    NodeFast,
    /// A client's clock at the slow end of its error band (`ε_c` behind), the reading that
    /// favours believing.
    ClientLate,
}

/// Which readings each timing is tested on: a node's on the exact and the fast reading, a
/// holder's on the late one, a round's on the exact one. These are the only pairs the
/// automaton may ask for ([`Constraints`]); a symbolic exploration gives each a term of its
/// own.
pub(crate) const READINGS: [(Timing, Reading); 10] = [
    (Timing::Validity, Reading::Exact),
    (Timing::RoundTimeout, Reading::Exact),
    (Timing::Belief, Reading::ClientLate),
    (Timing::KeyLive, Reading::Exact),
    (Timing::KeyLive, Reading::NodeFast),
    (Timing::RestartDelay, Reading::Exact),
    (Timing::RestartDelay, Reading::NodeFast),
    (Timing::Young, Reading::Exact),
    (Timing::Young, Reading::NodeFast),
    (Timing::Margin, Reading::ClientLate),
];

/// Where each timing's guard holds and fails, on each reading, worked out once per
/// configuration (`None`: the configuration has no such guard).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Constraints(pub(crate) [[Option<[Constraint; 2]>; 3]; 7]);

impl Constraints {
    /// Before the configuration is complete.
    pub(crate) const NONE: Constraints = Constraints([[None; 3]; 7]);
}
