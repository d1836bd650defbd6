//! One live counter: restarts, retention, created times, EWMA. PromQL's functions over its
//! points are in `counter/promql_functions.rs`, the increase over a window between two of
//! its points in `counter/window_increase.rs`; its storage is in `points.rs` and
//! `created.rs`.

use std::cell::Cell;

use chrono::{DateTime, TimeDelta, Utc};

use super::created::{CreatedRuns, Steady};
use super::points::Points;
use super::{ResetCause, DEFAULT_EWMA_TAU, DEFAULT_MAX_POINTS};
use crate::error::{NoValue, SeriesError};
use crate::promql::{millis_to_time, Point};

/// One live counter: push scrapes in time order; it detects restarts (a value drop, or a
/// changed `_created` time), keeps points for a retention window in bounded memory, and
/// answers PromQL rates, the increase over a window between two of its points, and an
/// EWMA-smoothed rate.
///
/// # Example
/// ```
/// use chrono::{DateTime, TimeDelta};
/// use promrate::{series::CounterSeries, WindowRule};
/// use promrate::promql::RangeFunctions;
/// let t0 = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
/// let mut tokens = CounterSeries::new(TimeDelta::minutes(5));
/// for (i, v) in [1000.0, 1800.0, 2600.0, 400.0, 1200.0].into_iter().enumerate() {
///     tokens.push(t0 + TimeDelta::seconds(10 * i as i64), v)?; // restart before the 4th scrape
/// }
/// let now = t0 + TimeDelta::seconds(40);
/// assert_eq!(tokens.resets(), 1);
/// // 800 + 800, then the restart counts from 0: 400 + 800.
/// let w = tokens.window_increase(&WindowRule::new(TimeDelta::seconds(40)), now)?;
/// assert_eq!((w.increase, w.rate()), (2800.0, 70.0));
/// assert!(tokens.rate(&RangeFunctions::new(TimeDelta::seconds(60)), now).unwrap() > 0.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct CounterSeries {
    /// Points (16 bytes per scrape). Restarts and the reset-corrected increments are
    /// derived from these and the created times, never stored.
    points: Points,
    /// Created times and resets, sized for what the counter has (a tracker holds
    /// millions).
    extra: Extra,
    /// Points ever pushed: the newest is number `pushed - 1`.
    pushed: u64,
    /// The reset-corrected increase over every point pushed, retained or not.
    total_increase: f64,
    /// The EWMA's time constant in milliseconds, 32 bits so that the series stays small.
    tau_ms: u32,
    /// The interval past which the EWMA starts afresh, and the intervals folded since.
    ewma_span: EwmaSpan,
    /// The average; meaningful once an interval is folded in.
    ewma: f64,
}

/// The interval past which the EWMA starts afresh and how many intervals it has folded
/// since (none, one or more: the first sets it outright), in one `u32`, as a tracker holds
/// millions of series: the gap's milliseconds in the low 30 bits, the count in the top two.
/// A gap of 2^30 - 1 ms (12.4 days) or more is no gap, being past any smoothing.
#[derive(Debug, Clone, Copy)]
struct EwmaSpan(u32);

impl EwmaSpan {
    const NO_GAP: u32 = (1 << 30) - 1;
    const MORE: u32 = 2;

    fn gap_ms(self) -> u32 {
        self.0 & Self::NO_GAP
    }

    fn with_gap(self, gap: TimeDelta) -> Self {
        let gap_ms = clamp_ms(gap).min(Self::NO_GAP);
        EwmaSpan((self.0 & !Self::NO_GAP) | gap_ms)
    }

    /// Whether an interval of `dt_ms` is a gap.
    fn is_gap(self, dt_ms: i64) -> bool {
        self.gap_ms() != Self::NO_GAP && dt_ms > i64::from(self.gap_ms())
    }

    /// Intervals folded: 0, 1, or 2 for more.
    fn intervals(self) -> u32 {
        self.0 >> 30
    }

    fn start_afresh(&mut self) {
        self.0 &= Self::NO_GAP;
    }

    fn fold(&mut self) {
        let folded = (self.intervals() + 1).min(Self::MORE);
        self.0 = self.gap_ms() | (folded << 30);
    }
}

/// The EWMA's weight of an interval, `1 - exp(-dt / tau)`, and the interval in seconds.
/// The last pair is remembered per thread, not per series (16 bytes each): a tracker's
/// series share their interval, and `exp` per push was a twentieth of a steady ingest (the
/// division for the seconds, in a push's chain of dependent steps, a tenth of its pushes).
fn ewma_weight(dt_ms: i64, tau_ms: u32) -> (f64, f64) {
    thread_local! {
        static LAST: Cell<(i64, u32, f64, f64)> = const { Cell::new((i64::MIN, 0, 0.0, 0.0)) };
    }
    LAST.with(|last| {
        let (last_dt, last_tau, weight, seconds) = last.get();
        if (last_dt, last_tau) == (dt_ms, tau_ms) {
            return (weight, seconds);
        }
        let weight = 1.0 - (-(dt_ms as f64) / f64::from(tau_ms)).exp();
        let seconds = dt_ms as f64 / 1000.0;
        last.set((dt_ms, tau_ms, weight, seconds));
        (weight, seconds)
    })
}

/// A counter's created times and resets: nothing for a counter without either, 16 bytes in
/// line for one created time that has not changed (every series of a prometheus_client
/// page, buckets included: most series of a fleet), and out of line for the rest.
#[derive(Debug, Clone)]
enum Extra {
    None,
    Steady(Steady),
    Rare(Box<Rare>),
}

/// Created times that changed, and resets (see `Extra`).
#[derive(Debug, Clone, Default)]
struct Rare {
    /// Created times (ms, `None` when unknown) of the points, as runs.
    created: CreatedRuns,
    /// Only for a counter that has reset.
    resets: Option<Box<Resets>>,
}

