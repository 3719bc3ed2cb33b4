//! Headless Chromium for the tests that open pages: finding it, running it with a deadline,
//! and screenshots.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The browser to drive, or `None` when there is none.
pub(crate) fn browser() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

/// The browser, or `None` after `test` is reported skipped (a failure under CI).
pub(crate) fn browser_for(test: &str) -> Option<PathBuf> {
    let binary = browser();
    if binary.is_none() {
        super::missing_program(
            test,
            "no Chromium (set CHROMIUM=/path/to/chromium, or apt-get install -y \
             --no-install-recommends chromium; scripts/test installs it)",
            super::under_ci(),
        );
    }
    binary
}

/// Runs the browser headless on `url` with `extra` flags, in its own process group, killed
/// with its helpers after 90 s.
pub(crate) fn chromium(binary: &Path, profile: &Path, extra: &[&str], url: &str) -> Output {
    let mut child = Command::new(binary)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
        ])
        .args([
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        // Time for a page's scripts to fetch and draw before the DOM or the picture is taken.
        .arg("--virtual-time-budget=10000")
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
    let start = Instant::now();
    let mut stdout = Vec::new();
    let mut pipe = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        use std::io::Read;
        let _ = pipe.read_to_end(&mut stdout);
        stdout
    });
    let status = loop {
        if let Some(status) = child.try_wait().expect("poll chromium") {
            break status;
        }
        if start.elapsed() > Duration::from_secs(90) {
            kill_group(child.id());
            panic!("chromium ran over 90 s on {url}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // Helpers the browser left behind go with its group.
    kill_group(child.id());
    let stdout = reader.join().expect("the reader");
    assert!(status.success(), "chromium failed on {url}: {status}");
    Output {
        status,
        stdout,
        stderr: Vec::new(),
    }
}

fn kill_group(id: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{id}")])
        .stderr(Stdio::null())
        .status();
}

/// A PNG of `page` in a window 1 280 pixels wide and `height` high, checked to be one.
pub(crate) fn screenshot(binary: &Path, scratch: &Path, page: &Path, png: &Path, height: u32) {
    chromium(
        binary,
        &scratch.join("profile-shot"),
        &[
            &format!("--window-size=1280,{height}"),
            "--hide-scrollbars",
            // Paint the whole page before the picture is taken, not the tiles ready so far.
            "--run-all-compositor-stages-before-draw",
            &format!("--screenshot={}", png.display()),
        ],
        &format!("file://{}", page.display()),
    );
    let bytes = std::fs::read(png).expect("the screenshot was written");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    assert_eq!(width, 1280);
    // A blank page compresses to a few kilobytes; a drawn one does not.
    assert!(
        bytes.len() > 30_000,
        "{}: {} bytes",
        png.display(),
        bytes.len()
    );
}
