//! One scraped URL: its tracker, its status, and what its scrapes announce (restarts per
//! instance, faults, recoveries, instances that vanish from a federation).

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::atomic::AtomicBool;

use chrono::{DateTime, TimeDelta, Utc};
use hashbrown::HashTable;
use promrate::{series::ResetCause, Format, IngestError, IngestReport, ParseError, Parser, Tracker};

use crate::events::{Event, EventKind};
use crate::figures::ServerKind;
use crate::http::{self, Page};
use crate::retired::RetiredTotals;

/// Scrapes after a restart in which further resets are that restart's.
const RESTART_SETTLES: u64 = 5;

/// Label that names a server in a federation.
const INSTANCE: &str = "instance";

/// What the last scrape of a URL gave.
#[derive(Debug, Clone)]
pub enum Status {
    /// No answer yet.
    Waiting,
    /// A page with inference metrics.
    Ok(ServerKind),
    /// A page with lines that did not parse (the rest was used; without a kind, it had no
    /// inference metrics either).
    BadLines {
        kind: Option<ServerKind>,
        count: usize,
        first: ParseError,
    },
    /// A page without any vLLM, SGLang or TGI metric.
    NoInferenceMetrics,
    /// A page without a sample at all (a `/federate` whose `match[]` selects nothing, an
    /// exporter that has nothing yet).
    Empty,
    /// The tracker refused the page whole (a limit, a clock that went back).
    Refused(IngestError),
    /// No page: connection, timeout, HTTP status or body.
    Failed(String),
}

impl Status {
    /// Whether the page was read and counts in the figures.
    pub fn is_ok(&self) -> bool {
        self.kind().is_some()
    }

    pub fn kind(&self) -> Option<ServerKind> {
        match self {
            Status::Ok(kind) => Some(*kind),
            Status::BadLines { kind, .. } => *kind,
            _ => None,
        }
    }

    /// One word for tables and JSON.
    pub fn word(&self) -> &'static str {
        match self {
            Status::Waiting => "waiting",
            Status::Ok(_) => "ok",
            Status::BadLines { .. } => "bad_lines",
            Status::NoInferenceMetrics => "no_inference_metrics",
            Status::Empty => "empty",
            Status::Refused(_) => "refused",
            Status::Failed(_) => "error",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Status::Waiting => f.write_str("waiting for the first scrape"),
            Status::Ok(kind) => write!(f, "ok ({})", kind.as_str()),
            Status::BadLines { kind, count, first } => {
                match kind {
                    Some(kind) => write!(f, "ok ({}), ", kind.as_str())?,
                    None => f.write_str("no inference metrics read, ")?,
                }
                write!(
                    f,
                    "{count} bad line(s), first at {}:{}: {}",
                    first.line, first.column, first.kind
                )
            }
            Status::NoInferenceMetrics => {
                let servers: Vec<&str> = crate::engines::ENGINES
                    .iter()
                    .filter(|e| e.kind != "dcgm")
                    .map(|e| e.title)
                    .collect();
                write!(f, "no inference server's metrics on this page ({})", servers.join(", "))
            }
            Status::Empty => f.write_str(
                "an empty page: not one sample on it (a /federate whose match[] selects no series, or a server with nothing to export yet)",
            ),
            Status::Refused(IngestError::SeriesLimit { limit, series }) => write!(
                f,
                "too many series: this page would take the URL to {series} series, over the limit of {limit}; refused whole (see --max-series)"
            ),
            Status::Refused(e) => write!(f, "page refused: {e}"),
            Status::Failed(message) => f.write_str(message),
        }
    }
}

/// One server as a page shows it: a URL's only server, or an `instance` in a federation.
#[derive(Debug, Clone, Default)]
pub struct Instance {
    pub stale: bool,
    pub last_restart: Option<DateTime<Utc>>,
    /// The scrape that last showed a restart: resets seen in the next scrape belong to the
    /// same restart (series that reappear late).
    restart_scrape: Option<u64>,
    process_start: Option<f64>,
    /// Pages that showed counters going down with no restart evidence, or a process
    /// start time going backwards, within the retention: two make the server erratic.
    unexplained: Vec<DateTime<Utc>>,
    /// Whether the server was announced erratic (once, until it is steady again).
    erratic_announced: bool,
    /// Whether its start time was said to move with no restart (once a run).
    start_moving_said: bool,
}

/// A name for a server behind `url` in events: the instance, or the URL for a page
/// without `instance` labels.
fn source_name(url: &str, instance: &str) -> String {
    if instance.is_empty() {
        url.to_string()
    } else {
        instance.to_string()
    }
}

/// The `instance` values on the tracker's newest page, sorted, each with its
/// `process_start_time_seconds`. Borrowed from the tracker, and found by the address of
/// the value: the tracker stores a label value once for all its series, so the series of
/// one instance share it, and a lookup hashes a pointer, not a string (values found at two
/// addresses are merged after).
fn instances_on_page(tracker: &Tracker) -> Vec<(&str, Option<f64>)> {
    let hash = |address: usize| (address as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut seen: HashTable<(usize, &str, Option<f64>)> = HashTable::new();
    for series in tracker.series().filter(|s| tracker.on_newest_page(s)) {
        let instance = series.label(INSTANCE).unwrap_or("");
        let address = instance.as_ptr() as usize;
        let entry = match seen.find_mut(hash(address), |e| e.0 == address) {
            Some(entry) => entry,
            None => seen
                .insert_unique(hash(address), (address, instance, None), |e| hash(e.0))
                .into_mut(),
        };
        if series.name() == "process_start_time_seconds" {
            entry.2 = series.last_value();
        }
    }
    let mut present: Vec<(&str, Option<f64>)> =
        seen.into_iter().map(|(_, name, start)| (name, start)).collect();
    present.sort_unstable_by(|a, b| a.0.cmp(b.0).then(b.1.is_some().cmp(&a.1.is_some())));
    present.dedup_by(|later, first| later.0 == first.0);
    present
}

/// Whether a Content-Type is one of the exposition formats (text, OpenMetrics), whatever
/// its parameters: any other is worth a word even when the page parses.
fn is_exposition_type(content_type: &str) -> bool {
    let media = content_type.split(';').next().unwrap_or("").trim();
    ["text/plain", "application/openmetrics-text"]
        .iter()
        .any(|t| media.eq_ignore_ascii_case(t))
}

/// The `version` an exposition Content-Type names, when it is none this monitor knows (text
/// 0.0.4 and 1.0.0; OpenMetrics 0.0.1, 1.0.0 and 2.0.0): a newer format, read as the
/// nearest one known, may not read right.
fn unknown_version(content_type: &str) -> Option<&str> {
    let mut parts = content_type.split(';');
    let media = parts.next().unwrap_or("").trim();
    let version = parts.find_map(|p| {
        let (key, value) = p.split_once('=')?;
        key.trim()
            .eq_ignore_ascii_case("version")
            .then(|| value.trim().trim_matches('"'))
    })?;
    let known: &[&str] = if media.eq_ignore_ascii_case("text/plain") {
        &["0.0.4", "1.0.0"]
    } else if media.eq_ignore_ascii_case("application/openmetrics-text") {
        &["0.0.1", "1.0.0", "2.0.0"]
    } else {
        return None;
    };
    (!known.contains(&version)).then_some(version)
}

/// The start of a page kept for messages (an HTML page's words).
const HEAD: usize = 4096;

/// Keeps the start of a page streamed in chunks of whole characters.
fn keep_head(head: &mut String, chunk: &[u8]) {
    if head.len() < HEAD {
        let room = (HEAD - head.len()).min(chunk.len());
        head.push_str(&String::from_utf8_lossy(&chunk[..room]));
    }
}

/// The last bytes of a body as it arrives: enough to tell how it ends.
#[derive(Debug)]
struct Ending {
    last: [u8; 6],
    len: usize,
    /// An OpenMetrics page, which ends with `# EOF`: only its chunks are searched for
    /// that line (a text page of hundreds of megabytes has none to find).
    openmetrics: bool,
    /// A whole `# EOF` line came, though more may have followed it: such a page was not
    /// cut, its text after the end is the parser's to name.
    eof_line: bool,
}

/// OpenMetrics' last line, as it stands in a page (a first line has no newline before it).
const EOF_LINE: &[u8] = b"\n# EOF\n";

impl Ending {
    /// The ending of a body read as `format`.
    fn of(format: Format) -> Self {
        Ending {
            last: [0; 6],
            len: 0,
            openmetrics: matches!(format, Format::OpenMetrics | Format::OpenMetrics2),
            eof_line: false,
        }
    }

    fn keep(&mut self, chunk: &[u8]) {
        if self.openmetrics && !self.eof_line && !chunk.is_empty() {
            // Across the seam: the bytes kept of the chunks before, and this one's first.
            let mut seam = [0; 12];
            // Fewer bytes kept than room for them: the page's start is among them, and
            // stands for a newline.
            let start = usize::from(self.len < self.last.len());
            seam[0] = b'\n';
            seam[start..start + self.len].copy_from_slice(self.bytes());
            let before = start + self.len;
            let after = chunk.len().min(EOF_LINE.len() - 1);
            seam[before..before + after].copy_from_slice(&chunk[..after]);
            self.eof_line = memchr::memmem::find(&seam[..before + after], EOF_LINE).is_some()
                || memchr::memmem::find(chunk, EOF_LINE).is_some();
        }
        for &byte in chunk.iter().rev().take(self.last.len()).rev() {
            self.last.rotate_left(1);
            self.last[self.last.len() - 1] = byte;
            self.len = (self.len + 1).min(self.last.len());
        }
    }

    fn bytes(&self) -> &[u8] {
        &self.last[self.last.len() - self.len..]
    }

    /// Why a whole body (`format`) was cut short, if it was: every format ends its last
    /// line with a newline (OpenMetrics with `# EOF`, its newline optional). A server that
    /// closes the connection early (no Content-Length to miss) sends such a body; its last
    /// line may be cut inside its value (`12` of `1234`).
    fn cut_short(&self, format: Format) -> Option<&'static str> {
        let ending = self.bytes();
        if ending.is_empty() {
            return None;
        }
        match format {
            Format::OpenMetrics | Format::OpenMetrics2 => (!ending.ends_with(b"# EOF\n")
                && !ending.ends_with(b"# EOF")
                && !self.eof_line)
                .then_some("the page ends without '# EOF': cut short? Its last line, if cut, was not read"),
            _ => (ending.last() != Some(&b'\n')).then_some(
                "the page ends inside a line (no newline after it): cut short? That line was not read",
            ),
        }
    }
}

