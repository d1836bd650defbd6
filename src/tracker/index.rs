//! The series index: every tracked series in a slot, found by identity (metric name and
//! label set, label order ignored) through a table of fingerprints. Fingerprints that
//! collide are told apart by comparing identities; `hashbrown`'s table does the probing.

use hashbrown::HashTable;

use super::tracked::TrackedSeries;
use crate::fingerprint;
use crate::text::names::{names_equal, normalized_name_byte};
use crate::text::Labels;

/// Identity fingerprint of a series: its name (from parts, ':' read as '_' when
/// normalizing) and its label set, independent of label order. A parsed sample and the
/// series stored for it give the same fingerprint.
fn fingerprint<'n, V: IntoIterator<Item = u8>>(
    name_parts: &[&str],
    labels: impl IntoIterator<Item = (&'n str, V)>,
    normalize: bool,
) -> u64 {
    let name = name_parts
        .iter()
        .flat_map(|p| p.bytes())
        .map(|b| normalized_name_byte(b, normalize));
    fingerprint::of_label_set(fingerprint::of_bytes(name), labels)
}

fn stored_fingerprint(series: &TrackedSeries, normalize: bool) -> u64 {
    let labels = series.labels.iter().map(|(k, v)| (k.as_str(), v.bytes()));
    fingerprint(&[series.name.as_str()], labels, normalize)
}

/// Whether sorted, unescaped `stored` labels are the parsed (still escaped) `labels`.
fn same_labels(stored: &[(String, String)], labels: Labels<'_>) -> bool {
    stored.len() == labels.len()
        && labels.iter().all(|(k, v)| {
            stored
                .binary_search_by(|(sk, _)| sk.as_str().cmp(k))
                .is_ok_and(|i| v == stored[i].1.as_str())
        })
}

#[derive(Debug, Clone, Default)]
pub(super) struct SeriesIndex {
    /// Series by slot; a dropped series leaves its slot free for the next new one.
    slots: Vec<Option<TrackedSeries>>,
    free: Vec<usize>,
    /// `(fingerprint, slot)` of every live series.
    table: HashTable<(u64, usize)>,
    normalize_names: bool,
}

