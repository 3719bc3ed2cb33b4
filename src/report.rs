//! Counterexamples people can read: a checker's path told as a story, one line per event,
//! with true time, each process's own clock where it differs, and what each party believes.
//!
//! A story's lines are the model's events (`model::path_moments`), so the same run
//! reads the same as text (`redlock-lab trace`, `check`, `explain`), as a Mermaid
//! `sequenceDiagram` (renders on GitHub), as JSON (serde, with each line's typed event), as a
//! [`Timeline`] in true time (an HTML page or an SVG: beliefs and keys as bars, the overlap of
//! two beliefs in red) and in the Explorer's SVG diagram
//! ([`crate::model::RedlockModel::sequence_diagram`]).
//! Which path a story tells is the checker's answer: see [`crate::check::story`].
//!
//! ```
//! use redlock_lab::catalog;
//! use redlock_lab::check;
//! use redlock_lab::scenario::Scenario;
//!
//! let file = catalog::find("node-clock-jump-forward-past-drift").unwrap();
//! let scenario = Scenario::from_str(file.file, file.text)?;
//! let story = check::story(&scenario, "mutual exclusion").expect("violated");
//! let last = story.lines.last().unwrap();
//! assert_eq!(last.breaks.as_deref(), Some("mutual exclusion"));
//! assert!(story.to_text().contains("clock jumps +2"));
//! assert!(story.to_mermaid().starts_with("sequenceDiagram"));
//! # Ok::<(), redlock_lab::scenario::ScenarioError>(())
//! ```

mod mermaid;
mod story;
mod timeline;

pub use story::{Line, Story};
pub use timeline::{PAGE_SCRIPT, PAGE_STYLE, Timeline, escape};
