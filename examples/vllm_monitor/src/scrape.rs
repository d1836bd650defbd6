//! The monitor's input: one worker thread per URL, which scrapes it and reads its pages
//! into its target, so that a slow server, a huge page or a page of millions of series
//! never delays the other URLs' intervals. Each answer goes through the main loop first
//! (a [`Mailbox`] per URL, `Message::Scraped`), which lends the URL's target back to the
//! worker ([`Lent`]) to read the page into, and records it once read: the pipeline stays
//! the one place that orders pages and intervals, as a replay orders them. A page under
//! `SMALL_PAGE` by its Content-Length is fetched whole before it is left; a larger one
//! (or one of unknown size) is left once its headers are in, and its body is read into
//! the target as it arrives, never held whole (unless `--record` keeps it). Each scrape
//! starts as long before its interval as the last one took to fetch and read (`Pace`),
//! so that a page that takes a while is read when its interval is due. The workers are
//! never joined: a run ends while one is stuck in a read or a page, and they end with the
//! process.
//!
//! Each URL has three budgets: time (`--timeout`, over the request and the time spent
//! waiting for its body, read in chunks that also look at the run's stop flag), bytes
//! (`--max-page-mib`, decompressed: checked against the Content-Length of a page sent as
//! is before the body is read, and while it streams) and series (`--max-series`, the
//! tracker's `max_series`). A URL over one gets a fault that names it; a page still being
//! read when its interval is due leaves its URL out of that interval.

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
    newest: Option<(Scrape, http::PageSize)>,
    skipped: u64,
}

/// A page waiting to be read: the scrape, the pages skipped before it, and its size in
/// bytes (as far as known while its body is still to come).
pub struct Waiting {
    pub scrape: Scrape,
    pub skipped: u64,
    pub size: http::PageSize,
}

impl Mailbox {
    pub fn new(urls: usize) -> Mailbox {
        Mailbox {
            slots: (0..urls).map(|_| Mutex::default()).collect(),
        }
    }

    /// Leaves a page of `bytes`; true if none was waiting (the reader is then to be told).
    pub fn put(&self, scrape: Scrape, size: impl Into<http::PageSize>) -> bool {
        let size = size.into();
        let mut slot = self.slots[scrape.url]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let was_empty = slot.newest.is_none();
        if !was_empty {
            slot.skipped += 1;
        }
        slot.newest = Some((scrape, size));
        was_empty
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

    /// The newest page of URL `url`, and how many were skipped before it.
    pub fn take(&self, url: usize) -> Option<Waiting> {
        let mut slot = self
            .slots
            .get(url)?
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let (scrape, size) = slot.newest.take()?;
        Some(Waiting {
            scrape,
            skipped: std::mem::take(&mut slot.skipped),
            size,
        })
    }
}

/// What the main loop is told.
pub enum Message {
    /// A page of this URL waits in the mailbox: the worker waits to be lent the target.
    Scraped(usize),
    /// A URL's worker read a page into the target it was lent, and hands it back, with
    /// the scrape as read when it is to be recorded (`--record`).
    Read(Box<(Target, PageRead, Option<Scrape>)>),
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
    /// Whether its pages are kept for `--record` (else none is ever held whole).
    pub record: bool,
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
            record,
        } = scraper;
        let mut pace = Pace {
            schedule,
            took: TimeDelta::zero(),
        };
        let reading = Reading {
            index,
            record,
            clock,
            stop: &stop,
        };
        // The interval the next scrape is for: the first is sent at once.
        let mut k = 0;
        while !stop.load(Ordering::Relaxed) {
            std::thread::sleep(clock.until(pace.start_of(k)));
            let start = clock.now();
            let (result, answer, size) = fetch(&client, &endpoint, &stop);
            let answered = clock.now();
            let scrape = Scrape {
                url: index,
                start,
                end: answered,
                result,
            };
            if stop.load(Ordering::Relaxed) {
                return;
            }
            // The main loop is told of a page when none was waiting (always, as this
            // thread waits for each page to be read); gone, it ends this thread.
            let run_over = mailbox.put(scrape, size)
                && (tx.send(Message::Scraped(index)).is_err() || !reading.when_lent(&lent, &tx, answer));
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
                skipped += u64::from(pace.start_of(k) > answered);
                k += 1;
            }
            mailbox.skip(index, skipped);
        }
    });
    lending
}

/// Fetches a page's headers, and its body too when its Content-Length says it is small:
/// a small page is read whole before its URL's target is lent (it waits for the body
/// without holding the target, and is read in milliseconds); a larger one, or one of
/// unknown size, is left to be read into the target as it arrives (the answer returned).
/// The page's size as far as known.
fn fetch(
    client: &http::Client,
    endpoint: &http::Endpoint,
    stop: &AtomicBool,
) -> (Result<http::Page, String>, Option<http::Answer>, http::PageSize) {
    let answer = match client.open(endpoint) {
        Ok(answer) => answer,
        Err(e) => return (Err(e), None, http::PageSize::Announced(0)),
    };
    let size = answer.size();
    if size.estimate(SMALL_PAGE) < SMALL_PAGE {
        let page = answer.into_page(stop);
        let bytes = page.as_ref().map_or(0, |p| p.body.len());
        return (page, None, http::PageSize::Announced(bytes));
    }
    let shell = http::Page {
        body: String::new(),
        format: answer.format,
        content_type: answer.content_type.clone(),
    };
    (Ok(shell), Some(answer), size)
}

