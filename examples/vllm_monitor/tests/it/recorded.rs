//! Recordings the tests make themselves: pages (the simulator's, usually) "scraped" on an
//! exact grid, each scrape a few milliseconds late by a deterministic pseudo-jitter,
//! written in the monitor's own recording format (`vllm_monitor::recording`) and replayed
//! through the binary (`--replay FILE`) on its virtual clock. A figure checked so depends
//! on the pages and their times alone, never on how busy the machine is; and as the test
//! knows every page and every time, it can work out each window figure exactly
//! ([`Recording::rate`]) instead of allowing for the scheduler.
//!
//! ```ignore
//! let sim = Simulation::new(None).with_wave(0.0);
//! let grid = Grid::new(Duration::from_secs(1), 22).window(Duration::from_secs(16));
//! let recording = Recording::make("steady.jsonl", grid, &[Source::new(URL, |t| sim.render_at(t))]);
//! let rows = recording.replay(&["--json"]);
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;
use vllm_monitor::recording::{Header, Recorded, Writer};

use crate::monitor::{run_monitor, run_monitor_lines};

/// When every recording's run begins, in Unix microseconds: 2027-01-15 08:00:00 UTC (any
/// whole second would do; a fixed one makes every run of a test the same).
pub const ORIGIN_US: i64 = 1_800_000_000_000_000;

/// What a [`Source`]'s page starts with for a scrape that failed (the rest says why): the
/// server was down.
pub const FAILED: &str = "FAILED: ";

/// A URL of a recording and the page it serves `t` seconds into the run.
pub struct Source<'a> {
    url: String,
    page: Box<dyn Fn(f64) -> String + 'a>,
}

impl<'a> Source<'a> {
    /// `url` (as the recording and the monitor show it), serving `page(t)` to a scrape that
    /// starts `t` seconds into the run.
    pub fn new(url: impl Into<String>, page: impl Fn(f64) -> String + 'a) -> Source<'a> {
        Source {
            url: url.into(),
            page: Box::new(page),
        }
    }
}

/// When the scrapes are: scrape `i` of every URL starts `i × interval` after the origin
/// plus up to `jitter` ([`jitter`] of the URL and `i`), and ends 1 ms to 1 ms + `jitter`
/// after it started. The header says `interval` and `window`, as the monitor's would.
#[derive(Debug, Clone, Copy)]
pub struct Grid {
    pub interval: Duration,
    /// Scrapes of each URL, numbered from 0.
    pub scrapes: u64,
    pub jitter: Duration,
    pub window: Duration,
}

impl Grid {
    /// `scrapes` scrapes of each URL every `interval`, 5 ms of jitter, a 30 s window.
    pub fn new(interval: Duration, scrapes: u64) -> Grid {
        Grid {
            interval,
            scrapes,
            jitter: Duration::from_millis(5),
            window: Duration::from_secs(30),
        }
    }

