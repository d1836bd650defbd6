//! Start-timestamp-aware `rate`, `increase`, `irate` and `resets`, as Prometheus 3.14+
//! computes them with `--enable-feature=st-storage,use-start-timestamps` (v3.14.0,
//! commit d7598b7141418fa35be2b5ec5d0fefb634199610: `promql/functions.go`
//! `extrapolatedRate`, `instantValue`, `funcResets`, `isStartTimestampReset`;
//! `tests/data/oracle/SEMANTICS.md` section 5). A start time of 0 is unknown, as there.
//! Checked bit for bit against `tests/data/oracle/start-timestamps.json` (our Go
//! transcription of those rules, `tests/go/start_timestamps.go`) and upstream's
//! `start_timestamps.test`.

use chrono::{DateTime, Utc};

use super::extrapolate::{extrapolate, instant_value, Function, Instant, Sampled, Start};
use super::selection::Reach;
use super::{Point, RangeFunctions, Semantics};

/// `rate` / `increase` that use each point's created time: a changed created time is a
/// reset even when the value did not drop, and a series created inside the window counts
/// from 0 at its created time instead of extrapolating. Prometheus 3.x selection.
///
/// # Example
/// ```
/// use promrate::promql::{Point, RangeFunctions};
/// // The counter restarted at 25 s and climbed past its old value by the next scrape.
/// let points = [Point::from_millis(10_000, 5.0), Point::from_millis(20_000, 10.0), Point::from_millis(30_000, 12.0)];
/// let time = |s| chrono::DateTime::from_timestamp(s, 0);
/// let starts = [time(1), time(1), time(25)];
/// let at = chrono::DateTime::from_timestamp_millis(30_000).unwrap();
/// let range = RangeFunctions::new(chrono::TimeDelta::seconds(20));
/// // Value-only detection sees +2 (extrapolated to 4); the created time reveals the restart.
/// assert_eq!(range.increase(&points, at), Some(4.0));
/// assert!(range.with_start_times(&starts).increase(&points, at).unwrap() > 12.0);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct StartAware<'s> {
    range: RangeFunctions,
    starts: Starts<'s>,
}

