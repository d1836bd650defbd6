//! Plain mode: one line per interval in fixed columns, at most 120 characters, with the
//! header repeated every 20 lines as `vmstat` and `iostat` do. What does not fit is in
//! `--json`.

use std::collections::HashMap;
use std::io::Write;

use super::{labels, operator, Output, Run};
use crate::events::{Event, EventKind};
use crate::figures::slo::Latency;
use crate::figures::Figures;
use crate::gpus;
use crate::snapshot::{ScreenGroups, Snapshot};
use crate::summary::Summary;
use crate::text::visible::visible;
use crate::text::{duration, exposed_or_na, keep_start, ms, num, percent, wrap};

/// The widest line plain mode prints.
pub const MAX_WIDTH: usize = 120;
/// Lines between two headers.
const HEADER_EVERY: usize = 20;
/// The widest a URL is shown in an event line (cut in the middle, distinct from the others).
const URL_WIDTH: usize = 72;
/// How a line that goes on under a `!` line or a note starts.
pub(super) const GOES_ON: &str = "    ";

/// A column: its header and width (values are right-aligned).
struct Column {
    header: &'static str,
    width: usize,
    /// The cell's text for the figures, given the column's width.
    value: fn(&Figures, usize) -> String,
}

const FIRST_WIDTH: usize = 11;

const fn col(header: &'static str, width: usize, value: fn(&Figures, usize) -> String) -> Column {
    Column { header, width, value }
}

/// A window figure, marked `*` when its window is shorter than the one asked.
fn windowed(f: &Figures, v: Option<f64>, decimals: usize, width: usize) -> String {
    match (v, f.window.shortened) {
        (Some(_), Some(_)) => format!("{}*", num(v, decimals, width - 1)),
        _ => num(v, decimals, width),
    }
}

const COMMON: &[Column] = &[
    col("gen/s", 8, |f, w| windowed(f, f.generation.window, 1, w)),
    col("prompt/s", 9, |f, w| windowed(f, f.prompt.window, 1, w)),
    col("req/s", 6, |f, w| windowed(f, f.requests.finished, 2, w)),
    col("tok/req", 7, |f, w| num(f.requests.tokens_per_request, 0, w)),
    col("tok/s/rq", 8, |f, w| {
        num(f.in_flight.tokens_per_s_per_request, 2, w)
    }),
    col("run", 5, |f, w| num(f.in_flight.running, 0, w)),
    col("wait", 5, |f, w| num(f.in_flight.waiting, 0, w)),
    col("kv%", 5, |f, _| {
        exposed_or_na(f.capacity.exposes("kv_cache_usage"), || {
            percent(f.in_flight.kv_usage)
        })
    }),
];
const LATENCY: &[Column] = &[
    col("ttft95", 7, |f, _| latency(f, Latency::Ttft, || ms(f.ttft.p95))),
    col("itl95", 6, |f, _| latency(f, Latency::Itl, || ms(f.itl.p95))),
    col("e2e_s", 6, |f, w| {
        latency(f, Latency::E2e, || num(f.requests.mean_latency, 1, w))
    }),
];

/// A latency's figure, `n/a` where no server exposes that latency.
fn latency(f: &Figures, l: Latency, text: impl FnOnce() -> String) -> String {
    exposed_or_na(f.capacity.exposes(l.json_name()), text)
}
const LOAD: &[Column] = &[
    col("steady", 6, |f, w| num(f.requests.steady_rate, 2, w)),
    col("load", 13, |f, _| f.load.label().to_string()),
];

/// Writes plain lines; remembers when the header was last printed.
pub struct Plain<W: Write> {
    out: W,
    since_header: Option<usize>,
    /// Whether the shortened window was explained (once per shortening).
    shortened_said: bool,
    /// Numbers of the groups that needed one (a group keeps its number for the run, and
    /// its legend line is printed once).
    numbers: HashMap<String, usize>,
    /// The run's URLs, and how event lines show each (`labels::url_labels`).
    urls: Vec<String>,
    url_labels: HashMap<String, String>,
    progress: bool,
    /// `--details`: phases, prompt tokens by source and capacity under each row.
    details: bool,
    /// Whether the others' row was explained.
    others_said: bool,
    closed: bool,
}

