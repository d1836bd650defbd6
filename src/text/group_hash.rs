//! The hashes the OpenMetrics validator remembers label groups and reserved names by:
//! sixteen bytes per multiply, read a word at a time from the page.
//!
//! A label is hashed as the text `name="value` (unescaped names and values hold no quote,
//! so the first quote ends the name), which a plain label set holds as written: the
//! validator hashes it in place, one pass over the page's bytes, with no second pass for
//! the name. Other sets assemble the same text ([`of_parts`]), so a label hashes alike
//! whichever way it was written.

use crate::swar::{low_bytes, word_or_tail};

/// Digits of pi: arbitrary odd-looking constants with no structure to cancel against.
const SEEDS: [u64; 4] = [
    0x243f_6a88_85a3_08d3,
    0x1319_8a2e_0370_7344,
    0xa409_3822_299f_31d0,
    0x082e_fa98_ec4e_6c89,
];

/// The 128-bit product of `a` and `b`, its halves XORed: one multiplication mixes every
/// input bit into every output bit.
#[inline(always)]
fn folded_multiply(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    product as u64 ^ (product >> 64) as u64
}

/// Adds the sixteen bytes `(low, high)` at `offset` (zero past the text's end) to `h`.
/// Each block is multiplied on its own, keyed by its offset, so that the multiplications
/// run side by side instead of each waiting for the one before (label values are long).
#[inline(always)]
fn mix(h: u64, offset: usize, low: u64, high: u64) -> u64 {
    let key = SEEDS[2].wrapping_add(offset as u64);
    h.wrapping_add(folded_multiply(low ^ key, high ^ SEEDS[3]))
}

/// The final mixing, so that hashes combined by XOR stay independent.
#[inline(always)]
fn finish(h: u64, len: usize) -> u64 {
    folded_multiply(h ^ SEEDS[0], len as u64 ^ SEEDS[1])
}

/// The hash of `bytes`.
#[inline(always)]
pub(crate) fn of_bytes(bytes: &[u8]) -> u64 {
    let mut h = 0;
    let mut i = 0;
    while i < bytes.len() {
        let left = bytes.len() - i;
        let low = word_or_tail(bytes, i) & low_bytes(left.min(8));
        let high = if left > 8 {
            word_or_tail(bytes, i + 8) & low_bytes((left - 8).min(8))
        } else {
            0
        };
        h = mix(h, i, low, high);
        i += 16;
    }
    finish(h, bytes.len())
}

/// The hash of the concatenation of `parts`, equal to [`of_bytes`] of it: assembled on
/// the stack when it is short (names and labels are), a byte at a time otherwise.
pub(crate) fn of_parts(parts: &[&[u8]]) -> u64 {
    if let [whole] | [whole, []] = parts {
        return of_bytes(whole);
    }
    let len: usize = parts.iter().map(|p| p.len()).sum();
    let mut buffer = [0u8; 128];
    if len <= buffer.len() {
        let mut at = 0;
        for part in parts {
            buffer[at..at + part.len()].copy_from_slice(part);
            at += part.len();
        }
        return of_bytes(&buffer[..len]);
    }
    let mut h = 0;
    let mut block = [0u8; 16];
    let mut at = 0;
    for &byte in parts.iter().flat_map(|p| p.iter()) {
        block[at % 16] = byte;
        at += 1;
        if at % 16 == 0 {
            h = mix_block(h, at - 16, &block);
            block = [0; 16];
        }
    }
    if at % 16 > 0 {
        h = mix_block(h, at - at % 16, &block);
    }
    finish(h, len)
}

fn mix_block(h: u64, offset: usize, block: &[u8; 16]) -> u64 {
    let (low, high) = block.split_at(8);
    let word = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
    mix(h, offset, word(low), word(high))
}

/// The hash of the label `name="value` (both as written, without escapes).
pub(crate) fn of_label(name: &str, value: &str) -> u64 {
    of_parts(&[name.as_bytes(), b"=\"", value.as_bytes()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_hash_as_their_concatenation() {
        let text: Vec<u8> = (0..600u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for len in (0..40).chain([127, 128, 129, 300, 599]) {
            let whole = of_bytes(&text[..len]);
            for cut in [0, len / 3, len / 2, len] {
                assert_eq!(of_parts(&[&text[..cut], &text[cut..len]]), whole, "{len} {cut}");
            }
        }
        assert_eq!(of_label("le", "+Inf"), of_bytes(b"le=\"+Inf"));
    }

    #[test]
    fn lengths_and_contents_differ() {
        assert_ne!(of_bytes(b""), of_bytes(b"\0"));
        assert_ne!(of_bytes(b"a"), of_bytes(b"a\0"));
        assert_ne!(of_label("a", "bc"), of_label("ab", "c"));
        assert_ne!(of_bytes(&[0; 16]), of_bytes(&[0; 17]));
        // Blocks are keyed by their offset: swapping two changes the hash.
        let (a, b) = ([1u8; 16], [2u8; 16]);
        assert_ne!(of_parts(&[&a, &b]), of_parts(&[&b, &a]));
    }
}
