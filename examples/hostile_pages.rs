//! Pages built to hurt, fed to the parser and the tracker: time per input byte and peak
//! memory (a counting allocator's high-water mark) for each, and whether anything panics.
//!
//! ```text
//! cargo run --release --example hostile_pages
//! ```
//! Time should grow linearly with the input, and the tracker's memory under label churn
//! should stay bounded by `stale_after` (compare the high-water marks after 1,000 and
//! 10,000 scrapes).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use chrono::{DateTime, TimeDelta};
use promrate::{Format, Parser, Selector, Tracker};

/// Counts live bytes and keeps their high-water mark.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// Every call goes to the system allocator unchanged; the counters are the only addition.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            let live = LIVE.fetch_add(new_size - layout.size(), Ordering::Relaxed) + new_size - layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        } else {
            LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Runs `work` on an input of `bytes` and prints a row: time per MB and the peak memory
/// allocated during the run (the input itself excluded: it was built before).
fn measure(name: &str, bytes: usize, work: impl FnOnce() -> String) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let start = Instant::now();
    let outcome = work();
    let elapsed = start.elapsed();
    let peak = PEAK.load(Ordering::Relaxed) - base;
    let mb = bytes as f64 / 1e6;
    println!(
        "| {name} | {:.1} MB | {:.2} ms/MB | {:.1} MB | {outcome} |",
        mb,
        elapsed.as_secs_f64() * 1e3 / mb.max(1e-9),
        peak as f64 / 1e6,
    );
}

/// Samples and errors a parser yields for `page`.
fn parse_all(parser: Parser, page: &str) -> String {
    let (mut samples, mut errors, mut first) = (0, 0, None);
    for entry in parser.parse(page) {
        match entry {
            Ok(e) => samples += usize::from(e.as_sample().is_some()),
            Err(e) => {
                errors += 1;
                first.get_or_insert(e.to_string());
            }
        }
    }
    match first {
        None => format!("{samples} samples"),
        Some(e) => format!("{samples} samples, {errors} errors (first: {e})"),
    }
}

fn main() {
    let t0 = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
    println!("| input | size | time | peak memory | outcome |");
    println!("|---|---|---|---|---|");

    let long_line = format!("big{{v=\"{}\"}} 1\n", "x".repeat(100_000_000));
    measure("one 100 MB line (a label value)", long_line.len(), || {
        parse_all(Parser::default(), &long_line)
    });
    drop(long_line);

    let escapes = format!("esc{{v=\"{}\"}} 1\n", "\\\\\\n\\\"".repeat(10_000_000 / 6));
    measure(
        "a 10 MB label value made of escapes, unescaped",
        escapes.len(),
        || {
            let sample = promrate::parse(&escapes)
                .next()
                .unwrap()
                .unwrap()
                .into_sample()
                .unwrap();
            let value = sample.labels().get("v").unwrap();
            format!(
                "{} bytes unescaped, equal to itself: {}",
                value.unescaped().len(),
                value == *value.unescaped()
            )
        },
    );
    drop(escapes);

    let many_labels = format!(
        "wide{{{}}} 1\n",
        (0..10_000)
            .map(|i| format!("l{i}=\"{i}\""))
            .collect::<Vec<_>>()
            .join(",")
    );
    measure(
        "10,000 labels on one sample (and 11 lookups)",
        many_labels.len(),
        || {
            let sample = promrate::parse(&many_labels)
                .next()
                .unwrap()
                .unwrap()
                .into_sample()
                .unwrap();
            let found = (0..10_000)
                .step_by(997)
                .filter(|i| sample.labels().get(&format!("l{i}")).is_some())
                .count();
            format!("{} labels, {found} looked up", sample.labels().len())
        },
    );
    drop(many_labels);

    let million: String = (0..1_000_000)
        .map(|i| format!("s_total{{id=\"{i}\"}} {i}\n"))
        .collect();
    measure("1,000,000 distinct series, parsed", million.len(), || {
        parse_all(Parser::default(), &million)
    });
    measure("1,000,000 distinct series, tracker ingest", million.len(), || {
        let mut tracker = Tracker::new([]);
        tracker
            .ingest(&million, t0)
            .map(|r| format!("{} series", r.new_series))
            .unwrap_or_else(|e| e.to_string())
    });
    measure(
        "1,000,000 distinct series, tracker with max_series 100,000",
        million.len(),
        || {
            let mut tracker = Tracker::new([]);
            tracker.max_series(100_000);
            match tracker.ingest(&million, t0) {
                Ok(r) => format!("{} series", r.new_series),
                Err(e) => format!("{e}; {} series kept", tracker.len()),
            }
        },
    );
    drop(million);

    let families: String = (0..50_000)
        .map(|i| format!("# TYPE f{i} counter\n# HELP f{i} A family.\nf{i}_total 1\n"))
        .chain(std::iter::once("# EOF\n".to_string()))
        .collect();
    measure("50,000 families, strict OpenMetrics", families.len(), || {
        parse_all(Parser::new(Format::OpenMetrics), &families)
    });
    drop(families);

    let groups: String = std::iter::once("# TYPE g counter\n".to_string())
        .chain((0..100_000).map(|i| format!("g_total{{id=\"{i}\"}} 1\n")))
        .chain(std::iter::once("# EOF\n".to_string()))
        .collect();
    measure(
        "100,000 label groups in one family, strict OpenMetrics",
        groups.len(),
        || parse_all(Parser::new(Format::OpenMetrics), &groups),
    );
    drop(groups);

    for scrapes in [1_000, 10_000] {
        // 100 series a scrape, every one new: a server whose label values churn.
        let mut bytes = 0;
        let base = LIVE.load(Ordering::Relaxed);
        PEAK.store(base, Ordering::Relaxed);
        let start = Instant::now();
        let mut tracker = Tracker::new([]);
        tracker.stale_after(5);
        let mut peak_after_warmup = 0;
        for s in 0..scrapes {
            let page: String = (0..100)
                .map(|i| format!("churn_total{{pod=\"p{s}_{i}\"}} {s}\n"))
                .collect();
            bytes += page.len();
            tracker.ingest(&page, t0 + TimeDelta::seconds(s as i64)).unwrap();
            if s == 99 {
                peak_after_warmup = PEAK.load(Ordering::Relaxed) - base;
            }
        }
        let elapsed = start.elapsed();
        let peak = PEAK.load(Ordering::Relaxed) - base;
        println!(
            "| label churn, {scrapes} scrapes of 100 new series (stale after 5) | {:.1} MB | {:.2} ms/MB | {:.2} MB (after 100 scrapes: {:.2} MB) | {} series held |",
            bytes as f64 / 1e6,
            elapsed.as_secs_f64() * 1e3 / (bytes as f64 / 1e6),
            peak as f64 / 1e6,
            peak_after_warmup as f64 / 1e6,
            tracker.len(),
        );
    }

    // A regex that backtracks exponentially in a backtracking engine; `regex` is linear.
    let hostile = Selector::parse(r#"{__name__="x", v=~"(a+)+$"}"#).unwrap();
    let page: String = (0..1_000)
        .map(|i| format!("x{{v=\"{}!\"}} {i}\n", "a".repeat(1_000)))
        .collect();
    measure(
        "a backtracking-prone selector regex over 1,000 values of 1 KB",
        page.len(),
        || {
            let matched = promrate::parse(&page)
                .filter_map(|e| e.ok()?.into_sample())
                .filter(|s| hostile.matches(s))
                .count();
            format!("{matched} matched")
        },
    );
}
