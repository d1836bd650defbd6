#!/usr/bin/env python3
"""Renders one /metrics page per inference server (and two for NVIDIA's DCGM exporter)
into tests/data/engines/, from each server's own metric definitions.

Every page is rendered the way its server renders it:
  - prometheus_client (the pinned version in tests/py/requirements.txt) where the server
    uses prometheus_client itself: TensorRT-LLM (multiprocess mode), LMDeploy
    (created series disabled) and Ray Serve LLM (Ray's metrics agent hands
    prometheus_client metric families built by OpenTelemetry's Prometheus exporter);
  - the server's own text form where it writes the exposition itself or with another
    library: llama.cpp (C++ stringstream, hand-written), NVIDIA Dynamo (Rust `prometheus`
    crate text encoder), dcgm-exporter (Go text/template).

The metric definitions (names, HELP, types, labels, buckets) are plain data tables below,
each citing the repository, path and commit it was read from. The numbers are simulated:
a fixed set of request "archetypes" per server, so histogram counts, sums and counters
agree with each other. No clock and no randomness: two runs give identical files.

Usage:
  python3 tests/py/engine_pages.py            # (re)write tests/data/engines/*.prom
  python3 tests/py/engine_pages.py --check    # compare with the committed files, exit 1 on a difference
  python3 tests/py/engine_pages.py --out DIR  # write elsewhere
"""
import argparse
import decimal
import glob
import math
import os
import sys
import tempfile
from pathlib import Path

import prometheus_client
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Info, generate_latest
from prometheus_client import values as prom_values
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.utils import floatToGoString

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "data" / "engines"
# The version tests/py/requirements.txt pins (the one place it is written).
PINNED = next(
    line.split("==", 1)[1].strip()
    for line in open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "requirements.txt"))
    if line.startswith("prometheus_client==")
)


# ---------------------------------------------------------------------------------------
# Shared workload model
# ---------------------------------------------------------------------------------------

class Req:
    """One request archetype, `n` requests alike. Times in seconds."""

    def __init__(self, n, prompt, gen, queue, ttft, tpot, finish="stop", cached=0):
        self.n, self.prompt, self.gen, self.queue, self.ttft, self.tpot = n, prompt, gen, queue, ttft, tpot
        self.finish, self.cached = finish, cached

    @property
    def prefill(self):
        return self.ttft - self.queue

    @property
    def decode(self):
        return (self.gen - 1) * self.tpot

    @property
    def e2e(self):
        return self.ttft + self.decode

    @property
    def inference(self):
        return self.prefill + self.decode


def totals(reqs):
    return {
        "n": sum(r.n for r in reqs),
        "prompt": sum(r.n * r.prompt for r in reqs),
        "gen": sum(r.n * r.gen for r in reqs),
        "cached": sum(r.n * r.cached for r in reqs),
    }


def observe_n(hist, value, n):
    for _ in range(n):
        hist.observe(value)


def bucket_counts(obs, bounds):
    """obs: [(value, count)] -> non-cumulative counts per bucket (len(bounds) + 1, last is +Inf)."""
    counts = [0] * (len(bounds) + 1)
    for value, n in obs:
        for i, b in enumerate(bounds):
            if value <= b:
                counts[i] += n
                break
        else:
            counts[-1] += n
    return counts


def one_two_five(max_value):
    """The 1-2-5 series up to max_value (build_1_2_5_buckets in vLLM and LMDeploy)."""
    out, exp = [], 0
    while True:
        for m in (1, 2, 5):
            v = m * 10 ** exp
            if v > max_value:
                return out
            out.append(v)
        exp += 1


# ---------------------------------------------------------------------------------------
# llama.cpp server (--metrics): hand-written text
#   ggml-org/llama.cpp tools/server/server-task.cpp, server_task_result_metrics::to_metrics()
#     (index version of the file; the index did not name its commit), read together with
#   ggml-org/llama.cpp tools/server/server-context.cpp @ 001d906a6d86e2490e394361e7cc6f478b100088
#     (get_metrics route: Content-Type "text/plain; version=0.0.4"; metrics_post_decode /
#     metrics_flush_prompt add prompt tokens per decoded batch; metrics_on_prediction adds
#     generated tokens from slot.callback_on_reset, i.e. when a request ends).
# Format: "# HELP llamacpp:<name> <help>\n# TYPE llamacpp:<name> <type>\nllamacpp:<name> <value>\n",
# counters first then gauges, values written by std::ostream << double (6 significant digits,
# %g: 1234567 -> 1.23457e+06). No labels except spec_decode_num_accepted_tokens_per_pos_total
# {position="i"}, only when speculative decoding ran (not here).
# ---------------------------------------------------------------------------------------

LLAMACPP_COUNTERS = [
    ("prompt_tokens_total", "Number of prompt tokens processed, excluding cached tokens"),
    ("prompt_tokens_cached_total", "Number of prompt tokens reused from the cache"),
    ("prompt_seconds_total", "Total time spent processing prompts"),
    ("tokens_predicted_total", "Number of generation tokens processed"),
    ("tokens_predicted_seconds_total", "Total time spent generating tokens"),
    ("n_decode_total", "Total number of llama_decode() calls, excluding speculative decoding and multimodal decoding"),
    ("n_tokens_max", "Largest observed sequence length (prompt + generation)"),
    ("spec_decode_num_draft_tokens_total", "Speculative: Total draft tokens generated"),
    ("spec_decode_num_accepted_tokens_total", "Speculative: Total draft tokens accepted by the target model"),
    ("spec_decode_num_drafts_total", "Speculative: Total speculative decoding verification steps"),
]
LLAMACPP_GAUGES = [
    ("prompt_tokens_seconds", "Average prompt throughput in tokens/s"),
    ("predicted_tokens_seconds", "Average generation throughput in tokens/s"),
    ("requests_processing", "Number of requests processing"),
    ("requests_deferred", "Number of requests deferred"),
    ("n_busy_slots_per_decode", "Average number of busy slots per llama_decode() call"),
]


def cpp_double(v):
    """std::ostream << double with default flags: printf %g, precision 6."""
    return "%g" % v


def page_llamacpp():
    # llama-server --parallel 4, one GGUF model; 1873 requests finished since start.
    finished = 1873
    prompt_uncached = 1146276          # prompt tokens actually evaluated (cache misses)
    prompt_cached = 731540             # prompt tokens reused from the slot / prompt cache
    prompt_seconds = prompt_uncached / 2400.0
    predicted = finished * 287         # generated tokens of the finished requests only
    predicted_seconds = predicted / 41.3
    values = {
        "prompt_tokens_total": prompt_uncached,
        "prompt_tokens_cached_total": prompt_cached,
        "prompt_seconds_total": prompt_seconds,
        "tokens_predicted_total": predicted,
        "tokens_predicted_seconds_total": predicted_seconds,
        "n_decode_total": 159214,
        "n_tokens_max": 8191,
        "spec_decode_num_draft_tokens_total": 0,
        "spec_decode_num_accepted_tokens_total": 0,
        "spec_decode_num_drafts_total": 0,
        # gauges: averages over the window since the previous scrape (buckets reset per scrape)
        "prompt_tokens_seconds": 2391.72,
        "predicted_tokens_seconds": 41.2734,
        "requests_processing": 4,
        "requests_deferred": 2,
        "n_busy_slots_per_decode": 3.42,
    }
    out = []
    for typ, items in (("counter", LLAMACPP_COUNTERS), ("gauge", LLAMACPP_GAUGES)):
        for name, help_ in items:
            out.append("# HELP llamacpp:%s %s\n" % (name, help_))
            out.append("# TYPE llamacpp:%s %s\n" % (name, typ))
            out.append("llamacpp:%s %s\n" % (name, cpp_double(values[name])))
    return "".join(out)