/// A counter's resets (see `Rare`).
#[derive(Debug, Clone, Default)]
struct Resets {
    /// Restarts detected, saturating.
    count: u32,
    last_reset: Option<(i64, ResetCause)>,
    /// Points whose reset needs remembering beyond the values, by point number, oldest
    /// first: value drops without restart evidence (two in a window make the series
    /// erratic), and restarts a page-level start time revealed (`mark_restart`).
    marks: Vec<(u64, ResetCause)>,
    /// The points among the newest 64 that counted nothing for their interval (the counter
    /// was erratic when they came): what a later mark of such a point, on its page or
    /// when a later page revises it, must not take back.
    counted_nothing: NothingCounted,
    /// The newest unexplained drop (its point's number), the value before it and the
    /// fastest rise since (per ms), until the count passes it ([`CounterSeries::leapt_back`]).
    dropped_from: Option<(u64, f64, f64)>,
    /// Processes answering in turn: the newest value each one left showed, by its start
    /// (ms), so that its rise is counted when it answers again.
    left: Vec<(i64, f64)>,
}

/// Which of the newest 64 point numbers counted nothing: bit `i` of `mask` is point
/// `newest - i`.
#[derive(Debug, Clone, Copy, Default)]
struct NothingCounted {
    newest: u64,
    mask: u64,
}

impl NothingCounted {
    fn mark(&mut self, number: u64) {
        if number >= self.newest {
            let shift = number - self.newest;
            self.mask = if shift >= 64 { 0 } else { self.mask << shift } | 1;
            self.newest = number;
        } else if self.newest - number < 64 {
            self.mask |= 1 << (self.newest - number);
        }
    }

    fn has(&self, number: u64) -> bool {
        let Some(age) = self.newest.checked_sub(number) else {
            return false;
        };
        age < 64 && self.mask >> age & 1 == 1
    }
}

impl CounterSeries {
    /// A series keeping `retention` of history (at least the two newest points), with the
    /// default EWMA time constant and at most 100,000 points.
    ///
    /// # Example
    /// ```
    /// let s = promrate::series::CounterSeries::new(chrono::TimeDelta::minutes(5));
    /// assert!(s.is_empty());
    /// ```
    pub fn new(retention: TimeDelta) -> Self {
        CounterSeries {
            points: Points::new(retention.num_milliseconds().max(0), DEFAULT_MAX_POINTS),
            extra: Extra::None,
            pushed: 0,
            total_increase: 0.0,
            tau_ms: clamp_ms(DEFAULT_EWMA_TAU),
            ewma_span: EwmaSpan(EwmaSpan::NO_GAP),
            ewma: 0.0,
        }
    }

    /// The newest point's number, if any.
    fn newest_number(&self) -> Option<u64> {
        self.pushed.checked_sub(1)
    }

    /// Whether only a value drop can make a point a reset: no marks, and a created time
    /// that never changed (kept in line) or none.
    pub(super) fn has_no_reset_evidence(&self) -> bool {
        !matches!(self.extra, Extra::Rare(_))
    }

    /// The out-of-line state, made from what was in line if need be.
    fn rare_mut(&mut self) -> &mut Rare {
        if !matches!(self.extra, Extra::Rare(_)) {
            let created = match (&self.extra, self.newest_number()) {
                (Extra::Steady(steady), Some(newest)) => steady.runs(newest),
                _ => CreatedRuns::default(),
            };
            self.extra = Extra::Rare(Box::new(Rare {
                created,
                resets: None,
            }));
        }
        match &mut self.extra {
            Extra::Rare(rare) => rare,
            _ => unreachable!("made out of line just above"),
        }
    }

    fn resets_of(&self) -> Option<&Resets> {
        match &self.extra {
            Extra::Rare(rare) => rare.resets.as_deref(),
            _ => None,
        }
    }

    fn resets_mut(&mut self) -> &mut Resets {
        self.rare_mut().resets.get_or_insert_with(Box::default)
    }

    /// The created time of point `number`.
    fn created_at(&self, number: u64) -> Option<i64> {
        match (&self.extra, self.newest_number()) {
            (Extra::Rare(rare), _) => rare.created.at(number),
            (Extra::Steady(steady), Some(newest)) => steady.at(number, newest),
            _ => None,
        }
    }

    /// Sets the created time of point `number` (the newest, or a new newest).
    fn set_created(&mut self, number: u64, created_ms: Option<i64>) {
        let newest = self.newest_number();
        match &mut self.extra {
            Extra::Rare(rare) => rare.created.set(number, created_ms),
            // Nothing known before, nothing now: nothing to write.
            Extra::None if created_ms.is_none() => {}
            Extra::None => match Steady::begin(number, newest, created_ms) {
                Some(steady) => self.extra = Extra::Steady(steady),
                None => self.rare_mut().created.set(number, created_ms),
            },
            Extra::Steady(steady) => match newest.and_then(|newest| steady.set(number, newest, created_ms)) {
                Some(next) => *steady = next,
                None => self.rare_mut().created.set(number, created_ms),
            },
        }
    }

    fn record_reset(&mut self, at_ms: i64, cause: ResetCause) {
        let resets = self.resets_mut();
        resets.count = resets.count.saturating_add(1);
        resets.last_reset = Some((at_ms, cause));
    }

    /// Whether point `number` counted nothing for its interval when it was pushed.
    fn counted_nothing(&self, number: u64) -> bool {
        self.resets_of().is_some_and(|r| r.counted_nothing.has(number))
    }

    /// Whether `created`, another than the previous point's, is one a point before `number`
    /// had: no restart brings back an earlier process's start, so two processes answer in
    /// turn (replicas behind one address, started within the clock skew of each other,
    /// which the start times alone cannot tell from restarts). Compares no clocks.
    fn returns_to_earlier(&self, number: u64, prev_created: Option<i64>, created: Option<i64>) -> bool {
        let (Some(now), Some(prev)) = (created, prev_created) else {
            return false;
        };
        now != prev
            && (matches!(&self.extra, Extra::Rare(rare) if rare.created.seen_before(now, number))
                || self.has_left(now))
    }

    /// Forgets that point `number`'s drop was unexplained (a created time came to explain
    /// it).
    fn unmark_drop(&mut self, number: u64) {
        if let Extra::Rare(rare) = &mut self.extra {
            if let Some(resets) = &mut rare.resets {
                resets
                    .marks
                    .retain(|mark| *mark != (number, ResetCause::ValueDropped));
                resets.dropped_from = None;
            }
        }
    }