/// Whether a label tells copies of one series apart rather than servers: the scrape job,
/// or an HA pair's replica label (`replica`, `prometheus_replica`, `__replica__`).
fn tells_copies_apart(label: &str) -> bool {
    label == "job" || label.to_ascii_lowercase().contains("replica")
}

/// A label as a tracked series has it: its name and value.
type Label<'a> = (&'a str, &'a str);

/// The first two of `series` whose labels differ only in labels that tell copies apart:
/// the label they differ in, and the first one's other labels as written.
fn copies(series: &[&promrate::TrackedSeries]) -> Option<(String, String)> {
    let mut seen: HashMap<Vec<Label<'_>>, Vec<Label<'_>>> = HashMap::new();
    for s in series {
        let (mut copy, mut key): (Vec<_>, Vec<_>) =
            s.labels().partition(|(name, _)| tells_copies_apart(name));
        copy.sort_unstable();
        key.sort_unstable();
        match seen.get(&key) {
            Some(other) if *other != copy => {
                let differing = copy
                    .iter()
                    .chain(other)
                    .find(|l| !copy.contains(l) || !other.contains(l))
                    .map_or("job", |l| l.0);
                let written: Vec<String> = key.iter().map(|(n, v)| format!("{n}=\"{v}\"")).collect();
                return Some((differing.to_string(), format!("{{{}}}", written.join(","))));
            }
            Some(_) => {}
            None => {
                seen.insert(key, copy);
            }
        }
    }
    None
}

/// Whether a page is HTML: by its Content-Type, or by its first character when it has none.
fn is_html(content_type: Option<&str>, head: &str) -> bool {
    match content_type {
        Some(t) => t
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .eq_ignore_ascii_case("text/html"),
        None => head.trim_start().starts_with('<'),
    }
}

/// A URL as an interval shows it: what the outputs read of a [`Target`], copied into the
/// interval's snapshot so that they never reach into the trackers.
#[derive(Debug, Clone)]
pub struct ServerRow {
    pub url: String,
    pub status: Status,
    pub since: Option<DateTime<Utc>>,
    pub last_ok: Option<DateTime<Utc>>,
    pub format: Option<Format>,
    pub errors: u64,
    pub skipped: u64,
    pub instances: BTreeMap<String, Instance>,
    /// How long the newest scrape took, seconds.
    pub scrape_s: Option<f64>,
    /// The span its tokens since the start were counted over: the mean time of its token
    /// counters' first points and of their newest, with how many there are (a
    /// federation's or a TSDB's samples carry their own times, each server's its own).
    pub counted: Option<Counted>,
}

/// When a URL's token counters were first and last read: the mean time of their first
/// points and of their newest, in Unix milliseconds, and how many counters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Counted {
    pub first_ms: f64,
    pub newest_ms: f64,
    pub counters: usize,
}

impl ServerRow {
    pub fn of(t: &Target) -> ServerRow {
        ServerRow {
            url: t.url.clone(),
            status: t.status.clone(),
            since: t.since,
            last_ok: t.last_ok,
            format: t.format,
            errors: t.errors,
            skipped: t.skipped,
            instances: t.instances.clone(),
            scrape_s: t.scrape_s,
            counted: t.counted(),
        }
    }
}

/// Per-URL state in the monitor.
pub struct Target {
    pub url: String,
    pub tracker: Tracker,
    pub since: Option<DateTime<Utc>>,
    pub last_ok: Option<DateTime<Utc>>,
    pub status: Status,
    /// Whether the run was told that this server counts tokens at a request's end.
    pub noted_request_end: bool,
    /// The format of the last page (servers may ignore our Accept header).
    pub format: Option<Format>,
    pub errors: u64,
    /// Servers behind this URL by `instance` ("" for a URL without that label).
    pub instances: BTreeMap<String, Instance>,
    /// Pages fetched but never read because a newer one arrived first (the monitor fell
    /// behind): the newest page wins.
    pub skipped: u64,
    /// How long the newest scrape took, seconds.
    pub scrape_s: Option<f64>,
    /// Whether its newest page brought a point its series did not hold: a federation's or
    /// a TSDB's page between two of its scrapes repeats the samples it holds, with their
    /// own times, and is no new page (nothing is judged on it).
    pub brought_news: bool,
    /// How far its samples' own times lagged their scrapes (a federation's samples, by up
    /// to its scrape interval), over its last [`LAGS_KEPT`] pages: a series' points come
    /// that far apart, so a pause that long is no outage.
    lags: std::collections::VecDeque<TimeDelta>,
    /// Its token counters' first points: their mean time and how many (see
    /// [`ServerRow::counted`]), from the first page that had them.
    first_counted: Option<(f64, usize)>,
    /// Whether the URL's unexpected Content-Type was said (once per URL).
    type_warned: bool,
    /// Whether its samples' own timestamps, far from the scrape, were said.
    time_warned: bool,
    /// Lines that did not parse were said (once per URL).
    bad_lines_said: bool,
    /// Whether samples the tracker refused (a series twice on a page, a counter's value
    /// that is no count) were said.
    refused_said: bool,
    /// Whether a text page whose Content-Length ended it inside a line was said.
    unterminated_said: bool,
    /// An OpenMetrics page without `# EOF` was said (once per URL).
    eof_warned: bool,
    /// A page's body came (read or not): the server answered.
    answered: bool,
    scrapes: u64,
    /// A fault was announced and no scrape has succeeded since: one event per outage,
    /// including the first one of a URL that never answered.
    fault_announced: bool,
    /// What the window figures read: erratic counters are not rated within it.
    retention: TimeDelta,
    /// Whether a counter declared another type was said ([`Target::counters_typed_otherwise`]).
    typed_otherwise_said: bool,
    /// Pages in a row that lost series of the page before, and whether it was said
    /// ([`Target::series_in_turn`]).
    pages_in_turn: u32,
    in_turn_said: bool,
    /// Whether a token counter served twice was said ([`Target::served_twice`]), and how
    /// many series the check last saw (it looks again when that changes).
    twice_said: bool,
    twice_checked: usize,
    /// How far a sample's own time may be from its scrape and still be in a window ending
    /// at the scrape (`None`: not said, as for a TSDB's samples, which lag by its scrape
    /// interval by design), and whether it was said.
    window_reach: Option<TimeDelta>,
    late_said: bool,
    /// What the counters its tracker dropped had counted, by the `--by` label's value.
    pub retired: RetiredTotals,
    /// The `--by` label the run groups by, for [`Target::retired`].
    pub by: Option<String>,
}

/// How far a server's clock may be from this machine's (or a TSDB's) for its start times
/// (`process_start_time_seconds`, `_created`) to be read against the scrapes' times: a new
/// start more than this before the scrape that last showed the old process is a second
/// process that was running already (a replica behind the same URL, a server that says it
/// has been up an hour), not a restart whose whole count is new tokens. Clocks kept by NTP
/// are within milliseconds; five minutes leaves room for a TSDB's scrape interval too.
pub const START_TIME_SKEW: TimeDelta = TimeDelta::minutes(5);

/// Pages in a row that miss series of the page before, after which a URL is said to serve
/// different series in turn (one page's churn is a target that went).
const IN_TURN_PAGES: u32 = 3;

/// How far a sample's own timestamp may be from its scrape before the monitor says so
/// (a federation's samples lag by up to its scrape interval).
pub const OWN_TIME_SKEW: TimeDelta = TimeDelta::minutes(5);

/// Pages whose lag ([`Target::samples_lag`]) is remembered: a federation's scrape
/// interval is seen within a few.
const LAGS_KEPT: usize = 16;

/// A URL's tracker: vLLM's pages in every format and spelling (and lenient: unknown
/// escapes kept as written, as the Prometheus server reads them), untyped families by name
/// (a federation declares every family untyped), series keeping `retention` of points.
fn target_tracker(retention: TimeDelta) -> Tracker {
    let mut tracker = Tracker::new([]);
    tracker
        .vllm_preset()
        .infer_counters(true)
        .retention(retention)
        .start_time_skew(Some(START_TIME_SKEW));
    tracker
}

