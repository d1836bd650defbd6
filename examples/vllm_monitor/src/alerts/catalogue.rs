//! The figures an alert rule can name: a short name for a field of the `--json` interval
//! row (and of each group of `groups`), with its unit. `--help` lists this table, and the
//! rules read the row itself, so a rule's value is always the one the JSON shows.

use serde_json::Value;

/// How a figure's threshold is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A rate per second (tokens/s, requests/s): a plain number.
    PerSecond,
    /// A fraction from 0 to 1: `0.9` or `90%`.
    Fraction,
    /// Seconds: `0.5`, `500ms`, `2s`, `1m` (humantime's units, as `--interval`).
    Seconds,
    /// A number of things (requests, tokens, URLs): a plain number.
    Count,
    /// A percentage from 0 to 100 (GPU utilisation): `90` or `90%`.
    Percent,
    /// A number in the figure's own unit (W, J/token, a price): a plain number.
    Other(&'static str),
    /// Yes or no, read as 1 or 0.
    Flag,
}

impl Unit {
    /// How a threshold of this unit is written, for messages and `--help`.
    pub fn how(self) -> &'static str {
        match self {
            Unit::PerSecond => "a number per second",
            Unit::Fraction => "a fraction from 0 to 1, or a percentage (0.9 or 90%)",
            Unit::Seconds => "a duration with its unit (500ms, 0.5s, 2s, 1m)",
            Unit::Count => "a number",
            Unit::Percent => "a percentage (90 or 90%)",
            Unit::Other(_) => "a number",
            Unit::Flag => "1 (yes) or 0 (no)",
        }
    }

    /// The unit's short name in `--help`.
    fn short(self) -> &'static str {
        match self {
            Unit::PerSecond => "/s",
            Unit::Fraction => "0-1",
            Unit::Seconds => "s",
            Unit::Count => "count",
            Unit::Percent => "%",
            Unit::Other(unit) => unit,
            Unit::Flag => "0/1",
        }
    }
}

/// Where a figure's value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// Dotted paths of the JSON row, in preference order: the first that is not null.
    Row(&'static [&'static str]),
    /// URLs whose newest scrape failed (`urls[].ok` false after a first scrape); a group
    /// has it only with `--by url`, where a group is a URL.
    FailedScrapes,
}

/// A figure a rule can name.
#[derive(Debug, PartialEq)]
pub struct Figure {
    pub name: &'static str,
    pub reading: Reading,
    pub unit: Unit,
    pub about: &'static str,
}

