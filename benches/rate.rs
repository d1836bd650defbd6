//! Rate engine costs: ingesting a whole vLLM scrape into a warmed-up tracker against
//! parsing the same page alone (same group, so the report is the ratio), and PromQL range
//! functions over 10,000 points.
//!
//! Run: `cargo bench --bench rate`. Reads its pages from `tests/data`.

use std::hint::black_box;

use chrono::{DateTime, TimeDelta};
mod common;

use common::read;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use promrate::promql::{Point, RangeFunctions};
use promrate::{Selector, Tracker};

fn ingest(c: &mut Criterion) {
    let page = read("vllm/vllm-0.33-v1-single-t0.prom");
    let t0 = DateTime::from_timestamp(1_764_480_500, 0).unwrap();
    let mut group = c.benchmark_group("ingest/vllm-0.33-v1-single-t0.prom");
    group.throughput(Throughput::Bytes(page.len() as u64));
    group.bench_function("parse only", |b| {
        b.iter(|| {
            let mut samples = 0;
            for entry in promrate::parse(black_box(&page)) {
                if let promrate::Entry::Sample(s) = entry.expect("valid page") {
                    samples += 1;
                    black_box(s.value());
                }
            }
            samples
        })
    });
    for (label, selectors) in [
        ("tracker, every series", Vec::new()),
        (
            "tracker, vllm:* selector",
            vec![Selector::parse(r#"{__name__=~"vllm:.*"}"#).unwrap()],
        ),
    ] {
        let mut tracker = Tracker::new(selectors);
        tracker.normalize_names(true);
        let mut i = 0i64;
        // Warm up past the retention so every series is at its steady size.
        for _ in 0..400 {
            i += 1;
            tracker.ingest(&page, t0 + TimeDelta::seconds(2 * i)).unwrap();
        }
        group.bench_function(label, |b| {
            b.iter(|| {
                i += 1;
                tracker
                    .ingest(black_box(&page), t0 + TimeDelta::seconds(2 * i))
                    .unwrap()
                    .samples
            })
        });
    }
    group.finish();
}

fn promql(c: &mut Criterion) {
    // A counter scraped every 15 s with a restart every 1,000 points.
    let points: Vec<Point> = (0..10_000i64)
        .map(|i| Point::from_millis(1_700_000_000_000 + i * 15_000, ((i % 1_000) * 7) as f64))
        .collect();
    let at = DateTime::from_timestamp_millis(points.last().unwrap().timestamp_ms).unwrap();
    let range = RangeFunctions::new(TimeDelta::seconds(15 * 10_000));
    let mut group = c.benchmark_group("promql/10k points");
    group.throughput(Throughput::Elements(points.len() as u64));
    group.bench_function("rate", |b| b.iter(|| range.rate(black_box(&points), at)));
    group.bench_function("irate", |b| b.iter(|| range.irate(black_box(&points), at)));
    group.bench_function("resets", |b| b.iter(|| range.resets(black_box(&points), at)));
    group.bench_function("anchored increase", |b| {
        b.iter(|| range.anchored().increase(black_box(&points), at))
    });
    group.bench_function("smoothed rate", |b| {
        b.iter(|| range.smoothed().rate(black_box(&points), at))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(3)).warm_up_time(std::time::Duration::from_secs(1));
    targets = ingest, promql
}
criterion_main!(benches);
