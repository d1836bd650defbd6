//! Process start times: a restart is a fact about a target, not about one counter.
//!
//! A page carries the time its process started (`process_start_time_seconds`, which every
//! official client library exports). When it changes, every counter of that target
//! restarted, including the counters whose value has already climbed past the old one
//! by the first scrape after the outage and that have no `_created` of their own (a
//! prometheus_client in multiprocess mode, as vLLM with `--api-server-count` > 1, or
//! `PROMETHEUS_DISABLE_CREATED_SERIES`): value-only detection misses those restarts and
//! undercounts. A start time that goes *backwards* is no restart at all but two processes
//! answering in turn; that target's counters are then erratic
//! ([`NoValue::ErraticCounter`](crate::NoValue::ErraticCounter)).
//!
//! A target is the set of values of the target labels (`job` and `instance` by default,
//! as Prometheus labels a scrape): on a server's own page every series has the same
//! (none), on a federation page each instance is one target. This is promrate's
//! addition; Prometheus' own functions do not read a page-level start time, and PromQL's
//! value-only estimators are unchanged by it.
//!
//! # For the next maintainer
//! The start gauge is read whatever the selectors say: when they select it, it is a
//! tracked series as any other and its entry here names its slot; when they do not, the
//! position cache sends its value straight to its entry (`Target::Start`), and it is no
//! series of the tracker's (it adds nothing to `len()` or a report's samples). After a page, [`Tracker::apply_start_times`] compares; only a change
//! walks the page's series (a restart is rare: a steady page costs a comparison per
//! target).

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hash, Hasher};

use hashbrown::HashTable;

use super::index::SeriesIndex;
use super::report::{IngestReport, ProcessRestart, ResetEvent};
use super::{TrackedSeries, Tracker};
use crate::series::ResetCause;
use crate::text::Sample;

/// The start times (ms) of the process a target's page left and of the one answering.
type Starts = (Option<i64>, Option<i64>);

/// The default gauge whose value is a target's process start time, in Unix seconds.
const DEFAULT_START_TIME_GAUGE: &str = "process_start_time_seconds";

/// How much shorter than the time the old process was seen alive the gap between the two
/// start times may be (both differences of one clock each, so no clock skew enters): the
/// pages' timing jitter. Shorter still is an overlap: two processes alive at once.
const OVERLAP_MS: i64 = 1_000;

/// [`super::START_TIME_JITTER`] in milliseconds.
const START_JITTER_MS: i64 = super::START_TIME_JITTER.num_milliseconds();

/// The labels that name a target on a page by default: Prometheus' own target labels.
const DEFAULT_TARGET_LABELS: [&str; 2] = ["job", "instance"];

/// What the tracker knows of its targets' start times.
#[derive(Debug, Clone)]
pub(super) struct StartTimes {
    /// The start gauge's name; `None` when page-level start times are not read.
    pub gauge: Option<Box<str>>,
    pub target_labels: Vec<Box<str>>,
    targets: Vec<TargetStart>,
    /// `targets` by their key's hash: a series' target is found from its labels without
    /// building a string (a federation has thousands of targets).
    by_key: HashTable<usize>,
    hasher: std::collections::hash_map::RandomState,
    /// The newest start time of any target (ms): a PromQL window that begins at or after
    /// it reads no start time that could change its answer, so no series is looked up.
    newest_start_ms: i64,
    /// The targets known after the last page the tracker kept: a refused page's new
    /// targets (past these) go with it.
    kept: usize,
    /// The kept targets whose start gauge the page being read found in a new series, with
    /// the slot each had: a refused page gives them back (its series go, and the target
    /// had lost the gauge it still has).
    moved: Vec<(usize, Option<usize>)>,
}

