//! A `{...}` label set, scanned and checked: its terms (read by the lexer), the limits a
//! caller set, and duplicate names. Both sample paths check duplicates here, one way
//! ([`SeenNames`]); the fast path's label loop is its own only for speed.

use std::collections::HashSet;

use super::escape::UnescapedBytes;
use super::labels::Labels;
use super::lexer::{scan_term, Dialect, Fail, Term};
use super::limits::Limits;
use crate::error::ParseErrorKind;
use crate::swar::{low_bytes, word_or_tail};

/// Label sets of up to this many labels are checked for duplicate names with [`SeenNames`]
/// and no allocation. Larger ones (hostile, or generated) are left by the fast path to the
/// general path, which checks them with a hash set, so their cost stays linear.
pub(crate) const FILTERED_LABELS: usize = 64;

/// The label names of one set seen so far, as a 256-bit filter: a bit per name, from a
/// hash of its length and first eight bytes. A name whose bit is new cannot repeat an
/// earlier one; a name whose bit is set is compared with the earlier names in full (rare,
/// even with vLLM's 37-label info metric).
#[derive(Debug, Default)]
pub(crate) struct SeenNames {
    bits: [u64; 4],
}

/// [`name_key`] of `__name__`: a label of that name repeats the sample's metric name
/// (Prometheus' scrape refuses the pair as a duplicate label).
const NAME_LABEL_KEY: usize =
    ((u64::from_le_bytes(*b"__name__") ^ 8u64 << 56).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as usize;

/// Whether a label name is `__name__`, which a sample's metric name already is.
#[inline(always)]
pub(crate) fn is_name_label(name: &[u8]) -> bool {
    name == b"__name__"
}

impl SeenNames {
    /// The filter of a sample's labels: `__name__` counts as seen (the metric name is that
    /// label), so such a label is compared in full, as a possible duplicate, and costs the
    /// other names nothing.
    #[inline(always)]
    pub(crate) fn with_metric_name() -> Self {
        let mut bits = [0; 4];
        bits[NAME_LABEL_KEY >> 6] = 1 << (NAME_LABEL_KEY & 63);
        SeenNames { bits }
    }

    /// Records the label name `b[i..i + len]` (`len >= 1`); whether an earlier name of the
    /// set may be the same.
    #[inline(always)]
    pub(crate) fn insert(&mut self, b: &[u8], i: usize, len: usize) -> bool {
        let key = name_key(b, i, len);
        let (word, bit) = (key >> 6, 1u64 << (key & 63));
        let maybe = self.bits[word] & bit != 0;
        self.bits[word] |= bit;
        maybe
    }
}

/// An 8-bit hash of the label name `b[i..i + len]` (`len >= 1`): its length and first eight
/// bytes, multiplied by the golden ratio. The same for a name wherever it is read from.
#[inline(always)]
fn name_key(b: &[u8], i: usize, len: usize) -> usize {
    let head = word_or_tail(b, i) & low_bytes(len.min(8));
    ((head ^ (len as u64) << 56).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as usize
}

/// A `{...}` label set as scanned.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LabelSet<'page> {
    /// Index just past the closing `}`.
    pub end: usize,
    /// The text between the braces, still escaped.
    pub raw: &'page str,
    pub count: u32,
    /// A quoted metric name written inside the braces (`{"my.metric", a="b"}`).
    pub quoted_name: Option<&'page str>,
}

/// Scans a `{...}` label set whose `{` is at `open`, within `limits`. `named`: a metric name
/// came before it, so a `__name__` label would repeat it (as would one beside a quoted name
/// inside the braces); an exemplar's set, or a sample's with no name, may hold one.
#[inline(always)]
pub(crate) fn label_set<'line>(
    line: &'line str,
    open: usize,
    dialect: Dialect,
    limits: &Limits,
    named: bool,
) -> Result<LabelSet<'line>, Fail> {
    let bytes = line.as_bytes();
    let mut i = open + 1;
    let mut count: usize = 0;
    let mut first_over_limit = None;
    let mut quoted_name = None;
    let mut names = Duplicates {
        seen: SeenNames::with_metric_name(),
        name_label: None,
        many: None,
    };
    loop {
        i = dialect.skip_blanks(bytes, i);
        if bytes.get(i) == Some(&b'}') {
            // An empty set, or a trailing comma (allowed in the text format only), after
            // a label or a quoted name.
            if (count > 0 || quoted_name.is_some()) && dialect.openmetrics {
                return Err((i, ParseErrorKind::InvalidLabelName));
            }
            break;
        }
        let term = scan_term(bytes, i, dialect)?;
        match term.value {
            None => {
                // Prometheus reads a quoted name anywhere in the braces, once; OpenMetrics
                // 2.0 only first.
                if quoted_name.is_some() || count > 0 && dialect.version2 {
                    return Err((term.end, ParseErrorKind::Expected("'=' after label name")));
                }
                quoted_name = Some(&line[term.name.0..term.name.1]);
            }
            Some(value) => {
                count += 1;
                if count > limits.labels && first_over_limit.is_none() {
                    first_over_limit = Some(term.name.0);
                }
                check_lengths(line, &term, value, limits)?;
                let earlier = Labels::new(&line[open + 1..i], count as u32 - 1, dialect);
                names.check(line, term.name, earlier, count)?;
            }
        }
        i = dialect.skip_blanks(bytes, term.end);
        match bytes.get(i) {
            Some(b',') => i += 1,
            Some(b'}') => break,
            None => return Err((i, ParseErrorKind::Expected("'}' to close the label set"))),
            Some(_) => return Err((i, ParseErrorKind::Expected("',' or '}' after a label"))),
        }
    }
    if let Some(at) = names.name_label.filter(|_| named || quoted_name.is_some()) {
        return Err((at, ParseErrorKind::DuplicateLabel("__name__".to_string())));
    }
    if let Some(at) = first_over_limit {
        let (limit, labels) = (limits.labels, count);
        return Err((at, ParseErrorKind::LabelLimit { limit, labels }));
    }
    Ok(LabelSet {
        end: i + 1,
        raw: &line[open + 1..i],
        count: count as u32,
        quoted_name,
    })
}

