//! Every server the monitor knows, end to end. The figures: each server's simulated page
//! (steady, no restart), recorded on an exact 1 s grid with a few milliseconds of
//! pseudo-jitter and replayed through the binary on its virtual clock, gives exactly the
//! pages' counters' increase over each window, at the simulation's known rate; beside a
//! simulated DCGM exporter, joules per token as the energy model says. The live side: the
//! binary playing each server (`--simulate SERVER`, and `--simulate-gpus`) is read over HTTP
//! and recognised.

use std::time::Duration;

use serde_json::Value;
use vllm_monitor::engines::{Engine, ENGINES};
use vllm_monitor::gpus;
use vllm_monitor::simulator::Simulation;

use crate::monitor::live_until;
use crate::recorded::{intervals, Grid, Recording, Source};

/// The steady simulator's rate: 200 requests running all the time, 8 tok/s each.
const KNOWN_RATE: f64 = 200.0 * 8.0;
/// The simulator's tokens per request: servers that count tokens when a request ends move
/// in steps of it.
const TOKENS_PER_REQUEST: f64 = 650.0;
/// The window, in seconds (and in scrapes: one a second).
const WINDOW: u64 = 16;
/// Scrapes of each URL, 0 s to 21 s: six rows with a full window.
const SCRAPES: u64 = 22;
const URL: &str = "http://127.0.0.1:8000/metrics";
const DCGM_URL: &str = "http://127.0.0.1:9400/metrics";

/// The page `engine` serves `t` seconds into `sim`.
fn page(sim: &Simulation, engine: &Engine, t: f64) -> String {
    match engine.kind {
        "vllm" => sim.render_at(t),
        _ => sim.render_engine_at(engine, t),
    }
}

/// The steady simulation as `engine` serves it (and its DCGM exporter's, with `gpus`),
/// scraped every second for 21 s, recorded with a 16 s window.
fn steady(engine: &Engine, gpus: bool) -> Recording {
    let sim = Simulation::new(None).with_wave(0.0);
    let mut sources = vec![Source::new(URL, |t| page(&sim, engine, t))];
    if gpus {
        sources.push(Source::new(DCGM_URL, |t| sim.render_dcgm_at(t)));
    }
    let grid = Grid::new(Duration::from_secs(1), SCRAPES).window(Duration::from_secs(WINDOW));
    Recording::make(&format!("{}.jsonl", engine.kind), grid, &sources)
}

fn relative(got: f64, want: f64) -> f64 {
    (got - want).abs() / want.abs()
}

/// The interval rows of a replay of `recording`, each checked against it: the row of
/// interval `k` (`elapsed_s` k, computed 250 ms after scrape `k` began) has a window from
/// the scrape nearest 16 s before that one (the first, before 16 s) to scrape `k`, its span
/// is the time between their stamps, and its generation rate is exactly `metric`'s
/// increase over the pages in between, over that span. Returns `(k, row)` for each row.
fn checked_windows<'r>(recording: &Recording, rows: &'r [Value], metric: &str) -> Vec<(u64, &'r Value)> {
    let intervals = intervals(rows);
    let ks: Vec<u64> = intervals
        .iter()
        .map(|r| r["elapsed_s"].as_f64().unwrap() as u64)
        .collect();
    assert_eq!(
        ks,
        (1..SCRAPES).collect::<Vec<_>>(),
        "an interval a second, to the last page's"
    );
    intervals
        .into_iter()
        .zip(ks)
        .map(|(row, k)| {
            let (start, end) = recording.window_of(row, k, WINDOW);
            let span = recording.span(0, start, end);
            let shown = row["window"]["span_s"].as_f64().unwrap();
            assert!(
                (shown - span).abs() < 1e-9,
                "interval {k}: span {shown} s, want {span} s"
            );
            let want = recording.rate(0, metric, start, end);
            let rate = row["generation_tokens_per_s"]["window"].as_f64().unwrap();
            assert!(
                relative(rate, want) < 1e-9,
                "interval {k}: {rate} tok/s, the pages say {want}"
            );
            (k, row)
        })
        .collect()
}