/// The format a page was read in, for messages.
fn format_name(format: Option<Format>) -> &'static str {
    match format {
        Some(Format::OpenMetrics) => "OpenMetrics 1.0",
        Some(Format::OpenMetrics2) => "OpenMetrics 2.0",
        _ => "the text format",
    }
}

impl Target {
    /// An event of this URL's.
    fn event(&self, kind: EventKind, at: DateTime<Utc>, message: String) -> Event {
        Event {
            kind,
            at,
            source: self.url.clone(),
            message,
            alert: None,
        }
    }

    /// A URL whose series keep `retention` of points (what the window needs: totals since
    /// the start are kept by the tracker apart from the points).
    pub fn new(url: String, retention: TimeDelta) -> Self {
        Target {
            url,
            tracker: target_tracker(retention),
            since: None,
            last_ok: None,
            status: Status::Waiting,
            noted_request_end: false,
            format: None,
            errors: 0,
            instances: BTreeMap::new(),
            skipped: 0,
            brought_news: false,
            lags: std::collections::VecDeque::with_capacity(LAGS_KEPT),
            first_counted: None,
            scrape_s: None,
            type_warned: false,
            time_warned: false,
            bad_lines_said: false,
            refused_said: false,
            unterminated_said: false,
            eof_warned: false,
            answered: false,
            scrapes: 0,
            fault_announced: false,
            retention,
            window_reach: None,
            late_said: false,
            typed_otherwise_said: false,
            pages_in_turn: 0,
            in_turn_said: false,
            twice_said: false,
            twice_checked: 0,
            retired: RetiredTotals::default(),
            by: None,
        }
    }

    /// Says so once when samples carry own times further from their scrape than `reach`
    /// (the window and an interval): a window ending at the scrape then holds too few of
    /// them to rate, and its rows were blank with "one page" for a reason.
    pub fn say_when_times_pass(&mut self, reach: TimeDelta) {
        self.window_reach = Some(reach);
    }

    /// The mean time of the newest points of its token counters on the newest page, in
    /// Unix milliseconds, and how many there are (none without a token counter).
    fn token_points(&self, kind: ServerKind) -> Option<(f64, usize)> {
        for metric in kind.0.generation {
            let selector = crate::source::selector(metric.name, metric.only);
            let (mut sum, mut count) = (0.0, 0);
            for series in self.tracker.matching(&selector).into_iter().flatten() {
                if let Some(point) = series.counter().and_then(|c| c.last()) {
                    sum += point.timestamp_ms as f64;
                    count += 1;
                }
            }
            if count > 0 {
                return Some((sum / count as f64, count));
            }
        }
        None
    }

    /// The span its tokens since the start were counted over ([`ServerRow::counted`]).
    fn counted(&self) -> Option<Counted> {
        let (first_ms, _) = self.first_counted?;
        let (newest_ms, counters) = self.token_points(self.status.kind()?)?;
        Some(Counted {
            first_ms,
            newest_ms,
            counters,
        })
    }

    /// The most its samples' own times lagged their scrapes over its last pages (zero for
    /// a server's own page, whose samples are the scrape's).
    pub fn samples_lag(&self) -> TimeDelta {
        self.lags.iter().copied().max().unwrap_or_else(TimeDelta::zero)
    }

    /// Whether this URL's figures count at `fresh` (its newest page is not older).
    pub fn is_fresh(&self, fresh: DateTime<Utc>) -> bool {
        self.status.is_ok() && self.last_ok.is_some_and(|at| at >= fresh)
    }

    /// Ingests one scrape; returns the events worth announcing.
    #[cfg(test)]
    pub fn ingest(&mut self, at: DateTime<Utc>, result: Result<Page, String>) -> Vec<Event> {
        self.ingest_page(at, &result)
    }

    /// Ingests one scrape, leaving the page to the caller (its buffer is read into again);
    /// returns the events worth announcing.
    pub fn ingest_page(&mut self, at: DateTime<Utc>, result: &Result<Page, String>) -> Vec<Event> {
        let mut events = Vec::new();
        let status = self.read(at, result, &mut events);
        self.settle(at, status, events)
    }

    /// Ingests a scrape whose body is read as it arrives, into the tracker, never held
    /// whole: each chunk also goes to `keep` when given (`--record`). Returns the events
    /// worth announcing, and why the body could not be read, if it could not.
    ///
    /// The page limit (`--max-page-mib`) is the tracker's too, so a page over it is refused
    /// whole, as Prometheus refuses it. A body that fails otherwise part way (the deadline,
    /// a broken connection, the run's end) leaves the lines read before it in the tracker,
    /// each a true sample at its time; the URL's status says the failure.
    pub fn ingest_answer(
        &mut self,
        at: DateTime<Utc>,
        answer: http::Answer,
        stop: &AtomicBool,
        mut keep: Option<&mut Vec<u8>>,
    ) -> (Vec<Event>, Option<String>) {
        let mut events = Vec::new();
        let (format, content_type) = (answer.format, answer.content_type.clone());
        self.format = Some(format);
        self.answered = true;
        self.tracker
            .parser(Parser::new(format).strict(false).body_size_limit(answer.limit()));
        let mut head = String::new();
        // With a Content-Length the body came whole (a shorter one is a read error): an
        // OpenMetrics ending without `# EOF` is the server's page, not a cut. A text page
        // that ends inside a line, though, is cut by its own Content-Length (one counted in
        // characters is short of a UTF-8 page): its last line may be `12` of `1234`.
        let sized = answer.length;
        let mut ended = true;
        let mut unterminated = false;
        let (ingested, failure) = match self.tracker.ingest_chunks(at) {
            Err(refused) => (Err(refused), None),
            Ok(mut page) => {
                let mut ending = Ending::of(format);
                let read = answer.read(stop, &mut |chunk| {
                    page.push(chunk);
                    keep_head(&mut head, chunk);
                    ending.keep(chunk);
                    if let Some(kept) = keep.as_deref_mut() {
                        kept.extend_from_slice(chunk);
                    }
                });
                let failure = match read {
                    Err(failure) => Some(failure),
                    Ok(_) if sized.is_some() => {
                        ended = ending.cut_short(format).is_none();
                        if !ended && !matches!(format, Format::OpenMetrics | Format::OpenMetrics2) {
                            page.discard_cut_line();
                            unterminated = true;
                        }
                        None
                    }
                    Ok(_) => ending.cut_short(format).map(|why| {
                        page.discard_cut_line();
                        why.to_string()
                    }),
                };
                (page.finish(), failure)
            }
        };
        self.without_eof(at, format, content_type.as_deref(), ended, &mut events);
        if unterminated && !is_html(content_type.as_deref(), &head) {
            self.cut_by_its_length(at, sized.unwrap_or_default(), &mut events);
        }
        let status = match failure.clone() {
            Some(failure) => Err(Status::Failed(failure)),
            None => ingested
                .map_err(Status::Refused)
                .and_then(|report| self.judge(at, content_type.as_deref(), &head, report, &mut events)),
        };
        (self.settle(at, status, events), failure)
    }

    /// The scrape's status, counted, and the fault or recovery it announces.
    fn settle(
        &mut self,
        at: DateTime<Utc>,
        status: Result<Status, Status>,
        mut events: Vec<Event>,
    ) -> Vec<Event> {
        self.status = match status {
            Ok(status) => status,
            Err(status) => {
                self.errors += 1;
                status
            }
        };
        let event = |kind, message: String| self.event(kind, at, message);
        let ok = self.status.is_ok();
        if !ok && !self.fault_announced {
            let message = match self.since {
                Some(_) => self.status.to_string(),
                // A body that came and could not be read: the server did answer.
                None if self.answered => format!("no page read yet: {}", self.status),
                None => format!("never answered yet: {}", self.status),
            };
            events.push(event(EventKind::Fault, message));
        } else if ok && self.fault_announced {
            let message = if self.scrapes > 1 {
                "scrapes succeed again"
            } else {
                "first successful scrape"
            };
            events.push(event(EventKind::Recovered, message.into()));
        }
        self.fault_announced = !ok;
        events
    }

    fn read(
        &mut self,
        at: DateTime<Utc>,
        result: &Result<Page, String>,
        events: &mut Vec<Event>,
    ) -> Result<Status, Status> {
        let page = result.as_ref().map_err(|e| Status::Failed(e.clone()))?;
        self.format = Some(page.format);
        self.answered = true;
        // What the server sent (it may ignore our Accept header and answer OpenMetrics).
        self.tracker.read_as(page.format);
        let mut ending = Ending::of(page.format);
        ending.keep(page.body.as_bytes());
        let ended = ending.cut_short(page.format).is_none();
        // A whole page came with its Content-Length (a small one is fetched whole only
        // then): a text page that ends inside a line was cut by it, as when read as it
        // arrives (`ingest_answer`).
        let text = !matches!(page.format, Format::OpenMetrics | Format::OpenMetrics2)
            && !is_html(page.content_type.as_deref(), &page.body);
        let cut = !ended && text;
        let body = if cut {
            page.body.rfind('\n').map_or("", |end| &page.body[..=end])
        } else {
            page.body.as_str()
        };
        let report = self.tracker.ingest(body, at).map_err(Status::Refused)?;
        if cut {
            self.cut_by_its_length(at, page.body.len() as u64, events);
        }
        self.without_eof(at, page.format, page.content_type.as_deref(), ended, events);
        self.judge(at, page.content_type.as_deref(), &page.body, report, events)
    }