/// One target's start time.
#[derive(Debug, Clone)]
struct TargetStart {
    /// The slot of its start gauge series, when the selectors track it.
    slot: Option<usize>,
    /// The value read from the page when they do not, and the scrape that read it.
    read: Option<(u64, f64)>,
    /// The last scrape whose page gave it a start time (or made it): a target missing
    /// from as many scrapes as a series may be is let go with its series.
    last_scrape: u64,
    /// Its target labels' values (`""` for one a series does not have).
    key: Vec<String>,
    /// The newest start time read (ms), and the page times (ms) it was first and last read
    /// at: the process was alive at least that long.
    start_ms: Option<i64>,
    first_seen_ms: i64,
    seen_ms: i64,
    /// When (page time, ms) its start time last went backwards: the target is erratic
    /// while that is within the tracker's retention.
    went_back_at: Option<i64>,
    /// When (page time, ms) its start time last moved with no counter of it dropping or
    /// changing its `_created`, if its last move was such: a second such move in a row,
    /// within the retention, is no restart ([`ResetCause::StartTimeMoving`]).
    silent_move_at: Option<i64>,
    /// When (page time, ms) a silent move was read as a restart: taken back if the next
    /// move shows the start time is no process's.
    silent_restart_at: Option<i64>,
    /// The page time (ms) of its newest restart ([`ResetCause::ProcessRestarted`]): a
    /// counter back on a page after it, whose point before is older, restarted with it.
    restarted_at: Option<i64>,
    /// `(first page time, start time)` runs, ms, oldest first: the start time a point of
    /// its counters had (for PromQL's start-time-aware estimators). Older runs than the
    /// retention are let go, but for the one in force at its start.
    runs: Vec<(i64, i64)>,
}

impl TargetStart {
    /// The start time in force at `at_ms` (`None` before the first page that told it).
    fn at(&self, at_ms: i64) -> Option<i64> {
        let after = self.runs.partition_point(|r| r.0 <= at_ms);
        after.checked_sub(1).map(|i| self.runs[i].1)
    }
}

impl Default for StartTimes {
    fn default() -> Self {
        StartTimes {
            gauge: Some(DEFAULT_START_TIME_GAUGE.into()),
            target_labels: DEFAULT_TARGET_LABELS.iter().map(|&l| l.into()).collect(),
            targets: Vec::new(),
            by_key: HashTable::new(),
            hasher: Default::default(),
            newest_start_ms: i64::MIN,
            kept: 0,
            moved: Vec::new(),
        }
    }
}

impl StartTimes {
    /// Whether `name` is the start gauge's.
    #[inline]
    pub fn is_gauge(&self, name: &str) -> bool {
        self.gauge.as_deref() == Some(name)
    }

