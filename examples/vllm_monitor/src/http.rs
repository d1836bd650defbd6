//! Scraping one page over HTTP or HTTPS: the Accept header Prometheus 3 sends, gzip, TLS with
//! the system's roots or a given CA, the credentials a deployment asks for, and failures
//! that say why. Secrets (passwords, tokens, header values) are kept out of every message:
//! a URL is shown with its password as `***`.

use std::fmt;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use promrate::Format;

use crate::body::{BodyError, Stream};
use ureq::tls::{Certificate, PemItem, RootCerts, TlsConfig};

/// What a TSDB's HTTP API is asked for.
const JSON: &str = "application/json";

/// Who asks: the monitor and its version, as Prometheus names itself in its scrapes.
pub const USER_AGENT: &str = concat!("vllm_monitor/", env!("CARGO_PKG_VERSION"));

/// What the monitor asks for, as Prometheus 3 asks by default (its scrape protocols in
/// order, each a tenth less preferred: OpenMetrics 1.0.0 and 0.0.1, text 1.0.0, text 0.0.4,
/// then anything), with OpenMetrics 2.0.0 first for the servers that offer it. Names may
/// be UTF-8 (`escaping=allow-utf-8`). The parser is picked from the answer's Content-Type
/// (`Format::from_content_type`). prometheus_client (vLLM, SGLang) 0.26 answers this with
/// OpenMetrics 2.0.0 (a page of 1.0's shape: `_created` lines, no `st@`, `vllm:x` kept);
/// older ones answer 1.0.0, spelling `vllm:x` as `vllm_x`: the tracker's vLLM preset reads
/// both.
pub const ACCEPT: &str = "application/openmetrics-text;version=2.0.0;escaping=allow-utf-8;q=0.6,\
application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,\
application/openmetrics-text;version=0.0.1;q=0.4,\
text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,\
text/plain;version=0.0.4;q=0.2,\
*/*;q=0.1";

/// How much of an error page's body a fault shows.
const BODY_SHOWN: usize = 120;

/// A fetched page and the format its Content-Type announced.
pub struct Page {
    pub body: String,
    pub format: Format,
    /// The Content-Type as the server sent it (kept in recordings).
    pub content_type: Option<String>,
}

/// Whose certificates are trusted.
#[derive(Clone)]
pub enum Trust {
    /// The system's roots, through the platform's verifier.
    System,
    /// Only these CAs (`--ca-cert`).
    Authorities(Vec<Certificate<'static>>),
    /// Nothing is checked (`--insecure`).
    Nobody,
}

/// A header sent with every scrape. Its value may be a credential: `Debug` hides it.
#[derive(Clone)]
pub struct Header {
    pub name: String,
    value: String,
}

impl Header {
    /// `Name: value` as typed after `--header`.
    pub fn parse(typed: &str) -> Result<Header, String> {
        let (name, value) = typed
            .split_once(':')
            .ok_or_else(|| format!("--header {:?}: expected 'Name: value'", redacted_header(typed)))?;
        let name = name.trim();
        let valid = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b));
        if !valid {
            return Err(format!("--header: {name:?} is not a header name"));
        }
        Ok(Header {
            name: name.to_string(),
            value: value.trim().to_string(),
        })
    }

    fn bearer(token: &str) -> Header {
        Header {
            name: "Authorization".into(),
            value: format!("Bearer {token}"),
        }
    }
}

impl fmt::Debug for Header {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: <hidden>", self.name)
    }
}

/// A typed `--header` for an error message: its name only.
fn redacted_header(typed: &str) -> String {
    let name: String = typed
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    format!("{name}…")
}

/// How every URL of a run is reached: one trust setting and one set of headers.
#[derive(Clone)]
pub struct Access {
    pub trust: Trust,
    pub headers: Vec<Header>,
}

