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
/// figure's unit (percent to a fraction, milliseconds to seconds), and a label a series
/// must carry to count (`status="success"` of a request counter that counts every outcome).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Metric {
    pub name: &'static str,
    pub scale: f64,
    pub only: Option<(&'static str, &'static str)>,
}

/// `name`, in the figure's own unit.
const fn m(name: &'static str) -> Metric {
    Metric {
        name,
        scale: 1.0,
        only: None,
    }
}

impl Metric {
    /// Values multiplied by `scale` to be in the figure's unit.
    const fn scaled(self, scale: f64) -> Metric {
        Metric { scale, ..self }
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
    prefix_hits: &[m("vllm:prefix_cache_hits_total"), m("vllm:gpu_prefix_cache_hits_total")],
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

/// Hugging Face TGI; `router/src/server.rs`. Its token counts are histograms' `_sum`.
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
    ..NONE
};

/// Every server, in the order of preference when a page has names of several.
pub const ENGINES: &[&Engine] = &[&VLLM, &SGLANG, &TGI];

impl Engine {
    /// The engine `--simulate` or the JSON output calls `kind`.
    pub fn named(kind: &str) -> Option<&'static Engine> {
        ENGINES.iter().copied().find(|e| e.kind == kind)
    }

    /// Recognises the server from the series a tracker holds: the first engine of
    /// [`ENGINES`] whose prefixes a series name has.
    pub fn detect(tracker: &Tracker) -> Option<&'static Engine> {
        let mut best: Option<usize> = None;
        for series in tracker.series() {
            let name = series.name();
            let found = ENGINES
                .iter()
                .position(|e| e.prefixes.iter().any(|p| name.starts_with(p)));
            if let Some(i) = found {
                best = Some(best.map_or(i, |b| b.min(i)));
                if i == 0 {
                    break;
                }
            }
        }
        best.map(|i| ENGINES[i])
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
