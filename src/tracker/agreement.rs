//! A check for tests and fuzzing: recognising known lines before they are parsed
//! (`PositionCache::known_prefix`) must change nothing a tracker records or reports.

use chrono::{DateTime, TimeDelta, Utc};

use super::{SeriesData, Tracker};

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
            };
            format!(
                "{} {:?} seen {} {data}",
                s.name(),
                s.labels().collect::<Vec<_>>(),
                s.last_seen_scrape()
            )
        })
        .collect();
    series.sort();
    series.extend(t.starts.state());
    series
}

/// Ingests `pages` (each with its scrape time as seconds after a fixed epoch) into two
/// trackers, one recognising known lines and one parsing every line, with the same
/// settings; panics at the first difference in a report, an error or a series.
pub(crate) fn line_recognition_agrees(pages: &[(&str, i64)], normalize: bool, infer: bool, stale_after: u32) {
    let make = |recognise: bool| {
        let mut t = Tracker::new([]);
        t.normalize_names(normalize)
            .infer_counters(infer)
            .stale_after(stale_after)
            .retention(TimeDelta::minutes(30));
        t.recognise_lines = recognise;
        t
    };
    let (mut fast, mut plain) = (make(true), make(false));
    let epoch = DateTime::<Utc>::from_timestamp(1_700_000_000, 0).expect("a valid time");
    for (i, (page, seconds)) in pages.iter().enumerate() {
        let at = epoch + TimeDelta::seconds(*seconds);
        let (a, b) = (fast.ingest(page, at), plain.ingest(page, at));
        // Compared as text: a refused NaN is not equal to itself.
        assert_eq!(
            format!("{a:?}"),
            format!("{b:?}"),
            "page {i} ({page:?}): reports differ"
        );
        assert_eq!(state(&fast), state(&plain), "page {i} ({page:?}): series differ");
    }
}

/// A tracker for [`chunks_agree`], its settings from the bits of `setting`: the format,
/// strictness, selectors and each limit that reads across lines.
fn chunk_tracker(setting: u16) -> Tracker {
    use crate::{Format, Parser, Selector};
    let bit = |n: u16| setting & (1 << n) != 0;
    let mut t = if bit(0) {
        // Families by name (without the `regex` feature): a histogram's parts and a counter.
        let some = ["h", "a_total"].map(|name| Selector::parse(name).expect("a valid selector"));
        Tracker::new(some)
    } else {
        Tracker::new([])
    };
    let format = [
        Format::PrometheusText,
        Format::OpenMetrics,
        Format::OpenMetrics2,
        Format::PrometheusText,
    ][usize::from(setting >> 1 & 3)];
    let mut parser = Parser::new(format).strict(bit(3));
    if bit(4) {
        parser = parser.sample_limit(5).label_limit(3);
    }
    if bit(5) {
        parser = parser.max_line_len(40);
    }
    if bit(6) {
        parser = parser.body_size_limit(200);
    }
    t.parser(parser)
        .retention(TimeDelta::minutes(30))
        .normalize_names(bit(7))
        .infer_counters(bit(8));
    if bit(9) {
        t.max_series(4);
    }
    if bit(10) {
        // A start gauge and a target label a fuzzer's pages come upon.
        t.start_time_gauge(Some("g")).target_labels(["k"]);
    }
    if bit(11) {
        // Series, and start gauges' slots, let go after one page without them.
        t.stale_after(1);
    }
    if bit(12) {
        // Start times read against the page times too.
        t.start_time_skew(Some(TimeDelta::seconds(1)));
    }
    if bit(13) {
        // Every sample at its page's time, whatever its own timestamp.
        t.honor_timestamps(false);
    }
    t
}

/// Ingests `pages` (each with its scrape time as seconds after a fixed epoch) whole into
/// one tracker and, cut at the byte offsets `cuts` (taken modulo each page's length, so a
/// line or a UTF-8 character may be cut anywhere), into another with the same settings
/// (the bits of `setting`); panics at the first difference in a report, an error or a
/// series. A third tracker is given only the pages the first accepted, and must end each
/// in the same state: a refused page changes nothing.
pub(crate) fn chunks_agree(pages: &[(&str, i64)], cuts: &[usize], setting: u16) {
    let (mut whole, mut chunked) = (chunk_tracker(setting), chunk_tracker(setting));
    let mut accepted_only = chunk_tracker(setting);
    let epoch = DateTime::<Utc>::from_timestamp(1_700_000_000, 0).expect("a valid time");
    for (i, (page, seconds)) in pages.iter().enumerate() {
        let at = epoch + TimeDelta::seconds(*seconds);
        let expected = whole.ingest(page, at);
        if expected.is_ok() {
            let report = accepted_only.ingest(page, at);
            assert_eq!(
                format!("{report:?}"),
                format!("{expected:?}"),
                "page {i} ({page:?}): a refused page before it changed its report"
            );
        }
        assert_eq!(
            state(&accepted_only),
            state(&whole),
            "page {i} ({page:?}): a refused page changed the series"
        );
        let bytes = page.as_bytes();
        let mut offsets: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
        offsets.extend([0, bytes.len()]);
        offsets.sort_unstable();
        let got = chunked.ingest_chunks(at).and_then(|mut reading| {
            for cut in offsets.windows(2) {
                reading.push(&bytes[cut[0]..cut[1]]);
            }
            reading.finish()
        });
        assert_eq!(
            format!("{got:?}"),
            format!("{expected:?}"),
            "page {i} ({page:?}), cut at {offsets:?}: reports differ"
        );
        assert_eq!(
            state(&chunked),
            state(&whole),
            "page {i} ({page:?}): series differ"
        );
    }
}
