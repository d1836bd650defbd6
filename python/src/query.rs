//! `promrate.Query` and what a tracker answers (`Answer`, `GroupAnswer`, `Coverage`,
//! `NoValue`): the library's front door, converted.

use chrono::{DateTime, TimeDelta, Utc};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::convert::{py_repr, seconds_text, time_text, Instant, Many, Span};
use crate::parse::float_repr;
use crate::promql::Semantics;
use crate::select::SelectorArg;

/// How a figure is computed from each counter's points: PromQL's `RATE`, `INCREASE` and
/// `IRATE` (bit for bit as Prometheus computes them, extrapolated to the window's edges);
/// `WINDOW_RATE` and `WINDOW_INCREASE` (between the scrape nearest the window's start and
/// the newest, not extrapolated); `EWMA` (a running average of the rate; its time constant
/// is the tracker's `ewma_time_constant`, so it takes no window); `TOTAL_INCREASE` (what a
/// counter counted since its first page, through every restart); `LAST` (the newest
/// value: a gauge's reading); `AVERAGE` (the mean of the points in the window, as PromQL's
/// `avg_over_time`: a gauge's mean level). `TOTAL_INCREASE` and `LAST` read no window: one
/// given is not used.
///
/// >>> import promrate
/// >>> promrate.Estimator.WINDOW_RATE, promrate.Estimator.RATE.description
/// (Estimator.WINDOW_RATE, 'PromQL rate()')
#[pyclass(eq, frozen, hash, from_py_object, module = "promrate")]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum Estimator {
    #[pyo3(name = "RATE")]
    Rate,
    #[pyo3(name = "INCREASE")]
    Increase,
    #[pyo3(name = "IRATE")]
    Irate,
    #[pyo3(name = "WINDOW_RATE")]
    WindowRate,
    #[pyo3(name = "WINDOW_INCREASE")]
    WindowIncrease,
    #[pyo3(name = "EWMA")]
    Ewma,
    #[pyo3(name = "TOTAL_INCREASE")]
    TotalIncrease,
    #[pyo3(name = "LAST")]
    Last,
    #[pyo3(name = "AVERAGE")]
    Average,
}

impl Estimator {
    fn rust(self) -> promrate::Estimator {
        match self {
            Estimator::Rate => promrate::Estimator::Rate,
            Estimator::Increase => promrate::Estimator::Increase,
            Estimator::Irate => promrate::Estimator::Irate,
            Estimator::WindowRate => promrate::Estimator::WindowRate,
            Estimator::WindowIncrease => promrate::Estimator::WindowIncrease,
            Estimator::Ewma => promrate::Estimator::Ewma,
            Estimator::TotalIncrease => promrate::Estimator::TotalIncrease,
            Estimator::Last => promrate::Estimator::Last,
            Estimator::Average => promrate::Estimator::Average,
        }
    }
}

#[pymethods]
impl Estimator {
    /// What it computes, as messages name it ('PromQL rate()', 'the window rate', ...).
    #[getter]
    fn description(&self) -> &'static str {
        self.rust().name()
    }
}

/// Which series a query counts: `NEWEST_PAGE` (default: a series missing from the newest
/// page stops counting at once, and its group says so) or `UNTIL_STALE` (as PromQL counts
/// them: while their points are in the window, until the tracker drops them).
///
/// >>> import promrate
/// >>> promrate.SeriesScope.UNTIL_STALE
/// SeriesScope.UNTIL_STALE
#[pyclass(eq, frozen, hash, from_py_object, module = "promrate")]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum SeriesScope {
    #[pyo3(name = "NEWEST_PAGE")]
    NewestPage,
    #[pyo3(name = "UNTIL_STALE")]
    UntilStale,
}

