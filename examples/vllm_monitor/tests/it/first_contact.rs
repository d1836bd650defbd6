//! The commonest first mistake, a URL where nothing listens: reported at its first failure
//! with the reason in plain lines and on the dashboard (JSON: `monitor.rs`), and named
//! with its reason in the summary.

use std::net::TcpListener;
use std::process::Command;

use crate::monitor::monitor_binary;
use crate::terminal::InPty;

/// A loopback URL where nothing listens (the port was free a moment ago).
fn dead_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}/metrics", listener.local_addr().unwrap())
}

#[test]
fn plain_lines_report_a_dead_url_at_once_and_in_the_summary() {
    let url = dead_url();
    let out = Command::new(monitor_binary())
        .args([
            "--plain",
            "--url",
            &url,
            "--interval",
            "500ms",
            "--duration",
            "2s",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "no scrape succeeded");
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let fault = lines
        .iter()
        .position(|l| {
            // The reason first, then the URL.
            l.starts_with("! ")
                && l.contains(&format!(
                    "fault never answered yet: connection refused (nothing listening there?) · {url}"
                ))
        })
        .unwrap_or_else(|| panic!("no fault line:\n{text}"));
    // At its first failure: before the first interval's row.
    let first_row = lines
        .iter()
        .position(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()));
    assert!(first_row.is_none_or(|row| fault < row), "{text}");
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("! ")).count(),
        1,
        "once:\n{text}"
    );
    assert!(
        lines.contains(
            &format!("never answered: {url}: connection refused (nothing listening there?)").as_str()
        ),
        "{text}"
    );
}

#[test]
fn the_dashboard_shows_why_a_url_never_answered() {
    let url = dead_url();
    let run = InPty::start(
        30,
        100,
        &["--url", &url, "--interval", "500ms", "--duration", "60s"],
    );
    let shown = run.wait_for(|shown| shown.contains("fault") && shown.contains("Events (1)"));
    let (_, restored, raw) = run.press_and_wait(b"q");
    let port = url.trim_end_matches("/metrics").rsplit(':').next().unwrap();
    let servers = shown
        .lines()
        .find(|l| l.contains(port) && l.contains('✗'))
        .unwrap_or_else(|| panic!("no failed server line:\n{shown}"));
    assert!(servers.contains("connection refused"), "{servers}");
    assert!(
        shown
            .lines()
            .any(|l| l.contains("fault") && l.contains("never answered yet")),
        "no fault in the event log:\n{shown}"
    );
    assert!(restored, "left in the alternate screen");
    assert!(raw.contains("never answered: "), "no reason in the summary");
}
