//! The monitor's input: one worker thread per URL, which scrapes it and reads its pages
//! into its target, so that a slow server, a huge page or a page of millions of series
//! never delays the other URLs' intervals. Each page goes through the main loop first
//! (a [`Mailbox`] per URL, `Message::Scraped`), which records it and lends the URL's
//! target back to the worker ([`Lent`]) to read it into: the pipeline stays the one place
//! that orders pages and intervals, as a replay orders them. Each scrape starts as long
//! before its interval as the last one took to fetch and read (`Pace`), so that a page
//! that takes a while is read when its interval is due. The workers are never joined: a
//! run ends while one is stuck in a read or a page, and they end with the process.
//!
//! Each URL has three budgets: time (`--timeout`, over the request and its body, read in
//! chunks that also look at the run's stop flag), bytes (`--max-page-mib`, checked against
//! the Content-Length before the body is read, and while it streams) and series
//! (`--max-series`, the tracker's `max_series`). A URL over one gets a fault that names it;
//! a page still being read when its interval is due leaves its URL out of that interval.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex, PoisonError};

use chrono::{DateTime, TimeDelta, Utc};

use crate::clock::{LiveClock, Schedule};
use crate::events::Event;
use crate::http;
use crate::target::{ServerRow, Target};

/// What one scrape of one URL produced, and when. Its samples are stamped with `start`,
/// the moment the request was sent, as Prometheus stamps a scrape: a server renders its
/// page right after the request arrives, while the end also counts the time the body took
/// to travel and be read (12 ms median, 177 ms at worst on a loaded real vLLM).
pub struct Scrape {
    pub url: usize,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub result: Result<http::Page, String>,
}

impl Scrape {
    /// How long the scrape took, in seconds.
    pub fn seconds(&self) -> f64 {
        (self.end - self.start).as_seconds_f64()
    }
}

/// The newest unread page of each URL. A scrape that finds the previous page still unread
/// replaces it and counts it as skipped: memory holds at most one waiting page per URL,
/// however far behind the reader is. (A live run's worker waits for its page to be taken
/// and lent back before it scrapes again, so it never finds one waiting.)
pub struct Mailbox {
    slots: Vec<Mutex<Slot>>,
}

#[derive(Default)]
struct Slot {
    newest: Option<Scrape>,
    skipped: u64,
    /// A page already read, whose buffer the next scrape reads into: a large page then
    /// costs no fresh memory (page faults, zeroing) every interval.
    spare: Option<String>,
}

impl Mailbox {
    pub fn new(urls: usize) -> Mailbox {
        Mailbox {
            slots: (0..urls).map(|_| Mutex::default()).collect(),
        }
    }

    /// Leaves a page; true if none was waiting (the reader is then to be told).
    pub fn put(&self, scrape: Scrape) -> bool {
        let mut slot = self.slots[scrape.url]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let was_empty = slot.newest.is_none();
        if !was_empty {
            slot.skipped += 1;
        }
        slot.newest = Some(scrape);
        was_empty
    }

    /// Hands back a page's buffer for the next scrape of `url`.
    pub fn recycle(&self, url: usize, mut buffer: String) {
        if let Some(slot) = self.slots.get(url) {
            buffer.clear();
            slot.lock().unwrap_or_else(PoisonError::into_inner).spare = Some(buffer);
        }
    }

    /// Counts `pages` of `url` as skipped: scrapes due while the worker was reading a
    /// page, which it did not make (said with the next page taken).
    fn skip(&self, url: usize, pages: u64) {
        if pages > 0 {
            self.slots[url]
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .skipped += pages;
        }
    }

    /// A buffer to read the next page of `url` into.
    fn spare(&self, url: usize) -> String {
        let mut slot = self.slots[url].lock().unwrap_or_else(PoisonError::into_inner);
        slot.spare.take().unwrap_or_default()
    }

