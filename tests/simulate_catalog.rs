//! The simulator over the whole catalog, as `redlock-lab simulate` runs it (10 ms per tick):
//! every violation the checker finds is reached within 10 000 runs from one fixed seed, and
//! no property the checker proves is ever violated.
//!
//! `simulate` is the path for configurations too large to check exhaustively, so it has to
//! find what the checker finds where the two can be compared. The runs are swarm runs (each
//! draws its fault kinds and knobs from its seed, and aims most faults at the windows that
//! matter), so the number of runs a violation takes is a property of the search, printed for
//! every scenario. Scenarios the bridge refuses are printed by name and checked against the
//! features it refuses, never passed silently.

use redlock_lab::catalog::CATALOG;
use redlock_lab::scenario::{Scenario, Verdict};
use redlock_lab::sim::{self, Property, SimConfig, SimConfigError};

/// The CLI's default resolution.
const MS_PER_TICK: u64 = 10;

/// The seed of the first run; run `i` uses `SEED + i`, as `simulate --seed 1 --runs N` does.
const SEED: u64 = 1;

/// The most runs a violation may take.
const RUNS_TO_REACH: u64 = 10_000;

/// Runs every scenario makes at least, so that a property the checker proves is tried on
/// that many runs even where every violation is found early.
const RUNS_FOR_HOLDS: u64 = 2_000;

const ALWAYS: [Property; 3] = [
    Property::MutualExclusion,
    Property::StorageSafety,
    Property::NoLostUpdate,
];

/// The catalog violations the simulator does not reach, with the reason. Asserted: if one
/// becomes reachable, this list must shrink; a scenario with one listed runs all
/// [`RUNS_TO_REACH`] runs, so one that becomes reachable within them is noticed.
///
/// The bridge gives the clients clocks that read whole ticks, as the model's do
/// (`SimConfig::client_clock_resolution`), and an op lands by the end of the tick
/// `max_delay_ticks` after its check's tick (`WorkloadConfig::op_arrival_cap`), so a check
/// anywhere in a tick is the model's check in that tick.
///
/// `synchronous-bounds-margin-2` sits exactly on its boundary (pause plus delay equal to the
/// check margin plus the drift, zero slack): the model's holder waits after acquiring until
/// the last tick that passes its margin (tick 3 of a lease that ends at 5), reads, checks its
/// write in the same tick, and the write, paused two ticks and delayed one, lands in tick 6,
/// the tick the holder's keys expire and the rival acquires, reads and writes. The
/// simulator's holder checks its first op as soon as it has acquired, so its late write can
/// land in tick 6 only if its acquisition itself ended in tick 3 (late answers), besides a
/// pause and a storage delay aimed at that write and a rival beginning in tick 6. No run in
/// 60 000 reaches it.
///
/// `fencing-lock-quorum-node-clock-jump` (storage safety) has zero slack too: c1 must finish
/// acquiring after c2 (so c2's acquisition is the older epoch with the larger token) and
/// still pass its margin check, which on whole-tick clocks it may do anywhere in the tick
/// `T1 + (ttl − drift − margin)`, while c2 needs the jumped node's key of c1 gone, at
/// `T1 + (ttl − jump)` at the earliest plus the `SET`'s own delay, and then four messages
/// more; as above, the simulator's holder never waits before its first check. No run in
/// 60 000 reaches it.
///
/// `fencing-lock-quorum-counter-lost` (no lost update) is reachable, but a swarm run needs
/// five draws to line up: c1's request to one node stays in flight (a request stall) so that
/// node's counter never counts c1; c1 is paused between a check and its op long enough that
/// it neither finishes nor unlocks; one of the two nodes c1 set crashes and comes back empty
/// after the restart delay; c2 begins only after that delay; and c2's request to c1's other
/// node is late too (by then c1's key there has expired), so that c2's quorum is exactly the
/// restarted node and the one c1 never reached, both at counter 1, c1's token. A focused run
/// aims the two stalls at each other (different clients, different nodes, around the focused
/// node the crash strikes), which brings storage safety to about one run in 12 500 (reached
/// here in run 7751, seed 7752: a lucky seed, so a change to the draws may push it past the
/// limit) and a lost update, which needs the pause at the write rather than the read, to
/// three runs in 100 000 (`redlock-lab simulate fencing-lock-quorum-counter-lost --seed 1
/// --runs 100000`, first with seed 20663).
const NOT_REACHED: [(&str, Property); 4] = [
    ("fencing-lock-quorum-counter-lost", Property::NoLostUpdate),
    (
        "fencing-lock-quorum-node-clock-jump",
        Property::StorageSafety,
    ),
    ("synchronous-bounds-margin-2", Property::StorageSafety),
    ("synchronous-bounds-margin-2", Property::NoLostUpdate),
];

