use super::*;
use crate::proto::{ExtensionQuorum, NodeSet, RoundDecision, UnlockMode, ValidityCheck};
use crate::sim::{Fault, FaultClass, FaultPlan, KindBudget, ScheduledFault};
use crate::time::Millis;

const HEADER: &str =
    "name = \"x\"\ntitle = \"t\"\nclaim = \"c\"\nsource = \"derived\"\nprose = \"p\"\n";

fn parse(body: &str) -> Result<Scenario, ScenarioError> {
    Scenario::from_str("s.toml", &format!("{HEADER}{body}"))
}

#[test]
fn defaults_follow_the_catalog_conventions() {
    let s = parse("[expect]\n\"mutual exclusion\" = \"holds\"\n").unwrap();
    assert_eq!(
        (
            s.lock.nodes(),
            s.lock.clients,
            s.lock.params.ttl,
            s.lock.params.drift
        ),
        (3, 2, Millis(10), Millis(1))
    );
    assert_eq!(s.network.reach, vec![NodeSet::first(3); 2]);
    assert_eq!(s.liveness.horizon_ticks, 30);
    assert!(s.symmetry && s.storage.is_none() && s.faults == FaultSettings::default());
}

#[test]
fn the_lock_settings_resolve_once_into_the_cores_configuration() {
    let s = parse(
        "[lock]\nnodes = 5\nttl_ticks = 6\ndrift_ticks = 2\nround_timeout_ticks = 9\nattempts = 3\nunlock = \"del\"\nvalidity_check = false\ndecision = \"all-replies\"\nextensions = 1\nextension_quorum = \"any-node\"\n[expect]\n\"mutual exclusion\" = \"holds\"\n",
    )
    .unwrap();
    let params = s.lock.params;
    assert_eq!(params.node_count, 5);
    assert_eq!(params.retry.attempts, 3);
    assert_eq!(
        params.retry.delay_max,
        Millis::ZERO,
        "the model explores every delay"
    );
    assert_eq!(params.unlock, UnlockMode::PlainDel);
    assert_eq!(params.validity_check, ValidityCheck::Off);
    assert_eq!(params.decision, RoundDecision::AllReplies);
    assert_eq!(params.extension_quorum, ExtensionQuorum::AnyNode);
    assert_eq!(params.fencing, crate::proto::Fencing::Off, "no [storage]");
    // The core caps the round timeout at ttl − drift.
    assert_eq!(
        (params.ttl, params.drift, params.round_timeout),
        (Millis(6), Millis(2), Millis(4))
    );
    assert_eq!(params.quorum(), 3);
}

#[test]
fn the_decision_and_the_client_guard_are_read_and_checked() {
    let s = parse("[expect]\n\"mutual exclusion\" = \"holds\"\n").unwrap();
    assert_eq!(
        s.lock.params.decision,
        RoundDecision::AtQuorum,
        "the core's default"
    );
    let s = parse(
        "[lock]\ndecision = \"all-replies\"\n[faults.crashes]\nclient_guard_ticks = 3\n\
         [expect]\n\"mutual exclusion\" = \"holds\"\n",
    )
    .unwrap();
    assert_eq!(s.lock.params.decision, RoundDecision::AllReplies);
    assert_eq!(s.faults.crashes.unwrap().client_guard_ticks, 3);
    assert!(
        parse("[lock]\ndecision = \"later\"\n[expect]\n\"mutual exclusion\" = \"holds\"\n")
            .is_err()
    );
    let e = parse(
        "[faults.crashes]\nclient_guard_ticks = 1000001\n[expect]\n\"mutual exclusion\" = \"holds\"\n",
    )
    .unwrap_err();
    assert!(e.to_string().contains("client_guard_ticks"), "{e}");
}

