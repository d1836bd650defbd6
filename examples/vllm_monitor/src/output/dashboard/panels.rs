//! The panels of figures: the headline with its sparklines, requests, running and
//! waiting, the cache, latencies, prompt tokens, GPUs, progress and the `--by` table.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell, Gauge, Paragraph, Row, Sparkline, Table};
use ratatui::Frame;

use super::operator;
use super::window::{Coverage, Timing};
use crate::figures::{Figures, Load};
use crate::gpus::Gpus;
use crate::interval::{History, Progress};
use crate::output::{duration, keep_end, ms, num, percent};

/// GPUs (a DCGM exporter among the URLs, or `--gpus`): what they are and draw, then what a
/// token costs in GPU time, energy and money.
pub(super) fn gpu_panel(frame: &mut Frame<'_>, area: Rect, f: &Figures) {
    let g = f.gpus.as_ref();
    let model = g.map(Gpus::what);
    let first = [
        model.or(f.per_token.gpus.map(|n| format!("{n} GPU(s) (--gpus)"))),
        g.and_then(|g| g.power_w).map(|w| format!("{w:.0} W")),
        g.and_then(|g| g.utilisation_pct).map(|u| format!("util {u:.0}%")),
        g.and_then(|g| g.memory_used_mib)
            .map(|m| format!("{:.1} GiB used", m / 1024.0)),
    ];
    let second = [
        Some(format!(
            "{} tok/s per GPU",
            num(f.per_token.tokens_per_s_per_gpu, 1, 8)
        )),
        Some(format!("{} J/token", num(f.per_token.joules_per_token, 3, 8))),
        f.per_token
            .cost_per_million_tokens
            .map(|c| format!("{c:.2} per M tokens")),
    ];
    let join = |parts: &[Option<String>]| parts.iter().flatten().cloned().collect::<Vec<_>>().join(" · ");
    let lines = vec![Line::from(join(&first)), Line::from(join(&second)).bold()];
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(" GPUs ")),
        area,
    );
}

pub(super) fn progress_panel(frame: &mut Frame<'_>, area: Rect, p: &Progress) {
    let label = format!(
        "{}/{} requests · ETA {} by requests/s, {} by tokens",
        num(Some(p.finished), 0, 9),
        p.target,
        duration(p.eta_requests_s),
        duration(p.eta_tokens_s)
    );
    let gauge = Gauge::default()
        .block(Block::bordered().title(" Progress "))
        .gauge_style(Style::new().fg(Color::Cyan).bg(Color::DarkGray))
        .ratio(p.fraction())
        .label(label);
    frame.render_widget(gauge, area);
}

/// A sparkline of the last `area.width` values (gaps where unknown), scaled to `max`, or to
/// the largest value shown when `None`.
fn spark(frame: &mut Frame<'_>, area: Rect, values: &[Option<f64>], max: Option<u64>, color: Color) {
    let start = values.len().saturating_sub(usize::from(area.width));
    let bars: Vec<Option<u64>> = values[start..]
        .iter()
        .map(|v| v.map(|v| v.max(0.0).round() as u64))
        .collect();
    let mut sparkline = Sparkline::default().data(bars).style(Style::new().fg(color));
    if let Some(max) = max {
        sparkline = sparkline.max(max);
    }
    frame.render_widget(sparkline, area);
}

/// The headline: its title says what the window figures cover (in a warning colour when
/// the window is shorter than asked) and its bottom border what an interval waits for.
pub(super) fn headline(
    frame: &mut Frame<'_>,
    area: Rect,
    f: &Figures,
    h: &History,
    cover: &Coverage,
    timing: &Timing,
) {
    let mut title = vec![Span::raw(" Generation tokens/s ")];
    if let Some(span) = &cover.span {
        let style = if cover.shortened {
            Style::new().fg(Color::Yellow).bold()
        } else {
            Style::new()
        };
        title.push(Span::styled(format!("· {span} "), style));
    }
    let mut block = Block::bordered().title(Line::from(title));
    if let Some(waiting) = &cover.waiting {
        block = block.title_bottom(Line::styled(
            format!(" {waiting} "),
            Style::new().fg(Color::Yellow).bold(),
        ));
    }
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let [text, charts] = Layout::horizontal([Constraint::Length(30), Constraint::Min(10)]).areas(inner);
    let value = f
        .generation
        .window
        .map_or_else(|| "-".into(), |v| format!("{v:.1}"));
    // The EWMA's time constant beside its name (it need not be the window's).
    let ewma = timing
        .ewma
        .as_ref()
        .map_or_else(|| "EWMA".to_string(), |tau| format!("EWMA {tau}"));
    let w = ewma.chars().count().max(7) + 1;
    let lines = vec![
        Line::from(vec![
            Span::styled(value, Style::new().bold().fg(Color::Green)),
            Span::raw(" tok/s"),
        ]),
        Line::from(format!("{ewma:<w$}{}", num(f.generation.ewma, 1, 10))),
        Line::from(format!("{:<w$}{}", "rate()", num(f.generation.promql, 1, 10))),
        Line::from(format!(
            "{:<w$}{} tok/s",
            "per req",
            num(f.tokens_per_s_per_request, 2, 8)
        )),
    ];
    frame.render_widget(Paragraph::new(lines), text);
    let [window, ewma] = Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(charts);
    let max = h
        .generation
        .iter()
        .chain(&h.ewma)
        .flatten()
        .fold(1.0f64, |m, v| m.max(*v))
        .round() as u64;
    // One scale for both, so the EWMA row compares with the window-rate row.
    spark(frame, window, &h.generation, Some(max), Color::Green);
    spark(frame, ewma, &h.ewma, Some(max), Color::Yellow);
}

