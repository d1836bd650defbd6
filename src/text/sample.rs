//! The items a page yields: samples, exemplars, metadata entries, metric types.

use std::borrow::Cow;
use std::fmt;

use chrono::{DateTime, Utc};

use super::escape::{unescape, UnescapedBytes};
use super::labels::Labels;

/// One line of an exposition page, as the parser yields it.
///
/// # Example
/// ```
/// use promrate::{Entry, MetricType};
/// let text = "# TYPE up gauge\nup 1\n";
/// let entries: Vec<Entry> = promrate::parse(text).collect::<Result<_, _>>()?;
/// assert!(matches!(entries[0], Entry::Type { name: "up", kind: MetricType::Gauge }));
/// assert_eq!(entries[1].as_sample().unwrap().value(), 1.0);
/// # Ok::<(), promrate::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Entry<'page> {
    /// A sample line.
    Sample(Sample<'page>),
    /// `# HELP name text`.
    Help {
        /// Family name.
        name: &'page str,
        /// Help text, still escaped.
        text: HelpText<'page>,
    },
    /// `# TYPE name kind`.
    Type {
        /// Family name.
        name: &'page str,
        /// Declared type.
        kind: MetricType,
    },
    /// `# UNIT name unit` (OpenMetrics).
    Unit {
        /// Family name.
        name: &'page str,
        /// Unit, e.g. `seconds`; may be empty.
        unit: &'page str,
    },
    /// Any other comment line (Prometheus text format), without the leading `#` and one
    /// following space.
    Comment(&'page str),
    /// `# EOF` (OpenMetrics).
    Eof,
}

impl<'page> Entry<'page> {
    /// The sample, if this entry is one.
    ///
    /// # Example
    /// ```
    /// let e = promrate::parse("a 1").next().unwrap()?;
    /// assert_eq!(e.as_sample().map(|s| s.name()), Some("a"));
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    pub fn as_sample(&self) -> Option<&Sample<'page>> {
        match self {
            Entry::Sample(sample) => Some(sample),
            _ => None,
        }
    }

    /// The sample, if this entry is one, by value.
    ///
    /// # Example
    /// ```
    /// let s = promrate::parse("a 1").next().unwrap()?.into_sample().unwrap();
    /// assert_eq!(s.value(), 1.0);
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    pub fn into_sample(self) -> Option<Sample<'page>> {
        match self {
            Entry::Sample(sample) => Some(sample),
            _ => None,
        }
    }
}

/// A metric family type, as declared by `# TYPE`.
///
/// # Example
/// ```
/// use promrate::MetricType;
/// assert_eq!(MetricType::from_name("gaugehistogram"), Some(MetricType::GaugeHistogram));
/// assert_eq!(MetricType::Counter.as_str(), "counter");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MetricType {
    /// Monotonic counter.
    Counter,
    /// Gauge.
    Gauge,
    /// Classic histogram (`_bucket`, `_sum`, `_count`).
    Histogram,
    /// OpenMetrics gauge histogram (`_bucket`, `_gsum`, `_gcount`).
    GaugeHistogram,
    /// Summary (quantiles, `_sum`, `_count`).
    Summary,
    /// OpenMetrics info (`_info`, value 1).
    Info,
    /// OpenMetrics state set (values 0 or 1).
    StateSet,
    /// `unknown` (OpenMetrics) or `untyped` (Prometheus text).
    Unknown,
}

impl MetricType {
    /// Parses a type word of either format (`untyped` and `unknown` both give `Unknown`).
    ///
    /// # Example
    /// ```
    /// assert_eq!(promrate::MetricType::from_name("untyped"), Some(promrate::MetricType::Unknown));
    /// assert_eq!(promrate::MetricType::from_name("Counter"), None);
    /// ```
    pub fn from_name(word: &str) -> Option<MetricType> {
        Some(match word {
            "counter" => MetricType::Counter,
            "gauge" => MetricType::Gauge,
            "histogram" => MetricType::Histogram,
            "gaugehistogram" => MetricType::GaugeHistogram,
            "summary" => MetricType::Summary,
            "info" => MetricType::Info,
            "stateset" => MetricType::StateSet,
            "unknown" | "untyped" => MetricType::Unknown,
            _ => return None,
        })
    }

