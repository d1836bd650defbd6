//! What a live series refuses ([`SeriesError`]: one sample) and what a tracker refuses
//! ([`IngestError`]: a whole scrape).

use chrono::{DateTime, Utc};
use thiserror::Error;

use super::{rfc3339, ParseError};

/// A sample a live series refused; the series is unchanged.
///
/// # Example
/// ```
/// use chrono::{DateTime, TimeDelta};
/// use promrate::{series::CounterSeries, SeriesError};
/// let mut series = CounterSeries::new(TimeDelta::minutes(5));
/// let t = DateTime::from_timestamp(1_764_000_000, 0).unwrap();
/// series.push(t, 10.0)?;
/// let refused = series.push(t, 11.0).unwrap_err();
/// assert_eq!(refused, SeriesError::NotAfterLast { at: t, last: t });
/// assert_eq!(
///     refused.to_string(),
///     "a sample at 2025-11-24T16:00:00Z is not after the series' newest point at 2025-11-24T16:00:00Z"
/// );
/// # Ok::<(), SeriesError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum SeriesError {
    /// The sample's time is not after the series' newest point.
    #[error("a sample at {} is not after the series' newest point at {}", rfc3339(.at), rfc3339(.last))]
    NotAfterLast {
        /// The refused sample's time.
        at: DateTime<Utc>,
        /// The time of the series' newest point.
        last: DateTime<Utc>,
    },
    /// Counter values must be finite and not negative.
    #[error("invalid counter value {0}: a counter is finite and not negative")]
    InvalidValue(f64),
    /// The same series twice in one page (same name and labels, label order aside) with
    /// another value: the first sample is kept.
    #[error("the series appears twice in the page (both at {}); the first sample is kept", rfc3339(.at))]
    Duplicate {
        /// The time both samples were recorded at.
        at: DateTime<Utc>,
    },
}

/// A scrape a [`Tracker`](crate::Tracker) refused whole: nothing of it was recorded, as
/// Prometheus fails a scrape over one of its limits.
///
/// # Example
/// ```
/// use promrate::{IngestError, Tracker};
/// let mut t = Tracker::new([]);
/// let at = chrono::DateTime::from_timestamp(1_764_000_000, 0).unwrap();
/// t.ingest("a_total 1\n", at)?;
/// let refused = t.ingest("a_total 2\n", at).unwrap_err();
/// assert_eq!(refused, IngestError::NotAfterLast { at, last: at });
/// assert_eq!(
///     refused.to_string(),
///     "scrape refused: taken at 2025-11-24T16:00:00Z, not after the previous scrape at 2025-11-24T16:00:00Z"
/// );
/// # Ok::<(), IngestError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum IngestError {
    /// The scrape's time is not after the previous scrape's (the tracker keeps times to the
    /// millisecond: both are given to the millisecond).
    #[error("scrape refused: taken at {}, not after the previous scrape at {}", rfc3339(.at), rfc3339(.last))]
    NotAfterLast {
        /// The refused scrape's time.
        at: DateTime<Utc>,
        /// The previous scrape's time.
        last: DateTime<Utc>,
    },
    /// A limit of the tracker's [`Parser`](crate::Parser): `sample_limit`, `label_limit`,
    /// `label_name_length_limit`, `label_value_length_limit` or `body_size_limit`; the
    /// error names the limit, the value seen and where.
    #[error("scrape refused: {0}")]
    Limit(ParseError),
    /// The scrape would have taken the tracker past
    /// [`Tracker::max_series`](crate::Tracker::max_series).
    #[error("scrape refused: {series} series, over the max_series of {limit}")]
    SeriesLimit {
        /// The configured limit.
        limit: usize,
        /// How many series the tracker would have held.
        series: usize,
    },
}

/// Why [`Tracker::ingest_reader`](crate::Tracker::ingest_reader) failed: the reader's
/// error, or the tracker's refusal of the scrape.
///
/// # Example
/// ```
/// use promrate::{error::ReadError, Tracker};
/// struct Broken;
/// impl std::io::Read for Broken {
///     fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
///         Err(std::io::Error::other("connection reset"))
///     }
/// }
/// let mut t = Tracker::new([]);
/// let at = chrono::DateTime::from_timestamp(1, 0).unwrap();
/// let error = t.ingest_reader(Broken, at).unwrap_err();
/// assert!(matches!(error, ReadError::Read(_)));
/// assert_eq!(error.to_string(), "scrape cut short: connection reset");
/// ```
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ReadError {
    /// Reading the page failed: the lines read before were recorded as the page (its
    /// last line, which may be cut, was not).
    #[error("scrape cut short: {0}")]
    Read(#[from] std::io::Error),
    /// The tracker refused the scrape (nothing recorded), as [`Tracker::ingest`](crate::Tracker::ingest) would.
    #[error(transparent)]
    Ingest(#[from] IngestError),
}

/// A sample a series refused, and why ([`IngestReport::first_refused`](crate::IngestReport::first_refused)).
///
/// # Example
/// ```
/// let mut t = promrate::Tracker::new([]);
/// let at = |s| chrono::DateTime::from_timestamp(s, 0).unwrap();
/// t.ingest("a_total 5 2000\n", at(3))?;
/// let report = t.ingest("a_total 6 1000\n", at(4))?;
/// let refusal = report.first_refused.unwrap();
/// assert_eq!((refusal.name.as_str(), refusal.line), ("a_total", 1));
/// let (one, two) = (chrono::DateTime::from_timestamp(1, 0).unwrap(), chrono::DateTime::from_timestamp(2, 0).unwrap());
/// assert_eq!(refusal.error, promrate::SeriesError::NotAfterLast { at: one, last: two });
/// assert_eq!(
///     refusal.to_string(),
///     "line 1: a_total: a sample at 1970-01-01T00:00:01Z is not after the series' newest point at 1970-01-01T00:00:02Z"
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Refusal {
    /// The series' metric name.
    pub name: String,
    /// Its labels, sorted.
    pub labels: Vec<(String, String)>,
    /// The page's line that held the refused sample (1-based).
    pub line: usize,
    /// Why the sample was refused.
    pub error: SeriesError,
}

// Its Display (the series written as a page writes it) is `tracker/report.rs`'s: the
// writer is a layer above the errors.
impl std::error::Error for Refusal {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}
