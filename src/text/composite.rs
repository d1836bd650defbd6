//! OpenMetrics 2.0 composite values (`{count:17,sum:3.5,bucket:[0.1:8,+Inf:17]}`): the one
//! parser that validates them against the specification's ABNF and rules, and the borrowed
//! [`CompositeValue`] that reads a validated value back field by field.
//!
//! A composite value is kept as its text; the accessors re-read that text (already
//! validated, so they stop quietly at anything unexpected instead of panicking). Nothing
//! is allocated, and a sample stays small for the pages that have no composite values.

use std::fmt;

use super::lexer::Fail;
use super::value::parse_float;
use crate::error::{CompositeRule, ParseErrorKind};

/// What a composite value describes: its fields say it (`gcount` for a gauge histogram,
/// `quantile` for a summary).
///
/// # Example
/// ```
/// use promrate::{text::CompositeKind, Format, Parser};
/// let page = "# TYPE foo summary\nfoo {count:1,sum:2.0,quantile:[0.5:2.0]}\n# EOF\n";
/// let sample = Parser::new(Format::OpenMetrics2).parse(page)
///     .filter_map(|e| e.ok()?.into_sample()).next().unwrap();
/// assert_eq!(sample.composite().unwrap().kind(), CompositeKind::Summary);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CompositeKind {
    /// `count`, `sum`, then classic and/or native buckets.
    Histogram,
    /// `gcount`, `gsum`, then classic and/or native buckets.
    GaugeHistogram,
    /// `count`, `sum`, `quantile`.
    Summary,
}

/// An OpenMetrics 2.0 composite value, borrowed from the page: a histogram's, gauge
/// histogram's or summary's count, sum and buckets or quantiles, on one line.
///
/// # Example
/// ```
/// use promrate::{Format, Parser};
/// let page = "# TYPE foo histogram\n\
///             foo {count:17,sum:324789.3,bucket:[0.01:0,0.1:8,1.0:11,10.0:17,+Inf:17]} st@1520430000.123\n# EOF\n";
/// let sample = Parser::new(Format::OpenMetrics2).parse(page)
///     .filter_map(|e| e.ok()?.into_sample()).next().unwrap();
/// let value = sample.composite().unwrap();
/// assert_eq!((value.count(), value.sum()), (17.0, 324789.3));
/// let buckets: Vec<(f64, f64)> = value.buckets().unwrap().collect();
/// assert_eq!(buckets[1], (0.1, 8.0));
/// assert_eq!(buckets.last(), Some(&(f64::INFINITY, 17.0)));
/// assert_eq!(sample.start_timestamp_ms(), Some(1_520_430_000_123));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CompositeValue<'page> {
    /// The text between the braces, validated.
    raw: &'page str,
}

/// A native (exponential) histogram's fields of a [`CompositeValue`].
///
/// # Example
/// ```
/// use promrate::{text::BucketSpan, Format, Parser};
/// let page = "# TYPE h histogram\n\
///             h {count:59,sum:1.2e2,schema:7,zero_threshold:1e-4,zero_count:0,negative_spans:[1:2],negative_buckets:[5,7],positive_spans:[-1:2,3:4],positive_buckets:[5,7,10,9,8,8]}\n# EOF\n";
/// let sample = Parser::new(Format::OpenMetrics2).parse(page)
///     .filter_map(|e| e.ok()?.into_sample()).next().unwrap();
/// let native = sample.composite().unwrap().native().unwrap();
/// assert_eq!((native.schema(), native.zero_threshold(), native.zero_count()), (7, 1e-4, 0.0));
/// let spans: Vec<BucketSpan> = native.positive_spans().collect();
/// assert_eq!((spans[0].offset, spans[0].length, spans[1].offset), (-1, 2, 3));
/// assert_eq!(native.positive_buckets().sum::<f64>(), 47.0);
/// assert_eq!(native.negative_buckets().count(), 2);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NativeHistogram<'page> {
    schema: i8,
    zero_threshold: f64,
    zero_count: f64,
    negative_spans: &'page str,
    negative_buckets: &'page str,
    positive_spans: &'page str,
    positive_buckets: &'page str,
}

