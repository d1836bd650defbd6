//! Reading one page into the tracker: the visitor the parser reports to, the position
//! cache's known lines, and the transaction that holds a page back until it is known to
//! fit the limits (a refused page changes nothing).

use std::collections::HashSet;

use chrono::{DateTime, TimeDelta, Utc};

use super::index::NewIdentity;
use super::positions::{CreatedFor, Target};
use super::roles::{self, Role};
use super::{IngestReport, ResetEvent, SeriesData, TrackedSeries, Tracker};
use crate::error::{IngestError, ParseError, ParseErrorKind, Refusal, SeriesError};
use crate::promql::millis_to_time;
use crate::text::limits::Limits;
use crate::text::parser::{KnownLines, Visitor};
use crate::text::{Entry, MetricType, Parser, Sample};

mod composite;
mod pushes;

pub(super) use pushes::Pending;

/// A sample recorded while the page is held back (see `Tracker::holding`): 16 bytes. Its
/// time is the run's it falls in (`Tracker::held_times`): samples of one page share a few
/// times (the page's, or each target's on a `/federate` page).
#[derive(Debug, Clone, Copy)]
pub(super) struct Held {
    value: f64,
    target: HeldTarget,
    /// Where its text starts in the page (a refusal names its line).
    offset: u32,
}

/// Where a held-back sample goes (not selected ones are not held), in 4 bytes: the kind
/// in the top two bits, an index below: a series' slot, an entry of the tracker's start
/// times, an index into `Tracker::held_created`, or (past 2^30) into `Tracker::held_wide`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct HeldTarget(u32);

impl HeldTarget {
    const INDEX: u32 = (1 << 30) - 1;
    const START: u32 = 1 << 30;
    const CREATED: u32 = 2 << 30;
    const WIDE: u32 = 3 << 30;

    /// `target` as held (`created`: its index in `Tracker::held_created`), if its index
    /// fits.
    fn new(target: Target, created: usize) -> Option<Self> {
        let (kind, index) = match target {
            Target::Series(slot) => (0, slot),
            Target::Start(i) => (Self::START, i),
            Target::Created(_) => (Self::CREATED, created),
            Target::Ignored | Target::Composite(_) => return None,
        };
        let index = u32::try_from(index).ok().filter(|i| *i <= Self::INDEX)?;
        Some(HeldTarget(kind | index))
    }

    fn wide(i: usize) -> Self {
        HeldTarget(Self::WIDE | u32::try_from(i).unwrap_or(Self::INDEX).min(Self::INDEX))
    }

    /// The series' slot, for a series held by its slot.
    fn slot(self) -> Option<usize> {
        (self.0 & !Self::INDEX == 0).then_some(self.0 as usize)
    }

    fn target(self, held_created: &[CreatedFor], held_wide: &[Target]) -> Target {
        let index = (self.0 & Self::INDEX) as usize;
        match self.0 & !Self::INDEX {
            0 => Target::Series(index),
            Self::START => Target::Start(index),
            Self::CREATED => held_created
                .get(index)
                .map_or(Target::Ignored, |created| Target::Created(*created)),
            _ => held_wide.get(index).copied().unwrap_or(Target::Ignored),
        }
    }
}

/// Where `part` (a slice of `page`) starts in it.
fn offset_in(page: &str, part: &str) -> usize {
    (part.as_ptr() as usize).saturating_sub(page.as_ptr() as usize)
}

/// The 1-based line of the byte at `offset`.
fn line_of(text: &str, offset: usize) -> usize {
    memchr::memchr_iter(b'\n', &text.as_bytes()[..offset.min(text.len())]).count() + 1
}

