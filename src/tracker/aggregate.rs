//! PromQL-style aggregation over the tracked series: `sum by`, `avg by`,
//! `histogram_quantile` and histogram means, each over the series a [`Selector`] picks.

use std::borrow::Cow;

use hashbrown::HashTable;

use super::index::NameEntry;
use super::tracked::TrackedSeries;
use super::Tracker;
use crate::fingerprint;
use crate::histogram::{self, Bucket};
use crate::select::Selector;

/// A group of an aggregation: the grouping labels' values and the aggregate.
///
/// # Example
/// ```
/// let mut t = promrate::Tracker::new([]);
/// t.ingest("q{engine=\"0\"} 2\nq{engine=\"1\"} 3\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
/// let groups = t.sum_by(&promrate::Selector::parse("q")?, &["engine"], |s| s.last_value());
/// assert_eq!((groups[1].label("engine"), groups[1].value, groups[1].series), (Some("1"), 3.0, 1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Group {
    /// `(label, value)` for each grouping label, in the order asked (missing labels: "").
    pub labels: Vec<(String, String)>,
    /// The aggregate.
    pub value: f64,
    /// How many series contributed.
    pub series: usize,
}

impl Group {
    /// The value of one grouping label.
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// t.ingest("q{engine=\"0\"} 2\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
    /// let total = t.sum_by(&promrate::Selector::parse("q")?, &[], |s| s.last_value());
    /// assert_eq!((total[0].label("engine"), total[0].value), (None, 2.0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn label(&self, name: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// `(label, value)` of each grouping label of an aggregation, in the order asked (a missing
/// label reads as "").
pub type GroupLabels = Vec<(String, String)>;

/// A hash of one group's label values (in the order of the `by` labels).
fn group_hash(values: &[&str]) -> u64 {
    fingerprint::of_bytes(values.iter().flat_map(|v| v.bytes().chain([0xff])))
}

impl Tracker {
    /// The series `selector` picks. Names compare with ':' and '_' alike when either the
    /// tracker or the selector normalizes names.
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// t.normalize_names(true);
    /// t.ingest("vllm_x{e=\"0\"} 1\nvllm_x{e=\"1\"} 2\nother 3\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
    /// assert_eq!(t.matching(&promrate::Selector::parse("vllm:x")?).count(), 2);
    /// assert_eq!(t.matching(&promrate::Selector::parse(r#"vllm:x{e="1"}"#)?).count(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn matching<'t>(&'t self, selector: &'t Selector) -> impl Iterator<Item = &'t TrackedSeries> + 't {
        self.matching_family(selector, "")
    }

