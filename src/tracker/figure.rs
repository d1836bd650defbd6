//! One series' figure with a query's estimator, and the time its points cover: what every
//! reading of [`Tracker::evaluate`] (a sum, a quantile, a mean, buckets) folds.

use chrono::{DateTime, TimeDelta, Utc};

use super::{TrackedSeries, Tracker};
use crate::error::NoValue;
use crate::promql::{millis_to_time, Point, RangeForm};
use crate::query::{Coverage, Estimator, Query, SeriesScope};
use crate::series::RuleMs;
use crate::series::{CounterSeries, Shortened};

/// One series' figure and the time its points cover.
pub(super) type Figure = Result<(f64, Option<Covered>), NoValue>;

/// The time points cover, in milliseconds while a query folds (times are built once, for
/// the answer): the oldest start, the newest end, the longest span of one series.
#[derive(Debug, Clone, Copy)]
pub(super) struct Covered {
    start_ms: i64,
    end_ms: i64,
    longest_ms: i64,
    shortened: Option<Shortened>,
}

impl Covered {
    fn of(start_ms: i64, end_ms: i64, shortened: Option<Shortened>) -> Covered {
        Covered {
            start_ms,
            end_ms,
            longest_ms: end_ms - start_ms,
            shortened,
        }
    }

    pub(super) fn merge(self, other: Covered) -> Covered {
        Covered {
            start_ms: self.start_ms.min(other.start_ms),
            end_ms: self.end_ms.max(other.end_ms),
            longest_ms: self.longest_ms.max(other.longest_ms),
            shortened: self.shortened.or(other.shortened),
        }
    }

    pub(super) fn coverage(self) -> Coverage {
        Coverage {
            start: millis_to_time(self.start_ms),
            end: millis_to_time(self.end_ms),
            span: TimeDelta::milliseconds(self.longest_ms),
            shortened: self.shortened,
        }
    }
}

impl Tracker {
    /// One series' figure at `at`, or why it has none. `window` is the query's (checked
    /// present for the estimators that read one).
    pub(super) fn series_figure(
        &self,
        series: &TrackedSeries,
        query: &Query,
        measured: &MeasuredAt,
    ) -> Figure {
        let at = measured.at;
        if query.scope == SeriesScope::NewestPage && !self.on_newest_page(series) {
            let newest = series.newest_ms().unwrap_or(0);
            return Err(NoValue::NotOnNewestPage {
                last_seen: millis_to_time(newest),
            });
        }
        let window = measured.window;
        // Without a time asked, the newest page's values are the newest points, even where
        // a page's own timestamps are a little after the time it was read at.
        let newest = query.at.is_none();
        match query.estimator {
            Estimator::Last if newest => last_figure(series.points(), DateTime::<Utc>::MAX_UTC),
            Estimator::Last => last_figure(series.points(), at),
            Estimator::Average => average_figure(series.points(), window, at),
            estimator => {
                let counter = series.counter().ok_or_else(|| NoValue::NotACounter {
                    name: series.name().to_string(),
                })?;
                match estimator {
                    Estimator::WindowRate | Estimator::WindowIncrease => {
                        let w = counter.measure(&measured.rule, measured.at_ms)?;
                        let value = if estimator == Estimator::WindowRate {
                            w.rate()
                        } else {
                            w.increase
                        };
                        Ok((value, Some(Covered::of(w.start_ms, w.end_ms, w.shortened))))
                    }
                    Estimator::Ewma | Estimator::TotalIncrease => {
                        running_figure(counter, estimator, (!newest).then_some(at))
                    }
                    _ => {
                        // A counter without a created time of its own starts when its
                        // target's process did (`Tracker::start_time_gauge`).
                        let target_starts = (query.start_timestamps && !counter.has_created())
                            .then(|| {
                                let window_start = measured.at_ms - measured.rule.window_ms;
                                let times = counter.points().iter().map(|p| p.timestamp_ms);
                                self.starts.column(series, window_start, times)
                            })
                            .flatten();
                        promql_figure(counter, query, window, at, target_starts.as_deref())
                    }
                }
            }
        }
    }
}

/// What every series of one query is measured at, converted once: a query reads up to
/// millions of series, and converting times per series was a tenth of a window rate.
#[derive(Debug, Clone, Copy)]
pub(super) struct MeasuredAt {
    at: DateTime<Utc>,
    at_ms: i64,
    /// The query's window, or the tracker's EWMA time constant.
    window: TimeDelta,
    rule: RuleMs,
}

impl MeasuredAt {
    pub(super) fn new(tracker: &Tracker, query: &Query, at: DateTime<Utc>) -> Self {
        let window = query.window.unwrap_or(tracker.ewma_tau);
        MeasuredAt {
            at,
            at_ms: at.timestamp_millis(),
            window,
            rule: query.window_rule_for(window).in_ms(),
        }
    }
}

/// The newest value at or before `at`.
fn last_figure(points: &[Point], at: DateTime<Utc>) -> Figure {
    let at_ms = at.timestamp_millis();
    let end = points.partition_point(|p| p.timestamp_ms <= at_ms);
    let Some(point) = end.checked_sub(1).map(|i| points[i]) else {
        return Err(NoValue::NoPoint { from: None, to: at });
    };
    Ok((
        point.value,
        Some(Covered::of(point.timestamp_ms, point.timestamp_ms, None)),
    ))
}

