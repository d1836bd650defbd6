use super::*;

#[test]
fn lists_are_found_as_third_field_or_after_native_fields() {
    fn read(text: &str) -> CompositeValue<'_> {
        composite(text, 0).expect("valid").0
    }
    let classic = read("{count:3,sum:2,bucket:[1:2,+Inf:3]}");
    let native = read(
        "{count:3,sum:2,schema:0,zero_threshold:0,zero_count:0,positive_spans:[0:1],positive_buckets:[3],bucket:[1:2,+Inf:3]}",
    );
    let gauge = read("{gcount:3,gsum:2,bucket:[1:2,+Inf:3]}");
    for value in [classic, native, gauge] {
        let buckets: Vec<(f64, f64)> = value.buckets().expect("buckets").collect();
        assert_eq!(buckets, [(1.0, 2.0), (f64::INFINITY, 3.0)], "{value:?}");
        assert_eq!((value.count(), value.sum()), (3.0, 2.0), "{value:?}");
        assert!(value.quantiles().is_none());
    }
    let summary = read("{count:3,sum:2.5,quantile:[0.5:1,0.9:2]}");
    assert!(summary.sum() == 2.5 && summary.buckets().is_none());
    assert_eq!(summary.quantiles().expect("quantiles").count(), 2);
    let native_only = read("{count:0,sum:0,schema:3,zero_threshold:1e-4,zero_count:0}");
    assert!(native_only.buckets().is_none() && native_only.quantiles().is_none());
}

/// The first error an OpenMetrics 2.0 page gives: its line, column and kind.
fn first_error(page: &str) -> (usize, usize, crate::error::ParseErrorKind) {
    let err = crate::Parser::new(crate::Format::OpenMetrics2)
        .parse(page)
        .find_map(Result::err)
        .unwrap();
    (err.line, err.column, err.kind)
}

/// An error inside a list points at the item that breaks the rule (its value, when the
/// value does), not at the list's `[`.
#[test]
fn errors_in_lists_point_at_their_item() {
    use crate::error::ParseErrorKind;
    let cases = [
        ("# TYPE h histogram\nh {count:1,sum:1,bucket:[0.1:0,0.2:x,+Inf:1]}\n# EOF\n", 36, CompositeRule::Expected("a number")),
        ("# TYPE h histogram\nh {count:2,sum:1,bucket:[0.1:2,0.2:1,+Inf:2]}\n# EOF\n", 36, CompositeRule::BucketValuesDecrease),
        ("# TYPE h histogram\nh {count:2,sum:1,bucket:[0.1:2,0.1:2,+Inf:2]}\n# EOF\n", 32, CompositeRule::BucketsOutOfOrder),
        ("# TYPE s summary\ns {count:1,sum:1,quantile:[0.1:0,1.5:1]}\n# EOF\n", 34, CompositeRule::QuantileOutOfRange),
        ("# TYPE h histogram\nh {count:1,sum:1,schema:0,zero_threshold:0,zero_count:0,positive_spans:[0:2],positive_buckets:[1,-1]}\n# EOF\n", 98, CompositeRule::NegativeCount),
        // Buckets before their spans: the order, at the first list out of it (it was told
        // as a count that does not match buckets never read).
        ("# TYPE h histogram\nh {count:2,sum:1,schema:0,zero_threshold:0,zero_count:0,positive_buckets:[1,1],positive_spans:[0:2]}\n# EOF\n", 57, CompositeRule::Expected("the native lists in order: negative_spans, negative_buckets, positive_spans, positive_buckets")),
        ("# TYPE h histogram\nh {count:2,sum:1,schema:0,zero_threshold:0,zero_count:0,positive_spans:[0:2],positive_buckets:[1,1],negative_spans:[0:1],negative_buckets:[1]}\n# EOF\n", 101, CompositeRule::Expected("the native lists in order: negative_spans, negative_buckets, positive_spans, positive_buckets")),
    ];
    for (page, column, rule) in cases {
        assert_eq!(
            first_error(page),
            (2, column, ParseErrorKind::Composite(rule)),
            "{page}"
        );
    }
}

