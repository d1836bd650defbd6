//! The operator's figures on pages whose every count is set by hand, so that each figure
//! is known exactly: SLO attainment (970 of 1,000 requests within 0.5 s), time per phase,
//! the KV cache in tokens, preemptions, rejections and aborts per second, waiting by
//! reason, the sleep state and prompt tokens by source.

use chrono::{DateTime, TimeDelta, Utc};
use promrate::{Tracker, WindowRule};

use super::slo::parse_objectives;
use super::{compute_with, Figures, Source};
use crate::simulator::known::{page, run_of_one_engine, Counts};

/// The figures (totals and by engine) after the pages of `engines` at 0, 10 and 20 s, with
/// a 10 s window, and the objectives `slo`.
pub(crate) fn figures_of(engines: &[[Counts; 3]], slo: &str) -> (Figures, Vec<(String, Figures)>) {
    let t0 = DateTime::<Utc>::from_timestamp(1_800_000_000, 0).unwrap();
    let mut tracker = Tracker::new([]);
    tracker.normalize_names(true).infer_counters(true);
    for k in 0..3 {
        let counts: Vec<Counts> = engines.iter().map(|e| e[k]).collect();
        let at = t0 + TimeDelta::seconds(10 * k as i64);
        tracker.ingest(&page(&counts), at).unwrap();
    }
    let at = t0 + TimeDelta::seconds(20);
    let sources = [Source {
        tracker: &tracker,
        at,
        url: "http://vllm:8000/metrics",
        retired: None,
    }];
    let w = WindowRule::new(TimeDelta::seconds(10))
        .slack(TimeDelta::seconds(1))
        .gap(TimeDelta::seconds(30));
    let objectives = match slo {
        "" => Vec::new(),
        slo => parse_objectives(slo).unwrap(),
    };
    compute_with(&sources, w, Some("engine"), &objectives)
}

