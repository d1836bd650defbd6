//! Many live series fed whole scrapes: identity by name and label set, staleness, resets,
//! and PromQL-style aggregation.
//!
//! # For the next maintainer
//! - **Identity**: a series is its metric name plus its label set, label order ignored
//!   (`index.rs`). Parsed samples are looked up without building owned strings: a
//!   fingerprint of the name parts and unescaped label bytes, then a comparison with the
//!   stored identity. With `normalize_names`, ':' and '_' are one character everywhere
//!   (fingerprints, comparisons, `# TYPE` families, selectors).
//! - **Cache**: steady-state pages repeat their series in the same order, so the position
//!   cache (`positions.rs`) maps "sample number `i` with this exact name-and-labels text" to
//!   what it was last time (a slot, a created-time target, or ignored). A hit costs one
//!   byte comparison and skips selectors, hashing and role rules. Anything that changes
//!   what a position means (a slot reused after staleness) must clear the cache.
//! - **Known lines** (the `Ingest` visitor): a cached key that began its line and was
//!   followed by a space is also compared with the next line *before* it is parsed; on a
//!   match the parser reads only the value and timestamp (`Visitor::known_prefix`), so a
//!   steady page costs less than parsing it. The same bytes at a line's start always parse
//!   to the same name and labels; everything after them is still validated.
//!   `agreement.rs` (proptest and the `known_lines_agree` fuzz target) checks that it
//!   changes nothing a tracker records or reports.
//! - **Roles** (`roles.rs`): the last `# TYPE` decides whether a sample is a counter, a
//!   gauge or a created time; untyped samples go by name.
//! - **Staleness**: each series remembers the last scrape that recorded it; a series
//!   missing from `stale_after` scrapes is removed, and only then is the cache cleared.
//! - `aggregate.rs` reads the tracked series; nothing there runs during ingestion.

mod aggregate;
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) mod agreement;
mod index;
mod positions;
mod roles;
mod tracked;

use std::collections::HashSet;

use chrono::{DateTime, TimeDelta, Utc};

pub use aggregate::{Group, GroupLabels};
use index::SeriesIndex;
use positions::{PositionCache, Target};
use roles::{KnownFamilies, Role, Rules};
pub use tracked::{IngestReport, Refusal, ResetEvent, SeriesData, TrackedSeries};

use crate::error::ParseError;
use crate::error::SeriesError;
use crate::select::Selector;
use crate::series::{CounterSeries, GaugeSeries, DEFAULT_EWMA_TAU};
use crate::text::limits::Limits;
use crate::text::parser::{KnownLines, Visitor};
use crate::text::{Entry, Format, MetricType, Parser, Sample};

/// Default [`Tracker::retention`]: 10 minutes of points per series.
pub const DEFAULT_RETENTION: TimeDelta = TimeDelta::minutes(10);
/// Default [`Tracker::stale_after`]: a series missing from 5 scrapes in a row is dropped.
pub const DEFAULT_STALE_AFTER: u32 = 5;

/// Follows many series across scrapes: parse a whole page once, update every series that
/// matches the selectors, then ask for rates per series or aggregated.
///
/// Counters are told apart from gauges by the page's `# TYPE` lines (names ending in
/// `_total` count as counters when untyped); `<family>_created` samples feed the created
/// time of the family's counters, so a restart that climbed past the old value is caught,
/// whether the page prints `_created` before or after the counter. Once a series exists,
/// ingesting allocates nothing.
///
/// Settings are changed through `&mut` (the setters return `&mut Self` to chain), so a
/// tracker that holds history can be reconfigured in place.
///
/// # Example
/// ```
/// use chrono::{DateTime, TimeDelta};
/// use promrate::{Selector, Tracker};
/// let tokens = Selector::parse("vllm:generation_tokens_total")?;
/// let mut tracker = Tracker::new([tokens.clone()]);
/// let t0 = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
/// let page = |a: u32, b: u32| format!(
///     "# TYPE vllm:generation_tokens counter\n\
///      vllm:generation_tokens_total{{engine=\"0\",model_name=\"m\"}} {a}\n\
///      vllm:generation_tokens_total{{engine=\"1\",model_name=\"m\"}} {b}\n");
/// tracker.ingest(&page(1000, 2000), t0)?;
/// tracker.ingest(&page(1500, 2300), t0 + TimeDelta::seconds(10))?;
/// let window = TimeDelta::seconds(10);
/// let at = t0 + TimeDelta::seconds(10);
/// let total = tracker.sum_by(&tokens, &[], |s| s.counter()?.exact_rate(window, at));
/// assert_eq!(total[0].value, 80.0); // (500 + 300) tokens / 10 s
/// let per_engine = tracker.sum_by(&tokens, &["engine"], |s| s.counter()?.exact_rate(window, at));
/// assert_eq!(per_engine.iter().map(|g| g.value).collect::<Vec<_>>(), [50.0, 30.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Tracker {
    selectors: Vec<Selector>,
    parser: Parser,
    retention: TimeDelta,
    stale_after: u32,
    ewma_tau: TimeDelta,
    ewma_gap: Option<TimeDelta>,
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
    /// The slots of held-back created-time samples (few: one per counter family).
    held_created: Vec<[Option<usize>; 3]>,
}

