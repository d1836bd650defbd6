//! The page iterator: [`Parser`] (format, limits, strictness), [`Format`], [`Entries`].

use super::entry::Entry;
use super::lexer::Dialect;
use super::limits::Limits;
use super::openmetrics::{self, Validator};
use super::sample::Sample;
use super::{metadata, sample_line};
use crate::error::{ParseError, ParseErrorKind};

/// The exposition formats a page is read as: Prometheus text (0.0.4 and 1.0.0), OpenMetrics
/// 1.0 and OpenMetrics 2.0.
///
/// # Example
/// ```
/// use promrate::Format;
/// assert_eq!(
///     Format::from_content_type("application/openmetrics-text; version=1.0.0; charset=utf-8"),
///     Format::OpenMetrics,
/// );
/// assert_eq!(Format::from_content_type("text/plain; version=0.0.4"), Format::PrometheusText);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Format {
    /// Prometheus text format 0.0.4, with the Prometheus 3 additions (quoted UTF-8 names).
    #[default]
    PrometheusText,
    /// OpenMetrics 1.0 text, fully validated.
    OpenMetrics,
    /// OpenMetrics 2.0 text (release candidate 0), fully validated: start timestamps
    /// (`st@`), composite values for histograms and summaries (native histograms too),
    /// several exemplars per sample, sample names equal to their family's. As its failure
    /// modes ask, a malformed exemplar does not take its sample down: the line's error
    /// comes first, then its sample without exemplars.
    ///
    /// ```
    /// use promrate::{Format, Parser};
    /// let page = "# TYPE c counter\nc_total 7 # {id=\"a\"} 0.5\n# EOF\n"; // no exemplar time
    /// let entries: Vec<_> = Parser::new(Format::OpenMetrics2).parse(page).collect();
    /// assert!(entries[1].as_ref().is_err_and(|e| (e.line, e.column) == (2, 25)));
    /// let sample = entries[2].as_ref().unwrap().as_sample().unwrap();
    /// assert_eq!((sample.value(), sample.exemplars().count()), (7.0, 0));
    /// ```
    OpenMetrics2,
}

impl Format {
    /// Picks the format from an HTTP `Content-Type` header value. Anything that is not
    /// `application/openmetrics-text` is read as the Prometheus text format (0.0.4 and
    /// 1.0.0 alike), which is what Prometheus itself falls back to; OpenMetrics is 1.0
    /// unless the `version` parameter says 2.x (the specification's default is 1.0.0).
    ///
    /// # Example
    /// ```
    /// use promrate::Format;
    /// assert_eq!(Format::from_content_type(""), Format::PrometheusText);
    /// assert_eq!(Format::from_content_type("text/plain; version=1.0.0; escaping=allow-utf-8"), Format::PrometheusText);
    /// assert_eq!(
    ///     Format::from_content_type("application/openmetrics-text; version=2.0.0; charset=utf-8"),
    ///     Format::OpenMetrics2,
    /// );
    /// ```
    pub fn from_content_type(content_type: &str) -> Format {
        let mut parts = content_type.split(';');
        let media = parts.next().unwrap_or("").trim();
        if !media.eq_ignore_ascii_case("application/openmetrics-text") {
            return Format::PrometheusText;
        }
        let version2 = parts.any(|param| {
            let (key, value) = param.split_once('=').unwrap_or((param, ""));
            key.trim().eq_ignore_ascii_case("version") && value.trim().trim_matches('"').starts_with("2.")
        });
        if version2 {
            Format::OpenMetrics2
        } else {
            Format::OpenMetrics
        }
    }
}

/// Parser configuration: the format, strictness and the limits a caller opts into. Cheap
/// to copy.
///
/// No limit is set by default: no page Prometheus' own text parser accepts is refused for
/// its size (one thing it takes is not read: a raw line break inside a quoted label value,
/// which the format forbids and its reference parser refuses).
/// The limits are named after Prometheus' scrape-config limits, so an operator recognises
/// them; each has its own [`ParseErrorKind`] naming the limit, the value seen, and (through
/// [`ParseError`]'s line and column) where.
///
/// # Example
/// ```
/// use promrate::{Format, Parser, error::ParseErrorKind};
/// let parser = Parser::new(Format::PrometheusText).label_limit(1);
/// let err = parser.parse("a{x=\"1\",y=\"2\",z=\"3\"} 1\n").next().unwrap().unwrap_err();
/// assert_eq!(err.kind, ParseErrorKind::LabelLimit { limit: 1, labels: 3 });
/// assert_eq!((err.line, err.column), (1, 9));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parser {
    format: Format,
    limits: Limits,
    strict: bool,
}

