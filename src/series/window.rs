//! The storage behind a live series: points and per-point metadata in two parallel
//! columns, bounded by a retention window and a point cap.

use crate::promql::Point;

/// Points and, beside each, metadata `M` (counters: the created time; gauges: nothing) in
/// two parallel contiguous columns, holding `retention_ms` of history (plus the anchor point
/// at or before its start) and at most `max_len` points.
///
/// Expired points are cut off lazily: a push touches only the tail, and the front is
/// trimmed (by moving a start index, then compacting in place) when the columns are full.
/// Readers see exactly the retained points either way. Memory stays bounded, points stay
/// one slice for `crate::promql`, and steady-state pushes never allocate.
///
/// The newest point is also kept beside the columns: every push compares with it, and
/// reading it there spares a cache miss on the columns' far end (a tracker pushes to
/// hundreds of series per scrape).
#[derive(Debug, Clone)]
pub(super) struct Window<M> {
    newest: Option<Stored<M>>,
    points: Vec<Point>,
    meta: Vec<M>,
    start: usize,
    retention_ms: i64,
    pub(super) max_len: usize,
}

/// A stored point and its metadata.
pub(super) type Stored<M> = (Point, M);

impl<M: Copy> Window<M> {
    pub(super) fn new(retention_ms: i64, max_len: usize) -> Self {
        Window {
            newest: None,
            points: Vec::new(),
            meta: Vec::new(),
            start: 0,
            retention_ms,
            max_len,
        }
    }

    /// First retained index: the newest point at or before (newest - retention).
    fn visible_start(&self) -> usize {
        let stored = &self.points[self.start..];
        let Some(last) = stored.last() else {
            return self.start;
        };
        let keep_from = last.timestamp_ms.saturating_sub(self.retention_ms);
        let at_or_before = stored.partition_point(|p| p.timestamp_ms <= keep_from);
        let by_time = self.start + at_or_before.saturating_sub(1);
        by_time.max(self.points.len().saturating_sub(self.max_len))
    }

    pub(super) fn points(&self) -> &[Point] {
        &self.points[self.visible_start()..]
    }

    pub(super) fn meta(&self) -> &[M] {
        &self.meta[self.visible_start()..]
    }

    pub(super) fn len(&self) -> usize {
        self.points.len() - self.visible_start()
    }

    pub(super) fn push(&mut self, point: Point, meta: M) {
        if self.points.len() == self.points.capacity() && !self.points.is_empty() {
            // Full: trim what has expired, then compact; only if nothing has may it grow.
            self.start = self.visible_start();
            if self.start > 0 {
                self.points.drain(..self.start);
                self.meta.drain(..self.start);
                self.start = 0;
            }
            // Keep room for as many pushes as there are points, so compaction stays
            // amortised O(1); in steady state the capacity is already there.
            let live = self.points.len();
            if live * 2 > self.points.capacity() {
                self.points.reserve(live);
                self.meta.reserve(live);
            }
        }
        self.points.push(point);
        self.meta.push(meta);
        self.newest = Some((point, meta));
    }

    /// The two newest stored points with their metadata (older first), expired or not.
    pub(super) fn last_two(&self) -> (Option<Stored<M>>, Option<Stored<M>>) {
        let stored = &self.points[self.start..];
        let meta = &self.meta[self.start..];
        let at = |i: Option<usize>| i.map(|i| (stored[i], meta[i]));
        let n = stored.len();
        (at(n.checked_sub(2)), at(n.checked_sub(1)))
    }

    /// Replaces the newest point's metadata.
    pub(super) fn set_last_meta(&mut self, meta: M) {
        if let Some(last) = self.meta.last_mut() {
            *last = meta;
        }
        if let Some((_, last)) = &mut self.newest {
            *last = meta;
        }
    }

    /// Points the columns can hold before they compact or grow.
    #[cfg(test)]
    pub(super) fn capacity(&self) -> usize {
        self.points.capacity()
    }

    /// The newest point and its metadata.
    pub(super) fn last(&self) -> Option<Stored<M>> {
        self.newest
    }
}