/// What to ask a `Tracker`: what (a selector: a `Selector` or its text), how (an
/// `Estimator`), over what (`window`: a timedelta or seconds; `at`: an aware datetime or
/// Unix seconds, default the tracker's newest scrape), grouped `by` labels (as PromQL's
/// `sum by (...)`), which series count (`scope`: a `SeriesScope`), PromQL's `semantics` and
/// `modifier` ('anchored' or 'smoothed', with RATE and INCREASE only) and its `lookback`,
/// and for the window estimators the `slack` (how much older than the window its start may
/// be, default the window again) and the `gap` (two scrapes further apart are an outage a
/// window does not reach across). Building one checks its arguments (a selector's text is
/// parsed); whether a tracker can answer it, `Tracker.evaluate` says.
///
/// >>> import promrate
/// >>> promrate.Query("vllm:generation_tokens_total", promrate.Estimator.RATE, window=60, by=["engine"])
/// Query('vllm:generation_tokens_total', Estimator.RATE, window=60 s, by=['engine'])
#[pyclass(frozen, module = "promrate")]
pub struct Query {
    pub inner: promrate::Query,
    described: String,
}

#[pymethods]
impl Query {
    #[new]
    #[pyo3(
        signature = (selector, estimator, window = None, *, at = None, by = Many(Vec::new()), scope = SeriesScope::NewestPage, semantics = Semantics::Prometheus3, modifier = None, lookback = None, slack = None, gap = None, start_timestamps = true),
        text_signature = "(selector, estimator, window=None, *, at=None, by=(), scope=..., semantics=..., modifier=None, lookback=None, slack=None, gap=None, start_timestamps=True)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        selector: SelectorArg,
        estimator: Estimator,
        window: Option<Span>,
        at: Option<Instant>,
        by: Many<String>,
        scope: SeriesScope,
        semantics: Semantics,
        modifier: Option<&str>,
        lookback: Option<Span>,
        slack: Option<Span>,
        gap: Option<Span>,
        start_timestamps: bool,
    ) -> PyResult<Self> {
        let SelectorArg {
            selector: parsed,
            text,
        } = selector;
        let mut described = format!(
            "Query({}, Estimator.{}",
            py_repr(py, &text)?,
            estimator_name(estimator)
        );
        let mut query = promrate::Query::new(&parsed, estimator.rust())
            .scope(match scope {
                SeriesScope::NewestPage => promrate::SeriesScope::NewestPage,
                SeriesScope::UntilStale => promrate::SeriesScope::UntilStale,
            })
            .start_timestamps(start_timestamps);
        if let Some(Span(window)) = window {
            query = query
                .promql(promql_functions(window, semantics, modifier, lookback)?)
                .window_rule(window_rule(window, slack, gap));
            described.push_str(&format!(", window={}", seconds_text(window)));
        } else if modifier.is_some() || lookback.is_some() || slack.is_some() || gap.is_some() {
            return Err(PyValueError::new_err(
                "modifier=, lookback=, slack= and gap= shape a window: give window= too.",
            ));
        }
        if let Some(Instant(at)) = at {
            query = query.at(at);
            described.push_str(&format!(", at={}", time_text(at)));
        }
        let Many(by) = by;
        if !by.is_empty() {
            described.push_str(&format!(", by={}", PyList::new(py, &by)?.repr()?));
            query = query.by(by);
        }
        if scope == SeriesScope::UntilStale {
            described.push_str(", scope=SeriesScope.UNTIL_STALE");
        }
        if !start_timestamps {
            described.push_str(", start_timestamps=False");
        }
        if semantics == Semantics::Prometheus2 {
            described.push_str(", semantics=Semantics.PROMETHEUS2");
        }
        if let Some(modifier) = modifier {
            described.push_str(&format!(", modifier='{modifier}'"));
        }
        for (name, value) in [("lookback", lookback), ("slack", slack), ("gap", gap)] {
            if let Some(Span(d)) = value {
                described.push_str(&format!(", {name}={}", seconds_text(d)));
            }
        }
        described.push(')');
        Ok(Query {
            inner: query,
            described,
        })
    }

    /// The estimator.
    #[getter]
    fn estimator(&self) -> Estimator {
        match self.inner.estimator() {
            promrate::Estimator::Rate => Estimator::Rate,
            promrate::Estimator::Increase => Estimator::Increase,
            promrate::Estimator::Irate => Estimator::Irate,
            promrate::Estimator::WindowRate => Estimator::WindowRate,
            promrate::Estimator::WindowIncrease => Estimator::WindowIncrease,
            _ => Estimator::Ewma,
        }
    }

    /// The selector, in PromQL syntax as the library writes it.
    #[getter]
    fn selector(&self) -> String {
        self.inner.selector().to_string()
    }

    fn __repr__(&self) -> &str {
        &self.described
    }
}

