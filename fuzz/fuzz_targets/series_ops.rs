//! Arbitrary push / query sequences on a counter series, a tracker and the PromQL range
//! functions: no panic, and the invariants that must always hold do.
#![no_main]

use chrono::{DateTime, TimeDelta};
use libfuzzer_sys::fuzz_target;
use promrate::promql::{RangeFunctions, Semantics};
use promrate::{series::CounterSeries, Estimator, Query, Selector, Tracker, WindowRule};

fn take<const N: usize>(data: &mut &[u8]) -> Option<[u8; N]> {
    let (head, rest) = data.split_first_chunk::<N>()?;
    *data = rest;
    Some(*head)
}

fuzz_target!(|bytes: &[u8]| {
    let mut data = bytes;
    let mut series = CounterSeries::new(TimeDelta::seconds(300));
    series.ewma_restart_after(TimeDelta::seconds(20));
    series.max_points(64);
    let mut tracker = Tracker::new([]);
    tracker.stale_after(2);
    let x_total = Selector::parse("x_total").expect("a valid selector");
    let x = Selector::parse("x").expect("a valid selector");
    let mut t_ms: i64 = 1_700_000_000_000;
    while let Some([op, a, b, c]) = take::<4>(&mut data) {
        let value_bits = take::<8>(&mut data).map_or(0, u64::from_le_bytes);
        let value = match op % 3 {
            0 => f64::from_bits(value_bits),
            _ => f64::from(u32::from_le_bytes([a, b, c, 0])),
        };
        t_ms += i64::from(i16::from_le_bytes([a, b])) * 37;
        let Some(now) = DateTime::from_timestamp_millis(t_ms) else {
            return;
        };
        let window = TimeDelta::milliseconds(i64::from(c) * 1_000 + i64::from(b));
        let semantics = if a & 1 == 0 {
            Semantics::Prometheus3
        } else {
            Semantics::Prometheus2
        };
        let range = RangeFunctions::new(window)
            .semantics(semantics)
            .lookback(TimeDelta::seconds(i64::from(a)));
        match op % 10 {
            0 | 1 => {
                let before = series.len();
                if series.push(now, value).is_err() {
                    assert_eq!(series.len(), before, "a refused push changes nothing");
                }
            }
            2 => {
                let _ =
                    series.push_with_created(now, value.abs(), now - TimeDelta::milliseconds(i64::from(c)));
            }
            3 => {
                let _ = series.amend_created(now - TimeDelta::milliseconds(i64::from(b)));
            }
            4 => {
                let _ = (
                    series.rate(&range, now),
                    series.increase(&range, now),
                    series.irate(&range, now),
                );
            }
            5 => {
                if let Ok(w) = series.window_increase(&WindowRule::new(window), now) {
                    assert!(
                        w.increase >= 0.0 || w.increase.is_nan(),
                        "the window increase of a counter is never negative: {w:?}"
                    );
                }
                let _ = series.ewma_rate();
                // The window a monitor states: within its reach, never negative.
                let slack = TimeDelta::milliseconds(i64::from(a) * 100);
                let rule = WindowRule::new(window)
                    .slack(slack)
                    .gap(TimeDelta::milliseconds(i64::from(b) * 50 + 1));
                if let Ok(w) = series.window_increase(&rule, now) {
                    assert!(w.start < w.end && w.end <= now, "{w:?} at {now}");
                    assert!(w.start >= now - window - slack, "{w:?} reaches past its slack");
                    assert!(w.increase >= 0.0 || w.increase.is_nan(), "{w:?}");
                }
            }
            6 => {
                let p = series.points();
                let _ = (
                    range.anchored().increase(p, now),
                    range.anchored().resets(p, now),
                    range.anchored().changes(p, now),
                );
                let _ = (range.smoothed().rate(p, now), range.smoothed().delta(p, now));
            }
            7 => {
                let p = series.points();
                let _ = (
                    range.delta(p, now),
                    range.idelta(p, now),
                    range.resets(p, now),
                    range.changes(p, now),
                );
                let starts: Vec<_> = series.created_times().collect();
                let _ = range.with_start_times(&starts).rate(p, now);
            }
            8 if b & 1 == 1 => {
                // A federation's page: untyped families, sample timestamps that may repeat or
                // go back, histogram families read by name when asked to.
                tracker.infer_counters(b & 2 == 2);
                let ts = t_ms - i64::from(c % 8) * 500;
                let page = format!(
                    "# TYPE x_total untyped\nx_total{{k=\"{}\"}} {value} {ts}\n\
                     # TYPE h_count untyped\nh_count {value} {ts}\n\
                     # TYPE h_bucket untyped\nh_bucket{{le=\"+Inf\"}} {value} {ts}\n",
                    a % 3
                );
                if let Ok(report) = tracker.ingest(&page, now) {
                    let seen = report.samples + report.repeated + report.refused + report.bad_lines;
                    assert!(seen <= 3, "{report:?}");
                    assert_eq!(report.refused > 0, report.first_refused.is_some());
                }
            }
            _ => {
                let page = format!(
                    "# TYPE x counter\nx_total{{k=\"{}\"}} {}\nx_created{{k=\"{}\"}} {}\n",
                    a % 3,
                    value,
                    a % 3,
                    c
                );
                let _ = tracker.ingest(&page, now);
                for estimator in [
                    Estimator::Rate,
                    Estimator::WindowRate,
                    Estimator::Irate,
                    Estimator::Ewma,
                    Estimator::TotalIncrease,
                    Estimator::Last,
                    Estimator::Average,
                ] {
                    let query = Query::new(&x_total, estimator).by(["k"]).at(now);
                    let running = matches!(
                        estimator,
                        Estimator::Ewma | Estimator::TotalIncrease | Estimator::Last
                    );
                    let query = if running { query } else { query.window(window) };
                    // Refused queries are fine (a window past the retention); answers are
                    // a value or a reason, never a panic.
                    if let Ok(answer) = tracker.evaluate(&query) {
                        assert!(answer.groups.iter().all(|g| g.value.is_ok() == (g.series > 0)));
                    }
                }
                let over_window = Query::new(&x, Estimator::WindowIncrease).window(window).at(now);
                let _ = tracker.evaluate(&over_window.clone().quantile(0.5));
                let _ = tracker.evaluate(&over_window.clone().mean());
                let _ = tracker.evaluate(&over_window.buckets());
                let _ = tracker.evaluate(&Query::new(&x, Estimator::Last).quantile(0.5));
            }
        }
        assert!(series.len() <= 64);
    }
});
