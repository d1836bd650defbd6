//! The monitor's one-way pipeline, without any IO: scrapes go in ([`Pipeline::ingest`]),
//! each interval is computed at its scheduled time into an immutable [`Snapshot`]
//! ([`Pipeline::tick`], where the signals judge too), and the outputs read the snapshot,
//! the history and the events ([`Pipeline::view`]). A live run and a replay drive the same
//! pipeline with the same scrapes in the same order, so they compute the same intervals.

use chrono::{DateTime, TimeDelta, Utc};

use crate::alerts::{Alerts, Rule};
use crate::clock::Schedule;
use crate::events::{Event, EventKind};
use crate::figures::slo::Objective;
use crate::gpus::GpuSettings;
use crate::scrape::{read_page, PageRead, Scrape, SMALL_PAGE};
use crate::signals::Signals;
use crate::snapshot::Run;
use crate::snapshot::{History, Moment, Snapshot};
use crate::summary::Summary;
use crate::target::{ServerRow, Target};
use promrate::WindowRule;

/// How the figures are computed: the user's settings, once.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The window (a whole number of intervals, see [`window_of`]) and the scrape interval.
    pub window: TimeDelta,
    pub interval: TimeDelta,
    pub timeout: TimeDelta,
    /// The EWMA's time constant (`--ewma-tau`, else the window).
    pub ewma_tau: TimeDelta,
    pub by: Option<String>,
    /// Groups a screen shows (`--max-groups`), the rest summed into one row.
    pub max_groups: usize,
    pub target_requests: Option<u64>,
    pub gpu: GpuSettings,
    /// The `--slo` objectives (none without).
    pub slo: Vec<Objective>,
    /// The most series one URL's tracker holds (`--max-series`): a page that would take it
    /// past is refused whole, so a URL serving millions of series costs bounded memory.
    pub max_series: usize,
    /// How often series get points when that is not the interval: a TSDB's own scrape
    /// interval, measured (`--prometheus`). Each series' points are allocated for what
    /// the retention holds at it.
    pub points_every: Option<TimeDelta>,
}

/// How far apart a federation's samples may come: two of Prometheus' default scrape
/// intervals (a minute). Its series are made before its pages show how far apart (how
/// far their own times lag the scrape), and an EWMA that starts afresh at every point has
/// no value: through `/federate` of a TSDB scraping every 15 s, read every 2 s, it had
/// none on any row.
const FEDERATION_POINTS_APART: TimeDelta = TimeDelta::minutes(2);

/// The pause past which a URL's EWMA starts afresh: two intervals and a timeout, and for a
/// `/federate` URL as long as its samples may come apart too.
fn ewma_gap(settings: &Settings, url: &str) -> TimeDelta {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    match path.trim_end_matches('/').ends_with("/federate") {
        true => settings.out_after() + FEDERATION_POINTS_APART,
        false => settings.out_after(),
    }
}

/// How long a series missing from the pages is kept: PromQL's default lookback.
const STALE_AFTER: TimeDelta = TimeDelta::minutes(5);

impl Settings {
    /// A URL whose newest page is older than this is out of the figures, and an interval
    /// between two points longer than this is a gap the EWMA does not blend across: two
    /// of the intervals points come at ([`Settings::pace`]) and a scrape's timeout (for
    /// scrapes that take longer to read, see [`Settings::windowing`]).
    pub fn out_after(&self) -> TimeDelta {
        self.pace() * 2 + self.timeout
    }

    /// How far apart a series' points come: an interval, or a TSDB's own scrape interval
    /// when that is longer (Prometheus scraping every 15 s read every 2 s: 15 s between
    /// points is no outage).
    pub fn pace(&self) -> TimeDelta {
        self.points_every
            .map_or(self.interval, |every| every.max(self.interval))
    }

    /// Pages a series may miss before its tracker drops it: five minutes' worth, as
    /// PromQL's lookback. Back before that (a Thanos answer missing a store's series for a
    /// while, an exporter skipping a family), a counter goes on from its own points, the
    /// tokens of the gap counted; dropped, it came back as a new series and they were lost.
    /// A series missing from the newest page is out of the window's figures at once.
    pub fn stale_after_pages(&self) -> u32 {
        let pace = self
            .points_every
            .unwrap_or(self.interval)
            .num_milliseconds()
            .max(1);
        let pages = (STALE_AFTER.num_milliseconds() + pace - 1) / pace;
        u32::try_from(pages)
            .unwrap_or(u32::MAX)
            .clamp(promrate::tracker::DEFAULT_STALE_AFTER, 100_000)
    }

    /// How old a URL's newest page may be and still count, when scrapes take up to `slow`
    /// to fetch and read: the next page comes at most an interval after one is read, and
    /// takes as long to read again.
    pub fn fresh_for(&self, slow: TimeDelta) -> TimeDelta {
        self.out_after() + slow * 2
    }

    /// Points kept per series: the window, and the slack its start may take. A page comes
    /// once an interval, so the point nearest the window's start is at most an interval
    /// away; when series get points at a TSDB's pace (`--prometheus`, [`points_every`]), at
    /// most one of its scrape intervals away, so two of those suffice when they are shorter
    /// (10,000 servers read every minute from a TSDB scraping every 30 s: 7 points a series,
    /// not 9).
    ///
    /// [`points_every`]: Settings::points_every
    pub fn retention(&self) -> TimeDelta {
        let every = self
            .points_every
            .map_or(self.interval, |every| every.min(self.interval));
        self.window + every * 2
    }

    /// The window rule when scrapes take up to `slow` (the request sent to its page read):
    /// a URL's next scrape starts at most an interval after its page is read, so its pages
    /// may be `slow` and an interval apart (a TSDB's points its scrape interval apart)
    /// without any outage. The slack reaches back that far, and only a longer pause is a
    /// gap: a page slow to read (a large page, a busy machine) is not an outage.
    pub fn windowing(&self, slow: TimeDelta) -> WindowRule {
        WindowRule::new(self.window)
            .slack(self.pace() + slow)
            .gap(self.out_after() + slow)
    }
}