/// One span of a native histogram's buckets: `offset` buckets skipped (for the first
/// span, the index of its first bucket), then `length` consecutive buckets.
///
/// # Example
/// ```
/// let span = promrate::text::BucketSpan { offset: -1, length: 2 };
/// assert_eq!(span.length, 2);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BucketSpan {
    /// Buckets skipped before this span (the first span: its first bucket's index).
    pub offset: i32,
    /// Consecutive buckets in this span.
    pub length: u32,
}

/// `key:value` fields of a composite value's text, in order; a list value comes without
/// its brackets.
#[derive(Clone)]
struct Fields<'page> {
    raw: &'page str,
    pos: usize,
}

impl<'page> Iterator for Fields<'page> {
    /// The key, the value text, and the value's offset in the composite text.
    type Item = (&'page str, &'page str, usize);

    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.raw.get(self.pos..).filter(|r| !r.is_empty())?;
        let colon = rest.find(':')?;
        let key = &rest[..colon];
        let value_start = colon + 1;
        let (value, end) = if rest[value_start..].starts_with('[') {
            let close = value_start + rest[value_start..].find(']')?;
            (&rest[value_start + 1..close], close + 1)
        } else {
            let end = rest[value_start..]
                .find(',')
                .map_or(rest.len(), |c| value_start + c);
            (&rest[value_start..end], end)
        };
        let at = self.pos + value_start;
        // Past the comma after the field, if any.
        self.pos += end + usize::from(rest.as_bytes().get(end) == Some(&b','));
        Some((key, value, at))
    }
}