fn estimator_name(e: Estimator) -> &'static str {
    match e {
        Estimator::Rate => "RATE",
        Estimator::Increase => "INCREASE",
        Estimator::Irate => "IRATE",
        Estimator::WindowRate => "WINDOW_RATE",
        Estimator::WindowIncrease => "WINDOW_INCREASE",
        Estimator::Ewma => "EWMA",
        Estimator::TotalIncrease => "TOTAL_INCREASE",
        Estimator::Last => "LAST",
        Estimator::Average => "AVERAGE",
    }
}

/// Why a figure has no value: `kind` (a name such as 'too_few_scrapes', 'no_series',
/// 'not_a_counter', 'not_on_newest_page', 'one_point_since_gap', 'ewma_not_started',
/// 'no_observations', ...), the library's `message` (also `str(reason)`), and `details`
/// (the reason's fields: times as datetimes, durations as timedeltas).
///
/// >>> import promrate
/// >>> tracker = promrate.Tracker(["tokens_total"])
/// >>> _ = tracker.ingest("tokens_total 100\n", at=1_764_000_000)
/// >>> answer = tracker.evaluate(promrate.Query("tokens_total", promrate.Estimator.WINDOW_RATE, window=10))
/// >>> answer.value is None, answer.reason.kind, answer.reason.details["found"]
/// (True, 'too_few_scrapes', 1)
/// >>> print(answer.reason)
/// 1 scrape(s) from 2025-11-24T15:59:40Z to 2025-11-24T16:00:00Z (the window and its slack); a rate or an increase needs 2
#[pyclass(frozen, module = "promrate")]
pub struct NoValue {
    /// What kind of reason.
    #[pyo3(get)]
    kind: &'static str,
    /// The library's message.
    #[pyo3(get)]
    message: String,
    /// The reason's fields.
    #[pyo3(get)]
    details: Py<PyDict>,
}

#[pymethods]
impl NoValue {
    fn __str__(&self) -> &str {
        &self.message
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "NoValue(kind='{}', message={})",
            self.kind,
            py_repr(py, &self.message)?
        ))
    }
}

