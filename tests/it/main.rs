//! Integration tests: one binary, one module per concern.

mod bucket_starts;
mod chunks;
mod data;
mod differential;
mod federation;
mod layers;
mod limits;
mod openmetrics2;
mod openmetrics2_tracker;
mod openmetrics_suite;
mod oracle;
mod promcat;
mod proptests;
mod query;
mod rate_props;
mod selectors;
mod start_timestamps;
mod text_corpus;
mod values;
mod vllm;
