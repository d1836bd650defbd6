//! vllm_monitor end to end: against the real renderer vLLM uses (Python prometheus_client)
//! and against servers that fail in every way a scrape can fail.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::data;

/// The monitor binary cargo built for these tests.
pub fn monitor_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_vllm_monitor"))
}

/// A child process killed and reaped when dropped, so a failed assertion stops it too.
pub struct Reaped(pub std::process::Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `tests/py/vllm_exporter.py` (prometheus_client) with `args`; returns the process
/// (stopped when dropped) and the port it serves on.
pub fn start_exporter(args: &[&str]) -> (Reaped, u16) {
    let script = crate::data::repository().join("tests/py/vllm_exporter.py");
    let mut exporter = Command::new("python3")
        .arg(&script)
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 starts the exporter");
    let mut first_line = String::new();
    BufReader::new(exporter.stdout.take().unwrap())
        .read_line(&mut first_line)
        .unwrap();
    let port = first_line
        .trim()
        .strip_prefix("PORT ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("exporter did not print its port: {first_line:?}"));
    (Reaped(exporter), port)
}

pub fn run_monitor(args: &[&str]) -> (Vec<Value>, std::process::ExitStatus) {
    let output = Command::new(monitor_binary())
        .args(args)
        .output()
        .expect("monitor runs");
    let rows = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    (rows, output.status)
}

#[test]
#[ignore = "needs python3 with prometheus_client (pip install -r tests/py/requirements.txt); \
            run with `cargo test -- --include-ignored`"]
fn generation_rate_from_prometheus_client_within_one_percent_across_a_restart() {
    let (exporter, port) = start_exporter(&["--restart-after", "10", "--lifetime", "28"]);
    let url = format!("http://127.0.0.1:{port}/metrics");
    let (rows, status) = run_monitor(&[
        "--url",
        &url,
        "--json",
        "--interval",
        "1s",
        "--window",
        "5s",
        "--duration",
        "22s",
    ]);
    drop(exporter);
    assert!(status.success(), "{status}");

    let known = 1000.0;
    let mut checked_after_fill = 0;
    let mut worst = 0.0f64;
    let mut rows_since_restart: Option<usize> = None;
    let mut restarts = 0;
    for row in &rows {
        if row["event"] == "restart" {
            restarts += 1;
            rows_since_restart = Some(0);
            continue;
        }
        let Some(elapsed) = row["elapsed_s"].as_f64() else {
            continue;
        };
        if row["event"] == "summary" {
            continue;
        }
        if let Some(n) = rows_since_restart.as_mut() {
            *n += 1;
        }
        let Some(rate) = row["generation_tokens_per_s"]["window"].as_f64() else {
            continue;
        };
        // Never negative, never a spike, whatever the window holds.
        assert!((0.0..=known * 1.02).contains(&rate), "rate {rate} at {elapsed} s");
        let ewma = row["generation_tokens_per_s"]["ewma"].as_f64().unwrap();
        assert!((0.0..=known * 1.02).contains(&ewma), "ewma {ewma} at {elapsed} s");
        // Once the 5 s window holds no restart, the rate is the known one.
        let window_clear = match rows_since_restart {
            None => elapsed >= 6.0,
            Some(n) => n >= 7,
        };
        if window_clear {
            assert!(
                (rate - known).abs() <= 0.01 * known,
                "rate {rate} at {elapsed} s, want {known} ± 1%"
            );
            checked_after_fill += 1;
            worst = worst.max((rate - known).abs() / known);
        }
    }
    assert_eq!(restarts, 1, "the restart is reported once: {rows:?}");
    assert!(checked_after_fill >= 8, "only {checked_after_fill} rows checked");
    println!(
        "monitor vs prometheus_client: {checked_after_fill} rows, worst error {:.3}%",
        worst * 100.0
    );
    // prometheus_client answered the plain text format we asked for (it would rename
    // `vllm:` to `vllm_` in OpenMetrics).
    let formats: Vec<&Value> = rows
        .iter()
        .filter_map(|r| r["urls"].get(0))
        .map(|u| &u["format"])
        .filter(|f| !f.is_null())
        .collect();
    assert!(
        !formats.is_empty() && formats.iter().all(|f| *f == "text"),
        "{formats:?}"
    );
    let summary = rows.last().unwrap();
    assert_eq!(summary["event"], "summary");
}

/// A server answering every connection with `respond`, on its own thread.
pub fn serve(respond: impl Fn(TcpStream) + Send + Sync + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let respond = std::sync::Arc::new(respond);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let respond = std::sync::Arc::clone(&respond);
            std::thread::spawn(move || respond(stream));
        }
    });
    format!("http://{addr}/metrics")
}

