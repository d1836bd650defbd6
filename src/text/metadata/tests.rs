//! The metadata line readers: HELP, TYPE and UNIT, fast path and general path alike.

use super::*;

#[test]
fn metadata_lines() {
    assert!(matches!(
        metadata("# TYPE a counter", false),
        Ok(Entry::Type {
            name: "a",
            kind: MetricType::Counter
        })
    ));
    assert!(matches!(
        metadata("#  HELP  a  some text", false),
        Ok(Entry::Help { name: "a", .. })
    ));
    assert!(matches!(
        metadata("# HELP a", false),
        Ok(Entry::Help { name: "a", .. })
    ));
    assert!(matches!(
        metadata("# just words", false),
        Ok(Entry::Comment("just words"))
    ));
    assert!(matches!(
        metadata("#HELP a x", false),
        Ok(Entry::Comment("HELP a x"))
    ));
    assert!(matches!(
        metadata("# TYPE a gaugehistogram", false),
        Err((9, ParseErrorKind::InvalidType(_)))
    ));
    assert!(matches!(
        metadata("# TYPE a", false),
        Err((8, ParseErrorKind::Expected(_)))
    ));
    assert!(matches!(
        metadata("# HELP a x", true),
        Ok(Entry::Help { name: "a", .. })
    ));
    assert!(matches!(
        metadata("# UNIT a_s s", true),
        Ok(Entry::Unit {
            name: "a_s",
            unit: "s"
        })
    ));
    assert!(matches!(metadata("# EOF", true), Ok(Entry::Eof)));
    for bad in [
        "# HELP a",
        "# TYPE a untyped",
        "# TYPE a gauge ",
        "# FOO a x",
        "#a_sum 0",
        "# UNIT a_s s ",
    ] {
        assert!(metadata(bad, true).is_err(), "{bad:?}");
    }
}

#[test]
fn fast_metadata_agrees_with_the_general_path() {
    let lines = [
        "# HELP a Some help.",
        "# HELP a  two blanks\\n and escapes",
        "# HELP a",
        "# HELP a\tab",
        "# HELP vllm:x_total Help text with \"quotes\"",
        "# TYPE a counter",
        "# TYPE a untyped",
        "# TYPE a histogram",
        "# TYPE a summary",
        "# TYPE a gauge",
        "# TYPE a gauge ",
        "# TYPE a  gauge",
        "# TYPE a info",
        "# TYPE a",
        "# HELP 0a x",
        "# HELPa x",
        "# UNIT a s",
        "# TYPE a.b counter",
    ];
    let mut taken = 0;
    for line in lines {
        // At the page's end, before the next line, and before a CRLF's `\n`.
        for (page, ending) in [
            (line.to_string(), ""),
            (format!("{line}\nx 1\n"), "\n"),
            (format!("{line}\r\n"), "\r"),
        ] {
            let Some((fast, len)) = metadata_fast(&page, "", usize::MAX) else {
                continue;
            };
            assert_ne!(ending, "\r", "{page:?}: CRLF lines are the general path's");
            assert_eq!(len, line.len(), "{page:?}");
            if let Entry::Help { name, .. } | Entry::Type { name, .. } = fast {
                let again = metadata_fast(&page, name, usize::MAX).map(|(e, _)| format!("{e:?}"));
                assert_eq!(again, Some(format!("{fast:?}")), "{line:?} after its own name");
            }
            assert!(
                metadata_fast(&page, "", len - 1).is_none(),
                "{line:?} is over a limit of {}",
                len - 1
            );
            taken += 1;
            let general = metadata(line, false).unwrap_or_else(|e| panic!("{line:?}: {e:?}"));
            assert_eq!(format!("{fast:?}"), format!("{general:?}"), "{line:?}");
        }
    }
    assert_eq!(taken, 20, "the fast path takes the common shapes");
}

/// What a metadata fast path took from `page` (if anything) ends its line within
/// `max_line`, and the general path reads the same entry from that line.
fn fast_agrees(
    fast: Option<(Entry<'_>, usize)>,
    page: &str,
    max_line: usize,
    openmetrics: bool,
) -> Result<(), proptest::test_runner::TestCaseError> {
    let Some((fast, len)) = fast else {
        return Ok(());
    };
    proptest::prop_assert!(len <= max_line);
    proptest::prop_assert!(
        matches!(page.as_bytes().get(len), None | Some(b'\n')),
        "{page:?} at {len}"
    );
    let general = metadata(&page[..len], openmetrics);
    proptest::prop_assert!(general.is_ok(), "{page:?}: {general:?}");
    proptest::prop_assert_eq!(format!("{fast:?}"), format!("{:?}", general.unwrap()));
    Ok(())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]

    /// Whatever the metadata fast path takes from a page, the general path reads the
    /// same entry from that line; the line ends where the fast path says.
    #[test]
    fn metadata_fast_path_agrees_with_general_path(
        page in "# (HELP|TYPE|HELPX|UNIT)[ \t]{0,2}[a-z_:]{0,5}[ \t]{0,2}(counter|gauge|untyped|histogram|summary|info|histogrum|histogramx|counte|countery|gaug|untype|summar|[a-z \\\\]{0,6})[ \t]?\r?(\n[a-z#]{0,3})?",
        previous in "[a-z_:]{0,5}",
        max_line in 0usize..40,
    ) {
        fast_agrees(metadata_fast(&page, &previous, max_line), &page, max_line, false)?;
    }

    /// The same for OpenMetrics' fast path: what it takes, the general path reads the
    /// same; and it takes the lines exporters write.
    #[test]
    fn openmetrics_metadata_fast_path_agrees_with_general_path(
        page in "# (HELP|TYPE|HELPX|UNIT|EOF)[ \t]{0,2}[a-z_:\"]{0,5}[ \t]{0,2}(counter|gauge|untyped|unknown|histogram|gaugehistogram|stateset|info|summary|histogrum|counte|[a-z \\\\\"]{0,6})[ \t]?\r?(\n[a-z#]{0,3})?",
        previous in "[a-z_:]{0,5}",
        max_line in 0usize..60,
    ) {
        fast_agrees(metadata_fast_openmetrics(&page, &previous, max_line), &page, max_line, true)?;
    }
}

#[test]
fn openmetrics_metadata_fast_path_takes_what_exporters_write() {
    for line in [
        "# HELP a_total Some text.",
        "# HELP a ",
        "# TYPE a counter",
        "# TYPE a gaugehistogram",
        "# TYPE a unknown",
    ] {
        let page = format!("{line}\na 1\n");
        let (fast, len) =
            metadata_fast_openmetrics(&page, "", usize::MAX).unwrap_or_else(|| panic!("{line:?}"));
        assert_eq!(len, line.len());
        let again = metadata_fast_openmetrics(&page, "a", usize::MAX).map(|(e, _)| format!("{e:?}"));
        assert_eq!(again, Some(format!("{fast:?}")), "{line:?} after the name `a`");
        assert_eq!(
            format!("{fast:?}"),
            format!("{:?}", metadata(line, true).unwrap())
        );
    }
    for line in [
        "# HELP a",
        "# TYPE a untyped",
        "# TYPE a  counter",
        "# UNIT a seconds",
        "# EOF",
        "# TYPE \"a\" gauge",
    ] {
        assert!(
            metadata_fast_openmetrics(line, "a", usize::MAX).is_none(),
            "{line:?}"
        );
    }
}
