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
/// [`CONNECT`] plus one [`ANSWER`] at most.
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

    #[test]
    fn a_closed_port_and_a_page_without_inference_metrics_are_not_found() {
        use std::io::{Read, Write};
        let closed = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let other = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut request = [0u8; 1024];
            let _ = stream.read(&mut request);
            let body = "up 1\n";
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
        });
        let started = std::time::Instant::now();
        assert!(find(&[closed, other], &Access::default()).is_empty());
        assert!(started.elapsed() < Duration::from_secs(1));
        server.join().unwrap();
    }
}
