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
//! This is a superset of the interchange shape other scrapers write (all of the above but
//! the header and `tick`), so their recordings replay too: fields this reader does not know
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
//! to the disk, so a power cut may lose more.

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::iter::FusedIterator;
use std::path::Path;
use std::time::Duration;

use chrono::{DateTime, Utc};
use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;
use serde_json::{Map, Value};

/// The recording format's name and version, written in the header line: the name tells the
/// monitor's header from another scraper's, the version lets a later format be refused
/// clearly instead of misread.
pub const FORMAT: &str = "vllm_monitor recording";
/// See [`FORMAT`]: the version this module writes and the newest it reads.
pub const VERSION: u64 = 1;

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
/// zstd's default level: about gzip's size at several times its speed.
const ZSTD_LEVEL: i32 = 3;

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

/// Writes a recording as the run goes: one line per scrape, each on the file as soon as it
/// is written, so that whatever stops the run, what was recorded until then can be read.
pub struct Writer {
    /// None once finished, so that Drop knows whether it has work left.
    sink: Option<Sink>,
    /// One line's text, kept between writes so that a page's size is allocated once.
    line: Vec<u8>,
    /// After a failed write the file may end in part of a line, which the next line would
    /// join and spoil: later writes fail too instead.
    failed: bool,
}

enum Sink {
    Plain(BufWriter<File>),
    Gzip(GzEncoder<BufWriter<File>>),
    Zstd(zstd::Encoder<'static, BufWriter<File>>),
}

impl Sink {
    fn writer(&mut self) -> &mut dyn Write {
        match self {
            Sink::Plain(file) => file,
            Sink::Gzip(encoder) => encoder,
            Sink::Zstd(encoder) => encoder,
        }
    }

    /// Ends the compressed stream, so that a reader knows the recording is whole.
    fn finish(self) -> io::Result<()> {
        let mut file = match self {
            Sink::Plain(file) => file,
            Sink::Gzip(encoder) => encoder.finish()?,
            Sink::Zstd(encoder) => encoder.finish()?,
        };
        file.flush()
    }
}

impl Writer {
    /// Creates (or empties) `path` and writes the header. `.gz` and `.zst` names are
    /// compressed, as the module's documentation says.
    pub fn create(path: &Path, header: &Header) -> io::Result<Writer> {
        let file = BufWriter::with_capacity(BUFFER, File::create(path)?);
        let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let sink = if extension.eq_ignore_ascii_case("gz") {
            Sink::Gzip(GzEncoder::new(file, Compression::default()))
        } else if extension.eq_ignore_ascii_case("zst") {
            let mut encoder = zstd::Encoder::new(file, ZSTD_LEVEL)?;
            // A damaged file is then told from a good one by the reader.
            encoder.include_checksum(true)?;
            Sink::Zstd(encoder)
        } else {
            Sink::Plain(file)
        };
        let mut writer = Writer {
            sink: Some(sink),
            line: Vec::new(),
            failed: false,
        };
        writer.write_line(&header_to_json(header))?;
        Ok(writer)
    }

    /// Writes one scrape's line and flushes it through to the file (not to the disk).
    pub fn write(&mut self, scrape: &Recorded) -> io::Result<()> {
        self.write_line(&to_json(scrape))
    }

    /// Ends the recording: a compressed file is left with its proper end (and a reader will
    /// not call it truncated). Dropping the writer does the same but cannot report a failure.
    pub fn finish(mut self) -> io::Result<()> {
        match self.sink.take() {
            Some(sink) => sink.finish(),
            None => Ok(()),
        }
    }

