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
use crate::recording::{self, Recorded, RunSettings};
use crate::scrape::Scrape;
use crate::text::visible::visible;

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
    /// The recorded run's `--slo`, `--alert` and `--by` (none in another scraper's).
    pub settings: RunSettings,
}

/// What a scan of a recording found: its scrapes' URLs and times, and the first line
/// that is not a scrape.
#[derive(Default)]
struct Scan {
    urls: Vec<String>,
    first: Option<DateTime<Utc>>,
    /// The scrape times of the first URL.
    starts: Vec<DateTime<Utc>>,
    bad: Option<String>,
}

impl Scan {
    fn add(&mut self, scrape: &Recorded) {
        self.first = Some(self.first.map_or(scrape.start, |f| f.min(scrape.start)));
        if !self.urls.contains(&scrape.url) {
            self.urls.push(scrape.url.clone());
        }
        if scrape.url == self.urls[0] {
            self.starts.push(scrape.start);
        }
    }

    /// Why there is nothing to replay: the first line that is not a scrape, or that there
    /// is no line after the header, or none at all.
    fn nothing(self, shown: &str, header: bool) -> String {
        match (self.bad, header) {
            (Some(bad), _) => format!(
                "{shown}: no scrape in the recording (JSON Lines, a scrape per line); the first line that is not one: {bad}"
            ),
            (None, true) => format!("{shown}: no scrape in the recording, only its header"),
            (None, false) => format!("{shown}: the recording is empty: no scrape to replay"),
        }
    }
}

/// The start of a line as it may be shown: its first 40 characters, what a terminal would
/// act on written out.
fn excerpt(text: &[u8]) -> String {
    let text = String::from_utf8_lossy(text);
    let line = text.trim_end_matches(['\n', '\r']);
    let short: String = line.chars().take(40).collect();
    let more = if line.chars().count() > 40 { "…" } else { "" };
    format!("`{}{more}`", visible(&short))
}

/// Reads the recording at `path` to learn its run (streaming: nothing is kept but the URLs
/// and the scrape times of the first URL; a recording of the monitor's, with its header,
/// is read up to its first scrape). A recording without any scrape is an error that names
/// the first line that is not one.
pub fn survey(path: &Path) -> Result<Recording, String> {
    let shown = path.display().to_string();
    let mut replay = recording::open(path).map_err(|e| match e.line {
        0 => format!("{shown}: {}", e.message),
        _ => format!("{shown}: {e}"),
    })?;
    let header = replay.header().cloned();
    let mut scan = Scan::default();
    while let Some(scrape) = replay.next() {
        match scrape {
            Ok(scrape) => scan.add(&scrape),
            Err(e) if scan.bad.is_none() => {
                scan.bad = Some(format!("{e}: {}", excerpt(replay.line_text())));
            }
            Err(_) => {}
        }
        if header.is_some() && scan.first.is_some() {
            break;
        }
    }
    let Some(started) = scan.first else {
        return Err(scan.nothing(&shown, header.is_some()));
    };
    if let Some(h) = header {
        let duration = h
            .extra
            .get("duration_s")
            .and_then(serde_json::Value::as_f64)
            .map(Duration::from_secs_f64);
        return Ok(Recording {
            started: h.started,
            urls: h.urls,
            interval: h.interval,
            window: Some(h.window),
            duration,
            ours: true,
            what: "recorded by vllm_monitor".into(),
            settings: RunSettings::read_from(&h.extra),
        });
    }
    let mut gaps: Vec<i64> = scan
        .starts
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
        urls: scan.urls,
        interval,
        window: None,
        duration: None,
        ours: false,
        what: "another scraper's recording".into(),
        settings: RunSettings::default(),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Each recorded page is read in the format it was served in: its Content-Type picks
    /// the parser (OpenMetrics 2.0 too), and a recording without one reads as text.
    #[test]
    fn a_replayed_page_is_read_as_it_was_served() {
        let at = DateTime::from_timestamp(1_900_000_000, 0).unwrap();
        let numbering = Numbering::new(&["http://h/metrics".to_string()]);
        let format = |content_type: Option<&str>| {
            let recorded = Recorded {
                url: "http://h/metrics".into(),
                start: at,
                end: at,
                status: Some(200),
                content_type: content_type.map(str::to_string),
                body: Some("a_total 1\n".into()),
                error: None,
                tick: Some(0),
            };
            let page = numbering.scrape(recorded).unwrap().result.unwrap();
            (page.format, page.content_type)
        };
        let om2 = "application/openmetrics-text; version=2.0.0; charset=utf-8";
        assert_eq!(format(Some(om2)), (Format::OpenMetrics2, Some(om2.to_string())));
        let om1 = "application/openmetrics-text; version=1.0.0; charset=utf-8";
        assert_eq!(format(Some(om1)).0, Format::OpenMetrics);
        assert_eq!(
            format(Some("text/plain; version=1.0.0; escaping=allow-utf-8")).0,
            Format::PrometheusText
        );
        assert_eq!(format(None), (Format::PrometheusText, None));
    }
}
