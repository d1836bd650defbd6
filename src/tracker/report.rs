//! What one ingest reports: samples recorded, resets, refusals (each naming its series
//! and line), and a page that matched nothing with the names nearest to those asked.

use std::fmt;

use chrono::{DateTime, TimeDelta, Utc};

use crate::error::{ParseError, Refusal};
use crate::series::ResetCause;
use crate::text::write::series_text;

/// A counter restart seen while ingesting.
///
/// # Example
/// ```
/// let mut t = promrate::Tracker::new([]);
/// let at = |s| chrono::DateTime::from_timestamp(s, 0).unwrap();
/// t.ingest("x_total 10\n", at(1))?;
/// let report = t.ingest("x_total 2\n", at(2))?;
/// assert_eq!(report.resets[0].name, "x_total");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ResetEvent {
    /// The series' metric name.
    pub name: String,
    /// Its labels, sorted.
    pub labels: Vec<(String, String)>,
    /// Why it counts as a restart.
    pub cause: ResetCause,
}

/// A target whose process start time changed on a page ([`IngestReport::process_restarts`]):
/// every counter of it without a created time of its own restarted then
/// ([`ResetCause::ProcessRestarted`]), or, when the start went backwards, two processes
/// seem to answer in turn ([`ResetCause::StartWentBack`]).
///
/// # Example
/// ```
/// let mut t = promrate::Tracker::new([]);
/// let at = |s| chrono::DateTime::from_timestamp(s, 0).unwrap();
/// t.ingest("process_start_time_seconds 100\ntokens_total 500\n", at(200))?;
/// // Restarted at 250 s and already past 500: only the start time tells.
/// let report = t.ingest("process_start_time_seconds 250\ntokens_total 700\n", at(300))?;
/// let restart = &report.process_restarts[0];
/// assert_eq!((restart.from, restart.to, restart.cause), (at(100), at(250), promrate::series::ResetCause::ProcessRestarted));
/// assert_eq!(t.get("tokens_total", &[]).unwrap().counter().unwrap().total_increase(), 700.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ProcessRestart {
    /// The target's labels (`job`, `instance`, those it has; none on a server's own page).
    pub target: Vec<(String, String)>,
    /// The start time before.
    pub from: DateTime<Utc>,
    /// The start time now.
    pub to: DateTime<Utc>,
    /// [`ResetCause::ProcessRestarted`], or [`ResetCause::StartWentBack`].
    pub cause: ResetCause,
}

/// A counter dropped as stale ([`IngestReport::retired`]): its name and labels as
/// [`ResetEvent`] gives them, and its reset-corrected increase since it was first seen
/// ([`CounterSeries::total_increase`](crate::series::CounterSeries::total_increase)).
///
/// # Example
/// ```
/// let mut t = promrate::Tracker::new([]);
/// t.stale_after(1);
/// let at = |s| chrono::DateTime::from_timestamp(s, 0).unwrap();
/// t.ingest("# TYPE a counter\na_total{engine=\"1\"} 5\n", at(1))?;
/// t.ingest("# TYPE a counter\na_total{engine=\"1\"} 9\n", at(2))?;
/// let report = t.ingest("# TYPE a counter\n", at(3))?;
/// assert_eq!(report.retired[0].name, "a_total");
/// assert_eq!(report.retired[0].total_increase, 4.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Retired {
    /// The metric name.
    pub name: String,
    /// The labels, sorted by name.
    pub labels: Vec<(String, String)>,
    /// What it counted since it was first seen, restarts corrected.
    pub total_increase: f64,
}

