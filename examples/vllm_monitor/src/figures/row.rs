//! The figures of one row (the totals, or one group) as JSON: the schema that `--json`
//! writes, that `--export csv` flattens into columns and that `--alert` rules read their
//! figures from, so all three agree on every name.

use serde_json::{json, Map, Value};

use super::slo::{Attainment, Latency};
use super::{EngineRate, Figures, Quantiles, Rate, Verdict, PREFIX_HIT_RATE, SPEC_DECODE};

/// The schema number every object carries. 2 (0.4): a row no longer repeats its window's
/// span as `window_span_s` (the interval's is `window.span_s`; each rate's, `span_s`).
pub const SCHEMA: u32 = 2;

/// A rate three ways; `span_s` is what the window rate actually covers.
fn rate(r: &Rate, span_s: Option<f64>) -> Value {
    json!({ "window": r.window, "ewma": r.ewma, "promql_rate": r.promql, "span_s": span_s })
}

fn quantiles(q: &Quantiles) -> Value {
    json!({ "p50": q.p50, "p95": q.p95, "p99": q.p99 })
}

/// `{"ttft": {"objective_s", "attained", "exact"}, ...}`: the objectives given, in order.
pub fn attainments(slo: &[Attainment]) -> Value {
    slo.iter()
        .map(|a| {
            let value = json!({
                "objective_s": a.objective.seconds, "attained": a.attained,
                "exact": a.attained.map(|_| a.exact),
            });
            (a.objective.latency.key().to_string(), value)
        })
        .collect::<Map<String, Value>>()
        .into()
}

/// KV cache in tokens, preemptions, rejections, aborts, waiting by reason, sleep state,
/// and what the server does not expose.
fn capacity(f: &Figures) -> Value {
    let c = &f.capacity;
    let by_reason: Map<String, Value> = c
        .waiting_by_reason
        .iter()
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    json!({
        "kv_used_tokens": c.kv_used_tokens, "kv_total_tokens": c.kv_total_tokens,
        "kv_cache_usage": f.in_flight.kv_usage, "preemptions_per_s": c.preemptions_per_s,
        "admission_rejections_per_s": c.admission_rejections_per_s,
        "aborts_per_s": c.aborts_per_s, "waiting_by_reason": by_reason,
        "engine_sleep_state": c.sleep_state, "not_exposed": c.not_exposed,
    })
}

/// The figures of one interval (or one group); `slo` only with `--slo`.
pub fn figures(f: &Figures, verdict: &Verdict) -> Value {
    let mut v = figures_without_slo(f, verdict);
    if let (false, Value::Object(m)) = (f.slo.is_empty(), &mut v) {
        m.insert("slo".into(), attainments(&f.slo));
    }
    v
}

fn figures_without_slo(f: &Figures, verdict: &Verdict) -> Value {
    let by_reason: Map<String, Value> = f
        .requests
        .finished_by_reason
        .iter()
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    let span_s = f.window.span.map(|s| s.seconds);
    json!({
        "window_shortened": f.window.shortened,
        "generation_tokens_per_s": rate(&f.generation, span_s),
        "prompt_tokens_per_s": {
            "window": f.prompt.window, "ewma": f.prompt.ewma, "promql_rate": f.prompt.promql,
            "span_s": span_s, "computed": f.prompt_parts.computed, "cached": f.prompt_parts.cached,
            "by_source": f.prompt_parts.sources.map(|p| json!({
                "local_compute": p.local_compute, "local_cache_hit": p.local_cache_hit,
                "external_kv_transfer": p.external_kv_transfer,
            })),
        },
        "requests_finished_per_s": { "total": f.requests.finished, "by_reason": by_reason },
        "running": f.in_flight.running,
        "waiting": f.in_flight.waiting,
        "kv_cache_usage": f.in_flight.kv_usage,
        // Named once, where `capacity.not_exposed` names them too.
        (PREFIX_HIT_RATE): f.in_flight.prefix_hit_rate,
        (SPEC_DECODE): f.spec_decode.map(|s| json!({
            "acceptance_rate": s.acceptance_rate, "mean_acceptance_length": s.mean_acceptance_length,
        })),
        (Latency::Ttft.json_name()): quantiles(&f.ttft),
        (Latency::Itl.json_name()): quantiles(&f.itl),
        (Latency::E2e.json_name()): quantiles(&f.e2e),
        "phase_mean_seconds": {
            "queue": f.phases.queue, "prefill": f.phases.prefill,
            "decode": f.phases.decode, "inference": f.phases.inference,
        },
        "capacity": capacity(f),
        "mean_generation_tokens_per_request": f.requests.tokens_per_request,
        "mean_prompt_tokens_per_request": f.requests.prompt_tokens_per_request,
        "running_mean": f.in_flight.running_mean,
        "generation_tokens_per_s_per_running_request": f.in_flight.tokens_per_s_per_request,
        "mean_e2e_latency_seconds": f.requests.mean_latency,
        "littles_law_requests_per_s": f.requests.steady_rate,
        "load": verdict.load(f).as_str(),
        "generated_tokens_since_start": f.since_start.generated,
        "finished_requests_since_start": f.since_start.finished,
        "gpus": f.gpus.as_ref().map(|g| json!({
            "count": g.count, "models": g.models, "power_w": g.power_w,
            "utilisation_percent": g.utilisation_pct, "memory_used_mib": g.memory_used_mib,
            "energy_window_j": g.energy_window_j, "energy_since_start_j": g.energy_since_start_j,
        })),
        "generation_tokens_per_s_per_gpu": f.per_token.tokens_per_s_per_gpu,
        "joules_per_generated_token": f.per_token.joules_per_token,
        "cost_per_million_generated_tokens": f.per_token.cost_per_million_tokens,
        "generation_tokens_per_s_by_engine": EngineRate::names(&f.engine_rates).zip(&f.engine_rates).map(|(name, e)| (name, json!(e.rate))).collect::<Map<String, Value>>(),
        "stalled": verdict.stalled,
        "imbalanced_engine": verdict.imbalanced_engine,
        "tokens_counted_at_request_end": f.tokens_at_request_end,
        "not_rated": f.not_rated,
    })
}
