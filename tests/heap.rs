//! The tracker's memory at fleet scale, with a global allocator that counts live bytes
//! (its own test binary): what a series costs beyond its points. `benches/fleet.rs` prints
//! the same figure at 1,000,000 series.

#[path = "../benches/common/live_bytes.rs"]
mod live_bytes;
use live_bytes::live;

/// `series` series of one counter over 1,000 instances, 4 labels each (as the bench's).
fn counter_page(series: usize, n: u64) -> String {
    let mut page = String::with_capacity(series * 110);
    page.push_str("# TYPE requests_total counter\n");
    for i in 0..1_000 {
        for s in 0..series / 1_000 {
            let value = (n + 1) * (1 + (i + s) as u64 % 7);
            page.push_str(&format!(
                "requests_total{{instance=\"vllm-{i:05}:8000\",job=\"api\",route=\"/v1/r{}\",shard=\"{}\"}} {value}\n",
                s % 100,
                s / 100
            ));
        }
    }
    page
}

/// In steady state: the retention full (a minute and a half, as the monitor keeps for a
/// minute's window at 15 s), the columns sized for it.
#[test]
fn a_series_costs_at_most_200_bytes_beyond_its_points() {
    let series = 100_000;
    let pages: Vec<String> = (0..4).map(|n| counter_page(series, n)).collect();
    let before = live();
    let mut tracker = promrate::Tracker::new([]);
    tracker.retention(chrono::TimeDelta::seconds(90));
    for n in 0..14 {
        let at = chrono::DateTime::from_timestamp(1_800_000_000 + 15 * n as i64, 0).unwrap();
        tracker.ingest(&pages[n.min(3)], at).unwrap();
    }
    let bytes = (live() - before) as f64;
    let points: usize = tracker.series().map(|s| s.counter().map_or(0, |c| c.len())).sum();
    // 90 s at 15 s: seven points, both ends included.
    assert_eq!((tracker.len(), points), (series, 7 * series));
    let per_series = (bytes - 16.0 * points as f64) / series as f64;
    println!("{per_series:.0} bytes per series beyond its points");
    assert!(
        per_series <= 200.0,
        "{per_series:.0} bytes per series beyond its points"
    );
}