    /// The target `series` belongs to: its target labels' values.
    fn key_of<'s>(&self, series: &'s TrackedSeries) -> Vec<&'s str> {
        key_in(&self.target_labels, series)
    }

    /// A target's key from a series' labels, as a report names them.
    fn key_of_labels(&self, labels: &[(String, String)]) -> Vec<String> {
        self.target_labels
            .iter()
            .map(|l| {
                labels
                    .iter()
                    .find(|(name, _)| **name == **l)
                    .map_or(String::new(), |(_, v)| v.clone())
            })
            .collect()
    }

    fn hash_key<'k>(&self, key: impl IntoIterator<Item = &'k str>) -> u64 {
        key_hash(&self.hasher, key)
    }

    /// The entry of the target whose start time `sample` (of the start gauge) gives on the
    /// page of `scrape`, made if new.
    pub fn entry_for(&mut self, sample: &Sample<'_>, scrape: u64) -> usize {
        let labels = sample.labels();
        let key: Vec<String> = self
            .target_labels
            .iter()
            .map(|label| {
                labels
                    .get(label)
                    .map(|v| v.unescaped().into_owned())
                    .unwrap_or_default()
            })
            .collect();
        self.find_key(&key)
            .unwrap_or_else(|| self.push(None, key, scrape))
    }

    /// Records the start time the page gives the target of entry `index`.
    pub fn read(&mut self, index: usize, scrape: u64, value: f64) {
        if let Some(target) = self.targets.get_mut(index) {
            target.read = Some((scrape, value));
        }
    }

    fn find_key(&self, key: &[String]) -> Option<usize> {
        let hash = self.hash_key(key.iter().map(String::as_str));
        self.by_key.find(hash, |&i| self.targets[i].key == key).copied()
    }

    /// The index of the target of `series`, if one is registered.
    fn find(&self, series: &TrackedSeries) -> Option<usize> {
        let key = self.key_of(series);
        let hash = self.hash_key(key.iter().copied());
        self.by_key
            .find(hash, |&i| self.targets[i].key.iter().eq(key.iter()))
            .copied()
    }

    /// The target of `series`, if one is registered.
    fn target_of(&self, series: &TrackedSeries) -> Option<&TargetStart> {
        self.find(series).map(|i| &self.targets[i])
    }

    /// The start time of `series`' target at each of `times` (ms), or nothing when no
    /// start time of its target is known.
    /// Only when a start time is newer than `window_start_ms` (PromQL's window is open on
    /// the left: a start at or before it changes no answer, see `promql/start_aware.rs`).
    pub fn column(
        &self,
        series: &TrackedSeries,
        window_start_ms: i64,
        times: impl Iterator<Item = i64>,
    ) -> Option<Vec<Option<i64>>> {
        if self.newest_start_ms <= window_start_ms {
            return None;
        }
        let target = self.target_of(series).filter(|t| !t.runs.is_empty())?;
        Some(times.map(|t| target.at(t)).collect())
    }

    /// Remembers that `slot` holds a start gauge (a new series of the gauge's name, on
    /// the page of `scrape`).
    pub fn register(&mut self, slot: usize, series: &TrackedSeries, scrape: u64) {
        if let Some(i) = self.find(series) {
            let before = self.targets[i].slot.replace(slot);
            if i < self.kept {
                self.moved.push((i, before));
            }
            return;
        }
        let key: Vec<String> = self.key_of(series).into_iter().map(str::to_string).collect();
        self.push(Some(slot), key, scrape);
    }

    /// A new target's entry, made on the page of `scrape`; its index.
    fn push(&mut self, slot: Option<usize>, key: Vec<String>, scrape: u64) -> usize {
        let hash = self.hash_key(key.iter().map(String::as_str));
        let i = self.targets.len();
        self.targets.push(TargetStart {
            slot,
            read: None,
            last_scrape: scrape,
            key,
            start_ms: None,
            first_seen_ms: i64::MIN,
            seen_ms: i64::MIN,
            went_back_at: None,
            silent_move_at: None,
            silent_restart_at: None,
            restarted_at: None,
            runs: Vec::new(),
        });
        let (targets, hasher) = (&self.targets, &self.hasher);
        self.by_key.insert_unique(hash, i, |&j| {
            key_hash(hasher, targets[j].key.iter().map(String::as_str))
        });
        i
    }

    /// What each target's start times are, in a stable order: for the agreement checks.
    #[cfg(any(test, feature = "fuzzing"))]
    pub fn state(&self) -> Vec<String> {
        let mut state: Vec<String> = self
            .targets
            .iter()
            .map(|t| {
                format!(
                    "{:?} start {:?} runs {:?} went back {:?}",
                    t.key, t.start_ms, t.runs, t.went_back_at
                )
            })
            .collect();
        state.sort();
        state
    }

    /// Forgets everything (another gauge or other target labels).
    pub fn clear(&mut self) {
        self.targets.clear();
        self.moved.clear();
        self.by_key.clear();
        self.newest_start_ms = i64::MIN;
        self.kept = 0;
    }

    /// Keeps what the page just accepted taught.
    pub fn keep_page(&mut self) {
        self.kept = self.targets.len();
        self.moved.clear();
    }

    /// Undoes what a refused page taught: the targets it made, and its start gauges'
    /// slots, which `index` no longer holds. (It read no start time: a page that may be
    /// refused is held back until it is not.)
    pub fn forget_page(&mut self, index: &SeriesIndex) {
        for (i, slot) in self.moved.drain(..).rev() {
            self.targets[i].slot = slot;
        }
        if self.targets.len() > self.kept {
            self.targets.truncate(self.kept);
            let kept = self.kept;
            self.by_key.retain(|&mut i| i < kept);
        }
        self.forget_dead_slots(index);
    }

    /// A start gauge series that is gone leaves its slot to the next new series: the
    /// target no longer reads it (another target's gauge may come to stand there).
    fn forget_dead_slots(&mut self, index: &SeriesIndex) {
        for target in &mut self.targets {
            if target.slot.is_some_and(|slot| index.get(slot).is_none()) {
                target.slot = None;
            }
        }
    }

    /// Lets go the targets no page has given a start time for `stale_after` scrapes (as a
    /// series is let go) and not since `retention_ms` before `at_ms` (no retained point
    /// is of their time): a fleet whose instances come and go keeps only the live ones'.
    /// (A counter still shown after its page lost the start gauge for that long then reads
    /// no start time, as on a page that never had one.) Whether any went: the targets'
    /// indexes changed.
    fn let_go(&mut self, horizon: u64, at_ms: i64, retention_ms: i64, index: &SeriesIndex) -> bool {
        self.forget_dead_slots(index);
        let gone = |t: &TargetStart| {
            t.slot.is_none() && t.last_scrape <= horizon && at_ms.saturating_sub(t.seen_ms) > retention_ms
        };
        let any_gone = self.targets.iter().any(gone);
        if any_gone {
            self.targets.retain(|t| !gone(t));
            self.by_key.clear();
            let (targets, hasher) = (&self.targets, &self.hasher);
            let hash = |t: &TargetStart| key_hash(hasher, t.key.iter().map(String::as_str));
            for (i, target) in targets.iter().enumerate() {
                self.by_key.insert_unique(hash(target), i, |&j| hash(&targets[j]));
            }
        }
        self.keep_page();
        any_gone
    }
}

