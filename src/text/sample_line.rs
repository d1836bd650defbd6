//! Sample lines: the general path (every shape, every error, exact positions) and the
//! fast path for the common shape, read straight from the page.
//!
//! Both must give identical samples for every line the fast path accepts; the proptest
//! `fast_path_agrees_with_general_path` and the fuzz target `fast_path_agrees` check it.

use super::composite::composite;
use super::exemplar::{self, Rules};
use super::label_set::{is_name_label, label_set, SeenNames, FILTERED_LABELS};
use super::labels::{Labels, Spans};
use super::lexer::{skip_blanks, token_end, Dialect, Fail};
use super::limits::Limits;
use super::names::{label_name_len, metric_name_len, same_bytes};
use super::sample::Sample;
use super::value::{
    decimal_prefix, integer_prefix, parse_float, parse_timestamp_ms, parse_timestamp_seconds, seconds_to_ms,
    timestamp_seconds_fine,
};
use crate::error::ParseErrorKind;
use crate::swar::{first_below, has_byte, low_bytes, word_at};

/// Parses a sample line.
#[inline]
pub(crate) fn sample<'line>(
    line: &'line str,
    dialect: Dialect,
    limits: &Limits,
) -> Result<Sample<'line>, Fail> {
    let bytes = line.as_bytes();
    let openmetrics = dialect.openmetrics;
    let identity_start = if openmetrics { 0 } else { skip_blanks(bytes, 0) };
    let (name, labels, mut i) = name_and_labels(line, identity_start, dialect, limits)?;
    let identity = &line[identity_start..i];
    let identity_starts_line = identity_start == 0 && bytes.get(i) == Some(&b' ');
    // Value.
    if openmetrics {
        if bytes.get(i) != Some(&b' ') {
            return Err((i, ParseErrorKind::Expected("a space before the value")));
        }
        i += 1;
    } else {
        let j = skip_blanks(bytes, i);
        if j == i && bytes.get(i).is_some() && name_follows_directly(bytes, i) {
            return Err((i, ParseErrorKind::InvalidMetricName));
        }
        i = j;
    }
    let mut composite_value = None;
    let value = if dialect.version2 && bytes.get(i) == Some(&b'{') {
        let (found, end) = composite(line, i)?;
        composite_value = Some(found);
        i = end;
        f64::NAN
    } else {
        let value_end = token_end(bytes, i, !openmetrics);
        if value_end == i {
            return Err((i, ParseErrorKind::Expected("a sample value")));
        }
        let value_text = &line[i..value_end];
        let value = parse_float(value_text)
            .ok_or_else(|| (i, ParseErrorKind::InvalidValue(value_text.to_string())))?;
        i = value_end;
        value
    };
    let mut sample = Sample {
        name,
        labels,
        value,
        timestamp_ms: None,
        timestamp_ns_past_ms: 0,
        start_timestamp_ms: None,
        composite: composite_value,
        exemplars: "",
        identity,
        identity_starts_line,
    };
    if dialect.version2 {
        openmetrics2_tail(line, i, &mut sample)?;
    } else if openmetrics {
        openmetrics_tail(line, i, &mut sample)?;
    } else {
        sample.timestamp_ms = text_timestamp(line, i)?;
    }
    Ok(sample)
}

/// The optional timestamp (integer milliseconds) after a Prometheus-text value ending at
/// `i`, and nothing but blanks after it.
fn text_timestamp(line: &str, i: usize) -> Result<Option<i64>, Fail> {
    let bytes = line.as_bytes();
    let i = skip_blanks(bytes, i);
    if i == bytes.len() {
        return Ok(None);
    }
    let ts_end = token_end(bytes, i, true);
    let ts_text = &line[i..ts_end];
    let timestamp_ms = parse_timestamp_ms(ts_text)
        .ok_or_else(|| (i, ParseErrorKind::InvalidTimestamp(ts_text.to_string())))?;
    let after = skip_blanks(bytes, ts_end);
    if after < bytes.len() {
        return Err((after, ParseErrorKind::TrailingText("the timestamp")));
    }
    Ok(Some(timestamp_ms))
}

