//! Label sets and label values: borrowed, still-escaped slices of the page, unescaped only
//! on request.

use std::borrow::Cow;
use std::fmt;

use super::escape::{unescape, UnescapedBytes};
use super::lexer::{scan_term, Dialect};
use crate::fingerprint;
use crate::swar::{bytes_equal, word_or_tail};

/// The labels of a sample or exemplar: the text between the braces, still escaped.
///
/// Iterating re-reads that text; nothing is allocated per label, so a `Labels` is 32 bytes
/// whatever the label count: the text's address and length, the count, how to read it, and
/// the lengths of the last four labels' names and values, as the parser measured them, so
/// that iterating them needs no second scan.
///
/// # Example
/// ```
/// let sample = promrate::parse("a{path=\"/x\",code=\"200\"} 1\n")
///     .next().unwrap()?.into_sample().unwrap();
/// let labels = sample.labels();
/// assert_eq!(labels.len(), 2);
/// assert!(labels.get("code").unwrap() == "200");
/// let names: Vec<&str> = labels.iter().map(|(name, _)| name).collect();
/// assert_eq!(names, ["path", "code"]);
/// # Ok::<(), promrate::ParseError>(())
/// ```
#[derive(Clone, Copy)]
pub struct Labels<'page> {
    raw: &'page str,
    len: u32,
    dialect: Dialect,
    /// Known to hold only `name="value"` terms joined by single commas, with unquoted
    /// names, no blanks and no backslash (the fast path's shape): iteration then needs no
    /// lexer, only a search for each closing quote.
    simple: bool,
    /// Of a simple set, the lengths of the last labels' names and values, as [`Spans`]
    /// records them.
    spans: Spans,
}

/// The name and value lengths of the last [`Spans::LABELS`] labels of a simple set, one
/// byte each, as the parser measured them: the last label's name length in the low byte,
/// its value's length in the next, the label before it in the two above, and so on.
/// A zero name length means "not recorded" (names are never empty): such a label (one
/// whose name or value is over 255 bytes, or one before the last four) is found by scanning.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(crate) struct Spans(u64);

impl Spans {
    /// How many labels a record holds.
    pub(crate) const LABELS: usize = 4;

    /// Records the next label, with a name of `name` bytes and a value of `value`; the
    /// oldest of the record falls off. Lengths over 255 record "not recorded".
    #[inline(always)]
    pub(crate) fn push(&mut self, name: usize, value: usize) {
        let span = if (name | value) < 256 {
            (name | value << 8) as u64
        } else {
            0
        };
        self.0 = self.0 << 16 | span;
    }

    /// The name and value lengths of the label with `after` labels after it, if recorded.
    #[inline(always)]
    fn get(self, after: usize) -> Option<(usize, usize)> {
        let from_last = Some(after).filter(|&back| back < Self::LABELS)?;
        let span = self.0 >> (16 * from_last);
        let name = (span & 0xff) as usize;
        (name != 0).then_some((name, (span >> 8 & 0xff) as usize))
    }
}

impl<'page> Labels<'page> {
    pub(crate) fn new(raw: &'page str, len: u32, dialect: Dialect) -> Self {
        Labels {
            raw,
            len,
            dialect,
            simple: false,
            spans: Spans::default(),
        }
    }

    /// Labels the caller checked to be of the simple shape (see the field), with the
    /// lengths it recorded.
    pub(crate) fn simple(raw: &'page str, len: u32, spans: Spans) -> Self {
        Labels {
            raw,
            len,
            dialect: Dialect {
                openmetrics: false,
                version2: false,
                strict_escapes: true,
            },
            simple: true,
            spans,
        }
    }

