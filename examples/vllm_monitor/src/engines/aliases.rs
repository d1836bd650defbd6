//! vLLM's renamed metrics, in one table: the catalogue names each figure by its current
//! name only, and a page of an older vLLM is read through this table (`METRICS.md`
//! section 2 of the project's notes: what each old name became, and when).

use super::Metric;

/// What an old name became.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Successor {
    /// The same figure under a new name, in the same unit.
    Renamed(&'static str),
    /// A gauge of a ratio, replaced by the counters whose increases give it
    /// (`increase(hits) / increase(queries)`): the old gauge is read only when a page has
    /// neither counter.
    Ratio {
        hits: &'static str,
        queries: &'static str,
    },
}

/// One old vLLM name, what replaced it, and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Alias {
    pub old: &'static str,
    pub successor: Successor,
    pub when: &'static str,
}

/// Every vLLM metric the monitor reads under an older name.
pub const VLLM_ALIASES: &[Alias] = &[
    Alias {
        old: "vllm:gpu_cache_usage_perc",
        successor: Successor::Renamed("vllm:kv_cache_usage_perc"),
        when: "renamed in 0.9 (PR #18354), hidden, absent in 0.33",
    },
    Alias {
        old: "vllm:time_per_output_token_seconds",
        successor: Successor::Renamed("vllm:inter_token_latency_seconds"),
        when: "deprecated in about 0.10.2 (its HELP says to use inter_token_latency_seconds)",
    },
    Alias {
        old: "vllm:gpu_prefix_cache_hits_total",
        successor: Successor::Renamed("vllm:prefix_cache_hits_total"),
        when: "early V1; renamed in 0.9",
    },
    Alias {
        old: "vllm:gpu_prefix_cache_queries_total",
        successor: Successor::Renamed("vllm:prefix_cache_queries_total"),
        when: "early V1; renamed in 0.9",
    },
    Alias {
        old: "vllm:time_in_queue_requests",
        successor: Successor::Renamed("vllm:request_queue_time_seconds"),
        when: "V0's duplicate of the queue time; gone in V1",
    },
    Alias {
        old: "vllm:gpu_prefix_cache_hit_rate",
        successor: Successor::Ratio {
            hits: "vllm:prefix_cache_hits_total",
            queries: "vllm:prefix_cache_queries_total",
        },
        when: "V0 (-1 when the prefix cache is off); V1 counts hits and queries instead",
    },
    Alias {
        old: "vllm:spec_decode_draft_acceptance_rate",
        successor: Successor::Ratio {
            hits: "vllm:spec_decode_num_accepted_tokens_total",
            queries: "vllm:spec_decode_num_draft_tokens_total",
        },
        when: "V0; V1 counts accepted and draft tokens instead",
    },
];

/// The old names of `metric` (its own labels and unit), newest first: what a page of an
/// older vLLM calls it.
pub fn older_names(metric: &Metric) -> impl Iterator<Item = Metric> + '_ {
    VLLM_ALIASES
        .iter()
        .filter_map(move |alias| match alias.successor {
            Successor::Renamed(current) if current == metric.name => Some(Metric {
                name: alias.old,
                ..*metric
            }),
            _ => None,
        })
}

/// The old gauges of a hit ratio whose counters are `hits`.
pub fn ratio_gauges(hits: &Metric) -> impl Iterator<Item = Metric> + '_ {
    VLLM_ALIASES
        .iter()
        .filter_map(move |alias| match alias.successor {
            Successor::Ratio { hits: h, .. } if h == hits.name => Some(super::m(alias.old)),
            _ => None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each old name appears once and never as a current name (no chain of renames left to
    /// follow), and every successor is a name the catalogue reads.
    #[test]
    fn the_table_is_one_step_and_points_at_the_catalogue() {
        let vllm = super::super::Engine::named("vllm").unwrap();
        let catalogue: Vec<&str> = super::super::fields(vllm)
            .into_iter()
            .flatten()
            .map(|m| m.name)
            .collect();
        for (i, alias) in VLLM_ALIASES.iter().enumerate() {
            assert!(
                !VLLM_ALIASES[i + 1..].iter().any(|a| a.old == alias.old),
                "{} twice",
                alias.old
            );
            let successors = match alias.successor {
                Successor::Renamed(new) => vec![new],
                Successor::Ratio { hits, queries } => vec![hits, queries],
            };
            for new in successors {
                assert!(!VLLM_ALIASES.iter().any(|a| a.old == new), "{new} renamed again");
                assert!(catalogue.contains(&new), "{new} is not in vLLM's entry");
            }
            assert!(
                !catalogue.contains(&alias.old),
                "{} is in vLLM's entry",
                alias.old
            );
        }
    }
}
