//! Who acted, when and on which clock: a [`Moment`].

use crate::actor::Actor;
use crate::time::Unit;

use super::what::Event;

/// One event with who, when and on which clock.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "model", derive(serde::Serialize))]
pub struct Moment {
    /// True time, in ticks.
    pub t: u32,
    /// Who acts.
    pub actor: Actor,
    /// Who sent the message the actor handles, if any (an arrow in diagrams).
    pub from: Option<Actor>,
    /// The actor's own clock reading, when it differs from true time.
    pub clock: Option<i64>,
    /// What happened.
    pub event: Event,
    /// Ticks the request a node handles spent in the network since the client sent it, when
    /// more than none (only a whole run knows: the model checker adds it when it gathers a path's events).
    #[cfg_attr(feature = "model", serde(skip_serializing_if = "Option::is_none"))]
    pub delayed: Option<u32>,
}

impl Moment {
    /// `actor` did `event` at true time `t`, on a clock that reads true time, handling no
    /// message.
    pub(crate) fn new(t: u32, actor: Actor, event: Event) -> Moment {
        Moment {
            t,
            actor,
            from: None,
            clock: None,
            event,
            delayed: None,
        }
    }

    /// The event in words without its actor, with the request's delay in the network when
    /// it had one (`gets c2's SET after 2 ticks in the network and sets c2's key, …`).
    pub fn words(&self) -> String {
        self.words_in(Unit::Ticks)
    }

    /// [`words`](Moment::words) with amounts of time in `unit`.
    pub fn words_in(&self, unit: Unit) -> String {
        match (self.delayed, self.from) {
            (Some(delay), Some(from)) => {
                let request = match self.event {
                    Event::KeyExtended { .. } | Event::ExtensionRefused { .. } => "extension",
                    Event::FenceRaised { .. } | Event::FenceRefused { .. } => "fencing write-back",
                    _ => "SET",
                };
                format!(
                    "gets {from}'s {request} after {} in the network and {}",
                    unit.amount(u64::from(delay)),
                    self.event.in_unit(unit)
                )
            }
            _ => self.event.in_unit(unit).to_string(),
        }
    }

    /// The same moment, handling a message `from` sent.
    pub(crate) fn from(mut self, from: Actor) -> Moment {
        self.from = Some(from);
        self
    }

    /// Whether the event is a fault.
    pub fn is_fault(&self) -> bool {
        self.event.is_fault()
    }

    /// The event as one sentence with its actor (`n1 sets c1's key, …`).
    pub fn sentence(&self) -> String {
        self.sentence_in(Unit::Ticks)
    }

    /// [`sentence`](Moment::sentence) with amounts of time in `unit` (a simulator run's
    /// milliseconds).
    pub fn sentence_in(&self, unit: Unit) -> String {
        let clock = self
            .clock
            .map(|c| format!(" [{}'s clock reads {c}]", self.actor))
            .unwrap_or_default();
        let event = self.event.in_unit(unit);
        match self.event {
            Event::KeyExpired { .. } => format!("{}: {event}{clock}", self.actor),
            Event::ClockJumped { .. } => format!("{}'s {event}", self.actor),
            Event::RequestLost { .. }
            | Event::RequestDelayed { .. }
            | Event::StorageOpDelayed { .. } => {
                let words = event.to_string();
                let words = words.strip_prefix("its ").unwrap_or(&words);
                format!("{}'s {words}", self.actor)
            }
            Event::UpdateLost { .. }
            | Event::WriteOnStaleRead { .. }
            | Event::TimePassed { .. } => event.to_string(),
            _ => format!("{} {}{clock}", self.actor, self.words_in(unit)),
        }
    }
}
