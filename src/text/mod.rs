//! The exposition formats: Prometheus text 0.0.4 and 1.0.0, OpenMetrics 1.0 and 2.0 text.
//!
//! The crate root has what most callers need ([`parse`], [`Parser`], [`Format`],
//! [`Sample`], [`Entry`], [`Labels`]); this module adds the rest of what a
//! page is read into: OpenMetrics 2.0's composite values ([`CompositeValue`], its buckets
//! and quantiles, [`NativeHistogram`]), exemplars, help texts, owned samples
//! ([`OwnedSample`]); and [`write`](mod@write), which renders pages back.
//!
//! ```
//! use promrate::{Format, Parser};
//!
//! let page = "# TYPE ttft_seconds histogram\n\
//!             ttft_seconds{model=\"llama\"} {count:17,sum:3.5,bucket:[0.1:8,+Inf:17]} st@1520430000.123\n\
//!             ## EOF\n";
//! let sample = Parser::new(Format::OpenMetrics2).parse(page).find_map(|e| e.ok()?.into_sample()).unwrap();
//! let histogram = sample.composite().unwrap();
//! assert_eq!((histogram.count(), histogram.sum()), (17.0, 3.5));
//! assert_eq!(histogram.buckets().unwrap().collect::<Vec<_>>(), [(0.1, 8.0), (f64::INFINITY, 17.0)]);
//! assert_eq!(sample.start_timestamp_ms(), Some(1_520_430_000_123));
//! ```
//!
//! # For the next maintainer
//! A page is read line by line by [`crate::text::Entries`] (`parser.rs`), in one dispatch loop
//! (`Entries::step`, which both iteration and the tracker's visit use): a line the caller
//! already knows (the tracker's position cache) has only its value read; a Prometheus-text
//! sample line of the common shape (`name{a="b",...} value[ timestamp]`, single spaces, no
//! escapes) takes the fast path (`sample_line::sample_fast`), which reads it straight from
//! the page with eight-bytes-at-a-time scans (`crate::swar`, shared with the fingerprints)
//! and returns `None` for anything else, error or not; `# HELP`/`# TYPE` lines as exporters write them take
//! `metadata::metadata_fast`. Every other line takes the general path:
//! `sample_line::sample` for samples and `nom` for metadata (`metadata.rs`); only the
//! general path reports errors, so their positions are exact. What must change together:
//! - the name grammar lives once, in `names.rs` (page, metadata, selectors, writer);
//! - the lexer (`lexer.rs`: quoted strings, terms, blanks, `Fail`) is shared by both sample
//!   paths, by `Labels` iteration (which replays it over validated text) and by exemplars;
//!   a label set's limits and duplicate names are checked in `label_set.rs`, one way
//!   (`SeenNames`) for both paths; the fast path also records the name and value lengths
//!   of a set's last four labels (`labels::Spans`), which iteration reads instead of
//!   scanning, so the two must agree (`recorded_spans_agree_with_scanning`, and the
//!   fast-path proptest compares every label read back);
//! - any change to what the fast path accepts must keep it identical to the general path
//!   (proptests `fast_path_agrees_with_general_path` and
//!   `metadata_fast_path_agrees_with_general_path`, fuzz target `fast_path_agrees`);
//! - OpenMetrics' rules across lines live in `openmetrics.rs`, applied after a line parsed,
//!   by whichever path read it (`Entries::validated`): OpenMetrics lines take the same fast
//!   path (`sample_fast` with `openmetrics`: seconds timestamps, no trailing comma), and
//!   leave `st@`, exemplars and composite values to the general path;
//! - OpenMetrics 2.0 (`Dialect::version2`): composite values are validated once, in
//!   `composite.rs` (the ABNF's field order and the rules one value can break), and read
//!   back from their text by `CompositeValue`'s accessors; exemplars are parsed in
//!   `exemplar.rs` and kept as one slice of the line, re-read on request (`Rules::Replay`),
//!   which keeps a `Sample` at 144 bytes (`a_sample_stays_small`): it is copied per line;
//! - quoted names keep their escapes (`Sample::name`, `Labels::iter` give the raw text;
//!   `name_unescaped`, `iter_unescaped`, `Labels::get` and the duplicate check resolve
//!   them), so anything comparing names from a page must go through those.
//!
//! The files are layers, lowest first (on `crate::swar`): `names`, `escape`, `limits`, `value`;
//! `lexer`; `labels`; `label_set`; `composite`, `exemplar`; the items (`metric_type`,
//! `help`, `sample`, `entry`, `owned`); the line parsers (`sample_line`, `metadata`);
//! `label_groups`, `reserved_names`, `openmetrics`; `parser`.
//! `write` renders, and the items use it for their `Display`. No import cycle
//! (`tests/it/layers.rs` checks that, and prints the order it finds).

pub(crate) mod composite;
pub(crate) mod entry;
pub(crate) mod escape;
mod escaping;
pub(crate) mod exemplar;
mod group_hash;
pub(crate) mod help;
mod label_groups;
pub(crate) mod label_set;
pub(crate) mod labels;
pub(crate) mod lexer;
pub(crate) mod limits;
pub(crate) mod metadata;
pub(crate) mod metric_type;
pub(crate) mod names;
mod openmetrics;
pub(crate) mod owned;
pub(crate) mod parser;
mod reserved_names;
pub(crate) mod sample;
pub(crate) mod sample_line;
pub(crate) mod value;
pub mod write;

pub use composite::{
    BucketCounts, BucketSpan, BucketSpans, CompositeKind, CompositePairs, CompositeValue, NativeHistogram,
};
pub use entry::Entry;
pub use escape::UnescapedBytes;
pub use escaping::{Escaping, UnknownEscaping};
pub use exemplar::{Exemplar, Exemplars};
pub use help::HelpText;
pub use labels::{LabelValue, Labels, LabelsIter};
pub use metric_type::MetricType;
pub use owned::OwnedSample;
pub use parser::{parse, Entries, Format, Parser};
pub use sample::Sample;
