//! The one shell every search of a check runs under, whichever engine walks: stateright's
//! checkers, the depth-first engine and the zone search. It holds the check's limits (states
//! or zones, time, memory), reports progress at the check's interval, and says which limit
//! stopped a walk, so every engine stops and speaks alike.

use std::time::{Duration, Instant};

use super::os_memory;

/// How often the memory is read: `/proc` costs a system call.
const MEMORY_SAMPLE: Duration = Duration::from_millis(50);

/// What one check allows all its walks together, counted from its start.
pub(crate) struct Limits {
    /// Unique states (or zones) over every walk.
    pub(crate) max_states: Option<usize>,
    /// Time since the check started.
    pub(crate) time: Option<Duration>,
    /// This process's resident memory, in bytes.
    pub(crate) memory: Option<u64>,
    /// How often progress is reported.
    pub(crate) progress_interval: Duration,
}

/// The limit that stopped a walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Limit {
    /// The walk's budget of states (or zones).
    States,
    /// The deadline.
    Time,
    /// The memory limit.
    Memory,
}

/// What progress is told: unique states (or zones) so far, and seconds since the start.
type ProgressSink<'a> = Box<dyn Fn(usize, f64) + 'a>;

/// The limits and the progress of one check, over every walk it makes.
pub(crate) struct Shell<'a> {
    limits: Limits,
    progress: Option<ProgressSink<'a>>,
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
    /// The shell of a check with these `limits`, telling `progress`, started now.
    pub(crate) fn new(limits: Limits, progress: Option<ProgressSink<'a>>) -> Shell<'a> {
        let start = Instant::now();
        Shell {
            next_report: limits.progress_interval,
            next_memory_sample: Duration::ZERO,
            deadline: limits.time.map(|limit| start + limit),
            limits,
            progress,
            start,
            shown: 0,
        }
    }

    /// When the check started.
    pub(crate) fn start(&self) -> Instant {
        self.start
    }

    /// Whether a walk must be watched at all: a progress callback or a limit.
    pub(crate) fn watching(&self) -> bool {
        self.progress.is_some()
            || self.limits.max_states.is_some()
            || self.deadline.is_some()
            || self.limits.memory.is_some()
    }

    /// Reports `count` states (or zones) once per interval. The cadence runs from the check's
    /// start, not the walk's: a check made of several short walks is still reported once per
    /// interval.
    pub(crate) fn report(&mut self, count: usize) {
        if let Some(progress) = &self.progress
            && self.start.elapsed() >= self.next_report
        {
            self.next_report += self.limits.progress_interval;
            self.shown = self.shown.max(count);
            progress(self.shown, self.start.elapsed().as_secs_f64());
        }
    }

    /// The limit a walk with `count` states of its `budget` has reached, if any: the budget,
    /// the deadline, or (read every [`MEMORY_SAMPLE`]) the memory limit.
    pub(crate) fn limit(&mut self, count: usize, budget: Option<usize>) -> Option<Limit> {
        if budget.is_some_and(|b| count >= b) {
            return Some(Limit::States);
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Some(Limit::Time);
        }
        let limit = self.limits.memory?;
        let elapsed = self.start.elapsed();
        if elapsed < self.next_memory_sample {
            return None;
        }
        self.next_memory_sample = elapsed + MEMORY_SAMPLE;
        os_memory::resident_bytes()
            .is_some_and(|rss| rss > limit)
            .then_some(Limit::Memory)
    }
}
