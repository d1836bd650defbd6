//! The monitor at fleet scale: ending on time, and counting the pages it skipped, when the
//! simulated fleet server's pages come due faster than it reads them.

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

/// 100 servers at 100 ms for 6 s: pages come due faster than a test build reads them (a
/// page takes a few hundred milliseconds to read; the first, which makes every series,
/// about two seconds: the run is long enough to read it on a loaded machine). The run's
/// rows, and how long it took on the wall clock.
fn overloaded_run() -> (Vec<Value>, Duration) {
    let (_server, base) = fleet_server(100);
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
            "6s",
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
    let lines: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (lines, elapsed)
}

/// The run ends at `--duration` on its schedule: intervals of 100 ms up to 6 s, the last
/// one at 6 s, none after, and a summary of 6 s; an interval the run fell too far behind to
/// compute is skipped and counted, as is every page skipped (the scrapes due while the
/// worker read a page); the intervals due while a page was read leave the URL out. (How soon that is on the wall clock is the ignored test below: it
/// depends on the machine.)
#[test]
fn under_overload_the_run_ends_on_time_and_counts_the_pages_it_skipped() {
    let (lines, elapsed) = overloaded_run();
    let rows: Vec<&Value> = lines.iter().filter(|l| l.get("urls").is_some()).collect();
    let intervals: Vec<i64> = rows
        .iter()
        .map(|r| (r["elapsed_s"].as_f64().unwrap() * 10.0).round() as i64)
        .collect();
    assert!(intervals.windows(2).all(|w| w[0] < w[1]), "{intervals:?}");
    assert!(intervals.iter().all(|k| (1..=60).contains(k)), "{intervals:?}");
    assert_eq!(intervals.last(), Some(&60), "{intervals:?}");
    let summary = lines.last().unwrap();
    assert_eq!(summary["event"], "summary");
    assert_eq!(summary["elapsed_s"], 6.0, "{summary}");
    let skipped_intervals = summary["skipped_intervals"].as_u64().unwrap();
    assert_eq!(rows.len() as u64 + skipped_intervals, 60, "{summary}");
    let last = rows.last().unwrap();
    let skipped = last["urls"][0]["skipped_pages"].as_u64().unwrap();
    // Pages can still be skipped after the last row: the summary counts them all.
    assert!(summary["skipped_pages"].as_u64().unwrap() >= skipped, "{summary}");
    // A page read while an interval is due leaves the URL out of that interval (it is
    // read on its worker; the interval does not wait): the rows with figures have every
    // instance.
    let with_figures: Vec<usize> = rows
        .iter()
        .filter_map(|r| r["groups"].as_array().map(Vec::len).filter(|n| *n > 0))
        .collect();
    assert!(!with_figures.is_empty(), "no row read a page: {summary}");
    assert!(
        with_figures.iter().all(|n| *n == 100),
        "--federate groups by instance: {with_figures:?}"
    );
    println!(
        "fleet overload: 100 servers every 100 ms, ended after {elapsed:?}, {} rows, {skipped_intervals} interval(s) and {skipped} page(s) skipped",
        rows.len()
    );
}

/// The same run on the wall clock: it ends soon after its 6 s, whatever it had to skip.
#[test]
#[ignore = "times the wall clock: how soon an overloaded run ends depends on the machine and its load"]
fn under_overload_the_run_ends_soon_after_its_duration() {
    let (_, elapsed) = overloaded_run();
    // 6 s: a page being read when the run is due to end is not waited for (1 s, plus the
    // summary, at most); twice that is generous.
    assert!(
        elapsed < Duration::from_secs(12),
        "took {elapsed:?} for a 6 s run"
    );
}
