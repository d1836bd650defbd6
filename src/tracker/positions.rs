//! The position cache: a page's sample at position `i` is almost always the same series as
//! last scrape's sample at position `i`. Remembering the raw name and label text per
//! position turns series identity into one byte comparison, and skips selector evaluation
//! for samples that were not selected. Steady state allocates nothing (the remembered
//! strings keep their capacity).

use super::bucket_groups::BucketGroupId;
use crate::text::names::same_bytes;

/// What the sample at one position of the page was found to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Target {
    /// Not selected.
    Ignored,
    /// Recorded in this slot.
    Series(usize),
    /// A created time: of the series a `<family>_created` sample or a start timestamp
    /// stands for.
    Created(CreatedFor),
    /// A target's process start time, not otherwise selected: this entry of the tracker's
    /// start times (`starts.rs`).
    Start(usize),
    /// An OpenMetrics 2.0 composite value (a histogram, gauge histogram or summary on one
    /// line): its classic series, this entry of `PositionCache::composites`.
    Composite(usize),
}

/// The series a created time is the start of: a `<family>_created` sample's `_total`,
/// `_count` and `_sum` with its labels, where they exist, and its histogram's buckets of
/// that label group; or the one series whose own start timestamp (`st@`) it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct CreatedFor {
    pub series: [Option<u32>; 3],
    pub buckets: Option<BucketGroupId>,
}

impl CreatedFor {
    /// The start of the series in `slot` alone.
    pub fn one(slot: usize) -> Self {
        CreatedFor {
            series: [u32::try_from(slot).ok(), None, None],
            buckets: None,
        }
    }

    /// Whether a series inserted since it was resolved may be one it would have found.
    fn may_miss_series(&self) -> bool {
        self.series.contains(&None)
    }
}

/// One classic series of a composite value: its bucket's upper bound or its quantile (NaN
/// for the count and the sum), and the slot it is recorded in (`None`: not selected).
#[derive(Debug, Clone, Copy)]
pub(super) struct CompositePart {
    pub bound: f64,
    pub slot: Option<u32>,
}

/// What a position is, as the cache stores it: 4 bytes, the kind in the top two bits and
/// a slot (or an index into `PositionCache::created`, for the few created-time targets)
/// below. A slot that does not fit is not cached. The ignored kind with a non-zero index
/// is a composite value's (`PositionCache::composites`, index + 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stored(u32);

enum Unpacked {
    Ignored,
    Composite(u32),
    Series(u32),
    Created(u32),
    Start(u32),
}

impl Stored {
    const KIND: u32 = 3 << 30;
    const SERIES: u32 = 1 << 30;
    const CREATED: u32 = 2 << 30;
    const START: u32 = 3 << 30;
    const IGNORED: Stored = Stored(0);

    fn with_kind(kind: u32, index: usize) -> Option<Stored> {
        let index = u32::try_from(index).ok().filter(|i| i & Self::KIND == 0)?;
        Some(Stored(kind | index))
    }

    fn unpack(self) -> Unpacked {
        let index = self.0 & !Self::KIND;
        match self.0 & Self::KIND {
            Self::SERIES => Unpacked::Series(index),
            Self::CREATED => Unpacked::Created(index),
            Self::START => Unpacked::Start(index),
            _ if index > 0 => Unpacked::Composite(index - 1),
            _ => Unpacked::Ignored,
        }
    }
}

/// A created-time target and the tracker's insertion count when it was resolved: a series
/// inserted since may be one it missed, so it is resolved again (`x_created` printed
/// before its counter is seen on the next scrape).
#[derive(Debug, Clone, Copy)]
struct CreatedTarget {
    target: CreatedFor,
    insertions: u64,
}

