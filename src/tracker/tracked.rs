//! What the tracker holds and reports: tracked series, reset events, ingest reports.

use std::sync::Arc;

use crate::error::{ParseError, SeriesError};
use crate::series::{CounterSeries, GaugeSeries, ResetCause};

/// What a tracked series holds.
///
/// # Example
/// ```
/// let mut t = promrate::Tracker::new([]);
/// t.ingest("# TYPE a counter\na_total 1\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
/// assert!(t.series().next().unwrap().counter().is_some());
/// # Ok::<(), promrate::SeriesError>(())
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum SeriesData {
    /// Counters, and the `_bucket`/`_sum`/`_count` of histograms and summaries.
    Counter(CounterSeries),
    /// Gauges and anything untyped that is not named like a counter.
    Gauge(GaugeSeries),
}

/// One `name="value"` label of tracked series (unescaped), stored once however many
/// series carry it.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Label {
    /// Shared further with the groups of aggregations (no copy of the text per group).
    pub name: Arc<str>,
    pub value: Arc<str>,
}

/// One series the tracker follows.
///
/// # Example
/// ```
/// let mut t = promrate::Tracker::new([]);
/// t.ingest("up{job=\"a\"} 1\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
/// let s = t.series().next().unwrap();
/// assert_eq!((s.name(), s.label("job")), ("up", Some("a")));
/// # Ok::<(), promrate::SeriesError>(())
/// ```
#[derive(Debug, Clone)]
pub struct TrackedSeries {
    /// Shared with the other series of the name (when spelled alike).
    pub(super) name: Arc<str>,
    /// Sorted by label name, unescaped, each shared with the other series that have it.
    pub(super) labels: Box<[Arc<Label>]>,
    pub(super) data: SeriesData,
    /// The scrape that last recorded it (for staleness).
    pub(super) last_seen: u64,
}

impl TrackedSeries {
    /// The metric name as first seen.
    ///
    /// # Example
    /// ```
    /// # let mut t = promrate::Tracker::new([]);
    /// # t.ingest("up 1\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
    /// assert_eq!(t.series().next().unwrap().name(), "up");
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the newest point is at `at_ms`.
    pub(super) fn has_point_at(&self, at_ms: i64) -> bool {
        let newest = match &self.data {
            SeriesData::Counter(c) => c.last(),
            SeriesData::Gauge(g) => g.last(),
        };
        newest.is_some_and(|p| p.timestamp_ms == at_ms)
    }

    /// Whether a retained point is at `at_ms` with exactly `value`.
    pub(super) fn has_point(&self, at_ms: i64, value: f64) -> bool {
        let points = match &self.data {
            SeriesData::Counter(c) => c.points(),
            SeriesData::Gauge(g) => g.points(),
        };
        let i = points.partition_point(|p| p.timestamp_ms < at_ms);
        points
            .get(i)
            .is_some_and(|p| p.timestamp_ms == at_ms && p.value.to_bits() == value.to_bits())
    }

    /// The number of the scrape that last had this series (compare with
    /// [`Tracker::scrapes`](crate::Tracker::scrapes)): a series missing from the newest page
    /// is kept until [`Tracker::stale_after`](crate::Tracker::stale_after), with its old
    /// points, so a reader that must not count a vanished target checks this.
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// let at = |s| chrono::DateTime::from_timestamp(s, 0).unwrap();
    /// t.ingest("a 1\nb 1\n", at(1))?;
    /// t.ingest("a 2\n", at(2))?;
    /// let current: Vec<&str> = t.series().filter(|s| s.last_seen_scrape() == t.scrapes()).map(|s| s.name()).collect();
    /// assert_eq!(current, ["a"]);
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn last_seen_scrape(&self) -> u64 {
        self.last_seen
    }