    /// The OpenMetrics spelling of the type.
    ///
    /// # Example
    /// ```
    /// assert_eq!(promrate::MetricType::StateSet.as_str(), "stateset");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            MetricType::Counter => "counter",
            MetricType::Gauge => "gauge",
            MetricType::Histogram => "histogram",
            MetricType::GaugeHistogram => "gaugehistogram",
            MetricType::Summary => "summary",
            MetricType::Info => "info",
            MetricType::StateSet => "stateset",
            MetricType::Unknown => "unknown",
        }
    }
}

/// One sample: a name, labels, a value and an optional timestamp, all borrowed from the page.
///
/// # Example
/// ```
/// let s = promrate::parse("http_requests_total{code=\"200\"} 1027 1395066363000\n")
///     .next().unwrap()?.into_sample().unwrap();
/// assert_eq!(s.name(), "http_requests_total");
/// assert_eq!(s.value(), 1027.0);
/// assert_eq!(s.timestamp_ms(), Some(1_395_066_363_000));
/// assert_eq!(s.timestamp().unwrap().to_rfc3339(), "2014-03-17T14:26:03+00:00");
/// # Ok::<(), promrate::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Sample<'page> {
    pub(crate) name: &'page str,
    pub(crate) labels: Labels<'page>,
    pub(crate) value: f64,
    pub(crate) timestamp_ms: Option<i64>,
    /// The validated exemplar text from its `#` to the end of the line, parsed on request
    /// (keeps `Sample` small: it is moved once per line).
    pub(crate) exemplar: Option<&'page str>,
    /// The page text from the start of the name (or of the labels, for a quoted name) to
    /// the end of the labels: the same text always reads as the same name and labels.
    pub(crate) identity: &'page str,
    /// Whether `identity` begins its line and a space follows it (a line that begins with
    /// the same text and a space is the same series).
    pub(crate) identity_starts_line: bool,
}

impl<'page> Sample<'page> {
    /// The metric name (without quotes if it was quoted).
    ///
    /// # Example
    /// ```
    /// let s = promrate::parse("{\"http.requests\"} 1").next().unwrap()?.into_sample().unwrap();
    /// assert_eq!(s.name(), "http.requests");
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    pub fn name(&self) -> &'page str {
        self.name
    }

    /// A copy that owns its text ([`OwnedSample`](crate::OwnedSample)), to keep after the
    /// page is gone.
    ///
    /// # Example
    /// ```
    /// let owned = {
    ///     let page = String::from("up{job=\"a\"} 1\n");
    ///     promrate::parse(&page).next().unwrap()?.into_sample().unwrap().to_owned()
    /// };
    /// assert_eq!(owned.label("job"), Some("a"));
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    #[allow(clippy::wrong_self_convention)]
    pub fn to_owned(&self) -> crate::OwnedSample {
        crate::OwnedSample::from(*self)
    }

    /// The text of the name and labels, and whether it begins its line followed by a space
    /// (see the fields).
    pub(crate) fn identity(&self) -> (&'page str, bool) {
        (self.identity, self.identity_starts_line)
    }

    /// The labels, in input order.
    ///
    /// # Example
    /// ```
    /// let s = promrate::parse("a{b=\"c\"} 1").next().unwrap()?.into_sample().unwrap();
    /// assert_eq!(s.labels().len(), 1);
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    pub fn labels(&self) -> Labels<'page> {
        self.labels
    }

    /// The value.
    ///
    /// # Example
    /// ```
    /// let s = promrate::parse("a -Inf").next().unwrap()?.into_sample().unwrap();
    /// assert_eq!(s.value(), f64::NEG_INFINITY);
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    pub fn value(&self) -> f64 {
        self.value
    }

    /// The timestamp in milliseconds since the epoch; OpenMetrics float seconds are
    /// converted (rounded to the nearest millisecond, saturating at the `i64` range).
    ///
    /// # Example
    /// ```
    /// use promrate::{Format, Parser};
    /// let mut entries = Parser::new(Format::OpenMetrics).parse("a 1 1.5\n# EOF\n");
    /// let s = entries.next().unwrap()?.into_sample().unwrap();
    /// assert_eq!(s.timestamp_ms(), Some(1500));
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    pub fn timestamp_ms(&self) -> Option<i64> {
        self.timestamp_ms
    }

    /// The timestamp as a UTC date-time (`None` if absent or outside chrono's range).
    ///
    /// # Example
    /// ```
    /// let s = promrate::parse("a 1 0").next().unwrap()?.into_sample().unwrap();
    /// assert_eq!(s.timestamp().unwrap().timestamp(), 0);
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    pub fn timestamp(&self) -> Option<DateTime<Utc>> {
        self.timestamp_ms.and_then(DateTime::from_timestamp_millis)
    }

    /// The exemplar attached to this sample (OpenMetrics only).
    ///
    /// # Example
    /// ```
    /// use promrate::{Format, Parser};
    /// let text = "# TYPE a counter\na_total 1 # {trace_id=\"x\"} 0.5\n# EOF\n";
    /// let sample = Parser::new(Format::OpenMetrics).parse(text)
    ///     .filter_map(|e| e.ok()?.into_sample()).next().unwrap();
    /// let ex = sample.exemplar().unwrap();
    /// assert_eq!(ex.value(), 0.5);
    /// assert!(ex.labels().get("trace_id").unwrap() == "x");
    /// ```
    pub fn exemplar(&self) -> Option<Exemplar<'page>> {
        super::sample_line::exemplar(self.exemplar?, 0).ok()
    }
}

