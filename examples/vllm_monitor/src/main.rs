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
//! Files: `args.rs` (the CLI), `app.rs` (the run: its state and loop), `discover.rs`
//! (servers on this machine), `http.rs` (TLS, credentials, why a scrape failed),
//! `scrape.rs` (one thread per URL), `target.rs` (a URL's tracker, status and events),
//! `engines.rs` (each server's metric names, as data), `figures.rs` (the figures of one set
//! of trackers), `gpus.rs` (GPUs, energy and cost per token), `signals.rs` (stall,
//! imbalance), `interval.rs` (one interval's snapshot and the run's history), `summary.rs`,
//! `output/` (dashboard, plain, JSON, plot), `simulator/` (model, the pages of each server
//! and of a DCGM exporter, server) and `fleet.rs` (`--serve --fleet`).

mod app;
mod args;
mod discover;
mod engines;
mod figures;
mod fleet;
mod gpus;
mod http;
mod interval;
mod output;
mod scrape;
mod signals;
mod simulator;
mod summary;
mod target;

use std::process::ExitCode;
use std::sync::Arc;

use chrono::Utc;
use clap::Parser as _;

use args::Args;

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(addr) = &args.serve {
        return match args.fleet {
            Some(instances) => serve_fleet(addr, instances, args.fleet_template.as_deref()),
            None => serve(
                addr,
                args.simulate.unwrap_or(engines::ENGINES[0]),
                args.simulate_wave,
            ),
        };
    }
    match app::App::start(args) {
        Ok(app) => app.run(),
        Err(e) => {
            eprintln!("vllm_monitor: {e}");
            ExitCode::from(2)
        }
    }
}

/// Serves the `/federate` page of a fleet of simulated servers until stopped.
fn serve_fleet(addr: &str, instances: usize, template: Option<&str>) -> ExitCode {
    let template = match template {
        Some(path) => match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) => {
                eprintln!("vllm_monitor: {path}: {e}");
                return ExitCode::from(2);
            }
        },
        None => simulator::Simulation::new(None).render_at(0.0),
    };
    let fleet = fleet::Fleet::new(&template, instances, Utc::now().timestamp_millis());
    let series = fleet.series();
    let generation = fleet.total_rate("vllm:generation_tokens_total");
    match simulator::serve_page(addr, move || fleet.page(Utc::now().timestamp_millis())) {
        Ok(bound) => {
            eprintln!(
                "serving {instances} simulated vLLM servers ({series} series, {generation:.1} generation tok/s in all) \
                 at http://{bound}/federate (Ctrl-C to stop)"
            );
            loop {
                std::thread::park();
            }
        }
        Err(e) => {
            eprintln!("vllm_monitor: {e}");
            ExitCode::from(2)
        }
    }
}

fn serve(addr: &str, engine: &'static engines::Engine, wave: f64) -> ExitCode {
    let restart_after = Some(300.0);
    let simulation = Arc::new(simulator::Simulation::new(restart_after).with_wave(wave));
    match simulator::serve(addr, simulation, engine) {
        Ok(bound) => {
            eprintln!(
                "serving a {} at http://{bound}/metrics (Ctrl-C to stop)",
                simulator::describe(engine, restart_after, wave)
            );
            loop {
                std::thread::park();
            }
        }
        Err(e) => {
            eprintln!("vllm_monitor: {e}");
            ExitCode::from(2)
        }
    }
}