    /// Takes back what the push of point `number`, the newest, `counted` for its interval
    /// (its rise, or its value when it was read as a reset), unless it counted nothing
    /// (the counter was erratic then): the interval is another process's. The EWMA starts
    /// afresh. The point counts nothing from then on (a later page that takes its restart
    /// back has nothing to take).
    fn take_back(&mut self, number: u64, counted: f64) {
        if !self.counted_nothing(number) {
            self.total_increase -= counted;
            self.resets_mut().counted_nothing.mark(number);
        }
        self.ewma_span.start_afresh();
    }

    /// Whether the process started at `start` (ms) answered before and left: its count
    /// goes on from the value it left (`count_switch`), it is no restart.
    fn has_left(&self, start: i64) -> bool {
        self.resets_of()
            .is_some_and(|r| r.left.iter().any(|s| s.0 == start))
    }

    /// A switch to another process (`answering`: its start and value) from the one
    /// `left`: remembers the value `left` showed, and counts the rise of `answering`
    /// since its own newest value, when it answered before (a process not seen before
    /// counts nothing: its count is of a time it was not read).
    fn count_switch(&mut self, left: (Option<i64>, f64), answering: (Option<i64>, f64)) {
        let seen = &mut self.resets_mut().left;
        let rise = seen
            .iter()
            .find(|s| Some(s.0) == answering.0)
            .map_or(0.0, |s| (answering.1 - s.1).max(0.0));
        seen.retain(|s| Some(s.0) != left.0 && Some(s.0) != answering.0);
        if let Some(start) = left.0 {
            seen.push((start, left.1));
        }
        if seen.len() > 8 {
            seen.remove(0);
        }
        self.total_increase += rise;
    }

    /// The mark of point `number`, if it has one.
    fn mark_of(&self, number: u64) -> Option<ResetCause> {
        let marks = &self.resets_of()?.marks;
        let i = marks.binary_search_by_key(&number, |m| m.0).ok()?;
        Some(marks[i].1)
    }

    /// Why the points numbered `from..to` give no rate: two value drops there without
    /// restart evidence, or a process start time that went backwards. A counter that
    /// does this is no counter (a buggy exporter, or two processes behind one URL), and
    /// a rate over it would be a spike of the size of its value.
    pub(crate) fn erratic_between(&self, from: u64, to: u64) -> Result<(), NoValue> {
        let (drops, went_back) = self.marks_between(from, to);
        if drops >= 2 || went_back {
            return Err(NoValue::ErraticCounter {
                drops,
                start_went_back: went_back,
            });
        }
        Ok(())
    }

    /// The unexplained drops and whether a start went back, on points `from..to`.
    fn marks_between(&self, from: u64, to: u64) -> (usize, bool) {
        let Some(resets) = self.resets_of() else {
            return (0, false);
        };
        let start = resets.marks.partition_point(|m| m.0 < from);
        let (mut drops, mut went_back) = (0, false);
        for &(_, cause) in resets.marks[start..].iter().take_while(|m| m.0 < to) {
            match cause {
                ResetCause::ValueDropped => drops += 1,
                ResetCause::StartWentBack => went_back = true,
                _ => {}
            }
        }
        (drops, went_back)
    }

    /// The first point number from `since_ms` on, up to point number `to` (exclusive);
    /// `newest_ms` is the time of point `to - 1` when it is not stored yet.
    fn number_since(&self, since_ms: i64, to: u64, newest_ms: Option<i64>) -> u64 {
        let points = self.points.points();
        let index = points.partition_point(|p| p.timestamp_ms < since_ms) as u64;
        if newest_ms.is_some_and(|t| t < since_ms) {
            to
        } else {
            self.first_number() + index
        }
    }

    /// [`CounterSeries::erratic_between`] from `since_ms` on ([`CounterSeries::number_since`]).
    fn erratic_since(&self, since_ms: i64, to: u64, newest_ms: Option<i64>) -> Result<(), NoValue> {
        self.erratic_between(self.number_since(since_ms, to, newest_ms), to)
    }

    /// Whether `value` (a rise), right after a drop without restart evidence, is above
    /// the value before the drop: the counter jumped back to where it was at the next
    /// scrape, so the drop was no restart (a restarted counter counts up from zero, and
    /// passes its old value in one interval only when that value was tiny) but another
    /// process's value, or garbage. It counts as a second jump, which makes the window
    /// erratic: without it the rise after a single bogus drop would be a spike. A counter
    /// that climbs past its old value over several scrapes after a drop is not suspect.
    fn back_above_a_drop(&self, value: f64) -> bool {
        let Some(resets) = self.resets_of() else {
            return false;
        };
        // The newest mark, if it is a drop (not a return already marked) still kept with
        // the point before it.
        let first = self.first_number();
        let Some(&(drop, ResetCause::ValueDropped)) = resets
            .marks
            .last()
            .filter(|m| m.0 > first && m.0 + 1 == self.pushed)
        else {
            return false;
        };
        let points = self.points.points();
        let at = (drop - first) as usize;
        match (points.get(at - 1), points.get(at)) {
            (Some(before), Some(dropped)) => dropped.value < before.value && value > before.value,
            _ => false,
        }
    }

    /// The value before the newest unexplained drop, when `value` (at `at_ms`, a rise from
    /// `prev`) leaps above it from below, over 100 times faster than any rise since: the
    /// process before the drop answers again (a restarted counter climbs from zero, it
    /// does not leap past an old count). Kept as it goes, whatever the points kept.
    fn leapt_back(&mut self, prev: Point, value: f64, at_ms: i64) -> Option<f64> {
        let resets = match &mut self.extra {
            Extra::Rare(rare) => rare.resets.as_deref_mut()?,
            _ => return None,
        };
        let (drop, before, fastest) = resets.dropped_from?;
        let rate = (value - prev.value) / (at_ms - prev.timestamp_ms) as f64;
        // Right after the drop, `back_above_a_drop` judges.
        if value <= before || drop + 1 == self.pushed {
            resets.dropped_from = Some((drop, before, fastest.max(rate)));
            return None;
        }
        // Past the old count: a leap, or a climb (then nothing more to watch).
        resets.dropped_from = None;
        (prev.value < before && rate > 100.0 * fastest).then_some(before)
    }

    /// Whether the EWMA may be given: not while the series is erratic within its time
    /// constant.
    pub(crate) fn ewma_erratic(&self) -> Result<(), NoValue> {
        let Some(newest) = self.points.last() else {
            return Ok(());
        };
        self.erratic_since(newest.timestamp_ms - i64::from(self.tau_ms), self.pushed, None)
    }

