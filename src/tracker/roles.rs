//! Which role a sample plays in its family: a counter, a gauge, or a created time.

use crate::text::names::names_equal;
use crate::text::MetricType;

/// How a sample is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    Counter,
    Gauge,
    /// `<family>_created`: the created time of the family's counters with these labels.
    Created,
}

/// The role of `name` given the family declared by the last `# TYPE`.
pub(super) fn role(name: &str, family: Option<(&str, MetricType)>, normalize: bool) -> Role {
    // `x_created` is a created time, whether typed as part of its family (OpenMetrics) or
    // as a gauge family of its own (prometheus_client's text output).
    if name.ends_with("_created") {
        return Role::Created;
    }
    if let Some((family, kind)) = family {
        if let Some(suffix) = family_suffix(name, family, normalize) {
            return match (kind, suffix) {
                (MetricType::Counter, "" | "_total") => Role::Counter,
                (MetricType::Histogram, "_bucket" | "_count" | "_sum") => Role::Counter,
                (MetricType::Summary, "_count" | "_sum") => Role::Counter,
                _ => Role::Gauge,
            };
        }
    }
    // Untyped: go by the name, as dashboards do.
    if name.ends_with("_total") {
        Role::Counter
    } else {
        Role::Gauge
    }
}

/// The suffix of `name` after `family` (compared with normalization), if it has one.
fn family_suffix<'n>(name: &'n str, family: &str, normalize: bool) -> Option<&'n str> {
    let head = name.get(..family.len())?;
    names_equal(head, &[family], normalize).then(|| &name[family.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_by_family_and_name() {
        let counter = Some(("x", MetricType::Counter));
        let histogram = Some(("h", MetricType::Histogram));
        let summary = Some(("s", MetricType::Summary));
        let cases = [
            ("x_total", counter, Role::Counter),
            ("x", counter, Role::Counter),
            ("x_created", counter, Role::Created),
            ("h_bucket", histogram, Role::Counter),
            ("h_count", histogram, Role::Counter),
            ("h_sum", histogram, Role::Counter),
            ("s_count", summary, Role::Counter),
            ("s", summary, Role::Gauge),
            ("g", Some(("g", MetricType::Gauge)), Role::Gauge),
            ("u_total", None, Role::Counter),
            ("u", None, Role::Gauge),
            // A sample outside the last declared family goes by its name.
            ("other_total", counter, Role::Counter),
        ];
        for (name, family, want) in cases {
            assert_eq!(role(name, family, false), want, "{name} in {family:?}");
        }
        assert_eq!(
            role("vllm_x_total", Some(("vllm:x", MetricType::Counter)), true),
            Role::Counter
        );
        assert_eq!(
            role("vllm_x", Some(("vllm:x", MetricType::Counter)), false),
            Role::Gauge
        );
    }
}
