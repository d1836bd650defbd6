//! PromQL range functions over one series' points, bit for bit as Prometheus computes them.
//!
//! `rate`, `increase` and `delta` extrapolate towards the window's edges
//! (`extrapolatedRate` in Prometheus' `promql/functions.go`); `irate` and `idelta` use the
//! last two points; `resets` and `changes` count. Every function performs the same
//! floating-point operations in the same order as Prometheus, so results agree to the last
//! bit. [`Semantics::Prometheus2`] reproduces 2.x (left-closed windows, the old order of the
//! zero-point clamp); [`Semantics::Prometheus3`] (default) reproduces 3.x.
//!
//! The 3.7+ `anchored` and `smoothed` modifiers are [`Anchored`] and [`Smoothed`]; they only
//! offer the functions PromQL allows with them, so a combination PromQL rejects does not
//! compile.
//!
//! # Example
//! ```
//! use chrono::{DateTime, TimeDelta};
//! use promrate::promql::{Point, Range};
//! let t0 = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
//! // A counter scraped every 15 s, growing 30 per scrape (2/s), reset to 0 once.
//! let points: Vec<Point> = [0.0, 30.0, 60.0, 0.0, 30.0]
//!     .iter()
//!     .enumerate()
//!     .map(|(i, v)| Point::new(t0 + TimeDelta::seconds(15 * i as i64), *v))
//!     .collect();
//! let at = t0 + TimeDelta::seconds(60);
//! // A 75 s window holds all five points (3.x windows are open on the left).
//! let range = Range::new(TimeDelta::seconds(75));
//! assert_eq!(range.increase(&points, at), Some(90.0)); // 60 before the reset, 30 after
//! assert!((range.rate(&points, at).unwrap() - 1.2).abs() < 1e-12);
//! assert_eq!(range.resets(&points, at), Some(1.0));
//! ```

use chrono::{DateTime, TimeDelta, Utc};

/// Prometheus' staleness marker: a NaN with this exact bit pattern. Points carrying it are
/// dropped from range selections, as Prometheus does; ordinary NaN is kept.
pub const STALE_NAN_BITS: u64 = 0x7ff0_0000_0000_0002;

/// One sample of a series: milliseconds since the epoch and a value.
///
/// # Example
/// ```
/// use promrate::promql::Point;
/// let p = Point::new(chrono::DateTime::from_timestamp_millis(1500).unwrap(), 2.0);
/// assert_eq!(p, Point::from_millis(1500, 2.0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Milliseconds since the Unix epoch (Prometheus' resolution).
    pub timestamp_ms: i64,
    /// The value.
    pub value: f64,
}

impl Point {
    /// A point at a UTC time (truncated to whole milliseconds).
    ///
    /// # Example
    /// ```
    /// let p = promrate::promql::Point::new(chrono::DateTime::from_timestamp(2, 0).unwrap(), 1.0);
    /// assert_eq!(p.timestamp_ms, 2000);
    /// ```
    pub fn new(at: DateTime<Utc>, value: f64) -> Point {
        Point {
            timestamp_ms: at.timestamp_millis(),
            value,
        }
    }

    /// A point at `timestamp_ms` milliseconds since the epoch.
    ///
    /// # Example
    /// ```
    /// assert_eq!(promrate::promql::Point::from_millis(5, 1.0).timestamp_ms, 5);
    /// ```
    pub fn from_millis(timestamp_ms: i64, value: f64) -> Point {
        Point { timestamp_ms, value }
    }

    fn is_stale(&self) -> bool {
        self.value.to_bits() == STALE_NAN_BITS
    }
}

/// Which Prometheus major version's arithmetic to reproduce.
///
/// # Example
/// ```
/// use promrate::promql::{Range, Semantics};
/// let v2 = Range::new(chrono::TimeDelta::minutes(5)).semantics(Semantics::Prometheus2);
/// assert_eq!(v2.semantics_used(), Semantics::Prometheus2);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Semantics {
    /// Prometheus 3.x: windows `(start, end]`, zero-point clamp after the 1.1x rule.
    #[default]
    Prometheus3,
    /// Prometheus 2.x up to 2.50: windows `[start, end]`, zero-point clamp first.
    Prometheus2,
}

/// Default lookback for `anchored` and `smoothed`: Prometheus' default lookback delta.
pub const DEFAULT_LOOKBACK: TimeDelta = TimeDelta::minutes(5);

