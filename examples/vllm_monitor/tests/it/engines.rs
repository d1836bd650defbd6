//! Every server the monitor knows, end to end: the binary plays each one with its
//! simulator (`--simulate SERVER`, steady: `--simulate-wave 0`) and reads it back over HTTP
//! at the simulation's known rate; with `--simulate-gpus`, a simulated DCGM exporter beside
//! it gives joules per token as the energy model says.

use std::thread;

use serde_json::Value;

use crate::monitor::run_monitor;

/// The steady simulator's rate: 200 requests running all the time, 8 tok/s each.
const KNOWN_RATE: f64 = 200.0 * 8.0;

/// The JSON rows of a 21 s run of `args` with a 16 s window, steady, without a restart.
fn rows(args: &[&str]) -> Vec<Value> {
    let mut all = vec![
        "--json",
        "--interval",
        "1s",
        "--window",
        "16s",
        "--duration",
        "21s",
        "--simulate-restart-after",
        "1h",
        "--simulate-wave",
        "0",
    ];
    all.extend_from_slice(args);
    let (rows, status) = run_monitor(&all);
    assert!(status.success(), "{args:?}: {status}");
    rows
}

/// The interval rows whose window is full.
fn full_windows(rows: &[Value]) -> Vec<&Value> {
    rows.iter()
        .filter(|r| r.get("event").is_none() && r["elapsed_s"].as_f64().is_some_and(|t| t >= 17.0))
        .collect()
}

#[test]
fn every_server_is_read_at_the_known_rate() {
    const SERVERS: [&str; 8] = [
        "vllm", "sglang", "tgi", "llamacpp", "trtllm", "lmdeploy", "dynamo", "ray",
    ];
    let runs: Vec<_> = SERVERS
        .iter()
        .map(|server| (server, thread::spawn(move || rows(&["--simulate", server]))))
        .collect();
    for (server, run) in runs {
        let rows = run.join().expect("the run's thread");
        let full = full_windows(&rows);
        assert!(
            full.len() >= 3,
            "{server}: {} rows with a full window",
            full.len()
        );
        let reported = rows
            .iter()
            .find_map(|r| r["urls"][0]["server"].as_str().map(str::to_string));
        assert_eq!(reported.as_deref(), Some(*server), "{server} recognised");
        // Servers that count tokens when a request ends move in steps of a request's 650
        // tokens: over 16 s, one request is 2.5% of the rate (the unit test checks them
        // against the counted tokens, to 1%).
        let at_request_end = rows.iter().any(|r| r["tokens_counted_at_request_end"] == true);
        let tolerance = if at_request_end { 0.03 } else { 0.01 };
        for row in full {
            let rate = row["generation_tokens_per_s"]["window"].as_f64().unwrap();
            assert!(
                (rate - KNOWN_RATE).abs() <= tolerance * KNOWN_RATE,
                "{server}: {rate} tok/s, want {KNOWN_RATE} ± {}%",
                tolerance * 100.0
            );
            if at_request_end {
                assert!(
                    row["generation_tokens_per_s"]["ewma"].is_null(),
                    "{server}: no EWMA of a sawtooth"
                );
            }
        }
        assert_eq!(
            at_request_end,
            matches!(*server, "tgi" | "llamacpp" | "trtllm"),
            "{server}"
        );
    }
}

/// Joules per token = the energy counters' increase over the window ÷ the tokens' (each
/// over its own points' span). In the steady simulation the GPUs draw 2 × 90 W idle plus
/// 1000 W for the 200 running requests, and tokens come at 1600/s: 1180 ÷ 1600 =
/// 0.7375 J/token.
#[test]
fn joules_per_token_with_a_simulated_dcgm_exporter() {
    let rows = rows(&["--simulate-gpus", "--gpu-hour-price", "2.5"]);
    let full = full_windows(&rows);
    assert!(full.len() >= 3, "{} rows with a full window", full.len());
    let want = (2.0 * 90.0 + 1000.0) / KNOWN_RATE;
    let mut worst = 0.0f64;
    for row in full {
        let joules = row["joules_per_generated_token"]
            .as_f64()
            .expect("joules per token");
        worst = worst.max((joules - want).abs() / want);
        assert!(
            (joules - want).abs() <= 0.01 * want,
            "{joules} J/token, want {want} ± 1%"
        );
        assert_eq!(row["gpus"]["count"], 2);
        let rate = row["generation_tokens_per_s"]["window"].as_f64().unwrap();
        let per_gpu = row["generation_tokens_per_s_per_gpu"].as_f64().unwrap();
        assert!((per_gpu - rate / 2.0).abs() < 1e-9);
        let cost = row["cost_per_million_generated_tokens"].as_f64().unwrap();
        assert!((cost - 2.5 * 2.0 / 3600.0 / rate * 1e6).abs() < 1e-9);
    }
    let summary = rows.last().unwrap();
    assert_eq!(summary["event"], "summary");
    assert!(summary["energy_kwh"].as_f64().unwrap() > 0.0);
    assert!(summary["gpu_cost"].as_f64().unwrap() > 0.0);
    println!(
        "joules per token vs the energy model: worst error {:.3}%",
        worst * 100.0
    );
}
