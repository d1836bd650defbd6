//! The page of a simulated server other than vLLM: each figure's metric from the catalogue
//! (`engines.rs`), written with the run's state in that metric's unit and with the labels
//! the server puts on its series. It holds what the monitor reads, not the whole page a real
//! server serves (those are `tests/data/engines/`); it tests every engine's figures end to
//! end at the simulation's known rates.

use promrate::text::write;
use promrate::MetricType;

use super::families::{family_header, gauge, histogram, Histogram, LabelSet};
use super::model::{
    Simulation, State, CONCURRENCY, KV_TOKENS, LATENCY_S, PROMPT_TOKENS_PER_REQUEST, QUEUE_S,
    TOKENS_PER_REQUEST, TOKENS_PER_S_PER_REQUEST, TTFT_S,
};
use crate::engines::{Engine, KvSize, Metric};

/// Latency buckets in seconds (scaled to each metric's unit).
const SECONDS: [f64; 16] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0,
];
/// Token-count buckets.
const TOKENS: [f64; 12] = [
    1.0, 10.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0, 10000.0, 20000.0, 50000.0,
];

impl Simulation {
    /// The page `engine` serves now.
    pub fn render_as(&self, engine: &Engine) -> String {
        let t = self.started.elapsed().as_secs_f64();
        match engine.kind {
            "vllm" => self.render(),
            "dcgm" => self.render_dcgm_at(t),
            _ => self.render_engine_at(engine, t),
        }
    }

    /// The page `engine` serves `t` seconds into the simulation.
    pub fn render_engine_at(&self, engine: &Engine, t: f64) -> String {
        let s = self.state_at(t);
        let mut page = String::with_capacity(8 * 1024);
        let labels = engine.labels;
        // A server that counts tokens when a request ends counts them per finished request.
        let generated = if engine.tokens_at_request_end {
            s.finished.floor() * TOKENS_PER_REQUEST
        } else {
            s.generated.floor()
        };
        let prompt = (generated * PROMPT_TOKENS_PER_REQUEST / TOKENS_PER_REQUEST).floor();
        let requests = s.finished.floor();
        if let Some(m) = engine.generation.first() {
            tokens(&mut page, m, labels, generated, requests, TOKENS_PER_REQUEST);
        }
        if let Some(m) = engine.prompt.first() {
            tokens(&mut page, m, labels, prompt, requests, PROMPT_TOKENS_PER_REQUEST);
        }
        if let Some(m) = engine.finished.first() {
            finished(&mut page, m, labels, requests);
        }
        gauges(&mut page, engine, &s);
        latencies(&mut page, engine, &s, requests);
        phases(&mut page, engine, requests);
        capacity(&mut page, engine, &s);
        page
    }
}

/// Writes `value` (in the figure's unit) in the metric's unit.
fn in_unit(m: &Metric, value: f64) -> f64 {
    value / m.scale
}

/// A token counter: `<name>_total` as a counter, or `<name>_sum` as a histogram of tokens per
/// request (`requests` observations of mean `per_request`).
fn tokens(p: &mut String, m: &Metric, labels: LabelSet<'_>, total: f64, requests: f64, per_request: f64) {
    if let Some(base) = m.name.strip_suffix("_sum") {
        let h = Histogram {
            name: base,
            help: "Tokens per request.",
            bounds: &TOKENS,
            labels,
            count: requests,
            mean: if requests > 0.0 {
                total / requests
            } else {
                per_request
            },
            shape: 2.0,
            created_unix: None,
        };
        histogram(p, &h);
    } else {
        family_header(p, m.name, "Tokens processed.", MetricType::Counter);
        write::sample(p, m.name, labels, in_unit(m, total), None).expect("writing to a String");
    }
}

/// Finished requests; with a required label (`status="success"`), also a series of another
/// value that must not count.
fn finished(p: &mut String, m: &Metric, labels: LabelSet<'_>, requests: f64) {
    family_header(p, m.name, "Requests finished.", MetricType::Counter);
    let Some((label, value)) = m.only else {
        write::sample(p, m.name, labels, requests, None).expect("writing to a String");
        return;
    };
    for (v, count) in [(value, requests), ("error", (requests * 0.05).floor())] {
        let mut with: Vec<(&str, &str)> = labels.to_vec();
        with.push((label, v));
        write::sample(p, m.name, &with, count, None).expect("writing to a String");
    }
}

