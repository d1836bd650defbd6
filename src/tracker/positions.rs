//! The position cache: a page's sample at position `i` is almost always the same series as
//! last scrape's sample at position `i`. Remembering the raw name and label text per
//! position turns series identity into one byte comparison, and skips selector evaluation
//! for samples that were not selected. Steady state allocates nothing (the remembered
//! strings keep their capacity).

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

#[derive(Debug, Clone)]
struct Entry {
    /// The page text from the sample's name to the end of its labels.
    key: String,
    target: Target,
    /// For a `Created` target that misses some series: the tracker's insertion count when
    /// it was resolved. A series inserted since may be one it missed, so it is resolved
    /// again (`x_created` printed before its counter is seen on the next scrape).
    insertions: u64,
}

#[derive(Debug, Clone, Default)]
pub(super) struct PositionCache {
    entries: Vec<Entry>,
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
    let (start, end) = if labels.is_empty() {
        (name_start, name_end)
    } else {
        let (labels_start, labels_end) = offsets(labels);
        (name_start.min(labels_start), name_end.max(labels_end))
    };
    page.get(start..end).unwrap_or("")
}

impl PositionCache {
    /// What the sample at `position` with identity text `key` was, if still known.
    /// `insertions` is the tracker's count of series inserted so far.
    pub fn lookup(&self, position: usize, key: &str, insertions: u64) -> Option<Target> {
        let entry = self.entries.get(position)?;
        if key.is_empty() || entry.key != key {
            return None;
        }
        match entry.target {
            Target::Created(slots) if slots.contains(&None) && entry.insertions != insertions => None,
            target => Some(target),
        }
    }

    pub fn store(&mut self, position: usize, key: &str, target: Target, insertions: u64) {
        if position >= self.entries.len() {
            self.entries.resize(
                position + 1,
                Entry {
                    key: String::new(),
                    target: Target::Ignored,
                    insertions: 0,
                },
            );
        }
        let entry = &mut self.entries[position];
        entry.key.clear();
        entry.key.push_str(key);
        entry.target = target;
        entry.insertions = insertions;
    }

    /// Forgets every position (slots are about to be reused).
    pub fn clear(&mut self) {
        self.entries.clear();
    }
}
