//! The position cache: a page's sample at position `i` is almost always the same series as
//! last scrape's sample at position `i`. Remembering the raw name and label text per
//! position turns series identity into one byte comparison, and skips selector evaluation
//! for samples that were not selected. Steady state allocates nothing (the remembered
//! strings keep their capacity).

use crate::text::names::same_bytes;
use crate::text::Sample;

/// What the sample at one position of the page was found to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Target {
    /// Not selected.
    Ignored,
    /// Recorded in this slot.
    Series(usize),
    /// A `<family>_created` sample: the created time of the family's `_total`, `_count`
    /// and `_sum` series with the same labels, where they exist.
    Created([Option<usize>; 3]),
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Where this position's key (the page text from the sample's name to the end of its
    /// labels) lies in `PositionCache::keys`.
    key_start: u32,
    key_len: u32,
    target: Target,
    /// For a `Created` target that misses some series: the tracker's insertion count when
    /// it was resolved. A series inserted since may be one it missed, so it is resolved
    /// again (`x_created` printed before its counter is seen on the next scrape).
    insertions: u64,
    /// The key began its line and a space followed it: a line that begins with the same
    /// bytes and a space is the same series, recognised before its labels are parsed.
    line_start: bool,
}

/// Keys live in one buffer, in page order once the page is steady: a scrape reads them
/// front to back, which the processor prefetches, instead of one allocation per position.
#[derive(Debug, Clone, Default)]
pub(super) struct PositionCache {
    entries: Vec<Entry>,
    keys: String,
    /// Bytes of `keys` no entry points to any more (replaced keys).
    garbage: usize,
}

/// The text of `page` that spans a sample's name and raw labels (both borrow from it): one
/// comparison decides identity, since the same bytes always parse to the same series.
pub(super) fn identity_span<'page>(page: &'page str, sample: &Sample<'page>) -> &'page str {
    let base = page.as_ptr() as usize;
    let offsets = |s: &str| {
        let start = (s.as_ptr() as usize).wrapping_sub(base);
        (start, start + s.len())
    };
    let (name_start, name_end) = offsets(sample.name());
    let labels = sample.labels().as_raw();
    let (start, mut end) = if labels.is_empty() {
        (name_start, name_end)
    } else {
        let (labels_start, labels_end) = offsets(labels);
        (name_start.min(labels_start), name_end.max(labels_end))
    };
    // With the closing brace, the key is the line's whole prefix before the value.
    if !labels.is_empty() && page.as_bytes().get(end) == Some(&b'}') {
        end += 1;
    }
    page.get(start..end).unwrap_or("")
}

impl Entry {
    /// The target, unless it may have missed a series inserted since it was resolved.
    #[inline]
    fn current(&self, insertions: u64) -> Option<Target> {
        match self.target {
            Target::Created(slots) if slots.contains(&None) && self.insertions != insertions => None,
            target => Some(target),
        }
    }
}

impl PositionCache {
    /// What the sample at `position` with identity text `key` was, if still known.
    /// `insertions` is the tracker's count of series inserted so far.
    #[inline]
    pub fn lookup(&self, position: usize, key: &str, insertions: u64) -> Option<Target> {
        let entry = self.entries.get(position)?;
        let start = entry.key_start as usize;
        let stored = self.keys.as_bytes().get(start..start + entry.key_len as usize)?;
        if key.is_empty() || !same_bytes(stored, key.as_bytes()) {
            return None;
        }
        entry.current(insertions)
    }

    /// If the sample at `position` was a line that began with its key, and `line` begins
    /// with the same key and a space: the key's length (the parser then reads only the
    /// value) and what the sample is.
    #[inline]
    pub fn known_prefix(&self, position: usize, line: &str, insertions: u64) -> Option<(usize, Target)> {
        let entry = self.entries.get(position).filter(|e| e.line_start)?;
        let start = entry.key_start as usize;
        let len = entry.key_len as usize;
        let stored = self.keys.as_bytes().get(start..start + len)?;
        let line = line.as_bytes();
        if len == 0 || line.get(len) != Some(&b' ') || !same_bytes(stored, &line[..len]) {
            return None;
        }
        Some((len, entry.current(insertions)?))
    }

    /// Remembers what the sample at `position` with identity text `key` is; `line_start`
    /// says the key began its line and a space followed it.
    pub fn store(&mut self, position: usize, key: &str, line_start: bool, target: Target, insertions: u64) {
        // Keys beyond u32 (a 4 GiB page) are simply not cached.
        let (Ok(key_start), Ok(key_len)) = (u32::try_from(self.keys.len()), u32::try_from(key.len())) else {
            return;
        };
        let entry = Entry {
            key_start,
            key_len,
            target,
            insertions,
            line_start,
        };
        if position >= self.entries.len() {
            // Positions are stored in order on a first scrape; a gap (rare) is filled with
            // entries that match nothing.
            let empty = Entry {
                key_start: 0,
                key_len: 0,
                target: Target::Ignored,
                insertions: 0,
                line_start: false,
            };
            self.entries.resize(position, empty);
            self.entries.push(entry);
        } else {
            self.garbage += self.entries[position].key_len as usize;
            self.entries[position] = entry;
        }
        self.keys.push_str(key);
        if self.garbage > self.keys.len() / 2 {
            self.compact();
        }
    }

    /// Rewrites the keys in position order, without the replaced ones.
    fn compact(&mut self) {
        let old = std::mem::take(&mut self.keys);
        for entry in &mut self.entries {
            let start = entry.key_start as usize;
            let key = &old[start..start + entry.key_len as usize];
            entry.key_start = self.keys.len() as u32;
            self.keys.push_str(key);
        }
        self.garbage = 0;
    }

    /// Forgets every position (slots are about to be reused).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.keys.clear();
        self.garbage = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_replaced_and_compacted_without_mixing_positions() {
        let mut cache = PositionCache::default();
        for round in 0..50u64 {
            for position in 0..20 {
                let key = format!("series_{position}{{round=\"{}\"}}", round % 3);
                if cache.lookup(position, &key, 0).is_none() {
                    cache.store(position, &key, true, Target::Series(position), 0);
                }
                assert_eq!(cache.lookup(position, &key, 0), Some(Target::Series(position)));
            }
        }
        assert!(
            cache.keys.len() <= 3 * 20 * 24,
            "garbage is compacted: {}",
            cache.keys.len()
        );
        assert_eq!(cache.lookup(3, "series_4{round=\"1\"}", 0), None);
        // A created-time target that missed a series is resolved again after an insertion.
        cache.store(0, "x_created", true, Target::Created([None, Some(1), None]), 7);
        assert!(cache.lookup(0, "x_created", 7).is_some());
        assert!(cache.lookup(0, "x_created", 8).is_none());
        cache.store(25, "late", false, Target::Ignored, 0);
        assert_eq!(cache.lookup(24, "", 0), None);
        assert_eq!(cache.lookup(25, "late", 0), Some(Target::Ignored));
        // Recognised at a line's start: the same bytes, then a space.
        assert_eq!(cache.known_prefix(0, "x_created 5\n", 7).map(|k| k.0), Some(9));
        assert_eq!(
            cache.known_prefix(0, "x_created 5\n", 8),
            None,
            "to be resolved again"
        );
        assert_eq!(cache.known_prefix(0, "x_createdx 5\n", 7), None);
        assert_eq!(cache.known_prefix(0, "x_created{a=\"1\"} 5\n", 7), None);
        assert_eq!(
            cache.known_prefix(25, "late 1\n", 0),
            None,
            "not stored as a line start"
        );
    }
}
