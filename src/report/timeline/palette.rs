//! The picture's colours: one per client and what it owns, and the red of a break.

use crate::actor::Actor;

/// The colour of a break and of an overlap.
pub(super) const RED: &str = "#d7263d";

/// The colour of a client and of what it owns.
pub(super) fn colour(owner: Option<Actor>) -> &'static str {
    match owner {
        Some(Actor::Client(0)) => "#2f6fca",
        Some(Actor::Client(1)) => "#e08a1e",
        Some(Actor::Client(2)) => "#2a9d8f",
        Some(Actor::Client(_)) => "#8e5ac8",
        _ => "#888",
    }
}
