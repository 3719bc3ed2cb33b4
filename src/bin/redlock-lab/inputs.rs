//! Turning command-line arguments into scenarios: files, folders, catalog names, or the
//! embedded catalog.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use redlock_lab::catalog::{self, CATALOG, LookupError};
use redlock_lab::scenario::Scenario;

/// One scenario file's name and text, before parsing.
pub struct Source {
    /// The file name (or `models/<name>.toml` for a catalog scenario).
    pub file: String,
    /// Its contents.
    pub text: String,
}

/// Loads every scenario the arguments name; with none, the embedded catalog.
///
/// Every file is parsed before anything runs, and every bad file is reported (one line each,
/// with file, line and column), so a bad input never produces a partial run.
pub fn load(paths: &[PathBuf]) -> Result<Vec<Scenario>> {
    let sources = if paths.is_empty() {
        CATALOG
            .iter()
            .map(|embedded| Source {
                file: embedded.file.to_owned(),
                text: embedded.text.to_owned(),
            })
            .collect()
    } else {
        let mut sources = Vec::new();
        for path in paths {
            sources.extend(resolve(path)?);
        }
        sources
    };
    let mut scenarios = Vec::new();
    let mut errors = Vec::new();
    for source in &sources {
        match Scenario::from_str(&source.file, &source.text) {
            Ok(scenario) => scenarios.push(scenario),
            Err(error) => errors.push(error.to_string()),
        }
    }
    match errors.len() {
        0 => Ok(scenarios),
        1 => bail!("{}", errors[0]),
        n => bail!("{n} scenario files are invalid:\n{}", errors.join("\n")),
    }
}

/// Loads exactly one scenario.
pub fn load_one(path: &Path) -> Result<Scenario> {
    let mut scenarios = load(&[path.to_path_buf()])?;
    if scenarios.len() != 1 {
        bail!(
            "{} names {} scenarios; this command takes exactly one",
            path.display(),
            scenarios.len()
        );
    }
    Ok(scenarios.remove(0))
}

/// The text of exactly one scenario (a file or a catalog name), parsed once to report a bad
/// file with its line and column before the caller edits it.
pub fn source_of_one(path: &Path) -> Result<Source> {
    let mut sources = resolve(path)?;
    if sources.len() != 1 {
        bail!(
            "{} names {} scenarios; this command takes exactly one",
            path.display(),
            sources.len()
        );
    }
    let source = sources.remove(0);
    Scenario::from_str(&source.file, &source.text)?;
    Ok(source)
}

fn resolve(path: &Path) -> Result<Vec<Source>> {
    if path.is_dir() {
        let mut files: Vec<PathBuf> = fs::read_dir(path)
            .with_context(|| format!("cannot read folder {}", path.display()))?
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .filter(|file| file.is_file() && file.extension().is_some_and(|ext| ext == "toml"))
            .collect();
        files.sort();
        if files.is_empty() {
            bail!("{} holds no .toml scenario files", path.display());
        }
        return files.iter().map(|file| read(file)).collect();
    }
    if path.is_file() {
        return Ok(vec![read(path)?]);
    }
    // Not on disk: a catalog name such as `node-clock-jump-forward-past-drift`, an alias, or
    // a unique prefix.
    let name = path.to_string_lossy();
    match catalog::lookup(&name) {
        Ok(embedded) => Ok(vec![Source {
            file: embedded.file.to_owned(),
            text: embedded.text.to_owned(),
        }]),
        Err(LookupError::NotFound { .. }) => bail!(
            "{name}: no such file, folder or catalog scenario (`redlock-lab list` shows the catalog)"
        ),
        Err(error) => bail!("{name}: no such file or folder, and {error}"),
    }
}

fn read(file: &Path) -> Result<Source> {
    let text =
        fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    Ok(Source {
        file: file.display().to_string(),
        text,
    })
}
