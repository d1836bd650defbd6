//! Label sets as borrowed, still-escaped slices; values are unescaped only on request.

use std::borrow::Cow;
use std::fmt;

use crate::error::ParseErrorKind;

/// Byte classes for names, looked up instead of branching on ranges in the hot loop.
const NAME_START: u8 = 1;
const NAME_CONTINUE: u8 = 2;
const COLON: u8 = 4;

static NAME_TABLE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        if c.is_ascii_alphabetic() || c == b'_' {
            table[i] = NAME_START | NAME_CONTINUE;
        } else if c.is_ascii_digit() {
            table[i] = NAME_CONTINUE;
        } else if c == b':' {
            table[i] = COLON;
        }
        i += 1;
    }
    table
};

/// High bit set in each byte of `v` (all bytes < 0x80) within `lo..=hi`.
#[inline(always)]
fn bytes_in_range(v: u64, lo: u8, hi: u8) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let at_least_lo = v + ONES * u64::from(0x80 - lo);
    let above_hi = v + ONES * u64::from(0x7f - hi);
    at_least_lo & !above_hi & HIGH
}

/// High bit set in each byte of `chunk` that is a name character: `[a-zA-Z0-9_]`, and ':'
/// when `colon`. Eight bytes per step instead of a table lookup per byte.
#[inline(always)]
fn name_bytes(chunk: u64, colon: bool) -> u64 {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let ascii = !chunk & HIGH;
    let low7 = chunk & !HIGH;
    let folded = low7 | 0x2020_2020_2020_2020;
    let mut hits = bytes_in_range(folded, b'a', b'z')
        | bytes_in_range(low7, b'0', b'9')
        | bytes_in_range(low7, b'_', b'_');
    if colon {
        hits |= bytes_in_range(low7, b':', b':');
    }
    hits & ascii
}

/// Length of the run of name characters at the start of `bytes` (first byte not checked
/// for being a valid *first* character).
#[inline(always)]
fn name_run(bytes: &[u8], colon: bool) -> usize {
    let mut i = 0;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let chunk = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        let misses = !name_bytes(chunk, colon) & 0x8080_8080_8080_8080;
        if misses != 0 {
            return i + (misses.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    let continue_class = if colon {
        NAME_CONTINUE | COLON
    } else {
        NAME_CONTINUE
    };
    i + bytes[i..]
        .iter()
        .position(|&b| NAME_TABLE[b as usize] & continue_class == 0)
        .unwrap_or(bytes.len() - i)
}

/// Length of the metric name (`[a-zA-Z_:][a-zA-Z0-9_:]*`) at the start of `bytes`.
#[inline(always)]
pub(crate) fn metric_name_len(bytes: &[u8]) -> usize {
    match bytes.first() {
        Some(&b) if NAME_TABLE[b as usize] & (NAME_START | COLON) != 0 => name_run(bytes, true),
        _ => 0,
    }
}

/// Length of the label name (`[a-zA-Z_][a-zA-Z0-9_]*`) at the start of `bytes`.
#[inline(always)]
pub(crate) fn label_name_len(bytes: &[u8]) -> usize {
    match bytes.first() {
        Some(&b) if NAME_TABLE[b as usize] & NAME_START != 0 => name_run(bytes, false),
        _ => 0,
    }
}

/// Whether `name` is a valid unquoted metric name.
pub(crate) fn is_metric_name(name: &str) -> bool {
    !name.is_empty() && metric_name_len(name.as_bytes()) == name.len()
}

/// Whether `name` is a valid unquoted label name.
pub(crate) fn is_label_name(name: &str) -> bool {
    !name.is_empty() && label_name_len(name.as_bytes()) == name.len()
}

/// A metric-name byte for comparison and hashing, with ':' read as '_' when `normalize`
/// (vLLM's OpenMetrics output renames `vllm:x` samples to `vllm_x`).
pub(crate) fn normalized_name_byte(b: u8, normalize: bool) -> u8 {
    if normalize && b == b':' {
        b'_'
    } else {
        b
    }
}

/// Whether metric name `a` equals the concatenation of `b_parts`, optionally normalized.
pub(crate) fn names_equal(a: &str, b_parts: &[&str], normalize: bool) -> bool {
    let b = b_parts.iter().flat_map(|p| p.bytes());
    a.len() == b_parts.iter().map(|p| p.len()).sum::<usize>()
        && a.bytes()
            .zip(b)
            .all(|(x, y)| normalized_name_byte(x, normalize) == normalized_name_byte(y, normalize))
}

/// The lexical rules that differ between the two text formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dialect {
    /// OpenMetrics: no whitespace inside braces, no trailing comma.
    pub openmetrics: bool,
    /// Refuse escapes other than `\\`, `\"`, `\n` in label values (Prometheus text only).
    pub strict_escapes: bool,
}

/// High bit set in each byte of `chunk` that equals `byte` (exact: no false positives
/// below the first match, which is all the callers use).
#[inline(always)]
pub(crate) fn has_byte(chunk: u64, byte: u8) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let x = chunk ^ (ONES * u64::from(byte));
    x.wrapping_sub(ONES) & !x & HIGH
}

