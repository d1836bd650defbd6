//! A page read in chunks (`Tracker::ingest_chunks`, `Tracker::ingest_reader`) is the page
//! read whole: the real pages of `tests/data`, cut at random bytes (inside lines and
//! UTF-8 characters), give the same reports, refusals and series as `Tracker::ingest`,
//! under every setting that reads across lines (selectors and the unmatched report,
//! `max_series`, the parser's limits, OpenMetrics, `_created`, start times).

use chrono::{DateTime, TimeDelta, Utc};
use promrate::{tracker::SeriesData, Format, Parser, Selector, Tracker};
use proptest::prelude::*;

use super::data;

/// Everything observable about a tracker's series, in a comparable form.
fn state(t: &Tracker) -> Vec<String> {
    let mut series: Vec<String> = t
        .series()
        .map(|s| {
            let data = match s.data() {
                SeriesData::Counter(c) => format!(
                    "counter {:?} created {:?} resets {} last_reset {:?} ewma {:?}",
                    c.points(),
                    c.created_times().collect::<Vec<_>>(),
                    c.resets(),
                    c.last_reset(),
                    c.ewma_rate().map(f64::to_bits)
                ),
                SeriesData::Gauge(g) => format!("gauge {:?}", g.points()),
                _ => "other".to_string(),
            };
            let labels: Vec<_> = s.labels().collect();
            format!("{} {labels:?} seen {} {data}", s.name(), s.last_seen_scrape())
        })
        .collect();
    series.sort();
    series
}

/// The settings a page is read under (each reads something across lines).
fn tracker(setting: usize, page_name: &str) -> Tracker {
    let openmetrics2 = page_name.ends_with(".om2.txt");
    let openmetrics = openmetrics2 || page_name.ends_with(".om.txt");
    let mut t = match setting {
        // Selectors: some series, and one that matches nothing (the unmatched report).
        1 => Tracker::new([
            Selector::parse(r#"{__name__=~"[a-m].*"}"#).unwrap(),
            Selector::parse("vllm_generation_tokens_totl").unwrap(),
        ]),
        _ => Tracker::new([]),
    };
    t.retention(TimeDelta::minutes(30));
    let format = if openmetrics2 {
        Format::OpenMetrics2
    } else if openmetrics {
        Format::OpenMetrics
    } else {
        Format::PrometheusText
    };
    let parser = Parser::new(format);
    match setting {
        2 => {
            t.max_series(400);
        }
        3 => {
            t.parser(parser.sample_limit(300).strict(!openmetrics));
        }
        4 => {
            t.parser(parser.label_limit(3).max_line_len(200).strict(false));
        }
        5 => {
            t.parser(parser.body_size_limit(20_000));
            t.normalize_names(true).infer_counters(true);
        }
        _ => {
            t.parser(parser);
        }
    }
    t
}

fn at(scrape: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_800_000_000 + 15 * scrape, 0).unwrap()
}

/// The page in chunks cut at `cuts` (byte offsets, any order, clamped to the page).
fn chunks<'p>(page: &'p [u8], cuts: &[usize]) -> Vec<&'p [u8]> {
    let mut cuts: Vec<usize> = cuts.iter().map(|&c| c % (page.len() + 1)).collect();
    cuts.push(0);
    cuts.push(page.len());
    cuts.sort_unstable();
    cuts.windows(2).map(|w| &page[w[0]..w[1]]).collect()
}

/// Pages a scrape after another: the page, then the page again with every value moved
/// (known lines, resets, repeated timestamped points), then a page with refusals.
fn scrapes(page: &str) -> Vec<String> {
    let moved: String = page
        .lines()
        .map(|line| {
            let line = if !line.starts_with('#') && line.ends_with(" 1") {
                format!("{}0", line)
            } else {
                line.to_string()
            };
            format!("{line}\n")
        })
        .collect();
    vec![page.to_string(), moved, page.to_string()]
}

fn agree(name: &str, page: &str, setting: usize, cuts: &[usize]) {
    let (mut whole, mut chunked) = (tracker(setting, name), tracker(setting, name));
    for (n, page) in scrapes(page).iter().enumerate() {
        let expected = whole.ingest(page, at(n as i64));
        let got = if n % 2 == 0 {
            let mut reading = chunked.ingest_chunks(at(n as i64)).unwrap();
            for chunk in chunks(page.as_bytes(), cuts) {
                reading.push(chunk);
            }
            reading.finish()
        } else {
            // A reader that hands out the page in the same cuts (an empty one is skipped:
            // a read of 0 bytes ends the page).
            struct Cut<'p>(Vec<&'p [u8]>);
            impl std::io::Read for Cut<'_> {
                fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                    while self.0.first().is_some_and(|c| c.is_empty()) {
                        self.0.remove(0);
                    }
                    let Some(chunk) = self.0.first_mut() else {
                        return Ok(0);
                    };
                    let n = chunk.len().min(buf.len());
                    buf[..n].copy_from_slice(&chunk[..n]);
                    *chunk = &chunk[n..];
                    Ok(n)
                }
            }
            chunked
                .ingest_reader(Cut(chunks(page.as_bytes(), cuts)), at(n as i64))
                .map_err(|e| match e {
                    promrate::error::ReadError::Ingest(e) => e,
                    e => panic!("{e}"),
                })
        };
        assert_eq!(
            format!("{got:?}"),
            format!("{expected:?}"),
            "{name}, setting {setting}, scrape {n}: reports differ"
        );
        assert_eq!(
            state(&chunked),
            state(&whole),
            "{name}, setting {setting}, scrape {n}: series differ"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn a_page_read_in_chunks_is_the_page_read_whole(
        page in 0usize..64,
        setting in 0usize..6,
        cuts in prop::collection::vec(any::<usize>(), 0..40),
    ) {
        let pages = pages();
        let (name, text) = &pages[page % pages.len()];
        agree(name, text, setting, &cuts);
    }
}