/// The target `series` belongs to by `target_labels`: their values (`StartTimes::key_of`).
fn key_in<'s>(target_labels: &[Box<str>], series: &'s TrackedSeries) -> Vec<&'s str> {
    target_labels
        .iter()
        .map(|label| series.label(label).unwrap_or(""))
        .collect()
}

/// The slots of the page's counters by target key: one scan for every silent move.
fn counters_by_target(
    index: &SeriesIndex,
    labels: &[Box<str>],
    scrapes: u64,
) -> HashMap<Vec<String>, Vec<usize>> {
    let mut by_target: HashMap<Vec<String>, Vec<usize>> = HashMap::new();
    for slot in 0..index.slot_count() {
        let Some(series) = index
            .get(slot)
            .filter(|s| s.last_seen == scrapes && s.counter().is_some())
        else {
            continue;
        };
        let key = key_in(labels, series).into_iter().map(str::to_string).collect();
        by_target.entry(key).or_default().push(slot);
    }
    by_target
}

/// The points of the counters in `slots`.
fn points_of<'i>(
    index: &'i SeriesIndex,
    slots: &'i [usize],
) -> impl Iterator<Item = &'i [crate::promql::Point]> {
    slots
        .iter()
        .filter_map(|&slot| Some(index.get(slot)?.counter()?.points()))
}

/// Whether a counter in `slots` went on from its point before, up or level.
fn counters_went_on(index: &SeriesIndex, slots: &[usize]) -> bool {
    points_of(index, slots)
        .any(|points| points.len() >= 2 && points[points.len() - 1].value >= points[points.len() - 2].value)
}

