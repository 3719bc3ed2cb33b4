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
//! under way, `scale.rs` maps true time across (cut where a long quiet stretch would hide
//! a short one), `layout.rs` places it, `svg.rs`, `axis.rs` and `legend.rs` draw it in `palette.rs`'s colours,
//! `steps.rs` numbers the list under it, `html.rs` makes the page.

mod axis;
mod ends;
mod facts;
mod html;
mod layout;
mod legend;
mod palette;
mod read;
mod scale;
mod servers;
mod steps;
mod svg;

pub use facts::Timeline;
pub use html::{PAGE_SCRIPT, PAGE_STYLE};
pub use svg::escape;
