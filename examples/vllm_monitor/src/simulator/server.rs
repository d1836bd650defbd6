//! The simulated server's HTTP side: a page rendered per request at `/metrics` (and at
//! `/federate`, for the `--fleet` page), on a background thread.

use std::net::SocketAddr;
use std::sync::Arc;

use promrate::Format;

use super::model::Simulation;
use crate::engines::Engine;

/// What the simulated server answers in (`--serve-as`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ServeAs {
    /// The text format 0.0.4, whatever the Accept header asks (as vLLM's prometheus_client
    /// did before 0.26).
    #[default]
    Text,
    /// OpenMetrics 2.0, whatever the Accept header asks: the page as a 2.0 exporter writes
    /// it (`st@`, histograms as composite values).
    #[value(name = "openmetrics-2.0")]
    OpenMetrics2,
    /// OpenMetrics 2.0 when the Accept header asks for `version=2.0.0` at least as much as
    /// for the text format, else the text format 0.0.4.
    Negotiate,
}

impl ServeAs {
    /// Whether a request with this Accept header gets OpenMetrics 2.0.
    pub fn openmetrics2_for(self, accept: Option<&str>) -> bool {
        match self {
            ServeAs::Text => false,
            ServeAs::OpenMetrics2 => true,
            ServeAs::Negotiate => {
                let (om2, text) = accept.map_or((0.0, 1.0), preferences);
                om2 > 0.0 && om2 >= text
            }
        }
    }
}

/// The highest q an Accept header gives OpenMetrics 2.0.0 and the text format, each media
/// range read as a Content-Type is (`Format::from_content_type`: `text/plain` and `*/*`
/// are text, OpenMetrics 1.0 neither).
fn preferences(accept: &str) -> (f64, f64) {
    let (mut om2, mut text) = (0.0f64, 0.0f64);
    for range in accept.split(',') {
        let q = range
            .split(';')
            .filter_map(|param| param.trim().strip_prefix("q="))
            .find_map(|q| q.trim().parse().ok())
            .unwrap_or(1.0);
        match Format::from_content_type(range) {
            Format::OpenMetrics2 => om2 = om2.max(q),
            Format::PrometheusText => text = text.max(q),
            _ => {}
        }
    }
    (om2, text)
}

/// Serves the simulation's page at `/metrics` on `addr` from a background thread; returns
/// the bound address (port 0 picks a free one).
pub fn serve(
    addr: &str,
    simulation: Arc<Simulation>,
    engine: &'static Engine,
    serve_as: ServeAs,
) -> Result<SocketAddr, String> {
    serve_page(addr, serve_as, move || simulation.render_as(engine))
}

/// Serves what `render` writes (the text format) at `/metrics` and at `/federate`
/// (whatever the query), converted to OpenMetrics 2.0 where `serve_as` says.
pub fn serve_page(
    addr: &str,
    serve_as: ServeAs,
    render: impl Fn() -> String + Send + 'static,
) -> Result<SocketAddr, String> {
    let server = tiny_http::Server::http(addr).map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let bound = server
        .server_addr()
        .to_ip()
        .ok_or_else(|| format!("{addr} is not an IP address"))?;
    std::thread::spawn(move || {
        let header = |value: &[u8]| {
            tiny_http::Header::from_bytes(&b"Content-Type"[..], value).expect("a valid header")
        };
        let text = header(b"text/plain; version=0.0.4; charset=utf-8");
        let openmetrics2 = header(b"application/openmetrics-text; version=2.0.0; charset=utf-8");
        for request in server.incoming_requests() {
            let path = request.url().split('?').next().unwrap_or("");
            let accept = request
                .headers()
                .iter()
                .find(|h| h.field.equiv("Accept"))
                .map(|h| h.value.as_str().to_string());
            let response = if path == "/metrics" || path == "/federate" {
                let page = render();
                if serve_as.openmetrics2_for(accept.as_deref()) {
                    match super::openmetrics2::from_text(&page) {
                        Ok(page) => tiny_http::Response::from_string(page).with_header(openmetrics2.clone()),
                        Err(e) => tiny_http::Response::from_string(format!("{e}\n")).with_status_code(500),
                    }
                } else {
                    tiny_http::Response::from_string(page).with_header(text.clone())
                }
            } else {
                tiny_http::Response::from_string("not found; try /metrics\n").with_status_code(404)
            };
            let _ = request.respond(response);
        }
    });
    Ok(bound)
}

#[cfg(test)]
mod tests {
    use super::ServeAs;

    /// `negotiate` answers OpenMetrics 2.0 to a scraper that prefers it (the monitor,
    /// client_java's order) and the text format to one that asks for text or anything.
    #[test]
    fn negotiation_follows_the_accept_header() {
        let om2 = |accept: Option<&str>| ServeAs::Negotiate.openmetrics2_for(accept);
        assert!(om2(Some(crate::http::ACCEPT)));
        assert!(om2(Some("application/openmetrics-text; version=2.0.0")));
        assert!(om2(Some(
            "text/plain;q=0.5, application/openmetrics-text;version=2.0.0;q=0.5"
        )));
        // Prometheus 3's default order: OpenMetrics 1.0 first, which is not served.
        assert!(!om2(Some(
            "application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.2,*/*;q=0.1"
        )));
        assert!(!om2(Some("*/*")));
        assert!(!om2(None));
        assert!(!om2(Some(
            "application/openmetrics-text;version=2.0.0;q=0.1,text/plain;q=0.2"
        )));
        assert!(!om2(Some("application/openmetrics-text;version=2.0.0;q=0")));
        assert!(!ServeAs::Text.openmetrics2_for(Some(crate::http::ACCEPT)));
        assert!(ServeAs::OpenMetrics2.openmetrics2_for(Some("text/plain")));
    }
}
