//! `promrate.Tracker` and what an ingest reports (`IngestReport`, `ResetEvent`,
//! `Refusal`, `Unmatched`).

use chrono::{DateTime, Utc};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::convert::{count, format_of, page_bytes, positive, py_repr, time_text, Instant, Many, Page, Span};
use crate::errors::{ingest_error, parse_error, query_error};
use crate::query::{Answer, Query};
use crate::select::SelectorArg;

/// Follows every series its selectors pick (a `Selector` or its text; none: every series),
/// scrape after scrape, across restarts: `ingest(page, at)` each page with the time it was
/// scraped (an aware datetime or Unix seconds), then ask with a `Query`: `evaluate`
/// (each group's value or why it has none), `quantile(q, query)` (a histogram's, over each
/// bucket's figure) and `mean(query)` (a histogram's or summary's `_sum` over `_count`).
///
/// Settings, all optional: `retention` (history kept per series, default 10 minutes; a
/// query's window may not be longer), `stale_after` (scrapes a series may be missing
/// before it is dropped, default 5), `ewma_time_constant` (default 30 s),
/// `ewma_restart_after` (an interval longer than this restarts the EWMA), `max_series`,
/// `infer_counters` (read untyped families by their names, as through `/federate`),
/// `normalize_names` (':' and '_' alike in names), `start_time_skew` (how far servers'
/// clocks may be from the scrape times: a new start time or `_created` more than this
/// before the scrape that last showed the old process is a second process, not a
/// restart; default: no clock compared with another), `honor_timestamps` (default true:
/// false records every sample at its page's time, as Prometheus' `honor_timestamps:
/// false`, for a server whose own times are off). `vllm_preset()` sets what vLLM's and
/// SGLang's pages need; `read_as(content_type)` the format of the pages to come.
///
/// `ingest` releases the GIL while it reads a page, so other threads run meanwhile; a
/// tracker itself serves one call at a time (another call on it during an `ingest` raises
/// `RuntimeError`: give each thread its own tracker, or a lock).
///
/// >>> import promrate
/// >>> tokens = promrate.Selector("vllm:generation_tokens_total")
/// >>> tracker = promrate.Tracker([tokens])
/// >>> tracker.ingest("vllm:generation_tokens_total 5000\n", at=1_764_000_000)
/// IngestReport(samples=1, new_series=1)
/// >>> # The server restarted in between: 300 new tokens, not -4700.
/// >>> tracker.ingest("vllm:generation_tokens_total 300\n", at=1_764_000_010)
/// IngestReport(samples=1, resets=[ResetEvent(name='vllm:generation_tokens_total', labels={}, cause='value_dropped')])
/// >>> tracker.evaluate(promrate.Query(tokens, promrate.Estimator.WINDOW_RATE, window=10)).value
/// 30.0
/// >>> tracker
/// Tracker(['vllm:generation_tokens_total'], series=1, scrapes=2, last_scrape=2025-11-24T16:00:10Z)
#[pyclass(module = "promrate")]
pub struct Tracker {
    inner: promrate::Tracker,
    /// The selectors as given, for the repr.
    given: Vec<String>,
}

