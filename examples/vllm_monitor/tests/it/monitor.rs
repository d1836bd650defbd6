//! vllm_monitor end to end: against the real renderer vLLM uses (Python prometheus_client)
//! and against servers that fail in every way a scrape can fail.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use vllm_monitor::simulator::Simulation;

use crate::data;
use crate::recorded::{self, Grid, Recording, Source, ORIGIN_US};

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

/// A live run of the monitor stopped by Ctrl-C, as a user stops it: every row it printed
/// (the summary last), which row was waited for, its stderr and its exit status.
pub struct Live {
    pub rows: Vec<Value>,
    /// `rows[done]` is the first row for which the condition held.
    pub done: usize,
    pub stderr: String,
    pub status: std::process::ExitStatus,
}

impl Live {
    /// The row waited for.
    pub fn done(&self) -> &Value {
        &self.rows[self.done]
    }
}

/// Runs the monitor with `args` (JSON output) until it prints a row for which `done` holds,
/// then interrupts it (SIGINT: it prints its summary and exits). For live tests: how long a
/// loaded machine takes to get there does not matter; the run's own `--duration` (give a
/// generous one) bounds the wait, and a run that ends first fails the test with its rows.
pub fn live_until(args: &[&str], done: impl Fn(&Value) -> bool) -> Live {
    let mut child = Reaped(
        Command::new(monitor_binary())
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("monitor starts"),
    );
    // Drained as it runs: a full pipe would stall the monitor.
    let mut stderr = child.0.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut rows = Vec::new();
    let mut found = None;
    for line in BufReader::new(child.0.stdout.take().unwrap()).lines() {
        let line = line.expect("the monitor's output");
        let row: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        if found.is_none() && done(&row) {
            found = Some(rows.len());
            let interrupted = Command::new("kill")
                .args(["-INT", &child.0.id().to_string()])
                .status()
                .expect("kill runs");
            assert!(interrupted.success(), "kill -INT: {interrupted}");
        }
        rows.push(row);
    }
    let status = child.0.wait().unwrap();
    let stderr = stderr.join().expect("the stderr thread");
    let Some(done) = found else {
        panic!("{args:?}: the run ended ({status}) before the row waited for: {stderr}\n{rows:?}");
    };
    Live {
        rows,
        done,
        stderr,
        status,
    }
}

pub fn run_monitor(args: &[&str]) -> (Vec<Value>, std::process::ExitStatus) {
    let (lines, status) = run_monitor_lines(args);
    let rows = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    (rows, status)
}

/// The monitor's stdout lines with `args`, and how it exited.
pub fn run_monitor_lines(args: &[&str]) -> (Vec<String>, std::process::ExitStatus) {
    let output = Command::new(monitor_binary())
        .args(args)
        .output()
        .expect("monitor runs");
    let lines = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    (lines, output.status)
}

#[test]
#[ignore = "needs python3 with prometheus_client (pip install -r tests/py/requirements.txt); \
            run with `cargo test -- --include-ignored`"]
