//! vllm_monitor reading a fleet through a real Prometheus server (Debian's `prometheus`)
//! that scrapes two prometheus_client exporters: its figures against the exporters' known
//! rates and against Prometheus' own PromQL at the same evaluation times.

use std::io::Read;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::monitor::{monitor_binary, start_exporter, Reaped};

/// A temporary directory removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let unique = format!(
            "{name}-{}-{}",
            std::process::id(),
            chrono::Utc::now().timestamp_micros()
        );
        let path = std::env::temp_dir().join(unique);
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// GET `path` from 127.0.0.1:`port`: the status code and body, `None` if nothing answers.
pub fn get(port: u16, path: &str) -> Option<(u16, String)> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(10)))
        .http_status_as_error(false)
        .build()
        .into();
    let mut response = agent.get(format!("http://127.0.0.1:{port}{path}")).call().ok()?;
    let status = response.status().as_u16();
    Some((status, response.body_mut().read_to_string().ok()?))
}

/// Percent-encodes a PromQL expression for a query string.
pub fn encode(query: &str) -> String {
    percent_encoding::utf8_percent_encode(query, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// `query` evaluated by Prometheus at `at_ms`: the value per `instance`.
fn instant_query(port: u16, query: &str, at_ms: i64) -> Vec<(String, f64)> {
    let path = format!(
        "/api/v1/query?query={}&time={}.{:03}",
        encode(query),
        at_ms.div_euclid(1000),
        at_ms.rem_euclid(1000)
    );
    let (status, body) = get(port, &path).expect("Prometheus answers");
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    answer["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let instance = r["metric"]["instance"].as_str().unwrap_or("").to_string();
            let value: f64 = r["value"][1].as_str().unwrap().parse().unwrap();
            (instance, value)
        })
        .collect()
}

/// When Prometheus could have appended the scrape of `instance` whose samples are stamped
/// `stamped_ms` (its start): after it took `scrape_duration_seconds`, and 100 ms to commit.
fn appended_by_ms(port: u16, instance: &str, stamped_ms: i64) -> i64 {
    let query = format!(r#"scrape_duration_seconds{{instance="{instance}"}}"#);
    let took = instant_query(port, &query, stamped_ms)
        .into_iter()
        .map(|(_, seconds)| seconds)
        .fold(0.0, f64::max);
    stamped_ms + (took * 1000.0).ceil() as i64 + 100
}

/// The timestamp of the newest generation-token sample of `instance` at or before `at_ms`
/// that Prometheus holds now (within its lookback).
fn newest_sample_ms(port: u16, instance: &str, at_ms: i64) -> i64 {
    let query =
        format!(r#"timestamp({{__name__=~"vllm[:_]generation_tokens_total",instance="{instance}"}})"#);
    let newest = instant_query(port, &query, at_ms)
        .into_iter()
        .map(|(_, seconds)| seconds)
        .fold(f64::NEG_INFINITY, f64::max);
    (newest * 1000.0).round() as i64
}

/// The engine that scrapes the exporters and serves `/federate`.
#[derive(Clone, Copy, PartialEq)]
pub enum Engine {
    Prometheus,
    VictoriaMetrics,
}

impl Engine {
    pub fn start(self, config: &std::path::Path, data: &std::path::Path, port: u16) -> Reaped {
        let mut command = match self {
            Engine::Prometheus => {
                let mut c = Command::new("prometheus");
                c.arg(format!("--config.file={}", config.display()))
                    .arg(format!("--storage.tsdb.path={}", data.display()))
                    .arg(format!("--web.listen-address=127.0.0.1:{port}"));
                c
            }
            Engine::VictoriaMetrics => {
                let mut c = Command::new("victoria-metrics");
                c.arg(format!("-promscrape.config={}", config.display()))
                    .arg(format!("-storageDataPath={}", data.display()))
                    .arg(format!("-httpListenAddr=127.0.0.1:{port}"))
                    // By default the newest 30 s are hidden from queries and /federate.
                    .arg("-search.latencyOffset=0s");
                c
            }
        };
        let program = command.get_program().to_string_lossy().into_owned();
        let child = command
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{program} does not start ({e}): apt-get install {program}"));
        let ready_path = match self {
            Engine::Prometheus => "/-/ready",
            Engine::VictoriaMetrics => "/health",
        };
        let ready = Instant::now();
        while get(port, ready_path).is_none_or(|(status, _)| status != 200) {
            // A bound on a hung start, not a measure of speed.
            assert!(ready.elapsed() < Duration::from_secs(60), "{program} not ready");
            std::thread::sleep(Duration::from_millis(200));
        }
        Reaped(child)
    }

    pub fn version(self) -> String {
        let (program, flag) = match self {
            Engine::Prometheus => ("prometheus", "--version"),
            Engine::VictoriaMetrics => ("victoria-metrics", "-version"),
        };
        let out = Command::new(program)
            .arg(flag)
            .output()
            .unwrap_or_else(|e| panic!("`{program}` is not installed ({e}): apt-get install {program}"));
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        // Debian's VictoriaMetrics prints an empty "build version"; its package knows.
        let line = text.lines().next().unwrap_or(program).to_string();
        if line.contains("version: ") && !line.trim_end().ends_with("version:") {
            return line;
        }
        Command::new("dpkg-query")
            .args(["-W", "-f", "${Version}", program])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or(line)
    }
}

#[test]
#[ignore = "needs Debian's prometheus (apt-get install prometheus) and python3 with prometheus_client \
            (pip install -r tests/py/requirements.txt); run with `cargo test -- --include-ignored`"]
fn monitor_through_prometheus_federation_equals_its_own_promql() {
    fleet(Engine::Prometheus);
}

#[test]
#[ignore = "needs Debian's victoria-metrics (apt-get install victoria-metrics) and python3 with \
            prometheus_client; run with `cargo test -- --include-ignored`"]
fn monitor_through_victoriametrics_federation_sees_the_known_rates() {
    fleet(Engine::VictoriaMetrics);
}

/// Two exporters behind `engine`, read by the monitor through `/federate`.
fn fleet(engine: Engine) {
    let version = engine.version();
    // A at 1600 tok/s, B at 800 tok/s; B restarts and A stops while the monitor runs.
    let (a, a_port) = start_exporter(&[
        "--lifetime",
        "120",
        "--concurrency",
        "16",
        "--tokens-per-request",
        "400",
    ]);
    let mut a = Some(a);
    let (b, b_port) = start_exporter(&[
        "--lifetime",
        "120",
        "--concurrency",
        "8",
        "--tokens-per-request",
        "400",
    ]);
    let dir = TempDir::new("promrate-federation");
    let config = dir.0.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n\
             scrape_configs:\n  - job_name: vllm\n    static_configs:\n\
             \x20     - targets: ['127.0.0.1:{a_port}', '127.0.0.1:{b_port}']\n"
        ),
    )
    .unwrap();
    let port = free_port();
    let _engine = engine.start(&config, &dir.0.join("data"), port);
    // Both targets in the federation (VictoriaMetrics registers new series after ~10 s).
    let federate = format!(
        "/federate?match[]={}",
        encode(r#"{__name__=~"vllm[:_]generation_tokens_total"}"#)
    );
    let waiting = Instant::now();
    while get(port, &federate)
        .is_none_or(|(_, body)| body.lines().filter(|l| l.starts_with("vllm")).count() < 2)
    {
        assert!(
            waiting.elapsed() < Duration::from_secs(60),
            "no data in the federation"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    let window: i32 = 8;
    let base = format!("http://127.0.0.1:{port}");
    let monitor = Command::new(monitor_binary())
        .args(["--federate", &base, "--json", "--interval", "500ms"])
        .args(["--window", &format!("{window}s"), "--duration", "36s"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("monitor starts");
    let mut monitor = Reaped(monitor);
    // Drained as it runs: a full pipe would stall the monitor.
    let mut stdout = monitor.0.stdout.take().unwrap();
    let drain = std::thread::spawn(move || {
        let mut text = String::new();
        stdout.read_to_string(&mut text).map(|_| text)
    });
    std::thread::sleep(Duration::from_secs(14));
    let restart = Command::new("kill")
        .args(["-USR1", &b.0.id().to_string()])
        .status()
        .unwrap();
    assert!(restart.success());
    std::thread::sleep(Duration::from_secs(14));
    // A goes away: Prometheus marks its series stale and /federate stops listing them.
    let a_gone_ms = chrono::Utc::now().timestamp_millis() - 1000;
    a.take();
    let status = monitor.0.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let output = drain.join().unwrap().expect("the monitor's output");
    let rows: Vec<Value> = output
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();

    let instance_a = format!("127.0.0.1:{a_port}");
    let instance_b = format!("127.0.0.1:{b_port}");
    let events: Vec<&Value> = rows.iter().filter(|r| r["event"].is_string()).collect();
    let restarts: Vec<&&Value> = events.iter().filter(|e| e["event"] == "restart").collect();
    assert_eq!(restarts.len(), 1, "B's restart, announced once: {events:?}");
    assert_eq!(restarts[0]["source"], instance_b.as_str());
    assert!(
        events
            .iter()
            .any(|e| e["event"] == "stale" && e["source"] == instance_a.as_str()),
        "A, gone from the federation, is reported stale: {events:?}"
    );

    let query =
        format!(r#"sum by (instance) (rate({{__name__=~"vllm[:_]generation_tokens_total"}}[{window}s]))"#);
    let restart_ms = restarts[0]["t"]
        .as_str()
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .unwrap()
        .timestamp_millis();
    let (mut compared, mut known_checked, mut appended_after_the_read) = (0, 0, 0);
    let (mut worst_promql, mut worst_known) = (0.0f64, 0.0f64);
    for row in rows.iter().filter(|r| r["event"].is_null()) {
        let Some(groups) = row["groups"].as_array() else {
            continue;
        };
        let at_ms = row["at_ms"].as_i64().unwrap();
        let elapsed = row["elapsed_s"].as_f64().unwrap();
        let stale_a = row["urls"][0]["instances"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["instance"] == instance_a.as_str() && i["stale"] == true);
        // VictoriaMetrics' MetricsQL `rate()` does not extrapolate as PromQL does: only
        // Prometheus is asked for its own answer.
        let answers = if engine == Engine::Prometheus {
            instant_query(port, &query, at_ms)
        } else {
            Vec::new()
        };
        // Once the window is full: before, Prometheus holds points from before the
        // monitor's first scrape that the monitor never saw.
        let window_full = elapsed >= f64::from(window) + 1.0;
        for group in groups
            .iter()
            .filter(|_| engine == Engine::Prometheus && window_full)
        {
            let instance = group["instance"].as_str().unwrap();
            let Some(ours) = group["generation_tokens_per_s"]["promql_rate"].as_f64() else {
                continue;
            };
            let theirs = answers
                .iter()
                .find(|(i, _)| i == instance)
                .map(|(_, v)| *v)
                .unwrap_or_else(|| panic!("Prometheus has no rate for {instance} at {at_ms}: {answers:?}"));
            let difference = (ours - theirs).abs() / theirs.abs().max(1e-9);
            if difference > 0.005 {
                // Prometheus stamps a sample with its scrape's start and serves it once
                // the scrape is appended: on a loaded machine the page the monitor read
                // can lack a sample stamped before it, which the later query counts (at
                // a restart, that changes the rate by several percent; a CI run read a
                // page 1 ms after such a stamp). Only then are the two asked about
                // different samples.
                let read_from_ms = row["urls"][0]["at_ms"].as_i64().unwrap()
                    - (row["urls"][0]["scrape_s"].as_f64().unwrap_or(0.0) * 1000.0) as i64;
                let newest_ms = newest_sample_ms(port, instance, at_ms);
                // Stamped at its scrape's start, it is served once the scrape is appended.
                assert!(
                    appended_by_ms(port, instance, newest_ms) >= read_from_ms,
                    "{instance} at {at_ms} ms: monitor {ours}, Prometheus {theirs} (its newest sample \
                     at {newest_ms} ms, before the page was read from {read_from_ms} ms)"
                );
                appended_after_the_read += 1;
                continue;
            }
            worst_promql = worst_promql.max(difference);
            compared += 1;
        }
        // Known rates, once the window is full and holds no restart of the instance.
        if elapsed < f64::from(window) + 2.0 || stale_a || at_ms >= a_gone_ms {
            continue;
        }
        for (instance, known) in [(&instance_a, 1600.0), (&instance_b, 800.0)] {
            if instance == &instance_b
                && (restart_ms..=restart_ms + i64::from(window + 2) * 1000).contains(&at_ms)
            {
                continue;
            }
            let group = groups
                .iter()
                .find(|g| g["instance"] == instance.as_str())
                .unwrap();
            let rate = group["generation_tokens_per_s"]["window"]
                .as_f64()
                .unwrap_or_else(|| panic!("{instance} at {elapsed} s: no rate in {group}"));
            let error = (rate - known).abs() / known;
            assert!(
                error <= 0.01,
                "{instance} at {elapsed} s: {rate}, want {known} ± 1%"
            );
            worst_known = worst_known.max(error);
            known_checked += 1;
        }
        if groups.len() == 2 {
            let total = row["generation_tokens_per_s"]["window"].as_f64().unwrap();
            let in_window = (restart_ms..=restart_ms + i64::from(window + 2) * 1000).contains(&at_ms);
            if !in_window {
                assert!((total - 2400.0).abs() <= 24.0, "total {total} at {elapsed} s");
            }
        }
    }
    if engine == Engine::Prometheus {
        assert!(compared >= 60, "only {compared} figures compared with Prometheus");
        assert!(
            appended_after_the_read <= 4,
            "{appended_after_the_read} figures differed by samples Prometheus appended after the monitor's read"
        );
    }
    assert!(
        known_checked >= 20,
        "only {known_checked} figures checked against the known rates"
    );
    match engine {
        Engine::Prometheus => println!(
            "federation through Prometheus {version}: {compared} per-instance rates vs Prometheus' own query, \
             worst difference {:.4}% ({appended_after_the_read} left out: Prometheus appended a sample \
             after the monitor's read); {known_checked} vs the exporters' known rates, worst {:.3}%",
            worst_promql * 100.0,
            worst_known * 100.0
        ),
        Engine::VictoriaMetrics => println!(
            "federation through VictoriaMetrics {version}: {known_checked} per-instance rates vs the \
             exporters' known rates, worst {:.3}%",
            worst_known * 100.0
        ),
    }
}