#[test]
fn tokens_client_crashes_and_retry_delays_are_read_and_checked() {
    let s = parse("[expect]\n\"mutual exclusion\" = \"holds\"\n").unwrap();
    assert_eq!(
        (
            s.lock.token,
            s.faults.client_crashes,
            s.lock.params.retry.delay_min
        ),
        (Tokens::Unique, None, Millis::ZERO)
    );
    let s = parse(
        "[lock]\ntoken = \"shared\"\nretry_delay_ticks = 3\n[faults.client_crashes]\n\
         [expect]\n\"mutual exclusion\" = \"holds\"\n",
    )
    .unwrap();
    assert_eq!(s.lock.token, Tokens::Shared);
    assert_eq!(
        s.faults.client_crashes,
        Some(ClientFaultSettings {
            count: 1,
            aim: crate::fault::ClientFaultAim::ANY
        })
    );
    assert_eq!(s.lock.params.retry.delay_min, Millis(3));
    let e = parse(
        "[lock]\nclients = 2\n[faults.client_crashes]\ncount = 3\n\
         [expect]\n\"mutual exclusion\" = \"holds\"\n",
    )
    .unwrap_err();
    assert!(e.to_string().starts_with("s.toml:9:9: "), "{e}");
    assert!(e.to_string().contains("more than the 2 clients"), "{e}");
    let e = parse(
        "[lock]\nnodes = 1\ntoken = \"shared\"\n[failover]\n\
         [expect]\n\"mutual exclusion\" = \"holds\"\n",
    )
    .unwrap_err();
    assert!(e.to_string().starts_with("s.toml:8:9: "), "{e}");
    let e = parse("[lock]\ntoken = \"random\"\n[expect]\n\"mutual exclusion\" = \"holds\"\n")
        .unwrap_err();
    assert!(e.to_string().contains("s.toml:7:"), "{e}");
    let e =
        parse("[lock]\nretry_delay_ticks = 1000001\n[expect]\n\"mutual exclusion\" = \"holds\"\n")
            .unwrap_err();
    assert!(e.to_string().contains("retry_delay_ticks"), "{e}");
}

#[test]
fn validity_check_takes_a_bool_or_acquisition_only_and_token_reused_keeps_the_value() {
    let s = parse(
        "[lock]\nvalidity_check = \"acquisition-only\"\ntoken = \"reused\"\n\
         [expect]\n\"mutual exclusion\" = \"holds\"\n",
    )
    .unwrap();
    assert_eq!(s.lock.params.validity_check, ValidityCheck::AcquisitionOnly);
    assert_eq!(
        s.lock.params.retry_token,
        crate::proto::RetryToken::Kept,
        "the core keeps the value"
    );
    let e = parse(
        "[lock]\nvalidity_check = \"sometimes\"\n[expect]\n\"mutual exclusion\" = \"holds\"\n",
    )
    .unwrap_err();
    assert!(e.to_string().starts_with("s.toml:7:18: "), "{e}");
    assert!(
        e.to_string()
            .contains("expected true, false or \"acquisition-only\""),
        "{e}"
    );
}

/// A file of two clients whose `[faults.TABLE]` (`client_crashes` or `client_partitions`)
/// holds `body`: the header takes five lines and the table opens on line 8, so `body` starts on
/// line 9.
fn client_fault(table: &str, body: &str) -> Result<Scenario, ScenarioError> {
    parse(&format!(
        "[lock]\nclients = 2\n[faults.{table}]\n{body}\n[expect]\n\"mutual exclusion\" = \"holds\"\n"
    ))
}

/// The refusal of [`client_fault`]'s file, which starts with where it is written.
fn refused(table: &str, body: &str) -> String {
    client_fault(table, body).unwrap_err().to_string()
}

/// A client fault aimed at c2 while it holds, and what either table reads of it.
const AIMED: &str = "client = 2\nwhen = \"holding\"";
const AIMED_SETTINGS: ClientFaultSettings = ClientFaultSettings {
    count: 1,
    aim: crate::fault::ClientFaultAim {
        client: Some(1),
        when: crate::fault::CrashWhen::Holding,
    },
};

/// The refusals both client-fault tables share, each where it is written; `once` is the
/// table's reason that one client takes one such fault at most.
fn assert_client_fault_refusals(table: &str, once: &str) {
    let e = refused(table, "client = 3");
    assert!(e.starts_with("s.toml:9:10: "), "{e}");
    assert!(e.contains(&format!("{table}.client")), "{e}");
    let e = refused(table, "client = 0");
    assert!(e.starts_with("s.toml:9:10: "), "{e}");
    let e = refused(table, "count = 3");
    assert!(e.starts_with("s.toml:9:9: "), "{e}");
    let plural = table.replace('_', " ");
    assert!(
        e.contains(&format!("3 {plural} is more than the 2 clients")),
        "{e}"
    );
    let e = refused(table, "count = 2\nclient = 1");
    assert!(e.starts_with("s.toml:10:10: "), "{e}");
    assert!(e.contains(once), "{e}");
    let e = refused(table, "when = \"later\"");
    assert!(e.starts_with("s.toml:9:8: "), "{e}");
    assert!(e.contains("holding"), "{e}");
    let e = refused(table, "victim = 1");
    assert!(e.starts_with("s.toml:9:"), "{e}");
    assert!(e.contains("victim"), "{e}");
}

#[test]
fn a_client_crash_is_aimed_at_one_client_while_it_holds() {
    let s = client_fault("client_crashes", AIMED).unwrap();
    assert_eq!(s.faults.client_crashes, Some(AIMED_SETTINGS));
    let s = client_fault("client_crashes", "when = \"any\"").unwrap();
    assert_eq!(
        s.faults.client_crashes.unwrap().aim,
        crate::fault::ClientFaultAim::ANY
    );
}