/// Scans a quoted string whose opening quote is at `start`; returns the index just past the
/// closing quote and whether the content holds a backslash.
#[inline(always)]
pub(crate) fn scan_quoted(
    bytes: &[u8],
    start: usize,
    strict_escapes: bool,
) -> Result<(usize, bool), (usize, ParseErrorKind)> {
    let mut i = start + 1;
    let mut escaped = false;
    // Label values are mostly short: test eight bytes at a time for '"' or '\\' (SWAR)
    // before handing long values to memchr's vector search.
    let short_end = bytes.len().min(i + 64);
    while i + 8 <= short_end {
        let chunk = u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap_or([0; 8]));
        let hits = has_byte(chunk, b'"') | has_byte(chunk, b'\\');
        if hits != 0 {
            i += (hits.trailing_zeros() / 8) as usize;
            break;
        }
        i += 8;
    }
    while i < short_end {
        match bytes[i] {
            b'"' => return Ok((i + 1, escaped)),
            b'\\' => break,
            _ => i += 1,
        }
    }
    loop {
        let rest = bytes.get(i..).unwrap_or(&[]);
        match memchr::memchr2(b'"', b'\\', rest) {
            None => return Err((start, ParseErrorKind::UnterminatedString)),
            Some(off) => {
                let at = i + off;
                if bytes[at] == b'"' {
                    return Ok((at + 1, escaped));
                }
                escaped = true;
                match bytes.get(at + 1) {
                    None => return Err((start, ParseErrorKind::UnterminatedString)),
                    Some(b'\\' | b'"' | b'n') => {}
                    Some(&other) if strict_escapes => {
                        let c = std::str::from_utf8(&bytes[at + 1..])
                            .ok()
                            .and_then(|s| s.chars().next())
                            .unwrap_or(other as char);
                        return Err((at, ParseErrorKind::InvalidEscape(c)));
                    }
                    Some(_) => {}
                }
                i = at + 2;
            }
        }
    }
}

/// One `name="value"` term of a label set, or a quoted metric name term.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Term {
    pub name: (usize, usize),
    /// `None` for a bare quoted string: the metric name written inside the braces.
    pub value: Option<(usize, usize)>,
    /// Index just past the term.
    pub end: usize,
}

#[inline(always)]
fn skip_blanks(bytes: &[u8], mut i: usize, dialect: Dialect) -> usize {
    if !dialect.openmetrics {
        while matches!(bytes.get(i), Some(b' ' | b'\t')) {
            i += 1;
        }
    }
    i
}

/// Scans one term starting at `i` (after any separator). Quoted names may not hold escapes.
#[inline(always)]
pub(crate) fn scan_term(bytes: &[u8], i: usize, dialect: Dialect) -> Result<Term, (usize, ParseErrorKind)> {
    let name = match bytes.get(i) {
        Some(b'"') => {
            let (end, escaped) = scan_quoted(bytes, i, true)?;
            if escaped {
                return Err((i, ParseErrorKind::EscapeInQuotedName));
            }
            if end - i == 2 {
                return Err((i, ParseErrorKind::InvalidLabelName));
            }
            (i + 1, end - 1)
        }
        _ => {
            let len = label_name_len(&bytes[i.min(bytes.len())..]);
            if len == 0 {
                return Err((i, ParseErrorKind::InvalidLabelName));
            }
            (i, i + len)
        }
    };
    let quoted = bytes.get(i) == Some(&b'"');
    let after_name = if quoted { name.1 + 1 } else { name.1 };
    let j = skip_blanks(bytes, after_name, dialect);
    match bytes.get(j) {
        Some(b'=') => {}
        Some(b',' | b'}') if quoted => {
            return Ok(Term {
                name,
                value: None,
                end: after_name,
            })
        }
        _ => return Err((j, ParseErrorKind::Expected("'=' after label name"))),
    }
    let j = skip_blanks(bytes, j + 1, dialect);
    if bytes.get(j) != Some(&b'"') {
        return Err((j, ParseErrorKind::Expected("'\"' to open the label value")));
    }
    let (end, _) = scan_quoted(bytes, j, dialect.strict_escapes)?;
    Ok(Term {
        name,
        value: Some((j + 1, end - 1)),
        end,
    })
}

