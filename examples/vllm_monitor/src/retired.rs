//! What the counters a URL's tracker dropped had counted (a server gone from a fleet, an
//! engine scaled down, a model's series replaced by a restart's): kept by metric name and
//! the `--by` label's value, so that the run's totals since its start never go down.
//! Bounded: past [`RETIRED_KEPT`] names and values, the rest is kept by name alone (in the
//! totals, not in a group).

use std::collections::HashMap;

use promrate::tracker::Retired;

/// The (name, group value) pairs kept apart; a fleet whose `--by` values churn for ever
/// (a model name per request) folds the rest into its names' totals.
pub const RETIRED_KEPT: usize = 10_000;

/// Retired counters' totals by metric name and group value (`""`: no group, or folded).
#[derive(Debug, Default, Clone)]
pub struct RetiredTotals {
    totals: HashMap<(String, String), f64>,
}

impl RetiredTotals {
    /// Keeps what `retired` counted, by the value of `by` (a label; `None` or `url`: the
    /// URL's own total).
    pub fn add(&mut self, retired: &[Retired], by: Option<&str>) {
        for counter in retired {
            let value = by
                .filter(|label| *label != "url")
                .and_then(|label| counter.labels.iter().find(|(k, _)| k == label))
                .map_or("", |(_, v)| v.as_str());
            let mut key = (counter.name.clone(), value.to_string());
            if self.totals.len() >= RETIRED_KEPT && !self.totals.contains_key(&key) {
                key.1.clear();
            }
            *self.totals.entry(key).or_default() += counter.total_increase;
        }
    }

    /// What the retired counters named `name` (':' and '_' alike) counted, by group value.
    pub fn of<'s>(&'s self, name: &'s str) -> impl Iterator<Item = (&'s str, f64)> + 's {
        let separator = |b: u8| matches!(b, b':' | b'_');
        let same = move |a: &str| {
            a.len() == name.len()
                && a.bytes()
                    .zip(name.bytes())
                    .all(|(x, y)| x == y || (separator(x) && separator(y)))
        };
        self.totals
            .iter()
            .filter(move |((n, _), _)| same(n))
            .map(|((_, value), total)| (value.as_str(), *total))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn retired(name: &str, model: &str, total: f64) -> Retired {
        let mut r = promrate::Tracker::new([]);
        r.stale_after(1);
        let at = |s| chrono::DateTime::from_timestamp(s, 0).unwrap();
        let page = |n: f64| format!("# TYPE {name} counter\n{name}{{model_name=\"{model}\"}} {n}\n");
        r.ingest(&page(0.0), at(1)).unwrap();
        r.ingest(&page(total), at(2)).unwrap();
        let mut report = r.ingest("", at(3)).unwrap();
        report.retired.remove(0)
    }

    /// Totals by name and group value, ':' and '_' read alike; past the bound, new values
    /// fold into the name's total.
    #[test]
    fn totals_are_kept_by_name_and_group_and_bounded() {
        let mut kept = RetiredTotals::default();
        kept.add(
            &[retired("vllm:generation_tokens_total", "a", 10.0)],
            Some("model_name"),
        );
        kept.add(
            &[retired("vllm:generation_tokens_total", "a", 5.0)],
            Some("model_name"),
        );
        kept.add(&[retired("vllm:generation_tokens_total", "b", 1.0)], None);
        let mut of: Vec<(&str, f64)> = kept.of("vllm_generation_tokens_total").collect();
        of.sort_by(|x, y| x.0.cmp(y.0));
        assert_eq!(of, [("", 1.0), ("a", 15.0)]);
        assert_eq!(kept.of("vllm:prompt_tokens_total").count(), 0);
        let one = retired("x_total", "m", 1.0);
        for i in 0..RETIRED_KEPT + 5 {
            let mut r = one.clone();
            r.labels = vec![("model_name".into(), format!("m{i}"))];
            kept.add(&[r], Some("model_name"));
        }
        assert!(kept.totals.len() <= RETIRED_KEPT + 1);
        assert_eq!(
            kept.of("x_total").map(|(_, t)| t).sum::<f64>(),
            (RETIRED_KEPT + 5) as f64
        );
    }
}
