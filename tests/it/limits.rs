//! Defaults accept what Prometheus accepts; limits are opt-in, named as Prometheus names
//! them, and each refuses with its own typed error at the right place.

use promrate::{error::ParseErrorKind, Format, Parser};

/// A valid sample with a 1 MiB label value (all four reference parsers accept it).
#[test]
fn a_mebibyte_label_value_parses_with_defaults() {
    for (escape, unescaped_len) in [("x", 1 << 20), ("\\\\", 1 << 19)] {
        let value = escape.repeat((1 << 20) / escape.len());
        let page = format!("# TYPE big gauge\nbig{{a=\"b\",long=\"{value}\"}} 7 1700000000000\nsmall 1\n");
        for format in [Format::PrometheusText, Format::OpenMetrics] {
            let page = if format == Format::OpenMetrics {
                format!("{}# EOF\n", page.replace(" 1700000000000", " 1700000000"))
            } else {
                page.clone()
            };
            let samples: Vec<_> = Parser::new(format)
                .parse(&page)
                .map(|e| e.unwrap_or_else(|e| panic!("{format:?}: {e}")))
                .filter_map(|e| e.into_sample())
                .collect();
            assert_eq!(samples.len(), 2, "{format:?}");
            let long = samples[0].labels().get("long").unwrap();
            assert_eq!(long.unescaped().len(), unescaped_len);
            assert_eq!(samples[0].value(), 7.0);
        }
    }
}

#[test]
fn hundreds_of_labels_parse_with_defaults() {
    let labels: Vec<String> = (0..1000).map(|i| format!("l{i}=\"{i}\"")).collect();
    let page = format!("many{{{}}} 1\n", labels.join(","));
    let sample = promrate::parse(&page)
        .next()
        .unwrap()
        .unwrap()
        .into_sample()
        .unwrap();
    assert_eq!(sample.labels().len(), 1000);
    assert!(sample.labels().get("l999").unwrap() == "999");
}

/// Each limit: its typed error, the value it saw, and where; lines within it still parse.
#[test]
fn every_limit_refuses_with_its_own_error() {
    let page = "ok{a=\"1\"} 1\nlong_name{abcdefgh=\"1\"} 2\nlong_value{a=\"123456789\"} 3\nmany{a=\"1\",b=\"2\",c=\"3\"} 4\n";
    let first_error = |parser: Parser| {
        let entries: Vec<_> = parser.parse(page).collect();
        assert!(entries[0].is_ok(), "the first line is within every limit");
        entries.into_iter().find_map(Result::err).expect("an error")
    };
    let e = first_error(Parser::default().label_name_length_limit(4));
    assert_eq!(
        e.kind,
        ParseErrorKind::LabelNameLengthLimit { limit: 4, length: 8 }
    );
    assert_eq!((e.line, e.column), (2, 11));
    let e = first_error(Parser::default().label_value_length_limit(5));
    assert_eq!(
        e.kind,
        ParseErrorKind::LabelValueLengthLimit { limit: 5, length: 9 }
    );
    assert_eq!((e.line, e.column), (3, 15));
    let e = first_error(Parser::default().label_limit(2));
    assert_eq!(e.kind, ParseErrorKind::LabelLimit { limit: 2, labels: 3 });
    assert_eq!((e.line, e.column), (4, 18));
    let e = first_error(Parser::default().max_line_len(20));
    assert!(
        matches!(
            e.kind,
            ParseErrorKind::LineTooLong {
                limit: 20,
                length: 25
            }
        ),
        "{e}"
    );
    // The sample limit ends the page at the first sample over it.
    let entries: Vec<_> = Parser::default().sample_limit(2).parse(page).collect();
    assert_eq!(entries.len(), 3);
    let e = entries[2].as_ref().unwrap_err();
    assert_eq!(
        (e.line, &e.kind),
        (3, &ParseErrorKind::SampleLimit { limit: 2, samples: 4 })
    );
    // A sample held back while the error about the family it closes is reported first
    // (OpenMetrics) counts against the limit too.
    let family_error = "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_count 1\nh_sum 1\nx 1\n# EOF\n";
    let limited = |limit| -> Vec<_> {
        Parser::new(Format::OpenMetrics)
            .sample_limit(limit)
            .parse(family_error)
            .collect()
    };
    let over = limited(3);
    let held_back = over
        .iter()
        .filter(|e| matches!(e, Ok(promrate::Entry::Sample(_))))
        .count();
    assert_eq!(held_back, 3, "{over:?}");
    assert!(
        over.iter()
            .any(|e| matches!(e, Err(e) if e.kind == ParseErrorKind::SampleLimit { limit: 3, samples: 4 })),
        "{over:?}"
    );
    let within = limited(4);
    assert_eq!(
        within
            .iter()
            .filter(|e| matches!(e, Ok(promrate::Entry::Sample(_))))
            .count(),
        4
    );
    assert!(!within
        .iter()
        .any(|e| matches!(e, Err(e) if matches!(e.kind, ParseErrorKind::SampleLimit { .. }))));
    // The body size limit refuses the whole page before reading it.
    let entries: Vec<_> = Parser::default()
        .body_size_limit(page.len() - 1)
        .parse(page)
        .collect();
    assert_eq!(entries.len(), 1);
    let size = page.len();
    assert_eq!(
        entries[0].as_ref().unwrap_err().kind,
        ParseErrorKind::BodySizeLimit {
            limit: size - 1,
            size
        }
    );
    assert_eq!(Parser::default().body_size_limit(size).parse(page).count(), 4);
    // Error messages name the Prometheus limit.
    let message = first_error(Parser::default().label_limit(2)).to_string();
    assert_eq!(message, "line 4, column 18: 3 labels, over the label_limit of 2");
}
