//! The Prometheus 3.7+ `anchored` and `smoothed` modifiers (`extendedRate`): no
//! extrapolation; the window's edges are the anchor point before the start (`anchored`) or
//! values interpolated at both edges (`smoothed`).

use chrono::{DateTime, TimeDelta, Utc};

use super::extrapolate::Function;
use super::selection::{Reach, Selection};
use super::{go_seconds, Point, RangeFunctions};

/// The `anchored` modifier over a [`RangeFunctions`]: `rate`, `increase`, `delta`, `resets`,
/// `changes` (what PromQL allows with it).
///
/// # Example
/// ```
/// use promrate::promql::{Point, RangeFunctions};
/// let points = [Point::from_millis(0, 1.0), Point::from_millis(30_000, 2.0), Point::from_millis(60_000, 4.0)];
/// let at = chrono::DateTime::from_timestamp_millis(60_000).unwrap();
/// assert_eq!(RangeFunctions::new(chrono::TimeDelta::seconds(60)).anchored().increase(&points, at), Some(3.0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Anchored {
    range: RangeFunctions,
}

/// The `smoothed` modifier over a [`RangeFunctions`]: `rate`, `increase`, `delta`.
///
/// # Example
/// ```
/// use promrate::promql::{Point, RangeFunctions};
/// let points = [Point::from_millis(0, 0.0), Point::from_millis(120_000, 120.0)];
/// let at = chrono::DateTime::from_timestamp_millis(90_000).unwrap();
/// assert_eq!(RangeFunctions::new(chrono::TimeDelta::seconds(60)).smoothed().rate(&points, at), Some(1.0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Smoothed {
    range: RangeFunctions,
}

/// PromQL's functions as [`Query::promql`](crate::Query::promql) takes them: plain, or with
/// one of PromQL's modifiers. Made from a [`RangeFunctions`], an [`Anchored`] or a
/// [`Smoothed`] (`.into()`).
///
/// # Example
/// ```
/// use promrate::promql::{RangeForm, RangeFunctions};
/// let five_minutes = RangeFunctions::new(chrono::TimeDelta::minutes(5));
/// assert!(matches!(RangeForm::from(five_minutes.anchored()), RangeForm::Anchored(_)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RangeForm {
    /// No modifier.
    Plain(RangeFunctions),
    /// `anchored`.
    Anchored(Anchored),
    /// `smoothed`.
    Smoothed(Smoothed),
}

impl From<RangeFunctions> for RangeForm {
    fn from(range: RangeFunctions) -> RangeForm {
        RangeForm::Plain(range)
    }
}

impl From<Anchored> for RangeForm {
    fn from(anchored: Anchored) -> RangeForm {
        RangeForm::Anchored(anchored)
    }
}

impl From<Smoothed> for RangeForm {
    fn from(smoothed: Smoothed) -> RangeForm {
        RangeForm::Smoothed(smoothed)
    }
}

impl RangeForm {
    /// The functions under the modifier.
    pub(crate) fn functions(self) -> RangeFunctions {
        match self {
            RangeForm::Plain(range) => range,
            RangeForm::Anchored(a) => a.range,
            RangeForm::Smoothed(s) => s.range,
        }
    }

    /// The same form over another window.
    pub(crate) fn with_window(self, window: TimeDelta) -> RangeForm {
        let range = self.functions().with_window(window);
        match self {
            RangeForm::Plain(_) => RangeForm::Plain(range),
            RangeForm::Anchored(_) => RangeForm::Anchored(range.into_anchored()),
            RangeForm::Smoothed(_) => RangeForm::Smoothed(range.into_smoothed()),
        }
    }

    /// The modifier's name, if there is one.
    pub(crate) fn modifier(self) -> Option<&'static str> {
        match self {
            RangeForm::Plain(_) => None,
            RangeForm::Anchored(_) => Some("anchored"),
            RangeForm::Smoothed(_) => Some("smoothed"),
        }
    }
}

impl RangeFunctions {
    pub(super) fn into_anchored(self) -> Anchored {
        Anchored { range: self }
    }

