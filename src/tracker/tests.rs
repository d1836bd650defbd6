//! Tracker behaviour over whole scrapes: identity, staleness, created times, roles.

use super::*;
use crate::error::{IngestError, NoValue, QueryError, SeriesError};
use crate::select::Selector;
use crate::series::{ResetCause, WindowRule};
use crate::{Estimator, Query};

fn at(s: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_700_000_000 + s, 0).unwrap()
}

fn window_increase(t: &Tracker, name: &str, labels: &[(&str, &str)], window: i64, now: i64) -> Option<f64> {
    let rule = WindowRule::new(TimeDelta::seconds(window));
    Some(
        t.get(name, labels)?
            .counter()?
            .window_increase(&rule, at(now))
            .ok()?
            .increase,
    )
}

#[test]
fn identity_ignores_label_order_and_positions() {
    let mut t = Tracker::new([]);
    t.ingest("a_total{x=\"1\",y=\"2\"} 1\nb_total 10\n", at(0))
        .unwrap();
    // Same series, labels reordered and the lines swapped.
    let report = t
        .ingest("b_total 15\na_total{y=\"2\",x=\"1\"} 4\n", at(10))
        .unwrap();
    assert_eq!((t.len(), report.new_series, report.samples), (2, 0, 2));
    assert_eq!(
        window_increase(&t, "a_total", &[("x", "1"), ("y", "2")], 10, 10),
        Some(3.0)
    );
    assert_eq!(window_increase(&t, "b_total", &[], 10, 10), Some(5.0));
    // A different series at a cached position is not mistaken for the old one.
    t.ingest("a_total{x=\"1\",y=\"3\"} 7\nb_total 20\n", at(20))
        .unwrap();
    assert_eq!(t.len(), 3);
    assert_eq!(
        window_increase(&t, "a_total", &[("x", "1"), ("y", "3")], 10, 20),
        None
    );
}

/// A label with an empty value is no label, as Prometheus drops it when it scrapes: an
/// exporter that writes `foo=""` on one page and leaves it out on the next serves one
/// series, and one page with both serves it twice (the first is kept).
#[test]
fn an_empty_label_value_is_no_label() {
    let mut t = Tracker::new([]);
    t.ingest(
        "x_total{foo=\"\"} 1\n# TYPE h histogram\nh_bucket{le=\"1\",pod=\"\"} 2\nh_created{pod=\"\"} 50\n",
        at(0),
    )
    .unwrap();
    let report = t
        .ingest(
            "x_total 3\n# TYPE h histogram\nh_bucket{le=\"1\"} 4\nh_created 50\n",
            at(10),
        )
        .unwrap();
    assert_eq!((t.len(), report.new_series, report.samples), (2, 0, 2));
    assert_eq!(window_increase(&t, "x_total", &[], 10, 10), Some(2.0));
    assert_eq!(window_increase(&t, "x_total", &[("foo", "")], 10, 10), Some(2.0));
    assert!(t.get("x_total", &[("foo", "")]).is_some());
    assert_eq!(t.get("x_total", &[]).unwrap().labels().count(), 0);
    // The bucket's labels hold no empty `pod`, so its `_created` (spelled either way) is found.
    let bucket = t.get("h_bucket", &[("le", "1")]).unwrap();
    assert_eq!(bucket.labels().count(), 1);
    let report = t
        .ingest("x_total{foo=\"\"} 4\nx_total 9\n# TYPE h histogram\nh_bucket{le=\"1\"} 5\nh_created{pod=\"\"} 70\n", at(20))
        .unwrap();
    assert_eq!((report.samples, report.refused), (2, 1));
    assert_eq!(
        report.first_refused.unwrap().error,
        SeriesError::Duplicate { at: at(20) }
    );
    assert_eq!(t.get("x_total", &[]).unwrap().last_value(), Some(4.0));
    assert_eq!(
        report.resets.len(),
        1,
        "the bucket's created time moved: {:?}",
        report.resets
    );
}

