//! Python values in, the library's types out: one place per type (times, durations, page
//! text, formats). What goes back out is chrono's own conversion (an aware UTC `datetime`,
//! a `timedelta`).

use chrono::{DateTime, TimeDelta, Utc};
use promrate::Format;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDateTime, PyDelta, PyString};

/// A time: an aware `datetime` (any time zone), or Unix seconds (`int` or `float`, read to
/// the microsecond as `datetime.fromtimestamp` reads them). A naive `datetime` is refused:
/// its time zone would be a guess.
pub struct Instant(pub DateTime<Utc>);

impl<'a, 'py> FromPyObject<'a, 'py> for Instant {
    type Error = PyErr;

    fn extract(ob: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let seconds: f64 = if ob.is_instance_of::<PyDateTime>() {
            if ob.getattr("tzinfo")?.is_none() {
                return Err(PyValueError::new_err(
                    "a naive datetime has no time zone: give an aware one (datetime.now(timezone.utc)) \
                     or Unix seconds (time.time())",
                ));
            }
            ob.call_method0("timestamp")?.extract()?
        } else {
            ob.extract().map_err(|_| {
                PyTypeError::new_err(format!(
                    "a time is an aware datetime or Unix seconds, not {}",
                    type_name(&ob)
                ))
            })?
        };
        micros(seconds)
            .and_then(DateTime::from_timestamp_micros)
            .map(Instant)
            .ok_or_else(|| PyValueError::new_err(format!("{seconds} s is not a time")))
    }
}

/// A duration: a `timedelta`, or seconds (`int` or `float`, to the microsecond).
#[derive(Clone, Copy)]
pub struct Span(pub TimeDelta);

impl<'a, 'py> FromPyObject<'a, 'py> for Span {
    type Error = PyErr;

    fn extract(ob: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if ob.is_instance_of::<PyDelta>() {
            return Ok(Span(ob.extract()?));
        }
        let seconds: f64 = ob.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "a duration is a timedelta or seconds, not {}",
                type_name(&ob)
            ))
        })?;
        micros(seconds)
            .map(|us| Span(TimeDelta::microseconds(us)))
            .ok_or_else(|| PyValueError::new_err(format!("{seconds} s is not a duration")))
    }
}

/// Seconds as whole microseconds, if finite and in range.
fn micros(seconds: f64) -> Option<i64> {
    let us = (seconds * 1e6).round();
    (us.is_finite() && us.abs() < 9.0e18).then_some(us as i64)
}

fn type_name(ob: &Borrowed<'_, '_, PyAny>) -> String {
    ob.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "that".into())
}

/// The text of a page given as `str` or `bytes` (UTF-8), borrowed from the Python object.
pub fn page_text<'a>(page: &'a Bound<'_, PyAny>) -> PyResult<&'a str> {
    if let Ok(text) = page.cast::<PyString>() {
        return text.to_str();
    }
    if let Ok(bytes) = page.cast::<PyBytes>() {
        return std::str::from_utf8(bytes.as_bytes())
            .map_err(|e| PyValueError::new_err(format!("the page is not UTF-8: {e}")));
    }
    Err(PyTypeError::new_err(format!(
        "a page is str or bytes, not {}",
        page.get_type().name()?
    )))
}

/// A format: "text", "openmetrics", "openmetrics-2.0.0" (or "openmetrics2"), or an HTTP
/// Content-Type header value (with a `/`: [`Format::from_content_type`], where anything but
/// `application/openmetrics-text` is text, as Prometheus reads it). Any other word is a
/// mistake (`"OpenMetrics"`, `"openmetrics-2"`), refused rather than read as text.
pub fn format_of(format: Option<&str>) -> PyResult<Format> {
    Ok(match format {
        None | Some("text") => Format::PrometheusText,
        Some("openmetrics") => Format::OpenMetrics,
        Some("openmetrics2" | "openmetrics-2.0.0") => Format::OpenMetrics2,
        Some(content_type) if content_type.contains('/') => Format::from_content_type(content_type),
        Some(other) => {
            return Err(PyValueError::new_err(format!(
                "unknown format {other:?}: \"text\", \"openmetrics\", \"openmetrics-2.0.0\" (or \"openmetrics2\"), \
                 or a Content-Type header value such as \"application/openmetrics-text; version=1.0.0\""
            )))
        }
    })
}

/// A duration as the README and messages print it: `10 s`, `0.5 s`.
pub fn seconds_text(d: TimeDelta) -> String {
    let ms = d.num_milliseconds();
    if ms % 1000 == 0 {
        format!("{} s", ms / 1000)
    } else {
        format!("{} s", ms as f64 / 1000.0)
    }
}

/// A time as reprs print it: RFC 3339 in UTC, milliseconds when there are some.
pub fn time_text(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
}

/// A Python string literal of `text`, as `repr(str)` writes it.
pub fn py_repr(py: Python<'_>, text: &str) -> PyResult<String> {
    Ok(PyString::new(py, text).repr()?.to_string())
}
