//! An OpenMetrics 2.0 page's composite values (one-line histograms, gauge histograms and
//! summaries) read by the tracker as the classic series of the same page in OpenMetrics
//! 1.0: the same series, and the same answers from `evaluate`, `quantile` and `mean`.

use chrono::{DateTime, TimeDelta, Utc};
use promrate::{Estimator, Format, NoValue, Query, Selector, Tracker};

/// One scrape's figures: a histogram per path, a summary, a gauge histogram.
struct Figures {
    /// Cumulative counts of the buckets 0.01, 0.1, 1.0, 10.0, +Inf, per path.
    buckets: [[u64; 5]; 2],
    sums: [f64; 2],
    /// The process start (seconds, three decimals as written).
    start: &'static str,
    summary: (u64, f64, [f64; 2]),
    gauge: ([u64; 2], f64),
}

const BOUNDS: [&str; 5] = ["0.01", "0.1", "1.0", "10.0", "+Inf"];
const PATHS: [&str; 2] = ["/a", "/b\\\"c"];

/// The OpenMetrics 1.0 page of `f`: what a 1.0 exporter writes for the same figures.
fn openmetrics1(f: &Figures) -> String {
    let mut page = String::from("# TYPE rq_seconds histogram\n");
    for (p, path) in PATHS.iter().enumerate() {
        for (b, le) in BOUNDS.iter().enumerate() {
            page += &format!(
                "rq_seconds_bucket{{path=\"{path}\",le=\"{le}\"}} {}\n",
                f.buckets[p][b]
            );
        }
        page += &format!("rq_seconds_count{{path=\"{path}\"}} {}\n", f.buckets[p][4]);
        page += &format!("rq_seconds_sum{{path=\"{path}\"}} {}\n", f.sums[p]);
        page += &format!("rq_seconds_created{{path=\"{path}\"}} {}\n", f.start);
    }
    let (count, sum, [q5, q9]) = f.summary;
    page += &format!(
        "# TYPE lat summary\nlat{{quantile=\"0.5\"}} {q5}\nlat{{quantile=\"0.9\"}} {q9}\n\
         lat_count {count}\nlat_sum {sum}\nlat_created {}\n",
        f.start
    );
    let ([low, all], gsum) = f.gauge;
    page += &format!(
        "# TYPE queue gaugehistogram\nqueue_bucket{{le=\"1.0\"}} {low}\nqueue_bucket{{le=\"+Inf\"}} {all}\n\
         queue_gcount {all}\nqueue_gsum {gsum}\n"
    );
    page + "# EOF\n"
}

/// The OpenMetrics 2.0 page of `f`: one line per histogram or summary, `st@` the start.
fn openmetrics2(f: &Figures) -> String {
    let mut page = String::from("# TYPE rq_seconds histogram\n");
    for (p, path) in PATHS.iter().enumerate() {
        let buckets: Vec<String> = BOUNDS
            .iter()
            .zip(f.buckets[p])
            .map(|(le, n)| format!("{le}:{n}"))
            .collect();
        page += &format!(
            "rq_seconds{{path=\"{path}\"}} {{count:{},sum:{:?},bucket:[{}]}} st@{}\n",
            f.buckets[p][4],
            f.sums[p],
            buckets.join(","),
            f.start
        );
    }
    let (count, sum, [q5, q9]) = f.summary;
    page += &format!(
        "# TYPE lat summary\nlat {{count:{count},sum:{sum:?},quantile:[0.5:{q5:?},0.9:{q9:?}]}} st@{}\n",
        f.start
    );
    let ([low, all], gsum) = f.gauge;
    page += &format!(
        "# TYPE queue gaugehistogram\nqueue {{gcount:{all},gsum:{gsum:?},bucket:[1.0:{low},+Inf:{all}]}}\n"
    );
    page + "# EOF\n"
}

