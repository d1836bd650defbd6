//! Many live series fed scrapes: a [`Tracker`] keeps the series its selectors pick, by
//! name and label set, through restarts and staleness, and answers
//! [`Query`](crate::Query)s over them.
//!
//! - **A page in**: whole ([`Tracker::ingest`]), or as it arrives, never held whole: from
//!   any [`Read`](std::io::Read) ([`Tracker::ingest_reader`], an HTTP body for one) or from
//!   chunks cut anywhere that you push ([`Tracker::ingest_chunks`], [`IngestChunks`]). Each
//!   way gives the same series and the same [`IngestReport`] (new series, resets, process
//!   restarts, bad lines, what no selector picked).
//! - **Figures out**: [`Tracker::evaluate`] (rates, increases, EWMAs, quantiles, per label);
//!   one series' points and values: [`Tracker::get`] and [`TrackedSeries`].
//! - **Settings**: retention ([`DEFAULT_RETENTION`]), staleness ([`DEFAULT_STALE_AFTER`]),
//!   the format ([`Tracker::read_as`]), limits; see [`Tracker`].
//!
//! [The guide](crate::guide) goes through each with a runnable example.
//!
//! # For the next maintainer
//! The files: `settings.rs` (the setters), `ingest.rs` (one page in: the parser's visitor,
//! known lines, the hold-back transaction), `report.rs` (what an ingest reports),
//! `tracked.rs` (a series and its shared labels), `index.rs` (identity), `positions.rs`
//! (the position cache), `roles.rs` (counter, gauge or created time), `aggregate.rs`
//! (series picked by a selector, grouped by labels: `sum_by` and the histogram folds),
//! `evaluate.rs` (the [`Query`](crate::Query) front door), `nearest.rs` (names nearest to
//! one asked, for the messages of unmatched pages and empty answers).
//! - **Identity**: a series is its metric name plus its label set, label order ignored
//!   (`index.rs`). Parsed samples are looked up without building owned strings: a
//!   fingerprint of the name parts and unescaped label bytes, then a comparison with the
//!   stored identity. With `normalize_names`, ':' and '_' are one character everywhere
//!   (fingerprints, comparisons, `# TYPE` families, selectors' `=` and `!=` names; a
//!   regex name matcher sees the name as written, see `Selector::normalize_names`).
//! - **Cache**: steady-state pages repeat their series in the same order, so the position
//!   cache (`positions.rs`) maps "sample number `i` with this exact name-and-labels text" to
//!   what it was last time (a slot, a created-time target, or ignored). A hit costs one
//!   byte comparison and skips selectors, hashing and role rules. Anything that changes
//!   what a position means (a slot reused after staleness, another parser, other
//!   selectors' spelling) must clear the cache.
//! - **Known lines** (the `Ingest` visitor): a cached key that began its line and was
//!   followed by a space is also compared with the next line *before* it is parsed; on a
//!   match the parser reads only the value and timestamp (`Visitor::known_prefix`), so a
//!   steady page costs less than parsing it. The same bytes at a line's start always parse
//!   to the same name and labels; everything after them is still validated.
//!   `agreement.rs` (proptest and the `known_lines_agree` fuzz target) checks that it
//!   changes nothing a tracker records or reports.
//! - **Page order** is the tracker's, not the series': a `_created` sample read before its
//!   counter's point waits in `pending_created` until that point (cleared with the page).
//! - **Roles** (`roles.rs`): the last `# TYPE` decides whether a sample is a counter, a
//!   gauge or a created time; untyped samples go by name.
//! - **Staleness**: each series remembers the last scrape that recorded it; a series
//!   missing from `stale_after` scrapes is removed, and only then is the cache cleared.
//! - **A page read as it arrives** (`chunks.rs`, [`Tracker::ingest_chunks`],
//!   [`Tracker::ingest_reader`]): chunks are cut into batches of whole lines, each read
//!   by the same visitor as a whole page, in place (only a line cut between two chunks is
//!   copied, into a buffer the tracker keeps); [`Tracker::ingest`] is one batch, the page.
//!   Nothing may borrow a batch's text past the batch: what the next batch needs is
//!   `PageRead` (owned: position, report, limit errors, bytes and lines so far) and
//!   `Carried` (the `# TYPE` family's name and the position cache's anchor key, copied
//!   when a batch ends). Where the whole page is read again or counted, a stream does it
//!   as it passes: refusals' byte offsets become lines at the end of their batch (held
//!   samples' too), parse errors' lines are offset by the lines before, the metric names
//!   for the unmatched report are gathered (`PageNames`), the series-count bound (which
//!   counts the page's lines first) is replaced by holding back whenever `max_series` is
//!   set (the same result, 16 bytes a sample), the sample and body size limits are counted
//!   here, not by the parser (which sees one batch). Strict OpenMetrics' rules span the
//!   page with borrowed names (`text/openmetrics.rs`), so such a page is gathered and
//!   read whole. `tests/it/chunks.rs` cuts the real pages at random bytes under every
//!   setting and compares with the whole page.
//! - `aggregate.rs` and `evaluate.rs` read the tracked series; nothing there runs during
//!   ingestion. Every query first checks that the tracker keeps what it asks about
//!   (`Tracker::check_tracked`): an answer never silently misses series.

