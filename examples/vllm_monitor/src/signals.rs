//! Two signals an operator acts on, judged on each interval's figures (over all servers):
//! a **stall**, requests running while no token is generated for [`STALL_INTERVALS`]
//! intervals in a row (a hung engine, a dead GPU), and an **imbalance** under data
//! parallelism, one `engine` generating under half the mean of the others (a slow rank,
//! a bad router). Each is an event when it starts and when it ends, and a status while it
//! lasts (`Load::Stalled`; `imbalanced_engine`).

use chrono::{DateTime, Utc};

use crate::figures::{Figures, Load};
use crate::target::{Event, EventKind};

/// Intervals without a generated token, requests running, before a stall is announced.
pub const STALL_INTERVALS: u32 = 3;
/// An engine under this fraction of the others' mean rate is out of balance.
pub const IMBALANCE_FRACTION: f64 = 0.5;

/// What the signals remember between intervals.
#[derive(Debug, Default)]
pub struct Signals {
    last_generated: Option<f64>,
    quiet_intervals: u32,
    stalled: bool,
    imbalanced: Option<String>,
}

impl Signals {
    /// Judges the interval's figures, marks them (`load`, `imbalanced_engine`) and returns
    /// the events that start or end here.
    pub fn judge(&mut self, f: &mut Figures, at: DateTime<Utc>) -> Vec<Event> {
        let mut events = Vec::new();
        let event = |kind, message: String| Event {
            kind,
            at,
            source: "all servers".into(),
            message,
        };
        let running = f.running.unwrap_or(0.0);
        let generated = f.generated_since_start;
        let quiet = running > 0.0 && generated.is_some() && generated == self.last_generated;
        self.quiet_intervals = if quiet { self.quiet_intervals + 1 } else { 0 };
        if generated.is_some() {
            self.last_generated = generated;
        }
        let stalled = self.quiet_intervals >= STALL_INTERVALS;
        if stalled && !self.stalled {
            let message = format!(
                "{running:.0} request(s) running, no token generated for {} intervals",
                self.quiet_intervals
            );
            events.push(event(EventKind::Stall, message));
        } else if !stalled && self.stalled {
            events.push(event(EventKind::Recovered, "tokens are generated again".into()));
        }
        self.stalled = stalled;
        if stalled {
            f.load = Load::Stalled;
        }
        f.imbalanced_engine = imbalanced(&f.engine_rates).map(|(engine, rate, others)| {
            if self.imbalanced.as_deref() != Some(engine) {
                let message = format!(
                    "engine {engine} generates {rate:.1} tok/s, under half the others' mean of {others:.1}"
                );
                events.push(event(EventKind::Imbalance, message));
            }
            engine.to_string()
        });
        if f.imbalanced_engine.is_none() && self.imbalanced.is_some() {
            events.push(event(
                EventKind::Recovered,
                "the engines are in balance again".into(),
            ));
        }
        self.imbalanced = f.imbalanced_engine.clone();
        events
    }
}

/// The slowest engine, its rate and the others' mean, when it is under
/// [`IMBALANCE_FRACTION`] of that mean (two engines or more).
fn imbalanced(rates: &[(String, f64)]) -> Option<(&str, f64, f64)> {
    if rates.len() < 2 {
        return None;
    }
    let (slowest, rate) = rates
        .iter()
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(e, r)| (e.as_str(), *r))?;
    let others = (rates.iter().map(|(_, r)| r).sum::<f64>() - rate) / (rates.len() - 1) as f64;
    (others > 0.0 && rate < IMBALANCE_FRACTION * others).then_some((slowest, rate, others))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(running: f64, generated: f64) -> Figures {
        Figures {
            running: Some(running),
            generated_since_start: Some(generated),
            ..Figures::default()
        }
    }

    #[test]
    fn a_stall_is_announced_after_three_quiet_intervals_and_its_end_too() {
        let mut signals = Signals::default();
        let at = DateTime::from_timestamp(0, 0).unwrap();
        let mut kinds = Vec::new();
        // Tokens flow, then stop with 40 requests running, then flow again.
        let run = [
            (40.0, 100.0),
            (40.0, 200.0),
            (40.0, 200.0),
            (40.0, 200.0),
            (40.0, 200.0),
            (40.0, 200.0),
            (40.0, 300.0),
        ];
        let mut loads = Vec::new();
        for (running, generated) in run {
            let mut f = figures(running, generated);
            kinds.extend(signals.judge(&mut f, at).into_iter().map(|e| e.kind));
            loads.push(f.load);
        }
        assert_eq!(kinds, [EventKind::Stall, EventKind::Recovered]);
        assert_eq!(
            loads.iter().filter(|l| **l == Load::Stalled).count(),
            2,
            "{loads:?}"
        );
        assert_eq!(loads[4], Load::Stalled);
    }

    #[test]
    fn an_idle_server_is_not_stalled() {
        let mut signals = Signals::default();
        let at = DateTime::from_timestamp(0, 0).unwrap();
        for _ in 0..10 {
            let mut f = figures(0.0, 500.0);
            assert!(signals.judge(&mut f, at).is_empty());
            assert_ne!(f.load, Load::Stalled);
        }
    }

    #[test]
    fn one_engine_under_half_the_others_is_flagged_once() {
        let mut signals = Signals::default();
        let at = DateTime::from_timestamp(0, 0).unwrap();
        let rates = |r: &[f64]| {
            r.iter()
                .enumerate()
                .map(|(i, r)| (i.to_string(), *r))
                .collect::<Vec<_>>()
        };
        let mut kinds = Vec::new();
        for engine_rates in [
            rates(&[800.0, 820.0, 790.0]),
            rates(&[800.0, 820.0, 200.0]),
            rates(&[800.0, 820.0, 210.0]),
            rates(&[800.0, 820.0, 700.0]),
        ] {
            let mut f = Figures {
                engine_rates,
                ..Figures::default()
            };
            kinds.extend(signals.judge(&mut f, at).into_iter().map(|e| (e.kind, e.message)));
        }
        assert_eq!(kinds.len(), 2, "{kinds:?}");
        assert_eq!(kinds[0].0, EventKind::Imbalance);
        assert!(
            kinds[0].1.starts_with("engine 2 generates 200.0 tok/s"),
            "{}",
            kinds[0].1
        );
        assert_eq!(kinds[1].0, EventKind::Recovered);
        // One engine alone is never out of balance.
        assert!(imbalanced(&rates(&[5.0])).is_none());
    }
}
