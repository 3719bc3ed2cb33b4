//! The blocking client over in-memory nodes: the seed's behaviour without a network.

use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use redlock_lab::driver::{Acquisition, Clock, ManualClock, MemoryNode, Redlock};
use redlock_lab::proto::{Config, Failure, NodeId, NodeResult, NodeSet};
use redlock_lab::time::Millis;

const TTL: Millis = Millis(10_000);

/// A client over three in-memory nodes that read the client's own clock (no clock error).
fn client() -> (ManualClock, Redlock<MemoryNode, ManualClock, ChaCha20Rng>) {
    let clock = ManualClock::new(Millis(0));
    let nodes = (0..3).map(|_| MemoryNode::new(clock.clone())).collect();
    let mut config = Config::new(3);
    config.retry.attempts = 1;
    let redlock =
        Redlock::new(nodes, config, clock.clone(), ChaCha20Rng::seed_from_u64(1)).unwrap();
    (clock, redlock)
}

fn not_acquired(
    outcome: Acquisition<'_, MemoryNode, ManualClock, ChaCha20Rng>,
) -> redlock_lab::driver::NotAcquired<redlock_lab::node::Unavailable> {
    match outcome {
        Acquisition::NotAcquired(not) => not,
        Acquisition::Acquired(guard) => {
            panic!("acquired unexpectedly with token {}", guard.token())
        }
        Acquisition::Unreachable(unreachable) => panic!("{unreachable}"),
    }
}

#[test]
fn a_second_lock_on_the_same_nodes_is_refused_until_the_first_is_released() {
    let (_clock, mut a) = client();
    let guard = a.lock("orders", TTL).unwrap().expect("free lock");
    let token = guard.token();
    drop(guard);
    // Dropping the guard released it: the same client can lock again with a new token.
    let again = a.lock("orders", TTL).unwrap().expect("released lock");
    assert_ne!(again.token(), token);
}

#[test]
fn a_held_key_refuses_another_token_and_expires_after_the_ttl() {
    let (clock, mut a) = client();
    let guard = a.lock("orders", TTL).unwrap().expect("free lock");
    let token = guard.token();
    std::mem::forget(guard);
    let holders: Vec<_> = a.nodes().iter().map(|node| node.holder("orders")).collect();
    assert_eq!(holders, vec![Some(token); 3]);

    let not = not_acquired(a.try_lock("orders", TTL).unwrap());
    assert_eq!(
        not.failure,
        Failure::NoQuorum {
            applied: 0,
            quorum: 2
        }
    );
    // Two refusals out of three decide the round early; in-memory nodes run the whole batch,
    // and the outcome reports the third answer too.
    assert_eq!(not.nodes.not_applied.len(), 3);
    assert_eq!(not.reason, redlock_lab::driver::Refusal::Held);
    clock.advance(TTL);
    assert!(
        a.lock("orders", TTL).unwrap().is_some(),
        "the key expires after its ttl"
    );
}

#[test]
fn one_node_down_out_of_three_still_locks_and_reports_the_node() {
    let (_clock, mut a) = client();
    a.nodes_mut()[1].crash();
    let guard = a.lock("orders", TTL).unwrap().expect("2 of 3 is a quorum");
    assert_eq!(guard.node_errors().len(), 1);
    assert_eq!(guard.node_errors()[0].node, NodeId(1));
    drop(guard);
    a.nodes_mut()[2].crash();
    let Acquisition::Unreachable(unreachable) = a.try_lock("orders", TTL).unwrap() else {
        panic!("two crashed nodes of three are not contention");
    };
    let causes: Vec<NodeId> = unreachable.causes.iter().map(|c| c.node).collect();
    assert_eq!(causes, [NodeId(1), NodeId(2)]);
    assert_eq!(unreachable.errors.len(), 2, "the two failed releases");
    assert_eq!(
        unreachable.to_string(),
        "no quorum of nodes reachable: 2 nodes failed, a quorum is 2; \
         n2: node is not serving (crashed, or inside its restart delay); \
         n3: node is not serving (crashed, or inside its restart delay)"
    );
    let error = a
        .lock("orders", TTL)
        .expect_err("lock reports it as an error");
    assert!(
        matches!(error, redlock_lab::driver::DriverError::Unreachable(_)),
        "{error}"
    );
    assert!(
        a.nodes()[0].holder("orders").is_none(),
        "a failed round releases everywhere"
    );
}