# ---------------------------------------------------------------------------------------
# TensorRT-LLM trtllm-serve, GET /prometheus/metrics (only with return_perf_metrics: true;
# iteration stats need enable_iter_perf_stats: true)
#   NVIDIA/TensorRT-LLM tensorrt_llm/metrics/collector.py @ 050f80def8df236e326949c8bd9dee10fd896a83
#   NVIDIA/TensorRT-LLM tensorrt_llm/serve/openai_server.py @ 00057725d9a6591f033e44f31c219e2426827bb7
#     (MetricsCollector({"model_name": "undefined", "engine_type": "undefined"});
#      set_prometheus_multiproc_dir(); mount_metrics(): CollectorRegistry +
#      multiprocess.MultiProcessCollector, mounted at /prometheus/metrics. GET /metrics is JSON.)
# Multiprocess mode: no _created, labels sorted, every gauge (mode "all") gets a pid label.
# Per-request metrics (tokens, success, latency histograms) are recorded when a request
# finishes (log_request_metrics_dict, only if finish_reason is set).
# ---------------------------------------------------------------------------------------

TRT_E2E_BUCKETS = [0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0,
                   240.0, 480.0, 960.0, 1920.0, 7680.0]
TRT_TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
                    20.0, 40.0, 80.0, 160.0, 640.0, 2560.0]
TRT_TPOT_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
                    40.0, 80.0]
TRT_PREFILL_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 40.0, 80.0,
                       160.0, 640.0, 2560.0]
TRT_CACHED_BUCKETS = [0, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
TRT_PREFILL_BATCH_TOKENS_BUCKETS = [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768]
TRT_LABELS = {"model_name": "undefined", "engine_type": "undefined"}
TRT_PID = 4117

# (attribute, kind, name, help, buckets or None, extra label names)
TRT_METRICS = [
    ("request_success", "counter", "trtllm_request_success_total", "Count of successfully processed requests.", None, ["finished_reason"]),
    ("e2e", "histogram", "trtllm_e2e_request_latency_seconds", "Histogram of end to end request latency in seconds.", TRT_E2E_BUCKETS, []),
    ("ttft", "histogram", "trtllm_time_to_first_token_seconds", "Histogram of time to first token in seconds.", TRT_TTFT_BUCKETS, []),
    ("tpot", "histogram", "trtllm_time_per_output_token_seconds", "Histogram of time per output token in seconds.", TRT_TPOT_BUCKETS, []),
    ("queue", "histogram", "trtllm_request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", TRT_E2E_BUCKETS, []),
    ("prefill", "histogram", "trtllm_request_prefill_time_seconds", "Histogram of prefill (context) phase duration in seconds (first_token_time - first_scheduled_time).", TRT_PREFILL_BUCKETS, []),
    ("decode", "histogram", "trtllm_request_decode_time_seconds", "Histogram of decode (generation) phase duration in seconds (last_token_time - first_token_time).", TRT_E2E_BUCKETS, []),
    ("inference", "histogram", "trtllm_request_inference_time_seconds", "Histogram of total inference duration in seconds (last_token_time - first_scheduled_time).", TRT_E2E_BUCKETS, []),
    ("prompt_tokens", "counter", "trtllm_prompt_tokens_total", "Cumulative number of prompt (input) tokens processed.", None, []),
    ("generation_tokens", "counter", "trtllm_generation_tokens_total", "Cumulative number of generation (output) tokens produced.", None, []),
    ("kv_cache_hit_rate", "gauge", "trtllm_kv_cache_hit_rate", "KV cache hit rate", None, []),
    ("kv_cache_reused_blocks", "counter", "trtllm_kv_cache_reused_blocks", "Cumulative number of KV cache blocks reused (cache hits)", None, []),
    ("kv_cache_missed_blocks", "counter", "trtllm_kv_cache_missed_blocks", "Cumulative number of KV cache blocks missed (cache misses)", None, []),
    ("kv_cache_utilization", "gauge", "trtllm_kv_cache_utilization", "KV cache utilization", None, []),
    ("num_requests_running", "gauge", "trtllm_num_requests_running", "Number of active requests", None, []),
    ("num_requests_waiting", "gauge", "trtllm_num_requests_waiting", "Number of queued requests", None, []),
    ("num_requests_completed", "counter", "trtllm_num_requests_completed_total", "Total number of completed requests across iterations", None, []),
    ("max_num_active_requests", "gauge", "trtllm_max_num_active_requests", "Maximum number of active requests", None, []),
    ("iteration_latency_seconds", "gauge", "trtllm_iteration_latency_seconds", "Iteration latency in seconds", None, []),
    ("gpu_memory_usage_bytes", "gauge", "trtllm_gpu_memory_usage_bytes", "GPU memory usage in bytes", None, []),
    ("cpu_memory_usage_bytes", "gauge", "trtllm_cpu_memory_usage_bytes", "CPU memory usage in bytes", None, []),
    ("pinned_memory_usage_bytes", "gauge", "trtllm_pinned_memory_usage_bytes", "Pinned memory usage in bytes", None, []),
    ("max_batch_size_static", "gauge", "trtllm_max_batch_size_static", "Static maximum batch size", None, []),
    ("max_batch_size_runtime", "gauge", "trtllm_max_batch_size_runtime", "Runtime maximum batch size", None, []),
    ("max_num_tokens_runtime", "gauge", "trtllm_max_num_tokens_runtime", "Runtime maximum number of tokens", None, []),
    ("kv_cache_max_blocks", "gauge", "trtllm_kv_cache_max_blocks", "Maximum number of KV cache blocks", None, []),
    ("kv_cache_free_blocks", "gauge", "trtllm_kv_cache_free_blocks", "Number of free KV cache blocks", None, []),
    ("kv_cache_used_blocks", "gauge", "trtllm_kv_cache_used_blocks", "Number of used KV cache blocks", None, []),
    ("kv_cache_tokens_per_block", "gauge", "trtllm_kv_cache_tokens_per_block", "Number of tokens per KV cache block", None, []),
    ("num_context_requests", "gauge", "trtllm_num_context_requests", "Number of context (prefill) requests", None, []),
    ("num_generation_requests", "gauge", "trtllm_num_generation_requests", "Number of generation (decode) requests", None, []),
    ("num_paused_requests", "gauge", "trtllm_num_paused_requests", "Number of paused requests", None, []),
    ("num_scheduled_requests", "gauge", "trtllm_num_scheduled_requests", "Number of scheduled requests", None, []),
    ("total_context_tokens", "gauge", "trtllm_total_context_tokens", "Total number of context tokens", None, []),
    ("avg_decoded_tokens_per_iter", "gauge", "trtllm_avg_decoded_tokens_per_iter", "Average number of decoded tokens per iteration", None, []),
    ("prompt_cached_tokens", "counter", "trtllm_prompt_cached_tokens_total", "Process-lifetime total prompt tokens served from KV cache. Resets only when the serving process restarts, not when the KV cache is flushed or evicted.", None, []),
    ("prompt_cached_tokens_per_request", "histogram", "trtllm_prompt_cached_tokens_per_request", "Histogram of cached prompt tokens per request.", TRT_CACHED_BUCKETS, []),
    ("prefill_batch_occupancy", "gauge", "trtllm_prefill_batch_occupancy", "Fraction of max active slots occupied by context requests.", None, []),
    ("prefill_batch_tokens", "histogram", "trtllm_prefill_batch_tokens", "Histogram of total context tokens per iteration.", TRT_PREFILL_BATCH_TOKENS_BUCKETS, []),
]

# The order MultiProcessCollector happens to read its .db files in is the directory's;
# fix one (histograms, gauges, counters, as seen from vLLM's multiprocess pages).
TRT_FILE_ORDER = ("histogram", "gauge", "counter")


class _FixedOrderMultiProcess:
    """MultiProcessCollector.collect() with the .db files in a fixed order (the real one globs)."""

    def __init__(self, path):
        self.path = path

    def collect(self):
        files = sorted(glob.glob(os.path.join(self.path, "*.db")),
                       key=lambda f: (TRT_FILE_ORDER.index(os.path.basename(f).split("_")[0]), f))
        return MultiProcessCollector.merge(files, accumulate=True)


def page_trtllm():
    reqs = [
        Req(700, 1200, 300, 0.02, 0.12, 0.018, "stop", cached=384),
        Req(350, 2400, 420, 0.05, 0.31, 0.021, "stop", cached=1024),
        Req(120, 600, 512, 0.01, 0.07, 0.017, "length", cached=0),
        Req(34, 7800, 150, 0.9, 1.6, 0.025, "stop", cached=4096),
    ]
    t = totals(reqs)
    saved_class = prom_values.ValueClass
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tmp
        prom_values.ValueClass = prom_values.MultiProcessValue(lambda: TRT_PID)
        try:
            m = {}
            label_names = list(TRT_LABELS)
            for attr, kind, name, help_, buckets, extra in TRT_METRICS:
                names = label_names + extra
                if kind == "counter":
                    m[attr] = Counter(name, help_, names, registry=None)
                elif kind == "gauge":
                    m[attr] = Gauge(name, help_, names, registry=None)
                else:
                    m[attr] = Histogram(name, help_, names, buckets=buckets, registry=None)

            def lab(attr, **extra):
                return m[attr].labels(**TRT_LABELS, **extra)

            lab("prompt_cached_tokens")  # created at 0 in MetricsCollector.__init__
            for r in reqs:  # log_request_metrics_dict, once per finished request
                lab("request_success", finished_reason=r.finish).inc(r.n)
                for latency in ("e2e", "ttft", "tpot", "queue", "prefill", "decode", "inference"):
                    observe_n(lab(latency), getattr(r, latency), r.n)
                lab("prompt_tokens").inc(r.n * r.prompt)
                lab("generation_tokens").inc(r.n * r.gen)
                if r.cached:
                    lab("prompt_cached_tokens").inc(r.n * r.cached)
                observe_n(lab("prompt_cached_tokens_per_request"), r.cached, r.n)
            # log_iteration_stats: the last iteration's stats, counters by accumulated deltas
            max_blocks, used_blocks = 20480, 8473
            lab("num_requests_running").set(24)
            lab("num_requests_waiting").set(3)
            lab("num_requests_completed").inc(t["n"])
            lab("max_num_active_requests").set(256)
            lab("iteration_latency_seconds").set(21.3 / 1000.0)
            lab("gpu_memory_usage_bytes").set(75187404800)
            lab("cpu_memory_usage_bytes").set(3105882112)
            lab("pinned_memory_usage_bytes").set(1073741824)
            lab("max_batch_size_static").set(256)
            lab("max_batch_size_runtime").set(256)
            lab("max_num_tokens_runtime").set(8192)
            lab("kv_cache_hit_rate").set(0.2305)
            lab("kv_cache_reused_blocks").inc(16012)
            lab("kv_cache_missed_blocks").inc(53451)
            lab("kv_cache_utilization").set(used_blocks / max_blocks)
            lab("kv_cache_max_blocks").set(max_blocks)
            lab("kv_cache_free_blocks").set(max_blocks - used_blocks)
            lab("kv_cache_used_blocks").set(used_blocks)
            lab("kv_cache_tokens_per_block").set(32)
            lab("num_context_requests").set(2)
            lab("num_generation_requests").set(22)
            lab("num_paused_requests").set(0)
            lab("num_scheduled_requests").set(24)
            lab("total_context_tokens").set(3712)
            lab("avg_decoded_tokens_per_iter").set(1.0)
            lab("prefill_batch_occupancy").set(2 / 256)
            for tokens, n in ((1200, 610), (2400, 300), (3712, 280), (8192, 31)):
                observe_n(lab("prefill_batch_tokens"), tokens, n)
            registry = CollectorRegistry()
            registry.register(_FixedOrderMultiProcess(tmp))
            text = generate_latest(registry).decode()
        finally:
            prom_values.ValueClass = saved_class
            del os.environ["PROMETHEUS_MULTIPROC_DIR"]
    return text


# ---------------------------------------------------------------------------------------
# LMDeploy api_server (metrics on by default since --disable-metrics; older: --enable-metrics)
#   InternLM/lmdeploy lmdeploy/metrics/loggers.py @ 1263d5cd889b7ad500e85b8eb20401327a4516ab
#     (PrometheusStatLogger: prometheus_client.disable_created_metrics(); default REGISTRY;
#      labels model_name, engine (= dp_rank); finished_reason = str(ResponseType member))
#   InternLM/lmdeploy lmdeploy/messages.py @ same commit (ResponseType members)
#   InternLM/lmdeploy lmdeploy/serve/openai/api_server.py @ same commit (make_asgi_app(REGISTRY) at /metrics)
#   InternLM/lmdeploy lmdeploy/metrics/stats.py @ same commit (tokens: prompt counted at the first
#     token, generation tokens every iteration; a normal end is ResponseType.FINISH)
# The default registry's process_*, python_gc_* and python_info collectors are left out
# (their values are the generating machine's).
# ---------------------------------------------------------------------------------------

LMDEPLOY_RESPONSE_TYPES = ["SUCCESS", "FINISH", "ENGINE_STOP_ERROR", "SESSION_REPEAT", "SESSION_NOT_EXIST",
                           "HANDLER_NOT_EXIST", "INPUT_LENGTH_ERROR", "INTERNAL_ENGINE_ERROR", "CANCEL",
                           "PREFIX_CACHE_CONFLICT", "NO_QUEUE", "NOT_SUPPORTED", "OUT_OF_MEMORY"]
LMDEPLOY_TTFT_BUCKETS = TRT_TTFT_BUCKETS
LMDEPLOY_TPOT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
                         10.0, 20.0, 40.0, 80.0]