/// An OpenMetrics exemplar: a labelled example observation attached to a sample.
///
/// # Example
/// ```
/// use promrate::{Format, Parser};
/// let text = "# TYPE a counter\na_total 1 # {id=\"7\"} 0.5 2.5\n# EOF\n";
/// let s = Parser::new(Format::OpenMetrics).parse(text)
///     .filter_map(|e| e.ok()?.into_sample()).next().unwrap();
/// assert_eq!(s.exemplar().unwrap().timestamp_ms(), Some(2500));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Exemplar<'page> {
    pub(crate) labels: Labels<'page>,
    pub(crate) value: f64,
    pub(crate) timestamp_ms: Option<i64>,
}

impl<'page> Exemplar<'page> {
    /// The exemplar's labels.
    ///
    /// # Example
    /// ```
    /// # use promrate::{Format, Parser};
    /// # let text = "# TYPE a counter\na_total 1 # {id=\"7\"} 0.5\n# EOF\n";
    /// # let s = Parser::new(Format::OpenMetrics).parse(text).filter_map(|e| e.ok()?.into_sample()).next().unwrap();
    /// assert_eq!(s.exemplar().unwrap().labels().len(), 1);
    /// ```
    pub fn labels(&self) -> Labels<'page> {
        self.labels
    }

    /// The observed value.
    ///
    /// # Example
    /// ```
    /// # use promrate::{Format, Parser};
    /// # let text = "# TYPE a counter\na_total 1 # {id=\"7\"} 0.5\n# EOF\n";
    /// # let s = Parser::new(Format::OpenMetrics).parse(text).filter_map(|e| e.ok()?.into_sample()).next().unwrap();
    /// assert_eq!(s.exemplar().unwrap().value(), 0.5);
    /// ```
    pub fn value(&self) -> f64 {
        self.value
    }

    /// The exemplar's timestamp in milliseconds, if given.
    ///
    /// # Example
    /// ```
    /// # use promrate::{Format, Parser};
    /// # let text = "# TYPE a counter\na_total 1 # {id=\"7\"} 0.5\n# EOF\n";
    /// # let s = Parser::new(Format::OpenMetrics).parse(text).filter_map(|e| e.ok()?.into_sample()).next().unwrap();
    /// assert_eq!(s.exemplar().unwrap().timestamp_ms(), None);
    /// ```
    pub fn timestamp_ms(&self) -> Option<i64> {
        self.timestamp_ms
    }
}

