//! Every size: the node-count argument (`src/check/reach.rs`) against the checker itself at
//! N = 1…7 on every catalog scenario it covers, and the parity pattern the argument rests on.
//!
//! A reach is a claim about sizes the file does not have; here each claim is checked at every
//! size the model holds: wherever a verdict's reach covers `N`, the scenario resized to `N`
//! nodes must get the same verdict from a plain run.
//!
//! Under `cargo test` each run has a budget, and the (scenario, N) pairs that need more are
//! left to the ignored full run: `docs/sizes.md` lists them (`UPDATE_EXPECT=1` rewrites the
//! list), the budgeted run fails if it leaves any other pair unsettled, and it writes how many
//! pairs it compared and which it left to the real stderr, where a passing run shows it.

mod common;

use std::collections::BTreeMap;

use redlock_lab::check::reach::{Argument, NodeCounts, Reach};
use redlock_lab::check::{Check, Report};
use redlock_lab::scenario::{MAX_MODEL_NODES, Scenario, Verdict, property};

/// The catalog files whose verdict at three or more nodes is not the same within a parity
/// class (3, 5, 7 or 4, 6), each with the reason. Empty: none is known.
const PARITY_EXCEPTIONS: &[(&str, &str)] = &[];

fn mutual_exclusion(report: &Report) -> (Verdict, Reach) {
    let p = report
        .property(property::MUTUAL_EXCLUSION)
        .expect("every safety run judges mutual exclusion");
    (p.verdict, p.reach)
}

/// The most states (zones for the zone engine, which cost more each) one run at one size may
/// explore in `cargo test`: a count, not a time, so what is compared does not depend on the
/// machine's load. A run that needs more is reported as not settled, and the ignored test
/// below runs it in full.
const STATE_BUDGET: usize = 300_000;
const ZONE_BUDGET: usize = 20_000;

/// Mutual exclusion at `nodes` nodes, from a plain run (no reach: the claim under test),
/// [`Verdict::Incomplete`] past `budget` states.
fn verdict_at(scenario: &Scenario, nodes: usize, budget: Option<usize>) -> Verdict {
    let resized = scenario.with_nodes(nodes).expect("resizable");
    let mut check = Check::new(&resized).reach(false);
    if let Some(states) = budget {
        // One checker thread: a run stopped at the budget stops at the same state every time.
        check = check.threads(1);
        check = match check.chosen_engine() {
            redlock_lab::check::Engine::Zones => check.max_states(ZONE_BUDGET),
            _ => check.max_states(states),
        };
    }
    let report = check.run();
    eprintln!(
        "  {} at N = {nodes}: {:.2} s, {} states",
        scenario.name, report.seconds, report.unique_states
    );
    mutual_exclusion(&report).0
}

/// The catalog scenarios the argument covers (every client reaches every node, and some
/// argument carries the verdict past the file's size), with their verdict and reach at their
/// own size.
fn covered() -> Vec<(Scenario, Verdict, Reach)> {
    let scenarios: Vec<Scenario> = redlock_lab::catalog::scenarios()
        .unwrap()
        .into_iter()
        .filter(|s| s.with_nodes(MAX_MODEL_NODES).is_ok() && s.storage.is_none())
        .collect();
    // Two scenarios at a time: each check works out its reach, which runs several more.
    let reports = common::on_two_threads(&scenarios, |s| {
        mutual_exclusion(&Check::new(s).threads(1).run())
    });
    scenarios
        .into_iter()
        .zip(reports)
        .map(|(s, (verdict, reach))| (s, verdict, reach))
        .filter(|(_, _, reach)| reach.argument != Argument::None)
        .collect()
}

#[test]
fn every_reach_agrees_with_the_checker_at_every_size_up_to_seven_nodes() {
    every_size(Some(STATE_BUDGET));
}

/// The same without a state budget: every size settled (about half an hour in release).
#[test]
#[ignore = "runs every catalog scenario at seven nodes in full; run with --ignored"]
fn every_reach_agrees_with_the_checker_at_every_size_without_a_budget() {
    every_size(None);
}

/// Where `docs/sizes.md` lists the pairs the budgeted run leaves to the full run.
const BEGIN: &str = "<!-- pairs left to the full run: tests/sizes.rs -->\n";
const END: &str = "<!-- end of pairs left to the full run -->";

/// The budgeted run compares at least this many (scenario, N) pairs: every pair of every
/// covered scenario at N = 1…7 but those `docs/sizes.md` leaves to the full run. Today's count.
const COMPARED_AT_LEAST: usize = 285;