impl Tracker {
    /// Parses `text` (a whole scrape taken at `at`) and records every matching sample.
    /// Samples with their own timestamp are recorded at it. Bad lines are counted and the
    /// first is reported; the rest of the page is still used. To read a page as it
    /// arrives, without holding it whole: [`Tracker::ingest_chunks`],
    /// [`Tracker::ingest_reader`].
    ///
    /// # Errors
    /// Nothing is recorded when the scrape is refused: [`IngestError::NotAfterLast`] if `at`
    /// is not after the previous scrape; [`IngestError::Limit`] if the page is over a limit
    /// of the [`Tracker::parser`] (as Prometheus fails such a scrape whole);
    /// [`IngestError::SeriesLimit`] if it would go past [`Tracker::max_series`].
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// let at = chrono::DateTime::from_timestamp(5, 0).unwrap();
    /// t.ingest("a_total 1\n", at)?;
    /// assert!(matches!(t.ingest("a_total 2\n", at), Err(promrate::IngestError::NotAfterLast { .. })));
    /// assert_eq!(t.scrapes(), 1);
    /// # Ok::<(), promrate::IngestError>(())
    /// ```
    pub fn ingest(&mut self, text: &str, at: DateTime<Utc>) -> Result<IngestReport, IngestError> {
        // Where a limit could refuse the page, what it records is held back until the page
        // is read: one pass either way.
        let holding = self.parser.limits() != Limits::NONE || !self.within_series_bound(text);
        let mut read = self.begin_page(at, holding, false)?;
        let parser = self.parser;
        self.read_lines(&mut read, &mut Carried::default(), text, parser, false);
        self.finish_page(read, Some(text))
    }

    /// Checks `at` and starts a page: what [`Tracker::read_lines`] and
    /// [`Tracker::finish_page`] share (`streaming`: the page comes in batches of lines,
    /// whose text is gone when the page is finished).
    pub(super) fn begin_page(
        &mut self,
        at: DateTime<Utc>,
        holding: bool,
        streaming: bool,
    ) -> Result<PageRead, IngestError> {
        let at_ms = at.timestamp_millis();
        self.check_after_last(at)?;
        self.holding = holding;
        self.held.clear();
        self.held_times.clear();
        self.held_wide.clear();
        self.held_created.clear();
        self.pending_created.clear();
        self.returning.clear();
        let before = (self.scrapes, self.last_at_ms);
        self.last_at_ms = Some(at_ms);
        self.scrapes += 1;
        self.touched = 0;
        Ok(PageRead {
            at_ms,
            before,
            streaming,
            ignore_own_times: !self.honor_timestamps,
            sample_limit: usize::MAX,
            ..PageRead::default()
        })
    }

    /// [`IngestError::NotAfterLast`] unless `at` is after the last scrape.
    pub(super) fn check_after_last(&self, at: DateTime<Utc>) -> Result<(), IngestError> {
        match self.last_at_ms {
            // Both to the millisecond, as they are compared: a refused `at` a few
            // microseconds after `last` would read as if it were after it.
            Some(last_ms) if at.timestamp_millis() <= last_ms => Err(IngestError::NotAfterLast {
                at: millis_to_time(at.timestamp_millis()),
                last: millis_to_time(last_ms),
            }),
            _ => Ok(()),
        }
    }

    /// Reads whole lines of the page (`batch` ends with a newline, or ends the page), the
    /// page's earlier lines' state in `read` and `carried`; `carry` copies what the next
    /// batch needs of this one's text into `carried`.
    pub(super) fn read_lines(
        &mut self,
        read: &mut PageRead,
        carried: &mut Carried,
        batch: &str,
        parser: Parser,
        carry: bool,
    ) {
        let refused_before = read.report.first_refused.is_some();
        let held_before = self.held.len();
        let (anchor, family) = {
            let mut ingest = Ingest {
                tracker: self,
                family: carried.family(),
                anchor_key: &carried.anchor_key,
                read: &mut *read,
                page: batch,
                known: None,
                last_name: "",
            };
            parser
                .parse(batch)
                .after_page_end(ingest.read.ended)
                .visit(&mut ingest);
            ingest.tracker.push_pending(&mut ingest.read.report);
            let family = ingest.family.map(|(name, kind)| (range_in(batch, name), kind));
            (range_in(batch, ingest.anchor_key), family)
        };
        if !refused_before && !self.holding {
            if let Some(refusal) = &mut read.report.first_refused {
                // Until now the byte offset of its sample in the page.
                refusal.line = read.lines_before + line_of(batch, refusal.line - read.bytes_before);
            }
        }
        if read.streaming && self.holding {
            // The batch's text is gone when the held samples are applied: their lines now.
            held_lines(
                &mut self.held[held_before..],
                batch,
                read.bytes_before,
                read.lines_before,
            );
        }
        if let Some(at) = read.over_sample_limit_at {
            if read.sample_limit_line == 0 {
                // The sample over the limit was on this batch: the page ends there.
                read.sample_limit_line = read.lines_before + line_of(batch, at - read.bytes_before);
                let rest = batch
                    .get(at - read.bytes_before..)
                    .and_then(|rest| rest.split_once('\n'))
                    .map_or("", |(_, rest)| rest);
                read.samples += sample_lines(rest);
            }
        }
        if carry {
            if let Some(range) = anchor {
                carried.anchor_key.clear();
                carried.anchor_key.push_str(&batch[range]);
            }
            match family {
                Some((Some(range), kind)) => {
                    carried.family_name.clear();
                    carried.family_name.push_str(&batch[range]);
                    carried.family_kind = Some(kind);
                }
                Some((None, _)) => {}
                None => carried.family_kind = None,
            }
        }
        if read.streaming {
            read.bytes_before += batch.len();
            read.lines_before += memchr::memchr_iter(b'\n', batch.as_bytes()).count();
        }
    }

