//! `--replay`: a recording read as the live run read its scrapes. What the recording does
//! not say (a foreign scraper's file has no header) is worked out from its scrapes: the
//! URLs in the order they first appear, the run's start at the first scrape, the interval
//! as the median time between one URL's scrapes. A scrape whose time or tick cannot be
//! right is a bad line ([`Checked`]), left out of all of these as of the replay.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use promrate::Format;

use crate::clock::{delta, Schedule};
use crate::http::{self, Page};
use crate::recording::{self, Recorded, RecordingError, RunSettings};
use crate::scrape::Scrape;
use crate::text;
use crate::text::visible::visible;

/// What a recording tells about the run that made it.
#[derive(Debug, Clone)]
pub struct Recording {
    pub started: DateTime<Utc>,
    pub urls: Vec<String>,
    pub interval: Duration,
    pub window: Option<Duration>,
    pub duration: Option<Duration>,
    /// Whether it was written by this monitor (its `tick` fields place each page).
    pub ours: bool,
    /// "recorded by vllm_monitor" or "another scraper's recording", for the setup line.
    pub what: String,
    /// The recorded run's `--slo`, `--alert` and `--by` (none in another scraper's).
    pub settings: RunSettings,
}

/// What a scan of a recording found: its scrapes' URLs and times, and the first line
/// that is not a scrape.
#[derive(Default)]
struct Scan {
    urls: Vec<String>,
    first: Option<DateTime<Utc>>,
    /// The first URL read, and its scrape times, as read (the interval is their median,
    /// which a few wrong times do not move).
    timed: Option<String>,
    starts: Vec<DateTime<Utc>>,
    bad: Option<String>,
    /// The first scrape left out for its time ([`Checked`]), when no other line was bad.
    wrong: Option<String>,
}

impl Scan {
    /// A scrape as read, before its time is checked: the interval's evidence.
    fn time(&mut self, scrape: &Recorded) {
        let timed = self.timed.get_or_insert_with(|| scrape.url.clone());
        if scrape.url == *timed {
            self.starts.push(scrape.start);
        }
    }

    /// A scrape whose time was found right: the URLs and the run's start are theirs.
    fn add(&mut self, scrape: &Recorded) {
        self.first = Some(self.first.map_or(scrape.start, |f| f.min(scrape.start)));
        if !self.urls.contains(&scrape.url) {
            self.urls.push(scrape.url.clone());
        }
    }

    /// The interval: the median time between the first URL's scrapes, to the nearest 10 ms
    /// (a scraper's interval is a round figure, its median a little off), 1 s without two.
    fn interval(&self) -> Duration {
        let mut gaps: Vec<i64> = self
            .starts
            .windows(2)
            .filter_map(|w| (w[1] - w[0]).num_microseconds())
            .collect();
        gaps.sort_unstable();
        gaps.get(gaps.len() / 2).map_or(Duration::from_secs(1), |us| {
            Duration::from_millis(((*us as f64 / 10_000.0).round() as u64 * 10).max(100))
        })
    }

    /// Why there is nothing to replay: the first line that is not a scrape, or that there
    /// is no line after the header, or none at all.
    fn nothing(self, shown: &str, header: bool) -> String {
        match (self.bad.or(self.wrong), header) {
            (Some(bad), _) => format!(
                "{shown}: no scrape in the recording (JSON Lines, a scrape per line); the first line that is not one: {bad}"
            ),
            (None, true) => format!("{shown}: no scrape in the recording, only its header"),
            (None, false) => format!("{shown}: the recording is empty: no scrape to replay"),
        }
    }
}

/// The start of a line as it may be shown: its first 40 characters, what a terminal would
/// act on written out.
fn excerpt(text: &[u8]) -> String {
    let text = String::from_utf8_lossy(text);
    let line = text.trim_end_matches(['\n', '\r']);
    let short: String = line.chars().take(40).collect();
    let more = if line.chars().count() > 40 { "…" } else { "" };
    format!("`{}{more}`", visible(&short))
}