impl Default for Parser {
    fn default() -> Self {
        Parser::new(Format::PrometheusText)
    }
}

impl Parser {
    /// A parser for `format`, strict, with no limit.
    ///
    /// # Example
    /// ```
    /// let parser = promrate::Parser::new(promrate::Format::OpenMetrics);
    /// assert_eq!(parser.parse("a 1\n# EOF\n").count(), 2);
    /// ```
    pub fn new(format: Format) -> Self {
        Parser {
            format,
            limits: Limits::NONE,
            strict: true,
        }
    }

    /// Lines longer than `bytes` (without the newline) are errors
    /// ([`ParseErrorKind::LineTooLong`]). No limit by default: the page is already in
    /// memory, so a long line costs nothing (Prometheus has no such limit either).
    ///
    /// # Example
    /// ```
    /// let parser = promrate::Parser::default().max_line_len(4);
    /// let err = parser.parse("abcde 1").next().unwrap().unwrap_err();
    /// assert_eq!(err.kind, promrate::error::ParseErrorKind::LineTooLong { limit: 4, length: 7 });
    /// ```
    pub fn max_line_len(mut self, bytes: usize) -> Self {
        self.limits.line_length = bytes;
        self
    }

    /// Prometheus' `label_limit`: a sample with more than `count` labels is an error
    /// ([`ParseErrorKind::LabelLimit`]).
    ///
    /// # Example
    /// ```
    /// let parser = promrate::Parser::default().label_limit(0);
    /// assert!(parser.parse("a{b=\"c\"} 1").next().unwrap().is_err());
    /// assert!(parser.parse("a 1").next().unwrap().is_ok());
    /// ```
    pub fn label_limit(mut self, count: usize) -> Self {
        self.limits.labels = count;
        self
    }

    /// Prometheus' `label_name_length_limit`: a label name longer than `bytes` is an error
    /// ([`ParseErrorKind::LabelNameLengthLimit`]).
    ///
    /// # Example
    /// ```
    /// let parser = promrate::Parser::default().label_name_length_limit(3);
    /// let err = parser.parse("a{abcd=\"x\"} 1").next().unwrap().unwrap_err();
    /// assert_eq!(err.kind, promrate::error::ParseErrorKind::LabelNameLengthLimit { limit: 3, length: 4 });
    /// assert_eq!(err.column, 3);
    /// ```
    pub fn label_name_length_limit(mut self, bytes: usize) -> Self {
        self.limits.label_name_length = bytes;
        self
    }

    /// Prometheus' `label_value_length_limit`: a label value longer than `bytes` once
    /// unescaped is an error ([`ParseErrorKind::LabelValueLengthLimit`]).
    ///
    /// # Example
    /// ```
    /// let parser = promrate::Parser::default().label_value_length_limit(2);
    /// assert!(parser.parse("a{b=\"\\n\\n\"} 1").next().unwrap().is_ok()); // two bytes unescaped
    /// let err = parser.parse("a{b=\"xyz\"} 1").next().unwrap().unwrap_err();
    /// assert_eq!(err.kind, promrate::error::ParseErrorKind::LabelValueLengthLimit { limit: 2, length: 3 });
    /// ```
    pub fn label_value_length_limit(mut self, bytes: usize) -> Self {
        self.limits.label_value_length = bytes;
        self
    }

    /// Prometheus' `sample_limit`: the sample after the `count`-th is an error
    /// ([`ParseErrorKind::SampleLimit`]) and ends the page, as Prometheus fails the whole
    /// scrape.
    ///
    /// # Example
    /// ```
    /// let parser = promrate::Parser::default().sample_limit(2);
    /// let entries: Vec<_> = parser.parse("a 1\nb 2\nc 3\nd 4\n").collect();
    /// assert_eq!(entries.len(), 3);
    /// let err = entries[2].as_ref().unwrap_err();
    /// assert_eq!((err.line, &err.kind), (3, &promrate::error::ParseErrorKind::SampleLimit { limit: 2, samples: 4 }));
    /// ```
    pub fn sample_limit(mut self, count: usize) -> Self {
        self.limits.samples = count;
        self
    }