/// Six scrapes 10 s apart; the process restarts before the fifth (counts drop, new start).
fn scrapes() -> Vec<Figures> {
    let grow = |k: u64| -> Figures {
        let base = [k, 3 * k + 1, 5 * k + 2, 6 * k + 2, 6 * k + 3];
        Figures {
            buckets: [base, base.map(|n| 2 * n)],
            sums: [0.25 * k as f64 + 1.0, 0.75 * k as f64],
            start: "1700000000.123",
            summary: (4 * k, 2.5 * k as f64, [0.125 * k as f64, 0.5]),
            gauge: ([k % 3, k % 3 + 2], 1.5),
        }
    };
    let mut all: Vec<Figures> = (1..=4).map(|k| grow(10 * k)).collect();
    for k in [1, 3] {
        let mut restarted = grow(k);
        restarted.start = "1700000041.5";
        all.push(restarted);
    }
    all
}

fn at(i: usize) -> DateTime<Utc> {
    DateTime::from_timestamp(1_700_000_005 + 10 * i as i64, 0).unwrap()
}

/// A tracker of `selectors` fed every scrape as `format`, written by `write`.
fn fed(selectors: &[Selector], format: Format, write: fn(&Figures) -> String) -> Tracker {
    let mut tracker = Tracker::new(selectors.to_vec());
    tracker.read_as(format);
    for (i, figures) in scrapes().iter().enumerate() {
        let report = tracker.ingest(&write(figures), at(i)).unwrap();
        assert_eq!(report.bad_lines, 0, "{:?}", report.first_error);
        assert_eq!(report.refused, 0, "{:?}", report.first_refused);
    }
    tracker
}

/// Every series as `name{labels} counter? last value`, sorted.
fn series(tracker: &Tracker) -> Vec<String> {
    let mut all: Vec<String> = tracker
        .series()
        .map(|s| {
            let mut labels: Vec<String> = s.labels().map(|(k, v)| format!("{k}={v:?}")).collect();
            labels.sort();
            let kind = if s.counter().is_some() { "counter" } else { "gauge" };
            format!("{}{{{}}} {kind} {:?}", s.name(), labels.join(","), s.last_value())
        })
        .collect();
    all.sort();
    all
}

