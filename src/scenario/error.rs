//! Why a scenario file was refused, and where.

use std::fmt;
use std::ops::Range;

use thiserror::Error;

/// A position in a scenario file: the file's name, and a 1-based line and column.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Location {
    /// The file name as given to the loader (or `<string>` for text loaded from memory).
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, counted in characters.
    pub column: usize,
}

impl Location {
    /// The location of byte `offset` in `text`.
    pub fn of_offset(file: &str, text: &str, offset: usize) -> Location {
        let offset = offset.min(text.len());
        // Step back to a character boundary so slicing cannot panic on a multi-byte offset.
        let mut offset = offset;
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &text[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = text[line_start..offset].chars().count() + 1;
        Location {
            file: file.to_owned(),
            line,
            column,
        }
    }

    /// The location of the start of `span` in `text`, or of the file's start without a span.
    pub fn of_span(file: &str, text: &str, span: Option<Range<usize>>) -> Location {
        Location::of_offset(file, text, span.map_or(0, |s| s.start))
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// A scenario file that cannot be checked, with the position of the offending text.
///
/// Every variant but [`ScenarioError::Read`] carries a [`Location`]; its `Display` starts with
/// `file:line:column`, the form editors and terminals turn into a link.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ScenarioError {
    /// The file could not be read at all.
    #[error("{file}: cannot read the scenario: {message}")]
    Read {
        /// The path given.
        file: String,
        /// The operating system's reason.
        message: String,
    },
    /// The file is not UTF-8 text; `at` is the first byte that is not.
    #[error("{at}: not UTF-8 text: {message}")]
    NotUtf8 {
        /// Where the first invalid byte is (its column counts the valid characters before it).
        at: Location,
        /// The invalid bytes, in hex.
        message: String,
    },
    /// The text is not valid TOML.
    #[error("{at}: invalid toml: {message}")]
    Syntax {
        /// Where the parser stopped.
        at: Location,
        /// The parser's description.
        message: String,
    },
    /// A key the schema does not know (a typo, or a knob from another version).
    #[error("{at}: unknown key: {message}")]
    UnknownKey {
        /// Where the key is.
        at: Location,
        /// Which key, and the keys allowed there.
        message: String,
    },
    /// A value of the wrong type or out of the allowed set (a string for a number, an unknown mode).
    #[error("{at}: wrong value: {message}")]
    WrongType {
        /// Where the value is.
        at: Location,
        /// What was expected.
        message: String,
    },
    /// A required key is absent.
    #[error("{at}: missing key: {message}")]
    MissingKey {
        /// The table that lacks it.
        at: Location,
        /// Which key.
        message: String,
    },
    /// `ttl_ticks ≤ drift_ticks`: no acquisition could ever be valid.
    #[error(
        "{at}: ttl_ticks {ttl_ticks} must be larger than drift_ticks {drift_ticks}: the lock could never be valid"
    )]
    TtlNotAboveDrift {
        /// Where `ttl_ticks` is.
        at: Location,
        /// The TTL given.
        ttl_ticks: u32,
        /// The drift given.
        drift_ticks: u32,
    },
    /// The lock settings resolve to a configuration the core refuses, with the core's reason.
    #[error("{at}: the lock configuration is refused: {reason}")]
    Lock {
        /// Where the `[lock]` table (or the file's name, without one) is.
        at: Location,
        /// The core's reason.
        reason: String,
    },
    /// A fault budget or a reference that the configuration cannot host (more crashes than
    /// nodes, a jump on node 4 of 3, a partition naming a missing client).
    #[error("{at}: {message}")]
    TooManyFaults {
        /// Where the offending value is.
        at: Location,
        /// What is wrong.
        message: String,
    },
    /// A property name in `[expect]` that the checker does not know, or one that needs a
    /// section the scenario lacks (a storage property without `[storage]`).
    #[error("{at}: unknown property {name:?} in [expect] ({reason})")]
    UnknownProperty {
        /// Where the name is.
        at: Location,
        /// The name given.
        name: String,
        /// The names allowed here, or why this one is not.
        reason: String,
    },
    /// `[expect] mechanism` names an unknown ingredient, one listed twice, or one the scenario
    /// does not grant.
    #[error("{at}: [expect] mechanism: {message}")]
    Mechanism {
        /// Where the `mechanism` key is.
        at: Location,
        /// What is wrong.
        message: String,
    },
    /// `source`, `quote` and `builds_on` disagree: a claim credited to a source without the
    /// sentence it rests on, an empty quote, or `builds_on` on a claim that is not `derived`.
    #[error("{at}: citation: {message}")]
    Citation {
        /// Where the offending key is (`source` when `quote` is missing).
        at: Location,
        /// What is wrong, and the fix.
        message: String,
    },
    /// A value outside its allowed range (zero nodes, six nodes, a zero TTL).
    #[error("{at}: {message}")]
    OutOfRange {
        /// Where the value is.
        at: Location,
        /// The value's allowed range.
        message: String,
    },
    /// A time key written as a duration that is not one (`"10 parsecs"`), that does not fit
    /// the file's resolution, or that is written beside its tick key.
    #[error("{at}: {message}")]
    Duration {
        /// Where the duration (or the conflicting tick key) is.
        at: Location,
        /// What is wrong, and how to write it.
        message: String,
    },
}

