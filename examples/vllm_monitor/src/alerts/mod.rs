//! Alert rules (`--alert 'gen_tok_s < 1000 for 30s'`), judged on each interval's snapshot
//! as the signals are: a rule's figure is read from the interval's `--json` row (and from
//! each group's, with `--by`), so that a rule sees exactly what the JSON shows, the fields
//! a later release adds included.
//!
//! Time is the data's: a rule whose condition holds at interval *k* is pending from that
//! interval's evaluation time on the run's schedule (virtual in a replay) and fires at the
//! first interval at least its `for` later, so a replay fires exactly as the live run did.
//! It resolves at the first interval where its figure is known and the condition does not
//! hold. An unknown figure (null: not shown by these servers, no window yet, or no new page
//! this interval) neither fires nor resolves a rule, and leaves a pending one pending.

mod catalogue;
mod rule;

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::Value;

pub use catalogue::{long_help, Figure, Reading, Unit, FIGURES};
pub use rule::{parse_rule, Comparison, Rule, RuleError};

pub use crate::events::AlertFacts;
use crate::events::{Event, EventKind};
use crate::figures::Verdict;
use crate::snapshot::Snapshot;
use crate::target::{ServerRow, Status};

/// A rule that fired during the run, on the totals or on one group: for the summary and
/// the exit status.
#[derive(Debug, Clone, PartialEq)]
pub struct Fired {
    pub rule: String,
    pub group: Option<String>,
    /// How many times it fired.
    pub times: u32,
    /// Seconds it was firing in all, up to the last interval.
    pub firing_s: f64,
    /// Whether it was still firing at the last interval.
    pub at_end: bool,
}

/// Where one rule stands on one scope.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    Quiet,
    /// The condition has held since this evaluation time.
    Pending(DateTime<Utc>),
    /// Firing since this evaluation time.
    Firing(DateTime<Utc>),
}

/// One rule on one scope over the run.
#[derive(Debug, Clone)]
struct Track {
    phase: Phase,
    times: u32,
    /// Seconds fired in periods that have ended.
    fired_s: f64,
}

impl Default for Track {
    fn default() -> Self {
        Track {
            phase: Phase::Quiet,
            times: 0,
            fired_s: 0.0,
        }
    }
}

/// A change of a rule on a scope.
enum Change {
    Fired { held_s: f64 },
    Resolved { fired_s: f64 },
}

impl Track {
    /// The rule's condition at `at`: `None` when the figure is not known.
    fn step(&mut self, holds: Option<bool>, at: DateTime<Utc>, hold: chrono::TimeDelta) -> Option<Change> {
        let holds = holds?;
        let seconds = |since: DateTime<Utc>| (at - since).as_seconds_f64();
        match (self.phase, holds) {
            (Phase::Quiet, false) | (Phase::Firing(_), true) => None,
            (Phase::Pending(_), false) => {
                self.phase = Phase::Quiet;
                None
            }
            (Phase::Quiet, true) | (Phase::Pending(_), true) => {
                let since = match self.phase {
                    Phase::Pending(since) => since,
                    _ => at,
                };
                if at - since >= hold {
                    self.phase = Phase::Firing(at);
                    self.times += 1;
                    Some(Change::Fired {
                        held_s: seconds(since),
                    })
                } else {
                    self.phase = Phase::Pending(since);
                    None
                }
            }
            (Phase::Firing(since), false) => {
                self.phase = Phase::Quiet;
                self.fired_s += seconds(since);
                Some(Change::Resolved {
                    fired_s: seconds(since),
                })
            }
        }
    }
}

/// The run's rules and where each stands, on the totals (`None`) and on each group.
#[derive(Debug, Default)]
pub struct Alerts {
    rules: Vec<Rule>,
    tracks: Vec<BTreeMap<Option<String>, Track>>,
    unknown_said: Vec<bool>,
    last_at: Option<DateTime<Utc>>,
}

/// A URL whose newest scrape failed (one that was never scraped has not failed yet).
fn failed(server: &ServerRow) -> bool {
    !server.status.is_ok() && !matches!(server.status, Status::Waiting)
}

/// A value as a message shows it, in its figure's unit.
pub fn value_text(unit: Unit, value: f64) -> String {
    match unit {
        Unit::Seconds => crate::text::ms(Some(value)),
        Unit::Fraction => format!("{:.1}%", value * 100.0),
        Unit::Percent => format!("{value:.0}%"),
        Unit::Count | Unit::Flag if value.fract() == 0.0 => format!("{value:.0}"),
        Unit::Other(unit) => format!("{value:.3} {unit}"),
        _ => format!("{value:.1}"),
    }
}

