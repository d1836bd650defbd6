//! The monitor at fleet scale: the `/federate` page of 1,000 simulated vLLM servers
//! (393,000 series, `vllm_monitor --serve --fleet`'s generator) next to a bare parse of the
//! same page (same group, so the report reads as ratios): its steady ingest, one counter's
//! aggregation by instance, a histogram quantile by instance, and every figure of one
//! interval of `vllm_monitor --federate` (by instance).
//!
//! Run: `cargo bench -p vllm-monitor --bench federation`. Reads its template page from the
//! repository's `tests/data`.

use std::hint::black_box;
use std::path::Path;

use chrono::{DateTime, TimeDelta, Utc};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use promrate::{Estimator, Query, Selector, Tracker, WindowRule};
use vllm_monitor::{figures, fleet};

const INSTANCES: usize = 1_000;

fn at(scrape: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_800_000_000 + 15 * scrape, 0).unwrap()
}

fn parse_only(page: &str) -> usize {
    let mut samples = 0;
    for entry in promrate::parse(page) {
        if let promrate::Entry::Sample(s) = entry.expect("valid page") {
            samples += 1;
            black_box(s.value());
        }
    }
    samples
}

/// A page of the repository's `tests/data`.
fn read(page: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data")
        .join(page);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn federation(c: &mut Criterion) {
    let template = read(fleet::TEMPLATE);
    let start_ms = at(0).timestamp_millis();
    let fleet = fleet::Fleet::new(&template, INSTANCES, start_ms);
    let pages: Vec<String> = (0..3).map(|n| fleet.page(at(n).timestamp_millis())).collect();
    let mut tracker = Tracker::new([]);
    tracker.normalize_names(true).infer_counters(true);
    for (n, page) in pages.iter().enumerate() {
        tracker.ingest(page, at(n as i64)).expect("ingested");
    }
    let mut group = c.benchmark_group(format!("fleet/federate {} series", fleet.series()));
    group.sample_size(10);
    group.throughput(Throughput::Bytes(pages[0].len() as u64));
    group.bench_function("parse only", |b| b.iter(|| parse_only(black_box(&pages[0]))));
    // Every scrape a new page (built outside the timing): new values and timestamps.
    let mut steady = tracker.clone();
    let mut scrape = 2;
    group.bench_function("steady ingest", |b| {
        b.iter_batched(
            || {
                scrape += 1;
                (scrape, fleet.page(at(scrape).timestamp_millis()))
            },
            |(n, page)| steady.ingest(&page, at(n)).expect("ingested"),
            BatchSize::PerIteration,
        )
    });
    let window = TimeDelta::seconds(60);
    let now = at(2);
    let tokens = Selector::parse("vllm:generation_tokens_total").unwrap();
    let tokens_by_instance = Query::new(&tokens, Estimator::WindowRate)
        .window(window)
        .at(now)
        .by(["instance"]);
    group.bench_function("window rate by instance, generation tokens", |b| {
        b.iter(|| tracker.evaluate(&tokens_by_instance).expect("tracked"))
    });
    let windowing = WindowRule::new(window)
        .slack(TimeDelta::seconds(15))
        .gap(TimeDelta::seconds(45));
    let e2e = Selector::parse("vllm:e2e_request_latency_seconds").unwrap();
    let e2e_by_instance = Query::new(&e2e, Estimator::WindowIncrease)
        .window(window)
        .at(now)
        .by(["instance"]);
    group.bench_function("quantile by instance, e2e", |b| {
        b.iter(|| tracker.quantile(0.99, &e2e_by_instance).expect("tracked"))
    });
    let sources = [figures::Source {
        tracker: &tracker,
        at: now,
        url: "http://prometheus:9090/federate",
    }];
    group.bench_function("every monitor figure, by instance", |b| {
        b.iter(|| {
            let (total, groups) = figures::compute(&sources, windowing, Some("instance"));
            assert_eq!(groups.len(), INSTANCES);
            (total, groups)
        })
    });
    group.finish();
}

criterion_group!(benches, federation);
criterion_main!(benches);
