//! 64-bit fingerprints of names and label sets, for the places that remember identities
//! without storing them (OpenMetrics validation) or look them up before comparing in full
//! (the tracker). Label sets combine by XOR, so label order does not matter.
//!
//! Texts are read eight bytes at a time where they stand; only an escaped value (or a
//! name compared with `:` read as `_`) goes a byte at a time, into the same hash. A byte
//! at a time (FNV-1a) the fingerprints had been a fifth of a first ingest.

use crate::swar::word_or_tail;

/// An odd constant with no structure to cancel against (2^64 / the golden ratio).
const K: u64 = 0x9e37_79b9_7f4a_7c15;

/// Adds a word to the state: each step is a bijection of the state for a given word, so
/// two texts that differ in one word never meet.
#[inline(always)]
fn mix(h: u64, word: u64) -> u64 {
    (h ^ word).wrapping_mul(K).rotate_left(26)
}

/// The final avalanche (MurmurHash3's), so that fingerprints combined by XOR stay
/// independent.
#[inline(always)]
fn avalanche(h: u64) -> u64 {
    let h = (h ^ (h >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    let h = (h ^ (h >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// A hash fed texts a word or a byte at a time, alike: the words of a text, its last
/// bytes zero-padded, then its length.
#[derive(Clone, Copy)]
struct Stream {
    h: u64,
    /// The bytes of the current word so far, and how many.
    word: u64,
    filled: u32,
    /// The current text's length.
    len: u64,
}

impl Stream {
    const fn new() -> Self {
        Stream {
            h: 0x243f_6a88_85a3_08d3,
            word: 0,
            filled: 0,
            len: 0,
        }
    }

    #[inline(always)]
    fn byte(&mut self, byte: u8) {
        self.word |= u64::from(byte) << (8 * self.filled);
        self.filled += 1;
        self.len += 1;
        if self.filled == 8 {
            self.h = mix(self.h, self.word);
            (self.word, self.filled) = (0, 0);
        }
    }

    /// Feeds `bytes`, a word at a time when the current word is empty (as it is at the
    /// start of a text).
    #[inline(always)]
    fn slice(&mut self, bytes: &[u8]) {
        if self.filled != 0 {
            bytes.iter().for_each(|&b| self.byte(b));
            return;
        }
        let mut words = bytes.chunks_exact(8);
        for chunk in &mut words {
            self.h = mix(self.h, u64::from_le_bytes(chunk.try_into().unwrap_or_default()));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            self.word = word_or_tail(rest, 0);
            self.filled = rest.len() as u32;
        }
        self.len += bytes.len() as u64;
    }

    /// Ends a text: its last word, then its length.
    #[inline(always)]
    fn end_text(&mut self) {
        if self.filled != 0 {
            self.h = mix(self.h, self.word);
            (self.word, self.filled) = (0, 0);
        }
        self.h = mix(self.h, self.len);
        self.len = 0;
    }

    #[inline(always)]
    fn finish(mut self) -> u64 {
        self.end_text();
        avalanche(self.h)
    }
}

/// The fingerprint of `bytes`.
pub(crate) fn of_bytes(bytes: &[u8]) -> u64 {
    let mut stream = Stream::new();
    stream.slice(bytes);
    stream.finish()
}

/// The hash of a sequence of words (identities, not text: a label set by its pairs'
/// pointers), their count included, so that a sequence and its prefix differ.
pub(crate) fn of_words(words: impl IntoIterator<Item = u64>) -> u64 {
    let (h, n) = words.into_iter().fold((0, 0u64), |(h, n), w| (mix(h, w), n + 1));
    avalanche(mix(h, n))
}

/// The fingerprint of the bytes `bytes` yields: [`of_bytes`] of them.
pub(crate) fn of_byte_iter(bytes: impl IntoIterator<Item = u8>) -> u64 {
    let mut stream = Stream::new();
    bytes.into_iter().for_each(|b| stream.byte(b));
    stream.finish()
}

/// A label value as fingerprints read it: its bytes with escapes resolved, so that a
/// parsed value and the value a series stores fingerprint alike.
pub(crate) trait Value {
    /// The fingerprint of the label `name` with this value.
    fn label_fingerprint(self, name: &str) -> u64;
}

/// A label: its name and its value as two texts of one stream (each ends with its
/// length, so no separator is needed).
fn label_stream(name: &str) -> Stream {
    let mut stream = Stream::new();
    stream.slice(name.as_bytes());
    stream.end_text();
    stream
}

impl Value for &str {
    fn label_fingerprint(self, name: &str) -> u64 {
        let mut stream = label_stream(name);
        stream.slice(self.as_bytes());
        stream.finish()
    }
}

/// The label `name` whose value is the bytes `value` yields (an escaped value, unescaped
/// as it is read): [`of_label`] of the value they make.
pub(crate) fn of_label_bytes(name: &str, value: impl IntoIterator<Item = u8>) -> u64 {
    let mut stream = label_stream(name);
    value.into_iter().for_each(|b| stream.byte(b));
    stream.finish()
}

/// One label: its name, then its (unescaped) value.
pub(crate) fn of_label(name: &str, value: impl Value) -> u64 {
    value.label_fingerprint(name)
}

/// An order-independent label set: `seed` XOR the fingerprint of every label.
pub(crate) fn of_label_set<'n, V: Value>(seed: u64, labels: impl IntoIterator<Item = (&'n str, V)>) -> u64 {
    labels
        .into_iter()
        .fold(seed, |acc, (name, value)| acc ^ of_label(name, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_sequences_differ_by_order_and_by_length() {
        let words = |w: &[u64]| of_words(w.iter().copied());
        assert_eq!(words(&[8, 16]), words(&[8, 16]));
        assert_ne!(words(&[8, 16]), words(&[16, 8]));
        assert_ne!(words(&[8, 16]), words(&[8, 16, 0]));
        assert_ne!(words(&[]), words(&[0]));
    }

    #[test]
    fn label_sets_ignore_order_but_not_content() {
        let set = |labels: &[(&'static str, &'static str)]| of_label_set(7, labels.iter().copied());
        assert_eq!(set(&[("a", "1"), ("b", "2")]), set(&[("b", "2"), ("a", "1")]));
        assert_ne!(set(&[("a", "1"), ("b", "2")]), set(&[("a", "2"), ("b", "1")]));
        assert_ne!(set(&[("ab", "")]), set(&[("a", "b")]));
        assert_ne!(of_bytes(b"a_total"), of_bytes(b"a_created"));
        assert_ne!(of_bytes(b""), of_bytes(b"\0"));
        assert_ne!(of_bytes(b"a"), of_bytes(b"a\0"));
    }

    #[test]
    fn a_text_hashes_alike_by_words_and_by_bytes() {
        let text: Vec<u8> = (0..300u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for len in 0..text.len() {
            let bytes = &text[..len];
            assert_eq!(of_bytes(bytes), of_byte_iter(bytes.iter().copied()), "{len}");
            // A text fed after bytes that left a word half full.
            let (mut by_slice, mut by_byte) = (Stream::new(), Stream::new());
            by_slice.byte(1);
            by_byte.byte(1);
            by_slice.slice(bytes);
            bytes.iter().for_each(|&b| by_byte.byte(b));
            assert_eq!(by_slice.finish(), by_byte.finish(), "{len}");
        }
    }

    #[test]
    fn a_label_hashes_alike_from_its_value_or_its_bytes() {
        let long = "x".repeat(150);
        for value in ["", "v", "vllm-00001:8000", long.as_str()] {
            assert_eq!(
                of_label("name", value),
                of_label_bytes("name", value.bytes()),
                "{value}"
            );
        }
        assert_ne!(of_label("ab", "c"), of_label("a", "bc"));
    }
}
