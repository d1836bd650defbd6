//! The catalogue: each server's entry, with where its names come from.

use super::{m, Engine, KvSize, NONE};

/// The model the simulator serves, in the labels of every engine.
const SIMULATED_MODEL: &str = "meta-llama/Llama-3.1-8B-Instruct";

/// vLLM V1 (0.8+), by its current names (0.33's `vllm/v1/metrics/loggers.py`); the older
/// names a page of V0 or early V1 has are in `aliases.rs`.
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
    kv_usage: &[m("vllm:kv_cache_usage_perc")],
    prefix_hits: &[m("vllm:prefix_cache_hits_total")],
    prefix_queries: &[m("vllm:prefix_cache_queries_total")],
    spec_accepted: &[m("vllm:spec_decode_num_accepted_tokens_total")],
    spec_draft_tokens: &[m("vllm:spec_decode_num_draft_tokens_total")],
    spec_drafts: &[m("vllm:spec_decode_num_drafts_total")],
    ttft: &[m("vllm:time_to_first_token_seconds")],
    e2e: &[m("vllm:e2e_request_latency_seconds")],
    itl: &[m("vllm:inter_token_latency_seconds")],
    request_generation: &[m("vllm:request_generation_tokens")],
    request_prompt: &[m("vllm:request_prompt_tokens")],
    queue_time: &[m("vllm:request_queue_time_seconds")],
    prefill_time: &[m("vllm:request_prefill_time_seconds")],
    decode_time: &[m("vllm:request_decode_time_seconds")],
    inference_time: &[m("vllm:request_inference_time_seconds")],
    kv_size: &[KvSize::InfoLabels {
        info: "vllm:cache_config_info",
        tokens: "kv_cache_size_tokens",
        blocks: "num_gpu_blocks",
        block_size: "block_size",
    }],
    preemptions: &[m("vllm:num_preemptions_total")],
    admission_rejections: &[m("vllm:admission_rejections_total")],
    aborts: &[m("vllm:request_success_total").only("finished_reason", "abort")],
    waiting_by_reason: &[m("vllm:num_requests_waiting_by_reason")],
    sleep_state: &[m("vllm:engine_sleep_state")],
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
    queue_time: &[m("sglang:queue_time_seconds")],
    kv_size: &[KvSize::Tokens("sglang:max_total_num_tokens")],
    // Newer than the 0.5.10 capture the page test reads (`page_tests.rs` says where from).
    preemptions: &[m("sglang:num_retracted_requests_total")],
    aborts: &[m("sglang:num_aborted_requests_total")],
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
    queue_time: &[m("tgi_request_queue_duration")],
    inference_time: &[m("tgi_request_inference_duration")],
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
    queue_time: &[m("trtllm_request_queue_time_seconds")],
    prefill_time: &[m("trtllm_request_prefill_time_seconds")],
    decode_time: &[m("trtllm_request_decode_time_seconds")],
    inference_time: &[m("trtllm_request_inference_time_seconds")],
    kv_size: &[KvSize::Blocks {
        blocks: "trtllm_kv_cache_max_blocks",
        tokens_per_block: "trtllm_kv_cache_tokens_per_block",
    }],
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
    queue_time: &[m("lmdeploy:request_queue_time_seconds")],
    prefill_time: &[m("lmdeploy:request_prefill_time_seconds")],
    decode_time: &[m("lmdeploy:request_decode_time_seconds")],
    inference_time: &[m("lmdeploy:request_inference_time_seconds")],
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
    kv_size: &[KvSize::Blocks {
        blocks: "dynamo_frontend_model_total_kv_blocks",
        tokens_per_block: "dynamo_frontend_model_kv_cache_block_size",
    }],
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
    preemptions: &[m("ray_vllm_num_preemptions_total")],
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
