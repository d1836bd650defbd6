//! An OpenMetrics 2.0 composite value (`foo {count:17,sum:3.5,bucket:[0.1:8,+Inf:17]}`)
//! read into the classic series the same page in OpenMetrics 1.0 gives: `foo_bucket{le=..}`,
//! `foo_count` and `foo_sum` (a gauge histogram's `foo_gcount` and `foo_gsum`, a summary's
//! `foo{quantile=..}`), each with the sample's `st@` as its created time (as a 1.0 page's
//! `foo_created` is the start of the count, the sum and every bucket), so that
//! selectors, `quantile`, `mean` and rates read an OpenMetrics 2.0 page as its 1.0 twin.
//!
//! The first time a position holds a composite value, each classic series is resolved as
//! if its OpenMetrics 1.0 line had been read (the line is written and parsed, so roles,
//! selectors and the index see what they would see on a 1.0 page); the position cache then
//! keeps the value's parts, and a steady page reads only numbers, allocating nothing. A
//! native histogram has no classic buckets: its count and sum are kept, and its family is
//! remembered so that `quantile` names the reason it has none.

use std::borrow::Cow;

use super::super::positions::{CompositePart, CreatedFor, Target};
use super::Ingest;
use crate::text::composite::CompositePairs;
use crate::text::value::parse_float;
use crate::text::{write, Format, Parser, Sample};
use crate::{text::CompositeKind, text::CompositeValue};

/// A composite value's buckets or quantiles, if it has classic ones.
fn pairs<'page>(value: &CompositeValue<'page>) -> Option<CompositePairs<'page>> {
    value.buckets().or_else(|| value.quantiles())
}

/// Whether the parts cached for a position are this value's series: the same bounds (or
/// quantiles) in the same order.
fn same_layout(parts: &[CompositePart], value: &CompositeValue<'_>) -> bool {
    let Some((_, classic)) = parts.split_first_chunk::<2>() else {
        return false;
    };
    let mut cached = classic.iter();
    let same = pairs(value).is_none_or(|pairs| {
        pairs.texts().all(|(bound, _)| {
            let bound = parse_float(bound).unwrap_or(f64::NAN);
            cached
                .next()
                .is_some_and(|part| part.bound.to_bits() == bound.to_bits())
        })
    });
    same && cached.next().is_none()
}

/// The suffixes of a composite value's classic series: count, sum, and the buckets' or
/// quantiles' (with the label that tells them apart).
fn suffixes(kind: CompositeKind) -> (&'static str, &'static str, &'static str, &'static str) {
    match kind {
        CompositeKind::GaugeHistogram => ("_gcount", "_gsum", "_bucket", "le"),
        CompositeKind::Summary => ("_count", "_sum", "", "quantile"),
        _ => ("_count", "_sum", "_bucket", "le"),
    }
}

