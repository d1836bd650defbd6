//! Restarts as a fact about a target: the process start time, and counters that are not
//! counters.

use chrono::{DateTime, TimeDelta, Utc};

use crate::error::NoValue;
use crate::promql::RangeFunctions;
use crate::select::Selector;
use crate::series::ResetCause;
use crate::{Estimator, Query, Tracker};

fn at(s: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_700_000_000 + s, 0).unwrap()
}

fn tokens() -> Selector {
    Selector::parse("tokens_total").unwrap()
}

/// A server's own page: its start time (Unix seconds, relative to `at(0)`) and its count.
fn page(start: i64, tokens: f64) -> String {
    format!(
        "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds {}\n# TYPE tokens counter\ntokens_total {tokens}\n",
        1_700_000_000 + start
    )
}

/// A page with the count alone: no start time tells a restart.
fn bare(tokens: f64) -> String {
    format!("# TYPE tokens counter\ntokens_total {tokens}\n")
}

fn value(t: &Tracker, estimator: Estimator, window: i64) -> Result<f64, NoValue> {
    let query = Query::new(&tokens(), estimator).window(TimeDelta::seconds(window));
    t.evaluate(&query).unwrap().value()
}

fn total(t: &Tracker) -> f64 {
    t.get("tokens_total", &[])
        .unwrap()
        .counter()
        .unwrap()
        .total_increase()
}

/// A server that counted 4,000 tokens, went down at 45 s and restarted at 50 s: by the
/// first scrape after, at 60 s, its new process has counted 10,000 tokens, past the old
/// 4,000, so the value never dropped and only the start time tells. Every token counts,
/// and the restart is reported once, for the target and for the counter.
#[test]
fn a_restart_only_the_start_time_announces_is_counted_from_zero() {
    let mut t = Tracker::new([tokens()]);
    let mut reports = Vec::new();
    for (s, start, n) in [
        (0, -100, 0.0),
        (10, -100, 2_000.0),
        (20, -100, 4_000.0),
        (60, 50, 10_000.0),
        (70, 50, 11_000.0),
    ] {
        reports.push(t.ingest(&page(start, n), at(s)).unwrap());
    }
    assert_eq!(
        total(&t),
        4_000.0 + 10_000.0 + 1_000.0,
        "not 4,000 + 6,000 + 1,000"
    );
    let restart = &reports[3];
    assert_eq!(restart.process_restarts.len(), 1);
    assert_eq!(
        (
            restart.process_restarts[0].from,
            restart.process_restarts[0].to,
            restart.process_restarts[0].cause
        ),
        (at(-100), at(50), ResetCause::ProcessRestarted)
    );
    assert!(
        restart.process_restarts[0].target.is_empty(),
        "a server's own page has no target labels"
    );
    assert_eq!(restart.resets.len(), 1);
    assert_eq!(restart.resets[0].cause, ResetCause::ProcessRestarted);
    assert!(reports[4].resets.is_empty() && reports[4].process_restarts.is_empty());
    let counter = t.get("tokens_total", &[]).unwrap().counter().unwrap();
    assert_eq!(counter.resets(), 1);
    // The window increase over the restart: 10,000 + 1,000, not 6,000 + 1,000.
    assert_eq!(value(&t, Estimator::WindowIncrease, 50), Ok(11_000.0));
    // PromQL's value-only estimators are Prometheus', bit for bit: the start time changes
    // nothing there.
    let promql = RangeFunctions::new(TimeDelta::seconds(30)).trusting_order();
    let query = Query::new(&tokens(), Estimator::Increase)
        .window(TimeDelta::seconds(30))
        .start_timestamps(false);
    assert_eq!(
        t.evaluate(&query).unwrap().value().ok(),
        promql.increase(counter.points(), at(70))
    );
}

/// Without the start gauge (`start_time_gauge(None)`), the same run is value-only, as
/// Prometheus reads it: the restart is missed and the total is 6,000 short.
#[test]
fn without_the_start_gauge_the_restart_is_missed_as_before() {
    let mut t = Tracker::new([tokens()]);
    t.start_time_gauge(None);
    for (s, start, n) in [(0, -100, 0.0), (20, -100, 4_000.0), (60, 50, 10_000.0)] {
        let report = t.ingest(&page(start, n), at(s)).unwrap();
        assert!(report.resets.is_empty() && report.process_restarts.is_empty());
    }
    assert_eq!(total(&t), 10_000.0);
    assert!(
        t.get("process_start_time_seconds", &[]).is_none(),
        "not tracked when not asked"
    );
}

/// A counter with a `_created` of its own goes by it: the process start time is for the
/// counters that have none.
#[test]
fn a_counter_with_its_own_created_time_goes_by_it() {
    let mut t = Tracker::new([tokens()]);
    let page = |start: i64, n: f64, created: i64| {
        format!(
            "process_start_time_seconds {}\n# TYPE tokens counter\ntokens_total {n}\ntokens_created {}\n",
            1_700_000_000 + start,
            1_700_000_000 + created
        )
    };
    t.ingest(&page(-100, 1_000.0, -100), at(0)).unwrap();
    // The process restarted, but this counter says it was created long ago (a counter
    // kept across a restart, as a multiprocess directory keeps them).
    let report = t.ingest(&page(5, 1_500.0, -100), at(10)).unwrap();
    assert_eq!(report.process_restarts.len(), 1);
    assert!(report.resets.is_empty(), "{:?}", report.resets);
    assert_eq!(total(&t), 500.0);
}

