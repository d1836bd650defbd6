//! The monitor at fleet scale: the `/federate` page of 1,000 simulated vLLM servers
//! (393,000 series, `vllm_monitor --serve --fleet`'s generator) next to a bare parse of the
//! same page (same group, so the report reads as ratios): its steady ingest, one counter's
//! aggregation by instance, a histogram quantile by instance, and every figure of one
//! interval of `vllm_monitor --federate` (by instance).
//!
//! Cardinality (`cardinality`): one interval of the monitor (`Pipeline::tick` and its plain
//! lines; its JSON object, every group, apart) over a synthetic page of 200,000 `model_name` values with `--by model_name`, and
//! of 16,000 `engine` values without `--by`, each beside a bare parse of the same page: the
//! ratio stays flat as the page grows when the interval is linear in its series.
//!
//! Run: `cargo bench -p vllm-monitor --bench federation`. Reads its template page from the
//! repository's `tests/data`.

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeDelta, Utc};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use promrate::{Estimator, Query, Selector, Tracker, WindowRule};
use vllm_monitor::clock::Schedule;
use vllm_monitor::http::Page;
use vllm_monitor::output::json::Json;
use vllm_monitor::output::plain::Plain;
use vllm_monitor::output::Output;
use vllm_monitor::pipeline::{Pipeline, Settings};
use vllm_monitor::scrape::Scrape;
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
        b.iter(|| {
            tracker
                .evaluate(&e2e_by_instance.clone().quantile(0.99))
                .expect("tracked")
        })
    });
    let sources = [figures::Source {
        tracker: &tracker,
        at: now,
        url: "http://prometheus:9090/federate",
        retired: None,
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

/// A vLLM page at scrape `n` with `values` values of `label`, each with its generation
/// and prompt token counters and its running requests (a value's rate: its number + 1).
fn wide_page(label: &str, values: usize, n: u64) -> String {
    let mut page = String::with_capacity(values * 200);
    let families = [
        ("vllm:generation_tokens_total", "counter"),
        ("vllm:prompt_tokens_total", "counter"),
        ("vllm:num_requests_running", "gauge"),
    ];
    for (i, (family, kind)) in families.into_iter().enumerate() {
        let _ = writeln!(page, "# TYPE {family} {kind}");
        for v in 0..values {
            let value = match i {
                2 => 1,
                _ => (v as u64 + 1) * (n + 1),
            };
            let _ = writeln!(page, "{family}{{{label}=\"v{v:06}\"}} {value}");
        }
    }
    page
}

/// A monitor of one URL serving `wide_page(label, values, _)` every second, `--by by`.
struct Wide {
    pipeline: Pipeline,
    label: &'static str,
    values: usize,
    scrapes: u64,
    started: DateTime<Utc>,
}

impl Wide {
    fn new(label: &'static str, values: usize, by: Option<&str>) -> Wide {
        let started = at(0);
        let settings = Settings {
            window: TimeDelta::seconds(10),
            interval: TimeDelta::seconds(1),
            timeout: TimeDelta::seconds(1),
            ewma_tau: TimeDelta::seconds(10),
            by: by.map(str::to_string),
            max_groups: 50,
            target_requests: None,
            gpu: Default::default(),
            slo: Vec::new(),
            max_series: usize::MAX,
            points_every: None,
        };
        let schedule = Schedule::new(started, Duration::from_secs(1), None);
        let urls = ["http://wide:8000/metrics".to_string()];
        let pipeline = Pipeline::new(settings, schedule, &urls, String::new(), Vec::new());
        let mut wide = Wide {
            pipeline,
            label,
            values,
            scrapes: 0,
            started,
        };
        for _ in 0..3 {
            wide.scrape();
            wide.pipeline.tick();
        }
        wide
    }

    /// The next scrape, read (ingested) before the interval that follows it.
    fn scrape(&mut self) {
        let start = self.started + TimeDelta::milliseconds(1000 * self.scrapes as i64 + 100);
        let page = Page {
            body: wide_page(self.label, self.values, self.scrapes),
            format: promrate::Format::PrometheusText,
            content_type: None,
        };
        let scrape = Scrape {
            url: 0,
            start,
            end: start + TimeDelta::milliseconds(10),
            result: Ok(page),
        };
        self.pipeline.ingest(&scrape, 0);
        self.scrapes += 1;
    }
}

/// An interval at `values` values of `label`, `--by by`: timed from the tick to its plain
/// lines written, each after a new page read outside the timing; then the newest
/// interval's JSON object (`--json` writes every group).
fn interval_bench(c: &mut Criterion, label: &'static str, values: usize, by: Option<&str>) {
    let page = wide_page(label, values, 0);
    let what = match by {
        Some(by) => format!("--by {by}"),
        None => "no --by".to_string(),
    };
    let mut group = c.benchmark_group(format!("cardinality/{values} {label} values, {what}"));
    group.sample_size(10).measurement_time(Duration::from_secs(20));
    group.throughput(Throughput::Bytes(page.len() as u64));
    group.bench_function("parse only", |b| b.iter(|| parse_only(black_box(&page))));
    let mut wide = Wide::new(label, values, by);
    let mut plain = Plain::new(std::io::sink(), false);
    group.bench_function("one interval, plain lines", |b| {
        b.iter_custom(|iters| {
            let mut spent = Duration::ZERO;
            for _ in 0..iters {
                wide.scrape();
                let start = Instant::now();
                wide.pipeline.tick();
                let run = wide.pipeline.view();
                plain.interval(&run, run.snapshot.expect("an interval"));
                spent += start.elapsed();
            }
            spent
        })
    });
    let mut json = Json::new(std::io::sink());
    let run = wide.pipeline.view();
    let snapshot = run.snapshot.expect("an interval");
    group.bench_function("its JSON object", |b| b.iter(|| json.interval(&run, snapshot)));
    group.finish();
}

fn cardinality(c: &mut Criterion) {
    interval_bench(c, "model_name", 200_000, Some("model_name"));
    interval_bench(c, "engine", 16_000, None);
}

criterion_group!(benches, federation, cardinality);
criterion_main!(benches);