/// The window the figures use for `asked`: a whole number of scrape intervals (at least
/// one), so that its start falls on a scrape and a few milliseconds of jitter cannot move
/// it by a whole interval.
pub fn window_of(asked: TimeDelta, interval: TimeDelta) -> TimeDelta {
    let ms = interval.num_milliseconds().max(1);
    let intervals = ((asked.num_milliseconds() as f64 / ms as f64).round() as i64).max(1);
    TimeDelta::milliseconds(intervals * ms)
}

/// What the pipeline has to say beyond the intervals, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Said {
    /// The run's event of this number (counted from the run's first) was announced:
    /// [`Pipeline::event`].
    Event(usize),
    /// A remark for people (plain and dashboard; JSON has the facts as fields).
    Note(String),
}

/// The monitor's state, fed by a driver (live or replay).
pub struct Pipeline {
    settings: Settings,
    schedule: Schedule,
    /// Each URL's target; `None` while it is lent to be read into ([`Pipeline::lend`]).
    targets: Vec<Option<Target>>,
    /// Each URL's page being read elsewhere: since when, and its size in bytes.
    reading: Vec<Option<(DateTime<Utc>, crate::http::PageSize)>>,
    /// Whether an interval was computed while the URL's page was still being read.
    busy_seen: Vec<bool>,
    /// Whether the URL's slowness was announced: once until a scrape succeeds within half
    /// an interval.
    slow_announced: Vec<bool>,
    /// How long each URL's last two successful scrapes took, request to page read (the
    /// window's allowance for slow reads, [`Settings::windowing`]).
    scrape_took: Vec<[TimeDelta; 2]>,
    signals: Signals,
    alerts: Alerts,
    history: History,
    /// The newest events, [`crate::events::EVENTS_KEPT`] at most; what is left of the
    /// others.
    events: Vec<(f64, Event)>,
    earlier_events: crate::events::EarlierEvents,
    last: Option<Snapshot>,
    /// The newest interval that had the tokens and requests since the start, and when:
    /// the summary's, when the last interval lacks them (its page was cut before them).
    counted: Option<(DateTime<Utc>, f64, Option<f64>)>,
    setup: String,
    warnings: Vec<String>,
    servers: Vec<ServerRow>,
    pages_since_tick: usize,
    ticks: u64,
    /// Intervals a live run fell too far behind to compute (skipped to catch up).
    skipped_ticks: u64,
    /// Whether a `--by` label that no series has was said.
    by_missing_said: bool,
}

impl Pipeline {
    /// A pipeline for `urls` (as shown), on `schedule`.
    pub fn new(
        settings: Settings,
        schedule: Schedule,
        urls: &[String],
        setup: String,
        warnings: Vec<String>,
    ) -> Pipeline {
        let targets: Vec<Target> = urls
            .iter()
            .map(|url| {
                let mut t = Target::new(url.clone(), settings.retention());
                t.by = settings.by.clone();
                t.tracker
                    .ewma_time_constant(settings.ewma_tau)
                    .ewma_restart_after(ewma_gap(&settings, url))
                    // Pages come once an interval: each series' points are allocated once.
                    .expect_interval(settings.points_every.unwrap_or(settings.interval))
                    // A server's page repeats its label sets under many names: 10,000
                    // vLLM servers through `/federate` take 1.32 GB instead of 1.50.
                    .share_label_sets(true)
                    .max_series(settings.max_series)
                    .stale_after(settings.stale_after_pages());
                if settings.points_every.is_none() {
                    // A TSDB's samples lag by its scrape interval by design (the window
                    // evaluates where they are); a server's own times are said.
                    t.say_when_times_pass(settings.window + settings.interval);
                }
                t
            })
            .collect();
        Pipeline {
            servers: targets.iter().map(ServerRow::of).collect(),
            reading: vec![None; urls.len()],
            busy_seen: vec![false; urls.len()],
            slow_announced: vec![false; urls.len()],
            scrape_took: vec![[TimeDelta::zero(); 2]; urls.len()],
            targets: targets.into_iter().map(Some).collect(),
            settings,
            schedule,
            signals: Signals::default(),
            alerts: Alerts::default(),
            history: History::default(),
            events: Vec::new(),
            earlier_events: crate::events::EarlierEvents::default(),
            last: None,
            counted: None,
            by_missing_said: false,
            setup,
            warnings,
            pages_since_tick: 0,
            ticks: 0,
            skipped_ticks: 0,
        }
    }

    /// Judges `rules` on every interval from now on (`--alert`).
    pub fn alert_on(&mut self, rules: Vec<Rule>) {
        self.alerts = Alerts::new(rules);
    }

    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Intervals computed so far.
    pub fn ticks(&self) -> u64 {
        self.ticks
    }

    pub fn events(&self) -> &[(f64, Event)] {
        &self.events
    }

    /// Reads one scrape (`skipped` newer-page-wins skips before it) here and now; what it
    /// announces. A replay reads every page so; a live run reads them on the URLs' workers
    /// ([`Pipeline::lend`], [`read_page`], [`Pipeline::read`]), which come to the same.
    pub fn ingest(&mut self, scrape: &Scrape, skipped: u64) -> Vec<Said> {
        let Some(mut target) = self.targets.get_mut(scrape.url).and_then(Option::take) else {
            return Vec::new();
        };
        let read = read_page(&mut target, scrape, skipped);
        self.read(target, read)
    }

    /// Says `message` about URL `url` at `at`, a warning: what a source says beside its
    /// pages (a TSDB's warnings, samples it left out).
    pub fn warn_of(&mut self, url: usize, at: DateTime<Utc>, message: String) -> Said {
        let source = self
            .targets
            .get(url)
            .and_then(Option::as_ref)
            .map_or_else(String::new, |t| t.url.clone());
        let elapsed = self.schedule.since_start(at);
        self.warn_at(source, at, elapsed, message)
    }

    /// A warning event of `source`, at `at`, `elapsed` seconds into the run.
    fn warn_at(&mut self, source: String, at: DateTime<Utc>, elapsed: f64, message: String) -> Said {
        let event = Event {
            kind: EventKind::Warning,
            at,
            source,
            message,
            alert: None,
        };
        self.announce(elapsed, event)
    }

