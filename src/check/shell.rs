//! The one shell every search of a check runs under, whichever engine walks: stateright's
//! checkers, the depth-first engine and the zone search. It holds the check's limits (states
//! or zones, time, memory), reports progress at the check's interval, and says which limit
//! stopped a walk, so every engine stops and speaks alike.

use std::time::{Duration, Instant};

use super::options::{Check, Progress};
use super::os_memory;
use super::report::StopReason;

/// How often the memory is read: `/proc` costs a system call.
const MEMORY_SAMPLE: Duration = Duration::from_millis(50);

/// The limits and the progress of one check, over every walk it makes.
pub(super) struct Shell<'a> {
    check: &'a Check,
    start: Instant,
    /// When, counted from `start`, progress is next reported.
    next_report: Duration,
    /// When, counted from `start`, the memory is next read.
    next_memory_sample: Duration,
    deadline: Option<Instant>,
    /// The largest count progress has reported: a probe that hands over to depth first is
    /// not counted, but progress does not go back while depth first catches up with it.
    shown: usize,
}

impl<'a> Shell<'a> {
    /// The shell of `check`, started now.
    pub(super) fn new(check: &'a Check) -> Shell<'a> {
        let start = Instant::now();
        Shell {
            check,
            start,
            next_report: check.progress_interval,
            next_memory_sample: Duration::ZERO,
            deadline: check.time_limit.map(|limit| start + limit),
            shown: 0,
        }
    }

    /// When the check started.
    pub(super) fn start(&self) -> Instant {
        self.start
    }

    /// Whether a walk must be watched at all: a progress callback or a limit.
    pub(super) fn watching(&self) -> bool {
        let check = self.check;
        check.progress.is_some()
            || check.max_states.is_some()
            || self.deadline.is_some()
            || check.memory_limit.is_some()
    }

    /// Reports `count` states (or zones) once per interval. The cadence runs from the check's
    /// start, not the walk's: a check made of several short walks is still reported once per
    /// interval.
    pub(super) fn report(&mut self, count: usize) {
        let check = self.check;
        if let Some(progress) = &check.progress
            && self.start.elapsed() >= self.next_report
        {
            self.next_report += check.progress_interval;
            self.shown = self.shown.max(count);
            progress(Progress {
                name: &check.scenario.name,
                unique_states: self.shown,
                seconds: self.start.elapsed().as_secs_f64(),
            });
        }
    }

    /// The limit a walk with `count` states of its `budget` has reached, if any: the budget,
    /// the deadline, or (read every [`MEMORY_SAMPLE`]) the memory limit.
    pub(super) fn limit(&mut self, count: usize, budget: Option<usize>) -> Option<StopReason> {
        if budget.is_some_and(|b| count >= b) {
            return Some(StopReason::StateLimit);
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Some(StopReason::TimeLimit);
        }
        let limit = self.check.memory_limit?;
        let elapsed = self.start.elapsed();
        if elapsed < self.next_memory_sample {
            return None;
        }
        self.next_memory_sample = elapsed + MEMORY_SAMPLE;
        os_memory::resident_bytes()
            .is_some_and(|rss| rss > limit)
            .then_some(StopReason::MemoryLimit)
    }
}
