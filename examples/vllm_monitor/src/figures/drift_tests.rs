//! vLLM's renamed metrics, read on the pages of three releases: a late V0 (0.7), a real
//! 0.32 and a 0.33. Each figure is found on each page that has its family, under whatever
//! name that release gave it (`engines/aliases.rs`), and is absent, said as not exposed,
//! where the release has no such family.

use std::io::Read as _;

use chrono::{DateTime, TimeDelta, Utc};
use promrate::{Tracker, WindowRule};

use super::{compute, Figures, Source};

fn data(path: &str) -> String {
    let path = format!("{}/../../tests/data/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// `page` ten seconds later: every counter (`_total`, `_bucket`, `_count`, `_sum`) doubled,
/// gauges as they were.
fn doubled(page: &str) -> String {
    page.lines()
        .map(|line| {
            let name = line.split(['{', ' ']).next().unwrap_or("");
            let counter = ["_total", "_bucket", "_count", "_sum"]
                .iter()
                .any(|s| name.ends_with(s));
            match line.rsplit_once(' ') {
                Some((head, value)) if counter && !line.starts_with('#') => {
                    format!("{head} {}\n", 2.0 * value.parse::<f64>().unwrap())
                }
                _ => format!("{line}\n"),
            }
        })
        .collect()
}

/// Two scrapes, ten seconds apart, of the real vLLM 0.32 under load (its recording).
fn real_032() -> [String; 2] {
    let path = format!(
        "{}/../../tests/data/realservers/vllm-0.32-cpu-restart/scrapes.jsonl.gz",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let bodies: Vec<String> = text
        .lines()
        .filter_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).ok()?;
            Some(v.get("body")?.as_str()?.to_string())
        })
        .collect();
    // Scrapes a second apart; the 21st and 31st page read are 10 s apart, under load.
    [bodies[20].clone(), bodies[30].clone()]
}

/// The figures of two pages ten seconds apart, over a 10 s window.
fn figures(pages: [String; 2]) -> Figures {
    let t0 = DateTime::<Utc>::from_timestamp(1_800_000_000, 0).unwrap();
    let mut tracker = Tracker::new([]);
    tracker.normalize_names(true).infer_counters(true);
    for (k, page) in pages.iter().enumerate() {
        tracker
            .ingest(page, t0 + TimeDelta::seconds(10 * k as i64))
            .unwrap();
    }
    let sources = [Source {
        tracker: &tracker,
        at: t0 + TimeDelta::seconds(10),
        url: "vllm",
        retired: None,
    }];
    let w = WindowRule::new(TimeDelta::seconds(10)).slack(TimeDelta::seconds(1));
    compute(&sources, w, None).0
}

/// Which figures a page gave, by name.
fn found(f: &Figures) -> Vec<&'static str> {
    let c = &f.capacity;
    [
        ("kv_cache_usage", f.in_flight.kv_usage.is_some()),
        ("kv_total_tokens", c.kv_total_tokens.is_some()),
        ("kv_used_tokens", c.kv_used_tokens.is_some()),
        ("ttft", f.ttft.p50.is_some()),
        ("itl", f.itl.p50.is_some()),
        ("e2e", f.e2e.p50.is_some()),
        ("queue", f.phases.queue.is_some()),
        ("prefill", f.phases.prefill.is_some()),
        ("decode", f.phases.decode.is_some()),
        ("inference", f.phases.inference.is_some()),
        ("preemptions_per_s", c.preemptions_per_s.is_some()),
        ("aborts_per_s", c.aborts_per_s.is_some()),
        (
            "admission_rejections_per_s",
            c.admission_rejections_per_s.is_some(),
        ),
        ("waiting_by_reason", !c.waiting_by_reason.is_empty()),
        ("engine_sleep_state", c.sleep_state.is_some()),
        ("prompt_by_source", f.prompt_parts.sources.is_some()),
        ("prefix_cache_hit_rate", f.in_flight.prefix_hit_rate.is_some()),
    ]
    .into_iter()
    .filter_map(|(name, some)| some.then_some(name))
    .collect()
}

const EVERY_FIGURE: [&str; 17] = [
    "kv_cache_usage",
    "kv_total_tokens",
    "kv_used_tokens",
    "ttft",
    "itl",
    "e2e",
    "queue",
    "prefill",
    "decode",
    "inference",
    "preemptions_per_s",
    "aborts_per_s",
    "admission_rejections_per_s",
    "waiting_by_reason",
    "engine_sleep_state",
    "prompt_by_source",
    "prefix_cache_hit_rate",
];

/// v0.7 (KV usage as `gpu_cache_usage_perc`, ITL as `time_per_output_token_seconds`, the
/// KV size as blocks × block size, the prefix cache off: its gauge reads -1), the real
/// 0.32 and 0.33 (the size in tokens): every figure each page has, and what it has not.
#[test]
fn each_release_gives_the_figures_its_page_has() {
    let v07 = data("vllm/vllm-v0-0.7-multiproc.prom");
    let f = figures([v07.clone(), doubled(&v07)]);
    assert_eq!(
        found(&f),
        [
            "kv_cache_usage",
            "kv_total_tokens",
            "kv_used_tokens",
            "ttft",
            "itl",
            "e2e",
            "queue",
            "prefill",
            "decode",
            "inference",
            "preemptions_per_s",
            "aborts_per_s",
        ]
    );
    assert_eq!(f.capacity.kv_total_tokens, Some(27_264.0 * 16.0));
    assert_eq!(
        f.capacity.not_exposed,
        [
            "admission_rejections_per_s",
            "waiting_by_reason",
            "engine_sleep_state",
            "spec_decode"
        ]
    );
    // The old ITL histogram read as ITL: the window's increase is the page's counts.
    assert!(
        f.itl.p50.unwrap() > 0.025 && f.itl.p50.unwrap() <= 0.05,
        "{:?}",
        f.itl
    );

    let f = figures(real_032());
    assert_eq!(found(&f), EVERY_FIGURE);
    assert_eq!(f.capacity.kv_total_tokens, Some(524_288.0), "4096 blocks of 128");
    // vLLM registers speculative decoding's counters only when it is configured.
    assert_eq!(f.capacity.not_exposed, ["spec_decode"]);
    let specdecode = data("vllm/vllm-0.33-v1-dp2-apiserver2-specdecode.prom");
    let f = figures([specdecode.clone(), specdecode]);
    assert!(!f.capacity.not_exposed.contains(&"spec_decode"));

    let f = figures([
        data("vllm/vllm-0.33-v1-single-t0.prom"),
        data("vllm/vllm-0.33-v1-single-t10.prom"),
    ]);
    assert_eq!(found(&f), EVERY_FIGURE);
    assert_eq!(f.capacity.kv_total_tokens, Some(825_232.0));
    let used = f.capacity.kv_used_tokens.unwrap();
    assert!((used - f.in_flight.kv_usage.unwrap() * 825_232.0).abs() < 1e-6);
}
