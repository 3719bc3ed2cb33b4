//! Redlock as a stateright `Model`: the initial states, the steps a state allows, the
//! properties, and the options (phantom clients, chaos nodes, fewer clients) the checker uses.

use std::sync::Arc;

use stateright::{Model, Property};

use crate::node::NodeState;
use crate::property::Property as Builtin;
use crate::scenario::{self, MAX_MODEL_CLIENTS, MAX_MODEL_NODES, Scenario, property};
use crate::storage::Storage;
use crate::time::Unit;

use super::explorer;
use super::moments::{self, path_moments};
use super::shape::{self, Mode};
use super::step::Step;
use super::world::{ClientSlot, FaultsLeft, Fences, NodeSlot, Replicas, World};

/// A user-defined invariant over a read-only [`World`].
pub type InvariantFn = Arc<dyn Fn(&World) -> bool + Send + Sync>;

/// The most user invariants one model carries (stateright's `Property` takes `fn` pointers, so
/// each slot is a monomorphised function that looks its closure up by index).
pub const MAX_USER_INVARIANTS: usize = 8;

/// A named user invariant: `always(name, condition)`.
#[derive(Clone)]
pub struct Invariant {
    /// The property's name in reports.
    pub name: &'static str,
    /// The condition that must hold in every reachable state.
    pub condition: InvariantFn,
}

impl std::fmt::Debug for Invariant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Invariant")
            .field("name", &self.name)
            .finish()
    }
}

/// The Redlock model of one scenario.
#[derive(Clone, Debug)]
pub struct RedlockModel {
    pub(super) shape: &'static shape::Shape,
    scenario: Arc<Scenario>,
    invariants: Vec<Invariant>,
    first_violations: Arc<FirstViolations>,
}

/// The fingerprint of the first state found violating each `always` property (and the first
/// witness of `lock acquired`).
///
/// stateright's BFS overwrites a property's discovery with every later violating state it
/// visits, so the reported path would be the *last* (longest) one found. An `always` condition
/// here reports a violation only for the first violating state it sees; in breadth-first
/// order on one thread that state is the end of a shortest counterexample. Whether a
/// discovery exists, and so the verdict, is unchanged.
///
/// The Explorer wants the plain judgement of every state instead: see
/// [`RedlockModel::for_explorer`].
#[derive(Debug, Default)]
struct FirstViolations {
    off: bool,
    slots: [std::sync::Mutex<Option<u64>>; 4 + MAX_USER_INVARIANTS],
}

impl FirstViolations {
    fn holds(&self, slot: usize, state: &World, ok: bool) -> bool {
        if ok || self.off {
            return ok;
        }
        use std::hash::{Hash, Hasher};
        let mut hasher = std::hash::DefaultHasher::new();
        state.hash(&mut hasher);
        let fingerprint = hasher.finish();
        let mut first = self.slots[slot].lock().unwrap_or_else(|e| e.into_inner());
        match *first {
            None => {
                *first = Some(fingerprint);
                false
            }
            Some(f) => f != fingerprint,
        }
    }
}

/// `lock acquired`, reported for the first state that reaches it only (a `sometimes` witness is
/// overwritten by later ones in stateright's search, like an `always` discovery): in
/// breadth-first order on one thread, that state ends a shortest witness. Whether a witness
/// exists, and so the verdict, is unchanged.
fn lock_acquired(model: &RedlockModel, state: &World) -> bool {
    let reached = state.acquired != 0;
    // A witness is a "violation" of the negation: the first one is kept.
    !model.first_violations.holds(3, state, !reached)
}

/// Whether `state` breaks the built-in `always` property (`false` for the others, which no
/// single state breaks): the one statement of each predicate, which the checker and the
/// stories share.
pub fn breaks(property: Builtin, state: &World) -> bool {
    match property {
        Builtin::MutualExclusion => state.believers() > 1,
        Builtin::StorageSafety => !state.storage.fenced_order_holds(),
        Builtin::NoLostUpdate => !state.storage.no_lost_update_holds(),
        Builtin::LockAcquired | Builtin::EventuallyAcquired => false,
    }
}

