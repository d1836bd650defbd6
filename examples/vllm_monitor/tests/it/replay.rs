//! Real servers, replayed: the recordings of a real vLLM 0.32 and a real llama.cpp, each
//! restarted mid-run, with what their client saw (`tests/data/realservers`, origins in
//! `tests/data/SOURCES.md`). Every figure of every row is checked against the client's
//! count over the very span the row says it covers. Then the monitor's own recordings:
//! a live run and its replay compute the same rows, whatever the compression.

use std::path::{Path, PathBuf};
use std::process::Command;

use chrono::DateTime;
use serde_json::Value;

use crate::monitor::{monitor_binary, run_monitor};
use crate::truth::Truth;

fn recording(name: &str) -> (PathBuf, Truth) {
    let dir = crate::data::dir().join("realservers").join(name);
    (
        dir.join("scrapes.jsonl.gz"),
        Truth::load(&dir.join("truth.tsv.gz")),
    )
}

/// The objects `vllm_monitor --replay FILE args...` prints.
fn replay(file: &Path, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["--replay", file.to_str().unwrap()];
    all.extend_from_slice(args);
    let (rows, status) = run_monitor(&all);
    assert!(
        status.success(),
        "--replay {} with {args:?}: {status}",
        file.display()
    );
    rows
}

fn unix(stamp: &Value) -> f64 {
    let text = stamp.as_str().unwrap_or_else(|| panic!("not a time: {stamp}"));
    DateTime::parse_from_rfc3339(text).unwrap().timestamp_micros() as f64 / 1e6
}

/// A full-window row: its window's start and end (Unix seconds), and the row.
fn full_windows(rows: &[Value]) -> Vec<(f64, f64, &Value)> {
    rows.iter()
        .filter(|r| r.get("urls").is_some())
        .filter(|r| r["window"]["shortened"].is_null() && !r["window"]["span_s"].is_null())
        .map(|r| (unix(&r["window"]["start"]), unix(&r["window"]["end"]), r))
        .collect()
}

fn relative(got: f64, want: f64) -> f64 {
    (got - want).abs() / want
}

/// The generated tokens' rate weighted as an EWMA of time constant `tau` weighs it,
/// ending at `end`: what the EWMA estimates (from 100 ms bins of the truth).
fn exponential_truth(truth: &Truth, end: f64, tau: f64) -> f64 {
    (0..(8.0 * tau * 10.0) as usize)
        .map(|i| {
            let t = end - i as f64 * 0.1;
            truth.between(t - 0.1, t).tokens * (-(end - t + 0.05) / tau).exp()
        })
        .sum::<f64>()
        / tau
}

