//! Locating `../shared` (the corpus, oracle and vLLM pages) beside the checkout.

use std::path::PathBuf;

/// The shared folder, or `None` (with a message saying the test was skipped and why).
/// Under CI (`CI` set) a missing folder is a failure, never a skip.
pub fn dir(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("PROMRATE_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"));
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "{test}: {} is missing; CI must have ../shared beside the checkout",
            dir.display()
        );
    }
    eprintln!(
        "SKIPPED {test}: {} not found (set PROMRATE_SHARED to run it)",
        dir.display()
    );
    None
}

/// Reads a file of the shared folder as UTF-8.
pub fn read(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
