//! The live terminal dashboard (ratatui): generation tokens/s as the headline with
//! sparklines of the run, requests and the figures derived from them, running and
//! waiting, the KV cache, latencies, servers and an event log. Fits 80x24, is designed
//! for 100x30, and gives extra rows to the sparklines and the log.

use std::io::Stdout;

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell, Gauge, Paragraph, Row, Sparkline, Table, Wrap};
use ratatui::{DefaultTerminal, Frame};

use super::plain::Plain;
use super::{duration, keep_end, ms, num, percent, Output, Run};
use crate::figures::{Figures, Load};
use crate::gpus::Gpus;
use crate::interval::{History, Progress, Snapshot};
use crate::summary::Summary;
use crate::target::{Event, EventKind, ServerRow, Status};

const KEYS: &str = " q quit ";

/// The dashboard as an [`Output`]: it owns the terminal (raw mode, the alternate screen)
/// until the summary, and then prints the run's notes, events and summary as plain lines.
pub struct Dashboard {
    terminal: Option<DefaultTerminal>,
    /// Something changed since the last draw.
    dirty: bool,
    notes: Vec<String>,
    /// Plain lines once the terminal is given back.
    after: Plain<Stdout>,
}

impl Dashboard {
    /// Takes the terminal; it is restored by [`Output::summary`], and by ratatui's panic
    /// hook after a panic.
    pub fn new(progress: bool) -> Dashboard {
        Dashboard {
            terminal: Some(ratatui::init()),
            dirty: true,
            notes: Vec::new(),
            after: Plain::new(std::io::stdout(), progress),
        }
    }
}

impl Output for Dashboard {
    fn start(&mut self, _run: &Run<'_>, notes: &[String]) {
        self.notes.extend_from_slice(notes);
    }

    fn event(&mut self, _run: &Run<'_>, _elapsed: f64, _event: &Event) {
        self.dirty = true;
    }

    fn interval(&mut self, _run: &Run<'_>, _snapshot: &Snapshot) {
        self.dirty = true;
    }

    fn note(&mut self, text: &str) {
        match self.terminal {
            Some(_) => self.notes.push(text.to_string()),
            None => self.after.note(text),
        }
    }

    fn refresh(&mut self, run: &Run<'_>) -> Result<(), String> {
        let Some(terminal) = self.terminal.as_mut().filter(|_| self.dirty) else {
            return Ok(());
        };
        self.dirty = false;
        match terminal.draw(|frame| draw(frame, run)) {
            Ok(_) => Ok(()),
            Err(e) => {
                self.terminal = None;
                ratatui::restore();
                Err(format!("cannot draw: {e}"))
            }
        }
    }

    fn resized(&mut self) {
        self.dirty = true;
    }

    fn summary(&mut self, run: &Run<'_>, summary: &Summary) {
        if self.terminal.take().is_some() {
            ratatui::restore();
        }
        self.after.preamble(run, &std::mem::take(&mut self.notes));
        for (elapsed, e) in run.events {
            self.after.event_line(*elapsed, e);
        }
        self.after.summary_lines(summary);
    }

    fn closed(&self) -> bool {
        false
    }
}

/// The rows each panel gets at this size; 0 for a panel not shown.
struct Heights {
    headline: u16,
    gpus: u16,
    progress: u16,
    groups: u16,
    servers: u16,
}

impl Heights {
    fn new(area: Rect, run: &Run<'_>, servers: usize) -> Heights {
        // Rows beyond 30 go to the sparklines, the groups and the log.
        let extra = area.height.saturating_sub(30);
        let snapshot = run.snapshot;
        let groups = snapshot
            .and_then(|s| s.groups.as_ref())
            .map(|(_, rows)| rows.len());
        let gpus = snapshot.is_some_and(|s| s.figures.gpus.is_some() || s.figures.per_token.gpus.is_some());
        Heights {
            headline: 6 + extra / 3,
            gpus: if gpus { 4 } else { 0 },
            progress: if snapshot.and_then(|s| s.progress).is_some() {
                3
            } else {
                0
            },
            groups: groups.map_or(0, |n| (n as u16 + 3).min(8 + extra / 3)),
            servers: (servers as u16 + 2).min(6),
        }
    }
}

