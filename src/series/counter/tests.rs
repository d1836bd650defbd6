//! Counter series: errors, retention, created times.

use super::*;
use crate::error::NoValue;
use crate::promql::RangeFunctions;
use crate::series::{ResetCause, Shortened, WindowRule};

fn t(s: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(s, 0).unwrap()
}

/// The window increase over `seconds` before `at`.
fn increase(s: &CounterSeries, seconds: i64, at: DateTime<Utc>) -> Option<f64> {
    let w = s
        .window_increase(&WindowRule::new(TimeDelta::seconds(seconds)), at)
        .ok()?;
    Some(w.increase)
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
fn a_short_window_settles_at_its_points_plus_one() {
    // 60 s at 15 s: 5 points, both ends included; the column is sized when the second
    // point tells the interval, and each push makes its room by dropping what the new
    // point makes expire, never by growing.
    let mut s = CounterSeries::new(TimeDelta::seconds(60));
    let mut rooms = Vec::new();
    for i in 0..40 {
        s.push(t(15 * i), i as f64).unwrap();
        rooms.push(s.points.capacity());
    }
    assert_eq!(s.len(), 5);
    assert_eq!(&rooms[..3], &[1, 5, 5]);
    assert!(rooms[1..].iter().all(|&room| room == 5), "{rooms:?}");
}

#[test]
fn a_column_reserved_for_its_interval_is_allocated_once() {
    let mut s = CounterSeries::new(TimeDelta::seconds(60));
    s.reserve_for_interval(TimeDelta::seconds(15));
    assert_eq!(s.points.capacity(), 5);
    for i in 0..20 {
        s.push(t(15 * i), i as f64).unwrap();
        assert_eq!(s.points.capacity(), 5);
    }
    // An interval shorter than expected: the column grows to what it needs.
    for i in 0..40 {
        s.push(t(300 + 5 * i), 20.0 + i as f64).unwrap();
    }
    assert_eq!(s.len(), 13);
    // 13 points, and past 8 the eighth that sliding keeps free.
    assert_eq!(s.points.capacity(), 14);
}

#[test]
fn a_long_retention_is_reached_by_doubling_never_past_it() {
    // 10 min at 15 s holds 41 points: 8 at once, then doubling, then what it holds and the
    // eighth that sliding keeps free (compacting moves eight points a push at most).
    let mut s = CounterSeries::new(TimeDelta::minutes(10));
    let mut rooms = vec![];
    for i in 0..100 {
        s.push(t(15 * i), i as f64).unwrap();
        if rooms.last() != Some(&s.points.capacity()) {
            rooms.push(s.points.capacity());
        }
    }
    assert_eq!(s.len(), 41);
    assert_eq!(rooms, [1, 8, 16, 32, 46]);
}

#[test]
fn retention_is_bounded_and_keeps_an_anchor() {
    let mut s = CounterSeries::new(TimeDelta::seconds(60));
    for i in 0..10_000 {
        s.push(t(i), i as f64).unwrap();
    }
    // 60 s of points plus the anchor at or before the boundary.
    assert_eq!(s.len(), 61);
    // Room for an eighth more, not double.
    assert!(s.points.capacity() <= 61 + 61 / 8 + 2, "{}", s.points.capacity());
    let w = s
        .window_increase(&WindowRule::new(TimeDelta::seconds(60)), t(9_999))
        .unwrap();
    assert_eq!((w.increase, w.shortened), (60.0, None));
    // A longer window than the retention says that older points were let go.
    let w = s
        .window_increase(&WindowRule::new(TimeDelta::seconds(600)), t(9_999))
        .unwrap();
    assert_eq!((w.increase, w.shortened), (60.0, Some(Shortened::Retention)));
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
    assert_eq!(increase(&s, 20, t(120)), Some(60.0));
    let mut a = CounterSeries::new(TimeDelta::minutes(5));
    a.push(t(100), 10.0).unwrap();
    assert_eq!(a.amend_created(t(1)), None);
    a.push(t(110), 30.0).unwrap();
    assert_eq!(a.amend_created(t(105)), Some(ResetCause::CreatedChanged));
    assert_eq!(a.amend_created(t(105)), None, "amending twice is idempotent");
    assert_eq!(increase(&a, 10, t(110)), Some(30.0));
    assert_eq!(a.resets(), 1);
    // irate sees the created-time restart too: 30 since the restart over 10 s.
    assert_eq!(
        a.irate(&RangeFunctions::new(TimeDelta::seconds(30)), t(110)),
        Some(3.0)
    );
}

#[test]
fn the_total_increase_is_the_window_increase_over_everything_pushed() {
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
        let all = increase(&s, 3600, t(10 * i as i64)).unwrap_or(0.0);
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
    let w = s
        .window_increase(&WindowRule::new(TimeDelta::seconds(10)), t(40))
        .unwrap();
    assert_eq!(w.rate(), 1.0);
}

/// Scrapes every `interval_ms` with the given jitter per scrape, `rate` per second, and
/// a gap (scrapes missed) from `gap.0` for `gap.1` scrapes.
fn jittered(interval_ms: i64, jitter: &[i64], rate: f64, gap: (usize, usize)) -> CounterSeries {
    let mut s = CounterSeries::new(TimeDelta::minutes(10));
    for (i, j) in jitter.iter().enumerate() {
        if i >= gap.0 && i < gap.0 + gap.1 {
            continue;
        }
        let ms = 10_000 + interval_ms * i as i64 + j;
        s.push(
            DateTime::from_timestamp_millis(ms).unwrap(),
            rate * ms as f64 / 1000.0,
        )
        .unwrap();
    }
    s
}

proptest::proptest! {
    /// Jitter of up to a tenth of the interval never moves the window's start by a whole
    /// interval: its span stays within twice the jitter of the window.
    #[test]
    fn window_span_does_not_flip_with_jitter(
        jitter in proptest::collection::vec(-100i64..=100, 40),
        periods in 2i64..10,
    ) {
        let s = jittered(1000, &jitter, 250.0, (usize::MAX, 0));
        let window = TimeDelta::seconds(periods);
        for end in 20..40 {
            let at = DateTime::from_timestamp_millis(10_000 + 1000 * end + jitter[end as usize]).unwrap();
            let w = s.window_increase(&WindowRule::new(window).slack(TimeDelta::seconds(1)), at).unwrap();
            let off = (w.span() - window).num_milliseconds().abs();
            proptest::prop_assert!(off <= 200, "span {:?} for a {periods} s window", w.span());
            proptest::prop_assert!((w.rate() - 250.0).abs() < 1e-6);
        }
    }

    /// After a gap the window never reaches across it: at most the window and the slack.
    #[test]
    fn window_never_reaches_across_a_gap(start in 5usize..30, missed in 1usize..40, periods in 2i64..15) {
        let s = jittered(1000, &[0; 80], 100.0, (start, missed));
        let window = TimeDelta::seconds(periods);
        let slack = TimeDelta::seconds(1);
        let rule = WindowRule::new(window).slack(slack).gap(TimeDelta::milliseconds(1500));
        let (gap_from, gap_to) = (10_000 + 1000 * (start as i64 - 1), 10_000 + 1000 * (start + missed) as i64);
        for end in 0..80i64 {
            let at = DateTime::from_timestamp_millis(10_000 + 1000 * end).unwrap();
            if let Ok(w) = s.window_increase(&rule, at) {
                proptest::prop_assert!(w.span() <= window + slack, "{:?}", w);
                proptest::prop_assert!(w.end <= at && w.start >= at - window - slack);
                let (start_ms, end_ms) = (w.start.timestamp_millis(), w.end.timestamp_millis());
                proptest::prop_assert!(!(start_ms <= gap_from && end_ms >= gap_to), "across the gap: {:?}", w);
                proptest::prop_assert!((w.rate() - 100.0).abs() < 1e-9);
            }
        }
    }
}

#[test]
fn window_increase_counts_restarts_from_zero_and_needs_two_points() {
    let mut s = CounterSeries::new(TimeDelta::minutes(1));
    let rule = WindowRule::new(TimeDelta::seconds(10)).slack(TimeDelta::seconds(1));
    assert!(matches!(
        s.window_increase(&rule, t(0)),
        Err(NoValue::TooFewScrapes { found: 0, .. })
    ));
    s.push(t(0), 50.0).unwrap();
    assert!(matches!(
        s.window_increase(&rule, t(0)),
        Err(NoValue::TooFewScrapes { found: 1, .. })
    ));
    s.push(t(5), 80.0).unwrap();
    s.push(t(10), 20.0).unwrap(); // a restart: +20
    let w = s.window_increase(&rule, t(10)).unwrap();
    assert_eq!((w.increase, w.start, w.end), (50.0, t(0), t(10)));
    // Evaluated before the newest point, the window ends at the point before it.
    let w = s.window_increase(&rule, t(9)).unwrap();
    assert_eq!((w.increase, w.end), (30.0, t(5)));
}

/// One step of `created_times_in_line_answer_as_runs`: a push (its value's rise, or a
/// drop to it when negative; its created time), then perhaps a created time read after it.
type Step = (i8, Option<i64>, Option<i64>);

fn created_steps() -> impl proptest::strategy::Strategy<Value = Vec<Step>> {
    use proptest::prelude::*;
    let created = prop_oneof![3 => Just(Some(7_000i64)), 1 => Just(Some(9_000)), 1 => Just(None)];
    proptest::collection::vec((-2i8..6, created.clone(), created), 1..30)
}

proptest::proptest! {
    /// A counter whose created time keeps in line (`Extra::Steady`) answers exactly as one
    /// that keeps runs from the start, whatever the created times and resets do.
    #[test]
    fn created_times_in_line_answer_as_runs(
        steps in created_steps(),
        skew in proptest::option::of(proptest::prop_oneof![proptest::strategy::Just(0i64), proptest::strategy::Just(5_000)]),
    ) {
        let mut compact = CounterSeries::new(TimeDelta::seconds(8));
        let mut runs = CounterSeries::new(TimeDelta::seconds(8));
        runs.extra = Extra::Rare(Box::default());
        let mut value = 0.0;
        for (i, &(step, pushed, amended)) in steps.iter().enumerate() {
            value = if step < 0 { f64::from(-step) } else { value + f64::from(step) };
            let at_ms = 10_000 + 1_000 * i as i64;
            let a = compact.push_ms(at_ms, value, pushed, skew);
            let b = runs.push_ms(at_ms, value, pushed, skew);
            proptest::prop_assert_eq!(a, b);
            if let Some(created) = amended {
                proptest::prop_assert_eq!(
                    compact.amend_created_ms(created, skew),
                    runs.amend_created_ms(created, skew)
                );
            }
            let created: Vec<_> = compact.created_times().collect();
            proptest::prop_assert_eq!(&created, &runs.created_times().collect::<Vec<_>>(), "step {}", i);
            proptest::prop_assert_eq!(compact.has_created(), runs.has_created());
            proptest::prop_assert_eq!(compact.total_increase().to_bits(), runs.total_increase().to_bits());
            proptest::prop_assert_eq!(compact.resets(), runs.resets());
            proptest::prop_assert_eq!(compact.last_reset(), runs.last_reset());
            let at = DateTime::from_timestamp_millis(at_ms).unwrap();
            let rule = WindowRule::new(TimeDelta::seconds(5));
            proptest::prop_assert_eq!(
                compact.window_increase(&rule, at).map(|w| w.increase.to_bits()),
                runs.window_increase(&rule, at).map(|w| w.increase.to_bits())
            );
        }
    }
}

/// One step of `the_usual_push_is_the_checked_push` (see there).
type Push = (i64, i8, u8, Option<i64>, Option<i64>);

fn usual_and_unusual_pushes() -> impl proptest::strategy::Strategy<Value = Vec<Push>> {
    use proptest::prelude::*;
    // Mostly no created time, as a fleet's counters; sometimes one, sometimes another.
    let created = |none| prop_oneof![none => Just(None), 2 => Just(Some(7_000i64)), 1 => Just(Some(9_000))];
    proptest::collection::vec((-1i64..4, -2i8..6, 0u8..20, created(4), created(4)), 1..40)
}

proptest::proptest! {
    /// The usual push's shortcut leaves the series exactly as the push with every check
    /// does, whatever comes: drops, restarts by created time, resets kept, times that do
    /// not advance, values that are no count. Each step: the seconds since the last push
    /// (0 or less: refused), the value's rise (a drop to it when negative), whether the
    /// value pushed is no count (NaN, infinite, negative), the created time pushed with
    /// it, and one read after it.
    ///
    /// With or without a clock skew allowed (a created time before the previous point is
    /// then a second process's), and the total never below zero.
    #[test]
    fn the_usual_push_is_the_checked_push(
        steps in usual_and_unusual_pushes(),
        skew in proptest::option::of(proptest::prop_oneof![proptest::strategy::Just(0i64), proptest::strategy::Just(5_000)]),
    ) {
        let mut series = CounterSeries::new(TimeDelta::seconds(6));
        let (mut at_ms, mut value) = (10_000i64, 0.0);
        for &(advance, step, odd, pushed, amended) in &steps {
            at_ms += 1_000 * advance;
            value = if step < 0 { f64::from(-step) } else { value + f64::from(step) };
            let pushed_value = match odd {
                0 => f64::NAN,
                1 => f64::INFINITY,
                2 => -1.0,
                _ => value,
            };
            let mut checked = series.clone();
            let usual = series.push_ms(at_ms, pushed_value, pushed, skew);
            // (Debug: a refused NaN is not equal to itself.)
            let expected = checked.push_checked(at_ms, pushed_value, pushed, skew);
            proptest::prop_assert_eq!(format!("{usual:?}"), format!("{expected:?}"));
            proptest::prop_assert_eq!(format!("{series:?}"), format!("{checked:?}"));
            if let Some(created) = amended {
                series.amend_created_ms(created, skew);
            }
            proptest::prop_assert!(series.total_increase() >= 0.0, "{}", series.total_increase());
        }
    }
}