/// On a federation page, each instance is a target: one restarting restarts its own
/// counters only.
#[test]
fn each_instance_of_a_federation_restarts_on_its_own() {
    let mut t = Tracker::new([tokens()]);
    let page = |a_start: i64, a: f64, b: f64| {
        format!(
            "process_start_time_seconds{{instance=\"a:8000\",job=\"vllm\"}} {}\n\
             process_start_time_seconds{{instance=\"b:8000\",job=\"vllm\"}} {}\n\
             tokens_total{{instance=\"a:8000\",job=\"vllm\",model=\"m\"}} {a}\n\
             tokens_total{{instance=\"b:8000\",job=\"vllm\",model=\"m\"}} {b}\n",
            1_700_000_000 + a_start,
            1_699_000_000
        )
    };
    t.ingest(&page(-100, 3_000.0, 3_000.0), at(0)).unwrap();
    let report = t.ingest(&page(4, 5_000.0, 5_000.0), at(10)).unwrap();
    assert_eq!(
        report.process_restarts[0].target,
        [
            ("job".to_string(), "vllm".to_string()),
            ("instance".to_string(), "a:8000".to_string())
        ]
    );
    let by = Query::new(&tokens(), Estimator::WindowIncrease)
        .window(TimeDelta::seconds(10))
        .by(["instance"]);
    let answer = t.evaluate(&by).unwrap();
    let increases: Vec<_> = answer.groups.iter().map(|g| g.value.clone()).collect();
    assert_eq!(increases, [Ok(5_000.0), Ok(2_000.0)]);
}

/// A "counter" that goes down on every scrape with no restart evidence (a buggy
/// exporter, its page without a start time): the first drop is a reset, as in
/// Prometheus; from the second in the window on there is no window rate and no EWMA, and
/// the reason says why. Never a spike.
#[test]
fn a_counter_that_drops_again_and_again_is_not_rated() {
    let mut t = Tracker::new([tokens()]);
    t.ewma_time_constant(TimeDelta::seconds(30));
    let mut n = 1_000_000.0;
    for s in 0..3 {
        t.ingest(&bare(n), at(10 * s)).unwrap();
        n += 1_000.0;
    }
    // One drop: a reset.
    t.ingest(&bare(500.0), at(30)).unwrap();
    assert_eq!(value(&t, Estimator::WindowIncrease, 10), Ok(500.0));
    // Then it drops on every scrape.
    let mut values = Vec::new();
    for s in 4..12 {
        let v = if s % 2 == 0 { 2_000_000.0 } else { 1_000.0 };
        t.ingest(&bare(v), at(10 * s)).unwrap();
        values.push(v);
    }
    for estimator in [Estimator::WindowRate, Estimator::WindowIncrease, Estimator::Ewma] {
        let got = value(&t, estimator, 30);
        assert!(
            matches!(got, Err(NoValue::ErraticCounter { drops, start_went_back: false }) if drops >= 2),
            "{estimator:?}: {got:?}"
        );
    }
    let text = value(&t, Estimator::WindowRate, 30).unwrap_err().to_string();
    assert!(text.contains("two processes behind one URL"), "{text}");
    // The total takes no value as new tokens once the series is erratic: 2,000 before
    // the first drop and 500 after it; the rise back above where it dropped from shows
    // the drop was no restart.
    assert_eq!(total(&t), 2_000.0 + 500.0);
    // Steady again: once the drops are out of the window, it is rated again.
    let mut v = 2_000_000.0;
    for s in 12..20 {
        v += 1_000.0;
        t.ingest(&bare(v), at(10 * s)).unwrap();
    }
    assert_eq!(value(&t, Estimator::WindowRate, 30), Ok(100.0));
}

/// Two replicas answering one URL in turn: the start time alternates, and so does the
/// count. No rate, a reason that names the likely cause, and no spike.
#[test]
fn two_replicas_behind_one_url_are_not_rated() {
    let mut t = Tracker::new([tokens()]);
    let mut restarts = Vec::new();
    for s in 0..12_i64 {
        let (start, n) = if s % 2 == 0 {
            (-1_000, 5_000_000.0 + 1_000.0 * s as f64)
        } else {
            (-500, 20_000.0 + 1_000.0 * s as f64)
        };
        let report = t.ingest(&page(start, n), at(10 * s)).unwrap();
        restarts.extend(report.process_restarts.into_iter().map(|r| r.cause));
    }
    assert!(restarts.contains(&ResetCause::StartWentBack), "{restarts:?}");
    for estimator in [Estimator::WindowRate, Estimator::Ewma] {
        let got = value(&t, estimator, 30);
        assert!(
            matches!(
                got,
                Err(NoValue::ErraticCounter {
                    start_went_back: true,
                    ..
                })
            ),
            "{estimator:?}: {got:?}"
        );
    }
    assert!(
        total(&t) < 5_100_000.0,
        "the replicas' counts are not added up as new tokens: {}",
        total(&t)
    );
}

/// A start time of 0 is unknown (Prometheus reads it so): no restart from or to it.
#[test]
fn a_start_time_of_zero_is_unknown() {
    let mut t = Tracker::new([tokens()]);
    let page = |start: &str, n: f64| format!("process_start_time_seconds {start}\ntokens_total {n}\n");
    t.ingest(&page("1699999000", 100.0), at(0)).unwrap();
    let report = t.ingest(&page("0", 200.0), at(10)).unwrap();
    assert!(report.process_restarts.is_empty());
    let report = t.ingest(&page("1699999000", 300.0), at(20)).unwrap();
    assert!(report.process_restarts.is_empty());
    assert_eq!(total(&t), 200.0);
}

