//! The one name grammar: metric names (`[a-zA-Z_:][a-zA-Z0-9_:]*`) and label names
//! (`[a-zA-Z_][a-zA-Z0-9_]*`), for the page parser, the metadata parser, the selectors and
//! the writer alike; and name comparison with ':' and '_' alike on request.

use nom::error::{Error, ErrorKind};
use nom::IResult;

use crate::swar::{bytes_in_range, word_at, HIGH};

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

/// High bit set in each byte of `chunk` that is a name character: `[a-zA-Z0-9_]`, and ':'
/// when `colon`. Eight bytes per step instead of a table lookup per byte.
#[inline(always)]
fn name_bytes(chunk: u64, colon: bool) -> u64 {
    let ascii = !chunk & HIGH;
    let low7 = chunk & !HIGH;
    let folded = low7 | 0x2020_2020_2020_2020;
    // ':' follows '9': with colons, one range takes both.
    let digits = if colon {
        bytes_in_range(low7, b'0', b':')
    } else {
        bytes_in_range(low7, b'0', b'9')
    };
    (bytes_in_range(folded, b'a', b'z') | digits | bytes_in_range(low7, b'_', b'_')) & ascii
}

/// Length of the run of name characters at the start of `bytes` (first byte not checked
/// for being a valid *first* character).
#[inline(always)]
fn name_run(bytes: &[u8], colon: bool) -> usize {
    let mut i = 0;
    while let Some(chunk) = word_at(bytes, i) {
        let misses = !name_bytes(chunk, colon) & HIGH;
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

/// Whether two slices hold the same bytes, a word at a time (names and label sets are
/// short: no call to `memcmp`).
#[inline(always)]
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let word = |w: &[u8], i: usize| word_at(w, i).unwrap_or_default();
    let len = a.len();
    if len < 8 {
        return same_short(a, b);
    }
    // Whole words, then the last eight bytes (overlapping the words before) for the rest.
    let mut i = 0;
    while i + 8 < len {
        if word(a, i) != word(b, i) {
            return false;
        }
        i += 8;
    }
    word(a, len - 8) == word(b, len - 8)
}

/// The byte order of two slices (`a.cmp(b)`), a word at a time: names are short, and
/// `Ord` on slices is a call to `memcmp`.
#[inline]
pub(crate) fn compare_bytes(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    let mut i = 0;
    while let (Some(p), Some(q)) = (word_at(a, i), word_at(b, i)) {
        if p != q {
            let at = i + ((p ^ q).trailing_zeros() / 8) as usize;
            return a[at].cmp(&b[at]);
        }
        i += 8;
    }
    a[i..].iter().cmp(b[i..].iter())
}

/// [`same_bytes`] of two slices of the same length below eight: the first and the last
/// four (or two) bytes, overlapping, as integers (`a == b` is a call to `memcmp`).
#[inline(always)]
fn same_short(a: &[u8], b: &[u8]) -> bool {
    let len = a.len();
    let four = |w: &[u8], i: usize| {
        w.get(i..i + 4)
            .and_then(|s| s.try_into().ok())
            .map(u32::from_le_bytes)
    };
    let two = |w: &[u8], i: usize| {
        w.get(i..i + 2)
            .and_then(|s| s.try_into().ok())
            .map(u16::from_le_bytes)
    };
    match len {
        0 => true,
        1 => a[0] == b[0],
        2 | 3 => two(a, 0) == two(b, 0) && two(a, len - 2) == two(b, len - 2),
        _ => four(a, 0) == four(b, 0) && four(a, len - 4) == four(b, len - 4),
    }
}

/// `nom` parser for a metric name (the selector and metadata grammars).
pub(crate) fn metric_name(input: &str) -> IResult<&str, &str> {
    split_name(input, metric_name_len(input.as_bytes()))
}

/// `nom` parser for a label name.
pub(crate) fn label_name(input: &str) -> IResult<&str, &str> {
    split_name(input, label_name_len(input.as_bytes()))
}

fn split_name(input: &str, len: usize) -> IResult<&str, &str> {
    if len == 0 {
        return Err(nom::Err::Error(Error::new(input, ErrorKind::TakeWhile1)));
    }
    Ok((&input[len..], &input[..len]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compare_bytes_agrees_with_ord() {
        let texts: [&[u8]; 9] = [
            b"",
            b"a",
            b"ab",
            b"abcdefgh",
            b"abcdefghi",
            b"abcdefgh_",
            b"abcdefgi",
            b"b",
            b"abcdefghijklmnopq",
        ];
        for a in texts {
            for b in texts {
                assert_eq!(compare_bytes(a, b), a.cmp(b), "{a:?} {b:?}");
            }
        }
    }

    /// Word-wise and short comparisons agree with `==`, a difference at any byte found.
    #[test]
    fn same_bytes_agrees_with_eq() {
        let a: Vec<u8> = (0..24u8).map(|i| b'a' + i).collect();
        for len in 0..a.len() {
            assert!(same_bytes(&a[..len], &a[..len]), "{len}");
            for at in 0..len {
                let mut b = a[..len].to_vec();
                b[at] ^= 1;
                assert!(!same_bytes(&a[..len], &b), "{len}, {at}");
            }
            assert!(!same_bytes(&a[..len], &a[..len + 1]));
        }
    }

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
    fn nom_name_parsers() {
        assert_eq!(metric_name("vllm:x_total{a"), Ok(("{a", "vllm:x_total")));
        assert_eq!(label_name("le=\"1\""), Ok(("=\"1\"", "le")));
        assert!(label_name("a:b").is_ok_and(|(rest, name)| name == "a" && rest == ":b"));
        assert!(metric_name("0a").is_err() && label_name("").is_err());
    }
}
