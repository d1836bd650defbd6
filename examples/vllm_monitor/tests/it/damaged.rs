//! Recordings with times or ticks that cannot be right (another scraper's clock at the
//! epoch or in year 9999, a scrape an hour back, a tick of 10^15) or a real pause of a
//! month: a replay costs what the recording holds, never what its times say. A line that
//! cannot be right is skipped and said, with its number, in plain output and as a
//! `warning` event in JSON; a pause is skipped, not computed interval by interval.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{json, Value};

use crate::monitor::{live_until, monitor_binary, run_monitor, run_monitor_lines};
use crate::recorded::{intervals, ORIGIN_US};

const URL: &str = "http://gpu1:8000/metrics";

/// Unix seconds `t` seconds into the recording.
fn unix(t: f64) -> f64 {
    ORIGIN_US as f64 / 1e6 + t
}

/// A vLLM page `t` seconds into the recording: 1,000 tokens a second since an hour before.
fn page(t: f64) -> String {
    format!(
        "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds {}\n\
         # TYPE vllm:generation_tokens_total counter\n\
         vllm:generation_tokens_total{{model_name=\"m\"}} {}\n\
         # TYPE vllm:num_requests_running gauge\n\
         vllm:num_requests_running{{model_name=\"m\"}} 10\n",
        unix(-3_600.0),
        1_000.0 * (t + 3_600.0)
    )
}

/// Another scraper's line: the page of `t` seconds in, stamped `start` (Unix seconds).
fn scrape(start: f64, t: f64) -> Value {
    json!({"url": URL, "start": start, "end": start + 0.01, "status": 200,
           "content_type": "text/plain; version=0.0.4", "body": page(t)})
}

/// A file of `lines`, removed when dropped.
struct File(PathBuf);