/// Two replicas deployed together (10 s apart) behind one URL: the first answers alone for
/// a minute, then the second. The second started while the first was seen alive: not a
/// restart but two processes, from the first switch on.
#[test]
fn a_second_process_that_was_running_already_is_no_restart() {
    let mut t = Tracker::new([tokens()]);
    for s in 0..7 {
        t.ingest(&page(-600, 1_000.0 * (600 + 10 * s) as f64), at(10 * s))
            .unwrap();
    }
    let report = t.ingest(&page(-590, 1_000.0 * 660.0), at(70)).unwrap();
    assert_eq!(report.process_restarts[0].cause, ResetCause::StartWentBack);
    assert!(matches!(
        value(&t, Estimator::WindowRate, 30),
        Err(NoValue::ErraticCounter {
            start_went_back: true,
            ..
        })
    ));
}

/// A server whose clock is an hour behind the scraper's restarts: only differences of one
/// clock are compared, so it is a restart, counted from zero.
#[test]
fn a_restart_on_a_server_whose_clock_is_off_is_a_restart() {
    let mut t = Tracker::new([tokens()]);
    // Up since 100 s before the run by its own clock, which is 3,600 s behind.
    for s in 0..4 {
        t.ingest(&page(-100 - 3_600, 1_000.0 * (10 * s) as f64), at(10 * s))
            .unwrap();
    }
    // Restarted at 45 s (its clock: 45 - 3,600), scraped at 60 s with 20,000 counted.
    let report = t.ingest(&page(45 - 3_600, 20_000.0), at(60)).unwrap();
    assert_eq!(report.process_restarts[0].cause, ResetCause::ProcessRestarted);
    assert_eq!(total(&t), 30_000.0 + 20_000.0);
}

/// PromQL's start-time-aware estimators read the target's start for a counter without a
/// `_created`: a restart inside the window counts from zero at the start time, as
/// Prometheus 3.14 computes with start timestamps, and the value-only form is Prometheus'
/// own `rate()`, untouched.
#[test]
fn start_aware_promql_reads_the_target_start_time() {
    let mut t = Tracker::new([tokens()]);
    for (s, start, n) in [
        (0, -100, 0.0),
        (10, -100, 2_000.0),
        (20, -100, 4_000.0),
        (60, 50, 10_000.0),
        (70, 50, 11_000.0),
    ] {
        t.ingest(&page(start, n), at(s)).unwrap();
    }
    let counter = t.get("tokens_total", &[]).unwrap().counter().unwrap();
    let window = TimeDelta::seconds(60);
    let starts: Vec<_> = counter
        .points()
        .iter()
        .map(|p| {
            Some(if p.timestamp_ms < at(60).timestamp_millis() {
                at(-100)
            } else {
                at(50)
            })
        })
        .collect();
    let range = RangeFunctions::new(window);
    let want = range.with_start_times(&starts).increase(counter.points(), at(70));
    let query = Query::new(&tokens(), Estimator::Increase).window(window);
    assert_eq!(t.evaluate(&query).unwrap().value().ok(), want);
    let values_only = t.evaluate(&query.start_timestamps(false)).unwrap().value().ok();
    assert_eq!(values_only, range.increase(counter.points(), at(70)));
    assert!(want.unwrap() > values_only.unwrap(), "{want:?} {values_only:?}");
    // A window that begins after every start time reads none.
    let late = Query::new(&tokens(), Estimator::Increase).window(TimeDelta::seconds(15));
    assert_eq!(
        t.evaluate(&late).unwrap().value().ok(),
        t.evaluate(&late.start_timestamps(false)).unwrap().value().ok()
    );
}

/// A federation page of the instances `alive`, each with its start time and its count.
fn federation(alive: &[(&str, i64, f64)]) -> String {
    let mut page = String::from("# TYPE process_start_time_seconds gauge\n");
    for (instance, start, _) in alive {
        page.push_str(&format!(
            "process_start_time_seconds{{instance=\"{instance}\"}} {}\n",
            1_700_000_000 + start
        ));
    }
    page.push_str("# TYPE tokens counter\n");
    for (instance, _, n) in alive {
        page.push_str(&format!("tokens_total{{instance=\"{instance}\"}} {n}\n"));
    }
    page
}

/// An instance that goes away leaves its start gauge's slot to the next new series: a
/// new instance's start gauge there is not the old instance's start time, and the old
/// instance, gone, restarted nothing.
#[test]
fn a_gone_instances_slot_reused_by_another_start_gauge_is_no_restart() {
    let gauge = Selector::parse("process_start_time_seconds").unwrap();
    let mut t = Tracker::new([tokens(), gauge]);
    t.stale_after(1);
    t.ingest(&federation(&[("a", -100, 10.0)]), at(0)).unwrap();
    t.ingest(&federation(&[("a", -100, 20.0)]), at(10)).unwrap();
    // `a` is gone: its series are dropped after one page without them.
    t.ingest(&federation(&[]), at(20)).unwrap();
    t.ingest(&federation(&[]), at(30)).unwrap();
    let mut restarts = Vec::new();
    for (s, n) in [(40, 5.0), (50, 15.0), (60, 25.0)] {
        let report = t.ingest(&federation(&[("b", 35, n)]), at(s)).unwrap();
        restarts.extend(report.process_restarts);
    }
    assert!(restarts.is_empty(), "{restarts:?}");
}

/// Instances that come and go (a fleet's pods, renamed at each deploy) leave no start
/// time behind them: the tracker keeps the targets seen within its retention (here a
/// minute: two or three pods of 30 s), not every one it ever saw (67 here).
#[test]
fn start_times_of_gone_instances_are_let_go() {
    let mut t = Tracker::new([tokens()]);
    t.stale_after(2).retention(TimeDelta::seconds(60));
    for s in 0..200 {
        let (pod, started) = (s / 3, 30 * (s / 3) - 5);
        let page = federation(&[(&format!("pod-{pod}"), started, s as f64)]);
        t.ingest(&page, at(10 * s)).unwrap();
    }
    assert!(
        t.starts.targets.len() <= 4,
        "{} targets kept",
        t.starts.targets.len()
    );
}

