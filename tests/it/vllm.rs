//! The tracker on real vLLM pages: the figures in `tests/data/vllm/*.expected.json`.

use chrono::{DateTime, TimeDelta, Utc};
use promrate::text::write;
use promrate::{fold, Answer, Entry, Estimator, MetricType, Query, Selector, TrackedSeries, Tracker};
use serde_json::Value;

use crate::data;

/// A selector for one metric name.
fn sel(name: &str) -> Selector {
    Selector::parse(name).unwrap()
}

fn close(got: f64, want: f64, what: &str) {
    let tolerance = 1e-9 * want.abs().max(1.0);
    assert!((got - want).abs() <= tolerance, "{what}: got {got}, want {want}");
}

fn t0() -> DateTime<Utc> {
    DateTime::from_timestamp(1_764_480_500, 0).unwrap()
}

fn one(groups: Result<Vec<promrate::GroupAnswer>, promrate::QueryError>, what: &str) -> f64 {
    let groups = groups.unwrap();
    assert_eq!(groups.len(), 1, "{what}: {groups:?}");
    groups[0].value.clone().unwrap()
}

/// The newest values, summed, as the server's page has them.
fn newest(name: &str) -> Query {
    Query::new(&sel(name), Estimator::Last)
}

/// The value of a one-group answer.
fn value(answer: Result<Answer, promrate::QueryError>, what: &str) -> f64 {
    let answer = answer.unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(answer.groups.len(), 1, "{what}: {answer:?}");
    answer.value().unwrap_or_else(|e| panic!("{what}: {e}"))
}

#[test]
fn single_engine_two_scrapes_match_expected() {
    let dir = data::dir();
    let vllm = dir.join("vllm");
    let expected: Value =
        serde_json::from_str(&data::read(&vllm.join("vllm-0.33-v1-single.expected.json"))).unwrap();
    let want = |key: &str| expected[key].as_f64().unwrap_or_else(|| panic!("{key}"));
    let window = TimeDelta::milliseconds((want("window_s") * 1000.0) as i64);
    let (a, b) = (t0(), t0() + window);
    let mut tracker = Tracker::new([]);
    tracker.normalize_names(true);
    let first = tracker
        .ingest(&data::read(&vllm.join("vllm-0.33-v1-single-t0.prom")), a)
        .unwrap();
    let second = tracker
        .ingest(&data::read(&vllm.join("vllm-0.33-v1-single-t10.prom")), b)
        .unwrap();
    assert_eq!((first.bad_lines, second.bad_lines), (0, 0));
    assert!(second.resets.is_empty(), "{:?}", second.resets);

    let rate = |name: &str| Query::new(&sel(name), Estimator::WindowRate).window(window);
    let increase = |name: &str| Query::new(&sel(name), Estimator::WindowIncrease).window(window);
    let last = |s: &TrackedSeries| s.last_value();
    let figure = |query: Query, what: &str| value(tracker.evaluate(&query), what);

    close(
        figure(increase("vllm:generation_tokens_total"), "generation delta"),
        want("generation_tokens_delta"),
        "generation delta",
    );
    close(
        figure(rate("vllm:generation_tokens_total"), "generation tok/s"),
        want("generation_tokens_per_s"),
        "generation tok/s",
    );
    close(
        figure(rate("vllm:prompt_tokens_total"), "prompt tok/s"),
        want("prompt_tokens_per_s"),
        "prompt tok/s",
    );
    let computed = tracker
        .evaluate(&rate("vllm:prompt_tokens_by_source_total").by(["source"]))
        .unwrap();
    close(
        computed.group(&["local_compute"]).unwrap().value.clone().unwrap(),
        want("prompt_computed_tokens_per_s"),
        "computed prompt tok/s",
    );
    close(
        figure(rate("vllm:request_success_total"), "finished req/s"),
        want("requests_finished_per_s"),
        "finished req/s",
    );
    let hits = figure(increase("vllm:prefix_cache_hits_total"), "hits");
    let queries = figure(increase("vllm:prefix_cache_queries_total"), "queries");
    close(
        hits / queries,
        want("prefix_cache_hit_rate_window"),
        "prefix hit rate (window)",
    );
    let lifetime = figure(newest("vllm:prefix_cache_hits_total"), "hits")
        / figure(newest("vllm:prefix_cache_queries_total"), "queries");
    close(
        lifetime,
        want("prefix_cache_hit_rate_lifetime_t10"),
        "prefix hit rate (lifetime)",
    );
    close(
        figure(newest("vllm:num_requests_running"), "running"),
        want("running_t10"),
        "running",
    );
    close(
        figure(newest("vllm:num_requests_waiting"), "waiting"),
        want("waiting_t10"),
        "waiting",
    );
    close(
        one(
            fold::avg_by(&tracker, &sel("vllm:kv_cache_usage_perc"), &[], last),
            "kv",
        ),
        want("kv_cache_usage_t10"),
        "kv usage",
    );
    close(
        figure(increase("vllm:time_to_first_token_seconds_count"), "ttft count"),
        want("ttft_count_delta"),
        "ttft count",
    );

    // Over the window, or since the server started (its newest values).
    let quantile = |q: f64, name: &str, over_window: bool| {
        let query = if over_window { increase(name) } else { newest(name) };
        value(tracker.evaluate(&query.quantile(q)), name)
    };
    let ttft = "vllm:time_to_first_token_seconds";
    let itl = "vllm:inter_token_latency_seconds";
    close(
        quantile(0.5, ttft, true),
        want("ttft_window_p50_s"),
        "ttft p50 (window)",
    );
    close(
        quantile(0.95, ttft, true),
        want("ttft_window_p95_s"),
        "ttft p95 (window)",
    );
    close(
        quantile(0.5, ttft, false),
        want("ttft_lifetime_t10_p50_s"),
        "ttft p50 (lifetime)",
    );
    close(
        quantile(0.95, ttft, false),
        want("ttft_lifetime_t10_p95_s"),
        "ttft p95 (lifetime)",
    );
    close(
        quantile(0.99, ttft, false),
        want("ttft_lifetime_t10_p99_s"),
        "ttft p99 (lifetime)",
    );
    close(
        quantile(0.5, itl, true),
        want("itl_window_p50_s"),
        "itl p50 (window)",
    );
    close(
        quantile(0.99, itl, true),
        want("itl_window_p99_s"),
        "itl p99 (window)",
    );
    close(
        value(tracker.evaluate(&increase(itl).mean()), "itl mean"),
        want("itl_window_mean_s"),
        "itl mean (window)",
    );
    close(
        value(tracker.evaluate(&newest(ttft).mean()), "ttft mean"),
        want("ttft_lifetime_t10_mean_s"),
        "ttft mean (lifetime)",
    );
}

