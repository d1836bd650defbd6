//! [`Sample`] and its [`Exemplar`]: one sample line, borrowed from the page.

use std::fmt;

use chrono::{DateTime, Utc};

use super::composite::CompositeValue;
use super::exemplar::{Exemplar, Exemplars};
use super::labels::Labels;

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
    /// The timestamp's nanoseconds beyond `timestamp_ms` (OpenMetrics' decimal seconds; 0
    /// otherwise): the rules across lines order two times within one millisecond.
    pub(crate) timestamp_ns_past_ms: i32,
    /// The start timestamp (`st@`, OpenMetrics 2.0), in milliseconds.
    pub(crate) start_timestamp_ms: Option<i64>,
    /// The composite value (OpenMetrics 2.0 histograms and summaries); `value` is NaN then.
    pub(crate) composite: Option<CompositeValue<'page>>,
    /// The line from its first exemplar's `#` on (OpenMetrics only; empty without), read
    /// again on request: a sample stays small, and most callers never ask.
    pub(crate) exemplars: &'page str,
    /// The page text from the start of the name (or of the labels, for a quoted name) to
    /// the end of the labels: the same text always reads as the same name and labels.
    pub(crate) identity: &'page str,
    /// Whether `identity` begins its line and a space follows it (a line that begins with
    /// the same text and a space is the same series).
    pub(crate) identity_starts_line: bool,
}

impl<'page> Sample<'page> {
    /// The metric name (without quotes if it was quoted), escapes as written (see
    /// [`Sample::name_unescaped`]).
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

    /// The metric name with escapes resolved. [`Sample::name`] gives a quoted name's text
    /// as written (`\\`, `\"` and `\n` kept, as [`LabelValue::raw`](crate::LabelValue::raw)
    /// does), so reading a page allocates nothing; this borrows unless there is an escape.
    ///
    /// # Example
    /// ```
    /// let page = r#"{"my\"noncompliant\nmetric\\","label\"name\n"="value"} 1"#;
    /// let s = promrate::parse(page).next().unwrap()?.into_sample().unwrap();
    /// assert_eq!(s.name(), r#"my\"noncompliant\nmetric\\"#);
    /// assert_eq!(s.name_unescaped(), "my\"noncompliant\nmetric\\");
    /// assert!(s.labels().get("label\"name\n").unwrap() == "value");
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    pub fn name_unescaped(&self) -> std::borrow::Cow<'page, str> {
        super::escape::unescape(self.name, true)
    }

    /// A copy that owns its text ([`OwnedSample`](crate::text::OwnedSample)), to keep after the
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
    pub fn to_owned(&self) -> crate::text::OwnedSample {
        crate::text::OwnedSample::from(*self)
    }

    /// The timestamp in milliseconds and the nanoseconds beyond them, for ordering.
    #[inline(always)]
    pub(crate) fn fine_timestamp(&self) -> Option<(i64, i32)> {
        self.timestamp_ms.map(|ms| (ms, self.timestamp_ns_past_ms))
    }

    /// Whether the name may be written with escapes: quoted (its identity then starts at
    /// the labels' `{`) and holding a backslash.
    #[inline(always)]
    pub(crate) fn name_may_be_escaped(&self) -> bool {
        self.identity.as_bytes().first() == Some(&b'{') && super::escape::has_backslash(self.name)
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

    /// The value: the number the line gives. An OpenMetrics 2.0 histogram, gauge
    /// histogram or summary written as one composite value (`{count:..,sum:..,bucket:[..]}`)
    /// has no single number: its value is NaN, and its numbers are in [`Sample::composite`].
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
    /// converted as Prometheus converts them (`int64(ts * 1000)`: `1.0006` is 1000 ms, the
    /// product truncated toward zero), saturating at the `i64` range.
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

    /// The start timestamp (OpenMetrics 2.0's `st@<seconds>`: when the counter, histogram
    /// or summary started counting, the successor of OpenMetrics 1.0's `_created` samples)
    /// in milliseconds since the epoch, converted as [`Sample::timestamp_ms`] is.
    ///
    /// # Example
    /// ```
    /// use promrate::{Format, Parser};
    /// let page = "# TYPE foo_total counter\nfoo_total 17.0 1520879607.789 st@1520430000.123\n# EOF\n";
    /// let s = Parser::new(Format::OpenMetrics2).parse(page)
    ///     .filter_map(|e| e.ok()?.into_sample()).next().unwrap();
    /// assert_eq!(s.start_timestamp_ms(), Some(1_520_430_000_123));
    /// assert_eq!(s.timestamp_ms(), Some(1_520_879_607_789));
    /// ```
    pub fn start_timestamp_ms(&self) -> Option<i64> {
        self.start_timestamp_ms
    }

    /// The start timestamp as a UTC date-time (`None` if absent or outside chrono's range).
    ///
    /// # Example
    /// ```
    /// use promrate::{Format, Parser};
    /// let page = "foo_total 1 st@0\n# EOF\n";
    /// let s = Parser::new(Format::OpenMetrics2).parse(page)
    ///     .filter_map(|e| e.ok()?.into_sample()).next().unwrap();
    /// assert_eq!(s.start_timestamp().unwrap().timestamp(), 0);
    /// ```
    pub fn start_timestamp(&self) -> Option<DateTime<Utc>> {
        self.start_timestamp_ms.and_then(DateTime::from_timestamp_millis)
    }

    /// The composite value of an OpenMetrics 2.0 histogram, gauge histogram or summary
    /// sample (whose [`Sample::value`] is then NaN); `None` for a number.
    ///
    /// # Example
    /// ```
    /// use promrate::{Format, Parser};
    /// let page = "# TYPE foo summary\nfoo {count:17,sum:324789.3,quantile:[]} st@1520430000.123\n# EOF\n";
    /// let s = Parser::new(Format::OpenMetrics2).parse(page)
    ///     .filter_map(|e| e.ok()?.into_sample()).next().unwrap();
    /// assert_eq!(s.composite().unwrap().count(), 17.0);
    /// assert!(s.value().is_nan());
    /// ```
    pub fn composite(&self) -> Option<CompositeValue<'page>> {
        self.composite
    }

    /// Every exemplar of this sample, in page order (OpenMetrics 2.0 allows several).
    ///
    /// # Example
    /// ```
    /// use promrate::{Format, Parser};
    /// let page = "# TYPE a counter\na_total 1 # {x=\"1\"} 0.5 1 # {x=\"2\"} 0.7 2\n# EOF\n";
    /// let s = Parser::new(Format::OpenMetrics2).parse(page)
    ///     .filter_map(|e| e.ok()?.into_sample()).next().unwrap();
    /// assert_eq!(s.exemplars().count(), 2);
    /// ```
    pub fn exemplars(&self) -> Exemplars<'page> {
        Exemplars { rest: self.exemplars }
    }

    /// The first exemplar attached to this sample (OpenMetrics only).
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
        self.exemplars().next()
    }
}

