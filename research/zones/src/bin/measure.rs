//! Prints the growth table of `README.md`: for each configuration and TTL, the zone
//! prototype's symbolic states and seconds, and the project checker's unique states and
//! seconds on the same scenario file (one node clock jump of +1, drift 1).
//!
//! ```sh
//! cargo run --release --bin measure -- [--only NODES CLIENTS] [--zones-only] [--crash] [--catalog] [--inclusion] [--ttls 4,6,8,10,16]
//!     [--zone-seconds 300] [--plain-seconds 20] [--project-seconds 120] [--project-states 50000000]
//! ```
//!
//! The zone explorer runs with symmetry (bounded by `--zone-seconds`) and without it (bounded
//! by `--plain-seconds`, since without symmetry five nodes take minutes).
//!
//! With `--inclusion` a zone is dropped only when a stored zone includes it (the default also
//! drops one that a stored zone LU-simulates). With `--crash` the family is one crash without persistence and a restart delay of
//! `ttl − drift` instead of the jump. With `--catalog` it prints one row per catalog scenario
//! the prototype models instead.
//!
//! The project checker runs on one thread, bounded by `--project-seconds` and
//! `--project-states`; a bounded run shows its count with `+` and an `incomplete` verdict.

use std::time::Duration;

use redlock_lab::check::Check;
use redlock_lab::scenario::Scenario;
use redlock_zones::automaton::Config;
use redlock_zones::{Options, Verdict, crash_scenario_text, explore, scenario_text};

struct Args {
    zone_seconds: u64,
    plain_seconds: u64,
    only: Option<(u32, u32)>,
    project_seconds: u64,
    project_states: usize,
    zones_only: bool,
    catalog: bool,
    crash: bool,
    inclusion: bool,
    ttls: Vec<u32>,
}

fn args() -> Result<Args, String> {
    let mut out = Args {
        zone_seconds: 300,
        plain_seconds: 20,
        only: None,
        project_seconds: 120,
        project_states: 50_000_000,
        zones_only: false,
        catalog: false,
        crash: false,
        inclusion: false,
        ttls: vec![4, 6, 8, 10, 16],
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
            "--catalog" => out.catalog = true,
            "--crash" => out.crash = true,
            "--inclusion" => out.inclusion = true,
            "--ttls" => {
                out.ttls = it
                    .next()
                    .map(|v| {
                        v.split(',')
                            .map(str::parse)
                            .collect::<Result<Vec<u32>, _>>()
                    })
                    .and_then(Result::ok)
                    .ok_or("--ttls needs a comma-separated list of whole numbers")?;
            }
            "--zone-seconds" => out.zone_seconds = number("--zone-seconds")?,
            "--plain-seconds" => out.plain_seconds = number("--plain-seconds")?,
            "--only" => {
                let nodes = number("--only NODES CLIENTS")? as u32;
                let clients = number("--only NODES CLIENTS")? as u32;
                out.only = Some((nodes, clients));
            }
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
    if args.catalog {
        catalog(&args);
        return;
    }
    println!(
        "| nodes × clients | ttl | zones | discrete parts | zones, no symmetry | zone seconds | project states | project seconds | verdicts (zones / project) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let configs = [(3, 2), (5, 2), (3, 3)];
    for (nodes, clients) in configs
        .into_iter()
        .filter(|c| args.only.is_none_or(|o| o == *c))
    {
        for &ttl in &args.ttls {
            let text = if args.crash {
                crash_scenario_text(nodes, clients, ttl, ttl - 1)
            } else {
                scenario_text(nodes, clients, ttl, 1)
            };
            let scenario = Scenario::from_str("measure.toml", &text).expect("a valid scenario");
            let config = Config::from_scenario(&scenario).expect("a supported scenario");
            let zones = explore(
                &config,
                Options {
                    time_limit: Duration::from_secs(args.zone_seconds),
                    simulation: !args.inclusion,
                    ..Options::default()
                },
            );
            let plain = explore(
                &config,
                Options {
                    symmetry: false,
                    time_limit: Duration::from_secs(args.plain_seconds),
                    simulation: !args.inclusion,
                    ..Options::default()
                },
            );
            let count = |o: &redlock_zones::Outcome| {
                let plus = if o.mutual_exclusion == Verdict::Incomplete {
                    "+"
                } else {
                    ""
                };
                format!("{}{plus}", o.zones)
            };
            let (states, seconds, verdict) = if args.zones_only {
                ("-".to_string(), "-".to_string(), "-".to_string())
            } else {
                project(&args, &scenario)
            };
            println!(
                "| {nodes} × {clients} | {ttl} | {} | {} | {} | {:.3} | {states} | {seconds} | {:?} / {verdict} |",
                count(&zones),
                zones.discrete,
                count(&plain),
                zones.seconds,
                zones.mutual_exclusion,
            );
        }
    }
}

/// The project checker's unique states, seconds and mutual-exclusion verdict on `scenario`.
fn project(args: &Args, scenario: &Scenario) -> (String, String, String) {
    let report = Check::new(scenario)
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
}

/// One row per catalog scenario the prototype models.
fn catalog(args: &Args) {
    let models = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models");
    let mut files: Vec<_> = std::fs::read_dir(models)
        .expect("the catalog")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    println!(
        "| scenario | nodes × clients | ttl | zones | zone seconds | project states | project seconds | mutual exclusion (zones / project) |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a catalog file");
        let scenario = Scenario::from_str("catalog.toml", &text).expect("a valid scenario");
        let Ok(config) = Config::from_scenario(&scenario) else {
            continue;
        };
        let zones = explore(
            &config,
            Options {
                time_limit: Duration::from_secs(args.zone_seconds),
                simulation: !args.inclusion,
                ..Options::default()
            },
        );
        let (states, seconds, verdict) = project(args, &scenario);
        println!(
            "| `{}` | {} × {} | {} | {} | {:.3} | {states} | {seconds} | {:?} / {verdict} |",
            scenario.name,
            config.nodes,
            config.clients,
            config.ttl,
            zones.zones,
            zones.seconds,
            zones.mutual_exclusion,
        );
    }
}