    /// Prometheus' `body_size_limit`: a page larger than `bytes` is refused whole with one
    /// error ([`ParseErrorKind::BodySizeLimit`]) before anything is read.
    ///
    /// # Example
    /// ```
    /// let parser = promrate::Parser::default().body_size_limit(3);
    /// let entries: Vec<_> = parser.parse("a 1\n").collect();
    /// assert_eq!(entries.len(), 1);
    /// assert_eq!(entries[0].as_ref().unwrap_err().kind, promrate::error::ParseErrorKind::BodySizeLimit { limit: 3, size: 4 });
    /// ```
    pub fn body_size_limit(mut self, bytes: usize) -> Self {
        self.limits.body_size = bytes;
        self
    }

    /// Strict (the default) refuses escapes other than `\\`, `\"` and `\n` in Prometheus-text
    /// label values, as the format's specification and Go's reference `expfmt` do, and in
    /// OpenMetrics applies every rule that spans lines (families, metadata placement, name
    /// clashes, label groups, timestamps, histogram consistency, `# EOF`).
    ///
    /// Lenient keeps unknown escapes as written, as the Prometheus server does, and in
    /// OpenMetrics checks each line on its own (and that nothing follows `# EOF`), which is
    /// about what Prometheus' own OpenMetrics parser does; a malformed exemplar is then
    /// reported and its sample kept, as in 2.0 strict or not. OpenMetrics always keeps unknown
    /// escapes (its conformance suite requires accepting `\z`).
    ///
    /// Either way, Prometheus-text lines that end with `\r\n` (Windows line endings) read
    /// as if they ended with `\n`, as prometheus_client's parser reads them (Prometheus'
    /// own refuses the page). OpenMetrics ends lines with `\n` alone: a carriage return
    /// before it is [`ParseErrorKind::CarriageReturn`](crate::error::ParseErrorKind::CarriageReturn),
    /// except in a HELP text, where it is text.
    ///
    /// # Example
    /// ```
    /// let text = "a{b=\"\\z\"} 1";
    /// assert!(promrate::Parser::default().parse(text).next().unwrap().is_err());
    /// assert!(promrate::Parser::default().strict(false).parse(text).next().unwrap().is_ok());
    /// ```
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// The limits in force (for the tracker, which refuses a scrape over any of them).
    pub(crate) fn limits(&self) -> Limits {
        self.limits
    }

    /// The configured format.
    ///
    /// # Example
    /// ```
    /// assert_eq!(promrate::Parser::default().format(), promrate::Format::PrometheusText);
    /// ```
    pub fn format(&self) -> Format {
        self.format
    }

    /// This parser for another format, its limits and strictness kept.
    pub(crate) fn with_format(mut self, format: Format) -> Self {
        self.format = format;
        self
    }

    /// Iterates the entries of `text`. Nothing is allocated per entry; samples borrow
    /// from `text`.
    ///
    /// # Example
    /// ```
    /// let parser = promrate::Parser::default();
    /// let samples = parser.parse("a 1\nb 2\n").filter_map(|e| e.ok()?.into_sample()).count();
    /// assert_eq!(samples, 2);
    /// ```
    pub fn parse<'page>(&self, text: &'page str) -> Entries<'page> {
        let openmetrics = self.format != Format::PrometheusText;
        let version2 = self.format == Format::OpenMetrics2;
        // A page over the body size limit is refused whole: one error, nothing read.
        let refused = (text.len() > self.limits.body_size).then(|| {
            let (limit, size) = (self.limits.body_size, text.len());
            ParseError::new(1, 1, ParseErrorKind::BodySizeLimit { limit, size })
        });
        let whole = refused.is_none();
        let text = if whole { text } else { "" };
        Entries {
            text,
            refused,
            samples: 0,
            pos: 0,
            line: 0,
            config: *self,
            dialect: Dialect {
                openmetrics,
                version2,
                strict_escapes: self.strict && !openmetrics,
            },
            validator: if openmetrics && self.strict && whole {
                Some(Validator::new(version2))
            } else {
                None
            },
            pending: None,
            finished: false,
            recent: sample_line::RecentNames::default(),
            recent_family: "",
            ended: false,
        }
    }
}