    /// The same grid with the header's window `window`.
    pub fn window(mut self, window: Duration) -> Grid {
        self.window = window;
        self
    }
}

/// A fraction in [0, 1) that looks random and is the same in every run: splitmix64 of the
/// URL's number and the scrape's.
pub fn jitter(url: usize, index: u64) -> f64 {
    let mut z = (url as u64)
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(index)
        .wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// One scrape as recorded.
pub struct Scraped {
    /// The URL's number: its place in [`Recording::make`]'s sources.
    pub url: usize,
    /// Unix microseconds, as the recording keeps them.
    pub start_us: i64,
    pub end_us: i64,
    pub body: String,
}

impl Scraped {
    /// Seconds into the run the scrape started: the moment its page describes.
    pub fn t(&self) -> f64 {
        (self.start_us - ORIGIN_US) as f64 / 1e6
    }

    /// The start in Unix milliseconds, as the monitor stamps the page's samples.
    pub fn start_ms(&self) -> i64 {
        self.start_us.div_euclid(1000)
    }
}

fn at(us: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_micros(us).expect("a time in range")
}

/// A recording in the temporary directory, removed when dropped, and every scrape in it.
pub struct Recording {
    path: PathBuf,
    pub grid: Grid,
    pub urls: Vec<String>,
    /// `scrapes[url][index]`.
    scrapes: Vec<Vec<Scraped>>,
}

impl Recording {
    /// Scrapes `sources` on `grid` and writes the recording, with the monitor's header
    /// (the run starting at [`ORIGIN_US`]) and without `tick`s: the replay reads each page
    /// at its end. `name` ends the file's name and gives its compression (`x.jsonl`,
    /// `x.jsonl.zst`, `x.jsonl.gz`).
    pub fn make(name: &str, grid: Grid, sources: &[Source<'_>]) -> Recording {
        static MADE: AtomicU64 = AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "vllm-monitor-test-{}-{}-{name}",
            std::process::id(),
            MADE.fetch_add(1, Ordering::Relaxed)
        ));
        let interval_us = i64::try_from(grid.interval.as_micros()).unwrap();
        let jitter_us = grid.jitter.as_micros() as f64;
        let scrapes: Vec<Vec<Scraped>> = sources
            .iter()
            .enumerate()
            .map(|(url, source)| {
                (0..grid.scrapes)
                    .map(|index| {
                        let late = (jitter(url, index) * jitter_us) as i64;
                        let start_us = ORIGIN_US + index as i64 * interval_us + late;
                        let took = 1000 + (jitter(url + 1000, index) * jitter_us) as i64;
                        let t = (start_us - ORIGIN_US) as f64 / 1e6;
                        Scraped {
                            url,
                            start_us,
                            end_us: start_us + took,
                            body: (source.page)(t),
                        }
                    })
                    .collect()
            })
            .collect();
        let urls: Vec<String> = sources.iter().map(|s| s.url.clone()).collect();
        let recording = Recording {
            path,
            grid,
            urls,
            scrapes,
        };
        recording.write();
        recording
    }

    /// The file: the header, then the scrapes in the order they ended, as a monitor reads them.
    fn write(&self) {
        let header = Header {
            started: at(ORIGIN_US),
            interval: self.grid.interval,
            window: self.grid.window,
            urls: self.urls.clone(),
            extra: serde_json::Map::new(),
        };
        let mut writer =
            Writer::create(&self.path, &header).unwrap_or_else(|e| panic!("{}: {e}", self.path.display()));
        let mut all: Vec<&Scraped> = self.scrapes.iter().flatten().collect();
        all.sort_by_key(|s| (s.end_us, s.url));
        for s in all {
            // A page function answers `FAILED` (and why) for a scrape that got no page.
            let failed = s.body.strip_prefix(FAILED).map(str::to_string);
            let line = Recorded {
                url: self.urls[s.url].clone(),
                start: at(s.start_us),
                end: at(s.end_us),
                status: failed.is_none().then_some(200),
                content_type: failed
                    .is_none()
                    .then(|| "text/plain; version=0.0.4; charset=utf-8".into()),
                body: failed.is_none().then(|| s.body.clone()),
                error: failed,
                tick: None,
            };
            writer.write(&line).unwrap();
        }
        writer.finish(None).unwrap();
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `--replay` of the recording with `args` (after it): the JSON rows; the run must succeed.
    pub fn replay(&self, args: &[&str]) -> Vec<Value> {
        let mut all = vec!["--replay", self.path.to_str().unwrap()];
        all.extend_from_slice(args);
        let (rows, status) = run_monitor(&all);
        assert!(status.success(), "--replay with {args:?}: {status}");
        rows
    }

    /// `--replay --plain` of the recording with `args`: the lines; the run must succeed.
    pub fn plain(&self, args: &[&str]) -> Vec<String> {
        let mut all = vec!["--replay", self.path.to_str().unwrap(), "--plain"];
        all.extend_from_slice(args);
        let (lines, status) = run_monitor_lines(&all);
        assert!(status.success(), "--replay --plain with {args:?}: {status}");
        lines
    }

    pub fn scrape(&self, url: usize, index: u64) -> &Scraped {
        &self.scrapes[url][usize::try_from(index).unwrap()]
    }

    /// The grid number of the scrape the monitor stamped `stamp` (an RFC 3339 time of the
    /// JSON output, or Unix seconds): the nearest grid point, jitter being far below an
    /// interval.
    pub fn index_at(&self, stamp: &Value) -> u64 {
        let us = match stamp {
            Value::String(text) => DateTime::parse_from_rfc3339(text)
                .unwrap_or_else(|e| panic!("{text}: {e}"))
                .timestamp_micros(),
            other => (other.as_f64().unwrap_or_else(|| panic!("not a time: {other}")) * 1e6) as i64,
        };
        let interval_us = self.grid.interval.as_micros() as f64;
        let index = ((us - ORIGIN_US) as f64 / interval_us).round();
        assert!(index >= 0.0, "{stamp} is before the recording");
        index as u64
    }

    /// The grid numbers of the two scrapes row `k`'s window compares, checked to be the
    /// `window` scrapes before `k` (fewer at the start): the window rule on the grid.
    pub fn window_of(&self, row: &Value, k: u64, window: u64) -> (u64, u64) {
        let w = &row["window"];
        let (start, end) = (self.index_at(&w["start"]), self.index_at(&w["end"]));
        assert_eq!((start, end), (k.saturating_sub(window), k), "interval {k}: {w}");
        (start, end)
    }

    /// The reset-aware increase of `metric` (a sample name: `x_total`, `x_sum`; every
    /// series summed) on `url`'s pages from scrape `from` to scrape `to`: each series'
    /// increase between consecutive pages, and its new value where it went down (a
    /// restart counts from zero), as Prometheus and the monitor count.
    pub fn increase(&self, url: usize, metric: &str, from: u64, to: u64) -> f64 {
        let mut increase = 0.0;
        let mut before = samples(&self.scrape(url, from).body, metric);
        for index in from + 1..=to {
            let now = samples(&self.scrape(url, index).body, metric);
            for (series, value) in &now {
                increase += match before.get(series) {
                    Some(old) if value >= old => value - old,
                    Some(_) => *value,
                    None => 0.0,
                };
            }
            before = now;
        }
        increase
    }

    /// Seconds between the starts of two scrapes of `url` as the monitor stamps them (to
    /// the millisecond).
    pub fn span(&self, url: usize, from: u64, to: u64) -> f64 {
        (self.scrape(url, to).start_ms() - self.scrape(url, from).start_ms()) as f64 / 1000.0
    }

    /// `metric`'s rate on `url` from scrape `from` to scrape `to`: [`Recording::increase`]
    /// over [`Recording::span`], what the monitor's window rate is over those scrapes.
    pub fn rate(&self, url: usize, metric: &str, from: u64, to: u64) -> f64 {
        self.increase(url, metric, from, to) / self.span(url, from, to)
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The samples named `metric` on a text-format page, by their labels (`{...}`, or "" for
/// none). Enough for the simulator's pages: no escaped `}` in label values, no timestamps.
pub fn samples(page: &str, metric: &str) -> BTreeMap<String, f64> {
    let mut found = BTreeMap::new();
    for line in page.lines() {
        let Some(rest) = line.strip_prefix(metric) else {
            continue;
        };
        let (labels, value) = match rest.chars().next() {
            Some('{') => match rest.rfind('}') {
                Some(end) => (&rest[..=end], &rest[end + 1..]),
                None => continue,
            },
            Some(' ') => ("", rest),
            _ => continue,
        };
        let value = value.split_whitespace().next().unwrap_or("");
        let value: f64 = value
            .parse()
            .unwrap_or_else(|e| panic!("{metric}: {value:?} in {line:?}: {e}"));
        found.insert(labels.to_string(), value);
    }
    found
}

/// The interval rows of `rows` (not the events, the start or the summary).
pub fn intervals(rows: &[Value]) -> Vec<&Value> {
    rows.iter()
        .filter(|r| r.get("event").is_none() && r.get("urls").is_some())
        .collect()
}
