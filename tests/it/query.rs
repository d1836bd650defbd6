//! The front door, `Tracker::evaluate` / `quantile` / `mean` with a `Query`: every
//! estimator equals its series-level function, the same rule for which series count in
//! every estimator, a name means the same everywhere, and no answer is empty or `None`
//! without a reason a caller can read.

use chrono::{DateTime, TimeDelta, Utc};
use proptest::prelude::*;

use promrate::promql::{RangeFunctions, Semantics};
use promrate::{
    fold, Estimator, Format, NoValue, Query, QueryError, Selector, SeriesScope, Shortened, Tracker,
    WindowRule,
};

use crate::data;

fn at(s: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_764_000_000 + s, 0).unwrap()
}

fn sel(text: &str) -> Selector {
    Selector::parse(text).unwrap()
}

/// PromQL's `sum` of `values` in their order: Prometheus 3 (2.54 on) adds with Neumaier's
/// compensation (`util/kahansum.Inc`) and adds the compensation at the end; Prometheus 2
/// before 2.54 adds plainly. `None` of no values.
fn promql_sum(values: &[f64], semantics: Semantics) -> Option<f64> {
    let (&first, rest) = values.split_first()?;
    let (mut sum, mut c) = (first, 0.0);
    for &v in rest {
        if semantics == Semantics::Prometheus2 {
            sum += v;
            continue;
        }
        let t = sum + v;
        c = if t.is_infinite() {
            0.0
        } else if sum.abs() >= v.abs() {
            c + ((sum - t) + v)
        } else {
            c + ((v - t) + sum)
        };
        sum = t;
    }
    Some(if semantics == Semantics::Prometheus2 {
        sum
    } else {
        sum + c
    })
}

