//! `redlock-lab explore`: the stateright Explorer for one scenario, linked both ways with
//! the timeline.
//!
//! The Explorer is stateright's own page and server; the model it serves wraps the
//! scenario's model (`linked.rs`) only to add, under each path's sequence diagram, a link to
//! that path drawn as a timeline. The timelines are served by a second small server on
//! another loopback port (`timelines.rs`), each step of which links back to its state in the
//! Explorer, as the book's pages do.

mod landing;
mod linked;
mod serve;
mod timelines;

pub(crate) use serve::{Args, run};
