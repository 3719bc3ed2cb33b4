use std::hash::{Hash, Hasher};

use super::*;
use crate::scenario::Scenario;
use crate::time::Unit;
use stateright::Model;

fn scenario(body: &str) -> Scenario {
    let text = format!(
        "name = \"t\"\ntitle = \"t\"\nclaim = \"c\"\nsource = \"derived\"\nprose = \"p\"\n{body}\n[expect]\n\"mutual exclusion\" = \"holds\"\n"
    );
    Scenario::from_str("t.toml", &text).unwrap()
}

fn fingerprint(world: &World) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    world.hash(&mut hasher);
    hasher.finish()
}

fn run(model: &RedlockModel, steps: &[Step]) -> World {
    run_from(model, model.initial(), steps)
}

fn run_from(model: &RedlockModel, mut world: World, steps: &[Step]) -> World {
    for &step in steps {
        let mut enabled = Vec::new();
        model.actions(&world, &mut enabled);
        assert!(enabled.contains(&step), "{step:?} not enabled in {world:?}");
        world = model.next_state(&world, step).unwrap();
    }
    world
}

#[test]
fn shifting_time_does_not_change_the_fingerprint() {
    let model = RedlockModel::new(&scenario("[lock]\nttl_ticks = 4\ndrift_ticks = 1"));
    // A holder that acquired at t=0 and one that acquired at t=2, seen one tick later.
    let early = run(
        &model,
        &[
            Step::Begin(0),
            deliver(0, 0),
            deliver(0, 1),
            deliver(0, 2),
            Step::Decide(0),
            Step::Tick,
        ],
    );
    let late = run(
        &model,
        &[
            Step::Tick,
            Step::Tick,
            Step::Begin(0),
            deliver(0, 0),
            deliver(0, 1),
            deliver(0, 2),
            Step::Decide(0),
            Step::Tick,
        ],
    );
    assert_ne!(early.now, late.now);
    assert_eq!(fingerprint(&early), fingerprint(&late));
    // One more tick is a different state: the lease has less validity left.
    let later = model.next_state(&early, Step::Tick).unwrap();
    assert_ne!(fingerprint(&early), fingerprint(&later));
}

/// The set-up of both client-fault tests: a model whose `[faults.TABLE]` (`client_crashes` or
/// `client_partitions`) holds `body`, and c1 holding the lock with its keys on n1 and n2 while
/// its request to n3 still travels.
fn c1_holds_under(table: &str, body: &str) -> (RedlockModel, World) {
    let model = RedlockModel::new(&scenario(&format!(
        "[lock]\nttl_ticks = 4\ndrift_ticks = 1\n[faults.{table}]\n{body}"
    )));
    let holding = run(
        &model,
        &[
            Step::Begin(0),
            deliver(0, 0),
            deliver(0, 1),
            Step::Decide(0),
        ],
    );
    assert!(holding.believes(0));
    (model, holding)
}

#[test]
fn a_client_cut_off_keeps_believing_and_its_unlock_reaches_no_node() {
    let (model, holding) = c1_holds_under("client_partitions", "client = 1\nwhen = \"holding\"");
    let acquiring = run(&model, &[Step::Begin(0), deliver(0, 0)]);
    let mut enabled = Vec::new();
    model.actions(&acquiring, &mut enabled);
    // Aimed at a holder: not while it acquires.
    assert!(!enabled.contains(&Step::PartitionClient(0)));
    let cut = run_from(&model, holding.clone(), &[Step::PartitionClient(0)]);
    // The core's lock is untouched: it still believes, and its request to n3 is lost.
    assert!(cut.believes(0));
    assert_eq!(cut.budget.client_partitions, 0);
    assert!(cut.clients[0].inflight.is_empty());
    assert_ne!(fingerprint(&holding), fingerprint(&cut));
    let mut enabled = Vec::new();
    model.actions(&cut, &mut enabled);
    assert!(!enabled.contains(&deliver(0, 2)));
    assert!(!enabled.contains(&Step::PartitionClient(0)));
    assert!(enabled.contains(&Step::Release(0)));
    // Its unlock reaches no node: both keys stay until they expire.
    let released = model.next_state(&cut, Step::Release(0)).unwrap();
    assert!(!released.believes(0));
    assert!(released.nodes[0].state.entry.is_some() && released.nodes[1].state.entry.is_some());
    assert_eq!(released.activity(0), Activity::Done);
}