#[test]
fn composite_values_are_tracked_as_their_openmetrics1_series() {
    // Everything, and the families by name (as for OpenMetrics 1.0, a selector's family
    // is `_bucket`, `_count` and `_sum`: a gauge histogram's `_gcount` and `_gsum` are not
    // picked by `queue`).
    for (selectors, tracked) in [
        (vec![], 2 * 7 + 4 + 4),
        (
            vec![
                Selector::parse("rq_seconds").unwrap(),
                Selector::parse("lat").unwrap(),
                Selector::parse("queue").unwrap(),
            ],
            2 * 7 + 4 + 2,
        ),
        // One bucket of each path; one count.
        (
            vec![Selector::parse(r#"rq_seconds_bucket{le="0.1"}"#).unwrap()],
            2,
        ),
        (
            vec![Selector::parse(r#"rq_seconds_count{path="/a"}"#).unwrap()],
            1,
        ),
    ] {
        let one = fed(&selectors, Format::OpenMetrics, openmetrics1);
        let two = fed(&selectors, Format::OpenMetrics2, openmetrics2);
        let series_one = series(&one);
        assert_eq!(series_one.len(), tracked, "{series_one:#?}");
        assert_eq!(series(&two), series_one);
    }
}

#[test]
fn queries_answer_an_openmetrics2_page_as_its_openmetrics1_twin() {
    let family = Selector::parse("rq_seconds").unwrap();
    let one_bucket = Selector::parse(r#"rq_seconds_bucket{le="0.1"}"#).unwrap();
    let count = Selector::parse("rq_seconds_count").unwrap();
    let summary = Selector::parse("lat").unwrap();
    let selectors = [family.clone(), summary.clone()];
    let one = fed(&selectors, Format::OpenMetrics, openmetrics1);
    let two = fed(&selectors, Format::OpenMetrics2, openmetrics2);
    let mut compared = 0;
    for estimator in [
        Estimator::Rate,
        Estimator::Increase,
        Estimator::WindowRate,
        Estimator::Irate,
    ] {
        for window in [20, 30, 60] {
            for i in 1..scrapes().len() {
                let query = |s: &Selector| {
                    Query::new(s, estimator)
                        .window(TimeDelta::seconds(window))
                        .at(at(i))
                };
                for s in [&one_bucket, &count] {
                    assert_eq!(two.evaluate(&query(s)).unwrap(), one.evaluate(&query(s)).unwrap());
                    assert_eq!(
                        two.evaluate(&query(s).by(["path"])).unwrap(),
                        one.evaluate(&query(s).by(["path"])).unwrap()
                    );
                }
                for q in [0.5, 0.9, 0.99] {
                    let by_path = query(&family).by(["path"]);
                    let (a, b) = (
                        two.evaluate(&by_path.clone().quantile(q)).unwrap(),
                        one.evaluate(&by_path.clone().quantile(q)).unwrap(),
                    );
                    assert_eq!(a, b);
                    compared += a.groups.iter().filter(|g| g.value.is_ok()).count();
                }
                assert_eq!(
                    two.evaluate(&query(&family).clone().mean()).unwrap(),
                    one.evaluate(&query(&family).clone().mean()).unwrap()
                );
                assert_eq!(
                    two.evaluate(&query(&summary).clone().mean()).unwrap(),
                    one.evaluate(&query(&summary).clone().mean()).unwrap()
                );
            }
        }
    }
    // Most windows hold two scrapes of both paths: the answers compared are numbers.
    assert!(compared > 100, "{compared} quantiles");
}

#[test]
fn a_start_timestamp_change_restarts_every_counter_of_the_value() {
    let two = fed(&[], Format::OpenMetrics2, openmetrics2);
    let counters: Vec<_> = two.series().filter_map(|s| s.counter()).collect();
    // Buckets, counts and sums of two histograms and the summary's count and sum.
    assert_eq!(counters.len(), 2 * 7 + 2);
    assert!(counters.iter().all(|c| c.resets() == 1), "one restart each");
}

#[test]
fn a_native_histogram_keeps_its_count_and_sum_and_quantile_says_why_not() {
    let family = Selector::parse("h").unwrap();
    let mut tracker = Tracker::new([family.clone()]);
    tracker.read_as(Format::OpenMetrics2);
    for (i, count) in [10, 25].into_iter().enumerate() {
        let page = format!(
            "# TYPE h histogram\nh {{count:{count},sum:{}.5,schema:3,zero_threshold:1e-4,zero_count:1,\
             positive_spans:[0:2],positive_buckets:[4,{}]}} st@1700000000.0\n# EOF\n",
            2 * count,
            count - 5
        );
        tracker.ingest(&page, at(i)).unwrap();
    }
    let query = Query::new(&family, Estimator::Increase)
        .window(TimeDelta::seconds(20))
        .at(at(1));
    let count = Selector::parse("h_count").unwrap();
    let counted = tracker
        .evaluate(
            &Query::new(&count, Estimator::Increase)
                .window(TimeDelta::seconds(20))
                .at(at(1)),
        )
        .unwrap();
    assert!(counted.value().unwrap() > 15.0);
    let sum = Selector::parse("h_sum").unwrap();
    let summed = tracker
        .evaluate(
            &Query::new(&sum, Estimator::Increase)
                .window(TimeDelta::seconds(20))
                .at(at(1)),
        )
        .unwrap();
    let mean = tracker.evaluate(&query.clone().mean()).unwrap().value().unwrap();
    assert_eq!(mean, summed.value().unwrap() / counted.value().unwrap());
    let why = tracker
        .evaluate(&query.clone().quantile(0.5))
        .unwrap()
        .value()
        .unwrap_err();
    assert_eq!(why, NoValue::NativeHistogram { name: "h".into() });
    assert!(why.to_string().contains("native histogram"), "{why}");
}
