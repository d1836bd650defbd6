//! Eight bytes at a time (SWAR): byte-class tests on a `u64` instead of a loop, the hot
//! scans' alternative to `unsafe` SIMD. The tests set the high bit of each matching byte;
//! callers find the first with `trailing_zeros() / 8`. Words are read with [`word_at`]
//! (eight bytes) or [`word_or_tail`] (fewer at the end).

/// One in every byte.
const ONES: u64 = 0x0101_0101_0101_0101;
/// The high bit of every byte.
pub(crate) const HIGH: u64 = 0x8080_8080_8080_8080;

/// High bit set in each byte of `v` (all bytes < 0x80) within `lo..=hi`.
#[inline(always)]
pub(crate) fn bytes_in_range(v: u64, lo: u8, hi: u8) -> u64 {
    let at_least_lo = v + ONES * u64::from(0x80 - lo);
    let above_hi = v + ONES * u64::from(0x7f - hi);
    at_least_lo & !above_hi & HIGH
}

/// High bit set in each byte of `chunk` that equals `byte` (exact: no false positives
/// below the first match, which is all the callers use).
#[inline(always)]
pub(crate) fn has_byte(chunk: u64, byte: u8) -> u64 {
    let x = chunk ^ (ONES * u64::from(byte));
    x.wrapping_sub(ONES) & !x & HIGH
}

/// High bit set in every byte of `chunk` that equals `byte`, exactly (unlike [`has_byte`],
/// for callers that take several matches of one word).
#[inline(always)]
pub(crate) fn bytes_equal(chunk: u64, byte: u8) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    // A byte of `x` is zero exactly when its low seven bits plus 0x7f do not carry into
    // its high bit and that bit is clear itself.
    let x = chunk ^ (ONES * u64::from(byte));
    !(((x & LOW7) + LOW7) | x | LOW7)
}

/// High bit set in the lowest byte of `chunk` below `n` (`n <= 0x80`), and maybe in
/// bytes above it (a borrow can carry upwards): exact for the first match only, which is
/// all the callers use. Bytes of 0x80 and above never match.
#[inline(always)]
pub(crate) fn first_below(chunk: u64, n: u8) -> u64 {
    chunk.wrapping_sub(ONES * u64::from(n)) & !chunk & HIGH
}

/// A mask of the low `len` bytes of a word (`1 <= len <= 8`).
#[inline(always)]
pub(crate) fn low_bytes(len: usize) -> u64 {
    u64::MAX >> (64 - 8 * len)
}

/// The eight bytes at `i` as a little-endian word, if there are eight.
#[inline(always)]
pub(crate) fn word_at(bytes: &[u8], i: usize) -> Option<u64> {
    let chunk: [u8; 8] = bytes.get(i..i.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_le_bytes(chunk))
}

/// The bytes from `i` on as a little-endian word, zero past the end of `bytes` (all zero
/// when `i` is past it). Near the end the last eight bytes are read and shifted down, a
/// slice shorter than a word in two overlapping reads.
#[inline(always)]
pub(crate) fn word_or_tail(bytes: &[u8], i: usize) -> u64 {
    match word_at(bytes, i) {
        Some(word) => word,
        None if bytes.len() >= 8 && i < bytes.len() => {
            word_at(bytes, bytes.len() - 8).unwrap_or(0) >> (8 * (i + 8 - bytes.len()))
        }
        None => short_word(bytes.get(i..).unwrap_or(&[])),
    }
}

/// The bytes of `b` (fewer than eight) as a little-endian word, zero above them: two
/// overlapping reads, no byte loop.
#[inline(always)]
fn short_word(b: &[u8]) -> u64 {
    let n = b.len();
    let four = |at: usize| u64::from(u32::from_le_bytes(b[at..at + 4].try_into().unwrap_or_default()));
    let two = |at: usize| u64::from(u16::from_le_bytes(b[at..at + 2].try_into().unwrap_or_default()));
    match n {
        4.. => four(0) | four(n - 4) << (8 * (n - 4)),
        2.. => two(0) | two(n - 2) << (8 * (n - 2)),
        1 => u64::from(b[0]),
        0 => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_tests_agree_with_a_byte_loop() {
        let words: Vec<[u8; 8]> = (0..=127u8)
            .map(|b| [b, b'a', b'z', b'0', b'9', b'_', b':', b.wrapping_add(3) & 0x7f])
            .collect();
        for word in words {
            let v = u64::from_le_bytes(word);
            for (lo, hi) in [(b'a', b'z'), (b'0', b'9'), (b'_', b'_')] {
                let want = word.iter().enumerate().fold(0u64, |acc, (i, &b)| {
                    acc | (u64::from((lo..=hi).contains(&b)) << (8 * i + 7))
                });
                assert_eq!(bytes_in_range(v, lo, hi), want, "{word:?} {lo}..={hi}");
            }
            let first = |bits: u64| (bits != 0).then(|| bits.trailing_zeros() / 8);
            let want = word.iter().position(|&b| b == b'_').map(|p| p as u32);
            assert_eq!(first(has_byte(v, b'_')), want, "{word:?}");
            for byte in [b'"', b'_', word[0]] {
                let want = word
                    .iter()
                    .enumerate()
                    .fold(0u64, |acc, (i, &b)| acc | (u64::from(b == byte) << (8 * i + 7)));
                assert_eq!(bytes_equal(v, byte), want, "{word:?} = {byte}");
            }
            for n in [0x0b, 0x23, 0x80] {
                let want = word.iter().position(|&b| b < n).map(|p| p as u32);
                assert_eq!(first(first_below(v, n)), want, "{word:?} below {n}");
            }
        }
    }

    #[test]
    fn word_or_tail_reads_what_is_left() {
        let bytes: Vec<u8> = (1..=11).collect();
        for i in 0..=13 {
            let want = bytes
                .iter()
                .skip(i)
                .take(8)
                .enumerate()
                .fold(0u64, |acc, (k, &b)| acc | u64::from(b) << (8 * k));
            assert_eq!(word_or_tail(&bytes, i), want, "at {i}");
            assert_eq!(
                word_or_tail(&bytes[..5], i),
                want & if i < 5 { u64::MAX >> (8 * (3 + i)) } else { 0 },
                "short, at {i}"
            );
        }
    }
}
