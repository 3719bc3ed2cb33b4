//! Everything the binary prints to stdout goes through here, so that a reader who leaves early
//! (`redlock-lab check | head -1`) ends the command quietly instead of crashing it.
//!
//! Rust ignores SIGPIPE, so a write to a pipe whose reader has gone fails with `BrokenPipe`,
//! and `print!` panics on that failure. `out!` and `outln!` return it instead, as
//! [`StdoutClosed`]; it travels up through `?` like any error, and `main` turns it into a
//! silent exit with [`CLOSED_EXIT`], the status a shell reports for `cat` in the same place.
//! Stopping at the first failed write is `cat`'s behaviour too: nobody reads what follows.
//! `main.rs` denies `clippy::print_stdout` and `clippy::print_stderr`, so a `print!` or an
//! `eprintln!` cannot creep back in: diagnostics go through `errln!`, which ignores a closed
//! stderr.

use std::fmt;
use std::io::{self, Write};

use anyhow::Context;

/// The reader of stdout has gone: the command stops and exits quietly with [`CLOSED_EXIT`].
#[derive(Debug, thiserror::Error)]
#[error("stdout was closed by its reader")]
pub(crate) struct StdoutClosed;

/// The exit status after [`StdoutClosed`]: 128 + SIGPIPE (13), what a shell shows for a
/// process killed by SIGPIPE. Not 0, because the output the exit codes vouch for (every verdict
/// matches) was not all delivered.
pub(crate) const CLOSED_EXIT: u8 = 141;

/// Writes formatted text to stdout (the body of `out!` and `outln!`).
pub(crate) fn write_fmt(args: fmt::Arguments<'_>) -> anyhow::Result<()> {
    checked(io::stdout().lock().write_fmt(args))
}

/// Writes bytes to stdout as they are (completion scripts, the man page).
pub(crate) fn write_bytes(bytes: &[u8]) -> anyhow::Result<()> {
    checked(io::stdout().lock().write_all(bytes))
}

/// Flushes stdout: a last line without a newline is still buffered, and the flush Rust does at
/// exit ignores errors, so a reader that left would otherwise go unnoticed.
pub(crate) fn flush() -> anyhow::Result<()> {
    checked(io::stdout().lock().flush())
}

/// True when `error` is, or was caused by, [`StdoutClosed`].
pub(crate) fn is_closed(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| cause.is::<StdoutClosed>())
}

/// A closed pipe becomes [`StdoutClosed`]; any other failure (a full disk) stays an error.
fn checked(result: io::Result<()>) -> anyhow::Result<()> {
    match result {
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => Err(StdoutClosed.into()),
        other => other.context("write to stdout"),
    }
}

/// `print!` that returns an error instead of panicking: `out!("{x}")?`.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write_fmt(format_args!($($arg)*))
    };
}

/// `println!` that returns an error instead of panicking: `outln!("{x}")?`.
macro_rules! outln {
    () => {
        $crate::output::write_fmt(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::write_fmt(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprintln!` that ignores a closed stderr instead of panicking: a reader that wanted only the
/// first line (the Explorer's port) may leave, and no diagnostic is worth a crash.
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_broken_pipe_is_a_closed_stdout() {
        let closed = checked(Err(io::Error::from(io::ErrorKind::BrokenPipe))).unwrap_err();
        assert!(is_closed(&closed));
        // Context added on the way up does not hide it.
        assert!(is_closed(&closed.context("print the table")));
        let full = checked(Err(io::Error::from(io::ErrorKind::StorageFull))).unwrap_err();
        assert!(!is_closed(&full));
        assert_eq!(full.to_string(), "write to stdout");
        assert!(checked(Ok(())).is_ok());
    }
}
