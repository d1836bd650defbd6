//! Property tests: rendering then parsing is the identity; no input panics; error
//! positions lie inside the input.

use proptest::prelude::*;

use promrate::text::write;
use promrate::{Format, Parser};

/// A metric or label name: plain (colons allowed in metric names) or any UTF-8 without
/// quotes or backslashes (written quoted, Prometheus 3 style).
fn metric_name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-zA-Z_:][a-zA-Z0-9_:]{0,20}",
        1 => "[a-z]{1,5}[.\\-/ é☃][a-z]{1,5}",
    ]
}

fn label_name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-zA-Z_][a-zA-Z0-9_]{0,12}",
        1 => "[a-z]{1,4}[.é☃-][a-z]{1,4}",
    ]
}

/// Label values with every character that needs escaping, commas, braces, `=`, `#`.
fn label_value() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("\\".to_string()),
            Just("\"".to_string()),
            Just("\n".to_string()),
            Just(",".to_string()),
            Just("}".to_string()),
            Just("{".to_string()),
            Just("=".to_string()),
            Just(" # ".to_string()),
            "[a-zA-Z0-9/:._ -]{1,6}",
            "\\PC{1,3}",
        ],
        0..6,
    )
    .prop_map(|parts| parts.concat())
}

fn value() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(f64::MIN_POSITIVE / 4.0),
        Just(f64::MAX),
        Just(-0.0),
        any::<f64>(),
        (0u64..1_000_000_000).prop_map(|v| v as f64),
    ]
}

#[derive(Debug, Clone)]
struct SampleSpec {
    name: String,
    labels: Vec<(String, String)>,
    value: f64,
    timestamp_ms: Option<i64>,
}

fn sample_spec() -> impl Strategy<Value = SampleSpec> {
    (
        metric_name(),
        prop::collection::btree_map(label_name(), label_value(), 0..6),
        value(),
        prop::option::of(any::<i64>()),
    )
        .prop_map(|(name, labels, value, timestamp_ms)| SampleSpec {
            name,
            labels: labels.into_iter().collect(),
            value,
            timestamp_ms,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn write_then_parse_is_identity(samples in prop::collection::vec(sample_spec(), 1..8), help in label_value()) {
        let mut page = String::new();
        write::help(&mut page, &samples[0].name, &help).unwrap();
        write::metric_type(&mut page, &samples[0].name, promrate::MetricType::Gauge).unwrap();
        for s in &samples {
            write::sample(&mut page, &s.name, &s.labels, s.value, s.timestamp_ms).unwrap();
        }
        let mut parsed = Vec::new();
        for entry in promrate::parse(&page) {
            let entry = entry.map_err(|e| TestCaseError::fail(format!("{e}\n{page}")))?;
            match entry {
                // The 0.0.4 format cannot carry leading blanks of a help text.
                promrate::Entry::Help { text, .. } => {
                    prop_assert_eq!(text.unescaped(), help.trim_start_matches([' ', '\t']))
                }
                promrate::Entry::Sample(s) => parsed.push(s),
                _ => {}
            }
        }
        prop_assert_eq!(parsed.len(), samples.len());
        for (got, want) in parsed.iter().zip(&samples) {
            prop_assert_eq!(got.name(), want.name.as_str());
            let labels: Vec<(String, String)> =
                got.labels().iter().map(|(k, v)| (k.to_string(), v.unescaped().into_owned())).collect();
            prop_assert_eq!(&labels, &want.labels);
            for (k, v) in &want.labels {
                prop_assert!(got.labels().get(k).unwrap() == v.as_str());
            }
            prop_assert!(got.value().to_bits() == want.value.to_bits() || got.value().is_nan() && want.value.is_nan());
            prop_assert_eq!(got.timestamp_ms(), want.timestamp_ms);
        }
    }

    /// `Display` of a sample (and of an entry, and of the owned copy) is a line that parses
    /// back to the same sample: names quoted where they must be, values escaped.
    #[test]
    fn display_then_parse_is_identity(samples in prop::collection::vec(sample_spec(), 1..6)) {
        let mut page = String::new();
        for s in &samples {
            write::sample(&mut page, &s.name, &s.labels, s.value, s.timestamp_ms).unwrap();
        }
        for entry in promrate::parse(&page) {
            let entry = entry.map_err(|e| TestCaseError::fail(format!("{e}\n{page}")))?;
            let sample = *entry.as_sample().unwrap();
            let line = sample.to_string();
            prop_assert_eq!(&entry.to_string(), &line);
            prop_assert_eq!(&sample.to_owned().to_string(), &line);
            let again = promrate::parse(&line).next().unwrap()
                .map_err(|e| TestCaseError::fail(format!("{e}: {line}")))?.into_sample().unwrap();
            prop_assert_eq!(again.name(), sample.name());
            let pairs = |s: &promrate::Sample<'_>| -> Vec<(String, String)> {
                s.labels().iter().map(|(k, v)| (k.to_string(), v.unescaped().into_owned())).collect()
            };
            prop_assert_eq!(pairs(&again), pairs(&sample));
            prop_assert!(again.value().to_bits() == sample.value().to_bits() || again.value().is_nan() && sample.value().is_nan());
            prop_assert_eq!(again.timestamp_ms(), sample.timestamp_ms());
        }
    }

    #[test]
    fn arbitrary_text_never_panics_and_errors_point_inside(text in "(\\PC|[\n\t \"\\\\{}=,#])*", om in any::<bool>()) {
        check_positions(&text, om)?;
    }

    #[test]
    fn near_valid_text_never_panics(lines in prop::collection::vec(
        "(# (HELP|TYPE|UNIT|EOF) ?)?[a-z_:]{0,4}(\\{([a-z\"]{0,3}=?\"[^\n]{0,4}\"?,?){0,3}\\}?)? ?[-+0-9.eInfNa]{0,5}( [0-9.]{0,4})?( # \\{[^\n]{0,6}\\} [0-9]{0,2})?",
        0..12,
    ), om in any::<bool>()) {
        check_positions(&lines.join("\n"), om)?;
    }
}

fn check_positions(text: &str, om: bool) -> Result<(), TestCaseError> {
    let format = if om {
        Format::OpenMetrics
    } else {
        Format::PrometheusText
    };
    let lines: Vec<&str> = text.split('\n').collect();
    for entry in Parser::new(format).parse(text) {
        if let Err(e) = entry {
            prop_assert!(e.line >= 1 && e.line <= lines.len().max(1), "{e} in {text:?}");
            let width = lines.get(e.line - 1).map_or(0, |l| l.chars().count());
            prop_assert!(e.column >= 1 && e.column <= width + 1, "{e} in {text:?}");
            prop_assert!(!e.to_string().is_empty());
        }
    }
    Ok(())
}
