//! Parsing throughput on real pages: promrate against two peer crates in the same group,
//! so criterion's report reads as ratios. Every iteration counts samples and labels, so
//! no parser can skip work the caller would do.
//!
//! Run: `cargo bench --bench parse`. Reads its pages from `tests/data`.
//!
//! `PROMRATE_REPEAT="PAGE FORMAT N"` in the environment parses one page N times instead of
//! running criterion, as `formats` does (FORMAT `text-0.0.4`, `text-0.0.4-samples` (the
//! page without its `#` lines), `text-1.0.0-quoted`, `openmetrics-2.0`, `openmetrics-2.0-lenient` or
//! `openmetrics-2.0-as-written`, the last three on the page converted):
//! `benches/formats_instructions.sh` counts the instructions of a parse that way.

use std::hint::black_box;

mod common;

use common::read;
use criterion::{criterion_group, Criterion, Throughput};

const PAGES: &[&str] = &[
    "corpus/node_exporter-e2e-output.txt",
    "corpus/cadvisor-prometheus_metrics.txt",
    "corpus/prometheus-textparse-alltypes.237mfs.prom.txt",
    "vllm/vllm-0.33-v1-single-t0.prom",
];

/// (samples, labels) as promrate sees them; panics on any error.
fn promrate_counts(text: &str) -> (usize, usize) {
    let mut samples = 0;
    let mut labels = 0;
    for entry in promrate::parse(text) {
        if let promrate::Entry::Sample(s) = entry.expect("real pages parse") {
            samples += 1;
            labels += s.labels().len();
            black_box(s.value());
        }
    }
    (samples, labels)
}

/// prometheus-parse folds histogram and summary lines into one value per series.
fn prometheus_parse_counts(text: &str) -> Option<(usize, usize)> {
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).ok()?;
    let mut samples = 0;
    let mut labels = 0;
    for s in &scrape.samples {
        let points = match &s.value {
            prometheus_parse::Value::Histogram(b) => b.len(),
            prometheus_parse::Value::Summary(q) => q.len(),
            _ => 1,
        };
        samples += points;
        labels += s.labels.len() * points;
        black_box(&s.value);
    }
    Some((samples, labels))
}

fn prom_text_format_parser_counts(text: &str) -> Option<(usize, usize)> {
    let scrape = prom_text_format_parser::Scrape::parse(text).ok()?;
    let mut samples = 0;
    let mut labels = 0;
    for metric in &scrape.metrics {
        for s in &metric.samples {
            samples += 1;
            labels += s.labels.len();
            black_box(&s.value);
        }
    }
    Some((samples, labels))
}

fn parse(c: &mut Criterion) {
    for page in PAGES {
        let text = read(page);
        let ours = promrate_counts(&text);
        let name = page.rsplit('/').next().unwrap();
        // Say up front which peers return every sample (the comparison that counts).
        for (peer, counts) in [
            ("prometheus-parse", prometheus_parse_counts(&text)),
            ("prom_text_format_parser", prom_text_format_parser_counts(&text)),
        ] {
            let verdict = match counts {
                None => "fails on this page".to_string(),
                Some(c) if c.0 == ours.0 => format!("returns all {} samples", c.0),
                Some(c) => format!("returns {} of {} samples", c.0, ours.0),
            };
            eprintln!("{name}: {peer} {verdict}");
        }
        let mut group = c.benchmark_group(format!("parse/{name}"));
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function("promrate", |b| b.iter(|| promrate_counts(black_box(&text))));
        if prometheus_parse_counts(&text).is_some() {
            group.bench_function("prometheus-parse", |b| {
                b.iter(|| prometheus_parse_counts(black_box(&text)))
            });
        }
        if prom_text_format_parser_counts(&text).is_some() {
            group.bench_function("prom_text_format_parser", |b| {
                b.iter(|| prom_text_format_parser_counts(black_box(&text)))
            });
        }
        group.finish();
    }
}

