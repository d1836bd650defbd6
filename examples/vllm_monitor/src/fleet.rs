//! A fleet of simulated vLLM servers as a Prometheus 2.x `/federate` page: the `vllm:`
//! samples of a real vLLM page, repeated for N instances, every family declared `untyped`
//! and every sample carrying the timestamp of its instance's scrape, as federation writes
//! them. Counters move at rates known exactly, so a reader's figures can be checked.
//!
//! Each instance is a consistent server: it runs a share of the template's requests (its
//! load, from 0.4 to 1.6 of the template's running count), each as long as the template's
//! mean end-to-end latency, so by Little's law it finishes running ÷ latency requests per
//! second; every counter grows by that many of the template's requests' worth per second
//! (tokens, prompt tokens, histogram counts and sums alike), so per-request figures stay
//! the template's. The fleet's totals are the sums of its instances'.
//!
//! Used by the fleet bench, the scale tests and `vllm_monitor --serve ADDR --fleet N`.
#![allow(dead_code)]

use promrate::text::write;

/// One `vllm:` sample of the template page.
struct Line {
    name: String,
    /// The template's labels, unescaped, sorted by name.
    labels: Vec<(String, String)>,
    value: f64,
    counter: bool,
    /// A gauge that follows the instance's load (running requests, KV-cache usage).
    load: bool,
}

/// The gauges an instance's load scales: what it runs, and the KV cache that holds it.
const LOAD_GAUGES: [&str; 3] = [
    "vllm:num_requests_running",
    "vllm:kv_cache_usage_perc",
    "vllm:gpu_cache_usage_perc",
];

/// The fleet: a template page's `vllm:` samples served by `instances` servers.
pub struct Fleet {
    lines: Vec<Line>,
    instances: usize,
    /// The template's requests running, finished (its e2e histogram's count), and their
    /// mean end-to-end latency.
    running: f64,
    requests: f64,
    latency_s: f64,
    /// The time every counter had its template value (milliseconds).
    start_ms: i64,
    /// The spacing of the instances' scrape times within one scrape interval.
    scrape_interval_ms: i64,
}

/// The template the fleet's servers repeat (vLLM 0.33, one engine).
pub const TEMPLATE: &str = "vllm/vllm-0.33-v1-single-t0.prom";