const fn row(name: &'static str, paths: &'static [&'static str], unit: Unit, about: &'static str) -> Figure {
    Figure {
        name,
        reading: Reading::Row(paths),
        unit,
        about,
    }
}

/// Every figure a rule can name, as `--help` lists them (a table: one entry a line).
#[rustfmt::skip]
pub const FIGURES: &[Figure] = &[
    row("gen_tok_s", &["generation_tokens_per_s.window"], Unit::PerSecond, "generation tokens/s over the window"),
    row("gen_tok_s_ewma", &["generation_tokens_per_s.ewma"], Unit::PerSecond, "its EWMA"),
    row("prompt_tok_s", &["prompt_tokens_per_s.window"], Unit::PerSecond, "prompt tokens/s"),
    row("prompt_computed_tok_s", &["prompt_tokens_per_s.computed"], Unit::PerSecond, "prompt tokens/s computed (cache misses)"),
    row("prompt_cached_tok_s", &["prompt_tokens_per_s.cached"], Unit::PerSecond, "prompt tokens/s from a cache"),
    row("prompt_transfer_tok_s", &["prompt_tokens_per_s.by_source.external_kv_transfer"], Unit::PerSecond, "prompt tokens/s from an external KV transfer"),
    row("req_s", &["requests_finished_per_s.total"], Unit::PerSecond, "finished requests/s"),
    row("steady_req_s", &["littles_law_requests_per_s"], Unit::PerSecond, "the finished requests/s Little's law implies"),
    row("running", &["running"], Unit::Count, "requests running"),
    row("waiting", &["waiting"], Unit::Count, "requests waiting"),
    row("kv_used", &["capacity.kv_cache_usage", "kv_cache_usage"], Unit::Fraction, "KV cache in use"),
    row("kv_used_tokens", &["capacity.kv_used_tokens"], Unit::Count, "KV cache in use, tokens"),
    row("preempt_s", &["capacity.preemptions_per_s"], Unit::PerSecond, "preemptions/s"),
    row("reject_s", &["capacity.admission_rejections_per_s"], Unit::PerSecond, "admission rejections/s"),
    row("abort_s", &["capacity.aborts_per_s"], Unit::PerSecond, "aborted requests/s"),
    row("prefix_hit", &["prefix_cache_hit_rate"], Unit::Fraction, "prefix-cache hit rate"),
    row("spec_accept", &["spec_decode.acceptance_rate"], Unit::Fraction, "speculative-decoding acceptance rate"),
    row("ttft_p50", &["ttft_seconds.p50"], Unit::Seconds, "time to first token, median"),
    row("ttft_p95", &["ttft_seconds.p95"], Unit::Seconds, "time to first token, 95th percentile"),
    row("ttft_p99", &["ttft_seconds.p99"], Unit::Seconds, "time to first token, 99th percentile"),
    row("itl_p50", &["inter_token_latency_seconds.p50"], Unit::Seconds, "inter-token latency, median"),
    row("itl_p95", &["inter_token_latency_seconds.p95"], Unit::Seconds, "inter-token latency, 95th percentile"),
    row("itl_p99", &["inter_token_latency_seconds.p99"], Unit::Seconds, "inter-token latency, 99th percentile"),
    row("e2e_p50", &["e2e_latency_seconds.p50"], Unit::Seconds, "end-to-end latency, median"),
    row("e2e_p95", &["e2e_latency_seconds.p95"], Unit::Seconds, "end-to-end latency, 95th percentile"),
    row("e2e_p99", &["e2e_latency_seconds.p99"], Unit::Seconds, "end-to-end latency, 99th percentile"),
    row("e2e_mean", &["mean_e2e_latency_seconds"], Unit::Seconds, "end-to-end latency, mean"),
    row("queue_mean", &["phase_mean_seconds.queue"], Unit::Seconds, "time queued, mean"),
    row("prefill_mean", &["phase_mean_seconds.prefill"], Unit::Seconds, "time in prefill, mean"),
    row("decode_mean", &["phase_mean_seconds.decode"], Unit::Seconds, "time in decode, mean"),
    row("slo_ttft", &["slo.ttft.attained"], Unit::Fraction, "share of requests within the --slo TTFT objective"),
    row("slo_itl", &["slo.itl.attained"], Unit::Fraction, "share within the --slo inter-token objective"),
    row("slo_e2e", &["slo.e2e.attained"], Unit::Fraction, "share within the --slo end-to-end objective"),
    row("tok_per_req", &["mean_generation_tokens_per_request"], Unit::Count, "generated tokens per finished request"),
    row("tok_s_per_req", &["generation_tokens_per_s_per_running_request"], Unit::PerSecond, "generation tokens/s per running request"),
    row("stalled", &["stalled"], Unit::Flag, "requests run and no token comes"),
    row("tok_s_per_gpu", &["generation_tokens_per_s_per_gpu"], Unit::PerSecond, "generation tokens/s per GPU"),
    row("j_per_token", &["joules_per_generated_token"], Unit::Other("J"), "GPU energy per generated token"),
    row("cost_per_mtok", &["cost_per_million_generated_tokens"], Unit::Other("price"), "cost per million generated tokens"),
    row("gpu_power_w", &["gpus.power_w"], Unit::Other("W"), "GPU power"),
    row("gpu_util", &["gpus.utilisation_percent"], Unit::Percent, "GPU utilisation"),
    Figure {
        name: "scrape_errors",
        reading: Reading::FailedScrapes,
        unit: Unit::Count,
        about: "URLs whose newest scrape failed",
    },
];

impl Figure {
    /// The figure named `name`.
    pub fn named(name: &str) -> Option<&'static Figure> {
        FIGURES.iter().find(|f| f.name == name)
    }

    /// The known figure nearest to `name` (a typo's likely meaning), if one is near.
    pub fn nearest(name: &str) -> Option<&'static Figure> {
        let name = name.to_ascii_lowercase();
        FIGURES
            .iter()
            .map(|f| (strsim::damerau_levenshtein(&name, f.name), f))
            .filter(|(distance, f)| *distance <= f.name.len().div_ceil(3))
            .min_by_key(|(distance, _)| *distance)
            .map(|(_, f)| f)
    }

    /// The figure's value in a JSON row (or group): a number, a flag as 1 or 0; `None`
    /// when null or absent (the server does not show it, or not yet).
    pub fn value_in(&self, row: &Value) -> Option<f64> {
        let Reading::Row(paths) = self.reading else {
            return None;
        };
        paths
            .iter()
            .find_map(|path| match path.split('.').try_fold(row, |v, key| v.get(key))? {
                Value::Number(n) => n.as_f64(),
                Value::Bool(b) => Some(f64::from(u8::from(*b))),
                _ => None,
            })
    }
}

