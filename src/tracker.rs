//! Many live series fed whole scrapes: identity by name and label set, staleness, resets,
//! and PromQL-style `sum by` / `avg by` aggregation.

use std::collections::HashMap;

use chrono::{DateTime, TimeDelta, Utc};

use crate::error::{ParseError, SeriesError};
use crate::fingerprint;
use crate::histogram::{self, Bucket};
use crate::select::Selector;
use crate::series::{CounterSeries, GaugeSeries, ResetCause, DEFAULT_EWMA_TAU};
use crate::text::{names_equal, normalized_name_byte, Entry, Format, Labels, MetricType, Parser, Sample};

/// Default [`Tracker::retention`]: 10 minutes of points per series.
pub const DEFAULT_RETENTION: TimeDelta = TimeDelta::minutes(10);
/// Default [`Tracker::stale_after`]: a series missing from 5 scrapes in a row is dropped.
pub const DEFAULT_STALE_AFTER: u32 = 5;

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
    name: String,
    /// Sorted by label name, unescaped.
    labels: Vec<(String, String)>,
    data: SeriesData,
    last_seen: u64,
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

    /// The labels, sorted by name, unescaped.
    ///
    /// # Example
    /// ```
    /// # let mut t = promrate::Tracker::new([]);
    /// # t.ingest("up{b=\"2\",a=\"1\"} 1\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
    /// let labels = t.series().next().unwrap().labels();
    /// assert_eq!(labels[0], ("a".to_string(), "1".to_string()));
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn labels(&self) -> &[(String, String)] {
        &self.labels
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
        self.labels
            .binary_search_by(|(k, _)| k.as_str().cmp(name))
            .ok()
            .map(|i| self.labels[i].1.as_str())
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
pub struct ResetEvent {
    /// The series' metric name.
    pub name: String,
    /// Its labels, sorted.
    pub labels: Vec<(String, String)>,
    /// Why it counts as a restart.
    pub cause: ResetCause,
}

/// What one [`Tracker::ingest`] did.
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
    /// Series dropped for not appearing in [`Tracker::stale_after`] scrapes.
    pub dropped_stale: usize,
    /// Lines that did not parse.
    pub bad_lines: usize,
    /// The first parse error, with its line and column.
    pub first_error: Option<ParseError>,
    /// Samples a series refused (e.g. an exposed timestamp that did not advance).
    pub refused: usize,
    /// Counter restarts detected in this scrape.
    pub resets: Vec<ResetEvent>,
}

/// A group of an aggregation: the grouping labels' values and the aggregate.
///
/// # Example
/// ```
/// let g = promrate::Group { labels: vec![("engine".into(), "0".into())], value: 2.0, series: 1 };
/// assert_eq!(g.label("engine"), Some("0"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// `(label, value)` for each grouping label, in the order asked (missing labels: "").
    pub labels: Vec<(String, String)>,
    /// The aggregate.
    pub value: f64,
    /// How many series contributed.
    pub series: usize,
}

