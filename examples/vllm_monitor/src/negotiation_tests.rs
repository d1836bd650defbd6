//! The monitor negotiates as Prometheus 3 does, and reads what it is given: pages served
//! from servers of the test's own on loopback, through the monitor's HTTP client and the
//! streaming read into a URL's target, on a given clock (the scrape times are the test's).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use chrono::{DateTime, TimeDelta, Utc};
use promrate::{Format, WindowRule};

use crate::events::EventKind;
use crate::http::{Access, Endpoint};
use crate::snapshot::{Moment, Snapshot};
use crate::target::{ServerRow, Target};

/// What a server of the test's answers: Content-Type and body, by the request's headers.
type Answer = dyn Fn(&str, usize) -> (String, Vec<u8>) + Send + Sync;

/// A server answering `count` requests on a free loopback port, then stopping; the
/// requests' headers are kept.
struct Server {
    url: String,
    requests: Arc<Mutex<Vec<String>>>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    fn start(count: usize, answer: Box<Answer>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/metrics", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&requests);
        let thread = std::thread::spawn(move || {
            for n in 0..count {
                let Ok((mut stream, _)) = listener.accept() else {
                    return;
                };
                let head = request_head(&mut stream);
                let (content_type, body) = answer(&head, n);
                let mut response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n",
                    body.len()
                );
                if body.starts_with(&[0x1f, 0x8b]) {
                    response += "Content-Encoding: gzip\r\n";
                }
                response += "\r\n";
                let _ = stream.write_all(response.as_bytes());
                let _ = stream.write_all(&body);
                kept.lock().unwrap().push(head);
            }
        });
        Server {
            url,
            requests,
            thread: Some(thread),
        }
    }

    /// Waits for the server to have answered all its requests.
    fn finish(mut self) -> Vec<String> {
        self.thread.take().unwrap().join().unwrap();
        std::mem::take(&mut *self.requests.lock().unwrap())
    }
}

fn request_head(stream: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
        head.push(byte[0]);
    }
    String::from_utf8_lossy(&head).to_ascii_lowercase()
}