/// The labels of a sample or exemplar: the text between the braces, still escaped.
///
/// Iterating re-reads that text; nothing is stored per label, so a `Labels` is two words.
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
pub struct Labels<'a> {
    raw: &'a str,
    len: u32,
    dialect: Dialect,
}

impl<'a> Labels<'a> {
    pub(crate) fn new(raw: &'a str, len: u32, dialect: Dialect) -> Self {
        Labels { raw, len, dialect }
    }

    /// An empty label set.
    ///
    /// # Example
    /// ```
    /// assert!(promrate::Labels::empty().is_empty());
    /// ```
    pub fn empty() -> Labels<'static> {
        Labels {
            raw: "",
            len: 0,
            dialect: Dialect {
                openmetrics: false,
                strict_escapes: false,
            },
        }
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
    pub fn as_raw(&self) -> &'a str {
        self.raw
    }

    /// Iterates `(name, value)` in input order.
    ///
    /// # Example
    /// ```
    /// let s = promrate::parse("a{x=\"1\",y=\"2\"} 1").next().unwrap()?.into_sample().unwrap();
    /// assert_eq!(s.labels().iter().count(), 2);
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    pub fn iter(&self) -> LabelsIter<'a> {
        LabelsIter {
            raw: self.raw,
            pos: 0,
            dialect: self.dialect,
        }
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
    pub fn get(&self, name: &str) -> Option<LabelValue<'a>> {
        self.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }
}

impl fmt::Debug for Labels<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for Labels<'a> {
    type Item = (&'a str, LabelValue<'a>);
    type IntoIter = LabelsIter<'a>;
    fn into_iter(self) -> LabelsIter<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for &Labels<'a> {
    type Item = (&'a str, LabelValue<'a>);
    type IntoIter = LabelsIter<'a>;
    fn into_iter(self) -> LabelsIter<'a> {
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
pub struct LabelsIter<'a> {
    raw: &'a str,
    pos: usize,
    dialect: Dialect,
}

impl<'a> Iterator for LabelsIter<'a> {
    type Item = (&'a str, LabelValue<'a>);

    fn next(&mut self) -> Option<Self::Item> {
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
pub struct LabelValue<'a> {
    raw: &'a str,
}

impl<'a> LabelValue<'a> {
    /// Wraps raw (escaped) label-value text.
    ///
    /// # Example
    /// ```
    /// let v = promrate::LabelValue::from_raw(r"a\nb");
    /// assert_eq!(v.unescaped(), "a\nb");
    /// ```
    pub fn from_raw(raw: &'a str) -> Self {
        LabelValue { raw }
    }

    /// The value as written, escapes included.
    ///
    /// # Example
    /// ```
    /// assert_eq!(promrate::LabelValue::from_raw(r"a\\b").raw(), r"a\\b");
    /// ```
    pub fn raw(&self) -> &'a str {
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
    pub fn unescaped(&self) -> Cow<'a, str> {
        unescape(self.raw, true)
    }

    /// Iterates the bytes of the unescaped value without allocating.
    ///
    /// # Example
    /// ```
    /// let v = promrate::LabelValue::from_raw(r"a\nb");
    /// assert_eq!(v.unescaped_bytes().collect::<Vec<u8>>(), b"a\nb");
    /// ```
    pub fn unescaped_bytes(&self) -> UnescapedBytes<'a> {
        UnescapedBytes {
            raw: self.raw.as_bytes(),
            pos: 0,
            quote: true,
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

/// Bytes of an escaped text with `\\`, `\n` (and `\"` where it is an escape) resolved.
///
/// # Example
/// ```
/// let bytes: Vec<u8> = promrate::LabelValue::from_raw(r#"\"q\""#).unescaped_bytes().collect();
/// assert_eq!(bytes, b"\"q\"");
/// ```
#[derive(Clone, Debug)]
pub struct UnescapedBytes<'a> {
    raw: &'a [u8],
    pos: usize,
    quote: bool,
}

impl Iterator for UnescapedBytes<'_> {
    type Item = u8;
    #[inline]
    fn next(&mut self) -> Option<u8> {
        let b = *self.raw.get(self.pos)?;
        self.pos += 1;
        if b != b'\\' {
            return Some(b);
        }
        match self.raw.get(self.pos) {
            Some(b'\\') => {
                self.pos += 1;
                Some(b'\\')
            }
            Some(b'n') => {
                self.pos += 1;
                Some(b'\n')
            }
            Some(b'"') if self.quote => {
                self.pos += 1;
                Some(b'"')
            }
            _ => Some(b'\\'),
        }
    }
}

