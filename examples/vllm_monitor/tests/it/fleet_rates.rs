//! The tracker at fleet scale: a Prometheus `/federate` page of 1,000 simulated vLLM
//! servers (393,000 series) from the generator the benches and the monitor's `--fleet` use,
//! checked against the rates the generator knows.

use chrono::{DateTime, TimeDelta};
use promrate::{Estimator, NoValue, Query, Selector, SeriesScope, Tracker};

use vllm_monitor::fleet::{self as generator, Fleet};

use crate::data;

const SERVERS: usize = 1_000;

/// A tracker as the monitor sets one up for a federation, fed `pages` scrapes 15 s apart.
fn tracked_fleet(fleet: &Fleet, start: DateTime<chrono::Utc>, pages: i64) -> Tracker {
    let mut tracker = Tracker::new([]);
    tracker.normalize_names(true).infer_counters(true);
    for n in 0..pages {
        let at = start + TimeDelta::seconds(15 * n);
        let report = tracker.ingest(&fleet.page(at.timestamp_millis()), at).unwrap();
        assert_eq!((report.bad_lines, report.refused), (0, 0));
        assert!(report.resets.is_empty(), "counters only grow");
    }
    tracker
}

#[test]
fn every_server_of_a_1000_server_federation_gets_its_known_rate() {
    let template = data::read(&data::dir().join(generator::TEMPLATE));
    let start = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
    let fleet = Fleet::new(&template, SERVERS, start.timestamp_millis());
    let tracker = tracked_fleet(&fleet, start, 3);
    assert_eq!(fleet.series(), 393_000, "one vLLM page has 393 vllm: series");
    // `_created` samples are the created times of their counters, not series of their own.
    let created = template
        .lines()
        .filter(|l| l.starts_with("vllm:") && l.split(['{', ' ']).next().unwrap().ends_with("_created"))
        .count();
    assert_eq!(tracker.len(), fleet.series() - created * SERVERS);
    let at = start + TimeDelta::seconds(30);
    let window = TimeDelta::seconds(60);
    let tokens = Selector::parse("vllm:generation_tokens_total").unwrap();
    let rate = Query::new(&tokens, Estimator::WindowRate).window(window).at(at);
    let per_instance = tracker.evaluate(&rate.clone().by(["instance"])).unwrap();
    assert_eq!(per_instance.groups.len(), SERVERS);
    let mut worst: f64 = 0.0;
    for (i, group) in per_instance.groups.iter().enumerate() {
        assert_eq!(group.label("instance"), Some(Fleet::instance(i).as_str()));
        let known = fleet.rate("vllm:generation_tokens_total", i);
        worst = worst.max((group.value.clone().unwrap() - known).abs() / known);
    }
    assert!(worst < 1e-9, "worst relative error {worst}");
    let total = tracker.evaluate(&rate).unwrap().value().unwrap();
    let known = fleet.total_rate("vllm:generation_tokens_total");
    assert!((total - known).abs() / known < 1e-9, "{total} against {known}");
    // Histograms: every counter grows by the same factor, so the window's mean latency
    // is the template's own sum / count, on every server.
    let e2e = Selector::parse("vllm:e2e_request_latency_seconds").unwrap();
    let increase = Query::new(&e2e, Estimator::WindowIncrease)
        .window(window)
        .at(at)
        .by(["instance"]);
    let means = tracker.evaluate(&increase.clone().mean()).unwrap();
    let template_mean = fleet.rate("vllm:e2e_request_latency_seconds_sum", 0)
        / fleet.rate("vllm:e2e_request_latency_seconds_count", 0);
    assert_eq!(means.groups.len(), SERVERS);
    assert!(means
        .groups
        .iter()
        .all(|g| (g.value.clone().unwrap() - template_mean).abs() < 1e-9 * template_mean));
    let p99 = tracker.evaluate(&increase.clone().quantile(0.99)).unwrap();
    assert_eq!(p99.groups.len(), SERVERS);
    // The same shape everywhere, scaled: the same quantile (up to rounding).
    let first = p99.groups[0].value.clone().unwrap();
    assert!(first.is_finite() && first > 0.0);
    assert!(p99
        .groups
        .iter()
        .all(|g| (g.value.clone().unwrap() - first).abs() <= 1e-9 * first));
    println!(
        "fleet: {} series of {SERVERS} servers, per-instance generation rates within {worst:e} of the generator's",
        tracker.len()
    );
}

#[test]
fn a_server_gone_from_the_federation_stops_counting_at_once() {
    let template = data::read(&data::dir().join(generator::TEMPLATE));
    let start = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
    let fleet = Fleet::new(&template, 20, start.timestamp_millis());
    let mut tracker = tracked_fleet(&fleet, start, 2);
    // Server 0 leaves the page: its lines are dropped from the next one.
    let at = start + TimeDelta::seconds(30);
    let page: String = fleet
        .page(at.timestamp_millis())
        .lines()
        .filter(|l| !l.contains(&Fleet::instance(0)))
        .map(|l| format!("{l}\n"))
        .collect();
    tracker.ingest(&page, at).unwrap();
    let tokens = Selector::parse("vllm:generation_tokens_total").unwrap();
    // The newest page's series count (the default): the server that left has no rate, and
    // says why; counted as PromQL counts, its old points still give one.
    let rate = Query::new(&tokens, Estimator::WindowRate)
        .window(TimeDelta::seconds(60))
        .by(["instance"]);
    let answer = tracker.evaluate(&rate).unwrap();
    assert_eq!(answer.groups.iter().filter(|g| g.value.is_ok()).count(), 19);
    let gone = answer.group(&[Fleet::instance(0).as_str()]).unwrap();
    assert!(
        matches!(gone.value, Err(NoValue::NotOnNewestPage { .. })),
        "{gone:?}"
    );
    let promql_like = tracker.evaluate(&rate.scope(SeriesScope::UntilStale)).unwrap();
    assert_eq!(promql_like.groups.iter().filter(|g| g.value.is_ok()).count(), 20);
}