/// The pairs `docs/sizes.md` leaves to the full run, one `scenario from N = n` a line (that
/// size and every larger one).
fn documented_unsettled() -> (String, Vec<String>) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/sizes.md");
    let doc = std::fs::read_to_string(&path).expect("docs/sizes.md");
    let start = doc.find(BEGIN).expect("the list's start marker") + BEGIN.len();
    let end = doc.find(END).expect("the list's end marker");
    let listed = doc[start..end]
        .lines()
        .filter_map(|l| l.strip_prefix("- `"))
        .map(|l| l.replacen("` from N = ", " from N = ", 1))
        .collect();
    (doc, listed)
}

/// Rewrites the list in `docs/sizes.md` (under `UPDATE_EXPECT=1`).
fn write_unsettled(doc: &str, unsettled: &[String]) {
    let start = doc.find(BEGIN).expect("the list's start marker") + BEGIN.len();
    let end = doc.find(END).expect("the list's end marker");
    let lines: String = unsettled
        .iter()
        .map(|pair| format!("- `{}\n", pair.replacen(" from N = ", "` from N = ", 1)))
        .collect();
    let updated = format!("{}{lines}{}", &doc[..start], &doc[end..]);
    std::fs::write(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/sizes.md"),
        updated,
    )
    .expect("docs/sizes.md is writable");
}

/// Mutual exclusion at N = 1…7 (the file's own size from `verdict`), ascending, and the first
/// size left unsettled: a size past the budget is followed by larger ones, which are not run.
fn verdicts_by_size(
    scenario: &Scenario,
    verdict: Verdict,
    budget: Option<usize>,
) -> (Vec<Verdict>, Option<usize>) {
    let own = scenario.lock.nodes();
    let mut verdicts = vec![Verdict::Incomplete; MAX_MODEL_NODES];
    for n in 1..=MAX_MODEL_NODES {
        verdicts[n - 1] = if n == own {
            verdict
        } else {
            verdict_at(scenario, n, budget)
        };
        if verdicts[n - 1] == Verdict::Incomplete {
            return (verdicts, Some(n));
        }
    }
    (verdicts, None)
}

