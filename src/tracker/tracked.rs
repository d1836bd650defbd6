//! What the tracker holds: tracked series, their data, and their shared labels.

use std::sync::Arc;

use crate::series::{CounterSeries, GaugeSeries};
use crate::text::names::same_bytes;

/// What a tracked series holds.
///
/// # Example
/// ```
/// let mut t = promrate::Tracker::new([]);
/// t.ingest("# TYPE a counter\na_total 1\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
/// assert!(t.series().next().unwrap().counter().is_some());
/// # Ok::<(), Box<dyn std::error::Error>>(())
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

/// The labels of tracked series, sorted by name: with
/// [`Tracker::share_label_sets`](crate::Tracker::share_label_sets), one allocation for
/// every series with the same labels. `triomphe`'s count is 8 bytes (std's `Arc` adds a
/// weak count): a set of its own costs 8 bytes more than a `Box`.
pub(super) type LabelSet = triomphe::Arc<[Arc<Label>]>;

/// A metric name as series hold it, shared by those spelled alike: a thin pointer (8
/// bytes; an `Arc<str>` takes 16), as each of a fleet's millions of series holds one.
pub(super) type SharedName = Arc<Box<str>>;

/// One series the tracker follows.
///
/// # Example
/// ```
/// let mut t = promrate::Tracker::new([]);
/// t.ingest("up{job=\"a\"} 1\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
/// let s = t.series().next().unwrap();
/// assert_eq!((s.name(), s.label("job")), ("up", Some("a")));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct TrackedSeries {
    /// Shared with the other series of the name (when spelled alike).
    pub(super) name: SharedName,
    /// Sorted by label name, unescaped, each shared with the other series that have it.
    pub(super) labels: LabelSet,
    pub(super) data: SeriesData,
    /// The scrape that last recorded it (for staleness).
    pub(super) last_seen: u64,
}

impl TrackedSeries {
    /// The metric name, its escapes resolved (a page's `{"my\"name"}` is `my"name`, as
    /// selectors and [`Tracker::get`](crate::Tracker::get) spell it).
    ///
    /// # Example
    /// ```
    /// # let mut t = promrate::Tracker::new([]);
    /// # t.ingest("up 1\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
    /// assert_eq!(t.series().next().unwrap().name(), "up");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The time of the newest point, in milliseconds.
    pub(super) fn newest_ms(&self) -> Option<i64> {
        match &self.data {
            SeriesData::Counter(c) => c.last(),
            SeriesData::Gauge(g) => g.last(),
        }
        .map(|p| p.timestamp_ms)
    }

    /// What a push to it reads, combined (see `Tracker::load_push_lines`).
    pub(super) fn push_lines(&self) -> i64 {
        match &self.data {
            SeriesData::Counter(c) => c.push_lines(),
            SeriesData::Gauge(g) => g.push_lines(),
        }
    }

    /// Its points, oldest first.
    pub(super) fn points(&self) -> &[crate::promql::Point] {
        match &self.data {
            SeriesData::Counter(c) => c.points(),
            SeriesData::Gauge(g) => g.points(),
        }
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
    /// let current: Vec<&str> = t.series().filter(|s| t.on_newest_page(s)).map(|s| s.name()).collect();
    /// assert_eq!(current, ["a"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
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
    /// # Ok::<(), Box<dyn std::error::Error>>(())
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
    /// # Ok::<(), Box<dyn std::error::Error>>(())
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

    /// [`TrackedSeries::label_entry`], looked for first where `hint` says (where it was in
    /// the series before: series of one name have the same label names, so a query that
    /// groups many series compares one name per series instead of searching); `hint` is
    /// then set to where it was found.
    pub(super) fn label_entry_near(&self, name: &str, hint: &mut usize) -> Option<&Arc<Label>> {
        // Label names are short: compared inline, not by a call to `memcmp` (a grouping
        // reads one per series).
        let named = |l: &&Arc<Label>| same_bytes(l.name.as_bytes(), name.as_bytes());
        if let Some(label) = self.labels.get(*hint).filter(named) {
            return Some(label);
        }
        let i = self.labels.binary_search_by(|l| (*l.name).cmp(name)).ok()?;
        *hint = i;
        Some(&self.labels[i])
    }

    /// The series' data.
    ///
    /// # Example
    /// ```
    /// # let mut t = promrate::Tracker::new([]);
    /// # t.ingest("up 1\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
    /// assert!(matches!(t.series().next().unwrap().data(), promrate::tracker::SeriesData::Gauge(_)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
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
    /// # Ok::<(), Box<dyn std::error::Error>>(())
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
    /// # Ok::<(), Box<dyn std::error::Error>>(())
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
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn last_value(&self) -> Option<f64> {
        match &self.data {
            SeriesData::Counter(c) => c.last().map(|p| p.value),
            SeriesData::Gauge(g) => g.last().map(|p| p.value),
        }
    }
}
