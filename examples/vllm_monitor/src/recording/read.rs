//! Reading a recording back (`--replay FILE`): [`open`] and the [`Replay`] it gives.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::iter::FusedIterator;
use std::path::Path;

use chrono::{DateTime, Utc};
use flate2::read::MultiGzDecoder;
use serde_json::{Map, Value};

use super::{
    duration, from_seconds, seconds, Header, Recorded, RecordingError, BUFFER, FORMAT, GZIP_MAGIC,
    HEADER_FIELDS, VERSION, ZSTD_MAGIC,
};

/// The longest line a recording may have by default: twice the default page limit
/// (`--max-page-mib`, 1 GiB), as a page's text grows when written as a JSON string.
pub const DEFAULT_MAX_LINE: u64 = 2 << 30;

/// The longest line of a recording whose pages are at most `max_page_bytes`: twice that
/// (a page's text grows when written as a JSON string) and 1 MiB for the line's fields.
pub fn max_line_for(max_page_bytes: u64) -> u64 {
    max_page_bytes.saturating_mul(2).saturating_add(1 << 20)
}

/// Opens a recording for replay: plain, gzip or zstd by its first bytes. Its first line is
/// read at once, so that [`Replay::header`] can be asked before any scrape; a header of a
/// newer format version, or one of the monitor's that is damaged, fails here. Lines are at
/// most 2 GiB long (`DEFAULT_MAX_LINE`; [`open_within`] sets another bound).
pub fn open(path: &Path) -> Result<Replay, RecordingError> {
    open_within(path, DEFAULT_MAX_LINE)
}

/// [`open`] with lines of at most `max_line` bytes: a longer one is skipped as it is
/// read, never held, and is an error of its line (the iteration goes on after it).
pub fn open_within(path: &Path, max_line: u64) -> Result<Replay, RecordingError> {
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
        max_line,
        text: Vec::new(),
        line: 0,
        header: None,
        first: None,
        ended: false,
        truncated: false,
        ticks: None,
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
    /// The longest line read; a longer one is skipped.
    max_line: u64,
    /// The line being read, kept between lines so that a page's size is allocated once.
    text: Vec<u8>,
    /// The number of the last line read.
    line: u64,
    header: Option<Header>,
    /// The first line when it was not a header: read at open, given first by the iterator.
    first: Option<Result<(u64, Value), RecordingError>>,
    ended: bool,
    truncated: bool,
    /// The intervals the recorded run computed, from its last line, and that line's number.
    ticks: Option<(u64, u64)>,
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

    /// How many intervals the recorded run computed in all, as its last line says (this
    /// monitor writes it when a run ends: `{"end_of_run": true, "ticks": N}`); `None` for a
    /// recording cut short, or another scraper's, or before the iteration reached it.
    pub fn ticks(&self) -> Option<u64> {
        self.ticks.map(|(_, ticks)| ticks)
    }

    /// The number of the line [`Replay::ticks`] was read from, to report it by.
    pub fn ticks_line(&self) -> Option<u64> {
        self.ticks.map(|(line, _)| line)
    }

    /// The number of the last line read: the scrape [`Iterator::next`] just gave.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// The text of the line last read (the one an error was just reported on), as it is
    /// in the file.
    pub fn line_text(&self) -> &[u8] {
        &self.text
    }

    /// The next line that is not blank, parsed as JSON, with its number; None at the end.
    fn next_line(&mut self) -> Option<Result<(u64, Value), RecordingError>> {
        loop {
            if self.ended {
                return None;
            }
            self.text.clear();
            let mut bounded = (&mut self.input).take(self.max_line.saturating_add(1));
            match bounded.read_until(b'\n', &mut self.text) {
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
            if self.text.len() as u64 > self.max_line && self.text.last() != Some(&b'\n') {
                return Some(Err(self.skip_long_line()));
            }
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

impl Replay {
    /// Reads past the rest of a line longer than [`Replay::max_line`] without keeping it;
    /// the error that says so.
    fn skip_long_line(&mut self) -> RecordingError {
        self.text.clear();
        loop {
            let (used, done) = match self.input.fill_buf() {
                Ok([]) => (0, true),
                Ok(rest) => match memchr::memchr(b'\n', rest) {
                    Some(end) => (end + 1, true),
                    None => (rest.len(), false),
                },
                Err(e) if e.kind() == io::ErrorKind::Interrupted => (0, false),
                Err(_) => (0, true),
            };
            self.input.consume(used);
            if done {
                break;
            }
        }
        RecordingError {
            line: self.line,
            message: format!(
                "longer than the {} MiB a line may have (twice --max-page-mib and 1 MiB): skipped",
                self.max_line >> 20
            ),
        }
    }
}

impl Iterator for Replay {
    type Item = Result<Recorded, RecordingError>;

    /// The next scrape, or why the next line is not one (the iteration goes on after it).
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let line = match self.first.take() {
                Some(first) => first,
                None => self.next_line()?,
            };
            // The run's last line is no scrape: it says how many intervals the run had. The
            // reading goes on to the end, which may still show the file cut short.
            if let Ok((number, Value::Object(fields))) = &line {
                if fields.get("end_of_run") == Some(&Value::Bool(true)) {
                    self.ticks = fields.get("ticks").and_then(Value::as_u64).map(|t| (*number, t));
                    continue;
                }
            }
            return Some(line.and_then(|(number, value)| {
                read_scrape(value).map_err(|message| RecordingError {
                    line: number,
                    message,
                })
            }));
        }
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
    // Refused as `--interval` refuses it: a run at a microsecond would spin.
    if interval < super::MIN_INTERVAL {
        return Err(wrong(format!(
            "\"interval_s\" ({}) is under 100ms: too short an interval to scrape a server",
            interval.as_secs_f64()
        )));
    }
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