pub fn draw(frame: &mut Frame<'_>, run: &Run<'_>) {
    let area = frame.area();
    let empty = Figures::default();
    let f = run.snapshot.map_or(&empty, |s| &s.figures);
    let servers = server_lines(run.servers);
    let h = Heights::new(area, run, servers.len());
    let [top, headline_area, middle, lower, gpus_area, progress_area, groups_area, servers_area, events_area] =
        Layout::vertical([
            Constraint::Length(1),
            Constraint::Length(h.headline),
            Constraint::Length(7),
            Constraint::Length(6),
            Constraint::Length(h.gpus),
            Constraint::Length(h.progress),
            Constraint::Length(h.groups),
            Constraint::Length(h.servers),
            Constraint::Min(3),
        ])
        .areas(area);

    title(frame, top, run);
    headline(frame, headline_area, f, run.history);
    let [requests, running, cache] = Layout::horizontal([
        Constraint::Percentage(40),
        Constraint::Percentage(30),
        Constraint::Percentage(30),
    ])
    .areas(middle);
    requests_panel(frame, requests, f);
    running_panel(frame, running, f, run.history);
    cache_panel(frame, cache, f);
    let [latency, prompt] =
        Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(lower);
    latency_panel(frame, latency, f);
    prompt_panel(frame, prompt, f);
    if h.gpus > 0 {
        gpu_panel(frame, gpus_area, f);
    }
    if let Some(p) = run.snapshot.and_then(|s| s.progress) {
        progress_panel(frame, progress_area, &p);
    }
    if let Some((label, rows)) = run.snapshot.and_then(|s| s.groups.as_ref()) {
        groups_panel(frame, groups_area, label, rows);
    }
    frame.render_widget(
        Paragraph::new(servers).block(Block::bordered().title(" Servers ")),
        servers_area,
    );
    events_panel(frame, events_area, run.events);
}