impl Access {
    /// From the command line's files and headers; an error names the file or the option.
    pub fn new(
        ca_cert: Option<&str>,
        insecure: bool,
        bearer_token_file: Option<&str>,
        headers: &[String],
    ) -> Result<Access, String> {
        let trust = match (ca_cert, insecure) {
            (_, true) => Trust::Nobody,
            (Some(path), false) => Trust::Authorities(read_certificates(path)?),
            (None, false) => Trust::System,
        };
        let mut headers = headers
            .iter()
            .map(|h| Header::parse(h))
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(path) = bearer_token_file {
            let token =
                std::fs::read_to_string(path).map_err(|e| format!("--bearer-token-file {path}: {e}"))?;
            let token = token.trim();
            if token.is_empty() || token.contains(['\n', '\r']) {
                return Err(format!(
                    "--bearer-token-file {path}: expected one line with the token"
                ));
            }
            headers.push(Header::bearer(token));
        }
        Ok(Access { trust, headers })
    }

    /// Refuses two ways of authorising at once: a URL's `user:password@` beside
    /// `--bearer-token-file` or an `Authorization` `--header` would send two
    /// `Authorization` headers, which a server may read either way (Prometheus' own
    /// configuration refuses basic auth beside a bearer token).
    pub fn one_authorization<'u>(&self, urls: impl IntoIterator<Item = &'u str>) -> Result<(), String> {
        if !self
            .headers
            .iter()
            .any(|h| h.name.eq_ignore_ascii_case("authorization"))
        {
            return Ok(());
        }
        match urls.into_iter().map(Endpoint::new).find(|e| e.basic.is_some()) {
            Some(e) => Err(format!(
                "{}: a user and password in the URL and an Authorization header \
                 (--bearer-token-file or --header) both authorise: give one",
                e.shown
            )),
            None => Ok(()),
        }
    }

    /// An agent with one overall deadline per request and non-2xx answers as values.
    pub fn client(&self, timeout: Duration, max_page_bytes: u64) -> Client {
        let tls = match &self.trust {
            Trust::System => TlsConfig::builder().root_certs(RootCerts::PlatformVerifier),
            Trust::Authorities(certs) => TlsConfig::builder().root_certs(RootCerts::new_with_certs(certs)),
            Trust::Nobody => TlsConfig::builder().disable_verification(true),
        };
        // The deadline bounds the server: connecting, the answer's headers, and the time
        // spent waiting for its body (`Answer::read` counts that; a read never waits longer).
        // The time the monitor spends reading a page as it arrives is not the server's.
        let agent = ureq::Agent::config_builder()
            .timeout_connect(Some(timeout))
            .timeout_send_request(Some(timeout))
            .timeout_recv_response(Some(timeout))
            .timeout_per_read(Some(timeout))
            .http_status_as_error(false)
            // Credentials follow a redirect on the same host and scheme (`/metrics` to
            // `/metrics/`), as Go's client (so Prometheus) and curl keep them: dropped, the
            // scrape failed with 401. Another host does not get them.
            .redirect_auth_headers(ureq::config::RedirectAuthHeaders::SameHost)
            .tls_config(tls.build())
            .build()
            .into();
        Client {
            agent,
            headers: Arc::new(self.headers.clone()),
            timeout,
            max_page_bytes,
        }
    }
}

impl Default for Access {
    fn default() -> Self {
        Access {
            trust: Trust::System,
            headers: Vec::new(),
        }
    }
}

/// The certificates of a PEM file.
fn read_certificates(path: &str) -> Result<Vec<Certificate<'static>>, String> {
    let pem = std::fs::read(path).map_err(|e| format!("--ca-cert {path}: {e}"))?;
    let mut certs = Vec::new();
    for item in ureq::tls::parse_pem(&pem) {
        match item.map_err(|e| format!("--ca-cert {path}: {e}"))? {
            PemItem::Certificate(cert) => certs.push(cert),
            _ => continue,
        }
    }
    if certs.is_empty() {
        return Err(format!(
            "--ca-cert {path}: no certificate in the file (PEM expected)"
        ));
    }
    Ok(certs)
}

/// A URL as typed: what is requested, what is shown, and the credentials it carried.
#[derive(Clone)]
pub struct Endpoint {
    /// The URL without its `user:password@`.
    request: String,
    /// The URL with the password replaced by `***`: the only form printed.
    pub shown: String,
    /// `Authorization: Basic ...` from the URL's user and password.
    basic: Option<String>,
}

