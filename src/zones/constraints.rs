//! The clock constraint each timing gives on each reading: the core's guard as a number, or,
//! in a symbolic exploration, as a term of its parameter's dimension.

use crate::proto::Guard;

use super::clock_guard::{self, Constraint};
use super::config::ZoneConfig;
use super::timing::{Reading, Timing};

impl ZoneConfig {
    /// The core's guard for `timing`, if the configuration has it.
    pub(crate) fn guard(&self, timing: Timing) -> Option<Guard> {
        match timing {
            Timing::Validity => Some(self.validity),
            Timing::RoundTimeout => Some(self.round_timeout),
            Timing::Belief => Some(self.belief),
            Timing::KeyLive => Some(self.key_live),
            Timing::RestartDelay => Some(self.restart_delay),
            Timing::Young => self.young,
            Timing::Margin => self.storage.as_ref().map(|s| s.margin),
        }
    }

    /// How far ahead of the true span `reading` is, in ticks.
    pub(crate) fn ahead(&self, reading: Reading) -> i32 {
        match reading {
            Reading::Exact => 0,
            Reading::NodeFast => self.node_error,
            Reading::ClientLate => -self.client_error,
        }
    }

    /// Where `timing`'s guard holds on `reading`.
    pub(crate) fn holds(&self, timing: Timing, reading: Reading) -> Constraint {
        self.read(timing, reading, true)
    }

    /// Where `timing`'s guard fails on `reading`.
    pub(crate) fn fails(&self, timing: Timing, reading: Reading) -> Constraint {
        self.read(timing, reading, false)
    }

    fn read(&self, timing: Timing, reading: Reading, holds: bool) -> Constraint {
        let guard = self
            .guard(timing)
            .unwrap_or_else(|| panic!("the configuration has no {timing:?} guard"));
        let ahead = self.ahead(reading);
        let number = if holds {
            clock_guard::holds(guard, ahead)
        } else {
            clock_guard::fails(guard, ahead)
        };
        match &self.parameters {
            None => number,
            Some(parameters) => parameters.symbolic(number, timing, reading),
        }
    }
}