#[test]
fn a_crashed_client_keeps_its_keys_sends_nothing_and_stops_believing() {
    let (model, holding) = c1_holds_under("client_crashes", "count = 1");
    let dead = run_from(&model, holding, &[Step::CrashClient(0)]);
    assert!(!dead.believes(0));
    assert_eq!(dead.activity(0), Activity::Done);
    assert_eq!(dead.budget.client_crashes, 0);
    // No unlock went out: both keys stay, and the request still travelling to n3 lands.
    assert!(dead.nodes[0].state.entry.is_some() && dead.nodes[1].state.entry.is_some());
    let mut enabled = Vec::new();
    model.actions(&dead, &mut enabled);
    assert!(!enabled.iter().any(|s| matches!(
        s,
        Step::Begin(0) | Step::Decide(0) | Step::Release(0) | Step::Extend(0)
    )));
    assert!(enabled.contains(&deliver(0, 2)));
    // The budget is spent: the other client cannot die too.
    assert!(!enabled.contains(&Step::CrashClient(1)));
    let landed = model.next_state(&dead, deliver(0, 2)).unwrap();
    assert!(landed.nodes[2].state.entry.is_some());
}

#[test]
fn a_reused_tokens_late_release_deletes_the_next_rounds_key_and_a_fresh_one_lands_at_once() {
    let body = |token: &str| {
        format!(
            "[lock]\nnodes = 1\nclients = 1\nttl_ticks = 4\ndrift_ticks = 1\nattempts = 2\ntoken = \"{token}\""
        )
    };
    // The first round outlasts `ttl − drift` and fails; its release is sent.
    let lost = [
        Step::Begin(0),
        Step::Tick,
        Step::Tick,
        Step::Tick,
        deliver(0, 0),
        Step::Decide(0),
    ];
    let unique = run(&RedlockModel::new(&scenario(&body("unique"))), &lost);
    assert_eq!(unique.nodes[0].state.entry, None, "released at once");
    assert!(unique.clients[0].late.is_empty());

    let model = RedlockModel::new(&scenario(&body("reused")));
    let travelling = run(&model, &lost);
    assert!(
        travelling.nodes[0].state.entry.is_some(),
        "the release is on its way"
    );
    let late = Step::LateRelease { client: 0, node: 0 };
    // The old key expires, the second round wins with the same value, and the first round's
    // release arrives after it.
    let mut second = lost.to_vec();
    second.extend([Step::Tick; 4]);
    second.extend([Step::Begin(0), deliver(0, 0), Step::Decide(0), late]);
    let after = run(&model, &second);
    assert!(after.believes(0));
    assert_eq!(
        after.nodes[0].state.entry, None,
        "the late release deleted the new key"
    );
    assert!(after.clients[0].late.is_empty() && after.clients[0].late_release.is_none());
}

#[test]
fn shared_tokens_let_one_clients_unlock_delete_the_others_key() {
    let body = "[lock]\nnodes = 1\nttl_ticks = 4\ndrift_ticks = 1\ntoken = \"shared\"";
    let steps = [
        Step::Begin(0),
        deliver(0, 0),
        Step::Decide(0),
        Step::Begin(1),
        deliver(1, 0),
        Step::Decide(1),
    ];
    let shared = run(&RedlockModel::new(&scenario(body)), &steps);
    // c2 was refused, failed, and its compare-and-delete matched c1's value.
    assert!(shared.believes(0));
    assert_eq!(shared.nodes[0].state.entry, None);
    // The ghost still names who set the key, for the stories.
    let set = run(&RedlockModel::new(&scenario(body)), &steps[..2]);
    assert_eq!(set.key_owner(0, set.nodes[0].state.entry.unwrap().token), 0);
    let unique = run(
        &RedlockModel::new(&scenario(
            "[lock]\nnodes = 1\nttl_ticks = 4\ndrift_ticks = 1",
        )),
        &steps,
    );
    assert!(unique.nodes[0].state.entry.is_some(), "c1's own key stays");
}