/// Renders a page like `text` with every counter-like sample raised by `bump(name, labels)`.
fn advance(text: &str, bump: impl Fn(&str, &[(String, String)]) -> f64) -> String {
    let mut out = String::new();
    let mut family: Option<(String, MetricType)> = None;
    for entry in promrate::parse(text) {
        match entry.unwrap() {
            Entry::Help { name, text } => write::help(&mut out, name, &text.unescaped()).unwrap(),
            Entry::Type { name, kind } => {
                write::metric_type(&mut out, name, kind).unwrap();
                family = Some((name.to_string(), kind));
            }
            Entry::Sample(s) => {
                let labels: Vec<(String, String)> = s
                    .labels()
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.unescaped().into_owned()))
                    .collect();
                let counter_like = matches!(&family, Some((_, MetricType::Counter | MetricType::Histogram)));
                let value = if counter_like {
                    s.value() + bump(s.name(), &labels)
                } else {
                    s.value()
                };
                write::sample(&mut out, s.name(), &labels, value, None).unwrap();
            }
            _ => {}
        }
    }
    out
}

#[test]
fn data_parallel_spec_decode_page_per_engine_and_summed() {
    let dir = data::dir();
    let vllm = dir.join("vllm");
    let expected: Value = serde_json::from_str(&data::read(
        &vllm.join("vllm-0.33-v1-dp2-apiserver2-specdecode.expected.json"),
    ))
    .unwrap();
    let want = |key: &str| expected[key].as_f64().unwrap_or_else(|| panic!("{key}"));
    let page = data::read(&vllm.join("vllm-0.33-v1-dp2-apiserver2-specdecode.prom"));
    let engine =
        |labels: &[(String, String)]| labels.iter().find(|(k, _)| k == "engine").map(|(_, v)| v.clone());
    // Known increments over 10 s: engine 0 generates 1200 tokens, engine 1 2500.
    let second = advance(&page, |name, labels| match (name, engine(labels).as_deref()) {
        ("vllm:generation_tokens_total", Some("0")) => 1200.0,
        ("vllm:generation_tokens_total", Some("1")) => 2500.0,
        ("vllm:spec_decode_num_drafts_total", Some("0")) => 300.0,
        ("vllm:spec_decode_num_accepted_tokens_total", Some("0")) => 450.0,
        _ => 0.0,
    });
    let window = TimeDelta::seconds(10);
    let (a, b) = (t0(), t0() + window);
    let mut tracker = Tracker::new([]);
    assert_eq!(tracker.ingest(&page, a).unwrap().bad_lines, 0);
    assert_eq!(tracker.ingest(&second, b).unwrap().bad_lines, 0);

    let rate = |name: &str| Query::new(&sel(name), Estimator::WindowRate).window(window);
    let last = |s: &TrackedSeries| s.last_value();
    let per_engine = tracker
        .evaluate(&rate("vllm:generation_tokens_total").by(["engine"]))
        .unwrap();
    assert_eq!(
        per_engine
            .groups
            .iter()
            .map(|g| (g.label("engine").unwrap(), g.value.clone().unwrap()))
            .collect::<Vec<_>>(),
        [("0", 120.0), ("1", 250.0)]
    );
    assert_eq!(
        value(tracker.evaluate(&rate("vllm:generation_tokens_total")), "sum"),
        370.0
    );
    let engine0 = |name: &str| {
        let answer = tracker.evaluate(&rate(name).by(["engine"])).unwrap();
        answer.group(&["0"]).unwrap().value.clone().unwrap()
    };
    assert_eq!(
        1.0 + engine0("vllm:spec_decode_num_accepted_tokens_total")
            / engine0("vllm:spec_decode_num_drafts_total"),
        2.5,
        "engine 0 mean acceptance length (window)"
    );

    // Lifetime figures from the first scrape's values, as the expected file computes them.
    let mut first_only = Tracker::new([]);
    first_only.ingest(&page, a).unwrap();
    let by_engine = |name: &str| {
        let answer = first_only.evaluate(&newest(name).by(["engine"])).unwrap();
        answer
            .groups
            .iter()
            .map(|g| g.value.clone().unwrap())
            .collect::<Vec<f64>>()
    };
    let all = |name: &str| value(first_only.evaluate(&newest(name)), name);
    let accepted = by_engine("vllm:spec_decode_num_accepted_tokens_total");
    let draft_tokens = by_engine("vllm:spec_decode_num_draft_tokens_total");
    let drafts = by_engine("vllm:spec_decode_num_drafts_total");
    for e in 0..2 {
        close(
            accepted[e] / draft_tokens[e],
            want(&format!("engine{e}_acceptance_rate")),
            "acceptance rate",
        );
        close(
            1.0 + accepted[e] / drafts[e],
            want(&format!("engine{e}_mean_acceptance_length")),
            "acceptance length",
        );
        let per_pos = first_only
            .evaluate(
                &newest("vllm:spec_decode_num_accepted_tokens_per_pos_total").by(["engine", "position"]),
            )
            .unwrap()
            .groups;
        let wanted = expected[format!("engine{e}_per_pos_acceptance")]
            .as_array()
            .unwrap();
        for (pos, w) in wanted.iter().enumerate() {
            let g = per_pos
                .iter()
                .find(|g| {
                    g.label("engine") == Some(&e.to_string()) && g.label("position") == Some(&pos.to_string())
                })
                .unwrap();
            close(
                g.value.clone().unwrap() / drafts[e],
                w.as_f64().unwrap(),
                "per-position acceptance",
            );
        }
    }
    let total_accepted = all("vllm:spec_decode_num_accepted_tokens_total");
    close(
        total_accepted / all("vllm:spec_decode_num_draft_tokens_total"),
        want("all_engines_acceptance_rate"),
        "all acceptance",
    );
    close(
        1.0 + total_accepted / all("vllm:spec_decode_num_drafts_total"),
        want("all_engines_mean_acceptance_length"),
        "all length",
    );
    close(all("vllm:num_requests_running"), want("running_sum"), "running");
    close(all("vllm:num_requests_waiting"), want("waiting_sum"), "waiting");
    close(
        one(
            fold::avg_by(&first_only, &sel("vllm:kv_cache_usage_perc"), &[], last),
            "kv",
        ),
        want("kv_cache_usage_mean_of_engines"),
        "kv",
    );
    close(
        all("vllm:generation_tokens_total"),
        want("generation_tokens_total_sum"),
        "generation total",
    );
    let p95 = value(
        first_only.evaluate(&newest("vllm:time_to_first_token_seconds").quantile(0.95)),
        "p95",
    );
    close(
        p95,
        want("ttft_lifetime_p95_all_engines_s"),
        "ttft p95 all engines",
    );
}