/// `load_instead`: what the load label says when there is nothing new to judge.
pub(super) fn requests_panel(
    frame: &mut Frame<'_>,
    area: Rect,
    f: &Figures,
    load_instead: Option<&'static str>,
) {
    let reasons: Vec<String> = f
        .finished_by_reason
        .iter()
        .filter(|(_, rate)| *rate > 0.0)
        .map(|(reason, rate)| format!("{reason} {rate:.2}"))
        .collect();
    let load_style = match f.load {
        _ if load_instead.is_some() => Style::new().fg(Color::Yellow),
        Load::Steady => Style::new().fg(Color::Green),
        Load::RampingUp | Load::QueueGrowing => Style::new().fg(Color::Yellow).bold(),
        Load::Stalled => Style::new().fg(Color::Red).bold(),
        Load::Unknown => Style::new(),
    };
    // Most important first: a small terminal shows the top lines only.
    let lines = vec![
        Line::from(format!("finished  {} req/s", num(f.finished, 2, 8))),
        Line::from(vec![
            Span::raw(format!("steady    {} req/s ", num(f.steady_rate, 2, 8))),
            Span::styled(load_instead.unwrap_or(f.load.label()), load_style),
        ]),
        Line::from(format!(
            "per req   {} gen · {} prompt tok",
            num(f.tokens_per_request, 0, 7),
            num(f.prompt_tokens_per_request, 0, 7)
        )),
        Line::from(format!("e2e mean  {} s", num(f.mean_latency, 1, 8))),
        Line::from(format!("by reason {}", reasons.join(" · "))).dim(),
    ];
    let mut block = Block::bordered().title(" Requests ");
    if let Some(rejected) = operator::requests_bottom(f, area.width) {
        block = block.title_bottom(rejected);
    }
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

pub(super) fn running_panel(frame: &mut Frame<'_>, area: Rect, f: &Figures, h: &History) {
    let mut block = Block::bordered().title(operator::running_title(f, area.width));
    if let Some(waiting) = operator::waiting_bottom(f, area.width) {
        block = block.title_bottom(waiting);
    }
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let [text, running, waiting] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(1), Constraint::Length(1)]).areas(inner);
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(
                format!("run {}", num(f.running, 0, 6)),
                Style::new().fg(Color::Cyan),
            ),
            Span::raw("  "),
            Span::styled(
                format!("wait {}", num(f.waiting, 0, 6)),
                Style::new().fg(Color::Magenta),
            ),
        ])),
        text,
    );
    spark(frame, running, &h.running, None, Color::Cyan);
    spark(frame, waiting, &h.waiting, None, Color::Magenta);
}

pub(super) fn cache_panel(frame: &mut Frame<'_>, area: Rect, f: &Figures) {
    let mut block = Block::bordered().title(operator::cache_title(f, area.width));
    if let Some(bottom) = operator::cache_bottom(f, area.width) {
        block = block.title_bottom(bottom);
    }
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let [label, gauge, rest] =
        Layout::vertical([Constraint::Length(1), Constraint::Length(1), Constraint::Min(0)]).areas(inner);
    frame.render_widget(Paragraph::new("KV cache"), label);
    let usage = f.kv_usage.unwrap_or(0.0).clamp(0.0, 1.0);
    let color = if usage > 0.9 { Color::Red } else { Color::Blue };
    frame.render_widget(
        Gauge::default()
            .gauge_style(Style::new().fg(color).bg(Color::DarkGray))
            .ratio(usage)
            .label(format!("{}%", percent(f.kv_usage))),
        gauge,
    );
    let spec = f.spec_decode.map_or_else(
        || "-".to_string(),
        |s| {
            format!(
                "{}% len {}",
                percent(s.acceptance_rate),
                num(s.mean_acceptance_length, 2, 5)
            )
        },
    );
    let lines = vec![
        Line::from(format!("prefix hit {}%", percent(f.prefix_hit_rate))),
        Line::from(format!("spec accept {spec}")),
    ];
    frame.render_widget(Paragraph::new(lines), rest);
}

