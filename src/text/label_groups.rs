//! The label groups of one OpenMetrics family: whether a sample continues the current
//! group, starts a new one, or returns to an earlier one (a split, which the spec forbids).
//!
//! Exporters write a family's groups in an order: sorted by label values (Go), or a
//! histogram's buckets by bound. While every group of the family has the same label names,
//! in the same order, without escapes, and each group is greater than the one before (see
//! [`Ordered`]), the groups are distinct by construction: no hash and no set is needed,
//! only a comparison with the previous group's text. The first group that breaks this
//! turns the family's groups into hashes in a set, as every group of a family that never
//! had this shape is kept.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use super::group_hash;
use super::labels::{Labels, Spans};
use super::swar::{bytes_equal, has_byte, word_at, word_or_tail};
use super::value::parse_float;
use crate::fingerprint;

/// Sets of hashes that are already well mixed: hashing them again (SipHash) cost more than
/// the rest of a sample's checks.
pub(crate) type Hashes = HashSet<u64, BuildHasherDefault<MixedHash>>;

/// The [`Hasher`] of [`Hashes`]: a `u64` that is already a hash, kept as it is.
#[derive(Default)]
pub(crate) struct MixedHash(u64);

impl Hasher for MixedHash {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0 = fingerprint::of_bytes(bytes.iter().copied());
    }
    fn write_u64(&mut self, hash: u64) {
        self.0 = hash;
    }
}

/// Order-independent identity of a label set without the label `skip`: the XOR of its
/// labels' hashes. A plain set's labels are hashed where the page holds them; a label
/// with escapes is hashed unescaped, by another function: the two never name the same
/// label (an unescaped text holds no backslash, quote or newline).
pub(crate) fn group_of(labels: Labels<'_>, skip: Option<&str>) -> u64 {
    let plain = labels.is_plain();
    let raw = labels.as_raw();
    let kept = labels.iter().filter(|(name, _)| Some(*name) != skip);
    kept.fold(0x9e37_79b9_7f4a_7c15, |acc, (name, value)| {
        let label = if plain {
            // `name="value`, as written: the name's offset, then both and `="`.
            let start = (name.as_ptr() as usize).wrapping_sub(raw.as_ptr() as usize);
            let text = raw
                .as_bytes()
                .get(start..start + name.len() + 2 + value.raw().len());
            text.map_or_else(|| group_hash::of_label(name, value.raw()), group_hash::of_bytes)
        } else if value.raw().contains('\\') || name.contains('\\') {
            fingerprint::of_label(name, value.unescaped_bytes())
        } else {
            group_hash::of_label(name, value.raw())
        };
        acc ^ label
    })
}

/// Where a sample's label group stands in its family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placement {
    /// The family's first sample.
    First,
    /// The same group as the sample before.
    Same,
    /// A group the family has not had.
    New,
    /// A group the family had before another one: the sample splits it.
    Split,
}

/// The current group: its labels, while the family is [`Ordered`], or its hash.
#[derive(Debug, Clone, Copy)]
enum Current<'page> {
    Ordered(Labels<'page>),
    Hashed(u64),
}

/// The label groups of the open family.
#[derive(Debug, Clone, Default)]
pub(crate) struct Groups<'page> {
    current: Option<Current<'page>>,
    /// While the family is ordered, its groups' texts, first to last (hashed if the order
    /// breaks): a plain set is read again from its text alone.
    chain: Vec<&'page str>,
    order: Ordered,
    /// Once the order broke: every group of the family (from its second group on).
    hashes: Hashes,
}

impl<'page> Groups<'page> {
    /// Room for a family's usual groups: growing from empty cost more than the checks.
    pub(crate) fn with_capacity(groups: usize) -> Self {
        Groups {
            current: None,
            chain: Vec::with_capacity(groups),
            order: Ordered::default(),
            hashes: Hashes::with_capacity_and_hasher(groups, Default::default()),
        }
    }

    /// Forgets the family (the collections keep their room).
    pub(crate) fn clear(&mut self) {
        self.current = None;
        self.chain.clear();
        self.order = Ordered::default();
        // Clearing costs the table's capacity: a large family before would make every
        // small one after pay for it.
        if !self.hashes.is_empty() {
            self.hashes.clear();
        }
    }

