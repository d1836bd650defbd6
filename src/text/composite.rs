//! OpenMetrics 2.0 composite values (`{count:17,sum:3.5,bucket:[0.1:8,+Inf:17]}`): the one
//! parser that validates them against the specification's ABNF and rules, and the borrowed
//! [`CompositeValue`] that reads a validated value back field by field.
//!
//! A composite value is kept as its text; the accessors re-read that text (already
//! validated, so they stop quietly at anything unexpected instead of panicking). Nothing
//! is allocated, and a sample stays small for the pages that have no composite values.

use std::fmt;

use super::lexer::Fail;
use super::value::{decimal_prefix, parse_float};
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
        // Byte loops, not `str::find`: fields are a few bytes, shorter than a search's
        // setup.
        let b = self.raw.as_bytes();
        let start = self.pos;
        if start >= b.len() {
            return None;
        }
        let Some(colon) = position(&b[start..], b':').map(|c| start + c) else {
            // Text without a key (`1,1]` after a list): an item of its own, with no key,
            // so that validation refuses it instead of reading the value as ending there.
            self.pos = b.len();
            return Some(("", &self.raw[start..], start));
        };
        let key = &self.raw[start..colon];
        let value_start = colon + 1;
        let (value, end) = if b.get(value_start) == Some(&b'[') {
            // A list is long (a histogram's buckets): searched a vector at a time.
            let close = value_start + memchr::memchr(b']', &b[value_start..])?;
            (&self.raw[value_start + 1..close], close + 1)
        } else {
            let end = position(&b[value_start..], b',').map_or(b.len(), |c| value_start + c);
            (&self.raw[value_start..end], end)
        };
        // Past the comma after the field, if any.
        self.pos = end + usize::from(b.get(end) == Some(&b','));
        Some((key, value, value_start))
    }
}

/// The index of the first `byte` in `b`.
#[inline(always)]
fn position(b: &[u8], byte: u8) -> Option<usize> {
    b.iter().position(|&c| c == byte)
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

    /// The text from the third field on. Count and sum are numbers (or words such as
    /// `NaN`), so it follows their commas: no list is read to find it.
    fn third_field(&self) -> Option<&'page str> {
        let b = self.raw.as_bytes();
        let first = position(b, b',')?;
        let second = first + 1 + position(&b[first + 1..], b',')?;
        self.raw.get(second + 1..)
    }

    /// The list `key:[..]`. A classic histogram's buckets and a summary's quantiles are its
    /// third and last field (the value was validated: nothing follows a list in that
    /// place), so the list is the rest of the value without a search for its `]`; a
    /// native histogram's fields come first, and are walked.
    fn list(&self, key: &str) -> Option<&'page str> {
        let in_third = self
            .third_field()
            .and_then(|rest| rest.strip_prefix(key)?.strip_prefix(":[")?.strip_suffix(']'));
        in_third.or_else(|| self.field(key))
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
        // The third field tells: count and sum are numbers, so it follows their commas
        // (no list is read to find it).
        if self.raw.starts_with('g') {
            CompositeKind::GaugeHistogram
        } else if self
            .third_field()
            .is_some_and(|rest| rest.starts_with("quantile:"))
        {
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
        match number_field(self.raw.as_bytes(), 0) {
            Some((count, _)) => count,
            None => self
                .fields()
                .next()
                .and_then(|(_, v, _)| parse_float(v))
                .unwrap_or(f64::NAN),
        }
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
        let b = self.raw.as_bytes();
        // The count is a number or a word: its comma ends it, whatever it reads as.
        match position(b, b',').and_then(|comma| number_field(b, comma + 1)) {
            Some((sum, _)) => sum,
            None => self
                .fields()
                .nth(1)
                .and_then(|(_, v, _)| parse_float(v))
                .unwrap_or(f64::NAN),
        }
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
        self.list("bucket").map(CompositePairs::new)
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
        self.list("quantile").map(CompositePairs::new)
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
    /// The items not read yet, `None` once the list is read.
    rest: Option<&'page str>,
}

