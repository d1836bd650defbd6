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
//! [`promql::RangeFunctions`] computes `rate`, `increase`, `irate`, ... exactly as Prometheus does
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
//! let rate = tracker.exact_rate_by(&tokens, &[], TimeDelta::seconds(10), t1);
//! assert_eq!(rate[0].value, 30.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Rates per label across many series
//! `sum by (engine) (rate(x[1m]))` is [`Tracker::rate_by`]; the exact, non-extrapolated
//! rate over the newest page's series is [`Tracker::exact_rate_by`].
//!
//! ```
//! use chrono::{DateTime, TimeDelta};
//! use promrate::{promql::RangeFunctions, Selector, Tracker};
//! let tokens = Selector::parse("vllm:generation_tokens_total")?;
//! let mut tracker = Tracker::new([tokens.clone()]);
//! let at = |s: i64| DateTime::from_timestamp(1_700_000_000 + s, 0).unwrap();
//! for s in 0..=6 {
//!     let page = format!(
//!         "vllm:generation_tokens_total{{engine=\"0\"}} {}\n\
//!          vllm:generation_tokens_total{{engine=\"1\"}} {}\n",
//!         800 * s,
//!         400 * s
//!     );
//!     tracker.ingest(&page, at(10 * s))?;
//! }
//! let promql = tracker.rate_by(&tokens, &["engine"], &RangeFunctions::new(TimeDelta::minutes(1)), at(60));
//! let exact = tracker.exact_rate_by(&tokens, &["engine"], TimeDelta::minutes(1), at(60));
//! for per_engine in [promql, exact] {
//!     let rates: Vec<(Option<&str>, f64)> = per_engine.iter().map(|g| (g.label("engine"), g.value)).collect();
//!     assert_eq!(rates, [(Some("0"), 80.0), (Some("1"), 40.0)]);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## A histogram's quantile over a window
//! A selector names the histogram (`x` or, as PromQL users write it, `x_bucket`); the
//! quantile is over each bucket's increase in the window, as
//! `histogram_quantile(0.95, sum by (le) (increase(x_bucket[1m])))`.
//!
//! ```
//! use chrono::{DateTime, TimeDelta};
//! use promrate::{Selector, Tracker};
//! let ttft = Selector::parse("vllm:time_to_first_token_seconds")?;
//! let mut tracker = Tracker::new([ttft.clone()]);
//! let page = |fast: u32, all: u32| format!(
//!     "# TYPE vllm:time_to_first_token_seconds histogram\n\
//!      vllm:time_to_first_token_seconds_bucket{{le=\"0.1\"}} {fast}\n\
//!      vllm:time_to_first_token_seconds_bucket{{le=\"1.0\"}} {all}\n\
//!      vllm:time_to_first_token_seconds_bucket{{le=\"+Inf\"}} {all}\n\
//!      vllm:time_to_first_token_seconds_count {all}\n");
//! let at = |s: i64| DateTime::from_timestamp(1_700_000_000 + s, 0).unwrap();
//! tracker.ingest(&page(500, 1000), at(0))?;
//! tracker.ingest(&page(590, 1100), at(60))?; // in the minute: 90 of 100 under 0.1 s
//! let increase = |s: &promrate::TrackedSeries| s.counter()?.exact_increase(TimeDelta::minutes(1), at(60));
//! let p95 = tracker.histogram_quantile(0.95, &ttft, &[], increase);
//! assert!((p95[0].value - 0.55).abs() < 1e-9); // halfway through (0.1, 1.0]
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Bad input
//! A line that does not parse is a typed [`ParseError`] with its line and column; the
//! iterator goes on with the next line, so the rest of the page is kept. A tracker counts
//! the bad lines, reports the first and records everything else.
//!
//! ```
//! use promrate::{ParseErrorKind, Tracker};
//! let page = "a_total 1\nb_total{x=\"1\" 2\nc_total NaNx\nd_total 4\n";
//! let errors: Vec<promrate::ParseError> = promrate::parse(page).filter_map(Result::err).collect();
//! assert_eq!(errors.iter().map(|e| (e.line, e.column)).collect::<Vec<_>>(), [(2, 15), (3, 9)]);
//! assert!(matches!(errors[1].kind, ParseErrorKind::InvalidValue(_)));
//! let mut tracker = Tracker::new([]);
//! let report = tracker.ingest(page, chrono::DateTime::from_timestamp(1, 0).unwrap())?;
//! assert_eq!((report.samples, report.bad_lines), (2, 2));
//! assert_eq!(report.first_error.unwrap().to_string(), "line 2, column 15: expected ',' or '}' after a label");
//! # Ok::<(), promrate::SeriesError>(())
//! ```
//!
//! ## Where things are
//! Every type has one path. Types are at the crate root (`promrate::Parser`,
//! `promrate::Sample`, `promrate::Tracker`, ...), with two exceptions where the path says
//! something the name alone does not: [`promql`] holds PromQL's own vocabulary
//! ([`promql::RangeFunctions`], [`promql::Point`], [`promql::Semantics`] and the modifiers), as in
//! `promql::RangeFunctions::new(..).rate(..)`; [`histogram`] holds classic-histogram arithmetic
//! ([`histogram::quantile`], [`histogram::Bucket`]). [`text`] is public only for
//! [`text::write`], which renders pages back.
//!
//! Settings of values a caller keeps and changes ([`Tracker`], [`CounterSeries`],
//! [`GaugeSeries`]) are set through `&mut self`; [`Parser`] and [`promql::RangeFunctions`] are small
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
mod query;
mod select;
mod series;
pub mod text;
mod tracker;

pub use error::{
    FamilyRule, IngestError, NoValue, ParseError, ParseErrorKind, QueryError, SelectorError, SelectorErrorKind,
    SeriesError,
};
pub use query::{Answer, Coverage, Estimator, GroupAnswer, Query, SeriesScope};
pub use select::{MatchOp, Matcher, Selector};
pub use series::{
    CounterSeries, GaugeSeries, ResetCause, Shortened, WindowIncrease, WindowRule, DEFAULT_EWMA_TAU,
    DEFAULT_MAX_POINTS,
};
pub use text::entry::Entry;
pub use text::escape::UnescapedBytes;
pub use text::help::HelpText;
pub use text::labels::{LabelValue, Labels, LabelsIter};
pub use text::metric_type::MetricType;
pub use text::owned::OwnedSample;
pub use text::parser::{parse, Entries, Format, Parser};
pub use text::sample::{Exemplar, Sample};
pub use tracker::{
    Group, GroupLabels, IngestReport, Refusal, ResetEvent, SeriesData, TrackedSeries, Tracker, Unmatched,
    DEFAULT_RETENTION, DEFAULT_STALE_AFTER,
};

/// The README's Rust examples, compiled and run by `cargo test --doc`.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