impl Sample<'_> {
    /// Writes this sample as an OpenMetrics 2.0 line, with its newline: series (a quoted
    /// name first in the braces), number or composite value, timestamp and start timestamp
    /// in seconds, exemplars. It parses back to the same sample. (Samples of the older
    /// formats write as they read: a counter's `_total` stays in its name; an OpenMetrics
    /// 1.0 exemplar without a timestamp is left out, as 2.0 requires one.)
    ///
    /// # Example
    /// ```
    /// use promrate::{Format, Parser};
    /// let page = "# TYPE foo histogram\nfoo{a=\"b\"} {count:17,sum:3.5,bucket:[0.1:8,+Inf:17]} 1.5 st@1.25 # {} 0.054 2\n# EOF\n";
    /// let s = Parser::new(Format::OpenMetrics2).parse(page)
    ///     .filter_map(|e| e.ok()?.into_sample()).next().unwrap();
    /// let mut line = String::new();
    /// s.write_openmetrics2(&mut line)?;
    /// assert_eq!(line, "foo{a=\"b\"} {count:17,sum:3.5,bucket:[0.1:8,+Inf:17]} 1.500 st@1.250 # {} 0.054 2.000\n");
    /// # Ok::<(), std::fmt::Error>(())
    /// ```
    pub fn write_openmetrics2<W: fmt::Write + ?Sized>(&self, out: &mut W) -> fmt::Result {
        use super::write;
        let labels = self.labels.iter_unescaped().map(|(k, v)| (k, v.unescaped()));
        write::openmetrics2_series(out, &self.name_unescaped(), labels)?;
        out.write_char(' ')?;
        match &self.composite {
            Some(value) => write::composite(out, value)?,
            None => write!(out, "{}", write::GoFloat(self.value))?,
        }
        if let Some(ts) = self.timestamp_ms {
            write!(out, " {}", write::Seconds(ts))?;
        }
        if let Some(st) = self.start_timestamp_ms {
            write!(out, " st@{}", write::Seconds(st))?;
        }
        for exemplar in self.exemplars() {
            write::exemplar(out, &exemplar)?;
        }
        out.write_char('\n')
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
        let labels = self.labels.iter_unescaped().map(|(k, v)| (k, v.unescaped()));
        super::write::sample_text(f, &self.name_unescaped(), labels, self.value, self.timestamp_ms)
    }
}

#[cfg(test)]
mod tests {
    /// A sample is returned by value through the page iterator: its size is what every line
    /// costs in copies (152 bytes before OpenMetrics 2.0 added start times and composite
    /// values, 200 with them; the exemplars then became one slice read on request).
    #[test]
    fn a_sample_stays_small() {
        assert!(std::mem::size_of::<super::Sample<'_>>() <= 144);
    }
}