impl Group {
    /// The value of one grouping label.
    ///
    /// # Example
    /// ```
    /// let g = promrate::Group { labels: vec![], value: 1.0, series: 1 };
    /// assert_eq!(g.label("x"), None);
    /// ```
    pub fn label(&self, name: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// `(label, value)` of each grouping label of an aggregation, in the order asked (a missing
/// label reads as "").
pub type GroupLabels = Vec<(String, String)>;

fn group_key(series: &TrackedSeries, by: &[&str]) -> GroupLabels {
    by.iter()
        .map(|l| (l.to_string(), series.label(l).unwrap_or("").to_string()))
        .collect()
}

/// Identity of a series: its name (from parts, ':' read as '_' when normalizing) and its
/// label set, independent of label order. Parsed and stored series give the same key.
fn series_key<'n, V: IntoIterator<Item = u8>>(
    name_parts: &[&str],
    labels: impl IntoIterator<Item = (&'n str, V)>,
    normalize: bool,
) -> u64 {
    let name = name_parts
        .iter()
        .flat_map(|p| p.bytes())
        .map(|b| normalized_name_byte(b, normalize));
    fingerprint::of_label_set(fingerprint::of_bytes(name), labels)
}

fn parsed_key(name_parts: &[&str], labels: Labels<'_>, normalize: bool) -> u64 {
    series_key(
        name_parts,
        labels.iter().map(|(k, v)| (k, v.unescaped_bytes())),
        normalize,
    )
}

fn same_labels(stored: &[(String, String)], labels: Labels<'_>) -> bool {
    stored.len() == labels.len()
        && labels.iter().all(|(k, v)| {
            stored
                .binary_search_by(|(sk, _)| sk.as_str().cmp(k))
                .is_ok_and(|i| v == stored[i].1.as_str())
        })
}

/// What the sample at one position of the page was found to be last time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// Not selected.
    Ignored,
    /// Recorded in this slot.
    Series(usize),
    /// A `_created` sample amending these counter slots.
    Created([Option<usize>; 3]),
}

/// A page's sample at position `i` is almost always the same series as last scrape's
/// sample at position `i`. Remembering the raw name and label text per position turns
/// series identity into two byte comparisons, and skips selector evaluation for samples
/// that were not selected. Steady state allocates nothing (strings keep their capacity).
#[derive(Debug, Clone, Default)]
struct PositionCache {
    entries: Vec<CacheEntry>,
}

#[derive(Debug, Clone)]
struct CacheEntry {
    /// The page text from the sample's name to the end of its labels.
    key: String,
    target: Target,
}

/// The text of `page` that spans a sample's name and raw labels (both borrow from it): one
/// comparison decides identity, since the same bytes always parse to the same series.
fn identity_span<'a>(page: &'a str, sample: &Sample<'a>) -> &'a str {
    let base = page.as_ptr() as usize;
    let offsets = |s: &str| {
        let start = (s.as_ptr() as usize).wrapping_sub(base);
        (start, start + s.len())
    };
    let (name_start, name_end) = offsets(sample.name());
    let labels = sample.labels().as_raw();
    let (start, end) = if labels.is_empty() {
        (name_start, name_end)
    } else {
        let (labels_start, labels_end) = offsets(labels);
        (name_start.min(labels_start), name_end.max(labels_end))
    };
    page.get(start..end).unwrap_or("")
}

impl PositionCache {
    fn lookup(&self, position: usize, key: &str) -> Option<Target> {
        let entry = self.entries.get(position)?;
        (!key.is_empty() && entry.key == key).then_some(entry.target)
    }

    fn store(&mut self, position: usize, key: &str, target: Target) {
        if position >= self.entries.len() {
            self.entries.resize(
                position + 1,
                CacheEntry {
                    key: String::new(),
                    target: Target::Ignored,
                },
            );
        }
        let entry = &mut self.entries[position];
        entry.key.clear();
        entry.key.push_str(key);
        entry.target = target;
    }
}

/// How a sample is recorded.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Counter,
    Gauge,
    /// `<family>_created`: the created time of the family's counters with these labels.
    Created,
}

/// The role of `name` given the family declared by the last `# TYPE`.
fn role(name: &str, family: Option<(&str, MetricType)>, normalize: bool) -> Role {
    // `x_created` is a created time, whether typed as part of its family (OpenMetrics) or
    // as a gauge family of its own (prometheus_client's text output).
    if name.ends_with("_created") {
        return Role::Created;
    }
    if let Some((family, kind)) = family {
        if let Some(suffix) = family_suffix(name, family, normalize) {
            return match (kind, suffix) {
                (MetricType::Counter, "" | "_total") => Role::Counter,
                (MetricType::Histogram, "_bucket" | "_count" | "_sum") => Role::Counter,
                (MetricType::Summary, "_count" | "_sum") => Role::Counter,
                _ => Role::Gauge,
            };
        }
    }
    // Untyped: go by the name, as dashboards do.
    if name.ends_with("_total") {
        Role::Counter
    } else {
        Role::Gauge
    }
}

/// The suffix of `name` after `family` (compared with normalization), if it has one.
fn family_suffix<'n>(name: &'n str, family: &str, normalize: bool) -> Option<&'n str> {
    let head = name.get(..family.len())?;
    names_equal(head, &[family], normalize).then(|| &name[family.len()..])
}