impl NoValue {
    pub fn new(py: Python<'_>, why: &promrate::NoValue) -> PyResult<Py<NoValue>> {
        use promrate::NoValue as N;
        let details = PyDict::new(py);
        let kind = match why {
            N::NoSeries { selector, nearest } => {
                details.set_item("selector", selector)?;
                details.set_item("nearest", nearest)?;
                "no_series"
            }
            N::NoScrapes => "no_scrapes",
            N::NotACounter { name } => {
                details.set_item("name", name)?;
                "not_a_counter"
            }
            N::NotOnNewestPage { last_seen } => {
                details.set_item("last_seen", last_seen)?;
                "not_on_newest_page"
            }
            N::TooFewPoints {
                in_window,
                start,
                end,
                open_left,
            } => {
                details.set_item("in_window", in_window)?;
                details.set_item("start", start)?;
                details.set_item("end", end)?;
                details.set_item("open_left", open_left)?;
                "too_few_points"
            }
            N::OnePointSinceGap { since } => {
                details.set_item("since", since)?;
                "one_point_since_gap"
            }
            N::OutOfOrder { index } => {
                details.set_item("index", index)?;
                "out_of_order"
            }
            N::NoAnchor { lookback } => {
                details.set_item("lookback", lookback)?;
                "no_anchor"
            }
            N::EwmaNotStarted => "ewma_not_started",
            N::AsOfNewestPoint { figure, at, newest } => {
                details.set_item("figure", figure)?;
                details.set_item("at", at)?;
                details.set_item("newest", newest)?;
                "as_of_newest_point"
            }
            N::NoPoint { from, to } => {
                details.set_item("from", from)?;
                details.set_item("to", to)?;
                "no_point"
            }
            N::NoBuckets { buckets, has_inf } => {
                details.set_item("buckets", buckets)?;
                details.set_item("has_inf", has_inf)?;
                "no_buckets"
            }
            N::NoObservations => "no_observations",
            N::NoLabelMatch {
                selector,
                label,
                values,
            } => {
                details.set_item("selector", selector)?;
                details.set_item("label", label)?;
                details.set_item("values", values)?;
                "no_label_match"
            }
            N::TooFewScrapes { found, from, to } => {
                details.set_item("found", found)?;
                details.set_item("from", from)?;
                details.set_item("to", to)?;
                "too_few_scrapes"
            }
            N::ErraticCounter {
                drops,
                start_went_back,
            } => {
                details.set_item("drops", drops)?;
                details.set_item("start_went_back", start_went_back)?;
                "erratic_counter"
            }
            N::NativeHistogram { name } => {
                details.set_item("name", name)?;
                "native_histogram"
            }
            N::SeveralGroups { groups } => {
                details.set_item("groups", groups)?;
                "several_groups"
            }
            _ => "other",
        };
        Py::new(
            py,
            NoValue {
                kind,
                message: why.to_string(),
                details: details.unbind(),
            },
        )
    }
}

/// What time a figure's points cover: `start` and `end` (the oldest and newest points
/// compared), `span` (the longest span of one series, a timedelta), and `shortened`: why
/// that is shorter than the window asked ('since_first_point', 'retention', 'after_gap'),
/// or None.
///
/// >>> import promrate
/// >>> tracker = promrate.Tracker(["t_total"])
/// >>> _ = tracker.ingest("t_total 0\n", at=0)
/// >>> _ = tracker.ingest("t_total 50\n", at=10)
/// >>> tracker.evaluate(promrate.Query("t_total", promrate.Estimator.WINDOW_RATE, window=60)).groups[0].coverage
/// Coverage(start=1970-01-01T00:00:00Z, end=1970-01-01T00:00:10Z, span=10 s, shortened='since_first_point')
#[pyclass(frozen, module = "promrate")]
pub struct Coverage {
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    span: TimeDelta,
    /// Why the span is shorter than the window, or None.
    #[pyo3(get)]
    shortened: Option<&'static str>,
}

#[pymethods]
impl Coverage {
    /// The oldest point compared.
    #[getter]
    fn start(&self) -> DateTime<Utc> {
        self.start
    }

    /// The newest point compared.
    #[getter]
    fn end(&self) -> DateTime<Utc> {
        self.end
    }

    /// The longest span of one series.
    #[getter]
    fn span(&self) -> TimeDelta {
        self.span
    }

    fn __repr__(&self) -> String {
        let shortened = self
            .shortened
            .map(|s| format!("'{s}'"))
            .unwrap_or_else(|| "None".into());
        format!(
            "Coverage(start={}, end={}, span={}, shortened={shortened})",
            time_text(self.start),
            time_text(self.end),
            seconds_text(self.span)
        )
    }
}

impl Coverage {
    fn new(c: &promrate::Coverage) -> Coverage {
        Coverage {
            start: c.start,
            end: c.end,
            span: c.span,
            shortened: c.shortened.map(|s| match s {
                promrate::Shortened::SinceFirstPoint => "since_first_point",
                promrate::Shortened::Retention => "retention",
                promrate::Shortened::AfterGap => "after_gap",
                _ => "other",
            }),
        }
    }
}