/// A refused page's targets go with it, and its start times are not the next page's
/// (that page takes the refused one's scrape number; the refused page's start times were
/// held back and never read, so the first assertion holds by that too).
#[test]
fn a_refused_pages_targets_go_with_it() {
    let mut t = Tracker::new([tokens()]);
    t.max_series(2);
    t.ingest(&federation(&[("a", -100, 10.0)]), at(0)).unwrap();
    let over = federation(&[("a", 5, 1.0), ("c", 5, 1.0), ("d", 5, 1.0)]);
    assert!(t.ingest(&over, at(10)).is_err(), "three series, two allowed");
    let report = t.ingest(&federation(&[("b", -50, 7.0)]), at(20)).unwrap();
    assert!(
        report.process_restarts.is_empty(),
        "{:?}",
        report.process_restarts
    );
    // Nor did it make targets of `c` and `d`.
    assert_eq!(t.starts.targets.len(), 2);
}

/// A refused page whose start gauge is a new series of a known target (another label
/// beside the target's) gives the target its gauge back: it lost it, so the next page's
/// restart, announced only by the start time, was missed (found by `chunks_agree`).
#[test]
fn a_refused_page_leaves_a_targets_start_gauge_where_it_was() {
    let mut t = Tracker::new([]);
    t.parser(crate::Parser::default().sample_limit(2));
    let gauge = |labels: &str, start: i64| {
        format!(
            "process_start_time_seconds{{job=\"a\"{labels}}} {}\n",
            1_700_000_000 + start
        )
    };
    t.ingest(&(gauge("", -100) + "tokens_total 10\n"), at(0)).unwrap();
    let over = gauge(",shard=\"1\"", -100) + "tokens_total 11\nx 1\n";
    assert!(t.ingest(&over, at(10)).is_err(), "three samples, two allowed");
    let report = t.ingest(&(gauge("", 15) + "tokens_total 3\n"), at(20)).unwrap();
    assert_eq!(report.process_restarts.len(), 1, "{report:?}");
    assert_eq!(total(&t), 3.0, "counted from zero since the restart");
}

/// Two replicas behind one URL in turn, the second started half an hour after the first:
/// whatever is rated, no total goes below zero; and from the first switch back (the start
/// time went back, the value dropped) each process's rise since its own newest page is
/// counted, the drop's value not. (The first switch, a start time half an hour later,
/// reads as a restart without a clock skew allowed.)
#[test]
fn replicas_in_turn_never_count_a_negative_total() {
    let mut t = Tracker::new([tokens()]);
    let mut totals = Vec::new();
    for s in 0..12_i64 {
        let (start, n) = if s % 2 == 0 {
            (-3_600, 1_000.0 + 100.0 * s as f64)
        } else {
            (-1_800, 100_000.0 + 50.0 * s as f64)
        };
        t.ingest(&page(start, n), at(s)).unwrap();
        assert!(total(&t) >= 0.0, "after page {s}: {}", total(&t));
        totals.push(total(&t));
    }
    // From 100,050 (the restart read at the first switch), A's 200 or B's 100 a switch.
    let rises = (2..12).map(|s| if s % 2 == 0 { 200.0 } else { 100.0 });
    let expected: Vec<f64> = [0.0, 100_050.0]
        .into_iter()
        .chain(rises.scan(100_050.0, |n, rise| {
            *n += rise;
            Some(*n)
        }))
        .collect();
    assert_eq!(totals, expected);
}

/// With a clock skew allowed, a counter whose `_created` moves to a time while the old
/// process still answered is a second process's (replicas behind one URL, or a server
/// started afresh that says it has been up an hour): its count is not new tokens and it is
/// not rated; a created time after the last page is a restart, counted from zero, as
/// without. Whether `_created` comes after its counter on the page (prometheus_client) or
/// before, and whether the count rose or dropped.
#[test]
fn with_a_skew_a_created_time_while_the_old_process_answered_is_a_second_process() {
    let page = |n: f64, created: i64, created_first: bool| {
        let (total, created) = (
            format!("tokens_total {n}\n"),
            format!("tokens_created {}\n", 1_700_000_000 + created),
        );
        let (a, b) = if created_first {
            (created, total)
        } else {
            (total, created)
        };
        format!("# TYPE tokens counter\n{a}{b}")
    };
    for created_first in [false, true] {
        for second in [90_000.0, 100.0] {
            let mut t = Tracker::new([tokens()]);
            t.start_time_skew(Some(TimeDelta::seconds(60)));
            t.ingest(&page(1_000.0, -100, created_first), at(0)).unwrap();
            t.ingest(&page(2_000.0, -100, created_first), at(10)).unwrap();
            // Up since 3,600 s before the run by its own word.
            let report = t.ingest(&page(second, -3_600, created_first), at(20)).unwrap();
            // (A drop read before its `_created` is reported as one first.)
            let causes: Vec<_> = report.resets.iter().map(|r| r.cause).collect();
            assert_eq!(
                causes.last(),
                Some(&ResetCause::StartWentBack),
                "{created_first} {second}"
            );
            assert!(!causes.contains(&ResetCause::CreatedChanged), "{causes:?}");
            assert_eq!(total(&t), 1_000.0, "{created_first} {second}: no new tokens");
            assert!(
                matches!(
                    value(&t, Estimator::WindowRate, 30),
                    Err(NoValue::ErraticCounter {
                        start_went_back: true,
                        ..
                    })
                ),
                "{created_first} {second}"
            );
            // A restart at 25 s, read at 30 s (after the first process): counted from
            // zero, as without the skew.
            let mut t = Tracker::new([tokens()]);
            t.start_time_skew(Some(TimeDelta::seconds(60)));
            t.ingest(&page(1_000.0, -100, created_first), at(0)).unwrap();
            t.ingest(&page(2_000.0, -100, created_first), at(10)).unwrap();
            let restarted = second.min(300.0);
            let report = t.ingest(&page(restarted, 25, created_first), at(30)).unwrap();
            let causes: Vec<_> = report.resets.iter().map(|r| r.cause).collect();
            assert_eq!(causes, [ResetCause::ValueDropped], "{created_first} {second}");
            assert_eq!(total(&t), 1_000.0 + restarted, "{created_first} {second}");
        }
    }
}