#[test]
fn a_real_vllm_replayed_is_within_one_percent_of_its_clients_count_through_a_restart() {
    let (file, truth) = recording("vllm-0.32-cpu-restart");
    let run: serde_json::Map<String, Value> =
        serde_json::from_str(&crate::data::read(&file.with_file_name("run.json"))).unwrap();
    let events = &run["events_unix_s"];
    let (stop, up_again) = (
        events["stop"].as_f64().unwrap(),
        events["up_again"].as_f64().unwrap(),
    );
    let warm_end = run["load"]["warm_end"].as_f64().unwrap();
    let client_started = run["load"]["client_started"].as_f64().unwrap();
    let rows = replay(&file, &["--json", "--window", "10s"]);
    let intervals: Vec<&Value> = rows.iter().filter(|r| r.get("urls").is_some()).collect();
    // No figure over a stretched span: at most the window and one interval, ever.
    for row in &intervals {
        if let Some(span) = row["window"]["span_s"].as_f64() {
            assert!(span <= 11.0 + 1e-9, "a {span} s span under a 10 s window: {row}");
        }
    }
    let (mut before, mut after) = (0, 0);
    let mut worst = [0.0f64; 4];
    let mut steady = 0;
    for (start, end, row) in full_windows(&rows) {
        assert!(
            end < stop || start > up_again,
            "a full window across the outage: {row}"
        );
        let seen = truth.between(start, end);
        let span = end - start;
        if seen.tokens < 1000.0 {
            continue; // Before the load began.
        }
        let rate = row["generation_tokens_per_s"]["window"].as_f64().unwrap();
        let error = relative(rate, seen.tokens / span);
        assert!(
            error <= 0.01,
            "{rate} tok/s against {} at {row}",
            seen.tokens / span
        );
        worst[0] = worst[0].max(error);
        let requests = row["requests_finished_per_s"]["total"].as_f64().unwrap();
        let error = relative(requests, seen.requests / span);
        assert!(error <= 0.02, "{requests} req/s against {}", seen.requests / span);
        worst[1] = worst[1].max(error);
        // Every request of the steady load asks for 128 tokens and gets them.
        if start > warm_end && (start > up_again + 5.0 || end < stop) {
            let per_request = row["mean_generation_tokens_per_request"].as_f64().unwrap();
            assert_eq!(per_request, 128.0, "{row}");
        }
        if end < stop {
            before += 1;
        } else {
            after += 1;
        }
        // The EWMA is the exponentially weighted rate: checked 5 time constants after the
        // data began (the load, or the recovery: no blend across the outage), when what it
        // started from weighs under 1%.
        let began = if end < stop { client_started } else { up_again };
        let ewma = row["generation_tokens_per_s"]["ewma"].as_f64().unwrap();
        if end > began + 50.0 {
            let error = relative(ewma, exponential_truth(&truth, end, 10.0));
            assert!(error <= 0.02, "EWMA {ewma} at {row}");
            worst[2] = worst[2].max(error);
        }
        // Where the rate is steady (the last 10 s and the last 30 s agree within 3%, 4 time
        // constants after the data began), the EWMA is within 5% of the last window's count.
        let last_30 = truth.between(end - 30.0, end).tokens / 30.0;
        let last_10 = seen.tokens / span;
        if end > began + 40.0 && relative(last_10, last_30) <= 0.03 {
            let error = relative(ewma, last_10);
            assert!(error <= 0.05, "EWMA {ewma} on a steady stretch: {row}");
            steady += 1;
            worst[3] = worst[3].max(error);
        }
    }
    assert!(steady >= 4, "{steady} rows on steady stretches");
    assert!(
        before >= 50 && after >= 50,
        "{before} full windows before the restart, {after} after"
    );
    let restarts: Vec<&Value> = rows.iter().filter(|r| r["event"] == "restart").collect();
    assert_eq!(restarts.len(), 1, "{restarts:?}");
    let restart_at = unix(&restarts[0]["t"]);
    assert!(
        restart_at > up_again - 1.0 && restart_at < up_again + 5.0,
        "{restarts:?}"
    );
    println!(
        "real vLLM 0.32 replayed: {before} full windows before the restart, {after} after; worst error \
         against the client: tok/s {:.2}%, req/s {:.2}%, EWMA {:.2}% (against the exponentially weighted count), \
         {:.2}% on {steady} rows of steady stretches",
        worst[0] * 100.0,
        worst[1] * 100.0,
        worst[2] * 100.0,
        worst[3] * 100.0
    );
}

