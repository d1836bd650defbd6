//! Code shared by the examples: fetching a page over HTTP or from a file.
#![allow(dead_code)]

use std::time::Duration;

pub mod fleet;

use promrate::Format;

/// What the examples send: only the plain text format. prometheus_client (which vLLM and
/// SGLang use) answers OpenMetrics whenever the header merely mentions it, whatever its
/// q-value, and its OpenMetrics output renames `vllm:x` samples to `vllm_x`.
pub const ACCEPT: &str = "text/plain;version=0.0.4";

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
pub fn fetch(agent: &ureq::Agent, url: &str) -> Result<Page, String> {
    fetch_into(agent, url, MAX_PAGE_BYTES, String::new())
}

/// [`fetch`], reading at most `limit` bytes of body into `buffer` (cleared first): a
/// caller that reads large pages again and again hands the last one's buffer back.
pub fn fetch_into(agent: &ureq::Agent, url: &str, limit: u64, mut buffer: String) -> Result<Page, String> {
    let mut response = agent
        .get(url)
        .header("Accept", ACCEPT)
        .call()
        .map_err(|e| format!("request failed: {e}"))?;
    let status = response.status();
    if status != 200 {
        return Err(format!("HTTP {}", status.as_u16()));
    }
    let format = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .map_or(Format::PrometheusText, Format::from_content_type);
    buffer.clear();
    let mut reader = response.body_mut().with_config().limit(limit).reader();
    std::io::Read::read_to_string(&mut reader, &mut buffer).map_err(|e| {
        match e.get_ref().and_then(|inner| inner.downcast_ref::<ureq::Error>()) {
            Some(ureq::Error::BodyExceedsLimit(_)) => {
                format!("page larger than {limit} bytes (see --max-page-mib)")
            }
            _ => format!("reading body failed: {e}"),
        }
    })?;
    Ok(Page { body: buffer, format })
}

/// Reads a file, `-` for standard input, or an `http://` URL.
pub fn read_source(source: &str, agent: &ureq::Agent) -> Result<Page, String> {
    if source.starts_with("http://") || source.starts_with("https://") {
        return fetch(agent, source);
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
