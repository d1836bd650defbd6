//! How the reads are split so that no answer is large: by instance, so that one request
//! asks for at most [`MAX_SERIES_PER_REQUEST`] series and one interval with its lookback
//! brings at most [`MAX_SAMPLES_PER_REQUEST`] samples, and by time, so that a past span's
//! request stays within that bound too (counting one sample per series per second, the
//! densest scrape interval in common use).
//!
//! An answer costs about 100 bytes a sample and 1 KB a series while it is read and
//! parsed, so these bounds hold one request to about 300 MB at most; the requests of a
//! read are made one after the other, and the answers kept at once stay within the same
//! bound ([`past_reads`]).

/// The most series one request asks for: beyond, the instances are read in groups.
pub const MAX_SERIES_PER_REQUEST: usize = 200_000;

/// The most samples one request brings (at a sample per series per second).
pub const MAX_SAMPLES_PER_REQUEST: usize = 2_000_000;

/// The most intervals one request of a past span covers.
pub const MAX_INTERVALS_PER_REQUEST: u64 = 240;

/// Instances in groups of at most `max_series` series (each instance's count, as large
/// as the largest known for those not counted): one group, empty, for all when they fit
/// in one request (no instance matcher then: servers without an `instance` label, or
/// that appear later, are read too).
pub fn group_instances(
    instances: &[String],
    counts: &[(String, usize)],
    max_series: usize,
) -> Vec<Vec<String>> {
    let largest = counts.iter().map(|c| c.1).max().unwrap_or(1).max(1);
    let count_of = |instance: &String| {
        counts
            .binary_search_by(|c| c.0.cmp(instance))
            .map_or(largest, |i| counts[i].1.max(1))
    };
    let total: usize = instances.iter().map(count_of).sum();
    if total <= max_series {
        return vec![Vec::new()];
    }
    let mut groups: Vec<Vec<String>> = Vec::new();
    let mut in_group = 0;
    for instance in instances {
        let count = count_of(instance);
        if groups.is_empty() || in_group + count > max_series {
            groups.push(Vec::new());
            in_group = 0;
        }
        in_group += count;
        if let Some(group) = groups.last_mut() {
            group.push(instance.clone());
        }
    }
    groups
}

/// The most series one request asks for, so that one interval and the lookback before it
/// bring at most [`MAX_SAMPLES_PER_REQUEST`] samples (and at most
/// [`MAX_SERIES_PER_REQUEST`] series).
pub fn series_per_request(interval_ms: i64, lookback_ms: i64) -> usize {
    let seconds = usize::try_from((interval_ms + lookback_ms) / 1000)
        .unwrap_or(usize::MAX)
        .max(1);
    MAX_SERIES_PER_REQUEST.min(MAX_SAMPLES_PER_REQUEST / seconds)
}

/// How many intervals one request of a past span covers, for `series` series, each read
/// `lookback_ms` before its span too.
pub fn intervals_per_request(series: usize, interval_ms: i64, lookback_ms: i64, max_samples: usize) -> u64 {
    let per_series = max_samples / series.max(1);
    let seconds = per_series as i64 - lookback_ms / 1000;
    let intervals = seconds * 1000 / interval_ms.max(1);
    intervals.clamp(1, MAX_INTERVALS_PER_REQUEST as i64) as u64
}

/// How a past span's answers are held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PastReads {
    /// Whether every group's answer is kept until the intervals it covers are read: only
    /// when all of them together stay within [`MAX_SAMPLES_PER_REQUEST`]. Otherwise each
    /// group is read when its pages are due and its answer dropped after them, so that one
    /// answer is held at a time.
    pub keep_answers: bool,
    pub intervals_per_request: u64,
}

/// How a past span of `series` series in all is read: the answers of all groups kept and
/// many intervals a request when they fit together, else one interval a request and one
/// group's answer at a time (10,000 vLLM servers hold 3.93 M series: several hundred MB
/// more if every group's answer were kept).
pub fn past_reads(series: usize, interval_ms: i64, lookback_ms: i64) -> PastReads {
    let seconds = usize::try_from((interval_ms + lookback_ms) / 1000)
        .unwrap_or(usize::MAX)
        .max(1);
    if series.saturating_mul(seconds) <= MAX_SAMPLES_PER_REQUEST {
        PastReads {
            keep_answers: true,
            intervals_per_request: intervals_per_request(
                series,
                interval_ms,
                lookback_ms,
                MAX_SAMPLES_PER_REQUEST,
            ),
        }
    } else {
        PastReads {
            keep_answers: false,
            intervals_per_request: 1,
        }
    }
}

/// A regular expression (RE2) matching `text` exactly.
fn regex_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `matcher` (a `{...}` selector) narrowed to `instances` (none: all).
pub fn selector(matcher: &str, instances: &[String]) -> String {
    if instances.is_empty() {
        return matcher.to_string();
    }
    let alternatives: Vec<String> = instances.iter().map(|i| regex_literal(i)).collect();
    // Inside a PromQL double-quoted string a backslash is written twice.
    let regex = alternatives.join("|").replace('\\', "\\\\").replace('"', "\\\"");
    let inner = matcher.trim_end_matches('}');
    format!("{inner},instance=~\"{regex}\"}}")
}