mod aggregate;
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) mod agreement;
mod bucket_groups;
mod chunks;
mod evaluate;
mod figure;
mod index;
mod ingest;
mod nearest;
mod positions;
mod report;
mod roles;
mod settings;
mod starts;
mod tracked;

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, TimeDelta, Utc};

pub(crate) use aggregate::{family_selector, part_selector, Pick};
pub use chunks::IngestChunks;
use index::SeriesIndex;
use ingest::{Carried, Held};
use nearest::PageNames;
use positions::PositionCache;
pub use report::{IngestReport, ProcessRestart, ResetEvent, Retired, Unmatched};
use roles::{KnownFamilies, Rules};
use starts::StartTimes;
pub use tracked::{SeriesData, TrackedSeries};

use crate::error::QueryError;
use crate::promql::millis_to_time;
use crate::select::Selector;
use crate::series::{CounterSeries, GaugeSeries, DEFAULT_EWMA_TAU};
use crate::text::{Format, Parser};

/// Default [`Tracker::retention`]: 10 minutes of points per series.
pub const DEFAULT_RETENTION: TimeDelta = TimeDelta::minutes(10);
/// Default [`Tracker::stale_after`]: a series missing from 5 scrapes in a row is dropped.
pub const DEFAULT_STALE_AFTER: u32 = 5;

/// How far a target's process start time may move from one page to the next and still be
/// the same process (no [`ProcessRestart`]): exporters that compute it from an uptime
/// round it (Node's prom-client to whole seconds, so it flips between two) or carry the
/// uptime's jitter, while a restart moves it by the old process's whole life. Callers that
/// read the start time themselves (to say "server restarted") use the same bound.
///
/// # Example
/// ```
/// let at = |s: i64| chrono::DateTime::from_timestamp(1_700_000_000 + s, 0).unwrap();
/// let page = |start: f64, n: u32| format!("process_start_time_seconds {start}\n# TYPE t counter\nt_total {n}\n");
/// let mut t = promrate::Tracker::new([]);
/// t.ingest(&page(1_699_999_000.0, 0), at(0))?;
/// let flip = 1_699_999_000.0 + promrate::tracker::START_TIME_JITTER.as_seconds_f64();
/// assert!(t.ingest(&page(flip, 10), at(10))?.process_restarts.is_empty());
/// assert_eq!(t.ingest(&page(1_700_000_015.0, 5), at(20))?.process_restarts.len(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const START_TIME_JITTER: TimeDelta = TimeDelta::seconds(1);