/// A range-vector window (`x[5m]`) and the semantics to evaluate it with.
///
/// # Example
/// ```
/// use chrono::{DateTime, TimeDelta};
/// use promrate::promql::{Point, Range};
/// let points = [Point::from_millis(0, 1.0), Point::from_millis(10_000, 3.0)];
/// let at = DateTime::from_timestamp_millis(10_000).unwrap();
/// assert_eq!(Range::new(TimeDelta::seconds(20)).irate(&points, at), Some(0.2));
/// // A [10s] window at 10 s excludes the point at 0 s: Prometheus 3 windows are (start, end].
/// assert_eq!(Range::new(TimeDelta::seconds(10)).irate(&points, at), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    window_ms: i64,
    semantics: Semantics,
    lookback_ms: i64,
}

/// Go's `time.Duration.Seconds()` for a duration in milliseconds: whole seconds plus the
/// fractional nanoseconds divided by 1e9, in that order.
fn go_seconds(ms: i64) -> f64 {
    let ns = ms.saturating_mul(1_000_000);
    let sec = ns / 1_000_000_000;
    let nsec = ns % 1_000_000_000;
    sec as f64 + nsec as f64 / 1e9
}

impl Range {
    /// A window of `window` (e.g. `TimeDelta::minutes(5)` for `[5m]`), Prometheus 3.x
    /// semantics, 5 m lookback for `anchored`/`smoothed`.
    ///
    /// # Example
    /// ```
    /// let r = promrate::promql::Range::new(chrono::TimeDelta::minutes(5));
    /// assert_eq!(r.window(), chrono::TimeDelta::minutes(5));
    /// ```
    pub fn new(window: TimeDelta) -> Range {
        Range {
            window_ms: window.num_milliseconds(),
            semantics: Semantics::Prometheus3,
            lookback_ms: DEFAULT_LOOKBACK.num_milliseconds(),
        }
    }