    /// Ends a page read by [`Tracker::read_lines`]: refuses it whole (over a limit), or
    /// applies what was held back, decides roles, start times and staleness. `page` is the
    /// whole page when it was read in one batch (its refusals' lines are counted in it).
    pub(super) fn finish_page(
        &mut self,
        read: PageRead,
        page: Option<&str>,
    ) -> Result<IngestReport, IngestError> {
        let PageRead {
            mut report,
            undecided,
            mut limit_error,
            over_limit,
            position: samples_on_page,
            before,
            farthest_own_ms,
            ..
        } = read;
        report.timestamp_skew = (farthest_own_ms != 0).then(|| TimeDelta::milliseconds(farthest_own_ms));
        if read.over_sample_limit_at.is_some() {
            let kind = ParseErrorKind::SampleLimit {
                limit: read.sample_limit,
                samples: read.samples,
            };
            let error = ParseError::new(read.sample_limit_line, 1, kind);
            report.bad_lines += 1;
            report.first_error.get_or_insert_with(|| error.clone());
            limit_error.get_or_insert(error);
        }
        let refusal = match limit_error {
            Some(error) => Some(IngestError::Limit(error)),
            None if !over_limit.is_empty() => Some(IngestError::SeriesLimit {
                limit: self.max_series,
                series: self.index.len() + over_limit.len(),
            }),
            None => None,
        };
        if let Some(refusal) = refusal {
            self.forget_page(before);
            return Err(refusal);
        }
        if let Some(known) = &mut self.known_families {
            known.keep_page();
        }
        if std::mem::take(&mut self.holding) {
            let refused_before = report.first_refused.is_some();
            let mut held = std::mem::take(&mut self.held);
            let times = std::mem::take(&mut self.held_times);
            let mut run = 0;
            for (first, batch) in (0..).step_by(pushes::BATCH).zip(held.chunks(pushes::BATCH)) {
                self.load_push_lines(batch.iter().filter_map(|h| h.target.slot()));
                for (i, h) in (first..).zip(batch) {
                    while times.get(run + 1).is_some_and(|&(from, _)| from as usize <= i) {
                        run += 1;
                    }
                    let at_ms = times.get(run).map_or(read.at_ms, |&(_, at_ms)| at_ms);
                    let target = h.target.target(&self.held_created, &self.held_wide);
                    self.apply_now(target, at_ms, h.value, h.offset as usize, &mut report);
                }
            }
            held.clear();
            self.held = held;
            self.held_times = times;
            self.held_times.clear();
            if let (false, Some(refusal), Some(text)) = (refused_before, &mut report.first_refused, page) {
                // Until now the byte offset of its sample: lines are counted once, for it
                // (a page read in batches gave its held samples their lines already).
                refusal.line = line_of(text, refusal.line);
            }
        }
        self.pending_created.clear();
        self.decide_roles(&undecided);
        self.apply_start_times(read.at_ms, &mut report);
        self.drop_stale(&mut report);
        self.let_go_of_gone_targets(read.at_ms);
        if report.new_series == 0 {
            // Growth has stopped: its unused room goes (once; a page adding series grows
            // the columns again by doubling).
            self.index.settle();
            self.positions.settle();
        }
        if samples_on_page > 0 && !self.selectors.is_empty() {
            report.unmatched = self.unmatched(page);
        }
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
    pub(super) fn forget_page(&mut self, (scrapes, last_at_ms): (u64, Option<i64>)) {
        let this_scrape = self.scrapes;
        self.index.remove_where(|s| s.last_seen == this_scrape);
        self.page_names.forget_scrape(this_scrape);
        self.positions.clear();
        self.held.clear();
        self.held_times.clear();
        self.held_wide.clear();
        self.pending.clear();
        self.pending_created.clear();
        self.returning.clear();
        self.holding = false;
        self.scrapes = scrapes;
        self.last_at_ms = last_at_ms;
        if let Some(known) = &mut self.known_families {
            known.forget_page();
        }
        self.starts.forget_page(&self.index);
    }

    /// Makes counters of the `undecided` series whose family the page turned out to have
    /// (untyped `_count` and `_sum` read before their histogram's `_bucket`).
    fn decide_roles(&mut self, undecided: &[usize]) {
        let Some(known) = &self.known_families else {
            return;
        };
        let normalize = self.index.normalize_names();
        let new_series = self.new_series();
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
            let mut counter = new_series.counter();
            // The page's point (a gauge accepts what a counter refuses: such a series stays
            // a gauge).
            if gauge
                .points()
                .iter()
                .all(|p| counter.push_ms(p.timestamp_ms, p.value, None, None).is_ok())
            {
                series.data = SeriesData::Counter(counter);
            }
        }
    }

