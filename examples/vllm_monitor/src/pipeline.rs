//! The monitor's one-way pipeline, without any IO: scrapes go in ([`Pipeline::ingest`]),
//! each interval is computed at its scheduled time into an immutable [`Snapshot`]
//! ([`Pipeline::tick`], where the signals judge too), and the outputs read the snapshot,
//! the history and the events ([`Pipeline::view`]). A live run and a replay drive the same
//! pipeline with the same scrapes in the same order, so they compute the same intervals.

use chrono::{DateTime, TimeDelta, Utc};

use crate::alerts::{Alerts, Rule};
use crate::clock::Schedule;
use crate::figures::slo::Objective;
use crate::gpus::GpuSettings;
use crate::interval::{History, Moment, Snapshot};
use crate::output::Run;
use crate::scrape::Scrape;
use crate::signals::Signals;
use crate::summary::Summary;
use crate::target::{Event, EventKind, ServerRow, Target};
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
}

impl Settings {
    /// A URL whose newest page is older than this is out of the figures, and an interval
    /// between two pages longer than this is a gap the EWMA does not blend across: two
    /// intervals and a scrape's timeout.
    pub fn out_after(&self) -> TimeDelta {
        self.interval * 2 + self.timeout
    }

    /// Points kept per series: the window, and the interval of slack its start may take.
    pub fn retention(&self) -> TimeDelta {
        self.window + self.interval * 2
    }