/// Parse and filter with a three-matcher selector (one regex), against parsing alone.
fn filter(c: &mut Criterion) {
    let selector = promrate::Selector::parse(
        r#"{__name__=~"vllm:(generation|prompt)_tokens_total|node_cpu_seconds_total", mode!="idle", model_name!="none"}"#,
    )
    .expect("valid selector");
    for page in [
        "corpus/node_exporter-e2e-output.txt",
        "vllm/vllm-0.33-v1-single-t0.prom",
    ] {
        let text = read(page);
        let name = page.rsplit('/').next().unwrap();
        let matched = promrate::parse(&text)
            .filter_map(|e| e.ok()?.into_sample())
            .filter(|s| selector.matches(s))
            .count();
        eprintln!("{name}: selector matches {matched} samples");
        assert!(matched > 0);
        let mut group = c.benchmark_group(format!("filter/{name}"));
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function("parse", |b| b.iter(|| promrate_counts(black_box(&text))));
        group.bench_function("parse+select", |b| {
            b.iter(|| {
                let mut matched = 0;
                for entry in promrate::parse(black_box(&text)) {
                    if let promrate::Entry::Sample(s) = entry.expect("real pages parse") {
                        matched += usize::from(selector.matches(&s));
                        black_box(s.value());
                    }
                }
                matched
            })
        });
        group.finish();
    }
}

/// The page's samples as an OpenMetrics 2.0 page (each sample one line, written by
/// `Sample::write_openmetrics2`, metadata left out so that every family is of unknown type,
/// which 2.0 lets hold any name; lines sorted by name, stably, as 2.0 keeps a family's
/// lines together where 0.0.4 interleaves a summary's `_sum` and quantiles) and as a text
/// 1.0.0 page with every name quoted (`{"name","label"="v"} 1`, the shape UTF-8 names take).
fn converted(text: &str) -> (String, String) {
    let mut om2_lines = Vec::new();
    let mut quoted = String::new();
    for sample in promrate::parse(text).filter_map(|e| e.ok()?.into_sample()) {
        let mut line = String::new();
        sample.write_openmetrics2(&mut line).unwrap();
        om2_lines.push((sample.name(), line));
        quoted.push_str(&format!("{{\"{}\"", sample.name_unescaped()));
        for (name, value) in sample.labels() {
            quoted.push_str(&format!(",\"{name}\"=\"{}\"", value.raw()));
        }
        quoted.push_str(&format!(
            "}} {}\n",
            promrate::text::write::GoFloat(sample.value())
        ));
    }
    om2_lines.sort_by_key(|(name, _)| *name);
    let mut om2: String = om2_lines.into_iter().map(|(_, line)| line).collect();
    om2.push_str("# EOF\n");
    (om2, quoted)
}