/// 970 of the window's 1,000 requests had a TTFT within 0.5 s: exactly 0.97, the bound
/// written `0.50` on the page and `500ms` on the command line; 0.75 s lies between the
/// bounds 0.5 (970) and 1 (995): 982.5 of 1,000, interpolated; since the first page 1,470
/// of 1,500 (0.98). ITL and e2e likewise.
#[test]
fn slo_attainment_is_exact_at_a_bound_and_interpolated_between() {
    let (total, _) = figures_of(&[run_of_one_engine()], "ttft=500ms,itl=50ms,e2e=30s");
    let got: Vec<(&str, f64, Option<f64>, bool)> = total
        .slo
        .iter()
        .map(|a| {
            (
                a.objective.latency.key(),
                a.objective.seconds,
                a.attained,
                a.exact,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("ttft", 0.5, Some(0.97), true),
            ("itl", 0.05, Some(0.95), true),
            ("e2e", 30.0, Some(0.99), true),
        ]
    );
    let since: Vec<Option<f64>> = total.since_start.slo.iter().map(|a| a.attained).collect();
    assert_eq!(
        since,
        [Some(0.98), Some(145_000.0 / 150_000.0), Some(1_490.0 / 1_500.0)]
    );
    let (total, _) = figures_of(&[run_of_one_engine()], "ttft=750ms,e2e=45s");
    let ttft = total.slo[0];
    assert!(!ttft.exact);
    assert!((ttft.attained.unwrap() - 0.9825).abs() < 1e-12, "{ttft:?}");
    // 45 s: halfway from 30 s (990) to 60 s (1,000).
    assert!((total.slo[1].attained.unwrap() - 0.995).abs() < 1e-12);
}

/// Time per phase: the window's increase of each `_sum` over that of its `_count`.
#[test]
fn phase_means_are_the_windows_sums_over_counts() {
    let (total, _) = figures_of(&[run_of_one_engine()], "");
    let p = total.phases;
    assert_eq!(
        (p.queue, p.prefill, p.decode, p.inference),
        (Some(0.25), Some(0.5), Some(12.0), Some(12.5))
    );
}

/// Two engines: the KV cache of each (4,096 blocks of 16 tokens, said as blocks by engine
/// 0 and as tokens by engine 1) times its own usage; rates of preemptions, rejections and
/// aborts; waiting by reason; prompt tokens by source; the sleep state of each, and of
/// both when they differ.
#[test]
fn capacity_and_prompt_sources_are_the_pages_counts() {
    let one = run_of_one_engine();
    let mut two = one;
    two[2].kv_usage = 0.75;
    two[2].awake = false;
    let (total, groups) = figures_of(&[one, two], "");
    let c = &total.capacity;
    assert_eq!(c.kv_total_tokens, Some(2.0 * 65_536.0));
    assert_eq!(c.kv_used_tokens, Some(0.25 * 65_536.0 + 0.75 * 65_536.0));
    // 20 preemptions, 5 + 5 rejections (one server-wide series), 3 aborts, per engine in 10 s.
    assert_eq!(c.preemptions_per_s, Some(4.0));
    assert_eq!(c.admission_rejections_per_s, Some(1.0));
    assert_eq!(c.aborts_per_s, Some(0.6));
    assert_eq!(
        c.waiting_by_reason,
        [("capacity".to_string(), 14.0), ("deferred".to_string(), 4.0)]
    );
    assert_eq!(c.sleep_state.as_deref(), Some("awake (1), weights_offloaded (1)"));
    // The pages have every capacity family, and neither prefix cache nor speculative
    // decoding.
    assert_eq!(c.not_exposed, ["prefix_cache_hit_rate", "spec_decode"]);
    let s = total.prompt_parts.sources.unwrap();
    assert_eq!(
        (s.local_compute, s.local_cache_hit, s.external_kv_transfer),
        (Some(1_200.0), Some(600.0), Some(200.0))
    );
    assert_eq!(
        (total.prompt_parts.computed, total.prompt_parts.cached),
        (Some(1_200.0), Some(800.0))
    );
    let names: Vec<&str> = groups.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["0", "1"]);
    let engine = |i: usize| &groups[i].1.capacity;
    assert_eq!(engine(0).kv_total_tokens, Some(65_536.0), "4096 blocks × 16");
    assert_eq!(engine(0).kv_used_tokens, Some(16_384.0));
    assert_eq!(engine(1).kv_used_tokens, Some(49_152.0));
    assert_eq!(engine(1).sleep_state.as_deref(), Some("weights_offloaded"));
    assert_eq!(engine(0).preemptions_per_s, Some(2.0));
}

/// A page without the capacity families says which figures it cannot show.
#[test]
fn what_a_server_does_not_expose_is_named() {
    let t0 = DateTime::<Utc>::from_timestamp(1_800_000_000, 0).unwrap();
    let mut tracker = Tracker::new([]);
    tracker.normalize_names(true).infer_counters(true);
    let text = "# TYPE llamacpp:tokens_predicted_total counter\nllamacpp:tokens_predicted_total 10\n";
    tracker.ingest(text, t0).unwrap();
    let sources = [Source {
        tracker: &tracker,
        at: t0,
        url: "u",
        retired: None,
    }];
    let w = WindowRule::new(TimeDelta::seconds(10));
    let (total, _) = compute_with(&sources, w, None, &[]);
    assert_eq!(
        total.capacity.not_exposed,
        [
            "kv_used_tokens",
            "kv_total_tokens",
            "kv_cache_usage",
            "preemptions_per_s",
            "admission_rejections_per_s",
            "aborts_per_s",
            "waiting_by_reason",
            "engine_sleep_state",
            "ttft_seconds",
            "inter_token_latency_seconds",
            "e2e_latency_seconds",
            "phase_mean_seconds.queue",
            "phase_mean_seconds.prefill",
            "phase_mean_seconds.decode",
            "phase_mean_seconds.inference",
            "prefix_cache_hit_rate",
            "spec_decode",
        ]
    );
    assert_eq!(total.phases, super::PhaseMeans::default());
    // Without a page (an outage), nothing is said not exposed.
    let (total, _) = compute_with(&[], w, None, &[]);
    assert!(total.capacity.not_exposed.is_empty());
}

