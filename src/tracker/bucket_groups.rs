//! A histogram's buckets by label group: the `<family>_bucket` series whose labels, `le`
//! left out, are one set. A created time (`<family>_created`, or a composite value's
//! `st@`) is the start of every series of its group, buckets included, as Prometheus
//! applies it; the bucket series carry an `le` the created sample does not, so they cannot
//! be found by identity.
//!
//! Only the families a created time asked for are grouped (most pages have none), each
//! once in full and then kept up to date as its bucket series come and go, so a page costs
//! one lookup per created sample whatever the family's size.

use std::sync::Arc;

use hashbrown::HashTable;

use super::index::holds_each;
use super::tracked::{Label, TrackedSeries};
use crate::fingerprint;
use crate::text::Labels;

/// One label group's bucket series: `BucketGroups::slots` of this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct BucketGroupId {
    /// The `_bucket` name's entry in the series index.
    name: u32,
    group: u32,
}

/// The groups of one `_bucket` name.
#[derive(Debug, Clone, Default)]
struct FamilyBuckets {
    /// Group index by the fingerprint of its labels without `le`.
    table: HashTable<u32>,
    /// Each group's fingerprint and slots.
    groups: Vec<(u64, Vec<u32>)>,
}

/// The bucket groups of the names a created time asked for, by name entry.
#[derive(Debug, Clone, Default)]
pub(super) struct BucketGroups {
    families: Vec<Option<FamilyBuckets>>,
}

/// The labels of a bucket series other than `le`.
fn without_le(labels: &[Arc<Label>]) -> impl Iterator<Item = &Label> {
    labels.iter().map(|l| &**l).filter(|l| &*l.name != "le")
}

fn stored_group_fingerprint(labels: &[Arc<Label>]) -> u64 {
    fingerprint::of_label_set(0, without_le(labels).map(|l| (&*l.name, &*l.value)))
}

/// Whether two bucket series' labels are the same but for `le`.
fn same_group(a: &[Arc<Label>], b: &[Arc<Label>]) -> bool {
    without_le(a).eq(without_le(b))
}

/// Whether a bucket series' labels, `le` left out, are the parsed `labels` (in any order,
/// still escaped).
fn is_group_of(stored: &[Arc<Label>], labels: Labels<'_>) -> bool {
    labels.get("le").is_none() && holds_each(stored, labels) == Some(stored.len() - 1)
}

impl FamilyBuckets {
    fn add(&mut self, slot: u32, series: &TrackedSeries, slots: &[Option<TrackedSeries>]) {
        if !series.labels.iter().any(|l| &*l.name == "le") {
            return;
        }
        let fingerprint = stored_group_fingerprint(&series.labels);
        let groups = &self.groups;
        let found = self.table.find(fingerprint, |&g| {
            let (f, members) = &groups[g as usize];
            *f == fingerprint
                && members
                    .first()
                    .and_then(|&s| slots.get(s as usize)?.as_ref())
                    .is_some_and(|first| same_group(&first.labels, &series.labels))
        });
        match found {
            Some(&g) => self.groups[g as usize].1.push(slot),
            None => {
                let g = self.groups.len() as u32;
                self.groups.push((fingerprint, vec![slot]));
                let groups = &self.groups;
                self.table
                    .insert_unique(fingerprint, g, |&g| groups[g as usize].0);
            }
        }
    }
}

impl BucketGroups {
    /// The group of `labels` among the series of the `_bucket` name entry `name`, whose
    /// slots are `members`; the name is grouped on first use.
    pub fn find(
        &mut self,
        name: u32,
        members: &[u32],
        slots: &[Option<TrackedSeries>],
        labels: Labels<'_>,
    ) -> Option<BucketGroupId> {
        let index = name as usize;
        if self.families.len() <= index {
            self.families.resize_with(index + 1, || None);
        }
        let family = self.families[index].get_or_insert_with(|| {
            let mut family = FamilyBuckets::default();
            for &slot in members {
                if let Some(series) = slots.get(slot as usize).and_then(Option::as_ref) {
                    family.add(slot, series, slots);
                }
            }
            family
        });
        let fingerprint = labels.fingerprint(0);
        let groups = &family.groups;
        let group = *family.table.find(fingerprint, |&g| {
            let (f, members) = &groups[g as usize];
            *f == fingerprint
                && members
                    .first()
                    .and_then(|&s| slots.get(s as usize)?.as_ref())
                    .is_some_and(|first| is_group_of(&first.labels, labels))
        })?;
        Some(BucketGroupId { name, group })
    }

    /// The slots of a group's bucket series.
    pub fn slots(&self, id: BucketGroupId) -> &[u32] {
        let family = self.families.get(id.name as usize).and_then(Option::as_ref);
        family
            .and_then(|f| f.groups.get(id.group as usize))
            .map_or(&[], |(_, members)| members)
    }

    /// A new series in `slot` of the name entry `name`: a bucket of a grouped name joins
    /// its group.
    pub fn inserted(&mut self, name: u32, slot: u32, slots: &[Option<TrackedSeries>]) {
        let family = self.families.get_mut(name as usize).and_then(Option::as_mut);
        if let (Some(family), Some(Some(series))) = (family, slots.get(slot as usize)) {
            family.add(slot, series, slots);
        }
    }

    /// Series were removed: every grouped name is grouped again from `members` (its
    /// entry's slots). Group ids change; the tracker forgets the targets that held them.
    pub fn regroup<'a>(&mut self, members: impl Fn(u32) -> &'a [u32], slots: &[Option<TrackedSeries>]) {
        for (name, family) in self.families.iter_mut().enumerate() {
            let Some(family) = family else { continue };
            *family = FamilyBuckets::default();
            for &slot in members(name as u32) {
                if let Some(series) = slots.get(slot as usize).and_then(Option::as_ref) {
                    family.add(slot, series, slots);
                }
            }
        }
    }

    /// Forgets every group (names were indexed again).
    pub fn clear(&mut self) {
        self.families.clear();
    }
}
