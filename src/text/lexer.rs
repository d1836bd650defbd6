//! The lexer of label sets: quoted strings, `name="value"` terms, blanks, and the
//! lexical rules that differ between the two formats.

use super::names::label_name_len;
use crate::error::ParseErrorKind;
use crate::swar::{has_byte, word_at};

/// A failure: the byte offset in the line of the first wrong character, and what is wrong
/// (the page iterator turns the offset into a line and column).
pub(crate) type Fail = (usize, ParseErrorKind);

/// The lexical rules that differ between the two text formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dialect {
    /// OpenMetrics: no whitespace inside braces, no trailing comma.
    pub openmetrics: bool,
    /// OpenMetrics 2.0: a quoted metric name only first in the braces.
    pub version2: bool,
    /// Refuse escapes other than `\\`, `\"`, `\n` in label values (Prometheus text only).
    pub strict_escapes: bool,
}

/// Scans a quoted string whose opening quote is at `start`; returns the index just past the
/// closing quote and whether the content holds a backslash.
#[inline(always)]
pub(crate) fn scan_quoted(bytes: &[u8], start: usize, strict_escapes: bool) -> Result<(usize, bool), Fail> {
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

/// Scans one term starting at `i` (after any separator). A quoted name keeps its escapes
/// (text 1.0.0 and OpenMetrics allow them): readers unescape it on request, as values.
#[inline(always)]
pub(crate) fn scan_term(bytes: &[u8], i: usize, dialect: Dialect) -> Result<Term, Fail> {
    let name = match bytes.get(i) {
        Some(b'"') => {
            let (end, _) = scan_quoted(bytes, i, dialect.strict_escapes)?;
            if end - i == 2 {
                // Empty: where a name stands alone (no `=`), it was the metric's name.
                let after = dialect.skip_blanks(bytes, end);
                let kind = match bytes.get(after) {
                    Some(b',' | b'}') => ParseErrorKind::InvalidMetricName,
                    _ => ParseErrorKind::InvalidLabelName,
                };
                return Err((i, kind));
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
