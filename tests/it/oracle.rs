//! The rate engine against real Prometheus answers (`tests/data/oracle`), bit for bit.

use chrono::{DateTime, TimeDelta};
use promrate::promql::{Point, RangeFunctions, Semantics};
use serde_json::Value;

use crate::data;

/// An answer as the oracle files write it: a number, `null`, or `"NaN"`/`"+Inf"`/`"-Inf"`.
pub(crate) fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(match s.as_str() {
            "NaN" => f64::NAN,
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            other => other.parse().unwrap(),
        }),
        other => Some(other.as_f64().unwrap()),
    }
}

fn points(series: &Value) -> Vec<Point> {
    series
        .as_array()
        .unwrap()
        .iter()
        .map(|p| Point::from_millis(p[0].as_i64().unwrap(), number(&p[1]).unwrap()))
        .collect()
}

/// Equal to the last bit (NaN equal to NaN), or both absent.
pub(crate) fn same(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(x), Some(y)) => x.to_bits() == y.to_bits() || x.is_nan() && y.is_nan(),
        _ => false,
    }
}

/// Evaluates `fn` the way the case says; `None` for "no output".
fn evaluate(
    fun: &str,
    modifier: Option<&str>,
    range: RangeFunctions,
    pts: &[Point],
    at_ms: i64,
) -> Option<f64> {
    let at = DateTime::from_timestamp_millis(at_ms).unwrap();
    match (modifier, fun) {
        (None, "rate") => range.rate(pts, at),
        (None, "increase") => range.increase(pts, at),
        (None, "delta") => range.delta(pts, at),
        (None, "irate") => range.irate(pts, at),
        (None, "idelta") => range.idelta(pts, at),
        (None, "resets") => range.resets(pts, at),
        (None, "changes") => range.changes(pts, at),
        (Some("anchored"), "rate") => range.anchored().rate(pts, at),
        (Some("anchored"), "increase") => range.anchored().increase(pts, at),
        (Some("anchored"), "delta") => range.anchored().delta(pts, at),
        (Some("anchored"), "resets") => range.anchored().resets(pts, at),
        (Some("anchored"), "changes") => range.anchored().changes(pts, at),
        (Some("smoothed"), "rate") => range.smoothed().rate(pts, at),
        (Some("smoothed"), "increase") => range.smoothed().increase(pts, at),
        (Some("smoothed"), "delta") => range.smoothed().delta(pts, at),
        other => panic!("unexpected case {other:?}"),
    }
}

/// promqltest files hold expected values as people wrote them (`0.333333333`, or
/// `0.26666666666666666` for 800/3000), and Prometheus' own promqltest compares them with a
/// relative tolerance of 1e-6 (`almost.Equal`, `defaultEpsilon`). A value that is not
/// bit-equal must pass that comparison, and a literal written to full precision (16 or
/// more significant digits) may be off by at most one ulp.
#[derive(PartialEq)]
enum Agreement {
    BitExact,
    /// The literal has fewer than 16 significant digits; within promqltest's 1e-6.
    ShortLiteral,
    /// A full-precision literal one ulp away (a hand-written fraction such as 800/3000).
    OneUlp,
    Differs,
}

fn promqltest_agrees(got: Option<f64>, want: Option<f64>) -> Agreement {
    if same(got, want) {
        return Agreement::BitExact;
    }
    match (got, want) {
        (Some(g), Some(w)) if g.is_finite() && w.is_finite() => {
            let shortest = format!("{w:e}");
            let digits = shortest
                .split('e')
                .next()
                .unwrap_or("")
                .chars()
                .filter(char::is_ascii_digit)
                .count();
            let close = (g - w).abs() <= 1e-6 * g.abs().max(w.abs()).max(f64::MIN_POSITIVE);
            let ulps = (g.to_bits() as i64 - w.to_bits() as i64).unsigned_abs();
            match (close, digits < 16, ulps <= 1) {
                (true, true, _) => Agreement::ShortLiteral,
                (true, false, true) => Agreement::OneUlp,
                _ => Agreement::Differs,
            }
        }
        _ => Agreement::Differs,
    }
}

