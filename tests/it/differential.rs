//! Differential test against the reference parser, Python `prometheus_client`: every real
//! page yields exactly the samples it yields (names, label sets, values bit for bit,
//! timestamps), in the same order.

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;

use promrate::{Entry, Format, MetricType, Parser};

use crate::{shared, text_corpus};

#[derive(Debug, PartialEq)]
struct Row {
    name: String,
    /// Sorted by name: the OpenMetrics reference reorders some label sets.
    labels: Vec<(String, String)>,
    value_bits: u64,
    timestamp_ms: Option<i64>,
}

fn bits(v: f64) -> u64 {
    if v.is_nan() {
        f64::NAN.to_bits()
    } else {
        v.to_bits()
    }
}

/// `python3` with prometheus_client, or `None` after saying why the test is skipped.
pub fn reference_available(test: &str) -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import prometheus_client"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        if std::env::var_os("CI").is_some() {
            panic!(
                "{test}: python3 with prometheus_client is required in CI (pip install prometheus_client)"
            );
        }
        eprintln!("SKIPPED {test}: python3 with prometheus_client not found (pip install prometheus_client)");
    }
    ok
}

fn reference(format: Format, path: &Path) -> Result<Vec<Row>, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/dump_samples.py");
    let fmt = if format == Format::OpenMetrics {
        "openmetrics"
    } else {
        "text"
    };
    let out = Command::new("python3")
        .arg(&script)
        .arg(fmt)
        .arg(path)
        .output()
        .expect("python3 runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut rows = Vec::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if let Some(err) = v.get("error") {
            return Err(err.to_string());
        }
        let value: f64 = match v["value"].as_str().unwrap() {
            "nan" => f64::NAN,
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            other => other.parse().unwrap(),
        };
        rows.push(Row {
            name: v["name"].as_str().unwrap().to_string(),
            labels: v["labels"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                .collect::<std::collections::BTreeMap<_, _>>()
                .into_iter()
                .collect(),
            value_bits: bits(value),
            timestamp_ms: v["timestamp_ms"].as_i64(),
        });
    }
    Ok(rows)
}

fn ours(format: Format, text: &str) -> Result<Vec<Row>, String> {
    // prometheus_client's text parser renames the samples of a counter family whose name
    // lacks `_total` to `<name>_total`; apply the same rename to compare like with like.
    let mut renamed_counters = HashSet::new();
    let mut rows = Vec::new();
    for entry in Parser::new(format).parse(text) {
        match entry.map_err(|e| e.to_string())? {
            Entry::Type {
                name,
                kind: MetricType::Counter,
            } if format == Format::PrometheusText && !name.ends_with("_total") => {
                renamed_counters.insert(name.to_string());
            }
            Entry::Sample(s) => {
                let mut name = s.name().to_string();
                if renamed_counters.contains(&name) {
                    name.push_str("_total");
                }
                rows.push(Row {
                    name,
                    labels: s
                        .labels()
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.unescaped().into_owned()))
                        .collect::<std::collections::BTreeMap<_, _>>()
                        .into_iter()
                        .collect(),
                    value_bits: bits(s.value()),
                    timestamp_ms: s.timestamp_ms(),
                });
            }
            _ => {}
        }
    }
    Ok(rows)
}

#[test]
fn same_samples_as_prometheus_client() {
    let Some(dir) = shared::dir("differential vs prometheus_client") else {
        return;
    };
    if !reference_available("differential vs prometheus_client") {
        return;
    }
    let mut pages = 0;
    let mut samples = 0;
    for sub in ["corpus", "vllm"] {
        let mut paths: Vec<_> = std::fs::read_dir(dir.join(sub))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        paths.sort();
        for path in paths {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if !(name.ends_with(".txt") || name.ends_with(".prom")) {
                continue;
            }
            let format = text_corpus::format_of(&name);
            let text = shared::read(&path);
            match (reference(format, &path), ours(format, &text)) {
                (Ok(want), Ok(got)) => {
                    assert_eq!(got.len(), want.len(), "{name}: sample count");
                    for (g, w) in got.iter().zip(&want) {
                        assert_eq!(g, w, "{name}");
                    }
                    samples += got.len();
                }
                (Err(_), Err(_)) => {}
                (want, got) => panic!("{name}: reference {:?} vs ours {:?}", want.err(), got.err()),
            }
            pages += 1;
        }
    }
    println!("differential: {pages} pages, {samples} samples identical to prometheus_client");
    assert!(pages >= 15);
}
