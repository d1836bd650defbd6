//! The exposition formats: Prometheus text 0.0.4 and OpenMetrics 1.0 text.
//!
//! # For the next maintainer
//! A page is read line by line by [`crate::Entries`] (`parser.rs`). A Prometheus-text sample line
//! of the common shape (`name{a="b",...} value[ timestamp]`, single spaces, no escapes)
//! takes the fast path (`sample_line::sample_fast`), which reads it straight from the page
//! with eight-bytes-at-a-time scans (`swar.rs`) and returns `None` for anything else, error
//! or not. Every other line takes the general path: `sample_line::sample` for samples and
//! `nom` for metadata (`metadata.rs`); only the general path reports errors, so their
//! positions are exact. What must change together:
//! - the name grammar lives once, in `names.rs` (page, metadata, selectors, writer);
//! - the label-set lexer (`lexer.rs`) is shared by both sample paths, by `Labels`
//!   iteration (which replays it over validated text) and by exemplars;
//! - any change to what the fast path accepts must keep it identical to the general path
//!   (proptest `fast_path_agrees_with_the_general_path`, fuzz target `fast_path_agrees`);
//! - OpenMetrics' rules across lines live in `openmetrics.rs`, applied after a line parsed.
//!
//! This module is public only for [`write`](mod@write) (rendering pages back); its types are
//! re-exported at the crate root, which is their one path.

pub(crate) mod escape;
pub(crate) mod labels;
pub(crate) mod lexer;
pub(crate) mod limits;
pub(crate) mod metadata;
pub(crate) mod names;
mod openmetrics;
pub(crate) mod owned;
pub(crate) mod parser;
pub(crate) mod sample;
pub(crate) mod sample_line;
mod swar;
mod value;
pub mod write;

pub(crate) use labels::{LabelValue, Labels};
pub(crate) use parser::{Format, Parser};
pub(crate) use sample::{Entry, MetricType, Sample};
