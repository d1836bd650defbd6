//! Sample lines: shapes, errors, OpenMetrics tails, and the fast path against the general one.

use super::*;

const TEXT: Dialect = Dialect {
    openmetrics: false,
    version2: false,
    strict_escapes: true,
};
const LIMITS: Limits = Limits {
    labels: 8,
    line_length: 100,
    ..Limits::NONE
};
const OM: Dialect = Dialect {
    openmetrics: true,
    version2: false,
    strict_escapes: false,
};

fn ok(line: &str) -> Sample<'_> {
    sample(line, TEXT, &Limits::NONE).unwrap_or_else(|e| panic!("{line:?}: {e:?}"))
}

#[test]
fn sample_shapes() {
    let s = ok("a 1");
    assert_eq!((s.name(), s.value(), s.labels().len()), ("a", 1.0, 0));
    let s = ok("  vllm:x{model_name=\"m/a:b\" , engine=\"0\",} 2.5e3 17  ");
    assert_eq!(s.name(), "vllm:x");
    assert_eq!(s.labels().len(), 2);
    assert_eq!(s.timestamp_ms(), Some(17));
    assert!(s.labels().get("engine").unwrap() == "0");
    let s = ok("{\"my.metric\", \"label.x\"=\"v\"} 3");
    assert_eq!(s.name(), "my.metric");
    assert!(s.labels().get("label.x").unwrap() == "v");
    let s = ok("a{b=\"x,y}z=\\\"\"} NaN");
    assert!(s.value().is_nan());
    assert!(s.labels().get("b").unwrap() == "x,y}z=\"");
    let s = ok("a\t{}\t+Inf\t-5");
    assert_eq!((s.value(), s.timestamp_ms()), (f64::INFINITY, Some(-5)));
}

#[test]
fn sample_errors() {
    let cases: &[(&str, usize, ParseErrorKind)] = &[
        ("a{b\"c\"} 1", 3, ParseErrorKind::Expected("'=' after label name")),
        (
            "a{b=\"c\",b=\"d\"} 1",
            8,
            ParseErrorKind::DuplicateLabel("b".into()),
        ),
        ("a{b=\"c} 1", 4, ParseErrorKind::UnterminatedString),
        ("a{b=\"\\q\"} 1", 5, ParseErrorKind::InvalidEscape('q')),
        ("a 1x", 2, ParseErrorKind::InvalidValue("1x".into())),
        ("a 1 2.5", 4, ParseErrorKind::InvalidTimestamp("2.5".into())),
        ("a 1 2 3", 6, ParseErrorKind::TrailingText("the timestamp")),
        ("a", 1, ParseErrorKind::Expected("a sample value")),
        ("a.b 1", 1, ParseErrorKind::InvalidMetricName),
        ("{b=\"c\"} 1", 0, ParseErrorKind::InvalidMetricName),
        // A `__name__` label beside a metric name repeats it (Prometheus' scrape refuses the
        // pair); without a name, the name is what is missing.
        (
            "a{__name__=\"b\"} 1",
            2,
            ParseErrorKind::DuplicateLabel("__name__".into()),
        ),
        (
            "a{x=\"1\",__name__=\"b\"} 1",
            8,
            ParseErrorKind::DuplicateLabel("__name__".into()),
        ),
        (
            "{\"a\",__name__=\"b\"} 1",
            5,
            ParseErrorKind::DuplicateLabel("__name__".into()),
        ),
        (
            "{__name__=\"b\",\"a\"} 1",
            1,
            ParseErrorKind::DuplicateLabel("__name__".into()),
        ),
        (
            "a{\"__name__\"=\"b\"} 1",
            3,
            ParseErrorKind::DuplicateLabel("__name__".into()),
        ),
        ("{__name__=\"b\"} 1", 0, ParseErrorKind::InvalidMetricName),
        (
            "a{b=\"c\" 1",
            8,
            ParseErrorKind::Expected("',' or '}' after a label"),
        ),
        (
            "a{b=c} 1",
            4,
            ParseErrorKind::Expected("'\"' to open the label value"),
        ),
        ("\"a\"{} 1", 0, ParseErrorKind::InvalidMetricName),
    ];
    for (line, at, kind) in cases {
        assert_eq!(
            sample(line, TEXT, &Limits::NONE).unwrap_err(),
            (*at, kind.clone()),
            "{line:?}"
        );
    }
}

