//! The one extrapolation core, Prometheus' `extrapolatedRate`, and `instantValue`.

use chrono::{DateTime, Utc};

use super::selection::{Reach, Selection};
use super::{go_seconds, Point, RangeFunctions, Semantics};

/// Which of the extrapolating functions is evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Function {
    /// `rate`: counter, per second.
    Rate,
    /// `increase`: counter, over the window.
    Increase,
    /// `delta`: gauge, over the window.
    Delta,
}

impl Function {
    /// Counters are corrected for resets and never extrapolated below zero.
    pub fn is_counter(self) -> bool {
        self != Function::Delta
    }

    pub fn per_second(self) -> bool {
        self == Function::Rate
    }
}

/// `irate` or `idelta`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Instant {
    Irate,
    Idelta,
}

/// Where the sampled interval starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Start {
    /// At the first point: extrapolated towards the window's start.
    FirstPoint,
    /// At a synthetic zero at the series' created time, inside the window: nothing to
    /// extrapolate before it (start-timestamp-aware forms only).
    CreatedTime,
}

/// What was measured inside the window, before extrapolation.
pub(super) struct Sampled {
    /// The change from the first to the last point (reset-corrected for counters).
    pub change: f64,
    /// The first point's value (for the zero-point clamp of counters).
    pub first_value: f64,
    /// Seconds from the start of the sampled interval to the last point.
    pub seconds: f64,
    /// The average interval between the window's samples, in seconds: from the first
    /// sample to the last, whatever the start (3.14 takes it before a start time moves the
    /// sampled interval's start), 0 for a single sample.
    pub average: f64,
    /// Seconds from the window's start to the sampled interval's start.
    pub to_start: f64,
    /// Seconds from the last point to the window's end.
    pub to_end: f64,
    pub start: Start,
}

/// Extrapolates `sampled` to the window's edges as `extrapolatedRate` does: to the edges
/// when they are within 1.1 average intervals, else half an interval, and for counters no
/// further back than where the counter would reach zero. 2.x clamps to zero first; 3.x
/// last. The float operations run in Prometheus' order.
pub(super) fn extrapolate(sampled: Sampled, semantics: Semantics, function: Function, window_ms: i64) -> f64 {
    let Sampled {
        change,
        first_value,
        seconds,
        average,
        mut to_start,
        mut to_end,
        start,
    } = sampled;
    let threshold = average * 1.1;
    let zero_clamp = |to_start: f64| {
        if function.is_counter() && change > 0.0 && first_value >= 0.0 {
            let to_zero = seconds * (first_value / change);
            if to_zero < to_start {
                return to_zero;
            }
        }
        to_start
    };
    // The comparisons are written as each version writes them: they differ for NaN.
    let interval = match semantics {
        Semantics::Prometheus3 => {
            if start == Start::FirstPoint {
                if to_start >= threshold {
                    to_start = average / 2.0;
                }
                to_start = zero_clamp(to_start);
            }
            if to_end >= threshold {
                to_end = average / 2.0;
            }
            seconds + to_start + to_end
        }
        Semantics::Prometheus2 => {
            if start == Start::FirstPoint {
                to_start = zero_clamp(to_start);
                to_start = if to_start < threshold {
                    to_start
                } else {
                    average / 2.0
                };
            }
            to_end = if to_end < threshold { to_end } else { average / 2.0 };
            seconds + to_start + to_end
        }
    };
    let mut factor = interval / seconds;
    if function.per_second() {
        factor /= go_seconds(window_ms);
    }
    change * factor
}

/// `rate`, `increase` or `delta` of a plain range selection.
pub(super) fn extrapolated_rate(
    range: &RangeFunctions,
    points: &[Point],
    at: DateTime<Utc>,
    function: Function,
) -> Option<f64> {
    let window = range.select(points, at, Reach::Window)?;
    let selection = window.points;
    let n = selection.len();
    if n < 2 {
        return None;
    }
    let first = selection.get(0);
    let last = selection.get(n - 1);
    let mut change = last.value - first.value;
    if function.is_counter() {
        change = with_resets(change, selection, range.semantics);
    }
    let sampled = Sampled {
        change,
        first_value: first.value,
        seconds: (last.timestamp_ms - first.timestamp_ms) as f64 / 1000.0,
        average: (last.timestamp_ms - first.timestamp_ms) as f64 / 1000.0 / (n - 1) as f64,
        to_start: (first.timestamp_ms - window.start) as f64 / 1000.0,
        to_end: (window.end - last.timestamp_ms) as f64 / 1000.0,
        start: Start::FirstPoint,
    };
    Some(extrapolate(sampled, range.semantics, function, range.window_ms))
}

/// `change` plus each value the counter dropped from, added one at a time as Prometheus
/// does. 3.x compares each point with the one before; 2.x starts from 0, which only
/// matters for a negative first value.
fn with_resets(mut change: f64, selection: Selection<'_>, semantics: Semantics) -> f64 {
    let mut values = selection.iter().map(|p| p.value);
    let mut previous = match semantics {
        Semantics::Prometheus3 => values.next().unwrap_or(0.0),
        Semantics::Prometheus2 => 0.0,
    };
    for value in values {
        if value < previous {
            change += previous;
        }
        previous = value;
    }
    change
}

/// `instantValue`: the change from `previous` to `last` (per second for `irate`, where a
/// restart means `last` counted up from zero). `None` for equal timestamps.
pub(super) fn instant_value(previous: Point, last: Point, instant: Instant, restarted: bool) -> Option<f64> {
    let irate = instant == Instant::Irate;
    let mut result = if irate && restarted {
        last.value
    } else {
        last.value - previous.value
    };
    let interval = last.timestamp_ms - previous.timestamp_ms;
    if interval == 0 {
        return None;
    }
    if irate {
        result /= interval as f64 / 1000.0;
    }
    Some(result)
}
