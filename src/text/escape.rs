//! Escapes in label values and help text: `\\`, `\n`, and `\"` where it is one.
//! Resolved lazily, byte by byte, so comparing never allocates.

use std::borrow::Cow;

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

/// Resolves escapes; `quote` says whether `\"` is an escape (it is not in 0.0.4 HELP text).
pub(crate) fn unescape(raw: &str, quote: bool) -> Cow<'_, str> {
    if !raw.as_bytes().contains(&b'\\') {
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
}