/// The mean of the points in `(at - window, at]`.
fn average_figure(points: &[Point], window: TimeDelta, at: DateTime<Utc>) -> Figure {
    let (start_ms, at_ms) = (
        at.timestamp_millis() - window.num_milliseconds(),
        at.timestamp_millis(),
    );
    let first = points.partition_point(|p| p.timestamp_ms <= start_ms);
    let end = points.partition_point(|p| p.timestamp_ms <= at_ms);
    let in_window = &points[first..end.max(first)];
    if in_window.is_empty() {
        return Err(NoValue::NoPoint {
            from: Some(millis_to_time(start_ms)),
            to: at,
        });
    }
    let mean = in_window.iter().map(|p| p.value).sum::<f64>() / in_window.len() as f64;
    let shortened = (first == 0 && late_start(points[0].timestamp_ms, start_ms, window))
        .then_some(Shortened::SinceFirstPoint);
    let covered = Covered::of(
        in_window[0].timestamp_ms,
        in_window[in_window.len() - 1].timestamp_ms,
        shortened,
    );
    Ok((mean, Some(covered)))
}

/// A series' oldest point well after the window's start (a point just after the start is
/// as good as one at it: a tenth of the window is allowed).
fn late_start(first_ms: i64, start_ms: i64, window: TimeDelta) -> bool {
    first_ms - start_ms > window.num_milliseconds() / 10
}

/// The EWMA, or the increase since the first page: running figures, known as of the newest
/// point (refused at an earlier time asked).
fn running_figure(counter: &CounterSeries, estimator: Estimator, at: Option<DateTime<Utc>>) -> Figure {
    let newest = counter.last().map(|p| p.timestamp_ms).unwrap_or(i64::MIN);
    if let Some(at) = at.filter(|at| at.timestamp_millis() < newest) {
        return Err(NoValue::AsOfNewestPoint {
            figure: estimator.name(),
            at,
            newest: millis_to_time(newest),
        });
    }
    if estimator == Estimator::TotalIncrease {
        return Ok((counter.total_increase(), None));
    }
    counter.ewma_erratic()?;
    let ewma = counter.ewma_rate().ok_or(NoValue::EwmaNotStarted)?;
    Ok((ewma, None))
}

/// PromQL's `rate`, `increase` or `irate` (with the query's modifier) of one counter, with
/// the time its points in the window cover.
fn promql_figure(
    counter: &CounterSeries,
    query: &Query,
    window: TimeDelta,
    at: DateTime<Utc>,
    target_starts: Option<&[Option<i64>]>,
) -> Figure {
    let form = query.range_form(window);
    let range = form.functions();
    let points = counter.points();
    let value = match (query.estimator, form, target_starts) {
        (Estimator::Rate, RangeForm::Plain(_), Some(starts)) => {
            range.with_start_millis(starts).rate(points, at)
        }
        (Estimator::Increase, RangeForm::Plain(_), Some(starts)) => {
            range.with_start_millis(starts).increase(points, at)
        }
        (Estimator::Irate, _, Some(starts)) => range.with_start_millis(starts).irate(points, at),
        _ => promql_value(counter, query, form, at),
    };
    let Some(value) = value else {
        range.check(points, at)?;
        return Err(NoValue::NoAnchor {
            lookback: range.lookback_delta(),
        });
    };
    // The points in the window: (at - window, at].
    let (start_ms, at_ms) = (
        at.timestamp_millis() - window.num_milliseconds(),
        at.timestamp_millis(),
    );
    let first = points.partition_point(|p| p.timestamp_ms <= start_ms);
    let end = points.partition_point(|p| p.timestamp_ms <= at_ms);
    let coverage = (first < end).then(|| {
        let shortened = (first == 0 && late_start(points[0].timestamp_ms, start_ms, window)).then(|| {
            if counter.has_let_go() {
                Shortened::Retention
            } else {
                Shortened::SinceFirstPoint
            }
        });
        Covered::of(
            points[first].timestamp_ms,
            points[end - 1].timestamp_ms,
            shortened,
        )
    });
    Ok((value, coverage))
}

/// PromQL's figure of `counter` with its own start times, or values only.
fn promql_value(counter: &CounterSeries, query: &Query, form: RangeForm, at: DateTime<Utc>) -> Option<f64> {
    let points = counter.points();
    let with_starts = query.start_timestamps;
    match (query.estimator, form) {
        (Estimator::Rate, RangeForm::Plain(range)) if with_starts => counter.rate(&range, at),
        (Estimator::Increase, RangeForm::Plain(range)) if with_starts => counter.increase(&range, at),
        (Estimator::Irate, form) if with_starts => counter.irate(&form.functions(), at),
        (Estimator::Rate, RangeForm::Plain(range)) => range.rate(points, at),
        (Estimator::Increase, RangeForm::Plain(range)) => range.increase(points, at),
        (Estimator::Irate, form) => form.functions().irate(points, at),
        (Estimator::Rate, RangeForm::Anchored(a)) => a.rate(points, at),
        (Estimator::Increase, RangeForm::Anchored(a)) => a.increase(points, at),
        (Estimator::Rate, RangeForm::Smoothed(s)) => s.rate(points, at),
        (Estimator::Increase, RangeForm::Smoothed(s)) => s.increase(points, at),
        _ => None,
    }
}
