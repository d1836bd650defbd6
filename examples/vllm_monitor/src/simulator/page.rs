//! The page vLLM 0.33's `prometheus_client` serves from `/metrics`, written family by
//! family (HELP/TYPE, `_created` gauge families, histograms whose sums are exactly
//! count × mean, python and process metrics) from the model's state.

use super::families::{counter, gauge, histogram, Histogram};

use super::model::{
    Simulation, State, CONCURRENCY, LATENCY_S, MODEL, PROMPT_TOKENS_PER_REQUEST, QUEUE_S, TOKENS_PER_REQUEST,
    TOKENS_PER_S_PER_REQUEST, TTFT_S,
};

impl Simulation {
    /// The page as vLLM 0.33 serves it from `/metrics`, now.
    pub fn render(&self) -> String {
        self.render_at(self.started.elapsed().as_secs_f64())
    }

    /// The page as vLLM 0.33 serves it from `/metrics` (Prometheus text format 0.0.4),
    /// `t` seconds into the simulation, in the order vLLM writes its families.
    pub fn render_at(&self, t: f64) -> String {
        let s = self.state_at(t);
        let mut page = String::with_capacity(64 * 1024);
        let uptime = (self.started_unix + s.t - s.process_start_unix).max(0.0);
        python_families(&mut page, uptime);
        process_families(&mut page, &s, uptime);
        engine_gauges(&mut page, &s);
        token_and_request_counters(&mut page, &s);
        spec_decode_counters(&mut page, &s);
        histograms(&mut page, &s);
        cache_config(&mut page);
        page
    }
}

/// The garbage collector's counters and the interpreter's version.
fn python_families(p: &mut String, uptime: f64) {
    counter(
        p,
        "python_gc_objects_collected",
        "Objects collected during gc",
        &[
            (&[("generation", "0")], (4.4e6 + uptime * 120.0).floor()),
            (&[("generation", "1")], (680175.0 + uptime * 19.0).floor()),
            (&[("generation", "2")], (118422.0 + uptime * 3.0).floor()),
        ],
        None,
    );
    counter(
        p,
        "python_gc_objects_uncollectable",
        "Uncollectable objects found during GC",
        &[
            (&[("generation", "0")], 0.0),
            (&[("generation", "1")], 0.0),
            (&[("generation", "2")], 0.0),
        ],
        None,
    );
    counter(
        p,
        "python_gc_collections",
        "Number of times this generation was collected",
        &[
            (&[("generation", "0")], (uptime * 1.3).floor()),
            (&[("generation", "1")], (uptime * 0.08).floor()),
            (&[("generation", "2")], (uptime * 0.004).floor()),
        ],
        None,
    );
    gauge(
        p,
        "python_info",
        "Python platform information",
        &[(
            &[
                ("implementation", "CPython"),
                ("major", "3"),
                ("minor", "12"),
                ("patchlevel", "11"),
                ("version", "3.12.11"),
            ],
            1.0,
        )],
    );
}

/// Memory, CPU, file descriptors and the start time a restart changes.
fn process_families(p: &mut String, s: &State, uptime: f64) {
    gauge(
        p,
        "process_virtual_memory_bytes",
        "Virtual memory size in bytes.",
        &[(&[], 4.0125e10)],
    );
    gauge(
        p,
        "process_resident_memory_bytes",
        "Resident memory size in bytes.",
        &[(&[], 7.5596e9)],
    );
    gauge(
        p,
        "process_start_time_seconds",
        "Start time of the process since unix epoch in seconds.",
        &[(&[], (s.process_start_unix * 100.0).round() / 100.0)],
    );
    counter(
        p,
        "process_cpu_seconds",
        "Total user and system CPU time spent in seconds.",
        &[(&[], uptime * 0.65)],
        None,
    );
    gauge(
        p,
        "process_open_fds",
        "Number of open file descriptors.",
        &[(&[], 187.0)],
    );
    gauge(
        p,
        "process_max_fds",
        "Maximum number of open file descriptors.",
        &[(&[], 1_048_576.0)],
    );
}