    /// An empty label set.
    ///
    /// # Example
    /// ```
    /// assert!(promrate::Labels::empty().is_empty());
    /// ```
    pub fn empty() -> Labels<'static> {
        Labels::simple("", 0, Spans::default())
    }

    /// The number of labels (a metric name written inside the braces is not a label).
    ///
    /// # Example
    /// ```
    /// let s = promrate::parse("{\"a.b\",c=\"d\"} 1").next().unwrap()?.into_sample().unwrap();
    /// assert_eq!(s.labels().len(), 1);
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether there are no labels.
    ///
    /// # Example
    /// ```
    /// let s = promrate::parse("a{} 1").next().unwrap()?.into_sample().unwrap();
    /// assert!(s.labels().is_empty());
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The raw text between the braces, escapes included.
    ///
    /// # Example
    /// ```
    /// let s = promrate::parse("a{b=\"c\"} 1").next().unwrap()?.into_sample().unwrap();
    /// assert_eq!(s.labels().as_raw(), "b=\"c\"");
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    pub fn as_raw(&self) -> &'page str {
        self.raw
    }

    /// Iterates `(name, value)` in input order. A quoted label name comes without its
    /// quotes and with its escapes as written (`\\`, `\"`, `\n`, as in values), so nothing
    /// is allocated: [`Labels::iter_unescaped`] resolves them.
    ///
    /// # Example
    /// ```
    /// let s = promrate::parse("a{x=\"1\",y=\"2\"} 1").next().unwrap()?.into_sample().unwrap();
    /// assert_eq!(s.labels().iter().count(), 2);
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    pub fn iter(&self) -> LabelsIter<'page> {
        LabelsIter {
            raw: self.raw,
            pos: 0,
            dialect: self.dialect,
            simple: self.simple,
            spans: self.spans,
            remaining: self.len as usize,
            quotes: Quotes::default(),
        }
    }

    /// Iterates `(name, value)` in input order with each name's escapes resolved (it
    /// borrows unless the name holds an escape, which only a quoted name can).
    ///
    /// # Example
    /// ```
    /// let s = promrate::parse(r#"{"a","label\"name\n"="v"} 1"#).next().unwrap()?.into_sample().unwrap();
    /// let (name, value) = s.labels().iter_unescaped().next().unwrap();
    /// assert_eq!(name, "label\"name\n");
    /// assert!(value == "v");
    /// assert_eq!(s.labels().iter().next().unwrap().0, r#"label\"name\n"#);
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    pub fn iter_unescaped(&self) -> impl Iterator<Item = (Cow<'page, str>, LabelValue<'page>)> + 'page {
        self.iter().map(|(name, value)| (unescape(name, true), value))
    }

    /// Whether the set is known to hold no escape and no quoted name (the fast path's
    /// shape), so that raw names and values are the unescaped ones.
    pub(crate) fn is_plain(&self) -> bool {
        self.simple
    }

    /// Each label with a value and its fingerprint (`crate::fingerprint::of_label`), in
    /// input order, its value read as written where the set is known to hold no escape.
    /// A label whose value is empty is no part of a series' identity: Prometheus drops it
    /// when it scrapes, so `x{foo=""}` is the series `x`.
    fn keyed(&self) -> impl Iterator<Item = KeyedLabel<'page>> + 'page {
        let simple = self.simple;
        self.present().map(move |(name, value)| {
            let key = if simple {
                fingerprint::of_label(name, value.raw)
            } else {
                // A quoted name's escapes resolved, as its value's are.
                fingerprint::of_label(&unescape(name, true), value)
            };
            KeyedLabel { name, value, key }
        })
    }

    /// The labels with a value, `(name, value)` in input order: what a series' identity is
    /// made of ([`Labels::keyed`]).
    pub(crate) fn present(&self) -> impl Iterator<Item = (&'page str, LabelValue<'page>)> + 'page {
        self.iter().filter(|(_, value)| !value.raw.is_empty())
    }

    /// [`Labels::keyed`] into `keyed`: a new series' labels are interned from these, so
    /// that the set is read and hashed once.
    pub(crate) fn keyed_into(&self, keyed: &mut smallvec::SmallVec<[KeyedLabel<'page>; 8]>) {
        keyed.clear();
        keyed.extend(self.keyed());
    }

    /// The order-independent fingerprint of the set from `seed` (`crate::fingerprint`):
    /// `seed` XOR each label's.
    pub(crate) fn fingerprint(&self, seed: u64) -> u64 {
        self.keyed().fold(seed, |acc, label| acc ^ label.key)
    }

    /// Of a simple set, the label whose text (`name="value"`) holds the byte at `offset`
    /// of the set, if its lengths are recorded (one of the last [`Spans::LABELS`]): its
    /// index, where its value starts, and where its closing quote is. `None` also for the
    /// comma after a label.
    #[inline]
    pub(crate) fn recorded_label_at(&self, offset: usize) -> Option<(usize, usize, usize)> {
        if !self.simple {
            return None;
        }
        let mut end = self.raw.len();
        for after in 0..Spans::LABELS.min(self.len as usize) {
            let (name, value) = self.spans.get(after)?;
            let close = end.checked_sub(1)?;
            let value_start = close.checked_sub(value)?;
            let name_start = value_start.checked_sub(name + 2)?;
            if offset >= name_start {
                let index = self.len as usize - 1 - after;
                return (offset <= close).then_some((index, value_start, close));
            }
            end = name_start.checked_sub(1)?;
        }
        None
    }

    /// Of a simple set, the length of its last label's value, if recorded.
    #[inline(always)]
    pub(crate) fn last_value_len(&self) -> Option<usize> {
        if !self.simple {
            return None;
        }
        self.spans.get(0).map(|(_, value)| value)
    }

    /// Of a simple set, the text of the label with `after` labels after it, if its
    /// lengths are recorded, given `end`, the index just past its closing quote: where its
    /// name starts, its name's length, where its value starts, and its closing quote.
    #[inline(always)]
    pub(crate) fn recorded_label(&self, after: usize, end: usize) -> Option<RecordedLabel> {
        if !self.simple {
            return None;
        }
        let (name, value) = self.spans.get(after)?;
        let close = end.checked_sub(1)?;
        let value_start = close.checked_sub(value)?;
        let name_start = value_start.checked_sub(name + 2)?;
        Some(RecordedLabel {
            name_start,
            name_len: name,
            value_start,
            close,
        })
    }

    /// Whether a label is named `name` (bytes): both paths' duplicate check on a hit of
    /// `SeenNames`' filter.
    pub(crate) fn has_name(&self, name: &[u8]) -> bool {
        if !name.contains(&b'\\') {
            return self.iter().any(|(n, _)| n.as_bytes() == name);
        }
        // Escaped names (quoted UTF-8 names) are the same name when they unescape alike.
        let wanted = || UnescapedBytes::new(std::str::from_utf8(name).unwrap_or(""), true);
        self.iter()
            .any(|(n, _)| UnescapedBytes::new(n, true).eq(wanted()))
    }

    /// The value of the label called `name`, if present.
    ///
    /// # Example
    /// ```
    /// let s = promrate::parse("a{x=\"1\"} 1").next().unwrap()?.into_sample().unwrap();
    /// assert!(s.labels().get("x").unwrap() == "1");
    /// assert!(s.labels().get("y").is_none());
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    pub fn get(&self, name: &str) -> Option<LabelValue<'page>> {
        // `name` is unescaped; a quoted name on the page may hold escapes.
        self.iter()
            .find(|(n, _)| *n == name || n.contains('\\') && LabelValue::from_raw(n) == name)
            .map(|(_, v)| v)
    }
}