/// GPUs (a DCGM exporter among the URLs, or `--gpus`): what they are and draw, then what a
/// token costs in GPU time, energy and money.
fn gpu_panel(frame: &mut Frame<'_>, area: Rect, f: &Figures) {
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

fn progress_panel(frame: &mut Frame<'_>, area: Rect, p: &Progress) {
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

fn title(frame: &mut Frame<'_>, area: Rect, run: &Run<'_>) {
    let elapsed = run.snapshot.map_or(0.0, |s| s.elapsed);
    let mut spans = vec![Span::styled(" vllm_monitor ", Style::new().bold().reversed())];
    // Warnings first: they must not be cut off by a narrow terminal.
    for warning in run.warnings {
        spans.push(Span::styled(
            format!(" {warning} "),
            Style::new().bold().fg(Color::White).bg(Color::Red),
        ));
    }
    spans.push(Span::raw(format!(" {} · {:.0}s elapsed", run.setup, elapsed)));
    let line = Line::from(spans);
    let [left, right] =
        Layout::horizontal([Constraint::Min(0), Constraint::Length(KEYS.len() as u16)]).areas(area);
    frame.render_widget(Paragraph::new(line), left);
    frame.render_widget(Paragraph::new(Span::styled(KEYS, Style::new().reversed())), right);
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

fn headline(frame: &mut Frame<'_>, area: Rect, f: &Figures, h: &History) {
    let block = Block::bordered().title(" Generation tokens/s ");
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let [text, charts] = Layout::horizontal([Constraint::Length(30), Constraint::Min(10)]).areas(inner);
    let value = f
        .generation
        .window
        .map_or_else(|| "-".into(), |v| format!("{v:.1}"));
    let lines = vec![
        Line::from(vec![
            Span::styled(value, Style::new().bold().fg(Color::Green)),
            Span::raw(" tok/s"),
        ]),
        Line::from(format!("EWMA    {}", num(f.generation.ewma, 1, 10))),
        Line::from(format!("rate()  {}", num(f.generation.promql, 1, 10))),
        Line::from(format!("per req {} tok/s", num(f.tokens_per_s_per_request, 2, 8))),
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

fn requests_panel(frame: &mut Frame<'_>, area: Rect, f: &Figures) {
    let reasons: Vec<String> = f
        .finished_by_reason
        .iter()
        .filter(|(_, rate)| *rate > 0.0)
        .map(|(reason, rate)| format!("{reason} {rate:.2}"))
        .collect();
    let load_style = match f.load {
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
            Span::styled(f.load.label(), load_style),
        ]),
        Line::from(format!(
            "per req   {} gen · {} prompt tok",
            num(f.tokens_per_request, 0, 7),
            num(f.prompt_tokens_per_request, 0, 7)
        )),
        Line::from(format!("e2e mean  {} s", num(f.mean_latency, 1, 8))),
        Line::from(format!("by reason {}", reasons.join(" · "))).dim(),
    ];
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(" Requests ")),
        area,
    );
}

fn running_panel(frame: &mut Frame<'_>, area: Rect, f: &Figures, h: &History) {
    let block = Block::bordered().title(" Running / waiting ");
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

fn cache_panel(frame: &mut Frame<'_>, area: Rect, f: &Figures) {
    let block = Block::bordered().title(" Cache / decoding ");
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

fn latency_panel(frame: &mut Frame<'_>, area: Rect, f: &Figures) {
    let row = |name: &'static str, q: &crate::figures::Quantiles| {
        Row::new(vec![
            Cell::from(name),
            Cell::from(ms(q.p50)),
            Cell::from(ms(q.p95)),
            Cell::from(ms(q.p99)),
        ])
    };
    let table = Table::new(
        [row("TTFT", &f.ttft), row("ITL", &f.itl), row("E2E", &f.e2e)],
        [
            Constraint::Length(6),
            Constraint::Length(9),
            Constraint::Length(9),
            Constraint::Length(9),
        ],
    )
    .header(Row::new(["", "p50", "p95", "p99"]).style(Style::new().add_modifier(Modifier::BOLD)))
    .block(Block::bordered().title(" Latency "));
    frame.render_widget(table, area);
}

fn prompt_panel(frame: &mut Frame<'_>, area: Rect, f: &Figures) {
    let lines = vec![
        Line::from(format!("prompt    {} tok/s", num(f.prompt.window, 1, 9))),
        Line::from(format!("computed  {} tok/s", num(f.prompt_computed, 1, 9))),
        Line::from(format!("cached    {} tok/s", num(f.prompt_cached, 1, 9))),
    ];
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(" Prompt ")),
        area,
    );
}

fn groups_panel(frame: &mut Frame<'_>, area: Rect, label: &str, rows: &[(String, Figures)]) {
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

/// One line per URL, or per instance in a federation.
fn server_lines(targets: &[ServerRow]) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    for t in targets {
        let (mark, color) = match &t.status {
            Status::Ok(_) => ("●", Color::Green),
            Status::BadLines { .. } => ("●", Color::Yellow),
            Status::Waiting => ("○", Color::Gray),
            _ => ("✗", Color::Red),
        };
        let restarted = t
            .instances
            .get("")
            .and_then(|i| i.last_restart)
            .map(|at| format!(" · restarted {} UTC", at.format("%H:%M:%S")))
            .unwrap_or_default();
        let format = match t.format {
            Some(promrate::Format::OpenMetrics) => " · openmetrics",
            _ => "",
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{mark} "), Style::new().fg(color)),
            Span::raw(format!("{} ", t.url)),
            Span::styled(t.status.to_string(), Style::new().fg(color)),
            Span::raw(if t.skipped > 0 {
                format!(
                    "{restarted}{format} · {} error(s) · {} page(s) skipped",
                    t.errors, t.skipped
                )
            } else {
                format!("{restarted}{format} · {} error(s)", t.errors)
            }),
        ]));
        // What needs attention first: a small terminal shows only the top lines.
        let mut instances: Vec<_> = t.instances.iter().filter(|(name, _)| !name.is_empty()).collect();
        instances.sort_by_key(|(_, i)| (!i.stale, i.last_restart.is_none()));
        for (name, instance) in instances {
            let (mark, color, state) = if instance.stale {
                ("✗", Color::Red, "stale")
            } else {
                ("●", Color::Green, "ok")
            };
            let restarted = instance
                .last_restart
                .map(|at| format!(" · restarted {} UTC", at.format("%H:%M:%S")))
                .unwrap_or_default();
            lines.push(Line::from(vec![
                Span::raw("  "),
                Span::styled(format!("{mark} "), Style::new().fg(color)),
                Span::raw(format!("instance {name} ")),
                Span::styled(state, Style::new().fg(color)),
                Span::raw(restarted),
            ]));
        }
    }
    lines
}

