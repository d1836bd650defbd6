//! Every real page in the corpus parses without a single error.

use promrate::{Format, Parser};

use crate::data;

/// Pages that are OpenMetrics text go through the OpenMetrics parser.
pub fn format_of(name: &str) -> Format {
    if name.ends_with(".om.txt") || name.contains("openmetrics") {
        Format::OpenMetrics
    } else {
        Format::PrometheusText
    }
}

#[test]
fn real_pages_parse_cleanly() {
    let pages = data::pages();
    for (name, text) in &pages {
        let format = format_of(name);
        // Text pages strictly; OpenMetrics pages line by line (strict family rules are
        // checked against the reference parser below).
        let parser = Parser::new(format).strict(format == Format::PrometheusText);
        let mut samples = 0;
        for entry in parser.parse(text) {
            let entry = entry.unwrap_or_else(|e| panic!("{name}: {e}"));
            if let Some(sample) = entry.as_sample() {
                samples += 1;
                for (label, value) in sample.labels() {
                    assert!(!label.is_empty(), "{name}");
                    assert!(value == *value.unescaped(), "{name}");
                }
            }
        }
        assert!(samples > 0, "{name}: no samples");
    }
    println!("real pages: {} pages parse without an error", pages.len());
}

/// Prometheus' own OpenMetrics test page has a histogram with negative buckets *and* a
/// `_sum`, which OpenMetrics 1.0 forbids; the reference parser rejects it too.
#[test]
fn strict_openmetrics_flags_the_negative_bucket_sum() {
    let dir = data::dir();
    let text = data::read(&dir.join("corpus/prometheus-textparse-alltypes.5mfs.om.txt"));
    let errors: Vec<_> = Parser::new(Format::OpenMetrics)
        .parse(&text)
        .filter_map(Result::err)
        .collect();
    assert_eq!(errors[0].line, 33, "{errors:?}");
    assert!(
        matches!(&errors[0].kind, promrate::error::ParseErrorKind::Family { family, .. } if family == "rpc_durations_histogram_seconds")
    );
    assert!(
        errors
            .iter()
            .all(|e| matches!(e.kind, promrate::error::ParseErrorKind::Family { .. })),
        "{errors:?}"
    );
}

/// A page with CRLF line ends and no final newline reads like its LF original, strictly
/// (the default) and leniently: DESIGN's contract ("CRLF tolerated"), and how
/// prometheus_client's parser reads it (Prometheus' own refuses the page).
#[test]
fn crlf_and_missing_final_newline_read_like_the_original() {
    let pages = data::pages();
    let mut checked = 0;
    for (name, text) in pages
        .iter()
        .filter(|(n, _)| format_of(n) == Format::PrometheusText)
    {
        let crlf = text.trim_end_matches('\n').replace('\n', "\r\n");
        for strict in [true, false] {
            let parser = promrate::Parser::default().strict(strict);
            let collect = |t: &str| -> Vec<(String, String, u64)> {
                parser
                    .parse(t)
                    .map(|e| e.unwrap_or_else(|e| panic!("{name}, strict {strict}: {e}")))
                    .filter_map(|e| e.into_sample())
                    .map(|s| {
                        (
                            s.name().to_string(),
                            s.labels().as_raw().to_string(),
                            s.value().to_bits(),
                        )
                    })
                    .collect()
            };
            let original = collect(text);
            assert!(!original.is_empty(), "{name}");
            assert_eq!(collect(&crlf), original, "{name}, strict {strict}");
            checked += 1;
        }
    }
    assert!(checked >= 10, "{checked} pages");
}

/// A line after an OpenMetrics page's `# EOF` is an error in the lenient parser too, as
/// in Prometheus' (which fails the scrape): it was read on as more samples.
#[test]
fn nothing_follows_eof_even_leniently() {
    use promrate::{error::ParseErrorKind, Entry};
    for format in [Format::OpenMetrics, Format::OpenMetrics2] {
        for strict in [true, false] {
            let page = "# TYPE a counter\na_total 1\n# EOF\nb 2\n";
            let entries: Vec<_> = Parser::new(format).strict(strict).parse(page).collect();
            let samples = entries
                .iter()
                .filter(|e| matches!(e, Ok(Entry::Sample(_))))
                .count();
            assert_eq!(samples, 1, "{format:?}, strict {strict}: {entries:?}");
            let error = entries.last().unwrap().as_ref().unwrap_err();
            assert_eq!((error.line, &error.kind), (4, &ParseErrorKind::TextAfterEof));
        }
    }
    // The text format has no `# EOF`: the line is a comment.
    assert!(promrate::parse("a 1\n# EOF\nb 2\n").all(|e| e.is_ok()));
}

