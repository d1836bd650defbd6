//! PromQL range functions over one series' points, bit for bit as Prometheus computes them.
//!
//! `rate`, `increase` and `delta` extrapolate towards the window's edges
//! (`extrapolatedRate` in Prometheus' `promql/functions.go`); `irate` and `idelta` use the
//! last two points; `resets` and `changes` count. Every function performs the same
//! floating-point operations in the same order as Prometheus, so results agree to the last
//! bit. [`Semantics::Prometheus2`] reproduces 2.x (left-closed windows, the old order of the
//! zero-point clamp); [`Semantics::Prometheus3`] (default) reproduces 3.x.
//!
//! Points are in strictly increasing time order, as Prometheus stores them; every function
//! answers `None` otherwise rather than a number from a wrong window, and
//! [`Range::check`] says why a function has no value.
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
//!
//! # For the next maintainer
//! Every function here is a transcription of Prometheus' own Go code, and the oracle tests
//! (`tests/it/oracle.rs`) compare results bit for bit, so the order of float operations is
//! part of the contract: `a + b + c` and `a + (b + c)` are different answers. The layout:
//! - `window.rs`: the one place that decides which points a function sees
//!   (window bounds per semantics and modifier, staleness markers dropped, never copied);
//! - `extrapolate.rs`: the one extrapolation core (`extrapolatedRate`), shared by
//!   `rate`/`increase`/`delta` in both semantics and by the start-timestamp-aware forms;
//! - `modifiers.rs`: `anchored` and `smoothed` (`extendedRate`, no extrapolation);
//! - `start_aware.rs`: created-time-aware `rate`/`increase`/`irate`.
//!
//! Changing one form's arithmetic means re-running the oracle tests: they are the spec.

mod extrapolate;
mod modifiers;
mod start_aware;
mod window;

use chrono::{DateTime, TimeDelta, Utc};

use extrapolate::{instant_value, Function, Instant};
pub use modifiers::{Anchored, Smoothed};
pub use start_aware::StartAware;
use window::Reach;

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

    pub(crate) fn is_stale(&self) -> bool {
        self.value.to_bits() == STALE_NAN_BITS
    }
}

