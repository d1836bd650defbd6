//! Finding a server on this machine: with no `--url`, the usual ports of 127.0.0.1 are
//! asked for `/metrics` in parallel, and those whose page has inference metrics are
//! monitored.

use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::Duration;

use promrate::Tracker;

use crate::figures::ServerKind;
use crate::http::{Access, Endpoint};

/// Time for a port to accept a connection: loopback answers in microseconds or refuses.
const CONNECT: Duration = Duration::from_millis(150);
/// Time for an open port to send its page (a busy vLLM can be slow to render it).
const ANSWER: Duration = Duration::from_millis(600);

/// A server found on this machine.
#[derive(Debug, Clone)]
pub struct Found {
    pub url: String,
    pub kind: ServerKind,
}

/// The ports of `ports` on 127.0.0.1 whose `/metrics` has vLLM, SGLang or TGI metrics, in
/// the order given. Every port is asked at once, so the whole search takes one
/// `CONNECT` plus one `ANSWER` per path of `PATHS` at most.
pub fn find(ports: &[u16], access: &Access) -> Vec<Found> {
    std::thread::scope(|scope| {
        let probes: Vec<_> = ports
            .iter()
            .map(|&port| scope.spawn(move || probe(port, access)))
            .collect();
        probes
            .into_iter()
            .filter_map(|probe| probe.join().ok().flatten())
            .collect()
    })
}

fn probe(port: u16, access: &Access) -> Option<Found> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    // A cheap connect first: most ports refuse, and refuse at once.
    drop(TcpStream::connect_timeout(&addr, CONNECT).ok()?);
    // `/metrics`, then the paths servers put their page at instead (TensorRT-LLM's
    // `/prometheus/metrics`, its `/metrics` being JSON).
    PATHS.iter().find_map(|path| {
        let url = format!("http://{addr}{path}");
        let page = access
            .client(ANSWER, 64 << 20)
            .fetch_into(&Endpoint::new(&url), String::new())
            .ok()?;
        let mut tracker = Tracker::new([]);
        tracker.normalize_names(true).infer_counters(true);
        // Bad lines do not matter here: only whether inference metrics are on the page.
        let _ = tracker.ingest(&page.body, chrono::Utc::now());
        let kind = ServerKind::detect(&tracker)?;
        Some(Found { url, kind })
    })
}

/// Where servers serve their metrics, in the order asked.
const PATHS: [&str; 2] = ["/metrics", "/prometheus/metrics"];

