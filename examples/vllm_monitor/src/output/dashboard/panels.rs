//! The panels of figures: the headline with its sparklines, requests, running and
//! waiting, the cache, latencies, prompt tokens, GPUs, progress and the `--by` table.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell, Gauge, Paragraph, Row, Sparkline, Table};
use ratatui::Frame;

use super::operator;
use super::window::{Coverage, Timing};
use crate::figures::slo::Latency;
use crate::figures::{Figures, Load, PREFIX_HIT_RATE, SPEC_DECODE};
use crate::output::labels;
use crate::snapshot::{History, Progress, ScreenGroups};
use crate::text::visible::visible;
use crate::text::{duration, exposed_or_na, keep_end, keep_start, ms, num, percent, NOT_EXPOSED};

/// GPUs (a DCGM exporter among the URLs, or `--gpus`): what they are and draw, then what a
/// token costs in GPU time, energy and money.
pub(super) fn gpu_panel(frame: &mut Frame<'_>, area: Rect, f: &Figures) {
    let g = f.gpus.as_ref();
    // The model is DCGM's label value.
    let model = g.map(|g| visible(&g.what()).into_owned());
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

/// The run's progress: a box at the designed size, one line (its label says what it is)
/// where the layout gives it one row.
pub(super) fn progress_panel(frame: &mut Frame<'_>, area: Rect, p: &Progress) {
    let label = format!(
        "{}/{} requests · ETA {} by requests/s, {} by tokens",
        num(Some(p.finished), 0, 9),
        p.target,
        duration(p.eta_requests_s),
        duration(p.eta_tokens_s)
    );
    let mut gauge = Gauge::default()
        .gauge_style(Style::new().fg(Color::Cyan).bg(Color::DarkGray))
        .ratio(p.fraction())
        .label(label);
    if area.height >= 3 {
        gauge = gauge.block(Block::bordered().title(" Progress "));
    }
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
    let block = headline_block(cover);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    // Two rows (a small terminal): the four figures two to a line, beside the sparklines.
    let compact = inner.height < 4;
    let text_width = if compact { 38 } else { 30 };
    let [text, charts] =
        Layout::horizontal([Constraint::Length(text_width), Constraint::Min(10)]).areas(inner);
    frame.render_widget(Paragraph::new(headline_lines(f, timing, compact)), text);
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

/// The headline's border: what the window figures cover in its title (in a warning colour
/// when shorter than asked), what an interval waits for at its bottom.
fn headline_block(cover: &Coverage) -> Block<'static> {
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
    block
}

/// The headline's figures: the window rate, the EWMA, PromQL's `rate()` and tokens/s per
/// request, four lines or two (`compact`).
fn headline_lines(f: &Figures, timing: &Timing, compact: bool) -> Vec<Line<'static>> {
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
    let lines = if compact {
        vec![
            Line::from(vec![
                Span::styled(value, Style::new().bold().fg(Color::Green)),
                Span::raw(format!(" tok/s  {ewma} {}", num(f.generation.ewma, 1, 10))),
            ]),
            Line::from(format!(
                "rate() {}  per req {} tok/s",
                num(f.generation.promql, 1, 10),
                num(f.in_flight.tokens_per_s_per_request, 2, 8)
            )),
        ]
    } else {
        vec![
            Line::from(vec![
                Span::styled(value, Style::new().bold().fg(Color::Green)),
                Span::raw(" tok/s"),
            ]),
            Line::from(format!("{ewma:<w$}{}", num(f.generation.ewma, 1, 10))),
            Line::from(format!("{:<w$}{}", "rate()", num(f.generation.promql, 1, 10))),
            Line::from(format!(
                "{:<w$}{} tok/s",
                "per req",
                num(f.in_flight.tokens_per_s_per_request, 2, 8)
            )),
        ]
    };
    lines
}