impl<'page> CompositeValue<'page> {
    fn fields(&self) -> Fields<'page> {
        Fields {
            raw: self.raw,
            pos: 0,
        }
    }

    fn field(&self, key: &str) -> Option<&'page str> {
        self.fields().find(|(k, _, _)| *k == key).map(|(_, v, _)| v)
    }

    /// The text between the braces, as written.
    ///
    /// # Example
    /// ```
    /// # use promrate::{Format, Parser};
    /// # let page = "foo {count:1,sum:2,bucket:[+Inf:1]}\n# EOF\n";
    /// # let s = Parser::new(Format::OpenMetrics2).parse(page).filter_map(|e| e.ok()?.into_sample()).next().unwrap();
    /// assert_eq!(s.composite().unwrap().as_raw(), "count:1,sum:2,bucket:[+Inf:1]");
    /// ```
    pub fn as_raw(&self) -> &'page str {
        self.raw
    }

    /// Whether this is a histogram, gauge histogram or summary.
    ///
    /// # Example
    /// ```
    /// # use promrate::{text::CompositeKind, Format, Parser};
    /// # let page = "foo {gcount:1,gsum:2,bucket:[+Inf:1]}\n# EOF\n";
    /// # let s = Parser::new(Format::OpenMetrics2).parse(page).filter_map(|e| e.ok()?.into_sample()).next().unwrap();
    /// assert_eq!(s.composite().unwrap().kind(), CompositeKind::GaugeHistogram);
    /// ```
    pub fn kind(&self) -> CompositeKind {
        if self.raw.starts_with('g') {
            CompositeKind::GaugeHistogram
        } else if self.fields().nth(2).is_some_and(|(k, _, _)| k == "quantile") {
            CompositeKind::Summary
        } else {
            CompositeKind::Histogram
        }
    }

    /// The count (`count`, or a gauge histogram's `gcount`).
    ///
    /// # Example
    /// ```
    /// # use promrate::{Format, Parser};
    /// # let page = "foo {count:3,sum:2,bucket:[+Inf:3]}\n# EOF\n";
    /// # let s = Parser::new(Format::OpenMetrics2).parse(page).filter_map(|e| e.ok()?.into_sample()).next().unwrap();
    /// assert_eq!(s.composite().unwrap().count(), 3.0);
    /// ```
    pub fn count(&self) -> f64 {
        self.fields()
            .next()
            .and_then(|(_, v, _)| parse_float(v))
            .unwrap_or(f64::NAN)
    }

    /// The sum (`sum`, or a gauge histogram's `gsum`).
    ///
    /// # Example
    /// ```
    /// # use promrate::{Format, Parser};
    /// # let page = "foo {count:3,sum:2.5,bucket:[+Inf:3]}\n# EOF\n";
    /// # let s = Parser::new(Format::OpenMetrics2).parse(page).filter_map(|e| e.ok()?.into_sample()).next().unwrap();
    /// assert_eq!(s.composite().unwrap().sum(), 2.5);
    /// ```
    pub fn sum(&self) -> f64 {
        self.fields()
            .nth(1)
            .and_then(|(_, v, _)| parse_float(v))
            .unwrap_or(f64::NAN)
    }

    /// The classic buckets as `(upper bound, cumulative count)`, lowest bound first, the
    /// last one `+Inf`; `None` without classic buckets.
    ///
    /// # Example
    /// ```
    /// # use promrate::{Format, Parser};
    /// # let page = "foo {count:3,sum:2,bucket:[-Inf:0,1:2,+Inf:3]}\n# EOF\n";
    /// # let s = Parser::new(Format::OpenMetrics2).parse(page).filter_map(|e| e.ok()?.into_sample()).next().unwrap();
    /// let bounds: Vec<f64> = s.composite().unwrap().buckets().unwrap().map(|(le, _)| le).collect();
    /// assert_eq!(bounds, [f64::NEG_INFINITY, 1.0, f64::INFINITY]);
    /// ```
    pub fn buckets(&self) -> Option<CompositePairs<'page>> {
        self.field("bucket").map(CompositePairs::new)
    }

    /// A summary's quantiles as `(quantile, value)`, in increasing quantile order; `None`
    /// for a histogram.
    ///
    /// # Example
    /// ```
    /// # use promrate::{Format, Parser};
    /// # let page = "foo {count:3,sum:2,quantile:[0.5:1,0.9:1.5]}\n# EOF\n";
    /// # let s = Parser::new(Format::OpenMetrics2).parse(page).filter_map(|e| e.ok()?.into_sample()).next().unwrap();
    /// let q: Vec<(f64, f64)> = s.composite().unwrap().quantiles().unwrap().collect();
    /// assert_eq!(q, [(0.5, 1.0), (0.9, 1.5)]);
    /// ```
    pub fn quantiles(&self) -> Option<CompositePairs<'page>> {
        self.field("quantile").map(CompositePairs::new)
    }

    /// The native histogram's fields, if the value has them (`schema` onwards).
    ///
    /// # Example
    /// ```
    /// # use promrate::{Format, Parser};
    /// # let page = "foo {count:0,sum:0,schema:3,zero_threshold:1e-4,zero_count:0}\n# EOF\n";
    /// # let s = Parser::new(Format::OpenMetrics2).parse(page).filter_map(|e| e.ok()?.into_sample()).next().unwrap();
    /// let native = s.composite().unwrap().native().unwrap();
    /// assert_eq!(native.schema(), 3);
    /// assert_eq!(native.positive_spans().count(), 0);
    /// ```
    pub fn native(&self) -> Option<NativeHistogram<'page>> {
        let schema = self.field("schema")?;
        let mut native = NativeHistogram {
            schema: schema.parse().ok()?,
            zero_threshold: 0.0,
            zero_count: 0.0,
            negative_spans: "",
            negative_buckets: "",
            positive_spans: "",
            positive_buckets: "",
        };
        for (key, value, _) in self.fields() {
            match key {
                "zero_threshold" => native.zero_threshold = parse_float(value)?,
                "zero_count" => native.zero_count = parse_float(value)?,
                "negative_spans" => native.negative_spans = value,
                "negative_buckets" => native.negative_buckets = value,
                "positive_spans" => native.positive_spans = value,
                "positive_buckets" => native.positive_buckets = value,
                _ => {}
            }
        }
        Some(native)
    }
}

