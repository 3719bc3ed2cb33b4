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

/// The most properties a bounded model forwards; the lock's model, with its most user
/// invariants, has to fit (`check` asserts it where it builds one).
pub(crate) const MAX_PROPERTIES: usize = 12;

/// A model `M` with a stop switch.
pub(crate) struct Bounded<M: Model> {
    inner: M,
    properties: Vec<Property<M>>,
    stop: Arc<AtomicBool>,
}

impl<M: Model> Bounded<M> {
    pub(crate) fn new(inner: M, stop: Arc<AtomicBool>) -> Bounded<M> {
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
    pub(crate) fn inner(&self) -> &M {
        &self.inner
    }

    const FORWARDED: [Condition<M>; MAX_PROPERTIES] = [
        forwarded::<M, 0>,
        forwarded::<M, 1>,
        forwarded::<M, 2>,
        forwarded::<M, 3>,
        forwarded::<M, 4>,
        forwarded::<M, 5>,
        forwarded::<M, 6>,
        forwarded::<M, 7>,
        forwarded::<M, 8>,
        forwarded::<M, 9>,
        forwarded::<M, 10>,
        forwarded::<M, 11>,
    ];
}

/// A forwarded property's condition, as stateright holds it.
type Condition<M> = fn(&Bounded<M>, &<M as Model>::State) -> bool;

/// Property `I` of the inner model. stateright's conditions are `fn` pointers, not closures,
/// so each slot is a monomorphised function that looks its condition up by index.
fn forwarded<M: Model, const I: usize>(model: &Bounded<M>, state: &M::State) -> bool {
    (model.properties[I].condition)(&model.inner, state)
}

impl<M: Model> Model for Bounded<M> {
    type State = M::State;
    type Action = M::Action;

    fn init_states(&self) -> Vec<M::State> {
        self.inner.init_states()
    }

    fn actions(&self, state: &M::State, actions: &mut Vec<M::Action>) {
        if !self.stop.load(Ordering::Relaxed) {
            self.inner.actions(state, actions);
        }
    }

    fn next_state(&self, last: &M::State, action: M::Action) -> Option<M::State> {
        self.inner.next_state(last, action)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        self.properties
            .iter()
            .zip(Self::FORWARDED)
            .map(|(p, condition)| Property {
                expectation: p.expectation.clone(),
                name: p.name,
                condition,
            })
            .collect()
    }

    fn within_boundary(&self, state: &M::State) -> bool {
        self.inner.within_boundary(state)
    }
}