/// Whether every counter of a target (its `slots` on this page) went on from its value
/// (rising at most 10 times faster than it ever rose), as a restart at `start_ms` cannot:
/// counted from zero since then, it would have risen over 100 times faster (counters kept
/// across a restart: a prometheus_client multiprocess directory not wiped).
fn counters_kept(index: &SeriesIndex, slots: &[usize], start_ms: i64) -> bool {
    let rate = |a: &crate::promql::Point, b: &crate::promql::Point| {
        (b.value - a.value) / (b.timestamp_ms - a.timestamp_ms) as f64
    };
    let mut judged = false;
    for points in points_of(index, slots) {
        let [.., before, newest] = points else { continue };
        let across = rate(before, newest);
        // Its fastest rise before the move or, with no earlier point kept (an outage
        // longer than the retention), the rise across it.
        let fastest = match points.len() {
            2 => across,
            n => points[..n - 1]
                .windows(2)
                .fold(0.0, |m: f64, w| m.max(rate(&w[0], &w[1]))),
        };
        if fastest <= 0.0 {
            // Never seen to rise: nothing to tell a count kept from one counted again.
            continue;
        }
        let since_ms = newest.timestamp_ms - start_ms;
        let went_on = newest.value >= before.value && across <= 10.0 * fastest;
        if !went_on || since_ms <= 0 || newest.value / since_ms as f64 <= 100.0 * fastest {
            return false;
        }
        judged = true;
    }
    judged
}

/// Whether `series` belongs to the target `key` (its target labels' values, `""` for one
/// it lacks), compared in place: scans of every series build no key per series.
fn of_target(series: &TrackedSeries, target_labels: &[Box<str>], key: &[String]) -> bool {
    target_labels
        .iter()
        .zip(key)
        .all(|(label, value)| series.label(label).unwrap_or("") == value)
}

/// A target's labels as a report names it: those it has.
fn target_labels_of(target_labels: &[Box<str>], key: &[String]) -> Vec<(String, String)> {
    target_labels
        .iter()
        .zip(key)
        .filter(|(_, value)| !value.is_empty())
        .map(|(label, value)| (label.to_string(), value.clone()))
        .collect()
}

fn key_hash<'k>(
    hasher: &std::collections::hash_map::RandomState,
    key: impl IntoIterator<Item = &'k str>,
) -> u64 {
    let mut hasher = hasher.build_hasher();
    for value in key {
        value.hash(&mut hasher);
    }
    hasher.finish()
}