fn data(name: &str) -> String {
    let path = format!("{}/../../tests/data/vllm/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).expect("the recorded vLLM page")
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// The OpenMetrics page of vLLM's t0 registry with the values of the t10 text page: what
/// prometheus_client renders for t10 when asked for OpenMetrics (the same samples, the
/// OpenMetrics spelling: `vllm_x` sample names, `# EOF`).
fn openmetrics_t10() -> String {
    let key = |name: &str, labels: &str| format!("{}{labels}", name.replace(':', "_"));
    let mut values = std::collections::HashMap::new();
    for line in data("vllm-0.33-v1-single-t10.prom").lines() {
        if let Some((series, value)) = line.rsplit_once(' ').filter(|_| !line.starts_with('#')) {
            let (name, labels) = series.split_at(series.find('{').unwrap_or(series.len()));
            values.insert(key(name, labels), value.to_string());
        }
    }
    data("vllm-0.33-v1-single-t0.openmetrics.txt")
        .lines()
        .map(
            |line| match line.rsplit_once(' ').filter(|_| !line.starts_with('#')) {
                Some((series, value)) => {
                    let (name, labels) = series.split_at(series.find('{').unwrap_or(series.len()));
                    let now = values.get(&key(name, labels)).map_or(value, String::as_str);
                    format!("{series} {now}\n")
                }
                None => format!("{line}\n"),
            },
        )
        .collect()
}

/// prometheus_client's answer: OpenMetrics 1.0.0 when the Accept header names it, else the
/// text format; gzip when asked for it.
fn prometheus_client(head: &str, n: usize) -> (String, Vec<u8>) {
    let (content_type, page) = if head.contains("application/openmetrics-text") {
        let page = match n {
            0 => data("vllm-0.33-v1-single-t0.openmetrics.txt"),
            _ => openmetrics_t10(),
        };
        ("application/openmetrics-text; version=1.0.0; charset=utf-8", page)
    } else {
        let page = data(["vllm-0.33-v1-single-t0.prom", "vllm-0.33-v1-single-t10.prom"][n.min(1)]);
        ("text/plain; version=0.0.4; charset=utf-8", page)
    };
    let gzipped = head.contains("accept-encoding: gzip");
    let body = if gzipped {
        gzip(page.as_bytes())
    } else {
        page.into_bytes()
    };
    (content_type.to_string(), body)
}

/// Scrapes `server` twice, 10 s apart on the test's clock, into a new target: the target,
/// and the figures of a 10 s window at the second scrape.
fn two_scrapes(server: &Server) -> (Target, Snapshot) {
    let client = Access::default().client(std::time::Duration::from_secs(10), 64 << 20);
    let endpoint = Endpoint::new(&server.url);
    let at = |s: i64| DateTime::<Utc>::from_timestamp(1_900_000_000 + s, 0).unwrap();
    let mut target = Target::new(server.url.clone(), TimeDelta::minutes(1));
    for s in [0, 10] {
        let answer = client.open(&endpoint).expect("an answer");
        let (_, failure) = target.ingest_answer(at(s), answer, &AtomicBool::new(false), None);
        assert_eq!(failure, None);
        assert!(target.status.is_ok(), "{}", target.status);
    }
    // Scrapes 10 s apart: the window's interval.
    let moment = Moment {
        windowing: WindowRule::new(TimeDelta::seconds(10))
            .slack(TimeDelta::seconds(1))
            .gap(TimeDelta::seconds(30)),
        at: at(10),
        elapsed: 10.0,
        fresh: at(0),
        fresh_pages: 1,
        by: None,
        max_groups: crate::top::DEFAULT_MAX_GROUPS,
        target_requests: None,
        slo: &[],
        gpu: &crate::gpus::GpuSettings::default(),
    };
    let snapshot = Snapshot::compute(&[&target], &[ServerRow::of(&target)], &moment);
    (target, snapshot)
}

/// The Accept header is Prometheus 3's, with OpenMetrics 2.0.0 first, and gzip is asked
/// for; a vLLM page (prometheus_client) answers OpenMetrics 1.0.0, gzip-compressed, and
/// reads exactly as its text page does: every figure the same, the rate the recorded one.
#[test]
fn vllm_reads_the_same_in_openmetrics_as_in_text() {
    let asked = Server::start(2, Box::new(prometheus_client));
    // A server that answers the text format whatever it is asked, uncompressed.
    let text = Server::start(
        2,
        Box::new(|_: &str, n: usize| {
            let page = data(["vllm-0.33-v1-single-t0.prom", "vllm-0.33-v1-single-t10.prom"][n.min(1)]);
            ("text/plain; version=0.0.4".to_string(), page.into_bytes())
        }),
    );
    let (om_target, om) = two_scrapes(&asked);
    let (text_target, plain) = two_scrapes(&text);
    assert_eq!(om_target.format, Some(Format::OpenMetrics));
    assert_eq!(text_target.format, Some(Format::PrometheusText));
    let rate = om.figures.generation.window.expect("a window rate");
    assert!((rate - 785.2).abs() < 1e-9, "{rate}");
    assert_eq!(om.figures.in_flight.running, Some(19.0));
    // Every figure, the URL they name aside.
    let shown = |f: &crate::figures::Figures, url: &str| format!("{f:?}").replace(url, "URL");
    assert_eq!(shown(&om.figures, &asked.url), shown(&plain.figures, &text.url));
    for head in asked.finish() {
        assert!(
            head.contains(&format!("accept: {}", crate::http::ACCEPT.to_ascii_lowercase())),
            "{head}"
        );
        assert!(head.contains("accept-encoding: gzip"), "{head}");
    }
    text.finish();
}

/// Prometheus 3's default scrape protocols, in its order and with its q-values, after
/// OpenMetrics 2.0.0; UTF-8 names allowed where the format has escaping.
#[test]
fn the_accept_header_prefers_openmetrics_2_then_prometheus_3s_order() {
    let offered: Vec<(&str, &str)> = crate::http::ACCEPT
        .split(',')
        .map(|entry| entry.rsplit_once(";q=").unwrap())
        .collect();
    assert_eq!(
        offered,
        [
            (
                "application/openmetrics-text;version=2.0.0;escaping=allow-utf-8",
                "0.6"
            ),
            (
                "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8",
                "0.5"
            ),
            ("application/openmetrics-text;version=0.0.1", "0.4"),
            ("text/plain;version=1.0.0;escaping=allow-utf-8", "0.3"),
            ("text/plain;version=0.0.4", "0.2"),
            ("*/*", "0.1"),
        ]
    );
}

/// A server that offers OpenMetrics 2.0.0 answers it: its page is read as OpenMetrics 2
/// (its `st@` start time too), and its counter's rate is exact.
#[test]
fn an_openmetrics_2_answer_is_read_as_openmetrics_2() {
    let page = |tokens: u32| {
        format!(
            "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{{engine=\"0\",model_name=\"m\"}} 3\n\
             # TYPE vllm:generation_tokens counter\nvllm:generation_tokens_total{{engine=\"0\",model_name=\"m\"}} {tokens} st@1899999000.0\n# EOF\n"
        )
    };
    let server = Server::start(
        2,
        Box::new(move |head: &str, n: usize| {
            assert!(head.contains("version=2.0.0"), "{head}");
            let body = page([1_000, 6_000][n.min(1)]);
            (
                "application/openmetrics-text; version=2.0.0; charset=utf-8".to_string(),
                body.into_bytes(),
            )
        }),
    );
    let (target, snapshot) = two_scrapes(&server);
    server.finish();
    assert_eq!(target.format, Some(Format::OpenMetrics2));
    assert_eq!(snapshot.figures.generation.window, Some(500.0));
    assert_eq!(snapshot.figures.in_flight.running, Some(3.0));
}

/// A page of the text format served under OpenMetrics' Content-Type, with a
/// Content-Length (so whole): read, and said once for its missing `# EOF`. It was read
/// silently when small (read whole), and refused as "cut short?" when large (read as it
/// arrived), though its length showed it whole.
#[test]
fn a_text_page_served_as_openmetrics_is_read_and_said_once() {
    let text = |_: &str, n: usize| {
        let page = data(["vllm-0.33-v1-single-t0.prom", "vllm-0.33-v1-single-t10.prom"][n.min(1)]);
        let content_type = "application/openmetrics-text; version=1.0.0; charset=utf-8";
        (content_type.to_string(), page.into_bytes())
    };
    let (target, said) = warnings_of_two_scrapes(Server::start(2, Box::new(text)));
    assert!(target.status.is_ok(), "{}", target.status);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].starts_with("served as OpenMetrics (application/openmetrics-text"),
        "{}",
        said[0]
    );
    assert!(said[0].contains("no '# EOF'"), "{}", said[0]);
}