fn every_size(budget: Option<usize>) {
    let mut unsettled = Vec::new();
    let mut pairs = 0;
    let mut by_argument: BTreeMap<String, usize> = BTreeMap::new();
    let mut parity_breaks = Vec::new();
    let mut wrong = Vec::new();
    let covered = covered();
    // Two scenarios at a time, each run on one checker thread.
    let sizes = common::on_two_threads(&covered, |(scenario, verdict, _)| {
        verdicts_by_size(scenario, *verdict, budget)
    });
    for ((scenario, verdict, reach), (verdicts, first_unsettled)) in covered.into_iter().zip(sizes)
    {
        *by_argument
            .entry(format!("{:?}", reach.argument))
            .or_default() += 1;
        let own = scenario.lock.nodes();
        pairs += MAX_MODEL_NODES;
        if let Some(n) = first_unsettled {
            unsettled.push((scenario.name.clone(), n));
        }
        for (i, at) in verdicts.iter().enumerate() {
            let n = i + 1;
            if reach.covers_nodes(n, own) && *at != verdict && *at != Verdict::Incomplete {
                wrong.push(format!(
                    "{}: {verdict:?} for {} ({:?}), but {at:?} at N = {n}",
                    scenario.name,
                    reach.describe(verdict, own, usize::from(scenario.lock.clients)),
                    reach.argument
                ));
            }
        }
        let parity_holds = (3..=MAX_MODEL_NODES - 2).all(|n| {
            let (a, b) = (verdicts[n - 1], verdicts[n + 1]);
            a == b || a == Verdict::Incomplete || b == Verdict::Incomplete
        });
        if !parity_holds
            && !PARITY_EXCEPTIONS
                .iter()
                .any(|(name, _)| *name == scenario.name)
        {
            parity_breaks.push(format!("{}: N = 1…7 gives {verdicts:?}", scenario.name));
        }
        println!(
            "{:<48} {:<14} {verdicts:?}",
            scenario.name,
            format!("{:?}", reach.argument)
        );
    }
    // Every size from the first unsettled one up is left.
    let left: usize = unsettled.iter().map(|(_, n)| MAX_MODEL_NODES + 1 - n).sum();
    let compared = pairs - left;
    let unsettled: Vec<String> = unsettled
        .iter()
        .map(|(name, n)| format!("{name} from N = {n}"))
        .collect();
    // Reported where a passing run shows it (the print macros are captured): how much was
    // compared, and what was not.
    common::tell(&format!(
        "sizes: {compared} of {pairs} (scenario, N) pairs compared{}; {left} left to the ignored full run{}{}",
        budget.map_or(String::new(), |b| format!(
            " within {b} states ({ZONE_BUDGET} zones) a run"
        )),
        if unsettled.is_empty() { "" } else { ":\n  " },
        unsettled.join("\n  ")
    ));
    if budget.is_some() {
        let (doc, documented) = documented_unsettled();
        if std::env::var_os("UPDATE_EXPECT").is_some() {
            write_unsettled(&doc, &unsettled);
        } else {
            let undocumented: Vec<&String> = unsettled
                .iter()
                .filter(|pair| !documented.contains(pair))
                .collect();
            assert!(
                undocumented.is_empty(),
                "pairs the budgeted run no longer compares, which docs/sizes.md says it does \
                 (UPDATE_EXPECT=1 rewrites its list): {undocumented:?}"
            );
            let settled_now: Vec<&String> = documented
                .iter()
                .filter(|pair| !unsettled.contains(pair))
                .collect();
            if !settled_now.is_empty() {
                common::tell(&format!(
                    "sizes: pairs docs/sizes.md leaves to the full run that settled within the \
                     budget (UPDATE_EXPECT=1 rewrites its list): {settled_now:?}"
                ));
            }
        }
        assert!(
            compared >= COMPARED_AT_LEAST,
            "only {compared} of {pairs} pairs compared, fewer than today's {COMPARED_AT_LEAST}"
        );
        // The documents say what CI compares, in these numbers.
        let claim = format!("at least {COMPARED_AT_LEAST} of the {pairs}");
        for file in ["docs/safety.md", "ARCHITECTURE.md", "docs/sizes.md"] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
            assert!(text.contains(&claim), "{file} should say {claim:?}");
        }
    }
    assert!(
        wrong.is_empty(),
        "reaches the checker contradicts:\n{}",
        wrong.join("\n")
    );
    assert!(
        parity_breaks.is_empty(),
        "verdicts that differ within a parity class:\n{}",
        parity_breaks.join("\n")
    );
    // The argument must carry most of the covered catalog, in each of its forms.
    for argument in [Argument::OneNode, Argument::Mirror, Argument::Spread] {
        assert!(
            by_argument.contains_key(&format!("{argument:?}")),
            "no catalog scenario reaches further by {argument:?}: {by_argument:?}"
        );
    }
}

/// What an even number of masters buys: one node's crash without persistence breaks every odd
/// `N` and no even one, and the reach says so from one-node lemmas alone.
#[test]
fn one_crash_breaks_every_odd_number_of_nodes_and_no_even_one() {
    let scenario = redlock_lab::catalog::find("crash-immediate-restart-no-persistence")
        .unwrap()
        .scenario()
        .unwrap();
    let (verdict, reach) = mutual_exclusion(&Check::new(&scenario).run());
    assert_eq!(
        (verdict, reach.nodes),
        (Verdict::Violated, NodeCounts::EveryOdd)
    );
    let four = scenario.with_nodes(4).unwrap();
    let (verdict, reach) = mutual_exclusion(&Check::new(&four).run());
    assert_eq!(verdict, Verdict::Holds);
    assert_eq!(
        (reach.nodes, reach.argument),
        (NodeCounts::EveryEven, Argument::SharedNodes)
    );
}

/// The simulator runs every size the model does: seven nodes, a quorum of four, locks taken
/// and mutual exclusion kept without faults.
#[test]
fn the_simulator_runs_every_size_the_model_holds() {
    use redlock_lab::property::Property;
    use redlock_lab::sim::{self, SimConfig};

    let scenario = redlock_lab::catalog::find("redlock-fault-free")
        .unwrap()
        .scenario()
        .unwrap();
    for nodes in 1..=MAX_MODEL_NODES {
        let config = SimConfig::from_scenario(&scenario.with_nodes(nodes).unwrap()).unwrap();
        assert_eq!(config.nodes(), nodes);
        let mut acquisitions = 0;
        for seed in 0..20 {
            let outcome = sim::run(&config, seed).unwrap();
            assert!(
                outcome.holds(Property::MutualExclusion),
                "N = {nodes}, seed {seed}"
            );
            assert!(outcome.stats.messages_sent >= nodes as u64);
            acquisitions += outcome.stats.acquisitions;
        }
        assert!(acquisitions > 0, "N = {nodes}: no lock taken in 20 runs");
    }
}
