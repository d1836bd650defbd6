//! The repository's own test data, `tests/data` (origins and licences in
//! `tests/data/SOURCES.md`). A missing file is a test failure, never a skip.

use std::path::{Path, PathBuf};

/// `tests/data` of this checkout.
pub fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// Reads a data file as UTF-8, failing the test with the file's path if it is missing.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("test data {}: {e}", path.display()))
}

/// Every real page (`corpus/` and `vllm/`), sorted by file name, as (file name, text).
pub fn pages() -> Vec<(String, String)> {
    let mut pages = Vec::new();
    for sub in ["corpus", "vllm"] {
        let folder = dir().join(sub);
        let entries =
            std::fs::read_dir(&folder).unwrap_or_else(|e| panic!("test data {}: {e}", folder.display()));
        for entry in entries {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_file() && (name.ends_with(".txt") || name.ends_with(".prom")) {
                pages.push((name, read(&path)));
            }
        }
    }
    pages.sort();
    // 12 corpus pages and 6 vLLM, SGLang and TGI pages: a lost file fails here.
    assert!(pages.len() >= 18, "only {} pages in tests/data", pages.len());
    pages
}
