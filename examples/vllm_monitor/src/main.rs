//! `vllm_monitor`: the binary. Everything it does is in the library (`lib.rs`).

use std::process::ExitCode;
use std::sync::Arc;

use chrono::Utc;
use clap::Parser as _;

use vllm_monitor::args::Args;
use vllm_monitor::text::visible::visible;
use vllm_monitor::{app, engines, fleet, simulator};

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(addr) = &args.serve {
        return match args.fleet {
            Some(instances) => serve_fleet(addr, instances, args.fleet_template.as_deref()),
            None => serve(
                addr,
                args.simulate.unwrap_or(engines::ENGINES[0]),
                args.simulate_wave,
                // Served for other tools, it restarts seldom unless asked.
                args.simulate_restart_after.map_or(300.0, |d| d.as_secs_f64()),
                args.serve_as,
            ),
        };
    }
    match app::App::start(args) {
        Ok(app) => app.run(),
        Err(e) => {
            // A start error can quote a server's words (a TSDB's error, the names it has)
            // or a recording's: shown, not acted on by the terminal; its own lines kept.
            let lines: Vec<_> = e.message.lines().map(visible).collect();
            eprintln!("vllm_monitor: {}", lines.join("\n"));
            ExitCode::from(e.status)
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
    let requests: f64 = (0..instances).map(|i| fleet.requests_per_s(i)).sum();
    match simulator::serve_page(addr, simulator::ServeAs::Text, move || {
        fleet.page(Utc::now().timestamp_millis())
    }) {
        Ok(bound) => {
            eprintln!(
                "serving {instances} simulated vLLM servers ({series} series, {generation:.1} generation tok/s and \
                 {requests:.2} finished req/s in all) at http://{bound}/federate (Ctrl-C to stop)"
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

fn serve(
    addr: &str,
    engine: &'static engines::Engine,
    wave: f64,
    restart_after: f64,
    serve_as: simulator::ServeAs,
) -> ExitCode {
    let restart_after = Some(restart_after);
    let simulation = Arc::new(simulator::Simulation::new(restart_after).with_wave(wave));
    match simulator::serve(addr, simulation, engine, serve_as) {
        Ok(bound) => {
            eprintln!(
                "serving at http://{bound}/metrics {}; a {} (Ctrl-C to stop)",
                match serve_as {
                    simulator::ServeAs::Text => "in the text format 0.0.4",
                    simulator::ServeAs::OpenMetrics2 => "in OpenMetrics 2.0",
                    simulator::ServeAs::Negotiate => "in OpenMetrics 2.0 or the text format, as asked",
                },
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