#[test]
fn a_guard_says_what_each_node_answered() {
    let (_clock, mut a) = client();
    a.nodes_mut()[2].crash();
    let guard = a.lock("orders", TTL).unwrap().expect("2 of 3 is a quorum");
    let nodes = guard.nodes();
    let tally = nodes.tally();
    assert!(tally.applied.contains(NodeId(0)) && tally.applied.contains(NodeId(1)));
    assert!(tally.failed.contains(NodeId(2)), "{nodes:?}");
    // Two yes decided the round; the crashed node's failure came after, in the same batch.
    assert_eq!(nodes.at_decision(NodeId(2)), NodeResult::NoReply);
    assert_eq!(nodes.result(NodeId(2)), NodeResult::Failed);
    assert_eq!(nodes.late(), NodeSet::from_bits(0b100));
    assert_eq!(nodes.decided().applied.len(), 2);
    assert!(nodes.unanswered().is_empty());
    // A failed SET may still have landed: only a no rules a node out.
    assert_eq!(nodes.may_hold_key(), NodeSet::first(3));
    assert!(guard.restarted().is_empty());
}

#[test]
fn a_seeded_client_needs_no_random_number_crate_and_replays_its_tokens() {
    let tokens: Vec<_> = (0..2)
        .map(|_| {
            let clock = ManualClock::new(Millis(0));
            let nodes = (0..3).map(|_| MemoryNode::new(clock.clone())).collect();
            let mut redlock = Redlock::with_seed(nodes, Config::new(3), clock, 7).unwrap();
            redlock.lock("orders", TTL).unwrap().expect("free").token()
        })
        .collect();
    assert_eq!(tokens[0], tokens[1], "one seed, one token");
    let clock = ManualClock::new(Millis(0));
    let nodes = (0..3).map(|_| MemoryNode::new(clock.clone())).collect();
    let mut redlock = Redlock::with_os_rng(nodes, Config::new(3), clock).unwrap();
    let token = redlock.lock("orders", TTL).unwrap().expect("free").token();
    assert_ne!(token, tokens[0], "the operating system's seed is not 7");
}

#[test]
fn extend_moves_the_deadline_and_is_refused_after_it() {
    let (clock, mut a) = client();
    let mut guard = a.lock("orders", TTL).unwrap().expect("free lock");
    let first = guard.deadline();
    clock.advance(Millis(5_000));
    assert!(guard.extend().unwrap());
    assert_eq!(guard.deadline(), first + Millis(5_000));
    clock.advance(Millis(20_000));
    assert!(!guard.is_valid());
    assert!(
        !guard.extend().unwrap(),
        "an expired lease cannot be extended"
    );
}

#[test]
fn bad_input_is_a_typed_error() {
    let (_clock, mut a) = client();
    let empty = a
        .lock("", TTL)
        .expect_err("empty resource refused")
        .to_string();
    assert!(empty.contains("resource name is empty"), "{empty}");
    let zero = a
        .lock("orders", Millis(0))
        .expect_err("zero ttl refused")
        .to_string();
    assert!(zero.contains("ttl must be positive"), "{zero}");
    let tiny = a
        .lock("orders", Millis(2))
        .expect_err("ttl below drift refused")
        .to_string();
    assert!(tiny.contains("not larger than the clock drift"), "{tiny}");
    let none = Redlock::new(
        Vec::<MemoryNode>::new(),
        Config::new(3),
        ManualClock::default(),
        ChaCha20Rng::seed_from_u64(0),
    );
    assert!(
        none.expect_err("no nodes refused")
            .to_string()
            .contains("at least one node")
    );
}