    /// Chooses the semantics (default [`Semantics::Prometheus3`]).
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Range, Semantics};
    /// let r = Range::new(chrono::TimeDelta::minutes(1)).semantics(Semantics::Prometheus2);
    /// assert_eq!(r.semantics_used(), Semantics::Prometheus2);
    /// ```
    pub fn semantics(mut self, semantics: Semantics) -> Range {
        self.semantics = semantics;
        self
    }

    /// Sets the lookback used by [`Range::anchored`] and [`Range::smoothed`] (default 5 m).
    ///
    /// # Example
    /// ```
    /// let r = promrate::promql::Range::new(chrono::TimeDelta::minutes(1)).lookback(chrono::TimeDelta::minutes(2));
    /// assert_eq!(r.lookback_delta(), chrono::TimeDelta::minutes(2));
    /// ```
    pub fn lookback(mut self, lookback: TimeDelta) -> Range {
        self.lookback_ms = lookback.num_milliseconds();
        self
    }

    /// The window.
    ///
    /// # Example
    /// ```
    /// let r = promrate::promql::Range::new(chrono::TimeDelta::seconds(30));
    /// assert_eq!(r.window().num_seconds(), 30);
    /// ```
    pub fn window(&self) -> TimeDelta {
        TimeDelta::milliseconds(self.window_ms)
    }

    /// The semantics in use.
    ///
    /// # Example
    /// ```
    /// let r = promrate::promql::Range::new(chrono::TimeDelta::seconds(30));
    /// assert_eq!(r.semantics_used(), promrate::promql::Semantics::Prometheus3);
    /// ```
    pub fn semantics_used(&self) -> Semantics {
        self.semantics
    }

    /// The lookback for `anchored` / `smoothed`.
    ///
    /// # Example
    /// ```
    /// let r = promrate::promql::Range::new(chrono::TimeDelta::seconds(30));
    /// assert_eq!(r.lookback_delta(), promrate::promql::DEFAULT_LOOKBACK);
    /// ```
    pub fn lookback_delta(&self) -> TimeDelta {
        TimeDelta::milliseconds(self.lookback_ms)
    }

    /// The 3.7+ `anchored` modifier: from the last point at or before the window's start
    /// (within the lookback) to the last point in the window, without extrapolation, so an
    /// integer counter gives an integer increase. Always 3.x selection rules.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, Range};
    /// let points = [Point::from_millis(0, 10.0), Point::from_millis(60_000, 13.0), Point::from_millis(90_000, 14.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(90_000).unwrap();
    /// let anchored = Range::new(chrono::TimeDelta::seconds(60)).anchored();
    /// assert_eq!(anchored.increase(&points, at), Some(4.0));
    /// ```
    pub fn anchored(self) -> Anchored {
        Anchored { range: self }
    }

    /// The 3.7+ `smoothed` modifier: values linearly interpolated at both window edges.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, Range};
    /// let points = [Point::from_millis(0, 0.0), Point::from_millis(100_000, 100.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(60_000).unwrap();
    /// let smoothed = Range::new(chrono::TimeDelta::seconds(50)).smoothed();
    /// assert_eq!(smoothed.increase(&points, at), Some(50.0));
    /// ```
    pub fn smoothed(self) -> Smoothed {
        Smoothed { range: self }
    }

    /// Start-timestamp-aware `rate` and `increase` (Prometheus 3.12+ `use-start-timestamps`):
    /// `start_ms[i]` is the created time of `points[i]` (0 when unknown).
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, Range};
    /// // Created at 10 s, scraped at 20 s (5) and 30 s (15): 15 counted since creation.
    /// let points = [Point::from_millis(20_000, 5.0), Point::from_millis(30_000, 15.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(30_000).unwrap();
    /// let range = Range::new(chrono::TimeDelta::seconds(60));
    /// assert_eq!(range.with_start_times(&[10_000, 10_000]).increase(&points, at), Some(15.0));
    /// ```
    pub fn with_start_times<'s>(self, start_ms: &'s [i64]) -> StartAware<'s> {
        StartAware {
            range: self,
            start_ms,
        }
    }

    /// The points of `points` inside the window ending at `at_ms`, staleness markers
    /// dropped, and the window's bounds.
    fn select<'p>(&self, points: &'p [Point], at_ms: i64) -> (Selection<'p>, i64, i64) {
        let end = at_ms;
        let start = at_ms - self.window_ms;
        let first = match self.semantics {
            Semantics::Prometheus3 => points.partition_point(|p| p.timestamp_ms <= start),
            Semantics::Prometheus2 => points.partition_point(|p| p.timestamp_ms < start),
        };
        let last = points.partition_point(|p| p.timestamp_ms <= end);
        let slice = points.get(first..last.max(first)).unwrap_or(&[]);
        (Selection::new(slice), start, end)
    }

    fn extrapolated(&self, points: &[Point], at: DateTime<Utc>, counter: bool, rate: bool) -> Option<f64> {
        let (sel, range_start, range_end) = self.select(points, at.timestamp_millis());
        let n = sel.len();
        if n < 2 {
            return None;
        }
        let first = sel.get(0);
        let last = sel.get(n - 1);
        let mut result = last.value - first.value;
        if counter {
            match self.semantics {
                Semantics::Prometheus3 => {
                    let mut prev = first.value;
                    for p in sel.iter().skip(1) {
                        if p.value < prev {
                            result += prev;
                        }
                        prev = p.value;
                    }
                }
                Semantics::Prometheus2 => {
                    // 2.x starts from 0, which only matters for a negative first value.
                    let mut prev = 0.0;
                    for p in sel.iter() {
                        if p.value < prev {
                            result += prev;
                        }
                        prev = p.value;
                    }
                }
            }
        }
        let mut to_start = (first.timestamp_ms - range_start) as f64 / 1000.0;
        let mut to_end = (range_end - last.timestamp_ms) as f64 / 1000.0;
        let sampled = (last.timestamp_ms - first.timestamp_ms) as f64 / 1000.0;
        let average = sampled / (n - 1) as f64;
        let threshold = average * 1.1;
        let seconds = go_seconds(self.window_ms);
        match self.semantics {
            Semantics::Prometheus3 => {
                if to_start >= threshold {
                    to_start = average / 2.0;
                }
                if counter && result > 0.0 && first.value >= 0.0 {
                    let to_zero = sampled * (first.value / result);
                    if to_zero < to_start {
                        to_start = to_zero;
                    }
                }
                if to_end >= threshold {
                    to_end = average / 2.0;
                }
                let mut factor = (sampled + to_start + to_end) / sampled;
                if rate {
                    factor /= seconds;
                }
                Some(result * factor)
            }
            Semantics::Prometheus2 => {
                if counter && result > 0.0 && first.value >= 0.0 {
                    let to_zero = sampled * (first.value / result);
                    if to_zero < to_start {
                        to_start = to_zero;
                    }
                }
                let mut interval = sampled;
                interval += if to_start < threshold {
                    to_start
                } else {
                    average / 2.0
                };
                interval += if to_end < threshold { to_end } else { average / 2.0 };
                let mut factor = interval / sampled;
                if rate {
                    factor /= seconds;
                }
                Some(result * factor)
            }
        }
    }

    fn instant(&self, points: &[Point], at: DateTime<Utc>, rate: bool) -> Option<f64> {
        let (sel, _, _) = self.select(points, at.timestamp_millis());
        let n = sel.len();
        if n < 2 {
            return None;
        }
        let (previous, last) = (sel.get(n - 2), sel.get(n - 1));
        instant_value(previous, last, rate, last.value < previous.value)
    }

    /// `rate(x[window])` evaluated at `at`: the per-second increase, extrapolated to the
    /// window's edges, counter resets corrected. `None` with fewer than two points.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, Range};
    /// let points: Vec<Point> = (0..5).map(|i| Point::from_millis(i * 15_000, i as f64 * 30.0)).collect();
    /// let at = chrono::DateTime::from_timestamp_millis(60_000).unwrap();
    /// let rate = Range::new(chrono::TimeDelta::seconds(60)).rate(&points, at).unwrap();
    /// assert!((rate - 2.0).abs() < 1e-12); // 2/s, up to float rounding
    /// ```
    pub fn rate(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        self.extrapolated(points, at, true, true)
    }

    /// `increase(x[window])`: like [`Range::rate`] but not divided by the window.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, Range};
    /// let points = [Point::from_millis(0, 0.0), Point::from_millis(60_000, 60.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(60_000).unwrap();
    /// // Extrapolation towards the window's start stops where the counter would reach 0.
    /// assert_eq!(Range::new(chrono::TimeDelta::seconds(90)).increase(&points, at), Some(60.0));
    /// ```
    pub fn increase(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        self.extrapolated(points, at, true, false)
    }

    /// `delta(x[window])`: extrapolated difference of a gauge (no reset correction).
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, Range};
    /// let points = [Point::from_millis(0, 5.0), Point::from_millis(60_000, 2.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(60_000).unwrap();
    /// // -3 over 60 s, extrapolated by 30 s to the start of the 90 s window.
    /// assert_eq!(Range::new(chrono::TimeDelta::seconds(90)).delta(&points, at), Some(-4.5));
    /// ```
    pub fn delta(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        self.extrapolated(points, at, false, false)
    }

    /// `irate(x[window])`: per-second rate between the last two points in the window
    /// (a drop counts as a restart from 0).
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, Range};
    /// let points = [Point::from_millis(0, 50.0), Point::from_millis(10_000, 10.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(10_000).unwrap();
    /// assert_eq!(Range::new(chrono::TimeDelta::seconds(60)).irate(&points, at), Some(1.0));
    /// ```
    pub fn irate(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        self.instant(points, at, true)
    }

    /// `idelta(x[window])`: difference of the last two points in the window.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, Range};
    /// let points = [Point::from_millis(0, 50.0), Point::from_millis(10_000, 10.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(10_000).unwrap();
    /// assert_eq!(Range::new(chrono::TimeDelta::seconds(60)).idelta(&points, at), Some(-40.0));
    /// ```
    pub fn idelta(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        self.instant(points, at, false)
    }

    /// `resets(x[window])`: how many times the value dropped. `None` without points.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, Range};
    /// let points = [Point::from_millis(0, 5.0), Point::from_millis(1_000, 1.0), Point::from_millis(2_000, 3.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(2_000).unwrap();
    /// assert_eq!(Range::new(chrono::TimeDelta::seconds(60)).resets(&points, at), Some(1.0));
    /// ```
    pub fn resets(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        let (sel, _, _) = self.select(points, at.timestamp_millis());
        count_resets(sel)
    }

    /// `changes(x[window])`: how many times the value changed (NaN to NaN is no change).
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, Range};
    /// let points = [Point::from_millis(0, 5.0), Point::from_millis(1_000, 5.0), Point::from_millis(2_000, 3.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(2_000).unwrap();
    /// assert_eq!(Range::new(chrono::TimeDelta::seconds(60)).changes(&points, at), Some(1.0));
    /// ```
    pub fn changes(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        let (sel, _, _) = self.select(points, at.timestamp_millis());
        count_changes(sel)
    }
}

