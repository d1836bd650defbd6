//! The monitor at fleet scale: ending on time, and counting the pages it skipped, when the
//! simulated fleet server's pages come faster than it reads them.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::monitor::{monitor_binary, Reaped};

/// The simulated fleet server, and its base URL.
fn fleet_server(servers: usize) -> (Reaped, String) {
    let mut child = Command::new(monitor_binary())
        .args(["--serve", "127.0.0.1:0", "--fleet", &servers.to_string()])
        .stderr(Stdio::piped())
        .spawn()
        .expect("the fleet server starts");
    let stderr = child.stderr.take().unwrap();
    let server = Reaped(child);
    let mut line = String::new();
    BufReader::new(stderr).read_line(&mut line).unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"))
        .trim_end_matches("/federate")
        .to_string();
    (server, url)
}

#[test]
fn under_overload_the_run_ends_on_time_and_counts_the_pages_it_skipped() {
    // 300 servers at 100 ms: pages come faster than a test build reads them.
    let (_server, base) = fleet_server(300);
    let started = Instant::now();
    let output = Command::new(monitor_binary())
        .args([
            "--federate",
            &base,
            "--interval",
            "100ms",
            "--window",
            "2s",
            "--duration",
            "4s",
            "--timeout",
            "30s",
            "--json",
        ])
        .stdin(Stdio::null())
        .output()
        .expect("the monitor runs");
    let elapsed = started.elapsed();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The run ends at --duration, give or take the page being read when it is due.
    assert!(elapsed < Duration::from_secs(12), "took {elapsed:?}");
    let lines: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let rows: Vec<&Value> = lines.iter().filter(|l| l.get("urls").is_some()).collect();
    assert!(!rows.is_empty());
    let summary = lines.last().unwrap();
    assert_eq!(summary["event"], "summary");
    let last = rows.last().unwrap();
    let skipped = last["urls"][0]["skipped_pages"].as_u64().unwrap();
    // Pages can still be skipped after the last row: the summary counts them all.
    assert!(summary["skipped_pages"].as_u64().unwrap() >= skipped, "{summary}");
    let groups = last["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 300, "--federate groups by instance");
    println!(
        "fleet overload: 300 servers every 100 ms, ended after {elapsed:?}, {} rows, {skipped} page(s) skipped",
        rows.len()
    );
}