/// The name and labels of a sample line, from `start`: a name, a label set, or both (a
/// quoted name inside the braces); with the index past them.
#[inline]
fn name_and_labels<'line>(
    line: &'line str,
    start: usize,
    dialect: Dialect,
    limits: &Limits,
) -> Result<(&'line str, Labels<'line>, usize), Fail> {
    let bytes = line.as_bytes();
    let mut i = start;
    let mut name = "";
    if bytes.get(i) != Some(&b'{') {
        let len = metric_name_len(&bytes[i..]);
        if len == 0 {
            return Err((i, ParseErrorKind::InvalidMetricName));
        }
        name = &line[i..i + len];
        i += len;
        if !dialect.openmetrics {
            let j = skip_blanks(bytes, i);
            if bytes.get(j) == Some(&b'{') {
                i = j;
            }
        }
    }
    let mut labels = Labels::new("", 0, dialect);
    if bytes.get(i) == Some(&b'{') {
        let open = i;
        let set = label_set(line, open, dialect, limits, !name.is_empty())?;
        if let Some(quoted) = set.quoted_name {
            if !name.is_empty() {
                return Err((open + 1, ParseErrorKind::Expected("'=' after label name")));
            }
            name = quoted;
        }
        if name.is_empty() {
            return Err((open, ParseErrorKind::InvalidMetricName));
        }
        labels = Labels::new(set.raw, set.count, dialect);
        i = set.end;
    }
    Ok((name, labels, i))
}

/// The common shape of a sample line, parsed straight from the page with no separate
/// search for the line's end: `name{a="b",...} value[ timestamp]` then `\n` or the end,
/// single spaces, no escapes, decimal values; in OpenMetrics (`openmetrics`) the timestamp
/// in seconds, no trailing comma, nothing after the timestamp (`st@`, exemplars: the
/// general path reads those). Returns the sample and the line's
/// length, or `None` for anything else (including every error), which the general path then
/// parses (and reports) exactly. Both paths give identical samples for the lines this one
/// accepts.
///
/// `recent` holds names already checked on the lines before: exporters write a family's
/// series one after another, so the metric name and the label names usually repeat, and a
/// repeat needs no character-class check.
#[inline(always)]
pub(crate) fn sample_fast<'page>(
    text: &'page str,
    recent: &mut RecentNames<'page>,
    limits: &Limits,
    openmetrics: bool,
) -> Option<(Sample<'page>, usize)> {
    let b = text.as_bytes();
    let previous_name = recent.metric;
    let repeated = !previous_name.is_empty()
        && matches!(b.get(previous_name.len()), Some(b'{' | b' '))
        && same_bytes(&b[..previous_name.len()], previous_name.as_bytes());
    let name_len = if repeated {
        previous_name.len()
    } else {
        metric_name_len(b)
    };
    if name_len == 0 {
        return if openmetrics {
            None
        } else {
            sample_fast_quoted(text, limits)
        };
    }
    let mut i = name_len;
    let mut labels = Labels::empty();
    if b.get(i) == Some(&b'{') {
        (labels, i) = fast_label_set(text, i, recent, limits)?;
        // OpenMetrics has no trailing comma.
        if openmetrics && text.as_bytes().get(i - 2) == Some(&b',') {
            return None;
        }
    }
    let identity_end = i;
    let (value, timestamp_ms, timestamp_ns_past_ms, i) =
        value_and_timestamp_in(text, i, limits, openmetrics)?;
    let sample = Sample {
        name: &text[..name_len],
        labels,
        value,
        timestamp_ms,
        timestamp_ns_past_ms,
        start_timestamp_ms: None,
        composite: None,
        exemplars: "",
        // A space follows: `value_and_timestamp` requires it.
        identity: &text[..identity_end],
        identity_starts_line: true,
    };
    recent.metric = sample.name;
    if openmetrics {
        recent.repeated = repeated;
    }
    Some((sample, i))
}

/// The label set of [`sample_fast`] whose `{` is at `open`: its labels and the index past
/// its `}`, or `None` for anything the general path must judge.
#[inline(always)]
fn fast_label_set<'page>(
    text: &'page str,
    open: usize,
    recent: &mut RecentNames<'page>,
    limits: &Limits,
) -> Option<(Labels<'page>, usize)> {
    let b = text.as_bytes();
    let mut i = open + 1;
    let mut count = 0usize;
    let mut seen = SeenNames::with_metric_name();
    let mut spans = Spans::default();
    while b.get(i) != Some(&b'}') {
        let label_len = match recent.label_at(count, b, i) {
            Some(len) => len,
            None => {
                let len = label_name_len(&b[i..]);
                recent.remember_label(count, b, i, len);
                len
            }
        };
        if label_len == 0
            || label_len > limits.label_name_length
            || b.get(i + label_len) != Some(&b'=')
            || b.get(i + label_len + 1) != Some(&b'"')
        {
            return None;
        }
        if count >= FILTERED_LABELS {
            return None;
        }
        if seen.insert(b, i, label_len)
            && (is_name_label(&b[i..i + label_len])
                || Labels::simple(&text[open + 1..i], count as u32, Spans::default())
                    .has_name(&b[i..i + label_len]))
        {
            return None;
        }
        count += 1;
        i += label_len + 2;
        let value_start = i;
        i = plain_quoted_end(b, value_start)?;
        if i - value_start > limits.label_value_length {
            return None;
        }
        spans.push(label_len, i - value_start);
        i += 1;
        match b.get(i) {
            Some(b',') => i += 1,
            Some(b'}') => {}
            _ => return None,
        }
    }
    if count > limits.labels {
        return None;
    }
    Some((Labels::simple(&text[open + 1..i], count as u32, spans), i + 1))
}

