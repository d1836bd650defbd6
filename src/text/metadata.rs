//! Metadata lines (`# HELP`, `# TYPE`, `# UNIT`, free comments), parsed with `nom`.
//!
//! Errors are the byte offset within the line of the first wrong character; the page
//! iterator turns that into a line and column.

use nom::branch::alt;
use nom::bytes::complete::{tag, take_while, take_while1};
use nom::character::complete::{space0, space1};
use nom::combinator::rest;
use nom::sequence::preceded;
use nom::{IResult, Parser as _};

use super::entry::Entry;
use super::help::HelpText;
use super::lexer::{scan_quoted, Fail};
use super::metric_type::MetricType;
use super::names::{metric_name, metric_name_len, same_bytes};
use crate::error::ParseErrorKind;
use crate::swar::{has_byte, low_bytes, word_at, word_or_tail};

#[derive(Clone, Copy)]
enum Keyword {
    Help,
    Type,
    Unit,
}

/// Offset of `remaining` within `line` (both slices of the same line).
fn offset(line: &str, remaining: &str) -> usize {
    line.len() - remaining.len()
}

fn keyword(input: &str) -> IResult<&str, Keyword> {
    alt((
        tag("HELP").map(|_| Keyword::Help),
        tag("TYPE").map(|_| Keyword::Type),
        tag("UNIT").map(|_| Keyword::Unit),
    ))
    .parse(input)
}

/// A metric name in metadata: plain, or quoted (Prometheus 3 UTF-8 names); OpenMetrics
/// keeps unknown escapes as it does in label values (`strict_escapes` false).
fn family_name<'page>(
    line: &'page str,
    input: &'page str,
    strict_escapes: bool,
) -> Result<(&'page str, &'page str), Fail> {
    let at = offset(line, input);
    if input.starts_with('"') {
        // Escapes stay in the name as written, as in a sample's quoted name.
        let (end, _) = scan_quoted(input.as_bytes(), 0, strict_escapes).map_err(|(o, k)| (at + o, k))?;
        if end == 2 {
            return Err((at, ParseErrorKind::InvalidMetricName));
        }
        return Ok((&input[end..], &input[1..end - 1]));
    }
    metric_name(input).map_err(|_| (at, ParseErrorKind::InvalidMetricName))
}

/// `# HELP name text` and `# TYPE name kind` as exporters write them, read straight from
/// the page (`text` is the rest of the page from the line's start) with no separate search
/// for the line's end. Returns the entry and the line's length, or `None` for every other
/// shape, for a line over `max_line` bytes and for anything wrong, which [`metadata`] then
/// parses (and reports) exactly; for the lines it accepts, both give the same entry.
/// `previous_name` is the family or sample name read just before: `# TYPE` repeats the
/// `# HELP` name, which then needs no character check.
#[inline(always)]
pub(crate) fn metadata_fast<'page>(
    text: &'page str,
    previous_name: &str,
    max_line: usize,
) -> Option<(Entry<'page>, usize)> {
    let b = text.as_bytes();
    let (help, name_len) = keyword_and_name(b, previous_name, |c| matches!(c, None | Some(b' ' | b'\n')))?;
    let name = &text[7..7 + name_len];
    let rest = 7 + name_len;
    let (entry, end) = if help {
        let (start, end) = match b.get(rest) {
            None | Some(b'\n') => (rest, rest),
            Some(b' ' | b'\t') => {
                let mut start = rest + 1;
                while matches!(b.get(start), Some(b' ' | b'\t')) {
                    start += 1;
                }
                (start, line_end(b, start))
            }
            Some(_) => return None,
        };
        // A CRLF line: the general path strips the `\r`.
        if b[..end].last() == Some(&b'\r') {
            return None;
        }
        let text = HelpText::new(&text[start..end], false);
        (Entry::Help { name, text }, end)
    } else {
        // The kind is read as one word from the space before it and compared as a number
        // (`histogram` is longer: its last two bytes are checked apart).
        let word = word_or_tail(b, rest);
        let spelled = |text: &[u8; 8]| u64::from_le_bytes(*text);
        let (kind, head, len) = match word & 0xff_ffff {
            0x6f_6320 => (MetricType::Counter, spelled(b" counter"), 8),
            0x61_6720 => (MetricType::Gauge, spelled(b" gauge\0\0"), 6),
            0x69_6820 => (MetricType::Histogram, spelled(b" histogr"), 10),
            0x75_7320 => (MetricType::Summary, spelled(b" summary"), 8),
            0x6e_7520 => (MetricType::Unknown, spelled(b" untyped"), 8),
            _ => return None,
        };
        if word & low_bytes(len.min(8)) != head
            || (len > 8 && (b.get(rest + 8), b.get(rest + 9)) != (Some(&b'a'), Some(&b'm')))
        {
            return None;
        }
        let end = rest + len;
        if !matches!(b.get(end), None | Some(b'\n')) {
            return None;
        }
        (Entry::Type { name, kind }, end)
    };
    (end <= max_line).then_some((entry, end))
}

