//! Reading a page as it arrives: [`Tracker::ingest_chunks`] and [`Tracker::ingest_reader`].
//!
//! Chunks are cut into batches of whole lines; each batch is read by the same visitor as a
//! whole page (`ingest.rs`), in place when a chunk holds whole lines, so only a line cut
//! between two chunks is copied (into a buffer as long as the longest such line).
//! `Tracker::ingest` is this with one batch, the page.

use std::io::Read;

use chrono::{DateTime, Utc};

use super::ingest::{sample_lines, Carried, PageRead};
use super::{IngestReport, Tracker};
use crate::error::{IngestError, ParseError, ParseErrorKind, ReadError};
use crate::text::limits::Limits;
use crate::text::{Format, Parser};

/// A page being read into a [`Tracker`] as it arrives ([`Tracker::ingest_chunks`]): push
/// its bytes in chunks of any size (a line, or a UTF-8 character, may be cut anywhere),
/// then [`IngestChunks::finish`]. The result is [`Tracker::ingest`]'s for the whole page:
/// the same report, series, points and refusals. Memory: the longest line cut between two
/// chunks, plus 16 bytes per sample held back where a limit may refuse the page
/// ([`Tracker::max_series`], a limit of the [`Tracker::parser`]), never the page. A
/// strict OpenMetrics parser is the exception: its rules span the page, so the page is
/// gathered and read whole.
///
/// Dropping it without `finish` ends the page where it stands (a refusal is then lost).
///
/// # Example
/// ```
/// use promrate::Tracker;
/// let mut t = Tracker::new([]);
/// let at = chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap();
/// let mut page = t.ingest_chunks(at)?;
/// for chunk in ["# TYPE tok counter\ntok_total{mo", "del=\"m\"} 7\nup 1", "\n"] {
///     page.push(chunk);
/// }
/// let report = page.finish()?;
/// assert_eq!((report.samples, report.new_series), (2, 2));
/// assert_eq!(t.get("tok_total", &[("model", "m")]).unwrap().last_value(), Some(7.0));
/// # Ok::<(), promrate::IngestError>(())
/// ```
#[derive(Debug)]
pub struct IngestChunks<'t> {
    tracker: &'t mut Tracker,
    /// `None` once finished.
    state: Option<Reading>,
    /// The last line while it is cut (or the whole page, when it is read whole).
    line: Vec<u8>,
    carried: Carried,
    /// The tracker's parser without the page-wide limits (applied here).
    parser: Parser,
    /// The page's bytes so far, and the body size limit.
    bytes: usize,
    body_limit: usize,
}

/// One per page, inside `IngestChunks`: boxing the large variant would allocate per page.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Reading {
    Lines(PageRead),
    /// Gathered, then read by `Tracker::ingest` (strict OpenMetrics).
    Whole(DateTime<Utc>),
}

impl Tracker {
    /// Starts reading a page taken at `at` as it arrives: push its chunks, then finish
    /// ([`IngestChunks`]).
    ///
    /// # Errors
    /// [`IngestError::NotAfterLast`] if `at` is not after the previous scrape; the other
    /// refusals of [`Tracker::ingest`] come from [`IngestChunks::finish`].
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// let at = chrono::DateTime::from_timestamp(5, 0).unwrap();
    /// let mut page = t.ingest_chunks(at)?;
    /// page.push(b"a_total 1\nb_to".as_slice());
    /// page.push("tal 2\n");
    /// assert_eq!(page.finish()?.samples, 2);
    /// assert!(t.ingest_chunks(at).is_err(), "not after the last scrape");
    /// # Ok::<(), promrate::IngestError>(())
    /// ```
    pub fn ingest_chunks(&mut self, at: DateTime<Utc>) -> Result<IngestChunks<'_>, IngestError> {
        let limits = self.parser.limits();
        let openmetrics = matches!(self.parser.format(), Format::OpenMetrics | Format::OpenMetrics2);
        let whole = openmetrics && self.parser.strict(true) == self.parser;
        let state = if whole {
            self.check_after_last(at)?;
            Reading::Whole(at)
        } else {
            let holding = limits != Limits::NONE || self.max_series != usize::MAX;
            let mut read = self.begin_page(at, holding, true)?;
            read.sample_limit = limits.samples;
            Reading::Lines(read)
        };
        let parser = self.parser.sample_limit(usize::MAX).body_size_limit(usize::MAX);
        let mut carried = std::mem::take(&mut self.carried);
        carried.clear();
        let mut line = std::mem::take(&mut self.line_buffer);
        line.clear();
        Ok(IngestChunks {
            tracker: self,
            state: Some(state),
            line,
            carried,
            parser,
            bytes: 0,
            body_limit: limits.body_size,
        })
    }

    /// Reads a page from `reader` as it arrives ([`Tracker::ingest_chunks`]), never
    /// holding it whole.
    ///
    /// # Errors
    /// [`ReadError::Ingest`] when the tracker refuses the scrape, as [`Tracker::ingest`]
    /// would; [`ReadError::Read`] when reading fails: the lines read before were recorded
    /// as the page (its last line, which may be cut, was not).
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// let at = chrono::DateTime::from_timestamp(5, 0).unwrap();
    /// let page: &[u8] = b"# TYPE a counter\na_total{x=\"1\"} 1\na_total{x=\"2\"} 2\n";
    /// let report = t.ingest_reader(page, at)?;
    /// assert_eq!(report.samples, 2);
    /// # Ok::<(), promrate::error::ReadError>(())
    /// ```
    pub fn ingest_reader(
        &mut self,
        mut reader: impl Read,
        at: DateTime<Utc>,
    ) -> Result<IngestReport, ReadError> {
        let mut chunks = self.ingest_chunks(at)?;
        let mut buffer = [0u8; 16 * 1024];
        loop {
            match reader.read(&mut buffer) {
                Ok(0) => return Ok(chunks.finish()?),
                Ok(n) => chunks.push(&buffer[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    chunks.discard_cut_line();
                    // The page as far as it was read; a refusal would add nothing to the
                    // reader's error.
                    let _ = chunks.finish();
                    return Err(ReadError::Read(e));
                }
            }
        }
    }
}

