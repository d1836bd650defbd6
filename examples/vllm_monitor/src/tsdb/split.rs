//! How the reads are split so that no answer is large: by instance, so that one request
//! asks for at most [`MAX_SERIES_PER_REQUEST`] series and one interval with its lookback
//! brings at most [`MAX_SAMPLES_PER_REQUEST`] samples, and by time, so that a past span's
//! request stays within that bound too. Samples are counted at the density measured on
//! the largest server's series (a TSDB scraping every 15 s holds a sample per series per
//! 15 s), or a sample per series per second when there is nothing to measure.
//!
//! While an answer is read, its body (JSON: about 300 bytes a series and 30 a sample) and
//! its series written as lines (about 200 bytes a series and 16 a sample) are held, never
//! the answer parsed whole ([`super::api::parse_each`]), so these bounds hold one request
//! to about 200 MB at most; the requests of a read are made one after the other, and the
//! answers kept at once stay within the same bound ([`past_reads`]). Smaller requests
//! save little: each group of servers is a tracker of its own, and at 10,000 servers
//! groups of 50,000 series held more than groups of 200,000 (1.75 GB against 1.66).

/// The most series one request asks for: beyond, the instances are read in groups.
pub const MAX_SERIES_PER_REQUEST: usize = 200_000;

/// The most samples one request brings (at the density measured, see [`samples_per_s`]).
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

/// The densest sampling assumed: a sample per series per second, the densest scrape
/// interval in common use (when the TSDB's own density cannot be measured).
pub const DENSEST_SAMPLES_PER_S: f64 = 1.0;

/// The sparsest sampling assumed, whatever is measured: a sample per series per two
/// minutes (a series that has just appeared has few samples yet).
pub const SPARSEST_SAMPLES_PER_S: f64 = 1.0 / 120.0;

/// The samples a series brings over `ms` at `samples_per_s`: at least one (the one a
/// series without a new sample repeats).
fn samples_over(ms: i64, samples_per_s: f64) -> f64 {
    (ms as f64 / 1000.0 * samples_per_s).max(1.0)
}

/// The most series one request asks for, so that one interval and the lookback before it
/// bring at most [`MAX_SAMPLES_PER_REQUEST`] samples at `samples_per_s` a series (and at
/// most [`MAX_SERIES_PER_REQUEST`] series).
pub fn series_per_request(interval_ms: i64, lookback_ms: i64, samples_per_s: f64) -> usize {
    let per_series = samples_over(interval_ms + lookback_ms, samples_per_s);
    MAX_SERIES_PER_REQUEST.min((MAX_SAMPLES_PER_REQUEST as f64 / per_series) as usize)
}

/// How many intervals one request of a past span covers, for `series` series at
/// `samples_per_s` a series, each read `lookback_ms` before its span too.
pub fn intervals_per_request(
    series: usize,
    interval_ms: i64,
    lookback_ms: i64,
    max_samples: usize,
    samples_per_s: f64,
) -> u64 {
    let per_series = max_samples as f64 / series.max(1) as f64;
    let seconds = per_series / samples_per_s.max(SPARSEST_SAMPLES_PER_S) - lookback_ms as f64 / 1000.0;
    let intervals = seconds * 1000.0 / interval_ms.max(1) as f64;
    intervals.clamp(1.0, MAX_INTERVALS_PER_REQUEST as f64) as u64
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

/// How a past span of `series` series in all, at `samples_per_s` a series, is read: the
/// answers of all groups kept and many intervals a request when they fit together, else
/// one interval a request and one group's answer at a time (10,000 vLLM servers hold
/// 3.93 M series: more than a GB if every group's answer were kept).
pub fn past_reads(series: usize, interval_ms: i64, lookback_ms: i64, samples_per_s: f64) -> PastReads {
    let samples = series as f64 * samples_over(interval_ms + lookback_ms, samples_per_s);
    if samples <= MAX_SAMPLES_PER_REQUEST as f64 {
        PastReads {
            keep_answers: true,
            intervals_per_request: intervals_per_request(
                series,
                interval_ms,
                lookback_ms,
                MAX_SAMPLES_PER_REQUEST,
                samples_per_s,
            ),
        }
    } else {
        PastReads {
            keep_answers: false,
            intervals_per_request: 1,
        }
    }
}

/// The densest sampling among `series` (each one's samples, oldest first), in samples a
/// second: each series' own from its first to its last timestamp, so that a series that
/// appeared within the range is not taken for a sparse one; `None` when no series has two
/// samples.
pub fn samples_per_s<'a>(series: impl IntoIterator<Item = &'a [(i64, f64)]>) -> Option<f64> {
    series
        .into_iter()
        .filter_map(|samples| {
            let (first, last) = (samples.first()?.0, samples.last()?.0);
            (samples.len() >= 2 && last > first)
                .then(|| (samples.len() - 1) as f64 / ((last - first) as f64 / 1000.0))
        })
        .reduce(f64::max)
        .map(|d| d.max(SPARSEST_SAMPLES_PER_S))
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
