//! The crate's modules form layers: neither the crate's top-level modules (`ARCHITECTURE.md`)
//! nor the parser's files in `src/text/` have an import cycle, so each can be read knowing
//! only the ones below it. Reads the sources (test modules left out) and follows every
//! `crate::x` path between top-level modules, and `super::x` and `crate::text::x` paths
//! between the parser's files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module name -> the sibling modules its non-test code names.
fn text_module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/text");
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).expect("src/text") {
        let path = entry.expect("dir entry").path();
        if path.extension().is_some_and(|e| e == "rs") {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&path).expect("source");
            // Unit tests may reach anywhere; the layers are about the code itself.
            let code = without_tests(&text);
            files.insert(name, code);
        }
    }
    let names: BTreeSet<String> = files.keys().filter(|n| *n != "mod").cloned().collect();
    let mut graph = BTreeMap::new();
    for (module, code) in &files {
        if module == "mod" {
            continue;
        }
        let mut uses = BTreeSet::new();
        for prefix in ["super::", "crate::text::"] {
            for (at, _) in code.match_indices(prefix) {
                let word: String = code[at + prefix.len()..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if names.contains(&word) && &word != module {
                    uses.insert(word);
                }
            }
            // `use super::{a, b::C}` groups.
            for (at, _) in code.match_indices(&format!("{prefix}{{")) {
                let group = &code[at + prefix.len() + 1..];
                let group = &group[..group.find('}').unwrap_or(0)];
                for item in group.split(',') {
                    let word = item.trim().split("::").next().unwrap_or("").to_string();
                    if names.contains(&word) && &word != module {
                        uses.insert(word);
                    }
                }
            }
        }
        graph.insert(module.clone(), uses);
    }
    graph
}

/// The code of a source file without its unit tests (they may reach anywhere) and without
/// comments (a doc link may point anywhere; the layers are about what the code uses).
fn without_tests(text: &str) -> String {
    let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
    code.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Top-level module of `src/` -> the other top-level modules its non-test code names.
fn crate_module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut code: BTreeMap<String, String> = BTreeMap::new();
    fn gather(dir: &Path, module: &str, code: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).expect("source dir") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                gather(&path, module, code);
            } else if path.extension().is_some_and(|e| e == "rs")
                && path.file_name().is_some_and(|n| n != "tests.rs")
            {
                let text = std::fs::read_to_string(&path).expect("source");
                code.entry(module.to_string())
                    .or_default()
                    .push_str(&without_tests(&text));
            }
        }
    }
    for entry in std::fs::read_dir(&src).expect("src") {
        let path = entry.expect("dir entry").path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "lib" || name == "fuzzing" || name == "guide" {
            // The crate root re-exports everything; `fuzzing` exposes internals to the
            // fuzz targets only; `guide` is documentation.
            continue;
        }
        if path.is_dir() {
            gather(&path, &name, &mut code);
        } else {
            let text = std::fs::read_to_string(&path).expect("source");
            code.entry(name).or_default().push_str(&without_tests(&text));
        }
    }
    let names: BTreeSet<String> = code.keys().cloned().collect();
    code.iter()
        .map(|(module, text)| {
            let uses = text
                .match_indices("crate::")
                .map(|(at, _)| {
                    text[at + "crate::".len()..]
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect::<String>()
                })
                .filter(|word| names.contains(word) && word != module)
                .collect();
            (module.clone(), uses)
        })
        .collect()
}

