//! Every URL works in isolation, within budgets: servers of the test's own on loopback,
//! each misbehaving in one way (an error status, no answer, a body that drips in, a page
//! too large or of too many series, garbage, HTML, a connection closed mid-body, a label
//! that took thousands of values, control characters in an error body and a label), each
//! beside a good server. Each test asserts the reason the monitor gives and the good
//! server's figures beside it: its rows arrive, one per interval, and its rate is right.
//! Runs are stopped as a user stops them (Ctrl-C once the reason is shown, `--duration`);
//! nothing asserts how long anything took.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::monitor::{live_until, monitor_binary, read_request, Live, Reaped};

/// The good server's generation rate, tokens per second: exact, as its samples carry the
/// time they were rendered at.
const GOOD_RATE: f64 = 500.0;

/// The interval of every run here, seconds.
const INTERVAL_S: f64 = 0.5;

/// A server of the test's own on a free loopback port, answering each connection with
/// `respond` on a thread of its own (which is given the stop flag: a server that holds a
/// connection looks at it). Dropped, it stops: no connection is accepted any more and
/// every thread it started is ended and joined.
struct Server {
    url: String,
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl Server {
    fn start(respond: impl Fn(TcpStream, &AtomicBool) + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let respond = Arc::new(respond);
        let accept = {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let mut handlers = Vec::new();
                for stream in listener.incoming().flatten() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let (respond, stop) = (Arc::clone(&respond), Arc::clone(&stop));
                    handlers.push(std::thread::spawn(move || respond(stream, &stop)));
                }
                for handler in handlers {
                    let _ = handler.join();
                }
            })
        };
        Server {
            url: format!("http://{addr}/metrics"),
            addr,
            stop,
            accept: Some(accept),
        }
    }

    /// A server answering every request with these bytes.
    fn replying(response: Vec<u8>) -> Server {
        Server::start(move |mut stream, _| {
            read_request(&mut stream);
            let _ = stream.write_all(&response);
        })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accepting thread, which then sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

/// An HTTP/1.1 answer: status line, Content-Type, Content-Length if given, then `body`.
fn response(status: &str, content_type: &str, length: Option<u64>, body: &[u8]) -> Vec<u8> {
    let length = length.map_or(String::new(), |n| format!("Content-Length: {n}\r\n"));
    let mut bytes =
        format!("HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n{length}Connection: close\r\n\r\n")
            .into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

const TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Now, in Unix milliseconds.
fn unix_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

/// A vLLM page generating [`GOOD_RATE`] tokens per second since `origin_ms`, its sample
/// stamped with `now_ms`, so that the rate between any two pages is exact.
fn good_page(origin_ms: u64, now_ms: u64) -> String {
    let tokens = (now_ms - origin_ms) as f64 * GOOD_RATE / 1000.0;
    format!(
        "# TYPE vllm:generation_tokens_total counter\n\
         vllm:generation_tokens_total{{engine=\"0\",model_name=\"m\"}} {tokens} {now_ms}\n"
    )
}

/// The good server every fault is tried beside.
fn good_server() -> Server {
    let origin = unix_ms();
    Server::start(move |mut stream, _| {
        read_request(&mut stream);
        let body = good_page(origin, unix_ms());
        let _ = stream.write_all(&response(
            "200 OK",
            TEXT,
            Some(body.len() as u64),
            body.as_bytes(),
        ));
    })
}

/// The status the row shows for `url`.
fn status_of(row: &Value, url: &str) -> String {
    row["urls"]
        .as_array()
        .and_then(|urls| urls.iter().find(|u| u["url"] == url))
        .and_then(|u| u["status"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// The JSON events of `kind` about `url`, their messages.
fn events(rows: &[Value], kind: &str, url: &str) -> Vec<String> {
    rows.iter()
        .filter(|r| r["event"] == kind && r["url"] == url)
        .map(|r| r["message"].as_str().unwrap().to_string())
        .collect()
}

/// The monitor's arguments for `good` and `faulty`, with `extra`.
fn args<'a>(good: &'a Server, faulty: &'a Server, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["--json", "--interval", "500ms", "--window", "1s"];
    // A deadline of 1 s unless the test gives its own.
    if !extra.contains(&"--timeout") {
        args.extend(["--timeout", "1s"]);
    }
    args.extend(["--duration", "60s", "--url", &good.url, "--url", &faulty.url]);
    args.extend_from_slice(extra);
    args
}

/// Runs the monitor on `good` and `faulty` (with `extra` arguments) until a row shows
/// `faulty`'s status containing `want` and two rows after it have the good server's rate,
/// then stops it with Ctrl-C; checks the good server's figures in every row.
fn beside_good(good: &Server, faulty: &Server, extra: &[&str], want: &str) -> Live {
    let seen_at = std::cell::Cell::new(None::<usize>);
    let rows_seen = std::cell::Cell::new(0usize);
    let live = live_until(&args(good, faulty, extra), |row| {
        if row.get("urls").is_none() {
            return false;
        }
        rows_seen.set(rows_seen.get() + 1);
        if seen_at.get().is_none() && status_of(row, &faulty.url).contains(want) {
            seen_at.set(Some(rows_seen.get()));
        }
        seen_at.get().is_some_and(|at| rows_seen.get() >= at + 2)
            && row["generation_tokens_per_s"]["window"].is_number()
    });
    assert!(live.status.success(), "{}: the good server answered", live.status);
    assert_good_figures(&live.rows, &good.url);
    live
}

/// The good server's figures beside a faulty one: a row every interval, none skipped; the
/// good server ok in each from its first page on; its window rate right in each that has
/// one.
fn assert_good_figures(rows: &[Value], good: &str) {
    let intervals: Vec<&Value> = rows.iter().filter(|r| r.get("urls").is_some()).collect();
    for (k, row) in (1..).zip(&intervals) {
        let elapsed = row["elapsed_s"].as_f64().unwrap();
        assert!(
            (elapsed - f64::from(k) * INTERVAL_S).abs() < 1e-9,
            "row {k} at {elapsed} s: an interval was skipped\n{intervals:?}"
        );
    }
    let first_ok = intervals
        .iter()
        .position(|r| status_of(r, good) == "ok (vllm)")
        .expect("the good server's page is read");
    for row in &intervals[first_ok..] {
        assert_eq!(status_of(row, good), "ok (vllm)", "{row}");
    }
    let rates: Vec<f64> = intervals
        .iter()
        .filter_map(|r| r["generation_tokens_per_s"]["window"].as_f64())
        .collect();
    assert!(!rates.is_empty(), "no rate: {intervals:?}");
    for rate in rates {
        assert!(
            (rate - GOOD_RATE).abs() <= 0.01 * GOOD_RATE,
            "rate {rate}, want {GOOD_RATE}"
        );
    }
}

/// The one fault event of `url`, which says `want`.
fn assert_one_fault(rows: &[Value], url: &str, want: &str) -> String {
    let faults = events(rows, "fault", url);
    assert_eq!(faults.len(), 1, "{url}: {faults:?}");
    assert!(faults[0].contains(want), "fault {:?}, want {want:?}", faults[0]);
    faults[0].clone()
}

#[test]
fn an_error_status_is_shown_with_its_body_beside_a_good_server() {
    let good = good_server();
    let faulty = Server::replying(response("500 Internal Server Error", TEXT, Some(4), b"boom"));
    let want = "HTTP 500 Internal Server Error: boom";
    let live = beside_good(&good, &faulty, &[], want);
    assert_one_fault(&live.rows, &faulty.url, want);
}

#[test]
fn a_server_that_never_answers_times_out_beside_a_good_server() {
    let good = good_server();
    // Takes the request and holds the connection without a word until stopped.
    let faulty = Server::start(|mut stream, stop| {
        read_request(&mut stream);
        while !stop.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    let want = "timed out: no answer within 1s (see --timeout)";
    let live = beside_good(&good, &faulty, &[], want);
    assert_one_fault(&live.rows, &faulty.url, want);
}

/// Sends its headers and 2 bytes of a 1,000-byte body every 100 ms.
fn dripping() -> Server {
    Server::start(|mut stream, stop| {
        read_request(&mut stream);
        let head = response("200 OK", TEXT, Some(1000), b"");
        if stream.write_all(&head).is_err() {
            return;
        }
        for _ in 0..500 {
            if stop.load(Ordering::SeqCst) || stream.write_all(b"# ").is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    })
}

#[test]
fn a_body_that_drips_in_is_too_slow_not_unanswered_beside_a_good_server() {
    let good = good_server();
    let faulty = dripping();
    let live = beside_good(&good, &faulty, &[], "body too slow: ");
    let fault = assert_one_fault(&live.rows, &faulty.url, "body too slow: ");
    // "never answered yet: body too slow: 22 bytes in 1s 2ms, past the 1s deadline (the
    // headers arrived; see --timeout)": the URL never gave a page, the server did answer.
    let (_, after) = fault.split_once("body too slow: ").unwrap();
    let bytes: u64 = after
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{fault}"));
    assert!(bytes < 1000, "{fault}");
    assert!(
        fault.contains(" bytes in ")
            && fault.contains(", past the 1s deadline (the headers arrived; see --timeout)")
            && !fault.contains("no answer"),
        "{fault}"
    );
}

#[test]
fn a_page_whose_content_length_is_over_the_limit_is_refused_before_reading() {
    let good = good_server();
    // Announces 300 MiB and sends a few bytes, then holds the connection: a monitor that
    // read on would time out, not refuse.
    let faulty = Server::start(|mut stream, stop| {
        read_request(&mut stream);
        let head = response("200 OK", TEXT, Some(300 << 20), b"vllm:num_requests_running 1\n");
        let _ = stream.write_all(&head);
        while !stop.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    let want = "page too large: its Content-Length says 300.0 MiB, over the 1.0 MiB limit; refused before reading (see --max-page-mib)";
    let live = beside_good(&good, &faulty, &["--max-page-mib", "1"], want);
    assert_one_fault(&live.rows, &faulty.url, want);
}

#[test]
fn a_huge_page_without_content_length_is_refused_while_it_streams() {
    let good = good_server();
    // Valid lines without end (8 MiB at most), no Content-Length: the end of the body would
    // be the connection's.
    let faulty = Server::start(|mut stream, _| {
        read_request(&mut stream);
        let head = response("200 OK", TEXT, None, b"");
        let lines: String = (0..1000)
            .map(|i| format!("vllm:num_requests_running{{engine=\"{i}\"}} 1\n"))
            .collect();
        let _ = stream.write_all(&head);
        let mut sent = 0;
        while sent < 8 << 20 && stream.write_all(lines.as_bytes()).is_ok() {
            sent += lines.len();
        }
    });
    let want = "page too large: more than the 1.0 MiB limit came without a Content-Length that said so; refused while reading (see --max-page-mib)";
    let live = beside_good(&good, &faulty, &["--max-page-mib", "1"], want);
    assert_one_fault(&live.rows, &faulty.url, want);
}

/// A decompression bomb: a few KiB of gzip that inflate to 64 MiB of valid lines, with a
/// Content-Length that tells the compressed size only. The limit counts decompressed
/// bytes: the page is refused at 1 MiB, with the reason, the limit and the flag.
#[test]
fn a_gzip_body_that_inflates_past_the_limit_is_refused_while_it_streams() {
    use std::io::Write as _;
    let good = good_server();
    let lines = "vllm:num_requests_running 1\n".repeat((64 << 20) / 28);
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(lines.as_bytes()).unwrap();
    let bomb = encoder.finish().unwrap();
    assert!(bomb.len() < 1 << 20, "{} bytes of gzip", bomb.len());
    let mut answer = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {TEXT}\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        bomb.len()
    )
    .into_bytes();
    answer.extend_from_slice(&bomb);
    let faulty = Server::replying(answer);
    let want = "page too large: its gzip body decompressed to more than the 1.0 MiB limit from its first ";
    let live = beside_good(&good, &faulty, &["--max-page-mib", "1"], want);
    let fault = assert_one_fault(&live.rows, &faulty.url, want);
    assert!(
        fault.ends_with(" KiB; refused while reading (see --max-page-mib, which counts decompressed bytes)"),
        "{fault}"
    );
}

#[test]
fn a_page_of_more_series_than_max_series_is_refused_whole() {
    let good = good_server();
    let page: String = (0..300)
        .map(|i| format!("vllm:num_requests_running{{engine=\"{i}\"}} 1\n"))
        .collect();
    let faulty = Server::replying(response("200 OK", TEXT, Some(page.len() as u64), page.as_bytes()));
    let want = "too many series: this page would take the URL to 300 series, over the limit of 100; refused whole (see --max-series)";
    let live = beside_good(&good, &faulty, &["--max-series", "100"], want);
    assert_one_fault(&live.rows, &faulty.url, want);
}

#[test]
fn garbage_is_not_text_beside_a_good_server() {
    let good = good_server();
    let garbage: Vec<u8> = (0u32..4096)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8 | 0x80)
        .collect();
    let faulty = Server::replying(response("200 OK", TEXT, Some(garbage.len() as u64), &garbage));
    let want = "reading body failed: not UTF-8 text (byte 0)";
    let live = beside_good(&good, &faulty, &[], want);
    assert_one_fault(&live.rows, &faulty.url, want);
}

#[test]
fn an_html_error_page_is_named_as_html_beside_a_good_server() {
    let good = good_server();
    let html = "<!DOCTYPE html><html><head><title>Login</title></head><body><h1>Sign in</h1><p>to continue</p></body></html>";
    let faulty = Server::replying(response(
        "200 OK",
        "text/html; charset=utf-8",
        Some(html.len() as u64),
        html.as_bytes(),
    ));
    let want = "an HTML page (text/html; charset=utf-8), not metrics: Sign in to continue";
    let live = beside_good(&good, &faulty, &[], want);
    assert_one_fault(&live.rows, &faulty.url, want);
}

#[test]
fn a_valid_page_served_as_html_is_read_with_one_warning() {
    let good = good_server();
    // A valid vLLM page (a gauge: the rate is the good server's), labelled text/html.
    let page = "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\",model_name=\"h\"} 2\n";
    let faulty = Server::replying(response(
        "200 OK",
        "text/html",
        Some(page.len() as u64),
        page.as_bytes(),
    ));
    let live = beside_good(&good, &faulty, &[], "ok (vllm)");
    let warnings = events(&live.rows, "warning", &faulty.url);
    assert_eq!(warnings.len(), 1, "once per URL: {warnings:?}");
    assert!(
        warnings[0].starts_with("served as text/html, not as one of the exposition formats asked for"),
        "{}",
        warnings[0]
    );
    assert!(events(&live.rows, "fault", &faulty.url).is_empty());
}

#[test]
fn a_connection_closed_mid_body_is_a_failed_read_beside_a_good_server() {
    let good = good_server();
    let faulty = Server::replying(response(
        "200 OK",
        TEXT,
        Some(1000),
        b"vllm:num_requests_running 1\n",
    ));
    let want = "reading body failed after 28 bytes: ";
    let live = beside_good(&good, &faulty, &[], want);
    assert_one_fault(&live.rows, &faulty.url, want);
}

/// A page within every budget that takes longer than an interval to read (100,000 series,
/// sent in four parts 400 ms apart: over a second however fast the machine, within the
/// 10 s deadline) is read on its URL's worker: the intervals due meanwhile leave that URL
/// out and say so, and the good server's rows come on time with its rate.
#[test]
fn a_page_slow_to_read_holds_back_only_its_own_url() {
    let good = good_server();
    let page = many_series(100_000);
    let mib = page.len() as f64 / f64::from(1 << 20);
    let answer = response("200 OK", TEXT, Some(page.len() as u64), page.as_bytes());
    let faulty = Server::start(move |mut stream, stop| {
        read_request(&mut stream);
        for part in answer.chunks(answer.len().div_ceil(4)) {
            if stop.load(Ordering::SeqCst) || stream.write_all(part).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(400));
        }
    });
    let live = beside_good(&good, &faulty, &["--timeout", "10s"], "ok (vllm)");
    let slow = events(&live.rows, "slow", &faulty.url);
    assert!(!slow.is_empty(), "{:?}", live.rows);
    assert!(
        slow[0].starts_with(&format!("its page ({mib:.1} MiB) is still being read after ")),
        "{}",
        slow[0]
    );
    assert!(
        slow[0].ends_with(
            "when the 0.5 s interval is due: left out of it, the other URLs are on time (--max-page-mib and --max-series bound a page)"
        ),
        "{}",
        slow[0]
    );
}

/// A valid page of `series` gauges: 100,000 take seconds to read in a test build.
fn many_series(series: usize) -> String {
    (0..series)
        .map(|i| format!("vllm:num_requests_running{{engine=\"{i}\",model_name=\"big\"}} 1\n"))
        .collect()
}

/// The plain output says the reason on its `!` line, with the URL.
#[test]
fn plain_output_says_why_on_the_fault_line() {
    let good = good_server();
    let faulty = dripping();
    let output = Command::new(monitor_binary())
        .args([
            "--plain",
            "--interval",
            "500ms",
            "--window",
            "1s",
            "--timeout",
            "1s",
        ])
        .args(["--duration", "2500ms", "--url", &good.url, "--url", &faulty.url])
        .stdin(Stdio::null())
        .output()
        .expect("the monitor runs");
    let text = String::from_utf8_lossy(&output.stdout);
    let fault = text
        .lines()
        .find(|l| l.starts_with('!') && l.contains(" fault "))
        .unwrap_or_else(|| panic!("no fault line:\n{text}"));
    assert!(
        fault.contains("fault never answered yet: body too slow: ") && fault.contains(" bytes in "),
        "{fault}"
    );
}

/// `--duration` and Ctrl-C end a run whatever a server does: one that never answers
/// (with a minute's timeout), a body that never ends, a page that takes seconds to read.
/// The bound is a hang guard only.
#[test]
fn duration_and_ctrl_c_end_the_run_while_servers_hold_it() {
    let good = good_server();
    let silent = Server::start(|mut stream, stop| {
        read_request(&mut stream);
        while !stop.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    let endless = dripping();
    let page = many_series(100_000);
    let big = Server::replying(response("200 OK", TEXT, Some(page.len() as u64), page.as_bytes()));
    let urls = [
        "--url",
        &good.url,
        "--url",
        &silent.url,
        "--url",
        &endless.url,
        "--url",
        &big.url,
    ];
    let common = [
        "--json",
        "--interval",
        "500ms",
        "--window",
        "1s",
        "--timeout",
        "60s",
    ];
    let mut by_duration = Reaped(
        Command::new(monitor_binary())
            .args(common)
            .args(["--duration", "1500ms"])
            .args(urls)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    assert!(
        exits_within(&mut by_duration, Duration::from_secs(60)),
        "hung after its --duration"
    );
    let mut text = String::new();
    by_duration
        .0
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    let summary: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(summary["event"], "summary", "{text}");
    assert!(
        by_duration.0.wait().unwrap().success(),
        "the good server answered"
    );
    // Ctrl-C once the good server has a rate.
    let mut args = common.to_vec();
    args.extend(["--duration", "60s"]);
    args.extend(urls);
    let live = live_until(&args, |row| row["generation_tokens_per_s"]["window"].is_number());
    assert_eq!(live.rows.last().unwrap()["event"], "summary");
    assert_good_figures(&live.rows, &good.url);
}

/// Whether the process exits within `bound`.
fn exits_within(child: &mut Reaped, bound: Duration) -> bool {
    let started = Instant::now();
    while started.elapsed() < bound {
        if child.0.try_wait().unwrap().is_some() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// A page of `values` model names, each a counter that does not move and the requests it
/// runs: a server whose cardinality exploded (a model name per request, say).
fn exploded(values: usize) -> String {
    let mut page = String::from("# TYPE vllm:generation_tokens_total counter\n");
    for i in 0..values {
        page.push_str(&format!(
            "vllm:generation_tokens_total{{engine=\"0\",model_name=\"req-{i:06}\"}} 7\n"
        ));
    }
    page
}

/// A server whose `model_name` label took 2,000 values beside a good one: `--by
/// model_name` shows the busiest 50 groups and one row summing the rest, saying how many
/// it holds; JSON has every group; the good server's group is exact wherever it is shown.
/// (The intervals' cost grows with the groups, linearly: `cargo bench -p vllm-monitor
/// --bench federation cardinality`; a test build under load may skip intervals to keep up,
/// which is why this test does not ask for every one.)
#[test]
fn a_cardinality_explosion_shows_the_busiest_groups_beside_a_good_server() {
    let good = good_server();
    let page = exploded(2_000);
    let faulty = Server::replying(response("200 OK", TEXT, Some(page.len() as u64), page.as_bytes()));
    let run = |output: &str| {
        Command::new(monitor_binary())
            .args([output, "--interval", "1s", "--window", "2s", "--by", "model_name"])
            .args(["--duration", "4s", "--url", &good.url, "--url", &faulty.url])
            .stdin(Stdio::null())
            .output()
            .expect("the monitor runs")
    };
    let json = String::from_utf8_lossy(&run("--json").stdout).into_owned();
    let rows: Vec<Value> = json.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let with_groups: Vec<&Value> = rows
        .iter()
        .filter(|r| r["groups"].as_array().is_some_and(|g| !g.is_empty()))
        .collect();
    let last = with_groups.last().expect("rows with groups");
    assert_eq!(
        last["groups"].as_array().unwrap().len(),
        2_001,
        "JSON has every group"
    );
    let mut rated = 0;
    for row in &with_groups {
        let ours = row["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["model_name"] == "m");
        if let Some(rate) = ours.and_then(|g| g["generation_tokens_per_s"]["window"].as_f64()) {
            assert!(
                (rate - GOOD_RATE).abs() <= 0.01 * GOOD_RATE,
                "the good server at {rate} tok/s"
            );
            rated += 1;
        }
    }
    assert!(rated > 0, "the good server's group was never rated");
    let plain = run("--plain");
    let text = String::from_utf8_lossy(&plain.stdout);
    let others = text.lines().filter(|l| l.contains("+1,95")).count();
    assert!(others > 0, "no row summing the other groups:\n{text}");
    let shown = text.lines().filter(|l| l.contains("req-0")).count();
    assert!(
        shown <= 50 * others,
        "{shown} group rows for {others} intervals:\n{text}"
    );
}

/// Control characters in an error body and in a label value (an OSC title change, a
/// screen clear, a backspace, a newline) reach the terminal written out, never raw; a
/// label value with a newline keeps its row on one line.
#[test]
fn control_characters_from_a_server_never_reach_the_terminal_raw() {
    let good = good_server();
    let hostile = "h\\n\u{1b}]0;pwned\u{7}\u{1b}[2J\u{8}x";
    let page = format!(
        "# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{{engine=\"0\",model_name=\"{hostile}\"}} 7\n"
    );
    let faulty = Server::replying(response("200 OK", TEXT, Some(page.len() as u64), page.as_bytes()));
    let body = "\u{1b}]0;owned\u{7}\u{1b}[2Jbad\u{8}\u{8}gateway";
    let failing = Server::replying(response(
        "502 Bad Gateway",
        TEXT,
        Some(body.len() as u64),
        body.as_bytes(),
    ));
    let output = Command::new(monitor_binary())
        .args([
            "--plain",
            "--interval",
            "500ms",
            "--window",
            "1s",
            "--by",
            "model_name",
        ])
        .args(["--duration", "2500ms", "--url", &good.url, "--url", &faulty.url])
        .args(["--url", &failing.url])
        .stdin(Stdio::null())
        .output()
        .expect("the monitor runs");
    let text = String::from_utf8_lossy(&output.stdout);
    let raw: Vec<char> = text.chars().filter(|c| c.is_control() && *c != '\n').collect();
    assert!(raw.is_empty(), "raw control characters {raw:?} in:\n{text}");
    assert!(
        text.contains("\\x1b]0;owned"),
        "the error body written out:\n{text}"
    );
    assert!(
        !text
            .lines()
            .any(|l| l.trim_start().starts_with("]0;pwned") || l.starts_with("\u{1b}")),
        "a row split by the label's newline:\n{text}"
    );
}
