//! Upstream's cases (prometheus/prometheus `promql/promqltest/testdata/aggregators.test`,
//! at d15adb9: "Test summing and averaging extreme values"), each group's series in the
//! order Prometheus adds them (sorted by labels).

use super::*;

/// Upstream's `9.988465674311579e+307` (the same double).
const BIG: f64 = 9.988_465_674_311_58e307;

fn sum(values: &[f64], semantics: Semantics) -> f64 {
    let mut sum = Sum::first(values[0], semantics);
    values[1..].iter().for_each(|v| sum.add(*v));
    sum.value()
}

fn avg(values: &[f64]) -> f64 {
    let mut mean = Mean::first(values[0]);
    values[1..].iter().for_each(|v| mean.add(*v));
    mean.value()
}

#[test]
fn sums_as_prometheus_3_adds() {
    let ten = [2.0, 8.0, 1e100, -1e100];
    assert_eq!(sum(&ten, Semantics::Prometheus3), 10.0);
    // Prometheus 2 (before 2.54) adds in plain order: the small values are absorbed.
    assert_eq!(sum(&ten, Semantics::Prometheus2), 0.0);
    assert_eq!(sum(&[f64::INFINITY, 2.0], Semantics::Prometheus3), f64::INFINITY);
    assert_eq!(sum(&[2.0, f64::INFINITY], Semantics::Prometheus3), f64::INFINITY);
    assert_eq!(
        sum(&[f64::NEG_INFINITY, 2.0], Semantics::Prometheus3),
        f64::NEG_INFINITY
    );
    assert!(sum(&[f64::INFINITY, f64::NEG_INFINITY], Semantics::Prometheus3).is_nan());
    assert!(sum(&[f64::NAN, 2.0], Semantics::Prometheus3).is_nan());
    assert!(sum(&[2.0, f64::NAN], Semantics::Prometheus3).is_nan());
    // One series is its own value, either way.
    assert_eq!(sum(&[0.1], Semantics::Prometheus3).to_bits(), 0.1f64.to_bits());
    // The usual case: rates of a few magnitudes, where compensation moves the last bit.
    let rates = [0.1, 0.2, 0.3];
    assert_eq!(sum(&rates, Semantics::Prometheus2), 0.6000000000000001);
    assert_eq!(sum(&rates, Semantics::Prometheus3), 0.6);
}

#[test]
fn averages_as_prometheus_3_does() {
    assert_eq!(avg(&[2.0, 8.0, 1e100, -1e100]), 2.5);
    assert_eq!(avg(&[f64::INFINITY, 0.0, f64::INFINITY]), f64::INFINITY);
    assert_eq!(
        avg(&[f64::NEG_INFINITY, f64::NEG_INFINITY, 0.0]),
        f64::NEG_INFINITY
    );
    assert!(avg(&[f64::NEG_INFINITY, 0.0, f64::INFINITY]).is_nan());
    // A sum that would overflow goes on as an incremental mean.
    assert_eq!(avg(&[BIG; 4]), BIG);
    assert_eq!(avg(&[-BIG; 4]), -BIG);
    assert_eq!(avg(&[-BIG, -BIG, BIG, BIG]), 0.0);
    assert_eq!(avg(&[1.0, 2.0]), 1.5);
}
