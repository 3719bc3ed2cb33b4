//! One vocabulary of what happens in a run, which the model checker and the simulator both
//! tell: who acts ([`Actor`](crate::actor::Actor)), what they did ([`Event`], with the
//! numbers in it: clock readings, deadlines, what a client believes) and when ([`Moment`]:
//! true time and the actor's own clock reading).
//!
//! It sits below both executors, so a node that serves a `SET`, a client that acquires or a
//! clock that jumps is one value whichever executor made it, and is said in one set of words
//! (`Display for Event`, [`Moment::sentence`]). What a fault does is written here once, with
//! its words ([`Event::is_fault`], and [`Event::fault_kind`]: which
//! [`FaultKind`](crate::fault::FaultKind) it is); the step of each executor that applies a
//! fault builds its event.
//!
//! True time and clock readings are whole ticks; the simulator's tick is one millisecond, and
//! so is the model's when a scenario is read at a resolution of `1ms`. Clock readings count
//! from where every clock starts ([`Millis::since_origin`](crate::time::Millis::since_origin)).

mod moment;
mod what;
mod words;

pub use moment::Moment;
pub use what::{Event, Nodes};
pub(crate) use words::{persistence_words, unlock_words};