/// Help text as written, with lazy unescaping.
///
/// In the Prometheus text format `\\` and `\n` are escapes; OpenMetrics adds `\"`.
///
/// # Example
/// ```
/// let entry = promrate::parse("# HELP a line\\nbreak\n").next().unwrap()?;
/// if let promrate::Entry::Help { name, text } = entry {
///     assert_eq!(name, "a");
///     assert_eq!(text.unescaped(), "line\nbreak");
///     assert!(text == "line\nbreak");
///     assert_eq!(text.to_string(), "line\nbreak");
/// }
/// # Ok::<(), promrate::ParseError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct HelpText<'page> {
    raw: &'page str,
    quote: bool,
}

impl<'page> HelpText<'page> {
    pub(crate) fn new(raw: &'page str, quote: bool) -> Self {
        HelpText { raw, quote }
    }

    /// The text as written.
    ///
    /// # Example
    /// ```
    /// let e = promrate::parse("# HELP a x\\\\y").next().unwrap()?;
    /// if let promrate::Entry::Help { text, .. } = e { assert_eq!(text.raw(), "x\\\\y"); }
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    pub fn raw(&self) -> &'page str {
        self.raw
    }

    /// The text with escapes resolved; borrows when there are none.
    ///
    /// # Example
    /// ```
    /// let e = promrate::parse("# HELP a x\\\\y").next().unwrap()?;
    /// if let promrate::Entry::Help { text, .. } = e { assert_eq!(text.unescaped(), "x\\y"); }
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    pub fn unescaped(&self) -> Cow<'page, str> {
        unescape(self.raw, self.quote)
    }
}

impl fmt::Display for HelpText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.unescaped())
    }
}

impl PartialEq<str> for HelpText<'_> {
    /// Compares the unescaped text.
    fn eq(&self, other: &str) -> bool {
        UnescapedBytes::new(self.raw, self.quote).eq(other.bytes())
    }
}

impl PartialEq<&str> for HelpText<'_> {
    fn eq(&self, other: &&str) -> bool {
        *self == **other
    }
}

impl fmt::Debug for HelpText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.unescaped(), f)
    }
}

impl fmt::Display for Sample<'_> {
    /// The sample as a Prometheus text line (without the newline): names quoted where they
    /// must be, label values escaped, the value as Go writes it, the timestamp in
    /// milliseconds. It parses back to the same sample (an OpenMetrics exemplar is left
    /// out: the text format has none).
    ///
    /// # Example
    /// ```
    /// let page = "up{path=\"a\\\"b\",job=\"x\"} 1.0 1700000000000\n";
    /// let sample = promrate::parse(page).next().unwrap()?.into_sample().unwrap();
    /// let line = sample.to_string();
    /// assert_eq!(line, page.trim_end());
    /// let again = promrate::parse(&line).next().unwrap()?.into_sample().unwrap();
    /// assert_eq!(again.labels().get("path").unwrap(), "a\"b");
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let labels = self.labels.iter().map(|(k, v)| (k, v.unescaped()));
        super::write::sample_text(f, self.name, labels, self.value, self.timestamp_ms)
    }
}

impl fmt::Display for Entry<'_> {
    /// The entry as a line (without the newline): a sample as [`Sample`]'s `Display`
    /// writes it, `# HELP`, `# TYPE`, a comment, and OpenMetrics' `# UNIT` and `# EOF`.
    ///
    /// # Example
    /// ```
    /// let page = "# HELP up Whether it is up.\n# TYPE up gauge\nup 1.0\n";
    /// let lines: Vec<String> = promrate::parse(page).map(|e| e.unwrap().to_string()).collect();
    /// assert_eq!(lines.join("\n") + "\n", page);
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut line = String::new();
        match self {
            Entry::Sample(sample) => return sample.fmt(f),
            Entry::Help { name, text } => super::write::help(&mut line, name, &text.unescaped())?,
            Entry::Type { name, kind } => super::write::metric_type(&mut line, name, *kind)?,
            Entry::Unit { name, unit } => return write!(f, "# UNIT {name} {unit}"),
            Entry::Comment(text) => return write!(f, "# {text}"),
            Entry::Eof => return f.write_str("# EOF"),
        }
        f.write_str(line.trim_end_matches('\n'))
    }
}
