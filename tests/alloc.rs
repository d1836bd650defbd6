//! Zero-allocation proofs with a counting global allocator (its own test binary). Counts
//! are per thread, so the test harness's own threads are never counted.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Mutex;

#[path = "it/data.rs"]
mod data;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}
static SERIAL: Mutex<()> = Mutex::new(());

fn bump() {
    let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
}

fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        bump();
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        bump();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made while running `f`.
fn count<R>(f: impl FnOnce() -> R) -> (usize, R) {
    let before = allocations();
    let r = f();
    (allocations() - before, r)
}

/// Touches everything a caller can read from a sample without asking for an owned copy.
fn consume(entries: promrate::text::Entries<'_>) -> (usize, usize, f64) {
    let (mut samples, mut labels, mut sum) = (0, 0, 0.0);
    for entry in entries {
        let Ok(promrate::Entry::Sample(s)) = entry else {
            continue;
        };
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
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut total_samples = 0;
    for (name, text) in data::pages() {
        let format = if name.ends_with(".om.txt") || name.contains("openmetrics") {
            promrate::Format::OpenMetrics
        } else {
            promrate::Format::PrometheusText
        };
        // Line-by-line OpenMetrics (no family bookkeeping) is allocation-free too.
        let parser = promrate::Parser::new(format).strict(format == promrate::Format::PrometheusText);
        let (allocations, (samples, labels, _)) = count(|| consume(parser.parse(&text)));
        assert_eq!(
            allocations, 0,
            "{name}: {allocations} allocations for {samples} samples"
        );
        assert!(samples > 0 && labels > 0, "{name}");
        total_samples += samples;
    }
    println!("{total_samples} samples, 0 allocations");
}

#[test]
fn strict_openmetrics_allocates_per_family_not_per_sample() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = data::dir();
    let text = data::read(&dir.join("corpus/prometheus-textparse-1histogram.om.txt"));
    let parser = promrate::Parser::new(promrate::Format::OpenMetrics);
    let (allocations, (samples, _, _)) = count(|| consume(parser.parse(&text)));
    let families = text.lines().filter(|l| l.starts_with("# TYPE")).count();
    // Two amortised, doubling collections (reserved names, label groups): logarithmic.
    assert!(
        allocations <= 64,
        "{allocations} allocations for {families} families / {samples} samples"
    );
    assert!(samples > 30, "{samples}");
}

#[test]
fn error_lines_allocate_only_for_their_message() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let text = "ok 1\nbad{ 2\nok 3\n";
    let (allocations, results) = count(|| promrate::parse(text).map(|r| r.is_ok()).collect::<Vec<_>>());
    assert_eq!(results, [true, false, true]);
    // The Vec of results itself; the error kind here holds no String.
    assert!(allocations <= 2, "{allocations}");
}