impl<'page> CompositePairs<'page> {
    fn new(list: &'page str) -> Self {
        // An empty list has no items.
        CompositePairs {
            rest: Some(list).filter(|l| !l.is_empty()),
        }
    }

    /// The next item's two texts; `None` at the end, or at an item that is not a pair
    /// (the value was validated, so only a list this type does not read has one).
    fn next_text(&mut self) -> Option<(&'page str, &'page str)> {
        let rest = self.rest?;
        let b = rest.as_bytes();
        let item = match position(b, b',') {
            Some(comma) => {
                self.rest = Some(&rest[comma + 1..]);
                &rest[..comma]
            }
            None => {
                self.rest = None;
                rest
            }
        };
        let colon = position(item.as_bytes(), b':')?;
        Some((&item[..colon], &item[colon + 1..]))
    }

    /// The pairs as written (`("0.1", "8")`): a bucket's `le` label is its bound's text.
    pub(crate) fn texts(mut self) -> impl Iterator<Item = (&'page str, &'page str)> {
        std::iter::from_fn(move || self.next_text())
    }
}

impl Iterator for CompositePairs<'_> {
    type Item = (f64, f64);
    fn next(&mut self) -> Option<(f64, f64)> {
        // The usual pair is read where it stands (its numbers scanned once); anything
        // else (a `NaN` count) is split first, then read.
        let rest = self.rest?;
        let b = rest.as_bytes();
        let in_place = pair_at(b, 0).and_then(|(first, second, end)| match b.get(end) {
            None => Some((first, second, None)),
            Some(b',') => Some((first, second, Some(&rest[end + 1..]))),
            Some(_) => None,
        });
        if let Some((first, second, after)) = in_place {
            self.rest = after;
            return Some((first, second));
        }
        let (a, b) = self.next_text()?;
        Some((parse_float(a)?, parse_float(b)?))
    }
}

/// The number of the field at `b[start..]` (`key:number`, then a comma or the end), read
/// in place, and the index past it; `None` for any other value (a list, a word such as
/// `NaN`), which [`Fields`] reads.
#[inline]
fn number_field(b: &[u8], start: usize) -> Option<(f64, usize)> {
    let colon = start + position(b.get(start..)?, b':')?;
    let (value, end) = real_at(b, colon + 1)?;
    matches!(b.get(end), None | Some(b',')).then_some((value, end))
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

/// Where the field whose value text starts at `at` starts: at its key, before the colon;
/// a text without a key (see [`Fields`]) has no colon either, and starts where its value
/// does.
fn field_start(key: &str, at: usize) -> usize {
    if key.is_empty() {
        return at;
    }
    at - key.len() - 1
}

/// The fields of a composite value being validated, in order.
struct Cursor<'a> {
    fields: std::iter::Peekable<Fields<'a>>,
    len: usize,
}

impl<'a> Cursor<'a> {
    /// The next field, which must be `wanted`: its value text and offset.
    fn take(&mut self, wanted: &'static str) -> Result<(&'a str, usize), Broken> {
        self.take_or(wanted, wanted)
    }

