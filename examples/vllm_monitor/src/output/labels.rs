//! Short labels for groups and URLs that stay distinct: a plain line has 10 characters
//! for a group's name, and cutting every name at the same place prints
//! `http://gpu1:8000/metrics` and `http://gpu2:8000/metrics` as the same `…0/metrics`.
//! URLs are shown as people read them (a query percent-decoded), cut in the middle where
//! too long, keeping what tells each from the others.

use percent_encoding::percent_decode_str;

/// A label of at most `width` characters for each of `names`, no two alike (for distinct
/// names): the name itself when every name fits; else the names without what they all
/// share at their end (a port, a path), then also at their start (a scheme), cut at a
/// separator; else, if those still collide when cut to `width`, `#1`, `#2`, ... in the
/// order given, for a legend (`true` marks that case, so the caller prints the legend).
pub fn distinct(names: &[&str], width: usize) -> (Vec<String>, bool) {
    if names.iter().all(|n| crate::text::columns(n) <= width) {
        return (names.iter().map(|n| n.to_string()).collect(), false);
    }
    if let [name] = names {
        // Alone, a URL is its host and port (`gpu1:8000`); a name still too long is `#1`,
        // for a legend, not cut (`….0.1:9400` told nothing of `127.0.0.1:9400`).
        let host = name
            .split_once("://")
            .map_or(*name, |(_, rest)| rest.split(['/', '?']).next().unwrap_or(rest));
        if crate::text::columns(host) <= width {
            return (vec![host.to_string()], false);
        }
        return (vec!["#1".to_string()], true);
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
        if !may_cut && inners.iter().any(|i| crate::text::columns(i) > width) {
            continue;
        }
        let labels: Vec<String> = inners.iter().map(|i| crate::text::keep_end(i, width)).collect();
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

/// A URL as people read it: its query percent-decoded (`match[]={job="vllm"}` rather than
/// `match%5B%5D=%7Bjob%3D%22vllm%22%7D`), the rest as given.
pub fn readable_url(url: &str) -> String {
    match url.split_once('?') {
        Some((head, query)) => format!("{head}?{}", percent_decode_str(query).decode_utf8_lossy()),
        None => url.to_string(),
    }
}

/// `text` of more than `width` characters as its first `head` characters, '…', and its
/// last `width - head - 1`.
fn cut_middle(text: &[char], width: usize, head: usize) -> String {
    let tail = width - head - 1;
    let mut out: String = text[..head].iter().collect();
    out.push('…');
    out.extend(&text[text.len() - tail..]);
    out
}

/// Labels of at most `width` characters (at least 8) for `urls`, no two alike: each URL
/// readable ([`readable_url`]), as it is when it fits, else cut in its middle where the
/// kept start and end still tell it from every other URL (the host and the end of a
/// query both matter); `#1`, `#2`, ... when no cut does (`true` marks that case, for a
/// legend).
pub fn url_labels(urls: &[&str], width: usize) -> (Vec<String>, bool) {
    let width = width.max(8);
    let readable: Vec<Vec<char>> = urls.iter().map(|u| readable_url(u).chars().collect()).collect();
    let common = |a: &[char], b: &[char], reversed: bool| -> usize {
        if reversed {
            a.iter()
                .rev()
                .zip(b.iter().rev())
                .take_while(|(x, y)| x == y)
                .count()
        } else {
            a.iter().zip(b).take_while(|(x, y)| x == y).count()
        }
    };
    // Without its scheme a URL often fits whole (`127.0.0.1:8000/metrics`): that form where
    // it keeps every URL apart.
    let schemeless: Vec<String> = readable
        .iter()
        .map(|r| {
            let r: String = r.iter().collect();
            r.split_once("://")
                .map_or(r.clone(), |(_, rest)| rest.to_string())
        })
        .collect();
    let schemeless_apart = {
        let mut sorted = schemeless.clone();
        sorted.sort();
        sorted.dedup();
        sorted.len() == schemeless.len()
    };
    let labels: Vec<String> = readable
        .iter()
        .enumerate()
        .map(|(i, r)| {
            if r.len() <= width {
                return r.iter().collect();
            }
            if schemeless_apart && crate::text::columns(&schemeless[i]) <= width {
                return schemeless[i].clone();
            }
            // What each other URL shares with this one at its start and at its end: the
            // cut must keep one of the first differences.
            let shared: Vec<(usize, usize)> = readable
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, other)| (common(r, other, false), common(r, other, true)))
                .collect();
            let fits = |head: usize| {
                let tail = width - head - 1;
                shared.iter().all(|&(start, end)| head > start || tail > end)
            };
            // Three quarters to the start (scheme, host, path, the query's key) unless the
            // difference is elsewhere.
            let preferred = width * 3 / 4;
            let head = (0..width)
                .flat_map(|d| [preferred.checked_sub(d), Some(preferred + d)])
                .flatten()
                .find(|&h| h >= 1 && h < width - 1 && fits(h))
                .unwrap_or(preferred);
            cut_middle(r, width, head)
        })
        .collect();
    let mut sorted = labels.clone();
    sorted.sort();
    sorted.dedup();
    if sorted.len() == labels.len() {
        (labels, false)
    } else {
        ((1..=urls.len()).map(|i| format!("#{i}")).collect(), true)
    }
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
        assert_eq!((l, legend), (vec!["#1".to_string(), "#2".to_string()], true)); // One name: its host and port if they fit, else numbered, not cut.
        let (l, legend) = distinct(&["http://gpu1:8000/metrics"], 10);
        assert_eq!((l, legend), (vec!["gpu1:8000".to_string()], false));
        let (l, legend) = distinct(&["127.0.0.1:9400"], 10);
        assert_eq!((l, legend), (vec!["#1".to_string()], true));
    }

    #[test]
    fn urls_read_decoded_and_cut_where_they_stay_distinct() {
        let federate = "http://prom:9090/federate?match%5B%5D=%7Bjob%3D%22vllm%22%7D";
        assert_eq!(
            readable_url(federate),
            r#"http://prom:9090/federate?match[]={job="vllm"}"#
        );
        let (l, numbered) = url_labels(&[federate], 80);
        assert_eq!(
            (l[0].as_str(), numbered),
            (r#"http://prom:9090/federate?match[]={job="vllm"}"#, false)
        );
        // Too long: the middle goes, the host and the end of the query stay.
        let (l, _) = url_labels(&[federate], 30);
        assert_eq!(l[0], "http://prom:9090/feder…\"vllm\"}");
        // Two URLs apart only in the middle: the cut keeps the difference.
        let a = "http://prometheus.example:9090/federate?match[]={job=\"vllm-a\",env=\"production\"}";
        let b = "http://prometheus.example:9090/federate?match[]={job=\"vllm-b\",env=\"production\"}";
        let (l, numbered) = url_labels(&[a, b], 40);
        assert!(!numbered && l[0] != l[1], "{l:?}");
        assert!(l[0].contains("vllm-a") || l[0].contains("a\",env"), "{l:?}");
        assert!(l.iter().all(|x| x.chars().count() == 40), "{l:?}");
        // Short URLs as they are.
        let (l, _) = url_labels(&["http://gpu1:8000/metrics", "http://gpu2:8000/metrics"], 60);
        assert_eq!(l, ["http://gpu1:8000/metrics", "http://gpu2:8000/metrics"]);
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

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    fn all_distinct(labels: &[String]) -> bool {
        let mut sorted = labels.to_vec();
        sorted.sort();
        sorted.dedup();
        sorted.len() == labels.len()
    }

    /// `name` with its character at `at` (modulo its length) replaced by `c` (or, when that
    /// is the same character, by another).
    fn one_changed(name: &str, at: usize, c: char) -> String {
        let at = at % name.chars().count();
        name.chars()
            .enumerate()
            .map(|(i, old)| match (i == at, old == c) {
                (false, _) => old,
                (true, false) => c,
                (true, true) => {
                    if c == '9' {
                        '8'
                    } else {
                        '9'
                    }
                }
            })
            .collect()
    }

    proptest! {
        /// Two URLs that differ in one character anywhere never get the same group label,
        /// and no label is wider than its column.
        #[test]
        fn urls_one_character_apart_get_distinct_group_labels(
            url in "https?://[a-z0-9.-]{1,30}(:[0-9]{2,5})?(/[a-z0-9_/.-]{0,30})?",
            at in 0usize..100,
            c in prop::sample::select(vec!['0', '9', 'a', 'z', '-', '.', '/', ':', '_']),
            width in 4usize..16,
        ) {
            let other = one_changed(&url, at, c);
            prop_assume!(other != url);
            let (labels, _) = distinct(&[&url, &other], width);
            prop_assert!(all_distinct(&labels), "{url} {other}: {labels:?}");
            prop_assert!(labels.iter().all(|l| l.chars().count() <= width), "{labels:?}");
        }

        /// The same for URLs in event lines: cut in the middle, never alike.
        #[test]
        fn urls_one_character_apart_get_distinct_url_labels(
            url in "https?://[a-z0-9.-]{1,30}(:[0-9]{2,5})?/[a-z0-9_/.-]{0,40}(\\?match\\[\\]=\\{job=\"[a-z]{1,20}\"\\})?",
            at in 0usize..200,
            c in prop::sample::select(vec!['0', '9', 'a', 'z', '-', '.', '/', ':', '_']),
            width in 8usize..70,
        ) {
            let other = one_changed(&url, at, c);
            prop_assume!(other != url);
            let (labels, _) = url_labels(&[&url, &other], width);
            prop_assert!(all_distinct(&labels), "{url} {other}: {labels:?}");
            prop_assert!(labels.iter().all(|l| l.chars().count() <= width), "{labels:?}");
        }

        /// Any set of distinct names gets distinct labels within the width.
        #[test]
        fn any_names_get_distinct_labels(
            names in prop::collection::btree_set("[a-z0-9:./_-]{1,24}", 1..40),
            width in 3usize..14,
        ) {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let (labels, numbered) = distinct(&names, width);
            prop_assert!(all_distinct(&labels), "{names:?}: {labels:?}");
            prop_assert!(labels.iter().all(|l| l.chars().count() <= width.max(names.len().to_string().len() + 1)), "{labels:?}");
            if !numbered {
                // Each label is a piece of its own name (its end cut with '…').
                for (label, name) in labels.iter().zip(&names) {
                    prop_assert!(name.contains(label.trim_start_matches('…')), "{label} of {name}");
                }
            }
        }
    }
}