    pub(super) fn into_smoothed(self) -> Smoothed {
        Smoothed { range: self }
    }
}

/// Which modifier `extended_rate` evaluates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Modifier {
    Anchored,
    Smoothed,
}

/// Linear interpolation at `t` between two points; a counter that dropped between them is
/// taken to have restarted from 0.
fn interpolate(p1: Point, p2: Point, t: i64, counter: bool) -> f64 {
    let y1 = if counter && p2.value < p1.value {
        0.0
    } else {
        p1.value
    };
    let y2 = p2.value;
    y1 + (y2 - y1) * (t - p1.timestamp_ms) as f64 / (p2.timestamp_ms - p1.timestamp_ms) as f64
}

/// `extendedRate` of Prometheus 3.7+.
fn extended_rate(
    range: &RangeFunctions,
    points: &[Point],
    at: DateTime<Utc>,
    modifier: Modifier,
    function: Function,
) -> Option<f64> {
    let smoothed = modifier == Modifier::Smoothed;
    let reach = if smoothed {
        Reach::LookbackAround
    } else {
        Reach::LookbackBefore
    };
    let window = range.select(points, at, reach)?;
    let (start, end, sel) = (window.start, window.end, window.points);
    let n = sel.len();
    if n == 0 {
        return None;
    }
    // The last point at or before the start, else the first.
    let first = sel.count_at_or_before(start).saturating_sub(1);
    // Smoothed: the first point at or after the end, else the last.
    let last = if smoothed {
        sel.count_before(end).min(n - 1)
    } else {
        n - 1
    };
    let (first_point, last_point) = (sel.get(first), sel.get(last));
    if last_point.timestamp_ms <= start {
        return None;
    }
    if smoothed && first_point.timestamp_ms > end {
        return None;
    }
    let counter = function.is_counter();
    let left = if smoothed && first_point.timestamp_ms < start {
        interpolate(first_point, sel.get(first + 1), start, counter)
    } else {
        first_point.value
    };
    let right = if smoothed && last > 0 && last_point.timestamp_ms > end {
        interpolate(sel.get(last - 1), last_point, end, counter)
    } else {
        last_point.value
    };
    let mut result = right - left;
    if counter {
        // The corrections are summed on their own, then added once, as Prometheus does.
        let mut correction = 0.0;
        let mut prev = left;
        for p in sel
            .iter()
            .filter(|p| p.timestamp_ms > start && p.timestamp_ms < end)
        {
            if p.value < prev {
                correction += prev;
            }
            prev = p.value;
        }
        if right < prev {
            correction += prev;
        }
        result += correction;
    }
    if function.per_second() {
        result /= go_seconds(range.window_ms);
    }
    Some(result)
}

impl Anchored {
    /// Sets the lookback (default 5 m).
    ///
    /// # Example
    /// ```
    /// let a = promrate::promql::RangeFunctions::new(chrono::TimeDelta::minutes(1)).anchored().lookback(chrono::TimeDelta::minutes(1));
    /// assert_eq!(a, promrate::promql::RangeFunctions::new(chrono::TimeDelta::minutes(1)).lookback(chrono::TimeDelta::minutes(1)).anchored());
    /// ```
    pub fn lookback(mut self, lookback: TimeDelta) -> Anchored {
        self.range = self.range.lookback(lookback);
        self
    }

    /// `rate(x[window] anchored)`.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, RangeFunctions};
    /// let points = [Point::from_millis(0, 0.0), Point::from_millis(60_000, 30.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(60_000).unwrap();
    /// assert_eq!(RangeFunctions::new(chrono::TimeDelta::seconds(60)).anchored().rate(&points, at), Some(0.5));
    /// ```
    pub fn rate(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        extended_rate(&self.range, points, at, Modifier::Anchored, Function::Rate)
    }

    /// `increase(x[window] anchored)`.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, RangeFunctions};
    /// let points = [Point::from_millis(0, 0.0), Point::from_millis(60_000, 30.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(60_000).unwrap();
    /// assert_eq!(RangeFunctions::new(chrono::TimeDelta::seconds(60)).anchored().increase(&points, at), Some(30.0));
    /// ```
    pub fn increase(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        extended_rate(&self.range, points, at, Modifier::Anchored, Function::Increase)
    }