impl IngestChunks<'_> {
    /// Reads the next chunk of the page: its whole lines now, its cut last line when the
    /// rest arrives.
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// let mut page = t.ingest_chunks(chrono::DateTime::from_timestamp(5, 0).unwrap())?;
    /// "temp{room=\"é\"} 21\n".as_bytes().chunks(1).for_each(|byte| page.push(byte));
    /// page.finish()?;
    /// assert_eq!(t.get("temp", &[("room", "é")]).unwrap().last_value(), Some(21.0));
    /// # Ok::<(), promrate::IngestError>(())
    /// ```
    pub fn push(&mut self, chunk: impl AsRef<[u8]>) {
        let mut chunk = chunk.as_ref();
        self.bytes = self.bytes.saturating_add(chunk.len());
        match self.state {
            Some(Reading::Lines(_)) if self.bytes <= self.body_limit => {}
            Some(Reading::Whole(_)) => return self.line.extend_from_slice(chunk),
            // Over the body size limit: the page is refused whole, its size counted.
            _ => return self.line = Vec::new(),
        }
        if !self.line.is_empty() {
            let Some(end) = memchr::memchr(b'\n', chunk) else {
                return self.line.extend_from_slice(chunk);
            };
            self.line.extend_from_slice(&chunk[..=end]);
            chunk = &chunk[end + 1..];
            let line = std::mem::take(&mut self.line);
            self.read_bytes(&line);
            self.line = line;
            self.line.clear();
        }
        match memchr::memrchr(b'\n', chunk) {
            Some(end) => {
                self.read_bytes(&chunk[..=end]);
                self.line.extend_from_slice(&chunk[end + 1..]);
            }
            None => self.line.extend_from_slice(chunk),
        }
    }

    /// Leaves the page's last line unread if it has no newline yet: for a body that was, or
    /// may have been, cut short (a connection that closed early; a body that does not end
    /// with the newline every format ends its last line with), whose last line may be cut
    /// inside its value (`12` of `1234`). [`IngestChunks::finish`] then ends the page at
    /// its last newline. Returns the bytes left unread (0 when the page ends with a
    /// newline).
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// let mut page = t.ingest_chunks(chrono::DateTime::from_timestamp(5, 0).unwrap())?;
    /// page.push("a_total 1\nb_total 12");
    /// assert_eq!(page.discard_cut_line(), 10);
    /// assert_eq!(page.finish()?.samples, 1);
    /// assert!(t.get("b_total", &[]).is_none());
    /// # Ok::<(), promrate::IngestError>(())
    /// ```
    pub fn discard_cut_line(&mut self) -> usize {
        // A page gathered whole keeps all its lines here; one read as it arrives, only the
        // cut one.
        let kept = memchr::memrchr(b'\n', &self.line).map_or(0, |i| i + 1);
        let cut = self.line.len() - kept;
        self.line.truncate(kept);
        cut
    }

    /// Whole lines of the page as bytes: the UTF-8 ones are read, each other one is a bad
    /// line ([`ParseErrorKind::InvalidUtf8`]).
    fn read_bytes(&mut self, mut bytes: &[u8]) {
        loop {
            let error = match std::str::from_utf8(bytes) {
                Ok(text) => return self.read_text(text),
                Err(error) => error,
            };
            let bad = error.valid_up_to();
            let start = memchr::memrchr(b'\n', &bytes[..bad]).map_or(0, |i| i + 1);
            let end = memchr::memchr(b'\n', &bytes[bad..]).map_or(bytes.len(), |i| bad + i + 1);
            let (good, line) = (&bytes[..start], &bytes[start..end]);
            // Valid up to `bad`, so up to `start` too.
            self.read_text(std::str::from_utf8(good).unwrap_or_default());
            self.bad_line(line, bad - start);
            bytes = &bytes[end..];
        }
    }

    /// A line that is not UTF-8 (its first invalid byte at `bad`).
    fn bad_line(&mut self, line: &[u8], bad: usize) {
        let Some(Reading::Lines(read)) = &mut self.state else {
            return;
        };
        if read.past_sample_limit() {
            let first = line.iter().find(|b| !matches!(b, b' ' | b'\t' | b'\r'));
            read.samples += usize::from(first.is_some_and(|&b| b != b'#'));
        } else {
            let column = String::from_utf8_lossy(&line[..bad]).chars().count() + 1;
            let error = ParseError::new(read.lines_before + 1, column, ParseErrorKind::InvalidUtf8);
            read.report.bad_lines += 1;
            read.report.first_error.get_or_insert(error);
        }
        read.bytes_before += line.len();
        read.lines_before += usize::from(line.last() == Some(&b'\n'));
    }

    /// Whole lines of the page (or its last line).
    fn read_text(&mut self, text: &str) {
        let Some(Reading::Lines(read)) = &mut self.state else {
            return;
        };
        if text.is_empty() {
            return;
        }
        if read.past_sample_limit() {
            // The page ends at the sample over the limit; the rest is only counted.
            read.samples += sample_lines(text);
            read.bytes_before += text.len();
            read.lines_before += memchr::memchr_iter(b'\n', text.as_bytes()).count();
            return;
        }
        self.tracker
            .read_lines(read, &mut self.carried, text, self.parser, true);
    }

    /// Reads the page's last line and ends the page, as [`Tracker::ingest`] ends it.
    ///
    /// # Errors
    /// [`Tracker::ingest`]'s: nothing is recorded when the scrape is refused.
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// t.parser(promrate::Parser::default().sample_limit(1));
    /// let mut page = t.ingest_chunks(chrono::DateTime::from_timestamp(5, 0).unwrap())?;
    /// page.push("a 1\nb 2\nc 3");
    /// let refused = page.finish().unwrap_err();
    /// assert_eq!(refused.to_string(), "scrape refused: line 2, column 1: 3 samples, over the sample_limit of 1");
    /// assert!(t.is_empty());
    /// # Ok::<(), promrate::IngestError>(())
    /// ```
    pub fn finish(mut self) -> Result<IngestReport, IngestError> {
        self.end()
    }

    fn end(&mut self) -> Result<IngestReport, IngestError> {
        let line = std::mem::take(&mut self.line);
        self.read_bytes(&line);
        let gathered = matches!(self.state, Some(Reading::Whole(_)));
        let result = match self.state.take() {
            Some(Reading::Lines(read)) if self.bytes > self.body_limit => {
                self.tracker.forget_page(read.before);
                let kind = ParseErrorKind::BodySizeLimit {
                    limit: self.body_limit,
                    size: self.bytes,
                };
                Err(IngestError::Limit(ParseError::new(1, 1, kind)))
            }
            Some(Reading::Lines(read)) => {
                let horizon = self
                    .tracker
                    .scrapes
                    .saturating_sub(u64::from(self.tracker.stale_after));
                self.tracker.page_names.forget_before(horizon);
                self.tracker.finish_page(read, None)
            }
            Some(Reading::Whole(at)) => ingest_gathered(self.tracker, &line, at),
            None => return Ok(IngestReport::default()),
        };
        // The buffers' capacity is kept for the next page (a line's worth, not a page's).
        if !gathered {
            self.tracker.line_buffer = line;
        }
        self.tracker.carried = std::mem::take(&mut self.carried);
        result
    }
}