/// Why a range function has no value: what [`Range::check`] reports.
///
/// # Example
/// ```
/// use promrate::promql::{NoValue, Point, Range};
/// let range = Range::new(chrono::TimeDelta::seconds(30));
/// let at = chrono::DateTime::from_timestamp(100, 0).unwrap();
/// assert!(matches!(range.check(&[], at), Err(NoValue::TooFewPoints { in_window: 0, .. })));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NoValue {
    /// The window holds fewer than the two points a rate needs.
    #[error(
        "the window {}{start_ms}, {end_ms}] ms holds {in_window} point(s); rate, increase, delta, irate \
         and idelta need 2{}",
        if *open_left { "(" } else { "[" },
        if *open_left { " (the window is open on the left: a point exactly at its start is outside)" } else { "" }
    )]
    TooFewPoints {
        /// Points inside the window, staleness markers not counted.
        in_window: usize,
        /// The window's start, milliseconds since the epoch.
        start_ms: i64,
        /// The window's end (the evaluation time), milliseconds since the epoch.
        end_ms: i64,
        /// Whether a point exactly at the start is outside (Prometheus 3.x).
        open_left: bool,
    },
    /// `points[index]` is not after `points[index - 1]`: points must be in strictly
    /// increasing time order (no duplicate timestamps), as Prometheus stores them.
    #[error("point {index} is not after the point before it: points must be in increasing time order")]
    OutOfOrder {
        /// Index of the first point not after its predecessor.
        index: usize,
    },
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
    /// Set by the crate's own series, whose points are in order by construction: the
    /// order check (a pass over every point) is skipped.
    points_in_order: bool,
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
            points_in_order: false,
        }
    }

    /// This range for points known to be in strictly increasing time order (a
    /// [`CounterSeries`](crate::CounterSeries)' or gauge's, which refuse a point not
    /// after the last): no function checks the order again.
    pub(crate) fn trusting_order(mut self) -> Range {
        self.points_in_order = true;
        self
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
        self.into_anchored()
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
        self.into_smoothed()
    }

    /// Start-timestamp-aware `rate` and `increase` (Prometheus 3.12+ `use-start-timestamps`):
    /// `start_ms[i]` is the created time of `points[i]` in milliseconds, `None` when unknown.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, Range};
    /// // Created at 10 s, scraped at 20 s (5) and 30 s (15): 15 counted since creation.
    /// let points = [Point::from_millis(20_000, 5.0), Point::from_millis(30_000, 15.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(30_000).unwrap();
    /// let range = Range::new(chrono::TimeDelta::seconds(60));
    /// assert_eq!(range.with_start_times(&[Some(10_000), Some(10_000)]).increase(&points, at), Some(15.0));
    /// ```
    pub fn with_start_times<'s>(self, start_ms: &'s [Option<i64>]) -> StartAware<'s> {
        StartAware::new(self, start_ms)
    }

    /// Why the range functions answer `None` at `at`, or, when they can answer, how many
    /// points the window `(at - window, at]` (`[..]` in 2.x) holds. `rate`, `increase`,
    /// `delta`, `irate` and `idelta` need two points in the window, `resets` and `changes`
    /// one; every function needs `points` in increasing time order. Staleness markers do not
    /// count. (`anchored` and `smoothed` also read the lookback before the window.)
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{NoValue, Point, Range};
    /// // Scraped at 0 s and 60 s; a 60 s window at 60 s is (0 s, 60 s]: the point at 0 s
    /// // is outside (3.x windows are open on the left), so rate has one point.
    /// let points = [Point::from_millis(0, 0.0), Point::from_millis(60_000, 60.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(60_000).unwrap();
    /// let range = Range::new(chrono::TimeDelta::seconds(60));
    /// assert_eq!(range.rate(&points, at), None);
    /// let why = range.check(&points, at).unwrap_err();
    /// assert!(matches!(why, NoValue::TooFewPoints { in_window: 1, .. }));
    /// assert!(why.to_string().contains("open on the left"), "{why}");
    /// // Out of order: every function says None, and check says where.
    /// let shuffled = [points[1], points[0]];
    /// assert_eq!(range.check(&shuffled, at), Err(NoValue::OutOfOrder { index: 1 }));
    /// ```
    pub fn check(&self, points: &[Point], at: DateTime<Utc>) -> Result<usize, NoValue> {
        if let Some(index) = window::first_out_of_order(points) {
            return Err(NoValue::OutOfOrder { index });
        }
        let window = self.select_in_order(points, at, Reach::Window);
        let in_window = window.points.len();
        if in_window < 2 {
            return Err(NoValue::TooFewPoints {
                in_window,
                start_ms: window.start,
                end_ms: window.end,
                open_left: self.semantics == Semantics::Prometheus3,
            });
        }
        Ok(in_window)
    }

    /// `instantValue` over the last two points of the window.
    fn instant(&self, points: &[Point], at: DateTime<Utc>, instant: Instant) -> Option<f64> {
        let ((_, previous), (_, last)) = self.select(points, at, Reach::Window)?.points.last_two()?;
        instant_value(previous, last, instant, last.value < previous.value)
    }

    /// `rate(x[window])` evaluated at `at`: the per-second increase, extrapolated to the
    /// window's edges, counter resets corrected. `None` with fewer than two points in the
    /// window or with points out of time order: [`Range::check`] says which.
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
        extrapolate::extrapolated_rate(self, points, at, Function::Rate)
    }

    /// `increase(x[window])`: like [`Range::rate`] but not divided by the window (`None`
    /// as for `rate`).
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
        extrapolate::extrapolated_rate(self, points, at, Function::Increase)
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
        extrapolate::extrapolated_rate(self, points, at, Function::Delta)
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
        self.instant(points, at, Instant::Irate)
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
        self.instant(points, at, Instant::Idelta)
    }

    /// `resets(x[window])`: how many times the value dropped. `None` without points in the
    /// window or with points out of time order ([`Range::check`]).
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, Range};
    /// let points = [Point::from_millis(0, 5.0), Point::from_millis(1_000, 1.0), Point::from_millis(2_000, 3.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(2_000).unwrap();
    /// assert_eq!(Range::new(chrono::TimeDelta::seconds(60)).resets(&points, at), Some(1.0));
    /// ```
    pub fn resets(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        self.select(points, at, Reach::Window)?.points.resets()
    }

    /// `changes(x[window])`: how many times the value changed (NaN to NaN is no change).
    /// `None` as for [`Range::resets`].
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, Range};
    /// let points = [Point::from_millis(0, 5.0), Point::from_millis(1_000, 5.0), Point::from_millis(2_000, 3.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(2_000).unwrap();
    /// assert_eq!(Range::new(chrono::TimeDelta::seconds(60)).changes(&points, at), Some(1.0));
    /// ```
    pub fn changes(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        self.select(points, at, Reach::Window)?.points.changes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STALE: f64 = f64::from_bits(STALE_NAN_BITS);

    /// Points out of order (or with a repeated timestamp) give no answer from any form,
    /// where a binary search over them would give a plausible number.
    #[test]
    fn points_out_of_order_answer_none_everywhere() {
        let sorted: Vec<Point> = (0..6)
            .map(|i| Point::from_millis(i * 10_000, i as f64 * 7.0))
            .collect();
        let at = DateTime::from_timestamp_millis(50_000).unwrap();
        let range = Range::new(TimeDelta::seconds(60));
        assert!(range.rate(&sorted, at).is_some());
        let mut swapped = sorted.clone();
        swapped.swap(1, 4);
        let mut repeated = sorted.clone();
        repeated[3].timestamp_ms = repeated[2].timestamp_ms;
        for (points, index) in [(&swapped, 2), (&repeated, 3)] {
            assert_eq!(range.check(points, at), Err(NoValue::OutOfOrder { index }));
            let starts = vec![Some(0); points.len()];
            let answers = [
                range.rate(points, at),
                range.increase(points, at),
                range.delta(points, at),
                range.irate(points, at),
                range.idelta(points, at),
                range.resets(points, at),
                range.changes(points, at),
                range.anchored().increase(points, at),
                range.anchored().resets(points, at),
                range.smoothed().rate(points, at),
                range.with_start_times(&starts).rate(points, at),
                range.with_start_times(&starts).irate(points, at),
            ];
            assert_eq!(answers, [None; 12], "{points:?}");
        }
        assert_eq!(range.check(&sorted, at), Ok(6)); // (-10 s, 50 s] holds 0 s to 50 s
    }

    /// Every function, every modifier: a staleness marker anywhere is as if it were absent
    /// (Prometheus drops them from range selections before any function runs).
    #[test]
    fn staleness_markers_are_invisible_to_every_function() {
        let clean: Vec<Point> = [
            (0, 10.0),
            (15, 40.0),
            (30, 5.0),
            (45, 20.0),
            (60, 20.0),
            (75, 50.0),
        ]
        .iter()
        .map(|&(s, v)| Point::from_millis(s * 1000, v))
        .collect();
        let starts: Vec<Option<i64>> = vec![
            Some(0),
            Some(0),
            Some(25_000),
            Some(25_000),
            Some(25_000),
            Some(25_000),
        ];
        for stale_at in 0..=clean.len() {
            let mut points = clean.clone();
            let mut with_starts = starts.clone();
            let t = if stale_at == 0 {
                -500
            } else {
                clean[stale_at - 1].timestamp_ms + 500
            };
            points.insert(stale_at, Point::from_millis(t, STALE));
            with_starts.insert(stale_at, None);
            for window_s in [10, 20, 30, 45, 60, 90] {
                for at_s in [30, 45, 60, 75, 80, 120] {
                    let at = DateTime::from_timestamp(at_s, 0).unwrap();
                    for range in [
                        Range::new(TimeDelta::seconds(window_s)),
                        Range::new(TimeDelta::seconds(window_s)).semantics(Semantics::Prometheus2),
                    ] {
                        let same = |f: &dyn Fn(&[Point]) -> Option<f64>| {
                            let (a, b) = (f(&clean), f(&points));
                            assert!(
                                a.map(f64::to_bits) == b.map(f64::to_bits),
                                "stale at {stale_at}, [{window_s}s] at {at_s}s: {a:?} vs {b:?}"
                            );
                        };
                        same(&|p| range.rate(p, at));
                        same(&|p| range.increase(p, at));
                        same(&|p| range.delta(p, at));
                        same(&|p| range.irate(p, at));
                        same(&|p| range.idelta(p, at));
                        same(&|p| range.resets(p, at));
                        same(&|p| range.changes(p, at));
                        same(&|p| range.anchored().increase(p, at));
                        same(&|p| range.anchored().resets(p, at));
                        same(&|p| range.anchored().changes(p, at));
                        same(&|p| range.smoothed().rate(p, at));
                        same(&|p| range.smoothed().delta(p, at));
                        // Created times travel with their points, markers included.
                        let starts_of = |p: &[Point]| -> &[Option<i64>] {
                            if p.len() == clean.len() {
                                &starts
                            } else {
                                &with_starts
                            }
                        };
                        same(&|p| range.with_start_times(starts_of(p)).increase(p, at));
                        same(&|p| range.with_start_times(starts_of(p)).irate(p, at));
                    }
                }
            }
        }
    }
}