    /// A text page that ends inside a line though it was as long as its Content-Length
    /// (`length`) said: its last line, maybe `12` of `1234`, was not read. Said once.
    fn cut_by_its_length(&mut self, at: DateTime<Utc>, length: u64, events: &mut Vec<Event>) {
        if std::mem::replace(&mut self.unterminated_said, true) {
            return;
        }
        events.push(self.event(EventKind::Warning, at, format!(
                "its page ends inside a line, though it was as long as its Content-Length ({length} bytes) said: a Content-Length short of the page (counted in characters, not bytes?) cuts its last line, which was not read"
            )));
    }

    /// A whole page read as OpenMetrics without its `# EOF` (`eof` false): a page of the
    /// text format under OpenMetrics' Content-Type, most likely. Its lines are read all the
    /// same; said once.
    fn without_eof(
        &mut self,
        at: DateTime<Utc>,
        format: Format,
        content_type: Option<&str>,
        eof: bool,
        events: &mut Vec<Event>,
    ) {
        let openmetrics = matches!(format, Format::OpenMetrics | Format::OpenMetrics2);
        if eof || !openmetrics || std::mem::replace(&mut self.eof_warned, true) {
            return;
        }
        events.push(self.event(EventKind::Warning, at, format!(
                "served as OpenMetrics ({}), but its page has no '# EOF' (the text format under OpenMetrics' name?): read line by line all the same",
                content_type.unwrap_or("no Content-Type")
            )));
    }

    /// Samples whose own times are more than [`OWN_TIME_SKEW`] from their scrape (`skew`
    /// at most): said once, and read at the scrapes' times from the next page on.
    fn own_times(&mut self, at: DateTime<Utc>, skew: Option<TimeDelta>, events: &mut Vec<Event>) {
        let lag = skew.filter(|s| *s < TimeDelta::zero() && -*s <= OWN_TIME_SKEW);
        if self.lags.len() == LAGS_KEPT {
            self.lags.pop_front();
        }
        self.lags.push_back(lag.map_or(TimeDelta::zero(), |s| -s));
        let Some(skew) = skew else {
            return;
        };
        let (far, side) = if skew < TimeDelta::zero() {
            (-skew, "before")
        } else {
            (skew, "after")
        };
        // To the second: a clock's offset is not read to the millisecond.
        let seconds = (far.num_milliseconds() + 500) / 1000;
        let far_words = humantime::format_duration(std::time::Duration::from_secs(seconds.unsigned_abs()));
        if far <= OWN_TIME_SKEW {
            if let Some(reach) = self.window_reach.filter(|&reach| far > reach) {
                if !std::mem::replace(&mut self.late_said, true) {
                    let reach = humantime::format_duration(reach.to_std().unwrap_or_default());
                    events.push(self.event(EventKind::Warning, at, format!(
                        "its samples carry timestamps of their own, up to {far_words} {side} the scrape: further than a window ending at the scrape reaches ({reach}), so it holds too few of them to rate (rows without a window figure); a --window longer by {far_words} reaches them"
                    )));
                }
            }
            return;
        }
        if !std::mem::replace(&mut self.time_warned, true) {
            let far = far_words;
            // Seconds read as milliseconds are decades before the scrape.
            let why = if skew < -TimeDelta::days(3650) {
                "OpenMetrics seconds served as the text format, read as milliseconds?"
            } else {
                "the server's clock, or samples of another time?"
            };
            events.push(self.event(EventKind::Warning, at, format!(
                    "its samples carry timestamps of their own, up to {far} {side} the scrape ({why}): from its next page on they are read at the scrape's time, as Prometheus' honor_timestamps: false reads them"
                )));
            // What was recorded at those times is forgotten: rated against them, an
            // interval of a second read as a millisecond showed a thousand times the
            // rate.
            self.tracker = target_tracker(self.retention);
            self.tracker.honor_timestamps(false);
        }
    }

    /// What a page read into the tracker makes of the URL (`head`: the page's start, for
    /// the words of an HTML page).
    fn judge(
        &mut self,
        at: DateTime<Utc>,
        content_type: Option<&str>,
        head: &str,
        report: IngestReport,
        events: &mut Vec<Event>,
    ) -> Result<Status, Status> {
        self.retired.add(&report.retired, self.by.as_deref());
        self.brought_news = report.samples > 0 || report.repeated == 0;
        let Some(kind) = ServerKind::detect(&self.tracker) else {
            if is_html(content_type, head) {
                // A login page, a proxy's error page or a dashboard at the wrong path.
                return Err(Status::Failed(format!(
                    "an HTML page ({}), not metrics: {}",
                    content_type.unwrap_or("no Content-Type"),
                    crate::http::html_words(head)
                )));
            }
            return Err(match report.first_error {
                Some(first) => Status::BadLines {
                    kind: None,
                    count: report.bad_lines,
                    first,
                },
                None if report.samples == 0 => Status::Empty,
                None => Status::NoInferenceMetrics,
            });
        };
        if let Some(version) = content_type.and_then(unknown_version) {
            if !std::mem::replace(&mut self.type_warned, true) {
                let read_as = format_name(self.format);
                events.push(self.event(EventKind::Warning, at, format!(
                        "served as {}: version {version} is none this monitor knows; read as {read_as}, which a newer format may not be",
                        content_type.unwrap_or_default()
                    )));
            }
        }
        if let Some(unexpected) = content_type.filter(|t| !is_exposition_type(t)) {
            if !std::mem::replace(&mut self.type_warned, true) {
                events.push(self.event(EventKind::Warning, at, format!(
                        "served as {unexpected}, not as one of the exposition formats asked for (OpenMetrics, the text format): read anyway, as it parses"
                    )));
            }
        }
        self.own_times(at, report.timestamp_skew, events);
        self.counters_typed_otherwise(at, kind, events);
        self.token_counters(at, kind, events);
        self.since.get_or_insert(at);
        self.last_ok = Some(at);
        self.scrapes += 1;
        self.follow_instances(at, &report, events);
        if let Some(first) = report.first_refused.as_ref().filter(|_| !self.refused_said) {
            self.refused_said = true;
            let why = match first.error {
                promrate::SeriesError::Duplicate { .. } => {
                    ": a series printed twice on one page is read from its first line, and its figures are only as right as that line"
                }
                _ => "",
            };
            events.push(self.event(EventKind::Warning, at, format!(
                    "{} sample(s) of its page were refused and left out of the figures (first at {first}){why}",
                    report.refused
                )));
        }
        Ok(match report.first_error {
            Some(first) => {
                self.bad_lines(at, content_type, report.bad_lines, &first, events);
                Status::BadLines {
                    kind: Some(kind),
                    count: report.bad_lines,
                    first,
                }
            }
            None => Status::Ok(kind),
        })
    }

    /// The server's counters of tokens and requests declared another type on its page (a
    /// `# TYPE ... gauge`): the tracker does not rate them, so their figures were `-` with
    /// nothing said, where Prometheus' `rate()` reads any series as a counter. Said once.
    fn counters_typed_otherwise(&mut self, at: DateTime<Utc>, kind: ServerKind, events: &mut Vec<Event>) {
        if self.typed_otherwise_said {
            return;
        }
        let engine = kind.0;
        // The page as the figures read it.
        let source = crate::source::Source {
            tracker: &self.tracker,
            at,
            url: &self.url,
            retired: None,
        };
        for metrics in [engine.generation, engine.prompt, engine.finished] {
            // The first of a figure's metrics on the page is the one it reads.
            let Some((metric, all_other)) = metrics.iter().find_map(|metric| {
                let selector = crate::source::selector(metric.name, metric.only);
                let mut present = source.series(&selector).peekable();
                present.peek()?;
                Some((metric, present.all(|s| s.counter().is_none())))
            }) else {
                continue;
            };
            if all_other {
                self.typed_otherwise_said = true;
                events.push(self.event(EventKind::Warning, at, format!(
                    "{} is declared another type than a counter on its page (its # TYPE line): it is not rated, and its figures show `-` (Prometheus' rate() would read it as a counter)",
                    metric.name
                )));
                return;
            }
        }
    }

    /// Pages in a row on which some of the generated-token series of the page before
    /// were missing: three, and the URL serves different series in turn (a proxy that
    /// sends each scrape to another backend, with other labels). Only the newest page's
    /// series are rated, so the rows showed half the rate with nothing said. Said once.
    fn series_in_turn(&mut self, at: DateTime<Utc>, kind: ServerKind, events: &mut Vec<Event>) {
        if self.in_turn_said {
            return;
        }
        let scrapes = self.tracker.scrapes();
        let counted = kind.0.generation.iter().find_map(|metric| {
            let selector = crate::source::selector(metric.name, metric.only);
            let (mut here, mut gone) = (0, 0);
            for series in self.tracker.matching(&selector).into_iter().flatten() {
                if self.tracker.on_newest_page(series) {
                    here += 1;
                } else if series.last_seen_scrape() + 1 == scrapes {
                    gone += 1;
                }
            }
            (here + gone > 0).then_some((metric, here, gone))
        });
        let Some((metric, here, gone)) = counted else {
            return;
        };
        self.pages_in_turn = if gone > 0 { self.pages_in_turn + 1 } else { 0 };
        if self.pages_in_turn >= IN_TURN_PAGES {
            self.in_turn_said = true;
            events.push(self.event(EventKind::Warning, at, format!(
                "its {} series change from page to page ({gone} of the page before missing, {here} on this one, {IN_TURN_PAGES} pages running): several backends behind one URL, each scrape answered by another? Only the newest page's series are rated, so the figures may be one backend's; scrape each backend's own URL",
                metric.name
            )));
        }
    }