/// Where one label of a simple set lies in its text ([`Labels::recorded_label`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct RecordedLabel {
    pub name_start: usize,
    pub name_len: usize,
    pub value_start: usize,
    /// The value's closing quote.
    pub close: usize,
}

impl fmt::Debug for Labels<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<'page> IntoIterator for Labels<'page> {
    type Item = (&'page str, LabelValue<'page>);
    type IntoIter = LabelsIter<'page>;
    fn into_iter(self) -> LabelsIter<'page> {
        self.iter()
    }
}

impl<'page> IntoIterator for &Labels<'page> {
    type Item = (&'page str, LabelValue<'page>);
    type IntoIter = LabelsIter<'page>;
    fn into_iter(self) -> LabelsIter<'page> {
        self.iter()
    }
}

/// Iterator over the labels of a [`Labels`], in input order.
///
/// # Example
/// ```
/// let s = promrate::parse("a{x=\"1\"} 1").next().unwrap()?.into_sample().unwrap();
/// let mut it = s.labels().iter();
/// assert_eq!(it.next().map(|(n, v)| (n, v.raw())), Some(("x", "1")));
/// assert!(it.next().is_none());
/// # Ok::<(), promrate::ParseError>(())
/// ```
#[derive(Clone)]
pub struct LabelsIter<'page> {
    raw: &'page str,
    pos: usize,
    dialect: Dialect,
    simple: bool,
    /// The recorded lengths of the last labels (of a simple set).
    spans: Spans,
    /// The labels not yet read.
    remaining: usize,
    /// The quotes of a simple set still ahead, a word at a time, for the labels the record
    /// does not hold.
    quotes: Quotes,
}