impl SeriesIndex {
    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = &TrackedSeries> {
        self.slots.iter().flatten()
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

    /// Compares names with ':' and '_' alike from now on (fingerprints are recomputed).
    pub fn set_normalize_names(&mut self, on: bool) {
        if self.normalize_names == on {
            return;
        }
        self.normalize_names = on;
        let slots = &self.slots;
        let mut table = HashTable::with_capacity(self.table.len());
        for &(_, slot) in &self.table {
            if let Some(series) = &slots[slot] {
                let key = stored_fingerprint(series, on);
                table.insert_unique(key, (key, slot), |&(k, _)| k);
            }
        }
        self.table = table;
    }

    /// The slot of the series a parsed sample belongs to; its name may be given in parts
    /// (`["x", "_total"]`), so that no name has to be assembled.
    pub fn find_parsed(&self, name_parts: &[&str], labels: Labels<'_>) -> Option<usize> {
        let normalize = self.normalize_names;
        let pairs = labels.iter().map(|(k, v)| (k, v.unescaped_bytes()));
        self.find(fingerprint(name_parts, pairs, normalize), |series| {
            names_equal(&series.name, name_parts, normalize) && same_labels(&series.labels, labels)
        })
    }

    /// The identity fingerprint of a parsed sample (equal for equal identities).
    pub fn fingerprint_of(&self, sample: &crate::Sample<'_>) -> u64 {
        let pairs = sample.labels().iter().map(|(k, v)| (k, v.unescaped_bytes()));
        fingerprint(&[sample.name()], pairs, self.normalize_names)
    }

    /// The slot of the series with this name and these (unescaped) labels, in any order.
    pub fn find_owned(&self, name: &str, labels: &[(&str, &str)]) -> Option<usize> {
        let normalize = self.normalize_names;
        let pairs = labels.iter().map(|(k, v)| (*k, v.bytes()));
        self.find(fingerprint(&[name], pairs, normalize), |series| {
            names_equal(&series.name, &[name], normalize)
                && series.labels.len() == labels.len()
                && labels.iter().all(|(k, v)| series.label(k) == Some(*v))
        })
    }

    fn find(&self, key: u64, is_it: impl Fn(&TrackedSeries) -> bool) -> Option<usize> {
        let slots = &self.slots;
        self.table
            .find(key, |&(k, slot)| {
                k == key && slots[slot].as_ref().is_some_and(&is_it)
            })
            .map(|&(_, slot)| slot)
    }

    /// Stores a new series (its identity must not be in the index yet); returns its slot.
    pub fn insert(&mut self, series: TrackedSeries) -> usize {
        let key = stored_fingerprint(&series, self.normalize_names);
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot] = Some(series);
                slot
            }
            None => {
                self.slots.push(Some(series));
                self.slots.len() - 1
            }
        };
        self.table.insert_unique(key, (key, slot), |&(k, _)| k);
        slot
    }

    /// Removes every series `remove` accepts; returns how many went.
    pub fn remove_where(&mut self, remove: impl Fn(&TrackedSeries) -> bool) -> usize {
        let (slots, free) = (&mut self.slots, &mut self.free);
        let before = self.table.len();
        self.table.retain(|&mut (_, slot)| {
            if slots[slot].as_ref().is_some_and(&remove) {
                slots[slot] = None;
                free.push(slot);
                false
            } else {
                true
            }
        });
        before - self.table.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::series::GaugeSeries;
    use crate::tracker::tracked::SeriesData;

    fn series(name: &str, labels: &[(&str, &str)]) -> TrackedSeries {
        let mut labels: Vec<(String, String)> = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        labels.sort();
        TrackedSeries {
            name: name.to_string(),
            labels,
            data: SeriesData::Gauge(GaugeSeries::new(chrono::TimeDelta::minutes(1))),
            last_seen: 0,
            pending_created_ms: None,
        }
    }

    fn labels_of(line: &str) -> (String, crate::Sample<'_>) {
        let sample = crate::parse(line).next().unwrap().unwrap().into_sample().unwrap();
        (sample.name().to_string(), sample)
    }

    #[test]
    fn parsed_and_owned_lookups_find_the_same_slot() {
        let mut index = SeriesIndex::default();
        let a = index.insert(series("x_total", &[("b", "2"), ("a", "1")]));
        let b = index.insert(series("x_total", &[("a", "1")]));
        let (_, sample) = labels_of("x_total{b=\"2\",a=\"1\"} 1");
        assert_eq!(index.find_parsed(&["x", "_total"], sample.labels()), Some(a));
        assert_eq!(index.find_owned("x_total", &[("a", "1"), ("b", "2")]), Some(a));
        assert_eq!(index.find_owned("x_total", &[("a", "1")]), Some(b));
        assert_eq!(index.find_owned("x_total", &[("a", "2")]), None);
        let escaped = index.insert(series("e", &[("p", "a\"b")]));
        let (_, sample) = labels_of(r#"e{p="a\"b"} 1"#);
        assert_eq!(index.find_parsed(&["e"], sample.labels()), Some(escaped));
    }

    #[test]
    fn removed_slots_are_reused_and_lookups_stay_right() {
        let mut index = SeriesIndex::default();
        let slots: Vec<usize> = (0..100)
            .map(|i| index.insert(series("s", &[("i", &i.to_string())])))
            .collect();
        assert_eq!(
            index.remove_where(|s| s.label("i").unwrap().parse::<u32>().unwrap() % 2 == 0),
            50
        );
        assert_eq!(index.len(), 50);
        for (i, &slot) in slots.iter().enumerate() {
            let found = index.find_owned("s", &[("i", &i.to_string())]);
            assert_eq!(found, (i % 2 == 1).then_some(slot), "{i}");
        }
        let reused = index.insert(series("t", &[]));
        assert!(reused < 100 && index.get(reused).unwrap().name == "t");
    }

    #[test]
    fn normalizing_names_rekeys_the_index() {
        let mut index = SeriesIndex::default();
        let slot = index.insert(series("vllm:x", &[]));
        assert_eq!(index.find_owned("vllm_x", &[]), None);
        index.set_normalize_names(true);
        assert_eq!(index.find_owned("vllm_x", &[]), Some(slot));
        assert_eq!(index.find_owned("vllm:x", &[]), Some(slot));
    }
}