#[test]
fn unbounded_extensions_are_not_counted_and_a_working_holder_lets_time_pass() {
    let body = "[lock]\nnodes = 1\nclients = 1\nttl_ticks = 3\ndrift_ticks = 1\n\
                extensions = \"unbounded\"\n[liveness]\nclient = 1";
    let s = scenario(body);
    let model = RedlockModel::with_mode(&s, Mode::Liveness);
    // The run waits for one named client: permuting the clients would swap it.
    assert!(!model.shape.symmetry && RedlockModel::new(&s).shape.symmetry);
    let held = run(&model, &[Step::Begin(0), deliver(0, 0), Step::Decide(0)]);
    let mut enabled = Vec::new();
    model.actions(&held, &mut enabled);
    // c1 believes, so it is working: time may pass while it holds.
    assert!(enabled.contains(&Step::Tick), "{enabled:?}");
    let extended = run(
        &model,
        &[
            Step::Begin(0),
            deliver(0, 0),
            Step::Decide(0),
            Step::Tick,
            Step::Extend(0),
            deliver(0, 0),
            Step::Decide(0),
        ],
    );
    assert_eq!(extended.clients[0].extensions, 0, "not counted");
    assert!(extended.believes(0));
    enabled.clear();
    model.actions(&extended, &mut enabled);
    assert!(enabled.contains(&Step::Extend(0)));
    // Without `[liveness] client` the holder is prompt: no tick while it can release.
    let prompt = RedlockModel::with_mode(
        &scenario("[lock]\nnodes = 1\nclients = 1\nttl_ticks = 3\ndrift_ticks = 1\nextensions = 1"),
        Mode::Liveness,
    );
    let held = run(&prompt, &[Step::Begin(0), deliver(0, 0), Step::Decide(0)]);
    enabled.clear();
    prompt.actions(&held, &mut enabled);
    assert!(!enabled.contains(&Step::Tick), "{enabled:?}");
}

fn deliver(client: u8, node: u8) -> Step {
    Step::deliver(client, node)
}

#[test]
fn symmetric_states_share_a_fingerprint_unless_symmetry_is_off() {
    let s = scenario("[lock]\nttl_ticks = 4\ndrift_ticks = 1");
    let model = RedlockModel::new(&s);
    let a = run(&model, &[Step::Begin(0), deliver(0, 0)]);
    let b = run(&model, &[Step::Begin(1), deliver(1, 2)]);
    assert_eq!(fingerprint(&a), fingerprint(&b));
    let plain = RedlockModel::new(&s).with_symmetry(false);
    let a = run(&plain, &[Step::Begin(0), deliver(0, 0)]);
    let b = run(&plain, &[Step::Begin(1), deliver(1, 2)]);
    assert_ne!(fingerprint(&a), fingerprint(&b));
}

#[test]
fn clients_with_different_quorums_are_not_swapped_but_nodes_still_are() {
    let s = scenario("[lock]\nquorum = [3, 2]\nttl_ticks = 4\ndrift_ticks = 1");
    let model = RedlockModel::new(&s);
    assert_eq!(
        (
            model.shape.client_params[0].quorum(),
            model.shape.client_params[1].quorum()
        ),
        (3, 2)
    );
    // c1 with one yes of the three it needs is not c2 with one yes of its two.
    let a = run(&model, &[Step::Begin(0), deliver(0, 0)]);
    let b = run(&model, &[Step::Begin(1), deliver(1, 0)]);
    assert_ne!(fingerprint(&a), fingerprint(&b));
    // One client's key on n1 or on n3 is the same state up to the nodes' order.
    let c = run(&model, &[Step::Begin(0), deliver(0, 2)]);
    assert_eq!(fingerprint(&a), fingerprint(&c));
    // c2 wins with two yeses, c1 does not.
    let two = [deliver(0, 0), deliver(0, 1)];
    let c1 = run(&model, &[&[Step::Begin(0)][..], &two].concat());
    assert!(
        model
            .next_state(&c1, Step::Decide(0))
            .is_none_or(|w| !w.believes(0))
    );
    let two = [deliver(1, 0), deliver(1, 1)];
    let c2 = run(&model, &[&[Step::Begin(1)][..], &two].concat());
    assert!(
        model
            .next_state(&c2, Step::Decide(1))
            .is_some_and(|w| w.believes(1))
    );
}

#[test]
fn a_pinned_role_keeps_nodes_apart() {
    // Node 2 is the only node both clients reach: a key there is not a key on node 1.
    let model = RedlockModel::new(&scenario(
        "[lock]\nttl_ticks = 4\ndrift_ticks = 1\n[network]\nreach = [[1, 2], [2, 3]]",
    ));
    let on_shared = run(&model, &[Step::Begin(0), deliver(0, 1)]);
    let on_private = run(&model, &[Step::Begin(0), deliver(0, 0)]);
    assert_ne!(fingerprint(&on_shared), fingerprint(&on_private));
}

