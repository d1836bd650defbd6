//! `--prometheus BASE_URL`: the servers' samples read from a TSDB through the Prometheus
//! HTTP API (Prometheus, VictoriaMetrics, Thanos, Mimir), turned into the pages the
//! pipeline reads (`pages.rs`), so that the figures, restarts, SLOs and alerts are the same
//! code as for `/federate`. Each interval reads the span since the one before (live, at
//! its time on the wall clock; or, with `--from`/`--to`, a past span as fast as the TSDB
//! answers, on the virtual clock a replay uses), in requests split by instance and time
//! (`split.rs`). `api.rs` speaks to the API; `--from` and `--to` are read by `crate::when`.

pub mod api;
pub mod pages;
pub mod split;

#[cfg(test)]
mod tests;

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};

use crate::args::{federate_match, Args};
use crate::clock::{LiveClock, Schedule};
use crate::engines::ENGINES;
use crate::http::Page;
use crate::scrape::Scrape;
use api::{Api, ApiError, Series};
use pages::{Span, Written};

/// What the run does next.
pub enum Step {
    /// Waits this long (live: the next interval is not due yet).
    Wait(Duration),
    /// Reads this page (or this failed read) into its target.
    Page(Scrape),
    /// Computes the interval whose pages were all read.
    Tick,
}

/// Live on the wall clock, or a past span.
#[derive(Clone, Copy)]
enum Mode {
    Live(LiveClock),
    Past { to_ms: i64 },
}

/// One group's answer held: its series written (or why the read failed), and where the
/// span it covers ends.
struct Held {
    answer: Result<Vec<Written>, String>,
    lo_ms: i64,
    hi_ms: i64,
}

/// The interval being read: its span, the group whose pages are due, and its next page.
struct Reading {
    ticks: u64,
    lo_ms: i64,
    hi_ms: i64,
    group: usize,
    page: usize,
    span: Option<Span>,
}

/// Reads a TSDB interval by interval, as pages of its targets (one per instance group).
pub struct Reader {
    api: Api,
    matcher: String,
    /// Each target's instances (one empty group: all).
    groups: Vec<Vec<String>>,
    lookback_ms: i64,
    mode: Mode,
    intervals_per_request: u64,
    /// Whether each group's answer is kept for the next intervals it covers, or dropped
    /// after its pages (live, or a past span whose answers would not fit together).
    keep_answers: bool,
    /// Each group's answer, while held.
    held: Vec<Option<Held>>,
    /// Where each group's last read ended; where its next starts.
    read_until_ms: Vec<i64>,
    /// Each group's newest sample put on a page (`i64::MIN`: none yet). Live, a read
    /// starts there when that is earlier: samples a TSDB took in late (a remote-write
    /// backlog, a lag that appeared during the run) are read when they come, not lost.
    delivered_ms: Vec<i64>,
    /// How often the TSDB holds a sample of a series (measured at the start; a minute,
    /// Prometheus' default, when it could not be): a newest sample older than two of these
    /// and an interval is a TSDB fallen behind, said once a group.
    points_every_ms: i64,
    reading: Option<Reading>,
    /// Each target's last page time: a page is stamped after it.
    last_at_ms: Vec<i64>,
    /// What the answers said, to be shown (each group's, each once), until taken.
    notes: Vec<(usize, String)>,
    said: std::collections::HashSet<(usize, NoteKey)>,
    /// Live, with the servers split in groups: when the instances were last listed (a
    /// server that appears later, an autoscaled replica, is read from the next listing
    /// on; with one group, whose selector names none, it is read at once).
    listed_ms: i64,
}

/// How often a live run split in groups lists the instances again.
const LIST_EVERY_MS: i64 = 60_000;

/// What a note is about, to say each once a group: a warning by its words, the rest by
/// their kind (their details change from read to read).
#[derive(PartialEq, Eq, Hash)]
enum NoteKey {
    Said(String),
    Unreadable,
    NoInstance,
    NewServer(String),
    Behind,
}

