//! Selector matching against a naive reference: unescape everything into owned strings,
//! compile each regex on the spot, compare.

use std::collections::HashMap;

use proptest::prelude::*;

use promrate::text::write;
use promrate::{MatchOp, Selector};

const LABELS: &[&str] = &["job", "engine", "model_name", "path"];
const VALUES: &[&str] = &[
    "",
    "0",
    "1",
    "api",
    "llama-3",
    "a\"b",
    "x\\y",
    "line\nbreak",
    "é☃",
    "a,b}",
];
const PATTERNS: &[&str] = &[
    "0|1",
    ".*",
    ".+",
    "llama.*",
    "a.b",
    "(?i)API",
    "x\\\\y",
    "",
    "[0-9]+",
    "line.break",
];

fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn op() -> impl Strategy<Value = MatchOp> {
    prop_oneof![
        Just(MatchOp::Equal),
        Just(MatchOp::NotEqual),
        Just(MatchOp::RegexMatch),
        Just(MatchOp::RegexNotMatch)
    ]
}

fn reference(name: &str, labels: &HashMap<String, String>, matchers: &[(String, MatchOp, String)]) -> bool {
    matchers.iter().all(|(label, op, value)| {
        let actual = if label == "__name__" {
            name
        } else {
            labels.get(label).map_or("", String::as_str)
        };
        let re = || regex::Regex::new(&format!("^(?s:{value})$")).unwrap();
        match op {
            MatchOp::Equal => actual == value,
            MatchOp::NotEqual => actual != value,
            MatchOp::RegexMatch => re().is_match(actual),
            MatchOp::RegexNotMatch => !re().is_match(actual),
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn matches_agrees_with_naive_reference(
        name in prop::sample::select(&["up", "vllm:generation_tokens_total", "a_b"][..]),
        labels in prop::collection::btree_map(prop::sample::select(LABELS), prop::sample::select(VALUES), 0..4),
        matchers in prop::collection::vec(
            (prop::sample::select(&["__name__", "job", "engine", "model_name", "path", "absent"][..]), op(), 0..PATTERNS.len(), 0..VALUES.len()),
            1..4,
        ),
    ) {
        let labels_vec: Vec<(&str, &str)> = labels.iter().map(|(k, v)| (*k, *v)).collect();
        let mut page = String::new();
        write::sample(&mut page, name, &labels_vec, 1.0, None).unwrap();
        let sample = promrate::parse(&page).next().unwrap().unwrap().into_sample().unwrap();

        let matchers: Vec<(String, MatchOp, String)> = matchers
            .into_iter()
            .map(|(label, op, p, v)| {
                let value = match op {
                    MatchOp::Equal | MatchOp::NotEqual => VALUES[v].to_string(),
                    _ => PATTERNS[p].to_string(),
                };
                (label.to_string(), op, value)
            })
            .collect();
        let text = format!(
            "{{{}}}",
            matchers.iter().map(|(l, op, v)| format!("{l}{}{}", op.as_str(), quote(v))).collect::<Vec<_>>().join(", ")
        );
        let owned: HashMap<String, String> = labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let all_match_empty = reference("", &HashMap::new(), &matchers);
        match Selector::parse(&text) {
            Ok(selector) => {
                prop_assert!(!all_match_empty, "{text} should be rejected");
                prop_assert_eq!(selector.matches(&sample), reference(name, &owned, &matchers), "{} on {}", text, page);
            }
            Err(e) => prop_assert!(all_match_empty, "{text}: {e}"),
        }
    }

    #[test]
    fn selector_parser_never_panics(text in "[a-z_:{}=~!\"'`,. \\\\()|*+]{0,40}") {
        if let Err(e) = Selector::parse(&text) {
            prop_assert!(e.column >= 1 && e.column <= text.chars().count() + 1, "{text}: {e}");
        }
    }
}

/// A metric name, its labels, and whether Prometheus' selector matches them.
#[cfg(feature = "regex")]
type Answered = (String, Vec<(String, String)>, bool);

/// Prometheus' own answers (`tests/data/oracle/promql-selectors.jsonl`, from its
/// `promql/parser` and `model/labels` at d15adb9 with grafana/regexp, its regex engine):
/// which selectors it refuses, the matchers of the rest, and which label sets they match.
/// A grid of regex features against 85 values (Unicode digits, spaces and letters, case
/// folds, class operators, braces, escapes), and random selectors. Left out where
/// Prometheus' own optimiser differs from its regex engine (`-` in a grid: the case folding
/// of long `(?i)` alternations), and surrogates in a pattern (no text holds one).
#[test]
#[cfg(feature = "regex")]
fn selectors_read_and_match_as_prometheus_does() {
    use serde_json::Value;
    let text = super::data::read(&super::data::dir().join("oracle/promql-selectors.jsonl"));
    let mut lines = text.lines();
    let header: Value = serde_json::from_str(lines.next().expect("a header")).unwrap();
    let values: Vec<&str> = header["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    let (mut refused, mut accepted, mut answers) = (0, 0, 0);
    for line in lines {
        let case: Value = serde_json::from_str(line).unwrap();
        let selector_text = case["selector"].as_str().unwrap();
        let parsed = Selector::parse(selector_text);
        if case.get("refused").is_some() {
            assert!(parsed.is_err(), "{selector_text:?}: Prometheus refuses it");
            refused += 1;
            continue;
        }
        let selector = parsed.unwrap_or_else(|e| panic!("{selector_text:?}: Prometheus takes it, not {e}"));
        let mut ours: Vec<Vec<String>> = selector
            .matchers()
            .iter()
            .map(|m| {
                vec![
                    m.label().to_string(),
                    m.op().as_str().to_string(),
                    m.value().to_string(),
                ]
            })
            .collect();
        let mut theirs: Vec<Vec<String>> = case["matchers"].as_array().unwrap().iter().map(strings).collect();
        ours.sort();
        theirs.sort();
        assert_eq!(ours, theirs, "{selector_text:?}");
        accepted += 1;
        let sets: Vec<Answered> = match case["grid"].as_str() {
            Some(grid) => values
                .iter()
                .zip(grid.chars())
                .filter(|(_, answer)| *answer != '-')
                .map(|(v, answer)| {
                    let labels = vec![
                        ("a".to_string(), v.to_string()),
                        ("b".to_string(), "x".to_string()),
                    ];
                    ("up".to_string(), labels, answer == '1')
                })
                .collect(),
            None => case["sets"]
                .as_array()
                .unwrap()
                .iter()
                .zip(case["matches"].as_array().unwrap())
                .map(|(set, answer)| {
                    let labels = set["labels"]
                        .as_object()
                        .unwrap()
                        .iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                        .collect();
                    (
                        set["name"].as_str().unwrap().to_string(),
                        labels,
                        answer.as_bool().unwrap(),
                    )
                })
                .collect(),
        };
        for (name, labels, want) in sets {
            let got = selector.matches_series(&name, |label| {
                labels.iter().find(|(k, _)| k == label).map(|(_, v)| v.as_str())
            });
            assert_eq!(got, want, "{selector_text:?} on {name:?} {labels:?}");
            answers += 1;
        }
    }
    assert!(
        refused > 100 && accepted > 400 && answers > 30_000,
        "{refused} refused, {accepted} taken, {answers} answers"
    );
}