/// One position's key, coded against its anchor's key (the nearest position before it
/// stored whole): its first `shared` and last `tail` bytes are the anchor key's first and
/// last bytes, the middle is stored at `middle_start` in `PositionCache::keys`. A fleet
/// page's neighbours differ in a few bytes in the middle (an instance's digits, a bucket's
/// `le`), so a key costs a few bytes. 16 bytes; keys over 64 KiB are not cached.
#[derive(Debug, Clone, Copy)]
struct Entry {
    middle_start: u32,
    target: Stored,
    key_len: u16,
    shared: u16,
    tail: u16,
    /// The key began its line and a space followed it: a line that begins with the same
    /// bytes and a space is the same series, recognised before its labels are parsed.
    line_start: bool,
    /// False once its anchor was replaced: `shared` and `tail` then refer to bytes that are
    /// gone, so the entry matches nothing until it is stored again.
    usable: bool,
}

impl Entry {
    /// Stored whole: the positions after it, up to the next anchor, are coded against it.
    fn is_anchor(&self) -> bool {
        self.shared == 0 && self.tail == 0
    }

    /// The bytes stored in `PositionCache::keys`.
    fn middle_len(&self) -> usize {
        usize::from(self.key_len).saturating_sub(usize::from(self.shared) + usize::from(self.tail))
    }
}

const UNUSABLE: Entry = Entry {
    middle_start: 0,
    key_len: 0,
    shared: 0,
    tail: 0,
    target: Stored::IGNORED,
    line_start: false,
    usable: false,
};

/// Keys live in one buffer, in page order once the page is steady: a scrape reads them
/// front to back, which the processor prefetches, instead of one allocation per position.
/// Front coding keeps only what differs from an anchor key (a fleet page repeats the name
/// and most labels from line to line): the shared part is compared with the anchor's key
/// *as it stands on the page being read*, which is the stored anchor key whenever the entry
/// is usable (every position is looked up, and stored on a miss, in order; replacing an
/// anchor, or making a position one, makes the entries coded against it unusable, so they
/// are stored again against the new anchor in the same pass).
#[derive(Debug, Clone, Default)]
pub(super) struct PositionCache {
    entries: Vec<Entry>,
    keys: Vec<u8>,
    created: Vec<CreatedTarget>,
    /// Composite values' classic series, each value's parts in `composite_parts` (count,
    /// sum, then its buckets or quantiles in the page's order).
    composites: Vec<std::ops::Range<u32>>,
    composite_parts: Vec<CompositePart>,
    /// Bytes of `keys` and targets of `created` and `composites` no entry points to any
    /// more.
    garbage: usize,
    created_garbage: usize,
}