    /// The labels as `(name, value)`, sorted by name, unescaped.
    ///
    /// # Example
    /// ```
    /// # let mut t = promrate::Tracker::new([]);
    /// # t.ingest("up{b=\"2\",a=\"1\"} 1\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
    /// let labels: Vec<(&str, &str)> = t.series().next().unwrap().labels().collect();
    /// assert_eq!(labels, [("a", "1"), ("b", "2")]);
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn labels(&self) -> impl ExactSizeIterator<Item = (&str, &str)> + '_ {
        self.labels.iter().map(|l| (&*l.name, &*l.value))
    }

    /// The labels as owned pairs (for events that outlive the series).
    pub(super) fn owned_labels(&self) -> Vec<(String, String)> {
        self.labels()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// One label's value.
    ///
    /// # Example
    /// ```
    /// # let mut t = promrate::Tracker::new([]);
    /// # t.ingest("up{a=\"1\"} 1\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
    /// assert_eq!(t.series().next().unwrap().label("b"), None);
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn label(&self, name: &str) -> Option<&str> {
        self.label_entry(name).map(|l| &*l.value)
    }

    /// The stored label `name` (one allocation for every series that has the same pair:
    /// two series have the same value exactly when they point at the same entry).
    pub(super) fn label_entry(&self, name: &str) -> Option<&Arc<Label>> {
        self.labels
            .binary_search_by(|l| (*l.name).cmp(name))
            .ok()
            .map(|i| &self.labels[i])
    }

    /// The series' data.
    ///
    /// # Example
    /// ```
    /// # let mut t = promrate::Tracker::new([]);
    /// # t.ingest("up 1\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
    /// assert!(matches!(t.series().next().unwrap().data(), promrate::SeriesData::Gauge(_)));
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn data(&self) -> &SeriesData {
        &self.data
    }

    /// The counter, if this series is one.
    ///
    /// # Example
    /// ```
    /// # let mut t = promrate::Tracker::new([]);
    /// # t.ingest("x_total 1\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
    /// assert_eq!(t.series().next().unwrap().counter().unwrap().len(), 1);
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn counter(&self) -> Option<&CounterSeries> {
        match &self.data {
            SeriesData::Counter(c) => Some(c),
            SeriesData::Gauge(_) => None,
        }
    }

    /// The gauge, if this series is one.
    ///
    /// # Example
    /// ```
    /// # let mut t = promrate::Tracker::new([]);
    /// # t.ingest("up 1\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
    /// assert_eq!(t.series().next().unwrap().gauge().unwrap().last().unwrap().value, 1.0);
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn gauge(&self) -> Option<&GaugeSeries> {
        match &self.data {
            SeriesData::Gauge(g) => Some(g),
            SeriesData::Counter(_) => None,
        }
    }

    /// The newest value, whatever the kind.
    ///
    /// # Example
    /// ```
    /// # let mut t = promrate::Tracker::new([]);
    /// # t.ingest("up 3\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
    /// assert_eq!(t.series().next().unwrap().last_value(), Some(3.0));
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn last_value(&self) -> Option<f64> {
        match &self.data {
            SeriesData::Counter(c) => c.last().map(|p| p.value),
            SeriesData::Gauge(g) => g.last().map(|p| p.value),
        }
    }
}

/// A counter restart seen while ingesting.
///
/// # Example
/// ```
/// let mut t = promrate::Tracker::new([]);
/// let at = |s| chrono::DateTime::from_timestamp(s, 0).unwrap();
/// t.ingest("x_total 10\n", at(1))?;
/// let report = t.ingest("x_total 2\n", at(2))?;
/// assert_eq!(report.resets[0].name, "x_total");
/// # Ok::<(), promrate::SeriesError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ResetEvent {
    /// The series' metric name.
    pub name: String,
    /// Its labels, sorted.
    pub labels: Vec<(String, String)>,
    /// Why it counts as a restart.
    pub cause: ResetCause,
}

/// A sample a series refused, and why ([`IngestReport::first_refused`]).
///
/// # Example
/// ```
/// let mut t = promrate::Tracker::new([]);
/// let at = |s| chrono::DateTime::from_timestamp(s, 0).unwrap();
/// t.ingest("a_total 5 2000\n", at(3))?;
/// let report = t.ingest("a_total 6 1000\n", at(4))?;
/// let refusal = report.first_refused.unwrap();
/// assert_eq!(refusal.name, "a_total");
/// assert_eq!(refusal.error, promrate::SeriesError::NotAfterLast { at_ms: 1000, last_ms: 2000 });
/// # Ok::<(), promrate::SeriesError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Refusal {
    /// The series' metric name.
    pub name: String,
    /// Its labels, sorted.
    pub labels: Vec<(String, String)>,
    /// Why the sample was refused.
    pub error: SeriesError,
}

/// What one [`Tracker::ingest`](crate::Tracker::ingest) did.
///
/// # Example
/// ```
/// let mut t = promrate::Tracker::new([]);
/// let report = t.ingest("a 1\nb{ 2\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
/// assert_eq!((report.samples, report.bad_lines), (1, 1));
/// assert_eq!(report.first_error.unwrap().line, 2);
/// # Ok::<(), promrate::SeriesError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct IngestReport {
    /// Samples that matched the selectors and were recorded.
    pub samples: usize,
    /// Series seen for the first time.
    pub new_series: usize,
    /// Series dropped for not appearing in [`Tracker::stale_after`](crate::Tracker::stale_after) scrapes.
    pub dropped_stale: usize,
    /// Lines that did not parse.
    pub bad_lines: usize,
    /// The first parse error, with its line and column.
    pub first_error: Option<ParseError>,
    /// Samples that repeated a point their series holds (same exposed timestamp, same
    /// value), as a federation serves a point until its next scrape and an export of a
    /// range repeats its older points. Not recorded again.
    pub repeated: usize,
    /// Samples a series refused (an exposed timestamp that went back, or repeated with
    /// another value; a negative or non-finite counter value). The series is unchanged.
    pub refused: usize,
    /// The first refusal, naming the series and why.
    pub first_refused: Option<Refusal>,
    /// Counter restarts detected in this scrape.
    pub resets: Vec<ResetEvent>,
}