LMDEPLOY_LATENCY_BUCKETS = TRT_E2E_BUCKETS
LMDEPLOY_HIT_RATIO_BUCKETS = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
LMDEPLOY_ITERATION_BUCKETS = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]
LMDEPLOY_SESSION_LEN = 32768  # max_model_len of the 1-2-5 token histograms
LMDEPLOY_MODEL = "Qwen/Qwen2.5-7B-Instruct"

# (attribute, kind, name, help, buckets or None); "tokens" = build_1_2_5_buckets(session_len)
LMDEPLOY_METRICS = [
    ("succeeded", "gauge", "lmdeploy:num_requests_succeeded", "Number of current succeeded requests.", None),
    ("failed", "gauge", "lmdeploy:num_requests_failed", "Number of current failed requests.", None),
    ("api_routed", "gauge", "lmdeploy:num_api_requests_routed", "Number of requests routed to request handles.", None),
    ("api_waiting", "gauge", "lmdeploy:num_api_requests_waiting", "Number of requests waiting for free request handles.", None),
    ("running", "gauge", "lmdeploy:num_requests_running", "Number of requests in model execution batches.", None),
    ("waiting", "gauge", "lmdeploy:num_requests_waiting", "Number of requests waiting to be processed.", None),
    ("gpu_cache_usage", "gauge", "lmdeploy:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage.", None),
    ("prefix_cache_hit_rate", "gauge", "lmdeploy:prefix_cache_hit_rate", "Prefix-cache hit rate. 1 means 100 percent of queried prefix tokens hit.", None),
    ("prompt_tokens", "counter", "lmdeploy:prompt_tokens_total", "Number of prefill tokens processed.", None),
    ("generation_tokens", "counter", "lmdeploy:generation_tokens_total", "Number of generation tokens processed.", None),
    ("spec_drafts", "counter", "lmdeploy:spec_decode_num_drafts_total", "Number of speculative decoding drafts.", None),
    ("spec_draft_tokens", "counter", "lmdeploy:spec_decode_num_draft_tokens_total", "Number of speculative decoding draft tokens.", None),
    ("spec_accepted_tokens", "counter", "lmdeploy:spec_decode_num_accepted_tokens_total", "Number of speculative decoding accepted tokens.", None),
    ("spec_accepted_per_pos", "counter+position", "lmdeploy:spec_decode_num_accepted_tokens_per_pos_total", "Number of accepted speculative decoding tokens per draft position.", None),
    ("spec_accept_rate", "gauge", "lmdeploy:spec_decode_mean_accept_rate", "Mean speculative decoding acceptance rate. 1 means 100 percent accepted.", None),
    ("spec_accept_length", "gauge", "lmdeploy:spec_decode_mean_accept_length", "Mean speculative decoding acceptance length, including the bonus token.", None),
    ("spec_per_pos_rate", "gauge+position", "lmdeploy:spec_decode_per_position_accept_rate", "Speculative decoding acceptance rate per draft position. 1 means 100 percent accepted.", None),
    ("request_success", "counter+finished_reason", "lmdeploy:request_success_total", "Count of successfully processed requests.", None),
    ("request_prompt_tokens", "histogram", "lmdeploy:request_prompt_tokens", "Number of prefill tokens processed.", "tokens"),
    ("request_generation_tokens", "histogram", "lmdeploy:request_generation_tokens", "Number of generation tokens processed.", "tokens"),
    ("request_cached_tokens", "histogram", "lmdeploy:request_cached_tokens", "Number of prefix-cached input tokens per request.", "tokens"),
    ("request_cache_hit_ratio", "histogram", "lmdeploy:request_cache_hit_ratio", "Prefix cache hit ratio (cached_tokens / prompt_tokens) per request.", LMDEPLOY_HIT_RATIO_BUCKETS),
    ("cached_tokens", "counter", "lmdeploy:cached_tokens_total", "Total prefix-cached input tokens served.", None),
    ("iteration_tokens", "histogram", "lmdeploy:iteration_tokens_total", "Histogram of number of tokens per engine_step.", LMDEPLOY_ITERATION_BUCKETS),
    ("ttft", "histogram", "lmdeploy:time_to_first_token_seconds", "Histogram of time to first token in seconds.", LMDEPLOY_TTFT_BUCKETS),
    ("tpot", "histogram", "lmdeploy:time_per_output_token_seconds", "Histogram of time per output token in seconds.", LMDEPLOY_TPOT_BUCKETS),
    ("itl", "histogram", "lmdeploy:iter_token_latency", "Histogram of inter-token latency", LMDEPLOY_TPOT_BUCKETS),
    ("e2e", "histogram", "lmdeploy:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", LMDEPLOY_LATENCY_BUCKETS),
    ("queue", "histogram", "lmdeploy:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", LMDEPLOY_LATENCY_BUCKETS),
    ("inference", "histogram", "lmdeploy:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.", LMDEPLOY_LATENCY_BUCKETS),
    ("prefill", "histogram", "lmdeploy:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", LMDEPLOY_LATENCY_BUCKETS),
    ("decode", "histogram", "lmdeploy:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", LMDEPLOY_LATENCY_BUCKETS),
]


