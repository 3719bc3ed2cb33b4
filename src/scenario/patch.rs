//! A mitigation as a patch: the dotted keys of `[mitigation] set` are written into the
//! scenario's own TOML, and the result is read back through [`Scenario::from_str`], so a
//! patched scenario gets every check and every error message a file gets. It knows nothing of
//! the checker: whether the patch fixes anything is the checker's to say.

use thiserror::Error;

use super::{Scenario, ScenarioError};

/// Why a mitigation's patch could not be applied.
#[derive(Debug, Error)]
pub enum PatchError {
    /// The scenario's own text is not a TOML document.
    #[error("{file}: not a TOML document: {reason}")]
    NotToml {
        /// The scenario file.
        file: String,
        /// The parser's words.
        reason: String,
    },
    /// A dotted key runs through a value that is not a table (`lock.ttl_ticks.x`).
    #[error("{file}: mitigation key `{key}`: `{part}` is not a table")]
    NotATable {
        /// The scenario file.
        file: String,
        /// The whole dotted key.
        key: String,
        /// The part of it that holds a value, not a table.
        part: String,
    },
    /// A value is not TOML (`set = { "lock.unlock" = ... }` keeps values as TOML text).
    #[error("{file}: mitigation key `{key}`: `{value}` is not a TOML value: {reason}")]
    BadValue {
        /// The scenario file.
        file: String,
        /// The dotted key.
        key: String,
        /// The value as written.
        value: String,
        /// The parser's words.
        reason: String,
    },
    /// The patched scenario is refused by the loader, as a bad file would be (its file name
    /// ends in ` (patched)`).
    #[error(transparent)]
    Invalid(#[from] ScenarioError),
}

/// The scenario's text with `set` applied and its `[mitigation]` table and `[expect]
/// mechanism` removed: each dotted key
/// (`"storage.protection"`) is written with its TOML value (`"\"fencing-token\""`), creating
/// the tables it names.
pub fn patch_text(file: &str, text: &str, set: &[(String, String)]) -> Result<String, PatchError> {
    let mut document: toml::Table = toml::from_str(text).map_err(|e| PatchError::NotToml {
        file: file.to_owned(),
        reason: e.message().to_owned(),
    })?;
    document.remove("mitigation");
    // A patch takes away a mechanism the file declares (that is what fixing it means), so the
    // declaration goes with it; the verdicts stay, and the checker re-decides them.
    if let Some(expect) = document
        .get_mut("expect")
        .and_then(toml::Value::as_table_mut)
    {
        expect.remove("mechanism");
    }
    for (key, value) in set {
        let value = parse_value(file, key, value)?;
        insert(&mut document, file, key, value)?;
    }
    Ok(toml::to_string(&document).expect("a TOML table always serialises"))
}

/// The scenario `text` (from `file`) with its mitigation's patch applied, validated as a file.
pub fn patched(file: &str, text: &str, set: &[(String, String)]) -> Result<Scenario, PatchError> {
    let patched = patch_text(file, text, set)?;
    Ok(Scenario::from_str(&format!("{file} (patched)"), &patched)?)
}

/// One TOML value from its text, as it would stand after `key = `.
fn parse_value(file: &str, key: &str, value: &str) -> Result<toml::Value, PatchError> {
    let bad = |reason: String| PatchError::BadValue {
        file: file.to_owned(),
        key: key.to_owned(),
        value: value.to_owned(),
        reason,
    };
    let mut holder: toml::Table =
        toml::from_str(&format!("v = {value}")).map_err(|e| bad(e.message().to_owned()))?;
    holder
        .remove("v")
        .ok_or_else(|| bad("more than one value".to_owned()))
}

/// Writes `value` at the dotted `key`, creating the tables on its way.
fn insert(
    document: &mut toml::Table,
    file: &str,
    key: &str,
    value: toml::Value,
) -> Result<(), PatchError> {
    let mut parts: Vec<&str> = key.split('.').collect();
    let last = parts.pop().expect("split yields at least one part");
    let mut table = document;
    for part in parts {
        let entry = table
            .entry(part)
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        table = entry.as_table_mut().ok_or_else(|| PatchError::NotATable {
            file: file.to_owned(),
            key: key.to_owned(),
            part: part.to_owned(),
        })?;
    }
    table.insert(last.to_owned(), value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "name = \"s\"\n[lock]\nnodes = 3\n[mitigation]\ntext = \"t\"\n";

    fn set(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn keys_overwrite_values_create_tables_and_drop_the_mitigation() {
        let text = patch_text(
            "f.toml",
            FILE,
            &set(&[
                ("lock.nodes", "5"),
                ("storage.protection", "\"fencing-token\""),
            ]),
        )
        .unwrap();
        let document: toml::Table = toml::from_str(&text).unwrap();
        assert_eq!(document["lock"]["nodes"].as_integer(), Some(5));
        assert_eq!(
            document["storage"]["protection"].as_str(),
            Some("fencing-token")
        );
        assert!(!document.contains_key("mitigation"));
    }

    #[test]
    fn a_key_through_a_value_and_a_value_that_is_not_toml_are_refused() {
        let through = patch_text("f.toml", FILE, &set(&[("name.x", "1")])).unwrap_err();
        assert_eq!(
            through.to_string(),
            "f.toml: mitigation key `name.x`: `name` is not a table"
        );
        let bad = patch_text("f.toml", FILE, &set(&[("lock.nodes", "five")])).unwrap_err();
        assert!(matches!(bad, PatchError::BadValue { .. }), "{bad}");
    }
}
