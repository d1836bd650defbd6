//! The label groups of one OpenMetrics family: whether a sample continues the current
//! group, starts a new one, or returns to an earlier one (a split, which the spec forbids).
//!
//! Exporters write a family's groups in an order: sorted by label values (Go), or a
//! histogram's buckets by bound. While every group of the family has the same label names,
//! in the same order, without escapes, and each group is proven new by that order or by
//! comparing its text with the few earlier groups it could equal (see [`Ordered`]), no hash
//! and no set is needed. The first group that breaks this turns the family's groups into
//! hashes in a set, as every group of a family that never had this shape is kept.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use super::group_hash;
use super::labels::{Labels, Spans};
use super::names::same_bytes;
use crate::fingerprint;
use crate::swar::{bytes_equal, has_byte, word_at, word_or_tail};

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
        self.0 = fingerprint::of_bytes(bytes);
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
            fingerprint::of_label(name, value)
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

/// The current group: none yet, its labels (in [`Groups::ordered`]) while the family is
/// [`Ordered`], or its hash.
#[derive(Debug, Clone, Copy)]
enum Current {
    None,
    Ordered,
    Hashed(u64),
}

/// The label groups of the open family.
#[derive(Debug, Clone)]
pub(crate) struct Groups<'page> {
    current: Current,
    /// The current group's labels while [`Current::Ordered`] (a field of its own, not in
    /// the enum: moving the enum cost a copy of the labels per sample).
    ordered: Labels<'page>,
    /// While the family is ordered, its groups, first to last (hashed if the order
    /// breaks): a plain set is read again from its text alone.
    chain: Vec<Link<'page>>,
    order: Ordered,
    /// The run at the last label, kept once a step needs it.
    run: RunTails,
    /// Once the order broke: every group of the family (from its second group on).
    hashes: Hashes,
    /// OpenMetrics 2.0 state sets: the states (whole label sets) of the current group, each
    /// a Metric whose samples are one run. Kept here, once per page, not in each family.
    states: Hashes,
}

/// One group of an ordered family: its text, and the position of the first label whose
/// value differs from the group before (0 for the first group).
#[derive(Debug, Clone, Copy)]
struct Link<'page> {
    raw: &'page str,
    position: u8,
}

impl Default for Groups<'_> {
    fn default() -> Self {
        Groups::with_capacity(0)
    }
}

impl<'page> Groups<'page> {
    /// Room for a family's usual groups: growing from empty cost more than the checks.
    pub(crate) fn with_capacity(groups: usize) -> Self {
        Groups {
            current: Current::None,
            ordered: Labels::empty(),
            chain: Vec::with_capacity(groups),
            order: Ordered::default(),
            run: RunTails::default(),
            hashes: Hashes::with_capacity_and_hasher(groups, Default::default()),
            states: Hashes::default(),
        }
    }

    /// A state set's group begins with the state `state` (a label set's hash).
    pub(crate) fn first_state(&mut self, state: u64) {
        self.states.clear();
        self.states.insert(state);
    }

    /// Another state of the current group (not the one before): whether it is new to the
    /// group, as a state's samples must be one run.
    pub(crate) fn another_state(&mut self, state: u64) -> bool {
        self.states.insert(state)
    }

    /// Forgets the family (the collections keep their room).
    #[inline(always)]
    pub(crate) fn clear(&mut self) {
        self.current = Current::None;
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
        // Without branches: which of the three fails changes from family to family, and
        // a branch here was mispredicted on most samples of a page of many small families.
        let orderable = !constant & skip.is_none() & labels.is_plain();
        // The steady case: the family is in order, and this group keeps it so.
        if let (true, Current::Ordered) = (orderable, self.current) {
            match difference(self.ordered, labels) {
                Difference::None => return Placement::Same,
                Difference::Value { position, bytes_up } => {
                    let last = labels.len() - 1;
                    let (chain, run) = (&self.chain, &mut self.run);
                    if self
                        .order
                        .proves_new(chain, labels.as_raw(), position, bytes_up, run, last)
                    {
                        self.run.step(labels.as_raw().as_bytes(), position, last);
                        // `proves_new` takes positions below 64 only.
                        let position = position as u8;
                        self.chain.push(Link {
                            raw: labels.as_raw(),
                            position,
                        });
                        self.ordered = labels;
                        return Placement::New;
                    }
                }
                Difference::Names => {}
            }
        }
        self.place_otherwise(labels, skip, constant, orderable)
    }