    /// Places the group of `labels` without the label `skip` (or, with `constant`, the
    /// group every sample of the family shares), and makes it current unless it splits.
    pub(crate) fn place(&mut self, labels: Labels<'page>, skip: Option<&str>, constant: bool) -> Placement {
        let orderable = !constant && skip.is_none() && labels.is_plain();
        match self.current {
            None if orderable => {
                self.chain.push(labels.as_raw());
                self.current = Some(Current::Ordered(labels));
                Placement::First
            }
            None => {
                self.current = Some(Current::Hashed(if constant { 0 } else { group_of(labels, skip) }));
                Placement::First
            }
            Some(Current::Ordered(previous)) if orderable => match self.order.step(previous, labels) {
                Some(Placement::Same) => Placement::Same,
                Some(_) => {
                    self.chain.push(labels.as_raw());
                    self.current = Some(Current::Ordered(labels));
                    Placement::New
                }
                None => {
                    self.hash_chain();
                    self.place_hashed(group_of(labels, None))
                }
            },
            Some(Current::Ordered(_)) => {
                self.hash_chain();
                self.place_hashed(if constant { 0 } else { group_of(labels, skip) })
            }
            Some(Current::Hashed(_)) => self.place_hashed(if constant { 0 } else { group_of(labels, skip) }),
        }
    }

    /// The current group's hash (the histogram check keys on it), 0 before any.
    pub(crate) fn current_hash(&self) -> u64 {
        match self.current {
            Some(Current::Ordered(labels)) => group_of(labels, None),
            Some(Current::Hashed(hash)) => hash,
            None => 0,
        }
    }

    /// The order stopped proving the groups distinct: from here on they are hashes.
    #[cold]
    fn hash_chain(&mut self) {
        for raw in self.chain.drain(..) {
            let count = count_quotes(raw.as_bytes()) / 2;
            let labels = Labels::simple(raw, count as u32, Spans::default());
            self.hashes.insert(group_of(labels, None));
        }
        if let Some(Current::Ordered(labels)) = self.current {
            self.current = Some(Current::Hashed(group_of(labels, None)));
        }
    }

    fn place_hashed(&mut self, group: u64) -> Placement {
        let Some(Current::Hashed(current)) = self.current else {
            self.current = Some(Current::Hashed(group));
            return Placement::First;
        };
        if current == group {
            return Placement::Same;
        }
        // The set holds every group of the family once it has two (the first is added at
        // the first change): one probe per change finds a split.
        if self.hashes.is_empty() {
            self.hashes.insert(current);
        }
        if !self.hashes.insert(group) {
            return Placement::Split;
        }
        self.current = Some(Current::Hashed(group));
        Placement::New
    }
}

/// The proof that a family's groups are distinct, kept as they arrive.
///
/// Plain label sets with the same names in the same order are the same group exactly
/// when their texts are equal, and each is a tuple of values. Tuples ordered
/// lexicographically, each position by one fixed order on values, are totally ordered:
/// if every group is greater than the one before, all are distinct. Two orders on values
/// are followed per position (the first 64), and a position keeps whichever has held for
/// every step there so far: bytes (Go sorts label values so), and numbers before other
/// text, by value then bytes (a histogram's buckets by `le`).
#[derive(Debug, Clone, Copy)]
struct Ordered {
    /// Positions where every step so far went up in byte order.
    by_bytes: u64,
    /// Positions where every step so far went up in number order.
    by_number: u64,
    /// The position of the last step and the number its new value reads as: the next
    /// step there starts from it.
    last_number: Option<(usize, Option<f64>)>,
}

impl Default for Ordered {
    fn default() -> Self {
        Ordered {
            by_bytes: u64::MAX,
            by_number: u64::MAX,
            last_number: None,
        }
    }
}