/// Text 1.0.0 and OpenMetrics: escapes in quoted names are read (kept raw, resolved on
/// request), a quoted name stands anywhere in the braces once, and `Display` writes the
/// line back.
#[test]
fn escaped_and_placed_quoted_names() {
    let line = r#"{"my\"noncompliant\nmetric\\","label\"name\n"="value"} 1.0"#;
    for dialect in [TEXT, OM] {
        let s = sample(line, dialect, &Limits::NONE).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(s.name_unescaped(), "my\"noncompliant\nmetric\\");
        let (name, value) = s.labels().iter_unescaped().next().unwrap();
        assert_eq!((name.as_ref(), value.raw()), ("label\"name\n", "value"));
        assert_eq!(s.to_string(), line);
        let s = sample(r#"{a="b","x.y",c="d"} 1"#, dialect, &Limits::NONE).unwrap();
        assert_eq!((s.name(), s.labels().len()), ("x.y", 2));
    }
    let cases: &[(&str, usize, ParseErrorKind)] = &[
        (
            r#"{"a","b"} 1"#,
            8,
            ParseErrorKind::Expected("'=' after label name"),
        ),
        (r#"x{"a"} 1"#, 2, ParseErrorKind::Expected("'=' after label name")),
        (r#"{"a\q"} 1"#, 3, ParseErrorKind::InvalidEscape('q')),
        (
            r#"{"a","b\"c"="1","b\"c"="2"} 1"#,
            17,
            ParseErrorKind::DuplicateLabel("b\\\"c".into()),
        ),
    ];
    for (line, at, kind) in cases {
        assert_eq!(
            sample(line, TEXT, &Limits::NONE).unwrap_err(),
            (*at, kind.clone()),
            "{line:?}"
        );
    }
}

#[test]
fn openmetrics_samples() {
    let s = sample("a_total 1 1.5 # {id=\"x\"} 2 3", OM, &Limits::NONE).unwrap();
    assert_eq!(s.timestamp_ms(), Some(1500));
    let ex = s.exemplar().unwrap();
    assert_eq!((ex.value(), ex.timestamp_ms()), (2.0, Some(3000)));
    for bad in [
        "a  1",
        "a 1 ",
        "a{a=\"1\",} 1",
        "a{ a=\"1\"} 1",
        "a 1 # {} 1 ",
        "a 1 #{} 1",
        "a 1# {} 1",
    ] {
        assert!(sample(bad, OM, &Limits::NONE).is_err(), "{bad:?}");
    }
}

#[test]
fn fast_path_takes_the_common_shapes() {
    let (s, len) = sample_fast(
        "a{b=\"c\",d=\"long value, with {braces}\"} 1.5e3 17\nnext",
        &mut RecentNames::default(),
        &LIMITS,
        false,
    )
    .unwrap();
    assert_eq!(
        (s.name(), s.labels().len(), s.value(), s.timestamp_ms(), len),
        ("a", 2, 1500.0, Some(17), 47)
    );
    assert_eq!(
        sample_fast("vllm:x 4", &mut RecentNames::default(), &LIMITS, false).map(|(s, l)| (s.value(), l)),
        Some((4.0, 8))
    );
    for other in [
        "a  1",
        "a{b=\"\\n\"} 1",
        "a 1 \n",
        "a 1\r\n",
        "a{b=\"c\",b=\"d\"} 1",
        " a 1",
        "a{ b=\"c\"} 1",
    ] {
        assert!(
            sample_fast(other, &mut RecentNames::default(), &LIMITS, false).is_none(),
            "{other:?}"
        );
        let mut recent = RecentNames {
            metric: "a",
            ..RecentNames::default()
        };
        recent.remember_label(0, b"b=", 0, 1);
        assert!(
            sample_fast(other, &mut recent, &LIMITS, false).is_none(),
            "{other:?}"
        );
    }
}

#[test]
fn fast_path_quoted_names() {
    fn read(text: &str) -> Option<(Sample<'_>, usize)> {
        sample_fast(text, &mut RecentNames::default(), &LIMITS, false)
    }
    let (s, len) = read("{\"my.metric\",\"label.x\"=\"v\",b=\"w\",} 3 17\nnext").unwrap();
    assert_eq!(
        (s.name(), s.value(), s.timestamp_ms(), len),
        ("my.metric", 3.0, Some(17), 39)
    );
    let pairs: Vec<_> = s.labels().iter().map(|(n, v)| (n, v.raw())).collect();
    assert_eq!(pairs, [("label.x", "v"), ("b", "w")]);
    assert_eq!(s.identity, "{\"my.metric\",\"label.x\"=\"v\",b=\"w\",}");
    assert_eq!(
        read("{\"a.b\"} 1\n# a comment").map(|(s, _)| (s.name(), s.labels().len())),
        Some(("a.b", 0))
    );
    for other in [
        "{\"a\\\"b\"} 1",
        "{\"a\",\"b\\nc\"=\"d\"} 1",
        "{\"a\",b=\"c\\\\\"} 1",
        "{\"\"} 1",
        "{\"a\", b=\"c\"} 1",
        "{\"a\",b=\"c\",\"b\"=\"d\"} 1",
        "{\"a\",\"\"=\"d\"} 1",
        "{\"a\",\"b\"} 1",
        "{b=\"c\",\"a\"} 1",
        "{\"a\nb\"} 1",
    ] {
        // Followed by more text, so that only the shape can refuse it.
        assert!(read(&format!("{other}\n# more text")).is_none(), "{other:?}");
    }
    // OpenMetrics reads quoted names on the general path.
    assert!(sample_fast("{\"a.b\"} 1", &mut RecentNames::default(), &LIMITS, true).is_none());
}

/// The fast path's sample is the general path's, field by field (the fields a caller reads).
fn same_sample(
    text: &str,
    fast: &Sample<'_>,
    general: &Sample<'_>,
) -> Result<(), proptest::test_runner::TestCaseError> {
    proptest::prop_assert_eq!(fast.name(), general.name(), "{:?}", text);
    proptest::prop_assert_eq!(fast.labels().as_raw(), general.labels().as_raw());
    proptest::prop_assert_eq!(fast.labels().len(), general.labels().len());
    proptest::prop_assert_eq!(fast.value().to_bits(), general.value().to_bits());
    proptest::prop_assert_eq!(fast.timestamp_ms(), general.timestamp_ms());
    proptest::prop_assert_eq!(fast.identity, general.identity);
    proptest::prop_assert_eq!(fast.identity_starts_line, general.identity_starts_line);
    let pairs = |s: &Sample<'_>| -> Vec<(String, String)> {
        s.labels()
            .iter()
            .map(|(n, v)| (n.to_string(), v.raw().to_string()))
            .collect()
    };
    proptest::prop_assert_eq!(pairs(fast), pairs(general));
    Ok(())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]

    /// Text 1.0.0's quoted names: whatever the fast path accepts, the general path parses
    /// to the same sample, in strict and lenient escaping alike.
    #[test]
    fn quoted_fast_path_agrees_with_general_path(
        text in "\\{\"[a-z.:_ \\\\\"\n]{0,5}\"(,(\"[a-z._\\\\\"\n ]{0,4}\"|[a-z_]{1,3})=\"[a-z0-9 ,{}=\\\\\"\t\n]{0,8}\"){0,4},?\\} ?[-+0-9.eE]{0,8}( [-0-9]{0,4})?[ \t\r]?\n?[a-z]{0,3}",
        max_labels in 0usize..5,
        name_limit in 1usize..6,
        value_limit in 0usize..10,
        strict in proptest::bool::ANY,
    ) {
        let limits = Limits {
            labels: max_labels,
            label_name_length: name_limit,
            label_value_length: value_limit,
            line_length: 64,
            ..Limits::NONE
        };
        if let Some((fast, len)) = sample_fast(&text, &mut RecentNames::default(), &limits, false) {
            let dialect = Dialect { strict_escapes: strict, ..TEXT };
            let general = sample(&text[..len], dialect, &limits);
            proptest::prop_assert!(general.is_ok(), "{text:?}: {general:?}");
            same_sample(&text, &fast, &general.unwrap())?;
        }
    }

    /// Whatever the fast path accepts, the general path parses to the same sample.
    #[test]
    fn fast_path_agrees_with_general_path(
        text in "[a-z_:]{1,6}(\\{([a-z_]{1,4}=\"[a-z0-9 ,{}=\\\\\"\t\n]{0,12}\",?){0,4}\\})? ?[-+0-9.eE]{0,8}( [-0-9]{0,4})?[ \t\r]?\n?[a-z]{0,3}",
        max_labels in 0usize..5,
        name_limit in 1usize..6,
        value_limit in 0usize..14,
        previous_len in 0usize..8,
        earlier_labels in proptest::collection::vec("[a-z_]{1,3}", 0..4),
        openmetrics in proptest::bool::ANY,
    ) {
        // Names of the lines before, as the iterator keeps them: valid names, here a
        // prefix of this line and the label names of an earlier line.
        let previous = text.get(..previous_len.min(text.len())).unwrap_or("");
        let earlier: Vec<&str> = earlier_labels.iter().map(String::as_str).collect();
        let mut recent = RecentNames::remembering(previous, &earlier);
        let limits = Limits {
            labels: max_labels,
            label_name_length: name_limit,
            label_value_length: value_limit,
            line_length: 64,
            ..Limits::NONE
        };
        if let Some((fast, len)) = sample_fast(&text, &mut recent, &limits, openmetrics) {
            let dialect = if openmetrics { OM } else { TEXT };
            let general = sample(&text[..len], dialect, &limits);
            proptest::prop_assert!(general.is_ok(), "{text:?}: {general:?}");
            same_sample(&text, &fast, &general.unwrap())?;
        }
    }
}

/// Every format's whole parser (its fast paths first) refuses a `__name__` label beside a
/// metric name where the general path does, and the filter that lets the fast paths see it
/// holds `__name__`'s bit.
#[test]
fn a_name_label_beside_a_name_is_refused_in_every_format() {
    use crate::{Format, Parser};
    let mut seeded = SeenNames::with_metric_name();
    assert!(seeded.insert(b"__name__", 0, 8), "__name__'s bit is set");
    assert!(!SeenNames::default().insert(b"__name__", 0, 8));
    for format in [Format::PrometheusText, Format::OpenMetrics, Format::OpenMetrics2] {
        for (line, column) in [
            ("a{__name__=\"b\"} 1", 3),
            ("a{x=\"1\",y=\"2\",__name__=\"b\"} 1", 15),
            ("{\"a\",__name__=\"b\"} 1", 6),
        ] {
            let page = format!("{line}\n# EOF\n");
            let first = Parser::new(format).parse(&page).next().expect("an entry");
            let error = first.expect_err(line);
            assert_eq!(
                (error.column, error.kind),
                (column, ParseErrorKind::DuplicateLabel("__name__".into())),
                "{format:?} {line}"
            );
        }
        let page = "a{x=\"1\",name=\"b\",__name=\"c\"} 1\n# EOF\n";
        assert!(Parser::new(format).parse(page).all(|e| e.is_ok()), "{format:?}");
    }
}
