//! Differential test against the reference parser, Python `prometheus_client`: every real
//! page yields exactly the samples it yields (names, label sets, values bit for bit,
//! timestamps), in the same order. Its readings are committed as golden files
//! (`tests/data/reference`), so plain `cargo test` needs no Python; an ignored test checks
//! the golden files against a live prometheus_client of the pinned version.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use promrate::{Entry, Format, MetricType, Parser};

use crate::{data, text_corpus};

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

/// The golden file of one page: prometheus_client's samples, or its error message.
fn reference(page: &str, format: Format) -> Result<Vec<Row>, String> {
    let path = data::dir().join("reference").join(format!("{page}.jsonl"));
    let golden = data::read(&path);
    let mut lines = golden.lines();
    let header: serde_json::Value = serde_json::from_str(lines.next().expect("header")).unwrap();
    assert_eq!(header["page"], page, "{}", path.display());
    let want_format = if format == Format::OpenMetrics {
        "openmetrics"
    } else {
        "text"
    };
    assert_eq!(header["format"], want_format, "{}", path.display());
    assert_eq!(
        header["reference"],
        format!("prometheus_client {}", pinned_version()),
        "{}: regenerate with tests/py/regenerate_reference.sh --write",
        path.display()
    );
    let mut rows = Vec::new();
    for line in lines {
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

/// The prometheus_client version the golden files were made with.
fn pinned_version() -> String {
    let requirements = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/requirements.txt");
    data::read(&requirements)
        .lines()
        .find_map(|l| l.strip_prefix("prometheus_client=="))
        .expect("prometheus_client pinned in tests/py/requirements.txt")
        .trim()
        .to_string()
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
    let (mut pages, mut samples, mut rejected) = (0, 0, 0);
    for (name, text) in data::pages() {
        let format = text_corpus::format_of(&name);
        match (reference(&name, format), ours(format, &text)) {
            (Ok(want), Ok(got)) => {
                assert_eq!(got.len(), want.len(), "{name}: sample count");
                for (g, w) in got.iter().zip(&want) {
                    assert_eq!(g, w, "{name}");
                }
                samples += got.len();
            }
            (Err(_), Err(_)) => rejected += 1,
            (want, got) => panic!("{name}: reference {:?} vs ours {:?}", want.err(), got.err()),
        }
        pages += 1;
    }
    assert!(pages >= 18, "only {pages} pages");
    assert!(samples >= 13_000, "only {samples} samples");
    println!(
        "reference parser: {pages} pages ({rejected} rejected by both), {samples} samples identical to \
         prometheus_client {}",
        pinned_version()
    );
}

/// The golden files are what the pinned prometheus_client really reads today.
#[test]
#[ignore = "needs python3 with the pinned prometheus_client (pip install -r tests/py/requirements.txt); \
            run with `cargo test -- --include-ignored`"]
fn golden_files_are_what_prometheus_client_reads() {
    let out = std::env::temp_dir().join(format!("promrate-reference-{}", std::process::id()));
    let pages: Vec<PathBuf> = data::pages()
        .iter()
        .map(|(name, _)| {
            let sub = if data::dir().join("corpus").join(name).is_file() {
                "corpus"
            } else {
                "vllm"
            };
            data::dir().join(sub).join(name)
        })
        .collect();
    let status = Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/dump_samples.py"))
        .arg(&out)
        .args(&pages)
        .status()
        .expect("python3 runs");
    assert!(status.success(), "dump_samples.py: {status}");
    for page in &pages {
        let file = format!("{}.jsonl", page.file_name().unwrap().to_string_lossy());
        let live = data::read(&out.join(&file));
        let golden = data::read(&data::dir().join("reference").join(&file));
        assert!(
            live == golden,
            "{file} differs from prometheus_client: tests/py/regenerate_reference.sh shows how"
        );
    }
    let _ = std::fs::remove_dir_all(&out);
    println!(
        "reference golden files: {} pages identical to a live prometheus_client {}",
        pages.len(),
        pinned_version()
    );
}

/// `text::write::GoFloat` writes every float as prometheus_client's `floatToGoString` does
/// (the writer's pages then look like the exporters'): random bit patterns, whole numbers,
/// powers of ten near the switch to Go's exponent form, and halves and quarters above 2^44,
/// where two shortest forms tie and the even digit is chosen.
#[test]
#[ignore = "needs python3 with the pinned prometheus_client (pip install -r tests/py/requirements.txt); \
            run with `cargo test -- --include-ignored`"]
fn go_floats_are_what_prometheus_client_writes() {
    use std::io::Write as _;
    use std::process::Stdio;

    let mut state: u64 = 0x853c_49e6_748f_ea9b;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut values = vec![0.0, -0.0, 5e-324, f64::MAX, 999_999.0, 1e6, 1e16, 1e-4, 1e-5];
    for i in 0..200_000u64 {
        let bits = next();
        let v = match i % 4 {
            0 => f64::from_bits(bits),
            1 => (bits % (1 << 60)) as f64 * if bits >> 63 == 1 { -1.0 } else { 1.0 },
            2 => 10f64.powi((bits % 40) as i32 - 20) * (1.0 + (bits >> 40) as f64 / 16_777_216.0),
            _ => ((bits % (1 << 52)) as f64 + [0.25, 0.5, 0.75, 0.125][(bits >> 60) as usize % 4]) * 8.0,
        };
        if v.is_finite() {
            values.push(v);
        }
    }
    let script = "import sys\nfrom prometheus_client.utils import floatToGoString\n\
                  for line in sys.stdin:\n    print(floatToGoString(float.fromhex(line)))\n";
    let mut python = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let input: String = values.iter().map(|v| format!("{}\n", hex_float(*v))).collect();
    let mut stdin = python.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()).unwrap());
    let output = python.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(output.status.success(), "python3: {}", output.status);
    let theirs = String::from_utf8(output.stdout).unwrap();
    let mut compared = 0;
    for (v, want) in values.iter().zip(theirs.lines()) {
        let ours = promrate::text::write::GoFloat(*v).to_string();
        assert_eq!(ours, want, "{v:e} ({})", hex_float(*v));
        compared += 1;
    }
    assert_eq!(compared, values.len());
    println!(
        "GoFloat: {compared} values written as prometheus_client {} writes them",
        pinned_version()
    );
}

/// A finite float in Python's `float.hex` form, exactly.
fn hex_float(v: f64) -> String {
    let bits = v.to_bits();
    let sign = if bits >> 63 == 1 { "-" } else { "" };
    let exponent = ((bits >> 52) & 0x7ff) as i64;
    let mantissa = bits & ((1 << 52) - 1);
    match exponent {
        0 => format!("{sign}0x0.{mantissa:013x}p-1022"),
        _ => format!("{sign}0x1.{mantissa:013x}p{}", exponent - 1023),
    }
}
