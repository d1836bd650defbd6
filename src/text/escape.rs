//! Escapes in label values and help text: `\\`, `\n`, and `\"` where it is one.
//! Resolved lazily, byte by byte, so comparing never allocates.

use std::borrow::Cow;

use crate::swar::{has_byte, word_or_tail};

/// Bytes of an escaped text with `\\`, `\n` (and `\"` where it is an escape) resolved.
///
/// # Example
/// ```
/// let bytes: Vec<u8> = promrate::LabelValue::from_raw(r#"\"q\""#).unescaped_bytes().collect();
/// assert_eq!(bytes, b"\"q\"");
/// ```
#[derive(Clone, Debug)]
pub struct UnescapedBytes<'page> {
    raw: &'page [u8],
    pos: usize,
    quote: bool,
}

impl<'page> UnescapedBytes<'page> {
    pub(crate) fn new(raw: &'page str, quote: bool) -> Self {
        UnescapedBytes {
            raw: raw.as_bytes(),
            pos: 0,
            quote,
        }
    }
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

/// Whether two different texts of names are one name, escapes resolved: an undefined
/// escape is its backslash, so `"a\qb"` and `"a\\qb"` are both `a\qb`, as OpenMetrics
/// 2.0 says. (Asked at a family's edge, so seldom.)
#[cold]
#[inline(never)]
pub(crate) fn same_resolved(a: &str, b: &str) -> bool {
    (has_backslash(a) || has_backslash(b)) && UnescapedBytes::new(a, true).eq(UnescapedBytes::new(b, true))
}

/// The one of `suffixes` that the name `sample` is the name `family` followed by, escapes
/// resolved in both (see [`same_resolved`]); no allocation. The longest that fits.
#[cold]
#[inline(never)]
pub(crate) fn resolved_suffix(
    sample: &str,
    family: &str,
    suffixes: &'static [&'static str],
) -> Option<&'static str> {
    if !has_backslash(sample) && !has_backslash(family) {
        return None;
    }
    let mut rest = UnescapedBytes::new(sample, true);
    for byte in UnescapedBytes::new(family, true) {
        if rest.next() != Some(byte) {
            return None;
        }
    }
    suffixes
        .iter()
        .filter(|suffix| rest.clone().eq(suffix.bytes()))
        .max_by_key(|suffix| suffix.len())
        .copied()
}

/// Whether `text` holds a backslash: a word at a time for a name's length (a call to a
/// vector search cost more than the whole check), a vector search beyond.
#[inline]
pub(crate) fn has_backslash(text: &str) -> bool {
    let b = text.as_bytes();
    if b.len() > 64 {
        return memchr::memchr(b'\\', b).is_some();
    }
    let mut i = 0;
    while i < b.len() {
        if has_byte(word_or_tail(b, i), b'\\') != 0 {
            return true;
        }
        i += 8;
    }
    false
}

/// Resolves escapes; `quote` says whether `\"` is an escape (it is not in 0.0.4 HELP text).
pub(crate) fn unescape(raw: &str, quote: bool) -> Cow<'_, str> {
    if !has_backslash(raw) {
        return Cow::Borrowed(raw);
    }
    let bytes: Vec<u8> = UnescapedBytes::new(raw, quote).collect();
    // Escapes only replace ASCII with ASCII, so the result stays valid UTF-8.
    Cow::Owned(
        String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::labels::LabelValue;

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
    fn a_backslash_is_found_at_any_place_and_length() {
        for len in 0..80 {
            let plain = "a".repeat(len);
            assert!(!has_backslash(&plain), "{len}");
            for at in 0..len {
                let mut text = plain.clone().into_bytes();
                text[at] = b'\\';
                assert!(has_backslash(std::str::from_utf8(&text).unwrap()), "{len} {at}");
            }
        }
        // Bytes that differ from a backslash by one bit, and multibyte characters.
        assert!(!has_backslash("]\u{5d}L|\u{dc}\u{15c}é☃"));
    }

    #[test]
    fn names_are_compared_with_their_escapes_resolved() {
        assert!(same_resolved(r"a\qb", r"a\\qb"));
        assert!(same_resolved(r"a\\b", r"a\\b"));
        assert!(!same_resolved(r"a\nb", r"a\\nb"));
        assert!(!same_resolved("ab", "ab"), "only asked with an escape");
        let suffixes: &[&str] = &["_total", "_created"];
        assert_eq!(resolved_suffix(r"a\\q_total", r"a\q", suffixes), Some("_total"));
        assert_eq!(resolved_suffix(r"a\q", r"a\\q", &[""]), Some(""));
        assert_eq!(resolved_suffix(r"a\\q_count", r"a\q", &["_total"]), None);
        assert_eq!(
            resolved_suffix("a_total", "a", &["_total"]),
            None,
            "only asked with an escape"
        );
    }
}