/// The newest events first, each message wrapped within the box (a cut message hid the
/// end of a restart's or a fault's reason).
fn events_panel(frame: &mut Frame<'_>, area: Rect, events: &[(f64, Event)]) {
    let rows = usize::from(area.height.saturating_sub(2));
    let lines: Vec<Line<'_>> = events
        .iter()
        .rev()
        .take(rows)
        .map(|(elapsed, e)| {
            let color = match e.kind {
                EventKind::Restart | EventKind::Imbalance | EventKind::Slow => Color::Yellow,
                EventKind::Fault | EventKind::Stale | EventKind::Stall => Color::Red,
                EventKind::Recovered | EventKind::Back => Color::Green,
            };
            Line::from(vec![
                Span::raw(format!("{elapsed:6.1}s ")),
                Span::styled(format!("{:<9} ", e.kind.as_str()), Style::new().fg(color).bold()),
                Span::raw(format!("{}: {}", e.source, e.message)),
            ])
        })
        .collect();
    let title = if events.is_empty() {
        " Events (none yet) ".to_string()
    } else {
        format!(" Events ({}) ", events.len())
    };
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(Block::bordered().title(title)),
        area,
    );
}

#[cfg(test)]
mod tests {
    use chrono::TimeDelta;
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    use super::*;
    use crate::simulator::tests::monitor;
    use crate::target::Target;
    use crate::simulator::Simulation;

    /// The screen after 20 s of the simulator (restart at 10 s), as text rows.
    fn screen(width: u16, height: u16, by: Option<&str>) -> Vec<String> {
        let sim = Simulation::new(Some(10.0));
        let (target, snapshots, events) = monitor(&sim, 20, TimeDelta::seconds(8));
        let targets = [target];
        let mut history = History::default();
        let mut last = None;
        for (_, snapshot) in snapshots {
            let mut snapshot = snapshot;
            if let Some(label) = by {
                let sources: Vec<_> = targets
                    .iter()
                    .map(|t| crate::figures::Source {
                        tracker: &t.tracker,
                        at: t.last_ok.unwrap(),
                        url: &t.url,
                    })
                    .collect();
                let groups = crate::figures::grouped(&sources, label, TimeDelta::seconds(8));
                snapshot.groups = Some((label.to_string(), groups));
            }
            history.push(&snapshot);
            last = Some(snapshot);
        }
        history.restarts = events.iter().map(|(t, _)| *t).collect();
        let run = Run {
            started: chrono::DateTime::from_timestamp(0, 0).unwrap(),
            setup: "every 1s · window 8s · built-in simulator",
            warnings: &[],
            snapshot: last.as_ref(),
            history: &history,
            servers: &targets.iter().map(ServerRow::of).collect::<Vec<_>>(),
            events: &events,
        };
        rows_of(&run, width, height)
    }

    /// `run` drawn at `width` x `height`, as text rows.
    fn rows_of(run: &Run<'_>, width: u16, height: u16) -> Vec<String> {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        terminal.draw(|frame| draw(frame, run)).unwrap();
        let buffer = terminal.backend().buffer();
        (0..height)
            .map(|y| (0..width).map(|x| buffer[(x, y)].symbol().to_string()).collect())
            .collect()
    }

