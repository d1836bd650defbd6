//! Recordings of a run's scrapes (`--record FILE`) and reading them back (`--replay FILE`):
//! every page exactly as it was read, with the times it was read at, so that a run can be
//! replayed, shown to someone else, or turned into a test.
//!
//! # The file
//!
//! [JSON Lines](https://jsonlines.org): one JSON object per line, UTF-8.
//!
//! The first line may be a header. The monitor always writes one:
//!
//! ```text
//! {"format":"vllm_monitor recording","version":1,"started":1796153029.088207,
//!  "interval_s":1.0,"window_s":60.0,"urls":["http://127.0.0.1:8000/metrics"], ...}
//! ```
//!
//! (one line in the file). `started` is when the run began, in Unix seconds; `interval_s` and
//! `window_s` are the monitor's `--interval` and `--window` in seconds; `urls` are the URLs
//! monitored, in the order the monitor numbers them. Any other fields (the monitor keeps its
//! setup line there, for instance) are kept as read.
//!
//! Then one line per scrape, in the order the monitor read them:
//!
//! | field | meaning |
//! |---|---|
//! | `url` | what was scraped |
//! | `start` | Unix seconds (a float) just before the request was sent |
//! | `end` | Unix seconds just after the body was read, or the failure was known |
//! | `status` | the HTTP status (absent on a connection failure) |
//! | `content_type` | the response's Content-Type (absent when there was none) |
//! | `body` | the page as text (absent on failure) |
//! | `error` | why the scrape failed (absent on success) |
//! | `tick` | how many intervals the monitor had computed when it read the page (the monitor's own) |
//!
//! When a run ends, the monitor writes a last line `{"end_of_run":true,"ticks":N}`: the
//! intervals the run computed, so that a replay computes as many ([`Replay::ticks`]; a
//! killed run's recording has none, and its replay ends an interval after the last page).
//!
//! This is a superset of the interchange shape other scrapers write (all of the above but
//! the header, `tick` and the last line), so their recordings replay too: fields this reader does not know
//! are ignored, `null` counts as absent, and a first line without `url` is taken for a
//! header, read if it is the monitor's (its `format` is `"vllm_monitor recording"`) and
//! skipped otherwise. Times are kept to the microsecond: the monitor writes whole
//! microseconds and reads times back rounded to the nearest one, so a recording replays at
//! exactly the times it was made (and another scraper's six decimals read as meant).
//!
//! A line that cannot be read (not JSON, no `url`, `start` or `end`, times that are not
//! numbers, `end` before `start`, neither `body` nor `error`, or both) is reported with its
//! line number, counting the header as line 1 and blank lines too (so `sed -n Np` shows
//! it), and reading goes on with the next line: one bad line does not lose an hour's run.
//! Whether a scrape's time or tick can be right is the replay's to judge (it reads the
//! scrapes around it); this module reads lines only.
//!
//! # Compression
//!
//! A file named `*.gz` is written gzip-compressed, `*.zst` zstd-compressed, any other name
//! plain. zstd is the one for long runs: its window spans many pages, so each page costs
//! about what changed since the one before (a real vLLM run of 216 scrapes: 8.4 MB plain,
//! 0.80 MB gzip, 0.15 MB zstd). Reading goes by the file's first bytes,
//! not its name, so a renamed file still reads; concatenated gzip members or zstd frames
//! read as one recording.
//!
//! Every scrape is flushed through to the file as it is written (a sync flush for gzip, the
//! end of a block for zstd), so a run that is killed leaves every scrape written until then
//! readable (though not one that was still being written). Its compressed stream then has
//! no proper end; the reader yields every complete line and reports the cut through
//! [`Replay::truncated`], not as an error: the scrapes it gives are exactly those recorded,
//! and a killed run's recording ending early is what one expects of it. Nothing is synced
//! to the disk, so a power cut may lose more. The monitor writes behind its main loop
//! ([`Background`]), so a killed run may also lose the few scrapes still waiting to be
//! written; a run that ends (`--duration`, q, Ctrl-C) writes them all.

mod background;
mod read;
#[cfg(test)]
mod tests;
mod write;

pub use background::Background;
pub use read::{max_line_for, open, open_within, Replay};
pub use write::Writer;

use std::fmt;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

/// The recording format's name and version, written in the header line: the name tells the
/// monitor's header from another scraper's, the version lets a later format be refused
/// clearly instead of misread.
pub const FORMAT: &str = "vllm_monitor recording";
/// See [`FORMAT`]: the version this module writes and the newest it reads.
pub const VERSION: u64 = 1;

/// The shortest scrape interval, `--interval`'s and a header's `interval_s`'s alike: under
/// 100 ms would measure the server's rendering more than its throughput (and 0 would spin).
pub const MIN_INTERVAL: Duration = Duration::from_millis(100);

/// The header's own fields. An `extra` field of one of these names is not written (it would
/// shadow the real one), nor one named `url`, which would make the header read as a scrape.
const HEADER_FIELDS: [&str; 7] = [
    "format",
    "version",
    "started",
    "interval_s",
    "window_s",
    "urls",
    "url",
];

/// Pages reach hundreds of kilobytes; reading and writing in large pieces keeps system calls
/// (and the compressors' calls) few.
const BUFFER: usize = 1 << 16;
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// The first line of a recording written by the monitor. Recordings made by other
/// scrapers may have none (or a header of their own: any first line without "url").
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    /// When the run began (the origin of its virtual clock on replay).
    pub started: DateTime<Utc>,
    /// The monitor's scrape interval and window, as given.
    pub interval: std::time::Duration,
    /// See `interval`: a replay computes the same windows as the run did.
    pub window: std::time::Duration,
    /// The URLs monitored, in the order the monitor numbers them.
    pub urls: Vec<String>,
    /// Anything else the writer wants to keep (e.g. the setup line); kept as read.
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// The run's settings a replay reads again as they were, as the command line gave them:
/// `--slo`, each `--alert` (and whether they set the exit status, `--exit-on-alert`), and
/// the label grouped by (the window is the header's own). Kept in the header's `extra`
/// fields `slo`, `alert`, `exit_on_alert` and `by`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunSettings {
    pub slo: Option<String>,
    pub alerts: Vec<String>,
    pub exit_on_alert: bool,
    pub by: Option<String>,
}