impl<W: Write> Plain<W> {
    pub fn new(out: W, progress: bool) -> Self {
        Plain {
            out,
            since_header: None,
            shortened_said: false,
            numbers: HashMap::new(),
            urls: Vec::new(),
            url_labels: HashMap::new(),
            progress,
            details: false,
            others_said: false,
            closed: false,
        }
    }

    /// With `details`, each row is followed by its time per phase, prompt tokens by source
    /// and capacity (`--details`).
    pub fn details(mut self, details: bool) -> Self {
        self.details = details;
        self
    }

    /// A line as it is written: what a server sent shown escaped ([`visible`]: every line
    /// passes here), at most [`MAX_WIDTH`] characters.
    fn line(&mut self, text: &str) {
        let text = keep_start(visible(text).trim_end(), MAX_WIDTH);
        self.closed |= writeln!(self.out, "{text}").is_err();
        if let Some(n) = &mut self.since_header {
            *n += 1;
        }
    }

    fn header(&self) -> String {
        let mut line = format!("{:>FIRST_WIDTH$}", "elapsed");
        for c in self.columns() {
            line += &format!(" {:>w$}", c.header, w = c.width);
        }
        if self.progress {
            line += &format!(" {:>7} {:>6} {:>6}", "done", "eta", "eta_tk");
        }
        line
    }