/// A quoted name with escapes is kept as selectors and `get` spell it (unescaped), so
/// that a selector that matches the sample finds its series, counter and `_created` alike.
#[test]
fn a_quoted_name_with_escapes_is_found_as_selectors_spell_it() {
    let mut t = Tracker::new([]);
    let page = |v: u32| {
        format!(
            "# TYPE \"my\\\"m\" counter\n{{\"my\\\"m_total\",k=\"a\\\"b\"}} {v}\n\
             {{\"my\\\"m_created\",k=\"a\\\"b\"}} 1699999000\n"
        )
    };
    t.ingest(&page(1), at(0)).unwrap();
    t.ingest(&page(11), at(10)).unwrap();
    let series = t.get("my\"m_total", &[("k", "a\"b")]).expect("found unescaped");
    assert_eq!(series.name(), "my\"m_total");
    assert!(
        t.get("my\\\"m_total", &[("k", "a\"b")]).is_none(),
        "not by its escaped spelling"
    );
    let selector = Selector::parse(r#"{"my\"m_total"}"#).unwrap();
    let rate = Query::new(&selector, Estimator::WindowRate).window(TimeDelta::seconds(10));
    assert_eq!(t.evaluate(&rate).unwrap().value().unwrap(), 1.0);
    // The start time found its counter: a created time that moves is a restart.
    t.ingest(&page(12).replace("1699999000", "1700000015"), at(20))
        .unwrap();
    assert_eq!(
        t.get("my\"m_total", &[("k", "a\"b")])
            .unwrap()
            .counter()
            .unwrap()
            .resets(),
        1
    );
    // A quoted label name with escapes, likewise.
    t.ingest("{\"q_total\",\"l\\\"x\"=\"v\"} 1\n", at(30)).unwrap();
    assert!(t.get("q_total", &[("l\"x", "v")]).is_some());
    let selector = Selector::parse(r#"{"q_total", "l\"x"="v"}"#).unwrap();
    let last = t.evaluate(&Query::new(&selector, Estimator::Last)).unwrap();
    assert_eq!(last.value().unwrap(), 1.0);
}

/// An answer of several groups has no one value: `value` says so instead of giving the
/// first group's (adding `by` to a query must not quietly change what it answers).
#[test]
fn an_answer_of_several_groups_has_no_one_value() {
    let mut t = Tracker::new([]);
    t.ingest(
        "t_total{engine=\"0\",job=\"a\"} 0\nt_total{engine=\"1\",job=\"a\"} 0\n",
        at(0),
    )
    .unwrap();
    t.ingest(
        "t_total{engine=\"0\",job=\"a\"} 30\nt_total{engine=\"1\",job=\"a\"} 70\n",
        at(10),
    )
    .unwrap();
    let selector = Selector::parse("t_total").unwrap();
    let query = Query::new(&selector, Estimator::WindowIncrease).window(TimeDelta::seconds(10));
    assert_eq!(t.evaluate(&query).unwrap().value(), Ok(100.0));
    let by_engine = t.evaluate(&query.clone().by(["engine"])).unwrap();
    assert_eq!(by_engine.value(), Err(NoValue::SeveralGroups { groups: 2 }));
    assert_eq!(by_engine.group(&["1"]).unwrap().value, Ok(70.0));
    // One group (every series has the same job): its value.
    assert_eq!(t.evaluate(&query.by(["job"])).unwrap().value(), Ok(100.0));
}

/// A window of zero or less is refused, as one over the retention is, whichever estimator
/// asks.
#[test]
fn a_window_of_zero_or_less_is_refused() {
    let mut t = Tracker::new([]);
    t.ingest("t_total 0\n", at(0)).unwrap();
    t.ingest("t_total 10\n", at(10)).unwrap();
    let selector = Selector::parse("t_total").unwrap();
    for estimator in [
        Estimator::WindowRate,
        Estimator::Rate,
        Estimator::Increase,
        Estimator::Average,
    ] {
        for window in [TimeDelta::seconds(-5), TimeDelta::zero()] {
            let refused = t.evaluate(&Query::new(&selector, estimator).window(window));
            assert_eq!(
                refused.unwrap_err(),
                QueryError::WindowNotPositive { window },
                "{estimator:?}"
            );
        }
    }
}

#[test]
fn stale_series_are_dropped_and_can_come_back() {
    let mut t = Tracker::new([]);
    t.stale_after(2);
    t.ingest("a_total 1\nb_total 1\n", at(0)).unwrap();
    assert_eq!(t.ingest("b_total 2\n", at(1)).unwrap().dropped_stale, 0);
    assert_eq!(t.ingest("b_total 3\n", at(2)).unwrap().dropped_stale, 1);
    assert!(t.get("a_total", &[]).is_none());
    let report = t.ingest("a_total 5\nb_total 4\n", at(3)).unwrap();
    assert_eq!((report.new_series, t.len()), (1, 2));
    assert_eq!(t.get("b_total", &[]).unwrap().last_value(), Some(4.0));
}

#[test]
fn selectors_and_roles() {
    let page = "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 2\n\
                # TYPE g gauge\ng 5\nu_total 7\nother 1\n";
    let mut t = Tracker::new([Selector::parse(r#"{__name__!="other", __name__!=""}"#).unwrap()]);
    t.ingest(page, at(0)).unwrap();
    assert_eq!(t.len(), 6);
    assert!(t.get("h_sum", &[]).unwrap().counter().is_some());
    assert!(t.get("g", &[]).unwrap().gauge().is_some());
    assert!(t.get("u_total", &[]).unwrap().counter().is_some());
    assert!(t.get("other", &[]).is_none());
    assert!(matches!(
        t.ingest(page, at(0)),
        Err(IngestError::NotAfterLast { .. })
    ));
    // Within the same millisecond: refused, and both times read as the tracker compares
    // them, so the message never says a later time is not after an earlier one.
    let refused = t
        .ingest(page, at(0) + chrono::TimeDelta::microseconds(900))
        .unwrap_err();
    assert_eq!(
        refused,
        IngestError::NotAfterLast {
            at: at(0),
            last: at(0)
        }
    );
}

/// A changed created time reveals a restart the value hides, whether the page prints
/// `x_created` after `x_total` (prometheus_client) or before it (other exporters).
#[test]
fn created_time_reveals_a_restart_the_value_hides() {
    let counter = |v: u32| format!("# TYPE x_total counter\nx_total{{k=\"a\"}} {v}\n");
    let created = |c: u32| format!("# TYPE x_created gauge\nx_created{{k=\"a\"}} {c}\n");
    for created_first in [false, true] {
        let page = |v: u32, c: u32| match created_first {
            false => counter(v) + &created(c),
            true => created(c) + &counter(v),
        };
        let mut t = Tracker::new([]);
        t.ingest(&page(100, 1000), at(0)).unwrap();
        assert!(t.ingest(&page(150, 1000), at(10)).unwrap().resets.is_empty());
        let report = t.ingest(&page(170, 1_700_000_015), at(20)).unwrap();
        assert_eq!(
            report.resets.len(),
            1,
            "created first: {created_first}: {report:?}"
        );
        assert_eq!(report.resets[0].cause, ResetCause::CreatedChanged);
        // 50, then 170 counted from zero after the restart.
        assert_eq!(window_increase(&t, "x_total", &[("k", "a")], 20, 20), Some(220.0));
        let times = t
            .get("x_total", &[("k", "a")])
            .unwrap()
            .counter()
            .unwrap()
            .created_times()
            .collect::<Vec<_>>();
        // Printed first, the created time of the first scrape is only known from the second.
        let time = |ms| DateTime::from_timestamp_millis(ms);
        let first = if created_first { None } else { time(1_000_000) };
        assert_eq!(times, [first, time(1_000_000), time(1_700_000_015_000)]);
    }
}

/// A page of the counter `x` at `value`, its `x_created` (seconds) printed after it, as
/// prometheus_client prints it, or before it.
fn counter_page(created_first: bool, value: u32, created: u32) -> String {
    let (counter, created) = (format!("x_total {value}\n"), format!("x_created {created}\n"));
    let body = if created_first {
        created + &counter
    } else {
        counter + &created
    };
    format!("# TYPE x counter\n{body}")
}

/// A restart whose count drops and whose created time, printed after it (prometheus_client,
/// so vLLM), is new: the counter keeps counting through it. Before, the drop was marked
/// unexplained when the count was read, its climb past the old value was then taken for a
/// second process's value, and the counter counted nothing while both were remembered:
/// a real exporter restarted at 5,000 tok/s showed `-` for two rows, and its summary lost
/// a third of the tokens.
#[test]
fn a_restart_whose_created_time_follows_its_drop_keeps_counting() {
    for created_first in [false, true] {
        let page = |v: u32, c: u32| counter_page(created_first, v, c);
        let mut t = Tracker::new([]);
        t.ewma_time_constant(TimeDelta::seconds(30));
        for (s, value, created) in [
            (0, 100, 1000),
            (1, 600, 1000),
            (2, 1100, 1000),
            (3, 300, 1_700_000_002),
        ] {
            t.ingest(&page(value, created), at(s)).unwrap();
        }
        for (s, value) in [(4, 5300), (5, 10300)] {
            let report = t.ingest(&page(value, 1_700_000_002), at(s)).unwrap();
            assert!(report.resets.is_empty(), "{report:?}");
        }
        let counter = t.get("x_total", &[]).unwrap().counter().unwrap();
        // 1,000 before the restart, 300 at it, 10,000 after.
        assert_eq!(
            counter.total_increase(),
            11_300.0,
            "created first: {created_first}"
        );
        assert!(counter.ewma_rate().is_some(), "rated");
        assert!(counter.ewma_erratic().is_ok(), "not erratic");
    }
}

/// Two processes behind a sticky balancer, each answering several pages in a row, their
/// `_created` printed after the count (prometheus_client): each one's rise between its own
/// pages is counted once, and only that (a helper's sweep counted a return twice, by its
/// leap and by its created time: up to 20% over).
#[test]
fn processes_behind_a_sticky_balancer_are_each_counted_once() {
    let turns = "AABBBAABAAABBAAABBBB";
    for skew in [None, Some(TimeDelta::minutes(5))] {
        let mut t = Tracker::new([]);
        t.start_time_skew(skew);
        let mut last = [None, None];
        let mut expected = 0;
        for (s, who) in turns.bytes().enumerate() {
            let s = s as u32;
            // A at 100/s from 5,000,000 (created at 1,000 s), B at 40/s from 2,000 (1,001 s).
            let (i, value, created) = if who == b'A' {
                (0, 5_000_000 + 100 * s, 1000)
            } else {
                (1, 2000 + 40 * s, 1001)
            };
            // B's first page: a restart without a skew (its whole count), a process
            // that was running already with one.
            expected += match last[i] {
                Some(before) => value - before,
                None if i == 1 && skew.is_none() => value,
                None => 0,
            };
            last[i] = Some(value);
            t.ingest(&counter_page(false, value, created), at(i64::from(s)))
                .unwrap();
        }
        let counter = t.get("x_total", &[]).unwrap().counter().unwrap();
        assert_eq!(counter.total_increase(), f64::from(expected), "skew {skew:?}");
    }
}

/// Two processes behind one URL, started a second apart (replicas of one deployment, well
/// within any clock skew allowed), answering in turn: each switch looked like a restart and
/// counted the other's whole count again, and the total ran away (+839% in a trial, the
/// monitor's rows climbing without bound). A start time that returns to one an earlier
/// page had cannot be a restart: from there, each process's rise since its own newest
/// page is counted, and the counter is not rated while a switch is in its window.
#[test]
fn two_processes_in_turn_are_not_counted_as_restarts() {
    for skew in [None, Some(TimeDelta::minutes(5))] {
        for created_first in [false, true] {
            let page = |v: u32, c: u32| counter_page(created_first, v, c);
            let mut t = Tracker::new([]);
            t.start_time_skew(skew).ewma_time_constant(TimeDelta::seconds(10));
            for s in 0..20u32 {
                // A at 100/s from 5,000 (up since 1,000 s), B at 40/s from 2,000 (1,001 s).
                let (value, created) = if s % 2 == 0 {
                    (5000 + 100 * s, 1000)
                } else {
                    (2000 + 40 * s, 1001)
                };
                t.ingest(&page(value, created), at(i64::from(s))).unwrap();
            }
            let counter = t.get("x_total", &[]).unwrap().counter().unwrap();
            // Each process's own rise between its pages (A's 1,800 from 5,000, B's 720
            // from 2,040), not the 78,000 of a count taken anew at every switch; and what
            // no evidence can tell: without a skew the first switch is a restart (B's
            // 2,040); when `x_created` comes first, the first page's created time is known
            // only from the second, so A's first return is one too (5,200, its first rise
            // lost), or with a skew the first switch (B's 2,040, A's first rise lost).
            let exact = match (skew.is_some(), created_first) {
                (false, false) => 2_040.0 + 1_800.0 + 720.0,
                (false, true) => 2_040.0 + 5_200.0 + 1_600.0 + 720.0,
                (true, false) => 1_800.0 + 720.0,
                (true, true) => 2_040.0 + 1_600.0 + 720.0,
            };
            assert_eq!(
                counter.total_increase(),
                exact,
                "skew {skew:?}, created first {created_first}"
            );
            assert!(counter.ewma_erratic().is_err(), "not rated while the two answer");
        }
    }
}

#[test]
fn a_reused_slot_is_not_mistaken_for_its_old_series() {
    let mut t = Tracker::new([]);
    t.stale_after(1);
    t.ingest("a_total 1\n", at(0)).unwrap();
    t.ingest("b_total 5\n", at(1)).unwrap();
    let report = t.ingest("b_total 7\n", at(2)).unwrap();
    assert_eq!((report.samples, report.new_series), (1, 0));
    assert!(t.get("a_total", &[]).is_none());
    assert_eq!(window_increase(&t, "b_total", &[], 1, 2), Some(2.0));
}

/// Every parser limit fails the whole scrape, as Prometheus does, and changes nothing.
#[test]
fn a_scrape_over_a_limit_is_refused_whole() {
    use crate::{error::ParseErrorKind, Format, Parser};
    let good = "a_total{k=\"1\"} 1\nb_total 1\n";
    let over =
        "a_total{k=\"1\"} 2\nb_total 2\nc_total{k=\"1\",l=\"2\",m=\"3\"} 2\nd_total{long_name=\"x\"} 2\n";
    let limited = [
        (
            Parser::new(Format::PrometheusText).sample_limit(3),
            ParseErrorKind::SampleLimit { limit: 3, samples: 4 },
        ),
        (
            Parser::new(Format::PrometheusText).label_limit(2),
            ParseErrorKind::LabelLimit { limit: 2, labels: 3 },
        ),
        (
            Parser::new(Format::PrometheusText).label_name_length_limit(4),
            ParseErrorKind::LabelNameLengthLimit { limit: 4, length: 9 },
        ),
        (
            Parser::new(Format::PrometheusText).body_size_limit(good.len()),
            ParseErrorKind::BodySizeLimit {
                limit: good.len(),
                size: over.len(),
            },
        ),
    ];
    for (parser, kind) in limited {
        let mut t = Tracker::new([]);
        t.parser(parser);
        t.ingest(good, at(0)).unwrap();
        match t.ingest(over, at(10)) {
            Err(IngestError::Limit(e)) => assert_eq!(e.kind, kind),
            other => panic!("{kind:?}: {other:?}"),
        }
        assert_eq!((t.len(), t.scrapes()), (2, 1), "{kind:?}");
        assert_eq!(t.get("a_total", &[("k", "1")]).unwrap().last_value(), Some(1.0));
        // The next scrape within the limits is taken, at a later time than the refused one.
        t.ingest(good.replace(" 1\n", " 3\n").as_str(), at(20)).unwrap();
        assert_eq!(
            window_increase(&t, "a_total", &[("k", "1")], 20, 20),
            Some(2.0),
            "{kind:?}"
        );
    }
}

/// `max_series` refuses a page that would add too many series, with none half-created.
#[test]
fn max_series_bounds_the_tracker() {
    let page = |n: usize, v: u32| {
        (0..n)
            .map(|i| format!("s_total{{i=\"{i}\"}} {v}\n"))
            .collect::<String>()
    };
    let mut t = Tracker::new([]);
    t.max_series(100);
    t.ingest(&page(100, 1), at(0)).unwrap();
    assert_eq!(t.len(), 100);
    assert_eq!(
        t.ingest(&page(101, 2), at(10)),
        Err(IngestError::SeriesLimit {
            limit: 100,
            series: 101
        })
    );
    assert_eq!((t.len(), t.scrapes()), (100, 1));
    assert_eq!(t.get("s_total", &[("i", "5")]).unwrap().last_value(), Some(1.0));
    // A page of known series within the bound goes on as usual.
    t.ingest(&page(100, 3), at(20)).unwrap();
    assert_eq!(window_increase(&t, "s_total", &[("i", "5")], 20, 20), Some(2.0));
}

#[test]
fn exposed_timestamps_repeat_without_a_new_point_and_never_go_back() {
    let mut t = Tracker::new([]);
    let ms = |s: i64| (1_700_000_000 + s) * 1000;
    t.ingest(&format!("a_total 5 {}\ng 1 {}\n", ms(0), ms(0)), at(1))
        .unwrap();
    // A federation serves the same point until its next scrape.
    let report = t
        .ingest(&format!("a_total 5 {}\ng 1 {}\n", ms(0), ms(0)), at(2))
        .unwrap();
    assert_eq!((report.samples, report.repeated, report.refused), (0, 2, 0));
    assert_eq!(report.first_refused, None);
    let a = t.get("a_total", &[]).unwrap().counter().unwrap();
    assert_eq!(a.len(), 1);
    // Back in time: refused for that series alone, which keeps its point.
    let report = t
        .ingest(&format!("a_total 4 {}\ng 2 {}\n", ms(-5), ms(3)), at(3))
        .unwrap();
    assert_eq!((report.samples, report.repeated, report.refused), (1, 0, 1));
    let refusal = report.first_refused.unwrap();
    assert_eq!(refusal.name, "a_total");
    assert_eq!(
        refusal.error,
        SeriesError::NotAfterLast {
            at: DateTime::from_timestamp_millis(ms(-5)).unwrap(),
            last: DateTime::from_timestamp_millis(ms(0)).unwrap(),
        }
    );
    let a = t.get("a_total", &[]).unwrap().counter().unwrap();
    assert_eq!((a.len(), a.resets(), a.last().unwrap().value), (1, 0, 5.0));
    // The same timestamp with another value is no repeat either.
    let report = t.ingest(&format!("a_total 6 {}\n", ms(0)), at(4)).unwrap();
    assert_eq!((report.repeated, report.refused), (0, 1));
    // Not stale: a repeated point still shows the series is there.
    assert_eq!(t.len(), 2);
}

#[test]
fn federated_untyped_families_are_counters_when_inferred() {
    // As Prometheus' /federate writes them: every family untyped, sorted, with timestamps.
    let page = |v: u32, ts: i64| {
        format!(
            "# TYPE vllm_e2e_bucket untyped\n\
             vllm_e2e_bucket{{instance=\"a\",le=\"1\"}} {v} {ts}\n\
             vllm_e2e_bucket{{instance=\"a\",le=\"+Inf\"}} {v} {ts}\n\
             # TYPE vllm_e2e_count untyped\nvllm_e2e_count{{instance=\"a\"}} {v} {ts}\n\
             # TYPE vllm_e2e_sum untyped\nvllm_e2e_sum{{instance=\"a\"}} {v} {ts}\n\
             # TYPE vllm_generation_tokens_total untyped\n\
             vllm_generation_tokens_total{{instance=\"a\"}} {v} {ts}\n\
             # TYPE vllm_num_requests_running untyped\nvllm_num_requests_running{{instance=\"a\"}} 3 {ts}\n\
             # TYPE thread_count untyped\nthread_count{{instance=\"a\"}} 3 {ts}\n"
        )
    };
    let ms = |s: i64| (1_700_000_000 + s) * 1000;
    let kinds = |t: &Tracker| {
        let mut kinds: Vec<(String, bool)> = t
            .series()
            .map(|s| (s.name().to_string(), s.counter().is_some()))
            .collect();
        kinds.sort();
        kinds.dedup();
        kinds
    };
    let mut plain = Tracker::new([]);
    plain.ingest(&page(10, ms(0)), at(1)).unwrap();
    assert!(
        kinds(&plain).iter().all(|(_, counter)| !counter),
        "declared untyped: gauges"
    );

    let mut t = Tracker::new([]);
    t.infer_counters(true).normalize_names(true);
    t.ingest(&page(10, ms(0)), at(1)).unwrap();
    let want = [
        ("thread_count", false),
        ("vllm_e2e_bucket", true),
        ("vllm_e2e_count", true),
        ("vllm_e2e_sum", true),
        ("vllm_generation_tokens_total", true),
        ("vllm_num_requests_running", false),
    ];
    let want: Vec<(String, bool)> = want.iter().map(|(n, c)| (n.to_string(), *c)).collect();
    assert_eq!(kinds(&t), want);
    // A restart seen through the federation is a counter reset.
    let report = t.ingest(&page(2, ms(10)), at(11)).unwrap();
    assert_eq!(report.resets.len(), 5);
    let selector = crate::Selector::parse("vllm:generation_tokens_total").unwrap();
    let query = Query::new(&selector, Estimator::WindowIncrease)
        .window(TimeDelta::seconds(10))
        .by(["instance"]);
    assert_eq!(t.evaluate(&query).unwrap().groups[0].value, Ok(2.0));
}

#[test]
fn families_are_learned_before_their_count_whatever_the_order() {
    // VictoriaMetrics' export is not sorted: `_count` may come before `_bucket`.
    let mut t = Tracker::new([]);
    t.infer_counters(true);
    t.ingest(
        "# TYPE h_count untyped\nh_count 3\n# TYPE h_bucket untyped\nh_bucket{le=\"+Inf\"} 3\n",
        at(1),
    )
    .unwrap();
    assert!(t.get("h_count", &[]).unwrap().counter().is_some());
}

mod line_recognition {
    use proptest::prelude::*;

    use super::super::agreement::{chunks_agree, line_recognition_agrees};

    /// Identities the generated pages draw from: plain, colon, escaped, histogram parts,
    /// created times, a label-less gauge, two that differ only after a shared prefix, and
    /// two instances' process start times.
    const KEYS: &[&str] = &[
        "process_start_time_seconds{instance=\"x\"}",
        "process_start_time_seconds{instance=\"y\"}",
        "a_total{instance=\"x\"}",
        "a_total",
        "a_total{k=\"1\"}",
        "a_total{k=\"10\"}",
        "vllm:x_total{engine=\"0\",model_name=\"m\"}",
        "vllm_x_total{engine=\"0\",model_name=\"m\"}",
        "e_total{path=\"a\\\"b\\\\c\\n\"}",
        "h_bucket{le=\"1\"}",
        "h_bucket{le=\"+Inf\"}",
        "h_count",
        "h_sum",
        "h_created",
        "a_created{k=\"1\"}",
        "g",
        "g{}",
        "{\"quoted.name\",k=\"1\"}",
    ];
    const METADATA: &[&str] = &[
        "# TYPE a counter",
        "# TYPE h histogram",
        "# TYPE h_bucket untyped",
        "# TYPE g gauge",
        "# HELP a text",
        "# arbitrary comment",
        "",
    ];
    const VALUES: &[&str] = &[
        "0",
        "1",
        "2.5",
        "1e3",
        "17.000000000000004",
        "-1",
        "NaN",
        "+Inf",
        "abc",
        "1 2 3",
        "",
    ];
    const SEPARATORS: &[&str] = &[" ", "\t", "  "];

    /// One line: metadata, or a sample with a separator, value, optional timestamp and ending.
    fn line() -> impl Strategy<Value = String> {
        prop_oneof![
            1 => prop::sample::select(METADATA).prop_map(|m| format!("{m}\n")),
            6 => (
                prop::sample::select(KEYS),
                prop::sample::select(SEPARATORS),
                prop::sample::select(VALUES),
                prop::option::of(0i64..4),
                any::<bool>(),
            )
                .prop_map(|(key, sep, value, ts, crlf)| {
                    let ts = ts.map_or(String::new(), |t| format!(" {}", 1_700_000_000_000 + t * 1000));
                    format!("{key}{sep}{value}{ts}{}", if crlf { "\r\n" } else { "\n" })
                }),
        ]
    }

    /// A page, and the next ones: mostly the same lines with other values, as real
    /// scrapes are, sometimes reordered or cut.
    fn pages() -> impl Strategy<Value = Vec<(String, i64)>> {
        (
            prop::collection::vec(line(), 1..14),
            prop::collection::vec((any::<u64>(), 0u8..6), 1..6),
        )
            .prop_map(|(lines, steps)| {
                let mut pages = Vec::new();
                let mut seconds = 0;
                for (seed, kind) in steps {
                    seconds += 1 + (seed % 3) as i64;
                    let mut page_lines = lines.clone();
                    match kind {
                        // New values on the same lines.
                        0..=2 => {
                            for (i, l) in page_lines.iter_mut().enumerate() {
                                if let Some(at) = l.rfind([' ', '\t']) {
                                    if !l.starts_with('#') && (seed >> (i % 60)) & 1 == 1 {
                                        let value = VALUES[(seed as usize + i) % VALUES.len()];
                                        *l = format!("{}{value}\n", &l[..at + 1]);
                                    }
                                }
                            }
                        }
                        3 => {
                            let by = (seed % 5) as usize % page_lines.len().max(1);
                            page_lines.rotate_left(by);
                        }
                        4 => page_lines.truncate(page_lines.len() / 2),
                        _ => {}
                    }
                    pages.push((page_lines.concat(), seconds));
                }
                pages
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn recognising_known_lines_changes_nothing(
            pages in pages(),
            normalize in any::<bool>(),
            infer in any::<bool>(),
            stale_after in 1u32..3,
        ) {
            let pages: Vec<(&str, i64)> = pages.iter().map(|(p, s)| (p.as_str(), *s)).collect();
            line_recognition_agrees(&pages, normalize, infer, stale_after);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        /// The same pages read in chunks cut anywhere, under any settings (format,
        /// strictness, selectors, every limit): the same reports, refusals and series.
        #[test]
        fn reading_in_chunks_changes_nothing(
            pages in pages(),
            cuts in prop::collection::vec(any::<u16>(), 0..8),
            setting in any::<u16>(),
        ) {
            let pages: Vec<(&str, i64)> = pages.iter().map(|(p, s)| (p.as_str(), *s)).collect();
            let cuts: Vec<usize> = cuts.into_iter().map(usize::from).collect();
            chunks_agree(&pages, &cuts, setting);
        }
    }

    #[test]
    fn real_pages_agree() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/vllm");
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
        let (t0, t10) = (
            read("vllm-0.33-v1-single-t0.prom"),
            read("vllm-0.33-v1-single-t10.prom"),
        );
        let pages = [
            (t0.as_str(), 0),
            (t10.as_str(), 10),
            (t0.as_str(), 20),
            (t10.as_str(), 30),
        ];
        line_recognition_agrees(&pages, true, true, 5);
        line_recognition_agrees(&pages, false, false, 1);
    }
}

#[test]
fn an_export_of_a_range_records_each_sample_once() {
    // VictoriaMetrics' /api/v1/export/prometheus: every sample of the range, oldest first,
    // no `# TYPE`; the next export overlaps the last.
    let ms = |s: i64| (1_700_000_000 + s) * 1000;
    let page = |from: i64| -> String {
        (from..from + 3)
            .map(|s| {
                format!(
                    "vllm:generation_tokens_total{{instance=\"a\"}} {} {}\nh_bucket{{le=\"+Inf\"}} {s} {}\n",
                    100 * s,
                    ms(s),
                    ms(s)
                )
            })
            .collect()
    };
    let mut t = Tracker::new([]);
    t.infer_counters(true);
    let first = t.ingest(&page(0), at(3)).unwrap();
    assert_eq!((first.samples, first.repeated, first.refused), (6, 0, 0));
    let next = t.ingest(&page(1), at(4)).unwrap();
    assert_eq!((next.samples, next.repeated, next.refused), (2, 4, 0));
    let tokens = t
        .get("vllm:generation_tokens_total", &[("instance", "a")])
        .unwrap()
        .counter()
        .unwrap();
    assert_eq!(tokens.len(), 4);
    let w = tokens
        .window_increase(&WindowRule::new(TimeDelta::seconds(3)), at(3))
        .unwrap();
    assert_eq!(w.rate(), 100.0);
}

/// The README's memory figures rest on these sizes (a fleet tracker holds millions).
#[test]
fn a_series_stays_small() {
    assert!(std::mem::size_of::<TrackedSeries>() <= 112);
    assert!(std::mem::size_of::<crate::series::CounterSeries>() <= 80);
    assert_eq!(
        std::mem::size_of::<Option<TrackedSeries>>(),
        std::mem::size_of::<TrackedSeries>()
    );
}

/// `Tracker::max_series` documents what a held-back sample costs.
#[test]
fn a_held_sample_is_16_bytes() {
    assert_eq!(std::mem::size_of::<super::Held>(), 16);
}

/// A page held back (`max_series` set) keeps each sample's own time: a `/federate` page
/// stamps each target's samples with its scrape.
#[test]
fn held_samples_keep_their_own_times() {
    let page = |n: i64| {
        format!(
            "# TYPE a counter\na_total{{i=\"1\"}} {n} {t1}\na_total{{i=\"2\"}} {n} {t2}\na_total{{i=\"3\"}} {n} {t2}\n",
            t1 = 10_000 * n + 100,
            t2 = 10_000 * n + 700,
        )
    };
    let mut held = Tracker::new([]);
    held.max_series(10);
    let mut plain = Tracker::new([]);
    for n in 1..4 {
        held.ingest(&page(n), at(10 * n + 5)).unwrap();
        plain.ingest(&page(n), at(10 * n + 5)).unwrap();
    }
    let times = |t: &Tracker| -> Vec<Vec<i64>> {
        t.series()
            .map(|s| {
                s.counter()
                    .unwrap()
                    .points()
                    .iter()
                    .map(|p| p.timestamp_ms)
                    .collect()
            })
            .collect()
    };
    assert_eq!(times(&held), times(&plain));
    assert_eq!(times(&held)[1], vec![10_700, 20_700, 30_700]);
}

/// A selector names a histogram as PromQL users do: `lat` tracks `lat_bucket`, `lat_sum`
/// and `lat_count`, and `lat_bucket` (as written in `histogram_quantile`) names it too.
#[test]
fn a_selector_naming_a_histogram_tracks_its_parts() {
    let page = |n: u32| {
        format!(
            "# TYPE lat histogram\nlat_bucket{{le=\"1\",job=\"a\"}} {}\nlat_bucket{{le=\"+Inf\",job=\"a\"}} {}\n\
             lat_sum{{job=\"a\"}} {}\nlat_count{{job=\"a\"}} {}\nlat_bucket{{le=\"+Inf\",job=\"b\"}} 1\nother_total 1\n",
            n,
            2 * n,
            3 * n,
            2 * n
        )
    };
    let mut t = Tracker::new([Selector::parse(r#"lat{job="a"}"#).unwrap()]);
    t.ingest(&page(1), at(0)).unwrap();
    t.ingest(&page(3), at(10)).unwrap();
    let mut names: Vec<&str> = t.series().map(|s| s.name()).collect();
    names.sort();
    assert_eq!(
        names,
        ["lat_bucket", "lat_bucket", "lat_count", "lat_sum"],
        "job=b and other_total are not selected"
    );
    let named = |text: &str| Selector::parse(text).unwrap();
    let over =
        |text: &str| Query::new(&named(text), Estimator::WindowIncrease).window(TimeDelta::seconds(10));
    let by_family = t.evaluate(&over(r#"lat{job="a"}"#).quantile(0.5)).unwrap();
    let by_bucket = t.evaluate(&over(r#"lat_bucket{job="a"}"#).quantile(0.5)).unwrap();
    assert_eq!(by_family.groups.len(), 1);
    assert_eq!(by_family, by_bucket);
    let mean = t.evaluate(&over(r#"lat{job="a"}"#).mean()).unwrap();
    assert_eq!(mean.value(), Ok(1.5));
    assert_eq!(t.evaluate(&over(r#"lat_sum{job="a"}"#).mean()).unwrap(), mean);
    // The same name means the same series everywhere: the series Tracker::new kept are
    // the ones `matching`, `fold::sum_by` and the queries read.
    let lat = Selector::parse(r#"lat{job="a"}"#).unwrap();
    assert_eq!(t.matching(&lat).unwrap().count(), 4);
    assert_eq!(
        crate::fold::sum_by(&t, &lat, &[], |_| Some(1.0)).unwrap()[0].series,
        4
    );
    let window = Query::new(&lat, Estimator::WindowIncrease).window(TimeDelta::seconds(10));
    assert!(matches!(
        t.evaluate(&window),
        Err(QueryError::HistogramName { .. })
    ));
    let count = Selector::parse(r#"lat_count{job="a"}"#).unwrap();
    let observations = Query::new(&count, Estimator::WindowIncrease).window(TimeDelta::seconds(10));
    assert_eq!(t.evaluate(&observations).unwrap().value(), Ok(4.0));
    assert_eq!(
        t.evaluate(&window.clone().quantile(0.5)).unwrap().groups[0].series,
        2
    );
    assert_eq!(t.evaluate(&window.clone().mean()).unwrap().value(), Ok(1.5));
    // job="b" was never kept: asking about it is an error that says so.
    let b = Selector::parse(r#"lat{job="b"}"#).unwrap();
    assert!(matches!(t.matching(&b), Err(QueryError::NotTracked { .. })));
    assert!(matches!(
        t.evaluate(&Query::new(&b, Estimator::Ewma)),
        Err(QueryError::NotTracked { .. })
    ));
    // Untyped, as a federation serves it: the family is read by name.
    let mut untyped = Tracker::new([Selector::parse("lat").unwrap()]);
    untyped.infer_counters(true);
    let federated = "# TYPE lat_bucket untyped\nlat_bucket{le=\"+Inf\"} 2 1000\n# TYPE lat_count untyped\nlat_count 2 1000\n";
    untyped.ingest(federated, at(1)).unwrap();
    assert_eq!(untyped.len(), 2);
}

/// A series twice in one page: the first sample is kept, the second refused as a
/// duplicate (not as a timestamp that went back); twice with the same value is a repeat.
#[test]
fn a_series_twice_in_a_page_is_a_duplicate() {
    let mut t = Tracker::new([]);
    let report = t.ingest("a_total 1\nb 1\na_total 2\nb 1\n", at(1)).unwrap();
    assert_eq!((report.samples, report.refused, report.repeated), (2, 1, 1));
    let refusal = report.first_refused.unwrap();
    assert_eq!(refusal.error, SeriesError::Duplicate { at: at(1) });
    assert!(refusal.error.to_string().contains("first sample is kept"));
    assert_eq!(refusal.line, 3, "the refusal names the line of the second sample");
    assert!(
        refusal
            .to_string()
            .starts_with("line 3: a_total: the series appears twice"),
        "{refusal}"
    );
    assert_eq!(t.get("a_total", &[]).unwrap().last_value(), Some(1.0));
    // Held back while a limit could refuse the page, the sample keeps its line too.
    let mut held = Tracker::new([]);
    held.parser(crate::Parser::default().sample_limit(100));
    let report = held.ingest("a_total 1\nb 1\n\na_total 2\n", at(1)).unwrap();
    assert_eq!(report.first_refused.unwrap().line, 4);
}

/// A refused page teaches the tracker nothing: a histogram family seen only on it does
/// not make a later untyped `_count` a counter (with `infer_counters`), whether the page
/// was refused after it was read (a sample limit) or while it arrived (a body size limit,
/// in chunks).
#[test]
fn a_refused_page_teaches_no_histogram_family() {
    let refused = format!("h_bucket{{le=\"1\"}} 1\n{}", "x 1\n".repeat(60));
    let next = "h_count 2\nh_sum 3\n";
    let make = |parser: crate::Parser| {
        let mut t = Tracker::new([]);
        t.infer_counters(true).parser(parser);
        t
    };
    let parser = crate::Parser::new(crate::Format::PrometheusText);
    let mut fresh = make(parser);
    fresh.ingest(next, at(2)).unwrap();
    let gauge = |t: &Tracker| t.get("h_count", &[]).unwrap().gauge().is_some();
    assert!(gauge(&fresh));

    let mut whole = make(parser.sample_limit(10));
    assert!(whole.ingest(&refused, at(1)).is_err());
    whole.ingest(next, at(2)).unwrap();
    assert!(gauge(&whole), "a page refused whole taught h");

    let mut chunked = make(parser.body_size_limit(100));
    let mut reading = chunked.ingest_chunks(at(1)).unwrap();
    for chunk in refused.as_bytes().chunks(30) {
        reading.push(chunk);
    }
    assert!(reading.finish().is_err());
    chunked.ingest(next, at(2)).unwrap();
    assert!(gauge(&chunked), "a page refused as it arrived taught h");
}

/// The names a refused page had are not offered as the nearest to a selector that a
/// later page does not match: that page did not have them (found by the chunk agreement).
#[test]
fn a_refused_pages_names_are_not_the_next_pages() {
    let refused = "h_bucket{le=\"1\"} 0\na_total 0\ne_total 0\nx 1\ny 1\nz 1\n";
    let next = "h_bucket{le=\"1\"} 0\n";
    let selectors = ["h", "a_total"].map(|s| crate::Selector::parse(s).unwrap());
    let mut t = Tracker::new(selectors);
    t.parser(crate::Parser::new(crate::Format::PrometheusText).sample_limit(5));
    let mut reading = t.ingest_chunks(at(1)).unwrap();
    reading.push(refused);
    assert!(reading.finish().is_err());
    let mut reading = t.ingest_chunks(at(2)).unwrap();
    reading.push(next);
    let unmatched = reading
        .finish()
        .unwrap()
        .unmatched
        .expect("a_total is not on the page");
    assert_eq!(unmatched.nearest, Vec::<String>::new(), "{unmatched}");
}
