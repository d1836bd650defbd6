//! What a [`Query`](super::Query) answers: a value per group, or why there is none, and
//! what time the data covers.

use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Utc};

use crate::error::NoValue;
use crate::histogram::Bucket;
use crate::series::Shortened;

/// `(label, value)` of each grouping label of an aggregation, in the order asked (a missing
/// label reads as ""). The strings are shared with the tracker's series, so a group costs
/// one allocation whatever its labels.
pub(crate) type GroupLabels = Vec<(Arc<str>, Arc<str>)>;

/// A tracker's answer to a [`Query`](super::Query): one [`GroupAnswer`] per group of the
/// `by` labels, sorted by their values, and when the query matched no series, why.
///
/// # Example
/// ```
/// use chrono::{DateTime, TimeDelta};
/// use promrate::{Estimator, NoValue, Query, Selector, Tracker};
/// let mut tracker = Tracker::new([]);
/// let at = |s: i64| DateTime::from_timestamp(1_764_000_000 + s, 0).unwrap();
/// tracker.ingest("vllm_generation_tokens_total 0\n", at(0))?;
/// tracker.ingest("vllm_generation_tokens_total 500\n", at(10))?;
/// let asked = Selector::parse("vllm:generation_tokens_total")?;
/// let answer = tracker.evaluate(&Query::new(&asked, Estimator::WindowRate).window(TimeDelta::seconds(10)))?;
/// assert!(answer.groups.is_empty());
/// let why = answer.value().unwrap_err();
/// assert!(matches!(&why, NoValue::NoSeries { nearest, .. } if nearest[0] == "vllm_generation_tokens_total"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Answer {
    /// One per group, sorted by the groups' label values.
    pub groups: Vec<GroupAnswer>,
    /// The time the query was evaluated at: its own ([`Query::at`](super::Query::at)) or the tracker's last
    /// scrape. `None` when it set none and nothing was scraped yet (then
    /// [`Answer::empty`] is [`NoValue::NoScrapes`]).
    pub at: Option<DateTime<Utc>>,
    /// The window asked, if the estimator has one.
    pub window: Option<TimeDelta>,
    /// Why there is no group at all (the selector picks no series the tracker holds).
    pub empty: Option<NoValue>,
    /// `by` labels that none of the series has (each group reads them as ""): usually a
    /// misspelling, as `engnie` for `engine`.
    pub missing_labels: Vec<String>,
}

impl Answer {
    /// The value of an answer of one group (a query without `by`, or whose `by` found one
    /// group), or why there is none.
    ///
    /// # Errors
    /// The group's [`NoValue`]; [`NoValue::NoSeries`] when the query matched nothing;
    /// [`NoValue::SeveralGroups`] with several groups, so that adding `by` to a query never
    /// quietly turns its value into one group's: read [`Answer::groups`] or
    /// [`Answer::group`] instead.
    ///
    /// # Example
    /// ```
    /// use promrate::{Estimator, Query, Selector, Tracker};
    /// let mut tracker = Tracker::new([]);
    /// tracker.ingest("kv_usage 0.25\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
    /// let kv = tracker.evaluate(&Query::new(&Selector::parse("kv_usage")?, Estimator::Ewma))?;
    /// assert!(matches!(kv.value(), Err(promrate::NoValue::NotACounter { .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn value(&self) -> Result<f64, NoValue> {
        match (self.groups.as_slice(), &self.empty) {
            ([group], _) => group.value.clone(),
            ([_, _, ..], _) => Err(NoValue::SeveralGroups {
                groups: self.groups.len(),
            }),
            ([], Some(why)) => Err(why.clone()),
            ([], None) => Err(NoValue::NoSeries {
                selector: String::new(),
                nearest: Vec::new(),
            }),
        }
    }

    /// The group whose `by` labels have these values, in the order asked.
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// use promrate::{Estimator, Query, Selector, Tracker};
    /// let mut tracker = Tracker::new([]);
    /// let at = |s| DateTime::from_timestamp(s, 0).unwrap();
    /// tracker.ingest("t_total{engine=\"0\"} 0\nt_total{engine=\"1\"} 0\n", at(0))?;
    /// tracker.ingest("t_total{engine=\"0\"} 30\nt_total{engine=\"1\"} 70\n", at(10))?;
    /// let query = Query::new(&Selector::parse("t_total")?, Estimator::WindowIncrease).window(TimeDelta::seconds(10)).by(["engine"]);
    /// let answer = tracker.evaluate(&query)?;
    /// assert_eq!(answer.group(&["1"]).unwrap().value, Ok(70.0));
    /// assert!(answer.group(&["2"]).is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn group(&self, values: &[&str]) -> Option<&GroupAnswer> {
        self.groups.iter().find(|g| {
            g.labels.len() == values.len() && g.labels.iter().zip(values).all(|((_, v), want)| &**v == *want)
        })
    }
}