    /// The series whose name is a name `selector` picks followed by `suffix` (`_bucket`,
    /// `_sum`, `_count` of a histogram the selector names), in slot order. Only the series
    /// of the names picked are visited: a selector that fixes its name finds it by hash,
    /// any other reads the list of names, not the series.
    fn matching_family<'t>(
        &'t self,
        selector: &'t Selector,
        suffix: &'t str,
    ) -> impl Iterator<Item = &'t TrackedSeries> + 't {
        let slots = self.candidate_slots(selector, suffix);
        (0..slots.len()).filter_map(move |i| {
            let series = self.index.get(slots[i] as usize)?;
            selector
                .matches_label_values(|l| series.label(l))
                .then_some(series)
        })
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

    /// The figures `value` gives for the series `selector` picks (name plus `suffix`), by
    /// group of the `by` labels, in series order; groups sorted by their label values.
    /// Groups are found by hash; each group's labels are built once.
    fn grouped<T>(
        &self,
        selector: &Selector,
        suffix: &str,
        by: &[&str],
        value: impl Fn(&TrackedSeries) -> Option<T>,
    ) -> Vec<(GroupLabels, Vec<T>)> {
        let mut keys: Vec<Vec<&str>> = Vec::new();
        let mut values: Vec<Vec<T>> = Vec::new();
        let mut table: HashTable<usize> = HashTable::new();
        let mut probe: Vec<&str> = Vec::with_capacity(by.len());
        for series in self.matching_family(selector, suffix) {
            let Some(value) = value(series) else { continue };
            probe.clear();
            probe.extend(by.iter().map(|l| series.label(l).unwrap_or("")));
            let hash = group_hash(&probe);
            match table.find(hash, |&i| keys[i] == probe) {
                Some(&i) => values[i].push(value),
                None => {
                    table.insert_unique(hash, keys.len(), |&i| group_hash(&keys[i]));
                    keys.push(probe.clone());
                    values.push(vec![value]);
                }
            }
        }
        let mut groups: Vec<(Vec<&str>, Vec<T>)> = keys.into_iter().zip(values).collect();
        groups.sort_by(|a, b| a.0.cmp(&b.0));
        groups
            .into_iter()
            .map(|(key, values)| {
                let labels = by
                    .iter()
                    .zip(key)
                    .map(|(l, v)| (l.to_string(), v.to_string()))
                    .collect();
                (labels, values)
            })
            .collect()
    }

    fn sum_family(
        &self,
        selector: &Selector,
        suffix: &str,
        by: &[&str],
        f: impl Fn(&TrackedSeries) -> Option<f64>,
    ) -> Vec<Group> {
        self.grouped(selector, suffix, by, f)
            .into_iter()
            .map(|(labels, values)| Group {
                labels,
                series: values.len(),
                // Added in series order, as PromQL's sum does.
                value: values.iter().copied().reduce(|a, b| a + b).unwrap_or(0.0),
            })
            .collect()
    }

    /// PromQL `sum by (by...) (f(series))` over the series `selector` picks: `f` gives each
    /// series' figure (`None` leaves it out). Groups are sorted by their label values.
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// t.ingest("q{e=\"0\"} 2\nq{e=\"1\"} 3\nq{e=\"1\",x=\"y\"} 4\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
    /// let groups = t.sum_by(&promrate::Selector::parse("q")?, &["e"], |s| s.last_value());
    /// assert_eq!(groups.iter().map(|g| g.value).collect::<Vec<_>>(), [2.0, 7.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn sum_by(
        &self,
        selector: &Selector,
        by: &[&str],
        f: impl Fn(&TrackedSeries) -> Option<f64>,
    ) -> Vec<Group> {
        self.sum_family(selector, "", by, f)
    }

    /// PromQL `avg by (by...) (f(series))`, e.g. KV-cache usage across engines.
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// t.ingest("kv{e=\"0\"} 0.2\nkv{e=\"1\"} 0.4\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
    /// let avg = t.avg_by(&promrate::Selector::parse("kv")?, &[], |s| s.last_value());
    /// assert!((avg[0].value - 0.3).abs() < 1e-12);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn avg_by(
        &self,
        selector: &Selector,
        by: &[&str],
        f: impl Fn(&TrackedSeries) -> Option<f64>,
    ) -> Vec<Group> {
        let mut groups = self.sum_by(selector, by, f);
        for group in &mut groups {
            group.value /= group.series as f64;
        }
        groups
    }

    /// PromQL `histogram_quantile(q, sum by (le, by...) (f(<histogram>_bucket)))` for the
    /// histogram(s) `selector` names: `f` gives each bucket series' figure, typically a
    /// windowed increase or rate.
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// let mut t = promrate::Tracker::new([]);
    /// let at = |s| DateTime::from_timestamp(s, 0).unwrap();
    /// let page = |a: u32, b: u32, c: u32| format!("# TYPE ttft histogram\nttft_bucket{{le=\"0.1\"}} {a}\nttft_bucket{{le=\"1\"}} {b}\nttft_bucket{{le=\"+Inf\"}} {c}\n");
    /// t.ingest(&page(0, 0, 0), at(0))?;
    /// t.ingest(&page(10, 30, 40), at(10))?;
    /// let ttft = promrate::Selector::parse("ttft")?;
    /// let p50 = t.histogram_quantile(0.5, &ttft, &[], |s| s.counter()?.exact_increase(TimeDelta::seconds(10), at(10)));
    /// assert!((p50[0].value - 0.55).abs() < 1e-12); // rank 20: halfway through (0.1, 1]
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn histogram_quantile(
        &self,
        q: f64,
        selector: &Selector,
        by: &[&str],
        f: impl Fn(&TrackedSeries) -> Option<f64>,
    ) -> Vec<Group> {
        self.histogram_buckets(selector, by, f)
            .into_iter()
            .map(|(labels, buckets)| Group {
                labels,
                series: buckets.len(),
                value: histogram::quantile(q, &buckets),
            })
            .collect()
    }

    /// The buckets behind [`Tracker::histogram_quantile`], per group: `(le, f(series))` of
    /// every `_bucket` series of the histogram(s) `selector` names, for combining
    /// histograms across trackers.
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// t.ingest("# TYPE h histogram\nh_bucket{le=\"1\"} 3\nh_bucket{le=\"+Inf\"} 4\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
    /// let groups = t.histogram_buckets(&promrate::Selector::parse("h")?, &[], |s| s.last_value());
    /// assert_eq!(groups[0].1.iter().map(|b| (b.upper_bound, b.count)).collect::<Vec<_>>(), [(1.0, 3.0), (f64::INFINITY, 4.0)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn histogram_buckets(
        &self,
        selector: &Selector,
        by: &[&str],
        f: impl Fn(&TrackedSeries) -> Option<f64>,
    ) -> Vec<(GroupLabels, Vec<Bucket>)> {
        self.grouped(selector, "_bucket", by, |series| {
            let upper_bound = series.label("le")?.parse::<f64>().ok()?;
            Some(Bucket {
                upper_bound,
                count: f(series)?,
            })
        })
    }

    /// Mean observation per group of the histogram(s) `selector` names:
    /// `sum by (by) (f(<histogram>_sum)) / sum by (by) (f(<histogram>_count))`.
    ///
    /// # Example
    /// ```
    /// use chrono::{DateTime, TimeDelta};
    /// let mut t = promrate::Tracker::new([]);
    /// let at = |s| DateTime::from_timestamp(s, 0).unwrap();
    /// t.ingest("# TYPE l histogram\nl_sum 0\nl_count 0\n", at(0))?;
    /// t.ingest("# TYPE l histogram\nl_sum 3\nl_count 4\n", at(10))?;
    /// let l = promrate::Selector::parse("l")?;
    /// let mean = t.histogram_mean(&l, &[], |s| s.counter()?.exact_increase(TimeDelta::seconds(10), at(10)));
    /// assert_eq!(mean[0].value, 0.75);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn histogram_mean(
        &self,
        selector: &Selector,
        by: &[&str],
        f: impl Fn(&TrackedSeries) -> Option<f64>,
    ) -> Vec<Group> {
        let sums = self.sum_family(selector, "_sum", by, &f);
        let counts = self.sum_family(selector, "_count", by, &f);
        sums.into_iter()
            .filter_map(|sum| {
                // Both are sorted by their labels.
                let count = &counts[counts.binary_search_by(|c| c.labels.cmp(&sum.labels)).ok()?];
                Some(Group {
                    value: histogram::mean(sum.value, count.value)?,
                    ..sum
                })
            })
            .collect()
    }
}
