//! The series index: every tracked series in a slot, found three ways:
//! - by identity (metric name and label set, label order ignored) through a table of
//!   fingerprints whose collisions are told apart by comparing identities;
//! - by metric name: each name lists its series' slots, so a query visits only the series
//!   of the names its selector picks (a histogram's `_bucket`, `_sum` and `_count` are
//!   three names);
//! - names and labels are interned: a name, a `label="value"` pair, or a whole label set
//!   that many series share is stored once, and each series holds a pointer to it.
//!
//! `hashbrown`'s tables do the probing.

use std::sync::Arc;

use hashbrown::HashTable;
use smallvec::SmallVec;

use super::bucket_groups::{BucketGroupId, BucketGroups};
use super::tracked::{Label, LabelSet, SharedName, TrackedSeries};
use crate::fingerprint;
use crate::text::escape::unescape;
use crate::text::labels::KeyedLabel;
use crate::text::names::{names_equal, normalized_name_byte, same_bytes};
use crate::text::{LabelValue, Labels};

/// Identity fingerprint of a series: its name (from parts, ':' read as '_' when
/// normalizing) and its label set, independent of label order. A parsed sample and the
/// series stored for it give the same fingerprint.
fn fingerprint<'n, V: fingerprint::Value>(
    name_parts: &[&str],
    labels: impl IntoIterator<Item = (&'n str, V)>,
    normalize: bool,
) -> u64 {
    fingerprint::of_label_set(name_fingerprint(name_parts, normalize), labels)
}

fn name_fingerprint(name_parts: &[&str], normalize: bool) -> u64 {
    if let (false, [name]) = (normalize, name_parts) {
        return fingerprint::of_bytes(name.as_bytes());
    }
    let name = name_parts
        .iter()
        .flat_map(|p| p.bytes())
        .map(|b| normalized_name_byte(b, normalize));
    fingerprint::of_byte_iter(name)
}

fn stored_fingerprint(series: &TrackedSeries, normalize: bool) -> u64 {
    let labels = series.labels.iter().map(|l| (&*l.name, &*l.value));
    fingerprint(&[&series.name], labels, normalize)
}

/// The hash the table files a series under: from 32 bits of its fingerprint, which the
/// index keeps by slot (`SeriesIndex::fingerprints`), so that a growing table moves its
/// entries without reading a series (at a million series, recomputing them from the
/// series' names and labels was a third of a first ingest).
fn table_hash(fingerprint: u64) -> u64 {
    u64::from(fingerprint as u32).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// The table's hash of the series in `slot`, for the table to move its entries when it
/// grows.
fn rehash(fingerprints: &[u32], slot: u32) -> u64 {
    table_hash(u64::from(fingerprints[slot as usize]))
}

/// Whether sorted, unescaped `stored` labels are the parsed (still escaped) `labels`.
fn same_labels(stored: &[Arc<Label>], labels: Labels<'_>) -> bool {
    holds_each(stored, labels) == Some(stored.len())
}

/// Whether `stored` (sorted by name, unescaped) holds each of the parsed `labels` that has
/// a value, names and values compared with their escapes resolved: how many it held, or
/// `None` for a label it does not hold (an empty value is no label: [`Labels::present`]).
pub(super) fn holds_each(stored: &[Arc<Label>], labels: Labels<'_>) -> Option<usize> {
    let holds = |k: &str, v: LabelValue<'_>| {
        stored
            .binary_search_by(|l| (*l.name).cmp(k))
            .is_ok_and(|i| v == *stored[i].value)
    };
    let (mut held, plain) = (0, labels.is_plain());
    for (k, v) in labels.present() {
        let found = if plain {
            holds(k, v)
        } else {
            holds(&unescape(k, true), v)
        };
        if !found {
            return None;
        }
        held += 1;
    }
    Some(held)
}

/// What [`SeriesIndex::lookup_parsed`] read of a sample no series has: its identity
/// fingerprint, and its labels with theirs (so that the set is read once).
#[derive(Debug, Default)]
pub(super) struct NewIdentity<'page> {
    pub key: u64,
    pub labels: SmallVec<[KeyedLabel<'page>; 8]>,
    /// The set holds no escape: each value as written is its value.
    pub plain: bool,
}

