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
//!   `Estimator::name`, and in `tracker/evaluate.rs`'s `series_figure`.

mod answer;

use chrono::{DateTime, TimeDelta, Utc};

pub use answer::{Answer, Coverage, GroupAnswer, GroupLabels};

use crate::promql::{RangeFunctions, Semantics};
use crate::select::Selector;
use crate::series::WindowRule;

/// How a figure is computed from each counter's points.
///
/// The first three are PromQL's own functions, bit for bit as Prometheus computes them
/// (extrapolated to the window's edges; where the page gives a counter's `_created` time,
/// as Prometheus 3.14+ with start timestamps: see [`Query::start_timestamps`]); the next
/// two compare two real points (the one nearest the window's start and the newest) and
/// extrapolate nothing; the last is a running average of the rate over uneven intervals.
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
    /// second of the time actually between them ([`crate::CounterSeries::window_increase`]).
    WindowRate,
    /// That increase itself: an integer counter gives an integer.
    WindowIncrease,
    /// The EWMA of the rate, each interval weighted by its length
    /// ([`crate::CounterSeries::ewma_rate`]; its time constant is the tracker's).
    Ewma,
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
        }
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

/// A PromQL modifier of [`Estimator::Rate`] and [`Estimator::Increase`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Modifier {
    Anchored,
    Smoothed,
}

impl Modifier {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Modifier::Anchored => "anchored",
            Modifier::Smoothed => "smoothed",
        }
    }
}

/// What to ask a [`Tracker`](crate::Tracker): a small builder with defaults, like
/// [`Parser`](crate::Parser). [`Tracker::evaluate`](crate::Tracker::evaluate) answers it
/// per group; [`Tracker::quantile`](crate::Tracker::quantile) and
/// [`Tracker::mean`](crate::Tracker::mean) read a histogram's buckets, or its `_sum` and
/// `_count`, through the same estimator.
///
/// Like the crate's other builders its settings have no getters: what it was built with is
/// what you passed (it says only its selector and estimator; an [`Answer`] says the time
/// and window it used). Defaults: evaluated at the
/// tracker's newest scrape, one group (no `by`), the newest
/// page's series ([`SeriesScope::NewestPage`]), PromQL 3.x semantics, a window start at
/// most one window further back ([`WindowRule::new`]) and no gap.
///
/// # Example
/// ```
/// use chrono::{DateTime, TimeDelta};
/// use promrate::{Estimator, Query, Selector, Tracker};
/// let tokens = Selector::parse("vllm:generation_tokens_total")?;
/// let mut tracker = Tracker::new([tokens.clone()]);
/// let at = |s: i64| DateTime::from_timestamp(1_764_000_000 + s, 0).unwrap();
/// for s in 0..=6 {
///     let page = format!(
///         "vllm:generation_tokens_total{{engine=\"0\"}} {}\nvllm:generation_tokens_total{{engine=\"1\"}} {}\n",
///         800 * s,
///         400 * s
///     );
///     tracker.ingest(&page, at(10 * s))?;
/// }
/// // sum by (engine) (rate(vllm:generation_tokens_total[1m]))
/// let query = Query::new(&tokens, Estimator::Rate).window(TimeDelta::minutes(1)).by(["engine"]);
/// let answer = tracker.evaluate(&query)?;
/// let per_engine: Vec<(Option<&str>, f64)> =
///     answer.groups.iter().map(|g| (g.label("engine"), g.value.clone().unwrap())).collect();
/// assert_eq!(per_engine, [(Some("0"), 80.0), (Some("1"), 40.0)]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Query {
    pub(crate) selector: Selector,
    pub(crate) estimator: Estimator,
    pub(crate) window: Option<TimeDelta>,
    pub(crate) at: Option<DateTime<Utc>>,
    pub(crate) by: Vec<String>,
    pub(crate) scope: SeriesScope,
    pub(crate) semantics: Semantics,
    pub(crate) modifier: Option<Modifier>,
    pub(crate) lookback: Option<TimeDelta>,
    pub(crate) slack: Option<TimeDelta>,
    pub(crate) gap: Option<TimeDelta>,
    pub(crate) start_timestamps: bool,
}

