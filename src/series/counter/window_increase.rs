//! The increase of a counter over about a window, between two of its points, with the span
//! it actually covers and why that span is shorter than asked when it is.

use chrono::{DateTime, TimeDelta, Utc};

use super::{increment, CounterSeries};
use crate::error::NoValue;
use crate::promql::millis_to_time;
use crate::series::points::partition_near_front;
use crate::series::ResetCause;

impl CounterSeries {
    /// The increase over about `rule.window` before `at`, between two of the series'
    /// points, with the span it actually covers: a rate that says what it measured.
    ///
    /// It ends at the newest point at or before `at` and starts at the point nearest to
    /// `at - window` (the earlier one of two equally near), so a few milliseconds of scrape
    /// jitter never move the start by a whole interval, as "the newest point at or before
    /// the start" would. The start is never older than `at - window - slack`, and never
    /// before a gap (two points further apart than `rule.gap`: an outage): after one the
    /// window starts at the first point since, and its span is shorter than the window
    /// instead of reaching back across the gap, where a restart's last counts were never
    /// seen. Restarts count from zero. Nothing is extrapolated: an integer counter gives an
    /// integer increase.
    ///
    /// # Errors
    /// [`NoValue::TooFewScrapes`] with fewer than two points in that reach, and
    /// [`NoValue::OnePointSinceGap`] with one point since a gap.
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// use promrate::{Shortened, WindowRule};
    /// let at = |ms| DateTime::from_timestamp_millis(ms).unwrap();
    /// let mut s = promrate::series::CounterSeries::new(TimeDelta::minutes(5));
    /// // Scrapes every second, a little late or early, 100/s.
    /// for (i, jitter) in [3, -2, 4, -1, 2, -3, 1, 0, 2, -1, 3, 1].into_iter().enumerate() {
    ///     let ms = 1000 * i as i64 + jitter;
    ///     s.push(at(ms), ms as f64 / 10.0)?;
    /// }
    /// let rule = WindowRule::new(TimeDelta::seconds(10)).slack(TimeDelta::seconds(1)).gap(TimeDelta::seconds(3));
    /// let w = s.window_increase(&rule, at(11_001))?;
    /// assert_eq!((w.start, w.end, w.shortened), (at(1_000 - 2), at(11_001), None));
    /// assert!((w.rate() - 100.0).abs() < 1e-9);
    /// // After a 6 s outage the window starts at the first point since, and says so.
    /// s.push(at(17_000), 1_700.0)?;
    /// s.push(at(18_000), 1_800.0)?;
    /// let w = s.window_increase(&rule, at(18_000))?;
    /// assert_eq!((w.span(), w.increase, w.shortened), (TimeDelta::seconds(1), 100.0, Some(Shortened::AfterGap)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn window_increase(&self, rule: &WindowRule, at: DateTime<Utc>) -> Result<WindowIncrease, NoValue> {
        let m = self.measure(&rule.in_ms(), at.timestamp_millis())?;
        Ok(WindowIncrease {
            increase: m.increase,
            start: millis_to_time(m.start_ms),
            end: millis_to_time(m.end_ms),
            shortened: m.shortened,
        })
    }

    /// [`CounterSeries::window_increase`] in milliseconds (a tracker's queries fold
    /// thousands of these: no time is built until the answer).
    pub(crate) fn measure(&self, rule: &RuleMs, at_ms: i64) -> Result<Measured, NoValue> {
        let points = self.points.points();
        let start_ms = at_ms - rule.window_ms;
        let oldest_ms = start_ms - rule.slack_ms;
        // Asked at or after the newest point (a live figure), the end is known.
        let end = match points.last() {
            Some(newest) if newest.timestamp_ms <= at_ms => points.len(),
            _ => points.partition_point(|p| p.timestamp_ms <= at_ms),
        };
        let reach = partition_near_front(points, |p| p.timestamp_ms < oldest_ms);
        let gap_ms = rule.gap_ms;
        if end < reach + 2 {
            // One point since a gap (the point before it is out of reach, further back
            // than the gap): say so rather than count the window's points.
            if end == reach + 1
                && reach > 0
                && points[reach].timestamp_ms - points[reach - 1].timestamp_ms > gap_ms
            {
                return Err(NoValue::OnePointSinceGap {
                    since: millis_to_time(points[reach].timestamp_ms),
                });
            }
            return Err(NoValue::TooFewScrapes {
                found: end.saturating_sub(reach),
                from: millis_to_time(oldest_ms),
                to: millis_to_time(at_ms),
            });
        }
        // The nearest of the last point at or before the start and the first one after it.
        let after = partition_near_front(&points[..end - 1], |p| p.timestamp_ms <= start_ms);
        let nearest = match after.checked_sub(1).filter(|&before| before >= reach) {
            Some(before) if after < end - 1 => {
                let early = start_ms - points[before].timestamp_ms;
                let late = points[after].timestamp_ms - start_ms;
                if early <= late {
                    before
                } else {
                    after
                }
            }
            Some(before) => before,
            None => after.max(reach),
        };
        // After the last gap between the anchor and the end, if there is one.
        // Without a gap rule no two points are too far apart: nothing to look for.
        let since_gap = (gap_ms != i64::MAX)
            .then(|| {
                (nearest + 1..end)
                    .rev()
                    .find(|&i| points[i].timestamp_ms - points[i - 1].timestamp_ms > gap_ms)
            })
            .flatten();
        let anchor = since_gap.unwrap_or(nearest);
        if anchor + 1 >= end {
            return Err(NoValue::OnePointSinceGap {
                since: millis_to_time(points[anchor].timestamp_ms),
            });
        }
        let starts_late = points[anchor].timestamp_ms > start_ms;
        let shortened = if since_gap.is_some() || (starts_late && anchor == reach && reach > 0) {
            // After a gap the rule names, or a hole in the scrapes wider than the slack
            // (the point before the start is out of reach).
            Some(Shortened::AfterGap)
        } else if anchor == 0 && points[0].timestamp_ms > start_ms {
            // The oldest point kept starts the window: the series began inside it, or
            // older points were let go.
            Some(if self.pushed > points.len() as u64 {
                Shortened::Retention
            } else {
                Shortened::SinceFirstPoint
            })
        } else {
            None
        };
        // `first_number`, from the points already found (finding them is a search).
        let first = self.pushed - points.len() as u64;
        self.erratic_between(first + anchor as u64 + 1, first + end as u64)?;
        let created = |i: usize| self.created_at(first + i as u64);
        let restarted = |i: usize| {
            matches!(
                self.mark_of(first + i as u64),
                Some(ResetCause::ProcessRestarted | ResetCause::StartWentBack)
            )
        };
        let increase = if self.has_no_reset_evidence() {
            // Only a value drop can be a reset (most series, and a fleet's millions).
            (anchor + 1..end)
                .map(|i| increment(points, |_| None, |_| false, i))
                .sum()
        } else {
            (anchor + 1..end)
                .map(|i| increment(points, created, restarted, i))
                .sum()
        };
        Ok(Measured {
            increase,
            start_ms: points[anchor].timestamp_ms,
            end_ms: points[end - 1].timestamp_ms,
            shortened,
        })
    }
}