/// `load`: the figures' with the signals' verdict; `load_instead`: what the load label
/// says when there is nothing new to judge.
pub(super) fn requests_panel(
    frame: &mut Frame<'_>,
    area: Rect,
    f: &Figures,
    load: Load,
    load_instead: Option<&'static str>,
) {
    let width = usize::from(area.width.saturating_sub(2));
    let load_style = match load {
        _ if load_instead.is_some() => Style::new().fg(Color::Yellow),
        Load::Steady => Style::new().fg(Color::Green),
        Load::RampingUp | Load::QueueGrowing => Style::new().fg(Color::Yellow).bold(),
        Load::Stalled => Style::new().fg(Color::Red).bold(),
        Load::Unknown => Style::new(),
    };
    // The verdict in the title, where it fits at any width beside the figures.
    let load = load_instead.unwrap_or(load.label());
    let mut title = vec![Span::raw(" Requests ")];
    if !load.is_empty() {
        title.extend([Span::raw("· "), Span::styled(load, load_style), Span::raw(" ")]);
    }
    // Most important first: a small terminal shows the top lines only.
    let lines = vec![
        Line::from(format!("finished  {} req/s", num(f.requests.finished, 2, 8))),
        Line::from(format!("steady    {} req/s", num(f.requests.steady_rate, 2, 8))),
        Line::from(format!(
            "tok/req   {} gen · {} prompt",
            num(f.requests.tokens_per_request, 0, 5),
            num(f.requests.prompt_tokens_per_request, 0, 5)
        )),
        Line::from(format!("e2e mean  {} s", num(f.requests.mean_latency, 1, 8))),
        Line::from(reasons_line(f, width)).dim(),
    ];
    let mut block = Block::bordered().title(Line::from(title));
    if let Some(rejected) = operator::requests_bottom(f, area.width) {
        block = block.title_bottom(rejected);
    }
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// `by reason stop 0.90 · length 0.10` within `width`: the busiest reasons that fit whole,
/// and how many others there are (`+2`), never a reason cut.
fn reasons_line(f: &Figures, width: usize) -> String {
    let mut reasons: Vec<&(String, f64)> = f
        .requests
        .finished_by_reason
        .iter()
        .filter(|(_, r)| *r > 0.0)
        .collect();
    reasons.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut line = String::from("by reason");
    for (shown, (reason, rate)) in reasons.iter().enumerate() {
        let part = format!(
            "{} {} {rate:.2}",
            if shown == 0 { "" } else { " ·" },
            visible(reason)
        );
        let others = reasons.len() - shown - 1;
        let more = if others > 0 {
            format!(" +{others}")
        } else {
            String::new()
        };
        if line.chars().count() + part.chars().count() + more.chars().count() > width {
            line += &format!(" +{}", reasons.len() - shown);
            break;
        }
        line += &part;
    }
    line
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
                format!("run {}", num(f.in_flight.running, 0, 6)),
                Style::new().fg(Color::Cyan),
            ),
            Span::raw("  "),
            Span::styled(
                format!("wait {}", num(f.in_flight.waiting, 0, 6)),
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
    frame.render_widget(
        Paragraph::new(if f.capacity.exposes("kv_cache_usage") {
            usage_bar(f.in_flight.kv_usage, gauge.width)
        } else {
            Line::from(format!("usage {NOT_EXPOSED}"))
        }),
        gauge,
    );
    let mut lines = vec![Line::from(format!(
        "prefix hit {}",
        exposed_or_na(f.capacity.exposes(PREFIX_HIT_RATE), || {
            format!("{}%", percent(f.in_flight.prefix_hit_rate))
        })
    ))];
    match f.spec_decode {
        Some(s) => lines.extend([
            Line::from(format!("spec accept {}%", percent(s.acceptance_rate))),
            Line::from(format!("spec length {}", num(s.mean_acceptance_length, 2, 5))),
        ]),
        None => lines.push(Line::from(format!(
            "spec accept {}",
            exposed_or_na(f.capacity.exposes(SPEC_DECODE), || "-".to_string())
        ))),
    }
    frame.render_widget(Paragraph::new(lines), rest);
}

/// A usage bar and its percentage beside it (`█████░░░░░ 37.5%`), never over each other.
pub(super) fn usage_bar(usage: Option<f64>, width: u16) -> Line<'static> {
    let text = usage.map_or_else(|| "-".to_string(), |u| format!("{}%", percent(Some(u))));
    let bar = usize::from(width).saturating_sub(text.chars().count() + 1);
    let ratio = usage.unwrap_or(0.0).clamp(0.0, 1.0);
    let filled = ((ratio * bar as f64).round() as usize).min(bar);
    let color = if ratio > 0.9 { Color::Red } else { Color::Blue };
    Line::from(vec![
        Span::styled("█".repeat(filled), Style::new().fg(color)),
        Span::styled("░".repeat(bar - filled), Style::new().fg(Color::DarkGray)),
        Span::raw(format!(" {text}")),
    ])
}

