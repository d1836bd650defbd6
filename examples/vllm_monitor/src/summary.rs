//! The end of a run in figures, built once for every output: tokens and requests since
//! the start, restarts, errors, and the URLs that never answered, with their reason.

use chrono::{DateTime, TimeDelta, Utc};

use crate::figures::slo::Attainment;
use crate::snapshot::Run;
use crate::target::ServerRow;

/// What a run amounted to.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub elapsed_s: f64,
    pub generated_tokens: Option<f64>,
    pub finished_requests: Option<f64>,
    /// Tokens since the first scrape ÷ the seconds from it to the last interval.
    pub mean_generation_rate: Option<f64>,
    pub restarts: usize,
    /// The `--alert` rules that fired, on the totals or a group (set by the pipeline).
    pub alerts: Vec<crate::alerts::Fired>,
    pub scrape_errors: u64,
    /// Sources not rated at the last interval (the `erratic` event: processes in turn):
    /// no window rate; `generated_tokens` holds each process's own rises, not the switches.
    pub not_rated: usize,
    pub skipped_pages: u64,
    /// Intervals not computed because the monitor fell behind (a live run catches up).
    pub skipped_intervals: u64,
    /// Energy the GPUs used since monitoring began (DCGM), kWh.
    pub energy_kwh: Option<f64>,
    /// GPU hours of the span × `--gpu-hour-price`.
    pub gpu_cost: Option<f64>,
    /// URLs (as shown) no scrape ever read, each with why its last scrape failed.
    pub never_answered: Vec<(String, String)>,
    /// The share of requests within each `--slo` objective since the first scrape.
    pub slo: Vec<Attainment>,
    /// The figures no server exposed at the last interval (JSON names: its latencies').
    pub not_exposed: Vec<&'static str>,
}

impl Summary {
    pub fn new(run: &Run<'_>, elapsed_s: f64) -> Summary {
        let figures = run.snapshot.map(|s| &s.figures);
        // The tokens since the start were counted between the first scrape and the last
        // interval's: the mean is over that span, not over the whole run.
        let span_s = run
            .snapshot
            .and_then(|s| counted_span(run.servers, s.at))
            .map(|span| span.as_seconds_f64())
            .filter(|span| *span > 0.0);
        let generated_tokens = figures.and_then(|f| f.since_start.generated);
        let energy_kwh = figures
            .and_then(|f| f.gpus.as_ref()?.energy_since_start_j)
            .map(|j| j / 3.6e6);
        let gpu_cost = figures.and_then(|f| {
            let gpus = f.per_token.gpus? as f64;
            Some(f.per_token.gpu_hour_price? * gpus * span_s? / 3600.0)
        });
        Summary {
            energy_kwh,
            gpu_cost,
            elapsed_s,
            generated_tokens,
            finished_requests: figures.and_then(|f| f.since_start.finished),
            mean_generation_rate: generated_tokens.zip(span_s).map(|(g, span)| g / span),
            restarts: run.earlier.restarts_with(run.events),
            alerts: Vec::new(),
            scrape_errors: run.servers.iter().map(|t| t.errors).sum(),
            not_rated: figures.map_or(0, |f| f.not_rated),
            skipped_pages: run.servers.iter().map(|t| t.skipped).sum(),
            skipped_intervals: 0,
            slo: figures.map(|f| f.since_start.slo.clone()).unwrap_or_default(),
            not_exposed: figures
                .map(|f| f.capacity.not_exposed.clone())
                .unwrap_or_default(),
            never_answered: run
                .servers
                .iter()
                .filter(|t| t.since.is_none())
                .map(|t| (t.url.clone(), t.status.to_string()))
                .collect(),
        }
    }

    /// Whether any scrape succeeded: the exit status.
    pub fn any_answer(&self, urls: usize) -> bool {
        self.never_answered.len() < urls
    }
}

/// The span the servers' tokens since the start were counted over, up to the interval at
/// `at`: the mean over their token counters of the time from each one's first point to its
/// newest (a federation's or a TSDB's samples carry the times they were scraped, each
/// server's its own: a mean over the pages' span was up to 10% off over 50 s), or from
/// the first page to `at` for URLs whose counters are not known (none yet, or none now).
pub fn counted_span(servers: &[ServerRow], at: DateTime<Utc>) -> Option<TimeDelta> {
    let (mut weighted_ms, mut counters) = (0.0, 0);
    for counted in servers.iter().filter_map(|t| t.counted) {
        weighted_ms += (counted.newest_ms.min(at.timestamp_millis() as f64) - counted.first_ms)
            * counted.counters as f64;
        counters += counted.counters;
    }
    if counters > 0 {
        return Some(TimeDelta::milliseconds(
            (weighted_ms / counters as f64).round() as i64
        ));
    }
    let first = servers.iter().filter_map(|t| t.since).min()?;
    Some(at - first)
}