/// `instantValue`: the change from `previous` to `last` (per second for `irate`, where a
/// restart means `last` counted up from zero). `None` for equal timestamps.
fn instant_value(previous: Point, last: Point, rate: bool, restarted: bool) -> Option<f64> {
    let mut result = if rate && restarted {
        last.value
    } else {
        last.value - previous.value
    };
    let interval = last.timestamp_ms - previous.timestamp_ms;
    if interval == 0 {
        return None;
    }
    if rate {
        result /= interval as f64 / 1000.0;
    }
    Some(result)
}

fn count_resets(sel: Selection<'_>) -> Option<f64> {
    if sel.is_empty() {
        return None;
    }
    let mut resets = 0u32;
    let mut prev = sel.get(0).value;
    for p in sel.iter().skip(1) {
        if p.value < prev {
            resets += 1;
        }
        prev = p.value;
    }
    Some(f64::from(resets))
}

fn count_changes(sel: Selection<'_>) -> Option<f64> {
    if sel.is_empty() {
        return None;
    }
    let mut changes = 0u32;
    let mut prev = sel.get(0).value;
    for p in sel.iter().skip(1) {
        if p.value != prev && !(p.value.is_nan() && prev.is_nan()) {
            changes += 1;
        }
        prev = p.value;
    }
    Some(f64::from(changes))
}