impl<'page> Ingest<'_, 'page> {
    /// Records a sample with a composite value: each of its classic series' values.
    pub(super) fn record_composite(&mut self, sample: &Sample<'page>, value: CompositeValue<'page>) {
        let (key, line_start) = sample.identity();
        if !self.within_sample_limit(key) {
            return;
        }
        self.gather_name(sample.name());
        let (position, anchor) = (self.read.position, self.anchor_key);
        let positions = &self.tracker.positions;
        let cached = match positions.lookup(position, key, anchor, self.tracker.insertions) {
            Some(Target::Composite(i)) if same_layout(positions.composite(i), &value) => Some(i),
            _ => None,
        };
        let at_ms = self.read.time_of(sample.timestamp_ms());
        let start_seconds = sample.start_timestamp_ms().map(|ms| ms as f64 / 1000.0);
        let offset = self.offset_of(key);
        let classic = pairs(&value).into_iter().flat_map(|p| p.texts());
        let values = [value.count(), value.sum()]
            .into_iter()
            .chain(classic.map(|(_, v)| parse_float(v).unwrap_or(f64::NAN)));
        match cached {
            Some(index) => {
                for (part, value) in (0..).zip(values) {
                    let slot = self
                        .tracker
                        .positions
                        .composite(index)
                        .get(part)
                        .and_then(|p| p.slot);
                    if let Some(slot) = slot {
                        self.record_part(slot as usize, at_ms, value, start_seconds, offset);
                    }
                }
            }
            None => {
                let parts = self.resolve_composite(sample, &value);
                for (part, value) in parts.iter().zip(values) {
                    if let Some(slot) = part.slot {
                        self.record_part(slot as usize, at_ms, value, start_seconds, offset);
                    }
                }
                // Keys the cache cannot hold (over 64 KiB) are resolved each time instead.
                if key.len() <= usize::from(u16::MAX) {
                    let index = self.tracker.positions.add_composite(parts);
                    let insertions = self.tracker.insertions;
                    self.tracker.positions.store(
                        position,
                        key,
                        anchor,
                        line_start,
                        Target::Composite(index),
                        insertions,
                    );
                }
            }
        }
        if self.tracker.positions.is_anchor(position) {
            self.anchor_key = key;
        }
        self.read.position += 1;
    }

    /// One classic series' value, and the sample's start timestamp as its created time (as
    /// OpenMetrics 1.0's `_created` is).
    fn record_part(
        &mut self,
        slot: usize,
        at_ms: i64,
        value: f64,
        start_seconds: Option<f64>,
        offset: usize,
    ) {
        let report = &mut self.read.report;
        self.tracker
            .apply(Target::Series(slot), at_ms, value, offset, report);
        if let Some(start_seconds) = start_seconds {
            let created = Target::Created(CreatedFor::one(slot));
            self.tracker.apply(created, at_ms, start_seconds, offset, report);
        }
    }

    /// Finds (or creates) the classic series of a composite value at a new position: count,
    /// sum, then one per bucket or quantile, in the value's order.
    fn resolve_composite(&mut self, sample: &Sample<'_>, value: &CompositeValue<'_>) -> Vec<CompositePart> {
        let kind = value.kind();
        let (count, sum, part, label) = suffixes(kind);
        let name = sample.name_unescaped();
        let labels: Vec<(Cow<'_, str>, Cow<'_, str>)> = sample
            .labels()
            .iter_unescaped()
            .map(|(name, value)| (name, value.unescaped()))
            .collect();
        let mut parts = Vec::new();
        for suffix in [count, sum] {
            let slot = self.resolve_classic(&name, suffix, &labels, None);
            parts.push(CompositePart {
                bound: f64::NAN,
                slot,
            });
        }
        let classic = pairs(value);
        if classic.is_none() && kind != CompositeKind::Summary {
            self.tracker.native_families.insert(name.as_ref().into());
        }
        for (bound, _) in classic.into_iter().flat_map(|p| p.texts()) {
            let slot = self.resolve_classic(&name, part, &labels, Some((label, bound)));
            let bound = parse_float(bound).unwrap_or(f64::NAN);
            parts.push(CompositePart { bound, slot });
        }
        parts
    }

    /// The slot of one classic series (`None`: not selected), resolved from the line an
    /// OpenMetrics 1.0 page would have for it.
    fn resolve_classic(
        &mut self,
        name: &str,
        suffix: &str,
        labels: &[(Cow<'_, str>, Cow<'_, str>)],
        extra: Option<(&str, &str)>,
    ) -> Option<u32> {
        let mut all: Vec<(&str, &str)> = labels.iter().map(|(k, v)| (k.as_ref(), v.as_ref())).collect();
        all.extend(extra);
        let mut line = String::new();
        // Writing to a String cannot fail.
        let _ = write::sample(&mut line, &format!("{name}{suffix}"), &all, 0.0, None);
        let entry = Parser::new(Format::PrometheusText).parse(&line).next()?.ok()?;
        let classic = entry.into_sample()?;
        match self.resolve(&classic) {
            Target::Series(slot) => u32::try_from(slot).ok(),
            _ => None,
        }
    }
}

impl crate::Tracker {
    /// [`NoValue::NativeHistogram`](crate::NoValue::NativeHistogram) when `selector` names
    /// the buckets of a family read only as native histograms (why `quantile` has none).
    pub(in crate::tracker) fn native_histogram(&self, selector: &crate::Selector) -> Option<crate::NoValue> {
        let name = selector.metric_name()?;
        let family = name.strip_suffix("_bucket").unwrap_or(name);
        self.native_families
            .contains(family)
            .then(|| crate::NoValue::NativeHistogram {
                name: family.to_string(),
            })
    }
}