#[test]
fn every_server_is_read_at_the_known_rate() {
    const SERVERS: [&str; 8] = [
        "vllm", "sglang", "tgi", "llamacpp", "trtllm", "lmdeploy", "dynamo", "ray",
    ];
    assert_eq!(
        ENGINES.iter().map(|e| e.kind).collect::<Vec<_>>(),
        SERVERS,
        "every server the monitor knows"
    );
    for engine in ENGINES {
        let server = engine.kind;
        let recording = steady(engine, false);
        let rows = recording.replay(&["--json"]);
        let reported = rows
            .iter()
            .find_map(|r| r["urls"][0]["server"].as_str().map(str::to_string));
        assert_eq!(reported.as_deref(), Some(server), "{server} recognised");
        let metric = engine.generation[0].name;
        assert_eq!(
            engine.generation[0].scale, 1.0,
            "{server}: tokens are counted in tokens"
        );
        let at_request_end = rows.iter().any(|r| r["tokens_counted_at_request_end"] == true);
        assert_eq!(
            at_request_end,
            matches!(server, "tgi" | "llamacpp" | "trtllm"),
            "{server}"
        );
        // The exact figure is the pages'; against the simulation's rate, a server counting
        // tokens when a request ends is off by up to one request's tokens over the window
        // (2.5%), one counting them as they come by the counter's whole tokens only.
        let tolerance = if at_request_end {
            TOKENS_PER_REQUEST / WINDOW as f64 / KNOWN_RATE
        } else {
            1e-3
        };
        let mut worst = 0.0f64;
        let windows = checked_windows(&recording, &rows, metric);
        let full: Vec<&Value> = windows
            .iter()
            .filter(|(k, _)| *k >= WINDOW)
            .map(|(_, row)| *row)
            .collect();
        assert_eq!(full.len(), 6, "{server}: rows with a full window");
        for row in full {
            let rate = row["generation_tokens_per_s"]["window"].as_f64().unwrap();
            worst = worst.max(relative(rate, KNOWN_RATE));
            assert!(
                relative(rate, KNOWN_RATE) <= tolerance,
                "{server}: {rate} tok/s, want {KNOWN_RATE} ± {}%",
                tolerance * 100.0
            );
            let ewma = &row["generation_tokens_per_s"]["ewma"];
            if at_request_end {
                assert!(ewma.is_null(), "{server}: no EWMA of a sawtooth");
            } else {
                let ewma = ewma
                    .as_f64()
                    .unwrap_or_else(|| panic!("{server}: an EWMA in {row}"));
                assert!(
                    relative(ewma, KNOWN_RATE) <= tolerance,
                    "{server}: EWMA {ewma} tok/s, want {KNOWN_RATE}"
                );
            }
        }
        assert_eq!(rows.last().unwrap()["event"], "summary", "{server}");
        println!(
            "{server}: replayed at the known rate, worst {:.4}% off {KNOWN_RATE} tok/s",
            worst * 100.0
        );
    }
}

