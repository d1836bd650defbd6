//! Pages of two targets whose processes restart, return, run side by side behind one URL,
//! keep their counters across a restart or lose their start time: every rule that reads a
//! process start time or a `_created` time at once (`tracker/starts.rs`, the counter's
//! per-process bookkeeping). No panic; a counter's count since tracking began is never
//! negative or infinite, and goes down from one page to the next only where a start time
//! proved to be no process's (its earlier restart taken back); a window increase is never
//! negative.
#![no_main]

use std::collections::HashMap;

use chrono::{DateTime, TimeDelta};
use libfuzzer_sys::fuzz_target;
use promrate::{series::ResetCause, Estimator, Query, Selector, Tracker};

/// Start times a target's page may give (seconds; `None`: no start gauge on the page): few,
/// so that processes come back, and 0, which is unknown.
const STARTS: [Option<f64>; 6] = [
    None,
    Some(0.0),
    Some(1_000.0),
    Some(2_000.0),
    Some(2_000.5),
    Some(3_000.0),
];

fuzz_target!(|bytes: &[u8]| {
    let Some((&setup, mut data)) = bytes.split_first() else {
        return;
    };
    let tokens = Selector::parse("tokens_total").expect("a valid selector");
    let mut tracker = Tracker::new([tokens.clone()]);
    tracker
        .retention(TimeDelta::seconds(120))
        .ewma_time_constant(TimeDelta::seconds(i64::from(setup % 4) * 20 + 5))
        .stale_after(u32::from(setup >> 4 & 3) + 1);
    if setup & 4 != 0 {
        tracker.start_time_skew(Some(TimeDelta::seconds(60)));
    }
    let window = TimeDelta::seconds(i64::from(setup >> 6) * 15 + 15);
    let mut values = [0.0f64; 2];
    // By series: its count since tracking began, and the sum of the values it was read at
    // (no point counts more than its value: a restart counts it from zero).
    let mut totals: HashMap<String, (f64, f64)> = HashMap::new();
    let mut t_s: i64 = 3_600;
    while let Some((step, rest)) = data.split_first_chunk::<5>() {
        data = rest;
        let [dt, a, b, rise_a, rise_b] = *step;
        t_s += i64::from(dt % 31) + 1;
        let mut page = String::new();
        let mut on_page = [None; 2];
        for (i, (&choice, &rise)) in [a, b].iter().zip([rise_a, rise_b].iter()).enumerate() {
            if choice & 0x80 != 0 {
                // The target is not on this page.
                continue;
            }
            let start = STARTS[usize::from(choice % 6)];
            values[i] = match choice >> 3 & 3 {
                // Down to a restart's first count, or a leap far past the old one.
                0 => f64::from(rise),
                1 => values[i] + f64::from(rise) * 1_000.0,
                _ => values[i] + f64::from(rise),
            };
            if let Some(start) = start {
                page.push_str(&format!(
                    "process_start_time_seconds{{instance=\"{i}\"}} {start}\n"
                ));
            }
            page.push_str(&format!("tokens_total{{instance=\"{i}\"}} {}\n", values[i]));
            on_page[i] = Some(values[i]);
            if choice & 0x40 != 0 {
                let created = start.unwrap_or(t_s as f64 - f64::from(rise % 8));
                page.push_str(&format!("tokens_created{{instance=\"{i}\"}} {created}\n"));
            }
        }
        let Some(now) = DateTime::from_timestamp(1_700_000_000 + t_s, 0) else {
            return;
        };
        let Ok(report) = tracker.ingest(&page, now) else {
            continue;
        };
        // A start time that proved to be no process's (it moves while the counters go
        // on) takes back the restart it made on an earlier page: the count is corrected.
        let revised: Vec<_> = report
            .process_restarts
            .iter()
            .filter(|r| r.cause == ResetCause::StartTimeMoving)
            .map(|r| r.target.clone())
            .collect();
        // Series let go as stale start again from nothing when they return.
        let mut seen = HashMap::new();
        for series in tracker.series() {
            let Some(counter) = series.counter() else {
                continue;
            };
            let total = counter.total_increase();
            assert!(total >= 0.0 && total.is_finite(), "{total} on {page:?}");
            let key = format!("{}{:?}", series.name(), series.labels().collect::<Vec<_>>());
            let (before, read) = totals.get(&key).copied().unwrap_or((0.0, 0.0));
            let instance = series.label("instance").and_then(|i| i.parse::<usize>().ok());
            let read = read + instance.and_then(|i| on_page[i]).unwrap_or(0.0);
            assert!(
                total <= read * (1.0 + 1e-12),
                "{total} counted of {read} read, on {page:?}"
            );
            let target = series
                .labels()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<Vec<_>>();
            seen.insert(key, (total, read));
            // A page may book its newest interval again (a restart its start time showed);
            // its sum then differs from the first booking by rounding only.
            assert!(
                total >= before - before.abs() * 1e-12 || revised.contains(&target),
                "the count went down from {before} to {total} on {page:?}"
            );
        }
        totals = seen;
        let by_instance = Query::new(&tokens, Estimator::WindowIncrease)
            .window(window)
            .at(now)
            .by(["instance"]);
        if let Ok(answer) = tracker.evaluate(&by_instance) {
            for group in &answer.groups {
                if let Ok(increase) = group.value {
                    assert!(increase >= 0.0, "a window increase of {increase} on {page:?}");
                }
            }
        }
    }
});
