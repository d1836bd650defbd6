//! The inference servers the monitor reads, as data: for each server, how its page is
//! recognised and which of its metrics gives each figure. The figures (`figures.rs`) only
//! read this table, so adding a server is one entry here and its test page in
//! `tests/data/engines/` (with its origin in that folder's `SOURCES.md`).
//!
//! A figure's metrics are alternatives: the first one a page has is used (vLLM V1 names
//! before the V0 names it replaced). Names are compared with `:` and `_` alike (the
//! trackers normalise them), so `vllm:x` also finds vLLM's OpenMetrics spelling `vllm_x`.

use promrate::Tracker;

/// One metric that gives a figure: its name, the factor that brings its values to the
/// figure's unit (every server so far writes the figures' own units: fractions, seconds;
/// one writing percent or milliseconds gets `scale: 0.01` or `0.001`), and a label a series
/// must carry to count (`status="success"` of a request counter that counts every outcome).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Metric {
    pub name: &'static str,
    pub scale: f64,
    pub only: Option<(&'static str, &'static str)>,
    /// Whether a histogram's `_sum` is the sum of its observations (Ray re-records bucket
    /// counts at the buckets' midpoints, so its sums are estimates: no mean is taken).
    pub exact_sum: bool,
}

/// `name`, in the figure's own unit.
const fn m(name: &'static str) -> Metric {
    Metric {
        name,
        scale: 1.0,
        only: None,
        exact_sum: true,
    }
}

impl Metric {
    /// A histogram whose `_sum` is an estimate.
    const fn estimated_sum(self) -> Metric {
        Metric {
            exact_sum: false,
            ..self
        }
    }

    /// Only the series whose label `name` is `value` count.
    const fn only(self, name: &'static str, value: &'static str) -> Metric {
        Metric {
            only: Some((name, value)),
            ..self
        }
    }
}

/// What the monitor knows of one inference server's page. Every list may be empty: a figure
/// the server does not expose is shown as `-`, never estimated from another.
#[derive(Debug)]
pub struct Engine {
    /// The short name in the monitor's output (`"vllm"`), as `--simulate` takes it.
    pub kind: &'static str,
    /// The server's own name, for people.
    pub title: &'static str,
    /// Metric-name prefixes that only this server writes: how its page is recognised.
    pub prefixes: &'static [&'static str],
    /// Generated tokens (a counter, or a histogram's `_sum`).
    pub generation: &'static [Metric],
    /// Prompt tokens.
    pub prompt: &'static [Metric],
    /// Prompt tokens by source (vLLM: computed, cached locally, transferred).
    pub prompt_by_source: &'static [Metric],
    /// Prompt tokens served from a prefix cache.
    pub prompt_cached: &'static [Metric],
    /// Finished requests.
    pub finished: &'static [Metric],
    /// Requests running and waiting (gauges).
    pub running: &'static [Metric],
    pub waiting: &'static [Metric],
    /// KV-cache usage as a fraction (gauge).
    pub kv_usage: &'static [Metric],
    /// Prefix-cache hits and queries (counters), or a hit-rate gauge.
    pub prefix_hits: &'static [Metric],
    pub prefix_queries: &'static [Metric],
    pub prefix_hit_rate: &'static [Metric],
    /// Speculative decoding: accepted and draft tokens, drafts (counters); or gauges of the
    /// acceptance rate and length.
    pub spec_accepted: &'static [Metric],
    pub spec_draft_tokens: &'static [Metric],
    pub spec_drafts: &'static [Metric],
    pub spec_rate: &'static [Metric],
    pub spec_length: &'static [Metric],
    /// Latency histograms, in seconds: time to first token, end to end, between tokens.
    pub ttft: &'static [Metric],
    pub e2e: &'static [Metric],
    pub itl: &'static [Metric],
    /// Per-request histograms of generated and prompt tokens.
    pub request_generation: &'static [Metric],
    pub request_prompt: &'static [Metric],
    /// The token counters move only when a request ends (llama.cpp): a rate over less than
    /// a request's duration is a sawtooth, not the throughput.
    pub tokens_at_request_end: bool,
    /// The labels the server puts on these series (the simulator writes them).
    pub labels: &'static [(&'static str, &'static str)],
}

/// The model the simulator serves, in the labels of every engine.
const SIMULATED_MODEL: &str = "meta-llama/Llama-3.1-8B-Instruct";