/// A window's points with staleness markers skipped, without copying.
#[derive(Clone, Copy)]
struct Selection<'p> {
    points: &'p [Point],
    /// Whether any point is a staleness marker (rare: then indexing skips them).
    has_stale: bool,
}

impl<'p> Selection<'p> {
    fn new(points: &'p [Point]) -> Self {
        Selection {
            points,
            has_stale: points.iter().any(Point::is_stale),
        }
    }

    fn len(&self) -> usize {
        if self.has_stale {
            self.points.iter().filter(|p| !p.is_stale()).count()
        } else {
            self.points.len()
        }
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn iter(&self) -> impl Iterator<Item = &'p Point> + 'p {
        self.points.iter().filter(|p| !p.is_stale())
    }

    fn get(&self, i: usize) -> Point {
        if self.has_stale {
            self.iter()
                .nth(i)
                .copied()
                .unwrap_or(Point::from_millis(0, f64::NAN))
        } else {
            self.points[i]
        }
    }
}

/// The `anchored` modifier over a [`Range`]: `rate`, `increase`, `delta`, `resets`,
/// `changes` (what PromQL allows with it).
///
/// # Example
/// ```
/// use promrate::promql::{Point, Range};
/// let points = [Point::from_millis(0, 1.0), Point::from_millis(30_000, 2.0), Point::from_millis(60_000, 4.0)];
/// let at = chrono::DateTime::from_timestamp_millis(60_000).unwrap();
/// assert_eq!(Range::new(chrono::TimeDelta::seconds(60)).anchored().increase(&points, at), Some(3.0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Anchored {
    range: Range,
}

/// The `smoothed` modifier over a [`Range`]: `rate`, `increase`, `delta`.
///
/// # Example
/// ```
/// use promrate::promql::{Point, Range};
/// let points = [Point::from_millis(0, 0.0), Point::from_millis(120_000, 120.0)];
/// let at = chrono::DateTime::from_timestamp_millis(90_000).unwrap();
/// assert_eq!(Range::new(chrono::TimeDelta::seconds(60)).smoothed().rate(&points, at), Some(1.0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Smoothed {
    range: Range,
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