    /// Caps the points kept, whatever the retention (memory bound). Minimum 2.
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// let mut s = promrate::series::CounterSeries::new(TimeDelta::hours(1));
    /// s.max_points(3);
    /// for i in 0..10 {
    ///     s.push(DateTime::from_timestamp(i, 0).unwrap(), i as f64)?;
    /// }
    /// assert_eq!(s.len(), 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn max_points(&mut self, max_points: usize) -> &mut Self {
        self.points.set_max_len(max_points);
        self
    }

    /// The EWMA time constant `tau`: each interval `dt` moves the average by
    /// `alpha = 1 - exp(-dt / tau)` towards the interval's rate, so uneven scrape
    /// intervals weigh by their length. Default [`DEFAULT_EWMA_TAU`].
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// let mut s = promrate::series::CounterSeries::new(TimeDelta::minutes(5));
    /// s.ewma_time_constant(TimeDelta::seconds(10));
    /// let at = |s| DateTime::from_timestamp(s, 0).unwrap();
    /// s.push(at(0), 0.0)?;
    /// s.push(at(10), 100.0)?; // the first interval sets the average: 10/s
    /// s.push(at(20), 100.0)?; // 0/s, weighted by 1 - exp(-10 s / 10 s)
    /// assert!((s.ewma_rate().unwrap() - 10.0 * (-1.0f64).exp()).abs() < 1e-12);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn ewma_time_constant(&mut self, tau: TimeDelta) -> &mut Self {
        self.tau_ms = clamp_ms(tau).max(1);
        self
    }

    /// Starts the EWMA afresh after a gap: an interval longer than `gap` (an outage, a
    /// monitor that was away) is not blended in, and the first interval after it sets the
    /// average outright, so the smoothed rate never carries a rate from before the gap nor
    /// the gap's own average. [`CounterSeries::ewma_rate`] is `None` until that interval.
    /// By default no interval is a gap; nor is any when `gap` is 12.4 days (2^30 - 1 ms)
    /// or more.
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// let at = |s| DateTime::from_timestamp(s, 0).unwrap();
    /// let mut s = promrate::series::CounterSeries::new(TimeDelta::minutes(5));
    /// s.ewma_restart_after(TimeDelta::seconds(5));
    /// s.push(at(0), 0.0)?;
    /// s.push(at(1), 100.0)?; // 100/s
    /// s.push(at(60), 160.0)?; // a 59 s gap: 1/s on average, not blended in
    /// assert_eq!(s.ewma_rate(), None);
    /// s.push(at(61), 210.0)?; // the first interval after the gap sets it: 50/s
    /// assert_eq!(s.ewma_rate(), Some(50.0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn ewma_restart_after(&mut self, gap: TimeDelta) -> &mut Self {
        self.ewma_span = self.ewma_span.with_gap(gap);
        self
    }

    /// Appends a scrape. Returns why the counter restarted, if it did.
    ///
    /// # Errors
    /// [`SeriesError::NotAfterLast`] for a timestamp not after the last one;
    /// [`SeriesError::InvalidValue`] for NaN, infinite or negative values. The series is
    /// unchanged on error.
    ///
    /// # Example
    /// ```
    /// let mut s = promrate::series::CounterSeries::new(chrono::TimeDelta::minutes(5));
    /// let t = chrono::DateTime::from_timestamp(10, 0).unwrap();
    /// assert_eq!(s.push(t, 1.0)?, None);
    /// assert!(s.push(t + chrono::TimeDelta::seconds(1), f64::NAN).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn push(&mut self, at: DateTime<Utc>, value: f64) -> Result<Option<ResetCause>, SeriesError> {
        self.push_ms(at.timestamp_millis(), value, None, None)
    }

    /// Appends a scrape with the counter's `_created` time: a created time different from
    /// the previous one is a restart even if the value did not drop.
    ///
    /// # Errors
    /// As [`CounterSeries::push`].
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// use promrate::{series::CounterSeries, series::ResetCause};
    /// let t = DateTime::from_timestamp(1_000, 0).unwrap();
    /// let mut s = CounterSeries::new(TimeDelta::minutes(5));
    /// s.push_with_created(t, 50.0, t - TimeDelta::hours(1))?;
    /// // Restarted 5 s ago and already past 50: only the created time tells.
    /// let cause = s.push_with_created(t + TimeDelta::seconds(10), 80.0, t + TimeDelta::seconds(5))?;
    /// assert_eq!(cause, Some(ResetCause::CreatedChanged));
    /// let w = s.window_increase(&promrate::WindowRule::new(TimeDelta::seconds(10)), t + TimeDelta::seconds(10))?;
    /// assert_eq!(w.increase, 80.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn push_with_created(
        &mut self,
        at: DateTime<Utc>,
        value: f64,
        created: DateTime<Utc>,
    ) -> Result<Option<ResetCause>, SeriesError> {
        self.push_ms(
            at.timestamp_millis(),
            value,
            Some(created.timestamp_millis()),
            None,
        )
    }

    /// Makes room for the points the retention holds at `interval` (a tracker told its
    /// series' rhythm allocates each column once).
    pub(crate) fn reserve_for_interval(&mut self, interval: TimeDelta) {
        self.points.reserve_for_interval(interval.num_milliseconds());
    }

    /// [`CounterSeries::push_with_created`] in milliseconds; with `skew_ms` (the
    /// tracker's [`start_time_skew`](crate::Tracker::start_time_skew)), a created time that
    /// changed to one more than that before the previous point is a second process's,
    /// not a restart ([`ResetCause::StartWentBack`]): the point counts nothing.
    pub(crate) fn push_ms(
        &mut self,
        at_ms: i64,
        value: f64,
        created_ms: Option<i64>,
        skew_ms: Option<i64>,
    ) -> Result<Option<ResetCause>, SeriesError> {
        if let Some(prev) = self.points.last() {
            // The usual push (a fleet's every series, every scrape): later, no lower, no
            // created time that changed, no reset kept. None of the checks below could
            // find anything (they and the created time's call `append` skips were a fifth
            // of a steady ingest's pushes).
            let no_evidence = match &self.extra {
                Extra::None => created_ms.is_none(),
                Extra::Steady(steady) => steady.keeps(created_ms),
                Extra::Rare(_) => false,
            };
            if no_evidence && at_ms > prev.timestamp_ms && value >= prev.value && value.is_finite() {
                let increment = value - prev.value;
                self.total_increase += increment;
                self.update_ewma(increment, at_ms - prev.timestamp_ms);
                self.append(at_ms, value, created_ms);
                return Ok(None);
            }
        }
        self.push_checked(at_ms, value, created_ms, skew_ms)
    }

    /// [`CounterSeries::push_ms`] with every check: what a push that is not the usual one
    /// takes (a first point, a drop, a created time, resets kept, a refused value).
    fn push_checked(
        &mut self,
        at_ms: i64,
        value: f64,
        created_ms: Option<i64>,
        skew_ms: Option<i64>,
    ) -> Result<Option<ResetCause>, SeriesError> {
        if !value.is_finite() || value < 0.0 {
            return Err(SeriesError::InvalidValue(value));
        }
        let previous = self
            .points
            .last()
            .map(|point| (point, self.created_at(self.pushed - 1)));
        if let Some((prev, _)) = previous {
            if at_ms <= prev.timestamp_ms {
                return Err(SeriesError::NotAfterLast {
                    at: millis_to_time(at_ms),
                    last: millis_to_time(prev.timestamp_ms),
                });
            }
        }
        let second_process = previous.is_some_and(|(prev, prev_created)| {
            started_while_seen(prev_created, created_ms, prev.timestamp_ms, skew_ms)
                || self.returns_to_earlier(self.pushed, prev_created, created_ms)
        });
        let mut cause = if second_process {
            Some(ResetCause::StartWentBack)
        } else {
            previous.and_then(|(prev, prev_created)| reset_cause(prev.value, prev_created, value, created_ms))
        };
        let returned = match (cause, previous) {
            // Bare counters only: created times tell processes apart themselves.
            (None, Some((prev, None))) if created_ms.is_none() => self.leapt_back(prev, value, at_ms),
            _ => None,
        };
        if returned.is_some() {
            cause = Some(ResetCause::StartWentBack);
        }
        let second_process = second_process || returned.is_some();
        // A drop with no created time that changed: one is a reset, as in Prometheus; a
        // second while the first is still kept makes the series erratic, and its values
        // then count nothing (no spike in the total or the EWMA).
        let unexplained = cause == Some(ResetCause::ValueDropped)
            && !previous
                .is_some_and(|(_, before)| before.is_some() && created_ms.is_some() && before != created_ms);
        if let Some(cause) = cause {
            self.record_reset(at_ms, cause);
        }
        if unexplained || (cause.is_none() && self.back_above_a_drop(value)) {
            let number = self.pushed;
            self.resets_mut().marks.push((number, ResetCause::ValueDropped));
        }
        if let (true, Some((prev, None)), None) = (unexplained, previous, created_ms) {
            let number = self.pushed;
            self.resets_mut().dropped_from = Some((number, prev.value, 0.0));
        }
        if second_process {
            let number = self.pushed;
            self.resets_mut().marks.push((number, ResetCause::StartWentBack));
        }
        // Two drops within the EWMA's memory, this point included: its increment is no
        // count of anything (a rise back after a drop is the other process's value). A
        // start that went back there voids only its own point: the start times tell the
        // processes apart, and a move this page brings takes its rise back then.
        let erratic = second_process
            || self.resets_of().is_some_and(|r| !r.marks.is_empty()) && {
                let to = self.pushed + 1;
                let from = self.number_since(at_ms - i64::from(self.tau_ms), to, Some(at_ms));
                self.marks_between(from, to).0 >= 2
            };
        if erratic {
            let number = self.pushed;
            self.resets_mut().counted_nothing.mark(number);
        }
        if let Some((prev, prev_created)) = previous {
            if prev_created.is_some() && created_ms.is_some() && prev_created != created_ms {
                self.count_switch((prev_created, prev.value), (created_ms, value));
            }
            let increment = match cause {
                // The process before the drop answers again: its rise since it left.
                _ if returned.is_some() => returned.map_or(0.0, |before| value - before),
                _ if erratic => 0.0,
                Some(_) => value,
                None => value - prev.value,
            };
            self.total_increase += increment;
            if erratic {
                self.ewma_span.start_afresh();
            } else {
                self.update_ewma(increment, at_ms - prev.timestamp_ms);
            }
        }
        self.append(at_ms, value, created_ms);
        // Trimming reads the window's start (a search of the points): only when due.
        let rare_due = |r: &Rare| r.created.len() > 8 || r.resets.as_ref().is_some_and(|r| r.marks.len() > 8);
        if matches!(&self.extra, Extra::Rare(rare) if rare_due(rare)) {
            let first = self.first_number();
            if let Extra::Rare(rare) = &mut self.extra {
                rare.created.trim(first);
                if let Some(resets) = &mut rare.resets {
                    let obsolete = resets.marks.partition_point(|m| m.0 < first);
                    resets.marks.drain(..obsolete);
                }
            }
        }
        Ok(cause)
    }

    /// Stores the point after the newest, with its created time: how every push ends.
    #[inline(always)]
    fn append(&mut self, at_ms: i64, value: f64, created_ms: Option<i64>) {
        self.points.push(Point::from_millis(at_ms, value));
        // A counter without created times, pushed none, has nothing to write: no call
        // (a fleet's usual push, where the call was a tenth of the push).
        if created_ms.is_some() || !matches!(self.extra, Extra::None) {
            self.set_created(self.pushed, created_ms);
        }
        self.pushed += 1;
    }

    fn update_ewma(&mut self, increment: f64, dt_ms: i64) {
        if self.ewma_span.is_gap(dt_ms) {
            self.ewma_span.start_afresh();
            return;
        }
        let (alpha, seconds) = ewma_weight(dt_ms, self.tau_ms);
        let rate = increment / seconds;
        self.ewma = if self.ewma_span.intervals() == 0 {
            rate
        } else {
            self.ewma + alpha * (rate - self.ewma)
        };
        self.ewma_span.fold();
    }

    /// Sets the created time of the newest point, for pages that print `x_created` after
    /// `x_total` (prometheus_client does). If it reveals a restart the value alone did not
    /// show, the newest point becomes a reset and the cause is returned.
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// use promrate::{series::CounterSeries, series::ResetCause};
    /// let t = DateTime::from_timestamp(1_000, 0).unwrap();
    /// let mut s = CounterSeries::new(TimeDelta::minutes(5));
    /// s.push(t, 50.0)?;
    /// s.amend_created(t - TimeDelta::hours(1));
    /// s.push(t + TimeDelta::seconds(10), 80.0)?;
    /// assert_eq!(s.amend_created(t + TimeDelta::seconds(5)), Some(ResetCause::CreatedChanged));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn amend_created(&mut self, created: DateTime<Utc>) -> Option<ResetCause> {
        self.amend_created_ms(created.timestamp_millis(), None)
    }

    /// [`CounterSeries::amend_created`] in milliseconds, with `skew_ms` as
    /// [`CounterSeries::push_ms`] takes it.
    pub(crate) fn amend_created_ms(&mut self, created_ms: i64, skew_ms: Option<i64>) -> Option<ResetCause> {
        let (previous, newest) = self.points.last_two();
        let point = newest?;
        let newest_number = self.pushed - 1;
        let Some(prev) = previous else {
            self.set_created(newest_number, Some(created_ms));
            return None;
        };
        let prev_created = self.created_at(newest_number - 1);
        let newest_created = self.created_at(newest_number);
        let already = reset_cause(prev.value, prev_created, point.value, newest_created).is_some();
        let second_process = newest_created != Some(created_ms)
            && (started_while_seen(prev_created, Some(created_ms), prev.timestamp_ms, skew_ms)
                || self.returns_to_earlier(newest_number, prev_created, Some(created_ms)));
        if second_process {
            // A second process's count: what the push counted is taken back (the value,
            // if it was read as a reset).
            self.set_created(newest_number, Some(created_ms));
            let counted = if already {
                point.value
            } else {
                point.value - prev.value
            };
            self.take_back(newest_number, counted);
            self.count_switch((prev_created, prev.value), (Some(created_ms), point.value));
            let resets = self.resets_mut();
            match resets.marks.last_mut() {
                Some(mark) if mark.0 == newest_number => mark.1 = ResetCause::StartWentBack,
                _ => resets.marks.push((newest_number, ResetCause::StartWentBack)),
            }
            if already {
                // Counted when the drop was read.
                resets.last_reset = Some((point.timestamp_ms, ResetCause::StartWentBack));
            } else {
                self.record_reset(point.timestamp_ms, ResetCause::StartWentBack);
            }
            return Some(ResetCause::StartWentBack);
        }
        if already {
            // Already a restart; the newest interval is booked as one. A drop read before
            // its created time (`x_created` printed after `x_total`, as prometheus_client
            // writes it) was marked unexplained; a new created time explains it: a restart,
            // not another process's value. Left marked (and the point without its created
            // time), the count's climb past the old value was read as a second drop's
            // other process, and the counter counted nothing while both were in the EWMA's
            // memory.
            if newest_created.is_none() {
                self.set_created(newest_number, Some(created_ms));
                if prev_created.is_some_and(|before| before != created_ms) {
                    self.unmark_drop(newest_number);
                    self.count_switch((prev_created, prev.value), (Some(created_ms), point.value));
                }
            }
            return None;
        }
        self.set_created(newest_number, Some(created_ms));
        reset_cause(prev.value, prev_created, point.value, Some(created_ms))?;
        let old_increment = point.value - prev.value;
        let dt_ms = point.timestamp_ms - prev.timestamp_ms;
        self.record_reset(point.timestamp_ms, ResetCause::CreatedChanged);
        self.rebook_newest(old_increment, point.value, dt_ms);
        self.count_switch((prev_created, prev.value), (Some(created_ms), point.value));
        Some(ResetCause::CreatedChanged)
    }

    /// The newest interval entered the total and the average with `old` as its increment;
    /// books it as `new` instead, weighted as that interval was (or replacing the average
    /// if it was the first).
    fn rebook_newest(&mut self, old: f64, new: f64, dt_ms: i64) {
        self.total_increase += new - old;
        if self.ewma_span.intervals() > 0 {
            let (weight, seconds) = ewma_weight(dt_ms, self.tau_ms);
            let alpha = if self.ewma_span.intervals() == 1 {
                1.0
            } else {
                weight
            };
            self.ewma += alpha * ((new - old) / seconds);
        }
    }

    /// Marks the newest point as a restart that a page-level start time revealed
    /// (`cause`: [`ResetCause::ProcessRestarted`] or [`ResetCause::StartWentBack`]): the
    /// counter counted up from zero since the new process started. A counter with a
    /// created time of its own on that point goes by it instead. When the target is
    /// `erratic` (its start time went back), or the start went back now, the point counts
    /// nothing: its value belongs to another process. Returns the cause when this makes
    /// the point a reset it was not already (a value drop the start time explains was
    /// reported as [`ResetCause::ValueDropped`] when it was read; from now on it is no
    /// unexplained drop).
    /// `starts`: those of the process left and of the one answering (`count_switch`).
    pub(crate) fn mark_restart(
        &mut self,
        cause: ResetCause,
        erratic: bool,
        starts: (Option<i64>, Option<i64>),
    ) -> Option<ResetCause> {
        let (previous, newest) = self.points.last_two();
        let (prev, point) = (previous?, newest?);
        let number = self.pushed - 1;
        if self.created_at(number).is_some() {
            return None;
        }
        // A process the counter saw leave (its start no longer among the target's, which
        // keep only the retention's) answers again: its rise since, never also its count.
        let cause = match starts.1 {
            Some(start) if self.has_left(start) => ResetCause::StartWentBack,
            _ => cause,
        };
        let counts_nothing = erratic || cause == ResetCause::StartWentBack;
        if let Some(mark) = self.mark_of(number) {
            if mark == ResetCause::ValueDropped {
                let resets = self.resets_mut();
                if let Some(last) = resets.marks.last_mut() {
                    last.1 = cause;
                }
                // Explained: no process before it to answer again.
                resets.dropped_from = None;
                resets.last_reset = Some((point.timestamp_ms, cause));
                if counts_nothing {
                    // A drop counted the value as a restart's; a rise back above a drop
                    // (marked as one) counted its rise.
                    let counted = if point.value < prev.value {
                        point.value
                    } else {
                        point.value - prev.value
                    };
                    self.take_back(number, counted);
                }
                self.count_switch((starts.0, prev.value), (starts.1, point.value));
            }
            return None;
        }
        if reset_cause(prev.value, self.created_at(number - 1), point.value, None).is_some() {
            return None;
        }
        self.resets_mut().marks.push((number, cause));
        self.record_reset(point.timestamp_ms, cause);
        let old = point.value - prev.value;
        if counts_nothing || self.counted_nothing(number) {
            self.take_back(number, old);
        } else {
            self.rebook_newest(old, point.value, point.timestamp_ms - prev.timestamp_ms);
        }
        self.count_switch((starts.0, prev.value), (starts.1, point.value));
        Some(cause)
    }

    /// Takes back the restart a page-level start time made of the point read at `at_ms`
    /// ([`CounterSeries::mark_restart`] with [`ResetCause::ProcessRestarted`], on a point
    /// whose value had not dropped), once that start time proved to be no process's: the
    /// point counts its rise again, not its whole value. The EWMA is not rewritten (it
    /// has let the spike decay since, or starts afresh at the next gap).
    pub(crate) fn unmark_restart_at(&mut self, at_ms: i64) {
        let points = self.points.points();
        let Some(i) = points
            .iter()
            .position(|p| p.timestamp_ms == at_ms)
            .filter(|&i| i > 0)
        else {
            return;
        };
        let (prev, point) = (points[i - 1], points[i]);
        let number = self.first_number() + i as u64;
        if self.mark_of(number) != Some(ResetCause::ProcessRestarted) || point.value < prev.value {
            return;
        }
        let counted_nothing = self.counted_nothing(number);
        let resets = self.resets_mut();
        resets
            .marks
            .retain(|m| *m != (number, ResetCause::ProcessRestarted));
        resets.count = resets.count.saturating_sub(1);
        if resets.last_reset == Some((at_ms, ResetCause::ProcessRestarted)) {
            resets.last_reset = None;
        }
        if !counted_nothing {
            // It counted `point.value` where its rise was `point.value - prev.value`.
            self.total_increase -= prev.value;
        }
    }

    /// Whether no point has been pushed (or all were evicted).
    ///
    /// # Example
    /// ```
    /// assert!(promrate::series::CounterSeries::new(chrono::TimeDelta::minutes(1)).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.points.len() == 0
    }

    /// Number of points kept.
    ///
    /// # Example
    /// ```
    /// let mut s = promrate::series::CounterSeries::new(chrono::TimeDelta::minutes(1));
    /// s.push(chrono::DateTime::from_timestamp(1, 0).unwrap(), 1.0)?;
    /// assert_eq!(s.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// The newest point.
    ///
    /// # Example
    /// ```
    /// let mut s = promrate::series::CounterSeries::new(chrono::TimeDelta::minutes(1));
    /// s.push(chrono::DateTime::from_timestamp(1, 0).unwrap(), 7.0)?;
    /// assert_eq!(s.last().unwrap().value, 7.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn last(&self) -> Option<Point> {
        self.points.last()
    }

    /// Restarts detected since tracking began.
    ///
    /// # Example
    /// ```
    /// assert_eq!(promrate::series::CounterSeries::new(chrono::TimeDelta::minutes(1)).resets(), 0);
    /// ```
    pub fn resets(&self) -> u64 {
        self.resets_of().map_or(0, |r| u64::from(r.count))
    }

    /// The newest restart: when (ms) and why.
    ///
    /// # Example
    /// ```
    /// assert!(promrate::series::CounterSeries::new(chrono::TimeDelta::minutes(1)).last_reset().is_none());
    /// ```
    pub fn last_reset(&self) -> Option<(DateTime<Utc>, ResetCause)> {
        let (ms, cause) = self.resets_of()?.last_reset?;
        DateTime::from_timestamp_millis(ms).map(|t| (t, cause))
    }

    /// The kept points, oldest first, for any [`crate::promql`] function.
    ///
    /// # Example
    /// ```
    /// let mut s = promrate::series::CounterSeries::new(chrono::TimeDelta::minutes(1));
    /// s.push(chrono::DateTime::from_timestamp(1, 0).unwrap(), 1.0)?;
    /// assert_eq!(s.points().len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn points(&self) -> &[Point] {
        self.points.points()
    }

    /// What a push reads, combined (its oldest and newest points' times, the smoothing's
    /// state): reading it ahead of a batch of pushes brings their lines into cache.
    pub(crate) fn push_lines(&self) -> i64 {
        self.points.ends_ms() ^ i64::from(self.ewma_span.0) ^ self.pushed as i64
    }

    /// Whether points were let go (retention, the cap on points): the oldest kept is not
    /// the first pushed.
    pub(crate) fn has_let_go(&self) -> bool {
        self.pushed > self.points.len() as u64
    }

    /// The number of the oldest kept point.
    fn first_number(&self) -> u64 {
        self.pushed - self.points.len() as u64
    }

    pub(crate) fn has_created(&self) -> bool {
        let first = self.first_number();
        match (&self.extra, self.newest_number()) {
            (Extra::Rare(rare), _) => rare.created.any_from(first),
            (Extra::Steady(steady), Some(newest)) => steady.any_from(first, newest),
            _ => false,
        }
    }

    /// The created time of each kept point in milliseconds, or nothing when none is known.
    fn created_column(&self) -> Vec<Option<i64>> {
        if !self.has_created() {
            return Vec::new();
        }
        let first = self.first_number();
        (0..self.points.len() as u64)
            .map(|i| self.created_at(first + i))
            .collect()
    }

    /// The created time of each kept point (`None` when unknown), parallel to
    /// [`CounterSeries::points`].
    ///
    /// # Example
    /// ```
    /// let mut s = promrate::series::CounterSeries::new(chrono::TimeDelta::minutes(1));
    /// s.push(chrono::DateTime::from_timestamp(1, 0).unwrap(), 1.0)?;
    /// s.push_with_created(chrono::DateTime::from_timestamp(2, 0).unwrap(), 2.0, chrono::DateTime::from_timestamp(0, 0).unwrap())?;
    /// assert_eq!(s.created_times().collect::<Vec<_>>(), [None, chrono::DateTime::from_timestamp(0, 0)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn created_times(&self) -> impl ExactSizeIterator<Item = Option<DateTime<Utc>>> + '_ {
        let first = self.first_number();
        (0..self.points.len()).map(move |i| {
            self.created_at(first + i as u64)
                .map(crate::promql::millis_to_time)
        })
    }

    /// The reset-corrected increase from the first point ever pushed to the newest, whatever
    /// the retention kept: a total since monitoring began, in bounded memory.
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// let t = DateTime::from_timestamp(0, 0).unwrap();
    /// let mut s = promrate::series::CounterSeries::new(TimeDelta::seconds(10));
    /// for (i, v) in [5.0, 9.0, 2.0, 6.0, 10.0].into_iter().enumerate() {
    ///     s.push(t + TimeDelta::seconds(10 * i as i64), v)?;
    /// }
    /// // +4, a restart (+2), +4, +4; only the last two points are retained.
    /// assert_eq!((s.total_increase(), s.len()), (14.0, 2));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn total_increase(&self) -> f64 {
        self.total_increase
    }

    /// The EWMA-smoothed rate (per second) over all intervals seen, `None` before the
    /// second point. See [`CounterSeries::ewma_time_constant`].
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// let t = DateTime::from_timestamp(0, 0).unwrap();
    /// let mut s = promrate::series::CounterSeries::new(TimeDelta::minutes(5));
    /// for (i, dt) in [0, 3, 10, 11, 25].into_iter().enumerate() {
    ///     s.push(t + TimeDelta::seconds(dt), 7.0 * dt as f64)?; // 7/s, uneven scrapes
    ///     let _ = i;
    /// }
    /// assert!((s.ewma_rate().unwrap() - 7.0).abs() < 1e-9);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn ewma_rate(&self) -> Option<f64> {
        (self.ewma_span.intervals() > 0).then_some(self.ewma)
    }
}

