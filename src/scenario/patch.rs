//! A mitigation as a patch: the dotted keys of `[mitigation] set` are written into the
//! scenario's own TOML, and the result is read back through [`Scenario::from_str`], so a
//! patched scenario gets every check a file gets. It knows nothing of the checker: whether the
//! patch fixes anything is the checker's to say.
//!
//! Every refusal points into the file itself (`file:line:column` of the offending `set` entry),
//! never into the patched text, which no one has seen.

use std::collections::BTreeMap;

use serde::Deserialize;
use thiserror::Error;
use toml::Spanned;

use super::{Location, Scenario, ScenarioError};

/// Why a mitigation's patch could not be applied. Every variant but
/// [`PatchError::Scenario`] is located at the `set` entry it blames, in the file itself.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PatchError {
    /// The file itself is refused before any patch (not TOML, or not a scenario).
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// A dotted key cannot be written: it runs through a value that is not a table
    /// (`lock.ttl_ticks.x`), or names a whole table.
    #[error("{at}: [mitigation] set: `{key}`: {error}")]
    Key {
        /// Where the key is.
        at: Location,
        /// The whole dotted key.
        key: String,
        /// What is in the way.
        error: KeyPathError,
    },
    /// A value is not TOML (a patch handed over as text: `("lock.nodes", "five")`).
    #[error("{at}: [mitigation] set: `{key}`: `{value}` is not a TOML value: {reason}")]
    BadValue {
        /// Where the key is.
        at: Location,
        /// The dotted key.
        key: String,
        /// The value as written.
        value: String,
        /// The parser's words.
        reason: String,
    },
    /// The patched scenario is refused by the loader, as a bad file would be: a key the schema
    /// does not know, a value it refuses, settings that do not fit together.
    #[error("{at}: [mitigation] set: {keys}: the patched scenario is refused: {reason}")]
    Refused {
        /// Where the blamed key is (the `set` table, when only the keys together are refused).
        at: Location,
        /// The blamed key, or every key of the patch when none alone is refused.
        keys: String,
        /// The loader's words, without the position in the patched text.
        reason: String,
    },
}

/// The scenario's text with `set` applied and its `[mitigation]` table and `[expect]
/// mechanism` removed: each dotted key (`"storage.protection"`) is written with its TOML value
/// (`"\"fencing-token\""`), creating the tables it names.
pub(super) fn patch_text(
    file: &str,
    text: &str,
    set: &[(String, String)],
) -> Result<String, PatchError> {
    let mut document: toml::Table =
        toml::from_str(text).map_err(|e| ScenarioError::from_toml(file, text, &e))?;
    document.remove("mitigation");
    // A patch takes away a mechanism the file declares (that is what fixing it means), so the
    // declaration goes with it; the verdicts stay, and the checker re-decides them.
    if let Some(expect) = document
        .get_mut("expect")
        .and_then(toml::Value::as_table_mut)
    {
        expect.remove("mechanism");
    }
    let spans = SetSpans::of(file, text);
    for (key, value) in set {
        let at = spans.key(key);
        let value = parse_value(&at, key, value)?;
        set_key(&mut document, key, value).map_err(|error| PatchError::Key {
            at,
            key: key.clone(),
            error,
        })?;
    }
    Ok(toml::to_string(&document).expect("a TOML table always serialises"))
}

/// The scenario `text` (from `file`) with its mitigation's patch applied, validated as a file
/// (its [`Scenario::file`] ends in ` (patched)`).
pub fn patched(file: &str, text: &str, set: &[(String, String)]) -> Result<Scenario, PatchError> {
    let patched = patch_text(file, text, set)?;
    Scenario::from_str(&format!("{file} (patched)"), &patched)
        .map_err(|error| blame(file, text, set, &error))
}

/// The refusal of a patched scenario, located in the file: at the first key that is refused
/// on its own, or at the `set` table when only the keys together are.
fn blame(file: &str, text: &str, set: &[(String, String)], error: &ScenarioError) -> PatchError {
    if let Err(own) = Scenario::from_str(file, text) {
        return PatchError::Scenario(own);
    }
    let spans = SetSpans::of(file, text);
    for entry in set {
        let alone = patch_text(file, text, std::slice::from_ref(entry))
            .map(|patched| Scenario::from_str(file, &patched));
        match alone {
            Err(refusal) => return refusal,
            Ok(Err(own)) => {
                return PatchError::Refused {
                    at: spans.key(&entry.0),
                    keys: format!("`{}`", entry.0),
                    reason: without_location(&own),
                };
            }
            Ok(Ok(_)) => {}
        }
    }
    let keys: Vec<String> = set.iter().map(|(key, _)| format!("`{key}`")).collect();
    PatchError::Refused {
        at: spans.table,
        keys: keys.join(", "),
        reason: without_location(error),
    }
}