    fn columns(&self) -> impl Iterator<Item = &'static Column> {
        // With a run size, progress takes the latency columns' place.
        let latency: &[Column] = if self.progress { &[] } else { LATENCY };
        COMMON.iter().chain(latency).chain(LOAD)
    }

    fn row(&self, first: &str, f: &Figures, snapshot: Option<&Snapshot>) -> String {
        // By columns: a name of CJK characters, or with an accent written apart.
        let mut line = crate::text::pad_left(first, FIRST_WIDTH);
        // What the load column says instead when there is nothing new to judge.
        let instead = snapshot.and_then(|s| match (s.figures.window.span, s.window.fresh_pages) {
            _ if !s.servers.is_empty() && s.servers.iter().all(|t| !t.status.is_ok()) => Some("no data"),
            (Some(_), 0) => Some("no new page"),
            // One page so far (or since an outage): no window to measure yet.
            (None, _) if s.figures.window.shortened.is_some() => Some("one page"),
            _ => None,
        });
        for c in self.columns() {
            let text = match instead {
                Some(text) if c.header == "load" => text.to_string(),
                // The totals' load with the signals' verdict (a stall).
                None if c.header == "load" => {
                    snapshot.map_or(f.load, |s| s.verdict.load(f)).label().to_string()
                }
                _ => (c.value)(f, c.width),
            };
            line += &format!(" {text:>w$}", w = c.width);
        }
        if let Some(p) = snapshot.and_then(|s| s.progress) {
            line += &format!(
                " {:>7} {:>6} {:>6}",
                num(Some(p.finished), 0, 7),
                duration(p.eta_requests_s),
                duration(p.eta_tokens_s)
            );
        }
        line
    }

    /// The interval's line, a line per group, the header when due.
    pub fn rows(&mut self, s: &Snapshot) {
        if self.since_header.is_none_or(|n| n >= HEADER_EVERY) {
            let header = self.header();
            self.line(&header);
            self.since_header = Some(0);
        }
        match (s.figures.window.shortened, s.figures.window.span) {
            (Some(reason), Some(span)) if !self.shortened_said => {
                self.shortened_said = true;
                self.line(&format!(
                    "! {:.1}s window: the figures marked * cover {:.1} s {reason}, not the {} s asked",
                    s.elapsed,
                    span.seconds,
                    s.window.asked.as_seconds_f64()
                ));
            }
            // A page but no window yet: said on its row (its window figures are "-").
            (Some(_), None) => self.shortened_said = false,
            (None, _) => self.shortened_said = false,
            _ => {}
        }
        let row = self.row(&format!("{:.1}s", s.elapsed), &s.figures, Some(s));
        self.line(&row);
        if let Some(gpus) = gpus::line(s.figures.gpus.as_ref(), &s.figures.per_token) {
            self.line(&format!("{:>FIRST_WIDTH$} {gpus}", "gpus"));
        }
        for line in operator::plain_lines(&s.figures, self.details, FIRST_WIDTH, MAX_WIDTH) {
            self.line(&line);
        }
        if let Some(screen) = s.screen_groups() {
            self.group_rows(&screen);
        }
    }

    /// A row per group shown, named as [`Plain::group_names`] says; the others' row last.
    fn group_rows(&mut self, screen: &ScreenGroups<'_>) {
        let short = self.group_names(screen);
        for ((_, f), name) in screen.rows.iter().copied().zip(&short) {
            let row = self.row(name, f, None);
            self.line(&row);
            for line in operator::plain_lines(f, false, FIRST_WIDTH, MAX_WIDTH) {
                self.line(&line);
            }
        }
        if let Some(others) = screen.others {
            let name = match others.label() {
                full if crate::text::columns(&full) <= FIRST_WIDTH => full,
                _ => others.short_label(),
            };
            if !self.others_said {
                self.others_said = true;
                self.wrapped(&format!(
                    "! {}: the {} other {} values summed, beyond the {} busiest by gen/s (--max-groups; every group in --json)",
                    others.short_label(),
                    crate::top::thousands(others.count),
                    screen.label,
                    screen.rows.len()
                ));
            }
            let row = self.row(&name, &others.figures, None);
            self.line(&row);
        }
    }

    /// The groups' names as rows show them: distinct within the first column, numbered
    /// (with a legend line, once) when no cut tells them apart.
    fn group_names(&mut self, screen: &ScreenGroups<'_>) -> Vec<String> {
        let label = screen.label;
        let names: Vec<String> = screen
            .rows
            .iter()
            .map(|(value, _)| match label {
                "url" => labels::readable_url(value),
                _ => visible(value).into_owned(),
            })
            .collect();
        // URLs are named among all of the run's, so that a URL keeps its label when
        // another starts answering.
        let run_urls: Vec<String> = self.urls.iter().map(|u| labels::readable_url(u)).collect();
        let all: &[String] = match label {
            "url" if names.iter().all(|n| run_urls.contains(n)) => &run_urls,
            _ => &names,
        };
        let all_refs: Vec<&str> = all.iter().map(String::as_str).collect();
        let (all_short, numbered) = labels::distinct(&all_refs, FIRST_WIDTH - 1);
        let position: HashMap<&str, usize> = all_refs.iter().enumerate().map(|(i, n)| (*n, i)).collect();
        let mut short: Vec<String> = names
            .iter()
            .map(|name| match position.get(name.as_str()) {
                Some(&i) => all_short[i].clone(),
                None => name.clone(),
            })
            .collect();
        if numbered {
            // A number means something only with its legend, printed the first time.
            for (short, name) in short.iter_mut().zip(&names) {
                let next = self.numbers.len() + 1;
                let number = *self.numbers.entry(name.clone()).or_insert(next);
                *short = format!("#{number}");
                if number == next {
                    self.wrapped(&format!("! {label} #{number} is {name}"));
                }
            }
        }
        short
    }

    /// `text` on as many lines as it takes (nothing cut off), the lines after the first
    /// indented.
    fn wrapped(&mut self, text: &str) {
        for line in wrap(visible(text).trim_end(), MAX_WIDTH, GOES_ON) {
            self.line(&line);
        }
    }

    /// An event's `!` line: a fault's starts with its reason; a URL is shown as people
    /// read it, cut in its middle if long (`--json` has it whole); what does not fit goes
    /// on to a second line, never cut.
    pub fn event_line(&mut self, elapsed: f64, e: &Event) {
        let source = match self.url_labels.get(&e.source) {
            Some(label) => label.clone(),
            None => labels::readable_url(&e.source),
        };
        let message = visible(&e.message);
        if e.kind == EventKind::Fault {
            let reason = format!("! {elapsed:.1}s fault {message} · ");
            // The URL in the room the reason leaves, when that is enough to read it.
            let room = MAX_WIDTH.saturating_sub(reason.chars().count());
            if room >= 40 && self.url_labels.contains_key(&e.source) {
                let urls: Vec<&str> = self.urls.iter().map(String::as_str).collect();
                let (shown, numbered) = labels::url_labels(&urls, room);
                if let (false, Some(i)) = (numbered, urls.iter().position(|u| *u == e.source)) {
                    self.line(&format!("{reason}{}", shown[i]));
                    return;
                }
            }
            self.wrapped(&format!("{reason}{source}"));
            return;
        }
        self.wrapped(&format!(
            "! {elapsed:.1}s {} {source}: {message}",
            e.kind.as_str()
        ));
    }

    /// The notes and warnings a run starts with; the labels of its URLs in event lines.
    pub fn preamble(&mut self, run: &Run<'_>, notes: &[String]) {
        let urls: Vec<&str> = run.servers.iter().map(|t| t.url.as_str()).collect();
        let (shown, numbered) = labels::url_labels(&urls, URL_WIDTH);
        self.urls = urls.iter().map(|u| u.to_string()).collect();
        self.url_labels = urls.iter().map(|u| u.to_string()).zip(shown.clone()).collect();
        for warning in run.warnings {
            self.wrapped(&format!("warning: {warning}"));
        }
        for note in notes {
            self.wrapped(note);
        }
        if numbered {
            for (number, url) in shown.iter().zip(&urls) {
                self.wrapped(&format!("! URL {number} is {}", labels::readable_url(url)));
            }
        }
    }

    /// The summary line, then a line per URL that never answered.
    pub fn summary_lines(&mut self, s: &Summary) {
        // Skipped pages only when there were some: the line stays within 120 columns.
        let mut skipped = String::new();
        if s.skipped_pages > 0 {
            skipped += &format!(" · {} page(s) skipped", s.skipped_pages);
        }
        if s.skipped_intervals > 0 {
            skipped += &format!(" · {} interval(s) skipped", s.skipped_intervals);
        }
        if s.not_rated > 0 {
            skipped += &format!(" · {} not rated (erratic: processes in turn)", s.not_rated);
        }
        self.line(&format!(
            "summary: {:.0} s · {} tokens ({} tok/s) · {} requests · {} restart(s) · \
             {} scrape error(s){skipped}",
            s.elapsed_s,
            num(s.generated_tokens, 0, 12),
            num(s.mean_generation_rate, 1, 12),
            num(s.finished_requests, 0, 12),
            s.restarts,
            s.scrape_errors,
        ));
        if let Some(slo) = operator::slo(&s.slo, &s.not_exposed) {
            self.line(&format!("slo since the start: {slo}"));
        }
        self.alert_lines(s);
        let energy = s.energy_kwh.map(|kwh| format!("{kwh:.3} kWh"));
        let cost = s.gpu_cost.map(|c| format!("cost {c:.2}"));
        let gpu: Vec<String> = energy.into_iter().chain(cost).collect();
        if !gpu.is_empty() {
            self.line(&format!("gpus: {}", gpu.join(" · ")));
        }
        for (url, reason) in &s.never_answered {
            // The URL as event lines show it; the reason on a line of its own when both
            // would not fit: it is the point.
            let url = self
                .url_labels
                .get(url)
                .cloned()
                .unwrap_or_else(|| labels::readable_url(url));
            let reason = visible(reason);
            let line = format!("never answered: {url}: {reason}");
            if crate::text::columns(&line) <= MAX_WIDTH {
                self.line(&line);
            } else {
                self.wrapped(&format!("never answered: {url}"));
                self.wrapped(&format!("  {reason}"));
            }
        }
        let _ = self.out.flush();
    }
}