/// Scrapes `server` twice, 10 s apart on the test's clock, each body read as it arrives,
/// into a new target: the target, and the warnings said (each read must succeed).
fn warnings_of_two_scrapes(server: Server) -> (Target, Vec<String>) {
    let client = Access::default().client(std::time::Duration::from_secs(10), 64 << 20);
    let endpoint = Endpoint::new(&server.url);
    let at = |s: i64| DateTime::<Utc>::from_timestamp(1_900_000_000 + s, 0).unwrap();
    let mut target = Target::new(server.url.clone(), TimeDelta::minutes(1));
    let mut said = Vec::new();
    for s in [0, 10] {
        let answer = client.open(&endpoint).expect("an answer");
        let (events, failure) = target.ingest_answer(at(s), answer, &AtomicBool::new(false), None);
        assert_eq!(failure, None);
        said.extend(
            events
                .into_iter()
                .filter(|e| e.kind == EventKind::Warning)
                .map(|e| e.message),
        );
    }
    server.finish();
    (target, said)
}

/// A text page that ends inside a line though it came as long as its Content-Length said:
/// a Content-Length short of the page (counted in characters, here `模型`'s six bytes as
/// two) cut its last line, `1000` read as `1`, and the token rate was a thousandth of the
/// truth, with nothing said. The cut line is not read, and that is said once.
#[test]
fn a_text_page_cut_by_its_content_length_leaves_its_last_line_out() {
    let page = |n: usize| {
        let full = format!(
            "vllm:num_requests_running{{model_name=\"模型\"}} 3\nvllm:generation_tokens_total{{engine=\"0\"}} {}\n",
            1000 * (n + 1)
        );
        let characters = full.chars().count();
        let cut = full.as_bytes()[..characters].to_vec();
        ("text/plain; version=0.0.4".to_string(), cut)
    };
    let (target, said) =
        warnings_of_two_scrapes(Server::start(2, Box::new(move |_: &str, n: usize| page(n))));
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].starts_with("its page ends inside a line, though it was as long as its Content-Length"),
        "{}",
        said[0]
    );
    let model = [("model_name", "模型")];
    assert!(
        target.tracker.get("vllm:num_requests_running", &model).is_some(),
        "the whole lines are read"
    );
    assert!(
        target
            .tracker
            .get("vllm:generation_tokens_total", &[("engine", "0")])
            .is_none(),
        "the cut line (`1` of `1000`) is not"
    );
}
