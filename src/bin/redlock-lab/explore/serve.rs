//! The `explore` command: the Explorer on one port, the timelines on another.

use std::net::{Ipv4Addr, TcpListener};
use std::path::PathBuf;

use anyhow::{Context, Result};
use redlock_lab::model::RedlockModel;
use stateright::Model;

use super::landing;
use super::linked::Linked;
use super::timelines;
use crate::Outcome;
use crate::inputs;

/// Arguments of `explore`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A scenario file or catalog name.
    path: PathBuf,
    /// The port to serve on (on 127.0.0.1 only); 0 picks a free one and prints it.
    #[arg(long, default_value_t = 3000)]
    port: u16,
    /// The port the timelines of the Explorer's paths are served on (on 127.0.0.1 only);
    /// 0, the default, picks a free one and prints it.
    #[arg(long, value_name = "P", default_value_t = 0)]
    timeline_port: u16,
}

/// Serves the Explorer until the process is stopped.
pub(crate) fn run(args: &Args) -> Result<Outcome> {
    let scenario = inputs::load_one(&args.path)?;
    // stateright panics when it cannot bind; probe first so a busy port is a clean error. The
    // probe also resolves port 0 to the free port the system picked, which is then served.
    let probe = TcpListener::bind((Ipv4Addr::LOCALHOST, args.port))
        .with_context(|| format!("cannot listen on 127.0.0.1:{}", args.port))?;
    let port = probe.local_addr().context("the probe's address")?.port();
    // Bound while the probe still holds the Explorer's port, so that a free port picked
    // here cannot be the one the Explorer is about to take.
    let timelines = TcpListener::bind((Ipv4Addr::LOCALHOST, args.timeline_port))
        .with_context(|| format!("cannot listen on 127.0.0.1:{}", args.timeline_port))?;
    let timeline_port = timelines
        .local_addr()
        .context("the timelines' address")?
        .port();
    drop(probe);
    let address = (Ipv4Addr::LOCALHOST, port);
    // A `ui/` folder in the working directory would shadow the Explorer's own files.
    if std::path::Path::new("ui/index.htm").exists() {
        errln!("warning: ./ui/index.htm shadows the Explorer's page; run from another folder");
    }
    let explorer = format!("http://127.0.0.1:{port}");
    let model = RedlockModel::new(&scenario);
    std::thread::spawn(move || timelines::serve(timelines, model, explorer));
    // Every state judged on its own (the checkers keep only the first violation per property).
    let model = RedlockModel::new(&scenario).for_explorer();
    let linked = Linked::new(model, format!("http://127.0.0.1:{timeline_port}"));
    let server = std::thread::spawn(move || {
        linked.checker().serve(address);
    });
    // The page with the landing view is served from a folder of its own (see `landing`), in
    // place before the address is printed, so nobody opens the page without it.
    let page = landing::page(&scenario, &landing::fetch_page(port)?)?;
    let folder = landing::write_page(&page)?;
    std::env::set_current_dir(&folder)
        .with_context(|| format!("cannot work in {}", folder.display()))?;
    // The address alone on stdout, for a script or a reader to open; the server runs on
    // whether or not anybody reads it.
    let _ = outln!("http://127.0.0.1:{port}/");
    errln!(
        "Explorer for {} ({}) on http://127.0.0.1:{port}/ — stop with Ctrl-C",
        scenario.name,
        scenario.title
    );
    // A reader of stderr may leave after the first line (it has the port): `errln!` ignores it.
    errln!("Timelines of its paths on http://127.0.0.1:{timeline_port}/timeline/…");
    let _ = server.join();
    Ok(Outcome::Success)
}