impl fmt::Debug for CompositeValue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{{}}}", self.raw)
    }
}

impl<'page> NativeHistogram<'page> {
    /// The schema, -4 to 8: bucket boundaries grow by `2^(2^-schema)`.
    ///
    /// # Example
    /// ```
    /// # use promrate::{Format, Parser};
    /// # let page = "foo {count:0,sum:0,schema:-4,zero_threshold:0,zero_count:0}\n# EOF\n";
    /// # let s = Parser::new(Format::OpenMetrics2).parse(page).filter_map(|e| e.ok()?.into_sample()).next().unwrap();
    /// assert_eq!(s.composite().unwrap().native().unwrap().schema(), -4);
    /// ```
    pub fn schema(&self) -> i8 {
        self.schema
    }

    /// The zero bucket's threshold: it holds observations in `[-threshold, threshold]`.
    ///
    /// # Example
    /// ```
    /// # use promrate::{Format, Parser};
    /// # let page = "foo {count:0,sum:0,schema:0,zero_threshold:0.5,zero_count:0}\n# EOF\n";
    /// # let s = Parser::new(Format::OpenMetrics2).parse(page).filter_map(|e| e.ok()?.into_sample()).next().unwrap();
    /// assert_eq!(s.composite().unwrap().native().unwrap().zero_threshold(), 0.5);
    /// ```
    pub fn zero_threshold(&self) -> f64 {
        self.zero_threshold
    }

    /// The zero bucket's count.
    ///
    /// # Example
    /// ```
    /// # use promrate::{Format, Parser};
    /// # let page = "foo {count:2,sum:0,schema:0,zero_threshold:0,zero_count:2}\n# EOF\n";
    /// # let s = Parser::new(Format::OpenMetrics2).parse(page).filter_map(|e| e.ok()?.into_sample()).next().unwrap();
    /// assert_eq!(s.composite().unwrap().native().unwrap().zero_count(), 2.0);
    /// ```
    pub fn zero_count(&self) -> f64 {
        self.zero_count
    }