/// A server started afresh that says it has been up an hour (the built-in simulator
/// restarted by hand): with a skew allowed, its start time, before the page that last
/// showed the old process, is a second process's, and its count is not new tokens.
#[test]
fn with_a_skew_a_start_time_while_the_old_process_answered_is_a_second_process() {
    let mut t = Tracker::new([tokens()]);
    t.start_time_skew(Some(TimeDelta::seconds(60)));
    for s in 0..3 {
        t.ingest(&page(-3_600, 1_000.0 * s as f64), at(10 * s)).unwrap();
    }
    // Started again by hand at 25 s, saying it has been up an hour with 5.76 M tokens.
    let report = t.ingest(&page(25 - 3_600, 5_760_000.0), at(30)).unwrap();
    assert_eq!(report.process_restarts[0].cause, ResetCause::StartWentBack);
    assert_eq!(total(&t), 2_000.0);
    // Without the skew, only start times are compared: 3,625 s later than the old one,
    // which was seen alive for 20 s, so a restart, counted from zero.
    let mut t = Tracker::new([tokens()]);
    for s in 0..3 {
        t.ingest(&page(-3_600, 1_000.0 * s as f64), at(10 * s)).unwrap();
    }
    let report = t.ingest(&page(25 - 3_600, 5_760_000.0), at(30)).unwrap();
    assert_eq!(report.process_restarts[0].cause, ResetCause::ProcessRestarted);
}

/// The same server replaced by one that says it was up while the old one answered: the
/// switch counts nothing, and every rise of the new process after it counts (the start
/// times tell its points from the old one's), though the switch is still in the window.
#[test]
fn after_a_second_process_takes_over_its_rises_count() {
    let mut t = Tracker::new([tokens()]);
    t.start_time_skew(Some(TimeDelta::seconds(60)));
    for s in 0..3 {
        t.ingest(&page(-3_600, 1_000.0 * s as f64), at(10 * s)).unwrap();
    }
    t.ingest(&page(25 - 3_600, 5_760_000.0), at(30)).unwrap();
    for s in 4..7 {
        t.ingest(
            &page(25 - 3_600, 5_760_000.0 + 500.0 * (s - 3) as f64),
            at(10 * s),
        )
        .unwrap();
    }
    assert_eq!(total(&t), 2_000.0 + 1_500.0);
    assert!(
        value(&t, Estimator::WindowRate, 60).is_err(),
        "the switch is in the window"
    );
    assert_eq!(value(&t, Estimator::WindowRate, 25), Ok(50.0));
}

/// Two replicas started within the skew in turn behind one URL, then the second alone:
/// its return is no restart (no restart brings back a start seen before), so no window
/// after the last switch back counts the second replica's whole count as new tokens.
#[test]
fn a_start_time_seen_before_is_no_restart() {
    let mut t = Tracker::new([tokens()]);
    t.start_time_skew(Some(TimeDelta::seconds(300)));
    let old = |s: i64| page(-3_600, 3_600_000.0 + 1_000.0 * s as f64);
    let new = |s: i64| page(5, 1_000.0 * (s - 5) as f64);
    let mut causes = Vec::new();
    for s in 0..20_i64 {
        let text = if s < 10 || (s < 14 && s % 2 == 0) {
            old(s)
        } else {
            new(s)
        };
        let report = t.ingest(&text, at(s)).unwrap();
        causes.extend(report.process_restarts.iter().map(|r| r.cause));
    }
    // 11: the second replica (a restart, as far as anything can tell); 12: the first
    // again (back); 13: the second again, which the start times alone called a restart.
    let back = ResetCause::StartWentBack;
    assert_eq!(causes, [ResetCause::ProcessRestarted, back, back]);
    // A window holding the switch at 13 is refused (it gave 14,000 of 6,000: the second
    // replica's whole count as new); one from the point at 13 on is that replica's alone.
    assert!(value(&t, Estimator::WindowIncrease, 7).is_err());
    assert_eq!(value(&t, Estimator::WindowIncrease, 6), Ok(6_000.0));
}

/// A rollback: the old process answers again after the new one answered alone, having
/// counted 2,000 tokens meanwhile (still serving behind another address). Its start time
/// is one seen before, so its return is no restart, and its rise since its own last
/// page is counted: exactly what it generated.
#[test]
fn a_process_that_answers_again_counts_its_rise_since_it_left() {
    let mut t = Tracker::new([tokens()]);
    let old = |s: i64| page(-3_600, 50_000.0 + 100.0 * s as f64);
    let new = |s: i64| page(4, 10.0 * (s - 4) as f64);
    for s in 0..14_i64 {
        t.ingest(&if (5..10).contains(&s) { new(s) } else { old(s) }, at(s))
            .unwrap();
    }
    // The old process: 400 to 4 s, then 900 from 4 s to 13 s, read when it is back. The new
    // one: its 10 at 5 s (a restart, its whole count), then 40 to 9 s.
    assert_eq!(total(&t), 400.0 + 10.0 + 40.0 + 900.0);
}