    /// Whether a selector picks the sample, or the histogram or summary it is part of
    /// ([`Selector::matches_family`]: a selector names a histogram as PromQL users do, `x`
    /// for `x_bucket`, `x_sum` and `x_count`).
    fn selected(&self, sample: &Sample<'_>) -> bool {
        self.selectors.is_empty() || self.selectors.iter().any(|s| s.matches_family(sample))
    }

    /// Records a sample's value at `at_ms` where `target` says (or holds it back, see
    /// `Tracker::holding`).
    #[inline]
    fn apply(&mut self, target: Target, at_ms: i64, value: f64, offset: usize, report: &mut IngestReport) {
        if self.holding {
            let created = match target {
                // A composite value is recorded by its parts (`composite.rs`).
                Target::Ignored | Target::Composite(_) => return,
                Target::Created(slots) => {
                    self.held_created.push(slots);
                    self.held_created.len() - 1
                }
                Target::Series(_) | Target::Start(_) => 0,
            };
            let target = HeldTarget::new(target, created).unwrap_or_else(|| {
                // Past 2^30 (a tracker that large needs hundreds of gigabytes): aside.
                self.held_wide.push(target);
                HeldTarget::wide(self.held_wide.len() - 1)
            });
            if self.held_times.last().is_none_or(|&(_, run_ms)| run_ms != at_ms) {
                let from = u32::try_from(self.held.len()).unwrap_or(u32::MAX);
                self.held_times.push((from, at_ms));
            }
            let offset = u32::try_from(offset).unwrap_or(u32::MAX);
            self.held.push(Held {
                value,
                target,
                offset,
            });
        } else if let Target::Series(slot) = target {
            let pending = Pending {
                slot,
                at_ms,
                value,
                offset,
            };
            self.push_later(pending, report);
        } else {
            self.push_pending(report);
            self.apply_now(target, at_ms, value, offset, report);
        }
    }

    #[inline]
    fn apply_now(
        &mut self,
        target: Target,
        at_ms: i64,
        value: f64,
        offset: usize,
        report: &mut IngestReport,
    ) {
        match target {
            Target::Ignored | Target::Composite(_) => {}
            Target::Series(slot) => self.push(slot, at_ms, value, offset, report),
            Target::Start(i) => self.starts.read(i, self.scrapes, value),
            Target::Created(created) => {
                let created_ms = (value * 1000.0).round() as i64;
                if created_ms == 0 {
                    // No time: a start of 0 is unknown, as Prometheus reads it.
                    return;
                }
                for slot in created.series.into_iter().flatten() {
                    self.set_created(slot as usize, created_ms, report);
                }
                if let Some(group) = created.buckets {
                    for i in 0..self.index.bucket_slots(group).len() {
                        let slot = self.index.bucket_slots(group)[i];
                        self.set_created(slot as usize, created_ms, report);
                    }
                }
            }
        }
    }

