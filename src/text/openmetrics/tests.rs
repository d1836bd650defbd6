use crate::{error::FamilyRule, error::ParseErrorKind, Format, Parser};

fn errors(text: &str) -> Vec<(usize, ParseErrorKind)> {
    Parser::new(Format::OpenMetrics)
        .parse(text)
        .filter_map(Result::err)
        .map(|e| (e.line, e.kind))
        .collect()
}

fn family(name: &str, rule: FamilyRule) -> ParseErrorKind {
    ParseErrorKind::Family {
        family: name.to_string(),
        rule,
    }
}

#[test]
fn a_family_error_does_not_lose_the_line_that_revealed_it() {
    // The histogram's error shows at the TYPE line that closes it; that TYPE still
    // applies, so `b_total` is read as b's counter sample and nothing else is wrong.
    let text = "# TYPE a histogram\na_bucket{le=\"1\"} 1\n# TYPE b counter\nb_total 1\n# EOF\n";
    assert_eq!(errors(text), [(3, family("a", FamilyRule::InfBucketMissing))]);
    let samples = Parser::new(Format::OpenMetrics)
        .parse(text)
        .filter_map(|e| e.ok()?.into_sample())
        .count();
    assert_eq!(samples, 2, "both samples are yielded");
}

/// A bad closing line reports its own error and then the family's; at the end of the
/// page, the last family's error comes before the missing `# EOF`.
#[test]
fn errors_in_order_when_a_family_closes() {
    let cases: [(&str, [(usize, ParseErrorKind); 2]); 2] = [
        (
            "# TYPE a histogram\na_bucket{le=\"1\"} 1\nc 1 # {x=\"y\"} 1\n# EOF\n",
            [
                (3, family("c", FamilyRule::ExemplarNotAllowed)),
                (3, family("a", FamilyRule::InfBucketMissing)),
            ],
        ),
        (
            "# TYPE a histogram\na_bucket{le=\"1\"} 1",
            [
                (2, family("a", FamilyRule::InfBucketMissing)),
                (2, ParseErrorKind::MissingEof),
            ],
        ),
    ];
    for (text, want) in cases {
        assert_eq!(errors(text), want, "{text:?}");
    }
}

/// A name the fast path reads as a repeat of its last sample's is still that family's
/// only if no other line opened another family since (here the general path's `b`,
/// whose `st@` the fast path leaves to it).
#[test]
fn a_repeated_name_after_another_family_opens_a_family_again() {
    let errors = |text: &str| -> Vec<(usize, ParseErrorKind)> {
        Parser::new(Format::OpenMetrics2)
            .parse(text)
            .filter_map(Result::err)
            .map(|e| (e.line, e.kind))
            .collect()
    };
    let text = "a 1 1\na 2 2\nb 1 st@0.5\na 3 3\n# EOF\n";
    // Refused where it opens again, not where it closes; in 1.0, where its type names a
    // sample an earlier family took.
    assert_eq!(errors(text), [(4, family("a", FamilyRule::NameClash))]);
    // In 1.0 too, by metadata or by a sample, by an earlier family's sample name, and
    // by a name only the family's type gives it.
    let om1 = |text: &str| -> Vec<(usize, ParseErrorKind)> {
        Parser::new(Format::OpenMetrics)
            .parse(text)
            .filter_map(Result::err)
            .map(|e| (e.line, e.kind))
            .collect()
    };
    assert_eq!(
        om1("b 1\na 1\nb 2\n# EOF\n"),
        [(3, family("b", FamilyRule::NameClash))]
    );
    assert_eq!(
        om1("# TYPE b gauge\nb 1\na 1\n# TYPE b gauge\nb 2\n# EOF\n"),
        [(4, family("b", FamilyRule::NameClash))]
    );
    assert_eq!(
        om1("# TYPE a counter\na_total 1\n# TYPE a_total gauge\na_total 2\n# EOF\n"),
        [(3, family("a_total", FamilyRule::NameClash))]
    );
    assert_eq!(
        om1("# TYPE a_total gauge\na_total 2\n# TYPE a counter\na_total 1\n# EOF\n"),
        [(3, family("a", FamilyRule::NameClash))]
    );
    // Once told, the family's close does not tell it again; a family of names of its
    // own after it is fine.
    assert_eq!(
        om1("# TYPE a_created gauge\na_created 2\n# HELP a x\n# TYPE a counter\na_total 1\n# TYPE b gauge\nb 1\n# EOF\n"),
        [(4, family("a", FamilyRule::NameClash))]
    );
    assert_eq!(errors("a 1 1\na 2 2\nb 1 1 st@0.5\nb 2 2\n# EOF\n"), []);
    // A unit on an info family is refused at the line that makes the pair.
    for text in [
        "# TYPE a_info info\n# UNIT a_info x\na_info 1\n# EOF\n",
        "# UNIT a_info x\n# TYPE a_info info\na_info 1\n# EOF\n",
    ] {
        assert_eq!(
            errors(text),
            [(2, family("a_info", FamilyRule::UnitNotAllowed))],
            "{text}"
        );
    }
    // An info family's name without `_info` is refused at its `# TYPE` line, once
    // (it was refused where the family closed).
    assert_eq!(
        errors("# TYPE \"a.info\" info\n{\"a.info\"} 1\n# EOF\n"),
        [(1, family("a.info", FamilyRule::InfoNameLacksSuffix))]
    );
    // A sample name spelled otherwise than its family, with a suffix (found by
    // `cargo fuzz`: the suffix was cut at the family's text length, inside the name).
    assert_eq!(om1("# TYPE \"a\\q\" counter\n{\"a\\\\q_total\"} 1\n# EOF\n"), []);
    assert_eq!(
        om1("# TYPE \"a\\q\" counter\n{\"a\\\\q_total\"} -1\n# EOF\n"),
        [(2, family("a\\q", FamilyRule::NegativeCounterValue))]
    );
    // A summary named as a suffix ends (`_count`): its quantile, spelled either way, is
    // the family's own name, not a count (a review found the other spelling read as one).
    let page =
        |sample: &str| format!("# TYPE \"s\\q_count\" summary\n{{{sample},quantile=\"0.5\"}} 1.5\n# EOF\n");
    assert_eq!(om1(&page("\"s\\q_count\"")), []);
    assert_eq!(om1(&page("\"s\\\\q_count\"")), []);
    // Without timestamps, a metric's second sample is refused where it stands.
    assert_eq!(
        errors("a 1\na 2\n# EOF\n"),
        [(2, family("a", FamilyRule::RepeatedWithoutTimestamps))]
    );
}