    fn write_line(&mut self, value: &Value) -> io::Result<()> {
        if self.failed {
            return Err(io::Error::other("an earlier write to the recording failed"));
        }
        let Some(sink) = self.sink.as_mut() else {
            return Err(io::Error::other("the recording is finished"));
        };
        self.line.clear();
        serde_json::to_writer(&mut self.line, value)?;
        self.line.push(b'\n');
        let writer = sink.writer();
        let written = writer.write_all(&self.line).and_then(|()| writer.flush());
        self.failed = written.is_err();
        written
    }
}

impl Drop for Writer {
    /// Best effort: a run that ends by an error or a panic still leaves a whole file.
    fn drop(&mut self) {
        if let Some(sink) = self.sink.take() {
            let _ = sink.finish();
        }
    }
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

/// Opens a recording for replay: plain, gzip or zstd by its first bytes. Its first line is
/// read at once, so that [`Replay::header`] can be asked before any scrape; a header of a
/// newer format version, or one of the monitor's that is damaged, fails here.
pub fn open(path: &Path) -> Result<Replay, RecordingError> {
    let unreadable = |e: io::Error| RecordingError {
        line: 0,
        message: e.to_string(),
    };
    let mut file = File::open(path).map_err(unreadable)?;
    let mut magic = [0; 4];
    let mut seen = 0;
    // Read in a loop: a pipe (`--replay /dev/stdin`) may give fewer bytes than asked.
    while seen < magic.len() {
        match file.read(&mut magic[seen..]) {
            Ok(0) => break,
            Ok(n) => seen += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(unreadable(e)),
        }
    }
    let magic = &magic[..seen];
    // The bytes looked at are put back in front rather than sought back to, for pipes.
    let raw = io::Cursor::new(magic.to_vec()).chain(file);
    let input: Box<dyn BufRead + Send> = if magic.starts_with(&GZIP_MAGIC) {
        Box::new(BufReader::with_capacity(BUFFER, MultiGzDecoder::new(raw)))
    } else if magic == ZSTD_MAGIC {
        let decoder = zstd::Decoder::new(raw).map_err(unreadable)?;
        Box::new(BufReader::with_capacity(BUFFER, decoder))
    } else {
        Box::new(BufReader::with_capacity(BUFFER, raw))
    };
    let mut replay = Replay {
        input,
        text: Vec::new(),
        line: 0,
        header: None,
        first: None,
        ended: false,
        truncated: false,
    };
    match replay.next_line() {
        Some(Ok((1, Value::Object(header)))) if !header.contains_key("url") => {
            if header.get("format").and_then(Value::as_str) == Some(FORMAT) {
                replay.header = Some(read_header(header)?);
            }
        }
        first => replay.first = first,
    }
    Ok(replay)
}

/// A recording being read: its header, then its scrapes one at a time, so that an hours-long
/// recording needs the memory of one page, not of the run.
pub struct Replay {
    input: Box<dyn BufRead + Send>,
    /// The line being read, kept between lines so that a page's size is allocated once.
    text: Vec<u8>,
    /// The number of the last line read.
    line: u64,
    header: Option<Header>,
    /// The first line when it was not a header: read at open, given first by the iterator.
    first: Option<Result<(u64, Value), RecordingError>>,
    ended: bool,
    truncated: bool,
}

impl Replay {
    /// The monitor's header; None for a recording without one, or whose first line is a
    /// header of another scraper's (skipped: its fields mean nothing here).
    pub fn header(&self) -> Option<&Header> {
        self.header.as_ref()
    }

    /// True once the iteration has met the recording's end and found it cut short: a
    /// compressed stream without its proper end, or a last line without its newline that is
    /// not JSON (a line cut off as it was written). The scrapes read are then every one
    /// complete in the file, but the run may have gone on after them (a killed monitor's
    /// recording is cut so; so is a file not fully copied, which this cannot tell apart).
    /// A plain file cut exactly after a newline shows no sign of it, and reads as whole.
    /// False before the end is reached.
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// The next line that is not blank, parsed as JSON, with its number; None at the end.
    fn next_line(&mut self) -> Option<Result<(u64, Value), RecordingError>> {
        loop {
            if self.ended {
                return None;
            }
            self.text.clear();
            match self.input.read_until(b'\n', &mut self.text) {
                Ok(0) => {
                    self.ended = true;
                    return None;
                }
                Ok(_) => {}
                // The decompressors' way of saying the stream stops before its end: what was
                // decompressed until then is in `text`, and read as a last line.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    self.ended = true;
                    self.truncated = true;
                    if self.text.is_empty() {
                        return None;
                    }
                }
                // Corrupt compressed data: nothing after it can be found again.
                Err(e) => {
                    self.ended = true;
                    return Some(Err(RecordingError {
                        line: self.line + 1,
                        message: format!("unreadable from here on: {e}"),
                    }));
                }
            }
            self.line += 1;
            if self.text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let complete = self.text.last() == Some(&b'\n');
            // Without its end of line, so that serde_json's column is the line's.
            let json = self.text.strip_suffix(b"\n").unwrap_or(&self.text);
            let json = json.strip_suffix(b"\r").unwrap_or(json);
            return match serde_json::from_slice(json) {
                Ok(value) => Some(Ok((self.line, value))),
                // A JSON object is whole only with its closing brace, so a cut-off line can
                // never pass for a complete one.
                Err(_) if !complete => {
                    self.ended = true;
                    self.truncated = true;
                    None
                }
                Err(e) => Some(Err(RecordingError {
                    line: self.line,
                    message: format!("not JSON: {}", json_error(&e)),
                })),
            };
        }
    }
}

impl Iterator for Replay {
    type Item = Result<Recorded, RecordingError>;