/// An engine with no figure, for the entries to fill in.
const NONE: Engine = Engine {
    kind: "",
    title: "",
    prefixes: &[],
    generation: &[],
    prompt: &[],
    prompt_by_source: &[],
    prompt_cached: &[],
    finished: &[],
    running: &[],
    waiting: &[],
    kv_usage: &[],
    prefix_hits: &[],
    prefix_queries: &[],
    prefix_hit_rate: &[],
    spec_accepted: &[],
    spec_draft_tokens: &[],
    spec_drafts: &[],
    spec_rate: &[],
    spec_length: &[],
    ttft: &[],
    e2e: &[],
    itl: &[],
    request_generation: &[],
    request_prompt: &[],
    tokens_at_request_end: false,
    labels: &[],
};

/// vLLM V1 (0.8+) and V0 names; `vllm/v1/metrics/loggers.py`.
const VLLM: Engine = Engine {
    kind: "vllm",
    title: "vLLM",
    prefixes: &["vllm:", "vllm_"],
    generation: &[m("vllm:generation_tokens_total")],
    prompt: &[m("vllm:prompt_tokens_total")],
    prompt_by_source: &[m("vllm:prompt_tokens_by_source_total")],
    prompt_cached: &[m("vllm:prompt_tokens_cached_total")],
    finished: &[m("vllm:request_success_total")],
    running: &[m("vllm:num_requests_running")],
    waiting: &[m("vllm:num_requests_waiting")],
    kv_usage: &[m("vllm:kv_cache_usage_perc"), m("vllm:gpu_cache_usage_perc")],
    prefix_hits: &[
        m("vllm:prefix_cache_hits_total"),
        m("vllm:gpu_prefix_cache_hits_total"),
    ],
    prefix_queries: &[
        m("vllm:prefix_cache_queries_total"),
        m("vllm:gpu_prefix_cache_queries_total"),
    ],
    prefix_hit_rate: &[m("vllm:gpu_prefix_cache_hit_rate")],
    spec_accepted: &[m("vllm:spec_decode_num_accepted_tokens_total")],
    spec_draft_tokens: &[m("vllm:spec_decode_num_draft_tokens_total")],
    spec_drafts: &[m("vllm:spec_decode_num_drafts_total")],
    spec_rate: &[m("vllm:spec_decode_draft_acceptance_rate")],
    ttft: &[m("vllm:time_to_first_token_seconds")],
    e2e: &[m("vllm:e2e_request_latency_seconds")],
    itl: &[
        m("vllm:inter_token_latency_seconds"),
        m("vllm:time_per_output_token_seconds"),
    ],
    request_generation: &[m("vllm:request_generation_tokens")],
    request_prompt: &[m("vllm:request_prompt_tokens")],
    labels: &[("engine", "0"), ("model_name", SIMULATED_MODEL)],
    ..NONE
};

/// SGLang (`sglang:`; newer releases also write `sglang_`); `python/sglang/srt/metrics/collector.py`.
const SGLANG: Engine = Engine {
    kind: "sglang",
    title: "SGLang",
    prefixes: &["sglang:", "sglang_"],
    generation: &[m("sglang:generation_tokens_total")],
    prompt: &[m("sglang:prompt_tokens_total")],
    prompt_cached: &[m("sglang:cached_tokens_total")],
    finished: &[m("sglang:num_requests_total")],
    running: &[m("sglang:num_running_reqs")],
    waiting: &[m("sglang:num_queue_reqs")],
    kv_usage: &[m("sglang:token_usage")],
    prefix_hit_rate: &[m("sglang:cache_hit_rate")],
    spec_rate: &[m("sglang:spec_accept_rate")],
    spec_length: &[m("sglang:spec_accept_length")],
    ttft: &[m("sglang:time_to_first_token_seconds")],
    e2e: &[m("sglang:e2e_request_latency_seconds")],
    itl: &[m("sglang:inter_token_latency_seconds")],
    labels: &[("model_name", SIMULATED_MODEL)],
    ..NONE
};

/// Hugging Face TGI; `router/src/server.rs`. Its token counts are histograms' `_sum`,
/// observed when a request ends.
const TGI: Engine = Engine {
    kind: "tgi",
    title: "TGI",
    prefixes: &["tgi_"],
    generation: &[m("tgi_request_generated_tokens_sum")],
    prompt: &[m("tgi_request_input_length_sum")],
    finished: &[m("tgi_request_success")],
    running: &[m("tgi_batch_current_size")],
    waiting: &[m("tgi_queue_size")],
    e2e: &[m("tgi_request_duration")],
    itl: &[m("tgi_request_mean_time_per_token_duration")],
    request_generation: &[m("tgi_request_generated_tokens")],
    request_prompt: &[m("tgi_request_input_length")],
    tokens_at_request_end: true,
    ..NONE
};