def page_lmdeploy():
    finished = [
        Req(760, 950, 260, 0.03, 0.09, 0.016, "ResponseType.FINISH", cached=256),
        Req(300, 2100, 380, 0.06, 0.24, 0.019, "ResponseType.FINISH", cached=1024),
        Req(124, 4600, 512, 0.4, 0.85, 0.022, "ResponseType.FINISH", cached=2048),
        Req(3, 1500, 40, 0.05, 0.18, 0.02, "ResponseType.CANCEL", cached=0),
    ]
    running = 18               # requests past their first token, mid-generation
    running_prompt = 1400      # their prompt tokens (counted at their first token)
    running_gen = 150          # tokens each has generated so far (counted per iteration)
    labelnames = ["model_name", "engine"]
    labelvalues = [LMDEPLOY_MODEL, "0"]
    token_buckets = one_two_five(LMDEPLOY_SESSION_LEN)
    registry = CollectorRegistry()
    prometheus_client.disable_created_metrics()
    try:
        Info("lmdeploy:backend_config", "information of backend_config", registry=registry)
        base, child = {}, {}
        for attr, kind, name, help_, buckets in LMDEPLOY_METRICS:
            if kind == "gauge":
                base[attr] = Gauge(name, help_, labelnames, registry=registry)
            elif kind == "counter":
                base[attr] = Counter(name, help_, labelnames, registry=registry)
            elif kind == "counter+position":
                base[attr] = Counter(name, help_, labelnames + ["position"], registry=registry)
            elif kind == "gauge+position":
                base[attr] = Gauge(name, help_, labelnames + ["position"], registry=registry)
            elif kind == "counter+finished_reason":
                base[attr] = Counter(name, help_, labelnames + ["finished_reason"], registry=registry)
            else:
                b = token_buckets if buckets == "tokens" else buckets
                base[attr] = Histogram(name, help_, labelnames, buckets=b, registry=registry)
            if kind in ("gauge", "counter", "histogram"):
                child[attr] = base[attr].labels(*labelvalues)
        success = {reason: base["request_success"].labels(*labelvalues, "ResponseType." + reason)
                   for reason in LMDEPLOY_RESPONSE_TYPES}
        # per-position spec-decode children only appear once speculative decoding runs: none here
        for r in finished:
            success[r.finish.split(".")[1]].inc(r.n)
            child["prompt_tokens"].inc(r.n * r.prompt)
            child["generation_tokens"].inc(r.n * r.gen)
            observe_n(child["ttft"], r.ttft, r.n)
            observe_n(child["tpot"], r.tpot, r.n * (r.gen - 1))
            observe_n(child["itl"], r.tpot, r.n * (r.gen - 1))
            observe_n(child["iteration_tokens"], r.prompt + 1, r.n)
            observe_n(child["iteration_tokens"], 1, r.n * (r.gen - 1))
            observe_n(child["e2e"], r.e2e, r.n)
            observe_n(child["queue"], r.queue, r.n)
            observe_n(child["prefill"], r.prefill, r.n)
            observe_n(child["inference"], r.inference, r.n)
            observe_n(child["decode"], r.decode, r.n)
            observe_n(child["request_prompt_tokens"], r.prompt, r.n)
            observe_n(child["request_generation_tokens"], r.gen, r.n)
            observe_n(child["request_cached_tokens"], r.cached, r.n)
            observe_n(child["request_cache_hit_ratio"], r.cached / r.prompt, r.n)
            child["cached_tokens"].inc(r.n * r.cached)
        # requests still running: their prompt (first token seen) and tokens so far, per iteration
        child["prompt_tokens"].inc(running * running_prompt)
        child["generation_tokens"].inc(running * running_gen)
        observe_n(child["ttft"], 0.14, running)
        observe_n(child["tpot"], 0.017, running * (running_gen - 1))
        observe_n(child["itl"], 0.017, running * (running_gen - 1))
        observe_n(child["iteration_tokens"], running_prompt + 1, running)
        observe_n(child["iteration_tokens"], 1, running * (running_gen - 1))
        done = sum(r.n for r in finished if r.finish == "ResponseType.FINISH")
        child["succeeded"].set(done)
        child["failed"].set(0)
        child["api_routed"].set(running + 2)
        child["api_waiting"].set(0)
        child["running"].set(running)
        child["waiting"].set(2)
        child["gpu_cache_usage"].set(0.3841)
        child["prefix_cache_hit_rate"].set(0.2717)
        text = generate_latest(registry).decode()
    finally:
        prometheus_client.enable_created_metrics()
    return text


