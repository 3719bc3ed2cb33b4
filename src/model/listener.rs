//! Where a step's events go: nowhere while the checker explores, into a list for a story.
//!
//! A step of the model says what it did while it does it ([`World::apply`](super::World)):
//! the node that served a request tells it from the reading it served on, the client that
//! decided a round tells the core's verdict. The checker takes millions of steps and reads
//! no story, so it passes [`Silent`], which drops every event unbuilt: [`Listener::record`] takes
//! a closure, and [`Listener::LISTENS`] lets a step skip work only a story needs.

use crate::event::Moment;

/// A listener for the events of one step.
pub(crate) trait Listener {
    /// Whether events are kept; `false` lets a step skip what only a story reads.
    const LISTENS: bool;

    /// Records the event `moment` builds (not called when nobody listens).
    fn record(&mut self, moment: impl FnOnce() -> Moment);
}

/// The checker's listener: keeps nothing, builds nothing.
pub(crate) struct Silent;

impl Listener for Silent {
    const LISTENS: bool = false;

    #[inline(always)]
    fn record(&mut self, _moment: impl FnOnce() -> Moment) {}
}

/// A story's listener: every event, in the order the step caused it.
impl Listener for Vec<Moment> {
    const LISTENS: bool = true;

    fn record(&mut self, moment: impl FnOnce() -> Moment) {
        self.push(moment());
    }
}
