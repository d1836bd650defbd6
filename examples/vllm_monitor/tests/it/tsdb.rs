//! `--prometheus` against real TSDBs (Debian's `prometheus` and `victoria-metrics`), each
//! scraping the built-in simulator (steady at exactly 1,600 tok/s, restarted once) every
//! second: read live and as a past span (`--from`/`--to`), every full window is within 1%
//! of the known rate and the restart is announced once.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeDelta, Utc};
use serde_json::Value;

use crate::federation::{encode, free_port, get, Engine, TempDir};
use crate::monitor::{monitor_binary, Reaped};

/// The simulator's generation rate with `--simulate-wave 0`.
const KNOWN: f64 = 1600.0;
/// Long enough that a scrape answered 100 ms after its timestamp (the engine's scrape
/// started late on a loaded machine, the simulator counts when it answers) moves a rate by
/// 0.5%: 10 s windows saw 1.7% on a machine loaded 12 times over.
const WINDOW_S: i64 = 20;
const RESTART_AFTER_S: i64 = 40;

/// The simulated server (restarting once, `RESTART_AFTER_S` in), its address, and about
/// when it started.
fn simulator() -> (Reaped, String, DateTime<Utc>) {
    let started = Utc::now();
    let mut child = Command::new(monitor_binary())
        .args(["--serve", "127.0.0.1:0", "--simulate-wave", "0"])
        .args(["--simulate-restart-after", &format!("{RESTART_AFTER_S}s")])
        .stderr(Stdio::piped())
        .spawn()
        .expect("the simulator starts");
    let stderr = child.stderr.take().unwrap();
    let server = Reaped(child);
    let mut line = String::new();
    BufReader::new(stderr).read_line(&mut line).unwrap();
    let address = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("http://"))
        .and_then(|w| w.strip_suffix("/metrics"))
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    (server, address, started)
}

/// Runs the monitor with `args` (JSON) to its end: its rows.
fn run(args: &[String]) -> Vec<Value> {
    let output = Command::new(monitor_binary())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the monitor runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{:?}: {stderr}", output.status);
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// One run's rows checked: the restart announced once, near when the simulator restarted;
/// every full window without it within 1% of the known rate, per instance and in all.
/// The worst error and the windows checked.
fn check(rows: &[Value], instance: &str, restart_near: DateTime<Utc>, what: &str) -> (f64, usize) {
    let restarts: Vec<&Value> = rows.iter().filter(|r| r["event"] == "restart").collect();
    assert_eq!(restarts.len(), 1, "{what}: one restart: {restarts:?}");
    assert_eq!(restarts[0]["source"], instance, "{what}");
    let restart = DateTime::parse_from_rfc3339(restarts[0]["t"].as_str().unwrap())
        .unwrap()
        .with_timezone(&Utc);
    assert!(
        (restart - restart_near).abs() <= TimeDelta::seconds(3),
        "{what}: restart at {restart}, the simulator's at {restart_near}"
    );
    let restart_ms = restart.timestamp_millis();
    let (mut worst, mut checked) = (0.0f64, 0);
    for row in rows
        .iter()
        .filter(|r| r["event"].is_null() && r["at_ms"].is_i64())
    {
        let at_ms = row["at_ms"].as_i64().unwrap();
        let elapsed = row["elapsed_s"].as_f64().unwrap();
        let holds_restart = (restart_ms - 1_000..=restart_ms + (WINDOW_S + 2) * 1_000).contains(&at_ms);
        if elapsed < (WINDOW_S + 1) as f64 || holds_restart {
            continue;
        }
        let group = row["groups"]
            .as_array()
            .and_then(|g| g.iter().find(|g| g["instance"] == instance))
            .unwrap_or_else(|| panic!("{what}: no group {instance} at {elapsed} s: {row}"));
        for rate in [
            &group["generation_tokens_per_s"]["window"],
            &row["generation_tokens_per_s"]["window"],
        ] {
            let rate = rate
                .as_f64()
                .unwrap_or_else(|| panic!("{what}: no window rate at {elapsed} s: {row}"));
            let error = (rate - KNOWN).abs() / KNOWN;
            assert!(
                error <= 0.01,
                "{what}: {rate} tok/s at {elapsed} s, want {KNOWN} ± 1%"
            );
            worst = worst.max(error);
        }
        checked += 1;
    }
    (worst, checked)
}

/// The simulator behind `engine`, read by the monitor live and then as a past span.
fn through(engine: Engine) {
    let version = engine.version();
    let (_simulator, address, started) = simulator();
    let dir = TempDir::new("promrate-tsdb");
    let config = dir.0.join("scrape.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n\
             scrape_configs:\n  - job_name: vllm\n    static_configs:\n\
             \x20     - targets: ['{address}']\n"
        ),
    )
    .unwrap();
    let port = free_port();
    let _engine = engine.start(&config, &dir.0.join("data"), port);
    let query = format!(
        "/api/v1/query?query={}",
        encode("vllm:generation_tokens_total[5s]")
    );
    let waiting = Instant::now();
    while get(port, &query).is_none_or(|(_, body)| body.matches("],[").count() < 2) {
        // A bound on a hung engine, not a measure of speed.
        assert!(
            waiting.elapsed() < Duration::from_secs(60),
            "no samples in the TSDB"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    let base = format!("http://127.0.0.1:{port}");
    let restart_near = started + TimeDelta::seconds(RESTART_AFTER_S);
    // Live until well past the restart.
    let live_for = (restart_near + TimeDelta::seconds(36) - Utc::now())
        .num_seconds()
        .max(16);
    let common = |more: &[String]| -> Vec<String> {
        let mut args: Vec<String> = ["--prometheus", &base, "--json", "--interval", "1s", "--window"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.push(format!("{WINDOW_S}s"));
        args.extend_from_slice(more);
        args
    };
    let live = run(&common(&["--duration".into(), format!("{live_for}s")]));
    let (live_worst, live_checked) = check(&live, &address, restart_near, "live");
    // The same span again, from the TSDB's past.
    let from = (started + TimeDelta::seconds(3)).to_rfc3339();
    let to = (Utc::now() - TimeDelta::seconds(1)).to_rfc3339();
    let past = run(&common(&["--from".into(), from, "--to".into(), to]));
    let (past_worst, past_checked) = check(&past, &address, restart_near, "past");
    assert!(live_checked >= 8, "only {live_checked} live windows checked");
    assert!(past_checked >= 12, "only {past_checked} past windows checked");
    println!(
        "--prometheus through {version}: live {live_checked} windows, worst {:.3}%; past {past_checked} windows, worst {:.3}%",
        live_worst * 100.0,
        past_worst * 100.0
    );
}

#[test]
#[ignore = "needs Debian's prometheus: apt-get install prometheus"]
fn prometheus_read_live_and_past_sees_the_known_rate_and_the_restart() {
    through(Engine::Prometheus);
}

#[test]
#[ignore = "needs Debian's victoria-metrics: apt-get install victoria-metrics"]
fn victoriametrics_read_live_and_past_sees_the_known_rate_and_the_restart() {
    through(Engine::VictoriaMetrics);
}