# ---------------------------------------------------------------------------------------
# NVIDIA Dynamo frontend (python -m dynamo.frontend), GET /metrics: Rust `prometheus` crate
#   ai-dynamo/dynamo lib/llm/src/http/service/metrics.rs @ 0014908a25aecc8e9ce7455bbbaddf9f1521a1b4
#     (Metrics::build: names, HELP, label names, default buckets; generate_log_buckets;
#      ResponseMetricCollector: output_tokens_total per response chunk, TTFT and
#      input_sequence_tokens at the first token, ITL per token; InflightGuard: requests_total
#      {status, error_type} and request_duration_seconds when the request ends)
#   ai-dynamo/dynamo lib/runtime/src/metrics/prometheus_names.rs @ 04070c75b52f33346a2d5723eed93a0093e77bad
#     (name_prefix::FRONTEND = "dynamo_frontend", frontend_service::* suffixes, label values)
# Text encoder: families sorted by name (Registry::gather), label pairs sorted by name, le
# appended last, values as Rust f64 Display (3.0 -> "3", never an exponent), counts as integers.
# Families of this version whose name constants were not in the prometheus_names.rs read
# (requests_started_total, active_requests, embedding/multimodal histograms, cancellation,
# rejection, migration_duration) are left out; so are the per-worker gauges and the
# dynamo_component_* / tokio families of the runtime registry.
# ---------------------------------------------------------------------------------------

def round_to_sig_figs(value, sig):
    if value == 0.0:
        return 0.0
    magnitude = math.floor(math.log10(abs(value)))
    scale = 10.0 ** (sig - 1 - magnitude)
    x = value * scale
    rounded = math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)  # f64::round: half away from zero
    return rounded / scale


def generate_log_buckets(lo, hi, count):
    """Dynamo's generate_log_buckets: 0.0, then count-1 log-spaced values to 2 significant figures."""
    out = [0.0]
    for i in range(1, count):
        v = math.exp(math.log(lo) + (math.log(hi) - math.log(lo)) * i / (count - 1))
        out.append(round_to_sig_figs(v, 2))
    dedup = []
    for b in out:
        if not dedup or dedup[-1] != b:
            dedup.append(b)
    return dedup


def rust_f64(v):
    """Rust `{}` for f64: shortest round-trip digits, no exponent, integral values without '.0'."""
    if v == math.inf:
        return "inf"
    if v == int(v) and abs(v) < 1e16:
        return str(int(v))
    r = repr(float(v))
    if "e" in r or "E" in r:
        r = format(decimal.Decimal(r), "f")
    return r


DYNAMO_PREFIX = "dynamo_frontend"
DYNAMO_MODEL = "Qwen/Qwen3-32B"
DYNAMO_BUCKETS = {
    "request_duration_seconds": generate_log_buckets(1.0, 512.0, 10),
    "input_sequence_tokens": generate_log_buckets(50.0, 128000.0, 12),
    "output_sequence_tokens": generate_log_buckets(50.0, 32000.0, 10),
    "time_to_first_token_seconds": generate_log_buckets(0.001, 480.0, 18),
    "inter_token_latency_seconds": generate_log_buckets(0.001, 2.0, 13),
    "cached_tokens": generate_log_buckets(50.0, 128000.0, 12),  # shares the ISL buckets
    "tokenizer_latency_ms": [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0],
}
# suffix -> (type, help, label names)
DYNAMO_FAMILIES = {
    "requests_total": ("counter", "Total number of LLM requests processed", ["model", "endpoint", "request_type", "status", "error_type"]),
    "inflight_requests": ("gauge", "Number of inflight requests", ["model"]),
    "disconnected_clients": ("gauge", "Number of disconnected clients", []),
    "queued_requests": ("gauge", "Number of requests in HTTP processing queue", ["model"]),
    "request_duration_seconds": ("histogram", "Duration of LLM requests", ["model"]),
    "input_sequence_tokens": ("histogram", "Input sequence length in tokens", ["model"]),
    "output_sequence_tokens": ("histogram", "Output sequence length in tokens", ["model"]),
    "output_tokens_total": ("counter", "Total number of output tokens generated (updates in real-time)", ["model"]),
    "time_to_first_token_seconds": ("histogram", "Time to first token in seconds", ["model"]),
    "inter_token_latency_seconds": ("histogram", "Inter-token latency in seconds", ["model"]),
    "cached_tokens": ("histogram", "Number of cached tokens (prefix cache hits) per request", ["model"]),
    "tokenizer_latency_ms": ("histogram", "Tokenizer latency in milliseconds", ["operation"]),
    "model_total_kv_blocks": ("gauge", "Total KV cache blocks available for a worker serving the model", ["model"]),
    "model_max_num_seqs": ("gauge", "Maximum number of sequences for a worker serving the model", ["model"]),
    "model_max_num_batched_tokens": ("gauge", "Maximum number of batched tokens for a worker serving the model", ["model"]),
    "model_context_length": ("gauge", "Maximum context length in tokens for a worker serving the model", ["model"]),
    "model_kv_cache_block_size": ("gauge", "KV cache block size in tokens for a worker serving the model", ["model"]),
    "model_migration_limit": ("gauge", "Maximum number of request migrations allowed for the model", ["model"]),
}


def rust_labels(pairs, extra=None):
    pairs = sorted(pairs.items())
    if extra:
        pairs.append(extra)
    if not pairs:
        return ""
    return "{" + ",".join('%s="%s"' % (k, v) for k, v in pairs) + "}"


def page_dynamo():
    finished = [
        Req(900, 1100, 280, 0.0, 0.11, 0.019, cached=512),
        Req(420, 2600, 400, 0.0, 0.29, 0.022, cached=1536),
        Req(96, 9000, 600, 0.0, 1.4, 0.027, cached=4096),
    ]
    errors = 7                     # status="error", error_type="internal", no tokens
    cancelled = 5                  # client went away after their first token
    cancelled_req = Req(cancelled, 1800, 60, 0.0, 0.2, 0.02, cached=0)
    running = 20                   # past their first token, still streaming
    running_prompt, running_gen = 1500, 170
    model = {"model": DYNAMO_MODEL}
    samples = {}                   # suffix -> list of lines (without the family name prefix)

    def add(suffix, labels, value, extra=None):
        samples.setdefault(suffix, []).append((rust_labels(labels, extra), value, labels))

    def hist(suffix, obs, labels):
        bounds = DYNAMO_BUCKETS[suffix]
        counts = bucket_counts(obs, bounds)
        cum, acc = [], 0
        for c in counts:
            acc += c
            cum.append(acc)
        total = sum(v * n for v, n in obs)
        lines = []
        for b, c in zip(bounds, cum):
            lines.append(("_bucket", rust_labels(labels, ("le", rust_f64(b))), c))
        lines.append(("_bucket", rust_labels(labels, ("le", "+Inf")), cum[-1]))
        lines.append(("_sum", rust_labels(labels), total))
        lines.append(("_count", rust_labels(labels), cum[-1]))
        samples.setdefault(suffix, []).append(lines)

    ok = sum(r.n for r in finished)
    add("requests_total", {**model, "endpoint": "chat_completions", "request_type": "stream", "status": "success", "error_type": ""}, ok)
    add("requests_total", {**model, "endpoint": "chat_completions", "request_type": "stream", "status": "error", "error_type": "internal"}, errors)
    add("requests_total", {**model, "endpoint": "chat_completions", "request_type": "stream", "status": "error", "error_type": "cancelled"}, cancelled)
    add("inflight_requests", model, running + 2)
    add("queued_requests", model, 2)
    add("disconnected_clients", {}, cancelled)
    started = finished + [cancelled_req]
    gen_total = sum(r.n * r.gen for r in started) + running * running_gen
    add("output_tokens_total", model, gen_total)
    duration_obs = [(r.e2e, r.n) for r in started] + [(0.004, errors)]
    hist("request_duration_seconds", duration_obs, model)
    isl_obs = [(r.prompt, r.n) for r in started] + [(running_prompt, running)]
    hist("input_sequence_tokens", isl_obs, model)
    hist("output_sequence_tokens", [(r.gen, r.n) for r in started], model)
    hist("time_to_first_token_seconds", [(r.ttft, r.n) for r in started] + [(0.13, running)], model)
    itl_obs = [(r.tpot, r.n * (r.gen - 1)) for r in started] + [(0.02, running * (running_gen - 1))]
    hist("inter_token_latency_seconds", itl_obs, model)
    hist("cached_tokens", [(r.cached, r.n) for r in started] + [(512, running)], model)
    n_tok = sum(r.n for r in started) + running + errors
    hist("tokenizer_latency_ms", [(0.8, n_tok - 40), (1.6, 40)], {"operation": "tokenize"})
    hist("tokenizer_latency_ms", [(3.0, sum(r.n for r in started) - 25), (9.0, 25)], {"operation": "detokenize"})
    add("model_total_kv_blocks", model, 38912)
    add("model_max_num_seqs", model, 256)
    add("model_max_num_batched_tokens", model, 8192)
    add("model_context_length", model, 40960)
    add("model_kv_cache_block_size", model, 16)
    add("model_migration_limit", model, 3)

    out = []
    for suffix in sorted(DYNAMO_FAMILIES, key=lambda s: DYNAMO_PREFIX + "_" + s):
        typ, help_, _ = DYNAMO_FAMILIES[suffix]
        name = DYNAMO_PREFIX + "_" + suffix
        out.append("# HELP %s %s\n# TYPE %s %s\n" % (name, help_, name, typ))
        entries = samples[suffix]
        if typ == "histogram":
            entries = sorted(entries, key=lambda lines: lines[0][1])
            for lines in entries:
                for part, labels, value in lines:
                    out.append("%s%s%s %s\n" % (name, part, labels, rust_f64(value)))
        else:
            for labels, value, raw in sorted(entries, key=lambda e: sorted(e[2].items())):
                out.append("%s%s %s\n" % (name, labels, rust_f64(value)))
    return "".join(out)


