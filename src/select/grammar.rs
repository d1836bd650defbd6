//! The PromQL selector grammar, with `nom`: names (the crate's one name grammar), match
//! operators, the three string literal forms, and positions for errors.

use std::fmt;

use nom::branch::alt;
use nom::bytes::complete::tag;
use nom::character::complete::multispace0;
use nom::combinator::map;
use nom::{IResult, Parser as _};

use super::{MatchOp, Matcher, Selector};
use crate::error::{SelectorError, SelectorErrorKind};
use crate::text::names::{label_name, metric_name};

/// Writes a double-quoted PromQL string literal that [`Selector::parse`] reads back.
pub(super) fn write_promql_string(f: &mut impl fmt::Write, s: &str) -> fmt::Result {
    f.write_str("\"")?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            c if (c as u32) < 0x20 || c as u32 == 0x7f => write!(f, "\\x{:02x}", c as u32)?,
            c if c.is_control() => write!(f, "\\u{:04x}", c as u32)?,
            c => f.write_char(c)?,
        }
    }
    f.write_str("\"")
}

fn match_op(i: &str) -> IResult<&str, MatchOp> {
    alt((
        map(tag("=~"), |_| MatchOp::RegexMatch),
        map(tag("!~"), |_| MatchOp::RegexNotMatch),
        map(tag("!="), |_| MatchOp::NotEqual),
        map(tag("="), |_| MatchOp::Equal),
    ))
    .parse(i)
}

/// Parses a PromQL string literal (`"..."`, `'...'` with Go escapes, or a raw backtick
/// string) at the start of `i`. Errors carry the offset within `i`.
pub(super) fn string_literal(i: &str) -> Result<(&str, String), (usize, SelectorErrorKind)> {
    let quote = match i.chars().next() {
        Some(q @ ('"' | '\'' | '`')) => q,
        _ => return Err((0, SelectorErrorKind::Expected("a quoted string"))),
    };
    let body = &i[1..];
    if quote == '`' {
        let end = body.find('`').ok_or((0, SelectorErrorKind::UnterminatedString))?;
        return Ok((&body[end + 1..], body[..end].to_string()));
    }
    // Bytes, not a string: Go's byte escapes above 0x7F may spell a character together.
    let mut bytes = Vec::new();
    // Where the first such escape is: a string they leave invalid UTF-8 is refused there
    // (Go keeps it as bytes; a Rust string cannot).
    let mut byte_escapes = None;
    let mut chars = body.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            c if c == quote => {
                let out = String::from_utf8(bytes)
                    .map_err(|_| (byte_escapes.unwrap_or(0), SelectorErrorKind::InvalidEscape))?;
                return Ok((&body[at + 1..], out));
            }
            '\n' => return Err((0, SelectorErrorKind::UnterminatedString)),
            '\\' => {
                let (_, e) = chars.next().ok_or((0, SelectorErrorKind::UnterminatedString))?;
                let simple = match e {
                    'a' => Some('\x07'),
                    'b' => Some('\x08'),
                    'f' => Some('\x0c'),
                    'n' => Some('\n'),
                    'r' => Some('\r'),
                    't' => Some('\t'),
                    'v' => Some('\x0b'),
                    '\\' => Some('\\'),
                    q if q == quote => Some(q),
                    _ => None,
                };
                if let Some(s) = simple {
                    push_char(&mut bytes, s);
                    continue;
                }
                let (digits, radix) = match e {
                    'x' => (2, 16),
                    'u' => (4, 16),
                    'U' => (8, 16),
                    '0'..='7' => (2, 8),
                    _ => return Err((1 + at, SelectorErrorKind::InvalidEscape)),
                };
                let mut code = if radix == 8 { e.to_digit(8).unwrap_or(0) } else { 0 };
                for _ in 0..digits {
                    let (_, d) = chars.next().ok_or((1 + at, SelectorErrorKind::InvalidEscape))?;
                    let d = d
                        .to_digit(radix)
                        .ok_or((1 + at, SelectorErrorKind::InvalidEscape))?;
                    code = code * radix + d;
                }
                if matches!(e, '0'..='7') && code > 0xff {
                    // Octal past a byte (`\400`): Go refuses it too.
                    return Err((1 + at, SelectorErrorKind::InvalidEscape));
                }
                if matches!(e, 'x' | '0'..='7') && code > 0x7f {
                    // A byte in Go: valid where the string's bytes make UTF-8 (`\xC3\xA9`
                    // is `é`), which is checked when the string ends.
                    bytes.push(code as u8);
                    byte_escapes.get_or_insert(1 + at);
                    continue;
                }
                let c = char::from_u32(code).ok_or((1 + at, SelectorErrorKind::InvalidEscape))?;
                push_char(&mut bytes, c);
            }
            c => push_char(&mut bytes, c),
        }
    }
    Err((0, SelectorErrorKind::UnterminatedString))
}

fn push_char(bytes: &mut Vec<u8>, c: char) {
    bytes.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
}

