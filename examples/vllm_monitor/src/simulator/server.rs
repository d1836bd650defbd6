//! The simulated server's HTTP side: a page rendered per request at `/metrics` (and at
//! `/federate`, for the `--fleet` page), on a background thread.

use std::net::SocketAddr;
use std::sync::Arc;

use super::model::Simulation;
use crate::engines::Engine;

/// Serves the simulation's page at `/metrics` on `addr` from a background thread; returns
/// the bound address (port 0 picks a free one).
pub fn serve(addr: &str, simulation: Arc<Simulation>, engine: &'static Engine) -> Result<SocketAddr, String> {
    serve_page(addr, move || simulation.render_as(engine))
}

/// Serves what `render` writes at `/metrics` and at `/federate` (whatever the query).
pub fn serve_page(addr: &str, render: impl Fn() -> String + Send + 'static) -> Result<SocketAddr, String> {
    let server = tiny_http::Server::http(addr).map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let bound = server
        .server_addr()
        .to_ip()
        .ok_or_else(|| format!("{addr} is not an IP address"))?;
    std::thread::spawn(move || {
        let content_type = tiny_http::Header::from_bytes(
            &b"Content-Type"[..],
            &b"text/plain; version=0.0.4; charset=utf-8"[..],
        )
        .expect("a valid header");
        for request in server.incoming_requests() {
            let path = request.url().split('?').next().unwrap_or("");
            let response = if path == "/metrics" || path == "/federate" {
                tiny_http::Response::from_string(render()).with_header(content_type.clone())
            } else {
                tiny_http::Response::from_string("not found; try /metrics\n").with_status_code(404)
            };
            let _ = request.respond(response);
        }
    });
    Ok(bound)
}