    /// The spans of the positive buckets (empty without positive buckets).
    ///
    /// # Example
    /// ```
    /// # use promrate::{Format, Parser};
    /// # let page = "foo {count:1,sum:1,schema:0,zero_threshold:0,zero_count:0,positive_spans:[0:1],positive_buckets:[1]}\n# EOF\n";
    /// # let s = Parser::new(Format::OpenMetrics2).parse(page).filter_map(|e| e.ok()?.into_sample()).next().unwrap();
    /// assert_eq!(s.composite().unwrap().native().unwrap().positive_spans().count(), 1);
    /// ```
    pub fn positive_spans(&self) -> BucketSpans<'page> {
        BucketSpans(CompositePairs::new(self.positive_spans))
    }

    /// The positive buckets' counts (absolute, not deltas), in index order.
    ///
    /// # Example
    /// ```
    /// # use promrate::{Format, Parser};
    /// # let page = "foo {count:1,sum:1,schema:0,zero_threshold:0,zero_count:0,positive_spans:[0:1],positive_buckets:[1]}\n# EOF\n";
    /// # let s = Parser::new(Format::OpenMetrics2).parse(page).filter_map(|e| e.ok()?.into_sample()).next().unwrap();
    /// assert_eq!(s.composite().unwrap().native().unwrap().positive_buckets().collect::<Vec<_>>(), [1.0]);
    /// ```
    pub fn positive_buckets(&self) -> BucketCounts<'page> {
        BucketCounts::new(self.positive_buckets)
    }

    /// The spans of the negative buckets (empty without negative buckets).
    ///
    /// # Example
    /// ```
    /// # use promrate::{Format, Parser};
    /// # let page = "foo {count:1,sum:-1,schema:0,zero_threshold:0,zero_count:0,negative_spans:[0:1],negative_buckets:[1]}\n# EOF\n";
    /// # let s = Parser::new(Format::OpenMetrics2).parse(page).filter_map(|e| e.ok()?.into_sample()).next().unwrap();
    /// assert_eq!(s.composite().unwrap().native().unwrap().negative_spans().count(), 1);
    /// ```
    pub fn negative_spans(&self) -> BucketSpans<'page> {
        BucketSpans(CompositePairs::new(self.negative_spans))
    }

    /// The negative buckets' counts (absolute), in index order.
    ///
    /// # Example
    /// ```
    /// # use promrate::{Format, Parser};
    /// # let page = "foo {count:1,sum:-1,schema:0,zero_threshold:0,zero_count:0,negative_spans:[0:1],negative_buckets:[1]}\n# EOF\n";
    /// # let s = Parser::new(Format::OpenMetrics2).parse(page).filter_map(|e| e.ok()?.into_sample()).next().unwrap();
    /// assert_eq!(s.composite().unwrap().native().unwrap().negative_buckets().count(), 1);
    /// ```
    pub fn negative_buckets(&self) -> BucketCounts<'page> {
        BucketCounts::new(self.negative_buckets)
    }
}

/// `a:b` pairs of numbers of a composite value's list (buckets, quantiles), read from the
/// page as iterated.
///
/// # Example
/// ```
/// # use promrate::{Format, Parser};
/// # let page = "foo {count:3,sum:2,bucket:[1:2,+Inf:3]}\n# EOF\n";
/// # let s = Parser::new(Format::OpenMetrics2).parse(page).filter_map(|e| e.ok()?.into_sample()).next().unwrap();
/// let mut buckets = s.composite().unwrap().buckets().unwrap();
/// assert_eq!(buckets.next(), Some((1.0, 2.0)));
/// ```
#[derive(Debug, Clone)]
pub struct CompositePairs<'page> {
    items: std::str::Split<'page, char>,
}

impl<'page> CompositePairs<'page> {
    fn new(list: &'page str) -> Self {
        let mut items = list.split(',');
        if list.is_empty() {
            // An empty list has no items (`split` would yield one empty one).
            items.next();
        }
        CompositePairs { items }
    }

    fn next_text(&mut self) -> Option<(&'page str, &'page str)> {
        self.items.next()?.split_once(':')
    }

    /// The pairs as written (`("0.1", "8")`): a bucket's `le` label is its bound's text.
    pub(crate) fn texts(mut self) -> impl Iterator<Item = (&'page str, &'page str)> {
        std::iter::from_fn(move || self.next_text())
    }
}

impl Iterator for CompositePairs<'_> {
    type Item = (f64, f64);
    fn next(&mut self) -> Option<(f64, f64)> {
        let (a, b) = self.next_text()?;
        Some((parse_float(a)?, parse_float(b)?))
    }
}

/// The spans of a native histogram's positive or negative buckets.
///
/// # Example
/// ```
/// # use promrate::{Format, Parser};
/// # let page = "foo {count:1,sum:1,schema:0,zero_threshold:0,zero_count:0,positive_spans:[2:1],positive_buckets:[1]}\n# EOF\n";
/// # let s = Parser::new(Format::OpenMetrics2).parse(page).filter_map(|e| e.ok()?.into_sample()).next().unwrap();
/// let span = s.composite().unwrap().native().unwrap().positive_spans().next().unwrap();
/// assert_eq!((span.offset, span.length), (2, 1));
/// ```
#[derive(Debug, Clone)]
pub struct BucketSpans<'page>(CompositePairs<'page>);