impl Query {
    /// A query of the series `selector` picks (a histogram's or summary's name picks its
    /// `_bucket`, `_sum` and `_count` series too), computed with `estimator`.
    ///
    /// # Example
    /// ```
    /// use promrate::{Estimator, Query, Selector};
    /// let query = Query::new(&Selector::parse("tokens_total")?, Estimator::Ewma);
    /// assert_eq!(query.estimator(), Estimator::Ewma);
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn new(selector: &Selector, estimator: Estimator) -> Query {
        Query {
            selector: selector.clone(),
            estimator,
            window: None,
            at: None,
            by: Vec::new(),
            scope: SeriesScope::default(),
            semantics: Semantics::default(),
            modifier: None,
            lookback: None,
            slack: None,
            gap: None,
            start_timestamps: true,
        }
    }

    /// The window: PromQL's `[window]`, or the span the window estimators compare over.
    /// Every estimator but [`Estimator::Ewma`] needs one.
    ///
    /// # Example
    /// ```
    /// use promrate::{Estimator, Query, Selector};
    /// let query = Query::new(&Selector::parse("x_total")?, Estimator::Rate).window(chrono::TimeDelta::minutes(5));
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn window(mut self, window: TimeDelta) -> Query {
        self.window = Some(window);
        self
    }

    /// The time to evaluate at (default: the tracker's newest scrape).
    ///
    /// # Example
    /// ```
    /// use promrate::{Estimator, Query, Selector};
    /// let t = chrono::DateTime::from_timestamp(1_764_000_000, 0).unwrap();
    /// let query = Query::new(&Selector::parse("x_total")?, Estimator::Irate).at(t);
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn at(mut self, at: DateTime<Utc>) -> Query {
        self.at = Some(at);
        self
    }

    /// Groups by these labels, as PromQL's `sum by (...)` (a series without one of them
    /// reads it as ""). Default: one group of everything.
    ///
    /// # Example
    /// ```
    /// use promrate::{Estimator, Query, Selector};
    /// let query = Query::new(&Selector::parse("x_total")?, Estimator::Ewma).by(["engine", "model_name"]);
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn by<S: Into<String>>(mut self, labels: impl IntoIterator<Item = S>) -> Query {
        self.by = labels.into_iter().map(Into::into).collect();
        self
    }

    /// Which series count (default [`SeriesScope::NewestPage`]).
    ///
    /// # Example
    /// ```
    /// use promrate::{Estimator, Query, Selector, SeriesScope};
    /// let query = Query::new(&Selector::parse("x_total")?, Estimator::Rate).scope(SeriesScope::UntilStale);
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn scope(mut self, scope: SeriesScope) -> Query {
        self.scope = scope;
        self
    }

    /// PromQL's semantics for the PromQL estimators (default 3.x).
    ///
    /// # Example
    /// ```
    /// use promrate::{promql::Semantics, Estimator, Query, Selector};
    /// let query = Query::new(&Selector::parse("x_total")?, Estimator::Rate).semantics(Semantics::Prometheus2);
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn semantics(mut self, semantics: Semantics) -> Query {
        self.semantics = semantics;
        self
    }

    /// PromQL 3.7's `anchored` modifier (with [`Estimator::Rate`] and
    /// [`Estimator::Increase`] only): from the last point at or before the window's start,
    /// within the lookback, to the last point in it, not extrapolated.
    ///
    /// # Example
    /// ```
    /// use promrate::{Estimator, Query, Selector};
    /// let query = Query::new(&Selector::parse("x_total")?, Estimator::Increase).anchored();
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn anchored(mut self) -> Query {
        self.modifier = Some(Modifier::Anchored);
        self
    }

    /// PromQL 3.7's `smoothed` modifier (with [`Estimator::Rate`] and
    /// [`Estimator::Increase`] only): values interpolated at the window's edges.
    ///
    /// # Example
    /// ```
    /// use promrate::{Estimator, Query, Selector};
    /// let query = Query::new(&Selector::parse("x_total")?, Estimator::Rate).smoothed();
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn smoothed(mut self) -> Query {
        self.modifier = Some(Modifier::Smoothed);
        self
    }

    /// The lookback of `anchored` and `smoothed` (default 5 minutes, as Prometheus').
    ///
    /// # Example
    /// ```
    /// use promrate::{Estimator, Query, Selector};
    /// let query = Query::new(&Selector::parse("x_total")?, Estimator::Rate).smoothed().lookback(chrono::TimeDelta::minutes(1));
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn lookback(mut self, lookback: TimeDelta) -> Query {
        self.lookback = Some(lookback);
        self
    }