/// One group of an `Answer`: its `labels` (a dict of the `by` labels; '' where its series
/// have none), its `value` (a float), or None and the `reason` (a `NoValue`), how many
/// `series` gave it, and what time their points cover (`coverage`; None for the EWMA).
///
/// >>> import promrate
/// >>> tracker = promrate.Tracker(["kv_usage"])
/// >>> _ = tracker.ingest('kv_usage{engine="0"} 0.25\n', at=1)
/// >>> [group] = tracker.evaluate(promrate.Query("kv_usage", promrate.Estimator.EWMA, by=["engine"])).groups
/// >>> group
/// GroupAnswer(labels={'engine': '0'}, value=None, reason=not_a_counter, series=0)
/// >>> print(group.reason)
/// `kv_usage` is not a counter
#[pyclass(frozen, module = "promrate")]
pub struct GroupAnswer {
    /// The `by` labels and their values.
    #[pyo3(get)]
    labels: Py<PyDict>,
    /// The figure, or None (see `reason`).
    #[pyo3(get)]
    value: Option<f64>,
    /// Why there is no value, or None.
    #[pyo3(get)]
    reason: Option<Py<NoValue>>,
    /// How many series gave the figure.
    #[pyo3(get)]
    series: usize,
    /// What time the points cover, or None.
    #[pyo3(get)]
    coverage: Option<Py<Coverage>>,
}

#[pymethods]
impl GroupAnswer {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let value = match (&self.value, &self.reason) {
            (Some(v), _) => format!("value={}", float_repr(py, *v)?),
            (None, Some(why)) => format!("value=None, reason={}", why.bind(py).get().kind),
            (None, None) => "value=None".into(),
        };
        Ok(format!(
            "GroupAnswer(labels={}, {value}, series={})",
            self.labels.bind(py).repr()?,
            self.series
        ))
    }
}

impl GroupAnswer {
    fn new(py: Python<'_>, g: &promrate::GroupAnswer) -> PyResult<GroupAnswer> {
        let labels = PyDict::new(py);
        for (name, value) in &g.labels {
            labels.set_item(&**name, &**value)?;
        }
        let (value, reason) = match &g.value {
            Ok(v) => (Some(*v), None),
            Err(why) => (None, Some(NoValue::new(py, why)?)),
        };
        let coverage = match &g.coverage {
            Some(c) => Some(Py::new(py, Coverage::new(c))?),
            None => None,
        };
        Ok(GroupAnswer {
            labels: labels.unbind(),
            value,
            reason,
            series: g.series,
            coverage,
        })
    }
}

/// A tracker's answer: `groups` (one `GroupAnswer` per group of the `by` labels, sorted by
/// their values), the time it was evaluated `at`, the `window` asked (None for the EWMA),
/// and for a query without `by` its `value` (a float, or None with the `reason`).
/// `answer.group("0")` is the group whose `by` labels have these values.
///
/// >>> import promrate
/// >>> tracker = promrate.Tracker(["t_total"])
/// >>> _ = tracker.ingest('t_total{engine="0"} 0\nt_total{engine="1"} 0\n', at=0)
/// >>> _ = tracker.ingest('t_total{engine="0"} 30\nt_total{engine="1"} 70\n', at=10)
/// >>> answer = tracker.evaluate(promrate.Query("t_total", promrate.Estimator.WINDOW_INCREASE, window=10, by=["engine"]))
/// >>> answer.groups
/// [GroupAnswer(labels={'engine': '0'}, value=30.0, series=1), GroupAnswer(labels={'engine': '1'}, value=70.0, series=1)]
/// >>> answer.group("1").value, answer.group("2")
/// (70.0, None)
#[pyclass(frozen, module = "promrate")]
pub struct Answer {
    inner: promrate::Answer,
    /// One per group.
    #[pyo3(get)]
    groups: Py<PyList>,
    /// Why the answer has no value (see `value`), or None.
    #[pyo3(get)]
    reason: Option<Py<NoValue>>,
}