#[test]
fn a_bad_client_crash_aim_is_refused_where_it_is_written() {
    assert_client_fault_refusals("client_crashes", "dies once");
}

#[test]
fn a_client_partition_is_read_and_refused_like_a_client_crash() {
    let s = client_fault("client_partitions", AIMED).unwrap();
    assert_eq!(s.faults.client_partitions, Some(AIMED_SETTINGS));
    assert_eq!(s.faults.client_crashes, None);
    assert_client_fault_refusals("client_partitions", "is cut off once");
}

#[test]
fn unbounded_extensions_and_the_liveness_client_are_read_and_checked() {
    let s = parse(
        "[lock]\nextensions = \"unbounded\"\n[liveness]\nclient = 2\n\
         [expect]\n\"mutual exclusion\" = \"holds\"\n",
    )
    .unwrap();
    assert_eq!(s.lock.extensions, UNBOUNDED_EXTENSIONS);
    assert_eq!(s.liveness.client, Some(1));
    let e =
        parse("[lock]\nextensions = 4\n[expect]\n\"mutual exclusion\" = \"holds\"\n").unwrap_err();
    assert!(e.to_string().starts_with("s.toml:7:14: "), "{e}");
    assert!(e.to_string().contains("\"unbounded\""), "{e}");
    let e =
        parse("[liveness]\nclient = 3\n[expect]\n\"mutual exclusion\" = \"holds\"\n").unwrap_err();
    assert!(e.to_string().starts_with("s.toml:7:10: "), "{e}");
}

#[test]
fn failover_may_replicate_one_of_several_nodes() {
    let s = parse(
        "[lock]\nnodes = 3\n[failover]\npromotion_delay_ticks = 3\n\
         [expect]\n\"mutual exclusion\" = \"holds\"\n",
    )
    .unwrap();
    assert_eq!(
        (s.lock.nodes(), s.failover.map(|f| f.promotion_delay_ticks)),
        (3, Some(3))
    );
}

#[test]
fn every_node_gives_each_node_one_replica_and_failovers_count_nodes() {
    let read = |body: &str| {
        parse(&format!(
            "[lock]\nnodes = 3\n[failover]\n{body}\n[expect]\n\"mutual exclusion\" = \"holds\"\n"
        ))
        .map(|s| s.failover.map(|f| (f.every_node, f.failovers)))
    };
    assert_eq!(read("").unwrap(), Some((false, 1)));
    let all = read("every_node = true\nfailovers = 3").unwrap();
    assert_eq!(all, Some((true, 3)));
    let e = read("failovers = 2").unwrap_err().to_string();
    assert!(e.starts_with("s.toml:9:13: "), "{e}");
    assert!(e.contains("only n1 has replicas"), "{e}");
    let e = read("every_node = true\nfailovers = 4")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("s.toml:10:13: "), "{e}");
    assert!(e.contains("failovers is 4, but must lie in 1..=3"), "{e}");
    let e = read("every_node = true\nreplicas = 2")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("s.toml:10:12: "), "{e}");
    assert!(e.contains("each node has one replica"), "{e}");
}

#[test]
fn failover_replicas_and_wait_take_a_count_and_wait_keeps_its_first_spelling() {
    let read = |body: &str| {
        parse(&format!(
            "[lock]\nnodes = 1\n[failover]\n{body}\n[expect]\n\"mutual exclusion\" = \"holds\"\n"
        ))
        .map(|s| s.failover.map(|f| (f.replicas, f.wait)))
    };
    assert_eq!(read("").unwrap(), Some((1, 0)));
    assert_eq!(read("wait = true").unwrap(), Some((1, 1)));
    assert_eq!(read("wait = false").unwrap(), Some((1, 0)));
    assert_eq!(read("replicas = 2\nwait = 1").unwrap(), Some((2, 1)));
    assert_eq!(read("replicas = 2\nwait = 2").unwrap(), Some((2, 2)));
    let e = read("replicas = 3").unwrap_err().to_string();
    assert!(e.starts_with("s.toml:9:12: "), "{e}");
    assert!(e.contains("replicas is 3, but must lie in 1..=2"), "{e}");
    let e = read("replicas = 2\nwait = 3").unwrap_err().to_string();
    assert!(e.starts_with("s.toml:10:8: "), "{e}");
    assert!(
        e.contains("more replicas than n1 has (replicas = 2)"),
        "{e}"
    );
    let e = read("wait = 2").unwrap_err().to_string();
    assert!(e.starts_with("s.toml:9:8: "), "{e}");
    let e = read("wait = \"all\"").unwrap_err().to_string();
    assert!(e.contains("true, false, or a number of replicas"), "{e}");
}