/// Three in-memory nodes with `fencing`, node 0's counter run ahead by `ahead` keys that were
/// set and deleted behind the client's back (failed rounds and late `SET`s do that too).
fn fenced_client(
    fencing: redlock_lab::proto::Fencing,
    ahead: u64,
) -> Redlock<MemoryNode, ManualClock, ChaCha20Rng> {
    use redlock_lab::node::Node;
    use redlock_lab::proto::Token;
    let clock = ManualClock::new(Millis(0));
    let mut nodes: Vec<MemoryNode> = (0..3).map(|_| MemoryNode::new(clock.clone())).collect();
    for i in 0..ahead {
        assert_eq!(
            nodes[0].set_nx_px("orders", Token(u128::from(i)), TTL),
            Ok(Some(i + 1))
        );
        assert_eq!(nodes[0].del_if_eq("orders", Token(u128::from(i))), Ok(true));
    }
    let mut config = Config::new(3);
    config.retry.attempts = 1;
    config.fencing = fencing;
    Redlock::new(nodes, config, clock, ChaCha20Rng::seed_from_u64(2)).unwrap()
}

#[test]
fn fencing_tokens_come_from_the_lock_round_and_grow_only_with_the_write_back() {
    use redlock_lab::proto::Fencing;
    // Fencing off: no token.
    let mut off = fenced_client(Fencing::Off, 0);
    assert_eq!(
        off.lock("orders", TTL).unwrap().unwrap().fencing_token(),
        None
    );

    for (fencing, later) in [(Fencing::MaxOnly, 2), (Fencing::WriteBack, 7)] {
        let mut redlock = fenced_client(fencing, 5);
        // The first holder's quorum includes node 0, which is ahead: token 6.
        let first = redlock.lock("orders", TTL).unwrap().expect("free");
        assert_eq!(first.fencing_token(), Some(6), "{fencing:?}");
        first.unlock();
        // The next holder's quorum is nodes 1 and 2 (node 0 is down).
        redlock.nodes_mut()[0].crash();
        let second = redlock.lock("orders", TTL).unwrap().expect("two nodes up");
        assert_eq!(second.fencing_token(), Some(later), "{fencing:?}");
    }
    // Without the write-back the later holder's token went backwards (2 < 6); with it, the
    // counters of nodes 1 and 2 were raised to 6 before the first holder counted as acquired.
}

#[test]
fn a_sequential_client_asks_one_node_after_another_and_skips_a_dead_one() {
    let clock = ManualClock::new(Millis(0));
    let mut nodes: Vec<MemoryNode> = (0..3).map(|_| MemoryNode::new(clock.clone())).collect();
    nodes[0].crash();
    let mut config = Config::new(3);
    config.retry.attempts = 1;
    config.contact = redlock_lab::proto::Contact::Sequential;
    let mut a = Redlock::new(nodes, config, clock.clone(), ChaCha20Rng::seed_from_u64(1)).unwrap();
    let guard = a
        .lock("orders", TTL)
        .unwrap()
        .expect("n2 and n3 are a majority");
    let token = guard.token();
    assert_eq!(guard.nodes().result(NodeId(0)), NodeResult::Failed);
    std::mem::forget(guard);
    let holders: Vec<_> = a.nodes().iter().map(|node| node.holder("orders")).collect();
    assert_eq!(holders, vec![None, Some(token), Some(token)]);
}

/// `try_lock` is one attempt whatever the retry policy says, as a `try_lock` is elsewhere;
/// `lock` makes the policy's attempts, pausing between them on the client's clock.
#[test]
fn try_lock_is_one_attempt_and_lock_retries() {
    let clock = ManualClock::new(Millis(0));
    let nodes = (0..3).map(|_| MemoryNode::new(clock.clone())).collect();
    let mut config = Config::new(3);
    config.retry.attempts = 3;
    let mut a = Redlock::new(nodes, config, clock.clone(), ChaCha20Rng::seed_from_u64(1)).unwrap();
    for node in a.nodes_mut().iter_mut().skip(1) {
        node.crash();
    }
    let Acquisition::Unreachable(once) = a.try_lock("orders", TTL).unwrap() else {
        panic!("two crashed nodes of three are no quorum");
    };
    assert_eq!(once.attempts, 1);
    assert_eq!(clock.now(), Millis(0), "one attempt does not pause");
    let Err(redlock_lab::driver::DriverError::Unreachable(retried)) = a.lock("orders", TTL) else {
        panic!("lock reports no quorum as an error");
    };
    assert_eq!(retried.attempts, 3);
    assert!(
        clock.now() >= Millis(2 * 200),
        "two pauses of at least 200 ms"
    );
}
