//! The series a [`Selector`] picks, grouped by labels: `matching`, and the grouping engine
//! (`grouped`) that `evaluate.rs` and the crate's `fold` module fold figures with.

use std::borrow::Cow;
use std::sync::Arc;

use hashbrown::HashTable;

use super::index::NameEntry;
use super::tracked::{Label, TrackedSeries};
use super::Tracker;
use crate::error::QueryError;
use crate::promql::sum::Aggregate;
use crate::query::GroupLabels;
use crate::select::{Selector, FAMILY_PARTS};

/// One group's key: the stored label of each `by` label (`None` where the series has
/// none). A tracker stores each distinct label pair once, so two series have equal values
/// exactly when they point at the same stored labels: keys compare and hash as pointers.
type GroupKey<'t> = Option<&'t Arc<Label>>;

fn group_hash(key: &[GroupKey<'_>]) -> u64 {
    // Addresses differ in their middle bits: multiply, then fold the high half down, so
    // that both the table's index (low bits) and its tag (top bits) vary.
    key.iter().fold(0, |h, label| {
        let address = label.map_or(0, |l| Arc::as_ptr(l) as usize) as u64;
        let x = (h ^ address).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        x ^ (x >> 29)
    })
}

fn same_key(a: &[GroupKey<'_>], b: &[GroupKey<'_>]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| match (x, y) {
            (Some(x), Some(y)) => Arc::ptr_eq(x, y),
            (None, None) => true,
            _ => false,
        })
}

/// A histogram's (or summary's) parts after its name.
pub(super) const HISTOGRAM_PARTS: [&str; 3] = ["_bucket", "_sum", "_count"];

/// The selector of the histogram a selector names: `x_bucket` (as PromQL users write it in
/// `histogram_quantile`), `x_sum` and `x_count` name the histogram `x`.
pub(crate) fn family_selector(selector: &Selector) -> Cow<'_, Selector> {
    let base = selector
        .metric_name()
        .and_then(|name| HISTOGRAM_PARTS.iter().find_map(|part| name.strip_suffix(part)));
    match base {
        Some(base) => Cow::Owned(selector.with_metric_name(base)),
        None => Cow::Borrowed(selector),
    }
}

/// The selector of one part (`_bucket`, `_sum`, `_count`) of the histogram `selector`
/// names, for the check that the tracker keeps it.
pub(crate) fn part_selector(selector: &Selector, part: &str) -> Selector {
    let family = family_selector(selector);
    match family.metric_name() {
        Some(base) => family.with_metric_name(&format!("{base}{part}")),
        None => family.into_owned(),
    }
}

/// Which series of the names a selector picks: the whole family (`x` and its `_bucket`,
/// `_sum`, `_count`), or one part of a histogram.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Pick<'s> {
    Family,
    Part(&'s str),
}

