//! The monitor's inputs: one scraping thread per URL (a slow server never delays the
//! others) and, with the dashboard, one thread reading keys.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use crate::common;

/// What one scrape of one URL produced.
pub struct Scrape {
    pub url: usize,
    pub at: DateTime<Utc>,
    pub result: Result<common::Page, String>,
}

/// What the main loop is told.
pub enum Message {
    Scrape(Scrape),
    /// The terminal changed size.
    Redraw,
    /// q, Esc, Ctrl-C.
    Quit,
}

/// Scrapes `url` every `interval` on its own thread until `stop`.
pub fn spawn(
    index: usize,
    url: String,
    interval: Duration,
    timeout: Duration,
    tx: mpsc::Sender<Message>,
    stop: Arc<AtomicBool>,
) {
    std::thread::spawn(move || {
        let agent = common::agent(timeout);
        let mut next = Instant::now();
        while !stop.load(Ordering::Relaxed) {
            let result = common::fetch(&agent, &url);
            let scrape = Scrape {
                url: index,
                at: Utc::now(),
                result,
            };
            if tx.send(Message::Scrape(scrape)).is_err() {
                return;
            }
            next += interval;
            let now = Instant::now();
            if next > now {
                std::thread::sleep(next - now);
            } else {
                next = now;
            }
        }
    });
}

/// Reads keys (raw mode: Ctrl-C arrives as a key, not a signal) until `stop`.
pub fn spawn_keys(tx: mpsc::Sender<Message>, stop: Arc<AtomicBool>) {
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
