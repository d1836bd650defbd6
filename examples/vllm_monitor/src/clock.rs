//! The run's time, made explicit: when each interval is due and what it is called. A live
//! run reads the wall clock through [`LiveClock`]; a replay moves a virtual clock from one
//! recorded scrape to the next. Either way an interval's figures are computed at its
//! scheduled time ([`Schedule::tick_at`]), never at whatever moment the loop got to it, so
//! a replay computes exactly what the live run did.

use std::time::{Duration, Instant};

use chrono::{DateTime, TimeDelta, Utc};

/// The wall clock of a live run: UTC read once at the start, then moved by a monotonic
/// clock, so that a clock step (NTP) does not reorder scrapes.
#[derive(Debug, Clone, Copy)]
pub struct LiveClock {
    origin_utc: DateTime<Utc>,
    origin: Instant,
}

impl LiveClock {
    pub fn start() -> LiveClock {
        let now = Utc::now();
        LiveClock {
            origin_utc: DateTime::from_timestamp_micros(now.timestamp_micros()).unwrap_or(now),
            origin: Instant::now(),
        }
    }

    /// A clock `behind` the wall clock: a live run that follows a TSDB whose newest
    /// samples lag (VictoriaMetrics hides the newest 30 s by default) reads each interval
    /// once its samples are there.
    pub fn behind(behind: TimeDelta) -> LiveClock {
        let clock = LiveClock::start();
        LiveClock {
            origin_utc: clock.origin_utc - behind,
            ..clock
        }
    }

    /// Now, to the microsecond: what a recording keeps, so that a replay reads the times
    /// the live run used.
    pub fn now(&self) -> DateTime<Utc> {
        let now = self.origin_utc + TimeDelta::from_std(self.origin.elapsed()).unwrap_or(TimeDelta::MAX);
        DateTime::from_timestamp_micros(now.timestamp_micros()).unwrap_or(now)
    }

    /// How long until `at`, zero if it is past.
    pub fn until(&self, at: DateTime<Utc>) -> Duration {
        (at - self.now()).to_std().unwrap_or(Duration::ZERO)
    }
}

/// When the intervals of a run are due: interval `k` (from 1) at `started + settle + k ×
/// interval`, called `k × interval` seconds into the run. `settle` lets the scrapes sent
/// at an interval's start come back before its figures are computed.
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    pub started: DateTime<Utc>,
    pub interval: TimeDelta,
    pub settle: TimeDelta,
    /// The last interval of a run of `--duration`, if it has one.
    pub last: Option<u64>,
}

impl Schedule {
    /// The schedule of a run started at `started`; a run of `duration` has
    /// `floor(duration / interval)` intervals (at least one).
    pub fn new(started: DateTime<Utc>, interval: Duration, duration: Option<Duration>) -> Schedule {
        let settle = (interval / 4).min(Duration::from_millis(500));
        let last = duration.map(|d| (d.as_nanos() / interval.as_nanos().max(1)).max(1) as u64);
        Schedule {
            started,
            interval: delta(interval),
            settle: delta(settle),
            last,
        }
    }

    /// When interval `k` is computed.
    pub fn tick_at(&self, k: u64) -> DateTime<Utc> {
        // Saturating: a replay may be told of an interval far away (a pause of years in
        // a recording), which must not wrap around nor panic.
        (self.started + self.settle)
            .checked_add_signed(self.span(k))
            .unwrap_or(DateTime::<Utc>::MAX_UTC)
    }

    /// Seconds into the run that interval `k` is called.
    pub fn elapsed(&self, k: u64) -> f64 {
        self.span(k).as_seconds_f64()
    }

    /// `k` intervals: exact while chrono can say it, else saturating (`k as i32` would
    /// wrap past 2^31 intervals).
    fn span(&self, k: u64) -> TimeDelta {
        if let Some(span) = i32::try_from(k).ok().and_then(|k| self.interval.checked_mul(k)) {
            return span;
        }
        let nanos = nanos(self.interval).saturating_mul(i128::from(k));
        let (seconds, subsec) = (nanos / 1_000_000_000, (nanos % 1_000_000_000) as u32);
        i64::try_from(seconds)
            .ok()
            .and_then(|seconds| TimeDelta::new(seconds, subsec))
            .unwrap_or(TimeDelta::MAX)
    }

    /// The intervals due by `at` (those computed at or before it), worked out rather than
    /// counted: a recording may place a page years after the run's start.
    pub fn due_by(&self, at: DateTime<Utc>) -> u64 {
        let since = nanos(at - (self.started + self.settle));
        let interval = nanos(self.interval).max(1);
        u64::try_from(since.max(0) / interval).unwrap_or(u64::MAX)
    }

    /// Seconds into the run of a moment (0 before the start).
    pub fn since_start(&self, at: DateTime<Utc>) -> f64 {
        (at - self.started).as_seconds_f64().max(0.0)
    }

    /// Whether interval `k` is past the run's end.
    pub fn is_over(&self, k: u64) -> bool {
        self.last.is_some_and(|last| k > last)
    }
}

/// A chrono duration in nanoseconds, exactly (no i64 of nanoseconds spans 300 years).
fn nanos(d: TimeDelta) -> i128 {
    i128::from(d.num_seconds()) * 1_000_000_000 + i128::from(d.subsec_nanos())
}

/// A std duration as chrono's (saturating: no monitor runs for 292 billion years).
pub fn delta(d: Duration) -> TimeDelta {
    TimeDelta::from_std(d).unwrap_or(TimeDelta::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_are_due_on_a_grid_and_a_duration_counts_them() {
        let started = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let s = Schedule::new(started, Duration::from_secs(2), Some(Duration::from_secs(9)));
        assert_eq!(s.settle, TimeDelta::milliseconds(500));
        assert_eq!(s.tick_at(3), started + TimeDelta::milliseconds(6_500));
        assert_eq!((s.elapsed(3), s.last), (6.0, Some(4)));
        assert!(!s.is_over(4) && s.is_over(5));
        let fast = Schedule::new(
            started,
            Duration::from_millis(100),
            Some(Duration::from_millis(50)),
        );
        assert_eq!((fast.settle, fast.last), (TimeDelta::milliseconds(25), Some(1)));
    }

    /// The intervals due by a time are worked out, the same as counting them one by one,
    /// and an interval billions away neither wraps around nor panics.
    #[test]
    fn intervals_due_are_worked_out_and_far_ones_saturate() {
        let started = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let s = Schedule::new(started, Duration::from_millis(300), None);
        for ms in [0, 74, 75, 374, 375, 376, 10_000, 1_000_075] {
            let at = started + TimeDelta::milliseconds(ms);
            let mut counted = 0;
            while s.tick_at(counted + 1) <= at {
                counted += 1;
            }
            assert_eq!(s.due_by(at), counted, "{ms} ms");
        }
        assert_eq!(s.due_by(started - TimeDelta::days(1)), 0);
        let far = 1u64 << 40;
        assert!(s.tick_at(far) > s.tick_at(far - 1), "no wrap past 2^31 intervals");
        assert_eq!(s.due_by(s.tick_at(far)), far);
        assert_eq!(s.tick_at(u64::MAX), DateTime::<Utc>::MAX_UTC);
        assert!(s.elapsed(far) > 3e11);
    }
}