#[test]
fn a_pinned_quorum_is_read_into_the_cores_params_and_checked_against_the_nodes() {
    let expect = "[expect]\n\"mutual exclusion\" = \"holds\"\n";
    let s = parse(&format!("[lock]\nnodes = 4\nquorum = 2\n{expect}")).unwrap();
    assert_eq!((s.lock.params.quorum(), s.lock.params.quorum), (2, Some(2)));
    // The majority written out is the default, not a pinned choice.
    let s = parse(&format!("[lock]\nnodes = 4\nquorum = 3\n{expect}")).unwrap();
    assert_eq!((s.lock.params.quorum(), s.lock.params.quorum), (3, None));
    for bad in [0, 5] {
        let e = parse(&format!("[lock]\nnodes = 4\nquorum = {bad}\n{expect}")).unwrap_err();
        assert!(
            e.to_string().starts_with(&format!(
                "s.toml:8:10: quorum is {bad}, but must lie in 1..=4"
            )),
            "{e}"
        );
    }
}

#[test]
fn a_quorum_array_gives_each_client_its_own_lock_and_is_checked_per_value() {
    let expect = "[expect]\n\"mutual exclusion\" = \"holds\"\n";
    let s = parse(&format!("[lock]\nnodes = 3\nquorum = [3, 2]\n{expect}")).unwrap();
    assert!(s.lock.quorums_differ() && s.lock.quorum_pinned());
    assert_eq!(s.lock.quorums(), [3, 2]);
    assert_eq!(s.lock.client_params(0).quorum(), 3);
    assert_eq!(
        (
            s.lock.client_params(1).quorum(),
            s.lock.client_params(1).quorum
        ),
        (2, None)
    );
    // Equal values are the one value: nothing per client.
    let s = parse(&format!("[lock]\nnodes = 3\nquorum = [2, 2]\n{expect}")).unwrap();
    assert!(!s.lock.quorums_differ() && !s.lock.quorum_pinned());
    let s = parse(&format!("[lock]\nnodes = 3\nquorum = [1, 1]\n{expect}")).unwrap();
    assert_eq!(
        (s.lock.quorums_differ(), s.lock.params.quorum),
        (false, Some(1))
    );
    for (text, error) in [
        (
            "[3, 2, 2]",
            "s.toml:8:10: quorum lists 3 values, but there are 2 clients",
        ),
        (
            "[3]",
            "s.toml:8:10: quorum lists 1 values, but there are 2 clients",
        ),
        (
            "[3, 4]",
            "s.toml:8:14: quorum of c2 is 4, but must lie in 1..=3",
        ),
        (
            "[0, 2]",
            "s.toml:8:11: quorum of c1 is 0, but must lie in 1..=3",
        ),
    ] {
        let e = parse(&format!("[lock]\nnodes = 3\nquorum = {text}\n{expect}")).unwrap_err();
        assert!(e.to_string().starts_with(error), "{e}");
    }
}

#[test]
fn errors_point_at_the_offending_text() {
    let e = parse(
        "[lock]\nttl_ticks = 2\ndrift_ticks = 2\n[expect]\n\"mutual exclusion\" = \"holds\"\n",
    )
    .unwrap_err();
    assert!(matches!(e, ScenarioError::TtlNotAboveDrift { .. }), "{e}");
    assert_eq!(e.location().unwrap().line, 7);
    let e = parse("[lock]\nnodez = 3\n[expect]\n\"mutual exclusion\" = \"holds\"\n").unwrap_err();
    assert!(matches!(e, ScenarioError::UnknownKey { .. }), "{e}");
    assert!(e.to_string().starts_with("s.toml:7:1: unknown key"), "{e}");
}

#[test]
fn a_simulate_table_is_parsed_and_may_stand_in_for_expect() {
    let s = parse(
        "[lock]\nnodes = 3\n[simulate]\nms_per_tick = 2\nduration_ms = 500\nloss_per_mille = 100\npauses = { count = 2, min_ms = 1, max_ms = 60 }\n[simulate.expect]\n\"mutual exclusion\" = \"holds\"\n",
    )
    .unwrap();
    assert!(s.expect.is_empty());
    let simulate = s.simulate.unwrap();
    assert_eq!(simulate.ms_per_tick, Some(2));
    assert_eq!(
        (simulate.duration, simulate.network.loss_per_mille),
        (Millis(500), 100)
    );
    let FaultPlan::Generated(budget) = simulate.faults else {
        panic!("budgets, not a schedule");
    };
    assert_eq!(
        (budget[FaultClass::Pause], budget[FaultClass::Crash]),
        (KindBudget::new(2, Millis(1), Millis(60)), KindBudget::NONE)
    );
    assert_eq!(
        simulate.expect,
        vec![("mutual exclusion".to_owned(), Verdict::Holds)]
    );
    // Without either expectation the file is refused.
    let e = parse("[simulate]\nduration_ms = 500\n").unwrap_err();
    assert!(e.to_string().starts_with("s.toml:1:1:"), "{e}");
}

