//! The operator's figures through the binary, on pages whose counts are set by hand
//! (`src/simulator/known.rs`), replayed as any scraper's recording: SLO attainment
//! exactly 0.97 where 970 of the window's 1,000 requests were within the 0.5 s bound, in
//! JSON (rows and summary) and plain lines; capacity, phases and prompt tokens by source
//! at their known values; a bad `--slo` refused with where the mistake is.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{json, Value};

use crate::known::{page, run_of_one_engine};
use crate::monitor::monitor_binary;

/// A recording of the known pages at 0, 10 and 20 s (one engine), in the interchange shape
/// any scraper writes; removed when dropped.
struct KnownRecording(PathBuf);

impl KnownRecording {
    fn new(name: &str) -> KnownRecording {
        let path =
            std::env::temp_dir().join(format!("vllm-monitor-known-{}-{name}.jsonl", std::process::id()));
        let t0 = 1_800_000_000.0;
        let lines: Vec<String> = run_of_one_engine()
            .iter()
            .enumerate()
            .map(|(k, counts)| {
                let start = t0 + 10.0 * k as f64;
                json!({
                    "url": "http://known:8000/metrics", "start": start, "end": start + 0.01,
                    "status": 200, "content_type": "text/plain; version=0.0.4",
                    "body": page(std::slice::from_ref(counts)),
                })
                .to_string()
            })
            .collect();
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        KnownRecording(path)
    }

    /// The monitor's stdout on the recording with `args`, and whether it succeeded.
    fn run(&self, args: &[&str]) -> (String, bool) {
        let out = Command::new(monitor_binary())
            .arg("--replay")
            .arg(&self.0)
            .args(["--window", "10s"])
            .args(args)
            .output()
            .unwrap();
        (String::from_utf8(out.stdout).unwrap(), out.status.success())
    }
}