impl Endpoint {
    pub fn new(url: &str) -> Endpoint {
        let Some((scheme, rest)) = url.split_once("://") else {
            return Endpoint::plain(url);
        };
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let Some(at) = rest[..authority_end].rfind('@') else {
            return Endpoint::plain(url);
        };
        let (userinfo, host) = (&rest[..at], &rest[at + 1..]);
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .into_owned()
        };
        let (user, password) = match userinfo.split_once(':') {
            Some((user, password)) => (user, Some(password)),
            None => (userinfo, None),
        };
        let credentials = format!("{}:{}", decode(user), password.map(decode).unwrap_or_default());
        let shown_userinfo = match password {
            Some(_) => format!("{user}:***"),
            None => user.to_string(),
        };
        Endpoint {
            request: format!("{scheme}://{host}"),
            shown: format!("{scheme}://{shown_userinfo}@{host}"),
            basic: Some(format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(credentials)
            )),
        }
    }

    fn plain(url: &str) -> Endpoint {
        Endpoint {
            request: url.to_string(),
            shown: url.to_string(),
            basic: None,
        }
    }
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

/// Scrapes pages with one [`Access`], a deadline and a size limit.
#[derive(Clone)]
pub struct Client {
    agent: ureq::Agent,
    headers: Arc<Vec<Header>>,
    timeout: Duration,
    max_page_bytes: u64,
}

impl Client {
    /// The deadline of a request (`--timeout`).
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// GETs `endpoint` into `buffer` (cleared first): a caller that reads large pages again
    /// and again hands the last one's buffer back. A failure says why, fit to print.
    pub fn fetch_into(&self, endpoint: &Endpoint, buffer: String) -> Result<Page, String> {
        self.fetch_until(endpoint, buffer, &AtomicBool::new(false))
    }

    /// [`Client::fetch_into`], given up as soon as `stop` is set: the body is read in
    /// chunks, each checked against the stop flag, the deadline and the size limit, so
    /// that a run that ends, a body that drips in or a page larger than the limit never
    /// hold a worker longer than one read.
    pub fn fetch_until(
        &self,
        endpoint: &Endpoint,
        buffer: String,
        stop: &AtomicBool,
    ) -> Result<Page, String> {
        self.open(endpoint)?.into_page_with(stop, buffer)
    }

    /// Sends the request and waits for the answer's headers: a 200 answer whose body is
    /// still to read ([`Answer::read`]), or why there is none (a failure, another status,
    /// a Content-Length over the limit), fit to print.
    pub fn open(&self, endpoint: &Endpoint) -> Result<Answer, String> {
        let started = Instant::now();
        let mut response = self.call(endpoint, ACCEPT)?;
        let status = response.status();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let encoding = header("content-encoding");
        if status != 200 {
            let body = match encoding {
                // An error page in gzip: its words are not worth a decoder.
                Some(_) => String::new(),
                None => error_page_start(response.body_mut().as_reader(), started + self.timeout),
            };
            return Err(status_reason(status, &body));
        }
        let content_type = header("content-type");
        let format = content_type
            .as_deref()
            .map_or(Format::PrometheusText, Format::from_content_type);
        let length = self.announced(response.body().content_length(), encoding.as_deref())?;
        Ok(Answer {
            format,
            content_type,
            length,
            encoding,
            before: started.elapsed(),
            timeout: self.timeout,
            limit: self.max_page_bytes,
            body: response.into_body().into_with_config().limit(u64::MAX).reader(),
        })
    }

    /// Sends a GET of `endpoint` asking for `accept` (and gzip), with the credentials and
    /// headers of every request, and waits for the answer's headers.
    ///
    /// A header given with `--header` replaces the monitor's own of that name (sent twice,
    /// most servers read the first), except a JSON API's Accept, which asks for JSON.
    fn call(&self, endpoint: &Endpoint, accept: &str) -> Result<ureq::http::Response<ureq::Body>, String> {
        let given = |name: &str| self.headers.iter().any(|h| h.name.eq_ignore_ascii_case(name));
        let own_accept = accept == JSON || !given("accept");
        let mut request = self.agent.get(&endpoint.request);
        if own_accept {
            request = request.header("Accept", accept);
        }
        if !given("accept-encoding") {
            request = request.header("Accept-Encoding", "gzip");
        }
        if !given("user-agent") {
            request = request.header("User-Agent", USER_AGENT);
        }
        for h in self.headers.iter() {
            if own_accept && h.name.eq_ignore_ascii_case("accept") {
                continue;
            }
            request = request.header(&h.name, &h.value);
        }
        if let Some(basic) = &endpoint.basic {
            request = request.header("Authorization", basic);
        }
        request.call().map_err(|e| self.reason(&e))
    }

