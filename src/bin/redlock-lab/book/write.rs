//! Writing the book: a chapter per scenario, then the index.

use std::fs;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use redlock_lab::catalog::CATALOG;
use redlock_lab::check::available_threads;
use redlock_lab::scenario::Scenario;

use super::args::Args;
use super::argument::Argument;
use super::chapter::Chapter;
use super::index::{self, Entry};
use super::page;
use super::region::FAMILIES;
use crate::Outcome;
use crate::inputs::{self, Loaded};
use crate::pool::{self, Task};

/// Writes a page per scenario the arguments name (the whole catalog by default) and the
/// index, building `--jobs` pages at once; progress on stderr, one line a page.
pub(crate) fn run(args: &Args) -> Result<Outcome> {
    let start = Instant::now();
    let loaded = inputs::load_labelled(&args.paths)?;
    // Each scenario with its text and the argument `explore` takes to open it: a catalog
    // name, or the file's path for a file from disk.
    let sources: Vec<(Scenario, String, String)> = loaded
        .into_iter()
        .map(|l| {
            let text = text_of(&l)?;
            let name = l.file.clone().unwrap_or_else(|| l.scenario.name.clone());
            Ok((l.scenario, text, name))
        })
        .collect::<Result<_>>()?;
    fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let explorer = format!("http://127.0.0.1:{}", args.explorer_port);
    let jobs = args
        .jobs
        .map_or_else(available_threads, |jobs| jobs as usize);
    // The pages do not depend on each other: each is built on some thread, and handed on
    // (written, counted, listed) in the catalog's order.
    let tasks: Vec<Task<'_, Result<Chapter>>> = (sources.iter())
        .map(|(scenario, text, _)| -> Task<'_, Result<Chapter>> {
            let explorer = &explorer;
            Box::new(move || Chapter::new(scenario.clone(), text.clone(), explorer))
        })
        .collect();
    let order: Vec<usize> = (0..tasks.len()).collect();
    let total = sources.len();
    let mut entries = Vec::new();
    // The chapters whose replay runs once every page is built, on a quiet machine.
    let mut to_replay = Vec::new();
    pool::in_order(tasks, &order, jobs, |i, chapter| {
        let chapter = chapter?;
        let scenario = &sources[i].0;
        let page = Page::of(&sources, i, args);
        let live = page.live(&chapter, None)?;
        page.write(&chapter, &args.out, &live.html)?;
        errln!(
            "[{}/{total}] {} ({:.1} s)",
            i + 1,
            scenario.name,
            chapter.seconds
        );
        entries.push(entry(&chapter));
        if replaying(args) && live.replayable {
            to_replay.push((chapter, page));
        }
        Ok(())
    })?;
    record_replays(&to_replay, &args.out)?;
    let regions = write_regions(args)?;
    let seconds = start.elapsed().as_secs_f64();
    let index = args.out.join("index.html");
    write(&index, &index::render(&entries, &regions, seconds))?;
    errln!(
        "wrote {} pages and index.html to {} in {seconds:.1} s",
        entries.len(),
        args.out.display()
    );
    // The page to open, alone on stdout, so that `xdg-open "$(redlock-lab book …)"` works.
    outln!("{}", index.display())?;
    Ok(Outcome::Success)
}

/// What a page shows besides its chapter.
struct Page {
    /// The scenarios whose mitigation this one is.
    fixes: Vec<String>,
    /// The command that serves its Explorer.
    explore: String,
    /// The argument that opens the scenario: a catalog name or the file's path.
    opened_as: String,
}

impl Page {
    /// What the page of `sources[i]` shows besides its chapter.
    fn of(sources: &[(Scenario, String, String)], i: usize, args: &Args) -> Page {
        let (scenario, _, opened_as) = &sources[i];
        Page {
            fixes: (sources.iter())
                .filter(|(s, _, _)| {
                    (s.mitigation.as_ref())
                        .is_some_and(|m| m.scenario.as_deref() == Some(&scenario.name))
                })
                .map(|(s, _, _)| s.name.clone())
                .collect(),
            explore: format!(
                "redlock-lab explore {opened_as} --port {}",
                args.explorer_port
            ),
            opened_as: opened_as.clone(),
        }
    }

    /// Writes `chapter`'s page into `out`, with `live` its section on real Redis.
    fn write(&self, chapter: &Chapter, out: &Path, live: &str) -> Result<()> {
        let html = page::render(chapter, &self.fixes, &self.explore, live);
        write(&out.join(format!("{}.html", chapter.scenario.name)), &html)
    }

    /// The page's section on real Redis (empty where mutual exclusion holds), with its replay
    /// run and kept in `record` if given.
    #[cfg(all(unix, feature = "redis"))]
    fn live(&self, chapter: &Chapter, record: Option<&Path>) -> Result<page::Section> {
        super::live::section(chapter, &self.opened_as, record)
    }

    /// Without the Redis client there is no replay to point at.
    #[cfg(not(all(unix, feature = "redis")))]
    fn live(&self, _: &Chapter, _: Option<&Path>) -> Result<page::Section> {
        Ok(page::Section::default())
    }
}

/// Runs each replay, one after the other, and writes its page again with the replay linked.
fn record_replays(to_replay: &[(Chapter, Page)], out: &Path) -> Result<()> {
    for (k, (chapter, page)) in to_replay.iter().enumerate() {
        errln!(
            "[replay {}/{}] {} on real redis-server masters",
            k + 1,
            to_replay.len(),
            chapter.scenario.name
        );
        let live = page.live(chapter, Some(out))?;
        page.write(chapter, out, &live.html)?;
    }
    Ok(())
}

/// Whether `--replay` asks for the replays.
fn replaying(args: &Args) -> bool {
    #[cfg(all(unix, feature = "redis"))]
    return args.replay;
    #[cfg(not(all(unix, feature = "redis")))]
    return false;
}

/// The region pages, `(name, title)` each: they link to the catalog's pages, so they come
/// with the whole catalog only.
fn write_regions(args: &Args) -> Result<Vec<(&'static str, &'static str)>> {
    let mut regions = Vec::new();
    if args.paths.is_empty() {
        for family in &FAMILIES {
            let (html, seconds) = family.render()?;
            write(&args.out.join(format!("{}.html", family.name)), &html)?;
            errln!("[region] {} ({seconds:.1} s)", family.title);
            regions.push((family.name, family.title));
        }
    }
    Ok(regions)
}

/// A scenario's file as the checker read it: the embedded catalog's text, or the file's.
fn text_of(loaded: &Loaded) -> Result<String> {
    match &loaded.file {
        Some(file) => fs::read_to_string(file).with_context(|| format!("cannot read {file}")),
        None => CATALOG
            .iter()
            .find(|e| e.file == loaded.scenario.file)
            .map(|e| e.text.to_owned())
            .with_context(|| format!("{} is not in the catalog", loaded.scenario.file)),
    }
}

fn write(path: &Path, text: &str) -> Result<()> {
    fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// The index's line for a chapter.
fn entry(chapter: &Chapter) -> Entry {
    let scenario = &chapter.scenario;
    Entry {
        name: scenario.name.clone(),
        title: scenario.title.clone(),
        source: scenario.source.to_string(),
        claim: scenario.claim.clone(),
        argument: Argument::of(scenario),
        verdicts: chapter
            .report
            .properties
            .iter()
            .map(|p| (p.name.clone(), p.verdict.to_string()))
            .collect(),
    }
}
