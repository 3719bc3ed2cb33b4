//! How a command that runs the checker shows that it is working.
//!
//! On a terminal, a bar with the current check's states, rate and elapsed time. Anywhere else
//! (a pipe, a file, a CI log), a line on stderr once [`LINE_EVERY`] has passed without one,
//! from inside a long check or as a check settles, so a short run stays quiet and a long one
//! is never silent.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use redlock_lab::check::{Check, Progress};

/// How often a check that runs outside a terminal says how far it got.
pub(crate) const LINE_EVERY: Duration = Duration::from_secs(10);

/// A bar on a terminal, or a line now and then elsewhere.
pub(crate) struct Watch {
    /// The command, which begins each line.
    command: &'static str,
    bar: Option<ProgressBar>,
    /// Without a bar: when the last line was written (at first, when the watch began).
    last_line: Arc<Mutex<Instant>>,
}

impl Watch {
    /// `command`'s watch: a bar over `steps` checks (a spinner when `None`) when stderr is a
    /// terminal and `bar_allowed`; lines otherwise.
    pub(crate) fn new(command: &'static str, steps: Option<u64>, bar_allowed: bool) -> Watch {
        let bar = (bar_allowed && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::with_draw_target(steps, ProgressDrawTarget::stderr());
            let template = match steps {
                Some(_) => "{spinner} [{pos}/{len}] {elapsed} {wide_msg}",
                None => "{spinner} {elapsed} {wide_msg}",
            };
            bar.set_style(ProgressStyle::with_template(template).expect("a valid template"));
            bar.enable_steady_tick(Duration::from_millis(100));
            bar
        });
        Watch {
            command,
            bar,
            last_line: Arc::new(Mutex::new(Instant::now())),
        }
    }

    /// `check`, reporting to this watch under `label` (what the command is checking).
    pub(crate) fn watching(&self, check: Check, label: String) -> Check {
        match &self.bar {
            Some(bar) => {
                let bar = bar.clone();
                check
                    .progress_interval(Duration::from_millis(100))
                    .progress(move |p: Progress<'_>| {
                        bar.set_message(format!("{label}: {}", so_far(&p)));
                    })
            }
            None => {
                let last_line = self.last_line.clone();
                let command = self.command;
                check
                    .progress_interval(Duration::from_secs(1))
                    .progress(move |p: Progress<'_>| {
                        if due(&last_line) {
                            errln!("{command}: {label}: {} so far", so_far(&p));
                        }
                    })
            }
        }
    }

    /// What the bar says it is doing (nothing to say without a bar: the lines say it).
    pub(crate) fn say(&self, message: String) {
        if let Some(bar) = &self.bar {
            bar.set_message(message);
        }
    }

    /// Runs `write` with the bar out of the way, so that a line written to the terminal never
    /// shares a line with it.
    pub(crate) fn suspend<T>(&self, write: impl FnOnce() -> T) -> T {
        match &self.bar {
            Some(bar) => bar.suspend(write),
            None => write(),
        }
    }

    /// One more step settled: the bar moves on, or, when no line was written for
    /// [`LINE_EVERY`], `settled` is one.
    pub(crate) fn step(&self, settled: impl FnOnce() -> String) {
        match &self.bar {
            Some(bar) => bar.inc(1),
            None if due(&self.last_line) => errln!("{}: {}", self.command, settled()),
            None => {}
        }
    }

    /// `done` steps settled: the bar shows it, or, when no line was written for
    /// [`LINE_EVERY`], `settled` is one.
    pub(crate) fn at(&self, done: u64, settled: impl FnOnce() -> String) {
        match &self.bar {
            Some(bar) => bar.set_position(done),
            None if due(&self.last_line) => errln!("{}: {}", self.command, settled()),
            None => {}
        }
    }

    /// One more step settled, which the command's own output already shows: the bar moves on.
    pub(crate) fn advance(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }
}

impl Drop for Watch {
    /// Cleared on every way out, a closed stdout and an error too, so no bar is left on the
    /// terminal.
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Whether a line is due (none for [`LINE_EVERY`]); if so, it counts as written now.
fn due(last_line: &Mutex<Instant>) -> bool {
    let mut last = last_line
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let due = last.elapsed() >= LINE_EVERY;
    if due {
        *last = Instant::now();
    }
    due
}

/// States, rate and time of a check so far.
fn so_far(p: &Progress<'_>) -> String {
    format!(
        "{} states, {:.0} states/s, {:.0} s",
        p.unique_states,
        p.states_per_second(),
        p.seconds
    )
}
