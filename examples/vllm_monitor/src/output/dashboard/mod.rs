//! The live terminal dashboard (ratatui): generation tokens/s as the headline with
//! sparklines of the run, requests and the figures derived from them, running and
//! waiting, the KV cache, latencies, servers and an event log. Fits 80x24, is designed
//! for 100x30, and gives extra rows to the sparklines and the log. The headline says what
//! its window figures cover (`window.rs`), as plain mode's `*` and `!` lines do.
//!
//! Here the [`Output`] and the layout; the panels of figures in `panels.rs`, the servers
//! and the event log in `servers.rs`.

#[cfg(test)]
mod fit_tests;
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
use crate::events::Event;
use crate::figures::Figures;
use crate::scrape::Message;
use crate::snapshot::Snapshot;
use crate::summary::Summary;
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
        if run.earlier.count > 0 {
            self.after.note(&format!(
                "({} earlier events not kept: a run keeps its newest {})",
                run.earlier.count,
                crate::events::EVENTS_KEPT
            ));
        }
        for (elapsed, e) in run.events {
            self.after.event_line(*elapsed, e);
        }
        self.after.summary_lines(summary);
    }

    fn closed(&self) -> bool {
        false
    }
}

/// The rows of the panels of figures below the headline (Requests, Running, Cache; then
/// Latency and Prompt): their lines and two borders.
const MIDDLE: u16 = 7;
const LOWER: u16 = 6;

/// The rows each panel gets at this size; 0 for a panel not shown.
#[derive(Debug, PartialEq)]
struct Heights {
    headline: u16,
    gpus: u16,
    progress: u16,
    groups: u16,
    servers: u16,
    events: u16,
}

impl Heights {
    /// The designed layout when it fits (rows beyond 30 to the sparklines, the groups and
    /// the log); else a tight one that keeps every figure panel whole: the headline on two
    /// text lines, the progress on one, then the `--by` table (a row at least), the
    /// servers and the log, each on the rows left (under three, without a box).
    fn new(area: Rect, run: &Run<'_>, servers: usize) -> Heights {
        let height = area.height;
        let snapshot = run.snapshot;
        let groups = snapshot.and_then(|s| s.screen_groups()).map(|g| {
            let rows = g.rows.len() + usize::from(g.others.is_some());
            u16::try_from(rows).unwrap_or(u16::MAX)
        });
        let has_gpus =
            snapshot.is_some_and(|s| s.figures.gpus.is_some() || s.figures.per_token.gpus.is_some());
        let has_progress = snapshot.and_then(|s| s.progress).is_some();
        let gpus = if has_gpus { 4 } else { 0 };
        let servers = (servers as u16).max(1);
        let extra = height.saturating_sub(30);
        let designed = Heights {
            headline: 6 + extra / 3,
            gpus,
            progress: if has_progress { 3 } else { 0 },
            groups: groups.map_or(0, |n| (n + 3).min(8 + extra / 3)),
            servers: (servers + 2).min(6),
            events: 3,
        };
        let used = 1
            + designed.headline
            + MIDDLE
            + LOWER
            + gpus
            + designed.progress
            + designed.groups
            + designed.servers;
        if used + designed.events <= height {
            let mut heights = Heights {
                events: height - used,
                ..designed
            };
            // The log holds three lines of messages (a restart's, at 100 columns) before
            // the progress takes a box: at 100x30 with `--target-requests` the box left it
            // two, and the restart's message was cut.
            if heights.progress == 3 && heights.events < 5 {
                heights.progress = 1;
                heights.events += 2;
            }
            return heights;
        }
        let mut left = height.saturating_sub(1 + 4 + MIDDLE + LOWER + gpus);
        // `want` rows if at least `least` are left, else none.
        let mut take = |want: u16, least: u16| {
            if left < least {
                return 0;
            }
            let given = want.min(left);
            left -= given;
            given
        };
        let progress = if has_progress { take(1, 1) } else { 0 };
        // A group's row, the servers' status, the groups' first rows, the log; then more
        // of the groups (as many as the designed layout gives them) and of the log.
        let mut group_rows = groups.map_or(0, |_| take(4, 4));
        let servers = take(2 + servers.min(4), 1);
        if let Some(n) = groups.filter(|_| group_rows > 0) {
            group_rows += take((n.min(3) + 3).saturating_sub(group_rows), 0);
        }
        let events = take(3, 1);
        if group_rows > 0 {
            group_rows += take(designed.groups.saturating_sub(group_rows), 0);
        }
        let events = if events > 0 { events + take(u16::MAX, 0) } else { 0 };
        Heights {
            headline: 4,
            gpus,
            progress,
            groups: group_rows,
            servers,
            events,
        }
    }
}

