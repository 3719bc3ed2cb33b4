//! The arguments of `book`.

use std::path::PathBuf;

/// Arguments of `book`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The folder to write the book into (created if missing; pages already there are
    /// overwritten).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Scenario files, folders or catalog names to write pages for (none = the whole
    /// built-in catalog, about 25 s on two cores); the index lists the pages
    /// written.
    #[arg(value_name = "SCENARIO")]
    pub paths: Vec<PathBuf>,
    /// The port the pages' "explore" links point at: `redlock-lab explore NAME --port P`
    /// must be serving the scenario there for a link to open its state.
    #[arg(long, value_name = "P", default_value_t = 3000)]
    pub explorer_port: u16,
    /// How many pages are built at once [default: the number of cores]; the pages do not
    /// depend on it.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub jobs: Option<u32>,
    /// Also run each counterexample to mutual exclusion that the replay executes on real
    /// `redis-server` masters (as `replay NAME --format html` does, after every page is
    /// built), and keep each replay as `NAME-replay.html` beside its page, linked from it.
    #[cfg(all(unix, feature = "redis"))]
    #[arg(long)]
    pub replay: bool,
}
