//! Checks `cargo fuzz` runs on internals (feature `fuzzing`; not part of the API): the fast
//! paths against the general paths they must agree with.

use crate::text::limits::Limits;
use crate::text::metadata;
use crate::text::sample_line::{sample, sample_fast, RecentNames};

/// Runs the fast sample path on `text` (a page from a line start), with the names of
/// earlier lines taken from `recent_name` and `recent_labels` (kept only if valid names),
/// and the given limits; whatever it accepts, the general path must parse to the same
/// sample. Likewise for the metadata fast path on the first line. Panics on a disagreement.
pub fn fast_paths_agree(
    text: &str,
    recent_name: &str,
    recent_labels: &[&str],
    labels: usize,
    name_length: usize,
    value_length: usize,
) {
    let limits = Limits {
        labels,
        label_name_length: name_length,
        label_value_length: value_length,
        ..Limits::NONE
    };
    // Both dialects: OpenMetrics lines take the same fast path, with seconds timestamps.
    for openmetrics in [true, false] {
        let mut recent = RecentNames::remembering(recent_name, recent_labels);
        let Some((fast, len)) = sample_fast(text, &mut recent, &limits, openmetrics) else {
            continue;
        };
        let dialect = crate::text::lexer::Dialect {
            openmetrics,
            version2: false,
            strict_escapes: !openmetrics,
        };
        let general = sample(&text[..len], dialect, &limits).unwrap_or_else(|e| {
            panic!(
                "fast path took {:?}, general path refused it: {e:?}",
                &text[..len]
            )
        });
        assert_eq!(fast.name(), general.name());
        assert_eq!(fast.labels().as_raw(), general.labels().as_raw());
        assert_eq!(fast.labels().len(), general.labels().len());
        let pairs = |s: &crate::Sample<'_>| -> Vec<(String, String)> {
            s.labels()
                .iter()
                .map(|(n, v)| (n.to_string(), v.raw().to_string()))
                .collect()
        };
        assert_eq!(pairs(&fast), pairs(&general));
        assert_eq!(fast.value().to_bits(), general.value().to_bits());
        assert_eq!(fast.timestamp_ms(), general.timestamp_ms());
        assert_eq!(fast.identity, general.identity);
        assert_eq!(fast.identity_starts_line, general.identity_starts_line);
    }
    let recent = RecentNames::remembering(recent_name, recent_labels);
    let metadata_fast_paths = [
        (metadata::metadata_fast(text, recent.metric, usize::MAX), false),
        (
            metadata::metadata_fast_openmetrics(text, recent.metric, usize::MAX),
            true,
        ),
    ];
    for (fast, openmetrics) in metadata_fast_paths {
        let Some((fast, len)) = fast else { continue };
        let line = &text[..len];
        let general = metadata::metadata(line, openmetrics).unwrap_or_else(|e| {
            panic!("metadata fast path (OpenMetrics: {openmetrics}) took {line:?}, general path refused it: {e:?}")
        });
        assert_eq!(format!("{fast:?}"), format!("{general:?}"));
    }
}

/// Ingests `pages` (with scrape times in seconds) into a tracker that recognises lines it
/// has seen before parsing them and one that parses every line: panics if anything they
/// record or report differs.
pub fn tracker_line_recognition_agrees(
    pages: &[(&str, i64)],
    normalize: bool,
    infer: bool,
    stale_after: u32,
) {
    crate::tracker::agreement::line_recognition_agrees(pages, normalize, infer, stale_after);
}

/// Ingests `pages` (with scrape times in seconds) whole into one tracker and cut at the
/// byte offsets `cuts` ([`crate::Tracker::ingest_chunks`]) into another, both with the
/// settings the bits of `setting` choose (format, strictness, limits): panics if anything
/// they record or report differs.
pub fn tracker_chunks_agree(pages: &[(&str, i64)], cuts: &[usize], setting: u16) {
    crate::tracker::agreement::chunks_agree(pages, cuts, setting);
}