#[pymethods]
impl Tracker {
    #[new]
    #[pyo3(
        signature = (selectors = Many(Vec::new()), *, retention = None, stale_after = None, ewma_time_constant = None, ewma_restart_after = None, max_series = None, infer_counters = false, normalize_names = false, start_time_skew = None, honor_timestamps = true),
        text_signature = "(selectors=(), *, retention=None, stale_after=None, ewma_time_constant=None, ewma_restart_after=None, max_series=None, infer_counters=False, normalize_names=False, start_time_skew=None, honor_timestamps=True)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn new(
        selectors: Many<SelectorArg>,
        retention: Option<Span>,
        stale_after: Option<i64>,
        ewma_time_constant: Option<Span>,
        ewma_restart_after: Option<Span>,
        max_series: Option<i64>,
        infer_counters: bool,
        normalize_names: bool,
        start_time_skew: Option<Span>,
        honor_timestamps: bool,
    ) -> PyResult<Self> {
        let Many(selectors) = selectors;
        let mut parsed = Vec::with_capacity(selectors.len());
        let mut given = Vec::with_capacity(selectors.len());
        for selector in selectors {
            let SelectorArg { selector, text } = selector;
            given.push(text);
            parsed.push(selector);
        }
        // Checked here, each named: a negative count or duration would otherwise be an
        // OverflowError without a name, or a tracker whose every query is refused later.
        let mut inner = promrate::Tracker::new(parsed);
        if let Some(d) = positive("retention", retention)? {
            inner.retention(d);
        }
        if let Some(n) = count("stale_after", stale_after)? {
            inner.stale_after(u32::try_from(n).unwrap_or(u32::MAX));
        }
        if let Some(d) = positive("ewma_time_constant", ewma_time_constant)? {
            inner.ewma_time_constant(d);
        }
        if let Some(d) = positive("ewma_restart_after", ewma_restart_after)? {
            inner.ewma_restart_after(d);
        }
        if let Some(n) = count("max_series", max_series)? {
            inner.max_series(usize::try_from(n).unwrap_or(usize::MAX));
        }
        if let Some(Span(d)) = start_time_skew {
            if d < chrono::TimeDelta::zero() {
                return Err(PyValueError::new_err(format!(
                    "start_time_skew is how far clocks may be apart, 0 or more, not {}",
                    crate::convert::seconds_text(d)
                )));
            }
            inner.start_time_skew(Some(d));
        }
        inner
            .infer_counters(infer_counters)
            .normalize_names(normalize_names)
            .honor_timestamps(honor_timestamps);
        Ok(Tracker { inner, given })
    }

    /// The settings vLLM's pages need in every format and version (and SGLang's): names
    /// compared with ':' and '_' alike (vLLM's OpenMetrics output spells `vllm:x` as
    /// `vllm_x`), OpenMetrics read line by line. Returns the tracker.
    ///
    /// >>> import promrate
    /// >>> tracker = promrate.Tracker(["vllm:generation_tokens_total"]).vllm_preset()
    /// >>> _ = tracker.read_as("application/openmetrics-text; version=1.0.0")
    /// >>> for at, n in [(0, 0), (10, 300)]:
    /// ...     _ = tracker.ingest(f"# TYPE vllm_generation_tokens counter\nvllm_generation_tokens_total {n}\n# EOF\n", at)
    /// >>> tracker.evaluate(promrate.Query("vllm:generation_tokens_total", promrate.Estimator.WINDOW_RATE, 10)).value
    /// 30.0
    fn vllm_preset(mut slf: PyRefMut<'_, Self>) -> PyRefMut<'_, Self> {
        slf.inner.vllm_preset();
        slf
    }

    /// The format of the pages to come: 'text', 'openmetrics', 'openmetrics-2.0.0', or the
    /// response's Content-Type (any other word is a ValueError). Returns the tracker.
    fn read_as<'py>(mut slf: PyRefMut<'py, Self>, format: &str) -> PyResult<PyRefMut<'py, Self>> {
        slf.inner.read_as(format_of(Some(format))?);
        Ok(slf)
    }

    /// Reads one scrape's page (`str` or `bytes`) taken `at` (an aware datetime or Unix
    /// seconds; after the previous scrape). Returns what it did (an `IngestReport`:
    /// samples, restarts, bad lines: a line of `bytes` that is not UTF-8 is one); raises
    /// `IngestError` for a scrape refused whole.
    /// The GIL is released while the page is read.
    fn ingest(&mut self, py: Python<'_>, page: &Bound<'_, PyAny>, at: Instant) -> PyResult<IngestReport> {
        let tracker = &mut self.inner;
        // Bytes that are not all UTF-8: the lines that are read, each other one a bad line
        // in the report, as a page read from a socket is (`ingest_chunks`).
        let report = match page_bytes(page)? {
            Page::Text(text) => py.detach(|| tracker.ingest(text, at.0)),
            Page::NotUtf8(bytes, _) => py.detach(|| {
                let mut reading = tracker.ingest_chunks(at.0)?;
                reading.push(bytes);
                reading.finish()
            }),
        };
        match report {
            Ok(report) => IngestReport::new(py, report),
            Err(e) => Err(ingest_error(py, &e)),
        }
    }

    /// Answers a `Query`: each group's figure (the sum over its series, as PromQL's
    /// `sum by`), or why it has none, and what time its points cover. Raises `QueryError`
    /// for a query that cannot be answered whatever the data.
    ///
    /// >>> import promrate
    /// >>> tracker = promrate.Tracker(["vllm:generation_tokens_total"])
    /// >>> tracker.evaluate(promrate.Query("vllm:prompt_tokens_total", promrate.Estimator.EWMA))
    /// Traceback (most recent call last):
    ///     ...
    /// promrate.QueryError: the tracker does not track `vllm:prompt_tokens_total` (it keeps only what its selectors pick: vllm:generation_tokens_total); if you meant it, add the selector to those given to Tracker([...])
    fn evaluate(&self, py: Python<'_>, query: PyRef<'_, Query>) -> PyResult<Answer> {
        let answer = self
            .inner
            .evaluate(&query.inner)
            .map_err(|e| query_error(py, &e))?;
        Answer::new(py, answer)
    }

    /// PromQL's `histogram_quantile(q, sum by (le, ...) (f(x_bucket)))` of the histogram
    /// the query names (`x` or `x_bucket`), each bucket's figure by the query's estimator.
    ///
    /// >>> import promrate
    /// >>> ttft = "vllm:time_to_first_token_seconds"
    /// >>> tracker = promrate.Tracker([ttft])
    /// >>> def page(fast, all):
    /// ...     return (f"# TYPE {ttft} histogram\n{ttft}_bucket{{le=\"0.1\"}} {fast}\n"
    /// ...             f"{ttft}_bucket{{le=\"1.0\"}} {all}\n{ttft}_bucket{{le=\"+Inf\"}} {all}\n{ttft}_count {all}\n")
    /// >>> _ = tracker.ingest(page(500, 1000), at=0)
    /// >>> _ = tracker.ingest(page(590, 1100), at=60)  # in the minute: 90 of 100 under 0.1 s
    /// >>> round(tracker.quantile(0.95, promrate.Query(ttft, promrate.Estimator.WINDOW_INCREASE, window=60)).value, 9)
    /// 0.55
    fn quantile(&self, py: Python<'_>, q: f64, query: PyRef<'_, Query>) -> PyResult<Answer> {
        let answer = self
            .inner
            .evaluate(&query.inner.clone().quantile(q))
            .map_err(|e| query_error(py, &e))?;
        Answer::new(py, answer)
    }

    /// The mean observation of the histogram or summary the query names: `_sum`'s figure
    /// over `_count`'s (over a window: the mean of the observations made in it).
    ///
    /// >>> import promrate
    /// >>> tracker = promrate.Tracker(["e2e_seconds"])
    /// >>> _ = tracker.ingest("# TYPE e2e_seconds histogram\ne2e_seconds_sum 10\ne2e_seconds_count 4\n", at=0)
    /// >>> _ = tracker.ingest("# TYPE e2e_seconds histogram\ne2e_seconds_sum 13\ne2e_seconds_count 8\n", at=10)
    /// >>> tracker.mean(promrate.Query("e2e_seconds", promrate.Estimator.WINDOW_INCREASE, window=10)).value
    /// 0.75
    fn mean(&self, py: Python<'_>, query: PyRef<'_, Query>) -> PyResult<Answer> {
        let answer = self
            .inner
            .evaluate(&query.inner.clone().mean())
            .map_err(|e| query_error(py, &e))?;
        Answer::new(py, answer)
    }

    /// Scrapes ingested so far.
    #[getter]
    fn scrapes(&self) -> u64 {
        self.inner.scrapes()
    }

    /// The time of the newest scrape, or None.
    #[getter]
    fn last_scrape(&self) -> Option<DateTime<Utc>> {
        self.inner.last_scrape()
    }

    /// The selectors, in PromQL syntax as the library writes them.
    #[getter]
    fn selectors(&self) -> Vec<String> {
        self.inner.selectors().iter().map(ToString::to_string).collect()
    }

    /// The series tracked.
    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let last = self
            .inner
            .last_scrape()
            .map(|t| format!(", last_scrape={}", time_text(t)))
            .unwrap_or_default();
        Ok(format!(
            "Tracker({}, series={}, scrapes={}{last})",
            PyList::new(py, &self.given)?.repr()?,
            self.inner.len(),
            self.inner.scrapes()
        ))
    }
}