impl File {
    fn new(name: &str, lines: &[String]) -> File {
        let path = std::env::temp_dir().join(format!("vllm-monitor-damaged-{}-{name}", std::process::id()));
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        File(path)
    }

    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for File {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The replay's JSON objects; it must succeed.
fn replay(file: &File, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["--replay", file.path(), "--json"];
    all.extend_from_slice(args);
    let (rows, status) = run_monitor(&all);
    assert!(status.success(), "{args:?}: {status}");
    rows
}

fn warnings(rows: &[Value]) -> Vec<&str> {
    rows.iter()
        .filter(|r| r["event"] == "warning")
        .map(|r| r["message"].as_str().unwrap())
        .collect()
}

fn summary(rows: &[Value]) -> &Value {
    rows.iter().find(|r| r["event"] == "summary").expect("a summary")
}

/// Another scraper's 20 scrapes a second apart, with the 6th stamped in year 9999, the
/// 11th an hour back, a failed scrape stamped at the epoch and a line that is not JSON:
/// each is a bad line, said with its number (plain and JSON alike); the others replay as
/// they would alone, from the first scrape (not from 1970 nor from an hour before), and
/// the rate is the server's.
#[test]
fn times_far_off_are_bad_lines_said_in_plain_and_json() {
    let mut lines: Vec<String> = (0..20)
        .map(|i| scrape(unix(i as f64), i as f64).to_string())
        .collect();
    lines[5] = scrape(253_402_300_000.0, 5.0).to_string();
    lines[10] = scrape(unix(10.0 - 3_600.0), 10.0).to_string();
    lines.insert(
        15,
        json!({"url": URL, "start": 0, "end": 0, "error": "connection refused"}).to_string(),
    );
    lines.insert(
        18,
        r#"{"url": "http://gpu1:8000/metrics", "start": oops"#.to_string(),
    );
    let file = File::new("times.jsonl", &lines);
    let rows = replay(&file, &[]);
    let said = warnings(&rows);
    let numbers: Vec<&str> = said.iter().map(|m| m.split(':').next().unwrap()).collect();
    assert_eq!(numbers, ["line 6", "line 11", "line 16", "line 19"], "{said:?}");
    assert!(said.iter().all(|m| m.ends_with("(skipped)")), "{said:?}");
    assert!(said[3].contains("not JSON"), "{said:?}");
    let rows_of = intervals(&rows);
    assert!((18..=21).contains(&rows_of.len()), "{} rows", rows_of.len());
    assert!(
        rows_of[0]["t"]
            .as_str()
            .unwrap()
            .starts_with("2027-01-15T08:00:0"),
        "{}",
        rows_of[0]
    );
    assert!(
        summary(&rows)["elapsed_s"].as_f64().unwrap() <= 21.0,
        "{}",
        summary(&rows)
    );
    let last = rows_of.last().unwrap();
    let rate = last["generation_tokens_per_s"]["window"].as_f64().unwrap();
    assert!((rate - 1_000.0).abs() < 1.0, "{rate}");
    // Plain output says the same lines (wrapped: read as one text).
    let (plain, status) = run_monitor_lines(&["--replay", file.path(), "--plain"]);
    assert!(status.success());
    let warned = plain
        .iter()
        .filter(|l| l.starts_with('!') && l.contains(" warning "))
        .count();
    let text = plain.join(" ");
    assert_eq!((warned, text.matches("(skipped)").count()), (4, 4), "{plain:#?}");
    for number in numbers {
        assert!(text.contains(&format!("{number}:")), "{number} not in {plain:#?}");
    }
}

/// The monitor's own recording with one page's tick at 10^15, and one whose last line
/// says its run computed 10^15 intervals: each is a bad line, and the replay computes
/// the run's 20 intervals, not a quadrillion.
#[test]
fn a_tick_far_beyond_the_others_is_a_bad_line() {
    let header = json!({"format": "vllm_monitor recording", "version": 1, "started": unix(0.0),
                        "interval_s": 1.0, "window_s": 10.0, "urls": [URL]});
    let run = |tick_of_6th: u64, ticks: u64| {
        let mut lines = vec![header.to_string()];
        for i in 0..20u64 {
            let mut line = scrape(unix(i as f64), i as f64);
            line["tick"] = (if i == 5 { tick_of_6th } else { i }).into();
            lines.push(line.to_string());
        }
        lines.push(json!({"end_of_run": true, "ticks": ticks}).to_string());
        let file = File::new("ticks.jsonl", &lines);
        replay(&file, &[])
    };
    let rows = run(10u64.pow(15), 20);
    assert_eq!(intervals(&rows).len(), 20);
    let said = warnings(&rows);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].starts_with("line 7: \"tick\" (1000000000000000)"),
        "{said:?}"
    );
    let rows = run(5, 10u64.pow(15));
    assert!(intervals(&rows).len() <= 21, "{} rows", intervals(&rows).len());
    let said = warnings(&rows);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].starts_with("line 22: \"ticks\" (1000000000000000)"),
        "{said:?}"
    );
    assert!(summary(&rows)["elapsed_s"].as_f64().unwrap() <= 21.0);
}

/// A recording with a month's pause (a job stopped, then resumed) is no bad line: every
/// page is read, the month's intervals that would show nothing new are skipped (counted
/// in the summary) and said once, and the rows after the pause have the server's rate.
#[test]
fn a_pause_is_skipped_and_said_once_not_computed_interval_by_interval() {
    let month = 30.0 * 86_400.0;
    let lines: Vec<String> = (0..20)
        .map(|i| {
            let t = i as f64 + if i >= 10 { month } else { 0.0 };
            scrape(unix(t), t).to_string()
        })
        .collect();
    let file = File::new("pause.jsonl", &lines);
    let rows = replay(&file, &[]);
    let rows_of = intervals(&rows);
    assert!(rows_of.len() < 40, "{} rows", rows_of.len());
    let said = warnings(&rows);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].starts_with("before line 11: no page for 720h"),
        "{said:?}"
    );
    let skipped = summary(&rows)["skipped_intervals"].as_u64().unwrap();
    assert!(skipped > 2_500_000, "{skipped}");
    let elapsed = summary(&rows)["elapsed_s"].as_f64().unwrap();
    assert_eq!((rows_of.len() as u64 + skipped) as f64, elapsed);
    let last = rows_of.last().unwrap();
    assert!(last["elapsed_s"].as_f64().unwrap() >= month, "{last}");
    let rate = last["generation_tokens_per_s"]["window"].as_f64().unwrap();
    assert!((rate - 1_000.0).abs() < 1.0, "{rate}");
}