/// Of a line that starts `# HELP ` or `# TYPE `: whether it is a `# HELP`, and the length
/// of the plain name after the keyword (not 0). `previous_name` (already checked) is taken
/// as it is where the line repeats it, followed by a byte `ends` accepts.
#[inline(always)]
fn keyword_and_name(
    b: &[u8],
    previous_name: &str,
    ends: impl Fn(Option<&u8>) -> bool,
) -> Option<(bool, usize)> {
    const KEYWORD: u64 = 0x00ff_ffff_ffff_ffff;
    let keyword = word_at(b, 0)? & KEYWORD;
    let help = keyword == u64::from_le_bytes(*b"# HELP \0");
    if !help && keyword != u64::from_le_bytes(*b"# TYPE \0") {
        return None;
    }
    let after = &b[7..];
    let repeated = !previous_name.is_empty()
        && ends(after.get(previous_name.len()))
        && same_bytes(
            &after[..previous_name.len().min(after.len())],
            previous_name.as_bytes(),
        );
    let name_len = if repeated {
        previous_name.len()
    } else {
        metric_name_len(after)
    };
    (name_len > 0).then_some((help, name_len))
}

/// [`metadata_fast`] for OpenMetrics: `# HELP name text` and `# TYPE name kind` with the
/// single spaces the format requires, read straight from the page. Returns the entry and
/// the line's length, or `None` for every other line (`# UNIT`, `# EOF`, a quoted name, a
/// kind the format does not have, a line over `max_line` bytes), which [`metadata`] then
/// parses and reports exactly; for the lines it accepts, both give the same entry.
/// `previous_name` is the name of the metadata line before (see [`metadata_fast`]).
#[inline(always)]
pub(crate) fn metadata_fast_openmetrics<'page>(
    text: &'page str,
    previous_name: &str,
    max_line: usize,
) -> Option<(Entry<'page>, usize)> {
    let b = text.as_bytes();
    let (help, name_len) = keyword_and_name(b, previous_name, |c| c == Some(&b' '))?;
    // Exactly one space after the name, even before an empty help text.
    if b.get(7 + name_len) != Some(&b' ') {
        return None;
    }
    let name = &text[7..7 + name_len];
    let start = 7 + name_len + 1;
    let end = line_end(b, start);
    if end > max_line {
        return None;
    }
    let value = &text[start..end];
    let entry = if help {
        Entry::Help {
            name,
            text: HelpText::new(value, true),
        }
    } else {
        // `untyped` is Prometheus text's word; OpenMetrics says `unknown`.
        let kind = MetricType::from_name(value).filter(|_| value != "untyped")?;
        Entry::Type { name, kind }
    };
    Some((entry, end))
}