fn generation_rate_from_prometheus_client_within_one_percent_across_a_restart() {
    let (exporter, port) = start_exporter(&["--restart-after", "10", "--lifetime", "28"]);
    let url = format!("http://127.0.0.1:{port}/metrics");
    let interval_s = 1.0;
    let (rows, status) = run_monitor(&[
        "--url",
        &url,
        "--json",
        "--interval",
        &format!("{interval_s}s"),
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
    let mut slowest_scrape_s = 0.0f64;
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
        if let Some(took) = row["urls"][0]["scrape_s"].as_f64() {
            slowest_scrape_s = slowest_scrape_s.max(took);
        }
        let Some(rate) = row["generation_tokens_per_s"]["window"].as_f64() else {
            continue;
        };
        // Never negative, never a spike, whatever the window holds. A page is stamped
        // when its request is sent and rendered before its answer arrives, so a rate
        // over s seconds may be off by up to twice the slowest scrape over s: on a busy
        // machine, more than a percent of the one-second interval (the shortest span
        // the window and the EWMA's steps cover).
        let spike = known * (1.005 + 2.0 * slowest_scrape_s / interval_s);
        assert!(
            (0.0..=spike).contains(&rate),
            "rate {rate} at {elapsed} s, above {spike}"
        );
        let ewma = row["generation_tokens_per_s"]["ewma"].as_f64().unwrap();
        assert!(
            (0.0..=spike).contains(&ewma),
            "ewma {ewma} at {elapsed} s, above {spike}"
        );
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
    // prometheus_client 0.26 answers the Accept header's first choice, OpenMetrics 2.0
    // (a page in 1.0's shape: `_created` lines, no `st@`), and the URL says so.
    let formats: Vec<&Value> = rows
        .iter()
        .filter_map(|r| r["urls"].get(0))
        .map(|u| &u["format"])
        .filter(|f| !f.is_null())
        .collect();
    assert!(
        !formats.is_empty() && formats.iter().all(|f| *f == "openmetrics-2.0"),
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
        assert_eq!(row["schema"], 2);
        assert!(
            row.get("window_span_s").is_none(),
            "the span is window.span_s alone"
        );
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
    // Never answers: holds the connection until the monitor gives up on it.
    let hanging = serve(|mut stream| {
        read_request(&mut stream);
        let _ = stream.set_read_timeout(Some(Duration::from_secs(120)));
        let _ = stream.read(&mut [0u8; 64]);
    });
    let error_500 = serve(reply("500 Internal Server Error", "boom", None));
    // An error page longer than the words kept of it, and one sent a byte at a time.
    let long_500 = serve(reply(
        "500 Internal Server Error",
        &format!("database exploded\n{}", "x".repeat(5_000)),
        None,
    ));
    let dripping_500 = serve(|mut stream| {
        read_request(&mut stream);
        let _ = stream.write_all(b"HTTP/1.1 500 Internal Server Error\r\nConnection: close\r\n\r\n");
        for byte in b"slowly, then never".iter().cycle().take(100_000) {
            if stream.write_all(&[*byte]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    let truncated = serve(reply(
        "200 OK",
        "vllm:generation_tokens_total{engine=\"0\"} 12",
        Some(1000),
    ));
    // No Content-Length: the body ends where the connection closes, here inside a value.
    let closed_early = serve(|mut stream| {
        read_request(&mut stream);
        let _ = stream.write_all(
            b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nvllm:num_requests_running{engine=\"0\"} 3\nvllm:generation_tokens_total{engine=\"0\"} 12",
        );
    });
    let unparsable = serve(reply(
        "200 OK",
        "vllm:num_requests_running{engine=\"0\" 3\n",
        None,
    ));
    let not_vllm = serve(reply("200 OK", "up 1\n", None));
    // What a /federate whose match[] selects nothing answers: metadata at most.
    let empty = serve(reply("200 OK", "# a comment, and no sample\n", None));
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
        &long_500,
        &dripping_500,
        &truncated,
        &closed_early,
        &unparsable,
        &not_vllm,
        &empty,
        &good,
    ];
    let mut args = vec![
        "--json",
        "--interval",
        "1s",
        "--timeout",
        "2s",
        "--duration",
        "120s",
        "--window",
        "3s",
    ];
    for url in urls {
        args.extend(["--url", url.as_str()]);
    }
    let expect = [
        (&refused, "connection refused"),
        (&hanging, "timed out: no answer within 2s"),
        (&error_500, "HTTP 500 Internal Server Error: boom"),
        (&long_500, "HTTP 500 Internal Server Error: database exploded"),
        (&dripping_500, "HTTP 500 Internal Server Error: slow"),
        (&truncated, "reading body failed"),
        (
            &closed_early,
            "the page ends inside a line (no newline after it): cut short?",
        ),
        (&unparsable, "bad line(s), first at 1:"),
        (
            &not_vllm,
            "no inference server's metrics on this page (vLLM, SGLang",
        ),
        (&empty, "an empty page: not one sample on it"),
        (&good, "ok (vllm)"),
    ];
    let status_of = |row: &Value, url: &str| -> String {
        row["urls"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["url"] == url)
            .unwrap()["status"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // Until every URL has said what it does and the good one has a rate, then Ctrl-C.
    let live = live_until(&args, |row| {
        row.get("urls").is_some()
            && expect
                .iter()
                .all(|(url, want)| status_of(row, url).contains(want))
            && row["generation_tokens_per_s"]["window"].is_number()
    });
    let rows = &live.rows;
    assert!(
        live.status.success(),
        "{}: one URL worked, so the run counts as a success",
        live.status
    );
    let ticks: Vec<&Value> = rows.iter().filter(|r| r.get("urls").is_some()).collect();
    // The hanging server (2 s timeout) does not hold back the 1 s reports: one a second, each
    // on time, and the timeout seen no sooner than 2 s in.
    for (k, tick) in (1..).zip(&ticks) {
        assert_eq!(tick["elapsed_s"], f64::from(k), "{ticks:?}");
    }
    assert!(
        live.done()["elapsed_s"].as_f64().unwrap() >= 2.0,
        "{}",
        live.done()
    );
    let last = ticks.last().unwrap();
    for (url, want) in expect {
        let got = status_of(last, url);
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
    // A failure is dated when it was known: the dripping error page's at its deadline,
    // 2 s after the request, not at the request (it printed before rows it outlasted).
    let time = |row: &Value| chrono::DateTime::parse_from_rfc3339(row["t"].as_str().unwrap()).unwrap();
    let fault_at = |url: &str| {
        let fault = rows
            .iter()
            .find(|r| r["event"] == "fault" && r["url"] == url)
            .unwrap();
        time(fault)
    };
    let waited = fault_at(&dripping_500) - fault_at(&refused);
    assert!(
        waited >= chrono::TimeDelta::milliseconds(1_500),
        "the dripping page's fault {waited} after the refused one's"
    );
    // The summary names the URLs that never answered, each with its reason.
    let summary = rows.last().unwrap();
    let never: Vec<&str> = summary["never_answered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["url"].as_str().unwrap())
        .collect();
    assert_eq!(never.len(), urls.len() - 1, "{summary}");
    assert!(
        !never.contains(&good.as_str()) && never.contains(&refused.as_str()),
        "{summary}"
    );
    // Live, the good server's rate depends on when its pages were rendered: that there is
    // one, and not negative, is what this test asks (replays check rates exactly).
    let rate = last["generation_tokens_per_s"]["window"]
        .as_f64()
        .expect("the good server's rate");
    assert!(rate > 0.0, "rate {rate}");
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
        "120s",
        "--by",
        "url",
    ];
    for url in [&sglang, &tgi, &v0] {
        args.extend(["--url", url.as_str()]);
    }
    // Until a report has read all three, then Ctrl-C.
    let live = live_until(&args, |row| {
        row.get("groups").is_some()
            && row["urls"]
                .as_array()
                .is_some_and(|urls| urls.iter().all(|u| u["server"].is_string()))
    });
    assert!(live.status.success(), "{}", live.status);
    let last = live
        .rows
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

/// The README's first command on a machine without a server, `--simulate` (1600 ± 400
/// tok/s, a restart 10 s in), replayed from a recording of the built-in simulator's pages
/// on an exact 1 s grid: the restart is reported once, at the first page after it, and
/// every window's rate is the pages' reset-aware increase over it: the simulated rate
/// where the window holds no restart, less only the tokens no page could show (those
/// between the last page before the restart and the restart) where it does; never negative,
/// never a spike.
#[test]
fn built_in_simulator_is_monitored_across_its_restart() {
    const RESTART_S: f64 = 10.0;
    const WINDOW: u64 = 4;
    let sim = Simulation::new(Some(RESTART_S)).started_at(ORIGIN_US as f64 / 1e6);
    let grid = Grid::new(Duration::from_secs(1), 15).window(Duration::from_secs(WINDOW));
    let recording = Recording::make(
        "restart.jsonl",
        grid,
        &[Source::new("http://127.0.0.1:8000/metrics", |t| sim.render_at(t))],
    );
    let rows = recording.replay(&["--json", "--duration", "14s"]);
    let restarts: Vec<&Value> = rows.iter().filter(|r| r["event"] == "restart").collect();
    assert_eq!(restarts.len(), 1, "the simulator restarts once: {rows:?}");
    assert_eq!(
        recording.index_at(&restarts[0]["t"]),
        10,
        "at the first page after it"
    );
    let intervals = recorded::intervals(&rows);
    assert_eq!(intervals.len(), 14, "{rows:?}");
    let metric = "vllm:generation_tokens_total";
    let (mut across, mut clear) = (0, 0);
    for (k, row) in (1u64..).zip(intervals) {
        assert_eq!(row["elapsed_s"], k as f64);
        let (start, end) = recording.window_of(row, k, WINDOW);
        let rate = row["generation_tokens_per_s"]["window"].as_f64().unwrap();
        let want = recording.rate(0, metric, start, end);
        assert!(
            (rate - want).abs() < 1e-9 * want,
            "interval {k}: {rate} tok/s, the pages say {want}"
        );
        // The simulation's own count over the pages' times, less what happened between the
        // last page before the restart and the restart, when the window holds it.
        let t = |i: u64| recording.scrape(0, i).t();
        let mut generated = sim.generated_until(t(end)) - sim.generated_until(t(start));
        if t(start) < RESTART_S && RESTART_S <= t(end) {
            let before = (start..end).rfind(|&i| t(i) < RESTART_S).unwrap();
            generated -= sim.generated_until(RESTART_S) - sim.generated_until(t(before));
            across += 1;
        } else {
            clear += 1;
        }
        let truth = generated / (t(end) - t(start));
        // Samples are stamped to the millisecond: a span of s seconds is off by up to 1 ms.
        let span = recording.span(0, start, end);
        assert!(
            (rate - truth).abs() <= truth * (0.0015 / span + 1e-4),
            "interval {k}: {rate} tok/s, the simulation made {truth}"
        );
        assert!((0.0..=2000.0 * 1.02).contains(&rate), "interval {k}: {rate}");
    }
    assert_eq!(
        (across, clear),
        (4, 10),
        "windows across the restart and clear of it"
    );
    assert_eq!(rows.last().unwrap()["event"], "summary");
}

/// The same command live, as the README runs it: the built-in simulator is served over
/// HTTP and read as a vLLM server (its figures are the replay's test above).
#[test]
fn built_in_simulator_is_read_over_http() {
    let live = live_until(
        &[
            "--simulate",
            "--json",
            "--interval",
            "500ms",
            "--duration",
            "120s",
        ],
        |row| row["urls"][0]["server"] == "vllm" && row["generation_tokens_per_s"]["window"].is_number(),
    );
    let start = &live.rows[0];
    assert!(
        start["setup"].as_str().unwrap().contains("built-in simulator"),
        "{start}"
    );
    for row in recorded::intervals(&live.rows) {
        if let Some(rate) = row["generation_tokens_per_s"]["window"].as_f64() {
            assert!(rate >= 0.0, "{row}");
        }
    }
    assert!(live.status.success(), "{}: {}", live.status, live.stderr);
    assert_eq!(live.rows.last().unwrap()["event"], "summary");
}
