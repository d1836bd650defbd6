//! The library's errors as Python exceptions (all `ValueError`s), each with the Rust
//! error's message as `str(e)` and its position or kind as attributes: one conversion per
//! error type.

use pyo3::create_exception;
use pyo3::exceptions::PyBaseException;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

create_exception!(
    promrate,
    ParseError,
    PyValueError,
    "A line that does not parse: `line` and `column` (1-based, in characters), `message`; \
     `str(e)` is 'line L, column C: message'. `parse()` yields these among the entries \
     (the rest of the page keeps coming), or raises the first with `errors=\"raise\"`."
);
create_exception!(
    promrate,
    SelectorError,
    PyValueError,
    "A PromQL selector that does not parse or compile: `column` (1-based) and `message`."
);
create_exception!(
    promrate,
    QueryError,
    PyValueError,
    "A query a tracker cannot answer whatever its data (`kind`: 'not_tracked', \
     'histogram_name', 'invalid_quantile', 'window_missing', 'window_beyond_retention', \
     'modifier_not_allowed', 'ewma_time_constant'); the message says what to change."
);
create_exception!(
    promrate,
    IngestError,
    PyValueError,
    "A scrape a tracker refused whole, nothing of it recorded (`kind`: 'not_after_last', \
     'limit', 'series_limit')."
);

/// A parse error as a `promrate.ParseError` instance (yielded, raised or reported).
pub fn parse_error<'py>(py: Python<'py>, e: &promrate::ParseError) -> PyResult<Bound<'py, PyBaseException>> {
    let err = ParseError::new_err(in_python(&e.to_string()))
        .into_value(py)
        .into_bound(py);
    err.setattr("line", e.line)?;
    err.setattr("column", e.column)?;
    err.setattr("message", in_python(&e.kind.to_string()))?;
    Ok(err)
}

pub fn selector_error(py: Python<'_>, e: &promrate::SelectorError) -> PyErr {
    let err = SelectorError::new_err(in_python(&e.to_string()));
    let value = err.value(py);
    let set = value
        .setattr("column", e.column)
        .and_then(|()| value.setattr("message", in_python(&e.kind.to_string())));
    set.err().unwrap_or(err)
}

pub fn query_error(py: Python<'_>, e: &promrate::QueryError) -> PyErr {
    use promrate::QueryError as Q;
    let kind = match e {
        Q::NotTracked { .. } => "not_tracked",
        Q::WindowMissing { .. } => "window_missing",
        Q::WindowNotPositive { .. } => "window_not_positive",
        Q::WindowBeyondRetention { .. } => "window_beyond_retention",
        Q::ModifierNotAllowed { .. } => "modifier_not_allowed",
        Q::EwmaTimeConstant { .. } => "ewma_time_constant",
        Q::HistogramName { .. } => "histogram_name",
        Q::InvalidQuantile { .. } => "invalid_quantile",
        _ => "other",
    };
    with_kind(py, QueryError::new_err(in_python(&e.to_string())), kind)
}

/// The library's words for what to do, written as the Python package spells it: its
/// messages name Rust calls (`Query::window(..)`, `Tracker::new`), which a Python user
/// cannot type. Every message stays a whole sentence.
pub fn in_python(message: &str) -> String {
    const CALLS: [(&str, &str); 11] = [
        ("Query::window(..)", "Query(..., window=...)"),
        (
            "`Query::new(&selector, Estimator::Rate).window(..)`",
            "`Query(selector, Estimator.RATE, window=...)`",
        ),
        (
            "`tracker.evaluate(&Query::new(&selector, Estimator::Rate).window(..).by([..]))`",
            "`tracker.evaluate(Query(selector, Estimator.RATE, window=..., by=[...]))`",
        ),
        ("those given to Tracker::new", "those given to Tracker([...])"),
        (
            "read the histogram with Query::quantile, Query::mean or Query::buckets",
            "read the histogram with Tracker.quantile or Tracker.mean",
        ),
        ("set Tracker::retention to", "pass Tracker(retention=...)"),
        (
            "set Tracker::ewma_time_constant before ingesting",
            "pass Tracker(ewma_time_constant=...)",
        ),
        ("`Parser::strict(false)`", "`strict=False`"),
        ("`Tracker::vllm_preset`", "`Tracker.vllm_preset()`"),
        (
            "Tracker::normalize_names(true), or Tracker::vllm_preset for vLLM",
            "Tracker(normalize_names=True), or Tracker.vllm_preset() for vLLM",
        ),
        ("Tracker::max_series", "Tracker(max_series=...)"),
    ];
    CALLS.iter().fold(message.to_string(), |text, (rust, python)| {
        text.replace(rust, python)
    })
}

pub fn ingest_error(py: Python<'_>, e: &promrate::IngestError) -> PyErr {
    use promrate::IngestError as I;
    let kind = match e {
        I::NotAfterLast { .. } => "not_after_last",
        I::Limit(_) => "limit",
        I::SeriesLimit { .. } => "series_limit",
        _ => "other",
    };
    with_kind(py, IngestError::new_err(in_python(&e.to_string())), kind)
}

fn with_kind(py: Python<'_>, err: PyErr, kind: &str) -> PyErr {
    match err.value(py).setattr("kind", kind) {
        Ok(()) => err,
        Err(failed) => failed,
    }
}