/// Prometheus' `label_name_length_limit` and `label_value_length_limit` for one term whose
/// value is `line[value.0..value.1]`.
#[inline(always)]
fn check_lengths(line: &str, term: &Term, value: (usize, usize), limits: &Limits) -> Result<(), Fail> {
    let name_length = term.name.1 - term.name.0;
    if name_length > limits.label_name_length {
        let (limit, length) = (limits.label_name_length, name_length);
        return Err((
            term.name.0,
            ParseErrorKind::LabelNameLengthLimit { limit, length },
        ));
    }
    let raw = &line[value.0..value.1];
    if raw.len() > limits.label_value_length {
        // Prometheus measures the value as stored: unescaped.
        let length = if raw.contains('\\') {
            UnescapedBytes::new(raw, true).count()
        } else {
            raw.len()
        };
        if length > limits.label_value_length {
            let limit = limits.label_value_length;
            return Err((value.0, ParseErrorKind::LabelValueLengthLimit { limit, length }));
        }
    }
    Ok(())
}

/// The duplicate-name check of the general path: [`SeenNames`] up to [`FILTERED_LABELS`],
/// an exact set beyond (one allocation for such a set; real label sets never get there).
/// The filter starts with `__name__`'s bit, so that a label of that name, which repeats a
/// metric name if the sample has one, is found without a comparison per label.
struct Duplicates<'line> {
    seen: SeenNames,
    /// Where the first `__name__` label is.
    name_label: Option<usize>,
    many: Option<HashSet<&'line str>>,
}

impl<'line> Duplicates<'line> {
    /// Whether the label name `text`, at `at`, is `__name__`; the first such is noted.
    #[cold]
    fn note_name_label(&mut self, text: &str, at: usize) -> bool {
        let is = is_name_label(text.as_bytes());
        if is && self.name_label.is_none() {
            self.name_label = Some(at);
        }
        is
    }

    /// Checks the `count`-th name, `line[name.0..name.1]`, against the `earlier` labels.
    #[inline(always)]
    fn check(
        &mut self,
        line: &'line str,
        name: (usize, usize),
        earlier: Labels<'line>,
        count: usize,
    ) -> Result<(), Fail> {
        let text = &line[name.0..name.1];
        let duplicate = if text.contains('\\') {
            // An escaped name is compared unescaped; only another escaped name can equal
            // it (an unescaped one holds no backslash, quote or newline), and both are rare.
            earlier.has_name(text.as_bytes())
        } else if count <= FILTERED_LABELS {
            self.seen.insert(line.as_bytes(), name.0, text.len())
                && !self.note_name_label(text, name.0)
                && earlier.has_name(text.as_bytes())
        } else {
            self.note_name_label(text, name.0);
            let names = self
                .many
                .get_or_insert_with(|| earlier.iter().map(|(n, _)| n).collect());
            !names.insert(text)
        };
        if duplicate {
            return Err((name.0, ParseErrorKind::DuplicateLabel(text.to_string())));
        }
        Ok(())
    }
}
