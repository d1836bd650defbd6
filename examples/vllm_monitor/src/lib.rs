//! vllm_monitor: live throughput of LLM inference servers (vLLM, SGLang, TGI, llama.cpp,
//! TensorRT-LLM, LMDeploy, Dynamo, Ray Serve LLM; `engines.rs`) from their /metrics,
//! directly or through a Prometheus or VictoriaMetrics federation, with the GPUs of a DCGM
//! exporter (`gpus.rs`).
//!
//! ```text
//! vllm_monitor [--url URL]... [--federate BASE_URL] [--interval 2s] [--window 30s]
//!              [--duration D] [--by LABEL] [--target-requests N] [--json | --plain]
//!              [--plot FILE.svg] [--timeout D] [--ca-cert FILE | --insecure]
//!              [--bearer-token-file FILE] [--header 'NAME: VALUE']... [--simulate [SERVER]]
//!              [--simulate-gpus] [--gpus N] [--gpu-hour-price P]
//!              [--alert 'FIGURE OP NUMBER [for DURATION]']... [--exit-on-alert]
//!              [--slo ttft=500ms,itl=50ms,e2e=30s] [--max-page-mib 1024] [--max-series N]
//! vllm_monitor --serve ADDR [--simulate SERVER]   # only run a simulated server
//! ```
//! Without `--url` it probes this machine's usual ports (8000-8015, SGLang 30000, TGI and
//! llama.cpp 8080, LMDeploy 23333, DCGM 9400) and monitors what answers with inference
//! metrics; when nothing does, it starts a simulated vLLM 0.33 server on 127.0.0.1 (a free port) and monitors
//! it for 20 s, the simulated server restarting halfway. `--help` says the rest.
//!
//! On a terminal it draws a dashboard (`q`, Esc or Ctrl-C quit); piped or with `--plain`
//! it prints one line per interval; `--json` prints one object per interval and event.
//! Every figure comes from promrate trackers: exact window rates, EWMA and PromQL
//! `rate()`, surviving restarts (counter resets, changed `_created` or
//! `process_start_time_seconds`), which are announced per server.
//!
//! The monitor is this library and a thin binary (`main.rs`), so its tests and benches use
//! it as any crate would.
//!
//! Files: `args.rs` (the CLI), `app.rs` (the run: its state and loop), `discover.rs`
//! (servers on this machine), `http.rs` (TLS, credentials, why a scrape failed),
//! `body.rs` (a body as it arrives: gzip, budgets, whole characters),
//! `scrape.rs` (one worker per URL: scrapes it and reads its pages into its target, within
//! the time, bytes and series budgets, so that no URL delays another), `target.rs` (a URL's tracker, status and events),
//! `engines.rs` (each server's metric names, as data), `figures.rs` (the figures of one set
//! of trackers), `gpus.rs` (GPUs, energy and cost per token), `signals.rs` (stall,
//! imbalance), `alerts/` (`--alert` rules: their grammar, the figures they name, their
//! state), `interval.rs` (one interval's snapshot and the run's history), `summary.rs`,
//! `engines/` (each server's metric names, as data, and vLLM's renames), `figures/` (the
//! figures of one set of trackers; SLO attainment in `slo.rs`, capacity in `capacity.rs`),
//! `gpus.rs` (GPUs, energy and cost per token), `signals.rs` (stall,
//! imbalance), `interval.rs` (one interval's snapshot and the run's history), `summary.rs`,
//! `history.rs` (the run's course, thinned), `top.rs` (the groups a screen shows: the busiest, the rest summed),
//! `output/` (dashboard, plain, JSON, plot), `simulator/` (model, the pages of each server
//! and of a DCGM exporter, server) and `fleet.rs` (`--serve --fleet`).

pub mod alerts;
pub mod app;
pub mod args;
pub mod body;
pub mod clock;
pub mod discover;
pub mod engines;
pub mod figures;
pub mod fleet;
pub mod gpus;
pub mod history;
pub mod http;
pub mod interval;
#[cfg(test)]
mod negotiation_tests;
pub mod output;
pub mod pipeline;
pub mod plan;
pub mod recording;
pub mod replay;
pub mod scrape;
pub mod signals;
pub mod simulator;
pub mod summary;
pub mod target;
pub mod top;
