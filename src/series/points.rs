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
/// The newest point is read from the column's end (a copy beside the column cost 16 bytes a
/// series). That read is a cache miss per series per scrape that a copy spared: the write
/// of the new point misses too, but a store waits in the store buffer and a load does not
/// (perf at a million series: the load is half of a steady ingest, 147 -> 194 ms). The
/// memory bound won; a layout that keeps each scrape's newest points together would serve
/// both.
///
/// Sizes are kept small (a tracker holds millions of these): the column is a boxed slice
/// and a `u32` length (a `Vec` would add 8 bytes of capacity), the cap is a `u32`: 32
/// bytes. The column is sized when the second point tells the interval: the points the
/// retention holds at that interval: a window of 5 points takes 5 (a push first drops what
/// the new point makes expire; doubling took 8, and growing a step a scrape left a hole behind in the allocator at each
/// step, for millions of series in step). Past that it grows by an eighth (at least one
/// point); compaction stays amortised: a full column that frees less than an eighth of
/// itself grows instead.
#[derive(Debug, Clone)]
pub(super) struct Points {
    /// `column[..len]` are the stored points (the oldest may have expired); the rest is
    /// room.
    column: Box<[Point]>,
    len: u32,
    max_len: u32,
    retention_ms: i64,
}

/// The most points a series keeps, whatever is asked (the column holds up to twice as many
/// before it compacts, and its indexes are `u32`).
pub(super) const MAX_POINTS_CAP: usize = (u32::MAX / 2) as usize;

/// The room a column's first point makes: the second point tells the interval, and the
/// column is then sized for the retention at once.
const FIRST_ROOM: usize = 1;

/// The most room a column is given at once before it has used it (8 points): a longer
/// retention is reached by doubling up to its size, in case the series stops early.
const SIZED_ROOM_CAP: usize = 8;

/// The most room [`Points::reserve_for_interval`] makes up front (1 KiB): asked for.
const RESERVED_ROOM_CAP: usize = 64;

/// The room added to (or kept free in) a full column of `len` points: an eighth, at least
/// one, so that compacting costs at most eight point moves per push.
fn growth(len: usize) -> usize {
    (len / 8).max(1)
}

impl Points {
    pub(super) fn new(retention_ms: i64, max_len: usize) -> Self {
        Points {
            column: Box::default(),
            len: 0,
            max_len: max_len.clamp(2, MAX_POINTS_CAP) as u32,
            retention_ms,
        }
    }

    /// Caps the points kept (at least 2, at most [`MAX_POINTS_CAP`]).
    pub(super) fn set_max_len(&mut self, max_len: usize) {
        self.max_len = max_len.clamp(2, MAX_POINTS_CAP) as u32;
    }

    /// The stored points, expired or not.
    fn stored(&self) -> &[Point] {
        &self.column[..self.len as usize]
    }

    /// First retained index: the newest point at or before (newest - retention).
    fn visible_start(&self) -> usize {
        match self.stored().last() {
            Some(last) => self.first_kept(last.timestamp_ms, 0),
            None => 0,
        }
    }

    /// The first stored index still retained once `incoming` more points, the newest at
    /// `newest_ms`, are pushed: the newest at or before (newest - retention), and at least
    /// the two newest points (a rate needs two), at most `max_len`.
    fn first_kept(&self, newest_ms: i64, incoming: usize) -> usize {
        let stored = self.stored();
        let keep_from = newest_ms.saturating_sub(self.retention_ms);
        let at_or_before = partition_near_front(stored, |p| p.timestamp_ms <= keep_from);
        let total = stored.len() + incoming;
        let by_time = at_or_before.saturating_sub(1).min(total.saturating_sub(2));
        by_time.max(total.saturating_sub(self.max_len as usize))
    }

    pub(super) fn points(&self) -> &[Point] {
        &self.stored()[self.visible_start()..]
    }

    pub(super) fn len(&self) -> usize {
        self.len as usize - self.visible_start()
    }

    pub(super) fn push(&mut self, point: Point) {
        let mut len = self.len as usize;
        if len == self.column.len() {
            // Full: trim what the new point makes expire, then compact; only if too little
            // has may it grow (so a column the size of its retention never grows).
            let start = self.first_kept(point.timestamp_ms, 1);
            if start > 0 {
                self.column.copy_within(start..len, 0);
                len -= start;
            }
            // Keep an eighth free, so compaction stays amortised O(1); in steady state
            // the expired points make the room.
            let room = self.column.len();
            if room == 0 || room - len < growth(len) {
                let step = (len + growth(len)).max(FIRST_ROOM);
                // Toward what the retention holds at this interval (and, past 8 points,
                // the eighth that sliding keeps free): at once up to 8 points, then
                // doubling, never past it.
                let holds = self.room_for_interval(point);
                let wanted = if holds > SIZED_ROOM_CAP {
                    holds + growth(holds)
                } else {
                    holds
                };
                let grown_room = if wanted > step {
                    wanted.min(step.max(2 * len).max(SIZED_ROOM_CAP))
                } else {
                    step
                };
                let mut grown = vec![Point::from_millis(0, 0.0); grown_room].into_boxed_slice();
                grown[..len].copy_from_slice(&self.column[..len]);
                self.column = grown;
            }
        }
        self.column[len] = point;
        self.len = (len + 1) as u32;
    }