fn mutual_exclusion(model: &RedlockModel, state: &World) -> bool {
    let ok = !breaks(Builtin::MutualExclusion, state);
    model.first_violations.holds(0, state, ok)
}

fn storage_safety(model: &RedlockModel, state: &World) -> bool {
    let ok = !breaks(Builtin::StorageSafety, state);
    model.first_violations.holds(1, state, ok)
}

fn no_lost_update(model: &RedlockModel, state: &World) -> bool {
    let ok = !breaks(Builtin::NoLostUpdate, state);
    model.first_violations.holds(2, state, ok)
}

fn user_invariant<const I: usize>(model: &RedlockModel, state: &World) -> bool {
    let ok = model
        .invariants
        .get(I)
        .is_none_or(|invariant| (invariant.condition)(state));
    model.first_violations.holds(4 + I, state, ok)
}

const USER_CONDITIONS: [fn(&RedlockModel, &World) -> bool; MAX_USER_INVARIANTS] = [
    user_invariant::<0>,
    user_invariant::<1>,
    user_invariant::<2>,
    user_invariant::<3>,
    user_invariant::<4>,
    user_invariant::<5>,
    user_invariant::<6>,
    user_invariant::<7>,
];

impl RedlockModel {
    /// The safety run of `scenario`.
    pub fn new(scenario: &Scenario) -> RedlockModel {
        RedlockModel::with_mode(scenario, Mode::Safety)
    }

    /// The run of `scenario` in `mode`.
    pub(crate) fn with_mode(scenario: &Scenario, mode: Mode) -> RedlockModel {
        RedlockModel {
            shape: shape::intern(shape::Shape::new(scenario, mode)),
            scenario: Arc::new(scenario.clone()),
            invariants: Vec::new(),
            first_violations: Arc::default(),
        }
    }

    /// The same model with symmetry reduction switched off or on (for benchmarks and
    /// cross-checks; verdicts must not change).
    pub fn with_symmetry(mut self, on: bool) -> RedlockModel {
        let mut shape = self.shape.clone();
        shape.symmetry = on;
        self.shape = shape::intern(shape);
        self
    }

    /// The same model with true time in the fingerprint and time bounded by `horizon_ticks`:
    /// the plain, unreduced encoding, for cross-checking the time-shift reduction (a verdict
    /// found here within the horizon must agree with the reduced run).
    pub fn with_exact_time(mut self, horizon_ticks: u32) -> RedlockModel {
        let mut shape = self.shape.clone();
        shape.exact_time = Some(horizon_ticks);
        self.shape = shape::intern(shape);
        self
    }

    /// The same model with the ghost fields and the tallies of won rounds hashed in full
    /// (`true`) or reduced to what the steps and properties read (`false`, the default without
    /// user invariants), for cross-checks.
    pub fn with_exact_ghosts(mut self, on: bool) -> RedlockModel {
        let mut shape = self.shape.clone();
        shape.exact_ghosts = on;
        self.shape = shape::intern(shape);
        self
    }

    /// The same model with the nodes that no client can read again left out of the
    /// fingerprint (`true`, the default) or hashed in full (`false`), for cross-checks and
    /// benchmarks; verdicts must not change.
    pub fn with_dead_node_elimination(mut self, on: bool) -> RedlockModel {
        let mut shape = self.shape.clone();
        shape.dead_nodes = on;
        self.shape = shape::intern(shape);
        self
    }

    /// The same model with clock jumps of processes that measure nothing on their clock
    /// skipped (`true`, the default) or explored (`false`), for cross-checks and benchmarks;
    /// verdicts must not change.
    pub fn with_idle_jump_pruning(mut self, on: bool) -> RedlockModel {
        let mut shape = self.shape.clone();
        shape.idle_jumps_pruned = on;
        self.shape = shape::intern(shape);
        self
    }

