//! The repository's test data (`tests/data` at its root, origins and licences in
//! `tests/data/SOURCES.md`), shared with the library's tests rather than copied.

use std::path::{Path, PathBuf};

/// The repository's root: this crate lives at `examples/vllm_monitor`.
pub fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `tests/data` of this checkout.
pub fn dir() -> PathBuf {
    repository().join("tests/data")
}

/// Reads a data file as UTF-8, failing the test with the file's path if it is missing.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("test data {}: {e}", path.display()))
}
