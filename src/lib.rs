//! # promrate
//!
//! Turns Prometheus exposition text into trustworthy rates: the measurement that
//! `curl /metrics | grep | awk`, twice, then `bc` gets quietly wrong (restarts, label sets,
//! scrape timing, jitter), done exactly and IO-free.
//!
//! Three layers, data flowing one way:
//!
//! ```text
//! /metrics page ──► text (parse) ──► Selector (match) ──► CounterSeries / Tracker (rates)
//! ```
//!
//! ## Parse: zero-copy, no allocation per sample
//! [`parse`] reads the Prometheus text format 0.0.4 (with Prometheus 3's quoted UTF-8
//! names); [`Parser`] also reads OpenMetrics 1.0 with full validation. Samples borrow from
//! the page; label values stay escaped until asked ([`LabelValue::unescaped`]). Errors
//! carry line and column, and iteration resumes at the next line.
//!
//! ```
//! let page = "# TYPE vllm:generation_tokens counter\n\
//!             vllm:generation_tokens_total{engine=\"0\",model_name=\"llama\"} 7852.0\n\
//!             up{job=\"a\" 1\n";
//! for entry in promrate::parse(page) {
//!     match entry {
//!         Ok(promrate::Entry::Sample(s)) => assert_eq!(s.value(), 7852.0),
//!         Ok(_) => {}
//!         Err(e) => assert_eq!(e.to_string(), "line 3, column 12: expected ',' or '}' after a label"),
//!     }
//! }
//! ```
//!
//! ## Select: PromQL matchers
//! ```
//! let selector = promrate::Selector::parse(r#"vllm:generation_tokens_total{model_name=~"llama.*"}"#)?;
//! let sample = promrate::parse("vllm:generation_tokens_total{model_name=\"llama-3\"} 1")
//!     .next().unwrap().unwrap().into_sample().unwrap();
//! assert!(selector.matches(&sample));
//! # Ok::<(), promrate::SelectorError>(())
//! ```
//!
//! ## Rates: bit-exact PromQL, restarts handled
//! [`promql::Range`] computes `rate`, `increase`, `irate`, ... exactly as Prometheus does
//! (same float operations in the same order). [`CounterSeries`] follows one live counter
//! across restarts; [`Tracker`] follows every series of a page, scrape after scrape, and
//! aggregates like `sum by`.
//!
//! ```
//! use chrono::{DateTime, TimeDelta};
//! use promrate::Tracker;
//! let tokens = promrate::Selector::parse("tokens_total")?;
//! let mut tracker = Tracker::new([tokens.clone()]);
//! let t0 = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
//! tracker.ingest("tokens_total 5000\n", t0)?;
//! // The server restarted in between: 300 new tokens, not -4700.
//! let t1 = t0 + TimeDelta::seconds(10);
//! let report = tracker.ingest("tokens_total 300\n", t1)?;
//! assert_eq!(report.resets.len(), 1);
//! let rate = tracker.sum_by(&tokens, &[], |s| s.counter()?.exact_rate(TimeDelta::seconds(10), t1));
//! assert_eq!(rate[0].value, 30.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Where things are
//! Every type has one path. Types are at the crate root (`promrate::Parser`,
//! `promrate::Sample`, `promrate::Tracker`, ...), with two exceptions where the path says
//! something the name alone does not: [`promql`] holds PromQL's own vocabulary
//! ([`promql::Range`], [`promql::Point`], [`promql::Semantics`] and the modifiers), as in
//! `promql::Range::new(..).rate(..)`; [`histogram`] holds classic-histogram arithmetic
//! ([`histogram::quantile`], [`histogram::Bucket`]). [`text`] is public only for
//! [`text::write`], which renders pages back.
//!
//! Settings of values a caller keeps and changes ([`Tracker`], [`CounterSeries`],
//! [`GaugeSeries`]) are set through `&mut self`; [`Parser`] and [`promql::Range`] are small
//! `Copy` values, built by chaining methods that take and return `self`.
//!
//! ## Features
//! - `regex` (default): `=~` and `!~` matchers. Without it they are a
//!   [`SelectorErrorKind::RegexUnsupported`] error.
//! - `fuzzing`: internal, for the fuzz targets in `fuzz/`; not part of the API.
//!
//! ## Limits
//! By default nothing is limited: every page Prometheus' own text parser accepts is read,
//! with the same values (a 1 MiB label value costs nothing, the page is already in
//! memory). Limits are opt-in on [`Parser`], named after Prometheus' scrape-config limits:
//! [`Parser::sample_limit`], [`Parser::label_limit`], [`Parser::label_name_length_limit`],
//! [`Parser::label_value_length_limit`], [`Parser::body_size_limit`] (and
//! [`Parser::max_line_len`]); each refuses with its own [`ParseErrorKind`]. Values are read
//! as Prometheus reads them: an out-of-range literal (`1e400`) and a signed NaN are refused,
//! as Prometheus refuses them (prometheus_client would read ±Inf and NaN). Quoted metric and
//! label names may not contain escape sequences (names are returned as borrowed `&str`).
//! Timestamps are milliseconds (Prometheus' resolution).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod error;
mod fingerprint;
/// Internals exposed to `cargo fuzz` only (feature `fuzzing`); not part of the API.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod histogram;
pub mod promql;
mod select;
mod series;
pub mod text;
mod tracker;

pub use error::{FamilyRule, ParseError, ParseErrorKind, SelectorError, SelectorErrorKind, SeriesError};
pub use select::{MatchOp, Matcher, Selector};
pub use series::{CounterSeries, GaugeSeries, ResetCause, DEFAULT_EWMA_TAU, DEFAULT_MAX_POINTS};
pub use text::escape::UnescapedBytes;
pub use text::labels::{LabelValue, Labels, LabelsIter};
pub use text::owned::OwnedSample;
pub use text::parser::{parse, Entries, Format, Parser};
pub use text::sample::{Entry, Exemplar, HelpText, MetricType, Sample};
pub use tracker::{
    Group, GroupLabels, IngestReport, Refusal, ResetEvent, SeriesData, TrackedSeries, Tracker,
    DEFAULT_RETENTION, DEFAULT_STALE_AFTER,
};

/// The README's Rust examples, compiled and run by `cargo test --doc`.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
