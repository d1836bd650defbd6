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

/// The events a run keeps: its newest, this many at most (at a flapping server's event
/// an interval, a day at 100 ms made 860,000 and nearly 400 MB). Past it, the oldest half
/// is forgotten into an [`EarlierEvents`].
pub const EVENTS_KEPT: usize = 10_000;

/// What is left of the events a run no longer keeps: how many, and what the outputs still
/// read from them (the summary's restarts, the alerts firing).
#[derive(Debug, Default)]
pub struct EarlierEvents {
    pub count: usize,
    pub restarts: usize,
    /// The alerts `(rule, group)` firing after the newest event forgotten.
    pub firing: std::collections::BTreeSet<(String, Option<String>)>,
}

/// A run that has forgotten nothing.
pub static NO_EARLIER_EVENTS: EarlierEvents = EarlierEvents {
    count: 0,
    restarts: 0,
    firing: std::collections::BTreeSet::new(),
};

impl EarlierEvents {
    /// Forgets `events`, the oldest of those kept, keeping what the outputs read.
    pub fn forget(&mut self, events: impl Iterator<Item = (f64, Event)>) {
        for (_, event) in events {
            self.count += 1;
            self.restarts += usize::from(event.kind == EventKind::Restart);
            fire(&mut self.firing, &event);
        }
    }

    /// The alerts firing after these and then `kept`.
    pub fn firing_after(&self, kept: &[(f64, Event)]) -> usize {
        let mut firing = self.firing.clone();
        for (_, event) in kept {
            fire(&mut firing, event);
        }
        firing.len()
    }

    /// The restarts among these and `kept`.
    pub fn restarts_with(&self, kept: &[(f64, Event)]) -> usize {
        self.restarts + kept.iter().filter(|(_, e)| e.kind == EventKind::Restart).count()
    }
}

/// An alert event's change to the set of alerts firing.
fn fire(firing: &mut std::collections::BTreeSet<(String, Option<String>)>, event: &Event) {
    if let Some(a) = &event.alert {
        let key = (a.rule.clone(), a.group.clone());
        if event.kind == EventKind::AlertFiring {
            firing.insert(key);
        } else {
            firing.remove(&key);
        }
    }
}