#[test]
fn bad_simulate_values_point_at_their_key() {
    let e = parse("[simulate]\ndelay_mn_ms = 1\n[expect]\n\"mutual exclusion\" = \"holds\"\n")
        .unwrap_err();
    assert!(e.to_string().starts_with("s.toml:7:1: unknown key"), "{e}");
    let e =
        parse("[simulate]\nloss_per_mille = 1001\n[expect]\n\"mutual exclusion\" = \"holds\"\n")
            .unwrap_err();
    assert!(e.to_string().starts_with("s.toml:7:18:"), "{e}");
    assert!(e.to_string().contains("loss_per_mille is 1001"), "{e}");
    let e = parse("[lock]\nnodes = 3\n[simulate]\n[[simulate.schedule]]\nat_ms = 5\ncrash = 3\n[expect]\n\"mutual exclusion\" = \"holds\"\n")
        .unwrap_err();
    assert!(e.to_string().starts_with("s.toml:11:9:"), "{e}");
    let e = parse("[simulate]\npauses = { count = 1, max_ms = 5 }\n[[simulate.schedule]]\nat_ms = 5\ncrash = 0\n[expect]\n\"mutual exclusion\" = \"holds\"\n")
        .unwrap_err();
    assert!(e.to_string().contains("not both"), "{e}");
    let e = parse("[simulate.expect]\n\"no lost update\" = \"holds\"\n").unwrap_err();
    assert!(e.to_string().contains("[storage]"), "{e}");
}

#[test]
fn a_schedule_names_the_failover_of_the_replicated_master_only() {
    let world = |failover: &str, entry: &str| {
        parse(&format!(
            "{failover}[simulate]\n[[simulate.schedule]]\nat_ms = 5\n{entry}\n[simulate.expect]\n\"mutual exclusion\" = \"violated\"\n"
        ))
    };
    let s = world("[failover]\n", "failover = 0").unwrap();
    assert_eq!(
        s.simulate.map(|sim| sim.faults),
        Some(FaultPlan::Explicit(vec![ScheduledFault {
            at: Millis(5),
            fault: Fault::Failover
        }]))
    );
    let e = world("", "failover = 0").unwrap_err().to_string();
    assert!(e.starts_with("s.toml:9:12: "), "{e}");
    assert!(e.contains("needs a [failover] table"), "{e}");
    let e = world("[failover]\n", "failover = 1")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("s.toml:10:12: "), "{e}");
    let e = world("[failover]\n", "failover = 0\ncrash = 0")
        .unwrap_err()
        .to_string();
    assert!(e.contains("failover = 0 only"), "{e}");
}

/// The settings the model reads, for comparing a file in durations with one in ticks.
fn model_settings(s: &Scenario) -> String {
    format!(
        "{:?} {:?} {:?} {:?} {:?} {:?}",
        s.lock, s.clock, s.storage, s.faults, s.failover, s.liveness
    )
}

#[test]
fn durations_resolve_to_the_ticks_of_their_common_divisor() {
    let in_ticks = parse(
        "[lock]\nttl_ticks = 5\ndrift_ticks = 1\n[clock]\nnode_error_ticks = 1\n[storage]\nprotection = \"fencing-token\"\ncheck_margin_ticks = 2\nmax_delay_ticks = \"unbounded\"\n[faults.clock_jumps]\njump_ticks = -2\n[faults.pauses]\nmax_ticks = 3\n[faults.crashes]\nrestart_delay_ticks = 5\nclient_guard_ticks = 1\n[liveness]\nhorizon_ticks = 15\n[expect]\n\"mutual exclusion\" = \"holds\"\n",
    )
    .unwrap();
    let in_durations = parse(
        "[lock]\nttl = \"10s\"\ndrift = \"2s\"\n[clock]\nnode_error = \"2000ms\"\n[storage]\nprotection = \"fencing-token\"\ncheck_margin = \"4s\"\nmax_delay = \"unbounded\"\n[faults.clock_jumps]\njump = \"-4s\"\n[faults.pauses]\nmax = \"6s\"\n[faults.crashes]\nrestart_delay = \"10s\"\nclient_guard = \"2s\"\n[liveness]\nhorizon = \"30s\"\n[expect]\n\"mutual exclusion\" = \"holds\"\n",
    )
    .unwrap();
    assert_eq!(in_durations.resolution, Some(Millis(2_000)));
    assert_eq!(
        in_ticks.resolution, None,
        "a file in ticks counts abstract ticks"
    );
    assert_eq!(model_settings(&in_durations), model_settings(&in_ticks));
}

