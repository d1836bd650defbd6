//! The parser's modules form layers: `src/text/` has no import cycle, so each file can be
//! read knowing only the ones below it. Reads the sources (test modules left out) and
//! follows every `super::x` and `crate::text::x` path between the files.

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
            let code = text
                .split("#[cfg(test)]\nmod tests")
                .next()
                .unwrap_or("")
                .to_string();
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
    // The order a reader can take them in, lowest first.
    let mut placed: Vec<&String> = Vec::new();
    while placed.len() < graph.len() {
        let next = graph
            .iter()
            .find(|(m, uses)| !placed.contains(m) && uses.iter().all(|u| placed.contains(&u)))
            .map(|(m, _)| m)
            .expect("acyclic");
        placed.push(next);
    }
    println!("src/text layers, lowest first: {placed:?}");
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