    /// The next scrape, or why the next line is not one (the iteration goes on after it).
    fn next(&mut self) -> Option<Self::Item> {
        let line = match self.first.take() {
            Some(first) => first,
            None => self.next_line()?,
        };
        Some(line.and_then(|(number, value)| {
            read_scrape(value).map_err(|message| RecordingError {
                line: number,
                message,
            })
        }))
    }
}

impl FusedIterator for Replay {}

/// serde_json's message without its position, which would name line 1 of a one-line text.
fn json_error(e: &serde_json::Error) -> String {
    let message = e.to_string();
    let position = format!(" at line {} column {}", e.line(), e.column());
    match message.strip_suffix(&position) {
        Some(bare) => format!("{bare} at column {}", e.column()),
        None => message,
    }
}

fn read_scrape(value: Value) -> Result<Recorded, String> {
    let Value::Object(mut line) = value else {
        return Err("not a JSON object".into());
    };
    let url = match line.remove("url") {
        Some(Value::String(url)) => url,
        Some(_) => return Err("\"url\" is not a string".into()),
        None if line.contains_key("format") => {
            return Err("a header in the middle of the recording (were two recordings joined?)".into())
        }
        None => return Err("no \"url\"".into()),
    };
    let start = time(&line, "start")?;
    let end = time(&line, "end")?;
    if end < start {
        return Err(format!(
            "\"end\" ({}) is before \"start\" ({})",
            seconds(end),
            seconds(start)
        ));
    }
    let status = match line.get("status") {
        None | Some(Value::Null) => None,
        Some(status) => Some(
            status
                .as_u64()
                .and_then(|s| u16::try_from(s).ok())
                .ok_or_else(|| format!("\"status\" ({status}) is not an HTTP status"))?,
        ),
    };
    let tick = match line.get("tick") {
        None | Some(Value::Null) => None,
        Some(tick) => Some(
            tick.as_u64()
                .ok_or_else(|| format!("\"tick\" ({tick}) is not a whole number"))?,
        ),
    };
    let content_type = text(&mut line, "content_type")?;
    let body = text(&mut line, "body")?;
    let error = text(&mut line, "error")?;
    match (&body, &error) {
        (None, None) => return Err("neither \"body\" nor \"error\"".into()),
        // Whether the scrape succeeded would be a guess.
        (Some(_), Some(_)) => return Err("both \"body\" and \"error\"".into()),
        _ => {}
    }
    Ok(Recorded {
        url,
        start,
        end,
        status,
        content_type,
        body,
        error,
        tick,
    })
}

/// A string field, taken out of the line (a page is not copied); `null` is as absent.
fn text(line: &mut Map<String, Value>, name: &str) -> Result<Option<String>, String> {
    match line.remove(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => Err(format!("\"{name}\" is not a string")),
    }
}

/// A time field in Unix seconds.
fn time(line: &Map<String, Value>, name: &str) -> Result<DateTime<Utc>, String> {
    let value = line.get(name).ok_or_else(|| format!("no \"{name}\""))?;
    let s = value
        .as_f64()
        .ok_or_else(|| format!("\"{name}\" ({value}) is not a number (Unix seconds)"))?;
    from_seconds(s).ok_or_else(|| format!("\"{name}\" ({s}) is out of range"))
}

/// Unix seconds as written: whole microseconds, so that [`from_seconds`] gets the same time
/// back (an f64 near 1.8e9 s resolves about 0.24 µs).
fn seconds(t: DateTime<Utc>) -> f64 {
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

fn read_header(mut fields: Map<String, Value>) -> Result<Header, RecordingError> {
    let wrong = |message: String| RecordingError {
        line: 1,
        message: format!("the recording's header: {message}"),
    };
    // The version first: a newer format may have changed everything else.
    match fields.get("version").and_then(Value::as_u64) {
        Some(version) if (1..=VERSION).contains(&version) => {}
        Some(version) if version > VERSION => {
            return Err(RecordingError {
                line: 1,
                message: format!(
                    "recorded by a newer vllm_monitor (format version {version}); this one reads \
                     version {VERSION}"
                ),
            })
        }
        _ => return Err(wrong("\"version\" is not a format version (1, 2, ...)".into())),
    }
    let started = time(&fields, "started").map_err(wrong)?;
    let seconds_field = |name: &str| {
        let value = fields.get(name).ok_or_else(|| wrong(format!("no \"{name}\"")))?;
        value
            .as_f64()
            .and_then(duration)
            .ok_or_else(|| wrong(format!("\"{name}\" ({value}) is not a number of seconds")))
    };
    let interval = seconds_field("interval_s")?;
    let window = seconds_field("window_s")?;
    let urls = match fields.get("urls") {
        None => return Err(wrong("no \"urls\"".into())),
        Some(Value::Array(urls)) => urls
            .iter()
            .map(|url| url.as_str().map(str::to_owned))
            .collect::<Option<Vec<String>>>()
            .ok_or_else(|| wrong("\"urls\" is not a list of strings".into()))?,
        Some(_) => return Err(wrong("\"urls\" is not a list of strings".into())),
    };
    fields.retain(|name, _| !HEADER_FIELDS.contains(&name.as_str()));
    Ok(Header {
        started,
        interval,
        window,
        urls,
        extra: fields,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::path::PathBuf;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// A directory of its own for each test, removed when the test ends (even by a panic).
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(test: &str) -> TempDir {
            static NEXT: AtomicU64 = AtomicU64::new(0);
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let dir = std::env::temp_dir().join(format!("recording-{test}-{}-{n}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }

        fn file(&self, name: &str) -> PathBuf {
            self.0.join(name)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn at(micros: i64) -> DateTime<Utc> {
        DateTime::from_timestamp_micros(micros).unwrap()
    }

    fn header() -> Header {
        let mut extra = Map::new();
        extra.insert("setup".into(), "vLLM 0.33 · 2 URLs · every 1.5s".into());
        extra.insert("nested".into(), serde_json::json!({"a": [1, 2.5, null]}));
        Header {
            started: at(1_796_153_029_088_207),
            interval: Duration::from_millis(1500),
            window: Duration::from_secs(90),
            urls: vec!["http://a:8000/metrics".into(), "https://b:8000/metrics".into()],
            extra,
        }
    }

    /// Pages, a failure, an error page and an OpenMetrics one, with what JSON must escape.
    fn scrapes() -> Vec<Recorded> {
        let page = |n: i64, tick| Recorded {
            url: "http://a:8000/metrics".into(),
            start: at(1_796_153_030_000_001 + n * 1_000_000),
            end: at(1_796_153_030_012_345 + n * 1_000_000),
            status: Some(200),
            content_type: Some("text/plain; version=0.0.4; charset=utf-8".into()),
            body: Some(format!(
                "# HELP x \"quoted\" \\ and ünïcode\nvllm:x{{model_name=\"m\"}} {n}\n\tend"
            )),
            error: None,
            tick,
        };
        vec![
            page(0, Some(0)),
            page(1, Some(1)),
            Recorded {
                url: "https://b:8000/metrics".into(),
                start: at(1_796_153_032_000_000),
                end: at(1_796_153_032_000_000),
                status: None,
                content_type: None,
                body: None,
                error: Some("connection refused".into()),
                tick: Some(1),
            },
            Recorded {
                status: Some(503),
                content_type: Some("text/html".into()),
                body: Some("<h1>Service Unavailable</h1>".into()),
                ..page(3, None)
            },
            Recorded {
                content_type: Some("application/openmetrics-text; version=1.0.0".into()),
                body: Some("# EOF\n".into()),
                ..page(4, Some(4))
            },
        ]
    }

    fn record(path: &Path) {
        let mut writer = Writer::create(path, &header()).unwrap();
        for scrape in scrapes() {
            writer.write(&scrape).unwrap();
        }
        writer.finish().unwrap();
    }

    /// Every item, errors as their text.
    fn read_all(replay: &mut Replay) -> Vec<Result<Recorded, String>> {
        replay.map(|r| r.map_err(|e| e.to_string())).collect()
    }

    fn write_lines(path: &Path, lines: &[&str]) {
        std::fs::write(path, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    }

    #[test]
    fn round_trips_plain_gzip_and_zstd() {
        let dir = TempDir::new("round-trip");
        for name in ["run.jsonl", "run.jsonl.gz", "run.jsonl.zst"] {
            let path = dir.file(name);
            record(&path);
            let mut replay = open(&path).unwrap();
            assert_eq!(replay.header(), Some(&header()), "{name}");
            let read: Vec<Recorded> = replay.by_ref().map(Result::unwrap).collect();
            assert_eq!(read, scrapes(), "{name}");
            assert!(!replay.truncated(), "{name}");
        }
        let bytes = |name| std::fs::read(dir.file(name)).unwrap();
        assert_eq!(bytes("run.jsonl.gz")[..2], GZIP_MAGIC);
        assert_eq!(bytes("run.jsonl.zst")[..4], ZSTD_MAGIC);
        assert_eq!(bytes("run.jsonl")[0], b'{');
    }

    #[test]
    fn the_plain_file_is_the_documented_shape() {
        let dir = TempDir::new("shape");
        let path = dir.file("run.jsonl");
        record(&path);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1 + scrapes().len());
        assert!(
            lines[0].starts_with(
                r#"{"format":"vllm_monitor recording","version":1,"started":1796153029.088207,"interval_s":1.5,"window_s":90.0,"urls":["http://a:8000/metrics","https://b:8000/metrics"],"setup":"#
            ),
            "{}",
            lines[0]
        );
        assert_eq!(
            lines[3],
            r#"{"url":"https://b:8000/metrics","start":1796153032.0,"end":1796153032.0,"error":"connection refused","tick":1}"#
        );
        assert!(lines[1].starts_with(
            r#"{"url":"http://a:8000/metrics","start":1796153030.000001,"end":1796153030.012345,"status":200,"content_type":"#
        ));
        assert_eq!(to_json(&scrapes()[2]).to_string(), lines[3]);
        assert_eq!(header_to_json(&header()).to_string(), lines[0]);
    }

    #[test]
    fn times_round_trip_to_the_microsecond() {
        let check = |micros: i64| {
            let t = at(micros);
            let text = serde_json::to_string(&Value::from(seconds(t))).unwrap();
            let back: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(
                from_seconds(back.as_f64().unwrap()),
                Some(t),
                "{micros} written as {text}"
            );
        };
        for base in [
            1_800_000_000_000_000,
            1_796_153_029_000_000,
            2_147_483_647_000_000,
            0,
        ] {
            for k in 0..200_000 {
                check(base + k * 7_919);
                check(base - k * 13);
            }
            check(base + 999_999);
        }
        // Another scraper's six decimals (Python's round(t, 6)).
        let value: Value = serde_json::from_str("1796153029.088207").unwrap();
        assert_eq!(
            from_seconds(value.as_f64().unwrap()),
            Some(at(1_796_153_029_088_207))
        );
        // Finer than a microsecond is dropped, not rounded into a different second.
        let fine = DateTime::from_timestamp(1_800_000_000, 999_999_999).unwrap();
        assert_eq!(from_seconds(seconds(fine)), Some(at(1_800_000_000_999_999)));
        assert_eq!(from_seconds(f64::NAN), None);
        assert_eq!(from_seconds(1e300), None);
    }

    #[test]
    fn times_round_trip_through_a_file() {
        let dir = TempDir::new("times");
        let path = dir.file("t.jsonl.zst");
        let starts: Vec<i64> = (0..1000)
            .map(|k| 1_800_000_000_000_000 + k * 1_000_003 + k % 7)
            .collect();
        let mut writer = Writer::create(&path, &header()).unwrap();
        for &start in &starts {
            let scrape = Recorded {
                start: at(start),
                end: at(start + 1),
                ..scrapes()[2].clone()
            };
            writer.write(&scrape).unwrap();
        }
        writer.finish().unwrap();
        let read: Vec<i64> = open(&path)
            .unwrap()
            .map(|r| r.unwrap().start.timestamp_micros())
            .collect();
        assert_eq!(read, starts);
    }

    #[test]
    fn durations_read_back_as_given() {
        for given in [
            Duration::from_millis(1100),
            Duration::from_millis(250),
            Duration::from_secs(90),
            Duration::from_secs(3600),
            Duration::from_nanos(1_234_567_891),
            Duration::ZERO,
        ] {
            assert_eq!(duration(given.as_secs_f64()), Some(given));
        }
        assert_eq!(duration(-1.0), None);
    }

    #[test]
    fn reads_a_recording_without_header() {
        let dir = TempDir::new("no-header");
        let path = dir.file("other.jsonl");
        let lines: Vec<String> = scrapes().iter().map(|s| to_json(s).to_string()).collect();
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        write_lines(&path, &lines);
        let mut replay = open(&path).unwrap();
        assert_eq!(replay.header(), None);
        assert_eq!(
            read_all(&mut replay),
            scrapes().into_iter().map(Ok).collect::<Vec<_>>()
        );
        assert!(!replay.truncated());
    }

    #[test]
    fn skips_a_header_of_another_scraper() {
        let dir = TempDir::new("foreign-header");
        let path = dir.file("other.jsonl");
        write_lines(
            &path,
            &[
                r#"{"format":"someone else's","version":7,"started":"yesterday"}"#,
                r#"{"url":"u","start":1.5,"end":2,"status":200,"content_type":null,"body":"x 1\n"}"#,
            ],
        );
        let mut replay = open(&path).unwrap();
        assert_eq!(replay.header(), None);
        let read = read_all(&mut replay);
        assert_eq!(read.len(), 1);
        let scrape = read[0].as_ref().unwrap();
        assert_eq!((scrape.start, scrape.end), (at(1_500_000), at(2_000_000)));
        assert_eq!(scrape.content_type, None);
    }

    #[test]
    fn ignores_fields_it_does_not_know() {
        let dir = TempDir::new("extra-fields");
        let path = dir.file("other.jsonl");
        write_lines(
            &path,
            &[
                r#"{"latency_ms":12,"url":"u","labels":{"job":"x"},"start":10,"end":11,"error":"timeout","status":null,"retries":[1,2]}"#,
            ],
        );
        let read: Vec<Recorded> = open(&path).unwrap().map(Result::unwrap).collect();
        assert_eq!(
            read,
            [Recorded {
                url: "u".into(),
                start: at(10_000_000),
                end: at(11_000_000),
                status: None,
                content_type: None,
                body: None,
                error: Some("timeout".into()),
                tick: None,
            }]
        );
    }

    #[test]
    fn a_bad_line_is_reported_with_its_number_and_reading_goes_on() {
        let dir = TempDir::new("bad-lines");
        let path = dir.file("bad.jsonl");
        let good = r#"{"url":"u","start":1,"end":2,"body":"ok"}"#;
        write_lines(
            &path,
            &[
                &header_to_json(&header()).to_string(),
                good,
                r#"{"url":"u","start":1,"end":2,"body":"#,
                "",
                r#"{"url":"u","start":1,"body":"x"}"#,
                r#"{"start":1,"end":2,"body":"x"}"#,
                r#"{"url":"u","start":"1796153029","end":2,"body":"x"}"#,
                r#"{"url":"u","start":3,"end":2,"body":"x"}"#,
                r#"{"url":"u","start":1,"end":2,"status":200}"#,
                r#"{"url":"u","start":1,"end":2,"body":"x","error":"y"}"#,
                r#"{"url":"u","start":1,"end":2,"status":-1,"error":"y"}"#,
                "[1,2]",
                &header_to_json(&header()).to_string(),
                good,
            ],
        );
        let mut replay = open(&path).unwrap();
        assert!(replay.header().is_some());
        let read = read_all(&mut replay);
        let errors: Vec<&str> = read
            .iter()
            .filter_map(|r| r.as_ref().err())
            .map(String::as_str)
            .collect();
        assert_eq!(
            errors,
            [
                "line 3: not JSON: EOF while parsing a value at column 36",
                "line 5: no \"end\"",
                "line 6: no \"url\"",
                "line 7: \"start\" (\"1796153029\") is not a number (Unix seconds)",
                "line 8: \"end\" (2) is before \"start\" (3)",
                "line 9: neither \"body\" nor \"error\"",
                "line 10: both \"body\" and \"error\"",
                "line 11: \"status\" (-1) is not an HTTP status",
                "line 12: not a JSON object",
                "line 13: a header in the middle of the recording (were two recordings joined?)",
            ]
        );
        assert_eq!(read.iter().filter(|r| r.is_ok()).count(), 2);
        assert!(
            read.last().unwrap().is_ok(),
            "the line after the bad ones is read"
        );
        assert!(!replay.truncated());
    }

    #[test]
    fn a_first_line_that_is_not_json_is_a_bad_line_not_a_failure() {
        let dir = TempDir::new("bad-first");
        let path = dir.file("bad.jsonl");
        write_lines(
            &path,
            &["garbage", r#"{"url":"u","start":1,"end":2,"body":"ok"}"#],
        );
        let mut replay = open(&path).unwrap();
        assert_eq!(replay.header(), None);
        let read = read_all(&mut replay);
        assert_eq!(
            read[0].as_ref().unwrap_err(),
            "line 1: not JSON: expected value at column 1"
        );
        assert!(read[1].is_ok());
    }

    /// Every length a killed or cut copy could have: what is read is a beginning of what was
    /// written, never an error, and the cut is told whenever the file shows it.
    fn check_every_cut(name: &str) {
        let dir = TempDir::new("cuts");
        let whole_path = dir.file(name);
        record(&whole_path);
        let whole = std::fs::read(&whole_path).unwrap();
        let plain = !name.ends_with(".gz") && !name.ends_with(".zst");
        let cut_path = dir.file(&format!("cut-{name}"));
        let mut read_before = 0;
        for length in 1..whole.len() {
            std::fs::write(&cut_path, &whole[..length]).unwrap();
            let mut replay = open(&cut_path).unwrap_or_else(|e| panic!("{name} cut at {length}: {e}"));
            let read: Vec<Recorded> = replay
                .by_ref()
                .map(|r| r.unwrap_or_else(|e| panic!("{name} cut at {length}: {e}")))
                .collect();
            assert_eq!(read[..], scrapes()[..read.len()], "{name} cut at {length}");
            assert!(read.len() >= read_before, "{name} cut at {length}");
            read_before = read.len();
            // A plain file cut at the end of a line, or just before its newline, is whole as
            // far as anyone can tell.
            let looks_whole = plain && (whole[length - 1] == b'\n' || whole[length] == b'\n');
            assert_eq!(replay.truncated(), !looks_whole, "{name} cut at {length}");
            if replay.header().is_none() {
                assert!(read.is_empty(), "{name} cut at {length}");
            }
        }
        // Cut in its last byte: a compressed stream's end, a plain file's last newline.
        assert_eq!(read_before, scrapes().len(), "{name}");
    }

    #[test]
    fn a_cut_gzip_file_reads_every_complete_line() {
        check_every_cut("run.jsonl.gz");
    }

    #[test]
    fn a_cut_zstd_file_reads_every_complete_line() {
        check_every_cut("run.jsonl.zst");
    }

    #[test]
    fn a_cut_plain_file_reads_every_complete_line() {
        check_every_cut("run.jsonl");
    }

    #[test]
    fn a_killed_writer_leaves_every_scrape_readable() {
        let dir = TempDir::new("killed");
        for name in ["run.jsonl.gz", "run.jsonl.zst", "run.jsonl"] {
            let path = dir.file(name);
            let mut writer = Writer::create(&path, &header()).unwrap();
            for scrape in scrapes() {
                writer.write(&scrape).unwrap();
            }
            // What a kill does: no finish, no Drop, no flush beyond what each write did.
            std::mem::forget(writer);
            let mut replay = open(&path).unwrap();
            assert_eq!(replay.header(), Some(&header()), "{name}");
            let read: Vec<Recorded> = replay.by_ref().map(Result::unwrap).collect();
            assert_eq!(read, scrapes(), "{name}");
            // A plain file has no end marker to miss.
            assert_eq!(replay.truncated(), name != "run.jsonl", "{name}");
        }
    }

    #[test]
    fn dropping_the_writer_ends_the_file_properly() {
        let dir = TempDir::new("dropped");
        for name in ["run.jsonl.gz", "run.jsonl.zst"] {
            let path = dir.file(name);
            {
                let mut writer = Writer::create(&path, &header()).unwrap();
                writer.write(&scrapes()[0]).unwrap();
            }
            let mut replay = open(&path).unwrap();
            assert_eq!(replay.by_ref().count(), 1, "{name}");
            assert!(!replay.truncated(), "{name}");
        }
    }

    #[test]
    fn a_newer_version_is_refused() {
        let dir = TempDir::new("newer");
        let path = dir.file("new.jsonl.gz");
        let mut line = header_to_json(&header());
        line["version"] = 2.into();
        line["interval_s"] = "whatever a later version means".into();
        let mut encoder = GzEncoder::new(File::create(&path).unwrap(), Compression::default());
        writeln!(encoder, "{line}").unwrap();
        encoder.finish().unwrap();
        let e = open(&path).err().unwrap();
        assert_eq!(
            e.to_string(),
            "line 1: recorded by a newer vllm_monitor (format version 2); this one reads version 1"
        );
    }

    #[test]
    fn a_damaged_header_of_ours_is_refused() {
        let dir = TempDir::new("damaged-header");
        let path = dir.file("run.jsonl");
        write_lines(
            &path,
            &[r#"{"format":"vllm_monitor recording","version":1,"started":1,"urls":[]}"#],
        );
        let e = open(&path).err().unwrap();
        assert_eq!(
            (e.line, e.message.as_str()),
            (1, "the recording's header: no \"interval_s\"")
        );
    }

    #[test]
    fn extra_header_fields_cannot_shadow_the_header() {
        let mut shadowing = header();
        shadowing.extra.insert("version".into(), 99.into());
        shadowing.extra.insert("url".into(), "x".into());
        shadowing.extra.insert("kept".into(), true.into());
        let line = header_to_json(&shadowing);
        assert_eq!(line["version"], VERSION);
        assert!(line.get("url").is_none());
        let dir = TempDir::new("shadow");
        let path = dir.file("run.jsonl");
        let writer = Writer::create(&path, &shadowing).unwrap();
        writer.finish().unwrap();
        let replay = open(&path).unwrap();
        let read = replay.header().unwrap();
        assert_eq!(read.extra.get("kept"), Some(&Value::Bool(true)));
        assert_eq!(read.extra.keys().collect::<Vec<_>>(), ["setup", "nested", "kept"]);
    }

    #[test]
    fn the_first_bytes_decide_not_the_name() {
        let dir = TempDir::new("magic");
        for (written, renamed) in [
            ("a.jsonl.gz", "a.jsonl"),
            ("b.jsonl.zst", "b.jsonl.gz"),
            ("c.jsonl", "c.jsonl.zst"),
        ] {
            record(&dir.file(written));
            std::fs::rename(dir.file(written), dir.file(renamed)).unwrap();
            let mut replay = open(&dir.file(renamed)).unwrap();
            assert_eq!(replay.header(), Some(&header()), "{written} as {renamed}");
            let read: Vec<Recorded> = replay.by_ref().map(Result::unwrap).collect();
            assert_eq!(read, scrapes(), "{written} as {renamed}");
        }
    }

    #[test]
    fn joined_gzip_files_read_as_one() {
        let dir = TempDir::new("joined");
        let path = dir.file("a.gz");
        let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
        writeln!(encoder, "{}", to_json(&scrapes()[0])).unwrap();
        let mut joined = encoder.finish().unwrap();
        let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
        writeln!(encoder, "{}", to_json(&scrapes()[1])).unwrap();
        joined.extend(encoder.finish().unwrap());
        std::fs::write(&path, joined).unwrap();
        let read: Vec<Recorded> = open(&path).unwrap().map(Result::unwrap).collect();
        assert_eq!(read, scrapes()[..2]);
    }

    #[test]
    fn corrupt_compressed_data_is_an_error_not_a_cut() {
        let dir = TempDir::new("corrupt");
        let path = dir.file("run.jsonl.gz");
        record(&path);
        let mut bytes = std::fs::read(&path).unwrap();
        let n = bytes.len();
        // The CRC of the data, in the gzip trailer.
        bytes[n - 6] ^= 0xff;
        std::fs::write(&path, bytes).unwrap();
        let mut replay = open(&path).unwrap();
        let read = read_all(&mut replay);
        assert_eq!(read.iter().filter(|r| r.is_ok()).count(), scrapes().len());
        let last = read.last().unwrap().as_ref().unwrap_err();
        assert!(last.starts_with("line 7: unreadable from here on: "), "{last}");
        assert!(!replay.truncated());
    }

    #[test]
    fn a_last_line_without_newline_is_read_when_whole() {
        let dir = TempDir::new("no-newline");
        let path = dir.file("run.jsonl");
        std::fs::write(&path, "\n{\"url\":\"u\",\"start\":1,\"end\":2,\"body\":\"ok\"}").unwrap();
        let mut replay = open(&path).unwrap();
        assert_eq!(replay.by_ref().map(Result::unwrap).count(), 1);
        assert!(!replay.truncated());
    }

    #[test]
    fn an_empty_file_is_an_empty_recording() {
        let dir = TempDir::new("empty");
        let path = dir.file("run.jsonl.gz");
        std::fs::write(&path, "").unwrap();
        let mut replay = open(&path).unwrap();
        assert!(replay.header().is_none());
        assert_eq!(replay.next().map(|r| r.is_ok()), None);
        assert!(!replay.truncated());
    }

    #[test]
    fn an_unreadable_file_is_line_0() {
        let dir = TempDir::new("missing");
        let e = open(&dir.file("missing.jsonl")).err().unwrap();
        assert_eq!(e.line, 0);
        assert!(e.message.contains("No such file"), "{e}");
        assert!(e.to_string().starts_with("line 0: "), "{e}");
    }
}
