//! A histogram's created time is the start of every one of its series, buckets included, as
//! Prometheus applies it: from OpenMetrics 1.0's `_created` line, from prometheus_client's
//! text output (a `_created` gauge family after the histogram), and from OpenMetrics 2.0's
//! `st@` on a composite value.

use chrono::{DateTime, Utc};
use promrate::series::ResetCause;
use promrate::{Format, Tracker};

const BOUNDS: [&str; 3] = ["0.5", "1.0", "+Inf"];

fn at(i: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_700_000_100 + 10 * i, 0).unwrap()
}

/// The page of one scrape: per instance and its created time, buckets growing with `n`.
fn page(format: Format, instances: &[(&str, &str)], n: u64) -> String {
    let counts = |i: usize| [n + i as u64, 2 * n + i as u64, 3 * n + i as u64];
    let mut text = String::from("# TYPE rq_seconds histogram\n");
    let mut created = String::new();
    for (i, (instance, start)) in instances.iter().enumerate() {
        // Labels in another order than the buckets': groups are found whatever the order.
        let labels = format!("path=\"/a\",instance=\"{instance}\"");
        let c = counts(i);
        if format == Format::OpenMetrics2 {
            let buckets: Vec<String> = BOUNDS.iter().zip(c).map(|(le, v)| format!("{le}:{v}")).collect();
            text += &format!(
                "rq_seconds{{{labels}}} {{count:{},sum:1.5,bucket:[{}]}} st@{start}\n",
                c[2],
                buckets.join(",")
            );
            continue;
        }
        for (le, v) in BOUNDS.iter().zip(c) {
            text += &format!("rq_seconds_bucket{{instance=\"{instance}\",le=\"{le}\",path=\"/a\"}} {v}\n");
        }
        text += &format!(
            "rq_seconds_count{{{labels}}} {}\nrq_seconds_sum{{{labels}}} 1.5\n",
            c[2]
        );
        let line = format!("rq_seconds_created{{{labels}}} {start}\n");
        match format {
            Format::OpenMetrics => text += &line,
            // prometheus_client's text output: a gauge family of its own, after.
            _ => created += &line,
        }
    }
    // Another group: the labels of the others but one.
    text += match format {
        Format::OpenMetrics2 => "rq_seconds{path=\"/a\"} {count:1,sum:0.0,bucket:[+Inf:1]}\n",
        _ => "rq_seconds_bucket{path=\"/a\",le=\"+Inf\"} 1\n",
    };
    if !created.is_empty() {
        text += &format!("# TYPE rq_seconds_created gauge\n{created}");
    }
    if format != Format::PrometheusText {
        text += "# EOF\n";
    }
    text
}

/// The created time of every counter series' newest point, by name and instance.
fn starts(tracker: &Tracker) -> Vec<(String, Option<String>, Option<DateTime<Utc>>)> {
    let mut all: Vec<_> = tracker
        .series()
        .filter_map(|s| {
            let created = s.counter()?.created_times().last().flatten();
            Some((
                s.name().to_string(),
                s.label("instance").map(str::to_string),
                created,
            ))
        })
        .collect();
    all.sort();
    all
}

fn started(seconds: f64) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_millis((seconds * 1000.0).round() as i64)
}

#[test]
fn every_bucket_starts_at_its_histograms_created_time_in_each_format() {
    let instances = [("a:1", "1700000000.25"), ("b:2", "1700000000.25")];
    let mut answers = Vec::new();
    for format in [Format::OpenMetrics, Format::PrometheusText, Format::OpenMetrics2] {
        let mut tracker = Tracker::new([]);
        tracker.read_as(format);
        for i in 0..3 {
            let report = tracker
                .ingest(&page(format, &instances, 10 + i), at(i as i64))
                .unwrap();
            assert_eq!(report.bad_lines, 0, "{format:?}: {:?}", report.first_error);
        }
        let all = starts(&tracker);
        let with_instance: Vec<_> = all.iter().filter(|(_, instance, _)| instance.is_some()).collect();
        // Three buckets, a count and a sum per instance.
        assert_eq!(with_instance.len(), 2 * 5, "{format:?}: {all:#?}");
        for (name, instance, created) in &with_instance {
            assert_eq!(
                *created,
                started(1_700_000_000.25),
                "{format:?}: {name} {instance:?}"
            );
        }
        // The bucket without an instance label is not in either group.
        let other: Vec<_> = all
            .iter()
            .filter(|(name, instance, _)| name == "rq_seconds_bucket" && instance.is_none())
            .collect();
        assert_eq!(other.len(), 1, "{format:?}");
        assert_eq!(other[0].2, None, "{format:?}: no created time of its own");
        answers.push(with_instance.into_iter().cloned().collect::<Vec<_>>());
    }
    assert_eq!(answers[0], answers[1]);
    assert_eq!(answers[0], answers[2]);
}

#[test]
fn a_restart_seen_only_in_the_created_time_resets_every_bucket() {
    for format in [Format::OpenMetrics, Format::PrometheusText, Format::OpenMetrics2] {
        let mut tracker = Tracker::new([]);
        tracker.read_as(format);
        tracker
            .ingest(&page(format, &[("a:1", "1700000000")], 10), at(0))
            .unwrap();
        // Restarted between scrapes and already past the old counts: only the created time
        // tells.
        let report = tracker
            .ingest(&page(format, &[("a:1", "1700000105")], 20), at(1))
            .unwrap();
        let mut reset: Vec<_> = report
            .resets
            .iter()
            .filter(|r| r.cause == ResetCause::CreatedChanged)
            .map(|r| r.name.as_str())
            .collect();
        reset.sort();
        assert_eq!(
            reset,
            [
                "rq_seconds_bucket",
                "rq_seconds_bucket",
                "rq_seconds_bucket",
                "rq_seconds_count",
                "rq_seconds_sum"
            ],
            "{format:?}"
        );
    }
}

#[test]
fn buckets_keep_their_groups_when_series_come_and_go() {
    let mut tracker = Tracker::new([]);
    tracker.read_as(Format::OpenMetrics).stale_after(1);
    let (a, b, c, d) = (
        ("a:1", "1700000000"),
        ("b:2", "1700000020"),
        ("c:3", "1700000030"),
        ("d:4", "1700000050"),
    );
    tracker
        .ingest(&page(Format::OpenMetrics, &[a, b, c], 10), at(0))
        .unwrap();
    // b goes: its slots are freed. d comes and takes some of them, and b, restarted, the
    // others: b's buckets are its new series, wherever they are.
    tracker
        .ingest(&page(Format::OpenMetrics, &[a, c], 11), at(1))
        .unwrap();
    let b = ("b:2", "1700000070");
    tracker
        .ingest(&page(Format::OpenMetrics, &[a, c, d, b], 12), at(2))
        .unwrap();
    let all = starts(&tracker);
    let of = |instance: &str| -> Vec<_> {
        all.iter()
            .filter(|(_, i, _)| i.as_deref() == Some(instance))
            .map(|(_, _, c)| *c)
            .collect()
    };
    for (instance, start) in [
        ("a:1", 1_700_000_000.0),
        ("b:2", 1_700_000_070.0),
        ("c:3", 1_700_000_030.0),
        ("d:4", 1_700_000_050.0),
    ] {
        assert_eq!(of(instance), vec![started(start); 5], "{instance}: {all:#?}");
    }
}