/// Running and waiting requests and KV-cache usage, each in its metric's unit.
fn gauges(p: &mut String, engine: &Engine, s: &State) {
    let kv = 0.3 * s.running / CONCURRENCY;
    for (metrics, value) in [
        (engine.running, s.running),
        (engine.waiting, s.waiting),
        (engine.kv_usage, kv),
    ] {
        if let Some(m) = metrics.first() {
            gauge(p, m.name, "Current value.", &[(engine.labels, in_unit(m, value))]);
        }
    }
}

/// Time to first token, end to end and between tokens, in each metric's unit.
fn latencies(p: &mut String, engine: &Engine, s: &State, requests: f64) {
    let figures = [
        (engine.ttft, requests, TTFT_S),
        (engine.e2e, requests, LATENCY_S),
        (engine.itl, s.generated.floor(), 1.0 / TOKENS_PER_S_PER_REQUEST),
    ];
    for (metrics, count, mean_s) in figures {
        let Some(m) = metrics.first() else { continue };
        let bounds: Vec<f64> = SECONDS.iter().map(|b| in_unit(m, *b)).collect();
        let h = Histogram {
            name: m.name,
            help: "Latency.",
            bounds: &bounds,
            labels: engine.labels,
            count,
            mean: in_unit(m, mean_s),
            shape: 3.0,
            created_unix: None,
        };
        histogram(p, &h);
    }
}

/// Time queued, in prefill, in decode and in the engine, for the phases the server has.
fn phases(p: &mut String, engine: &Engine, requests: f64) {
    for (metrics, mean_s) in [
        (engine.queue_time, QUEUE_S),
        (engine.prefill_time, TTFT_S - QUEUE_S),
        (engine.decode_time, LATENCY_S - TTFT_S),
        (engine.inference_time, LATENCY_S - QUEUE_S),
    ] {
        let Some(m) = metrics.first() else { continue };
        let bounds: Vec<f64> = SECONDS.iter().map(|b| in_unit(m, *b)).collect();
        let h = Histogram {
            name: m.name,
            help: "Time per phase.",
            bounds: &bounds,
            labels: engine.labels,
            count: requests,
            mean: in_unit(m, mean_s),
            shape: 3.0,
            created_unix: None,
        };
        histogram(p, &h);
    }
}

/// A counter of `value`, in the metric's labels (and the label it requires).
fn counter_of(p: &mut String, m: &Metric, labels: LabelSet<'_>, value: f64) {
    family_header(p, m.name, "Count.", MetricType::Counter);
    let mut with: Vec<(&str, &str)> = labels.to_vec();
    with.extend(m.only);
    write::sample(p, m.name, &with, value, None).expect("writing to a String");
}

/// The KV cache's size (as the server says it), preemptions, rejections and aborts (a
/// share of the finished requests), waiting by reason, the sleep state.
fn capacity(p: &mut String, engine: &Engine, s: &State) {
    let labels = engine.labels;
    match engine.kv_size.first() {
        Some(KvSize::Tokens(name)) => gauge(p, name, "KV tokens.", &[(labels, KV_TOKENS)]),
        Some(KvSize::Blocks {
            blocks,
            tokens_per_block,
        }) => {
            gauge(p, blocks, "KV blocks.", &[(labels, KV_TOKENS / 16.0)]);
            gauge(p, tokens_per_block, "Tokens per block.", &[(labels, 16.0)]);
        }
        // Labels of an info gauge: vLLM's own page writes them.
        Some(KvSize::InfoLabels { .. }) | None => {}
    }
    for (metrics, share) in [
        (engine.preemptions, 0.004),
        (engine.admission_rejections, 0.002),
        (engine.aborts, 0.007),
    ] {
        if let Some(m) = metrics.first() {
            counter_of(p, m, labels, (s.finished * share).floor());
        }
    }
    for (metrics, label, values) in [
        (
            engine.waiting_by_reason,
            "reason",
            [("capacity", s.waiting), ("deferred", 0.0)],
        ),
        (
            engine.sleep_state,
            "sleep_state",
            [("awake", 1.0), ("weights_offloaded", 0.0)],
        ),
    ] {
        let Some(m) = metrics.first() else { continue };
        family_header(p, m.name, "By value.", MetricType::Gauge);
        for (value, v) in values {
            let mut with: Vec<(&str, &str)> = labels.to_vec();
            with.push((label, value));
            write::sample(p, m.name, &with, v, None).expect("writing to a String");
        }
    }
}