    /// URL `url`'s target, unless it is lent (for tests that look into its tracker).
    #[cfg(test)]
    pub fn target(&self, url: usize) -> Option<&Target> {
        self.targets.get(url)?.as_ref()
    }

    /// Lends URL `url`'s target, to read a page of `bytes` into it elsewhere (its worker)
    /// from `since` on; `None` if it is lent already. Until it comes back
    /// ([`Pipeline::read`]) intervals leave the URL out, and the first one says so.
    pub fn lend(
        &mut self,
        url: usize,
        since: DateTime<Utc>,
        size: impl Into<crate::http::PageSize>,
    ) -> Option<Target> {
        let target = self.targets.get_mut(url)?.take()?;
        self.reading[url] = Some((since, size.into()));
        Some(target)
    }

    /// Takes back a target with the page read into it ([`read_page`]); what it announces.
    pub fn read(&mut self, target: Target, read: PageRead) -> Vec<Said> {
        let url = read.url;
        let Some(slot) = self.targets.get_mut(url) else {
            return Vec::new();
        };
        self.reading[url] = None;
        let busy = std::mem::take(&mut self.busy_seen[url]);
        let mut said: Vec<Said> = read.notes.into_iter().map(Said::Note).collect();
        let mut announced = read.events;
        let interval = self.settings.interval.as_seconds_f64();
        // A failed scrape's slowness is its fault's to say (timed out, body too slow).
        let slow = (read.seconds > interval && read.ok) || busy;
        if slow && !self.slow_announced[url] {
            announced.push(Event {
                kind: EventKind::Slow,
                at: read.at,
                source: target.url.clone(),
                message: format!(
                    "a scrape took {:.1} s, longer than the {interval} s interval: intervals without a new page repeat no judgement",
                    read.seconds
                ),
                alert: None,
            });
        }
        // Recovered only by a scrape that succeeds in half an interval or less: a server
        // whose scrapes fail fast between slow ones, or take about the interval (slow,
        // then just in time, then slow), is one slow spell, said once.
        let fast = read.row.status.is_ok() && !busy && read.seconds <= interval / 2.0;
        self.slow_announced[url] = (self.slow_announced[url] || slow) && !fast;
        if read.news {
            self.pages_since_tick += 1;
        }
        if read.row.status.is_ok() {
            let took = TimeDelta::microseconds((read.seconds * 1e6) as i64);
            let [_, last] = self.scrape_took[url];
            self.scrape_took[url] = [last, took];
        }
        // The URL's row as it is now (a fault is shown before the next interval): rows
        // change only here, so a tick's snapshot copies them and nothing else updates them.
        self.servers[url] = read.row;
        *slot = Some(target);
        for event in announced {
            let elapsed = self.schedule.since_start(event.at);
            if event.kind == EventKind::Restart {
                self.history.restarts.push(elapsed);
            }
            said.push(self.announce(elapsed, event));
        }
        said
    }

    /// Until when the interval due at `due` waits for the pages being read elsewhere, if
    /// it waits at all. A page under [`SMALL_PAGE`] reads in milliseconds: it is waited
    /// for (an interval at most), as leaving its URL out would make the live run differ
    /// from its replay for nothing. A larger one is waited for half an interval at most,
    /// and not at all once an interval found its URL still reading or in a slow spell:
    /// waiting for those would make the other URLs' rows late every time.
    pub fn awaited_until(&self, due: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let interval = self.settings.interval;
        (0..self.reading.len())
            .filter_map(|url| {
                let (_, size) = self.reading[url]?;
                if size.estimate(SMALL_PAGE) < SMALL_PAGE {
                    Some(due + interval)
                } else if !self.busy_seen[url] && !self.slow_announced[url] {
                    Some(due + interval / 2)
                } else {
                    None
                }
            })
            .max()
    }

    /// Said at an interval, once a slow spell, of each URL whose page is still being read:
    /// it is left out of the interval, which the other URLs' pages make on time.
    fn still_reading(&mut self, at: DateTime<Utc>) -> Vec<Event> {
        let mut events = Vec::new();
        for url in 0..self.reading.len() {
            let Some((since, size)) = self.reading[url] else {
                continue;
            };
            self.busy_seen[url] = true;
            if std::mem::replace(&mut self.slow_announced[url], true) {
                continue;
            }
            events.push(Event {
                kind: EventKind::Slow,
                at,
                source: self.servers[url].url.clone(),
                message: format!(
                    "its page ({size}) is still being read after {:.1} s when the {} s interval is due: left out of it, the other URLs are on time (--max-page-mib and --max-series bound a page)",
                    (at - since).as_seconds_f64().max(0.0),
                    self.settings.interval.as_seconds_f64()
                ),
                alert: None,
            });
        }
        events
    }

    fn announce(&mut self, elapsed: f64, event: Event) -> Said {
        if self.events.len() >= crate::events::EVENTS_KEPT {
            let oldest = self.events.drain(..crate::events::EVENTS_KEPT / 2);
            self.earlier_events.forget(oldest);
        }
        self.events.push((elapsed, event));
        Said::Event(self.earlier_events.count + self.events.len() - 1)
    }

    /// The run's event of this number, while it is kept.
    pub fn event(&self, number: usize) -> Option<&(f64, Event)> {
        self.events.get(number.checked_sub(self.earlier_events.count)?)
    }