    fn has(rows: &[String], text: &str) -> bool {
        rows.iter().any(|r| r.contains(text))
    }

    const SPARK: &[char] = &['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

    /// With a DCGM exporter among the URLs, the GPU panel fits the 100x30 layout beside every
    /// other panel: GPUs and model, power, utilisation; tokens per GPU, joules per token and
    /// the cost of a million tokens.
    #[test]
    fn the_gpu_panel_fits_the_designed_size() {
        use crate::gpus::GpuSettings;
        let sim = Simulation::new(None);
        let start =
            chrono::DateTime::<chrono::Utc>::from_timestamp_millis((sim.started_unix * 1000.0) as i64)
                .unwrap();
        let mut targets = [
            crate::target::Target::new("sim".into(), TimeDelta::minutes(15)),
            crate::target::Target::new("dcgm".into(), TimeDelta::minutes(15)),
        ];
        let mut history = History::default();
        let mut last = None;
        for second in 0..=20i64 {
            let (t, at) = (second as f64, start + TimeDelta::seconds(second));
            crate::simulator::tests::scrape_with_gpus(&sim, &mut targets, t, at);
            let settings = GpuSettings {
                gpus: None,
                gpu_hour_price: Some(2.5),
            };
            let snapshot = Snapshot::at(&targets, TimeDelta::seconds(16), at, None, None, t)
                .with_gpu_settings(&settings);
            history.push(&snapshot);
            last = Some(snapshot);
        }
        let run = Run {
            started: chrono::DateTime::from_timestamp(0, 0).unwrap(),
            setup: "every 1s · window 16s",
            warnings: &[],
            snapshot: last.as_ref(),
            history: &history,
            servers: &targets.iter().map(ServerRow::of).collect::<Vec<_>>(),
            events: &[],
        };
        let rows = rows_of(&run, 100, 30);
        let text = rows.join("\n");
        for needle in [
            "GPUs",
            "2× NVIDIA H100 80GB HBM3",
            " W · util ",
            "tok/s per GPU",
            "J/token",
            "per M tokens",
            "KV cache",
            "Latency",
            "Servers",
            "ok (dcgm)",
        ] {
            assert!(has(&rows, needle), "{needle:?} missing at 100x30:\n{text}");
        }
    }

    #[test]
    fn the_designed_size_shows_every_panel() {
        let rows = screen(100, 30, None);
        let text = rows.join("\n");
        for needle in [
            "Generation tokens/s",
            " tok/s",
            "EWMA",
            "rate()",
            "Requests",
            "steady",
            "Running / waiting",
            "KV cache",
            "prefix hit",
            "spec accept",
            "Latency",
            "TTFT",
            "ITL",
            "E2E",
            "Prompt",
            "Progress",
            "ETA",
            "Servers",
            "ok (vllm)",
            "Events (1)",
            "restart ",
        ] {
            assert!(has(&rows, needle), "{needle:?} missing at 100x30:\n{text}");
        }
        assert!(text.chars().any(|c| SPARK.contains(&c)), "no sparkline:\n{text}");
        // The headline is the window rate, on the headline panel's first text row.
        let headline = rows.iter().find(|r| r.contains(" tok/s")).unwrap();
        let value: f64 = headline
            .trim_start_matches('│')
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!((500.0..3000.0).contains(&value), "{headline}");
    }

    #[test]
    fn a_federation_shows_a_line_and_a_row_per_instance() {
        use crate::target::tests::federation;
        let at = |s: i64| chrono::DateTime::from_timestamp(1_900_000_000 + s, 0).unwrap();
        let mut target = Target::new("http://prometheus:9090/federate".into(), TimeDelta::minutes(1));
        let mut events = Vec::new();
        for s in 0..3 {
            let without = (s == 2).then_some("127.0.0.1:39161");
            let new = target.ingest(at(s), Ok(federation(s, without)));
            events.extend(new.into_iter().map(|e| (s as f64, e)));
        }
        let targets = [target];
        let snapshot = Snapshot::at(
            &targets,
            TimeDelta::seconds(10),
            at(0),
            Some("instance"),
            None,
            2.0,
        );
        let history = History::default();
        let run = Run {
            started: chrono::DateTime::from_timestamp(0, 0).unwrap(),
            setup: "every 1s · window 10s",
            warnings: &[],
            snapshot: Some(&snapshot),
            history: &history,
            servers: &targets.iter().map(ServerRow::of).collect::<Vec<_>>(),
            events: &events,
        };
        let render = |height: u16| rows_of(&run, 100, height);
        // At 100x30 the stale instance comes first; taller, every instance has its line.
        let rows = render(30);
        let text = rows.join("\n");
        for needle in [
            "By instance",
            "instance 127.0.0.1:39161 stale",
            "stale     127.0.0.1:39161",
        ] {
            assert!(has(&rows, needle), "{needle:?} missing at 100x30:\n{text}");
        }
        // The stale instance has no row in the table: only the one on the page.
        let table_rows: Vec<&String> = rows
            .iter()
            .filter(|r| r.contains("127.0.0.1:") && !r.contains("instance ") && !r.contains("stale"))
            .collect();
        assert_eq!(table_rows.len(), 1, "{text}");
        assert!(table_rows[0].contains("127.0.0.1:43231"), "{text}");
        let tall = render(40);
        assert!(has(&tall, "instance 127.0.0.1:43231 ok"), "{}", tall.join("\n"));
    }

    #[test]
    fn small_terminals_keep_the_headline_and_large_ones_grow_the_sparklines() {
        let small = screen(80, 24, None);
        let text = small.join("\n");
        for needle in ["Generation tokens/s", " tok/s", "KV cache", "Servers"] {
            assert!(has(&small, needle), "{needle:?} missing at 80x24:\n{text}");
        }
        let large = screen(200, 50, Some("engine"));
        let text = large.join("\n");
        for needle in ["By engine", "Events (1)", "restart ", "Progress"] {
            assert!(has(&large, needle), "{needle:?} missing at 200x50:\n{text}");
        }
        let spark_rows = |rows: &[String]| {
            rows.iter()
                .filter(|r| r.chars().any(|c| SPARK.contains(&c)))
                .count()
        };
        assert!(spark_rows(&large) > spark_rows(&screen(100, 30, None)), "{text}");
    }

    #[test]
    fn at_100x30_an_event_message_is_shown_whole() {
        let sim = Simulation::new(Some(3.0));
        let (target, snapshots, events) = monitor(&sim, 5, TimeDelta::seconds(4));
        let message = &events[0].1.message;
        assert!(message.len() > 100, "a message longer than the box: {message}");
        let targets = [target];
        let history = History::default();
        let run = Run {
            started: chrono::DateTime::from_timestamp(0, 0).unwrap(),
            setup: "every 1s",
            warnings: &[],
            snapshot: snapshots.last().map(|(_, s)| s),
            history: &history,
            servers: &targets.iter().map(ServerRow::of).collect::<Vec<_>>(),
            events: &events,
        };
        let rows = rows_of(&run, 100, 30);
        let start = rows.iter().position(|r| r.contains("Events (1)")).unwrap();
        let shown: Vec<&str> = rows[start + 1..rows.len() - 1]
            .iter()
            .map(|r| r.trim_matches(|c: char| c == '│' || c.is_whitespace()))
            .collect();
        let words = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words(&shown.join(" ")).contains(&words(message)),
            "{message:?} not shown whole:\n{}",
            rows.join("\n")
        );
    }

    #[test]
    fn warnings_head_the_title_line() {
        let history = History::default();
        let warnings = ["TLS certificates are not checked (--insecure)".to_string()];
        let run = Run {
            started: chrono::DateTime::from_timestamp(0, 0).unwrap(),
            setup: "every 2s",
            warnings: &warnings,
            snapshot: None,
            history: &history,
            servers: &[],
            events: &[],
        };
        let rows = rows_of(&run, 80, 24);
        assert!(rows[0].contains("not checked (--insecure)"), "{}", rows[0]);
    }
}
