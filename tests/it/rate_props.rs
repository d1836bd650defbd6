//! Property tests of the rate engine: restarts do not change increases, window increases
//! between scrapes add up, a line's rate is its slope, EWMA of a constant rate is that
//! rate, and no sequence of operations panics.

use chrono::{DateTime, TimeDelta, Utc};
use proptest::prelude::*;

use promrate::promql::{Point, RangeFunctions, Semantics};
use promrate::{series::CounterSeries, WindowRule};

/// The window increase over `window` before `end`.
fn window_increase(s: &CounterSeries, window: TimeDelta, end: DateTime<Utc>) -> Option<f64> {
    Some(s.window_increase(&WindowRule::new(window), end).ok()?.increase)
}

fn at(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap()
}

/// Scrape times: a start and positive, uneven gaps (1 ms to 60 s).
fn times(n: usize) -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(1i64..60_000, n).prop_map(|gaps| {
        let mut t = 1_700_000_000_000;
        gaps.into_iter()
            .map(|g| {
                t += g;
                t
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn restarts_do_not_change_the_increase(
        (ts, increments, resets) in (2usize..40).prop_flat_map(|n| (
            times(n),
            prop::collection::vec(0u32..1_000, n),
            prop::collection::vec(any::<bool>(), n),
        )),
        window_s in 1i64..3_000,
    ) {
        // Counter A never restarts; counter B restarts (from 0) wherever `resets` says,
        // except at the first point. Both see the same increments.
        let mut a = CounterSeries::new(TimeDelta::days(1));
        let mut b = CounterSeries::new(TimeDelta::days(1));
        let (mut va, mut vb) = (0.0f64, 0.0f64);
        let mut created = 1;
        let mut points_a = Vec::new();
        let mut points_b = Vec::new();
        for (i, (&t, &inc)) in ts.iter().zip(&increments).enumerate() {
            va += f64::from(inc);
            let restart = i > 0 && resets[i] && f64::from(inc) < vb;
            if restart {
                vb = f64::from(inc);
                created += 1;
            } else {
                vb += f64::from(inc);
            }
            a.push_with_created(at(t), va, at(1)).unwrap();
            b.push_with_created(at(t), vb, at(created)).unwrap();
            points_a.push(Point::from_millis(t, va));
            points_b.push(Point::from_millis(t, vb));
        }
        let end = at(*ts.last().unwrap());
        let window = TimeDelta::seconds(window_s);
        prop_assert_eq!(window_increase(&a, window, end), window_increase(&b, window, end));
        // PromQL's extrapolation looks at the first value in the window (the zero-point
        // clamp), so compare windows that hold every point: the same first value in both.
        let covering = TimeDelta::milliseconds(ts.last().unwrap() - ts[0]) + window;
        for semantics in [Semantics::Prometheus3, Semantics::Prometheus2] {
            let range = RangeFunctions::new(covering).semantics(semantics);
            let (x, y) = (range.increase(&points_a, end), range.increase(&points_b, end));
            prop_assert_eq!(x.is_some(), y.is_some());
            if let (Some(x), Some(y)) = (x, y) {
                prop_assert!((x - y).abs() <= 1e-9 * x.abs().max(1.0), "{x} vs {y}");
            }
        }
    }

    /// Windows that meet at a scrape add up: the nearest point to the cut is the scrape at
    /// it, so the two windows share it.
    #[test]
    fn window_increases_between_scrapes_add_up(
        (ts, increments, restart_at) in (3usize..40).prop_flat_map(|n| (
            times(n),
            prop::collection::vec(0u32..10_000, n),
            0..n + n / 2,
        )),
        cut in 0.0f64..1.0,
    ) {
        // A counter that restarts once at most: two drops in a window without evidence
        // would make it erratic, with no increase at all (the next property).
        // From a billion: after the restart it never climbs back above where it was (which
        // would make the drop no restart).
        let mut s = CounterSeries::new(TimeDelta::days(1));
        let mut value = 1e9;
        for (i, (&t, &inc)) in ts.iter().zip(&increments).enumerate() {
            value = if i == restart_at { f64::from(inc) } else { value + f64::from(inc) };
            s.push(at(t), value).unwrap();
        }
        let (first, last) = (ts[0], *ts.last().unwrap());
        let middle = ts[((ts.len() - 1) as f64 * cut) as usize];
        let whole = window_increase(&s, TimeDelta::milliseconds(last - first), at(last));
        let left = window_increase(&s, TimeDelta::milliseconds(middle - first), at(middle)).unwrap_or(0.0);
        let right = window_increase(&s, TimeDelta::milliseconds(last - middle), at(last)).unwrap_or(0.0);
        prop_assert_eq!(whole, Some(left + right));
        prop_assert_eq!(whole, Some(s.total_increase()));
        // Integer counters give integer increases.
        prop_assert_eq!(whole.unwrap().fract(), 0.0);
    }

    #[test]
    fn a_counter_that_jumps_twice_in_a_window_has_no_increase(
        (ts, values) in (3usize..40).prop_flat_map(|n| (times(n), prop::collection::vec(0u32..10_000, n))),
    ) {
        let mut s = CounterSeries::new(TimeDelta::days(1));
        for (&t, &v) in ts.iter().zip(&values) {
            s.push(at(t), f64::from(v)).unwrap();
        }
        let (first, last) = (ts[0], *ts.last().unwrap());
        let drops = values.windows(2).filter(|w| w[1] < w[0]).count();
        // One drop, and the next value above the one before it: the drop was no restart.
        let came_back = drops == 1 && {
            let d = values.windows(2).position(|w| w[1] < w[0]).unwrap() + 1;
            values.get(d + 1).is_some_and(|&v| v > values[d - 1])
        };
        // Some points after a drop, a leap from below to above where it dropped from, over
        // 100 times faster than any rise since: the process before the drop, back.
        let mut dropped_from: Option<(usize, f64, f64)> = None;
        let mut leapt = false;
        for i in 1..values.len() {
            let (before_i, v) = (f64::from(values[i - 1]), f64::from(values[i]));
            let rate = (v - before_i) / (ts[i] - ts[i - 1]) as f64;
            if v < before_i {
                dropped_from = Some((i, before_i, 0.0));
            } else if let Some((d, from, fastest)) = dropped_from {
                if v <= from || d + 1 == i {
                    dropped_from = Some((d, from, fastest.max(rate)));
                } else {
                    dropped_from = None;
                    leapt |= before_i < from && rate > 100.0 * fastest;
                }
            }
        }
        let whole = s.window_increase(&WindowRule::new(TimeDelta::milliseconds(last - first)), at(last));
        match whole {
            Err(promrate::NoValue::ErraticCounter { start_went_back: true, .. }) => prop_assert!(leapt),
            Err(promrate::NoValue::ErraticCounter { drops: found, start_went_back: false }) => {
                prop_assert!(drops >= 2 || came_back);
                prop_assert!(found >= 2);
                prop_assert!(!leapt);
            }
            Ok(w) => {
                prop_assert!(drops < 2 && !came_back && !leapt, "{drops} drops, and an increase of {}", w.increase);
                prop_assert!(w.increase >= 0.0);
            }
            Err(other) => prop_assert!(false, "{other}"),
        }
    }

    #[test]
    fn a_linear_counter_rate_is_its_slope(
        slope in 0.001f64..10_000.0,
        interval_ms in 1_000i64..60_000,
        points in 5usize..200,
        windows in 2usize..5,
    ) {
        let start = 1_700_000_000_000i64;
        let mut s = CounterSeries::new(TimeDelta::days(1));
        let mut pts = Vec::new();
        for i in 0..points as i64 {
            let t = start + i * interval_ms;
            let v = slope * ((t - start) as f64 / 1000.0) + 1e6;
            s.push(at(t), v).unwrap();
            pts.push(Point::from_millis(t, v));
        }
        let end = start + (points as i64 - 1) * interval_ms;
        let window = TimeDelta::milliseconds(interval_ms * windows.min(points - 1) as i64);
        let rate = RangeFunctions::new(window).rate(&pts, at(end)).unwrap();
        prop_assert!((rate - slope).abs() <= 1e-6 * slope, "rate {rate} vs slope {slope}");
        let plain = s.window_increase(&WindowRule::new(window), at(end)).unwrap().rate();
        prop_assert!((plain - slope).abs() <= 1e-6 * slope, "window rate {plain} vs slope {slope}");
    }

    #[test]
    fn ewma_of_a_constant_rate_is_that_rate(rate in 0.0f64..1e6, ts in times(50)) {
        let mut s = CounterSeries::new(TimeDelta::days(1));
        for &t in &ts {
            s.push(at(t), rate * ((t - ts[0]) as f64 / 1000.0)).unwrap();
        }
        let ewma = s.ewma_rate().unwrap();
        prop_assert!((ewma - rate).abs() <= 1e-6 * rate.max(1.0), "{ewma} vs {rate}");
    }

    #[test]
    fn no_operation_sequence_panics(ops in prop::collection::vec((0u8..8, -5_000i64..60_000, any::<f64>(), 0i64..100_000), 0..60)) {
        let mut s = CounterSeries::new(TimeDelta::seconds(120));
        s.max_points(16);
        let mut t = 1_000_000i64;
        for (op, dt, value, extra) in ops {
            t += dt;
            let now = at(t);
            let window = TimeDelta::milliseconds(extra);
            let range = RangeFunctions::new(window);
            match op {
                0 => { let _ = s.push(now, value); }
                1 => { let _ = s.push_with_created(now, value.abs(), at(t - extra)); }
                2 => { let _ = s.amend_created(at(t - extra)); }
                3 => { let _ = (s.rate(&range, now), s.increase(&range, now)); }
                4 => { let _ = (s.irate(&range, now), s.ewma_rate()); }
                5 => { let _ = s.window_increase(&WindowRule::new(window).gap(TimeDelta::milliseconds(extra / 2)), now); }
                6 => { let _ = (range.anchored().increase(s.points(), now), range.smoothed().rate(s.points(), now)); }
                _ => { let _ = (range.resets(s.points(), now), range.changes(s.points(), now), range.idelta(s.points(), now)); }
            }
            prop_assert!(s.len() <= 16);
            prop_assert!(s.points().windows(2).all(|w| w[0].timestamp_ms < w[1].timestamp_ms));
        }
    }
}