#[test]
fn belief_ends_at_the_deadline_and_runs_late_by_the_client_error() {
    let model = RedlockModel::new(&scenario(
        "[lock]\nttl_ticks = 4\ndrift_ticks = 1\n[clock]\nclient_error_ticks = 1",
    ));
    let mut world = run(
        &model,
        &[
            Step::Begin(0),
            deliver(0, 0),
            deliver(0, 1),
            deliver(0, 2),
            Step::Decide(0),
        ],
    );
    // Deadline T1 + ttl − drift = 3; read one tick late, the client believes until 4.
    for t in 0..4 {
        assert!(world.believes(0), "t={t}");
        world = model.next_state(&world, Step::Tick).unwrap();
    }
    assert!(!world.believes(0));
}

#[test]
fn the_sequence_diagram_has_a_lane_per_process() {
    let model = RedlockModel::new(&scenario(
        "[lock]\nnodes = 3\nttl_ticks = 4\ndrift_ticks = 1",
    ));
    let world = model.initial();
    let next = model.next_state(&world, Step::Begin(0)).unwrap();
    let svg = explorer::sequence_diagram(
        model.shape,
        &[(world, Some(Step::Begin(0))), (next, None)],
        Unit::Ticks,
    );
    assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
    for lane in [">c1<", ">c2<", ">n1<", ">n2<", ">n3<"] {
        assert!(svg.contains(lane), "{lane} missing");
    }
    assert!(svg.contains("c1 begins attempt 1: T1=0"));
}

/// Client `client`'s request reaches n1, which answers once the replicas in `acked` have
/// what it wrote.
fn deliver_waited(client: u8, acked: u8) -> Step {
    Step::Deliver {
        client,
        node: 0,
        early: false,
        acked,
    }
}

#[test]
fn a_wait_for_one_of_two_replicas_lets_the_adversary_pick_it_and_the_failover_any_replica() {
    let model = RedlockModel::new(&scenario(
        "[lock]\nnodes = 1\nclients = 2\nttl_ticks = 4\n[failover]\nreplicas = 2\nwait = 1",
    ));
    let begun = run(&model, &[Step::Begin(0)]);
    let mut enabled = Vec::new();
    model.actions(&begun, &mut enabled);
    for step in [deliver_waited(0, 0b01), deliver_waited(0, 0b10)] {
        assert!(enabled.contains(&step), "{step:?} in {enabled:?}");
    }
    assert!(!enabled.contains(&deliver_waited(0, 0b11)), "{enabled:?}");
    assert!(enabled.contains(&Step::Promote(0)) && enabled.contains(&Step::Promote(1)));
    // WAIT counted replica1, and replica2, which the key had not reached, is promoted.
    let first = run(&model, &[Step::Begin(0), deliver_waited(0, 0b01)]);
    assert!(first.replicas[0].is_some_and(|r| r.entry.is_some()));
    assert!(first.replicas[1].is_some_and(|r| r.entry.is_none()));
    let promoted = model.next_state(&first, Step::Promote(1)).unwrap();
    assert_eq!(promoted.nodes().next().map(|(n, _)| n.entry), Some(None));
    assert!(!promoted.has_replica(0));
    // The replicas are interchangeable: which one WAIT counted is one state.
    let second = run(&model, &[Step::Begin(0), deliver_waited(0, 0b10)]);
    assert_eq!(fingerprint(&first), fingerprint(&second));
}

#[test]
fn every_node_has_its_own_replica_and_each_failover_takes_only_its_nodes() {
    let model = RedlockModel::new(&scenario(
        "[lock]\nnodes = 3\nclients = 1\nttl_ticks = 4\n[failover]\nevery_node = true\nfailovers = 2\nwait = 1",
    ));
    let begun = run(&model, &[Step::Begin(0)]);
    let mut enabled = Vec::new();
    model.actions(&begun, &mut enabled);
    assert!(
        (0..3).all(|r| enabled.contains(&Step::Promote(r))),
        "{enabled:?}"
    );
    // n2's WAIT counts its own replica (slot 1), and no other node's.
    let step = Step::Deliver {
        client: 0,
        node: 1,
        early: false,
        acked: 0b1,
    };
    let written = run(&model, &[Step::Begin(0), step]);
    let keys: Vec<bool> = written
        .replicas
        .iter()
        .map(|r| r.is_some_and(|r| r.entry.is_some()))
        .collect();
    assert_eq!(keys, [false, true, false]);
    // n2 fails over to its replica, which has the key; n1 and n3 keep theirs.
    let promoted = model.next_state(&written, Step::Promote(1)).unwrap();
    assert_eq!(promoted.holder(1), Some(0));
    assert!(promoted.has_replica(0) && !promoted.has_replica(1) && promoted.has_replica(2));
    assert!(format!("{promoted:?}").contains("n3_replica of n3  no key"));
    // The second failover is the last: no replica is left after it.
    let second = model.next_state(&promoted, Step::Promote(0)).unwrap();
    assert!((0..3).all(|n| !second.has_replica(n)));
}