/// A page where every series has a model and a waiting reason of its own (20,000 of
/// each): each group has its one reason and the totals every reason, kept per value found,
/// not in a table of every reason by every group (400 million cells: gigabytes, and a
/// query per reason over every series).
#[test]
fn a_reason_per_series_costs_its_series_not_reasons_by_groups() {
    const N: usize = 20_000;
    let mut page = String::from("# TYPE vllm:num_requests_waiting_by_reason gauge\n");
    for i in 0..N {
        page += &format!("vllm:num_requests_waiting_by_reason{{model_name=\"m{i}\",reason=\"r{i}\"}} 1\n");
    }
    // A group is a model with requests waiting.
    page += "# TYPE vllm:num_requests_waiting gauge\n";
    for i in 0..N {
        page += &format!("vllm:num_requests_waiting{{model_name=\"m{i}\"}} 1\n");
    }
    let at = DateTime::<Utc>::from_timestamp(1_800_000_000, 0).unwrap();
    let mut tracker = Tracker::new([]);
    tracker.ingest(&page, at).unwrap();
    let sources = [Source {
        tracker: &tracker,
        at,
        url: "http://vllm:8000/metrics",
        retired: None,
    }];
    let w = WindowRule::new(TimeDelta::seconds(10)).slack(TimeDelta::seconds(1));
    let (total, groups) = compute_with(&sources, w, Some("model_name"), &[]);
    assert_eq!(total.capacity.waiting_by_reason.len(), N);
    assert_eq!(groups.len(), N);
    let (_, one) = groups.iter().find(|(name, _)| name == "m10005").unwrap();
    assert_eq!(one.capacity.waiting_by_reason, [("r10005".to_string(), 1.0)]);
    assert!(groups
        .iter()
        .all(|(_, g)| g.capacity.waiting_by_reason.len() == 1));
}

/// `promql_rate` is `rate()` as the operator's Prometheus computes it, from the values
/// alone (`use-start-timestamps` is off by default): a restarted counter whose `_created`
/// says it began 12.5 s after it counted its first tokens does not count them twice (it
/// read 3,733 tok/s at 1,600 from a simulator whose pages said so).
#[test]
fn promql_rate_reads_the_values_alone_as_prometheus_does() {
    let t0 = DateTime::<Utc>::from_timestamp(1_800_000_000, 0).unwrap();
    let unix = |s: f64| t0.timestamp() as f64 + s;
    let page = |tokens: f64, created: f64| {
        format!(
            "# TYPE vllm:generation_tokens counter\n\
             vllm:generation_tokens_total{{engine=\"0\"}} {tokens}\n\
             vllm:generation_tokens_created{{engine=\"0\"}} {created}\n"
        )
    };
    let mut tracker = Tracker::new([]);
    tracker.normalize_names(true).infer_counters(true);
    for s in 0..=34 {
        let t = f64::from(s);
        // Up an hour, then restarted at 20 s: counting from there, created at 32.5 s.
        let text = if s < 20 {
            page(1_000.0 * (t + 3_600.0), unix(-3_600.0))
        } else {
            page(1_000.0 * (t - 20.0), unix(32.5))
        };
        tracker.ingest(&text, t0 + TimeDelta::seconds(s.into())).unwrap();
    }
    let at = t0 + TimeDelta::seconds(34);
    let sources = [Source {
        tracker: &tracker,
        at,
        url: "u",
        retired: None,
    }];
    let w = WindowRule::new(TimeDelta::seconds(10));
    let (total, _) = compute_with(&sources, w, None, &[]);
    // PromQL over (24 s, 34 s]: 9,000 tokens in 9 s, extrapolated to the 10 s window.
    let promql = total.generation.promql.unwrap();
    assert!((promql - 1_000.0).abs() < 1e-9, "{promql}");
    assert_eq!(total.generation.window, Some(1_000.0));
    // With the created times read, the tokens before 32.5 s would count twice.
    let tokens = promrate::Selector::parse("vllm:generation_tokens_total").unwrap();
    let with_starts = promrate::Query::new(&tokens, promrate::Estimator::Rate)
        .window(TimeDelta::seconds(10))
        .at(at);
    assert!(tracker.evaluate(&with_starts).unwrap().value().unwrap() > 1_500.0);
}