/// The order a reader can take a graph's modules in, lowest first.
fn layers(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<&String> {
    let mut placed: Vec<&String> = Vec::new();
    while placed.len() < graph.len() {
        let next = graph
            .iter()
            .find(|(m, uses)| !placed.contains(m) && uses.iter().all(|u| placed.contains(&u)))
            .map(|(m, _)| m)
            .expect("acyclic");
        placed.push(next);
    }
    placed
}

/// A cycle through `start`, if there is one (depth-first).
fn cycle_from(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    fn walk(
        graph: &BTreeMap<String, BTreeSet<String>>,
        node: &str,
        start: &str,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        for next in graph.get(node).into_iter().flatten() {
            if next == start {
                path.push(next.clone());
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if walk(graph, next, start, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    let mut path = vec![start.to_string()];
    walk(graph, start, start, &mut path, &mut BTreeSet::new()).then_some(path)
}

#[test]
fn text_modules_have_no_import_cycle() {
    let graph = text_module_graph();
    // The check itself: these edges exist, so a graph read wrongly would fail here.
    assert!(graph["sample_line"].contains("label_set"), "{graph:?}");
    assert!(graph["label_set"].contains("lexer"), "{graph:?}");
    assert!(graph["labels"].contains("lexer"), "{graph:?}");
    let cycles: Vec<String> = graph
        .keys()
        .filter_map(|m| cycle_from(&graph, m))
        .map(|c| c.join(" -> "))
        .collect();
    assert!(cycles.is_empty(), "import cycles in src/text: {cycles:#?}");
    println!("src/text layers, lowest first: {:?}", layers(&graph));
}

/// Data flows one way through the crate (`ARCHITECTURE.md`): text, select, promql,
/// series, query, tracker, each using only the ones before it.
#[test]
fn the_crate_layers_have_no_import_cycle() {
    let graph = crate_module_graph();
    assert!(
        graph["tracker"].contains("query") && graph["select"].contains("text"),
        "{graph:?}"
    );
    let cycles: Vec<String> = graph
        .keys()
        .filter_map(|m| cycle_from(&graph, m))
        .map(|c| c.join(" -> "))
        .collect();
    assert!(
        cycles.is_empty(),
        "import cycles between src/'s modules: {cycles:#?}"
    );
    let order = layers(&graph);
    let position = |m: &str| order.iter().position(|o| *o == m).unwrap();
    for (lower, upper) in [
        ("text", "select"),
        ("promql", "series"),
        ("series", "query"),
        ("query", "tracker"),
        ("tracker", "fold"),
    ] {
        assert!(
            position(lower) < position(upper),
            "{lower} after {upper} in {order:?}"
        );
    }
    println!("crate layers, lowest first: {order:?}");
    // ARCHITECTURE.md names the same order.
    let architecture = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md"))
        .expect("ARCHITECTURE.md");
    let written: Vec<&str> = order.iter().map(|m| m.as_str()).collect();
    assert!(
        architecture.contains(&written.join(", ")),
        "ARCHITECTURE.md should list the layers as {written:?}"
    );
}

/// The names `src/lib.rs` makes public at the crate root: its `pub mod`s (but the hidden
/// `fuzzing`) and every item of its `pub use`s.
fn root_names() -> Vec<String> {
    let lib =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).expect("lib.rs");
    let mut names = Vec::new();
    let mut statements = lib.split(';');
    for statement in &mut statements {
        let code: String = statement
            .lines()
            .filter(|l| !l.trim_start().starts_with("//") && !l.trim_start().starts_with("#["))
            .collect::<Vec<_>>()
            .join(" ");
        let code = code.trim();
        if let Some(module) = code.strip_prefix("pub mod ") {
            if module.trim() != "fuzzing" {
                names.push(module.trim().to_string());
            }
        } else if let Some(path) = code.strip_prefix("pub use ") {
            let items = match (path.find('{'), path.rfind('}')) {
                (Some(open), Some(close)) => path[open + 1..close].to_string(),
                _ => path.rsplit("::").next().unwrap_or("").to_string(),
            };
            names.extend(
                items
                    .split(',')
                    .map(|i| i.trim().to_string())
                    .filter(|i| !i.is_empty()),
            );
        }
    }
    names
}

/// The crate root is the first page a user reads: at most 40 names, the rest one module
/// deeper (`text`, `series`, `tracker`, `error`, `fold`).
#[test]
fn the_root_api_has_at_most_40_names() {
    let names = root_names();
    assert!(
        names.contains(&"Tracker".to_string()) && names.contains(&"fold".to_string()),
        "{names:?}"
    );
    assert!(names.len() <= 40, "{} names at the root: {names:?}", names.len());
    println!("root names: {}", names.len());
}

#[test]
fn the_cycle_finder_finds_cycles() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec![]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(
        cycle_from(&graph, "a"),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
    assert_eq!(cycle_from(&graph, "d"), None);
}
