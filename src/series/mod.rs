//! Live series fed one scrape at a time: counters that survive restarts, and gauges.
//!
//! Both keep their points in a bounded column (`points.rs`): the same
//! constructor, `max_points`, `push`, `len`, `is_empty`, `last` and `points`.

use chrono::TimeDelta;

mod counter;
mod created;
mod gauge;
mod points;

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
/// use promrate::{CounterSeries, ResetCause};
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
}
