//! The node-count argument end to end, for every number of nodes and clients: its untimed half
//! (quorum intersection, one key per node, the fault budget) discharged by an SMT solver over
//! sorts of any size (`tests/proofs/quorum.smt2`), and its timed half, the per-node lemma,
//! settled by the model checker on one node (`check::reach`).

use std::process::Command;

use redlock_lab::check::Check;
use redlock_lab::check::reach::{Argument, NodeCounts};
use redlock_lab::scenario::Verdict;

const PROOF: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/proofs/quorum.smt2");

/// The solver's answers to the proof's queries, or `None` when no solver is installed.
fn solve() -> Option<Vec<String>> {
    let z3 = std::env::var("Z3").unwrap_or_else(|_| "z3".to_owned());
    let out = match Command::new(&z3).args(["-smt2", PROOF]).output() {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => panic!("{z3}: {e}"),
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    Some(text.lines().map(str::to_owned).collect())
}

#[test]
fn the_quorum_half_holds_for_every_number_of_nodes_and_clients() {
    let Some(answers) = solve() else {
        // Reported, never silently passed; scripts/test installs z3.
        println!("SKIPPED: z3 is not installed (apt-get install z3, or set Z3)");
        return;
    };
    // 1–2: a one-node lemma with no violation proves every N; 3: one bad node cannot break an
    // even N; 4–5: it can break an odd N, and two can break an even N (the solver finds a
    // model, so those claims are not made).
    assert_eq!(answers, ["unsat", "unsat", "unsat", "sat", "sat"]);
}

/// The lemmas the solver's axioms stand for are the checker's: the one-node scenario holds for
/// the fault-free lock, and holds without its crash for one restart without persistence.
#[test]
fn the_per_node_lemmas_are_settled_by_the_checker() {
    let reach = |name: &str| {
        let scenario = redlock_lab::catalog::find(name)
            .unwrap()
            .scenario()
            .unwrap();
        let report = Check::new(&scenario).run();
        let p = report.property("mutual exclusion").unwrap();
        (p.verdict, p.reach.nodes, p.reach.argument)
    };
    assert_eq!(
        reach("redlock-fault-free"),
        (Verdict::Holds, NodeCounts::Every, Argument::OneNode)
    );
    assert_eq!(
        reach("four-nodes-one-crash-no-persistence"),
        (Verdict::Holds, NodeCounts::EveryEven, Argument::SharedNodes)
    );
    assert_eq!(
        reach("crash-immediate-restart-no-persistence"),
        (Verdict::Violated, NodeCounts::EveryOdd, Argument::Spread)
    );
}