/// `ports` as a reader wants them: `8000-8015, 8080, 30000`.
pub fn describe(ports: &[u16]) -> String {
    let mut sorted = ports.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            sorted[i].to_string()
        } else {
            format!("{}-{}", sorted[i], sorted[j])
        });
        i = j + 1;
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_lists_read_as_ranges() {
        let ports: Vec<u16> = (8000..=8015).chain([30000, 8080]).collect();
        assert_eq!(describe(&ports), "8000-8015, 8080, 30000");
        assert_eq!(describe(&[9, 7, 7]), "7, 9");
    }

    use std::collections::HashSet;
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::{Arc, Condvar, Mutex};
    use std::thread::JoinHandle;
    use std::time::Instant;

    const VLLM_PAGE: &str =
        "# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{engine=\"0\"} 1\n";

    /// Holds every request until a request has come to each of `ports` servers (or
    /// `longest` has passed, so that nothing waits for ever).
    struct Gate {
        asked: Mutex<HashSet<u16>>,
        all: Condvar,
        ports: usize,
        longest: Duration,
    }

    impl Gate {
        fn new(ports: usize, longest: Duration) -> Arc<Gate> {
            Arc::new(Gate {
                asked: Mutex::new(HashSet::new()),
                all: Condvar::new(),
                ports,
                longest,
            })
        }

        fn pass(&self, port: u16) {
            let mut asked = self.asked.lock().unwrap();
            asked.insert(port);
            self.all.notify_all();
            let _ = self
                .all
                .wait_timeout_while(asked, self.longest, |asked| asked.len() < self.ports)
                .unwrap();
        }
    }

    /// A server on 127.0.0.1 answering every request with `page` (after `gate`, if any) and
    /// counting them; stopped, with every connection's thread, when dropped.
    struct Server {
        port: u16,
        requests: Arc<AtomicUsize>,
        stop: Arc<AtomicBool>,
        thread: Option<JoinHandle<()>>,
    }

    impl Server {
        fn start(page: &'static str, gate: Option<Arc<Gate>>) -> Server {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            let port = listener.local_addr().unwrap().port();
            let requests = Arc::new(AtomicUsize::new(0));
            let stop = Arc::new(AtomicBool::new(false));
            let thread = {
                let (requests, stop) = (Arc::clone(&requests), Arc::clone(&stop));
                std::thread::spawn(move || {
                    let mut connections = Vec::new();
                    for stream in listener.incoming().flatten() {
                        if stop.load(Ordering::SeqCst) {
                            break;
                        }
                        let (requests, gate) = (Arc::clone(&requests), gate.clone());
                        connections.push(std::thread::spawn(move || {
                            answer(stream, page, port, &requests, gate.as_deref())
                        }));
                    }
                    for connection in connections {
                        let _ = connection.join();
                    }
                })
            };
            Server {
                port,
                requests,
                stop,
                thread: Some(thread),
            }
        }
    }

    impl Drop for Server {
        fn drop(&mut self) {
            self.stop.store(true, Ordering::SeqCst);
            // Wakes the accepting thread, which then sees the flag.
            let _ = TcpStream::connect(("127.0.0.1", self.port));
            if let Some(thread) = self.thread.take() {
                let _ = thread.join();
            }
        }
    }

    /// One connection: the request (none on the probe's first, bare connect), then the page.
    fn answer(mut stream: TcpStream, page: &str, port: u16, requests: &AtomicUsize, gate: Option<&Gate>) {
        let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
        let mut request = Vec::new();
        let mut buf = [0u8; 1024];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => request.extend_from_slice(&buf[..n]),
            }
        }
        requests.fetch_add(1, Ordering::SeqCst);
        if let Some(gate) = gate {
            gate.pass(port);
        }
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
            page.len()
        );
    }

    fn closed_port() -> u16 {
        TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    }

    #[test]
    fn a_closed_port_and_a_page_without_inference_metrics_are_not_found() {
        let closed = closed_port();
        let other = Server::start("up 1\n", None);
        assert!(find(&[closed, other.port], &Access::default()).is_empty());
        // Its page was read, at both paths: it was refused for what it holds.
        assert_eq!(other.requests.load(Ordering::SeqCst), PATHS.len());
    }

    /// Every port is asked at once: each server holds its answer until all of them have
    /// been asked. Probed one after another, the first would have given up (its ANSWER
    /// time) before the next was asked, and only the last would be found.
    #[test]
    fn every_port_is_probed_at_once() {
        let gate = Gate::new(4, Duration::from_secs(30));
        let servers: Vec<Server> = (0..4)
            .map(|_| Server::start(VLLM_PAGE, Some(Arc::clone(&gate))))
            .collect();
        let ports: Vec<u16> = servers.iter().map(|s| s.port).collect();
        let found: Vec<String> = find(&ports, &Access::default())
            .into_iter()
            .map(|f| f.url)
            .collect();
        let want: Vec<String> = ports
            .iter()
            .map(|p| format!("http://127.0.0.1:{p}/metrics"))
            .collect();
        assert_eq!(found, want, "every server found, in the order given");
    }

    /// The search's bound on the wall clock: ports that accept and never answer cost a
    /// CONNECT and an ANSWER per path, all of them at once.
    #[test]
    #[ignore = "times the wall clock"]
    fn the_search_takes_a_connect_and_an_answer_per_path_at_most() {
        // Never all asked: each answers only after the search has given up on it.
        let gate = Gate::new(usize::MAX, Duration::from_secs(3));
        let silent: Vec<Server> = (0..8)
            .map(|_| Server::start(VLLM_PAGE, Some(Arc::clone(&gate))))
            .collect();
        let mut ports: Vec<u16> = silent.iter().map(|s| s.port).collect();
        ports.extend((0..8).map(|_| closed_port()));
        let started = Instant::now();
        assert!(find(&ports, &Access::default()).is_empty());
        let took = started.elapsed();
        let bound = CONNECT + ANSWER * PATHS.len() as u32 + Duration::from_millis(500);
        assert!(
            took < bound,
            "{took:?} for {} ports, bound {bound:?}",
            ports.len()
        );
    }
}