    /// Records a point of the series in `slot`, read at byte `offset` of the page.
    fn push(&mut self, slot: usize, at_ms: i64, value: f64, offset: usize, report: &mut IngestReport) {
        let scrapes = self.scrapes;
        // A `_created` time read before the point (a page that prints `x_created` first).
        let created_ms = if self.pending_created.is_empty() {
            None
        } else {
            self.pending_created.remove(&slot)
        };
        let Some(series) = self.index.get_mut(slot) else {
            return;
        };
        // Seen already in this scrape: a second sample of the series in the page.
        let again = series.last_seen == scrapes && series.has_point_at(at_ms);
        if series.last_seen != scrapes {
            if series.last_seen + 1 < scrapes && matches!(series.data, SeriesData::Counter(_)) {
                self.returning.push(slot);
            }
            series.last_seen = scrapes;
            self.touched += 1;
        }
        let newest = match &series.data {
            SeriesData::Counter(c) => c.last(),
            SeriesData::Gauge(g) => g.last(),
        };
        if newest.is_some_and(|p| p.timestamp_ms >= at_ms) && series.has_point(at_ms, value) {
            // The same point served again: its created time, if any, was already applied.
            report.repeated += 1;
            return;
        }
        let skew_ms = self.start_time_skew_ms;
        let outcome = match &mut series.data {
            SeriesData::Counter(c) => c.push_ms(at_ms, value, created_ms, skew_ms),
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
                let error = match error {
                    SeriesError::NotAfterLast { at, .. } if again => SeriesError::Duplicate { at },
                    error => error,
                };
                report.refused += 1;
                if report.first_refused.is_none() {
                    report.first_refused = Some(Refusal {
                        name: series.name.to_string(),
                        labels: series.owned_labels(),
                        // The line is counted when the page is read (`Tracker::ingest`).
                        line: offset,
                        error,
                    });
                }
            }
        }
    }

    /// A `_created` time for the counter in `slot`: its newest point's if this scrape
    /// already recorded it, else the point this scrape is about to record.
    fn set_created(&mut self, slot: usize, created_ms: i64, report: &mut IngestReport) {
        let (scrapes, skew_ms) = (self.scrapes, self.start_time_skew_ms);
        let Some(series) = self.index.get_mut(slot) else {
            return;
        };
        let SeriesData::Counter(counter) = &mut series.data else {
            return;
        };
        if series.last_seen != scrapes {
            self.pending_created.insert(slot, created_ms);
            return;
        }
        if let Some(cause) = counter.amend_created_ms(created_ms, skew_ms) {
            report.resets.push(ResetEvent {
                name: series.name.to_string(),
                labels: series.owned_labels(),
                cause,
            });
        }
    }

    /// A new series for `sample`, whose fingerprints `lookup_parsed` found (`new`).
    fn insert(&mut self, sample: &Sample<'_>, name: &str, role: Role, new: &NewIdentity<'_>) -> usize {
        let (name, labels, name_id) = self.index.identity_and_name(name, &new.labels, new.plain);
        let data = match role {
            Role::Counter => SeriesData::Counter(self.new_series().counter()),
            Role::Gauge | Role::Created => SeriesData::Gauge(self.new_series().gauge()),
        };
        self.insertions += 1;
        let series = TrackedSeries {
            name,
            labels,
            data,
            last_seen: self.scrapes,
        };
        let slot = self.index.insert_fingerprinted(series, new.key, name_id);
        if self.starts.is_gauge(sample.name()) {
            if let Some(series) = self.index.get(slot) {
                self.starts.register(slot, series, self.scrapes);
            }
        }
        slot
    }

    fn drop_stale(&mut self, report: &mut IngestReport) {
        if self.touched == self.index.len() {
            return;
        }
        let horizon = self.scrapes.saturating_sub(u64::from(self.stale_after));
        let retired = &mut report.retired;
        let dropped = self.index.remove_where(|s| {
            let stale = s.last_seen <= horizon;
            if let Some(counter) = s.counter().filter(|c| stale && c.total_increase() != 0.0) {
                retired.push(super::report::Retired {
                    name: s.name().to_string(),
                    labels: s.owned_labels(),
                    total_increase: counter.total_increase(),
                });
            }
            stale
        });
        if dropped > 0 {
            // Their slots will be reused: forget which positions pointed where.
            self.positions.clear();
            report.dropped_stale += dropped;
        }
    }
}

