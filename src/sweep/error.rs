//! Why a sweep cannot run.

use thiserror::Error;

use crate::check::SynthesisError;
use crate::scenario::ScenarioError;

/// Why a sweep cannot run. Every variant is bad input: nothing was checked.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SweepError {
    /// The `--vary` text is not `KEY=A..B` or `KEY=v1,v2,…`.
    #[error("--vary {spec:?}: {reason}")]
    Spec {
        /// The text given.
        spec: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The scenario itself is invalid (before any value was set).
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// The key does not exist in the scenario schema, or crosses a value that is not a table.
    #[error("{file}: {key} is not a scenario key: {reason}")]
    UnknownKey {
        /// The scenario file.
        file: String,
        /// The dotted key.
        key: String,
        /// The schema's complaint, or the value in the way.
        reason: String,
    },
    /// The scenario refuses one of the values (a jump of 0, a TTL not above the drift, …).
    #[error("{file}: {key} = {value} is refused: {reason}")]
    Value {
        /// The scenario file.
        file: String,
        /// The dotted key.
        key: String,
        /// The value, as TOML.
        value: String,
        /// The validation's message.
        reason: String,
    },
    /// A key to leave free is not a whole number written in the file.
    #[error("{file}: {key} is not a whole number in the file; write it out to leave it free")]
    NotANumber {
        /// The scenario file.
        file: String,
        /// The dotted key.
        key: String,
    },
    /// The symbolic exploration could not run.
    #[error("{file}: {error}")]
    Synthesis {
        /// The scenario file.
        file: String,
        /// Why.
        error: SynthesisError,
    },
}
