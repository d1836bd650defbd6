//! One live gauge: the last value and averages over a window.

use chrono::{DateTime, TimeDelta, Utc};

use super::points::Points;
use super::DEFAULT_MAX_POINTS;
use crate::error::SeriesError;
use crate::promql::Point;

/// One live gauge: the last value and an average over a window.
///
/// # Example
/// ```
/// use chrono::{DateTime, TimeDelta};
/// let t = DateTime::from_timestamp(0, 0).unwrap();
/// let mut kv = promrate::series::GaugeSeries::new(TimeDelta::minutes(1));
/// kv.push(t, 0.25)?;
/// kv.push(t + TimeDelta::seconds(10), 0.75)?;
/// assert_eq!(kv.last().unwrap().value, 0.75);
/// assert_eq!(kv.avg_over(TimeDelta::seconds(30), t + TimeDelta::seconds(10)), Some(0.5));
/// # Ok::<(), promrate::SeriesError>(())
/// ```
#[derive(Debug, Clone)]
pub struct GaugeSeries {
    points: Points,
}

impl GaugeSeries {
    /// A gauge keeping `retention` of history.
    ///
    /// # Example
    /// ```
    /// assert!(promrate::series::GaugeSeries::new(chrono::TimeDelta::minutes(1)).last().is_none());
    /// ```
    pub fn new(retention: TimeDelta) -> Self {
        GaugeSeries {
            points: Points::new(retention.num_milliseconds().max(0), DEFAULT_MAX_POINTS),
        }
    }

    /// Caps the points kept, whatever the retention (memory bound). Minimum 2.
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// let mut g = promrate::series::GaugeSeries::new(TimeDelta::hours(1));
    /// g.max_points(3);
    /// for i in 0..10 {
    ///     g.push(DateTime::from_timestamp(i, 0).unwrap(), i as f64)?;
    /// }
    /// assert_eq!(g.len(), 3);
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn max_points(&mut self, max_points: usize) -> &mut Self {
        self.points.set_max_len(max_points);
        self
    }

    /// Appends a sample (any float, NaN included).
    ///
    /// # Errors
    /// [`SeriesError::NotAfterLast`] for a timestamp not after the last one.
    ///
    /// # Example
    /// ```
    /// let mut g = promrate::series::GaugeSeries::new(chrono::TimeDelta::minutes(1));
    /// let t = chrono::DateTime::from_timestamp(1, 0).unwrap();
    /// g.push(t, -3.0)?;
    /// assert!(g.push(t, 1.0).is_err(), "not after the last point");
    /// assert_eq!(g.last().unwrap().value, -3.0);
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn push(&mut self, at: DateTime<Utc>, value: f64) -> Result<(), SeriesError> {
        self.push_ms(at.timestamp_millis(), value)
    }

    /// Makes room for the points the retention holds at `interval` (a tracker told its
    /// series' rhythm allocates each column once).
    pub(crate) fn reserve_for_interval(&mut self, interval: TimeDelta) {
        self.points.reserve_for_interval(interval.num_milliseconds());
    }

    pub(crate) fn push_ms(&mut self, at_ms: i64, value: f64) -> Result<(), SeriesError> {
        if let Some(last) = self.points.last() {
            if at_ms <= last.timestamp_ms {
                return Err(SeriesError::NotAfterLast {
                    at: crate::promql::millis_to_time(at_ms),
                    last: crate::promql::millis_to_time(last.timestamp_ms),
                });
            }
        }
        self.points.push(Point::from_millis(at_ms, value));
        Ok(())
    }

    /// Whether no point is kept.
    ///
    /// # Example
    /// ```
    /// assert!(promrate::series::GaugeSeries::new(chrono::TimeDelta::minutes(1)).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of kept points.
    ///
    /// # Example
    /// ```
    /// let mut g = promrate::series::GaugeSeries::new(chrono::TimeDelta::minutes(1));
    /// g.push(chrono::DateTime::from_timestamp(1, 0).unwrap(), 1.0)?;
    /// assert_eq!(g.len(), 1);
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// The newest point.
    ///
    /// # Example
    /// ```
    /// let mut g = promrate::series::GaugeSeries::new(chrono::TimeDelta::minutes(1));
    /// assert!(g.last().is_none());
    /// g.push(chrono::DateTime::from_timestamp(1, 0).unwrap(), 0.5)?;
    /// assert_eq!(g.last().unwrap().value, 0.5);
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn last(&self) -> Option<Point> {
        self.points.last()
    }

    /// The kept points, oldest first.
    ///
    /// # Example
    /// ```
    /// assert!(promrate::series::GaugeSeries::new(chrono::TimeDelta::minutes(1)).points().is_empty());
    /// ```
    pub fn points(&self) -> &[Point] {
        self.points.points()
    }

    /// What a push reads (its oldest and newest points' times), combined: see
    /// `CounterSeries::push_lines`.
    pub(crate) fn push_lines(&self) -> i64 {
        self.points.ends_ms()
    }

    /// Mean of the points in `(at - window, at]` (PromQL `avg_over_time` without its
    /// overflow handling); `None` if there are none.
    ///
    /// # Example
    /// ```
    /// let mut g = promrate::series::GaugeSeries::new(chrono::TimeDelta::minutes(1));
    /// let t = chrono::DateTime::from_timestamp(1, 0).unwrap();
    /// g.push(t, 2.0)?;
    /// assert_eq!(g.avg_over(chrono::TimeDelta::seconds(5), t), Some(2.0));
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn avg_over(&self, window: TimeDelta, at: DateTime<Utc>) -> Option<f64> {
        let at_ms = at.timestamp_millis();
        let start_ms = at_ms - window.num_milliseconds();
        let (sum, n) = self
            .points
            .points()
            .iter()
            .filter(|p| p.timestamp_ms > start_ms && p.timestamp_ms <= at_ms)
            .fold((0.0, 0u32), |(sum, n), p| (sum + p.value, n + 1));
        (n > 0).then(|| sum / f64::from(n))
    }
}