/// A space inside a composite value is refused where it stands (it pointed at the `{`);
/// a value never closed, at its `{`.
#[test]
fn a_space_inside_a_value_is_refused_where_it_stands() {
    use crate::error::ParseErrorKind;
    let unclosed = ParseErrorKind::Expected("'}' to close the composite value");
    assert_eq!(
        first_error("# TYPE h histogram\nh {count:1, sum:1,bucket:[+Inf:1]}\n# EOF\n"),
        (2, 12, unclosed.clone())
    );
    assert_eq!(
        first_error("# TYPE h histogram\nh {count:1,sum:1,bucket:[+Inf:1]\n# EOF\n"),
        (2, 3, unclosed)
    );
}

/// Text after a list that is no field (found by `cargo fuzz`: `],1,1]` after the
/// buckets) is refused where it starts, not read as the value's end; before, the value
/// was accepted and its buckets read short.
#[test]
fn text_after_a_list_that_is_no_field_is_refused() {
    // Each at the first byte of the text that is no field, as a field with a key is
    // refused at its key.
    for (text, at) in [
        ("{count:144,sum:53.4,bucket:[0.1:24,+Inf:144],1,1]}", 45),
        ("{count:1,sum:1,quantile:[0.5:1],x}", 32),
        ("{count:1,sum:1,bucket:[+Inf:1],x:1}", 31),
        ("{count:1,sum:1,bucket:[+Inf:1],}", 31),
        // No key at all, from the first byte (found by `cargo fuzz` too: the offset
        // of a field's start was its value's less a key and a colon, below zero).
        ("{entity}", 1),
        ("{count:1,sum}", 9),
    ] {
        match composite(text, 0) {
            Err((offset, ParseErrorKind::Composite(_))) => assert_eq!(offset, at, "{text}"),
            other => panic!("{text}: {other:?}"),
        }
    }
    let page = "# TYPE d histogram\nd {count:144,sum:53.4,bucket:[0.1:24,+Inf:144],1,1]}\n# EOF\n";
    let first = crate::Parser::new(crate::Format::OpenMetrics2).parse(page).nth(1);
    let error = first.expect("an entry").expect_err("refused");
    assert_eq!((error.line, error.column), (2, 48), "{error}");
}

/// A value of `parts` joined as written, `{` at 0.
fn value(count: &str, sum: &str, list: &str, parts: &[(&str, &str)], tail: &str) -> String {
    let items: Vec<String> = parts.iter().map(|(a, b)| format!("{a}:{b}")).collect();
    format!("{{count:{count},sum:{sum},{list}:[{}]}}{tail}", items.join(","))
}

#[test]
fn the_usual_values_are_read_in_one_pass() {
    let histogram = value(
        "17",
        "324789.3",
        "bucket",
        &[("0.1", "8"), ("1", "11"), ("+Inf", "17")],
        " 1",
    );
    assert_eq!(usual(histogram.as_bytes(), 0), Some(histogram.len() - 3));
    let summary = value("3", "2.5", "quantile", &[("0.5", "1"), ("0.99", "2")], "");
    assert_eq!(usual(summary.as_bytes(), 0), Some(summary.len() - 1));
    // Anything else is left to the reading field by field.
    for other in [
        value("17", "1", "bucket", &[("0.1", "8"), ("+Inf", "16")], ""),
        value(
            "17",
            "1",
            "bucket",
            &[("1", "8"), ("0.1", "9"), ("+Inf", "17")],
            "",
        ),
        value("2", "NaN", "bucket", &[("+Inf", "2")], ""),
        value("2.5", "1", "quantile", &[("0.5", "1")], ""),
        "{gcount:1,gsum:2,bucket:[+Inf:1]}".to_string(),
        "{count:0,sum:0,schema:3,zero_threshold:1e-4,zero_count:0}".to_string(),
    ] {
        assert_eq!(usual(other.as_bytes(), 0), None, "{other}");
    }
}