    /// [`Groups::place`] of the first group of a family that keeps every label in it
    /// (not a state set, not an info), its groups just cleared: it is
    /// [`Placement::First`].
    #[inline(always)]
    pub(crate) fn first(&mut self, labels: Labels<'page>) {
        debug_assert!(matches!(self.current, Current::None) && self.chain.is_empty());
        if !labels.is_plain() {
            self.current = Current::Hashed(group_of(labels, None));
            return;
        }
        self.run = RunTails::default();
        self.chain.push(Link {
            raw: labels.as_raw(),
            position: 0,
        });
        self.current = Current::Ordered;
        self.ordered = labels;
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
            Current::None if orderable => {
                self.first(labels);
                Placement::First
            }
            Current::None => {
                self.current = Current::Hashed(group(labels));
                Placement::First
            }
            Current::Ordered => {
                self.hash_chain();
                self.place_hashed(group(labels))
            }
            Current::Hashed(_) => self.place_hashed(group(labels)),
        }
    }

    /// The current group's hash (the histogram check keys on it), 0 before any.
    pub(crate) fn current_hash(&self) -> u64 {
        match self.current {
            Current::Ordered => group_of(self.ordered, None),
            Current::Hashed(hash) => hash,
            Current::None => 0,
        }
    }

    /// The order stopped proving the groups distinct: from here on they are hashes.
    #[cold]
    fn hash_chain(&mut self) {
        for link in self.chain.drain(..) {
            let count = count_quotes(link.raw.as_bytes()) / 2;
            let labels = Labels::simple(link.raw, count as u32, Spans::default());
            self.hashes.insert(group_of(labels, None));
        }
        if let Current::Ordered = self.current {
            self.current = Current::Hashed(group_of(self.ordered, None));
        }
    }

    fn place_hashed(&mut self, group: u64) -> Placement {
        let Current::Hashed(current) = self.current else {
            self.current = Current::Hashed(group);
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
        self.current = Current::Hashed(group);
        Placement::New
    }
}

/// The proof that a family's groups are distinct, kept as they arrive.
///
/// Plain label sets with the same names in the same order are the same group exactly
/// when their texts are equal, and each is a tuple of values. While every step (the first
/// value that differs from the group before) at the positions below `p` went up in byte
/// order, the tuples' values below `p` only ever grew, lexicographically: a group whose
/// first difference is at `p` can only equal a group of its run (those since the last step
/// below `p`). A step that goes up at a position where every step went up is proven new by
/// the order alone (Go sorts label values so); any other step is proven new by comparing
/// its text with those of the groups it could equal, when they are few
/// ([`Ordered::SCAN`]: a histogram's buckets, whose bounds do not sort as bytes).
#[derive(Debug, Clone, Copy)]
struct Ordered {
    /// Positions where every step so far went up in byte order.
    by_bytes: u64,
}

impl Default for Ordered {
    fn default() -> Self {
        Ordered { by_bytes: u64::MAX }
    }
}

impl Ordered {
    /// The most earlier groups compared with a new one; beyond, the family is hashed.
    const SCAN: usize = 32;

