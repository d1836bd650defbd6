//! # promrate
//!
//! Turns Prometheus exposition text into trustworthy rates.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod error;
pub mod histogram;
pub mod promql;
mod select;
mod series;
pub mod text;
mod tracker;

pub use error::{ParseError, ParseErrorKind, SelectorError, SelectorErrorKind, SeriesError};
pub use select::{MatchOp, Matcher, Selector};
pub use series::{CounterSeries, GaugeSeries, ResetCause, DEFAULT_EWMA_TAU};
pub use text::{
    parse, Entries, Entry, Exemplar, Format, HelpText, LabelValue, Labels, LabelsIter, MetricType, Parser,
    Sample, UnescapedBytes,
};
pub use tracker::{
    Group, IngestReport, ResetEvent, SeriesData, TrackedSeries, Tracker, DEFAULT_RETENTION,
    DEFAULT_STALE_AFTER,
};