/// The index of the first `\n` at or after `i`, or the end: eight bytes at a time over the
/// first words (help texts are mostly short, shorter than a vector search takes to start),
/// `memchr` for the rest.
#[inline(always)]
fn line_end(b: &[u8], mut i: usize) -> usize {
    for _ in 0..8 {
        let Some(chunk) = word_at(b, i) else { break };
        let hits = has_byte(chunk, b'\n');
        if hits != 0 {
            return i + (hits.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    let rest = b.get(i..).unwrap_or(&[]);
    i + memchr::memchr(b'\n', rest).unwrap_or(rest.len())
}

/// Parses a line whose first non-blank character is `#`.
pub(crate) fn metadata(line: &str, openmetrics: bool) -> Result<Entry<'_>, Fail> {
    if openmetrics {
        metadata_openmetrics(line)
    } else {
        metadata_text(line)
    }
}

/// A free comment: the text after `#` and one optional space.
fn comment(line: &str) -> Entry<'_> {
    let body = line.trim_start_matches([' ', '\t']);
    let body = body.strip_prefix('#').unwrap_or(body);
    Entry::Comment(body.strip_prefix(' ').unwrap_or(body))
}

fn metadata_text(line: &str) -> Result<Entry<'_>, Fail> {
    // `#`, blanks, keyword, blanks, name; anything else (`#HELP`, `# HELPER`, `# HELP`
    // alone) is a free comment, as Prometheus reads it.
    // Exporters write `# HELP ` / `# TYPE ` exactly; skip the general header parser then.
    let header: IResult<&str, Keyword> = match line.as_bytes().get(..7) {
        Some(b"# HELP ") => Ok((&line[6..], Keyword::Help)),
        Some(b"# TYPE ") => Ok((&line[6..], Keyword::Type)),
        _ => preceded((space0, tag("#"), space1), keyword).parse(line),
    };
    let Ok((after_kw, kw)) = header else {
        return Ok(comment(line));
    };
    let Ok((after_blank, _)) = space1::<_, nom::error::Error<&str>>(after_kw) else {
        return Ok(comment(line));
    };
    let (after_name, name) = family_name(line, after_blank, true)?;
    match kw {
        Keyword::Help => {
            let text = match after_name.as_bytes().first() {
                None => "",
                Some(b' ' | b'\t') => after_name.trim_start_matches([' ', '\t']),
                Some(_) => return Err((offset(line, after_name), ParseErrorKind::InvalidMetricName)),
            };
            Ok(Entry::Help {
                name,
                text: HelpText::new(text, false),
            })
        }
        Keyword::Type => {
            let parsed: IResult<&str, &str> =
                preceded(space1, take_while1(|c: char| c != ' ' && c != '\t')).parse(after_name);
            let Ok((after_type, word)) = parsed else {
                return Err((
                    offset(line, after_name),
                    ParseErrorKind::Expected("a metric type after the name"),
                ));
            };
            let kind = match word {
                "counter" | "gauge" | "histogram" | "summary" | "untyped" => MetricType::from_name(word),
                _ => None,
            }
            .ok_or_else(|| (offset(line, word), ParseErrorKind::InvalidType(word.to_string())))?;
            if !after_type.trim_matches([' ', '\t']).is_empty() {
                return Err((
                    offset(line, after_type),
                    ParseErrorKind::TrailingText("the metric type"),
                ));
            }
            Ok(Entry::Type { name, kind })
        }
        // The text format has no UNIT; Prometheus reads such a line as a comment.
        Keyword::Unit => Ok(comment(line)),
    }
}

fn metadata_openmetrics(line: &str) -> Result<Entry<'_>, Fail> {
    if line == "# EOF" {
        return Ok(Entry::Eof);
    }
    let header: IResult<&str, Keyword> = preceded(tag("# "), keyword).parse(line);
    let Ok((after_kw, kw)) = header else {
        return Err((
            0,
            ParseErrorKind::Expected("'# HELP', '# TYPE', '# UNIT' or '# EOF'"),
        ));
    };
    let Some(after_space) = after_kw.strip_prefix(' ') else {
        return Err((
            offset(line, after_kw),
            ParseErrorKind::Expected("a space after the keyword"),
        ));
    };
    let (after_name, name) = family_name(line, after_space, false)?;
    // OpenMetrics requires exactly one space after the name, even before an empty value.
    let parsed: IResult<&str, &str> = preceded(tag(" "), rest).parse(after_name);
    let Ok((_, value)) = parsed else {
        return Err((
            offset(line, after_name),
            ParseErrorKind::Expected("a space after the metric name"),
        ));
    };
    let value_at = offset(line, value);
    match kw {
        Keyword::Help => Ok(Entry::Help {
            name,
            text: HelpText::new(value, true),
        }),
        Keyword::Type => {
            // `untyped` is Prometheus-text only; OpenMetrics says `unknown`.
            let kind = MetricType::from_name(value)
                .filter(|_| value != "untyped")
                .ok_or_else(|| (value_at, ParseErrorKind::InvalidType(value.to_string())))?;
            Ok(Entry::Type { name, kind })
        }
        Keyword::Unit => {
            let unit_chars: IResult<&str, &str> =
                take_while(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':').parse(value);
            match unit_chars {
                Ok(("", unit)) => Ok(Entry::Unit { name, unit }),
                Ok((trailing, _)) => Err((offset(line, trailing), ParseErrorKind::TrailingText("the unit"))),
                Err(_) => Err((value_at, ParseErrorKind::Expected("a unit"))),
            }
        }
    }
}

#[cfg(test)]
mod tests;
