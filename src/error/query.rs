//! What a query cannot answer: a query that is wrong in itself ([`QueryError`]: the
//! tracker cannot answer it whatever the data), and why a figure has no value at a time
//! ([`NoValue`]: the data is not there yet, or not enough).

use chrono::{DateTime, TimeDelta, Utc};
use thiserror::Error;

use super::{rfc3339, seconds};

/// A query a [`Tracker`](crate::Tracker) cannot answer whatever its data: it asks about
/// series the tracker does not keep, or combines settings that do not go together. The
/// message says what to change.
///
/// # Example
/// ```
/// use promrate::{Estimator, Query, QueryError, Selector, Tracker};
/// let tracker = Tracker::new([Selector::parse("vllm:generation_tokens_total")?]);
/// let prompt = Query::new(&Selector::parse("vllm:prompt_tokens_total")?, Estimator::Ewma);
/// let err = tracker.evaluate(&prompt).unwrap_err();
/// assert!(matches!(err, QueryError::NotTracked { .. }));
/// assert!(err.to_string().contains("Tracker::new"), "{err}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum QueryError {
    /// The selector picks series that the tracker's selectors may not have kept: the
    /// answer would miss them.
    #[error(
        "the tracker does not track `{selector}` (it keeps only what its selectors pick: {}){}; \
         if you meant it, add the selector to those given to Tracker::new",
        tracked.join(", "),
        if nearest.is_empty() { String::new() } else { format!("; nearest names tracked: {}", nearest.join(", ")) }
    )]
    NotTracked {
        /// The query's selector, in PromQL syntax.
        selector: String,
        /// The tracker's selectors.
        tracked: Vec<String>,
        /// The tracked metric names nearest to the query's (a misspelling), nearest first.
        nearest: Vec<String>,
    },
    /// The selector names a histogram or summary, whose parts (`_bucket`, `_sum`,
    /// `_count`) would be added together.
    #[error(
        "`{selector}` is a histogram or summary: a figure over all its parts ({}) means nothing; \
         ask for one part (`{name}_count`: observations, `{name}_sum`: their total), or read \
         the histogram with Query::quantile, Query::mean or Query::buckets",
        parts.join(", ")
    )]
    HistogramName {
        /// The query's selector, in PromQL syntax.
        selector: String,
        /// The family's name.
        name: String,
        /// The parts the tracker holds.
        parts: Vec<String>,
    },
    /// A quantile outside `[0, 1]`, or NaN (PromQL answers ±Inf or NaN: almost always a
    /// percentile written where a fraction was meant, `95` for `0.95`).
    #[error("the quantile {q} is not within [0, 1] (the 95th percentile is 0.95)")]
    InvalidQuantile {
        /// The quantile asked.
        q: f64,
    },
    /// The estimator needs a window and none was given.
    #[error("{estimator} needs a window: Query::window(..)")]
    WindowMissing {
        /// The estimator's name.
        estimator: &'static str,
    },
    /// The window is zero or negative: no span to take a rate or a mean over.
    #[error("a window of {} is no span to take a figure over: ask for a window longer than 0 s", seconds(.window))]
    WindowNotPositive {
        /// The window asked.
        window: TimeDelta,
    },
    /// The window is longer than the history the tracker keeps: the answer would cover less
    /// than asked.
    #[error(
        "a window of {} is longer than the tracker's retention of {}: set Tracker::retention to the \
         longest window you ask about",
        seconds(.window),
        seconds(.retention)
    )]
    WindowBeyondRetention {
        /// The window asked.
        window: TimeDelta,
        /// The tracker's retention.
        retention: TimeDelta,
    },
    /// A PromQL modifier (`anchored`, `smoothed`) with an estimator PromQL does not allow it
    /// with.
    #[error("`{modifier}` goes with PromQL's rate and increase only, not with {estimator}")]
    ModifierNotAllowed {
        /// The modifier.
        modifier: &'static str,
        /// The estimator's name.
        estimator: &'static str,
    },
    /// The EWMA's time constant is the tracker's, set before the points arrived; a query
    /// cannot change it.
    #[error(
        "the EWMA's time constant is the tracker's ({}), not the {} asked: set \
         Tracker::ewma_time_constant before ingesting, or ask without a window",
        seconds(.tracker),
        seconds(.asked)
    )]
    EwmaTimeConstant {
        /// The window asked.
        asked: TimeDelta,
        /// The tracker's time constant.
        tracker: TimeDelta,
    },
}