/// A restart that keeps its counters (vLLM's `PROMETHEUS_MULTIPROC_DIR` set and not wiped,
/// as vLLM warns): the start time moves, the count goes on from the old one's. Read as a
/// restart, the count since the new start (half a second) would be 7 million tokens a
/// second where it never rose faster than 1,000: the counters go by their values. A
/// restart whose count climbed past the old one at a rate it could have is still one.
#[test]
fn counters_kept_across_a_restart_go_by_their_values() {
    let mut t = Tracker::new([tokens()]);
    for s in 0..60 {
        t.ingest(&page(-3_600, 1_000.0 * (3_600 + s) as f64), at(s))
            .unwrap();
    }
    let report = t.ingest(&page(59, 3_661_000.0), at(60)).unwrap();
    let causes: Vec<_> = report.process_restarts.iter().map(|r| r.cause).collect();
    assert_eq!(causes, [ResetCause::StartTimeMoving]);
    assert_eq!(total(&t), 61_000.0);
    // The same after an outage longer than the retention: only the point before it kept,
    // the rise across it is the rate to compare with.
    let mut t = Tracker::new([tokens()]);
    t.retention(TimeDelta::seconds(10));
    for s in 0..60 {
        t.ingest(&page(-3_600, 1_000.0 * (3_600 + s) as f64), at(s))
            .unwrap();
    }
    let report = t.ingest(&page(59, 3_680_000.0), at(80)).unwrap();
    assert_eq!(report.process_restarts[0].cause, ResetCause::StartTimeMoving);
    assert_eq!(total(&t), 80_000.0);
    // Started at 55 s after an outage, 12,000 tokens by 60 s where the old one counted
    // 200 a second: 2,400 a second since the start (12 times as fast), a restart.
    let mut t = Tracker::new([tokens()]);
    for s in 0..50 {
        t.ingest(&page(-3_600, 200.0 * s as f64), at(s)).unwrap();
    }
    let report = t.ingest(&page(55, 12_000.0), at(60)).unwrap();
    assert_eq!(report.process_restarts[0].cause, ResetCause::ProcessRestarted);
    assert_eq!(total(&t), 9_800.0 + 12_000.0);
}

/// A rollback with bare counters (no start time, no `_created`): the old process answers
/// again after the new one answered alone for a while. Its count leaps from the new one's
/// past where the old one dropped from, faster than the counter ever rose since: the old
/// process, not tokens (a window read 360,894 tok/s where 900 were true). The window
/// holding it is not rated, and the old process's rise since it left is counted.
#[test]
fn bare_counters_of_a_process_that_answers_again_give_no_spike() {
    let mut t = Tracker::new([tokens()]);
    let old = |s: i64| 3_600_000.0 + 1_000.0 * s as f64;
    for s in 0..30_i64 {
        let value = if (10..20).contains(&s) {
            10.0 * (s - 9) as f64
        } else {
            old(s)
        };
        t.ingest(&bare(value), at(s)).unwrap();
    }
    // The old one's 9,000 to 9 s, the new one's 10 at the drop (a restart, its whole count)
    // and 90 to 19 s, the old one's 11,000 from 9 s to 20 s and 9,000 to 29 s.
    assert_eq!(total(&t), 9_000.0 + 10.0 + 90.0 + 11_000.0 + 9_000.0);
    assert!(
        value(&t, Estimator::WindowIncrease, 10).is_err(),
        "the return is in the window"
    );
    assert_eq!(value(&t, Estimator::WindowIncrease, 9), Ok(9_000.0));
}

/// A page with a fractional start time (the page helper's are whole seconds).
fn page_ms(start_ms: i64, tokens: f64) -> String {
    format!(
        "process_start_time_seconds {}\n# TYPE tokens counter\ntokens_total {tokens}\n",
        (1_700_000_000_000 + start_ms) as f64 / 1000.0
    )
}

/// A start time computed from an uptime and rounded (Node's prom-client flips between two
/// seconds), or carrying the uptime's jitter, or creeping a few milliseconds a page, is the
/// same process: no restart, nothing erratic, every token counted. A real restart after it
/// is still one.
#[test]
fn a_start_time_that_jitters_is_the_same_process() {
    for (name, start_ms) in [
        (
            "flips between two seconds",
            (|s: i64| -100_000 + 1_000 * (s % 2)) as fn(i64) -> i64,
        ),
        ("jitters by 5 ms", |s: i64| {
            -100_000 + [0, 5, -5, 3][(s % 4) as usize]
        }),
        ("creeps 3 ms a page", |s: i64| -100_000 + 3 * s),
    ] {
        let mut t = Tracker::new([tokens()]);
        t.start_time_skew(Some(TimeDelta::minutes(5)));
        for s in 0..=600 {
            let report = t.ingest(&page_ms(start_ms(s), 100.0 * s as f64), at(s)).unwrap();
            assert!(report.process_restarts.is_empty(), "{name} at {s}: {report:?}");
        }
        assert_eq!(total(&t), 60_000.0, "{name}");
        assert_eq!(value(&t, Estimator::WindowRate, 10), Ok(100.0), "{name}");
        // A restart: the new process started 5 s ago, its count climbed past the old one.
        let report = t.ingest(&page_ms(596_000, 70_000.0), at(601)).unwrap();
        assert_eq!(
            report
                .process_restarts
                .iter()
                .map(|r| r.cause)
                .collect::<Vec<_>>(),
            [ResetCause::ProcessRestarted],
            "{name}"
        );
        assert_eq!(total(&t), 130_000.0, "{name}");
    }
}