/// Reads the recording at `path` to learn its run (streaming: nothing is kept but the URLs
/// and the scrape times of the first URL; a recording of the monitor's, with its header,
/// is read up to its first scrape). A recording without any scrape is an error that names
/// the first line that is not one. Lines longer than `max_line` are skipped, said.
pub fn survey(path: &Path, max_line: u64) -> Result<Recording, String> {
    let shown = path.display().to_string();
    let header = recording::open_within(path, max_line)
        .map_err(|e| unreadable(&shown, &e))?
        .header()
        .cloned();
    // Another scraper's recording says nothing of its run but its scrapes: their URLs and
    // start are those of the scrapes whose times are right, checked as the replay checks
    // them, and how far a time may be off depends on the interval, known at the end.
    let mut scan = scan(
        path,
        &shown,
        header.is_some(),
        far(recording::MIN_INTERVAL),
        max_line,
    )?;
    let Some(mut started) = scan.first else {
        return Err(scan.nothing(&shown, header.is_some()));
    };
    if let Some(h) = header {
        let duration = match h.extra.get("duration_s") {
            None => None,
            // Refused as `--duration` refuses it (`from_secs_f64` would panic).
            Some(value) => Some(
                value
                    .as_f64()
                    .and_then(|s| Duration::try_from_secs_f64(s).ok())
                    .ok_or_else(|| {
                        format!(
                            "{shown}: line 1: the recording's header: \"duration_s\" ({value}) is not a number of seconds"
                        )
                    })?,
            ),
        };
        return Ok(Recording {
            started: h.started,
            urls: h.urls,
            interval: h.interval,
            window: Some(h.window),
            duration,
            ours: true,
            what: "recorded by vllm_monitor".into(),
            settings: RunSettings::read_from(&h.extra),
        });
    }
    let interval = scan.interval();
    if far(interval) > far(recording::MIN_INTERVAL) {
        // A long interval lets times be further apart: read again with it.
        let again = self::scan(path, &shown, false, far(interval), max_line)?;
        started = again.first.unwrap_or(started);
        scan.urls = again.urls;
    }
    Ok(Recording {
        started,
        urls: scan.urls,
        interval,
        window: None,
        duration: None,
        ours: false,
        what: "another scraper's recording".into(),
        settings: RunSettings::default(),
    })
}

/// A recording that cannot be opened, as the run's failure says it.
fn unreadable(shown: &str, e: &RecordingError) -> String {
    match e.line {
        0 => format!("{shown}: {}", e.message),
        _ => format!("{shown}: {e}"),
    }
}

/// One pass of [`survey`], with times `far` apart found wrong; up to the first scrape of
/// a recording with a `header` (the header says the rest).
fn scan(path: &Path, shown: &str, header: bool, far: TimeDelta, max_line: u64) -> Result<Scan, String> {
    let mut replay = recording::open_within(path, max_line).map_err(|e| unreadable(shown, &e))?;
    let mut scan = Scan::default();
    let mut bad = None;
    let lines = std::iter::from_fn(|| {
        let item = replay.next()?;
        match &item {
            Ok(scrape) => scan.time(scrape),
            Err(e) if bad.is_none() => bad = Some(format!("{e}: {}", excerpt(replay.line_text()))),
            Err(_) => {}
        }
        Some((replay.line(), item))
    });
    let mut found = Scan::default();
    for item in Checked::new(lines, far, None) {
        match item {
            Ok((_, scrape)) => found.add(&scrape),
            Err(e) => {
                found.wrong.get_or_insert_with(|| e.to_string());
            }
        }
        if header && found.first.is_some() {
            break;
        }
    }
    found.timed = scan.timed;
    found.starts = scan.starts;
    found.bad = bad;
    Ok(found)
}

/// How far apart two scrapes' times may be and still be taken for neighbours: far beyond
/// the jitter, a slow scrape and the reading of a large page (ten minutes, or ten
/// intervals when that is longer). A time further off is checked against the next scrapes
/// ([`Checked`]).
pub fn far(interval: Duration) -> TimeDelta {
    delta(interval.checked_mul(10).unwrap_or(Duration::MAX)).max(TimeDelta::minutes(10))
}

/// Lines read ahead at most, bad ones among them, to find the two scrapes after one.
const AHEAD: usize = 64;

/// A recording's scrapes, each with its line number, less those whose time or tick cannot
/// be right: each of those comes out as a bad line instead (reported and skipped, as a
/// line that is not JSON), so that no time years off, at the epoch or an hour back, and
/// no tick far beyond the others, moves the replay's clock. A scrape is wrong when
///
/// - its `end` is more than [`far`] after its `start` (no scrape takes that long);
/// - its `tick` (the monitor's recordings, placed by it) is more than [`far`] from the
///   intervals due by its `end`: a live run reads a page within an interval or so of it;
/// - it starts before the previous scrape of its URL: a URL's scrapes follow one another;
/// - its `end` is more than [`far`] from the previous scrape's, and the next scrape does
///   not agree with it: one time off, among scrapes in order. A real pause in the
///   recording (a job stopped for hours) is followed by scrapes after it, and stands;
/// - it is the first scrape, and the next two agree with each other and not with it.
///
/// Reading ahead keeps two pages more in memory, not the recording.
pub struct Checked<I> {
    lines: I,
    ahead: VecDeque<(u64, Result<Recorded, RecordingError>)>,
    ended: bool,
    far: TimeDelta,
    /// The schedule the ticks count on, when they place the pages (the monitor's own).
    ticks: Option<Schedule>,
    /// The end of the last scrape let through.
    previous: Option<DateTime<Utc>>,
    /// Each URL's latest start let through, with its line.
    latest: HashMap<String, (DateTime<Utc>, u64)>,
}

