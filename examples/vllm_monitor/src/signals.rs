//! Two signals an operator acts on, judged on each interval's figures (over all servers):
//! a **stall**, requests running while no token is generated for [`STALL_INTERVALS`]
//! intervals in a row (a hung engine, a dead GPU; not judged where tokens are counted when
//! a request ends), and an **imbalance** under data
//! parallelism, one `engine` of a server generating under half the mean of that server's
//! others (a slow rank, a bad router). Each is an event when it starts and when it ends, and a
//! status while it lasts: the snapshot's [`Verdict`], beside the figures it was judged on.

use chrono::{DateTime, Utc};

use crate::events::{Event, EventKind};
use crate::figures::{EngineRate, Figures, Verdict};

/// Intervals without a generated token, requests running, before a stall is announced.
pub const STALL_INTERVALS: u32 = 3;
/// An engine under this fraction of the others' mean rate is out of balance.
pub const IMBALANCE_FRACTION: f64 = 0.5;

/// What the signals remember between intervals.
#[derive(Debug, Default)]
pub struct Signals {
    last_generated: Option<f64>,
    quiet_intervals: u32,
    imbalanced: Option<String>,
}

impl Signals {
    /// Judges the interval's figures: the verdict, and the events that start or end here. An interval without a new page (`fresh` false: a
    /// slow scrape) shows the previous figures and moves no judgement: a stall is counted
    /// in intervals whose pages arrived and still showed no token.
    pub fn judge(&mut self, f: &Figures, at: DateTime<Utc>, fresh: bool) -> (Verdict, Vec<Event>) {
        let mut events = Vec::new();
        let event = |kind, message: String| Event {
            kind,
            at,
            source: "all servers".into(),
            message,
            alert: None,
        };
        let running = f.in_flight.running.unwrap_or(0.0);
        let generated = f.since_start.generated;
        // Where tokens are counted when a request ends, a request longer than the intervals
        // leaves the count still: no stall is judged there.
        let was_stalled = self.quiet_intervals >= STALL_INTERVALS;
        if !fresh {
            let verdict = Verdict {
                stalled: was_stalled,
                imbalanced_engine: self.imbalanced.clone(),
            };
            return (verdict, events);
        }
        // A generation count that is not rated (erratic: two processes behind one URL)
        // counts nothing while it lasts: still, but that is no stall, nor its end.
        if f.generation.window.is_some() {
            let quiet = !f.tokens_at_request_end
                && running > 0.0
                && generated.is_some()
                && generated == self.last_generated;
            self.quiet_intervals = if quiet { self.quiet_intervals + 1 } else { 0 };
            if generated.is_some() {
                self.last_generated = generated;
            }
        }
        let stalled = self.quiet_intervals >= STALL_INTERVALS;
        if stalled && !was_stalled {
            let message = format!(
                "{running:.0} request(s) running, no token generated for {} intervals",
                self.quiet_intervals
            );
            events.push(event(EventKind::Stall, message));
        } else if !stalled && was_stalled {
            events.push(event(EventKind::Recovered, "tokens are generated again".into()));
        }
        let imbalanced_engine = imbalanced(&f.engine_rates).map(|(slow, others)| {
            let engine = slow.name(&f.engine_rates);
            if self.imbalanced.as_ref() != Some(&engine) {
                let message = format!(
                    "engine {engine} generates {:.1} tok/s, under half the mean of its server's others, {others:.1}",
                    slow.rate
                );
                events.push(event(EventKind::Imbalance, message));
            }
            engine
        });
        if imbalanced_engine.is_none() && self.imbalanced.is_some() {
            events.push(event(
                EventKind::Recovered,
                "the engines are in balance again".into(),
            ));
        }
        self.imbalanced.clone_from(&imbalanced_engine);
        let verdict = Verdict {
            stalled,
            imbalanced_engine,
        };
        (verdict, events)
    }
}

