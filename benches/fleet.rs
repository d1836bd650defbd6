//! The tracker at fleet scale: pages of 10,000, 100,000 and 1,000,000 series of one counter
//! (4 labels, 1,000 instances), each measured next to a bare parse of the same page (same
//! group, so the report reads as ratios): first ingest into an empty tracker (and with
//! `share_label_sets`, which this page, whose series all have labels of their own, gives
//! nothing to share), steady ingest
//! (the next scrape, the retention full: window + 2 intervals, as the monitor keeps), whole, read in 64 KiB chunks (`Tracker::ingest_chunks`) and with
//! `max_series`, and one aggregation
//! (the window rate by instance). The `/federate` page of 1,000 simulated vLLM servers
//! and every figure of `vllm_monitor --federate` are the monitor's bench
//! (`cargo bench -p vllm-monitor --bench federation`).
//!
//! Heap per series (live bytes in steady state, the retention full, less the 16 bytes of
//! each retained point) is printed before the timings: a counting allocator tracks live
//! bytes.
//!
//! Run: `cargo bench --bench fleet`; `FLEET_SERIES=1000000 cargo bench --bench fleet` for one
//! size only (the pages of every size are built before any is measured).

use std::hint::black_box;

use chrono::{DateTime, TimeDelta, Utc};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use promrate::{Estimator, Query, Selector, Tracker, WindowRule};

#[path = "common/live_bytes.rs"]
mod live_bytes;
use live_bytes::live;

const INSTANCES: usize = 1_000;

fn at(scrape: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_800_000_000 + 15 * scrape, 0).unwrap()
}

