//! Real deployments: HTTPS servers started by the tests themselves, with a CA and
//! certificates generated here (one good, one expired), asking for a bearer token, basic
//! auth or a header. Secrets must never appear in anything the monitor prints.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, SanType};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::Value;

use crate::monitor::{live_until, monitor_binary};

const TOKEN: &str = "s3cret-token-4f1c";
const PASSWORD: &str = "pa55-w0rd-9e2";

/// A CA of the test's own, and a server certificate for 127.0.0.1 it signed.
struct Pki {
    dir: PathBuf,
    ca_pem: PathBuf,
    cert: CertificateDer<'static>,
    key: Vec<u8>,
}

impl Pki {
    fn new(name: &str, expired: bool) -> Pki {
        let dir = std::env::temp_dir().join(format!("vllm-monitor-tls-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ca_key = KeyPair::generate().unwrap();
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(DnType::CommonName, "vllm-monitor test CA");
        let ca_cert = ca.self_signed(&ca_key).unwrap();
        let ca_pem = dir.join("ca.pem");
        std::fs::write(&ca_pem, ca_cert.pem()).unwrap();
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
        params
            .subject_alt_names
            .push(SanType::IpAddress(Ipv4Addr::LOCALHOST.into()));
        if expired {
            params.not_before = rcgen::date_time_ymd(2020, 1, 1);
            params.not_after = rcgen::date_time_ymd(2021, 1, 1);
        }
        let cert = params.signed_by(&key, &Issuer::new(ca, ca_key)).unwrap();
        Pki {
            dir,
            ca_pem,
            cert: cert.der().clone(),
            key: key.serialize_der(),
        }
    }

    /// A self-signed certificate for 127.0.0.1 that is a CA too (CA:TRUE, as `openssl req
    /// -x509` makes one by default), used as the server's own and given as the CA.
    fn self_signed_ca(name: &str) -> Pki {
        let dir = std::env::temp_dir().join(format!("vllm-monitor-tls-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .subject_alt_names
            .push(SanType::IpAddress(Ipv4Addr::LOCALHOST.into()));
        let cert = params.self_signed(&key).unwrap();
        let ca_pem = dir.join("ca.pem");
        std::fs::write(&ca_pem, cert.pem()).unwrap();
        Pki {
            dir,
            ca_pem,
            cert: cert.der().clone(),
            key: key.serialize_der(),
        }
    }

    /// A file in the test's directory.
    fn file(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.dir.join(name);
        std::fs::write(&path, contents).unwrap();
        path
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// An HTTPS server answering a vLLM page to requests carrying `want` (header, value) and
/// 401 to others; stopped when dropped.
struct Server {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    fn start(pki: &Pki, want: Vec<(&'static str, String)>) -> Server {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(pki.key.clone()));
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![pki.cert.clone()], key)
            .unwrap();
        let config = Arc::new(config);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let started = Instant::now();
        let thread = {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                for stream in listener.incoming().flatten() {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    let (config, want) = (Arc::clone(&config), want.clone());
                    std::thread::spawn(move || answer(stream, config, &want, started));
                }
            })
        };
        Server {
            port,
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

/// One connection: TLS (a client that refuses the certificate ends it here), the request,
/// then the page or a 401.
fn answer(tcp: TcpStream, config: Arc<rustls::ServerConfig>, want: &[(&str, String)], started: Instant) {
    let Ok(connection) = rustls::ServerConnection::new(config) else {
        return;
    };
    let mut tls = rustls::StreamOwned::new(connection, tcp);
    let mut request = Vec::new();
    let mut buf = [0u8; 4096];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
        match tls.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => request.extend_from_slice(&buf[..n]),
        }
    }
    let request = String::from_utf8_lossy(&request).to_lowercase();
    let allowed = want.iter().all(|(name, value)| {
        request.contains(&format!("{}: {}\r\n", name.to_lowercase(), value.to_lowercase()))
    });
    let (status, body) = if allowed {
        let tokens = started.elapsed().as_millis() as f64; // 1000 tok/s
        (
            "200 OK",
            format!("# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{{engine=\"0\"}} {tokens}\n"),
        )
    } else {
        (
            "401 Unauthorized",
            "unauthorized: missing or wrong credentials\n".to_string(),
        )
    };
    let _ = write!(
        tls,
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = tls.flush();
    tls.conn.send_close_notify();
    let _ = tls.flush();
}

/// A fresh CA, a server with its certificate wanting `want`, and its metrics URL.
fn https(name: &str, expired: bool, want: Vec<(&'static str, String)>) -> (Pki, Server, String) {
    let pki = Pki::new(name, expired);
    let server = Server::start(&pki, want);
    let url = format!("https://127.0.0.1:{}/metrics", server.port);
    (pki, server, url)
}

/// The monitor's JSON lines and its stderr, of a run with `args` stopped by Ctrl-C once a
/// row for which `done` holds is printed (however long a loaded machine takes; no scrape
/// times out meanwhile).
fn monitor(args: &[&str], done: impl Fn(&Value) -> bool) -> (Vec<Value>, String) {
    let mut all = vec![
        "--json",
        "--interval",
        "300ms",
        "--duration",
        "120s",
        "--timeout",
        "60s",
    ];
    all.extend_from_slice(args);
    let live = live_until(&all, done);
    let stdout: Vec<String> = live.rows.iter().map(Value::to_string).collect();
    for secret in [TOKEN, PASSWORD] {
        assert!(
            stdout.iter().all(|l| !l.contains(secret)) && !live.stderr.contains(secret),
            "a secret was printed:\n{stdout:?}\n{}",
            live.stderr
        );
    }
    (live.rows, live.stderr)
}

/// A row where the only URL was read.
fn read(row: &Value) -> bool {
    row["urls"][0]["status"] == "ok (vllm)"
}

fn fault(row: &Value) -> bool {
    row["event"] == "fault"
}

/// The last interval's status of the only URL.
fn last_status(rows: &[Value]) -> String {
    let last = rows
        .iter()
        .rfind(|r| r.get("urls").is_some())
        .expect("an interval");
    last["urls"][0]["status"].as_str().unwrap().to_string()
}

fn faults(rows: &[Value]) -> Vec<String> {
    rows.iter()
        .filter(|r| r["event"] == "fault")
        .map(|r| r["message"].as_str().unwrap().to_string())
        .collect()
}

fn bearer() -> (&'static str, String) {
    ("Authorization", format!("Bearer {TOKEN}"))
}

#[test]
fn the_right_ca_token_and_header_read_the_metrics() {
    let (pki, _server, url) = https("good", false, vec![bearer(), ("X-Scope-OrgID", "team-a".into())]);
    let token = pki.file("token", &format!("{TOKEN}\n"));
    let (rows, stderr) = monitor(
        &[
            "--url",
            &url,
            "--ca-cert",
            pki.ca_pem.to_str().unwrap(),
            "--bearer-token-file",
            token.to_str().unwrap(),
            "--header",
            "X-Scope-OrgID: team-a",
        ],
        |row| read(row) && row["generation_tokens_per_s"]["window"].is_number(),
    );
    assert_eq!(last_status(&rows), "ok (vllm)", "{rows:?} {stderr}");
    assert!(faults(&rows).is_empty(), "{rows:?}");
    let rate = rows
        .iter()
        .rev()
        .find_map(|r| r["generation_tokens_per_s"]["window"].as_f64())
        .expect("a rate");
    // Live, its value depends on when the pages were rendered; that the pages were read
    // into a rate is the point here (replays check rates exactly).
    assert!(rate > 0.0, "{rate}");
}

#[test]
fn a_wrong_token_is_a_clear_401_fault() {
    let (pki, _server, url) = https("token", false, vec![bearer()]);
    let token = pki.file("token", "not-the-token\n");
    let (rows, _) = monitor(
        &[
            "--url",
            &url,
            "--ca-cert",
            pki.ca_pem.to_str().unwrap(),
            "--bearer-token-file",
            token.to_str().unwrap(),
        ],
        fault,
    );
    assert_eq!(
        faults(&rows),
        ["never answered yet: HTTP 401 Unauthorized: unauthorized: missing or wrong credentials"],
        "{rows:?}"
    );
}

#[test]
fn an_unknown_ca_and_an_expired_certificate_are_clear_tls_faults() {
    let (_pki, _server, url) = https("unknown", false, vec![]);
    // The system's roots do not know the test's CA.
    let (rows, _) = monitor(&["--url", &url], fault);
    let unknown = faults(&rows);
    assert_eq!(unknown.len(), 1, "{rows:?}");
    assert!(
        unknown[0].contains("TLS:") && unknown[0].contains("unknown CA"),
        "{unknown:?}"
    );

    let (expired, _server, url) = https("expired", true, vec![]);
    let (rows, _) = monitor(
        &["--url", &url, "--ca-cert", expired.ca_pem.to_str().unwrap()],
        fault,
    );
    assert_eq!(
        faults(&rows),
        ["never answered yet: TLS: the server's certificate has expired"],
        "{rows:?}"
    );
}

/// The usual self-signed certificate (`openssl req -x509`: CA:TRUE) given with --ca-cert
/// is refused by the verifier as a server's own; the fault says so and what to do, not a
/// verifier's debug string.
#[test]
fn a_ca_certificate_as_the_servers_own_is_a_fault_that_says_what_to_do() {
    let pki = Pki::self_signed_ca("self-signed-ca");
    let server = Server::start(&pki, vec![]);
    let url = format!("https://127.0.0.1:{}/metrics", server.port);
    let (rows, _) = monitor(&["--url", &url, "--ca-cert", pki.ca_pem.to_str().unwrap()], fault);
    let said = faults(&rows);
    assert_eq!(said.len(), 1, "{rows:?}");
    assert!(
        said[0].contains("is a CA certificate")
            && said[0].contains("CA:FALSE")
            && !said[0].contains("Other("),
        "{said:?}"
    );
}

#[test]
fn insecure_reads_an_unknown_certificate_and_every_output_says_so() {
    let (_pki, _server, url) = https("insecure", false, vec![]);
    let (rows, _) = monitor(&["--url", &url, "--insecure"], read);
    assert_eq!(last_status(&rows), "ok (vllm)", "{rows:?}");
    let warned = |row: &Value| row["warnings"].to_string().contains("--insecure");
    assert!(
        rows.first().is_some_and(|r| r["event"] == "start" && warned(r)),
        "{rows:?}"
    );
    assert!(
        rows.last().is_some_and(|r| r["event"] == "summary" && warned(r)),
        "{rows:?}"
    );
    let plain = Command::new(monitor_binary())
        .args(["--plain", "--insecure", "--url", &url, "--duration", "600ms"])
        .output()
        .unwrap();
    let text = String::from_utf8(plain.stdout).unwrap();
    assert!(
        text.starts_with("warning: TLS certificates are not checked (--insecure)"),
        "{text}"
    );
}

#[test]
fn basic_auth_from_the_url_is_sent_and_shown_without_its_password() {
    use base64::Engine as _;
    let pki = Pki::new("basic", false);
    let credentials = base64::engine::general_purpose::STANDARD.encode(format!("ops:{PASSWORD}"));
    let server = Server::start(&pki, vec![("Authorization", format!("Basic {credentials}"))]);
    let url = format!("https://ops:{PASSWORD}@127.0.0.1:{}/metrics", server.port);
    let (rows, _) = monitor(&["--url", &url, "--ca-cert", pki.ca_pem.to_str().unwrap()], read);
    assert_eq!(last_status(&rows), "ok (vllm)", "{rows:?}");
    let shown = format!("https://ops:***@127.0.0.1:{}/metrics", server.port);
    assert_eq!(rows[0]["monitoring"][0], shown.as_str(), "{rows:?}");
}

#[test]
fn federate_goes_through_the_same_tls_and_token() {
    let pki = Pki::new("federate", false);
    let server = Server::start(&pki, vec![bearer()]);
    let token = pki.file("token", TOKEN);
    let base = format!("https://127.0.0.1:{}", server.port);
    let (rows, _) = monitor(
        &[
            "--federate",
            &base,
            "--ca-cert",
            pki.ca_pem.to_str().unwrap(),
            "--bearer-token-file",
            token.to_str().unwrap(),
        ],
        read,
    );
    assert_eq!(last_status(&rows), "ok (vllm)", "{rows:?}");
    assert!(
        rows[0]["monitoring"][0]
            .as_str()
            .unwrap()
            .contains("/federate?match"),
        "{rows:?}"
    );
}

/// A password in the URL beside a bearer token would send two `Authorization` headers (and
/// both to wherever a redirect leads): refused before any request, as Prometheus' own
/// configuration refuses it, naming the URL without its password.
#[test]
fn a_password_in_the_url_beside_a_bearer_token_is_refused_before_any_request() {
    let dir = std::env::temp_dir().join(format!("vllm-monitor-two-auth-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let token = dir.join("token");
    std::fs::write(&token, format!("{TOKEN}\n")).unwrap();
    let url = format!("http://ops:{PASSWORD}@127.0.0.1:9/metrics");
    for extra in [
        vec!["--bearer-token-file", token.to_str().unwrap()],
        vec!["--header", "Authorization: Bearer x"],
    ] {
        let output = Command::new(monitor_binary())
            .args(["--url", &url, "--json", "--duration", "5s"])
            .args(&extra)
            .output()
            .unwrap();
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(output.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains("both authorise: give one"), "{stderr}");
        assert!(!stderr.contains(PASSWORD) && !stderr.contains(TOKEN), "{stderr}");
        assert!(output.stdout.is_empty());
    }
    let _ = std::fs::remove_dir_all(&dir);
}