impl Tracker {
    /// After a page: each target whose start time changed restarted, and every counter of
    /// it on the page without a created time of its own is marked so (its increase since
    /// the restart counts from zero).
    pub(super) fn apply_start_times(&mut self, at_ms: i64, report: &mut IngestReport) {
        let returning = std::mem::take(&mut self.returning);
        if self.starts.targets.is_empty() {
            return;
        }
        let scrapes = self.scrapes;
        let retention_ms = self.retention.num_milliseconds();
        let skew_ms = self.start_time_skew_ms;
        // (target, cause, erratic, the starts of the process left and of the one answering)
        let mut changed: Vec<(Vec<String>, ResetCause, bool, Starts)> = Vec::new();
        // The targets a counter of which restarted by its own evidence (a drop, a new
        // `_created`): a moved start time they bear out is a restart, whatever came before.
        let evidenced: HashSet<Vec<String>> = report
            .resets
            .iter()
            .filter(|r| matches!(r.cause, ResetCause::ValueDropped | ResetCause::CreatedChanged))
            .map(|r| self.starts.key_of_labels(&r.labels))
            .collect();
        let mut misread_restarts: Vec<(Vec<String>, i64)> = Vec::new();
        let gauge = self.starts.gauge.as_deref();
        let mut counters: Option<HashMap<Vec<String>, Vec<usize>>> = None;
        for target in &mut self.starts.targets {
            let tracked = target
                .slot
                .and_then(|slot| self.index.get(slot))
                .filter(|s| s.last_seen == scrapes && gauge == Some(s.name()))
                .and_then(TrackedSeries::last_value);
            let read = target.read.filter(|r| r.0 == scrapes).map(|r| r.1);
            if tracked.is_some() || read.is_some() {
                target.last_scrape = scrapes;
            }
            // 0 is "unknown", as Prometheus reads a start time of 0.
            let Some(start_ms) = tracked
                .or(read)
                .filter(|v| v.is_finite() && *v > 0.0)
                .map(|v| (v * 1000.0).round() as i64)
            else {
                continue;
            };
            let before = target.start_ms.replace(start_ms);
            let seen_before = std::mem::replace(&mut target.seen_ms, at_ms);
            let alive_ms = seen_before.saturating_sub(target.first_seen_ms);
            self.starts.newest_start_ms = self.starts.newest_start_ms.max(start_ms);
            // Moved by more than its jitter, or told for the first time.
            let moved = before.is_none_or(|b| (start_ms - b).abs() > START_JITTER_MS);
            if !moved {
                // The same process. Each page is compared with the last, so a start time
                // that creeps never adds up to a change; the run keeps the start it began
                // with (PromQL's start-aware answers move by no more than the jitter).
                continue;
            }
            target.first_seen_ms = at_ms;
            let silent = before.is_some() && !evidenced.contains(&target.key);
            // Twice in a row within the retention, and its counters went on counting (a
            // restarted process whose counters are not printed yet is no such page).
            let again = silent && {
                let labels = &self.starts.target_labels;
                let by_target =
                    counters.get_or_insert_with(|| counters_by_target(&self.index, labels, scrapes));
                let slots = by_target.get(&target.key).map_or(&[][..], Vec::as_slice);
                target.silent_move_at.is_some_and(|t| at_ms - t <= retention_ms)
                    && counters_went_on(&self.index, slots)
                    || counters_kept(&self.index, slots, start_ms)
            };
            // A move its counters bear out starts the count afresh: only silent moves in a
            // row tell a start time that is no process's.
            target.silent_move_at = silent.then_some(at_ms);
            // No restart brings back a start an earlier process had: two answer in turn. The
            // processes are named by their runs' starts (a start jitters).
            let returned = target
                .runs
                .iter()
                .find(|r| (r.1 - start_ms).abs() <= START_JITTER_MS)
                .map(|r| r.1);
            let starts = (
                target.runs.last().map(|r| r.1),
                Some(returned.unwrap_or(start_ms)),
            );
            if !again {
                target.runs.push((at_ms, start_ms));
                let cut = target.runs.partition_point(|r| r.0 < at_ms - retention_ms);
                target.runs.drain(..cut.saturating_sub(1));
            }
            let Some(before) = before else {
                continue;
            };
            // Backwards, or a new process that started sooner after the old one than the
            // old one was seen alive (it was running then): two processes, not a restart.
            // Server time is compared with server time, page time with page time: a
            // server's clock that is off changes nothing.
            // With a skew allowed, a start before the page that last showed the old
            // process (by more than the skew) is one more way to tell two processes.
            let while_seen = skew_ms.is_some_and(|skew| start_ms < seen_before.saturating_sub(skew));
            let cause = if start_ms < before
                || start_ms - before < alive_ms - OVERLAP_MS
                || while_seen
                || returned.is_some()
            {
                target.went_back_at = Some(at_ms);
                ResetCause::StartWentBack
            } else if again {
                // Moved forward again and no counter restarted either time: a start time
                // computed from a clock, not a process's. The counters go by their values.
                ResetCause::StartTimeMoving
            } else {
                ResetCause::ProcessRestarted
            };
            let erratic = target.went_back_at.is_some_and(|t| at_ms - t <= retention_ms);
            report.process_restarts.push(ProcessRestart {
                target: target_labels_of(&self.starts.target_labels, &target.key),
                from: crate::promql::millis_to_time(before),
                to: crate::promql::millis_to_time(start_ms),
                cause,
            });
            if cause == ResetCause::ProcessRestarted {
                target.restarted_at = Some(at_ms);
                target.silent_restart_at = silent.then_some(at_ms);
            }
            if cause == ResetCause::StartTimeMoving {
                // The move read as a restart before this one was no restart either.
                if let Some(misread) = target.silent_restart_at.take() {
                    misread_restarts.push((target.key.clone(), misread));
                }
            }
            if cause != ResetCause::StartTimeMoving {
                changed.push((target.key.clone(), cause, erratic, starts));
            }
        }
        self.mark_returning(&returning, report);
        self.take_back_misread(&misread_restarts);
        if changed.is_empty() {
            return;
        }
        // Few targets change at once (a linear search, no string built per series); a
        // federation whose many instances restarted together is looked up by hash.
        let by_key: Option<HashMap<Vec<String>, usize>> = (changed.len() > 16).then(|| {
            changed
                .iter()
                .enumerate()
                .map(|(i, c)| (c.0.clone(), i))
                .collect()
        });
        let starts = &self.starts;
        for series in self.index.iter_mut() {
            if series.last_seen != scrapes || series.counter().is_none() {
                continue;
            }
            let key = starts.key_of(series);
            let found = match &by_key {
                Some(map) => map
                    .get(&key.iter().map(|v| v.to_string()).collect::<Vec<_>>())
                    .copied(),
                None => changed.iter().position(|c| c.0.iter().eq(key.iter())),
            };
            let Some((_, cause, erratic, starts)) = found.map(|i| &changed[i]) else {
                continue;
            };
            let super::SeriesData::Counter(counter) = &mut series.data else {
                continue;
            };
            if let Some(cause) = counter.mark_restart(*cause, *erratic, *starts) {
                report.resets.push(ResetEvent {
                    name: series.name.to_string(),
                    labels: series.owned_labels(),
                    cause,
                });
            }
        }
    }
}

