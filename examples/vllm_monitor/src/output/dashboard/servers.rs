//! What the scrapes say: a line per URL (and per instance of a federation), and the
//! event log.

use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;

use crate::events::{Event, EventKind};
use crate::output::labels;
use crate::target::{ServerRow, Status};
use crate::text;
use crate::text::visible::visible;

/// One line per URL, or per instance in a federation; a scrape that took longer than the
/// interval `interval_s` is said on its URL's line (the figures wait for such pages). A URL
/// is shown as people read it, cut in its middle (distinct from the others) so that what
/// is said of it fits in `width` columns beside it.
pub(super) fn server_lines(targets: &[ServerRow], interval_s: Option<f64>, width: u16) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let urls: Vec<&str> = targets.iter().map(|t| t.url.as_str()).collect();
    for (i, t) in targets.iter().enumerate() {
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
            .map(|at| format!(" · restart seen {} UTC", at.format("%H:%M:%S")))
            .unwrap_or_default();
        let slow = match (t.scrape_s, interval_s) {
            (Some(took), Some(interval)) if took > interval => format!(" · slow scrape {took:.1}s"),
            _ => String::new(),
        };
        let format = match t.format {
            Some(promrate::Format::OpenMetrics) => " · openmetrics",
            _ => "",
        };
        let status = visible(&t.status.to_string()).into_owned();
        let tail = if t.skipped > 0 {
            format!(
                "{restarted}{format} · {} error(s) · {} page(s) skipped",
                t.errors, t.skipped
            )
        } else {
            format!("{restarted}{format} · {} error(s)", t.errors)
        };
        let said = [&status, &slow, &tail]
            .iter()
            .map(|s| s.chars().count())
            .sum::<usize>();
        let room = usize::from(width).saturating_sub(3 + said);
        let (shown, _) = labels::url_labels(&urls, room.max(16));
        lines.push(Line::from(vec![
            Span::styled(format!("{mark} "), Style::new().fg(color)),
            // A URL's query is shown percent-decoded: what it decodes to is escaped too.
            Span::raw(format!("{} ", visible(&shown[i]))),
            Span::styled(status, Style::new().fg(color)),
            Span::styled(slow, Style::new().fg(Color::Yellow)),
            Span::raw(tail),
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
                .map(|at| format!(" · restart seen {} UTC", at.format("%H:%M:%S")))
                .unwrap_or_default();
            lines.push(Line::from(vec![
                Span::raw("  "),
                Span::styled(format!("{mark} "), Style::new().fg(color)),
                Span::raw(format!("instance {} ", visible(name))),
                Span::styled(state, Style::new().fg(color)),
                Span::raw(restarted),
            ]));
        }
    }
    lines
}

/// The newest events first, each message wrapped within the box (a cut message hid the
/// end of a restart's or a fault's reason); on fewer than three rows, without the box. A
/// message the box cannot hold to its end ends in '…' where it is cut.
pub(super) fn events_panel(frame: &mut Frame<'_>, area: Rect, events: &[(f64, Event)]) {
    let boxed = area.height >= 3;
    let rows = usize::from(if boxed { area.height - 2 } else { area.height });
    let width = usize::from(if boxed {
        area.width.saturating_sub(2)
    } else {
        area.width
    })
    .max(2);
    let mut lines: Vec<Line<'_>> = Vec::new();
    for (elapsed, e) in events.iter().rev() {
        let room = rows.saturating_sub(lines.len());
        if room == 0 {
            break;
        }
        let color = match e.kind {
            EventKind::Restart
            | EventKind::Imbalance
            | EventKind::Slow
            | EventKind::Erratic
            | EventKind::Warning => Color::Yellow,
            EventKind::Fault | EventKind::Stale | EventKind::Stall | EventKind::AlertFiring => Color::Red,
            EventKind::Recovered | EventKind::Back | EventKind::AlertResolved => Color::Green,
        };
        let (time, kind) = (format!("{elapsed:6.1}s "), format!("{:<9} ", e.kind.as_str()));
        let text = format!(
            "{time}{kind}{}: {}",
            visible(&labels::readable_url(&e.source)),
            visible(&e.message)
        );
        let mut wrapped = text::wrap(&text, width, "");
        if wrapped.len() > room {
            wrapped.truncate(room);
            if let Some(last) = wrapped.last_mut() {
                let kept = text::keep_start(last, width - 1);
                *last = format!("{}…", kept.strip_suffix('…').unwrap_or(&kept));
            }
        }
        for (i, row) in wrapped.into_iter().enumerate() {
            // The first row's time and kind keep their style.
            let styled = (i == 0)
                .then(|| row.strip_prefix(&time)?.strip_prefix(&kind))
                .flatten();
            lines.push(match styled {
                Some(rest) => Line::from(vec![
                    Span::raw(time.clone()),
                    Span::styled(kind.clone(), Style::new().fg(color).bold()),
                    Span::raw(rest.to_string()),
                ]),
                None => Line::from(row),
            });
        }
    }
    let title = if events.is_empty() {
        " Events (none yet) ".to_string()
    } else {
        format!(" Events ({}) ", events.len())
    };
    let paragraph = Paragraph::new(lines);
    let paragraph = match boxed {
        true => paragraph.block(Block::bordered().title(title)),
        false => paragraph,
    };
    frame.render_widget(paragraph, area);
}
