//! The live terminal dashboard (ratatui): generation tokens/s as the headline with
//! sparklines of the run, requests and the figures derived from them, running and
//! waiting, the KV cache, latencies, servers and an event log. Fits 80x24, is designed
//! for 100x30, and gives extra rows to the sparklines and the log. The headline says what
//! its window figures cover (`window.rs`), as plain mode's `*` and `!` lines do.
//!
//! Here the [`Output`] and the layout; the panels of figures in `panels.rs`, the servers
//! and the event log in `servers.rs`.

mod keys;
mod operator;
#[cfg(test)]
mod operator_tests;
mod panels;
mod servers;
#[cfg(test)]
mod tests;
mod window;

use std::io::Stdout;
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc};

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use ratatui::{DefaultTerminal, Frame};

use super::plain::Plain;
use super::{Output, Run};
use crate::figures::Figures;
use crate::interval::Snapshot;
use crate::scrape::Message;
use crate::summary::Summary;
use crate::target::Event;
use panels::{
    cache_panel, gpu_panel, groups_panel, headline, latency_panel, progress_panel, prompt_panel,
    requests_panel, running_panel,
};
use servers::{events_panel, server_lines};
use window::{Coverage, Timing};

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
    /// Takes the terminal (it is restored by [`Output::summary`], and by ratatui's panic
    /// hook after a panic) and reads its keys into `tx` until `stop`.
    pub fn new(progress: bool, tx: mpsc::Sender<Message>, stop: Arc<AtomicBool>) -> Dashboard {
        keys::spawn(tx, stop);
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
    let timing = Timing::of(run);
    let cover = Coverage::of(run);
    let servers = server_lines(run.servers, timing.interval_s);
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
    headline(frame, headline_area, f, run.history, &cover, &timing);
    let [requests, running, cache] = Layout::horizontal([
        Constraint::Percentage(40),
        Constraint::Percentage(30),
        Constraint::Percentage(30),
    ])
    .areas(middle);
    requests_panel(frame, requests, f, cover.load);
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