/// Resolves escapes; `quote` says whether `\"` is an escape (it is not in 0.0.4 HELP text).
pub(crate) fn unescape(raw: &str, quote: bool) -> Cow<'_, str> {
    if !raw.as_bytes().contains(&b'\\') {
        return Cow::Borrowed(raw);
    }
    let bytes: Vec<u8> = UnescapedBytes {
        raw: raw.as_bytes(),
        pos: 0,
        quote,
    }
    .collect();
    // Escapes only replace ASCII with ASCII, so the result stays valid UTF-8.
    Cow::Owned(
        String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
    )
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
pub struct HelpText<'a> {
    raw: &'a str,
    quote: bool,
}

impl<'a> HelpText<'a> {
    pub(crate) fn new(raw: &'a str, quote: bool) -> Self {
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
    pub fn raw(&self) -> &'a str {
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
    pub fn unescaped(&self) -> Cow<'a, str> {
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
        UnescapedBytes {
            raw: self.raw.as_bytes(),
            pos: 0,
            quote: self.quote,
        }
        .eq(other.bytes())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(is_metric_name("vllm:generation_tokens_total"));
        assert!(is_metric_name(":a"));
        assert!(!is_metric_name("0a"));
        assert!(!is_metric_name("a.b"));
        assert!(!is_metric_name(""));
        assert!(is_label_name("_x1"));
        assert!(!is_label_name("a:b"));
        assert!(!is_label_name("1"));
    }

    #[test]
    fn swar_name_scan_agrees_with_a_byte_loop() {
        let reference = |b: &[u8], colon: bool| {
            b.iter()
                .position(|&c| !(c.is_ascii_alphanumeric() || c == b'_' || colon && c == b':'))
                .unwrap_or(b.len())
        };
        let mut inputs: Vec<Vec<u8>> = vec![b"node_cpu_seconds_total{".to_vec(), b"a:b:c d".to_vec()];
        for c in 0..=255u8 {
            for at in 0..17 {
                let mut v = b"abcdefghijklmnopqrstuvwxyz_0123456789".to_vec();
                v.insert(at, c);
                inputs.push(v);
            }
        }
        for input in inputs {
            for colon in [true, false] {
                assert_eq!(
                    name_run(&input[..], colon),
                    reference(&input, colon),
                    "{input:?} {colon}"
                );
            }
        }
    }

    #[test]
    fn unescaping() {
        let cases = [
            (r"plain", true, "plain"),
            (r"a\\b", true, "a\\b"),
            (r"a\nb", true, "a\nb"),
            (r#"a\"b"#, true, "a\"b"),
            (r#"a\"b"#, false, "a\\\"b"),
            (r"a\zb", true, "a\\zb"),
            (r"trailing\", true, "trailing\\"),
            (r"\\\n", true, "\\\n"),
        ];
        for (raw, quote, want) in cases {
            assert_eq!(unescape(raw, quote), want, "{raw:?}");
            if quote {
                assert!(LabelValue::from_raw(raw) == want, "{raw:?}");
            }
        }
        assert!(LabelValue::from_raw(r"a\nb") != "a\\nb");
    }

    #[test]
    fn quoted_scan() {
        let strict = |s: &str| scan_quoted(s.as_bytes(), 0, true);
        assert_eq!(strict(r#""abc" rest"#), Ok((5, false)));
        assert_eq!(strict(r#""a\"c""#), Ok((6, true)));
        assert_eq!(
            strict(r#""abc"#).unwrap_err().1,
            ParseErrorKind::UnterminatedString
        );
        assert_eq!(
            strict(r#""a\"#).unwrap_err().1,
            ParseErrorKind::UnterminatedString
        );
        assert_eq!(strict(r#""a\zc""#), Err((2, ParseErrorKind::InvalidEscape('z'))));
        assert_eq!(scan_quoted(br#""a\zc""#, 0, false), Ok((6, true)));
    }
}
