//! Each catalogue entry against its server's page.

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
