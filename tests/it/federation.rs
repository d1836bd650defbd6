//! The captured `/federate` answers of Prometheus and VictoriaMetrics, read by the tracker.
//! (The monitor reading a live federation is tested in its own crate,
//! examples/vllm_monitor/tests/it/federation.rs.)

/// The captured `/federate` answers of both engines: with `infer_counters`, every
/// `_total`, `_bucket`, `_count` and `_sum` series is a counter and the gauges stay gauges,
/// whether the page declares every family untyped (Prometheus) or declares nothing
/// (VictoriaMetrics); without it, Prometheus' declared `untyped` is taken at its word.
#[test]
fn captured_federation_pages_are_read_as_their_engines_meant_them() {
    let dir = crate::data::dir().join("federate");
    let at = chrono::DateTime::from_timestamp(1_900_000_000, 0).unwrap();
    for name in [
        "prometheus-2.42-federate.prom",
        "victoriametrics-1.79-federate.prom",
    ] {
        let page = crate::data::read(&dir.join(name));
        let mut tracker = promrate::Tracker::new([]);
        tracker.normalize_names(true).infer_counters(true);
        let report = tracker.ingest(&page, at).unwrap();
        assert_eq!((report.bad_lines, report.refused), (0, 0), "{name}");
        for series in tracker.series() {
            let counter = ["_total", "_bucket", "_count", "_sum"]
                .iter()
                .any(|suffix| series.name().ends_with(suffix));
            assert_eq!(series.counter().is_some(), counter, "{name}: {}", series.name());
        }
        let instances: std::collections::BTreeSet<&str> =
            tracker.series().filter_map(|s| s.label("instance")).collect();
        println!(
            "{name}: {} series from {} instance(s)",
            tracker.len(),
            instances.len()
        );
        assert!(tracker.len() > 100);
    }
    let page = crate::data::read(&dir.join("prometheus-2.42-federate.prom"));
    let mut plain = promrate::Tracker::new([]);
    plain.ingest(&page, at).unwrap();
    assert!(plain.series().all(|s| s.counter().is_none()));
}
