//! The tracker's memory at fleet scale, with a global allocator that counts live bytes
//! (its own test binary): what a series costs beyond its points. `benches/fleet.rs` prints
//! the same figure at 1,000,000 series.

#[path = "../benches/common/live_bytes.rs"]
mod live_bytes;
use live_bytes::live;

/// The live-byte count is process-wide: the tests that read it run one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

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

/// A tracker fed 14 scrapes 15 s apart (`pages` in turn, then the last again), the
/// retention a minute and a half, and the live bytes it holds then.
fn steady_tracker(pages: &[String]) -> (promrate::Tracker, f64) {
    let before = live();
    let mut tracker = promrate::Tracker::new([]);
    tracker.retention(chrono::TimeDelta::seconds(90));
    for n in 0..14 {
        let at = chrono::DateTime::from_timestamp(1_800_000_000 + 15 * n as i64, 0).unwrap();
        tracker.ingest(&pages[n.min(pages.len() - 1)], at).unwrap();
    }
    let bytes = (live() - before) as f64;
    (tracker, bytes)
}

/// In steady state: the retention full (a minute and a half, as the monitor keeps for a
/// minute's window at 15 s), the columns sized for it.
#[test]
fn a_series_costs_at_most_200_bytes_beyond_its_points() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let series = 100_000;
    let pages: Vec<String> = (0..4).map(|n| counter_page(series, n)).collect();
    let (tracker, bytes) = steady_tracker(&pages);
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

/// A histogram over 1,000 instances as prometheus_client writes it: 10 buckets, `_count`
/// and `_sum` per label group, and (with `created`) a `_created` gauge family after it, a
/// start time for every series of the group, buckets included.
fn histogram_page(n: u64, created: bool) -> String {
    let bounds = [
        "0.01", "0.05", "0.1", "0.5", "1.0", "5.0", "10.0", "50.0", "100.0", "+Inf",
    ];
    let mut page = String::new();
    page.push_str("# TYPE latency_seconds histogram\n");
    for i in 0..1_000 {
        for model in 0..10 {
            let labels = format!("instance=\"vllm-{i:05}:8000\",model=\"m{model}\"");
            for (b, le) in bounds.iter().enumerate() {
                let value = (n + 1) * (b as u64 + 1);
                page.push_str(&format!(
                    "latency_seconds_bucket{{{labels},le=\"{le}\"}} {value}\n"
                ));
            }
            page.push_str(&format!("latency_seconds_count{{{labels}}} {}\n", (n + 1) * 10));
            page.push_str(&format!("latency_seconds_sum{{{labels}}} {}\n", (n + 1) * 3));
        }
    }
    if created {
        page.push_str("# TYPE latency_seconds_created gauge\n");
        for i in 0..1_000 {
            for model in 0..10 {
                page.push_str(&format!(
                    "latency_seconds_created{{instance=\"vllm-{i:05}:8000\",model=\"m{model}\"}} 1.7999e9\n"
                ));
            }
        }
    }
    page
}

/// Live bytes per series of a tracker fed `histogram_page` in steady state.
fn histogram_bytes_per_series(created: bool) -> f64 {
    let pages: Vec<String> = (0..4).map(|n| histogram_page(n, created)).collect();
    let (tracker, bytes) = steady_tracker(&pages);
    assert_eq!(tracker.len(), 120_000);
    bytes / tracker.len() as f64
}

/// A start time reaches every bucket (as Prometheus applies a histogram's created time),
/// and costs each series one 48-byte allocation and its share of the bucket group (about
/// 20 bytes), not a list of runs (190 bytes): a vLLM page's histograms all have one, so at
/// fleet scale most series do.
#[test]
fn a_start_time_costs_a_series_at_most_80_bytes() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let without = histogram_bytes_per_series(false);
    let with = histogram_bytes_per_series(true);
    println!("{without:.0} bytes per series without start times, {with:.0} with");
    assert!(
        with - without <= 80.0,
        "{without:.0} bytes per series without start times, {with:.0} with"
    );
}