/// llama.cpp's `llama-server --metrics`; `tools/server/server-context.cpp`. Tokens are
/// counted when a request ends; it has no finished-request counter, no KV-cache gauge and
/// no latency histogram; its prompt tokens exclude cached ones, which it counts apart.
const LLAMACPP: Engine = Engine {
    kind: "llamacpp",
    title: "llama.cpp",
    prefixes: &["llamacpp:", "llamacpp_"],
    generation: &[m("llamacpp:tokens_predicted_total")],
    prompt: &[m("llamacpp:prompt_tokens_total")],
    running: &[m("llamacpp:requests_processing")],
    waiting: &[m("llamacpp:requests_deferred")],
    spec_accepted: &[m("llamacpp:spec_decode_num_accepted_tokens_total")],
    spec_draft_tokens: &[m("llamacpp:spec_decode_num_draft_tokens_total")],
    spec_drafts: &[m("llamacpp:spec_decode_num_drafts_total")],
    tokens_at_request_end: true,
    ..NONE
};

/// TensorRT-LLM's `trtllm-serve` (`/prometheus/metrics`, with `return_perf_metrics`);
/// `tensorrt_llm/metrics/collector.py`. Its token counters move when a request finishes.
const TRTLLM: Engine = Engine {
    kind: "trtllm",
    title: "TensorRT-LLM",
    prefixes: &["trtllm_"],
    generation: &[m("trtllm_generation_tokens_total")],
    prompt: &[m("trtllm_prompt_tokens_total")],
    prompt_cached: &[m("trtllm_prompt_cached_tokens_total")],
    finished: &[m("trtllm_request_success_total")],
    running: &[m("trtllm_num_requests_running")],
    waiting: &[m("trtllm_num_requests_waiting")],
    kv_usage: &[m("trtllm_kv_cache_utilization")],
    prefix_hit_rate: &[m("trtllm_kv_cache_hit_rate")],
    ttft: &[m("trtllm_time_to_first_token_seconds")],
    e2e: &[m("trtllm_e2e_request_latency_seconds")],
    itl: &[m("trtllm_time_per_output_token_seconds")],
    tokens_at_request_end: true,
    labels: &[("engine_type", "undefined"), ("model_name", "undefined")],
    ..NONE
};

/// LMDeploy's `api_server`; `lmdeploy/metrics/loggers.py`. A request that ended well has
/// `finished_reason="ResponseType.FINISH"` (`SUCCESS` is a status mid-stream).
const LMDEPLOY: Engine = Engine {
    kind: "lmdeploy",
    title: "LMDeploy",
    prefixes: &["lmdeploy:", "lmdeploy_"],
    generation: &[m("lmdeploy:generation_tokens_total")],
    prompt: &[m("lmdeploy:prompt_tokens_total")],
    prompt_cached: &[m("lmdeploy:cached_tokens_total")],
    finished: &[m("lmdeploy:request_success_total").only("finished_reason", "ResponseType.FINISH")],
    running: &[m("lmdeploy:num_requests_running")],
    waiting: &[m("lmdeploy:num_requests_waiting")],
    kv_usage: &[m("lmdeploy:gpu_cache_usage_perc")],
    prefix_hit_rate: &[m("lmdeploy:prefix_cache_hit_rate")],
    spec_accepted: &[m("lmdeploy:spec_decode_num_accepted_tokens_total")],
    spec_draft_tokens: &[m("lmdeploy:spec_decode_num_draft_tokens_total")],
    spec_drafts: &[m("lmdeploy:spec_decode_num_drafts_total")],
    ttft: &[m("lmdeploy:time_to_first_token_seconds")],
    e2e: &[m("lmdeploy:e2e_request_latency_seconds")],
    itl: &[m("lmdeploy:time_per_output_token_seconds")],
    request_generation: &[m("lmdeploy:request_generation_tokens")],
    request_prompt: &[m("lmdeploy:request_prompt_tokens")],
    labels: &[("engine", "0"), ("model_name", SIMULATED_MODEL)],
    ..NONE
};