/// The series of one metric name (compared with ':' and '_' alike when normalizing).
#[derive(Debug, Clone)]
pub(super) struct NameEntry {
    /// The name as first seen; series spelled otherwise keep their own spelling.
    pub name: SharedName,
    /// Slots of its live series, ascending (the order aggregations add in).
    pub slots: Vec<u32>,
}

/// Interned `label="value"` pairs: each distinct pair once, shared by its series.
#[derive(Debug, Clone, Default)]
struct LabelPool {
    table: HashTable<Arc<Label>>,
}

impl LabelPool {
    fn hash(name: &str, value: impl fingerprint::Value) -> u64 {
        fingerprint::of_label(name, value)
    }

    /// The shared pair for a parsed label, whose fingerprint is `hash`
    /// ([`fingerprint::of_label`]), created if new; `plain`: the parser knows its set holds
    /// no escape, so the value as written is the value (no search for one).
    fn intern(&mut self, name: &str, value: LabelValue<'_>, plain: bool, hash: u64) -> Arc<Label> {
        // A quoted name's escapes resolved (a plain set has none).
        let name = if plain {
            std::borrow::Cow::Borrowed(name)
        } else {
            unescape(name, true)
        };
        debug_assert_eq!(
            hash,
            if plain {
                Self::hash(&name, value.raw())
            } else {
                Self::hash(&name, value)
            }
        );
        let same_value = |l: &Label| {
            if plain {
                same_bytes(l.value.as_bytes(), value.raw().as_bytes())
            } else {
                value == *l.value
            }
        };
        let found = self.table.find(hash, |l| {
            same_bytes(l.name.as_bytes(), name.as_bytes()) && same_value(l)
        });
        if let Some(label) = found {
            return Arc::clone(label);
        }
        let label = Arc::new(Label {
            name: (*name).into(),
            value: value.unescaped().into(),
        });
        self.table
            .insert_unique(hash, Arc::clone(&label), |l| Self::hash(&l.name, &*l.value));
        label
    }

    /// Forgets the pairs no series holds any more.
    fn purge(&mut self) {
        self.table.retain(|l| Arc::strong_count(l) > 1);
    }
}

/// Interned label sets, when asked for ([`SeriesIndex::share_label_sets`]): each
/// distinct set of interned pairs once, shared by its series. A set is its pairs'
/// pointers, in order, so it is found without reading any text.
#[derive(Debug, Clone, Default)]
struct SetPool {
    share: bool,
    table: HashTable<LabelSet>,
}

impl SetPool {
    fn hash(labels: &[Arc<Label>]) -> u64 {
        fingerprint::of_words(labels.iter().map(|l| Arc::as_ptr(l) as usize as u64))
    }

    /// The set of these interned pairs (sorted by name): the shared one when sharing.
    fn set(&mut self, labels: SmallVec<[Arc<Label>; 8]>) -> LabelSet {
        if !self.share {
            return labels.into_iter().collect();
        }
        let hash = Self::hash(&labels);
        let same = |set: &LabelSet| {
            set.len() == labels.len() && set.iter().zip(&labels).all(|(a, b)| Arc::ptr_eq(a, b))
        };
        if let Some(set) = self.table.find(hash, same) {
            return LabelSet::clone(set);
        }
        let set: LabelSet = labels.into_iter().collect();
        self.table
            .insert_unique(hash, LabelSet::clone(&set), |s| Self::hash(s));
        set
    }

    /// Lets go of the sets no series holds any more (before the pairs are purged: the
    /// sets hold them).
    fn purge(&mut self) {
        self.table.retain(|s| LabelSet::count(s) > 1);
    }
}

