//! Who acted, when and on which clock: a [`Moment`].

use crate::actor::Actor;

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
        match (self.delayed, self.from) {
            (Some(ticks), Some(from)) => {
                let request = match self.event {
                    Event::KeyExtended { .. } | Event::ExtensionRefused { .. } => "extension",
                    Event::FenceRaised { .. } | Event::FenceRefused { .. } => "fencing write-back",
                    _ => "SET",
                };
                let unit = if ticks == 1 { "tick" } else { "ticks" };
                format!(
                    "gets {from}'s {request} after {ticks} {unit} in the network and {}",
                    self.event
                )
            }
            _ => self.event.to_string(),
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
        let clock = self
            .clock
            .map(|c| format!(" [{}'s clock reads {c}]", self.actor))
            .unwrap_or_default();
        match self.event {
            Event::KeyExpired { .. } => format!("{}: {}{clock}", self.actor, self.event),
            Event::ClockJumped { .. } => format!("{}'s {}", self.actor, self.event),
            Event::RequestLost { .. }
            | Event::RequestDelayed { .. }
            | Event::StorageOpDelayed { .. } => {
                let words = self.event.to_string();
                let words = words.strip_prefix("its ").unwrap_or(&words);
                format!("{}'s {words}", self.actor)
            }
            Event::UpdateLost { .. }
            | Event::WriteOnStaleRead { .. }
            | Event::TimePassed { .. } => format!("{}", self.event),
            _ => format!("{} {}{clock}", self.actor, self.words()),
        }
    }
}