/// Follows many series across scrapes: read each page once (whole, or as it arrives:
/// [`Tracker::ingest_reader`], [`Tracker::ingest_chunks`]), update every series that
/// matches the selectors, then ask for figures with a [`Query`](crate::Query)
/// ([`Tracker::evaluate`]: rates, increases, EWMAs, totals, last values, means, a
/// histogram's quantiles, means and buckets), or, for the rare figure no estimator
/// computes, fold one of your own over the series (the `fold` module).
///
/// Counters are told apart from gauges by the page's `# TYPE` lines (names ending in
/// `_total` count as counters when untyped); `<family>_created` samples feed the created
/// time of the family's counters, so a restart that climbed past the old value is caught,
/// whether the page prints `_created` before or after the counter. Once a series exists,
/// ingesting allocates nothing.
///
/// A selector picks series as PromQL does, and a histogram's or summary's name also picks
/// its `_bucket`, `_sum` and `_count` series ([`Selector::matches_family`]), here and in
/// every query. Settings are changed through `&mut` (the setters return `&mut Self` to
/// chain), so a tracker that holds history can be reconfigured in place.
///
/// # Example
/// ```
/// use chrono::{DateTime, TimeDelta};
/// use promrate::{Estimator, Query, Selector, Tracker};
/// let tokens = Selector::parse("vllm:generation_tokens_total")?;
/// let mut tracker = Tracker::new([tokens.clone()]);
/// let t0 = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
/// let page = |a: u32, b: u32| format!(
///     "# TYPE vllm:generation_tokens counter\n\
///      vllm:generation_tokens_total{{engine=\"0\",model_name=\"m\"}} {a}\n\
///      vllm:generation_tokens_total{{engine=\"1\",model_name=\"m\"}} {b}\n");
/// tracker.ingest(&page(1000, 2000), t0)?;
/// tracker.ingest(&page(1500, 2300), t0 + TimeDelta::seconds(10))?;
/// let query = Query::new(&tokens, Estimator::WindowRate).window(TimeDelta::seconds(10));
/// assert_eq!(tracker.evaluate(&query)?.value()?, 80.0); // (500 + 300) tokens / 10 s
/// let per_engine = tracker.evaluate(&query.by(["engine"]))?;
/// assert_eq!(per_engine.groups.iter().map(|g| g.value.clone()).collect::<Vec<_>>(), [Ok(50.0), Ok(30.0)]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Tracker {
    selectors: Vec<Selector>,
    parser: Parser,
    retention: TimeDelta,
    /// [`Tracker::expect_interval`].
    expected_interval: Option<TimeDelta>,
    stale_after: u32,
    ewma_tau: TimeDelta,
    ewma_gap: Option<TimeDelta>,
    /// [`Tracker::start_time_skew`], in milliseconds.
    start_time_skew_ms: Option<i64>,
    /// [`Tracker::honor_timestamps`].
    honor_timestamps: bool,
    index: SeriesIndex,
    positions: PositionCache,
    /// Series inserted so far (tells the position cache when a miss may have become a hit).
    insertions: u64,
    /// Distinct series recorded in the current scrape (all of them: nothing went stale).
    touched: usize,
    scrapes: u64,
    last_at_ms: Option<i64>,
    max_series: usize,
    /// `Some` when untyped families are read by name ([`Tracker::infer_counters`]).
    known_families: Option<KnownFamilies>,
    /// Lines that begin as they did last scrape are recognised before they are parsed;
    /// off only to check that it changes nothing (`agreement.rs`).
    recognise_lines: bool,
    /// Whether the page being read could be refused by a limit (of the parser, or
    /// `max_series`): what it records is then held back in `held` until it is read whole.
    holding: bool,
    held: Vec<Held>,
    /// The times of the held-back samples, as runs: from which held sample each applies.
    held_times: Vec<(u32, i64)>,
    /// Held-back targets whose index does not fit a `Held` (never, in practice).
    held_wide: Vec<positions::Target>,
    /// Samples gathered to be pushed together (`ingest/pushes.rs`); empty between pages.
    pending: Vec<ingest::Pending>,
    /// The targets of held-back created-time samples.
    held_created: Vec<positions::CreatedFor>,
    /// `_created` times read before their counter's point on this page (a page that
    /// prints `x_created` first), by the counter's slot: applied with that point.
    pending_created: HashMap<usize, i64>,
    /// Counters this page brought back after a page or more without them (rare): a
    /// restart of their target while they were away is theirs too (`apply_start_times`).
    returning: Vec<usize>,
    /// The selectors the last page did not match (by index), and what was reported.
    unmatched_before: Option<(Vec<usize>, Unmatched)>,
    /// For each selector, the slot of a series it picked on an earlier page.
    witnesses: Vec<Option<usize>>,
    /// The targets' process start times (`starts.rs`).
    starts: StartTimes,
    /// The metric names of the pages read in chunks, for the unmatched report.
    page_names: PageNames,
    /// What a page read in chunks carries from one batch of lines to the next, and its
    /// partial last line: kept between pages so that their buffers are reused.
    carried: Carried,
    line_buffer: Vec<u8>,
    /// Families read as OpenMetrics 2.0 native histograms without classic buckets (their
    /// count and sum are tracked; `quantile` says why it has no buckets to read).
    native_families: HashSet<Box<str>>,
}

impl Tracker {
    /// A tracker for the samples matching any of `selectors` (everything if none), with
    /// default retention, staleness and parser. A query about other series is refused
    /// ([`QueryError::NotTracked`]).
    ///
    /// # Example
    /// ```
    /// let t = promrate::Tracker::new([promrate::Selector::parse("up").unwrap()]);
    /// assert_eq!((t.len(), t.scrapes()), (0, 0));
    /// ```
    pub fn new(selectors: impl IntoIterator<Item = Selector>) -> Self {
        Tracker {
            selectors: selectors.into_iter().collect(),
            parser: Parser::new(Format::PrometheusText),
            retention: DEFAULT_RETENTION,
            stale_after: DEFAULT_STALE_AFTER,
            ewma_tau: DEFAULT_EWMA_TAU,
            ewma_gap: None,
            start_time_skew_ms: None,
            honor_timestamps: true,
            expected_interval: None,
            index: SeriesIndex::default(),
            positions: PositionCache::default(),
            insertions: 0,
            touched: 0,
            scrapes: 0,
            last_at_ms: None,
            max_series: usize::MAX,
            known_families: None,
            recognise_lines: true,
            holding: false,
            held: Vec::new(),
            held_times: Vec::new(),
            held_wide: Vec::new(),
            pending: Vec::new(),
            held_created: Vec::new(),
            pending_created: HashMap::new(),
            returning: Vec::new(),
            unmatched_before: None,
            witnesses: Vec::new(),
            starts: StartTimes::default(),
            page_names: PageNames::default(),
            carried: Carried::default(),
            line_buffer: Vec::new(),
            native_families: HashSet::new(),
        }
    }