impl<'page> LabelsIter<'page> {
    /// The next `name="value"` of a simple label set: names hold no quote and values no
    /// quote or backslash, so the quotes alternate, opening (after `=`) and closing, and the
    /// set is read as the sequence of its quotes, each word looked at once.
    #[inline(always)]
    fn next_simple(&mut self) -> Option<(&'page str, LabelValue<'page>)> {
        let bytes = self.raw.as_bytes();
        let start = self.pos;
        if start >= bytes.len() {
            return None;
        }
        self.remaining = self.remaining.checked_sub(1)?;
        if let Some((name_len, value_len)) = self.spans.get(self.remaining) {
            let open = start + name_len + 1;
            let close = open + 1 + value_len;
            self.pos = close + 2;
            // The quotes of this label are behind: a scan after it starts afresh.
            self.quotes.mask = 0;
            let name = self.raw.get(start..start + name_len)?;
            let value = self.raw.get(open + 1..close)?;
            return Some((name, LabelValue { raw: value }));
        }
        if self.quotes.next < start {
            // No quote is left before `start` (the labels before were read from the record,
            // or the last word ended at a closing quote): the scan resumes here.
            self.quotes.next = start;
        }
        let open = self.quotes.next(bytes)?;
        let close = self.quotes.next(bytes)?;
        // Past the closing quote and the comma.
        self.pos = close + 2;
        let name = self.raw.get(start..open.checked_sub(1)?)?;
        let value = self.raw.get(open + 1..close)?;
        Some((name, LabelValue { raw: value }))
    }
}

/// The positions of the quotes of a byte string, in order, eight bytes at a time. Where
/// fewer than eight are left, the string's last eight are read instead (a label set ends
/// with a quote, and a byte loop there cost more than the scan before it).
#[derive(Clone, Copy, Default)]
struct Quotes {
    /// Index of the next word to read.
    next: usize,
    /// The quotes not yet taken of the word before `next`, one high bit each.
    mask: u64,
}

impl Quotes {
    /// The index of the next quote in `bytes` (the same string on every call).
    #[inline(always)]
    fn next(&mut self, bytes: &[u8]) -> Option<usize> {
        while self.mask == 0 {
            if self.next >= bytes.len() {
                return None;
            }
            self.mask = quotes_at(bytes, self.next);
            self.next += 8;
        }
        let found = self.next - 8 + (self.mask.trailing_zeros() / 8) as usize;
        self.mask &= self.mask - 1;
        Some(found)
    }
}

/// A high bit for each quote among the eight bytes at `i` (fewer at the end of `bytes`),
/// exact for every byte: the caller takes several.
#[inline(always)]
fn quotes_at(bytes: &[u8], i: usize) -> u64 {
    // The zeros read past the end are not quotes.
    bytes_equal(word_or_tail(bytes, i), b'"')
}

/// A parsed label and its fingerprint ([`Labels::keyed`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct KeyedLabel<'page> {
    pub name: &'page str,
    pub value: LabelValue<'page>,
    pub key: u64,
}