pub fn read_request(stream: &mut TcpStream) {
    let mut buf = [0u8; 4096];
    let mut seen = Vec::new();
    while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
    }
}

/// Answers with `body`; `claimed_length` overrides the Content-Length (to truncate).
pub fn reply(
    status: &str,
    body: &str,
    claimed_length: Option<usize>,
) -> impl Fn(TcpStream) + Send + Sync + 'static {
    let content_length = claimed_length.unwrap_or(body.len());
    let response = format!("HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {content_length}\r\nConnection: close\r\n\r\n{body}");
    move |mut stream| {
        read_request(&mut stream);
        let _ = stream.write_all(response.as_bytes());
    }
}

/// The figures an operator works out by hand, against prometheus_client with a load of
/// known shape: 20 requests always running, 300 tokens each over 6 s.
#[test]
#[ignore = "needs python3 with prometheus_client (pip install -r tests/py/requirements.txt); \
            run with `cargo test -- --include-ignored`"]
fn per_request_figures_and_etas_from_prometheus_client_within_two_percent() {
    let (concurrency, tokens, prompt, latency) = (20.0, 300.0, 1200.0, 6.0);
    let (exporter, port) = start_exporter(&[
        "--lifetime",
        "20",
        "--concurrency",
        "20",
        "--tokens-per-request",
        "300",
        "--prompt-tokens",
        "1200",
        "--latency",
        "6",
    ]);
    let url = format!("http://127.0.0.1:{port}/metrics");
    let (rows, status) = run_monitor(&[
        "--url",
        &url,
        "--json",
        "--interval",
        "1s",
        "--window",
        "6s",
        "--duration",
        "15s",
        "--target-requests",
        "1000",
    ]);
    drop(exporter);
    assert!(status.success(), "{status}");
    let close = |got: &Value, want: f64, what: &str, worst: &mut f64| {
        let got = got.as_f64().unwrap_or_else(|| panic!("{what}: {got}"));
        let error = (got - want).abs() / want;
        assert!(error <= 0.02, "{what}: {got}, want {want} ± 2%");
        *worst = worst.max(error);
    };
    let mut worst = 0.0f64;
    let mut checked = 0;
    for row in rows
        .iter()
        .filter(|r| r["elapsed_s"].as_f64().is_some_and(|e| e >= 7.0))
    {
        if row["event"] == "summary" {
            continue;
        }
        assert_eq!(row["schema"], 1);
        close(
            &row["mean_generation_tokens_per_request"],
            tokens,
            "tokens/request",
            &mut worst,
        );
        close(
            &row["mean_prompt_tokens_per_request"],
            prompt,
            "prompt tokens/request",
            &mut worst,
        );
        close(
            &row["generation_tokens_per_s_per_running_request"],
            tokens / latency,
            "tok/s per running request",
            &mut worst,
        );
        close(
            &row["mean_e2e_latency_seconds"],
            latency,
            "mean latency",
            &mut worst,
        );
        close(
            &row["littles_law_requests_per_s"],
            concurrency / latency,
            "Little's-law rate",
            &mut worst,
        );
        assert_eq!(row["load"], "steady", "{row}");
        // The ETAs, computed by hand from the same row.
        let finished = row["finished_requests_since_start"].as_f64().unwrap();
        let remaining = 1000.0 - finished;
        let rate = row["requests_finished_per_s"]["total"].as_f64().unwrap();
        let per_request = row["mean_generation_tokens_per_request"].as_f64().unwrap();
        let gen = row["generation_tokens_per_s"]["window"].as_f64().unwrap();
        let progress = &row["progress"];
        assert_eq!(progress["finished"].as_f64(), Some(finished));
        let eta_requests = progress["eta_requests_s"].as_f64().unwrap();
        let eta_tokens = progress["eta_tokens_s"].as_f64().unwrap();
        assert!(
            (eta_requests - remaining / rate).abs() < 1e-9 * eta_requests,
            "{progress}"
        );
        assert!(
            (eta_tokens - remaining * per_request / gen).abs() < 1e-9 * eta_tokens,
            "{progress}"
        );
        checked += 1;
    }
    assert!(checked >= 6, "only {checked} rows checked");
    println!(
        "per-request figures vs prometheus_client: {checked} rows, worst error {:.3}%",
        worst * 100.0
    );
}