impl Ordered {
    /// Whether the plain set `next` is the same group as `previous` (`Same`), a greater
    /// one (`New`); `None` when the order does not tell (other names, or not greater).
    #[inline]
    fn step(&mut self, previous: Labels<'_>, next: Labels<'_>) -> Option<Placement> {
        let (position, before, after, bytes_up) = match first_difference(previous, next.as_raw()) {
            Difference::None => return Some(Placement::Same),
            Difference::Value {
                position,
                before,
                after,
                bytes_up,
            } => (position, before, after, bytes_up),
            Difference::Names => return None,
        };
        let bit = 1u64.checked_shl(u32::try_from(position).ok()?)?;
        if !bytes_up {
            self.by_bytes &= !bit;
        }
        // Taken whatever the step: a step elsewhere may change this value without reading it.
        let cached = self.last_number.take();
        if self.by_number & bit != 0 {
            let from = match cached {
                Some((at, number)) if at == position => number,
                _ => number(before),
            };
            let to = number(after);
            self.last_number = Some((position, to));
            if !number_up(from, to, bytes_up) {
                self.by_number &= !bit;
            }
        }
        ((self.by_bytes | self.by_number) & bit != 0).then_some(Placement::New)
    }
}

/// How a plain label set differs from another.
#[derive(Debug, PartialEq)]
enum Difference<'a> {
    /// Not at all.
    None,
    /// The same names in the same order; the label at `position` is the first whose value
    /// differs: `before` in the one, `after` in the other, greater in bytes if `bytes_up`.
    Value {
        position: usize,
        before: &'a str,
        after: &'a str,
        bytes_up: bool,
    },
    /// Other names, or in another order, or more or fewer.
    Names,
}

/// How the plain set `b` (`name="value"` terms joined by commas, no escapes, so quotes
/// only delimit values) differs from the plain set `a`.
#[inline]
fn first_difference<'a>(a: Labels<'a>, b: &'a str) -> Difference<'a> {
    let (x, y) = (a.as_raw().as_bytes(), b.as_bytes());
    let at = common_prefix(x, y);
    if at == x.len() && at == y.len() {
        return Difference::None;
    }
    // The label holding the first difference: from the lengths the parser recorded (the
    // last labels), else from the number of quotes before it.
    let found = a.recorded_label_at(at).or_else(|| {
        let quotes = count_quotes(&x[..at]);
        // After an even number of quotes the texts differ in a name, or one is longer.
        let open = memchr::memrchr(b'"', &x[..at]).filter(|_| quotes % 2 == 1)?;
        Some((quotes / 2, open + 1, next_quote(x, at)?))
    });
    let Some((position, value_start, close_x)) = found.filter(|f| at >= f.1) else {
        return Difference::Names;
    };
    let Some(close_y) = next_quote(y, at) else {
        return Difference::Names;
    };
    if !same_names(&x[close_x..], &y[close_y..]) {
        return Difference::Names;
    }
    // The values first differ at `at`, or one ends there (at its closing quote).
    let bytes_up = at == close_x || at != close_y && x[at] < y[at];
    Difference::Value {
        position,
        before: &a.as_raw()[value_start..close_x],
        after: &b[value_start..close_y],
        bytes_up,
    }
}

