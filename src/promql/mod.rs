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
//! [`RangeFunctions::check`] says why a function has no value.
//!
//! The 3.7+ `anchored` and `smoothed` modifiers are [`Anchored`] and [`Smoothed`]; they only
//! offer the functions PromQL allows with them, so a combination PromQL rejects does not
//! compile.
//!
//! # Example
//! ```
//! use chrono::{DateTime, TimeDelta};
//! use promrate::promql::{Point, RangeFunctions};
//! let t0 = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
//! // A counter scraped every 15 s, growing 30 per scrape (2/s), reset to 0 once.
//! let points: Vec<Point> = [0.0, 30.0, 60.0, 0.0, 30.0]
//!     .iter()
//!     .enumerate()
//!     .map(|(i, v)| Point::new(t0 + TimeDelta::seconds(15 * i as i64), *v))
//!     .collect();
//! let at = t0 + TimeDelta::seconds(60);
//! // A 75 s window holds all five points (3.x windows are open on the left).
//! let range = RangeFunctions::new(TimeDelta::seconds(75));
//! assert_eq!(range.increase(&points, at), Some(90.0)); // 60 before the reset, 30 after
//! assert!((range.rate(&points, at).unwrap() - 1.2).abs() < 1e-12);
//! assert_eq!(range.resets(&points, at), Some(1.0));
//! ```
//!
//! # For the next maintainer
//! Every function here is a transcription of Prometheus' own Go code, and the oracle tests
//! (`tests/it/oracle.rs`) compare results bit for bit, so the order of float operations is
//! part of the contract: `a + b + c` and `a + (b + c)` are different answers. The layout:
//! - `selection.rs`: the one place that decides which points a function sees
//!   (window bounds per semantics and modifier, staleness markers dropped, never copied);
//! - `extrapolate.rs`: the one extrapolation core (`extrapolatedRate`), shared by
//!   `rate`/`increase`/`delta` in both semantics and by the start-timestamp-aware forms;
//! - `modifiers.rs`: `anchored` and `smoothed` (`extendedRate`, no extrapolation);
//! - `start_aware.rs`: created-time-aware `rate`/`increase`/`irate`.
//!
//! Changing one form's arithmetic means re-running the oracle tests: they are the spec.

mod extrapolate;
mod modifiers;
mod selection;
mod start_aware;
pub(crate) mod sum;

use chrono::{DateTime, TimeDelta, Utc};

use crate::error::NoValue;

use extrapolate::{instant_value, Function, Instant};
pub use modifiers::{Anchored, RangeForm, Smoothed};
use selection::Reach;
pub use start_aware::StartAware;
use start_aware::Starts;

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

/// Which Prometheus major version's arithmetic to reproduce.
///
/// # Example
/// ```
/// use promrate::promql::{Point, RangeFunctions, Semantics};
/// let v2 = RangeFunctions::new(chrono::TimeDelta::minutes(5)).semantics(Semantics::Prometheus2);
/// let points = [Point::from_millis(0, 0.0), Point::from_millis(60_000, 60.0)];
/// let at = chrono::DateTime::from_timestamp(60, 0).unwrap();
/// // 2.x windows are closed on the left: the point at 0 s is in a [60s] window at 60 s.
/// assert_eq!(v2.increase(&points, at), Some(60.0));
/// assert_eq!(RangeFunctions::new(chrono::TimeDelta::minutes(1)).increase(&points, at), None);
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
/// use promrate::promql::{Point, RangeFunctions};
/// let points = [Point::from_millis(0, 1.0), Point::from_millis(10_000, 3.0)];
/// let at = DateTime::from_timestamp_millis(10_000).unwrap();
/// assert_eq!(RangeFunctions::new(TimeDelta::seconds(20)).irate(&points, at), Some(0.2));
/// // A [10s] window at 10 s excludes the point at 0 s: Prometheus 3 windows are (start, end].
/// assert_eq!(RangeFunctions::new(TimeDelta::seconds(10)).irate(&points, at), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RangeFunctions {
    window_ms: i64,
    pub(crate) semantics: Semantics,
    lookback_ms: i64,
    /// Set by the crate's own series, whose points are in order by construction: the
    /// order check (a pass over every point) is skipped.
    points_in_order: bool,
}