impl<I> Checked<I>
where
    I: Iterator<Item = (u64, Result<Recorded, RecordingError>)>,
{
    /// `lines` (numbered scrapes or bad lines) checked with times `far` apart, their ticks
    /// on `ticks` if they place the pages.
    pub fn new(lines: I, far: TimeDelta, ticks: Option<Schedule>) -> Checked<I> {
        Checked {
            lines,
            ahead: VecDeque::new(),
            ended: false,
            far,
            ticks,
            previous: None,
            latest: HashMap::new(),
        }
    }

    /// Reads ahead until two scrapes follow the first line waiting, or [`AHEAD`] lines do.
    fn fill(&mut self) {
        while !self.ended
            && self.ahead.len() < AHEAD
            && self.ahead.iter().skip(1).filter(|(_, l)| l.is_ok()).count() < 2
        {
            match self.lines.next() {
                Some(line) => self.ahead.push_back(line),
                None => self.ended = true,
            }
        }
    }

    /// Why `scrape` cannot be right, if it cannot; the next two scrapes are `next`.
    fn wrong(&self, scrape: &Recorded, next: [Option<DateTime<Utc>>; 2]) -> Option<String> {
        let far = self.far;
        let apart = |a: DateTime<Utc>, b: DateTime<Utc>| (a - b).abs() > far;
        let off = |a: DateTime<Utc>, b: DateTime<Utc>| text::duration(Some((a - b).abs().as_seconds_f64()));
        let at = |t: DateTime<Utc>| recording::seconds(t);
        if apart(scrape.end, scrape.start) {
            return Some(format!(
                "\"end\" ({}) is {} after \"start\" ({}): no scrape takes that long",
                at(scrape.end),
                off(scrape.end, scrape.start),
                at(scrape.start)
            ));
        }
        if let (Some(schedule), Some(tick)) = (&self.ticks, scrape.tick) {
            let due = schedule.due_by(scrape.end);
            let intervals = tick.abs_diff(due) as f64;
            if intervals * schedule.interval.as_seconds_f64() > far.as_seconds_f64() {
                return Some(format!(
                    "\"tick\" ({tick}) is far from its time: a page read at {} is read after about {due} intervals",
                    at(scrape.end)
                ));
            }
        }
        if let Some((latest, line)) = self.latest.get(&scrape.url) {
            if scrape.start < *latest {
                return Some(format!(
                    "\"start\" ({}) is {} before that of the previous scrape of its URL ({}, line {line}): its time went back",
                    at(scrape.start),
                    off(scrape.start, *latest),
                    at(*latest)
                ));
            }
        }
        match (self.previous, next) {
            (Some(previous), [next, _])
                if apart(scrape.end, previous) && next.is_none_or(|n| apart(n, scrape.end)) =>
            {
                Some(format!(
                    "its time ({}) is {} from the previous scrape's ({}), and no scrape follows it there: a time off",
                    at(scrape.end),
                    off(scrape.end, previous),
                    at(previous)
                ))
            }
            (None, [Some(next), Some(after)]) if !apart(next, after) && apart(next, scrape.end) => Some(format!(
                "its time ({}) is {} from the next scrapes' ({}): a time off",
                at(scrape.end),
                off(scrape.end, next),
                at(next)
            )),
            _ => None,
        }
    }
}

impl<I> Iterator for Checked<I>
where
    I: Iterator<Item = (u64, Result<Recorded, RecordingError>)>,
{
    type Item = Result<(u64, Recorded), RecordingError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.fill();
        let (line, item) = self.ahead.pop_front()?;
        let scrape = match item {
            Ok(scrape) => scrape,
            Err(e) => return Some(Err(e)),
        };
        let mut next = self
            .ahead
            .iter()
            .filter_map(|(_, l)| l.as_ref().ok().map(|s| s.end));
        let next = [next.next(), next.next()];
        if let Some(message) = self.wrong(&scrape, next) {
            return Some(Err(RecordingError { line, message }));
        }
        self.previous = Some(scrape.end);
        match self.latest.get_mut(&scrape.url) {
            Some(latest) => *latest = (scrape.start, line),
            None => {
                self.latest.insert(scrape.url.clone(), (scrape.start, line));
            }
        }
        Some(Ok((line, scrape)))
    }
}

