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

/// The catalog, sorted by file name.
pub const CATALOG: &[EmbeddedScenario] = include!(concat!(env!("OUT_DIR"), "/catalog.rs"));

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
