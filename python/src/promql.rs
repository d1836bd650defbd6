//! `promrate.promql`: PromQL's range functions over any list of points, bit for bit as
//! Prometheus computes them (the library's `promql::RangeFunctions`, `Anchored`,
//! `Smoothed` and `Semantics`).

use promrate::promql::Point;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::convert::{positive, positive_duration, seconds_text, Instant, Span};

/// Which Prometheus major version's arithmetic to reproduce: `PROMETHEUS3` (default:
/// windows open on the left) or `PROMETHEUS2`.
///
/// >>> from promrate import promql
/// >>> promql.Semantics.PROMETHEUS2
/// Semantics.PROMETHEUS2
#[pyclass(eq, frozen, hash, from_py_object, module = "promrate.promql")]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum Semantics {
    #[pyo3(name = "PROMETHEUS2")]
    Prometheus2,
    #[pyo3(name = "PROMETHEUS3")]
    Prometheus3,
}

impl Semantics {
    pub fn rust(self) -> promrate::promql::Semantics {
        match self {
            Semantics::Prometheus2 => promrate::promql::Semantics::Prometheus2,
            Semantics::Prometheus3 => promrate::promql::Semantics::Prometheus3,
        }
    }
}

/// A list of `(timestamp_ms, value)` pairs as the library's points.
fn points(pairs: Vec<(i64, f64)>) -> Vec<Point> {
    pairs
        .into_iter()
        .map(|(ms, v)| Point::from_millis(ms, v))
        .collect()
}

/// PromQL's range functions over one series' points (a list of `(timestamp_ms, value)`
/// in increasing time order), evaluated `at` a time (an aware datetime or Unix seconds)
/// over a `window` (a timedelta or seconds), exactly as Prometheus computes them: the same
/// float operations in the same order. A function with no value (fewer than two points in
/// the window, points out of order) answers None. `anchored()` and `smoothed()` are
/// PromQL 3.7's modifiers, with only the functions PromQL allows with them.
///
/// >>> from promrate import promql
/// >>> t0 = 1_700_000_000_000
/// >>> points = [(t0 + 15_000 * i, v) for i, v in enumerate([0.0, 30.0, 60.0, 0.0, 30.0])]
/// >>> at = (t0 + 60_000) / 1000
/// >>> f = promql.RangeFunctions(window=75)
/// >>> f.increase(points, at), f.resets(points, at)
/// (90.0, 1.0)
/// >>> f.rate(points, at)  # 90 / 75 as Prometheus computes it, to the last bit
/// 1.2000000000000002
/// >>> f.rate(points[:1], at) is None
/// True
#[pyclass(frozen, module = "promrate.promql")]
pub struct RangeFunctions {
    inner: promrate::promql::RangeFunctions,
    described: String,
}

#[pymethods]
impl RangeFunctions {
    #[new]
    #[pyo3(signature = (window, *, semantics = Semantics::Prometheus3, lookback = None))]
    fn new(window: Span, semantics: Semantics, lookback: Option<Span>) -> PyResult<Self> {
        // PromQL refuses `x[0s]` when it parses the query; None from every function would
        // say nothing of why.
        let window = positive_duration("window", window.0)?;
        let lookback = positive("lookback", lookback)?.map(Span);
        let mut inner = promrate::promql::RangeFunctions::new(window).semantics(semantics.rust());
        let mut described = format!("RangeFunctions(window={}", seconds_text(window));
        if semantics == Semantics::Prometheus2 {
            described.push_str(", semantics=Semantics.PROMETHEUS2");
        }
        if let Some(Span(lookback)) = lookback {
            inner = inner.lookback(lookback);
            described.push_str(&format!(", lookback={}", seconds_text(lookback)));
        }
        described.push(')');
        Ok(RangeFunctions { inner, described })
    }

    /// PromQL `rate()`: per second, extrapolated towards the window's edges.
    fn rate(&self, points: Vec<(i64, f64)>, at: Instant) -> Option<f64> {
        self.inner.rate(&self::points(points), at.0)
    }