#[derive(Debug, Clone, Default)]
pub(super) struct SeriesIndex {
    /// Series by slot; a dropped series leaves its slot free for the next new one.
    slots: Vec<Option<TrackedSeries>>,
    free: Vec<u32>,
    /// The slot of every live series, by its identity fingerprint (`table_hash`: 4 bytes
    /// an entry).
    table: HashTable<u32>,
    /// 32 bits of each slot's identity fingerprint (what the table rehashes from).
    fingerprints: Vec<u32>,
    /// Series by metric name; `name_table` finds an entry by its (normalized) name.
    names: Vec<NameEntry>,
    name_table: HashTable<u32>,
    labels: LabelPool,
    sets: SetPool,
    normalize_names: bool,
    /// The entry [`SeriesIndex::name_id`] last gave (checked by its spelling before use).
    last_name: u32,
    /// The bucket series of histograms by label group, for the families a created time
    /// asked for.
    buckets: BucketGroups,
}

impl SeriesIndex {
    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = &TrackedSeries> {
        self.slots.iter().flatten()
    }

    /// The number of slots, free or not (slots are `0..slot_count()`).
    pub fn slot_count(&self) -> usize {
        self.slots.len()
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut TrackedSeries> {
        self.slots.iter_mut().flatten()
    }

    pub fn get(&self, slot: usize) -> Option<&TrackedSeries> {
        self.slots.get(slot)?.as_ref()
    }

    pub fn get_mut(&mut self, slot: usize) -> Option<&mut TrackedSeries> {
        self.slots.get_mut(slot)?.as_mut()
    }

    pub fn normalize_names(&self) -> bool {
        self.normalize_names
    }

    /// Every metric name with its series.
    pub fn names(&self) -> &[NameEntry] {
        &self.names
    }

    /// The entry of the name made of `name_parts` (compared as the index compares names).
    pub fn named(&self, name_parts: &[&str]) -> Option<&NameEntry> {
        let normalize = self.normalize_names;
        let names = &self.names;
        self.name_table
            .find(name_fingerprint(name_parts, normalize), |&i| {
                names_equal(&names[i as usize].name, name_parts, normalize)
            })
            .map(|&i| &names[i as usize])
    }

    /// The entry of `name`, if it has one.
    fn find_name(&self, name: &str) -> Option<u32> {
        self.find_name_parts(&[name])
    }

    /// The entry of the name made of `name_parts`, if it has one.
    fn find_name_parts(&self, name_parts: &[&str]) -> Option<u32> {
        let normalize = self.normalize_names;
        let names = &self.names;
        self.name_table
            .find(name_fingerprint(name_parts, normalize), |&i| {
                names_equal(&names[i as usize].name, name_parts, normalize)
            })
            .copied()
    }

    /// The `_bucket` series of the histogram `family` whose labels, `le` aside, are the
    /// parsed `labels`, if it has any.
    pub fn bucket_group(&mut self, family: &str, labels: Labels<'_>) -> Option<BucketGroupId> {
        let name = self.find_name_parts(&[family, "_bucket"])?;
        let members = &self.names[name as usize].slots;
        self.buckets.find(name, members, &self.slots, labels)
    }

    /// The slots of a group [`SeriesIndex::bucket_group`] found.
    pub fn bucket_slots(&self, group: BucketGroupId) -> &[u32] {
        self.buckets.slots(group)
    }

    /// The entry of `name`, created if new.
    fn name_id(&mut self, name: &str) -> u32 {
        // A page's series come by name: the entry of the last name asked for, if it is
        // spelled alike, is this name's (each name has one entry), and no hash is needed.
        let last = self.last_name;
        if self
            .names
            .get(last as usize)
            .is_some_and(|entry| **entry.name == *name)
        {
            return last;
        }
        if let Some(i) = self.find_name(name) {
            self.last_name = i;
            return i;
        }
        let normalize = self.normalize_names;
        let hash = name_fingerprint(&[name], normalize);
        let id = self.names.len() as u32;
        self.names.push(NameEntry {
            name: Arc::new(name.into()),
            slots: Vec::new(),
        });
        let names = &self.names;
        self.name_table.insert_unique(hash, id, |&i| {
            name_fingerprint(&[&names[i as usize].name], normalize)
        });
        self.last_name = id;
        id
    }

    /// Whether series with the same labels share one set from now on (sets made before
    /// stay as they are; off forgets the table).
    pub fn share_label_sets(&mut self, on: bool) {
        self.sets.share = on;
        if !on {
            self.sets.table = HashTable::new();
        }
    }

    /// Compares names with ':' and '_' alike from now on (fingerprints and the names are
    /// indexed again).
    pub fn set_normalize_names(&mut self, on: bool) {
        if self.normalize_names == on {
            return;
        }
        self.normalize_names = on;
        let slots = std::mem::take(&mut self.slots);
        self.table.clear();
        self.names.clear();
        self.name_table.clear();
        self.buckets.clear();
        for (slot, series) in slots.iter().enumerate() {
            if let Some(series) = series {
                let key = stored_fingerprint(series, on);
                self.fingerprints[slot] = key as u32;
                let fingerprints = &self.fingerprints;
                self.table
                    .insert_unique(table_hash(key), slot as u32, |&s| rehash(fingerprints, s));
            }
        }
        self.slots = slots;
        for slot in 0..self.slots.len() {
            let Some(name) = self.slots[slot].as_ref().map(|s| Arc::clone(&s.name)) else {
                continue;
            };
            let id = self.name_id(&name);
            self.names[id as usize].slots.push(slot as u32);
        }
    }

    /// The slot of the series a parsed sample belongs to; its name may be given in parts
    /// (`["x", "_total"]`), so that no name has to be assembled.
    pub fn find_parsed(&self, name_parts: &[&str], labels: Labels<'_>) -> Option<usize> {
        let normalize = self.normalize_names;
        self.find(
            labels.fingerprint(name_fingerprint(name_parts, normalize)),
            |series| names_equal(&series.name, name_parts, normalize) && same_labels(&series.labels, labels),
        )
    }

    /// The slot of the series of a parsed sample (its labels still escaped, in any order);
    /// for a new one, its fingerprint and its labels' (which
    /// [`SeriesIndex::identity_and_name`] interns them by, so that no label is hashed
    /// twice).
    /// `new` is filled either way; it is written in place, since it is large to move.
    pub fn lookup_parsed<'page>(
        &self,
        name: &str,
        labels: Labels<'page>,
        new: &mut NewIdentity<'page>,
    ) -> Option<usize> {
        let normalize = self.normalize_names;
        labels.keyed_into(&mut new.labels);
        new.plain = labels.is_plain();
        new.key = new
            .labels
            .iter()
            .fold(name_fingerprint(&[name], normalize), |acc, l| acc ^ l.key);
        self.find(new.key, |series| {
            names_equal(&series.name, &[name], normalize) && same_labels(&series.labels, labels)
        })
    }

