//! PromQL's start-timestamp-aware `rate`, `increase`, `irate` and `resets` against
//! Prometheus 3.14's rules: upstream's own `start_timestamps.test` answers (translated to
//! `tests/data/oracle/start-timestamps-upstream.json`), and our Go transcription of the
//! rules (`tests/go/start_timestamps.go`, whose answers are
//! `tests/data/oracle/start-timestamps.json`) on those cases and on random series, bit for
//! bit.

use chrono::{DateTime, TimeDelta, Utc};
use promrate::promql::{Point, RangeFunctions};
use serde_json::Value;

use crate::data;
use crate::oracle::{number, same};

/// Points and their start times (0 ms is passed as the epoch: the library must read it
/// as unknown, as Prometheus does).
fn series(points: &Value) -> (Vec<Point>, Vec<Option<DateTime<Utc>>>) {
    points
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let t = p[0].as_f64().unwrap() as i64;
            let start = p[2].as_f64().unwrap() as i64;
            (
                Point::from_millis(t, number(&p[1]).unwrap()),
                DateTime::from_timestamp_millis(start),
            )
        })
        .unzip()
}

fn evaluate(
    fun: &str,
    window_ms: i64,
    points: &[Point],
    starts: &[Option<DateTime<Utc>>],
    at_ms: i64,
) -> Option<f64> {
    let range = RangeFunctions::new(TimeDelta::milliseconds(window_ms));
    let aware = range.with_start_times(starts);
    let at = DateTime::from_timestamp_millis(at_ms).unwrap();
    match fun {
        "rate" => aware.rate(points, at),
        "increase" => aware.increase(points, at),
        "irate" => aware.irate(points, at),
        "resets" => aware.resets(points, at),
        other => panic!("{other}"),
    }
}

/// promqltest's comparison: a relative error of 1e-6 (`defaultEpsilon`).
fn almost(got: f64, want: f64) -> bool {
    got == want || (got - want).abs() <= 1e-6 * want.abs().max(got.abs())
}

/// Every float answer of upstream's `start_timestamps.test` (and every series it expects
/// no answer for), and each bit for bit as our Go transcription of the rules computes it.
#[test]
fn upstream_start_timestamps_test_and_the_oracle_agree() {
    let dir = data::dir().join("oracle");
    let upstream: Value =
        serde_json::from_str(&data::read(&dir.join("start-timestamps-upstream.json"))).unwrap();
    let oracle: Value = serde_json::from_str(&data::read(&dir.join("start-timestamps.json"))).unwrap();
    let (mut answers, mut absent, mut bits) = (0, 0, 0);
    for (case, computed) in upstream["cases"]
        .as_array()
        .unwrap()
        .iter()
        .zip(oracle["upstream"].as_array().unwrap())
    {
        let fun = case["fn"].as_str().unwrap();
        let window = case["window_ms"].as_i64().unwrap();
        let times: Vec<i64> = case["times_ms"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_i64().unwrap())
            .collect();
        for ((s, expected), computed) in case["series"]
            .as_array()
            .unwrap()
            .iter()
            .zip(case["expected"].as_array().unwrap())
            .zip(computed.as_array().unwrap())
        {
            let (points, starts) = series(&s["points"]);
            for (k, &at) in times.iter().enumerate() {
                let got = evaluate(fun, window, &points, &starts, at);
                let want = number(&expected[k]);
                let eval = case["eval"].as_str().unwrap();
                match (got, want) {
                    (Some(g), Some(w)) => {
                        assert!(
                            almost(g, w),
                            "{eval} {}: {g} at {at} ms, upstream says {w}",
                            s["labels"]
                        );
                        answers += 1;
                    }
                    (None, None) => absent += 1,
                    _ => panic!(
                        "{eval} {}: {got:?} at {at} ms, upstream says {want:?}",
                        s["labels"]
                    ),
                }
                let oracle = number(&computed[k]);
                assert!(
                    same(got, oracle),
                    "{eval} {}: {got:?} at {at} ms, the oracle says {oracle:?}",
                    s["labels"]
                );
                bits += 1;
            }
        }
    }
    assert_eq!(upstream["taken"]["answers"].as_u64(), Some(answers as u64));
    println!("start timestamps: {answers} upstream answers and {absent} expected absences agree; {bits} bit for bit with the oracle");
}

/// Random series with every kind of start time (none, cumulative with restarts that drop or
/// climb past, delta-style, OTel's ST == T, after the sample, overlapping, 0) and NaN:
/// every answer of the four functions bit for bit with the oracle.
#[test]
fn random_start_timestamp_answers_bit_for_bit() {
    let dir = data::dir().join("oracle");
    let oracle: Value = serde_json::from_str(&data::read(&dir.join("start-timestamps.json"))).unwrap();
    let all: Vec<_> = oracle["random"]["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(series)
        .collect();
    let (mut checked, mut values) = (0, 0);
    for query in oracle["random"]["queries"].as_array().unwrap() {
        let fun = query["fn"].as_str().unwrap();
        let (window, at) = (
            query["window_ms"].as_i64().unwrap(),
            query["at_ms"].as_i64().unwrap(),
        );
        for ((points, starts), want) in all.iter().zip(query["answer"].as_array().unwrap()) {
            let got = evaluate(fun, window, points, starts, at);
            let want = number(want);
            assert!(
                same(got, want),
                "{fun}[{window} ms] at {at}: {got:?}, the oracle says {want:?}"
            );
            checked += 1;
            values += usize::from(want.is_some());
        }
    }
    assert_eq!(checked, 24_000, "150 times, 4 functions, 40 series");
    println!("start timestamps: {checked} random answers ({values} values) bit for bit with the oracle");
}