    /// The Content-Length, refused when it is over the limit. As sent: a gzip body's
    /// decompressed size is known only as it is read.
    fn announced(&self, length: Option<u64>, encoding: Option<&str>) -> Result<Option<u64>, String> {
        match length.filter(|&n| n > self.max_page_bytes && encoding.is_none()) {
            Some(length) => Err(BodyError::Announced {
                length,
                limit: self.max_page_bytes,
            }
            .to_string()),
            None => Ok(length),
        }
    }

    /// Why a request failed, in the words an operator looks for.
    fn reason(&self, e: &ureq::Error) -> String {
        reason(e, self.timeout)
    }
}

/// A 200 answer whose headers arrived: the format they announce, and its body, to be read
/// as it arrives ([`Answer::read`]).
pub struct Answer {
    pub format: Format,
    /// The Content-Type as the server sent it (kept in recordings).
    pub content_type: Option<String>,
    /// The Content-Length: the body's size as sent (compressed, if it is).
    pub length: Option<u64>,
    encoding: Option<String>,
    /// How long the headers took to come.
    before: Duration,
    timeout: Duration,
    limit: u64,
    body: ureq::BodyReader<'static>,
}

impl Answer {
    /// Reads the body to its end into `sink`, decompressed, in chunks of whole characters
    /// ([`Stream::run`]), within the budgets: `--timeout` counts the time spent waiting for
    /// the server (the time `sink` takes is the monitor's own), `--max-page-mib` the
    /// decompressed bytes. Its size, or why it stopped, fit to print.
    pub fn read(self, stop: &AtomicBool, sink: &mut dyn FnMut(&[u8])) -> Result<u64, String> {
        let stream = Stream {
            before: self.before,
            timeout: self.timeout,
            limit: self.limit,
            stop,
            length: self.length,
        };
        stream
            .run(self.body, self.encoding.as_deref(), sink)
            .map_err(|e| worded(e, self.timeout).to_string())
    }

    /// Reads the whole body into a page ([`Answer::read`]).
    pub fn into_page(self, stop: &AtomicBool) -> Result<Page, String> {
        self.into_page_with(stop, String::new())
    }

    /// [`Answer::into_page`] into `buffer`'s memory.
    fn into_page_with(self, stop: &AtomicBool, buffer: String) -> Result<Page, String> {
        let mut body = buffer.into_bytes();
        body.clear();
        let (format, content_type) = (self.format, self.content_type.clone());
        self.read(stop, &mut |chunk| body.extend_from_slice(chunk))?;
        // Whole characters, checked as they came.
        let body = String::from_utf8(body).map_err(|e| format!("reading body failed: {e}"))?;
        Ok(Page {
            body,
            format,
            content_type,
        })
    }

    /// The most bytes its page may have, decompressed (`--max-page-mib`).
    pub fn limit(&self) -> usize {
        usize::try_from(self.limit).unwrap_or(usize::MAX)
    }

    /// The page's size as its Content-Length tells it (an estimate for a gzip body), for
    /// the pipeline's waits (`Pipeline::awaited_until`); `None` without one.
    pub fn size(&self) -> PageSize {
        match (self.length.and_then(|l| usize::try_from(l).ok()), &self.encoding) {
            (None, _) => PageSize::Unknown,
            (Some(length), Some(_)) => PageSize::Compressed(length),
            (Some(length), None) => PageSize::Announced(length),
        }
    }
}

/// What a page's size is known to be before its body is read: its Content-Length, of
/// the page or of its compressed body, or nothing (a body that ends where the connection
/// does, or is chunked).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageSize {
    Announced(usize),
    Compressed(usize),
    Unknown,
}

