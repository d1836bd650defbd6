//! The dashboard's keys: q, Esc and Ctrl-C quit; a resize redraws. Read on a thread of
//! their own (raw mode: Ctrl-C arrives as a key, not a signal) and sent to the run's loop
//! as messages, like the scrapes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use crate::scrape::Message;

/// Reads keys until `stop`.
pub fn spawn(tx: mpsc::Sender<Message>, stop: Arc<AtomicBool>) {
    use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            if !event::poll(Duration::from_millis(100)).unwrap_or(false) {
                continue;
            }
            let message = match event::read() {
                Ok(Event::Key(key)) if key.kind != KeyEventKind::Release => match key.code {
                    KeyCode::Char('q') | KeyCode::Esc => Message::Quit,
                    KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => Message::Quit,
                    _ => continue,
                },
                Ok(Event::Resize(..)) => Message::Redraw,
                Ok(_) => continue,
                Err(_) => Message::Quit,
            };
            if tx.send(message).is_err() {
                return;
            }
        }
    });
}