/// What `CounterSeries::measure` found, times in milliseconds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Measured {
    pub(crate) increase: f64,
    pub(crate) start_ms: i64,
    pub(crate) end_ms: i64,
    pub(crate) shortened: Option<Shortened>,
}

impl Measured {
    /// The increase per second between the two points.
    pub(crate) fn rate(&self) -> f64 {
        self.increase / ((self.end_ms - self.start_ms) as f64 / 1000.0)
    }
}

/// Why a window's data covers less than the window asked.
///
/// # Example
/// ```
/// use chrono::{DateTime, TimeDelta};
/// use promrate::{series::CounterSeries, Shortened, WindowRule};
/// let at = |s| DateTime::from_timestamp(s, 0).unwrap();
/// let mut s = CounterSeries::new(TimeDelta::minutes(5));
/// s.push(at(100), 0.0)?;
/// s.push(at(110), 50.0)?;
/// let w = s.window_increase(&WindowRule::new(TimeDelta::seconds(60)), at(110))?;
/// assert_eq!((w.span(), w.shortened), (TimeDelta::seconds(10), Some(Shortened::SinceFirstPoint)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Shortened {
    /// The series' first point is inside the window: it began (or was first seen) there.
    SinceFirstPoint,
    /// Older points were let go (retention, or the cap on points): keep more history.
    Retention,
    /// The window starts after a gap between two points (an outage, or scrapes missed for
    /// longer than the slack): it does not reach across it.
    AfterGap,
}

impl Shortened {
    /// A few words for messages and labels.
    ///
    /// # Example
    /// ```
    /// assert_eq!(promrate::Shortened::AfterGap.as_str(), "after a gap");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Shortened::SinceFirstPoint => "since the first point",
            Shortened::Retention => "retention kept less",
            Shortened::AfterGap => "after a gap",
        }
    }
}