/// An exporter whose start time is `now - 5 s` on every page (computed from a clock that
/// drifts) while its counter climbs steadily: the first move reads as a restart (the start
/// time is the evidence), the next ones, within the retention and with no counter
/// restarting, are no restarts (`StartTimeMoving`): the counter is read by its values and
/// its rate is exact, not the counter's whole value on every page.
#[test]
fn a_start_time_that_moves_on_every_page_is_no_restart_each_time() {
    let mut t = Tracker::new([tokens()]);
    t.retention(TimeDelta::seconds(60));
    let mut causes = Vec::new();
    for s in (0..=100).step_by(10) {
        let report = t
            .ingest(&page(s - 5, 100_000.0 + 1_000.0 * s as f64), at(s))
            .unwrap();
        causes.extend(report.process_restarts.iter().map(|r| r.cause));
    }
    assert_eq!(causes[0], ResetCause::ProcessRestarted);
    assert_eq!(causes.len(), 10);
    assert!(
        causes[1..].iter().all(|c| *c == ResetCause::StartTimeMoving),
        "{causes:?}"
    );
    assert_eq!(value(&t, Estimator::WindowRate, 30), Ok(1_000.0));
    // 1,000 a second: the restart the first move was read as (its 110,000) taken back
    // when the second showed the start time to be no process's.
    assert_eq!(total(&t), 100_000.0);
    assert_eq!(t.get("tokens_total", &[]).unwrap().counter().unwrap().resets(), 0);
    // A counter that does restart with the start time (a crash loop) is a restart however
    // often, its silent moves between drops included.
    let mut crashing = Tracker::new([tokens()]);
    crashing.retention(TimeDelta::seconds(60));
    let mut causes = Vec::new();
    for s in (0..=40).step_by(10) {
        let report = crashing
            .ingest(&page(s - 5, 500.0 * (s % 20) as f64 + 100.0), at(s))
            .unwrap();
        causes.extend(report.process_restarts.iter().map(|r| r.cause));
    }
    assert!(causes.contains(&ResetCause::ProcessRestarted), "{causes:?}");
    assert!(!causes.contains(&ResetCause::StartTimeMoving), "{causes:?}");
}

/// A counter an exporter prints only once it is touched: gone from the two pages after its
/// server restarted (only the start time told), back on the third above where the old
/// process left it. It restarted with its server, so it counts from zero, not from the old
/// process's value; a counter back after an absence with no restart is read as before.
#[test]
fn a_counter_back_after_its_servers_restart_counts_from_zero() {
    let with = |start: i64, other: f64, late: Option<f64>| {
        let mut page = page(start, other);
        if let Some(n) = late {
            page += &format!("# TYPE late counter\nlate_total {n}\n");
        }
        page
    };
    let late_total = |t: &Tracker| {
        t.get("late_total", &[])
            .unwrap()
            .counter()
            .unwrap()
            .total_increase()
    };
    let mut t = Tracker::new([]);
    t.ingest(&with(-100, 0.0, Some(1_000.0)), at(0)).unwrap();
    t.ingest(&with(-100, 10.0, Some(1_500.0)), at(10)).unwrap();
    // Restarted at 15 s; `late` is missing from the two pages after.
    t.ingest(&with(15, 5.0, None), at(20)).unwrap();
    t.ingest(&with(15, 15.0, None), at(30)).unwrap();
    let report = t.ingest(&with(15, 25.0, Some(1_800.0)), at(40)).unwrap();
    let late: Vec<_> = report.resets.iter().filter(|r| r.name == "late_total").collect();
    assert_eq!(late.len(), 1, "{report:?}");
    assert_eq!(late[0].cause, ResetCause::ProcessRestarted);
    // 500 before the restart, then the new process's whole 1,800.
    assert_eq!(late_total(&t), 500.0 + 1_800.0);

    let mut steady = Tracker::new([]);
    steady.ingest(&with(-100, 0.0, Some(1_000.0)), at(0)).unwrap();
    steady.ingest(&with(-100, 10.0, None), at(10)).unwrap();
    let report = steady.ingest(&with(-100, 20.0, Some(1_800.0)), at(20)).unwrap();
    assert!(report.resets.is_empty(), "{report:?}");
    assert_eq!(late_total(&steady), 800.0);
}

/// Two restarts 15 s apart, each new process's first page without its counters (printed
/// once touched): the second move is a restart too, not a start time that moves on its
/// own, since no counter went on across it.
#[test]
fn restarts_whose_first_pages_lack_the_counters_are_restarts() {
    let mut t = Tracker::new([tokens()]);
    t.retention(TimeDelta::seconds(60));
    let gauge_only = |start: i64| {
        format!(
            "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds {}\n",
            1_700_000_000 + start
        )
    };
    let mut causes = Vec::new();
    for (s, page) in [
        (0, page(-100, 1_000.0)),
        (5, page(-100, 2_000.0)),
        (10, gauge_only(8)),
        (15, page(8, 500.0)),
        (25, gauge_only(23)),
        (30, page(23, 400.0)),
    ] {
        let report = t.ingest(&page, at(s)).unwrap();
        causes.extend(report.process_restarts.iter().map(|r| r.cause));
    }
    assert_eq!(
        causes,
        [ResetCause::ProcessRestarted, ResetCause::ProcessRestarted]
    );
    // 1,000, then each new process counted from zero: 500, then 400.
    assert_eq!(total(&t), 1_000.0 + 500.0 + 400.0);
}

/// A bare page's drop (a restart, counted from zero), then a rise back above the old count
/// on a page whose start time went back to a process not seen before: that point counts
/// nothing, and taking it back takes back what it counted (its rise), never more: the
/// count since tracking began stayed at the restart's 255 (fuzzing found it going to 0).
#[test]
fn a_return_above_a_drop_takes_back_only_its_rise() {
    let mut t = Tracker::new([tokens()]);
    t.ewma_time_constant(TimeDelta::seconds(5));
    t.ingest(&page(2_000, 8_000.0), at(2)).unwrap();
    t.ingest(&bare(255.0), at(7)).unwrap();
    let report = t.ingest(&page(1_000, 35_255.0), at(15)).unwrap();
    assert_eq!(report.process_restarts[0].cause, ResetCause::StartWentBack);
    assert_eq!(total(&t), 255.0);
}