/// What one `Tracker.ingest` did: `samples` recorded, `new_series`, `dropped_stale`,
/// `bad_lines` (and the `first_error`, a `ParseError`), `repeated` points, `refused`
/// samples (and the `first_refused`, a `Refusal`), `resets` (a `ResetEvent` per restarted
/// series), `unmatched` when no sample of the page matched the selectors, and
/// `timestamp_skew` (seconds) when samples carried timestamps of their own. The repr
/// shows what is not zero.
///
/// >>> import promrate
/// >>> report = promrate.Tracker().ingest('a 1\nb{ 2\n', at=1)
/// >>> report
/// IngestReport(samples=1, new_series=1, bad_lines=1, first_error=ParseError('line 2, column 4: invalid label name'))
/// >>> report.first_error.line, report.first_error.column
/// (2, 4)
#[pyclass(frozen, module = "promrate")]
pub struct IngestReport {
    /// Samples that matched the selectors and were recorded.
    #[pyo3(get)]
    samples: usize,
    /// Series seen for the first time.
    #[pyo3(get)]
    new_series: usize,
    /// Series dropped for missing `stale_after` scrapes.
    #[pyo3(get)]
    dropped_stale: usize,
    /// Lines that did not parse.
    #[pyo3(get)]
    bad_lines: usize,
    /// The first of them, a `ParseError`, or None.
    #[pyo3(get)]
    first_error: Option<Py<PyAny>>,
    /// Samples that repeated a point their series holds.
    #[pyo3(get)]
    repeated: usize,
    /// Samples a series refused.
    #[pyo3(get)]
    refused: usize,
    /// The first of them, or None.
    #[pyo3(get)]
    first_refused: Option<Py<Refusal>>,
    /// A `ResetEvent` per counter restart seen.
    #[pyo3(get)]
    resets: Py<PyList>,
    /// Set when no sample of the page matched the selectors.
    #[pyo3(get)]
    unmatched: Option<Py<Unmatched>>,
    /// Of the samples with a timestamp of their own, the farthest from the page's time:
    /// its timestamp less the page's, in seconds, or None.
    #[pyo3(get)]
    timestamp_skew: Option<f64>,
}