impl RunSettings {
    /// Writes the settings given into a header's `extra` fields.
    pub fn write_into(&self, extra: &mut Map<String, Value>) {
        if let Some(slo) = &self.slo {
            extra.insert("slo".into(), slo.clone().into());
        }
        if !self.alerts.is_empty() {
            extra.insert("alert".into(), self.alerts.clone().into());
        }
        if self.exit_on_alert {
            extra.insert("exit_on_alert".into(), true.into());
        }
        if let Some(by) = &self.by {
            extra.insert("by".into(), by.clone().into());
        }
    }

    /// The settings kept in a header's `extra` fields (none in another scraper's).
    pub fn read_from(extra: &Map<String, Value>) -> RunSettings {
        let text = |name: &str| extra.get(name).and_then(Value::as_str).map(str::to_string);
        let alerts = extra
            .get("alert")
            .and_then(Value::as_array)
            .map(|rules| {
                rules
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        RunSettings {
            slo: text("slo"),
            alerts,
            exit_on_alert: extra
                .get("exit_on_alert")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            by: text("by"),
        }
    }
}

/// One scrape as recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// The URL scraped, as the monitor shows it (the header's `urls` numbers them).
    pub url: String,
    /// Just before the request was sent / just after the body was read or the failure known.
    pub start: DateTime<Utc>,
    /// See `start`: the two bound the moment the page describes.
    pub end: DateTime<Utc>,
    /// The HTTP status; None when no response came (connection refused, timeout, TLS).
    pub status: Option<u16>,
    /// The response's Content-Type, which tells the page's format (text or OpenMetrics).
    pub content_type: Option<String>,
    /// Exactly one of body and error is Some in a well-formed line (a line with neither is an error of the reader).
    pub body: Option<String>,
    /// See `body`: why the scrape failed, as the scraper said it.
    pub error: Option<String>,
    /// The monitor's extension: how many intervals the monitor had computed when it read this
    /// page, so that a replay reads it at the same point (absent in other scrapers' files).
    pub tick: Option<u64>,
}

/// A scrape's line, as the writer writes it (the one spelling the writer and the tests share).
/// Fields that are None are left out rather than written as `null`, as other scrapers do.
pub fn to_json(scrape: &Recorded) -> Value {
    let mut line = Map::new();
    line.insert("url".into(), scrape.url.clone().into());
    line.insert("start".into(), seconds(scrape.start).into());
    line.insert("end".into(), seconds(scrape.end).into());
    if let Some(status) = scrape.status {
        line.insert("status".into(), status.into());
    }
    let texts = [
        ("content_type", &scrape.content_type),
        ("body", &scrape.body),
        ("error", &scrape.error),
    ];
    for (name, text) in texts {
        if let Some(text) = text {
            line.insert(name.into(), text.clone().into());
        }
    }
    if let Some(tick) = scrape.tick {
        line.insert("tick".into(), tick.into());
    }
    Value::Object(line)
}

/// The header's line, as the writer writes it: the format's own fields first (so that the
/// format and version are what a person sees first), then `extra` in its order, less any
/// field that would shadow the header's own.
pub fn header_to_json(header: &Header) -> Value {
    let mut line = Map::new();
    line.insert("format".into(), FORMAT.into());
    line.insert("version".into(), VERSION.into());
    line.insert("started".into(), seconds(header.started).into());
    line.insert("interval_s".into(), header.interval.as_secs_f64().into());
    line.insert("window_s".into(), header.window.as_secs_f64().into());
    line.insert("urls".into(), header.urls.clone().into());
    for (name, value) in &header.extra {
        if !HEADER_FIELDS.contains(&name.as_str()) {
            line.insert(name.clone(), value.clone());
        }
    }
    Value::Object(line)
}

/// Why a recording, or one of its lines, could not be read.
#[derive(Debug)]
pub struct RecordingError {
    /// The line, counting from 1 (the header, when there is one, and blank lines count);
    /// 0 when the file itself could not be read.
    pub line: u64,
    /// What is wrong, naming the field concerned.
    pub message: String,
}

impl fmt::Display for RecordingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for RecordingError {}

/// Unix seconds as written: whole microseconds, so that [`from_seconds`] gets the same time
/// back (an f64 near 1.8e9 s resolves about 0.24 µs).
pub(crate) fn seconds(t: DateTime<Utc>) -> f64 {
    t.timestamp_micros() as f64 / 1e6
}

/// The nearest microsecond, which undoes [`seconds`] exactly, and reads another scraper's
/// six-decimal times as they were meant.
fn from_seconds(s: f64) -> Option<DateTime<Utc>> {
    let micros = (s * 1e6).round();
    // `as` would quietly turn NaN into 0 and clamp the rest.
    if !micros.is_finite() || micros.abs() >= i64::MAX as f64 {
        return None;
    }
    DateTime::from_timestamp_micros(micros as i64)
}

/// Seconds to a duration to the nearest nanosecond: `1.1` is then 1.1 s, not 1.099999999 s.
fn duration(s: f64) -> Option<Duration> {
    let nanos = (s * 1e9).round();
    (nanos.is_finite() && nanos >= 0.0 && nanos < u64::MAX as f64).then(|| Duration::from_nanos(nanos as u64))
}
