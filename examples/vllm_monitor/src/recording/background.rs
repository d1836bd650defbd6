//! A [`Writer`] on a thread of its own: the main loop hands it scrapes in order and goes
//! on, so that encoding and compressing a large page (a 90 MB `/federate` page) never
//! makes an interval late.

use std::io;
use std::sync::mpsc;
use std::thread::JoinHandle;

use super::{Recorded, Writer};

/// Scrapes waiting to be written: enough to ride out a large page, few enough that memory
/// stays bounded when the disk cannot keep up (the main loop then waits for it).
const WAITING: usize = 4;

/// Writes a recording behind the main loop, in the order it was given.
pub struct Background {
    scrapes: Option<mpsc::SyncSender<Recorded>>,
    thread: Option<JoinHandle<io::Result<Writer>>>,
}

impl Background {
    /// Starts writing with `writer` (its header written already).
    pub fn start(writer: Writer) -> Background {
        let (scrapes, waiting) = mpsc::sync_channel::<Recorded>(WAITING);
        let thread = std::thread::spawn(move || {
            let mut writer = writer;
            for scrape in waiting {
                writer.write(&scrape)?;
            }
            Ok(writer)
        });
        Background {
            scrapes: Some(scrapes),
            thread: Some(thread),
        }
    }

    /// Hands one scrape to be written. An error is that of an earlier write, which
    /// stopped the recording: this one is not written either.
    pub fn write(&mut self, scrape: Recorded) -> io::Result<()> {
        let sent = self.scrapes.as_ref().is_some_and(|s| s.send(scrape).is_ok());
        if sent {
            return Ok(());
        }
        Err(self.stop().err().unwrap_or_else(stopped))
    }

    /// Writes what waits, then ends the recording as [`Writer::finish`] does.
    pub fn finish(mut self, ticks: Option<u64>) -> io::Result<()> {
        self.stop()?.finish(ticks)
    }

    /// Lets the thread write what waits and end; its writer, or why it stopped.
    fn stop(&mut self) -> io::Result<Writer> {
        self.scrapes = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            _ => Err(stopped()),
        }
    }
}

fn stopped() -> io::Error {
    io::Error::other("the recording's writer stopped")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recording::{open, Header};
    use chrono::DateTime;

    #[test]
    fn scrapes_are_written_in_order_behind_the_caller() {
        let path = std::env::temp_dir().join(format!("vllm-monitor-background-{}.jsonl", std::process::id()));
        let at = |s: i64| DateTime::from_timestamp(1_900_000_000 + s, 0).unwrap();
        let header = Header {
            started: at(0),
            interval: std::time::Duration::from_secs(1),
            window: std::time::Duration::from_secs(10),
            urls: vec!["u".into()],
            extra: serde_json::Map::new(),
        };
        let mut background = Background::start(Writer::create(&path, &header).unwrap());
        for n in 1..=20 {
            let scrape = Recorded {
                url: "u".into(),
                start: at(n),
                end: at(n),
                status: Some(200),
                content_type: None,
                body: Some(format!("a_total {n}\n")),
                error: None,
                tick: Some(n as u64),
            };
            background.write(scrape).unwrap();
        }
        background.finish(Some(20)).unwrap();
        let mut replay = open(&path).unwrap();
        let bodies: Vec<String> = replay.by_ref().map(|r| r.unwrap().body.unwrap()).collect();
        assert_eq!(bodies.len(), 20);
        assert!(bodies
            .iter()
            .zip(1..)
            .all(|(b, n)| *b == format!("a_total {n}\n")));
        assert_eq!(replay.ticks(), Some(20));
        std::fs::remove_file(&path).unwrap();
    }
}