/// The closing quote of a quoted string whose text starts at `i` (after its opening quote),
/// if the string holds no backslash and no newline (escapes, and the line's end, are the
/// general path's). One test finds all three and a few harmless bytes (below 0x23: blanks,
/// `!`, controls), which are stepped over.
#[inline(always)]
fn plain_quoted_end(b: &[u8], mut i: usize) -> Option<usize> {
    loop {
        let chunk = word_at(b, i)?;
        let stops = first_below(chunk, b'"' + 1) | has_byte(chunk, b'\\');
        if stops == 0 {
            i += 8;
            continue;
        }
        i += (stops.trailing_zeros() / 8) as usize;
        match b[i] {
            b'"' => return Some(i),
            b'\n' | b'\\' => return None,
            _ => i += 1,
        }
    }
}

/// The text format's quoted-name shape of [`sample_fast`] (text 1.0.0, UTF-8 names):
/// `{"name",label="v","label.x"="v",...} value[ timestamp]`, the name first, no escapes,
/// no blanks in the braces. The sample is the general path's: the set's text from after
/// the `{` (the name included), read by the lexer, not as a simple set.
#[inline(never)]
fn sample_fast_quoted<'page>(text: &'page str, limits: &Limits) -> Option<(Sample<'page>, usize)> {
    let b = text.as_bytes();
    if b.first() != Some(&b'{') || b.get(1) != Some(&b'"') {
        return None;
    }
    let name_end = plain_quoted_end(b, 2)?;
    if name_end == 2 {
        return None;
    }
    let (close, count) = quoted_label_terms(text, name_end + 1, limits)?;
    let (value, timestamp_ms, timestamp_ns_past_ms, len) =
        value_and_timestamp_in(text, close + 1, limits, false)?;
    let sample = Sample {
        name: &text[2..name_end],
        labels: Labels::new(&text[1..close], count, QUOTED_TEXT),
        value,
        timestamp_ms,
        timestamp_ns_past_ms,
        start_timestamp_ms: None,
        composite: None,
        exemplars: "",
        identity: &text[..close + 1],
        identity_starts_line: true,
    };
    Some((sample, len))
}

/// How [`sample_fast_quoted`]'s labels are read: the text format's lexer (the set has no
/// escape, so the escape rule does not matter).
const QUOTED_TEXT: Dialect = Dialect {
    openmetrics: false,
    version2: false,
    strict_escapes: true,
};

/// The `,label="v"` terms after the quoted name of [`sample_fast_quoted`] (from `i`, just
/// past the name's closing quote), label names bare or quoted: the index of the closing
/// `}` and the label count, or `None` for anything the general path must judge.
#[inline(always)]
fn quoted_label_terms(text: &str, mut i: usize, limits: &Limits) -> Option<(usize, u32)> {
    let b = text.as_bytes();
    let mut count = 0usize;
    let mut seen = SeenNames::with_metric_name();
    loop {
        match b.get(i) {
            Some(b'}') => break,
            Some(b',') => i += 1,
            _ => return None,
        }
        // A trailing comma is allowed in the text format.
        if b.get(i) == Some(&b'}') {
            break;
        }
        let (name_start, name_len, after_name) = if b.get(i) == Some(&b'"') {
            let end = plain_quoted_end(b, i + 1)?;
            (i + 1, end - i - 1, end + 1)
        } else {
            let len = label_name_len(&b[i..]);
            (i, len, i + len)
        };
        if name_len == 0
            || name_len > limits.label_name_length
            || b.get(after_name) != Some(&b'=')
            || b.get(after_name + 1) != Some(&b'"')
            || count >= FILTERED_LABELS
        {
            return None;
        }
        // A name the filter may have seen is compared as the general path does; a
        // duplicate is the general path's error to report.
        let name = &b[name_start..name_start + name_len];
        if seen.insert(b, name_start, name_len)
            && (is_name_label(name) || Labels::new(&text[1..i], count as u32, QUOTED_TEXT).has_name(name))
        {
            return None;
        }
        count += 1;
        let value_start = after_name + 2;
        let value_end = plain_quoted_end(b, value_start)?;
        if value_end - value_start > limits.label_value_length {
            return None;
        }
        i = value_end + 1;
    }
    if count > limits.labels {
        return None;
    }
    Some((i, count as u32))
}