/// A recording's scrapes with the number of the line each was read from.
pub fn numbered(
    replay: &mut recording::Replay,
) -> impl Iterator<Item = (u64, Result<Recorded, RecordingError>)> + '_ {
    std::iter::from_fn(move || {
        let item = replay.next()?;
        Some((replay.line(), item))
    })
}

/// The URLs of a recording by number, as the pipeline numbers its targets.
pub struct Numbering(HashMap<String, usize>);

impl Numbering {
    pub fn new(urls: &[String]) -> Numbering {
        Numbering(urls.iter().enumerate().map(|(i, u)| (u.clone(), i)).collect())
    }

    /// The recorded scrape as the live run had it: a page, or why there was none.
    pub fn scrape(&self, r: Recorded) -> Option<Scrape> {
        let url = *self.0.get(&r.url)?;
        let result = match (r.body, r.error, r.status) {
            (_, Some(error), _) => Err(error),
            (Some(body), None, Some(status)) if status != 200 => {
                Err(match ureq::http::StatusCode::from_u16(status) {
                    Ok(code) => http::status_reason(code, &body),
                    Err(_) => format!("HTTP {status}"),
                })
            }
            (Some(body), None, _) => Ok(Page {
                format: r
                    .content_type
                    .as_deref()
                    .map_or(Format::PrometheusText, Format::from_content_type),
                content_type: r.content_type,
                body,
            }),
            (None, None, _) => Err("no body and no error recorded".into()),
        };
        Some(Scrape {
            url,
            start: r.start,
            end: r.end,
            result,
        })
    }
}

