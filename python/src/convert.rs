//! Python values in, the library's types out: one place per type (times, durations, page
//! text, formats). What goes back out is chrono's own conversion (an aware UTC `datetime`,
//! a `timedelta`).

use chrono::{DateTime, TimeDelta, Utc};
use promrate::Format;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDateTime, PyDelta, PyString};

use crate::errors::parse_error;

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
    match page_bytes(page)? {
        Page::Text(text) => Ok(text),
        Page::NotUtf8(bytes, error) => Err(PyErr::from_value(
            parse_error(page.py(), &not_utf8(bytes, error))?.into_any(),
        )),
    }
}

/// A page as given: text, or bytes that are not UTF-8 (with where).
pub enum Page<'a> {
    Text(&'a str),
    NotUtf8(&'a [u8], std::str::Utf8Error),
}

/// [`page_text`], the bytes that are not UTF-8 given back rather than refused (the
/// tracker reads the lines that are, as `Tracker::ingest_chunks` does).
pub fn page_bytes<'a>(page: &'a Bound<'_, PyAny>) -> PyResult<Page<'a>> {
    if let Ok(text) = page.cast::<PyString>() {
        return Ok(Page::Text(text.to_str()?));
    }
    if let Ok(bytes) = page.cast::<PyBytes>() {
        let bytes = bytes.as_bytes();
        return Ok(match std::str::from_utf8(bytes) {
            Ok(text) => Page::Text(text),
            Err(error) => Page::NotUtf8(bytes, error),
        });
    }
    Err(PyTypeError::new_err(format!(
        "a page is str or bytes, not {}",
        page.get_type().name()?
    )))
}

/// Where bytes stop being UTF-8, as a parse error says it: line and column (in
/// characters) of the first invalid byte.
fn not_utf8(bytes: &[u8], error: std::str::Utf8Error) -> promrate::ParseError {
    let valid = &bytes[..error.valid_up_to()];
    let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
    // Valid up to there, so this line's start up to there is too.
    let column = std::str::from_utf8(&valid[line_start..]).map_or(1, |s| s.chars().count() + 1);
    promrate::ParseError {
        line,
        column,
        kind: promrate::error::ParseErrorKind::InvalidUtf8,
    }
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

/// A list argument (`selectors`, `by`). One str where a list is asked for is refused with
/// the list it meant: pyo3's own words ("Can't extract `str` to `Vec`") name no fix.
pub struct Many<T>(pub Vec<T>);

impl<'a, 'py, T> FromPyObject<'a, 'py> for Many<T>
where
    Vec<T>: FromPyObject<'a, 'py, Error = PyErr>,
{
    type Error = PyErr;

    fn extract(ob: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if ob.is_instance_of::<PyString>() || ob.is_instance_of::<crate::select::Selector>() {
            let one = ob.repr()?;
            return Err(PyTypeError::new_err(format!(
                "a list is asked for here: [{one}], not {one}"
            )));
        }
        Ok(Many(ob.extract()?))
    }
}

/// A count argument, named when it is negative (Python's ints are signed, the counts not).
pub fn count(name: &str, n: Option<i64>) -> PyResult<Option<u64>> {
    n.map(|n| {
        u64::try_from(n).map_err(|_| PyValueError::new_err(format!("{name} is a count, 0 or more, not {n}")))
    })
    .transpose()
}

/// A duration argument that must be positive, named when it is not.
pub fn positive_duration(name: &str, d: TimeDelta) -> PyResult<TimeDelta> {
    if d > TimeDelta::zero() {
        Ok(d)
    } else {
        Err(PyValueError::new_err(format!(
            "{name} is a duration longer than 0, not {}",
            seconds_text(d)
        )))
    }
}

/// [`positive_duration`] of an optional argument.
pub fn positive(name: &str, span: Option<Span>) -> PyResult<Option<TimeDelta>> {
    span.map(|Span(d)| positive_duration(name, d)).transpose()
}
