//! The scenario's model as the Explorer serves it, with a link from each path's diagram to
//! the same path as a timeline.

use redlock_lab::model::{RedlockModel, Step, World, breaks};
use redlock_lab::property::Property as Builtin;
use stateright::{Model, Path, Property};

/// A property's condition on the scenario's own model.
type Condition = fn(&RedlockModel, &World) -> bool;

/// `RedlockModel`, step for step and property for property, whose `as_svg` adds a link.
pub(super) struct Linked {
    /// The scenario's model, which decides everything.
    pub inner: RedlockModel,
    /// Where the timelines are served (`http://127.0.0.1:PORT`).
    timelines: String,
    /// The inner model's property conditions, in its order.
    conditions: Vec<Condition>,
}

/// How many properties the wrapper can carry: the built-in ones, with room to spare (the
/// Explorer adds no user invariant).
const MAX_PROPERTIES: usize = 8;

/// A property's condition is a `fn` pointer, which cannot capture the inner one; so the
/// `i`-th property of `Linked` is this fixed function, which calls the inner model's `i`-th.
const CONDITIONS: [fn(&Linked, &World) -> bool; MAX_PROPERTIES] = [
    |m, s| (m.conditions[0])(&m.inner, s),
    |m, s| (m.conditions[1])(&m.inner, s),
    |m, s| (m.conditions[2])(&m.inner, s),
    |m, s| (m.conditions[3])(&m.inner, s),
    |m, s| (m.conditions[4])(&m.inner, s),
    |m, s| (m.conditions[5])(&m.inner, s),
    |m, s| (m.conditions[6])(&m.inner, s),
    |m, s| (m.conditions[7])(&m.inner, s),
];

impl Linked {
    /// `inner`, linking each diagram to `timelines`.
    pub(super) fn new(inner: RedlockModel, timelines: String) -> Linked {
        let conditions = inner
            .properties()
            .iter()
            .take(MAX_PROPERTIES)
            .map(|p| p.condition)
            .collect();
        Linked {
            inner,
            timelines,
            conditions,
        }
    }
}

impl Model for Linked {
    type State = World;
    type Action = Step;

    fn init_states(&self) -> Vec<World> {
        self.inner.init_states()
    }

    fn actions(&self, state: &World, actions: &mut Vec<Step>) {
        self.inner.actions(state, actions);
    }

    fn next_state(&self, last: &World, action: Step) -> Option<World> {
        self.inner.next_state(last, action)
    }

    fn format_action(&self, action: &Step) -> String {
        self.inner.format_action(action)
    }

    /// The inner model's account of the step, first with a ✗ line when the step breaks an
    /// `always` property that held before it (the landing view marks that step in the path).
    fn format_step(&self, last: &World, action: Step) -> Option<String> {
        let account = self.inner.format_step(last, action)?;
        let next = self.inner.next_state(last, action)?;
        let broken = Builtin::ALL
            .into_iter()
            .filter(|&p| breaks(p, &next) && !breaks(p, last))
            .map(|p| breaking_words(p, &next))
            .collect::<Vec<_>>();
        if broken.is_empty() {
            return Some(account);
        }
        Some(format!("{}\n{account}", broken.join("\n")))
    }

    /// The inner model's diagram, then a link to the same path as a timeline (the Explorer
    /// inserts this text as HTML under the state).
    fn as_svg(&self, path: Path<World, Step>) -> Option<String> {
        let encoded = path.encode(&self.inner);
        let svg = self.inner.as_svg(path)?;
        Some(format!(
            "{svg}<p class='timeline-link' style='font:13px sans-serif'><a href='{}/timeline/{encoded}' target='_blank'>this path as a timeline ↗</a></p>",
            self.timelines
        ))
    }

    fn properties(&self) -> Vec<Property<Linked>> {
        self.inner
            .properties()
            .into_iter()
            .zip(CONDITIONS)
            .map(|(p, condition)| Property {
                expectation: p.expectation,
                name: p.name,
                condition,
            })
            .collect()
    }

    fn within_boundary(&self, state: &World) -> bool {
        self.inner.within_boundary(state)
    }
}

/// The ✗ line of a step that breaks `property`, naming who is involved.
fn breaking_words(property: Builtin, state: &World) -> String {
    if property == Builtin::MutualExclusion {
        let believers: Vec<String> = (state.clients())
            .filter(|c| c.believes)
            .map(|c| format!("c{}", c.index + 1))
            .collect();
        return format!(
            "✗ {} breaks here: {} each believe they hold the lock",
            property.name(),
            believers.join(" and ")
        );
    }
    format!("✗ {} breaks here", property.name())
}
