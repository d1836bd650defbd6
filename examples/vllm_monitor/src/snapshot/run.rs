//! The run so far, as every output and the summary read it: the snapshots' context.

use super::{History, Snapshot};
use crate::events::Event;
use crate::target::ServerRow;

/// The run so far, as every output may show it.
pub struct Run<'a> {
    /// When the run began (a replay's: the recorded run's).
    pub started: chrono::DateTime<chrono::Utc>,
    /// "every 2s · window 30s · built-in simulator" and the like.
    pub setup: &'a str,
    /// The scrape interval and the EWMA's time constant the figures were computed with.
    pub interval: chrono::TimeDelta,
    pub ewma_tau: chrono::TimeDelta,
    /// What the user must not miss (`--insecure`): shown by every output.
    pub warnings: &'a [String],
    pub snapshot: Option<&'a Snapshot>,
    pub history: &'a History,
    /// Each URL as of the newest interval (as given, before the first).
    pub servers: &'a [ServerRow],
    /// Events with the seconds since start at which they came: the newest
    /// [`crate::events::EVENTS_KEPT`] at most.
    pub events: &'a [(f64, Event)],
    /// What is left of the events before them.
    pub earlier: &'a crate::events::EarlierEvents,
}
