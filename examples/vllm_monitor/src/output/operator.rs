//! The operator's figures as words, for plain lines and the dashboard: SLO attainment,
//! time per phase with prompt tokens by source, and capacity (KV cache in tokens,
//! preemptions, rejections, aborts, waiting by reason, sleep state). A figure the server
//! does not expose reads `n/a` ([`NOT_EXPOSED`], as on the dashboard), one not known yet
//! `-`; a line none of whose figures is exposed is not printed.

use crate::figures::slo::Attainment;
use crate::figures::{Figures, PHASES};
use crate::text::{exposed_or_na, ms, num, objective, wrap_pieces, Long, NOT_EXPOSED};

/// A share as a percentage, `~` after it when interpolated between bucket bounds.
pub fn share(a: &Attainment) -> String {
    match a.attained {
        None => "-".into(),
        Some(v) => format!("{:.1}%{}", v * 100.0, if a.exact { "" } else { "~" }),
    }
}

/// The share of `a` in a row, `n/a` where no server exposes its latency.
pub fn share_in(f: &Figures, a: &Attainment) -> String {
    exposed_or_na(f.capacity.exposes(a.objective.latency.json_name()), || share(a))
}

/// `ttft≤500ms 97.0% · itl≤50ms 95.0%~ · e2e≤30s 99.0%`, or `None` without `--slo`;
/// `n/a` for a latency named in `not_exposed`.
pub fn slo(attainments: &[Attainment], not_exposed: &[&str]) -> Option<String> {
    (!attainments.is_empty()).then(|| {
        attainments
            .iter()
            .map(|a| {
                let shown = !not_exposed.contains(&a.objective.latency.json_name());
                format!(
                    "{}≤{} {}",
                    a.objective.latency.key(),
                    objective(a.objective.seconds),
                    exposed_or_na(shown, || share(a))
                )
            })
            .collect::<Vec<_>>()
            .join(" · ")
    })
}

/// The parts of the phases line: mean queue, prefill, decode and inference time; empty
/// when the server exposes none of them.
pub fn phases(f: &Figures) -> Vec<String> {
    let p = &f.phases;
    if [p.queue, p.prefill, p.decode, p.inference]
        .iter()
        .all(Option::is_none)
    {
        return Vec::new();
    }
    let phase = |i: usize, v: Option<f64>| exposed_or_na(f.capacity.exposes(PHASES[i]), || ms(v));
    vec![
        format!("queue {}", phase(0, p.queue)),
        format!("prefill {}", phase(1, p.prefill)),
        format!("decode {}", phase(2, p.decode)),
        format!("inference {}", phase(3, p.inference)),
    ]
}

/// The parts of the prompt line: prompt tokens/s computed here (the cache's misses), hit
/// in the local cache, transferred from another instance; empty when the server does not
/// say where its prompt tokens came from.
pub fn prompt_sources(f: &Figures) -> Vec<String> {
    let Some(s) = f.prompt_parts.sources else {
        return Vec::new();
    };
    vec![
        format!("computed {}", num(s.local_compute, 1, 9)),
        format!("cache hit {}", num(s.local_cache_hit, 1, 9)),
        format!("transferred {} tok/s", num(s.external_kv_transfer, 1, 9)),
    ]
}

/// KV tokens used of the total: `152.4k/476.5k tok`, `-/476.5k tok`.
pub fn kv_tokens(f: &Figures) -> Option<String> {
    let c = &f.capacity;
    let tokens = |v: Option<f64>| match v {
        None => "-".to_string(),
        Some(v) if v.abs() >= 1e9 => format!("{:.1}G", v / 1e9),
        Some(v) if v.abs() >= 1e6 => format!("{:.1}M", v / 1e6),
        Some(v) if v.abs() >= 1e4 => format!("{:.1}k", v / 1e3),
        // A count of tokens: whole.
        Some(v) => format!("{v:.0}"),
    };
    c.kv_total_tokens
        .map(|total| format!("{}/{} tok", tokens(c.kv_used_tokens), tokens(Some(total))))
}