    /// The same scenario checked with two real clients standing for all of them (a *cutoff*),
    /// for mutual exclusion; `None` when the argument below does not apply.
    ///
    /// Any `SET` delivered to a serving node that holds no key of the two clients may be
    /// refused, as if a third client's key were there ([`Step::Refuse`]). Why that covers every
    /// number of clients: take any run of the scenario with `N ≥ 3` clients in which clients
    /// `i` and `j` believe at once, and keep only the steps of `i`, `j` and the environment
    /// (time, faults, deliveries to `i` and `j`). With compare-and-delete, another client
    /// touches only keys with its own token: its `SET` creates its key, its release and its
    /// extension act on that key alone, and its message losses, pauses, jumps, crash and
    /// partition only spend budget (a client cut off from every node touches no key again; a
    /// listed jump size it takes is one fewer for `i` and `j`, so dropping its jump leaves
    /// them more, never less). So the nodes hold the same keys of `i` and `j` in both runs,
    /// every answer to `i` and `j` is the same — an answer that another client's key turned
    /// into "no" is a refusal here — and `i` and `j` believe at the same moments. Conversely, a violation
    /// found here that uses no refusal is a run of the `N`-client scenario in which the other
    /// clients never start, so it is real and (being no longer than the projection of any
    /// violation there) shortest; one that needs a refusal settles nothing.
    ///
    /// It applies to the safety run of a scenario with at least three clients, compare-and-
    /// delete with unique tokens (a shared token lets another client delete `i`'s key; a
    /// reused one adds late releases the argument does not cover), no
    /// storage (its properties involve every client's writes), no user invariant, the same
    /// reach for every client, one quorum for every client and no fault pinned to one client
    /// (so that any two clients are alike: with `[lock] quorum = [3, 2, 2]` the two kept would
    /// stand for the pair c2, c3 with c1's quorum). Only mutual exclusion is judged by it.
    pub fn with_phantom_clients(&self) -> Option<RedlockModel> {
        let shape = &self.shape;
        let reach = &shape.reach[..shape.clients];
        let pinned_to_a_client = (shape.jump_index.is_some()
            && shape.jump_target != scenario::JumpTarget::Node)
            || shape.client_crash_aim.client.is_some()
            || shape.client_partition_aim.client.is_some();
        let eligible = shape.mode == Mode::Safety
            && shape.clients >= 3
            && shape.storage.is_none()
            && self.invariants.is_empty()
            && shape.params.unlock == crate::proto::UnlockMode::CompareAndDelete
            && !shape.shared_token
            && !shape.keeps_token()
            && reach.iter().all(|r| *r == reach[0])
            && !shape.quorums_differ
            && !pinned_to_a_client;
        if !eligible {
            return None;
        }
        let mut cut = (*shape).clone();
        cut.clients = 2;
        cut.phantoms = true;
        Some(RedlockModel {
            shape: shape::intern(cut),
            scenario: self.scenario.clone(),
            invariants: Vec::new(),
            first_violations: Arc::default(),
        })
    }