#[test]
fn the_clients_default_drift_policy_is_expressible_as_it_is() {
    // `Config`'s default: 1 % of the TTL plus 2 ms, by the core's own arithmetic.
    let s = parse("[lock]\nttl = \"200ms\"\ndrift = \"1% + 2ms\"\n[expect]\n\"mutual exclusion\" = \"holds\"\n")
        .unwrap();
    let default = crate::proto::DriftPolicy::default().drift_for(Millis(200));
    assert_eq!(default, Millis(4));
    assert_eq!(s.resolution, Some(Millis(4)));
    assert_eq!(
        (s.lock.params.ttl, s.lock.params.drift),
        (Millis(50), Millis(1))
    );
    // A TTL in real units without a drift gets that same default.
    let implicit =
        parse("[lock]\nttl = \"200ms\"\n[expect]\n\"mutual exclusion\" = \"holds\"\n").unwrap();
    assert_eq!(model_settings(&implicit), model_settings(&s));
    let refused = parse(
        "[lock]\nttl_ticks = 5\ndrift = \"1%\"\n[expect]\n\"mutual exclusion\" = \"holds\"\n",
    )
    .unwrap_err()
    .to_string();
    assert!(
        refused.contains("needs the TTL written as a duration"),
        "{refused}"
    );
}

#[test]
fn a_resolution_fixes_the_tick_and_lets_tick_keys_count_it() {
    let s = parse("resolution = \"1ms\"\n[lock]\nttl = \"6ms\"\ndrift_ticks = 2\n[expect]\n\"mutual exclusion\" = \"holds\"\n")
        .unwrap();
    assert_eq!(s.resolution, Some(Millis(1)));
    assert_eq!(
        (s.lock.params.ttl, s.lock.params.drift),
        (Millis(6), Millis(2))
    );
    let refused = parse(
        "resolution = \"4ms\"\n[lock]\nttl = \"6ms\"\n[expect]\n\"mutual exclusion\" = \"holds\"\n",
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        refused,
        "s.toml:8:7: ttl = \"6ms\" is not a whole number of ticks of 4 ms (the file's resolution)"
    );
}

#[test]
fn a_duration_that_cannot_resolve_is_refused_where_it_is_written() {
    let error = |body: &str| {
        parse(&format!(
            "{body}[expect]\n\"mutual exclusion\" = \"holds\"\n"
        ))
        .unwrap_err()
        .to_string()
    };
    assert_eq!(
        error("[lock]\nttl = \"10s\"\ndrift_ticks = 1\n"),
        "s.toml:8:15: this file writes durations, so one tick is their greatest common divisor, and drift_ticks would change meaning with every duration: write drift as a duration too, or set resolution = \"…\" to fix the tick"
    );
    assert_eq!(
        error("[lock]\nttl = \"10s\"\nttl_ticks = 5\n"),
        "s.toml:7:7: ttl and ttl_ticks are the same setting: write one of them"
    );
    assert_eq!(
        error("[lock]\nttl = \"10 parsecs\"\n"),
        "s.toml:7:7: ttl = \"10 parsecs\": \"10 parsecs\": unknown unit \"parsecs\" (ms, s, m, h, d, …)"
    );
    assert_eq!(
        error("[lock]\nttl = \"1.5ms\"\n"),
        "s.toml:7:7: ttl = \"1.5ms\": \"1.5ms\" is not a whole number of milliseconds"
    );
    // A constant beyond what any engine takes is refused in the file's own words.
    assert_eq!(
        error("[lock]\nttl = \"1h\"\ndrift = \"2ms\"\n"),
        "s.toml:7:7: ttl = \"1h\" is 1800000 ticks of 2 ms (the file's resolution), but must lie in 1..=1000000 ticks"
    );
    // A check margin is part of the lease: one past `ttl − drift` is refused, and says why.
    assert_eq!(
        error("[lock]\nttl = \"10s\"\ndrift = \"1s\"\n[storage]\ncheck_margin = \"10s\"\n"),
        "s.toml:10:16: check_margin = \"10s\" is 10 ticks of 1000 ms (the file's resolution), but must lie in 1..=9 ticks (the lease, ttl − drift)"
    );
    assert_eq!(
        error("[lock]\nttl = \"10s\"\ndrift = \"1s\"\n[faults.clock_jumps]\n"),
        "s.toml:1:1: missing key: [faults.clock_jumps] needs the size of a jump: jump_ticks = 2, or jump = \"50ms\""
    );
}

