//! The front door: a [`Query`] answered per group, each figure or why it has none.
//! Rates, increases and EWMAs ([`Tracker::evaluate`]), a histogram's quantile
//! ([`Tracker::quantile`]) and mean ([`Tracker::mean`]) all read each series through
//! `series_figure`, so an estimator means the same in all three.

use chrono::{DateTime, TimeDelta, Utc};

use super::aggregate::{family_selector, part_selector, Pick, HISTOGRAM_PARTS};
use super::{TrackedSeries, Tracker};
use crate::error::{NoValue, QueryError};
use crate::histogram::{self, Bucket};
use crate::promql::millis_to_time;
use crate::query::{Answer, Coverage, Estimator, GroupAnswer, Modifier, Query, SeriesScope};
use crate::select::Selector;
use crate::series::{CounterSeries, Shortened};

/// One series' figure and the time its points cover.
type Figure = Result<(f64, Option<Covered>), NoValue>;

/// The time points cover, in milliseconds while a query folds (times are built once, for
/// the answer): the oldest start, the newest end, the longest span of one series.
#[derive(Debug, Clone, Copy)]
struct Covered {
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

    fn merge(self, other: Covered) -> Covered {
        Covered {
            start_ms: self.start_ms.min(other.start_ms),
            end_ms: self.end_ms.max(other.end_ms),
            longest_ms: self.longest_ms.max(other.longest_ms),
            shortened: self.shortened.or(other.shortened),
        }
    }

    fn coverage(self) -> Coverage {
        Coverage {
            start: millis_to_time(self.start_ms),
            end: millis_to_time(self.end_ms),
            span: TimeDelta::milliseconds(self.longest_ms),
            shortened: self.shortened,
        }
    }
}

/// A group's figures folded: the sum of the values, how many, the first reason of a
/// series without one, and the coverage of those with one.
#[derive(Debug)]
struct Fold<T> {
    value: T,
    series: usize,
    why: Option<NoValue>,
    coverage: Option<Covered>,
}

impl<T> Fold<T> {
    fn start(figure: Result<(T, Option<Covered>), NoValue>, empty: T) -> Fold<T> {
        match figure {
            Ok((value, coverage)) => Fold {
                value,
                series: 1,
                why: None,
                coverage,
            },
            Err(why) => Fold {
                value: empty,
                series: 0,
                why: Some(why),
                coverage: None,
            },
        }
    }

    fn add(&mut self, figure: Result<(T, Option<Covered>), NoValue>, combine: impl FnOnce(&mut T, T)) {
        match figure {
            Ok((value, coverage)) => {
                combine(&mut self.value, value);
                self.series += 1;
                self.coverage = match (self.coverage, coverage) {
                    (Some(a), Some(b)) => Some(a.merge(b)),
                    (a, b) => a.or(b),
                };
            }
            Err(why) => {
                self.why.get_or_insert(why);
            }
        }
    }
}

