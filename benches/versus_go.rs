//! promrate against Go's parsers, the same work per sample as `benches/go/harness.go`:
//! touch the name, count the labels, read the value as f64; and, in the second function,
//! also read every label's name and raw value (VictoriaMetrics splits tags into slices as
//! part of its parse). `benches/versus_go.sh` runs this group and the Go harness pinned to
//! one core, interleaved, and prints the ratio table; `cargo bench --bench versus_go` runs
//! the Rust side alone.
//!
//! `PROMRATE_REPEAT="PAGE MODE N"` in the environment runs `samples` N times on one page
//! (MODE `samples` or `labels`) instead of criterion: `benches/instructions.sh` counts the
//! instructions of a parse that way, under callgrind.

use std::hint::black_box;

mod common;

use common::read;
use criterion::{criterion_group, Criterion, Throughput};

/// The five pages of the comparison (tests/data).
const PAGES: &[&str] = &[
    "corpus/node_exporter-e2e-output.txt",
    "corpus/cadvisor-prometheus_metrics.txt",
    "corpus/prometheus-textparse-alltypes.237mfs.prom.txt",
    "vllm/vllm-0.33-v1-single-t0.prom",
    "corpus/vllm-datadog-fixture-vllm_metrics.txt",
];

/// The per-sample work of the harness; returns (samples, a checksum the optimiser must keep).
fn samples(text: &str, every_label: bool) -> (usize, f64) {
    let mut n = 0;
    let mut sink = 0.0;
    for entry in promrate::parse(text) {
        if let promrate::Entry::Sample(s) = entry.expect("real pages parse") {
            n += 1;
            sink += s.name().len() as f64 + s.labels().len() as f64 + s.value();
            if every_label {
                for (name, value) in s.labels() {
                    sink += (name.len() + value.raw().len()) as f64;
                }
            }
        }
    }
    (n, sink)
}

fn versus_go(c: &mut Criterion) {
    for page in PAGES {
        let text = read(page);
        let name = page.rsplit('/').next().unwrap();
        let mut group = c.benchmark_group(format!("versus_go/{name}"));
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function("samples", |b| b.iter(|| samples(black_box(&text), false)));
        group.bench_function("labels", |b| b.iter(|| samples(black_box(&text), true)));
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(2)).warm_up_time(std::time::Duration::from_millis(500));
    targets = versus_go
}

fn main() {
    if let Ok(spec) = std::env::var("PROMRATE_REPEAT") {
        let [page, mode, times] = spec.split(' ').collect::<Vec<_>>()[..] else {
            panic!("PROMRATE_REPEAT is \"PAGE MODE N\", got {spec:?}");
        };
        let text = read(page);
        let times: usize = times.parse().expect("N is a count");
        let sink: f64 = (0..times)
            .map(|_| samples(black_box(&text), mode == "labels").1)
            .sum();
        println!("{sink}");
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
