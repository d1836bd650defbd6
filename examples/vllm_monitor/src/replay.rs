//! `--replay`: a recording read as the live run read its scrapes. What the recording does
//! not say (a foreign scraper's file has no header) is worked out from its scrapes: the
//! URLs in the order they first appear, the run's start at the first scrape, the interval
//! as the median time between one URL's scrapes.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use chrono::{DateTime, Utc};
use promrate::Format;

use crate::http::{self, Page};
use crate::recording::{self, Recorded};
use crate::scrape::Scrape;

/// What a recording tells about the run that made it.
#[derive(Debug, Clone)]
pub struct Recording {
    pub started: DateTime<Utc>,
    pub urls: Vec<String>,
    pub interval: Duration,
    pub window: Option<Duration>,
    pub duration: Option<Duration>,
    /// Whether it was written by this monitor (its `tick` fields place each page).
    pub ours: bool,
    /// "recorded by vllm_monitor" or "another scraper's recording", for the setup line.
    pub what: String,
}

/// Reads the recording at `path` once to learn its run (streaming: nothing is kept but
/// the URLs and the scrape times of the first URL).
pub fn survey(path: &Path) -> Result<Recording, String> {
    let shown = path.display();
    let replay = recording::open(path).map_err(|e| match e.line {
        0 => format!("{shown}: {}", e.message),
        _ => format!("{shown}: {e}"),
    })?;
    if let Some(h) = replay.header() {
        let duration = h
            .extra
            .get("duration_s")
            .and_then(serde_json::Value::as_f64)
            .map(Duration::from_secs_f64);
        return Ok(Recording {
            started: h.started,
            urls: h.urls.clone(),
            interval: h.interval,
            window: Some(h.window),
            duration,
            ours: true,
            what: "recorded by vllm_monitor".into(),
        });
    }
    let mut urls: Vec<String> = Vec::new();
    let mut first: Option<DateTime<Utc>> = None;
    let mut starts = Vec::new();
    for scrape in replay {
        let Ok(scrape) = scrape else { continue };
        first = Some(first.map_or(scrape.start, |f| f.min(scrape.start)));
        if !urls.contains(&scrape.url) {
            urls.push(scrape.url.clone());
        }
        if scrape.url == urls[0] {
            starts.push(scrape.start);
        }
    }
    let started = first.ok_or_else(|| format!("{shown}: no scrape in the recording"))?;
    let mut gaps: Vec<i64> = starts
        .windows(2)
        .filter_map(|w| (w[1] - w[0]).num_microseconds())
        .collect();
    gaps.sort_unstable();
    // To the nearest 10 ms: a scraper's interval is a round figure, its median a little off.
    let interval = gaps.get(gaps.len() / 2).map_or(Duration::from_secs(1), |us| {
        Duration::from_millis(((*us as f64 / 10_000.0).round() as u64 * 10).max(100))
    });
    Ok(Recording {
        started,
        urls,
        interval,
        window: None,
        duration: None,
        ours: false,
        what: "another scraper's recording".into(),
    })
}

/// The URLs of a recording by number, as the pipeline numbers its targets.
pub struct Numbering(HashMap<String, usize>);

impl Numbering {
    pub fn new(urls: &[String]) -> Numbering {
        Numbering(urls.iter().enumerate().map(|(i, u)| (u.clone(), i)).collect())
    }

    /// The recorded scrape as the live run had it: a page, or why there was none.
    pub fn scrape(&self, r: Recorded) -> Option<Scrape> {
        let url = *self.0.get(&r.url)?;
        let result = match (r.body, r.error, r.status) {
            (_, Some(error), _) => Err(error),
            (Some(body), None, Some(status)) if status != 200 => {
                Err(match ureq::http::StatusCode::from_u16(status) {
                    Ok(code) => http::status_reason(code, &body),
                    Err(_) => format!("HTTP {status}"),
                })
            }
            (Some(body), None, _) => Ok(Page {
                format: r
                    .content_type
                    .as_deref()
                    .map_or(Format::PrometheusText, Format::from_content_type),
                content_type: r.content_type,
                body,
            }),
            (None, None, _) => Err("no body and no error recorded".into()),
        };
        Some(Scrape {
            url,
            start: r.start,
            end: r.end,
            result,
        })
    }
}

/// The scrape as a recording keeps it, with the number of intervals computed before it
/// was read.
pub fn recorded(scrape: &Scrape, url: &str, tick: u64) -> Recorded {
    let (status, content_type, body, error) = match &scrape.result {
        Ok(page) => (
            Some(200),
            page.content_type.clone(),
            Some(page.body.clone()),
            None,
        ),
        Err(e) => (None, None, None, Some(e.clone())),
    };
    Recorded {
        url: url.to_string(),
        start: scrape.start,
        end: scrape.end,
        status,
        content_type,
        body,
        error,
        tick: Some(tick),
    }
}