/// Quantiles per latency, its `slo` share with `--slo`, and the mean time per phase beside
/// them where the panel is wide enough for it (at 100 columns; not at 80).
pub(super) fn latency_panel(frame: &mut Frame<'_>, area: Rect, f: &Figures) {
    let with_slo = !f.slo.is_empty();
    let row = |name: &'static str, key: &str, q: &crate::figures::Quantiles| {
        let mut cells = vec![
            Cell::from(name),
            Cell::from(ms(q.p50)),
            Cell::from(ms(q.p95)),
            Cell::from(ms(q.p99)),
        ];
        if with_slo {
            cells.push(Cell::from(operator::slo_cell(f, key).unwrap_or_default()));
        }
        Row::new(cells)
    };
    // Values are at most 7 characters (`2560.0s`), a space between columns.
    let mut widths = vec![
        Constraint::Length(4),
        Constraint::Length(7),
        Constraint::Length(7),
        Constraint::Length(7),
    ];
    let mut header = vec!["", "p50", "p95", "p99"];
    if with_slo {
        widths.push(Constraint::Length(7));
        header.push("slo");
    }
    // The table's width: its columns and a space between each two.
    let table_width: u16 = if with_slo { 36 } else { 28 };
    let block = Block::bordered().title(operator::latency_title(f, area.width));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let table = Table::new(
        [
            row("TTFT", "ttft", &f.ttft),
            row("ITL", "itl", &f.itl),
            row("E2E", "e2e", &f.e2e),
        ],
        widths,
    )
    .header(Row::new(header).style(Style::new().add_modifier(Modifier::BOLD)));
    let phases = operator::phase_lines(f);
    let phases_width = phases.iter().map(|l| l.chars().count()).max().unwrap_or(0) as u16;
    if phases.is_empty() || inner.width < table_width + 1 + phases_width {
        frame.render_widget(table, inner);
        return;
    }
    let [table_area, phases_area] =
        Layout::horizontal([Constraint::Length(table_width + 1), Constraint::Min(0)]).areas(inner);
    frame.render_widget(table, table_area);
    let lines: Vec<Line<'_>> = phases.into_iter().map(|l| Line::from(l).dim()).collect();
    frame.render_widget(Paragraph::new(lines), phases_area);
}

/// Prompt tokens/s: all, computed here (the prefix cache's misses) and cached; by source
/// where the server says it (a local cache hit, a KV transfer from another instance).
pub(super) fn prompt_panel(frame: &mut Frame<'_>, area: Rect, f: &Figures) {
    let inner = usize::from(area.width.saturating_sub(2));
    // The longest form of a line that fits.
    let fitted = |forms: Vec<String>| {
        let last = forms.last().cloned().unwrap_or_default();
        forms
            .into_iter()
            .find(|l| l.chars().count() <= inner)
            .unwrap_or(last)
    };
    let computed = format!("computed  {} tok/s", num(f.prompt_computed, 1, 9));
    let cached = format!("cached    {} tok/s", num(f.prompt_cached, 1, 9));
    let lines = match f.prompt_sources {
        Some(s) => vec![
            format!("prompt    {} tok/s", num(f.prompt.window, 1, 9)),
            fitted(vec![format!("{computed} · cache misses"), computed]),
            fitted(vec![
                format!(
                    "cache hit {} · transferred {} tok/s",
                    num(s.local_cache_hit, 1, 9),
                    num(s.external_kv_transfer, 1, 9)
                ),
                format!(
                    "hit {} · xfer {}",
                    num(s.local_cache_hit, 1, 7),
                    num(s.external_kv_transfer, 1, 7)
                ),
                cached,
            ]),
        ],
        None => vec![
            format!("prompt    {} tok/s", num(f.prompt.window, 1, 9)),
            computed,
            cached,
        ],
    };
    let lines: Vec<Line<'_>> = lines.into_iter().map(Line::from).collect();
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(" Prompt ")),
        area,
    );
}

pub(super) fn groups_panel(frame: &mut Frame<'_>, area: Rect, label: &str, rows: &[(String, Figures)]) {
    let width = usize::from(area.width / 3).max(12);
    let table = Table::new(
        rows.iter().map(|(value, f)| {
            Row::new(vec![
                Cell::from(keep_end(value, width)),
                Cell::from(num(f.generation.window, 1, 9)),
                Cell::from(num(f.finished, 2, 7)),
                Cell::from(num(f.running, 0, 6)),
                Cell::from(num(f.waiting, 0, 6)),
                Cell::from(format!("{}%", percent(f.kv_usage))),
                Cell::from(f.load.label()),
            ])
        }),
        [
            Constraint::Length(width as u16),
            Constraint::Length(9),
            Constraint::Length(7),
            Constraint::Length(6),
            Constraint::Length(6),
            Constraint::Length(6),
            Constraint::Min(8),
        ],
    )
    .header(Row::new([label, "gen/s", "req/s", "run", "wait", "kv", "load"]).bold())
    .block(Block::bordered().title(format!(" By {label} ")));
    frame.render_widget(table, area);
}
