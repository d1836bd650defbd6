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