/// Parses `text` in the Prometheus text format 0.0.4 with default limits.
///
/// # Example
/// ```
/// let text = "# HELP vllm:generation_tokens_total Number of generation tokens processed.\n\
///             # TYPE vllm:generation_tokens_total counter\n\
///             vllm:generation_tokens_total{engine=\"0\",model_name=\"llama\"} 7852.0\n";
/// let total: f64 = promrate::parse(text)
///     .filter_map(|entry| entry.ok()?.into_sample())
///     .map(|sample| sample.value())
///     .sum();
/// assert_eq!(total, 7852.0);
/// ```
pub fn parse(text: &str) -> Entries<'_> {
    Parser::new(Format::PrometheusText).parse(text)
}

/// Lines a caller recognises before they are parsed: the tracker's position cache, where
/// steady pages repeat their series. Plain iteration recognises none ([`Unknown`]).
pub(crate) trait KnownLines<'page> {
    /// `line` is the rest of the page from the start of a line that may be the next sample
    /// (Prometheus text). If the caller knows that it begins with the name and labels of a
    /// sample it read before, byte for byte, it returns their length; that sample's value
    /// and timestamp are then read without parsing them again, and handed to
    /// `known_sample` (on anything unusual the line is parsed as usual).
    fn known_prefix(&mut self, line: &'page str) -> Option<usize>;
    /// The value and timestamp of the line `known_prefix` recognised.
    fn known_sample(&mut self, value: f64, timestamp_ms: Option<i64>);
}

/// What [`Entries::visit`] reports to: the known lines, and every other entry or error.
pub(crate) trait Visitor<'page>: KnownLines<'page> {
    /// Every entry or error that is not a known line, in order.
    fn entry(&mut self, entry: Result<&Entry<'page>, &ParseError>);
}

/// Iteration's [`KnownLines`]: it knows no line, so every sample is parsed and yielded.
struct Unknown;

impl KnownLines<'_> for Unknown {
    #[inline(always)]
    fn known_prefix(&mut self, _: &str) -> Option<usize> {
        None
    }
    #[inline(always)]
    fn known_sample(&mut self, _: f64, _: Option<i64>) {}
}

/// Iterator over the entries of a page: `Result<Entry, ParseError>`, one per non-blank line
/// (plus, in OpenMetrics, errors about whole families). After an error it resumes at the
/// next line, so callers can count bad lines and keep the good ones.
///
/// # Example
/// ```
/// let results: Vec<_> = promrate::parse("a 1\nb{ 2\nc 3\n").collect();
/// assert_eq!(results.len(), 3);
/// assert!(results[1].is_err());
/// assert_eq!(results[2].as_ref().unwrap().as_sample().unwrap().name(), "c");
/// ```
#[derive(Debug, Clone)]
pub struct Entries<'page> {
    text: &'page str,
    pos: usize,
    line: usize,
    config: Parser,
    dialect: Dialect,
    validator: Option<Validator<'page>>,
    /// An entry held back while an error about the family it closed is reported first.
    pending: Option<Entry<'page>>,
    /// The error that refuses the whole page (over the body size limit), not yet yielded.
    refused: Option<ParseError>,
    /// Samples yielded so far (for the sample limit).
    samples: usize,
    finished: bool,
    /// Names the fast paths checked on earlier lines (see `sample_fast`).
    recent: sample_line::RecentNames<'page>,
    /// The name of the last OpenMetrics `# HELP` or `# TYPE` line the metadata fast path
    /// read: the `# TYPE` after a `# HELP` repeats it, and then needs no character check.
    recent_family: &'page str,
    /// An OpenMetrics `# EOF` was read without the validator (lenient): the page ends
    /// there, and a line after it is an error, as in Prometheus' parser (which fails the
    /// scrape), not more samples.
    ended: bool,
}

impl<'page> Entries<'page> {
    /// The 1-based number of the line the last entry came from.
    ///
    /// # Example
    /// ```
    /// let mut entries = promrate::parse("\n\na 1\n");
    /// entries.next();
    /// assert_eq!(entries.line(), 3);
    /// ```
    pub fn line(&self) -> usize {
        self.line
    }

    /// Whether an OpenMetrics page's `# EOF` was read: nothing may follow it.
    fn after_eof(&self) -> bool {
        self.ended || self.validator.as_ref().is_some_and(Validator::eof_seen)
    }