impl Alerts {
    pub fn new(rules: Vec<Rule>) -> Alerts {
        Alerts {
            tracks: vec![BTreeMap::new(); rules.len()],
            unknown_said: vec![false; rules.len()],
            rules,
            last_at: None,
        }
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Judges every rule on the interval `s`; `fresh` is false for an interval that read
    /// no new page (its figures repeat the previous interval's: nothing is judged on them
    /// but the scrapes). Returns the events and the notes for people (a figure these
    /// servers do not show, said once per rule).
    pub fn judge(&mut self, s: &Snapshot, fresh: bool) -> (Vec<Event>, Vec<String>) {
        let at = s.window.computed_at;
        self.last_at = Some(at);
        let (mut events, mut notes) = (Vec::new(), Vec::new());
        if self.rules.is_empty() {
            return (events, notes);
        }
        let reads_rows = self
            .rules
            .iter()
            .any(|r| matches!(r.figure.reading, Reading::Row(_)));
        let scopes = scopes(s, reads_rows);
        let has_window = s.figures.window.span.is_some();
        for (i, rule) in self.rules.iter().enumerate() {
            let hold = chrono::TimeDelta::from_std(rule.hold).unwrap_or(chrono::TimeDelta::MAX);
            for (group, row, failed_scrapes) in &scopes {
                let value = match rule.figure.reading {
                    Reading::Row(_) => row
                        .as_ref()
                        .filter(|_| fresh)
                        .and_then(|r| rule.figure.value_in(r)),
                    Reading::FailedScrapes => *failed_scrapes,
                };
                if value.is_none() && fresh && has_window && !self.unknown_said[i] {
                    self.unknown_said[i] = true;
                    let whose = group.as_deref().unwrap_or("the totals");
                    notes.push(format!(
                        "alert {rule}: {} is not known for {whose} (not shown by these servers, or not yet); \
                         the rule neither fires nor resolves while it is not",
                        rule.figure.name
                    ));
                }
                let track = self.tracks[i].entry(group.clone()).or_default();
                let holds = value.map(|v| rule.comparison.holds(v, rule.threshold));
                let Some(change) = track.step(holds, at, hold) else {
                    continue;
                };
                let facts = AlertFacts {
                    rule: rule.to_string(),
                    figure: rule.figure.name,
                    value: value.unwrap_or(f64::NAN),
                    threshold: rule.threshold,
                    group: group.clone(),
                    held_s: 0.0,
                    elapsed_s: s.elapsed,
                };
                events.push(change_event(rule, change, facts, at));
            }
        }
        (events, notes)
    }

    /// The rules that fired during the run, rule by rule, the totals before the groups.
    pub fn fired(&self) -> Vec<Fired> {
        let mut fired = Vec::new();
        for (rule, tracks) in self.rules.iter().zip(&self.tracks) {
            for (group, track) in tracks.iter().filter(|(_, t)| t.times > 0) {
                let open = match (track.phase, self.last_at) {
                    (Phase::Firing(since), Some(end)) => Some((end - since).as_seconds_f64()),
                    _ => None,
                };
                fired.push(Fired {
                    rule: rule.to_string(),
                    group: group.clone(),
                    times: track.times,
                    firing_s: track.fired_s + open.unwrap_or(0.0),
                    at_end: open.is_some(),
                });
            }
        }
        fired
    }
}

/// The scopes a rule is judged on: the totals, then each group; each with its row as
/// `--json` writes it (when some rule reads one) and its count of failed scrapes.
fn scopes(s: &Snapshot, reads_rows: bool) -> Vec<(Option<String>, Option<Value>, Option<f64>)> {
    // The signals judge the totals only: a group's row has no verdict.
    let no_verdict = Verdict::default();
    let row = |f, verdict| reads_rows.then(|| crate::figures::row::figures(f, verdict));
    let mut scopes = vec![(
        None,
        row(&s.figures, &s.verdict),
        Some(s.servers.iter().filter(|t| failed(t)).count() as f64),
    )];
    if let Some((label, groups)) = &s.groups {
        for (value, figures) in groups {
            let failed_here = (label == "url").then(|| {
                let failed = s.servers.iter().any(|t| t.url == *value && failed(t));
                f64::from(u8::from(failed))
            });
            scopes.push((
                Some(format!("{label}={value}")),
                row(figures, &no_verdict),
                failed_here,
            ));
        }
    }
    scopes
}

/// The event of a rule's `change` on a scope, `facts` completed with how long it held.
fn change_event(rule: &Rule, change: Change, mut facts: AlertFacts, at: DateTime<Utc>) -> Event {
    let shown = value_text(rule.figure.unit, facts.value);
    let (kind, held_s, message) = match change {
        Change::Fired { held_s } => (
            EventKind::AlertFiring,
            held_s,
            format!("{rule}: {} is {shown}", rule.figure.name),
        ),
        Change::Resolved { fired_s } => (
            EventKind::AlertResolved,
            fired_s,
            format!(
                "{rule} no longer holds: {} is {shown}, after {} firing",
                rule.figure.name,
                crate::text::duration(Some(fired_s))
            ),
        ),
    };
    facts.held_s = held_s;
    Event {
        kind,
        at,
        source: facts.group.clone().unwrap_or_else(|| "total".into()),
        message,
        alert: Some(Box::new(facts)),
    }
}

#[cfg(test)]
mod tests;
