//! Sample lines: the general path (every shape, every error, exact positions) and the
//! fast path for the common shape, read straight from the page.
//!
//! Both must give identical samples for every line the fast path accepts; the proptest
//! `fast_path_agrees_with_the_general_path` and the fuzz target `fast_path_agrees` check it.

use super::labels::Labels;
use super::lexer::{label_set, skip_blanks, token_end, Dialect};
use super::metadata::Fail;
use super::names::{label_name_len, metric_name_len, same_bytes};
use super::sample::{Exemplar, Sample};
use super::swar::{first_below, has_byte, word_at};
use super::value::{
    decimal_prefix, integer_prefix, parse_float, parse_timestamp_ms, parse_timestamp_seconds, seconds_to_ms,
};
use crate::error::ParseErrorKind;

/// OpenMetrics caps exemplar label sets at 128 characters of names and values.
const MAX_EXEMPLAR_LABEL_CHARS: usize = 128;

/// Parses a sample line.
#[inline]
pub(crate) fn sample(line: &str, dialect: Dialect, max_labels: usize) -> Result<Sample<'_>, Fail> {
    let bytes = line.as_bytes();
    let om = dialect.openmetrics;
    let mut i = if om { 0 } else { skip_blanks(bytes, 0) };
    let mut name = "";
    if bytes.get(i) != Some(&b'{') {
        let len = metric_name_len(&bytes[i..]);
        if len == 0 {
            return Err((i, ParseErrorKind::InvalidMetricName));
        }
        name = &line[i..i + len];
        i += len;
        if !om {
            let j = skip_blanks(bytes, i);
            if bytes.get(j) == Some(&b'{') {
                i = j;
            }
        }
    }
    let mut labels = Labels::new("", 0, dialect);
    if bytes.get(i) == Some(&b'{') {
        let open = i;
        let set = label_set(line, open, dialect, max_labels)?;
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
    // Value.
    if om {
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
    let value_end = token_end(bytes, i, !om);
    if value_end == i {
        return Err((i, ParseErrorKind::Expected("a sample value")));
    }
    let value_text = &line[i..value_end];
    let value =
        parse_float(value_text).ok_or_else(|| (i, ParseErrorKind::InvalidValue(value_text.to_string())))?;
    i = value_end;
    let mut sample = Sample {
        name,
        labels,
        value,
        timestamp_ms: None,
        exemplar: None,
    };
    if om {
        openmetrics_tail(line, i, &mut sample)?;
    } else {
        i = skip_blanks(bytes, i);
        if i < bytes.len() {
            let ts_end = token_end(bytes, i, true);
            let ts_text = &line[i..ts_end];
            sample.timestamp_ms = Some(
                parse_timestamp_ms(ts_text)
                    .ok_or_else(|| (i, ParseErrorKind::InvalidTimestamp(ts_text.to_string())))?,
            );
            let after = skip_blanks(bytes, ts_end);
            if after < bytes.len() {
                return Err((after, ParseErrorKind::TrailingText("the timestamp")));
            }
        }
    }
    Ok(sample)
}

/// The common shape of a Prometheus-text sample line, parsed straight from the page with
/// no separate search for the line's end: `name{a="b",...} value[ timestamp]` then `\n` or
/// the end, single spaces, no escapes, decimal values. Returns the sample and the line's
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
    max_labels: usize,
    max_line_len: usize,
) -> Option<(Sample<'page>, usize)> {
    let b = text.as_bytes();
    let previous_name = recent.metric;
    let name_len = if !previous_name.is_empty()
        && matches!(b.get(previous_name.len()), Some(b'{' | b' '))
        && same_bytes(&b[..previous_name.len()], previous_name.as_bytes())
    {
        previous_name.len()
    } else {
        metric_name_len(b)
    };
    if name_len == 0 {
        return None;
    }
    let mut i = name_len;
    let mut labels = Labels::simple("", 0);
    if b.get(i) == Some(&b'{') {
        let open = i;
        i += 1;
        let mut count = 0usize;
        // One bit of 256 per label name (a hash of its length and first eight bytes): a bit
        // seen before is checked exactly (rare even with vLLM's 37-label info metric); a new
        // bit cannot be a duplicate.
        let mut seen = [0u64; 4];
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
                || b.get(i + label_len) != Some(&b'=')
                || b.get(i + label_len + 1) != Some(&b'"')
            {
                return None;
            }
            let name = &b[i..i + label_len];
            let key = name_key(b, i, label_len);
            let (word, bit) = (key >> 6, 1u64 << (key & 63));
            if seen[word] & bit != 0 && Labels::simple(&text[open + 1..i], count as u32).get_bytes(name) {
                return None;
            }
            seen[word] |= bit;
            count += 1;
            i += label_len + 2;
            // The value: stop at the quote; a backslash or a raw newline leaves the fast path.
            // One test finds all three and a few harmless bytes (below 0x23: blanks, `!`,
            // controls), which are stepped over.
            loop {
                let chunk = word_at(b, i)?;
                let stops = first_below(chunk, b'"' + 1) | has_byte(chunk, b'\\');
                if stops == 0 {
                    i += 8;
                    continue;
                }
                i += (stops.trailing_zeros() / 8) as usize;
                match b[i] {
                    b'"' => break,
                    b'\n' | b'\\' => return None,
                    _ => i += 1,
                }
            }
            i += 1;
            match b.get(i) {
                Some(b',') => i += 1,
                Some(b'}') => {}
                _ => return None,
            }
        }
        if count > max_labels {
            return None;
        }
        labels = Labels::simple(&text[open + 1..i], count as u32);
        i += 1;
    }
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
    let mut timestamp_ms = None;
    if b.get(i) == Some(&b' ') {
        let (ts, end) = integer_prefix(b, i + 1)?;
        timestamp_ms = Some(ts);
        i = end;
    }
    if !matches!(b.get(i), None | Some(b'\n')) || i > max_line_len {
        return None;
    }
    let sample = Sample {
        name: &text[..name_len],
        labels,
        value,
        timestamp_ms,
        exemplar: None,
    };
    recent.metric = sample.name;
    Some((sample, i))
}