impl ScenarioError {
    /// The error for `bytes` that are not UTF-8, located at the first invalid byte.
    pub fn not_utf8(file: &str, bytes: &[u8], error: &std::str::Utf8Error) -> ScenarioError {
        let valid = error.valid_up_to();
        // The prefix is valid UTF-8 by definition, so the location counts characters in it.
        let before = std::str::from_utf8(&bytes[..valid]).unwrap_or_default();
        let bad = &bytes[valid..valid + error.error_len().unwrap_or(bytes.len() - valid)];
        let hex: Vec<String> = bad.iter().map(|b| format!("{b:#04x}")).collect();
        ScenarioError::NotUtf8 {
            at: Location::of_offset(file, before, before.len()),
            message: format!("invalid byte {} (save the file as UTF-8)", hex.join(" ")),
        }
    }

    /// Reads `bytes` as scenario text, or says where they stop being UTF-8.
    pub fn text<'a>(file: &str, bytes: &'a [u8]) -> Result<&'a str, ScenarioError> {
        std::str::from_utf8(bytes).map_err(|error| ScenarioError::not_utf8(file, bytes, &error))
    }

    /// An out-of-range error with what its upper end is (`why`) added to the message; other
    /// errors unchanged.
    pub(crate) fn explained(self, why: &str) -> ScenarioError {
        match self {
            ScenarioError::OutOfRange { at, message } => ScenarioError::OutOfRange {
                at,
                message: format!("{message} ({why})"),
            },
            other => other,
        }
    }

    /// Where the error is, when it has a position.
    pub fn location(&self) -> Option<&Location> {
        match self {
            ScenarioError::Read { .. } => None,
            ScenarioError::NotUtf8 { at, .. }
            | ScenarioError::Syntax { at, .. }
            | ScenarioError::UnknownKey { at, .. }
            | ScenarioError::WrongType { at, .. }
            | ScenarioError::MissingKey { at, .. }
            | ScenarioError::TtlNotAboveDrift { at, .. }
            | ScenarioError::Lock { at, .. }
            | ScenarioError::TooManyFaults { at, .. }
            | ScenarioError::UnknownProperty { at, .. }
            | ScenarioError::OutOfRange { at, .. }
            | ScenarioError::Duration { at, .. }
            | ScenarioError::Citation { at, .. }
            | ScenarioError::Mechanism { at, .. } => Some(at),
        }
    }

    /// Classifies a `toml` deserialisation error by its message: serde reports unknown keys,
    /// wrong types and missing keys with fixed phrases.
    pub(crate) fn from_toml(file: &str, text: &str, error: &toml::de::Error) -> ScenarioError {
        let at = Location::of_span(file, text, error.span());
        let message = error.message().trim().to_owned();
        if message.starts_with("unknown field") {
            ScenarioError::UnknownKey { at, message }
        } else if message.starts_with("missing field") {
            ScenarioError::MissingKey { at, message }
        } else if message.starts_with("invalid type")
            || message.starts_with("invalid value")
            || message.starts_with("unknown variant")
            || message.starts_with("expected")
        {
            ScenarioError::WrongType { at, message }
        } else {
            ScenarioError::Syntax { at, message }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_become_one_based_lines_and_columns() {
        let text = "a = 1\nbé = 2\n";
        assert_eq!(Location::of_offset("f", text, 0).to_string(), "f:1:1");
        assert_eq!(Location::of_offset("f", text, 6).to_string(), "f:2:1");
        // Column counts characters, not bytes: `=` follows `bé ` (3 characters, 4 bytes).
        assert_eq!(Location::of_offset("f", text, 10).to_string(), "f:2:4");
        assert_eq!(Location::of_offset("f", text, 999).line, 3);
    }

    #[test]
    fn bytes_that_are_not_utf8_are_located_at_the_first_bad_byte() {
        let bytes = b"name = \"x\"\ntitle = \"caf\xe9\"\n";
        let error = ScenarioError::text("f.toml", bytes).unwrap_err();
        assert_eq!(
            error.to_string(),
            "f.toml:2:13: not UTF-8 text: invalid byte 0xe9 (save the file as UTF-8)"
        );
        assert_eq!(
            ScenarioError::text("f.toml", b"a = 1\n").unwrap(),
            "a = 1\n"
        );
    }
}