/// What [`CounterSeries::window_increase`] measured: the increase between two points,
/// their times, and why the span is shorter than the window asked, if it is.
///
/// # Example
/// ```
/// use chrono::{DateTime, TimeDelta};
/// let at = |s| DateTime::from_timestamp(s, 0).unwrap();
/// let w = promrate::series::WindowIncrease { increase: 50.0, start: at(10), end: at(20), shortened: None };
/// assert_eq!((w.span(), w.rate()), (TimeDelta::seconds(10), 5.0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowIncrease {
    /// The reset-corrected increase from `start` to `end`.
    pub increase: f64,
    /// The time of the older point compared (the window's actual start).
    pub start: DateTime<Utc>,
    /// The time of the newer point (the window's actual end).
    pub end: DateTime<Utc>,
    /// Why the span is shorter than the window asked (`None`: it covers the window, up
    /// to where the scrapes fell).
    pub shortened: Option<Shortened>,
}

impl WindowIncrease {
    /// The time between the two points.
    ///
    /// # Example
    /// ```
    /// let at = |s| chrono::DateTime::from_timestamp(s, 0).unwrap();
    /// let w = promrate::series::WindowIncrease { increase: 1.0, start: at(3), end: at(5), shortened: None };
    /// assert_eq!(w.span(), chrono::TimeDelta::seconds(2));
    /// ```
    pub fn span(&self) -> TimeDelta {
        self.end - self.start
    }

    /// The increase per second of the span.
    ///
    /// # Example
    /// ```
    /// let at = |s| chrono::DateTime::from_timestamp(s, 0).unwrap();
    /// let w = promrate::series::WindowIncrease { increase: 30.0, start: at(0), end: at(4), shortened: None };
    /// assert_eq!(w.rate(), 7.5);
    /// ```
    pub fn rate(&self) -> f64 {
        self.increase / (self.span().num_milliseconds() as f64 / 1000.0)
    }
}

/// How far back [`CounterSeries::window_increase`] reaches: about `window`, its start
/// at most `slack` before that (default: the window again, so a figure never covers more
/// than twice what was asked), and never before a `gap` between two points (default: no
/// interval is a gap).
///
/// # Example
/// ```
/// use chrono::TimeDelta;
/// let rule = promrate::WindowRule::new(TimeDelta::seconds(30)).slack(TimeDelta::seconds(2));
/// assert_eq!((rule.window, rule.slack, rule.gap), (TimeDelta::seconds(30), TimeDelta::seconds(2), None));
/// assert_eq!(promrate::WindowRule::new(TimeDelta::seconds(30)).slack, TimeDelta::seconds(30));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowRule {
    /// The span asked.
    pub window: TimeDelta,
    /// How much older than `window` the start may be (say, one scrape interval).
    pub slack: TimeDelta,
    /// Points further apart than this are a gap the window does not reach across.
    pub gap: Option<TimeDelta>,
}

impl WindowRule {
    /// About `window`, a slack of the window again, no gap.
    ///
    /// # Example
    /// ```
    /// let rule = promrate::WindowRule::new(chrono::TimeDelta::seconds(10));
    /// assert_eq!(rule.gap, None);
    /// ```
    pub fn new(window: TimeDelta) -> WindowRule {
        WindowRule {
            window,
            slack: window,
            gap: None,
        }
    }

    /// The start may be up to `slack` older than the window.
    ///
    /// # Example
    /// ```
    /// let rule = promrate::WindowRule::new(chrono::TimeDelta::seconds(10)).slack(chrono::TimeDelta::zero());
    /// assert_eq!(rule.slack, chrono::TimeDelta::zero());
    /// ```
    pub fn slack(mut self, slack: TimeDelta) -> WindowRule {
        self.slack = slack;
        self
    }

    /// Points further apart than `gap` are not compared.
    ///
    /// # Example
    /// ```
    /// let rule = promrate::WindowRule::new(chrono::TimeDelta::seconds(10)).gap(chrono::TimeDelta::seconds(3));
    /// assert_eq!(rule.gap, Some(chrono::TimeDelta::seconds(3)));
    /// ```
    pub fn gap(mut self, gap: TimeDelta) -> WindowRule {
        self.gap = Some(gap);
        self
    }

    /// The rule in milliseconds, as [`CounterSeries::measure`] reads it: a query that
    /// measures a million series converts it once.
    pub(crate) fn in_ms(&self) -> RuleMs {
        RuleMs {
            window_ms: self.window.num_milliseconds(),
            slack_ms: self.slack.num_milliseconds().max(0),
            gap_ms: self.gap.map_or(i64::MAX, |g| g.num_milliseconds()),
        }
    }
}

/// A [`WindowRule`] in milliseconds (no gap: `i64::MAX`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RuleMs {
    pub window_ms: i64,
    pub slack_ms: i64,
    pub gap_ms: i64,
}