fn pages() -> &'static [(String, String)] {
    static PAGES: std::sync::OnceLock<Vec<(String, String)>> = std::sync::OnceLock::new();
    PAGES.get_or_init(|| {
        let mut pages = data::pages();
        // What real pages lack: refusals, bad and non-ASCII lines, CRLF, no final newline,
        // `_created` before its counter, a start time, a quoted name.
        pages.push((
            "synthetic".to_string(),
            "# TYPE x counter\nx_created{a=\"é\"} 1.7e9\nx_total{a=\"é\"} 5\nx_total{a=\"é\"} 6\n\
             bad{ 1\nprocess_start_time_seconds 1.7e9\r\n{\"quoted.name\",b=\"1\"} 2\n\
             t_total 5 1000\nt_total 4 999\ny{a=\"1\",b=\"2\",c=\"3\",d=\"4\"} 1\nlast_total 1"
                .to_string(),
        ));
        // Lines after `# EOF` (a proxy that joins two pages): errors, read whole or cut.
        pages.push((
            "joined.om.txt".to_string(),
            "# TYPE a counter\na_total 1\n# EOF\n# TYPE a counter\na_total 2\nb 1\n# EOF\n".to_string(),
        ));
        // OpenMetrics 2.0: composite values (classic, native and both; a summary; a gauge
        // histogram with a timestamp that moves), start timestamps.
        pages.push((
            "composite.om2.txt".to_string(),
            "# TYPE rq_seconds histogram\n\
             rq_seconds{path=\"/a\"} {count:17,sum:324789.3,bucket:[0.01:0,0.1:8,1.0:11,10.0:17,+Inf:17]} st@1520430000.123\n\
             rq_seconds{path=\"/b\"} {count:5,sum:1.5,schema:3,zero_threshold:1e-4,zero_count:1,positive_spans:[0:2],positive_buckets:[2,2],bucket:[0.1:3,+Inf:5]} st@1520430000.123\n\
             # TYPE lat summary\nlat {count:10,sum:5.0,quantile:[0.5:0.3,0.9:0.7]} st@1520430000.5\n\
             # TYPE native histogram\n\
             native {count:3,sum:1.0,schema:0,zero_threshold:0,zero_count:1,positive_spans:[0:1],positive_buckets:[2]}\n\
             # TYPE queue gaugehistogram\nqueue {gcount:2,gsum:1.5,bucket:[1.0:1,+Inf:2]} 1\n\
             # TYPE c counter\nc_total{a=\"x\"} 1\nc_total{a=\"y\"} 3 1800000000.0 st@1520430000.0\n# EOF\n"
                .to_string(),
        ));
        pages
    })
}

#[test]
fn every_page_and_setting_agrees_cut_into_bytes() {
    for (name, text) in pages() {
        for setting in 0..6 {
            // Every 7th byte, and a cut at each line's end.
            let cuts: Vec<usize> = (0..text.len()).step_by(7).collect();
            agree(name, text, setting, &cuts);
            agree(name, text, setting, &[]);
        }
    }
}

#[test]
fn a_line_that_is_not_utf8_is_a_bad_line() {
    let mut t = Tracker::new([]);
    let mut reading = t.ingest_chunks(at(0)).unwrap();
    reading.push(b"a 1\nb{x=\"\xff\"} 2\nc 3\n".as_slice());
    let report = reading.finish().unwrap();
    assert_eq!((report.samples, report.bad_lines), (2, 1));
    let error = report.first_error.unwrap();
    assert_eq!(
        (error.line, error.column, error.kind),
        (2, 6, promrate::error::ParseErrorKind::InvalidUtf8)
    );
}

/// Strict OpenMetrics gathers the page to read it whole: a line that is not UTF-8 is a bad
/// line there too, never a sample whose label holds U+FFFD (another series, said nowhere),
/// and the lines after it keep their numbers.
#[test]
fn a_line_that_is_not_utf8_is_a_bad_line_in_a_strict_openmetrics_page() {
    use promrate::{error::ParseErrorKind, Format, Parser};
    let page = b"# TYPE a counter\na_total{x=\"\xff\"} 1\na_total{x=\"2\"} 2\n# EOF\n";
    for format in [Format::OpenMetrics, Format::OpenMetrics2] {
        let mut t = Tracker::new([]);
        t.parser(Parser::new(format));
        let mut reading = t.ingest_chunks(at(0)).unwrap();
        reading.push(&page[..20]);
        reading.push(&page[20..]);
        let report = reading.finish().unwrap();
        assert_eq!((report.samples, report.bad_lines), (1, 1), "{format:?}");
        let error = report.first_error.unwrap();
        assert_eq!(
            (error.line, error.column, error.kind),
            (2, 12, ParseErrorKind::InvalidUtf8)
        );
        let series: Vec<String> = t
            .series()
            .map(|s| format!("{:?}", s.labels().collect::<Vec<_>>()))
            .collect();
        assert_eq!(series, [r#"[("x", "2")]"#], "{format:?}");
    }
    // A bad line after a sample's error: the first error stays the sample's own.
    let mut t = Tracker::new([]);
    t.parser(Parser::new(Format::OpenMetrics));
    let report = t
        .ingest_reader(b"a_total{ 1\nb{x=\"\xfe\"} 2\n# EOF\n".as_slice(), at(0))
        .unwrap();
    assert_eq!(report.bad_lines, 2);
    assert_ne!(report.first_error.unwrap().kind, ParseErrorKind::InvalidUtf8);
}
