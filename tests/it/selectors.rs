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
