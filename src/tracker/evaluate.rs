//! The front door: a [`Query`] answered per group, each figure or why it has none. Every
//! reading (a sum, a histogram's quantile, mean or buckets) folds the figures
//! `figure.rs` gives per series, so an estimator means the same in all of them.

use chrono::{DateTime, TimeDelta, Utc};

use super::aggregate::{family_selector, part_selector, Pick, HISTOGRAM_PARTS};
use super::figure::{Covered, MeasuredAt};
use super::{TrackedSeries, Tracker};
use crate::error::{NoValue, QueryError};
use crate::histogram::{self, Bucket};
use crate::promql::sum::{Aggregate, Sum};
use crate::promql::Semantics;
use crate::query::{Answer, Estimator, GroupAnswer, GroupLabels, Query, Reading};
use crate::select::Selector;

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

    /// Adds one series' figure (`U`: a `T`, or a part of one, as a bucket of a group's
    /// buckets).
    fn add<U>(&mut self, figure: Result<(U, Option<Covered>), NoValue>, combine: impl FnOnce(&mut T, U)) {
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

    /// The group's value from its folded figures, or the first reason of a series without
    /// one when none has a value.
    fn value_or_why(&self, value: impl FnOnce(&T) -> Result<f64, NoValue>) -> Result<f64, NoValue> {
        match &self.why {
            Some(why) if self.series == 0 => Err(why.clone()),
            _ => value(&self.value),
        }
    }

    fn answer(&self, labels: GroupLabels, value: Result<f64, NoValue>, buckets: Vec<Bucket>) -> GroupAnswer {
        GroupAnswer {
            labels,
            value,
            series: self.series,
            coverage: self.coverage.map(Covered::coverage),
            buckets,
        }
    }
}

/// One bucket per bound, the figures of a bound's series summed, sorted by bound.
fn merge_bounds(buckets: &[Bucket], semantics: Semantics) -> Vec<Bucket> {
    let mut sorted: Vec<Bucket> = buckets.to_vec();
    // Stable: each bound's series stay in series order, the order PromQL's `sum by (le)`
    // adds them in.
    sorted.sort_by(|a, b| a.upper_bound.total_cmp(&b.upper_bound));
    // Room for every bound at once: collecting from runs would grow the list by doubling.
    let mut merged = Vec::with_capacity(sorted.len());
    merged.extend(
        sorted
            .chunk_by(|a, b| a.upper_bound == b.upper_bound)
            .map(|bound| {
                let mut sum = Sum::new(semantics);
                bound.iter().for_each(|b| sum.add(b.count));
                Bucket::new(bound[0].upper_bound, sum.value())
            }),
    );
    merged
}