impl<W: Write> Plain<W> {
    /// A line per rule (and group) that fired: how often and how long; the first
    /// [`ALERT_LINES`] of them (a fleet's groups may be many; `--json` has them all).
    fn alert_lines(&mut self, s: &Summary) {
        for f in s.alerts.iter().take(ALERT_LINES) {
            let group = f.group.as_ref().map_or(String::new(), |g| format!(" on {g}"));
            let end = if f.at_end { " (still firing)" } else { "" };
            self.line(&format!(
                "alert fired: {}{group} · {} time(s) · {} firing{end}",
                f.rule,
                f.times,
                duration(Some(f.firing_s))
            ));
        }
        if s.alerts.len() > ALERT_LINES {
            self.line(&format!(
                "alert fired: {} more rule(s) and group(s) (in --json)",
                s.alerts.len() - ALERT_LINES
            ));
        }
    }
}

/// Rules and groups that fired, listed by the plain summary.
const ALERT_LINES: usize = 10;

impl<W: Write> Output for Plain<W> {
    fn start(&mut self, run: &Run<'_>, notes: &[String]) {
        self.preamble(run, notes);
    }

    fn event(&mut self, _run: &Run<'_>, elapsed: f64, event: &Event) {
        self.event_line(elapsed, event);
    }

    fn interval(&mut self, _run: &Run<'_>, snapshot: &Snapshot) {
        self.rows(snapshot);
    }