/// What a page being read keeps from one batch of its lines to the next (nothing in it
/// borrows the page: a chunk's text is gone when the next arrives).
#[derive(Debug, Default)]
pub(super) struct PageRead {
    /// The number of the next sample on the page.
    position: usize,
    at_ms: i64,
    /// The scrape count and time before this page (a refused page restores them).
    pub before: (u64, Option<i64>),
    pub report: IngestReport,
    /// New untyped `_count` and `_sum` series recorded as gauges because their family was
    /// not known when they were read: decided when the page is done (the family's
    /// `_bucket` or `quantile` series may come further down).
    undecided: Vec<usize>,
    /// The first error over one of the parser's limits: the page is refused.
    limit_error: Option<ParseError>,
    /// Fingerprints of the new series past `max_series` (not created): the page is refused.
    over_limit: HashSet<u64>,
    /// Read in batches whose text is gone by the end (`chunks.rs`): line numbers are
    /// counted as the batches pass, and the page's metric names are gathered for the
    /// unmatched-selector report.
    streaming: bool,
    /// Bytes and lines of the page in the batches before the current one (streaming).
    pub bytes_before: usize,
    pub lines_before: usize,
    /// The parser's `sample_limit`, applied here when the page comes in batches (each
    /// batch is parsed on its own): samples so far, and where the first sample over it
    /// was (its byte offset in the page), after which the page's sample lines are only
    /// counted, as the parser counts them.
    pub sample_limit: usize,
    pub samples: usize,
    pub over_sample_limit_at: Option<usize>,
    sample_limit_line: usize,
    /// Of the samples with a timestamp of their own, the farthest from the page's time
    /// (theirs less the page's, ms; 0 for none): [`IngestReport::timestamp_skew`].
    farthest_own_ms: i64,
    /// [`Tracker::honor_timestamps`] is off: every sample is recorded at the page's time.
    ignore_own_times: bool,
    /// An OpenMetrics `# EOF` was read: the lines of later batches are after the page's
    /// end.
    ended: bool,
}

impl PageRead {
    /// The time a sample is recorded at: its own timestamp, or the page's.
    #[inline]
    pub(super) fn time_of(&mut self, timestamp_ms: Option<i64>) -> i64 {
        let Some(own) = timestamp_ms else {
            return self.at_ms;
        };
        let offset = own.saturating_sub(self.at_ms);
        if offset.unsigned_abs() > self.farthest_own_ms.unsigned_abs() {
            self.farthest_own_ms = offset;
        }
        if self.ignore_own_times {
            return self.at_ms;
        }
        own
    }

    /// Whether the page is over the sample limit (the rest is only counted).
    pub fn past_sample_limit(&self) -> bool {
        self.over_sample_limit_at.is_some()
    }
}

/// What the next batch of a page's lines needs of the batches before it, copied out of
/// their text when each batch ends: the last `# TYPE` line's family, and the position
/// cache's anchor key. Kept by the tracker between pages, so its buffers are reused.
#[derive(Debug, Clone, Default)]
pub(super) struct Carried {
    family_name: String,
    family_kind: Option<MetricType>,
    anchor_key: String,
}

impl Carried {
    fn family(&self) -> Option<(&str, MetricType)> {
        self.family_kind.map(|kind| (self.family_name.as_str(), kind))
    }

    /// Forgets the last page's (a new page starts with no family and no anchor).
    pub fn clear(&mut self) {
        self.family_name.clear();
        self.family_kind = None;
        self.anchor_key.clear();
    }
}

/// Where `part` lies in `text`, if it is a slice of it.
fn range_in(text: &str, part: &str) -> Option<std::ops::Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    (start + part.len() <= text.len()).then_some(start..start + part.len())
}

/// Gives the samples held back from one batch (by their byte offsets in the page, in
/// order) their line numbers instead: one scan of the batch.
fn held_lines(held: &mut [Held], batch: &str, bytes_before: usize, lines_before: usize) {
    let mut newlines = memchr::memchr_iter(b'\n', batch.as_bytes()).peekable();
    let mut line = lines_before + 1;
    for h in held {
        let offset = (h.offset as usize).saturating_sub(bytes_before);
        while newlines.next_if(|&n| n < offset).is_some() {
            line += 1;
        }
        h.offset = u32::try_from(line).unwrap_or(u32::MAX);
    }
}

/// The sample lines of `text` as the parser counts them past its sample limit: lines
/// neither blank nor comments, unparsed.
pub(super) fn sample_lines(text: &str) -> usize {
    text.split('\n')
        .filter(|line| {
            !matches!(
                line.trim_start_matches([' ', '\t', '\r']).as_bytes().first(),
                None | Some(b'#')
            )
        })
        .count()
}