    /// The same scenario with nodes that answer anything, judging only the storage
    /// properties; `None` when the argument below does not apply.
    ///
    /// Every request in flight may be answered yes ([`Step::Deliver`]), answered no
    /// ([`Step::Refuse`]) or never answered ([`Step::Lose`], with no budget), and the nodes
    /// keep nothing: no keys, no crashes, no node clocks that matter. Why a storage property
    /// that holds here holds in the scenario: map each state of the scenario to this model's
    /// state with the same clients, requests in flight, storage and epochs, and the nodes
    /// forgotten. Each step of the scenario is then a step here, or changes nothing here:
    /// a delivery is a yes, or a no (a refusal, or a node that is down or restarting: the core
    /// counts a failure as it counts a no), a request a crash or a loss swallows is never
    /// answered, and the node steps (expiries, crashes, restarts, node clock jumps, fsync,
    /// failover) change only the nodes. Everything else is the client's own step, which reads
    /// only the client, its clock, its mailbox and the storage. So every run of the scenario
    /// is a run here with the same storage operations in the same order at the same times,
    /// and a storage property (which reads only the clients and the storage) broken there is
    /// broken here. A violation found here may need answers no real node would give, so it
    /// settles nothing.
    ///
    /// One such node stands for any number of them, with a quorum of one: what a client does
    /// with its round depends only on when it is decided and whether it was won (the validity
    /// is `ttl − (T2 − T1) − drift` whatever the nodes said), and with answers free, a single
    /// node can make a round won or lost at any moment that several can (its yes standing for
    /// the answer that completes a quorum, its no for the one that puts a quorum out of
    /// reach, its silence for a round that runs to its timeout). A client that reaches too few
    /// nodes to win may win here: more runs, never fewer.
    ///
    /// This is Kleppmann's point made checkable: with the storage checking fencing tokens,
    /// its safety does not depend on the lock at all.
    ///
    /// It applies to the safety run of a scenario with storage whose fencing tokens do not
    /// come from the nodes (the ideal counter), no extensions (a failed extension ends a lease
    /// here as anywhere, but its answers would have to be modelled too), no restarted-node
    /// guard (it reads the nodes' uptime) and no user invariant (which may read the nodes).
    pub fn with_chaos_nodes(&self) -> Option<RedlockModel> {
        let shape = &self.shape;
        let eligible = shape.mode == Mode::Safety
            && shape.storage.is_some()
            && shape.token_source == crate::storage::TokenSource::Ideal
            && shape.extensions == 0
            && shape.client_guard == crate::time::Millis(0)
            && self.invariants.is_empty()
            && !shape.phantoms;
        if !eligible {
            return None;
        }
        let mut chaos = (**shape).clone();
        chaos.chaos_nodes = true;
        // One node answering anything stands for any number of them (see above).
        chaos.nodes = 1;
        chaos.params.node_count = 1;
        chaos.params.quorum = None;
        // Every client's quorum too: which round is won is the chaos node's choice anyway.
        for params in &mut chaos.client_params {
            params.node_count = 1;
            params.quorum = None;
        }
        chaos.reach = [crate::proto::NodeSet::first(1); MAX_MODEL_CLIENTS];
        // The faults that act only on nodes have nothing left to act on.
        chaos.failover = None;
        chaos.replicas = 0;
        chaos.every_node = false;
        chaos.failovers = 0;
        chaos.failover_wait = 0;
        chaos.crashes = 0;
        chaos.message_loss = 0;
        if shape.jump_target == scenario::JumpTarget::Node {
            chaos.jumps = 0;
        }
        chaos.judged = shape::Judged::Storage;
        Some(RedlockModel {
            shape: shape::intern(chaos),
            scenario: self.scenario.clone(),
            invariants: Vec::new(),
            first_violations: Arc::default(),
        })
    }

    /// The same model judging every property but the storage ones (settled elsewhere, by
    /// [`RedlockModel::with_chaos_nodes`]), so that a search can stop once the others are.
    pub fn without_storage_properties(&self) -> RedlockModel {
        let mut shape = (*self.shape).clone();
        shape.judged = shape::Judged::Lock;
        RedlockModel {
            shape: shape::intern(shape),
            ..self.clone()
        }
    }

