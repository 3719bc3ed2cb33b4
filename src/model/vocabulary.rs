//! The model's side of the shared vocabulary ([`crate::event`]): the clock an actor reads in a
//! state of the model, and whose key a node holds.

use crate::actor::Actor;
use crate::event::Moment;
use crate::proto::Token;

use super::world::World;

impl Moment {
    /// The moment with its actor's own clock reading in `w`, when it differs from true time.
    pub(super) fn on_clock(mut self, w: &World) -> Moment {
        self.clock = own_clock(w, self.actor);
        self
    }
}

/// The client whose key on node `n` of `w` carries `token` (see [`World::key_owner`]).
pub(super) fn owner_on(w: &World, n: usize, token: Token) -> Actor {
    Actor::client(w.key_owner(n, token))
}

/// The clock reading of `actor` in `w`, if it differs from true time.
fn own_clock(w: &World, actor: Actor) -> Option<i64> {
    let clock = match actor {
        Actor::Client(c) => (w.client_clock(usize::from(c))).since_origin(),
        Actor::Node(n) => (w.node_clock(usize::from(n))).since_origin(),
        _ => return None,
    };
    (clock != i64::from(w.now)).then_some(clock)
}