#[test]
fn selector_matching_allocates_nothing() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = data::dir();
    let selectors = [
        promrate::Selector::parse(r#"vllm:generation_tokens_total{model_name=~"meta-llama/.*",engine!="1"}"#)
            .unwrap(),
        promrate::Selector::parse(
            r#"{__name__=~"node_cpu_.*|vllm:.*_seconds_bucket", le!="+Inf", cpu=~"[0-9]+|"}"#,
        )
        .unwrap(),
        promrate::Selector::parse(r#"{job="x", path=~"a.*b"}"#).unwrap(),
        promrate::Selector::parse("vllm_num_requests_running")
            .unwrap()
            .normalize_names(true),
    ];
    for page in [
        "corpus/node_exporter-e2e-output.txt",
        "vllm/vllm-0.33-v1-single-t0.prom",
    ] {
        let text = data::read(&dir.join(page));
        let samples: Vec<_> = promrate::parse(&text)
            .filter_map(|e| e.ok()?.into_sample())
            .collect();
        let match_all = || {
            samples
                .iter()
                .map(|s| selectors.iter().filter(|sel| sel.matches(s)).count())
                .sum::<usize>()
        };
        // The regex engine builds its per-thread scratch space on first use; after that,
        // matching allocates nothing.
        let warm = match_all();
        let (allocations, matched) = count(match_all);
        assert_eq!(warm, matched);
        assert_eq!(allocations, 0, "{page}");
        assert!(matched > 0, "{page}");
    }
    // A regex over an escaped value unescapes into a stack buffer, not the heap.
    let escaped = promrate::parse("x{path=\"a\\\"b\"} 1")
        .next()
        .unwrap()
        .unwrap()
        .into_sample()
        .unwrap();
    let (allocations, hit) = count(|| selectors[2].matches(&escaped));
    assert_eq!((allocations, hit), (0, false));
}

#[test]
fn warmed_up_tracker_ingests_100_scrapes_without_allocating() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = data::dir();
    let page = data::read(&dir.join("vllm/vllm-0.33-v1-single-t0.prom"));
    let selectors = [
        promrate::Selector::parse("vllm:generation_tokens_total").unwrap(),
        promrate::Selector::parse(r#"{__name__=~"vllm:.*", model_name=~"meta-llama/.*"}"#).unwrap(),
    ];
    let mut tracker = promrate::Tracker::new(selectors);
    tracker.normalize_names(true);
    let t0 = chrono::DateTime::from_timestamp(1_764_480_500, 0).unwrap();
    let at = |i: i64| t0 + chrono::TimeDelta::seconds(2 * i);
    // Warm up: series created, retention windows and the regex scratch at steady size.
    for i in 0..400 {
        tracker.ingest(&page, at(i)).unwrap();
    }
    let tracked = tracker.len();
    let (allocations, samples) = count(|| {
        (400..500)
            .map(|i| tracker.ingest(&page, at(i)).unwrap().samples)
            .sum::<usize>()
    });
    assert_eq!(allocations, 0, "{allocations} allocations over 100 scrapes");
    assert!(
        tracked > 100 && samples == 100 * tracked,
        "{tracked} series, {samples} samples"
    );
}

/// A page from Prometheus' `/federate` (every family untyped, sample timestamps), read
/// with `infer_counters`: the extra pass that learns histogram families and the repeated
/// points a federation serves between its scrapes allocate nothing either.
#[test]
fn warmed_up_tracker_reads_a_federation_without_allocating() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let page = data::read(&data::dir().join("federate/prometheus-2.42-federate.prom"));
    // Each target's samples carry its scrape's timestamp; move them by 1 s per scrape.
    let shifted = |i: i64| -> String {
        page.lines()
            .map(|line| match line.rsplit_once(' ') {
                Some((head, ts)) if !line.starts_with('#') => {
                    format!("{head} {}\n", ts.parse::<i64>().unwrap() + 1000 * i)
                }
                _ => format!("{line}\n"),
            })
            .collect()
    };
    let base: i64 = page
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.rsplit(' ').next()?.parse().ok())
        .max()
        .unwrap();
    let pages: Vec<String> = (0..300).map(shifted).collect();
    let mut tracker = promrate::Tracker::new([]);
    // A minute of history: the windows reach their steady size during the warm-up.
    tracker
        .normalize_names(true)
        .infer_counters(true)
        .retention(chrono::TimeDelta::minutes(1));
    let t0 = chrono::DateTime::from_timestamp_millis(base).unwrap();
    // The monitor asks twice per Prometheus scrape: every point is served twice.
    let at = |i: usize| t0 + chrono::TimeDelta::milliseconds(500 * i as i64 + 1);
    for i in 0..400 {
        tracker.ingest(&pages[i / 2], at(i)).unwrap();
    }
    let counters = tracker.series().filter(|s| s.counter().is_some()).count();
    let (allocations, (samples, repeated)) = count(|| {
        (400..600).fold((0, 0), |(samples, repeated), i| {
            let report = tracker.ingest(&pages[i / 2], at(i)).unwrap();
            (samples + report.samples, repeated + report.repeated)
        })
    });
    assert_eq!(allocations, 0, "{allocations} allocations over 200 scrapes");
    let tracked = tracker.len();
    assert_eq!((samples, repeated), (100 * tracked, 100 * tracked));
    // Every `_total`, `_bucket`, `_count` and `_sum` series is a counter; only the three
    // gauges of each of the two instances are not.
    assert_eq!(tracked - counters, 6, "{tracked} series, {counters} counters");
}