/// Whether PromQL's lexer reads a bare `name` as something else than a metric name: the
/// keywords its grammar does not take as one (aggregations, `by`, `and`, `offset` and the
/// like it does), and the numbers `inf` and `nan`; keywords are read in any case.
fn is_keyword_or_number(name: &str) -> bool {
    [
        "on",
        "bool",
        "ignoring",
        "group_left",
        "group_right",
        "atan2",
        "inf",
        "nan",
    ]
    .iter()
    .any(|word| name.eq_ignore_ascii_case(word))
}

/// Parser state: the whole selector, for turning remaining input into columns.
pub(super) struct SelectorParser<'a> {
    pub whole: &'a str,
}

impl<'a> SelectorParser<'a> {
    fn error(&self, rest: &str, kind: SelectorErrorKind) -> SelectorError {
        let offset = self.whole.len() - rest.len();
        SelectorError {
            column: self.whole[..offset].chars().count() + 1,
            kind,
        }
    }

    /// Skips blanks and comments: PromQL reads `#` to the end of its line as a blank.
    fn blank(mut rest: &'a str) -> &'a str {
        loop {
            rest = multispace0::<_, nom::error::Error<&str>>(rest).map_or(rest, |(r, _)| r);
            match rest.strip_prefix('#') {
                Some(comment) => rest = comment.find('\n').map_or("", |end| &comment[end..]),
                None => return rest,
            }
        }
    }

    fn string(&self, rest: &'a str) -> Result<(&'a str, String), SelectorError> {
        string_literal(rest).map_err(|(at, kind)| self.error(&rest[at.min(rest.len())..], kind))
    }

    pub fn parse(&self) -> Result<Selector, SelectorError> {
        let mut rest = Self::blank(self.whole);
        let mut matchers = Vec::new();
        // Prometheus 3: a name before the braces excludes every `__name__` matcher inside
        // them; inside, any number may stand (`{"bar", __name__="baz"}` matches nothing).
        let mut name_outside = false;
        if let Ok((r, name)) = metric_name(rest) {
            if is_keyword_or_number(name) {
                return Err(self.error(rest, SelectorErrorKind::KeywordAsName(name.to_string())));
            }
            matchers.push(Matcher::new("__name__", MatchOp::Equal, name)?);
            name_outside = true;
            rest = Self::blank(r);
        }
        if let Some(r) = rest.strip_prefix('{') {
            rest = Self::blank(r);
            loop {
                if let Some(r) = rest.strip_prefix('}') {
                    rest = r;
                    break;
                }
                let item_start = rest;
                // A label name, quoted label name, or a quoted metric name (Prometheus 3).
                let (r, label, quoted) = if rest.starts_with(['"', '\'', '`']) {
                    let (r, s) = self.string(rest)?;
                    (r, s, true)
                } else {
                    let (r, l) = label_name(rest)
                        .map_err(|_| self.error(rest, SelectorErrorKind::Expected("a label name or '}'")))?;
                    (r, l.to_string(), false)
                };
                rest = Self::blank(r);
                if quoted && (rest.starts_with(',') || rest.starts_with('}')) {
                    if name_outside {
                        return Err(self.error(item_start, SelectorErrorKind::DuplicateName));
                    }
                    matchers.push(Matcher::new("__name__", MatchOp::Equal, &label)?);
                } else {
                    let (r, op) = match_op(rest).map_err(|_| {
                        self.error(rest, SelectorErrorKind::Expected("'=', '!=', '=~' or '!~'"))
                    })?;
                    rest = Self::blank(r);
                    let value_start = rest;
                    let (r, value) = self.string(rest)?;
                    rest = Self::blank(r);
                    if label == "__name__" && name_outside {
                        return Err(self.error(item_start, SelectorErrorKind::DuplicateName));
                    }
                    let matcher =
                        Matcher::new(&label, op, &value).map_err(|e| self.error(value_start, e.kind))?;
                    matchers.push(matcher);
                }
                if let Some(r) = rest.strip_prefix(',') {
                    rest = Self::blank(r);
                } else if !rest.starts_with('}') {
                    return Err(self.error(rest, SelectorErrorKind::Expected("',' or '}'")));
                }
            }
            rest = Self::blank(rest);
        } else if !name_outside {
            if rest.starts_with('"') {
                if let Ok((_, name)) = self.string(rest) {
                    let kind = SelectorErrorKind::QuotedNameOutsideBraces(name);
                    return Err(self.error(rest, kind));
                }
            }
            return Err(self.error(rest, SelectorErrorKind::Expected("a metric name or '{'")));
        }
        if !rest.is_empty() {
            // What a PromQL user types first, told apart from a typo.
            let kind = match (rest.as_bytes()[0], matchers.first()) {
                (b'[', _) => SelectorErrorKind::RangeSelector,
                (b'(', Some(name)) if name.label() == "__name__" && matchers.len() == 1 => {
                    SelectorErrorKind::Function(name.value().to_string())
                }
                _ => SelectorErrorKind::TrailingText,
            };
            return Err(self.error(rest, kind));
        }
        if matchers.iter().all(Matcher::matches_empty) {
            return Err(SelectorError {
                column: 1,
                kind: SelectorErrorKind::EmptyMatchers,
            });
        }
        Ok(Selector::from_matchers(matchers))
    }
}