    /// For the window estimators: how much older than the window its start may be
    /// ([`WindowRule::slack`]; default: the window again).
    ///
    /// # Example
    /// ```
    /// use promrate::{Estimator, Query, Selector};
    /// let query = Query::new(&Selector::parse("x_total")?, Estimator::WindowRate).slack(chrono::TimeDelta::seconds(2));
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn slack(mut self, slack: TimeDelta) -> Query {
        self.slack = Some(slack);
        self
    }

    /// For the window estimators: two points further apart than `gap` are an outage the
    /// window does not reach across ([`WindowRule::gap`]; default: none is).
    ///
    /// # Example
    /// ```
    /// use promrate::{Estimator, Query, Selector};
    /// let query = Query::new(&Selector::parse("x_total")?, Estimator::WindowRate).gap(chrono::TimeDelta::seconds(10));
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn gap(mut self, gap: TimeDelta) -> Query {
        self.gap = Some(gap);
        self
    }

    /// Whether PromQL's estimators use the counters' created times (default: yes, where
    /// the page gives `_created`, and for a counter without one its target's process start
    /// time, promrate's addition: see `Tracker::start_time_gauge`): a counter created (or
    /// restarted) inside the window counts
    /// from zero at that time, as Prometheus 3.14+ computes with
    /// `--enable-feature=use-start-timestamps`; `false` computes as a Prometheus without the
    /// feature, from the values alone (a restart still counts from zero, but the time before
    /// the first point is extrapolated).
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// use promrate::{Estimator, Query, Selector, Tracker};
    /// let tokens = Selector::parse("tokens_total")?;
    /// let mut tracker = Tracker::new([tokens.clone()]);
    /// let at = |s: i64| DateTime::from_timestamp(1_764_000_000 + s, 0).unwrap();
    /// let page = |v: u32, created: i64| format!("# TYPE tokens counter\ntokens_total {v}\ntokens_created {created}\n");
    /// tracker.ingest(&page(50, at(0).timestamp()), at(30))?;
    /// // Restarted at 35 s and already past 50: only the created time tells.
    /// tracker.ingest(&page(80, at(35).timestamp()), at(40))?;
    /// let minute = Query::new(&tokens, Estimator::Increase).window(TimeDelta::minutes(1));
    /// let with_created = tracker.evaluate(&minute)?.value()?;
    /// let values_only = tracker.evaluate(&minute.start_timestamps(false))?.value()?;
    /// assert!(with_created > 80.0 && values_only < 80.0, "{with_created} {values_only}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn start_timestamps(mut self, on: bool) -> Query {
        self.start_timestamps = on;
        self
    }

    /// The selector.
    ///
    /// # Example
    /// ```
    /// use promrate::{Estimator, Query, Selector};
    /// let query = Query::new(&Selector::parse("x_total")?, Estimator::Ewma);
    /// assert_eq!(query.selector().metric_name(), Some("x_total"));
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn selector(&self) -> &Selector {
        &self.selector
    }

    /// The estimator.
    ///
    /// # Example
    /// ```
    /// use promrate::{Estimator, Query, Selector};
    /// assert_eq!(Query::new(&Selector::parse("x_total")?, Estimator::Irate).estimator(), Estimator::Irate);
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn estimator(&self) -> Estimator {
        self.estimator
    }

    /// PromQL's range functions for this query's window and settings.
    pub(crate) fn range_functions(&self, window: TimeDelta) -> RangeFunctions {
        let mut range = RangeFunctions::new(window).semantics(self.semantics);
        if let Some(lookback) = self.lookback {
            range = range.lookback(lookback);
        }
        range
    }

    /// The window rule of the window estimators.
    pub(crate) fn window_rule(&self, window: TimeDelta) -> WindowRule {
        let mut rule = WindowRule::new(window);
        if let Some(slack) = self.slack {
            rule = rule.slack(slack);
        }
        if let Some(gap) = self.gap {
            rule = rule.gap(gap);
        }
        rule
    }

    /// This query with another selector (a histogram's parts).
    pub(crate) fn with_selector(&self, selector: Selector) -> Query {
        Query {
            selector,
            ..self.clone()
        }
    }
}
