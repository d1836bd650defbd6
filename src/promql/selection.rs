//! Which points a range function sees: the one window selection every form uses.

use chrono::{DateTime, Utc};

use super::{Point, RangeFunctions, Semantics};

/// How far around the window `(start, end]` a function reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reach {
    /// The window itself: `(start, end]` in 3.x, `[start, end]` in 2.x.
    Window,
    /// Also the lookback before the start, for the anchor point of `anchored`:
    /// `(start - lookback, end]`, always 3.x rules.
    LookbackBefore,
    /// The lookback on both sides, for the edge interpolation of `smoothed`:
    /// `(start - lookback, end + lookback]`, always 3.x rules.
    LookbackAround,
}

/// The selected points of one evaluation and the window's bounds (milliseconds).
#[derive(Clone, Copy)]
pub(super) struct Window<'p> {
    pub start: i64,
    pub end: i64,
    pub points: Selection<'p>,
}

impl RangeFunctions {
    /// The points a function evaluated at `at` reads, for `reach`; `None` when `points`
    /// are not in increasing time order (a binary search over them would pick a wrong
    /// window and answer a plausible, wrong number). The order is checked unless the
    /// range trusts it (`trusting_order`: the crate's series).
    pub(super) fn select<'p>(
        &self,
        points: &'p [Point],
        at: DateTime<Utc>,
        reach: Reach,
    ) -> Option<Window<'p>> {
        if !self.points_in_order && first_out_of_order(points).is_some() {
            return None;
        }
        Some(self.select_in_order(points, at, reach))
    }

    /// [`select`](RangeFunctions::select) for points in order.
    pub(super) fn select_in_order<'p>(
        &self,
        points: &'p [Point],
        at: DateTime<Utc>,
        reach: Reach,
    ) -> Window<'p> {
        let end = at.timestamp_millis();
        let start = end - self.window_ms;
        let (low, high) = match reach {
            Reach::Window => (start, end),
            Reach::LookbackBefore => (start - self.lookback_ms, end),
            Reach::LookbackAround => (start - self.lookback_ms, end + self.lookback_ms),
        };
        let closed_left = reach == Reach::Window && self.semantics == Semantics::Prometheus2;
        let first = if closed_left {
            points.partition_point(|p| p.timestamp_ms < low)
        } else {
            points.partition_point(|p| p.timestamp_ms <= low)
        };
        let last = points.partition_point(|p| p.timestamp_ms <= high).max(first);
        Window {
            start,
            end,
            points: Selection::new(&points[first..last], first),
        }
    }
}

/// The index of the first point whose timestamp is not after the one before it: a pass
/// over every point given (one comparison each), which is why the crate's series, in
/// order by construction, skip it.
pub(super) fn first_out_of_order(points: &[Point]) -> Option<usize> {
    points
        .windows(2)
        .position(|pair| pair[1].timestamp_ms <= pair[0].timestamp_ms)
        .map(|i| i + 1)
}

/// A run of points with Prometheus' staleness markers skipped, without copying: Prometheus
/// drops them from range selections before any function sees them, and so does every
/// function here, through this one type.
#[derive(Clone, Copy)]
pub(super) struct Selection<'p> {
    points: &'p [Point],
    /// Index of `points[0]` in the caller's slice (for data kept beside the points).
    offset: usize,
    /// Whether any point is a staleness marker (rare: then indexing skips them).
    has_stale: bool,
}

impl<'p> Selection<'p> {
    fn new(points: &'p [Point], offset: usize) -> Self {
        Selection {
            points,
            offset,
            has_stale: points.iter().any(Point::is_stale),
        }
    }

    pub fn len(&self) -> usize {
        if self.has_stale {
            self.points.iter().filter(|p| !p.is_stale()).count()
        } else {
            self.points.len()
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = Point> + 'p {
        self.points.iter().copied().filter(|p| !p.is_stale())
    }

    /// The points with their index in the caller's slice.
    pub fn indexed(&self) -> impl DoubleEndedIterator<Item = (usize, Point)> + 'p {
        let offset = self.offset;
        self.points
            .iter()
            .enumerate()
            .filter(|(_, p)| !p.is_stale())
            .map(move |(i, p)| (offset + i, *p))
    }

    /// The `i`-th point; `i < len()`.
    pub fn get(&self, i: usize) -> Point {
        if self.has_stale {
            self.iter().nth(i).expect("index within the selection")
        } else {
            self.points[i]
        }
    }

    /// How many points lie at or before `t`.
    pub fn count_at_or_before(&self, t: i64) -> usize {
        if self.has_stale {
            self.iter().take_while(|p| p.timestamp_ms <= t).count()
        } else {
            self.points.partition_point(|p| p.timestamp_ms <= t)
        }
    }

    /// How many points lie before `t`.
    pub fn count_before(&self, t: i64) -> usize {
        if self.has_stale {
            self.iter().take_while(|p| p.timestamp_ms < t).count()
        } else {
            self.points.partition_point(|p| p.timestamp_ms < t)
        }
    }

    /// The points from the `i`-th on.
    pub fn skip(&self, i: usize) -> Selection<'p> {
        let raw = if self.has_stale {
            // The raw index of the i-th live point.
            self.points
                .iter()
                .enumerate()
                .filter(|(_, p)| !p.is_stale())
                .nth(i)
                .map_or(self.points.len(), |(raw, _)| raw)
        } else {
            i.min(self.points.len())
        };
        Selection::new(&self.points[raw..], self.offset + raw)
    }

    /// The last two points, with their indices in the caller's slice.
    pub fn last_two(&self) -> Option<((usize, Point), (usize, Point))> {
        let mut live = self.indexed().rev();
        let last = live.next()?;
        let previous = live.next()?;
        Some((previous, last))
    }

    /// `resets`: how many times the value dropped. `None` without points.
    pub fn resets(&self) -> Option<f64> {
        self.count_steps(|previous, value| value < previous)
    }

    /// `changes`: how many times the value changed (NaN to NaN is no change).
    pub fn changes(&self) -> Option<f64> {
        self.count_steps(|previous, value| value != previous && !(value.is_nan() && previous.is_nan()))
    }

    fn count_steps(&self, counts: impl Fn(f64, f64) -> bool) -> Option<f64> {
        let mut values = self.iter().map(|p| p.value);
        let mut previous = values.next()?;
        let mut steps = 0u32;
        for value in values {
            steps += u32::from(counts(previous, value));
            previous = value;
        }
        Some(f64::from(steps))
    }
}