/// Follows many series across scrapes: parse a whole page once, update every series that
/// matches the selectors, then ask for rates per series or aggregated.
///
/// Counters are told apart from gauges by the page's `# TYPE` lines (names ending in
/// `_total` count as counters when untyped); `<family>_created` samples feed the created
/// time of the family's counters, so a restart that climbed past the old value is caught.
/// Once a series exists, ingesting allocates nothing.
///
/// # Example
/// ```
/// use chrono::{DateTime, TimeDelta};
/// use promrate::{Selector, Tracker};
/// let mut tracker = Tracker::new([Selector::parse("vllm:generation_tokens_total")?]);
/// let t0 = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
/// let page = |a: u32, b: u32| format!(
///     "# TYPE vllm:generation_tokens counter\n\
///      vllm:generation_tokens_total{{engine=\"0\",model_name=\"m\"}} {a}\n\
///      vllm:generation_tokens_total{{engine=\"1\",model_name=\"m\"}} {b}\n");
/// tracker.ingest(&page(1000, 2000), t0).unwrap();
/// tracker.ingest(&page(1500, 2300), t0 + TimeDelta::seconds(10)).unwrap();
/// let window = TimeDelta::seconds(10);
/// let at = t0 + TimeDelta::seconds(10);
/// let total = tracker.sum_by("vllm:generation_tokens_total", &[], |s| s.counter()?.exact_rate(window, at));
/// assert_eq!(total[0].value, 80.0); // (500 + 300) tokens / 10 s
/// let per_engine = tracker.sum_by("vllm:generation_tokens_total", &["engine"], |s| s.counter()?.exact_rate(window, at));
/// assert_eq!(per_engine.len(), 2);
/// # Ok::<(), promrate::SelectorError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Tracker {
    selectors: Vec<Selector>,
    parser: Parser,
    normalize_names: bool,
    retention: TimeDelta,
    stale_after: u32,
    ewma_tau: TimeDelta,
    slots: Vec<Option<TrackedSeries>>,
    free: Vec<usize>,
    /// Series key to slot; a key collision (different identity) probes key + 1.
    index: HashMap<u64, usize>,
    positions: PositionCache,
    /// Distinct series recorded in the current scrape (all of them: nothing went stale).
    touched: usize,
    scrapes: u64,
    last_at_ms: Option<i64>,
}

impl Tracker {
    /// A tracker for the samples matching any of `selectors` (everything if none), with
    /// default retention, staleness and parser.
    ///
    /// # Example
    /// ```
    /// let t = promrate::Tracker::new([promrate::Selector::parse("up").unwrap()]);
    /// assert_eq!(t.len(), 0);
    /// ```
    pub fn new(selectors: impl IntoIterator<Item = Selector>) -> Self {
        Tracker {
            selectors: selectors.into_iter().collect(),
            parser: Parser::new(Format::PrometheusText),
            normalize_names: false,
            retention: DEFAULT_RETENTION,
            stale_after: DEFAULT_STALE_AFTER,
            ewma_tau: DEFAULT_EWMA_TAU,
            slots: Vec::new(),
            free: Vec::new(),
            index: HashMap::new(),
            positions: PositionCache::default(),
            touched: 0,
            scrapes: 0,
            last_at_ms: None,
        }
    }

    /// The parser (format, limits) to read pages with. Default: Prometheus text.
    ///
    /// # Example
    /// ```
    /// use promrate::{Format, Parser, Tracker};
    /// let t = Tracker::new([]).parser(Parser::new(Format::OpenMetrics).strict(false));
    /// # let _ = t;
    /// ```
    pub fn parser(mut self, parser: Parser) -> Self {
        self.parser = parser;
        self
    }