/// Running and waiting requests, KV-cache usage.
fn engine_gauges(p: &mut String, s: &State) {
    let engine = [("engine", "0"), ("model_name", MODEL)];
    gauge(
        p,
        "vllm:num_requests_running",
        "Number of requests in model execution batches.",
        &[(&engine, s.running)],
    );
    gauge(
        p,
        "vllm:num_requests_waiting",
        "Number of requests waiting to be processed.",
        &[(&engine, s.waiting)],
    );
    let reason = |r: &'static str| [("engine", "0"), ("model_name", MODEL), ("reason", r)];
    gauge(
        p,
        "vllm:num_requests_waiting_by_reason",
        "Number of waiting requests by reason.",
        &[(&reason("capacity"), s.waiting), (&reason("deferred"), 0.0)],
    );
    let state = |st: &'static str| [("engine", "0"), ("model_name", MODEL), ("sleep_state", st)];
    gauge(
        p,
        "vllm:engine_sleep_state",
        "Engine sleep state; awake = 0 means engine is sleeping.",
        &[
            (&state("awake"), 1.0),
            (&state("weights_offloaded"), 0.0),
            (&state("discard_all"), 0.0),
        ],
    );
    gauge(
        p,
        "vllm:kv_cache_usage_perc",
        "KV-cache usage. 1 means 100 percent usage.",
        &[(&engine, 0.3 * s.running / CONCURRENCY)],
    );
}

/// Prompt and generation tokens (by source, cached) and finished requests by reason.
fn token_and_request_counters(p: &mut String, s: &State) {
    prompt_counters(p, s);
    generation_and_request_counters(p, s);
}

/// Prompt tokens (by source, cached), the prefix cache's queries and hits, preemptions.
fn prompt_counters(p: &mut String, s: &State) {
    let engine = [("engine", "0"), ("model_name", MODEL)];
    let created = Some(s.created_unix);
    let prompt = (s.generated * PROMPT_TOKENS_PER_REQUEST / TOKENS_PER_REQUEST).floor();
    let cached = (prompt * 0.215).floor();
    let computed = prompt - cached;
    counter(
        p,
        "vllm:prefix_cache_queries",
        "Prefix cache queries, in terms of number of queried tokens.",
        &[(&engine, prompt)],
        created,
    );
    counter(
        p,
        "vllm:prefix_cache_hits",
        "Prefix cache hits, in terms of number of cached tokens.",
        &[(&engine, cached)],
        created,
    );
    counter(
        p,
        "vllm:num_preemptions",
        "Cumulative number of preemption from the engine.",
        &[(&engine, (s.finished * 0.004).floor())],
        created,
    );
    counter(
        p,
        "vllm:prompt_tokens",
        "Number of prefill tokens processed.",
        &[(&engine, prompt)],
        created,
    );
    let by_source = |source: &'static str| [("engine", "0"), ("model_name", MODEL), ("source", source)];
    counter(
        p,
        "vllm:prompt_tokens_by_source",
        "Number of prompt tokens by source.",
        &[
            (&by_source("local_compute"), computed),
            (&by_source("local_cache_hit"), cached),
            (&by_source("external_kv_transfer"), 0.0),
        ],
        created,
    );
    counter(
        p,
        "vllm:prompt_tokens_cached",
        "Number of cached prompt tokens (local + external).",
        &[(&engine, cached)],
        created,
    );
}

/// Generation tokens, admission rejections and finished requests by reason.
fn generation_and_request_counters(p: &mut String, s: &State) {
    let engine = [("engine", "0"), ("model_name", MODEL)];
    let created = Some(s.created_unix);
    counter(
        p,
        "vllm:generation_tokens",
        "Number of generation tokens processed.",
        &[(&engine, s.generated.floor())],
        created,
    );
    let rejected = |r: &'static str| [("model_name", MODEL), ("reason", r)];
    counter(
        p,
        "vllm:admission_rejections",
        "Requests rejected at admission.",
        &[
            (&rejected("max_num_queued_reqs"), (s.finished * 0.002).floor()),
            (&rejected("max_num_queued_tokens"), 0.0),
        ],
        created,
    );
    let reason = |r: &'static str| [("engine", "0"), ("finished_reason", r), ("model_name", MODEL)];
    counter(
        p,
        "vllm:request_success",
        "Count of successfully processed requests.",
        &[
            (&reason("stop"), (s.finished * 0.885).floor()),
            (&reason("length"), (s.finished * 0.108).floor()),
            (&reason("abort"), (s.finished * 0.007).floor()),
            (&reason("error"), 0.0),
            (&reason("repetition"), 0.0),
        ],
        created,
    );
}

/// Speculative decoding: drafts, draft and accepted tokens (per position).
fn spec_decode_counters(p: &mut String, s: &State) {
    let engine = [("engine", "0"), ("model_name", MODEL)];
    let created = Some(s.created_unix);
    let drafts = (s.generated / 2.27).floor();
    counter(
        p,
        "vllm:spec_decode_num_drafts",
        "Number of spec decoding drafts.",
        &[(&engine, drafts)],
        created,
    );
    counter(
        p,
        "vllm:spec_decode_num_draft_tokens",
        "Number of draft tokens.",
        &[(&engine, 3.0 * drafts)],
        created,
    );
    counter(
        p,
        "vllm:spec_decode_num_accepted_tokens",
        "Number of accepted tokens.",
        &[(&engine, (3.0 * drafts * 0.424).floor())],
        created,
    );
    let pos = |i: &'static str| [("engine", "0"), ("model_name", MODEL), ("position", i)];
    counter(
        p,
        "vllm:spec_decode_num_accepted_tokens_per_pos",
        "Accepted tokens per draft position.",
        &[
            (&pos("0"), (drafts * 0.718).floor()),
            (&pos("1"), (drafts * 0.393).floor()),
            (&pos("2"), (drafts * 0.161).floor()),
        ],
        created,
    );
}