/// A time in milliseconds since the epoch as a `DateTime` (clamped to chrono's range, which
/// is wider than any page's).
pub(crate) fn millis_to_time(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or(if ms < 0 {
        DateTime::<Utc>::MIN_UTC
    } else {
        DateTime::<Utc>::MAX_UTC
    })
}

/// Go's `time.Duration.Seconds()` for a duration in milliseconds: whole seconds plus the
/// fractional nanoseconds divided by 1e9, in that order.
fn go_seconds(ms: i64) -> f64 {
    let ns = ms.saturating_mul(1_000_000);
    let sec = ns / 1_000_000_000;
    let nsec = ns % 1_000_000_000;
    sec as f64 + nsec as f64 / 1e9
}

impl RangeFunctions {
    /// A window of `window` (e.g. `TimeDelta::minutes(5)` for `[5m]`), Prometheus 3.x
    /// semantics, 5 m lookback for `anchored`/`smoothed`.
    ///
    /// # Example
    /// ```
    /// let r = promrate::promql::RangeFunctions::new(chrono::TimeDelta::minutes(5));
    /// // 2/s, scraped every minute from 60 s to 300 s: 480 seen, extrapolated to the 5 m.
    /// let points: Vec<_> = (1..=5).map(|m| promrate::promql::Point::from_millis(m * 60_000, m as f64 * 120.0)).collect();
    /// assert_eq!(r.increase(&points, chrono::DateTime::from_timestamp(300, 0).unwrap()), Some(600.0));
    /// ```
    pub fn new(window: TimeDelta) -> RangeFunctions {
        RangeFunctions {
            window_ms: window.num_milliseconds(),
            semantics: Semantics::Prometheus3,
            lookback_ms: DEFAULT_LOOKBACK.num_milliseconds(),
            points_in_order: false,
        }
    }

    /// This range for points known to be in strictly increasing time order (a
    /// counter's or gauge's, which refuse a point not
    /// after the last): no function checks the order again.
    /// Its window.
    pub(crate) fn window(&self) -> TimeDelta {
        TimeDelta::milliseconds(self.window_ms)
    }

    /// The same functions over another window.
    pub(crate) fn with_window(mut self, window: TimeDelta) -> RangeFunctions {
        self.window_ms = window.num_milliseconds();
        self
    }

    /// Its lookback (of `anchored` and `smoothed`).
    pub(crate) fn lookback_delta(&self) -> TimeDelta {
        TimeDelta::milliseconds(self.lookback_ms)
    }

    pub(crate) fn trusting_order(mut self) -> RangeFunctions {
        self.points_in_order = true;
        self
    }

    /// Chooses the semantics (default [`Semantics::Prometheus3`]).
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{RangeFunctions, Semantics};
    /// let r = RangeFunctions::new(chrono::TimeDelta::minutes(1)).semantics(Semantics::Prometheus2);
    /// assert_ne!(r, RangeFunctions::new(chrono::TimeDelta::minutes(1)));
    /// ```
    pub fn semantics(mut self, semantics: Semantics) -> RangeFunctions {
        self.semantics = semantics;
        self
    }

    /// Sets the lookback used by [`RangeFunctions::anchored`] and [`RangeFunctions::smoothed`] (default 5 m).
    ///
    /// # Example
    /// ```
    /// let r = promrate::promql::RangeFunctions::new(chrono::TimeDelta::minutes(1)).lookback(chrono::TimeDelta::minutes(2));
    /// // The anchor may be up to 2 minutes before the window's start.
    /// let points = [promrate::promql::Point::from_millis(0, 10.0), promrate::promql::Point::from_millis(150_000, 12.0)];
    /// assert_eq!(r.anchored().increase(&points, chrono::DateTime::from_timestamp(150, 0).unwrap()), Some(2.0));
    /// ```
    pub fn lookback(mut self, lookback: TimeDelta) -> RangeFunctions {
        self.lookback_ms = lookback.num_milliseconds();
        self
    }

