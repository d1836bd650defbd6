//! Writing metric families as `prometheus_client` does: HELP and TYPE, counters with their
//! `_created` gauges, histograms whose sums are exactly count × mean.

use std::f64::consts::PI;

use promrate::text::write::{self, GoFloat};
use promrate::MetricType;

pub(super) type LabelSet<'a> = &'a [(&'a str, &'a str)];

pub(super) fn family_header(p: &mut String, name: &str, help: &str, kind: MetricType) {
    write::help(p, name, help).expect("writing to a String");
    write::metric_type(p, name, kind).expect("writing to a String");
}

pub(super) fn gauge(p: &mut String, name: &str, help: &str, samples: &[(LabelSet<'_>, f64)]) {
    family_header(p, name, help, MetricType::Gauge);
    for (labels, value) in samples {
        write::sample(p, name, labels, *value, None).expect("writing to a String");
    }
}

/// A counter as prometheus_client prints it: `<name>_total`, then a `<name>_created`
/// gauge family when the process is single (multiprocess mode has none).
pub(super) fn counter(
    p: &mut String,
    name: &str,
    help: &str,
    samples: &[(LabelSet<'_>, f64)],
    created_unix: Option<f64>,
) {
    let total = format!("{name}_total");
    family_header(p, &total, help, MetricType::Counter);
    for (labels, value) in samples {
        write::sample(p, &total, labels, *value, None).expect("writing to a String");
    }
    if let Some(created) = created_unix {
        let created_name = format!("{name}_created");
        family_header(p, &created_name, help, MetricType::Gauge);
        for (labels, _) in samples {
            write::sample(p, &created_name, labels, created, None).expect("writing to a String");
        }
    }
}

/// A histogram of `count` observations with mean `mean` (the sum is exactly
/// `count × mean`), distributed log-logistically with shape `shape`; bucket counts are
/// whole and cumulative.
pub(super) struct Histogram<'a> {
    pub name: &'a str,
    pub help: &'a str,
    pub bounds: &'a [f64],
    pub labels: LabelSet<'a>,
    pub count: f64,
    pub mean: f64,
    pub shape: f64,
    /// The `_created` gauge family prometheus_client adds, when the process is single.
    pub created_unix: Option<f64>,
}

pub(super) fn histogram(p: &mut String, h: &Histogram<'_>) {
    family_header(p, h.name, h.help, MetricType::Histogram);
    let count = h.count.floor();
    // The mean of a log-logistic distribution is median × (π/shape) / sin(π/shape).
    let median = h.mean * (PI / h.shape).sin() / (PI / h.shape);
    let cdf = |x: f64| 1.0 / (1.0 + (x / median).powf(-h.shape));
    let bucket = format!("{}_bucket", h.name);
    for &le in h.bounds.iter().chain([f64::INFINITY].iter()) {
        let in_bucket = if le.is_infinite() {
            count
        } else {
            (count * cdf(le)).floor()
        };
        let le_text = GoFloat(le).to_string();
        // `le` among the labels in name order (as vLLM's page has it).
        let mut labels: Vec<(&str, &str)> = h.labels.to_vec();
        labels.push(("le", le_text.as_str()));
        labels.sort_by_key(|(name, _)| *name);
        write::sample(p, &bucket, &labels, in_bucket, None).expect("writing to a String");
    }
    write::sample(p, &format!("{}_count", h.name), h.labels, count, None).expect("writing to a String");
    write::sample(p, &format!("{}_sum", h.name), h.labels, count * h.mean, None)
        .expect("writing to a String");
    if let Some(created) = h.created_unix {
        let created_name = format!("{}_created", h.name);
        family_header(p, &created_name, h.help, MetricType::Gauge);
        write::sample(p, &created_name, h.labels, created, None).expect("writing to a String");
    }
}
