//! Folds of a figure of your own, for the rare case [`Tracker::evaluate`] does not cover: a
//! figure that reads two series at once (a gauge times another series' value), or one no
//! [`Estimator`](crate::Estimator) computes. Each takes a closure that gives a series' figure
//! (`None` leaves the series out) and groups like PromQL's `sum by`; each answers the same
//! [`GroupAnswer`]s as `evaluate` (`value` always `Ok`, no coverage: the closure's figures
//! carry none). Rates, increases, EWMAs, last values, means over a window, quantiles and
//! buckets are `evaluate`'s: prefer it, which also says why a figure is missing.
//!
//! # Example
//! ```
//! use promrate::{fold, Selector, Tracker};
//! let mut t = Tracker::new([]);
//! t.ingest("kv_blocks{e=\"0\"} 100\nblock_size{e=\"0\"} 16\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
//! // KV capacity in tokens: each engine's blocks times its block size.
//! let size = |e: &str| t.get("block_size", &[("e", e)])?.last_value();
//! let tokens = fold::sum_by(&t, &Selector::parse("kv_blocks")?, &["e"], |s| Some(s.last_value()? * size(s.label("e")?)?))?;
//! assert_eq!(tokens[0].value, Ok(1600.0));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::error::QueryError;
use crate::histogram::Bucket;
use crate::promql::sum::{Mean, Sum};
use crate::promql::Semantics;
use crate::query::GroupAnswer;
use crate::select::Selector;
use crate::tracker::{family_selector, part_selector, Pick, TrackedSeries, Tracker};

/// PromQL `sum by (by...) (f(series))` over the series `selector` picks (as
/// [`Tracker::matching`] picks them), sorted by the groups' label values; added as
/// Prometheus 3 adds (Kahan–Neumaier compensation, as `sum` does from Prometheus 2.54 on).
///
/// # Errors
/// [`QueryError::NotTracked`] if the tracker's selectors may not keep every series
/// `selector` picks.
///
/// # Example
/// ```
/// let mut t = promrate::Tracker::new([]);
/// t.ingest("q{e=\"0\"} 2\nq{e=\"1\"} 3\nq{e=\"1\",x=\"y\"} 4\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
/// let groups = promrate::fold::sum_by(&t, &promrate::Selector::parse("q")?, &["e"], |s| s.last_value())?;
/// assert_eq!(groups.iter().map(|g| g.value.clone()).collect::<Vec<_>>(), [Ok(2.0), Ok(7.0)]);
/// assert_eq!((groups[1].label("e"), groups[1].series), (Some("1"), 2));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn sum_by(
    tracker: &Tracker,
    selector: &Selector,
    by: &[&str],
    f: impl Fn(&TrackedSeries) -> Option<f64>,
) -> Result<Vec<GroupAnswer>, QueryError> {
    tracker.check_tracked(selector)?;
    Ok(tracker
        .counted_family(selector, Pick::Family, by, f, |v| {
            Sum::first(v, Semantics::Prometheus3)
        })
        .into_iter()
        .map(|(labels, sum, series)| GroupAnswer::folded(labels, sum, series, Vec::new()))
        .collect())
}

/// PromQL `avg by (by...) (f(series))`, e.g. KV-cache usage across engines, as Prometheus 3
/// averages: the compensated sum over the count, or an incremental mean once the sum would
/// overflow.
///
/// # Errors
/// As [`sum_by`].
///
/// # Example
/// ```
/// let mut t = promrate::Tracker::new([]);
/// t.ingest("kv{e=\"0\"} 0.2\nkv{e=\"1\"} 0.4\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
/// let avg = promrate::fold::avg_by(&t, &promrate::Selector::parse("kv")?, &[], |s| s.last_value())?;
/// assert!((avg[0].value.clone()? - 0.3).abs() < 1e-12);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn avg_by(
    tracker: &Tracker,
    selector: &Selector,
    by: &[&str],
    f: impl Fn(&TrackedSeries) -> Option<f64>,
) -> Result<Vec<GroupAnswer>, QueryError> {
    tracker.check_tracked(selector)?;
    Ok(tracker
        .counted_family(selector, Pick::Family, by, f, Mean::first)
        .into_iter()
        .map(|(labels, mean, series)| GroupAnswer::folded(labels, mean, series, Vec::new()))
        .collect())
}

/// The buckets of the histogram(s) `selector` names, per group: `(le, f(series))` of every
/// `_bucket` series, in series order (a bound appears once per series), for combining
/// histograms across trackers with [`crate::histogram::quantile`]. A group's value is the
/// sum of its `+Inf` buckets' figures (0 without one).
///
/// # Errors
/// [`QueryError::NotTracked`] if the tracker may not keep every `_bucket` series.
///
/// # Example
/// ```
/// let mut t = promrate::Tracker::new([]);
/// t.ingest("# TYPE h histogram\nh_bucket{le=\"1\"} 3\nh_bucket{le=\"+Inf\"} 4\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
/// let groups = promrate::fold::histogram_buckets(&t, &promrate::Selector::parse("h")?, &[], |s| s.last_value())?;
/// let bounds: Vec<(f64, f64)> = groups[0].buckets.iter().map(|b| (b.upper_bound, b.count)).collect();
/// assert_eq!(bounds, [(1.0, 3.0), (f64::INFINITY, 4.0)]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn histogram_buckets(
    tracker: &Tracker,
    selector: &Selector,
    by: &[&str],
    f: impl Fn(&TrackedSeries) -> Option<f64>,
) -> Result<Vec<GroupAnswer>, QueryError> {
    tracker.check_tracked(&part_selector(selector, "_bucket"))?;
    let bucket = |series: &TrackedSeries| {
        let upper_bound = series.label("le")?.parse::<f64>().ok()?;
        Some(Bucket {
            upper_bound,
            count: f(series)?,
        })
    };
    let family = family_selector(selector);
    let groups = tracker.grouped(&family, Pick::Part("_bucket"), by, bucket, |b| vec![b], Vec::push);
    Ok(groups
        .into_iter()
        .map(|(labels, buckets)| {
            let inf: f64 = buckets
                .iter()
                .filter(|b| b.upper_bound == f64::INFINITY)
                .map(|b| b.count)
                .sum();
            let series = buckets.len();
            GroupAnswer::folded(labels, inf, series, buckets)
        })
        .collect())
}