/// An OpenMetrics 2.0 page of `n` histograms (classic and native buckets, start
/// timestamps, two exemplars each) and `n` counters, one label group each.
fn openmetrics2_page(n: usize) -> String {
    let mut page = String::from("# TYPE h histogram\n");
    for k in 0..n {
        page += &format!(
            "h{{path=\"/a\\\\{k}\"}} {{count:17,sum:3.5,schema:0,zero_threshold:1e-4,zero_count:0,\
             positive_spans:[0:2],positive_buckets:[5,12],bucket:[0.1:8,1.0:11,+Inf:17]}} \
             st@1520430000.123 # {{trace_id=\"a\"}} 0.67 1520879607.789 # {{}} 1.2 1520879608.5\n"
        );
    }
    page += "# TYPE c_total counter\n";
    for k in 0..n {
        page += &format!("c_total{{\"service.name\"=\"s{k}\"}} {k} 1520879607.789 st@1520430000.123\n");
    }
    page + "# EOF\n"
}

/// Reads everything an OpenMetrics 2.0 sample offers: composite fields, native buckets,
/// start timestamps, every exemplar.
fn consume_openmetrics2(entries: promrate::text::Entries<'_>) -> (usize, f64) {
    let (mut samples, mut sum) = (0, 0.0);
    for entry in entries {
        let s = match entry {
            Ok(promrate::Entry::Sample(s)) => s,
            Ok(_) => continue,
            Err(e) => panic!("{e}"),
        };
        samples += 1;
        sum += s.start_timestamp_ms().unwrap_or(0) as f64 + s.name_unescaped().len() as f64;
        for (name, value) in s.labels().iter_unescaped() {
            sum += name.len() as f64 + value.unescaped_bytes().count() as f64;
        }
        if let Some(c) = s.composite() {
            sum += c.count() + c.sum();
            sum += c
                .buckets()
                .into_iter()
                .flatten()
                .map(|(le, v)| le.min(1e9) + v)
                .sum::<f64>();
            if let Some(n) = c.native() {
                sum += f64::from(n.schema()) + n.zero_threshold() + n.zero_count();
                sum += n.positive_spans().map(|s| f64::from(s.length)).sum::<f64>();
                sum += n.positive_buckets().sum::<f64>();
            }
        }
        for ex in s.exemplars() {
            sum += ex.value() + ex.timestamp_ms().unwrap_or(0) as f64 + ex.labels().len() as f64;
        }
    }
    (samples, sum)
}

#[test]
fn openmetrics2_allocates_nothing_per_sample() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let format = promrate::Format::OpenMetrics2;
    let (small, large) = (openmetrics2_page(100), openmetrics2_page(2_000));
    // Line by line (no family bookkeeping): nothing at all.
    for page in [&small, &large] {
        let parser = promrate::Parser::new(format).strict(false);
        let (allocations, (samples, _)) = count(|| consume_openmetrics2(parser.parse(page)));
        assert_eq!(allocations, 0, "{allocations} allocations for {samples} samples");
    }
    // Strict: the validator's amortised, doubling collections (label groups, names) only.
    let parser = promrate::Parser::new(format);
    let (few, _) = count(|| consume_openmetrics2(parser.parse(&small)));
    let (many, (samples, _)) = count(|| consume_openmetrics2(parser.parse(&large)));
    assert!(
        many <= few + 16,
        "{many} allocations for {samples} samples ({few} for a twentieth)"
    );
    println!(
        "openmetrics 2.0: 0 allocations line by line; strict {few} for 200 samples, {many} for {samples}"
    );
}