#[test]
fn a_real_llamacpp_replayed_counts_its_tokens_exactly_and_never_across_its_outage() {
    let (file, truth) = recording("llamacpp-b11434-cpu-restart");
    let rows = replay(&file, &["--json", "--window", "10s"]);
    let windows = full_windows(&rows);
    let outage: Vec<f64> = rows
        .iter()
        .filter(|r| r["event"] == "fault" || r["event"] == "recovered")
        .map(|r| unix(&r["t"]))
        .collect();
    assert_eq!(outage.len(), 2, "one outage: {outage:?}");
    let mut worst = 0.0f64;
    for &(start, end, row) in &windows {
        assert!(
            end < outage[0] || start >= outage[1],
            "a window across the outage: {row}"
        );
        // llama.cpp counts a request's tokens as it answers: between two scrapes the
        // counter and the client agree, up to a request answered as the scrape was read.
        let want = truth.between(start, end).tokens / (end - start);
        let rate = row["generation_tokens_per_s"]["window"].as_f64().unwrap();
        let error = relative(rate, want);
        assert!(error <= 0.01, "{rate} against {want}: {row}");
        worst = worst.max(error);
        assert!(
            row["generation_tokens_per_s"]["ewma"].is_null(),
            "no EWMA of a sawtooth"
        );
    }
    assert!(windows.len() >= 60, "{} full windows", windows.len());
    // After the outage, the first rows say what their shorter window covers.
    let resumed: Vec<&Value> = rows
        .iter()
        .filter(|r| r["window"]["shortened"] == "since scrapes resumed")
        .collect();
    assert!(!resumed.is_empty());
    for row in resumed {
        let span = row["window"]["span_s"].as_f64().unwrap();
        assert!(span < 10.0 && unix(&row["window"]["start"]) >= outage[1], "{row}");
    }
    println!(
        "real llama.cpp replayed: {} full windows, worst tok/s error {:.2}%",
        windows.len(),
        worst * 100.0
    );
}

/// The rows with what differs between a live run and its replay taken out: what the live
/// run skipped because it fell behind (pages are not in the recording; a replay computes
/// every interval).
fn comparable(rows: &[Value]) -> Vec<String> {
    rows.iter()
        .filter(|r| r["event"] != "start")
        .map(|r| {
            let mut r = r.clone();
            if let Some(urls) = r.get_mut("urls").and_then(Value::as_array_mut) {
                for url in urls {
                    url.as_object_mut().unwrap().remove("skipped_pages");
                }
            }
            // What the live run skipped to keep up: pages are not recorded, intervals are
            // computed on replay.
            r.as_object_mut().unwrap().remove("skipped_pages");
            r.as_object_mut().unwrap().remove("skipped_intervals");
            r.to_string()
        })
        .collect()
}