/// A file's header with `source` and the citation keys given in `keys`.
fn cited(keys: &str) -> Result<Scenario, ScenarioError> {
    Scenario::from_str(
        "s.toml",
        &format!(
            "name = \"x\"\ntitle = \"t\"\nclaim = \"c\"\n{keys}prose = \"p\"\n[expect]\n\"mutual exclusion\" = \"holds\"\n"
        ),
    )
}

#[test]
fn a_credited_claim_carries_its_sentence() {
    let s = cited("source = \"redis.io\"\nquote = \"Q.\"\n").unwrap();
    assert_eq!(
        s.citation,
        Some(Citation {
            source: Source::RedisIo,
            quote: "Q.".to_owned()
        })
    );
    let s = cited("source = \"derived\"\nbuilds_on = \"seed\"\nquote = \"Q.\"\n").unwrap();
    assert_eq!(s.source, Source::Derived);
    assert_eq!(s.citation.map(|c| c.source), Some(Source::Seed));
    assert_eq!(cited("source = \"derived\"\n").unwrap().citation, None);
}

#[test]
fn a_citation_that_does_not_add_up_is_refused_where_it_is() {
    let cases = [
        // A credited claim without its sentence: pointed at `source`.
        (
            "source = \"Kleppmann\"\n",
            "s.toml:4:10: citation: a claim resting on Kleppmann needs the sentence it rests on",
        ),
        (
            "source = \"antirez\"\nquote = \"  \"\n",
            "s.toml:5:9: citation: quote is empty",
        ),
        (
            "source = \"seed\"\nbuilds_on = \"redis.io\"\nquote = \"Q\"\n",
            "s.toml:5:13: citation: builds_on belongs to a \"derived\" claim",
        ),
        (
            "source = \"derived\"\nbuilds_on = \"derived\"\nquote = \"Q\"\n",
            "s.toml:5:13: citation: builds_on names the source",
        ),
        (
            "source = \"derived\"\nquote = \"Q\"\n",
            "s.toml:5:9: citation: a derived claim quotes only the source it builds on",
        ),
        (
            "source = \"derived\"\nbuilds_on = \"antirez\"\n",
            "s.toml:5:13: citation: a claim resting on antirez needs",
        ),
    ];
    for (keys, expected) in cases {
        let error = cited(keys).unwrap_err();
        assert!(matches!(error, ScenarioError::Citation { .. }), "{error}");
        assert!(error.to_string().starts_with(expected), "{keys:?}: {error}");
    }
}

/// The words the simulator and other printouts use for the core's settings are the words a
/// scenario file writes: each one, written into a file, reads back as its own value.
#[test]
fn every_settings_word_reads_back_as_its_value() {
    use crate::node::Persistence;
    use crate::storage::Protection;
    const EXPECT: &str = "[expect]\n\"mutual exclusion\" = \"holds\"\n";
    for unlock in [UnlockMode::CompareAndDelete, UnlockMode::PlainDel] {
        let s = parse(&format!("[lock]\nunlock = \"{}\"\n{EXPECT}", unlock.word())).unwrap();
        assert_eq!(s.lock.params.unlock, unlock);
    }
    for check in [ValidityCheck::On, ValidityCheck::Off] {
        let s = parse(&format!(
            "[lock]\nvalidity_check = {}\n{EXPECT}",
            check.word()
        ))
        .unwrap();
        assert_eq!(s.lock.params.validity_check, check);
    }
    for decision in [RoundDecision::AtQuorum, RoundDecision::AllReplies] {
        let text = format!("[lock]\ndecision = \"{}\"\n{EXPECT}", decision.word());
        assert_eq!(parse(&text).unwrap().lock.params.decision, decision);
    }
    for persistence in [
        Persistence::None,
        Persistence::FsyncAlways,
        Persistence::FsyncPeriodic,
    ] {
        let text = format!(
            "[faults.crashes]\ncount = 1\npersistence = \"{}\"\n{EXPECT}",
            persistence.word()
        );
        let s = parse(&text).unwrap();
        assert_eq!(s.faults.crashes.map(|c| c.persistence), Some(persistence));
    }
    for protection in [
        Protection::None,
        Protection::FencingToken,
        Protection::FencingOnWritesOnly,
        Protection::RandomTokenCas,
    ] {
        let text = format!(
            "[storage]\nprotection = \"{}\"\n{EXPECT}",
            protection.word()
        );
        let s = parse(&text).unwrap();
        assert_eq!(s.storage.map(|st| st.protection), Some(protection));
    }
}

