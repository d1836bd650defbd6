//! Which role a sample plays in its family: a counter, a gauge, or a created time.

use std::collections::HashSet;
use std::hash::{BuildHasher, Hasher};

use crate::text::names::names_equal;
use crate::text::{MetricType, Sample};

/// How a sample is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    Counter,
    Gauge,
    /// `<family>_created`: the created time of the family's counters with these labels.
    Created,
}

/// How samples are read beyond their `# TYPE` line.
#[derive(Debug, Clone, Copy)]
pub(super) struct Rules<'a> {
    /// ':' and '_' are one character in names.
    pub normalize: bool,
    /// `Some` when untyped families are read by their names (`Tracker::infer_counters`):
    /// the histogram and summary families seen so far.
    pub known: Option<&'a KnownFamilies>,
}

/// Histogram and summary families seen in untyped form (a `_bucket` series with `le`, or a
/// series with `quantile`), by a hash of their normalized base name: looking a name up
/// allocates nothing, and a collision at worst reads one more `_count`/`_sum` as a counter.
#[derive(Debug, Clone, Default)]
pub(super) struct KnownFamilies {
    keys: HashSet<u64>,
    /// The keys the page being read added, taken back if it is refused
    /// ([`KnownFamilies::forget_page`]): a refused page changes nothing.
    page: Vec<u64>,
    hasher: std::hash::RandomState,
}

impl KnownFamilies {
    fn key(&self, base: &str, normalize: bool) -> u64 {
        let mut h = self.hasher.build_hasher();
        for &b in base.as_bytes() {
            h.write_u8(if normalize && b == b':' { b'_' } else { b });
        }
        h.finish()
    }

    /// Learns the family a sample shows to be a histogram or summary, if it does.
    pub fn learn(&mut self, sample: &Sample<'_>, normalize: bool) {
        let labels = sample.labels();
        let base = match sample.name().strip_suffix("_bucket") {
            Some(base) if labels.has_name(b"le") => base,
            _ if labels.has_name(b"quantile") => sample.name(),
            _ => return,
        };
        let key = self.key(base, normalize);
        if self.keys.insert(key) {
            self.page.push(key);
        }
    }

    /// Keeps what the page just read taught.
    pub fn keep_page(&mut self) {
        self.page.clear();
    }

    /// Forgets what the page just read taught (it was refused).
    pub fn forget_page(&mut self) {
        for key in self.page.drain(..) {
            self.keys.remove(&key);
        }
    }

    fn contains(&self, base: &str, normalize: bool) -> bool {
        self.keys.contains(&self.key(base, normalize))
    }

    /// Whether `name` is the `_count` or `_sum` of a family known to be a histogram or
    /// summary.
    pub fn has_family_of(&self, name: &str, normalize: bool) -> bool {
        let base = name.strip_suffix("_count").or_else(|| name.strip_suffix("_sum"));
        base.is_some_and(|base| self.contains(base, normalize))
    }
}

/// The role of `sample` given the family declared by the last `# TYPE`.
pub(super) fn role(sample: &Sample<'_>, family: Option<(&str, MetricType)>, rules: Rules<'_>) -> Role {
    let name = sample.name();
    // `x_created` is a created time, whether typed as part of its family (OpenMetrics) or
    // as a gauge family of its own (prometheus_client's text output).
    if name.ends_with("_created") {
        return Role::Created;
    }
    if let Some((family, kind)) = family {
        if let Some(suffix) = family_suffix(name, family, rules.normalize) {
            let typed = match (kind, suffix) {
                (MetricType::Counter, "" | "_total") => Some(Role::Counter),
                (MetricType::Histogram, "_bucket" | "_count" | "_sum") => Some(Role::Counter),
                (MetricType::Summary, "_count" | "_sum") => Some(Role::Counter),
                // Declared untyped: read by name only when asked to.
                (MetricType::Unknown, _) if rules.known.is_some() => None,
                _ => Some(Role::Gauge),
            };
            if let Some(role) = typed {
                return role;
            }
        }
    }
    by_name(sample, rules)
}

/// Whether an untyped series named `name` is a counter only if its family is a histogram or
/// summary (`_count`, `_sum`).
pub(super) fn may_belong_to_a_family(name: &str) -> bool {
    name.ends_with("_count") || name.ends_with("_sum")
}