/// A page gathered whole (strict OpenMetrics) read by [`Tracker::ingest`]: a line that is
/// not UTF-8 is a bad line ([`ParseErrorKind::InvalidUtf8`], as line by line), never read
/// with its bytes replaced (a label value read with U+FFFD would be another series, and
/// nothing would say so). The line stays, blank, so that the lines keep their numbers and
/// the parser refuses it; the report then names the bytes as the reason.
fn ingest_gathered(
    tracker: &mut Tracker,
    page: &[u8],
    at: DateTime<Utc>,
) -> Result<IngestReport, IngestError> {
    if let Ok(text) = std::str::from_utf8(page) {
        return tracker.ingest(text, at);
    }
    let mut text = String::with_capacity(page.len());
    let mut not_utf8 = Vec::new();
    for (index, line) in page.split_inclusive(|&b| b == b'\n').enumerate() {
        match std::str::from_utf8(line) {
            Ok(line) => text.push_str(line),
            Err(error) => {
                let valid = &line[..error.valid_up_to()];
                let column = String::from_utf8_lossy(valid).chars().count() + 1;
                not_utf8.push((index + 1, column));
                text.push('\n');
            }
        }
    }
    let mut report = tracker.ingest(&text, at)?;
    if let Some(first) = report.first_error.as_mut() {
        if let Some(&(line, column)) = not_utf8.iter().find(|(line, _)| *line == first.line) {
            *first = ParseError::new(line, column, ParseErrorKind::InvalidUtf8);
        }
    }
    Ok(report)
}

impl Drop for IngestChunks<'_> {
    fn drop(&mut self) {
        if self.state.is_some() {
            let _ = self.end();
        }
    }
}