    /// Computes the next interval at its scheduled time; what it announces.
    pub fn tick(&mut self) -> Vec<Said> {
        self.ticks += 1;
        let at = self.schedule.tick_at(self.ticks);
        let elapsed = self.schedule.elapsed(self.ticks);
        let slow = self.slowest_scrape();
        // Points a federation's scrape interval apart are no outage either.
        let lag = self.targets.iter().flatten().map(Target::samples_lag).max();
        let moment = Moment {
            windowing: self
                .settings
                .windowing(slow + lag.unwrap_or_else(TimeDelta::zero)),
            at,
            elapsed,
            fresh: at - self.settings.fresh_for(slow),
            fresh_pages: std::mem::take(&mut self.pages_since_tick),
            by: self.settings.by.as_deref(),
            max_groups: self.settings.max_groups,
            target_requests: self.settings.target_requests,
            slo: &self.settings.slo,
            gpu: &self.settings.gpu,
        };
        let present: Vec<&Target> = self.targets.iter().flatten().collect();
        let snapshot = Snapshot::compute(&present, &self.servers, &moment);
        let fresh = moment.fresh_pages > 0;
        let mut said = Vec::new();
        for event in self.still_reading(at) {
            said.push(self.announce(elapsed, event));
        }
        let (verdict, events) = self.signals.judge(&snapshot.figures, snapshot.at, fresh);
        let snapshot = snapshot.judged(verdict);
        for event in events {
            said.push(self.announce(elapsed, event));
        }
        // After the signals, whose verdict the rules read (`stalled`).
        let (events, notes) = self.alerts.judge(&snapshot, fresh);
        said.extend(notes.into_iter().map(Said::Note));
        for event in events {
            said.push(self.announce(elapsed, event));
        }
        if let Some(message) = self.by_label_missing(&snapshot) {
            // A warning event, not a note: `--json` and `--export csv` drop notes, and a
            // misspelt label would leave their rows without groups and without a word.
            said.push(self.warn_at("all servers".into(), at, elapsed, message));
        }
        self.history.push(&snapshot);
        let since_start = &snapshot.figures.since_start;
        if let (Some(generated), true) = (since_start.generated, since_start.counting) {
            self.counted = Some((snapshot.at, generated, since_start.finished));
        }
        self.last = Some(snapshot);
        said
    }

    /// Said once: the pages have figures, but no series has the `--by` label (a
    /// misspelling gives no group rows at all), with the labels the series do have.
    fn by_label_missing(&mut self, snapshot: &Snapshot) -> Option<String> {
        let (label, groups) = snapshot.groups.as_ref()?;
        let has_data =
            snapshot.figures.generation.window.is_some() || snapshot.figures.in_flight.running.is_some();
        if self.by_missing_said || label == "url" || !groups.is_empty() || !has_data {
            return None;
        }
        self.by_missing_said = true;
        let mut labels = std::collections::BTreeSet::new();
        for target in self.targets.iter().flatten() {
            for series in target.tracker.series().take(10_000) {
                labels.extend(series.labels().map(|(name, _)| name.to_string()));
            }
        }
        let labels: Vec<String> = labels.into_iter().collect();
        Some(format!(
            "--by {label}: no series on the pages has a `{label}` label, so there is no group (the labels there are: {})",
            if labels.is_empty() { "none".to_string() } else { labels.join(", ") }
        ))
    }

    /// The longest a URL's recent successful scrape took, request to page read.
    fn slowest_scrape(&self) -> TimeDelta {
        self.scrape_took
            .iter()
            .flatten()
            .copied()
            .max()
            .unwrap_or_else(TimeDelta::zero)
    }

    /// Leaves the next interval out: a live run that fell behind catches up by computing
    /// the newest interval due, not every one it missed (counted in the summary; a replay
    /// of its recording computes them all).
    pub fn skip_tick(&mut self) {
        self.ticks += 1;
        self.skipped_ticks += 1;
    }

    /// Leaves the next `n` intervals out (a replay's stretch without a page, see
    /// [`Pipeline::quiet_after`]), counted as a live run's skipped ones.
    pub fn skip_ticks(&mut self, n: u64) {
        self.ticks = self.ticks.saturating_add(n);
        self.skipped_ticks = self.skipped_ticks.saturating_add(n);
    }

    /// How long after the newest page an interval that reads none still shows something
    /// new: until every page is out of the figures (they are not fresh after
    /// [`Settings::fresh_for`]), and one interval more. After that, each such interval is
    /// the same row as the one before, but for its time.
    pub fn quiet_after(&self) -> TimeDelta {
        self.settings.fresh_for(self.slowest_scrape()) + self.settings.interval
    }

    /// Announces a warning of `source` (a replay's bad line) at the newest interval.
    pub fn warn(&mut self, source: &str, message: String) -> Said {
        let (at, elapsed) = (
            self.schedule.tick_at(self.ticks),
            self.schedule.elapsed(self.ticks),
        );
        self.warn_at(source.to_string(), at, elapsed, message)
    }

    /// Intervals skipped so far.
    pub fn skipped_ticks(&self) -> u64 {
        self.skipped_ticks
    }

    /// The newest interval, if one was computed.
    pub fn snapshot(&self) -> Option<&Snapshot> {
        self.last.as_ref()
    }