    /// What a page's token counters tell: series served in turn or twice (said once each),
    /// and the first points they were counted from.
    fn token_counters(&mut self, at: DateTime<Utc>, kind: ServerKind, events: &mut Vec<Event>) {
        self.series_in_turn(at, kind, events);
        self.served_twice(at, kind, events);
        if self.first_counted.is_none() {
            self.first_counted = self.token_points(kind);
        }
    }

    /// A server's token counter served twice, the copies differing only in `job` (one
    /// server scraped by two jobs: a ServiceMonitor and a PodMonitor) or in a replica label
    /// (an HA pair a querier did not deduplicate): summed, as PromQL's `sum` sums them, the
    /// figures are twice the truth. Said once, naming the first such server.
    fn served_twice(&mut self, at: DateTime<Utc>, kind: ServerKind, events: &mut Vec<Event>) {
        if self.twice_said {
            return;
        }
        let mut found = None;
        for metric in kind.0.generation {
            let selector = crate::source::selector(metric.name, metric.only);
            let series: Vec<&promrate::TrackedSeries> = self
                .tracker
                .matching(&selector)
                .into_iter()
                .flatten()
                .filter(|s| self.tracker.on_newest_page(s))
                .collect();
            if series.is_empty() {
                continue;
            }
            if series.len() > 1 && series.len() != std::mem::replace(&mut self.twice_checked, series.len()) {
                found = copies(&series).map(|(label, copy)| (metric, label, copy));
            }
            break;
        }
        let Some((metric, label, copy)) = found else {
            return;
        };
        self.twice_said = true;
        events.push(self.event(EventKind::Warning, at, format!(
            "its {} series come twice, differing only in `{label}` (first: {copy}): one server scraped by two jobs, or an HA pair not deduplicated? Both are summed, as PromQL's sum sums them: twice the truth. Deduplicate at the source (one scrape job a server; Thanos' --query.replica-label)",
            metric.name
        )));
    }

    /// Lines of a page otherwise read that did not parse: said once (their samples are
    /// missing from the figures, which only said `-`), with the format the page was read
    /// in, since a page served under another format's Content-Type fails this way.
    fn bad_lines(
        &mut self,
        at: DateTime<Utc>,
        content_type: Option<&str>,
        count: usize,
        first: &ParseError,
        events: &mut Vec<Event>,
    ) {
        if std::mem::replace(&mut self.bad_lines_said, true) {
            return;
        }
        let format = format_name(self.format);
        events.push(self.event(EventKind::Warning, at, format!(
                "{count} line(s) of its page did not parse and are left out of the figures (first at {}:{}: {}); read as {format}, as its Content-Type ({}) says: served in another format?",
                first.line,
                first.column,
                first.kind,
                content_type.unwrap_or("none")
            )));
    }

    /// Restarts per instance, and instances that vanished from (or came back to) the page.
    fn follow_instances(&mut self, at: DateTime<Utc>, report: &IngestReport, events: &mut Vec<Event>) {
        let present = instances_on_page(&self.tracker);
        let resets = ResetCounts::of(report);
        for &(name, start) in &present {
            let source = source_name(&self.url, name);
            if !self.instances.contains_key(name) {
                self.instances.insert(name.to_string(), Instance::default());
            }
            let Some(instance) = self.instances.get_mut(name) else {
                continue;
            };
            if std::mem::take(&mut instance.stale) {
                events.push(Event {
                    kind: EventKind::Back,
                    at,
                    source: source.clone(),
                    message: "back in the page".into(),
                    alert: None,
                });
            }
            let (second_process, start_moving) = start_verdicts(report, name);
            let resets_here = resets.get(name);
            let went_back = second_process || resets_here.is_some_and(|r| r.second_process > 0);
            if let Some(event) =
                instance.judge_erratic(at, self.retention, start, went_back, resets_here, &source)
            {
                events.push(event);
            }
            if instance.erratic_announced {
                // Its restarts are not restarts: said once, as erratic.
                instance.process_start = start.or(instance.process_start);
                continue;
            }
            if start_moving {
                events.extend(instance.start_moving(at, start, &source));
            }
            let message = instance.restart_message(start, resets.get(name).copied(), self.scrapes);
            if let Some(message) = message {
                instance.last_restart = Some(at);
                events.push(Event {
                    kind: EventKind::Restart,
                    at,
                    source,
                    message,
                    alert: None,
                });
            }
        }
        for (name, instance) in &mut self.instances {
            if present.binary_search_by_key(&name.as_str(), |(n, _)| *n).is_err() && !instance.stale {
                instance.stale = true;
                events.push(Event {
                    kind: EventKind::Stale,
                    at,
                    source: source_name(&self.url, name),
                    message: "gone from the page (stale); no longer counted".into(),
                    alert: None,
                });
            }
        }
    }
}

/// What the tracker said of `instance`'s start time on this page: two processes (a start
/// time that went back), and whether it moved again with no counter restarting.
fn start_verdicts(report: &IngestReport, instance: &str) -> (bool, bool) {
    let of_instance = report.process_restarts.iter().filter(|r| {
        r.target
            .iter()
            .find(|(k, _)| k == INSTANCE)
            .map_or("", |(_, v)| v.as_str())
            == instance
    });
    let (mut second_process, mut moving) = (false, false);
    for restart in of_instance {
        second_process |= restart.cause == ResetCause::StartWentBack;
        moving |= restart.cause == ResetCause::StartTimeMoving;
    }
    (second_process, moving)
}

/// The counter resets of one page, by instance.
#[derive(Debug, Clone, Copy, Default)]
struct ResetCounts {
    all: usize,
    by_created: usize,
    by_start_time: usize,
    /// Value drops with no restart evidence at all.
    unexplained: usize,
    /// Counters whose `_created` tells a second process.
    second_process: usize,
}

impl ResetCounts {
    fn of(report: &IngestReport) -> BTreeMap<&str, ResetCounts> {
        let mut resets: BTreeMap<&str, ResetCounts> = BTreeMap::new();
        for reset in &report.resets {
            let instance = reset
                .labels
                .iter()
                .find(|(k, _)| k == INSTANCE)
                .map_or("", |(_, v)| v.as_str());
            let entry = resets.entry(instance).or_default();
            entry.all += 1;
            entry.by_created += usize::from(reset.cause == ResetCause::CreatedChanged);
            entry.by_start_time += usize::from(reset.cause == ResetCause::ProcessRestarted);
            entry.unexplained += usize::from(reset.cause == ResetCause::ValueDropped);
            entry.second_process += usize::from(reset.cause == ResetCause::StartWentBack);
        }
        resets
    }

    fn describe(&self) -> String {
        let mut seen_by = Vec::new();
        if self.by_created > 0 {
            seen_by.push(format!("{} seen only by _created", self.by_created));
        }
        if self.by_start_time > 0 {
            seen_by.push(format!("{} by start time", self.by_start_time));
        }
        let seen_by = if seen_by.is_empty() {
            String::new()
        } else {
            format!(" ({})", seen_by.join(", "))
        };
        format!(
            "{} counter series reset{seen_by}; rates count them from 0",
            self.all
        )
    }
}

impl Instance {
    /// A start time that moved again with no counter restarting: no restart, the counters
    /// go on by their values; said once a run.
    fn start_moving(&mut self, at: DateTime<Utc>, start: Option<f64>, source: &str) -> Option<Event> {
        self.process_start = start.or(self.process_start);
        if std::mem::replace(&mut self.start_moving_said, true) {
            return None;
        }
        Some(Event {
            kind: EventKind::Warning,
            at,
            source: source.to_string(),
            message: "its process start time moved while its counters went on from where they were: no restart (a start time computed from a clock, or counters kept across one: vLLM's PROMETHEUS_MULTIPROC_DIR not wiped?); its counters are read by their values".into(),
            alert: None,
        })
    }

    /// What a page shows of a restart of this server, if it shows one: a new process
    /// start time, counters reset (`counters`), or both. Counters reset within a few
    /// scrapes of a restart (`scrape` is this page's number) are that restart's.
    fn restart_message(
        &mut self,
        start: Option<f64>,
        counters: Option<ResetCounts>,
        scrape: u64,
    ) -> Option<String> {
        let mut message = None;
        // A start time that moved by no more than its jitter is the same process, as the
        // tracker reads it (an exporter that computes it from an uptime rounds it).
        // In milliseconds, as the tracker rounds it: a move of 1.0004 s is none there.
        let jitter_ms = promrate::tracker::START_TIME_JITTER.num_milliseconds() as f64;
        let ms = |unix: f64| (unix * 1000.0).round();
        if let (Some(before), Some(now)) = (self.process_start, start) {
            if (ms(now) - ms(before)).abs() > jitter_ms {
                let time = |unix: f64| {
                    DateTime::from_timestamp(unix as i64, 0)
                        .map_or_else(|| format!("{unix:.0}"), |t| t.format("%H:%M:%S UTC").to_string())
                };
                message = Some(format!(
                    "server restarted (process started {}, was {})",
                    time(now),
                    time(before)
                ));
            }
        }
        self.process_start = start.or(self.process_start);
        // Series a restarted server brings back a few scrapes late (a histogram whose
        // first request had not finished) reset as they reappear: the same restart.
        let continues = self.restart_scrape.is_some_and(|n| scrape - n <= RESTART_SETTLES);
        if counters.is_some() || message.is_some() {
            self.restart_scrape = Some(scrape);
        }
        if let Some(counts) = counters.filter(|_| !(continues && message.is_none())) {
            let counters = counts.describe();
            message = Some(match message {
                Some(m) => format!("{m}; {counters}"),
                None => format!("restart detected: {counters}"),
            });
        }
        message
    }