    /// The newest page of URL `url`, and how many were skipped before it.
    pub fn take(&self, url: usize) -> Option<(Scrape, u64)> {
        let mut slot = self
            .slots
            .get(url)?
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let scrape = slot.newest.take()?;
        Some((scrape, std::mem::take(&mut slot.skipped)))
    }
}

/// What the main loop is told.
pub enum Message {
    /// A page of this URL waits in the mailbox: the worker waits to be lent the target.
    Scraped(usize),
    /// A URL's worker read a page into the target it was lent, and hands it back.
    Read(Box<(Target, PageRead)>),
    /// The terminal changed size.
    Redraw,
    /// q, Esc, Ctrl-C.
    Quit,
}

/// A URL's target lent to its worker, with the page to read into it (`skipped` pages
/// before it).
pub struct Lent {
    pub target: Target,
    pub scrape: Scrape,
    pub skipped: u64,
}

/// The main loop's answer to `Message::Scraped`: the target to read the page into, or
/// `None` (the page was not to be read).
pub type Lending = mpsc::Sender<Option<Lent>>;

/// One URL's scraping: where, with which client, for which intervals.
pub struct Scraper {
    pub index: usize,
    pub endpoint: http::Endpoint,
    pub client: http::Client,
    pub schedule: Schedule,
}

/// When a URL's scrapes start: each early enough before the interval it is for that its
/// page is fetched and read when that interval is computed. For a quick server that is
/// the schedule's settle after the interval before; for one whose pages take longer to
/// fetch and read, as long before as the last one took and a quarter more (an interval at
/// most), so that a page that takes a while is in its interval rather than left out of it.
struct Pace {
    schedule: Schedule,
    /// How long the last scrape took to fetch and read.
    took: TimeDelta,
}

impl Pace {
    /// When the scrape for interval `k` starts.
    fn start_of(&self, k: u64) -> DateTime<Utc> {
        let wanted = self.took + self.took / 4 + TimeDelta::milliseconds(10);
        let lead = wanted.max(self.schedule.settle).min(self.schedule.interval);
        self.schedule.tick_at(k) - lead
    }
}

/// Scrapes as `scraper` says on its own thread until `stop`, leaving each page in
/// `mailbox`, its times read from `clock`, and reads it into the target the main loop
/// lends through the returned sender. A page whose reading outlasts an interval delays
/// only this URL's next scrape (the scrapes it missed are skipped, not queued).
pub fn spawn(
    scraper: Scraper,
    clock: LiveClock,
    mailbox: Arc<Mailbox>,
    tx: mpsc::Sender<Message>,
    stop: Arc<AtomicBool>,
) -> Lending {
    let (lending, lent) = mpsc::channel::<Option<Lent>>();
    std::thread::spawn(move || {
        let Scraper {
            index,
            endpoint,
            client,
            schedule,
        } = scraper;
        let mut pace = Pace {
            schedule,
            took: TimeDelta::zero(),
        };
        // The interval the next scrape is for: the first is sent at once.
        let mut k = 0;
        while !stop.load(Ordering::Relaxed) {
            std::thread::sleep(clock.until(pace.start_of(k)));
            let buffer = mailbox.spare(index);
            let start = clock.now();
            let result = client.fetch_until(&endpoint, buffer, &stop);
            let fetched = clock.now();
            let scrape = Scrape {
                url: index,
                start,
                end: fetched,
                result,
            };
            if stop.load(Ordering::Relaxed) {
                return;
            }
            // The main loop is told of a page when none was waiting (always, as this
            // thread waits for each page to be read); gone, it ends this thread.
            let run_over = mailbox.put(scrape)
                && (tx.send(Message::Scraped(index)).is_err()
                    || !read_when_lent(index, &lent, &mailbox, &tx));
            if run_over {
                return;
            }
            pace.took = clock.now() - start;
            // The next interval whose scrape can still start on time. Those whose start
            // passed while the page was read are skipped and counted as pages skipped;
            // those passed while it was fetched are the server's slowness, said as such.
            let (now, mut skipped) = (clock.now(), 0);
            k += 1;
            while pace.start_of(k) < now {
                skipped += u64::from(pace.start_of(k) > fetched);
                k += 1;
            }
            mailbox.skip(index, skipped);
        }
    });
    lending
}