impl PageSize {
    /// The bytes to read, as far as known: a compressed page some times its length once
    /// decompressed (its reading takes as long); one of unknown size taken for a large
    /// one (`large`: an interval waits for it briefly).
    pub fn estimate(self, large: usize) -> usize {
        match self {
            PageSize::Announced(n) => n,
            PageSize::Compressed(n) => n.saturating_mul(8),
            PageSize::Unknown => large,
        }
    }
}

impl From<usize> for PageSize {
    fn from(bytes: usize) -> Self {
        PageSize::Announced(bytes)
    }
}

/// What an event says of a page's size: `1.0 MiB`, `0.2 MiB gzipped`, `of a size not
/// announced` (only what the server said: a guess would be read as a measure).
impl fmt::Display for PageSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mib = |n: usize| n as f64 / f64::from(1 << 20);
        match *self {
            PageSize::Announced(n) => write!(f, "{:.1} MiB", mib(n)),
            PageSize::Compressed(n) => write!(f, "{:.1} MiB gzipped", mib(n)),
            PageSize::Unknown => f.write_str("of a size not announced"),
        }
    }
}

/// A broken body's error in the words of [`reason`] when ureq's own.
fn worded(e: BodyError, timeout: Duration) -> BodyError {
    let BodyError::Broken { bytes, error } = e else {
        return e;
    };
    let inner = error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<ureq::Error>());
    BodyError::Broken {
        bytes,
        error: match inner {
            Some(inner) => std::io::Error::other(reason(inner, timeout)),
            None => error,
        },
    }
}

/// The start of an error page (its first 4 KiB, as far as it came by `deadline`): its
/// words, whatever its length, and no wait on a server that sends it a byte at a time.
fn error_page_start(mut body: impl std::io::Read, deadline: Instant) -> String {
    const WORDS: usize = 4096;
    let mut start = Vec::with_capacity(WORDS);
    let mut buffer = [0u8; 1024];
    // What came with the status line is read even at the deadline.
    while let Ok(n @ 1..) = body.read(&mut buffer) {
        start.extend_from_slice(&buffer[..n.min(WORDS - start.len())]);
        if start.len() == WORDS || Instant::now() >= deadline {
            break;
        }
    }
    String::from_utf8_lossy(&start).into_owned()
}

/// Why a request failed, in the words an operator looks for (`timeout`: the deadline
/// it may have passed).
fn reason(e: &ureq::Error, timeout: Duration) -> String {
    use std::io::ErrorKind;
    match e {
        ureq::Error::Io(io) if io.kind() == ErrorKind::ConnectionRefused => {
            "connection refused (nothing listening there?)".into()
        }
        ureq::Error::Io(io) if io.kind() == ErrorKind::TimedOut => format!(
            "timed out: no answer within {} (see --timeout)",
            humantime::format_duration(timeout)
        ),
        // A failed name lookup comes as an I/O error from the system's resolver.
        ureq::Error::Io(io) if io.to_string().contains("lookup address") => {
            format!("DNS: host not found ({io})")
        }
        // rustls reports a refused certificate through the stream it wraps.
        ureq::Error::Io(io) => match io.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>()) {
            Some(tls) => tls_reason(tls),
            None => format!("connection failed: {io}"),
        },
        ureq::Error::Timeout(_) => format!(
            "timed out: no answer within {} (see --timeout)",
            humantime::format_duration(timeout)
        ),
        ureq::Error::HostNotFound => "DNS: host not found".into(),
        ureq::Error::ConnectionFailed => "connection failed".into(),
        ureq::Error::Rustls(tls) => tls_reason(tls),
        ureq::Error::Tls(what) => format!("TLS: {what}"),
        ureq::Error::TlsRequired => "TLS required by the server".into(),
        other => format!("request failed: {other}"),
    }
}