# ---------------------------------------------------------------------------------------
# Ray Serve LLM (vLLM engine, log_engine_metrics), scraped from Ray's metrics export port
#   vllm-project/vllm vllm/v1/metrics/ray_wrappers.py @ 02579a5f38c5ed5211c01da7207a5c6fbc921423
#     (RayPrometheusStatLogger: ray.util.metrics Gauge/Counter/Histogram named after vLLM's
#      metric with every character outside [a-zA-Z0-9_] replaced by "_", tag keys = vLLM's
#      label names + "ReplicaId" = ray.serve replica_context().replica_id.unique_id)
#   ray-project/ray python/ray/_private/telemetry/open_telemetry_metric_recorder.py
#     @ 01624ad4bacdc5cf9a284a2cb376a4aff0682ccd (NAMESPACE "ray": exported name "ray_" + name;
#      counters/gauges as OpenTelemetry observables with sorted attribute keys; histograms
#      re-recorded from bucket counts at bucket midpoints, so _sum is an approximation:
#      first bucket's midpoint is bound/2, the +Inf bucket's is 2 x the last bound)
#   ray-project/ray src/ray/stats/tag_defs.cc @ 0a4c1c11b1e299874eca7d5652a771f12fdf9d70 and
#     doc/source/ray-observability/reference/system-metrics.rst (common tags: Component,
#     NodeAddress, SessionName, Version, WorkerId; which of them a Serve replica's metrics
#     carry was not verified in source: less certain)
#   vLLM metric names, HELP strings and buckets: those of tests/py/vllm_exporter.py and
#     tests/data/vllm (vLLM 0.33.0, vllm/v1/metrics/loggers.py), labels model_name, engine.
# The exposition itself is prometheus_client's (the OpenTelemetry Prometheus exporter hands it
# Counter/Gauge/HistogramMetricFamily): counters gain "_total", no "_created".
# ---------------------------------------------------------------------------------------

VLLM_TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
                     20.0, 40.0, 80.0, 160.0, 640.0, 2560.0]
VLLM_ITL_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
                    40.0, 80.0]
VLLM_LATENCY_BUCKETS = TRT_E2E_BUCKETS
VLLM_MAX_MODEL_LEN = 131072
RAY_MODEL = "meta-llama/Llama-3.1-8B-Instruct"
RAY_COMMON = {"Component": "core_worker", "NodeAddress": "10.0.12.7",
              "SessionName": "session_2026-11-30_09-14-03_512384_1", "Version": "2.52.0"}
RAY_REPLICAS = [
    {"ReplicaId": "b7k2m9qx", "WorkerId": "3f9d1c0b7a6e5d4c3b2a19087f6e5d4c3b2a1908f7e6d5c4b3a29180"},
    {"ReplicaId": "r4t8w1zc", "WorkerId": "8c7b6a5948372615f4e3d2c1b0a99887766554433221100ffeeddcc1"},
]
# (vLLM name, kind, HELP, buckets or None)
RAY_VLLM_METRICS = [
    ("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", None),
    ("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", None),
    ("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", None),
    ("vllm:prefix_cache_queries", "counter", "Prefix cache queries, in terms of number of queried tokens.", None),
    ("vllm:prefix_cache_hits", "counter", "Prefix cache hits, in terms of number of cached tokens.", None),
    ("vllm:num_preemptions", "counter", "Cumulative number of preemption from the engine.", None),
    ("vllm:prompt_tokens", "counter", "Number of prefill tokens processed.", None),
    ("vllm:generation_tokens", "counter", "Number of generation tokens processed.", None),
    ("vllm:request_success", "counter", "Count of successfully processed requests.", None),
    ("vllm:request_prompt_tokens", "histogram", "Number of prefill tokens processed.", "tokens"),
    ("vllm:request_generation_tokens", "histogram", "Number of generation tokens processed.", "tokens"),
    ("vllm:time_to_first_token_seconds", "histogram", "Histogram of time to first token in seconds.", VLLM_TTFT_BUCKETS),
    ("vllm:inter_token_latency_seconds", "histogram", "Histogram of inter-token latency in seconds.", VLLM_ITL_BUCKETS),
    ("vllm:e2e_request_latency_seconds", "histogram", "Histogram of e2e request latency in seconds.", VLLM_LATENCY_BUCKETS),
    ("vllm:request_queue_time_seconds", "histogram", "Histogram of time spent in WAITING phase for request.", VLLM_LATENCY_BUCKETS),
    ("vllm:request_prefill_time_seconds", "histogram", "Histogram of time spent in PREFILL phase for request.", VLLM_LATENCY_BUCKETS),
    ("vllm:request_decode_time_seconds", "histogram", "Histogram of time spent in DECODE phase for request.", VLLM_LATENCY_BUCKETS),
]
VLLM_FINISH_REASONS = ["stop", "length", "abort", "error", "repetition"]


def ray_name(vllm_name):
    sanitized = "".join(c if (c.isascii() and (c.isalnum() or c == "_")) else "_" for c in vllm_name)
    return "ray_" + sanitized


def ray_midpoints(bounds):
    mids = []
    for i, b in enumerate(bounds):
        if i == 0:
            lower = 0.0 if b > 0 else b * 2.0
            mids.append((lower + b) / 2.0)
        else:
            mids.append((b + bounds[i - 1]) / 2.0)
    mids.append(1.0 if bounds[-1] <= 0 else bounds[-1] * 2.0)
    return mids


class _StaticCollector:
    def __init__(self, families):
        self.families = families

    def collect(self):
        return self.families