impl Tracker {
    /// For each `(target, page time)`: its counters' restart at that page, which a start
    /// time that proved to be no process's made, is taken back (a scan of the series: once
    /// per such start time).
    fn take_back_misread(&mut self, misread: &[(Vec<String>, i64)]) {
        if misread.is_empty() {
            return;
        }
        let target_labels = &self.starts.target_labels;
        for series in self.index.iter_mut() {
            let Some(&(_, at_ms)) = misread
                .iter()
                .find(|(key, _)| of_target(series, target_labels, key))
            else {
                continue;
            };
            if let super::SeriesData::Counter(counter) = &mut series.data {
                counter.unmark_restart_at(at_ms);
            }
        }
    }

    /// Counters back on this page whose target restarted while they were away (their point
    /// before is older than the restart's page): counted from zero, as the restart's other
    /// counters were (an exporter that prints a counter only once it is touched).
    fn mark_returning(&mut self, returning: &[usize], report: &mut IngestReport) {
        for &slot in returning {
            let Some(series) = self.index.get(slot) else {
                continue;
            };
            let restarted_at = self
                .starts
                .find(series)
                .and_then(|i| self.starts.targets[i].restarted_at);
            let before = series
                .counter()
                .and_then(|c| c.points().iter().rev().nth(1).copied());
            let (Some(restarted_at), Some(before)) = (restarted_at, before) else {
                continue;
            };
            if before.timestamp_ms >= restarted_at {
                continue;
            }
            let Some(series) = self.index.get_mut(slot) else {
                continue;
            };
            let super::SeriesData::Counter(counter) = &mut series.data else {
                continue;
            };
            if let Some(cause) = counter.mark_restart(ResetCause::ProcessRestarted, false, (None, None)) {
                report.resets.push(ResetEvent {
                    name: series.name.to_string(),
                    labels: series.owned_labels(),
                    cause,
                });
            }
        }
    }
}

impl Tracker {
    /// After a page and its stale series: lets go the targets gone as long (see
    /// [`StartTimes::let_go`]).
    pub(super) fn let_go_of_gone_targets(&mut self, at_ms: i64) {
        let horizon = self.scrapes.saturating_sub(u64::from(self.stale_after));
        let retention_ms = self.retention.num_milliseconds();
        if self.starts.let_go(horizon, at_ms, retention_ms, &self.index) {
            // The position cache names targets by index.
            self.positions.clear();
        }
    }
}

#[cfg(test)]
mod tests;