/// The reset-corrected increment from point `i - 1` to point `i`: after a restart the
/// counter counted up from zero.
fn increment(
    points: &[Point],
    created_at: impl Fn(usize) -> Option<i64>,
    restarted: impl Fn(usize) -> bool,
    i: usize,
) -> f64 {
    let (prev, point) = (points[i - 1], points[i]);
    if restarted(i) || reset_cause(prev.value, created_at(i - 1), point.value, created_at(i)).is_some() {
        point.value
    } else {
        point.value - prev.value
    }
}

/// Whether a created time that changed (`before` to `now`) tells a second process, one that
/// started more than `skew_ms` before the previous point at `prev_ms`, while the old one
/// still answered: with no skew given, no clock is compared with another.
fn started_while_seen(before: Option<i64>, now: Option<i64>, prev_ms: i64, skew_ms: Option<i64>) -> bool {
    match (before, now, skew_ms) {
        (Some(before), Some(now), Some(skew)) => now != before && now < prev_ms.saturating_sub(skew),
        _ => false,
    }
}

fn reset_cause(
    prev_value: f64,
    prev_created_ms: Option<i64>,
    value: f64,
    created_ms: Option<i64>,
) -> Option<ResetCause> {
    match (prev_created_ms, created_ms) {
        _ if value < prev_value => Some(ResetCause::ValueDropped),
        (Some(before), Some(now)) if before != now => Some(ResetCause::CreatedChanged),
        _ => None,
    }
}