/// A histogram family of the page: name, help, buckets, observations, mean, shape.
type HistogramFamily<'a> = (&'a str, &'a str, &'a [f64], f64, f64, f64);

/// Bucket bounds of vLLM's time-to-first-token histogram, seconds.
static TTFT_SECONDS: [f64; 22] = [
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0,
    80.0, 160.0, 640.0, 2560.0,
];
/// Bucket bounds of its request latency histograms (end to end, and each phase), seconds.
static REQUEST_SECONDS: [f64; 21] = [
    0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0,
    960.0, 1920.0, 7680.0,
];
/// Bucket bounds of its inter-token latency histogram, seconds.
static ITL: [f64; 19] = [
    0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
];
/// Bucket bounds of its token-count histograms.
static TOKENS: [f64; 16] = [
    1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0, 10000.0, 20000.0, 50000.0,
    100000.0,
];

/// Token counts and latencies per request, as log-logistic histograms.
fn histograms(p: &mut String, s: &State) {
    let engine = [("engine", "0"), ("model_name", MODEL)];
    let families = histogram_families(s);
    for (name, help, bounds, count, mean, shape) in families {
        let h = Histogram {
            name,
            help,
            bounds,
            labels: &engine,
            count,
            mean,
            shape,
            created_unix: Some(s.created_unix),
        };
        histogram(p, &h);
    }
}

/// The histograms of [`histograms`] as `s` stands.
fn histogram_families(s: &State) -> [HistogramFamily<'static>; 9] {
    let requests = s.finished.floor();
    // Name, help, buckets, observations, mean, shape, in the order vLLM writes them.
    [
        (
            "vllm:request_prompt_tokens",
            "Number of prefill tokens processed.",
            &TOKENS[..],
            requests,
            PROMPT_TOKENS_PER_REQUEST,
            1.6,
        ),
        (
            "vllm:request_generation_tokens",
            "Number of generation tokens processed.",
            &TOKENS[..],
            requests,
            TOKENS_PER_REQUEST,
            2.2,
        ),
        (
            "vllm:time_to_first_token_seconds",
            "Histogram of time to first token in seconds.",
            &TTFT_SECONDS[..],
            requests,
            TTFT_S,
            1.9,
        ),
        (
            "vllm:inter_token_latency_seconds",
            "Histogram of inter-token latency in seconds.",
            &ITL[..],
            s.generated.floor(),
            1.0 / TOKENS_PER_S_PER_REQUEST,
            3.5,
        ),
        (
            "vllm:e2e_request_latency_seconds",
            "Histogram of e2e request latency in seconds.",
            &REQUEST_SECONDS[..],
            requests,
            LATENCY_S,
            6.0,
        ),
        (
            "vllm:request_queue_time_seconds",
            "Histogram of time spent in WAITING phase for request.",
            &REQUEST_SECONDS[..],
            requests,
            QUEUE_S,
            1.2,
        ),
        (
            "vllm:request_inference_time_seconds",
            "Histogram of time spent in RUNNING phase for request.",
            &REQUEST_SECONDS[..],
            requests,
            LATENCY_S - QUEUE_S,
            6.0,
        ),
        (
            "vllm:request_prefill_time_seconds",
            "Histogram of time spent in PREFILL phase for request.",
            &REQUEST_SECONDS[..],
            requests,
            TTFT_S - QUEUE_S,
            1.9,
        ),
        (
            "vllm:request_decode_time_seconds",
            "Histogram of time spent in DECODE phase for request.",
            &REQUEST_SECONDS[..],
            requests,
            LATENCY_S - TTFT_S,
            6.0,
        ),
    ]
}

/// The info gauge of the cache configuration.
fn cache_config(p: &mut String) {
    gauge(
        p,
        "vllm:cache_config_info",
        "Information of the LLMEngine CacheConfig",
        &[(
            &[
                ("block_size", "16"),
                ("cache_dtype", "auto"),
                ("enable_prefix_caching", "True"),
                ("engine", "0"),
                ("gpu_memory_utilization", "0.9"),
                ("kv_cache_size_tokens", "476464"),
                ("num_gpu_blocks", "29779"),
            ],
            1.0,
        )],
    );
}
