//! Each catalogue entry against its server's page.

use chrono::DateTime;

use super::*;

/// A page of the repository's `tests/data`.
fn data(path: &str) -> String {
    let path = format!("{}/../../tests/data/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A server's pages (paths under `tests/data`), and the names its entry may give that
/// those pages lack, each with why.
type Pages = (
    &'static str,
    &'static [&'static str],
    &'static [(&'static str, &'static str)],
);

/// Each server's pages (SGLang's and TGI's are real captures: older, or cut).
const PAGES: &[Pages] = &[
    (
        "vllm",
        &[
            "vllm/vllm-0.33-v1-single-t0.prom",
            "vllm/vllm-0.33-v1-dp2-apiserver2-specdecode.prom",
        ],
        &[],
    ),
    (
        "sglang",
        &["vllm/sglang-datadog-0.5.10.prom"],
        &[
            (
                "sglang:num_retracted_requests_total",
                "newer than 0.5.10: sgl-project/sglang python/sglang/srt/metrics/collector.py @ 00ae9c15",
            ),
            (
                "sglang:num_aborted_requests_total",
                "newer than 0.5.10: the same collector.py @ 00ae9c15",
            ),
        ],
    ),
    (
        "tgi",
        &["vllm/tgi-datadog-excerpt.prom"],
        &[
            (
                "tgi_request_generated_tokens_sum",
                "left out of the excerpt (SOURCES.md)",
            ),
            (
                "tgi_request_generated_tokens",
                "left out of the excerpt (SOURCES.md)",
            ),
            (
                "tgi_request_input_length_sum",
                "left out of the excerpt (SOURCES.md)",
            ),
            ("tgi_request_input_length", "left out of the excerpt (SOURCES.md)"),
            (
                "tgi_request_mean_time_per_token_duration",
                "left out of the excerpt (SOURCES.md)",
            ),
        ],
    ),
    ("llamacpp", &["engines/llamacpp.prom"], &[]),
    ("trtllm", &["engines/trtllm.prom"], &[]),
    ("lmdeploy", &["engines/lmdeploy.prom"], &[]),
    ("dynamo", &["engines/dynamo.prom"], &[]),
    ("ray", &["engines/ray-serve-llm.prom"], &[]),
];

/// Each catalogued server is recognised from its own pages, and every metric its entry
/// names is on them (a misspelt name in the catalogue would be a figure that silently never
/// appears), with the label it requires; a KV size from labels has those labels.
#[test]
fn every_name_in_the_catalogue_is_on_its_servers_page() {
    for engine in ENGINES {
        let (_, files, missing) = PAGES
            .iter()
            .find(|(kind, _, _)| *kind == engine.kind)
            .unwrap_or_else(|| panic!("no page for {}", engine.title));
        let mut trackers = Vec::new();
        for file in *files {
            let mut tracker = Tracker::new([]);
            tracker.normalize_names(true);
            tracker
                .ingest(&data(file), DateTime::from_timestamp(1_764_000_000, 0).unwrap())
                .unwrap();
            assert_eq!(
                Engine::detect(&tracker).map(|e| e.kind),
                Some(engine.kind),
                "{file}"
            );
            trackers.push(tracker);
        }
        let series = || trackers.iter().flat_map(|t| t.series());
        let on_page = |name: &str, only: Option<(&str, &str)>| {
            series().any(|s| {
                (s.name() == name || s.name().strip_suffix("_bucket") == Some(name))
                    && only.is_none_or(|(label, value)| s.label(label) == Some(value))
            })
        };
        let mut named: Vec<(&str, Option<(&str, &str)>)> = fields(engine)
            .into_iter()
            .flatten()
            .map(|m| (m.name, m.only))
            .collect();
        for size in engine.kv_size {
            named.extend(size.names().into_iter().map(|n| (n, None)));
            if let KvSize::InfoLabels {
                info,
                tokens,
                blocks,
                block_size,
            } = size
            {
                let has = |label: &str| series().any(|s| s.name() == *info && s.label(label).is_some());
                assert!(has(tokens) || (has(blocks) && has(block_size)), "{info}");
            }
        }
        for (name, only) in named {
            let excused = missing.iter().any(|(n, _)| *n == name);
            assert_eq!(
                on_page(name, only),
                !excused,
                "{}: {name} {only:?} on {files:?}",
                engine.title
            );
        }
    }
}

/// Every old vLLM name of the alias table is found on the page of the vLLM that wrote it,
/// and read there for its figure: the v0.7 page gives KV usage, inter-token latency and the
/// queue time by their old names (each name a page can have, and no other).
#[test]
fn old_vllm_names_are_read_on_old_pages() {
    let mut tracker = Tracker::new([]);
    tracker.normalize_names(true);
    tracker
        .ingest(
            &data("vllm/vllm-v0-0.7-multiproc.prom"),
            DateTime::from_timestamp(1_764_000_000, 0).unwrap(),
        )
        .unwrap();
    let has = |name: &str| {
        tracker
            .series()
            .any(|s| s.name() == name || s.name().strip_suffix("_bucket") == Some(name))
    };
    let vllm = Engine::named("vllm").unwrap();
    for (figure, current, read_as) in [
        ("kv", vllm.kv_usage, "vllm:gpu_cache_usage_perc"),
        ("itl", vllm.itl, "vllm:time_per_output_token_seconds"),
        ("queue", vllm.queue_time, "vllm:request_queue_time_seconds"),
    ] {
        let alternatives: Vec<Metric> = current
            .iter()
            .flat_map(|m| std::iter::once(*m).chain(aliases::older_names(m)))
            .collect();
        let read = alternatives.iter().find(|m| has(m.name)).map(|m| m.name);
        assert_eq!(read, Some(read_as), "{figure}");
    }
    assert!(has("vllm:gpu_prefix_cache_hit_rate"));
    let gauges = replaced_ratio_gauges(|e| e.prefix_hits);
    assert_eq!(gauges[0].name, "vllm:gpu_prefix_cache_hit_rate");
}

/// A server counting tokens when a request ends has no EWMA and no PromQL rate of its
/// tokens in any row: the totals and every `--by` group, prompt and generated alike.
#[test]
fn request_end_servers_have_no_sawtooth_rates_in_any_row() {
    let text = data("engines/llamacpp.prom");
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
        retired: None,
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
