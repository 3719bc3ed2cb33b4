//! Serves stateright's Explorer for one scenario: `cargo run --release --example explore --
//! models/node-clock-jump-forward-past-drift.toml 3000`, then open http://127.0.0.1:3000.

use redlock_lab::model::RedlockModel;
use redlock_lab::scenario::Scenario;
use stateright::Model;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: explore PATH [PORT]");
        std::process::exit(2);
    };
    let port = args.next().unwrap_or_else(|| "3000".to_owned());
    let scenario = Scenario::load(&path).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2);
    });
    println!("serving {} on http://127.0.0.1:{port}", scenario.name);
    RedlockModel::new(&scenario)
        .for_explorer()
        .checker()
        .serve(format!("127.0.0.1:{port}"));
}