#[pymethods]
impl Answer {
    /// The value of an answer of one group (a query without `by`), or None (see
    /// `reason`; with several groups it is 'several_groups': read `groups`).
    #[getter]
    fn value(&self) -> Option<f64> {
        self.inner.value().ok()
    }

    /// The time the query was evaluated at (its own, or the tracker's last scrape), or
    /// None when it set none and nothing was scraped yet.
    #[getter]
    fn at(&self) -> Option<DateTime<Utc>> {
        self.inner.at
    }

    /// The window asked, or None.
    #[getter]
    fn window(&self) -> Option<TimeDelta> {
        self.inner.window
    }

    /// `by` labels that none of the series has (each group reads them as ""): usually a
    /// misspelling.
    #[getter]
    fn missing_labels(&self) -> Vec<String> {
        self.inner.missing_labels.clone()
    }

    /// The group whose `by` labels have these values (in the order asked), or None.
    #[pyo3(signature = (*values))]
    fn group(&self, py: Python<'_>, values: Vec<String>) -> Option<Py<PyAny>> {
        let values: Vec<&str> = values.iter().map(String::as_str).collect();
        let found = self.inner.group(&values)?;
        let index = self.inner.groups.iter().position(|g| std::ptr::eq(g, found))?;
        self.groups.bind(py).get_item(index).ok().map(Bound::unbind)
    }

    fn __len__(&self) -> usize {
        self.inner.groups.len()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let window = self
            .inner
            .window
            .map(|w| format!(", window={}", seconds_text(w)))
            .unwrap_or_default();
        let what = if self.inner.groups.len() == 1 && self.inner.groups[0].labels.is_empty() {
            match &self.inner.groups[0].value {
                Ok(v) => format!("value={}", float_repr(py, *v)?),
                Err(why) => format!("value=None, reason={}", py_repr(py, &why.to_string())?),
            }
        } else if let (true, Some(why)) = (self.inner.groups.is_empty(), &self.inner.empty) {
            format!("groups=[], reason={}", py_repr(py, &why.to_string())?)
        } else {
            format!("groups={}", self.groups.bind(py).repr()?)
        };
        let at = self.inner.at.map_or_else(|| "None".to_string(), time_text);
        Ok(format!("Answer({what}, at={at}{window})"))
    }
}

impl Answer {
    pub fn new(py: Python<'_>, answer: promrate::Answer) -> PyResult<Answer> {
        let groups = answer
            .groups
            .iter()
            .map(|g| Py::new(py, GroupAnswer::new(py, g)?))
            .collect::<PyResult<Vec<_>>>()?;
        let reason = match answer.value() {
            Ok(_) => None,
            Err(why) => Some(NoValue::new(py, &why)?),
        };
        Ok(Answer {
            inner: answer,
            groups: PyList::new(py, groups)?.unbind(),
            reason,
        })
    }
}

/// PromQL's functions as the Query's keywords shape them.
fn promql_functions(
    window: chrono::TimeDelta,
    semantics: Semantics,
    modifier: Option<&str>,
    lookback: Option<Span>,
) -> PyResult<promrate::promql::RangeForm> {
    let mut range = promrate::promql::RangeFunctions::new(window).semantics(semantics.rust());
    if let Some(Span(lookback)) = lookback {
        range = range.lookback(lookback);
    }
    match modifier {
        None => Ok(range.into()),
        Some("anchored") => Ok(range.anchored().into()),
        Some("smoothed") => Ok(range.smoothed().into()),
        Some(other) => Err(PyValueError::new_err(format!(
            "modifier is 'anchored', 'smoothed' or None, not {other:?}."
        ))),
    }
}

/// The window estimators' rule as the Query's keywords shape it.
fn window_rule(window: chrono::TimeDelta, slack: Option<Span>, gap: Option<Span>) -> promrate::WindowRule {
    let mut rule = promrate::WindowRule::new(window);
    if let Some(Span(slack)) = slack {
        rule = rule.slack(slack);
    }
    if let Some(Span(gap)) = gap {
        rule = rule.gap(gap);
    }
    rule
}