/// The list a value has: its buckets, or a summary's quantiles.
fn list_name(value: &CompositeValue<'_>) -> &'static str {
    if value.kind() == CompositeKind::Summary {
        "quantile"
    } else {
        "bucket"
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]

    /// A value the one pass reads is one the reading field by field accepts, ending at
    /// the same `}`; values it leaves are read field by field (so every error and its
    /// offset is as before).
    #[test]
    fn the_usual_values_read_as_the_general_reading_does(
        count in proptest::sample::select(vec!["0", "3", "17", "17.0", "-1", "2.5", "1e3", "NaN", "+Inf", "x"]),
        sum in proptest::sample::select(vec!["0", "2.5", "-1", "1e-4", "NaN", ""]),
        list in proptest::sample::select(vec!["bucket", "bucket", "quantile", "schema"]),
        // Mostly in order (bounds and counts up, as exporters write them), sometimes
        // not, and sometimes a word or nothing where a number goes.
        parts in proptest::collection::vec((
            proptest::sample::select(vec!["-Inf", "+Inf", "0", "0.1", "0.5", "1", "1.", ".5", "2", "1e1", "-1", "NaN", "Inf", "", "24.999999999999996", "0.0009175039999999999", "1e99999"]),
            proptest::sample::select(vec!["0", "1", "2", "3", "17", "17.0", "-1", "1.5", "NaN", "+Inf", "", "4.4046288803e+10", "12345678901234567890"]),
        ), 0..6),
        sorted in proptest::bool::weighted(0.7),
        ends_at_inf in proptest::bool::weighted(0.7),
        tail in proptest::sample::select(vec!["", " 1", ",", "x", " st@1"]),
    ) {
        let mut parts = parts;
        if sorted {
            let key = |t: &str| t.parse::<f64>().ok().filter(|v| !v.is_nan()).map_or(f64::MAX, |v| v);
            parts.sort_by(|a, b| key(a.0).total_cmp(&key(b.0)));
            let mut counts: Vec<&str> = parts.iter().map(|p| p.1).collect();
            counts.sort_by(|a, b| key(a).total_cmp(&key(b)));
            for (part, count) in parts.iter_mut().zip(counts) {
                part.1 = count;
            }
        }
        if ends_at_inf && list == "bucket" {
            parts.retain(|p| p.0 != "+Inf");
            parts.push(("+Inf", count));
        }
        let parts: Vec<(&str, &str)> = parts.iter().map(|&(a, b)| (a, b)).collect();
        let text = value(count, sum, list, &parts, tail);
        let line = format!("x {text}");
        if let Some(close) = usual(line.as_bytes(), 2) {
            let general = read_in_full(&line, 2);
            proptest::prop_assert!(general.is_ok(), "{line}: {general:?}");
            let (read, end) = general.unwrap();
            proptest::prop_assert_eq!(end, close + 1);
            proptest::prop_assert_eq!(read.as_raw(), &line[3..close]);
        }
        // Either way, the reading is the general one's.
        let (fast, general) = (composite(&line, 2), read_in_full(&line, 2));
        proptest::prop_assert_eq!(format!("{fast:?}"), format!("{general:?}"));
        // And a value accepted reads back as its fields, split and parsed one by one.
        if let Ok((read, _)) = general {
            let field = |n: usize| read.fields().nth(n).and_then(|(_, v, _)| parse_float(v));
            let same = |a: f64, b: Option<f64>| a.to_bits() == b.unwrap_or(f64::NAN).to_bits();
            proptest::prop_assert!(same(read.count(), field(0)), "{line}: count");
            proptest::prop_assert!(same(read.sum(), field(1)), "{line}: sum");
            let list = read.buckets().or_else(|| read.quantiles());
            // Compared as bits: a quantile's value may be NaN.
            let bits = |v: Option<f64>| v.map(f64::to_bits);
            let split = read.field(list_name(&read)).map(|l| {
                CompositePairs::new(l).texts().map(|(a, b)| (bits(parse_float(a)), bits(parse_float(b))))
            });
            let pairs: Option<Vec<(Option<u64>, Option<u64>)>> =
                list.map(|l| l.map(|(a, b)| (Some(a.to_bits()), Some(b.to_bits()))).collect());
            let mut split: Option<Vec<(Option<u64>, Option<u64>)>> = split.map(|s| s.collect());
            // The split reading stops at the first pair that is not two numbers.
            if let Some(split) = &mut split {
                if let Some(stop) = split.iter().position(|(a, b)| a.is_none() || b.is_none()) {
                    split.truncate(stop);
                }
            }
            proptest::prop_assert_eq!(pairs, split, "{}: pairs", line);
        }
    }
}