/// `series` series of one counter over 1,000 instances, 4 labels each, at scrape `n`.
fn counter_page(series: usize, n: u64) -> String {
    let mut page = String::with_capacity(series * 110);
    page.push_str("# TYPE requests_total counter\n");
    let per_instance = series / INSTANCES;
    for i in 0..INSTANCES {
        for s in 0..per_instance {
            let value = (n + 1) * (1 + (i + s) as u64 % 7);
            page.push_str(&format!(
                "requests_total{{instance=\"vllm-{i:05}:8000\",job=\"api\",route=\"/v1/r{}\",shard=\"{}\"}} {value}\n",
                s % 100,
                s / 100
            ));
        }
    }
    page
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

/// Live heap bytes per series of a tracker (as `setup` makes it) in steady state: `scrapes`
/// scrapes of `pages` (the last one repeated), less the 16 bytes of each retained point.
/// Also the retained points per series.
fn heap_per_series(pages: &[String], scrapes: i64, setup: impl Fn(&mut Tracker)) -> (f64, usize, f64) {
    let before = live();
    let mut tracker = Tracker::new([]);
    setup(&mut tracker);
    for n in 0..scrapes {
        let page = &pages[(n as usize).min(pages.len() - 1)];
        tracker.ingest(page, at(n)).expect("ingested");
    }
    let bytes = (live() - before) as f64;
    let points: usize = tracker
        .series()
        .map(|s| s.counter().map_or(0, |c| c.len()) + s.gauge().map_or(0, |g| g.len()))
        .sum();
    let series = tracker.len();
    let per_series = points as f64 / series as f64;
    ((bytes - 16.0 * points as f64) / series as f64, series, per_series)
}

fn scale(c: &mut Criterion) {
    let window = TimeDelta::seconds(60);
    let sizes: Vec<usize> = match std::env::var("FLEET_SERIES") {
        Ok(sizes) => sizes
            .split(',')
            .map(|s| s.trim().parse().expect("FLEET_SERIES: numbers"))
            .collect(),
        Err(_) => vec![10_000, 100_000, 1_000_000],
    };
    for series in sizes {
        let pages: Vec<String> = (0..4).map(|n| counter_page(series, n)).collect();
        // Steady state: the retention full (window + 2 intervals, as the monitor keeps).
        let retention = window + TimeDelta::seconds(30);
        let warm = 2 * (window.num_seconds() / 15 + 3);
        let (heap, tracked, points) = heap_per_series(&pages, warm, |t| {
            t.retention(retention);
        });
        let (heap_limited, _, _) = heap_per_series(&pages, warm, |t| {
            t.retention(retention).max_series(series * 2);
        });
        // Every series has labels of its own here: what sharing them costs where it saves
        // nothing (`Tracker::share_label_sets`).
        let (heap_shared, _, _) = heap_per_series(&pages, warm, |t| {
            t.retention(retention).share_label_sets(true);
        });
        println!(
            "fleet/{series} series: heap per series {heap:.0} bytes beyond its {points:.1} points \
             ({tracked} series, {warm} scrapes; with max_series {heap_limited:.0}; \
             sharing label sets {heap_shared:.0})"
        );
        let mut group = c.benchmark_group(format!("fleet/{series} series"));
        group.sample_size(10);
        group.throughput(Throughput::Bytes(pages[0].len() as u64));
        group.bench_function("parse only", |b| b.iter(|| parse_only(black_box(&pages[0]))));
        group.bench_function("first ingest", |b| {
            b.iter_batched(
                || Tracker::new([]),
                |mut tracker| {
                    tracker.ingest(&pages[0], at(0)).expect("ingested");
                    tracker
                },
                BatchSize::PerIteration,
            )
        });
        group.bench_function("first ingest, sharing label sets", |b| {
            b.iter_batched(
                || {
                    let mut tracker = Tracker::new([]);
                    tracker.share_label_sets(true);
                    tracker
                },
                |mut tracker| {
                    tracker.ingest(&pages[0], at(0)).expect("ingested");
                    tracker
                },
                BatchSize::PerIteration,
            )
        });
        // Steady means the retention is full: the points a window reads and the slack the
        // monitor keeps, then as many scrapes again.
        let mut tracker = Tracker::new([]);
        tracker.retention(retention);
        for n in 0..warm {
            let page = &pages[(n as usize).min(3)];
            tracker.ingest(page, at(n)).expect("ingested");
        }
        // The next scrape: the same series in the same order (values as on the last page).
        let mut steady = tracker.clone();
        let mut scrape = warm;
        group.bench_function("steady ingest", |b| {
            b.iter(|| {
                scrape += 1;
                steady.ingest(&pages[3], at(scrape)).expect("ingested")
            })
        });
        // The same scrape read as it arrives, in 64 KiB chunks (a socket's reads).
        let mut chunked = tracker.clone();
        group.bench_function("steady ingest, chunks", |b| {
            b.iter(|| {
                scrape += 1;
                let mut reading = chunked.ingest_chunks(at(scrape)).expect("after the last");
                for chunk in pages[3].as_bytes().chunks(1 << 16) {
                    reading.push(chunk);
                }
                reading.finish().expect("ingested")
            })
        });
        let mut limited = tracker.clone();
        limited.max_series(series * 2);
        group.bench_function("steady ingest, max_series", |b| {
            b.iter(|| {
                scrape += 1;
                limited.ingest(&pages[3], at(scrape)).expect("ingested")
            })
        });
        let requests = Selector::parse("requests_total").unwrap();
        let now = at(warm - 1);
        let by_instance = Query::new(&requests, Estimator::WindowRate)
            .window(window)
            .at(now)
            .by(["instance"]);
        group.bench_function("window rate by instance", |b| {
            b.iter(|| {
                let answer = tracker.evaluate(&by_instance).expect("tracked");
                assert_eq!(answer.groups.len(), INSTANCES);
                answer
            })
        });
        // The same figure through a fold of one's own (a closure per series, as 0.2 wrote
        // it): what the front door's reasons and coverage cost beside a bare fold.
        let rule = WindowRule::new(window);
        group.bench_function("window rate by instance, fold::sum_by", |b| {
            b.iter(|| {
                let groups = promrate::fold::sum_by(&tracker, &requests, &["instance"], |s| {
                    Some(s.counter()?.window_increase(&rule, now).ok()?.rate())
                })
                .expect("tracked");
                assert_eq!(groups.len(), INSTANCES);
                groups
            })
        });
        group.finish();
    }
}

criterion_group!(benches, scale);
criterion_main!(benches);
