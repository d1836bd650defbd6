//! The monitor's modules form layers, each importing only from the layers below it, so a
//! reader can take them in order and a change flows one way (`ARCHITECTURE.md`, "The
//! monitor"). Reads `src/` (test code left out: `#[cfg(test)]` items, `tests.rs` and
//! `*_tests.rs`, modules declared under `#[cfg(test)]`) and fails on an import from a module's
//! own layer or one above it, which is what any import circle needs. The same reading
//! checks that no function is longer than [`LONGEST_FUNCTION`] lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The top-level modules and folders of `src/`, lowest layer first. A module imports only
/// from earlier rows; a new module goes in the row above everything it imports.
const LAYERS: &[&[&str]] = &[
    // What dropped counters had counted (the library's report, kept): read by `source`.
    &["retired"],
    // Leaves: words and numbers, time, the servers' metric names, events, the recording's
    // file format, the fleet generator, and where figures are read from.
    &[
        "text",
        "clock",
        "engines",
        "events",
        "recording",
        "fleet",
        "source",
        "when",
        "body",
    ],
    &["gpus", "http"],
    &["figures", "simulator"],
    &["top", "target", "discover", "signals"],
    &["snapshot", "scrape"],
    &["alerts"],
    &["summary", "args", "replay"],
    &["output", "pipeline", "plan"],
    &["tsdb"],
    &["app"],
];

/// Lines a function of the monitor may take, its signature and closing brace included.
const LONGEST_FUNCTION: usize = 80;

/// `text` with comments and the insides of string and character literals blanked out
/// (newlines kept, so line numbers hold), so that neither braces nor paths in them count.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let rest = &chars[i..];
        if rest.starts_with(&['/', '/']) {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if rest.starts_with(&['/', '*']) {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i..].starts_with(&['/', '*']) {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i..].starts_with(&['*', '/']) {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if let Some(hashes) = raw_string_start(rest) {
            // r"..." or r#"..."#: no escapes, ends at a quote and as many hashes.
            let open = 2 + hashes;
            out.extend(std::iter::repeat_n(' ', open));
            i += open;
            let close: Vec<char> = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            while i < chars.len() && !chars[i..].starts_with(&close) {
                out.push(blank(chars[i]));
                i += 1;
            }
            out.extend(std::iter::repeat_n(' ', close.len()));
            i += close.len();
        } else if chars[i] == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                let step = if chars[i] == '\\' { 2 } else { 1 };
                for c in &chars[i..(i + step).min(chars.len())] {
                    out.push(blank(*c));
                }
                i += step;
            }
            out.push(' ');
            i += 1;
        } else if let Some(len) = char_literal(rest) {
            out.extend(std::iter::repeat_n(' ', len));
            i += len;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// The number of `#` of a raw string literal starting here (`r"`, `r#"`, `br"`...).
fn raw_string_start(rest: &[char]) -> Option<usize> {
    if rest.first() != Some(&'r') {
        return None;
    }
    let hashes = rest[1..].iter().take_while(|c| **c == '#').count();
    (rest.get(1 + hashes) == Some(&'"')).then_some(hashes)
}

/// The length of a character literal starting here (`'{'`, `'\n'`, `'\u{1b}'`); `None`
/// for a lifetime (`'a`).
fn char_literal(rest: &[char]) -> Option<usize> {
    if rest.first() != Some(&'\'') {
        return None;
    }
    if rest.get(1) == Some(&'\\') {
        return rest.get(3..)?.iter().position(|c| *c == '\'').map(|end| end + 4);
    }
    (rest.get(2) == Some(&'\'')).then_some(3)
}

/// The index just past the block that opens at the first `{` from `from` (its matching
/// `}`), or past the `;` when one comes first (an item without a body; a `;` within
/// brackets, `[u8; 4]`, does not end one).
fn item_end(code: &str, from: usize) -> usize {
    let bytes = code.as_bytes();
    let mut depth = 0usize;
    let mut brackets = 0usize;
    for (at, b) in bytes.iter().enumerate().skip(from) {
        match b {
            b'(' | b'[' => brackets += 1,
            b')' | b']' => brackets = brackets.saturating_sub(1),
            b';' if depth == 0 && brackets == 0 => return at + 1,
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return at + 1;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// `code` without its `#[cfg(test)]` items (newlines kept), and the modules declared
/// under `#[cfg(test)]` (`mod tests;`), whose files are test code too.
fn without_tests(code: &str) -> (String, Vec<String>) {
    let mut out = String::with_capacity(code.len());
    let mut test_modules = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let end = item_end(rest, at);
        let item = &rest[at..end];
        if item.ends_with(';') {
            if let Some(name) = item.split("mod ").nth(1) {
                test_modules.push(name.trim_end_matches(';').trim().to_string());
            }
        }
        out.extend(item.chars().filter(|c| *c == '\n'));
        rest = &rest[end..];
    }
    out.push_str(rest);
    (out, test_modules)
}

/// A source file's code, test code left out.
struct File {
    path: PathBuf,
    code: String,
}

/// The non-test files of `dir`, by the top-level module (file or folder) they belong to.
fn gather(dir: &Path, module: Option<&str>, files: &mut BTreeMap<String, Vec<File>>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("the monitor's src/")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    // Files of modules declared `#[cfg(test)] mod x;` in this folder.
    let mut test_only = BTreeSet::new();
    let mut read = Vec::new();
    for path in entries
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
    {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "tests" || name.ends_with("_tests") {
            continue;
        }
        let text = std::fs::read_to_string(path).expect("a source file");
        let (code, tests) = without_tests(&code_only(&text));
        test_only.extend(tests);
        read.push((name, path.clone(), code));
    }
    for (name, path, code) in read {
        if test_only.contains(&name) || (module.is_none() && (name == "lib" || name == "main")) {
            continue;
        }
        let top = module.map_or(name, str::to_string);
        files.entry(top).or_default().push(File { path, code });
    }
    for sub in entries.iter().filter(|p| p.is_dir()) {
        let name = sub.file_name().unwrap().to_string_lossy().into_owned();
        if !test_only.contains(&name) {
            gather(sub, Some(module.unwrap_or(&name)), files);
        }
    }
}

/// Every non-test file of the monitor's `src/`, by top-level module.
fn monitor_files() -> BTreeMap<String, Vec<File>> {
    let mut files = BTreeMap::new();
    gather(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        None,
        &mut files,
    );
    files
}

/// The first names of the `crate::` paths in `code`: `crate::a::b` and `crate::{a, b::c}`
/// name `a` (and `b`).
fn crate_imports(code: &str) -> BTreeSet<String> {
    let word = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut names = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = code[at + "crate::".len()..].trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..item_end(rest, 0).saturating_sub(2)];
            let mut depth = 0;
            let mut start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if start && !c.is_whitespace() => {
                        names.insert(word(&group[i..]));
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            names.insert(word(rest));
        }
    }
    names.remove("");
    names
}

/// Each function of `code` longer than `limit` lines: its name and first line (1-based).
fn long_functions(code: &str, limit: usize) -> Vec<(String, usize, usize)> {
    let mut long = Vec::new();
    for (at, _) in code.match_indices("fn ") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let name: String = code[at + 3..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            // `fn(` in a type.
            continue;
        }
        let end = item_end(code, at);
        let lines = code[at..end].lines().count();
        if code[..end].ends_with('}') && lines > limit {
            long.push((name, code[..at].matches('\n').count() + 1, lines));
        }
    }
    long
}