impl Iterator for BucketSpans<'_> {
    type Item = BucketSpan;
    fn next(&mut self) -> Option<BucketSpan> {
        let (offset, length) = self.0.next_text()?;
        Some(BucketSpan {
            offset: offset.parse().ok()?,
            length: length.parse().ok()?,
        })
    }
}

/// The counts of a native histogram's positive or negative buckets.
///
/// # Example
/// ```
/// # use promrate::{Format, Parser};
/// # let page = "foo {count:3,sum:1,schema:0,zero_threshold:0,zero_count:0,positive_spans:[0:2],positive_buckets:[1,2]}\n# EOF\n";
/// # let s = Parser::new(Format::OpenMetrics2).parse(page).filter_map(|e| e.ok()?.into_sample()).next().unwrap();
/// assert_eq!(s.composite().unwrap().native().unwrap().positive_buckets().max_by(f64::total_cmp), Some(2.0));
/// ```
#[derive(Debug, Clone)]
pub struct BucketCounts<'page> {
    items: std::str::Split<'page, char>,
}

impl<'page> BucketCounts<'page> {
    fn new(list: &'page str) -> Self {
        let mut items = list.split(',');
        if list.is_empty() {
            items.next();
        }
        BucketCounts { items }
    }
}

impl Iterator for BucketCounts<'_> {
    type Item = f64;
    fn next(&mut self) -> Option<f64> {
        parse_float(self.items.next()?)
    }
}