    /// Treat ':' and '_' as equal in metric names (series identity, `# TYPE` families,
    /// selectors and queries), so `vllm:x` and `vllm_x` are one series.
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]).normalize_names(true);
    /// let at = |s| chrono::DateTime::from_timestamp(s, 0).unwrap();
    /// t.ingest("vllm:x_total 1\n", at(1))?;
    /// t.ingest("vllm_x_total 2\n", at(2))?;
    /// assert_eq!(t.len(), 1);
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn normalize_names(mut self, on: bool) -> Self {
        self.normalize_names = on;
        self.selectors = std::mem::take(&mut self.selectors)
            .into_iter()
            .map(|s| s.normalize_names(on))
            .collect();
        self
    }

    /// How much history each series keeps. Default [`DEFAULT_RETENTION`].
    ///
    /// # Example
    /// ```
    /// let t = promrate::Tracker::new([]).retention(chrono::TimeDelta::minutes(1));
    /// # let _ = t;
    /// ```
    pub fn retention(mut self, retention: TimeDelta) -> Self {
        self.retention = retention;
        self
    }

    /// Drop a series after it is missing from this many consecutive scrapes (min 1).
    /// Default [`DEFAULT_STALE_AFTER`].
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]).stale_after(1);
    /// let at = |s| chrono::DateTime::from_timestamp(s, 0).unwrap();
    /// t.ingest("a 1\n", at(1))?;
    /// assert_eq!(t.ingest("b 1\n", at(2))?.dropped_stale, 1);
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn stale_after(mut self, scrapes: u32) -> Self {
        self.stale_after = scrapes.max(1);
        self
    }

    /// The EWMA time constant for new counter series (see [`CounterSeries::ewma_rate`]).
    ///
    /// # Example
    /// ```
    /// let t = promrate::Tracker::new([]).ewma_time_constant(chrono::TimeDelta::seconds(10));
    /// # let _ = t;
    /// ```
    pub fn ewma_time_constant(mut self, tau: TimeDelta) -> Self {
        self.ewma_tau = tau;
        self
    }

    /// Number of series tracked.
    ///
    /// # Example
    /// ```
    /// assert!(promrate::Tracker::new([]).is_empty());
    /// ```
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether no series is tracked.
    ///
    /// # Example
    /// ```
    /// assert!(promrate::Tracker::new([]).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Scrapes ingested so far.
    ///
    /// # Example
    /// ```
    /// assert_eq!(promrate::Tracker::new([]).scrapes(), 0);
    /// ```
    pub fn scrapes(&self) -> u64 {
        self.scrapes
    }

    /// Every tracked series.
    ///
    /// # Example
    /// ```
    /// assert_eq!(promrate::Tracker::new([]).series().count(), 0);
    /// ```
    pub fn series(&self) -> impl Iterator<Item = &TrackedSeries> {
        self.slots.iter().flatten()
    }

    /// The series with this name and exactly these labels (any order).
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// t.ingest("up{a=\"1\",b=\"2\"} 1\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
    /// assert!(t.get("up", &[("b", "2"), ("a", "1")]).is_some());
    /// assert!(t.get("up", &[("a", "1")]).is_none());
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn get(&self, name: &str, labels: &[(&str, &str)]) -> Option<&TrackedSeries> {
        // The same key and probing as ingestion uses, so a lookup is a hash away.
        let pairs = labels.iter().map(|(k, v)| (*k, v.bytes()));
        let key = series_key(&[name], pairs, self.normalize_names);
        let slot = self.probe(key, |series| {
            names_equal(&series.name, &[name], self.normalize_names)
                && series.labels.len() == labels.len()
                && labels.iter().all(|(k, v)| series.label(k) == Some(*v))
        })?;
        self.slots[slot].as_ref()
    }

    /// Parses `text` (a whole scrape taken at `at`) and records every matching sample.
    /// Samples with their own timestamp are recorded at it. Bad lines are counted and the
    /// first is reported; the rest of the page is still used.
    ///
    /// # Errors
    /// [`SeriesError::NotAfterLast`] if `at` is not after the previous scrape; nothing is
    /// recorded then.
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// let at = chrono::DateTime::from_timestamp(5, 0).unwrap();
    /// t.ingest("a_total 1\n", at)?;
    /// assert!(t.ingest("a_total 2\n", at).is_err());
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn ingest(&mut self, text: &str, at: DateTime<Utc>) -> Result<IngestReport, SeriesError> {
        let at_ms = at.timestamp_millis();
        if let Some(last_ms) = self.last_at_ms {
            if at_ms <= last_ms {
                return Err(SeriesError::NotAfterLast { at_ms, last_ms });
            }
        }
        self.last_at_ms = Some(at_ms);
        self.scrapes += 1;
        let mut report = IngestReport::default();
        let mut family: Option<(&str, MetricType)> = None;
        let mut position = 0;
        self.touched = 0;
        for entry in self.parser.parse(text) {
            // Matched by reference: the sample is read in place, not copied out.
            match &entry {
                Ok(Entry::Type { name, kind }) => family = Some((name, *kind)),
                Ok(Entry::Sample(sample)) => {
                    let key = identity_span(text, sample);
                    self.record(position, key, sample, family, at_ms, &mut report);
                    position += 1;
                }
                Ok(_) => {}
                Err(e) => {
                    report.bad_lines += 1;
                    if report.first_error.is_none() {
                        report.first_error = Some(e.clone());
                    }
                }
            }
        }
        self.drop_stale(&mut report);
        Ok(report)
    }

    fn selected(&self, sample: &Sample<'_>) -> bool {
        self.selectors.is_empty() || self.selectors.iter().any(|s| s.matches(sample))
    }

    fn record(
        &mut self,
        position: usize,
        key: &str,
        sample: &Sample<'_>,
        family: Option<(&str, MetricType)>,
        at_ms: i64,
        report: &mut IngestReport,
    ) {
        let target = match self.positions.lookup(position, key) {
            Some(target) => target,
            None => {
                let target = self.resolve(sample, family, report);
                self.positions.store(position, key, target);
                target
            }
        };
        let at_ms = sample.timestamp_ms().unwrap_or(at_ms);
        match target {
            Target::Ignored => {}
            Target::Series(slot) => self.push(slot, at_ms, sample.value(), report),
            Target::Created(slots) => {
                let created_ms = (sample.value() * 1000.0).round() as i64;
                for slot in slots.into_iter().flatten() {
                    self.amend_created(slot, created_ms, report);
                }
            }
        }
    }

    /// Finds (or creates) what a sample at a new position is.
    fn resolve(
        &mut self,
        sample: &Sample<'_>,
        family: Option<(&str, MetricType)>,
        report: &mut IngestReport,
    ) -> Target {
        let role = role(sample.name(), family, self.normalize_names);
        if role == Role::Created {
            let Some(prefix) = sample.name().strip_suffix("_created") else {
                return Target::Ignored;
            };
            let mut slots = [None; 3];
            for (slot, suffix) in slots.iter_mut().zip(["_total", "_count", "_sum"]) {
                *slot = self.find(&[prefix, suffix], sample.labels());
            }
            // Counters seen later in the page are not amended until the next new position.
            return if slots.iter().any(Option::is_some) {
                Target::Created(slots)
            } else {
                Target::Ignored
            };
        }
        if !self.selected(sample) {
            return Target::Ignored;
        }
        match self.find(&[sample.name()], sample.labels()) {
            Some(slot) => Target::Series(slot),
            None => {
                report.new_series += 1;
                self.touched += 1;
                Target::Series(self.insert(sample, role))
            }
        }
    }

    fn push(&mut self, slot: usize, at_ms: i64, value: f64, report: &mut IngestReport) {
        let scrapes = self.scrapes;
        let Some(series) = self.slots[slot].as_mut() else {
            return;
        };
        if series.last_seen != scrapes {
            series.last_seen = scrapes;
            self.touched += 1;
        }
        let outcome = match &mut series.data {
            SeriesData::Counter(c) => c.push_ms(at_ms, value, None),
            SeriesData::Gauge(g) => g.push_ms(at_ms, value).map(|()| None),
        };
        match outcome {
            Ok(cause) => {
                report.samples += 1;
                if let Some(cause) = cause {
                    report.resets.push(ResetEvent {
                        name: series.name.clone(),
                        labels: series.labels.clone(),
                        cause,
                    });
                }
            }
            Err(_) => report.refused += 1,
        }
    }

    fn amend_created(&mut self, slot: usize, created_ms: i64, report: &mut IngestReport) {
        let Some(series) = self.slots[slot].as_mut() else {
            return;
        };
        let SeriesData::Counter(counter) = &mut series.data else {
            return;
        };
        if let Some(cause) = counter.amend_created_ms(created_ms) {
            report.resets.push(ResetEvent {
                name: series.name.clone(),
                labels: series.labels.clone(),
                cause,
            });
        }
    }

    fn find(&self, name_parts: &[&str], labels: Labels<'_>) -> Option<usize> {
        let key = parsed_key(name_parts, labels, self.normalize_names);
        self.probe(key, |series| {
            names_equal(&series.name, name_parts, self.normalize_names) && same_labels(&series.labels, labels)
        })
    }

    /// Follows the probe chain from `key` (a collision moves to key + 1) to the slot whose
    /// series `is_it` accepts.
    fn probe(&self, mut key: u64, is_it: impl Fn(&TrackedSeries) -> bool) -> Option<usize> {
        loop {
            let &slot = self.index.get(&key)?;
            if is_it(self.slots[slot].as_ref()?) {
                return Some(slot);
            }
            key = key.wrapping_add(1);
        }
    }

    fn insert(&mut self, sample: &Sample<'_>, role: Role) -> usize {
        let mut labels: Vec<(String, String)> = sample
            .labels()
            .iter()
            .map(|(k, v)| (k.to_string(), v.unescaped().into_owned()))
            .collect();
        labels.sort();
        let data = match role {
            Role::Counter => {
                SeriesData::Counter(CounterSeries::new(self.retention).ewma_time_constant(self.ewma_tau))
            }
            _ => SeriesData::Gauge(GaugeSeries::new(self.retention)),
        };
        let series = TrackedSeries {
            name: sample.name().to_string(),
            labels,
            data,
            last_seen: self.scrapes,
        };
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot] = Some(series);
                slot
            }
            None => {
                self.slots.push(Some(series));
                self.slots.len() - 1
            }
        };
        let mut key = parsed_key(&[sample.name()], sample.labels(), self.normalize_names);
        while self.index.contains_key(&key) {
            key = key.wrapping_add(1);
        }
        self.index.insert(key, slot);
        slot
    }

    fn drop_stale(&mut self, report: &mut IngestReport) {
        let horizon = self.scrapes.saturating_sub(u64::from(self.stale_after));
        if self.touched == self.index.len() || !self.slots.iter().flatten().any(|s| s.last_seen <= horizon) {
            return;
        }
        // Slots are about to be reused: forget which positions pointed where.
        self.positions.entries.clear();
        // Rebuild the index: probing chains may pass through removed keys.
        let mut keep: Vec<(u64, usize)> = Vec::with_capacity(self.index.len());
        for (&key, &slot) in &self.index {
            if self.slots[slot].as_ref().is_some_and(|s| s.last_seen <= horizon) {
                self.slots[slot] = None;
                self.free.push(slot);
                report.dropped_stale += 1;
            } else {
                keep.push((key, slot));
            }
        }
        self.index.clear();
        for (_, slot) in keep {
            let Some(series) = self.slots[slot].as_ref() else {
                continue;
            };
            let labels = series.labels.iter().map(|(k, v)| (k.as_str(), v.bytes()));
            let mut key = series_key(&[series.name.as_str()], labels, self.normalize_names);
            while self.index.contains_key(&key) {
                key = key.wrapping_add(1);
            }
            self.index.insert(key, slot);
        }
    }

    /// The series called `name` (':' and '_' equal when normalizing names).
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]).normalize_names(true);
    /// t.ingest("vllm_x{e=\"0\"} 1\nvllm_x{e=\"1\"} 2\nother 3\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
    /// assert_eq!(t.series_named("vllm:x").count(), 2);
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn series_named<'s>(&'s self, name: &'s str) -> impl Iterator<Item = &'s TrackedSeries> + 's {
        self.series()
            .filter(move |s| names_equal(&s.name, &[name], self.normalize_names))
    }

    /// PromQL `sum by (by...) (f(series))` over the series named `name`: `f` gives each
    /// series' figure (`None` leaves it out). Groups are sorted by their label values.
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// t.ingest("q{e=\"0\"} 2\nq{e=\"1\"} 3\nq{e=\"1\",x=\"y\"} 4\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
    /// let groups = t.sum_by("q", &["e"], |s| s.last_value());
    /// assert_eq!(groups.iter().map(|g| g.value).collect::<Vec<_>>(), [2.0, 7.0]);
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn sum_by(&self, name: &str, by: &[&str], f: impl Fn(&TrackedSeries) -> Option<f64>) -> Vec<Group> {
        let mut groups: Vec<Group> = Vec::new();
        for series in self.series_named(name) {
            let Some(value) = f(series) else { continue };
            let key = group_key(series, by);
            match groups.iter_mut().find(|g| g.labels == key) {
                Some(group) => {
                    group.value += value;
                    group.series += 1;
                }
                None => groups.push(Group {
                    labels: key,
                    value,
                    series: 1,
                }),
            }
        }
        groups.sort_by(|a, b| a.labels.cmp(&b.labels));
        groups
    }

    /// PromQL `avg by (by...) (f(series))`, e.g. KV-cache usage across engines.
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// t.ingest("kv{e=\"0\"} 0.2\nkv{e=\"1\"} 0.4\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
    /// let avg = t.avg_by("kv", &[], |s| s.last_value());
    /// assert!((avg[0].value - 0.3).abs() < 1e-12);
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn avg_by(&self, name: &str, by: &[&str], f: impl Fn(&TrackedSeries) -> Option<f64>) -> Vec<Group> {
        let mut groups = self.sum_by(name, by, f);
        for group in &mut groups {
            group.value /= group.series as f64;
        }
        groups
    }

    /// PromQL `histogram_quantile(q, sum by (le, by...) (f(<name>_bucket)))`: `f` gives each
    /// bucket series' figure, typically a windowed increase or rate.
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// let mut t = promrate::Tracker::new([]);
    /// let at = |s| DateTime::from_timestamp(s, 0).unwrap();
    /// let page = |a: u32, b: u32, c: u32| format!("# TYPE ttft histogram\nttft_bucket{{le=\"0.1\"}} {a}\nttft_bucket{{le=\"1\"}} {b}\nttft_bucket{{le=\"+Inf\"}} {c}\n");
    /// t.ingest(&page(0, 0, 0), at(0))?;
    /// t.ingest(&page(10, 30, 40), at(10))?;
    /// let p50 = t.histogram_quantile(0.5, "ttft", &[], |s| s.counter()?.exact_increase(TimeDelta::seconds(10), at(10)));
    /// assert!((p50[0].value - 0.55).abs() < 1e-12); // rank 20: halfway through (0.1, 1]
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn histogram_quantile(
        &self,
        q: f64,
        name: &str,
        by: &[&str],
        f: impl Fn(&TrackedSeries) -> Option<f64>,
    ) -> Vec<Group> {
        let mut out: Vec<Group> = self
            .histogram_buckets(name, by, f)
            .into_iter()
            .map(|(labels, buckets)| Group {
                labels,
                series: buckets.len(),
                value: histogram::quantile(q, &buckets),
            })
            .collect();
        out.sort_by(|a, b| a.labels.cmp(&b.labels));
        out
    }

    /// The buckets behind [`Tracker::histogram_quantile`], per group: `(le, f(series))` of
    /// every `<name>_bucket` series, for combining histograms across trackers.
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// t.ingest("# TYPE h histogram\nh_bucket{le=\"1\"} 3\nh_bucket{le=\"+Inf\"} 4\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
    /// let groups = t.histogram_buckets("h", &[], |s| s.last_value());
    /// assert_eq!(groups[0].1.len(), 2);
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn histogram_buckets(
        &self,
        name: &str,
        by: &[&str],
        f: impl Fn(&TrackedSeries) -> Option<f64>,
    ) -> Vec<(GroupLabels, Vec<Bucket>)> {
        let bucket_name = format!("{name}_bucket");
        let mut groups: Vec<(GroupLabels, Vec<Bucket>)> = Vec::new();
        for series in self.series_named(&bucket_name) {
            let Some(upper_bound) = series.label("le").and_then(|le| le.parse::<f64>().ok()) else {
                continue;
            };
            let Some(count) = f(series) else { continue };
            let key = group_key(series, by);
            let bucket = Bucket { upper_bound, count };
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, buckets)) => buckets.push(bucket),
                None => groups.push((key, vec![bucket])),
            }
        }
        groups
    }

    /// Mean observation per group: `sum by (by) (f(<name>_sum)) / sum by (by) (f(<name>_count))`.
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// let mut t = promrate::Tracker::new([]);
    /// let at = |s| DateTime::from_timestamp(s, 0).unwrap();
    /// t.ingest("# TYPE l histogram\nl_sum 0\nl_count 0\n", at(0))?;
    /// t.ingest("# TYPE l histogram\nl_sum 3\nl_count 4\n", at(10))?;
    /// let mean = t.histogram_mean("l", &[], |s| s.counter()?.exact_increase(TimeDelta::seconds(10), at(10)));
    /// assert_eq!(mean[0].value, 0.75);
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn histogram_mean(
        &self,
        name: &str,
        by: &[&str],
        f: impl Fn(&TrackedSeries) -> Option<f64>,
    ) -> Vec<Group> {
        let sums = self.sum_by(&format!("{name}_sum"), by, &f);
        let counts = self.sum_by(&format!("{name}_count"), by, &f);
        sums.into_iter()
            .filter_map(|sum| {
                let count = counts.iter().find(|c| c.labels == sum.labels)?;
                Some(Group {
                    value: histogram::mean(sum.value, count.value)?,
                    ..sum
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_700_000_000 + s, 0).unwrap()
    }

    fn exact(t: &Tracker, name: &str, labels: &[(&str, &str)], window: i64, now: i64) -> Option<f64> {
        t.get(name, labels)?
            .counter()?
            .exact_increase(TimeDelta::seconds(window), at(now))
    }

    #[test]
    fn identity_ignores_label_order_and_positions() {
        let mut t = Tracker::new([]);
        t.ingest("a_total{x=\"1\",y=\"2\"} 1\nb_total 10\n", at(0))
            .unwrap();
        // Same series, labels reordered and the lines swapped.
        let report = t
            .ingest("b_total 15\na_total{y=\"2\",x=\"1\"} 4\n", at(10))
            .unwrap();
        assert_eq!((t.len(), report.new_series, report.samples), (2, 0, 2));
        assert_eq!(exact(&t, "a_total", &[("x", "1"), ("y", "2")], 10, 10), Some(3.0));
        assert_eq!(exact(&t, "b_total", &[], 10, 10), Some(5.0));
        // A different series at a cached position is not mistaken for the old one.
        t.ingest("a_total{x=\"1\",y=\"3\"} 7\nb_total 20\n", at(20))
            .unwrap();
        assert_eq!(t.len(), 3);
        assert_eq!(exact(&t, "a_total", &[("x", "1"), ("y", "3")], 10, 20), None);
    }

    #[test]
    fn stale_series_are_dropped_and_can_come_back() {
        let mut t = Tracker::new([]).stale_after(2);
        t.ingest("a_total 1\nb_total 1\n", at(0)).unwrap();
        assert_eq!(t.ingest("b_total 2\n", at(1)).unwrap().dropped_stale, 0);
        assert_eq!(t.ingest("b_total 3\n", at(2)).unwrap().dropped_stale, 1);
        assert!(t.get("a_total", &[]).is_none());
        let report = t.ingest("a_total 5\nb_total 4\n", at(3)).unwrap();
        assert_eq!((report.new_series, t.len()), (1, 2));
        assert_eq!(t.get("b_total", &[]).unwrap().last_value(), Some(4.0));
    }

    #[test]
    fn created_time_reveals_a_restart_the_value_hides() {
        let page = |v: u32, created: u32| {
            format!("# TYPE x_total counter\nx_total{{k=\"a\"}} {v}\n# TYPE x_created gauge\nx_created{{k=\"a\"}} {created}\n")
        };
        let mut t = Tracker::new([]);
        t.ingest(&page(100, 1000), at(0)).unwrap();
        assert!(t.ingest(&page(150, 1000), at(10)).unwrap().resets.is_empty());
        let report = t.ingest(&page(170, 1_700_000_015), at(20)).unwrap();
        assert_eq!(report.resets.len(), 1);
        assert_eq!(report.resets[0].cause, ResetCause::CreatedChanged);
        // 50, then 170 counted from zero after the restart.
        assert_eq!(exact(&t, "x_total", &[("k", "a")], 20, 20), Some(220.0));
    }

    #[test]
    fn selectors_and_roles() {
        let page = "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 2\n\
                    # TYPE g gauge\ng 5\nu_total 7\nother 1\n";
        let mut t = Tracker::new([Selector::parse(r#"{__name__!="other", __name__!=""}"#).unwrap()]);
        t.ingest(page, at(0)).unwrap();
        assert_eq!(t.len(), 6);
        assert!(t.get("h_sum", &[]).unwrap().counter().is_some());
        assert!(t.get("g", &[]).unwrap().gauge().is_some());
        assert!(t.get("u_total", &[]).unwrap().counter().is_some());
        assert!(t.get("other", &[]).is_none());
        assert!(matches!(
            t.ingest(page, at(0)),
            Err(SeriesError::NotAfterLast { .. })
        ));
    }
}