#[test]
fn a_wait_for_every_replica_copies_to_both_in_the_write() {
    let model = RedlockModel::new(&scenario(
        "[lock]\nnodes = 1\nclients = 2\nttl_ticks = 4\n[failover]\nreplicas = 2\nwait = 2",
    ));
    let begun = run(&model, &[Step::Begin(0)]);
    let mut enabled = Vec::new();
    model.actions(&begun, &mut enabled);
    assert!(enabled.contains(&deliver_waited(0, 0b11)), "{enabled:?}");
    let written = run(&model, &[Step::Begin(0), deliver_waited(0, 0b11)]);
    assert!(
        written
            .replicas
            .iter()
            .all(|r| r.is_some_and(|r| r.entry.is_some()))
    );
}

#[test]
fn a_sequential_round_asks_node_by_node_and_its_step_says_so() {
    let model = RedlockModel::new(&scenario(
        "[lock]\nnodes = 3\nclients = 1\nttl_ticks = 6\ndrift_ticks = 1\nround_timeout_ticks = 2\ncontact = \"sequential\"",
    ));
    assert!(
        model
            .format_action(&Step::Decide(0))
            .contains("asks the next node")
    );
    // n1 answers, the client hands it in and asks n2 alone; then n2, then n3: held.
    let asked_n2 = run(
        &model,
        &[Step::Begin(0), Step::deliver(0, 0), Step::Decide(0)],
    );
    assert_eq!(
        asked_n2.clients[0].inflight,
        crate::proto::NodeSet::from_bits(0b010)
    );
    let mut enabled = Vec::new();
    model.actions(&asked_n2, &mut enabled);
    assert!(
        !enabled.contains(&Step::deliver(0, 2)),
        "n3 is not asked before n2 answers or times out"
    );
    let held = run(
        &model,
        &[
            Step::Begin(0),
            Step::deliver(0, 0),
            Step::Decide(0),
            Step::deliver(0, 1),
            Step::Decide(0),
        ],
    );
    assert!(matches!(
        held.clients[0].lock.phase(),
        crate::proto::LockPhase::Holding { .. }
    ));
    let multiplexed = RedlockModel::new(&scenario("[lock]\nnodes = 3\nclients = 1"));
    assert_eq!(
        multiplexed.format_action(&Step::Decide(0)),
        "c1 decides its round"
    );
}

#[test]
fn listed_jump_sizes_are_each_taken_once_in_either_order() {
    let body = |sizes: &str| {
        format!(
            "[lock]\nnodes = 1\nclients = 2\nttl_ticks = 5\ndrift_ticks = 1\n[faults.clock_jumps]\ntarget = \"node\"\n{sizes}"
        )
    };
    let jump = |ticks: i32| Step::Jump {
        target: crate::actor::Process::node(0),
        ticks,
    };
    let jumps = |model: &RedlockModel, world: &World| {
        let mut enabled = Vec::new();
        model.actions(world, &mut enabled);
        enabled.retain(|step| matches!(step, Step::Jump { .. }));
        enabled
    };
    let model = RedlockModel::new(&scenario(&body("jump_ticks = [1, 2]")));
    // n1 holds c1's key, which c2 may still ask for: both sizes may strike.
    let holding = [Step::Begin(0), deliver(0, 0)];
    assert_eq!(jumps(&model, &run(&model, &holding)), [jump(1), jump(2)]);
    let mut ends = Vec::new();
    for order in [[1, 2], [2, 1]] {
        let mut path = holding.to_vec();
        path.push(jump(order[0]));
        let once = run(&model, &path);
        assert_eq!(jumps(&model, &once), [jump(order[1])], "each size once");
        path.push(jump(order[1]));
        let both = run(&model, &path);
        assert!(jumps(&model, &both).is_empty(), "the budget is spent");
        assert_eq!(both.nodes[0].offset - model.initial().nodes[0].offset, 3);
        ends.push(fingerprint(&both));
    }
    assert_eq!(ends[0], ends[1], "both orders end in one state");
    // One size keeps its meaning: it may strike as often as `count` allows.
    let model = RedlockModel::new(&scenario(&body("count = 2\njump_ticks = 1")));
    let once = run(&model, &[Step::Begin(0), deliver(0, 0), jump(1)]);
    assert_eq!(jumps(&model, &once), [jump(1)]);
}
