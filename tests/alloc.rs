//! Zero-allocation proofs with a counting global allocator (its own test binary, so no other
//! test's allocations are counted). Tests here run one at a time through a lock.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
static SERIAL: Mutex<()> = Mutex::new(());

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made while running `f`.
fn count<R>(f: impl FnOnce() -> R) -> (usize, R) {
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    let r = f();
    (ALLOCATIONS.load(Ordering::SeqCst) - before, r)
}

fn shared_dir(test: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared");
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(std::env::var_os("CI").is_none(), "{test}: ../shared missing under CI");
    eprintln!("SKIPPED {test}: ../shared not found");
    None
}

fn pages(dir: &std::path::Path) -> Vec<(String, String)> {
    let mut pages = Vec::new();
    for sub in ["corpus", "vllm"] {
        for entry in std::fs::read_dir(dir.join(sub)).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.ends_with(".txt") || name.ends_with(".prom") {
                pages.push((name, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    pages.sort();
    pages
}

/// Touches everything a caller can read from a sample without asking for an owned copy.
fn consume(entries: promrate::Entries<'_>) -> (usize, usize, f64) {
    let (mut samples, mut labels, mut sum) = (0, 0, 0.0);
    for entry in entries {
        let Ok(promrate::Entry::Sample(s)) = entry else { continue };
        samples += 1;
        sum += s.value() + s.timestamp_ms().unwrap_or(0) as f64 + s.name().len() as f64;
        for (name, value) in s.labels() {
            labels += 1;
            // Equality with the unescaped value and byte-wise unescaping never allocate.
            assert!(value == value.raw() || value.raw().contains('\\'));
            sum += value.unescaped_bytes().count() as f64 + name.len() as f64;
        }
        if let Some(ex) = s.exemplar() {
            sum += ex.value() + ex.labels().iter().count() as f64;
        }
    }
    (samples, labels, sum)
}

#[test]
fn iterating_every_text_page_allocates_nothing() {
    let _serial = SERIAL.lock().unwrap();
    let Some(dir) = shared_dir("zero allocations") else { return };
    let mut total_samples = 0;
    for (name, text) in pages(&dir) {
        let format = if name.ends_with(".om.txt") || name.contains("openmetrics") {
            promrate::Format::OpenMetrics
        } else {
            promrate::Format::PrometheusText
        };
        // Line-by-line OpenMetrics (no family bookkeeping) is allocation-free too.
        let parser = promrate::Parser::new(format).strict(format == promrate::Format::PrometheusText);
        let (allocations, (samples, labels, _)) = count(|| consume(parser.parse(&text)));
        assert_eq!(allocations, 0, "{name}: {allocations} allocations for {samples} samples");
        assert!(samples > 0 && labels > 0, "{name}");
        total_samples += samples;
    }
    println!("{total_samples} samples, 0 allocations");
}

#[test]
fn strict_openmetrics_allocates_per_family_not_per_sample() {
    let _serial = SERIAL.lock().unwrap();
    let Some(dir) = shared_dir("openmetrics allocations") else { return };
    let text = std::fs::read_to_string(dir.join("corpus/prometheus-textparse-1histogram.om.txt")).unwrap();
    let parser = promrate::Parser::new(promrate::Format::OpenMetrics);
    let (allocations, (samples, _, _)) = count(|| consume(parser.parse(&text)));
    let families = text.lines().filter(|l| l.starts_with("# TYPE")).count();
    // Two amortised, doubling collections (reserved names, label groups): logarithmic.
    assert!(allocations <= 64, "{allocations} allocations for {families} families / {samples} samples");
    assert!(samples > 30, "{samples}");
}

#[test]
fn error_lines_allocate_only_for_their_message() {
    let _serial = SERIAL.lock().unwrap();
    let text = "ok 1\nbad{ 2\nok 3\n";
    let (allocations, results) = count(|| promrate::parse(text).map(|r| r.is_ok()).collect::<Vec<_>>());
    assert_eq!(results, [true, false, true]);
    // The Vec of results itself; the error kind here holds no String.
    assert!(allocations <= 2, "{allocations}");
}