/// NVIDIA Dynamo's frontend; `lib/llm/src/http/service/metrics.rs`. Prompt tokens exist only
/// as the `_sum` of a per-request histogram; requests are counted by `status`.
const DYNAMO: Engine = Engine {
    kind: "dynamo",
    title: "NVIDIA Dynamo",
    prefixes: &["dynamo_frontend_"],
    generation: &[m("dynamo_frontend_output_tokens_total")],
    prompt: &[m("dynamo_frontend_input_sequence_tokens_sum")],
    finished: &[m("dynamo_frontend_requests_total").only("status", "success")],
    running: &[m("dynamo_frontend_inflight_requests")],
    waiting: &[m("dynamo_frontend_queued_requests")],
    ttft: &[m("dynamo_frontend_time_to_first_token_seconds")],
    e2e: &[m("dynamo_frontend_request_duration_seconds")],
    itl: &[m("dynamo_frontend_inter_token_latency_seconds")],
    request_generation: &[m("dynamo_frontend_output_sequence_tokens")],
    request_prompt: &[m("dynamo_frontend_input_sequence_tokens")],
    labels: &[("model", SIMULATED_MODEL)],
    ..NONE
};

/// Ray Serve LLM with vLLM inside (`ray_` + vLLM's names, `:` as `_`; a `ReplicaId` per
/// replica); `vllm/v1/metrics/ray_wrappers.py`. Its histograms' sums are estimates.
const RAY_VLLM: Engine = Engine {
    kind: "ray",
    title: "Ray Serve LLM",
    prefixes: &["ray_vllm_"],
    generation: &[m("ray_vllm_generation_tokens_total")],
    prompt: &[m("ray_vllm_prompt_tokens_total")],
    finished: &[m("ray_vllm_request_success_total")],
    running: &[m("ray_vllm_num_requests_running")],
    waiting: &[m("ray_vllm_num_requests_waiting")],
    kv_usage: &[m("ray_vllm_kv_cache_usage_perc")],
    prefix_hits: &[m("ray_vllm_prefix_cache_hits_total")],
    prefix_queries: &[m("ray_vllm_prefix_cache_queries_total")],
    ttft: &[m("ray_vllm_time_to_first_token_seconds").estimated_sum()],
    e2e: &[m("ray_vllm_e2e_request_latency_seconds").estimated_sum()],
    itl: &[m("ray_vllm_inter_token_latency_seconds").estimated_sum()],
    labels: &[
        ("ReplicaId", "b7k2m9qx"),
        ("engine", "0"),
        ("model_name", SIMULATED_MODEL),
    ],
    ..NONE
};

/// NVIDIA's DCGM exporter: not an inference server but the GPUs under one (`gpus.rs`
/// reads its figures); recognised so that its page is not "no inference metrics".
pub const DCGM: Engine = Engine {
    kind: "dcgm",
    title: "DCGM exporter",
    prefixes: &["DCGM_FI_"],
    ..NONE
};

/// Every server, in the order of preference when a page has names of several.
pub const ENGINES: &[&Engine] = &[
    &VLLM, &SGLANG, &TGI, &LLAMACPP, &TRTLLM, &LMDEPLOY, &DYNAMO, &RAY_VLLM,
];

impl Engine {
    /// The engine `--simulate` or the JSON output calls `kind` (the DCGM exporter too).
    pub fn named(kind: &str) -> Option<&'static Engine> {
        ENGINES.iter().copied().chain([&DCGM]).find(|e| e.kind == kind)
    }

    /// Recognises the server from the series a tracker holds: the first engine of
    /// [`ENGINES`] whose prefixes a series name has.
    pub fn detect(tracker: &Tracker) -> Option<&'static Engine> {
        // One walk: the best engine seen so far, and whether a DCGM series was (the last
        // choice: a GPU exporter is a server only when nothing else is).
        let mut best: Option<usize> = None;
        let mut gpus = false;
        for series in tracker.series() {
            let name = series.name();
            let found = ENGINES
                .iter()
                .position(|e| e.prefixes.iter().any(|p| name.starts_with(p)));
            match found {
                Some(0) => return Some(ENGINES[0]),
                Some(i) => best = Some(best.map_or(i, |b| b.min(i))),
                None => gpus = gpus || DCGM.prefixes.iter().any(|p| name.starts_with(p)),
            }
        }
        best.map(|i| ENGINES[i]).or(gpus.then_some(&DCGM))
    }
}