/// The ABNF's `realnumber`: digits with an optional point and exponent, no inf or NaN.
fn is_real_number(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    let mut mantissa = digits(&mut i);
    if b.get(i) == Some(&b'.') {
        i += 1;
        mantissa += digits(&mut i);
    }
    if mantissa == 0 {
        return false;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        i += usize::from(matches!(b.get(i), Some(b'+' | b'-')));
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// The ABNF's `integer` (`signed`) or `non-negative-integer`, as an i64.
fn integer(text: &str, signed: bool) -> Option<i64> {
    let digits = match text.as_bytes().first() {
        Some(b'-') if signed => &text[1..],
        Some(b'+') => &text[1..],
        _ => text,
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.trim_start_matches('+').parse().ok()
}

/// A rule broken at an offset in the composite text.
type Broken = (usize, CompositeRule);

/// The fields of a composite value being validated, in order.
struct Cursor<'a> {
    fields: std::iter::Peekable<Fields<'a>>,
    len: usize,
}

impl<'a> Cursor<'a> {
    /// The next field, which must be `wanted`: its value text and offset.
    fn take(&mut self, wanted: &'static str) -> Result<(&'a str, usize), Broken> {
        match self.fields.next() {
            Some((key, text, at)) if key == wanted => Ok((text, at)),
            Some((key, _, at)) => Err((at - key.len() - 1, CompositeRule::Expected(wanted))),
            None => Err((self.len, CompositeRule::Expected(wanted))),
        }
    }

    /// Whether the next field is `key`.
    fn next_is(&mut self, key: &str) -> bool {
        self.fields.peek().is_some_and(|(k, _, _)| *k == key)
    }
}

/// Validates a composite value whose `{` is at `open` in `line`: the ABNF and the
/// specification's rules that one value can break. Returns the value and the index past
/// its `}`.
pub(crate) fn composite(line: &str, open: usize) -> Result<(CompositeValue<'_>, usize), Fail> {
    let rest = &line[open..];
    let close = rest
        .find(['}', ' '])
        .filter(|&c| rest.as_bytes()[c] == b'}')
        .ok_or((open, ParseErrorKind::Expected("'}' to close the composite value")))?;
    let raw = &rest[1..close];
    let value = CompositeValue { raw };
    let fail = |(at, rule): Broken| (open + 1 + at, ParseErrorKind::Composite(rule));
    if raw.ends_with(',') || raw.contains(",,") || raw.contains("],[") {
        let at = raw.find(",,").map_or(raw.len(), |c| c + 1);
        return Err(fail((at, CompositeRule::Expected("a field after ','"))));
    }
    let mut cursor = Cursor {
        fields: value.fields().peekable(),
        len: raw.len(),
    };
    fields(&mut cursor, raw.starts_with('g')).map_err(fail)?;
    if let Some((key, _, at)) = cursor.fields.next() {
        let at = at - key.len() - 1;
        return Err(fail((at, CompositeRule::Expected("'}' after the last field"))));
    }
    Ok((value, open + close + 1))
}

/// The fields in the ABNF's order and the rules on their values.
fn fields(cursor: &mut Cursor<'_>, gauge: bool) -> Result<(), Broken> {
    let (count_key, sum_key) = if gauge {
        ("gcount", "gsum")
    } else {
        ("count", "sum")
    };
    let number = |text: &str, at: usize| parse_float(text).ok_or((at, CompositeRule::Expected("a number")));
    let (count_text, count_at) = cursor.take(count_key)?;
    let count = number(count_text, count_at)?;
    let (sum_text, sum_at) = cursor.take(sum_key)?;
    let sum = number(sum_text, sum_at)?;
    if count.is_nan() || count < 0.0 {
        return Err((count_at, CompositeRule::NegativeCount));
    }
    if !gauge && cursor.next_is("quantile") {
        if count.fract() != 0.0 || count.is_infinite() {
            return Err((count_at, CompositeRule::NonIntegerCount));
        }
        if sum.is_nan() || sum < 0.0 {
            return Err((sum_at, CompositeRule::InvalidSummarySum));
        }
        let (list, at) = cursor.take("quantile")?;
        return quantile_list(list, at);
    }
    let native = cursor.next_is("schema");
    if native {
        native_fields(cursor)?;
    }
    if !native || cursor.next_is("bucket") {
        let (list, at) = cursor.take("bucket")?;
        let inf = bucket_list(list, at)?;
        if inf != count {
            return Err((at, CompositeRule::CountDoesNotMatchInfBucket));
        }
    }
    Ok(())
}

/// `schema`, `zero_threshold`, `zero_count` and the optional span and bucket lists.
fn native_fields(cursor: &mut Cursor<'_>) -> Result<(), Broken> {
    let (schema_text, at) = cursor.take("schema")?;
    let schema = integer(schema_text, true).ok_or((at, CompositeRule::Expected("an integer schema")))?;
    if !(-4..=8).contains(&schema) {
        return Err((at, CompositeRule::SchemaOutOfRange));
    }
    let (threshold, at) = cursor.take("zero_threshold")?;
    if !is_real_number(threshold) {
        return Err((at, CompositeRule::Expected("a real number zero threshold")));
    }
    if parse_float(threshold).is_none_or(|t| t < 0.0 || t.is_infinite()) {
        return Err((at, CompositeRule::NegativeZeroThreshold));
    }
    let (zero_count, at) = cursor.take("zero_count")?;
    let zero_count = parse_float(zero_count).ok_or((at, CompositeRule::Expected("a number")))?;
    if zero_count.is_nan() || zero_count < 0.0 {
        return Err((at, CompositeRule::NegativeCount));
    }
    for (spans_key, buckets_key) in [
        ("negative_spans", "negative_buckets"),
        ("positive_spans", "positive_buckets"),
    ] {
        if cursor.next_is(spans_key) {
            let (spans, spans_at) = cursor.take(spans_key)?;
            let (buckets, buckets_at) = cursor.take(buckets_key)?;
            spans_and_buckets(spans, spans_at, buckets, buckets_at)?;
        }
    }
    Ok(())
}

/// Checks span and bucket lists: the caller found them after the native fields.
fn spans_and_buckets(spans: &str, spans_at: usize, buckets: &str, buckets_at: usize) -> Result<(), Broken> {
    let mut total: u64 = 0;
    for (k, span) in spans.split(',').filter(|_| !spans.is_empty()).enumerate() {
        let (offset, length) = span
            .split_once(':')
            .ok_or((spans_at, CompositeRule::Expected("'offset:length' spans")))?;
        let offset_ok = integer(offset, k == 0).is_some_and(|o| i32::try_from(o).is_ok());
        let length = integer(length, false).and_then(|l| u32::try_from(l).ok());
        match (offset_ok, length) {
            (true, Some(length)) => total += u64::from(length),
            _ => return Err((spans_at, CompositeRule::Expected("'offset:length' spans"))),
        }
    }
    let mut count: u64 = 0;
    for bucket in buckets.split(',').filter(|_| !buckets.is_empty()) {
        let value = parse_float(bucket).ok_or((buckets_at, CompositeRule::Expected("a number")))?;
        if value.is_nan() || value < 0.0 {
            return Err((buckets_at, CompositeRule::NegativeCount));
        }
        count += 1;
    }
    if total != count {
        return Err((spans_at, CompositeRule::SpansDoNotMatchBuckets));
    }
    Ok(())
}

/// Classic buckets: sorted, unique, non-negative, non-decreasing, ending at `+Inf`.
/// Returns the `+Inf` bucket's value.
fn bucket_list(list: &str, at: usize) -> Result<f64, Broken> {
    let mut last: Option<(f64, f64)> = None;
    let count = if list.is_empty() {
        0
    } else {
        list.split(',').count()
    };
    for (k, item) in list.split(',').filter(|_| !list.is_empty()).enumerate() {
        let (bound, value) = item
            .split_once(':')
            .ok_or((at, CompositeRule::Expected("'bound:count' buckets")))?;
        let is_last = k + 1 == count;
        let bound = match bound {
            "+Inf" if is_last => f64::INFINITY,
            "-Inf" if k == 0 && !is_last => f64::NEG_INFINITY,
            b if is_real_number(b) => {
                parse_float(b).ok_or((at, CompositeRule::Expected("a bucket bound")))?
            }
            _ => return Err((at, CompositeRule::Expected("a real number bucket bound"))),
        };
        let value = parse_float(value).ok_or((at, CompositeRule::Expected("a number")))?;
        if value.is_nan() || value < 0.0 {
            return Err((at, CompositeRule::NegativeCount));
        }
        if let Some((last_bound, last_value)) = last {
            if bound <= last_bound {
                return Err((at, CompositeRule::BucketsOutOfOrder));
            }
            if value < last_value {
                return Err((at, CompositeRule::BucketValuesDecrease));
            }
        }
        last = Some((bound, value));
    }
    match last {
        Some((bound, value)) if bound == f64::INFINITY => Ok(value),
        _ => Err((at, CompositeRule::InfBucketMissing)),
    }
}

/// Quantiles: real numbers in `[0, 1]`, increasing, values not negative.
fn quantile_list(list: &str, at: usize) -> Result<(), Broken> {
    let mut last = None;
    for item in list.split(',').filter(|_| !list.is_empty()) {
        let (q, value) = item
            .split_once(':')
            .ok_or((at, CompositeRule::Expected("'quantile:value' pairs")))?;
        if !is_real_number(q) {
            return Err((at, CompositeRule::Expected("a real number quantile")));
        }
        let q = parse_float(q).ok_or((at, CompositeRule::Expected("a quantile")))?;
        if !(0.0..=1.0).contains(&q) {
            return Err((at, CompositeRule::QuantileOutOfRange));
        }
        if last.is_some_and(|l| q <= l) {
            return Err((at, CompositeRule::QuantilesOutOfOrder));
        }
        let value = parse_float(value).ok_or((at, CompositeRule::Expected("a number")))?;
        if value < 0.0 {
            return Err((at, CompositeRule::NegativeQuantileValue));
        }
        last = Some(q);
    }
    Ok(())
}