/// A TLS failure: an unknown CA, an expired certificate, a wrong host and a CA certificate
/// used as the server's own in plain words.
fn tls_reason(e: &rustls::Error) -> String {
    use rustls::CertificateError as C;
    match e {
        rustls::Error::InvalidCertificate(C::UnknownIssuer) => {
            "TLS: the server's certificate is signed by an unknown CA (--ca-cert FILE trusts a private one)"
                .into()
        }
        rustls::Error::InvalidCertificate(C::Expired | C::ExpiredContext { .. }) => {
            "TLS: the server's certificate has expired".into()
        }
        rustls::Error::InvalidCertificate(C::NotValidForName | C::NotValidForNameContext { .. }) => {
            "TLS: the server's certificate is not valid for this host name".into()
        }
        rustls::Error::InvalidCertificate(C::Other(other))
            if matches!(other.0.downcast_ref(), Some(webpki::Error::CaUsedAsEndEntity)) =>
        {
            "TLS: the server's certificate is a CA certificate (CA:TRUE, as `openssl req -x509` \
             makes one by default), which is refused as a server's own even with --ca-cert: give \
             the server a certificate signed by that CA, or one made with `-addext \
             basicConstraints=critical,CA:FALSE` (--insecure reads it unverified)"
                .into()
        }
        other => format!("TLS: {other}"),
    }
}

/// A non-200 answer: the status, its reason and the start of the body.
pub fn status_reason(status: ureq::http::StatusCode, body: &str) -> String {
    let reason = status.canonical_reason().unwrap_or("");
    // An HTML error page (a proxy's, a web server's) says its words between its tags.
    let words = if body.trim_start().starts_with('<') {
        text_of_html(body)
    } else {
        body.to_string()
    };
    let start: String = words.split_whitespace().collect::<Vec<_>>().join(" ");
    let start = crate::text::keep_start(&start, BODY_SHOWN);
    let mut text = format!("HTTP {} {reason}", status.as_u16())
        .trim_end()
        .to_string();
    if !start.is_empty() {
        text += &format!(": {start}");
    }
    text
}

/// The start of an HTML page's words, for a message: what a proxy's or a login page
/// served in place of the metrics says.
pub fn html_words(html: &str) -> String {
    let words = text_of_html(html)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    crate::text::keep_start(&words, BODY_SHOWN)
}

/// The text of an HTML page: what is between its tags, `<head>`'s aside (a title repeats
/// what the body says; styles and scripts are not words).
fn text_of_html(html: &str) -> String {
    let body = match html.to_ascii_lowercase().find("</head>") {
        Some(end) => &html[end..],
        None => html,
    };
    let mut text = String::new();
    let mut in_tag = false;
    for c in body.chars() {
        match c {
            '<' => {
                in_tag = true;
                text.push(' ');
            }
            '>' => in_tag = false,
            _ if !in_tag => text.push(c),
            _ => {}
        }
    }
    text
}

/// An HTTP API's answer, whatever its status: the Prometheus HTTP API explains a refused
/// query in a JSON body beside its 4xx or 5xx status (`--prometheus`).
pub struct JsonAnswer {
    pub status: u16,
    pub body: String,
    /// How long the server asked to be left alone (`Retry-After`, in seconds or as a
    /// date), when it did.
    pub retry_after: Option<Duration>,
}

/// A `Retry-After` value as a wait from now (`now_unix`): seconds, or an HTTP date.
pub fn retry_after(value: &str, now_unix: i64) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = chrono::DateTime::parse_from_rfc2822(value).ok()?.timestamp();
    Some(Duration::from_secs(u64::try_from(at - now_unix).unwrap_or(0)))
}

