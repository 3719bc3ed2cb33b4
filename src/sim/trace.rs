//! The trace: every event of a run, stamped with true time, in the order it happened.
//!
//! What a node, a client, the storage, the counter node or a fault does is told in the
//! vocabulary the model checker's stories use ([`crate::event`]): the same [`Event`] with the
//! same actors, read in the same words, so a replayed violation reads like a counterexample.
//! Only what the simulator alone has stays its own: a message handed to the network with its
//! arrival time, a message lost on the way, a scheduled fault that met a state it does not
//! apply to, and a violation found at a tick.
//!
//! Two runs of the same seed and configuration produce equal traces (`Vec<TraceEntry>: Eq`),
//! which is what the replay test compares.

use std::fmt;

use super::fault::{Fault, ScheduledFault};
use super::judge::Violation;
use super::network::Message;
use crate::actor::Actor;
use crate::event::{Event, Moment};
use crate::time::Millis;

/// One event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceEvent {
    /// An actor did something (a node served a request, a client acquired, a fault struck),
    /// told as the model checker tells it. The moment's `t` is the entry's true time. Boxed,
    /// so that the messages, the trace's most frequent entries, stay small to copy.
    Moment(Box<Moment>),
    /// A scheduled fault did not apply in the current state (a crash of a node that is down).
    FaultIgnored(Fault),
    /// A message was handed to the network and will arrive at `arrives`.
    Sent {
        /// The message.
        message: Message,
        /// Its arrival time.
        arrives: Millis,
    },
    /// A message was lost (random loss, or an isolated node at either end).
    Lost {
        /// The message.
        message: Message,
    },
    /// A checked property failed.
    Violation(Violation),
}

impl TraceEvent {
    /// The told event, if this is one.
    pub fn told(&self) -> Option<&Event> {
        match self {
            TraceEvent::Moment(moment) => Some(&moment.event),
            _ => None,
        }
    }
}

/// An event and the true time it happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceEntry {
    /// True time.
    pub at: Millis,
    /// What happened.
    pub event: TraceEvent,
}

impl TraceEntry {
    /// `actor` did `event` at true time `at`, reading `clock` (told only where it differs from
    /// true time, as the model checker tells it).
    pub(super) fn told(at: u64, actor: Actor, clock: Option<Millis>, event: Event) -> TraceEntry {
        TraceEntry::of(at, moment(at, actor, clock, event))
    }

    /// [`told`](TraceEntry::told), the actor handling a message `from` sent.
    pub(super) fn told_from(
        at: u64,
        actor: Actor,
        from: Actor,
        clock: Option<Millis>,
        event: Event,
    ) -> TraceEntry {
        TraceEntry::of(at, moment(at, actor, clock, event).from(from))
    }

    /// The entry of `moment`, which happened at true time `at`.
    fn of(at: u64, moment: Moment) -> TraceEntry {
        TraceEntry {
            at: Millis(at),
            event: TraceEvent::Moment(Box::new(moment)),
        }
    }
}

/// `actor` did `event` at true time `at`, its clock reading `clock` where it differs.
fn moment(at: u64, actor: Actor, clock: Option<Millis>, event: Event) -> Moment {
    let t = u32::try_from(at).expect("a run is shorter than MAX_DURATION, far below u32::MAX");
    let mut moment = Moment::new(t, actor, event);
    moment.clock = clock
        .map(Millis::since_origin)
        .filter(|&reads| reads != i64::from(t));
    moment
}

impl fmt::Display for TraceEntry {
    /// One event: a told one in the words of the checker's stories (`c1 acquires n1 n2 (T2=…,
    /// validity …), believes it holds the lock until its clock reads …`, `n1 sets c1's key,
    /// expiring when n1's clock reads …`), a fault marked as the story's diagrams mark it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:>8}  ", format!("t={}", self.at.0))?;
        match &self.event {
            TraceEvent::Moment(moment) => {
                let mark = if moment.is_fault() { "⚡ " } else { "" };
                // The simulator counts true time in milliseconds, so its amounts are milliseconds.
                write!(f, "{mark}{}", moment.sentence_in(crate::time::Unit::Millis))
            }
            TraceEvent::FaultIgnored(fault) => write!(f, "fault ignored (does not apply): {fault}"),
            TraceEvent::Sent { message, arrives } => write!(
                f,
                "{} sends {} to {} (arrives t={})",
                message.from, message.payload, message.to, arrives.0
            ),
            TraceEvent::Lost { message } => write!(
                f,
                "{}'s {} to {} is lost in the network",
                message.from, message.payload, message.to
            ),
            TraceEvent::Violation(violation) => write!(f, "VIOLATION {violation}"),
        }
    }
}

/// Prints a schedule, one line per fault, faults alike told once with their count.
pub(crate) fn schedule_text(schedule: &[ScheduledFault]) -> String {
    if schedule.is_empty() {
        return "  (none)\n".to_owned();
    }
    counted(schedule)
        .into_iter()
        .map(|line| format!("  {line}\n"))
        .collect()
}

/// Each distinct text of `items` once, in the order first seen, with `(×n)` when `n` of them
/// read alike: a swarm run may draw two faults that strike the same way at the same moment,
/// and a reader sees one line for them rather than the same line twice.
pub(crate) fn counted<T: fmt::Display>(items: impl IntoIterator<Item = T>) -> Vec<String> {
    let mut lines: Vec<(String, usize)> = Vec::new();
    for item in items {
        let text = item.to_string();
        match lines.iter_mut().find(|(line, _)| *line == text) {
            Some((_, count)) => *count += 1,
            None => lines.push((text, 1)),
        }
    }
    lines
        .into_iter()
        .map(|(line, count)| match count {
            1 => line,
            n => format!("{line} (×{n})"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::CLOCK_ORIGIN;

    /// A reading of a clock that started at the origin and has run `ms`.
    fn reads(ms: u64) -> Millis {
        Millis(CLOCK_ORIGIN as u64 + ms)
    }

    #[test]
    fn a_told_entry_reads_as_the_checkers_story_with_the_clock_only_where_it_differs() {
        let set = Event::KeySet {
            client: Actor::client(0),
            node: Actor::node(1),
            expires_at: 107,
            early_over: None,
            fast_by: 0,
            restart_over: false,
            counter: None,
        };
        let skewed = TraceEntry::told(5, Actor::node(1), Some(reads(7)), set.clone());
        assert_eq!(
            skewed.to_string(),
            "     t=5  n2 sets c1's key, expiring when n2's clock reads 107 [n2's clock reads 7]"
        );
        let on_time = TraceEntry::told(7, Actor::node(1), Some(reads(7)), set);
        assert!(on_time.to_string().ends_with("reads 107"), "{on_time}");
    }

    #[test]
    fn a_fault_is_marked() {
        let jump = Event::ClockJumped {
            ticks: 20,
            reads: 25,
        };
        let entry = TraceEntry::told(5, Actor::node(1), None, jump);
        assert_eq!(
            entry.to_string(),
            "     t=5  ⚡ n2's clock jumps +20 (it now reads 25)"
        );
    }
}