/// The benchmark's pages as OpenMetrics 2.0 (each sample one line, sorted by name, every
/// family of unknown type), read strictly: the validator's collections are made once per
/// page with room for a page's usual families and groups, so a real page of thousands of
/// samples costs a handful of allocations, whatever its size.
#[test]
fn strict_openmetrics2_real_pages_allocate_per_page_not_per_sample() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let parser = promrate::Parser::new(promrate::Format::OpenMetrics2);
    for page in [
        "corpus/node_exporter-e2e-output.txt",
        "corpus/cadvisor-prometheus_metrics.txt",
        "corpus/prometheus-textparse-alltypes.237mfs.prom.txt",
        "vllm/vllm-0.33-v1-single-t0.prom",
    ] {
        let text = data::read(&data::dir().join(page));
        let mut lines: Vec<(String, String)> = promrate::parse(&text)
            .filter_map(|e| e.ok()?.into_sample())
            .map(|s| {
                let mut line = String::new();
                s.write_openmetrics2(&mut line).unwrap();
                (s.name().to_string(), line)
            })
            .collect();
        lines.sort_by(|a, b| a.0.cmp(&b.0));
        let om2: String = lines
            .into_iter()
            .map(|(_, line)| line)
            .chain(["# EOF\n".to_string()])
            .collect();
        let (allocations, (samples, _)) = count(|| consume_openmetrics2(parser.parse(&om2)));
        // The validator's collections, made once (4 to 7 here: a family of more than 64
        // groups, or a page whose order breaks, adds a doubling).
        assert!(
            allocations <= 8,
            "{page}: {allocations} allocations for {samples} samples"
        );
        assert!(samples > 200, "{page}: {samples}");
        println!("{page} as OpenMetrics 2.0, strict: {allocations} allocations for {samples} samples");
    }
}

/// A tracker reading an OpenMetrics 2.0 page (strict) allocates nothing per sample once
/// warm: each composite value's classic series come from the position cache, and only
/// the validator's per-page collections (amortised) allocate.
#[test]
fn warmed_up_tracker_reads_openmetrics2_composites_without_allocating_per_sample() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let t0 = chrono::DateTime::from_timestamp(1_764_480_500, 0).unwrap();
    let at = |i: i64| t0 + chrono::TimeDelta::seconds(2 * i);
    let mut per_page = Vec::new();
    for n in [50, 1_000] {
        let page = openmetrics2_page(n);
        let mut tracker = promrate::Tracker::new([]);
        tracker.read_as(promrate::Format::OpenMetrics2);
        for i in 0..300 {
            tracker.ingest(&page, at(i)).unwrap();
        }
        // Three buckets, a count and a sum per histogram, and a counter.
        assert_eq!(tracker.len(), 6 * n);
        let (allocations, samples) = count(|| {
            (300..320)
                .map(|i| tracker.ingest(&page, at(i)).unwrap().samples)
                .sum::<usize>()
        });
        // The counters' fixed timestamps repeat: their points are not new samples.
        assert_eq!(samples, 20 * 5 * n);
        // The strict validator's own (amortised, per page: a few doublings of its sets).
        let parser = promrate::Parser::new(promrate::Format::OpenMetrics2);
        let (validator, _) = count(|| {
            (0..20)
                .map(|_| consume_openmetrics2(parser.parse(&page)).0)
                .sum::<usize>()
        });
        assert_eq!(
            allocations, validator,
            "{n} histograms: the tracker's own allocations"
        );
        per_page.push(allocations / 20);
    }
    println!(
        "openmetrics 2.0 tracker: {per_page:?} allocations a page of 50 and 1,000 histograms \
         (the strict validator's), 0 of its own"
    );
}

/// A page read in chunks ([`promrate::Tracker::ingest_chunks`]) allocates nothing once
/// warm either: its lines are read in place, a line cut between two chunks goes to a
/// buffer the tracker keeps, and the unmatched report's names are gathered once.
#[test]
fn warmed_up_tracker_reads_chunks_without_allocating() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let page = data::read(&data::dir().join("vllm/vllm-0.33-v1-single-t0.prom"));
    let selectors = [
        promrate::Selector::parse("vllm:generation_tokens_total").unwrap(),
        promrate::Selector::parse(r#"{__name__=~"vllm:.*", model_name=~"meta-llama/.*"}"#).unwrap(),
    ];
    let mut tracker = promrate::Tracker::new(selectors);
    let t0 = chrono::DateTime::from_timestamp(1_764_480_500, 0).unwrap();
    let at = |i: i64| t0 + chrono::TimeDelta::seconds(2 * i);
    let read = |tracker: &mut promrate::Tracker, i: i64| {
        let mut reading = tracker.ingest_chunks(at(i)).unwrap();
        // Chunks as a socket hands them out: cut anywhere, lines and characters too.
        for chunk in page.as_bytes().chunks(1000 + i as usize % 7) {
            reading.push(chunk);
        }
        reading.finish().unwrap().samples
    };
    for i in 0..400 {
        read(&mut tracker, i);
    }
    let tracked = tracker.len();
    let (allocations, samples) = count(|| (400..500).map(|i| read(&mut tracker, i)).sum::<usize>());
    assert_eq!(allocations, 0, "{allocations} allocations over 100 scrapes");
    assert!(
        tracked > 100 && samples == 100 * tracked,
        "{tracked} series, {samples} samples"
    );
    // With max_series every sample is held back until the page is read (32 bytes each,
    // in a buffer kept at its size): still nothing per sample. (The warm-up runs past
    // scrape 512, where each series' column of 300 points last grows.)
    tracker.max_series(100_000);
    for i in 500..610 {
        read(&mut tracker, i);
    }
    let (allocations, _) = count(|| (610..710).map(|i| read(&mut tracker, i)).sum::<usize>());
    assert_eq!(
        allocations, 0,
        "{allocations} allocations over 100 held-back scrapes"
    );
}