/// One group of an [`Answer`]: its labels, its value or why it has none, how many series
/// gave it, and for the window estimators what time their points cover.
///
/// # Example
/// ```
/// use chrono::{DateTime, TimeDelta};
/// use promrate::{Estimator, Query, Selector, Shortened, Tracker};
/// let mut tracker = Tracker::new([]);
/// let at = |s: i64| DateTime::from_timestamp(1_764_000_000 + s, 0).unwrap();
/// tracker.ingest("t_total 0\n", at(0))?;
/// tracker.ingest("t_total 50\n", at(10))?;
/// // A minute asked, ten seconds known: the answer says so.
/// let answer = tracker.evaluate(&Query::new(&Selector::parse("t_total")?, Estimator::WindowRate).window(TimeDelta::minutes(1)))?;
/// let group = &answer.groups[0];
/// assert_eq!((group.value.clone(), group.series), (Ok(5.0), 1));
/// let covered = group.coverage.unwrap();
/// assert_eq!((covered.span, covered.shortened), (TimeDelta::seconds(10), Some(Shortened::SinceFirstPoint)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct GroupAnswer {
    /// `(label, value)` for each `by` label, in the order asked ("" where the series have
    /// none). The text is shared with the tracker's series, so a group costs one
    /// allocation whatever its labels.
    pub labels: Vec<(Arc<str>, Arc<str>)>,
    /// The figure, or why there is none (the first reason among its series, when none of
    /// them has a value).
    pub value: Result<f64, NoValue>,
    /// How many series gave the figure.
    pub series: usize,
    /// What time the points behind the figure cover (`None` for the EWMA and the total,
    /// running figures).
    pub coverage: Option<Coverage>,
    /// With [`Query::buckets`](super::Query::buckets): each bound's figure, sorted by bound
    /// (empty otherwise).
    pub buckets: Vec<Bucket>,
}

impl GroupAnswer {
    /// A group of a fold of one's own (the crate's `fold` module, a layer above): always a
    /// value, no coverage.
    pub(crate) fn folded(
        labels: GroupLabels,
        value: f64,
        series: usize,
        buckets: Vec<Bucket>,
    ) -> GroupAnswer {
        GroupAnswer {
            labels,
            value: Ok(value),
            series,
            coverage: None,
            buckets,
        }
    }

    /// The value of one grouping label.
    ///
    /// # Example
    /// ```
    /// use promrate::{Estimator, Query, Selector, Tracker};
    /// let mut tracker = Tracker::new([]);
    /// tracker.ingest("t_total{engine=\"0\"} 1\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
    /// let answer = tracker.evaluate(&Query::new(&Selector::parse("t_total")?, Estimator::Ewma).by(["engine"]))?;
    /// assert_eq!(answer.groups[0].label("engine"), Some("0"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn label(&self, name: &str) -> Option<&str> {
        self.labels.iter().find(|(k, _)| **k == *name).map(|(_, v)| &**v)
    }
}

/// The time a figure's points cover: from the oldest point compared to the newest, the
/// longest span of one series (series scraped at other instants have spans that overlap,
/// not one span), and why that is shorter than the window asked, if it is.
///
/// # Example
/// ```
/// use chrono::{DateTime, TimeDelta};
/// let at = |s| DateTime::from_timestamp(s, 0).unwrap();
/// let c = promrate::Coverage { start: at(0), end: at(10), span: TimeDelta::seconds(10), shortened: None };
/// assert_eq!(c.end - c.start, c.span);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Coverage {
    /// The oldest point compared.
    pub start: DateTime<Utc>,
    /// The newest point compared.
    pub end: DateTime<Utc>,
    /// The longest span of one series.
    pub span: TimeDelta,
    /// Why a series' span is shorter than the window (the first such series'), if one is.
    pub shortened: Option<Shortened>,
}