/// One batch of a page's lines being ingested: what the parser reports goes to the
/// tracker. Lines whose name and labels begin as they did at the same position last time
/// are recognised before they are parsed (`PositionCache::known_prefix`): only their value
/// is read.
pub(super) struct Ingest<'t, 'page> {
    tracker: &'t mut Tracker,
    /// The page's state across batches.
    read: &'t mut PageRead,
    /// The batch (refusals are located by their text's place in it).
    page: &'page str,
    family: Option<(&'page str, MetricType)>,
    /// What the line `known_prefix` just recognised is, and its key.
    known: Option<(Target, &'page str)>,
    /// The key of the last anchor position on this page (the position cache codes keys
    /// against their anchor's).
    anchor_key: &'page str,
    /// The metric name last gathered for the unmatched report (streaming).
    last_name: &'page str,
}

impl<'page> Ingest<'_, 'page> {
    /// The byte offset of `part` (a slice of the batch) in the page.
    fn offset_of(&self, part: &str) -> usize {
        self.read.bytes_before + offset_in(self.page, part)
    }

    /// Counts a sample against the sample limit when the page comes in batches (the
    /// parser counts it otherwise); false past it.
    #[inline]
    fn within_sample_limit(&mut self, key: &str) -> bool {
        if self.read.sample_limit == usize::MAX {
            return true;
        }
        self.read.samples += 1;
        if self.read.samples <= self.read.sample_limit {
            return true;
        }
        self.read.over_sample_limit_at = Some(self.offset_of(key));
        false
    }

    /// Remembers a metric name of the page (streaming: the unmatched report cannot read
    /// the page again).
    #[inline]
    fn gather_name(&mut self, name: &'page str) {
        if self.read.streaming && name != self.last_name && !self.tracker.selectors.is_empty() {
            self.last_name = name;
            self.tracker.page_names.saw(name, self.tracker.scrapes);
        }
    }

    /// Records a parsed sample: what it is comes from the position cache, or is resolved
    /// and remembered.
    fn record(&mut self, sample: &Sample<'page>) {
        if let Some(value) = sample.composite() {
            return self.record_composite(sample, value);
        }
        let (key, line_start) = sample.identity();
        if !self.within_sample_limit(key) {
            return;
        }
        self.gather_name(sample.name());
        let insertions = self.tracker.insertions;
        let anchor = self.anchor_key;
        let target = match self
            .tracker
            .positions
            .lookup(self.read.position, key, anchor, insertions)
        {
            Some(target) => target,
            None => {
                let target = self.resolve(sample);
                let insertions = self.tracker.insertions;
                self.tracker
                    .positions
                    .store(self.read.position, key, anchor, line_start, target, insertions);
                target
            }
        };
        if self.tracker.positions.is_anchor(self.read.position) {
            self.anchor_key = key;
        }
        let at_ms = self.read.time_of(sample.timestamp_ms());
        let offset = self.offset_of(key);
        self.tracker
            .apply(target, at_ms, sample.value(), offset, &mut self.read.report);
        // OpenMetrics 2.0's start timestamp is the series' created time, as a `_created`
        // sample right after it is.
        if let (Target::Series(slot), Some(start_ms)) = (target, sample.start_timestamp_ms()) {
            let created = Target::Created(CreatedFor::one(slot));
            let start_seconds = start_ms as f64 / 1000.0;
            self.tracker
                .apply(created, at_ms, start_seconds, offset, &mut self.read.report);
        }
        self.read.position += 1;
    }

    /// Finds (or creates) what a sample at a new position is.
    fn resolve(&mut self, sample: &Sample<'_>) -> Target {
        let tracker = &mut *self.tracker;
        let normalize = tracker.index.normalize_names();
        if let Some(known) = &mut tracker.known_families {
            known.learn(sample, normalize);
        }
        let role = roles::role(sample, self.family, tracker.rules());
        // A series is known by its name as selectors and `Tracker::get` spell it: a quoted
        // name's escapes (`{"my\\"name"}`) resolved.
        let name = sample.name_unescaped();
        if role == Role::Created {
            let Some(prefix) = name.strip_suffix("_created") else {
                return Target::Ignored;
            };
            let mut series = [None; 3];
            for (slot, suffix) in series.iter_mut().zip(["_total", "_count", "_sum"]) {
                *slot = tracker.index.find_parsed(&[prefix, suffix], sample.labels());
            }
            let series = series.map(|slot| slot.and_then(|s| u32::try_from(s).ok()));
            let buckets = tracker.index.bucket_group(prefix, sample.labels());
            return Target::Created(CreatedFor { series, buckets });
        }
        if !tracker.selected(sample) {
            if tracker.starts.is_gauge(sample.name()) {
                return Target::Start(tracker.starts.entry_for(sample, tracker.scrapes));
            }
            return Target::Ignored;
        }
        let mut new = NewIdentity::default();
        if let Some(slot) = tracker.index.lookup_parsed(&name, sample.labels(), &mut new) {
            return Target::Series(slot);
        }
        if tracker.holding && tracker.index.len() >= tracker.max_series {
            // Past the limit: counted, not created (the page will be refused).
            self.read.over_limit.insert(new.key);
            return Target::Ignored;
        }
        let undecided = role == Role::Gauge
            && tracker.known_families.is_some()
            && roles::may_belong_to_a_family(sample.name());
        self.read.report.new_series += 1;
        tracker.touched += 1;
        let slot = tracker.insert(sample, &name, role, &new);
        if undecided {
            self.read.undecided.push(slot);
        }
        Target::Series(slot)
    }
}

/// The metric name a known line's key begins with, if it is written plainly (a quoted
/// name, `{"x.y",...}`, is not read from a key).
fn plain_name(key: &str) -> Option<&str> {
    if key.starts_with('{') {
        return None;
    }
    let end = key.find(['{', ' ', '\t']).unwrap_or(key.len());
    Some(&key[..end])
}

impl<'page> KnownLines<'page> for Ingest<'_, 'page> {
    #[inline]
    fn known_prefix(&mut self, line: &'page str) -> Option<usize> {
        if !self.tracker.recognise_lines || self.read.past_sample_limit() {
            return None;
        }
        let (len, target) = self.tracker.positions.known_prefix(
            self.read.position,
            line,
            self.anchor_key,
            self.tracker.insertions,
        )?;
        if let Target::Composite(_) = target {
            // Its value is not a number: the line is parsed in full.
            return None;
        }
        let key = &line[..len];
        if self.read.streaming && key.starts_with('{') && !self.tracker.selectors.is_empty() {
            // A quoted name: parsed in full, so that its name is gathered.
            return None;
        }
        self.known = Some((target, key));
        Some(len)
    }