/// A figure's metrics over every engine, in [`ENGINES`] order (each page uses the first it
/// has).
pub fn alternatives(figure: fn(&Engine) -> &'static [Metric]) -> Vec<Metric> {
    ENGINES.iter().flat_map(|e| figure(e).iter().copied()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each engine's kind is unique (it names the engine in `--simulate` and JSON) and its
    /// prefixes are its own (recognition must not depend on luck).
    #[test]
    fn kinds_and_prefixes_are_unique() {
        for (i, a) in ENGINES.iter().enumerate() {
            assert!(!a.kind.is_empty() && !a.prefixes.is_empty(), "{}", a.title);
            for b in &ENGINES[i + 1..] {
                assert_ne!(a.kind, b.kind);
                for p in a.prefixes {
                    assert!(
                        !b.prefixes.iter().any(|q| p.starts_with(q) || q.starts_with(p)),
                        "{} and {} share the prefix {p}",
                        a.title,
                        b.title
                    );
                }
            }
            // Every engine gives the headline figure.
            assert!(!a.generation.is_empty(), "{}", a.title);
        }
    }
}

#[cfg(test)]
mod page_tests {
    use chrono::DateTime;

    use super::*;

    /// The page of each server in `tests/data/engines/` (made from the server's own metric
    /// definitions; `SOURCES.md` there says from where).
    fn page(file: &str) -> String {
        let path = format!("{}/../../tests/data/engines/{file}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// Each catalogued server is recognised from its own page, and every metric its entry
    /// names is on that page (a misspelt name in the catalogue would be a figure that
    /// silently never appears).
    #[test]
    fn every_name_in_the_catalogue_is_on_its_servers_page() {
        for (kind, file) in [
            ("llamacpp", "llamacpp.prom"),
            ("trtllm", "trtllm.prom"),
            ("lmdeploy", "lmdeploy.prom"),
            ("dynamo", "dynamo.prom"),
            ("ray", "ray-serve-llm.prom"),
        ] {
            let engine = Engine::named(kind).unwrap();
            let text = page(file);
            let mut tracker = Tracker::new([]);
            tracker.normalize_names(true);
            tracker
                .ingest(&text, DateTime::from_timestamp(1_764_000_000, 0).unwrap())
                .unwrap();
            assert_eq!(Engine::detect(&tracker).map(|e| e.kind), Some(kind), "{file}");
            let names: Vec<&str> = tracker.series().map(|s| s.name()).collect();
            let fields: [&[Metric]; 21] = [
                engine.generation,
                engine.prompt,
                engine.prompt_by_source,
                engine.prompt_cached,
                engine.finished,
                engine.running,
                engine.waiting,
                engine.kv_usage,
                engine.prefix_hits,
                engine.prefix_queries,
                engine.prefix_hit_rate,
                engine.spec_accepted,
                engine.spec_draft_tokens,
                engine.spec_drafts,
                engine.spec_rate,
                engine.spec_length,
                engine.ttft,
                engine.e2e,
                engine.itl,
                engine.request_generation,
                engine.request_prompt,
            ];
            for metric in fields.into_iter().flatten() {
                let found = names
                    .iter()
                    .any(|n| *n == metric.name || n.strip_suffix("_bucket") == Some(metric.name));
                assert!(found, "{file}: no {} (the page has {names:?})", metric.name);
            }
        }
    }

    /// A server counting tokens when a request ends has no EWMA and no PromQL rate of its
    /// tokens in any row: the totals and every `--by` group, prompt and generated alike.
    #[test]
    fn request_end_servers_have_no_sawtooth_rates_in_any_row() {
        let text = page("llamacpp.prom");
        let mut tracker = Tracker::new([]);
        tracker.normalize_names(true);
        let t0 = DateTime::from_timestamp(1_764_000_000, 0).unwrap();
        for k in 0..3 {
            tracker
                .ingest(&text, t0 + chrono::TimeDelta::seconds(2 * k))
                .unwrap();
        }
        let at = t0 + chrono::TimeDelta::seconds(4);
        let url = "http://127.0.0.1:8080/metrics";
        let sources = [crate::figures::Source {
            tracker: &tracker,
            at,
            url,
        }];
        let (total, groups) = crate::figures::compute(
            &sources,
            promrate::WindowRule::new(chrono::TimeDelta::seconds(4))
                .slack(chrono::TimeDelta::seconds(1))
                .gap(chrono::TimeDelta::seconds(3)),
            Some("url"),
        );
        assert!(total.tokens_at_request_end);
        assert_eq!(groups.len(), 1);
        for f in std::iter::once(&total).chain(groups.iter().map(|(_, f)| f)) {
            assert!(f.tokens_at_request_end);
            assert!(f.generation.window.is_some(), "{:?}", f.generation);
            for rate in [&f.generation, &f.prompt] {
                assert_eq!((rate.ewma, rate.promql), (None, None), "{rate:?}");
            }
        }
    }
}