impl Tracker {
    /// Answers a [`Query`]: each group's figure (the sum over its series, as PromQL's
    /// `sum by`; or of a histogram, with [`Query::quantile`], [`Query::mean`] or
    /// [`Query::buckets`], its quantile, mean observation or buckets), or why it has none,
    /// and what time its points cover.
    ///
    /// # Errors
    /// [`QueryError`] when the query cannot be answered whatever the data: a selector the
    /// tracker does not keep, a histogram's name summed (its parts would be added together:
    /// ask for `x_count`, or a quantile), a window missing or longer than the retention, a
    /// modifier PromQL does not allow with the estimator, an EWMA window that is not the
    /// tracker's time constant, a quantile outside `[0, 1]`. A figure without a value is not
    /// an error: its group says why ([`NoValue`]).
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
        match query.reading {
            Reading::Value => self.sum_answer(query),
            Reading::Quantile(q) => self.quantile_answer(q, query),
            Reading::Mean => self.mean_answer(query),
            Reading::Buckets => self.buckets_answer(query),
        }
    }

    /// Each group's sum of its series' figures.
    fn sum_answer(&self, query: &Query) -> Result<Answer, QueryError> {
        self.check_query(query)?;
        self.check_tracked(&query.selector)?;
        self.check_not_histogram(&query.selector)?;
        let Some(at) = query.at.or_else(|| self.last_scrape()) else {
            return Ok(self.no_scrapes(query));
        };
        let by: Vec<&str> = query.by.iter().map(String::as_str).collect();
        let measured = MeasuredAt::new(self, query, at);
        // Added as the query's PromQL adds a `sum by` (compensated from Prometheus 2.54 on).
        let semantics = query.range.functions().semantics;
        let groups = self.grouped(
            &query.selector,
            Pick::Family,
            &by,
            |series| Some(self.series_figure(series, query, &measured)),
            |figure| {
                let first = figure.map(|(v, coverage)| (Sum::first(v, semantics), coverage));
                Fold::start(first, Sum::new(semantics))
            },
            |fold, figure| fold.add(figure, |sum, v| sum.add(v)),
        );
        let groups = groups
            .into_iter()
            .map(|(labels, fold)| {
                let value = fold.value_or_why(|sum| Ok(sum.value()));
                fold.answer(labels, value, Vec::new())
            })
            .collect();
        Ok(self.answer(query, at, groups))
    }

    /// Each group's buckets: `(le, figure)` of every `_bucket` series of the histogram the
    /// query names, summed per bound.
    fn bucket_groups(&self, query: &Query, at: DateTime<Utc>) -> Vec<(GroupLabels, Fold<Vec<Bucket>>)> {
        let by: Vec<&str> = query.by.iter().map(String::as_str).collect();
        let family = family_selector(&query.selector);
        let measured = MeasuredAt::new(self, query, at);
        let bucket = |series: &TrackedSeries| {
            let upper_bound = series.label("le")?.parse::<f64>().ok()?;
            let figure = self.series_figure(series, query, &measured);
            Some(figure.map(|(count, coverage)| (Bucket { upper_bound, count }, coverage)))
        };
        // A group's list is made by its first bucket; the others are pushed onto it.
        self.grouped(
            &family,
            Pick::Part("_bucket"),
            &by,
            bucket,
            |figure| Fold::start(figure.map(|(one, coverage)| (vec![one], coverage)), Vec::new()),
            |fold, figure| fold.add(figure, Vec::push),
        )
    }

    fn check_buckets(&self, query: &Query) -> Result<Option<DateTime<Utc>>, QueryError> {
        self.check_query(query)?;
        self.check_tracked(&part_selector(&query.selector, "_bucket"))?;
        Ok(query.at.or_else(|| self.last_scrape()))
    }

    /// PromQL's `histogram_quantile(q, sum by (le, ...) (f(x_bucket)))`.
    fn quantile_answer(&self, q: f64, query: &Query) -> Result<Answer, QueryError> {
        if !(0.0..=1.0).contains(&q) {
            return Err(QueryError::InvalidQuantile { q });
        }
        let Some(at) = self.check_buckets(query)? else {
            return Ok(self.no_scrapes(query));
        };
        // Each bound's figures added as the query's PromQL adds a `sum by (le)`.
        let semantics = query.range.functions().semantics;
        let groups = self
            .bucket_groups(query, at)
            .into_iter()
            .map(|(labels, fold)| {
                let value = fold.value_or_why(|buckets| quantile_of(q, &merge_bounds(buckets, semantics)));
                fold.answer(labels, value, Vec::new())
            })
            .collect();
        let buckets_query = query.with_selector(part_selector(&query.selector, "_bucket"));
        Ok(self.answer(&buckets_query, at, groups))
    }

    /// Each group's buckets, merged per bound and sorted; the value is the `+Inf` bucket's.
    fn buckets_answer(&self, query: &Query) -> Result<Answer, QueryError> {
        let Some(at) = self.check_buckets(query)? else {
            return Ok(self.no_scrapes(query));
        };
        // Each bound's figures added as the query's PromQL adds a `sum by (le)`.
        let semantics = query.range.functions().semantics;
        let groups = self
            .bucket_groups(query, at)
            .into_iter()
            .map(|(labels, fold)| {
                let merged = merge_bounds(&fold.value, semantics);
                let value = fold.value_or_why(|_| {
                    let inf = merged.iter().find(|b| b.upper_bound == f64::INFINITY);
                    inf.map(|b| b.count).ok_or(NoValue::NoBuckets {
                        buckets: merged.len(),
                        has_inf: false,
                    })
                });
                fold.answer(labels, value, merged)
            })
            .collect();
        let buckets_query = query.with_selector(part_selector(&query.selector, "_bucket"));
        Ok(self.answer(&buckets_query, at, groups))
    }

    /// `sum by (...) (f(x_sum)) / sum by (...) (f(x_count))`.
    fn mean_answer(&self, query: &Query) -> Result<Answer, QueryError> {
        let sums = self.sum_answer(&query.with_selector(part_selector(&query.selector, "_sum")))?;
        let counts = self.sum_answer(&query.with_selector(part_selector(&query.selector, "_count")))?;
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
        if let Some(modifier) = query.range.modifier() {
            if !matches!(estimator, Estimator::Rate | Estimator::Increase) {
                return Err(QueryError::ModifierNotAllowed {
                    modifier,
                    estimator: estimator.name(),
                });
            }
        }
        match (estimator, query.window) {
            (Estimator::Ewma, Some(asked)) if asked != self.ewma_tau => Err(QueryError::EwmaTimeConstant {
                asked,
                tracker: self.ewma_tau,
            }),
            (_, None) if estimator.needs_window() => Err(QueryError::WindowMissing {
                estimator: estimator.name(),
            }),
            (_, Some(window)) if estimator.needs_window() && window <= TimeDelta::zero() => {
                Err(QueryError::WindowNotPositive { window })
            }
            (_, Some(window)) if estimator.needs_window() && window > self.retention => {
                Err(QueryError::WindowBeyondRetention {
                    window,
                    retention: self.retention,
                })
            }
            _ => Ok(()),
        }
    }

    fn no_scrapes(&self, query: &Query) -> Answer {
        Answer {
            groups: Vec::new(),
            at: None,
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
            at: Some(at),
            window: query.estimator.needs_window().then_some(query.window).flatten(),
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
