//! # promrate
//!
//! Turns Prometheus exposition text into trustworthy rates.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod error;
pub mod promql;
mod select;
pub mod text;

pub use error::{ParseError, ParseErrorKind, SelectorError, SelectorErrorKind, SeriesError};
pub use select::{MatchOp, Matcher, Selector};
pub use text::{
    parse, Entries, Entry, Exemplar, Format, HelpText, LabelValue, Labels, LabelsIter, MetricType, Parser,
    Sample, UnescapedBytes,
};