    /// The same model with only its first `clients` clients, for violations and witnesses
    /// only: a run here is a run of the scenario in which the other clients never begin (a
    /// client may stay idle forever, and time passes around it), so a property broken here
    /// is broken there (`sometimes`: met here, met there). A property that holds here settles
    /// nothing. Each client kept keeps its own lock, its quorum included, so clients whose
    /// quorums differ are not merged: the run here is one of those clients as they are. `None` unless the model has more clients than that, the same reach for all and
    /// no fault pinned to a client beyond them.
    pub fn with_fewer_clients(&self, clients: usize) -> Option<RedlockModel> {
        let shape = &self.shape;
        let pinned_beyond = (shape.jump_target == scenario::JumpTarget::Client
            && shape.jump_index.is_some_and(|i| usize::from(i) >= clients))
            || [shape.client_crash_aim, shape.client_partition_aim]
                .iter()
                .any(|aim| aim.client.is_some_and(|i| usize::from(i) >= clients));
        let liveness_beyond = shape
            .liveness_client
            .is_some_and(|c| usize::from(c) >= clients);
        if shape.clients <= clients
            || pinned_beyond
            || liveness_beyond
            || !self.invariants.is_empty()
        {
            return None;
        }
        let mut fewer = (**shape).clone();
        fewer.clients = clients;
        Some(RedlockModel {
            shape: shape::intern(fewer),
            scenario: self.scenario.clone(),
            invariants: Vec::new(),
            first_violations: Arc::default(),
        })
    }

    /// The same model with its record of first violations cleared, for a second search of the
    /// same state space (each search must keep its own first violating state).
    pub(crate) fn fresh(&self) -> RedlockModel {
        RedlockModel {
            first_violations: Arc::new(FirstViolations {
                off: self.first_violations.off,
                ..FirstViolations::default()
            }),
            ..self.clone()
        }
    }

    /// How many clients the model runs.
    pub fn client_count(&self) -> usize {
        self.shape.clients
    }

    /// Whether this model lets phantom clients refuse `SET`s (see
    /// [`RedlockModel::with_phantom_clients`]).
    pub fn has_phantom_clients(&self) -> bool {
        self.shape.phantoms
    }

    /// The same model for stateright's Explorer (`checker().serve(..)`): every state is
    /// judged on its own. (For the checkers, an `always` property reports only the first
    /// violating state it sees, so that breadth-first search keeps the shortest
    /// counterexample; verdicts are the same either way.)
    pub fn for_explorer(mut self) -> RedlockModel {
        self.first_violations = Arc::new(FirstViolations {
            off: true,
            ..FirstViolations::default()
        });
        self
    }

    /// Adds a user invariant, checked as `always` in the safety run. At most
    /// [`MAX_USER_INVARIANTS`]; more are ignored and reported by [`RedlockModel::invariants`].
    pub fn with_invariant(mut self, invariant: Invariant) -> RedlockModel {
        if self.invariants.len() < MAX_USER_INVARIANTS {
            self.invariants.push(invariant);
        }
        // A user invariant may read any ghost field: hash them all.
        self.with_exact_ghosts(true)
    }

    /// The user invariants this model checks.
    pub fn invariants(&self) -> &[Invariant] {
        &self.invariants
    }

    /// The scenario the model was built from.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// The initial state: every clock at the same reading, every node up and empty.
    pub fn initial(&self) -> World {
        let shape = &self.shape;
        World {
            shape: self.shape,
            now: 0,
            nodes: [NodeSlot {
                state: NodeState::new(),
                offset: crate::time::CLOCK_ORIGIN,
                guarded_until: None,
                setter: 0,
            }; MAX_MODEL_NODES],
            replicas: Replicas::new(shape.replica_slots()),
            clients: [ClientSlot::new(); MAX_MODEL_CLIENTS],
            storage: Storage::default(),
            budget: FaultsLeft {
                jumps: shape.jumps,
                jump_sizes_used: 0,
                crashes: shape.crashes,
                client_crashes: shape.client_crashes,
                client_partitions: shape.client_partitions,
                pauses: shape.pauses,
                losses: shape.message_loss,
                failovers: shape.failovers,
            },
            epochs: 0,
            acquired: 0,
            fences: Fences::default(),
        }
    }

