//! The monitor's integration tests: one binary, one module per concern. They run the
//! `vllm_monitor` binary cargo builds for them and read the repository's `tests/data`.

mod alerts;
mod counters;
mod data;
mod discovery;
mod engines;
mod faults;
mod federation;
mod first_contact;
mod fleet;
mod fleet_rates;
mod monitor;
mod names;
mod operator;
mod recorded;
mod replay;
mod terminal;
mod tls;
mod truth;
mod tsdb;