    /// [`Cursor::take`], its error naming `expected` (every field that could stand there).
    fn take_or(&mut self, wanted: &'static str, expected: &'static str) -> Result<(&'a str, usize), Broken> {
        match self.fields.next() {
            Some((key, text, at)) if key == wanted => Ok((text, at)),
            Some((key, _, at)) => Err((field_start(key, at), CompositeRule::Expected(expected))),
            None => Err((self.len, CompositeRule::Expected(expected))),
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
    if let Some(close) = usual(line.as_bytes(), open) {
        let value = CompositeValue {
            raw: &line[open + 1..close],
        };
        return Ok((value, close + 1));
    }
    read_in_full(line, open)
}

/// [`composite`] field by field: every value, and the errors with their offsets.
fn read_in_full(line: &str, open: usize) -> Result<(CompositeValue<'_>, usize), Fail> {
    let rest = &line[open..];
    // A space inside the value (none is allowed) is where the error is; without one,
    // the value is unclosed from its `{`.
    let close = match rest.find(['}', ' ']) {
        Some(c) if rest.as_bytes()[c] == b'}' => c,
        stop => {
            let at = stop.map_or(open, |c| open + c);
            return Err((at, ParseErrorKind::Expected("'}' to close the composite value")));
        }
    };
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
        let at = field_start(key, at);
        return Err(fail((at, CompositeRule::Expected("'}' after the last field"))));
    }
    Ok((value, open + close + 1))
}

/// The usual composite value, validated in one pass over its bytes: a histogram's classic
/// buckets (`count:..,sum:..,bucket:[..]`) or a summary's quantiles, every number a
/// real number. Returns the index of its `}` in `b`, whose `{` is at `open`; `None` for any
/// other value (a gauge histogram, native fields, a word such as `NaN`, a broken rule),
/// which [`composite`] then reads field by field, as it reads every value it refuses.
/// Accepts only what that reading accepts, and ends where it ends (the proptest
/// `the_usual_values_read_as_the_general_reading_does`).
#[inline]
fn usual(b: &[u8], open: usize) -> Option<usize> {
    let after = |i: usize, text: &[u8]| (b.get(i..i + text.len())? == text).then_some(i + text.len());
    let (count, i) = real_at(b, after(open + 1, b"count:")?)?;
    let (sum, i) = real_at(b, after(i, b",sum:")?)?;
    if count < 0.0 {
        return None;
    }
    let close = if let Some(i) = after(i, b",bucket:[") {
        let (inf, close) = usual_buckets(b, i)?;
        (inf == count).then_some(close)?
    } else {
        let i = after(i, b",quantile:[")?;
        if count.fract() != 0.0 || count.is_infinite() || sum < 0.0 {
            return None;
        }
        usual_quantiles(b, i)?
    };
    (b.get(close) == Some(&b'}')).then_some(close)
}

/// The real number (the ABNF's `realnumber`) at `b[i..]` and the index past it: a plain
/// decimal at once, else (more digits than an `f64` holds exactly, such as Go's bounds
/// `24.999999999999996`) its text read by the full parser.
#[inline(always)]
fn real_at(b: &[u8], i: usize) -> Option<(f64, usize)> {
    if let Some(found) = decimal_prefix(b, i) {
        return Some(found);
    }
    let rest = b.get(i..)?;
    let len = position_not(rest, |c| {
        matches!(c, b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-')
    });
    let text = std::str::from_utf8(&rest[..len]).ok()?;
    if !is_real_number(text) {
        return None;
    }
    // Digits and signs only, so no word (`inf`) for `parse` to read: an infinity is a
    // number out of range, which the full reading refuses too.
    let value: f64 = text.parse().ok().filter(|v: &f64| v.is_finite())?;
    Some((value, i + len))
}

/// The list item `first:second` at `b[i..]`, both numbers read where they stand (`first`
/// may be `+Inf` or `-Inf`, as a bucket's bound), and the index past `second`; `None`
/// for anything else.
#[inline(always)]
fn pair_at(b: &[u8], i: usize) -> Option<(f64, f64, usize)> {
    let (first, colon) = match b.get(i..i + 4) {
        Some(b"+Inf") => (f64::INFINITY, i + 4),
        Some(b"-Inf") => (f64::NEG_INFINITY, i + 4),
        _ => real_at(b, i)?,
    };
    if b.get(colon) != Some(&b':') {
        return None;
    }
    let (second, end) = real_at(b, colon + 1)?;
    Some((first, second, end))
}

/// The length of the leading run of `b` whose bytes are `in_run`.
#[inline(always)]
fn position_not(b: &[u8], in_run: impl Fn(u8) -> bool) -> usize {
    b.iter().position(|&c| !in_run(c)).unwrap_or(b.len())
}

/// The classic buckets from `b[i]` to their `]`, as [`usual`] reads them: the `+Inf`
/// bucket's count and the index past the `]`.
#[inline]
fn usual_buckets(b: &[u8], mut i: usize) -> Option<(f64, usize)> {
    let mut last: Option<(f64, f64)> = None;
    loop {
        let (bound, value, end) = pair_at(b, i)?;
        // Only the first bound may be `-Inf`: a later one is not above the one before.
        if value < 0.0 || last.is_some_and(|(l, v)| bound <= l || value < v) {
            return None;
        }
        last = Some((bound, value));
        match b.get(end)? {
            b',' if bound != f64::INFINITY => i = end + 1,
            b']' if bound == f64::INFINITY => return Some((value, end + 1)),
            _ => return None,
        }
    }
}

/// The quantiles from `b[i]` to their `]` (at least one), as [`usual`] reads them: the
/// index past the `]`.
#[inline]
fn usual_quantiles(b: &[u8], mut i: usize) -> Option<usize> {
    let mut last: Option<f64> = None;
    loop {
        let (q, value, end) = pair_at(b, i)?;
        // An infinite `q` is out of range: left to the general reading, which refuses it.
        if !(0.0..=1.0).contains(&q) || last.is_some_and(|l| q <= l) || value < 0.0 {
            return None;
        }
        last = Some(q);
        match b.get(end)? {
            b',' => i = end + 1,
            b']' => return Some(end + 1),
            _ => return None,
        }
    }
}

/// The fields in the ABNF's order and the rules on their values.
///
/// Which values the specification forbids (MUST) and which it only discourages (SHOULD
/// NOT, accepted here): a histogram's count and bucket values may not be negative but
/// may be NaN; a summary's count and sum may be neither; a gauge histogram's values are
/// gauges, "negative ... allowed" as results of arithmetic (a rate of change), so its
/// buckets need not grow either.
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
    let summary = !gauge && cursor.next_is("quantile");
    if (summary && count.is_nan()) || (!gauge && count < 0.0) {
        return Err((count_at, CompositeRule::NegativeCount));
    }
    if summary {
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
        native_fields(cursor, gauge, (count, count_at), sum)?;
    }
    if !native || cursor.next_is("bucket") {
        // After the sum, the value's type is still open: name every field it could take.
        let expected = match (native, gauge) {
            (true, _) => "bucket",
            (false, true) => "bucket or schema",
            (false, false) => "bucket, quantile or schema",
        };
        let (list, at) = cursor.take_or("bucket", expected)?;
        let inf = bucket_list(list, at, gauge)?;
        if inf != count && !(inf.is_nan() && count.is_nan()) {
            return Err((at, CompositeRule::CountDoesNotMatchInfBucket));
        }
    }
    Ok(())
}

/// `schema`, `zero_threshold`, `zero_count` and the optional span and bucket lists, and
/// the rule between the count (at its offset) and the buckets: equal to their sum, or
/// above it by the NaN observations, which make the sum NaN.
fn native_fields(
    cursor: &mut Cursor<'_>,
    gauge: bool,
    (count, count_at): (f64, usize),
    sum: f64,
) -> Result<(), Broken> {
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
    if !gauge && zero_count < 0.0 {
        return Err((at, CompositeRule::NegativeCount));
    }
    let mut buckets = Tally::of(zero_count);
    for (spans_key, buckets_key) in [
        ("negative_spans", "negative_buckets"),
        ("positive_spans", "positive_buckets"),
    ] {
        if cursor.next_is(spans_key) {
            let (spans, spans_at) = cursor.take(spans_key)?;
            let (values, values_at) = cursor.take(buckets_key)?;
            let (last, covered) = covered_buckets(spans, spans_at)?;
            if last.is_some_and(|last| last > overflow_index(schema)) {
                return Err((spans_at, CompositeRule::BucketBeyondOverflow));
            }
            buckets_tally(values, values_at, gauge, covered, spans_at, &mut buckets)?;
        }
    }
    // A native list left over is out of the ABNF's order (buckets before their spans,
    // positive before negative): said where it stands, before the count is compared with
    // buckets not read.
    const LISTS: [&str; 4] = [
        "negative_spans",
        "negative_buckets",
        "positive_spans",
        "positive_buckets",
    ];
    if let Some(key) = LISTS.into_iter().find(|key| cursor.next_is(key)) {
        let (_, at) = cursor.take(key)?;
        let order =
            "the native lists in order: negative_spans, negative_buckets, positive_spans, positive_buckets";
        return Err((field_start(key, at), CompositeRule::Expected(order)));
    }
    if buckets.breaks(count, sum) {
        return Err((count_at, CompositeRule::CountDoesNotMatchBuckets));
    }
    Ok(())
}

/// The sum of a native histogram's bucket values, and whether every one is a whole number
/// small enough to add exactly.
#[derive(Clone, Copy)]
struct Tally {
    total: f64,
    exact: bool,
}

impl Tally {
    fn of(value: f64) -> Self {
        Tally {
            total: 0.0,
            exact: true,
        }
        .add(value)
    }

