//! The tracker's heap on the `/federate` page of N simulated vLLM servers, as the monitor
//! sets its tracker up (`--interval 15s --window 30s`: a minute of points): live bytes
//! counted by a global allocator after each scrape, per tracked series, and the process's
//! resident memory. `docs/many-servers.md` quotes it for 10,000 servers.
//!
//! Run from the repository's root:
//! `cargo run --release -p vllm-monitor --example fleet_heap -- 10000`; with
//! `FLEET_HEAP_UNSHARED=1`, without sharing label sets (the library's default).

use chrono::{DateTime, TimeDelta, Utc};
use promrate::Tracker;
use vllm_monitor::fleet;

#[path = "../../../benches/common/live_bytes.rs"]
mod live_bytes;
use live_bytes::live;

fn at(scrape: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_800_000_000 + 15 * scrape, 0).expect("in range")
}

/// The process's resident memory, from /proc (Linux), if it can be read.
fn resident_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let servers: usize = std::env::args().nth(1).map_or(Ok(1_000), |s| s.parse())?;
    let template = std::fs::read_to_string(format!("tests/data/{}", fleet::TEMPLATE))?;
    let fleet = fleet::Fleet::new(&template, servers, at(0).timestamp_millis());
    let before = live();
    let mut tracker = Tracker::new([]);
    // As the monitor's pipeline makes it for --interval 15s --window 30s.
    tracker
        .vllm_preset()
        .infer_counters(true)
        .retention(TimeDelta::seconds(60))
        .expect_interval(TimeDelta::seconds(15))
        .share_label_sets(std::env::var_os("FLEET_HEAP_UNSHARED").is_none())
        .max_series(5_000_000);
    for scrape in 0..6 {
        let page = fleet.page(at(scrape).timestamp_millis());
        tracker.ingest(&page, at(scrape))?;
        drop(page);
        let live = (live() - before) as f64;
        let series = tracker.len();
        let points: usize = tracker
            .series()
            .map(|s| s.counter().map_or(0, |c| c.len()) + s.gauge().map_or(0, |g| g.len()))
            .sum();
        println!(
            "scrape {scrape}: {series} series, {:.0} bytes each ({:.2} points), {:.2} GB; resident {}",
            live / series as f64,
            points as f64 / series as f64,
            live / 1e9,
            resident_mb().map_or("unknown".into(), |mb| format!("{mb:.0} MB")),
        );
    }
    Ok(())
}
