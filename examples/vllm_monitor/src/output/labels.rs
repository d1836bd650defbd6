//! Short labels for groups that stay distinct: a plain line has 10 characters for a
//! group's name, and cutting every name at the same place prints
//! `http://gpu1:8000/metrics` and `http://gpu2:8000/metrics` as the same `…0/metrics`.

/// A label of at most `width` characters for each of `names`, no two alike (for distinct
/// names): the name itself when every name fits; else the names without what they all
/// share at their end (a port, a path), then also at their start (a scheme), cut at a
/// separator; else, if those still collide when cut to `width`, `#1`, `#2`, ... in the
/// order given, for a legend (`true` marks that case, so the caller prints the legend).
pub fn distinct(names: &[&str], width: usize) -> (Vec<String>, bool) {
    if names.iter().all(|n| n.chars().count() <= width) {
        return (names.iter().map(|n| n.to_string()).collect(), false);
    }
    let (prefix, suffix) = shared_ends(names);
    // The shared end first (a port, a path), then the shared start too (a scheme, a host's
    // common part): the least taken away that leaves every label distinct.
    for (start, may_cut) in [(0, false), (prefix, true)] {
        let inners: Vec<&str> = names
            .iter()
            .map(|n| {
                let inner = &n[start..n.len() - suffix.min(n.len() - start)];
                if inner.is_empty() {
                    *n
                } else {
                    inner
                }
            })
            .collect();
        if !may_cut && inners.iter().any(|i| i.chars().count() > width) {
            continue;
        }
        let labels: Vec<String> = inners.iter().map(|i| super::keep_end(i, width)).collect();
        let mut sorted = labels.clone();
        sorted.sort();
        sorted.dedup();
        if sorted.len() == labels.len() {
            return (labels, false);
        }
    }
    ((1..=names.len()).map(|i| format!("#{i}")).collect(), true)
}

/// The byte lengths of the start and the end every name shares, each ending at a
/// separator (`/`, `:`, `.`, `-`, `_`, `=`), so that what is kept reads whole: `gpu1`, not
/// `1`. Nothing is shared by a single name.
fn shared_ends(names: &[&str]) -> (usize, usize) {
    if names.len() < 2 {
        return (0, 0);
    }
    let separator = |c: u8| matches!(c, b'/' | b':' | b'.' | b'-' | b'_' | b'=');
    let first = names[0].as_bytes();
    let common_prefix = names
        .iter()
        .map(|n| first.iter().zip(n.as_bytes()).take_while(|(a, b)| a == b).count())
        .min()
        .unwrap_or(0);
    let prefix = first[..common_prefix]
        .iter()
        .rposition(|&c| separator(c))
        .map_or(0, |i| i + 1);
    let common_suffix = names
        .iter()
        .map(|n| {
            first
                .iter()
                .rev()
                .zip(n.as_bytes().iter().rev())
                .take_while(|(a, b)| a == b)
                .count()
        })
        .min()
        .unwrap_or(0)
        .min(first.len() - prefix);
    let tail = &first[first.len() - common_suffix..];
    let suffix = tail
        .iter()
        .position(|&c| separator(c))
        .map_or(0, |i| tail.len() - i);
    (prefix, suffix)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_stay_distinct() {
        let (l, legend) = distinct(&["http://gpu1:8000/metrics", "http://gpu2:8000/metrics"], 10);
        assert_eq!((l, legend), (vec!["gpu1".to_string(), "gpu2".to_string()], false));
        let (l, _) = distinct(&["vllm-00000:8000", "vllm-00999:8000"], 10);
        assert_eq!(l, ["vllm-00000", "vllm-00999"]);
        let (l, _) = distinct(&["a", "b"], 10);
        assert_eq!(l, ["a", "b"]);
        // Two URLs that differ in one character, in the middle.
        let (l, _) = distinct(
            &["http://127.0.0.1:8000/metrics", "http://localhost:8000/metrics"],
            10,
        );
        assert_ne!(l[0], l[1]);
        assert!(l.iter().all(|x| x.chars().count() <= 10), "{l:?}");
        // Names distinct only far from both ends: numbered, for a legend.
        let (l, legend) = distinct(&["x/aaaaaaaa1bbbbbbbb/y", "x/aaaaaaaa2bbbbbbbb/y"], 4);
        assert_eq!((l, legend), (vec!["#1".to_string(), "#2".to_string()], true));
    }

    #[test]
    fn a_thousand_instances_keep_a_label_each() {
        let names: Vec<String> = (0..1000).map(|i| format!("vllm-{i:05}:8000")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let (l, legend) = distinct(&refs, 10);
        let mut unique = l.clone();
        unique.sort();
        unique.dedup();
        assert_eq!((unique.len(), legend), (1000, false));
    }
}