#[pymethods]
impl IngestReport {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let mut parts = vec![format!("samples={}", self.samples)];
        for (name, n) in [
            ("new_series", self.new_series),
            ("dropped_stale", self.dropped_stale),
            ("bad_lines", self.bad_lines),
            ("repeated", self.repeated),
            ("refused", self.refused),
        ] {
            if n > 0 {
                parts.push(format!("{name}={n}"));
            }
        }
        if let Some(e) = &self.first_error {
            parts.push(format!("first_error={}", e.bind(py).repr()?));
        }
        if let Some(r) = &self.first_refused {
            parts.push(format!("first_refused={}", r.bind(py).repr()?));
        }
        if !self.resets.bind(py).is_empty() {
            parts.push(format!("resets={}", self.resets.bind(py).repr()?));
        }
        if let Some(u) = &self.unmatched {
            parts.push(format!("unmatched={}", u.bind(py).repr()?));
        }
        if let Some(skew) = self.timestamp_skew {
            parts.push(format!("timestamp_skew={skew:?}"));
        }
        Ok(format!("IngestReport({})", parts.join(", ")))
    }
}

impl IngestReport {
    fn new(py: Python<'_>, r: promrate::IngestReport) -> PyResult<IngestReport> {
        let first_error = match &r.first_error {
            Some(e) => Some(parse_error(py, e)?.into_any().unbind()),
            None => None,
        };
        let first_refused = match &r.first_refused {
            Some(refusal) => Some(Py::new(
                py,
                Refusal {
                    name: refusal.name.clone(),
                    labels: labels_dict(py, &refusal.labels)?,
                    line: refusal.line,
                    message: refusal.error.to_string(),
                    text: refusal.to_string(),
                },
            )?),
            None => None,
        };
        let resets = r
            .resets
            .iter()
            .map(|event| {
                Py::new(
                    py,
                    ResetEvent {
                        name: event.name.clone(),
                        labels: labels_dict(py, &event.labels)?,
                        cause: match event.cause {
                            promrate::series::ResetCause::ValueDropped => "value_dropped",
                            promrate::series::ResetCause::CreatedChanged => "created_changed",
                            promrate::series::ResetCause::ProcessRestarted => "process_restarted",
                            promrate::series::ResetCause::StartWentBack => "start_went_back",
                            promrate::series::ResetCause::StartTimeMoving => "start_time_moving",
                            _ => "other",
                        },
                    },
                )
            })
            .collect::<PyResult<Vec<_>>>()?;
        let unmatched = match &r.unmatched {
            Some(u) => Some(Py::new(
                py,
                Unmatched {
                    selectors: u.selectors.clone(),
                    nearest: u.nearest.clone(),
                    differs_in_separators: u.differs_in_separators,
                    message: crate::errors::in_python(&u.to_string()),
                },
            )?),
            None => None,
        };
        Ok(IngestReport {
            samples: r.samples,
            new_series: r.new_series,
            dropped_stale: r.dropped_stale,
            bad_lines: r.bad_lines,
            first_error,
            repeated: r.repeated,
            refused: r.refused,
            first_refused,
            resets: PyList::new(py, resets)?.unbind(),
            unmatched,
            timestamp_skew: r.timestamp_skew.map(|d| d.num_milliseconds() as f64 / 1000.0),
        })
    }
}