/// A refusal's words without its position, which names a line of the patched text.
fn without_location(error: &ScenarioError) -> String {
    let text = error.to_string();
    match error.location() {
        Some(at) => text
            .strip_prefix(&format!("{at}: "))
            .map_or_else(|| text.clone(), str::to_owned),
        None => text,
    }
}

/// Where `[mitigation] set` and each of its keys are in the file.
struct SetSpans {
    /// The `set` table (the file's start without one).
    table: Location,
    /// Each key as the file spells it.
    keys: BTreeMap<String, Location>,
}

/// The part of a scenario file that locates a patch; everything else is ignored.
#[derive(Deserialize)]
struct SpanFile {
    mitigation: Option<SpanMitigation>,
}

#[derive(Deserialize)]
struct SpanMitigation {
    set: Option<Spanned<BTreeMap<Spanned<String>, serde::de::IgnoredAny>>>,
}

impl SetSpans {
    fn of(file: &str, text: &str) -> SetSpans {
        let set = toml::from_str::<SpanFile>(text)
            .ok()
            .and_then(|f| f.mitigation)
            .and_then(|m| m.set);
        let at = |offset: usize| Location::of_offset(file, text, offset);
        match set {
            Some(set) => SetSpans {
                table: at(set.span().start),
                keys: set
                    .get_ref()
                    .keys()
                    .map(|key| (key.get_ref().clone(), at(key.span().start)))
                    .collect(),
            },
            None => SetSpans {
                table: at(0),
                keys: BTreeMap::new(),
            },
        }
    }

    /// Where `key` is, or the `set` table for a key the file does not spell.
    fn key(&self, key: &str) -> Location {
        self.keys.get(key).unwrap_or(&self.table).clone()
    }
}

/// One TOML value from its text, as it would stand after `key = `. A table is refused: it would
/// replace the whole table it lands on, so each setting is named by its own dotted key.
fn parse_value(at: &Location, key: &str, value: &str) -> Result<toml::Value, PatchError> {
    let bad = |reason: &str| PatchError::BadValue {
        at: at.clone(),
        key: key.to_owned(),
        value: value.to_owned(),
        reason: reason.to_owned(),
    };
    let mut holder: toml::Table =
        toml::from_str(&format!("v = {value}")).map_err(|e| bad(e.message().trim()))?;
    match holder.remove("v") {
        Some(toml::Value::Table(_)) => Err(bad(
            "a table; name each setting by its dotted key (`\"lock.drift_ticks\" = 2`)",
        )),
        Some(value) if holder.is_empty() => Ok(value),
        _ => Err(bad("more than one value")),
    }
}

/// Why a dotted key cannot be written into a scenario's TOML.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum KeyPathError {
    /// A part of the key holds a value, not a table (`lock.ttl_ticks` in `lock.ttl_ticks.x`).
    #[error("`{0}` is not a table")]
    NotATable(String),
    /// The key names a whole table, which a value would erase.
    #[error("`{0}` is a table, not a value")]
    IsATable(String),
    /// The key lists clock-jump sizes, each used at most once: one size in their place would
    /// also change how many jumps a run has (`count` defaults to the list's length).
    #[error(
        "`{0}` lists jump sizes, each used at most once, and one size in their place would change how many jumps a run has: give a list"
    )]
    ListOfSizes(String),
}