/// The most notes a run keeps to say each once; later ones are not said.
const NOTES_KEPT: usize = 256;

impl Reader {
    /// A reader of `groups` of instances from `api`, as `reads` plans, over `schedule`.
    fn new(
        api: Api,
        matcher: String,
        groups: Vec<Vec<String>>,
        lookback_ms: i64,
        mode: Mode,
        reads: split::PastReads,
        schedule: &Schedule,
    ) -> Reader {
        let targets = groups.len();
        Reader {
            api,
            matcher,
            groups,
            lookback_ms,
            mode,
            intervals_per_request: reads.intervals_per_request,
            keep_answers: reads.keep_answers,
            held: (0..targets).map(|_| None).collect(),
            read_until_ms: vec![schedule.tick_at(0).timestamp_millis(); targets],
            delivered_ms: vec![i64::MIN; targets],
            points_every_ms: 60_000,
            reading: None,
            last_at_ms: vec![i64::MIN; targets],
            notes: Vec::new(),
            said: std::collections::HashSet::new(),
            listed_ms: schedule.tick_at(0).timestamp_millis(),
        }
    }
}

/// A run of `--prometheus`, ready to start.
pub struct Started {
    pub reader: Reader,
    /// The targets' names: the base URL, or its instance groups.
    pub urls: Vec<String>,
    pub schedule: Schedule,
    /// How often the TSDB holds a sample of a series, when measured.
    pub points_every: Option<TimeDelta>,
    /// For the setup line.
    pub what: String,
    pub notes: Vec<String>,
}

/// Whether `name` is one of the families `--federate` reads (their prefixes).
fn is_inference_family(name: &str) -> bool {
    ENGINES.iter().flat_map(|e| e.prefixes.iter()).any(|p| {
        name.starts_with(p)
            || p.strip_suffix(':')
                .is_some_and(|stem| name.starts_with(&format!("{stem}_")))
    })
}

/// Checks that the TSDB has the servers' families between `start_ms` and `end_ms`:
/// the error names what is missing and the nearest names it has; a note names the
/// generated-token families missing beside the others.
fn check_families(api: &Api, matcher: &str, start_ms: i64, end_ms: i64) -> Result<Vec<String>, String> {
    let names = api
        .label_values("__name__", Some(matcher), start_ms, end_ms)
        .map_err(|e| format!("{}: {e}", api.shown))?;
    let span = |ms: i64| {
        DateTime::from_timestamp_millis(ms).map_or(ms.to_string(), |t| {
            t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        })
    };
    if names.iter().any(|n| is_inference_family(n)) {
        return Ok(missing_generation(&names));
    }
    let all = api
        .label_values("__name__", None, start_ms, end_ms)
        .map_err(|e| format!("{}: {e}", api.shown))?;
    let nearest = nearest_names(&all, "vllm:generation_tokens_total");
    Err(format!(
        "{}: no series of the inference servers' families between {} and {} (vllm:generation_tokens_total and the like); {}",
        api.shown,
        span(start_ms),
        span(end_ms),
        if nearest.is_empty() {
            "it has no series at all then: is it scraping the servers, and is the span right (--from, --to)?".to_string()
        } else {
            format!("the nearest names it has: {}", nearest.join(", "))
        }
    ))
}

/// The engines present whose generated-token family is not: said, with the nearest names.
fn missing_generation(names: &[String]) -> Vec<String> {
    let mut notes = Vec::new();
    for engine in ENGINES {
        let present = names
            .iter()
            .any(|n| engine.prefixes.iter().any(|p| n.starts_with(p)));
        let Some(generation) = engine.generation.first() else {
            continue;
        };
        let family = generation.name.trim_end_matches("_sum");
        let underscored = family.replace(':', "_");
        let found = names
            .iter()
            .any(|n| n.starts_with(family) || n.starts_with(&underscored));
        if present && !found {
            notes.push(format!(
                "{family} is missing from the TSDB ({} series are there): no generated tokens/s; the nearest names it has: {}",
                engine.title,
                nearest_names(names, family).join(", ")
            ));
        }
    }
    notes
}