    /// The run as the outputs see it.
    pub fn view(&self) -> Run<'_> {
        Run {
            started: self.schedule.started,
            setup: &self.setup,
            interval: self.settings.interval,
            ewma_tau: self.settings.ewma_tau,
            warnings: &self.warnings,
            snapshot: self.last.as_ref(),
            history: &self.history,
            servers: &self.servers,
            events: &self.events,
            earlier: &self.earlier_events,
        }
    }

    /// The run in figures, at its end (its length: the intervals computed).
    pub fn summary(&self) -> Summary {
        let mut summary = Summary::new(&self.view(), self.schedule.elapsed(self.ticks));
        // The last interval's pages had no token counter (a page cut before its counters,
        // a server gone or leaving the family out): the count as last known, its mean over
        // the span up to the newest interval that counted.
        let counting = self.last.as_ref().is_some_and(|s| s.figures.since_start.counting);
        if let (false, Some((at, generated, finished))) = (counting, self.counted) {
            let generated = summary.generated_tokens.unwrap_or(generated);
            summary.generated_tokens = Some(generated);
            summary.finished_requests = summary.finished_requests.or(finished);
            summary.mean_generation_rate = crate::summary::counted_span(&self.servers, at)
                .map(|span| span.as_seconds_f64())
                .filter(|span| *span > 0.0)
                .map(|span| generated / span);
        }
        // A first page still being read when the run ended: its server did answer.
        for (url, reason) in &mut summary.never_answered {
            let reading = self
                .servers
                .iter()
                .zip(&self.reading)
                .find(|(row, _)| row.url == *url);
            if let Some((_, Some((since, size)))) = reading {
                *reason = format!(
                    "its first page ({size}) was still being read when the run ended, since {:.1} s into the run",
                    self.schedule.since_start(*since)
                );
            }
        }
        summary.skipped_intervals = self.skipped_ticks;
        summary.alerts = self.alerts.fired();
        summary
    }

    /// The time of the next interval.
    pub fn next_tick_at(&self) -> DateTime<Utc> {
        self.schedule.tick_at(self.ticks + 1)
    }

    /// Whether the run has computed its last interval (`--duration`).
    pub fn is_over(&self) -> bool {
        self.schedule.is_over(self.ticks + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::Page;
    use crate::simulator::Simulation;
    use std::time::Duration;

    /// A monitor of `sim` scraping every 2 s from `phase` seconds on, each scrape a little
    /// late or early (up to 60 ms, a fixed pseudo-random sequence), window 10 s: each
    /// interval's generation window rate, the span it states, and the span's ends in
    /// seconds of the simulation.
    fn monitor(sim: &Simulation, phase: f64, seed: u64) -> Vec<(f64, f64, f64, f64)> {
        let started = DateTime::from_timestamp_millis((sim.started_unix * 1000.0) as i64).unwrap();
        let settings = Settings {
            window: TimeDelta::seconds(10),
            interval: TimeDelta::seconds(2),
            timeout: TimeDelta::seconds(2),
            ewma_tau: TimeDelta::seconds(10),
            by: None,
            max_groups: crate::top::DEFAULT_MAX_GROUPS,
            target_requests: None,
            gpu: GpuSettings::default(),
            slo: Vec::new(),
            max_series: usize::MAX,
            points_every: None,
        };
        let schedule = Schedule::new(started, Duration::from_secs(2), Some(Duration::from_secs(60)));
        let mut p = Pipeline::new(
            settings,
            schedule,
            &["sim".to_string()],
            String::new(),
            Vec::new(),
        );
        let mut state = seed;
        let mut rows = Vec::new();
        for n in 0..30 {
            // xorshift: jitter in [-60, 60] ms.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let jitter = (state % 121) as f64 / 1000.0 - 0.06;
            let t = phase + 2.0 * n as f64 + jitter;
            let start = started + TimeDelta::microseconds((t * 1e6) as i64);
            while p.next_tick_at() <= start && !p.is_over() {
                p.tick();
                let f = &p.snapshot().unwrap().figures;
                if let (Some(rate), Some(span), None) =
                    (f.generation.window, f.window.span, f.window.shortened)
                {
                    let s = |at: DateTime<Utc>| (at - started).as_seconds_f64();
                    rows.push((rate, span.seconds, s(span.start), s(span.end)));
                }
            }
            let page = Page {
                body: sim.render_at(t),
                format: promrate::Format::PrometheusText,
                content_type: None,
            };
            let scrape = Scrape {
                url: 0,
                start,
                end: start + TimeDelta::milliseconds(10),
                result: Ok(page),
            };
            p.ingest(&scrape, 0);
        }
        rows
    }

    /// Settings of a plain run (no groups, no SLO): a window, an interval and a timeout,
    /// in seconds, the EWMA's time constant the window.
    fn plain_settings(window: i64, interval: i64, timeout: i64) -> Settings {
        Settings {
            window: TimeDelta::seconds(window),
            interval: TimeDelta::seconds(interval),
            timeout: TimeDelta::seconds(timeout),
            ewma_tau: TimeDelta::seconds(window),
            by: None,
            max_groups: crate::top::DEFAULT_MAX_GROUPS,
            target_requests: None,
            gpu: GpuSettings::default(),
            slo: Vec::new(),
            max_series: usize::MAX,
            points_every: None,
        }
    }

    /// The points kept reach two intervals before the window, or two of a TSDB's scrape
    /// intervals when series get points at that pace and it is the shorter: the point
    /// nearest the window's start is at most one of them away.
    #[test]
    fn the_retention_reaches_back_two_of_the_shorter_of_interval_and_point_spacing() {
        let minutes = |m: i64| TimeDelta::minutes(m);
        let mut settings = plain_settings(120, 60, 10);
        assert_eq!(settings.retention(), minutes(4));
        settings.points_every = Some(TimeDelta::seconds(30));
        assert_eq!(settings.retention(), minutes(3));
        // A TSDB scraping less often than the monitor reads: the interval still rules.
        settings.points_every = Some(minutes(5));
        assert_eq!(settings.retention(), minutes(4));
    }

    /// A proxy that delays `/metrics` by 3.5 s, scraped every second: pages come every
    /// 3.5 s, the intervals between say so (no new page), the slow scrape is announced once
    /// with its duration, and no stall is judged while the server generates.
    #[test]
    fn a_slow_scrape_is_slow_not_a_stall() {
        let sim = Simulation::new(None).with_wave(0.0);
        let started = DateTime::from_timestamp_millis((sim.started_unix * 1000.0) as i64).unwrap();
        let settings = plain_settings(10, 1, 5);
        let schedule = Schedule::new(started, Duration::from_secs(1), Some(Duration::from_secs(40)));
        let mut p = Pipeline::new(
            settings,
            schedule,
            &["slow".to_string()],
            String::new(),
            Vec::new(),
        );
        let mut said = Vec::new();
        let (mut stale_rows, mut rows) = (0, 0);
        for n in 0..11 {
            let t = 3.5 * n as f64;
            let start = started + TimeDelta::milliseconds((t * 1000.0) as i64);
            let end = start + TimeDelta::milliseconds(3_500);
            while p.next_tick_at() <= end && !p.is_over() {
                said.extend(p.tick());
                let s = p.snapshot().unwrap();
                assert!(!s.verdict.stalled, "at {}", s.elapsed);
                rows += 1;
                stale_rows += usize::from(s.window.fresh_pages == 0);
            }
            let page = Page {
                body: sim.render_at(t),
                format: promrate::Format::PrometheusText,
                content_type: None,
            };
            said.extend(p.ingest(
                &Scrape {
                    url: 0,
                    start,
                    end,
                    result: Ok(page),
                },
                0,
            ));
        }
        let kinds: Vec<EventKind> = said
            .iter()
            .filter_map(|s| match s {
                Said::Event(i) => Some(p.event(*i).unwrap().1.kind),
                Said::Note(_) => None,
            })
            .collect();
        assert_eq!(kinds, [EventKind::Slow], "{:?}", p.events());
        assert!(
            p.events()[0].1.message.contains("3.5 s"),
            "{}",
            p.events()[0].1.message
        );
        // Of every 3.5 intervals, one reads a new page.
        assert!(
            rows >= 30 && stale_rows * 10 >= rows * 6,
            "{stale_rows} of {rows}"
        );
    }

    /// A federation whose server is scraped every 15 s, read every second: the pages
    /// between its scrapes repeat the samples it holds, with their own times. They are no
    /// new page: nothing is judged on them (requests run and the token count stands still
    /// on them, which read as a stall 3 s after each scrape), and their rows say so. Points
    /// 15 s apart are no outage: every full window has the server's rate (every row said
    /// "one page since scrapes resumed").
    #[test]
    fn repeated_samples_are_no_new_page_and_no_stall() {
        let sim = Simulation::new(None).with_wave(0.0);
        let started = DateTime::from_timestamp_millis((sim.started_unix * 1000.0) as i64).unwrap();
        let schedule = Schedule::new(started, Duration::from_secs(1), Some(Duration::from_secs(120)));
        let mut p = Pipeline::new(
            plain_settings(60, 1, 5),
            schedule,
            &["http://prom:9090/federate?match[]=x".to_string()],
            String::new(),
            Vec::new(),
        );
        let (mut rows, mut stale_rows, mut rated) = (0, 0, 0);
        for n in 0..120 {
            let t = n as f64;
            // What the federation holds at `t`: its last scrape's samples, with its time.
            let scraped = (t / 15.0).floor() * 15.0;
            let stamp = (sim.started_unix * 1000.0) as i64 + (scraped * 1000.0) as i64;
            let body: String = sim
                .render_at(scraped)
                .lines()
                .map(|line| match line.starts_with('#') || line.is_empty() {
                    true => format!("{line}\n"),
                    false => format!("{line} {stamp}\n"),
                })
                .collect();
            let start = started + TimeDelta::milliseconds((t * 1000.0) as i64 + 100);
            let page = Page {
                body,
                format: promrate::Format::PrometheusText,
                content_type: None,
            };
            let scrape = Scrape {
                url: 0,
                start,
                end: start + TimeDelta::milliseconds(20),
                result: Ok(page),
            };
            p.ingest(&scrape, 0);
            while p.next_tick_at() <= start + TimeDelta::milliseconds(900) && !p.is_over() {
                p.tick();
                let s = p.snapshot().unwrap();
                assert!(!s.verdict.stalled, "stalled at {}", s.elapsed);
                rows += 1;
                stale_rows += usize::from(s.window.fresh_pages == 0);
                if s.elapsed >= 75.0 {
                    let rate = s.figures.generation.window;
                    let rate =
                        rate.unwrap_or_else(|| panic!("no rate at {}: {:?}", s.elapsed, s.figures.window));
                    assert!((rate / 1600.0 - 1.0).abs() < 0.005, "{rate} at {}", s.elapsed);
                    let ewma = s.figures.generation.ewma;
                    assert!(ewma.is_some_and(|e| (e / 1600.0 - 1.0).abs() < 0.005), "{ewma:?}");
                    rated += 1;
                }
            }
        }
        assert!(
            p.events().iter().all(|(_, e)| e.kind != EventKind::Stall),
            "{:?}",
            p.events()
        );
        // Of every 15 intervals, one has a new sample.
        assert!(
            rows >= 115 && stale_rows * 10 >= rows * 8,
            "{stale_rows} of {rows}"
        );
        assert!(rated >= 40, "{rated}");
        // The tokens since the start were counted between the samples of 0 s and 105 s.
        let mean = p.summary().mean_generation_rate.unwrap();
        assert!((mean / 1600.0 - 1.0).abs() < 0.001, "{mean}");
    }

    /// A page slow to read is not an outage: scraped every 15 s with a 30 s window, each
    /// page taking 35 s from request to read (a 666 MB federation on a busy machine), so
    /// that pages come 45 s apart (the worker's pace: the next scrape starts at the first
    /// interval's lead after a read), beyond the 40 s of two intervals and the timeout.
    /// From the third page on, every interval has window figures over the whole window,
    /// with the simulated rate exactly, and none says scrapes resumed.
    #[test]
    fn a_read_longer_than_the_interval_still_has_window_figures() {
        let sim = Simulation::new(None).with_wave(0.0);
        let started = DateTime::from_timestamp_millis((sim.started_unix * 1000.0) as i64).unwrap();
        let settings = plain_settings(30, 15, 10);
        let schedule = Schedule::new(started, Duration::from_secs(15), Some(Duration::from_secs(600)));
        let mut p = Pipeline::new(
            settings,
            schedule,
            &["big".to_string()],
            String::new(),
            Vec::new(),
        );
        let mut rows = 0;
        for n in 0..10 {
            let t = 45.0 * n as f64;
            let start = started + TimeDelta::milliseconds((t * 1000.0) as i64);
            let end = start + TimeDelta::seconds(35);
            while p.next_tick_at() <= end && !p.is_over() {
                p.tick();
                let s = p.snapshot().unwrap();
                if n < 3 {
                    continue;
                }
                rows += 1;
                let f = &s.figures;
                assert_eq!(
                    f.window.shortened, None,
                    "at {} s: {:?}",
                    s.elapsed, f.window.span
                );
                let (rate, span) = (
                    f.generation.window.expect("a window rate"),
                    f.window.span.unwrap(),
                );
                let (from, to) = (
                    (span.start - started).as_seconds_f64(),
                    (span.end - started).as_seconds_f64(),
                );
                let want = (sim.generated_until(to) - sim.generated_until(from)) / (to - from);
                assert!((rate - want).abs() <= 1e-6 * want, "{rate} against {want}");
                assert_eq!(span.seconds, 45.0);
            }
            let page = Page {
                body: sim.render_at(t),
                format: promrate::Format::PrometheusText,
                content_type: None,
            };
            p.ingest(
                &Scrape {
                    url: 0,
                    start,
                    end,
                    result: Ok(page),
                },
                0,
            );
        }
        assert!(rows >= 18, "{rows} rows from the third page on");
    }

    /// A pipeline of `urls` scraped every second, on a run of a minute from `started`.
    fn every_second(started: DateTime<Utc>, urls: &[&str]) -> Pipeline {
        let settings = Settings {
            window: TimeDelta::seconds(4),
            interval: TimeDelta::seconds(1),
            timeout: TimeDelta::seconds(2),
            ewma_tau: TimeDelta::seconds(4),
            by: None,
            target_requests: None,
            gpu: GpuSettings::default(),
            slo: Vec::new(),
            max_groups: crate::top::DEFAULT_MAX_GROUPS,
            max_series: usize::MAX,
            points_every: None,
        };
        let schedule = Schedule::new(started, Duration::from_secs(1), Some(Duration::from_secs(60)));
        let urls: Vec<String> = urls.iter().map(ToString::to_string).collect();
        Pipeline::new(settings, schedule, &urls, String::new(), Vec::new())
    }

    /// A scrape of `url` at `t` seconds that took `seconds`: the simulator's page, or an error.
    fn scrape(
        sim: &Simulation,
        started: DateTime<Utc>,
        url: usize,
        t: f64,
        seconds: f64,
        ok: bool,
    ) -> Scrape {
        let start = started + TimeDelta::milliseconds((t * 1000.0) as i64);
        let result = match ok {
            true => Ok(Page {
                body: sim.render_at(t),
                format: promrate::Format::PrometheusText,
                content_type: None,
            }),
            false => Err("connection refused".to_string()),
        };
        Scrape {
            url,
            start,
            end: start + TimeDelta::milliseconds((seconds * 1000.0) as i64),
            result,
        }
    }

    fn slow_events(p: &Pipeline) -> Vec<&str> {
        p.events()
            .iter()
            .filter(|(_, e)| e.kind == EventKind::Slow)
            .map(|(_, e)| e.message.as_str())
            .collect()
    }

    /// A server that joins late has running requests at its first page and no generation
    /// rate until its second: tokens per second per running request divides the servers
    /// that have a rate by their own running requests, not by everyone's.
    #[test]
    fn tokens_per_running_request_leaves_out_a_server_without_a_rate() {
        let sim = Simulation::new(None).with_wave(0.0);
        let started = DateTime::from_timestamp_millis((sim.started_unix * 1000.0) as i64).unwrap();
        let mut p = every_second(started, &["early", "late"]);
        for n in 0..3 {
            p.ingest(&scrape(&sim, started, 0, n as f64 + 0.1, 0.01, true), 0);
            p.tick();
        }
        p.ingest(&scrape(&sim, started, 1, 3.1, 0.01, true), 0);
        p.ingest(&scrape(&sim, started, 0, 3.1, 0.01, true), 0);
        p.tick();
        let f = &p.snapshot().unwrap().figures;
        // The simulator's 8 tokens a second per running request, with the late server's
        // running requests counted (twice the early one's) but not yet its tokens.
        let per_request = f.in_flight.tokens_per_s_per_request.unwrap();
        assert!((per_request - 8.0).abs() < 0.1, "{per_request}");
        assert!(f.in_flight.running.unwrap() > 300.0, "{:?}", f.in_flight.running);
    }

    /// A server flapping about the interval, or failing fast between slow scrapes, is one
    /// slow spell: said once, and again only after a scrape within half an interval.
    #[test]
    fn slow_is_said_once_until_a_scrape_succeeds_within_half_an_interval() {
        let sim = Simulation::new(None).with_wave(0.0);
        let started = DateTime::from_timestamp_millis((sim.started_unix * 1000.0) as i64).unwrap();
        let mut p = every_second(started, &["flapping"]);
        let scrapes = [
            (1.5, true),
            (0.9, true),
            (1.5, true),
            (0.01, false),
            (1.4, true),
            (0.2, true),
            (1.5, true),
        ];
        for (n, (seconds, ok)) in scrapes.into_iter().enumerate() {
            p.ingest(&scrape(&sim, started, 0, 2.0 * n as f64, seconds, ok), 0);
        }
        let slow = slow_events(&p);
        assert_eq!(slow.len(), 2, "{slow:?}");
        assert!(slow[0].contains("1.5 s") && slow[1].contains("1.5 s"), "{slow:?}");
    }

    /// A URL whose page is being read elsewhere (its worker) is left out of the intervals
    /// computed meanwhile, which say so once; back, it counts again, as if read in place.
    #[test]
    fn a_url_whose_page_is_still_being_read_is_left_out_and_said_once() {
        let sim = Simulation::new(None).with_wave(0.0);
        let started = DateTime::from_timestamp_millis((sim.started_unix * 1000.0) as i64).unwrap();
        let mut p = every_second(started, &["a", "b"]);
        let mut in_place = every_second(started, &["a", "b"]);
        for url in 0..2 {
            for q in [&mut p, &mut in_place] {
                q.ingest(&scrape(&sim, started, url, 0.1, 0.01, true), 0);
            }
        }
        p.tick();
        let both = p.snapshot().unwrap().figures.in_flight.running.unwrap();
        let late = scrape(&sim, started, 1, 1.1, 0.01, true);
        let mut target = p.lend(1, late.end, 1 << 20).expect("lent once");
        assert!(p.lend(1, late.end, 1 << 20).is_none(), "not twice");
        p.tick();
        p.tick();
        let alone = p.snapshot().unwrap().figures.in_flight.running.unwrap();
        assert!((alone * 2.0 - both).abs() < 1e-9, "{alone} of {both}");
        let slow = slow_events(&p);
        assert_eq!(slow.len(), 1, "{slow:?}");
        assert!(
            slow[0].starts_with("its page (1.0 MiB) is still being read after "),
            "{}",
            slow[0]
        );
        let read = read_page(&mut target, &late, 0);
        p.read(target, read);
        in_place.tick();
        in_place.tick();
        in_place.ingest(&late, 0);
        for q in [&mut p, &mut in_place] {
            q.ingest(&scrape(&sim, started, 0, 3.1, 0.01, true), 0);
            q.tick();
        }
        let (lent, read_in_place) = (p.snapshot().unwrap(), in_place.snapshot().unwrap());
        assert_eq!(
            lent.figures.in_flight.running,
            read_in_place.figures.in_flight.running
        );
        assert_eq!(
            format!("{:?}", lent.figures.generation),
            format!("{:?}", read_in_place.figures.generation)
        );
    }

    /// An interval waits for a small page being read (an interval at most), for a large
    /// one half an interval, and not again for a URL an interval found still reading.
    #[test]
    fn an_interval_waits_for_small_pages_and_briefly_for_large_ones() {
        let sim = Simulation::new(None).with_wave(0.0);
        let started = DateTime::from_timestamp_millis((sim.started_unix * 1000.0) as i64).unwrap();
        let mut p = every_second(started, &["small", "large"]);
        let due = p.next_tick_at();
        assert_eq!(p.awaited_until(due), None, "nothing being read");
        let _large = p.lend(1, due, SMALL_PAGE).unwrap();
        assert_eq!(p.awaited_until(due), Some(due + TimeDelta::milliseconds(500)));
        let small = p.lend(0, due, SMALL_PAGE - 1).unwrap();
        assert_eq!(p.awaited_until(due), Some(due + TimeDelta::seconds(1)));
        p.tick();
        let next = p.next_tick_at();
        assert_eq!(
            p.awaited_until(next),
            Some(next + TimeDelta::seconds(1)),
            "small: still"
        );
        let scrape = scrape(&sim, started, 0, 0.1, 0.01, true);
        let mut small = small;
        let read = read_page(&mut small, &scrape, 0);
        p.read(small, read);
        assert_eq!(p.awaited_until(next), None, "large: found still reading");
    }

    /// Jitter of tens of milliseconds never flips the window by an interval (0.2 took the
    /// newest scrape at or before the start: 10 or 12 s at random), each window rate is the
    /// simulated count over the span it states, and two monitors a second apart on a
    /// steady server agree.
    #[test]
    fn the_window_does_not_flip_with_jitter_and_two_monitors_agree() {
        for wave in [0.0, 0.25] {
            let sim = Simulation::new(None).with_wave(wave);
            let a = monitor(&sim, 0.0, 0x9e37_79b9);
            let b = monitor(&sim, 1.0, 0x2545_f491);
            assert!(a.len() >= 20 && b.len() >= 20, "{} {}", a.len(), b.len());
            for &(rate, span, start, end) in a.iter().chain(&b) {
                assert!((span - 10.0).abs() <= 0.121, "a {span} s span");
                let want = (sim.generated_until(end) - sim.generated_until(start)) / (end - start);
                assert!((rate - want).abs() <= 1e-3 * want, "{rate} against {want}");
            }
            if wave == 0.0 {
                for (x, y) in a.iter().zip(&b) {
                    assert!((x.0 - y.0).abs() <= 0.01 * x.0, "{} against {}", x.0, y.0);
                }
            }
        }
    }

    #[test]
    fn the_window_is_a_whole_number_of_intervals() {
        let s = TimeDelta::seconds;
        assert_eq!(window_of(s(10), s(2)), s(10));
        assert_eq!(window_of(s(5), s(2)), s(6), "2.5 intervals: the nearest whole");
        assert_eq!(window_of(s(1), s(2)), s(2), "at least one");
        assert_eq!(window_of(TimeDelta::milliseconds(30_400), s(1)), s(30));
    }

    /// A server that flaps for ever: the events kept stay bounded, every announced
    /// number that is kept reads back its event, and what the outputs read of the
    /// forgotten ones (restarts, the alerts still firing) is kept.
    #[test]
    fn a_flapping_server_keeps_the_events_bounded_and_their_counts() {
        let started = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let schedule = Schedule::new(started, Duration::from_secs(1), None);
        let mut p = Pipeline::new(
            plain_settings(10, 1, 5),
            schedule,
            &["u".to_string()],
            String::new(),
            Vec::new(),
        );
        let event = |kind, alert: Option<&str>| Event {
            kind,
            at: started,
            source: "u".into(),
            message: format!("{kind:?}"),
            alert: alert.map(|rule| {
                Box::new(crate::events::AlertFacts {
                    rule: rule.into(),
                    figure: "gen_tok_s",
                    value: 1.0,
                    threshold: 2.0,
                    group: None,
                    held_s: 0.0,
                    elapsed_s: 0.0,
                })
            }),
        };
        // One alert fires first and never resolves; another fires and resolves.
        p.announce(0.0, event(EventKind::AlertFiring, Some("kept firing")));
        p.announce(0.0, event(EventKind::AlertFiring, Some("resolved")));
        p.announce(0.0, event(EventKind::AlertResolved, Some("resolved")));
        let flaps = 3 * crate::events::EVENTS_KEPT;
        let mut last = None;
        for n in 0..flaps {
            let kind = if n % 2 == 0 {
                EventKind::Restart
            } else {
                EventKind::Fault
            };
            let Said::Event(number) = p.announce(n as f64, event(kind, None)) else {
                panic!("an event");
            };
            assert_eq!(p.event(number).unwrap().0, n as f64);
            last = Some(number);
        }
        assert!(p.events().len() <= crate::events::EVENTS_KEPT);
        assert_eq!(last, Some(flaps + 2));
        let run = p.view();
        assert_eq!(run.earlier.count + run.events.len(), flaps + 3);
        assert_eq!(run.earlier.restarts_with(run.events), flaps / 2);
        assert_eq!(run.earlier.firing_after(run.events), 1);
        assert_eq!(p.summary().restarts, flaps / 2);
        assert!(p.event(0).is_none(), "forgotten");
    }
}