impl Fleet {
    /// The `vllm:` samples of `template` (a vLLM page), for `instances` servers whose
    /// counters hold their template values at `start_ms`.
    pub fn new(template: &str, instances: usize, start_ms: i64) -> Fleet {
        let mut lines = Vec::new();
        let mut family: Option<(String, promrate::MetricType)> = None;
        for entry in promrate::parse(template) {
            match entry.expect("the template parses") {
                promrate::Entry::Type { name, kind } => family = Some((name.to_string(), kind)),
                promrate::Entry::Sample(s) if s.name().starts_with("vllm:") => {
                    let kind = family
                        .as_ref()
                        .filter(|(f, _)| s.name().starts_with(f.as_str()))
                        .map(|(_, k)| *k);
                    let counter = matches!(
                        kind,
                        Some(
                            promrate::MetricType::Counter
                                | promrate::MetricType::Histogram
                                | promrate::MetricType::Summary
                        )
                    ) && !s.name().ends_with("_created");
                    let mut labels: Vec<(String, String)> = s
                        .labels()
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.unescaped().into_owned()))
                        .collect();
                    labels.sort();
                    lines.push(Line {
                        name: s.name().to_string(),
                        labels,
                        value: s.value(),
                        counter,
                        load: LOAD_GAUGES.contains(&s.name()),
                    });
                }
                _ => {}
            }
        }
        // Federation writes a name's samples together, sorted by their labels.
        lines.sort_by(|a, b| (&a.name, &a.labels).cmp(&(&b.name, &b.labels)));
        let sum = |name: &str| -> f64 { lines.iter().filter(|l| l.name == name).map(|l| l.value).sum() };
        let requests = sum("vllm:e2e_request_latency_seconds_count");
        let latency_s = sum("vllm:e2e_request_latency_seconds_sum") / requests;
        Fleet {
            running: sum("vllm:num_requests_running"),
            requests,
            latency_s,
            lines,
            instances,
            start_ms,
            scrape_interval_ms: 1_000,
        }
    }

    /// Series on one page.
    pub fn series(&self) -> usize {
        self.lines.len() * self.instances
    }

    /// Servers in the fleet.
    pub fn instances(&self) -> usize {
        self.instances
    }

    /// The `instance` label of server `i`.
    pub fn instance(i: usize) -> String {
        format!("vllm-{i:05}:8000")
    }

    /// Server `i`'s load: its running requests as a share of the template's (0.4, 0.8,
    /// 1.2 or 1.6; 1 on average over four servers).
    pub fn load(i: usize) -> f64 {
        0.4 * (1.0 + (i % 4) as f64)
    }

    /// Requests running on server `i`.
    pub fn running(&self, i: usize) -> f64 {
        self.running * Self::load(i)
    }

    /// The template's mean end-to-end latency: every server's.
    pub fn latency_s(&self) -> f64 {
        self.latency_s
    }

    /// Requests server `i` finishes per second: by Little's law, running ÷ latency.
    pub fn requests_per_s(&self, i: usize) -> f64 {
        self.running(i) / self.latency_s
    }

    /// How fast server `i`'s counters grow: each gains its template value's share of one
    /// request per finished request (a template without requests, or without running ones,
    /// grows by 0.1% of its values per second per unit of load).
    fn growth_per_s(&self, i: usize) -> f64 {
        let per_request = self.requests_per_s(i) / self.requests;
        if per_request.is_finite() && per_request > 0.0 {
            per_request
        } else {
            0.001 * Self::load(i)
        }
    }

    /// The exact rate of counter `name` (summed over its label sets) on server `i`.
    pub fn rate(&self, name: &str, i: usize) -> f64 {
        self.lines
            .iter()
            .filter(|l| l.name == name && l.counter)
            .map(|l| l.value * self.growth_per_s(i))
            .sum()
    }

    /// The exact rate of counter `name` over the whole fleet.
    pub fn total_rate(&self, name: &str) -> f64 {
        (0..self.instances).map(|i| self.rate(name, i)).sum()
    }

    /// When server `i` was last scraped by `at_ms`: each server at its own offset within
    /// the scrape interval, as a federation's targets are.
    pub fn scraped_at(&self, i: usize, at_ms: i64) -> i64 {
        let offset = (i as i64 * 7_919) % self.scrape_interval_ms;
        at_ms - offset
    }

    /// The value of a line on server `i` at `ts_ms`.
    fn value(&self, line: &Line, i: usize, ts_ms: i64) -> f64 {
        if line.load {
            // A usage fraction stays one.
            let value = line.value * Self::load(i);
            return if line.name.ends_with("_perc") {
                value.min(1.0)
            } else {
                value
            };
        }
        if !line.counter {
            return line.value;
        }
        let elapsed_s = (ts_ms - self.start_ms) as f64 / 1000.0;
        line.value * (1.0 + self.growth_per_s(i) * elapsed_s)
    }

    /// Writes the `/federate` page as it stands at `at_ms` into `out` (cleared first).
    pub fn page_into(&self, at_ms: i64, out: &mut String) {
        out.clear();
        out.reserve(self.series() * 160);
        let instances: Vec<String> = (0..self.instances).map(Self::instance).collect();
        let mut labels: Vec<(&str, &str)> = Vec::new();
        let mut previous: Option<&str> = None;
        for line in &self.lines {
            if previous != Some(line.name.as_str()) {
                let _ = write::metric_type(out, &line.name, promrate::MetricType::Unknown);
                previous = Some(&line.name);
            }
            for (i, instance) in instances.iter().enumerate() {
                let ts = self.scraped_at(i, at_ms);
                labels.clear();
                labels.extend(line.labels.iter().map(|(k, v)| (k.as_str(), v.as_str())));
                labels.extend([("instance", instance.as_str()), ("job", "vllm")]);
                // Federation writes labels sorted by name.
                labels.sort_unstable_by_key(|(k, _)| *k);
                let value = self.value(line, i, ts);
                let _ = write::sample(out, &line.name, &labels, value, Some(ts));
            }
        }
    }

    /// The page at `at_ms`.
    pub fn page(&self, at_ms: i64) -> String {
        let mut out = String::new();
        self.page_into(at_ms, &mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, TimeDelta, Utc};

    use super::Fleet;
    use crate::figures::{Figures, Load};
    use crate::http::Page;
    use crate::snapshot::Snapshot;
    use crate::target::Target;

    fn within(got: Option<f64>, want: f64, tolerance: f64, what: &str) {
        let got = got.unwrap_or_else(|| panic!("{what}: no figure"));
        assert!(
            (got - want).abs() <= tolerance * want.abs(),
            "{what}: {got}, want {want}"
        );
    }

    /// The fleet `--serve --fleet 8` serves (its template the simulated server's page), read
    /// by the monitor every 2 s as a federation, 30 s windows by instance: each instance
    /// finishes the requests Little's law gives (running ÷ mean latency, its load's share:
    /// 0.98 to 3.94 req/s), its figures say so and call it steady; the totals are the sums
    /// of the instances'.
    #[test]
    fn every_instance_obeys_littles_law_and_the_totals_are_the_sums() {
        let template = crate::simulator::Simulation::new(None).render_at(0.0);
        let start = DateTime::<Utc>::from_timestamp(1_800_000_000, 0).unwrap();
        let fleet = Fleet::new(&template, 8, start.timestamp_millis());
        assert!((fleet.latency_s() - crate::simulator::LATENCY_S).abs() < 1e-9);
        let mut target = Target::new("http://127.0.0.1:9090/federate".into(), TimeDelta::minutes(5));
        let mut at = start;
        for k in 0..=20 {
            at = start + TimeDelta::seconds(2 * k);
            let page = Page {
                body: fleet.page(at.timestamp_millis()),
                format: promrate::Format::PrometheusText,
                content_type: None,
            };
            target.ingest(at, Ok(page));
        }
        let targets = [target];
        let snapshot = Snapshot::at(&targets, TimeDelta::seconds(30), at, Some("instance"), None, 40.0);
        let (_, groups) = snapshot.groups.as_ref().unwrap();
        assert_eq!(groups.len(), 8);
        let mut known_total = 0.0;
        for (i, (name, f)) in groups.iter().enumerate() {
            assert_eq!(*name, Fleet::instance(i));
            let known = fleet.requests_per_s(i);
            known_total += known;
            within(f.in_flight.running, fleet.running(i), 1e-9, "running");
            within(f.requests.finished, known, 0.005, "finished req/s");
            // Little's law, from the monitor's own figures: mean running ÷ mean latency.
            within(f.requests.steady_rate, known, 0.005, "running / latency");
            within(
                f.requests.finished,
                f.requests.steady_rate.unwrap(),
                0.005,
                "finished against Little's law",
            );
            assert_eq!(f.load, Load::Steady, "{name}");
        }
        let t = &snapshot.figures;
        let sum =
            |figure: fn(&Figures) -> Option<f64>| groups.iter().map(|(_, f)| figure(f).unwrap()).sum::<f64>();
        within(
            t.requests.finished,
            sum(|f| f.requests.finished),
            1e-9,
            "total finished",
        );
        within(
            t.in_flight.running,
            sum(|f| f.in_flight.running),
            1e-9,
            "total running",
        );
        within(
            t.generation.window,
            sum(|f| f.generation.window),
            1e-9,
            "total tok/s",
        );
        within(
            t.requests.steady_rate,
            sum(|f| f.requests.steady_rate),
            1e-6,
            "total Little's law",
        );
        within(
            t.requests.finished,
            known_total,
            0.005,
            "total finished against the fleet's",
        );
        assert_eq!(t.load, Load::Steady);
        // 200 running on average, 81.25 s each: 2.46 req/s per instance on average.
        within(Some(known_total / 8.0), 200.0 / 81.25, 1e-9, "mean per instance");
    }
}
