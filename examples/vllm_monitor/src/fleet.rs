//! A fleet of simulated vLLM servers as a Prometheus 2.x `/federate` page: the `vllm:`
//! samples of a real vLLM page, repeated for N instances, every family declared `untyped`
//! and every sample carrying the timestamp of its instance's scrape, as federation writes
//! them. Counters move at rates known exactly, so a reader's figures can be checked.
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
}

/// The fleet: a template page's `vllm:` samples served by `instances` servers.
pub struct Fleet {
    lines: Vec<Line>,
    instances: usize,
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
                    });
                }
                _ => {}
            }
        }
        // Federation writes a name's samples together, sorted by their labels.
        lines.sort_by(|a, b| (&a.name, &a.labels).cmp(&(&b.name, &b.labels)));
        Fleet {
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

    /// How fast server `i`'s counters grow: each counter gains this fraction of its
    /// template value per second (between 0.1% and 0.4%, different per server).
    fn growth_per_s(i: usize) -> f64 {
        0.001 * (1.0 + (i % 4) as f64)
    }

    /// The exact rate of counter `name` (summed over its label sets) on server `i`.
    pub fn rate(&self, name: &str, i: usize) -> f64 {
        self.lines
            .iter()
            .filter(|l| l.name == name && l.counter)
            .map(|l| l.value * Self::growth_per_s(i))
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
    fn value(line: &Line, i: usize, start_ms: i64, ts_ms: i64) -> f64 {
        if !line.counter {
            return line.value;
        }
        let elapsed_s = (ts_ms - start_ms) as f64 / 1000.0;
        line.value * (1.0 + Self::growth_per_s(i) * elapsed_s)
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
                let value = Self::value(line, i, self.start_ms, ts);
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