/// A replay at the recorded speed waits through a pause as the recording has it, and a
/// signal ends the wait at once: the summary, and exit status 0.
#[test]
fn a_signal_ends_a_replay_waiting_through_a_pause() {
    let lines: Vec<String> = (0..20)
        .map(|i| {
            let t = i as f64 * 0.1 + if i >= 10 { 86_400.0 } else { 0.0 };
            scrape(unix(t), t).to_string()
        })
        .collect();
    let file = File::new("pause-paced.jsonl", &lines);
    // The duration bounds the test if the pause were computed interval by interval.
    let args = [
        "--replay",
        file.path(),
        "--json",
        "--speed",
        "1",
        "--duration",
        "10m",
    ];
    let live = live_until(&args, |r| r["event"] == "warning");
    assert!(
        live.done()["message"].as_str().unwrap().contains("no page for"),
        "{}",
        live.done()
    );
    assert!(live.status.success(), "{}: {}", live.status, live.stderr);
    assert_eq!(live.rows.last().unwrap()["event"], "summary");
}

/// A header's interval under `--interval`'s 100 ms, or a duration that is no duration, is
/// refused as the command line refuses it: exit status 1, and why (not a panic).
#[test]
fn header_values_out_of_the_command_lines_range_are_refused() {
    let cases = [
        (
            "interval_s",
            json!(1e-6),
            "\"interval_s\" (0.000001) is under 100ms",
        ),
        (
            "duration_s",
            json!(-1.0),
            "\"duration_s\" (-1.0) is not a number of seconds",
        ),
    ];
    for (field, value, says) in cases {
        let mut header = json!({"format": "vllm_monitor recording", "version": 1, "started": unix(0.0),
                                "interval_s": 1.0, "window_s": 10.0, "urls": [URL]});
        header[field] = value;
        let mut line = scrape(unix(0.0), 0.0);
        line["tick"] = 0.into();
        let file = File::new("header.jsonl", &[header.to_string(), line.to_string()]);
        let output = Command::new(monitor_binary())
            .args(["--replay", file.path(), "--json"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{field}: {stderr}");
        assert!(stderr.contains(says), "{field}: {stderr}");
        assert!(output.stdout.is_empty(), "{field}");
    }
}

/// A recording line longer than the pages `--max-page-mib` allows (twice that, as JSON,
/// and 1 MiB): skipped as it is read, never held whole (a 500 MB line was held about three
/// times over), and said with its number; the others replay as they would alone.
#[test]
fn a_line_longer_than_the_page_limit_allows_is_skipped_and_said() {
    let mut lines: Vec<String> = (0..20)
        .map(|i| scrape(unix(i as f64), i as f64).to_string())
        .collect();
    let mut long = scrape(unix(7.0), 7.0);
    long["body"] = json!(format!("# {}\n{}", "x".repeat(4 << 20), page(7.0)));
    lines[7] = long.to_string();
    let file = File::new("long.jsonl", &lines);
    let rows = replay(&file, &["--max-page-mib", "1"]);
    let said = warnings(&rows);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].starts_with("line 8:") && said[0].contains("longer than the 3 MiB a line may have"),
        "{said:?}"
    );
    let rows_of = intervals(&rows);
    let rate = rows_of.last().unwrap()["generation_tokens_per_s"]["window"]
        .as_f64()
        .unwrap();
    assert!((rate - 1_000.0).abs() < 1.0, "{rate}");
    // Within the default limit, the same line is read.
    assert!(warnings(&replay(&file, &[])).is_empty());
}