/// A sample recorded while the page is held back (see `Tracker::holding`).
#[derive(Debug, Clone, Copy)]
struct Held {
    target: HeldTarget,
    at_ms: i64,
    value: f64,
}

/// Where a held-back sample goes (not selected ones are not held).
#[derive(Debug, Clone, Copy)]
enum HeldTarget {
    Series(usize),
    /// An index into `Tracker::held_created`.
    Created(usize),
}

impl Tracker {
    /// A tracker for the samples matching any of `selectors` (everything if none), with
    /// default retention, staleness and parser.
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
            held_created: Vec::new(),
        }
    }

    /// The parser (format, limits) to read pages with. Default: Prometheus text. May change
    /// between scrapes (a server that starts answering OpenMetrics).
    ///
    /// # Example
    /// ```
    /// use promrate::{Format, Parser, Tracker};
    /// let mut t = Tracker::new([]);
    /// t.parser(Parser::new(Format::OpenMetrics).strict(false));
    /// let report = t.ingest("# TYPE a counter\na_total 1 5.5\n# EOF\n", chrono::DateTime::from_timestamp(9, 0).unwrap())?;
    /// assert_eq!(report.samples, 1);
    /// assert_eq!(t.get("a_total", &[]).unwrap().counter().unwrap().last().unwrap().timestamp_ms, 5_500);
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn parser(&mut self, parser: Parser) -> &mut Self {
        if parser != self.parser {
            // What a position's text was read as depends on the parser.
            self.positions.clear();
        }
        self.parser = parser;
        self
    }

    /// Treat ':' and '_' as equal in metric names (series identity, `# TYPE` families,
    /// selectors and queries), so `vllm:x` and `vllm_x` are one series.
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// t.normalize_names(true);
    /// let at = |s| chrono::DateTime::from_timestamp(s, 0).unwrap();
    /// t.ingest("vllm:x_total 1\n", at(1))?;
    /// t.ingest("vllm_x_total 2\n", at(2))?;
    /// assert_eq!(t.len(), 1);
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn normalize_names(&mut self, on: bool) -> &mut Self {
        self.index.set_normalize_names(on);
        for selector in &mut self.selectors {
            *selector = selector.clone().normalize_names(on);
        }
        self.positions.clear();
        self
    }

    /// How much history each new series keeps. Default [`DEFAULT_RETENTION`].
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// let mut t = promrate::Tracker::new([]);
    /// t.retention(TimeDelta::seconds(15));
    /// for s in 0..10 {
    ///     t.ingest(&format!("a_total {s}\n"), DateTime::from_timestamp(s * 10, 0).unwrap())?;
    /// }
    /// // 15 s of history plus the point at or before its start.
    /// assert_eq!(t.get("a_total", &[]).unwrap().counter().unwrap().len(), 3);
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn retention(&mut self, retention: TimeDelta) -> &mut Self {
        self.retention = retention;
        self
    }

    /// Drop a series after it is missing from this many consecutive scrapes (min 1).
    /// Default [`DEFAULT_STALE_AFTER`].
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// t.stale_after(1);
    /// let at = |s| chrono::DateTime::from_timestamp(s, 0).unwrap();
    /// t.ingest("a 1\n", at(1))?;
    /// assert_eq!(t.ingest("b 1\n", at(2))?.dropped_stale, 1);
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn stale_after(&mut self, scrapes: u32) -> &mut Self {
        self.stale_after = scrapes.max(1);
        self
    }

    /// The EWMA time constant for new counter series (see [`CounterSeries::ewma_rate`]).
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// let mut t = promrate::Tracker::new([]);
    /// t.ewma_time_constant(TimeDelta::seconds(10));
    /// let at = |s| DateTime::from_timestamp(s, 0).unwrap();
    /// t.ingest("a_total 0\n", at(0))?;
    /// t.ingest("a_total 100\n", at(10))?;
    /// t.ingest("a_total 100\n", at(20))?;
    /// // 10/s, then 0/s weighted by 1 - exp(-10 s / 10 s).
    /// let ewma = t.get("a_total", &[]).unwrap().counter().unwrap().ewma_rate().unwrap();
    /// assert!((ewma - 10.0 * (-1.0f64).exp()).abs() < 1e-12);
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn ewma_time_constant(&mut self, tau: TimeDelta) -> &mut Self {
        self.ewma_tau = tau;
        self
    }

    /// New counter series start their EWMA afresh after an interval longer than `gap`
    /// (see [`CounterSeries::ewma_restart_after`]): after an outage the smoothed rate is
    /// the rate since recovery, not a blend with the rate before it.
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// let mut t = promrate::Tracker::new([]);
    /// t.ewma_restart_after(TimeDelta::seconds(5));
    /// let at = |s| DateTime::from_timestamp(s, 0).unwrap();
    /// for (s, v) in [(0, "0"), (1, "100"), (60, "160"), (61, "210")] {
    ///     t.ingest(&format!("a_total {v}\n"), at(s))?;
    /// }
    /// let ewma = t.get("a_total", &[]).unwrap().counter().unwrap().ewma_rate();
    /// assert_eq!(ewma, Some(50.0), "the rate since the gap, not a blend with 100/s");
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn ewma_restart_after(&mut self, gap: TimeDelta) -> &mut Self {
        self.ewma_gap = Some(gap);
        self
    }

    /// At most `count` series: a scrape that would take the tracker past it is refused
    /// whole ([`SeriesError::SeriesLimit`]), with no series half-created and nothing
    /// recorded, so memory stays bounded whatever a server sends. No limit by default.
    ///
    /// The page is still read once: when it has fewer lines than the room left, nothing
    /// changes; otherwise its samples are held back (32 bytes each, a buffer kept between
    /// scrapes) and applied once the page is known to fit.
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// t.max_series(2);
    /// let at = |s| chrono::DateTime::from_timestamp(s, 0).unwrap();
    /// t.ingest("a 1\nb 1\n", at(1))?;
    /// let refused = t.ingest("a 2\nb 2\nc 2\n", at(2));
    /// assert_eq!(refused, Err(promrate::SeriesError::SeriesLimit { limit: 2, series: 3 }));
    /// assert_eq!((t.len(), t.scrapes()), (2, 1));
    /// assert_eq!(t.get("a", &[]).unwrap().last_value(), Some(1.0));
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn max_series(&mut self, count: usize) -> &mut Self {
        self.max_series = count;
        self
    }

    /// Read families declared `untyped` (or `unknown`) by their names, as PromQL users do:
    /// `x_total` is a counter, and so are `x_bucket` (with an `le` label), `x_count` and
    /// `x_sum` of a family the tracker knows to be a histogram or summary (a `x_bucket`
    /// series with `le`, or a `x` series with `quantile`, on this page or an earlier one).
    /// Off by default: a declared type is taken at its word, and only series with no
    /// `# TYPE` line at all go by name (`_total`).
    ///
    /// Prometheus' and VictoriaMetrics' `/federate` (and VictoriaMetrics'
    /// `/api/v1/export/prometheus`) declare every family `untyped`, so reading through them
    /// needs this. Families are learned as the page is read; an untyped `_count` or `_sum`
    /// read before its family's `_bucket` (VictoriaMetrics' order) becomes a counter when
    /// the page ends.
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// t.infer_counters(true);
    /// let page = "# TYPE lat_bucket untyped\nlat_bucket{le=\"+Inf\"} 4 1000\n\
    ///             # TYPE lat_count untyped\nlat_count 4 1000\n\
    ///             # TYPE tokens_total untyped\ntokens_total 10 1000\n";
    /// t.ingest(page, chrono::DateTime::from_timestamp(2, 0).unwrap())?;
    /// assert!(t.get("lat_count", &[]).unwrap().counter().is_some());
    /// assert!(t.get("tokens_total", &[]).unwrap().counter().is_some());
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn infer_counters(&mut self, on: bool) -> &mut Self {
        if on != self.known_families.is_some() {
            self.known_families = on.then(KnownFamilies::default);
            self.positions.clear();
        }
        self
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
    /// # Ok::<(), promrate::SeriesError>(())
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
    /// # Ok::<(), promrate::SeriesError>(())
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
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn series(&self) -> impl Iterator<Item = &TrackedSeries> {
        self.index.iter()
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
        self.index.get(self.index.find_owned(name, labels)?)
    }

    /// Parses `text` (a whole scrape taken at `at`) and records every matching sample.
    /// Samples with their own timestamp are recorded at it. Bad lines are counted and the
    /// first is reported; the rest of the page is still used.
    ///
    /// # Errors
    /// Nothing is recorded when the scrape is refused: [`SeriesError::NotAfterLast`] if `at`
    /// is not after the previous scrape; [`SeriesError::Limit`] if the page is over a limit
    /// of the [`Tracker::parser`] (as Prometheus fails such a scrape whole);
    /// [`SeriesError::SeriesLimit`] if it would go past [`Tracker::max_series`].
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// let at = chrono::DateTime::from_timestamp(5, 0).unwrap();
    /// t.ingest("a_total 1\n", at)?;
    /// assert!(matches!(t.ingest("a_total 2\n", at), Err(promrate::SeriesError::NotAfterLast { .. })));
    /// assert_eq!(t.scrapes(), 1);
    /// # Ok::<(), promrate::SeriesError>(())
    /// ```
    pub fn ingest(&mut self, text: &str, at: DateTime<Utc>) -> Result<IngestReport, SeriesError> {
        let at_ms = at.timestamp_millis();
        if let Some(last_ms) = self.last_at_ms {
            if at_ms <= last_ms {
                return Err(SeriesError::NotAfterLast { at_ms, last_ms });
            }
        }
        // Where a limit could refuse the page, what it records is held back until the page
        // is read: one pass either way.
        self.holding = self.parser.limits() != Limits::NONE || !self.within_series_bound(text);
        self.held.clear();
        self.held_created.clear();
        let before = (self.scrapes, self.last_at_ms);
        self.last_at_ms = Some(at_ms);
        self.scrapes += 1;
        self.touched = 0;
        let parser = self.parser;
        let mut ingest = Ingest {
            tracker: self,
            family: None,
            position: 0,
            at_ms,
            report: IngestReport::default(),
            known: None,
            anchor_key: "",
            undecided: Vec::new(),
            limit_error: None,
            over_limit: HashSet::new(),
        };
        parser.parse(text).visit(&mut ingest);
        let Ingest {
            mut report,
            undecided,
            limit_error,
            over_limit,
            ..
        } = ingest;
        let refusal = match limit_error {
            Some(error) => Some(SeriesError::Limit(error)),
            None if !over_limit.is_empty() => Some(SeriesError::SeriesLimit {
                limit: self.max_series,
                series: self.index.len() + over_limit.len(),
            }),
            None => None,
        };
        if let Some(refusal) = refusal {
            self.forget_page(before);
            return Err(refusal);
        }
        if std::mem::take(&mut self.holding) {
            let mut held = std::mem::take(&mut self.held);
            for h in held.drain(..) {
                let target = match h.target {
                    HeldTarget::Series(slot) => Target::Series(slot),
                    HeldTarget::Created(i) => Target::Created(self.held_created[i]),
                };
                self.apply_now(target, h.at_ms, h.value, &mut report);
            }
            self.held = held;
        }
        self.decide_roles(&undecided);
        self.drop_stale(&mut report);
        self.positions.settle();
        Ok(report)
    }

    /// Whether a page cannot take the tracker past [`Tracker::max_series`]: it adds at
    /// most one series per line, and counting lines is a SIMD scan.
    fn within_series_bound(&self, text: &str) -> bool {
        self.max_series == usize::MAX
            || self
                .index
                .len()
                .saturating_add(memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1)
                <= self.max_series
    }

    /// Undoes a refused page: the series it inserted go (nothing else was recorded: it
    /// was held back), and so does what the position cache learned from it.
    fn forget_page(&mut self, (scrapes, last_at_ms): (u64, Option<i64>)) {
        let this_scrape = self.scrapes;
        self.index.remove_where(|s| s.last_seen == this_scrape);
        self.positions.clear();
        self.held.clear();
        self.holding = false;
        self.scrapes = scrapes;
        self.last_at_ms = last_at_ms;
    }

    /// Makes counters of the `undecided` series whose family the page turned out to have
    /// (untyped `_count` and `_sum` read before their histogram's `_bucket`).
    fn decide_roles(&mut self, undecided: &[usize]) {
        let Some(known) = &self.known_families else {
            return;
        };
        let normalize = self.index.normalize_names();
        for &slot in undecided {
            let Some(series) = self.index.get_mut(slot) else {
                continue;
            };
            if !known.has_family_of(&series.name, normalize) {
                continue;
            }
            let SeriesData::Gauge(gauge) = &series.data else {
                continue;
            };
            let mut counter = new_counter(self.retention, self.ewma_tau, self.ewma_gap);
            // The page's point (a gauge accepts what a counter refuses: such a series stays
            // a gauge).
            if gauge
                .points()
                .iter()
                .all(|p| counter.push_ms(p.timestamp_ms, p.value, None).is_ok())
            {
                series.data = SeriesData::Counter(counter);
            }
        }
    }

    /// Whether a selector picks the sample, or the histogram or summary it is part of (a
    /// selector names a histogram as PromQL users do: `x` for `x_bucket`, `x_sum` and
    /// `x_count`), as the page's `# TYPE` (`family`) or the families read by name say.
    fn selected(&self, sample: &Sample<'_>, family: Option<(&str, MetricType)>) -> bool {
        if self.selectors.is_empty() || self.selectors.iter().any(|s| s.matches(sample)) {
            return true;
        }
        let Some(base) = self.histogram_of(sample, family) else {
            return false;
        };
        self.selectors.iter().any(|s| s.matches_as(base, sample))
    }

    /// The histogram or summary a sample is a `_bucket`, `_sum`, `_count` or `_created` of.
    fn histogram_of<'s>(&self, sample: &Sample<'s>, family: Option<(&str, MetricType)>) -> Option<&'s str> {
        let name = sample.name();
        let (base, part) = ["_bucket", "_sum", "_count", "_created"]
            .iter()
            .find_map(|part| Some((name.strip_suffix(part)?, *part)))?;
        let normalize = self.index.normalize_names();
        let declared = family.is_some_and(|(family, kind)| {
            matches!(kind, MetricType::Histogram | MetricType::Summary)
                && crate::text::names::names_equal(base, &[family], normalize)
        });
        let by_name = self.known_families.as_ref().is_some_and(|known| {
            (part == "_bucket" && sample.labels().has_name(b"le")) || known.has_family_of(name, normalize)
        });
        (declared || by_name).then_some(base)
    }

    /// Records a sample's value at `at_ms` where `target` says (or holds it back, see
    /// `Tracker::holding`).
    #[inline]
    fn apply(&mut self, target: Target, at_ms: i64, value: f64, report: &mut IngestReport) {
        if self.holding {
            let target = match target {
                Target::Ignored => return,
                Target::Series(slot) => HeldTarget::Series(slot),
                Target::Created(slots) => {
                    self.held_created.push(slots);
                    HeldTarget::Created(self.held_created.len() - 1)
                }
            };
            self.held.push(Held { target, at_ms, value });
        } else {
            self.apply_now(target, at_ms, value, report);
        }
    }

    #[inline]
    fn apply_now(&mut self, target: Target, at_ms: i64, value: f64, report: &mut IngestReport) {
        match target {
            Target::Ignored => {}
            Target::Series(slot) => self.push(slot, at_ms, value, report),
            Target::Created(slots) => {
                let created_ms = (value * 1000.0).round() as i64;
                for slot in slots.into_iter().flatten() {
                    self.set_created(slot, created_ms, report);
                }
            }
        }
    }

    fn push(&mut self, slot: usize, at_ms: i64, value: f64, report: &mut IngestReport) {
        let scrapes = self.scrapes;
        let Some(series) = self.index.get_mut(slot) else {
            return;
        };
        // Seen already in this scrape: a second sample of the series in the page.
        let again = series.last_seen == scrapes && series.has_point_at(at_ms);
        if series.last_seen != scrapes {
            series.last_seen = scrapes;
            self.touched += 1;
        }
        let newest = match &series.data {
            SeriesData::Counter(c) => c.last(),
            SeriesData::Gauge(g) => g.last(),
        };
        if newest.is_some_and(|p| p.timestamp_ms >= at_ms) && series.has_point(at_ms, value) {
            // The same point served again: its created time, if any, was already applied.
            if let SeriesData::Counter(c) = &mut series.data {
                c.clear_pending_created();
            }
            report.repeated += 1;
            return;
        }
        let outcome = match &mut series.data {
            SeriesData::Counter(c) => c.push_pending(at_ms, value),
            SeriesData::Gauge(g) => g.push_ms(at_ms, value).map(|()| None),
        };
        match outcome {
            Ok(cause) => {
                report.samples += 1;
                if let Some(cause) = cause {
                    report.resets.push(ResetEvent {
                        name: series.name.to_string(),
                        labels: series.owned_labels(),
                        cause,
                    });
                }
            }
            Err(error) => {
                if let SeriesData::Counter(c) = &mut series.data {
                    c.clear_pending_created();
                }
                let error = match error {
                    SeriesError::NotAfterLast { at_ms, .. } if again => SeriesError::Duplicate { at_ms },
                    error => error,
                };
                report.refused += 1;
                if report.first_refused.is_none() {
                    report.first_refused = Some(Refusal {
                        name: series.name.to_string(),
                        labels: series.owned_labels(),
                        error,
                    });
                }
            }
        }
    }

    /// A `_created` time for the counter in `slot`: its newest point's if this scrape
    /// already recorded it, else the point this scrape is about to record.
    fn set_created(&mut self, slot: usize, created_ms: i64, report: &mut IngestReport) {
        let scrapes = self.scrapes;
        let Some(series) = self.index.get_mut(slot) else {
            return;
        };
        let SeriesData::Counter(counter) = &mut series.data else {
            return;
        };
        if series.last_seen != scrapes {
            counter.set_pending_created_ms(created_ms);
            return;
        }
        if let Some(cause) = counter.amend_created_ms(created_ms) {
            report.resets.push(ResetEvent {
                name: series.name.to_string(),
                labels: series.owned_labels(),
                cause,
            });
        }
    }

    fn insert(&mut self, sample: &Sample<'_>, role: Role) -> usize {
        let (name, labels) = self.index.identity(sample.name(), sample.labels());
        let data = match role {
            Role::Counter => SeriesData::Counter(new_counter(self.retention, self.ewma_tau, self.ewma_gap)),
            Role::Gauge | Role::Created => SeriesData::Gauge(GaugeSeries::new(self.retention)),
        };
        self.insertions += 1;
        self.index.insert(TrackedSeries {
            name,
            labels,
            data,
            last_seen: self.scrapes,
        })
    }

    fn drop_stale(&mut self, report: &mut IngestReport) {
        if self.touched == self.index.len() {
            return;
        }
        let horizon = self.scrapes.saturating_sub(u64::from(self.stale_after));
        let dropped = self.index.remove_where(|s| s.last_seen <= horizon);
        if dropped > 0 {
            // Their slots will be reused: forget which positions pointed where.
            self.positions.clear();
            report.dropped_stale += dropped;
        }
    }
}

