//! The monitor's integration tests: one binary, one module per concern. They run the
//! `vllm_monitor` binary cargo builds for them and read the repository's `tests/data`.

mod alerts;
mod counters;
mod damaged;
mod data;
mod discovery;
mod engines;
mod faults;
mod federation;
mod first_contact;
mod fleet;
mod fleet_rates;
// The pages whose every count is set by hand: test support, so not in the binary; the
// unit tests have the same file as `simulator::known`.
#[path = "../../src/simulator/known.rs"]
mod known;
mod layers;
mod monitor;
mod names;
mod operator;
mod recorded;
mod replay;
mod terminal;
mod tls;
mod truth;
mod tsdb;