/// A duration in whole milliseconds within `0..=u32::MAX` (about 49 days).
fn clamp_ms(d: TimeDelta) -> u32 {
    d.num_milliseconds().clamp(0, i64::from(u32::MAX)) as u32
}

mod promql_functions;
mod window_increase;

pub(crate) use window_increase::RuleMs;
pub use window_increase::{Shortened, WindowIncrease, WindowRule};

#[cfg(test)]
mod tests;

/// A counter with a created time that does not change (every series of a
/// prometheus_client page) allocates nothing for it; one that changed allocates a 48-byte
/// `Rare`, and its runs stay in it until a second change.
#[test]
fn a_created_time_costs_nothing_out_of_line_until_it_changes() {
    assert_eq!(std::mem::size_of::<Extra>(), 16);
    assert_eq!(std::mem::size_of::<Rare>(), 48);
    let t = |s: i64| DateTime::from_timestamp(s, 0).unwrap();
    let mut series = CounterSeries::new(TimeDelta::minutes(1));
    for s in 0..20 {
        // Read before its created time, as prometheus_client prints them.
        series.push_ms(s * 1_000, s as f64, None, None).unwrap();
        series.amend_created_ms(500, None);
        assert!(matches!(series.extra, Extra::Steady(_)), "{:?}", series.extra);
    }
    series.push(t(20), 30.0).unwrap();
    series.push(t(21), 31.0).unwrap();
    assert!(matches!(series.extra, Extra::Rare(_)), "{:?}", series.extra);
    assert_eq!(
        series.created_times().filter(Option::is_some).count(),
        series.len() - 2
    );
    let mut created = CreatedRuns::default();
    for number in 0..100 {
        created.set(number, Some(1_000));
    }
    assert_eq!(created.len(), 1);
    assert!(!created.runs_spilled());
}