/// The page as an OpenMetrics 2.0 exporter writes the same families (client_java's 2.0
/// writer): its metadata kept (`# HELP`, `# TYPE`), counters and gauges one line a sample,
/// and each histogram's and summary's series of one label group as one composite value
/// (`x{..} {count:..,sum:..,bucket:[le:v,...]}`), as 2.0 writes them: their `_bucket`,
/// `_count` and `_sum` lines are not written in 2.0.
fn as_exporters_write(text: &str) -> String {
    use promrate::text::write::{classic_composite, openmetrics2_series};
    use promrate::text::CompositeKind;
    use promrate::{Entry, MetricType};
    use std::fmt::Write;
    /// One label group of a histogram or summary: its labels (without `le` or
    /// `quantile`), count, sum and parts (bound or quantile, value).
    struct Group {
        labels: Vec<(String, String)>,
        count: f64,
        sum: f64,
        parts: Vec<(f64, f64)>,
    }
    let mut out = String::new();
    let mut kind = MetricType::Unknown;
    let mut family = String::new();
    let mut groups: Vec<Group> = Vec::new();
    let flush = |out: &mut String, family: &str, groups: &mut Vec<Group>, kind: MetricType| {
        for g in groups.drain(..) {
            openmetrics2_series(
                out,
                family,
                g.labels.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            )
            .unwrap();
            let kind = if kind == MetricType::Histogram {
                CompositeKind::Histogram
            } else {
                CompositeKind::Summary
            };
            out.push(' ');
            classic_composite(out, kind, g.count, g.sum, g.parts).unwrap();
            out.push('\n');
        }
    };
    for entry in promrate::parse(text) {
        match entry.expect("real pages parse") {
            Entry::Help { name, text } => {
                flush(&mut out, &family, &mut groups, kind);
                // OpenMetrics escapes quotes in help texts too.
                write!(out, "# HELP {name} ").unwrap();
                promrate::text::write::escaped(&mut out, &text.unescaped(), true).unwrap();
                out.push('\n');
            }
            Entry::Type { name, kind: k } => {
                flush(&mut out, &family, &mut groups, kind);
                (family, kind) = (name.to_string(), k);
                let spelled = k.as_str();
                writeln!(out, "# TYPE {name} {spelled}").unwrap();
            }
            Entry::Sample(s) if matches!(kind, MetricType::Histogram | MetricType::Summary) => {
                let part = if kind == MetricType::Histogram {
                    "le"
                } else {
                    "quantile"
                };
                let labels: Vec<(String, String)> = s
                    .labels()
                    .iter_unescaped()
                    .filter(|(k, _)| *k != part)
                    .map(|(k, v)| (k.to_string(), v.unescaped().into_owned()))
                    .collect();
                let at = match groups.iter().position(|g| g.labels == labels) {
                    Some(at) => at,
                    None => {
                        groups.push(Group {
                            labels,
                            count: 0.0,
                            sum: 0.0,
                            parts: Vec::new(),
                        });
                        groups.len() - 1
                    }
                };
                let group = &mut groups[at];
                let name = s.name();
                if name.ends_with("_count") && name.len() == family.len() + 6 {
                    group.count = s.value();
                } else if name.ends_with("_sum") && name.len() == family.len() + 4 {
                    group.sum = s.value();
                } else {
                    let bound = s.labels().get(part).expect("a bound").raw();
                    let bound = bound
                        .parse()
                        .unwrap_or_else(|_| panic!("{part}={bound:?} is a number"));
                    group.parts.push((bound, s.value()));
                }
            }
            Entry::Sample(s) => s.write_openmetrics2(&mut out).unwrap(),
            _ => {}
        }
    }
    flush(&mut out, &family, &mut groups, kind);
    out.push_str("# EOF\n");
    out
}

/// Samples and labels of an OpenMetrics 2.0 page as the classic series they stand for (a
/// composite value's buckets or quantiles, its count and its sum), each value read;
/// panics on any error.
fn classic_counts(text: &str) -> (usize, usize) {
    let mut samples = 0;
    let mut labels = 0;
    for entry in promrate::Parser::new(promrate::Format::OpenMetrics2).parse(text) {
        let promrate::Entry::Sample(s) = entry.expect("converted pages parse") else {
            continue;
        };
        let group = s.labels().len();
        match s.composite() {
            Some(value) => {
                let parts = value
                    .buckets()
                    .or_else(|| value.quantiles())
                    .expect("buckets or quantiles");
                let mut n = 0;
                for (bound, v) in parts {
                    black_box((bound, v));
                    n += 1;
                }
                black_box((value.count(), value.sum()));
                samples += n + 2;
                labels += (n + 2) * group + n;
            }
            None => {
                samples += 1;
                labels += group;
                black_box(s.value());
            }
        }
    }
    (samples, labels)
}

/// Samples of a page in `format`; panics on any error.
fn counts_in(format: promrate::Format, text: &str) -> (usize, usize) {
    let mut samples = 0;
    let mut labels = 0;
    for entry in promrate::Parser::new(format).parse(text) {
        if let promrate::Entry::Sample(s) = entry.expect("converted pages parse") {
            samples += 1;
            labels += s.labels().len();
            black_box(s.value());
        }
    }
    (samples, labels)
}