pub fn draw(frame: &mut Frame<'_>, run: &Run<'_>) {
    let area = frame.area();
    let empty = Figures::default();
    let f = run.snapshot.map_or(&empty, |s| &s.figures);
    let timing = Timing::of(run);
    let cover = Coverage::of(run);
    let servers = server_lines(run.servers, timing.interval_s, area.width.saturating_sub(2));
    let h = Heights::new(area, run, servers.len());
    let [top, headline_area, middle, lower, gpus_area, progress_area, groups_area, servers_area, events_area] =
        Layout::vertical([
            Constraint::Length(1),
            Constraint::Length(h.headline),
            Constraint::Length(MIDDLE),
            Constraint::Length(LOWER),
            Constraint::Length(h.gpus),
            Constraint::Length(h.progress),
            Constraint::Length(h.groups),
            Constraint::Length(h.servers),
            Constraint::Length(h.events),
        ])
        .areas(area);

    title(frame, top, run);
    headline(frame, headline_area, f, run.history, &cover, &timing);
    // The Requests panel's lines need 36 columns; the other two share what is left.
    let requests_width = (middle.width * 2 / 5).max(36).min(middle.width);
    let [requests, running, cache] = Layout::horizontal([
        Constraint::Length(requests_width),
        Constraint::Fill(1),
        Constraint::Fill(1),
    ])
    .areas(middle);
    let load = run.snapshot.map_or(f.load, |s| s.verdict.load(f));
    requests_panel(frame, requests, f, load, cover.load);
    running_panel(frame, running, f, run.history);
    cache_panel(frame, cache, f);
    let [latency, prompt] =
        Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(lower);
    latency_panel(frame, latency, f);
    prompt_panel(frame, prompt, f);
    if h.gpus > 0 {
        gpu_panel(frame, gpus_area, f);
    }
    if let Some(p) = run.snapshot.and_then(|s| s.progress).filter(|_| h.progress > 0) {
        progress_panel(frame, progress_area, &p);
    }
    if let Some(screen) = run
        .snapshot
        .and_then(|s| s.screen_groups())
        .filter(|_| h.groups > 0)
    {
        groups_panel(frame, groups_area, &screen);
    }
    if h.servers >= 3 {
        frame.render_widget(
            Paragraph::new(servers).block(Block::bordered().title(" Servers ")),
            servers_area,
        );
    } else if h.servers > 0 {
        frame.render_widget(Paragraph::new(servers), servers_area);
    }
    if h.events > 0 {
        events_panel(frame, events_area, run.events);
    }
}

/// The `--alert` rules (on the totals or a group) firing after `events`.
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
    let firing = run.earlier.firing_after(run.events);
    if firing > 0 {
        spans.push(Span::styled(
            format!(" {firing} alert(s) firing "),
            Style::new().bold().fg(Color::White).bg(Color::Red),
        ));
    }
    let [left, right] =
        Layout::horizontal([Constraint::Min(0), Constraint::Length(KEYS.len() as u16)]).areas(area);
    // The elapsed time, then as many of the setup's parts as fit whole (a narrow terminal
    // drops the last ones rather than cut one).
    let used: usize = spans.iter().map(|s| s.content.chars().count()).sum();
    let mut text = format!(" {elapsed:.0}s elapsed");
    for part in run.setup.split(" · ") {
        let more = format!(" · {part}");
        if used + text.chars().count() + more.chars().count() > usize::from(left.width) {
            break;
        }
        text += &more;
    }
    spans.push(Span::raw(text));
    let line = Line::from(spans);
    frame.render_widget(Paragraph::new(line), left);
    frame.render_widget(Paragraph::new(Span::styled(KEYS, Style::new().reversed())), right);
}