    #[inline]
    fn known_sample(&mut self, value: f64, timestamp_ms: Option<i64>) {
        if let Some((target, key)) = self.known.take() {
            if !self.within_sample_limit(key) {
                return;
            }
            if self.read.streaming && !self.tracker.selectors.is_empty() {
                if let Some(name) = plain_name(key) {
                    self.gather_name(name);
                }
            }
            if self.tracker.positions.is_anchor(self.read.position) {
                self.anchor_key = key;
            }
            let offset = self.offset_of(key);
            let at_ms = self.read.time_of(timestamp_ms);
            self.tracker
                .apply(target, at_ms, value, offset, &mut self.read.report);
        }
        self.read.position += 1;
    }
}

impl<'page> Visitor<'page> for Ingest<'_, 'page> {
    #[inline]
    fn entry(&mut self, entry: Result<&Entry<'page>, &ParseError>) {
        // A line `known_prefix` recognised but the parser then read in full (an unusual
        // value) arrives here: it is looked up again.
        self.known = None;
        if self.read.past_sample_limit() {
            // The page ends at the sample over the limit (its other lines are counted).
            return;
        }
        match entry {
            Ok(Entry::Type { name, kind }) => self.family = Some((name, *kind)),
            Ok(Entry::Eof) => self.read.ended = true,
            Ok(Entry::Sample(sample)) => self.record(sample),
            Ok(_) => {}
            Err(e) => {
                // Its line in the page (the parser counts the batch's).
                let lines_before = self.read.lines_before;
                let located = || ParseError::new(e.line + lines_before, e.column, e.kind.clone());
                if e.kind.is_limit() && self.read.limit_error.is_none() {
                    self.read.limit_error = Some(located());
                }
                self.read.report.bad_lines += 1;
                if self.read.report.first_error.is_none() {
                    self.read.report.first_error = Some(located());
                }
            }
        }
    }
}