/// A page of `tokens_total` per engine at the given values.
fn page(values: &[u64]) -> String {
    values
        .iter()
        .enumerate()
        .map(|(engine, v)| format!("tokens_total{{engine=\"{engine}\"}} {v}\n"))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Each estimator's figure for a group is the sum over its series of the series-level
    /// function (PromQL's in PromQL's order), whatever the scrapes, restarts and window.
    #[test]
    fn every_estimator_is_the_sum_of_its_series_function(
        scrapes in prop::collection::vec((1i64..20, prop::collection::vec(0u64..500, 3)), 2..30),
        window_s in 5i64..120,
    ) {
        let mut tracker = Tracker::new([sel("tokens_total")]);
        tracker.retention(TimeDelta::minutes(10)).ewma_time_constant(TimeDelta::seconds(20));
        let (mut t, mut values) = (0, [0u64; 3]);
        for (dt, adds) in &scrapes {
            t += dt;
            for (v, add) in values.iter_mut().zip(adds) {
                // A value below 50 restarts the counter at that value.
                *v = if *add < 50 { *add } else { *v + add };
            }
            tracker.ingest(&page(&values), at(t)).unwrap();
        }
        let now = at(t);
        let window = TimeDelta::seconds(window_s);
        let counters: Vec<_> = (0..3)
            .map(|e| tracker.get("tokens_total", &[("engine", &e.to_string())]).unwrap().counter().unwrap().clone())
            .collect();
        let range = RangeFunctions::new(window);
        let rule = WindowRule::new(window);
        type SeriesFn<'a> = Box<dyn Fn(&promrate::series::CounterSeries) -> Option<f64> + 'a>;
        let cases: [(Estimator, SeriesFn<'_>); 6] = [
            (Estimator::Rate, Box::new(|c| c.rate(&range, now))),
            (Estimator::Increase, Box::new(|c| c.increase(&range, now))),
            (Estimator::Irate, Box::new(|c| c.irate(&range, now))),
            (Estimator::WindowRate, Box::new(|c| c.window_increase(&rule, now).ok().map(|w| w.rate()))),
            (Estimator::WindowIncrease, Box::new(|c| c.window_increase(&rule, now).ok().map(|w| w.increase))),
            (Estimator::Ewma, Box::new(|c| c.ewma_rate())),
        ];
        for (estimator, f) in cases {
            let query = Query::new(&sel("tokens_total"), estimator);
            let query = if estimator == Estimator::Ewma { query } else { query.window(window) };
            let per_engine = tracker.evaluate(&query.clone().by(["engine"])).unwrap();
            let mut figures = Vec::new();
            for (e, counter) in counters.iter().enumerate() {
                let group = per_engine.group(&[&e.to_string()]).unwrap();
                let want = f(counter);
                prop_assert_eq!(group.value.clone().ok(), want, "{:?} engine {}", estimator, e);
                prop_assert_eq!(group.value.is_err(), group.series == 0);
                figures.extend(want);
            }
            let all = tracker.evaluate(&query).unwrap();
            let total = promql_sum(&figures, Semantics::Prometheus3);
            prop_assert_eq!(all.value().ok().map(f64::to_bits), total.map(f64::to_bits), "{:?}", estimator);
            // Never a negative increase or rate from a counter.
            prop_assert!(all.value().map_or(true, |v| v >= 0.0), "{:?}: {:?}", estimator, all.value());
        }
    }
}

#[test]
fn promql_estimators_are_promql_bit_for_bit() {
    // Three series scraped at uneven times, one restarting, one leaving: with the series
    // counted as PromQL counts them, the sum is PromQL's sum of each series' function over
    // the same points, in series order, in both semantics.
    let mut tracker = Tracker::new([]);
    let times = [0, 7, 15, 31, 38, 46, 60, 67];
    for (i, t) in times.iter().enumerate() {
        let i = i as u64;
        let mut text = format!(
            "a_total{{k=\"1\"}} {}\na_total{{k=\"2\"}} {}\n",
            13 * i * i,
            (i * 41) % 97
        );
        if i < 5 {
            text.push_str(&format!("a_total{{k=\"3\"}} {}\n", 1000 + 3 * i));
        }
        tracker.ingest(&text, at(*t)).unwrap();
    }
    for semantics in [Semantics::Prometheus3, Semantics::Prometheus2] {
        for window_s in [10, 20, 30, 45, 60] {
            let window = TimeDelta::seconds(window_s);
            let range = RangeFunctions::new(window).semantics(semantics);
            let now = at(67);
            for (estimator, f) in [
                (
                    Estimator::Rate,
                    RangeFunctions::rate as fn(&RangeFunctions, &[_], _) -> Option<f64>,
                ),
                (Estimator::Increase, RangeFunctions::increase),
                (Estimator::Irate, RangeFunctions::irate),
            ] {
                let mut figures = Vec::new();
                for k in ["1", "2", "3"] {
                    let points = tracker
                        .get("a_total", &[("k", k)])
                        .unwrap()
                        .counter()
                        .unwrap()
                        .points()
                        .to_vec();
                    figures.extend(f(&range, &points, now));
                }
                let want = promql_sum(&figures, semantics);
                let query = Query::new(&sel("a_total"), estimator)
                    .promql(RangeFunctions::new(window).semantics(semantics))
                    .scope(SeriesScope::UntilStale);
                let got = tracker.evaluate(&query).unwrap().value().ok();
                assert_eq!(
                    got.map(f64::to_bits),
                    want.map(f64::to_bits),
                    "{estimator:?} {semantics:?} {window_s}s"
                );
            }
        }
    }
}

#[test]
fn every_answer_without_a_value_says_why() {
    let tokens = sel("tokens_total");
    let mut tracker = Tracker::new([]);
    tracker.ewma_restart_after(TimeDelta::seconds(30));
    let ten = TimeDelta::seconds(10);
    let rate = Query::new(&tokens, Estimator::WindowRate).window(ten);
    // No scrape yet: no value, and no time it was evaluated at (not the epoch), unless the
    // query gave one.
    let before = tracker.evaluate(&rate).unwrap();
    assert_eq!(before.value(), Err(NoValue::NoScrapes));
    assert_eq!(before.at, None);
    assert_eq!(tracker.evaluate(&rate.clone().at(at(0))).unwrap().at, Some(at(0)));
    // One point: the window holds one.
    tracker.ingest("tokens_total 5\nkv_usage 0.5\n", at(0)).unwrap();
    assert!(matches!(
        tracker.evaluate(&rate).unwrap().value(),
        Err(NoValue::TooFewScrapes { found: 1, .. })
    ));
    assert_eq!(
        tracker
            .evaluate(&Query::new(&tokens, Estimator::Ewma))
            .unwrap()
            .value(),
        Err(NoValue::EwmaNotStarted)
    );
    // Not a counter.
    let kv = Query::new(&sel("kv_usage"), Estimator::WindowRate).window(ten);
    assert_eq!(
        tracker.evaluate(&kv).unwrap().value(),
        Err(NoValue::NotACounter {
            name: "kv_usage".into()
        })
    );
    // No such series: the nearest tracked names.
    let typo = Query::new(&sel("token_total"), Estimator::WindowRate).window(ten);
    let answer = tracker.evaluate(&typo).unwrap();
    assert!(answer.groups.is_empty());
    match answer.value() {
        Err(NoValue::NoSeries { selector, nearest }) => {
            assert_eq!(
                (selector.as_str(), nearest),
                ("token_total", vec!["tokens_total".to_string()])
            );
        }
        other => panic!("{other:?}"),
    }
    // A label value no series has: which label, and the values there are.
    let engine = Query::new(&sel(r#"tokens_total{engine="7"}"#), Estimator::WindowRate).window(ten);
    let mut labelled = Tracker::new([]);
    labelled
        .ingest(
            "tokens_total{engine=\"0\"} 1\ntokens_total{engine=\"1\"} 1\n",
            at(0),
        )
        .unwrap();
    match labelled.evaluate(&engine).unwrap().value() {
        Err(NoValue::NoLabelMatch { label, values, .. }) => {
            assert_eq!((label.as_str(), values), ("engine", vec!["0".into(), "1".into()]))
        }
        other => panic!("{other:?}"),
    }
    // A `by` label no series has reads as one group of "", and the answer says which.
    let by_typo = labelled
        .evaluate(&Query::new(&tokens, Estimator::Ewma).by(["engnie"]))
        .unwrap();
    assert_eq!(
        (by_typo.groups.len(), by_typo.missing_labels.clone()),
        (1, vec!["engnie".to_string()])
    );
    let by_engine = labelled
        .evaluate(&Query::new(&tokens, Estimator::Ewma).by(["engine"]))
        .unwrap();
    assert!(by_engine.missing_labels.is_empty());
    // After an outage: one point since the gap.
    tracker.ingest("tokens_total 15\n", at(5)).unwrap();
    tracker.ingest("tokens_total 95\n", at(65)).unwrap();
    let across = tracker
        .evaluate(
            &rate
                .clone()
                .window_rule(WindowRule::new(ten).gap(TimeDelta::seconds(30))),
        )
        .unwrap();
    assert_eq!(across.value(), Err(NoValue::OnePointSinceGap { since: at(65) }));
    assert!(across.value().unwrap_err().to_string().contains("since the gap"));
    // PromQL: too few points, with its window; the message says why.
    let promql = Query::new(&tokens, Estimator::Rate).window(ten);
    let why = tracker.evaluate(&promql).unwrap().value().unwrap_err();
    assert!(
        matches!(
            why,
            NoValue::TooFewPoints {
                in_window: 1,
                open_left: true,
                ..
            }
        ),
        "{why}"
    );
    // The EWMA is a running value.
    let earlier = Query::new(&tokens, Estimator::Ewma).at(at(10));
    assert!(matches!(
        tracker.evaluate(&earlier).unwrap().value(),
        Err(NoValue::AsOfNewestPoint {
            figure: "the EWMA",
            ..
        })
    ));
    // Gone from the newest page.
    tracker.ingest("other_total 1\n", at(70)).unwrap();
    assert!(matches!(
        tracker.evaluate(&rate).unwrap().value(),
        Err(NoValue::NotOnNewestPage { last_seen }) if last_seen == at(65)
    ));
}

#[test]
fn a_histogram_without_a_quantile_says_why() {
    let lat = sel("lat");
    let mut tracker = Tracker::new([lat.clone()]);
    let page = |le1: u32, inf: Option<u32>| {
        let mut text = format!("# TYPE lat histogram\nlat_bucket{{le=\"1\"}} {le1}\n");
        if let Some(inf) = inf {
            text.push_str(&format!("lat_bucket{{le=\"+Inf\"}} {inf}\n"));
        }
        text
    };
    let minute = Query::new(&lat, Estimator::WindowIncrease).window(TimeDelta::minutes(1));
    tracker.ingest(&page(3, None), at(0)).unwrap();
    tracker.ingest(&page(5, None), at(10)).unwrap();
    assert_eq!(
        tracker.evaluate(&minute.clone().quantile(0.5)).unwrap().value(),
        Err(NoValue::NoBuckets {
            buckets: 1,
            has_inf: false
        })
    );
    let mut tracker = Tracker::new([lat.clone()]);
    tracker.ingest(&page(3, Some(4)), at(0)).unwrap();
    tracker.ingest(&page(3, Some(4)), at(10)).unwrap();
    assert_eq!(
        tracker.evaluate(&minute.clone().quantile(0.5)).unwrap().value(),
        Err(NoValue::NoObservations)
    );
    // A percentile written for a fraction (PromQL would answer +Inf), or NaN: the query's mistake.
    for q in [95.0, -0.5, f64::NAN] {
        let err = tracker.evaluate(&minute.clone().quantile(q)).unwrap_err();
        assert!(matches!(err, QueryError::InvalidQuantile { .. }), "{err}");
    }
    assert!(tracker
        .evaluate(&minute.clone().quantile(95.0))
        .unwrap_err()
        .to_string()
        .contains("0.95"));
    // A histogram's name with a rate estimator would add buckets, sum and count together.
    let err = tracker.evaluate(&minute).unwrap_err();
    assert!(
        matches!(&err, QueryError::HistogramName { parts, .. } if parts == &["lat_bucket".to_string()]),
        "{err}"
    );
    assert!(err.to_string().contains("`lat_count`"), "{err}");
    assert_eq!(
        tracker
            .evaluate(&minute.clone().mean())
            .unwrap()
            .value()
            .unwrap_err(),
        NoValue::NoSeries {
            selector: "lat_sum".into(),
            nearest: vec!["lat_bucket".into()],
        }
    );
}

#[test]
fn a_query_that_cannot_be_answered_is_an_error_that_says_what_to_change() {
    let tokens = sel("vllm:generation_tokens_total");
    let mut tracker = Tracker::new([tokens.clone()]);
    tracker.retention(TimeDelta::seconds(5));
    tracker.ingest("vllm:generation_tokens_total 0\n", at(0)).unwrap();
    let cases: Vec<(Query, &str)> = vec![
        (
            Query::new(&sel("vllm:prompt_tokens_total"), Estimator::Ewma),
            "does not track `vllm:prompt_tokens_total`",
        ),
        (
            Query::new(&tokens, Estimator::Rate),
            "PromQL rate() needs a window",
        ),
        (
            Query::new(&tokens, Estimator::WindowIncrease).window(TimeDelta::seconds(20)),
            "a window of 20 s is longer than the tracker's retention of 5 s",
        ),
        (
            Query::new(&tokens, Estimator::Irate)
                .promql(RangeFunctions::new(TimeDelta::seconds(5)).anchored()),
            "`anchored` goes with PromQL's rate and increase only",
        ),
        (
            Query::new(&tokens, Estimator::Ewma).window(TimeDelta::seconds(5)),
            "the EWMA's time constant is the tracker's (30 s), not the 5 s asked",
        ),
    ];
    for (query, message) in cases {
        let err = tracker.evaluate(&query).unwrap_err();
        assert!(err.to_string().contains(message), "{err}");
    }
    // A misspelled name is not "add it to the tracker": the nearest tracked name comes first.
    tracker
        .ingest("vllm:generation_tokens_total 10\n", at(1))
        .unwrap();
    let typo = tracker
        .evaluate(&Query::new(&sel("vllm:generaton_tokens_total"), Estimator::Ewma))
        .unwrap_err();
    assert!(
        matches!(&typo, QueryError::NotTracked { nearest, .. } if nearest == &["vllm:generation_tokens_total".to_string()]),
        "{typo}"
    );
    // Narrower than a tracked selector is tracked: its series are a subset.
    let narrower = sel(r#"vllm:generation_tokens_total{engine="0"}"#);
    assert!(tracker.evaluate(&Query::new(&narrower, Estimator::Ewma)).is_ok());
    let regex_tracker = Tracker::new([sel(r#"{__name__=~"vllm:.*"}"#)]);
    assert!(regex_tracker
        .evaluate(&Query::new(&tokens, Estimator::Ewma))
        .is_ok());
    assert!(matches!(
        regex_tracker.evaluate(&Query::new(&sel("up"), Estimator::Ewma)),
        Err(QueryError::NotTracked { .. })
    ));
}

/// Each selector that matched nothing on a page is reported, with the page's nearest
/// names, and the page is read again for them only when that set changes.
#[test]
fn a_selector_that_matched_nothing_is_reported() {
    let mut tracker = Tracker::new([
        sel("vllm:generation_tokens_total"),
        sel("vllm:num_requests_runing"),
    ]);
    let page = "vllm:generation_tokens_total 1\nvllm:num_requests_running 2\n";
    let report = tracker.ingest(page, at(0)).unwrap();
    assert_eq!(report.samples, 1);
    let unmatched = report.unmatched.unwrap();
    assert_eq!(unmatched.selectors, ["vllm:num_requests_runing"]);
    assert_eq!(unmatched.nearest, ["vllm:num_requests_running"]);
    assert!(!unmatched.differs_in_separators);
    // The next page: the same report.
    assert_eq!(tracker.ingest(page, at(1)).unwrap().unmatched, Some(unmatched));
    // Everything matched: nothing to say.
    let mut right = Tracker::new([sel("vllm:generation_tokens_total")]);
    assert_eq!(right.ingest(page, at(0)).unwrap().unmatched, None);
}

/// A counter's family name, as OpenMetrics writes it (`# TYPE x counter`), picks `x_total`.
#[test]
fn a_counter_family_name_picks_its_total() {
    let family = sel("vllm:generation_tokens");
    let mut tracker = Tracker::new([family.clone()]);
    let page = |v: u32| format!("# TYPE vllm:generation_tokens counter\nvllm:generation_tokens_total {v}\n");
    tracker.ingest(&page(0), at(0)).unwrap();
    tracker.ingest(&page(50), at(10)).unwrap();
    let rate = Query::new(&family, Estimator::WindowRate).window(TimeDelta::seconds(10));
    assert_eq!(tracker.evaluate(&rate).unwrap().value(), Ok(5.0));
    let total = Query::new(&sel("vllm:generation_tokens_total"), Estimator::WindowRate)
        .window(TimeDelta::seconds(10));
    assert_eq!(tracker.evaluate(&total).unwrap().value(), Ok(5.0));
}

/// PromQL's estimators read created times where the page gives them (a restart the values
/// hide), and from the values alone when asked.
#[test]
fn start_timestamps_can_be_left_out_of_promql() {
    let tokens = sel("tokens_total");
    let mut tracker = Tracker::new([tokens.clone()]);
    let page =
        |v: u32, created: i64| format!("# TYPE tokens counter\ntokens_total {v}\ntokens_created {created}\n");
    tracker.ingest(&page(50, at(0).timestamp()), at(30)).unwrap();
    tracker.ingest(&page(80, at(35).timestamp()), at(40)).unwrap();
    let points = tracker
        .get("tokens_total", &[])
        .unwrap()
        .counter()
        .unwrap()
        .points()
        .to_vec();
    let range = RangeFunctions::new(TimeDelta::minutes(1));
    let query = Query::new(&tokens, Estimator::Increase).window(TimeDelta::minutes(1));
    let values_only = tracker
        .evaluate(&query.clone().start_timestamps(false))
        .unwrap()
        .value();
    assert_eq!(values_only, Ok(range.increase(&points, at(40)).unwrap()));
    let counter = tracker.get("tokens_total", &[]).unwrap().counter().unwrap();
    assert_eq!(
        tracker.evaluate(&query).unwrap().value(),
        Ok(counter.increase(&range, at(40)).unwrap())
    );
    assert!(tracker.evaluate(&query).unwrap().value().unwrap() > 80.0);
}

#[test]
fn coverage_says_what_the_points_cover_and_why_it_is_short() {
    let tokens = sel("tokens_total");
    let mut tracker = Tracker::new([]);
    tracker.retention(TimeDelta::seconds(20));
    for s in 0..=10 {
        tracker
            .ingest(&format!("tokens_total {}\n", 100 * s), at(10 * s))
            .unwrap();
    }
    let window = |w: i64| Query::new(&tokens, Estimator::WindowIncrease).window(TimeDelta::seconds(w));
    // The full window: covered.
    let full = tracker.evaluate(&window(20)).unwrap();
    let coverage = full.groups[0].coverage.unwrap();
    assert_eq!(
        (coverage.start, coverage.end, coverage.shortened),
        (at(80), at(100), None)
    );
    assert_eq!(full.value(), Ok(200.0));
    // A series that began inside the window says so.
    tracker
        .ingest("tokens_total 1100\nnew_total 0\n", at(110))
        .unwrap();
    tracker
        .ingest("tokens_total 1200\nnew_total 50\n", at(120))
        .unwrap();
    let new = tracker
        .evaluate(&Query::new(&sel("new_total"), Estimator::WindowRate).window(TimeDelta::seconds(20)))
        .unwrap();
    let coverage = new.groups[0].coverage.unwrap();
    assert_eq!(
        (coverage.span, coverage.shortened),
        (TimeDelta::seconds(10), Some(Shortened::SinceFirstPoint))
    );
    assert_eq!(new.value(), Ok(5.0));
    // After an outage, with a gap rule: the window starts after the gap, and says so.
    tracker.ingest("tokens_total 1900\n", at(190)).unwrap();
    tracker.ingest("tokens_total 2000\n", at(200)).unwrap();
    let gap_rule = WindowRule::new(TimeDelta::seconds(20)).gap(TimeDelta::seconds(25));
    let after = tracker.evaluate(&window(20).window_rule(gap_rule)).unwrap();
    let coverage = after.groups[0].coverage.unwrap();
    assert_eq!(
        (coverage.start, coverage.shortened),
        (at(190), Some(Shortened::AfterGap))
    );
    assert_eq!(after.value(), Ok(100.0));
}

#[test]
fn one_rule_for_which_series_count_in_every_estimator() {
    let tokens = sel("tokens_total");
    let mut tracker = Tracker::new([]);
    for s in 0..=6 {
        let mut text = format!("tokens_total{{engine=\"0\"}} {}\n", 100 * s);
        if s < 6 {
            text.push_str(&format!("tokens_total{{engine=\"1\"}} {}\n", 100 * s));
        }
        tracker.ingest(&text, at(10 * s)).unwrap();
    }
    let minute = TimeDelta::minutes(1);
    for estimator in [
        Estimator::Rate,
        Estimator::Increase,
        Estimator::Irate,
        Estimator::WindowRate,
        Estimator::WindowIncrease,
        Estimator::Ewma,
    ] {
        let query = Query::new(&tokens, estimator).by(["engine"]);
        let query = if estimator == Estimator::Ewma {
            query
        } else {
            query.window(minute)
        };
        let newest = tracker.evaluate(&query).unwrap();
        assert!(newest.group(&["0"]).unwrap().value.is_ok(), "{estimator:?}");
        assert!(
            matches!(
                newest.group(&["1"]).unwrap().value,
                Err(NoValue::NotOnNewestPage { .. })
            ),
            "{estimator:?}"
        );
        let until_stale = tracker.evaluate(&query.scope(SeriesScope::UntilStale)).unwrap();
        assert!(until_stale.group(&["1"]).unwrap().value.is_ok(), "{estimator:?}");
    }
}

/// vLLM's OpenMetrics page (with prometheus_client's repeated families) read with the
/// one documented setting gives the same figures as its text page; read without it, the
/// report says why nothing matched.
#[test]
fn vllm_openmetrics_pages_read_with_the_preset() {
    let dir = data::dir().join("vllm");
    let mut pages: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".openmetrics.txt"))
        .collect();
    pages.sort();
    assert!(!pages.is_empty(), "no OpenMetrics page in {}", dir.display());
    let asked = [
        "vllm:generation_tokens_total",
        "vllm:prompt_tokens_total",
        "vllm:request_success_total",
        "vllm:num_requests_running",
        "vllm:e2e_request_latency_seconds",
    ];
    let selectors: Vec<Selector> = asked.iter().map(|n| sel(n)).collect();
    for path in pages {
        let openmetrics = data::read(&path);
        let text = data::read(
            &path.with_file_name(
                path.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .replace(".openmetrics.txt", ".prom"),
            ),
        );
        // Without the preset: nothing matched, and the report says why.
        let mut plain = Tracker::new(selectors.clone());
        let report = plain.ingest(&openmetrics, at(0)).unwrap();
        assert_eq!(report.samples, 0);
        let unmatched = report.unmatched.expect("the report says nothing matched");
        assert!(unmatched.differs_in_separators, "{unmatched}");
        assert!(
            unmatched
                .nearest
                .contains(&"vllm_generation_tokens_total".to_string()),
            "{unmatched}"
        );
        // Strict OpenMetrics reports prometheus_client's repeated families.
        let mut strict = Tracker::new(selectors.clone());
        strict.normalize_names(true).read_as(Format::OpenMetrics);
        assert!(strict.ingest(&openmetrics, at(0)).unwrap().bad_lines > 0);
        // With the preset: every line read, the same series and values as the text page.
        let mut preset = Tracker::new(selectors.clone());
        preset.vllm_preset().read_as(Format::OpenMetrics);
        let report = preset.ingest(&openmetrics, at(0)).unwrap();
        assert_eq!(
            (report.bad_lines, report.unmatched.is_some()),
            (0, false),
            "{:?}",
            report.first_error
        );
        let mut from_text = Tracker::new(selectors.clone());
        from_text.vllm_preset();
        assert_eq!(from_text.ingest(&text, at(0)).unwrap().bad_lines, 0);
        for selector in &selectors {
            let sum = |t: &Tracker| {
                // Every part of a histogram at once: a fold of one's own.
                let groups = fold::sum_by(t, selector, &[], |s| s.last_value()).unwrap();
                (groups[0].series, groups[0].value.clone().unwrap())
            };
            let (series, value) = sum(&preset);
            assert!(series > 0, "{selector}");
            assert_eq!(
                (series, value),
                sum(&from_text),
                "{selector} in {}",
                path.display()
            );
        }
    }
}

/// A family's name picks the same series in `Selector::matches_family` over the page,
/// `Tracker::new`, `matching`, `sum_by`, the query front door and the histogram functions.
#[test]
fn a_histogram_name_means_the_same_everywhere() {
    let text = data::read(&data::dir().join("vllm/vllm-0.33-v1-single-t0.prom"));
    for name in [
        "vllm:e2e_request_latency_seconds",
        "vllm:time_to_first_token_seconds",
        "vllm:generation_tokens_total",
    ] {
        let selector = sel(name);
        let on_page = promrate::parse(&text)
            .filter_map(|e| e.ok()?.into_sample())
            .filter(|s| selector.matches_family(s) && !s.name().ends_with("_created"))
            .count();
        let mut tracker = Tracker::new([selector.clone()]);
        tracker.ingest(&text, at(0)).unwrap();
        tracker.ingest(&text, at(10)).unwrap();
        assert!(on_page > 0, "{name}");
        assert_eq!(tracker.len(), on_page, "{name}: kept");
        assert_eq!(
            tracker.matching(&selector).unwrap().count(),
            on_page,
            "{name}: matching"
        );
        assert_eq!(
            fold::sum_by(&tracker, &selector, &[], |_| Some(1.0)).unwrap()[0].series,
            on_page,
            "{name}: fold::sum_by"
        );
        let increase = Query::new(&selector, Estimator::WindowIncrease).window(TimeDelta::seconds(10));
        if name == "vllm:generation_tokens_total" {
            assert_eq!(
                tracker.evaluate(&increase).unwrap().groups[0].series,
                on_page,
                "{name}: evaluate"
            );
        } else {
            // A rate over a histogram's every part means nothing: refused, naming the parts.
            match tracker.evaluate(&increase) {
                Err(QueryError::HistogramName { parts, .. }) => {
                    assert_eq!(parts.len(), 3, "{name}: {parts:?}")
                }
                other => panic!("{name}: {other:?}"),
            }
            let buckets = tracker.evaluate(&increase.clone().quantile(0.5)).unwrap().groups[0].series;
            let by_closure = fold::histogram_buckets(&tracker, &selector, &[], |s| s.last_value()).unwrap()
                [0]
            .buckets
            .len();
            assert_eq!(
                buckets, by_closure,
                "{name}: quantile and fold::histogram_buckets"
            );
            let bounds = tracker.evaluate(&increase.clone().buckets()).unwrap().groups[0]
                .buckets
                .len();
            assert_eq!(bounds, buckets, "{name}: one bucket a bound on one page");
            assert_eq!(on_page, buckets + 2, "{name}: buckets, _sum and _count");
        }
    }
}

/// What the monitor reads besides rates, through the same road: a gauge's newest value and
/// its mean over a window, the increase since the first page through a restart, and a
/// histogram's buckets; each says why when it has no value.
#[test]
fn gauges_totals_and_buckets_go_through_evaluate() {
    let mut tracker = Tracker::new([]);
    let page = |running: [u32; 2], tokens: u32, fast: u32, all: u32| {
        format!(
            "running{{e=\"0\"}} {}\nrunning{{e=\"1\"}} {}\ntokens_total {tokens}\n\
             # TYPE lat histogram\nlat_bucket{{e=\"0\",le=\"0.5\"}} {fast}\nlat_bucket{{e=\"0\",le=\"+Inf\"}} {all}\n\
             lat_bucket{{e=\"1\",le=\"0.5\"}} {fast}\nlat_bucket{{e=\"1\",le=\"+Inf\"}} {all}\n",
            running[0], running[1]
        )
    };
    tracker.ingest(&page([2, 4], 100, 0, 0), at(0)).unwrap();
    tracker.ingest(&page([4, 6], 300, 5, 10), at(10)).unwrap();
    // Restarted: 50 new tokens, the 200 before still counted.
    tracker.ingest(&page([6, 8], 50, 15, 20), at(20)).unwrap();
    let running = sel("running");
    let last = tracker.evaluate(&Query::new(&running, Estimator::Last)).unwrap();
    assert_eq!(last.value(), Ok(14.0));
    assert_eq!(last.window, None);
    let earlier = Query::new(&running, Estimator::Last).at(at(15)).by(["e"]);
    let per_engine: Vec<_> = tracker
        .evaluate(&earlier)
        .unwrap()
        .groups
        .into_iter()
        .map(|g| g.value)
        .collect();
    assert_eq!(per_engine, [Ok(4.0), Ok(6.0)]);
    assert!(matches!(
        tracker
            .evaluate(&Query::new(&running, Estimator::Last).at(at(-1)))
            .unwrap()
            .value(),
        Err(NoValue::NoPoint { from: None, .. })
    ));
    // (0 s, 20 s] holds the points at 10 s and 20 s: means 5 and 7.
    let mean = Query::new(&running, Estimator::Average).window(TimeDelta::seconds(20));
    let answer = tracker.evaluate(&mean).unwrap();
    assert_eq!(answer.value(), Ok(12.0));
    assert_eq!(answer.groups[0].coverage.unwrap().span, TimeDelta::seconds(10));
    assert!(matches!(
        tracker.evaluate(&mean.clone().at(at(45))).unwrap().value(),
        Err(NoValue::NoPoint { from: Some(_), .. })
    ));
    assert!(matches!(
        tracker.evaluate(&Query::new(&running, Estimator::Average)),
        Err(QueryError::WindowMissing { .. })
    ));
    let total = Query::new(&sel("tokens_total"), Estimator::TotalIncrease);
    assert_eq!(tracker.evaluate(&total).unwrap().value(), Ok(250.0));
    let why = tracker.evaluate(&total.at(at(10))).unwrap().value().unwrap_err();
    assert!(
        matches!(
            why,
            NoValue::AsOfNewestPoint {
                figure: "the increase since the first page",
                ..
            }
        ),
        "{why}"
    );
    assert!(why.to_string().contains("running figure"), "{why}");
    // Buckets: one per bound, both engines' increases added; the value is the +Inf bucket's.
    let lat = Query::new(&sel("lat"), Estimator::WindowIncrease).window(TimeDelta::seconds(10));
    let buckets = tracker.evaluate(&lat.clone().buckets()).unwrap();
    let bounds: Vec<(f64, f64)> = buckets.groups[0]
        .buckets
        .iter()
        .map(|b| (b.upper_bound, b.count))
        .collect();
    assert_eq!(bounds, [(0.5, 20.0), (f64::INFINITY, 20.0)]);
    assert_eq!(buckets.value(), Ok(20.0));
    let by_engine = tracker.evaluate(&lat.by(["e"]).buckets()).unwrap();
    assert_eq!(by_engine.groups.len(), 2);
    assert!(by_engine
        .groups
        .iter()
        .all(|g| g.buckets.len() == 2 && g.value == Ok(10.0)));
}

/// `Query::promql` and `Query::window_rule` take the library's own settings as built: the
/// answer is the one `RangeFunctions` and `CounterSeries::window_increase` give.
#[test]
fn a_query_takes_range_functions_and_a_window_rule_as_built() {
    let mut tracker = Tracker::new([]);
    for (s, v) in [(0, 0), (30, 30), (60, 70), (95, 100)] {
        tracker.ingest(&format!("x_total {v}\n"), at(s)).unwrap();
    }
    let x = sel("x_total");
    let range = RangeFunctions::new(TimeDelta::seconds(60)).semantics(Semantics::Prometheus2);
    let points = tracker
        .get("x_total", &[])
        .unwrap()
        .counter()
        .unwrap()
        .points()
        .to_vec();
    let increase = |form: promrate::promql::RangeForm| {
        let query = Query::new(&x, Estimator::Increase)
            .promql(form)
            .start_timestamps(false);
        tracker.evaluate(&query).unwrap().value().ok()
    };
    assert_eq!(increase(range.into()), range.increase(&points, at(95)));
    assert_eq!(
        increase(range.anchored().into()),
        range.anchored().increase(&points, at(95))
    );
    assert_eq!(
        increase(range.smoothed().into()),
        range.smoothed().increase(&points, at(95))
    );
    assert_ne!(increase(range.into()), increase(range.anchored().into()));
    // The last of window, window_rule and promql says the window.
    let rule = WindowRule::new(TimeDelta::seconds(30)).slack(TimeDelta::seconds(5));
    let query = Query::new(&x, Estimator::WindowIncrease)
        .window(TimeDelta::seconds(90))
        .window_rule(rule);
    let want = tracker
        .get("x_total", &[])
        .unwrap()
        .counter()
        .unwrap()
        .window_increase(&rule, at(95))
        .unwrap()
        .increase;
    assert_eq!(tracker.evaluate(&query).unwrap().value(), Ok(want));
    assert_eq!(
        tracker.evaluate(&query).unwrap().window,
        Some(TimeDelta::seconds(30))
    );
}

/// A page's own timestamps may be a little after the time it was read at (a federation's
/// samples carry the engine's scrape times): without a time asked, the newest page's
/// values are the last values and the total, whatever their timestamps.
#[test]
fn the_newest_page_is_the_last_value_whatever_its_timestamps() {
    let mut tracker = Tracker::new([]);
    let ms = |s: i64| at(s).timestamp_millis() + 500;
    tracker
        .ingest(&format!("running 3 {}\nt_total 10 {}\n", ms(0), ms(0)), at(0))
        .unwrap();
    tracker
        .ingest(&format!("running 5 {}\nt_total 30 {}\n", ms(10), ms(10)), at(10))
        .unwrap();
    let last = Query::new(&sel("running"), Estimator::Last);
    assert_eq!(tracker.evaluate(&last).unwrap().value(), Ok(5.0));
    // At the time asked, the point 0.5 s later is not yet there.
    assert_eq!(tracker.evaluate(&last.at(at(10))).unwrap().value(), Ok(3.0));
    let total = Query::new(&sel("t_total"), Estimator::TotalIncrease);
    assert_eq!(tracker.evaluate(&total).unwrap().value(), Ok(20.0));
}