/// `extendedRate` of Prometheus 3.7+ for `anchored` (smoothed = false) and `smoothed`.
fn extended_rate(
    range: &Range,
    points: &[Point],
    at: DateTime<Utc>,
    smoothed: bool,
    counter: bool,
    rate: bool,
) -> Option<f64> {
    let end = at.timestamp_millis();
    let start = end - range.window_ms;
    let lookback = range.lookback_ms;
    let lo = points.partition_point(|p| p.timestamp_ms <= start - lookback);
    let hi_bound = if smoothed { end + lookback } else { end };
    let hi = points.partition_point(|p| p.timestamp_ms <= hi_bound);
    let owned: Vec<Point>;
    let mut sel = points.get(lo..hi.max(lo)).unwrap_or(&[]);
    if sel.iter().any(Point::is_stale) {
        owned = sel.iter().filter(|p| !p.is_stale()).copied().collect();
        sel = &owned;
    }
    let n = sel.len();
    if n == 0 {
        return None;
    }
    // Last index at or before the start (searching [0, n-1) as Prometheus does), else 0.
    let first = (0..n - 1)
        .find(|&i| sel[i + 1].timestamp_ms > start)
        .unwrap_or(n - 1);
    let last = if smoothed {
        sel.iter().position(|p| p.timestamp_ms >= end).unwrap_or(n - 1)
    } else {
        n - 1
    };
    if sel[last].timestamp_ms <= start {
        return None;
    }
    if smoothed && sel[first].timestamp_ms > end {
        return None;
    }
    let left = if smoothed && sel[first].timestamp_ms < start {
        interpolate(sel[first], sel[first + 1], start, counter)
    } else {
        sel[first].value
    };
    let right = if smoothed && last > 0 && sel[last].timestamp_ms > end {
        interpolate(sel[last - 1], sel[last], end, counter)
    } else {
        sel[last].value
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
    if rate {
        result /= go_seconds(range.window_ms);
    }
    Some(result)
}

impl Anchored {
    /// Sets the lookback (default 5 m).
    ///
    /// # Example
    /// ```
    /// let a = promrate::promql::Range::new(chrono::TimeDelta::minutes(1)).anchored().lookback(chrono::TimeDelta::minutes(1));
    /// # let _ = a;
    /// ```
    pub fn lookback(mut self, lookback: TimeDelta) -> Anchored {
        self.range = self.range.lookback(lookback);
        self
    }

    /// `rate(x[window] anchored)`.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, Range};
    /// let points = [Point::from_millis(0, 0.0), Point::from_millis(60_000, 30.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(60_000).unwrap();
    /// assert_eq!(Range::new(chrono::TimeDelta::seconds(60)).anchored().rate(&points, at), Some(0.5));
    /// ```
    pub fn rate(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        extended_rate(&self.range, points, at, false, true, true)
    }

    /// `increase(x[window] anchored)`.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, Range};
    /// let points = [Point::from_millis(0, 0.0), Point::from_millis(60_000, 30.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(60_000).unwrap();
    /// assert_eq!(Range::new(chrono::TimeDelta::seconds(60)).anchored().increase(&points, at), Some(30.0));
    /// ```
    pub fn increase(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        extended_rate(&self.range, points, at, false, true, false)
    }

    /// `delta(x[window] anchored)`.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, Range};
    /// let points = [Point::from_millis(0, 9.0), Point::from_millis(60_000, 3.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(60_000).unwrap();
    /// assert_eq!(Range::new(chrono::TimeDelta::seconds(60)).anchored().delta(&points, at), Some(-6.0));
    /// ```
    pub fn delta(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        extended_rate(&self.range, points, at, false, false, false)
    }

    fn anchored_selection<'p>(&self, points: &'p [Point], at: DateTime<Utc>) -> Option<Selection<'p>> {
        let end = at.timestamp_millis();
        let start = end - self.range.window_ms;
        let lo = points.partition_point(|p| p.timestamp_ms <= start - self.range.lookback_ms);
        let hi = points.partition_point(|p| p.timestamp_ms <= end);
        let sel = points.get(lo..hi.max(lo)).unwrap_or(&[]);
        if sel.is_empty() {
            return None;
        }
        // Start counting at the anchor: the last point at or before the window's start.
        // Without a point after the start there is nothing to measure.
        let at_or_before = sel.partition_point(|p| p.timestamp_ms <= start);
        if at_or_before == sel.len() {
            return None;
        }
        let first = at_or_before.saturating_sub(1);
        Some(Selection::new(&sel[first..]))
    }

    /// `resets(x[window] anchored)`: counted from the anchor point.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, Range};
    /// let points = [Point::from_millis(0, 5.0), Point::from_millis(60_000, 1.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(60_000).unwrap();
    /// assert_eq!(Range::new(chrono::TimeDelta::seconds(60)).anchored().resets(&points, at), Some(1.0));
    /// ```
    pub fn resets(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        count_resets(self.anchored_selection(points, at)?)
    }

    /// `changes(x[window] anchored)`: counted from the anchor point.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, Range};
    /// let points = [Point::from_millis(0, 5.0), Point::from_millis(60_000, 1.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(60_000).unwrap();
    /// assert_eq!(Range::new(chrono::TimeDelta::seconds(60)).anchored().changes(&points, at), Some(1.0));
    /// ```
    pub fn changes(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        count_changes(self.anchored_selection(points, at)?)
    }
}

