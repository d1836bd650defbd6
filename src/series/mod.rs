//! Live series fed one scrape at a time: counters that survive restarts, and gauges. A
//! [`Tracker`](crate::Tracker) holds them ([`TrackedSeries::counter`](crate::TrackedSeries::counter));
//! they can also be fed by hand.
//!
//! Both keep their points in a bounded column (`points.rs`): the same
//! constructor, `max_points`, `push`, `len`, `is_empty`, `last` and `points`.
//!
//! # For the next maintainer
//! A series knows only its own points, in time order: the order of a page (a `_created`
//! sample read before its counter) is the tracker's business, not a series'. What must
//! change together:
//! - **Restarts** are decided in one place, `counter.rs`'s `reset_cause` (a value drop, or
//!   a changed created time); every figure reads increments through `increment`, so the
//!   window increase, the total since the start and the EWMA count a restart the same way.
//!   `amend_created` rewrites the newest interval when a created time arrives after its
//!   point: it must keep `total_increase` and the EWMA equal to what a push with that
//!   created time would have given (`the_total_increase_is_the_window_increase_...`).
//! - **Memory**: a tracker holds millions of counters. `CounterSeries` stays at most 80
//!   bytes (`a_series_stays_small`): created times and the newest restart live out of line
//!   (`Rare`, `created.rs` as runs), the EWMA's settings are 32-bit milliseconds, its
//!   weight is computed per push (not cached), the points are a boxed slice and a `u32`
//!   length with no copy of the newest point (`points.rs`), and the retention trims
//!   lazily.
//! - **Windows**: `window_increase` (`counter/window_increase.rs`) picks the point nearest
//!   the window's start within the slack and never across a gap, and says why its span is
//!   short (`Shortened`); its proptests (jitter never moves the start by an interval, no
//!   window across a gap) are in `counter/tests.rs`. PromQL's functions over the points
//!   are `counter/promql_functions.rs`, which only hands the points (and created times) to
//!   `crate::promql`.

use chrono::TimeDelta;

mod counter;
mod created;
mod gauge;
mod points;

pub(crate) use counter::RuleMs;
pub use counter::{CounterSeries, Shortened, WindowIncrease, WindowRule};
pub use gauge::GaugeSeries;

/// Default cap on the points a series keeps, whatever its retention.
pub const DEFAULT_MAX_POINTS: usize = 100_000;

/// Default time constant of [`CounterSeries::ewma_rate`]: 30 s.
pub const DEFAULT_EWMA_TAU: TimeDelta = TimeDelta::seconds(30);

/// Why a counter was found to have restarted.
///
/// # Example
/// ```
/// use promrate::{series::CounterSeries, series::ResetCause};
/// let mut s = CounterSeries::new(chrono::TimeDelta::minutes(5));
/// let t = chrono::DateTime::from_timestamp(1_000, 0).unwrap();
/// s.push(t, 100.0)?;
/// let pushed = s.push(t + chrono::TimeDelta::seconds(10), 3.0)?;
/// assert_eq!(pushed, Some(ResetCause::ValueDropped));
/// # Ok::<(), promrate::SeriesError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ResetCause {
    /// The value went down.
    ValueDropped,
    /// The `_created` time changed: a restart that may have climbed past the old value
    /// before this scrape, which value-only detection cannot see.
    CreatedChanged,
    /// The target's process start time changed (`process_start_time_seconds`, or the
    /// gauge [`Tracker::start_time_gauge`](crate::Tracker::start_time_gauge) names): a
    /// restart of every counter of that target without a start time of its own. A start
    /// time that moves by a second or less from one page to the next is the same process
    /// (exporters that compute it from an uptime round it, or carry its jitter). This is
    /// promrate's addition; Prometheus does not read a page-level start time.
    ProcessRestarted,
    /// The target's process start time moved backwards, or forward by less than the old
    /// process was seen alive (the new one was running while the old one answered), or a
    /// counter's created time returned to one an earlier page had (no restart brings back
    /// an earlier process's start; this compares no clocks): not one process restarting but
    /// two answering in turn (replicas behind one URL), or a clock that jumped. Only
    /// differences of one clock are compared: a server whose clock is off is read right. The
    /// counters of that target are not rated while such a change is in their window
    /// ([`NoValue::ErraticCounter`](crate::NoValue::ErraticCounter)).
    StartWentBack,
    /// The target's process start time moved forward again within the retention of a
    /// move before it, and neither time did a counter of the target drop or change its
    /// `_created`: a start time that is no process's (one an exporter computes from a
    /// drifting clock, `now - uptime`), not a restart on every page. No counter is marked:
    /// they are read by their values, as PromQL reads them (the first such move was read
    /// as a restart). Only in [`IngestReport::process_restarts`](crate::IngestReport).
    StartTimeMoving,
}

/// The cause as a reason: `the value dropped`, `its _created time changed`, `its process
/// restarted`, `its process start time went back`, `its process start time moved again
/// with no counter restarting`.
///
/// # Example
/// ```
/// assert_eq!(promrate::series::ResetCause::ValueDropped.to_string(), "the value dropped");
/// ```
impl std::fmt::Display for ResetCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ResetCause::ValueDropped => "the value dropped",
            ResetCause::CreatedChanged => "its _created time changed",
            ResetCause::ProcessRestarted => "its process restarted",
            ResetCause::StartWentBack => "its process start time went back",
            ResetCause::StartTimeMoving => "its process start time moved again with no counter restarting",
        })
    }
}

impl ResetCause {
    /// Whether the cause is evidence of a restart, not only a value that went down.
    ///
    /// # Example
    /// ```
    /// use promrate::series::ResetCause;
    /// assert!(!ResetCause::ValueDropped.is_evidenced());
    /// assert!(ResetCause::ProcessRestarted.is_evidenced());
    /// ```
    pub fn is_evidenced(self) -> bool {
        !matches!(self, ResetCause::ValueDropped)
    }
}
