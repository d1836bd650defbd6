//! The storage behind a live series: its points, bounded by a retention and a point cap.

use crate::promql::Point;

/// Points in one contiguous column, holding `retention_ms` of history (plus the anchor
/// point at or before its start) and at most `max_len` points.
///
/// Expired points are cut off lazily: a push touches only the tail, and the front is
/// trimmed (compacting in place) when the column is full.
/// Readers see exactly the retained points either way. Memory stays bounded, points stay
/// one slice for `crate::promql`, and steady-state pushes never allocate.
///
/// The newest point is also kept beside the column: every push compares with it, and
/// reading it there spares a cache miss on the column's far end (a tracker pushes to
/// hundreds of series per scrape).
///
/// Sizes are kept small (a tracker holds millions of these): the cap is a `u32`.
#[derive(Debug, Clone)]
pub(super) struct Points {
    points: Vec<Point>,
    /// The newest point, when `points` is not empty.
    newest: Point,
    retention_ms: i64,
    max_len: u32,
}

/// The most points a series keeps, whatever is asked (the column holds up to twice as many
/// before it compacts, and its indexes are `u32`).
pub(super) const MAX_POINTS_CAP: usize = (u32::MAX / 2) as usize;

impl Points {
    pub(super) fn new(retention_ms: i64, max_len: usize) -> Self {
        Points {
            points: Vec::new(),
            newest: Point::from_millis(0, 0.0),
            retention_ms,
            max_len: max_len.clamp(2, MAX_POINTS_CAP) as u32,
        }
    }

    /// Caps the points kept (at least 2, at most [`MAX_POINTS_CAP`]).
    pub(super) fn set_max_len(&mut self, max_len: usize) {
        self.max_len = max_len.clamp(2, MAX_POINTS_CAP) as u32;
    }

    /// First retained index: the newest point at or before (newest - retention).
    fn visible_start(&self) -> usize {
        let stored = &self.points[..];
        let Some(last) = stored.last() else {
            return 0;
        };
        let keep_from = last.timestamp_ms.saturating_sub(self.retention_ms);
        let at_or_before = stored.partition_point(|p| p.timestamp_ms <= keep_from);
        // At least the two newest points, whatever the retention (a rate needs two).
        let by_time = at_or_before.saturating_sub(1).min(stored.len().saturating_sub(2));
        by_time.max(self.points.len().saturating_sub(self.max_len as usize))
    }

    pub(super) fn points(&self) -> &[Point] {
        &self.points[self.visible_start()..]
    }

    pub(super) fn len(&self) -> usize {
        self.points.len() - self.visible_start()
    }

    pub(super) fn push(&mut self, point: Point) {
        if self.points.len() == self.points.capacity() && !self.points.is_empty() {
            // Full: trim what has expired, then compact; only if nothing has may it grow.
            let start = self.visible_start();
            if start > 0 {
                self.points.drain(..start);
            }
            // Keep room for as many pushes as there are points, so compaction stays
            // amortised O(1); in steady state the capacity is already there.
            let live = self.points.len();
            if live * 2 > self.points.capacity() {
                self.points.reserve(live);
            }
        }
        self.points.push(point);
        self.newest = point;
    }

    /// The two newest stored points (older first), expired or not.
    pub(super) fn last_two(&self) -> (Option<Point>, Option<Point>) {
        let stored = &self.points[..];
        let n = stored.len();
        (n.checked_sub(2).map(|i| stored[i]), self.last())
    }

    /// Points the column can hold before it compacts or grows.
    #[cfg(test)]
    pub(super) fn capacity(&self) -> usize {
        self.points.capacity()
    }

    /// The newest point.
    pub(super) fn last(&self) -> Option<Point> {
        (!self.points.is_empty()).then_some(self.newest)
    }
}
