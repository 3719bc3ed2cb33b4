//! Embeds the scenario catalog (`models/*.toml`) and the simulator's worlds (`models/sim/*.toml`)
//! in the crate, so that `redlock-lab check` and `simulate` work from any folder and the library
//! can hand the catalog to users' tests; with feature `redis`, builds the clock shim
//! (`shim/clock_offset.c`) that the live tests and `replay` preload into `redis-server`.

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
    clock_shim(&manifest, &out);
}

/// Builds `shim/clock_offset.c` into `$OUT_DIR/clock_offset.so` and names it in
/// `REDLOCK_CLOCK_SHIM` for the crate's targets (the binary embeds it, the live tests preload
/// it). Built here rather than by the tests at run time: the C compiler is the one rustc links
/// through, so wherever cargo builds the crate it is there, and an installed binary carries the
/// library without needing a compiler. Elsewhere than on Linux, or if the compiler fails, the
/// file is empty, and whoever needs it says so.
#[cfg(feature = "redis")]
fn clock_shim(manifest: &str, out: &Path) {
    let source = Path::new(manifest).join("shim").join("clock_offset.c");
    println!("cargo:rerun-if-changed={}", source.display());
    let library = out.join("clock_offset.so");
    println!("cargo:rustc-env=REDLOCK_CLOCK_SHIM={}", library.display());
    let linux = env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    let built = linux
        && cc::Build::new()
            .cargo_metadata(false)
            .try_get_compiler()
            .map(|compiler| compiler.to_command())
            .is_ok_and(|mut command| {
                command
                    .args(["-O2", "-Wall", "-shared", "-fPIC", "-o"])
                    .arg(&library)
                    .arg(&source)
                    .status()
                    .is_ok_and(|status| status.success())
            });
    if !built {
        if linux {
            println!(
                "cargo:warning=the clock shim did not build: replay and the live clock tests cannot move a node's clock"
            );
        }
        fs::write(&library, b"").expect("write the empty clock shim");
    }
}

#[cfg(not(feature = "redis"))]
fn clock_shim(_manifest: &str, _out: &Path) {}

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
