//! A simulated vLLM 0.33 server: the run it models (`model.rs`), the page its
//! `prometheus_client` renders (`page.rs`), and the HTTP server that serves it (`server.rs`).

mod dcgm_page;
mod engine_page;
mod families;
// Test support: the unit tests use it here, the integration tests include the same file
// (`tests/it/main.rs`); the binary has none of it.
#[cfg(test)]
pub mod known;
mod model;
pub mod openmetrics2;
mod page;
mod server;

pub use model::{describe, Simulation, WAVE};
#[cfg(test)]
pub use model::{
    CONCURRENCY, LATENCY_S, PERIOD_S, PROMPT_TOKENS_PER_REQUEST, TOKENS_PER_REQUEST, TOKENS_PER_S_PER_REQUEST,
};
pub use server::{serve, serve_page, ServeAs};

// Test support (`monitor`, `scrape_with_gpus`) and the simulator's own tests.
#[cfg(test)]
pub mod tests;
