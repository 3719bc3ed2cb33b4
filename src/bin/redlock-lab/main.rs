//! The `redlock-lab` command line: check the scenario catalog, list it, trace a counterexample,
//! explain a scenario, open the stateright Explorer, simulate seeded runs, sweep a key.
//!
//! Exit codes are part of the contract: 0 when every verdict matches `[expect]`, 1 on a
//! mismatch (or nothing to trace), 2 on bad input or usage, 3 when `check` stopped at a limit
//! before settling every property (and no settled verdict is a mismatch); `run` passes its
//! command's exit code through and documents its own in its `--help`. A reader of stdout that
//! leaves early (`| head`) ends any command quietly with status 141, as it ends `cat`.

// Every line to stdout goes through `output`, which survives a closed pipe; `print!` panics.
#![deny(clippy::print_stdout, clippy::print_stderr)]

// First, so that its `out!` and `outln!` macros are in scope in every module below.
#[macro_use]
mod output;
mod advise;
mod book;
mod check;
mod explain;
mod explore;
mod inputs;
mod limits;
mod list;
mod pool;
#[cfg(all(unix, feature = "redis"))]
mod replay;
#[cfg(all(unix, feature = "redis"))]
mod run;
mod simulate;
mod sweep;
mod table;
mod trace;
mod watch;
mod zone_steps;

use std::process::ExitCode;

use anyhow::Context;
use clap::{CommandFactory, Parser, Subcommand};

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
    /// Print one scenario's counterexample as a timeline.
    Trace(trace::Args),
    /// Explain one scenario: the claim, the verdict and why, the counterexample, and the
    /// mitigation that flips the verdict.
    Explain(explain::Args),
    /// Serve the stateright Explorer for one scenario on 127.0.0.1.
    Explore(explore::Args),
    /// Write the catalog (or the given scenarios) as a static site: a page per scenario with
    /// its claim, verdicts, timeline, necessary causes, mitigation re-checked and file, and
    /// an index grouped by the debate's arguments; it opens from disk.
    Book(book::Args),
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
    /// Execute one scenario's counterexample on real redis-server masters started on loopback
    /// (a node's clock jump through a clock shim, a crash as SIGKILL): the real run beside the
    /// model's story, and whether real Redis broke as the model says. Exit 0 reproduced (or
    /// nothing to replay), 1 not reproduced, 2 bad input or a scenario it cannot execute yet.
    #[command(
        after_help = "Exit codes: 0 reproduced on real Redis, or mutual exclusion holds in the model; 1 not reproduced (the step where reality and the model parted is printed); 2 bad input, a missing redis-server, or a scenario the replay cannot execute yet."
    )]
    Replay(replay::Args),
    /// Print a completion script for SHELL to stdout (e.g. `redlock-lab completions bash >
    /// /etc/bash_completion.d/redlock-lab`).
    Completions {
        /// The shell to complete for.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff) to stdout (e.g. `redlock-lab man > redlock-lab.1`).
    Man,
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
        Some(Command::Book(args)) => book::run(&args),
        Some(Command::Simulate(args)) => simulate::run(&args),
        Some(Command::Explain(args)) => explain::run(&args),
        Some(Command::Sweep(args)) => sweep::run(&args),
        Some(Command::Advise(args)) => advise::run(&args),
        #[cfg(all(unix, feature = "redis"))]
        Some(Command::Run(args)) => run::run(&args),
        #[cfg(all(unix, feature = "redis"))]
        Some(Command::Replay(args)) => replay::run(&args),
        Some(Command::Completions { shell }) => completions(shell),
        Some(Command::Man) => man(),
    };
    // A last line without a newline is still buffered; a reader that left shows at this flush.
    let result = result.and_then(|outcome| output::flush().map(|()| outcome));
    match result {
        Ok(Outcome::Success) => ExitCode::SUCCESS,
        Ok(Outcome::Mismatch) => ExitCode::from(1),
        Ok(Outcome::Exit(code)) => ExitCode::from(code),
        Ok(Outcome::Incomplete) => ExitCode::from(3),
        Err(error) if output::is_closed(&error) => ExitCode::from(output::CLOSED_EXIT),
        Err(error) => {
            errln!("error: {error:#}");
            ExitCode::from(2)
        }
    }
}

/// Completions from the same clap definition that parses the arguments, so they cannot drift.
fn completions(shell: clap_complete::Shell) -> anyhow::Result<Outcome> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "redlock-lab", &mut script);
    print_bytes(&script)
}

/// The manual page, from the clap definition: the top-level page clap_mangen renders, then a
/// section per command with its description and every argument, so one page documents all.
fn man() -> anyhow::Result<Outcome> {
    let command = Cli::command();
    let mut page = Vec::new();
    clap_mangen::Man::new(command.clone())
        .render(&mut page)
        .context("render the man page")?;
    let mut text = String::from_utf8(page).context("the man page is not UTF-8")?;
    for sub in command.get_subcommands() {
        // clap_mangen points at one page per command; this page has them all as sections.
        let reference = format!("redlock\\-lab\\-{}(1)", roff(sub.get_name()));
        let section = format!("\\fBredlock\\-lab {}\\fR", roff(sub.get_name()));
        text = text.replace(&reference, &section);
    }
    for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        let name = format!("redlock-lab {}", sub.get_name());
        text.push_str(&format!(".SH \"{}\"\n", roff(&name.to_uppercase())));
        let about = sub
            .get_long_about()
            .or(sub.get_about())
            .map(ToString::to_string)
            .unwrap_or_default();
        text.push_str(&format!("{}\n", roff(&about)));
        for arg in sub.get_arguments().filter(|arg| !arg.is_hide_set()) {
            let label = match (arg.get_long(), arg.get_short()) {
                (Some(long), Some(short)) => format!("\\fB\\-{short}\\fR, \\fB\\-\\-{long}\\fR"),
                (Some(long), None) => format!("\\fB\\-\\-{}\\fR", roff(long)),
                (None, Some(short)) => format!("\\fB\\-{short}\\fR"),
                (None, None) => format!("\\fI{}\\fR", roff(arg.get_id().as_str()).to_uppercase()),
            };
            let help = arg
                .get_long_help()
                .or(arg.get_help())
                .map(ToString::to_string)
                .unwrap_or_default();
            text.push_str(&format!(".TP\n{label}\n{}\n", roff(&help)));
        }
    }
    print_bytes(text.as_bytes())
}

/// Escapes text for roff: backslashes, hyphens (else they may print as dashes), and a leading
/// dot or quote, which would start a request.
fn roff(text: &str) -> String {
    text.replace('\\', "\\e")
        .replace('-', "\\-")
        .lines()
        .map(|line| {
            if line.starts_with('.') || line.starts_with('\'') {
                format!("\\&{line}")
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Writes generated text to stdout.
fn print_bytes(bytes: &[u8]) -> anyhow::Result<Outcome> {
    output::write_bytes(bytes)?;
    Ok(Outcome::Success)
}