    /// Whether the group `raw`, whose first value differing from the current group (the
    /// last of `chain`) is at `position` (greater in bytes if `bytes_up`), is none of the
    /// family's earlier groups; `false` when that is not proven (other names, too many
    /// groups to compare, or one that is the same). `run`: the run at the `last` label.
    #[inline(always)]
    fn proves_new(
        &mut self,
        chain: &[Link<'_>],
        raw: &str,
        position: usize,
        bytes_up: bool,
        run: &mut RunTails,
        last: usize,
    ) -> bool {
        let Some(bit) = u32::try_from(position).ok().and_then(|p| 1u64.checked_shl(p)) else {
            return false;
        };
        // The run is known only while every position below went up at every step; then a
        // step up where every step went up is greater than every group of its run.
        let below = bit - 1;
        let run_known = self.by_bytes & below == below;
        if !bytes_up {
            self.by_bytes &= !bit;
        } else if run_known && self.by_bytes & bit != 0 {
            return true;
        }
        // Groups before the run differ below `position`; those of the run, by their bits.
        if run_known && position == last && run.proves_unseen(chain, raw.as_bytes(), last) {
            return true;
        }
        unseen(chain, raw, position, run_known)
    }
}

/// Whether no group of the ordered `chain` that could equal `raw` (its run, when
/// `run_known`, else all) has its text; `false` beyond [`Ordered::SCAN`] groups.
#[inline(never)]
fn unseen(chain: &[Link<'_>], raw: &str, position: usize, run_known: bool) -> bool {
    for (scanned, link) in chain.iter().rev().enumerate() {
        if scanned == Ordered::SCAN || same_text(link.raw.as_bytes(), raw.as_bytes()) {
            return false;
        }
        // The first group of the run: those before it differ below `position`.
        if run_known && usize::from(link.position) < position {
            return true;
        }
    }
    true
}

/// The groups of the run at the last label of an ordered family (those since the last
/// step before it: a histogram's buckets of one series), one bit each ([`tail_bit`]), so
/// that a step at the last label whose bit is clear is proven none of them without
/// comparing texts. Empty (0) until a step down asks, so that families whose steps all go
/// up pay nothing for it.
#[derive(Debug, Clone, Copy, Default)]
struct RunTails(u64);

impl RunTails {
    /// Whether the group `raw`, a step at the `last` label, is none of its run's groups
    /// (`false` when not proven); the run is read from `chain` at the first step that asks.
    #[inline(always)]
    fn proves_unseen(&mut self, chain: &[Link<'_>], raw: &[u8], last: usize) -> bool {
        if self.0 == 0 {
            self.0 = of_run(chain, last);
            if self.0 == 0 {
                // Not kept: a run this long is for the scan (and then the hashes).
                return false;
            }
        }
        let bit = tail_bit(raw);
        let unseen = self.0 & bit == 0;
        self.0 |= bit;
        unseen
    }

    /// After a new group whose step is at `position`: one at the last label joins the run
    /// (if kept), one before starts another.
    #[inline(always)]
    fn step(&mut self, raw: &[u8], position: usize, last: usize) {
        if position < last {
            self.0 = 0;
        } else if self.0 != 0 {
            self.0 |= tail_bit(raw);
        }
    }
}

/// The bits of the groups of the run at the `last` label that ends `chain`, 0 if it is
/// longer than a scan would read (its bits would be mostly set).
#[inline(never)]
fn of_run(chain: &[Link<'_>], last: usize) -> u64 {
    let mut bits = 0;
    for link in chain.iter().rev().take(2 * Ordered::SCAN) {
        bits |= tail_bit(link.raw.as_bytes());
        // The first group of the run (or of the family, whose position is 0).
        if usize::from(link.position) < last || std::ptr::eq(link, &chain[0]) {
            return bits;
        }
    }
    0
}

/// One bit of 64 for a plain label set, from its length and last eight bytes (where a
/// histogram's bound is): equal texts have the same bit, so a clear bit proves a set is
/// none of those whose bits were set.
#[inline(always)]
fn tail_bit(raw: &[u8]) -> u64 {
    let tail = match raw.len().checked_sub(8) {
        Some(at) => word_at(raw, at).unwrap_or(0),
        None => word_or_tail(raw, 0),
    };
    let mixed = (tail ^ raw.len() as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    1 << (mixed >> 58)
}

/// Whether two label sets of a run have the same text: their last eight bytes first, where
/// a run's sets mostly differ (a histogram's bound is its last label).
#[inline(always)]
fn same_text(a: &[u8], b: &[u8]) -> bool {
    let tail = |t: &[u8]| t.len().checked_sub(8).and_then(|at| word_at(t, at));
    a.len() == b.len() && tail(a) == tail(b) && same_bytes(a, b)
}

/// How a plain label set differs from another.
#[derive(Debug, Clone, PartialEq)]
enum Difference {
    /// Not at all.
    None,
    /// The same names in the same order; the label at `position` is the first whose value
    /// differs, greater in bytes in the second set if `bytes_up`.
    Value { position: usize, bytes_up: bool },
    /// Other names, or in another order, or more or fewer.
    Names,
}

/// How the plain set `b` differs from the plain set `a`.
#[inline(always)]
fn difference(a: Labels<'_>, b: Labels<'_>) -> Difference {
    let (x, y) = (a.as_raw().as_bytes(), b.as_raw().as_bytes());
    let at = common_prefix(x, y);
    if at == x.len() && at == y.len() {
        return Difference::None;
    }
    if let Some(bytes_up) = last_value_step(a, b, at) {
        return Difference::Value {
            position: a.len() - 1,
            bytes_up,
        };
    }
    recorded_difference(a, b, at).unwrap_or_else(|| first_difference(a, b.as_raw(), at))
}

/// [`difference`] of the usual step, where the texts first differ at `at` in the last
/// label's value, recorded in both and starting at the same offset (so every name and value
/// before it is the same): whether the value went up in bytes. `None` for any other step.
#[inline(always)]
fn last_value_step(a: Labels<'_>, b: Labels<'_>, at: usize) -> Option<bool> {
    let (x, y) = (a.as_raw().as_bytes(), b.as_raw().as_bytes());
    // Each value ends at its set's closing quote, its last byte.
    let (close_x, close_y) = (x.len().checked_sub(1)?, y.len().checked_sub(1)?);
    // Where the step is elsewhere, `a` alone tells (the common prefix ends before).
    let start = close_x.checked_sub(a.last_value_len()?)?;
    if at < start || close_y.checked_sub(b.last_value_len()?) != Some(start) {
        return None;
    }
    if at > close_x || at > close_y || a.len() != b.len() {
        return None;
    }
    Some(at == close_x || at != close_y && x[at] < y[at])
}

/// [`first_difference`] of two plain sets of as many labels, the first difference in one
/// of the last labels, whose lengths the parser recorded (the usual steady case), found
/// from those lengths: no search for quotes, and only the names after the difference
/// compared. `None` when a length is not recorded.
#[inline(always)]
fn recorded_difference(a: Labels<'_>, b: Labels<'_>, at: usize) -> Option<Difference> {
    let (x, y) = (a.as_raw().as_bytes(), b.as_raw().as_bytes());
    let count = a.len();
    if count != b.len() {
        return Some(Difference::Names);
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
/// only delimit values) differs from the plain set `a`, their texts first differing at
/// `at` (where one may end, not both).
#[inline(never)]
fn first_difference(a: Labels<'_>, b: &str, at: usize) -> Difference {
    let (x, y) = (a.as_raw().as_bytes(), b.as_bytes());
    // The label holding the first difference: from the lengths the parser recorded (the
    // last labels), else from the number of quotes before it.
    let found = a.recorded_label_at(at).or_else(|| {
        let quotes = count_quotes(&x[..at]);
        // After an even number of quotes the texts differ in a name, or one is longer.
        let open = memchr::memrchr(b'"', &x[..at]).filter(|_| quotes % 2 == 1)?;
        Some((quotes / 2, open + 1, next_quote(x, at)?))
    });
    let Some((position, _, close_x)) = found.filter(|f| at >= f.1) else {
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
    Difference::Value { position, bytes_up }
}

/// The length of the common prefix of `x` and `y`, eight bytes at a time, the last bytes
/// as the word that ends the shorter (overlapping the words before: no byte loop).
#[inline]
fn common_prefix(x: &[u8], y: &[u8]) -> usize {
    let n = x.len().min(y.len());
    let (x, y) = (&x[..n], &y[..n]);
    let word = |w: &[u8]| u64::from_le_bytes(w.try_into().unwrap_or_default());
    let mut words = 0;
    for (p, q) in x.chunks_exact(8).zip(y.chunks_exact(8)) {
        let differ = word(p) ^ word(q);
        if differ != 0 {
            return 8 * words + (differ.trailing_zeros() / 8) as usize;
        }
        words += 1;
    }
    if 8 * words == n {
        return n;
    }
    let Some(at) = n.checked_sub(8) else {
        // Shorter than a word: as one word, zeros past the end.
        let differ = word_or_tail(x, 0) ^ word_or_tail(y, 0);
        return ((differ.trailing_zeros() / 8) as usize).min(n);
    };
    let differ = word(&x[at..]) ^ word(&y[at..]);
    if differ == 0 {
        n
    } else {
        at + (differ.trailing_zeros() / 8) as usize
    }
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

#[cfg(test)]
mod tests;