impl<'page> Iterator for LabelsIter<'page> {
    type Item = (&'page str, LabelValue<'page>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.simple {
            return self.next_simple();
        }
        let bytes = self.raw.as_bytes();
        loop {
            // The text was validated when the sample was parsed; this replay stops quietly
            // at anything unexpected instead of panicking.
            let mut i = self.pos;
            while matches!(bytes.get(i), Some(b' ' | b'\t' | b',')) {
                i += 1;
            }
            if i >= bytes.len() {
                self.pos = i;
                return None;
            }
            let term = scan_term(bytes, i, self.dialect).ok()?;
            self.pos = term.end;
            if let Some((vs, ve)) = term.value {
                let name = self.raw.get(term.name.0..term.name.1)?;
                let value = self.raw.get(vs..ve)?;
                return Some((name, LabelValue { raw: value }));
            }
        }
    }
}

/// A label value as written, with lazy unescaping of `\\`, `\"` and `\n`.
///
/// Comparing with `==` against a `&str` compares the *unescaped* value without allocating.
///
/// # Example
/// ```
/// let s = promrate::parse("a{x=\"say \\\"hi\\\"\"} 1").next().unwrap()?.into_sample().unwrap();
/// let v = s.labels().get("x").unwrap();
/// assert_eq!(v.raw(), r#"say \"hi\""#);
/// assert_eq!(v.unescaped(), r#"say "hi""#);
/// assert!(v == r#"say "hi""#);
/// # Ok::<(), promrate::ParseError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct LabelValue<'page> {
    raw: &'page str,
}

impl<'page> LabelValue<'page> {
    /// Wraps raw (escaped) label-value text.
    ///
    /// # Example
    /// ```
    /// let v = promrate::LabelValue::from_raw(r"a\nb");
    /// assert_eq!(v.unescaped(), "a\nb");
    /// ```
    pub fn from_raw(raw: &'page str) -> Self {
        LabelValue { raw }
    }

    /// The value as written, escapes included.
    ///
    /// # Example
    /// ```
    /// assert_eq!(promrate::LabelValue::from_raw(r"a\\b").raw(), r"a\\b");
    /// ```
    pub fn raw(&self) -> &'page str {
        self.raw
    }

    /// The value with escapes resolved; borrows when there is nothing to resolve.
    /// Unknown escapes (accepted in OpenMetrics and lenient mode) are kept as written.
    ///
    /// # Example
    /// ```
    /// use std::borrow::Cow;
    /// assert!(matches!(promrate::LabelValue::from_raw("plain").unescaped(), Cow::Borrowed("plain")));
    /// ```
    pub fn unescaped(&self) -> Cow<'page, str> {
        unescape(self.raw, true)
    }

    /// Iterates the bytes of the unescaped value without allocating.
    ///
    /// # Example
    /// ```
    /// let v = promrate::LabelValue::from_raw(r"a\nb");
    /// assert_eq!(v.unescaped_bytes().collect::<Vec<u8>>(), b"a\nb");
    /// ```
    pub fn unescaped_bytes(&self) -> UnescapedBytes<'page> {
        UnescapedBytes::new(self.raw, true)
    }
}

/// A value fingerprints as its unescaped text, read where it stands unless it holds an
/// escape.
impl fingerprint::Value for LabelValue<'_> {
    fn label_fingerprint(self, name: &str) -> u64 {
        if self.raw.contains('\\') {
            fingerprint::of_label_bytes(name, self.unescaped_bytes())
        } else {
            self.raw.label_fingerprint(name)
        }
    }
}

impl fmt::Debug for LabelValue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.unescaped(), f)
    }
}

impl fmt::Display for LabelValue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.unescaped())
    }
}

impl PartialEq<str> for LabelValue<'_> {
    fn eq(&self, other: &str) -> bool {
        if !self.raw.as_bytes().contains(&b'\\') {
            return self.raw == other;
        }
        self.unescaped_bytes().eq(other.bytes())
    }
}

impl PartialEq<&str> for LabelValue<'_> {
    fn eq(&self, other: &&str) -> bool {
        *self == **other
    }
}

#[cfg(test)]
mod tests;