/// Up to five of `names` nearest to `wanted`.
pub fn nearest_names(names: &[String], wanted: &str) -> Vec<String> {
    let mut scored: Vec<(f64, &String)> = names
        .iter()
        .map(|n| (strsim::jaro_winkler(n, wanted), n))
        .filter(|(score, _)| *score > 0.6)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    scored.into_iter().take(5).map(|(_, n)| n.clone()).collect()
}

/// `span` of a group's `series` less the repeats of the servers the TSDB no longer serves
/// at `hi_ms`, asked only where a series has no new sample (a steady span asks nothing);
/// `Err`, what to say as a failed scrape, when nothing is left of the group's servers.
/// A query that fails keeps the repeats: the lookback still lets them go.
fn without_the_gone(
    api: &Api,
    selector: &str,
    series: &[Written],
    mut span: Span,
    hi_ms: i64,
) -> Result<Span, String> {
    if !span.has_repeats() {
        return Ok(span);
    }
    let Ok(served) = series_per_instance(api, selector, hi_ms) else {
        return Ok(span);
    };
    match span.drop_repeats_unless(series, served.iter().map(|(i, _)| i.as_str())) {
        (dropped, Some(newest_ms)) if span.pages == 0 => Err(gone_message(&dropped, newest_ms)),
        _ => Ok(span),
    }
}

/// What a group whose every server the TSDB marks stale says, as a failed scrape.
fn gone_message(instances: &[String], newest_ms: i64) -> String {
    let newest = DateTime::from_timestamp_millis(newest_ms).map_or_else(String::new, |t| {
        t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    });
    format!(
        "no sample of {} since {newest}: the TSDB marks its series stale (its target stopped \
         answering, or they left its page)",
        instances.join(", ")
    )
}

/// Each instance's series count at `at_ms`, sorted by instance.
fn series_per_instance(api: &Api, matcher: &str, at_ms: i64) -> Result<Vec<(String, usize)>, ApiError> {
    let counted: Vec<Series> = api.instant(&format!("count by (instance) ({matcher})"), at_ms)?;
    let mut counts: Vec<(String, usize)> = counted
        .into_iter()
        .filter_map(|s| {
            let instance = s.labels.iter().find(|l| l.0 == "instance")?.1.clone();
            Some((instance, s.samples.first()?.1 as usize))
        })
        .collect();
    counts.sort();
    Ok(counts)
}

/// How far back the scrape density is measured.
const DENSITY_RANGE_MS: i64 = 300_000;

/// Samples a series per second in the TSDB, measured on the largest server's series over
/// the five minutes before `at_ms`; `None` when they cannot be read.
fn measured_density(api: &Api, matcher: &str, counts: &[(String, usize)], at_ms: i64) -> Measured {
    let Some((instance, _)) = counts.iter().max_by_key(|c| c.1) else {
        return Measured::default();
    };
    let selector = split::selector(matcher, std::slice::from_ref(instance));
    let Ok(api::Answer { series, .. }) = api.samples::<Series>(&selector, DENSITY_RANGE_MS, at_ms) else {
        return Measured::default();
    };
    Measured {
        density: split::samples_per_s(series.iter().map(|s| s.samples.as_slice())),
        newest_ms: series.iter().filter_map(|s| Some(s.samples.last()?.0)).max(),
    }
}

/// What a read of the largest server's recent samples told: how often the TSDB holds a
/// sample (a second's worth), and its newest sample's time.
#[derive(Default)]
struct Measured {
    density: Option<f64>,
    newest_ms: Option<i64>,
}