/// Checks one promqltest file; returns (answers, bit-exact, short literals, one ulp).
fn promqltest_file(name: &str, semantics: Semantics) -> (usize, usize, usize, usize) {
    let dir = data::dir();
    let cases: Value = serde_json::from_str(&data::read(&dir.join("oracle").join(name))).unwrap();
    let (mut checked, mut bit_exact, mut short, mut one_ulp) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for case in cases.as_array().unwrap() {
        let range = RangeFunctions::new(TimeDelta::milliseconds(case["window_ms"].as_i64().unwrap()))
            .semantics(semantics);
        let fun = case["fn"].as_str().unwrap();
        let modifier = case["modifier"].as_str();
        let at = case["time_ms"].as_i64().unwrap();
        let expected = case["expected"].as_object().unwrap();
        for (labels, series) in case["series"].as_object().unwrap() {
            let got = evaluate(fun, modifier, range, &points(series), at);
            let want = expected.get(labels).and_then(number);
            let agreement = promqltest_agrees(got, want);
            checked += 1;
            bit_exact += usize::from(agreement == Agreement::BitExact);
            short += usize::from(agreement == Agreement::ShortLiteral);
            one_ulp += usize::from(agreement == Agreement::OneUlp);
            if agreement == Agreement::Differs {
                failures.push(format!("{} {labels}: got {got:?}, want {want:?}", case["expr"]));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{name}: {} of {checked} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    (checked, bit_exact, short, one_ulp)
}

/// Checks every answer of a promqltest file and how each agrees: (answers, bit for bit,
/// short literals, one ulp).
fn promqltest_agreement(name: &str, semantics: Semantics, want: (usize, usize, usize, usize)) {
    let (checked, exact, short, ulp) = promqltest_file(name, semantics);
    assert_eq!(
        (checked, exact, short, ulp),
        want,
        "{name}: (answers, bit for bit, short, one ulp)"
    );
    println!(
        "{name}: {checked} answers agree: {exact} bit for bit, {short} against literals written with \
         fewer digits (within promqltest's 1e-6), {ulp} one ulp from a full-precision literal"
    );
}

#[test]
fn promqltest_v3_answers() {
    promqltest_agreement("promqltest-v3.json", Semantics::Prometheus3, (276, 251, 23, 2));
}

#[test]
fn promqltest_v2_answers() {
    promqltest_agreement("promqltest-v2.42.json", Semantics::Prometheus2, (92, 91, 1, 0));
}

#[test]
fn random_series_answers_bit_for_bit() {
    let dir = data::dir();
    let oracle: Value = serde_json::from_str(&data::read(&dir.join("oracle/random.json"))).unwrap();
    let series: Vec<Vec<Point>> = oracle["series"].as_array().unwrap().iter().map(points).collect();
    let lookback = TimeDelta::milliseconds(oracle["lookback_ms"].as_i64().unwrap());
    let mut checked = 0;
    let mut failures = Vec::new();
    for query in oracle["queries"].as_array().unwrap() {
        let fun = query["fn"].as_str().unwrap();
        let window = TimeDelta::milliseconds(query["range_ms"].as_i64().unwrap());
        let at = query["at_ms"].as_i64().unwrap();
        for (key, semantics, modifier) in [
            ("v2", Semantics::Prometheus2, None),
            ("v3", Semantics::Prometheus3, None),
            ("v3_anchored", Semantics::Prometheus3, Some("anchored")),
            ("v3_smoothed", Semantics::Prometheus3, Some("smoothed")),
        ] {
            let Some(answers) = query.get(key).and_then(Value::as_array) else {
                continue;
            };
            let range = RangeFunctions::new(window)
                .semantics(semantics)
                .lookback(lookback);
            for (i, want) in answers.iter().enumerate() {
                let got = evaluate(fun, modifier, range, &series[i], at);
                checked += 1;
                if !same(got, number(want)) {
                    failures.push(format!(
                        "{key} {fun}[{window}] at {at} series {i}: got {got:?}, want {want}"
                    ));
                }
            }
        }
    }
    assert_eq!(checked, 45_888, "random.json holds 45,888 answers");
    println!(
        "promql oracle: {} of {checked} random.json answers bit for bit",
        checked - failures.len()
    );
    assert_none_differ(&failures, checked);
}

/// Fails listing the first 30 `failures` of `checked` answers, if any.
fn assert_none_differ(failures: &[String], checked: usize) {
    assert!(
        failures.is_empty(),
        "{} of {checked} differ:\n{}",
        failures.len(),
        failures[..failures.len().min(30)].join("\n")
    );
}

/// `histogram::quantile` against a real Prometheus' `histogram_quantile` on 1,000 random
/// classic histograms (`oracle/histogram-quantile.json`, made by
/// `tools/histogram_quantile.py`): bit for bit, and where Prometheus answers NaN for a
/// histogram it cannot read (no `+Inf` bucket, no observations, one bucket), promrate
/// answers `None`.
#[test]
fn histogram_quantile_answers_bit_for_bit() {
    use promrate::histogram::{quantile, Bucket};

    let path = data::dir().join("oracle/histogram-quantile.json");
    let oracle: Value = serde_json::from_str(&data::read(&path)).unwrap();
    let (mut checked, mut none) = (0, 0);
    let mut failures = Vec::new();
    for case in oracle["cases"].as_array().unwrap() {
        let q = case["q"].as_f64().unwrap();
        let buckets: Vec<Bucket> = case["buckets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                let bound = b[0].as_str().unwrap();
                let bound = if bound == "+Inf" {
                    f64::INFINITY
                } else {
                    bound.parse().unwrap()
                };
                Bucket::new(bound, b[1].as_f64().unwrap())
            })
            .collect();
        let got = quantile(q, &buckets);
        let want = number(&case["answer"]);
        // PromQL's NaN for "no quantile to give" is promrate's `None`.
        let agrees = match (got, want) {
            (None, Some(w)) => w.is_nan(),
            _ => same(got, want),
        };
        none += usize::from(got.is_none());
        checked += 1;
        if !agrees {
            failures.push(format!(
                "q {q} buckets {}: got {got:?}, want {want:?}",
                case["buckets"]
            ));
        }
    }
    assert_eq!(checked, 1000, "histogram-quantile.json holds 1,000 cases");
    assert!(
        none > 0 && none < checked,
        "the cases hold both kinds of answer ({none} None)"
    );
    println!(
        "histogram_quantile oracle: {} of {checked} answers of {} bit for bit",
        checked - failures.len(),
        oracle["engine"].as_str().unwrap_or("?")
    );
    assert_none_differ(&failures, checked);
}

/// The answers in `oracle/histogram-quantile.json` are what a live Prometheus gives today.
#[test]
#[ignore = "needs Debian's prometheus and promtool (apt-get install prometheus); run with `cargo test -- --include-ignored`"]
fn histogram_quantile_oracle_is_what_prometheus_answers() {
    let dir = data::dir().join("oracle");
    let out = std::process::Command::new("python3")
        .arg(dir.join("tools/histogram_quantile.py"))
        .arg("--check")
        .arg(dir.join("histogram-quantile.json"))
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "tools/histogram_quantile.py --check: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    print!("{}", String::from_utf8_lossy(&out.stdout));
}
