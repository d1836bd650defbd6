//! The operator's figures on the dashboard, fitted into the panels they belong to without
//! taking rows: SLO attainment and time per phase in the Latency panel, prompt tokens by
//! source in the Prompt panel, and capacity in the borders' titles (KV tokens on the
//! cache's, preemptions under it, waiting by reason under Running / waiting, the sleep
//! state on its title, rejections and aborts under Requests). Each is given in the longest
//! form that fits the panel's width, or left out when none does (never cut); a figure the
//! server does not expose reads `n/a` ([`NOT_EXPOSED`]), as in every output.

use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};

use crate::figures::{Figures, PHASES};
use crate::output::operator::{kv_tokens, share_in};
use crate::text::visible::visible;
use crate::text::{exposed_or_na, ms, num, objective, NOT_EXPOSED};

/// The first of `forms` that fits `width` characters (a border's title, inside its corners).
fn fit(forms: impl IntoIterator<Item = String>, width: u16) -> Option<String> {
    forms
        .into_iter()
        .find(|f| f.chars().count() <= usize::from(width.saturating_sub(2)))
}

/// A rate per second, or `n/a` when the server does not expose it.
fn rate(f: &Figures, name: &str, v: Option<f64>) -> String {
    exposed_or_na(f.capacity.exposes(name), || format!("{}/s", num(v, 2, 7)))
}

/// The Cache panel's title: its KV cache in tokens where the server says its size.
pub(super) fn cache_title(f: &Figures, width: u16) -> String {
    let tokens = match kv_tokens(f) {
        Some(tokens) => Some(tokens),
        None if !f.capacity.exposes("kv_total_tokens") => Some(format!("size {NOT_EXPOSED}")),
        None => None,
    };
    let forms = tokens
        .iter()
        .flat_map(|t| {
            [
                format!(" Cache / decoding · {t} "),
                format!(" Cache · {t} "),
                format!(" KV {t} "),
                format!(" {t} "),
            ]
        })
        .chain([" Cache / decoding ".to_string()]);
    fit(forms, width).unwrap_or_default()
}

/// Under the Cache panel: preemptions per second (requests evicted to free KV cache).
pub(super) fn cache_bottom(f: &Figures, width: u16) -> Option<String> {
    let preempted = rate(f, "preemptions_per_s", f.capacity.preemptions_per_s);
    fit(
        [
            format!(" preemptions {preempted} "),
            format!(" preempt {preempted} "),
        ],
        width,
    )
}

/// Under Requests: admission rejections and aborts per second.
pub(super) fn requests_bottom(f: &Figures, width: u16) -> Option<String> {
    let rejected = rate(
        f,
        "admission_rejections_per_s",
        f.capacity.admission_rejections_per_s,
    );
    let aborted = rate(f, "aborts_per_s", f.capacity.aborts_per_s);
    fit(
        [
            format!(" rejected {rejected} · aborted {aborted} "),
            format!(" rejected {rejected} "),
        ],
        width,
    )
}

/// Under Running / waiting: the waiting requests by reason (`capacity 24 · deferred 0`).
pub(super) fn waiting_bottom(f: &Figures, width: u16) -> Option<String> {
    let reasons = &f.capacity.waiting_by_reason;
    if !f.capacity.exposes("waiting_by_reason") {
        return fit(
            [
                format!(" waiting by reason {NOT_EXPOSED} "),
                format!(" by reason {NOT_EXPOSED} "),
            ],
            width,
        );
    }
    let long: Vec<String> = reasons
        .iter()
        .map(|(r, n)| format!("{} {}", visible(r), num(Some(*n), 0, 6)))
        .collect();
    let short: Vec<String> = reasons
        .iter()
        .map(|(r, n)| {
            format!(
                "{} {}",
                visible(r).chars().take(3).collect::<String>(),
                num(Some(*n), 0, 6)
            )
        })
        .collect();
    fit(
        [
            format!(" waiting: {} ", long.join(" · ")),
            format!(" {} ", long.join(" · ")),
            format!(" {} ", short.join(" ")),
        ],
        width,
    )
}

