//! What the load generator saw while a real server was recorded
//! (`tests/data/realservers/*/truth.tsv.gz`, origins in `tests/data/SOURCES.md`): the
//! figures a replay of the recording is checked against, over any window of its scrapes.
//!
//! The file is tab-separated with a header line; one row per 10 ms in which anything
//! happened: `t_10ms` (Unix time in units of 10 ms: the row covers [t, t + 10 ms)),
//! `tokens_arrived`, `requests_finished`, `finished_generated_tokens`,
//! `finished_prompt_tokens`.

use std::fmt::Display;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;

/// The columns read, in the order of [`Totals`]' fields after the time.
const COLUMNS: [&str; 5] = [
    "t_10ms",
    "tokens_arrived",
    "requests_finished",
    "finished_generated_tokens",
    "finished_prompt_tokens",
];

/// A recording's truth, summed over windows with two binary searches: a test asks for one
/// window per scrape, and the vLLM file has about 12,000 rows.
pub struct Truth {
    /// Each row's time in Unix seconds, ascending.
    times: Vec<f64>,
    /// `sums[i]` is the total of the rows before row `i` (so `sums[0]` is zero), column by
    /// column: a window's totals are the difference of two of them. The counts are whole
    /// numbers far below 2^53, so the sums are exact.
    sums: Vec<[f64; 4]>,
}

/// What the client saw in a window.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Totals {
    /// Generated tokens that arrived (vLLM: streamed tokens as they came; llama.cpp: a
    /// response's tokens when it came, which is when the server counts them).
    pub tokens: f64,
    /// Requests that finished successfully.
    pub requests: f64,
    /// The generated tokens of those requests (counted at their end, not as they arrived).
    pub finished_generated_tokens: f64,
    /// Their prompt tokens.
    pub finished_prompt_tokens: f64,
}

/// Test code: a truth that cannot be read fails the test, naming its file.
fn fail(path: &Path, what: impl Display) -> ! {
    panic!("truth {}: {what}", path.display())
}

impl Truth {
    /// Reads a `truth.tsv.gz`; panics with the path if it cannot (a test's data is missing
    /// or damaged, and no test can go on).
    pub fn load(path: &Path) -> Truth {
        let file = File::open(path).unwrap_or_else(|e| fail(path, e));
        let mut lines = BufReader::new(MultiGzDecoder::new(file)).lines();
        let head = match lines.next() {
            Some(head) => head.unwrap_or_else(|e| fail(path, e)),
            None => fail(path, "empty"),
        };
        // By name, so that a file with more columns or another order still reads.
        let names: Vec<&str> = head.split('\t').collect();
        let columns = COLUMNS.map(|name| {
            names
                .iter()
                .position(|n| *n == name)
                .unwrap_or_else(|| fail(path, format!("no column {name:?} in {head:?}")))
        });
        let mut times = Vec::new();
        let mut sums = vec![[0.0; 4]];
        for (i, line) in lines.enumerate() {
            let row = i + 2;
            let line = line.unwrap_or_else(|e| fail(path, format!("line {row}: {e}")));
            let fields: Vec<&str> = line.split('\t').collect();
            let value = |column: usize| -> f64 {
                let field = fields
                    .get(columns[column])
                    .unwrap_or_else(|| fail(path, format!("line {row}: too few columns")));
                field
                    .trim()
                    .parse()
                    .unwrap_or_else(|e| fail(path, format!("line {row}: {:?}: {e}", COLUMNS[column])))
            };
            let t = value(0) / 100.0;
            if times.last().is_some_and(|&last| t < last) {
                fail(path, format!("line {row}: times are not in order"));
            }
            times.push(t);
            let last = sums[sums.len() - 1];
            sums.push([
                last[0] + value(1),
                last[1] + value(2),
                last[2] + value(3),
                last[3] + value(4),
            ]);
        }
        Truth { times, sums }
    }

    /// The totals over the rows with `start < t <= end` (t being the row's time in Unix
    /// seconds): consecutive windows add up without counting a row twice. A row stands for
    /// 10 ms, so a window's edges are blurred by up to that much. Zero if `end <= start`.
    pub fn between(&self, start_unix_s: f64, end_unix_s: f64) -> Totals {
        let first = self.times.partition_point(|&t| t <= start_unix_s);
        let after = self.times.partition_point(|&t| t <= end_unix_s).max(first);
        let (low, high) = (self.sums[first], self.sums[after]);
        Totals {
            tokens: high[0] - low[0],
            requests: high[1] - low[1],
            finished_generated_tokens: high[2] - low[2],
            finished_prompt_tokens: high[3] - low[3],
        }
    }
}