    /// The slot of the series with this name and these (unescaped) labels, in any order.
    pub fn find_owned(&self, name: &str, labels: &[(&str, &str)]) -> Option<usize> {
        let normalize = self.normalize_names;
        let present = || labels.iter().copied().filter(|(_, v)| !v.is_empty());
        self.find(fingerprint(&[name], present(), normalize), |series| {
            names_equal(&series.name, &[name], normalize)
                && series.labels.len() == present().count()
                && present().all(|(k, v)| series.label(k) == Some(v))
        })
    }

    fn find(&self, key: u64, is_it: impl Fn(&TrackedSeries) -> bool) -> Option<usize> {
        let (slots, fingerprints) = (&self.slots, &self.fingerprints);
        // The table tells entries apart by 7 bits: the stored fingerprint, in a dense
        // column, turns away almost every other series before its slot is read.
        self.table
            .find(table_hash(key), |&slot| {
                fingerprints[slot as usize] == key as u32 && slots[slot as usize].as_ref().is_some_and(&is_it)
            })
            .map(|&slot| slot as usize)
    }

    /// The identity of a parsed sample as a series stores it: its name (shared with the
    /// name's other series when spelled alike) and its interned labels, sorted by name.
    #[cfg(test)]
    pub fn identity(&mut self, name: &str, labels: Labels<'_>) -> (SharedName, LabelSet) {
        let mut keyed = SmallVec::new();
        labels.keyed_into(&mut keyed);
        let (name, labels, _) = self.identity_and_name(name, &keyed, labels.is_plain());
        (name, labels)
    }