impl Smoothed {
    /// Sets the lookback (default 5 m).
    ///
    /// # Example
    /// ```
    /// let s = promrate::promql::Range::new(chrono::TimeDelta::minutes(1)).smoothed().lookback(chrono::TimeDelta::minutes(1));
    /// # let _ = s;
    /// ```
    pub fn lookback(mut self, lookback: TimeDelta) -> Smoothed {
        self.range = self.range.lookback(lookback);
        self
    }

    /// `rate(x[window] smoothed)`.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, Range};
    /// let points = [Point::from_millis(0, 0.0), Point::from_millis(120_000, 120.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(90_000).unwrap();
    /// assert_eq!(Range::new(chrono::TimeDelta::seconds(60)).smoothed().rate(&points, at), Some(1.0));
    /// ```
    pub fn rate(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        extended_rate(&self.range, points, at, true, true, true)
    }

    /// `increase(x[window] smoothed)`.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, Range};
    /// let points = [Point::from_millis(0, 0.0), Point::from_millis(120_000, 120.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(90_000).unwrap();
    /// assert_eq!(Range::new(chrono::TimeDelta::seconds(60)).smoothed().increase(&points, at), Some(60.0));
    /// ```
    pub fn increase(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        extended_rate(&self.range, points, at, true, true, false)
    }

    /// `delta(x[window] smoothed)`.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, Range};
    /// let points = [Point::from_millis(0, 100.0), Point::from_millis(120_000, 40.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(90_000).unwrap();
    /// assert_eq!(Range::new(chrono::TimeDelta::seconds(60)).smoothed().delta(&points, at), Some(-30.0));
    /// ```
    pub fn delta(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        extended_rate(&self.range, points, at, true, false, false)
    }
}

/// Whether a created (start) time marks a restart between two samples, as Prometheus'
/// `isStartTimestampReset` decides (0 = unknown).
fn is_start_reset(prev_st: i64, prev_t: i64, cur_st: i64, cur_t: i64) -> bool {
    if cur_st == 0 || cur_st >= cur_t || cur_st < prev_t {
        return false;
    }
    if cur_st > prev_t {
        return true;
    }
    // cur_st == prev_t: a delta-style series; a reset only if the previous start was known.
    prev_st != 0 && prev_st != prev_t && prev_st <= prev_t
}

/// `rate` / `increase` that use each point's created time: a changed created time is a
/// reset even when the value did not drop, and a series created inside the window counts
/// from 0 at its created time instead of extrapolating. Prometheus 3.x selection.
///
/// # Example
/// ```
/// use promrate::promql::{Point, Range};
/// // The counter restarted at 25 s and climbed past its old value by the next scrape.
/// let points = [Point::from_millis(10_000, 5.0), Point::from_millis(20_000, 10.0), Point::from_millis(30_000, 12.0)];
/// let starts = [1_000, 1_000, 25_000];
/// let at = chrono::DateTime::from_timestamp_millis(30_000).unwrap();
/// let range = Range::new(chrono::TimeDelta::seconds(20));
/// // Value-only detection sees +2 (extrapolated to 4); the created time reveals the restart.
/// assert_eq!(range.increase(&points, at), Some(4.0));
/// assert!(range.with_start_times(&starts).increase(&points, at).unwrap() > 12.0);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct StartAware<'s> {
    range: Range,
    start_ms: &'s [i64],
}

