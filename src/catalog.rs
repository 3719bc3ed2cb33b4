//! The built-in scenario catalog: every `models/*.toml` file of this crate, embedded at build
//! time (sub-folders such as `models/large/` are not embedded: they are too big for a default
//! run).

/// One embedded scenario file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EmbeddedScenario {
    /// Its path in the repository, e.g. `models/redlock-fault-free.toml`.
    pub file: &'static str,
    /// Its contents.
    pub text: &'static str,
}

use crate::scenario::{Scenario, ScenarioError};

/// The catalog, sorted by file name.
pub const CATALOG: &[EmbeddedScenario] = include!(concat!(env!("OUT_DIR"), "/catalog.rs"));

impl EmbeddedScenario {
    /// The file parsed and validated.
    pub fn scenario(&self) -> Result<Scenario, ScenarioError> {
        Scenario::from_str(self.file, self.text)
    }
}

/// The whole catalog, parsed; each file is named `models/<name>.toml`.
pub fn scenarios() -> Result<Vec<Scenario>, ScenarioError> {
    CATALOG.iter().map(EmbeddedScenario::scenario).collect()
}

/// The embedded scenario whose file is `models/<name>.toml`.
pub fn find(name: &str) -> Option<&'static EmbeddedScenario> {
    CATALOG.iter().find(|scenario| {
        scenario
            .file
            .strip_prefix("models/")
            .and_then(|f| f.strip_suffix(".toml"))
            == Some(name)
    })
}

/// Why [`lookup`] found no single scenario.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LookupError {
    /// No name, alias or prefix matches.
    #[error("no catalog scenario is called {name:?} (`redlock-lab list` shows the catalog)")]
    NotFound {
        /// The name asked for.
        name: String,
    },
    /// The name is a prefix of several scenarios.
    #[error("{name:?} could mean {}", candidates.join(", "))]
    Ambiguous {
        /// The name asked for.
        name: String,
        /// The scenarios it is a prefix of.
        candidates: Vec<String>,
    },
}

fn stem(scenario: &EmbeddedScenario) -> &'static str {
    scenario
        .file
        .strip_prefix("models/")
        .and_then(|f| f.strip_suffix(".toml"))
        .unwrap_or(scenario.file)
}

/// The embedded scenario called `name`: its file name (without `models/` and `.toml`), one of
/// its `aliases`, or a prefix of exactly one file name, in that order.
pub fn lookup(name: &str) -> Result<&'static EmbeddedScenario, LookupError> {
    if let Some(found) = find(name) {
        return Ok(found);
    }
    let by_alias = CATALOG.iter().find(|embedded| {
        crate::scenario::Scenario::from_str(embedded.file, embedded.text)
            .is_ok_and(|s| s.aliases.iter().any(|alias| alias == name))
    });
    if let Some(found) = by_alias {
        return Ok(found);
    }
    let prefixed: Vec<&'static EmbeddedScenario> = CATALOG
        .iter()
        .filter(|embedded| !name.is_empty() && stem(embedded).starts_with(name))
        .collect();
    match prefixed.as_slice() {
        [one] => Ok(one),
        [] => Err(LookupError::NotFound {
            name: name.to_owned(),
        }),
        many => Err(LookupError::Ambiguous {
            name: name.to_owned(),
            candidates: many.iter().map(|e| stem(e).to_owned()).collect(),
        }),
    }
}