/// The scenarios the bridge refuses and the feature it names, in name order: none, since
/// the bridge simulates every feature of the catalog (client crashes, a least retry delay, a
/// shared token and a replicated node among several included). Kept, so a feature the bridge
/// comes to refuse shows up here by name rather than passing silently.
const REFUSED: [(&str, &str); 0] = [];

#[test]
fn every_catalog_violation_is_reached_and_no_proven_property_is_violated() {
    let mut refused = Vec::new();
    let mut failures = Vec::new();
    for embedded in CATALOG {
        let scenario = Scenario::from_str(embedded.file, embedded.text)
            .unwrap_or_else(|e| panic!("{}: {e}", embedded.file));
        let config = match SimConfig::from_scenario_at(&scenario, MS_PER_TICK) {
            Ok(config) => config,
            Err(SimConfigError::Unsupported { feature, .. }) => {
                println!(
                    "skipped {}: the simulator does not model {feature}",
                    scenario.name
                );
                refused.push((scenario.name.clone(), feature));
                continue;
            }
            Err(other) => panic!("{}: {other}", scenario.name),
        };
        failures.extend(search(&scenario, &config));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    refused.sort();
    let expected: Vec<(String, &str)> = REFUSED
        .iter()
        .map(|&(name, feature)| (name.to_owned(), feature))
        .collect();
    assert_eq!(refused, expected, "the scenarios the bridge refuses");
}

/// Runs `scenario` from [`SEED`] until every violated property is reached (at most
/// [`RUNS_TO_REACH`] runs, all of them for a scenario with a violation in [`NOT_REACHED`])
/// and at least [`RUNS_FOR_HOLDS`] runs; returns what went wrong.
fn search(scenario: &Scenario, config: &SimConfig) -> Vec<String> {
    let properties: Vec<(Property, Verdict)> = ALWAYS
        .into_iter()
        .filter_map(|p| scenario.expected(p.name()).map(|v| (p, v)))
        .collect();
    let unreachable = |p: Property| NOT_REACHED.contains(&(scenario.name.as_str(), p));
    let mut first: Vec<Option<u64>> = vec![None; properties.len()];
    let mut runs = 0;
    while runs < RUNS_TO_REACH {
        let outcome = sim::run(config, SEED + runs).expect("a bridged configuration runs");
        for (slot, &(property, _)) in first.iter_mut().zip(&properties) {
            if slot.is_none() && !outcome.holds(property) {
                *slot = Some(runs);
            }
        }
        runs += 1;
        // A violation listed in `NOT_REACHED` is searched for all the runs too, so that one
        // becoming reachable within the limit is noticed.
        let reached = properties
            .iter()
            .zip(&first)
            .all(|(&(_, verdict), found)| verdict != Verdict::Violated || found.is_some());
        if reached && runs >= RUNS_FOR_HOLDS {
            break;
        }
    }
    let mut failures = Vec::new();
    for (&(property, verdict), found) in properties.iter().zip(&first) {
        let name = &scenario.name;
        match (verdict, *found) {
            (Verdict::Violated, Some(index)) => {
                let seed = SEED + index;
                println!(
                    "{name}: {property} violated in run {index}: redlock-lab simulate {name} --seed {seed}"
                );
                if unreachable(property) {
                    failures.push(format!(
                        "{name}: {property} is listed as not reached, and run {index} reaches it: shorten NOT_REACHED"
                    ));
                }
                // The seed is the whole run: replaying it gives the same trace.
                let again = sim::run(config, seed).unwrap();
                assert_eq!(again.trace, sim::run(config, seed).unwrap().trace);
                assert!(!again.holds(property), "{name}: seed {seed} replays");
            }
            (Verdict::Violated, None) if unreachable(property) => {
                println!("{name}: {property} not reached in {runs} runs (listed, see NOT_REACHED)");
            }
            (Verdict::Violated, None) => failures.push(format!(
                "{name}: the checker finds {property} violated, and no run in {runs} from seed {SEED} reaches it"
            )),
            (_, Some(index)) => failures.push(format!(
                "{name}: the checker proves {property}, and run {index} violates it: redlock-lab simulate {name} --seed {}",
                SEED + index
            )),
            (_, None) => println!("{name}: {property} held in {runs} runs"),
        }
    }
    failures
}