    /// A human-readable description of `step` taken from `state` (`t=3 c1 …`): the events
    /// the step tells as it is taken, in one line.
    pub fn describe(&self, state: &World, step: &Step) -> String {
        let mut moments = Vec::new();
        match state.apply(*step, &mut moments) {
            Some(_) => moments::line(state.now, step, &moments, self.unit()),
            None => format!(
                "t={} {} (not enabled)",
                state.now,
                explorer::label(self.shape, step)
            ),
        }
    }

    /// The Explorer's SVG sequence diagram of `path` (states with the step taken from each;
    /// the last step is `None`): a lane per client and node, a row per step, told from the
    /// path's events.
    pub fn sequence_diagram(&self, path: &[(World, Option<Step>)]) -> String {
        explorer::sequence_diagram(self.shape, path, self.unit())
    }

    /// Every step of `path` (states with the step taken from each; the last step is `None`)
    /// in one line each, told from the path's events (see `path_moments`): the `--json`
    /// counterexample.
    pub fn describe_path(&self, path: &[(World, Option<Step>)]) -> Vec<String> {
        let told = path_moments(path);
        path.iter()
            .filter_map(|(state, step)| step.map(|s| (state.now, s)))
            .zip(told)
            .map(|((t, step), moments)| moments::line(t, &step, &moments, self.unit()))
            .collect()
    }

    /// The unit this model's stories tell amounts of time in: milliseconds for a file whose
    /// tick is one millisecond, else ticks ([`Unit::of_tick`]).
    pub fn unit(&self) -> Unit {
        Unit::of_tick(self.scenario().resolution)
    }
}

impl Model for RedlockModel {
    type State = World;
    type Action = Step;

    fn init_states(&self) -> Vec<World> {
        vec![self.initial()]
    }

    fn actions(&self, state: &World, actions: &mut Vec<Step>) {
        state.steps(actions);
    }

    fn next_state(&self, last: &World, action: Step) -> Option<World> {
        last.after(action)
    }

    fn format_action(&self, action: &Step) -> String {
        explorer::label(self.shape, action)
    }

    /// The Explorer's state pane: the step in words, then the state it leads to.
    fn format_step(&self, last: &World, action: Step) -> Option<String> {
        let next = last.after(action)?;
        Some(format!("{}\n\n{next:?}", self.describe(last, &action)))
    }

    fn as_svg(&self, path: stateright::Path<World, Step>) -> Option<String> {
        Some(self.sequence_diagram(&path.into_vec()))
    }

    fn properties(&self) -> Vec<Property<Self>> {
        let mut properties = Vec::new();
        match self.shape.mode {
            Mode::Safety => {
                let judged = self.shape.judged;
                let lock = judged != shape::Judged::Storage;
                if lock {
                    properties.push(Property::always(
                        property::MUTUAL_EXCLUSION,
                        mutual_exclusion,
                    ));
                }
                if self.shape.storage.is_some() && judged != shape::Judged::Lock {
                    properties.push(Property::always(property::STORAGE_SAFETY, storage_safety));
                    properties.push(Property::always(property::NO_LOST_UPDATE, no_lost_update));
                }
                if lock {
                    properties.push(Property::sometimes(property::LOCK_ACQUIRED, lock_acquired));
                }
                for (i, invariant) in self.invariants.iter().enumerate() {
                    properties.push(Property::always(invariant.name, USER_CONDITIONS[i]));
                }
            }
            Mode::Liveness => properties.push(Property::eventually(
                property::EVENTUALLY_ACQUIRED,
                |m: &RedlockModel, s: &World| match m.shape.liveness_client {
                    Some(c) => s.acquired >> c & 1 != 0,
                    None => s.acquired != 0,
                },
            )),
        }
        properties
    }

    fn within_boundary(&self, state: &World) -> bool {
        match self.shape.mode {
            Mode::Safety => self.shape.exact_time.is_none_or(|h| state.now <= h),
            Mode::Liveness => state.now <= self.shape.horizon,
        }
    }
}