#[test]
fn a_get_then_del_unlock_keeps_a_failed_rounds_keys_and_takes_no_storage() {
    let head = "[lock]\nnodes = 1\nunlock = \"get-then-del\"\n";
    let expect = "[expect]\n\"mutual exclusion\" = \"holds\"\n";
    let e = parse(&format!("{head}{expect}")).unwrap_err();
    assert!(
        e.to_string().contains("cannot release a failed round"),
        "{e}"
    );
    let keep = format!("{head}release_after_failed_round = false\n");
    let s = parse(&format!("{keep}{expect}")).unwrap();
    assert_eq!(s.lock.params.unlock, UnlockMode::GetThenDel);
    let e = parse(&format!("{keep}[storage]\n{expect}")).unwrap_err();
    assert!(e.to_string().contains("cannot be combined"), "{e}");
    assert_eq!(e.location().unwrap().line, 10, "{e}");
}

#[test]
fn a_list_of_jump_sizes_takes_each_size_once_and_is_checked_per_size() {
    let expect = "[expect]\n\"mutual exclusion\" = \"holds\"\n";
    let jumps = |body: &str| {
        parse(&format!(
            "[faults.clock_jumps]\ntarget = \"node\"\n{body}{expect}"
        ))
    };
    let s = jumps("jump_ticks = [1, -2]\n").unwrap();
    let j = s.faults.clock_jumps.unwrap();
    assert_eq!(
        (j.count, j.jump_ticks.clone()),
        (2, JumpTicks::EachOnce(vec![1, -2]))
    );
    assert_eq!((j.jump_ticks.single(), j.jump_ticks.largest()), (None, 2));
    let s = jumps("jump_ticks = [1, 2]\ncount = 1\n").unwrap();
    assert_eq!(s.faults.clock_jumps.unwrap().count, 1);
    // One size keeps its meaning: `count` jumps of it, one by default.
    let j = jumps("jump_ticks = 2\n")
        .unwrap()
        .faults
        .clock_jumps
        .unwrap();
    assert_eq!((j.count, j.jump_ticks), (1, JumpTicks::Every(2)));
    for (body, error) in [
        (
            "jump_ticks = [1, 2]\ncount = 3\n",
            "s.toml:9:9: clock_jumps.count is 3, but jump_ticks lists 2 sizes and each is used at most once",
        ),
        (
            "jump_ticks = [1, 0]\n",
            "s.toml:8:18: jump_ticks is 0, but must be nonzero",
        ),
        (
            "jump_ticks = [2, -1, 2]\n",
            "s.toml:8:22: jump_ticks lists 2 twice",
        ),
        (
            "jump_ticks = []\n",
            "s.toml:8:14: jump_ticks lists 0 sizes, but a run has 1..=3 jumps",
        ),
        (
            "jump_ticks = [1, 2, 3, 4]\n",
            "s.toml:8:14: jump_ticks lists 4 sizes, but a run has 1..=3 jumps",
        ),
        ("jump_ticks = [1, \"2\"]\n", "s.toml:8:18:"),
    ] {
        let e = jumps(body).unwrap_err();
        assert!(e.to_string().starts_with(error), "{body}: {e}");
    }
}

#[test]
fn a_list_of_jump_durations_resolves_to_ticks_and_is_refused_where_written() {
    let expect = "[expect]\n\"mutual exclusion\" = \"holds\"\n";
    let jumps = |body: &str| {
        parse(&format!(
            "[faults.clock_jumps]\ntarget = \"node\"\n{body}{expect}"
        ))
    };
    // One tick is the durations' common divisor, and each is refused where it is written.
    let lock = "[lock]\nttl = \"50ms\"\ndrift = \"20ms\"\n";
    let s = jumps(&format!("jump = [\"10ms\", \"-20ms\"]\n{lock}")).unwrap();
    let j = s.faults.clock_jumps.unwrap();
    assert_eq!(
        (j.count, j.jump_ticks),
        (2, JumpTicks::EachOnce(vec![1, -2]))
    );
    assert_eq!(s.lock.params.ttl, Millis(5));
    for (body, error) in [
        (
            "jump = [\"10ms\", \"x\"]\n",
            "s.toml:8:17: jump = [.., \"x\", ..]: \"x\" is not a number",
        ),
        (
            "jump = [\"10ms\", \"10ms\"]\n",
            "s.toml:8:17: jump_ticks lists 1 twice",
        ),
        (
            "jump = [\"10ms\"]\njump_ticks = [1]\n",
            "s.toml:8:8: jump and jump_ticks are the same setting",
        ),
    ] {
        let e = jumps(&format!("{body}{lock}")).unwrap_err();
        assert!(e.to_string().starts_with(error), "{body}: {e}");
    }
    let e = parse(&format!(
        "resolution = \"10ms\"\n[faults.clock_jumps]\njump = [\"10ms\", \"15ms\"]\n{lock}{expect}"
    ))
    .unwrap_err();
    assert!(
        e.to_string().starts_with(
            "s.toml:8:17: jump = [.., \"15ms\", ..] is not a whole number of ticks of 10 ms"
        ),
        "{e}"
    );
}