/// Eight bytes of `bytes` from `at`, as a number (compared eight at a time: a fleet's keys
/// share tens of bytes with their anchor's, and byte loops were most of `store`).
fn word(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n {
        let differ = word(a, i) ^ word(b, i);
        if differ != 0 {
            // Little-endian: the first byte in memory is the lowest.
            return i + (differ.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    i + a[i..n].iter().zip(&b[i..n]).take_while(|(x, y)| x == y).count()
}

fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[a.len() - n..], &b[b.len() - n..]);
    let mut same = 0;
    while same + 8 <= n {
        let at = n - same - 8;
        let differ = word(a, at) ^ word(b, at);
        if differ != 0 {
            // The last byte in memory is the highest.
            return same + (differ.leading_zeros() / 8) as usize;
        }
        same += 8;
    }
    let rest = n - same;
    same + a[..rest]
        .iter()
        .rev()
        .zip(b[..rest].iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

impl PositionCache {
    /// Whether `key` is the key stored at `entry`, given the anchor's key on this page.
    #[inline]
    fn same_key(&self, entry: &Entry, key: &[u8], anchor: &[u8]) -> bool {
        let (shared, tail) = (usize::from(entry.shared), usize::from(entry.tail));
        let start = entry.middle_start as usize;
        let Some(middle) = self.keys.get(start..start + entry.middle_len()) else {
            return false;
        };
        entry.usable
            && key.len() == usize::from(entry.key_len)
            && anchor.len() >= shared + tail
            && same_bytes(&key[..shared], &anchor[..shared])
            && same_bytes(&key[shared..key.len() - tail], middle)
            && same_bytes(&key[key.len() - tail..], &anchor[anchor.len() - tail..])
    }

    /// The target an entry stands for, unless it may have missed a series inserted since.
    #[inline]
    fn target(&self, entry: &Entry, insertions: u64) -> Option<Target> {
        Some(match entry.target.unpack() {
            Unpacked::Ignored => Target::Ignored,
            Unpacked::Series(slot) => Target::Series(slot as usize),
            Unpacked::Start(i) => Target::Start(i as usize),
            Unpacked::Created(i) => {
                let created = self.created.get(i as usize)?;
                if created.target.may_miss_series() && created.insertions != insertions {
                    return None;
                }
                Target::Created(created.target)
            }
            Unpacked::Composite(i) => Target::Composite(i as usize),
        })
    }

    /// The classic series of the composite value `Target::Composite(index)` stands for.
    #[inline]
    pub fn composite(&self, index: usize) -> &[CompositePart] {
        let range = self.composites.get(index).cloned().unwrap_or_default();
        self.composite_parts
            .get(range.start as usize..range.end as usize)
            .unwrap_or_default()
    }

    /// Remembers a composite value's classic series; the index for `Target::Composite`.
    pub fn add_composite(&mut self, parts: impl IntoIterator<Item = CompositePart>) -> usize {
        let start = self.composite_parts.len() as u32;
        self.composite_parts.extend(parts);
        self.composites.push(start..self.composite_parts.len() as u32);
        self.composites.len() - 1
    }

    /// What the sample at `position` with identity text `key` was, if still known.
    /// `previous` is the key of the last anchor position on this page
    /// ([`PositionCache::is_anchor`]; "" before any); `insertions` is the tracker's count
    /// of series inserted so far.
    #[inline]
    pub fn lookup(&self, position: usize, key: &str, previous: &str, insertions: u64) -> Option<Target> {
        let entry = self.entries.get(position)?;
        if key.is_empty() || !self.same_key(entry, key.as_bytes(), previous.as_bytes()) {
            return None;
        }
        self.target(entry, insertions)
    }

    /// If the sample at `position` was a line that began with its key, and `line` begins
    /// with the same key and a space: the key's length (the parser then reads only the
    /// value) and what the sample is. `previous` as for [`PositionCache::lookup`].
    #[inline]
    pub fn known_prefix(
        &self,
        position: usize,
        line: &str,
        previous: &str,
        insertions: u64,
    ) -> Option<(usize, Target)> {
        let entry = self.entries.get(position).filter(|e| e.line_start)?;
        let len = usize::from(entry.key_len);
        let line = line.as_bytes();
        if len == 0
            || line.get(len) != Some(&b' ')
            || !self.same_key(entry, &line[..len], previous.as_bytes())
        {
            return None;
        }
        Some((len, self.target(entry, insertions)?))
    }

    /// Whether the entry at `position` is stored whole: the positions after it, up to the
    /// next anchor, are coded against its key.
    #[inline]
    pub fn is_anchor(&self, position: usize) -> bool {
        self.entries.get(position).is_some_and(Entry::is_anchor)
    }

    /// Remembers what the sample at `position` with identity text `key` is; `previous` as
    /// for [`PositionCache::lookup`], `line_start` says the key began its line and a space
    /// followed it.
    pub fn store(
        &mut self,
        position: usize,
        key: &str,
        previous: &str,
        line_start: bool,
        target: Target,
        insertions: u64,
    ) {
        let (key_bytes, anchor) = (key.as_bytes(), previous.as_bytes());
        let mut shared = common_prefix(key_bytes, anchor);
        let rest = key_bytes.len().min(anchor.len()) - shared;
        let mut tail = common_suffix(&key_bytes[shared..], &anchor[shared..]).min(rest);
        let middle = key.len() - shared - tail;
        if shared + tail < 16 || middle > 24.max(key.len() / 4) {
            // Too little in common (a new family, or a second label that differs): a new
            // anchor, stored whole; the keys that follow differ from it in less.
            (shared, tail) = (0, 0);
        }
        let target = match target {
            Target::Ignored => Some(Stored::IGNORED),
            Target::Series(slot) => Stored::with_kind(Stored::SERIES, slot),
            Target::Start(i) => Stored::with_kind(Stored::START, i),
            Target::Composite(i) => Stored::with_kind(0, i + 1),
            Target::Created(target) => Stored::with_kind(Stored::CREATED, self.created.len()).inspect(|_| {
                self.created.push(CreatedTarget { target, insertions });
            }),
        };
        // Keys over 64 KiB, a key buffer over 4 GiB and slots beyond 2^30 are not cached:
        // the position matches nothing.
        let (Ok(middle_start), Ok(key_len), Some(target)) =
            (u32::try_from(self.keys.len()), u16::try_from(key.len()), target)
        else {
            if let Some(entry) = self.entries.get_mut(position) {
                *entry = UNUSABLE;
                self.unanchor_after(position);
            }
            return;
        };
        let entry = Entry {
            middle_start,
            key_len,
            // Both fit: they are at most the key's length.
            shared: shared as u16,
            tail: tail as u16,
            target,
            line_start,
            usable: true,
        };
        if position >= self.entries.len() {
            // Positions are stored in order on a first scrape; a gap (rare) is filled with
            // entries that match nothing.
            self.entries.resize(position, UNUSABLE);
            self.entries.push(entry);
        } else {
            let old = self.entries[position];
            self.garbage += old.middle_len();
            self.created_garbage += usize::from(matches!(
                old.target.unpack(),
                Unpacked::Created(_) | Unpacked::Composite(_)
            ));
            self.entries[position] = entry;
            if old.is_anchor() || entry.is_anchor() {
                // The keys after it were coded against the old anchor.
                self.unanchor_after(position);
            }
        }
        self.keys
            .extend_from_slice(&key_bytes[shared..key_bytes.len() - tail]);
        let targets = self.created.len() + self.composites.len();
        if self.garbage > self.keys.len() / 2 || self.created_garbage > targets / 2 + 16 {
            self.compact();
        }
    }

    /// Makes the entries coded against the anchor at `position` unusable.
    fn unanchor_after(&mut self, position: usize) {
        for entry in self.entries.iter_mut().skip(position + 1) {
            if entry.is_anchor() {
                break;
            }
            entry.usable = false;
        }
    }

    /// Rewrites the keys and created targets in position order, without the replaced ones.
    fn compact(&mut self) {
        let keys = std::mem::take(&mut self.keys);
        let created = std::mem::take(&mut self.created);
        let composites = std::mem::take(&mut self.composites);
        let parts = std::mem::take(&mut self.composite_parts);
        for entry in &mut self.entries {
            let start = entry.middle_start as usize;
            let middle = keys.get(start..start + entry.middle_len());
            entry.middle_start = self.keys.len() as u32;
            self.keys.extend_from_slice(middle.unwrap_or_default());
            if let Unpacked::Created(i) = entry.target.unpack() {
                if let Some(target) = created.get(i as usize) {
                    entry.target = Stored(Stored::CREATED | self.created.len() as u32);
                    self.created.push(*target);
                }
            }
            if let Unpacked::Composite(i) = entry.target.unpack() {
                if let Some(range) = composites.get(i as usize) {
                    let kept = &parts[range.start as usize..range.end as usize];
                    let start = self.composite_parts.len() as u32;
                    self.composite_parts.extend_from_slice(kept);
                    entry.target = Stored(self.composites.len() as u32 + 1);
                    self.composites.push(start..self.composite_parts.len() as u32);
                }
            }
        }
        self.garbage = 0;
        self.created_garbage = 0;
    }

    /// Returns what a page's growth left unused (a first scrape doubles the key buffer up
    /// to twice what it needs), keeping an eighth more for the scrapes to come.
    pub fn settle(&mut self) {
        let len = self.keys.len();
        if self.keys.capacity() > len + len / 2 {
            self.keys.shrink_to(len + len / 8);
        }
        let entries = self.entries.len();
        if self.entries.capacity() - entries > entries / 64 {
            self.entries.shrink_to_fit();
        }
    }

    /// Forgets every position (slots are about to be reused).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.keys.clear();
        self.created.clear();
        self.composites.clear();
        self.composite_parts.clear();
        self.garbage = 0;
        self.created_garbage = 0;
    }
}

#[cfg(test)]
mod tests;