/// The names, comma-separated, for an error message.
pub fn names() -> String {
    FIGURES.iter().map(|f| f.name).collect::<Vec<_>>().join(", ")
}

/// `--alert`'s long help: the grammar, then every figure with its unit and meaning.
pub fn long_help() -> String {
    let mut help = String::from(
        "Alert when a figure crosses a threshold for a while (repeatable): FIGURE OP \
         NUMBER [for DURATION], e.g. 'gen_tok_s < 1000 for 30s', 'kv_used > 90% for 1m', \
         'ttft_p95 > 500ms for 2m', 'scrape_errors > 0'. OP is <, <=, >, >=, == or !=; \
         without `for` a rule fires at the first interval its condition holds. Time is the \
         data's: a rule fires once its condition has held for DURATION of intervals, and \
         resolves when it no longer holds; a figure not known (null) neither fires nor \
         resolves. With --by, every rule is judged on the totals and on each group apart. \
         Firing and resolving are events in every output; see --exit-on-alert.\n\nFigures \
         (the --json row's fields):",
    );
    for f in FIGURES {
        let field = match f.reading {
            Reading::Row(paths) => paths[0],
            Reading::FailedScrapes => "urls[].ok",
        };
        help += &format!("\n  {:<22}{:<7}{} ({field})", f.name, f.unit.short(), f.about);
    }
    help
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::slo::{Attainment, Latency, Objective};
    use crate::figures::{Figures, PromptSources, SpecDecode};
    use crate::gpus::Gpus;

    /// Every name reads a field of the JSON row (each of its paths but fallbacks, which
    /// must be numbers or flags), names are unique and lower case, and `--help` lists them.
    #[test]
    fn every_figure_is_a_field_of_the_json_row() {
        // Every part present, `--slo` for every latency among them.
        let slo = [Latency::Ttft, Latency::Itl, Latency::E2e]
            .map(|latency| Attainment {
                objective: Objective {
                    latency,
                    seconds: 1.0,
                },
                attained: Some(0.5),
                exact: true,
            })
            .to_vec();
        let full = Figures {
            spec_decode: Some(SpecDecode::default()),
            gpus: Some(Gpus::default()),
            slo,
            prompt_parts: crate::figures::PromptParts {
                sources: Some(PromptSources::default()),
                ..Default::default()
            },
            ..Figures::default()
        };
        let row = crate::figures::row::figures(&full, &crate::figures::Verdict::default());
        let mut missing = Vec::new();
        for f in FIGURES {
            if let Reading::Row(paths) = f.reading {
                let found = paths
                    .iter()
                    .any(|p| p.split('.').try_fold(&row, |v, k| v.get(k)).is_some());
                if !found {
                    missing.push(f.name);
                }
            }
        }
        assert!(missing.is_empty(), "not in the JSON row: {missing:?}");
        let mut names: Vec<&str> = FIGURES.iter().map(|f| f.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), FIGURES.len(), "a name twice");
        assert!(FIGURES.iter().all(|f| f
            .name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')));
        let help = long_help();
        assert!(
            FIGURES.iter().all(|f| help.contains(&format!("\n  {} ", f.name))),
            "{help}"
        );
    }

    #[test]
    fn values_come_from_the_row_with_fallbacks_and_flags() {
        let row = serde_json::json!({
            "generation_tokens_per_s": {"window": 812.5},
            "kv_cache_usage": 0.93,
            "capacity": {"kv_cache_usage": null},
            "stalled": true,
            "ttft_seconds": {"p95": null},
        });
        let value = |name: &str| Figure::named(name).unwrap().value_in(&row);
        assert_eq!(value("gen_tok_s"), Some(812.5));
        assert_eq!(value("kv_used"), Some(0.93), "capacity's null falls back");
        assert_eq!(value("stalled"), Some(1.0));
        assert_eq!(value("ttft_p95"), None);
        assert_eq!(value("slo_ttft"), None, "absent");
        assert_eq!(value("scrape_errors"), None, "not a row field");
    }

    #[test]
    fn the_nearest_name_is_suggested_only_when_near() {
        let nearest = |typed: &str| Figure::nearest(typed).map(|f| f.name);
        assert_eq!(nearest("gen_toks"), Some("gen_tok_s"));
        assert_eq!(nearest("GEN_TOK_S"), Some("gen_tok_s"));
        assert_eq!(nearest("kv_usage"), Some("kv_used"));
        assert_eq!(nearest("ttft_p90"), Some("ttft_p50"));
        assert_eq!(nearest("scrape_error"), Some("scrape_errors"));
        assert_eq!(nearest("throughput"), None);
    }
}