#[test]
fn every_module_of_src_is_in_one_layer() {
    let files = monitor_files();
    let placed: Vec<&str> = LAYERS.iter().flat_map(|l| l.iter().copied()).collect();
    let unique: BTreeSet<&str> = placed.iter().copied().collect();
    assert_eq!(unique.len(), placed.len(), "a module is in two layers");
    let found: BTreeSet<&str> = files.keys().map(String::as_str).collect();
    assert_eq!(
        found, unique,
        "src/'s modules and the layers differ: place each module once"
    );
}

#[test]
fn no_module_imports_from_its_own_layer_or_above() {
    let layer_of: BTreeMap<&str, usize> = LAYERS
        .iter()
        .enumerate()
        .flat_map(|(i, layer)| layer.iter().map(move |m| (*m, i)))
        .collect();
    let mut backward = Vec::new();
    for (module, files) in monitor_files() {
        let Some(&own) = layer_of.get(module.as_str()) else {
            continue;
        };
        for file in files {
            for used in crate_imports(&file.code) {
                match layer_of.get(used.as_str()) {
                    Some(&layer) if used != module && layer >= own => {
                        backward.push(format!(
                            "{} ({module}, layer {own}) uses {used} (layer {layer})",
                            file.path.display()
                        ));
                    }
                    _ => {}
                }
            }
        }
    }
    assert!(
        backward.is_empty(),
        "imports against the layers:\n{}",
        backward.join("\n")
    );
}

#[test]
fn no_function_is_longer_than_the_limit() {
    let mut long = Vec::new();
    for file in monitor_files().into_values().flatten() {
        for (name, line, lines) in long_functions(&file.code, LONGEST_FUNCTION) {
            long.push(format!("{}:{line} {name}: {lines} lines", file.path.display()));
        }
    }
    assert!(
        long.is_empty(),
        "functions over {LONGEST_FUNCTION} lines (split them into named steps):\n{}",
        long.join("\n")
    );
}

/// The reading the checks rest on: paths in comments and strings do not count, groups
/// do, test code is left out, and a long function is found where it starts.
#[test]
fn the_source_reading_finds_what_it_must() {
    let text = "use crate::{alpha::X, beta};\n// crate::gamma\nlet s = \"crate::delta {\";\nlet c = '{';\n\
                fn f<'a>(x: &'a str) { crate::epsilon::go(x) }\n#[cfg(test)]\nmod tests { use crate::zeta; }\n\
                #[cfg(test)]\nmod more_tests;\n";
    let (code, test_modules) = without_tests(&code_only(text));
    let names: Vec<String> = crate_imports(&code).into_iter().collect();
    assert_eq!(names, ["alpha", "beta", "epsilon"]);
    assert_eq!(test_modules, ["more_tests"]);
    assert_eq!(code.lines().count(), text.lines().count());
    let body = "    let x = 1;\n".repeat(LONGEST_FUNCTION - 1);
    let long =
        format!("struct S;\nimpl S {{\n    pub fn long(&self) {{\n{body}    }}\n    fn short() {{}}\n}}\n");
    assert_eq!(
        long_functions(&code_only(&long), LONGEST_FUNCTION),
        [("long".to_string(), 3, LONGEST_FUNCTION + 1)]
    );
    assert!(long_functions(&code_only(&long), LONGEST_FUNCTION + 1).is_empty());
    assert_eq!(
        code_only("let r = r#\"a \"{\" b\"#; x"),
        "let r =             ; x"
    );
}
