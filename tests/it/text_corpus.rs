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

/// A page with CRLF line ends and no final newline reads like its LF original.
#[test]
fn crlf_and_missing_final_newline_read_like_the_original() {
    let pages = data::pages();
    for (name, text) in pages
        .iter()
        .filter(|(n, _)| format_of(n) == Format::PrometheusText)
    {
        let crlf = text.trim_end_matches('\n').replace('\n', "\r\n");
        let collect = |t: &str| -> Vec<(String, String, u64)> {
            promrate::parse(t)
                .map(|e| e.unwrap_or_else(|e| panic!("{name}: {e}")))
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
        assert_eq!(collect(&crlf), collect(text), "{name}");
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