    pub fn windowing(&self) -> WindowRule {
        WindowRule::new(self.window)
            .slack(self.interval)
            .gap(self.out_after())
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
    /// `events()[index]` was announced.
    Event(usize),
    /// A remark for people (plain and dashboard; JSON has the facts as fields).
    Note(String),
}

/// The monitor's state, fed by a driver (live or replay).
pub struct Pipeline {
    settings: Settings,
    schedule: Schedule,
    targets: Vec<Target>,
    signals: Signals,
    alerts: Alerts,
    history: History,
    events: Vec<(f64, Event)>,
    last: Option<Snapshot>,
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
                t.tracker
                    .ewma_time_constant(settings.ewma_tau)
                    .ewma_restart_after(settings.out_after());
                t
            })
            .collect();
        Pipeline {
            servers: targets.iter().map(ServerRow::of).collect(),
            settings,
            schedule,
            targets,
            signals: Signals::default(),
            alerts: Alerts::default(),
            history: History::default(),
            events: Vec::new(),
            last: None,
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

    /// Reads one scrape (`skipped` newer-page-wins skips before it); what it announces.
    pub fn ingest(&mut self, scrape: &Scrape, skipped: u64) -> Vec<Said> {
        let mut said = Vec::new();
        let interval = self.settings.interval;
        let Some(target) = self.targets.get_mut(scrape.url) else {
            return said;
        };
        if skipped > 0 && target.skipped == 0 {
            said.push(Said::Note(format!(
                "{}: pages arrive faster than they are read; the newest is read, the others skipped (counted in the summary)",
                target.url
            )));
        }
        target.skipped += skipped;
        let seconds = scrape.seconds();
        target.scrape_s = Some(seconds);
        let mut announced = target.ingest_page(scrape.start, &scrape.result);
        let slow = seconds > interval.as_seconds_f64();
        if slow && !target.slow_announced {
            announced.push(Event {
                kind: EventKind::Slow,
                at: scrape.start,
                source: target.url.clone(),
                message: format!(
                    "a scrape took {seconds:.1} s, longer than the {} s interval: intervals without a new page repeat no judgement",
                    interval.as_seconds_f64()
                ),
                alert: None,
            });
        }
        target.slow_announced = slow;
        if let Some(kind) = target.status.kind().filter(|k| k.0.tokens_at_request_end) {
            if !target.noted_request_end {
                target.noted_request_end = true;
                // A window shorter than a request would show a sawtooth, not the throughput.
                said.push(Said::Note(format!(
                    "{} counts tokens when a request ends: tok/s is over --window, no EWMA ({})",
                    kind.0.title, target.url
                )));
            }
        }
        if scrape.result.is_ok() {
            self.pages_since_tick += 1;
        }
        // The URL's row as it is now (a fault is shown before the next interval): rows
        // change only here, so a tick's snapshot copies them and nothing else updates them.
        self.servers[scrape.url] = ServerRow::of(target);
        for event in announced {
            let elapsed = self.schedule.since_start(event.at);
            if event.kind == EventKind::Restart {
                self.history.restarts.push(elapsed);
            }
            said.push(self.announce(elapsed, event));
        }
        said
    }

    fn announce(&mut self, elapsed: f64, event: Event) -> Said {
        self.events.push((elapsed, event));
        Said::Event(self.events.len() - 1)
    }

    /// Computes the next interval at its scheduled time; what it announces.
    pub fn tick(&mut self) -> Vec<Said> {
        self.ticks += 1;
        let at = self.schedule.tick_at(self.ticks);
        let elapsed = self.schedule.elapsed(self.ticks);
        let moment = Moment {
            windowing: self.settings.windowing(),
            at,
            elapsed,
            fresh: at - self.settings.out_after(),
            fresh_pages: std::mem::take(&mut self.pages_since_tick),
            by: self.settings.by.as_deref(),
            max_groups: self.settings.max_groups,
            target_requests: self.settings.target_requests,
            slo: &self.settings.slo,
        };
        let mut snapshot = Snapshot::compute(&self.targets, &moment).with_gpu_settings(&self.settings.gpu);
        let fresh = moment.fresh_pages > 0;
        let mut said = Vec::new();
        for event in self.signals.judge(&mut snapshot.figures, snapshot.at, fresh) {
            said.push(self.announce(elapsed, event));
        }
        // After the signals, which mark the figures the rules read (`stalled`).
        let (events, notes) = self.alerts.judge(&snapshot, fresh);
        said.extend(notes.into_iter().map(Said::Note));
        for event in events {
            said.push(self.announce(elapsed, event));
        }
        if let Some(note) = self.by_label_missing(&snapshot) {
            said.push(Said::Note(note));
        }
        self.history.push(&snapshot);
        self.last = Some(snapshot);
        said
    }

    /// Said once: the pages have figures, but no series has the `--by` label (a
    /// misspelling gives no group rows at all), with the labels the series do have.
    fn by_label_missing(&mut self, snapshot: &Snapshot) -> Option<String> {
        let (label, groups) = snapshot.groups.as_ref()?;
        let has_data = snapshot.figures.generation.window.is_some() || snapshot.figures.running.is_some();
        if self.by_missing_said || label == "url" || !groups.is_empty() || !has_data {
            return None;
        }
        self.by_missing_said = true;
        let mut labels = std::collections::BTreeSet::new();
        for target in &self.targets {
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

    /// Leaves the next interval out: a live run that fell behind catches up by computing
    /// the newest interval due, not every one it missed (counted in the summary; a replay
    /// of its recording computes them all).
    pub fn skip_tick(&mut self) {
        self.ticks += 1;
        self.skipped_ticks += 1;
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
        }
    }

    /// The run in figures, at its end (its length: the intervals computed).
    pub fn summary(&self) -> Summary {
        let mut summary = Summary::new(&self.view(), self.schedule.elapsed(self.ticks));
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
                if let (Some(rate), Some(span), None) = (f.generation.window, f.span, f.shortened) {
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

    /// A proxy that delays `/metrics` by 3.5 s, scraped every second: pages come every
    /// 3.5 s, the intervals between say so (no new page), the slow scrape is announced once
    /// with its duration, and no stall is judged while the server generates.
    #[test]
    fn a_slow_scrape_is_slow_not_a_stall() {
        let sim = Simulation::new(None).with_wave(0.0);
        let started = DateTime::from_timestamp_millis((sim.started_unix * 1000.0) as i64).unwrap();
        let settings = Settings {
            window: TimeDelta::seconds(10),
            interval: TimeDelta::seconds(1),
            timeout: TimeDelta::seconds(5),
            ewma_tau: TimeDelta::seconds(10),
            by: None,
            max_groups: crate::top::DEFAULT_MAX_GROUPS,
            target_requests: None,
            gpu: GpuSettings::default(),
            slo: Vec::new(),
        };
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
                assert_ne!(s.figures.load, crate::figures::Load::Stalled, "at {}", s.elapsed);
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
                Said::Event(i) => Some(p.events()[*i].1.kind),
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
}
