//! [`Query`]: what to ask, built with defaults. The settings of PromQL's functions and of
//! the window estimators are not declared again here: a query takes a
//! [`RangeFunctions`] (with its modifier) and a [`WindowRule`] as they are.

use chrono::{DateTime, TimeDelta, Utc};

use super::{Estimator, SeriesScope};
use crate::promql::{RangeForm, RangeFunctions};
use crate::select::Selector;
use crate::series::WindowRule;

/// What a query reads of each group: the figure itself, or a histogram's quantile, mean or
/// buckets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Reading {
    Value,
    Quantile(f64),
    Mean,
    Buckets,
}

/// What to ask a [`Tracker`](crate::Tracker): a small builder with defaults, like
/// [`Parser`](crate::Parser), answered by [`Tracker::evaluate`](crate::Tracker::evaluate)
/// per group.
///
/// A query reads a figure of each series with its [`Estimator`], and of each group either
/// their sum (the default, as PromQL's `sum by`), or of a histogram the quantile
/// ([`Query::quantile`]), the mean observation ([`Query::mean`]) or the buckets
/// ([`Query::buckets`]), each bucket's figure computed with the same estimator.
///
/// Like the crate's other builders its settings have no getters: what it was built with is
/// what you passed (it says only its selector and estimator; an [`Answer`](crate::Answer)
/// says the time and window it used). Defaults: evaluated at the tracker's newest scrape,
/// one group (no `by`), the newest page's series ([`SeriesScope::NewestPage`]), PromQL
/// 3.x's functions without modifier ([`RangeFunctions::new`]), a window start at most one
/// window further back and no gap ([`WindowRule::new`]), start timestamps read.
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
    /// PromQL's settings (the window is [`Query::window`]'s).
    pub(crate) range: RangeForm,
    /// The window estimators' settings (the window is [`Query::window`]'s).
    pub(crate) rule: Option<WindowRule>,
    pub(crate) start_timestamps: bool,
    pub(crate) reading: Reading,
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
            range: RangeForm::Plain(RangeFunctions::new(TimeDelta::zero())),
            rule: None,
            start_timestamps: true,
            reading: Reading::Value,
        }
    }

    /// The window: PromQL's `[window]`, the span the window estimators compare over, the
    /// span `avg_over_time` averages. Every estimator but [`Estimator::Ewma`],
    /// [`Estimator::TotalIncrease`] and [`Estimator::Last`] needs one. The last of
    /// `window`, [`Query::window_rule`] and [`Query::promql`] says it.
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

    /// The time to evaluate at (default: the tracker's newest scrape, where the last value,
    /// the EWMA and the total read each series' newest point, even if a page's own
    /// timestamps are a little after the time it was read at).
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

    /// PromQL's functions for [`Estimator::Rate`], [`Estimator::Increase`] and
    /// [`Estimator::Irate`], as built: their window, semantics, lookback, and the
    /// `anchored` or `smoothed` modifier (PromQL allows a modifier with `rate` and
    /// `increase` only).
    ///
    /// # Example
    /// ```
    /// use chrono::TimeDelta;
    /// use promrate::promql::{RangeFunctions, Semantics};
    /// use promrate::{Estimator, Query, Selector};
    /// let x = Selector::parse("x_total")?;
    /// // increase(x_total[5m] anchored), as Prometheus 2 would select the window.
    /// let range = RangeFunctions::new(TimeDelta::minutes(5)).semantics(Semantics::Prometheus2);
    /// let query = Query::new(&x, Estimator::Increase).promql(range.anchored());
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn promql(mut self, range: impl Into<RangeForm>) -> Query {
        self.range = range.into();
        self.window = Some(self.range.functions().window());
        self
    }

    /// The rule of [`Estimator::WindowRate`] and [`Estimator::WindowIncrease`], as built:
    /// the window, how much older than it the start may be, and the gap a window does not
    /// reach across.
    ///
    /// # Example
    /// ```
    /// use chrono::TimeDelta;
    /// use promrate::{Estimator, Query, Selector, WindowRule};
    /// let rule = WindowRule::new(TimeDelta::seconds(30)).gap(TimeDelta::seconds(10));
    /// let query = Query::new(&Selector::parse("x_total")?, Estimator::WindowRate).window_rule(rule);
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn window_rule(mut self, rule: WindowRule) -> Query {
        self.window = Some(rule.window);
        self.rule = Some(rule);
        self
    }

    /// Whether PromQL's estimators use the counters' created times (default: yes, where
    /// the page gives `_created` or an OpenMetrics 2.0 `st@`, and for a counter without one
    /// its target's process start time, promrate's addition: see `Tracker::start_time_gauge`):
    /// a counter created (or restarted) inside the window counts from zero at that time, as
    /// Prometheus 3.14+ computes with `--enable-feature=use-start-timestamps`; `false`
    /// computes as a Prometheus without the feature, from the values alone (a restart still
    /// counts from zero, but the time before the first point is extrapolated).
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

    /// Reads the `q`-quantile (0 ≤ q ≤ 1) of the histogram the selector names, as PromQL's
    /// `histogram_quantile(q, sum by (le, ...) (f(x_bucket)))`, each bucket's figure
    /// computed with the estimator (the window increase, or PromQL's `rate` or `increase`,
    /// give the same quantile). A group without a quantile says why: no `+Inf` bucket, no
    /// observation in the window.
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// use promrate::{Estimator, Query, Selector, Tracker};
    /// let ttft = Selector::parse("vllm:time_to_first_token_seconds")?;
    /// let mut tracker = Tracker::new([ttft.clone()]);
    /// let page = |fast: u32, all: u32| format!(
    ///     "# TYPE vllm:time_to_first_token_seconds histogram\n\
    ///      vllm:time_to_first_token_seconds_bucket{{le=\"0.1\"}} {fast}\n\
    ///      vllm:time_to_first_token_seconds_bucket{{le=\"1.0\"}} {all}\n\
    ///      vllm:time_to_first_token_seconds_bucket{{le=\"+Inf\"}} {all}\n\
    ///      vllm:time_to_first_token_seconds_count {all}\n");
    /// let at = |s: i64| DateTime::from_timestamp(1_764_000_000 + s, 0).unwrap();
    /// tracker.ingest(&page(500, 1000), at(0))?;
    /// tracker.ingest(&page(590, 1100), at(60))?; // in the minute: 90 of 100 under 0.1 s
    /// let minute = Query::new(&ttft, Estimator::WindowIncrease).window(TimeDelta::minutes(1));
    /// let p95 = tracker.evaluate(&minute.quantile(0.95))?.value()?;
    /// assert!((p95 - 0.55).abs() < 1e-9); // halfway through (0.1, 1.0]
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn quantile(mut self, q: f64) -> Query {
        self.reading = Reading::Quantile(q);
        self
    }

    /// Reads the mean observation of the histogram (or summary) the selector names:
    /// `sum by (...) (f(x_sum)) / sum by (...) (f(x_count))` with the estimator (over a
    /// window: the mean of the observations made in it).
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// use promrate::{Estimator, Query, Selector, Tracker};
    /// let latency = Selector::parse("e2e_seconds")?;
    /// let mut t = Tracker::new([latency.clone()]);
    /// let at = |s| DateTime::from_timestamp(s, 0).unwrap();
    /// t.ingest("# TYPE e2e_seconds histogram\ne2e_seconds_sum 10\ne2e_seconds_count 4\n", at(0))?;
    /// t.ingest("# TYPE e2e_seconds histogram\ne2e_seconds_sum 13\ne2e_seconds_count 8\n", at(10))?;
    /// let query = Query::new(&latency, Estimator::WindowIncrease).window(TimeDelta::seconds(10)).mean();
    /// assert_eq!(t.evaluate(&query)?.value()?, 0.75); // 3 s over 4 requests
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn mean(mut self) -> Query {
        self.reading = Reading::Mean;
        self
    }

    /// Reads the buckets of the histogram the selector names: each group's
    /// [`GroupAnswer::buckets`](crate::GroupAnswer::buckets) holds every bound's figure
    /// with the estimator (summed over the group's series of that bound), for an SLO's
    /// share under a bound or for combining histograms across trackers; the group's value
    /// is the `+Inf` bucket's.
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// use promrate::{Estimator, Query, Selector, Tracker};
    /// let ttft = Selector::parse("ttft")?;
    /// let mut t = Tracker::new([ttft.clone()]);
    /// let at = |s| DateTime::from_timestamp(s, 0).unwrap();
    /// let page = |a: u32, b: u32| format!("# TYPE ttft histogram\nttft_bucket{{le=\"0.5\"}} {a}\nttft_bucket{{le=\"+Inf\"}} {b}\n");
    /// t.ingest(&page(0, 0), at(0))?;
    /// t.ingest(&page(90, 100), at(10))?;
    /// let answer = t.evaluate(&Query::new(&ttft, Estimator::WindowIncrease).window(TimeDelta::seconds(10)).buckets())?;
    /// let bounds: Vec<(f64, f64)> = answer.groups[0].buckets.iter().map(|b| (b.upper_bound, b.count)).collect();
    /// assert_eq!(bounds, [(0.5, 90.0), (f64::INFINITY, 100.0)]);
    /// assert_eq!(answer.value()?, 100.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn buckets(mut self) -> Query {
        self.reading = Reading::Buckets;
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

    /// PromQL's functions with this query's window.
    pub(crate) fn range_form(&self, window: TimeDelta) -> RangeForm {
        self.range.with_window(window)
    }

    /// The window rule of the window estimators, with this query's window.
    pub(crate) fn window_rule_for(&self, window: TimeDelta) -> WindowRule {
        match self.rule {
            Some(rule) => WindowRule { window, ..rule },
            None => WindowRule::new(window),
        }
    }

    /// This query with another selector and reading (a histogram's parts).
    pub(crate) fn with_selector(&self, selector: Selector) -> Query {
        Query {
            selector,
            reading: Reading::Value,
            ..self.clone()
        }
    }
}