/// The value and timestamp of a sample line whose name and labels end at `i`, where a space
/// must follow; with the index of the line's end. `None` for anything the general path
/// must judge (other blanks, `\r`, a malformed value or timestamp, trailing text). Also
/// how a line whose name and labels the tracker already knows is read (`Entries::step`).
#[inline(always)]
pub(crate) fn value_and_timestamp(
    text: &str,
    i: usize,
    limits: &Limits,
) -> Option<(f64, Option<i64>, usize)> {
    value_and_timestamp_in(text, i, limits, false).map(|(value, ms, _, end)| (value, ms, end))
}

/// [`value_and_timestamp`] with the timestamp in OpenMetrics' seconds when `seconds` (and
/// its nanoseconds beyond the millisecond); a start timestamp or exemplar after it is left
/// to the general path.
#[inline(always)]
fn value_and_timestamp_in(
    text: &str,
    mut i: usize,
    limits: &Limits,
    seconds: bool,
) -> Option<(f64, Option<i64>, i32, usize)> {
    let b = text.as_bytes();
    if b.get(i) != Some(&b' ') {
        return None;
    }
    let (value, end) = match decimal_prefix(b, i + 1) {
        Some(found) => found,
        // Not in Clinger's fast path (17 significant digits, as Python prints created
        // times): the full float parser, on the token, as the general path reads it.
        None => {
            let start = i + 1;
            let end = start
                + b[start..]
                    .iter()
                    .position(|&c| matches!(c, b' ' | b'\n' | b'\t' | b'\r'))
                    .unwrap_or(b.len() - start);
            (parse_float(&text[start..end])?, end)
        }
    };
    i = end;
    let (mut timestamp_ms, mut ns_past_ms) = (None, 0);
    if b.get(i) == Some(&b' ') && seconds {
        let start = i + 1;
        let end = start
            + b[start..]
                .iter()
                .position(|&c| matches!(c, b' ' | b'\n'))
                .unwrap_or(b.len() - start);
        let (ms, ns) = timestamp_seconds_fine(&text[start..end])?;
        (timestamp_ms, ns_past_ms) = (Some(ms), ns);
        i = end;
    } else if b.get(i) == Some(&b' ') {
        let (ts, end) = integer_prefix(b, i + 1)?;
        timestamp_ms = Some(ts);
        i = end;
    }
    if !matches!(b.get(i), None | Some(b'\n')) || i > limits.line_length {
        return None;
    }
    Some((value, timestamp_ms, ns_past_ms, i))
}

/// Names checked on earlier lines, for [`sample_fast`] and the metadata fast path: the last
/// metric or family name, and the first eight label names by position (up to eight bytes
/// each, kept as a word). Anything stored here is a valid name; that is all a lookup needs.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RecentNames<'page> {
    pub metric: &'page str,
    /// OpenMetrics: whether the last sample read had the name of the one before
    /// (`metric` then), known without a second comparison.
    pub repeated: bool,
    label_words: [u64; 8],
    /// 0: nothing known at that position.
    label_lens: [u8; 8],
}

impl<'page> RecentNames<'page> {
    /// Names as earlier lines would have left them, for tests and fuzzing: `metric` and
    /// `labels` are kept only if they are valid names.
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn remembering(metric: &'page str, labels: &[&str]) -> Self {
        use crate::text::names::{is_label_name, is_metric_name};
        let mut recent = RecentNames {
            metric: if is_metric_name(metric) { metric } else { "" },
            ..RecentNames::default()
        };
        for (k, name) in labels.iter().enumerate().filter(|(_, n)| is_label_name(n)) {
            let padded = format!("{name}=\"\"......");
            recent.remember_label(k, padded.as_bytes(), 0, name.len());
        }
        recent
    }