/// A worker's reading of its pages: the URL, whether pages are kept, and its clock and
/// stop flag.
struct Reading<'a> {
    index: usize,
    record: bool,
    clock: LiveClock,
    stop: &'a AtomicBool,
}

impl Reading<'_> {
    /// Waits for the main loop to lend the target the page just left is to be read into,
    /// reads it there (its body as it arrives, when it has one) and hands the target back;
    /// false when the run is over.
    fn when_lent(
        &self,
        lent: &mpsc::Receiver<Option<Lent>>,
        tx: &mpsc::Sender<Message>,
        answer: Option<http::Answer>,
    ) -> bool {
        let Ok(lent) = lent.recv() else {
            return false;
        };
        let Some(Lent {
            mut target,
            mut scrape,
            skipped,
        }) = lent
        else {
            return true;
        };
        let read = match answer {
            Some(answer) => self.read_answer(&mut target, &mut scrape, skipped, answer),
            None => read_page(&mut target, &scrape, skipped),
        };
        debug_assert_eq!(scrape.url, self.index);
        let recorded = self.record.then_some(scrape);
        tx.send(Message::Read(Box::new((target, read, recorded)))).is_ok()
    }

    /// Reads an answer's body into `target` as it arrives; `scrape` then ends when the
    /// body was read, and has the page (when pages are kept) or why it was not read.
    fn read_answer(
        &self,
        target: &mut Target,
        scrape: &mut Scrape,
        skipped: u64,
        answer: http::Answer,
    ) -> PageRead {
        let capacity = answer.length.map_or(0, |n| n.min(answer.limit() as u64) as usize);
        let mut kept = self.record.then(|| Vec::with_capacity(capacity));
        let (events, failure) = target.ingest_answer(scrape.start, answer, self.stop, kept.as_mut());
        scrape.end = self.clock.now();
        if let Some(failure) = failure {
            scrape.result = Err(failure);
        } else if let (Some(kept), Ok(page)) = (kept, scrape.result.as_mut()) {
            // Whole characters, checked as they came.
            page.body = String::from_utf8(kept)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        }
        page_read(target, scrape, skipped, events)
    }
}

/// What reading one page into its URL's target gave, for the pipeline's `read`: made where
/// the page was read (a live run's worker, or the pipeline itself on replay).
pub struct PageRead {
    pub(crate) url: usize,
    pub(crate) notes: Vec<String>,
    pub(crate) events: Vec<Event>,
    pub(crate) row: ServerRow,
    pub(crate) ok: bool,
    /// Whether the page brought a point its series did not hold ([`Target::brought_news`]).
    pub(crate) news: bool,
    /// How long the scrape took, and when it started (what a slow event is stamped with).
    pub(crate) seconds: f64,
    pub(crate) at: DateTime<Utc>,
}

/// A page this small is read in milliseconds: it is fetched whole, and an interval due
/// waits for it (`Pipeline::awaited_until`).
pub const SMALL_PAGE: usize = 1 << 20;

/// Reads `scrape` into `target` (`skipped` newer-page-wins skips before it): the part of
/// ingesting a page that needs no more than its URL's target, so that it can run on the
/// URL's own worker while the other URLs' intervals go on.
pub fn read_page(target: &mut Target, scrape: &Scrape, skipped: u64) -> PageRead {
    let events = target.ingest_page(scrape.start, &scrape.result);
    page_read(target, scrape, skipped, events)
}

/// What reading `scrape` into `target` gave, once read ([`read_page`], or a body read as
/// it arrived), with the `events` it announced.
pub fn page_read(target: &mut Target, scrape: &Scrape, skipped: u64, mut events: Vec<Event>) -> PageRead {
    if scrape.result.is_err() {
        // A failure is said when it was known (a slow body's seconds after the request),
        // among the rows of its time, not before the ones it outlasted.
        for event in &mut events {
            event.at = scrape.end;
        }
    }
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
        news: scrape.result.is_ok() && target.brought_news,
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
        assert!(mailbox.put(page(0, "a"), 1), "the first page asks for the reader");
        assert!(!mailbox.put(page(0, "b"), 1), "a waiting page: no second call");
        assert!(!mailbox.put(page(0, "c"), 7));
        assert!(mailbox.put(page(1, "x"), 1), "URLs wait apart");
        let newest = mailbox.take(0).unwrap();
        assert_eq!(
            (
                newest.scrape.result.unwrap().body.as_str(),
                newest.skipped,
                newest.size
            ),
            ("c", 2, http::PageSize::Announced(7))
        );
        assert!(mailbox.take(0).is_none());
        assert!(mailbox.put(page(0, "d"), 1), "read: the next page asks again");
        assert_eq!(mailbox.take(0).map(|w| w.skipped), Some(0));
        assert_eq!(mailbox.take(1).map(|w| w.scrape.url), Some(1));
        assert!(mailbox.take(7).is_none());
    }
}