/// The first server's slowest engine that is under [`IMBALANCE_FRACTION`] of the mean
/// of that server's other engines (two engines or more), with that mean. `rates` holds
/// each server's engines together (as `engine_rates` sorts them).
fn imbalanced(rates: &[EngineRate]) -> Option<(&EngineRate, f64)> {
    rates.chunk_by(|a, b| a.server == b.server).find_map(|server| {
        if server.len() < 2 {
            return None;
        }
        let slowest = server.iter().min_by(|a, b| a.rate.total_cmp(&b.rate))?;
        let others = (server.iter().map(|e| e.rate).sum::<f64>() - slowest.rate) / (server.len() - 1) as f64;
        (others > 0.0 && slowest.rate < IMBALANCE_FRACTION * others).then_some((slowest, others))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::Load;

    fn figures(running: f64, generated: f64) -> Figures {
        Figures {
            in_flight: crate::figures::InFlight {
                running: Some(running),
                ..Default::default()
            },
            since_start: crate::figures::SinceStart {
                generated: Some(generated),
                ..Default::default()
            },
            generation: crate::figures::Rate {
                window: Some(0.0),
                ..Default::default()
            },
            ..Figures::default()
        }
    }

    #[test]
    fn a_count_that_is_not_rated_is_no_stall() {
        let mut signals = Signals::default();
        let at = DateTime::from_timestamp(0, 0).unwrap();
        // Two replicas answering in turn: the count is erratic, counts nothing, and has
        // no window rate, while requests run.
        for _ in 0..10 {
            let mut f = figures(40.0, 1_200.0);
            f.generation.window = None;
            let (verdict, events) = signals.judge(&f, at, true);
            assert!(events.is_empty(), "{events:?}");
            assert!(!verdict.stalled);
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
            let f = figures(running, generated);
            let (verdict, events) = signals.judge(&f, at, true);
            kinds.extend(events.into_iter().map(|e| e.kind));
            loads.push(verdict.load(&f));
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
    fn intervals_without_a_new_page_judge_nothing() {
        let mut signals = Signals::default();
        let at = DateTime::from_timestamp(0, 0).unwrap();
        // A scrape slower than four intervals: the same figures four times, then a page
        // with new tokens. No stall.
        let mut kinds = Vec::new();
        for (generated, fresh) in [
            (100.0, true),
            (100.0, false),
            (100.0, false),
            (100.0, false),
            (100.0, false),
            (900.0, true),
        ] {
            let f = figures(170.0, generated);
            let (verdict, events) = signals.judge(&f, at, fresh);
            kinds.extend(events);
            assert!(!verdict.stalled);
        }
        assert!(kinds.is_empty(), "{kinds:?}");
    }

    #[test]
    fn an_idle_server_is_not_stalled() {
        let mut signals = Signals::default();
        let at = DateTime::from_timestamp(0, 0).unwrap();
        for _ in 0..10 {
            let (verdict, events) = signals.judge(&figures(0.0, 500.0), at, true);
            assert!(events.is_empty());
            assert!(!verdict.stalled);
        }
    }

    #[test]
    fn no_stall_where_tokens_are_counted_when_a_request_ends() {
        let mut signals = Signals::default();
        let at = DateTime::from_timestamp(0, 0).unwrap();
        // A long request on llama.cpp: running, the count still for ten intervals.
        for _ in 0..10 {
            let f = Figures {
                tokens_at_request_end: true,
                ..figures(1.0, 500.0)
            };
            let (verdict, events) = signals.judge(&f, at, true);
            assert!(events.is_empty());
            assert!(!verdict.stalled);
        }
    }

    #[test]
    fn one_engine_under_half_the_others_is_flagged_once() {
        let mut signals = Signals::default();
        let at = DateTime::from_timestamp(0, 0).unwrap();
        let rates = |r: &[f64]| {
            r.iter()
                .enumerate()
                .map(|(i, r)| EngineRate {
                    server: "http://a:8000/metrics".into(),
                    engine: i.to_string(),
                    rate: *r,
                })
                .collect::<Vec<_>>()
        };
        let mut kinds = Vec::new();
        for engine_rates in [
            rates(&[800.0, 820.0, 790.0]),
            rates(&[800.0, 820.0, 200.0]),
            rates(&[800.0, 820.0, 210.0]),
            rates(&[800.0, 820.0, 700.0]),
        ] {
            let f = Figures {
                engine_rates,
                ..Figures::default()
            };
            let (verdict, events) = signals.judge(&f, at, true);
            assert_eq!(
                verdict.imbalanced_engine.is_some(),
                f.engine_rates[2].rate < 400.0
            );
            kinds.extend(events.into_iter().map(|e| (e.kind, e.message)));
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
        // Engines are compared within their server: a server of one engine beside a
        // server of two, and two servers whose engines "0" differ, are in balance; a slow
        // engine of the second server is found and named with its server.
        let on = |server: &str, engine: &str, rate: f64| EngineRate {
            server: server.into(),
            engine: engine.into(),
            rate,
        };
        let fleet = [on("a", "0", 800.0), on("a", "1", 790.0), on("b", "0", 150.0)];
        assert!(imbalanced(&fleet).is_none());
        let fleet = [
            on("a", "0", 800.0),
            on("a", "1", 790.0),
            on("b", "0", 810.0),
            on("b", "1", 100.0),
        ];
        let (slow, others) = imbalanced(&fleet).unwrap();
        assert_eq!((slow.name(&fleet).as_str(), others), ("b engine 1", 810.0));
    }
}