    /// The length of the label name at `b[i..]` if it is the one remembered for position
    /// `k` (followed by `=`).
    #[inline(always)]
    fn label_at(&self, k: usize, b: &[u8], i: usize) -> Option<usize> {
        let len = usize::from(*self.label_lens.get(k)?);
        if len == 0 || b.get(i + len) != Some(&b'=') {
            return None;
        }
        let word = word_at(b, i)?;
        ((word ^ self.label_words[k]) & low_bytes(len) == 0).then_some(len)
    }

    /// Remembers the label name `b[i..i + len]` (already checked) for position `k`.
    #[inline(always)]
    fn remember_label(&mut self, k: usize, b: &[u8], i: usize, len: usize) {
        if k >= self.label_lens.len() {
            return;
        }
        match word_at(b, i).filter(|_| (1..=8).contains(&len)) {
            Some(word) => {
                self.label_words[k] = word & low_bytes(len);
                self.label_lens[k] = len as u8;
            }
            None => self.label_lens[k] = 0,
        }
    }
}

/// In the text format a name must be followed by blanks, `{` or the end; a byte that is
/// neither means the name itself has a bad character (`a.b 1`).
#[inline]
fn name_follows_directly(bytes: &[u8], i: usize) -> bool {
    i > 0 && bytes[i - 1] != b'}'
}

/// Timestamp and exemplar after an OpenMetrics value: ` ts`, ` # {..} v`, ` ts # {..} v ts`.
fn openmetrics_tail<'page>(line: &'page str, mut i: usize, sample: &mut Sample<'page>) -> Result<(), Fail> {
    let bytes = line.as_bytes();
    if i == bytes.len() {
        return Ok(());
    }
    // token_end stopped at a space.
    i += 1;
    if bytes.get(i) != Some(&b'#') {
        let ts_end = token_end(bytes, i, false);
        if ts_end == i {
            return Err((i, ParseErrorKind::Expected("a timestamp after the space")));
        }
        let ts_text = &line[i..ts_end];
        let (ms, ns) = timestamp_seconds_fine(ts_text)
            .ok_or_else(|| (i, ParseErrorKind::InvalidTimestamp(ts_text.to_string())))?;
        (sample.timestamp_ms, sample.timestamp_ns_past_ms) = (Some(ms), ns);
        i = ts_end;
        if i == bytes.len() {
            return Ok(());
        }
        i += 1;
        if bytes.get(i) != Some(&b'#') {
            return Err((i, ParseErrorKind::TrailingText("the timestamp")));
        }
    }
    exemplar::parse(line, i, Rules::OpenMetrics1)?;
    sample.exemplars = &line[i..];
    Ok(())
}

/// What follows an OpenMetrics 2.0 value ending at `i`: ` ts`, ` st@ts`, then any number
/// of ` # {..} v ts` exemplars, each part optional but in that order.
fn openmetrics2_tail<'page>(line: &'page str, mut i: usize, sample: &mut Sample<'page>) -> Result<(), Fail> {
    let bytes = line.as_bytes();
    let mut start_seen = false;
    while i < bytes.len() {
        if bytes[i] != b' ' {
            return Err((i, ParseErrorKind::Expected("a space after the value")));
        }
        i += 1;
        if bytes.get(i) == Some(&b'#') {
            let mut j = exemplar::parse(line, i, Rules::OpenMetrics2)?.1;
            while j < bytes.len() {
                if bytes.get(j + 1) != Some(&b'#') || bytes[j] != b' ' {
                    return Err((j, ParseErrorKind::Expected("' # ' before the next exemplar")));
                }
                j = exemplar::parse(line, j + 1, Rules::OpenMetrics2)?.1;
            }
            sample.exemplars = &line[i..];
            return Ok(());
        }
        let end = token_end(bytes, i, false);
        let text = &line[i..end];
        if let Some(st) = text.strip_prefix("st@") {
            let seconds = parse_timestamp_seconds(st)
                .filter(|_| !start_seen)
                .ok_or_else(|| (i, ParseErrorKind::InvalidStartTimestamp(text.to_string())))?;
            sample.start_timestamp_ms = Some(seconds_to_ms(seconds));
            start_seen = true;
        } else if sample.timestamp_ms.is_none() && !start_seen {
            if text.is_empty() {
                return Err((i, ParseErrorKind::Expected("a timestamp after the space")));
            }
            let (ms, ns) = timestamp_seconds_fine(text)
                .ok_or_else(|| (i, ParseErrorKind::InvalidTimestamp(text.to_string())))?;
            (sample.timestamp_ms, sample.timestamp_ns_past_ms) = (Some(ms), ns);
        } else {
            return Err((i, ParseErrorKind::TrailingText("the timestamps")));
        }
        i = end;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
