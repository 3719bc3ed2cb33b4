//! Counterexamples people can read: a checker's path told as a story, one line per event,
//! with true time, each process's own clock where it differs, and what each party believes.
//!
//! The same [`Story`] renders as text (`redlock-lab trace`, `check`, `explain`), as a Mermaid
//! `sequenceDiagram` (renders on GitHub) and as JSON (serde). The Explorer's SVG diagram is the
//! model's own [`stateright::Model::as_svg`].
//!
//! ```
//! use redlock_lab::catalog;
//! use redlock_lab::report::Story;
//! use redlock_lab::scenario::Scenario;
//!
//! let file = catalog::find("node-clock-jump-forward-past-drift").unwrap();
//! let scenario = Scenario::from_str(file.file, file.text)?;
//! let story = Story::shortest(&scenario, "mutual exclusion").expect("violated");
//! let last = story.lines.last().unwrap();
//! assert_eq!(last.breaks.as_deref(), Some("mutual exclusion"));
//! assert!(story.to_text().contains("clock jumps +2"));
//! assert!(story.to_mermaid().starts_with("sequenceDiagram"));
//! # Ok::<(), redlock_lab::scenario::ScenarioError>(())
//! ```

mod mermaid;
mod story;

pub use story::{Line, Story};