    /// `delta(x[window] anchored)`.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, RangeFunctions};
    /// let points = [Point::from_millis(0, 9.0), Point::from_millis(60_000, 3.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(60_000).unwrap();
    /// assert_eq!(RangeFunctions::new(chrono::TimeDelta::seconds(60)).anchored().delta(&points, at), Some(-6.0));
    /// ```
    pub fn delta(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        extended_rate(&self.range, points, at, Modifier::Anchored, Function::Delta)
    }

    /// From the anchor (the last point at or before the window's start) to the window's
    /// end; `None` without a point after the start.
    fn anchored_points<'p>(&self, points: &'p [Point], at: DateTime<Utc>) -> Option<Selection<'p>> {
        let window = self.range.select(points, at, Reach::LookbackBefore)?;
        let at_or_before = window.points.count_at_or_before(window.start);
        if at_or_before == window.points.len() {
            return None;
        }
        Some(window.points.skip(at_or_before.saturating_sub(1)))
    }

    /// `resets(x[window] anchored)`: counted from the anchor point.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, RangeFunctions};
    /// let points = [Point::from_millis(0, 5.0), Point::from_millis(60_000, 1.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(60_000).unwrap();
    /// assert_eq!(RangeFunctions::new(chrono::TimeDelta::seconds(60)).anchored().resets(&points, at), Some(1.0));
    /// ```
    pub fn resets(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        self.anchored_points(points, at)?.resets()
    }

    /// `changes(x[window] anchored)`: counted from the anchor point.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, RangeFunctions};
    /// let points = [Point::from_millis(0, 5.0), Point::from_millis(60_000, 1.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(60_000).unwrap();
    /// assert_eq!(RangeFunctions::new(chrono::TimeDelta::seconds(60)).anchored().changes(&points, at), Some(1.0));
    /// ```
    pub fn changes(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        self.anchored_points(points, at)?.changes()
    }
}

impl Smoothed {
    /// Sets the lookback (default 5 m).
    ///
    /// # Example
    /// ```
    /// let s = promrate::promql::RangeFunctions::new(chrono::TimeDelta::minutes(1)).smoothed().lookback(chrono::TimeDelta::minutes(1));
    /// assert_eq!(s, promrate::promql::RangeFunctions::new(chrono::TimeDelta::minutes(1)).lookback(chrono::TimeDelta::minutes(1)).smoothed());
    /// ```
    pub fn lookback(mut self, lookback: TimeDelta) -> Smoothed {
        self.range = self.range.lookback(lookback);
        self
    }

    /// `rate(x[window] smoothed)`.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, RangeFunctions};
    /// let points = [Point::from_millis(0, 0.0), Point::from_millis(120_000, 120.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(90_000).unwrap();
    /// assert_eq!(RangeFunctions::new(chrono::TimeDelta::seconds(60)).smoothed().rate(&points, at), Some(1.0));
    /// ```
    pub fn rate(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        extended_rate(&self.range, points, at, Modifier::Smoothed, Function::Rate)
    }

    /// `increase(x[window] smoothed)`.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, RangeFunctions};
    /// let points = [Point::from_millis(0, 0.0), Point::from_millis(120_000, 120.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(90_000).unwrap();
    /// assert_eq!(RangeFunctions::new(chrono::TimeDelta::seconds(60)).smoothed().increase(&points, at), Some(60.0));
    /// ```
    pub fn increase(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        extended_rate(&self.range, points, at, Modifier::Smoothed, Function::Increase)
    }

    /// `delta(x[window] smoothed)`.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, RangeFunctions};
    /// let points = [Point::from_millis(0, 100.0), Point::from_millis(120_000, 40.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(90_000).unwrap();
    /// assert_eq!(RangeFunctions::new(chrono::TimeDelta::seconds(60)).smoothed().delta(&points, at), Some(-30.0));
    /// ```
    pub fn delta(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        extended_rate(&self.range, points, at, Modifier::Smoothed, Function::Delta)
    }
}