/// The gap and the folded count share a word: neither disturbs the other, the count
/// saturates at "more", and a gap of 12.4 days or more is none.
#[test]
fn the_ewma_span_keeps_its_gap_and_its_count_apart() {
    let mut span = EwmaSpan(EwmaSpan::NO_GAP).with_gap(TimeDelta::seconds(5));
    assert_eq!((span.gap_ms(), span.intervals()), (5_000, 0));
    assert!(span.is_gap(5_001) && !span.is_gap(5_000));
    for want in [1, 2, 2, 2] {
        span.fold();
        assert_eq!((span.gap_ms(), span.intervals()), (5_000, want));
    }
    span = span.with_gap(TimeDelta::milliseconds(7));
    assert_eq!((span.gap_ms(), span.intervals()), (7, 2));
    span.start_afresh();
    assert_eq!((span.gap_ms(), span.intervals()), (7, 0));
    for never in [TimeDelta::days(13), TimeDelta::days(400), TimeDelta::MAX] {
        let span = span.with_gap(never);
        assert!(!span.is_gap(i64::MAX), "{never}");
        assert_eq!(span.intervals(), 0);
    }
    let just_under = span.with_gap(TimeDelta::milliseconds(i64::from(EwmaSpan::NO_GAP) - 1));
    assert!(just_under.is_gap(i64::from(EwmaSpan::NO_GAP)));
}
