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
//! it for 20 s with a 10 s window, the simulated server restarting at 15 s. `--help` says
//! the rest.
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
//! How the files fit together, and the layers a test holds them to, is in the
//! repository's `ARCHITECTURE.md` ("The monitor"): `args.rs` and `plan.rs` choose what to
//! monitor, `scrape.rs` reads each URL's pages into its `target.rs`, `pipeline.rs` turns
//! each interval into a `snapshot/` of the `figures/`, `signals.rs` and `alerts/` judge it,
//! and `output/` shows it; `app.rs` runs the loop, live or from a recording.

pub mod alerts;
pub mod app;
pub mod args;
pub mod body;
pub mod clock;
pub mod discover;
pub mod engines;
pub mod events;
pub mod figures;
pub mod fleet;
pub mod gpus;
pub mod http;
#[cfg(test)]
mod negotiation_tests;
pub mod output;
pub mod pipeline;
pub mod plan;
pub mod recording;
pub mod replay;
pub mod retired;
pub mod scrape;
pub mod signals;
pub mod simulator;
pub mod snapshot;
pub mod source;
pub mod summary;
pub mod target;
pub mod text;
pub mod top;
pub mod tsdb;
pub mod when;
