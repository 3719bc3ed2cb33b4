//! The model as the checker threads see it: the same states, steps and properties, plus a
//! stop switch.
//!
//! stateright's checkers can only be stopped from outside by their own timeout; a state limit
//! or a memory guard needs a switch the watching thread can flip. Once it is on, no state has
//! successors, so the threads check what they already hold and finish. The switch lives here,
//! not in the model, because only a run under limits needs it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use stateright::{Model, Property};

use crate::model::{MAX_USER_INVARIANTS, RedlockModel, Step, World};

/// The most properties one model has: the three built-in `always` properties, `lock acquired`
/// and the user invariants.
const MAX_PROPERTIES: usize = 4 + MAX_USER_INVARIANTS;

/// [`RedlockModel`] with a stop switch.
pub(crate) struct Bounded {
    inner: RedlockModel,
    properties: Vec<Property<RedlockModel>>,
    stop: Arc<AtomicBool>,
}

impl Bounded {
    pub(crate) fn new(inner: RedlockModel, stop: Arc<AtomicBool>) -> Bounded {
        let properties = inner.properties();
        assert!(
            properties.len() <= MAX_PROPERTIES,
            "the model has {} properties, at most {MAX_PROPERTIES} are forwarded",
            properties.len()
        );
        Bounded {
            inner,
            properties,
            stop,
        }
    }

    /// The model without the switch.
    pub(crate) fn inner(&self) -> &RedlockModel {
        &self.inner
    }
}

/// Property `I` of the inner model. stateright's conditions are `fn` pointers, not closures,
/// so each slot is a monomorphised function that looks its condition up by index.
fn forwarded<const I: usize>(model: &Bounded, state: &World) -> bool {
    (model.properties[I].condition)(&model.inner, state)
}

const FORWARDED: [fn(&Bounded, &World) -> bool; MAX_PROPERTIES] = [
    forwarded::<0>,
    forwarded::<1>,
    forwarded::<2>,
    forwarded::<3>,
    forwarded::<4>,
    forwarded::<5>,
    forwarded::<6>,
    forwarded::<7>,
    forwarded::<8>,
    forwarded::<9>,
    forwarded::<10>,
    forwarded::<11>,
];

impl Model for Bounded {
    type State = World;
    type Action = Step;

    fn init_states(&self) -> Vec<World> {
        self.inner.init_states()
    }

    fn actions(&self, state: &World, actions: &mut Vec<Step>) {
        if !self.stop.load(Ordering::Relaxed) {
            self.inner.actions(state, actions);
        }
    }

    fn next_state(&self, last: &World, action: Step) -> Option<World> {
        self.inner.next_state(last, action)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        self.properties
            .iter()
            .zip(FORWARDED)
            .map(|(p, condition)| Property {
                expectation: p.expectation.clone(),
                name: p.name,
                condition,
            })
            .collect()
    }

    fn within_boundary(&self, state: &World) -> bool {
        self.inner.within_boundary(state)
    }
}