impl StartAware<'_> {
    fn compute(&self, points: &[Point], at: DateTime<Utc>, rate: bool) -> Option<f64> {
        let end = at.timestamp_millis();
        let start = end - self.range.window_ms;
        let lo = points.partition_point(|p| p.timestamp_ms <= start);
        let hi = points.partition_point(|p| p.timestamp_ms <= end).max(lo);
        let idx: Vec<usize> = (lo..hi).filter(|&i| !points[i].is_stale()).collect();
        let st = |i: usize| self.start_ms.get(i).copied().unwrap_or(0);
        let (&i0, &il) = (idx.first()?, idx.last()?);
        let first = points[i0];
        let last = points[il];
        let st0 = st(i0);
        let synthetic_zero = st0 != 0 && start < st0 && st0 < first.timestamp_ms;
        if idx.len() < 2 && !synthetic_zero {
            return None;
        }
        let mut result = last.value - first.value;
        for pair in idx.windows(2) {
            let (a, b) = (points[pair[0]], points[pair[1]]);
            if b.value < a.value || is_start_reset(st(pair[0]), a.timestamp_ms, st(pair[1]), b.timestamp_ms) {
                result += a.value;
            }
        }
        let (first_t, intervals) = if synthetic_zero {
            result += first.value;
            (st0, idx.len() as f64)
        } else {
            (first.timestamp_ms, (idx.len() - 1) as f64)
        };
        let sampled = (last.timestamp_ms - first_t) as f64 / 1000.0;
        if sampled == 0.0 {
            return None;
        }
        let average = sampled / intervals;
        let threshold = average * 1.1;
        let mut to_start = (first_t - start) as f64 / 1000.0;
        let mut to_end = (end - last.timestamp_ms) as f64 / 1000.0;
        if synthetic_zero {
            to_start = 0.0;
            if idx.len() == 1 {
                to_end = 0.0;
            }
        } else {
            if to_start >= threshold {
                to_start = average / 2.0;
            }
            if result > 0.0 && first.value >= 0.0 {
                let to_zero = sampled * (first.value / result);
                if to_zero < to_start {
                    to_start = to_zero;
                }
            }
        }
        if to_end >= threshold {
            to_end = average / 2.0;
        }
        let mut factor = (sampled + to_start + to_end) / sampled;
        if rate {
            factor /= go_seconds(self.range.window_ms);
        }
        Some(result * factor)
    }

    /// Start-timestamp-aware `irate`: a changed created time between the last two points is
    /// a restart even when the value did not drop (Prometheus' `instantValue` with start
    /// timestamps).
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, Range};
    /// let points = [Point::from_millis(10_000, 50.0), Point::from_millis(20_000, 80.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(20_000).unwrap();
    /// let range = Range::new(chrono::TimeDelta::seconds(30));
    /// assert_eq!(range.irate(&points, at), Some(3.0));
    /// // Restarted at 15 s: the 80 were counted in the last 10 s.
    /// assert_eq!(range.with_start_times(&[1_000, 15_000]).irate(&points, at), Some(8.0));
    /// ```
    pub fn irate(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        let end = at.timestamp_millis();
        let start = end - self.range.window_ms;
        let lo = points.partition_point(|p| p.timestamp_ms <= start);
        let hi = points.partition_point(|p| p.timestamp_ms <= end).max(lo);
        let mut live = (lo..hi).rev().filter(|&i| !points[i].is_stale());
        let (b, a) = (live.next()?, live.next()?);
        let st = |i: usize| self.start_ms.get(i).copied().unwrap_or(0);
        let (previous, last) = (points[a], points[b]);
        let restarted = last.value < previous.value
            || is_start_reset(st(a), previous.timestamp_ms, st(b), last.timestamp_ms);
        instant_value(previous, last, true, restarted)
    }

    /// Start-timestamp-aware `rate`.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, Range};
    /// let points = [Point::from_millis(20_000, 5.0), Point::from_millis(30_000, 15.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(30_000).unwrap();
    /// let r = Range::new(chrono::TimeDelta::seconds(60)).with_start_times(&[10_000, 10_000]);
    /// assert_eq!(r.rate(&points, at), Some(0.25));
    /// ```
    pub fn rate(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        self.compute(points, at, true)
    }

    /// Start-timestamp-aware `increase`.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, Range};
    /// let points = [Point::from_millis(20_000, 5.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(30_000).unwrap();
    /// let r = Range::new(chrono::TimeDelta::seconds(60)).with_start_times(&[10_000]);
    /// assert_eq!(r.increase(&points, at), Some(5.0));
    /// ```
    pub fn increase(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        self.compute(points, at, false)
    }
}
