//! OpenMetrics exemplars (` # {trace_id="x"} 0.5 1.7e9`): the parser, the borrowed
//! [`Exemplar`], and [`Exemplars`], which reads a sample's several exemplars (OpenMetrics
//! 2.0) from the page as it is iterated.

use super::label_set::label_set;
use super::labels::Labels;
use super::lexer::{token_end, Dialect, Fail};
use super::limits::Limits;
use super::value::{parse_float, parse_timestamp_seconds, seconds_to_ms};
use crate::error::ParseErrorKind;

/// OpenMetrics 1.0 caps exemplar label sets at 128 characters of names and values.
const MAX_EXEMPLAR_LABEL_CHARS: usize = 128;

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

/// A sample's exemplars, in page order, read from the page as iterated (they were
/// validated with the line). OpenMetrics 1.0 has at most one; 2.0 any number.
///
/// # Example
/// ```
/// use promrate::{Format, Parser};
/// let page = "# TYPE foo histogram\n\
///             foo {count:17,sum:324789.3,bucket:[0.01:0,0.1:8,1.0:11,10.0:17,+Inf:17]} st@1520430000.123 # {} \
///             0.054 1520879607.7 # {trace_id=\"KOO5S4vxi0o\"} 1.67 1520879602.890\n# EOF\n";
/// let sample = Parser::new(Format::OpenMetrics2).parse(page)
///     .filter_map(|e| e.ok()?.into_sample()).next().unwrap();
/// let values: Vec<f64> = sample.exemplars().map(|e| e.value()).collect();
/// assert_eq!(values, [0.054, 1.67]);
/// ```
#[derive(Debug, Clone)]
pub struct Exemplars<'page> {
    /// The line from the next exemplar's `#` (or the space before it) to its end.
    pub(crate) rest: &'page str,
}

impl<'page> Iterator for Exemplars<'page> {
    type Item = Exemplar<'page>;

    fn next(&mut self) -> Option<Exemplar<'page>> {
        let hash = usize::from(self.rest.starts_with(' '));
        let (exemplar, end) = parse(self.rest, hash, Rules::Replay).ok()?;
        self.rest = &self.rest[end..];
        Some(exemplar)
    }
}

/// Which exemplar grammar applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rules {
    /// OpenMetrics 1.0: one exemplar ending the line, an optional timestamp, labels of at
    /// most 128 characters.
    OpenMetrics1,
    /// OpenMetrics 2.0: a required timestamp, another exemplar may follow.
    OpenMetrics2,
    /// Re-reading text one of the two validated: optional timestamp, no length check.
    Replay,
}

/// Parses `# {labels} value [timestamp]` starting at the `#` under `rules`; with the index
/// past it.
pub(crate) fn parse(line: &str, hash: usize, rules: Rules) -> Result<(Exemplar<'_>, usize), Fail> {
    let version2 = rules != Rules::OpenMetrics1;
    let bytes = line.as_bytes();
    let dialect = Dialect {
        openmetrics: true,
        version2,
        strict_escapes: false,
    };
    if bytes.get(hash + 1) != Some(&b' ') || bytes.get(hash + 2) != Some(&b'{') {
        return Err((hash, ParseErrorKind::Expected("'# {' to start an exemplar")));
    }
    let open = hash + 2;
    let exemplar_limits = Limits {
        labels: if version2 {
            usize::MAX
        } else {
            MAX_EXEMPLAR_LABEL_CHARS
        },
        ..Limits::NONE
    };
    let set = label_set(line, open, dialect, &exemplar_limits, false)?;
    if set.quoted_name.is_some() {
        return Err((open + 1, ParseErrorKind::Expected("'=' after label name")));
    }
    let mut i = set.end;
    let labels = Labels::new(set.raw, set.count, dialect);
    if rules == Rules::OpenMetrics1 {
        let chars: usize = labels
            .iter()
            .map(|(n, v)| n.chars().count() + v.unescaped().chars().count())
            .sum();
        if chars > MAX_EXEMPLAR_LABEL_CHARS {
            return Err((
                open,
                ParseErrorKind::Expected("exemplar labels of at most 128 characters"),
            ));
        }
    }
    if bytes.get(i) != Some(&b' ') {
        return Err((i, ParseErrorKind::Expected("a space before the exemplar value")));
    }
    i += 1;
    let value_end = token_end(bytes, i, false);
    let value_text = &line[i..value_end];
    let value = parse_float(value_text)
        .ok_or_else(|| (i, ParseErrorKind::InvalidExemplarValue(value_text.to_string())))?;
    let mut timestamp_ms = None;
    let mut end = value_end;
    if value_end < bytes.len() {
        let ts_start = value_end + 1;
        end = if version2 {
            token_end(bytes, ts_start, false)
        } else {
            bytes.len()
        };
        let ts_text = &line[ts_start..end];
        let seconds = parse_timestamp_seconds(ts_text).ok_or_else(|| {
            (
                ts_start,
                ParseErrorKind::InvalidExemplarTimestamp(ts_text.to_string()),
            )
        })?;
        timestamp_ms = Some(seconds_to_ms(seconds));
    } else if rules == Rules::OpenMetrics2 {
        return Err((value_end, ParseErrorKind::Expected("an exemplar timestamp")));
    }
    Ok((
        Exemplar {
            labels,
            value,
            timestamp_ms,
        },
        end,
    ))
}