/// A histogram of `bounds` buckets per instance, for `instances` instances, at scrape `n`.
fn histogram_page(instances: usize, bounds: usize, n: u64) -> String {
    let mut page = String::from("# TYPE rq_seconds histogram\n");
    for i in 0..instances {
        for b in 0..bounds {
            let le = if b + 1 == bounds {
                "+Inf".to_string()
            } else {
                format!("{}", b + 1)
            };
            page += &format!(
                "rq_seconds_bucket{{instance=\"{i}\",le=\"{le}\"}} {}\n",
                n * (b as u64 + 1)
            );
        }
        page += &format!("rq_seconds_count{{instance=\"{i}\"}} {}\n", n * bounds as u64);
        page += &format!("rq_seconds_sum{{instance=\"{i}\"}} {n}\n");
    }
    page
}

/// `quantile` folds each bucket series into its group's list: what it allocates grows with
/// the groups, not with the buckets.
#[test]
fn a_quantile_allocates_per_group_not_per_bucket() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let family = promrate::Selector::parse("rq_seconds").unwrap();
    let t0 = chrono::DateTime::from_timestamp(1_764_480_500, 0).unwrap();
    let at = |i: i64| t0 + chrono::TimeDelta::seconds(10 * i);
    let allocations_with = |bounds: usize| {
        let mut tracker = promrate::Tracker::new([family.clone()]);
        for i in 1..=3 {
            tracker
                .ingest(&histogram_page(4, bounds, i as u64), at(i))
                .unwrap();
        }
        let query = promrate::Query::new(&family, promrate::Estimator::Increase)
            .window(chrono::TimeDelta::seconds(30))
            .by(["instance"])
            .quantile(0.5);
        let (allocations, answer) = count(|| tracker.evaluate(&query).unwrap());
        assert_eq!(answer.groups.len(), 4);
        assert!(answer.groups.iter().all(|g| g.value.is_ok()), "{answer:?}");
        allocations
    };
    let (few, many) = (allocations_with(8), allocations_with(256));
    // 32 times the buckets: each group's list grows by doubling (5 more times), no more.
    assert!(
        many <= few + 4 * 6,
        "{few} allocations with 8 bounds, {many} with 256"
    );
}

/// Writing values as exporters write them (`GoFloat`, `write::sample`) into a buffer with
/// room allocates nothing: a fleet's page writes millions of them at every scrape.
#[test]
fn writing_floats_allocates_nothing() {
    use std::fmt::Write as _;
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let values = [
        0.0,
        -0.0,
        1.5,
        680175.0,
        4_404_533.0,
        1e-7,
        2351.5699999999997,
        -673_136_162_761_606.2,
        5e-324,
        f64::MAX,
        f64::NAN,
        f64::NEG_INFINITY,
    ];
    let mut out = String::with_capacity(4096);
    let (allocated, ()) = count(|| {
        for v in values {
            write!(out, "{} ", promrate::text::write::GoFloat(v)).unwrap();
            promrate::text::write::sample(&mut out, "x_total", &[("a", "b")], v, Some(5)).unwrap();
        }
    });
    assert!(
        out.contains("4.404533e+06 ") && out.contains("-673136162761606.2 "),
        "{out}"
    );
    assert_eq!(allocated, 0, "writing {} values", values.len());
}
