//! What the benches share: reading a page of `tests/data`.

use std::path::PathBuf;

/// A page of `tests/data` (e.g. `corpus/node_exporter-e2e-output.txt`).
pub fn read(page: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(page);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (benches read tests/data)", path.display()))
}