/// One page being ingested: what the parser reports goes to the tracker. Lines whose name
/// and labels begin as they did at the same position last time are recognised before they
/// are parsed (`PositionCache::known_prefix`): only their value is read.
struct Ingest<'t, 'page> {
    tracker: &'t mut Tracker,
    family: Option<(&'page str, MetricType)>,
    /// The number of the next sample on the page.
    position: usize,
    at_ms: i64,
    report: IngestReport,
    /// What the line `known_prefix` just recognised is, and its key.
    known: Option<(Target, &'page str)>,
    /// The key of the last anchor position on this page (the position cache codes keys
    /// against their anchor's).
    anchor_key: &'page str,
    /// New untyped `_count` and `_sum` series recorded as gauges because their family was
    /// not known when they were read: decided when the page is done (the family's
    /// `_bucket` or `quantile` series may come further down).
    undecided: Vec<usize>,
    /// The first error over one of the parser's limits: the page is refused.
    limit_error: Option<ParseError>,
    /// Fingerprints of the new series past `max_series` (not created): the page is refused.
    over_limit: HashSet<u64>,
}

impl<'page> Ingest<'_, 'page> {
    /// Records a parsed sample: what it is comes from the position cache, or is resolved
    /// and remembered.
    fn record(&mut self, sample: &Sample<'page>) {
        let (key, line_start) = sample.identity();
        let insertions = self.tracker.insertions;
        let anchor = self.anchor_key;
        let target = match self
            .tracker
            .positions
            .lookup(self.position, key, anchor, insertions)
        {
            Some(target) => target,
            None => {
                let target = self.resolve(sample);
                let insertions = self.tracker.insertions;
                self.tracker
                    .positions
                    .store(self.position, key, anchor, line_start, target, insertions);
                target
            }
        };
        if self.tracker.positions.is_anchor(self.position) {
            self.anchor_key = key;
        }
        let at_ms = sample.timestamp_ms().unwrap_or(self.at_ms);
        self.tracker
            .apply(target, at_ms, sample.value(), &mut self.report);
    }

    /// Finds (or creates) what a sample at a new position is.
    fn resolve(&mut self, sample: &Sample<'_>) -> Target {
        let tracker = &mut *self.tracker;
        let normalize = tracker.index.normalize_names();
        if let Some(known) = &mut tracker.known_families {
            known.learn(sample, normalize);
        }
        let role = roles::role(sample, self.family, tracker.rules());
        if role == Role::Created {
            let Some(prefix) = sample.name().strip_suffix("_created") else {
                return Target::Ignored;
            };
            let mut slots = [None; 3];
            for (slot, suffix) in slots.iter_mut().zip(["_total", "_count", "_sum"]) {
                *slot = tracker.index.find_parsed(&[prefix, suffix], sample.labels());
            }
            return Target::Created(slots);
        }
        if !tracker.selected(sample, self.family) {
            return Target::Ignored;
        }
        if let Some(slot) = tracker.index.find_parsed(&[sample.name()], sample.labels()) {
            return Target::Series(slot);
        }
        if tracker.holding && tracker.index.len() >= tracker.max_series {
            // Past the limit: counted, not created (the page will be refused).
            self.over_limit.insert(tracker.index.fingerprint_of(sample));
            return Target::Ignored;
        }
        let undecided = role == Role::Gauge
            && tracker.known_families.is_some()
            && roles::may_belong_to_a_family(sample.name());
        self.report.new_series += 1;
        tracker.touched += 1;
        let slot = tracker.insert(sample, role);
        if undecided {
            self.undecided.push(slot);
        }
        Target::Series(slot)
    }
}

impl<'page> KnownLines<'page> for Ingest<'_, 'page> {
    #[inline]
    fn known_prefix(&mut self, line: &'page str) -> Option<usize> {
        if !self.tracker.recognise_lines {
            return None;
        }
        let (len, target) = self.tracker.positions.known_prefix(
            self.position,
            line,
            self.anchor_key,
            self.tracker.insertions,
        )?;
        self.known = Some((target, &line[..len]));
        Some(len)
    }