impl Tracker {
    /// Answers a [`Query`]: each group's figure (the sum over its series, as PromQL's
    /// `sum by`), or why it has none, and what time its points cover.
    ///
    /// # Errors
    /// [`QueryError`] when the query cannot be answered whatever the data: a selector the
    /// tracker does not keep, a histogram's name (its parts would be added together: ask for
    /// `x_count`, or [`Tracker::quantile`]), a window missing or longer than the retention,
    /// a modifier PromQL does not allow with the estimator, an EWMA window that is not the
    /// tracker's time constant. A figure without a value is not an error: its group says why
    /// ([`NoValue`]).
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// use promrate::{Estimator, Query, Selector, Tracker};
    /// let tokens = Selector::parse("vllm:generation_tokens_total")?;
    /// let mut tracker = Tracker::new([tokens.clone()]);
    /// let t0 = DateTime::from_timestamp(1_764_000_000, 0).unwrap();
    /// tracker.ingest("vllm:generation_tokens_total 5000\n", t0)?;
    /// // The server restarted in between: 300 new tokens, not -4700.
    /// let report = tracker.ingest("vllm:generation_tokens_total 300\n", t0 + TimeDelta::seconds(10))?;
    /// assert_eq!(report.resets.len(), 1);
    /// let rate = tracker.evaluate(&Query::new(&tokens, Estimator::WindowRate).window(TimeDelta::seconds(10)))?;
    /// assert_eq!(rate.value()?, 30.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn evaluate(&self, query: &Query) -> Result<Answer, QueryError> {
        self.check_query(query)?;
        self.check_tracked(&query.selector)?;
        self.check_not_histogram(&query.selector)?;
        let Some(at) = query.at.or_else(|| self.last_scrape()) else {
            return Ok(self.no_scrapes(query));
        };
        let by: Vec<&str> = query.by.iter().map(String::as_str).collect();
        let groups = self.grouped(
            &query.selector,
            Pick::Family,
            &by,
            |series| Some(self.series_figure(series, query, at)),
            |figure| Fold::start(figure, 0.0),
            |fold, figure| fold.add(figure, |sum, v| *sum += v),
        );
        let groups = groups
            .into_iter()
            .map(|(labels, fold)| GroupAnswer {
                labels,
                value: if fold.series > 0 {
                    Ok(fold.value)
                } else {
                    Err(fold.why.unwrap_or(NoValue::NoScrapes))
                },
                series: fold.series,
                coverage: fold.coverage.map(Covered::coverage),
            })
            .collect();
        Ok(self.answer(query, at, groups))
    }

    /// PromQL's `histogram_quantile(q, sum by (le, ...) (f(x_bucket)))` for the histogram
    /// the query's selector names (`x`, or `x_bucket` as PromQL users write it), each
    /// bucket's figure computed with the query's estimator (the window increase, or PromQL's
    /// `rate` or `increase`, give the same quantile).
    ///
    /// # Errors
    /// As [`Tracker::evaluate`], for the histogram's `_bucket` series;
    /// [`QueryError::InvalidQuantile`] for a `q` outside `[0, 1]` (PromQL would answer ±Inf:
    /// `95` written for `0.95`). A group without a quantile says why: no `+Inf` bucket, no
    /// observation in the window.
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// use promrate::{Estimator, Query, Selector, Tracker};
    /// let ttft = Selector::parse("vllm:time_to_first_token_seconds")?;
    /// let mut tracker = Tracker::new([ttft.clone()]);
    /// let page = |fast: u32, all: u32| format!(
    ///     "# TYPE vllm:time_to_first_token_seconds histogram\n\
    ///      vllm:time_to_first_token_seconds_bucket{{le=\"0.1\"}} {fast}\n\
    ///      vllm:time_to_first_token_seconds_bucket{{le=\"1.0\"}} {all}\n\
    ///      vllm:time_to_first_token_seconds_bucket{{le=\"+Inf\"}} {all}\n\
    ///      vllm:time_to_first_token_seconds_count {all}\n");
    /// let at = |s: i64| DateTime::from_timestamp(1_764_000_000 + s, 0).unwrap();
    /// tracker.ingest(&page(500, 1000), at(0))?;
    /// tracker.ingest(&page(590, 1100), at(60))?; // in the minute: 90 of 100 under 0.1 s
    /// let minute = Query::new(&ttft, Estimator::WindowIncrease).window(TimeDelta::minutes(1));
    /// let p95 = tracker.quantile(0.95, &minute)?.value()?;
    /// assert!((p95 - 0.55).abs() < 1e-9); // halfway through (0.1, 1.0]
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn quantile(&self, q: f64, query: &Query) -> Result<Answer, QueryError> {
        if !(0.0..=1.0).contains(&q) {
            return Err(QueryError::InvalidQuantile { q });
        }
        self.check_query(query)?;
        self.check_tracked(&part_selector(&query.selector, "_bucket"))?;
        let Some(at) = query.at.or_else(|| self.last_scrape()) else {
            return Ok(self.no_scrapes(query));
        };
        let by: Vec<&str> = query.by.iter().map(String::as_str).collect();
        let family = family_selector(&query.selector);
        let bucket = |series: &TrackedSeries| {
            let upper_bound = series.label("le")?.parse::<f64>().ok()?;
            let figure = self.series_figure(series, query, at);
            Some(figure.map(|(count, coverage)| (vec![Bucket { upper_bound, count }], coverage)))
        };
        let groups = self.grouped(
            &family,
            Pick::Part("_bucket"),
            &by,
            bucket,
            |figure| Fold::start(figure, Vec::new()),
            |fold, figure| fold.add(figure, |all, one| all.extend(one)),
        );
        let groups = groups
            .into_iter()
            .map(|(labels, fold)| {
                let value = match fold.why {
                    Some(why) if fold.series == 0 => Err(why),
                    _ => quantile_of(q, &fold.value),
                };
                GroupAnswer {
                    labels,
                    value,
                    series: fold.series,
                    coverage: fold.coverage.map(Covered::coverage),
                }
            })
            .collect();
        Ok(self.answer(
            &query.with_selector(part_selector(&query.selector, "_bucket")),
            at,
            groups,
        ))
    }

    /// The mean observation of the histogram (or summary) the query's selector names:
    /// `sum by (...) (f(x_sum)) / sum by (...) (f(x_count))`, each with the query's
    /// estimator (over a window: the mean of the observations made in it).
    ///
    /// # Errors
    /// As [`Tracker::evaluate`], for the `_sum` and `_count` series. A group without
    /// observations in the window says so.
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// use promrate::{Estimator, Query, Selector, Tracker};
    /// let latency = Selector::parse("e2e_seconds")?;
    /// let mut t = Tracker::new([latency.clone()]);
    /// let at = |s| DateTime::from_timestamp(s, 0).unwrap();
    /// t.ingest("# TYPE e2e_seconds histogram\ne2e_seconds_sum 10\ne2e_seconds_count 4\n", at(0))?;
    /// t.ingest("# TYPE e2e_seconds histogram\ne2e_seconds_sum 13\ne2e_seconds_count 8\n", at(10))?;
    /// let mean = t.mean(&Query::new(&latency, Estimator::WindowIncrease).window(TimeDelta::seconds(10)))?;
    /// assert_eq!(mean.value()?, 0.75); // 3 s over 4 requests
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn mean(&self, query: &Query) -> Result<Answer, QueryError> {
        let sums = self.evaluate(&query.with_selector(part_selector(&query.selector, "_sum")))?;
        let counts = self.evaluate(&query.with_selector(part_selector(&query.selector, "_count")))?;
        let groups: Vec<GroupAnswer> = sums
            .groups
            .into_iter()
            .map(|sum| {
                let count = counts.groups.iter().find(|c| c.labels == sum.labels);
                let value = match (sum.value, count.map(|c| c.value.clone())) {
                    (Ok(sum), Some(Ok(count))) => histogram::mean(sum, count).ok_or(NoValue::NoObservations),
                    (Err(why), _) | (_, Some(Err(why))) => Err(why),
                    (Ok(_), None) => Err(NoValue::NoObservations),
                };
                GroupAnswer { value, ..sum }
            })
            .collect();
        let empty = if groups.is_empty() {
            sums.empty.or(counts.empty)
        } else {
            None
        };
        Ok(Answer {
            groups,
            at: sums.at,
            window: sums.window,
            empty,
            missing_labels: sums.missing_labels,
        })
    }

    /// A selector that names a histogram or summary (its `_bucket`, `_sum` or `_count`
    /// series are held) would add its parts together.
    fn check_not_histogram(&self, selector: &Selector) -> Result<(), QueryError> {
        let Some(name) = selector.metric_name() else {
            return Ok(());
        };
        let parts: Vec<String> = HISTOGRAM_PARTS
            .iter()
            .filter(|part| self.picked(selector, Pick::Part(part)).next().is_some())
            .map(|part| format!("{name}{part}"))
            .collect();
        if parts.is_empty() {
            return Ok(());
        }
        Err(QueryError::HistogramName {
            selector: selector.to_string(),
            name: name.to_string(),
            parts,
        })
    }

    /// Whether the query's settings go together and with the tracker's.
    fn check_query(&self, query: &Query) -> Result<(), QueryError> {
        let estimator = query.estimator;
        if let Some(modifier) = query.modifier {
            if !matches!(estimator, Estimator::Rate | Estimator::Increase) {
                return Err(QueryError::ModifierNotAllowed {
                    modifier: modifier.name(),
                    estimator: estimator.name(),
                });
            }
        }
        match (estimator, query.window) {
            (Estimator::Ewma, Some(asked)) if asked != self.ewma_tau => Err(QueryError::EwmaTimeConstant {
                asked,
                tracker: self.ewma_tau,
            }),
            (Estimator::Ewma, _) => Ok(()),
            (_, None) => Err(QueryError::WindowMissing {
                estimator: estimator.name(),
            }),
            (_, Some(window)) if window > self.retention => Err(QueryError::WindowBeyondRetention {
                window,
                retention: self.retention,
            }),
            _ => Ok(()),
        }
    }

    /// One series' figure at `at`, or why it has none.
    fn series_figure(&self, series: &TrackedSeries, query: &Query, at: DateTime<Utc>) -> Figure {
        if query.scope == SeriesScope::NewestPage && !self.on_newest_page(series) {
            let newest = series.newest_ms().unwrap_or(0);
            return Err(NoValue::NotOnNewestPage {
                last_seen: millis_to_time(newest),
            });
        }
        let counter = series.counter().ok_or_else(|| NoValue::NotACounter {
            name: series.name().to_string(),
        })?;
        // Ewma needs no window; check_query made sure every other estimator has one.
        let window = query.window.unwrap_or(self.ewma_tau);
        match query.estimator {
            Estimator::WindowRate | Estimator::WindowIncrease => {
                let w = counter.measure(&query.window_rule(window), at.timestamp_millis())?;
                let value = if query.estimator == Estimator::WindowRate {
                    w.rate()
                } else {
                    w.increase
                };
                Ok((value, Some(Covered::of(w.start_ms, w.end_ms, w.shortened))))
            }
            Estimator::Rate | Estimator::Increase | Estimator::Irate => {
                // A counter without a created time of its own starts when its target's
                // process did (`Tracker::start_time_gauge`).
                let target_starts = (query.start_timestamps && !counter.has_created())
                    .then(|| {
                        let window_start = at.timestamp_millis() - window.num_milliseconds();
                        let times = counter.points().iter().map(|p| p.timestamp_ms);
                        self.starts.column(series, window_start, times)
                    })
                    .flatten();
                promql_figure(counter, query, window, at, target_starts.as_deref())
            }
            Estimator::Ewma => {
                let newest = counter.last().map(|p| p.timestamp_ms).unwrap_or(i64::MIN);
                if at.timestamp_millis() < newest {
                    return Err(NoValue::EwmaAtEarlierTime {
                        at,
                        newest: millis_to_time(newest),
                    });
                }
                counter.ewma_erratic()?;
                let ewma = counter.ewma_rate().ok_or(NoValue::EwmaNotStarted)?;
                Ok((ewma, None))
            }
        }
    }

    fn no_scrapes(&self, query: &Query) -> Answer {
        Answer {
            groups: Vec::new(),
            at: DateTime::<Utc>::UNIX_EPOCH,
            window: query.window,
            empty: Some(NoValue::NoScrapes),
            missing_labels: Vec::new(),
        }
    }

    fn answer(&self, query: &Query, at: DateTime<Utc>, groups: Vec<GroupAnswer>) -> Answer {
        let empty = groups.is_empty().then(|| self.why_no_series(&query.selector));
        // `by` labels no series has: a misspelling reads as one group of "".
        let missing_labels = if empty.is_some() {
            Vec::new()
        } else {
            query
                .by
                .iter()
                .filter(|label| {
                    groups.iter().all(|g| {
                        g.labels
                            .iter()
                            .all(|(name, value)| **name != ***label || value.is_empty())
                    })
                })
                .cloned()
                .collect()
        };
        Answer {
            groups,
            at,
            window: (query.estimator != Estimator::Ewma)
                .then_some(query.window)
                .flatten(),
            empty,
            missing_labels,
        }
    }

    /// Why a selector picks no series: no series of its name (the nearest names tracked),
    /// or series of its name whose labels its matchers refuse (the first such label and
    /// its values).
    fn why_no_series(&self, selector: &Selector) -> NoValue {
        if let Some(native) = self.native_histogram(selector) {
            return native;
        }
        let name_only: Vec<_> = selector
            .matchers()
            .iter()
            .filter(|m| m.label() == "__name__")
            .cloned()
            .collect();
        let named = Selector::from_matchers(name_only).normalize_names(selector.normalizes_names());
        let of_name: Vec<&TrackedSeries> = if selector.metric_name().is_some() {
            self.picked(&named, Pick::Family).collect()
        } else {
            Vec::new()
        };
        let refused = selector
            .matchers()
            .iter()
            .filter(|m| m.label() != "__name__")
            .find(|m| {
                of_name
                    .iter()
                    .all(|s| !m.matches_value(s.label(m.label()).unwrap_or("")))
            });
        match refused {
            Some(m) if !of_name.is_empty() => {
                let mut values: Vec<String> = of_name
                    .iter()
                    .filter_map(|s| s.label(m.label()))
                    .map(str::to_string)
                    .collect();
                values.sort();
                values.dedup();
                values.truncate(10);
                NoValue::NoLabelMatch {
                    selector: selector.to_string(),
                    label: m.label().to_string(),
                    values,
                }
            }
            _ => NoValue::NoSeries {
                selector: selector.to_string(),
                nearest: super::nearest::nearest_tracked(self, selector),
            },
        }
    }
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
    let range = query.range_functions(window);
    let points = counter.points();
    let value = match (query.estimator, query.modifier, target_starts) {
        (Estimator::Rate, None, Some(starts)) => range.with_start_millis(starts).rate(points, at),
        (Estimator::Increase, None, Some(starts)) => range.with_start_millis(starts).increase(points, at),
        (Estimator::Irate, _, Some(starts)) => range.with_start_millis(starts).irate(points, at),
        _ => promql_value(counter, query, &range, at),
    };
    let Some(value) = value else {
        range.check(points, at)?;
        return Err(NoValue::NoAnchor {
            lookback: query.lookback.unwrap_or(crate::promql::DEFAULT_LOOKBACK),
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
        // The series' oldest point is inside the window, well after its start (a point
        // just after the start is as good as one at it: a tenth of the window is allowed).
        let late_start = first == 0 && points[0].timestamp_ms - start_ms > window.num_milliseconds() / 10;
        let shortened = late_start.then(|| {
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

/// The quantile of one group's buckets, or why there is none.
fn quantile_of(q: f64, buckets: &[Bucket]) -> Result<f64, NoValue> {
    histogram::quantile(q, buckets).ok_or_else(|| {
        let has_inf = buckets.iter().any(|b| b.upper_bound == f64::INFINITY);
        let mut bounds: Vec<u64> = buckets.iter().map(|b| b.upper_bound.to_bits()).collect();
        bounds.sort_unstable();
        bounds.dedup();
        if has_inf && bounds.len() >= 2 {
            NoValue::NoObservations
        } else {
            NoValue::NoBuckets {
                buckets: bounds.len(),
                has_inf,
            }
        }
    })
}

/// PromQL's figure of `counter` with its own start times, or values only.
fn promql_value(
    counter: &CounterSeries,
    query: &Query,
    range: &crate::promql::RangeFunctions,
    at: DateTime<Utc>,
) -> Option<f64> {
    let points = counter.points();
    match (query.estimator, query.modifier) {
        (Estimator::Rate, None) if query.start_timestamps => counter.rate(range, at),
        (Estimator::Increase, None) if query.start_timestamps => counter.increase(range, at),
        (Estimator::Irate, _) if query.start_timestamps => counter.irate(range, at),
        (Estimator::Rate, None) => range.rate(points, at),
        (Estimator::Increase, None) => range.increase(points, at),
        (Estimator::Irate, _) => range.irate(points, at),
        (Estimator::Rate, Some(Modifier::Anchored)) => range.anchored().rate(points, at),
        (Estimator::Increase, Some(Modifier::Anchored)) => range.anchored().increase(points, at),
        (Estimator::Rate, Some(Modifier::Smoothed)) => range.smoothed().rate(points, at),
        (Estimator::Increase, Some(Modifier::Smoothed)) => range.smoothed().increase(points, at),
        _ => None,
    }
}
