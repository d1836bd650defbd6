//! promcat's input: a page over HTTP or from a file. (The monitor, a crate of its own,
//! has its own client with TLS and authentication: examples/vllm_monitor/src/http.rs.)

use std::time::Duration;

use promrate::Format;

/// What the examples send unless asked for a format: only the plain text format.
/// prometheus_client (which vLLM and SGLang use) answers OpenMetrics whenever the header
/// merely mentions it, whatever its q-value, and its OpenMetrics output renames `vllm:x`
/// samples to `vllm_x`.
pub const ACCEPT: &str = "text/plain;version=0.0.4";

/// The Accept header that asks for `format` (OpenMetrics of that version, or text).
pub fn accept_for(format: Option<Format>) -> &'static str {
    match format {
        Some(Format::OpenMetrics2) => "application/openmetrics-text;version=2.0.0",
        Some(Format::OpenMetrics) => "application/openmetrics-text;version=1.0.0",
        _ => ACCEPT,
    }
}

/// A fetched page and the format its Content-Type announced.
pub struct Page {
    pub body: String,
    pub format: Format,
}

/// An HTTP agent with one overall deadline per request and non-2xx answers as values.
pub fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .build()
        .into()
}

/// The largest page read by default: a `/federate` page of 10,000 vLLM servers is about
/// 600 MB.
pub const MAX_PAGE_BYTES: u64 = 1 << 30;

/// GETs `url` (at most [`MAX_PAGE_BYTES`]); a non-200 status, a transport error or a body
/// that is not UTF-8 is an error message fit to print.
pub fn fetch(agent: &ureq::Agent, url: &str, accept: &str) -> Result<Page, String> {
    let mut response = agent
        .get(url)
        .header("Accept", accept)
        .call()
        .map_err(|e| format!("request failed: {e}"))?;
    if response.status() != 200 {
        return Err(format!("HTTP {}", response.status().as_u16()));
    }
    let format = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .map_or(Format::PrometheusText, Format::from_content_type);
    let body = response
        .body_mut()
        .with_config()
        .limit(MAX_PAGE_BYTES)
        .read_to_string()
        .map_err(|e| format!("reading body failed: {e}"))?;
    Ok(Page { body, format })
}

/// Reads a file, `-` for standard input, or an `http://` URL (asked for with `accept`).
pub fn read_source(source: &str, agent: &ureq::Agent, accept: &str) -> Result<Page, String> {
    if source.starts_with("http://") || source.starts_with("https://") {
        return fetch(agent, source, accept);
    }
    let body = if source == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text).map_err(|e| format!("stdin: {e}"))?;
        text
    } else {
        std::fs::read_to_string(source).map_err(|e| format!("{source}: {e}"))?
    };
    // A file says nothing about its format (a `# EOF` line is also a valid text comment).
    Ok(Page {
        body,
        format: Format::PrometheusText,
    })
}
