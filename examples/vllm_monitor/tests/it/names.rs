//! Names stay whole in plain mode: on a 1,000-server federation every instance's row has a
//! label of its own that names it, and two URLs that differ in one character never print
//! the same label.

use std::collections::BTreeSet;
use std::time::Duration;

use vllm_monitor::fleet::Fleet;

use crate::recorded::{Grid, Recording, Source, ORIGIN_US};

/// A small vLLM page for the fleet to repeat: a counter and a gauge (a fleet of the full
/// page is 185,000 series a scrape, which a test build reads slowly and checks nothing more).
const TEMPLATE: &str = "\
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine=\"0\",model_name=\"m\"} 1e6
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 100
";

/// Four 2 s scrapes of a `/federate` page of `servers` instances of [`TEMPLATE`].
fn federation(name: &str, servers: usize) -> Recording {
    let fleet = Fleet::new(TEMPLATE, servers, ORIGIN_US / 1000);
    let grid = Grid::new(Duration::from_secs(2), 4).window(Duration::from_secs(4));
    let page = |t: f64| fleet.page(ORIGIN_US / 1000 + (t * 1000.0) as i64);
    let sources = [Source::new("http://127.0.0.1:9091/federate", page)];
    Recording::make(name, grid, &sources)
}

/// The group rows after each interval's total row: their labels, interval by interval.
fn group_labels(lines: &[String]) -> Vec<Vec<String>> {
    let mut intervals: Vec<Vec<String>> = Vec::new();
    for line in lines {
        let first = line.split_whitespace().next().unwrap_or("");
        if line.starts_with('!') || line.contains("gen/s") || first.is_empty() {
            continue;
        }
        if first.ends_with('s') && first.trim_end_matches('s').parse::<f64>().is_ok() {
            intervals.push(Vec::new());
        } else if let Some(rows) = intervals.last_mut() {
            if line.starts_with(' ') {
                rows.push(first.to_string());
            }
        }
    }
    intervals
}

#[test]
fn a_thousand_server_federation_prints_a_distinct_label_per_instance() {
    const SERVERS: usize = 1000;
    let recording = federation("fleet-1000.jsonl", SERVERS);
    // Every instance a row (50 by default: see the test below).
    let lines = recording.plain(&["--by", "instance", "--max-groups", "1000"]);
    assert!(lines.iter().all(|l| l.chars().count() <= 120));
    let intervals = group_labels(&lines);
    assert!(intervals.len() >= 3, "{}", lines.join("\n"));
    let instances: BTreeSet<String> = (0..SERVERS).map(Fleet::instance).collect();
    for rows in &intervals {
        assert_eq!(rows.len(), SERVERS);
        let distinct: BTreeSet<&String> = rows.iter().collect();
        assert_eq!(distinct.len(), SERVERS, "two instances share a label");
        // Each label is its instance's name without the port all share, so it names it.
        let named: BTreeSet<String> = rows.iter().map(|l| format!("{l}:8000")).collect();
        assert_eq!(named, instances);
    }
}

/// By default the 50 busiest instances of a 1,000-server federation are rows, and the
/// 950 others one row that says so (`+950`), summed: the screen has a bound, JSON has all.
#[test]
fn a_thousand_server_federation_shows_50_rows_and_the_others_summed() {
    const SERVERS: usize = 1000;
    let recording = federation("fleet-1000-top.jsonl", SERVERS);
    let lines = recording.plain(&["--by", "instance"]);
    let intervals = group_labels(&lines);
    assert!(intervals.len() >= 3, "{}", lines.join("\n"));
    for rows in &intervals {
        assert_eq!(rows.len(), 51, "{rows:?}");
        assert_eq!(rows.last().map(String::as_str), Some("+950"), "{rows:?}");
    }
    let said = lines
        .iter()
        .filter(|l| l.starts_with("! +950: the 950 other instance values summed"));
    assert_eq!(said.count(), 1, "{}", lines.join("\n"));
}

/// Two servers whose URLs differ in one character (in the host, in the port, in the
/// path): `--by url` rows never share a label, nor do their event lines' URLs.
#[test]
fn two_urls_one_character_apart_print_distinct_labels() {
    let page = |t: f64| {
        format!(
            "# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{{engine=\"0\"}} {}\n",
            (1000.0 * t).round()
        )
    };
    for (a, b) in [
        (
            "http://gpu-node-17.cluster.example.com:8000/metrics",
            "http://gpu-node-18.cluster.example.com:8000/metrics",
        ),
        (
            "http://gpu1.example.com:8000/metrics",
            "http://gpu1.example.com:8001/metrics",
        ),
        ("http://gpu1:8000/v1/metrics", "http://gpu1:8000/v2/metrics"),
    ] {
        let grid = Grid::new(Duration::from_secs(1), 4).window(Duration::from_secs(2));
        let recording = Recording::make(
            "one-apart.jsonl",
            grid,
            &[Source::new(a, page), Source::new(b, page)],
        );
        let lines = recording.plain(&["--by", "url"]);
        let intervals = group_labels(&lines);
        assert!(!intervals.is_empty(), "{}", lines.join("\n"));
        for rows in &intervals {
            assert_eq!(rows.len(), 2, "{}", lines.join("\n"));
            assert_ne!(rows[0], rows[1], "{a} and {b}:\n{}", lines.join("\n"));
        }
    }
}

/// `--by` a label no series has (a misspelling): a warning event that names the labels
/// the pages do have, in `--json` too (notes are not in it), once.
#[test]
fn a_by_label_no_series_has_is_a_warning_that_names_the_labels_there() {
    let recording = federation("by-pod.jsonl", 3);
    let rows = recording.replay(&["--json", "--by", "pod"]);
    let warnings: Vec<&str> = rows
        .iter()
        .filter(|r| r["event"] == "warning")
        .filter_map(|r| r["message"].as_str())
        .collect();
    let said: Vec<&&str> = warnings.iter().filter(|m| m.starts_with("--by pod:")).collect();
    assert_eq!(said.len(), 1, "{warnings:?}");
    assert!(
        said[0].contains("(the labels there are: engine, instance, job, model_name)"),
        "{}",
        said[0]
    );
    // The rows have no group to show, as the warning says.
    let intervals = rows.iter().filter(|r| r.get("urls").is_some());
    assert!(intervals.clone().count() >= 3);
    assert!(intervals
        .clone()
        .all(|r| r["groups"].as_array().is_some_and(Vec::is_empty)));
}