    fn add(self, value: f64) -> Self {
        let total = self.total + value;
        Tally {
            total,
            exact: self.exact && value.fract() == 0.0 && total.abs() < 2f64.powi(53),
        }
    }

    /// Whether `count` breaks "the Count value MUST be equal to the sum of the ... Native
    /// Buckets": NaN observations are in the count and no bucket (and make the sum NaN), so
    /// with a NaN sum the count may be above the buckets. Whole buckets are compared
    /// exactly; fractions (a float histogram, a rate's buckets) differ from their count by
    /// rounding alone, up to a part in a billion here. A NaN count is not compared (the
    /// fields allow it).
    fn breaks(self, count: f64, sum: f64) -> bool {
        if count.is_nan() || self.total.is_nan() {
            return false;
        }
        // No number of observations is infinite, nor a bucket's: no NaN observation and
        // no rounding explains an infinity on either side, only the same one on both.
        if count.is_infinite() || self.total.is_infinite() {
            return count != self.total;
        }
        let rounding = if self.exact {
            0.0
        } else {
            1e-9 * count.abs().max(self.total.abs())
        };
        let above = count - self.total > rounding;
        let below = self.total - count > rounding;
        below || (above && !sum.is_nan())
    }
}

/// The highest bucket index a schema has: the overflow bucket above the one that holds
/// the largest finite float (the upper bound of bucket `i` is `2^(i * 2^-schema)`, and
/// that float is below `2^1024`). "Native Buckets beyond ... MUST NOT be used."
fn overflow_index(schema: i64) -> i64 {
    let holds_max = if schema >= 0 {
        1024 << schema
    } else {
        1024 >> -schema
    };
    holds_max + 1
}

/// The index of the last bucket the spans cover (`None` without any bucket), and how
/// many they cover: the first span's offset is its first index, each later one the gap
/// after the span before.
fn covered_buckets(spans: &str, spans_at: usize) -> Result<(Option<i64>, u64), Broken> {
    let mut next: i64 = 0;
    let mut last = None;
    let mut covered: u64 = 0;
    for (k, (span, item_at)) in items(spans, spans_at).enumerate() {
        let broken = (item_at, CompositeRule::Expected("'offset:length' spans"));
        let (offset, length) = span.split_once(':').ok_or(broken)?;
        let offset = integer(offset, k == 0)
            .filter(|o| i32::try_from(*o).is_ok())
            .ok_or(broken)?;
        let length = integer(length, false)
            .filter(|l| u32::try_from(*l).is_ok())
            .ok_or(broken)?;
        next += offset;
        if length > 0 {
            last = Some(next + length - 1);
        }
        next += length;
        covered += length as u64;
    }
    Ok((last, covered))
}

/// Reads a native bucket list into `tally`: numbers, not negative but in a gauge
/// histogram, as many as the spans (at `spans_at`) cover.
fn buckets_tally(
    values: &str,
    values_at: usize,
    gauge: bool,
    covered: u64,
    spans_at: usize,
    tally: &mut Tally,
) -> Result<(), Broken> {
    let mut count: u64 = 0;
    for (bucket, item_at) in items(values, values_at) {
        let value = parse_float(bucket).ok_or((item_at, CompositeRule::Expected("a number")))?;
        if !gauge && value < 0.0 {
            return Err((item_at, CompositeRule::NegativeCount));
        }
        *tally = tally.add(value);
        count += 1;
    }
    if covered != count {
        return Err((spans_at, CompositeRule::SpansDoNotMatchBuckets));
    }
    Ok(())
}

/// The items of a list's text (its brackets left out), each with its offset in the
/// composite text, which the list's starts past the `[` at `at`: where an error in it
/// points.
fn items(list: &str, at: usize) -> impl Iterator<Item = (&str, usize)> {
    let mut item_at = at + 1;
    list.split(',')
        .filter(move |_| !list.is_empty())
        .map(move |item| {
            let here = item_at;
            item_at += item.len() + 1;
            (item, here)
        })
}

/// Classic buckets: sorted, unique, ending at `+Inf`; in a histogram, their values not
/// negative and not decreasing. Returns the `+Inf` bucket's value. Each error points at
/// its item (the list's text starts past the `[` at `at`).
fn bucket_list(list: &str, at: usize, gauge: bool) -> Result<f64, Broken> {
    let mut last: Option<(f64, f64)> = None;
    let count = if list.is_empty() {
        0
    } else {
        list.split(',').count()
    };
    for (k, (item, item_at)) in items(list, at).enumerate() {
        let (bound, value) = item
            .split_once(':')
            .ok_or((item_at, CompositeRule::Expected("'bound:count' buckets")))?;
        let value_at = item_at + bound.len() + 1;
        let is_last = k + 1 == count;
        let bound = match bound {
            "+Inf" if is_last => f64::INFINITY,
            "-Inf" if k == 0 && !is_last => f64::NEG_INFINITY,
            b if is_real_number(b) => {
                parse_float(b).ok_or((item_at, CompositeRule::Expected("a bucket bound")))?
            }
            _ => return Err((item_at, CompositeRule::Expected("a real number bucket bound"))),
        };
        let value = parse_float(value).ok_or((value_at, CompositeRule::Expected("a number")))?;
        if !gauge && value < 0.0 {
            return Err((value_at, CompositeRule::NegativeCount));
        }
        if let Some((last_bound, last_value)) = last {
            if bound <= last_bound {
                return Err((item_at, CompositeRule::BucketsOutOfOrder));
            }
            if !gauge && value < last_value {
                return Err((value_at, CompositeRule::BucketValuesDecrease));
            }
        }
        last = Some((bound, value));
    }
    match last {
        Some((bound, value)) if bound == f64::INFINITY => Ok(value),
        _ => Err((at, CompositeRule::InfBucketMissing)),
    }
}

/// Quantiles: real numbers in `[0, 1]`, increasing, values not negative. Each error
/// points at its item.
fn quantile_list(list: &str, at: usize) -> Result<(), Broken> {
    let mut last = None;
    for (item, item_at) in items(list, at) {
        let (q, value) = item
            .split_once(':')
            .ok_or((item_at, CompositeRule::Expected("'quantile:value' pairs")))?;
        let value_at = item_at + q.len() + 1;
        if !is_real_number(q) {
            return Err((item_at, CompositeRule::Expected("a real number quantile")));
        }
        let q = parse_float(q).ok_or((item_at, CompositeRule::Expected("a quantile")))?;
        if !(0.0..=1.0).contains(&q) {
            return Err((item_at, CompositeRule::QuantileOutOfRange));
        }
        if last.is_some_and(|l| q <= l) {
            return Err((item_at, CompositeRule::QuantilesOutOfOrder));
        }
        let value = parse_float(value).ok_or((value_at, CompositeRule::Expected("a number")))?;
        if value < 0.0 {
            return Err((value_at, CompositeRule::NegativeQuantileValue));
        }
        last = Some(q);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