/// Names checked on earlier lines, for [`sample_fast`] and the metadata fast path: the last
/// metric or family name, and the first eight label names by position (up to eight bytes
/// each, kept as a word). Anything stored here is a valid name; that is all a lookup needs.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RecentNames<'page> {
    pub metric: &'page str,
    label_words: [u64; 8],
    /// 0: nothing known at that position.
    label_lens: [u8; 8],
}

impl RecentNames<'_> {
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

/// An 8-bit hash of the label name `b[i..i + len]` (`len >= 1`): its length and first eight
/// bytes, multiplied by the golden ratio.
#[inline(always)]
fn name_key(b: &[u8], i: usize, len: usize) -> usize {
    let head = match word_at(b, i) {
        Some(word) => word & low_bytes(len.min(8)),
        None => b[i..i + len]
            .iter()
            .rev()
            .fold(0, |acc, &c| acc << 8 | u64::from(c)),
    };
    ((head ^ (len as u64) << 56).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as usize
}

/// A mask of the low `len` bytes of a word (`1 <= len <= 8`).
#[inline(always)]
fn low_bytes(len: usize) -> u64 {
    u64::MAX >> (64 - 8 * len)
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
        let seconds = parse_timestamp_seconds(ts_text)
            .ok_or_else(|| (i, ParseErrorKind::InvalidTimestamp(ts_text.to_string())))?;
        sample.timestamp_ms = Some(seconds_to_ms(seconds));
        i = ts_end;
        if i == bytes.len() {
            return Ok(());
        }
        i += 1;
        if bytes.get(i) != Some(&b'#') {
            return Err((i, ParseErrorKind::TrailingText("the timestamp")));
        }
    }
    exemplar(line, i)?;
    sample.exemplar = Some(&line[i..]);
    Ok(())
}