/// What one [`Tracker::ingest`](crate::Tracker::ingest) did.
///
/// # Example
/// ```
/// let mut t = promrate::Tracker::new([]);
/// let report = t.ingest("a 1\nb{ 2\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
/// assert_eq!((report.samples, report.bad_lines), (1, 1));
/// assert_eq!(report.first_error.unwrap().line, 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct IngestReport {
    /// Samples that matched the selectors and were recorded.
    pub samples: usize,
    /// Series seen for the first time.
    pub new_series: usize,
    /// Series dropped for not appearing in [`Tracker::stale_after`](crate::Tracker::stale_after) scrapes.
    pub dropped_stale: usize,
    /// The counters among them that had counted something, with what they counted: the
    /// tokens of a server gone from a fleet stay in a caller's totals since its start.
    pub retired: Vec<Retired>,
    /// Lines that did not parse.
    pub bad_lines: usize,
    /// The first parse error, with its line and column.
    pub first_error: Option<ParseError>,
    /// Samples that repeated a point their series holds (same exposed timestamp, same
    /// value), as a federation serves a point until its next scrape and an export of a
    /// range repeats its older points. Not recorded again.
    pub repeated: usize,
    /// Samples a series refused (an exposed timestamp that went back, or repeated with
    /// another value; a negative or non-finite counter value). The series is unchanged.
    pub refused: usize,
    /// The first refusal, naming the series and why.
    pub first_refused: Option<Refusal>,
    /// Counter restarts detected in this scrape.
    pub resets: Vec<ResetEvent>,
    /// Targets whose process start time changed in this scrape (see
    /// [`Tracker::start_time_gauge`](crate::Tracker::start_time_gauge)).
    pub process_restarts: Vec<ProcessRestart>,
    /// Set when some of the tracker's selectors matched none of the page's samples: which,
    /// and the names on the page nearest to theirs.
    pub unmatched: Option<Unmatched>,
    /// Of the samples recorded at a timestamp of their own, the one farthest from the
    /// page's time: its timestamp less the page's (`None` when no sample had one, or all
    /// were the page's). A federation's samples lag by up to its scrape interval; days
    /// are a server's clock, or samples of another time. Windows end at the page's
    /// time, so samples far from it fall outside them.
    ///
    /// # Example
    /// ```
    /// let mut t = promrate::Tracker::new([]);
    /// let page = "tokens_total 10 1700000000000\n"; // its own time: a day before the scrape
    /// let report = t.ingest(page, chrono::DateTime::from_timestamp(1_700_086_400, 0).unwrap())?;
    /// assert_eq!(report.timestamp_skew, Some(chrono::TimeDelta::days(-1)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub timestamp_skew: Option<TimeDelta>,
}

/// Selectors of the tracker that matched none of a page's samples
/// ([`IngestReport::unmatched`]), with the names on the page nearest to those asked: a
/// misspelled name, or `vllm_` written where `vllm:` was asked (see
/// [`Tracker::vllm_preset`](crate::Tracker::vllm_preset)), or a metric the server does
/// not expose.
///
/// # Example
/// ```
/// use promrate::{Selector, Tracker};
/// let mut t = Tracker::new([Selector::parse("vllm:generation_tokens_total")?]);
/// let report = t.ingest("vllm_generation_tokens_total 5\nup 1\n", chrono::DateTime::from_timestamp(1, 0).unwrap())?;
/// let unmatched = report.unmatched.unwrap();
/// assert_eq!(unmatched.nearest, ["vllm_generation_tokens_total"]);
/// assert!(unmatched.to_string().contains("normalize_names"), "{unmatched}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Unmatched {
    /// The selectors that matched nothing, in PromQL syntax.
    pub selectors: Vec<String>,
    /// The metric names on the page nearest to the selectors' names, nearest first (at
    /// most three per selector).
    pub nearest: Vec<String>,
    /// Whether a name on the page differs from one asked only in ':' and '_'.
    pub differs_in_separators: bool,
}

impl fmt::Display for Unmatched {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no sample on the page matched {}", self.selectors.join(", "))?;
        if !self.nearest.is_empty() {
            write!(f, "; nearest names on the page: {}", self.nearest.join(", "))?;
        }
        if self.differs_in_separators {
            f.write_str(
                " (they differ only in ':' and '_': Tracker::normalize_names(true), or Tracker::vllm_preset for vLLM)",
            )?;
        }
        Ok(())
    }
}

/// A reset as a log line says it: `x_total{engine="0"} reset: the value dropped`.
///
/// # Example
/// ```
/// let mut t = promrate::Tracker::new([]);
/// let at = |s| chrono::DateTime::from_timestamp(s, 0).unwrap();
/// t.ingest("x_total{engine=\"0\"} 10\n", at(1))?;
/// let report = t.ingest("x_total{engine=\"0\"} 2\n", at(2))?;
/// assert_eq!(report.resets[0].to_string(), "x_total{engine=\"0\"} reset: the value dropped");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl fmt::Display for ResetEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        series_text(f, &self.name, self.labels.iter().map(|(k, v)| (k, v)))?;
        write!(f, " reset: {}", self.cause)
    }
}

/// A refusal as its message says it: `line 3: a_total{engine="0"}: ...`.
impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: ", self.line)?;
        series_text(f, &self.name, self.labels.iter().map(|(k, v)| (k, v)))?;
        write!(f, ": {}", self.error)
    }
}