/// The length of the common prefix of `x` and `y`, eight bytes at a time.
#[inline]
fn common_prefix(x: &[u8], y: &[u8]) -> usize {
    let mut i = 0;
    while let (Some(p), Some(q)) = (word_at(x, i), word_at(y, i)) {
        if p != q {
            return i + ((p ^ q).trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    i + x[i..].iter().zip(&y[i..]).take_while(|(p, q)| p == q).count()
}

/// The number of quotes in `x`, eight bytes at a time: a byte per word position counts
/// them, summed across the word once per 255 words.
fn count_quotes(x: &[u8]) -> usize {
    let fold = |counts: u64| {
        // Pairs of bytes into four 16-bit sums, then those into the top 16 bits.
        let pairs = (counts & 0x00ff_00ff_00ff_00ff) + (counts >> 8 & 0x00ff_00ff_00ff_00ff);
        (pairs.wrapping_mul(0x0001_0001_0001_0001) >> 48) as usize
    };
    let (mut total, mut counts, mut words) = (0, 0u64, 0);
    let mut i = 0;
    while let Some(word) = word_at(x, i) {
        counts += bytes_equal(word, b'"') >> 7;
        words += 1;
        if words == 255 {
            total += fold(counts);
            (counts, words) = (0, 0);
        }
        i += 8;
    }
    total + fold(counts) + x[i..].iter().filter(|&&c| c == b'"').count()
}

/// Whether two plain label texts, each from a value's closing quote to its set's end,
/// hold the same label names in the same order (their values may differ).
fn same_names(x: &[u8], y: &[u8]) -> bool {
    // At a closing quote in each; `,name="value"` follows, or the end.
    let (mut i, mut j) = (0, 0);
    loop {
        let (Some(open_x), Some(open_y)) = (next_quote(x, i + 1), next_quote(y, j + 1)) else {
            return next_quote(x, i + 1).is_none() && next_quote(y, j + 1).is_none();
        };
        if x[i + 1..open_x] != y[j + 1..open_y] {
            return false;
        }
        match (next_quote(x, open_x + 1), next_quote(y, open_y + 1)) {
            (Some(close_x), Some(close_y)) => (i, j) = (close_x, close_y),
            _ => return false,
        }
    }
}

/// The index of the first quote in `b` from `from` on, eight bytes at a time (the values
/// and names between quotes are short: a call to `memchr` cost more).
#[inline]
fn next_quote(b: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i < b.len() {
        // Past the end the word reads zeros, which are not quotes.
        let quotes = has_byte(word_or_tail(b, i), b'"');
        if quotes != 0 {
            return Some(i + (quotes.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    None
}

/// The number a label value reads as, for [`number_up`] (NaN is not one).
fn number(value: &str) -> Option<f64> {
    let b = value.as_bytes();
    let unsigned = match b.first()? {
        b'+' | b'-' => &b[1..],
        _ => b,
    };
    // What cannot be a number is not parsed (most label values are words).
    let first = *unsigned.first()?;
    let word = |w: &[u8]| unsigned.eq_ignore_ascii_case(w);
    if !(first.is_ascii_digit() || first == b'.' || word(b"inf") || word(b"infinity")) {
        return None;
    }
    parse_float(value).filter(|n| !n.is_nan())
}

/// Whether a step from a value reading as the number `from` to one reading as `to` goes
/// up in a strict total order on values: numbers first, by value then by bytes (`1` and
/// `1.0` are different values); other text after, by bytes (`bytes_up`).
fn number_up(from: Option<f64>, to: Option<f64>, bytes_up: bool) -> bool {
    match (from, to) {
        (Some(m), Some(n)) => m < n || m == n && bytes_up,
        (Some(_), None) => true,
        (None, Some(_)) => false,
        (None, None) => bytes_up,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plain set as the fast path reads it (with its recorded lengths), from `a="1",...`.
    fn plain(raw: &str) -> Labels<'_> {
        let count = raw.matches('"').count() as u32 / 2;
        let mut spans = Spans::default();
        for (name, value) in Labels::simple(raw, count, Spans::default()).iter() {
            spans.push(name.len(), value.raw().len());
        }
        Labels::simple(raw, count, spans)
    }

    #[test]
    fn the_first_difference_is_found_in_values_only() {
        use Difference::{Names, Value};
        let value = |position, before: &'static str, after: &'static str| Value {
            position,
            before,
            after,
            bytes_up: before < after,
        };
        let cases: &[(&str, &str, Difference)] = &[
            (r#"a="1",b="x""#, r#"a="1",b="x""#, Difference::None),
            (r#"a="1",b="x""#, r#"a="1",b="y""#, value(1, "x", "y")),
            (r#"a="1",b="x""#, r#"a="10",b="w""#, value(0, "1", "10")),
            (r#"a="10""#, r#"a="1""#, value(0, "10", "1")),
            (r#"a="",b="x""#, r#"a="=,",b="x""#, value(0, "", "=,")),
            // Other names, fewer or more labels: not comparable.
            (r#"a="1",b="x""#, r#"a="1",c="x""#, Names),
            (r#"a="1",b="x""#, r#"a="2",c="x""#, Names),
            (r#"a="1""#, r#"a="1",b="x""#, Names),
            (r#"a="1",b="x""#, r#"a="2""#, Names),
            (r#"a="1",b="x""#, r#"a="1""#, Names),
            (r#"b="1",a="x""#, r#"a="x",b="1""#, Names),
            // A value ending in `=` or holding `",` look-alikes cannot fool the count.
            (r#"a="x=",b="1""#, r#"a="x=",c="1""#, Names),
        ];
        // Six labels before: the difference is found by counting quotes, not recorded.
        let long = r#"p="1",q="2",r="3",s="4",t="5",u="6","#;
        for (a, b, want) in cases {
            assert_eq!(first_difference(plain(a), b), *want, "{a} -> {b}");
            let (a, b) = (format!("{long}{a}"), format!("{long}{b}"));
            let want = match *want {
                Value {
                    position,
                    before,
                    after,
                    ..
                } => value(position + 6, before, after),
                Difference::None => Difference::None,
                Names => Names,
            };
            assert_eq!(first_difference(plain(&a), &b), want, "{a} -> {b}");
        }
    }

    #[test]
    fn numbers_order_before_text_and_by_value() {
        let up = |a: &str, b: &str| number_up(number(a), number(b), a < b);
        assert!(up("0.5", "10"));
        assert!(up("10", "+Inf"));
        assert!(up("-Inf", "-1"));
        assert!(up("1", "1.0"));
        assert!(!up("1.0", "1"));
        assert!(up("+Inf", "a"));
        assert!(up("9", "infinite"));
        assert!(!up("NaN", "1"));
        assert!(up("a", "b"));
        assert_eq!(
            (number("idle"), number("Infinity"), number("1e3")),
            (None, Some(f64::INFINITY), Some(1e3))
        );
    }

    /// A split needs a return to an earlier group; the orders never hide one.
    #[test]
    fn steps_down_or_across_names_leave_the_order() {
        let mut order = Ordered::default();
        let mut step = |a, b| order.step(plain(a), plain(b));
        assert_eq!(step(r#"le="0.5""#, r#"le="10""#), Some(Placement::New));
        assert_eq!(step(r#"le="10""#, r#"le="+Inf""#), Some(Placement::New));
        assert_eq!(step(r#"le="+Inf""#, r#"le="+Inf""#), Some(Placement::Same));
        // Down in both orders.
        assert_eq!(step(r#"le="+Inf""#, r#"le="0.5""#), None);
        let mut order = Ordered::default();
        let mut step = |a, b| order.step(plain(a), plain(b));
        // "10" after "2": up by number only; then "3" after "10": up by bytes only.
        assert_eq!(step(r#"a="2""#, r#"a="10""#), Some(Placement::New));
        assert_eq!(step(r#"a="10""#, r#"a="3""#), None);
        // Each position keeps its own orders.
        let mut order = Ordered::default();
        let mut step = |a, b| order.step(plain(a), plain(b));
        assert_eq!(step(r#"a="2",b="b""#, r#"a="2",b="c""#), Some(Placement::New));
        assert_eq!(step(r#"a="2",b="c""#, r#"a="10",b="a""#), Some(Placement::New));
        assert_eq!(step(r#"a="10",b="a""#, r#"a="10",b="b""#), Some(Placement::New));
        assert_eq!(step(r#"a="10",b="b""#, r#"a="3",b="a""#), None);
    }

    #[test]
    fn names_are_compared_between_quotes() {
        let same = |x: &str, y: &str| same_names(x.as_bytes(), y.as_bytes());
        assert!(same(r#"""#, r#"""#));
        assert!(same(
            r#"",b="1",c="2""#,
            r#"",b="long value, with = and ,c=",c="""#
        ));
        assert!(!same(r#"",b="1""#, r#"",c="1""#));
        assert!(!same(r#"",b="1""#, r#"""#));
        assert!(!same(r#"""#, r#"",b="1""#));
        assert!(!same(r#"",b="1",c="2""#, r#"",b="1""#));
        assert!(!same(r#"",bb="1""#, r#"",b="1""#));
    }

    #[test]
    fn quotes_are_counted_across_many_words() {
        for len in [0usize, 7, 8, 9, 2039, 2040, 2041, 5000] {
            let text: Vec<u8> = (0..len).map(|i| if i % 3 == 0 { b'"' } else { b'x' }).collect();
            assert_eq!(count_quotes(&text), len.div_ceil(3), "{len}");
        }
    }
}