def page_ray_serve_llm():
    # two replicas of one deployment on one node, each one vLLM engine (engine="0")
    workloads = [
        {"finished": [Req(610, 1300, 310, 0.01, 0.09, 0.014, "stop", cached=640),
                      Req(240, 2900, 450, 0.04, 0.26, 0.016, "stop", cached=1792),
                      Req(88, 700, 1024, 0.01, 0.06, 0.013, "length", cached=0),
                      Req(6, 1200, 35, 0.02, 0.1, 0.014, "abort", cached=0)],
         "running": 14, "running_prompt": 1600, "running_gen": 180, "waiting": 1, "kv": 0.3312,
         "preemptions": 0},
        {"finished": [Req(580, 1250, 300, 0.01, 0.1, 0.015, "stop", cached=512),
                      Req(262, 3100, 470, 0.05, 0.29, 0.017, "stop", cached=2048),
                      Req(71, 650, 1024, 0.01, 0.06, 0.013, "length", cached=0),
                      Req(4, 900, 22, 0.02, 0.09, 0.015, "abort", cached=0)],
         "running": 16, "running_prompt": 1500, "running_gen": 210, "waiting": 0, "kv": 0.3689,
         "preemptions": 2},
    ]
    token_buckets = [float(b) for b in one_two_five(VLLM_MAX_MODEL_LEN)]
    families = []
    for vname, kind, help_, buckets in RAY_VLLM_METRICS:
        name = ray_name(vname)
        extra = ["finished_reason"] if vname == "vllm:request_success" else []
        keys = sorted(list(RAY_COMMON) + list(RAY_REPLICAS[0]) + ["model_name", "engine"] + extra)
        cls = {"gauge": GaugeMetricFamily, "counter": CounterMetricFamily}.get(kind, HistogramMetricFamily)
        fam = cls(name, help_, labels=keys)
        for replica, w in zip(RAY_REPLICAS, workloads):
            fin, run = w["finished"], w["running"]
            tags = {**RAY_COMMON, **replica, "model_name": RAY_MODEL, "engine": "0"}
            if kind == "gauge":
                value = {"vllm:num_requests_running": run, "vllm:num_requests_waiting": w["waiting"],
                         "vllm:kv_cache_usage_perc": w["kv"]}[vname]
                fam.add_metric([tags[k] for k in keys], value)
            elif vname == "vllm:request_success":
                for reason in VLLM_FINISH_REASONS:
                    n = sum(r.n for r in fin if r.finish == reason)
                    if n:  # a Ray series exists only once incremented (the wrapper skips inc(0))
                        t2 = {**tags, "finished_reason": reason}
                        fam.add_metric([t2[k] for k in keys], float(n))
            elif kind == "counter":
                prompt = sum(r.n * r.prompt for r in fin) + run * w["running_prompt"]
                value = {
                    "vllm:prefix_cache_queries": prompt,
                    "vllm:prefix_cache_hits": sum(r.n * r.cached for r in fin) + run * 384,
                    "vllm:num_preemptions": w["preemptions"],
                    "vllm:prompt_tokens": prompt,
                    "vllm:generation_tokens": sum(r.n * r.gen for r in fin) + run * w["running_gen"],
                }[vname]
                if value:
                    fam.add_metric([tags[k] for k in keys], float(value))
            else:
                b = token_buckets if buckets == "tokens" else buckets
                obs = {
                    "vllm:request_prompt_tokens": [(r.prompt, r.n) for r in fin],
                    "vllm:request_generation_tokens": [(r.gen, r.n) for r in fin],
                    "vllm:time_to_first_token_seconds": [(r.ttft, r.n) for r in fin] + [(0.11, run)],
                    "vllm:inter_token_latency_seconds": [(r.tpot, r.n * (r.gen - 1)) for r in fin]
                    + [(0.015, run * (w["running_gen"] - 1))],
                    "vllm:e2e_request_latency_seconds": [(r.e2e, r.n) for r in fin],
                    "vllm:request_queue_time_seconds": [(r.queue, r.n) for r in fin],
                    "vllm:request_prefill_time_seconds": [(r.prefill, r.n) for r in fin],
                    "vllm:request_decode_time_seconds": [(r.decode, r.n) for r in fin],
                }[vname]
                counts = bucket_counts(obs, b)
                approx_sum = sum(c * m for c, m in zip(counts, ray_midpoints(b)))
                cum, acc = [], 0
                for bound, c in zip(b + [math.inf], counts):
                    acc += c
                    cum.append((floatToGoString(bound), float(acc)))
                fam.add_metric([tags[k] for k in keys], cum, approx_sum)
        families.append(fam)
    registry = CollectorRegistry()
    registry.register(_StaticCollector(families))
    return generate_latest(registry).decode()


# ---------------------------------------------------------------------------------------
# NVIDIA dcgm-exporter (default counters), GET :9400/metrics: Go text/template
#   NVIDIA/dcgm-exporter etc/default-counters.csv @ d5e5f510a1b6b393f39a43293ccd9dc985defc79
#     (field, Prometheus type, HELP; DCGM_FI_DRIVER_VERSION is a "label" field)
#   NVIDIA/dcgm-exporter internal/pkg/rendermetrics/render_metrics.go
#     @ 691c92762eb551313c825f6efe4ceeee20982801 (release 4.5.3-4.8.2: label "Hostname") and
#     @ d5e5f510a1b6b393f39a43293ccd9dc985defc79 (HEAD, 2026-05-12, #655: renamed "hostname")
#     (GPU line: gpu, UUID, pci_bus_id, device, modelName[, GPU_I_PROFILE, GPU_I_ID][, Hostname],
#      then the label fields sorted, then attributes sorted (err_code, err_msg for XID;
#      pod, namespace, container in Kubernetes mode))
#   NVIDIA/dcgm-exporter internal/pkg/collector/gpu_collector.go @ d5e5f51 (toMetric: device
#     "nvidia<N>", UUID label name "UUID" ("uuid" with --use-old-namespace); GPU_I_ID =
#     NVML GPU-instance id; toString: int64 "%d", double "%f")
#   NVIDIA/dcgm-exporter internal/pkg/devicemonitoring/device_monitoring.go @ d5e5f51 (a GPU with
#     MIG instances is monitored only through its instances)
#   NVIDIA/dcgm-exporter internal/pkg/hostname/hostname.go @ d5e5f51 (NODE_NAME env, else
#     os.Hostname(); the remote host-engine's host with -r outside Kubernetes)
# Family order is Go's map order over a struct key (random per scrape): CSV order here.
# Field value types (int64 vs double) are DCGM's (dcgm_fields.h), not read here: less certain
# for the DCGM_FI_PROF_PCIE_* fields (written as integers).
# ---------------------------------------------------------------------------------------

# (field, type, help, "i" int64 / "d" double) in default-counters.csv order, label field excluded
DCGM_FIELDS = [
    ("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", "i"),
    ("DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).", "i"),
    ("DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C).", "i"),
    ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", "i"),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", "d"),
    ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ).", "i"),
    ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries.", "i"),
    ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", "i"),
    ("DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).", "i"),
    ("DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilization (in %).", "i"),
    ("DCGM_FI_DEV_DEC_UTIL", "gauge", "Decoder utilization (in %).", "i"),
    ("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered.", "i"),
    ("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", "i"),
    ("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", "i"),
    ("DCGM_FI_DEV_FB_RESERVED", "gauge", "Framebuffer memory reserved (in MiB).", "i"),
    ("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter", "Total number of NVLink bandwidth counters for all lanes.", "i"),
    ("DCGM_FI_DEV_VGPU_LICENSE_STATUS", "gauge", "vGPU License status", "i"),
    ("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for uncorrectable errors", "i"),
    ("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for correctable errors", "i"),
    ("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed", "i"),
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active.", "d"),
    ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active.", "d"),
    ("DCGM_FI_PROF_DRAM_ACTIVE", "gauge", "Ratio of cycles the device memory interface is active sending or receiving data.", "d"),
    ("DCGM_FI_PROF_PCIE_TX_BYTES", "gauge", "The rate of data transmitted over the PCIe bus - including both protocol headers and data payloads - in bytes per second.", "i"),
    ("DCGM_FI_PROF_PCIE_RX_BYTES", "gauge", "The rate of data received over the PCIe bus - including both protocol headers and data payloads - in bytes per second.", "i"),
]
DCGM_DRIVER = "570.172.08"
H100 = "NVIDIA H100 80GB HBM3"


