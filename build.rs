//! Embeds the scenario catalog (`models/*.toml`) in the crate, so that `redlock-lab check` works
//! from any folder and the library can hand the catalog to users' tests.

use std::env;
use std::fs;
use std::path::Path;

fn main() {
    let manifest = env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let models = Path::new(&manifest).join("models");
    println!("cargo:rerun-if-changed={}", models.display());

    let mut files: Vec<_> = fs::read_dir(&models)
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
            format!("models/{name}"),
            path.display().to_string(),
        ));
    }
    code.push_str("]\n");
    let out = Path::new(&env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("catalog.rs");
    fs::write(out, code).expect("write the embedded catalog");
}