/// Parses ` # {labels} value [timestamp]` starting at the `#`.
pub(crate) fn exemplar(line: &str, hash: usize) -> Result<Exemplar<'_>, Fail> {
    let bytes = line.as_bytes();
    let dialect = Dialect {
        openmetrics: true,
        strict_escapes: false,
    };
    if bytes.get(hash + 1) != Some(&b' ') || bytes.get(hash + 2) != Some(&b'{') {
        return Err((hash, ParseErrorKind::Expected("'# {' to start an exemplar")));
    }
    let open = hash + 2;
    let set = label_set(line, open, dialect, MAX_EXEMPLAR_LABEL_CHARS)?;
    if set.quoted_name.is_some() {
        return Err((open + 1, ParseErrorKind::Expected("'=' after label name")));
    }
    let mut i = set.end;
    let labels = Labels::new(set.raw, set.count, dialect);
    let chars: usize = labels
        .iter()
        .map(|(n, v)| n.chars().count() + v.unescaped().chars().count())
        .sum();
    if chars > MAX_EXEMPLAR_LABEL_CHARS {
        return Err((
            open,
            ParseErrorKind::Expected("exemplar labels of at most 128 characters"),
        ));
    }
    if bytes.get(i) != Some(&b' ') {
        return Err((i, ParseErrorKind::Expected("a space before the exemplar value")));
    }
    i += 1;
    let value_end = token_end(bytes, i, false);
    let value_text = &line[i..value_end];
    let value =
        parse_float(value_text).ok_or_else(|| (i, ParseErrorKind::InvalidValue(value_text.to_string())))?;
    let mut timestamp_ms = None;
    if value_end < bytes.len() {
        let ts_start = value_end + 1;
        let ts_text = &line[ts_start..];
        let seconds = parse_timestamp_seconds(ts_text)
            .ok_or_else(|| (ts_start, ParseErrorKind::InvalidTimestamp(ts_text.to_string())))?;
        timestamp_ms = Some(seconds_to_ms(seconds));
    }
    Ok(Exemplar {
        labels,
        value,
        timestamp_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: Dialect = Dialect {
        openmetrics: false,
        strict_escapes: true,
    };
    const OM: Dialect = Dialect {
        openmetrics: true,
        strict_escapes: false,
    };

    fn ok(line: &str) -> Sample<'_> {
        sample(line, TEXT, 64).unwrap_or_else(|e| panic!("{line:?}: {e:?}"))
    }

    #[test]
    fn sample_shapes() {
        let s = ok("a 1");
        assert_eq!((s.name(), s.value(), s.labels().len()), ("a", 1.0, 0));
        let s = ok("  vllm:x{model_name=\"m/a:b\" , engine=\"0\",} 2.5e3 17  ");
        assert_eq!(s.name(), "vllm:x");
        assert_eq!(s.labels().len(), 2);
        assert_eq!(s.timestamp_ms(), Some(17));
        assert!(s.labels().get("engine").unwrap() == "0");
        let s = ok("{\"my.metric\", \"label.x\"=\"v\"} 3");
        assert_eq!(s.name(), "my.metric");
        assert!(s.labels().get("label.x").unwrap() == "v");
        let s = ok("a{b=\"x,y}z=\\\"\"} NaN");
        assert!(s.value().is_nan());
        assert!(s.labels().get("b").unwrap() == "x,y}z=\"");
        let s = ok("a\t{}\t+Inf\t-5");
        assert_eq!((s.value(), s.timestamp_ms()), (f64::INFINITY, Some(-5)));
    }

    #[test]
    fn sample_errors() {
        let cases: &[(&str, usize, ParseErrorKind)] = &[
            ("a{b\"c\"} 1", 3, ParseErrorKind::Expected("'=' after label name")),
            (
                "a{b=\"c\",b=\"d\"} 1",
                8,
                ParseErrorKind::DuplicateLabel("b".into()),
            ),
            ("a{b=\"c} 1", 4, ParseErrorKind::UnterminatedString),
            ("a{b=\"\\q\"} 1", 5, ParseErrorKind::InvalidEscape('q')),
            ("a 1x", 2, ParseErrorKind::InvalidValue("1x".into())),
            ("a 1 2.5", 4, ParseErrorKind::InvalidTimestamp("2.5".into())),
            ("a 1 2 3", 6, ParseErrorKind::TrailingText("the timestamp")),
            ("a", 1, ParseErrorKind::Expected("a sample value")),
            ("a.b 1", 1, ParseErrorKind::InvalidMetricName),
            ("{b=\"c\"} 1", 0, ParseErrorKind::InvalidMetricName),
            (
                "a{b=\"c\" 1",
                8,
                ParseErrorKind::Expected("',' or '}' after a label"),
            ),
            (
                "a{b=c} 1",
                4,
                ParseErrorKind::Expected("'\"' to open the label value"),
            ),
            ("\"a\"{} 1", 0, ParseErrorKind::InvalidMetricName),
        ];
        for (line, at, kind) in cases {
            assert_eq!(
                sample(line, TEXT, 64).unwrap_err(),
                (*at, kind.clone()),
                "{line:?}"
            );
        }
    }

    #[test]
    fn openmetrics_samples() {
        let s = sample("a_total 1 1.5 # {id=\"x\"} 2 3", OM, 64).unwrap();
        assert_eq!(s.timestamp_ms(), Some(1500));
        let ex = s.exemplar().unwrap();
        assert_eq!((ex.value(), ex.timestamp_ms()), (2.0, Some(3000)));
        for bad in [
            "a  1",
            "a 1 ",
            "a{a=\"1\",} 1",
            "a{ a=\"1\"} 1",
            "a 1 # {} 1 ",
            "a 1 #{} 1",
            "a 1# {} 1",
        ] {
            assert!(sample(bad, OM, 64).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn fast_path_takes_the_common_shapes() {
        let (s, len) = sample_fast(
            "a{b=\"c\",d=\"long value, with {braces}\"} 1.5e3 17\nnext",
            &mut RecentNames::default(),
            8,
            100,
        )
        .unwrap();
        assert_eq!(
            (s.name(), s.labels().len(), s.value(), s.timestamp_ms(), len),
            ("a", 2, 1500.0, Some(17), 47)
        );
        assert_eq!(
            sample_fast("vllm:x 4", &mut RecentNames::default(), 8, 100).map(|(s, l)| (s.value(), l)),
            Some((4.0, 8))
        );
        for other in [
            "a  1",
            "a{b=\"\\n\"} 1",
            "a 1 \n",
            "a 1\r\n",
            "a{b=\"c\",b=\"d\"} 1",
            " a 1",
            "a{ b=\"c\"} 1",
        ] {
            assert!(
                sample_fast(other, &mut RecentNames::default(), 8, 100).is_none(),
                "{other:?}"
            );
            let mut recent = RecentNames {
                metric: "a",
                ..RecentNames::default()
            };
            recent.remember_label(0, b"b=", 0, 1);
            assert!(sample_fast(other, &mut recent, 8, 100).is_none(), "{other:?}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]

        /// Whatever the fast path accepts, the general path parses to the same sample.
        #[test]
        fn fast_path_agrees_with_general_path(
            text in "[a-z_:]{1,6}(\\{([a-z_]{1,4}=\"[a-z0-9 ,{}=\\\\\"\t\n]{0,12}\",?){0,4}\\})? ?[-+0-9.eE]{0,8}( [-0-9]{0,4})?[ \t\r]?\n?[a-z]{0,3}",
            max_labels in 0usize..5,
            previous_len in 0usize..8,
            earlier_labels in proptest::collection::vec("[a-z_]{1,3}", 0..4),
        ) {
            // Names of the lines before, as the iterator keeps them: valid names, here a
            // prefix of this line and the label names of an earlier line.
            let previous = text.get(..previous_len.min(text.len())).unwrap_or("");
            let mut recent = RecentNames {
                metric: if crate::text::names::is_metric_name(previous) { previous } else { "" },
                ..RecentNames::default()
            };
            for (k, name) in earlier_labels.iter().enumerate() {
                recent.remember_label(k, format!("{name}=\"\"...").as_bytes(), 0, name.len());
            }
            if let Some((fast, len)) = sample_fast(&text, &mut recent, max_labels, 64) {
                let general = sample(&text[..len], TEXT, max_labels);
                proptest::prop_assert!(general.is_ok(), "{text:?}: {general:?}");
                let general = general.unwrap();
                proptest::prop_assert_eq!(fast.name(), general.name());
                proptest::prop_assert_eq!(fast.labels().as_raw(), general.labels().as_raw());
                proptest::prop_assert_eq!(fast.labels().len(), general.labels().len());
                proptest::prop_assert_eq!(fast.value().to_bits(), general.value().to_bits());
                proptest::prop_assert_eq!(fast.timestamp_ms(), general.timestamp_ms());
                let pairs = |s: &Sample<'_>| -> Vec<(String, String)> {
                    s.labels().iter().map(|(n, v)| (n.to_string(), v.raw().to_string())).collect()
                };
                proptest::prop_assert_eq!(pairs(&fast), pairs(&general));
            }
        }
    }
}