/// The same pages in the three formats, timed per sample: text 0.0.4 (the fast path),
/// text 1.0.0 with quoted names (the general path), OpenMetrics 2.0 one line a sample
/// (every family of unknown type: each bucket its own group) and as 2.0 exporters write
/// the same families (histograms and summaries as composite values, whose bounds are
/// numbers to read where 0.0.4's are label text).
fn formats(c: &mut Criterion) {
    use promrate::Format;
    for page in PAGES {
        let text = read(page);
        let (om2, quoted) = converted(&text);
        let ours = promrate_counts(&text);
        assert_eq!(counts_in(Format::OpenMetrics2, &om2), ours);
        assert_eq!(counts_in(Format::PrometheusText, &quoted), ours);
        let name = page.rsplit('/').next().unwrap();
        let mut group = c.benchmark_group(format!("formats/{name}"));
        group.throughput(Throughput::Elements(ours.0 as u64));
        group.bench_function("text-0.0.4", |b| b.iter(|| promrate_counts(black_box(&text))));
        // The converted pages have no metadata: their per-sample peer is the page without
        // its `# HELP` and `# TYPE` lines (node_exporter's 1,228 families are 45% of its
        // lines), so that a ratio compares the same lines.
        let bare = samples_only(&text);
        group.bench_function("text-0.0.4-samples", |b| {
            b.iter(|| promrate_counts(black_box(&bare)))
        });
        group.bench_function("text-1.0.0-quoted", |b| {
            b.iter(|| counts_in(Format::PrometheusText, black_box(&quoted)))
        });
        group.bench_function("openmetrics-2.0", |b| {
            b.iter(|| counts_in(Format::OpenMetrics2, black_box(&om2)))
        });
        // Line by line, without the rules across lines: what the validator costs.
        let lenient = promrate::Parser::new(Format::OpenMetrics2).strict(false);
        group.bench_function("openmetrics-2.0-lenient", |b| {
            b.iter(|| lenient.parse(black_box(&om2)).filter(|e| e.is_ok()).count())
        });
        // The same families as a 2.0 exporter writes them: metadata, composite values.
        let written = as_exporters_write(&text);
        assert_eq!(classic_counts(&written), ours);
        group.bench_function("openmetrics-2.0-as-written", |b| {
            b.iter(|| classic_counts(black_box(&written)))
        });
        group.finish();
    }
}

/// The page without its comment lines (`# HELP`, `# TYPE`): the samples a converted page
/// holds, in the text format.
fn samples_only(text: &str) -> String {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .flat_map(|line| [line, "\n"])
        .collect()
}

/// One page parsed `N` times in one format, for an instruction count (`PROMRATE_REPEAT`).
fn repeat(spec: &str) {
    use promrate::Format;
    let [page, format, times] = spec.split(' ').collect::<Vec<_>>()[..] else {
        panic!("PROMRATE_REPEAT is \"PAGE FORMAT N\", got {spec:?}");
    };
    let text = read(page);
    let (om2, quoted) = converted(&text);
    let written = as_exporters_write(&text);
    let bare = samples_only(&text);
    if format == "openmetrics-2.0-as-written" {
        assert_eq!(
            classic_counts(&written),
            promrate_counts(&text),
            "the conversion keeps every sample"
        );
    }
    let times: usize = times.parse().expect("N is a count");
    let lenient = promrate::Parser::new(Format::OpenMetrics2).strict(false);
    let mut sink = 0;
    for _ in 0..times {
        sink += match format {
            "text-0.0.4" => promrate_counts(black_box(&text)).1,
            "text-0.0.4-samples" => promrate_counts(black_box(&bare)).1,
            "text-1.0.0-quoted" => counts_in(Format::PrometheusText, black_box(&quoted)).1,
            "openmetrics-2.0" => counts_in(Format::OpenMetrics2, black_box(&om2)).1,
            "openmetrics-2.0-lenient" => lenient.parse(black_box(&om2)).filter(|e| e.is_ok()).count(),
            "openmetrics-2.0-as-written" => classic_counts(black_box(&written)).1,
            other => panic!("unknown format {other:?}"),
        };
    }
    println!("{sink}");
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(3)).warm_up_time(std::time::Duration::from_secs(1));
    targets = parse, filter, formats
}

fn main() {
    if let Ok(spec) = std::env::var("PROMRATE_REPEAT") {
        repeat(&spec);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