/// Why a figure has no value: every query answers a value or one of these, never a silent
/// `None` or an empty list.
///
/// # Example
/// ```
/// use chrono::{DateTime, TimeDelta};
/// use promrate::{Estimator, NoValue, Query, Selector, Tracker};
/// let tokens = Selector::parse("tokens_total")?;
/// let mut tracker = Tracker::new([tokens.clone()]);
/// let at = DateTime::from_timestamp(1_764_000_000, 0).unwrap();
/// tracker.ingest("tokens_total 100\n", at)?;
/// let rate = tracker.evaluate(&Query::new(&tokens, Estimator::WindowRate).window(TimeDelta::seconds(10)))?;
/// assert!(matches!(rate.value(), Err(NoValue::TooFewScrapes { found: 1, .. })));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum NoValue {
    /// The tracker holds no series the selector picks (yet).
    #[error(
        "no series `{selector}`{}",
        if nearest.is_empty() { String::new() } else { format!(" (nearest names tracked: {})", nearest.join(", ")) }
    )]
    NoSeries {
        /// The selector, in PromQL syntax.
        selector: String,
        /// The tracked metric names nearest to the selector's, nearest first.
        nearest: Vec<String>,
    },
    /// Series of the selector's name exist, but none whose `label` the selector accepts (a
    /// misspelled value, or a label the series do not have).
    #[error(
        "no series `{selector}`: series of its name exist, but none with that `{label}` (values seen: {})",
        if values.is_empty() { "none: the series do not have it".to_string() } else { values.join(", ") }
    )]
    NoLabelMatch {
        /// The selector, in PromQL syntax.
        selector: String,
        /// The first label whose matcher no series of the name passes.
        label: String,
        /// Up to ten of the label's values among the name's series.
        values: Vec<String>,
    },
    /// The tracker has ingested no scrape, so there is no time to evaluate at.
    #[error("no scrape ingested yet")]
    NoScrapes,
    /// A rate needs a counter; this series is a gauge (by its `# TYPE`, or untyped and not
    /// named like a counter: see `Tracker::infer_counters`).
    #[error("`{name}` is not a counter")]
    NotACounter {
        /// The series' metric name.
        name: String,
    },
    /// The series is not on the newest page (its target stopped, or the series went away),
    /// and the query counts the newest page's series only (`SeriesScope::NewestPage`).
    #[error("not on the newest page (last seen at {})", rfc3339(.last_seen))]
    NotOnNewestPage {
        /// The time of the series' newest point.
        last_seen: DateTime<Utc>,
    },
    /// PromQL's window holds fewer than the two points a rate, an increase or an irate needs.
    #[error(
        "the window {}{}, {}] holds {in_window} point(s); PromQL's rate, increase and irate need 2{}",
        if *open_left { "(" } else { "[" },
        rfc3339(.start),
        rfc3339(.end),
        if *open_left {
            " (the window is open on the left: a point exactly at its start is outside; a window longer \
             than the scrape interval, or the window rate, reads it)"
        } else {
            ""
        }
    )]
    TooFewPoints {
        /// Points inside the window, staleness markers not counted.
        in_window: usize,
        /// The window's start.
        start: DateTime<Utc>,
        /// The window's end (the evaluation time).
        end: DateTime<Utc>,
        /// Whether a point exactly at the start is outside (PromQL 3.x windows).
        open_left: bool,
    },
    /// The window estimators found fewer than two scrapes within their reach (the window and
    /// its slack).
    #[error(
        "{found} scrape(s) from {} to {} (the window and its slack); a rate or an increase needs 2",
        rfc3339(.from),
        rfc3339(.to)
    )]
    TooFewScrapes {
        /// Scrapes within the reach.
        found: usize,
        /// The oldest time reached (the window's start less the slack).
        from: DateTime<Utc>,
        /// The evaluation time.
        to: DateTime<Utc>,
    },
    /// Only one point since a gap between scrapes (an outage): a window never reaches
    /// across a gap ([`WindowRule::gap`](crate::WindowRule::gap)).
    #[error("one point since the gap that ended at {}; a rate needs 2", rfc3339(.since))]
    OnePointSinceGap {
        /// The first point after the gap.
        since: DateTime<Utc>,
    },
    /// `points[index]` is not after `points[index - 1]`: points must be in strictly
    /// increasing time order (no duplicate timestamps), as Prometheus stores them.
    #[error("point {index} is not after the point before it: points must be in increasing time order")]
    OutOfOrder {
        /// Index of the first point not after its predecessor.
        index: usize,
    },
    /// `anchored` and `smoothed` found no point to start from within the lookback before
    /// the window, or none to end at in it.
    #[error("no point to anchor the window on within the lookback of {}", seconds(.lookback))]
    NoAnchor {
        /// The lookback searched.
        lookback: TimeDelta,
    },
    /// The counter is erratic: it went down more than once in the window with no restart
    /// evidence (no changed created time or process start time), or its target's process
    /// start time went backwards. Such a series is not one counter (a buggy exporter, or
    /// two processes answering one URL in turn), and a rate over it would be a spike, so
    /// it gets none. A single unexplained drop is a reset, as in Prometheus.
    #[error("{}", erratic_text(*drops, *start_went_back))]
    ErraticCounter {
        /// Jumps without restart evidence among the points read: drops, and rises back above
        /// the value before a drop (a restarted counter counts from zero).
        drops: usize,
        /// Whether it went back to an earlier process among them: its start time (the
        /// target's, or `_created`), or its count leaping back above a drop.
        start_went_back: bool,
    },
    /// The EWMA has no interval yet (fewer than two points, or none since a gap).
    #[error("the EWMA has no interval yet (it needs two points, and starts afresh after a gap)")]
    EwmaNotStarted,
    /// A running figure (the EWMA, the total increase) is known as of its series' newest
    /// point only: it has no value at an earlier time.
    #[error(
        "{figure} is a running figure as of its newest point ({}): it has no value at the earlier {}",
        rfc3339(.newest),
        rfc3339(.at)
    )]
    AsOfNewestPoint {
        /// The figure ([`Estimator::name`](crate::Estimator::name)).
        figure: &'static str,
        /// The time asked.
        at: DateTime<Utc>,
        /// The series' newest point.
        newest: DateTime<Utc>,
    },
    /// No point where the figure reads one: none in the window (`avg_over_time`), or none
    /// at or before the time asked (the last value).
    #[error("no point {}", match .from {
        Some(from) => format!("from {} to {}", rfc3339(from), rfc3339(.to)),
        None => format!("at or before {}", rfc3339(.to)),
    })]
    NoPoint {
        /// The window's start (exclusive), if the figure reads a window.
        from: Option<DateTime<Utc>>,
        /// The time asked.
        to: DateTime<Utc>,
    },
    /// A histogram quantile needs a `+Inf` bucket and one more bucket.
    #[error("the histogram has {buckets} bucket(s) and {}: a quantile needs a +Inf bucket and one more", if *has_inf { "a +Inf bucket" } else { "no +Inf bucket" })]
    NoBuckets {
        /// Buckets with a value.
        buckets: usize,
        /// Whether one of them is `+Inf`.
        has_inf: bool,
    },
    /// No observation in the window: no quantile or mean to give.
    #[error("no observation in the window")]
    NoObservations,
    /// The histogram came as an OpenMetrics 2.0 native (exponential) histogram without
    /// classic buckets: its count and sum are tracked, but promrate estimates quantiles from
    /// classic buckets only.
    #[error("`{name}` is a native histogram without classic buckets: promrate estimates quantiles from classic buckets only (its count and sum are tracked)")]
    NativeHistogram {
        /// The histogram's family name.
        name: String,
    },
    /// [`Answer::value`](crate::Answer::value) of an answer of several groups (a query
    /// with `by`): no one value answers it.
    #[error("the answer has {groups} groups (the query's `by`), not one value: read Answer::groups or Answer::group")]
    SeveralGroups {
        /// How many groups the answer has.
        groups: usize,
    },
}

/// [`NoValue::ErraticCounter`]'s words: what the series did, and the likely cause.
fn erratic_text(drops: usize, start_went_back: bool) -> String {
    let what = if start_went_back {
        "its start time or its count went back to an earlier process's".to_string()
    } else {
        format!("it jumped {drops} times without restart evidence (down, or back above where it dropped from; no new start time or _created)")
    };
    format!("not rated: {what} in the window; two processes behind one URL, or not a counter?")
}