    /// Whether this page makes the server erratic (a second page within the retention
    /// with counters going down and no restart evidence, or a process start time that
    /// went backwards): the event, once, until the server is steady for a retention.
    fn judge_erratic(
        &mut self,
        at: DateTime<Utc>,
        retention: TimeDelta,
        start: Option<f64>,
        went_back: bool,
        resets: Option<&ResetCounts>,
        source: &str,
    ) -> Option<Event> {
        let restarted = matches!((self.process_start, start), (Some(before), Some(now)) if now != before);
        let dropped = resets.is_some_and(|r| r.unexplained > 0) && !restarted;
        if went_back || dropped {
            self.unexplained.push(at);
        }
        self.unexplained.retain(|&t| at - t <= retention);
        if self.unexplained.is_empty() {
            self.erratic_announced = false;
            return None;
        }
        let erratic = went_back || self.unexplained.len() >= 2;
        if !erratic || self.erratic_announced {
            return None;
        }
        self.erratic_announced = true;
        let message = if went_back && start.is_none() {
            "its counters returned to the count or the `_created` time of a process that answered before: two processes answer this URL in turn (replicas behind a load balancer, a rollback?); its counters are not rated while this lasts".to_string()
        } else if went_back {
            format!(
                "the process start time went backwards, or to a process that was running already: two processes answer this URL in turn (replicas behind a load balancer?), or the server's clock is more than {} min behind; its counters are not rated while this lasts",
                START_TIME_SKEW.num_minutes()
            )
        } else {
            format!(
                "counters went down again with no restart evidence ({} times in {} s): a buggy exporter, or two processes behind one URL? Not rated while this lasts",
                self.unexplained.len(),
                retention.num_seconds()
            )
        };
        Some(Event {
            kind: EventKind::Erratic,
            at,
            source: source.to_string(),
            message,
            alert: None,
        })
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use promrate::{Estimator, Query, Selector};

    /// A URL's target for the tests below, its pages read on [`at`]'s clock.
    /// A page of the text format, served without a Content-Type.
    fn text_page(body: impl Into<String>) -> Page {
        Page {
            body: body.into(),
            format: Format::PrometheusText,
            content_type: None,
        }
    }

    fn gpu1() -> Target {
        Target::new("http://gpu1:8000/metrics".into(), TimeDelta::minutes(1))
    }

    /// The time `s` seconds into a test.
    fn at(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap()
    }

    /// The EWMA of the target's generated tokens a second.
    fn tokens_ewma(target: &Target) -> f64 {
        let tokens = Selector::parse("vllm:generation_tokens_total").unwrap();
        let rate = target
            .tracker
            .evaluate(&Query::new(&tokens, Estimator::Ewma))
            .unwrap();
        rate.value().unwrap()
    }

    /// The messages of the warnings among `events`.
    fn warnings(events: Vec<Event>) -> Vec<String> {
        events
            .into_iter()
            .filter(|e| e.kind == EventKind::Warning)
            .map(|e| e.message)
            .collect()
    }

    /// Samples timestamped a day before their scrapes: said once, and read at the scrapes'
    /// times from the next page on (windows ending now held none of them).
    #[test]
    fn samples_far_from_their_scrape_are_said_once() {
        let mut target = gpu1();
        let page = |s: i64| {
            text_page(format!(
                "vllm:generation_tokens_total{{engine=\"0\"}} {} {}\n",
                100 * s,
                (1_800_000_000 - 86_400 + s) * 1000
            ))
        };
        let first = warnings(target.ingest(at(0), Ok(page(0))));
        assert_eq!(first.len(), 1, "{first:?}");
        assert!(first[0].contains("up to 1day before the scrape"), "{}", first[0]);
        assert!(
            warnings(target.ingest(at(1), Ok(page(1)))).is_empty(),
            "said once"
        );
        // From the page after the warning on, at the scrapes' times: 100 a second.
        target.ingest(at(2), Ok(page(2)));
        assert_eq!(tokens_ewma(&target), 100.0);
    }

    /// One server's token counter served twice, the copies differing only in `job` (two
    /// scrape jobs) or in a replica label (an HA pair a querier did not deduplicate): the
    /// figures were twice the truth with nothing said. Said once, naming the label and the
    /// server; two servers, or two engines of one, are no copies.
    #[test]
    fn a_counter_served_twice_is_said_once() {
        let page = |s: i64, copies: [&str; 2]| {
            let mut body = String::new();
            for (n, labels) in copies.iter().enumerate() {
                body += &format!(
                    "vllm:generation_tokens_total{{instance=\"gpu{n}:8000\",{labels},model_name=\"m\"}} {}\n",
                    100 * s
                );
            }
            text_page(body.replace("gpu1:8000\",job", "gpu0:8000\",job"))
        };
        for (copies, label) in [
            (["job=\"vllm\"", "job=\"pods\""], "job"),
            (
                [
                    "job=\"vllm\",prometheus_replica=\"a\"",
                    "job=\"vllm\",prometheus_replica=\"b\"",
                ],
                "prometheus_replica",
            ),
        ] {
            let mut target = gpu1();
            let first = warnings(target.ingest(at(0), Ok(page(0, copies))));
            assert_eq!(first.len(), 1, "{first:?}");
            assert!(
                first[0].contains(&format!("differing only in `{label}`")),
                "{}",
                first[0]
            );
            assert!(first[0].contains("instance=\"gpu0:8000\""), "{}", first[0]);
            assert!(
                warnings(target.ingest(at(1), Ok(page(1, copies)))).is_empty(),
                "said once"
            );
        }
        // Two servers (other instances), and two engines of one server: no copies.
        let mut target = gpu1();
        let two_servers = "vllm:generation_tokens_total{instance=\"a:8000\",job=\"vllm\"} 1\n\
             vllm:generation_tokens_total{instance=\"b:8000\",job=\"pods\"} 1\n\
             vllm:generation_tokens_total{engine=\"0\",instance=\"c:8000\",job=\"vllm\"} 1\n\
             vllm:generation_tokens_total{engine=\"1\",instance=\"c:8000\",job=\"vllm\"} 1\n";
        assert!(warnings(target.ingest(at(0), Ok(text_page(two_servers)))).is_empty());
    }

    /// Two backends with other labels behind one URL, each scrape answered by the other:
    /// the rows showed one backend's rate (half the truth) with nothing said. Said once,
    /// at the third page in turn; a series that goes once is no turn.
    #[test]
    fn series_served_in_turn_are_said_once() {
        let page = |s: i64, model: &str| {
            text_page(format!(
                "vllm:generation_tokens_total{{model_name=\"{model}\"}} {}\n",
                100 * s
            ))
        };
        let mut target = gpu1();
        let mut said = Vec::new();
        for s in 0..8 {
            let model = if s % 2 == 0 { "llama" } else { "qwen" };
            said.push(warnings(target.ingest(at(s), Ok(page(s, model)))));
        }
        let when: Vec<usize> = (0..8).filter(|&s| !said[s].is_empty()).collect();
        assert_eq!(when, [3], "{said:?}");
        assert!(said[3][0].contains("change from page to page"), "{}", said[3][0]);
        // One backend that goes for good: no turn.
        let mut gone = gpu1();
        for s in 0..6 {
            let body = if s < 2 {
                "vllm:generation_tokens_total{model_name=\"a\"} 1\nvllm:generation_tokens_total{model_name=\"b\"} 1\n"
            } else {
                "vllm:generation_tokens_total{model_name=\"a\"} 1\n"
            };
            let page = text_page(body);
            assert!(warnings(gone.ingest(at(s), Ok(page))).is_empty(), "page {s}");
        }
    }

    /// vLLM's token counter declared a gauge (or a histogram): the rows showed `-` with
    /// nothing said. Said once, naming it; a counter says nothing.
    #[test]
    fn a_counter_declared_another_type_is_said_once() {
        for kind in ["gauge", "histogram"] {
            let mut target = gpu1();
            let page = |s: i64| {
                text_page(format!(
                    "# TYPE vllm:generation_tokens_total {kind}\nvllm:generation_tokens_total{{engine=\"0\"}} {}\n",
                    100 * s
                ))
            };
            let said = warnings(target.ingest(at(0), Ok(page(0))));
            assert_eq!(said.len(), 1, "{kind}: {said:?}");
            assert!(
                said[0].starts_with("vllm:generation_tokens_total is declared another type"),
                "{}",
                said[0]
            );
            assert!(
                warnings(target.ingest(at(1), Ok(page(1)))).is_empty(),
                "{kind}: said once"
            );
        }
        let mut counter = gpu1();
        let page = text_page("# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total 5\n");
        assert!(warnings(counter.ingest(at(0), Ok(page))).is_empty());
    }

    /// Samples 30 s behind their scrapes, under the 5 minutes that make the monitor read
    /// them at the scrapes' times but past a 5 s window's reach: every row was blank with
    /// "one page" and nothing said why. Said once, with the window that reaches them; kept
    /// at their own times (a federation's lag by its scrape interval). A TSDB's target says
    /// nothing: its samples lag by design.
    #[test]
    fn samples_later_than_the_window_reaches_are_said_once() {
        let page = |s: i64, behind: i64| {
            text_page(format!(
                "vllm:generation_tokens_total{{engine=\"0\"}} {} {}\n",
                100 * s,
                (1_800_000_000 - behind + s) * 1000
            ))
        };
        let mut target = gpu1();
        target.say_when_times_pass(TimeDelta::seconds(6));
        let first = warnings(target.ingest(at(0), Ok(page(0, 30))));
        assert_eq!(first.len(), 1, "{first:?}");
        assert!(
            first[0].contains("up to 30s before the scrape") && first[0].contains("longer by 30s"),
            "{}",
            first[0]
        );
        assert!(
            warnings(target.ingest(at(1), Ok(page(1, 30)))).is_empty(),
            "said once"
        );
        let newest = target
            .tracker
            .series()
            .next()
            .unwrap()
            .counter()
            .unwrap()
            .last()
            .unwrap();
        assert_eq!(
            newest.timestamp_ms,
            (at(1) - TimeDelta::seconds(30)).timestamp_millis(),
            "kept at its own time"
        );
        let mut near = gpu1();
        near.say_when_times_pass(TimeDelta::seconds(6));
        assert!(
            warnings(near.ingest(at(0), Ok(page(0, 5)))).is_empty(),
            "within reach"
        );
        let mut tsdb = gpu1();
        assert!(warnings(tsdb.ingest(at(0), Ok(page(0, 30)))).is_empty());
    }

    /// The same series twice on one page: the tracker keeps the first line and refused the
    /// second, and nothing said so (the rows read 0 tok/s, or climbed by thousands, with no
    /// reason given). Now a warning says, once, how many and the first, with its line.
    #[test]
    fn samples_the_tracker_refuses_are_said_once() {
        let mut target = gpu1();
        let page = |s: i64| {
            text_page(format!(
                "vllm:generation_tokens_total{{engine=\"0\"}} {}\nvllm:generation_tokens_total{{engine=\"0\"}} 5\n",
                100 * s
            ))
        };
        let first = warnings(target.ingest(at(1), Ok(page(1))));
        assert_eq!(first.len(), 1, "{first:?}");
        assert!(
            first[0].starts_with(
                "1 sample(s) of its page were refused and left out of the figures (first at line 2: \
                 vllm:generation_tokens_total{engine=\"0\"}: the series appears twice in the page"
            ) && first[0].ends_with(
                "the first sample is kept): a series printed twice on one page is read from its first \
                 line, and its figures are only as right as that line"
            ),
            "{}",
            first[0]
        );
        assert!(
            warnings(target.ingest(at(2), Ok(page(2)))).is_empty(),
            "said once"
        );
    }

    /// An OpenMetrics 2.0 page served as the text format: its counters (`st@`) do not
    /// parse, its gauges do. The figures said only `-`, and nothing said why; now a
    /// warning says, once, with the format the Content-Type chose.
    #[test]
    fn lines_that_do_not_parse_are_said_once() {
        let mut target = gpu1();
        let page = |s: i64| Page {
            body: format!(
                "vllm:num_requests_running{{model_name=\"m\"}} 3\n\
                 vllm:generation_tokens_total{{model_name=\"m\"}} {} st@1799999000.0\n# EOF\n",
                100 * s
            ),
            format: Format::PrometheusText,
            content_type: Some("text/plain; version=0.0.4".into()),
        };
        let first = warnings(target.ingest(at(0), Ok(page(0))));
        assert_eq!(first.len(), 1, "{first:?}");
        assert!(
            first[0].starts_with("1 line(s) of its page did not parse")
                && first[0].contains("first at 2:")
                && first[0].contains(
                    "read as the text format, as its Content-Type (text/plain; version=0.0.4) says"
                ),
            "{}",
            first[0]
        );
        assert!(
            warnings(target.ingest(at(1), Ok(page(1)))).is_empty(),
            "said once"
        );
        assert!(matches!(
            target.status,
            Status::BadLines {
                kind: Some(_),
                count: 1,
                ..
            }
        ));
    }

    /// A format version the monitor does not know is said, once, with what it was read as.
    #[test]
    fn an_unknown_format_version_is_said() {
        assert_eq!(
            unknown_version("application/openmetrics-text; version=3.0.0"),
            Some("3.0.0")
        );
        assert_eq!(
            unknown_version("text/plain; charset=utf-8; Version=\"3.0.0\""),
            Some("3.0.0")
        );
        for known in [
            "text/plain; version=0.0.4; charset=utf-8",
            "text/plain; version=1.0.0; escaping=allow-utf-8",
            "application/openmetrics-text; version=2.0.0; charset=utf-8",
            "application/openmetrics-text; version=1.0.0",
            "text/plain",
            "application/json; version=9",
        ] {
            assert_eq!(unknown_version(known), None, "{known}");
        }
        let mut target = gpu1();
        let page = |s: i64| Page {
            body: format!(
                "vllm:generation_tokens_total{{model_name=\"m\"}} {}\n# EOF\n",
                100 * s
            ),
            format: Format::OpenMetrics,
            content_type: Some("application/openmetrics-text; version=3.0.0".into()),
        };
        let said: Vec<String> = (0..2)
            .flat_map(|s| target.ingest(at(s), Ok(page(s))))
            .filter(|e| e.kind == EventKind::Warning)
            .map(|e| e.message)
            .collect();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].contains("version 3.0.0 is none this monitor knows; read as OpenMetrics 1.0"),
            "{}",
            said[0]
        );
    }

    /// A small page read whole as OpenMetrics without `# EOF` (the text format under
    /// OpenMetrics' name): read, and said once.
    #[test]
    fn an_openmetrics_page_without_eof_is_said_once() {
        let mut target = gpu1();
        let page = |s: i64, eof: &str| Page {
            body: format!(
                "vllm:generation_tokens_total{{model_name=\"m\"}} {}\n{eof}",
                100 * s
            ),
            format: Format::OpenMetrics,
            content_type: Some("application/openmetrics-text; version=1.0.0".into()),
        };
        assert!(warnings(target.ingest(at(0), Ok(page(0, "# EOF\n")))).is_empty());
        let without = warnings(target.ingest(at(1), Ok(page(1, ""))));
        assert_eq!(without.len(), 1, "{without:?}");
        assert!(without[0].contains("has no '# EOF'"), "{}", without[0]);
        assert!(target.status.is_ok(), "{}", target.status);
        assert!(
            warnings(target.ingest(at(2), Ok(page(2, "")))).is_empty(),
            "said once"
        );
    }

    /// Lines after a page's `# EOF` are named as such: the page was said to have no
    /// `# EOF` at all.
    #[test]
    fn text_after_eof_is_not_a_missing_eof() {
        let mut target = gpu1();
        let page = |s: i64| Page {
            body: format!(
                "vllm:generation_tokens_total{{model_name=\"m\"}} {}\n# EOF\nstray 1\n",
                100 * s
            ),
            format: Format::OpenMetrics,
            content_type: Some("application/openmetrics-text; version=1.0.0".into()),
        };
        let said = warnings(target.ingest(at(0), Ok(page(0))));
        assert!(said.iter().all(|w| !w.contains("no '# EOF'")), "{said:?}");
        assert!(said.iter().any(|w| w.contains("text after '# EOF'")), "{said:?}");
        assert!(target.status.is_ok(), "{}", target.status);
    }

    /// An OpenMetrics page (seconds) served as the text format (read as milliseconds): a
    /// second between pages was a millisecond, and the EWMA said 1,000 times the rate. It
    /// is said as such, and rated at the scrapes' times.
    #[test]
    fn seconds_read_as_milliseconds_are_not_rated_as_such() {
        let mut target = gpu1();
        let page = |s: i64| Page {
            body: format!(
                "vllm:generation_tokens_total{{engine=\"0\"}} {} {}\n",
                500 * s,
                1_800_000_000 + s
            ),
            format: Format::PrometheusText,
            content_type: Some("text/plain; version=0.0.4".into()),
        };
        let tokens = Selector::parse("vllm:generation_tokens_total").unwrap();
        let mut said = Vec::new();
        for s in 0..6 {
            said.extend(target.ingest(at(s), Ok(page(s))).into_iter().map(|e| e.message));
            if let Ok(rate) = target.tracker.evaluate(&Query::new(&tokens, Estimator::Ewma)) {
                if let Ok(value) = rate.value() {
                    assert_eq!(value, 500.0, "scrape {s}");
                }
            }
        }
        assert!(
            said.iter().any(|m| m.contains("read as milliseconds?")),
            "{said:?}"
        );
        assert_eq!(tokens_ewma(&target), 500.0);
    }

    /// How a body ends tells whether it was cut short: a newline after the last line, and
    /// OpenMetrics' `# EOF` (its newline optional), however the chunks fell.
    #[test]
    fn a_body_cut_short_is_told_by_its_end() {
        let cut = |format, chunks: &[&str]| {
            let mut ending = Ending::of(format);
            chunks.iter().for_each(|c| ending.keep(c.as_bytes()));
            ending.cut_short(format).is_some()
        };
        let text = Format::PrometheusText;
        assert!(!cut(text, &["a 1\n", "b 2\n"]));
        assert!(cut(text, &["a 1\nb 1", "2"]));
        assert!(!cut(text, &[]), "an empty body is no cut one");
        let om = Format::OpenMetrics;
        assert!(!cut(om, &["a 1\n# E", "OF"]));
        assert!(!cut(om, &["a 1\n# EOF\n"]));
        assert!(!cut(Format::OpenMetrics2, &["a 1\n# EOF", "\n"]));
        assert!(cut(om, &["a 1\n"]), "no # EOF");
        assert!(cut(om, &["a 1\n# EOFb"]));
        assert!(cut(om, &["a 1\n#", " EOF2 1\n"]));
        // Text after a whole `# EOF` line: not cut, whatever follows (the parser names it).
        for chunks in [
            &["a 1\n# EOF\n", "b"][..],
            &["a 1\n# EOF\nb 2\n"],
            &["# EOF\nb 2\n"],
            &["#", " EOF\nb"],
            &["a 1\n# E", "OF", "\nb"],
            &["a 1\n", "# EOF", "\n", "b 2\n"],
        ] {
            assert!(!cut(om, chunks), "{chunks:?}");
        }
    }

    /// The captured Prometheus `/federate` page, with every sample moved `seconds` later
    /// and, if given, one instance left out.
    pub fn federation(seconds: i64, without: Option<&str>) -> Page {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/data/federate/prometheus-2.42-federate.prom"
        );
        let page = std::fs::read_to_string(path).expect("the captured page");
        let body = page
            .lines()
            .filter(|l| without.is_none_or(|i| !l.contains(&format!("instance=\"{i}\""))))
            .map(|l| match l.rsplit_once(' ') {
                Some((head, ts)) if !l.starts_with('#') => {
                    format!("{head} {}\n", ts.parse::<i64>().unwrap() + seconds * 1000)
                }
                _ => format!("{l}\n"),
            })
            .collect();
        Page {
            body,
            format: Format::PrometheusText,
            content_type: None,
        }
    }

    #[test]
    fn a_url_that_never_answered_is_a_fault_at_its_first_failure_and_once() {
        // Just after the captured page's scrapes (its samples' own times).
        let at = |s: i64| DateTime::from_timestamp(1_796_074_040 + s, 0).unwrap();
        let mut target = Target::new("http://127.0.0.1:9/metrics".into(), TimeDelta::minutes(1));
        let refused = || Err("connection refused (nothing listening there?)".to_string());
        let first = target.ingest(at(0), refused());
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].kind, EventKind::Fault);
        assert_eq!(
            first[0].message,
            "never answered yet: connection refused (nothing listening there?)"
        );
        assert!(target.ingest(at(1), refused()).is_empty(), "announced once");
        let answered = target.ingest(at(2), Ok(federation(2, None)));
        assert_eq!(answered.len(), 1);
        assert_eq!(
            (answered[0].kind, answered[0].message.as_str()),
            (EventKind::Recovered, "first successful scrape")
        );
    }

    #[test]
    fn instances_of_a_federation_go_stale_and_come_back_once_each() {
        let (a, b) = ("127.0.0.1:39161", "127.0.0.1:43231");
        // Just after the captured page's scrapes (its samples' own times).
        let at = |s: i64| DateTime::from_timestamp(1_796_074_040 + s, 0).unwrap();
        let mut target = Target::new("http://prometheus:9090/federate".into(), TimeDelta::minutes(1));
        let kinds = |events: Vec<Event>| -> Vec<(EventKind, String)> {
            events.into_iter().map(|e| (e.kind, e.source)).collect()
        };
        assert!(kinds(target.ingest(at(0), Ok(federation(0, None)))).is_empty());
        assert!(target.status.is_ok(), "{}", target.status);
        assert_eq!(target.instances.keys().collect::<Vec<_>>(), [a, b]);
        let gone = kinds(target.ingest(at(1), Ok(federation(1, Some(a)))));
        assert_eq!(gone, [(EventKind::Stale, a.to_string())]);
        assert!(
            kinds(target.ingest(at(2), Ok(federation(2, Some(a))))).is_empty(),
            "announced once"
        );
        assert!(target.instances[a].stale && !target.instances[b].stale);
        let back = kinds(target.ingest(at(3), Ok(federation(3, None))));
        assert_eq!(back, [(EventKind::Back, a.to_string())]);
        // A failed scrape is a fault of the URL, then a recovery.
        let fault = kinds(target.ingest(at(4), Err("HTTP 503".into())));
        assert_eq!(fault, [(EventKind::Fault, target.url.clone())]);
        let recovered = kinds(target.ingest(at(5), Ok(federation(5, None))));
        assert_eq!(recovered, [(EventKind::Recovered, target.url.clone())]);
        // B restarts: its counters start again from a tenth of what they were (their
        // created times kept: a tenth of one would be a time long before the run).
        let restarted = |seconds: i64| {
            let mut page = federation(seconds, None);
            page.body = page
                .body
                .lines()
                .map(|l| match l.rsplitn(3, ' ').collect::<Vec<_>>()[..] {
                    [ts, value, head] if l.contains(b) && !head.contains("_created") => {
                        format!("{head} {} {ts}\n", value.parse::<f64>().unwrap() / 10.0)
                    }
                    _ => format!("{l}\n"),
                })
                .collect();
            page
        };
        let events = target.ingest(at(6), Ok(restarted(6)));
        assert_eq!(kinds(events.clone()), [(EventKind::Restart, b.to_string())]);
        assert!(
            events[0].message.contains("counter series reset"),
            "{}",
            events[0].message
        );
        assert!(
            kinds(target.ingest(at(7), Ok(restarted(7)))).is_empty(),
            "announced once"
        );
        assert!(target.instances[b].last_restart.is_some() && target.instances[a].last_restart.is_none());
    }

    /// A small page is fetched whole, and only with a Content-Length: a text page of it
    /// that ends inside a line was cut by that length (`1000` arrived as `1`), so its last
    /// line is left out and that is said once, as when a page is read as it arrives. An
    /// HTML page is not metrics: it is named as HTML, with no word of cut lines.
    #[test]
    fn a_whole_text_page_that_ends_inside_a_line_leaves_it_out() {
        let mut target = gpu1();
        let page = |s: i64| {
            text_page(format!(
                "vllm:num_requests_running{{engine=\"0\"}} 3\nvllm:generation_tokens_total{{engine=\"0\"}} {}",
                1000 * s
            ))
        };
        let first = warnings(target.ingest(at(1), Ok(page(1))));
        assert_eq!(first.len(), 1, "{first:?}");
        assert!(
            first[0].starts_with("its page ends inside a line"),
            "{}",
            first[0]
        );
        assert!(
            warnings(target.ingest(at(2), Ok(page(2)))).is_empty(),
            "said once"
        );
        assert!(target
            .tracker
            .get("vllm:num_requests_running", &[("engine", "0")])
            .is_some());
        assert!(target
            .tracker
            .get("vllm:generation_tokens_total", &[("engine", "0")])
            .is_none());
        let mut html = gpu1();
        let login = Page {
            body: "<html><body>Sign in</body></html>".into(),
            format: Format::PrometheusText,
            content_type: Some("text/html".into()),
        };
        assert!(warnings(html.ingest(at(1), Ok(login))).is_empty());
        assert!(html.status.to_string().contains("Sign in"), "{}", html.status);
    }

    /// A process start time that jitters by milliseconds, or flips by a second (rounded
    /// from an uptime), is the same process: no restart is announced (one was, on every
    /// page, while the figures were right), and a real one still is.
    #[test]
    fn a_start_time_that_jitters_announces_no_restart() {
        let mut target = gpu1();
        let page = |s: i64, start: f64| {
            text_page(format!(
                "process_start_time_seconds {start:.3}\nvllm:generation_tokens_total{{engine=\"0\"}} {}\n",
                1000 * s
            ))
        };
        let kinds = |events: Vec<Event>| -> Vec<EventKind> { events.into_iter().map(|e| e.kind).collect() };
        let start = 1_799_990_000.0;
        for s in 0..20 {
            // Milliseconds of jitter, then whole seconds that flip.
            let jitter = match s {
                0..10 => [0.0, 0.005, -0.004, 0.002, 0.0, -0.003, 0.001, 0.0, 0.004, 0.0][s as usize],
                _ => (s % 2) as f64,
            };
            let events = kinds(target.ingest(at(s), Ok(page(s, start + jitter))));
            assert!(!events.contains(&EventKind::Restart), "{s}: {events:?}");
        }
        assert_eq!(tokens_ewma(&target), 1000.0);
        let restarted = kinds(target.ingest(at(20), Ok(page(20, 1_800_000_018.0))));
        assert_eq!(
            restarted
                .iter()
                .filter(|&&kind| kind == EventKind::Restart)
                .count(),
            1
        );
    }
}