/// Untyped: go by the name, as dashboards and PromQL users do.
fn by_name(sample: &Sample<'_>, rules: Rules<'_>) -> Role {
    let name = sample.name();
    if name.ends_with("_total") {
        return Role::Counter;
    }
    if let Some(known) = rules.known {
        if name.ends_with("_bucket") && sample.labels().has_name(b"le") {
            return Role::Counter;
        }
        if known.has_family_of(name, rules.normalize) {
            return Role::Counter;
        }
    }
    Role::Gauge
}

/// The suffix of `name` after `family` (compared with normalization), if it has one.
fn family_suffix<'n>(name: &'n str, family: &str, normalize: bool) -> Option<&'n str> {
    let head = name.get(..family.len())?;
    names_equal(head, &[family], normalize).then(|| &name[family.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(line: &str) -> Sample<'_> {
        crate::parse(line).next().unwrap().unwrap().into_sample().unwrap()
    }

    const PLAIN: Rules<'static> = Rules {
        normalize: false,
        known: None,
    };

    #[test]
    fn roles_by_family_and_name() {
        let counter = Some(("x", MetricType::Counter));
        let histogram = Some(("h", MetricType::Histogram));
        let summary = Some(("s", MetricType::Summary));
        let cases = [
            ("x_total 1", counter, Role::Counter),
            ("x 1", counter, Role::Counter),
            ("x_created 1", counter, Role::Created),
            ("h_bucket{le=\"1\"} 1", histogram, Role::Counter),
            ("h_count 1", histogram, Role::Counter),
            ("h_sum 1", histogram, Role::Counter),
            ("s_count 1", summary, Role::Counter),
            ("s 1", summary, Role::Gauge),
            ("g 1", Some(("g", MetricType::Gauge)), Role::Gauge),
            ("u_total 1", None, Role::Counter),
            ("u 1", None, Role::Gauge),
            // Declared untyped: a gauge unless names are read.
            ("u_total 1", Some(("u_total", MetricType::Unknown)), Role::Gauge),
            // A sample outside the last declared family goes by its name.
            ("other_total 1", counter, Role::Counter),
        ];
        for (line, family, want) in cases {
            assert_eq!(role(&sample(line), family, PLAIN), want, "{line} in {family:?}");
        }
        let normalize = Rules {
            normalize: true,
            known: None,
        };
        let typed = Some(("vllm:x", MetricType::Counter));
        assert_eq!(role(&sample("vllm_x_total 1"), typed, normalize), Role::Counter);
        assert_eq!(role(&sample("vllm_x 1"), typed, PLAIN), Role::Gauge);
    }

    #[test]
    fn untyped_families_read_by_name_when_asked() {
        let mut known = KnownFamilies::default();
        known.learn(&sample("vllm:lat_bucket{le=\"0.5\"} 3"), true);
        known.learn(&sample("rpc{quantile=\"0.9\"} 3"), true);
        let infer = Rules {
            normalize: true,
            known: Some(&known),
        };
        let untyped = |name| Some((name, MetricType::Unknown));
        let cases = [
            ("vllm_gen_total 1", untyped("vllm_gen_total"), Role::Counter),
            (
                "vllm_lat_bucket{le=\"1\"} 1",
                untyped("vllm_lat_bucket"),
                Role::Counter,
            ),
            ("vllm_lat_count 1", untyped("vllm_lat_count"), Role::Counter),
            ("vllm_lat_sum 1", untyped("vllm_lat_sum"), Role::Counter),
            ("rpc_count 1", untyped("rpc_count"), Role::Counter),
            // Not a histogram or summary family seen so far: a gauge, as the name says.
            ("thread_count 1", untyped("thread_count"), Role::Gauge),
            ("odd_bucket 1", untyped("odd_bucket"), Role::Gauge),
            ("vllm_running 1", untyped("vllm_running"), Role::Gauge),
            // A declared type still wins.
            ("g_total 1", Some(("g_total", MetricType::Gauge)), Role::Gauge),
        ];
        for (line, family, want) in cases {
            assert_eq!(role(&sample(line), family, infer), want, "{line}");
        }
    }
}
