//! The `redlock-lab` command line: check the scenario catalog, list it, trace a counterexample,
//! explain a scenario, open the stateright Explorer, simulate seeded runs.
//!
//! Exit codes are part of the contract: 0 when every verdict matches `[expect]`, 1 on a
//! mismatch (or nothing to trace), 2 on bad input or usage, 3 when `check` stopped at a limit
//! before settling every property (and no settled verdict is a mismatch).

mod check;
mod explain;
mod explore;
mod inputs;
mod list;
mod simulate;
mod table;
mod trace;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Redlock, settled claim by claim with exhaustive model checking.
///
/// With no command, checks every scenario of the built-in catalog.
///
/// Exit codes: 0 every verdict matches [expect]; 1 a verdict differs from [expect] (or there
/// is nothing to trace); 2 bad input or usage; 3 `check` stopped at a limit (--max-states,
/// --time-limit, --max-memory) with some property incomplete and no settled verdict differing.
#[derive(Debug, Parser)]
#[command(name = "redlock-lab", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check scenarios (files, folders or catalog names; none = the built-in catalog) and
    /// compare every verdict with the scenario's [expect].
    #[command(
        after_help = "Exit codes: 0 every verdict matches [expect]; 1 a verdict differs; 2 bad input or usage; 3 a limit stopped a check with some property incomplete (and no settled verdict differs)."
    )]
    Check(check::Args),
    /// List the built-in catalog (or the given scenarios) with claims, sources and expected
    /// verdicts.
    List(list::Args),
    /// Print the shortest counterexample of one scenario as a timeline.
    Trace(trace::Args),
    /// Explain one scenario: the claim, the verdict and why, the counterexample, and the
    /// mitigation that flips the verdict.
    Explain(explain::Args),
    /// Serve the stateright Explorer for one scenario on 127.0.0.1.
    Explore(explore::Args),
    /// Seeded simulator runs of one scenario: violations per property, the first violating
    /// seed and the command that replays it. Exit 1 if a run violates a property the
    /// scenario expects to hold.
    Simulate(simulate::Args),
}

/// How a command that ran to its end came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// Everything as expected.
    Success,
    /// A verdict differs from `[expect]`, or there is nothing to show.
    Mismatch,
    /// A check stopped at a limit before settling every property.
    Incomplete,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            // `--help` and `--version` are "errors" that go to stdout and succeed.
            let code = if error.use_stderr() { 2 } else { 0 };
            let _ = error.print();
            return ExitCode::from(code);
        }
    };
    let result = match cli.command {
        None => check::run(&check::Args::default()),
        Some(Command::Check(args)) => check::run(&args),
        Some(Command::List(args)) => list::run(&args),
        Some(Command::Trace(args)) => trace::run(&args),
        Some(Command::Explore(args)) => explore::run(&args),
        Some(Command::Simulate(args)) => simulate::run(&args),
        Some(Command::Explain(args)) => explain::run(&args),
    };
    match result {
        Ok(Outcome::Success) => ExitCode::SUCCESS,
        Ok(Outcome::Mismatch) => ExitCode::from(1),
        Ok(Outcome::Incomplete) => ExitCode::from(3),
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(2)
        }
    }
}