    fn rules(&self) -> Rules<'_> {
        Rules {
            normalize: self.index.normalize_names(),
            known: self.known_families.as_ref(),
        }
    }

    /// Number of series tracked.
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// t.ingest("a 1\nb 2\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
    /// assert_eq!(t.len(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
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
        self.index.len() == 0
    }

    /// Scrapes ingested so far.
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// t.ingest("a 1\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
    /// assert_eq!(t.scrapes(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn scrapes(&self) -> u64 {
        self.scrapes
    }

    /// Every tracked series.
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// t.ingest("a 1\nb 2\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
    /// let mut names: Vec<&str> = t.series().map(|s| s.name()).collect();
    /// names.sort();
    /// assert_eq!(names, ["a", "b"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn series(&self) -> impl Iterator<Item = &TrackedSeries> {
        self.index.iter()
    }

    /// The series with this name and exactly these labels (any order). A label with an
    /// empty value is no label, as in Prometheus: `up{c=""}` is the series `up`.
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// t.ingest("up{a=\"1\",b=\"2\",c=\"\"} 1\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
    /// assert!(t.get("up", &[("b", "2"), ("a", "1")]).is_some());
    /// assert!(t.get("up", &[("a", "1"), ("b", "2"), ("c", "")]).is_some());
    /// assert!(t.get("up", &[("a", "1")]).is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn get(&self, name: &str, labels: &[(&str, &str)]) -> Option<&TrackedSeries> {
        self.index.get(self.index.find_owned(name, labels)?)
    }

    /// The time of the newest scrape ingested.
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// let at = chrono::DateTime::from_timestamp(1, 0).unwrap();
    /// assert_eq!(t.last_scrape(), None);
    /// t.ingest("a 1\n", at)?;
    /// assert_eq!(t.last_scrape(), Some(at));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn last_scrape(&self) -> Option<DateTime<Utc>> {
        self.last_at_ms.map(millis_to_time)
    }

    /// Whether `series` was on the newest page: the rule of
    /// [`SeriesScope::NewestPage`](crate::SeriesScope::NewestPage), for folds of one's own
    /// (the `fold` module) that count series as the queries do.
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
    pub fn on_newest_page(&self, series: &TrackedSeries) -> bool {
        series.last_seen == self.scrapes
    }

    /// The selectors the tracker keeps series of (none: every series).
    ///
    /// # Example
    /// ```
    /// let t = promrate::Tracker::new([promrate::Selector::parse("up")?]);
    /// assert_eq!(t.selectors()[0].metric_name(), Some("up"));
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn selectors(&self) -> &[Selector] {
        &self.selectors
    }

    /// Whether every series `selector` can pick is one the tracker keeps: some selector of
    /// the tracker picks everything it picks (see `Selector::covers`).
    pub(crate) fn check_tracked(&self, selector: &Selector) -> Result<(), QueryError> {
        let normalize = self.index.normalize_names();
        if self.selectors.is_empty() || self.selectors.iter().any(|s| s.covers(selector, normalize)) {
            return Ok(());
        }
        Err(QueryError::NotTracked {
            selector: selector.to_string(),
            tracked: self.selectors.iter().map(ToString::to_string).collect(),
            nearest: nearest::nearest_tracked(self, selector),
        })
    }
}

#[cfg(test)]
mod tests;

/// The settings a new series takes from its tracker (a copy, so that a series can be
/// made while the index is borrowed).
#[derive(Debug, Clone, Copy)]
struct NewSeries {
    retention: TimeDelta,
    tau: TimeDelta,
    gap: Option<TimeDelta>,
    expected_interval: Option<TimeDelta>,
}

impl NewSeries {
    fn counter(self) -> CounterSeries {
        let mut counter = CounterSeries::new(self.retention);
        counter.ewma_time_constant(self.tau);
        if let Some(gap) = self.gap {
            counter.ewma_restart_after(gap);
        }
        if let Some(interval) = self.expected_interval {
            counter.reserve_for_interval(interval);
        }
        counter
    }

    fn gauge(self) -> GaugeSeries {
        let mut gauge = GaugeSeries::new(self.retention);
        if let Some(interval) = self.expected_interval {
            gauge.reserve_for_interval(interval);
        }
        gauge
    }
}

impl Tracker {
    fn new_series(&self) -> NewSeries {
        NewSeries {
            retention: self.retention,
            tau: self.ewma_tau,
            gap: self.ewma_gap,
            expected_interval: self.expected_interval,
        }
    }
}