/// An erratic counter (two drops in the EWMA's memory) whose start time moves on a page
/// after a restart the start time made: taking that restart back takes back nothing, as
/// its point counted nothing, though a later point counted nothing too (fuzzing found the
/// count since tracking began at -8: only the newest such point was remembered).
#[test]
fn a_restart_taken_back_pages_later_takes_back_what_it_counted() {
    let mut t = Tracker::new([tokens()]);
    t.ewma_time_constant(TimeDelta::seconds(45));
    let page = |start: &str, n: u32| format!("process_start_time_seconds {start}\ntokens_total {n}\n");
    t.ingest("tokens_total 1\n", at(2)).unwrap();
    t.ingest(&page("1000", 0), at(19)).unwrap();
    t.ingest(&page("0", 8), at(30)).unwrap();
    t.ingest(&page("2000.5", 44_008), at(31)).unwrap();
    let report = t.ingest(&page("3000", 88_008), at(40)).unwrap();
    assert_eq!(report.process_restarts[0].cause, ResetCause::StartTimeMoving);
    assert_eq!(total(&t), 0.0);
}

/// A `_created` of 0 is no time (as Prometheus reads a start time of 0): the counter
/// goes on by its values, and no restart is read where the page says 0 (fuzzing found
/// the whole count counted again at each move between 0 and a real time).
#[test]
fn a_created_time_of_zero_is_unknown() {
    let mut t = Tracker::new([tokens()]);
    let page = |n: u32, created: i64| format!("tokens_total {n}\ntokens_created {created}\n");
    t.ingest(&page(155_000, 1_700_000_000), at(0)).unwrap();
    let report = t.ingest(&page(155_100, 0), at(10)).unwrap();
    assert!(report.resets.is_empty(), "{:?}", report.resets);
    t.ingest(&page(155_300, 1_700_000_000), at(20)).unwrap();
    assert_eq!(total(&t), 300.0);
}

/// A process that answers again after its last point left the retention, told by its
/// `_created`: its rise since it left is counted once, not also its whole count as a
/// restart's (fuzzing found both counted: the created times kept with the points no
/// longer held its own, the processes that left still did).
#[test]
fn a_process_back_after_its_points_expired_counts_its_rise_once() {
    let mut t = Tracker::new([tokens()]);
    t.retention(TimeDelta::seconds(30));
    let page =
        |n: u32, created: i64| format!("tokens_total {n}\ntokens_created {}\n", 1_700_000_000 + created);
    t.ingest(&page(1_000, -3_600), at(0)).unwrap();
    t.ingest(&page(2_000, -3_600), at(10)).unwrap();
    // Two others answer in turn for 100 s, then the first again, 5,000 higher.
    for s in 2..12 {
        t.ingest(&page(100 * s, 5 + i64::from(s % 2)), at(10 * i64::from(s)))
            .unwrap();
    }
    let before = total(&t);
    t.ingest(&page(7_000, -3_600), at(120)).unwrap();
    assert_eq!(total(&t) - before, 5_000.0);
}

/// A process whose start the target no longer keeps (older than the retention) answers
/// again: the counter saw it leave, so its rise since is counted, not also its whole
/// count as a restart's (fuzzing found both counted).
#[test]
fn a_process_back_after_the_target_forgot_its_start_counts_its_rise_once() {
    let mut t = Tracker::new([tokens()]);
    t.retention(TimeDelta::seconds(30));
    t.ingest(&page(15, 1_000.0), at(20)).unwrap();
    t.ingest(&page(15, 2_000.0), at(30)).unwrap();
    // A process up for an hour answers for ten minutes, one up for two hours for half a
    // minute (the target keeps the starts of its retention), then the first again, 5,000
    // higher.
    for s in 4..60 {
        t.ingest(&page(-3_600, 100.0 + s as f64), at(10 * s)).unwrap();
    }
    for s in 60..64 {
        t.ingest(&page(-7_200, 50.0 + s as f64), at(10 * s)).unwrap();
    }
    let before = total(&t);
    let report = t.ingest(&page(15, 7_000.0), at(640)).unwrap();
    assert_eq!(report.process_restarts[0].cause, ResetCause::ProcessRestarted);
    assert_eq!(total(&t) - before, 5_000.0);
}

/// A restart read while the target was erratic (its start went back within the
/// retention) counts nothing; a start that then proves to be no process's takes that
/// restart back, and has nothing to take. Fuzzing (`process_switches`) found the value
/// before it taken: a count since tracking began of -307,868 on the last of these pages
/// (two targets, 63 pages: `t=` and the page's time, then its lines).
#[test]
fn a_restart_that_counted_nothing_is_taken_back_for_nothing() {
    let mut t = Tracker::new([tokens()]);
    t.retention(TimeDelta::seconds(120))
        .ewma_time_constant(TimeDelta::seconds(65))
        .stale_after(1);
    let run = include_str!("../../../tests/data/fuzz/process_switches-99e6b91e.txt");
    for block in run.split("t=").filter(|b| !b.is_empty()) {
        let (s, page) = block.split_once('\n').unwrap();
        let s: i64 = s.parse().unwrap();
        t.ingest(page, DateTime::from_timestamp(1_700_000_000 + s, 0).unwrap())
            .unwrap();
        for series in t.series() {
            let total = series.counter().map_or(0.0, |c| c.total_increase());
            assert!(total >= 0.0, "{total} at {s}");
        }
    }
}
