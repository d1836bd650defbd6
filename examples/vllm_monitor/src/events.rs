//! What a run announces as it goes (restarts, faults, stalls, alerts...): one [`Event`]
//! for every output, the JSON's `"event"` objects. Made by the targets, the signals and
//! the alerts; read by the outputs and the summary.

use chrono::{DateTime, Utc};

/// What an event announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    Restart,
    Fault,
    Recovered,
    Stale,
    Back,
    /// Requests run and no token comes (`signals.rs`).
    Stall,
    /// One data-parallel engine does much less than the others.
    Imbalance,
    /// A scrape took longer than the interval, or its page was still being read when an
    /// interval was computed: figures wait for its page.
    Slow,
    /// A server's counters are not counters: they went down again with no restart
    /// evidence, or its process start time went backwards (two processes behind one
    /// URL?). They are not rated while it lasts (the library's `NoValue::ErraticCounter`).
    Erratic,
    /// A page was read, but something about it is off (served as `text/html`): said once
    /// per URL.
    Warning,
    /// An `--alert` rule fired, or resolved (`alerts/`).
    AlertFiring,
    AlertResolved,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Restart => "restart",
            EventKind::Fault => "fault",
            EventKind::Recovered => "recovered",
            EventKind::Stale => "stale",
            EventKind::Back => "back",
            EventKind::Stall => "stall",
            EventKind::Imbalance => "imbalance",
            EventKind::Slow => "slow",
            EventKind::Erratic => "erratic",
            EventKind::Warning => "warning",
            EventKind::AlertFiring => "alert_firing",
            EventKind::AlertResolved => "alert_resolved",
        }
    }
}

/// One announced event, for every renderer.
#[derive(Debug, Clone)]
pub struct Event {
    pub kind: EventKind,
    pub at: DateTime<Utc>,
    /// The URL, or the instance within a federation.
    pub source: String,
    pub message: String,
    /// An alert's rule, value and group (`None` for the other kinds).
    pub alert: Option<Box<AlertFacts>>,
}

/// What an alert event says besides its message: the fields of its JSON object.
#[derive(Debug, Clone, PartialEq)]
pub struct AlertFacts {
    /// The rule as written back (`gen_tok_s < 1000 for 30s`).
    pub rule: String,
    pub figure: &'static str,
    /// The figure's value at the interval that fired or resolved the rule.
    pub value: f64,
    pub threshold: f64,
    /// `label=value` of the group the rule fired on, `None` for the totals.
    pub group: Option<String>,
    /// Firing: how long the condition had held; resolved: how long the rule fired.
    pub held_s: f64,
    /// Seconds since the run began, as the interval rows count them.
    pub elapsed_s: f64,
}