/// Live: the clock a run follows a TSDB that lags by, and the note that says so; none
/// for a TSDB as recent as its scrapes and an interval make it.
fn followed(sampled: &Measured, now_ms: i64, interval_ms: i64) -> Option<(LiveClock, String)> {
    let behind = behind_the_clock(sampled.newest_ms, now_ms, sampled.density, interval_ms)?;
    let lag_s = (now_ms - sampled.newest_ms.unwrap_or(now_ms)) as f64 / 1000.0;
    let note = format!(
        "the TSDB's newest samples are {lag_s:.1} s behind the clock: the figures follow {} s behind \
         it, each interval read once its samples are there (VictoriaMetrics hides the newest 30 s \
         unless started with -search.latencyOffset=0s)",
        behind.num_seconds()
    );
    Some((LiveClock::behind(behind), note))
}

/// How far a live run follows behind the clock: none while the TSDB's newest sample is
/// as recent as its own scrapes and an interval make it; else its lag, to the next
/// second. A sample the TSDB shows only later than the interval it falls in would never
/// be read (each interval reads the samples of its own span).
fn behind_the_clock(
    newest_ms: Option<i64>,
    now_ms: i64,
    density: Option<f64>,
    interval_ms: i64,
) -> Option<TimeDelta> {
    let lag_ms = now_ms - newest_ms?;
    let scrape_ms = density.map_or(60_000.0, |d| 1000.0 / d) as i64;
    (lag_ms > scrape_ms + interval_ms).then(|| TimeDelta::seconds(lag_ms.div_euclid(1000) + 1))
}

/// The lookback, raised to two of the TSDB's scrape intervals when it is shorter (said): a
/// series' newest sample is up to a scrape interval old, and one shorter lookback left
/// the servers of a TSDB scraping every minute out of every other interval of a past span
/// ("gone", then "back"; 5% of the tokens lost).
fn reaching_two_scrapes(lookback_ms: i64, density: Option<f64>, notes: &mut Vec<String>) -> i64 {
    let Some(every) = points_every(density).map(|e| e.num_milliseconds()) else {
        return lookback_ms;
    };
    if lookback_ms >= 2 * every {
        return lookback_ms;
    }
    notes.push(format!(
        "the lookback is {} s, twice the TSDB's scrape interval ({} s), not the {} s asked: a series' newest sample is up to a scrape interval old",
        2 * every / 1000,
        every / 1000,
        lookback_ms / 1000
    ));
    2 * every
}

/// How often a series gets a point, from the density measured (samples a second): no
/// more often than a sample a second, so that one odd series measured does not size
/// every series' points for more than the densest scrape in common use.
pub fn points_every(measured: Option<f64>) -> Option<TimeDelta> {
    let density = measured?.min(split::DENSEST_SAMPLES_PER_S);
    Some(TimeDelta::milliseconds((1000.0 / density).round() as i64))
}

