//! The clock constraint each timing gives on each reading: the core's guard as a number, or,
//! in a symbolic exploration, as a term of its parameter's dimension. They are worked out once
//! per configuration ([`Constraints`]): the search asks for them on every symbolic state.

use crate::proto::ClockGuard;

use super::automaton::ZoneConfig;
use super::clock_guard::{self, Constraint};
use super::constants::{Constraints, READINGS, Reading, Timing};
use super::parameters::Parameters;
use super::zone::Term;

impl Constraints {
    /// Every pair of `config`.
    pub(crate) fn of(config: &ZoneConfig) -> Constraints {
        let mut table = Constraints::NONE;
        for (timing, reading) in READINGS {
            table.0[timing as usize][reading as usize] = config
                .guard(timing)
                .map(|_| [true, false].map(|holds| config.read(timing, reading, holds)));
        }
        table
    }
}

impl ZoneConfig {
    /// The core's guard for `timing`, if the configuration has it.
    #[inline]
    pub(crate) fn guard(&self, timing: Timing) -> Option<ClockGuard> {
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
    #[inline]
    pub(crate) fn ahead(&self, reading: Reading) -> i32 {
        match reading {
            Reading::Exact => 0,
            Reading::NodeFast => self.node_error,
            Reading::ClientLate => -self.client_error,
        }
    }

    /// Where `timing`'s guard holds on `reading`.
    #[inline]
    pub(crate) fn holds(&self, timing: Timing, reading: Reading) -> Constraint {
        self.looked_up(timing, reading)[0]
    }

    /// Where `timing`'s guard fails on `reading`.
    #[inline]
    pub(crate) fn fails(&self, timing: Timing, reading: Reading) -> Constraint {
        self.looked_up(timing, reading)[1]
    }

    #[inline]
    fn looked_up(&self, timing: Timing, reading: Reading) -> [Constraint; 2] {
        self.constraints.0[timing as usize][reading as usize]
            .unwrap_or_else(|| panic!("no {timing:?} guard on the {reading:?} reading"))
    }

    /// Where a pending op is still within its wait (stretched by a pause when `paused`), in a
    /// symbolic exploration on its form's dimension; `None`: it may wait for ever.
    pub(crate) fn wait(&self, paused: bool) -> Option<Constraint> {
        let number = self.storage.as_ref()?.allowance(paused)?;
        Some(match &self.parameters {
            None => Constraint::AtMost(Term::number(number)),
            Some(parameters) => parameters.allowance(paused, number),
        })
    }

    /// How far a clock jump moves a clock: a number, or in a symbolic exploration its form's
    /// index plus a number.
    pub(crate) fn jump(&self) -> Term {
        match &self.parameters {
            None => Term::number(self.jump_ticks),
            Some(parameters) => parameters.jump(self.jump_ticks),
        }
    }

    /// Leaves the configuration's timing constants free as `parameters` (a symbolic
    /// exploration), or fixes them again (`None`).
    pub(crate) fn set_parameters(&mut self, parameters: Option<Parameters>) {
        self.parameters = parameters;
        self.constraints = Constraints::of(self);
    }

    fn read(&self, timing: Timing, reading: Reading, holds: bool) -> Constraint {
        let guard = self
            .guard(timing)
            .unwrap_or_else(|| panic!("no {timing:?} guard on the {reading:?} reading"));
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