    #[inline]
    fn known_sample(&mut self, value: f64, timestamp_ms: Option<i64>) {
        if let Some((target, key)) = self.known.take() {
            if self.tracker.positions.is_anchor(self.position) {
                self.anchor_key = key;
            }
            self.tracker.apply(
                target,
                timestamp_ms.unwrap_or(self.at_ms),
                value,
                &mut self.report,
            );
        }
        self.position += 1;
    }
}

impl<'page> Visitor<'page> for Ingest<'_, 'page> {
    #[inline]
    fn entry(&mut self, entry: Result<&Entry<'page>, &ParseError>) {
        // A line `known_prefix` recognised but the parser then read in full (an unusual
        // value) arrives here: it is looked up again.
        self.known = None;
        match entry {
            Ok(Entry::Type { name, kind }) => self.family = Some((name, *kind)),
            Ok(Entry::Sample(sample)) => {
                self.record(sample);
                self.position += 1;
            }
            Ok(_) => {}
            Err(e) => {
                if e.kind.is_limit() && self.limit_error.is_none() {
                    self.limit_error = Some(e.clone());
                }
                self.report.bad_lines += 1;
                if self.report.first_error.is_none() {
                    self.report.first_error = Some(e.clone());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;

/// A counter series with the tracker's settings (a function of the fields, not of the
/// tracker, so that it can be called while the index is borrowed).
fn new_counter(retention: TimeDelta, tau: TimeDelta, gap: Option<TimeDelta>) -> CounterSeries {
    let mut counter = CounterSeries::new(retention);
    counter.ewma_time_constant(tau);
    if let Some(gap) = gap {
        counter.ewma_restart_after(gap);
    }
    counter
}