/// The Running / waiting title, with the engines' sleep state where the server says it
/// (in a warning colour when an engine sleeps).
pub(super) fn running_title(f: &Figures, width: u16) -> Line<'static> {
    let state = match (&f.capacity.sleep_state, f.capacity.exposes("engine_sleep_state")) {
        (Some(state), _) => visible(state).into_owned(),
        (None, true) => "-".into(),
        (None, false) => format!("sleep {NOT_EXPOSED}"),
    };
    let style = if state == "awake" || state.ends_with(NOT_EXPOSED) || state == "-" {
        Style::new()
    } else {
        Style::new().fg(Color::Yellow).bold()
    };
    for (head, tail) in [(" Running / waiting · ", " "), (" Running · ", " ")] {
        let text = format!("{head}{state}{tail}");
        if fit([text], width).is_some() {
            return Line::from(vec![Span::raw(head), Span::styled(state, style), Span::raw(tail)]);
        }
    }
    Line::from(" Running / waiting ")
}

/// The Latency panel's title: the objectives of `--slo` (the table's `slo` column is the
/// share of requests within each; `~` marks a share interpolated between bucket bounds).
pub(super) fn latency_title(f: &Figures, width: u16) -> String {
    let objectives: Vec<String> = f
        .slo
        .iter()
        .map(|a| format!("{}≤{}", a.objective.latency.key(), objective(a.objective.seconds)))
        .collect();
    let slo = objectives.join(" ");
    let forms = (!objectives.is_empty())
        .then(|| [format!(" Latency · slo {slo} "), format!(" slo {slo} ")])
        .into_iter()
        .flatten()
        .chain([" Latency ".to_string()]);
    fit(forms, width).unwrap_or_default()
}

/// The `slo` cell of a latency's row (`97.0%`, `98.3%~`), or `None` without an objective
/// for it.
pub(super) fn slo_cell(f: &Figures, latency: &str) -> Option<String> {
    f.slo
        .iter()
        .find(|a| a.objective.latency.key() == latency)
        .map(|a| share_in(f, a))
}

/// The mean time per phase, a line each, beside the latency table; none when the server
/// exposes no phase.
pub(super) fn phase_lines(f: &Figures) -> Vec<String> {
    let p = &f.phases;
    let phases = [
        ("queue", p.queue),
        ("prefill", p.prefill),
        ("decode", p.decode),
        ("infer", p.inference),
    ];
    if phases.iter().all(|(_, v)| v.is_none()) {
        return Vec::new();
    }
    let values: Vec<String> = phases
        .iter()
        .zip(PHASES)
        .map(|((_, v), name)| exposed_or_na(f.capacity.exposes(name), || ms(*v)))
        .collect();
    let w = values.iter().map(|v| v.chars().count()).max().unwrap_or(0);
    phases
        .iter()
        .zip(values)
        .map(|((name, _), value)| format!("{name:<7} {value:>w$}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_form_that_fits_or_none() {
        assert_eq!(fit(["abcdef".to_string(), "ab".into()], 6), Some("ab".into()));
        assert_eq!(fit(["abcdef".to_string()], 8), Some("abcdef".into()));
        assert_eq!(fit(["abcdef".to_string()], 5), None);
        let f = Figures {
            capacity: crate::figures::Capacity {
                waiting_by_reason: vec![("capacity".into(), 24.0), ("deferred".into(), 0.0)],
                ..Default::default()
            },
            ..Figures::default()
        };
        assert_eq!(
            waiting_bottom(&f, 40).as_deref(),
            Some(" waiting: capacity 24 · deferred 0 ")
        );
        assert_eq!(waiting_bottom(&f, 24).as_deref(), Some(" cap 24 def 0 "));
        assert_eq!(waiting_bottom(&f, 10), None);
    }
}