def dcgm_value(v, kind):
    return "%d" % v if kind == "i" else "%f" % v


def dcgm_page(entities, hostname_label, hostname):
    """entities: list of dicts with the identity keys and a 'values' dict field -> number."""
    out = []
    for field, typ, help_, kind in DCGM_FIELDS:
        out.append("# HELP %s %s\n# TYPE %s %s\n" % (field, help_, field, typ))
        for e in entities:
            labels = 'gpu="%s",UUID="%s",pci_bus_id="%s",device="%s",modelName="%s"' % (
                e["gpu"], e["uuid"], e["pci"], "nvidia" + e["gpu"], e["model"])
            if e.get("profile"):
                labels += ',GPU_I_PROFILE="%s",GPU_I_ID="%s"' % (e["profile"], e["gi"])
            if hostname:
                labels += ',%s="%s"' % (hostname_label, hostname)
            labels += ',DCGM_FI_DRIVER_VERSION="%s"' % DCGM_DRIVER
            if field == "DCGM_FI_DEV_XID_ERRORS":
                labels += ',err_code="0",err_msg="No Error"'
            out.append("%s{%s} %s\n" % (field, labels, dcgm_value(e["values"][field], kind)))
    return "".join(out)


def gpu_values(power, energy_mj, util, fb_used, fb_total, sm_clock, temp, mem_temp, gr, tensor, dram,
               nvlink, pcie_tx, pcie_rx, reserved=564):
    return {
        "DCGM_FI_DEV_SM_CLOCK": sm_clock, "DCGM_FI_DEV_MEM_CLOCK": 2619,
        "DCGM_FI_DEV_MEMORY_TEMP": mem_temp, "DCGM_FI_DEV_GPU_TEMP": temp,
        "DCGM_FI_DEV_POWER_USAGE": power, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": energy_mj,
        "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": 0, "DCGM_FI_DEV_GPU_UTIL": util,
        "DCGM_FI_DEV_MEM_COPY_UTIL": 58 if util else 0, "DCGM_FI_DEV_ENC_UTIL": 0, "DCGM_FI_DEV_DEC_UTIL": 0,
        "DCGM_FI_DEV_XID_ERRORS": 0,
        "DCGM_FI_DEV_FB_FREE": fb_total - reserved - fb_used, "DCGM_FI_DEV_FB_USED": fb_used,
        "DCGM_FI_DEV_FB_RESERVED": reserved, "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL": nvlink,
        "DCGM_FI_DEV_VGPU_LICENSE_STATUS": 0, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": 0,
        "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS": 0, "DCGM_FI_DEV_ROW_REMAP_FAILURE": 0,
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE": gr, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": tensor,
        "DCGM_FI_PROF_DRAM_ACTIVE": dram, "DCGM_FI_PROF_PCIE_TX_BYTES": pcie_tx,
        "DCGM_FI_PROF_PCIE_RX_BYTES": pcie_rx,
    }


# Energy since boot: the host booted 259200 s (3 days) before this scrape; mean power over that
# time 349.8 W and 339.9 W, so the counters read 349.8 * 259200 * 1000 mJ and 339.9 * ... mJ.
DCGM_UPTIME_S = 259200


def page_dcgm():
    gpus = [
        {"gpu": "0", "uuid": "GPU-5c8e3a1f-9b27-4d6e-a0c3-7f1e2d4b6a89", "pci": "00000000:18:00.0", "model": H100,
         "values": gpu_values(612.345, int(349.8 * DCGM_UPTIME_S * 1000), 97, 73216, 81559, 1980, 61, 48,
                              0.912345, 0.431207, 0.620118, 1234567890123, 1932735283, 2684354560)},
        {"gpu": "1", "uuid": "GPU-a2d4f6b8-1c3e-4a5b-9d7f-0e2c4a6b8d13", "pci": "00000000:2A:00.0", "model": H100,
         "values": gpu_values(588.901, int(339.9 * DCGM_UPTIME_S * 1000), 95, 73184, 81559, 1980, 58, 46,
                              0.897654, 0.418833, 0.603371, 1198765432109, 1879048192, 2576980377)},
    ]
    return dcgm_page(gpus, "Hostname", "gpu-node-07")


def page_dcgm_mig():
    # GPU 0 split into two 3g.40gb instances (GPU-instance ids 1 and 2); GPU 1 without MIG.
    # Device-level fields (clocks, temperatures, power, energy, PCIe, NVLink) are the parent GPU's
    # and repeat on each instance (each sampled on its own, so power differs in the last digits);
    # DCGM_FI_DEV_GPU_UTIL is not supported for MIG instances and reads 0: use
    # DCGM_FI_PROF_GR_ENGINE_ACTIVE. Framebuffer and DCGM_FI_PROF_* are per instance.
    uuid0 = "GPU-0e7d3b9a-4c21-4f8e-b5a6-d92c1e3f7a40"
    energy0 = int(301.4 * DCGM_UPTIME_S * 1000)
    inst = []
    for gi, power, energy, fb_used, gr, tensor, dram, tx, rx in (
            (1, 402.113, energy0, 35012, 0.884512, 0.402215, 0.571904, 805306368, 1288490188),
            (2, 402.387, energy0 + 402, 30208, 0.701377, 0.318640, 0.447215, 644245094, 1073741824)):
        v = gpu_values(power, energy, 0, fb_used, 40448, 1980, 57, 45, gr, tensor, dram, 0, tx, rx, reserved=0)
        inst.append({"gpu": "0", "uuid": uuid0, "pci": "00000000:18:00.0", "model": H100,
                     "profile": "3g.40gb", "gi": str(gi), "values": v})
    gpu1 = {"gpu": "1", "uuid": "GPU-6f1a9c3e-8d42-4b7a-a1e5-3c9d7b2f4e86", "pci": "00000000:2A:00.0",
            "model": H100,
            "values": gpu_values(571.226, int(330.2 * DCGM_UPTIME_S * 1000), 94, 72960, 81559, 1980, 59, 47,
                                 0.889901, 0.409716, 0.598812, 0, 1825361100, 2469606195)}
    return dcgm_page(inst + [gpu1], "hostname", "gpu-node-12")


PAGES = {
    "llamacpp": page_llamacpp,
    "trtllm": page_trtllm,
    "lmdeploy": page_lmdeploy,
    "dynamo": page_dynamo,
    "ray-serve-llm": page_ray_serve_llm,
    "dcgm": page_dcgm,
    "dcgm-mig": page_dcgm_mig,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed files; exit 1 on a difference")
    parser.add_argument("--out", type=Path, default=OUT, help="output directory (default tests/data/engines)")
    args = parser.parse_args()
    from importlib.metadata import version
    have = version("prometheus_client")
    if have != PINNED:
        print("need prometheus_client==%s (have %s): pip install -r tests/py/requirements.txt" % (PINNED, have),
              file=sys.stderr)
        return 2
    rendered = {name: fn() for name, fn in PAGES.items()}
    if args.check:
        bad = 0
        for name, text in rendered.items():
            path = args.out / (name + ".prom")
            if not path.exists() or path.read_text() != text:
                print("differs: %s" % path, file=sys.stderr)
                bad += 1
        if bad:
            return 1
        print("engine pages: %d identical" % len(rendered))
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in rendered.items():
        (args.out / (name + ".prom")).write_text(text)
    print("wrote %d pages to %s" % (len(rendered), args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