fn vllm_truth() -> PathBuf {
    crate::data::dir().join("realservers/vllm-0.32-cpu-restart/truth.tsv.gz")
}

/// The rows of a truth file, read the slow way.
fn rows(path: &Path) -> Vec<(f64, [f64; 4])> {
    let mut text = String::new();
    MultiGzDecoder::new(File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    text.lines()
        .skip(1)
        .map(|line| {
            let v: Vec<f64> = line.split('\t').map(|f| f.parse().unwrap()).collect();
            (v[0] / 100.0, [v[1], v[2], v[3], v[4]])
        })
        .collect()
}

fn brute_force(rows: &[(f64, [f64; 4])], start: f64, end: f64) -> Totals {
    let mut totals = Totals::default();
    for (_, v) in rows.iter().filter(|(t, _)| start < *t && *t <= end) {
        totals.tokens += v[0];
        totals.requests += v[1];
        totals.finished_generated_tokens += v[2];
        totals.finished_prompt_tokens += v[3];
    }
    totals
}

#[test]
fn windows_include_their_end_and_not_their_start() {
    let path = std::env::temp_dir().join(format!("vllm-monitor-truth-{}.tsv.gz", std::process::id()));
    let mut file = GzEncoder::new(File::create(&path).unwrap(), Compression::default());
    // Columns in another order than the recorder's, and one more.
    file.write_all(
        b"requests_finished\tt_10ms\ttokens_arrived\tfinished_prompt_tokens\tnote\tfinished_generated_tokens\n\
          0\t10000\t1\t0\tx\t0\n\
          1\t10001\t2\t7\tx\t3\n\
          0\t10005\t4\t0\tx\t0\n\
          2\t10100\t8\t9\tx\t5\n",
    )
    .unwrap();
    file.finish().unwrap();
    let truth = Truth::load(&path);
    std::fs::remove_file(&path).unwrap();
    let tokens = |start, end| truth.between(start, end).tokens;
    assert_eq!(tokens(100.0, 100.05), 6.0);
    assert_eq!(tokens(99.0, 100.0), 1.0);
    assert_eq!(tokens(0.0, 1e10), 15.0);
    assert_eq!(tokens(100.0, 100.0), 0.0);
    assert_eq!(tokens(100.05, 100.0), 0.0);
    assert_eq!(tokens(101.0, 102.0), 0.0);
    assert_eq!(tokens(0.0, 99.0), 0.0);
    assert_eq!(
        truth.between(100.0, 101.0),
        Totals {
            tokens: 14.0,
            requests: 3.0,
            finished_generated_tokens: 8.0,
            finished_prompt_tokens: 16.0,
        }
    );
}

#[test]
fn agrees_with_a_sum_over_every_row_of_the_vllm_truth() {
    let path = vllm_truth();
    let truth = Truth::load(&path);
    let rows = rows(&path);
    let (first, last) = (rows[0].0, rows[rows.len() - 1].0);
    let mut windows = vec![(first - 1.0, last + 1.0), (first, last), (last, first)];
    // Windows ending on rows and between them, short and long.
    for k in 0..2000 {
        let start = first - 2.0 + (last - first + 4.0) * f64::from(k) / 2000.0;
        let row = rows[(k as usize * 7919) % rows.len()].0;
        windows.extend([
            (start, start + 1.0),
            (start, start + 10.37),
            (row, row + 0.01),
            (start, row),
        ]);
    }
    for (start, end) in windows {
        assert_eq!(
            truth.between(start, end),
            brute_force(&rows, start, end),
            "({start}, {end}]"
        );
    }
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path.with_file_name("run.json")).unwrap()).unwrap();
    assert_eq!(
        truth.between(first - 1.0, last).tokens,
        run["client_totals"]["tokens_streamed"].as_f64().unwrap()
    );
}

#[test]
#[should_panic(expected = "truth.tsv.gz")]
fn a_missing_file_names_itself() {
    Truth::load(Path::new("/nonexistent/truth.tsv.gz"));
}