    /// PromQL `increase()`.
    fn increase(&self, points: Vec<(i64, f64)>, at: Instant) -> Option<f64> {
        self.inner.increase(&self::points(points), at.0)
    }

    /// PromQL `delta()` (of a gauge).
    fn delta(&self, points: Vec<(i64, f64)>, at: Instant) -> Option<f64> {
        self.inner.delta(&self::points(points), at.0)
    }

    /// PromQL `irate()`: from the last two points in the window.
    fn irate(&self, points: Vec<(i64, f64)>, at: Instant) -> Option<f64> {
        self.inner.irate(&self::points(points), at.0)
    }

    /// PromQL `idelta()`.
    fn idelta(&self, points: Vec<(i64, f64)>, at: Instant) -> Option<f64> {
        self.inner.idelta(&self::points(points), at.0)
    }

    /// PromQL `resets()`.
    fn resets(&self, points: Vec<(i64, f64)>, at: Instant) -> Option<f64> {
        self.inner.resets(&self::points(points), at.0)
    }

    /// PromQL `changes()`.
    fn changes(&self, points: Vec<(i64, f64)>, at: Instant) -> Option<f64> {
        self.inner.changes(&self::points(points), at.0)
    }

    /// PromQL 3.7's `anchored` modifier: from the last point at or before the window's
    /// start (within the lookback) to the last in it, not extrapolated.
    fn anchored(&self) -> Anchored {
        Anchored {
            inner: self.inner,
            described: format!("{}.anchored()", self.described),
        }
    }

    /// Prometheus 3.14's start-timestamp-aware `rate`, `increase`, `irate` and `resets`
    /// (`use-start-timestamps`), bit for bit: `starts[i]` is the start (created) time of
    /// `points[i]` in Unix milliseconds, None (or 0) when unknown. A start time that
    /// changed is a restart even when the value did not drop, and a counter that started
    /// inside the window counts from zero at its start.
    fn with_start_times(&self, starts: Vec<Option<i64>>) -> StartAware {
        StartAware {
            inner: self.inner,
            starts: starts
                .into_iter()
                .map(|ms| ms.and_then(chrono::DateTime::from_timestamp_millis))
                .collect(),
            described: format!("{}.with_start_times(...)", self.described),
        }
    }

    /// PromQL 3.7's `smoothed` modifier: values interpolated at the window's edges.
    fn smoothed(&self) -> Smoothed {
        Smoothed {
            inner: self.inner,
            described: format!("{}.smoothed()", self.described),
        }
    }

    fn __repr__(&self) -> &str {
        &self.described
    }
}

/// `RangeFunctions.anchored()`: `rate`, `increase`, `delta`, `resets`, `changes`.
///
/// >>> from promrate import promql
/// >>> promql.RangeFunctions(60).anchored().increase([(0, 1.0), (30_000, 4.0), (60_000, 9.0)], at=60)
/// 8.0
#[pyclass(frozen, module = "promrate.promql")]
pub struct Anchored {
    inner: promrate::promql::RangeFunctions,
    described: String,
}

#[pymethods]
impl Anchored {
    /// `rate() anchored`.
    fn rate(&self, points: Vec<(i64, f64)>, at: Instant) -> Option<f64> {
        self.inner.anchored().rate(&self::points(points), at.0)
    }

    /// `increase() anchored`.
    fn increase(&self, points: Vec<(i64, f64)>, at: Instant) -> Option<f64> {
        self.inner.anchored().increase(&self::points(points), at.0)
    }

    /// `delta() anchored`.
    fn delta(&self, points: Vec<(i64, f64)>, at: Instant) -> Option<f64> {
        self.inner.anchored().delta(&self::points(points), at.0)
    }

    /// `resets() anchored`.
    fn resets(&self, points: Vec<(i64, f64)>, at: Instant) -> Option<f64> {
        self.inner.anchored().resets(&self::points(points), at.0)
    }

    /// `changes() anchored`.
    fn changes(&self, points: Vec<(i64, f64)>, at: Instant) -> Option<f64> {
        self.inner.anchored().changes(&self::points(points), at.0)
    }