/// The scrape as a recording keeps it, with the number of intervals computed before it
/// was read.
pub fn recorded(scrape: &Scrape, url: &str, tick: u64) -> Recorded {
    let (status, content_type, body, error) = match &scrape.result {
        Ok(page) => (
            Some(200),
            page.content_type.clone(),
            Some(page.body.clone()),
            None,
        ),
        Err(e) => (None, None, None, Some(e.clone())),
    };
    Recorded {
        url: url.to_string(),
        start: scrape.start,
        end: scrape.end,
        status,
        content_type,
        body,
        error,
        tick: Some(tick),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each recorded page is read in the format it was served in: its Content-Type picks
    /// the parser (OpenMetrics 2.0 too), and a recording without one reads as text.
    #[test]
    fn a_replayed_page_is_read_as_it_was_served() {
        let at = DateTime::from_timestamp(1_900_000_000, 0).unwrap();
        let numbering = Numbering::new(&["http://h/metrics".to_string()]);
        let format = |content_type: Option<&str>| {
            let recorded = Recorded {
                url: "http://h/metrics".into(),
                start: at,
                end: at,
                status: Some(200),
                content_type: content_type.map(str::to_string),
                body: Some("a_total 1\n".into()),
                error: None,
                tick: Some(0),
            };
            let page = numbering.scrape(recorded).unwrap().result.unwrap();
            (page.format, page.content_type)
        };
        let om2 = "application/openmetrics-text; version=2.0.0; charset=utf-8";
        assert_eq!(format(Some(om2)), (Format::OpenMetrics2, Some(om2.to_string())));
        let om1 = "application/openmetrics-text; version=1.0.0; charset=utf-8";
        assert_eq!(format(Some(om1)).0, Format::OpenMetrics);
        assert_eq!(
            format(Some("text/plain; version=1.0.0; escaping=allow-utf-8")).0,
            Format::PrometheusText
        );
        assert_eq!(format(None), (Format::PrometheusText, None));
    }

    const ORIGIN: i64 = 1_800_000_000;

    /// A scrape of `url` at `t` seconds after [`ORIGIN`] (negative: before), taking 10 ms.
    fn at(url: &str, t: f64) -> Recorded {
        let start = DateTime::from_timestamp_micros(ORIGIN * 1_000_000 + (t * 1e6) as i64).unwrap();
        Recorded {
            url: url.into(),
            start,
            end: start + TimeDelta::milliseconds(10),
            status: Some(200),
            content_type: None,
            body: Some("a_total 1\n".into()),
            error: None,
            tick: None,
        }
    }

    /// The line numbers [`Checked`] finds wrong among `scrapes` (numbered from 1).
    fn wrong_lines(scrapes: Vec<Recorded>, ticks: Option<Schedule>) -> Vec<u64> {
        let lines = scrapes.into_iter().zip(1..).map(|(s, n)| (n, Ok(s)));
        let far = far(Duration::from_secs(1));
        Checked::new(lines, far, ticks)
            .filter_map(|item| item.err().map(|e| e.line))
            .collect()
    }

    /// Twenty scrapes a second apart, with `odd` in place of the one at `index`.
    fn twenty_with(index: usize, odd: Recorded) -> Vec<Recorded> {
        let mut scrapes: Vec<Recorded> = (0..20).map(|i| at("http://a/metrics", i as f64)).collect();
        scrapes[index] = odd;
        scrapes
    }

    /// One time off among scrapes in order is a bad line, whether years ahead, at the
    /// epoch, an hour back or first; a scrape that took a year is one too.
    #[test]
    fn a_time_far_from_its_neighbours_is_a_bad_line() {
        let url = "http://a/metrics";
        let year_9999 = 253_402_300_000.0 - ORIGIN as f64;
        assert_eq!(wrong_lines(twenty_with(5, at(url, year_9999)), None), [6]);
        assert_eq!(wrong_lines(twenty_with(5, at(url, -(ORIGIN as f64))), None), [6]);
        assert_eq!(wrong_lines(twenty_with(0, at(url, -(ORIGIN as f64))), None), [1]);
        assert_eq!(wrong_lines(twenty_with(0, at(url, year_9999)), None), [1]);
        // Back an hour, or a second: a URL's scrapes follow one another.
        assert_eq!(wrong_lines(twenty_with(10, at(url, 10.0 - 3_600.0)), None), [11]);
        assert_eq!(wrong_lines(twenty_with(10, at(url, 8.5)), None), [11]);
        let mut long = at(url, 7.0);
        long.end = long.start + TimeDelta::days(365);
        assert_eq!(wrong_lines(twenty_with(7, long), None), [8]);
        // Another URL's scrapes interleave: only the one far off is wrong.
        let mut two: Vec<Recorded> = (0..20)
            .flat_map(|i| [at(url, i as f64), at("http://b/metrics", i as f64 + 0.5)])
            .collect();
        two[9] = at("http://b/metrics", 4.5 + 86_400.0);
        assert_eq!(wrong_lines(two, None), [10]);
    }

    /// A real pause is followed by scrapes after it: every scrape stands, a day apart or
    /// a year; but a lone scrape a year after the others is one time off.
    #[test]
    fn a_pause_followed_by_scrapes_stands() {
        let url = "http://a/metrics";
        for pause in [3_600.0, 86_400.0, 365.0 * 86_400.0] {
            let scrapes = (0..20)
                .map(|i| at(url, i as f64 + if i >= 10 { pause } else { 0.0 }))
                .collect();
            assert_eq!(wrong_lines(scrapes, None), Vec::<u64>::new(), "{pause}");
        }
        let lone: Vec<Recorded> = (0..20)
            .map(|i| at(url, i as f64 + if i == 19 { 86_400.0 } else { 0.0 }))
            .collect();
        assert_eq!(wrong_lines(lone, None), [20]);
        // Slow scrapes ending out of order, and a single scrape, are all right.
        let mut jittered: Vec<Recorded> = (0..20).map(|i| at(url, i as f64)).collect();
        jittered[3].end = jittered[3].start + TimeDelta::seconds(30);
        assert_eq!(wrong_lines(jittered, None), Vec::<u64>::new());
        assert_eq!(wrong_lines(vec![at(url, 0.0)], None), Vec::<u64>::new());
    }

    /// The monitor's own recordings place a page by its tick: one far from its time is a
    /// bad line (it would have the replay compute its intervals one by one), one near it
    /// (a page read late) is not.
    #[test]
    fn a_tick_far_from_its_time_is_a_bad_line() {
        let started = DateTime::from_timestamp(ORIGIN, 0).unwrap();
        let schedule = Schedule::new(started, Duration::from_secs(1), None);
        let ticked = |ticks: &[(usize, u64)]| {
            let mut scrapes: Vec<Recorded> = (0..20).map(|i| at("http://a/metrics", i as f64)).collect();
            for (i, s) in scrapes.iter_mut().enumerate() {
                s.tick = Some(i as u64);
            }
            for &(i, tick) in ticks {
                scrapes[i].tick = Some(tick);
            }
            wrong_lines(scrapes, Some(schedule))
        };
        assert_eq!(ticked(&[]), Vec::<u64>::new());
        assert_eq!(ticked(&[(5, 10u64.pow(15))]), [6]);
        assert_eq!(ticked(&[(5, 5 + 3_600)]), [6]);
        assert_eq!(ticked(&[(5, 30)]), Vec::<u64>::new());
    }
}