/// Waits for the main loop to lend the target the page just left is to be read into,
/// reads it there and hands the target back; false when the run is over.
fn read_when_lent(
    index: usize,
    lent: &mpsc::Receiver<Option<Lent>>,
    mailbox: &Mailbox,
    tx: &mpsc::Sender<Message>,
) -> bool {
    let Ok(lent) = lent.recv() else {
        return false;
    };
    let Some(Lent {
        mut target,
        scrape,
        skipped,
    }) = lent
    else {
        return true;
    };
    let read = read_page(&mut target, &scrape, skipped);
    if let Ok(page) = scrape.result {
        mailbox.recycle(index, page.body);
    }
    tx.send(Message::Read(Box::new((target, read)))).is_ok()
}

/// What reading one page into its URL's target gave, for [`crate::pipeline::Pipeline::read`]: made where
/// the page was read (a live run's worker, or the pipeline itself on replay).
pub struct PageRead {
    pub(crate) url: usize,
    pub(crate) notes: Vec<String>,
    pub(crate) events: Vec<Event>,
    pub(crate) row: ServerRow,
    pub(crate) ok: bool,
    /// How long the scrape took, and when it started (what a slow event is stamped with).
    pub(crate) seconds: f64,
    pub(crate) at: DateTime<Utc>,
}

/// Reads `scrape` into `target` (`skipped` newer-page-wins skips before it): the part of
/// ingesting a page that needs no more than its URL's target, so that it can run on the
/// URL's own worker while the other URLs' intervals go on.
pub fn read_page(target: &mut Target, scrape: &Scrape, skipped: u64) -> PageRead {
    let mut notes = Vec::new();
    if skipped > 0 && target.skipped == 0 {
        notes.push(format!(
            "{}: pages come due faster than they are read; the newest is read, the others skipped (counted in the summary)",
            target.url
        ));
    }
    target.skipped += skipped;
    let seconds = scrape.seconds();
    target.scrape_s = Some(seconds);
    let events = target.ingest_page(scrape.start, &scrape.result);
    if let Some(kind) = target.status.kind().filter(|k| k.0.tokens_at_request_end) {
        if !target.noted_request_end {
            target.noted_request_end = true;
            // A window shorter than a request would show a sawtooth, not the throughput.
            notes.push(format!(
                "{} counts tokens when a request ends: tok/s is over --window, no EWMA ({})",
                kind.0.title, target.url
            ));
        }
    }
    PageRead {
        url: scrape.url,
        notes,
        events,
        row: ServerRow::of(target),
        ok: scrape.result.is_ok(),
        seconds,
        at: scrape.start,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(url: usize, body: &str) -> Scrape {
        Scrape {
            url,
            start: Utc::now(),
            end: Utc::now(),
            result: Ok(http::Page {
                body: body.to_string(),
                format: promrate::Format::PrometheusText,
                content_type: None,
            }),
        }
    }

    #[test]
    fn the_newest_page_wins_and_the_skipped_ones_are_counted() {
        let mailbox = Mailbox::new(2);
        assert!(mailbox.put(page(0, "a")), "the first page asks for the reader");
        assert!(!mailbox.put(page(0, "b")), "a waiting page: no second call");
        assert!(!mailbox.put(page(0, "c")));
        assert!(mailbox.put(page(1, "x")), "URLs wait apart");
        let (newest, skipped) = mailbox.take(0).unwrap();
        assert_eq!((newest.result.unwrap().body.as_str(), skipped), ("c", 2));
        assert!(mailbox.take(0).is_none());
        assert!(mailbox.put(page(0, "d")), "read: the next page asks again");
        assert_eq!(mailbox.take(0).map(|(_, skipped)| skipped), Some(0));
        assert_eq!(mailbox.take(1).map(|(s, _)| s.url), Some(1));
        assert!(mailbox.take(7).is_none());
    }
}
