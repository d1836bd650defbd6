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
//! [`parse`] reads the Prometheus text format 0.0.4 and 1.0.0 (quoted UTF-8 names, with
//! escapes); [`Parser`] also reads OpenMetrics 1.0 and 2.0 ([`Format::OpenMetrics2`]: start
//! timestamps, composite values with native histograms, several exemplars) with full
//! validation. Samples borrow from the page; label values and quoted names stay escaped
//! until asked ([`LabelValue::unescaped`], [`Sample::name_unescaped`]). Errors carry line
//! and column, and iteration resumes at the next line. Iterating a page allocates nothing
//! in the text format and in OpenMetrics read line by line (`strict(false)`), escapes
//! included; strict OpenMetrics keeps its rules across lines (the families seen, a
//! family's label groups) in a few collections per page, which grow with the page, never
//! per sample; an error allocates its message (`tests/alloc.rs` counts each).
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
//! ## Rates: one road
//! A [`Tracker`] follows every series its selectors pick, scrape after scrape, across
//! restarts. Ask it with a [`Query`]: what (a [`Selector`]), how (an [`Estimator`]: PromQL's
//! `rate`, `increase` and `irate` bit for bit, the window rate and increase between two
//! real scrapes, an EWMA, the increase since the first page, a gauge's last value or its
//! mean over the window), over what (a window, an evaluation time), by which labels, which
//! series count ([`SeriesScope`]), and what to read of a histogram (its quantile, mean or
//! buckets). [`Tracker::evaluate`] answers each group's value, or why it has none
//! ([`NoValue`]), and what time its points cover: one road, one answer type
//! ([`GroupAnswer`]).
//!
//! Tokens per second from two scrapes, through a restart:
//!
//! ```
//! use chrono::{DateTime, TimeDelta};
//! use promrate::{Estimator, Query, Selector, Tracker};
//! let tokens = Selector::parse("vllm:generation_tokens_total")?;
//! let mut tracker = Tracker::new([tokens.clone()]);
//! let t0 = DateTime::from_timestamp(1_764_000_000, 0).unwrap();
//! tracker.ingest("vllm:generation_tokens_total 5000\n", t0)?;
//! // The server restarted in between: 300 new tokens, not -4700.
//! let t1 = t0 + TimeDelta::seconds(10);
//! let report = tracker.ingest("vllm:generation_tokens_total 300\n", t1)?;
//! assert_eq!(report.resets.len(), 1);
//! let tok_s = Query::new(&tokens, Estimator::WindowRate).window(TimeDelta::seconds(10));
//! assert_eq!(tracker.evaluate(&tok_s)?.value()?, 30.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Per label, PromQL's way or smoothed
//! `sum by (engine) (rate(x[1m]))` is a query with [`Estimator::Rate`] and `by`; the EWMA
//! per engine is the same query with [`Estimator::Ewma`] (its time constant is the
//! tracker's, [`Tracker::ewma_time_constant`]).
//!
//! ```
//! use chrono::{DateTime, TimeDelta};
//! use promrate::{Estimator, Query, Selector, Tracker};
//! let tokens = Selector::parse("vllm:generation_tokens_total")?;
//! let mut tracker = Tracker::new([tokens.clone()]);
//! let at = |s: i64| DateTime::from_timestamp(1_764_000_000 + s, 0).unwrap();
//! for s in 0..=6 {
//!     let page = format!(
//!         "vllm:generation_tokens_total{{engine=\"0\"}} {}\n\
//!          vllm:generation_tokens_total{{engine=\"1\"}} {}\n",
//!         800 * s,
//!         400 * s
//!     );
//!     tracker.ingest(&page, at(10 * s))?;
//! }
//! let per_engine = |estimator| Query::new(&tokens, estimator).by(["engine"]);
//! let minute = TimeDelta::minutes(1);
//! for query in [
//!     per_engine(Estimator::Rate).window(minute), // sum by (engine) (rate(...[1m]))
//!     per_engine(Estimator::WindowRate).window(minute),
//!     per_engine(Estimator::Ewma),
//! ] {
//!     let answer = tracker.evaluate(&query)?;
//!     let rates: Vec<(Option<&str>, f64)> =
//!         answer.groups.iter().map(|g| (g.label("engine"), g.value.clone().unwrap())).collect();
//!     assert_eq!(rates, [(Some("0"), 80.0), (Some("1"), 40.0)], "{query:?}");
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## A histogram's quantile over a window
//! A selector names the histogram (`x` or, as PromQL users write it, `x_bucket`); the
//! quantile is over each bucket's increase in the window, as
//! `histogram_quantile(0.95, sum by (le) (increase(x_bucket[1m])))`; [`Query::mean`] and
//! [`Query::buckets`] read its mean observation and its buckets the same way.
//!
//! ```
//! use chrono::{DateTime, TimeDelta};
//! use promrate::{Estimator, Query, Selector, Tracker};
//! let ttft = Selector::parse("vllm:time_to_first_token_seconds")?;
//! let mut tracker = Tracker::new([ttft.clone()]);
//! let page = |fast: u32, all: u32| format!(
//!     "# TYPE vllm:time_to_first_token_seconds histogram\n\
//!      vllm:time_to_first_token_seconds_bucket{{le=\"0.1\"}} {fast}\n\
//!      vllm:time_to_first_token_seconds_bucket{{le=\"1.0\"}} {all}\n\
//!      vllm:time_to_first_token_seconds_bucket{{le=\"+Inf\"}} {all}\n\
//!      vllm:time_to_first_token_seconds_count {all}\n");
//! let at = |s: i64| DateTime::from_timestamp(1_764_000_000 + s, 0).unwrap();
//! tracker.ingest(&page(500, 1000), at(0))?;
//! tracker.ingest(&page(590, 1100), at(60))?; // in the minute: 90 of 100 under 0.1 s
//! let minute = Query::new(&ttft, Estimator::WindowIncrease).window(TimeDelta::minutes(1));
//! let p95 = tracker.evaluate(&minute.clone().quantile(0.95))?.value()?;
//! assert!((p95 - 0.55).abs() < 1e-9); // halfway through (0.1, 1.0]
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## No silent empty answers
//! A query about series the tracker does not keep is a [`QueryError`]; a group without a
//! value says why ([`NoValue`]: one point so far, not a counter, gone from the newest
//! page, ...); an answer that found no series says which tracked names are nearest to the
//! one asked; a figure whose points cover less than the window says so
//! ([`Coverage::shortened`]); a page that matched none of the tracker's selectors says so
//! in its report ([`IngestReport::unmatched`]). vLLM's pages in every format read with
//! [`Tracker::vllm_preset`].
//!
//! ```
//! use chrono::{DateTime, TimeDelta};
//! use promrate::{Estimator, NoValue, Query, Selector, Tracker};
//! let tokens = Selector::parse("vllm:generation_tokens_total")?;
//! let mut tracker = Tracker::new([tokens.clone()]);
//! let at = |s: i64| DateTime::from_timestamp(1_764_000_000 + s, 0).unwrap();
//! // vLLM's OpenMetrics output spells the name `vllm_...`: nothing matched, and why.
//! let report = tracker.ingest("vllm_generation_tokens_total 10\n", at(0))?;
//! assert_eq!(report.unmatched.unwrap().nearest, ["vllm_generation_tokens_total"]);
//! tracker.vllm_preset();
//! tracker.ingest("vllm_generation_tokens_total 10\n", at(10))?;
//! let query = Query::new(&tokens, Estimator::WindowRate).window(TimeDelta::seconds(10));
//! assert!(matches!(tracker.evaluate(&query)?.value(), Err(NoValue::TooFewScrapes { found: 1, .. })));
//! tracker.ingest("vllm_generation_tokens_total 110\n", at(20))?;
//! assert_eq!(tracker.evaluate(&query)?.value()?, 10.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Below the tracker: [`promql::RangeFunctions`] computes PromQL's range functions over
//! any slice of points exactly as Prometheus does (same float operations in the same
//! order), and [`series::CounterSeries`] follows one live counter across restarts. For
//! the rare figure no estimator computes (one that reads two series at once), [`fold`]
//! folds a closure of your own into the same groups.
//!
//! ## Bad input
//! A line that does not parse is a typed [`ParseError`] with its line and column; the
//! iterator goes on with the next line, so the rest of the page is kept. A tracker counts
//! the bad lines, reports the first and records everything else.
//!
//! ```
//! use promrate::{error::ParseErrorKind, Tracker};
//! let page = "a_total 1\nb_total{x=\"1\" 2\nc_total NaNx\nd_total 4\n";
//! let errors: Vec<promrate::ParseError> = promrate::parse(page).filter_map(Result::err).collect();
//! assert_eq!(errors.iter().map(|e| (e.line, e.column)).collect::<Vec<_>>(), [(2, 15), (3, 9)]);
//! assert!(matches!(errors[1].kind, ParseErrorKind::InvalidValue(_)));
//! let mut tracker = Tracker::new([]);
//! let report = tracker.ingest(page, chrono::DateTime::from_timestamp(1, 0).unwrap())?;
//! assert_eq!((report.samples, report.bad_lines), (2, 2));
//! assert_eq!(report.first_error.unwrap().to_string(), "line 2, column 15: expected ',' or '}' after a label");
//! # Ok::<(), promrate::IngestError>(())
//! ```
//!
//! ## Where things are
//! The crate root holds what most programs name (at most 40 names): the parser's
//! [`parse`], [`Parser`], [`Format`], [`Entry`], [`Sample`], [`Labels`]; [`Selector`];
//! [`Tracker`] with [`Query`], [`Estimator`] and the [`Answer`]; the errors a caller
//! matches. One module deeper, where the path says something the name alone does not:
//! [`text`] (composite values, exemplars, owned samples, and [`text::write`] to render
//! pages back), [`series`] (one live counter or gauge, fed by hand), [`tracker`] (an
//! ingest's report details, reading in chunks), [`error`] (every error type, with the
//! kinds of each), [`promql`] (PromQL's own vocabulary: [`promql::RangeFunctions`],
//! [`promql::Point`], [`promql::Semantics`] and the modifiers), [`histogram`]
//! (classic-histogram arithmetic) and [`fold`] (figures of your own).
//!
//! Words keep one meaning: a *window* is the span of time before the evaluation time that
//! a figure is asked over (PromQL's `[5m]`); *coverage* is the span its points actually
//! cover; *rate* is per second, *increase* is not; PromQL's functions are named so
//! ([`Estimator::Rate`] is PromQL's `rate()`, [`Estimator::WindowRate`] the rate between
//! two real scrapes). Time is chrono's (`DateTime<Utc>`, `TimeDelta`), but for the
//! exposition format's own integer milliseconds ([`Sample::timestamp_ms`]) and PromQL's
//! storage form ([`promql::Point`]), each with a `DateTime` beside it.
//!
//! Settings of values a caller keeps and changes ([`Tracker`], [`series::CounterSeries`],
//! [`series::GaugeSeries`]) are set through `&mut self`; [`Parser`], [`Query`] and
//! [`promql::RangeFunctions`] are small values built by chaining methods that take and
//! return `self`, and are write-only (what they were built with is what you passed).
//!
//! ## Features
//! - `regex` (default): `=~` and `!~` matchers. Without it they are a
//!   [`error::SelectorErrorKind::RegexUnsupported`] error.
//! - `fuzzing`: internal, for the fuzz targets in `fuzz/`; not part of the API.
//!
//! ## Limits
//! By default nothing is limited: every page Prometheus' own text parser accepts is read
//! (but for a raw line break in a quoted label value, which the format forbids),
//! with the same values (a 1 MiB label value costs nothing, the page is already in
//! memory). Limits are opt-in on [`Parser`], named after Prometheus' scrape-config limits:
//! [`Parser::sample_limit`], [`Parser::label_limit`], [`Parser::label_name_length_limit`],
//! [`Parser::label_value_length_limit`], [`Parser::body_size_limit`] (and
//! [`Parser::max_line_len`]); each refuses with its own [`error::ParseErrorKind`]. Values are read
//! as Prometheus reads them: an out-of-range literal (`1e400`) and a signed NaN are refused,
//! as Prometheus refuses them (prometheus_client would read ±Inf and NaN). Quoted metric and
//! label names may hold escapes (`{"my\"name"}`): they are borrowed as written and resolved
//! when asked ([`Sample::name_unescaped`], [`text::Labels::iter_unescaped`]); a [`Tracker`]
//! keeps them resolved, as selectors spell them. Timestamps are milliseconds (Prometheus'
//! resolution).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod error;
mod fingerprint;
pub mod fold;
/// Internals exposed to `cargo fuzz` only (feature `fuzzing`); not part of the API.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod guide;
pub mod histogram;
pub mod promql;
mod query;
mod select;
pub mod series;
mod swar;
pub mod text;
pub mod tracker;

pub use error::{IngestError, NoValue, ParseError, QueryError, SelectorError, SeriesError};
pub use query::{Answer, Coverage, Estimator, GroupAnswer, Query, SeriesScope};
pub use select::{MatchOp, Matcher, Selector};
pub use series::{Shortened, WindowRule};
pub use text::{parse, Entry, Format, LabelValue, Labels, MetricType, Parser, Sample};
pub use tracker::{IngestReport, TrackedSeries, Tracker};

/// The README's Rust examples, compiled and run by `cargo test --doc`.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