#[test]
fn rules_table() {
    let cases: &[(&str, &str, FamilyRule)] = &[
        (
            "# TYPE a counter\na_total -1\n# EOF\n",
            "a",
            FamilyRule::NegativeCounterValue,
        ),
        (
            "# TYPE a gauge\na 1\n# HELP a x\n# EOF\n",
            "a",
            FamilyRule::MetadataAfterSamples,
        ),
        (
            "a{x=\"1\"} 1\na{x=\"2\"} 1\na{x=\"1\"} 1\n# EOF\n",
            "a",
            FamilyRule::GroupSplit,
        ),
        (
            "# TYPE a stateset\na{a=\"x\"} 2\n# EOF\n",
            "a",
            FamilyRule::StateSetValueNotBoolean,
        ),
        (
            "# TYPE a summary\na{quantile=\"2\"} 1\n# EOF\n",
            "a",
            FamilyRule::InvalidQuantileLabel,
        ),
        (
            "# TYPE a gauge\na 1 2\na 1 1\n# EOF\n",
            "a",
            FamilyRule::TimestampsBackwards,
        ),
        (
            "# UNIT a_s s\n# TYPE a_s info\n# EOF\n",
            "a_s",
            FamilyRule::UnitNotAllowed,
        ),
    ];
    for (text, name, rule) in cases {
        let got = errors(text);
        assert_eq!(
            got.first().map(|e| &e.1),
            Some(&family(name, *rule)),
            "{text:?}: {got:?}"
        );
    }
}

/// Times are decimal seconds: two in one millisecond are still in an order, as the
/// reference parser (prometheus_client) compares them, to the nanosecond (promrate to a
/// double's precision: about a quarter of a microsecond at today's times). Found by a
/// differential run against it on the official suite's `duplicate_timestamps_0` with two
/// lines swapped.
#[test]
fn timestamps_within_one_millisecond_keep_their_order() {
    for format in [Format::OpenMetrics, Format::OpenMetrics2] {
        let errors = |text: &str| -> Vec<ParseErrorKind> {
            Parser::new(format)
                .parse(text)
                .filter_map(Result::err)
                .map(|e| e.kind)
                .collect()
        };
        for backwards in [
            "a 3 0.0000000010\na 2 0.0000000001\n# EOF\n",
            "a 1 1700000000.0015\na 2 1700000000.001\n# EOF\n",
            "a 1 1700000000.001\na 2 1700000000.000995\n# EOF\n",
            "a 1 -0.0001\na 2 -0.0002\n# EOF\n",
            "a 1 1e-6\na 2 0\n# EOF\n",
        ] {
            assert_eq!(
                errors(backwards),
                [family("a", FamilyRule::TimestampsBackwards)],
                "{format:?} {backwards:?}"
            );
        }
        for in_order in [
            // Below the nanosecond, as the reference reads them: the same time.
            "a 1 0.0000000001\na 2 0.0000000000\n# EOF\n",
            "a 1 0.0000000000\na 2 0.0000000001\na 3 0.0000000010\n# EOF\n",
            "a 1 1700000000.001\na 2 1700000000.0015\na 3 1700000000.002\n# EOF\n",
            "a 1 1700000000\na 2 1700000000.0000001\n# EOF\n",
        ] {
            assert_eq!(errors(in_order), [], "{format:?} {in_order:?}");
        }
    }
}
