use super::*;

const STALE: f64 = f64::from_bits(STALE_NAN_BITS);

/// Points out of order (or with a repeated timestamp) give no answer from any form,
/// where a binary search over them would give a plausible number.
#[test]
fn points_out_of_order_answer_none_everywhere() {
    let sorted: Vec<Point> = (0..6)
        .map(|i| Point::from_millis(i * 10_000, i as f64 * 7.0))
        .collect();
    let at = DateTime::from_timestamp_millis(50_000).unwrap();
    let range = RangeFunctions::new(TimeDelta::seconds(60));
    assert!(range.rate(&sorted, at).is_some());
    let mut swapped = sorted.clone();
    swapped.swap(1, 4);
    let mut repeated = sorted.clone();
    repeated[3].timestamp_ms = repeated[2].timestamp_ms;
    for (points, index) in [(&swapped, 2), (&repeated, 3)] {
        assert_eq!(range.check(points, at), Err(NoValue::OutOfOrder { index }));
        let starts = vec![DateTime::from_timestamp(0, 0); points.len()];
        let answers = [
            range.rate(points, at),
            range.increase(points, at),
            range.delta(points, at),
            range.irate(points, at),
            range.idelta(points, at),
            range.resets(points, at),
            range.changes(points, at),
            range.anchored().increase(points, at),
            range.anchored().resets(points, at),
            range.smoothed().rate(points, at),
            range.with_start_times(&starts).rate(points, at),
            range.with_start_times(&starts).irate(points, at),
        ];
        assert_eq!(answers, [None; 12], "{points:?}");
    }
    assert_eq!(range.check(&sorted, at), Ok(6)); // (-10 s, 50 s] holds 0 s to 50 s
}

/// Every function, every modifier: a staleness marker anywhere is as if it were absent
/// (Prometheus drops them from range selections before any function runs).
#[test]
fn staleness_markers_are_invisible_to_every_function() {
    let clean: Vec<Point> = [
        (0, 10.0),
        (15, 40.0),
        (30, 5.0),
        (45, 20.0),
        (60, 20.0),
        (75, 50.0),
    ]
    .iter()
    .map(|&(s, v)| Point::from_millis(s * 1000, v))
    .collect();
    let starts: Vec<Option<DateTime<Utc>>> = [0, 0, 25_000, 25_000, 25_000, 25_000]
        .map(DateTime::from_timestamp_millis)
        .to_vec();
    for stale_at in 0..=clean.len() {
        let mut points = clean.clone();
        let mut with_starts = starts.clone();
        let t = if stale_at == 0 {
            -500
        } else {
            clean[stale_at - 1].timestamp_ms + 500
        };
        points.insert(stale_at, Point::from_millis(t, STALE));
        with_starts.insert(stale_at, None);
        for window_s in [10, 20, 30, 45, 60, 90] {
            for at_s in [30, 45, 60, 75, 80, 120] {
                let at = DateTime::from_timestamp(at_s, 0).unwrap();
                for range in [
                    RangeFunctions::new(TimeDelta::seconds(window_s)),
                    RangeFunctions::new(TimeDelta::seconds(window_s)).semantics(Semantics::Prometheus2),
                ] {
                    let same = |f: &dyn Fn(&[Point]) -> Option<f64>| {
                        let (a, b) = (f(&clean), f(&points));
                        assert!(
                            a.map(f64::to_bits) == b.map(f64::to_bits),
                            "stale at {stale_at}, [{window_s}s] at {at_s}s: {a:?} vs {b:?}"
                        );
                    };
                    same(&|p| range.rate(p, at));
                    same(&|p| range.increase(p, at));
                    same(&|p| range.delta(p, at));
                    same(&|p| range.irate(p, at));
                    same(&|p| range.idelta(p, at));
                    same(&|p| range.resets(p, at));
                    same(&|p| range.changes(p, at));
                    same(&|p| range.anchored().increase(p, at));
                    same(&|p| range.anchored().resets(p, at));
                    same(&|p| range.anchored().changes(p, at));
                    same(&|p| range.smoothed().rate(p, at));
                    same(&|p| range.smoothed().delta(p, at));
                    // Created times travel with their points, markers included.
                    let starts_of = |p: &[Point]| -> &[Option<DateTime<Utc>>] {
                        if p.len() == clean.len() {
                            &starts
                        } else {
                            &with_starts
                        }
                    };
                    same(&|p| range.with_start_times(starts_of(p)).increase(p, at));
                    same(&|p| range.with_start_times(starts_of(p)).irate(p, at));
                }
            }
        }
    }
}