    fn note(&mut self, text: &str) {
        self.wrapped(text);
    }

    fn summary(&mut self, _run: &Run<'_>, summary: &Summary) {
        self.summary_lines(summary);
    }

    fn closed(&self) -> bool {
        self.closed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::{Load, Quantiles, Rate};
    use crate::snapshot::Progress;

    fn busy() -> Figures {
        Figures {
            generation: Rate {
                window: Some(12_345_678.9),
                ewma: Some(1.0),
                promql: None,
            },
            prompt: Rate {
                window: Some(9_876_543.2),
                ..Rate::default()
            },
            requests: crate::figures::Requests {
                finished: Some(1234.56),
                tokens_per_request: Some(123_456.0),
                mean_latency: Some(81.25),
                steady_rate: Some(2.46),
                ..Default::default()
            },
            in_flight: crate::figures::InFlight {
                running: Some(12345.0),
                waiting: Some(99999.0),
                kv_usage: Some(1.0),
                tokens_per_s_per_request: Some(8.12),
                ..Default::default()
            },
            ttft: Quantiles {
                p95: Some(12.345),
                ..Quantiles::default()
            },
            itl: Quantiles {
                p95: Some(9.87),
                ..Quantiles::default()
            },
            load: Load::QueueGrowing,
            ..Figures::default()
        }
    }

    #[test]
    fn lines_fit_120_columns_and_the_header_repeats_every_20_lines() {
        for progress in [false, true] {
            let mut out = Vec::new();
            let mut plain = Plain::new(&mut out, progress);
            let f = busy();
            let at = chrono::Utc::now();
            let snapshot = Snapshot {
                verdict: crate::figures::Verdict::default(),
                elapsed: 12345.6,
                at,
                window: crate::snapshot::WindowState {
                    asked: chrono::TimeDelta::seconds(30),
                    computed_at: at,
                    newest_age_s: Some(0.5),
                    fresh_pages: 1,
                },
                servers: Vec::new(),
                progress: progress.then(|| Progress::new(25_000, &f)),
                figures: f.clone(),
                groups: Some((
                    "instance".into(),
                    vec![("http://very-long-hostname.example:9101".into(), f)],
                )),
                on_screen: None,
            };
            for _ in 0..30 {
                plain.rows(&snapshot);
            }
            let text = String::from_utf8(out).unwrap();
            assert!(text.lines().all(|l| l.chars().count() <= MAX_WIDTH), "{text}");
            // The group's legend (its URL too long for the column: `#1`) is no row.
            let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('!')).collect();
            let headers: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].contains("gen/s")).collect();
            assert_eq!(headers, [0, 21, 42], "{text}");
            assert!(
                lines[1].contains("12345679") && lines[1].contains("queue growing"),
                "{}",
                lines[1]
            );
            // Numbered, not cut, and named once whole.
            assert!(lines[2].trim_start().starts_with("#1 "), "{}", lines[2]);
            let legend = "! instance #1 is http://very-long-hostname.example:9101";
            assert_eq!(text.lines().filter(|l| *l == legend).count(), 1, "{text}");
            assert_eq!(lines[0].contains("eta"), progress);
        }
    }
}
