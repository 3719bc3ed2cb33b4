//! Embeds the scenario catalog (`models/*.toml`) and the simulator's worlds (`models/sim/*.toml`)
//! in the crate, so that `redlock-lab check` and `simulate` work from any folder and the library
//! can hand the catalog to users' tests.

use std::env;
use std::fs;
use std::path::Path;

fn main() {
    let manifest = env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let models = Path::new(&manifest).join("models");
    println!("cargo:rerun-if-changed={}", models.display());

    let out = std::path::PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    fs::write(out.join("catalog.rs"), embed(&models, "models")).expect("write the catalog");
    let worlds = models.join("sim");
    println!("cargo:rerun-if-changed={}", worlds.display());
    fs::write(out.join("sim_worlds.rs"), embed(&worlds, "models/sim"))
        .expect("write the simulator's worlds");
}

/// The `&[EmbeddedScenario]` expression of every `.toml` file directly in `folder`, named
/// `<prefix>/<file>`.
fn embed(folder: &Path, prefix: &str) -> String {
    let mut files: Vec<_> = fs::read_dir(folder)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.is_file() && path.extension().is_some_and(|ext| ext == "toml"))
                .collect()
        })
        .unwrap_or_default();
    // Sorted, so the catalog's order (and the CLI's table) does not depend on the file system.
    files.sort();

    let mut code = String::from("&[\n");
    for path in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        let name = path
            .file_name()
            .expect("a file has a name")
            .to_string_lossy();
        code.push_str(&format!(
            "    EmbeddedScenario {{ file: {:?}, text: include_str!({:?}) }},\n",
            format!("{prefix}/{name}"),
            path.display().to_string(),
        ));
    }
    code.push_str("]\n");
    code
}