impl Client {
    /// GETs `endpoint` asking for JSON, with a scrape's deadline, size limit, credentials
    /// and headers; any status is an answer, only a failure to get one is an error (in the
    /// words of [`Client::fetch_into`]). Apart from [`Client::open`], whose Accept header
    /// asks for the exposition formats and which reads a 200 answer only.
    pub fn get_json(&self, endpoint: &Endpoint, stop: &AtomicBool) -> Result<JsonAnswer, String> {
        let started = Instant::now();
        let response = self.call(endpoint, JSON)?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| retry_after(v, chrono::Utc::now().timestamp()));
        let encoding = response
            .headers()
            .get("content-encoding")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let length = self.announced(response.body().content_length(), encoding.as_deref())?;
        let stream = Stream {
            before: started.elapsed(),
            timeout: self.timeout,
            limit: self.max_page_bytes,
            stop,
            length,
        };
        let mut body = Vec::new();
        let reader = response.into_body().into_with_config().limit(u64::MAX).reader();
        stream
            .run(reader, encoding.as_deref(), &mut |chunk| {
                body.extend_from_slice(chunk)
            })
            .map_err(|e| worded(e, self.timeout).to_string())?;
        let body = String::from_utf8(body).map_err(|e| format!("reading body failed: {e}"))?;
        Ok(JsonAnswer {
            status,
            body,
            retry_after,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page's size is said as the server told it, and a page of unknown size, which the
    /// intervals take for a large one, is not given that guess as its size.
    #[test]
    fn a_page_size_says_only_what_the_server_told() {
        assert_eq!(PageSize::Announced(1 << 20).to_string(), "1.0 MiB");
        assert_eq!(PageSize::Compressed(9 << 20).to_string(), "9.0 MiB gzipped");
        assert_eq!(PageSize::Unknown.to_string(), "of a size not announced");
        assert_eq!(PageSize::Compressed(100).estimate(1), 800);
        assert_eq!(PageSize::Unknown.estimate(4096), 4096);
    }

    #[test]
    fn an_html_error_page_is_shown_by_its_words() {
        let page = "<!DOCTYPE HTML>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Error response</title></head>\n\
                    <body><h1>Error response</h1><p>Error code: 404</p><p>Message: File not found.</p></body></html>";
        assert_eq!(
            status_reason(ureq::http::StatusCode::NOT_FOUND, page),
            "HTTP 404 Not Found: Error response Error code: 404 Message: File not found."
        );
    }

    #[test]
    fn a_password_in_a_url_is_sent_as_basic_auth_and_never_shown() {
        let e = Endpoint::new("https://ops:s3cr%40t@prom.example:9090/federate?x=1");
        assert_eq!(e.request, "https://prom.example:9090/federate?x=1");
        assert_eq!(e.shown, "https://ops:***@prom.example:9090/federate?x=1");
        assert!(!format!("{e:?}").contains("s3cr"));
        // "ops:s3cr@t" in base64.
        assert_eq!(e.basic.as_deref(), Some("Basic b3BzOnMzY3JAdA=="));
        let plain = Endpoint::new("http://h:8000/metrics");
        assert_eq!(
            (plain.shown.as_str(), plain.basic.is_none()),
            ("http://h:8000/metrics", true)
        );
        // An '@' in the path is not a user.
        assert_eq!(Endpoint::new("http://h/a@b").shown, "http://h/a@b");
    }

    #[test]
    fn headers_parse_and_hide_their_values() {
        let h = Header::parse("X-Scope-OrgID: tenant-1").unwrap();
        assert_eq!((h.name.as_str(), h.value.as_str()), ("X-Scope-OrgID", "tenant-1"));
        assert_eq!(format!("{h:?}"), "X-Scope-OrgID: <hidden>");
        let bad = Header::parse("Authorization Bearer abc").unwrap_err();
        assert!(
            bad.contains("expected 'Name: value'") && !bad.contains("abc"),
            "{bad}"
        );
        assert!(Header::parse(": v").is_err());
    }

    #[test]
    fn bad_files_are_errors_that_name_them_and_not_their_contents() {
        let dir = std::env::temp_dir().join(format!("vllm-monitor-http-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let token = dir.join("token");
        std::fs::write(&token, "line one\nline two\n").unwrap();
        let path = token.to_str().unwrap();
        let e = Access::new(None, false, Some(path), &[]).err().unwrap();
        assert!(e.contains(path) && !e.contains("line one"), "{e}");
        let e = Access::new(Some(path), false, None, &[]).err().unwrap();
        assert!(e.contains("no certificate"), "{e}");
        let missing = dir.join("missing.pem");
        let e = Access::new(missing.to_str(), false, None, &[]).err().unwrap();
        assert!(e.contains("missing.pem"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The request's headers as a server sees them: the monitor's Accept, gzip and its
    /// name, unless `--header` gives its own (then sent once, in place of the monitor's).
    #[test]
    fn a_header_given_replaces_the_monitors_own() {
        use std::io::{BufRead, BufReader, Write};
        let request_headers = |given: &[&str]| -> Vec<String> {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let url = format!("http://{}/metrics", listener.local_addr().unwrap());
            let server = std::thread::spawn(move || {
                let (stream, _) = listener.accept().unwrap();
                let mut lines = Vec::new();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                loop {
                    let mut line = String::new();
                    reader.read_line(&mut line).unwrap();
                    if line.trim().is_empty() {
                        break;
                    }
                    lines.push(line.trim().to_ascii_lowercase());
                }
                let body = "vllm:num_requests_running 1\n";
                let mut stream = stream;
                write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                )
                .unwrap();
                lines
            });
            let given: Vec<String> = given.iter().map(|h| h.to_string()).collect();
            let access = Access::new(None, false, None, &given).unwrap();
            let client = access.client(Duration::from_secs(5), 1 << 20);
            client.open(&Endpoint::new(&url)).unwrap();
            server.join().unwrap()
        };
        let count = |lines: &[String], name: &str| {
            lines
                .iter()
                .filter(|l| l.starts_with(&format!("{name}:")))
                .count()
        };
        let plain = request_headers(&[]);
        assert_eq!(count(&plain, "accept"), 1, "{plain:?}");
        assert!(
            plain
                .iter()
                .any(|l| l.starts_with("accept: application/openmetrics-text")),
            "{plain:?}"
        );
        assert!(
            plain.contains(&format!("user-agent: {}", USER_AGENT.to_ascii_lowercase())),
            "{plain:?}"
        );
        assert!(plain.contains(&"accept-encoding: gzip".to_string()), "{plain:?}");
        let own = request_headers(&["Accept: text/plain;version=0.0.4", "User-Agent: probe/1"]);
        assert_eq!(count(&own, "accept"), 1, "{own:?}");
        assert_eq!(count(&own, "user-agent"), 1, "{own:?}");
        assert!(
            own.contains(&"accept: text/plain;version=0.0.4".to_string()),
            "{own:?}"
        );
        assert!(own.contains(&"user-agent: probe/1".to_string()), "{own:?}");
    }

    /// A server that redirects `/metrics` to `/metrics/` (308) and wants basic auth on
    /// both: the credentials follow the redirect on the same host, as Go's client and curl
    /// keep them (they were dropped, and the scrape failed with 401).
    #[test]
    fn credentials_follow_a_redirect_on_the_same_host() {
        use std::io::{BufRead, BufReader, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let mut authorized = Vec::new();
            for _ in 0..2 {
                let (stream, _) = listener.accept().unwrap();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let (mut path, mut auth) = (String::new(), false);
                loop {
                    let mut line = String::new();
                    reader.read_line(&mut line).unwrap();
                    if line.trim().is_empty() {
                        break;
                    }
                    if let Some(rest) = line.strip_prefix("GET ") {
                        path = rest.split(' ').next().unwrap_or_default().to_string();
                    }
                    auth |= line.to_ascii_lowercase().starts_with("authorization: basic ");
                }
                authorized.push((path.clone(), auth));
                let mut stream = stream;
                let answer = match (path.as_str(), auth) {
                    ("/metrics", _) => "HTTP/1.1 308 Permanent Redirect\r\nLocation: /metrics/\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_string(),
                    (_, true) => "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nx\n".to_string(),
                    _ => "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_string(),
                };
                stream.write_all(answer.as_bytes()).unwrap();
            }
            authorized
        });
        let access = Access::new(None, false, None, &[]).unwrap();
        let client = access.client(Duration::from_secs(5), 1 << 20);
        let endpoint = Endpoint::new(&format!("http://alice:pw@{address}/metrics"));
        let opened = client.open(&endpoint);
        let authorized = server.join().unwrap();
        assert_eq!(
            authorized,
            [("/metrics".to_string(), true), ("/metrics/".to_string(), true)]
        );
        assert!(opened.is_ok(), "{:?}", opened.err());
    }

    #[test]
    fn an_error_status_shows_its_reason_and_the_start_of_the_body() {
        let status = ureq::http::StatusCode::UNAUTHORIZED;
        assert_eq!(
            status_reason(status, "bad\n token  here"),
            "HTTP 401 Unauthorized: bad token here"
        );
        let long = "x".repeat(1000);
        assert!(status_reason(status, &long).chars().count() < 160);
        assert_eq!(
            status_reason(ureq::http::StatusCode::from_u16(599).unwrap(), ""),
            "HTTP 599"
        );
    }
}
