//! Unique states with and without the fingerprint's reductions, as ratios measured in the same
//! run: symmetry (node rows sorted, minimum over client permutations), time shift (true
//! time left out of the fingerprint; the baseline hashes it and stops at a horizon) and dead
//! ghost fields (only whether *some* client acquired, and no epochs without storage; the
//! baseline hashes them in full).
//!
//! `cargo bench --bench reductions` (add `-- large` for the 5 × 3 configuration in
//! `models/large/`, which does not exhaust in minutes: see that file's prose).

use std::path::Path;
use std::time::Instant;

use redlock_lab::model::RedlockModel;
use redlock_lab::scenario::Scenario;
use stateright::{Checker, Model};

fn load(path: &str) -> Scenario {
    Scenario::load(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).expect("valid scenario")
}

fn count(model: RedlockModel) -> (usize, f64) {
    let start = Instant::now();
    let checker = model.checker().spawn_bfs().join();
    (checker.unique_state_count(), start.elapsed().as_secs_f64())
}

fn main() {
    let large = std::env::args().any(|a| a == "large");
    let mut files = vec![
        "models/redlock-fault-free.toml",
        "models/clock-drift-covered.toml",
        "models/crash-delayed-restart-ttl-minus-drift.toml",
        "models/client-clock-jump-backward-by-drift.toml",
        "models/fencing-token-rescues-gc-pause.toml",
    ];
    if large {
        files.push("models/large/redlock-five-nodes-all-faults.toml");
    }
    println!(
        "{:<44} {:>10} {:>11} {:>7} {:>12} {:>7} {:>12} {:>7}",
        "scenario", "reduced", "no symmetry", "ratio", "exact time", "ratio", "all ghosts", "ratio"
    );
    for file in files {
        let scenario = load(file);
        let horizon = 2 * scenario.lock.params.ttl.0 as u32 + 4;
        let (reduced, seconds) = count(RedlockModel::new(&scenario));
        // The large scenario's baselines would need tens of gigabytes: only its reduced count
        // is measured.
        let is_large = file.contains("/large/");
        let (plain, _) = if is_large {
            (0, 0.0)
        } else {
            count(RedlockModel::new(&scenario).with_symmetry(false))
        };
        let (exact, _) = if is_large {
            (0, 0.0)
        } else {
            count(RedlockModel::new(&scenario).with_exact_time(horizon))
        };
        let (ghosts, _) = if is_large {
            (0, 0.0)
        } else {
            count(RedlockModel::new(&scenario).with_exact_ghosts(true))
        };
        if is_large {
            println!(
                "{:<44} {:>10} {:>11} {:>7} {:>12} {:>7} {:>12} {:>7}   ({seconds:.2} s reduced; baselines not run)",
                scenario.name, reduced, "n/a", "", "n/a", "", "n/a", ""
            );
            continue;
        }
        println!(
            "{:<44} {:>10} {:>11} {:>6.1}x {:>12} {:>6.1}x {:>12} {:>6.2}x   ({seconds:.2} s reduced; exact time: horizon {horizon}, symmetry on)",
            scenario.name,
            reduced,
            plain,
            plain as f64 / reduced as f64,
            exact,
            exact as f64 / reduced as f64,
            ghosts,
            ghosts as f64 / reduced as f64,
        );
    }
}