/// Quantiles per latency, its `slo` share with `--slo`, and the mean time per phase beside
/// them where the panel is wide enough for it (at 100 columns; not at 80).
pub(super) fn latency_panel(frame: &mut Frame<'_>, area: Rect, f: &Figures) {
    let with_slo = !f.slo.is_empty();
    let row = |name: &'static str, latency: Latency, q: &crate::figures::Quantiles| {
        let key = latency.key();
        let shown = f.capacity.exposes(latency.json_name());
        let cell = |v: Option<f64>| Cell::from(exposed_or_na(shown, || ms(v)));
        let mut cells = vec![Cell::from(name), cell(q.p50), cell(q.p95), cell(q.p99)];
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
            row("TTFT", Latency::Ttft, &f.ttft),
            row("ITL", Latency::Itl, &f.itl),
            row("E2E", Latency::E2e, &f.e2e),
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
    let computed = format!("computed  {} tok/s", num(f.prompt_parts.computed, 1, 9));
    let cached = format!("cached    {} tok/s", num(f.prompt_parts.cached, 1, 9));
    let lines = match f.prompt_parts.sources {
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

/// A row per group shown, each named distinctly as plain mode names them (`labels`): the
/// shortest form that tells the groups apart, else a number and the end of the name; the
/// others' row last ("+ 199,950 others"); the title says how many rows fit when not all do.
pub(super) fn groups_panel(frame: &mut Frame<'_>, area: Rect, screen: &ScreenGroups<'_>) {
    let (label, rows) = (screen.label, &screen.rows);
    let width = usize::from(area.width / 3).max(12);
    let names: Vec<String> = rows
        .iter()
        .map(|(value, _)| match label {
            "url" => visible(&labels::readable_url(value)).into_owned(),
            _ => visible(value).into_owned(),
        })
        .collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let (short, numbered) = labels::distinct(&refs, width);
    let mut names: Vec<String> = match numbered {
        true => short
            .iter()
            .zip(&names)
            .map(|(number, name)| {
                format!(
                    "{number} {}",
                    keep_end(name, width.saturating_sub(number.len() + 1))
                )
            })
            .collect(),
        false => short,
    };
    let mut figures: Vec<&Figures> = rows.iter().map(|(_, f)| f).collect();
    if let Some(others) = screen.others {
        names.push(keep_start(&others.label(), width));
        figures.push(&others.figures);
    }
    let fits = usize::from(area.height.saturating_sub(3));
    let all = rows.len() + screen.others.map_or(0, |o| o.count);
    let title = if fits < figures.len() {
        format!(" By {label} · {fits} of {} shown ", crate::top::thousands(all))
    } else {
        format!(" By {label} ")
    };
    let table = Table::new(
        figures.into_iter().zip(names).map(|(f, name)| {
            Row::new(vec![
                Cell::from(name),
                Cell::from(num(f.generation.window, 1, 9)),
                Cell::from(num(f.requests.finished, 2, 7)),
                Cell::from(num(f.in_flight.running, 0, 6)),
                Cell::from(num(f.in_flight.waiting, 0, 6)),
                Cell::from(exposed_or_na(f.capacity.exposes("kv_cache_usage"), || {
                    format!("{}%", percent(f.in_flight.kv_usage))
                })),
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
    .block(Block::bordered().title(title));
    frame.render_widget(table, area);
}