fn labels_dict(py: Python<'_>, labels: &[(String, String)]) -> PyResult<Py<PyDict>> {
    let dict = PyDict::new(py);
    for (k, v) in labels {
        dict.set_item(k, v)?;
    }
    Ok(dict.unbind())
}

/// A counter restart seen while ingesting: the series' `name` and `labels`, and the
/// `cause`: 'value_dropped' (the value went down) or 'created_changed' (its `_created`
/// time changed: a restart that climbed past the old value).
///
/// >>> import promrate
/// >>> tracker = promrate.Tracker()
/// >>> _ = tracker.ingest('x_total{engine="0"} 10\n', at=1)
/// >>> tracker.ingest('x_total{engine="0"} 2\n', at=2).resets
/// [ResetEvent(name='x_total', labels={'engine': '0'}, cause='value_dropped')]
#[pyclass(frozen, module = "promrate")]
pub struct ResetEvent {
    /// The series' metric name.
    #[pyo3(get)]
    name: String,
    /// Its labels.
    #[pyo3(get)]
    labels: Py<PyDict>,
    /// 'value_dropped' or 'created_changed'.
    #[pyo3(get)]
    cause: &'static str,
}

#[pymethods]
impl ResetEvent {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "ResetEvent(name={}, labels={}, cause='{}')",
            py_repr(py, &self.name)?,
            self.labels.bind(py).repr()?,
            self.cause
        ))
    }
}

/// A sample a series refused (a timestamp that went back, a negative counter, the same
/// series twice with another value): its `name`, `labels`, page `line`, and `message`;
/// `str(refusal)` says all of it.
///
/// >>> import promrate
/// >>> tracker = promrate.Tracker()
/// >>> _ = tracker.ingest("a_total 5 2000\n", at=3)
/// >>> print(tracker.ingest("a_total 6 1000\n", at=4).first_refused)
/// line 1: a_total: a sample at 1970-01-01T00:00:01Z is not after the series' newest point at 1970-01-01T00:00:02Z
#[pyclass(frozen, module = "promrate")]
pub struct Refusal {
    /// The series' metric name.
    #[pyo3(get)]
    name: String,
    /// Its labels.
    #[pyo3(get)]
    labels: Py<PyDict>,
    /// The page's line (1-based).
    #[pyo3(get)]
    line: usize,
    /// Why the sample was refused.
    #[pyo3(get)]
    message: String,
    text: String,
}

#[pymethods]
impl Refusal {
    fn __str__(&self) -> &str {
        &self.text
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Refusal(name={}, labels={}, line={}, message={})",
            py_repr(py, &self.name)?,
            self.labels.bind(py).repr()?,
            self.line,
            py_repr(py, &self.message)?
        ))
    }
}

/// A page none of whose samples matched the tracker's selectors: the `selectors`, the
/// names on the page `nearest` to them, and whether one differs from a name asked only in
/// ':' and '_' (`differs_in_separators`: `vllm_preset()` reads it). `str()` says so.
///
/// >>> import promrate
/// >>> tracker = promrate.Tracker(["vllm:generation_tokens_total"])
/// >>> tracker.ingest("vllm_generation_tokens_total 5\n", at=1).unmatched.nearest
/// ['vllm_generation_tokens_total']
#[pyclass(frozen, module = "promrate")]
pub struct Unmatched {
    /// The tracker's selectors.
    #[pyo3(get)]
    selectors: Vec<String>,
    /// The names on the page nearest to those asked, nearest first.
    #[pyo3(get)]
    nearest: Vec<String>,
    /// Whether a name differs from one asked only in ':' and '_'.
    #[pyo3(get)]
    differs_in_separators: bool,
    message: String,
}

#[pymethods]
impl Unmatched {
    fn __str__(&self) -> &str {
        &self.message
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("Unmatched({})", py_repr(py, &self.message)?))
    }
}