    /// [`SeriesIndex::identity`], and the entry of its name (for
    /// [`SeriesIndex::insert_fingerprinted`]), from the labels as
    /// [`SeriesIndex::lookup_parsed`] read them (`plain`: the set holds no escape).
    pub fn identity_and_name(
        &mut self,
        name: &str,
        labels: &[KeyedLabel<'_>],
        plain: bool,
    ) -> (SharedName, LabelSet, u32) {
        let id = self.name_id(name);
        let entry = &self.names[id as usize].name;
        let name = if ***entry == *name {
            Arc::clone(entry)
        } else {
            Arc::new(name.into())
        };
        // On the stack: a shared set already held needs no allocation at all.
        let mut interned: SmallVec<[Arc<Label>; 8]> = labels
            .iter()
            .map(|l| self.labels.intern(l.name, l.value, plain, l.key))
            .collect();
        // Pages write labels sorted as a rule: checked before any sort.
        if !interned.is_sorted_by(|a, b| a.name <= b.name) {
            interned.sort_by(|a, b| a.name.cmp(&b.name));
        }
        (name, self.sets.set(interned), id)
    }

    /// Stores a new series (its identity must not be in the index yet, its name and
    /// labels from [`SeriesIndex::identity`]); returns its slot.
    #[cfg(test)]
    pub fn insert(&mut self, series: TrackedSeries) -> usize {
        let key = stored_fingerprint(&series, self.normalize_names);
        let name_id = self.name_id(&series.name);
        self.insert_fingerprinted(series, key, name_id)
    }

    /// [`SeriesIndex::insert`] with the series' fingerprint (from
    /// [`SeriesIndex::lookup_parsed`]) and its name's entry (from
    /// [`SeriesIndex::identity_and_name`]), so that neither is computed again.
    pub fn insert_fingerprinted(&mut self, series: TrackedSeries, key: u64, name_id: u32) -> usize {
        let name_id = name_id as usize;
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Some(series);
                self.fingerprints[slot as usize] = key as u32;
                slot
            }
            None => {
                self.slots.push(Some(series));
                self.fingerprints.push(key as u32);
                (self.slots.len() - 1) as u32
            }
        };
        let fingerprints = &self.fingerprints;
        self.table
            .insert_unique(table_hash(key), slot, |&s| rehash(fingerprints, s));
        let slots = &mut self.names[name_id].slots;
        // New slots come last; a reused one goes where its number says.
        match slots.last() {
            Some(&last) if last > slot => {
                let at = slots.partition_point(|&s| s < slot);
                slots.insert(at, slot);
            }
            _ => slots.push(slot),
        }
        self.buckets.inserted(name_id as u32, slot, &self.slots);
        slot as usize
    }

    /// Returns what growing left unused in the per-slot columns, once the series stop
    /// coming (a page that added none): a million series in a column grown by doubling
    /// leave up to a million slots' room.
    pub fn settle(&mut self) {
        fn fit<T>(column: &mut Vec<T>) {
            if column.capacity() - column.len() > column.len() / 64 {
                column.shrink_to_fit();
            }
        }
        fit(&mut self.slots);
        fit(&mut self.fingerprints);
    }

    /// Removes every series `remove` accepts; returns how many went.
    pub fn remove_where(&mut self, mut remove: impl FnMut(&TrackedSeries) -> bool) -> usize {
        let (slots, free) = (&mut self.slots, &mut self.free);
        let before = self.table.len();
        let mut touched_names = Vec::new();
        self.table.retain(|&mut slot| {
            let series = &mut slots[slot as usize];
            if series.as_ref().is_some_and(&mut remove) {
                touched_names.extend(series.take().map(|s| s.name));
                free.push(slot);
                false
            } else {
                true
            }
        });
        touched_names.sort_unstable();
        touched_names.dedup();
        for name in touched_names {
            let Some(id) = self.find_name(&name) else {
                continue;
            };
            let slots = &self.slots;
            self.names[id as usize]
                .slots
                .retain(|&slot| slots[slot as usize].is_some());
        }
        let removed = before - self.table.len();
        if removed > 0 {
            self.sets.purge();
            self.labels.purge();
            let names = &self.names;
            self.buckets
                .regroup(|name| &names[name as usize].slots, &self.slots);
        }
        removed
    }
}

#[cfg(test)]
mod tests;