#[test]
fn every_fault_is_reported_and_monitoring_goes_on() {
    let refused = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/metrics", listener.local_addr().unwrap())
    };
    let hanging = serve(|mut stream| {
        read_request(&mut stream);
        std::thread::sleep(Duration::from_secs(60));
    });
    let error_500 = serve(reply("500 Internal Server Error", "boom", None));
    let truncated = serve(reply(
        "200 OK",
        "vllm:generation_tokens_total{engine=\"0\"} 12",
        Some(1000),
    ));
    let unparsable = serve(reply(
        "200 OK",
        "vllm:num_requests_running{engine=\"0\" 3\n",
        None,
    ));
    let not_vllm = serve(reply("200 OK", "up 1\n", None));
    let started = Instant::now();
    let good = serve(move |mut stream| {
        read_request(&mut stream);
        let tokens = started.elapsed().as_millis() as f64 / 2.0; // 500 tok/s
        let body = format!("# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{{engine=\"0\"}} {tokens}\n");
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
    });
    let urls = [
        &refused,
        &hanging,
        &error_500,
        &truncated,
        &unparsable,
        &not_vllm,
        &good,
    ];
    let mut args = vec![
        "--json",
        "--interval",
        "1s",
        "--timeout",
        "2s",
        "--duration",
        "6s",
        "--window",
        "3s",
    ];
    for url in urls {
        args.extend(["--url", url.as_str()]);
    }
    let (rows, status) = run_monitor(&args);
    assert!(
        status.success(),
        "{status}: one URL worked, so the run counts as a success"
    );
    let ticks: Vec<&Value> = rows.iter().filter(|r| r.get("urls").is_some()).collect();
    // The hanging server (2 s timeout) does not hold back the 1 s reports.
    assert!(ticks.len() >= 5, "only {} reports: {rows:?}", ticks.len());
    let last = ticks.last().unwrap();
    let status_of = |url: &str| -> String {
        last["urls"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["url"] == url)
            .unwrap()["status"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let expect = [
        (&refused, "connection refused"),
        (&hanging, "timed out: no answer within 2s"),
        (&error_500, "HTTP 500 Internal Server Error: boom"),
        (&truncated, "reading body failed"),
        (&unparsable, "bad line(s), first at 1:"),
        (&not_vllm, "no vLLM, SGLang or TGI metrics"),
        (&good, "ok (vllm)"),
    ];
    for (url, want) in expect {
        let got = status_of(url);
        assert!(got.contains(want), "{url}: status {got:?}, want {want:?}");
        // First contact: a URL that never answered is a fault event at its first failure,
        // with the reason, and once.
        let faults: Vec<&Value> = rows
            .iter()
            .filter(|r| r["event"] == "fault" && r["url"] == **url)
            .collect();
        if url == &good {
            assert!(faults.is_empty(), "{faults:?}");
        } else {
            assert_eq!(faults.len(), 1, "{url}: {faults:?}");
            let message = faults[0]["message"].as_str().unwrap();
            assert!(message.contains(want), "{url}: fault {message:?}, want {want:?}");
        }
    }
    // The summary names the URLs that never answered, each with its reason.
    let summary = rows.last().unwrap();
    let never: Vec<&str> = summary["never_answered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["url"].as_str().unwrap())
        .collect();
    assert_eq!(never.len(), 6, "{summary}");
    assert!(
        !never.contains(&good.as_str()) && never.contains(&refused.as_str()),
        "{summary}"
    );
    let rate = last["generation_tokens_per_s"]["window"]
        .as_f64()
        .expect("the good server's rate");
    assert!((rate - 500.0).abs() < 25.0, "rate {rate}");
}

/// SGLang, TGI and vLLM V0 pages are recognised and their gauges shown.
#[test]
fn sglang_tgi_and_vllm_v0_pages_are_recognised() {
    let dir = data::dir();
    let page = |name: &str| data::read(&dir.join("vllm").join(name));
    let sglang = serve(reply("200 OK", &page("sglang-datadog-0.5.10.prom"), None));
    let tgi = serve(reply("200 OK", &page("tgi-datadog-excerpt.prom"), None));
    let v0 = serve(reply("200 OK", &page("vllm-v0-0.7-multiproc.prom"), None));
    let mut args = vec![
        "--json",
        "--interval",
        "500ms",
        "--duration",
        "1600ms",
        "--by",
        "url",
    ];
    for url in [&sglang, &tgi, &v0] {
        args.extend(["--url", url.as_str()]);
    }
    let (rows, status) = run_monitor(&args);
    assert!(status.success(), "{status}");
    let last = rows
        .iter()
        .rfind(|r| r.get("groups").is_some())
        .expect("a report");
    let servers: Vec<&str> = last["urls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["server"].as_str().unwrap())
        .collect();
    assert_eq!(servers, ["sglang", "tgi", "vllm"]);
    let group = |url: &str| {
        last["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["url"] == url)
            .unwrap()
            .clone()
    };
    let sg = group(&sglang);
    assert_eq!(sg["kv_cache_usage"], 0.25, "sglang:token_usage");
    assert_eq!(sg["prefix_cache_hit_rate"], 0.2, "sglang:cache_hit_rate");
    assert_eq!(sg["running"], 0.0);
    assert_eq!(group(&tgi)["waiting"], 0.0, "tgi_queue_size");
    let v0 = group(&v0);
    assert_eq!(
        v0["kv_cache_usage"], 0.0022442598298122065,
        "vllm:gpu_cache_usage_perc"
    );
    assert_eq!(v0["running"], 1.0);
}

/// The README's first command on a machine without a server: the monitor watches its
/// built-in simulated vLLM server (1600 ± 400 tok/s, a restart 10 s in) and reports that restart once.
#[test]
fn built_in_simulator_is_monitored_across_its_restart() {
    let (rows, status) = run_monitor(&[
        "--simulate",
        "--json",
        "--interval",
        "1s",
        "--window",
        "4s",
        "--duration",
        "14s",
    ]);
    assert!(status.success(), "{status}");
    let restarts = rows.iter().filter(|r| r["event"] == "restart").count();
    assert_eq!(restarts, 1, "the simulator restarts once: {rows:?}");
    let rates: Vec<f64> = rows
        .iter()
        .filter_map(|r| r["generation_tokens_per_s"]["window"].as_f64())
        .collect();
    assert!(rates.len() >= 8, "only {} reports with a rate", rates.len());
    for rate in &rates {
        // The simulated rate swings between 1200 and 2000 tok/s; a window that spans the
        // restart only loses the unobservable tokens, never goes negative or spikes.
        assert!((0.0..=2000.0 * 1.02).contains(rate), "rate {rate}: {rates:?}");
    }
    let steady = rates
        .iter()
        .filter(|r| (1200.0 * 0.98..=2000.0 * 1.02).contains(*r));
    assert!(steady.count() >= rates.len() / 2, "{rates:?}");
    assert_eq!(rows.last().unwrap()["event"], "summary");
}