    /// Reads `text` as the lines after an OpenMetrics page's `# EOF` if `ended` (a page
    /// read in batches, each parsed on its own: the tracker's chunks).
    pub(crate) fn after_page_end(mut self, ended: bool) -> Self {
        self.ended |= ended && self.dialect.openmetrics;
        self
    }

    fn error_at(&self, line_text: &str, offset: usize, kind: ParseErrorKind) -> ParseError {
        let prefix = line_text.get(..offset.min(line_text.len())).unwrap_or(line_text);
        ParseError::new(self.line, prefix.chars().count() + 1, kind)
    }

    fn end_of_input(&mut self) -> Option<Result<Entry<'page>, ParseError>> {
        if self.finished {
            return None;
        }
        let Some(validator) = self.validator.as_mut().filter(|v| !v.eof_seen()) else {
            self.finished = true;
            return None;
        };
        // Errors at the end point just past the last character of the last line.
        let body = self.text.strip_suffix('\n').unwrap_or(self.text);
        let last_line = body.rsplit('\n').next().unwrap_or("");
        let (line, column) = (self.line.max(1), last_line.chars().count() + 1);
        // The last family's error first (closing it again is a no-op); then the missing EOF.
        let kind = match validator.finish() {
            Err(kind) => kind,
            Ok(()) => {
                self.finished = true;
                ParseErrorKind::MissingEof
            }
        };
        Some(Err(ParseError::new(line, column, kind)))
    }

    /// Whether a carriage return after `line` (which lacks it) is part of its text: a HELP
    /// text's or a comment's last character, as Prometheus reads it.
    #[cold]
    fn return_is_text(&self, line: &str) -> bool {
        let openmetrics = self.dialect.openmetrics;
        let first = line.bytes().find(|b| openmetrics || !matches!(b, b' ' | b'\t'));
        first == Some(b'#')
            && matches!(
                metadata::metadata(line, openmetrics),
                Ok(Entry::Help { .. } | Entry::Comment(_))
            )
    }

    fn parse_line(&mut self, line_text: &'page str) -> Option<Result<Entry<'page>, ParseError>> {
        let openmetrics = self.dialect.openmetrics;
        if line_text.len() > self.config.limits.line_length {
            let kind = ParseErrorKind::LineTooLong {
                limit: self.config.limits.line_length,
                length: line_text.len(),
            };
            return Some(Err(ParseError::new(self.line, 1, kind)));
        }
        if self.after_eof() {
            return Some(Err(ParseError::new(self.line, 1, ParseErrorKind::TextAfterEof)));
        }
        let bytes = line_text.as_bytes();
        let first = if openmetrics {
            bytes.first().copied()
        } else {
            bytes.iter().copied().find(|b| !matches!(b, b' ' | b'\t'))
        };
        let parsed = match first {
            None if openmetrics => {
                return Some(Err(ParseError::new(self.line, 1, ParseErrorKind::BlankLine)))
            }
            None => return None,
            Some(b'#') => metadata::metadata(line_text, openmetrics),
            Some(_) => sample_line::sample(line_text, self.dialect, &self.config.limits).map(Entry::Sample),
        };
        let entry = match parsed {
            Ok(entry) => entry,
            Err((offset, kind)) => {
                let error = self.error_at(line_text, offset, kind);
                let kept = match first {
                    Some(b'#') => None,
                    _ => self.sample_before_exemplars(line_text, offset),
                };
                let Some(sample) = kept else {
                    return Some(Err(error));
                };
                // The exemplars' error first, then the sample, through the rules across
                // lines; one the rules refuse is refused as any other.
                return match self.validated(line_text, Entry::Sample(sample)) {
                    Some(Ok(entry)) => {
                        self.pending = Some(entry);
                        Some(Err(error))
                    }
                    other => other,
                };
            }
        };
        self.validated(line_text, entry)
    }

    /// OpenMetrics 2.0's failure modes: "failures specific to exemplars should not cause the
    /// entire exposition to fail. If an exemplar is malformed or invalid, it should be
    /// dropped or ignored, allowing the valid metric data to be ingested." The sample of a
    /// line refused at `error_at`, read without its exemplars, when that is where the
    /// error lies: the line up to the first ` # ` (outside a quoted string: the text
    /// before it reads as a sample) at or before the error. OpenMetrics 1.0 says no such
    /// thing: its lenient reading keeps the sample too, as Prometheus' parser does.
    #[cold]
    fn sample_before_exemplars(&self, line: &'page str, error_at: usize) -> Option<Sample<'page>> {
        let lenient_v1 = self.dialect.openmetrics && !self.config.strict;
        if !self.dialect.version2 && !lenient_v1 {
            return None;
        }
        memchr::memmem::find_iter(line.as_bytes(), b" # ")
            .take_while(|&hash| hash <= error_at)
            .find_map(|hash| sample_line::sample(&line[..hash], self.dialect, &self.config.limits).ok())
    }

    /// An entry read from `line_text`, through OpenMetrics' rules across lines (when they
    /// apply): the fast and the general path alike.
    #[inline(always)]
    fn validated(
        &mut self,
        line_text: &'page str,
        entry: Entry<'page>,
    ) -> Option<Result<Entry<'page>, ParseError>> {
        let Some(validator) = self.validator.as_mut() else {
            self.ended |= matches!(entry, Entry::Eof);
            return Some(Ok(entry));
        };
        match validator.check(&entry, line_text) {
            Ok(()) => Some(Ok(entry)),
            Err(openmetrics::Rejection::Line(offset, kind)) => {
                Some(Err(self.error_at(line_text, offset, kind)))
            }
            Err(openmetrics::Rejection::Earlier(kind)) => {
                self.pending = Some(entry);
                Some(Err(ParseError::new(self.line, 1, kind)))
            }
        }
    }
}