/// A carriage return before a line's `\n` ends a text-format line, strictly and leniently,
/// whatever the line (a sample, a type, a HELP text, a comment, a line of nothing else);
/// OpenMetrics, whose lines end with `\n` alone, refuses it at its column, except in a
/// HELP text, where it is text.
#[test]
fn a_carriage_return_ends_a_text_line_and_is_refused_in_openmetrics() {
    use promrate::error::ParseErrorKind;
    use promrate::Entry;
    let read = |format: Format, strict: bool, page: &str| -> Vec<String> {
        Parser::new(format)
            .strict(strict)
            .parse(page)
            .map(|entry| match entry {
                Ok(Entry::Help { text, .. }) => format!("help {:?}", text.unescaped()),
                Ok(Entry::Comment(text)) => format!("comment {text:?}"),
                Ok(Entry::Sample(s)) => format!("sample {} {} {:?}", s.name(), s.value(), s.timestamp_ms()),
                Ok(other) => format!("{other:?}"),
                Err(e) if e.kind == ParseErrorKind::CarriageReturn => {
                    format!("CR at {}:{}", e.line, e.column)
                }
                Err(e) => format!("error {e}"),
            })
            .collect()
    };
    for strict in [true, false] {
        let text = Format::PrometheusText;
        assert_eq!(read(text, strict, "a 1\r\n"), ["sample a 1 None"]);
        assert_eq!(read(text, strict, "a{b=\"c\"} 1 5\r\n"), ["sample a 1 Some(5)"]);
        assert_eq!(
            read(text, strict, "# TYPE a gauge\r\na 1\n"),
            ["Type { name: \"a\", kind: Gauge }", "sample a 1 None"]
        );
        assert_eq!(read(text, strict, "\r\na 1\n"), ["sample a 1 None"]);
        assert_eq!(
            read(text, strict, "# HELP a x\r\n# c\r\n\r\na 1\r\n"),
            ["help \"x\"", "comment \"c\"", "sample a 1 None"]
        );
        let om = Format::OpenMetrics;
        assert_eq!(read(om, strict, "a 1\r\n# EOF\n"), ["CR at 1:4", "Eof"]);
        assert_eq!(
            read(om, strict, "# HELP a x\r\na 1\n# EOF\n"),
            ["help \"x\\r\"", "sample a 1 None", "Eof"]
        );
        assert_eq!(
            read(om, strict, "a 1\n# EOF\r\n")[..2],
            ["sample a 1 None", "CR at 2:6"]
        );
    }
}

/// `Display` of every sample of every real page writes a line that parses back to the same
/// sample (name, unescaped labels, value to the bit, timestamp), and so does an owned copy.
#[test]
fn every_sample_displays_as_a_line_that_reads_back_the_same() {
    let mut checked = 0;
    for (file, text) in data::pages() {
        let format = if file.ends_with(".om.txt") {
            promrate::Format::OpenMetrics
        } else {
            promrate::Format::PrometheusText
        };
        for entry in promrate::Parser::new(format).strict(false).parse(&text) {
            let Ok(promrate::Entry::Sample(sample)) = entry else {
                continue;
            };
            let line = sample.to_string();
            let back = promrate::parse(&line)
                .next()
                .and_then(|e| e.ok()?.into_sample())
                .unwrap_or_else(|| panic!("{file}: {line} does not parse back"));
            let labels = |s: &promrate::Sample<'_>| -> Vec<(String, String)> {
                s.labels()
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.unescaped().into_owned()))
                    .collect()
            };
            assert_eq!(back.name(), sample.name(), "{file}: {line}");
            assert_eq!(labels(&back), labels(&sample), "{file}: {line}");
            assert_eq!(back.value().to_bits(), sample.value().to_bits(), "{file}: {line}");
            assert_eq!(back.timestamp_ms(), sample.timestamp_ms(), "{file}: {line}");
            assert_eq!(sample.to_owned().to_string(), line);
            checked += 1;
        }
    }
    assert!(checked > 10_000, "{checked} samples");
    println!("display: {checked} samples of the real pages read back the same");
}
