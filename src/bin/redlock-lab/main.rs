//! The `redlock-lab` command line: check the scenario catalog, list it, trace a counterexample,
//! explain a scenario, open the stateright Explorer, simulate seeded runs, sweep a key.
//!
//! Exit codes are part of the contract: 0 when every verdict matches `[expect]`, 1 on a
//! mismatch (or nothing to trace), 2 on bad input or usage; `run` passes its command's exit
//! code through and documents its own in its `--help`.

mod advise;
mod check;
mod explain;
mod explore;
mod inputs;
mod list;
#[cfg(all(unix, feature = "redis"))]
mod run;
mod simulate;
mod sweep;
mod table;
mod trace;
mod units;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Redlock, settled claim by claim with exhaustive model checking.
///
/// With no command, checks every scenario of the built-in catalog.
#[derive(Debug, Parser)]
#[command(name = "redlock-lab", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check scenarios (files, folders or catalog names; none = the built-in catalog) and
    /// compare every verdict with the scenario's [expect].
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
    /// Check one scenario once per value of one key (`--vary KEY=A..B`): a row per value with
    /// each property's verdict, states and seconds, and the boundary where a verdict flips.
    Sweep(sweep::Args),
    /// Safe settings for a deployment (drift allowance, restart delay or guard, check margin
    /// before each write, whether fencing is required), each found by the checker's own search
    /// on a scaled scenario; --out DIR writes the scenarios that prove them. Exit 1 when no
    /// drift allowance below the TTL is safe.
    Advise(advise::Args),
    /// A distributed flock(1): take the lock on Redis masters, run a command while the lock is
    /// kept extended, release it when the command ends; stop the command if the lock is lost.
    #[cfg(all(unix, feature = "redis"))]
    Run(run::Args),
}

/// How a command that ran to its end came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// Everything as expected.
    Success,
    /// A verdict differs from `[expect]`, or there is nothing to show.
    Mismatch,
    /// `run`'s own exit code: the command's, or the conflict or lost-lock code.
    #[cfg_attr(not(all(unix, feature = "redis")), allow(dead_code))]
    Exit(u8),
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
        Some(Command::Sweep(args)) => sweep::run(&args),
        Some(Command::Advise(args)) => advise::run(&args),
        #[cfg(all(unix, feature = "redis"))]
        Some(Command::Run(args)) => run::run(&args),
    };
    match result {
        Ok(Outcome::Success) => ExitCode::SUCCESS,
        Ok(Outcome::Mismatch) => ExitCode::from(1),
        Ok(Outcome::Exit(code)) => ExitCode::from(code),
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(2)
        }
    }
}
