//! Checks one scenario file and prints the report as JSON: `cargo run --release --example
//! check_file -- models/large/redlock-five-nodes-all-faults.toml`.

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: check_file PATH");
        std::process::exit(2);
    };
    let scenario = match redlock_lab::scenario::Scenario::load(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let mut check = redlock_lab::check::Check::new(&scenario).progress(|p| {
        eprintln!("{}: {} states, {:.0} s", p.name, p.unique_states, p.seconds);
    });
    if std::env::args().any(|a| a == "--dfs") {
        check = check.depth_first();
    }
    let report = check.run();
    for p in &report.properties {
        println!(
            "{:<20} expected {:<9} verdict {}",
            p.name,
            p.expected.map_or("-".to_owned(), |e| e.to_string()),
            p.verdict
        );
        if let Some(steps) = &p.counterexample {
            for step in steps {
                println!("    {step}");
            }
        }
    }
    println!(
        "{} unique states, {:.2} s",
        report.unique_states, report.seconds
    );
    std::process::exit(i32::from(!report.matches_expectations()));
}
