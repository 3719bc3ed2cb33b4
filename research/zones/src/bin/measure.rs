//! Prints the growth table of `README.md`: for each configuration and TTL, the zone
//! prototype's symbolic states and seconds, and the project checker's unique states and
//! seconds on the same scenario file (one node clock jump of +1, drift 1).
//!
//! ```sh
//! cargo run --release --bin measure -- [--project-seconds 120] [--project-states 50000000] [--zones-only]
//! ```
//!
//! The project checker runs on one thread, bounded by `--project-seconds` and
//! `--project-states`; a bounded run shows its count with `+` and an `incomplete` verdict.

use std::time::Duration;

use redlock_lab::check::Check;
use redlock_lab::scenario::Scenario;
use redlock_zones::automaton::Config;
use redlock_zones::{Options, explore, scenario_text};

struct Args {
    project_seconds: u64,
    project_states: usize,
    zones_only: bool,
}

fn args() -> Result<Args, String> {
    let mut out = Args {
        project_seconds: 120,
        project_states: 50_000_000,
        zones_only: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut number = |name: &str| -> Result<u64, String> {
            it.next()
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| format!("{name} needs a whole number"))
        };
        match arg.as_str() {
            "--project-seconds" => out.project_seconds = number("--project-seconds")?,
            "--project-states" => out.project_states = number("--project-states")? as usize,
            "--zones-only" => out.zones_only = true,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(out)
}

fn main() {
    let args = match args() {
        Ok(a) => a,
        Err(message) => {
            eprintln!("error: {message}");
            std::process::exit(2);
        }
    };
    println!(
        "| nodes × clients | ttl | zones | discrete parts | zones, no symmetry | zone seconds | project states | project seconds | verdicts (zones / project) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (nodes, clients) in [(3, 2), (5, 2), (3, 3)] {
        for ttl in [4, 6, 8, 10, 16] {
            let text = scenario_text(nodes, clients, ttl, 1);
            let scenario = Scenario::from_str("measure.toml", &text).expect("a valid scenario");
            let config = Config::from_scenario(&scenario).expect("a supported scenario");
            let zones = explore(&config, Options::default());
            let plain = explore(
                &config,
                Options {
                    symmetry: false,
                    ..Options::default()
                },
            );
            let (states, seconds, verdict) = if args.zones_only {
                ("-".to_string(), "-".to_string(), "-".to_string())
            } else {
                let report = Check::new(&scenario)
                    .threads(1)
                    .max_states(args.project_states)
                    .time_limit(Duration::from_secs(args.project_seconds))
                    .run();
                let verdict = report
                    .property("mutual exclusion")
                    .map_or("-".to_string(), |p| p.verdict.to_string());
                let plus = if report.is_incomplete() { "+" } else { "" };
                (
                    format!("{}{plus}", report.unique_states),
                    format!("{:.2}", report.seconds),
                    verdict,
                )
            };
            println!(
                "| {nodes} × {clients} | {ttl} | {} | {} | {} | {:.3} | {states} | {seconds} | {:?} / {verdict} |",
                zones.zones, zones.discrete, plain.zones, zones.seconds, zones.mutual_exclusion,
            );
        }
    }
}