impl Drop for KnownRecording {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn slo_attainment_is_exact_at_a_bucket_bound_in_every_output() {
    let recording = KnownRecording::new("slo");
    let (text, ok) = recording.run(&["--json", "--slo", "ttft=500ms,itl=50ms,e2e=45s"]);
    assert!(ok, "{text}");
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let rows: Vec<&Value> = lines.iter().filter(|l| l.get("urls").is_some()).collect();
    // The row whose window is the last 10 s: 1,000 requests, 970 within 0.5 s.
    let row = rows
        .iter()
        .rev()
        .find(|r| r["window"]["span_s"] == 10.0)
        .unwrap_or_else(|| panic!("no full window in {text}"));
    let slo = &row["slo"];
    assert_eq!(
        slo["ttft"],
        json!({"objective_s": 0.5, "attained": 0.97, "exact": true}),
        "{row}"
    );
    assert_eq!(
        slo["itl"],
        json!({"objective_s": 0.05, "attained": 0.95, "exact": true})
    );
    // 45 s is not a bound: halfway from 30 s (990) to 60 s (1,000).
    assert_eq!(slo["e2e"]["exact"], false);
    assert!((slo["e2e"]["attained"].as_f64().unwrap() - 0.995).abs() < 1e-12);
    // The same figures per group (the engine), and the run's since the first page.
    let groups = recording
        .run(&["--json", "--by", "engine", "--slo", "ttft=500ms"])
        .0;
    let grouped: Vec<Value> = groups.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let row = grouped
        .iter()
        .rev()
        .find(|r| r["window"]["span_s"] == 10.0)
        .unwrap();
    assert_eq!(row["groups"][0]["engine"], "0");
    assert_eq!(row["groups"][0]["slo"]["ttft"]["attained"], 0.97);
    let summary = lines.last().unwrap();
    assert_eq!(summary["event"], "summary");
    assert_eq!(
        summary["slo"]["ttft"],
        json!({"objective_s": 0.5, "attained": 0.98, "exact": true})
    );
    // Without --slo there is no slo object.
    let plain_json = recording.run(&["--json"]).0;
    assert!(!plain_json.contains("\"slo\""), "{plain_json}");
    // Plain lines: the share, `~` when interpolated, and the summary's.
    let (plain, ok) = recording.run(&["--plain", "--slo", "ttft=500ms,e2e=45s"]);
    assert!(ok);
    assert!(
        plain.contains("        slo ttft≤500ms 97.0% · e2e≤45s 99.5%~"),
        "{plain}"
    );
    assert!(plain.contains("slo since the start: ttft≤500ms 98.0%"), "{plain}");
}

#[test]
fn capacity_phases_and_prompt_sources_are_the_pages_counts() {
    let recording = KnownRecording::new("capacity");
    let (text, ok) = recording.run(&["--json"]);
    assert!(ok, "{text}");
    let row = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .rfind(|r| r["window"]["span_s"] == 10.0)
        .unwrap_or_else(|| panic!("no full window in {text}"));
    assert_eq!(
        row["phase_mean_seconds"],
        json!({"queue": 0.25, "prefill": 0.5, "decode": 12.0, "inference": 12.5})
    );
    let c = &row["capacity"];
    assert_eq!(c["kv_total_tokens"], 65_536.0, "4096 blocks × 16 tokens");
    assert_eq!(c["kv_used_tokens"], 16_384.0, "a quarter of it");
    assert_eq!(c["kv_cache_usage"], 0.25);
    assert_eq!(c["preemptions_per_s"], 2.0);
    assert_eq!(c["admission_rejections_per_s"], 0.5);
    assert_eq!(c["aborts_per_s"], 0.3);
    assert_eq!(c["waiting_by_reason"], json!({"capacity": 7.0, "deferred": 2.0}));
    assert_eq!(c["engine_sleep_state"], "awake");
    // The recorded pages have every capacity family, and no prefix cache or speculative
    // decoding.
    assert_eq!(c["not_exposed"], json!(["prefix_cache_hit_rate", "spec_decode"]));
    assert_eq!(
        row["prompt_tokens_per_s"]["by_source"],
        json!({"local_compute": 600.0, "local_cache_hit": 300.0, "external_kv_transfer": 100.0})
    );
    let (plain, _) = recording.run(&["--plain", "--details"]);
    for line in [
        "     phases queue 250ms · prefill 500ms · decode 12.0s · inference 12.5s",
        "   prompt/s computed 600.0 · cache hit 300.0 · transferred 100.0 tok/s",
        "   capacity kv 16.4k/65.5k tok · preempt 2.00/s · reject 0.50/s · abort 0.30/s",
    ] {
        assert!(plain.contains(line), "{line:?} in\n{plain}");
    }
    // Without --details, a row per interval (the figures are in --json).
    let (rows_only, _) = recording.run(&["--plain"]);
    assert!(
        !rows_only.contains("   capacity ") && !rows_only.contains("     phases "),
        "{rows_only}"
    );
}

/// A mistake in `--slo` is refused before anything runs: exit 2, and where it is.
#[test]
fn a_bad_slo_is_refused_with_its_column() {
    for (slo, says) in [
        (
            "ttft=500ms,itl=5x",
            "column 16: \"5x\" is not a duration (unknown unit \"x\": ms, s or m)",
        ),
        (
            "ttft=500ms,tpot=50ms",
            "column 12: \"tpot\" is not ttft, itl or e2e",
        ),
        ("e2e=30s,e2e=1m", "column 9: e2e is given twice"),
        ("ttft=500ms;itl=50ms", "separate them with ','"),
    ] {
        let out = Command::new(monitor_binary())
            .args(["--simulate", "--slo", slo])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{slo}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("--slo") && stderr.contains(says),
            "{slo}: {stderr}"
        );
    }
    // A rule on an objective's share needs that objective; upper case names are read.
    let out = Command::new(monitor_binary())
        .args(["--simulate", "--alert", "slo_ttft < 90%", "--duration", "1s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--slo ttft=DURATION"));
}