/// A row of schema 1 as schema 2 writes it: the number, and no `window_span_s` (the
/// interval's `window.span_s` says the same), at any depth; nothing else changed.
fn as_schema_2(row: Value) -> Value {
    match row {
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .filter(|(k, _)| k != "window_span_s")
                .map(|(k, v)| match (k.as_str(), &v) {
                    ("schema", Value::Number(n)) if n.as_u64() == Some(1) => (k, Value::from(2)),
                    _ => (k, as_schema_2(v)),
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(as_schema_2).collect()),
        other => other,
    }
}

/// `newer` with only the fields `older` has, at every depth: a row of a later release
/// compared with one a release before it printed (fields added since are left out).
fn fields_of(newer: &Value, older: &Value) -> Value {
    match (newer, older) {
        (Value::Object(n), Value::Object(o)) => Value::Object(
            n.iter()
                .filter_map(|(k, v)| Some((k.clone(), fields_of(v, o.get(k)?))))
                .collect(),
        ),
        (Value::Array(n), Value::Array(o)) if n.len() == o.len() => {
            Value::Array(n.iter().zip(o).map(|(n, o)| fields_of(n, o)).collect())
        }
        _ => newer.clone(),
    }
}

#[test]
fn a_live_run_and_its_replay_print_the_same_rows_in_every_compression() {
    // Holds from the first interval (0.5 s) on: fires half a second of data time later.
    const ALERT: &str = "running < 1000 for 500ms";
    let dir = std::env::temp_dir().join(format!("vllm-monitor-record-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["run.jsonl", "run.jsonl.gz", "run.jsonl.zst"] {
        let file = dir.join(name);
        let live = Command::new(monitor_binary())
            .args(["--simulate", "--json", "--interval", "500ms", "--window", "2s"])
            .args(["--duration", "4s", "--simulate-restart-after", "2s"])
            .args(["--alert", ALERT, "--record"])
            .arg(&file)
            .output()
            .expect("the monitor runs");
        assert!(live.status.success(), "{}", String::from_utf8_lossy(&live.stderr));
        let live: Vec<Value> = String::from_utf8(live.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let replayed = replay(&file, &["--json", "--alert", ALERT]);
        // The rule fires in data time: at the same interval, with the same value, live and replayed.
        assert!(
            live.iter()
                .any(|r| r["event"] == "alert_firing" && r["elapsed_s"] == 1.0),
            "{live:?}"
        );
        let (live, replayed) = (comparable(&live), comparable(&replayed));
        assert!(live.len() >= 8, "{live:?}");
        assert_eq!(live.len(), replayed.len(), "{name}");
        for (l, r) in live.iter().zip(&replayed) {
            assert_eq!(l, r, "{name}");
        }
        // CSV: a header, then a line an interval with as many cells.
        let csv = Command::new(monitor_binary())
            .arg("--replay")
            .arg(&file)
            .args(["--export", "csv"])
            .output()
            .unwrap();
        let text = String::from_utf8(csv.stdout).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].starts_with("t,at_ms,elapsed_s,group,window.asked_s,window.span_s"),
            "{}",
            lines[0]
        );
        let rows = live.iter().filter(|l| l.contains("\"urls\"")).count();
        assert_eq!(lines.len(), rows + 1, "{text}");
        // Read back by the csv crate: every record as wide as the header.
        let width = lines[0].split(',').count();
        let records = csv::Reader::from_reader(text.as_bytes())
            .records()
            .map(Result::unwrap)
            .collect::<Vec<_>>();
        assert_eq!(records.len(), rows, "{text}");
        assert!(records.iter().all(|r| r.len() == width), "{text}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A recording keeps the run's `--slo`, `--alert` (with `--exit-on-alert`), `--by` and
/// `--window`: a replay given none of them has the SLO columns, the groups, the window and
/// the alert's exit status of the run; a flag given again overrides the recording's.
#[test]
fn a_replay_reads_the_recorded_settings_unless_given_again() {
    const ALERT: &str = "running < 1000 for 500ms";
    let dir = std::env::temp_dir().join(format!("vllm-monitor-settings-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("run.jsonl");
    let live = Command::new(monitor_binary())
        .args([
            "--simulate",
            "--json",
            "--interval",
            "500ms",
            "--window",
            "2s",
            "--duration",
            "3s",
        ])
        .args([
            "--slo",
            "ttft=500ms",
            "--alert",
            ALERT,
            "--exit-on-alert",
            "--by",
            "engine",
        ])
        .arg("--record")
        .arg(&file)
        .output()
        .expect("the monitor runs");
    assert_eq!(
        live.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&live.stderr)
    );
    let intervals =
        |rows: &[Value]| -> Vec<Value> { rows.iter().filter(|r| r.get("urls").is_some()).cloned().collect() };

    // No flags: the run's settings.
    let (rows, status) = run_monitor(&["--replay", file.to_str().unwrap(), "--json"]);
    assert_eq!(status.code(), Some(3), "the recorded alert sets the exit status");
    assert!(rows.iter().any(|r| r["event"] == "alert_firing"), "{rows:?}");
    let rows = intervals(&rows);
    assert!(!rows.is_empty());
    for row in &rows {
        assert_eq!(row["window"]["asked_s"], 2.0, "{row}");
        assert_eq!(row["slo"]["ttft"]["objective_s"], 0.5, "{row}");
        let groups = row["groups"].as_array().expect("groups by engine");
        assert!(groups.iter().all(|g| g["engine"].is_string()), "{row}");
    }
    let csv = Command::new(monitor_binary())
        .arg("--replay")
        .arg(&file)
        .args(["--export", "csv"])
        .output()
        .unwrap();
    let text = String::from_utf8(csv.stdout).unwrap();
    let header = text.lines().next().unwrap_or_default();
    assert!(header.contains("slo.ttft.attained"), "{header}");
    assert_eq!(csv.status.code(), Some(3));

    // Given again: the flags win; the recording's rules and their exit status are gone.
    let (rows, status) = run_monitor(&[
        "--replay",
        file.to_str().unwrap(),
        "--json",
        "--slo",
        "itl=50ms",
        "--alert",
        "running < 0",
        "--by",
        "model_name",
        "--window",
        "1s",
    ]);
    assert!(status.success(), "{status}");
    assert!(rows.iter().all(|r| r["event"] != "alert_firing"));
    let rows = intervals(&rows);
    assert!(!rows.is_empty());
    for row in &rows {
        assert_eq!(row["window"]["asked_s"], 1.0, "{row}");
        assert!(row["slo"].get("ttft").is_none(), "{row}");
        assert_eq!(row["slo"]["itl"]["objective_s"], 0.05, "{row}");
        let groups = row["groups"].as_array().expect("groups by model_name");
        assert!(
            groups
                .iter()
                .all(|g| g["model_name"].is_string() && g.get("engine").is_none()),
            "{row}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A live run of the monitor against a real vLLM (restarted mid-run), and its recording:
/// the replay prints the rows the live monitor printed, and those rows agree with the
/// client's count as the recorded ones do.
#[test]
fn a_live_run_against_a_real_vllm_replays_to_the_rows_it_printed() {
    let dir = crate::data::dir().join("realservers/vllm-0.32-cpu-live-monitor");
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(dir.join("live.json.gz")).unwrap()),
        &mut text,
    )
    .unwrap();
    let live: Vec<Value> = text
        .lines()
        .map(|l| as_schema_2(serde_json::from_str(l).unwrap()))
        .collect();
    let replayed = replay(&dir.join("recording.jsonl.zst"), &["--json"]);
    // The live rows were printed by an earlier release: the fields they have.
    assert_eq!(live.len(), replayed.len());
    let replayed: Vec<Value> = replayed.iter().zip(&live).map(|(r, l)| fields_of(r, l)).collect();
    let (live_rows, replayed_rows) = (comparable(&live), comparable(&replayed));
    assert!(live_rows.len() > 150, "{} rows", live_rows.len());
    assert_eq!(live_rows.len(), replayed_rows.len());
    let (mut rows_while_down, mut totals_before) = (0, None);
    for (l, r) in live_rows.iter().zip(&replayed_rows) {
        let totals = |row: &str| -> Option<(Value, Value)> {
            let v: Value = serde_json::from_str(row).ok()?;
            let generated = v.get("generated_tokens_since_start")?.clone();
            (!generated.is_null()).then(|| (generated, v["finished_requests_since_start"].clone()))
        };
        if r.contains("\"state\":\"error\"") && totals(l).is_none() && totals(r).is_some() {
            // While the server was down (restarting), the run's totals still count what
            // it generated before; the release that printed the rows left them out.
            assert_eq!(totals(r), totals_before, "the last totals printed: {r}");
            let (mut lv, mut rv): (Value, Value) =
                (serde_json::from_str(l).unwrap(), serde_json::from_str(r).unwrap());
            for field in ["generated_tokens_since_start", "finished_requests_since_start"] {
                lv[field] = Value::Null;
                rv[field] = Value::Null;
            }
            assert_eq!(lv, rv);
            rows_while_down += 1;
            continue;
        }
        if let Some(printed) = totals(l) {
            totals_before = Some(printed);
        }
        if l.contains("\"event\":\"restart\"") {
            // 0.4 reads the process start time as the restart of every counter without a
            // `_created` of its own, and a histogram's `_created` as its buckets' too: the
            // event counts the 54 series whose value had already climbed past the old one
            // (47 told by a `_created`, 17 of them buckets; 7 by the start time alone),
            // which the release that printed the row missed.
            assert!(
                r.contains("356 counter series reset (47 seen only by _created, 7 by start time)"),
                "{r}"
            );
            assert_eq!(l.split("\"message\"").next(), r.split("\"message\"").next());
            continue;
        }
        if l.contains("\"event\":\"fault\"") {
            // 0.4 dates a failure when it was known, at its scrape's end, where the
            // release that printed the row dated it at its start (here 1 ms before).
            let (lv, rv): (Value, Value) =
                (serde_json::from_str(l).unwrap(), serde_json::from_str(r).unwrap());
            let at = |v: &Value| chrono::DateTime::parse_from_rfc3339(v["t"].as_str().unwrap()).unwrap();
            let later = at(&rv) - at(&lv);
            assert!(
                (chrono::TimeDelta::zero()..chrono::TimeDelta::seconds(2)).contains(&later),
                "{l}\n{r}"
            );
            let without_t = |mut v: Value| {
                v.as_object_mut().unwrap().remove("t");
                v
            };
            assert_eq!(without_t(lv), without_t(rv));
            continue;
        }
        if l.contains("\"event\":\"summary\"") {
            // 0.4 divides the tokens by the span its token counters were read over (from
            // the first page to the newest), where the release that printed the row took
            // the first page to the last interval: the same within 0.01%.
            let (mut lv, mut rv): (Value, Value) =
                (serde_json::from_str(l).unwrap(), serde_json::from_str(r).unwrap());
            let field = "mean_generation_tokens_per_s";
            let (lm, rm) = (lv[field].as_f64().unwrap(), rv[field].as_f64().unwrap());
            assert!((rm / lm - 1.0).abs() < 1e-4, "{l}\n{r}");
            (lv[field], rv[field]) = (Value::Null, Value::Null);
            assert_eq!(lv, rv);
            continue;
        }
        // PromQL's rate from the values alone, as the release that printed the rows and
        // Prometheus without `use-start-timestamps` compute it: through the restart too.
        assert_eq!(l, r);
    }
    let truth = Truth::load(&dir.join("truth.tsv.gz"));
    let (mut checked, mut worst) = (0, 0.0f64);
    for (start, end, row) in full_windows(&live) {
        let seen = truth.between(start, end);
        if seen.tokens < 1000.0 {
            continue;
        }
        let rate = row["generation_tokens_per_s"]["window"].as_f64().unwrap();
        let error = relative(rate, seen.tokens / (end - start));
        // 1.06% at worst, in the first and last seconds of the load, when the rate moves by
        // thousands of tokens/s within a second and the streams' arrival lags a loaded CPU.
        assert!(
            error <= 0.011,
            "{rate} against {} at {row}",
            seen.tokens / (end - start)
        );
        worst = worst.max(error);
        checked += 1;
    }
    assert!(checked >= 100, "{checked} full windows");
    assert!(
        (1..=60).contains(&rows_while_down),
        "{rows_while_down} rows while the server was down"
    );
    assert_eq!(live.iter().filter(|r| r["event"] == "restart").count(), 1);
    println!(
        "live real vLLM: {} rows as printed when replayed ({rows_while_down} while the server was \
         down with the run's totals where the release that printed them had none); \
         {checked} full windows, worst tok/s error {:.2}%",
        live_rows.len(),
        worst * 100.0
    );
}

/// A file to replay, written for one test.
fn bad_recording(name: &str, content: &[u8]) -> PathBuf {
    let path = std::env::temp_dir().join(format!("vllm-monitor-{}-{name}", std::process::id()));
    std::fs::write(&path, content).unwrap();
    path
}

/// A recording that is not JSON Lines, is empty, or holds no scrape: exit status 1 (the
/// README's "a recording could not be read"), nothing on stdout, and stderr says why,
/// naming the first line that is not a scrape with its start written out (a terminal's
/// escape sequences in it are not obeyed).
#[test]
fn a_recording_without_a_scrape_says_why_and_exits_1() {
    let header = r#"{"format":"vllm_monitor recording","version":1,"started":1796153029.0,"interval_s":1.0,"window_s":10.0,"urls":["http://gpu1:8000/metrics"]}"#;
    let cases: [(&str, Vec<u8>, &[&str]); 4] = [
        (
            "csv",
            b"time,tokens\n1,2\n".to_vec(),
            &["no scrape in the recording", "line 1: not JSON", "`time,tokens`"],
        ),
        (
            "escapes",
            b"\x1b]0;pwned\x07 not a scrape\n".to_vec(),
            &["line 1: not JSON", "`\\x1b]0;pwned\\x07 not a scrape`"],
        ),
        ("empty", Vec::new(), &["the recording is empty"]),
        (
            "header",
            format!("{header}\n{{\"end_of_run\":true,\"ticks\":0}}\n").into_bytes(),
            &["no scrape in the recording, only its header"],
        ),
    ];
    for (name, content, says) in cases {
        let path = bad_recording(name, &content);
        let output = Command::new(monitor_binary())
            .args(["--replay", path.to_str().unwrap(), "--plain"])
            .output()
            .unwrap();
        std::fs::remove_file(&path).unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{name}: {stderr}");
        assert!(
            output.stdout.is_empty(),
            "{name}: {}",
            String::from_utf8_lossy(&output.stdout)
        );
        for said in says {
            assert!(stderr.contains(said), "{name}: {said:?} not in {stderr}");
        }
        assert!(!stderr.contains('\u{1b}'), "{name}: {stderr:?}");
    }
}

/// Real prometheus_client 0.26 exporters, recorded by the monitor
/// (`tests/data/realservers/prometheus_client-0.26-trials`, truths in its README). A
/// restart whose new `_created` follows its count: the summary is the true count (it
/// counted 18,564 of 33,568 tokens, the counter not rated for two rows). Two processes
/// started a second apart behind one URL in turn: said, not rated, and each process
/// counted by its own rises (the summary said 390,348 tokens where at most 42,000 were
/// generated, then counted nothing from the first switch back).
#[test]
fn prometheus_client_restarts_and_replicas_in_turn_replay_true() {
    let dir = crate::data::dir().join("realservers/prometheus_client-0.26-trials");
    let summary = |rows: &[Value]| {
        rows.iter()
            .find(|r| r["event"] == "summary")
            .cloned()
            .expect("a summary")
    };
    let restart = replay(&dir.join("restart.jsonl.gz"), &["--json"]);
    let tokens = summary(&restart)["generated_tokens"].as_f64().unwrap();
    assert!((tokens - 33_567.92).abs() < 0.01, "{tokens}");
    assert!(restart.iter().any(|r| r["event"] == "restart"));
    let in_turn = replay(&dir.join("replicas-in-turn.jsonl.gz"), &["--json"]);
    // Each process's own rise across its pages (29,997 of the first, 11,198 of the
    // second), and the first switch, which nothing tells from a restart (the second
    // process started a second after the first), counted from zero: the second's 1,520.
    let tokens = summary(&in_turn)["generated_tokens"].as_f64().unwrap();
    assert_eq!(tokens, 29_997.0 + 11_198.0 + 1_520.0);
    let said = |r: &Value| {
        r["message"]
            .as_str()
            .is_some_and(|m| m.contains("two processes answer"))
    };
    let from = in_turn.iter().position(said).expect("said");
    // The first switch cannot be told from a restart (the second process started a second
    // after the first: within any clock skew); its return can.
    for row in in_turn[from..].iter().filter(|r| r["elapsed_s"].is_number()) {
        for figure in ["window", "ewma", "promql_rate"] {
            let rate = &row["generation_tokens_per_s"][figure];
            assert!(
                rate.as_f64().is_none_or(|r| r <= 1_400.0 * 1.01),
                "{figure} {rate} at {}",
                row["elapsed_s"]
            );
        }
    }
}
