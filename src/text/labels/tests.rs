#[test]
fn keyed_labels_make_the_set_fingerprint() {
    // A simple set (read as written) and one with an escape (read unescaped).
    for line in ["a{x=\"1\",y=\"two\"} 1", "a{x=\"1\",y=\"t\\\"o\"} 1", "a 1"] {
        let sample = crate::parse(line).next().unwrap().unwrap().into_sample().unwrap();
        let labels = sample.labels();
        let mut keyed = smallvec::SmallVec::new();
        labels.keyed_into(&mut keyed);
        let folded = keyed.iter().fold(7, |acc, l| acc ^ l.key);
        assert_eq!(folded, labels.fingerprint(7), "{line}");
        assert_eq!(keyed.len(), labels.len());
    }
}

#[test]
fn a_parsed_value_fingerprints_as_its_unescaped_text() {
    use crate::fingerprint::of_label;
    let long = format!("{}\\n{}", "x".repeat(150), "y".repeat(40));
    for raw in [
        r"plain",
        r#"say \"hi\""#,
        r"a\\b",
        r"line\nbreak",
        r"",
        r"\\",
        long.as_str(),
    ] {
        let value = super::LabelValue::from_raw(raw);
        assert_eq!(
            of_label("name", value),
            of_label("name", &*value.unescaped()),
            "{raw}"
        );
    }
    assert_ne!(
        of_label("a", "b\\nc"),
        of_label("a", super::LabelValue::from_raw("b\\nc"))
    );
}

#[test]
fn a_set_fingerprints_alike_plain_or_not() {
    let sample = |line: &'static str| crate::parse(line).next().unwrap().unwrap().into_sample().unwrap();
    let fast = sample("a{x=\"1\",y=\"two\"} 1\n");
    let general = sample("a{y = \"two\", x=\"1\"} 1\n");
    assert!(fast.labels().is_plain() && !general.labels().is_plain());
    assert_eq!(fast.labels().fingerprint(3), general.labels().fingerprint(3));
    let escaped = sample("a{x=\"1\",y=\"t\\\\o\"} 1\n");
    let owned = [("x", "1"), ("y", "t\\o")];
    assert_eq!(
        escaped.labels().fingerprint(3),
        crate::fingerprint::of_label_set(3, owned)
    );
}

use super::*;

/// What the type's documentation promises: the same size whatever the label count.
#[test]
fn labels_are_32_bytes() {
    assert_eq!(std::mem::size_of::<Labels<'_>>(), 32);
}

/// Recorded lengths and scanning agree, however the two alternate: labels before the
/// last four, and a label too long to record, anywhere, are scanned for.
#[test]
fn recorded_spans_agree_with_scanning() {
    for labels in 1..=6 {
        for long in 0..=labels {
            // Label `long` (none if `labels`) has a 300-byte value; one has a blank.
            let pairs: Vec<(String, String)> = (0..labels)
                .map(|k| {
                    let value = match k {
                        _ if k == long => "v".repeat(300),
                        1 => String::new(),
                        2 => "x y".into(),
                        _ => k.to_string(),
                    };
                    ("n".repeat(k + 1), value)
                })
                .collect();
            let raw = pairs
                .iter()
                .map(|(n, v)| format!("{n}=\"{v}\""))
                .collect::<Vec<_>>()
                .join(",");
            let mut spans = Spans::default();
            for (n, v) in &pairs {
                spans.push(n.len(), v.len());
            }
            let read: Vec<(String, String)> = Labels::simple(&raw, labels as u32, spans)
                .iter()
                .map(|(n, v)| (n.to_string(), v.raw().to_string()))
                .collect();
            assert_eq!(read, pairs, "{labels} labels, long at {long}");
            let scanned: Vec<(String, String)> = Labels::simple(&raw, labels as u32, Spans::default())
                .iter()
                .map(|(n, v)| (n.to_string(), v.raw().to_string()))
                .collect();
            assert_eq!(scanned, pairs);
        }
    }
}