/// The created times of the points: a caller's, or a series' own column in milliseconds.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Starts<'s> {
    Times(&'s [Option<DateTime<Utc>>]),
    Millis(&'s [Option<i64>]),
}

/// Whether a created (start) time marks a restart between two samples, as Prometheus'
/// `isStartTimestampReset` decides.
fn is_start_reset(previous_start: Option<i64>, previous_t: i64, start: Option<i64>, t: i64) -> bool {
    let Some(start) = start else {
        return false;
    };
    if start >= t || start < previous_t {
        return false;
    }
    if start > previous_t {
        return true;
    }
    // start == previous_t: a delta-style series; a reset only if the previous start was known.
    previous_start.is_some_and(|s| s < previous_t)
}

impl<'s> StartAware<'s> {
    pub(super) fn new(range: RangeFunctions, starts: Starts<'s>) -> Self {
        // The created-time rules exist only in 3.x: always its window selection.
        StartAware {
            range: range.semantics(Semantics::Prometheus3),
            starts,
        }
    }

    /// The start time of point `i`; 0 ms is unknown, as Prometheus stores "no start".
    fn start_of(&self, i: usize) -> Option<i64> {
        let start = match self.starts {
            Starts::Times(times) => times.get(i).copied().flatten().map(|t| t.timestamp_millis()),
            Starts::Millis(ms) => ms.get(i).copied().flatten(),
        };
        start.filter(|&ms| ms != 0)
    }

    /// Whether point `i` restarted from point `i - 1` of `points`: its value went down, or
    /// its start time says so.
    fn restarted(&self, (pi, previous): (usize, Point), (i, point): (usize, Point)) -> bool {
        point.value < previous.value
            || is_start_reset(
                self.start_of(pi),
                previous.timestamp_ms,
                self.start_of(i),
                point.timestamp_ms,
            )
    }

    fn compute(&self, points: &[Point], at: DateTime<Utc>, function: Function) -> Option<f64> {
        let window = self.range.select(points, at, Reach::Window)?;
        let selection = window.points;
        let n = selection.len();
        let (i0, first) = selection.indexed().next()?;
        let (_, last) = selection.indexed().next_back()?;
        // A series created inside the window counts from a synthetic zero at its creation.
        let created = self
            .start_of(i0)
            .filter(|&st| window.start < st && st < first.timestamp_ms);
        if n < 2 && created.is_none() {
            return None;
        }
        let mut change = last.value - first.value;
        let mut previous = (i0, first);
        for (i, point) in selection.indexed().skip(1) {
            if self.restarted(previous, (i, point)) {
                change += previous.1.value;
            }
            previous = (i, point);
        }
        // The average interval is the samples', taken before a start time moves the
        // sampled interval's start (3.14): 0 for one sample, which then has no right
        // extrapolation either.
        let between = (last.timestamp_ms - first.timestamp_ms) as f64 / 1000.0;
        let average = if n > 1 { between / (n - 1) as f64 } else { 0.0 };
        let (first_t, start) = match created {
            Some(st) => {
                change += first.value;
                (st, Start::CreatedTime)
            }
            None => (first.timestamp_ms, Start::FirstPoint),
        };
        let seconds = (last.timestamp_ms - first_t) as f64 / 1000.0;
        if seconds == 0.0 {
            return None;
        }
        let to_start = match start {
            Start::CreatedTime => 0.0,
            Start::FirstPoint => (first_t - window.start) as f64 / 1000.0,
        };
        let sampled = Sampled {
            change,
            first_value: first.value,
            seconds,
            average,
            to_start,
            to_end: (window.end - last.timestamp_ms) as f64 / 1000.0,
            start,
        };
        Some(extrapolate(
            sampled,
            Semantics::Prometheus3,
            function,
            self.range.window_ms,
        ))
    }

    /// Start-timestamp-aware `irate`: a changed created time between the last two points is
    /// a restart even when the value did not drop (Prometheus' `instantValue` with start
    /// timestamps).
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, RangeFunctions};
    /// let points = [Point::from_millis(10_000, 50.0), Point::from_millis(20_000, 80.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(20_000).unwrap();
    /// let range = RangeFunctions::new(chrono::TimeDelta::seconds(30));
    /// assert_eq!(range.irate(&points, at), Some(3.0));
    /// // Restarted at 15 s: the 80 were counted in the last 10 s.
    /// let created = [chrono::DateTime::from_timestamp(1, 0), chrono::DateTime::from_timestamp(15, 0)];
    /// assert_eq!(range.with_start_times(&created).irate(&points, at), Some(8.0));
    /// ```
    pub fn irate(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        let (previous, last) = self.range.select(points, at, Reach::Window)?.points.last_two()?;
        let restarted = self.restarted(previous, last);
        instant_value(previous.1, last.1, Instant::Irate, restarted)
    }

    /// Start-timestamp-aware `resets`: a changed start time is a reset too, as a value
    /// that went down is. `None` when the window holds no point.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, RangeFunctions};
    /// let points = [Point::from_millis(10_000, 50.0), Point::from_millis(20_000, 80.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(20_000).unwrap();
    /// let range = RangeFunctions::new(chrono::TimeDelta::seconds(30));
    /// assert_eq!(range.resets(&points, at), Some(0.0));
    /// // Restarted at 15 s, and past its old value by 20 s.
    /// let starts = [chrono::DateTime::from_timestamp(1, 0), chrono::DateTime::from_timestamp(15, 0)];
    /// assert_eq!(range.with_start_times(&starts).resets(&points, at), Some(1.0));
    /// ```
    pub fn resets(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        let selection = self.range.select(points, at, Reach::Window)?.points;
        let mut previous = selection.indexed().next()?;
        let mut resets = 0u32;
        for point in selection.indexed().skip(1) {
            resets += u32::from(self.restarted(previous, point));
            previous = point;
        }
        Some(f64::from(resets))
    }

    /// Start-timestamp-aware `rate`.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, RangeFunctions};
    /// let points = [Point::from_millis(20_000, 5.0), Point::from_millis(30_000, 15.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(30_000).unwrap();
    /// let created = [chrono::DateTime::from_timestamp(10, 0); 2];
    /// let r = RangeFunctions::new(chrono::TimeDelta::seconds(60)).with_start_times(&created);
    /// assert_eq!(r.rate(&points, at), Some(0.25));
    /// ```
    pub fn rate(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        self.compute(points, at, Function::Rate)
    }

    /// Start-timestamp-aware `increase`.
    ///
    /// # Example
    /// ```
    /// use promrate::promql::{Point, RangeFunctions};
    /// let points = [Point::from_millis(20_000, 5.0)];
    /// let at = chrono::DateTime::from_timestamp_millis(30_000).unwrap();
    /// let created = [chrono::DateTime::from_timestamp(10, 0)];
    /// let r = RangeFunctions::new(chrono::TimeDelta::seconds(60)).with_start_times(&created);
    /// assert_eq!(r.increase(&points, at), Some(5.0));
    /// ```
    pub fn increase(&self, points: &[Point], at: DateTime<Utc>) -> Option<f64> {
        self.compute(points, at, Function::Increase)
    }
}
