//! The one way to a figure from a [`Tracker`](crate::Tracker): a [`Query`] says what (a
//! selector), how (an [`Estimator`]), over what (a window, an evaluation time), by which
//! labels, and which series count ([`SeriesScope`]); the tracker answers an [`Answer`]:
//! a value per group, or why there is none.
//!
//! # For the next maintainer
//! - A query is data: building one checks nothing; [`Tracker::evaluate`](crate::Tracker::evaluate)
//!   checks it against the tracker (`QueryError`) and then answers per series
//!   (`tracker/evaluate.rs`), so one code path serves rates, quantiles and means.
//! - Every estimator answers `Result<f64, NoValue>` per series; a group keeps the first
//!   reason of its series when none has a value. Add an estimator here, in
//!   `Estimator::name`, and in `tracker/figure.rs`'s `series_figure`.
//! - What a query reads of a group (`Reading`: the sum, or a histogram's quantile, mean or
//!   buckets) is the other axis, in `tracker/evaluate.rs`.

mod answer;
mod builder;

pub(crate) use answer::GroupLabels;
pub use answer::{Answer, Coverage, GroupAnswer};
pub use builder::Query;
pub(crate) use builder::Reading;

/// How a figure is computed from each series' points.
///
/// The first three are PromQL's own functions of a counter, bit for bit as Prometheus
/// computes them (extrapolated to the window's edges; where the page gives a counter's
/// `_created` time, as Prometheus 3.14+ with start timestamps: see
/// [`Query::start_timestamps`]); the next two compare two real points (the one nearest the
/// window's start and the newest) and extrapolate nothing; the EWMA is a running average of
/// the rate over uneven intervals, and the total the increase since the first page. The
/// last two read any series, a gauge's included: its newest value, and its mean over the
/// window.
///
/// # Example
/// ```
/// use chrono::{DateTime, TimeDelta};
/// use promrate::{Estimator, Query, Selector, Tracker};
/// let tokens = Selector::parse("tokens_total")?;
/// let mut tracker = Tracker::new([tokens.clone()]);
/// let at = |s: i64| DateTime::from_timestamp(1_764_000_000 + s, 0).unwrap();
/// for s in 0..=6 {
///     tracker.ingest(&format!("tokens_total {}\n", 100 * s), at(10 * s))?;
/// }
/// let minute = TimeDelta::minutes(1);
/// for estimator in [Estimator::Rate, Estimator::WindowRate, Estimator::Irate] {
///     let query = Query::new(&tokens, estimator).window(minute);
///     assert_eq!(tracker.evaluate(&query)?.value()?, 10.0, "{estimator:?}");
/// }
/// // The EWMA's time constant is the tracker's (Tracker::ewma_time_constant): no window.
/// assert_eq!(tracker.evaluate(&Query::new(&tokens, Estimator::Ewma))?.value()?, 10.0);
/// assert_eq!(tracker.evaluate(&Query::new(&tokens, Estimator::WindowIncrease).window(minute))?.value()?, 600.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Estimator {
    /// PromQL `rate(x[window])`: per second, extrapolated to the window's edges.
    Rate,
    /// PromQL `increase(x[window])`: `rate` times the window.
    Increase,
    /// PromQL `irate(x[window])`: from the last two points in the window.
    Irate,
    /// The increase between the point nearest the window's start and the newest, per
    /// second of the time actually between them ([`crate::series::CounterSeries::window_increase`]).
    WindowRate,
    /// That increase itself: an integer counter gives an integer.
    WindowIncrease,
    /// The EWMA of the rate, each interval weighted by its length
    /// ([`crate::series::CounterSeries::ewma_rate`]; its time constant is the tracker's).
    Ewma,
    /// The increase since the series' first page, through every restart
    /// ([`crate::series::CounterSeries::total_increase`]): tokens since the monitor started.
    /// No window.
    TotalIncrease,
    /// The newest value at or before the evaluation time, of any series (a gauge's reading,
    /// a counter's value). No window.
    Last,
    /// The mean of the points in the window, of any series (a gauge's mean level, such as
    /// requests running): what PromQL's `avg_over_time(x[window])` means, summed.
    Average,
}

impl Estimator {
    /// Its name in messages: PromQL's function name, or what it computes.
    ///
    /// # Example
    /// ```
    /// assert_eq!(promrate::Estimator::Rate.name(), "PromQL rate()");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Estimator::Rate => "PromQL rate()",
            Estimator::Increase => "PromQL increase()",
            Estimator::Irate => "PromQL irate()",
            Estimator::WindowRate => "the window rate",
            Estimator::WindowIncrease => "the window increase",
            Estimator::Ewma => "the EWMA",
            Estimator::TotalIncrease => "the increase since the first page",
            Estimator::Last => "the last value",
            Estimator::Average => "the mean over the window",
        }
    }

    /// Whether it reads a window ([`Query::window`]); the others are running figures or
    /// the newest value.
    pub(crate) fn needs_window(self) -> bool {
        !matches!(self, Estimator::Ewma | Estimator::TotalIncrease | Estimator::Last)
    }
}

/// Which series a query counts.
///
/// # Example
/// ```
/// use chrono::{DateTime, TimeDelta};
/// use promrate::{Estimator, Query, Selector, SeriesScope, Tracker};
/// let tokens = Selector::parse("tokens_total")?;
/// let mut tracker = Tracker::new([tokens.clone()]);
/// let at = |s: i64| DateTime::from_timestamp(1_764_000_000 + s, 0).unwrap();
/// tracker.ingest("tokens_total{engine=\"0\"} 0\ntokens_total{engine=\"1\"} 0\n", at(0))?;
/// tracker.ingest("tokens_total{engine=\"0\"} 100\ntokens_total{engine=\"1\"} 100\n", at(10))?;
/// tracker.ingest("tokens_total{engine=\"0\"} 200\n", at(20))?; // engine 1 is gone
/// let query = Query::new(&tokens, Estimator::WindowRate).window(TimeDelta::seconds(20));
/// assert_eq!(tracker.evaluate(&query)?.value()?, 10.0);
/// // As PromQL counts it, engine 1 keeps its old points until it is dropped.
/// let promql_like = query.scope(SeriesScope::UntilStale);
/// assert_eq!(tracker.evaluate(&promql_like)?.value()?, 20.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum SeriesScope {
    /// Only the series on the newest page (default): a target that stopped stops counting
    /// at once, where its old points would keep its last rate until it is dropped. A
    /// series left out says so ([`crate::NoValue::NotOnNewestPage`]).
    #[default]
    NewestPage,
    /// Every series the tracker still holds, as PromQL counts them: while a series'
    /// points are in the window its figure is computed from them, until
    /// [`Tracker::stale_after`](crate::Tracker::stale_after) drops it.
    UntilStale,
}
