//! With no `--url`: a server on one of this machine's usual ports is found and monitored;
//! when none answers, the simulator is started and every output says why.
//! Each test probes ports it owns (`--discover-ports`): a machine with a vLLM server on
//! port 8000, as this project's users have, runs them as any other.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::monitor::{live_until, monitor_binary, read_request, Reaped};

/// The monitor's default list (`--discover-ports`): vLLM 8000-8015, SGLang 30000, TGI and
/// llama.cpp 8080, LMDeploy 23333, DCGM 9400.
const USUAL_PORTS: &str = "8000-8015,30000,8080,23333,9400";

/// Runs the monitor with `args` (JSON); its rows, and how long its first line took.
fn run(args: &[&str]) -> (Vec<Value>, Duration) {
    let started = Instant::now();
    let mut child = Reaped(
        Command::new(monitor_binary())
            .args(["--json", "--interval", "300ms", "--duration", "1200ms"])
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut lines = BufReader::new(child.0.stdout.take().unwrap()).lines();
    let first = lines.next().expect("a first line").unwrap();
    let first_after = started.elapsed();
    let mut rows: Vec<Value> = vec![serde_json::from_str(&first).unwrap()];
    rows.extend(lines.map(|l| serde_json::from_str(&l.unwrap()).unwrap()));
    assert!(child.0.wait().unwrap().code().is_some());
    (rows, first_after)
}

/// A vLLM page on a port of its own (1000 tok/s by the server's clock); stopped when
/// dropped.
struct OwnServer {
    port: u16,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl OwnServer {
    fn start() -> OwnServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let thread = {
            let stop = std::sync::Arc::clone(&stop);
            std::thread::spawn(move || {
                let started = Instant::now();
                for mut stream in listener.incoming().flatten() {
                    if stop.load(std::sync::atomic::Ordering::SeqCst) {
                        return;
                    }
                    read_request(&mut stream);
                    let tokens = started.elapsed().as_millis();
                    let body = format!("# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{{engine=\"0\"}} {tokens}\n");
                    let _ = write!(
                        stream,
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                }
            })
        };
        OwnServer {
            port,
            stop,
            thread: Some(thread),
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/metrics", self.port)
    }
}

impl Drop for OwnServer {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        // Wakes the accepting thread, which then sees the flag.
        let _ = std::net::TcpStream::connect(("127.0.0.1", self.port));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Runs the monitor with `args` (JSON, every 300 ms) until it prints a row for which
/// `done` holds, then stops it with Ctrl-C; its rows (see [`live_until`]).
fn run_until(args: &[&str], done: impl Fn(&Value) -> bool) -> Vec<Value> {
    let mut all = vec!["--json", "--interval", "300ms", "--duration", "120s"];
    all.extend_from_slice(args);
    live_until(&all, done).rows
}

/// The server is found among the ports asked (the default list is `args.rs`'s to test) and
/// monitored, and only it: nothing else this machine runs is asked.
#[test]
fn a_server_on_a_port_asked_is_found_and_monitored() {
    let server = OwnServer::start();
    let url = server.url();
    let ports = format!("{},{}", server.port, free_port());
    let rows = run_until(&["--discover-ports", &ports], |row| {
        row["urls"].as_array().is_some_and(|urls| {
            urls.iter()
                .any(|u| u["url"] == url.as_str() && u["status"] == "ok (vllm)")
        })
    });
    drop(server);

    let start = &rows[0];
    assert_eq!(start["event"], "start", "{start}");
    assert_eq!(start["monitoring"], serde_json::json!([url]), "{start}");
    assert!(
        start["notes"][0]
            .as_str()
            .unwrap()
            .contains(&format!("found {url} (vllm)")),
        "{start}"
    );
    assert!(
        start["setup"].as_str().unwrap().contains("found on this machine"),
        "{start}"
    );
    let last = rows.iter().rfind(|r| r.get("urls").is_some()).unwrap();
    let ours = last["urls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["url"] == url.as_str())
        .unwrap();
    assert_eq!(ours["status"], "ok (vllm)", "{last}");
}

/// The usual ports and ours probed at once: at most a 150 ms connect and a 600 ms answer
/// per path, so the first line comes within a second of the start, the process's start
/// included.
#[test]
#[ignore = "times the wall clock"]
fn discovery_prints_its_first_line_within_a_second() {
    let server = OwnServer::start();
    let ports = format!("{USUAL_PORTS},{}", server.port);
    let (rows, first_after) = run(&["--discover-ports", &ports]);
    drop(server);
    assert_eq!(rows[0]["event"], "start", "{}", rows[0]);
    assert!(first_after < Duration::from_secs(1), "{first_after:?}");
    println!("discovery: 24 ports probed, first line after {first_after:?}");
}

/// A port of this machine that nothing listens on (it was free a moment ago).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn when_nothing_answers_the_simulator_starts_and_every_output_says_so() {
    let free = free_port();
    let ports = free.to_string();
    let (rows, _) = run(&["--discover-ports", &ports]);
    let start = &rows[0];
    let why = format!("no --url, and no server on 127.0.0.1 port(s) {free}");
    assert_eq!(
        start["notes"][0].as_str().unwrap(),
        format!("{why}: monitoring the built-in simulator"),
        "{start}"
    );
    let model = start["notes"][1].as_str().unwrap();
    assert!(model.starts_with("simulated vLLM 0.33 server"), "{start}");
    assert!(
        start["setup"].as_str().unwrap().ends_with("built-in simulator"),
        "{start}"
    );
    let plain = Command::new(monitor_binary())
        .args(["--plain", "--discover-ports", &ports, "--duration", "500ms"])
        .output()
        .unwrap();
    let text = String::from_utf8(plain.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[..2],
        [
            format!("{why}: monitoring the built-in simulator").as_str(),
            model
        ],
        "{text}"
    );
    // The demo's window is 10 s (its run is 20 s, its restart at 15 s), unless one is asked.
    assert!(model.ends_with("restarts after 15 s"), "{model}");
    assert!(lines[2].contains("window 10s · EWMA 10s"), "{text}");
    let asked = Command::new(monitor_binary())
        .args([
            "--plain",
            "--discover-ports",
            &ports,
            "--duration",
            "500ms",
            "--window",
            "30s",
        ])
        .output()
        .unwrap();
    let asked = String::from_utf8(asked.stdout).unwrap();
    assert!(
        asked.lines().nth(2).is_some_and(|l| l.contains("window 30s")),
        "{asked}"
    );
    // --simulate skips the search.
    let (rows, _) = run(&["--simulate"]);
    assert!(
        rows[0]["notes"][0]
            .as_str()
            .unwrap()
            .starts_with("--simulate given: monitoring the built-in simulator"),
        "{rows:?}"
    );
}

/// Serves each of `pages` (path, body) on a free port, until the test ends; the port.
fn serve_paths(pages: Vec<(&'static str, String)>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            let _ = reader.read_line(&mut request_line);
            let mut header = String::new();
            while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
                header.clear();
            }
            let path = request_line.split_whitespace().nth(1).unwrap_or("");
            let (status, body) = match pages.iter().find(|(p, _)| *p == path) {
                Some((_, body)) => ("200 OK", body.as_str()),
                None => ("404 Not Found", "not here\n"),
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

/// TensorRT-LLM's page is at `/prometheus/metrics` (its `/metrics` is JSON); a DCGM exporter
/// on the machine is read beside the server it found, and alone would not be monitored.
#[test]
fn a_page_at_prometheus_metrics_and_the_gpu_exporter_are_found() {
    let engines = crate::data::dir().join("engines");
    let read = |f: &str| crate::data::read(&engines.join(f));
    let trtllm = serve_paths(vec![
        ("/metrics", "{\"iterations\": []}\n".to_string()),
        ("/prometheus/metrics", read("trtllm.prom")),
    ]);
    let dcgm = serve_paths(vec![("/metrics", read("dcgm.prom"))]);
    let ports = format!("{trtllm},{dcgm}");
    let rows = run_until(&["--discover-ports", &ports], |row| row["gpus"]["count"] == 2);
    let start = &rows[0];
    let monitoring: Vec<&str> = start["monitoring"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|u| u.as_str())
        .collect();
    assert!(
        monitoring.contains(&format!("http://127.0.0.1:{trtllm}/prometheus/metrics").as_str()),
        "{start}"
    );
    assert!(
        monitoring.contains(&format!("http://127.0.0.1:{dcgm}/metrics").as_str()),
        "{start}"
    );
    let last = rows
        .iter()
        .rfind(|r| r.get("gpus").is_some_and(|g| !g.is_null()))
        .expect("GPU figures");
    assert_eq!(last["gpus"]["count"], 2);
    // The GPU exporter alone: the simulator starts.
    let (rows, _) = run(&["--discover-ports", &dcgm.to_string()]);
    assert!(
        rows[0]["setup"].as_str().unwrap().contains("built-in simulator"),
        "{}",
        rows[0]
    );
}
