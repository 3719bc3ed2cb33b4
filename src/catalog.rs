//! The built-in scenario catalog: every `models/*.toml` file of this crate, embedded at build
//! time (sub-folders such as `models/large/` are not in it: they are too big for a default
//! run). The simulator's worlds, `models/sim/*.toml`, are embedded apart in
//! [`SIMULATOR_WORLDS`], so `redlock-lab simulate` finds them by name while `check` never loads
//! them.

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

/// The simulator's worlds (`models/sim/*.toml`), sorted by file name: scenarios with a
/// `[simulate]` table whose worlds are too big for the model checker (see `models/README.md`).
pub const SIMULATOR_WORLDS: &[EmbeddedScenario] =
    include!(concat!(env!("OUT_DIR"), "/sim_worlds.rs"));

/// The simulator's world whose file is `models/sim/<name>.toml`.
pub fn find_world(name: &str) -> Option<&'static EmbeddedScenario> {
    SIMULATOR_WORLDS.iter().find(|world| {
        world
            .file
            .strip_prefix("models/sim/")
            .and_then(|f| f.strip_suffix(".toml"))
            == Some(name)
    })
}

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
    #[error(
        "no catalog scenario is called {name:?}{} (`redlock-lab list` shows the catalog)",
        suggestion.as_ref().map_or(String::new(), |s| format!("; did you mean {s}?"))
    )]
    NotFound {
        /// The name asked for.
        name: String,
        /// The closest scenario name or alias, when one is close enough to be a typo.
        suggestion: Option<String>,
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
            suggestion: closest(name),
        }),
        many => Err(LookupError::Ambiguous {
            name: name.to_owned(),
            candidates: many.iter().map(|e| stem(e).to_owned()).collect(),
        }),
    }
}

/// The scenario name or alias nearest to `name` by edit distance, if it is within a third of
/// the name's length: close enough to be a typo, not a different word.
fn closest(name: &str) -> Option<String> {
    let names = CATALOG.iter().flat_map(|embedded| {
        let aliases = crate::scenario::Scenario::from_str(embedded.file, embedded.text)
            .map(|s| s.aliases)
            .unwrap_or_default();
        std::iter::once(stem(embedded).to_owned()).chain(aliases)
    });
    let limit = (name.chars().count() / 3).max(1);
    names
        .map(|candidate| (edit_distance(name, &candidate), candidate))
        .filter(|(distance, _)| *distance <= limit)
        .min()
        .map(|(_, candidate)| candidate)
}

/// Levenshtein distance in characters: insertions, deletions and substitutions cost one.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_single_character_edits() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }

    #[test]
    fn a_misspelled_name_gets_the_nearest_scenario_and_nonsense_gets_none() {
        let error = lookup("node-clock-jump-forwrd-past-drift").unwrap_err();
        assert_eq!(
            error,
            LookupError::NotFound {
                name: "node-clock-jump-forwrd-past-drift".to_owned(),
                suggestion: Some("node-clock-jump-forward-past-drift".to_owned()),
            }
        );
        assert!(
            error
                .to_string()
                .contains("did you mean node-clock-jump-forward-past-drift?")
        );
        assert_eq!(
            lookup("zzzz"),
            Err(LookupError::NotFound {
                name: "zzzz".to_owned(),
                suggestion: None
            })
        );
    }
}