impl<'page> Entries<'page> {
    /// A sample of the OpenMetrics fast path, through the rules across lines: checked where
    /// it lies and moved into its entry once (an entry is large enough for every move to
    /// be a `memcpy` call, which cost a third of a sample's time).
    #[inline(always)]
    fn validated_sample(
        &mut self,
        line_text: &'page str,
        sample: Sample<'page>,
    ) -> Option<Result<Entry<'page>, ParseError>> {
        let repeated = self.recent.repeated;
        let verdict = match self.validator.as_mut() {
            Some(validator) => validator.fast_sample(&sample, repeated),
            None => Ok(()),
        };
        match verdict {
            Ok(()) => self.counted(Entry::Sample(sample)),
            Err(openmetrics::Rejection::Line(offset, kind)) => {
                Some(Err(self.error_at(line_text, offset, kind)))
            }
            Err(openmetrics::Rejection::Earlier(kind)) => {
                self.pending = Some(Entry::Sample(sample));
                Some(Err(ParseError::new(self.line, 1, kind)))
            }
        }
    }

    /// The next entry or error, the one dispatch of every line: what the caller already
    /// knows (`known`), then the sample fast path, then the metadata fast path, then the
    /// general path; the limits and OpenMetrics' cross-line rules applied once, here.
    #[inline(always)]
    fn step(&mut self, known: &mut impl KnownLines<'page>) -> Option<Result<Entry<'page>, ParseError>> {
        if self.refused.is_some() {
            self.finished = true;
            return self.refused.take().map(Err);
        }
        if let Some(entry) = self.pending.take() {
            // A sample held back behind its family's error counts like any other.
            return match entry {
                Entry::Sample(_) => self.counted(entry),
                _ => Some(Ok(entry)),
            };
        }
        if let Some(kind) = self.validator.as_mut().and_then(Validator::take_deferred) {
            return Some(Err(ParseError::new(self.line, 1, kind)));
        }
        loop {
            let rest = match self.text.get(self.pos..) {
                Some(rest) if !rest.is_empty() => rest,
                _ => return self.end_of_input(),
            };
            if !self.dialect.openmetrics {
                let limits = &self.config.limits;
                if let Some((value, timestamp_ms, len)) = known
                    .known_prefix(rest)
                    .and_then(|key_len| sample_line::value_and_timestamp(rest, key_len, limits))
                {
                    self.next_line(len);
                    // The fast paths' name memory is only a shortcut; forget it.
                    self.recent.metric = "";
                    if let Some(over) = self.count_sample() {
                        return Some(Err(over));
                    }
                    known.known_sample(value, timestamp_ms);
                    continue;
                }
                if let Some((sample, len)) = sample_line::sample_fast(rest, &mut self.recent, limits, false) {
                    self.next_line(len);
                    return self.counted(Entry::Sample(sample));
                }
                if rest.starts_with('#') {
                    if let Some((entry, len)) =
                        metadata::metadata_fast(rest, self.recent.metric, limits.line_length)
                    {
                        self.next_line(len);
                        if let Entry::Help { name, .. } | Entry::Type { name, .. } = entry {
                            self.recent.metric = name;
                        }
                        return Some(Ok(entry));
                    }
                }
            }
            if self.dialect.openmetrics && !self.after_eof() {
                // The common shape, read straight from the page; the rules across lines
                // still apply to it (a sample after `# EOF` takes the general path's error).
                let limits = &self.config.limits;
                if let Some((sample, len)) = sample_line::sample_fast(rest, &mut self.recent, limits, true) {
                    self.next_line(len);
                    return self.validated_sample(&rest[..len], sample);
                }
                if rest.starts_with('#') {
                    if let Some((entry, len)) =
                        metadata::metadata_fast_openmetrics(rest, self.recent_family, limits.line_length)
                    {
                        self.next_line(len);
                        if let Entry::Help { name, .. } | Entry::Type { name, .. } = entry {
                            self.recent_family = name;
                        }
                        return self.validated(&rest[..len], entry);
                    }
                }
            }
            let len = memchr::memchr(b'\n', rest.as_bytes()).unwrap_or(rest.len());
            self.next_line(len);
            let mut line_text = &rest[..len];
            if let Some(without) = line_text.strip_suffix('\r') {
                // Windows line endings: the text format reads the line without the return.
                // OpenMetrics refuses it, except where a line's text may hold any
                // character: a HELP text.
                if !self.dialect.openmetrics {
                    line_text = without;
                } else if !self.return_is_text(without) {
                    let kind = ParseErrorKind::CarriageReturn;
                    return Some(Err(self.error_at(line_text, len - 1, kind)));
                }
            }
            match self.parse_line(line_text) {
                Some(Ok(Entry::Sample(sample))) => return self.counted(Entry::Sample(sample)),
                Some(other) => return Some(other),
                None => {}
            }
        }
    }

    /// Steps past a line of `len` bytes and its newline.
    #[inline(always)]
    fn next_line(&mut self, len: usize) {
        self.pos += len + 1;
        self.line += 1;
    }

    /// A sample, or past the sample limit the error that ends the page.
    #[inline(always)]
    fn counted(&mut self, sample: Entry<'page>) -> Option<Result<Entry<'page>, ParseError>> {
        match self.count_sample() {
            Some(over) => Some(Err(over)),
            None => Some(Ok(sample)),
        }
    }

    /// Counts a sample against the sample limit (nothing to do without one); past it, the
    /// error that ends the page.
    #[inline(always)]
    fn count_sample(&mut self) -> Option<ParseError> {
        if self.config.limits.samples == usize::MAX {
            return None;
        }
        self.samples += 1;
        if self.samples <= self.config.limits.samples {
            return None;
        }
        Some(self.over_sample_limit())
    }

    /// Prometheus fails the whole scrape: nothing after this sample is yielded. The error
    /// says how many samples the page holds, counting the sample lines after this one
    /// (lines neither blank nor comments) without parsing them.
    #[cold]
    fn over_sample_limit(&mut self) -> ParseError {
        let rest = self.text.get(self.pos..).unwrap_or("");
        let more = rest
            .split('\n')
            .filter(|line| {
                !matches!(
                    line.trim_start_matches([' ', '\t', '\r']).as_bytes().first(),
                    None | Some(b'#')
                )
            })
            .count();
        let (limit, samples) = (self.config.limits.samples, self.samples + more);
        self.pos = self.text.len();
        self.pending = None;
        self.finished = true;
        ParseError::new(self.line, 1, ParseErrorKind::SampleLimit { limit, samples })
    }

    /// Hands every entry or error to `v`, in order, as iterating would yield them, except
    /// the lines whose name and labels `v` already knows (`KnownLines::known_prefix`):
    /// only their value and timestamp are read.
    #[inline]
    pub(crate) fn visit(mut self, v: &mut impl Visitor<'page>) {
        while let Some(result) = self.step(v) {
            v.entry(result.as_ref());
        }
    }
}

impl<'page> Iterator for Entries<'page> {
    type Item = Result<Entry<'page>, ParseError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.step(&mut Unknown)
    }
}

impl std::iter::FusedIterator for Entries<'_> {}
