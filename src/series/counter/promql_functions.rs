//! PromQL's `rate`, `increase` and `irate` over a counter's points, start-timestamp-aware
//! when its created times are known.

use chrono::{DateTime, Utc};

use super::CounterSeries;
use crate::promql::RangeFunctions;

impl CounterSeries {
    /// PromQL `rate` over the kept points at `at`, bit-exact with Prometheus; when created
    /// times are known, Prometheus' start-timestamp-aware rate (a changed created time is a
    /// reset). `None` with fewer than two kept points in the window:
    /// `range.check(series.points(), at)` says how many there are and where the window is.
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// let t = DateTime::from_timestamp(0, 0).unwrap();
    /// let mut s = promrate::series::CounterSeries::new(TimeDelta::minutes(5));
    /// for i in 0..5 { s.push(t + TimeDelta::seconds(15 * i), 30.0 * i as f64)?; }
    /// let range = promrate::promql::RangeFunctions::new(TimeDelta::seconds(60));
    /// assert!((s.rate(&range, t + TimeDelta::seconds(60)).unwrap() - 2.0).abs() < 1e-12);
    /// // 15 s later, a 15 s window (45 s, 60 s] holds one point: no rate, and why.
    /// let short = promrate::promql::RangeFunctions::new(TimeDelta::seconds(15));
    /// assert_eq!(s.rate(&short, t + TimeDelta::seconds(60)), None);
    /// assert!(short.check(s.points(), t + TimeDelta::seconds(60)).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn rate(&self, range: &RangeFunctions, at: DateTime<Utc>) -> Option<f64> {
        self.extrapolated(range, at, true)
    }

    /// PromQL `increase` (see [`CounterSeries::rate`]).
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// let t = DateTime::from_timestamp(0, 0).unwrap();
    /// let mut s = promrate::series::CounterSeries::new(TimeDelta::minutes(5));
    /// for i in 0..5 { s.push(t + TimeDelta::seconds(15 * i), 30.0 * i as f64)?; }
    /// let range = promrate::promql::RangeFunctions::new(TimeDelta::seconds(60));
    /// assert_eq!(s.increase(&range, t + TimeDelta::seconds(60)), Some(120.0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn increase(&self, range: &RangeFunctions, at: DateTime<Utc>) -> Option<f64> {
        self.extrapolated(range, at, false)
    }

    fn extrapolated(&self, range: &RangeFunctions, at: DateTime<Utc>, rate: bool) -> Option<f64> {
        // `push` refuses a point not after the last: the order needs no check per query.
        let range = &range.trusting_order();
        let points = self.points.points();
        if !self.has_created() {
            return if rate {
                range.rate(points, at)
            } else {
                range.increase(points, at)
            };
        }
        // Created times are kept as runs; queries that use them lay them out per point.
        let created = self.created_column();
        let aware = range.with_start_millis(&created);
        if rate {
            aware.rate(points, at)
        } else {
            aware.increase(points, at)
        }
    }

    /// PromQL `irate` over the kept points; when created times are known, the
    /// start-timestamp-aware form (a changed created time is a restart too).
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// let t = DateTime::from_timestamp(0, 0).unwrap();
    /// let mut s = promrate::series::CounterSeries::new(TimeDelta::minutes(5));
    /// s.push(t, 10.0)?;
    /// s.push(t + TimeDelta::seconds(2), 14.0)?;
    /// let range = promrate::promql::RangeFunctions::new(TimeDelta::seconds(30));
    /// assert_eq!(s.irate(&range, t + TimeDelta::seconds(2)), Some(2.0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn irate(&self, range: &RangeFunctions, at: DateTime<Utc>) -> Option<f64> {
        let range = &range.trusting_order();
        let points = self.points.points();
        if !self.has_created() {
            return range.irate(points, at);
        }
        range.with_start_millis(&self.created_column()).irate(points, at)
    }
}