/// The parts of the capacity line (`n/a` for what the server does not expose, `-` for what
/// is not known yet); empty when it exposes none of them.
pub fn capacity(f: &Figures) -> Vec<String> {
    let c = &f.capacity;
    let names = [
        "kv_total_tokens",
        "preemptions_per_s",
        "admission_rejections_per_s",
        "aborts_per_s",
        "waiting_by_reason",
        "engine_sleep_state",
    ];
    let known = c.kv_total_tokens.is_some()
        || c.preemptions_per_s.is_some()
        || c.admission_rejections_per_s.is_some()
        || c.aborts_per_s.is_some()
        || !c.waiting_by_reason.is_empty()
        || c.sleep_state.is_some();
    if !known || !names.iter().any(|n| c.exposes(n)) {
        return Vec::new();
    }
    let missing = |name: &str| if c.exposes(name) { "-" } else { NOT_EXPOSED };
    let rate = |name: &str, v: Option<f64>| {
        v.map_or_else(
            || missing(name).to_string(),
            |v| format!("{}/s", num(Some(v), 2, 7)),
        )
    };
    let waiting = if c.waiting_by_reason.is_empty() {
        missing("waiting_by_reason").to_string()
    } else {
        c.waiting_by_reason
            .iter()
            .map(|(reason, n)| format!("{reason} {}", num(Some(*n), 0, 6)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    vec![
        format!(
            "kv {}",
            kv_tokens(f).unwrap_or_else(|| missing("kv_total_tokens").into())
        ),
        format!("preempt {}", rate("preemptions_per_s", c.preemptions_per_s)),
        format!(
            "reject {}",
            rate("admission_rejections_per_s", c.admission_rejections_per_s)
        ),
        format!("abort {}", rate("aborts_per_s", c.aborts_per_s)),
        format!("wait {waiting}"),
        // The state alone reads (`awake`, `weights_offloaded`); unknown, what it is of.
        c.sleep_state
            .clone()
            .unwrap_or_else(|| format!("sleep {}", missing("engine_sleep_state"))),
    ]
}

/// `parts` joined by ` · ` into lines of at most `width` characters, a part never cut
/// (one longer than `width` has a line of its own); no line for no part.
pub fn part_lines(parts: &[String], width: usize) -> Vec<String> {
    if parts.is_empty() {
        return Vec::new();
    }
    wrap_pieces(
        parts.iter().map(String::as_str),
        " · ",
        width,
        (String::new(), ""),
        Long::Keep,
    )
}

/// The plain lines under a row: `slo` (with `--slo`), and for the totals (`details`)
/// `phases` and `capacity`; each labelled right-aligned in `label_width` columns, wrapped
/// within `width`.
pub fn plain_lines(f: &Figures, details: bool, label_width: usize, width: usize) -> Vec<String> {
    let mut labelled: Vec<(&str, Vec<String>)> = Vec::new();
    if !f.slo.is_empty() {
        labelled.push((
            "slo",
            f.slo
                .iter()
                .map(|a| slo(std::slice::from_ref(a), &f.capacity.not_exposed).unwrap_or_default())
                .collect(),
        ));
    }
    if details {
        labelled.push(("phases", phases(f)));
        labelled.push(("prompt/s", prompt_sources(f)));
        labelled.push(("capacity", capacity(f)));
    }
    let mut lines = Vec::new();
    for (label, parts) in labelled {
        for (i, line) in part_lines(&parts, width - label_width - 1)
            .into_iter()
            .enumerate()
        {
            let label = if i == 0 { label } else { "" };
            lines.push(format!("{label:>label_width$} {line}"));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::slo::{Latency, Objective};

    #[test]
    fn objectives_and_shares_read_as_typed() {
        assert_eq!(
            [0.5, 0.05, 0.025, 30.0, 1.5, 2.0].map(objective),
            ["500ms", "50ms", "25ms", "30s", "1.5s", "2s"]
        );
        let a = |attained, exact| Attainment {
            objective: Objective {
                latency: Latency::Ttft,
                seconds: 0.5,
            },
            attained,
            exact,
        };
        assert_eq!(slo(&[a(Some(0.97), true)], &[]).unwrap(), "ttft≤500ms 97.0%");
        assert_eq!(share(&a(Some(0.984), false)), "98.4%~");
        assert_eq!(share(&a(None, false)), "-");
        assert_eq!(slo(&[], &[]), None);
        assert_eq!(
            slo(&[a(Some(0.97), true)], &["ttft_seconds"]).unwrap(),
            "ttft≤500ms n/a"
        );
    }

    /// The largest figures a fleet gives: every plain line within 120 columns, and every
    /// part of each line whole (wrapped, never cut).
    #[test]
    fn plain_lines_fit_and_keep_every_figure_whole() {
        use crate::figures::{Capacity, PhaseMeans, PromptSources};
        let attained = |latency, seconds| Attainment {
            objective: Objective { latency, seconds },
            attained: Some(0.123456),
            exact: false,
        };
        let f = Figures {
            slo: vec![
                attained(Latency::Ttft, 0.125),
                attained(Latency::Itl, 0.0375),
                attained(Latency::E2e, 1234.5),
            ],
            phases: PhaseMeans {
                queue: Some(1234.5),
                prefill: Some(0.999),
                decode: Some(98765.4),
                inference: Some(99999.9),
            },
            prompt_parts: crate::figures::PromptParts {
                sources: Some(PromptSources {
                    local_compute: Some(123_456_789.0),
                    local_cache_hit: Some(98_765_432.1),
                    external_kv_transfer: Some(12_345_678.9),
                }),
                ..Default::default()
            },
            capacity: Capacity {
                kv_used_tokens: Some(1.234e9),
                kv_total_tokens: Some(9.876e9),
                preemptions_per_s: Some(12_345.67),
                admission_rejections_per_s: Some(9_999.99),
                aborts_per_s: Some(1_234.56),
                waiting_by_reason: vec![("capacity".into(), 123_456.0), ("deferred".into(), 99_999.0)],
                sleep_state: Some("weights_offloaded (999), discard_all (999), awake (999)".into()),
                not_exposed: Vec::new(),
            },
            ..Figures::default()
        };
        let lines = plain_lines(&f, true, 11, 120);
        assert!(lines.iter().all(|l| l.chars().count() <= 120), "{lines:#?}");
        let text = lines.join("\n");
        let parts = [phases(&f), prompt_sources(&f), capacity(&f)].concat();
        for part in parts.iter().chain(&[slo(&f.slo[..1], &[]).unwrap()]) {
            assert!(text.contains(part.as_str()), "{part} in {text}");
        }
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("   capacity kv 1.2G/9.9G tok")),
            "{text}"
        );
    }

    /// A figure the server does not expose reads `n/a`, as on the dashboard; one it
    /// exposes but that is not known yet reads `-`.
    #[test]
    fn what_a_server_does_not_expose_reads_as_on_the_dashboard() {
        let f = Figures {
            capacity: crate::figures::Capacity {
                kv_total_tokens: Some(4096.0),
                not_exposed: vec!["preemptions_per_s", "engine_sleep_state"],
                ..crate::figures::Capacity::default()
            },
            ..Figures::default()
        };
        let parts = capacity(&f);
        for part in ["preempt n/a", "sleep n/a", "reject -", "abort -"] {
            assert!(parts.iter().any(|p| p == part), "{part} in {parts:?}");
        }
    }

    #[test]
    fn parts_wrap_whole() {
        let parts: Vec<String> = ["aaaa", "bbbb", "cccc"].map(String::from).to_vec();
        assert_eq!(part_lines(&parts, 11), ["aaaa · bbbb", "cccc"]);
        assert_eq!(part_lines(&parts, 3), ["aaaa", "bbbb", "cccc"]);
    }
}