/// Joules per token = the energy counters' mean power over the window ÷ the tokens' rate
/// (each over its own pages' span). In the steady simulation the GPUs draw 2 × 90 W idle
/// plus 1000 W for the 200 running requests, and tokens come at 1600/s: 1180 ÷ 1600 =
/// 0.7375 J/token.
#[test]
fn joules_per_token_with_a_simulated_dcgm_exporter() {
    let vllm = ENGINES[0];
    let recording = steady(vllm, true);
    let rows = recording.replay(&["--json", "--gpu-hour-price", "2.5"]);
    let metric = vllm.generation[0].name;
    let windows = checked_windows(&recording, &rows, metric);
    let want = (2.0 * 90.0 + 1000.0) / KNOWN_RATE;
    let mut worst = 0.0f64;
    let mut full = 0;
    for (k, row) in windows {
        assert_eq!(row["gpus"]["count"], 2, "interval {k}");
        // The DCGM exporter is scraped on the same grid, and its window follows the tokens'
        // rule (from the scrape nearest 16 s before the newest): the same scrapes bound it.
        let start = k.saturating_sub(WINDOW);
        let energy = recording.increase(1, gpus::ENERGY, start, k) / 1000.0;
        let watts = energy / recording.span(1, start, k);
        let rate = row["generation_tokens_per_s"]["window"].as_f64().unwrap();
        let joules = row["joules_per_generated_token"]
            .as_f64()
            .expect("joules per token");
        let shown = row["gpus"]["energy_window_j"].as_f64().unwrap();
        assert!(
            relative(shown, energy) < 1e-9,
            "interval {k}: {shown} J over the window, the pages from scrape {start} to {k} say {energy}"
        );
        assert!(
            relative(joules, watts / rate) < 1e-9,
            "interval {k}: {joules} J/token, the pages say {}",
            watts / rate
        );
        let per_gpu = row["generation_tokens_per_s_per_gpu"].as_f64().unwrap();
        assert!((per_gpu - rate / 2.0).abs() < 1e-9);
        let cost = row["cost_per_million_generated_tokens"].as_f64().unwrap();
        assert!((cost - 2.5 * 2.0 / 3600.0 / rate * 1e6).abs() < 1e-9);
        if k >= WINDOW {
            worst = worst.max(relative(joules, want));
            assert!(
                relative(joules, want) <= 1e-3,
                "interval {k}: {joules} J/token, want {want} ± 0.1%"
            );
            full += 1;
        }
    }
    assert_eq!(full, 6, "rows with a full window");
    let summary = rows.last().unwrap();
    assert_eq!(summary["event"], "summary");
    // Since the first pages: every scrape's increase.
    let last = SCRAPES - 1;
    let kwh = recording.increase(1, gpus::ENERGY, 0, last) / 1000.0 / 3.6e6;
    let energy = summary["energy_kwh"].as_f64().unwrap();
    assert!(relative(energy, kwh) < 1e-9, "{energy} kWh, the pages say {kwh}");
    let generated = recording.increase(0, metric, 0, last);
    let counted = summary["generated_tokens"].as_f64().unwrap();
    assert!(
        relative(counted, generated) < 1e-9,
        "{counted} tokens, the pages say {generated}"
    );
    assert!(summary["gpu_cost"].as_f64().unwrap() > 0.0);
    println!(
        "joules per token vs the energy model: worst error {:.4}%",
        worst * 100.0
    );
}

/// A rate the live smoke tests accept: present rates are never negative.
fn no_negative_rate(rows: &[Value], what: &str) {
    for row in intervals(rows) {
        for figure in ["window", "ewma"] {
            if let Some(rate) = row["generation_tokens_per_s"][figure].as_f64() {
                assert!(rate >= 0.0, "{what}: {figure} rate {rate} in {row}");
            }
        }
    }
}

/// The live path: `--simulate SERVER` serves each server's page over HTTP, and the monitor
/// reading it recognises the server and computes a rate (its value is the replay's test).
#[test]
fn every_simulated_server_is_read_over_http_and_recognised() {
    let runs: Vec<_> = ENGINES
        .iter()
        .map(|engine| {
            let server = engine.kind;
            let run = std::thread::spawn(move || {
                live_until(
                    &[
                        "--simulate",
                        server,
                        "--json",
                        "--interval",
                        "500ms",
                        "--duration",
                        "120s",
                    ],
                    |row| {
                        row["urls"][0]["server"] == server
                            && row["generation_tokens_per_s"]["window"].is_number()
                    },
                )
            });
            (server, run)
        })
        .collect();
    for (server, run) in runs {
        let live = run.join().expect("the run's thread");
        assert_eq!(live.rows[0]["event"], "start", "{server}");
        no_negative_rate(&live.rows, server);
        assert!(
            live.status.success(),
            "{server}: {}: {}",
            live.status,
            live.stderr
        );
        assert_eq!(live.rows.last().unwrap()["event"], "summary", "{server}");
    }
}

/// The live path of `--simulate-gpus`: the simulated DCGM exporter is read beside the
/// server, its two GPUs counted and joules per token given.
#[test]
fn a_simulated_dcgm_exporter_is_read_over_http() {
    let live = live_until(
        &[
            "--simulate",
            "--simulate-gpus",
            "--json",
            "--interval",
            "500ms",
            "--duration",
            "120s",
        ],
        |row| row["gpus"]["count"] == 2 && row["joules_per_generated_token"].is_number(),
    );
    no_negative_rate(&live.rows, "vllm with GPUs");
    let joules = live.done()["joules_per_generated_token"].as_f64().unwrap();
    assert!(joules > 0.0, "{joules} J/token");
    assert!(live.status.success(), "{}: {}", live.status, live.stderr);
}