    /// Makes room now for the points the retention holds at `interval_ms` (see
    /// [`Points::room_for_interval`]), so that a series whose rhythm is known is allocated
    /// once.
    pub(super) fn reserve_for_interval(&mut self, interval_ms: i64) {
        let points = self.room_at(interval_ms).min(RESERVED_ROOM_CAP);
        if self.column.len() < points {
            let mut grown = vec![Point::from_millis(0, 0.0); points].into_boxed_slice();
            grown[..self.len as usize].copy_from_slice(self.stored());
            self.column = grown;
        }
    }

    /// The room the retention needs at the interval from the newest point to `next` (a
    /// column sized once when its second point arrives, instead
    /// of one step at a time: each step left a hole behind in the allocator).
    fn room_for_interval(&self, next: Point) -> usize {
        let Some(last) = self.last() else {
            return 0;
        };
        self.room_at(next.timestamp_ms.saturating_sub(last.timestamp_ms))
    }

    fn room_at(&self, interval_ms: i64) -> usize {
        // The points of the retention, both ends included, and the one at or before its
        // start when the interval does not divide it.
        let interval_ms = interval_ms.max(1);
        let intervals = (self.retention_ms.saturating_add(interval_ms - 1)) / interval_ms;
        usize::try_from(intervals)
            .unwrap_or(usize::MAX)
            .saturating_add(1)
            .clamp(FIRST_ROOM, self.max_len as usize)
    }

    /// The two newest stored points (older first), expired or not.
    pub(super) fn last_two(&self) -> (Option<Point>, Option<Point>) {
        let stored = self.stored();
        let n = stored.len();
        (n.checked_sub(2).map(|i| stored[i]), self.last())
    }

    /// Points the column can hold before it compacts or grows.
    #[cfg(test)]
    pub(super) fn capacity(&self) -> usize {
        self.column.len()
    }

    /// The newest point.
    pub(super) fn last(&self) -> Option<Point> {
        self.stored().last().copied()
    }

    /// The times of the oldest and newest stored points (0 without points), combined:
    /// reading both brings every line a push reads into cache.
    pub(super) fn ends_ms(&self) -> i64 {
        let stored = self.stored();
        stored.first().map_or(0, |p| p.timestamp_ms) ^ stored.last().map_or(0, |p| p.timestamp_ms)
    }
}

/// `points.partition_point(before)` (`before` true, then false, along the points), the
/// first four points looked at one by one first: where a series' retention or a window
/// starts is usually among its oldest points, and a search of a few points cost more than
/// looking at them.
#[inline(always)]
pub(crate) fn partition_near_front(points: &[Point], before: impl Fn(&Point) -> bool) -> usize {
    // A window of the monitor's retention (the window and two intervals) starts after
    // its fourth point.
    const LOOKED_AT: usize = 4;
    for (i, point) in points.iter().take(LOOKED_AT).enumerate() {
        if !before(point) {
            return i;
        }
    }
    match points.get(LOOKED_AT..) {
        Some(rest) => LOOKED_AT + rest.partition_point(before),
        None => points.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The same index as a binary search, wherever the boundary is.
        #[test]
        fn a_partition_near_the_front_is_the_search(len in 0usize..12, boundary in 0usize..13) {
            let points: Vec<Point> = (0..len as i64).map(|ms| Point::from_millis(ms, 0.0)).collect();
            let before = |p: &Point| p.timestamp_ms < boundary as i64;
            proptest::prop_assert_eq!(partition_near_front(&points, before), points.partition_point(before));
        }
    }

    proptest::proptest! {
        /// The first point kept is the newest at or before the retention's start (at least
        /// the two newest, at most `max_len`), as a binary search over every stored point
        /// finds it: any times, any retention, any cap.
        #[test]
        fn the_first_kept_point_is_the_searched_one(
            gaps in proptest::collection::vec(1i64..40, 0..12),
            next in 1i64..40,
            retention in 0i64..200,
            max_len in 2usize..16,
        ) {
            let mut points = Points::new(retention, max_len);
            let mut ms = 0;
            for gap in &gaps {
                ms += gap;
                points.push(Point::from_millis(ms, 0.0));
            }
            let newest = ms + next;
            let stored = points.stored();
            let at_or_before = stored.partition_point(|p| p.timestamp_ms <= newest - retention);
            let total = stored.len() + 1;
            let searched = at_or_before.saturating_sub(1).min(total.saturating_sub(2)).max(total.saturating_sub(max_len));
            proptest::prop_assert_eq!(points.first_kept(newest, 1), searched);
        }
    }

    #[test]
    fn a_steady_push_lets_one_point_expire() {
        // Every 10 ms, 30 ms kept: at 50, the point at 10 expires, the one at 20 anchors.
        let mut points = Points::new(30, 100);
        for ms in [10, 20, 30, 40] {
            points.push(Point::from_millis(ms, 0.0));
        }
        assert_eq!(points.first_kept(50, 1), 1);
        points.push(Point::from_millis(50, 0.0));
        let kept: Vec<i64> = points.points().iter().map(|p| p.timestamp_ms).collect();
        assert_eq!(kept, [20, 30, 40, 50]);
    }
}
