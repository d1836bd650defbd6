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

use std::cmp::Ordering;
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use super::group_hash;
use super::labels::{Labels, Spans};
use super::names::{compare_bytes, same_bytes};
use super::swar::{bytes_equal, bytes_in_range, has_byte, low_bytes, word_at, word_or_tail, HIGH};
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
    #[inline(always)]
    pub(crate) fn place(&mut self, labels: Labels<'page>, skip: Option<&str>, constant: bool) -> Placement {
        let orderable = !constant && skip.is_none() && labels.is_plain();
        // The steady case: the family is in order, and this group keeps it so.
        if let (true, Some(Current::Ordered(previous))) = (orderable, self.current) {
            match self.order.step(previous, labels) {
                Some(Placement::Same) => return Placement::Same,
                Some(_) => {
                    self.chain.push(labels.as_raw());
                    self.current = Some(Current::Ordered(labels));
                    return Placement::New;
                }
                None => {}
            }
        }
        self.place_otherwise(labels, skip, constant, orderable)
    }

    /// [`Groups::place`] of a family's first group, or of one the order does not place.
    #[inline(never)]
    fn place_otherwise(
        &mut self,
        labels: Labels<'page>,
        skip: Option<&str>,
        constant: bool,
        orderable: bool,
    ) -> Placement {
        let group = |labels| if constant { 0 } else { group_of(labels, skip) };
        match self.current {
            None if orderable => {
                self.chain.push(labels.as_raw());
                self.current = Some(Current::Ordered(labels));
                Placement::First
            }
            None => {
                self.current = Some(Current::Hashed(group(labels)));
                Placement::First
            }
            Some(Current::Ordered(_)) => {
                self.hash_chain();
                self.place_hashed(group(labels))
            }
            Some(Current::Hashed(_)) => self.place_hashed(group(labels)),
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
    #[inline(always)]
    fn step(&mut self, previous: Labels<'_>, next: Labels<'_>) -> Option<Placement> {
        let difference =
            recorded_difference(previous, next).unwrap_or_else(|| first_difference(previous, next.as_raw()));
        let (position, before, after, bytes_up) = match difference {
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
            let (from, to) = (before.as_bytes(), after.as_bytes());
            let up = match short_decimals_up(from, to, bytes_up) {
                Some(up) => up,
                // Two words: no number, so the bytes decide.
                None if !may_be_number(from) && !may_be_number(to) => bytes_up,
                None => self.parsed_numbers_up(cached, position, before, after, bytes_up),
            };
            if !up {
                self.by_number &= !bit;
            }
        }
        ((self.by_bytes | self.by_number) & bit != 0).then_some(Placement::New)
    }

    /// [`number_up`] of values that are not both short decimals, parsed (the number
    /// `before` reads as kept from the step before at `position`, `cached`).
    #[inline(never)]
    fn parsed_numbers_up(
        &mut self,
        cached: Option<(usize, Option<f64>)>,
        position: usize,
        before: &str,
        after: &str,
        bytes_up: bool,
    ) -> bool {
        let from = match cached {
            Some((at, number)) if at == position => number,
            _ => number(before),
        };
        let to = number(after);
        self.last_number = Some((position, to));
        number_up(from, to, bytes_up)
    }
}

/// How a plain label set differs from another.
#[derive(Debug, Clone, PartialEq)]
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

/// [`first_difference`] of two plain sets of the same few labels whose lengths the parser
/// recorded (the usual steady case), found from those lengths: no search for quotes, and
/// only the names after the difference compared. `None` when a length is not recorded.
#[inline(always)]
fn recorded_difference<'a>(a: Labels<'a>, b: Labels<'a>) -> Option<Difference<'a>> {
    let (x, y) = (a.as_raw().as_bytes(), b.as_raw().as_bytes());
    let at = common_prefix(x, y);
    if at == x.len() && at == y.len() {
        return Some(Difference::None);
    }
    let count = a.len();
    if count != b.len() || count > Spans::LABELS {
        return (count != b.len()).then_some(Difference::Names);
    }
    let (mut end_x, mut end_y) = (x.len(), y.len());
    for after in 0..count {
        let (p, q) = (a.recorded_label(after, end_x)?, b.recorded_label(after, end_y)?);
        if at >= p.name_start {
            // The first difference is in this label: in its value, or in its name.
            if at < p.value_start || q.value_start != p.value_start {
                return Some(Difference::Names);
            }
            if at > p.close || at > q.close {
                return None;
            }
            return Some(Difference::Value {
                position: count - 1 - after,
                before: &a.as_raw()[p.value_start..p.close],
                after: &b.as_raw()[q.value_start..q.close],
                bytes_up: at == p.close || at != q.close && x[at] < y[at],
            });
        }
        // A label after the difference: its name must be the same.
        let (name_x, name_y) = (
            &x[p.name_start..p.name_start + p.name_len],
            &y[q.name_start..q.name_start + q.name_len],
        );
        if !same_bytes(name_x, name_y) {
            return Some(Difference::Names);
        }
        (end_x, end_y) = (p.name_start.checked_sub(1)?, q.name_start.checked_sub(1)?);
    }
    None
}

/// How the plain set `b` (`name="value"` terms joined by commas, no escapes, so quotes
/// only delimit values) differs from the plain set `a`.
#[inline(never)]
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
    // The last bytes of the shorter, as one word (zeros past the end).
    let left = x.len().min(y.len()) - i;
    if left == 0 {
        return i;
    }
    let differ = word_or_tail(x, i) ^ word_or_tail(y, i);
    i + ((differ.trailing_zeros() / 8) as usize).min(left)
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
    // The labels after a difference often repeat as they were.
    if same_bytes(x, y) {
        return true;
    }
    // At a closing quote in each; `,name="value"` follows, or the end.
    let (mut i, mut j) = (0, 0);
    loop {
        let (Some(open_x), Some(open_y)) = (next_quote(x, i + 1), next_quote(y, j + 1)) else {
            return next_quote(x, i + 1).is_none() && next_quote(y, j + 1).is_none();
        };
        if !same_bytes(&x[i + 1..open_x], &y[j + 1..open_y]) {
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

/// The order of two label values by the numbers they read as, without parsing them, when
/// both are short unsigned decimals (`digits[.digits]`, at most 15 digits: distinct such
/// decimals are distinct doubles, in the same order, so this is [`number_up`]'s order on
/// values); `None` for anything else. Bucket bounds and indices are mostly such decimals.
#[inline(always)]
fn compare_short_decimals(a: &[u8], b: &[u8]) -> Option<Ordering> {
    let (a_int, a_frac) = short_decimal(a)?;
    let (b_int, b_frac) = short_decimal(b)?;
    // Integer parts without leading zeros: the longer is the greater, else by bytes;
    // then fractions without trailing zeros, by bytes (a prefix is the smaller).
    let by_int = a_int
        .len()
        .cmp(&b_int.len())
        .then_with(|| compare_bytes(a_int, b_int));
    Some(by_int.then_with(|| compare_bytes(a_frac, b_frac)))
}

/// Whether `v` is one to eight digits, tested as one word.
#[inline(always)]
fn all_digits(v: &[u8]) -> bool {
    let len = v.len();
    (1..=8).contains(&len) && {
        let (word, mask) = (word_or_tail(v, 0), low_bytes(len) & HIGH);
        // The range test wants ASCII (no carries); zeros past the end are.
        word & HIGH == 0 && bytes_in_range(word, b'0', b'9') & mask == mask
    }
}

/// [`number_up`] of two short decimals ([`compare_short_decimals`]), equal numbers
/// ordered by their bytes.
#[inline(always)]
fn short_decimals_up(from: &[u8], to: &[u8], bytes_up: bool) -> Option<bool> {
    // Digits only, as many: the bytes' order is the numbers' (indices, counters).
    if from.len() == to.len() && all_digits(from) && all_digits(to) {
        return Some(bytes_up);
    }
    let order = compare_short_decimals(from, to)?;
    Some(order.is_lt() || order.is_eq() && bytes_up)
}

/// The integer digits (leading zeros dropped) and the fraction digits (trailing zeros
/// dropped) of a short unsigned decimal, as [`compare_short_decimals`] takes them.
#[inline(always)]
fn short_decimal(v: &[u8]) -> Option<(&[u8], &[u8])> {
    // Fifteen digits and a dot at most; one pass finds the dot and refuses anything else.
    if v.len() > 16 {
        return None;
    }
    let mut dot = None;
    for (i, &c) in v.iter().enumerate() {
        match c {
            b'0'..=b'9' => {}
            b'.' if dot.is_none() => dot = Some(i),
            _ => return None,
        }
    }
    let (int, frac) = match dot {
        Some(at) => (&v[..at], &v[at + 1..]),
        None => (v, &v[v.len()..]),
    };
    if int.is_empty() || dot.is_some() && frac.is_empty() || int.len() + frac.len() > 15 {
        return None;
    }
    let zeros = int.iter().take_while(|&&c| c == b'0').count();
    let trailing = frac.iter().rev().take_while(|&&c| c == b'0').count();
    Some((&int[zeros..], &frac[..frac.len() - trailing]))
}

/// Whether [`number`] may read `value` as a number: not when it starts as no number does.
#[inline(always)]
fn may_be_number(value: &[u8]) -> bool {
    matches!(
        value.first(),
        Some(b'0'..=b'9' | b'.' | b'+' | b'-' | b'i' | b'I')
    )
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
            // From the recorded lengths: the same answer, for every case here.
            assert_eq!(
                recorded_difference(plain(a), plain(b)).as_ref(),
                Some(want),
                "{a} -> {b}"
            );
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
            // Too many labels to have all their lengths recorded: none, or the same answer.
            let recorded = recorded_difference(plain(&a), plain(&b));
            assert!(recorded.is_none() || recorded == Some(want.clone()), "{a} -> {b}");
        }
    }

    /// Short decimals are ordered without parsing exactly as `number_up` orders them.
    #[test]
    fn short_decimals_compare_as_their_numbers() {
        let values = [
            "0",
            "00",
            "0.0",
            "1",
            "01",
            "1.0",
            "1.",
            ".5",
            "0.5",
            "0.50",
            "2.5",
            "10",
            "10.25",
            "9.999",
            "123456789012345",
            "1234567890123456",
            "0.000000000000001",
            "99999999999999.9",
            "1e3",
            "+1",
            "-1",
            "idle",
            "",
            "1.2.3",
        ];
        for a in values {
            for b in values {
                let want = number_up(number(a), number(b), a < b);
                let (x, y) = (a.as_bytes(), b.as_bytes());
                if let Some(got) = short_decimals_up(x, y, a < b) {
                    assert_eq!(got, want, "{a:?} -> {b:?}");
                }
            }
        }
        for v in values
            .iter()
            .chain(&["Inf", "inf", "-Inf", "+Infinity", "nan", "NaN", "x1"])
        {
            assert!(number(v).is_none() || may_be_number(v.as_bytes()), "{v}");
        }
        for (v, want) in [
            ("0", true),
            ("0123456", true),
            ("01234567", true),
            ("012345678", false),
            ("", false),
            ("1.5", false),
            ("12a", false),
            ("/", false),
            (":", false),
            ("1\u{e9}", false),
        ] {
            assert_eq!(all_digits(v.as_bytes()), want, "{v}");
        }
        assert_eq!(compare_short_decimals(b"2.5", b"10"), Some(Ordering::Less));
        assert_eq!(compare_short_decimals(b"1.0", b"01"), Some(Ordering::Equal));
        assert_eq!(compare_short_decimals(b"1e3", b"10"), None);
        assert_eq!(compare_short_decimals(b"1234567890123456", b"1"), None);
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
    fn common_prefixes_by_word_agree_with_a_byte_loop() {
        let text: Vec<u8> = (0..40u8).map(|i| b'a' + i % 26).collect();
        for len_x in 0..text.len() {
            for len_y in [0, 1, 7, 8, 9, 15, 16, 17, 39] {
                for at in 0..len_y {
                    let mut y = text[..len_y].to_vec();
                    y[at] = b'#';
                    let x = &text[..len_x];
                    let want = x.iter().zip(&y).take_while(|(p, q)| p == q).count();
                    assert_eq!(common_prefix(x, &y), want, "{len_x} {len_y} {at}");
                }
                let want = len_x.min(len_y);
                assert_eq!(common_prefix(&text[..len_x], &text[..len_y]), want);
            }
        }
    }

    #[test]
    fn quotes_are_counted_across_many_words() {
        for len in [0usize, 7, 8, 9, 2039, 2040, 2041, 5000] {
            let text: Vec<u8> = (0..len).map(|i| if i % 3 == 0 { b'"' } else { b'x' }).collect();
            assert_eq!(count_quotes(&text), len.div_ceil(3), "{len}");
        }
    }
}
