//! The lexer of label sets: quoted strings, `name="value"` terms, blanks, and the
//! lexical rules that differ between the two formats.

use std::collections::HashSet;

use super::escape::UnescapedBytes;
use super::labels::Labels;
use super::limits::Limits;
use super::names::label_name_len;
use super::swar::{has_byte, word_at};
use crate::error::ParseErrorKind;

/// The lexical rules that differ between the two text formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dialect {
    /// OpenMetrics: no whitespace inside braces, no trailing comma.
    pub openmetrics: bool,
    /// Refuse escapes other than `\\`, `\"`, `\n` in label values (Prometheus text only).
    pub strict_escapes: bool,
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
        let Some(chunk) = word_at(bytes, i) else { break };
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

/// Index of the first byte at or after `i` that is not a space or tab.
#[inline(always)]
pub(crate) fn skip_blanks(bytes: &[u8], mut i: usize) -> usize {
    while matches!(bytes.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    i
}

impl Dialect {
    /// Where the next token starts: blanks are skipped in the text format, and are an
    /// error for the caller to find in OpenMetrics.
    #[inline(always)]
    pub(crate) fn skip_blanks(self, bytes: &[u8], i: usize) -> usize {
        if self.openmetrics {
            i
        } else {
            skip_blanks(bytes, i)
        }
    }
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
    let j = dialect.skip_blanks(bytes, after_name);
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
    let j = dialect.skip_blanks(bytes, j + 1);
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

/// Two-bit fingerprint (a 128-bit Bloom filter) of a label name for the duplicate check:
/// only when every bit of a name is already set are earlier names compared in full.
#[inline(always)]
pub(crate) fn name_bits(name: &[u8]) -> u128 {
    let first = name.first().copied().unwrap_or(0) as u32;
    let last = name.last().copied().unwrap_or(0) as u32;
    let second = name.get(1).copied().unwrap_or(0) as u32;
    let h = (name.len() as u32).wrapping_mul(0x9E37_79B1)
        ^ first.wrapping_mul(0x85EB_CA77)
        ^ last.wrapping_mul(0xC2B2_AE3D)
        ^ second;
    let h = h ^ (h >> 15);
    (1u128 << (h & 127)) | (1u128 << ((h >> 7) & 127))
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

/// Label sets up to this size are checked for duplicate names with a Bloom filter and no
/// allocation; larger ones (hostile, or generated) with a hash set.
const BLOOM_LABELS: usize = 64;

/// Scans a `{...}` label set whose `{` is at `open`, within `limits`.
#[inline(always)]
pub(crate) fn label_set<'line>(
    line: &'line str,
    open: usize,
    dialect: Dialect,
    limits: &Limits,
) -> Result<LabelSet<'line>, (usize, ParseErrorKind)> {
    let bytes = line.as_bytes();
    let mut i = open + 1;
    let mut count: usize = 0;
    let mut first_over_limit = None;
    let mut many: Option<HashSet<&str>> = None;
    let mut quoted_name = None;
    let mut seen: u128 = 0;
    loop {
        i = dialect.skip_blanks(bytes, i);
        if bytes.get(i) == Some(&b'}') {
            // An empty set, or a trailing comma (allowed in the text format only).
            if count > 0 && dialect.openmetrics {
                return Err((i, ParseErrorKind::InvalidLabelName));
            }
            break;
        }
        let term = scan_term(bytes, i, dialect)?;
        match term.value {
            None => {
                if quoted_name.is_some() || count > 0 && dialect.openmetrics {
                    return Err((term.end, ParseErrorKind::Expected("'=' after label name")));
                }
                quoted_name = Some(&line[term.name.0..term.name.1]);
            }
            Some((value_start, value_end)) => {
                count += 1;
                if count > limits.labels && first_over_limit.is_none() {
                    first_over_limit = Some(term.name.0);
                }
                let name = &line[term.name.0..term.name.1];
                if name.len() > limits.label_name_length {
                    let (limit, length) = (limits.label_name_length, name.len());
                    return Err((
                        term.name.0,
                        ParseErrorKind::LabelNameLengthLimit { limit, length },
                    ));
                }
                let raw = &line[value_start..value_end];
                if raw.len() > limits.label_value_length {
                    // Prometheus measures the value as stored: unescaped.
                    let length = if raw.contains('\\') {
                        UnescapedBytes::new(raw, true).count()
                    } else {
                        raw.len()
                    };
                    if length > limits.label_value_length {
                        let limit = limits.label_value_length;
                        return Err((
                            value_start,
                            ParseErrorKind::LabelValueLengthLimit { limit, length },
                        ));
                    }
                }
                let duplicate = if count <= BLOOM_LABELS {
                    let bit = name_bits(name.as_bytes());
                    let maybe = seen & bit == bit;
                    seen |= bit;
                    maybe
                        && Labels::new(&line[open + 1..i], count as u32, dialect)
                            .iter()
                            .any(|(n, _)| n == name)
                } else {
                    // Past the filter's useful size: an exact set, so hostile label counts
                    // cost linear time (one allocation for such a sample; real label sets
                    // never get here).
                    let names = many.get_or_insert_with(|| {
                        Labels::new(&line[open + 1..i], count as u32, dialect)
                            .iter()
                            .map(|(n, _)| n)
                            .collect()
                    });
                    !names.insert(name)
                };
                if duplicate {
                    return Err((term.name.0, ParseErrorKind::DuplicateLabel(name.to_string())));
                }
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
    if let Some(at) = first_over_limit {
        return Err((
            at,
            ParseErrorKind::LabelLimit {
                limit: limits.labels,
                labels: count,
            },
        ));
    }
    Ok(LabelSet {
        end: i + 1,
        raw: &line[open + 1..i],
        count: count as u32,
        quoted_name,
    })
}

/// End of a space-delimited token starting at `i` (values and timestamps are short, so a
/// plain loop).
#[inline(always)]
pub(crate) fn token_end(bytes: &[u8], mut i: usize, tabs: bool) -> usize {
    while let Some(&b) = bytes.get(i) {
        if b == b' ' || (tabs && b == b'\t') {
            break;
        }
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

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