impl Tracker {
    /// The series `selector` picks (a histogram's or summary's name picks its `_bucket`,
    /// `_sum` and `_count` series too: [`Selector::matches_family`]). Names compare with
    /// ':' and '_' alike when either the tracker or the selector normalizes names.
    ///
    /// # Errors
    /// [`QueryError::NotTracked`] if the tracker's selectors may not keep every series
    /// `selector` picks.
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// t.normalize_names(true);
    /// let page = "vllm_x{e=\"0\"} 1\nvllm_x{e=\"1\"} 2\nother 3\n\
    ///             lat_bucket{le=\"+Inf\"} 4\nlat_count 4\nlat_sum 2\n";
    /// t.ingest(page, chrono::DateTime::from_timestamp(1, 0).unwrap())?;
    /// assert_eq!(t.matching(&promrate::Selector::parse("vllm:x")?)?.count(), 2);
    /// assert_eq!(t.matching(&promrate::Selector::parse(r#"vllm:x{e="1"}"#)?)?.count(), 1);
    /// assert_eq!(t.matching(&promrate::Selector::parse("lat")?)?.count(), 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn matching<'t>(
        &'t self,
        selector: &'t Selector,
    ) -> Result<impl Iterator<Item = &'t TrackedSeries> + 't, QueryError> {
        self.check_tracked(selector)?;
        Ok(self.picked(selector, Pick::Family))
    }

    /// The series `selector` picks, without the check that the tracker keeps them.
    pub(super) fn picked<'t>(
        &'t self,
        selector: &'t Selector,
        pick: Pick<'t>,
    ) -> impl Iterator<Item = &'t TrackedSeries> + 't {
        self.picked_slots(selector, pick).map(|(_, series)| series)
    }

    /// [`Tracker::picked`] with each series' slot.
    pub(super) fn picked_slots<'t>(
        &'t self,
        selector: &'t Selector,
        pick: Pick<'t>,
    ) -> impl Iterator<Item = (usize, &'t TrackedSeries)> + 't {
        let slots = match pick {
            Pick::Family => self.family_slots(selector),
            Pick::Part(suffix) => self.candidate_slots(selector, suffix),
        };
        (0..slots.len()).filter_map(move |i| {
            let slot = slots[i] as usize;
            let series = self.index.get(slot)?;
            self.picks(selector, pick, series).then_some((slot, series))
        })
    }

    /// Whether `selector` picks `series`, one of the series of the names it picks (the
    /// name index checked the names: what is left is the labels, and that a `_bucket`
    /// picked as a histogram's part has an `le` label).
    fn picks(&self, selector: &Selector, pick: Pick<'_>, series: &TrackedSeries) -> bool {
        let label = |l: &str| series.label(l);
        if !selector.matches_label_values(label) {
            return false;
        }
        match pick {
            Pick::Family if series.name.ends_with("_bucket") && series.label("le").is_none() => {
                let normalize = self.index.normalize_names() || selector.normalizes_names();
                selector.name_matches_normalized(&series.name, normalize)
            }
            _ => true,
        }
    }

    /// Whether `selector` picks the series in `slot` as a family, names checked too (for a
    /// slot remembered from an earlier page, which may hold another series since).
    pub(super) fn picks_slot(&self, selector: &Selector, slot: usize) -> Option<&TrackedSeries> {
        let series = self.index.get(slot)?;
        let normalize = self.index.normalize_names() || selector.normalizes_names();
        selector
            .matches_family_series_normalized(&series.name, |l| series.label(l), normalize)
            .then_some(series)
    }

    /// The slots of the series of every name `selector` picks as a family (the names it
    /// matches, and their parts: `FAMILY_PARTS`), ascending.
    fn family_slots<'t>(&'t self, selector: &Selector) -> Cow<'t, [u32]> {
        let mut parts = std::iter::once("")
            .chain(FAMILY_PARTS)
            .map(|suffix| self.candidate_slots(selector, suffix))
            .filter(|slots| !slots.is_empty());
        let Some(first) = parts.next() else {
            return Cow::Borrowed(&[]);
        };
        let Some(second) = parts.next() else {
            return first;
        };
        let mut slots: Vec<u32> = first.iter().chain(second.iter()).copied().collect();
        for more in parts {
            slots.extend_from_slice(&more);
        }
        slots.sort_unstable();
        slots.dedup();
        Cow::Owned(slots)
    }

    /// The slots of the series of every name `selector` picks with `suffix`, ascending.
    fn candidate_slots<'t>(&'t self, selector: &Selector, suffix: &str) -> Cow<'t, [u32]> {
        let normalize = self.index.normalize_names() || selector.normalizes_names();
        let picks = |entry: &NameEntry| {
            entry
                .name
                .strip_suffix(suffix)
                .is_some_and(|base| selector.name_matches_normalized(base, normalize))
        };
        if let Some(name) = selector.metric_name() {
            // Names compare as the index compares them: one entry, found by hash.
            if normalize == self.index.normalize_names() {
                return match self.index.named(&[name, suffix]) {
                    Some(entry) if picks(entry) => Cow::Borrowed(&entry.slots),
                    _ => Cow::Borrowed(&[]),
                };
            }
        }
        let mut picked = self
            .index
            .names()
            .iter()
            .filter(|e| !e.slots.is_empty() && picks(e));
        let Some(first) = picked.next() else {
            return Cow::Borrowed(&[]);
        };
        let Some(second) = picked.next() else {
            return Cow::Borrowed(&first.slots);
        };
        // Several names: their series in slot order, as one list.
        let mut slots: Vec<u32> = [first, second]
            .into_iter()
            .chain(picked)
            .flat_map(|e| e.slots.iter().copied())
            .collect();
        slots.sort_unstable();
        Cow::Owned(slots)
    }

    /// The figures `value` gives for the series `selector` picks (name plus `suffix`),
    /// folded by group of the `by` labels in series order (`start` takes a group's first
    /// figure, `add` each next one); groups sorted by their label values. Groups are found
    /// by hash; their label values live in one flat list, and each group's labels are
    /// built once, at the end.
    pub(crate) fn grouped<T, A>(
        &self,
        selector: &Selector,
        pick: Pick<'_>,
        by: &[&str],
        value: impl Fn(&TrackedSeries) -> Option<T>,
        start: impl Fn(T) -> A,
        add: impl Fn(&mut A, T),
    ) -> Vec<(GroupLabels, A)> {
        let width = by.len();
        let mut series = self.picked(selector, pick).peekable();
        // Room for a group per series, up to a size that a query of few groups does not
        // regret (growing past it is amortised as usual).
        let expected = if series.peek().is_some() {
            series.size_hint().1.unwrap_or(64).min(4096)
        } else {
            0
        };
        // Group `g`'s key is `keys[g * width..(g + 1) * width]`.
        let mut keys: Vec<GroupKey<'_>> = Vec::with_capacity(expected * width);
        let mut folded: Vec<A> = Vec::with_capacity(expected);
        let mut table: HashTable<usize> = HashTable::with_capacity(expected);
        let mut probe: Vec<GroupKey<'_>> = Vec::with_capacity(width);
        // Where each `by` label was in the series before.
        let mut hints = vec![0; width];
        // The group of the series before: series come in page order, where a group's
        // series are mostly together (a fleet page is by instance), so most need no lookup.
        let mut previous: Option<usize> = None;
        for series in series {
            let Some(value) = value(series) else { continue };
            probe.clear();
            probe.extend(
                by.iter()
                    .zip(&mut hints)
                    .map(|(l, hint)| series.label_entry_near(l, hint)),
            );
            let key_of = |g: usize| &keys[g * width..(g + 1) * width];
            if let Some(g) = previous.filter(|&g| same_key(key_of(g), &probe)) {
                add(&mut folded[g], value);
                continue;
            }
            let hash = group_hash(&probe);
            let g = match table.find(hash, |&g| same_key(key_of(g), &probe)) {
                Some(&g) => {
                    add(&mut folded[g], value);
                    g
                }
                None => {
                    let g = folded.len();
                    keys.extend_from_slice(&probe);
                    folded.push(start(value));
                    let keys = &keys;
                    table.insert_unique(hash, g, |&g| group_hash(&keys[g * width..(g + 1) * width]));
                    g
                }
            };
            previous = Some(g);
        }
        // Labels a series lacks read as "", named as asked.
        let missing: Vec<(Arc<str>, Arc<str>)> = by.iter().map(|l| (Arc::from(*l), Arc::from(""))).collect();
        let mut groups: Vec<(GroupLabels, A)> = folded
            .into_iter()
            .enumerate()
            .map(|(g, folded)| {
                let labels = keys[g * width..(g + 1) * width]
                    .iter()
                    .zip(&missing)
                    .map(|(label, missing)| match label {
                        Some(l) => (Arc::clone(&l.name), Arc::clone(&l.value)),
                        None => missing.clone(),
                    })
                    .collect();
                (labels, folded)
            })
            .collect();
        // Series come in slot order, which is usually their page's (sorted) order: the sort
        // then only confirms runs.
        groups.sort_by(|a, b| a.0.iter().map(|(_, v)| v).cmp(b.0.iter().map(|(_, v)| v)));
        groups
    }

    /// The figures `f` gives for the series `selector` picks as `pick` says, folded per
    /// group in series order (a PromQL `sum` or `avg`, begun by `first`): `(labels, value,
    /// series folded)` per group.
    pub(crate) fn counted_family<A: Aggregate>(
        &self,
        selector: &Selector,
        pick: Pick<'_>,
        by: &[&str],
        f: impl Fn(&TrackedSeries) -> Option<f64>,
        first: impl Fn(f64) -> A,
    ) -> Vec<(GroupLabels, f64, usize)> {
        let start = |v| (first(v), 1);
        self.grouped(selector, pick, by, f, start, |(folded, n), v| {
            folded.add(v);
            *n += 1;
        })
        .into_iter()
        .map(|(labels, (folded, series))| (labels, folded.value(), series))
        .collect()
    }
}