/// Starts reading the TSDB of `args.prometheus` with `client`: checks its families, plans
/// the requests, and gives the run's schedule (live from now, or the past span).
pub fn start(
    args: &Args,
    base: &str,
    client: crate::http::Client,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> Result<Started, String> {
    let api = Api::new(base, client, stop);
    let matcher = federate_match();
    let lookback_ms = i64::try_from(args.lookback.as_millis()).unwrap_or(i64::MAX / 4);
    let (mut mode, mut started, duration) = span(args, Utc::now())?;
    if let (Mode::Live(_), Some(duration)) = (mode, duration) {
        // A TSDB that never answers the start's requests ends the run when it was to end.
        api.patient_until_the_run_ends(std::time::Instant::now() + duration);
    }
    let interval_ms = i64::try_from(args.interval_or_default().as_millis()).unwrap_or(i64::MAX / 4);
    let (check_from, check_to) = match mode {
        Mode::Past { to_ms } => (started.timestamp_millis() - lookback_ms, to_ms),
        Mode::Live(_) => (
            started.timestamp_millis() - lookback_ms.max(300_000),
            started.timestamp_millis(),
        ),
    };
    let mut notes = check_families(&api, &matcher, check_from, check_to)?;
    let instances = api
        .label_values("instance", Some(&matcher), check_from, check_to)
        .map_err(|e| format!("{}: {e}", api.shown))?;
    let counts = series_per_instance(&api, &matcher, check_to).map_err(|e| format!("{}: {e}", api.shown))?;
    let sampled = measured_density(&api, &matcher, &counts, check_to);
    let measured = sampled.density;
    let lookback_ms = reaching_two_scrapes(lookback_ms, measured, &mut notes);
    if let Mode::Live(_) = mode {
        if let Some((clock, note)) = followed(&sampled, check_to, interval_ms) {
            (mode, started) = (Mode::Live(clock), clock.now());
            notes.push(note);
        }
    }
    let schedule = Schedule::new(started, args.interval_or_default(), duration);
    // Unmeasured, requests are sized for the densest sampling in common use.
    let density = measured.unwrap_or(split::DENSEST_SAMPLES_PER_S);
    let groups = split::group_instances(
        &instances,
        &counts,
        split::series_per_request(interval_ms, lookback_ms, density),
    );
    let reads = match mode {
        Mode::Past { .. } => {
            split::past_reads(series_read(&groups, &counts), interval_ms, lookback_ms, density)
        }
        // Live reads each interval afresh: nothing to keep.
        Mode::Live(_) => split::PastReads {
            keep_answers: false,
            intervals_per_request: 1,
        },
    };
    let intervals_per_request = reads.intervals_per_request;
    let urls = group_names(&api.shown, &groups);
    let requests = match mode {
        Mode::Past { .. } => format!(
            "the servers in {} request group(s), each request reading up to {intervals_per_request} interval(s)",
            groups.len()
        ),
        Mode::Live(_) => format!("{} request(s) each interval", groups.len()),
    };
    notes.push(format!(
        "reading {} server(s) from {} through its Prometheus HTTP API: {requests}",
        instances.len(),
        api.shown,
    ));
    let what = what_is_read(&api.shown, mode, started);
    let mut reader = Reader::new(api, matcher, groups, lookback_ms, mode, reads, &schedule);
    reader.points_every_ms = points_every(measured).map_or(reader.points_every_ms, |e| e.num_milliseconds());
    Ok(Started {
        reader,
        urls,
        schedule,
        points_every: points_every(measured),
        what,
        notes,
    })
}

/// Live from now, or the past span `--from`..`--to`: the mode, the start and how long the
/// run lasts (`--duration` shortens a past span).
fn span(
    args: &Args,
    now: DateTime<Utc>,
) -> Result<(Mode, DateTime<Utc>, Option<std::time::Duration>), String> {
    let Some(from) = args.from else {
        let clock = LiveClock::start();
        return Ok((Mode::Live(clock), clock.now(), args.duration));
    };
    // In order and before now: `Args::check_span` refused any other span.
    let from = from.resolve(now);
    let to = args.to.map_or(now, |to| to.resolve(now));
    let duration = (to - from).to_std().unwrap_or_default();
    let mode = Mode::Past {
        to_ms: to.timestamp_millis(),
    };
    Ok((
        mode,
        from,
        Some(args.duration.map_or(duration, |d| d.min(duration))),
    ))
}

/// The series of all the requests of an interval: each group's servers times the most
/// series a server has (every series counted when the servers are read at once).
fn series_read(groups: &[Vec<String>], counts: &[(String, usize)]) -> usize {
    let largest = counts.iter().map(|c| c.1).max().unwrap_or(1);
    groups
        .iter()
        .map(|g| {
            if g.is_empty() {
                counts.iter().map(|c| c.1).sum()
            } else {
                g.len() * largest
            }
        })
        .sum::<usize>()
        .max(1)
}

/// Each request group's name, as the run's URLs show it.
fn group_names(shown: &str, groups: &[Vec<String>]) -> Vec<String> {
    match groups.len() {
        1 => vec![shown.to_string()],
        n => groups
            .iter()
            .enumerate()
            .map(|(i, g)| format!("{shown} (group {} of {n}: {} servers)", i + 1, g.len()))
            .collect(),
    }
}

/// What the run reads, for its title.
fn what_is_read(shown: &str, mode: Mode, started: DateTime<Utc>) -> String {
    match mode {
        Mode::Past { to_ms } => format!(
            " · {shown} from {} to {}",
            started.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            DateTime::from_timestamp_millis(to_ms).map_or_else(String::new, |t| {
                t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
            })
        ),
        Mode::Live(_) => format!(" · {shown} (Prometheus HTTP API)"),
    }
}

impl Reader {
    /// What to do before interval `ticks + 1` of `schedule` (its pages, then its tick).
    pub fn next_step(&mut self, schedule: &Schedule, ticks: u64) -> Step {
        if self.reading.is_none() {
            let due = schedule.tick_at(ticks + 1);
            if let Mode::Live(clock) = self.mode {
                let wait = clock.until(due);
                if !wait.is_zero() {
                    return Step::Wait(wait);
                }
                // The interval's reads, all of them, wait an interval at most: a slow or
                // silent TSDB delays a row by that, and the next interval reads again.
                let interval = schedule.interval.to_std().unwrap_or_default();
                self.api.patient_until(Some(std::time::Instant::now() + interval));
                self.list_again(due.timestamp_millis());
            }
            self.reading = Some(Reading {
                ticks,
                lo_ms: schedule.tick_at(ticks).timestamp_millis(),
                hi_ms: due.timestamp_millis(),
                group: 0,
                page: 0,
                span: None,
            });
        }
        self.next_page(schedule)
    }

    /// What the answers said since the last call, by group: each thing once a run.
    pub fn take_notes(&mut self) -> Vec<(usize, String)> {
        std::mem::take(&mut self.notes)
    }

    /// Live, split in groups: a minute after the last listing, lists the instances again
    /// and puts each new one in the group with the fewest, said (a listing that fails is
    /// tried at the next minute).
    fn list_again(&mut self, now_ms: i64) {
        if self.groups.len() < 2 || now_ms - self.listed_ms < LIST_EVERY_MS {
            return;
        }
        self.listed_ms = now_ms;
        let from_ms = now_ms - self.lookback_ms.max(LIST_EVERY_MS);
        let Ok(instances) = self
            .api
            .label_values("instance", Some(&self.matcher), from_ms, now_ms)
        else {
            return;
        };
        let known: std::collections::HashSet<&String> = self.groups.iter().flatten().collect();
        let new: Vec<String> = instances.into_iter().filter(|i| !known.contains(i)).collect();
        for instance in new {
            let (group, _) = self
                .groups
                .iter()
                .enumerate()
                .min_by_key(|(_, g)| g.len())
                .expect("two groups or more");
            self.groups[group].push(instance.clone());
            self.note_once(
                group,
                NoteKey::NewServer(instance.clone()),
                format!("a new server, {instance}, is read from now on in this group"),
            );
        }
    }

    /// Keeps `text` about group `group` unless a note of the same `key` was said of it.
    fn note_once(&mut self, group: usize, key: NoteKey, text: String) {
        if self.said.len() < NOTES_KEPT && self.said.insert((group, key)) {
            self.notes.push((group, text));
        }
    }

    /// Keeps what the API said beside group `group`'s `answer`, unless said before.
    /// Samples left out are said once a group (their first differs from read to read).
    fn keep_notes<T>(&mut self, group: usize, answer: &api::Answer<T>) {
        for words in &answer.said {
            self.note_once(
                group,
                NoteKey::Said(words.clone()),
                format!("the TSDB said: {words}"),
            );
        }
        if let Some(words) = answer.unreadable_words() {
            self.note_once(group, NoteKey::Unreadable, words);
        }
    }

    /// How many groups' answers are held now.
    pub fn answers_held(&self) -> usize {
        self.held.iter().flatten().count()
    }

    /// Reads group `group`'s samples from where its last read ended: live up to `hi_ms`,
    /// past as many intervals as a request holds.
    fn read(&mut self, group: usize, schedule: &Schedule, ticks: u64, hi_ms: i64) -> Held {
        // After failed reads, live catches up on as much as a past request holds at most.
        let oldest_ms =
            hi_ms - schedule.interval.num_milliseconds() * split::MAX_INTERVALS_PER_REQUEST as i64;
        let lo_ms = self.read_until_ms[group]
            .min(schedule.tick_at(ticks).timestamp_millis())
            .min(self.late_from(group))
            .max(oldest_ms);
        let until_ms = match self.mode {
            Mode::Live(_) => hi_ms,
            // As many intervals as a request holds, up to the span's last.
            Mode::Past { .. } => {
                let wanted = ticks + self.intervals_per_request;
                let last = schedule.last.map_or(wanted, |last| last.clamp(ticks + 1, wanted));
                schedule.tick_at(last).timestamp_millis().max(hi_ms)
            }
        };
        let range_ms = until_ms - lo_ms + self.lookback_ms;
        let selector = split::selector(&self.matcher, &self.groups[group]);
        let answer = self.api.samples::<Written>(&selector, range_ms, until_ms);
        let mut answer = answer.map(|answer| {
            self.keep_notes(group, &answer);
            answer.series
        });
        if let Ok(series) = answer.as_mut() {
            if let (left_out, Some(first)) = pages::servers_only(series) {
                self.note_once(
                    group,
                    NoteKey::NoInstance,
                    format!(
                        "{left_out} series without an instance label left out, others have one \
                         (a recording rule's, not a server's; the first: {first})"
                    ),
                );
            }
        }
        match answer {
            // Too many samples for the TSDB: fewer intervals a request, down to one.
            Err(e) if e.is_too_large() && self.intervals_per_request > 1 => {
                self.intervals_per_request /= 2;
                self.read(group, schedule, ticks, hi_ms)
            }
            answer => {
                // A failed read is read again next interval (live), from where the last ended.
                if answer.is_ok() || matches!(self.mode, Mode::Past { .. }) {
                    self.read_until_ms[group] = until_ms;
                }
                Held {
                    answer: answer.map(pages::sorted).map_err(|e| e.to_string()),
                    lo_ms,
                    hi_ms: until_ms,
                }
            }
        }
    }

    /// Live, where group `group`'s late samples would start: after the newest it put on
    /// a page (the end of time before its first, or in a past span, which reads each
    /// sample in its own interval).
    fn late_from(&self, group: usize) -> i64 {
        match (self.mode, self.delivered_ms[group]) {
            (Mode::Live(_), delivered) if delivered > i64::MIN => delivered,
            _ => i64::MAX,
        }
    }

    /// Group `group`'s answer for the span up to `hi_ms`: the one held if it covers it,
    /// else read now.
    fn answer_for(&mut self, group: usize, schedule: &Schedule, ticks: u64, hi_ms: i64) {
        let covered = self.held[group].as_ref().is_some_and(|h| h.hi_ms >= hi_ms);
        if !covered {
            // Dropped before the read, so that two answers of a group are never held.
            self.held[group] = None;
            self.held[group] = Some(self.read(group, schedule, ticks, hi_ms));
        }
    }

    /// Done with the pages of the group being read: on to the next, its answer dropped
    /// unless it is kept for the next intervals.
    fn next_group(&mut self) {
        if let Some(reading) = self.reading.as_mut() {
            if !self.keep_answers {
                self.held[reading.group] = None;
            }
            reading.group += 1;
            reading.page = 0;
            reading.span = None;
        }
    }

    /// The next page of the interval being read, a failed read, or the tick that ends it.
    fn next_page(&mut self, schedule: &Schedule) -> Step {
        loop {
            let Some(&Reading {
                ticks, hi_ms, group, ..
            }) = self.reading.as_ref()
            else {
                return Step::Tick;
            };
            if group >= self.groups.len() {
                self.reading = None;
                return Step::Tick;
            }
            self.answer_for(group, schedule, ticks, hi_ms);
            let (Some(reading), Some(held)) = (self.reading.as_mut(), self.held[group].as_ref()) else {
                return Step::Tick;
            };
            let series = match &held.answer {
                Ok(series) => series,
                Err(e) => {
                    let message = e.clone();
                    let at = stamp(&mut self.last_at_ms[group], reading.hi_ms);
                    self.next_group();
                    return Step::Page(scrape(group, at, Err(message)));
                }
            };
            let span = match reading.span {
                Some(ref span) => span,
                None => {
                    // Live, the read's own start (after the newest sample delivered, or a
                    // failed read's span): its samples there are new, not repeats.
                    let lo_ms = match self.mode {
                        Mode::Live(_) => held.lo_ms,
                        Mode::Past { .. } => reading.lo_ms,
                    };
                    let hi_ms = reading.hi_ms.min(held.hi_ms);
                    let newest_ms = series.iter().filter_map(|s| s.samples.last()).map(|s| s.0).max();
                    let behind_ms = hi_ms - newest_ms.unwrap_or(hi_ms);
                    let interval_ms = reading.hi_ms - reading.lo_ms;
                    if let Mode::Live(_) = self.mode {
                        if behind_ms > 2 * self.points_every_ms + interval_ms
                            && self.said.len() < NOTES_KEPT
                            && self.said.insert((group, NoteKey::Behind))
                        {
                            self.notes.push((group, behind_words(behind_ms)));
                        }
                    }
                    let span = Span::of(series, lo_ms, hi_ms, self.lookback_ms);
                    let selector = split::selector(&self.matcher, &self.groups[group]);
                    match without_the_gone(&self.api, &selector, series, span, hi_ms) {
                        Ok(span) => &*reading.span.insert(span),
                        Err(message) => {
                            let at = stamp(&mut self.last_at_ms[group], reading.hi_ms);
                            self.next_group();
                            return Step::Page(scrape(group, at, Err(message)));
                        }
                    }
                }
            };
            if reading.page >= span.pages {
                self.next_group();
                continue;
            }
            let (text, newest) = span.page(series, reading.page);
            reading.page += 1;
            if let Some(newest) = newest {
                self.delivered_ms[group] = self.delivered_ms[group].max(newest);
            }
            let fallback = reading.lo_ms;
            let at = stamp(&mut self.last_at_ms[group], newest.unwrap_or(fallback));
            let page = Page {
                body: text,
                format: promrate::Format::PrometheusText,
                content_type: None,
            };
            return Step::Page(scrape(group, at, Ok(page)));
        }
    }
}

/// What a live run says of a TSDB whose newest sample is `behind_ms` old.
fn behind_words(behind_ms: i64) -> String {
    format!(
        "the TSDB's newest sample of these servers is {:.1} s old: it has fallen behind, or its scrapes \
         fail; intervals without a new sample say so (no new page, no stall judged), and its samples \
         are read when they come, with their own times",
        behind_ms as f64 / 1000.0
    )
}

/// A page's time: its newest sample's, after the target's last page (`last`, updated).
fn stamp(last: &mut i64, wanted_ms: i64) -> DateTime<Utc> {
    *last = wanted_ms.max(last.saturating_add(1));
    DateTime::from_timestamp_millis(*last).unwrap_or_default()
}

fn scrape(url: usize, at: DateTime<Utc>, result: Result<Page, String>) -> Scrape {
    Scrape {
        url,
        start: at,
        end: at,
        result,
    }
}
