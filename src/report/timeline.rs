//! A counterexample as a timeline a learner reads at a glance: true time across, one lane
//! per client, node and service; each client's rounds and the time it *believes* it holds
//! the lock as bars, each node's keys as bars in their owner's colour, the overlap of two
//! beliefs in red with the instant the property breaks, requests as arrows from send to
//! arrival (a lost one into nothing), faults as shaded regions, the storage's ops with their
//! epoch or token.
//!
//! It reads the same events as every other rendering (the story's lines, see
//! [`crate::model::path_moments`]): `facts.rs` is what it shows, `read.rs` and `servers.rs`
//! read the clients' and the servers' events into it, `ends.rs` closes what the run leaves
//! under way, `layout.rs` places it, `svg.rs` and `legend.rs` draw it, `html.rs` makes the
//! page.

mod ends;
mod facts;
mod html;
mod layout;
mod legend;
mod read;
mod servers;
mod svg;

pub use facts::Timeline;
pub use html::{PAGE_SCRIPT, PAGE_STYLE};