    /// The 3.7+ `anchored` modifier: from the last point at or before the window's start
    /// (within the lookback) to the last point in the window, without extrapolation, so an
    /// integer counter gives an integer increase. Always 3.x selection rules.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, RangeFunctions};
    /// let points = [Point::from_millis(0, 10.0), Point::from_millis(60_000, 13.0), Point::from_millis(90_000, 14.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(90_000).unwrap();
    /// let anchored = RangeFunctions::new(chrono::TimeDelta::seconds(60)).anchored();
    /// assert_eq!(anchored.increase(&points, at), Some(4.0));
    /// ```
    pub fn anchored(self) -> Anchored {
        self.into_anchored()
    }

    /// The 3.7+ `smoothed` modifier: values linearly interpolated at both window edges.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, RangeFunctions};
    /// let points = [Point::from_millis(0, 0.0), Point::from_millis(100_000, 100.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(60_000).unwrap();
    /// let smoothed = RangeFunctions::new(chrono::TimeDelta::seconds(50)).smoothed();
    /// assert_eq!(smoothed.increase(&points, at), Some(50.0));
    /// ```
    pub fn smoothed(self) -> Smoothed {
        self.into_smoothed()
    }

    /// Start-timestamp-aware `rate`, `increase`, `irate` and `resets` (Prometheus 3.14+
    /// `use-start-timestamps`, bit for bit): `starts[i]` is the created time of
    /// `points[i]`, `None` (or 0 ms, as Prometheus stores it) when unknown.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, RangeFunctions};
    /// // Created at 10 s, scraped at 20 s (5) and 30 s (15): 15 counted since creation.
    /// let points = [Point::from_millis(20_000, 5.0), Point::from_millis(30_000, 15.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(30_000).unwrap();
    /// let created = chrono::DateTime::from_timestamp(10, 0);
    /// let range = RangeFunctions::new(chrono::TimeDelta::seconds(60));
    /// assert_eq!(range.with_start_times(&[created, created]).increase(&points, at), Some(15.0));
    /// ```
    pub fn with_start_times<'s>(self, starts: &'s [Option<DateTime<Utc>>]) -> StartAware<'s> {
        StartAware::new(self, Starts::Times(starts))
    }

    /// [`RangeFunctions::with_start_times`] with times in milliseconds (a series' own column).
    pub(crate) fn with_start_millis<'s>(self, start_ms: &'s [Option<i64>]) -> StartAware<'s> {
        StartAware::new(self, Starts::Millis(start_ms))
    }

    /// Why the range functions answer `None` at `at`, or, when they can answer, how many
    /// points the window `(at - window, at]` (`[..]` in 2.x) holds. `rate`, `increase`,
    /// `delta`, `irate` and `idelta` need two points in the window, `resets` and `changes`
    /// one; every function needs `points` in increasing time order. Staleness markers do not
    /// count. (`anchored` and `smoothed` also read the lookback before the window.)
    ///
    /// # Example
    /// ```
    /// use promrate::{promql::{Point, RangeFunctions}, NoValue};
    /// // Scraped at 0 s and 60 s; a 60 s window at 60 s is (0 s, 60 s]: the point at 0 s
    /// // is outside (3.x windows are open on the left), so rate has one point.
    /// let points = [Point::from_millis(0, 0.0), Point::from_millis(60_000, 60.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(60_000).unwrap();
    /// let range = RangeFunctions::new(chrono::TimeDelta::seconds(60));
    /// assert_eq!(range.rate(&points, at), None);
    /// let why = range.check(&points, at).unwrap_err();
    /// assert!(matches!(why, NoValue::TooFewPoints { in_window: 1, .. }));
    /// assert!(why.to_string().contains("open on the left"), "{why}");
    /// // Out of order: every function says None, and check says where.
    /// let shuffled = [points[1], points[0]];
    /// assert_eq!(range.check(&shuffled, at), Err(NoValue::OutOfOrder { index: 1 }));
    /// ```
    pub fn check(&self, points: &[Point], at: DateTime<Utc>) -> Result<usize, NoValue> {
        if let Some(index) = selection::first_out_of_order(points) {
            return Err(NoValue::OutOfOrder { index });
        }
        let window = self.select_in_order(points, at, Reach::Window);
        let in_window = window.points.len();
        if in_window < 2 {
            return Err(NoValue::TooFewPoints {
                in_window,
                start: millis_to_time(window.start),
                end: millis_to_time(window.end),
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
    /// window or with points out of time order: [`RangeFunctions::check`] says which.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, RangeFunctions};
    /// let points: Vec<Point> = (0..5).map(|i| Point::from_millis(i * 15_000, i as f64 * 30.0)).collect();
    /// let at = chrono::DateTime::from_timestamp_millis(60_000).unwrap();
    /// let rate = RangeFunctions::new(chrono::TimeDelta::seconds(60)).rate(&points, at).unwrap();
    /// assert!((rate - 2.0).abs() < 1e-12); // 2/s, up to float rounding
    /// ```
    pub fn rate(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        extrapolate::extrapolated_rate(self, points, at, Function::Rate)
    }

    /// `increase(x[window])`: like [`RangeFunctions::rate`] but not divided by the window (`None`
    /// as for `rate`).
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, RangeFunctions};
    /// let points = [Point::from_millis(0, 0.0), Point::from_millis(60_000, 60.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(60_000).unwrap();
    /// // Extrapolation towards the window's start stops where the counter would reach 0.
    /// assert_eq!(RangeFunctions::new(chrono::TimeDelta::seconds(90)).increase(&points, at), Some(60.0));
    /// ```
    pub fn increase(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        extrapolate::extrapolated_rate(self, points, at, Function::Increase)
    }

    /// `delta(x[window])`: extrapolated difference of a gauge (no reset correction).
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, RangeFunctions};
    /// let points = [Point::from_millis(0, 5.0), Point::from_millis(60_000, 2.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(60_000).unwrap();
    /// // -3 over 60 s, extrapolated by 30 s to the start of the 90 s window.
    /// assert_eq!(RangeFunctions::new(chrono::TimeDelta::seconds(90)).delta(&points, at), Some(-4.5));
    /// ```
    pub fn delta(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        extrapolate::extrapolated_rate(self, points, at, Function::Delta)
    }

    /// `irate(x[window])`: per-second rate between the last two points in the window
    /// (a drop counts as a restart from 0).
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, RangeFunctions};
    /// let points = [Point::from_millis(0, 50.0), Point::from_millis(10_000, 10.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(10_000).unwrap();
    /// assert_eq!(RangeFunctions::new(chrono::TimeDelta::seconds(60)).irate(&points, at), Some(1.0));
    /// ```
    pub fn irate(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        self.instant(points, at, Instant::Irate)
    }

    /// `idelta(x[window])`: difference of the last two points in the window.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, RangeFunctions};
    /// let points = [Point::from_millis(0, 50.0), Point::from_millis(10_000, 10.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(10_000).unwrap();
    /// assert_eq!(RangeFunctions::new(chrono::TimeDelta::seconds(60)).idelta(&points, at), Some(-40.0));
    /// ```
    pub fn idelta(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        self.instant(points, at, Instant::Idelta)
    }

    /// `resets(x[window])`: how many times the value dropped. `None` without points in the
    /// window or with points out of time order ([`RangeFunctions::check`]).
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, RangeFunctions};
    /// let points = [Point::from_millis(0, 5.0), Point::from_millis(1_000, 1.0), Point::from_millis(2_000, 3.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(2_000).unwrap();
    /// assert_eq!(RangeFunctions::new(chrono::TimeDelta::seconds(60)).resets(&points, at), Some(1.0));
    /// ```
    pub fn resets(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        self.select(points, at, Reach::Window)?.points.resets()
    }

    /// `changes(x[window])`: how many times the value changed (NaN to NaN is no change).
    /// `None` as for [`RangeFunctions::resets`].
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, RangeFunctions};
    /// let points = [Point::from_millis(0, 5.0), Point::from_millis(1_000, 5.0), Point::from_millis(2_000, 3.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(2_000).unwrap();
    /// assert_eq!(RangeFunctions::new(chrono::TimeDelta::seconds(60)).changes(&points, at), Some(1.0));
    /// ```
    pub fn changes(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        self.select(points, at, Reach::Window)?.points.changes()
    }
}

#[cfg(test)]
mod tests;
