//! Counter series: errors, retention, created times.

use super::*;
use crate::series::ResetCause;

fn t(s: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(s, 0).unwrap()
}

#[test]
fn errors_leave_state_unchanged() {
    let mut s = CounterSeries::new(TimeDelta::minutes(1));
    s.push(t(10), 5.0).unwrap();
    for (at, v) in [
        (10, 6.0),
        (9, 6.0),
        (11, f64::NAN),
        (11, -1.0),
        (11, f64::INFINITY),
    ] {
        assert!(s.push(t(at), v).is_err(), "{at} {v}");
    }
    assert_eq!((s.len(), s.resets(), s.ewma_rate()), (1, 0, None));
    assert_eq!(s.last(), Some(Point::from_millis(10_000, 5.0)));
}

#[test]
fn retention_is_bounded_and_keeps_an_anchor() {
    let mut s = CounterSeries::new(TimeDelta::seconds(60));
    for i in 0..10_000 {
        s.push(t(i), i as f64).unwrap();
    }
    // 60 s of points plus the anchor at or before the boundary.
    assert_eq!(s.len(), 61);
    assert!(s.window.capacity() <= 4 * 61 + 16, "{}", s.window.capacity());
    assert_eq!(s.exact_increase(TimeDelta::seconds(60), t(9_999)), Some(60.0));
    let capped = {
        let mut c = CounterSeries::new(TimeDelta::hours(1));
        c.max_points(10);
        for i in 0..100 {
            c.push(t(i), i as f64).unwrap();
        }
        c
    };
    assert_eq!(capped.len(), 10);
}

#[test]
fn created_time_reset_and_amend() {
    let mut s = CounterSeries::new(TimeDelta::minutes(5));
    s.push_with_created(t(100), 10.0, t(1)).unwrap();
    assert_eq!(s.push_with_created(t(110), 30.0, t(1)).unwrap(), None);
    assert_eq!(
        s.push_with_created(t(120), 40.0, t(115)).unwrap(),
        Some(ResetCause::CreatedChanged)
    );
    assert_eq!(s.exact_increase(TimeDelta::seconds(20), t(120)), Some(60.0));
    let mut a = CounterSeries::new(TimeDelta::minutes(5));
    a.push(t(100), 10.0).unwrap();
    assert_eq!(a.amend_created(t(1)), None);
    a.push(t(110), 30.0).unwrap();
    assert_eq!(a.amend_created(t(105)), Some(ResetCause::CreatedChanged));
    assert_eq!(a.amend_created(t(105)), None, "amending twice is idempotent");
    assert_eq!(a.exact_increase(TimeDelta::seconds(10), t(110)), Some(30.0));
    assert_eq!(a.resets(), 1);
    // irate sees the created-time restart too: 30 since the restart over 10 s.
    assert_eq!(a.irate(&Range::new(TimeDelta::seconds(30)), t(110)), Some(3.0));
}

#[test]
fn the_total_increase_is_the_exact_increase_over_everything_pushed() {
    let t = |s: i64| DateTime::from_timestamp(1_000 + s, 0).unwrap();
    let mut s = CounterSeries::new(TimeDelta::hours(1));
    // (value, created time pushed with it, created time read after it)
    let script = [
        (10.0, None, None),
        (15.0, None, None),
        (3.0, None, None),
        (9.0, None, Some(5)),
        (12.0, Some(5), None),
        (20.0, Some(5), Some(7)),
    ];
    for (i, (value, created, amend)) in script.into_iter().enumerate() {
        match created {
            Some(c) => s
                .push_with_created(t(10 * i as i64), value, t(c))
                .map(|_| ())
                .unwrap(),
            None => s.push(t(10 * i as i64), value).map(|_| ()).unwrap(),
        }
        if let Some(created) = amend {
            s.amend_created(t(created));
        }
        let all = s
            .exact_increase(TimeDelta::hours(1), t(10 * i as i64))
            .unwrap_or(0.0);
        assert_eq!(s.total_increase(), all, "after point {i}");
    }
    assert_eq!(s.resets(), 2, "a value drop and a changed created time");
}

#[test]
fn no_retention_still_keeps_the_two_newest_points() {
    let mut s = CounterSeries::new(TimeDelta::zero());
    for i in 0..5 {
        s.push(t(10 * i), 10.0 * i as f64).unwrap();
    }
    assert_eq!(s.len(), 2);
    assert_eq!(s.exact_rate(TimeDelta::seconds(10), t(40)), Some(1.0));
}