/// Writes `value` at the dotted `key` of a scenario's TOML `document`, creating the tables
/// on its way: the one way a patch, a sweep or a synthesis changes a scenario's key.
pub(crate) fn set_key(
    document: &mut toml::Table,
    key: &str,
    value: toml::Value,
) -> Result<(), KeyPathError> {
    let parts: Vec<&str> = key.split('.').collect();
    let (last, path) = parts.split_last().expect("split yields at least one part");
    let mut table = document;
    for (depth, part) in path.iter().enumerate() {
        let entry = table
            .entry(*part)
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        table = entry
            .as_table_mut()
            .ok_or_else(|| KeyPathError::NotATable(parts[..=depth].join(".")))?;
    }
    if table.get(*last).is_some_and(toml::Value::is_table) {
        return Err(KeyPathError::IsATable(key.to_owned()));
    }
    if *last == "jump_ticks"
        && table.get(*last).is_some_and(toml::Value::is_array)
        && !value.is_array()
    {
        return Err(KeyPathError::ListOfSizes(key.to_owned()));
    }
    table.insert((*last).to_owned(), value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A valid scenario whose `[mitigation] set` (line 10) the tests replace.
    fn file(set: &str) -> String {
        format!(
            "name = \"s\"\ntitle = \"t\"\nclaim = \"c\"\nsource = \"derived\"\nprose = \"p\"\n\
             [lock]\nnodes = 3\nttl_ticks = 4\ndrift_ticks = 0\n\
             [mitigation]\ntext = \"t\"\nset = {set}\n\
             [expect]\n\"mutual exclusion\" = \"holds\"\n"
        )
    }

    /// The file's own patch, applied.
    fn apply(set: &str) -> Result<Scenario, PatchError> {
        let text = file(set);
        let scenario = Scenario::from_str("f.toml", &text).expect("the file itself is valid");
        patched(
            "f.toml",
            &text,
            &scenario.mitigation.expect("a mitigation").set,
        )
    }

    #[test]
    fn keys_overwrite_values_create_tables_and_drop_the_mitigation() {
        let set = [
            ("lock.nodes".to_owned(), "5".to_owned()),
            (
                "storage.protection".to_owned(),
                "\"fencing-token\"".to_owned(),
            ),
        ];
        let text = patch_text("f.toml", &file("{}"), &set).unwrap();
        let document: toml::Table = toml::from_str(&text).unwrap();
        assert_eq!(document["lock"]["nodes"].as_integer(), Some(5));
        assert_eq!(document["lock"]["ttl_ticks"].as_integer(), Some(4));
        assert_eq!(
            document["storage"]["protection"].as_str(),
            Some("fencing-token")
        );
        assert!(!document.contains_key("mitigation"));
        let scenario = apply(r#"{ "lock.nodes" = 5 }"#).unwrap();
        assert_eq!(scenario.lock.nodes(), 5);
        assert_eq!(scenario.file, "f.toml (patched)");
    }

    #[test]
    fn a_bad_key_is_refused_at_its_place_in_the_file() {
        let through = apply(r#"{ "lock.nodes" = 5, "name.x" = 1 }"#).unwrap_err();
        assert_eq!(
            through.to_string(),
            "f.toml:12:27: [mitigation] set: `name.x`: `name` is not a table"
        );
        let unknown = apply(r#"{ "lock.tll_ticks" = 5 }"#).unwrap_err();
        assert!(
            unknown.to_string().starts_with(
                "f.toml:12:9: [mitigation] set: `lock.tll_ticks`: the patched scenario is \
                 refused: unknown key: unknown field `tll_ticks`"
            ),
            "{unknown}"
        );
        let value = apply(r#"{ "lock.unlock" = "moat" }"#).unwrap_err();
        assert!(
            matches!(&value, PatchError::Refused { at, reason, .. }
                if at.line == 12 && reason.starts_with("wrong value")),
            "{value}"
        );
    }

    #[test]
    fn keys_refused_only_together_are_refused_at_the_set_and_a_table_is_no_value() {
        let together = apply(r#"{ "lock.ttl_ticks" = 2, "lock.drift_ticks" = 3 }"#).unwrap_err();
        assert!(
            together.to_string().starts_with(
                "f.toml:12:7: [mitigation] set: `lock.drift_ticks`, `lock.ttl_ticks`: the \
                 patched scenario is refused: ttl_ticks 2 must be larger than drift_ticks 3"
            ),
            "{together}"
        );
        let table = apply("{ lock = { drift_ticks = 1 } }").unwrap_err();
        assert!(
            matches!(&table, PatchError::BadValue { at, key, .. } if key == "lock" && at.column == 9),
            "{table}"
        );
    }

    #[test]
    fn a_file_that_is_refused_itself_is_its_own_error() {
        let error = patched("f.toml", "name = ", &[]).unwrap_err();
        assert!(matches!(error, PatchError::Scenario(_)), "{error}");
    }
}