    fn __repr__(&self) -> &str {
        &self.described
    }
}

/// `RangeFunctions.with_start_times(starts)`: `rate`, `increase`, `irate`, `resets` with
/// each point's start time, as Prometheus 3.14 computes them.
///
/// >>> from promrate import promql
/// >>> points = [(120_000, 1.0), (180_000, 2.0), (240_000, 3.0), (300_000, 4.0)]
/// >>> f = promql.RangeFunctions(window=300)
/// >>> f.with_start_times([90_000] * 4).increase(points, at=360)  # upstream's own case
/// 5.142857142857143
/// >>> # Restarted at 250 s, past its old value by 300 s: only the start time tells.
/// >>> f.resets(points, at=360), f.with_start_times([90_000] * 3 + [250_000]).resets(points, at=360)
/// (0.0, 1.0)
#[pyclass(frozen, module = "promrate.promql")]
pub struct StartAware {
    inner: promrate::promql::RangeFunctions,
    starts: Vec<Option<chrono::DateTime<chrono::Utc>>>,
    described: String,
}

#[pymethods]
impl StartAware {
    /// `rate()` with start timestamps.
    fn rate(&self, points: Vec<(i64, f64)>, at: Instant) -> PyResult<Option<f64>> {
        self.answer(points, |range, points| range.rate(points, at.0))
    }

    /// `increase()` with start timestamps.
    fn increase(&self, points: Vec<(i64, f64)>, at: Instant) -> PyResult<Option<f64>> {
        self.answer(points, |range, points| range.increase(points, at.0))
    }

    /// `irate()` with start timestamps.
    fn irate(&self, points: Vec<(i64, f64)>, at: Instant) -> PyResult<Option<f64>> {
        self.answer(points, |range, points| range.irate(points, at.0))
    }

    /// `resets()` with start timestamps.
    fn resets(&self, points: Vec<(i64, f64)>, at: Instant) -> PyResult<Option<f64>> {
        self.answer(points, |range, points| range.resets(points, at.0))
    }

    fn __repr__(&self) -> &str {
        &self.described
    }
}

impl StartAware {
    /// `function` of the library's start-aware functions over `points`, one start time
    /// each: a list of another length is a mistake (the start times of other points),
    /// refused rather than read as unknown.
    fn answer(
        &self,
        points: Vec<(i64, f64)>,
        function: impl FnOnce(promrate::promql::StartAware<'_>, &[Point]) -> Option<f64>,
    ) -> PyResult<Option<f64>> {
        if points.len() != self.starts.len() {
            return Err(PyValueError::new_err(format!(
                "with_start_times was given {} start time(s) for {} point(s): one per point, None where it is not known",
                self.starts.len(),
                points.len()
            )));
        }
        Ok(function(
            self.inner.with_start_times(&self.starts),
            &self::points(points),
        ))
    }
}

/// `RangeFunctions.smoothed()`: `rate`, `increase`, `delta`.
///
/// >>> from promrate import promql
/// >>> promql.RangeFunctions(60).smoothed()
/// RangeFunctions(window=60 s).smoothed()
#[pyclass(frozen, module = "promrate.promql")]
pub struct Smoothed {
    inner: promrate::promql::RangeFunctions,
    described: String,
}

#[pymethods]
impl Smoothed {
    /// `rate() smoothed`.
    fn rate(&self, points: Vec<(i64, f64)>, at: Instant) -> Option<f64> {
        self.inner.smoothed().rate(&self::points(points), at.0)
    }

    /// `increase() smoothed`.
    fn increase(&self, points: Vec<(i64, f64)>, at: Instant) -> Option<f64> {
        self.inner.smoothed().increase(&self::points(points), at.0)
    }

    /// `delta() smoothed`.
    fn delta(&self, points: Vec<(i64, f64)>, at: Instant) -> Option<f64> {
        self.inner.smoothed().delta(&self::points(points), at.0)
    }

    fn __repr__(&self) -> &str {
        &self.described
    }
}
